#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# A guest reboot with work in flight.  Boot 1 records what a fresh driver
# holds (the device's object counts, rdma res, the port's hw counters, the
# kernel's error lines, the device's guest errors), starts RC traffic (3
# fault_helper processes x 4 verified RC pairs, ib_write_bw on 4 QPs, and
# the kernel consumer qhca_kverbs_test in the middle of its test) and
# reboots at once, without syncing (sysrq b): a system reset, so the
# device gets its reset callback while its queues are busy.  Boot 2, with
# qhca.ko loaded again by tools/guest/init, checks that the device came up
# as a fresh one: the same object counts, rdma res and hw counters as boot
# 1 recorded (nothing left behind, no old work going on), no guest error
# logged by the device, stock tools and verified traffic working, and a
# kernel log without warnings, oopses or signs of memory corruption.
#
# One TAP stream across both boots on the same console: boot 1 prints the
# plan and its results and waits until the console has taken them before
# it reboots; what boot 2 must report about boot 1, and the result count,
# go through the control share, which outlives the reboot.
#
# Needs a boot of its own, which it ends: tools/vm --reboots 1
# --guest-errors -- tests/shell/fault_reboot.sh (tools/check reboot).
# Environment: QHCA_BOOT, QHCA_REBOOTS, QHCA_CTL (from tools/guest/init),
# QHCA_KO, QHCA_TOP, QHCA_TEST_BIN (where fault_helper is).
set -uo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/fault_common.sh"

plan=16
state=${QHCA_CTL:-}/fault_reboot
# The module built for the booted kernel (tools/guest/init sets it).
kverbs=${QHCA_KVERBS_KO:-$QHCA_TOP/tests/kernel/qhca_kverbs_test.ko}
kmod=qhca_kverbs_test
tcp_port=18515
oops_re="$kernel_log_bad"'|[Cc]orrupt|[Bb]ad page|Bad rss|page dumped|list_(add|del) corruption'

# snapshot DIR: what the driver and the device hold now, one file each.
snapshot() {
	local f out=""
	mkdir -p "$1"
	for f in "$ibdev"/hw_objects/*; do
		out+="${out:+ }${f##*/}=$(cat "$f" 2>/dev/null)"
	done
	echo "$out" > "$1/objects"
	rdma res show 2>&1 | grep qhca0 | sed 's/ *$//' > "$1/res"
	out=""
	for f in "$ibdev"/ports/1/hw_counters/*; do
		[ "${f##*/}" = lifespan ] && continue
		out+="${out:+ }${f##*/}=$(cat "$f" 2>/dev/null)"
	done
	echo "$out" > "$1/counters"
	# Errors of the RDMA stack and of DMA; a boot under TCG has others
	# (timer checks) that come and go with the host's load.
	dmesg -t -l emerg,alert,crit,err 2>&1 |
		grep -iE 'qhca|infiniband|ib_|rdma|dma|iommu|memory' > "$1/kernel-errors"
	guest_errors > "$1/guest-errors"
}

# guest_errors: how many guest errors the device has logged so far (QEMU's
# -d guest_errors log: the device's own counter starts again at a reset).
guest_errors() {
	if [ -f "$QHCA_CTL/guest-errors.log" ]; then
		grep -c '^qhca: ' "$QHCA_CTL/guest-errors.log"
	else
		echo none
	fi
	return 0
}

# same WHAT: the fresh driver's record of WHAT and boot 2's now agree.
same() {
	[ -s "$state/fresh/$1" ] && cmp -s "$state/fresh/$1" "$state/now/$1"
}

# check_pair NAME CMD...: run_pair within 180 s, logs in $tmp/NAME.*;
# a failure's exit statuses and the end of both logs as diagnostics.
check_pair() {
	local name=$1
	shift
	run_pair "$tmp/$name" 180 "$@" && return 0
	echo "# $name: $pair_status"
	tail -n 5 "$tmp/$name.server" "$tmp/$name.client" | diag_lines
	return 1
}

