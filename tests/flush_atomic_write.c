// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The memory placement operations of IBA 1.5 between two connected RC
 * QPs of qhca0: ATOMIC_WRITE, through ibv_post_send() (its 8 bytes from an
 * SGE or inline) and ibv_wr_atomic_write(), each checked by the 8 bytes
 * that land and the bytes around them that must not change; FLUSH
 * (ibv_wr_flush() only: an ibv_send_wr has no field for its placement
 * type), of a range and of a whole MR, after RDMA WRITEs that were not
 * signaled: its completion says they are all in place.  Then what each
 * completes with when it cannot run: a FLUSH to an MR without the FLUSH
 * access, of a type the MR does not grant, to a QP that does not allow
 * it; an ATOMIC_WRITE misaligned, without remote write on the MR or the
 * QP, of other than 8 bytes.  And the capabilities that go with them:
 * FLUSH_GLOBAL and ATOMIC_WRITE advertised, FLUSH_PERSISTENT not (guest
 * RAM has no persistence domain), an MR asking for it refused.
 */
#include "rc_pair.h"

#include <rdma/ib_user_verbs.h>

#define FLUSH_QP_ACCESS	(RC_QP_ACCESS_ALL | IBV_ACCESS_FLUSH_GLOBAL | \
			 IBV_ACCESS_FLUSH_PERSISTENT)
#define SEND_OPS	(IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_SEND | \
			 IBV_QP_EX_WITH_FLUSH | IBV_QP_EX_WITH_ATOMIC_WRITE)
#define BUF_SIZE	(256 * 1024)
#define POISON		0x5a

FIXTURE(place)
{
	struct rc_pair p;
	struct ibv_qp_ex *qpx[2];
	struct rc_buf buf[2];	/* QP 0's memory; QP 1's, with FLUSH_GLOBAL */
};

/*
 * The pair, its QPs made again as extended QPs that may post FLUSH and
 * ATOMIC_WRITE too, both allowing FLUSHes of both types; not connected:
 * each test says what QP 1 allows.
 */
FIXTURE_SETUP(place)
{
	struct rc_opts o;
	int i;

	rc_default_opts(&o);
	o.max_inline_data = 64;
	o.access[0] = FLUSH_QP_ACCESS;
	o.access[1] = FLUSH_QP_ACCESS;
	rc_pair_open(_metadata, &self->p, &o);
	for (i = 0; i < 2; i++) {
		struct rc_side *s = &self->p.s[i];
		struct ibv_qp_init_attr_ex attr = {
			.send_cq = s->scq,
			.recv_cq = s->rcq,
			.qp_type = IBV_QPT_RC,
			.cap = {
				.max_send_wr = o.max_send_wr,
				.max_recv_wr = o.max_recv_wr,
				.max_send_sge = 1,
				.max_recv_sge = 1,
				.max_inline_data = o.max_inline_data,
			},
			.comp_mask = IBV_QP_INIT_ATTR_PD |
				     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
			.pd = self->p.pd,
			.send_ops_flags = SEND_OPS,
		};

		ASSERT_EQ(0, ibv_destroy_qp(s->qp));
		s->qp = ibv_create_qp_ex(self->p.ctx, &attr);
		ASSERT_NE(NULL, s->qp) TH_LOG("ibv_create_qp_ex with FLUSH and "
					      "ATOMIC_WRITE: %s",
					      strerror(errno));
		self->qpx[i] = ibv_qp_to_qp_ex(s->qp);
		ASSERT_NE(NULL, self->qpx[i]);
		ASSERT_NE(NULL, self->qpx[i]->wr_flush);
		ASSERT_NE(NULL, self->qpx[i]->wr_atomic_write);
	}
	rc_buf_alloc(_metadata, &self->buf[0], self->p.pd, BUF_SIZE,
		     RC_ACCESS_ALL);
	rc_buf_alloc(_metadata, &self->buf[1], self->p.pd, BUF_SIZE,
		     RC_ACCESS_ALL | IBV_ACCESS_FLUSH_GLOBAL);
	memset(self->buf[1].mem, POISON, BUF_SIZE);
}

