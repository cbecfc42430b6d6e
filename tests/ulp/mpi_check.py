#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The MPI program of the ulp suite's "mpi" part (tests/ulp/mpi.sh), one rank
# per guest: every byte a rank receives, reduces or reads from another
# rank's window is compared with what the sender must have sent.  The guest
# has mpi4py and no compiler, hence Python; the buffers are bytearrays and
# array('q'), which mpi4py hands to MPI as they are (no copies, no numpy).
#
# Rank 0 prints one line per check, "mpi_check: NAME: ok (DETAIL)" or
# "mpi_check: NAME: FAILED (rank R: WHAT)...", and the program exits 1 if a
# check failed on any rank.  The sizes cross UCX's eager/rendezvous
# thresholds, so that both the copy and the zero-copy (RDMA) paths move data.
import hashlib
import socket
import sys
from array import array

from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
right, left = (rank + 1) % size, (rank - 1) % size
sizes = (1, 64, 4096, 65536, 1 << 20)
failed = False


def pattern(what, n):
    """n bytes that only the words in WHAT produce."""
    return bytearray(hashlib.shake_128(what.encode()).digest(n))


def first_diff(a, b):
    if len(a) != len(b):
        return "length %d, want %d" % (len(a), len(b))
    i = next(i for i in range(len(a)) if a[i] != b[i])
    return "byte %d of %d is %#x, want %#x" % (i, len(a), a[i], b[i])


def report(name, problems, detail):
    """Rank 0 prints NAME's result over every rank's PROBLEMS."""
    global failed
    everyone = comm.gather(problems, root=0)
    bad = comm.bcast(any(everyone) if rank == 0 else None, root=0)
    failed = failed or bad
    if rank != 0:
        return
    if not bad:
        print("mpi_check: %s: ok (%s)" % (name, detail), flush=True)
        return
    what = "; ".join("rank %d: %s" % (r, ", ".join(p))
                     for r, p in enumerate(everyone) if p)
    print("mpi_check: %s: FAILED (%s)" % (name, what), flush=True)


def check_hosts():
    hosts = comm.allgather(socket.gethostname())
    problems = []
    if len(set(hosts)) != size:
        problems.append("ranks share a host: %s" % " ".join(hosts))
    report("ranks", problems, "%d ranks on %s" % (size, " ".join(hosts)))


def check_sendrecv():
    """Blocking Sendrecv around the ring, then nonblocking Isend/Irecv
    with the ring reversed, every size."""
    problems = []
    for n in sizes:
        out = pattern("p2p %d->%d %d" % (rank, right, n), n)
        got = bytearray(n)
        comm.Sendrecv([out, MPI.BYTE], right, n, [got, MPI.BYTE], left, n)
        want = pattern("p2p %d->%d %d" % (left, rank, n), n)
        if got != want:
            problems.append("Sendrecv %d B from %d: %s" % (n, left, first_diff(got, want)))
    for n in sizes:
        out = pattern("nb %d->%d %d" % (rank, left, n), n)
        got = bytearray(n)
        reqs = [comm.Irecv([got, MPI.BYTE], right, 7),
                comm.Isend([out, MPI.BYTE], left, 7)]
        MPI.Request.Waitall(reqs)
        want = pattern("nb %d->%d %d" % (right, rank, n), n)
        if got != want:
            problems.append("Irecv %d B from %d: %s" % (n, right, first_diff(got, want)))
    report("send/recv", problems,
           "Sendrecv and Isend/Irecv of %s B around the ring" % "/".join(map(str, sizes)))


def check_allreduce():
    """MPI_SUM and MPI_MAX over int64 vectors, 1 and 131072 elements."""
    problems = []
    for count in (1, 131072):
        mine = array("q", (i * (rank + 1) + rank for i in range(count)))
        got = array("q", bytes(8 * count))
        comm.Allreduce([mine, MPI.INT64_T], [got, MPI.INT64_T], op=MPI.SUM)
        tri = size * (size + 1) // 2
        want = array("q", (i * tri + tri - size for i in range(count)))
        if got != want:
            i = next(i for i in range(count) if got[i] != want[i])
            problems.append("SUM of %d: element %d is %d, want %d" % (count, i, got[i], want[i]))
        comm.Allreduce([mine, MPI.INT64_T], [got, MPI.INT64_T], op=MPI.MAX)
        want = array("q", (i * size + size - 1 for i in range(count)))
        if got != want:
            i = next(i for i in range(count) if got[i] != want[i])
            problems.append("MAX of %d: element %d is %d, want %d" % (count, i, got[i], want[i]))
    report("allreduce", problems, "SUM and MAX of 1 and 131072 int64")


