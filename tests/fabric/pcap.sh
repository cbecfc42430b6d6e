#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# On the host, after tools/vm --pcap FILE: FILE is a libpcap capture of an
# Ethernet segment whose RoCEv2 frames (UDP to port 4791) are valid.
# tshark (tools/deps/host-packages installs it) dissects every one of them
# as InfiniBand, with no malformed frame and no expert error in the
# capture; roce_pcap.py beside this script checks each one's lengths, BTH
# and ICRC, which tshark 4.0 does not verify, and counts their senders.
# TAP, one line per check.
#
# Usage: tests/fabric/pcap.sh FILE [MIN_ROCE_FRAMES (1)] [MIN_SENDERS (1)]
#   MIN_SENDERS: how many distinct MACs must have sent RoCEv2 frames
set -u
file=$1 min=${2:-1} min_senders=${3:-1}
here=$(dirname "$0")
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n host: $*"; }
not_ok() { n=$((n + 1)); failed=1; echo "not ok $n host: $*"; }
# result WHAT: one TAP line for the status of the command just run.
result() {
	# shellcheck disable=SC2181
	if [ $? = 0 ]; then ok "$1"; else not_ok "$1"; fi
}

declare -A v=()
report=$(python3 "$here"/roce_pcap.py "$file" 2>&1)
rc=$?
while read -r key val rest; do
	case $key in
	"") ;;
	sender|bad|rxe_flush_icrc) echo "# $key $val $rest" ;;
	*) v[$key]=$val ;;
	esac
done <<< "$report"
frames=${v[frames]:-0} roce=${v[roce]:-0}
[ $rc = 0 ] && [ "$frames" -gt 0 ]
result "$file is an Ethernet pcap of $frames frames"
[ "$roce" -ge "$min" ]
result "$roce of its frames are RoCEv2 (UDP to port 4791), at least $min"
[ "${v[senders]:-0}" -ge "$min_senders" ]
result "${v[senders]:-0} MACs sent RoCEv2 frames, at least $min_senders"
[ $rc = 0 ] && [ "${v[bad_length]:-1}" = 0 ]
result "every RoCEv2 frame's IP and UDP lengths agree (${v[bad_length]:-?} do not)"
[ $rc = 0 ] && [ "${v[bad_bth]:-1}" = 0 ]
result "every RoCEv2 frame's BTH is version 0 with P_Key 0xffff (${v[bad_bth]:-?} are not)"
[ $rc = 0 ] && [ "${v[bad_icrc]:-1}" = 0 ]
result "every RoCEv2 frame's ICRC is right (${v[bad_icrc]:-?} are not; rxe's FLUSHes apart)"

# tshark on FILE, RoCEv2 dissected on its standard port.  The dissectors
# that guess at what any InfiniBand payload is (the ULPs: RPC over RDMA,
# iSER, NVMe over RDMA, SMB Direct, SMC-R, LNet, SDP, FCoIB; and Ethernet
# over IB) are off: the suite's payloads are test patterns, which they
# misread as their own malformed messages (a 4-byte SEND as RPCoRDMA, the
# 1-byte READ response of perftest -R as an EtherType 0x0600 frame, sent
# alike by qhca0 and rxe0); what is checked is the RoCEv2 framing, which
# they do not dissect.
tshark_r() {
	tshark -n -r "$file" -o infiniband.rroce.port:4791 \
		--disable-protocol rpcordma --disable-protocol iser \
		--disable-protocol nvme-rdma --disable-protocol smb_direct \
		--disable-protocol smc --disable-protocol lnet \
		--disable-protocol infiniband_sdp --disable-protocol fcoib \
		--disable-heuristic eth_over_ib "$@"
}
# tshark_count FILTER: how many frames of FILE match the display FILTER.
tshark_count() {
	tshark_r -Y "$1" 2>/dev/null | wc -l
}
if command -v tshark > /dev/null; then
	ib=$(tshark_count 'udp.dstport == 4791 && infiniband.bth')
	[ "$ib" = "$roce" ]
	result "tshark dissects all $roce RoCEv2 frames as InfiniBand with a BTH ($ib)"
	bad=$(tshark_count '_ws.malformed || _ws.expert.severity >= error')
	[ "$bad" = 0 ]
	result "tshark finds no malformed frame and no expert error ($bad)"
	if [ "$bad" != 0 ]; then
		tshark_r -Y '_ws.malformed || _ws.expert.severity >= error' 2>/dev/null |
			head -n 10 | sed 's/^/# /'
	fi
else
	not_ok "tshark is installed (tools/deps/host-packages installs it)"
fi
echo "1..$n"
exit $failed
