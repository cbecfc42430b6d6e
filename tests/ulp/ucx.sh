# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Part "ucx" of the ulp suite (sourced by suite.sh): UCX on qhca0.  Every
# guest: ucx_info -d lists qhca0:1 with the verbs transports UCX has for a
# device that is not Mellanox's (rc_verbs, ud_verbs; rc_mlx5 and dc_mlx5
# need mlx5dv and are not expected).  Every pair: ucx_perftest, the lower
# guest serving, over UCP: tag matching latency (8 B, eager) and
# bandwidth (1 MiB, rendezvous) and RMA put and get, UCX held to qhca0's
# RC, connected over TCP on qhca0's net_device (lib.sh's ucx_tls_used),
# and qhca0's RoCE byte counters must grow by what the runs move.
# ucx_perftest does not check the data it moves; the mpi part's program
# does, over the same transports.

ucx_env=("UCX_NET_DEVICES=$ucx_net_devices" "UCX_TLS=$ucx_tls_used")
# ucp_put_bw and ucp_get each move 12.5 MiB (200 x 64 KiB), one each way,
# tag_bw 20 MiB more from the client: less than 8 MiB either way on qhca0
# means the data went elsewhere.
ucx_min_bytes=$((8 << 20))

# ucx_tls: the transports ucx_info -d lists for qhca0:1.
ucx_tls() {
	timeout "$wait_s" ucx_info -d 2>&1 | awk -v d="$rdev:1" '
		$2 == "Transport:" { t = $3 }
		$2 == "Device:" && $3 == d { print t }' | sort -u | xargs
}

# ucx_run TEST SIZE ITERS PORT [SERVER]: one ucx_perftest run of TEST as
# the server, or as SERVER's client.  ucx_perftest serves one test a run;
# its client prints the "Final:" line of a complete run.
ucx_run() {
	local t=$1 s=$2 n=$3 port=$4
	if [ $# = 4 ]; then
		run_done 0 "" "" env "${ucx_env[@]}" ucx_perftest -P 0 -p "$port"
	else
		run_done 1 "Connection refused" "^Final:" env "${ucx_env[@]}" \
			ucx_perftest -P 0 "$(resolve "$5")" -p "$port" -t "$t" -s "$s" -n "$n" -w 10
	fi
}

# What every pair runs: test, message size, iterations.
ucx_tests=(
	"tag_lat 8 200"
	"tag_bw 1048576 20"
	"ucp_put_bw 65536 200"
	"ucp_get 65536 200"
)
# shellcheck disable=SC2034 # read by lib.sh's pending_why
pending=()

ucx_pair() {
	local before t tx rx
	before=$(res_now) tx=$(roce_bytes tx_bytes) rx=$(roce_bytes rx_bytes)
	for t in "${ucx_tests[@]}"; do
		read -r -a t <<< "$t"
		pair_k=$((pair_k + 1))
		pair_run "$pair_k" 1 "ucx_perftest -t ${t[0]} -s ${t[1]}" "${t[0]}" ucx_run "${t[@]}"
	done
	roce_grew "ucx: ucx_perftest's runs" "$tx" "$rx" "$ucx_min_bytes"
	res_back "ucx" "$before"
	dmesg_clean "ucx"
}

ucx_have=$(ucx_tls)
echo "# ucx_info -d: $rdev:1 has ${ucx_have:-no transport}"
[[ " $ucx_have " == *" rc_verbs "* ]] && [[ " $ucx_have " == *" ud_verbs "* ]]
result "ucx: ucx_info -d lists $rdev:1 with rc_verbs and ud_verbs (${ucx_have:-none})"
for_each_pair 1 ucx_pair
