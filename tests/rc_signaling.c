// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Which send WQEs complete, and when: unsignaled batches ended by one
 * signaled WQE (whose completion frees the whole batch, so the send queue
 * can be reused round after round), sq_sig_all, full queues, and FENCE
 * ordering a send behind the RDMA READ or atomic that produced its data.
 */
#include "rc_pair.h"

#define SLOT		64	/* bytes each WQE of a batch writes */

FIXTURE(sig)
{
	struct rc_pair p;
	struct rc_buf src;
	struct rc_buf dst;
};

FIXTURE_VARIANT(sig)
{
	unsigned int depth;	/* max_send_wr asked for */
	bool sq_sig_all;
};

FIXTURE_VARIANT_ADD(sig, depth_16)
{
	.depth = 16,
};

FIXTURE_VARIANT_ADD(sig, depth_100)
{
	.depth = 100,
};

FIXTURE_VARIANT_ADD(sig, depth_16_sq_sig_all)
{
	.depth = 16,
	.sq_sig_all = true,
};

FIXTURE_SETUP(sig)
{
	struct rc_opts opts;
	size_t size;

	rc_default_opts(&opts);
	opts.max_send_wr = variant->depth;
	opts.max_recv_wr = variant->depth;
	opts.sq_sig_all = variant->sq_sig_all;
	rc_pair_open(_metadata, &self->p, &opts);
	rc_pair_connect(_metadata, &self->p);
	ASSERT_LE(variant->depth, self->p.s[0].cap.max_send_wr);

	/* Room for 8 full queues of slots. */
	size = 8 * self->p.s[0].cap.max_send_wr * SLOT;
	rc_buf_alloc(_metadata, &self->src, self->p.pd, size, RC_ACCESS_ALL);
	rc_buf_alloc(_metadata, &self->dst, self->p.pd, size, RC_ACCESS_ALL);
	rc_fill(self->src.mem, size, 31);
	rc_poison(self->dst.mem, size, 31);
}

FIXTURE_TEARDOWN(sig)
{
	rc_buf_free(_metadata, &self->src);
	rc_buf_free(_metadata, &self->dst);
	rc_pair_close(_metadata, &self->p);
}

/* WQE i writes slot i of src to slot i of dst. */
static int post_slot_write(FIXTURE_DATA(sig) *self, unsigned int i,
			   unsigned int flags)
{
	struct ibv_sge sge = rc_sge(&self->src, i * SLOT, SLOT);

	return rc_post(self->p.s[0].qp, i, IBV_WR_RDMA_WRITE, flags, &sge, 1,
		       (uintptr_t)self->dst.mem + i * SLOT,
		       self->dst.mr->rkey);
}

/*
 * Eight rounds of a full send queue: all WQEs unsignaled but the last.
 * Without sq_sig_all, one completion per round, and it frees the whole
 * queue for the next round; with it, one completion per WQE.
 */
TEST_F_TIMEOUT(sig, unsignaled_batches, 120)
{
	unsigned int depth = self->p.s[0].cap.max_send_wr;
	unsigned int round, i, n = 0;
	struct ibv_wc wc;

	for (round = 0; round < 8; round++) {
		for (i = 0; i < depth; i++, n++)
			ASSERT_EQ(0, post_slot_write(self, n, i == depth - 1 ?
						     IBV_SEND_SIGNALED : 0))
				TH_LOG("round %u, WQE %u", round, i);
		if (variant->sq_sig_all) {
			for (i = 0; i < depth; i++) {
				rc_wait_wc(_metadata, self->p.s[0].scq, &wc);
				RC_EXPECT_WC(wc, n - depth + i,
					     IBV_WC_SUCCESS,
					     IBV_WC_RDMA_WRITE);
			}
		} else {
			rc_wait_wc(_metadata, self->p.s[0].scq, &wc);
			RC_EXPECT_WC(wc, n - 1, IBV_WC_SUCCESS,
				     IBV_WC_RDMA_WRITE);
		}
		/* The signaled WQE was the last: nothing else may come. */
		rc_expect_no_wc(_metadata, self->p.s[0].scq);
	}
	RC_EXPECT_PATTERN(self->dst.mem, (size_t)n * SLOT, 31);
}

/* Every other WQE signaled: exactly those complete, in order. */
TEST_F_TIMEOUT(sig, alternating, 60)
{
	unsigned int depth = self->p.s[0].cap.max_send_wr;
	unsigned int i, n = 2 * depth;
	struct ibv_wc wc;

	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, post_slot_write(self, i, i % 2 ?
					     IBV_SEND_SIGNALED : 0));
		if (i % 2 == 0)
			continue;
		if (variant->sq_sig_all) {
			rc_wait_wc(_metadata, self->p.s[0].scq, &wc);
			RC_EXPECT_WC(wc, i - 1, IBV_WC_SUCCESS,
				     IBV_WC_RDMA_WRITE);
		}
		rc_wait_wc(_metadata, self->p.s[0].scq, &wc);
		RC_EXPECT_WC(wc, i, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	}
	rc_expect_no_wc(_metadata, self->p.s[0].scq);
	RC_EXPECT_PATTERN(self->dst.mem, (size_t)n * SLOT, 31);
}

