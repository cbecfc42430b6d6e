// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * User contexts and protection domains through libibverbs: each context
 * takes exactly one doorbell page, each PD one PD of the device, and
 * everything goes back when it is freed or when its context is closed with
 * objects still in it.  The driver's hw_objects counters must return to
 * where each test found them.
 */
#include <stdbool.h>

#include "qhca_test.h"

#define MAX_CONTEXTS	64
#define MAX_PDS		256

FIXTURE(objects)
{
	struct ibv_device **list;
	struct ibv_device *dev;
	struct qhca_objs base;
	struct ibv_context *ctx[MAX_CONTEXTS];
	struct ibv_pd *pd[MAX_CONTEXTS][MAX_PDS];
};

FIXTURE_VARIANT(objects)
{
	int contexts;
	int pds;		/* per context */
	bool close_with_pds;	/* leave the PDs to ibv_close_device() */
};

FIXTURE_VARIANT_ADD(objects, one_context_many_pds)
{
	.contexts = 1,
	.pds = MAX_PDS,
};

FIXTURE_VARIANT_ADD(objects, many_contexts_few_pds)
{
	.contexts = MAX_CONTEXTS,
	.pds = 4,
};

FIXTURE_VARIANT_ADD(objects, many_contexts_many_pds)
{
	.contexts = 16,
	.pds = 32,
};

FIXTURE_VARIANT_ADD(objects, close_one_context_with_pds)
{
	.contexts = 1,
	.pds = 64,
	.close_with_pds = true,
};

FIXTURE_VARIANT_ADD(objects, close_many_contexts_with_pds)
{
	.contexts = 8,
	.pds = 16,
	.close_with_pds = true,
};

FIXTURE_SETUP(objects)
{
	QHCA_ASSERT_DEVICE(self->list, self->dev);
	ASSERT_EQ(0, qhca_read_objs(&self->base))
		TH_LOG("no object counters in " QHCA_SYSFS_HW_OBJECTS);
}

FIXTURE_TEARDOWN(objects)
{
	int c;

	/* After a failed assertion: close what the test left open. */
	for (c = 0; c < MAX_CONTEXTS; c++)
		if (self->ctx[c])
			ibv_close_device(self->ctx[c]);
	QHCA_EXPECT_OBJS_AT(self->base);
	if (self->list)
		ibv_free_device_list(self->list);
}

/* This many more doorbell pages and PDs than at the start, nothing else. */
static void expect_objs(struct __test_metadata *_metadata,
			const struct qhca_objs *base, long uars, long pds)
{
	QHCA_EXPECT_OBJS(*base, "uars%+ld pds%+ld", uars, pds);
}

TEST_F(objects, alloc_and_release)
{
	int nctx = variant->contexts, npd = variant->pds;
	int c, p, q;

	for (c = 0; c < nctx; c++) {
		self->ctx[c] = ibv_open_device(self->dev);
		ASSERT_NE(NULL, self->ctx[c]) TH_LOG("context %d: %s", c,
						     strerror(errno));
	}
	expect_objs(_metadata, &self->base, nctx, 0);

	/* Round robin, so that the contexts' PDs interleave in the device. */
	for (p = 0; p < npd; p++) {
		for (c = 0; c < nctx; c++) {
			self->pd[c][p] = ibv_alloc_pd(self->ctx[c]);
			ASSERT_NE(NULL, self->pd[c][p])
				TH_LOG("context %d PD %d: %s", c, p,
				       strerror(errno));
			ASSERT_EQ(self->ctx[c], self->pd[c][p]->context);
		}
	}
	expect_objs(_metadata, &self->base, nctx, (long)nctx * npd);

	/* uverbs handles are per context and must be distinct within one. */
	for (c = 0; c < nctx; c++)
		for (p = 0; p < npd; p++)
			for (q = p + 1; q < npd; q++)
				ASSERT_NE(self->pd[c][p]->handle,
					  self->pd[c][q]->handle);

	if (!variant->close_with_pds) {
		/* Free every other PD first, then the rest, backwards. */
		for (c = 0; c < nctx; c++)
			for (p = 0; p < npd; p += 2)
				ASSERT_EQ(0, ibv_dealloc_pd(self->pd[c][p]));
		expect_objs(_metadata, &self->base, nctx,
			    (long)nctx * (npd / 2));
		for (c = nctx - 1; c >= 0; c--)
			for (p = 1; p < npd; p += 2)
				ASSERT_EQ(0, ibv_dealloc_pd(self->pd[c][p]));
		expect_objs(_metadata, &self->base, nctx, 0);
	}

	for (c = 0; c < nctx; c++) {
		ASSERT_EQ(0, ibv_close_device(self->ctx[c]));
		self->ctx[c] = NULL;
		/*
		 * Closing one context releases its doorbell page and its
		 * PDs, and nothing of the others.
		 */
		expect_objs(_metadata, &self->base, nctx - c - 1,
			    variant->close_with_pds ?
			    (long)(nctx - c - 1) * npd : 0);
	}
}

