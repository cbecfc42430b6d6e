# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
#
# Sourced by the fault_*.sh tests, which stress or take away the device
# under streaming processes in much the same way: paths, the fault_helper
# processes they track and clean up (leaving qhca loaded), the waits on
# the helpers' progress files, the helpers that must see DEVICE_FATAL,
# and the device's object counts (every file of hw_objects/,
# hw_objects.sh).  It sources lib.sh, which all shell tests share: TAP
# results, the wait for the port.
# Environment: QHCA_KO, QHCA_TOP, QHCA_TEST_BIN (where fault_helper is).

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$tests_dir/kernel_log.sh"
. "$tests_dir/hw_objects.sh"
: "${QHCA_KO:=$QHCA_TOP/drivers/infiniband/hw/qhca/qhca.ko}"
# fault_helper: in QHCA_TEST_BIN, else where kselftest put it: beside
# this file once installed, one folder up when built in the source tree,
# or in the repository's kselftest install (tools/build/tests).
helper=${QHCA_TEST_BIN:-$QHCA_TOP/build/tests/drivers/infiniband/qhca}/fault_helper
if [ -z "${QHCA_TEST_BIN:-}" ]; then
	for d in "$tests_dir" "$tests_dir/.."; do
		[ -x "$d/fault_helper" ] && helper=$d/fault_helper && break
	done
fi
procs=3
pairs=4

tmp=$(mktemp -d)
pids=()

cleanup() {
	local pid
	for pid in "${pids[@]}"; do
		kill -9 "$pid" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$tmp"
	# Leave the device loaded for whatever runs next.
	[ -e /sys/module/qhca ] || insmod "$QHCA_KO" 2>/dev/null
}
trap cleanup EXIT

# begin_test NAME: mark the kernel log ($marker, for check_kernel_log) and
# make sure the device is there, loaded by an earlier test or by us.
begin_test() {
	marker="qhca $1 $$ $(date +%s)"
	echo "$marker" > /dev/kmsg
	modprobe ib_uverbs
	if [ ! -e /sys/module/qhca ]; then
		insmod "$QHCA_KO" && wait_active
	fi
}

# wait_word WORD SECONDS FILE...: each FILE has a line WORD.
wait_word() {
	local word=$1 secs=$2 f n
	shift 2
	for _ in $(seq $((secs * 10))); do
		n=0
		for f in "$@"; do
			grep -qx "$word" "$f" 2>/dev/null && n=$((n + 1))
		done
		[ "$n" = $# ] && return 0
		sleep 0.1
	done
	return 1
}

# start_helpers: $procs streaming fault_helper processes; 0 once READY.
start_helpers() {
	local i
	outs=()
	for i in $(seq $procs); do
		QHCA_FAULT_KEEP_GOING=1 "$helper" rmmod $pairs \
			> "$tmp/out$i" 2> "$tmp/err$i" &
		pids+=($!)
		outs+=("$tmp/out$i")
	done
	wait_word READY 60 "${outs[@]}"
}

# helpers_fatal: each helper got IBV_EVENT_DEVICE_FATAL, kept going for a
# second, closed everything and exited 0; else $bad says what went wrong.
# Not in a subshell: it waits for the helpers, children of this shell.
helpers_fatal() {
	local i rc
	bad=""
	for i in $(seq $procs); do
		if ! timeout 60 tail --pid="${pids[$((i - 1))]}" -f /dev/null; then
			bad+=" helper $i did not exit;"
			continue
		fi
		wait "${pids[$((i - 1))]}"
		rc=$?
		if [ "$rc" != 0 ] ||
		   ! grep -qx "EVENT DEVICE_FATAL" "$tmp/out$i" ||
		   ! grep -qx SURVIVED "$tmp/out$i" ||
		   ! grep -qx CLOSED "$tmp/out$i"; then
			bad+=" helper $i: exit $rc, $(tr '\n' ' ' < "$tmp/out$i")$(tr '\n' ' ' < "$tmp/err$i");"
		fi
	done
	pids=()
}

# fresh_device TRAFFIC...: the device holds no object but the driver's
# own, of any type, and "$helper" check TRAFFIC moves verified data; else
# $counts (every hw_objects count) and $out say what is wrong.
fresh_device() {
	counts=$(hw_objects)
	out=""
	hw_objects_unused "$counts" && out=$("$helper" check "$@" 2>&1)
}
