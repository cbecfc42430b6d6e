// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Device memory (Documentation/hw/qhca-objects.rst, interface 1.7): the
 * device's BAR 4, which ibv_alloc_dm() hands out in pieces, the process
 * reads and writes with ibv_memcpy_to_dm()/ibv_memcpy_from_dm(), and
 * ibv_reg_dm_mr() makes an MR of, zero-based.
 *
 * Sizes from 1 byte to max_dm_size; every piece is whole pages, so the
 * pool holds max_dm_size / 4096 DMs of any smaller size, and the next is
 * ENOMEM until one is freed.  Copies are bounds-checked and in 32-bit
 * words.  DM MRs take the access REG_MR DM allows (not MW_BIND, always
 * ZERO_BASED) and carry RDMA WRITE, READ, SEND in both directions and
 * atomics, each checked byte for byte through the copies; a DM of a
 * context starts zeroed whatever another context left in its pages, and
 * an unprivileged process gets none of the pages another one holds.
 *
 * QP 0 is the requester with host memory, QP 1 owns the DM, as in the
 * other RC tests.
 */
#include <sys/wait.h>

#include <infiniband/verbs.h>

#include "rc_pair.h"

#define PAGE		4096
#define LEN		700		/* crosses a page where it is put */
#define DM_LEN		(3 * PAGE + 100)	/* not whole pages */
#define MR_OFF		(PAGE - 200)	/* the MR's iova 0 in the DM */
#define MR_LEN		(2 * PAGE)
#define MR_ACCESS	(IBV_ACCESS_ZERO_BASED | RC_ACCESS_ALL)

/* A call that returns NULL and sets errno. */
#define EXPECT_NULL_ERRNO(expected_errno, call) \
	EXPECT_ERRNO(expected_errno, (call) ? 0 : -1)

FIXTURE(dm)
{
	struct rc_pair p;
	struct rc_buf local;		/* QP 0's memory */
	struct qhca_objs base;		/* with the pair and local made */
	uint64_t max_dm_size;
	uint64_t cap_flags;		/* device_cap_flags_ex */
	struct ibv_dm *dm;
	struct ibv_mr *mr;		/* over dm */
	uint8_t shadow[DM_LEN];		/* what dm should hold */
};

FIXTURE_SETUP(dm)
{
	struct ibv_device_attr_ex attr = {};
	struct rc_opts o;

	rc_default_opts(&o);
	rc_pair_open(_metadata, &self->p, &o);
	ASSERT_EQ(0, ibv_query_device_ex(self->p.ctx, NULL, &attr));
	self->max_dm_size = attr.max_dm_size;
	self->cap_flags = attr.device_cap_flags_ex;
	/* The device's default: a device without DM fails here, no skip. */
	ASSERT_EQ((uint64_t)QHCA_DEFAULT_DM_SIZE, self->max_dm_size);
	ASSERT_EQ(0, qhca_objs_get(&self->p.base, "dm_pages"))
		TH_LOG("device memory in use before the test");
	rc_pair_connect(_metadata, &self->p);
	rc_buf_alloc(_metadata, &self->local, self->p.pd, 2 * PAGE,
		     RC_ACCESS_ALL);
	ASSERT_EQ(0, qhca_read_objs(&self->base));
}

FIXTURE_TEARDOWN(dm)
{
	if (self->mr)
		EXPECT_EQ(0, ibv_dereg_mr(self->mr));
	if (self->dm)
		EXPECT_EQ(0, ibv_free_dm(self->dm));
	rc_buf_free(_metadata, &self->local);
	/* dm_pages included: every page back in the pool. */
	rc_pair_close(_metadata, &self->p);
}

static struct ibv_dm *dm_alloc(struct ibv_context *ctx, size_t len)
{
	struct ibv_alloc_dm_attr attr = { .length = len };

	return ibv_alloc_dm(ctx, &attr);
}

