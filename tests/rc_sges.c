// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Scatter/gather and inline data.
 *
 * sge: messages gathered from and scattered to up to max_sge pieces of
 * irregular sizes, spread over two MRs on each side with gaps between them,
 * and cut at other places on the two sides, so that every piece boundary
 * falls inside a piece of the other side (and, with a small path MTU,
 * inside packets).  Every byte of both MRs is checked: the message where
 * it belongs, the gaps untouched.
 *
 * inline: data the provider copies into the WQE at post time, up to the
 * QP's max_inline_data, from memory that is not registered at all; the
 * source is overwritten right after ibv_post_send() returns, so only a
 * copy made by the post can arrive.
 */
#include "rc_pair.h"

#define MAX_SGE		((int)QHCA_MAX_SGE)
#define IMM		0xfeedc0deU

/* How a message is cut into SGEs over two buffers. */
struct layout {
	int n;
	struct ibv_sge sge[MAX_SGE];
	size_t at[MAX_SGE];		/* the piece's offset in the message */
};

/*
 * Cuts len bytes into n pieces of sizes weighted by seed (at least one
 * byte each), alternately in b[0] and b[1], with gaps of 1 to 13 bytes.
 */
static void make_layout(struct layout *l, struct rc_buf *b, int n,
			size_t len, uint32_t seed)
{
	size_t pos[2] = { 3, 5 }, at = 0, left = len, piece;
	unsigned int w[MAX_SGE], sum = 0;
	int i;

	for (i = 0; i < n; i++) {
		w[i] = 1 + rc_pattern(seed, i) % 8;
		sum += w[i];
	}
	l->n = n;
	for (i = 0; i < n; i++) {
		piece = i == n - 1 ? left : len * w[i] / sum;
		if (!piece)
			piece = 1;
		/* Leave a byte for each piece still to come. */
		if (piece > left - (n - 1 - i))
			piece = left - (n - 1 - i);
		l->sge[i] = rc_sge(&b[i % 2], pos[i % 2], piece);
		l->at[i] = at;
		at += piece;
		left -= piece;
		pos[i % 2] += piece + 1 + i % 13;
	}
}

/* b[0] and b[1] poisoned, then the message's pieces written where l says. */
static void render(const struct layout *l, struct rc_buf *b, uint8_t **img,
		   uint32_t seed, bool with_message)
{
	int i;

	for (i = 0; i < 2; i++)
		rc_poison(img[i], b[i].size, seed + 1 + i);
	if (!with_message)
		return;
	for (i = 0; i < l->n; i++) {
		uint8_t *base = img[i % 2];
		uint8_t *mem = b[i % 2].mem;

		rc_fill_from(base + (l->sge[i].addr - (uintptr_t)mem),
			     l->sge[i].length, seed, l->at[i]);
	}
}

/* Fills b with the source pieces of a message. */
static void fill_layout(const struct layout *l, struct rc_buf *b,
			uint32_t seed)
{
	uint8_t *img[2] = { b[0].mem, b[1].mem };

	render(l, b, img, seed, true);
}

/* Poisons b, as the destination of a message. */
static void poison_layout(const struct layout *l, struct rc_buf *b,
			  uint32_t seed)
{
	uint8_t *img[2] = { b[0].mem, b[1].mem };

	render(l, b, img, seed, false);
}

/* Every byte of b: the message's pieces where l puts them, poison around. */
static void expect_layout(struct __test_metadata *_metadata,
			  const struct layout *l, struct rc_buf *b,
			  uint32_t seed)
{
	uint8_t *img[2];
	size_t j;
	int i;

	for (i = 0; i < 2; i++) {
		img[i] = malloc(b[i].size);
		ASSERT_NE(NULL, img[i]);
	}
	render(l, b, img, seed, true);
	for (i = 0; i < 2; i++) {
		for (j = 0; j < b[i].size; j++)
			if (img[i][j] != b[i].mem[j])
				break;
		EXPECT_EQ(b[i].size, j)
			TH_LOG("buffer %d differs at byte %zu", i, j);
		free(img[i]);
	}
}