FIXTURE_TEARDOWN(place)
{
	rc_buf_free(_metadata, &self->buf[0]);
	rc_buf_free(_metadata, &self->buf[1]);
	rc_pair_close(_metadata, &self->p);
}

/* Bytes [off, off + len) of b hold POISON. */
static long poison_mismatch(const struct rc_buf *b, size_t off, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (b->mem[off + i] != POISON)
			return (long)(off + i);
	return -1;
}

/* QP 1's memory is POISON except 8 bytes at off, which are want's. */
#define EXPECT_ONLY_8(b, off, want) do {				\
	EXPECT_EQ(0, memcmp((b)->mem + (off), (want), 8))		\
		TH_LOG("the 8 bytes at %zu did not land", (size_t)(off)); \
	EXPECT_EQ(-1, poison_mismatch((b), 0, (off)));			\
	EXPECT_EQ(-1, poison_mismatch((b), (off) + 8,			\
				      BUF_SIZE - (off) - 8));		\
} while (0)

/* Both QPs to RTS; QP 1, the responder, allows access1. */
static void connect_pair(struct __test_metadata *_metadata,
			 FIXTURE_DATA(place) *self, int access1)
{
	self->p.opts.access[1] = access1;
	rc_pair_connect(_metadata, &self->p);
}

static void wr_atomic_write(struct ibv_qp_ex *q, uint64_t wr_id,
			    uint32_t rkey, uint64_t addr, const void *data)
{
	q->wr_id = wr_id;
	q->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(q, rkey, addr, data);
}

static void wr_flush(struct ibv_qp_ex *q, uint64_t wr_id, uint32_t rkey,
		     uint64_t addr, size_t len, uint8_t type, uint8_t level)
{
	q->wr_id = wr_id;
	q->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_flush(q, rkey, addr, len, type, level);
}

/* What the device offers, and an MR or QP asking for what it does not. */
TEST_F(place, capabilities)
{
	struct ibv_device_attr_ex attr;
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr qattr;
	struct ibv_mr *mr;

	ASSERT_EQ(0, ibv_query_device_ex(self->p.ctx, NULL, &attr));
	EXPECT_TRUE(!!(attr.device_cap_flags_ex &
		       IB_UVERBS_DEVICE_FLUSH_GLOBAL));
	EXPECT_TRUE(!!(attr.device_cap_flags_ex &
		       IB_UVERBS_DEVICE_ATOMIC_WRITE));
	EXPECT_FALSE(!!(attr.device_cap_flags_ex &
			IB_UVERBS_DEVICE_FLUSH_PERSISTENT));

	/* No MR is persistent in guest RAM: the core refuses it. */
	errno = 0;
	mr = ibv_reg_mr(self->p.pd, self->buf[0].mem, 4096,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_FLUSH_PERSISTENT);
	EXPECT_EQ(NULL, mr);
	EXPECT_EQ(EOPNOTSUPP, errno);
	if (mr)
		ibv_dereg_mr(mr);

	/* A QP may allow both types, and says so. */
	connect_pair(_metadata, self, FLUSH_QP_ACCESS);
	ASSERT_EQ(0, ibv_query_qp(self->p.s[1].qp, &qattr,
				  IBV_QP_ACCESS_FLAGS, &init));
	EXPECT_EQ((unsigned int)FLUSH_QP_ACCESS, qattr.qp_access_flags);
	/* FLUSH has no ibv_send_wr form. */
	EXPECT_EQ(EINVAL, rc_post(self->p.s[0].qp, 1, IBV_WR_FLUSH,
				  IBV_SEND_SIGNALED, NULL, 0,
				  (uintptr_t)self->buf[1].mem,
				  self->buf[1].mr->rkey));
}

