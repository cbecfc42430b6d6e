// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * ibv_resize_cq: a CQ grows and shrinks with completions on it that are
 * not yet polled, and each of them is then polled once, in order, with
 * its own wr_id and length, as on mlx4 and mlx5.  A resize to fewer
 * entries than there are completions to poll fails with EINVAL and
 * leaves the CQ as it was.  A CQ shared by several QPs is resized while
 * they send, again and again, and loses or repeats nothing.  Extended
 * CQs (ibv_create_cq_ex) resize the same way.
 */
#include "rc_pair.h"

#define SLOTS		64		/* receive slots of QP 1 */
#define SLOT		512
#define PAIRS		4		/* the shared CQ's */
#define BATCH		8		/* per QP in flight on the shared CQ */

FIXTURE(resize)
{
	struct rc_pair p;		/* QP 0 sends to QP 1 */
	struct rc_buf src;
	struct rc_buf dst;
	struct ibv_cq_ex *cq_ex;	/* the ex variant's receive CQ */
};

FIXTURE_VARIANT(resize)
{
	bool ex;			/* QP 1 receives on an ibv_cq_ex */
};

FIXTURE_VARIANT_ADD(resize, cq)
{
	.ex = false,
};

FIXTURE_VARIANT_ADD(resize, cq_ex)
{
	.ex = true,
};

/* Length of message m: 1 .. SLOT bytes. */
static uint32_t msg_len(uint64_t m)
{
	return 1 + (uint32_t)(m * 97) % SLOT;
}

FIXTURE_SETUP(resize)
{
	struct rc_pair *p = &self->p;
	struct rc_opts opts;

	rc_default_opts(&opts);
	opts.path_mtu = IBV_MTU_256;
	opts.cqe = 16;			/* a ring of 32 */
	rc_pair_open(_metadata, p, &opts);

	if (variant->ex) {
		struct ibv_cq_init_attr_ex attr = {
			.cqe = 16,
			.wc_flags = IBV_WC_STANDARD_FLAGS,
		};

		/* QP 1 again, receiving on an extended CQ. */
		EXPECT_EQ(0, ibv_destroy_qp(p->s[1].qp));
		p->s[1].qp = NULL;
		self->cq_ex = ibv_create_cq_ex(p->ctx, &attr);
		ASSERT_NE(NULL, self->cq_ex) TH_LOG("ibv_create_cq_ex: %s",
						    strerror(errno));
		p->s[1].qp = rc_create_qp(p, p->s[1].scq,
					  ibv_cq_ex_to_cq(self->cq_ex), NULL);
		ASSERT_NE(NULL, p->s[1].qp);
	}
	rc_pair_connect(_metadata, p);
	rc_buf_alloc(_metadata, &self->src, p->pd, SLOTS * SLOT,
		     RC_ACCESS_ALL);
	rc_buf_alloc(_metadata, &self->dst, p->pd, SLOTS * SLOT,
		     RC_ACCESS_ALL);
	rc_fill(self->src.mem, SLOTS * SLOT, 7);
}

FIXTURE_TEARDOWN(resize)
{
	struct rc_pair *p = &self->p;

	rc_buf_free(_metadata, &self->src);
	rc_buf_free(_metadata, &self->dst);
	if (self->cq_ex) {
		if (p->s[1].qp)
			EXPECT_EQ(0, ibv_destroy_qp(p->s[1].qp));
		p->s[1].qp = NULL;
		EXPECT_EQ(0, ibv_destroy_cq(ibv_cq_ex_to_cq(self->cq_ex)));
	}
	rc_pair_close(_metadata, p);
}

static struct ibv_cq *rcq(FIXTURE_DATA(resize) *self)
{
	return self->cq_ex ? ibv_cq_ex_to_cq(self->cq_ex) : self->p.s[1].rcq;
}

/*
 * Messages first .. first + n - 1 (n < 32, what QP 0's send CQ holds)
 * from QP 0 to QP 1, every send polled: as a receive completes before its
 * ACK leaves, QP 1's receive CQ then holds all n receive completions,
 * none of them polled.
 */
static void send_batch(struct __test_metadata *_metadata,
		       FIXTURE_DATA(resize) *self, uint64_t first, int n)
{
	struct rc_pair *p = &self->p;
	uint64_t m;

	ASSERT_GT(32, n);
	for (m = first; m < first + n; m++) {
		struct ibv_sge rs = rc_sge(&self->dst, m % SLOTS * SLOT, SLOT);
		struct ibv_sge ss = rc_sge(&self->src, m % SLOTS * SLOT,
					   msg_len(m));

		ASSERT_EQ(0, rc_post_recv(p->s[1].qp, m, &rs, 1));
		ASSERT_EQ(0, rc_post(p->s[0].qp, m, IBV_WR_SEND,
				     IBV_SEND_SIGNALED, &ss, 1, 0, 0));
	}
	for (m = first; m < first + n; m++)
		RC_WAIT_WC(p->s[0].scq, m, IBV_WC_SUCCESS, IBV_WC_SEND);
}

