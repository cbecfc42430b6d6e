#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The package test, in the guest tools/build/guest-packages builds (trixie,
# dkms and the guest kernel's headers; neither qhca.ko nor our provider):
# qhca as a user with their own guest gets it.  The .debs of make deb are
# copied from the repository's share (tools/vm, booted with --no-load), the
# share is then detached, and from there on only the installed packages
# are used: apt installs them offline, DKMS builds qhca.ko for the running
# kernel, modprobe loads it, and the stock ibv_devinfo, ibv_rc_pingpong and
# ib_write_bw (server and client in this guest) use qhca0 through the
# provider the package installed.  Removing the packages removes the
# module and the provider.  One TAP line per step; a failed step that the
# next ones need ends the test there.
#
#   install.sh            DKMS gets qhca.ko ready built: before the install,
#                         "dkms ldtarball" of make deb's DKMS tarball (the
#                         package's source, compiled on the host for this
#                         kernel as DKMS compiles it), and installing the
#                         package installs that build; make check's way,
#                         where the compile under TCG takes 30 minutes
#   install.sh --compile  DKMS compiles qhca.ko here, as on a user's guest
#
# Environment: QHCA_DEB_DIR (the .debs, default build/deb of the share).
set -uo pipefail
# shellcheck source=../shell/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../shell/lib.sh"

compile=0
case ${1:-} in
--compile) compile=1 ;;
"") ;;
*) echo "usage: install.sh [--compile]" >&2; exit 2 ;;
esac
debs=${QHCA_DEB_DIR:-$QHCA_TOP/build/deb}
work=/root/qhca-packages
provdir=/usr/lib/x86_64-linux-gnu/libibverbs
kver=$(uname -r)
export DEBIAN_FRONTEND=noninteractive

# step_fail NAME LOG: NAME failed, with LOG's end as diagnostics.
step_fail() {
	result "not ok" "$1"
	[ -z "${2:-}" ] || [ ! -f "$2" ] || diag_file "$2" 40
}

# give_up: a step the rest need failed; the plan is what ran.
give_up() {
	echo "1..$num"
	exit 1
}

echo "TAP version 13"
mkdir -p "$work"

# The provider built for this guest's libibverbs: its rdma-core series.
libibverbs=$(dpkg-query -W -f='${Version}' libibverbs1)
series=${libibverbs%%.*}
dkms_deb=$(ls "$debs"/qhca-dkms_*_all.deb 2>/dev/null)
prov_deb=$(ls "$debs"/libqhca-rdmav*_*+rdma"${series}"_amd64.deb 2>/dev/null)
if [ "$(echo "$dkms_deb" | grep -c .)" = 1 ] && [ "$(echo "$prov_deb" | grep -c .)" = 1 ] &&
   cp "$dkms_deb" "$prov_deb" "$work"/; then
	result ok "copied $(basename "$dkms_deb") and $(basename "$prov_deb") (libibverbs1 $libibverbs)"
else
	step_fail "one qhca-dkms and one provider for rdma-core $series in ${debs}: '$dkms_deb' '$prov_deb'"
	give_up
fi
ver=$(dpkg-deb -f "$dkms_deb" Version)
tgz=qhca-$ver-kernel$kver-x86_64.dkms.tar.gz
if [ $compile = 0 ]; then
	if cp "$debs/$tgz" "$work"/; then
		result ok "copied $tgz"
	else
		step_fail "make deb's DKMS tarball of qhca-dkms $ver for $kver in $debs"
		give_up
	fi
fi

# tools/guest/init pointed libibverbs at the share's provider: that file
# is not the package's.  Then the share goes, for everything after this
# (open files, this script's included, stay readable).
rm -f /etc/libibverbs.d/qhca.driver
cd / || exit 1
for m in "${QHCA_CWD:-}" "$QHCA_TOP"; do
	[ -n "$m" ] && mountpoint -q "$m" && umount -l "$m"
