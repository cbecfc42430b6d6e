// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Running out of device objects: allocation fails with ENOMEM exactly at
 * the device's limit, never earlier and never later, and everything works
 * again once the objects are freed.
 */
#include <sys/resource.h>

#include "qhca_test.h"

/* Room for twice the device's tables, to notice a limit that is missing. */
#define CTX_SLOTS	(2 * QHCA_DEFAULT_MAX_UARS)
#define PD_SLOTS	(2 * QHCA_DEFAULT_MAX_PDS)

/* What both fixtures hold, and release in their teardown. */
struct held {
	struct ibv_device **list;
	struct ibv_device *dev;
	struct qhca_objs base;
	struct ibv_context *ctx[CTX_SLOTS];
	int nctx;
	struct ibv_pd *pd[PD_SLOTS];
	int npd;
};

static void held_setup(struct __test_metadata *_metadata, struct held *h)
{
	struct rlimit nofile;

	QHCA_ASSERT_DEVICE(h->list, h->dev);
	ASSERT_EQ(0, qhca_read_objs(&h->base))
		TH_LOG("no object counters in " QHCA_SYSFS_HW_OBJECTS);

	/* Each context holds two descriptors: its command and async FDs. */
	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &nofile));
	if (nofile.rlim_cur < 2 * CTX_SLOTS + 64 &&
	    nofile.rlim_max >= 2 * CTX_SLOTS + 64) {
		nofile.rlim_cur = 2 * CTX_SLOTS + 64;
		ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &nofile));
	}
}

static void held_teardown(struct __test_metadata *_metadata, struct held *h)
{
	int i;

	for (i = 0; i < h->npd; i++)
		if (h->pd[i])
			ibv_dealloc_pd(h->pd[i]);
	for (i = 0; i < h->nctx; i++)
		if (h->ctx[i])
			ibv_close_device(h->ctx[i]);
	QHCA_EXPECT_OBJS_AT(h->base);
	if (h->list)
		ibv_free_device_list(h->list);
}

FIXTURE(pd_limit)
{
	struct held h;
};

FIXTURE_VARIANT(pd_limit)
{
	int contexts;	/* the PDs are spread over this many contexts */
};

FIXTURE_VARIANT_ADD(pd_limit, one_context)
{
	.contexts = 1,
};

FIXTURE_VARIANT_ADD(pd_limit, four_contexts)
{
	.contexts = 4,
};

FIXTURE_SETUP(pd_limit)
{
	held_setup(_metadata, &self->h);
}

FIXTURE_TEARDOWN(pd_limit)
{
	held_teardown(_metadata, &self->h);
}

TEST_F_TIMEOUT(pd_limit, enomem_at_max_pd, 120)
{
	struct held *h = &self->h;
	struct ibv_device_attr attr;
	struct qhca_objs now;
	struct ibv_pd *extra;
	long expected;
	int i;

	for (i = 0; i < variant->contexts; i++) {
		h->ctx[i] = ibv_open_device(h->dev);
		ASSERT_NE(NULL, h->ctx[i]);
		h->nctx++;
	}
	/*
	 * The limit is the one the device reports, whatever it was started
	 * with (query_device checks the default).
	 */
	ASSERT_EQ(0, ibv_query_device(h->ctx[0], &attr));
	ASSERT_GE(PD_SLOTS / 2, attr.max_pd);

	/* What the kernel holds counts against the same table. */
	expected = attr.max_pd - qhca_objs_get(&h->base, "pds");
	ASSERT_LT(0, expected);

	for (;;) {
		ASSERT_GT(PD_SLOTS, h->npd)
			TH_LOG("more PDs than max_pd and still going");
		h->pd[h->npd] = ibv_alloc_pd(h->ctx[h->npd % h->nctx]);
		if (!h->pd[h->npd])
			break;
		h->npd++;
	}
	EXPECT_EQ(ENOMEM, errno) TH_LOG("failed with %s", strerror(errno));
	EXPECT_EQ(expected, h->npd);

	ASSERT_EQ(0, qhca_read_objs(&now));
	EXPECT_EQ((long)attr.max_pd, qhca_objs_get(&now, "pds"));

	/* A failure leaves nothing behind: it fails the same way again. */
	for (i = 0; i < h->nctx; i++) {
		errno = 0;
		extra = ibv_alloc_pd(h->ctx[i]);
		EXPECT_EQ(NULL, extra);
		EXPECT_EQ(ENOMEM, errno);
		if (extra)
			ibv_dealloc_pd(extra);
	}

	/* One freed PD makes room for exactly one. */
	ASSERT_EQ(0, ibv_dealloc_pd(h->pd[h->npd / 2]));
	h->pd[h->npd / 2] = ibv_alloc_pd(h->ctx[0]);
	ASSERT_NE(NULL, h->pd[h->npd / 2]);
	extra = ibv_alloc_pd(h->ctx[0]);
	EXPECT_EQ(NULL, extra);
	if (extra)
		ibv_dealloc_pd(extra);

	for (i = 0; i < h->npd; i++) {
		ASSERT_EQ(0, ibv_dealloc_pd(h->pd[i]));
		h->pd[i] = NULL;
	}
	QHCA_EXPECT_OBJS(h->base, "uars%+d", h->nctx);

	/* All of them are usable again. */
	for (i = 0; i < expected; i++) {
		h->pd[i] = ibv_alloc_pd(h->ctx[i % h->nctx]);
		ASSERT_NE(NULL, h->pd[i]) TH_LOG("PD %d after release: %s",
						 i, strerror(errno));
	}
}

