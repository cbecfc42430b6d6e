# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Part "iser" of the ulp suite (sourced by suite.sh): iSCSI with iSER.  The
# lower guest is a LIO iSCSI target (ib_isert) with one LUN backed by a
# file on tmpfs and a portal on its address with iSER enabled; the other
# runs open-iscsi's iscsid and logs in with iscsiadm through the "iser"
# iface (ib_iser): SendTargets discovery, login, 4 MiB written by dd
# checksummed on both sides, fio --verify sequential and random, logout
# (the session and ib_iser's hold on qhca0 gone), login again: the data is
# still there.  Every session is checked to be iSER (iscsiadm's "Iface
# Transport", ib_iser in use, an rdma_cm connection to the portal on
# qhca0), so a login that fell back to TCP fails.
#
# The target is set up through configfs, not targetcli: targetcli-fb
# exits 255 in the guest ("g-io-error-quark: Could not connect"): its
# backstores node asks the D-Bus system bus for tcmu-runner's handlers
# (Gio.bus_get_sync in ui_backstore.py, outside its try), and the guest
# has no system bus; it also takes 5 s a call under TCG.

iser_iqn=iqn.2026-12.org.qhca:ulp-iser
iser_hba=fileio_7
iser_img=/srv/ulp-iser/lun0.img
iser_svc=3260

iser_target_start() {
	local t=$lio_cfs/iscsi/$iser_iqn/tpgt_1
	lio_fileio_start "$iser_hba" ulp_iser "$iser_img" || return 1
	mkdir -p "$t/lun/lun_0" &&
	ln -s "$lio_cfs/core/$iser_hba/ulp_iser" "$t/lun/lun_0/ulp_iser" &&
	mkdir "$t/np/$my_addr:$iser_svc" &&
	echo 1 > "$t/np/$my_addr:$iser_svc/iser" &&
	# No ACLs: any initiator may log in, without CHAP, and write.
	echo 0 > "$t/attrib/authentication" &&
	echo 1 > "$t/attrib/generate_node_acls" &&
	echo 1 > "$t/attrib/cache_dynamic_acls" &&
	echo 0 > "$t/attrib/demo_mode_write_protect" &&
	echo 1 > "$t/enable"
}

iser_target_stop() {
	local t=$lio_cfs/iscsi/$iser_iqn/tpgt_1 np=$my_addr:$iser_svc
	if [ -d "$t" ]; then
		echo 0 > "$t/enable"
		[ ! -e "$t/np/$np/iser" ] || echo 0 > "$t/np/$np/iser" || return 1
		[ ! -d "$t/np/$np" ] || rmdir "$t/np/$np" || return 1
		[ ! -L "$t/lun/lun_0/ulp_iser" ] || rm "$t/lun/lun_0/ulp_iser" || return 1
		[ ! -d "$t/lun/lun_0" ] || rmdir "$t/lun/lun_0" || return 1
		rmdir "$t" || return 1
	fi
	[ ! -d "$lio_cfs/iscsi/$iser_iqn" ] || rmdir "$lio_cfs/iscsi/$iser_iqn" || return 1
	lio_fileio_stop "$iser_hba" ulp_iser "$iser_img"
}

# iscsid: open-iscsi's daemon, which iscsiadm asks to log in (the image has
# no systemd to start it on demand), in the foreground as our child, with
# an initiator name of this guest's own (the image's is every guest's).
iscsid_pid=""
iscsid_start() {
	local end=$((SECONDS + 30))
	mkdir -p /run/lock/iscsi
	echo "InitiatorName=iqn.2026-12.org.qhca:$me" > /etc/iscsi/initiatorname.iscsi
	# A session of its own: iscsid ends by signalling its whole process
	# group, which would otherwise be this suite's.
	setsid iscsid -f -n > /tmp/ulp-iscsid.log 2>&1 &
	iscsid_pid=$!
	# iscsiadm reaches it on an abstract unix socket.
	until grep -q '@ISCSIADM_ABSTRACT_NAMESPACE' /proc/net/unix; do
		kill -0 "$iscsid_pid" 2>/dev/null && [ $SECONDS -lt $end ] || return 1
		sleep 0.2
	done
}

# iscsid_stop: iscsiadm -k 0 tells iscsid to end now; it does, within 30 s.
iscsid_stop() {
	local end=$((SECONDS + 30))
	[ -n "$iscsid_pid" ] || return 0
	shown timeout 10 iscsiadm -k 0
	while kill -0 "$iscsid_pid" 2>/dev/null && [ $SECONDS -lt $end ]; do sleep 0.2; done
	if kill -0 "$iscsid_pid" 2>/dev/null; then
		ps -ef | show
		kill -9 "$iscsid_pid"
		wait "$iscsid_pid"
		iscsid_pid=""
		show < /tmp/ulp-iscsid.log
		return 1
	fi
	wait "$iscsid_pid"
	iscsid_pid=""
	show < /tmp/ulp-iscsid.log
}

