// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Shared objects and parent domains.
 *
 * ibv_import_device() on a dup of a context's fd makes a second
 * ibv_context on the same kernel context (QUERY_CONTEXT gives libqhca the
 * doorbell page to map); ibv_import_pd(), ibv_import_mr() and
 * ibv_import_dm() take that context's objects by handle, checked by the
 * kernel, and work as the originals do: a QP on the imported PD posts
 * with the imported MR's lkey, an imported DM reads what the original
 * wrote.  Unimporting leaves the kernel objects to their owner.  The same
 * process plays both sides here, as rdma-core's own tests do.
 *
 * A parent domain stands for its PD in every command; libqhca calls its
 * allocator for the memory it keeps beside the kernel's rings (a CQ's
 * discard marks, an SRQ's completed marks) and frees that memory through
 * it.  Its PD and thread domain are busy while it lives, as it is while
 * a CQ or SRQ holds memory from it.
 */
#include <infiniband/verbs.h>

#include "rc_pair.h"

#define LEN		3000		/* crosses a page */
#define DM_LEN		(4096 + 100)

/* A call that returns NULL and sets errno. */
#define EXPECT_NULL_ERRNO(expected_errno, call) \
	EXPECT_ERRNO(expected_errno, (call) ? 0 : -1)

FIXTURE(import)
{
	struct rc_pair p;
	struct rc_buf local;		/* the requester's memory, pair's PD */
	struct rc_buf remote;		/* QP 1's */
};

FIXTURE_SETUP(import)
{
	struct rc_opts o;

	rc_default_opts(&o);
	rc_pair_open(_metadata, &self->p, &o);
	rc_buf_alloc(_metadata, &self->local, self->p.pd, 2 * 4096,
		     RC_ACCESS_ALL);
	rc_buf_alloc(_metadata, &self->remote, self->p.pd, 2 * 4096,
		     RC_ACCESS_ALL);
}

FIXTURE_TEARDOWN(import)
{
	rc_buf_free(_metadata, &self->local);
	rc_buf_free(_metadata, &self->remote);
	rc_pair_close(_metadata, &self->p);
}

/* qp (on any PD of the pair's context) and the pair's QP 1, connected. */
static void connect_to_qp1(struct __test_metadata *_metadata,
			   struct rc_pair *p, struct ibv_qp *qp)
{
	ASSERT_EQ(0, rc_to_init(qp, RC_QP_ACCESS_ALL));
	ASSERT_EQ(0, rc_to_rtr(p, qp, p->s[1].qp->qp_num, p->pattr.lid));
	ASSERT_EQ(0, rc_to_rts(p, qp));
	rc_connect_one(_metadata, p, 1, qp->qp_num, p->pattr.lid);
}

static struct ibv_context *import_ctx(struct ibv_context *ctx)
{
	int fd = dup(ctx->cmd_fd);
	struct ibv_context *ctx2;

	if (fd < 0)
		return NULL;
	/*
	 * Not closed on failure: libqhca's import closes it with the
	 * half-made context (as mlx5's does), a second close could hit an
	 * fd opened since.
	 */
	ctx2 = ibv_import_device(fd);
	return ctx2;
}

/*
 * An RC QP of the imported context, on the imported PD, writes from the
 * imported MR (its lkey) to QP 1 of the original context.
 */
