# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash disable=SC2154
# (SC2154: here, rdev, other, odev, lower, arrive_s come from suite.sh and
# lib.sh, which source this part.)
#
# Part "rc_wire" of the fabric suite (sourced by suite.sh): the RC data
# checks across the wire, tests/fabric/rc_wire.c, between every pair of
# guests, each guest serving once (the server is the responder, the
# connecting guest the requester).  One TAP line per sub-test and side:
#
#   send send_imm write write_imm read atomic send_inv
#                   every RC opcode, at 1, 1024, 5000 and 65536 bytes for
#                   the SENDs, WRITEs and READs (PSNs crossing the 24-bit
#                   wrap), data checked byte for byte where it lands and
#                   nothing written beside it, immediates, atomic results
#                   and the invalidated key checked
#   bad_rkey oob rnr0
#                   REM_ACCESS_ERR for a wrong rkey and for both ends of
#                   the MR, RNR_RETRY_EXC_ERR with rnr_retry 0, the
#                   responder's memory untouched
#   rnr_late        rnr_retry 7: the receive posted once the responder's
#                   device has sent an RNR NAK, the SEND completes
#   qp64            64 RC QPs streaming at once, WRITEs, SENDs and READs,
#                   every QP's data and completion order checked
#   atomic_write atomic_write_bad flush
#                   IBA 1.5: ATOMIC_WRITEs land whole and nothing beside
#                   them, a misaligned one is REM_INV_REQ_ERR; a WRITE and
#                   FLUSHes of its range and of the whole MR complete in
#                   order, the WRITE in place
#   loss link       only where the requester is qhca0 (its fault injector,
#                   its hw counters): "drop N" before a WRITE, an atomic, a
#                   READ and a SEND, each completes intact and wire_drops
#                   and retries count it; link_down with a WRITE in
#                   flight, link_up, the WRITE completes
#   loss_ack        only where the responder is qhca0: its device drops
#                   its ACK, atomic response and READ response packets;
#                   the requester retransmits and the duplicates are
#                   answered from the responder's state (the fetch-and-add
#                   executed once)
#   kill            last: the responder's process dies by SIGKILL with
#                   WRITEs in flight; the requester gets RETRY_EXC_ERR
#                   (timeout 12, retry_cnt 3) within 15 s, its QP in ERR
#
# The link test takes the port down with the device's own injector
# (link_down: the device's wire drops every packet), not the backend's
# link (QMP set_link, which the guest cannot reach) nor "ip link set down"
# (the guest's interface only, not the wire).

rc_wire_bin=$here/../../build/tests/drivers/infiniband/qhca/rc_wire
# One run of rc_wire, all its sub-tests: each wait inside is bounded (60 s
# for a line of its control channel, 20 s for a completion).
rc_wire_wait=${FABRIC_RC_WIRE_WAIT:-300}

# What cannot pass yet (lib.sh's pending_why): "rc_wire:TEST REQ>RESP",
# each with why; tests/expected-skips lists the same runs.
# shellcheck disable=SC2034
pending=(
	["rc_wire:flush qhca[0-9]>rxe[0-9]"]="Linux 6.12's rxe computes a FLUSH's ICRC over its BTH, FETH and RETH twice (rxe_opcode.c gives IB_OPCODE_RC_FLUSH no RXE_PAYLOAD offset) and drops qhca's FLUSH, whose ICRC is the IBA's; qhca takes rxe's (qhca-ethernet.rst), so rxe -> qhca runs"
	["rc_wire:send_inv *>rxe[0-9]"]="rxe's receive completion of a SEND_WITH_INV carries the kernel's IB_WC_WITH_INVALIDATE (1<<2), which its provider copies as is and libibverbs reads as IBV_WC_IP_CSUM_OK: IBV_WC_WITH_INV (1<<3) is never set (the invalidated rkey itself is right)"
)

# rc_wire_tests REQUESTER_DEV RESPONDER_DEV: the sub-tests of one run.
rc_wire_tests() {
	local t
	local -a list=(send send_imm write write_imm read atomic send_inv
		       bad_rkey oob rnr0 rnr_late qp64 atomic_write
		       atomic_write_bad flush)
	[[ $1 != qhca* ]] || list+=(loss link)
	[[ $2 != qhca* ]] || list+=(loss_ack)
	list+=(kill)
	for t in "${list[@]}"; do
		[ -n "$(pending_why "rc_wire:$t" "$1" "$2")" ] || echo "$t"
	done
}

