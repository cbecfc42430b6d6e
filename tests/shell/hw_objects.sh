# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
#
# Sourced by the shell tests that check what the device holds: the live
# object counts the driver publishes, one file per object type in
# /sys/class/infiniband/qhca0/hw_objects/.  They read every file there,
# whatever its name, so an object type the driver starts counting is
# checked without editing the tests.  After lib.sh, for $ibdev.

# shellcheck disable=SC2154 # lib.sh sets ibdev
hw_objects_dir=$ibdev/hw_objects
# What the driver itself holds on a device no process uses: its event
# queues (how many does not matter here; load-unload.sh compares them).
hw_objects_driver_own="eqs"

# hw_objects: "name=value ..." for every counter, in name order; nothing
# when the directory or one of its files cannot be read.
hw_objects() {
	local f val out=""
	for f in "$hw_objects_dir"/*; do
		[ -f "$f" ] || return
		val=$(cat "$f" 2>/dev/null) || return
		out+="${out:+ }${f##*/}=$val"
	done
	echo "$out"
}

# hw_objects_unused COUNTS: COUNTS (as hw_objects prints them) is not
# empty and every count but the driver's own is 0.
hw_objects_unused() {
	local kv
	[ -n "$1" ] || return 1
	for kv in $1; do
		[[ " $hw_objects_driver_own " == *" ${kv%%=*} "* ]] && continue
		[ "${kv#*=}" = 0 ] || return 1
	done
}
