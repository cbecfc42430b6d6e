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

# Each keeps polling and posting for a second after the event.
if start_helpers; then
	result ok "$procs processes x $pairs RC pairs streaming verified SENDs"
else
	result "not ok" "helpers not streaming: $(cat "$tmp"/err* | tr '\n' ' ')"
fi

if [ -w "$reset" ] && timeout 60 sh -c "echo 1 > $reset"; then
	result ok "function reset through $reset with open contexts"
else
	result "not ok" "function reset through $reset failed or hung"
fi

helpers_fatal
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
if fresh_device 2 200; then
	result ok "after the reset: no user objects, verified traffic"
else
	result "not ok" "after the reset: objects ${counts:-unreadable}; $out"
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
