// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The RC QP state machine through ibv_modify_qp() and ibv_query_qp():
 * every transition of the spec's table with its attributes read back,
 * transitions that do not exist, required attributes left out, attributes
 * a transition does not take, and values out of range, each failing with
 * EINVAL and leaving the QP as it was.  Then what RESET and destruction do
 * to posted work, objects in use, and PSNs that wrap.
 */
#include "rc_pair.h"

FIXTURE(states)
{
	struct rc_pair p;
};

FIXTURE_SETUP(states)
{
	struct rc_opts opts;

	rc_default_opts(&opts);
	rc_pair_open(_metadata, &self->p, &opts);
}

FIXTURE_TEARDOWN(states)
{
	rc_pair_close(_metadata, &self->p);
}

static void query(struct __test_metadata *_metadata, struct ibv_qp *qp,
		  struct ibv_qp_attr *attr)
{
	struct ibv_qp_init_attr init;

	memset(attr, 0xa5, sizeof(*attr));
	ASSERT_EQ(0, ibv_query_qp(qp, attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS |
				  IBV_QP_AV | IBV_QP_PATH_MTU |
				  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				  IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
				  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				  IBV_QP_MIN_RNR_TIMER |
				  IBV_QP_MAX_QP_RD_ATOMIC |
				  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_CAP,
				  &init));
}

/* Every transition of the table, each one's attributes read back. */
TEST_F(states, every_valid_transition)
{
	struct rc_pair *p = &self->p;
	struct ibv_qp *qp = p->s[0].qp;
	struct ibv_qp_attr attr;

	ASSERT_EQ(0, rc_to_init(qp, IBV_ACCESS_REMOTE_WRITE));
	query(_metadata, qp, &attr);
	EXPECT_EQ(IBV_QPS_INIT, (int)attr.qp_state);
	EXPECT_EQ(IBV_ACCESS_REMOTE_WRITE, (int)attr.qp_access_flags);
	EXPECT_EQ(1, attr.port_num);
	EXPECT_EQ(0, attr.pkey_index);

	/* INIT -> INIT changes the rights. */
	attr.qp_state = IBV_QPS_INIT;
	attr.qp_access_flags = RC_QP_ACCESS_ALL;
	ASSERT_EQ(0, ibv_modify_qp(qp, &attr, IBV_QP_STATE |
				   IBV_QP_ACCESS_FLAGS));
	query(_metadata, qp, &attr);
	EXPECT_EQ(IBV_QPS_INIT, (int)attr.qp_state);
	EXPECT_EQ(RC_QP_ACCESS_ALL, (int)attr.qp_access_flags);

	rc_rtr_attr(p, p->s[1].qp->qp_num, p->pattr.lid, &attr);
	attr.path_mtu = IBV_MTU_1024;
	attr.rq_psn = 0x123456;
	attr.max_dest_rd_atomic = 8;
	attr.min_rnr_timer = 12;
	ASSERT_EQ(0, ibv_modify_qp(qp, &attr, RC_RTR_MASK));
	query(_metadata, qp, &attr);
	EXPECT_EQ(IBV_QPS_RTR, (int)attr.qp_state);
	EXPECT_EQ(IBV_MTU_1024, (int)attr.path_mtu);
	EXPECT_EQ(p->s[1].qp->qp_num, attr.dest_qp_num);
	EXPECT_EQ(0x123456U, attr.rq_psn);
	EXPECT_EQ(8, attr.max_dest_rd_atomic);
	EXPECT_EQ(12, attr.min_rnr_timer);
	EXPECT_EQ(p->pattr.lid, attr.ah_attr.dlid);
	EXPECT_EQ(1, attr.ah_attr.port_num);

	rc_rts_attr(p, &attr);
	attr.sq_psn = 0x654321;
	attr.timeout = 17;
	attr.retry_cnt = 6;
	attr.rnr_retry = 5;
	attr.max_rd_atomic = 2;
	ASSERT_EQ(0, ibv_modify_qp(qp, &attr, RC_RTS_MASK));
	query(_metadata, qp, &attr);
	EXPECT_EQ(IBV_QPS_RTS, (int)attr.qp_state);
	EXPECT_EQ(0x654321U, attr.sq_psn);
	EXPECT_EQ(17, attr.timeout);
	EXPECT_EQ(6, attr.retry_cnt);
	EXPECT_EQ(5, attr.rnr_retry);
	EXPECT_EQ(2, attr.max_rd_atomic);
	/* What RTR set is still there. */
	EXPECT_EQ(IBV_MTU_1024, (int)attr.path_mtu);
	EXPECT_EQ(p->s[1].qp->qp_num, attr.dest_qp_num);

	/* RTS -> RTS takes the RNR timer and the rights. */
	attr.qp_state = IBV_QPS_RTS;
	attr.min_rnr_timer = 20;
	attr.qp_access_flags = IBV_ACCESS_REMOTE_READ;
	ASSERT_EQ(0, ibv_modify_qp(qp, &attr, IBV_QP_STATE |
				   IBV_QP_MIN_RNR_TIMER |
				   IBV_QP_ACCESS_FLAGS));
	query(_metadata, qp, &attr);
	EXPECT_EQ(IBV_QPS_RTS, (int)attr.qp_state);
	EXPECT_EQ(20, attr.min_rnr_timer);
	EXPECT_EQ(IBV_ACCESS_REMOTE_READ, (int)attr.qp_access_flags);

	ASSERT_EQ(0, rc_to_state(qp, IBV_QPS_SQD));
	EXPECT_EQ(IBV_QPS_SQD, rc_qp_state(qp));
	attr.qp_state = IBV_QPS_RTS;
	attr.min_rnr_timer = 21;
	ASSERT_EQ(0, ibv_modify_qp(qp, &attr, IBV_QP_STATE |
				   IBV_QP_MIN_RNR_TIMER));
	query(_metadata, qp, &attr);
	EXPECT_EQ(IBV_QPS_RTS, (int)attr.qp_state);
	EXPECT_EQ(21, attr.min_rnr_timer);

	ASSERT_EQ(0, rc_to_state(qp, IBV_QPS_ERR));
	EXPECT_EQ(IBV_QPS_ERR, rc_qp_state(qp));
	ASSERT_EQ(0, rc_to_state(qp, IBV_QPS_RESET));
	EXPECT_EQ(IBV_QPS_RESET, rc_qp_state(qp));
	/* And round again, from the start. */
	ASSERT_EQ(0, rc_to_init(qp, RC_QP_ACCESS_ALL));
	ASSERT_EQ(0, rc_to_rtr(p, qp, p->s[1].qp->qp_num, p->pattr.lid));
	ASSERT_EQ(0, rc_to_rts(p, qp));
	EXPECT_EQ(IBV_QPS_RTS, rc_qp_state(qp));
}

