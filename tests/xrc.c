// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * XRC: one XRC INI QP sends through one XRC TGT QP to the XRC SRQs of an
 * XRC domain; each send names its SRQ.  Data must arrive byte for byte
 * in the buffer of the WQE the completion names, on the SRQ's CQ, with
 * the TGT QP's number; an SRQ of another domain must fail the send with
 * REM_INV_REQ_ERR and put the INI QP in ERR; a domain opened through a
 * file must be the same domain in another process, where ibv_open_qp()
 * opens a TGT QP by number; and the verbs must refuse to destroy what is
 * still in use with the errno ib_core gives.
 */
#include <fcntl.h>
#include <sys/wait.h>

#include "rc_pair.h"

#define NSRQ		2U
#define SRQ_WR		8U
#define SLOT		512U
#define MSGS		24U		/* more than the SRQs hold at once */
#define SEED		0x5e0

FIXTURE(xrc)
{
	struct rc_pair p;		/* the device, the PD, the port */
	char path[64];			/* the file of the domain */
	int fd;
	struct ibv_xrcd *xrcd;
	struct ibv_cq *scq;		/* the INI QP's sends */
	struct ibv_cq *rcq;		/* every XRC SRQ's receives */
	struct ibv_srq *srq[NSRQ];
	uint32_t srqn[NSRQ];
	struct ibv_qp *tgt;
	struct ibv_qp *ini;
	struct rc_buf src;
	struct rc_buf dst;		/* NSRQ * SRQ_WR receive slots */
};

static struct ibv_xrcd *xrc_open(struct ibv_context *ctx, int fd,
				 int oflags)
{
	struct ibv_xrcd_init_attr attr = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = fd,
		.oflags = oflags,
	};

	return ibv_open_xrcd(ctx, &attr);
}

static struct ibv_srq *xrc_create_srq(struct ibv_context *ctx,
				      struct ibv_pd *pd, struct ibv_xrcd *xrcd,
				      struct ibv_cq *cq)
{
	struct ibv_srq_init_attr_ex attr = {
		.attr = { .max_wr = SRQ_WR, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC,
		.pd = pd,
		.xrcd = xrcd,
		.cq = cq,
	};

	return ibv_create_srq_ex(ctx, &attr);
}

static struct ibv_qp *xrc_create_tgt(struct ibv_context *ctx,
				     struct ibv_xrcd *xrcd)
{
	struct ibv_qp_init_attr_ex attr = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD,
		.xrcd = xrcd,
	};

	return ibv_create_qp_ex(ctx, &attr);
}

static struct ibv_qp *xrc_create_ini(struct ibv_context *ctx,
				     struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr_ex attr = {
		.qp_type = IBV_QPT_XRC_SEND,
		.send_cq = cq,
		.cap = { .max_send_wr = 64, .max_send_sge = 1 },
		/* Both ways of posting: ibv_post_send() and ibv_wr_*(). */
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND,
	};

	return ibv_create_qp_ex(ctx, &attr);
}

/* TGT to RTR aimed at the INI QP; INI to RTS aimed at the TGT QP. */
static int xrc_connect(struct rc_pair *p, struct ibv_qp *tgt,
		       struct ibv_qp *ini)
{
	struct ibv_qp_attr attr;
	int err;

	err = rc_to_init(tgt, RC_QP_ACCESS_ALL) ?:
	      rc_to_rtr(p, tgt, ini->qp_num, p->pattr.lid) ?:
	      rc_to_init(ini, 0);
	if (err)
		return err;
	/* An INI QP has no responder: no max_dest_rd_atomic, no RNR timer. */
	rc_rtr_attr(p, tgt->qp_num, p->pattr.lid, &attr);
	err = ibv_modify_qp(ini, &attr, IBV_QP_STATE | IBV_QP_AV |
			    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			    IBV_QP_RQ_PSN);
	return err ?: rc_to_rts(p, ini);
}

