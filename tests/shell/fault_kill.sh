#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# kill -9 in the middle of traffic, over and over: each round starts
# several processes with RC pairs streaming verified SENDs (fault_helper
# stream), waits until all of them move data, and kills them all with
# SIGKILL at a random moment.  Afterwards the device holds exactly the
# objects it held before (the driver's hw_objects counters), ib_core has
# no resource of qhca0 left (rdma res), the device still moves verified
# data, and the kernel log has no warning.  TAP output.
#
# The kill comes 0.0 to 0.9 s after all of them stream, each tenth of a
# second once in every ten rounds (in a random rotation): the default 30
# rounds, make check's, kill at each of the ten moments three times in
# about 45 s under TCG; 100 rounds took 141 s of make check's guest suite.
# For a longer run: tools/vm -- env QHCA_KILL_ROUNDS=1000
# tools/guest/run-tests fault_kill.sh (tests/settings' timeout_fault_kill
# bounds the program: raise it too).
#
# Environment: QHCA_TOP, QHCA_TEST_BIN (where fault_helper is),
# QHCA_KILL_ROUNDS (default 30), QHCA_KILL_PROCS (default 3).
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/fault_common.sh"

rounds=${QHCA_KILL_ROUNDS:-30}
procs=${QHCA_KILL_PROCS:-3}
pairs=2

# res: ib_core's resource counts of qhca0 ("pd N cq N qp N ..."), or
# nothing without the rdma tool.
res() {
	command -v rdma > /dev/null || return
	rdma res show 2>/dev/null | sed -n 's/^[0-9]*: qhca0: //p'
}

echo "TAP version 13"
echo "1..5"

begin_test fault_kill

base=$(hw_objects)
base_res=$(res)
echo "# before: $base; rdma res: ${base_res:-none}"

bad=""
first=$RANDOM
for r in $(seq "$rounds"); do
	outs=()
	for i in $(seq "$procs"); do
		"$helper" stream $pairs > "$tmp/out$i" 2> "$tmp/err$i" &
		pids+=($!)
		outs+=("$tmp/out$i")
	done
	# All of them streaming, or one of them failed.
	for _ in $(seq 600); do
		n=0
		for f in "${outs[@]}"; do
			grep -qx READY "$f" && n=$((n + 1))
		done
		[ "$n" = "$procs" ] && break
		running=0
		for pid in "${pids[@]}"; do
			kill -0 "$pid" 2>/dev/null && running=$((running + 1))
		done
		[ "$running" = "$procs" ] || break
		sleep 0.1
	done
	[ "$n" = "$procs" ] ||
		bad+=" round $r: $n of $procs streaming ($(cat "$tmp"/err* | tr '\n' ' '));"
	# Somewhere in the middle of the traffic: a moment on purpose, not a
	# wait for anything; every tenth of a second once in ten rounds.
	sleep "0.$(((first + r) % 10))"
	for pid in "${pids[@]}"; do
		if ! kill -0 "$pid" 2>/dev/null; then
			bad+=" round $r: pid $pid died on its own;"
		fi
		kill -9 "$pid" 2>/dev/null
	done
	for pid in "${pids[@]}"; do
		wait "$pid" 2>/dev/null
	done
	pids=()
	[ -n "$bad" ] && break
done
if [ -z "$bad" ]; then
	result ok "$rounds rounds of $procs processes x $pairs RC pairs killed mid-traffic"
else
	result "not ok" "traffic before the kill:$bad"
fi

# ib_uverbs tears the killed processes' objects down as their files close.
now=""
for _ in $(seq 100); do
	now=$(hw_objects)
	[ "$now" = "$base" ] && break
	sleep 0.1
done
if [ -n "$base" ] && [ "$now" = "$base" ]; then
	result ok "device objects back to the start: $now"
else
	result "not ok" "device objects: ${now:-unreadable}, expected ${base:-unreadable}"
fi

now_res=$(res)
if [ -z "$base_res" ]; then
	result "not ok" "rdma res shows nothing for qhca0 (no rdma tool?)"
elif [ "$now_res" = "$base_res" ]; then
	result ok "rdma res of qhca0 as before: $now_res"
else
	result "not ok" "rdma res of qhca0: $now_res, before: $base_res"
fi

if out=$("$helper" check 2 200 2>&1); then
	result ok "device still moves verified data"
else
	result "not ok" "traffic after the kills: $out"
fi

check_kernel_log "$marker"

exit $failed
