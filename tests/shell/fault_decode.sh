#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The guest turns the qhca function's memory decode off and on while its
# other CPUs read BAR 0 (decode_helper), with the driver unbound: each
# change is a change of the machine's memory map under vCPUs that hold
# translations of the BAR.  QEMU must survive it (QEMU 10.0's TCG aborted
# on exactly this: the fix is in qemu-device/qemu-fixes/), the registers
# must answer again, and the driver must bind again to a qhca0
# that moves verified data.  Needs two CPUs or more (the guest suite's
# guests have two).  TAP output.
#
# Environment: QHCA_KO, QHCA_TOP, QHCA_TEST_BIN (where the helpers are).
set -uo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/fault_common.sh"

# How long the decode changes while the BAR is read.  Without the fix, of
# 9 such runs on a 2-vCPU guest 4 aborted QEMU and 1 hung the guest: the
# test catches the race in about half of its runs, not in every one.
race_secs=20

echo "TAP version 13"
echo "1..5"

begin_test fault_decode
bdf=$(basename "$(readlink -f "$ibdev/device")")
drv=/sys/bus/pci/drivers/qhca

if [ -e "$drv/$bdf" ] && echo "$bdf" > "$drv/unbind" && [ ! -e "$ibdev" ]; then
	result ok "driver unbound from $bdf"
else
	result "not ok" "unbinding $bdf from the qhca driver"
fi

if out=$("${helper%/*}/decode_helper" "$bdf" "$race_secs" 2>&1); then
	result ok "$race_secs s of decode off/on beside BAR reads on the other CPUs ($out): MAGIC answers after"
else
	result "not ok" "decode off/on beside BAR reads: $out"
fi

if echo "$bdf" > "$drv/bind" && wait_active; then
	result ok "driver bound again: qhca0 ACTIVE"
else
	result "not ok" "driver bound again: qhca0 not ACTIVE"
fi

if fresh_device 2 200; then
	result ok "no user objects, verified traffic"
else
	result "not ok" "after the bind: objects ${counts:-unreadable}; $out"
fi

check_kernel_log "$marker"

exit $failed