static int xrc_post_recv(struct ibv_srq *srq, struct rc_buf *dst,
			 uint32_t slot, uint32_t seed)
{
	struct ibv_sge sge = rc_sge(dst, (size_t)slot * SLOT, SLOT);
	struct ibv_recv_wr wr = {
		.wr_id = slot,
		.sg_list = &sge,
		.num_sge = 1,
	}, *bad = NULL;

	rc_poison(dst->mem + (size_t)slot * SLOT, SLOT, seed);
	return ibv_post_srq_recv(srq, &wr, &bad);
}

/*
 * The part of a receive slot after a message of len bytes still holds
 * xrc_post_recv()'s poison: offset of the first byte written, or -1.
 */
static long xrc_tail_written(const uint8_t *slot, uint32_t len,
			     uint32_t seed)
{
	uint8_t want;
	uint32_t i;

	for (i = len; i < SLOT; i++) {
		want = rc_pattern(seed, i) ^ 0xff;
		if (slot[i] != want)
			return i;
	}
	return -1;
}

/* Message m of len bytes, pattern seed, to SRQ number srqn. */
static int xrc_send(struct ibv_qp *ini, struct rc_buf *src, uint32_t m,
		    uint32_t len, uint32_t seed, uint32_t srqn)
{
	struct ibv_sge sge = rc_sge(src, (size_t)m * SLOT, len);
	struct ibv_send_wr wr = {
		.wr_id = m,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad = NULL;

	rc_fill(src->mem + (size_t)m * SLOT, len, seed);
	wr.qp_type.xrc.remote_srqn = srqn;
	return ibv_post_send(ini, &wr, &bad);
}

FIXTURE_SETUP(xrc)
{
	struct rc_pair *p = &self->p;
	struct rc_opts opts;
	unsigned int i;

	rc_default_opts(&opts);
	opts.path_mtu = IBV_MTU_256;	/* messages of two packets */
	rc_pair_open(_metadata, p, &opts);
	ASSERT_TRUE(!!(p->dattr.device_cap_flags & IBV_DEVICE_XRC));

	snprintf(self->path, sizeof(self->path), "/tmp/qhca-xrc-%d",
		 (int)getpid());
	self->fd = open(self->path, O_RDWR | O_CREAT, 0600);
	ASSERT_LE(0, self->fd);
	self->xrcd = xrc_open(p->ctx, self->fd, O_CREAT);
	ASSERT_NE(NULL, self->xrcd) TH_LOG("ibv_open_xrcd: %s",
					   strerror(errno));
	self->scq = ibv_create_cq(p->ctx, 128, NULL, NULL, 0);
	ASSERT_NE(NULL, self->scq);
	self->rcq = ibv_create_cq(p->ctx, 128, NULL, NULL, 0);
	ASSERT_NE(NULL, self->rcq);
	for (i = 0; i < NSRQ; i++) {
		self->srq[i] = xrc_create_srq(p->ctx, p->pd, self->xrcd,
					      self->rcq);
		ASSERT_NE(NULL, self->srq[i]) TH_LOG("XRC SRQ: %s",
						     strerror(errno));
		ASSERT_EQ(0, ibv_get_srq_num(self->srq[i], &self->srqn[i]));
		EXPECT_NE(0U, self->srqn[i]);
	}
	EXPECT_NE(self->srqn[0], self->srqn[1]);
	self->tgt = xrc_create_tgt(p->ctx, self->xrcd);
	ASSERT_NE(NULL, self->tgt) TH_LOG("XRC TGT QP: %s", strerror(errno));
	self->ini = xrc_create_ini(p->ctx, p->pd, self->scq);
	ASSERT_NE(NULL, self->ini) TH_LOG("XRC INI QP: %s", strerror(errno));
	ASSERT_EQ(0, xrc_connect(p, self->tgt, self->ini));
	rc_buf_alloc(_metadata, &self->src, p->pd, MSGS * SLOT,
		     RC_ACCESS_ALL);
	rc_buf_alloc(_metadata, &self->dst, p->pd, NSRQ * SRQ_WR * SLOT,
		     RC_ACCESS_ALL);
}

FIXTURE_TEARDOWN(xrc)
{
	unsigned int i;

	rc_buf_free(_metadata, &self->src);
	rc_buf_free(_metadata, &self->dst);
	if (self->ini)
		EXPECT_EQ(0, ibv_destroy_qp(self->ini));
	if (self->tgt)
		EXPECT_EQ(0, ibv_destroy_qp(self->tgt));
	for (i = 0; i < NSRQ; i++)
		if (self->srq[i])
			EXPECT_EQ(0, ibv_destroy_srq(self->srq[i]));
	if (self->scq)
		EXPECT_EQ(0, ibv_destroy_cq(self->scq));
	if (self->rcq)
		EXPECT_EQ(0, ibv_destroy_cq(self->rcq));
	if (self->xrcd)
		EXPECT_EQ(0, ibv_close_xrcd(self->xrcd));
	if (self->fd >= 0) {
		close(self->fd);
		unlink(self->path);
	}
	/* Every QP, SRQ and CQ of the device is gone again. */
	rc_pair_close(_metadata, &self->p);
}

/*
 * Slot of the j-th WQE of SRQ s, and the message it receives: SRQ s gets
 * messages s, s + NSRQ, ... in the order of its ring.
 */
static uint32_t xrc_slot(uint32_t s, uint32_t j)
{
	return s * SRQ_WR + j % SRQ_WR;
}

static uint32_t xrc_len(uint32_t m)
{
	return 1 + (m * 97) % SLOT;	/* 1 .. SLOT bytes, one or two packets */
}

TEST_F_TIMEOUT(xrc, data_through_two_srqs, 240)
{
	uint32_t taken[NSRQ] = { 0 }, posted[NSRQ] = { 0 };
	struct ibv_wc wc;
	uint32_t m, s, j, slot, msg;
	uint32_t got;

	for (s = 0; s < NSRQ; s++)
		for (j = 0; j < SRQ_WR; j++, posted[s]++)
			ASSERT_EQ(0, xrc_post_recv(self->srq[s], &self->dst,
						   xrc_slot(s, j),
						   SEED + s * NSRQ * MSGS + j));
	for (m = 0; m < MSGS; m++)
		ASSERT_EQ(0, xrc_send(self->ini, &self->src, m, xrc_len(m),
				      SEED + m, self->srqn[m % NSRQ]));

	for (got = 0; got < MSGS; got++) {
		rc_wait_wc(_metadata, self->rcq, &wc);
		ASSERT_EQ(IBV_WC_SUCCESS, (int)wc.status)
			TH_LOG("receive %d: %s", got,
			       ibv_wc_status_str(wc.status));
		EXPECT_EQ(IBV_WC_RECV, (int)wc.opcode);
		/* The TGT QP received, from the INI QP. */
		EXPECT_EQ(self->tgt->qp_num, wc.qp_num);
		EXPECT_EQ(self->ini->qp_num, wc.src_qp);
		ASSERT_GT(NSRQ * SRQ_WR, wc.wr_id);
		s = wc.wr_id / SRQ_WR;
		j = taken[s]++;
		slot = xrc_slot(s, j);
		ASSERT_EQ(slot, wc.wr_id) TH_LOG("SRQ %u out of ring order", s);
		msg = s + j * NSRQ;
		ASSERT_GT(MSGS, msg);
		EXPECT_EQ(xrc_len(msg), wc.byte_len);
		RC_EXPECT_PATTERN(self->dst.mem + (size_t)slot * SLOT,
				  xrc_len(msg), SEED + msg);
		EXPECT_EQ(-1, xrc_tail_written(self->dst.mem +
					       (size_t)slot * SLOT,
					       xrc_len(msg),
					       SEED + s * NSRQ * MSGS + j));
		/* The slot is free again: the next message of the SRQ. */
		ASSERT_EQ(0, xrc_post_recv(self->srq[s], &self->dst, slot,
					   SEED + s * NSRQ * MSGS + posted[s]));
		posted[s]++;
	}
	for (m = 0; m < MSGS; m++)
		RC_WAIT_WC(self->scq, m, IBV_WC_SUCCESS, IBV_WC_SEND);
	for (s = 0; s < NSRQ; s++)
		EXPECT_EQ(MSGS / NSRQ, taken[s]);
	rc_expect_no_wc(_metadata, self->rcq);
}

/* ibv_wr_set_xrc_srqn() names the SRQ as wr.qp_type.xrc does. */
TEST_F_TIMEOUT(xrc, wr_api, 120)
{
	struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(self->ini);
	uint32_t s, len = 300;
	struct ibv_wc wc;

	ASSERT_NE(NULL, qpx);
	for (s = 0; s < NSRQ; s++)
		ASSERT_EQ(0, xrc_post_recv(self->srq[s], &self->dst,
					   xrc_slot(s, 0), SEED + s));
	rc_fill(self->src.mem, len, SEED + 9);
	ibv_wr_start(qpx);
	qpx->wr_id = 77;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qpx);
	ibv_wr_set_xrc_srqn(qpx, self->srqn[1]);
	ibv_wr_set_sge(qpx, self->src.mr->lkey, (uintptr_t)self->src.mem, len);
	ASSERT_EQ(0, ibv_wr_complete(qpx));

	RC_WAIT_WC(self->scq, 77, IBV_WC_SUCCESS, IBV_WC_SEND);
	rc_wait_wc(_metadata, self->rcq, &wc);
	RC_EXPECT_WC(wc, xrc_slot(1, 0), IBV_WC_SUCCESS, IBV_WC_RECV);
	EXPECT_EQ(len, wc.byte_len);
	EXPECT_EQ(self->tgt->qp_num, wc.qp_num);
	RC_EXPECT_PATTERN(self->dst.mem + (size_t)xrc_slot(1, 0) * SLOT, len,
			  SEED + 9);
	EXPECT_EQ(-1, xrc_tail_written(self->dst.mem +
				       (size_t)xrc_slot(1, 0) * SLOT, len,
				       SEED + 1));
	/* SRQ 0 was not named: its WQE is still there, its slot unwritten. */
	EXPECT_EQ(-1, xrc_tail_written(self->dst.mem +
				       (size_t)xrc_slot(0, 0) * SLOT, 0,
				       SEED));
	rc_expect_no_wc(_metadata, self->rcq);
}

