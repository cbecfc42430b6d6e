# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# What the parts of the ulp suite (tests/ulp/suite.sh) share, sourced once
# by suite.sh after the fabric suite's lib.sh: the ULP modules, qhca0's
# object counts and the kernel log before and after a stack, and a line
# from one guest of the pair to the other.

# The image carries only the modules the verbs bench needs; the ULPs'
# come from the kernel tree the build unpacked (the repository is shared
# at the same path), with its modules.dep.
kroot=${QHCA_TOP:-/nonexistent}/build/kernel/root
ulp_modprobe() { modprobe -d "$kroot" "$@"; }

# res_now: qhca0's object counts as rdma res shows them ("pd 1 cq 2 ..."),
# the CQs counted only when in use: ib_core's CQ pool (ib_cq_pool_get:
# nvme-rdma, nvmet-rdma) keeps the CQs it made, idle ("users 0"), until the
# device goes away, which is not a leak.
res_now() {
	local cq
	cq=$(rdma res show cq dev "$rdev" 2>/dev/null | grep -c -v ' users 0 ')
	rdma res show 2>/dev/null |
		sed -n "s/^[0-9]*: $rdev: *//; T; s/ cq [0-9]* / cq $cq in use /; p"
}
# res_back WHAT BEFORE: qhca0 is back to BEFORE's counts, within 30 s (a
# ULP frees its QPs from a work queue after the call that ends it).
res_back() {
	local end=$((SECONDS + 30)) now
	while :; do
		now=$(res_now)
		[ "$now" = "$2" ] && break
		[ $SECONDS -lt $end ] || break
		sleep 0.5
	done
	echo "# rdma res: before $2; after $now"
	[ "$now" = "$2" ]
	result "$1: rdma res shows qhca0 as before ($2)"
	[ "$now" = "$2" ] || rdma res show qp 2>&1 | show
	[ "$now" = "$2" ] || rdma res show cq 2>&1 | show
}
# dmesg_clean WHAT: nothing in the kernel log a user reports as a bug.
dmesg_bad='WARNING:|BUG:|Oops|Call Trace|blocked for more than|UBSAN|KASAN|refcount_t:|corruption'
dmesg_clean() {
	local bad
	bad=$(dmesg | grep -E "$dmesg_bad")
	[ -z "$bad" ]
	result "$1: no kernel warning in the log"
	[ -z "$bad" ] || dmesg | grep -E -B 2 -A 20 "$dmesg_bad" | head -n 60 | show
}

# step K: the pair's K-th meeting point in a part (lib.sh's pair_barrier);
# a partner that never comes is a failure of its own.
step() {
	pair_barrier "$1" || not_ok "$other reached step $1 of the part within ${arrive_s}s"
}

# tell K LINE (the lower guest) and hear K (the other): LINE from one
# guest of the pair to the other, on the pair's K-th port (lib.sh's
# pair_port), within $arrive_s.
tell() { serve_line "$(pair_port "$1")" "$other" "$2"; }
hear() { ask "$(resolve "$other")" "$(pair_port "$1")" "$arrive_s"; }

# diag: what the logs need when a part failed here: the kernel's last
# words, qhca0's hw counters and QPs.
diag() {
	echo "# diagnostics of $me"
	dmesg | tail -n 40 | show
	rdma statistic show link "$rdev/1" 2>&1 | show
	rdma res show qp 2>&1 | show
}

# sums FILE...: the files' SHA-256 sums on one line.
sums() { sha256sum "$@" | awk '{ printf "%s%s", sep, $1; sep = " " } END { print "" }'; }