# rc_wire_run SERVE PORT: one run, as the responder (SERVE=1) or as the
# requester, its TAP lines given again as this suite's.
rc_wire_run() {
	local serve=$1 port=$2 req_dev resp_dev what out rc line got=0 want t why
	local -a cmd tests
	if [ "$serve" = 1 ]; then
		req_dev=$odev resp_dev=$rdev what="$rdev <- $other ($odev): responder"
	else
		req_dev=$rdev resp_dev=$odev what="$rdev -> $other ($odev): requester"
	fi
	mapfile -t tests < <(rc_wire_tests "$req_dev" "$resp_dev")
	for t in send send_imm write write_imm read atomic send_inv bad_rkey \
		 oob rnr0 rnr_late qp64 atomic_write atomic_write_bad flush \
		 loss link loss_ack kill; do
		why=$(pending_why "rc_wire:$t" "$req_dev" "$resp_dev")
		[ -z "$why" ] || skip "rc_wire $t $what" "$why"
	done
	if [ -z "$gid" ]; then
		not_ok "rc_wire $what: $rdev has no RoCE v2 GID of its address to run on"
		return
	fi
	cmd=("$rc_wire_bin" -d "$rdev" -g "$gid" -p "$port")
	if [ "$serve" = 1 ]; then
		cmd+=(--serve)
	else
		cmd+=(--connect "$other" "${tests[@]}")
	fi
	out=$(timeout "$rc_wire_wait" "${cmd[@]}" 2>&1)
	rc=$?
	while IFS= read -r line; do
		if [[ $line =~ ^(not\ ok|ok)\ [0-9]+\ ([a-z0-9_]+):\ (requester|responder)(\ #\ SKIP\ (.*))?$ ]]; then
			got=$((got + 1))
			if [ -n "${BASH_REMATCH[4]}" ]; then
				skip "rc_wire ${BASH_REMATCH[2]} $what" "${BASH_REMATCH[5]}"
			elif [ "${BASH_REMATCH[1]}" = ok ]; then
				ok "rc_wire ${BASH_REMATCH[2]} $what"
			else
				not_ok "rc_wire ${BASH_REMATCH[2]} $what"
			fi
		else
			show <<< "$line"
		fi
	done <<< "$out"
	# Every sub-test has its line, and the status is what they say; the
	# responder's process dies in kill (128 + SIGKILL) and cannot say so.
	want=${#tests[@]}
	if [ "$serve" = 1 ] && [ "${tests[*]: -1}" = kill ]; then
		want=$((want - 1))
		[ $rc = 137 ]
		result "rc_wire kill $what: killed by SIGKILL mid-stream (status $rc)"
	elif [ $rc != 0 ] && [[ $out != *"not ok "* ]]; then
		not_ok "rc_wire $what: exited with status $rc and no failure reported"
	fi
	[ "$got" = "$want" ]
	result "rc_wire $what: $got of $want sub-tests reported"
}

# rc_wire_pair: both runs between this guest and $other.  A pair without
# qhca0 (rxe<->rxe, the loopback layout) checks rxe alone: not run, to
# keep make check's time, unless FABRIC_RC_WIRE_RXE=1 (by hand:
# tools/vm --guests 1 --peer rxe --wire loopback -- env
# FABRIC_PARTS=rc_wire FABRIC_RC_WIRE_RXE=1 tests/fabric/suite.sh).
rc_wire_pair() {
	local serve k=0 start
	if [[ $rdev != qhca* ]] && [[ $odev != qhca* ]] &&
	   [ "${FABRIC_RC_WIRE_RXE:-0}" != 1 ]; then
		return
	fi
	if [[ $rdev == qhca* ]]; then
		mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
	fi
	# The lower guest serves first, then the other.
	for serve in 1 0; do
		k=$((k + 1))
		if ! pair_barrier "$k"; then
			not_ok "rc_wire $rdev/$other ($odev): $other did not come within ${arrive_s}s"
			continue
		fi
		start=$SECONDS
		if [ "$serve" = "$lower" ]; then
			rc_wire_run 1 "$(pair_port "$k")"
		else
			rc_wire_run 0 "$(pair_port "$k")"
		fi
		echo "# rc_wire $rdev/$other ($odev): the run took $((SECONDS - start)) s"
	done
}
for_each_pair 9 rc_wire_pair
