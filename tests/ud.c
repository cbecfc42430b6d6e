// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * UD queue pairs of qhca0 (Documentation/hw/qhca-transport.rst, "UD"):
 * two UD QPs of one device sending to each other through address
 * handles.  Every receive buffer starts with the 40-byte GRH area: the
 * data must land right after it, the area must hold a real IB GRH when
 * the sender used one and stay untouched otherwise, and byte_len counts
 * it.  What UD cannot deliver (a bad Q_Key, no receive WQE) disappears
 * without a completion and shows in the port's hw counters.
 */
#include <arpa/inet.h>

#include "rc_pair.h"

#define QKEY		0x11111111U
#define QKEY_OTHER	0x22222222U
#define GRH		((unsigned int)QHCA_UD_GRH_SIZE)
#define MTU		4096U
#define IMM		0xfeedc0deU
#define SEED		0x5eed


/* RESET -> INIT -> RTR -> RTS with the attributes UD requires, no more. */
static int ud_to_rts(struct ibv_qp *qp, uint32_t qkey)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
		.qkey = qkey,
	};
	int ret;

	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_QKEY);
	if (ret)
		return ret;
	attr.qp_state = IBV_QPS_RTR;
	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE);
	if (ret)
		return ret;
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 0x123456;
	return ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

static int ud_set_qkey(struct ibv_qp *qp, uint32_t qkey)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_RTS, .qkey = qkey };

	return ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_QKEY);
}

static int ud_send(struct ibv_qp *qp, struct ibv_ah *ah, uint32_t qpn,
		   uint32_t qkey, uint64_t wr_id, enum ibv_wr_opcode opcode,
		   struct ibv_sge *sge, uint32_t imm)
{
	struct ibv_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = sge,
		.num_sge = 1,
		.opcode = opcode,
		.send_flags = IBV_SEND_SIGNALED,
		.imm_data = htobe32(imm),
	}, *bad = NULL;

	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = qpn;
	wr.wr.ud.remote_qkey = qkey;
	return ibv_post_send(qp, &wr, &bad);
}

FIXTURE(ud)
{
	struct rc_pair p;
	struct rc_buf buf[2];
	union ibv_gid gid;
	struct ibv_ah *ah;		/* to the port's LID, no GRH */
	struct ibv_ah *ah_grh;		/* the same, with a GRH */
};

FIXTURE_SETUP(ud)
{
	struct rc_opts o;
	struct ibv_ah_attr aa = {};
	int i;

	rc_default_opts(&o);
	o.qp_type = IBV_QPT_UD;
	o.max_send_sge = 2;
	o.max_recv_sge = 2;
	rc_pair_open(_metadata, &self->p, &o);
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, ud_to_rts(self->p.s[i].qp, QKEY));
		rc_buf_alloc(_metadata, &self->buf[i], self->p.pd, 4 * MTU,
			     RC_ACCESS_ALL);
	}
	ASSERT_EQ(0, ibv_query_gid(self->p.ctx, 1, 0, &self->gid));

	aa.dlid = self->p.pattr.lid;
	aa.sl = 3;
	aa.port_num = 1;
	self->ah = ibv_create_ah(self->p.pd, &aa);
	ASSERT_NE(NULL, self->ah) TH_LOG("ibv_create_ah: %s", strerror(errno));
	aa.is_global = 1;
	aa.grh.dgid = self->gid;
	aa.grh.sgid_index = 0;
	aa.grh.flow_label = 0x12345;
	aa.grh.hop_limit = 7;
	aa.grh.traffic_class = 0xa4;
	self->ah_grh = ibv_create_ah(self->p.pd, &aa);
	ASSERT_NE(NULL, self->ah_grh);
}

FIXTURE_TEARDOWN(ud)
{
	int i;

	if (self->ah)
		EXPECT_EQ(0, ibv_destroy_ah(self->ah));
	if (self->ah_grh)
		EXPECT_EQ(0, ibv_destroy_ah(self->ah_grh));
	for (i = 0; i < 2; i++)
		if (self->buf[i].mr)
			rc_buf_free(_metadata, &self->buf[i]);
	rc_pair_close(_metadata, &self->p);
}