/* An SRQ of another XRC domain: the TGT QP refuses it. */
TEST_F_TIMEOUT(xrc, srq_of_other_domain, 120)
{
	struct ibv_xrcd *other;
	struct ibv_srq *foreign;
	uint32_t srqn;
	struct ibv_wc wc;

	other = xrc_open(self->p.ctx, -1, O_CREAT);
	ASSERT_NE(NULL, other) TH_LOG("ibv_open_xrcd: %s", strerror(errno));
	foreign = xrc_create_srq(self->p.ctx, self->p.pd, other, self->rcq);
	ASSERT_NE(NULL, foreign);
	ASSERT_EQ(0, ibv_get_srq_num(foreign, &srqn));
	ASSERT_EQ(0, xrc_post_recv(foreign, &self->dst, 0, SEED));
	ASSERT_EQ(0, xrc_post_recv(self->srq[0], &self->dst, 1, SEED + 1));

	ASSERT_EQ(0, xrc_send(self->ini, &self->src, 0, 64, SEED + 2, srqn));
	rc_wait_wc(_metadata, self->scq, &wc);
	RC_EXPECT_WC(wc, 0, IBV_WC_REM_INV_REQ_ERR, -1);
	EXPECT_EQ(IBV_QPS_ERR, rc_qp_state(self->ini));
	/* Neither SRQ gave a WQE: nothing on the receive CQ, no byte. */
	rc_expect_no_wc(_metadata, self->rcq);
	RC_EXPECT_POISON(self->dst.mem, SLOT, SEED);
	RC_EXPECT_POISON(self->dst.mem + SLOT, SLOT, SEED + 1);
	/* In ERR, the next send is flushed. */
	ASSERT_EQ(0, xrc_send(self->ini, &self->src, 1, 64, SEED + 3,
			      self->srqn[0]));
	RC_WAIT_WC(self->scq, 1, IBV_WC_WR_FLUSH_ERR, -1);

	EXPECT_EQ(0, ibv_destroy_srq(foreign));
	EXPECT_EQ(0, ibv_close_xrcd(other));
}

