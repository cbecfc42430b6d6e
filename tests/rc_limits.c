// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Limits: queues and CQs one beyond what the device reports cannot be
 * created (EINVAL), exactly at the limit they can; a full send or receive
 * queue refuses one more WR with ENOMEM, a WR with more SGEs or inline
 * data than the QP was created with is refused with EINVAL, and in every
 * case bad_wr points at the first WR not posted while those before it
 * execute.
 */
#include "rc_pair.h"

FIXTURE(create)
{
	struct rc_pair p;
};

FIXTURE_SETUP(create)
{
	struct rc_opts opts;

	rc_default_opts(&opts);
	rc_pair_open(_metadata, &self->p, &opts);
}

FIXTURE_TEARDOWN(create)
{
	rc_pair_close(_metadata, &self->p);
}

/* ibv_create_qp() with one capability changed from a small default. */
static struct ibv_qp *create_qp(struct rc_pair *p, unsigned int send_wr,
				unsigned int recv_wr, unsigned int send_sge,
				unsigned int recv_sge, unsigned int inl,
				struct ibv_qp_cap *cap)
{
	struct ibv_qp_init_attr init = {
		.send_cq = p->s[0].scq,
		.recv_cq = p->s[0].rcq,
		.qp_type = IBV_QPT_RC,
		.cap = {
			.max_send_wr = send_wr,
			.max_recv_wr = recv_wr,
			.max_send_sge = send_sge,
			.max_recv_sge = recv_sge,
			.max_inline_data = inl,
		},
	};
	struct ibv_qp *qp;

	errno = 0;
	qp = ibv_create_qp(p->pd, &init);
	if (cap)
		*cap = init.cap;
	return qp;
}

#define EXPECT_QP_EINVAL(...) do {					\
	struct ibv_qp *__qp = create_qp(__VA_ARGS__, NULL);		\
									\
	EXPECT_EQ(NULL, __qp);						\
	EXPECT_EQ(EINVAL, errno) TH_LOG("errno %s", strerror(errno));	\
	if (__qp)							\
		ibv_destroy_qp(__qp);					\
} while (0)

#define EXPECT_QP_OK(...) do {						\
	struct ibv_qp_cap __cap;					\
	struct ibv_qp *__qp = create_qp(__VA_ARGS__, &__cap);		\
									\
	ASSERT_NE(NULL, __qp) TH_LOG("errno %s", strerror(errno));	\
	EXPECT_EQ(0, ibv_destroy_qp(__qp));				\
} while (0)

TEST_F(create, qp_send_wr)
{
	struct rc_pair *p = &self->p;
	unsigned int max = p->dattr.max_qp_wr;

	EXPECT_QP_EINVAL(p, max + 1, 1, 1, 1, 0);
	EXPECT_QP_OK(p, max, 1, 1, 1, 0);
}

TEST_F(create, qp_recv_wr)
{
	struct rc_pair *p = &self->p;
	unsigned int max = p->dattr.max_qp_wr;

	EXPECT_QP_EINVAL(p, 1, max + 1, 1, 1, 0);
	EXPECT_QP_OK(p, 1, max, 1, 1, 0);
}

TEST_F(create, qp_send_sge)
{
	struct rc_pair *p = &self->p;
	unsigned int max = p->dattr.max_sge;

	EXPECT_QP_EINVAL(p, 1, 1, max + 1, 1, 0);
	EXPECT_QP_OK(p, 1, 1, max, 1, 0);
}

TEST_F(create, qp_recv_sge)
{
	struct rc_pair *p = &self->p;
	unsigned int max = p->dattr.max_sge;

	EXPECT_QP_EINVAL(p, 1, 1, 1, max + 1, 0);
	EXPECT_QP_OK(p, 1, 1, 1, max, 0);
}

TEST_F(create, qp_inline)
{
	struct rc_pair *p = &self->p;

	EXPECT_QP_EINVAL(p, 1, 1, 1, 1, QHCA_MAX_INLINE + 1);
	EXPECT_QP_OK(p, 1, 1, 1, 1, QHCA_MAX_INLINE);
}