/*
 * QP 0 sends len bytes to QP 1 through ah; QP 1's receive buffer is
 * GRH + len + guard bytes, poisoned.  Checks both completions and the
 * data; returns the receive completion.
 */
static void ud_xfer(struct __test_metadata *_metadata,
		    FIXTURE_DATA(ud) *self, struct ibv_ah *ah, uint32_t len,
		    bool imm, struct ibv_wc *rwc)
{
	struct rc_buf *src = &self->buf[0], *dst = &self->buf[1];
	struct ibv_sge ssge = rc_sge(src, 0, len);
	struct ibv_sge rsge = rc_sge(dst, 0, GRH + len + 64);

	rc_fill(src->mem, len, SEED);
	rc_prepare_dst(dst, GRH, len, SEED);
	ASSERT_EQ(0, rc_post_recv(self->p.s[1].qp, 7, &rsge, 1));
	ASSERT_EQ(0, ud_send(self->p.s[0].qp, ah, self->p.s[1].qp->qp_num,
			     QKEY, 8, imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
			     &ssge, IMM));
	RC_WAIT_WC(self->p.s[0].scq, 8, IBV_WC_SUCCESS, IBV_WC_SEND);
	rc_wait_wc(_metadata, self->p.s[1].rcq, rwc);
	RC_EXPECT_WC(*rwc, 7, IBV_WC_SUCCESS, IBV_WC_RECV);
	EXPECT_EQ(GRH + len, rwc->byte_len);
	EXPECT_EQ(self->p.s[0].qp->qp_num, rwc->src_qp);
	EXPECT_EQ(self->p.pattr.lid, rwc->slid);
	EXPECT_EQ(3, rwc->sl);
	EXPECT_EQ(0, rwc->pkey_index);
	EXPECT_EQ(self->p.s[1].qp->qp_num, rwc->qp_num);
	if (imm) {
		EXPECT_TRUE(!!(rwc->wc_flags & IBV_WC_WITH_IMM));
		EXPECT_EQ(IMM, be32toh(rwc->imm_data));
	} else {
		EXPECT_FALSE(!!(rwc->wc_flags & IBV_WC_WITH_IMM));
	}
	RC_EXPECT_PATTERN(dst->mem + GRH, len, SEED);
	RC_EXPECT_POISON(dst->mem + GRH + len, dst->size - GRH - len,
			 SEED + 2);
}

TEST_F(ud, send_sizes_no_grh)
{
	static const uint32_t sizes[] = { 0, 1, 63, 1000, MTU - 1, MTU };
	struct ibv_wc wc;
	unsigned int i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		ud_xfer(_metadata, self, self->ah, sizes[i], i & 1, &wc);
		EXPECT_FALSE(!!(wc.wc_flags & IBV_WC_GRH));
		/* No GRH: the area stays as it was. */
		RC_EXPECT_POISON(self->buf[1].mem, GRH, SEED + 1);
	}
}

TEST_F(ud, send_with_grh)
{
	static const uint32_t sizes[] = { 1, 13, MTU };
	const uint8_t *g = self->buf[1].mem;
	struct ibv_wc wc;
	unsigned int i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t len = sizes[i];
		bool imm = i == 1;
		uint32_t vtf, paylen;

		ud_xfer(_metadata, self, self->ah_grh, len, imm, &wc);
		EXPECT_TRUE(!!(wc.wc_flags & IBV_WC_GRH));
		/* IP version 6, traffic class, flow label. */
		memcpy(&vtf, g, 4);
		vtf = ntohl(vtf);
		EXPECT_EQ(6U, vtf >> 28);
		EXPECT_EQ(0xa4U, (vtf >> 20) & 0xff);
		EXPECT_EQ(0x12345U, vtf & 0xfffff);
		/* BTH, DETH, ImmDt, the padded payload and the ICRC. */
		paylen = 12 + 8 + (imm ? 4 : 0) + ((len + 3) & ~3U) + 4;
		EXPECT_EQ(paylen, (uint32_t)(g[4] << 8 | g[5]));
		EXPECT_EQ(0x1b, g[6]);
		EXPECT_EQ(7, g[7]);
		EXPECT_EQ(0, memcmp(g + 8, self->gid.raw, 16));
		EXPECT_EQ(0, memcmp(g + 24, self->gid.raw, 16));
	}
}