FIXTURE(context_limit)
{
	struct held h;
};

FIXTURE_SETUP(context_limit)
{
	held_setup(_metadata, &self->h);
}

FIXTURE_TEARDOWN(context_limit)
{
	held_teardown(_metadata, &self->h);
}

TEST_F_TIMEOUT(context_limit, enomem_at_max_uars, 120)
{
	struct held *h = &self->h;
	struct ibv_context *extra;
	struct qhca_objs now;
	long expected;
	int i;

	/*
	 * One doorbell page per context; the kernel may hold some.  The
	 * limit is not visible through verbs: it is the device default.
	 */
	expected = QHCA_DEFAULT_MAX_UARS - qhca_objs_get(&h->base, "uars");
	ASSERT_LT(0, expected);

	for (;;) {
		ASSERT_GT(CTX_SLOTS, h->nctx)
			TH_LOG("more contexts than doorbell pages");
		h->ctx[h->nctx] = ibv_open_device(h->dev);
		if (!h->ctx[h->nctx])
			break;
		h->nctx++;
	}
	EXPECT_EQ(ENOMEM, errno) TH_LOG("failed with %s", strerror(errno));
	EXPECT_EQ(expected, h->nctx);

	ASSERT_EQ(0, qhca_read_objs(&now));
	EXPECT_EQ(QHCA_DEFAULT_MAX_UARS, qhca_objs_get(&now, "uars"));

	/* The open contexts keep working while the table is full. */
	h->pd[0] = ibv_alloc_pd(h->ctx[h->nctx - 1]);
	ASSERT_NE(NULL, h->pd[0]);
	h->npd = 1;

	/* One closed context makes room for exactly one. */
	ASSERT_EQ(0, ibv_close_device(h->ctx[0]));
	h->ctx[0] = ibv_open_device(h->dev);
	ASSERT_NE(NULL, h->ctx[0]) TH_LOG("reopen: %s", strerror(errno));
	errno = 0;
	extra = ibv_open_device(h->dev);
	EXPECT_EQ(NULL, extra);
	EXPECT_EQ(ENOMEM, errno);
	if (extra)
		ibv_close_device(extra);

	ASSERT_EQ(0, ibv_dealloc_pd(h->pd[0]));
	h->pd[0] = NULL;
	for (i = 0; i < h->nctx; i++) {
		ASSERT_EQ(0, ibv_close_device(h->ctx[i]));
		h->ctx[i] = NULL;
	}
	QHCA_EXPECT_OBJS_AT(h->base);

	/* And the whole table can be used again. */
	for (i = 0; i < expected; i++) {
		h->ctx[i] = ibv_open_device(h->dev);
		ASSERT_NE(NULL, h->ctx[i])
			TH_LOG("context %d after release: %s", i,
			       strerror(errno));
	}
}

TEST_HARNESS_MAIN