/* A number that is no SRQ at all, and one of a basic SRQ. */
TEST_F_TIMEOUT(xrc, srqn_not_xrc, 120)
{
	struct ibv_srq_init_attr init = {
		.attr = { .max_wr = 2, .max_sge = 1 },
	};
	struct ibv_srq *basic;
	uint32_t srqn;

	basic = ibv_create_srq(self->p.pd, &init);
	ASSERT_NE(NULL, basic);
	/* A basic SRQ has no number to give. */
	EXPECT_NE(0, ibv_get_srq_num(basic, &srqn));
	ASSERT_EQ(0, xrc_post_recv(basic, &self->dst, 0, SEED));

	/* The basic SRQ was made last: its number is above the XRC SRQs'. */
	srqn = (self->srqn[0] > self->srqn[1] ? self->srqn[0] :
		self->srqn[1]) + 1;
	ASSERT_EQ(0, xrc_send(self->ini, &self->src, 0, 64, SEED + 1, srqn));
	RC_WAIT_WC(self->scq, 0, IBV_WC_REM_INV_REQ_ERR, -1);
	EXPECT_EQ(IBV_QPS_ERR, rc_qp_state(self->ini));
	RC_EXPECT_POISON(self->dst.mem, SLOT, SEED);
	EXPECT_EQ(0, ibv_destroy_srq(basic));
}

