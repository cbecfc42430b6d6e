// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Shared receive queues: several RC QPs take their receives from one SRQ.
 * Data must arrive byte for byte in the buffer of the WQE the completion
 * names, slots must come back for reuse, the limit must fire once when
 * fewer WQEs than it remain, a QP moved to ERR must report its last WQE
 * and leave the SRQ's WQEs to the others, a resize must keep every WQE
 * posted before it, in order, and the verbs must refuse what real HCAs
 * refuse with the same errno.
 */
#include <poll.h>

#include "rc_pair.h"

#define PAIRS		4
#define SRQ_WR		16
#define SRQ_SGE		2
#define SLOT		1024		/* one receive buffer, two SGEs */
#define MSGS		24		/* per pair: more than the SRQ holds */
#define FILL		0xa5		/* receive buffers before a message */
#define BIG_WR		64		/* SRQ_WR grown: slots of resize tests */

FIXTURE(srq)
{
	struct rc_pair p;		/* the device, the PD, the port */
	long srqs_base;			/* hw_objects/srqs before */
	struct ibv_srq *srq;
	struct ibv_srq_attr attr;	/* as granted at creation */
	struct ibv_cq *scq;		/* every sender's and receiver's sends */
	struct ibv_cq *rcq;		/* every receiver's receives */
	struct ibv_qp *snd[PAIRS];
	struct ibv_qp *rcv[PAIRS];	/* on the SRQ, each snd[i]'s peer */
	struct rc_buf src;
	struct rc_buf dst;		/* @slots receive slots */
	uint32_t slots;			/* SRQ_WR; BIG_WR for a resize */
};

static struct ibv_qp *srq_create_qp(struct rc_pair *p, struct ibv_cq *scq,
				    struct ibv_cq *rcq, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr init = {
		.send_cq = scq,
		.recv_cq = rcq,
		.srq = srq,
		.qp_type = IBV_QPT_RC,
		.cap = {
			.max_send_wr = 64,
			.max_recv_wr = srq ? 0 : 4,
			.max_send_sge = 1,
			.max_recv_sge = srq ? 0 : 1,
		},
	};

	return ibv_create_qp(p->pd, &init);
}

static int srq_connect(struct rc_pair *p, struct ibv_qp *qp,
		       struct ibv_qp *peer)
{
	return rc_to_init(qp, RC_QP_ACCESS_ALL) ?:
	       rc_to_rtr(p, qp, peer->qp_num, p->pattr.lid) ?:
	       rc_to_rts(p, qp);
}

static int srq_post(struct ibv_srq *srq, struct rc_buf *dst, uint32_t slot)
{
	struct ibv_sge sge[SRQ_SGE] = {
		rc_sge(dst, (size_t)slot * SLOT, SLOT / 2),
		rc_sge(dst, (size_t)slot * SLOT + SLOT / 2, SLOT / 2),
	};
	struct ibv_recv_wr wr = {
		.wr_id = slot,
		.sg_list = sge,
		.num_sge = SRQ_SGE,
	}, *bad = NULL;

	memset(dst->mem + (size_t)slot * SLOT, FILL, SLOT);
	return ibv_post_srq_recv(srq, &wr, &bad);
}

/* Waits for an async event of type on elem (a QP or an SRQ). */
static bool srq_wait_async(struct ibv_context *ctx, enum ibv_event_type type,
			   void *elem, long ms)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	long deadline = rc_now_ms() + ms, left;
	struct ibv_async_event ev;
	bool found = false;
	void *what;

	while (!found && (left = deadline - rc_now_ms()) > 0) {
		if (poll(&pfd, 1, left) != 1)
			break;
		if (ibv_get_async_event(ctx, &ev))
			break;
		what = type == IBV_EVENT_SRQ_LIMIT_REACHED ||
		       type == IBV_EVENT_SRQ_ERR ? (void *)ev.element.srq :
						   (void *)ev.element.qp;
		if (ev.event_type == type && what == elem)
			found = true;
		ibv_ack_async_event(&ev);
	}
	return found;
}

