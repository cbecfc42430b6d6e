# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# What the parts of the ulp suite (tests/ulp/suite.sh) share, sourced once
# by suite.sh after the fabric suite's lib.sh: the ULP modules, qhca0's
# object counts and the kernel log before and after a stack, and a line
# from one guest of the pair to the other.

# The image carries only the modules the verbs bench needs; the ULPs'
# come from the kernel tree the build unpacked (the repository is shared
# at the same path), with its modules.dep: the booted kernel's
# (QHCA_KROOT, set by tools/guest/init).
kroot=${QHCA_KROOT:-${QHCA_TOP:-/nonexistent}/build/kernel/root}
ulp_modprobe() { modprobe -d "$kroot" "$@"; }

# The ports of the storage targets, for the ulp parts and the bench
# (tools/bench/ulp-matrix) alike: nfsd's RDMA port, nvmet's service id.
nfs_port=20049
nvme_svc=4420

# nfsd_rdma_start: nfsd serving /etc/exports (NFSv4 only) and listening on
# the RDMA port.  NFSv4's lease and grace period shortened to their 10 s
# minimum (both can only be set while nfsd is stopped), so that a
# restarted server serves opens soon.
nfsd_rdma_start() {
	mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd || return 1
	echo 10 > /proc/fs/nfsd/nfsv4leasetime
	echo 10 > /proc/fs/nfsd/nfsv4gracetime
	pidof rpcbind > /dev/null || rpcbind || return 1
	exportfs -ra || return 1
	pidof rpc.mountd > /dev/null || rpc.mountd || return 1
	rpc.nfsd 4 || return 1
	echo "rdma $nfs_port" > /proc/fs/nfsd/portlist || return 1
	show < /proc/fs/nfsd/portlist
	grep -qx "rdma $nfs_port" /proc/fs/nfsd/portlist
}

# nfs_transport MOUNTPOINT: the transport of the NFS mount there, as the
# client's RPC layer reports it (rdma; a mount that fell back to TCP says
# tcp).
nfs_transport() {
	awk -v m="$1" '
		$1 == "device" { on = ($5 == m) }
		on && $1 == "xprt:" { print $2; exit }' /proc/self/mountstats
}

# nvmet_rdma_start NQN DEVICE BUFFERED: an nvmet-rdma target: subsystem
# NQN open to any host, namespace 1 on DEVICE (a block device or a file;
# BUFFERED 1 goes through the page cache, as a file on tmpfs, which has no
# O_DIRECT, must), port 1 on this guest's address and $nvme_svc.
nvmet_rdma_start() {
	local s=/sys/kernel/config/nvmet/subsystems/$1 p=/sys/kernel/config/nvmet/ports/1
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config || return 1
	mkdir "$s" && echo 1 > "$s/attr_allow_any_host" &&
	mkdir "$s/namespaces/1" &&
	{ [ "$3" = 0 ] || echo 1 > "$s/namespaces/1/buffered_io"; } &&
	echo -n "$2" > "$s/namespaces/1/device_path" &&
	echo 1 > "$s/namespaces/1/enable" &&
	mkdir "$p" && echo rdma > "$p/addr_trtype" && echo ipv4 > "$p/addr_adrfam" &&
	echo "$my_addr" > "$p/addr_traddr" && echo "$nvme_svc" > "$p/addr_trsvcid" &&
	ln -s "$s" "$p/subsystems/$1"
}