/*
 * A second process opens the domain through the same file and makes an
 * SRQ in it: this process's TGT QP delivers to it.
 */
TEST_F_TIMEOUT(xrc, shared_through_file, 180)
{
	int ready[2], status;
	uint32_t srqn = 0;
	pid_t pid;

	ASSERT_EQ(0, pipe(ready));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct ibv_device **list = ibv_get_device_list(NULL);
		struct ibv_context *ctx;
		struct ibv_xrcd *xrcd;
		struct ibv_srq *srq;
		struct ibv_pd *pd;
		struct ibv_cq *cq;
		struct rc_buf dst = { 0 };
		struct ibv_wc wc;
		int rc = 1;

		close(ready[0]);
		ctx = list && list[0] ? ibv_open_device(list[0]) : NULL;
		pd = ctx ? ibv_alloc_pd(ctx) : NULL;
		cq = ctx ? ibv_create_cq(ctx, 4, NULL, NULL, 0) : NULL;
		xrcd = ctx ? xrc_open(ctx, self->fd, 0) : NULL;
		srq = pd && cq && xrcd ? xrc_create_srq(ctx, pd, xrcd, cq) :
					 NULL;
		if (!srq || ibv_get_srq_num(srq, &srqn) ||
		    posix_memalign((void **)&dst.mem, 4096, SLOT))
			_exit(2);
		dst.size = SLOT;
		dst.mr = ibv_reg_mr(pd, dst.mem, SLOT, RC_ACCESS_ALL);
		if (!dst.mr || xrc_post_recv(srq, &dst, 0, SEED) ||
		    write(ready[1], &srqn, sizeof(srqn)) != sizeof(srqn))
			_exit(3);
		if (rc_poll(cq, &wc, 1, RC_POLL_MS) == 1 &&
		    wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
		    wc.byte_len == 300 && wc.wr_id == 0 &&
		    rc_mismatch(dst.mem, 300, SEED + 7, false) == -1 &&
		    xrc_tail_written(dst.mem, 300, SEED) == -1)
			rc = 0;
		/* Destroyed in order, each must succeed. */
		if (ibv_destroy_srq(srq) || ibv_close_xrcd(xrcd) ||
		    ibv_dereg_mr(dst.mr) || ibv_destroy_cq(cq) ||
		    ibv_dealloc_pd(pd) || ibv_close_device(ctx))
			rc = 4;
		_exit(rc);
	}
	close(ready[1]);
	ASSERT_EQ((ssize_t)sizeof(srqn), read(ready[0], &srqn, sizeof(srqn)))
		TH_LOG("the child made no SRQ");
	close(ready[0]);
	/* Not one of ours, but of our domain. */
	EXPECT_NE(self->srqn[0], srqn);
	EXPECT_NE(self->srqn[1], srqn);
	ASSERT_EQ(0, xrc_send(self->ini, &self->src, 0, 300, SEED + 7, srqn));
	RC_WAIT_WC(self->scq, 0, IBV_WC_SUCCESS, IBV_WC_SEND);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	/* Nothing came to our own SRQs' CQ. */
	rc_expect_no_wc(_metadata, self->rcq);
}

