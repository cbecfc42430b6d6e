#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Firmware that stops answering (interface 1.3, Documentation/hw/
# qhca-faults.rst): "aq_hang" written to the driver's debugfs file
# /sys/kernel/debug/qhca/qhca0/inject stops the admin queue while
# processes stream verified SENDs on qhca0.  The write must fail with EIO
# after the 5 s admin timeout; each process gets IBV_EVENT_DEVICE_FATAL
# and can still destroy its objects and close the device; qhca0 comes back
# by itself (the driver resets the function), moves data for stock
# ibv_rc_pingpong and holds no more objects than before.  Then rmmod right
# after an aq_hang, while the recovery is pending or running, and an
# unbind while the aq_hang write still waits, must each be quick and leave
# a driver that binds again to a working qhca0.  Two writers at once make
# one timeout and one reset.  The kernel log has no warning.  TAP output.
#
# Environment: QHCA_KO, QHCA_TOP, QHCA_TEST_BIN (where fault_helper is).
set -uo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/fault_common.sh"

# Seconds qhca0 may take to come back once the hung write returned.
recover_limit=30
# What the driver waits for an admin command (qhca_admin.c).
aq_timeout=5

echo "TAP version 13"
echo "1..15"

begin_test fault_hang
mountpoint -q /sys/kernel/debug ||
	mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
inject=/sys/kernel/debug/qhca/qhca0/inject

# now_ms: a clock for the durations checked below.
now_ms() {
	echo $(($(date +%s%N) / 1000000))
}