/* Brings QP 0 from RESET to state through the normal path. */
static void reach(struct __test_metadata *_metadata, struct rc_pair *p,
		  enum ibv_qp_state state)
{
	struct ibv_qp *qp = p->s[0].qp;

	if (state == IBV_QPS_RESET)
		return;
	ASSERT_EQ(0, rc_to_init(qp, RC_QP_ACCESS_ALL));
	if (state == IBV_QPS_ERR)
		ASSERT_EQ(0, rc_to_state(qp, IBV_QPS_ERR));
	if (state == IBV_QPS_INIT || state == IBV_QPS_ERR)
		return;
	ASSERT_EQ(0, rc_to_rtr(p, qp, p->s[1].qp->qp_num, p->pattr.lid));
	if (state == IBV_QPS_RTR)
		return;
	ASSERT_EQ(0, rc_to_rts(p, qp));
	if (state == IBV_QPS_SQD)
		ASSERT_EQ(0, rc_to_state(qp, IBV_QPS_SQD));
}

/*
 * Every state reaches RESET and ERR directly.  RESET -> ERR is left out:
 * the spec's table allows "any -> ERR", ib_modify_qp_is_ok() does not.
 */
TEST_F(states, reset_and_err_from_everywhere)
{
	static const enum ibv_qp_state from[] = {
		IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS,
		IBV_QPS_SQD, IBV_QPS_ERR,
	};
	static const enum ibv_qp_state to[] = { IBV_QPS_RESET, IBV_QPS_ERR };
	struct ibv_qp *qp = self->p.s[0].qp;
	unsigned int i, t;

	for (t = 0; t < 2; t++) {
		for (i = 0; i < sizeof(from) / sizeof(from[0]); i++) {
			if (from[i] == IBV_QPS_RESET && to[t] == IBV_QPS_ERR)
				continue;
			ASSERT_EQ(0, rc_to_state(qp, IBV_QPS_RESET));
			reach(_metadata, &self->p, from[i]);
			ASSERT_EQ((int)from[i], rc_qp_state(qp));
			EXPECT_EQ(0, rc_to_state(qp, to[t]))
				TH_LOG("from state %d to %d", from[i], to[t]);
			EXPECT_EQ((int)to[t], rc_qp_state(qp));
		}
	}
}