/* The next n receive completions: messages first .. first + n - 1. */
static void take_recvs(struct __test_metadata *_metadata,
		       FIXTURE_DATA(resize) *self, uint64_t first, int n)
{
	struct ibv_poll_cq_attr attr = {};
	uint64_t m;
	int ret;

	for (m = first; m < first + n; m++) {
		struct ibv_wc wc;

		if (self->cq_ex) {
			long deadline = rc_now_ms() + RC_POLL_MS;

			while ((ret = ibv_start_poll(self->cq_ex, &attr)) ==
			       ENOENT && rc_now_ms() < deadline)
				;
			ASSERT_EQ(0, ret) TH_LOG("message %llu: %s",
						 (unsigned long long)m,
						 strerror(ret));
			wc.wr_id = self->cq_ex->wr_id;
			wc.status = self->cq_ex->status;
			wc.opcode = ibv_wc_read_opcode(self->cq_ex);
			wc.byte_len = ibv_wc_read_byte_len(self->cq_ex);
			ibv_end_poll(self->cq_ex);
		} else {
			rc_wait_wc(_metadata, rcq(self), &wc);
		}
		RC_EXPECT_WC(wc, m, IBV_WC_SUCCESS, IBV_WC_RECV);
		ASSERT_EQ(msg_len(m), wc.byte_len);
		ASSERT_EQ(0, memcmp(self->dst.mem + m % SLOTS * SLOT,
				    self->src.mem + m % SLOTS * SLOT,
				    msg_len(m)));
	}
}

static void expect_empty(struct __test_metadata *_metadata,
			 FIXTURE_DATA(resize) *self)
{
	struct ibv_poll_cq_attr attr = {};

	if (self->cq_ex) {
		int ret = ibv_start_poll(self->cq_ex, &attr);

		if (!ret)
			ibv_end_poll(self->cq_ex);
		EXPECT_EQ(ENOENT, ret);
	} else {
		rc_expect_no_wc(_metadata, rcq(self));
	}
}

/*
 * Grow from 32 to 128 entries with 15 receives unpolled, in the ring's
 * second pass; then 200 more messages, over the new ring's end.
 */
TEST_F(resize, grow)
{
	uint64_t m;

	send_batch(_metadata, self, 0, 30);
	take_recvs(_metadata, self, 0, 30);
	send_batch(_metadata, self, 30, 20);
	take_recvs(_metadata, self, 30, 5);

	ASSERT_EQ(0, ibv_resize_cq(rcq(self), 100));
	EXPECT_LE(100, rcq(self)->cqe);
	take_recvs(_metadata, self, 35, 15);
	expect_empty(_metadata, self);
	for (m = 50; m < 250; m += 25) {
		send_batch(_metadata, self, m, 25);
		take_recvs(_metadata, self, m, 25);
	}
	expect_empty(_metadata, self);
}

/*
 * Shrink from 32 to 8 entries with 6 unpolled (in the fourth pass of the
 * old ring); then 40 messages through the small ring, 8 at a time.
 */
TEST_F(resize, shrink)
{
	uint64_t m;

	for (m = 0; m < 96; m += 24) {
		send_batch(_metadata, self, m, 24);
		take_recvs(_metadata, self, m, 24);
	}
	send_batch(_metadata, self, 96, 6);
	ASSERT_EQ(0, ibv_resize_cq(rcq(self), 7));
	EXPECT_LE(7, rcq(self)->cqe);
	EXPECT_GT(16, rcq(self)->cqe);
	take_recvs(_metadata, self, 96, 6);
	expect_empty(_metadata, self);
	for (m = 102; m < 142; m += 8) {
		send_batch(_metadata, self, m, 8);
		take_recvs(_metadata, self, m, 8);
	}
	expect_empty(_metadata, self);
}

/*
 * 20 unpolled do not fit in a ring of 4: EINVAL, the CQ keeps its size
 * and every completion; the same size again, and the CQ's size exactly,
 * are fine.
 */
TEST_F(resize, below_outstanding)
{
	int cqe = rcq(self)->cqe;

	send_batch(_metadata, self, 0, 20);
	EXPECT_EQ(EINVAL, ibv_resize_cq(rcq(self), 3));
	EXPECT_EQ(cqe, rcq(self)->cqe);
	take_recvs(_metadata, self, 0, 4);
	/* 16 left: a ring of 16 (cqe 15) holds them exactly. */
	EXPECT_EQ(EINVAL, ibv_resize_cq(rcq(self), 7));
	ASSERT_EQ(0, ibv_resize_cq(rcq(self), 15));
	take_recvs(_metadata, self, 4, 16);
	expect_empty(_metadata, self);
	send_batch(_metadata, self, 20, 16);
	take_recvs(_metadata, self, 20, 16);
	ASSERT_EQ(0, ibv_resize_cq(rcq(self), cqe));
	send_batch(_metadata, self, 36, 30);
	take_recvs(_metadata, self, 36, 30);
	expect_empty(_metadata, self);
}

