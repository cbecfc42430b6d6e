// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Completion events: ibv_req_notify_cq() arms a CQ for one event, which
 * arrives on its completion channel and is read with ibv_get_cq_event();
 * the "-e" mode of ibv_rc_pingpong.  An unarmed CQ raises none, an armed
 * one exactly one, arming with a completion already waiting fires at once,
 * and a CQ armed for solicited completions fires for a solicited message
 * or an error only.
 */
#include "rc_pair.h"

#define MSG	64

FIXTURE(ev)
{
	struct rc_pair p;
	struct rc_buf buf;
};

FIXTURE_SETUP(ev)
{
	struct rc_opts opts;

	rc_default_opts(&opts);
	opts.channel = true;
	opts.max_send_wr = 256;
	opts.max_recv_wr = 256;
	rc_pair_open(_metadata, &self->p, &opts);
	rc_pair_connect(_metadata, &self->p);
	rc_buf_alloc(_metadata, &self->buf, self->p.pd, 2 * 256 * MSG,
		     RC_ACCESS_ALL);
}

FIXTURE_TEARDOWN(ev)
{
	rc_buf_free(_metadata, &self->buf);
	rc_pair_close(_metadata, &self->p);
}

/*
 * Waits up to ms for one event on the channel and acknowledges it.
 * Returns 1 with its CQ, 0 when none came, or -errno.
 */
static int wait_event(struct ibv_comp_channel *ch, long ms,
		      struct ibv_cq **cq)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	void *cq_context;

	if (poll(&pfd, 1, ms) != 1)
		return 0;
	if (ibv_get_cq_event(ch, cq, &cq_context))
		return -errno;
	if (cq_context != (*cq)->cq_context)
		return -EFAULT;
	ibv_ack_cq_events(*cq, 1);
	return 1;
}

/* The next event is cq's, within RC_POLL_MS. */
static void expect_event(struct __test_metadata *_metadata,
			 struct rc_pair *p, struct ibv_cq *cq)
{
	struct ibv_cq *got = NULL;

	ASSERT_EQ(1, wait_event(p->channel, RC_POLL_MS, &got))
		TH_LOG("no completion event");
	EXPECT_EQ(cq, got);
}

/*
 * No event on the channel for RC_QUIET_MS.  Every caller has seen the
 * completion that could raise one, or one that comes after it (a SEND
 * completes on the ACK the responder sends once its receive CQE is
 * written), and the device raises a completion event with the CQE that
 * fires it: what is left is the interrupt's way
 * to the channel (MSI-X through a bottom half of QEMU's main loop, the
 * driver's handler, ib_uverbs), wake-ups and no timer, which RC_QUIET_MS
 * covers with a wide margin.
 */
static void expect_no_event(struct __test_metadata *_metadata,
			    struct rc_pair *p)
{
	struct ibv_cq *got = NULL;

	EXPECT_EQ(0, wait_event(p->channel, RC_QUIET_MS, &got))
		TH_LOG("unexpected event on CQ %p", got);
}

/* A SEND of MSG bytes from QP 0 into receive slot i of QP 1. */
static void send_msg(struct __test_metadata *_metadata,
		     FIXTURE_DATA(ev) *self, int i, unsigned int flags)
{
	struct rc_pair *p = &self->p;
	struct ibv_sge sge = rc_sge(&self->buf, (256 + i) * MSG, MSG);

	ASSERT_EQ(0, rc_post_recv(p->s[1].qp, 1000 + i, &sge, 1));
	rc_fill(self->buf.mem + i * MSG, MSG, 70 + i);
	sge = rc_sge(&self->buf, i * MSG, MSG);
	ASSERT_EQ(0, rc_post(p->s[0].qp, i, IBV_WR_SEND,
			     IBV_SEND_SIGNALED | flags, &sge, 1, 0, 0));
}

static void expect_msg(struct __test_metadata *_metadata,
		       FIXTURE_DATA(ev) *self, int i)
{
	RC_WAIT_WC(self->p.s[0].scq, i, IBV_WC_SUCCESS, IBV_WC_SEND);
	RC_WAIT_WC(self->p.s[1].rcq, 1000 + i, IBV_WC_SUCCESS, IBV_WC_RECV);
	RC_EXPECT_PATTERN(self->buf.mem + (256 + i) * MSG, MSG, 70 + i);
}

/* Both ends armed: one event each, for the CQ that completed. */
TEST_F(ev, round_trip)
{
	struct rc_pair *p = &self->p;
	struct ibv_cq *got[2] = { NULL, NULL };

	ASSERT_EQ(0, ibv_req_notify_cq(p->s[0].scq, 0));
	ASSERT_EQ(0, ibv_req_notify_cq(p->s[1].rcq, 0));
	send_msg(_metadata, self, 0, 0);

	ASSERT_EQ(1, wait_event(p->channel, RC_POLL_MS, &got[0]));
	ASSERT_EQ(1, wait_event(p->channel, RC_POLL_MS, &got[1]));
	EXPECT_TRUE((got[0] == p->s[0].scq && got[1] == p->s[1].rcq) ||
		    (got[1] == p->s[0].scq && got[0] == p->s[1].rcq));
	EXPECT_EQ(&p->s[0], p->s[0].scq->cq_context);
	expect_msg(_metadata, self, 0);
	expect_no_event(_metadata, p);
}