# write_inject LINE: write LINE to the inject file; prints the
# milliseconds the write took and its error (or "success").
write_inject() {
	local start err
	start=$(now_ms)
	err=$( { printf '%s\n' "$1" > "$inject"; } 2>&1)
	# The shell's message ends with strerror(): keep that.
	err=${err##*: }
	echo "$(($(now_ms) - start)) ${err:-success}"
}

# wait_back SECONDS: qhca0 ACTIVE again within SECONDS.  The dead device
# answers nothing, so a port that reads ACTIVE is the new device's.
wait_back() {
	local end=$((SECONDS + $1))
	while [ $SECONDS -lt $end ]; do
		wait_active && return 0
	done
	return 1
}

# wait_writing SECONDS: within SECONDS, a process is blocked in write(2)
# on $inject, that is an aq_hang waits for its admin command (the device
# took the command and does not answer).  A process's /proc/PID/syscall
# starts with the number of the system call it is blocked in: 1 is write
# on x86-64, the guest's architecture.
wait_writing() {
	local end=$((SECONDS + $1)) fd pid nr
	while [ $SECONDS -lt $end ]; do
		for fd in /proc/[0-9]*/fd/*; do
			[ "$fd" -ef "$inject" ] || continue
			pid=${fd#/proc/}
			pid=${pid%%/*}
			read -r nr _ < "/proc/$pid/syscall" 2>/dev/null || continue
			[ "$nr" = 1 ] && return 0
		done
		sleep 0.05
	done
	return 1
}

# objects: the device's live objects as its driver reads them, then as
# ib_core tracks them for qhca0; empty if either cannot be read.
objects() {
	local out val
	out=$(hw_objects)
	[ -n "$out" ] || return
	val=$(rdma res show 2>/dev/null | grep -w qhca0) || return
	echo "$out | ${val#*qhca0: }"
}

# pins: user pages pinned system-wide.  An MR pins its pages until the
# driver releases them, which it must also do when the device is dead.
# The counters are per CPU and folded into /proc/vmstat lazily (the sum
# read there was once -3 after a long run): stat_refresh folds them first.
pins() {
	echo 1 > /proc/sys/vm/stat_refresh 2>/dev/null
	awk '/^nr_foll_pin_acquired/ { a = $2 }
	     /^nr_foll_pin_released/ { r = $2 }
	     END { if (a != "") print a - r }' /proc/vmstat
}

# back_to_baseline: objects as at the start and no more pins, within 3 s
# (the 9p share pins pages for its I/O: those come and go, a leak stays);
# else $now says what is left.
back_to_baseline() {
	local p
	for _ in $(seq 30); do
		p=$(pins)
		now="$(objects) | pinned pages ${p:-?}"
		[ "$(objects)" = "$baseline" ] && [ -n "$p" ] &&
			[ "$p" -le "$base_pins" ] && return 0
		sleep 0.1
	done
	return 1
}

# pingpong: stock ibv_rc_pingpong, server and client, checking the data;
# on failure $pp_err says why.  Not in a subshell: it counts TCP ports.
pingpong() {
	pp_err=""
	run_pair "$tmp/pp" 60 ibv_rc_pingpong -d qhca0 -i 1 -c -n 200 &&
		return 0
	pp_err="server exit $pair_src: $(tr '\n' ' ' < "$tmp/pp.server")"
	pp_err+=" client exit $pair_crc: $(tr '\n' ' ' < "$tmp/pp.client")"
	return 1
}

# 1: the file, root only.
mode=$(stat -c %a "$inject" 2>/dev/null)
if [ "$mode" = 200 ]; then
	result ok "$inject exists, mode 0200"
else
	result "not ok" "$inject: mode '${mode:-missing}', expected 200"
fi

baseline=$(objects)
base_pins=$(pins)
echo "# baseline: $baseline | pinned pages $base_pins"

# 2: a line it cannot parse is EINVAL, and changes nothing.
bad=""
for line in "" "hang" "aq_hang 1" "qp_fatal" "qp_fatal x" "drop 1000001" \
	    "link_down link_up"; do
	read -r ms err <<< "$(write_inject "$line")"
	[[ $err == *"Invalid argument"* ]] || bad+=" '$line': $err;"
done
if [ -z "$bad" ] && wait_active; then
	result ok "malformed lines: EINVAL, device still up"
else
	result "not ok" "malformed lines:$bad"
fi

# 3: traffic.
if start_helpers; then
	result ok "$procs processes x $pairs RC pairs streaming verified SENDs"
else
	result "not ok" "helpers not streaming: $(cat "$tmp"/err* | tr '\n' ' ')"
fi

# 4: the hang: EIO once the admin command timed out, not before.
read -r ms err <<< "$(write_inject aq_hang)"
if [[ $err == *"Input/output error"* ]] &&
   [ "$ms" -ge $((aq_timeout * 1000 - 500)) ] &&
   [ "$ms" -le $((aq_timeout * 3000)) ]; then
	result ok "aq_hang: EIO after $ms ms"
else
	result "not ok" "aq_hang: '$err' after $ms ms, expected EIO after ${aq_timeout} s"
fi
hung=$SECONDS

# 5: the processes.
helpers_fatal
if [ -z "$bad" ]; then
	result ok "every process got IBV_EVENT_DEVICE_FATAL, kept polling and posting for 1 s, closed cleanly"
else
	result "not ok" "after aq_hang:$bad"
fi

# 6: back by itself.
if wait_back $recover_limit; then
	result ok "qhca0 back and ACTIVE by itself ($((SECONDS - hung)) s after the EIO)"
else
	result "not ok" "qhca0 not back within $recover_limit s of the EIO"
fi

# 7: the new device moves data.
if pingpong; then
	result ok "ibv_rc_pingpong on the new qhca0"
else
	result "not ok" "ibv_rc_pingpong on the new qhca0: $pp_err"
fi

# 8: and holds what the old one held before the traffic.
if [ -n "$baseline" ] && [ -n "$base_pins" ] && back_to_baseline; then
	result ok "objects and pinned pages back to the baseline: $now"
else
	result "not ok" "objects: '$now', before: '$baseline | pinned pages $base_pins'"
fi

# 9: the new device's admin queue works: injection is not stuck.
read -r ms err <<< "$(write_inject "drop 0")"
if [ "$err" = success ]; then
	result ok "the new device takes commands (drop 0 in $ms ms)"
else
	result "not ok" "drop 0 on the new device: $err"
fi

# 10-11: rmmod right after an aq_hang, with processes on the device, while
# the recovery is pending or running: quick, and the processes close.
start_helpers ||
	echo "# helpers not streaming: $(cat "$tmp"/err* | tr '\n' ' ')"
read -r ms err <<< "$(write_inject aq_hang)"
start=$(now_ms)
if timeout 60 rmmod qhca && [ ! -e "$ibdev" ]; then
	result ok "rmmod right after aq_hang ($err after $ms ms): $(($(now_ms) - start)) ms"
else
	result "not ok" "rmmod right after aq_hang ($err after $ms ms) failed or hung"
fi
helpers_fatal
if [ -z "$bad" ]; then
	result ok "processes on the hung device closed cleanly"
else
	result "not ok" "processes on the hung device:$bad"
fi

# 12: insmod again: a working qhca0.
pp_err=""
now=""
if insmod "$QHCA_KO" && wait_active && pingpong && back_to_baseline; then
	result ok "insmod again: qhca0 ACTIVE, ibv_rc_pingpong passes; objects, pins at the baseline"
else
	result "not ok" "insmod after the hung rmmod: $pp_err; now '$now'"
fi

# 13: unbind the function while the aq_hang write still waits for its
# command (an open debugfs file pins the module, so this is the remove a
# hot unplug does): the remove waits for the write, which fails at the
# timeout, recovers nothing, and the function binds again to a working
# qhca0.
pci=$(basename "$(readlink -f "$ibdev/device")")
drv=/sys/bus/pci/drivers/qhca
( write_inject aq_hang > "$tmp/hang" ) &
writer=$!
wait_writing $aq_timeout || echo "# the aq_hang write did not block within $aq_timeout s"
start=$(now_ms)
unbind_ok=0
timeout 60 sh -c "echo $pci > $drv/unbind" && [ ! -e "$ibdev" ] && unbind_ok=1
took=$(($(now_ms) - start))
wait "$writer"
read -r ms err < "$tmp/hang"
pp_err=""
now=""
if [ $unbind_ok = 1 ] && [[ $err == *"Input/output error"* ]] &&
   echo "$pci" > "$drv/bind" && wait_active && pingpong &&
   back_to_baseline; then
	result ok "unbind during the hung write: $took ms, the write EIO; bind: qhca0 works; objects, pins at the baseline"
else
	result "not ok" "unbind $pci during the hung write (ok=$unbind_ok, $took ms; write '$err' after $ms ms): $pp_err; now '$now'"
fi

# 14: two writers at once.  The second waits for the first one's command
# and then fails at once, as every command does on a dead device: one
# timeout, one reset, and qhca0 back once more.
mark2="qhca fault_hang two writers $$ $(date +%s)"
echo "$mark2" > /dev/kmsg
( write_inject aq_hang > "$tmp/hang1" ) &
w1=$!
wait_writing $aq_timeout || echo "# the first aq_hang write did not block within $aq_timeout s"
( write_inject aq_hang > "$tmp/hang2" ) &
w2=$!
wait "$w1" "$w2"
read -r ms1 err1 < "$tmp/hang1"
read -r ms2 err2 < "$tmp/hang2"
wait_back $recover_limit
back=$?
pp_err=""
resets=$(dmesg | sed -n "/$mark2/,\$p" | grep -c "taking the device down")
if [[ $err1 == *"Input/output error"* ]] &&
   [[ $err2 == *"Input/output error"* ]] && [ "$back" = 0 ] &&
   [ "$resets" = 1 ] && pingpong; then
	result ok "two aq_hang writers: EIO after $ms1 and $ms2 ms, one reset, qhca0 back"
else
	result "not ok" "two aq_hang writers: '$err1' after $ms1 ms, '$err2' after $ms2 ms; $resets resets; back $back; $pp_err"
fi

# 15: the kernel never complained.
check_kernel_log "$marker"

exit $failed
