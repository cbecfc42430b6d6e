#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Load: several processes, each with many RC loopback pairs on qhca0 and
# DEPTH SENDs in flight on every QP at once, every message checked end to
# end (its pair, its sequence number and a pattern derived from both): no
# message lost, duplicated, reordered or corrupted (fault_helper check).
# Afterwards the device holds no user object and the kernel log is clean.
# TAP output.
#
# The full load is 4 processes x 512 pairs = 4096 QPs with 64 WQEs each,
# which needs a device started with more QPs than the default 1024:
# tools/check's "load" suite boots it so.  On a device with fewer QPs than
# asked for the whole program is a skip (exit 4), never a smaller pass.
#
# Environment: QHCA_TOP, QHCA_TEST_BIN, QHCA_LOAD_PROCS (4),
# QHCA_LOAD_QPS (4096 in all), QHCA_LOAD_DEPTH (64), QHCA_LOAD_MSGS (messages
# per pair, 200).
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/fault_common.sh"

procs=${QHCA_LOAD_PROCS:-4}
qps=${QHCA_LOAD_QPS:-4096}
depth=${QHCA_LOAD_DEPTH:-64}
msgs=${QHCA_LOAD_MSGS:-200}

echo "TAP version 13"

begin_test fault_load

# What the device offers (ibv_devinfo -v: max_qp), less what is in use.
max_qp=$(ibv_devinfo -d qhca0 -v 2>/dev/null | sed -n 's/^[[:space:]]*max_qp:[[:space:]]*\([0-9]*\).*/\1/p')
if [ -z "$max_qp" ] || [ "$max_qp" -lt "$qps" ]; then
	echo "# qhca0 has ${max_qp:-unknown} QPs, $qps needed: run it under tools/check load"
	echo "1..0 # SKIP qhca0 has ${max_qp:-unknown} QPs, $qps needed: tools/check load (--qhca-opt max-qps=8192)"
	exit 4
fi
echo "1..4"
pairs=$((qps / procs / 2))
base=$(hw_objects)
echo "# before: $base"

# The guest's lowest MemAvailable while the load runs, for the log.
memavail() { sed -n 's/^MemAvailable: *\([0-9]*\) kB/\1/p' /proc/meminfo; }
mem_before=$(memavail)
( low=$mem_before
  while sleep 0.5; do
	m=$(memavail)
	[ "$m" -lt "$low" ] && low=$m && echo "$low" > "$tmp/memlow"
  done ) &
sampler=$!

start=$(date +%s)
for i in $(seq "$procs"); do
	"$helper" check "$pairs" "$msgs" "$depth" > "$tmp/out$i" 2> "$tmp/err$i" &
	pids+=($!)
done
bad=""
for i in $(seq "$procs"); do
	wait "${pids[$((i - 1))]}"
	rc=$?
	[ "$rc" = 0 ] || bad+=" process $i: exit $rc $(tr '\n' ' ' < "$tmp/err$i");"
done
pids=()
secs=$(($(date +%s) - start))
kill "$sampler" 2>/dev/null
wait "$sampler" 2>/dev/null
low=$(cat "$tmp/memlow" 2>/dev/null || echo "$mem_before")
echo "# guest MemAvailable: $((mem_before / 1024)) MiB before, $((low / 1024)) MiB at the lowest during the load"
if [ -z "$bad" ]; then
	result ok "$procs processes x $pairs pairs ($((procs * pairs * 2)) QPs), $depth SENDs in flight each, $msgs messages per pair verified in order (${secs} s)"
else
	result "not ok" "load:$bad"
fi

n=0
for i in $(seq "$procs"); do
	grep -q "^DONE $pairs pairs x $msgs messages verified$" "$tmp/out$i" &&
		n=$((n + 1))
done
if [ "$n" = "$procs" ]; then
	result ok "every process verified all $((pairs * msgs)) of its messages"
else
	result "not ok" "$n of $procs processes verified all their messages"
fi

now=$(hw_objects)
if [ -n "$base" ] && [ "$now" = "$base" ]; then
	result ok "device objects back to the start: $now"
else
	result "not ok" "device objects: ${now:-unreadable}, expected ${base:-unreadable}"
fi

check_kernel_log "$marker"

exit $failed