/* A CQ no QP uses, resized to every size the device allows and beyond. */
TEST(bounds)
{
	struct ibv_cq *cq;
	struct rc_pair p;
	struct rc_opts opts;
	int max;

	rc_default_opts(&opts);
	rc_pair_open(_metadata, &p, &opts);
	max = p.dattr.max_cqe;
	cq = ibv_create_cq(p.ctx, 1, NULL, NULL, 0);
	ASSERT_NE(NULL, cq);
	EXPECT_EQ(EINVAL, ibv_resize_cq(cq, 0));
	EXPECT_EQ(EINVAL, ibv_resize_cq(cq, -1));
	EXPECT_EQ(EINVAL, ibv_resize_cq(cq, max + 1));
	ASSERT_EQ(0, ibv_resize_cq(cq, max));
	EXPECT_LE(max - 1, cq->cqe);
	ASSERT_EQ(0, ibv_resize_cq(cq, 1));
	EXPECT_GT(4, cq->cqe);
	EXPECT_EQ(0, ibv_destroy_cq(cq));
	rc_pair_close(_metadata, &p);
}

/*
 * PAIRS pairs whose QPs all complete to one CQ, the CQ resized between
 * 8 x BATCH and 2 x BATCH per QP while each sends BATCH messages: every
 * completion comes once, each QP's in order.
 */
TEST(shared_under_traffic)
{
	static const int sizes[] = { 8, 2, 4, 3, 6, 2, 5, 8 };
	struct ibv_qp *qp[2 * PAIRS];
	uint64_t next[2 * PAIRS] = {};
	struct rc_buf buf;
	struct rc_pair p;
	struct rc_opts opts;
	struct ibv_cq *cq;
	int round, i, k, got;

	rc_default_opts(&opts);
	opts.path_mtu = IBV_MTU_256;
	rc_pair_open(_metadata, &p, &opts);
	cq = ibv_create_cq(p.ctx, 2 * PAIRS * BATCH * 2, NULL, NULL, 0);
	ASSERT_NE(NULL, cq);
	for (i = 0; i < 2 * PAIRS; i++) {
		qp[i] = rc_create_qp(&p, cq, cq, NULL);
		ASSERT_NE(NULL, qp[i]);
	}
	for (i = 0; i < 2 * PAIRS; i++) {
		ASSERT_EQ(0, rc_to_init(qp[i], RC_QP_ACCESS_ALL));
		ASSERT_EQ(0, rc_to_rtr(&p, qp[i], qp[i ^ 1]->qp_num,
				       p.pattr.lid));
		ASSERT_EQ(0, rc_to_rts(&p, qp[i]));
	}
	rc_buf_alloc(_metadata, &buf, p.pd, 4096, RC_ACCESS_ALL);

	for (round = 0; round < (int)ARRAY_SIZE(sizes); round++) {
		/* Sends of QPs 0, 2, ... to 1, 3, ...: 2 completions each. */
		for (i = 0; i < 2 * PAIRS; i += 2) {
			for (k = 0; k < BATCH; k++) {
				struct ibv_sge sge = rc_sge(&buf, 0, 64);
				uint64_t id = (uint64_t)i << 32 |
					      (round * BATCH + k);

				ASSERT_EQ(0, rc_post_recv(qp[i + 1],
							  id | 1ULL << 40,
							  &sge, 1));
				ASSERT_EQ(0, rc_post(qp[i], id, IBV_WR_SEND,
						     IBV_SEND_SIGNALED, &sge,
						     1, 0, 0));
			}
		}
		/* At most 2 x PAIRS x BATCH completions wait: they fit. */
		ASSERT_EQ(0, ibv_resize_cq(cq, sizes[round] * PAIRS * BATCH))
			TH_LOG("round %d: %s", round, strerror(errno));
		for (got = 0; got < 2 * PAIRS * BATCH; got++) {
			struct ibv_wc wc;
			int q;

			rc_wait_wc(_metadata, cq, &wc);
			ASSERT_EQ(IBV_WC_SUCCESS, (int)wc.status);
			q = (int)(wc.wr_id >> 32 & 0xff) +
			    (int)(wc.wr_id >> 40 & 1);
			ASSERT_GT(2 * PAIRS, q);
			ASSERT_EQ(qp[q]->qp_num, wc.qp_num);
			ASSERT_EQ(next[q], wc.wr_id & 0xffffffff)
				TH_LOG("QP %d: wr_id %#llx", q,
				       (unsigned long long)wc.wr_id);
			next[q]++;
		}
	}
	rc_expect_no_wc(_metadata, cq);
	for (i = 0; i < 2 * PAIRS; i++) {
		EXPECT_EQ(ARRAY_SIZE(sizes) * BATCH, next[i]);
		EXPECT_EQ(0, ibv_destroy_qp(qp[i]));
	}
	rc_buf_free(_metadata, &buf);
	EXPECT_EQ(0, ibv_destroy_cq(cq));
	rc_pair_close(_metadata, &p);
}

TEST_HARNESS_MAIN