/* Everything at its maximum at once. */
TEST_F(create, qp_all_at_max)
{
	struct rc_pair *p = &self->p;
	struct ibv_qp_cap cap;
	struct ibv_qp *qp;

	qp = create_qp(p, p->dattr.max_qp_wr, p->dattr.max_qp_wr,
		       p->dattr.max_sge, p->dattr.max_sge,
		       QHCA_MAX_INLINE, &cap);
	ASSERT_NE(NULL, qp) TH_LOG("errno %s", strerror(errno));
	/* What the QP reports is at least what was asked for. */
	EXPECT_LE((uint32_t)p->dattr.max_qp_wr, cap.max_send_wr);
	EXPECT_LE((uint32_t)p->dattr.max_qp_wr, cap.max_recv_wr);
	EXPECT_LE((uint32_t)p->dattr.max_sge, cap.max_send_sge);
	EXPECT_LE((uint32_t)p->dattr.max_sge, cap.max_recv_sge);
	EXPECT_LE(QHCA_MAX_INLINE, cap.max_inline_data);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

TEST_F(create, cq_entries)
{
	struct rc_pair *p = &self->p;
	struct ibv_cq *cq;

	errno = 0;
	cq = ibv_create_cq(p->ctx, p->dattr.max_cqe + 1, NULL, NULL, 0);
	EXPECT_EQ(NULL, cq);
	EXPECT_EQ(EINVAL, errno) TH_LOG("errno %s", strerror(errno));
	if (cq)
		ibv_destroy_cq(cq);

	cq = ibv_create_cq(p->ctx, p->dattr.max_cqe, NULL, NULL, 0);
	ASSERT_NE(NULL, cq) TH_LOG("errno %s", strerror(errno));
	EXPECT_LE(p->dattr.max_cqe, cq->cqe);
	EXPECT_EQ(0, ibv_destroy_cq(cq));
}

TEST_F(create, mr_remote_write_needs_local_write)
{
	struct rc_pair *p = &self->p;
	struct ibv_mr *mr;
	void *mem;

	ASSERT_EQ(0, posix_memalign(&mem, 4096, 4096));
	errno = 0;
	mr = ibv_reg_mr(p->pd, mem, 4096, IBV_ACCESS_REMOTE_WRITE);
	EXPECT_EQ(NULL, mr);
	EXPECT_EQ(EINVAL, errno);
	if (mr)
		ibv_dereg_mr(mr);
	mr = ibv_reg_mr(p->pd, mem, 4096, IBV_ACCESS_REMOTE_ATOMIC);
	EXPECT_EQ(NULL, mr);
	if (mr)
		ibv_dereg_mr(mr);
	free(mem);
}

/* ---- Posting beyond the QP's capabilities ----------------------------- */

#define DEPTH	16U

FIXTURE(post)
{
	struct rc_pair p;
	struct rc_buf buf;
	struct ibv_qp_cap cap;		/* QP 0's */
};

FIXTURE_SETUP(post)
{
	struct rc_opts opts;

	rc_default_opts(&opts);
	opts.max_send_wr = DEPTH;
	opts.max_recv_wr = DEPTH;
	opts.max_send_sge = 3;
	opts.max_recv_sge = 3;
	opts.max_inline_data = 64;
	opts.cqe = 4 * DEPTH;
	rc_pair_open(_metadata, &self->p, &opts);
	rc_pair_connect(_metadata, &self->p);
	self->cap = self->p.s[0].cap;
	/* Every completion of a full queue must fit the CQs. */
	ASSERT_GT(4 * DEPTH, self->cap.max_send_wr);
	ASSERT_GT(4 * DEPTH, self->p.s[1].cap.max_recv_wr);
	/* Big enough for every SGE the QP could take, one slot each. */
	rc_buf_alloc(_metadata, &self->buf, self->p.pd,
		     (self->cap.max_send_wr + self->cap.max_recv_wr + 2) *
		     (self->cap.max_send_sge + self->cap.max_recv_sge + 2) *
		     64, RC_ACCESS_ALL);
}

FIXTURE_TEARDOWN(post)
{
	rc_buf_free(_metadata, &self->buf);
	rc_pair_close(_metadata, &self->p);
}

/* A chain of n RDMA WRITE WRs of 8 bytes each, all signaled. */
static void chain(FIXTURE_DATA(post) *self, struct ibv_send_wr *wr,
		  struct ibv_sge *sge, int n, uint64_t first_id)
{
	int i;

	for (i = 0; i < n; i++) {
		sge[i] = rc_sge(&self->buf, i * 64, 8);
		memset(&wr[i], 0, sizeof(wr[i]));
		wr[i].wr_id = first_id + i;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].opcode = IBV_WR_RDMA_WRITE;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].wr.rdma.remote_addr = (uintptr_t)self->buf.mem +
					    self->buf.size / 2 + i * 64;
		wr[i].wr.rdma.rkey = self->buf.mr->rkey;
		wr[i].next = i < n - 1 ? &wr[i + 1] : NULL;
	}
}

