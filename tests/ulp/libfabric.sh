# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Part "libfabric" of the ulp suite (sourced by suite.sh): libfabric's
# verbs provider on qhca0.  Every guest: fi_info -p verbs lists the domain
# qhca0 with connected endpoints (FI_EP_MSG) and, through the ofi_rxm
# utility provider, reliable datagram ones (FI_EP_RDM).  Every pair:
# fi_pingpong over a verbs msg endpoint (rdma_cm's RC connection) and
# over verbs;ofi_rxm rdm, 4 KiB (one guest serving) and 1 MiB (the other)
# messages (ofi_rxm's eager and rendezvous protocols), with its data
# integrity check (-c: every message's bytes are compared with the
# pattern the peer wrote).  The server binds its address on the segment
# (-s), which is how the verbs provider finds the device.
#
# ofi_rxm sizes its verbs CQ for every peer it may have, FI_UNIVERSE_SIZE
# (256 by default): more entries than qhca0's (and rxe's) 32768, so
# ibv_create_cq refuses it and fi_enable fails with EINVAL (128 fits;
# libfabric's verbs provider does not split a CQ that big).  The runs
# here have one peer: FI_UNIVERSE_SIZE says so.

declare -A fi_prov=([msg]=verbs [rdm]="verbs;ofi_rxm")

# fi_domains PROV TYPE: the domains fi_info lists for provider PROV with
# endpoint type TYPE.
fi_domains() {
	timeout "$wait_s" fi_info -p "$1" -t "$2" 2>&1 |
		awk '$1 == "domain:" { print $2 }' | sort -u | xargs
}

# fi_run EP SIZE PORT [SERVER]: one fi_pingpong run over endpoint type EP,
# 10 round trips of SIZE bytes, as the server (its control port PORT) or
# as SERVER's client.  Both sides print the results row of a complete run
# ("1m  10  =10 ...": size, sent, acknowledged).
fi_run() {
	local ep=$1 size=$2 port=$3 done_re="^[0-9.]+[km]? +10 +=10 "
	local -a cmd=(env FI_UNIVERSE_SIZE=2 fi_pingpong -p "${fi_prov[$ep]}" -e "$ep"
		-c -I 10 -S "$size")
	if [ $# = 3 ]; then
		run_done 0 "" "$done_re" "${cmd[@]}" -s "$my_addr" -B "$port"
	else
		run_done 1 "Connection refused" "$done_re" "${cmd[@]}" -P "$port" "$(resolve "$4")"
	fi
}
# shellcheck disable=SC2034 # read by lib.sh's pending_why
pending=()

fi_pair() {
	local before ep size
	before=$(res_now)
	# Each size once, each guest serving one of them.
	for ep in msg rdm; do
		for size in 4096 1048576; do
			pair_k=$((pair_k + 1))
			pair_run "$pair_k" $((pair_k % 2)) "fi_pingpong -p '${fi_prov[$ep]}' -e $ep -c -S $size" \
				"fi_$ep" fi_run "$ep" "$size"
		done
	done
	res_back "libfabric" "$before"
	dmesg_clean "libfabric"
}

fi_have=$(fi_domains verbs FI_EP_MSG)
[[ " $fi_have " == *" $rdev "* ]]
result "libfabric: fi_info -p verbs -t FI_EP_MSG lists domain $rdev (${fi_have:-none})"
fi_have=$(fi_domains "verbs;ofi_rxm" FI_EP_RDM)
[[ " $fi_have " == *" $rdev "* ]]
result "libfabric: fi_info -p 'verbs;ofi_rxm' -t FI_EP_RDM lists domain $rdev (${fi_have:-none})"
for_each_pair 2 fi_pair