/*
 * The full attribute set the normal transition into state takes, so that
 * only the state pair is wrong.
 */
static int full_attr(const struct rc_pair *p, enum ibv_qp_state state,
		     struct ibv_qp_attr *attr)
{
	switch (state) {
	case IBV_QPS_INIT:
		memset(attr, 0, sizeof(*attr));
		attr->qp_state = IBV_QPS_INIT;
		attr->port_num = 1;
		attr->qp_access_flags = RC_QP_ACCESS_ALL;
		return IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		       IBV_QP_ACCESS_FLAGS;
	case IBV_QPS_RTR:
		rc_rtr_attr(p, p->s[1].qp->qp_num, p->pattr.lid, attr);
		return RC_RTR_MASK;
	case IBV_QPS_RTS:
		rc_rts_attr(p, attr);
		return RC_RTS_MASK;
	default:
		memset(attr, 0, sizeof(*attr));
		attr->qp_state = state;
		return IBV_QP_STATE;
	}
}

FIXTURE(bad_transition)
{
	struct rc_pair p;
};

FIXTURE_VARIANT(bad_transition)
{
	enum ibv_qp_state from;
	enum ibv_qp_state to;
};

#define BAD_TRANSITION(f, t)						\
	FIXTURE_VARIANT_ADD(bad_transition, f##_to_##t)			\
	{								\
		.from = IBV_QPS_##f,					\
		.to = IBV_QPS_##t,					\
	}

BAD_TRANSITION(RESET, RTR);
BAD_TRANSITION(RESET, RTS);
BAD_TRANSITION(RESET, SQD);
BAD_TRANSITION(RESET, SQE);
BAD_TRANSITION(INIT, RTS);
BAD_TRANSITION(INIT, SQD);
BAD_TRANSITION(INIT, SQE);
BAD_TRANSITION(RTR, INIT);
BAD_TRANSITION(RTR, RTR);
BAD_TRANSITION(RTR, SQD);
BAD_TRANSITION(RTS, INIT);
BAD_TRANSITION(RTS, RTR);
BAD_TRANSITION(RTS, SQE);
BAD_TRANSITION(SQD, INIT);
BAD_TRANSITION(SQD, RTR);
BAD_TRANSITION(ERR, INIT);
BAD_TRANSITION(ERR, RTR);
BAD_TRANSITION(ERR, RTS);
BAD_TRANSITION(ERR, SQD);

FIXTURE_SETUP(bad_transition)
{
	struct rc_opts opts;

	rc_default_opts(&opts);
	rc_pair_open(_metadata, &self->p, &opts);
	reach(_metadata, &self->p, variant->from);
	ASSERT_EQ((int)variant->from, rc_qp_state(self->p.s[0].qp));
}

FIXTURE_TEARDOWN(bad_transition)
{
	rc_pair_close(_metadata, &self->p);
}

TEST_F(bad_transition, einval)
{
	struct ibv_qp_attr attr;
	int mask;

	mask = full_attr(&self->p, variant->to, &attr);
	EXPECT_EQ(EINVAL, ibv_modify_qp(self->p.s[0].qp, &attr, mask));
	EXPECT_EQ((int)variant->from, rc_qp_state(self->p.s[0].qp));
}

/* ---- Attributes a transition must have, and may not have ------------ */

FIXTURE(bad_mask)
{
	struct rc_pair p;
};

FIXTURE_VARIANT(bad_mask)
{
	enum ibv_qp_state to;	/* from the state before it on the path */
	int drop;		/* a required attribute left out */
	int add;		/* an attribute the transition does not take */
};

#define MISSING(t, a)							\
	FIXTURE_VARIANT_ADD(bad_mask, to_##t##_without_##a)		\
	{								\
		.to = IBV_QPS_##t,					\
		.drop = IBV_QP_##a,					\
	}

#define EXTRA(t, a)							\
	FIXTURE_VARIANT_ADD(bad_mask, to_##t##_with_##a)		\
	{								\
		.to = IBV_QPS_##t,					\
		.add = IBV_QP_##a,					\
	}

MISSING(INIT, PORT);
MISSING(INIT, PKEY_INDEX);
MISSING(RTR, AV);
MISSING(RTR, PATH_MTU);
MISSING(RTR, DEST_QPN);
MISSING(RTR, RQ_PSN);
MISSING(RTR, MAX_DEST_RD_ATOMIC);
MISSING(RTR, MIN_RNR_TIMER);
MISSING(RTS, SQ_PSN);
MISSING(RTS, TIMEOUT);
MISSING(RTS, RETRY_CNT);
MISSING(RTS, RNR_RETRY);
MISSING(RTS, MAX_QP_RD_ATOMIC);
EXTRA(INIT, SQ_PSN);
EXTRA(INIT, DEST_QPN);
EXTRA(RTR, SQ_PSN);
EXTRA(RTR, TIMEOUT);
EXTRA(RTS, DEST_QPN);
EXTRA(RTS, PATH_MTU);

FIXTURE_SETUP(bad_mask)
{
	struct rc_opts opts;

	rc_default_opts(&opts);
	rc_pair_open(_metadata, &self->p, &opts);
	reach(_metadata, &self->p, variant->to - 1);
}

FIXTURE_TEARDOWN(bad_mask)
{
	rc_pair_close(_metadata, &self->p);
}

TEST_F(bad_mask, einval)
{
	struct ibv_qp *qp = self->p.s[0].qp;
	struct ibv_qp_attr attr;
	int mask;

	mask = full_attr(&self->p, variant->to, &attr);
	mask = (mask & ~variant->drop) | variant->add;
	/* Values an added attribute would have if it were allowed. */
	attr.sq_psn = 1;
	attr.dest_qp_num = self->p.s[1].qp->qp_num;
	attr.timeout = 14;
	attr.path_mtu = IBV_MTU_1024;
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &attr, mask));
	EXPECT_EQ((int)variant->to - 1, rc_qp_state(qp));

	/* The complete set still works: nothing was half applied. */
	mask = full_attr(&self->p, variant->to, &attr);
	EXPECT_EQ(0, ibv_modify_qp(qp, &attr, mask));
	EXPECT_EQ((int)variant->to, rc_qp_state(qp));
}

/* ---- Values out of range --------------------------------------------- */

FIXTURE(bad_value)
{
	struct rc_pair p;
};

FIXTURE_VARIANT(bad_value)
{
	enum ibv_qp_state to;
	const char *field;
};

#define BAD_VALUE(t, f)							\
	FIXTURE_VARIANT_ADD(bad_value, to_##t##_##f)			\
	{								\
		.to = IBV_QPS_##t,					\
		.field = #f,						\
	}

BAD_VALUE(INIT, port_2);
BAD_VALUE(INIT, pkey_index_1);
BAD_VALUE(RTR, path_mtu_0);
BAD_VALUE(RTR, path_mtu_6);
BAD_VALUE(RTR, dest_qpn_25_bits);
BAD_VALUE(RTR, min_rnr_timer_32);
BAD_VALUE(RTR, max_dest_rd_atomic_above_max);
BAD_VALUE(RTS, timeout_32);
BAD_VALUE(RTS, retry_cnt_8);
BAD_VALUE(RTS, rnr_retry_8);
BAD_VALUE(RTS, max_rd_atomic_above_max);

FIXTURE_SETUP(bad_value)
{
	struct rc_opts opts;

	rc_default_opts(&opts);
	rc_pair_open(_metadata, &self->p, &opts);
	reach(_metadata, &self->p, variant->to - 1);
}

FIXTURE_TEARDOWN(bad_value)
{
	rc_pair_close(_metadata, &self->p);
}

TEST_F(bad_value, einval)
{
	struct ibv_qp *qp = self->p.s[0].qp;
	const char *f = variant->field;
	struct ibv_qp_attr attr;
	int mask;

	mask = full_attr(&self->p, variant->to, &attr);
	if (!strcmp(f, "port_2"))
		attr.port_num = 2;
	else if (!strcmp(f, "pkey_index_1"))
		attr.pkey_index = 1;	/* the table has one entry */
	else if (!strcmp(f, "path_mtu_0"))
		attr.path_mtu = 0;
	else if (!strcmp(f, "path_mtu_6"))
		attr.path_mtu = 6;
	else if (!strcmp(f, "dest_qpn_25_bits"))
		attr.dest_qp_num = 1 << 24;
	else if (!strcmp(f, "min_rnr_timer_32"))
		attr.min_rnr_timer = 32;
	else if (!strcmp(f, "max_dest_rd_atomic_above_max"))
		attr.max_dest_rd_atomic = self->p.dattr.max_qp_rd_atom + 1;
	else if (!strcmp(f, "timeout_32"))
		attr.timeout = 32;
	else if (!strcmp(f, "retry_cnt_8"))
		attr.retry_cnt = 8;
	else if (!strcmp(f, "rnr_retry_8"))
		attr.rnr_retry = 8;
	else if (!strcmp(f, "max_rd_atomic_above_max"))
		attr.max_rd_atomic = self->p.dattr.max_qp_init_rd_atom + 1;
	else
		ASSERT_TRUE(false) TH_LOG("unknown case %s", f);

	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &attr, mask));
	EXPECT_EQ((int)variant->to - 1, rc_qp_state(qp));
}

