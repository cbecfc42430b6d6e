# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash disable=SC2154
# (SC2154: here, me, names, others, gid, rdev, wire, info_port, arrive_s
# and wait_s come from suite.sh and lib.sh, which source this part.)
#
# Part "guest_kill" of the fabric suite (sourced by suite.sh), last: a
# peer guest dies whole, its QEMU killed by the host (tools/vm's kill
# request, SIGKILL) while g1 streams to it.  rc_wire's kill ends a process
# in a guest, whose kernel and device then tidy up; here nothing on the
# victim's side runs any more, as when a machine loses its power.
#
# g1 (the streamer) and g2 (the victim), qhca0 both: an RC QP each
# (pyverbs), local ACK timeout 16 (4.096 us << 16: 268 ms) and retry_cnt
# 2 on g1's.  (Timeout 10, 4.2 ms, failed a make check on a loaded host:
# g1's very first WRITE ended in RETRY_EXC_ERR before the kill, its ACK
# later than three periods, 12.6 ms, behind a busy host's scheduling;
# 268 ms leaves room for such waits, and RETRY_EXC_ERR still comes within
# a few seconds of the kill.)  g1 streams rounds of a 16 KiB WRITE into g2's memory and a
# READ of it back, three rounds in flight, each round's data checked;
# after 20 rounds it asks the host to kill g2 and goes on posting.  Its
# first failed completion must be RETRY_EXC_ERR, within 10 s of the
# request (the host acts within 0.1 s; a TCG guest's scheduling) plus
# 4 x (retry_cnt + 1) x the timeout (IBTA: a timer fires within four
# times its value); every later one WR_FLUSH_ERR; every WR completes; the
# QP is then in ERR and it, the CQ, the MR and the PD are destroyed
# without an error, and rdma res counts qhca0's objects as before.
#
# g1's NIC records the segment for tools/check's --pcap: g1 lives.  g2
# tells every other guest it is done (lib.sh's info server) before it
# dies, so no one waits for it at the end; every guest that lives drops
# it from the names later parts pair.  The rxe peer and any g3.. take no
# part.  Fewer than two qhca guests on the segment: nothing to do.

gk_streamer=g1 gk_victim=g2
# Part 3's ports (lib.sh: 20000 + part x 1000): its barrier, then the QP
# exchange.
gk_barrier=23000 gk_port=23075

gk_py=$(cat <<'EOF'
import random, socket, subprocess, sys, time
import pyverbs.enums as e
from pyverbs.addr import AHAttr, GID, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import SGE, SendWR

role, dev, gidx, port, peer, wait_s = sys.argv[1:7]
gidx, port, wait_s = int(gidx), int(port), int(wait_s)
TIMEOUT, RETRY = 16, 2
SLOT, SLOTS, INFLIGHT, BEFORE = 16384, 8, 3, 20
T_MS = 4.096e-3 * (1 << TIMEOUT)
BOUND_MS = 10000 + 4 * (RETRY + 1) * T_MS
POLL_S = 20
failed = 0


def ok(what):
    print("ok %s" % what, flush=True)


def not_ok(what):
    global failed
    failed = 1
    print("not ok %s" % what, flush=True)


acc = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
       e.IBV_ACCESS_REMOTE_READ)
ctx = Context(name=dev)
pd = PD(ctx)
cq = CQ(ctx, 4 * SLOTS)
# Write sources in the first half, READ targets in the second.
mr = MR(pd, 2 * SLOTS * SLOT, acc)
qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq,
                       cap=QPCap(max_send_wr=4 * SLOTS, max_recv_wr=1)))
psn = random.randrange(1 << 24)
me = "%d %d %s %d %d\n" % (qp.qp_num, psn, ctx.query_gid(1, gidx), mr.rkey,
                           mr.buf)

# The exchange: the victim listens, the streamer connects (while the
# victim is not listening yet, for at most wait_s).
if role == "victim":
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("0.0.0.0", port))
    ls.listen(1)
    ls.settimeout(wait_s)
    s, _ = ls.accept()
else:
    end = time.monotonic() + wait_s
    while True:
        try:
            s = socket.create_connection((peer, port), timeout=5)
            break
        except OSError:
            if time.monotonic() > end:
                raise
            time.sleep(0.5)
s.settimeout(wait_s)
f = s.makefile("rw")
f.write(me)
f.flush()
rqpn, rpsn, rgid, rkey, raddr = f.readline().split()
rqpn, rpsn, rkey, raddr = int(rqpn), int(rpsn), int(rkey), int(raddr)

