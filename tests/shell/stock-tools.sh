#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The stock RDMA tools of the distribution on qhca0, server and client in
# this one guest on the one HCA (the port's LID is both ends' address):
# ibv_rc_pingpong with its data check, polled and with completion events,
# and the perftest suite over RC, each with a bounded number of iterations
# so that it ends in seconds even under TCG.  One TAP line per run.
#
# A run passes when server and client both exit 0 within the time limit;
# each runs once, a failure is a failure.  perftest measures its clock
# against /proc/cpuinfo, which disagrees with itself under TCG: -F makes
# that a warning.  perftest's output is block buffered when it is not a
# terminal, so it runs under stdbuf -oL, which keeps the log of a run that
# is killed by its timeout.
#
# Environment: QHCA_TOOL_TIMEOUT (seconds per run, default 180).
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

dev=qhca0
limit=${QHCA_TOOL_TIMEOUT:-180}
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

# check NAME CMD...: one TAP line for CMD's run_pair, under stdbuf.  Logs
# in $logs/NAME.*.
check() {
	local name=$1 start=$SECONDS
	shift
	if run_pair "$logs/$name" "$limit" stdbuf -oL -eL "$@"; then
		# The client's summary line, for the record.
		diag_file "$logs/$name.client" 3
		result ok "$name ($((SECONDS - start)) s)"
		return
	fi
	printf '# %s: %s\n' "$name" "$pair_status"
	printf '# %s server: %s\n' "$name" "$*"
	diag_file "$logs/$name.server"
	printf '# %s client:\n' "$name"
	diag_file "$logs/$name.client"
	result "not ok" "$name"
}

echo "TAP version 13"
if [ ! -e "$ibdev" ]; then
	echo "1..0 # SKIP no $dev"
	exit 4
fi

# ibv_rc_pingpong: -c checks every received buffer.
pp=(ibv_rc_pingpong -d "$dev" -i 1 -c -n 1000)
for size in 1 4096 1048576; do
	check "ibv_rc_pingpong -s $size" "${pp[@]}" -s "$size"
	check "ibv_rc_pingpong -s $size -e" "${pp[@]}" -s "$size" -e
done
# -t: an extended CQ with completion timestamps (ibv_create_cq_ex(),
# ibv_start_poll(), ibv_wc_read_completion_ts()), the clock from
# ibv_query_device_ex().  Not with -e: that mode of rc_pingpong takes an
# empty CQ after an event as a failed poll, and it reads at most two CQEs
# per event, so a completion that lands between its re-arm and its poll
# leaves an event with nothing behind it.  That race is in the program:
# it failed each time we tried it, with the arm firing at once for a CQE
# already waiting (as it does, see rc_events) and without.
for size in 1 4096 1048576; do
	check "ibv_rc_pingpong -s $size -t" "${pp[@]}" -s "$size" -t
done

# ibv_srq_pingpong: its 16 QPs take their receives from one SRQ; -c checks
# every received buffer.
spp=(ibv_srq_pingpong -d "$dev" -i 1 -c -n 500 -s 4096)
check "ibv_srq_pingpong" "${spp[@]}"
check "ibv_srq_pingpong -e" "${spp[@]}" -e

# ibv_xsrq_pingpong: XRC.  Each side opens one XRC domain through a file,
# makes an XRC SRQ and a TGT QP in it, and its INI QP sends to the other
# side's SRQ through the other side's TGT QP.
xpp=(ibv_xsrq_pingpong -d "$dev" -i 1 -n 500)
check "ibv_xsrq_pingpong" "${xpp[@]}"
check "ibv_xsrq_pingpong -e" "${xpp[@]}" -e

pt=(-d "$dev" -i 1 -F -c RC)
check "ib_send_bw" ib_send_bw "${pt[@]}" -n 200
check "ib_send_lat" ib_send_lat "${pt[@]}" -n 200
check "ib_send_bw --use-srq" ib_send_bw "${pt[@]}" -n 200 --use-srq
check "ib_send_lat --use-srq" ib_send_lat "${pt[@]}" -n 200 --use-srq
check "ib_write_bw -a" ib_write_bw "${pt[@]}" -n 20 -a
check "ib_write_lat" ib_write_lat "${pt[@]}" -n 200
check "ib_read_bw -q 2" ib_read_bw "${pt[@]}" -n 100 -q 2
check "ib_read_lat" ib_read_lat "${pt[@]}" -n 200
check "ib_atomic_bw" ib_atomic_bw -d "$dev" -i 1 -F -n 200
check "ib_atomic_bw -A CMP_AND_SWAP" ib_atomic_bw -d "$dev" -i 1 -F \
	-n 200 -A CMP_AND_SWAP
check "ib_atomic_lat" ib_atomic_lat -d "$dev" -i 1 -F -n 200

# UD and UC: the pingpongs check every buffer; UD with and without a GRH.
check "ibv_ud_pingpong -s 2048" ibv_ud_pingpong -d "$dev" -i 1 -c \
	-n 1000 -s 2048
check "ibv_ud_pingpong -s 4096 -g 0" ibv_ud_pingpong -d "$dev" -i 1 \
	-c -n 1000 -s 4096 -g 0
check "ibv_uc_pingpong -s 65536" ibv_uc_pingpong -d "$dev" -i 1 -c \
	-n 1000 -s 65536
pt_ud=(-d "$dev" -i 1 -F -c UD)
pt_uc=(-d "$dev" -i 1 -F -c UC)
check "ib_send_bw -c UD" ib_send_bw "${pt_ud[@]}" -n 200
check "ib_send_lat -c UD" ib_send_lat "${pt_ud[@]}" -n 200
check "ib_send_bw -c UC" ib_send_bw "${pt_uc[@]}" -n 200
check "ib_write_bw -c UC" ib_write_bw "${pt_uc[@]}" -n 200
check "ib_write_lat -c UC" ib_write_lat "${pt_uc[@]}" -n 200

echo "1..$num"
exit $failed