/*
 * ATOMIC_WRITE through ibv_post_send(): 8 bytes from an SGE, then 8
 * inline, at aligned addresses on both sides of a page boundary; only
 * those bytes change.
 */
TEST_F(place, atomic_write_post_send)
{
	struct rc_buf *src = &self->buf[0], *dst = &self->buf[1];
	uint8_t want[2][8];
	struct ibv_sge sge;
	struct ibv_wc wc;
	int i;

	connect_pair(_metadata, self, FLUSH_QP_ACCESS);
	rc_fill(src->mem + 100, 8, 7);
	memcpy(want[0], src->mem + 100, 8);
	sge = rc_sge(src, 100, 8);
	ASSERT_EQ(0, rc_post(self->p.s[0].qp, 0x10, IBV_WR_ATOMIC_WRITE,
			     IBV_SEND_SIGNALED, &sge, 1,
			     (uintptr_t)dst->mem + 4088, dst->mr->rkey));
	rc_wait_wc(_metadata, self->p.s[0].scq, &wc);
	RC_EXPECT_WC(wc, 0x10, IBV_WC_SUCCESS, IBV_WC_ATOMIC_WRITE);
	EXPECT_ONLY_8(dst, 4088, want[0]);

	/* Inline: the SGE's bytes are copied at post; change them after. */
	rc_fill(src->mem + 200, 8, 8);
	memcpy(want[1], src->mem + 200, 8);
	sge = rc_sge(src, 200, 8);
	ASSERT_EQ(0, rc_post(self->p.s[0].qp, 0x11, IBV_WR_ATOMIC_WRITE,
			     IBV_SEND_SIGNALED | IBV_SEND_INLINE, &sge, 1,
			     (uintptr_t)dst->mem + 4096, dst->mr->rkey));
	memset(src->mem + 200, 0, 8);
	rc_wait_wc(_metadata, self->p.s[0].scq, &wc);
	RC_EXPECT_WC(wc, 0x11, IBV_WC_SUCCESS, IBV_WC_ATOMIC_WRITE);
	EXPECT_EQ(0, memcmp(dst->mem + 4096, want[1], 8));
	EXPECT_EQ(0, memcmp(dst->mem + 4088, want[0], 8));
	EXPECT_EQ(-1, poison_mismatch(dst, 0, 4088));
	EXPECT_EQ(-1, poison_mismatch(dst, 4104, BUF_SIZE - 4104));

	/* The same 8 bytes again and again: the last one stays. */
	for (i = 0; i < 16; i++) {
		src->mem[300] = (uint8_t)i;
		sge = rc_sge(src, 300, 8);
		ASSERT_EQ(0, rc_post(self->p.s[0].qp, 0x20 + i,
				     IBV_WR_ATOMIC_WRITE,
				     i == 15 ? IBV_SEND_SIGNALED |
					       IBV_SEND_INLINE :
					       IBV_SEND_INLINE, &sge, 1,
				     (uintptr_t)dst->mem + 8192,
				     dst->mr->rkey));
	}
	RC_WAIT_WC(self->p.s[0].scq, 0x2f, IBV_WC_SUCCESS,
		   IBV_WC_ATOMIC_WRITE);
	EXPECT_EQ(15, dst->mem[8192]);
	rc_expect_no_wc(_metadata, self->p.s[1].rcq);
}