TEST_F_TIMEOUT(import, rdma_write, 120)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_context *ctx2;
	struct ibv_mr *mr2;
	struct ibv_pd *pd2;
	struct ibv_cq *cq2;
	struct ibv_qp *qp2;
	struct ibv_sge sge;

	ctx2 = import_ctx(self->p.ctx);
	ASSERT_NE(NULL, ctx2) TH_LOG("ibv_import_device: %s",
				     strerror(errno));
	pd2 = ibv_import_pd(ctx2, self->p.pd->handle);
	ASSERT_NE(NULL, pd2) TH_LOG("ibv_import_pd: %s", strerror(errno));
	EXPECT_EQ(self->p.pd->handle, pd2->handle);
	EXPECT_EQ(ctx2, pd2->context);
	mr2 = ibv_import_mr(pd2, self->local.mr->handle);
	ASSERT_NE(NULL, mr2) TH_LOG("ibv_import_mr: %s", strerror(errno));
	EXPECT_EQ(self->local.mr->lkey, mr2->lkey);
	EXPECT_EQ(self->local.mr->rkey, mr2->rkey);
	EXPECT_EQ(self->local.mr->length, mr2->length);
	EXPECT_EQ(pd2, mr2->pd);

	cq2 = ibv_create_cq(ctx2, 8, NULL, NULL, 0);
	ASSERT_NE(NULL, cq2) TH_LOG("ibv_create_cq: %s", strerror(errno));
	init.send_cq = cq2;
	init.recv_cq = cq2;
	qp2 = ibv_create_qp(pd2, &init);
	ASSERT_NE(NULL, qp2) TH_LOG("ibv_create_qp: %s", strerror(errno));
	connect_to_qp1(_metadata, &self->p, qp2);

	rc_fill(self->local.mem + 100, LEN, 31);
	rc_prepare_dst(&self->remote, 50, LEN, 31);
	sge = rc_sge(&self->local, 100, LEN);
	sge.lkey = mr2->lkey;
	ASSERT_EQ(0, rc_post(qp2, 1, IBV_WR_RDMA_WRITE, IBV_SEND_SIGNALED,
			     &sge, 1, (uintptr_t)self->remote.mem + 50,
			     self->remote.mr->rkey));
	RC_WAIT_WC(cq2, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	RC_EXPECT_DELIVERED(&self->remote, 50, LEN, 31);

	EXPECT_EQ(0, ibv_destroy_qp(qp2));
	EXPECT_EQ(0, ibv_destroy_cq(cq2));
	ibv_unimport_mr(mr2);
	ibv_unimport_pd(pd2);
	EXPECT_EQ(0, ibv_close_device(ctx2));
	/* The originals are the owner's still: one more WRITE with them. */
	ASSERT_EQ(0, rc_to_state(self->p.s[1].qp, IBV_QPS_RESET));
	rc_pair_connect(_metadata, &self->p);
	sge = rc_sge(&self->local, 100, LEN);
	rc_prepare_dst(&self->remote, 4096, LEN, 32);
	rc_fill(self->local.mem + 100, LEN, 32);
	ASSERT_EQ(0, rc_post(self->p.s[0].qp, 2, IBV_WR_RDMA_WRITE,
			     IBV_SEND_SIGNALED, &sge, 1,
			     (uintptr_t)self->remote.mem + 4096,
			     self->remote.mr->rkey));
	RC_WAIT_WC(self->p.s[0].scq, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	RC_EXPECT_DELIVERED(&self->remote, 4096, LEN, 32);
}

/* Copies through either mapping meet in the same device memory. */
TEST_F(import, dm)
{
	struct ibv_alloc_dm_attr attr = { .length = DM_LEN };
	uint8_t in[DM_LEN], out[DM_LEN];
	struct ibv_context *ctx2;
	struct ibv_dm *dm, *dm2;

	dm = ibv_alloc_dm(self->p.ctx, &attr);
	ASSERT_NE(NULL, dm) TH_LOG("ibv_alloc_dm: %s", strerror(errno));
	ctx2 = import_ctx(self->p.ctx);
	ASSERT_NE(NULL, ctx2) TH_LOG("ibv_import_device: %s",
				     strerror(errno));
	dm2 = ibv_import_dm(ctx2, dm->handle);
	ASSERT_NE(NULL, dm2) TH_LOG("ibv_import_dm: %s", strerror(errno));
	EXPECT_EQ(dm->handle, dm2->handle);

	rc_fill(in, DM_LEN, 41);
	ASSERT_EQ(0, ibv_memcpy_to_dm(dm, 0, in, DM_LEN));
	memset(out, 0, sizeof(out));
	ASSERT_EQ(0, ibv_memcpy_from_dm(out, dm2, 0, DM_LEN));
	RC_EXPECT_PATTERN(out, DM_LEN, 41);

	rc_fill(in, 400, 42);
	ASSERT_EQ(0, ibv_memcpy_to_dm(dm2, 3700, in, 400));
	ASSERT_EQ(0, ibv_memcpy_from_dm(out, dm, 3700, 400));
	RC_EXPECT_PATTERN(out, 400, 42);
	/* The import has the allocated length as its bound, not the pages. */
	EXPECT_EQ(EINVAL, ibv_memcpy_from_dm(out, dm2, DM_LEN - 4, 8));

	ibv_unimport_dm(dm2);
	EXPECT_EQ(0, ibv_close_device(ctx2));
	/* The owner's DM is whole after the importer is gone. */
	ASSERT_EQ(0, ibv_memcpy_from_dm(out, dm, 3700, 400));
	RC_EXPECT_PATTERN(out, 400, 42);
	EXPECT_EQ(0, ibv_free_dm(dm));
}

/*
 * Handles the kernel does not know, or of another type, import nothing:
 * ENOENT for no object, EINVAL for one of another type (uverbs' lookup).
 */
TEST_F(import, bad_handle)
{
	struct ibv_alloc_dm_attr attr = { .length = 64 };
	struct ibv_context *ctx2;
	struct ibv_pd *pd2;
	struct ibv_dm *dm;

	ctx2 = import_ctx(self->p.ctx);
	ASSERT_NE(NULL, ctx2) TH_LOG("ibv_import_device: %s",
				     strerror(errno));
	EXPECT_NULL_ERRNO(ENOENT, ibv_import_pd(ctx2, 0xbad0bad));
	EXPECT_NULL_ERRNO(EINVAL, ibv_import_pd(ctx2,
						self->local.mr->handle));
	pd2 = ibv_import_pd(ctx2, self->p.pd->handle);
	ASSERT_NE(NULL, pd2);
	EXPECT_NULL_ERRNO(ENOENT, ibv_import_mr(pd2, 0xbad0bad));
	EXPECT_NULL_ERRNO(EINVAL, ibv_import_mr(pd2, self->p.pd->handle));
	EXPECT_NULL_ERRNO(ENOENT, ibv_import_dm(ctx2, 0xbad0bad));
	EXPECT_NULL_ERRNO(EINVAL, ibv_import_dm(ctx2, self->p.pd->handle));
	dm = ibv_alloc_dm(self->p.ctx, &attr);
	ASSERT_NE(NULL, dm);
	EXPECT_NULL_ERRNO(EINVAL, ibv_import_pd(ctx2, dm->handle));
	EXPECT_EQ(0, ibv_free_dm(dm));
	ibv_unimport_pd(pd2);
	EXPECT_EQ(0, ibv_close_device(ctx2));
	/* Not a qhca context's fd: no context. */
	EXPECT_EQ(NULL, ibv_import_device(-1));
}

struct pd_counts {
	int alloc, free;
	bool use_default;		/* answer IBV_ALLOCATOR_USE_DEFAULT */
	uint64_t types;			/* 1 << resource_type, of each call */
};

static void *count_alloc(struct ibv_pd *pd, void *pd_context, size_t size,
			 size_t alignment, uint64_t resource_type)
{
	struct pd_counts *c = pd_context;
	void *ptr;

	c->alloc++;
	if (resource_type < 64)
		c->types |= 1ULL << resource_type;
	if (c->use_default)
		return IBV_ALLOCATOR_USE_DEFAULT;
	if (posix_memalign(&ptr, alignment, size))
		return NULL;
	/* libqhca must clear what it needs cleared itself. */
	memset(ptr, 0xa5, size);
	return ptr;
}

static void count_free(struct ibv_pd *pd, void *pd_context, void *ptr,
		       uint64_t resource_type)
{
	struct pd_counts *c = pd_context;

	c->free++;
	free(ptr);
}

/*
 * A QP, an SRQ and an extended CQ on a parent domain with allocators:
 * SENDs from QP 1 land through the SRQ, WRITEs go back, the allocator
 * gives each queue's marks and gets them back, a resized CQ's too.
 */
static void parent_domain_traffic(struct __test_metadata *_metadata,
				  FIXTURE_DATA(import) *self,
				  struct pd_counts *c)
{
	struct ibv_parent_domain_init_attr pattr = {
		.pd = self->p.pd,
		.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
			     IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT,
		.alloc = count_alloc,
		.free = count_free,
		.pd_context = c,
	};
	struct ibv_cq_init_attr_ex cattr = {
		.cqe = 16,
		.wc_flags = IBV_WC_STANDARD_FLAGS,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD,
	};
	struct ibv_srq_init_attr sattr = {
		.attr = { .max_wr = 8, .max_sge = 1 },
	};
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_send_sge = 1 },
	};
	struct ibv_td_init_attr tattr = {};
	struct ibv_sge sge, rsge;
	struct ibv_cq_ex *cqx;
	struct ibv_srq *srq;
	struct ibv_td *td;
	struct ibv_pd *pdom;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	int i, frees;

	td = ibv_alloc_td(self->p.ctx, &tattr);
	ASSERT_NE(NULL, td) TH_LOG("ibv_alloc_td: %s", strerror(errno));
	pattr.td = td;
	pdom = ibv_alloc_parent_domain(self->p.ctx, &pattr);
	ASSERT_NE(NULL, pdom) TH_LOG("ibv_alloc_parent_domain: %s",
				     strerror(errno));
	EXPECT_EQ(self->p.pd->handle, pdom->handle);
	EXPECT_EQ(EBUSY, ibv_dealloc_td(td));

	cattr.parent_domain = pdom;
	cqx = ibv_create_cq_ex(self->p.ctx, &cattr);
	ASSERT_NE(NULL, cqx) TH_LOG("ibv_create_cq_ex: %s", strerror(errno));
	cq = ibv_cq_ex_to_cq(cqx);
	srq = ibv_create_srq(pdom, &sattr);
	ASSERT_NE(NULL, srq) TH_LOG("ibv_create_srq: %s", strerror(errno));
	EXPECT_EQ(2, c->alloc);
	if (!c->use_default)
		EXPECT_EQ(1ULL << 1 | 1ULL << 2, c->types);
	init.send_cq = cq;
	init.recv_cq = cq;
	init.srq = srq;
	qp = ibv_create_qp(pdom, &init);
	ASSERT_NE(NULL, qp) TH_LOG("ibv_create_qp: %s", strerror(errno));
	connect_to_qp1(_metadata, &self->p, qp);
	/* The parent domain and its PD are busy while they are in use. */
	EXPECT_EQ(EBUSY, ibv_dealloc_pd(pdom));
	EXPECT_EQ(EBUSY, ibv_dealloc_pd(self->p.pd));

	/* SENDs through the SRQ, more than its depth's worth over time. */
	for (i = 0; i < 12; i++) {
		rsge = rc_sge(&self->local, 0, LEN);
		ASSERT_EQ(0, ibv_post_srq_recv(srq, &(struct ibv_recv_wr){
			.wr_id = 100 + i, .sg_list = &rsge, .num_sge = 1 },
			&(struct ibv_recv_wr *){ NULL }));
		rc_fill(self->remote.mem, LEN, 50 + i);
		sge = rc_sge(&self->remote, 0, LEN);
		ASSERT_EQ(0, rc_post(self->p.s[1].qp, i, IBV_WR_SEND,
				     IBV_SEND_SIGNALED, &sge, 1, 0, 0));
		RC_WAIT_WC(self->p.s[1].scq, i, IBV_WC_SUCCESS, IBV_WC_SEND);
		RC_WAIT_WC(cq, 100 + i, IBV_WC_SUCCESS, IBV_WC_RECV);
		RC_EXPECT_PATTERN(self->local.mem, LEN, 50 + i);
	}
	/* A resize takes new marks from the allocator, frees the old. */
	ASSERT_EQ(0, ibv_resize_cq(cq, 64));
	EXPECT_EQ(3, c->alloc);
	frees = c->use_default ? 0 : 1;
	EXPECT_EQ(frees, c->free);
	rc_fill(self->local.mem + 8, LEN, 70);
	rc_prepare_dst(&self->remote, 0, LEN, 70);
	sge = rc_sge(&self->local, 8, LEN);
	ASSERT_EQ(0, rc_post(qp, 200, IBV_WR_RDMA_WRITE, IBV_SEND_SIGNALED,
			     &sge, 1, (uintptr_t)self->remote.mem,
			     self->remote.mr->rkey));
	RC_WAIT_WC(cq, 200, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	RC_EXPECT_DELIVERED(&self->remote, 0, LEN, 70);

	EXPECT_EQ(0, ibv_destroy_qp(qp));
	EXPECT_EQ(0, ibv_destroy_srq(srq));
	EXPECT_EQ(0, ibv_destroy_cq(cq));
	/* Whatever the allocator gave, it got back; nothing it did not. */
	EXPECT_EQ(c->use_default ? 0 : 3, c->free);
	EXPECT_EQ(3, c->alloc);
	EXPECT_EQ(0, ibv_dealloc_pd(pdom));
	EXPECT_EQ(0, ibv_dealloc_td(td));
}

