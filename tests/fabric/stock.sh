# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Part "stock" of the fabric suite (sourced by suite.sh): every pair of
# guests runs the stock tools between them, each tool once with either
# guest serving, over the RoCEv2 GID of their IPv4 address (found in the
# GID table, never guessed), data checked where the tool can (-c).


# run_tool TOOL PORT [SERVER]: one stock tool's run as the server (no
# SERVER) or as SERVER's client, on $rdev and $gid, output as diagnostics;
# a client retries while the server is not listening yet.  Fails unless
# the tool exits 0 and prints what a complete run prints; a pingpong's
# "invalid data" (-c: the received buffer is checked) fails it too, as the
# tool itself does not.
run_tool() {
	local tool=$1 port=$2 done_re
	local retry_re="Couldn't connect"
	local -a cmd
	shift 2
	local client=$(($# > 0))
	if [ -z "$gid" ]; then
		echo "# $rdev has no RoCE v2 GID of its address to run on"
		return 1
	fi
	case $tool in
	rc|uc|srq)
		cmd=(ibv_"$tool"_pingpong -d "$rdev" -g "$gid" -p "$port" -c -s 4096 -n 100)
		done_re="100 iters in" ;;
	xsrq)
		# XRC: a send QP, a receive QP and an SRQ on each side; the tool
		# has no data check (no -c).
		cmd=(ibv_xsrq_pingpong -d "$rdev" -g "$gid" -p "$port" -s 4096 -n 100)
		done_re="^success$" ;;
	ud)
		# One message must fit one packet of the port's MTU (1024 on a
		# 1500-byte Ethernet MTU).
		cmd=(ibv_ud_pingpong -d "$rdev" -g "$gid" -p "$port" -c -s 512 -n 100)
		done_re="100 iters in" ;;
	write_bw)
		cmd=(ib_write_bw -d "$rdev" -x "$gid" -p "$port" -F -s 65536 -n 200)
		done_re="^ *65536 +200 " ;;
	# rdma_cm (QP1 and the CM on each side): the server listens on its
	# address, the client resolves the server's; the device follows from
	# the address.  A client that finds no listener yet is rejected.
	rping)
		retry_re="REJECTED|UNREACHABLE|ADDR_ERROR"
		if [ $# = 0 ]; then
			cmd=(rping -s -a "$my_addr" -p "$port" -C 10 -S 512 -V -v)
		else
			cmd=(rping -c -a "$(resolve "$1")" -p "$port" -C 10 -S 512 -V -v)
			shift
		fi
		done_re="ping data: rdma-ping-9" ;;
	ucmatose)
		retry_re="REJECTED|UNREACHABLE|ADDR_ERROR"
		if [ $# = 0 ]; then
			cmd=(ucmatose -b "$my_addr" -p "$port" -C 10)
		else
			cmd=(ucmatose -s "$(resolve "$1")" -p "$port" -C 10)
			shift
		fi
		done_re="return status 0" ;;
	*)
		echo "# run_tool: unknown tool $tool"
		return 1 ;;
	esac
	run_done "$client" "$retry_re" "$done_re" "${cmd[@]}" "$@" &&
		[[ $run_out != *"invalid data"* ]]
}

# What every pair runs, in this order, each tool with the lower guest of
# the pair serving first.
tools=(rc uc ud srq xsrq write_bw rping ucmatose)
declare -A tool_name=(
	[rc]="ibv_rc_pingpong -c" [uc]="ibv_uc_pingpong -c"
	[ud]="ibv_ud_pingpong -c" [srq]="ibv_srq_pingpong -c"
	[xsrq]="ibv_xsrq_pingpong"
	[write_bw]="ib_write_bw -x" [rping]="rping -V" [ucmatose]="ucmatose"
)

# What cannot pass yet (lib.sh's pending_why).
pending=(
	# Not qhca's to fix: rxe has no XRC domains (these stay while it has none).
	["xsrq rxe?>*"]="rxe has no XRC: ibv_open_xrcd fails with EOPNOTSUPP on rxe"
	["xsrq *>rxe?"]="rxe has no XRC: ibv_open_xrcd fails with EOPNOTSUPP on rxe"
)

# stock_pair: every tool between this guest and $other, both ways.
stock_pair() {
	local t
	for t in "${tools[@]}"; do
		pair_both "${tool_name[$t]}" "$t" run_tool "$t"
	done
}
for_each_pair 0 stock_pair