/*
 * Unsignaled SENDs still consume receives, and every receive completes:
 * the send queue's signaling is none of the receiver's business.
 */
TEST_F_TIMEOUT(sig, unsignaled_sends, 60)
{
	unsigned int depth = self->p.s[0].cap.max_send_wr;
	struct ibv_sge sge;
	struct ibv_wc wc;
	unsigned int i;

	if (depth > self->p.s[1].cap.max_recv_wr)
		depth = self->p.s[1].cap.max_recv_wr;
	for (i = 0; i < depth; i++) {
		sge = rc_sge(&self->dst, i * SLOT, SLOT);
		ASSERT_EQ(0, rc_post_recv(self->p.s[1].qp, 1000 + i, &sge, 1));
	}
	for (i = 0; i < depth; i++) {
		sge = rc_sge(&self->src, i * SLOT, SLOT);
		ASSERT_EQ(0, rc_post(self->p.s[0].qp, i, IBV_WR_SEND,
				     i == depth - 1 ? IBV_SEND_SIGNALED : 0,
				     &sge, 1, 0, 0));
	}
	for (i = 0; i < depth; i++) {
		rc_wait_wc(_metadata, self->p.s[1].rcq, &wc);
		RC_EXPECT_WC(wc, 1000 + i, IBV_WC_SUCCESS, IBV_WC_RECV);
		EXPECT_EQ((uint32_t)SLOT, wc.byte_len);
	}
	rc_expect_no_wc(_metadata, self->p.s[1].rcq);
	if (variant->sq_sig_all) {
		for (i = 0; i < depth; i++)
			RC_WAIT_WC(self->p.s[0].scq, i, IBV_WC_SUCCESS,
				   IBV_WC_SEND);
	} else {
		RC_WAIT_WC(self->p.s[0].scq, depth - 1, IBV_WC_SUCCESS,
			   IBV_WC_SEND);
	}
	rc_expect_no_wc(_metadata, self->p.s[0].scq);
	RC_EXPECT_PATTERN(self->dst.mem, (size_t)depth * SLOT, 31);
}