/* ---- Work and objects across state changes ---------------------------- */

#define MSG	512

FIXTURE(work)
{
	struct rc_pair p;
	struct rc_buf src;
	struct rc_buf dst;
};

FIXTURE_SETUP(work)
{
	struct rc_opts opts;

	rc_default_opts(&opts);
	opts.path_mtu = IBV_MTU_256;
	rc_pair_open(_metadata, &self->p, &opts);
	rc_buf_alloc(_metadata, &self->src, self->p.pd, 8 * 4096,
		     RC_ACCESS_ALL);
	rc_buf_alloc(_metadata, &self->dst, self->p.pd, 8 * 4096,
		     RC_ACCESS_ALL);
}

FIXTURE_TEARDOWN(work)
{
	rc_buf_free(_metadata, &self->src);
	rc_buf_free(_metadata, &self->dst);
	rc_pair_close(_metadata, &self->p);
}

/* One SEND of len bytes from QP 0's src to QP 1's dst, verified. */
static void send_verified(struct __test_metadata *_metadata,
			  FIXTURE_DATA(work) *self, uint64_t recv_id,
			  size_t len, uint32_t seed)
{
	struct rc_pair *p = &self->p;
	struct ibv_sge sge;

	rc_fill(self->src.mem, len, seed);
	rc_prepare_dst(&self->dst, 4096, len, seed);
	sge = rc_sge(&self->dst, 4096, len);
	ASSERT_EQ(0, rc_post_recv(p->s[1].qp, recv_id, &sge, 1));
	sge = rc_sge(&self->src, 0, len);
	ASSERT_EQ(0, rc_post(p->s[0].qp, 7, IBV_WR_SEND, IBV_SEND_SIGNALED,
			     &sge, 1, 0, 0));
	RC_WAIT_WC(p->s[0].scq, 7, IBV_WC_SUCCESS, IBV_WC_SEND);
	RC_WAIT_WC(p->s[1].rcq, recv_id, IBV_WC_SUCCESS, IBV_WC_RECV);
	RC_EXPECT_DELIVERED(&self->dst, 4096, len, seed);
}

