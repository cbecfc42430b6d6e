# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Part "nfs" of the ulp suite (sourced by suite.sh): NFS over RDMA.  The
# lower guest runs nfsd with the RDMA port 20049 on a tmpfs export, the
# other mounts it with -o rdma: files of 1 B to 64 MiB written with cp
# (buffered: several WRITEs in flight, each pulled by the server with RDMA
# READs), checksummed on both sides, read back after a remount; a minute
# of fio --verify, sequential and random at once; NFSv3 too; the
# server stopped while the client writes, then started again: the client's
# write completes with its data.  Every mount is checked to be on the rdma
# transport (/proc/self/mountstats), so a mount that fell back to TCP fails.

nfs_dir=/srv/ulp-nfs
nfs_mnt=/mnt/ulp-nfs
nfs_src=/tmp/ulp-nfs-src
nfs_files=(f1 f4k f1m f4m f64m)
declare -A nfs_size=([f1]=1 [f4k]=4096 [f1m]=1048576 [f4m]=4194304 [f64m]=67108864)

# nfs_mount VERS: mount the export over RDMA, NFS version VERS; fails
# unless the mount is on the rdma transport.
nfs_mount() {
	local opts="rdma,port=$nfs_port,vers=$1" out xprt
	[ "$1" != 3 ] || opts+=",nolock"
	out=$(timeout 90 mount -t nfs -o "$opts" "$other:$nfs_dir" "$nfs_mnt" 2>&1)
	[ -z "$out" ] || show <<< "$out"
	xprt=$(nfs_transport "$nfs_mnt")
	grep " $nfs_mnt " /proc/mounts | show
	echo "# mountstats: xprt ${xprt:-none}"
	[ "$xprt" = rdma ]
}

nfs_unmount() { timeout 60 umount "$nfs_mnt"; }

