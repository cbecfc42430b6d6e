# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Part "smbdirect" of the ulp suite (sourced by suite.sh): SMB Direct,
# ksmbd's RDMA transport and mount.cifs -o rdma.  Debian's 6.12 kernel is
# built without either (CONFIG_SMB_SERVER_SMBDIRECT, CONFIG_CIFS_SMB_DIRECT),
# so there is nothing to run: the part says so from the running kernel's
# own config, the one its package ships (in the kernel tree the guest runs
# from, at the same path; the guest has no /proc/config.gz).  Loading cifs
# and ksmbd to look for their SMB Direct symbols (smbd_*, smb_direct_*)
# agrees, and costs 10 s under TCG: the config alone is read.  Should the
# kernel ever have SMB Direct, the part fails until a test that runs it
# replaces it.

smb_config=$kroot/boot/config-$(uname -r)

# smb_opt NAME: NAME's line in the kernel config, or "none" without one.
smb_opt() { grep -E "^(# )?$1[= ]" "$smb_config" || echo none; }

smb_direct() {
	local cli srv
	cli=$(smb_opt CONFIG_CIFS_SMB_DIRECT)
	srv=$(smb_opt CONFIG_SMB_SERVER_SMBDIRECT)
	echo "# $smb_config: $cli; $srv"
	if [ "$cli" = "# CONFIG_CIFS_SMB_DIRECT is not set" ] &&
	   [ "$srv" = "# CONFIG_SMB_SERVER_SMBDIRECT is not set" ]; then
		skip "smbdirect: ksmbd with RDMA and mount.cifs -o rdma" \
			"kernel $(uname -r) is built with neither CONFIG_CIFS_SMB_DIRECT nor CONFIG_SMB_SERVER_SMBDIRECT"
	else
		not_ok "smbdirect: kernel $(uname -r) may have SMB Direct ($cli; $srv): no test runs it yet"
	fi
}
smb_direct
