// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Memory windows (Documentation/hw/qhca-objects.rst, "Memory windows"):
 * type 1 windows bound with ibv_bind_mw() and type 2 windows bound
 * through the SQ, RDMA through a window checked byte for byte, the bounds
 * and access a window gives, the bind rules, and invalidation, local and
 * remote (SEND_WITH_INV).
 *
 * QP 1 owns the windows (it binds them on its own SQ) and QP 0 reaches
 * them, as a server would hand its peer an rkey.
 */
#include "rc_pair.h"

#define BUF		(4 * 4096)
#define WIN_OFF		4096		/* the window's start in the MR */
#define WIN_LEN		(2 * 4096)
#define LEN		512

FIXTURE(mw)
{
	struct rc_pair p;
	struct rc_buf local;		/* QP 0's memory */
	struct rc_buf remote;		/* QP 1's memory, windows go here */
	struct ibv_mw *mw;
	struct ibv_pd *pd2;
	bool caps_ok;
};

FIXTURE_SETUP(mw)
{
	struct rc_opts o;

	rc_default_opts(&o);
	rc_pair_open(_metadata, &self->p, &o);
	/* The device announces windows: the rest of the test relies on it. */
	ASSERT_NE(0U, self->p.dattr.device_cap_flags & IBV_DEVICE_MEM_WINDOW);
	ASSERT_NE(0U, self->p.dattr.device_cap_flags &
		     IBV_DEVICE_MEM_WINDOW_TYPE_2B);
	ASSERT_LT(0, self->p.dattr.max_mw);
	rc_pair_connect(_metadata, &self->p);
	rc_buf_alloc(_metadata, &self->local, self->p.pd, BUF, RC_ACCESS_ALL);
	rc_buf_alloc(_metadata, &self->remote, self->p.pd, BUF,
		     RC_ACCESS_ALL | IBV_ACCESS_MW_BIND);
}

FIXTURE_TEARDOWN(mw)
{
	if (self->mw)
		EXPECT_EQ(0, ibv_dealloc_mw(self->mw));
	rc_buf_free(_metadata, &self->local);
	rc_buf_free(_metadata, &self->remote);
	if (self->pd2)
		EXPECT_EQ(0, ibv_dealloc_pd(self->pd2));
	rc_pair_close(_metadata, &self->p);
}

static uint64_t win_addr(struct rc_buf *b)
{
	return (uintptr_t)(b->mem + WIN_OFF);
}

/* ibv_bind_mw() of a type 1 window on QP 1; returns its status. */
static int bind1(struct __test_metadata *_metadata, FIXTURE_DATA(mw) *self,
		 struct ibv_mr *mr, uint64_t addr, uint64_t len, int access)
{
	struct ibv_mw_bind bind = {
		.wr_id = 0xb1,
		.send_flags = IBV_SEND_SIGNALED,
		.bind_info = {
			.mr = mr,
			.addr = addr,
			.length = len,
			.mw_access_flags = access,
		},
	};
	struct ibv_wc wc;

	if (ibv_bind_mw(self->p.s[1].qp, self->mw, &bind))
		return -1;
	rc_wait_wc(_metadata, self->p.s[1].scq, &wc);
	EXPECT_EQ(0xb1U, wc.wr_id);
	if (wc.status == IBV_WC_SUCCESS)
		EXPECT_EQ((int)IBV_WC_BIND_MW, (int)wc.opcode);
	return wc.status;
}