static struct ibv_qp *xrc_open_qp(struct ibv_context *ctx,
				  struct ibv_xrcd *xrcd, uint32_t qpn,
				  enum ibv_qp_type type)
{
	struct ibv_qp_open_attr attr = {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			     IBV_QP_OPEN_ATTR_TYPE,
		.qp_num = qpn,
		.xrcd = xrcd,
		.qp_type = type,
	};

	return ibv_open_qp(ctx, &attr);
}

/* ibv_open_qp() of what is not a TGT QP of the domain: EINVAL, as ib_core. */
static int xrc_open_refused(struct ibv_context *ctx, struct ibv_xrcd *xrcd,
			    uint32_t qpn, enum ibv_qp_type type)
{
	struct ibv_qp *qp;

	errno = 0;
	qp = xrc_open_qp(ctx, xrcd, qpn, type);
	if (qp) {
		ibv_destroy_qp(qp);
		return -1;
	}
	return errno == EINVAL ? 0 : -1;
}

/* The child's exit status when the QP's event did not come. */
#define XRC_NO_EVENT	50

/*
 * The child of the open_qp tests: open the domain through the file and
 * the parent's TGT QP by its number, check it and say so on ready.  Then
 * either wait for the QP's error event (events), or wait for the parent
 * to say on go that the QP failed; see the QP in ERR; close everything.
 * Exit status: 0, or the step that failed.
 */
static int xrc_open_qp_child(int fd, uint32_t tgt_qpn, uint32_t ini_qpn,
			     int ready, int go, bool events)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_qp_init_attr init;
	struct ibv_context *ctx;
	struct ibv_xrcd *xrcd, *other;
	struct ibv_qp_attr attr;
	struct ibv_qp *qp;
	char c = 'r';

	ctx = list && list[0] ? ibv_open_device(list[0]) : NULL;
	xrcd = ctx ? xrc_open(ctx, fd, 0) : NULL;
	other = ctx ? xrc_open(ctx, -1, O_CREAT) : NULL;
	if (!xrcd || !other)
		return 10;
	/* An INI QP, no QP, a TGT QP of another domain, a wrong type. */
	if (xrc_open_refused(ctx, xrcd, ini_qpn, IBV_QPT_XRC_RECV))
		return 11;
	if (xrc_open_refused(ctx, xrcd, 0xfffff0, IBV_QPT_XRC_RECV))
		return 12;
	if (xrc_open_refused(ctx, other, tgt_qpn, IBV_QPT_XRC_RECV))
		return 13;
	if (xrc_open_refused(ctx, xrcd, tgt_qpn, IBV_QPT_RC))
		return 14;

	qp = xrc_open_qp(ctx, xrcd, tgt_qpn, IBV_QPT_XRC_RECV);
	if (!qp)
		return 20;
	if (qp->qp_num != tgt_qpn || qp->qp_type != IBV_QPT_XRC_RECV)
		return 21;
	/* The QP as the parent left it: RTR, aimed at its INI QP. */
	memset(&attr, 0, sizeof(attr));
	if (ibv_query_qp(qp, &attr, IBV_QP_STATE | IBV_QP_DEST_QPN, &init) ||
	    attr.qp_state != IBV_QPS_RTR || attr.dest_qp_num != ini_qpn)
		return 22;
	if (write(ready, &c, 1) != 1)
		return 23;

	/* The parent sends to an SRQ of no domain of ours: the QP fails. */
	if (events) {
		if (!rc_wait_async(ctx, IBV_EVENT_QP_REQ_ERR, qp, 5000))
			return XRC_NO_EVENT;
	} else if (read(go, &c, 1) != 1) {
		return 30;
	}
	if (rc_qp_state(qp) != IBV_QPS_ERR)
		return 31;

	/* Closing our handle leaves the QP to the parent. */
	if (ibv_destroy_qp(qp))
		return 40;
	if (ibv_close_xrcd(other) || ibv_close_xrcd(xrcd) ||
	    ibv_close_device(ctx))
		return 41;
	ibv_free_device_list(list);
	return 0;
}