/* A full queue of signaled WQEs in flight at once, then one more. */
TEST_F_TIMEOUT(sig, full_queue, 60)
{
	unsigned int depth = self->p.s[0].cap.max_send_wr;
	struct ibv_wc wc;
	unsigned int i;

	for (i = 0; i < depth; i++)
		ASSERT_EQ(0, post_slot_write(self, i, IBV_SEND_SIGNALED));
	for (i = 0; i < depth; i++) {
		rc_wait_wc(_metadata, self->p.s[0].scq, &wc);
		RC_EXPECT_WC(wc, i, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	}
	/* Polled completions gave every slot back. */
	for (i = 0; i < depth; i++)
		ASSERT_EQ(0, post_slot_write(self, depth + i,
					     IBV_SEND_SIGNALED));
	for (i = 0; i < depth; i++)
		RC_WAIT_WC(self->p.s[0].scq, depth + i, IBV_WC_SUCCESS,
			   IBV_WC_RDMA_WRITE);
	RC_EXPECT_PATTERN(self->dst.mem, (size_t)2 * depth * SLOT, 31);
}

/* ---- Fence ------------------------------------------------------------ */

#define FENCE_LEN	8192
#define FENCE_ROUNDS	16

FIXTURE(fence)
{
	struct rc_pair p;
	struct rc_buf remote;	/* QP 1's memory, read by QP 0 */
	struct rc_buf bounce;	/* QP 0's: READ lands here, SEND reads it */
	struct rc_buf recv;	/* QP 1's receive buffers */
};

FIXTURE_SETUP(fence)
{
	struct rc_opts opts;

	rc_default_opts(&opts);
	/* Small packets: the READ takes many, giving the SEND a chance. */
	opts.path_mtu = IBV_MTU_256;
	rc_pair_open(_metadata, &self->p, &opts);
	rc_pair_connect(_metadata, &self->p);
	rc_buf_alloc(_metadata, &self->remote, self->p.pd,
		     FENCE_ROUNDS * FENCE_LEN, RC_ACCESS_ALL);
	rc_buf_alloc(_metadata, &self->bounce, self->p.pd,
		     FENCE_ROUNDS * FENCE_LEN, RC_ACCESS_ALL);
	rc_buf_alloc(_metadata, &self->recv, self->p.pd,
		     FENCE_ROUNDS * FENCE_LEN, RC_ACCESS_ALL);
}

FIXTURE_TEARDOWN(fence)
{
	rc_buf_free(_metadata, &self->remote);
	rc_buf_free(_metadata, &self->bounce);
	rc_buf_free(_metadata, &self->recv);
	rc_pair_close(_metadata, &self->p);
}

/*
 * READ into a bounce buffer, then a fenced SEND of that buffer, posted
 * together: the SEND must carry what the READ brought, not what the
 * buffer held before.
 */
TEST_F_TIMEOUT(fence, send_after_read, 120)
{
	struct rc_pair *p = &self->p;
	struct ibv_sge sge;
	struct ibv_wc wc;
	size_t off;
	int i;

	for (i = 0; i < FENCE_ROUNDS; i++) {
		off = (size_t)i * FENCE_LEN;
		rc_fill(self->remote.mem + off, FENCE_LEN, 40 + i);
		rc_poison(self->bounce.mem + off, FENCE_LEN, 40 + i);
		sge = rc_sge(&self->recv, off, FENCE_LEN);
		ASSERT_EQ(0, rc_post_recv(p->s[1].qp, i, &sge, 1));
	}
	for (i = 0; i < FENCE_ROUNDS; i++) {
		off = (size_t)i * FENCE_LEN;
		sge = rc_sge(&self->bounce, off, FENCE_LEN);
		ASSERT_EQ(0, rc_post(p->s[0].qp, 2 * i, IBV_WR_RDMA_READ, 0,
				     &sge, 1,
				     (uintptr_t)self->remote.mem + off,
				     self->remote.mr->rkey));
		ASSERT_EQ(0, rc_post(p->s[0].qp, 2 * i + 1, IBV_WR_SEND,
				     IBV_SEND_FENCE | IBV_SEND_SIGNALED,
				     &sge, 1, 0, 0));
	}
	for (i = 0; i < FENCE_ROUNDS; i++) {
		RC_WAIT_WC(p->s[0].scq, 2 * i + 1, IBV_WC_SUCCESS,
			   IBV_WC_SEND);
		rc_wait_wc(_metadata, p->s[1].rcq, &wc);
		RC_EXPECT_WC(wc, i, IBV_WC_SUCCESS, IBV_WC_RECV);
		EXPECT_EQ((uint32_t)FENCE_LEN, wc.byte_len);
		off = (size_t)i * FENCE_LEN;
		EXPECT_EQ(-1, rc_mismatch(self->recv.mem + off, FENCE_LEN,
					  40 + i, false))
			TH_LOG("round %d: the SEND overtook the READ", i);
	}
}

/* The same with a fetch-and-add whose result is sent on. */
TEST_F_TIMEOUT(fence, send_after_atomic, 60)
{
	struct rc_pair *p = &self->p;
	uint64_t *word = (uint64_t *)self->remote.mem;
	uint64_t *res = (uint64_t *)self->bounce.mem;
	uint64_t *got = (uint64_t *)self->recv.mem;
	struct ibv_sge sge;
	int i;

	*word = 1000;
	for (i = 0; i < FENCE_ROUNDS; i++) {
		res[i] = ~0ULL;
		sge = rc_sge(&self->recv, i * 8, 8);
		ASSERT_EQ(0, rc_post_recv(p->s[1].qp, i, &sge, 1));
	}
	for (i = 0; i < FENCE_ROUNDS; i++) {
		sge = rc_sge(&self->bounce, i * 8, 8);
		ASSERT_EQ(0, rc_post_atomic(p->s[0].qp, 2 * i,
					    IBV_WR_ATOMIC_FETCH_AND_ADD, 0,
					    &sge, (uintptr_t)word,
					    self->remote.mr->rkey, 10, 0));
		ASSERT_EQ(0, rc_post(p->s[0].qp, 2 * i + 1, IBV_WR_SEND,
				     IBV_SEND_FENCE | IBV_SEND_SIGNALED,
				     &sge, 1, 0, 0));
	}
	for (i = 0; i < FENCE_ROUNDS; i++) {
		RC_WAIT_WC(p->s[0].scq, 2 * i + 1, IBV_WC_SUCCESS,
			   IBV_WC_SEND);
		RC_WAIT_WC(p->s[1].rcq, i, IBV_WC_SUCCESS, IBV_WC_RECV);
		EXPECT_EQ(1000 + 10 * (uint64_t)i, got[i]);
	}
	EXPECT_EQ(1000 + 10 * (uint64_t)FENCE_ROUNDS, *word);
}

TEST_HARNESS_MAIN