/* IBV_WR_BIND_MW of a type 2 window with key @rkey through @qp. */
static int bind2(struct __test_metadata *_metadata, struct ibv_qp *qp,
		 struct ibv_cq *cq, struct ibv_mw *mw, uint32_t rkey,
		 struct ibv_mr *mr, uint64_t addr, uint64_t len, int access)
{
	struct ibv_send_wr wr = {
		.wr_id = 0xb2,
		.opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc;

	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info.mr = mr;
	wr.bind_mw.bind_info.addr = addr;
	wr.bind_mw.bind_info.length = len;
	wr.bind_mw.bind_info.mw_access_flags = access;
	if (ibv_post_send(qp, &wr, &bad))
		return -1;
	rc_wait_wc(_metadata, cq, &wc);
	EXPECT_EQ(0xb2U, wc.wr_id);
	if (wc.status == IBV_WC_SUCCESS)
		EXPECT_EQ((int)IBV_WC_BIND_MW, (int)wc.opcode);
	return wc.status;
}

/* QP 0 writes LEN bytes of @seed at @addr through @rkey; the status. */
static int write_through(struct __test_metadata *_metadata,
			 FIXTURE_DATA(mw) *self, uint64_t addr, uint32_t rkey,
			 uint32_t seed, uint32_t len)
{
	struct ibv_sge sge = rc_sge(&self->local, 0, len);
	struct ibv_wc wc;

	rc_fill(self->local.mem, len, seed);
	EXPECT_EQ(0, rc_post(self->p.s[0].qp, 0x31, IBV_WR_RDMA_WRITE,
			     IBV_SEND_SIGNALED, &sge, 1, addr, rkey));
	rc_wait_wc(_metadata, self->p.s[0].scq, &wc);
	EXPECT_EQ(0x31U, wc.wr_id);
	return wc.status;
}

/*
 * QP 0 writes len bytes of seed at offset off of QP 1's memory through
 * rkey: the WRITE completes with status st, and the bytes are there (on
 * success) or the memory is untouched.
 */
static void expect_write(struct __test_metadata *_metadata,
			 FIXTURE_DATA(mw) *self, size_t off, uint32_t rkey,
			 uint32_t seed, uint32_t len, enum ibv_wc_status st)
{
	rc_prepare_dst(&self->remote, off, len, seed);
	if (st == IBV_WC_SUCCESS) {
		ASSERT_EQ(IBV_WC_SUCCESS,
			  write_through(_metadata, self,
					(uintptr_t)self->remote.mem + off,
					rkey, seed, len));
		RC_EXPECT_DELIVERED(&self->remote, off, len, seed);
	} else {
		EXPECT_EQ((int)st,
			  write_through(_metadata, self,
					(uintptr_t)self->remote.mem + off,
					rkey, seed, len));
		RC_EXPECT_UNTOUCHED(&self->remote, off, len, seed);
	}
}

/*
 * self->mw, a new type 1 window bound with ibv_bind_mw() over the first
 * len bytes of QP 1's window with access: how most tests start.
 */
static void bound_window1(struct __test_metadata *_metadata,
			  FIXTURE_DATA(mw) *self, uint64_t len, int access)
{
	self->mw = ibv_alloc_mw(self->p.pd, IBV_MW_TYPE_1);
	ASSERT_NE(NULL, self->mw) TH_LOG("ibv_alloc_mw: %s", strerror(errno));
	ASSERT_EQ(IBV_WC_SUCCESS,
		  bind1(_metadata, self, self->remote.mr,
			win_addr(&self->remote), len, access));
}

/*
 * self->mw, a new type 2 window bound through QP 1's SQ, with the next
 * key, over the first len bytes of QP 1's window with access; returns
 * that key.
 */
static uint32_t bound_window2(struct __test_metadata *_metadata,
			      FIXTURE_DATA(mw) *self, uint64_t len,
			      int access)
{
	uint32_t rkey;

	self->mw = ibv_alloc_mw(self->p.pd, IBV_MW_TYPE_2);
	ASSERT_NE(NULL, self->mw) TH_LOG("ibv_alloc_mw: %s", strerror(errno));
	rkey = ibv_inc_rkey(self->mw->rkey);
	ASSERT_EQ(IBV_WC_SUCCESS,
		  bind2(_metadata, self->p.s[1].qp, self->p.s[1].scq, self->mw,
			rkey, self->remote.mr, win_addr(&self->remote), len,
			access));
	return rkey;
}

/* Type 1: bind, then RDMA WRITE and READ through the window. */
TEST_F(mw, type1_write_read)
{
	struct ibv_sge sge = rc_sge(&self->local, 2048, LEN);
	uint32_t old;

	self->mw = ibv_alloc_mw(self->p.pd, IBV_MW_TYPE_1);
	ASSERT_NE(NULL, self->mw) TH_LOG("ibv_alloc_mw: %s", strerror(errno));
	old = self->mw->rkey;
	ASSERT_EQ(IBV_WC_SUCCESS,
		  bind1(_metadata, self, self->remote.mr, win_addr(&self->remote),
			WIN_LEN, IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ));
	/* A bind gives the window a new key, of the same index. */
	EXPECT_NE(old, self->mw->rkey);
	EXPECT_EQ(old >> 8, self->mw->rkey >> 8);

	/* The last LEN bytes of the window, at a page-crossing offset. */
	expect_write(_metadata, self, WIN_OFF + WIN_LEN - LEN, self->mw->rkey,
		     7, LEN, IBV_WC_SUCCESS);

	/* And back, into other local memory. */
	rc_poison(self->local.mem + 2048, LEN, 7);
	ASSERT_EQ(0, rc_post(self->p.s[0].qp, 0x32, IBV_WR_RDMA_READ,
			     IBV_SEND_SIGNALED, &sge, 1,
			     win_addr(&self->remote) + WIN_LEN - LEN,
			     self->mw->rkey));
	RC_WAIT_WC(self->p.s[0].scq, 0x32, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	RC_EXPECT_PATTERN(self->local.mem + 2048, LEN, 7);
}

/* One byte past the window is outside it, though inside the MR. */
TEST_F(mw, outside_window)
{
	bound_window1(_metadata, self, WIN_LEN, IBV_ACCESS_REMOTE_WRITE);
	expect_write(_metadata, self, WIN_OFF + WIN_LEN - LEN + 1,
		     self->mw->rkey, 9, LEN, IBV_WC_REM_ACCESS_ERR);
}

/* A window that allows only reads refuses a write. */
TEST_F(mw, access_of_window)
{
	bound_window1(_metadata, self, WIN_LEN, IBV_ACCESS_REMOTE_READ);
	expect_write(_metadata, self, WIN_OFF, self->mw->rkey, 11, LEN,
		     IBV_WC_REM_ACCESS_ERR);
}

/* An MR registered without MW_BIND takes no window. */
TEST_F(mw, bind_needs_mw_bind_access)
{
	struct rc_buf b = {};

	rc_buf_alloc(_metadata, &b, self->p.pd, BUF, RC_ACCESS_ALL);
	self->mw = ibv_alloc_mw(self->p.pd, IBV_MW_TYPE_1);
	ASSERT_NE(NULL, self->mw);
	EXPECT_EQ(IBV_WC_MW_BIND_ERR,
		  bind1(_metadata, self, b.mr, (uintptr_t)b.mem, LEN,
			IBV_ACCESS_REMOTE_READ));
	EXPECT_EQ(IBV_QPS_ERR, rc_qp_state(self->p.s[1].qp));
	rc_buf_free(_metadata, &b);
}

/* Remote write through a window needs local write on its MR. */
TEST_F(mw, bind_access_beyond_mr)
{
	struct rc_buf b = {};

	rc_buf_alloc(_metadata, &b, self->p.pd, BUF,
		     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_MW_BIND);
	self->mw = ibv_alloc_mw(self->p.pd, IBV_MW_TYPE_1);
	ASSERT_NE(NULL, self->mw);
	EXPECT_EQ(IBV_WC_MW_BIND_ERR,
		  bind1(_metadata, self, b.mr, (uintptr_t)b.mem, LEN,
			IBV_ACCESS_REMOTE_WRITE));
	rc_buf_free(_metadata, &b);
}

/* A window reaching past its MR is refused. */
TEST_F(mw, bind_outside_mr)
{
	self->mw = ibv_alloc_mw(self->p.pd, IBV_MW_TYPE_1);
	ASSERT_NE(NULL, self->mw);
	EXPECT_EQ(IBV_WC_MW_BIND_ERR,
		  bind1(_metadata, self, self->remote.mr,
			win_addr(&self->remote), BUF - WIN_OFF + 1,
			IBV_ACCESS_REMOTE_READ));
}

/* Type 1 rebind: the old key fails, the new range works. */
TEST_F(mw, type1_rebind)
{
	uint32_t first;

	bound_window1(_metadata, self, LEN, IBV_ACCESS_REMOTE_WRITE);
	first = self->mw->rkey;
	ASSERT_EQ(IBV_WC_SUCCESS,
		  bind1(_metadata, self, self->remote.mr,
			(uintptr_t)self->remote.mem, LEN,
			IBV_ACCESS_REMOTE_WRITE));
	EXPECT_NE(first, self->mw->rkey);
	expect_write(_metadata, self, 0, self->mw->rkey, 13, LEN,
		     IBV_WC_SUCCESS);
	/* The first key is gone with the first binding. */
	expect_write(_metadata, self, 0, first, 14, LEN,
		     IBV_WC_REM_ACCESS_ERR);
}

/* A zero-length window: nothing reaches it, not even its start. */
TEST_F(mw, zero_length)
{
	self->mw = ibv_alloc_mw(self->p.pd, IBV_MW_TYPE_1);
	ASSERT_NE(NULL, self->mw);
	ASSERT_EQ(IBV_WC_SUCCESS,
		  bind1(_metadata, self, NULL, 0, 0, 0));
	expect_write(_metadata, self, WIN_OFF, self->mw->rkey, 15, 1,
		     IBV_WC_REM_ACCESS_ERR);
}

/* A type 1 window cannot be invalidated locally. */
TEST_F(mw, type1_no_local_inv)
{
	struct ibv_send_wr wr = {
		.wr_id = 0x1e,
		.opcode = IBV_WR_LOCAL_INV,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	bound_window1(_metadata, self, LEN, IBV_ACCESS_REMOTE_WRITE);
	wr.invalidate_rkey = self->mw->rkey;
	ASSERT_EQ(0, ibv_post_send(self->p.s[1].qp, &wr, &bad));
	RC_WAIT_WC(self->p.s[1].scq, 0x1e, IBV_WC_LOC_QP_OP_ERR, -1);
}

/* Nor remotely: the receive fails with REM_INV_REQ_ERR on both sides. */
TEST_F(mw, type1_no_send_with_inv)
{
	struct ibv_sge s0 = rc_sge(&self->local, 0, 64);
	struct ibv_sge s1 = rc_sge(&self->remote, 0, 64);
	struct ibv_send_wr wr = {
		.wr_id = 0x1f,
		.opcode = IBV_WR_SEND_WITH_INV,
		.send_flags = IBV_SEND_SIGNALED,
		.sg_list = &s0,
		.num_sge = 1,
	}, *bad;

	bound_window1(_metadata, self, LEN, IBV_ACCESS_REMOTE_WRITE);
	ASSERT_EQ(0, rc_post_recv(self->p.s[1].qp, 0x20, &s1, 1));
	wr.invalidate_rkey = self->mw->rkey;
	ASSERT_EQ(0, ibv_post_send(self->p.s[0].qp, &wr, &bad));
	RC_WAIT_WC(self->p.s[1].rcq, 0x20, IBV_WC_REM_INV_REQ_ERR, -1);
	RC_WAIT_WC(self->p.s[0].scq, 0x1f, IBV_WC_REM_INV_REQ_ERR, -1);
}

/* Type 2: bind through the SQ, then SEND_WITH_INV takes the key away. */
TEST_F(mw, type2_send_with_inv)
{
	struct ibv_sge s0 = rc_sge(&self->local, 0, 64);
	struct ibv_sge s1 = rc_sge(&self->remote, 0, 64);
	struct ibv_send_wr wr = {
		.wr_id = 0x21,
		.opcode = IBV_WR_SEND_WITH_INV,
		.send_flags = IBV_SEND_SIGNALED,
		.sg_list = &s0,
		.num_sge = 1,
	}, *bad;
	struct ibv_wc wc;
	uint32_t rkey;

	rkey = bound_window2(_metadata, self, WIN_LEN, IBV_ACCESS_REMOTE_WRITE);
	expect_write(_metadata, self, WIN_OFF, rkey, 17, LEN, IBV_WC_SUCCESS);

	ASSERT_EQ(0, rc_post_recv(self->p.s[1].qp, 0x22, &s1, 1));
	wr.invalidate_rkey = rkey;
	ASSERT_EQ(0, ibv_post_send(self->p.s[0].qp, &wr, &bad));
	RC_WAIT_WC(self->p.s[0].scq, 0x21, IBV_WC_SUCCESS, IBV_WC_SEND);
	rc_wait_wc(_metadata, self->p.s[1].rcq, &wc);
	RC_EXPECT_WC(wc, 0x22, IBV_WC_SUCCESS, IBV_WC_RECV);
	EXPECT_EQ((unsigned int)IBV_WC_WITH_INV, wc.wc_flags & (IBV_WC_WITH_INV |
						   IBV_WC_WITH_IMM));
	EXPECT_EQ(rkey, wc.invalidated_rkey);
	EXPECT_EQ(64U, wc.byte_len);

	/* The key is dead now. */
	expect_write(_metadata, self, WIN_OFF, rkey, 18, LEN,
		     IBV_WC_REM_ACCESS_ERR);
}

/* Type 2: LOCAL_INV, then a bind again with the next key. */
TEST_F(mw, type2_local_inv_rebind)
{
	struct ibv_send_wr wr = {
		.wr_id = 0x23,
		.opcode = IBV_WR_LOCAL_INV,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	uint32_t rkey, rkey2;

	rkey = bound_window2(_metadata, self, WIN_LEN, IBV_ACCESS_REMOTE_WRITE);
	wr.invalidate_rkey = rkey;
	ASSERT_EQ(0, ibv_post_send(self->p.s[1].qp, &wr, &bad));
	RC_WAIT_WC(self->p.s[1].scq, 0x23, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV);

	rkey2 = ibv_inc_rkey(rkey);
	ASSERT_EQ(IBV_WC_SUCCESS,
		  bind2(_metadata, self->p.s[1].qp, self->p.s[1].scq, self->mw,
			rkey2, self->remote.mr, win_addr(&self->remote),
			WIN_LEN, IBV_ACCESS_REMOTE_WRITE));
	expect_write(_metadata, self, WIN_OFF, rkey2, 19, LEN, IBV_WC_SUCCESS);
	expect_write(_metadata, self, WIN_OFF, rkey, 20, LEN,
		     IBV_WC_REM_ACCESS_ERR);
}

/* A bound type 2 window cannot be bound again before invalidation. */
TEST_F(mw, type2_bound_twice)
{
	uint32_t rkey;

	rkey = bound_window2(_metadata, self, LEN, IBV_ACCESS_REMOTE_WRITE);
	EXPECT_EQ(IBV_WC_MW_BIND_ERR,
		  bind2(_metadata, self->p.s[1].qp, self->p.s[1].scq, self->mw,
			ibv_inc_rkey(rkey), self->remote.mr,
			win_addr(&self->remote), LEN,
			IBV_ACCESS_REMOTE_WRITE));
}

/* Type 2 windows are bound through the SQ; ibv_bind_mw() is type 1's. */
TEST_F(mw, type2_not_by_ibv_bind_mw)
{
	struct ibv_mw_bind bind = {
		.send_flags = IBV_SEND_SIGNALED,
		.bind_info = {
			.mr = self->remote.mr,
			.addr = win_addr(&self->remote),
			.length = LEN,
			.mw_access_flags = IBV_ACCESS_REMOTE_WRITE,
		},
	};

	self->mw = ibv_alloc_mw(self->p.pd, IBV_MW_TYPE_2);
	ASSERT_NE(NULL, self->mw);
	EXPECT_EQ(EINVAL, ibv_bind_mw(self->p.s[1].qp, self->mw, &bind));
	rc_expect_no_wc(_metadata, self->p.s[1].scq);
}

/* A type 2 window of another PD is not bound through this QP. */
TEST_F(mw, type2_other_pd)
{
	self->pd2 = ibv_alloc_pd(self->p.ctx);
	ASSERT_NE(NULL, self->pd2);
	self->mw = ibv_alloc_mw(self->pd2, IBV_MW_TYPE_2);
	ASSERT_NE(NULL, self->mw);
	EXPECT_EQ(IBV_WC_MW_BIND_ERR,
		  bind2(_metadata, self->p.s[1].qp, self->p.s[1].scq, self->mw,
			ibv_inc_rkey(self->mw->rkey), self->remote.mr,
			win_addr(&self->remote), LEN,
			IBV_ACCESS_REMOTE_WRITE));
}

/* The ibv_wr_* API: ibv_wr_bind_mw() and ibv_wr_local_inv(). */
TEST_F(mw, type2_wr_api)
{
	struct ibv_qp_init_attr_ex ax = {
		.send_cq = self->p.s[1].scq,
		.recv_cq = self->p.s[1].rcq,
		.qp_type = IBV_QPT_RC,
		.cap = {
			.max_send_wr = 64,
			.max_recv_wr = 64,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = self->p.pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND |
				  IBV_QP_EX_WITH_BIND_MW |
				  IBV_QP_EX_WITH_LOCAL_INV |
				  IBV_QP_EX_WITH_SEND_WITH_INV,
	};
	struct ibv_mw_bind_info info = {
		.mr = self->remote.mr,
		.addr = win_addr(&self->remote),
		.length = WIN_LEN,
		.mw_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	struct ibv_qp_ex *qpx;
	uint32_t rkey;

	/* QP 1 again, as an extended QP, and the pair reconnected. */
	ASSERT_EQ(0, ibv_destroy_qp(self->p.s[1].qp));
	self->p.s[1].qp = ibv_create_qp_ex(self->p.ctx, &ax);
	ASSERT_NE(NULL, self->p.s[1].qp) TH_LOG("ibv_create_qp_ex: %s",
						strerror(errno));
	ASSERT_EQ(0, rc_to_state(self->p.s[0].qp, IBV_QPS_RESET));
	rc_pair_connect(_metadata, &self->p);
	qpx = ibv_qp_to_qp_ex(self->p.s[1].qp);
	ASSERT_NE(NULL, qpx);

	self->mw = ibv_alloc_mw(self->p.pd, IBV_MW_TYPE_2);
	ASSERT_NE(NULL, self->mw);
	rkey = ibv_inc_rkey(self->mw->rkey);
	ibv_wr_start(qpx);
	qpx->wr_id = 0xb3;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(qpx, self->mw, rkey, &info);
	ASSERT_EQ(0, ibv_wr_complete(qpx));
	RC_WAIT_WC(self->p.s[1].scq, 0xb3, IBV_WC_SUCCESS, IBV_WC_BIND_MW);

	expect_write(_metadata, self, WIN_OFF + 100, rkey, 21, LEN,
		     IBV_WC_SUCCESS);

	ibv_wr_start(qpx);
	qpx->wr_id = 0xb4;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_local_inv(qpx, rkey);
	ASSERT_EQ(0, ibv_wr_complete(qpx));
	RC_WAIT_WC(self->p.s[1].scq, 0xb4, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV);
	expect_write(_metadata, self, WIN_OFF + 100, rkey, 22, LEN,
		     IBV_WC_REM_ACCESS_ERR);
}

/* An MR with a window bound stays until the window is gone. */
TEST_F(mw, dereg_mr_with_window)
{
	bound_window1(_metadata, self, LEN, IBV_ACCESS_REMOTE_WRITE);
	EXPECT_EQ(EBUSY, ibv_dereg_mr(self->remote.mr));
	EXPECT_EQ(0, ibv_dealloc_mw(self->mw));
	self->mw = NULL;
	/* rc_buf_free() deregisters it now. */
}

TEST_HARNESS_MAIN