/* Fork the child of the open_qp tests; once it opened the QP, 0. */
static pid_t xrc_open_qp_fork(FIXTURE_DATA(xrc) *self, bool events, int *go)
{
	int ready[2], gop[2];
	pid_t pid;
	char c;

	if (pipe(ready) || pipe(gop))
		return -1;
	pid = fork();
	if (!pid) {
		close(ready[0]);
		close(gop[1]);
		_exit(xrc_open_qp_child(self->fd, self->tgt->qp_num,
					self->ini->qp_num, ready[1], gop[0],
					events));
	}
	close(ready[1]);
	close(gop[0]);
	*go = gop[1];
	if (pid > 0 && read(ready[0], &c, 1) != 1)
		pid = -2;
	close(ready[0]);
	return pid;
}

/* One message through the TGT QP to SRQ 0's slot 0, checked. */
static void xrc_one_message(struct __test_metadata *_metadata,
			    FIXTURE_DATA(xrc) *self, uint32_t m, uint32_t seed)
{
	struct ibv_wc wc;

	ASSERT_EQ(0, xrc_post_recv(self->srq[0], &self->dst, xrc_slot(0, 0),
				   seed));
	ASSERT_EQ(0, xrc_send(self->ini, &self->src, m, 200, seed + 1,
			      self->srqn[0]));
	RC_WAIT_WC(self->scq, m, IBV_WC_SUCCESS, IBV_WC_SEND);
	rc_wait_wc(_metadata, self->rcq, &wc);
	RC_EXPECT_WC(wc, xrc_slot(0, 0), IBV_WC_SUCCESS, IBV_WC_RECV);
	EXPECT_EQ(self->tgt->qp_num, wc.qp_num);
	EXPECT_EQ(200U, wc.byte_len);
	RC_EXPECT_PATTERN(self->dst.mem + (size_t)xrc_slot(0, 0) * SLOT, 200,
			  seed + 1);
}

/*
 * Fail the TGT QP as a responder does: a send to an SRQ of another
 * domain.  The INI QP gets REM_INV_REQ_ERR, the TGT QP goes to ERR with
 * QP_REQ_ERR, which its creator gets.  Returns the other domain's SRQ.
 */
static struct ibv_srq *xrc_fail_tgt(struct __test_metadata *_metadata,
				    FIXTURE_DATA(xrc) *self,
				    struct ibv_xrcd *other)
{
	struct ibv_srq *foreign;
	uint32_t srqn;

	foreign = xrc_create_srq(self->p.ctx, self->p.pd, other, self->rcq);
	EXPECT_NE(NULL, foreign);
	if (!foreign)
		return NULL;
	EXPECT_EQ(0, ibv_get_srq_num(foreign, &srqn));
	EXPECT_EQ(0, xrc_send(self->ini, &self->src, 1, 64, SEED + 2, srqn));
	RC_WAIT_WC(self->scq, 1, IBV_WC_REM_INV_REQ_ERR, -1);
	EXPECT_TRUE(rc_wait_async(self->p.ctx, IBV_EVENT_QP_REQ_ERR,
				  self->tgt, RC_POLL_MS));
	return foreign;
}

/*
 * Another process opens this process's TGT QP by number through the
 * shared domain (ibv_open_qp): it sees the QP's state, the QP keeps
 * receiving meanwhile, and closing the other process's handle leaves the
 * QP working here.  What is not a TGT QP of the domain cannot be opened:
 * EINVAL, as ib_core says.
 */
