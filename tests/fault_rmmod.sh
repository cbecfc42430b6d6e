#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# rmmod qhca while processes hold contexts with QPs, CQs and MRs and SENDs
# in flight.  The unload must not wait for them: ib_core disassociates each
# context (zaps its doorbell and ring mappings, destroys its objects), each
# process gets IBV_EVENT_DEVICE_FATAL from ibv_get_async_event and can still
# destroy its objects and close the device, every call succeeding (after
# polling and posting on the dead context for a second, which must not
# crash it).  The kernel log stays free of warnings, and insmod brings back
# a device that holds no user object and moves verified data.  TAP output.
#
# Environment: QHCA_KO (path of qhca.ko, set by the guest bench), QHCA_TOP,
# QHCA_TEST_BIN (where fault_helper is; default build/tests).
set -uo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/fault_common.sh"

echo "TAP version 13"
echo "1..7"

begin_test fault_rmmod

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

# The unload must finish while the contexts are still open.
start=$(date +%s)
if timeout 60 rmmod qhca; then
	result ok "rmmod with open contexts ($(($(date +%s) - start)) s)"
else
	result "not ok" "rmmod qhca with open contexts failed or hung"
fi
if [ -e "$ibdev" ]; then
	result "not ok" "qhca0 still there after rmmod"
else
	result ok "qhca0 gone"
fi

bad=""
for i in $(seq $procs); do
	if ! timeout 60 tail --pid="${pids[$((i - 1))]}" -f /dev/null; then
		bad+=" helper $i did not exit;"
		continue
	fi
	wait "${pids[$((i - 1))]}"
	rc=$?
	if [ "$rc" != 0 ] || ! grep -qx "EVENT DEVICE_FATAL" \
				   "$tmp/out$i" ||
	   ! grep -qx SURVIVED "$tmp/out$i" ||
	   ! grep -qx CLOSED "$tmp/out$i"; then
		bad+=" helper $i: exit $rc, $(tr '\n' ' ' < "$tmp/out$i")$(tr '\n' ' ' < "$tmp/err$i");"
	fi
done
pids=()
if [ -z "$bad" ]; then
	result ok "every process got IBV_EVENT_DEVICE_FATAL, kept polling and posting for 1 s, closed cleanly"
else
	result "not ok" "after rmmod:$bad"
fi

if insmod "$QHCA_KO" && wait_active; then
	result ok "insmod again: qhca0 ACTIVE"
else
	result "not ok" "insmod after the forced unload"
fi

# The new device holds no user object and moves data.
objs=$ibdev/hw_objects
counts=""
out=""
for f in uars pds cqs qps mrs; do
	counts+="$(cat "$objs/$f" 2>/dev/null)"
done
if [ "$counts" = 00000 ] && out=$("$helper" check 2 200 2>&1); then
	result ok "reloaded device: no user objects, verified traffic"
else
	result "not ok" "reloaded device: uars pds cqs qps mrs = $counts; $out"
fi

check_kernel_log "$marker"

exit $failed
