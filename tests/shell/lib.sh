# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
# shellcheck disable=SC2034 # what it sets, the tests that source it read
#
# Sourced by every shell test, before anything else of theirs (the fault
# tests through fault_common.sh): their TAP results and diagnostics, the
# wait for qhca0's port, and the stock tools' server and client runs.  A
# test prints its own "TAP version 13" and plan, and exits $failed.

# Where the tests are (this file's folder, in the source tree or where
# kselftest installed them) and the repository they come from.
tests_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
QHCA_TOP=${QHCA_TOP:-$(cd "$tests_dir/../.." && pwd)}
ibdev=/sys/class/infiniband/qhca0

# The results so far, and 1 once one failed: the test's exit status.
num=0
failed=0

# result STATUS DESCRIPTION: the next result line; STATUS "ok" or "not ok".
result() {
	num=$((num + 1))
	printf '%s %d %s\n' "$1" "$num" "$2"
	[ "$1" = ok ] || failed=1
}

# diag TEXT: TEXT as a diagnostic line.  What comes from a log may say
# "# SKIP", and a diagnostic must never be counted as a skip by a
# line-based count: it loses that form.
diag() {
	printf '# %s\n' "${1//# SKIP/#  SKIP}"
}

# diag_lines: every line of the input as an indented diagnostic, the last
# one also without its newline.
diag_lines() {
	local line
	while IFS= read -r line || [ -n "$line" ]; do
		printf '#   %s\n' "${line//# SKIP/#  SKIP}"
	done
}

# diag_file FILE [LINES]: the end of a log (25 lines) as diagnostics.
diag_file() {
	tail -n "${2:-25}" "$1" | diag_lines
}

# wait_active: up to 10 s for qhca0's port to reach ACTIVE.
wait_active() {
	local state
	for _ in $(seq 100); do
		state=$(cat "$ibdev/ports/1/state" 2>/dev/null)
		[[ $state == *ACTIVE* ]] && return 0
		sleep 0.1
	done
	return 1
}

# listening PORT: whether something listens on TCP port PORT.
listening() {
	[ -n "$(ss -ltnH "sport = :$1" 2>/dev/null)" ]
}

# The TCP port before the next run_pair's; a test may start elsewhere.
tcp_port=$((20000 + $$ % 20000))

# run_pair LOG LIMIT CMD...: CMD as server, then CMD as its client at
# 127.0.0.1 (both ends in this guest, on the one HCA), on the next TCP
# port, each ended after LIMIT seconds; 0 when both exit 0.  Their output
# is in LOG.server and LOG.client, their exit statuses in $pair_src and
# $pair_crc, and $pair_status says both.  Not in a subshell: it counts
# the TCP ports.
run_pair() {
	local log=$1 limit=$2 port spid
	shift 2
	tcp_port=$((tcp_port + 1))
	port=$tcp_port

	timeout -k 5 "$limit" "$@" -p "$port" > "$log.server" 2>&1 &
	spid=$!
	# The server listens once its device set-up is done: up to 60 s, on a
	# host whose load leaves this guest's vCPU waiting.
	for _ in $(seq 600); do
		listening "$port" && break
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.1
	done
	timeout -k 5 "$limit" "$@" -p "$port" 127.0.0.1 > "$log.client" 2>&1
	pair_crc=$?
	# A client that failed early leaves the server waiting: end it.
	for _ in $(seq 50); do
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.1
	done
	kill "$spid" 2>/dev/null
	wait "$spid"
	pair_src=$?
	pair_status="server exit $pair_src, client exit $pair_crc"
	[ "$pair_crc" = 0 ] && [ "$pair_src" = 0 ]
}
