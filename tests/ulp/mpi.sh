# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Part "mpi" of the ulp suite (sourced by suite.sh): Open MPI 5 over UCX on
# qhca0, running our own MPI program (mpi_check.py): send/recv, allreduce,
# one-sided put/get and atomics, every byte checked.  Two runs when the
# segment has three qhca guests or more (make check's): one rank in every
# one of them, then one in each of the first two alone; with two guests,
# the one run of two ranks.  Three ranks first, so that g3, in no other
# part, is done early.
#
# How mpirun reaches the other guests: Open MPI 5's launcher (PRRTE, plm
# "ssh") starts one prted in every other host with "AGENT HOST COMMAND".
# The guests have ssh but no sshd, so the agent is mpi_rsh.py: the first
# guest (g1) runs mpirun with plm_ssh_agent pointing at it, and every other
# guest serves it on the segment's TCP before they meet.  PRRTE's own
# traffic (prted to mpirun, the PMIx exchange of UCX's addresses) stays on
# TCP, as it does with ssh; MPI's data does not: the run is held to UCX
# (--mca pml ucx, osc ucx, btl self alone) on qhca0's RC, with TCP on
# qhca0's net_device to connect it (lib.sh's ucx_tls_used; no shared
# memory: one rank a guest), and each guest checks that qhca0's RoCE byte
# counters grew by at least what mpi_check.py sends and receives there.

mpi_port=20000		# part 0's range (lib.sh's for_each_pair)
# mpi_check.py moves more than 2 MiB each way in every guest (1 MiB
# messages, Put and Get of 1 MiB): less on qhca0 means it went elsewhere.
mpi_min_bytes=$((2 << 20))
mpi_all=()
for g in "${seg_guests[@]}"; do
	[ "$(seg_dev "$g")" != qhca0 ] || mpi_all+=("$g")
done
# One run's guests, the name of its results, its ports (mpi_use).
mpi_hosts=() mpi_tag="" mpi_base=0 mpi_rsh_port=0

# mpi_use N: the next run has a rank in each of the first N guests.
mpi_use() {
	mpi_hosts=("${mpi_all[@]:0:$1}")
	mpi_tag="mpi ($1 ranks)"
	mpi_base=$((mpi_port + 10 * $1))
	mpi_rsh_port=$((mpi_port + 900 + $1))
}

mpi_run() {
	local before tx rx i g c line out rc hosts=""
	before=$(res_now) tx=$(roce_bytes tx_bytes) rx=$(roce_bytes rx_bytes)
	for ((i = 1; i < ${#mpi_hosts[@]}; i++)); do
		barrier $((mpi_base + i)) "${mpi_hosts[i]}" 1 ||
			not_ok "$mpi_tag: ${mpi_hosts[i]} is ready to serve mpirun within ${arrive_s}s"
	done
	for g in "${mpi_hosts[@]}"; do hosts+=${hosts:+,}$g:1; done
	out=$(QHCA_MPI_RSH_PORT=$mpi_rsh_port timeout -s KILL 180 \
		mpirun --allow-run-as-root --host "$hosts" -np ${#mpi_hosts[@]} \
		--mca plm_ssh_agent "$here"/mpi_rsh.py --mca plm_ssh_no_tree_spawn 1 \
		--mca pml ucx --mca osc ucx --mca btl self \
		-x UCX_NET_DEVICES="$ucx_net_devices" -x UCX_TLS="$ucx_tls_used" \
		python3 "$here"/mpi_check.py 2>&1 | tr -d '\0'
		exit "${PIPESTATUS[0]}")
	rc=$?
	show <<< "$out"
	[ $rc = 0 ]
	result "$mpi_tag: mpirun of mpi_check.py on $hosts over UCX ($rdev:1) exits 0"
	for c in ranks send/recv allreduce "one-sided put/get" atomics; do
		line=$(sed -n "s|^mpi_check: $c: ||p" <<< "$out" | head -n 1)
		[[ $line == "ok "* ]]
		result "$mpi_tag: $c: ${line:-no result}"
	done
	# Every other guest's agent ends its server; one whose prted still
	# runs ends it there (mpi_rsh.py serve).
	for ((i = 1; i < ${#mpi_hosts[@]}; i++)); do
		QHCA_MPI_RSH_PORT=$mpi_rsh_port timeout 30 "$here"/mpi_rsh.py "${mpi_hosts[i]}" "done"
	done
	roce_grew "$mpi_tag: mpirun's ranks" "$tx" "$rx" "$mpi_min_bytes"
	res_back "$mpi_tag" "$before"
	dmesg_clean "$mpi_tag"
}

mpi_serve() {
	local before tx rx pid i
	before=$(res_now) tx=$(roce_bytes tx_bytes) rx=$(roce_bytes rx_bytes)
	"$here"/mpi_rsh.py serve "$mpi_rsh_port" "${mpi_hosts[0]}" "$((arrive_s + 200))" &
	pid=$!
	# The barrier below lets mpirun start, and its agent connects at once:
	# the server must listen by then.  Python starts slowly under TCG, and
	# a barrier passed before the listen once had the agent refused
	# (ECONNREFUSED) and mpirun give up on this guest's daemon.
	listens "$mpi_rsh_port" "$pid" "$arrive_s" ||
		not_ok "$mpi_tag: the agent's server here listens on port $mpi_rsh_port within ${arrive_s}s"
	for ((i = 1; i < ${#mpi_hosts[@]}; i++)); do
		[ "${mpi_hosts[i]}" = "$me" ] || continue
		barrier $((mpi_base + i)) "${mpi_hosts[0]}" 0 ||
			not_ok "$mpi_tag: ${mpi_hosts[0]} came to run mpirun within ${arrive_s}s"
	done
	wait "$pid"
	result "$mpi_tag: served mpirun's daemon for ${mpi_hosts[0]}; it ended by itself"
	roce_grew "$mpi_tag: the rank here" "$tx" "$rx" "$mpi_min_bytes"
	res_back "$mpi_tag" "$before"
	dmesg_clean "$mpi_tag"
}

mpi_sizes=(${#mpi_all[@]})
[ ${#mpi_all[@]} -le 2 ] || mpi_sizes+=(2)
if [ "$rdev" = qhca0 ] && [ ${#mpi_all[@]} -ge 2 ]; then
	for size in "${mpi_sizes[@]}"; do
		mpi_use "$size"
		if [ "$me" = "${mpi_hosts[0]}" ]; then
			mpi_run
		elif [[ " ${mpi_hosts[*]} " == *" $me "* ]]; then
			mpi_serve
		fi
	done
fi
