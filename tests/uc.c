// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * UC queue pairs of qhca0 (Documentation/hw/qhca-transport.rst, "UC"):
 * two connected UC QPs of one device.  SEND and RDMA WRITE, with and
 * without immediate, move data checked byte for byte, segmented by path
 * MTUs; RDMA READ and atomics are not UC operations.  Nothing is
 * acknowledged: the sender completes when its message is out, and what
 * the receiver cannot take (no receive WQE, a bad rkey) is dropped
 * without a word to the sender and counted in rx_drops.
 */
#include "rc_pair.h"

#define IMM		0x0badcafeU
#define SEED		0xc0de

/* UC's transitions: what ib_modify_qp_is_ok() requires, nothing more. */
static int uc_connect(struct ibv_qp *qp, uint16_t dlid, uint32_t dest_qpn,
		      enum ibv_mtu mtu, uint32_t sq_psn, uint32_t rq_psn)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	int ret;

	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (ret)
		return ret;
	attr.qp_state = IBV_QPS_RTR;
	attr.path_mtu = mtu;
	attr.dest_qp_num = dest_qpn;
	attr.rq_psn = rq_psn;
	attr.ah_attr.dlid = dlid;
	attr.ah_attr.port_num = 1;
	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_AV |
			    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			    IBV_QP_RQ_PSN);
	if (ret)
		return ret;
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = sq_psn;
	return ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

FIXTURE(uc)
{
	struct rc_pair p;
	struct rc_buf buf[2];
};

FIXTURE_VARIANT(uc)
{
	enum ibv_mtu mtu;
	uint32_t rq_psn_skew;	/* the receiver expects another PSN */
};

FIXTURE_VARIANT_ADD(uc, mtu_4096)
{
	.mtu = IBV_MTU_4096,
};

FIXTURE_VARIANT_ADD(uc, mtu_256)
{
	.mtu = IBV_MTU_256,
};

/*
 * A UC responder takes a FIRST or ONLY packet at any PSN: a receiver
 * that expects another PSN still gets the messages.
 */
FIXTURE_VARIANT_ADD(uc, mtu_1024_psn_resync)
{
	.mtu = IBV_MTU_1024,
	.rq_psn_skew = 1000,
};

FIXTURE_SETUP(uc)
{
	uint16_t lid;
	struct rc_opts o;
	int i;

	rc_default_opts(&o);
	o.qp_type = IBV_QPT_UC;
	rc_pair_open(_metadata, &self->p, &o);
	lid = self->p.pattr.lid;
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, uc_connect(self->p.s[i].qp, lid,
					self->p.s[!i].qp->qp_num,
					variant->mtu, 100 * (i + 1),
					100 * (!i + 1) +
					variant->rq_psn_skew));
		rc_buf_alloc(_metadata, &self->buf[i], self->p.pd, 1 << 20,
			     RC_ACCESS_ALL);
	}
}

FIXTURE_TEARDOWN(uc)
{
	int i;

	for (i = 0; i < 2; i++)
		if (self->buf[i].mr)
			rc_buf_free(_metadata, &self->buf[i]);
	rc_pair_close(_metadata, &self->p);
}

static const uint32_t uc_sizes[] = { 0, 1, 255, 256, 4097, 3 * 4096 + 5,
				     65536 };

/* SEND and SEND_WITH_IMM, each size, the receive poisoned around it. */
TEST_F(uc, send)
{
	struct rc_buf *src = &self->buf[0], *dst = &self->buf[1];
	unsigned int i;

	for (i = 0; i < sizeof(uc_sizes) / sizeof(uc_sizes[0]); i++) {
		uint32_t len = uc_sizes[i];
		struct ibv_sge ssge = rc_sge(src, 3, len);
		struct ibv_sge rsge = rc_sge(dst, 64, len + 128);
		bool imm = i & 1;
		struct ibv_wc wc;

		rc_fill(src->mem + 3, len, SEED + i);
		rc_prepare_dst(dst, 64, len, SEED + i);
		ASSERT_EQ(0, rc_post_recv(self->p.s[1].qp, i, &rsge, 1));
		ASSERT_EQ(0, rc_post_imm(self->p.s[0].qp, 100 + i,
					 imm ? IBV_WR_SEND_WITH_IMM :
					       IBV_WR_SEND,
					 IBV_SEND_SIGNALED, &ssge, 1, 0, 0,
					 IMM));
		RC_WAIT_WC(self->p.s[0].scq, 100 + i, IBV_WC_SUCCESS,
			   IBV_WC_SEND);
		rc_wait_wc(_metadata, self->p.s[1].rcq, &wc);
		RC_EXPECT_WC(wc, i, IBV_WC_SUCCESS, IBV_WC_RECV);
		EXPECT_EQ(len, wc.byte_len);
		EXPECT_EQ(self->p.s[0].qp->qp_num, wc.src_qp);
		EXPECT_EQ(imm, !!(wc.wc_flags & IBV_WC_WITH_IMM));
		if (imm)
			EXPECT_EQ(IMM, be32toh(wc.imm_data));
		RC_EXPECT_DELIVERED(dst, 64, len, SEED + i);
	}
}

