#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# rdma-core's own test suite (pyverbs, tests/run_tests.py) on qhca0, as our
# users run it: one TAP line per unittest test case, "ok", "not ok", or
# "ok # SKIP reason" for a case unittest skips (a skip is never a pass).
#
# By default it runs every module of the suite that is not another
# vendor's (test_mlx5_*, test_efa*: mlx5 and EFA devices; test_cuda_*:
# CUDA), whatever its outcome on qhca0: a module whose every case skips
# today (test_flow, test_rss_traffic: raw packet QPs, which the
# InfiniBand link layer lacks) still runs and reports its skips, so the
# day qhca gains the feature its cases run.  tests/expected-skips names every case that may skip, with
# why; tools/check fails any other skip, and every failure.  No case is
# excluded.  qhca0's link layer decides some: with InfiniBand (the guest
# suite) the RoCE cases skip; the ulp suite's pyverbs part
# (tests/ulp/pyverbs.sh) runs those modules on its RoCE port.
#
# The tests are the 56.1 ones Debian installs in /usr/share/doc/rdma-core/
# tests (gzipped in part, as Debian compresses docs).  The guest image
# leaves /usr/share/doc out, so where that copy is missing the same files
# come from the rdma-core 56.1 source tree of our build (the orig tarball:
# no Debian patch touches tests/).  Either is copied to a temporary
# directory and unzipped there.
#
# A small driver (below) does what run_tests.py does (parse --dev/--port,
# load the tests package), once: under TCG that import is most of a
# module's time (about 5 s of pyverbs and the tests package).  Then each
# module runs in a process of its own, forked from the driver, whose
# interpreter exits as a fresh one would: pyverbs can crash while the
# interpreter tears down, after the last result, and one such crash must
# not take other modules along.  No device is open when the driver forks
# (it checks).  Each case is reported as it ends to a results file that
# interpreter noise on stdout/stderr cannot garble.  A module that ends
# before it has reported every case it was to run gets a "not ok" line of
# its own.
#
# Three cases (test_odp's two huge page MRs, test_parent_domain's huge page
# allocator) skip without 2 MiB huge pages ("There are no huge pages of
# size 2M allocated"), which says nothing of qhca: the script reserves a
# few for the run, and the cases then run on qhca0.
#
# Usage: tests/shell/rdma-core-tests.sh [MODULE[.Class[.test]]...]
#   MODULE names (test_pd, test_mr.MRTest, ...) run those instead.
#   Environment: QHCA_PYVERBS_ALL=1 runs every module, other vendors' too
#   (triage); QHCA_PYVERBS_TESTS=DIR takes the tests from DIR;
#   QHCA_PYVERBS_TIMEOUT (seconds per module, default 180: a hang's bound;
#   under TCG on a loaded 2-core host test_odp and test_parent_domain
#   took 45-77 s);
#   QHCA_PYVERBS_DEV (the device, default qhca0: tools/bench/pyverbs-compare
#   runs the same suite on rxe0 beside it).
#
# The two device bugs this suite found on its first run (XRC READ/atomic
# requests without their XRCETH, and window binds refused when the MR
# lacked the window's remote access, which the IBA does not ask for) are
# fixed.  test_qpex gives every RC QP the FLUSH_GLOBAL and FLUSH_PERSISTENT
# access bits: qhca accepts them since it has FLUSH (1.6), and all its RC
# cases run, FLUSH and ATOMIC_WRITE included.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

dev=${QHCA_PYVERBS_DEV:-qhca0}
# lib.sh's ibdev is qhca0's: this script's is the device it runs on.
ibdev=/sys/class/infiniband/$dev
port=1
limit=${QHCA_PYVERBS_TIMEOUT:-180}
hugepages=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages

echo "TAP version 13"
if [ ! -e "$ibdev" ]; then
	echo "1..0 # SKIP no $dev"
	exit 4
fi
# Found, not imported: the driver's import is the one that counts (and
# under TCG an import of pyverbs takes seconds).
if ! python3 -c 'import importlib.util as u, sys; sys.exit(not u.find_spec("pyverbs.device"))' 2>/dev/null; then
	echo "1..0 # SKIP no pyverbs (python3-pyverbs)"
	exit 4
fi

# Where the tests are: Debian's copy, else the 56.1 source tree.
src=${QHCA_PYVERBS_TESTS:-}
if [ -z "$src" ]; then
	for d in /usr/share/doc/rdma-core/tests \
		 "$QHCA_TOP/build/rdma-core/src/tests"; do
		if [ -e "$d/run_tests.py" ] || [ -e "$d/run_tests.py.gz" ]; then
			src=$d
			break
		fi
	done
fi
if [ -z "$src" ]; then
	echo "1..0 # SKIP no rdma-core tests (python3-pyverbs docs or build/rdma-core)"
	exit 4
fi
echo "# tests from $src"