FIXTURE(sge)
{
	struct rc_pair p;
	struct rc_buf src[2];		/* QP 0's two MRs */
	struct rc_buf dst[2];		/* QP 1's two MRs */
	struct rc_buf flat;		/* QP 1's RDMA target */
	int nsend;
	int nrecv;
};

FIXTURE_VARIANT(sge)
{
	enum ibv_wr_opcode opcode;
	int nsend;			/* 0: the QP's max_send_sge */
	int nrecv;			/* receive SGEs (READ: local SGEs) */
	size_t len;
	enum ibv_mtu mtu;
};

FIXTURE_VARIANT_ADD(sge, send_2_to_3)
{
	.opcode = IBV_WR_SEND,
	.nsend = 2,
	.nrecv = 3,
	.len = 100,
	.mtu = IBV_MTU_4096,
};

FIXTURE_VARIANT_ADD(sge, send_max_to_max)
{
	.opcode = IBV_WR_SEND,
	.len = 3000,
	.mtu = IBV_MTU_4096,
};

FIXTURE_VARIANT_ADD(sge, send_max_one_byte_pieces)
{
	.opcode = IBV_WR_SEND,
	.len = MAX_SGE,
	.mtu = IBV_MTU_4096,
};

FIXTURE_VARIANT_ADD(sge, send_max_to_max_mtu_256)
{
	.opcode = IBV_WR_SEND,
	.len = 20000,
	.mtu = IBV_MTU_256,
};

FIXTURE_VARIANT_ADD(sge, send_with_imm_max_to_1)
{
	.opcode = IBV_WR_SEND_WITH_IMM,
	.nrecv = 1,
	.len = 5000,
	.mtu = IBV_MTU_1024,
};

FIXTURE_VARIANT_ADD(sge, send_1_to_max)
{
	.opcode = IBV_WR_SEND,
	.nsend = 1,
	.len = 5000,
	.mtu = IBV_MTU_1024,
};

FIXTURE_VARIANT_ADD(sge, rdma_write_max)
{
	.opcode = IBV_WR_RDMA_WRITE,
	.len = 50000,
	.mtu = IBV_MTU_1024,
};

FIXTURE_VARIANT_ADD(sge, rdma_write_with_imm_max)
{
	.opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
	.len = 50000,
	.mtu = IBV_MTU_4096,
};

FIXTURE_VARIANT_ADD(sge, rdma_read_max)
{
	.opcode = IBV_WR_RDMA_READ,
	.len = 50000,
	.mtu = IBV_MTU_512,
};

FIXTURE_SETUP(sge)
{
	struct rc_opts opts;
	size_t size = variant->len + 4096;
	int i;

	rc_default_opts(&opts);
	opts.max_send_sge = MAX_SGE;
	opts.max_recv_sge = MAX_SGE;
	opts.path_mtu = variant->mtu;
	rc_pair_open(_metadata, &self->p, &opts);
	rc_pair_connect(_metadata, &self->p);

	/* The provider may grant more, never less. */
	for (i = 0; i < 2; i++) {
		ASSERT_LE(QHCA_MAX_SGE, self->p.s[i].cap.max_send_sge);
		ASSERT_LE(QHCA_MAX_SGE, self->p.s[i].cap.max_recv_sge);
	}
	self->nsend = variant->nsend ? variant->nsend : MAX_SGE;
	self->nrecv = variant->nrecv ? variant->nrecv : MAX_SGE;
	ASSERT_LE((size_t)self->nsend, variant->len);
	ASSERT_LE((size_t)self->nrecv, variant->len);

	for (i = 0; i < 2; i++) {
		rc_buf_alloc(_metadata, &self->src[i], self->p.pd, size,
			     RC_ACCESS_ALL);
		rc_buf_alloc(_metadata, &self->dst[i], self->p.pd, size,
			     RC_ACCESS_ALL);
	}
	rc_buf_alloc(_metadata, &self->flat, self->p.pd, size,
		     RC_ACCESS_ALL);
}

FIXTURE_TEARDOWN(sge)
{
	int i;

	for (i = 0; i < 2; i++) {
		rc_buf_free(_metadata, &self->src[i]);
		rc_buf_free(_metadata, &self->dst[i]);
	}
	rc_buf_free(_metadata, &self->flat);
	rc_pair_close(_metadata, &self->p);
}