/*
 * The whole queue in one chain plus one WR: all but the last are posted
 * and complete, bad_wr is the last; once the completions are polled the
 * queue takes a full chain again.
 */
TEST_F(post, send_queue_full)
{
	unsigned int n = self->cap.max_send_wr, i;
	struct ibv_send_wr *wr, *bad = NULL;
	struct ibv_sge *sge;

	wr = calloc(n + 1, sizeof(*wr));
	sge = calloc(n + 1, sizeof(*sge));
	ASSERT_NE(NULL, wr);
	ASSERT_NE(NULL, sge);

	chain(self, wr, sge, n + 1, 0);
	EXPECT_EQ(ENOMEM, ibv_post_send(self->p.s[0].qp, wr, &bad));
	EXPECT_EQ(&wr[n], bad);
	for (i = 0; i < n; i++)
		RC_WAIT_WC(self->p.s[0].scq, i, IBV_WC_SUCCESS,
			   IBV_WC_RDMA_WRITE);
	rc_expect_no_wc(_metadata, self->p.s[0].scq);

	chain(self, wr, sge, n, 1000);
	EXPECT_EQ(0, ibv_post_send(self->p.s[0].qp, wr, &bad));
	for (i = 0; i < n; i++)
		RC_WAIT_WC(self->p.s[0].scq, 1000 + i, IBV_WC_SUCCESS,
			   IBV_WC_RDMA_WRITE);
	free(wr);
	free(sge);
}

/* One at a time, up to the last slot, then one too many. */
TEST_F(post, send_queue_full_one_by_one)
{
	unsigned int n = self->cap.max_send_wr, i;
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;

	for (i = 0; i < n; i++) {
		chain(self, &wr, &sge, 1, i);
		ASSERT_EQ(0, ibv_post_send(self->p.s[0].qp, &wr, &bad))
			TH_LOG("WR %u of %u", i, n);
	}
	chain(self, &wr, &sge, 1, n);
	bad = NULL;
	EXPECT_EQ(ENOMEM, ibv_post_send(self->p.s[0].qp, &wr, &bad));
	EXPECT_EQ(&wr, bad);
	for (i = 0; i < n; i++)
		RC_WAIT_WC(self->p.s[0].scq, i, IBV_WC_SUCCESS,
			   IBV_WC_RDMA_WRITE);
	rc_expect_no_wc(_metadata, self->p.s[0].scq);
}

TEST_F(post, recv_queue_full)
{
	unsigned int n = self->p.s[1].cap.max_recv_wr, i;
	struct ibv_recv_wr wr, *bad;
	struct ibv_sge sge = rc_sge(&self->buf, 0, 64);

	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	for (i = 0; i < n; i++) {
		wr.wr_id = i;
		ASSERT_EQ(0, ibv_post_recv(self->p.s[1].qp, &wr, &bad))
			TH_LOG("WR %u of %u", i, n);
	}
	bad = NULL;
	EXPECT_EQ(ENOMEM, ibv_post_recv(self->p.s[1].qp, &wr, &bad));
	EXPECT_EQ(&wr, bad);

	/* One message consumes one receive and makes room for one. */
	ASSERT_EQ(0, rc_post(self->p.s[0].qp, 1, IBV_WR_SEND,
			     IBV_SEND_SIGNALED, &sge, 1, 0, 0));
	RC_WAIT_WC(self->p.s[0].scq, 1, IBV_WC_SUCCESS, IBV_WC_SEND);
	RC_WAIT_WC(self->p.s[1].rcq, 0, IBV_WC_SUCCESS, IBV_WC_RECV);
	wr.wr_id = n;
	EXPECT_EQ(0, ibv_post_recv(self->p.s[1].qp, &wr, &bad));
	EXPECT_EQ(ENOMEM, ibv_post_recv(self->p.s[1].qp, &wr, &bad));
}