/* Length of message m of pair q: one to four 256-byte packets. */
static uint32_t msg_len(int q, int m)
{
	return 1 + (uint32_t)(q * 211 + m * 97) % SLOT;
}

FIXTURE_SETUP(srq)
{
	struct ibv_srq_init_attr init = {
		.attr = { .max_wr = SRQ_WR, .max_sge = SRQ_SGE },
	};
	struct rc_pair *p = &self->p;
	struct rc_opts opts;
	int i;

	rc_default_opts(&opts);
	opts.path_mtu = IBV_MTU_256;
	rc_pair_open(_metadata, p, &opts);
	self->srqs_base = qhca_read_sysfs_long(QHCA_SYSFS_HW_OBJECTS "/srqs");
	ASSERT_LE(0, self->srqs_base);

	self->srq = ibv_create_srq(p->pd, &init);
	ASSERT_NE(NULL, self->srq) TH_LOG("ibv_create_srq: %s",
					  strerror(errno));
	self->attr = init.attr;
	EXPECT_EQ(self->srqs_base + 1,
		  qhca_read_sysfs_long(QHCA_SYSFS_HW_OBJECTS "/srqs"));

	self->scq = ibv_create_cq(p->ctx, 4 * PAIRS * 64, NULL, NULL, 0);
	ASSERT_NE(NULL, self->scq);
	self->rcq = ibv_create_cq(p->ctx, PAIRS * MSGS, NULL, NULL, 0);
	ASSERT_NE(NULL, self->rcq);
	for (i = 0; i < PAIRS; i++) {
		self->snd[i] = srq_create_qp(p, self->scq, self->rcq, NULL);
		ASSERT_NE(NULL, self->snd[i]);
		self->rcv[i] = srq_create_qp(p, self->scq, self->rcq,
					     self->srq);
		ASSERT_NE(NULL, self->rcv[i]) TH_LOG("QP on the SRQ: %s",
						     strerror(errno));
	}
	for (i = 0; i < PAIRS; i++) {
		ASSERT_EQ(0, srq_connect(p, self->snd[i], self->rcv[i]));
		ASSERT_EQ(0, srq_connect(p, self->rcv[i], self->snd[i]));
	}
	rc_buf_alloc(_metadata, &self->src, p->pd, PAIRS * MSGS * SLOT,
		     RC_ACCESS_ALL);
	rc_buf_alloc(_metadata, &self->dst, p->pd, SRQ_WR * SLOT,
		     RC_ACCESS_ALL);
	self->slots = SRQ_WR;
}

FIXTURE_TEARDOWN(srq)
{
	int i;

	for (i = 0; i < PAIRS; i++) {
		if (self->snd[i])
			EXPECT_EQ(0, ibv_destroy_qp(self->snd[i]));
		if (self->rcv[i])
			EXPECT_EQ(0, ibv_destroy_qp(self->rcv[i]));
	}
	if (self->srq)
		EXPECT_EQ(0, ibv_destroy_srq(self->srq));
	if (self->scq)
		EXPECT_EQ(0, ibv_destroy_cq(self->scq));
	if (self->rcq)
		EXPECT_EQ(0, ibv_destroy_cq(self->rcq));
	rc_buf_free(_metadata, &self->src);
	rc_buf_free(_metadata, &self->dst);
	rc_pair_close(_metadata, &self->p);
	EXPECT_EQ(self->srqs_base,
		  qhca_read_sysfs_long(QHCA_SYSFS_HW_OBJECTS "/srqs"));
}

static int rcv_index(FIXTURE_DATA(srq) *self, uint32_t qpn)
{
	int i;

	for (i = 0; i < PAIRS; i++)
		if (self->rcv[i] && self->rcv[i]->qp_num == qpn)
			return i;
	return -1;
}

/* Sends message m of pair q (pattern q << 8 | m) and signals it. */
static int send_msg(FIXTURE_DATA(srq) *self, int q, int m)
{
	size_t off = ((size_t)q * MSGS + m) * SLOT;
	struct ibv_sge sge;

	rc_fill(self->src.mem + off, msg_len(q, m), q << 8 | m);
	sge = rc_sge(&self->src, off, msg_len(q, m));
	return rc_post(self->snd[q], q << 8 | m, IBV_WR_SEND,
		       IBV_SEND_SIGNALED, &sge, 1, 0, 0);
}