TEST_F_TIMEOUT(xrc, open_qp_by_number, 180)
{
	struct ibv_xrcd *other;
	struct ibv_srq *foreign;
	int status, go;
	pid_t pid;
	char c = 'g';

	pid = xrc_open_qp_fork(self, false, &go);
	ASSERT_LT(0, pid) TH_LOG("the child did not open the QP");

	/* Opened elsewhere, the QP still receives here. */
	xrc_one_message(_metadata, self, 0, SEED);

	other = xrc_open(self->p.ctx, -1, O_CREAT);
	ASSERT_NE(NULL, other);
	foreign = xrc_fail_tgt(_metadata, self, other);
	ASSERT_EQ(1, write(go, &c, 1));
	close(go);

	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status))
		TH_LOG("child failed at step %d", WEXITSTATUS(status));

	/* The child's handle is closed: the QP is still ours, in ERR. */
	EXPECT_EQ(IBV_QPS_ERR, rc_qp_state(self->tgt));
	ASSERT_EQ(0, rc_to_state(self->tgt, IBV_QPS_RESET));
	ASSERT_EQ(0, rc_to_state(self->ini, IBV_QPS_RESET));
	ASSERT_EQ(0, xrc_connect(&self->p, self->tgt, self->ini));
	xrc_one_message(_metadata, self, 2, SEED + 3);
	rc_expect_no_wc(_metadata, self->rcq);

	if (foreign)
		EXPECT_EQ(0, ibv_destroy_srq(foreign));
	EXPECT_EQ(0, ibv_close_xrcd(other));
}

/*
 * The process that opened the TGT QP gets its events too, on its own
 * handle.  Linux 6.12's ib_uverbs_open_qp() gives the handle no event
 * file, so ib_uverbs drops them: skipped, not passed, until the kernel
 * delivers them.
 */
TEST_F_TIMEOUT(xrc, open_qp_events, 180)
{
	struct ibv_xrcd *other;
	struct ibv_srq *foreign;
	int status, go;
	pid_t pid;

	pid = xrc_open_qp_fork(self, true, &go);
	ASSERT_LT(0, pid) TH_LOG("the child did not open the QP");
	close(go);

	other = xrc_open(self->p.ctx, -1, O_CREAT);
	ASSERT_NE(NULL, other);
	foreign = xrc_fail_tgt(_metadata, self, other);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	if (foreign)
		EXPECT_EQ(0, ibv_destroy_srq(foreign));
	EXPECT_EQ(0, ibv_close_xrcd(other));

	ASSERT_TRUE(WIFEXITED(status));
	if (WEXITSTATUS(status) == XRC_NO_EVENT)
		SKIP(return, "QP_REQ_ERR did not reach the handle of ibv_open_qp(): ib_uverbs_open_qp() sets no event file");
	EXPECT_EQ(0, WEXITSTATUS(status))
		TH_LOG("child failed at step %d", WEXITSTATUS(status));
}

/* What is in use cannot go, with ib_core's errno; in order, all goes. */
TEST_F(xrc, destroy_rules)
{
	struct ibv_srq_init_attr_ex bad = {
		.attr = { .max_wr = 2, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD,
		.srq_type = IBV_SRQT_XRC,
		.pd = self->p.pd,
		.xrcd = self->xrcd,
	};
	unsigned int i;

	/* The SRQs and the TGT QP hold the domain, the SRQs their CQ. */
	EXPECT_EQ(EBUSY, ibv_close_xrcd(self->xrcd));
	EXPECT_EQ(EBUSY, ibv_destroy_cq(self->rcq));
	/* An XRC SRQ without its CQ is refused. */
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_srq_ex(self->p.ctx, &bad));
	EXPECT_EQ(EINVAL, errno);

	ASSERT_EQ(0, ibv_destroy_qp(self->tgt));
	self->tgt = NULL;
	EXPECT_EQ(EBUSY, ibv_close_xrcd(self->xrcd));
	for (i = 0; i < NSRQ; i++) {
		ASSERT_EQ(0, ibv_destroy_srq(self->srq[i]));
		self->srq[i] = NULL;
	}
	EXPECT_EQ(0, ibv_destroy_cq(self->rcq));
	self->rcq = NULL;
	EXPECT_EQ(0, ibv_close_xrcd(self->xrcd));
	self->xrcd = NULL;
}

TEST_HARNESS_MAIN