/*
 * A flow label is 20 bits and the bits above are ignored, not refused:
 * UCX passes ~(path factor * path index), all ones, on RoCE.
 */
TEST_F(ud, flow_label_upper_bits_ignored)
{
	struct ibv_ah_attr aa = {
		.dlid = self->p.pattr.lid, .sl = 3, .port_num = 1,
		.is_global = 1,
		.grh = { .dgid = self->gid, .flow_label = 0xfff12345,
			 .hop_limit = 7, .traffic_class = 0xa4 },
	};
	const uint8_t *g = self->buf[1].mem;
	struct ibv_ah *ah = ibv_create_ah(self->p.pd, &aa);
	struct ibv_wc wc;
	uint32_t vtf;

	ASSERT_NE(NULL, ah) TH_LOG("ibv_create_ah: %s", strerror(errno));
	ud_xfer(_metadata, self, ah, 13, false, &wc);
	memcpy(&vtf, g, 4);
	EXPECT_EQ(0x12345U, ntohl(vtf) & 0xfffff);
	EXPECT_EQ(0, ibv_destroy_ah(ah));
}

/* Two SGEs on each side, the receive split inside the GRH area. */
TEST_F(ud, sges_split_grh)
{
	struct rc_buf *src = &self->buf[0], *dst = &self->buf[1];
	struct ibv_sge ssge[2] = { rc_sge(src, 0, 100), rc_sge(src, 1000, 200) };
	struct ibv_sge rsge[2] = { rc_sge(dst, 0, 24), rc_sge(dst, 24, 400) };
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = ssge, .num_sge = 2,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc;

	rc_fill(src->mem, 100, SEED);
	rc_fill_from(src->mem + 1000, 200, SEED, 100);
	rc_prepare_dst(dst, GRH, 300, SEED);
	ASSERT_EQ(0, rc_post_recv(self->p.s[1].qp, 2, rsge, 2));
	wr.wr.ud.ah = self->ah_grh;
	wr.wr.ud.remote_qpn = self->p.s[1].qp->qp_num;
	wr.wr.ud.remote_qkey = QKEY;
	ASSERT_EQ(0, ibv_post_send(self->p.s[0].qp, &wr, &bad));
	RC_WAIT_WC(self->p.s[0].scq, 1, IBV_WC_SUCCESS, IBV_WC_SEND);
	rc_wait_wc(_metadata, self->p.s[1].rcq, &wc);
	RC_EXPECT_WC(wc, 2, IBV_WC_SUCCESS, IBV_WC_RECV);
	EXPECT_EQ(GRH + 300, wc.byte_len);
	EXPECT_TRUE(!!(wc.wc_flags & IBV_WC_GRH));
	EXPECT_EQ(0, memcmp(dst->mem + 24, self->gid.raw, 16));
	RC_EXPECT_PATTERN(dst->mem + GRH, 300, SEED);
}

TEST_F(ud, inline_send)
{
	struct rc_buf *dst = &self->buf[1];
	uint8_t data[64];
	struct ibv_sge ssge = {
		.addr = (uintptr_t)data, .length = sizeof(data),
	};
	struct ibv_sge rsge = rc_sge(dst, 0, 512);
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &ssge, .num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE,
	}, *bad;
	struct ibv_wc wc;

	if (self->p.s[0].cap.max_inline_data < sizeof(data))
		SKIP(return, "no inline data on this QP");
	rc_fill(data, sizeof(data), SEED);
	rc_prepare_dst(dst, GRH, sizeof(data), SEED);
	ASSERT_EQ(0, rc_post_recv(self->p.s[1].qp, 2, &rsge, 1));
	wr.wr.ud.ah = self->ah;
	wr.wr.ud.remote_qpn = self->p.s[1].qp->qp_num;
	wr.wr.ud.remote_qkey = QKEY;
	ASSERT_EQ(0, ibv_post_send(self->p.s[0].qp, &wr, &bad));
	RC_WAIT_WC(self->p.s[0].scq, 1, IBV_WC_SUCCESS, IBV_WC_SEND);
	rc_wait_wc(_metadata, self->p.s[1].rcq, &wc);
	RC_EXPECT_WC(wc, 2, IBV_WC_SUCCESS, IBV_WC_RECV);
	EXPECT_EQ(GRH + sizeof(data), wc.byte_len);
	RC_EXPECT_PATTERN(dst->mem + GRH, sizeof(data), SEED);
}

