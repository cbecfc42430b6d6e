// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * ibv_rereg_mr() (Documentation/hw/qhca-objects.rst, "Re-registration"):
 * a new translation, a new PD and new access rights, each alone and all
 * together, each checked by RDMA WRITEs and READs from the peer QP whose
 * bytes land exactly where the new registration says, and refused where
 * it no longer reaches; the keys stay.  An MR a window is bound to is
 * refused with EBUSY and keeps working, as does one whose rereg failed.
 *
 * QP 1 owns the MR (its memory is region A, then region B) and QP 0
 * reaches it by rkey, as a server's peer would.
 */
#include "rc_pair.h"

#define PAGE		4096
#define A_LEN		(2 * PAGE)
#define B_LEN		(3 * PAGE)
#define LEN		700		/* crosses a page where it is put */
#define MR_ACCESS	(RC_ACCESS_ALL | IBV_ACCESS_MW_BIND)

FIXTURE(rereg)
{
	struct rc_pair p;
	struct rc_buf local;		/* QP 0's memory */
	struct rc_buf a, b;		/* the MR's memory, before and after */
	struct ibv_mr *mr;		/* over a at first */
	uint32_t lkey, rkey;		/* as registered */
	struct ibv_pd *pd2;
	struct ibv_qp *qp2[2];		/* a pair in pd2, on the pair's CQs */
	struct rc_buf local2;		/* qp2[0]'s memory, in pd2 */
	struct ibv_mw *mw;
};

FIXTURE_SETUP(rereg)
{
	struct rc_opts o;

	rc_default_opts(&o);
	rc_pair_open(_metadata, &self->p, &o);
	rc_pair_connect(_metadata, &self->p);
	rc_buf_alloc(_metadata, &self->local, self->p.pd, B_LEN,
		     RC_ACCESS_ALL);
	/* Plain memory: a and b get their MR below, b's only by rereg. */
	ASSERT_EQ(0, posix_memalign((void **)&self->a.mem, PAGE, A_LEN));
	self->a.size = A_LEN;
	ASSERT_EQ(0, posix_memalign((void **)&self->b.mem, PAGE, B_LEN));
	self->b.size = B_LEN;
	self->mr = ibv_reg_mr(self->p.pd, self->a.mem, A_LEN, MR_ACCESS);
	ASSERT_NE(NULL, self->mr) TH_LOG("ibv_reg_mr: %s", strerror(errno));
	self->lkey = self->mr->lkey;
	self->rkey = self->mr->rkey;
}

FIXTURE_TEARDOWN(rereg)
{
	int i;

	if (self->mw)
		EXPECT_EQ(0, ibv_dealloc_mw(self->mw));
	if (self->mr)
		EXPECT_EQ(0, ibv_dereg_mr(self->mr));
	for (i = 0; i < 2; i++)
		if (self->qp2[i])
			EXPECT_EQ(0, ibv_destroy_qp(self->qp2[i]));
	rc_buf_free(_metadata, &self->local2);
	if (self->pd2)
		EXPECT_EQ(0, ibv_dealloc_pd(self->pd2));
	free(self->a.mem);
	free(self->b.mem);
	rc_buf_free(_metadata, &self->local);
	rc_pair_close(_metadata, &self->p);
}

/*
 * One RDMA op of LEN bytes from @qp (completing on @cq, its memory @loc)
 * to @raddr with @rkey; its status.  A WRITE carries pattern @seed, a
 * READ brings back what is there into @loc, poisoned first.
 */
static int xfer(struct __test_metadata *_metadata, struct ibv_qp *qp,
		struct ibv_cq *cq, struct rc_buf *loc,
		enum ibv_wr_opcode op, void *raddr, uint32_t rkey,
		uint32_t seed)
{
	struct ibv_sge sge = rc_sge(loc, 0, LEN);
	struct ibv_wc wc;

	if (op == IBV_WR_RDMA_WRITE)
		rc_fill(loc->mem, LEN, seed);
	else
		rc_poison(loc->mem, LEN, seed);
	if (rc_post(qp, seed, op, IBV_SEND_SIGNALED, &sge, 1,
		    (uintptr_t)raddr, rkey))
		return -1;
	rc_wait_wc(_metadata, cq, &wc);
	EXPECT_EQ((uint64_t)seed, wc.wr_id);
	return wc.status;
}

/* From QP 0 of the pair. */
static int xfer0(struct __test_metadata *_metadata, FIXTURE_DATA(rereg) *self,
		 enum ibv_wr_opcode op, void *raddr, uint32_t seed)
{
	return xfer(_metadata, self->p.s[0].qp, self->p.s[0].scq,
		    &self->local, op, raddr, self->rkey, seed);
}