/* One context at a time, opened and closed by the test itself. */
FIXTURE(context)
{
	struct ibv_device **list;
	struct ibv_device *dev;
	struct qhca_objs base;
	struct ibv_context *ctx;
};

FIXTURE_SETUP(context)
{
	QHCA_ASSERT_DEVICE(self->list, self->dev);
	ASSERT_EQ(0, qhca_read_objs(&self->base))
		TH_LOG("no object counters in " QHCA_SYSFS_HW_OBJECTS);
}

FIXTURE_TEARDOWN(context)
{
	if (self->ctx)
		ibv_close_device(self->ctx);
	QHCA_EXPECT_OBJS_AT(self->base);
	if (self->list)
		ibv_free_device_list(self->list);
}

TEST_F(context, open_close_100_times)
{
	struct ibv_pd *pd;
	int i;

	for (i = 0; i < 100; i++) {
		self->ctx = ibv_open_device(self->dev);
		ASSERT_NE(NULL, self->ctx) TH_LOG("open %d: %s", i,
						  strerror(errno));
		expect_objs(_metadata, &self->base, 1, 0);

		/* A context that did something, on every other round. */
		if (i % 2) {
			pd = ibv_alloc_pd(self->ctx);
			ASSERT_NE(NULL, pd) TH_LOG("open %d: %s", i,
						   strerror(errno));
			expect_objs(_metadata, &self->base, 1, 1);
		}
		ASSERT_EQ(0, ibv_close_device(self->ctx));
		self->ctx = NULL;
		expect_objs(_metadata, &self->base, 0, 0);
	}
}

TEST_F(context, child_exit_releases)
{
	struct ibv_context *ctx;
	int status, i;
	pid_t pid;

	/* A process that dies without closing anything leaves nothing. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		ctx = ibv_open_device(self->dev);
		if (!ctx)
			_exit(1);
		for (i = 0; i < 16; i++)
			if (!ibv_alloc_pd(ctx))
				_exit(2);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	expect_objs(_metadata, &self->base, 0, 0);
}

TEST_F_TIMEOUT(context, pd_alloc_free_cycles, 120)
{
	int i, cycles = 2 * QHCA_DEFAULT_MAX_PDS + 1;
	struct ibv_pd *pd;

	self->ctx = ibv_open_device(self->dev);
	ASSERT_NE(NULL, self->ctx);

	/* More cycles than PDs exist: the numbers must be recycled. */
	for (i = 0; i < cycles; i++) {
		pd = ibv_alloc_pd(self->ctx);
		ASSERT_NE(NULL, pd) TH_LOG("cycle %d: %s", i, strerror(errno));
		ASSERT_EQ(0, ibv_dealloc_pd(pd));
	}
	expect_objs(_metadata, &self->base, 1, 0);

	ASSERT_EQ(0, ibv_close_device(self->ctx));
	self->ctx = NULL;
}

TEST_HARNESS_MAIN