/*
 * A bad Q_Key: the sender completes, the receiver sees nothing and keeps
 * its receive WQE, the device counts a Q_Key violation.
 */
TEST_F(ud, qkey_mismatch_dropped)
{
	struct rc_buf *src = &self->buf[0], *dst = &self->buf[1];
	struct ibv_sge ssge = rc_sge(src, 0, 100);
	struct ibv_sge rsge = rc_sge(dst, 0, 1024);
	long before = qhca_hw_counter_fresh("qkey_violations");
	struct ibv_wc wc;

	ASSERT_LE(0, before) TH_LOG("no qkey_violations counter");
	rc_fill(src->mem, 100, SEED);
	rc_prepare_dst(dst, GRH, 100, SEED);
	ASSERT_EQ(0, rc_post_recv(self->p.s[1].qp, 2, &rsge, 1));
	ASSERT_EQ(0, ud_send(self->p.s[0].qp, self->ah,
			     self->p.s[1].qp->qp_num, QKEY_OTHER, 1,
			     IBV_WR_SEND, &ssge, 0));
	RC_WAIT_WC(self->p.s[0].scq, 1, IBV_WC_SUCCESS, IBV_WC_SEND);
	rc_expect_no_wc(_metadata, self->p.s[1].rcq);
	RC_EXPECT_UNTOUCHED(dst, GRH, 100, SEED);
	EXPECT_EQ(before + 1, qhca_hw_counter("qkey_violations"));

	/* The receive WQE is still there for the right Q_Key. */
	ASSERT_EQ(0, ud_send(self->p.s[0].qp, self->ah,
			     self->p.s[1].qp->qp_num, QKEY, 3, IBV_WR_SEND,
			     &ssge, 0));
	RC_WAIT_WC(self->p.s[0].scq, 3, IBV_WC_SUCCESS, IBV_WC_SEND);
	rc_wait_wc(_metadata, self->p.s[1].rcq, &wc);
	RC_EXPECT_WC(wc, 2, IBV_WC_SUCCESS, IBV_WC_RECV);
	RC_EXPECT_PATTERN(dst->mem + GRH, 100, SEED);
}

/* remote_qkey with the high bit: the sending QP's own Q_Key goes out. */
TEST_F(ud, qkey_high_bit_uses_qp_qkey)
{
	struct rc_buf *src = &self->buf[0], *dst = &self->buf[1];
	struct ibv_sge ssge = rc_sge(src, 0, 10);
	struct ibv_sge rsge = rc_sge(dst, 0, 1024);
	long before = qhca_hw_counter_fresh("qkey_violations");
	struct ibv_wc wc;

	rc_fill(src->mem, 10, SEED);
	ASSERT_EQ(0, rc_post_recv(self->p.s[1].qp, 2, &rsge, 1));
	/* Both QPs have QKEY: delivered. */
	ASSERT_EQ(0, ud_send(self->p.s[0].qp, self->ah,
			     self->p.s[1].qp->qp_num, QHCA_UD_QKEY_USE_QP, 1,
			     IBV_WR_SEND, &ssge, 0));
	RC_WAIT_WC(self->p.s[0].scq, 1, IBV_WC_SUCCESS, IBV_WC_SEND);
	rc_wait_wc(_metadata, self->p.s[1].rcq, &wc);
	RC_EXPECT_WC(wc, 2, IBV_WC_SUCCESS, IBV_WC_RECV);
	RC_EXPECT_PATTERN(dst->mem + GRH, 10, SEED);

	/* The sender's Q_Key changes: now it does not match. */
	ASSERT_EQ(0, ud_set_qkey(self->p.s[0].qp, QKEY_OTHER));
	ASSERT_EQ(0, rc_post_recv(self->p.s[1].qp, 4, &rsge, 1));
	ASSERT_EQ(0, ud_send(self->p.s[0].qp, self->ah,
			     self->p.s[1].qp->qp_num,
			     QHCA_UD_QKEY_USE_QP | 0x1234, 3, IBV_WR_SEND, &ssge,
			     0));
	RC_WAIT_WC(self->p.s[0].scq, 3, IBV_WC_SUCCESS, IBV_WC_SEND);
	rc_expect_no_wc(_metadata, self->p.s[1].rcq);
	EXPECT_EQ(before + 1, qhca_hw_counter("qkey_violations"));
}

