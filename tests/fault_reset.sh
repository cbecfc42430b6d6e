#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# A reset of the PCI function (its sysfs "reset" file: FLR) while processes
# stream verified SENDs on qhca0.  The reset wipes every object in the
# device, so the driver takes the device down first: each process gets
# IBV_EVENT_DEVICE_FATAL and can still destroy its objects and close the
# device, every call succeeding.  After the reset qhca0 comes back by
# itself, holds no user object and moves verified data, also after more
# resets; the kernel log has no warning.  TAP output.
#
# Environment: QHCA_KO, QHCA_TOP, QHCA_TEST_BIN (where fault_helper is).
set -uo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/fault_common.sh"

echo "TAP version 13"
echo "1..7"

begin_test fault_reset
reset=$(readlink -f "$ibdev/device")/reset

outs=()
for i in $(seq $procs); do
	# Each keeps polling and posting for a second after the event.
	QHCA_FAULT_KEEP_GOING=1 "$helper" rmmod $pairs > "$tmp/out$i" \
		2> "$tmp/err$i" &
	pids+=($!)
	outs+=("$tmp/out$i")
done
if wait_word READY 60 "${outs[@]}"; then
	result ok "$procs processes x $pairs RC pairs streaming verified SENDs"
else
	result "not ok" "helpers not streaming: $(cat "$tmp"/err* | tr '\n' ' ')"
fi

if [ -w "$reset" ] && timeout 60 sh -c "echo 1 > $reset"; then
	result ok "function reset through $reset with open contexts"
else
	result "not ok" "function reset through $reset failed or hung"
fi

bad=""
for i in $(seq $procs); do
	if ! timeout 60 tail --pid="${pids[$((i - 1))]}" -f /dev/null; then
		bad+=" helper $i did not exit;"
		continue
	fi
	wait "${pids[$((i - 1))]}"
	rc=$?
	if [ "$rc" != 0 ] || ! grep -qx "EVENT DEVICE_FATAL" "$tmp/out$i" ||
	   ! grep -qx SURVIVED "$tmp/out$i" ||
	   ! grep -qx CLOSED "$tmp/out$i"; then
		bad+=" helper $i: exit $rc, $(tr '\n' ' ' < "$tmp/out$i")$(tr '\n' ' ' < "$tmp/err$i");"
	fi
done
pids=()
if [ -z "$bad" ]; then
	result ok "every process got IBV_EVENT_DEVICE_FATAL, kept polling and posting for 1 s, closed cleanly"
else
	result "not ok" "after the reset:$bad"
fi

if wait_active; then
	result ok "qhca0 back and ACTIVE after the reset"
else
	result "not ok" "qhca0 not back after the reset"
fi

# The new device holds no user object and moves data.
objs=$ibdev/hw_objects
counts=""
out=""
for f in uars pds cqs qps mrs; do
	counts+="$(cat "$objs/$f" 2>/dev/null)"
done
if [ "$counts" = 00000 ] && out=$("$helper" check 2 200 2>&1); then
	result ok "after the reset: no user objects, verified traffic"
else
	result "not ok" "after the reset: uars pds cqs qps mrs = $counts; $out"
fi

# Idle resets, back to back: the device comes back each time.
bad=""
for r in 1 2 3; do
	echo 1 > "$reset" 2>/dev/null || bad+=" reset $r failed;"
	wait_active || bad+=" not back after reset $r;"
done
if [ -z "$bad" ] && out=$("$helper" check 1 100 2>&1); then
	result ok "three more resets: back each time, verified traffic"
else
	result "not ok" "three more resets:$bad $out"
fi

check_kernel_log "$marker"

exit $failed
