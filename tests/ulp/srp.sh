# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Part "srp" of the ulp suite (sourced by suite.sh): SRP over rdma_cm.  The
# lower guest is a LIO SRP target (ib_srpt, configfs) with one LUN backed
# by a file on tmpfs and ib_srpt's rdma_cm listener on port 5555; the other
# logs in with ib_srp's add_target (dest=ADDRESS:5555: on RoCE there is no
# SRP device management, so srp_daemon and ibsrpdm do not apply): 4 MiB
# written by dd checksummed on both sides, fio --verify sequential and
# random; the target port deleted (srp_remote_ports' delete) and added
# again: the data is still there.  Every login is checked to be SRP on
# qhca0 (the SCSI host's local_ib_device, an rdma_cm connection to port
# 5555).
#
# ib_srpt names an rdma_cm login after the target's own address (the
# passive side's route.addr.src_addr) in the port named by GUID, and after
# the initiator's port id in the port named by GID: the target is the GID
# port "0x<GID 0>", its ACL the initiator's port id, initiator_ext then
# the initiator's GID 0 interface id, which the initiator tells the target.

srp_hba=fileio_8
srp_img=/srv/ulp-srp/lun0.img
srp_cm_port=5555
srp_ext=0000000000000001
srp_cfs=$lio_cfs/srpt

# srp_gid0 DEV: DEV's GID 0 as 32 hex digits.
srp_gid0() {
	local g
	g=$(cat "/sys/class/infiniband/$1/ports/1/gids/0") || return 1
	echo "${g//:/}"
}

# srp_target_start IPORT: the GID port, its TPG with the LUN, an ACL for
# the initiator's port id IPORT, the rdma_cm listener.
srp_target_start() {
	local tp
	tp=$srp_cfs/0x$(srp_gid0 "$rdev") || return 1
	lio_fileio_start "$srp_hba" ulp_srp "$srp_img" &&
	mkdir -p "$srp_cfs" &&
	echo "$srp_cm_port" > "$srp_cfs/discovery_auth/rdma_cm_port" &&
	mkdir -p "$tp/${tp##*/}/lun/lun_0" &&
	ln -s "$lio_cfs/core/$srp_hba/ulp_srp" "$tp/${tp##*/}/lun/lun_0/ulp_srp" &&
	mkdir -p "$tp/${tp##*/}/acls/$1/lun_0" &&
	ln -s "$tp/${tp##*/}/lun/lun_0" "$tp/${tp##*/}/acls/$1/lun_0/ulp_srp" &&
	echo 1 > "$tp/${tp##*/}/enable"
}

srp_target_stop() {
	local tp t a
	tp=$srp_cfs/0x$(srp_gid0 "$rdev") || return 1
	t=$tp/${tp##*/}
	if [ -d "$t" ]; then
		echo 0 > "$t/enable"
		for a in "$t"/acls/*; do
			[ -d "$a" ] || continue
			[ ! -L "$a/lun_0/ulp_srp" ] || rm "$a/lun_0/ulp_srp" || return 1
			[ ! -d "$a/lun_0" ] || rmdir "$a/lun_0" || return 1
			rmdir "$a" || return 1
		done
		[ ! -L "$t/lun/lun_0/ulp_srp" ] || rm "$t/lun/lun_0/ulp_srp" || return 1
		[ ! -d "$t/lun/lun_0" ] || rmdir "$t/lun/lun_0" || return 1
		rmdir "$t" || return 1
	fi
	[ ! -d "$tp" ] || rmdir "$tp" || return 1
	# Port 0: no listener.
	echo 0 > "$srp_cfs/discovery_auth/rdma_cm_port" &&
	lio_fileio_stop "$srp_hba" ulp_srp "$srp_img"
}

# srp_host: the SCSI host of our target (its id_ext the target's GUID), or
# nothing.
srp_host() { sysfs_find id_ext "0x$srp_guid" /sys/class/scsi_host/host*; }

# srp_add: log in to the target through qhca0's SRP port.
srp_add() {
	local a
	a="id_ext=$srp_guid,ioc_guid=$srp_guid,initiator_ext=$srp_ext"
	a+=",dest=$(resolve "$other"):$srp_cm_port"
	echo "# add_target $a"
	echo "$a" > "/sys/class/infiniband_srp/srp-$rdev-1/add_target"
}

# srp_is_srp: the host is ib_srp's on qhca0 with an rdma_cm connection to
# the target's listener.
srp_is_srp() {
	local h cm
	h=$(srp_host) || return 1
	echo "# ${h##*/}: $(cat "$h/local_ib_device") port $(cat "$h/local_ib_port")," \
		"id_ext $(cat "$h/id_ext"), dgid $(cat "$h/dgid" 2>/dev/null)"
	cm=$(cm_to "$srp_cm_port")
	show <<< "$cm"
	[ "$(cat "$h/local_ib_device")" = "$rdev" ] && [ -n "$cm" ]
}

