// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Many QPs on one CQ: eight loopback pairs whose sixteen QPs all complete
 * their sends and receives to the same CQ, with traffic in both
 * directions at once.  Every completion must name its own QP (qp_num) and
 * opcode, each QP must see exactly its own completions, and each pair's
 * data must arrive at that pair and nowhere else.
 */
#include "rc_pair.h"

#define PAIRS		8
#define QPS		(2 * PAIRS)
#define MSGS		8	/* each direction of each pair */
#define LEN		1000
#define SLOT		1024

FIXTURE(shared)
{
	struct rc_pair p;		/* the device and the PD */
	struct ibv_cq *cq;
	struct ibv_qp *qp[QPS];		/* QP 2i and 2i + 1 are a pair */
	struct rc_buf src;
	struct rc_buf dst;
};

FIXTURE_VARIANT(shared)
{
	enum ibv_wr_opcode opcode;
};

FIXTURE_VARIANT_ADD(shared, send)
{
	.opcode = IBV_WR_SEND,
};

FIXTURE_VARIANT_ADD(shared, rdma_write_with_imm)
{
	.opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
};

FIXTURE_SETUP(shared)
{
	struct rc_pair *p = &self->p;
	struct rc_opts opts;
	int i;

	rc_default_opts(&opts);
	opts.path_mtu = IBV_MTU_256;
	rc_pair_open(_metadata, p, &opts);

	/* Room for every completion of every QP at once. */
	self->cq = ibv_create_cq(p->ctx, 2 * QPS * MSGS, NULL, NULL, 0);
	ASSERT_NE(NULL, self->cq);
	for (i = 0; i < QPS; i++) {
		self->qp[i] = rc_create_qp(p, self->cq, self->cq, NULL);
		ASSERT_NE(NULL, self->qp[i]) TH_LOG("QP %d: %s", i,
						    strerror(errno));
	}
	for (i = 0; i < QPS; i++) {
		ASSERT_EQ(0, rc_to_init(self->qp[i], RC_QP_ACCESS_ALL));
		ASSERT_EQ(0, rc_to_rtr(p, self->qp[i],
				       self->qp[i ^ 1]->qp_num,
				       p->pattr.lid));
		ASSERT_EQ(0, rc_to_rts(p, self->qp[i]));
	}
	rc_buf_alloc(_metadata, &self->src, p->pd, QPS * MSGS * SLOT,
		     RC_ACCESS_ALL);
	rc_buf_alloc(_metadata, &self->dst, p->pd, QPS * MSGS * SLOT,
		     RC_ACCESS_ALL);
}

FIXTURE_TEARDOWN(shared)
{
	int i;

	for (i = 0; i < QPS; i++)
		if (self->qp[i])
			EXPECT_EQ(0, ibv_destroy_qp(self->qp[i]));
	if (self->cq)
		EXPECT_EQ(0, ibv_destroy_cq(self->cq));
	rc_buf_free(_metadata, &self->src);
	rc_buf_free(_metadata, &self->dst);
	rc_pair_close(_metadata, &self->p);
}

/* Which QP of the fixture has number qpn, or -1. */
static int qp_index(FIXTURE_DATA(shared) *self, uint32_t qpn)
{
	int i;

	for (i = 0; i < QPS; i++)
		if (self->qp[i]->qp_num == qpn)
			return i;
	return -1;
}

/*
 * Every QP sends MSGS messages to its partner; message m of QP q goes
 * from source slot (q, m) to destination slot (q, m), with a pattern of
 * its own, and is announced by wr_id q << 8 | m on both sides.
 */
TEST_F_TIMEOUT(shared, both_directions, 120)
{
	const bool imm = variant->opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
	int sends[QPS] = { 0 }, recvs[QPS] = { 0 };
	struct ibv_wc wc[QPS * MSGS];
	struct ibv_sge sge;
	int q, m, i, n, got = 0;
	size_t slot;

	for (q = 0; q < QPS; q++) {
		for (m = 0; m < MSGS; m++) {
			slot = ((size_t)q * MSGS + m) * SLOT;
			rc_fill(self->src.mem + slot, LEN, q << 8 | m);
			rc_poison(self->dst.mem + slot, LEN, q << 8 | m);
			rc_poison(self->dst.mem + slot + LEN, SLOT - LEN,
				  0x10000 | q << 8 | m);
			/* The receive is posted on the partner, q ^ 1. */
			sge = rc_sge(&self->dst, slot, SLOT);
			ASSERT_EQ(0, rc_post_recv(self->qp[q ^ 1], q << 8 | m,
						  &sge, imm ? 0 : 1));
		}
	}
	for (m = 0; m < MSGS; m++) {
		for (q = 0; q < QPS; q++) {
			slot = ((size_t)q * MSGS + m) * SLOT;
			sge = rc_sge(&self->src, slot, LEN);
			ASSERT_EQ(0, rc_post_imm(self->qp[q], q << 8 | m,
						 variant->opcode,
						 IBV_SEND_SIGNALED, &sge, 1,
						 (uintptr_t)self->dst.mem +
						 slot, self->dst.mr->rkey,
						 q));
		}
	}

	while (got < 2 * QPS * MSGS) {
		n = rc_poll(self->cq, wc, QPS * MSGS, RC_POLL_MS);
		ASSERT_LT(0, n) TH_LOG("%d of %d completions", got,
				       2 * QPS * MSGS);
		for (i = 0; i < n; i++, got++) {
			q = qp_index(self, wc[i].qp_num);
			ASSERT_LE(0, q) TH_LOG("qp_num %u is none of ours",
					       wc[i].qp_num);
			EXPECT_EQ(IBV_WC_SUCCESS, (int)wc[i].status);
			if (wc[i].opcode & IBV_WC_RECV) {
				/* A receive of QP q carries its partner's. */
				EXPECT_EQ((uint64_t)((q ^ 1) << 8 | recvs[q]),
					  wc[i].wr_id);
				EXPECT_EQ((uint32_t)LEN, wc[i].byte_len);
				if (imm)
					EXPECT_EQ(htobe32(q ^ 1),
						  wc[i].imm_data);
				recvs[q]++;
			} else {
				EXPECT_EQ((uint64_t)(q << 8 | sends[q]),
					  wc[i].wr_id);
				sends[q]++;
			}
		}
	}
	rc_expect_no_wc(_metadata, self->cq);

	for (q = 0; q < QPS; q++) {
		EXPECT_EQ(MSGS, sends[q]);
		EXPECT_EQ(MSGS, recvs[q]);
		for (m = 0; m < MSGS; m++) {
			long at;

			slot = ((size_t)q * MSGS + m) * SLOT;
			at = rc_mismatch(self->dst.mem + slot, LEN, q << 8 | m,
					 false);
			EXPECT_EQ(-1, at) TH_LOG("QP %d message %d: byte %ld",
						 q, m, at);
			at = rc_mismatch(self->dst.mem + slot + LEN,
					 SLOT - LEN, 0x10000 | q << 8 | m,
					 true);
			EXPECT_EQ(-1, at)
				TH_LOG("after QP %d message %d: byte %ld written",
				       q, m, at);
		}
	}
}

TEST_HARNESS_MAIN