work=$(mktemp -d)
hugepages_were=""
trap '[ -z "$hugepages_were" ] || echo "$hugepages_were" > "$hugepages"; rm -rf "$work"' EXIT
cp -r "$src" "$work/tests"
find "$work/tests" -name '*.gz' -exec gunzip -f {} +
mkdir "$work/logs"

if [ $# -gt 0 ]; then
	modules=("$@")
else
	modules=()
	for f in "$work"/tests/test_*.py; do
		f=${f##*/}
		f=${f%.py}
		if [ "${QHCA_PYVERBS_ALL:-0}" != 1 ]; then
			case $f in
			test_mlx5_* | test_efa* | test_cuda_*) continue ;;
			esac
		fi
		modules+=("$f")
	done
fi

# 8 huge pages of 2 MiB (16 MiB) for the cases that ask for them, given
# back at the end; a guest that has some already keeps its own.
if [ "$(cat "$hugepages" 2>/dev/null || echo 0)" = 0 ]; then
	hugepages_were=0
	echo 8 > "$hugepages" 2>/dev/null ||
		echo "# could not reserve 2 MiB huge pages: the cases that need them skip"
fi

# The driver: run_tests.py's setup once, then for each name given (a
# module, class or case) a forked process that runs its cases, each result
# on a line of that name's results file as it comes: "PLAN n" first,
# "RESULT\tSTATUS\tNAME\tREASON" for each case (STATUS ok, fail or skip),
# "END" after the last; its stdout and stderr go to the name's log.  The
# driver prints "DONE NAME STATUS" when that process has ended (STATUS as
# timeout(1) gives it: 124 when it ran out of time and was killed).
cat > "$work/tests/qhca_tap_driver.py" <<'EOF'
import argparse
import os
import random
import select
import signal
import sys
import traceback
import unittest
from importlib.machinery import SourceFileLoader

ap = argparse.ArgumentParser()
ap.add_argument('--dev', required=True)
ap.add_argument('--port', required=True)
ap.add_argument('--logs', required=True)
ap.add_argument('--limit', type=float, required=True)
ap.add_argument('names', nargs='+')
opts = ap.parse_args()

from args_parser import parser
sys.argv = [sys.argv[0], '--dev', opts.dev, '--port', opts.port]
parser.parse_args()
here = os.path.dirname(os.path.abspath(__file__))
tests = SourceFileLoader('tests', os.path.join(here, '__init__.py')).load_module()

# A process forked with a device open would share its command file and
# mappings with the next: every module must start as a fresh one would.
for fd in os.listdir('/proc/self/fd'):
    try:
        target = os.readlink('/proc/self/fd/' + fd)
    except OSError:
        continue
    if target.startswith('/dev/infiniband/'):
        sys.exit('loading the tests opened %s: cannot fork the modules'
                 % target)


def short(test_id):
    return test_id[len('tests.'):] if test_id.startswith('tests.') else test_id


def cases(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from cases(t)
        else:
            yield t


def one_line(text):
    return ' '.join(str(text).split())


def run(name, out):
    class TapResult(unittest.TestResult):
        """Reports each case when it stops: fail if anything in it failed."""

        def startTest(self, test):
            super().startTest(test)
            self.status, self.reason = 'ok', ''

        def _failed(self, test, err):
            self.status = 'fail'
            text = ''.join(traceback.format_exception(*err))
            if isinstance(test, unittest.TestCase):
                self.reason = one_line(text.strip().splitlines()[-1])
            sys.stderr.write('== %s\n%s' % (short(test.id()), text))
            if not isinstance(test, unittest.TestCase):
                # A class or module fixture: no startTest/stopTest of its own.
                out.write('RESULT\tfail\t%s\t%s\n' % (test.id(), one_line(
                    text.strip().splitlines()[-1])))

        def addError(self, test, err):
            super().addError(test, err)
            self._failed(test, err)

        def addFailure(self, test, err):
            super().addFailure(test, err)
            self._failed(test, err)

        def addSubTest(self, test, subtest, err):
            super().addSubTest(test, subtest, err)
            if err is not None:
                self._failed(test, err)

        def addSkip(self, test, reason):
            super().addSkip(test, reason)
            if isinstance(test, unittest.TestCase):
                if self.status == 'ok':
                    self.status, self.reason = 'skip', one_line(reason)
            else:
                out.write('RESULT\tskip\t%s\t%s\n' % (test.id(),
                                                      one_line(reason)))

        def addExpectedFailure(self, test, err):
            super().addExpectedFailure(test, err)
            self.status, self.reason = 'fail', 'expected failure'

        def addUnexpectedSuccess(self, test):
            super().addUnexpectedSuccess(test)
            self.status, self.reason = 'fail', 'unexpected success'

        def stopTest(self, test):
            super().stopTest(test)
            out.write('RESULT\t%s\t%s\t%s\n' % (self.status, short(test.id()),
                                                self.reason))

    suite = unittest.TestSuite(cases(
        unittest.TestLoader().loadTestsFromName(name, tests)))
    out.write('PLAN %d\n' % suite.countTestCases())
    suite.run(TapResult())
    out.write('END\n')


def child(name):
    """The forked process of NAME: it never returns to the loop below."""
    os.setpgid(0, 0)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    log = os.open(os.path.join(opts.logs, name + '.log'),
                  os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    # The tests draw their sizes and data at random: not all the same draws.
    random.seed()
    with open(os.path.join(opts.logs, name + '.res'), 'w', buffering=1) as out:
        run(name, out)
    # The interpreter then ends as a fresh one would (finalizers, pyverbs'
    # objects closed), and its exit status is the process's.
    sys.stdout.flush()
    sys.stderr.flush()
    sys.exit(0)


# The module's process, while one runs: ended with the driver, which a
# timeout of the whole run ends with SIGTERM (the process has a group of
# its own, which that signal does not reach).
running = None


def on_term(signum, frame):
    if running:
        try:
            os.killpg(running, signal.SIGKILL)
        except OSError:
            pass
    os._exit(128 + signum)


signal.signal(signal.SIGTERM, on_term)


def one(name):
    global running
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        try:
            child(name)
        except SystemExit:
            raise
        except BaseException:
            traceback.print_exc()
            sys.exit(1)
    running = pid
    pidfd = os.pidfd_open(pid)
    ready, _, _ = select.select([pidfd], [], [], opts.limit)
    os.close(pidfd)
    if not ready:
        os.killpg(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    running = None
    # What the module left running (a multiprocessing peer) ends with it.
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
    if not ready:
        return 124
    if os.WIFEXITED(status):
        return os.WEXITSTATUS(status)
    return 128 + os.WTERMSIG(status)


for name in opts.names:
    print('DONE %s %d' % (name, one(name)), flush=True)
EOF

# report NAME STATUS: the results of NAME's process, which ended with
# STATUS, as TAP lines.
report() {
	local name=$1 rc=$2 res=$work/logs/$1.res log=$work/logs/$1.log
	local plan="" got=0 tag status cname reason ended=0

	[ -f "$res" ] || : > "$res"
	[ -f "$log" ] || : > "$log"
	while IFS=$'\t' read -r tag status cname reason; do
		case $tag in
		PLAN*) plan=${tag#PLAN } ;;
		END) ended=1 ;;
		RESULT)
			got=$((got + 1))
			case $status in
			ok) result ok "$cname" ;;
			skip) result ok "$cname # SKIP ${reason:-skipped}" ;;
			*)
				diag "$cname: $reason"
				result "not ok" "$cname"
				;;
			esac
			;;
		esac
	done < "$res"

	if [ "$rc" = 124 ]; then
		diag_file "$log" 40
		result "not ok" "$name: timed out after ${limit}s"
	elif [ -z "$plan" ] || [ "$ended" = 0 ] || [ "$got" -lt "$plan" ]; then
		diag_file "$log" 40
		result "not ok" "$name: ${got} of ${plan:-?} results (exit $rc)"
	elif [ "$rc" != 0 ]; then
		# Every case reported: a crash in pyverbs' teardown after the
		# run, as seen with some modules, is noted, not counted.
		printf '# %s: exit %d after all %d results\n' "$name" "$rc" "$got"
	fi
	printf '# %s: %d cases in %d s\n' "$name" "$got" $((SECONDS - start))
	start=$SECONDS
	# Failures are told in full (tracebacks) from the log.
	if grep -q '^== ' "$log"; then
		sed -n '/^== /,$p' "$log" | grep -v -E \
			'Errno: 9, Bad file descriptor|_pending_removals|Exception ignored in' |
			head -n 60 | diag_lines
	fi
}