/* Q_Keys with the high bit are the kernel's: user space gets EINVAL. */
TEST_F(ud, privileged_qkey_refused)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	EXPECT_EQ(EINVAL, ud_set_qkey(self->p.s[0].qp, 0x80000001U));
	EXPECT_EQ(EINVAL, ud_set_qkey(self->p.s[0].qp, 0xffffffffU));
	ASSERT_EQ(0, ibv_query_qp(self->p.s[0].qp, &attr, IBV_QP_QKEY, &init));
	EXPECT_EQ(QKEY, attr.qkey);
	EXPECT_EQ((int)IBV_QPT_UD, (int)init.qp_type);
	EXPECT_EQ(0, ud_set_qkey(self->p.s[0].qp, 0x7fffffffU));
	ASSERT_EQ(0, ibv_query_qp(self->p.s[0].qp, &attr, IBV_QP_QKEY, &init));
	EXPECT_EQ(0x7fffffffU, attr.qkey);
}

/* No receive WQE: dropped and counted, never delivered later. */
TEST_F(ud, no_receive_wqe_dropped)
{
	struct rc_buf *src = &self->buf[0], *dst = &self->buf[1];
	struct ibv_sge ssge = rc_sge(src, 0, 100);
	struct ibv_sge rsge = rc_sge(dst, 0, 1024);
	long before = qhca_hw_counter_fresh("rx_drops");
	struct ibv_wc wc;

	ASSERT_LE(0, before) TH_LOG("no rx_drops counter");
	rc_fill(src->mem, 100, SEED + 7);
	ASSERT_EQ(0, ud_send(self->p.s[0].qp, self->ah,
			     self->p.s[1].qp->qp_num, QKEY, 1, IBV_WR_SEND,
			     &ssge, 0));
	RC_WAIT_WC(self->p.s[0].scq, 1, IBV_WC_SUCCESS, IBV_WC_SEND);
	rc_expect_no_wc(_metadata, self->p.s[1].rcq);
	EXPECT_EQ(before + 1, qhca_hw_counter("rx_drops"));

	rc_prepare_dst(dst, GRH, 100, SEED);
	ASSERT_EQ(0, rc_post_recv(self->p.s[1].qp, 2, &rsge, 1));
	rc_expect_no_wc(_metadata, self->p.s[1].rcq);
	RC_EXPECT_UNTOUCHED(dst, GRH, 100, SEED);
	rc_fill(src->mem, 100, SEED);
	ASSERT_EQ(0, ud_send(self->p.s[0].qp, self->ah,
			     self->p.s[1].qp->qp_num, QKEY, 3, IBV_WR_SEND,
			     &ssge, 0));
	RC_WAIT_WC(self->p.s[0].scq, 3, IBV_WC_SUCCESS, IBV_WC_SEND);
	rc_wait_wc(_metadata, self->p.s[1].rcq, &wc);
	RC_EXPECT_WC(wc, 2, IBV_WC_SUCCESS, IBV_WC_RECV);
	RC_EXPECT_PATTERN(dst->mem + GRH, 100, SEED);
	/* The QP still works: it is not in ERR. */
	EXPECT_EQ(IBV_QPS_RTS, rc_qp_state(self->p.s[1].qp));
}

/* A message over the port's MTU fails at the sender, which goes to ERR. */
TEST_F(ud, over_mtu_loc_len_err)
{
	struct ibv_sge ssge = rc_sge(&self->buf[0], 0, MTU + 1);

	ASSERT_EQ(0, ud_send(self->p.s[0].qp, self->ah,
			     self->p.s[1].qp->qp_num, QKEY, 1, IBV_WR_SEND,
			     &ssge, 0));
	RC_WAIT_WC(self->p.s[0].scq, 1, IBV_WC_LOC_LEN_ERR, -1);
	rc_expect_no_wc(_metadata, self->p.s[1].rcq);
}

