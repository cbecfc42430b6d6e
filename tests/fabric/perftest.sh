# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Part "perftest" of the fabric suite (sourced by suite.sh): the eight
# perftest RC tests (write, read, send and atomic; bandwidth and latency)
# between two guests, each once connected by hand over the RoCE v2 GID of
# the guests' IPv4 addresses (-x, the GID index found in the table) and
# once through rdma_cm (-R), each way (either guest serving once).
#
# The pairs run one after another, so this part's time is the sum of its
# pairs': it runs qhca<->qhca (g1-g2) and qhca<->rxe (g1-rxe) only.  The
# qhca<->rxe pair that g2 would add runs the same code on the same device
# as g1's, and rxe<->rxe is the stock part's reference; neither runs here.
# Few iterations: the runs prove the operations cross the wire and
# complete, the bench measures them.

# perf_run TEST MODE PORT [SERVER]: one perftest run of ib_TEST (write_bw,
# ..., atomic_lat) on $rdev, MODE x (-x $gid) or R (-R), as the server or
# as SERVER's client.  Fails unless the tool exits 0 and prints its result
# line (message size and iterations, then the figures).
perf_run() {
	local test=$1 mode=$2 port=$3 size iters done_re run_again=""
	local -a cmd
	shift 3
	case $test in
	atomic_*) size=8 iters=100 ;;
	*_bw) size=65536 iters=20 ;;
	*_lat) size=64 iters=100 ;;
	esac
	# -o 16: each side's READs and atomics in flight, within both devices'
	# limits (max_qp_rd_atom: qhca0 16, rxe0 128).  Without it, perftest
	# -x gives each QP its partner's limit as max_rd_atomic, which the
	# device with the smaller one refuses (as rxe and mlx5 do).
	cmd=(ib_"$test" -d "$rdev" -p "$port" -F -s "$size" -n "$iters")
	[[ $test == read_* || $test == atomic_* ]] && cmd+=(-o 16)
	if [ "$mode" = R ]; then
		cmd+=(-R)
	elif [ -n "$gid" ]; then
		cmd+=(-x "$gid")
	else
		echo "# $rdev has no RoCE v2 GID of its address to run on"
		return 1
	fi
	# The result line: size, iterations, the figures.  A latency test's
	# figures are its cycle counts over the counter's rate, which perftest
	# measures against gettimeofday() as it starts; a guest descheduled
	# meanwhile (make check's load) spoils the fit, perftest says so
	# ("Correlation coefficient r^2: ... < 0.9"), takes the rate as 0 and
	# prints "inf" in every column.  The transfers all completed all the
	# same (the line comes after the last): with that message, and only
	# with it, "inf" counts as a figure.  The server of a READ or atomic
	# latency test takes no part in the measurement and prints none: it
	# passes once connected ("remote address") and out with status 0, its
	# client prints the figures.
	done_re="^ *$size +$iters +[0-9]"
	[[ $test != *_lat ]] || done_re="^ *$size +$iters +([0-9]|inf\\b)"
	if [ $# = 0 ] && [[ $test == read_lat || $test == atomic_lat ]]; then
		done_re="remote address:"
	fi
	# The client finds no server yet: no TCP listener (-x), or rdma_cm's
	# connect is rejected or unreachable (-R: perftest prints the event's
	# number, 8 or 7).
	if [ "$mode" = R ] && [ $# = 0 ]; then
		perf_serve $((port + 10000)) "${cmd[@]}" || return 1
		grep -qE "$done_re" <<< "$run_out" || return 1
	else
		[ "$mode" = R ] && run_again=perf_restart_server
		run_done $(($# > 0)) "Couldn't connect|Unexpected CM event bl blka [78]\\b" \
			"$done_re" "${cmd[@]}" "$@" || return 1
	fi
	if grep -qE "^ *$size +$iters +inf\\b" <<< "$run_out" &&
	   ! grep -q "Correlation coefficient r^2" <<< "$run_out"; then
		echo "# \"inf\" figures without perftest's clock message"
		return 1
	fi
	# perftest's closing handshake (a SEND each way, on the QP of -R's
	# rdma_cm exchange or the -x TCP socket) failing is only a message on
	# stderr, the status stays 0, while the partner waits for that SEND
	# until its timeout: the run failed on this side.
	! grep -q "Failed to close connection" <<< "$run_out"
}

# perftest -R's race.  After the exchange of its first handshake the
# client connects the data QP while the server creates, binds and only then
# listens on its rdma_cm ID: a server guest that waits for a CPU meanwhile
# (make check's load) gets the client's REQ first, its kernel's CM rejects
# it (no listener: reason 8, "Event: RDMA_CM_EVENT_REJECTED; error: 8."),
# the client exits and the server waits for a connection that never comes.
# Seen once in three make checks here.  Neither side can simply run again
# alone, so the client asks the server's side (on the tool port + 10000)
# to start its server again, waits until it has, and runs again; for at
# most $wait_s in all.  The server's side tells its TAP of every restart.

# perf_serve RPORT CMD...: CMD as the server, its output in run_out; when
# the client asks on RPORT, that server is ended and CMD started again.
# The status: the last server's.
perf_serve() {
	local rport=$1 end=$((SECONDS + wait_s)) out spid lpid rc
	shift
	out=$(mktemp)
	while :; do
		timeout "$wait_s" "$@" > "$out" 2>&1 &
		spid=$!
		# "ok" to the client's "NAME ready"; ends on its "NAME again".
		serve_line "$rport" "$other again" ok $((end > SECONDS ? end - SECONDS : 1)) &
		lpid=$!
		wait -n "$spid" "$lpid"
		if kill -0 "$spid" 2>/dev/null && wait "$lpid"; then
			kill "$spid" 2>/dev/null
			wait "$spid"
			echo "# $other's data connection came before this server listened: started again"
			show < "$out"
			continue
		fi
		wait "$spid"
		rc=$?
		kill "$lpid" 2>/dev/null
		wait "$lpid" 2>/dev/null
		break
	done
	run_out=$(cat "$out")
	rm -f "$out"
	show <<< "$run_out"
	return $rc
}

# perf_restart_server: run_done's run_again for a -R client, whose server
# is $other on $port: after the race above, the server's side starts its
# server again; status 0 once it has.
perf_restart_server() {
	local addr rport=$((port + 10000))
	grep -q "Event: RDMA_CM_EVENT_REJECTED; error: 8\\." <<< "$run_out" || return 1
	addr=$(resolve "$other")
	[ "$(ask "$addr" "$rport" 30 "$me again")" = ok ] &&
		[ "$(ask "$addr" "$rport" 30 "$me ready")" = ok ] || return 1
	show <<< "$run_out"
	echo "# the server was not listening yet: it started again, so does this client"
}

# FABRIC_PERF_TESTS: some of them only (a developer's choice, "send_lat
# read_bw"), all eight by default.
read -r -a perf_tests <<< "${FABRIC_PERF_TESTS:-write_bw write_lat read_bw read_lat send_bw send_lat atomic_bw atomic_lat}"

# What cannot pass yet (lib.sh's pending_why), "TEST/MODE CLIENT>SERVER":
# nothing at present (a part's table replaces the part before's).
pending=()

# perf_pair: every test between this guest and $other, each mode, both ways.
perf_pair() {
	local t m
	# g1 and a qhca0 on one side: not g2<->rxe0, not rxe1<->rxe0 (the
	# header says why).
	case "$me $other" in
	"g1 "*|*" g1") ;;
	*) return 0 ;;
	esac
	[ "$rdev" = qhca0 ] || [ "$odev" = qhca0 ] || return 0
	for t in "${perf_tests[@]}"; do
		for m in x R; do
			pair_both "ib_$t -$m" "$t/$m" perf_run "$t" "$m"
		done
	done
}
for_each_pair 1 perf_pair