/* A DM of DM_LEN, poisoned through the copies, and its MR (MR_ACCESS). */
static void dm_mr_setup(struct __test_metadata *_metadata,
		     FIXTURE_DATA(dm) *self, uint32_t seed)
{
	self->dm = dm_alloc(self->p.ctx, DM_LEN);
	ASSERT_NE(NULL, self->dm) TH_LOG("ibv_alloc_dm: %s", strerror(errno));
	rc_poison(self->shadow, DM_LEN, seed);
	ASSERT_EQ(0, ibv_memcpy_to_dm(self->dm, 0, self->shadow, DM_LEN));
	self->mr = ibv_reg_dm_mr(self->p.pd, self->dm, MR_OFF, MR_LEN,
				 MR_ACCESS);
	ASSERT_NE(NULL, self->mr) TH_LOG("ibv_reg_dm_mr: %s",
					 strerror(errno));
}

/* The DM holds the shadow, every byte of it. */
static void dm_expect_shadow(struct __test_metadata *_metadata,
			     FIXTURE_DATA(dm) *self)
{
	uint8_t now[DM_LEN];
	size_t i;

	memset(now, 0x5a, sizeof(now));
	ASSERT_EQ(0, ibv_memcpy_from_dm(now, self->dm, 0, DM_LEN));
	for (i = 0; i < DM_LEN; i++)
		if (now[i] != self->shadow[i])
			break;
	EXPECT_EQ((size_t)DM_LEN, i) TH_LOG("DM byte %zu is %#x, expected %#x", i,
				    now[i], self->shadow[i]);
}

TEST_F_TIMEOUT(dm, sizes, 120)
{
	static const size_t sizes[] = { 1, 4, PAGE - 1, PAGE, PAGE + 1,
					DM_LEN };
	struct ibv_alloc_dm_attr attr = { .length = 64 };
	struct ibv_dm *dm;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		dm = dm_alloc(self->p.ctx, sizes[i]);
		ASSERT_NE(NULL, dm) TH_LOG("%zu bytes: %s", sizes[i],
					   strerror(errno));
		/* Whole pages, whatever the length. */
		QHCA_EXPECT_OBJS(self->base, "dm_pages+%zu",
				 (sizes[i] + PAGE - 1) / PAGE);
		EXPECT_EQ(0, ibv_free_dm(dm));
	}
	dm = dm_alloc(self->p.ctx, self->max_dm_size);
	ASSERT_NE(NULL, dm) TH_LOG("max_dm_size: %s", strerror(errno));
	EXPECT_EQ(0, ibv_free_dm(dm));

	EXPECT_NULL_ERRNO(EINVAL, dm_alloc(self->p.ctx,
					    self->max_dm_size + 1));
	EXPECT_NULL_ERRNO(EINVAL, dm_alloc(self->p.ctx, 0));
	/* No comp_mask bit is defined. */
	attr.comp_mask = 1;
	EXPECT_NULL_ERRNO(EINVAL, ibv_alloc_dm(self->p.ctx, &attr));
	/* An alignment beyond the pool cannot be had. */
	attr.comp_mask = 0;
	attr.log_align_req = 63;
	EXPECT_NULL_ERRNO(EINVAL, ibv_alloc_dm(self->p.ctx, &attr));
	QHCA_EXPECT_OBJS_AT(self->base);
}