/* UD knows SEND and SEND_WITH_IMM only. */
TEST_F(ud, rdma_write_loc_qp_op_err)
{
	struct ibv_sge ssge = rc_sge(&self->buf[0], 0, 8);

	ASSERT_EQ(0, ud_send(self->p.s[0].qp, self->ah,
			     self->p.s[1].qp->qp_num, QKEY, 1,
			     IBV_WR_RDMA_WRITE, &ssge, 0));
	RC_WAIT_WC(self->p.s[0].scq, 1, IBV_WC_LOC_QP_OP_ERR, -1);
	rc_expect_no_wc(_metadata, self->p.s[1].rcq);
}

/* A receive buffer without room for GRH + data completes in error. */
TEST_F(ud, receive_too_small_loc_len_err)
{
	struct ibv_sge ssge = rc_sge(&self->buf[0], 0, 100);
	struct ibv_sge rsge = rc_sge(&self->buf[1], 0, GRH + 99);

	ASSERT_EQ(0, rc_post_recv(self->p.s[1].qp, 2, &rsge, 1));
	ASSERT_EQ(0, ud_send(self->p.s[0].qp, self->ah,
			     self->p.s[1].qp->qp_num, QKEY, 1, IBV_WR_SEND,
			     &ssge, 0));
	RC_WAIT_WC(self->p.s[0].scq, 1, IBV_WC_SUCCESS, IBV_WC_SEND);
	RC_WAIT_WC(self->p.s[1].rcq, 2, IBV_WC_LOC_LEN_ERR, -1);
}

/*
 * An AH made from a received completion (and its GRH) answers the
 * sender: ibv_init_ah_from_wc() needs ibv_query_port() and the GID table.
 */
static void ud_reply(struct __test_metadata *_metadata,
		     FIXTURE_DATA(ud) *self, bool grh)
{
	struct rc_buf *b0 = &self->buf[0], *b1 = &self->buf[1];
	struct ibv_sge s1 = rc_sge(b1, 2048, 200);
	struct ibv_sge r0 = rc_sge(b0, 2048, 1024);
	struct ibv_ah_attr aa;
	struct ibv_wc wc;
	struct ibv_ah *ah;

	ud_xfer(_metadata, self, grh ? self->ah_grh : self->ah, 10, false,
		&wc);
	ASSERT_EQ(0, ibv_init_ah_from_wc(self->p.ctx, 1, &wc,
					 (struct ibv_grh *)b1->mem, &aa));
	EXPECT_EQ(self->p.pattr.lid, aa.dlid);
	EXPECT_EQ(3, aa.sl);
	EXPECT_EQ(1, aa.port_num);
	EXPECT_EQ(grh, aa.is_global);
	if (grh) {
		EXPECT_EQ(0, memcmp(aa.grh.dgid.raw, self->gid.raw, 16));
		EXPECT_EQ(0, aa.grh.sgid_index);
		EXPECT_EQ(0x12345U, aa.grh.flow_label);
		EXPECT_EQ(0xa4, aa.grh.traffic_class);
	}

	ah = ibv_create_ah_from_wc(self->p.pd, &wc, (struct ibv_grh *)b1->mem,
				   1);
	ASSERT_NE(NULL, ah) TH_LOG("ibv_create_ah_from_wc: %s",
				   strerror(errno));
	rc_fill(b1->mem + 2048, 200, SEED + 3);
	rc_prepare_dst(b0, 2048 + GRH, 200, SEED + 3);
	ASSERT_EQ(0, rc_post_recv(self->p.s[0].qp, 5, &r0, 1));
	ASSERT_EQ(0, ud_send(self->p.s[1].qp, ah, wc.src_qp, QKEY, 6,
			     IBV_WR_SEND, &s1, 0));
	RC_WAIT_WC(self->p.s[1].scq, 6, IBV_WC_SUCCESS, IBV_WC_SEND);
	rc_wait_wc(_metadata, self->p.s[0].rcq, &wc);
	RC_EXPECT_WC(wc, 5, IBV_WC_SUCCESS, IBV_WC_RECV);
	EXPECT_EQ(GRH + 200, wc.byte_len);
	EXPECT_EQ(self->p.s[1].qp->qp_num, wc.src_qp);
	EXPECT_EQ(grh, !!(wc.wc_flags & IBV_WC_GRH));
	RC_EXPECT_PATTERN(b0->mem + 2048 + GRH, 200, SEED + 3);
	EXPECT_EQ(0, ibv_destroy_ah(ah));
}