/*
 * Checks one receive completion: message recvs[q] of the pair its QP
 * belongs to, whole in the slot its wr_id names, nothing written after
 * it.  Returns the slot, or -1.
 */
static int check_recv(struct __test_metadata *_metadata,
		      FIXTURE_DATA(srq) *self, const struct ibv_wc *wc,
		      int *recvs)
{
	uint8_t *buf;
	uint32_t len;
	long at;
	int q, m;
	size_t i;

	EXPECT_EQ(IBV_WC_SUCCESS, (int)wc->status)
		TH_LOG("receive %s", ibv_wc_status_str(wc->status));
	EXPECT_EQ(IBV_WC_RECV, (int)wc->opcode);
	q = rcv_index(self, wc->qp_num);
	EXPECT_LE(0, q) TH_LOG("receive on QP %u, not a receiver",
			       wc->qp_num);
	EXPECT_GT((uint64_t)self->slots, wc->wr_id);
	if (q < 0 || wc->wr_id >= self->slots ||
	    wc->status != IBV_WC_SUCCESS)
		return -1;
	m = recvs[q]++;
	len = msg_len(q, m);
	EXPECT_EQ(len, wc->byte_len) TH_LOG("pair %d message %d", q, m);
	buf = self->dst.mem + wc->wr_id * SLOT;
	at = rc_mismatch(buf, len, q << 8 | m, false);
	EXPECT_EQ(-1, at) TH_LOG("pair %d message %d: byte %ld of %u differs",
				 q, m, at, len);
	for (i = len; i < SLOT; i++)
		if (buf[i] != FILL)
			break;
	EXPECT_EQ((size_t)SLOT, i) TH_LOG("pair %d message %d: byte %zu written",
				  q, m, i);
	return (int)wc->wr_id;
}

/* Waits for n send completions, all successful. */
static void wait_sends(struct __test_metadata *_metadata,
		       FIXTURE_DATA(srq) *self, int n)
{
	struct ibv_wc wc[16];
	int got = 0, k, i;

	while (got < n) {
		k = rc_poll(self->scq, wc, n - got < 16 ? n - got : 16,
			    RC_POLL_MS);
		ASSERT_LT(0, k) TH_LOG("%d of %d send completions", got, n);
		for (i = 0; i < k; i++)
			EXPECT_EQ(IBV_WC_SUCCESS, (int)wc[i].status)
				TH_LOG("send %#llx: %s",
				       (unsigned long long)wc[i].wr_id,
				       ibv_wc_status_str(wc[i].status));
		got += k;
	}
}

/*
 * Every pair sends MSGS messages at once, six times what the SRQ holds:
 * senders wait out RNR NAKs while the receivers' completions free slots,
 * which are posted again.  Every byte of every message is checked.
 */
TEST_F_TIMEOUT(srq, many_qps_one_srq, 240)
{
	int recvs[PAIRS] = { 0 };
	struct ibv_wc wc[16];
	int q, m, i, n, got = 0, slot;

	EXPECT_LE((uint32_t)SRQ_WR, self->attr.max_wr);
	EXPECT_LE((uint32_t)SRQ_SGE, self->attr.max_sge);
	for (i = 0; i < SRQ_WR; i++)
		ASSERT_EQ(0, srq_post(self->srq, &self->dst, i));
	for (m = 0; m < MSGS; m++)
		for (q = 0; q < PAIRS; q++)
			ASSERT_EQ(0, send_msg(self, q, m));

	while (got < PAIRS * MSGS) {
		n = rc_poll(self->rcq, wc, 16, RC_POLL_MS);
		ASSERT_LT(0, n) TH_LOG("%d of %d receives", got,
				       PAIRS * MSGS);
		for (i = 0; i < n; i++) {
			slot = check_recv(_metadata, self, &wc[i], recvs);
			ASSERT_LE(0, slot);
			ASSERT_EQ(0, srq_post(self->srq, &self->dst, slot));
		}
		got += n;
	}
	for (q = 0; q < PAIRS; q++)
		EXPECT_EQ(MSGS, recvs[q]);
	wait_sends(_metadata, self, PAIRS * MSGS);
	rc_expect_no_wc(_metadata, self->rcq);
}

