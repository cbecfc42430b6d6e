/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Helpers shared by the qhca guest tests: the device defaults the tests
 * expect, finding qhca0, and the driver's object counters in sysfs.
 *
 * The tests run against a device started with its default properties
 * (Documentation/hw/qhca-hw-spec.rst, "Device properties"); every value
 * below comes from that table.
 */
#ifndef QHCA_TEST_H
#define QHCA_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "kselftest_harness.h"

#define QHCA_IBDEV			"qhca0"
#define QHCA_SYSFS_IBDEV		"/sys/class/infiniband/" QHCA_IBDEV

/* Device property defaults. */
#define QHCA_DEFAULT_LID		1
#define QHCA_DEFAULT_NODE_GUID \
	(0x525400fffe000000ULL | ((unsigned long long)QHCA_DEFAULT_LID << 8))
#define QHCA_DEFAULT_PORT_GUID		(QHCA_DEFAULT_NODE_GUID + 1)
#define QHCA_DEFAULT_MAX_PDS		1024
#define QHCA_DEFAULT_MAX_UARS		256
#define QHCA_DEFAULT_MAX_QPS		1024
#define QHCA_DEFAULT_MAX_CQS		1024
#define QHCA_DEFAULT_MAX_MRS		4096
#define QHCA_DEFAULT_MAX_QP_WR		4096
#define QHCA_DEFAULT_MAX_CQE		32768

/*
 * The live object counts the driver publishes, one file each under
 * hw_objects/.  The kernel itself holds some objects (its event queue,
 * perhaps a UAR or a PD of a kernel ULP), so tests compare against a
 * baseline read before they start rather than against zero.
 */
#define QHCA_SYSFS_HW_OBJECTS		QHCA_SYSFS_IBDEV "/hw_objects"

struct qhca_objs {
	long uars;
	long pds;
	long eqs;
};

/* Reads a sysfs file holding one decimal number; -errno on failure. */
static inline long qhca_read_sysfs_long(const char *path)
{
	char buf[32], *end;
	ssize_t len;
	long val;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return len < 0 ? -errno : -ENODATA;
	buf[len] = '\0';
	errno = 0;
	val = strtol(buf, &end, 0);
	if (errno || end == buf || (*end && *end != '\n') || val < 0)
		return -EINVAL;
	return val;
}

/*
 * One of the port's hw counters (rdma statistic), by its sysfs name;
 * -errno on failure.  The driver caches them for 10 ms.
 */
static inline long qhca_hw_counter(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path),
		 QHCA_SYSFS_IBDEV "/ports/1/hw_counters/%s", name);
	return qhca_read_sysfs_long(path);
}

static inline int qhca_read_objs(struct qhca_objs *objs)
{
	objs->uars = qhca_read_sysfs_long(QHCA_SYSFS_HW_OBJECTS "/uars");
	objs->pds = qhca_read_sysfs_long(QHCA_SYSFS_HW_OBJECTS "/pds");
	objs->eqs = qhca_read_sysfs_long(QHCA_SYSFS_HW_OBJECTS "/eqs");
	if (objs->uars < 0)
		return objs->uars;
	if (objs->pds < 0)
		return objs->pds;
	return objs->eqs < 0 ? objs->eqs : 0;
}

/*
 * The data path's objects (hardware interface 1.1), with the doorbell
 * pages and PDs they live in: what a data path test must leave as it
 * found it.
 */
struct qhca_dp_objs {
	long uars;
	long pds;
	long cqs;
	long qps;
	long mrs;
};

static inline int qhca_read_dp_objs(struct qhca_dp_objs *objs)
{
	static const char *const name[] = {
		"uars", "pds", "cqs", "qps", "mrs",
	};
	long *val[] = {
		&objs->uars, &objs->pds, &objs->cqs, &objs->qps, &objs->mrs,
	};
	char path[128];
	unsigned int i;

	for (i = 0; i < sizeof(name) / sizeof(name[0]); i++) {
		snprintf(path, sizeof(path), QHCA_SYSFS_HW_OBJECTS "/%s",
			 name[i]);
		*val[i] = qhca_read_sysfs_long(path);
		if (*val[i] < 0)
			return *val[i];
	}
	return 0;
}

#define QHCA_EXPECT_DP_OBJS_AT(base) do {				\
	struct qhca_dp_objs __now;					\
									\
	ASSERT_EQ(0, qhca_read_dp_objs(&__now));			\
	EXPECT_EQ((base).uars, __now.uars);				\
	EXPECT_EQ((base).pds, __now.pds);				\
	EXPECT_EQ((base).cqs, __now.cqs);				\
	EXPECT_EQ((base).qps, __now.qps);				\
	EXPECT_EQ((base).mrs, __now.mrs);				\
} while (0)

/*
 * Reads a sysfs file as a string without its trailing newline; returns the
 * length or -errno.
 */
static inline int qhca_read_sysfs_str(const char *path, char *buf, size_t size)
{
	ssize_t len;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	len = read(fd, buf, size - 1);
	close(fd);
	if (len < 0)
		return -errno;
	while (len && buf[len - 1] == '\n')
		len--;
	buf[len] = '\0';
	return len;
}

/* The qhca device in a list from ibv_get_device_list(), or NULL. */
static inline struct ibv_device *qhca_find_device(struct ibv_device **list)
{
	for (; list && *list; list++)
		if (!strcmp(ibv_get_device_name(*list), QHCA_IBDEV))
			return *list;
	return NULL;
}

/* Fixture setup for tests that open the device through libibverbs. */
#define QHCA_ASSERT_DEVICE(list, dev) do {				\
	(list) = ibv_get_device_list(NULL);				\
	ASSERT_NE(NULL, (list)) TH_LOG("ibv_get_device_list: %s",	\
				      strerror(errno));			\
	(dev) = qhca_find_device(list);					\
	ASSERT_NE(NULL, (dev)) TH_LOG("no " QHCA_IBDEV " in the "	\
				     "libibverbs device list");		\
} while (0)

/* The counters must be back where the test found them. */
#define QHCA_EXPECT_OBJS_AT(base) do {					\
	struct qhca_objs __now;						\
									\
	ASSERT_EQ(0, qhca_read_objs(&__now));				\
	EXPECT_EQ((base).uars, __now.uars);				\
	EXPECT_EQ((base).pds, __now.pds);				\
	EXPECT_EQ((base).eqs, __now.eqs);				\
} while (0)

/* A call that returns -1 and sets errno. */
#define EXPECT_ERRNO(expected_errno, cmd) do {				\
	errno = 0;							\
	ASSERT_EQ(-1, (cmd));						\
	EXPECT_EQ((expected_errno), errno);				\
} while (0)

#endif /* QHCA_TEST_H */