TEST_F(ud, ah_from_wc_with_grh)
{
	ud_reply(_metadata, self, true);
}

TEST_F(ud, ah_from_wc_without_grh)
{
	ud_reply(_metadata, self, false);
}

/*
 * Multicast: a send to QPN 0xffffff and a multicast LID with the group's
 * MGID as DGID reaches every QP attached, the sender too, each with the
 * GRH; after a detach, only the others; with nobody attached, no one.
 */
TEST_F(ud, multicast)
{
	struct rc_buf *src = &self->buf[0];
	union ibv_gid mgid = { .raw = {
		0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0,
		0, 0, 0, 0, 0, 0, 0x12, 0x34 } };
	struct ibv_ah_attr aa = {
		.dlid = 0xc001, .sl = 3, .port_num = 1, .is_global = 1,
		.grh = { .dgid = mgid, .hop_limit = 1 },
	};
	struct ibv_sge ssge = rc_sge(src, 0, 77);
	struct ibv_device_attr da;
	struct ibv_wc wc;
	struct ibv_ah *ah;
	int i, round;

	ASSERT_EQ(0, ibv_query_device(self->p.ctx, &da));
	EXPECT_LE(1, da.max_mcast_grp);
	EXPECT_LE(2, da.max_mcast_qp_attach);
	ah = ibv_create_ah(self->p.pd, &aa);
	ASSERT_NE(NULL, ah);
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, ibv_attach_mcast(self->p.s[i].qp, &mgid, 0xc001))
			TH_LOG("ibv_attach_mcast: %s", strerror(errno));
	/* Attaching twice is no error; a non-multicast LID is. */
	EXPECT_EQ(0, ibv_attach_mcast(self->p.s[1].qp, &mgid, 0xc001));
	EXPECT_NE(0, ibv_attach_mcast(self->p.s[1].qp, &mgid, 5));

	for (round = 0; round < 3; round++) {
		for (i = 0; i < 2; i++) {
			struct ibv_sge r = rc_sge(&self->buf[i], 8192, 1024);

			rc_prepare_dst(&self->buf[i], 8192 + GRH, 77,
				       SEED + round);
			ASSERT_EQ(0, rc_post_recv(self->p.s[i].qp, 50 + i, &r,
						  1));
		}
		/* After the poison, which covers QP 0's source too. */
		rc_fill(src->mem, 77, SEED + round);
		ASSERT_EQ(0, ud_send(self->p.s[0].qp, ah, QHCA_MCAST_QPN, QKEY, 9,
				     IBV_WR_SEND, &ssge, 0));
		RC_WAIT_WC(self->p.s[0].scq, 9, IBV_WC_SUCCESS, IBV_WC_SEND);
		for (i = 0; i < 2; i++) {
			/* round 0: both; 1: QP 1 only; 2: nobody. */
			bool member = round == 0 || (round == 1 && i == 1);

			if (!member) {
				rc_expect_no_wc(_metadata, self->p.s[i].rcq);
				continue;
			}
			rc_wait_wc(_metadata, self->p.s[i].rcq, &wc);
			RC_EXPECT_WC(wc, 50 + i, IBV_WC_SUCCESS, IBV_WC_RECV);
			EXPECT_EQ(GRH + 77, wc.byte_len);
			EXPECT_EQ(self->p.s[0].qp->qp_num, wc.src_qp);
			EXPECT_TRUE(!!(wc.wc_flags & IBV_WC_GRH));
			EXPECT_EQ(0, memcmp(self->buf[i].mem + 8192 + 24,
					    mgid.raw, 16));
			RC_EXPECT_PATTERN(self->buf[i].mem + 8192 + GRH, 77,
					  SEED + round);
		}
		if (round == 0)
			ASSERT_EQ(0, ibv_detach_mcast(self->p.s[0].qp, &mgid,
						      0xc001));
		if (round == 1)
			ASSERT_EQ(0, ibv_detach_mcast(self->p.s[1].qp, &mgid,
						      0xc001));
	}
	/* Not attached any more. */
	EXPECT_NE(0, ibv_detach_mcast(self->p.s[1].qp, &mgid, 0xc001));
	EXPECT_EQ(0, ibv_destroy_ah(ah));
}