/* One-byte DMs fill the pool a page each; then ENOMEM until a free. */
TEST_F_TIMEOUT(dm, exhaust, 120)
{
	unsigned int pages = self->max_dm_size / PAGE, n, i;
	struct ibv_dm **dms;

	dms = calloc(pages + 1, sizeof(*dms));
	ASSERT_NE(NULL, dms);
	for (n = 0; n < pages; n++) {
		dms[n] = dm_alloc(self->p.ctx, 1);
		if (!dms[n])
			break;
	}
	EXPECT_EQ(pages, n) TH_LOG("DM %u of %u: %s", n, pages,
				   strerror(errno));
	QHCA_EXPECT_OBJS(self->base, "dm_pages+%u", n);
	EXPECT_NULL_ERRNO(ENOMEM, dm_alloc(self->p.ctx, 1));

	/* A freed page is the one to be had again. */
	if (n) {
		EXPECT_EQ(0, ibv_free_dm(dms[n / 2]));
		dms[n / 2] = dm_alloc(self->p.ctx, PAGE);
		EXPECT_NE(NULL, dms[n / 2]) TH_LOG("after a free: %s",
						   strerror(errno));
		EXPECT_NULL_ERRNO(ENOMEM, dm_alloc(self->p.ctx, 1));
	}
	for (i = 0; i < n; i++)
		if (dms[i])
			EXPECT_EQ(0, ibv_free_dm(dms[i]));
	free(dms);
	QHCA_EXPECT_OBJS_AT(self->base);
}

/* Copies in and out at offsets, in 32-bit words and within the DM only. */
TEST_F_TIMEOUT(dm, memcpy, 120)
{
	static const size_t at[][2] = {	/* offset, length */
		{ 0, 4 }, { 4, 64 }, { PAGE - 8, 16 }, { 100, 2 * PAGE },
		{ DM_LEN - 4, 4 }, { 0, DM_LEN },
	};
	uint8_t *buf, *zero;
	unsigned int i;

	buf = malloc(DM_LEN);
	zero = calloc(1, DM_LEN);
	ASSERT_NE(NULL, buf);
	ASSERT_NE(NULL, zero);
	self->dm = dm_alloc(self->p.ctx, DM_LEN);
	ASSERT_NE(NULL, self->dm) TH_LOG("ibv_alloc_dm: %s", strerror(errno));

	/* A new DM is zero, whoever had its pages before. */
	memset(buf, 0xa5, DM_LEN);
	ASSERT_EQ(0, ibv_memcpy_from_dm(buf, self->dm, 0, DM_LEN));
	EXPECT_EQ(0, memcmp(buf, zero, DM_LEN));
	memcpy(self->shadow, zero, DM_LEN);

	for (i = 0; i < ARRAY_SIZE(at); i++) {
		rc_fill(self->shadow + at[i][0], at[i][1], 10 + i);
		ASSERT_EQ(0, ibv_memcpy_to_dm(self->dm, at[i][0],
					      self->shadow + at[i][0],
					      at[i][1]));
		memset(buf, 0xa5, at[i][1]);
		ASSERT_EQ(0, ibv_memcpy_from_dm(buf, self->dm, at[i][0],
						at[i][1]));
		RC_EXPECT_PATTERN(buf, at[i][1], 10 + i);
		dm_expect_shadow(_metadata, self);
	}

	/* Misaligned offset or length, or past the DM's length: EINVAL. */
	EXPECT_EQ(EINVAL, ibv_memcpy_to_dm(self->dm, 1, buf, 4));
	EXPECT_EQ(EINVAL, ibv_memcpy_to_dm(self->dm, 4, buf, 6));
	EXPECT_EQ(EINVAL, ibv_memcpy_to_dm(self->dm, DM_LEN, buf, 4));
	EXPECT_EQ(EINVAL, ibv_memcpy_to_dm(self->dm, 0, buf, DM_LEN + 4));
	EXPECT_EQ(EINVAL, ibv_memcpy_from_dm(buf, self->dm, 2, 4));
	EXPECT_EQ(EINVAL, ibv_memcpy_from_dm(buf, self->dm, 0, 3));
	/* Within the last page but not the DM: refused all the same. */
	EXPECT_EQ(EINVAL, ibv_memcpy_from_dm(buf, self->dm, DM_LEN, 4));
	EXPECT_EQ(EINVAL, ibv_memcpy_from_dm(buf, self->dm, ~0ULL - 3, 8));
	dm_expect_shadow(_metadata, self);
	free(buf);
	free(zero);
}