/*
 * The limit fires once, when a WQE is taken and fewer than the limit
 * remain, and is disarmed by it.
 */
TEST_F_TIMEOUT(srq, limit_event, 120)
{
	struct ibv_srq_attr attr = { .srq_limit = 4 };
	int recvs[PAIRS] = { 0 };
	struct ibv_wc wc;
	int i;

	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, srq_post(self->srq, &self->dst, i));
	ASSERT_EQ(0, ibv_modify_srq(self->srq, &attr, IBV_SRQ_LIMIT));
	memset(&attr, 0, sizeof(attr));
	ASSERT_EQ(0, ibv_query_srq(self->srq, &attr));
	EXPECT_EQ(4U, attr.srq_limit);

	/* 8 -> 4 posted: not fewer than 4, no event. */
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, send_msg(self, 0, i));
		rc_wait_wc(_metadata, self->rcq, &wc);
		check_recv(_metadata, self, &wc, recvs);
	}
	EXPECT_FALSE(srq_wait_async(self->p.ctx, IBV_EVENT_SRQ_LIMIT_REACHED,
				    self->srq, RC_QUIET_MS));
	ASSERT_EQ(0, ibv_query_srq(self->srq, &attr));
	EXPECT_EQ(4U, attr.srq_limit);

	/* 3 left: the event, and the limit reads 0 again. */
	ASSERT_EQ(0, send_msg(self, 0, 4));
	rc_wait_wc(_metadata, self->rcq, &wc);
	check_recv(_metadata, self, &wc, recvs);
	EXPECT_TRUE(srq_wait_async(self->p.ctx, IBV_EVENT_SRQ_LIMIT_REACHED,
				   self->srq, RC_POLL_MS));
	ASSERT_EQ(0, ibv_query_srq(self->srq, &attr));
	EXPECT_EQ(0U, attr.srq_limit);

	/* Disarmed: 2 left, no second event. */
	ASSERT_EQ(0, send_msg(self, 0, 5));
	rc_wait_wc(_metadata, self->rcq, &wc);
	check_recv(_metadata, self, &wc, recvs);
	EXPECT_FALSE(srq_wait_async(self->p.ctx, IBV_EVENT_SRQ_LIMIT_REACHED,
				    self->srq, RC_QUIET_MS));
	wait_sends(_metadata, self, 6);
}

TEST_F(srq, modify_query)
{
	struct ibv_srq_attr attr;

	memset(&attr, 0xff, sizeof(attr));
	ASSERT_EQ(0, ibv_query_srq(self->srq, &attr));
	EXPECT_EQ(self->attr.max_wr, attr.max_wr);
	EXPECT_EQ(self->attr.max_sge, attr.max_sge);
	EXPECT_EQ(0U, attr.srq_limit);

	attr.srq_limit = 5;
	ASSERT_EQ(0, ibv_modify_srq(self->srq, &attr, IBV_SRQ_LIMIT));
	memset(&attr, 0, sizeof(attr));
	ASSERT_EQ(0, ibv_query_srq(self->srq, &attr));
	EXPECT_EQ(5U, attr.srq_limit);

	/* More than the device holds; a limit beyond the ring. */
	attr.max_wr = self->p.dattr.max_srq_wr + 1;
	EXPECT_EQ(EINVAL, ibv_modify_srq(self->srq, &attr, IBV_SRQ_MAX_WR));
	attr.max_wr = 0;
	EXPECT_EQ(EINVAL, ibv_modify_srq(self->srq, &attr, IBV_SRQ_MAX_WR));
	attr.srq_limit = self->attr.max_wr + 1;
	EXPECT_EQ(EINVAL, ibv_modify_srq(self->srq, &attr, IBV_SRQ_LIMIT));
	memset(&attr, 0, sizeof(attr));
	ASSERT_EQ(0, ibv_query_srq(self->srq, &attr));
	EXPECT_EQ(self->attr.max_wr, attr.max_wr);
	EXPECT_EQ(5U, attr.srq_limit);

	attr.srq_limit = 0;
	ASSERT_EQ(0, ibv_modify_srq(self->srq, &attr, IBV_SRQ_LIMIT));
	ASSERT_EQ(0, ibv_query_srq(self->srq, &attr));
	EXPECT_EQ(0U, attr.srq_limit);
}