/*
 * A chain whose third WR is bad: the first two execute, bad_wr is the
 * third, nothing of it or after it is posted.
 */
static void bad_third(struct __test_metadata *_metadata,
		      FIXTURE_DATA(post) *self, int num_sge, bool inl,
		      uint32_t len)
{
	struct ibv_sge sge[4][QHCA_MAX_SGE + 1];
	struct ibv_send_wr wr[4], *bad = NULL;
	int i, j;

	for (i = 0; i < 4; i++) {
		chain(self, &wr[i], &sge[i][0], 1, i);
		wr[i].next = i < 3 ? &wr[i + 1] : NULL;
	}
	for (j = 0; j < num_sge; j++)
		sge[2][j] = rc_sge(&self->buf, 1024 + j * 64,
				   j ? 8 : len - 8 * (num_sge - 1));
	wr[2].num_sge = num_sge;
	if (inl)
		wr[2].send_flags |= IBV_SEND_INLINE;

	EXPECT_EQ(EINVAL, ibv_post_send(self->p.s[0].qp, wr, &bad));
	EXPECT_EQ(&wr[2], bad);
	RC_WAIT_WC(self->p.s[0].scq, 0, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	RC_WAIT_WC(self->p.s[0].scq, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	rc_expect_no_wc(_metadata, self->p.s[0].scq);
	EXPECT_EQ(IBV_QPS_RTS, rc_qp_state(self->p.s[0].qp));
}

TEST_F(post, too_many_send_sges)
{
	ASSERT_GE(QHCA_MAX_SGE, self->cap.max_send_sge);
	bad_third(_metadata, self, self->cap.max_send_sge + 1, false, 64);
}

TEST_F(post, inline_too_long)
{
	bad_third(_metadata, self, 1, true, self->cap.max_inline_data + 1);
}

TEST_F(post, inline_too_long_in_sges)
{
	bad_third(_metadata, self, 3, true, self->cap.max_inline_data + 1);
}

TEST_F(post, too_many_recv_sges)
{
	unsigned int n = self->p.s[1].cap.max_recv_sge + 1, i;
	struct ibv_sge sge[QHCA_MAX_SGE + 1];
	struct ibv_recv_wr wr[2], *bad = NULL;
	struct ibv_sge one = rc_sge(&self->buf, 0, 64);

	ASSERT_GE(QHCA_MAX_SGE + 1, n);
	for (i = 0; i < n; i++)
		sge[i] = rc_sge(&self->buf, 64 + i * 64, 8);
	memset(wr, 0, sizeof(wr));
	wr[0].wr_id = 1;
	wr[0].sg_list = &one;
	wr[0].num_sge = 1;
	wr[0].next = &wr[1];
	wr[1].wr_id = 2;
	wr[1].sg_list = sge;
	wr[1].num_sge = n;
	EXPECT_EQ(EINVAL, ibv_post_recv(self->p.s[1].qp, wr, &bad));
	EXPECT_EQ(&wr[1], bad);

	/* The first was posted: the next message lands there. */
	ASSERT_EQ(0, rc_post(self->p.s[0].qp, 3, IBV_WR_SEND,
			     IBV_SEND_SIGNALED, &one, 1, 0, 0));
	RC_WAIT_WC(self->p.s[1].rcq, 1, IBV_WC_SUCCESS, IBV_WC_RECV);
	RC_WAIT_WC(self->p.s[0].scq, 3, IBV_WC_SUCCESS, IBV_WC_SEND);
	rc_expect_no_wc(_metadata, self->p.s[1].rcq);
}

TEST_HARNESS_MAIN