TEST_F_TIMEOUT(sge, transfer, 120)
{
	const enum ibv_wr_opcode op = variant->opcode;
	const bool imm = op == IBV_WR_SEND_WITH_IMM ||
			 op == IBV_WR_RDMA_WRITE_WITH_IMM;
	const bool send = op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM;
	struct rc_pair *p = &self->p;
	size_t len = variant->len;
	struct layout gather, scatter;
	struct ibv_wc wc;
	uint64_t raddr = (uintptr_t)self->flat.mem + 1;
	uint32_t rkey = self->flat.mr->rkey;

	if (op == IBV_WR_RDMA_READ) {
		/* QP 1's flat memory, scattered into QP 0's pieces. */
		make_layout(&scatter, self->src, self->nrecv, len, 21);
		poison_layout(&scatter, self->src, 5);
		rc_fill(self->flat.mem + 1, len, 5);
		ASSERT_EQ(0, rc_post(p->s[0].qp, 1, op, IBV_SEND_SIGNALED,
				     scatter.sge, scatter.n, raddr, rkey));
		RC_WAIT_WC(p->s[0].scq, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
		expect_layout(_metadata, &scatter, self->src, 5);
		RC_EXPECT_PATTERN(self->flat.mem + 1, len, 5);
		return;
	}

	make_layout(&gather, self->src, self->nsend, len, 22);
	fill_layout(&gather, self->src, 6);
	if (send) {
		make_layout(&scatter, self->dst, self->nrecv, len, 23);
		poison_layout(&scatter, self->dst, 6);
		ASSERT_EQ(0, rc_post_recv(p->s[1].qp, 2, scatter.sge,
					  scatter.n));
	} else {
		rc_prepare_dst(&self->flat, 1, len, 6);
		if (imm)
			ASSERT_EQ(0, rc_post_recv(p->s[1].qp, 2, NULL, 0));
	}
	ASSERT_EQ(0, rc_post_imm(p->s[0].qp, 1, op, IBV_SEND_SIGNALED,
				 gather.sge, gather.n, raddr, rkey, IMM));

	RC_WAIT_WC(p->s[0].scq, 1, IBV_WC_SUCCESS,
		   send ? IBV_WC_SEND : IBV_WC_RDMA_WRITE);
	if (send || imm) {
		rc_wait_wc(_metadata, p->s[1].rcq, &wc);
		RC_EXPECT_WC(wc, 2, IBV_WC_SUCCESS,
			     send ? IBV_WC_RECV : IBV_WC_RECV_RDMA_WITH_IMM);
		EXPECT_EQ(len, wc.byte_len);
		if (imm)
			EXPECT_EQ(htobe32(IMM), wc.imm_data);
	}
	if (send)
		expect_layout(_metadata, &scatter, self->dst, 6);
	else
		RC_EXPECT_DELIVERED(&self->flat, 1, len, 6);
	/* The gather side is only read. */
	expect_layout(_metadata, &gather, self->src, 6);
}

/* ---- Inline ----------------------------------------------------------- */

FIXTURE(inl)
{
	struct rc_pair p;
	struct rc_buf dst;
	uint8_t *src;			/* plain memory, not registered */
	unsigned int max_inline;
};

FIXTURE_VARIANT(inl)
{
	enum ibv_wr_opcode opcode;
	unsigned int len;		/* 0: the QP's max_inline_data */
	int nsge;
};

FIXTURE_VARIANT_ADD(inl, send_1)
{
	.opcode = IBV_WR_SEND,
	.len = 1,
	.nsge = 1,
};

FIXTURE_VARIANT_ADD(inl, send_64_in_3_sges)
{
	.opcode = IBV_WR_SEND,
	.len = 64,
	.nsge = 3,
};

FIXTURE_VARIANT_ADD(inl, send_max)
{
	.opcode = IBV_WR_SEND,
	.nsge = 1,
};

FIXTURE_VARIANT_ADD(inl, send_with_imm_max_in_max_sges)
{
	.opcode = IBV_WR_SEND_WITH_IMM,
	.nsge = MAX_SGE,
};

FIXTURE_VARIANT_ADD(inl, rdma_write_1)
{
	.opcode = IBV_WR_RDMA_WRITE,
	.len = 1,
	.nsge = 1,
};

FIXTURE_VARIANT_ADD(inl, rdma_write_max)
{
	.opcode = IBV_WR_RDMA_WRITE,
	.nsge = 2,
};

FIXTURE_VARIANT_ADD(inl, rdma_write_with_imm_100)
{
	.opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
	.len = 100,
	.nsge = 1,
};

FIXTURE_SETUP(inl)
{
	struct rc_opts opts;

	rc_default_opts(&opts);
	opts.max_send_sge = MAX_SGE;
	opts.max_inline_data = QHCA_MAX_INLINE;
	rc_pair_open(_metadata, &self->p, &opts);
	rc_pair_connect(_metadata, &self->p);
	self->max_inline = self->p.s[0].cap.max_inline_data;
	ASSERT_LE(QHCA_MAX_INLINE, self->max_inline);

	self->src = malloc(self->max_inline + 64);
	ASSERT_NE(NULL, self->src);
	rc_buf_alloc(_metadata, &self->dst, self->p.pd, 4096,
		     RC_ACCESS_ALL);
}

FIXTURE_TEARDOWN(inl)
{
	free(self->src);
	rc_buf_free(_metadata, &self->dst);
	rc_pair_close(_metadata, &self->p);
}

TEST_F(inl, transfer)
{
	const enum ibv_wr_opcode op = variant->opcode;
	const bool send = op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM;
	const bool imm = op == IBV_WR_SEND_WITH_IMM ||
			 op == IBV_WR_RDMA_WRITE_WITH_IMM;
	unsigned int len = variant->len ? variant->len : self->max_inline;
	struct rc_pair *p = &self->p;
	const int n = variant->nsge;
	struct ibv_sge sge[MAX_SGE], rsge;
	size_t at, pos, k;
	struct ibv_wc wc;
	int i;

	/*
	 * Pieces with a gap after each, in reverse order in memory: the data
	 * is the concatenation of the SGEs, not of the memory.  The lkeys
	 * are garbage: inline data is never looked up in an MR.
	 */
	rc_poison(self->src, self->max_inline + 64, 9);
	for (i = n - 1, pos = 0; i >= 0; i--) {
		sge[i].addr = (uintptr_t)self->src + pos;
		sge[i].length = i == n - 1 ? len - (n - 1) * (len / n) :
					     len / n;
		sge[i].lkey = 0xdeadbe00 + i;
		pos += sge[i].length + 2;
	}
	ASSERT_GE(self->max_inline + 64, pos);
	for (i = 0, at = 0; i < n; i++) {
		rc_fill_from((void *)(uintptr_t)sge[i].addr, sge[i].length,
			     8, at);
		at += sge[i].length;
	}

	rc_prepare_dst(&self->dst, 64, len, 8);
	if (send || imm) {
		rsge = rc_sge(&self->dst, 64, len + 64);
		ASSERT_EQ(0, rc_post_recv(p->s[1].qp, 2, &rsge,
					  send ? 1 : 0));
	}
	ASSERT_EQ(0, rc_post_imm(p->s[0].qp, 1, op,
				 IBV_SEND_SIGNALED | IBV_SEND_INLINE,
				 sge, variant->nsge,
				 (uintptr_t)self->dst.mem + 64,
				 self->dst.mr->rkey, IMM));
	/* The post copied the data: what is in the buffer now is not sent. */
	for (k = 0; k < self->max_inline + 64; k++)
		self->src[k] ^= 0xff;

	RC_WAIT_WC(p->s[0].scq, 1, IBV_WC_SUCCESS,
		   send ? IBV_WC_SEND : IBV_WC_RDMA_WRITE);
	if (send || imm) {
		rc_wait_wc(_metadata, p->s[1].rcq, &wc);
		RC_EXPECT_WC(wc, 2, IBV_WC_SUCCESS,
			     send ? IBV_WC_RECV : IBV_WC_RECV_RDMA_WITH_IMM);
		EXPECT_EQ(len, wc.byte_len);
		if (imm)
			EXPECT_EQ(htobe32(IMM), wc.imm_data);
	}
	RC_EXPECT_DELIVERED(&self->dst, 64, len, 8);
}

TEST_HARNESS_MAIN