/* Posts slots first .. first + n - 1 of the grown buffer. */
static void post_slots(struct __test_metadata *_metadata,
		       FIXTURE_DATA(srq) *self, uint32_t first, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		ASSERT_EQ(0, srq_post(self->srq, &self->dst, first + i))
			TH_LOG("slot %u", first + i);
}

/*
 * Sends n messages, one at a time, round the pairs: each must land in
 * the WQE want[i] names, whole (check_recv()).  sent[] counts each
 * pair's messages, as check_recv()'s recvs[] does.
 */
static void recv_in_order(struct __test_metadata *_metadata,
			  FIXTURE_DATA(srq) *self, const uint32_t *want,
			  int n, int *sent, int *recvs)
{
	struct ibv_wc wc;
	int i, q;

	for (i = 0; i < n; i++) {
		q = i % PAIRS;
		ASSERT_GT(MSGS, sent[q]);
		ASSERT_EQ(0, send_msg(self, q, sent[q]++));
		rc_wait_wc(_metadata, self->rcq, &wc);
		EXPECT_EQ((uint64_t)want[i], wc.wr_id)
			TH_LOG("receive %d of %d", i, n);
		ASSERT_LE(0, check_recv(_metadata, self, &wc, recvs));
	}
	wait_sends(_metadata, self, n);
}

static void expect_max_wr(struct __test_metadata *_metadata,
			  FIXTURE_DATA(srq) *self, uint32_t max_wr)
{
	struct ibv_srq_attr attr;

	memset(&attr, 0, sizeof(attr));
	ASSERT_EQ(0, ibv_query_srq(self->srq, &attr));
	EXPECT_EQ(max_wr, attr.max_wr);
}

/* The SRQ holds exactly @room more WQEs: one beyond is ENOMEM. */
static void expect_room(struct __test_metadata *_metadata,
			FIXTURE_DATA(srq) *self, uint32_t first, uint32_t room)
{
	struct ibv_sge sge = rc_sge(&self->dst, 0, 8);
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

	post_slots(_metadata, self, first, room);
	bad = NULL;
	EXPECT_EQ(ENOMEM, ibv_post_srq_recv(self->srq, &wr, &bad));
	EXPECT_EQ(&wr, bad);
}

/*
 * ibv_modify_srq(IBV_SRQ_MAX_WR) grows a full SRQ whose WQEs wrap round
 * its ring: every one of them is still taken, in the order posted, then
 * the WQEs posted into the room the resize made; the SRQ holds exactly
 * the new size.  A shrink below the WQEs posted and not completed is
 * EINVAL and changes nothing; one that holds them works the same way.
 */
