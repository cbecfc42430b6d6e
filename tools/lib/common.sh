# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Shared helpers for the build and bench scripts: paths, quiet stage
# messages on the terminal, full logs under build/log.

QHCA_TOP=${QHCA_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
QHCA_BUILD=${QHCA_BUILD:-$QHCA_TOP/build}
QHCA_LOG=$QHCA_BUILD/log
mkdir -p "$QHCA_LOG"

if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi

# stage NAME MESSAGE: one readable progress line per step.
stage() { printf '  %-8s %s\n' "$1" "$2" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# logged LOGNAME CMD...: run CMD with its output in build/log/LOGNAME.log;
# on failure show the log's tail so the reason is on the terminal.
logged() {
	local log=$QHCA_LOG/$1.log
	shift
	if ! "$@" >"$log" 2>&1; then
		tail -n 30 "$log" >&2
		die "failed; full log in ${log#"$QHCA_TOP"/}"
	fi
}

# kernel_select: the guest kernel QHCA_KERNEL names (tools/deps/versions:
# the default series, bookworm's 6.1, or "newest", also by its number), as
#   KSERIES  its series (6.1, 6.12, 7.3, ...)
#   KOUT     its unpacked packages, kdir and vmlinuz (tools/build/kernel)
#   KMOD     the tree its modules are built in: qhca.ko in
#            KMOD/drivers/infiniband/hw/qhca, the kernel test module in
#            KMOD/tests/kernel
#   KKEY     its keys' prefix in build/versions
# The default series keeps the paths it always had (build/kernel, the
# modules beside their sources); another builds under build/kernel-SERIES
# and build/module-SERIES, so that switching kernels rebuilds nothing.
kernel_select() {
	# shellcheck source=../deps/versions
	. "$QHCA_TOP"/tools/deps/versions
	local k=${QHCA_KERNEL:-$KERNEL_SERIES}
	[ "$k" != newest ] || k=$KERNEL_NEWEST
	case $k in
	"$KERNEL_OLD"|"$KERNEL_SERIES"|"$KERNEL_NEWEST") ;;
	*) die "QHCA_KERNEL=$k: want $KERNEL_OLD, $KERNEL_SERIES, $KERNEL_NEWEST or newest" ;;
	esac
	# shellcheck disable=SC2034 # for the scripts that source this file
	KSERIES=$k KTOOL=""
	if [ "$k" = "$KERNEL_SERIES" ]; then
		KOUT=$QHCA_BUILD/kernel KMOD=$QHCA_TOP KKEY=kernel
	else
		# shellcheck disable=SC2034
		KOUT=$QHCA_BUILD/kernel-$k KMOD=$QHCA_BUILD/module-$k KKEY=kernel_${k//./_}
	fi
	[ "$k" != "$KERNEL_NEWEST" ] || KTOOL=$QHCA_BUILD/toolchain-trixie
}

# kernel_series_list: every series QHCA_KERNEL can name, the default first.
kernel_series_list() {
	(
		# shellcheck source=../deps/versions
		. "$QHCA_TOP"/tools/deps/versions
		echo "$KERNEL_SERIES $KERNEL_OLD $KERNEL_NEWEST"
	)
}

# kbuild CMD...: run a kbuild command for the selected kernel: on the host,
# or, when KTOOL is set, chrooted into that trixie root (the compiler and
# glibc the kernel's headers and kbuild binaries were built for), with the
# repository (and build/, wherever it is) at the same path and the host's
# /dev and /proc (objtool reads its stack limit there).  An unprivileged user
# namespace: no root needed, and files written are the caller's.
kbuild() {
	if [ -z "$KTOOL" ]; then
		"$@"
		return
	fi
	local build=$QHCA_BUILD
	case $QHCA_BUILD/ in "$QHCA_TOP"/*) build="" ;; esac
	mkdir -p "$KOUT/tmp" "$KTOOL/root$QHCA_TOP" "$KTOOL/root${build:-/dev}"
	unshare --map-root-user --mount -- bash -c '
		root=$1 top=$2 build=$3
		shift 3
		mount --rbind "$top" "$root$top" && mount --rbind /dev "$root/dev" &&
			mount --rbind /proc "$root/proc" &&
			{ [ -z "$build" ] || mount --rbind "$build" "$root$build"; } &&
			exec chroot "$root" "$@"' kbuild "$KTOOL/root" "$QHCA_TOP" "$build" \
		env -i PATH=/usr/bin:/bin HOME=/ LC_ALL=C.UTF-8 TMPDIR="$KOUT/tmp" "$@"
}

# The private apt configuration that reads trixie and backports.
apt_private() {
	"$QHCA_TOP"/tools/deps/apt-private
	export QHCA_APT_CONFIG=$QHCA_BUILD/apt/apt.conf
}

# build_lock NAME: hold build/.lock-NAME until the script exits, so that two
# builds of the same part (two terminals, a test run beside an edit) never
# run their compilers over each other's outputs.
build_lock() {
	local fd
	exec {fd}>"$QHCA_BUILD/.lock-$1"
	flock "$fd"
}

# TAP for scripts whose steps each log to build/log (tools/build/module,
# tools/series/kernel): the caller sets n=0 failed=0 and prints the plan.
# tap RESULT NAME [LOG]: one TAP line for exit status RESULT; on failure
# the log's tail on stderr.
tap() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=1
		[ -z "${3:-}" ] || {
			tail -n 30 "$3" | sed 's/^/# /' >&2
			echo "# full log in ${3#"$QHCA_TOP"/}" >&2
		}
	fi
}

# run LOGNAME CMD...: CMD's output into build/log/LOGNAME.log, which log
# names afterwards; sets rc.
run() {
	log=$QHCA_LOG/$1.log
	shift
	rc=0
	"$@" >"$log" 2>&1 || rc=$?
}