/* RDMA WRITE, and WRITE_WITH_IMM, which consumes a receive WQE. */
TEST_F(uc, rdma_write)
{
	struct rc_buf *src = &self->buf[0], *dst = &self->buf[1];
	unsigned int i;

	for (i = 0; i < sizeof(uc_sizes) / sizeof(uc_sizes[0]); i++) {
		uint32_t len = uc_sizes[i];
		struct ibv_sge ssge = rc_sge(src, 0, len);
		bool imm = i & 1;
		struct ibv_wc wc;

		rc_fill(src->mem, len, SEED + i);
		rc_prepare_dst(dst, 5, len, SEED + i);
		if (imm)
			ASSERT_EQ(0, rc_post_recv(self->p.s[1].qp, i, NULL, 0));
		ASSERT_EQ(0, rc_post_imm(self->p.s[0].qp, 100 + i,
					 imm ? IBV_WR_RDMA_WRITE_WITH_IMM :
					       IBV_WR_RDMA_WRITE,
					 IBV_SEND_SIGNALED, &ssge, 1,
					 (uintptr_t)dst->mem + 5,
					 dst->mr->rkey, IMM));
		RC_WAIT_WC(self->p.s[0].scq, 100 + i, IBV_WC_SUCCESS,
			   IBV_WC_RDMA_WRITE);
		if (imm) {
			rc_wait_wc(_metadata, self->p.s[1].rcq, &wc);
			RC_EXPECT_WC(wc, i, IBV_WC_SUCCESS,
				     IBV_WC_RECV_RDMA_WITH_IMM);
			EXPECT_EQ(len, wc.byte_len);
			EXPECT_EQ(IMM, be32toh(wc.imm_data));
		} else {
			/* Nothing tells the receiver: wait for the data. */
			long deadline = rc_now_ms() + RC_POLL_MS;

			while (rc_mismatch(dst->mem + 5, len, SEED + i,
					   false) >= 0 &&
			       rc_now_ms() < deadline)
				usleep(1000);
		}
		RC_EXPECT_DELIVERED(dst, 5, len, SEED + i);
	}
	rc_expect_no_wc(_metadata, self->p.s[1].rcq);
}

/* READ and atomics: LOC_QP_OP_ERR at the sender, nothing sent. */
TEST_F(uc, read_and_atomics_loc_qp_op_err)
{
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP,
		IBV_WR_ATOMIC_FETCH_AND_ADD,
	};
	struct rc_buf *src = &self->buf[0], *dst = &self->buf[1];
	unsigned int i;

	for (i = 0; i < 3; i++) {
		struct ibv_sge sge = rc_sge(src, 0, 8);

		if (i) {
			/* The QP went to ERR: start again. */
			ASSERT_EQ(0, rc_to_state(self->p.s[0].qp,
						 IBV_QPS_RESET));
			ASSERT_EQ(0, uc_connect(self->p.s[0].qp,
						self->p.pattr.lid,
						self->p.s[1].qp->qp_num,
						variant->mtu, 1, 1));
		}
		rc_prepare_dst(dst, 0, 8, SEED);
		if (i == 0) {
			ASSERT_EQ(0, rc_post(self->p.s[0].qp, i, ops[i],
					     IBV_SEND_SIGNALED, &sge, 1,
					     (uintptr_t)dst->mem,
					     dst->mr->rkey));
		} else {
			ASSERT_EQ(0, rc_post_atomic(self->p.s[0].qp, i, ops[i],
						    IBV_SEND_SIGNALED, &sge,
						    (uintptr_t)dst->mem,
						    dst->mr->rkey, 1, 2));
		}
		RC_WAIT_WC(self->p.s[0].scq, i, IBV_WC_LOC_QP_OP_ERR, -1);
		EXPECT_EQ(IBV_QPS_ERR, rc_qp_state(self->p.s[0].qp));
		RC_EXPECT_UNTOUCHED(dst, 0, 8, SEED);
	}
}

