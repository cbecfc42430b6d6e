# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# What every part of the fabric suite (tests/fabric/suite.sh) shares,
# sourced once by suite.sh in a guest of tools/vm --guests: TAP lines,
# names and addresses of the segment's guests, bounded waits on another
# guest, the RDMA device and RoCE v2 GID each guest has on the segment, and
# the walk over the pairs of guests.
#
# One TAP line per check, named "GUEST: what"; tools/vm keeps these lines
# unprefixed, so tools/check counts every guest's results.  Every wait is
# bounded: FABRIC_WAIT seconds (60) for one tool run or an answer,
# FABRIC_ARRIVE (900) for a partner to finish its earlier pairs.
wait_s=${FABRIC_WAIT:-60}
arrive_s=${FABRIC_ARRIVE:-900}
info_port=7471
n=0 failed=0


ok() { n=$((n + 1)); echo "ok $n $QHCA_GUEST: $*"; }
not_ok() { n=$((n + 1)); failed=1; echo "not ok $n $QHCA_GUEST: $*"; }
# result WHAT: one TAP line for the status of the command just run.
result() {
	# shellcheck disable=SC2181
	if [ $? = 0 ]; then ok "$1"; else not_ok "$1"; fi
}
# show: a command's output as TAP diagnostics.
show() { sed 's/^/# /'; }
# skip WHAT WHY: a check that is not run, with why (tests/expected-skips
# must list it).
skip() { n=$((n + 1)); echo "ok $n $QHCA_GUEST: $1 # SKIP $2"; }

me=${QHCA_GUEST:-}
wire=${QHCA_WIRE:-loopback}
read -r -a names <<< "${QHCA_GUESTS:-}"
others=()
for g in "${names[@]}"; do [ "$g" = "$me" ] || others+=("$g"); done
my_addr=$(ip -color=never -4 -o addr show dev "${QHCA_NETDEV:-none}" 2>/dev/null |
	awk '{ sub("/.*", "", $4); print $4; exit }')

# The address NAME resolves to through /etc/hosts.
resolve() { getent hosts "$1" | awk '{ print $1; exit }'; }

# seg_dev GUEST: the RDMA device GUEST has on the segment: a qhca guest's
# qhca0 when its port is the segment's (QHCA_WIRE=eth); the peer's rxe0;
# with the loopback wire, an rxe1 that g1 puts on its virtio-net to pair
# with the peer (rxe<->rxe).  Empty: the guest takes part in no pair.
seg_dev() {
	case $1 in
	rxe) echo rxe0 ;;
	g1)
		if [ "$wire" = eth ]; then
			echo qhca0
		elif [[ " ${names[*]} " == *" rxe "* ]]; then
			echo rxe1
		fi
		;;
	g*) [ "$wire" != eth ] || echo qhca0 ;;
	esac
}
rdev=$(seg_dev "$me")
gid=""	# set by suite.sh: rdev's RoCE v2 GID index of my_addr

# Every guest answers "NAME ADDRESS CALLER" on $info_port: its own name and
# the address its interface has (asked of the kernel, not of /etc/hosts),
# and the address the caller came from.  Each other guest asks once at the
# start ("NAME") and once when it is done ("NAME done"); the server serves
# until every other guest is done, so that no guest powers off while the
# others still work (g1's NIC records the segment for --pcap).
info_server() {
	python3 -c '
import socket, sys, time
name, addr, peers = sys.argv[1], sys.argv[2], set(sys.argv[3].split())
deadline = time.monotonic() + float(sys.argv[4])
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[5])))
s.listen(16)
seen, done = set(), set()
while done != peers and time.monotonic() < deadline:
    s.settimeout(max(0.1, deadline - time.monotonic()))
    try:
        c, (caller, _) = s.accept()
    except socket.timeout:
        break
    c.settimeout(10)
    try:
        words = c.makefile().readline().split()
        c.sendall(("%s %s %s\n" % (name, addr, caller)).encode())
        if words and words[0] in peers:
            seen.add(words[0])
            if words[1:] == ["done"]:
                done.add(words[0])
    except OSError:
        pass
    c.close()
sys.exit(0 if seen == peers and done == peers else 1)
' "$me" "$my_addr" "${others[*]}" "$((2 * arrive_s))" "$info_port"
}

