/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Helpers shared by the qhca guest tests: the device defaults the tests
 * expect, finding qhca0, and the driver's object counters in sysfs.
 *
 * The tests run against a device started with its default properties
 * (Documentation/hw/qhca-registers-admin.rst, "Device properties"); every
 * value below comes from that table.
 */
#ifndef QHCA_TEST_H
#define QHCA_TEST_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
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
#define QHCA_DEFAULT_MAX_SRQS		1024
#define QHCA_DEFAULT_MAX_SRQ_WR		4096
#define QHCA_DEFAULT_DM_SIZE		(256 * 1024)	/* dm-size, 1.7 */

/*
 * The live object counts the driver publishes, one file per object type
 * under hw_objects/.  The kernel itself holds some objects (its event
 * queue, perhaps a UAR or a PD of a kernel ULP), so tests compare against
 * a baseline read before they start rather than against zero.
 *
 * A snapshot holds every file of the directory, whatever its name: a leak
 * check compares them all, so an object type the driver starts counting
 * is checked without editing the tests.
 */
#define QHCA_SYSFS_HW_OBJECTS		QHCA_SYSFS_IBDEV "/hw_objects"
#define QHCA_OBJ_TYPES_MAX		32
#define QHCA_OBJ_NAME_MAX		32

struct qhca_objs {
	unsigned int n;
	struct {
		char name[QHCA_OBJ_NAME_MAX];
		long val;
	} t[QHCA_OBJ_TYPES_MAX];
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
 * -errno on failure.  ib_core caches them for "lifespan" ms (10 by
 * default), so the value may be that old.
 */
static inline long qhca_hw_counter(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path),
		 QHCA_SYSFS_IBDEV "/ports/1/hw_counters/%s", name);
	return qhca_read_sysfs_long(path);
}

/*
 * Lets ib_core's cache of the hw counters expire, so that the next reads
 * see everything that happened before this call.  This waits for time,
 * not for an event: ib_core asks the driver again only once "lifespan" ms
 * (rounded up to whole jiffies, at most 10 ms more) have passed since it
 * last did.
 */
static inline void qhca_hw_counters_expire(void)
{
	long lifespan;

	lifespan = qhca_read_sysfs_long(QHCA_SYSFS_IBDEV
					"/ports/1/hw_counters/lifespan");
	usleep(((lifespan > 0 ? lifespan : 10) + 10) * 1000);
}

/* A hw counter with everything before the call in it; -errno. */
static inline long qhca_hw_counter_fresh(const char *name)
{
	qhca_hw_counters_expire();
	return qhca_hw_counter(name);
}

static inline int qhca_objs_cmp_name(const void *a, const void *b)
{
	return strcmp(a, b);	/* name is the first member of t[] */
}

/* Every count in hw_objects/, sorted by name; 0 or -errno. */
static inline int qhca_read_objs(struct qhca_objs *objs)
{
	char path[sizeof(QHCA_SYSFS_HW_OBJECTS) + QHCA_OBJ_NAME_MAX + 1];
	struct dirent *de;
	int ret = 0;
	DIR *dir;

	objs->n = 0;
	dir = opendir(QHCA_SYSFS_HW_OBJECTS);
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		if (objs->n == QHCA_OBJ_TYPES_MAX ||
		    strlen(de->d_name) >= QHCA_OBJ_NAME_MAX) {
			ret = -E2BIG;
			break;
		}
		snprintf(objs->t[objs->n].name, QHCA_OBJ_NAME_MAX, "%s",
			 de->d_name);
		snprintf(path, sizeof(path), QHCA_SYSFS_HW_OBJECTS "/%s",
			 de->d_name);
		objs->t[objs->n].val = qhca_read_sysfs_long(path);
		if (objs->t[objs->n].val < 0) {
			ret = objs->t[objs->n].val;
			break;
		}
		objs->n++;
	}
	closedir(dir);
	if (!ret && !objs->n)
		ret = -ENOENT;
	qsort(objs->t, objs->n, sizeof(objs->t[0]), qhca_objs_cmp_name);
	return ret;
}

/* One count of a snapshot, or -ENOENT if the driver has no such file. */
static inline long qhca_objs_get(const struct qhca_objs *objs,
				 const char *name)
{
	unsigned int i;

	for (i = 0; i < objs->n; i++)
		if (!strcmp(objs->t[i].name, name))
			return objs->t[i].val;
	return -ENOENT;
}

/*
 * Whether now is base plus delta, for every object type.  delta names the
 * counts that should have changed, as "uars+1 pds+4 qps-2"; every other
 * count must be what it was, and a type in only one of the snapshots is a
 * difference too.  Otherwise why says what differs.
 */
static inline bool qhca_objs_match(const struct qhca_objs *base,
				   const struct qhca_objs *now,
				   const char *delta, char *why, size_t size)
{
	long want[QHCA_OBJ_TYPES_MAX] = { 0 };
	const char *tok = delta;
	size_t used = 0;
	unsigned int i;
	char *end;
	int len;

	why[0] = '\0';
#define QHCA_WHY(...) do {						\
	if (used < size)						\
		used += snprintf(why + used, size - used, __VA_ARGS__);	\
} while (0)
	while (*tok) {
		len = strcspn(tok, "+-");
		for (i = 0; i < base->n; i++)
			if (!strncmp(base->t[i].name, tok, len) &&
			    !base->t[i].name[len])
				break;
		if (i == base->n || !tok[len]) {
			QHCA_WHY("no counter \"%.*s\"; ", len, tok);
			return false;
		}
		want[i] = strtol(tok + len, &end, 10);
		tok = end + strspn(end, " ");
	}
	if (now->n != base->n)
		QHCA_WHY("%u object types, were %u; ", now->n, base->n);
	for (i = 0; i < base->n && i < now->n; i++) {
		if (strcmp(base->t[i].name, now->t[i].name))
			QHCA_WHY("%s in place of %s; ", now->t[i].name,
				 base->t[i].name);
		else if (now->t[i].val != base->t[i].val + want[i])
			QHCA_WHY("%s %ld, expected %ld; ", now->t[i].name,
				 now->t[i].val, base->t[i].val + want[i]);
	}
#undef QHCA_WHY
	return !used;
}

/*
 * The counts must be base plus the delta the format makes (see
 * qhca_objs_match()), for every object type.
 */
#define QHCA_EXPECT_OBJS(base, ...) do {				\
	struct qhca_objs __now;						\
	char __delta[256], __why[512];					\
									\
	snprintf(__delta, sizeof(__delta), __VA_ARGS__);		\
	ASSERT_EQ(0, qhca_read_objs(&__now));				\
	EXPECT_TRUE(qhca_objs_match(&(base), &__now, __delta, __why,	\
				    sizeof(__why)))			\
		TH_LOG("hw_objects: %s", __why);			\
} while (0)

/* The counts must be back where the test found them, every one. */
#define QHCA_EXPECT_OBJS_AT(base)	QHCA_EXPECT_OBJS(base, "%s", "")

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

/* A call that returns -1 and sets errno. */
#define EXPECT_ERRNO(expected_errno, cmd) do {				\
	errno = 0;							\
	ASSERT_EQ(-1, (cmd));						\
	EXPECT_EQ((expected_errno), errno);				\
} while (0)

#endif /* QHCA_TEST_H */