/*
 * RESET discards posted receives without completions and starts the
 * rings over: after reconnecting, the next message takes the next
 * receive posted, not one from before.
 */
TEST_F(work, reset_discards_and_reconnects)
{
	struct rc_pair *p = &self->p;
	struct ibv_sge sge = rc_sge(&self->dst, 4 * 4096, MSG);
	int i;

	rc_pair_connect(_metadata, p);
	send_verified(_metadata, self, 1, MSG, 60);

	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, rc_post_recv(p->s[1].qp, 100 + i, &sge, 1));
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, rc_to_state(p->s[i].qp, IBV_QPS_RESET));
	rc_expect_no_wc(_metadata, p->s[1].rcq);

	rc_pair_connect(_metadata, p);
	send_verified(_metadata, self, 2, MSG, 61);
	rc_expect_no_wc(_metadata, p->s[1].rcq);
}

/* Destroying a QP discards its posted work without completions. */
TEST_F(work, destroy_discards)
{
	struct rc_pair *p = &self->p;
	struct ibv_sge sge = rc_sge(&self->dst, 0, MSG);
	int i;

	rc_pair_connect(_metadata, p);
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, rc_post_recv(p->s[1].qp, 100 + i, &sge, 1));
	ASSERT_EQ(0, ibv_destroy_qp(p->s[1].qp));
	p->s[1].qp = NULL;
	rc_expect_no_wc(_metadata, p->s[1].rcq);
}

