// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Every RC opcode between two connected QPs of qhca0, checked by the data
 * it moves and not only by its completion: SEND, SEND_WITH_IMM,
 * RDMA_WRITE, RDMA_WRITE_WITH_IMM and RDMA_READ from one byte to 1 MiB,
 * within one packet and segmented by path MTUs of 256 to 4096 bytes, at
 * unaligned addresses; then the atomics.  Each destination is poisoned
 * first, so a byte that does not arrive, or lands outside the message,
 * shows.
 */
#include "rc_pair.h"

#define GUARD		128	/* poisoned bytes on each side of a message */
#define IMM		0x8badf00dU

FIXTURE(xfer)
{
	struct rc_pair p;
	struct rc_buf buf[2];	/* QP 0's and QP 1's memory */
	size_t src_off;
	size_t dst_off;
};

FIXTURE_VARIANT(xfer)
{
	size_t len;
	enum ibv_mtu mtu;
	size_t off;		/* misalignment of the message */
};

FIXTURE_VARIANT_ADD(xfer, one_byte)
{
	.len = 1,
	.mtu = IBV_MTU_4096,
};

FIXTURE_VARIANT_ADD(xfer, odd_63_mtu_256)
{
	.len = 63,
	.mtu = IBV_MTU_256,
	.off = 5,
};

FIXTURE_VARIANT_ADD(xfer, one_mtu_4096)
{
	.len = 4096,
	.mtu = IBV_MTU_4096,
};

FIXTURE_VARIANT_ADD(xfer, mtu_plus_one_4096)
{
	.len = 4097,
	.mtu = IBV_MTU_4096,
	.off = 1,
};

FIXTURE_VARIANT_ADD(xfer, ten_packets_mtu_1024)
{
	.len = 10 * 1024,
	.mtu = IBV_MTU_1024,
	.off = 512,
};

FIXTURE_VARIANT_ADD(xfer, page_crossing_mtu_256)
{
	.len = 65536 + 13,
	.mtu = IBV_MTU_256,
	.off = 4095,
};

FIXTURE_VARIANT_ADD(xfer, one_mib_mtu_4096)
{
	.len = 1 << 20,
	.mtu = IBV_MTU_4096,
};

FIXTURE_VARIANT_ADD(xfer, one_mib_mtu_512)
{
	.len = 1 << 20,
	.mtu = IBV_MTU_512,
	.off = 100,
};

FIXTURE_SETUP(xfer)
{
	struct rc_opts opts;
	size_t size;
	int i;

	rc_default_opts(&opts);
	opts.path_mtu = variant->mtu;
	rc_pair_open(_metadata, &self->p, &opts);
	rc_pair_connect(_metadata, &self->p);

	/*
	 * Source and destination are misaligned differently, so that the
	 * device cannot get away with copying whole pages.
	 */
	self->src_off = GUARD + variant->off;
	self->dst_off = GUARD + (variant->off * 7 + 3) % 4096;
	size = variant->len + 2 * GUARD + 2 * 4096;
	for (i = 0; i < 2; i++)
		rc_buf_alloc(_metadata, &self->buf[i], self->p.pd, size,
			     RC_ACCESS_ALL);
}

FIXTURE_TEARDOWN(xfer)
{
	rc_buf_free(_metadata, &self->buf[0]);
	rc_buf_free(_metadata, &self->buf[1]);
	rc_pair_close(_metadata, &self->p);
}

