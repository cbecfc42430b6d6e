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