/* A PSN is 24 bits: messages cross the wrap from 0xffffff to 0. */
TEST_F(work, psn_wraps)
{
	struct rc_pair *p = &self->p;
	struct ibv_qp_attr attr;
	int i;

	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, rc_to_init(p->s[i].qp, RC_QP_ACCESS_ALL));
		rc_rtr_attr(p, p->s[!i].qp->qp_num, p->pattr.lid, &attr);
		attr.rq_psn = 0xfffffa;
		ASSERT_EQ(0, ibv_modify_qp(p->s[i].qp, &attr, RC_RTR_MASK));
		rc_rts_attr(p, &attr);
		attr.sq_psn = 0xfffffa;
		ASSERT_EQ(0, ibv_modify_qp(p->s[i].qp, &attr, RC_RTS_MASK));
	}
	/* 16 packets of 256 bytes, then a few more messages. */
	send_verified(_metadata, self, 1, 4096, 62);
	for (i = 0; i < 4; i++)
		send_verified(_metadata, self, 2 + i, 300, 63 + i);
}

/* Objects in use cannot go: the CQ under a QP, the PD under QPs and MRs. */
TEST_F(work, busy_objects)
{
	struct rc_pair *p = &self->p;

	EXPECT_EQ(EBUSY, ibv_destroy_cq(p->s[0].scq));
	EXPECT_EQ(EBUSY, ibv_destroy_cq(p->s[1].rcq));
	EXPECT_EQ(EBUSY, ibv_dealloc_pd(p->pd));

	/* And they still work. */
	rc_pair_connect(_metadata, p);
	send_verified(_metadata, self, 1, MSG, 64);
}

/*
 * SQD starts nothing new: a SEND posted while the QP is in SQD goes
 * nowhere until the QP is back in RTS, and then goes as usual.
 */
TEST_F(work, sqd_holds_new_work)
{
	struct rc_pair *p = &self->p;
	struct ibv_sge sge;

	rc_pair_connect(_metadata, p);
	ASSERT_EQ(0, rc_to_state(p->s[0].qp, IBV_QPS_SQD));
	ASSERT_EQ(IBV_QPS_SQD, rc_qp_state(p->s[0].qp));

	rc_fill(self->src.mem, MSG, 70);
	rc_prepare_dst(&self->dst, 4096, MSG, 70);
	sge = rc_sge(&self->dst, 4096, MSG);
	ASSERT_EQ(0, rc_post_recv(p->s[1].qp, 1, &sge, 1));
	sge = rc_sge(&self->src, 0, MSG);
	ASSERT_EQ(0, rc_post(p->s[0].qp, 2, IBV_WR_SEND, IBV_SEND_SIGNALED,
			     &sge, 1, 0, 0));
	rc_expect_no_wc(_metadata, p->s[0].scq);
	rc_expect_no_wc(_metadata, p->s[1].rcq);
	RC_EXPECT_UNTOUCHED(&self->dst, 4096, MSG, 70);
	EXPECT_EQ(IBV_QPS_SQD, rc_qp_state(p->s[0].qp));

	ASSERT_EQ(0, rc_to_state(p->s[0].qp, IBV_QPS_RTS));
	RC_WAIT_WC(p->s[0].scq, 2, IBV_WC_SUCCESS, IBV_WC_SEND);
	RC_WAIT_WC(p->s[1].rcq, 1, IBV_WC_SUCCESS, IBV_WC_RECV);
	RC_EXPECT_DELIVERED(&self->dst, 4096, MSG, 70);
}