/* The receive completion of a message from QP 0, checked field by field. */
static void expect_recv(struct __test_metadata *_metadata,
			const struct rc_pair *p, const struct ibv_wc *wc,
			uint64_t wr_id, enum ibv_wc_opcode opcode,
			uint32_t len, bool imm)
{
	RC_EXPECT_WC(*wc, wr_id, IBV_WC_SUCCESS, opcode);
	EXPECT_EQ(len, wc->byte_len);
	EXPECT_EQ(p->s[1].qp->qp_num, wc->qp_num);
	/*
	 * Verbs promises src_qp and slid for UD only; qhca's CQE carries
	 * them for every receive, and the provider hands them on.
	 */
	EXPECT_EQ(p->s[0].qp->qp_num, wc->src_qp);
	EXPECT_EQ(p->pattr.lid, wc->slid);
	EXPECT_EQ(imm ? (unsigned int)IBV_WC_WITH_IMM : 0U,
		  wc->wc_flags & IBV_WC_WITH_IMM);
	if (imm)
		EXPECT_EQ(htobe32(IMM), wc->imm_data)
			TH_LOG("imm_data %#x, posted %#x",
			       be32toh(wc->imm_data), IMM);
}

/* SEND or SEND_WITH_IMM of the variant's message into a larger receive. */
static void send_one(struct __test_metadata *_metadata,
		     FIXTURE_DATA(xfer) *self, size_t len, bool imm)
{
	struct rc_pair *p = &self->p;
	struct rc_buf *src = &self->buf[0], *dst = &self->buf[1];
	struct ibv_sge ssge, rsge;
	struct ibv_wc wc;

	rc_fill(src->mem + self->src_off, len, 1);
	rc_prepare_dst(dst, self->dst_off, len, 1);

	/* Room for more than the message: the rest must stay untouched. */
	rsge = rc_sge(dst, self->dst_off, len + GUARD);
	ASSERT_EQ(0, rc_post_recv(p->s[1].qp, 0x1000, &rsge, 1));
	ssge = rc_sge(src, self->src_off, len);
	ASSERT_EQ(0, rc_post_imm(p->s[0].qp, 0x2000,
				 imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
				 IBV_SEND_SIGNALED, &ssge, 1, 0, 0, IMM));

	rc_wait_wc(_metadata, p->s[0].scq, &wc);
	RC_EXPECT_WC(wc, 0x2000, IBV_WC_SUCCESS, IBV_WC_SEND);
	EXPECT_EQ(p->s[0].qp->qp_num, wc.qp_num);
	rc_wait_wc(_metadata, p->s[1].rcq, &wc);
	expect_recv(_metadata, p, &wc, 0x1000, IBV_WC_RECV, len, imm);

	RC_EXPECT_DELIVERED(dst, self->dst_off, len, 1);
	/* The requester's memory is only read. */
	RC_EXPECT_PATTERN(src->mem + self->src_off, len, 1);

	rc_expect_no_wc(_metadata, p->s[0].scq);
	rc_expect_no_wc(_metadata, p->s[1].rcq);
	rc_expect_no_wc(_metadata, p->s[0].rcq);
	rc_expect_no_wc(_metadata, p->s[1].scq);
}

TEST_F_TIMEOUT(xfer, send, 120)
{
	send_one(_metadata, self, variant->len, false);
}

TEST_F_TIMEOUT(xfer, send_with_imm, 120)
{
	send_one(_metadata, self, variant->len, true);
}

