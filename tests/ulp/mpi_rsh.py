#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The remote shell mpirun starts its daemons with, in the ulp suite's "mpi"
# part (tests/ulp/mpi.sh).  Open MPI 5's launcher (PRRTE's plm "ssh") runs
# "AGENT HOST COMMAND..." for every other host, as it would run ssh; the
# guests have no sshd, so this is that agent and its server, over the
# segment's TCP like the suite's barriers:
#
#   mpi_rsh.py serve PORT PEER SECONDS   (in every guest but mpirun's) runs
#       each command PEER's agent sends, with sh -c as sshd would, its
#       output back on the connection; until PEER says "done", at most
#       SECONDS
#   mpi_rsh.py HOST COMMAND...           (the agent, plm_ssh_agent) sends
#       COMMAND to HOST's server and copies what comes back to stdout
#
# The port is QHCA_MPI_RSH_PORT in the agent's environment (mpi.sh exports
# it to mpirun).  Only PEER's address is served.
import os
import socket
import subprocess
import sys
import time


def serve(port, peer, seconds):
    peer_addr = socket.gethostbyname(peer)
    deadline = time.monotonic() + seconds
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", port))
    s.listen(4)
    children = []
    while time.monotonic() < deadline:
        s.settimeout(max(0.1, deadline - time.monotonic()))
        try:
            c, (caller, _) = s.accept()
        except socket.timeout:
            break
        if caller != peer_addr:
            c.close()
            continue
        line = c.makefile("rb").readline().decode().rstrip("\n")
        if line == "done":
            c.close()
            break
        # The daemon's stdout and stderr are the connection; it lives on
        # after this accepts the next one, and ends when mpirun ends it.
        children.append(subprocess.Popen(["/bin/sh", "-c", line], stdin=subprocess.DEVNULL,
                                         stdout=c.fileno(), stderr=c.fileno()))
        c.close()
    # mpirun has ended (PEER said "done") or never will: its daemons end
    # with it, within 30 s; one that does not is ended here, so that the
    # part leaves nothing holding qhca0, and the status says so.
    rc = 0
    for p in children:
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            rc = 1
    return rc


def agent(host, words):
    port = int(os.environ["QHCA_MPI_RSH_PORT"])
    c = socket.create_connection((host, port), timeout=30)
    c.settimeout(None)
    c.sendall((" ".join(words) + "\n").encode())
    while True:
        data = c.recv(65536)
        if not data:
            return 0
        sys.stdout.buffer.write(data)
        sys.stdout.flush()


if sys.argv[1] == "serve":
    sys.exit(serve(int(sys.argv[2]), sys.argv[3], float(sys.argv[4])))
sys.exit(agent(sys.argv[1], sys.argv[2:]))