/*
 * SQD lets started work finish, but a WQE the device had already fetched
 * and not yet begun (a fenced SEND waiting behind an outstanding READ)
 * waits for RTS like new work.  QP 1 stays in INIT at first so that the
 * READ stays outstanding: its request is dropped and retried.
 */
TEST_F(work, sqd_holds_fetched_wqe)
{
	struct rc_pair *p = &self->p;
	struct ibv_sge sge;
	long tx;

	rc_connect_one(_metadata, p, 0, p->s[1].qp->qp_num, p->pattr.lid);
	ASSERT_EQ(0, rc_to_init(p->s[1].qp, p->opts.access[1]));

	/* QP 1's receive buffer at 5 pages, the READ's source at 1 page. */
	rc_prepare_dst(&self->dst, 5 * 4096, MSG, 74);
	rc_fill(self->dst.mem + 4096, MSG, 71);
	rc_prepare_dst(&self->src, 0, MSG, 72);
	sge = rc_sge(&self->src, 0, MSG);
	tx = qhca_hw_counter_fresh("tx_packets");
	ASSERT_LE(0, tx);
	ASSERT_EQ(0, rc_post(p->s[0].qp, 1, IBV_WR_RDMA_READ,
			     IBV_SEND_SIGNALED, &sge, 1,
			     (uintptr_t)self->dst.mem + 4096,
			     self->dst.mr->rkey));
	sge = rc_sge(&self->src, 2 * 4096, MSG);
	rc_fill(self->src.mem + 2 * 4096, MSG, 73);
	ASSERT_EQ(0, rc_post(p->s[0].qp, 2, IBV_WR_SEND,
			     IBV_SEND_SIGNALED | IBV_SEND_FENCE, &sge, 1, 0,
			     0));
	/*
	 * The READ has gone out once the device counts its packet, and the
	 * requester takes the next WQE (the SEND, held by its fence) in the
	 * same round: without that the test would not test the hold.
	 */
	ASSERT_GT(rc_wait_hw_counter("tx_packets", tx, RC_POLL_MS), tx);
	ASSERT_EQ(0, rc_to_state(p->s[0].qp, IBV_QPS_SQD));

	/* The responder comes up: the READ's retry gets its answer. */
	sge = rc_sge(&self->dst, 5 * 4096, MSG);
	ASSERT_EQ(0, rc_post_recv(p->s[1].qp, 3, &sge, 1));
	ASSERT_EQ(0, rc_to_rtr(p, p->s[1].qp, p->s[0].qp->qp_num,
			       p->pattr.lid));
	ASSERT_EQ(0, rc_to_rts(p, p->s[1].qp));
	RC_WAIT_WC(p->s[0].scq, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	RC_EXPECT_PATTERN(self->src.mem, MSG, 71);

	/* The fenced SEND may go now as far as the fence goes; not in SQD. */
	rc_expect_no_wc(_metadata, p->s[0].scq);
	rc_expect_no_wc(_metadata, p->s[1].rcq);
	EXPECT_EQ(IBV_QPS_SQD, rc_qp_state(p->s[0].qp));

	ASSERT_EQ(0, rc_to_state(p->s[0].qp, IBV_QPS_RTS));
	RC_WAIT_WC(p->s[0].scq, 2, IBV_WC_SUCCESS, IBV_WC_SEND);
	RC_WAIT_WC(p->s[1].rcq, 3, IBV_WC_SUCCESS, IBV_WC_RECV);
	RC_EXPECT_PATTERN(self->dst.mem + 5 * 4096, MSG, 73);
	RC_EXPECT_POISON(self->dst.mem + 5 * 4096 + MSG, 4096 - MSG, 76);
}

TEST_HARNESS_MAIN