/* The ibv_rc_pingpong -e loop: arm, wait, poll, many times over. */
TEST_F_TIMEOUT(ev, many_round_trips, 120)
{
	struct rc_pair *p = &self->p;
	int i;

	for (i = 0; i < 200; i++) {
		ASSERT_EQ(0, ibv_req_notify_cq(p->s[1].rcq, 0));
		send_msg(_metadata, self, i % 256, 0);
		expect_event(_metadata, p, p->s[1].rcq);
		expect_msg(_metadata, self, i % 256);
	}
	expect_no_event(_metadata, p);
}

TEST_F(ev, unarmed_cq_raises_none)
{
	struct rc_pair *p = &self->p;

	send_msg(_metadata, self, 0, IBV_SEND_SOLICITED);
	expect_msg(_metadata, self, 0);
	expect_no_event(_metadata, p);
}

/* One arm, three completions: one event; then arming again works. */
TEST_F(ev, one_event_per_arm)
{
	struct rc_pair *p = &self->p;
	int i;

	ASSERT_EQ(0, ibv_req_notify_cq(p->s[1].rcq, 0));
	for (i = 0; i < 3; i++)
		send_msg(_metadata, self, i, 0);
	for (i = 0; i < 3; i++)
		expect_msg(_metadata, self, i);
	expect_event(_metadata, p, p->s[1].rcq);
	expect_no_event(_metadata, p);

	ASSERT_EQ(0, ibv_req_notify_cq(p->s[1].rcq, 0));
	send_msg(_metadata, self, 3, 0);
	expect_event(_metadata, p, p->s[1].rcq);
	expect_msg(_metadata, self, 3);
}

/*
 * A completion that arrived before the arm and was not polled yet fires
 * the event at once: otherwise a consumer that arms after its last poll
 * could sleep forever on a completion it missed.
 */
TEST_F(ev, arm_with_completion_waiting)
{
	struct rc_pair *p = &self->p;
	struct ibv_wc wc;

	send_msg(_metadata, self, 0, 0);
	/* Let it complete without polling it. */
	RC_WAIT_WC(p->s[0].scq, 0, IBV_WC_SUCCESS, IBV_WC_SEND);
	expect_no_event(_metadata, p);

	ASSERT_EQ(0, ibv_req_notify_cq(p->s[1].rcq, 0));
	expect_event(_metadata, p, p->s[1].rcq);
	rc_wait_wc(_metadata, p->s[1].rcq, &wc);
	RC_EXPECT_WC(wc, 1000, IBV_WC_SUCCESS, IBV_WC_RECV);
}

/* Armed for solicited completions: an ordinary message does not fire. */
TEST_F(ev, solicited_only)
{
	struct rc_pair *p = &self->p;

	ASSERT_EQ(0, ibv_req_notify_cq(p->s[1].rcq, 1));
	send_msg(_metadata, self, 0, 0);
	RC_WAIT_WC(p->s[0].scq, 0, IBV_WC_SUCCESS, IBV_WC_SEND);
	expect_no_event(_metadata, p);

	send_msg(_metadata, self, 1, IBV_SEND_SOLICITED);
	expect_event(_metadata, p, p->s[1].rcq);
	RC_WAIT_WC(p->s[1].rcq, 1000, IBV_WC_SUCCESS, IBV_WC_RECV);
	RC_WAIT_WC(p->s[1].rcq, 1001, IBV_WC_SUCCESS, IBV_WC_RECV);
	RC_WAIT_WC(p->s[0].scq, 1, IBV_WC_SUCCESS, IBV_WC_SEND);
}

/* RDMA WRITE with immediate can be solicited too. */
TEST_F(ev, solicited_write_with_imm)
{
	struct rc_pair *p = &self->p;
	struct ibv_sge sge = rc_sge(&self->buf, 0, MSG);

	ASSERT_EQ(0, ibv_req_notify_cq(p->s[1].rcq, 1));
	ASSERT_EQ(0, rc_post_recv(p->s[1].qp, 1000, NULL, 0));
	ASSERT_EQ(0, rc_post_imm(p->s[0].qp, 1, IBV_WR_RDMA_WRITE_WITH_IMM,
				 IBV_SEND_SIGNALED | IBV_SEND_SOLICITED, &sge,
				 1, (uintptr_t)self->buf.mem + 256 * MSG,
				 self->buf.mr->rkey, 5));
	expect_event(_metadata, p, p->s[1].rcq);
	RC_WAIT_WC(p->s[1].rcq, 1000, IBV_WC_SUCCESS,
		   IBV_WC_RECV_RDMA_WITH_IMM);
	RC_WAIT_WC(p->s[0].scq, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
}

/* An error completion fires a CQ armed for solicited completions. */
TEST_F(ev, solicited_arm_fires_on_error)
{
	struct rc_pair *p = &self->p;
	struct ibv_sge sge = rc_sge(&self->buf, 0, MSG);

	ASSERT_EQ(0, rc_post_recv(p->s[1].qp, 1000, &sge, 1));
	ASSERT_EQ(0, ibv_req_notify_cq(p->s[1].rcq, 1));
	ASSERT_EQ(0, rc_to_state(p->s[1].qp, IBV_QPS_ERR));
	expect_event(_metadata, p, p->s[1].rcq);
	RC_WAIT_WC(p->s[1].rcq, 1000, IBV_WC_WR_FLUSH_ERR, -1);
}

/* Send completions raise events as well. */
TEST_F(ev, send_cq)
{
	struct rc_pair *p = &self->p;

	ASSERT_EQ(0, ibv_req_notify_cq(p->s[0].scq, 0));
	send_msg(_metadata, self, 0, 0);
	expect_event(_metadata, p, p->s[0].scq);
	expect_msg(_metadata, self, 0);
	expect_no_event(_metadata, p);
}

TEST_HARNESS_MAIN
