# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Part "nvme" of the ulp suite (sourced by suite.sh): NVMe over RDMA.  The
# lower guest is an nvmet target (configfs) with an rdma port on its
# address and a namespace backed by a file on tmpfs, so that the data the
# host writes can be read on the target side; the other connects with
# nvme connect -t rdma: data written by dd checksummed on both sides, fio
# --verify sequential and random at queue depth 1 and 32; the target's
# qhca0 link down and up: the host reconnects and a read that waited
# returns the data; disconnect and reconnect (the data is still there);
# then the target withdraws its port
# while the host is connected: the host's I/O fails with an error, no hang.

nvme_nqn=nqn.2026-12.org.qhca:ulp
nvme_cfs=/sys/kernel/config/nvmet
nvme_img=/srv/ulp-nvme/ns1.img

nvme_target_start() {
	mkdir -p "$(dirname "$nvme_img")"
	mountpoint -q "$(dirname "$nvme_img")" ||
		mount -t tmpfs -o size=96m ulp-nvme "$(dirname "$nvme_img")" || return 1
	truncate -s 64m "$nvme_img" || return 1
	nvmet_rdma_start "$nvme_nqn" "$nvme_img" 1
}

nvme_target_stop() {
	local s=$nvme_cfs/subsystems/$nvme_nqn p=$nvme_cfs/ports/1
	[ ! -e "$p/subsystems/$nvme_nqn" ] || rm "$p/subsystems/$nvme_nqn" || return 1
	[ ! -d "$p" ] || rmdir "$p" || return 1
	[ ! -d "$s/namespaces/1" ] || rmdir "$s/namespaces/1" || return 1
	[ ! -d "$s" ] || rmdir "$s"
}

# nvme_dev: the block device of our namespace (waited for, bounded).
nvme_dev() { nvme_disk "$nvme_nqn"; }

# nvme_gone: no controller of ours is left, within 30 s.
nvme_gone() {
	local end=$((SECONDS + 30)) c left
	while :; do
		left=0
		for c in /sys/class/nvme/nvme*; do
			[ "$(cat "$c/subsysnqn" 2>/dev/null)" = "$nvme_nqn" ] && left=1
		done
		[ $left = 0 ] && return 0
		[ $SECONDS -lt $end ] || return 1
		sleep 0.2
	done
}

# nvme_state_not STATE: wait (60 s at most) until our controller's state
# is neither STATE nor resetting/connecting on the way; the state in $state.
nvme_state_not() {
	local end=$((SECONDS + 60)) c
	while :; do
		state=none
		for c in /sys/class/nvme/nvme*; do
			[ "$(cat "$c/subsysnqn" 2>/dev/null)" = "$nvme_nqn" ] &&
				state=$(cat "$c/state" 2>/dev/null)
		done
		case $1:$state in
		live:live | connecting:connecting | connecting:resetting) ;;
		*) [ "$state" != none ] && return 0 ;;
		esac
		[ $SECONDS -lt $end ] || return 1
		sleep 0.2
	done
}

nvme_connect() {
	local out
	out=$(timeout 60 nvme connect -t rdma -a "$(resolve "$other")" -s "$nvme_svc" \
		-n "$nvme_nqn" "$@" 2>&1)
	local rc=$?
	show <<< "$out"
	[ $rc = 0 ]
}

nvme_target() {
	local before
	before=$(res_now)
	nvme_target_start
	result "nvme: nvmet subsystem $nvme_nqn, file-backed namespace, rdma port $my_addr:$nvme_svc"
	step 1
	# The host has written 4 MiB at offset 0.
	step 2
	tell 3 "$(head -c 4m "$nvme_img" | sha256sum | cut -d' ' -f1)"
	result "nvme: told $other the sum of the namespace's first 4 MiB"
	# The host is done with fio: the target's port goes down (its wire
	# drops every packet, the barriers' TCP too), until the target's own
	# keep-alive timer (5 s, the host's choice) ends the controller; then
	# the port comes back.
	step 7
	mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
	echo link_down > "/sys/kernel/debug/qhca/$rdev/inject"
	result "nvme: the target's port down (link_down)"
	local end=$((SECONDS + 60))
	until dmesg | grep -q 'nvmet: .*keep-alive timer .* expired'; do
		[ $SECONDS -lt $end ] || break
		sleep 0.5
	done
	dmesg | grep -q 'nvmet: .*keep-alive timer .* expired'
	result "nvme: the target's controller ends at its keep-alive timeout"
	echo link_up > "/sys/kernel/debug/qhca/$rdev/inject"
	result "nvme: the target's port up again (link_up)"
	# The host has connected again, with a short controller loss timeout.
	step 4
	rm "$nvme_cfs/ports/1/subsystems/$nvme_nqn"
	result "nvme: the target withdraws its port from the subsystem"
	step 5
	# The host is done.
	step 6
	nvme_target_stop
	result "nvme: target torn down (port, namespace, subsystem)"
	res_back "nvme target" "$before"
	dmesg_clean "nvme target"
}

