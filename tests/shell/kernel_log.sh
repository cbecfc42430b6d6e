# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
#
# Sourced by the shell tests that end with a look at the kernel log.
# check_kernel_log MARKER [WHAT]: one TAP result, through lib.sh's
# result(), for the kernel log since the line MARKER the test wrote to
# /dev/kmsg: not ok if it cannot be read, or if it holds a warning, an
# oops or a sanitizer report (each printed as a diagnostic).  WHAT names
# the phase for the failure line.

kernel_log_bad='WARNING:|BUG:|Oops|general protection|Call Trace|KASAN|UBSAN|refcount_t:'

check_kernel_log() {
	local log oops line
	log=$(dmesg | sed -n "/$1/,\$p")
	oops=$(grep -E "$kernel_log_bad" <<< "$log")
	if [ -z "$log" ]; then
		result "not ok" "kernel log: cannot read it"
	elif [ -n "$oops" ]; then
		while IFS= read -r line; do diag "$line"; done <<< "$oops"
		result "not ok" "kernel log: warnings or oopses${2:+ $2}"
	else
		result ok "kernel log: clean"
	fi
}
