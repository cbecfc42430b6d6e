#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The ulp suite: the kernel's own RDMA storage stacks and the HPC stacks
# between qhca guests, run in all at once (as tools/check ulp does):
#
#   tools/vm --timeout 900 --guests 3 -- tests/ulp/suite.sh
#
# The lower guest of the pair (g1) serves, the other (g2) is the client.
# g3 is one more rank of the mpi part, the one part that takes every qhca
# guest of the segment (a run of three ranks, then one of the pair's two),
# and takes part in no other; mpi runs first, so that g3 need not wait
# out the pair's others.  With --guests 2 the pair runs everything, MPI
# with two ranks only.
# Each part moves data that both sides checksum, tears down, and checks
# that qhca0 holds no more objects than before it (rdma res) and that the
# kernel logged no warning.  The parts (ULP_PARTS, default all, in order):
#
#   mpi     Open MPI over UCX: an MPI program of ours that checks its
#           data, three ranks (g1, g2, g3) then two (mpi.sh)
#   nfs     NFS over RDMA: nfsd's rdma port 20049, mount -o rdma (nfs.sh)
#   nvme    NVMe over RDMA: nvmet-rdma, nvme connect -t rdma (nvme.sh)
#   ucx     UCX: ucx_info -d, ucx_perftest tag and RMA (ucx.sh)
#   libfabric  fi_info -p verbs, fi_pingpong msg and rdm -c (libfabric.sh)
#   qperf   qperf -cm1 rc_bw, rc_lat, RDMA WRITE/READ bw (qperf.sh)
#   iser    iSCSI with iSER: LIO iSER portal, iscsiadm -I iser (iser.sh)
#   srp     SRP: ib_srpt's rdma_cm listener, ib_srp's add_target (srp.sh)
#   smbdirect  SMB Direct: a skip, Debian's kernel has none (smbdirect.sh)
#   pyverbs rdma-core's pyverbs cases that need RoCE, in g1 (pyverbs.sh)
#   nvme_kill  NVMe over RDMA, the target's guest killed under fio
#           --verify: the host's I/O fails, no hang (nvme_kill.sh); last
#
# TAP lines, names, barriers and the pair walk are the fabric suite's
# (tests/fabric/lib.sh).
set -u
here=$(dirname "$(readlink -f "$0")")
# shellcheck source=tests/fabric/lib.sh
. "$here"/../fabric/lib.sh
# A partner that failed must not hold the other for the fabric's 15 min.
arrive_s=${ULP_ARRIVE:-240}
# When a part is taken as stuck, for its diagnostics (below).
watch_s=$((arrive_s - 40))
all_parts=(mpi nfs nvme ucx libfabric qperf iser srp smbdirect pyverbs nvme_kill)
read -r -a parts <<< "${ULP_PARTS:-${all_parts[*]}}"

if [ -z "$me" ] || [ "$wire" != eth ]; then
	echo "1..0 # SKIP not a qhca guest of tools/vm --guests"
	exit 4
fi

# shellcheck source=tests/ulp/lib.sh
. "$here"/lib.sh

# The pair walk (for_each_pair) sees the first two guests only; mpi.sh
# takes them all (seg_guests).
# shellcheck disable=SC2034
seg_guests=("${names[@]}")
names=("${names[@]:0:2}")
if [[ " ${names[*]} " != *" $me "* ]]; then
	mine=()
	for part in "${parts[@]}"; do
		[ "$part" != mpi ] || mine+=("$part")
	done
	parts=("${mine[@]}")
fi

for part in "${parts[@]}"; do
	was=$failed
	failed=0
	part_t0=$SECONDS
	# Where this part's kernel log starts (lib.sh's dmesg_clean).
	part_mark="qhca ulp part $part $$ $part_t0"
	echo "$part_mark" > /dev/kmsg
	# A part stuck in the kernel prints nothing more; before the partner
	# gives up on it, the tasks blocked here and the kernel's last words.
	# Its sleep is a job of its own, which it ends quietly when told the
	# part is over (TERM): a foreground sleep killed under it would have
	# bash print "Terminated".  Once it has begun, it finishes.
	(
		trap 'kill "$nap" 2>/dev/null; exit 0' TERM
		sleep "$watch_s" > /dev/null 2>&1 &
		nap=$!
		wait "$nap" || exit 0
		trap '' TERM
		echo "# part $part: still running after ${watch_s}s: blocked tasks"
		# Not the part's own log (lib.sh's dmesg_part ends here).
		echo "$part_mark: watchdog" > /dev/kmsg
		echo w > /proc/sysrq-trigger
		dmesg | tail -n 60 | sed 's/^/# /'
	) &
	watchdog=$!
	# shellcheck source=/dev/null
	. "$here/$part.sh"
	kill "$watchdog" 2>/dev/null
	wait "$watchdog" 2>/dev/null
	[ "$failed" = 0 ] || diag
	failed=$((was | failed))
	echo "# part $part: $((SECONDS - part_t0)) s"
done

echo "1..$n"
exit $failed
