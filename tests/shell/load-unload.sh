#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Unload and reload qhca.ko many times: each load must bring qhca0 back with
# its port ACTIVE, leave no user object behind in the device (no object of
# any type hw_objects/ counts but the driver's own event queues, as many as
# on the first load) and the kernel log must stay free of warnings.  TAP
# output.
#
# Environment: QHCA_KO (path of qhca.ko, set by the guest bench),
# QHCA_RELOADS (rounds, default 20).
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$tests_dir/kernel_log.sh"
. "$tests_dir/hw_objects.sh"

: "${QHCA_KO:?QHCA_KO must name qhca.ko}"
rounds=${QHCA_RELOADS:-20}

# reload: one round; prints why it failed, if it did.
reload() {
	if [ -e /sys/module/qhca ]; then
		rmmod qhca || { echo "rmmod qhca failed"; return 1; }
	fi
	[ -e "$ibdev" ] && { echo "qhca0 still there after rmmod"; return 1; }
	insmod "$QHCA_KO" || { echo "insmod $QHCA_KO failed"; return 1; }
	wait_active || { echo "qhca0 port 1 not ACTIVE within 10 s"; return 1; }
	return 0
}

echo "TAP version 13"
echo "1..$((rounds + 2))"

marker="qhca load-unload $$ $(date +%s)"
echo "$marker" > /dev/kmsg
modprobe ib_uverbs

# The driver's own objects on a load nobody has used yet.
if [ ! -e /sys/module/qhca ]; then
	insmod "$QHCA_KO" && wait_active
fi
first=$(hw_objects)
echo "# after the first load: ${first:-unreadable}"

bad_counters=""
for r in $(seq "$rounds"); do
	if why=$(reload); then
		now=$(hw_objects)
		if [ -z "$now" ] || [ "$now" != "$first" ] ||
		   ! hw_objects_unused "$now"; then
			bad_counters+=" round $r: ${now:-unreadable};"
		fi
		result ok "reload $r: qhca0 ACTIVE"
	else
		result "not ok" "reload $r: $why"
	fi
done

# Only the driver's EQs after every reload, as many as on the first load.
if [ -z "$first" ]; then
	result "not ok" "object counters: cannot read $hw_objects_dir"
elif ! hw_objects_unused "$first"; then
	result "not ok" "object counters on the first load: $first, expected only the driver's $hw_objects_driver_own"
elif [ -n "$bad_counters" ]; then
	result "not ok" "object counters (expected $first):$bad_counters"
else
	result ok "object counters after every reload: $first"
fi

check_kernel_log "$marker" "during the reloads"

exit $failed