/* ATOMIC_WRITE through ibv_wr_atomic_write(), several in one batch. */
TEST_F(place, atomic_write_wr)
{
	struct ibv_qp_ex *q = self->qpx[0];
	struct rc_buf *dst = &self->buf[1];
	uint64_t v[3] = {
		0x0123456789abcdefULL, 0xfedcba9876543210ULL, 0,
	};
	struct ibv_wc wc;
	int i;

	connect_pair(_metadata, self, FLUSH_QP_ACCESS);
	ibv_wr_start(q);
	for (i = 0; i < 3; i++)
		wr_atomic_write(q, 0x30 + i, dst->mr->rkey,
				(uintptr_t)dst->mem + 65536 + 8 * i, &v[i]);
	/* The value is copied when the WR is built. */
	v[0] = 0;
	ASSERT_EQ(0, ibv_wr_complete(q));
	for (i = 0; i < 3; i++) {
		rc_wait_wc(_metadata, self->p.s[0].scq, &wc);
		RC_EXPECT_WC(wc, 0x30 + i, IBV_WC_SUCCESS,
			     IBV_WC_ATOMIC_WRITE);
	}
	v[0] = 0x0123456789abcdefULL;
	EXPECT_EQ(0, memcmp(dst->mem + 65536, v, sizeof(v)));
	EXPECT_EQ(-1, poison_mismatch(dst, 0, 65536));
	EXPECT_EQ(-1, poison_mismatch(dst, 65536 + sizeof(v),
				      BUF_SIZE - 65536 - sizeof(v)));
}

/*
 * RDMA WRITEs that are not signaled, then a FLUSH of their range: once
 * the FLUSH completes, every byte of them is in place.  Then a FLUSH of
 * the whole MR, whose address and length mean nothing, and one of no
 * bytes.
 */
TEST_F(place, flush_after_writes)
{
	struct rc_buf *src = &self->buf[0], *dst = &self->buf[1];
	struct ibv_qp_ex *q = self->qpx[0];
	const size_t chunk = 60000;
	struct ibv_sge sge;
	struct ibv_wc wc;
	int i;

	connect_pair(_metadata, self, FLUSH_QP_ACCESS);
	rc_fill(src->mem, 4 * chunk, 9);
	for (i = 0; i < 4; i++) {
		sge = rc_sge(src, i * chunk, chunk);
		ASSERT_EQ(0, rc_post(self->p.s[0].qp, 0x40 + i,
				     IBV_WR_RDMA_WRITE, 0, &sge, 1,
				     (uintptr_t)dst->mem + 3 + i * chunk,
				     dst->mr->rkey));
	}
	ibv_wr_start(q);
	wr_flush(q, 0x50, dst->mr->rkey, (uintptr_t)dst->mem + 3, 4 * chunk,
		 IBV_FLUSH_GLOBAL, IBV_FLUSH_RANGE);
	ASSERT_EQ(0, ibv_wr_complete(q));
	rc_wait_wc(_metadata, self->p.s[0].scq, &wc);
	RC_EXPECT_WC(wc, 0x50, IBV_WC_SUCCESS, IBV_WC_FLUSH);
	RC_EXPECT_PATTERN(dst->mem + 3, 4 * chunk, 9);
	EXPECT_EQ(-1, poison_mismatch(dst, 0, 3));
	EXPECT_EQ(-1, poison_mismatch(dst, 3 + 4 * chunk,
				      BUF_SIZE - 3 - 4 * chunk));

	ibv_wr_start(q);
	wr_flush(q, 0x51, dst->mr->rkey, 0, 12345678, IBV_FLUSH_GLOBAL,
		 IBV_FLUSH_MR);
	wr_flush(q, 0x52, dst->mr->rkey, (uintptr_t)dst->mem + BUF_SIZE, 0,
		 IBV_FLUSH_GLOBAL, IBV_FLUSH_RANGE);
	ASSERT_EQ(0, ibv_wr_complete(q));
	RC_WAIT_WC(self->p.s[0].scq, 0x51, IBV_WC_SUCCESS, IBV_WC_FLUSH);
	RC_WAIT_WC(self->p.s[0].scq, 0x52, IBV_WC_SUCCESS, IBV_WC_FLUSH);
	rc_expect_no_wc(_metadata, self->p.s[1].rcq);
	EXPECT_EQ(IBV_QPS_RTS, rc_qp_state(self->p.s[1].qp));
}