iser_adm() { shown timeout 90 iscsiadm "$@"; }

# iser_session: the sysfs session of our target, or nothing.
iser_session() { sysfs_find targetname "$iser_iqn" /sys/class/iscsi_session/session*; }

# iser_is_iser: the session is on the iser transport, ib_iser holds it and
# qhca0 carries its rdma_cm connection to the portal.
iser_is_iser() {
	local p3 refs cm
	p3=$(iscsiadm -m session -P 3 2>&1)
	grep -E 'Iface Transport|Current Portal|Attached scsi disk|iSCSI Session State' <<< "$p3" | show
	refs=$(cat /sys/module/ib_iser/refcnt)
	echo "# ib_iser refcnt $refs"
	cm=$(cm_to "$iser_svc")
	show <<< "$cm"
	grep -qE '^[[:space:]]*Iface Transport: iser$' <<< "$p3" && [ "$refs" -gt 0 ] && [ -n "$cm" ]
}

iser_login() {
	iser_adm -m node -T "$iser_iqn" -p "$(resolve "$other"):$iser_svc" -I iser --login
}

iser_logout() {
	iser_adm -m node -T "$iser_iqn" -p "$(resolve "$other"):$iser_svc" -I iser --logout
}

iser_target() {
	local before
	before=$(res_now)
	iser_target_start
	result "iser: LIO target $iser_iqn, fileio LUN on tmpfs, iSER portal $my_addr:$iser_svc"
	step 1
	# The initiator has written 4 MiB at offset 0.
	step 2
	tell 3 "$(sum4m "$iser_img")"
	result "iser: told $other the sum of the LUN's first 4 MiB"
	# The initiator is done.
	step 4
	iser_target_stop
	result "iser: target torn down (portal, LUN, target, backstore)"
	res_back "iser target" "$before"
	dmesg_clean "iser target"
}

iser_initiator() {
	local before dev want got
	head -c 4m /dev/urandom > /tmp/ulp-iser-4m
	want=$(sum4m /tmp/ulp-iser-4m)
	before=$(res_now)
	iscsid_start
	result "iser: iscsid runs"
	step 1
	iser_adm -m discovery -t sendtargets -p "$(resolve "$other"):$iser_svc" -I iser
	result "iser: iscsiadm SendTargets discovery of $other through the iser iface"
	iser_adm -m node -T "$iser_iqn" -I iser
	result "iser: discovery recorded $iser_iqn on the iser iface"
	iser_login
	result "iser: iscsiadm login to $iser_iqn"
	iser_is_iser
	result "iser: the session is iSER (iface transport iser, ib_iser in use, rdma_cm on $rdev)"
	dev=$(scsi_disk iser_session)
	result "iser: the LUN's SCSI disk appears (${dev:-none})"
	[ -b "$dev" ] && shown dd if=/tmp/ulp-iser-4m of="$dev" bs=64k oflag=direct
	result "iser: dd wrote 4 MiB at offset 0"
	step 2
	got=$(hear 3)
	[ "$got" = "$want" ]
	result "iser: the target's file holds the 4 MiB the initiator wrote"
	blk_fio iser "$dev" write 128k 1
	blk_fio iser "$dev" randwrite 4k 32
	iser_logout && ! iser_session > /dev/null
	result "iser: logout: the session is gone"
	[ "$(cat /sys/module/ib_iser/refcnt)" = 0 ]
	result "iser: ib_iser holds nothing after the logout"
	iser_login && iser_is_iser
	result "iser: login again, iSER"
	dev=$(scsi_disk iser_session)
	[ -b "$dev" ] && [ "$(sum4m "$dev")" = "$want" ]
	result "iser: after the new login the first 4 MiB read back intact"
	iser_logout && iser_adm -m node -o delete -T "$iser_iqn" && ! iser_session > /dev/null
	result "iser: logout, node record deleted"
	iscsid_stop
	result "iser: iscsid ends"
	res_back "iser initiator" "$before"
	dmesg_clean "iser initiator"
	step 4
}

iser_pair() {
	if [ "$lower" = 1 ]; then iser_target; else iser_initiator; fi
}
# Both ends ask the crypto API for crc32c by name (the digests, even when
# none is negotiated), which request_module cannot load from $kroot.
# sd_mod: the initiator's SCSI disk.
ulp_modprobe -a crc32c_generic sd_mod iscsi_target_mod target_core_file ib_isert ib_iser
result "iser: modprobe crc32c_generic sd_mod iscsi_target_mod target_core_file ib_isert ib_iser"
for_each_pair 7 iser_pair