/* RDMA_WRITE and RDMA_WRITE_WITH_IMM from QP 0 into QP 1's memory. */
static void write_one(struct __test_metadata *_metadata,
		      FIXTURE_DATA(xfer) *self, size_t len, bool imm)
{
	struct rc_pair *p = &self->p;
	struct rc_buf *src = &self->buf[0], *dst = &self->buf[1];
	struct ibv_sge sge;
	struct ibv_wc wc;

	rc_fill(src->mem + self->src_off, len, 2);
	rc_prepare_dst(dst, self->dst_off, len, 2);

	/* WITH_IMM consumes a receive, which needs no buffer at all. */
	if (imm)
		ASSERT_EQ(0, rc_post_recv(p->s[1].qp, 0x1001, NULL, 0));
	sge = rc_sge(src, self->src_off, len);
	ASSERT_EQ(0, rc_post_imm(p->s[0].qp, 0x2001,
				 imm ? IBV_WR_RDMA_WRITE_WITH_IMM :
				       IBV_WR_RDMA_WRITE,
				 IBV_SEND_SIGNALED, &sge, 1,
				 (uintptr_t)dst->mem + self->dst_off,
				 dst->mr->rkey, IMM));

	rc_wait_wc(_metadata, p->s[0].scq, &wc);
	RC_EXPECT_WC(wc, 0x2001, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	EXPECT_EQ(p->s[0].qp->qp_num, wc.qp_num);
	if (imm) {
		rc_wait_wc(_metadata, p->s[1].rcq, &wc);
		expect_recv(_metadata, p, &wc, 0x1001,
			    IBV_WC_RECV_RDMA_WITH_IMM, len, true);
	}

	RC_EXPECT_DELIVERED(dst, self->dst_off, len, 2);
	RC_EXPECT_PATTERN(src->mem + self->src_off, len, 2);
	/* A plain write is invisible to the responder's receive queue. */
	rc_expect_no_wc(_metadata, p->s[1].rcq);
	rc_expect_no_wc(_metadata, p->s[0].scq);
}

TEST_F_TIMEOUT(xfer, rdma_write, 120)
{
	write_one(_metadata, self, variant->len, false);
}

TEST_F_TIMEOUT(xfer, rdma_write_with_imm, 120)
{
	write_one(_metadata, self, variant->len, true);
}

TEST_F_TIMEOUT(xfer, rdma_read, 120)
{
	struct rc_pair *p = &self->p;
	struct rc_buf *local = &self->buf[0], *remote = &self->buf[1];
	size_t len = variant->len;
	struct ibv_sge sge;
	struct ibv_wc wc;

	rc_fill(remote->mem + self->src_off, len, 3);
	rc_prepare_dst(local, self->dst_off, len, 3);

	sge = rc_sge(local, self->dst_off, len);
	ASSERT_EQ(0, rc_post(p->s[0].qp, 0x2002, IBV_WR_RDMA_READ,
			     IBV_SEND_SIGNALED, &sge, 1,
			     (uintptr_t)remote->mem + self->src_off,
			     remote->mr->rkey));

	rc_wait_wc(_metadata, p->s[0].scq, &wc);
	RC_EXPECT_WC(wc, 0x2002, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	EXPECT_EQ(p->s[0].qp->qp_num, wc.qp_num);

	RC_EXPECT_DELIVERED(local, self->dst_off, len, 3);
	RC_EXPECT_PATTERN(remote->mem + self->src_off, len, 3);
	rc_expect_no_wc(_metadata, p->s[1].rcq);
}

/*
 * Back-to-back messages of every kind: each arrives exactly once, whole,
 * and the completions come in the order the WQEs were posted.
 */
TEST_F_TIMEOUT(xfer, train_in_order, 180)
{
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_SEND, IBV_WR_RDMA_WRITE, IBV_WR_SEND_WITH_IMM,
		IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_SEND,
	};
	const int n = sizeof(ops) / sizeof(ops[0]);
	struct rc_pair *p = &self->p;
	size_t len = variant->len, slot, size;
	struct rc_buf src, dst;
	struct ibv_sge sge;
	struct ibv_wc wc;
	int i, recvs = 0;

	/* One slot per message, on each side, in buffers of their own. */
	slot = len + GUARD;
	size = n * slot + GUARD;
	rc_buf_alloc(_metadata, &src, p->pd, size, RC_ACCESS_ALL);
	rc_buf_alloc(_metadata, &dst, p->pd, size, RC_ACCESS_ALL);

	for (i = 0; i < n; i++) {
		rc_fill(src.mem + i * slot, len, 10 + i);
		rc_poison(dst.mem + i * slot, len, 10 + i);
		rc_poison(dst.mem + i * slot + len, GUARD, 100 + i);
		if (ops[i] == IBV_WR_RDMA_WRITE)
			continue;
		/* Receives sized for one message, so none can spill over. */
		sge = rc_sge(&dst, i * slot, len);
		ASSERT_EQ(0, rc_post_recv(p->s[1].qp, 0x100 + i, &sge,
				ops[i] == IBV_WR_RDMA_WRITE_WITH_IMM ? 0 : 1));
	}
	for (i = 0; i < n; i++) {
		sge = rc_sge(&src, i * slot, len);
		ASSERT_EQ(0, rc_post_imm(p->s[0].qp, 0x200 + i, ops[i],
					 IBV_SEND_SIGNALED, &sge, 1,
					 (uintptr_t)dst.mem + i * slot,
					 dst.mr->rkey, IMM + i));
	}

	for (i = 0; i < n; i++) {
		rc_wait_wc(_metadata, p->s[0].scq, &wc);
		RC_EXPECT_WC(wc, 0x200 + i, IBV_WC_SUCCESS, -1);
	}
	for (i = 0; i < n; i++) {
		if (ops[i] == IBV_WR_RDMA_WRITE)
			continue;
		rc_wait_wc(_metadata, p->s[1].rcq, &wc);
		RC_EXPECT_WC(wc, 0x100 + i, IBV_WC_SUCCESS,
			     ops[i] == IBV_WR_RDMA_WRITE_WITH_IMM ?
			     IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV);
		EXPECT_EQ(len, wc.byte_len);
		recvs++;
	}
	rc_expect_no_wc(_metadata, p->s[1].rcq);
	EXPECT_EQ(4, recvs);

	for (i = 0; i < n; i++) {
		long at = rc_mismatch(dst.mem + i * slot, len, 10 + i, false);

		EXPECT_EQ(-1, at) TH_LOG("message %d: byte %ld", i, at);
		at = rc_mismatch(dst.mem + i * slot + len, GUARD, 100 + i,
				 true);
		EXPECT_EQ(-1, at) TH_LOG("after message %d: byte %ld written",
					 i, at);
	}
	rc_buf_free(_metadata, &src);
	rc_buf_free(_metadata, &dst);
}

/* ---- Zero-length messages ------------------------------------------ */

FIXTURE(zero)
{
	struct rc_pair p;
	struct rc_buf buf;
};

FIXTURE_SETUP(zero)
{
	struct rc_opts opts;

	rc_default_opts(&opts);
	rc_pair_open(_metadata, &self->p, &opts);
	rc_pair_connect(_metadata, &self->p);
	rc_buf_alloc(_metadata, &self->buf, self->p.pd, 4096,
		     RC_ACCESS_ALL);
	rc_prepare_dst(&self->buf, GUARD, 64, 7);
}

FIXTURE_TEARDOWN(zero)
{
	rc_buf_free(_metadata, &self->buf);
	rc_pair_close(_metadata, &self->p);
}

TEST_F(zero, send)
{
	struct rc_pair *p = &self->p;
	struct ibv_sge sge = rc_sge(&self->buf, GUARD, 64);
	struct ibv_wc wc;

	ASSERT_EQ(0, rc_post_recv(p->s[1].qp, 1, &sge, 1));
	ASSERT_EQ(0, rc_post_imm(p->s[0].qp, 2, IBV_WR_SEND_WITH_IMM,
				 IBV_SEND_SIGNALED, NULL, 0, 0, 0, IMM));
	RC_WAIT_WC(p->s[0].scq, 2, IBV_WC_SUCCESS, IBV_WC_SEND);
	rc_wait_wc(_metadata, p->s[1].rcq, &wc);
	expect_recv(_metadata, p, &wc, 1, IBV_WC_RECV, 0, true);
	RC_EXPECT_UNTOUCHED(&self->buf, GUARD, 64, 7);
}

TEST_F(zero, rdma_write_with_imm)
{
	struct rc_pair *p = &self->p;
	struct ibv_wc wc;

	/* The usual "doorbell" idiom: no data, only the immediate. */
	ASSERT_EQ(0, rc_post_recv(p->s[1].qp, 1, NULL, 0));
	ASSERT_EQ(0, rc_post_imm(p->s[0].qp, 2, IBV_WR_RDMA_WRITE_WITH_IMM,
				 IBV_SEND_SIGNALED, NULL, 0,
				 (uintptr_t)self->buf.mem + GUARD,
				 self->buf.mr->rkey, IMM));
	RC_WAIT_WC(p->s[0].scq, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	rc_wait_wc(_metadata, p->s[1].rcq, &wc);
	expect_recv(_metadata, p, &wc, 1, IBV_WC_RECV_RDMA_WITH_IMM, 0,
		    true);
	RC_EXPECT_UNTOUCHED(&self->buf, GUARD, 64, 7);
}

TEST_F(zero, rdma_write_and_read)
{
	struct rc_pair *p = &self->p;

	ASSERT_EQ(0, rc_post(p->s[0].qp, 1, IBV_WR_RDMA_WRITE,
			     IBV_SEND_SIGNALED, NULL, 0,
			     (uintptr_t)self->buf.mem + GUARD,
			     self->buf.mr->rkey));
	ASSERT_EQ(0, rc_post(p->s[0].qp, 2, IBV_WR_RDMA_READ,
			     IBV_SEND_SIGNALED, NULL, 0,
			     (uintptr_t)self->buf.mem + GUARD,
			     self->buf.mr->rkey));
	RC_WAIT_WC(p->s[0].scq, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	RC_WAIT_WC(p->s[0].scq, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	RC_EXPECT_UNTOUCHED(&self->buf, GUARD, 64, 7);
	rc_expect_no_wc(_metadata, p->s[1].rcq);
}

/* ---- Atomics --------------------------------------------------------- */

#define ATOMIC_SLOTS	512

FIXTURE(atomic)
{
	struct rc_pair p;
	struct rc_buf local;	/* QP 0's results */
	struct rc_buf remote;	/* QP 1's 64-bit words */
	uint64_t *res;
	uint64_t *word;
};

FIXTURE_VARIANT(atomic)
{
	size_t word;		/* index of the target word in the MR */
};

FIXTURE_VARIANT_ADD(atomic, first_word)
{
	.word = 0,
};

FIXTURE_VARIANT_ADD(atomic, last_word_of_page)
{
	.word = 511,
};

FIXTURE_VARIANT_ADD(atomic, last_word_of_mr)
{
	.word = 2 * 4096 / 8 - 1,
};

FIXTURE_SETUP(atomic)
{
	struct rc_opts opts;
	size_t i;

	rc_default_opts(&opts);
	opts.max_send_wr = 256;
	opts.max_rd_atomic = QHCA_MAX_RD_ATOMIC;
	rc_pair_open(_metadata, &self->p, &opts);
	rc_pair_connect(_metadata, &self->p);
	rc_buf_alloc(_metadata, &self->local, self->p.pd,
		     ATOMIC_SLOTS * 8, RC_ACCESS_ALL);
	rc_buf_alloc(_metadata, &self->remote, self->p.pd, 2 * 4096,
		     RC_ACCESS_ALL);
	self->res = (uint64_t *)self->local.mem;
	self->word = (uint64_t *)self->remote.mem + variant->word;
	for (i = 0; i < ATOMIC_SLOTS; i++)
		self->res[i] = 0x5a5a5a5a5a5a5a5aULL;
	for (i = 0; i < 2 * 4096 / 8; i++)
		((uint64_t *)self->remote.mem)[i] = 0xa5a5a5a5a5a5a5a5ULL;
}

FIXTURE_TEARDOWN(atomic)
{
	rc_buf_free(_metadata, &self->local);
	rc_buf_free(_metadata, &self->remote);
	rc_pair_close(_metadata, &self->p);
}

/* Only the target word of the remote MR may ever change. */
static void expect_neighbours(struct __test_metadata *_metadata,
			      FIXTURE_DATA(atomic) *self)
{
	uint64_t *w = (uint64_t *)self->remote.mem;
	size_t i;

	for (i = 0; i < 2 * 4096 / 8; i++)
		if (w + i != self->word)
			EXPECT_EQ(0xa5a5a5a5a5a5a5a5ULL, w[i])
				TH_LOG("word %zu changed", i);
}

static void atomic_one(struct __test_metadata *_metadata,
		       FIXTURE_DATA(atomic) *self, enum ibv_wr_opcode op,
		       uint64_t compare_add, uint64_t swap, int slot)
{
	struct rc_pair *p = &self->p;
	struct ibv_sge sge = rc_sge(&self->local, slot * 8, 8);

	ASSERT_EQ(0, rc_post_atomic(p->s[0].qp, slot, op, IBV_SEND_SIGNALED,
				    &sge, (uintptr_t)self->word,
				    self->remote.mr->rkey, compare_add,
				    swap));
	RC_WAIT_WC(p->s[0].scq, slot, IBV_WC_SUCCESS,
		   op == IBV_WR_ATOMIC_CMP_AND_SWP ? IBV_WC_COMP_SWAP :
						     IBV_WC_FETCH_ADD);
}

TEST_F(atomic, cmp_and_swp_success)
{
	*self->word = 0x1122334455667788ULL;
	atomic_one(_metadata, self, IBV_WR_ATOMIC_CMP_AND_SWP,
		   0x1122334455667788ULL, 0x0123456789abcdefULL, 1);
	EXPECT_EQ(0x1122334455667788ULL, self->res[1]);
	EXPECT_EQ(0x0123456789abcdefULL, *self->word);
	/* The result went to its 8 bytes and nowhere else. */
	EXPECT_EQ(0x5a5a5a5a5a5a5a5aULL, self->res[0]);
	EXPECT_EQ(0x5a5a5a5a5a5a5a5aULL, self->res[2]);
	expect_neighbours(_metadata, self);
}

TEST_F(atomic, cmp_and_swp_failure)
{
	*self->word = 0x1122334455667788ULL;
	/* Differs in the top byte only: the whole word is compared. */
	atomic_one(_metadata, self, IBV_WR_ATOMIC_CMP_AND_SWP,
		   0x1022334455667788ULL, 0x0123456789abcdefULL, 1);
	EXPECT_EQ(0x1122334455667788ULL, self->res[1]);
	EXPECT_EQ(0x1122334455667788ULL, *self->word);
	/* And in the bottom byte only. */
	atomic_one(_metadata, self, IBV_WR_ATOMIC_CMP_AND_SWP,
		   0x1122334455667789ULL, 0, 2);
	EXPECT_EQ(0x1122334455667788ULL, self->res[2]);
	EXPECT_EQ(0x1122334455667788ULL, *self->word);
	expect_neighbours(_metadata, self);
}

TEST_F(atomic, fetch_and_add)
{
	*self->word = 0x00000000fffffffeULL;
	/* The carry must cross the 32-bit halves. */
	atomic_one(_metadata, self, IBV_WR_ATOMIC_FETCH_AND_ADD, 3, 0, 1);
	EXPECT_EQ(0x00000000fffffffeULL, self->res[1]);
	EXPECT_EQ(0x0000000100000001ULL, *self->word);

	/* And wrap around 64 bits. */
	*self->word = 0xffffffffffffffffULL;
	atomic_one(_metadata, self, IBV_WR_ATOMIC_FETCH_AND_ADD, 2, 0, 2);
	EXPECT_EQ(0xffffffffffffffffULL, self->res[2]);
	EXPECT_EQ(1ULL, *self->word);
	expect_neighbours(_metadata, self);
}

/*
 * A train of unsignaled fetch-and-adds with the last one signaled: every
 * one executes once and in order, so the results are 0, 1, 2, ...
 */
TEST_F_TIMEOUT(atomic, fetch_and_add_train, 60)
{
	struct rc_pair *p = &self->p;
	const int n = 200;
	struct ibv_sge sge;
	int i;

	*self->word = 0;
	for (i = 0; i < n; i++) {
		sge = rc_sge(&self->local, i * 8, 8);
		ASSERT_EQ(0, rc_post_atomic(p->s[0].qp, i,
					    IBV_WR_ATOMIC_FETCH_AND_ADD,
					    i == n - 1 ? IBV_SEND_SIGNALED : 0,
					    &sge, (uintptr_t)self->word,
					    self->remote.mr->rkey, 1, 0));
	}
	RC_WAIT_WC(p->s[0].scq, n - 1, IBV_WC_SUCCESS, IBV_WC_FETCH_ADD);
	rc_expect_no_wc(_metadata, p->s[0].scq);
	EXPECT_EQ((uint64_t)n, *self->word);
	for (i = 0; i < n; i++)
		EXPECT_EQ((uint64_t)i, self->res[i]) TH_LOG("result %d", i);
	expect_neighbours(_metadata, self);
}

/*
 * Both QPs add to the same word at once (QP 1 reaching it through QP 0):
 * the device's atomics are atomic with respect to each other, so no
 * addition is lost and no two see the same value.
 */
TEST_F_TIMEOUT(atomic, fetch_and_add_two_qps, 60)
{
	struct rc_pair *p = &self->p;
	const int n = ATOMIC_SLOTS / 2;
	struct rc_buf res1;
	uint64_t *r1;
	struct ibv_sge sge;
	struct ibv_wc wc;
	uint8_t *seen;
	int i, q;

	rc_buf_alloc(_metadata, &res1, p->pd, n * 8, RC_ACCESS_ALL);
	r1 = (uint64_t *)res1.mem;
	*self->word = 0;
	for (i = 0; i < n; i++) {
		for (q = 0; q < 2; q++) {
			if (q)
				sge = rc_sge(&res1, i * 8, 8);
			else
				sge = rc_sge(&self->local, i * 8, 8);
			ASSERT_EQ(0, rc_post_atomic(p->s[q].qp, i,
					IBV_WR_ATOMIC_FETCH_AND_ADD,
					i % 64 == 63 ? IBV_SEND_SIGNALED : 0,
					&sge, (uintptr_t)self->word,
					self->remote.mr->rkey, 1, 0));
		}
		if (i % 64 != 63)
			continue;
		/* Keep the send queues from filling up. */
		for (q = 0; q < 2; q++) {
			rc_wait_wc(_metadata, p->s[q].scq, &wc);
			RC_EXPECT_WC(wc, i, IBV_WC_SUCCESS, IBV_WC_FETCH_ADD);
		}
	}
	EXPECT_EQ((uint64_t)2 * n, *self->word);

	seen = calloc(2 * n, 1);
	ASSERT_NE(NULL, seen);
	for (i = 0; i < n; i++) {
		uint64_t v[2] = { self->res[i], r1[i] };

		for (q = 0; q < 2; q++) {
			ASSERT_GT((uint64_t)2 * n, v[q]);
			EXPECT_EQ(0, seen[v[q]]) TH_LOG("%llu twice",
						(unsigned long long)v[q]);
			seen[v[q]] = 1;
		}
		/* Each QP's own results increase. */
		if (i) {
			EXPECT_LT(self->res[i - 1], self->res[i]);
			EXPECT_LT(r1[i - 1], r1[i]);
		}
	}
	free(seen);
	rc_buf_free(_metadata, &res1);
	expect_neighbours(_metadata, self);
}

TEST_HARNESS_MAIN