# ask ADDR PORT [SECONDS [MESSAGE]]: the first line the server at ADDR:PORT
# answers to MESSAGE (this guest's name); retried while it is not up yet,
# for at most SECONDS ($wait_s).
ask() {
	local end=$((SECONDS + ${3:-$wait_s})) reply
	while [ $SECONDS -lt $end ]; do
		# shellcheck disable=SC2016
		reply=$(timeout 5 bash -c 'exec 3<>"/dev/tcp/$1/$2" && echo "$3" >&3 && head -n 1 <&3' \
			_ "$1" "$2" "${4:-$me}" 2>/dev/null)
		[ -n "$reply" ] && { echo "$reply"; return 0; }
		sleep 0.5
	done
	return 1
}

# kill_guest NAME: have the host kill guest NAME whole (tools/vm: SIGKILL
# of its QEMU), the request renamed into place so that it is read whole;
# killed_guest NAME [SECONDS]: wait until it has (tools/vm names it in
# $QHCA_CTL/killed), for at most SECONDS ($wait_s).  A part that kills a
# guest runs last: the others' barriers would wait for it.
kill_guest() {
	echo "$1" > "${QHCA_CTL:-/nonexistent}/kill.new" &&
		mv "$QHCA_CTL/kill.new" "$QHCA_CTL/kill"
}
killed_guest() {
	local end=$((SECONDS + ${2:-$wait_s}))
	until grep -qx "$1" "${QHCA_CTL:-/nonexistent}/killed" 2>/dev/null; do
		[ $SECONDS -lt $end ] || return 1
		sleep 0.2
	done
}


# gid_index DEV NETDEV ADDR: the index of DEV's RoCE v2 GID ::ffff:ADDR on
# NETDEV, as ib_core fills the table from the interface's addresses (and
# show_gids reads it): sysfs gids/N, gid_attrs/types/N, gid_attrs/ndevs/N.
gid_index() {
	local want f i p end=$((SECONDS + 30))
	local -a b
	IFS=. read -r -a b <<< "$3"
	want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "${b[@]}")
	p=/sys/class/infiniband/$1/ports/1
	while [ $SECONDS -lt $end ]; do
		for f in "$p"/gids/*; do
			i=${f##*/}
			[ "$(cat "$f" 2>/dev/null)" = "$want" ] &&
			[ "$(cat "$p/gid_attrs/types/$i" 2>/dev/null)" = "RoCE v2" ] &&
			[ "$(cat "$p/gid_attrs/ndevs/$i" 2>/dev/null)" = "$2" ] &&
				{ echo "$i"; return 0; }
		done
		sleep 0.2
	done
	return 1
}

# serve_line PORT WORDS LINE [SECONDS]: answer LINE on PORT to whoever
# connects, until a caller has sent WORDS (a guest's name: that guest has
# asked); status 1 when none has within SECONDS ($arrive_s) in all.
serve_line() {
	python3 -c '
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1])))
s.listen(4)
end = time.monotonic() + float(sys.argv[3])
while time.monotonic() < end:
    s.settimeout(max(0.1, end - time.monotonic()))
    try:
        c, _ = s.accept()
    except socket.timeout:
        break
    c.settimeout(10)
    try:
        words = c.makefile().readline().split()
        c.sendall((sys.argv[4] + "\n").encode())
    except OSError:
        words = []
    c.close()
    if words == sys.argv[2].split():
        sys.exit(0)
sys.exit(1)
' "$1" "$2" "${4:-$arrive_s}" "$3" 2>/dev/null
}

# barrier PORT OTHER LOWER: both guests of a pair are here, each done with
# what came before (its earlier pairs, or a tool run that failed on one side
# only and timed out on the other): the lower one (LOWER=1) serves one
# answer on PORT, the other asks it, for at most $arrive_s seconds.
barrier() {
	if [ "$3" = 1 ]; then
		serve_line "$1" "$2" here
	else
		[ "$(ask "$(resolve "$2")" "$1" "$arrive_s")" = here ]
	fi
}