def check_rma():
    """Put into the right neighbour's window and Get it back, in fence
    epochs; then Put and Get under passive locks."""
    n = 1 << 20
    problems = []
    win = MPI.Win.Allocate(2 * n, 1, comm=comm)
    mem = win.tomemory()
    mem[:] = bytes(2 * n)
    win.Fence()
    out = pattern("put %d->%d" % (rank, right), n)
    win.Put([out, MPI.BYTE], right, target=(0, n, MPI.BYTE))
    win.Fence()
    want = pattern("put %d->%d" % (left, rank), n)
    if bytes(mem[:n]) != want:
        problems.append("fence Put from %d: %s" % (left, first_diff(bytes(mem[:n]), want)))
    got = bytearray(n)
    win.Get([got, MPI.BYTE], right, target=(0, n, MPI.BYTE))
    win.Fence()
    if got != out:
        problems.append("fence Get from %d: %s" % (right, first_diff(got, out)))
    # Passive target: the second half, small and large, each rank alone
    # in the right neighbour's window while it holds the lock.
    for m in (8, 65536, n):
        out = pattern("lock %d->%d %d" % (rank, right, m), m)
        win.Lock(right, MPI.LOCK_EXCLUSIVE)
        win.Put([out, MPI.BYTE], right, target=(n, m, MPI.BYTE))
        win.Unlock(right)
        got = bytearray(m)
        win.Lock(right, MPI.LOCK_SHARED)
        win.Get([got, MPI.BYTE], right, target=(n, m, MPI.BYTE))
        win.Unlock(right)
        if got != out:
            problems.append("locked Put+Get %d B at %d: %s" % (m, right, first_diff(got, out)))
        comm.Barrier()
        want = pattern("lock %d->%d %d" % (left, rank, m), m)
        # The window's own memory is read in an epoch of its own: MPI_Win_sync
        # outside a passive-target epoch is erroneous (osc ucx refuses it).
        win.Lock(rank, MPI.LOCK_SHARED)
        win.Sync()
        local = bytes(mem[n:n + m])
        win.Unlock(rank)
        if local != want:
            problems.append("locked Put %d B from %d: %s" % (m, left, first_diff(local, want)))
        comm.Barrier()
    win.Free()
    report("one-sided put/get", problems,
           "fence Put/Get of %d B, locked Put/Get of 8/65536/%d B" % (n, n))


def check_atomics():
    """Every rank adds to counters in rank 0's window with Fetch_and_op
    and Accumulate: the sums and the values fetched must add up."""
    problems = []
    win = MPI.Win.Allocate(16, 8, comm=comm)
    mem = win.tomemory()
    mem[:] = bytes(16)
    win.Fence()
    fetched = array("q", [0])
    one = array("q", [rank + 1])
    win.Lock(0, MPI.LOCK_SHARED)
    win.Fetch_and_op([one, MPI.INT64_T], [fetched, MPI.INT64_T], 0, 0, MPI.SUM)
    win.Accumulate([array("q", [1 << rank]), MPI.INT64_T], 0, target=(1, 1, MPI.INT64_T), op=MPI.SUM)
    win.Unlock(0)
    win.Fence()
    olds = comm.gather(fetched[0], root=0)
    if rank == 0:
        counts = array("q", bytes(mem[:16]))
        tri = size * (size + 1) // 2
        if counts[0] != tri:
            problems.append("Fetch_and_op sum %d, want %d" % (counts[0], tri))
        if counts[1] != (1 << size) - 1:
            problems.append("Accumulate sum %#x, want %#x" % (counts[1], (1 << size) - 1))
        # The values fetched are the running sums before each add: the
        # ranks' adds in some order, so each is a sum of a subset of the
        # others' contributions, and they are distinct.
        if len(set(olds)) != size or not all(0 <= o < tri for o in olds):
            problems.append("Fetch_and_op fetched %s" % olds)
    win.Free()
    report("atomics", problems, "Fetch_and_op and Accumulate into rank 0's window")


check_hosts()
check_sendrecv()
check_allreduce()
check_rma()
check_atomics()
sys.exit(1 if failed else 0)