/* Every access REG_MR DM allows; MW_BIND and the rest refused. */
TEST_F_TIMEOUT(dm, reg_access, 120)
{
	static const unsigned int good[] = {
		0,
		IBV_ACCESS_LOCAL_WRITE,
		IBV_ACCESS_REMOTE_READ,
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC,
		RC_ACCESS_ALL,
		RC_ACCESS_ALL | IBV_ACCESS_RELAXED_ORDERING,
	};
	struct ibv_mr *mr;
	unsigned int i;

	self->dm = dm_alloc(self->p.ctx, DM_LEN);
	ASSERT_NE(NULL, self->dm) TH_LOG("ibv_alloc_dm: %s", strerror(errno));
	for (i = 0; i < ARRAY_SIZE(good); i++) {
		mr = ibv_reg_dm_mr(self->p.pd, self->dm, 0, DM_LEN,
				   good[i] | IBV_ACCESS_ZERO_BASED);
		ASSERT_NE(NULL, mr) TH_LOG("access %#x: %s", good[i],
					   strerror(errno));
		QHCA_EXPECT_OBJS(self->base, "mrs+1 dm_pages+4");
		EXPECT_EQ(0, ibv_dereg_mr(mr));
	}
	/* FLUSH of placement type GLOBAL, where the device has it. */
	if (self->cap_flags & IB_UVERBS_DEVICE_FLUSH_GLOBAL) {
		mr = ibv_reg_dm_mr(self->p.pd, self->dm, 0, DM_LEN,
				   MR_ACCESS | IBV_ACCESS_FLUSH_GLOBAL);
		ASSERT_NE(NULL, mr) TH_LOG("FLUSH_GLOBAL: %s", strerror(errno));
		EXPECT_EQ(0, ibv_dereg_mr(mr));
	}

	/* No window binds to device memory. */
	EXPECT_NULL_ERRNO(EINVAL, ibv_reg_dm_mr(self->p.pd, self->dm, 0,
			DM_LEN, MR_ACCESS | IBV_ACCESS_MW_BIND));
	/* A DM MR is zero-based, always. */
	EXPECT_NULL_ERRNO(EINVAL, ibv_reg_dm_mr(self->p.pd, self->dm, 0,
			DM_LEN, RC_ACCESS_ALL));
	/* Remote writes need local write. */
	EXPECT_NULL_ERRNO(EINVAL, ibv_reg_dm_mr(self->p.pd, self->dm, 0,
			DM_LEN, IBV_ACCESS_ZERO_BASED |
			IBV_ACCESS_REMOTE_WRITE));
	/* Beyond the DM's length (not its last page): EINVAL. */
	EXPECT_NULL_ERRNO(EINVAL, ibv_reg_dm_mr(self->p.pd, self->dm, 4,
			DM_LEN, MR_ACCESS));
	EXPECT_NULL_ERRNO(EINVAL, ibv_reg_dm_mr(self->p.pd, self->dm,
			DM_LEN + 4, 4, MR_ACCESS));
	QHCA_EXPECT_OBJS(self->base, "dm_pages+4");
}

/*
 * An empty DM MR, even at the DM's end, is an MR (rdma-core's tests make
 * one) that no remote access reaches.
 */
TEST_F_TIMEOUT(dm, empty_mr, 120)
{
	struct ibv_sge sge = rc_sge(&self->local, 0, 4);

	dm_mr_setup(_metadata, self, 40);
	EXPECT_EQ(0, ibv_dereg_mr(self->mr));
	self->mr = ibv_reg_dm_mr(self->p.pd, self->dm, DM_LEN, 0, MR_ACCESS);
	ASSERT_NE(NULL, self->mr) TH_LOG("ibv_reg_dm_mr: %s",
					 strerror(errno));
	rc_fill(self->local.mem, 4, 41);
	ASSERT_EQ(0, rc_post(self->p.s[0].qp, 1, IBV_WR_RDMA_WRITE,
			     IBV_SEND_SIGNALED, &sge, 1, 0, self->mr->rkey));
	RC_WAIT_WC(self->p.s[0].scq, 1, IBV_WC_REM_ACCESS_ERR, -1);
	dm_expect_shadow(_metadata, self);
}