/* No receive WQE: the SEND is lost, counted, and not delivered later. */
TEST_F(uc, no_receive_wqe_dropped)
{
	struct rc_buf *src = &self->buf[0], *dst = &self->buf[1];
	uint32_t len = 3 * 4096 + 7;	/* several packets at any MTU */
	struct ibv_sge ssge = rc_sge(src, 0, len);
	struct ibv_sge rsge = rc_sge(dst, 0, len);
	long before = qhca_hw_counter_fresh("rx_drops");
	struct ibv_wc wc;

	ASSERT_LE(0, before) TH_LOG("no rx_drops counter");
	rc_fill(src->mem, len, SEED + 9);
	ASSERT_EQ(0, rc_post(self->p.s[0].qp, 1, IBV_WR_SEND,
			     IBV_SEND_SIGNALED, &ssge, 1, 0, 0));
	RC_WAIT_WC(self->p.s[0].scq, 1, IBV_WC_SUCCESS, IBV_WC_SEND);
	rc_expect_no_wc(_metadata, self->p.s[1].rcq);
	EXPECT_EQ(before + 1, qhca_hw_counter("rx_drops"));

	rc_prepare_dst(dst, 0, len, SEED);
	ASSERT_EQ(0, rc_post_recv(self->p.s[1].qp, 2, &rsge, 1));
	rc_expect_no_wc(_metadata, self->p.s[1].rcq);
	RC_EXPECT_UNTOUCHED(dst, 0, len, SEED);

	rc_fill(src->mem, len, SEED);
	ASSERT_EQ(0, rc_post(self->p.s[0].qp, 3, IBV_WR_SEND,
			     IBV_SEND_SIGNALED, &ssge, 1, 0, 0));
	RC_WAIT_WC(self->p.s[0].scq, 3, IBV_WC_SUCCESS, IBV_WC_SEND);
	rc_wait_wc(_metadata, self->p.s[1].rcq, &wc);
	RC_EXPECT_WC(wc, 2, IBV_WC_SUCCESS, IBV_WC_RECV);
	EXPECT_EQ(len, wc.byte_len);
	RC_EXPECT_DELIVERED(dst, 0, len, SEED);
	EXPECT_EQ(IBV_QPS_RTS, rc_qp_state(self->p.s[1].qp));
}