TEST_F_TIMEOUT(srq, resize_keeps_posted, 240)
{
	struct ibv_srq_attr attr = {};
	int sent[PAIRS] = { 0 }, recvs[PAIRS] = { 0 };
	uint32_t want[BIG_WR];
	int i;

	if (!(self->p.dattr.device_cap_flags & IBV_DEVICE_SRQ_RESIZE))
		SKIP(return, "the device does not resize SRQs");
	ASSERT_EQ((uint32_t)SRQ_WR, self->attr.max_wr);
	rc_buf_free(_metadata, &self->dst);
	rc_buf_alloc(_metadata, &self->dst, self->p.pd, BIG_WR * SLOT,
		     RC_ACCESS_ALL);
	self->slots = BIG_WR;

	/* Full, 5 taken, full again over the ring's end: slots 5 .. 20. */
	expect_room(_metadata, self, 0, SRQ_WR);
	for (i = 0; i < 5; i++)
		want[i] = i;
	recv_in_order(_metadata, self, want, 5, sent, recvs);
	expect_room(_metadata, self, SRQ_WR, 5);

	attr.max_wr = BIG_WR;
	ASSERT_EQ(0, ibv_modify_srq(self->srq, &attr, IBV_SRQ_MAX_WR));
	expect_max_wr(_metadata, self, BIG_WR);
	/* 16 posted: room for 48 more, slots 21 .. 63 and 0 .. 4. */
	post_slots(_metadata, self, SRQ_WR + 5, BIG_WR - SRQ_WR - 5);
	expect_room(_metadata, self, 0, 5);
	for (i = 0; i < BIG_WR; i++)
		want[i] = (5 + i) % BIG_WR;
	recv_in_order(_metadata, self, want, BIG_WR, sent, recvs);
	rc_expect_no_wc(_metadata, self->rcq);

	/* 8 posted: 4 cannot hold them, 8 can. */
	post_slots(_metadata, self, 8, 8);
	attr.max_wr = 4;
	EXPECT_EQ(EINVAL, ibv_modify_srq(self->srq, &attr, IBV_SRQ_MAX_WR));
	expect_max_wr(_metadata, self, BIG_WR);
	attr.max_wr = 8;
	ASSERT_EQ(0, ibv_modify_srq(self->srq, &attr, IBV_SRQ_MAX_WR));
	expect_max_wr(_metadata, self, 8);
	expect_room(_metadata, self, 0, 0);
	for (i = 0; i < 8; i++)
		want[i] = 8 + i;
	recv_in_order(_metadata, self, want, 8, sent, recvs);

	/* An armed limit the new ring cannot hold: EINVAL from the device. */
	attr.srq_limit = 6;
	ASSERT_EQ(0, ibv_modify_srq(self->srq, &attr, IBV_SRQ_LIMIT));
	attr.max_wr = 4;
	EXPECT_EQ(EINVAL, ibv_modify_srq(self->srq, &attr, IBV_SRQ_MAX_WR));
	expect_max_wr(_metadata, self, 8);
	attr.srq_limit = 0;
	ASSERT_EQ(0, ibv_modify_srq(self->srq, &attr, IBV_SRQ_LIMIT));
	expect_room(_metadata, self, 0, 8);
	for (i = 0; i < 8; i++)
		want[i] = i;
	recv_in_order(_metadata, self, want, 8, sent, recvs);
	rc_expect_no_wc(_metadata, self->rcq);
}

/*
 * A receiver moved to ERR reports its last WQE and flushes its SQ, but
 * not one WQE of the SRQ: they are still there, in order, for the next
 * QP that receives.
 */
TEST_F_TIMEOUT(srq, qp_error_last_wqe, 120)
{
	int recvs[PAIRS] = { 0 };
	struct ibv_sge sge;
	struct ibv_wc wc;
	int i;

	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, srq_post(self->srq, &self->dst, i));
	ASSERT_EQ(0, rc_to_state(self->rcv[0], IBV_QPS_ERR));
	EXPECT_TRUE(srq_wait_async(self->p.ctx,
				   IBV_EVENT_QP_LAST_WQE_REACHED,
				   self->rcv[0], RC_POLL_MS));
	rc_expect_no_wc(_metadata, self->rcq);

	/* Its own SQ flushes as usual. */
	sge = rc_sge(&self->src, 0, 8);
	ASSERT_EQ(0, rc_post(self->rcv[0], 77, IBV_WR_SEND, IBV_SEND_SIGNALED,
			     &sge, 1, 0, 0));
	RC_WAIT_WC(self->scq, 77, IBV_WC_WR_FLUSH_ERR, -1);

	/* The SRQ's WQEs go to pair 1, in the order they were posted. */
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, send_msg(self, 1, i));
		rc_wait_wc(_metadata, self->rcq, &wc);
		EXPECT_EQ(self->rcv[1]->qp_num, wc.qp_num);
		EXPECT_EQ((uint64_t)i, wc.wr_id);
		check_recv(_metadata, self, &wc, recvs);
	}
	wait_sends(_metadata, self, 4);
	rc_expect_no_wc(_metadata, self->rcq);
}