TEST_F_TIMEOUT(import, parent_domain, 120)
{
	struct pd_counts c = {};

	parent_domain_traffic(_metadata, self, &c);
}

/* An allocator that defers to libqhca is asked, and never frees. */
TEST_F_TIMEOUT(import, parent_domain_default, 120)
{
	struct pd_counts c = { .use_default = true };

	parent_domain_traffic(_metadata, self, &c);
}

/*
 * A CQ takes a parent domain, never a plain PD; nor does a parent domain
 * (nor allocators without their functions).  A QP holds one as a CQ does.
 */
TEST_F(import, parent_domain_refused)
{
	struct ibv_parent_domain_init_attr pattr = { .pd = self->p.pd };
	struct ibv_cq_init_attr_ex cattr = {
		.cqe = 4,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD,
		.parent_domain = self->p.pd,
	};
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_pd *pdom;
	struct ibv_qp *qp;

	EXPECT_NULL_ERRNO(EINVAL, ibv_create_cq_ex(self->p.ctx, &cattr));
	pdom = ibv_alloc_parent_domain(self->p.ctx, &pattr);
	ASSERT_NE(NULL, pdom);
	pattr.pd = pdom;
	EXPECT_NULL_ERRNO(EINVAL, ibv_alloc_parent_domain(self->p.ctx,
							  &pattr));
	pattr.pd = self->p.pd;
	pattr.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS;
	EXPECT_NULL_ERRNO(EINVAL, ibv_alloc_parent_domain(self->p.ctx,
							  &pattr));
	/* A QP on it, with the pair's CQs, keeps it busy on its own. */
	init.send_cq = self->p.s[0].scq;
	init.recv_cq = self->p.s[0].rcq;
	qp = ibv_create_qp(pdom, &init);
	ASSERT_NE(NULL, qp) TH_LOG("ibv_create_qp: %s", strerror(errno));
	EXPECT_EQ(EBUSY, ibv_dealloc_pd(pdom));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	EXPECT_EQ(0, ibv_dealloc_pd(pdom));
}

TEST_HARNESS_MAIN