/* A placement type or level libibverbs does not have: nothing is posted. */
TEST_F(place, flush_bad_arguments)
{
	struct ibv_qp_ex *q = self->qpx[0];
	struct rc_buf *dst = &self->buf[1];

	connect_pair(_metadata, self, FLUSH_QP_ACCESS);
	ibv_wr_start(q);
	wr_flush(q, 1, dst->mr->rkey, (uintptr_t)dst->mem, 8, 0,
		 IBV_FLUSH_RANGE);
	EXPECT_EQ(EINVAL, ibv_wr_complete(q));
	ibv_wr_start(q);
	wr_flush(q, 2, dst->mr->rkey, (uintptr_t)dst->mem, 8, 4,
		 IBV_FLUSH_RANGE);
	EXPECT_EQ(EINVAL, ibv_wr_complete(q));
	ibv_wr_start(q);
	wr_flush(q, 3, dst->mr->rkey, (uintptr_t)dst->mem, 8,
		 IBV_FLUSH_GLOBAL, 2);
	EXPECT_EQ(EINVAL, ibv_wr_complete(q));
	rc_expect_no_wc(_metadata, self->p.s[0].scq);
}

/*
 * One operation that the responder refuses: the requester's completion
 * says why, and the responder QP is in ERR.
 */
static void expect_refused(struct __test_metadata *_metadata,
			   FIXTURE_DATA(place) *self, uint64_t wr_id,
			   enum ibv_wc_status status)
{
	struct ibv_wc wc;

	rc_wait_wc(_metadata, self->p.s[0].scq, &wc);
	RC_EXPECT_WC(wc, wr_id, status, -1);
	EXPECT_EQ(IBV_QPS_ERR, rc_qp_state(self->p.s[0].qp));
	EXPECT_EQ(IBV_QPS_ERR, rc_qp_state(self->p.s[1].qp));
	EXPECT_EQ(-1, poison_mismatch(&self->buf[1], 0, BUF_SIZE));
}

TEST_F(place, flush_mr_without_access)
{
	struct rc_buf *src = &self->buf[0];

	connect_pair(_metadata, self, FLUSH_QP_ACCESS);
	ibv_wr_start(self->qpx[0]);
	wr_flush(self->qpx[0], 0x60, src->mr->rkey, (uintptr_t)src->mem, 64,
		 IBV_FLUSH_GLOBAL, IBV_FLUSH_RANGE);
	ASSERT_EQ(0, ibv_wr_complete(self->qpx[0]));
	expect_refused(_metadata, self, 0x60, IBV_WC_REM_ACCESS_ERR);
}

TEST_F(place, flush_persistent_to_global_mr)
{
	struct rc_buf *dst = &self->buf[1];

	connect_pair(_metadata, self, FLUSH_QP_ACCESS);
	ibv_wr_start(self->qpx[0]);
	wr_flush(self->qpx[0], 0x61, dst->mr->rkey, 0, 0,
		 IBV_FLUSH_PERSISTENT, IBV_FLUSH_MR);
	ASSERT_EQ(0, ibv_wr_complete(self->qpx[0]));
	expect_refused(_metadata, self, 0x61, IBV_WC_REM_ACCESS_ERR);
}

TEST_F(place, flush_qp_without_access)
{
	struct rc_buf *dst = &self->buf[1];

	connect_pair(_metadata, self, RC_QP_ACCESS_ALL);
	ibv_wr_start(self->qpx[0]);
	wr_flush(self->qpx[0], 0x62, dst->mr->rkey, (uintptr_t)dst->mem, 64,
		 IBV_FLUSH_GLOBAL, IBV_FLUSH_RANGE);
	ASSERT_EQ(0, ibv_wr_complete(self->qpx[0]));
	expect_refused(_metadata, self, 0x62, IBV_WC_REM_ACCESS_ERR);
}