/*
 * A WRITE to @at, which must then hold it byte for byte with everything
 * else of @region untouched, and a READ of the same bytes back.
 */
static void write_read(struct __test_metadata *_metadata,
		       FIXTURE_DATA(rereg) *self, struct ibv_qp *qp,
		       struct ibv_cq *cq, struct rc_buf *loc,
		       struct rc_buf *region, size_t at, uint32_t seed)
{
	rc_prepare_dst(region, at, LEN, seed);
	ASSERT_EQ(IBV_WC_SUCCESS,
		  xfer(_metadata, qp, cq, loc, IBV_WR_RDMA_WRITE,
		       region->mem + at, self->rkey, seed));
	RC_EXPECT_DELIVERED(region, at, LEN, seed);

	rc_fill(region->mem + at, LEN, seed + 7);
	ASSERT_EQ(IBV_WC_SUCCESS,
		  xfer(_metadata, qp, cq, loc, IBV_WR_RDMA_READ,
		       region->mem + at, self->rkey, seed + 7));
	RC_EXPECT_PATTERN(loc->mem, LEN, seed + 7);
}

static void write_read0(struct __test_metadata *_metadata,
			FIXTURE_DATA(rereg) *self, struct rc_buf *region,
			size_t at, uint32_t seed)
{
	write_read(_metadata, self, self->p.s[0].qp, self->p.s[0].scq,
		   &self->local, region, at, seed);
}

/* A connected pair of QPs in a second PD, on the pair's CQs. */
static void open_pd2(struct __test_metadata *_metadata,
		     FIXTURE_DATA(rereg) *self)
{
	struct rc_pair *p = &self->p;
	int i;

	self->pd2 = ibv_alloc_pd(p->ctx);
	ASSERT_NE(NULL, self->pd2);
	rc_buf_alloc(_metadata, &self->local2, self->pd2, B_LEN,
		     RC_ACCESS_ALL);
	for (i = 0; i < 2; i++) {
		struct ibv_qp_init_attr init = {
			.send_cq = p->s[i].scq,
			.recv_cq = p->s[i].rcq,
			.qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 8, .max_recv_wr = 8,
				 .max_send_sge = 1, .max_recv_sge = 1 },
		};

		self->qp2[i] = ibv_create_qp(self->pd2, &init);
		ASSERT_NE(NULL, self->qp2[i]);
	}
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, rc_to_init(self->qp2[i], RC_QP_ACCESS_ALL));
		ASSERT_EQ(0, rc_to_rtr(p, self->qp2[i],
				       self->qp2[!i]->qp_num, p->pattr.lid));
		ASSERT_EQ(0, rc_to_rts(p, self->qp2[i]));
	}
}

/* The keys did not change, and libibverbs took the new range. */
static void expect_mr(struct __test_metadata *_metadata,
		      FIXTURE_DATA(rereg) *self, struct rc_buf *region,
		      struct ibv_pd *pd)
{
	EXPECT_EQ(self->lkey, self->mr->lkey);
	EXPECT_EQ(self->rkey, self->mr->rkey);
	EXPECT_EQ((void *)region->mem, self->mr->addr);
	EXPECT_EQ(region->size, self->mr->length);
	EXPECT_EQ(pd, self->mr->pd);
}

/* A new translation: b is reached, a no longer (that last: QP 0 fails). */
TEST_F_TIMEOUT(rereg, translation, 120)
{
	write_read0(_metadata, self, &self->a, PAGE - 100, 1);
	ASSERT_EQ(0, ibv_rereg_mr(self->mr, IBV_REREG_MR_CHANGE_TRANSLATION,
				  NULL, self->b.mem, B_LEN, 0))
		TH_LOG("ibv_rereg_mr: %s", strerror(errno));
	expect_mr(_metadata, self, &self->b, self->p.pd);
	rc_poison(self->a.mem, A_LEN, 99);
	write_read0(_metadata, self, &self->b, 2 * PAGE - 300, 2);
	write_read0(_metadata, self, &self->b, B_LEN - LEN, 3);
	RC_EXPECT_POISON(self->a.mem, A_LEN, 99);
	/* b's last byte is the MR's last. */
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  xfer0(_metadata, self, IBV_WR_RDMA_WRITE,
			self->b.mem + B_LEN - LEN + 1, 4));
	RC_EXPECT_POISON(self->a.mem, A_LEN, 99);
}

TEST_F_TIMEOUT(rereg, old_range_refused, 120)
{
	ASSERT_EQ(0, ibv_rereg_mr(self->mr, IBV_REREG_MR_CHANGE_TRANSLATION,
				  NULL, self->b.mem, B_LEN, 0));
	rc_poison(self->a.mem, A_LEN, 5);
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  xfer0(_metadata, self, IBV_WR_RDMA_WRITE, self->a.mem, 6));
	RC_EXPECT_POISON(self->a.mem, A_LEN, 5);
}

