# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash disable=SC2154
# (SC2154: here, me, other, lower, rdev, wait_s, arrive_s, state and the
# nvme_* settings come from suite.sh, lib.sh and nvme.sh.)
#
# Part "nvme_kill" of the ulp suite (sourced by suite.sh), last: the NVMe
# target's whole guest dies (tools/vm's kill request: SIGKILL of its QEMU)
# while the host runs fio --verify on the namespace.  The nvme part's
# "port withdrawn" case has a live target that refuses; here nothing
# answers any more.
#
# g1 is the target (nvme.sh's, set up again), g2 the host: it connects
# with keep-alive 5 s, fast_io_fail_tmo 1 (I/O fails a second after the
# controller starts reconnecting, rather than waiting for a path; with 0
# a run failed only when the controller went: nvme-cli seems to leave a
# 0 out, and the kernel's default is never),
# ctrl-loss-tmo 3 and reconnect-delay 1 (three reconnects, then the
# controller removes itself); once fio's writes and verifying reads move
# over RoCE it asks the host to kill g1.  fio must end with an I/O error
# within 60 s (keep-alive or the QP's retries find the target gone in
# seconds; the rest is a TCG guest's slowness), the controller is then
# not live, and goes away by itself; qhca0's objects as before, and no
# kernel warning or hung task in the log.
#
# tools/vm counts g1 as killed on request.

# nvme.sh's functions, without running its part.
if ! declare -F nvme_target_start > /dev/null; then
	# shellcheck source=tests/ulp/nvme.sh
	nvme_functions_only=1 . "$here/nvme.sh"
fi

nk_fio=/tmp/ulp-nvme-kill.fio

# nk_state: our controller's state now, "gone" without one.
nk_state() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[ "$(cat "$c/subsysnqn" 2>/dev/null)" = "$nvme_nqn" ] &&
			{ cat "$c/state" 2>/dev/null; return; }
	done
	echo gone
}

nk_target() {
	nvme_target_start
	result "nvme_kill: nvmet subsystem $nvme_nqn, rdma port $my_addr:$nvme_svc"
	step 1
	# The host connects, and has this guest killed: no step more.
	killed_guest "$me" "$arrive_s"
	not_ok "nvme_kill: $me still alive ${arrive_s}s after the host came"
	nvme_target_stop
}

nk_host() {
	local before dev pid t0 tx rx end rc=none state gone
	before=$(res_now)
	step 1
	nvme_connect --keep-alive-tmo=5 --fast_io_fail_tmo=1 --ctrl-loss-tmo=3 \
		--reconnect-delay=1
	result "nvme_kill: nvme connect -t rdma to $other (keep-alive 5 s, fast_io_fail_tmo 1, ctrl-loss-tmo 3, reconnect-delay 1)"
	dev=$(nvme_dev)
	result "nvme_kill: the namespace's block device appears (${dev:-none})"
	tx=$(roce_bytes tx_bytes) rx=$(roce_bytes rx_bytes)
	# Random 4 KiB writes over 4 MiB, each verified by a read 32 writes
	# later, until the target dies (the runtime only bounds it).
	if [ -b "$dev" ]; then
		timeout -s KILL 300 fio --name=nvme_kill --filename="$dev" \
			--rw=randwrite --bs=4k --iodepth=8 --ioengine=libaio \
			--direct=1 --size=4m --time_based --runtime=240 \
			--verify=crc32c --verify_backlog=32 --verify_fatal=1 \
			--verify_state_save=0 > "$nk_fio" 2>&1 &
		pid=$!
	fi
	# fio's writes and its verifying reads cross qhca0: 1 MiB each way.
	end=$((SECONDS + wait_s))
	while [ -n "${pid:-}" ] && kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $end ] &&
	      { [ $(($(roce_bytes tx_bytes) - tx)) -lt $((1 << 20)) ] ||
		[ $(($(roce_bytes rx_bytes) - rx)) -lt $((1 << 20)) ]; }; do
		sleep 0.2
	done
	[ -n "${pid:-}" ] && kill -0 "$pid" 2>/dev/null
	result "nvme_kill: fio --verify runs on $dev: RoCE tx $(($(roce_bytes tx_bytes) - tx)) B, rx $(($(roce_bytes rx_bytes) - rx)) B"
	kill_guest "$other"
	t0=$SECONDS
	killed_guest "$other"
	result "nvme_kill: tools/vm killed $other's QEMU"
	# A dead machine's neighbour entry stays valid (stale) without IP
	# traffic, and rdma_cm resolves through it: each reconnect would wait
	# out ib_cm's REQ retries (16 x 4.8 s) rather than fail in 3 s on ARP.
	# That is the CM's time, not the host's failure path this checks.
	ip neigh flush to "$(resolve "$other")" dev "$QHCA_NETDEV"
	end=$((SECONDS + 60))
	while [ -n "${pid:-}" ] && kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $end ]; do
		sleep 0.2
	done
	if [ -n "${pid:-}" ] && ! kill -0 "$pid" 2>/dev/null; then
		rc=0
		wait "$pid" || rc=$?
	fi
	grep -E 'err=|error|verify' "$nk_fio" | head -n 20 | show
	[ "$rc" != none ] && [ "$rc" != 0 ] && grep -qiE 'Input/output error|err= *5' "$nk_fio"
	result "nvme_kill: fio ends with an I/O error $((SECONDS - t0)) s after the kill (status $rc, bound 60 s)"
	dmesg_part | grep -E 'nvme' | tail -n 20 | show
	timeout 30 nvme list 2>&1 | show
	state=$(nk_state)
	[ "$state" != live ]
	result "nvme_kill: when fio fails the controller is not live ($state)"
	# ctrl-loss-tmo's three reconnects fail on ARP: the controller goes.
	gone=0
	nvme_gone && gone=1
	[ $gone = 1 ]
	result "nvme_kill: the controller removes itself after its reconnects ($((SECONDS - t0)) s after the kill)"
	[ $gone = 1 ] || timeout 60 nvme disconnect -n "$nvme_nqn" 2>&1 | show
	res_back "nvme_kill host" "$before"
	dmesg_clean "nvme_kill host"
}

nk_pair() {
	if [ "$lower" = 1 ]; then nk_target; else nk_host; fi
}
ulp_modprobe -a nvmet-rdma nvme-rdma
result "nvme_kill: modprobe nvmet-rdma nvme-rdma"
for_each_pair 4 nk_pair