declare -A reported=()
driver_rc=""
start=$SECONDS
# The driver's whole run is bounded too: each module's limit, and a minute
# for the driver's own start; its exit status comes last.
while read -r tag name rc; do
	case $tag in
	DONE)
		report "$name" "$rc"
		reported[$name]=1
		;;
	EXIT) driver_rc=$rc ;;
	esac
done < <(cd "$work/tests" && timeout -k 10 $((limit * ${#modules[@]} + 60)) \
	python3 qhca_tap_driver.py --dev "$dev" --port "$port" \
	--logs "$work/logs" --limit "$limit" "${modules[@]}" \
	2> "$work/logs/driver.log" < /dev/null; echo "EXIT - $?")

# A module the driver never got to (it failed to start, or ran out of
# time as a whole) is a failure of its own.
for m in "${modules[@]}"; do
	[ -z "${reported[$m]:-}" ] || continue
	diag_file "$work/logs/driver.log" 40
	result "not ok" "$m: not run: the driver ended first (exit ${driver_rc:-?})"
done
if [ "${driver_rc:-1}" != 0 ] && [ "$failed" = 0 ]; then
	diag_file "$work/logs/driver.log" 40
	result "not ok" "the driver exited with status ${driver_rc:-?}"
fi

echo "1..$num"
exit $failed