/* An MR keeps its DM: ibv_free_dm() is EBUSY until it is deregistered. */
TEST_F_TIMEOUT(dm, free_busy, 120)
{
	dm_mr_setup(_metadata, self, 1);
	EXPECT_EQ(EBUSY, ibv_free_dm(self->dm));
	/* Still there, and still working. */
	dm_expect_shadow(_metadata, self);
	EXPECT_EQ(0, ibv_dereg_mr(self->mr));
	self->mr = NULL;
	EXPECT_EQ(0, ibv_free_dm(self->dm));
	self->dm = NULL;
	QHCA_EXPECT_OBJS_AT(self->base);
}

/* RDMA WRITE from host memory into the DM MR, READ back out. */
TEST_F_TIMEOUT(dm, rdma_write_read, 120)
{
	const size_t at = PAGE - 300;	/* iova: crosses a DM page */
	struct ibv_sge sge = rc_sge(&self->local, 0, LEN);

	dm_mr_setup(_metadata, self, 2);
	rc_fill(self->local.mem, LEN, 3);
	ASSERT_EQ(0, rc_post(self->p.s[0].qp, 1, IBV_WR_RDMA_WRITE,
			     IBV_SEND_SIGNALED, &sge, 1, at,
			     self->mr->rkey));
	RC_WAIT_WC(self->p.s[0].scq, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	/* Zero-based: iova at is byte MR_OFF + at of the DM. */
	rc_fill(self->shadow + MR_OFF + at, LEN, 3);
	dm_expect_shadow(_metadata, self);

	rc_fill(self->shadow + MR_OFF + at, LEN, 4);
	ASSERT_EQ(0, ibv_memcpy_to_dm(self->dm, MR_OFF + at,
				      self->shadow + MR_OFF + at, LEN));
	rc_poison(self->local.mem, LEN, 4);
	ASSERT_EQ(0, rc_post(self->p.s[0].qp, 2, IBV_WR_RDMA_READ,
			     IBV_SEND_SIGNALED, &sge, 1, at,
			     self->mr->rkey));
	RC_WAIT_WC(self->p.s[0].scq, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	RC_EXPECT_PATTERN(self->local.mem, LEN, 4);

	/* The MR ends at MR_LEN, wherever the DM does: out of range. */
	ASSERT_EQ(0, rc_post(self->p.s[0].qp, 3, IBV_WR_RDMA_WRITE,
			     IBV_SEND_SIGNALED, &sge, 1, MR_LEN - LEN + 4,
			     self->mr->rkey));
	RC_WAIT_WC(self->p.s[0].scq, 3, IBV_WC_REM_ACCESS_ERR, -1);
	dm_expect_shadow(_metadata, self);
}

/*
 * SEND into a receive buffer in the DM MR, and a SEND from it (the DM as
 * the local side of a work request).
 */
TEST_F_TIMEOUT(dm, send_recv, 120)
{
	const size_t at = 2 * PAGE - 300 - MR_OFF;
	struct ibv_sge dsge = { .addr = at, .length = LEN };
	struct ibv_sge sge = rc_sge(&self->local, 0, LEN);
	struct ibv_wc wc;

	dm_mr_setup(_metadata, self, 5);
	dsge.lkey = self->mr->lkey;
	ASSERT_EQ(0, rc_post_recv(self->p.s[1].qp, 10, &dsge, 1));
	rc_fill(self->local.mem, LEN, 6);
	ASSERT_EQ(0, rc_post(self->p.s[0].qp, 11, IBV_WR_SEND,
			     IBV_SEND_SIGNALED, &sge, 1, 0, 0));
	RC_WAIT_WC(self->p.s[0].scq, 11, IBV_WC_SUCCESS, IBV_WC_SEND);
	rc_wait_wc(_metadata, self->p.s[1].rcq, &wc);
	RC_EXPECT_WC(wc, 10, IBV_WC_SUCCESS, IBV_WC_RECV);
	EXPECT_EQ((uint32_t)LEN, wc.byte_len);
	rc_fill(self->shadow + MR_OFF + at, LEN, 6);
	dm_expect_shadow(_metadata, self);

	/* Back: QP 1 sends from the DM into host memory. */
	rc_poison(self->local.mem, LEN, 6);
	ASSERT_EQ(0, rc_post_recv(self->p.s[0].qp, 12, &sge, 1));
	ASSERT_EQ(0, rc_post(self->p.s[1].qp, 13, IBV_WR_SEND,
			     IBV_SEND_SIGNALED, &dsge, 1, 0, 0));
	RC_WAIT_WC(self->p.s[1].scq, 13, IBV_WC_SUCCESS, IBV_WC_SEND);
	RC_WAIT_WC(self->p.s[0].rcq, 12, IBV_WC_SUCCESS, IBV_WC_RECV);
	RC_EXPECT_PATTERN(self->local.mem, LEN, 6);
}

/* Fetch-and-add and compare-and-swap on a word of the DM MR. */
TEST_F_TIMEOUT(dm, atomic, 120)
{
	const size_t at = PAGE + 8 - MR_OFF;	/* 8-byte aligned iova */
	struct ibv_sge sge = rc_sge(&self->local, 0, 8);
	uint64_t v = 0x1122334455667788ULL, old;

	dm_mr_setup(_metadata, self, 7);
	ASSERT_EQ(0, ibv_memcpy_to_dm(self->dm, MR_OFF + at, &v, 8));
	memcpy(self->shadow + MR_OFF + at, &v, 8);

	ASSERT_EQ(0, rc_post_atomic(self->p.s[0].qp, 20,
				    IBV_WR_ATOMIC_FETCH_AND_ADD,
				    IBV_SEND_SIGNALED, &sge, at,
				    self->mr->rkey, 0x100, 0));
	RC_WAIT_WC(self->p.s[0].scq, 20, IBV_WC_SUCCESS, IBV_WC_FETCH_ADD);
	memcpy(&old, self->local.mem, 8);
	EXPECT_EQ(v, old);
	v += 0x100;
	memcpy(self->shadow + MR_OFF + at, &v, 8);
	dm_expect_shadow(_metadata, self);

	ASSERT_EQ(0, rc_post_atomic(self->p.s[0].qp, 21,
				    IBV_WR_ATOMIC_CMP_AND_SWP,
				    IBV_SEND_SIGNALED, &sge, at,
				    self->mr->rkey, v, 42));
	RC_WAIT_WC(self->p.s[0].scq, 21, IBV_WC_SUCCESS, IBV_WC_COMP_SWAP);
	memcpy(&old, self->local.mem, 8);
	EXPECT_EQ(v, old);
	v = 42;
	memcpy(self->shadow + MR_OFF + at, &v, 8);
	dm_expect_shadow(_metadata, self);
}

/*
 * Two contexts: each has its own pages, and a context that gets the
 * pages another one freed finds them zeroed, not the other's bytes.
 */
TEST_F_TIMEOUT(dm, contexts, 120)
{
	struct ibv_context *ctx2;
	struct ibv_dm *dm2;
	uint8_t *buf;
	size_t half = self->max_dm_size / 2, i;

	buf = malloc(self->max_dm_size);
	ASSERT_NE(NULL, buf);
	ctx2 = ibv_open_device(self->p.ctx->device);
	ASSERT_NE(NULL, ctx2);

	self->dm = dm_alloc(self->p.ctx, half);
	ASSERT_NE(NULL, self->dm);
	dm2 = dm_alloc(ctx2, half);
	ASSERT_NE(NULL, dm2);
	rc_fill(buf, half, 30);
	ASSERT_EQ(0, ibv_memcpy_to_dm(self->dm, 0, buf, half));
	rc_fill(buf, half, 31);
	ASSERT_EQ(0, ibv_memcpy_to_dm(dm2, 0, buf, half));
	ASSERT_EQ(0, ibv_memcpy_from_dm(buf, self->dm, 0, half));
	RC_EXPECT_PATTERN(buf, half, 30);
	ASSERT_EQ(0, ibv_memcpy_from_dm(buf, dm2, 0, half));
	RC_EXPECT_PATTERN(buf, half, 31);

	/* The whole pool: the other context's old pages among them. */
	EXPECT_EQ(0, ibv_free_dm(dm2));
	EXPECT_EQ(0, ibv_free_dm(self->dm));
	self->dm = NULL;
	dm2 = dm_alloc(ctx2, self->max_dm_size);
	ASSERT_NE(NULL, dm2) TH_LOG("the whole pool: %s", strerror(errno));
	memset(buf, 0xa5, self->max_dm_size);
	ASSERT_EQ(0, ibv_memcpy_from_dm(buf, dm2, 0, self->max_dm_size));
	for (i = 0; i < self->max_dm_size; i++)
		if (buf[i])
			break;
	EXPECT_EQ(self->max_dm_size, i) TH_LOG("byte %zu is %#x", i, buf[i]);
	EXPECT_EQ(0, ibv_free_dm(dm2));
	EXPECT_EQ(0, ibv_close_device(ctx2));
	free(buf);
}

/*
 * The other process is "nobody": an unprivileged process gets device
 * memory too, but not the pages another process holds, and its pages
 * start zeroed.  Its steps, in the order it does them; the exit status
 * says which failed.
 */
enum {
	NOBODY_OK, NOBODY_SETUID, NOBODY_OPEN, NOBODY_NOT_ENOMEM,
	NOBODY_ALLOC, NOBODY_NOT_ZERO, NOBODY_COPY, NOBODY_FREE,
};

static int nobody_dm(struct ibv_device *dev, size_t half)
{
	struct ibv_context *ctx;
	struct ibv_dm *dm;
	uint8_t *buf;
	size_t i;

	if (setgid(65534) || setuid(65534))
		return NOBODY_SETUID;
	ctx = ibv_open_device(dev);
	buf = malloc(half);
	if (!ctx || !buf)
		return NOBODY_OPEN;
	/* Half the pool is the other process's. */
	dm = dm_alloc(ctx, 2 * half);
	if (dm || errno != ENOMEM)
		return NOBODY_NOT_ENOMEM;
	dm = dm_alloc(ctx, half);
	if (!dm)
		return NOBODY_ALLOC;
	if (ibv_memcpy_from_dm(buf, dm, 0, half))
		return NOBODY_COPY;
	for (i = 0; i < half; i++)
		if (buf[i])
			return NOBODY_NOT_ZERO;
	rc_fill(buf, half, 51);
	if (ibv_memcpy_to_dm(dm, 0, buf, half))
		return NOBODY_COPY;
	if (ibv_free_dm(dm) || ibv_close_device(ctx))
		return NOBODY_FREE;
	free(buf);
	return NOBODY_OK;
}

TEST_F_TIMEOUT(dm, unprivileged, 120)
{
	size_t half = self->max_dm_size / 2;
	int status;
	uint8_t *buf;
	pid_t pid;

	buf = malloc(half);
	ASSERT_NE(NULL, buf);
	self->dm = dm_alloc(self->p.ctx, half);
	ASSERT_NE(NULL, self->dm) TH_LOG("ibv_alloc_dm: %s", strerror(errno));
	rc_fill(buf, half, 50);
	ASSERT_EQ(0, ibv_memcpy_to_dm(self->dm, 0, buf, half));

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(nobody_dm(self->p.ctx->device, half));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(NOBODY_OK, WEXITSTATUS(status));

	/* Ours, untouched by the other process's writes. */
	memset(buf, 0, half);
	ASSERT_EQ(0, ibv_memcpy_from_dm(buf, self->dm, 0, half));
	RC_EXPECT_PATTERN(buf, half, 50);
	free(buf);
}

TEST_HARNESS_MAIN