TEST_F(ud, bad_ah_attrs)
{
	struct ibv_ah_attr aa = {
		.dlid = self->p.pattr.lid, .port_num = 2,
	};

	errno = 0;
	EXPECT_EQ(NULL, ibv_create_ah(self->p.pd, &aa));
	EXPECT_EQ(EINVAL, errno);
	aa.port_num = 1;
	aa.sl = 16;
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_ah(self->p.pd, &aa));
	EXPECT_EQ(EINVAL, errno);
	aa.sl = 0;
	aa.is_global = 1;
	aa.grh.sgid_index = 1;		/* the table has one GID */
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_ah(self->p.pd, &aa));
	EXPECT_EQ(EINVAL, errno);
}

/* The attributes ib_modify_qp_is_ok() requires and allows for UD. */
TEST(ud_qp_attrs)
{
	struct ibv_device **list;
	struct ibv_device *dev;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = QKEY,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	int base = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	QHCA_ASSERT_DEVICE(list, dev);
	ctx = ibv_open_device(dev);
	ASSERT_NE(NULL, ctx);
	pd = ibv_alloc_pd(ctx);
	ASSERT_NE(NULL, pd);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	ASSERT_NE(NULL, cq);
	init.send_cq = cq;
	init.recv_cq = cq;
	qp = ibv_create_qp(pd, &init);
	ASSERT_NE(NULL, qp) TH_LOG("ibv_create_qp(UD): %s", strerror(errno));

	/* INIT needs the Q_Key and takes no access flags. */
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &attr, base));
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &attr, base | IBV_QP_QKEY |
					IBV_QP_ACCESS_FLAGS));
	EXPECT_EQ(IBV_QPS_RESET, rc_qp_state(qp));
	ASSERT_EQ(0, ibv_modify_qp(qp, &attr, base | IBV_QP_QKEY));
	/* RTR takes no path, no destination, no PSN. */
	attr.qp_state = IBV_QPS_RTR;
	attr.ah_attr.dlid = 1;
	attr.ah_attr.port_num = 1;
	attr.path_mtu = IBV_MTU_1024;
	attr.dest_qp_num = 5;
	attr.rq_psn = 1;
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_AV));
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &attr, IBV_QP_STATE |
					IBV_QP_DEST_QPN));
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &attr, IBV_QP_STATE |
					IBV_QP_RQ_PSN));
	EXPECT_EQ(IBV_QPS_INIT, rc_qp_state(qp));
	ASSERT_EQ(0, ibv_modify_qp(qp, &attr, IBV_QP_STATE));
	/* RTS needs the SQ PSN and takes no RC timers. */
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 77;
	attr.timeout = 14;
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &attr, IBV_QP_STATE));
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &attr, IBV_QP_STATE |
					IBV_QP_SQ_PSN | IBV_QP_TIMEOUT));
	EXPECT_EQ(IBV_QPS_RTR, rc_qp_state(qp));
	ASSERT_EQ(0, ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN |
				   IBV_QP_QKEY));
	EXPECT_EQ(IBV_QPS_RTS, rc_qp_state(qp));
	ASSERT_EQ(0, ibv_query_qp(qp, &attr, IBV_QP_SQ_PSN | IBV_QP_QKEY,
				  &init));
	EXPECT_EQ(77U, attr.sq_psn);
	EXPECT_EQ(QKEY, attr.qkey);
	EXPECT_EQ((int)IBV_QPT_UD, (int)init.qp_type);

	EXPECT_EQ(0, ibv_destroy_qp(qp));
	EXPECT_EQ(0, ibv_destroy_cq(cq));
	EXPECT_EQ(0, ibv_dealloc_pd(pd));
	EXPECT_EQ(0, ibv_close_device(ctx));
	ibv_free_device_list(list);
}

TEST_HARNESS_MAIN