/*
 * A QP destroyed with a receive completion still in its CQ: the CQE goes
 * with it, and its SRQ slot is free again for the next post.
 */
TEST_F_TIMEOUT(srq, destroyed_qp_frees_slot, 120)
{
	int i;

	ASSERT_EQ(0, srq_post(self->srq, &self->dst, 0));
	ASSERT_EQ(0, send_msg(self, 0, 0));
	/* The send completes once received: the CQE is in rcq now. */
	wait_sends(_metadata, self, 1);
	ASSERT_EQ(0, ibv_destroy_qp(self->rcv[0]));
	self->rcv[0] = NULL;
	rc_expect_no_wc(_metadata, self->rcq);

	for (i = 0; i < (int)self->attr.max_wr; i++)
		ASSERT_EQ(0, srq_post(self->srq, &self->dst, i % SRQ_WR))
			TH_LOG("post %d of %u", i, self->attr.max_wr);
}

TEST_F(srq, destroy_in_use)
{
	int i;

	EXPECT_EQ(EBUSY, ibv_destroy_srq(self->srq));
	for (i = 0; i < PAIRS - 1; i++) {
		ASSERT_EQ(0, ibv_destroy_qp(self->rcv[i]));
		self->rcv[i] = NULL;
	}
	EXPECT_EQ(EBUSY, ibv_destroy_srq(self->srq));
	ASSERT_EQ(0, ibv_destroy_qp(self->rcv[PAIRS - 1]));
	self->rcv[PAIRS - 1] = NULL;
	ASSERT_EQ(0, ibv_destroy_srq(self->srq));
	self->srq = NULL;
	EXPECT_EQ(self->srqs_base,
		  qhca_read_sysfs_long(QHCA_SYSFS_HW_OBJECTS "/srqs"));
}

TEST_F(srq, bad_attrs)
{
	struct ibv_device_attr *d = &self->p.dattr;
	struct ibv_srq_init_attr init = {};
	struct ibv_recv_wr wr = {}, *bad = NULL;
	struct ibv_sge sge[QHCA_MAX_SGE + 1];
	int i;

	EXPECT_EQ(QHCA_DEFAULT_MAX_SRQS, d->max_srq);
	EXPECT_EQ(QHCA_DEFAULT_MAX_SRQ_WR, d->max_srq_wr);
	EXPECT_EQ((int)QHCA_MAX_SGE, d->max_srq_sge);

	init.attr.max_wr = d->max_srq_wr + 1;
	init.attr.max_sge = 1;
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_srq(self->p.pd, &init));
	EXPECT_EQ(EINVAL, errno);

	init.attr.max_wr = 16;
	init.attr.max_sge = d->max_srq_sge + 1;
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_srq(self->p.pd, &init));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(self->srqs_base + 1,
		  qhca_read_sysfs_long(QHCA_SYSFS_HW_OBJECTS "/srqs"));

	/* More SGEs than the SRQ holds. */
	for (i = 0; i <= (int)QHCA_MAX_SGE; i++)
		sge[i] = rc_sge(&self->dst, 0, 8);
	wr.sg_list = sge;
	wr.num_sge = self->attr.max_sge + 1;
	EXPECT_EQ(EINVAL, ibv_post_srq_recv(self->srq, &wr, &bad));
	EXPECT_EQ(&wr, bad);

	/* A QP on an SRQ has no receive queue of its own. */
	wr.num_sge = 1;
	bad = NULL;
	EXPECT_EQ(EINVAL, ibv_post_recv(self->rcv[0], &wr, &bad));
	EXPECT_EQ(&wr, bad);

	/* A full SRQ takes no more. */
	for (i = 0; i < (int)self->attr.max_wr; i++)
		ASSERT_EQ(0, srq_post(self->srq, &self->dst, i % SRQ_WR));
	bad = NULL;
	EXPECT_EQ(ENOMEM, ibv_post_srq_recv(self->srq, &wr, &bad));
	EXPECT_EQ(&wr, bad);
}

TEST_HARNESS_MAIN