# nvme_disk NQN: the block device of subsystem NQN's namespace on this
# host, waited for (30 s at most): the guest has no other NVMe controller
# (with native multipath the controller's own node is a hidden
# nvmeXcYnZ, not the disk).
nvme_disk() {
	local end=$((SECONDS + 30)) c d
	while [ $SECONDS -lt $end ]; do
		for c in /sys/class/nvme/nvme*; do
			[ "$(cat "$c/subsysnqn" 2>/dev/null)" = "$1" ] || continue
			for d in /sys/block/nvme*n1; do
				[[ ${d##*/} =~ ^nvme[0-9]+n1$ ]] && [ -b "/dev/${d##*/}" ] &&
					{ echo "/dev/${d##*/}"; return 0; }
			done
		done
		sleep 0.2
	done
	return 1
}

# res_now: qhca0's object counts as rdma res shows them ("pd 1 cq 2 ..."),
# the CQs counted only when in use: ib_core's CQ pool (ib_cq_pool_get:
# nvme-rdma, nvmet-rdma) keeps the CQs it made, idle ("users 0"), until the
# device goes away, which is not a leak.
res_now() {
	local cq
	cq=$(rdma res show cq dev "$rdev" 2>/dev/null | grep -c -v ' users 0 ')
	rdma res show 2>/dev/null |
		sed -n "s/^[0-9]*: $rdev: *//; T; s/ cq [0-9]* / cq $cq in use /; p"
}
# res_back WHAT BEFORE: qhca0 is back to BEFORE's counts, within 30 s (a
# ULP frees its QPs from a work queue after the call that ends it).
res_back() {
	local end=$((SECONDS + 30)) now
	while :; do
		now=$(res_now)
		[ "$now" = "$2" ] && break
		[ $SECONDS -lt $end ] || break
		sleep 0.5
	done
	echo "# rdma res: before $2; after $now"
	[ "$now" = "$2" ]
	result "$1: rdma res shows qhca0 as before ($2)"
	[ "$now" = "$2" ] || rdma res show qp 2>&1 | show
	[ "$now" = "$2" ] || rdma res show cq 2>&1 | show
}
# dmesg_clean WHAT: nothing a user reports as a bug in the kernel log
# since the part began (suite.sh's part_mark): what the boot logged, a
# soft lockup of a starved TCG vCPU say, is not the part's, nor the
# blocked tasks suite.sh's watchdog asks for.
dmesg_bad='WARNING:|BUG:|Oops|Call Trace|blocked for more than|UBSAN|KASAN|refcount_t:|corruption'
dmesg_part() {
	local m=${part_mark:-qhca ulp part}
	dmesg | sed -n "/$m\$/,\$p" | sed "/$m: watchdog/,\$d"
}
dmesg_clean() {
	local log bad
	log=$(dmesg_part)
	bad=$(grep -E "$dmesg_bad" <<< "$log")
	[ -n "$log" ] && [ -z "$bad" ]
	result "$1: no kernel warning in the log since the part began"
	[ -z "$bad" ] || grep -E -B 2 -A 20 "$dmesg_bad" <<< "$log" | head -n 60 | show
}

# roce_bytes NAME: qhca0's hw counter NAME (tx_bytes, rx_bytes: RoCE
# packets only, not the port's plain Ethernet).
roce_bytes() { cat "/sys/class/infiniband/$rdev/ports/1/hw_counters/$1"; }

# roce_grew WHAT TX RX MIN: qhca0 carried at least MIN bytes of RoCE each
# way since the counts TX and RX: what a stack moved went through qhca0's
# RDMA, not its NIC.
roce_grew() {
	local tx rx
	tx=$(($(roce_bytes tx_bytes) - $2)) rx=$(($(roce_bytes rx_bytes) - $3))
	[ "$tx" -ge "$4" ] && [ "$rx" -ge "$4" ]
	result "$1 went through $rdev: RoCE tx $tx B, rx $rx B (>= $4 each)"
}

# UCX on qhca0: its RC transport, which carries every message, with TCP
# on qhca0's own net_device for what RC cannot do itself, connecting
# (UCX's RC endpoints are wired up over an auxiliary transport).  UD, the
# auxiliary UCX picks first, never connects: UCX 1.18's ud_verbs wireup
# times out on qhca0 and between two rxe guests alike (Documentation/
# ulps.rst).  The parts check that the data went over RoCE.
ucx_net_devices="$rdev:1,$QHCA_NETDEV"
ucx_tls_used=self,rc_verbs,tcp

# step K: the pair's K-th meeting point in a part (lib.sh's pair_barrier);
# a partner that never comes is a failure of its own.
step() {
	pair_barrier "$1" || not_ok "$other reached step $1 of the part within ${arrive_s}s"
}

# tell K LINE (the lower guest) and hear K (the other): LINE from one
# guest of the pair to the other, on the pair's K-th port (lib.sh's
# pair_port), within $arrive_s.
tell() { serve_line "$(pair_port "$1")" "$other" "$2"; }
hear() { ask "$(resolve "$other")" "$(pair_port "$1")" "$arrive_s"; }

# diag: what the logs need when a part failed here: the kernel's last
# words, qhca0's hw counters and QPs.
diag() {
	echo "# diagnostics of $me"
	dmesg | tail -n 40 | show
	rdma statistic show link "$rdev/1" 2>&1 | show
	rdma res show qp 2>&1 | show
}

# listens PORT PID SECONDS: within SECONDS, something here listens on TCP
# port PORT: the server PID, started in the background, is ready for its
# client.  Ends early, false, if PID exits first.
listens() {
	local end=$((SECONDS + $3))
	until ss -Hltn "sport = :$1" | grep -q . || [ $SECONDS -ge $end ] ||
	      ! kill -0 "$2" 2>/dev/null; do
		sleep 0.2
	done
	ss -Hltn "sport = :$1" | grep -q .
}

# sums FILE...: the files' SHA-256 sums on one line.
sums() { sha256sum "$@" | awk '{ printf "%s%s", sep, $1; sep = " " } END { print "" }'; }

# The SCSI parts (iser, srp): a LIO target's LUN backed by a file on tmpfs
# (the target reads back what the initiator wrote), and the initiator's
# SCSI disk checked with dd and fio.
lio_cfs=/sys/kernel/config/target

# lio_fileio_start HBA NAME FILE: a 64 MiB file on a tmpfs of its own and
# a LIO fileio backstore core/HBA/NAME on it.  fileio opens the file with
# O_DSYNC (write_back off), no O_DIRECT, which tmpfs has not.
lio_fileio_start() {
	local d=$lio_cfs/core/$1/$2
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config || return 1
	mkdir -p "$(dirname "$3")"
	mountpoint -q "$(dirname "$3")" ||
		mount -t tmpfs -o size=96m "ulp-$2" "$(dirname "$3")" || return 1
	truncate -s 64m "$3" &&
	mkdir -p "$d" &&
	echo "fd_dev_name=$3,fd_dev_size=$((64 << 20))" > "$d/control" &&
	echo 1 > "$d/enable"
}

# lio_fileio_stop HBA NAME FILE: the backstore and its tmpfs gone.
lio_fileio_stop() {
	[ ! -d "$lio_cfs/core/$1/$2" ] || rmdir "$lio_cfs/core/$1/$2" || return 1
	[ ! -d "$lio_cfs/core/$1" ] || rmdir "$lio_cfs/core/$1" || return 1
	! mountpoint -q "$(dirname "$3")" || umount "$(dirname "$3")"
}

# sysfs_find ATTR VALUE DIR...: the first DIR whose file ATTR reads VALUE.
sysfs_find() {
	local a=$1 v=$2 d
	shift 2
	for d in "$@"; do
		[ "$(cat "$d/$a" 2>/dev/null)" = "$v" ] && { echo "$d"; return 0; }
	done
	return 1
}

# cm_to PORT: rdma res's line of an rdma_cm connection on this guest's
# device to the partner's address and PORT; fails without one.
cm_to() { rdma res show cm_id 2>&1 | grep "link $rdev/1 .* dst-addr $(resolve "$other"):$1 "; }

# scsi_disk FUNC: the SCSI disk of LUN 0 below the sysfs device FUNC
# prints (an iSCSI session, an SRP SCSI host), waited for (30 s at most).
scsi_disk() {
	local end=$((SECONDS + 30)) s d
	while [ $SECONDS -lt $end ]; do
		if s=$("$1"); then
			for d in "$s"/device/target*/*:0:0:0/block/sd*; do
				[ -b "/dev/${d##*/}" ] && { echo "/dev/${d##*/}"; return 0; }
			done
		fi
		sleep 0.2
	done
	return 1
}

# shown CMD...: CMD's output as TAP diagnostics, its exit status kept
# (a pipe into show would give show's).
shown() {
	local out rc
	out=$("$@" 2>&1)
	rc=$?
	[ -z "$out" ] || show <<< "$out"
	return $rc
}

# sum4m PATH: the SHA-256 of PATH's first 4 MiB (a block device read with
# O_DIRECT, past the page cache).
sum4m() {
	local flag=()
	[ ! -b "$1" ] || flag=(iflag=direct)
	dd if="$1" bs=64k count=64 "${flag[@]}" 2>/dev/null | sha256sum | cut -d' ' -f1
}

# blk_fio PART DEV RW BS QD: fio writes 2 MiB at 8 MiB into the block
# device DEV and reads it back, every block's crc32c checked.
blk_fio() {
	local out="" rc=1 t0=$SECONDS
	# A missing disk must not become a file fio writes in /dev.
	[ -b "$2" ] &&
	out=$(timeout -s KILL 180 fio --name="$1-$3-$5" --filename="$2" --rw="$3" --bs="$4" \
		--iodepth="$5" --ioengine=libaio --direct=1 --offset=8m --size=2m \
		--verify=crc32c --verify_fatal=1 --verify_state_save=0 2>&1)
	rc=$?
	grep -E 'err=|verify|WRITE:|READ:' <<< "${out:-}" | show
	[ $rc = 0 ] && grep -q ' err= 0' <<< "$out"
	result "$1: fio --verify $3 bs=$4 iodepth=$5 on $2, 2 MiB written and verified ($((SECONDS - t0)) s)"
}