# nfs_fio: a minute of fio --verify on the mount (nfs_fio_s seconds), two
# jobs at once, O_DIRECT with several I/Os in flight: 128 KiB sequential
# and 4 KiB random writes, every 16 blocks written read back and their
# crc32c checked while the job runs (verify_backlog), not only once it
# has ended.  fio's figures leave out the reads of its verification: the
# client's O_DIRECT read bytes (/proc/self/mountstats) show the data came
# back.
nfs_fio_s=${ULP_NFS_FIO_S:-60}
nfs_fio() {
	local rd0 rd1 rc sum json=/tmp/ulp-nfs-fio.json
	rd0=$(nfs_read_bytes)
	rm -f "$json"
	(cd "$nfs_mnt" && timeout -s KILL $((nfs_fio_s + 120)) fio \
		--direct=1 --ioengine=libaio --time_based --runtime="$nfs_fio_s" \
		--verify=crc32c --verify_backlog=16 --verify_fatal=1 --verify_state_save=0 \
		--output-format=json --output="$json" \
		--name=ulp-nfs-seq --rw=write --bs=128k --iodepth=4 --size=8m \
		--name=ulp-nfs-rand --rw=randwrite --bs=4k --iodepth=8 --size=8m) 2>&1 | show
	rc=${PIPESTATUS[0]}
	rd1=$(nfs_read_bytes)
	rd0=$((${rd1:-0} - ${rd0:-0}))
	# Each job's error and bytes written ("NAME error E written B").
	sum=$(python3 -c '
import json, sys
for job in json.load(open(sys.argv[1]))["jobs"]:
    print(job["jobname"], "error", job["error"], "written", job["write"]["io_bytes"])
' "$json" 2>&1) || sum="fio left no result: $sum"
	show <<< "$sum"
	[ "$rc" = 0 ] && [ "$(grep -c ' error 0 written [1-9]' <<< "$sum")" = 2 ]
	result "nfs: fio --verify=crc32c for $nfs_fio_s s, 128 KiB sequential and 4 KiB random O_DIRECT writes at once: no error, data written"
	# At least half of what was written read back (the blocks of each
	# job's last backlog may be left unread at the time limit).
	[ "$rd0" -gt 0 ] &&
		[ $((2 * rd0)) -ge "$(awk '{ t += $5 } END { print t + 0 }' <<< "$sum")" ]
	result "nfs: fio read back what it wrote to verify it ($rd0 bytes)"
}

# nfs_read_bytes: the O_DIRECT bytes read on the mount so far, as the
# client counts them (mountstats' "bytes:" line, its third figure).
nfs_read_bytes() {
	awk -v m="$nfs_mnt" '
		$1 == "device" { on = ($5 == m) }
		on && $1 == "bytes:" { print $4; exit }' /proc/self/mountstats
}

nfs_server() {
	local before
	mkdir -p "$nfs_dir" /var/lib/nfs/v4recovery
	mount -t tmpfs -o size=256m ulp-nfs "$nfs_dir"
	echo "$nfs_dir 10.0.0.0/24(rw,sync,no_root_squash,no_subtree_check,insecure,fsid=1)" > /etc/exports
	before=$(res_now)
	nfsd_rdma_start
	result "nfs: nfsd serves $nfs_dir with the rdma port $nfs_port"
	step 1
	# The client has written its files: their sums here, for it to compare.
	step 2
	tell 3 "$(cd "$nfs_dir" && sums "${nfs_files[@]}")"
	result "nfs: told $other the sums of the files it wrote"
	# The client has mounted again and is idle: stop the server.
	step 4
	rpc.nfsd 0
	result "nfs: nfsd stopped while $other has the export mounted"
	step 5
	# The client's write has started and waits for the server.
	step 6
	nfsd_rdma_start
	result "nfs: nfsd started again"
	step 7
	# The client is done and has unmounted.
	step 8
	rpc.nfsd 0 && exportfs -ua
	result "nfs: nfsd stopped, exports withdrawn"
	res_back "nfs server" "$before"
	dmesg_clean "nfs server"
}

nfs_client() {
	local before f want got pid out rc t0
	mkdir -p "$nfs_mnt" "$nfs_src"
	for f in "${nfs_files[@]}"; do
		head -c "${nfs_size[$f]}" /dev/urandom > "$nfs_src/$f"
	done
	want=$(cd "$nfs_src" && sums "${nfs_files[@]}")
	before=$(res_now)
	step 1
	nfs_mount 4.2
	result "nfs: mount -o rdma,vers=4.2 $other:$nfs_dir: transport rdma"
	for f in "${nfs_files[@]}"; do
		t0=$SECONDS
		timeout -s KILL 120 cp "$nfs_src/$f" "$nfs_mnt/$f"
		result "nfs: cp wrote $f, ${nfs_size[$f]} bytes ($((SECONDS - t0)) s)"
	done
	step 2
	got=$(hear 3)
	[ -n "$want" ] && [ "$got" = "$want" ]
	result "nfs: $other's sums of the files equal the written data's"
	nfs_unmount && nfs_mount 4.2
	result "nfs: unmount and mount again: transport rdma"
	got=$(cd "$nfs_mnt" && sums "${nfs_files[@]}")
	[ "$got" = "$want" ]
	result "nfs: the files read back after the remount equal the written data"
	nfs_fio
	nfs_unmount && nfs_mount 3
	result "nfs: mount -o rdma,vers=3: transport rdma"
	got=$(sums "$nfs_mnt/f1m")
	[ "$got" = "$(sums "$nfs_src/f1m")" ]
	result "nfs: NFSv3 reads the 1 MiB file back intact"
	nfs_unmount && nfs_mount 4.2
	result "nfs: mount -o rdma,vers=4.2 again for the server restart"
	step 4
	# The server stops now; once it has, write with O_DIRECT (no page
	# cache to absorb it): the write can only end once the server is back.
	step 5
	dd if="$nfs_src/f1m" of="$nfs_mnt/restart" bs=64k oflag=direct 2> /tmp/ulp-nfs-dd.log &
	pid=$!
	kill -0 "$pid" 2>/dev/null
	result "nfs: a write to the stopped server waits"
	step 6
	step 7
	local end=$((SECONDS + 180))
	while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $end ]; do sleep 0.5; done
	kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
	wait "$pid"
	result "nfs: the write completes once the server is back ($((SECONDS - end + 180)) s)"
	show < /tmp/ulp-nfs-dd.log
	got=$(dd if="$nfs_mnt/restart" bs=64k iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1)
	[ "$got" = "$(sha256sum < "$nfs_src/f1m" | cut -d' ' -f1)" ]
	result "nfs: the file written across the restart reads back intact"
	nfs_unmount
	result "nfs: unmount"
	res_back "nfs client" "$before"
	dmesg_clean "nfs client"
	step 8
}

nfs_pair() {
	if [ "$lower" = 1 ]; then nfs_server; else nfs_client; fi
}
ulp_modprobe -a rpcrdma nfsd nfsv4 nfsv3
result "nfs: modprobe rpcrdma nfsd nfsv4 nfsv3 (Debian's kernel has all four)"
for_each_pair 5 nfs_pair