# for_each_pair PART FUNC: FUNC runs once for every pair of guests this
# guest is in, both with a device on the segment, in one order every guest
# computes alike ((a, b) for every a before b in QHCA_GUESTS), each after
# a barrier with the partner, so that no run waits on a partner still busy
# with another pair or with the end of a run that failed: a failure stays
# that run's.  While FUNC runs, other/odev are the partner and its device,
# lower is 1 in the pair's first guest; pair_barrier K and pair_port K give
# the pair's K-th barrier and tool port (K < 75) in PART's own range
# (PART 0..9, one per part of the suite), so parts never share a port.
pair_base=0 other="" odev="" lower=0 pair_k=0
pair_barrier() { barrier $((pair_base + $1)) "$other" "$lower"; }
pair_port() { echo $((pair_base + 75 + $1)); }
for_each_pair() {
	local part=$1 func=$2 i j pa pb pair=0
	for ((i = 0; i < ${#names[@]}; i++)); do
		for ((j = i + 1; j < ${#names[@]}; j++)); do
			pa=${names[i]} pb=${names[j]}
			pair=$((pair + 1))
			[ "$me" = "$pa" ] || [ "$me" = "$pb" ] || continue
			if [ -z "$(seg_dev "$pa")" ] || [ -z "$(seg_dev "$pb")" ]; then
				continue
			fi
			if [ "$me" = "$pa" ]; then other=$pb lower=1; else other=$pa lower=0; fi
			odev=$(seg_dev "$other")
			pair_base=$((20000 + part * 1000 + pair * 150)) pair_k=0
			if ! pair_barrier 0; then
				not_ok "$other is ready for the pair $rdev<->$odev within ${arrive_s}s"
				continue
			fi
			ok "$other is ready for the pair $rdev<->$odev"
			"$func"
		done
	done
}

# run_done CLIENT RETRY_RE DONE_RE CMD...: one run of a tool, its output
# as diagnostics and in $run_out.  A client (CLIENT=1) runs again while its
# output matches RETRY_RE (the server is not listening yet), or when the
# caller's $run_again, a command run with the failed run's $run_out, says
# so (status 0: it made the server ready again), for at most $wait_s
# seconds; never on any other failure.  Fails unless the tool exits 0
# within $wait_s and prints what a complete run prints (DONE_RE).
run_out=""
run_done() {
	local client=$1 retry_re=$2 done_re=$3 end=$((SECONDS + wait_s)) rc
	shift 3
	while :; do
		run_out=$(timeout "$wait_s" "$@" 2>&1)
		rc=$?
		if [ $rc = 0 ] || [ "$client" = 0 ] || [ $SECONDS -ge $end ]; then
			break
		elif grep -qE "$retry_re" <<< "$run_out"; then
			sleep 0.5
		elif [ -z "${run_again:-}" ] || ! "$run_again"; then
			break
		fi
	done
	show <<< "$run_out"
	[ $rc = 0 ] && grep -qE "$done_re" <<< "$run_out"
}

# pair_run K SERVE NAME KEY FUNC ARG...: the pair's K-th run, after the
# pair's K-th barrier, on the pair's K-th tool port: the guest whose
# "lower" is SERVE runs FUNC ARG... PORT (the server), the other FUNC
# ARG... PORT SERVER (its client); one TAP line "NAME DEV <- PARTNER
# (DEV): served" or "NAME DEV -> PARTNER (DEV): client".  A run that
# pending_why names for KEY is a skip, not run.
pair_run() {
	local k=$1 serve=$2 name=$3 key=$4 port what why
	shift 4
	port=$(pair_port "$k")
	if ! pair_barrier "$k"; then
		not_ok "$name $rdev/$other ($odev): $other did not come within ${arrive_s}s"
		return
	fi
	if [ "$serve" = "$lower" ]; then
		what="$name $rdev <- $other ($odev): served"
		why=$(pending_why "$key" "$odev" "$rdev")
	else
		what="$name $rdev -> $other ($odev): client"
		why=$(pending_why "$key" "$rdev" "$odev")
	fi
	if [ -n "$why" ]; then
		skip "$what" "$why"
	elif [ "$serve" = "$lower" ]; then
		"$@" "$port"
		result "$what"
	else
		"$@" "$port" "$other"
		result "$what"
	fi
}

# pair_both NAME KEY FUNC ARG...: one tool's two runs between this guest
# and $other, the lower guest serving first, then the other: pair_run with
# the pair's next K each time (pair_k, from 0 in every pair, which FUNC
# may read).
pair_both() {
	local serve
	for serve in 1 0; do
		pair_k=$((pair_k + 1))
		pair_run "$pair_k" "$serve" "$@"
	done
}

# pending_why TOOL CLIENT_DEV SERVER_DEV: the reason a run cannot pass yet,
# or nothing: the part's own "pending" table, "TOOL CLIENT_DEV>SERVER_DEV"
# patterns, each with why.  Such a run is reported as a skip, not run;
# tests/expected-skips lists the same runs for tools/check.  Drop an entry
# once the product passes it.
declare -A pending=()
pending_why() {
	local p
	for p in "${!pending[@]}"; do
		# shellcheck disable=SC2053
		[[ "$1 $2>$3" == $p ]] && { echo "${pending[$p]}"; return; }
	done
}