# Console output waits in the guest until the host takes it, and a reboot
# drops what still waits: tcdrain returns once the console has it all.
drain_console() {
	[ -t 1 ] && python3 -c 'import termios; termios.tcdrain(1)'
}

boot1() {
	local i out="" qps want d0 d1 try st="" alive

	echo "TAP version 13"
	echo "1..$plan"
	rm -rf "$state"
	mkdir -p "$state"
	modprobe ib_uverbs
	[ -e /sys/module/qhca ] || insmod "$QHCA_KO"

	# 1: the fresh driver, before any traffic: what boot 2 must see again.
	if wait_active && snapshot "$state/fresh" && [ -s "$state/fresh/res" ]; then
		echo "# fresh objects: $(cat "$state/fresh/objects")"
		echo "# fresh rdma res: $(cat "$state/fresh/res")"
		result ok "boot 1: qhca0 ACTIVE, the fresh driver's state recorded"
	else
		result "not ok" "boot 1: qhca0 not ACTIVE or its state unreadable"
	fi

	# 2: verified RC SENDs from user space.
	outs=()
	for i in $(seq $procs); do
		"$helper" stream $pairs > "$tmp/out$i" 2> "$tmp/err$i" &
		pids+=($!)
		outs+=("$tmp/out$i")
	done
	if wait_word READY 60 "${outs[@]}"; then
		result ok "boot 1: $procs processes x $pairs RC pairs streaming verified SENDs"
	else
		result "not ok" "boot 1: helpers not streaming: $(cat "$tmp"/err* | tr '\n' ' ')"
	fi

	# 3: RDMA WRITEs on 4 more QP pairs, until the reboot.
	tcp_port=$((tcp_port + $$ % 1000))
	# Line buffered: its header says when it has started.
	stdbuf -oL ib_write_bw -d qhca0 -i 1 -F -q 4 --run_infinitely \
		-p $tcp_port > "$tmp/bw.server" 2>&1 &
	pids+=($!)
	for _ in $(seq 100); do
		listening $tcp_port && break
		sleep 0.1
	done
	stdbuf -oL ib_write_bw -d qhca0 -i 1 -F -q 4 --run_infinitely \
		-p $tcp_port 127.0.0.1 > "$tmp/bw.client" 2>&1 &
	pids+=($!)
	# Each helper pair is 2 QPs; ib_write_bw has 4 on each side.
	want=$(($(sed -n 's/.*qps=\([0-9]*\).*/\1/p' "$state/fresh/objects") +
		procs * pairs * 2 + 8))
	# Its client prints the header of its figures as it starts measuring.
	for _ in $(seq 300); do
		qps=$(cat "$ibdev/hw_objects/qps" 2>/dev/null)
		[ "${qps:-0}" -ge "$want" ] &&
			grep -q 'BW average' "$tmp/bw.client" && break
		sleep 0.1
	done
	if [ "${qps:-0}" -ge "$want" ] && grep -q 'BW average' "$tmp/bw.client"; then
		result ok "boot 1: ib_write_bw -q 4 streaming RDMA WRITEs"
	else
		result "not ok" "boot 1: ib_write_bw not streaming ($qps QPs of $want)"
		tail -n 5 "$tmp/bw.server" "$tmp/bw.client" | diag_lines
	fi

	# 4: the work in flight just before the reboot: the device goes on
	# executing WQEs (within 10 s; ib_core caches the count 10 ms).
	d0=$(cat "$ibdev/ports/1/hw_counters/sq_wqes")
	d1=$d0
	for _ in $(seq 100); do
		sleep 0.1
		d1=$(cat "$ibdev/ports/1/hw_counters/sq_wqes")
		[ "$d1" -gt "$d0" ] && break
	done
	for i in "${pids[@]}"; do
		kill -0 "$i" 2>/dev/null || out+=" process $i exited;"
	done
	echo "# rdma res: $(rdma res show | grep qhca0)"
	if [ -z "$out" ] && [ "$d1" -gt "$d0" ]; then
		result ok "boot 1: all streaming: $qps QPs, sq_wqes $d0 -> $d1"
	else
		result "not ok" "boot 1: not all streaming:$out sq_wqes $d0 -> $d1"
	fi
	echo "# boot 1: reboot (sysrq b) with this traffic and the kernel consumer in flight"
	drain_console

	# The kernel consumer creates, uses and destroys its objects within
	# its module init: reboot while that is running (initstate "coming").
	# What boot 2 reports about it goes through the control share.
	for try in 1 2 3 4 5; do
		insmod "$kverbs" &
		i=$!
		st=""
		while kill -0 "$i" 2>/dev/null; do
			read -r st 2>/dev/null < /sys/module/$kmod/initstate
			[ "$st" = coming ] && break
		done
		[ "$st" = coming ] && break
		wait "$i"
		rmmod $kmod 2>/dev/null
	done
	alive=0
	for i in "${pids[@]}"; do
		kill -0 "$i" 2>/dev/null && alive=$((alive + 1))
	done
	echo "num=$num failed=$failed kernel=${st:-none} try=$try" \
		"alive=$alive/${#pids[@]} guest_errors=$(guest_errors)" \
		> "$state/rebooting"
	echo b > /proc/sysrq-trigger
	# sysrq b resets the machine at once; 60 s is only a deadline.
	sleep 60
	echo "# boot 1: still running 60 s after sysrq b"
	exit 1
}

