# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# qhca: an emulated InfiniBand HCA for QEMU, its Linux driver and its
# rdma-core provider.
#
#   make run     build what is missing, boot a guest and show qhca0 at work
#   make check   build what is missing and run every test
#   make fuzz    build QEMU with ASan+UBSan and fuzz the device
#                (FUZZ_TIME=seconds, default 600; FUZZ_SEED=first seed)
#
# Everything is built from Debian's archive into build/; each step below is a
# script that does nothing when its outputs are up to date.

SHELL := /bin/bash
TOOLS := tools

.PHONY: all deps qemu kernel module rdma-core linux-source guest tests \
	run check fuzz bench shell clean distclean

all: qemu module rdma-core guest tests

deps:
	@$(TOOLS)/deps/host-packages

qemu: deps
	@$(TOOLS)/build/qemu

kernel: deps
	@$(TOOLS)/build/kernel

module: kernel
	@$(TOOLS)/build/module >/dev/null

rdma-core: deps
	@$(TOOLS)/build/rdma-core

linux-source: deps
	@$(TOOLS)/build/linux-source

guest: kernel
	@$(TOOLS)/build/guest

# tests/ as a kselftest directory, built by the kernel tree's kselftest make.
tests: rdma-core linux-source
	@$(TOOLS)/build/tests

# The parts build side by side (-j3): QEMU's compile keeps the cores busy
# while the others mostly download and unpack.  Each script takes its own
# lock, and the downloads take turns (tools/deps/fetch).
run:
	@$(MAKE) --no-print-directory -j3 all
	@$(TOOLS)/vm -- $(CURDIR)/$(TOOLS)/guest/demo

# make check's packages suite also needs the packages and their guest
# image: built here, beside QEMU's compile, not in the suite's lane.
check:
	@$(MAKE) --no-print-directory -j3 all deb guest-packages
	@$(TOOLS)/check

# The guest suite on each guest kernel QHCA_KERNEL can select (6.1, the
# default 6.12, the newest), one boot each, its TAP kept as
# build/log/check-guest-SERIES.tap; fails if any kernel's run failed.
.PHONY: check-kernels
check-kernels: qemu rdma-core tests
	@rc=0; for k in $$(. $(TOOLS)/lib/common.sh && kernel_series_list); do \
		echo "check-kernels: linux $$k" >&2; \
		{ QHCA_KERNEL=$$k $(TOOLS)/build/module >/dev/null && \
		  QHCA_KERNEL=$$k $(TOOLS)/build/guest && \
		  QHCA_KERNEL=$$k $(TOOLS)/check guest; } || rc=1; \
		cp build/log/check-guest.tap build/log/check-guest-$$k.tap 2>/dev/null; \
	done; exit $$rc

FUZZ_TIME ?= 600
fuzz: qemu
	@FUZZ_SEED=$(FUZZ_SEED) $(TOOLS)/fuzz $(FUZZ_TIME)

# Debian packages in build/deb (tools/build/deb): qhca-dkms, the driver's
# source for DKMS, and the provider built against each rdma-core release
# Debian ships, named and versioned for it.
.PHONY: deb guest-packages
deb: rdma-core kernel
	@$(TOOLS)/build/deb

# The package test's guest image (tools/build/guest-packages): trixie with
# dkms and the guest kernel's headers, no qhca.ko, no provider.
guest-packages: guest
	@$(TOOLS)/build/guest-packages

# The device as a QEMU patch series (tools/series/qemu): git format-patch
# against the QEMU release we build, into QEMU_PATCHES; apply it to a QEMU
# tree with git am.  check-qemu-newest applies it to the newest QEMU Debian
# offers, builds QEMU and the qtests there and runs them (make check only
# compiles the device's and qtests' objects there).
QEMU_PATCHES ?= build/qemu-patches
.PHONY: qemu-patches check-qemu-newest
qemu-patches: deps
	@$(TOOLS)/deps/fetch qemu && \
		$(TOOLS)/series/qemu write --out $(abspath $(QEMU_PATCHES))

check-qemu-newest: deps
	@$(TOOLS)/deps/fetch qemu && $(TOOLS)/series/qemu check-newest

# The kernel side as a Linux patch series (tools/series/kernel): git
# format-patch against the linux-source the build unpacks, into
# KERNEL_PATCHES; apply it to a Linux tree with git am.
KERNEL_PATCHES ?= build/kernel-patches
.PHONY: kernel-patches
kernel-patches: deps
	@$(TOOLS)/series/kernel --out $(abspath $(KERNEL_PATCHES))

# The perftest matrix on qhca0 and on rxe (and siw where the kernel has it)
# in one guest boot, with the ratios; figures, not a test.  The 1000-QP
# loopback run needs 2000 QPs: more than the device's default max-qps.
# Then the cross-guest matrix: qhca<->qhca and rxe<->rxe between two guests
# on one segment, a boot each (BENCH_* variables: tools/bench/wire-matrix);
# then nvme-rdma and NFS/RDMA fio on the same two pairs (tools/bench/ulp-matrix);
# then rdma-core's pyverbs suite on qhca0 beside rxe0, one boot (about 5 min
# under TCG), failing if a case passes on rxe0 only (tools/bench/pyverbs-compare).
bench: all
	@$(TOOLS)/vm --timeout 3600 --qhca-opt max-qps=4096 -- \
		$(CURDIR)/$(TOOLS)/bench/perf-matrix
	@$(TOOLS)/bench/wire-matrix
	@$(TOOLS)/bench/ulp-matrix
	@$(TOOLS)/bench/pyverbs-compare

shell: all
	@$(TOOLS)/vm

# Module outputs live beside the sources (kbuild's way for external modules).
clean:
	@if [ -f build/kernel/kdir ]; then \
		$(MAKE) -s -C "$$(cat build/kernel/kdir)" M=$(CURDIR) clean; fi
	rm -rf build/tests build/tests-obj build/log

distclean: clean
	rm -rf build
