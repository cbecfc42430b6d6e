#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The fabric suite, run in every guest of a segment at once:
#
#   tools/vm --guests 2 --peer rxe -- tests/fabric/suite.sh
#       qhca<->qhca (g1, g2) and qhca<->rxe, each pair both ways
#   tools/vm --guests 1 --peer rxe --wire loopback -- tests/fabric/suite.sh
#       rxe<->rxe: g1 puts an rxe1 of its own on its virtio-net, the
#       reference the qhca pairs are held to
#
# Each guest checks what tools/vm gave it (QHCA_GUEST, QHCA_GUESTS,
# QHCA_DEV, its name in /etc/hosts), that every other guest's name resolves
# to the address that guest really has, that it reaches it over IP (TCP and
# ping) on the segment, and that its RDMA device is up; a qhca guest whose
# port is on the segment (QHCA_WIRE=eth), that qhca0 is bound to the
# segment's interface and its link layer is Ethernet.  Then the parts run
# in turn (FABRIC_PARTS, default all, in this order), each over every pair
# of guests with an RDMA device on the segment:
#
#   stock     the stock verbs and rdma_cm tools (stock.sh)
#   perftest  the eight perftest RC tests, -x and -R (perftest.sh)
#   cm        udaddy, mckey, rdma_server/rdma_client (cm.sh)
#   rc_wire   the RC data checks across the wire: every opcode, the error
#             statuses, RNR, loss, 64 QPs, a killed peer (rc_wire.sh)
#   nic       qhca0's interface as a NIC: ethtool, MTU 9000 and back, and
#             a function reset it comes back from by itself (nic.sh)
#   guest_kill  g2's QEMU killed while g1 streams to it: RETRY_EXC_ERR
#             within a bound, the QP in ERR, no hang (guest_kill.sh); last
#
# The guests stay up until every one is done (the info server of lib.sh).
set -u
here=$(dirname "$(readlink -f "$0")")
# shellcheck source=tests/fabric/lib.sh
. "$here"/lib.sh
all_parts=(stock perftest cm rc_wire nic guest_kill)
read -r -a parts <<< "${FABRIC_PARTS:-${all_parts[*]}}"

if [ -z "$me" ]; then
	echo "1..0 # SKIP not a guest of tools/vm --guests"
	exit 4
fi


info_server > /tmp/fabric-info.log 2>&1 &
info_pid=$!

# What tools/vm gave this guest.
gs=()
for g in "${names[@]}"; do [[ $g == g[0-9]* ]] && gs+=("$g"); done
want=()
for i in $(seq ${#gs[@]}); do want+=("g$i"); done
[[ " ${names[*]} " == *" rxe "* ]] && want+=(rxe)
[ "${names[*]}" = "${want[*]}" ]
result "QHCA_GUESTS is g1..gN and the peer (${names[*]})"
[[ " ${names[*]} " == *" $me "* ]] && [ "$(hostname)" = "$me" ]
result "QHCA_GUEST $me is one of them and the host name"
case $me in
rxe) dev=rxe0 ;;
*) dev=qhca0 ;;
esac
[ "${QHCA_DEV:-}" = "$dev" ]
result "QHCA_DEV is $dev"
[[ $my_addr == 10.0.0.* ]]
result "QHCA_NETDEV ${QHCA_NETDEV:-} has an address on the segment ($my_addr)"
[ "$(resolve "$me")" = "$my_addr" ]
result "$me resolves to its own address"
ibv_devinfo -d "$dev" | grep -q PORT_ACTIVE
result "ibv_devinfo -d $dev: the port is ACTIVE"

# qhca0's port on the segment: bound to the interface, an Ethernet port.
if [ "$dev" = qhca0 ] && [ "$wire" = eth ]; then
	link=$(rdma link show qhca0/1 2>&1)
	show <<< "$link"
	[[ " $link " == *" netdev ${QHCA_NETDEV:-none} "* ]]
	result "rdma link: qhca0/1 is bound to netdev ${QHCA_NETDEV:-none}"
	info=$(ibv_devinfo -d qhca0 2>&1)
	grep -E 'link_layer|transport|active_mtu' <<< "$info" | show
	grep -qE '^[[:space:]]*link_layer:[[:space:]]*Ethernet$' <<< "$info"
	result "ibv_devinfo -d qhca0: link_layer Ethernet"
fi

# Every other guest, by name.
for g in "${others[@]}"; do
	addr=$(resolve "$g") reply=""
	[ -z "$addr" ] || reply=$(ask "$addr" "$info_port")
	r_name="" r_addr="" r_caller=""
	read -r r_name r_addr r_caller <<< "$reply"
	[ -n "$addr" ] && [ "$r_name" = "$g" ] && [ "$r_addr" = "$addr" ]
	result "$g resolves to ${addr:-nothing}, the address $g has (${r_addr:-no answer})"
	[ "$r_caller" = "$my_addr" ]
	result "reaches $g over IP on the segment, and $g sees it as $my_addr"
	out=$(ping -c 3 -i 0.5 -W 5 -I "${QHCA_NETDEV:-none}" "$g" 2>&1)
	rc=$?
	grep -E 'transmitted|rtt' <<< "$out" | show
	[ $rc = 0 ] && [[ $out == *" 3 received"* ]]
	result "ping $g over ${QHCA_NETDEV:-none}: 3 of 3 answered"
done
if [ "$rdev" = rxe1 ]; then
	modprobe rdma_rxe && rdma link add rxe1 type rxe netdev "$QHCA_NETDEV"
	result "rdma link add rxe1 on $QHCA_NETDEV"
fi
if [ -n "$rdev" ]; then
	gid=$(gid_index "$rdev" "${QHCA_NETDEV:-none}" "$my_addr")
	[ -n "$gid" ]
	result "$rdev has the RoCE v2 GID ::ffff:$my_addr on ${QHCA_NETDEV:-none} (index ${gid:-none})"
	# The table as ibv_devinfo -v shows it, for the log.
	ibv_devinfo -v -d "$rdev" | grep -E 'GID\[' | show
fi

for part in "${parts[@]}"; do
	# shellcheck source=/dev/null
	. "$here/$part.sh"
done

# Done: tell every other guest, then wait until all of them are.
for g in "${others[@]}"; do
	ask "$(resolve "$g")" "$info_port" "$arrive_s" "$me done" > /dev/null
	result "told $g this guest is done"
done
wait "$info_pid"
result "every other guest (${others[*]}) asked this one and is done"
echo "1..$n"
exit $failed