boot2() {
	local kernel="" try="" alive="" gerr="" out oops line n0 n1 n2

	echo "# boot 2"
	if [ -f "$state/rebooting" ]; then
		read -r num failed kernel try alive gerr < "$state/rebooting"
		num=${num#num=} failed=${failed#failed=} kernel=${kernel#kernel=}
		try=${try#try=} alive=${alive#alive=} gerr=${gerr#guest_errors=}
	else
		# Boot 1 did not reach its sysrq b: go on after its 4 results.
		num=4 failed=1 kernel="not recorded: boot 1 did not reach the reboot"
	fi

	# 5: what ran at the sysrq b.
	if [ "$kernel" = coming ] && [ -n "$alive" ] &&
	   [ "${alive%/*}" = "${alive#*/}" ]; then
		result ok "boot 1: at the reboot $alive traffic processes ran and the kernel consumer was mid-test (try $try)"
	else
		result "not ok" "boot 1: at the reboot ${alive:-?} traffic processes ran, kernel consumer ${kernel:-?}"
	fi

	# 6
	modprobe ib_uverbs
	if [ -e /sys/module/qhca ] && wait_active; then
		result ok "boot 2: qhca.ko probed the reset device, qhca0 ACTIVE"
	else
		result "not ok" "boot 2: qhca0 not ACTIVE ($(cat "$ibdev/ports/1/state" 2>&1))"
	fi

	# 7-9: as fresh as boot 1's fresh driver.
	snapshot "$state/now"
	if same objects; then
		result ok "boot 2: device objects as a fresh driver's: $(cat "$state/now/objects")"
	else
		result "not ok" "boot 2: device objects $(cat "$state/now/objects"), fresh $(cat "$state/fresh/objects" 2>&1)"
	fi
	if same res; then
		result ok "boot 2: rdma res as a fresh driver's: $(cat "$state/now/res")"
	else
		result "not ok" "boot 2: rdma res '$(cat "$state/now/res")', fresh '$(cat "$state/fresh/res" 2>&1)'"
	fi
	# The device clears its counters on a reset (the system reset, then the
	# driver's at probe): a WQE, CQE or packet counted now is old work that
	# went on after them.
	if same counters; then
		result ok "boot 2: hw counters as a fresh driver's: no old work went on"
	else
		echo "# now:   $(cat "$state/now/counters")"
		echo "# fresh: $(cat "$state/fresh/counters" 2>&1)"
		result "not ok" "boot 2: hw counters differ from a fresh driver's"
	fi
	# 10-11: the device's guest errors, counted before the traffic (n0), at the
	# sysrq b (n1) and now (n2): those of boot 1's traffic and those of the
	# reset and boot 2 are different bugs.
	n0=$(cat "$state/fresh/guest-errors" 2>/dev/null)
	n1=$gerr
	n2=$(cat "$state/now/guest-errors")
	if [ "$n2" = none ]; then
		result ok "boot 1: guest errors # SKIP no QEMU guest-error log (tools/vm --guest-errors)"
		result ok "boot 2: guest errors # SKIP no QEMU guest-error log (tools/vm --guest-errors)"
	else
		grep '^qhca: ' "$QHCA_CTL/guest-errors.log" | head -n 20 | sed 's/^/# /'
		if [ "$n0" = 0 ] && [ "$n1" = 0 ]; then
			result ok "boot 1: the device logged no guest error during the traffic"
		else
			result "not ok" "boot 1: the device logged guest errors: ${n0:-?} before the traffic, ${n1:-?} at the reboot"
		fi
		if [ -n "$n1" ] && [ "$n2" = "$n1" ]; then
			result ok "boot 2: the device logged no guest error across the reset and in boot 2"
		else
			result "not ok" "boot 2: the device logged $((n2 - ${n1:-0})) guest errors across the reset and in boot 2"
		fi
	fi

	# 12-14: traffic.
	if check_pair pingpong ibv_rc_pingpong -d qhca0 -i 1 -c -n 1000 -s 4096; then
		result ok "boot 2: ibv_rc_pingpong -c"
	else
		result "not ok" "boot 2: ibv_rc_pingpong -c"
	fi
	# perftest measures its clock against /proc/cpuinfo, which disagrees
	# with itself under TCG: a failed run is tried once more.
	if check_pair write_bw ib_write_bw -d qhca0 -i 1 -F -n 200 -q 2 ||
	   check_pair write_bw ib_write_bw -d qhca0 -i 1 -F -n 200 -q 2; then
		result ok "boot 2: ib_write_bw -q 2"
	else
		result "not ok" "boot 2: ib_write_bw -q 2"
	fi
	if out=$("$helper" check $pairs 200 2>&1); then
		result ok "boot 2: $pairs RC pairs, 200 verified SENDs each"
	else
		result "not ok" "boot 2: verified SENDs: $out"
	fi

	# 15: and that traffic left nothing behind either.
	snapshot "$state/now"
	if same objects && same res; then
		result ok "boot 2: after the traffic, objects and rdma res as fresh"
	else
		result "not ok" "boot 2: after the traffic: $(cat "$state/now/objects"); $(cat "$state/now/res")"
	fi

	# 16: the whole kernel log of boot 2: an old DMA landing in the new
	# kernel's memory shows up as oopses, warnings or corruption reports,
	# or as RDMA or DMA errors a fresh boot does not have.
	oops=$(dmesg | grep -E "$oops_re")
	out=$(diff "$state/fresh/kernel-errors" "$state/now/kernel-errors" 2>&1 | grep '^>')
	if [ -z "$(dmesg | head -n 1)" ]; then
		result "not ok" "boot 2: kernel log: cannot read it"
	elif [ -n "$oops$out" ]; then
		while IFS= read -r line; do
			[ -n "$line" ] && diag "$line"
		done <<< "$oops
$out"
		result "not ok" "boot 2: kernel log: warnings, oopses or RDMA errors a fresh boot has not"
	else
		result ok "boot 2: kernel log: clean, no RDMA error a fresh boot has not"
	fi
	exit "$failed"
}

if [ -z "${QHCA_CTL:-}" ] || [ "${QHCA_REBOOTS:-0}" -lt 1 ]; then
	echo "TAP version 13"
	echo "1..0 # SKIP needs a boot of its own: tools/vm --reboots 1 (tools/check reboot)"
	exit 4
fi
case ${QHCA_BOOT:-} in
1) boot1 ;;
2) boot2 ;;
*)
	result "not ok" "boot ${QHCA_BOOT:-?}: unexpected"
	exit 1
	;;
esac