done
why=()
left=$(awk '$3 == "9p" && $1 != "qhca_ctl" { print $1 " on " $2 }' /proc/mounts)
[ -z "$left" ] || why+=("9p mounts left: $left")
[ ! -e "$QHCA_TOP/build" ] || why+=("$QHCA_TOP/build is still there")
[ ! -e /sys/module/qhca ] || why+=("qhca is loaded")
! modinfo -n qhca >/dev/null 2>&1 || why+=("modinfo finds $(modinfo -n qhca)")
! compgen -G "$provdir/libqhca*" >/dev/null || why+=("$(echo "$provdir"/libqhca*) exists")
! grep -rqs qhca /etc/libibverbs.d || why+=("$(grep -rls qhca /etc/libibverbs.d) names qhca")
if [ ${#why[@]} = 0 ]; then
	result ok "the repository's share detached; no qhca module, provider or driver file before the install"
else
	step_fail "the guest has no qhca before the install: ${why[*]}"
	give_up
fi

# The image has no package lists and no apt cache (tools/build/guest-packages
# drops both): nothing can be downloaded, and what apt fetches from the
# local files it keeps in its cache.
mkdir -p /var/cache/apt/archives/partial /var/lib/apt/lists/partial
dkms_mod=/var/lib/dkms/qhca/$ver/$kver/x86_64/module
if [ $compile = 0 ]; then
	# DKMS registers the source and takes the build as built for this
	# kernel; the package's postinst then finds it built and installs it.
	status=$(dkms ldtarball "$work/$tgz" > "$work/ldtarball.log" 2>&1 &&
		dkms status -m qhca -k "$kver" 2>&1)
	if [[ $status == "qhca/$ver, $kver, x86_64: built"* ]]; then
		result ok "dkms ldtarball: $status"
	else
		step_fail "dkms ldtarball: qhca/$ver built for $kver: '$status'" "$work/ldtarball.log"
		give_up
	fi
fi
start=$SECONDS
if apt-get install -y "$work/$(basename "$dkms_deb")" \
	"$work/$(basename "$prov_deb")" > "$work/install.log" 2>&1; then
	how="the loaded build installed"
	[ $compile = 0 ] || how="DKMS build included"
	result ok "apt install of both packages, offline ($((SECONDS - start)) s, $how)"
else
	step_fail "apt install of both packages" "$work/install.log"
	give_up
fi

# Which build DKMS installed: with the tarball, the tarball's qhca.ko, byte
# for byte (no compile here); with --compile, one it made here.
if [ $compile = 0 ]; then
	loaded=$(tar -xzOf "$work/$tgz" "./dkms_main_tree/$kver/x86_64/module/qhca.ko" | sha256sum)
	mine=$(cat "$dkms_mod"/qhca.ko 2>/dev/null | sha256sum)
	if [ "$loaded" = "$mine" ] && [ ! -e "${dkms_mod%/module}/log/make.log" ]; then
		result ok "DKMS installed the loaded build (no compile in the guest)"
	else
		step_fail "DKMS installed the tarball's qhca.ko: $(ls -l "${dkms_mod%/module}" "$dkms_mod" 2>&1 | tr '\n' ' ')"
	fi
elif [ -s "${dkms_mod%/module}/log/make.log" ]; then
	result ok "DKMS compiled qhca.ko here ($(wc -l < "${dkms_mod%/module}/log/make.log") lines of make.log)"
else
	step_fail "DKMS compiled qhca.ko here: no ${dkms_mod%/module}/log/make.log"
fi

status=$(dkms status -m qhca -k "$kver" 2>&1)
if [[ $status == "qhca/$ver, $kver, x86_64: installed"* ]]; then
	result ok "dkms status: $status"
else
	step_fail "dkms status shows qhca/$ver installed for $kver: '$status'"
fi
ko=$(modinfo -n qhca 2>/dev/null)
if [[ $ko == /lib/modules/$kver/updates/dkms/qhca.ko* ]]; then
	result ok "modinfo finds DKMS's build: $ko"
else
	step_fail "modinfo finds qhca.ko in updates/dkms of $kver: '$ko'"
fi

modprobe qhca 2> "$work/modprobe.log"
for _ in $(seq 100); do
	[ -e "$ibdev" ] && break
	sleep 0.1
done
if [ -e "$ibdev" ] && wait_active; then
	result ok "modprobe qhca: qhca0's port ACTIVE"
else
	step_fail "modprobe qhca: qhca0's port ACTIVE" "$work/modprobe.log"
	dmesg | tail -n 20 | diag_lines
	give_up
fi

# libibverbs reads "driver qhca" in /etc/libibverbs.d and loads
# libqhca-rdmav<PABI>.so from its provider directory: both the package's.
pkg=$(dpkg-deb -f "$work/$(basename "$prov_deb")" Package)
lib=$provdir/$pkg.so
owners=$(dpkg -S /etc/libibverbs.d/qhca.driver "$lib" 2>&1 | cut -d: -f1 | sort -u)
drivers=$(grep -ls '^driver qhca$' /etc/libibverbs.d/*)
if [ "$owners" = "$pkg" ] && [ "$drivers" = /etc/libibverbs.d/qhca.driver ]; then
	result ok "qhca.driver and $(basename "$lib") belong to $pkg"
else
	step_fail "qhca.driver and $lib belong to $pkg: owners '$owners', driver files '$drivers'"
fi

if ibv_devinfo -d qhca0 > "$work/devinfo.log" 2>&1 &&
   grep -qP '^hca_id:\tqhca0$' "$work/devinfo.log" &&
   grep -q 'state:.*PORT_ACTIVE' "$work/devinfo.log"; then
	result ok "ibv_devinfo: qhca0, $(grep -m1 'fw_ver' "$work/devinfo.log" | tr -s ' \t' ' ')"
else
	step_fail "ibv_devinfo shows qhca0 with an active port" "$work/devinfo.log"
fi

if run_pair "$work/pp" 120 ibv_rc_pingpong -d qhca0 -i 1 -c -n 200 -s 4096; then
	result ok "ibv_rc_pingpong -c -n 200 -s 4096 on qhca0"
else
	step_fail "ibv_rc_pingpong on qhca0: $pair_status" "$work/pp.client"
	diag_file "$work/pp.server"
fi
# perftest's clock check disagrees with itself under TCG: -F makes it a
# warning.  Under stdbuf, so a killed run leaves its log.
if run_pair "$work/bw" 120 stdbuf -oL -eL ib_write_bw -d qhca0 -i 1 -F -c RC -n 200; then
	result ok "ib_write_bw -c RC -n 200 on qhca0"
	diag_file "$work/bw.client" 3
else
	step_fail "ib_write_bw on qhca0: $pair_status" "$work/bw.client"
	diag_file "$work/bw.server"
fi

# Removal: DKMS takes the module out of the kernel's tree, the provider
# goes; its conffile, the driver file, only with purge.
modprobe -r qhca 2> "$work/rmmod.log" || diag_file "$work/rmmod.log"
if apt-get remove -y qhca-dkms "$pkg" > "$work/remove.log" 2>&1 &&
   [ -z "$(dkms status -m qhca 2>&1)" ] && ! modinfo qhca >/dev/null 2>&1 &&
   [ ! -e "$lib" ] && ! compgen -G "/usr/src/qhca-*" >/dev/null; then
	result ok "apt remove: dkms status empty, no qhca.ko, no provider, no source"
else
	step_fail "apt remove: dkms status '$(dkms status -m qhca 2>&1)', modinfo '$(modinfo -n qhca 2>&1)'" \
		"$work/remove.log"
fi
if apt-get purge -y qhca-dkms "$pkg" > "$work/purge.log" 2>&1 &&
   [ ! -e /etc/libibverbs.d/qhca.driver ]; then
	result ok "apt purge: qhca.driver gone"
else
	step_fail "apt purge removes qhca.driver" "$work/purge.log"
fi

echo "1..$num"
exit $failed
