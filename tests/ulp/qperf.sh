# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Part "qperf" of the ulp suite (sourced by suite.sh): qperf's RDMA tests
# between every pair, the lower guest serving: RC send bandwidth and
# latency, RDMA WRITE and READ bandwidth.  qperf measures, it does not
# check data; a test passes when it completes and reports its figure.
#
# Every test connects through rdma_cm (-cm1): qperf's own exchange (-cm0,
# its default) puts the peer's LID in the address vector and no GRH, which
# a RoCE port has nothing to route by (qhca0 refuses it, EINVAL; rxe takes
# it and its packets go nowhere).  ud_lat cannot run on RoCE at all: with
# -cm1 qperf's server makes its address handle from the connect request
# event's ah_attr, which the kernel's rdma_cm leaves empty for a UD (SIDR)
# request (port 0: ibv_create_ah fails on any device), and -cm0 has the
# same GRH-less vector; it is reported as a skip with that reason.

qperf_tests=(rc_bw rc_lat rc_rdma_write_bw rc_rdma_read_bw ud_lat)
# shellcheck disable=SC2034 # read by lib.sh's pending_why
pending=(
	["ud_lat *"]="qperf 0.4.11's UD server makes its AH from the SIDR connect request's ah_attr, which Linux's rdma_cm leaves empty (port 0: ibv_create_ah fails on every device), and without -cm1 its AV has no GRH, which RoCE cannot route"
)

# qperf_serve PORT: the qperf server on PORT until the pair's client is
# done with every test (the pair's barrier 50), then ended here.
qperf_serve() {
	local port=$1 pid rc
	timeout $((arrive_s + 120)) qperf -lp "$port" > /tmp/ulp-qperf.log 2>&1 &
	pid=$!
	listens "$port" "$pid" "$wait_s"
	result "qperf: the server listens on port $port"
	pair_barrier 1
	pair_barrier 50
	kill "$pid" 2>/dev/null
	wait "$pid"
	rc=$?
	show < /tmp/ulp-qperf.log
	# Ended by the kill (SIGTERM, 143), not by an error of its own or the
	# timeout (124).
	[ $rc = 143 ]
	result "qperf: the server served every test and was still up at the end (status $rc)"
}

# qperf_client PORT: every test against the pair's server.
qperf_client() {
	local port=$1 t why rc figure
	pair_barrier 1
	for t in "${qperf_tests[@]}"; do
		why=$(pending_why "$t" "$rdev" "$odev")
		if [ -n "$why" ]; then
			skip "qperf -cm1 $t $rdev -> $other ($odev)" "$why"
			continue
		fi
		run_done 0 "" "(bw|latency) += " qperf -lp "$port" -cm1 -t 2 "$(resolve "$other")" "$t"
		rc=$?
		figure=$(grep -E '(bw|latency) += ' <<< "$run_out" | xargs)
		[ $rc = 0 ]
		result "qperf -cm1 $t $rdev -> $other ($odev): ${figure:-no figure}"
	done
	pair_barrier 50
}

qperf_pair() {
	local before
	before=$(res_now)
	if [ "$lower" = 1 ]; then
		qperf_serve "$(pair_port 1)"
	else
		qperf_client "$(pair_port 1)"
	fi
	res_back "qperf" "$before"
	dmesg_clean "qperf"
}
for_each_pair 3 qperf_pair