a = QPAttr(port_num=1, path_mtu=e.IBV_MTU_1024)
a.qp_access_flags = acc
a.dest_qp_num, a.rq_psn, a.sq_psn = rqpn, rpsn, psn
a.max_dest_rd_atomic = a.max_rd_atomic = 4
a.min_rnr_timer, a.timeout, a.retry_cnt, a.rnr_retry = 12, TIMEOUT, RETRY, 0
a.ah_attr = AHAttr(gr=GlobalRoute(dgid=GID(rgid), sgid_index=gidx,
                                  hop_limit=64), is_global=1, port_num=1)
qp.to_rts(a)

if role == "victim":
    f.write("READY\n")
    f.flush()
    print("%s: RTS, QP %d, waiting to be killed" % (dev, qp.qp_num),
          flush=True)
    # The streamer closes the connection only if it could not ask for
    # the kill; killed, this never returns.
    f.readline()
    print("still alive")
    sys.exit(1)

if f.readline().strip() != "READY":
    raise SystemExit("the victim did not get ready")
ok("%s: RC QP %d to %s's QP %d in RTS, timeout %d (%.1f ms), retry_cnt %d"
   % (dev, qp.qp_num, peer, rqpn, TIMEOUT, T_MS, RETRY))


def post(wr_id, opcode, loff, roff):
    wr = SendWR(wr_id=wr_id, opcode=opcode, num_sge=1,
                sg=[SGE(mr.buf + loff, SLOT, mr.lkey)])
    wr.set_wr_rdma(rkey, raddr + roff)
    qp.post_send(wr)


def request_kill():
    # lib.sh's kill_guest, exported by the part.
    subprocess.run(["bash", "-c", 'kill_guest "$1"', "_", peer], check=True)
    return time.monotonic()


want = {}
posted = done = verified = 0
killed_at = first = err_at = None
while True:
    # Round r: WRITE wr_id 2r, READ wr_id 2r + 1, in slot r % SLOTS.
    while first is None and posted - done < 2 * INFLIGHT:
        r = posted // 2
        slot = r % SLOTS
        want[r] = random.Random(r).randbytes(SLOT)
        mr.write(want[r], SLOT, slot * SLOT)
        mr.write(bytes(SLOT), SLOT, (SLOTS + slot) * SLOT)
        post(2 * r, e.IBV_WR_RDMA_WRITE, slot * SLOT, slot * SLOT)
        post(2 * r + 1, e.IBV_WR_RDMA_READ, (SLOTS + slot) * SLOT,
             slot * SLOT)
        posted += 2
    if done == posted:
        break
    end = time.monotonic() + POLL_S
    while True:
        n, wcs = cq.poll()
        if n:
            break
        if time.monotonic() > end:
            raise SystemExit("WR %d of %d: no completion within %d s"
                             % (done, posted, POLL_S))
    wc = wcs[0]
    if wc.wr_id != done:
        raise SystemExit("completion of WR %d, expected %d" % (wc.wr_id, done))
    done += 1
    if wc.status == e.IBV_WC_SUCCESS:
        if first is not None:
            raise SystemExit("WR %d succeeded after the error" % wc.wr_id)
        if wc.wr_id % 2:
            r = wc.wr_id // 2
            got = mr.read(SLOT, (SLOTS + r % SLOTS) * SLOT)
            if got != want.pop(r):
                raise SystemExit("round %d: the READ brought back other "
                                 "data than the WRITE put" % r)
            verified += 1
            if verified == BEFORE:
                ok("%d rounds of a 16 KiB WRITE and its READ back to %s, "
                   "data checked" % (verified, peer))
                killed_at = request_kill()
                print("asked the host to kill %s" % peer, flush=True)
    elif first is None:
        first, err_at = wc.status, time.monotonic()
        print("WR %d: status %d, %.0f ms after the kill was asked"
              % (wc.wr_id, wc.status, (err_at - (killed_at or err_at)) * 1e3),
              flush=True)
    elif wc.status != e.IBV_WC_WR_FLUSH_ERR:
        not_ok("WR %d after the first error: status %d, expected "
               "WR_FLUSH_ERR (%d)" % (wc.wr_id, wc.status,
                                      e.IBV_WC_WR_FLUSH_ERR))

if killed_at is None:
    raise SystemExit("the stream failed before the kill (status %s)" % first)
