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
# QHCA_TEST_BIN (where fault_helper is).
set -uo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/fault_common.sh"

echo "TAP version 13"
echo "1..7"

begin_test fault_rmmod

# Each keeps polling and posting for a second after the event.
if start_helpers; then
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

helpers_fatal
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
if fresh_device 2 200; then
	result ok "reloaded device: no user objects, verified traffic"
else
	result "not ok" "reloaded device: objects ${counts:-unreadable}; $out"
fi

check_kernel_log "$marker"

exit $failed
