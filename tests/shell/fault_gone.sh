#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# No completion out of thin air once the device is gone.  When qhca0 goes
# away (rmmod, then a reset of the PCI function), ib_uverbs takes the
# process's ring mappings away and later reads of a CQ ring see zeroes, or
# a page shared with the SQ rings if the ring were mapped writable.  A
# process wraps two CQs once, so that a zero CQE has the phase of a new
# one, and keeps streaming and posting on other QPs.  After the device
# left, polling the wrapped CQs (one with ibv_poll_cq(), one with
# ibv_start_poll()) must never return a completion, as nothing is
# outstanding on them, and must report the ring lost (a negative return,
# an errno) thanks to the WRITTEN bit of 1.3 CQEs.  TAP output.
#
# Environment: QHCA_KO, QHCA_TOP, QHCA_TEST_BIN (where fault_helper is).
set -uo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/fault_common.sh"

echo "TAP version 13"
echo "1..9"

begin_test fault_gone

# start_helper: one "gone" helper, streaming once its probe CQs wrapped.
start_helper() {
	: > "$tmp/out"
	: > "$tmp/err"
	"$helper" gone 2 > "$tmp/out" 2> "$tmp/err" &
	pids=($!)
	if wait_word READY 60 "$tmp/out"; then
		result ok "$1: CQs wrapped once, traffic streaming"
	else
		result "not ok" "$1: helper not ready: $(tr '\n' ' ' < "$tmp/err")"
	fi
}

# check_helper WHAT: it exits, saw no garbage and saw both rings lost.
check_helper() {
	local rc
	if ! timeout 60 tail --pid="${pids[0]}" -f /dev/null; then
		result "not ok" "$1: helper did not exit"
		result "not ok" "$1: helper did not exit"
		return
	fi
	wait "${pids[0]}"
	rc=$?
	pids=()
	if [ "$rc" = 0 ] && grep -qx "EVENT DEVICE_FATAL" "$tmp/out" &&
	   grep -qx CLOSED "$tmp/out" && ! grep -q GARBAGE "$tmp/err"; then
		result ok "$1: no completion from the wrapped CQs, closed cleanly"
	else
		result "not ok" "$1: exit $rc, $(tr '\n' ' ' < "$tmp/out")$(tr '\n' ' ' < "$tmp/err")"
	fi
	if grep -q "^GONE poll_cq " "$tmp/out" &&
	   grep -q "^GONE start_poll " "$tmp/out"; then
		result ok "$1: ibv_poll_cq and ibv_start_poll report the ring lost"
	else
		result "not ok" "$1: the ring's loss not reported: $(tr '\n' ' ' < "$tmp/out")"
	fi
}

start_helper rmmod
if timeout 60 rmmod qhca; then
	result ok "rmmod with an open context"
else
	result "not ok" "rmmod qhca with an open context failed or hung"
fi
check_helper rmmod
insmod "$QHCA_KO" && wait_active

start_helper reset
reset=$(readlink -f "$ibdev/device")/reset
if [ -w "$reset" ] && timeout 60 sh -c "echo 1 > $reset"; then
	result ok "function reset with an open context"
else
	result "not ok" "function reset through $reset failed or hung"
fi
check_helper reset
wait_active

check_kernel_log "$marker"

exit $failed