TEST_F(place, atomic_write_misaligned_post_send)
{
	struct rc_buf *src = &self->buf[0], *dst = &self->buf[1];
	struct ibv_sge sge = rc_sge(src, 0, 8);

	connect_pair(_metadata, self, FLUSH_QP_ACCESS);
	ASSERT_EQ(0, rc_post(self->p.s[0].qp, 0x70, IBV_WR_ATOMIC_WRITE,
			     IBV_SEND_SIGNALED, &sge, 1,
			     (uintptr_t)dst->mem + 4, dst->mr->rkey));
	expect_refused(_metadata, self, 0x70, IBV_WC_REM_INV_REQ_ERR);
}

TEST_F(place, atomic_write_misaligned_wr)
{
	struct rc_buf *dst = &self->buf[1];
	uint64_t v = 1;

	connect_pair(_metadata, self, FLUSH_QP_ACCESS);
	ibv_wr_start(self->qpx[0]);
	wr_atomic_write(self->qpx[0], 0x71, dst->mr->rkey,
			(uintptr_t)dst->mem + 12, &v);
	ASSERT_EQ(0, ibv_wr_complete(self->qpx[0]));
	expect_refused(_metadata, self, 0x71, IBV_WC_REM_INV_REQ_ERR);
}

/* An MR over the same memory that allows remote reads only. */
TEST_F(place, atomic_write_mr_without_write)
{
	struct rc_buf *dst = &self->buf[1];
	struct ibv_mr *ro;
	uint64_t v = 2;

	ro = ibv_reg_mr(self->p.pd, dst->mem, BUF_SIZE,
			IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(NULL, ro);
	connect_pair(_metadata, self, FLUSH_QP_ACCESS);
	ibv_wr_start(self->qpx[0]);
	wr_atomic_write(self->qpx[0], 0x72, ro->rkey, (uintptr_t)dst->mem,
			&v);
	ASSERT_EQ(0, ibv_wr_complete(self->qpx[0]));
	expect_refused(_metadata, self, 0x72, IBV_WC_REM_ACCESS_ERR);
	EXPECT_EQ(0, ibv_dereg_mr(ro));
}

TEST_F(place, atomic_write_qp_without_write)
{
	struct rc_buf *dst = &self->buf[1];
	uint64_t v = 3;

	connect_pair(_metadata, self, IBV_ACCESS_REMOTE_READ |
				      IBV_ACCESS_FLUSH_GLOBAL);
	ibv_wr_start(self->qpx[0]);
	wr_atomic_write(self->qpx[0], 0x73, dst->mr->rkey,
			(uintptr_t)dst->mem, &v);
	ASSERT_EQ(0, ibv_wr_complete(self->qpx[0]));
	expect_refused(_metadata, self, 0x73, IBV_WC_REM_ACCESS_ERR);
}

/* Not 8 bytes: the requester's own error, the responder never sees it. */
TEST_F(place, atomic_write_not_8_bytes)
{
	struct rc_buf *src = &self->buf[0], *dst = &self->buf[1];
	struct ibv_sge sge = rc_sge(src, 0, 4);
	struct ibv_wc wc;

	connect_pair(_metadata, self, FLUSH_QP_ACCESS);
	ASSERT_EQ(0, rc_post(self->p.s[0].qp, 0x74, IBV_WR_ATOMIC_WRITE,
			     IBV_SEND_SIGNALED, &sge, 1,
			     (uintptr_t)dst->mem, dst->mr->rkey));
	rc_wait_wc(_metadata, self->p.s[0].scq, &wc);
	RC_EXPECT_WC(wc, 0x74, IBV_WC_LOC_LEN_ERR, -1);
	EXPECT_EQ(IBV_QPS_RTS, rc_qp_state(self->p.s[1].qp));
	EXPECT_EQ(-1, poison_mismatch(dst, 0, BUF_SIZE));
}

TEST_HARNESS_MAIN
