#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The fabric bench proves itself: run in every guest of
#
#   tools/vm --guests 2 --peer rxe -- tests/fabric/bench.sh
#
# each guest checks what tools/vm gave it (QHCA_GUEST, QHCA_GUESTS,
# QHCA_DEV, its name in /etc/hosts), that every other guest's name resolves
# to the address that guest really has and that it reaches it over IP on the
# segment, and that its RDMA device is up.  Then the rxe peer and g1 (which
# puts an rxe1 of its own on its segment NIC, for this test only) run
# ibv_rc_pingpong over RoCEv2 both ways, data checked: the segment carries
# RoCEv2 between two QEMUs, as the qhca port will need.
#
# One TAP line per check, named "GUEST: what"; tools/vm keeps these lines
# unprefixed, so tools/check counts every guest's results.  Every wait is
# bounded (FABRIC_WAIT seconds, 120 by default).
set -u
wait_s=${FABRIC_WAIT:-120}
info_port=7471
n=0 failed=0

ok() { n=$((n + 1)); echo "ok $n $QHCA_GUEST: $*"; }
not_ok() { n=$((n + 1)); failed=1; echo "not ok $n $QHCA_GUEST: $*"; }
# result WHAT: one TAP line for the status of the command just run.
result() {
	# shellcheck disable=SC2181
	if [ $? = 0 ]; then ok "$1"; else not_ok "$1"; fi
}

if [ -z "${QHCA_GUEST:-}" ]; then
	echo "1..0 # SKIP not a guest of tools/vm --guests"
	exit 4
fi

me=$QHCA_GUEST
read -r -a names <<< "${QHCA_GUESTS:-}"
others=()
for g in "${names[@]}"; do [ "$g" = "$me" ] || others+=("$g"); done
my_addr=$(ip -color=never -4 -o addr show dev "${QHCA_NETDEV:-none}" 2>/dev/null |
	awk '{ sub("/.*", "", $4); print $4; exit }')

# The address NAME resolves to through /etc/hosts.
resolve() { getent hosts "$1" | awk '{ print $1; exit }'; }

# Every guest answers "NAME ADDRESS CALLER" on $info_port: its own name and
# the address its interface has (asked of the kernel, not of /etc/hosts),
# and the address the caller came from.  It serves until every other guest
# has asked once, so that no guest powers off before its peers are done.
info_server() {
	python3 -c '
import socket, sys, time
name, addr, peers = sys.argv[1], sys.argv[2], set(sys.argv[3].split())
deadline = time.monotonic() + float(sys.argv[4])
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[5])))
s.listen(16)
seen = set()
while seen != peers and time.monotonic() < deadline:
    s.settimeout(max(0.1, deadline - time.monotonic()))
    try:
        c, (caller, _) = s.accept()
    except socket.timeout:
        break
    c.settimeout(10)
    try:
        who = c.makefile().readline().strip()
        c.sendall(("%s %s %s\n" % (name, addr, caller)).encode())
        if who in peers:
            seen.add(who)
    except OSError:
        pass
    c.close()
sys.exit(0 if seen == peers else 1)
' "$me" "$my_addr" "${others[*]}" "$wait_s" "$info_port"
}

# ask ADDR: the answer of the info server at ADDR; retried while it is not
# up yet, for at most $wait_s seconds.
ask() {
	local end=$((SECONDS + wait_s)) reply
	while [ $SECONDS -lt $end ]; do
		# shellcheck disable=SC2016
		reply=$(timeout 5 bash -c 'exec 3<>"/dev/tcp/$1/$2" && echo "$3" >&3 && head -n 1 <&3' \
			_ "$1" "$info_port" "$me" 2>/dev/null)
		[ -n "$reply" ] && { echo "$reply"; return 0; }
		sleep 0.5
	done
	return 1
}

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

# Every other guest, by name.
for g in "${others[@]}"; do
	addr=$(resolve "$g") reply=""
	[ -z "$addr" ] || reply=$(ask "$addr")
	r_name="" r_addr="" r_caller=""
	read -r r_name r_addr r_caller <<< "$reply"
	[ -n "$addr" ] && [ "$r_name" = "$g" ] && [ "$r_addr" = "$addr" ]
	result "$g resolves to ${addr:-nothing}, the address $g has (${r_addr:-no answer})"
	[ "$r_caller" = "$my_addr" ]
	result "reaches $g over IP on the segment, and $g sees it as $my_addr"
done

# gid_index DEV ADDR: the index of DEV's GID ::ffff:ADDR (RoCEv2 over IPv4),
# once ib_core has put it in the table.
gid_index() {
	local want f end=$((SECONDS + 30))
	local -a b
	IFS=. read -r -a b <<< "$2"
	want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "${b[@]}")
	while [ $SECONDS -lt $end ]; do
		for f in /sys/class/infiniband/"$1"/ports/1/gids/*; do
			[ "$(cat "$f" 2>/dev/null)" = "$want" ] && { echo "${f##*/}"; return 0; }
		done
		sleep 0.2
	done
	return 1
}

# pingpong DEV GID PORT [SERVER]: ibv_rc_pingpong with the received buffer
# checked (-c: the server checks what the client sent); a client retries
# while the server is not listening yet.  Fails on "invalid data", which
# the tool prints without failing.
pingpong() {
	local dev=$1 gid=$2 port=$3 end=$((SECONDS + wait_s)) out rc
	shift 3
	while :; do
		out=$(timeout "$wait_s" ibv_rc_pingpong -d "$dev" -g "$gid" -p "$port" -c \
			-s 4096 -n 200 "$@" 2>&1)
		rc=$?
		if [ $rc = 0 ] || [ $# = 0 ] || [ $SECONDS -ge $end ] ||
		   [[ $out != *"Couldn't connect"* ]]; then
			break
		fi
		sleep 0.5
	done
	printf '%s\n' "$out" | sed 's/^/# /'
	[ $rc = 0 ] && [[ $out != *"invalid data"* ]] && [[ $out == *"200 iters in"* ]]
}

# RoCEv2 across the segment: rxe0 on the peer, rxe1 on g1.
if [ "$me" = rxe ] || { [ "$me" = g1 ] && [[ " ${names[*]} " == *" rxe "* ]]; }; then
	if [ "$me" = g1 ]; then
		modprobe rdma_rxe && rdma link add rxe1 type rxe netdev "$QHCA_NETDEV"
		result "rdma link add rxe1 on $QHCA_NETDEV"
		rdev=rxe1 other=rxe
	else
		rdev=rxe0 other=g1
	fi
	gid=$(gid_index "$rdev" "$my_addr")
	[ -n "$gid" ]
	result "$rdev has the RoCEv2 GID ::ffff:$my_addr (index ${gid:-none})"
	# Both guests take 18515 first, then 18516: rxe serves first.
	if [ "$me" = rxe ]; then
		pingpong "$rdev" "${gid:-1}" 18515
		result "ibv_rc_pingpong $rdev <- $other: served, data checked"
		pingpong "$rdev" "${gid:-1}" 18516 "$other"
		result "ibv_rc_pingpong $rdev -> $other: client"
	else
		pingpong "$rdev" "${gid:-1}" 18515 "$other"
		result "ibv_rc_pingpong $rdev -> $other: client"
		pingpong "$rdev" "${gid:-1}" 18516
		result "ibv_rc_pingpong $rdev <- $other: served, data checked"
	fi
fi

wait "$info_pid"
result "every other guest (${others[*]}) asked this one"
echo "1..$n"
exit $failed