nvme_host() {
	local before dev want got t0 rc pid
	head -c 4m /dev/urandom > /tmp/ulp-nvme-4m
	want=$(sha256sum < /tmp/ulp-nvme-4m | cut -d' ' -f1)
	before=$(res_now)
	step 1
	nvme_connect --reconnect-delay=1 --keep-alive-tmo=5
	result "nvme: nvme connect -t rdma to $other"
	dev=$(nvme_dev)
	result "nvme: the namespace's block device appears (${dev:-none})"
	# A missing namespace must not become a file dd writes in /dev.
	[ -b "$dev" ] && shown dd if=/tmp/ulp-nvme-4m of="$dev" bs=64k oflag=direct
	result "nvme: dd wrote 4 MiB at offset 0"
	step 2
	got=$(hear 3)
	[ "$got" = "$want" ]
	result "nvme: the target's file holds the 4 MiB the host wrote"
	blk_fio nvme "$dev" write 128k 1
	blk_fio nvme "$dev" write 128k 32
	blk_fio nvme "$dev" randwrite 4k 1
	blk_fio nvme "$dev" randwrite 4k 32
	step 7
	# The target's port is down: keep-alive (5 s) fails, the controller
	# leaves "live" and reconnects every second; a read issued meanwhile
	# is queued until it is back (no barrier: the segment is down).
	nvme_state_not live
	result "nvme: with the target's port down the controller leaves live ($state)"
	t0=$SECONDS
	dd if="$dev" bs=64k count=64 iflag=direct 2>/dev/null | sha256sum > /tmp/ulp-nvme-read &
	pid=$!
	while kill -0 "$pid" 2>/dev/null && [ $((SECONDS - t0)) -lt 120 ]; do sleep 0.5; done
	kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
	wait "$pid"
	[ "$(cut -d' ' -f1 /tmp/ulp-nvme-read)" = "$want" ]
	result "nvme: the read issued while reconnecting returns the data ($((SECONDS - t0)) s)"
	nvme_state_not connecting && [ "$state" = live ]
	result "nvme: the controller is live again ($state)"
	timeout 60 nvme disconnect -n "$nvme_nqn" | show
	nvme_gone
	result "nvme: nvme disconnect: the controller is gone"
	# Reconnect with a short loss timeout, for the port's withdrawal below.
	nvme_connect --ctrl-loss-tmo=3 --reconnect-delay=1
	result "nvme: nvme connect again"
	dev=$(nvme_dev) || dev=/dev/nonexistent
	got=$(dd if="$dev" bs=64k count=64 iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1)
	[ "$got" = "$want" ]
	result "nvme: after the reconnect the first 4 MiB read back intact"
	step 4
	# The target has withdrawn its port: I/O fails once the controller's
	# loss timeout ends its reconnects, not hang.
	step 5
	t0=$SECONDS
	rc=none
	[ -b "$dev" ] && {
		shown timeout 120 dd if="$dev" of=/dev/null bs=64k count=64 skip=128 iflag=direct
		rc=$?
	}
	[ "$rc" != none ] && [ "$rc" != 0 ] && [ "$rc" != 124 ]
	result "nvme: with the target's port withdrawn, I/O fails with an error ($((SECONDS - t0)) s, dd status $rc)"
	nvme disconnect -n "$nvme_nqn" > /dev/null 2>&1
	nvme_gone
	result "nvme: the host's controller is gone"
	res_back "nvme host" "$before"
	dmesg_clean "nvme host"
	step 6
}

nvme_pair() {
	if [ "$lower" = 1 ]; then nvme_target; else nvme_host; fi
}
# nvme_kill.sh sources this file for its functions alone.
[ "${nvme_functions_only:-0}" = 1 ] && return 0
ulp_modprobe -a nvmet-rdma nvme-rdma
result "nvme: modprobe nvmet-rdma nvme-rdma"
for_each_pair 6 nvme_pair