/* A bad rkey: the WRITE is dropped, the sender does not know. */
TEST_F(uc, bad_rkey_dropped)
{
	struct rc_buf *src = &self->buf[0], *dst = &self->buf[1];
	struct ibv_sge ssge = rc_sge(src, 0, 1000);
	long before = qhca_hw_counter_fresh("rx_drops");
	struct ibv_wc wc;

	rc_fill(src->mem, 1000, SEED);
	rc_prepare_dst(dst, 0, 1000, SEED);
	ASSERT_EQ(0, rc_post_recv(self->p.s[1].qp, 2, NULL, 0));
	ASSERT_EQ(0, rc_post_imm(self->p.s[0].qp, 1,
				 IBV_WR_RDMA_WRITE_WITH_IMM,
				 IBV_SEND_SIGNALED, &ssge, 1,
				 (uintptr_t)dst->mem, dst->mr->rkey ^ 0x100,
				 IMM));
	RC_WAIT_WC(self->p.s[0].scq, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	rc_expect_no_wc(_metadata, self->p.s[1].rcq);
	RC_EXPECT_UNTOUCHED(dst, 0, 1000, SEED);
	EXPECT_EQ(before + 1, qhca_hw_counter("rx_drops"));
	EXPECT_EQ(IBV_QPS_RTS, rc_qp_state(self->p.s[1].qp));

	/* The receive WQE is still there for the next good one. */
	ASSERT_EQ(0, rc_post_imm(self->p.s[0].qp, 3,
				 IBV_WR_RDMA_WRITE_WITH_IMM,
				 IBV_SEND_SIGNALED, &ssge, 1,
				 (uintptr_t)dst->mem, dst->mr->rkey, IMM));
	RC_WAIT_WC(self->p.s[0].scq, 3, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	rc_wait_wc(_metadata, self->p.s[1].rcq, &wc);
	RC_EXPECT_WC(wc, 2, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM);
	RC_EXPECT_DELIVERED(dst, 0, 1000, SEED);
}

/* A receive WQE too small: it completes with LOC_LEN_ERR. */
TEST_F(uc, receive_too_small_loc_len_err)
{
	struct ibv_sge ssge = rc_sge(&self->buf[0], 0, 5000);
	struct ibv_sge rsge = rc_sge(&self->buf[1], 0, 4999);

	ASSERT_EQ(0, rc_post_recv(self->p.s[1].qp, 2, &rsge, 1));
	ASSERT_EQ(0, rc_post(self->p.s[0].qp, 1, IBV_WR_SEND,
			     IBV_SEND_SIGNALED, &ssge, 1, 0, 0));
	RC_WAIT_WC(self->p.s[0].scq, 1, IBV_WC_SUCCESS, IBV_WC_SEND);
	RC_WAIT_WC(self->p.s[1].rcq, 2, IBV_WC_LOC_LEN_ERR, -1);
}

/* The attributes ib_modify_qp_is_ok() requires and allows for UC. */
TEST(uc_qp_attrs)
{
	struct ibv_device **list;
	struct ibv_device *dev;
	struct ibv_context *ctx;
	struct ibv_port_attr pattr;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_UC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 5,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	int init_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			IBV_QP_ACCESS_FLAGS;
	int rtr_mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
		       IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;

	QHCA_ASSERT_DEVICE(list, dev);
	ctx = ibv_open_device(dev);
	ASSERT_NE(NULL, ctx);
	ASSERT_EQ(0, ibv_query_port(ctx, 1, &pattr));
	pd = ibv_alloc_pd(ctx);
	ASSERT_NE(NULL, pd);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	ASSERT_NE(NULL, cq);
	init.send_cq = cq;
	init.recv_cq = cq;
	qp = ibv_create_qp(pd, &init);
	ASSERT_NE(NULL, qp) TH_LOG("ibv_create_qp(UC): %s", strerror(errno));

	/* No Q_Key on UC; the access flags are required. */
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &attr, init_mask | IBV_QP_QKEY));
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &attr, init_mask &
					~IBV_QP_ACCESS_FLAGS));
	ASSERT_EQ(0, ibv_modify_qp(qp, &attr, init_mask));

	attr.qp_state = IBV_QPS_RTR;
	attr.path_mtu = IBV_MTU_1024;
	attr.dest_qp_num = qp->qp_num;
	attr.rq_psn = 9;
	attr.ah_attr.dlid = pattr.lid;
	attr.ah_attr.port_num = 1;
	attr.max_dest_rd_atomic = 1;
	attr.min_rnr_timer = 1;
	/* RTR needs the PSN; RC's responder attributes are not UC's. */
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &attr, rtr_mask &
					~IBV_QP_RQ_PSN));
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &attr, rtr_mask |
					IBV_QP_MAX_DEST_RD_ATOMIC));
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &attr, rtr_mask |
					IBV_QP_MIN_RNR_TIMER));
	EXPECT_EQ(IBV_QPS_INIT, rc_qp_state(qp));
	ASSERT_EQ(0, ibv_modify_qp(qp, &attr, rtr_mask));

	/* RTS needs the SQ PSN and takes no timers or read depth. */
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 11;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.max_rd_atomic = 1;
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &attr, IBV_QP_STATE));
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &attr, IBV_QP_STATE |
					IBV_QP_SQ_PSN | IBV_QP_TIMEOUT));
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &attr, IBV_QP_STATE |
					IBV_QP_SQ_PSN |
					IBV_QP_MAX_QP_RD_ATOMIC));
	EXPECT_EQ(IBV_QPS_RTR, rc_qp_state(qp));
	ASSERT_EQ(0, ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN));
	ASSERT_EQ(0, ibv_query_qp(qp, &attr, IBV_QP_SQ_PSN | IBV_QP_RQ_PSN |
				  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN, &init));
	EXPECT_EQ((int)IBV_QPS_RTS, (int)attr.qp_state);
	EXPECT_EQ(11U, attr.sq_psn);
	EXPECT_EQ(9U, attr.rq_psn);
	EXPECT_EQ((int)IBV_MTU_1024, (int)attr.path_mtu);
	EXPECT_EQ(qp->qp_num, attr.dest_qp_num);
	EXPECT_EQ((int)IBV_QPT_UC, (int)init.qp_type);

	EXPECT_EQ(0, ibv_destroy_qp(qp));
	EXPECT_EQ(0, ibv_destroy_cq(cq));
	EXPECT_EQ(0, ibv_dealloc_pd(pd));
	EXPECT_EQ(0, ibv_close_device(ctx));
	ibv_free_device_list(list);
}

TEST_HARNESS_MAIN