/* A new PD: QPs of that PD reach the MR, the old PD's no more. */
TEST_F_TIMEOUT(rereg, pd, 120)
{
	/* Its own PD again: nothing changes. */
	ASSERT_EQ(0, ibv_rereg_mr(self->mr, IBV_REREG_MR_CHANGE_PD, self->p.pd,
				  NULL, 0, 0))
		TH_LOG("ibv_rereg_mr: %s", strerror(errno));
	write_read0(_metadata, self, &self->a, 0, 9);
	open_pd2(_metadata, self);
	ASSERT_EQ(0, ibv_rereg_mr(self->mr, IBV_REREG_MR_CHANGE_PD, self->pd2,
				  NULL, 0, 0))
		TH_LOG("ibv_rereg_mr: %s", strerror(errno));
	expect_mr(_metadata, self, &self->a, self->pd2);
	write_read(_metadata, self, self->qp2[0], self->p.s[0].scq,
		   &self->local2, &self->a, 100, 10);
	rc_poison(self->a.mem, A_LEN, 11);
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  xfer0(_metadata, self, IBV_WR_RDMA_WRITE, self->a.mem, 12));
	RC_EXPECT_POISON(self->a.mem, A_LEN, 11);
}

/* New access rights: READs still, WRITEs no more. */
TEST_F_TIMEOUT(rereg, access, 120)
{
	ASSERT_EQ(0, ibv_rereg_mr(self->mr, IBV_REREG_MR_CHANGE_ACCESS, NULL,
				  NULL, 0, IBV_ACCESS_LOCAL_WRITE |
				  IBV_ACCESS_REMOTE_READ))
		TH_LOG("ibv_rereg_mr: %s", strerror(errno));
	expect_mr(_metadata, self, &self->a, self->p.pd);
	rc_fill(self->a.mem + 200, LEN, 20);
	EXPECT_EQ(IBV_WC_SUCCESS,
		  xfer0(_metadata, self, IBV_WR_RDMA_READ, self->a.mem + 200,
			21));
	RC_EXPECT_PATTERN(self->local.mem, LEN, 20);
	rc_poison(self->a.mem, A_LEN, 22);
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  xfer0(_metadata, self, IBV_WR_RDMA_WRITE, self->a.mem, 23));
	RC_EXPECT_POISON(self->a.mem, A_LEN, 22);
}

/*
 * Read-only first, then all three at once: b, pd2, writable again (the
 * pages are pinned anew for writing).
 */
TEST_F_TIMEOUT(rereg, all_three, 120)
{
	ASSERT_EQ(0, ibv_rereg_mr(self->mr, IBV_REREG_MR_CHANGE_ACCESS, NULL,
				  NULL, 0, IBV_ACCESS_REMOTE_READ));
	open_pd2(_metadata, self);
	ASSERT_EQ(0, ibv_rereg_mr(self->mr, IBV_REREG_MR_CHANGE_TRANSLATION |
				  IBV_REREG_MR_CHANGE_PD |
				  IBV_REREG_MR_CHANGE_ACCESS, self->pd2,
				  self->b.mem, B_LEN, MR_ACCESS))
		TH_LOG("ibv_rereg_mr: %s", strerror(errno));
	expect_mr(_metadata, self, &self->b, self->pd2);
	rc_poison(self->a.mem, A_LEN, 30);
	write_read(_metadata, self, self->qp2[0], self->p.s[0].scq,
		   &self->local2, &self->b, PAGE - 1, 31);
	RC_EXPECT_POISON(self->a.mem, A_LEN, 30);
}

/*
 * Access alone, from an MR registered read-only to a writable one: the
 * same pages, pinned again for writing, take the WRITE.
 */
