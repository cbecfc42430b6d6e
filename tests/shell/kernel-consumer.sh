#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The RC data path through the kernel verbs: insmod
# tests/kernel/qhca_kverbs_test.ko, which runs its test on qhca0 while it
# loads and logs one "ok"/"not ok" line per step; pass those on, check its
# verdict (/sys/module/qhca_kverbs_test/parameters/result must say "pass":
# "not run" means it never found qhca0), rmmod it, and check that the
# driver's hw_objects counters are back where they were.  TAP output.
#
# Environment: QHCA_TOP (the repository, default this script's parent),
# QHCA_KVERBS_KO (the module built for the booted kernel; tools/vm sets it).
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$tests_dir/kernel_log.sh"
. "$tests_dir/hw_objects.sh"

ko=${QHCA_KVERBS_KO:-$QHCA_TOP/tests/kernel/qhca_kverbs_test.ko}
mod=qhca_kverbs_test

echo "TAP version 13"

if [ ! -f "$ko" ]; then
	result "not ok" "$ko is missing (tools/build/module)"
	echo "1..$num"
	exit 1
fi
[ -e /sys/module/$mod ] && rmmod $mod

before=$(hw_objects)
echo "# hw_objects before: ${before:-unreadable}"

marker="qhca kernel-consumer $$ $(date +%s)"
echo "$marker" > /dev/kmsg
if insmod "$ko"; then
	result ok "insmod $mod"
else
	result "not ok" "insmod $mod"
fi

# The module's own step lines, as results of ours.
log=$(dmesg | sed -n "/$marker/,\$p")
steps=0
while IFS= read -r line; do
	if [[ $line =~ $mod:\ (not\ ok|ok)\ [0-9]+\ -\ (.*)$ ]]; then
		steps=$((steps + 1))
		result "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}"
	elif [[ $line =~ $mod:\ (.*)$ ]]; then
		echo "# ${BASH_REMATCH[1]}"
	fi
done <<< "$log"

verdict=$(cat /sys/module/$mod/parameters/result 2>/dev/null)
if [ "$verdict" = pass ] && [ "$steps" -gt 0 ]; then
	result ok "module verdict: pass after $steps steps"
else
	result "not ok" "module verdict: ${verdict:-unreadable} after $steps steps"
fi

if [ -e /sys/module/$mod ] && rmmod $mod; then
	result ok "rmmod $mod"
else
	result "not ok" "rmmod $mod"
fi

after=$(hw_objects)
echo "# hw_objects after: ${after:-unreadable}"
if [ -z "$before" ]; then
	result "not ok" "hw_objects: cannot read $hw_objects_dir"
elif [ "$after" != "$before" ]; then
	result "not ok" "hw_objects: $after, expected $before"
else
	result ok "hw_objects back to what they were"
fi

check_kernel_log "$marker"

echo "1..$num"
exit $failed