# srp_delete BEFORE: delete our target port; within 30 s its SCSI host is
# gone and qhca0's objects are back to BEFORE (rdma res).  ib_srp drops the
# target from its list (until then add_target of the same target is
# refused, EEXIST) right after it has freed the last of them, its QPs and
# CQs; no file in sysfs shows that moment itself (the SCSI host and the
# rdma_cm id go first).
srp_delete() {
	local h end=$((SECONDS + 30)) p
	h=$(srp_host) || return 1
	p=/sys/class/srp_remote_ports/port-${h##*/host}:1
	echo 1 > "$p/delete" || return 1
	while srp_host > /dev/null || [ "$(res_now)" != "$1" ]; do
		[ $SECONDS -lt $end ] || return 1
		sleep 0.2
	done
}

srp_target() {
	local before iport
	before=$(res_now)
	step 1
	# The initiator's port id: its initiator_ext and GID 0 interface id.
	iport=$(ask "$(resolve "$other")" "$(pair_port 1)" "$arrive_s")
	[ -n "$iport" ]
	result "srp: $other told its SRP initiator port id (${iport:-none})"
	srp_target_start "${iport:-none}"
	result "srp: ib_srpt port 0x$(srp_gid0 "$rdev"), fileio LUN on tmpfs, ACL $iport, rdma_cm port $srp_cm_port"
	tell 2 "$(sed 's/^0x//' /sys/module/ib_srpt/parameters/srpt_service_guid)"
	result "srp: told $other ib_srpt's service GUID"
	# The initiator has written 4 MiB at offset 0.
	step 3
	tell 4 "$(sum4m "$srp_img")"
	result "srp: told $other the sum of the LUN's first 4 MiB"
	# The initiator is done.
	step 5
	srp_target_stop
	result "srp: target torn down (ACL, LUN, port, listener, backstore)"
	res_back "srp target" "$before"
	dmesg_clean "srp target"
}

srp_initiator() {
	local before dev want g
	head -c 4m /dev/urandom > /tmp/ulp-srp-4m
	want=$(sum4m /tmp/ulp-srp-4m)
	before=$(res_now)
	step 1
	g=$(srp_gid0 "$rdev")
	serve_line "$(pair_port 1)" "$other" "0x$srp_ext${g:16}"
	srp_guid=$(hear 2)
	[ -n "$srp_guid" ]
	result "srp: $other told ib_srpt's service GUID (${srp_guid:-none})"
	srp_add
	result "srp: add_target to $other:$srp_cm_port"
	srp_is_srp
	result "srp: the SCSI host is ib_srp's on $rdev, rdma_cm to $other:$srp_cm_port"
	dev=$(scsi_disk srp_host)
	result "srp: the LUN's SCSI disk appears (${dev:-none})"
	[ -b "$dev" ] && shown dd if=/tmp/ulp-srp-4m of="$dev" bs=64k oflag=direct
	result "srp: dd wrote 4 MiB at offset 0"
	step 3
	[ "$(hear 4)" = "$want" ]
	result "srp: the target's file holds the 4 MiB the initiator wrote"
	blk_fio srp "$dev" write 128k 1
	blk_fio srp "$dev" randwrite 4k 32
	srp_delete "$before"
	result "srp: the target port deleted: its SCSI host, QPs and CQs are gone"
	srp_add && srp_is_srp
	result "srp: add_target again, on $rdev"
	dev=$(scsi_disk srp_host)
	[ -b "$dev" ] && [ "$(sum4m "$dev")" = "$want" ]
	result "srp: after the new login the first 4 MiB read back intact"
	srp_delete "$before"
	result "srp: the target port deleted again"
	res_back "srp initiator" "$before"
	dmesg_clean "srp initiator"
	step 5
}

srp_guid=""
srp_pair() {
	if [ "$lower" = 1 ]; then srp_target; else srp_initiator; fi
}
ulp_modprobe -a sd_mod target_core_file ib_srpt ib_srp
result "srp: modprobe sd_mod target_core_file ib_srpt ib_srp"
for_each_pair 8 srp_pair