if first == e.IBV_WC_RETRY_EXC_ERR:
    ok("the first failed WR: RETRY_EXC_ERR")
else:
    not_ok("the first failed WR: status %d, expected RETRY_EXC_ERR (%d)"
           % (first, e.IBV_WC_RETRY_EXC_ERR))
ms = (err_at - killed_at) * 1e3
if ms <= BOUND_MS:
    ok("the error %.0f ms after the kill was asked (bound %.0f ms)"
       % (ms, BOUND_MS))
else:
    not_ok("the error %.0f ms after the kill was asked, more than %.0f ms"
           % (ms, BOUND_MS))
ok("all %d WRs completed, %d rounds verified, the rest flushed"
   % (posted, verified))
state = qp.query(e.IBV_QP_STATE)[0].qp_state
if state == e.IBV_QPS_ERR:
    ok("the QP is in ERR")
else:
    not_ok("the QP is in state %d, expected ERR (%d)" % (state, e.IBV_QPS_ERR))
qpn = qp.qp_num
for o in (qp, cq, mr, pd):
    o.close()
ok("QP %d, CQ, MR and PD destroyed" % qpn)
ctx.close()
sys.exit(failed)
EOF
)

# gk_run ROLE: the python above, its "ok"/"not ok" lines this suite's;
# a run that ends without its last line fails (an exception, a bound).
gk_run() {
	local out rc line
	out=$(timeout $((3 * wait_s)) python3 -c "$gk_py" "$1" "$rdev" "$gid" \
		"$gk_port" "$gk_victim" "$wait_s" 2>&1)
	rc=$?
	while IFS= read -r line; do
		case $line in
		"ok "*) ok "guest_kill: ${line#ok }" ;;
		"not ok "*) not_ok "guest_kill: ${line#not ok }" ;;
		*) show <<< "$line" ;;
		esac
	done <<< "$out"
	[ $rc = 0 ] && [[ $out == *"PD destroyed"* ]]
	result "guest_kill: the $1's run ended whole (status $rc)"
}


gk_part() {
	local g t0 before after
	if [ "$wire" != eth ] || [ "$(seg_dev "$gk_victim")" != qhca0 ] ||
	   ! [[ " ${names[*]} " == *" $gk_victim "* ]]; then
		echo "# guest_kill: no two qhca guests on the segment: nothing to do"
		return
	fi
	case $me in
	"$gk_victim")
		# Nothing more from anyone: done, before dying.
		for g in "${others[@]}"; do
			ask "$(resolve "$g")" "$info_port" "$arrive_s" "$me done" > /dev/null
			result "guest_kill: told $g this guest is done, before it is killed"
		done
		barrier "$gk_barrier" "$gk_streamer" 0 ||
			not_ok "guest_kill: $gk_streamer did not come within ${arrive_s}s"
		gk_run victim
		# The streamer asks for the kill whatever happened: wait for it.
		killed_guest "$me"
		not_ok "guest_kill: $me still alive ${wait_s}s after its run"
		echo "1..$n"
		exit 1
		;;
	"$gk_streamer")
		export -f kill_guest
		t0=$SECONDS
		before=$(rdma res show | grep "^[0-9]*: $rdev: ")
		if barrier "$gk_barrier" "$gk_victim" 1; then
			gk_run streamer
		else
			not_ok "guest_kill: $gk_victim did not come within ${arrive_s}s"
		fi
		# A run that failed before it asked: the victim must die anyway.
		killed_guest "$gk_victim" 1 || kill_guest "$gk_victim"
		killed_guest "$gk_victim"
		result "guest_kill: tools/vm killed $gk_victim's QEMU"
		# Nothing of the run is left in the kernel.
		after=$(rdma res show | grep "^[0-9]*: $rdev: ")
		echo "# rdma res: before: $before; after: $after"
		[ -n "$before" ] && [ "$after" = "$before" ]
		result "guest_kill: rdma res counts $rdev's objects as before the run"
		echo "# guest_kill: $((SECONDS - t0)) s in $me"
		;;
	esac
	# The victim is gone: no later pair, and no one says done to it.
	local -a left=()
	for g in "${names[@]}"; do [ "$g" = "$gk_victim" ] || left+=("$g"); done
	names=("${left[@]}")
	left=()
	for g in "${others[@]}"; do [ "$g" = "$gk_victim" ] || left+=("$g"); done
	others=("${left[@]}")
}
gk_part