TEST_F_TIMEOUT(rereg, access_writable_again, 120)
{
	ASSERT_EQ(0, ibv_dereg_mr(self->mr));
	self->mr = ibv_reg_mr(self->p.pd, self->a.mem, A_LEN,
			      IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(NULL, self->mr);
	self->lkey = self->mr->lkey;
	self->rkey = self->mr->rkey;
	ASSERT_EQ(0, ibv_rereg_mr(self->mr, IBV_REREG_MR_CHANGE_ACCESS, NULL,
				  NULL, 0, RC_ACCESS_ALL))
		TH_LOG("ibv_rereg_mr: %s", strerror(errno));
	expect_mr(_metadata, self, &self->a, self->p.pd);
	write_read0(_metadata, self, &self->a, PAGE - 350, 40);
}

/*
 * A type 1 window bound to the MR: rereg is EBUSY (the IB spec's rule)
 * and the MR and the window still work; once the window is gone, rereg
 * works.
 */
TEST_F_TIMEOUT(rereg, bound_window, 120)
{
	struct ibv_mw_bind bind = {
		.wr_id = 0xb1,
		.send_flags = IBV_SEND_SIGNALED,
		.bind_info = {
			.mr = self->mr,
			.addr = (uintptr_t)self->a.mem,
			.length = A_LEN,
			.mw_access_flags = IBV_ACCESS_REMOTE_WRITE,
		},
	};
	int flags;

	open_pd2(_metadata, self);
	self->mw = ibv_alloc_mw(self->p.pd, IBV_MW_TYPE_1);
	ASSERT_NE(NULL, self->mw);
	ASSERT_EQ(0, ibv_bind_mw(self->p.s[1].qp, self->mw, &bind));
	RC_WAIT_WC(self->p.s[1].scq, 0xb1, IBV_WC_SUCCESS, IBV_WC_BIND_MW);

	for (flags = 1; flags <= IBV_REREG_MR_FLAGS_SUPPORTED; flags++) {
		errno = 0;
		EXPECT_EQ(IBV_REREG_MR_ERR_CMD,
			  ibv_rereg_mr(self->mr, flags, self->pd2,
				       flags & IBV_REREG_MR_CHANGE_TRANSLATION ?
				       self->b.mem : NULL,
				       flags & IBV_REREG_MR_CHANGE_TRANSLATION ?
				       B_LEN : 0,
				       flags & IBV_REREG_MR_CHANGE_ACCESS ?
				       RC_ACCESS_ALL : 0)) TH_LOG("flags %d", flags);
		EXPECT_EQ(EBUSY, errno) TH_LOG("flags %d: %s", flags,
					       strerror(errno));
	}
	/* libibverbs leaves mr->addr alone on failure: still a. */
	write_read0(_metadata, self, &self->a, 50, 50);
	rc_prepare_dst(&self->a, 2 * LEN, LEN, 51);
	ASSERT_EQ(IBV_WC_SUCCESS,
		  xfer(_metadata, self->p.s[0].qp, self->p.s[0].scq,
		       &self->local, IBV_WR_RDMA_WRITE, self->a.mem + 2 * LEN,
		       self->mw->rkey, 51));
	RC_EXPECT_DELIVERED(&self->a, 2 * LEN, LEN, 51);

	ASSERT_EQ(0, ibv_dealloc_mw(self->mw));
	self->mw = NULL;
	ASSERT_EQ(0, ibv_rereg_mr(self->mr, IBV_REREG_MR_CHANGE_TRANSLATION,
				  NULL, self->b.mem, B_LEN, 0));
	write_read0(_metadata, self, &self->b, PAGE, 52);
}

/*
 * Refused re-registrations: errno as the verbs give it, and the MR works
 * as before each of them.
 */
TEST_F_TIMEOUT(rereg, refused, 120)
{
	uint32_t seed = 60;

	/* Remote write without local write. */
	errno = 0;
	EXPECT_EQ(IBV_REREG_MR_ERR_CMD,
		  ibv_rereg_mr(self->mr, IBV_REREG_MR_CHANGE_ACCESS, NULL,
			       NULL, 0, IBV_ACCESS_REMOTE_WRITE));
	EXPECT_EQ(EINVAL, errno);
	write_read0(_metadata, self, &self->a, 0, seed++);

	/* No flags: nothing to change. */
	errno = 0;
	EXPECT_EQ(IBV_REREG_MR_ERR_CMD, ibv_rereg_mr(self->mr, 0, NULL, NULL,
						     0, 0));
	EXPECT_EQ(EINVAL, errno);

	/* libibverbs' own checks: never reach the kernel. */
	EXPECT_EQ(IBV_REREG_MR_ERR_INPUT,
		  ibv_rereg_mr(self->mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
			       self->b.mem, 0, 0));
	EXPECT_EQ(IBV_REREG_MR_ERR_INPUT,
		  ibv_rereg_mr(self->mr, IBV_REREG_MR_CHANGE_PD, NULL, NULL, 0,
			       RC_ACCESS_ALL));

	/* Memory that is not mapped: the pages cannot be pinned. */
	errno = 0;
	EXPECT_EQ(IBV_REREG_MR_ERR_CMD,
		  ibv_rereg_mr(self->mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
			       (void *)(uintptr_t)PAGE, PAGE, 0));
	EXPECT_EQ(EFAULT, errno);
	expect_mr(_metadata, self, &self->a, self->p.pd);
	write_read0(_metadata, self, &self->a, A_LEN - LEN, seed++);
}

TEST_HARNESS_MAIN
