// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The guest side of fault_decode.sh: one CPU turns the qhca function's
 * memory decode (PCI COMMAND bit 1) off and on as fast as it can while a
 * thread on every other CPU reads the MAGIC register of BAR 0 through the
 * function's sysfs resource0 mapping.  Each change of decode changes the
 * machine's memory map while other vCPUs hold translations of the BAR:
 * under QEMU 10.0's TCG, that race aborted QEMU ("iotlb_to_section:
 * Assertion `section_index < d->map.sections_nb' failed"; the fix is in
 * qemu-device/qemu-fixes/).  The device
 * must keep answering: MAGIC is read before and after, and a read while
 * decode is off returns what the bus returns, counted, not checked.
 *
 *   decode_helper BDF SECONDS
 *
 * The qhca driver must not be bound (the test unbinds it).  Prints one
 * line, "toggles N reads M magic K", and exits 0 when MAGIC answered
 * before and after, every write of COMMAND succeeded and both sides ran;
 * else says why on stderr.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <qhca_hw.h>

#define PCI_COMMAND		0x04
#define PCI_COMMAND_MEMORY	0x2
#define MAX_READERS		64

struct reader {
	pthread_t thread;
	int cpu;
	const volatile uint32_t *magic;
	const volatile bool *stop;
	uint64_t reads;
	uint64_t magic_reads;
};

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	/* Not fatal: the scheduler spreads the threads anyway. */
	sched_setaffinity(0, sizeof(set), &set);
}

/*
 * The loads of one round are one straight run of code, one translation
 * block of TCG: a CPU takes the TLB flush a memory map change queued for
 * it only between blocks, so each load of the block after the change is
 * one more chance to meet the race.
 */
#define ROUND 32

static void *read_bar(void *arg)
{
	struct reader *r = arg;
	uint32_t v[ROUND];
	int k;

	pin(r->cpu);
	while (!*r->stop) {
#pragma GCC unroll 32
		for (k = 0; k < ROUND; k++)
			v[k] = *r->magic;
		for (k = 0; k < ROUND; k++)
			r->magic_reads += v[k] == QHCA_MAGIC;
		r->reads += ROUND;
	}
	return NULL;
}

static int set_command(int cfg, uint16_t val)
{
	return pwrite(cfg, &val, sizeof(val), PCI_COMMAND) == sizeof(val) ? 0 : -1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct reader readers[MAX_READERS];
	volatile bool stop = false;
	uint64_t toggles = 0, reads = 0, magic = 0;
	bool write_failed = false;
	char path[256];
	int cfg, res, ncpu, n, i;
	uint16_t cmd;
	double end;
	void *bar;

	if (argc != 3) {
		fprintf(stderr, "usage: %s BDF SECONDS\n", argv[0]);
		return 2;
	}
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu < 2) {
		fprintf(stderr, "one CPU: nothing reads the BAR while decode changes\n");
		return 1;
	}
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/config", argv[1]);
	cfg = open(path, O_RDWR);
	if (cfg < 0 || pread(cfg, &cmd, sizeof(cmd), PCI_COMMAND) != sizeof(cmd)) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return 1;
	}
	if (set_command(cfg, cmd | PCI_COMMAND_MEMORY)) {
		fprintf(stderr, "enabling memory decode: %s\n", strerror(errno));
		return 1;
	}
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource%d",
		 argv[1], QHCA_REG_BAR);
	res = open(path, O_RDWR | O_SYNC);
	bar = res < 0 ? MAP_FAILED :
	      mmap(NULL, QHCA_REG_BAR_SIZE, PROT_READ, MAP_SHARED, res, 0);
	if (bar == MAP_FAILED) {
		fprintf(stderr, "mapping %s: %s\n", path, strerror(errno));
		return 1;
	}
	const volatile uint32_t *reg = (const volatile uint32_t *)
		((const volatile char *)bar + QHCA_REG_MAGIC);

	if (*reg != QHCA_MAGIC) {
		fprintf(stderr, "MAGIC reads 0x%08x before\n", *reg);
		return 1;
	}

	n = ncpu - 1 < MAX_READERS ? ncpu - 1 : MAX_READERS;
	for (i = 0; i < n; i++) {
		readers[i] = (struct reader){ .cpu = i + 1, .magic = reg,
					      .stop = &stop };
		if (pthread_create(&readers[i].thread, NULL, read_bar,
				   &readers[i])) {
			fprintf(stderr, "pthread_create failed\n");
			return 1;
		}
	}
	pin(0);
	end = now() + strtod(argv[2], NULL);
	while (now() < end) {
		if (set_command(cfg, cmd & ~PCI_COMMAND_MEMORY) ||
		    set_command(cfg, cmd | PCI_COMMAND_MEMORY)) {
			fprintf(stderr, "writing COMMAND: %s\n", strerror(errno));
			write_failed = true;
			break;
		}
		toggles++;
	}
	stop = true;
	for (i = 0; i < n; i++) {
		pthread_join(readers[i].thread, NULL);
		reads += readers[i].reads;
		magic += readers[i].magic_reads;
	}
	printf("toggles %llu reads %llu magic %llu\n",
	       (unsigned long long)toggles, (unsigned long long)reads,
	       (unsigned long long)magic);
	if (*reg != QHCA_MAGIC) {
		fprintf(stderr, "MAGIC reads 0x%08x after\n", *reg);
		return 1;
	}
	if (write_failed)
		return 1;
	if (!toggles || !reads) {
		fprintf(stderr, "nothing raced: %llu toggles, %llu reads\n",
			(unsigned long long)toggles, (unsigned long long)reads);
		return 1;
	}
	set_command(cfg, cmd);
	return 0;
}
