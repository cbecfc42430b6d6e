# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Part "nic" of the fabric suite (sourced by suite.sh), the last: qhca0's
# Ethernet interface as a NIC, in each qhca guest whose port is on the
# segment.  Its counters (ethtool -S) move with the frames it exchanges
# with every other guest and ethtool -i names the driver; an MTU of 9000
# and back is taken by the interface and followed by qhca0's active_mtu;
# after a reset of the PCI function (what tests/shell/fault_reset.sh does)
# the same interface is back by itself: its address, its carrier, qhca0's
# RoCE v2 GID of the address, and ping to every other guest.
#
# No partner sees the reset: every guest first meets each of its partners
# in this part (so every part before it is over on both sides), and the
# pings after the reset go to a partner only once it is past its own.

# nic_stat NAME: the interface's ethtool -S counter NAME.
nic_stat() {
	ethtool -S "$QHCA_NETDEV" 2>/dev/null | awk -v k="$1:" '$1 == k { print $2; exit }'
}

# nic_ping WHEN: 3 pings to $other over the interface, all answered.
nic_ping() {
	local out rc
	out=$(ping -c 3 -i 0.2 -W 5 -I "$QHCA_NETDEV" "$other" 2>&1)
	rc=$?
	grep -E 'transmitted' <<< "$out" | show
	[ $rc = 0 ] && [[ $out == *" 3 received"* ]]
	result "${1}ping $other over $QHCA_NETDEV: 3 of 3 answered"
}

# The counters before and after pinging $other: each way at least the 3
# echoes, counted by the NIC itself (an rxe guest's interface is not a
# qhca one and just answers).
nic_counts_pair() {
	local tx rx tx2 rx2
	[ "$nic" = 1 ] || return 0
	tx=$(nic_stat tx_packets) rx=$(nic_stat rx_packets)
	nic_ping ""
	tx2=$(nic_stat tx_packets) rx2=$(nic_stat rx_packets)
	[ -n "$tx" ] && [ -n "$tx2" ] && [ $((tx2 - tx)) -ge 3 ] &&
		[ -n "$rx" ] && [ -n "$rx2" ] && [ $((rx2 - rx)) -ge 3 ]
	result "ethtool -S $QHCA_NETDEV: tx_packets ${tx:-?} -> ${tx2:-?}, rx_packets ${rx:-?} -> ${rx2:-?} with the pings to $other"
}

nic_after_pair() {
	nic_ping "after every reset of this part: "
}

# nic_active_mtu: qhca0's active_mtu in bytes, as ibv_devinfo says it.
nic_active_mtu() {
	ibv_devinfo -d qhca0 2>/dev/null |
		awk '$1 == "active_mtu:" { print $2; exit }'
}

# nic_wait_active: qhca0 is back and its port ACTIVE, within $wait_s.
nic_wait_active() {
	local end=$((SECONDS + wait_s))
	while [ $SECONDS -lt $end ]; do
		ibv_devinfo -d qhca0 2>/dev/null | grep -q PORT_ACTIVE && return 0
		sleep 0.2
	done
	return 1
}

# nic_set_mtu MTU IBMTU: the interface takes MTU and qhca0's active_mtu
# becomes IBMTU (the largest IB MTU whose RoCEv2 frames fit it).
nic_set_mtu() {
	local got
	ip link set dev "$QHCA_NETDEV" mtu "$1" &&
		[ "$(cat "/sys/class/net/$QHCA_NETDEV/mtu")" = "$1" ]
	result "ip link set $QHCA_NETDEV mtu $1"
	got=$(nic_active_mtu)
	[ "$got" = "$2" ]
	result "MTU $1: qhca0's active_mtu is $2 (${got:-none})"
}

nic=0
[ "$rdev" = qhca0 ] && [ "$wire" = eth ] && nic=1

# Every partner is here: nothing before this part runs on either side.
for_each_pair 7 nic_counts_pair

if [ "$nic" = 1 ]; then
	drv=$(ethtool -i "$QHCA_NETDEV" 2>&1)
	show <<< "$drv"
	bus=$(basename "$(readlink -f /sys/class/infiniband/qhca0/device)")
	grep -qx 'driver: qhca' <<< "$drv" && grep -qx "bus-info: $bus" <<< "$drv"
	result "ethtool -i $QHCA_NETDEV: driver qhca, bus-info $bus (qhca0's)"

	mtu0=$(cat "/sys/class/net/$QHCA_NETDEV/mtu")
	nic_set_mtu 9000 "4096"
	nic_set_mtu "$mtu0" "1024"

	# The same net_device after the reset, not a new one with its name.
	ifindex=$(cat "/sys/class/net/$QHCA_NETDEV/ifindex")
	reset=$(readlink -f /sys/class/infiniband/qhca0/device)/reset
	timeout 60 sh -c "echo 1 > $reset"
	result "function reset through $reset"
	nic_wait_active
	result "qhca0 back and ACTIVE after the reset"
	[ "$(cat "/sys/class/net/$QHCA_NETDEV/ifindex" 2>/dev/null)" = "$ifindex" ]
	result "$QHCA_NETDEV is the same interface (ifindex $ifindex)"
	ip -4 -o addr show dev "$QHCA_NETDEV" | show
	[ "$(ip -color=never -4 -o addr show dev "$QHCA_NETDEV" |
		awk '{ sub("/.*", "", $4); print $4; exit }')" = "$my_addr" ]
	result "$QHCA_NETDEV has $my_addr again, by itself"
	[ "$(cat "/sys/class/net/$QHCA_NETDEV/mtu")" = "$mtu0" ] &&
		[ "$(cat "/sys/class/net/$QHCA_NETDEV/operstate")" = up ]
	result "$QHCA_NETDEV: MTU $mtu0 and operstate up after the reset"
	got=$(gid_index qhca0 "$QHCA_NETDEV" "$my_addr")
	[ -n "$got" ]
	result "qhca0's RoCE v2 GID ::ffff:$my_addr on $QHCA_NETDEV is back (index ${got:-none})"
fi

# Each partner is past its reset too.
for_each_pair 8 nic_after_pair
