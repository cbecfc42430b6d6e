// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The extended verbs on qhca0: ibv_query_device_ex() and its completion
 * clock, ibv_create_cq_ex() with every read_* accessor on real
 * completions and their timestamps, ibv_create_qp_ex() with the ibv_wr_*
 * post API for every RC opcode (data checked byte for byte), batches,
 * ibv_wr_abort(), and the attributes a provider must refuse.
 */
#include "rc_pair.h"

#include <rdma/ib_user_verbs.h>

#define IMM		0x8badf00dU
#define XWC_MAX		64

#define ALL_WC_FLAGS \
	(IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)
#define RC_OPS \
	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | \
	 IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
	 IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | \
	 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)

/* One completion as the extended poller reads it, every accessor. */
struct xwc {
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	uint32_t vendor_err;
	uint32_t byte_len;
	uint32_t imm;			/* host order */
	uint32_t qp_num;
	uint32_t src_qp;
	unsigned int wc_flags;
	uint32_t slid;
	uint8_t sl;
	uint8_t dlid_path_bits;
	uint64_t ts;
};

static void xwc_read(struct ibv_cq_ex *cq, struct xwc *w)
{
	w->wr_id = cq->wr_id;
	w->status = cq->status;
	w->opcode = ibv_wc_read_opcode(cq);
	w->vendor_err = ibv_wc_read_vendor_err(cq);
	w->byte_len = ibv_wc_read_byte_len(cq);
	w->imm = be32toh(ibv_wc_read_imm_data(cq));
	w->qp_num = ibv_wc_read_qp_num(cq);
	w->src_qp = ibv_wc_read_src_qp(cq);
	w->wc_flags = ibv_wc_read_wc_flags(cq);
	w->slid = ibv_wc_read_slid(cq);
	w->sl = ibv_wc_read_sl(cq);
	w->dlid_path_bits = ibv_wc_read_dlid_path_bits(cq);
	w->ts = ibv_wc_read_completion_ts(cq);
}

/*
 * Reads up to n completions with start/next/end_poll within ms; returns
 * how many, or -errno of a poll call that failed otherwise than ENOENT.
 */
static int xpoll(struct ibv_cq_ex *cq, struct xwc *w, int n, long ms)
{
	struct ibv_poll_cq_attr attr = {};
	long deadline = rc_now_ms() + ms;
	int got = 0, ret;

	while (got < n) {
		ret = ibv_start_poll(cq, &attr);
		if (ret == ENOENT) {
			if (rc_now_ms() > deadline)
				break;
			continue;
		}
		if (ret)
			return -ret;
		xwc_read(cq, &w[got++]);
		while (got < n) {
			ret = ibv_next_poll(cq);
			if (ret)
				break;
			xwc_read(cq, &w[got++]);
		}
		ibv_end_poll(cq);
		if (ret && ret != ENOENT)
			return -ret;
	}
	return got;
}

FIXTURE(ext)
{
	struct rc_pair p;
	struct ibv_cq_ex *scq[2];
	struct ibv_cq_ex *rcq[2];
	struct ibv_qp_ex *qpx[2];
	struct rc_buf buf[2];
	struct ibv_device_attr_ex dattr;
	long doorbells;
};

static struct ibv_cq_ex *ext_cq(struct ibv_context *ctx, uint64_t wc_flags)
{
	struct ibv_cq_init_attr_ex attr = {
		.cqe = 128,
		.wc_flags = wc_flags,
	};

	return ibv_create_cq_ex(ctx, &attr);
}

static struct ibv_qp *ext_qp_cap(struct rc_pair *p, struct ibv_cq *scq,
				 struct ibv_cq *rcq, enum ibv_qp_type type,
				 uint32_t comp_mask, uint64_t ops,
				 struct ibv_qp_cap *cap)
{
	struct ibv_qp_init_attr_ex attr = {
		.send_cq = scq,
		.recv_cq = rcq,
		.qp_type = type,
		.cap = {
			.max_send_wr = 64,
			.max_recv_wr = 64,
			.max_send_sge = 4,
			.max_recv_sge = 4,
			.max_inline_data = 128,
		},
		.comp_mask = comp_mask,
		.pd = p->pd,
		.send_ops_flags = ops,
	};

	struct ibv_qp *qp;

	qp = ibv_create_qp_ex(p->ctx, &attr);
	if (qp && cap)
		*cap = attr.cap;
	return qp;
}

static struct ibv_qp *ext_qp(struct rc_pair *p, struct ibv_cq *scq,
			     struct ibv_cq *rcq, enum ibv_qp_type type,
			     uint32_t comp_mask, uint64_t ops)
{
	return ext_qp_cap(p, scq, rcq, type, comp_mask, ops, NULL);
}

/*
 * rc_pair_open()'s pair, its CQs and QPs replaced by extended ones: each
 * side's send and receive CQ with every wc_flag, QPs of type with the send
 * operations ops.  RC QPs are connected.
 */
static void ext_open(struct __test_metadata *_metadata,
		     FIXTURE_DATA(ext) *self, enum ibv_qp_type type,
		     uint64_t ops)
{
	struct rc_opts o;
	int i;

	rc_default_opts(&o);
	o.qp_type = type;
	rc_pair_open(_metadata, &self->p, &o);
	for (i = 0; i < 2; i++) {
		struct rc_side *s = &self->p.s[i];

		ASSERT_EQ(0, ibv_destroy_qp(s->qp));
		ASSERT_EQ(0, ibv_destroy_cq(s->scq));
		ASSERT_EQ(0, ibv_destroy_cq(s->rcq));
		s->qp = NULL;
		s->scq = NULL;
		s->rcq = NULL;

		self->scq[i] = ext_cq(self->p.ctx, ALL_WC_FLAGS);
		ASSERT_NE(NULL, self->scq[i]) TH_LOG("ibv_create_cq_ex: %s",
						     strerror(errno));
		s->scq = ibv_cq_ex_to_cq(self->scq[i]);
		self->rcq[i] = ext_cq(self->p.ctx, ALL_WC_FLAGS);
		ASSERT_NE(NULL, self->rcq[i]);
		s->rcq = ibv_cq_ex_to_cq(self->rcq[i]);
		s->qp = ext_qp_cap(&self->p, s->scq, s->rcq, type,
				   IBV_QP_INIT_ATTR_PD |
				   IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, ops,
				   &s->cap);
		ASSERT_NE(NULL, s->qp) TH_LOG("ibv_create_qp_ex: %s",
					      strerror(errno));
		self->qpx[i] = ibv_qp_to_qp_ex(s->qp);
		ASSERT_NE(NULL, self->qpx[i]);
		rc_buf_alloc(_metadata, &self->buf[i], self->p.pd, 65536,
			     RC_ACCESS_ALL);
	}
	if (type == IBV_QPT_RC)
		rc_pair_connect(_metadata, &self->p);
	ASSERT_EQ(0, ibv_query_device_ex(self->p.ctx, NULL, &self->dattr));
}

FIXTURE_SETUP(ext)
{
	ext_open(_metadata, self, IBV_QPT_RC, RC_OPS);
}

FIXTURE_TEARDOWN(ext)
{
	rc_buf_free(_metadata, &self->buf[0]);
	rc_buf_free(_metadata, &self->buf[1]);
	rc_pair_close(_metadata, &self->p);
}

/* Exactly one completion on cq, within RC_POLL_MS. */
#define XWAIT(cq, w) \
	ASSERT_EQ(1, xpoll((cq), (w), 1, RC_POLL_MS)) \
		TH_LOG("no completion within %d ms", RC_POLL_MS)

#define XEXPECT(w, id, st, op) do {					\
	EXPECT_EQ((uint64_t)(id), (w).wr_id);				\
	EXPECT_EQ((int)(st), (int)(w).status)				\
		TH_LOG("status %s", ibv_wc_status_str((w).status));	\
	EXPECT_EQ((int)(op), (int)(w).opcode);				\
	EXPECT_EQ(0U, (w).vendor_err);					\
} while (0)

/* Nothing more on cq for RC_QUIET_MS. */
static void expect_quiet(struct __test_metadata *_metadata,
			 struct ibv_cq_ex *cq)
{
	struct xwc w;

	EXPECT_EQ(0, xpoll(cq, &w, 1, RC_QUIET_MS))
		TH_LOG("unexpected completion wr_id %#llx status %s",
		       (unsigned long long)w.wr_id,
		       ibv_wc_status_str(w.status));
}

static long doorbells(void)
{
	return qhca_hw_counter_fresh("doorbells");
}

/* A receive at QP 1 into buf[1] + off. */
static int post_recv(FIXTURE_DATA(ext) *self, uint64_t wr_id, size_t off,
		     uint32_t len)
{
	struct ibv_sge sge = rc_sge(&self->buf[1], off, len);

	return rc_post_recv(self->p.s[1].qp, wr_id, &sge, 1);
}

/* A receive at QP 1, every field the extended poller reads. */
static void expect_recv(struct __test_metadata *_metadata,
			FIXTURE_DATA(ext) *self, const struct xwc *w,
			uint64_t wr_id, enum ibv_wc_opcode op, uint32_t len,
			bool imm)
{
	XEXPECT(*w, wr_id, IBV_WC_SUCCESS, op);
	EXPECT_EQ(len, w->byte_len);
	EXPECT_EQ(self->p.s[1].qp->qp_num, w->qp_num);
	EXPECT_EQ(self->p.s[0].qp->qp_num, w->src_qp);
	EXPECT_EQ(self->p.pattr.lid, w->slid);
	EXPECT_EQ(0, w->sl);
	EXPECT_EQ(0, w->dlid_path_bits);
	EXPECT_EQ(imm ? (unsigned int)IBV_WC_WITH_IMM : 0U, w->wc_flags);
	if (imm)
		EXPECT_EQ(IMM, w->imm);
	EXPECT_NE(0ULL, w->ts);
}

/* A send completion at QP 0. */
static void expect_send(struct __test_metadata *_metadata,
			FIXTURE_DATA(ext) *self, const struct xwc *w,
			uint64_t wr_id, enum ibv_wc_opcode op)
{
	XEXPECT(*w, wr_id, IBV_WC_SUCCESS, op);
	EXPECT_EQ(self->p.s[0].qp->qp_num, w->qp_num);
	EXPECT_EQ(0U, w->wc_flags);
	EXPECT_NE(0ULL, w->ts);
}

/* ---- The device -------------------------------------------------------- */

TEST(query_device_ex)
{
	struct ibv_device_attr_ex ax;
	struct ibv_device_attr a;
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_device *dev;

	QHCA_ASSERT_DEVICE(list, dev);
	ctx = ibv_open_device(dev);
	ASSERT_NE(NULL, ctx);
	memset(&ax, 0xa5, sizeof(ax));
	ASSERT_EQ(0, ibv_query_device_ex(ctx, NULL, &ax));
	ASSERT_EQ(0, ibv_query_device(ctx, &a));

	/* The CQE clock: ns, every bit of the 64 valid. */
	EXPECT_EQ(QHCA_CQE_CLOCK_KHZ, ax.hca_core_clock);
	EXPECT_EQ(UINT64_MAX, ax.completion_timestamp_mask);
	/* The 32-bit flags are the low half of the 64-bit ones. */
	EXPECT_EQ((uint64_t)a.device_cap_flags,
		  ax.device_cap_flags_ex & 0xffffffffULL);
	EXPECT_NE(0ULL, ax.device_cap_flags_ex & IBV_DEVICE_RC_RNR_NAK_GEN);
	EXPECT_EQ(a.max_qp, ax.orig_attr.max_qp);
	EXPECT_EQ(a.max_qp_wr, ax.orig_attr.max_qp_wr);
	EXPECT_EQ(a.max_cqe, ax.orig_attr.max_cqe);
	EXPECT_EQ(a.max_sge, ax.orig_attr.max_sge);
	EXPECT_EQ(a.max_qp_rd_atom, ax.orig_attr.max_qp_rd_atom);
	EXPECT_EQ(a.atomic_cap, ax.orig_attr.atomic_cap);
	EXPECT_EQ(0, strcmp(a.fw_ver, ax.orig_attr.fw_ver));
	EXPECT_EQ(1U, ax.phys_port_cnt_ex);
	/* Nothing the device does not do (odp.c checks the ODP caps, 1.8). */
	EXPECT_EQ(0U, ax.tso_caps.max_tso);
	EXPECT_EQ(0U, ax.rss_caps.max_rwq_indirection_tables);
	/* Device memory (1.7): the default dm-size, all of BAR 4. */
	EXPECT_EQ((uint64_t)QHCA_DEFAULT_DM_SIZE, ax.max_dm_size);

	EXPECT_EQ(0, ibv_close_device(ctx));
	ibv_free_device_list(list);
}

/* ---- Creating: what is refused ------------------------------------------ */

TEST_F(ext, cq_ex_refused)
{
	static const uint64_t bad[] = {
		IBV_WC_EX_WITH_CVLAN, IBV_WC_EX_WITH_FLOW_TAG,
		IBV_WC_EX_WITH_TM_INFO,
		IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK, 1ULL << 40,
	};
	struct ibv_cq_init_attr_ex attr = { .cqe = 8 };
	struct ibv_poll_cq_attr pattr = { .comp_mask = 1 };
	struct ibv_cq_ex *cq;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		attr.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | bad[i];
		errno = 0;
		cq = ibv_create_cq_ex(self->p.ctx, &attr);
		EXPECT_EQ(NULL, cq) TH_LOG("wc_flags %#llx accepted",
					   (unsigned long long)attr.wc_flags);
		EXPECT_EQ(EOPNOTSUPP, errno);
		if (cq)
			ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
	}

	attr.wc_flags = IBV_WC_EX_WITH_BYTE_LEN;
	attr.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
	attr.flags = IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN;
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_cq_ex(self->p.ctx, &attr));
	EXPECT_EQ(EOPNOTSUPP, errno);

	/* A PD that is no parent domain (import_pd.c makes real ones). */
	attr.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD;
	attr.flags = 0;
	attr.parent_domain = self->p.pd;
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_cq_ex(self->p.ctx, &attr));
	EXPECT_EQ(EINVAL, errno);

	/* Single-threaded is a hint; the minimum of flags is fine. */
	attr.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
	attr.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED;
	attr.wc_flags = 0;
	cq = ibv_create_cq_ex(self->p.ctx, &attr);
	ASSERT_NE(NULL, cq) TH_LOG("%s", strerror(errno));
	/* An empty CQ, and poll attributes that do not exist. */
	EXPECT_EQ(ENOENT, ibv_start_poll(cq, &(struct ibv_poll_cq_attr){}));
	EXPECT_EQ(EINVAL, ibv_start_poll(cq, &pattr));
	EXPECT_EQ(0, ibv_destroy_cq(ibv_cq_ex_to_cq(cq)));
}

TEST_F(ext, qp_ex_refused)
{
	/*
	 * LOCAL_INV, BIND_MW and SEND_WITH_INV are 1.2's (tests/mw.c);
	 * FLUSH and ATOMIC_WRITE 1.6's, RC only (tests/flush_atomic_write.c),
	 * where the device offers them (below).
	 */
	static const uint64_t bad_rc[] = { IBV_QP_EX_WITH_TSO };
	static const uint64_t placement[] = {
		IBV_QP_EX_WITH_FLUSH, IBV_QP_EX_WITH_ATOMIC_WRITE,
	};
	static const uint64_t placement_cap[] = {
		IB_UVERBS_DEVICE_FLUSH_GLOBAL, IB_UVERBS_DEVICE_ATOMIC_WRITE,
	};
	struct ibv_cq *cq = self->p.s[0].scq;
	struct ibv_qp_init_attr_ex cf = {};
	struct ibv_qp *qp;
	size_t i;

	for (i = 0; i < sizeof(bad_rc) / sizeof(bad_rc[0]); i++) {
		errno = 0;
		qp = ext_qp(&self->p, cq, cq, IBV_QPT_RC,
			    IBV_QP_INIT_ATTR_PD |
			    IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
			    IBV_QP_EX_WITH_SEND | bad_rc[i]);
		EXPECT_EQ(NULL, qp) TH_LOG("RC send op %#llx accepted",
					   (unsigned long long)bad_rc[i]);
		EXPECT_EQ(EOPNOTSUPP, errno);
	}

	for (i = 0; i < 2; i++) {
		bool offered = self->dattr.device_cap_flags_ex &
			       placement_cap[i];

		errno = 0;
		qp = ext_qp(&self->p, cq, cq, IBV_QPT_RC,
			    IBV_QP_INIT_ATTR_PD |
			    IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, placement[i]);
		EXPECT_EQ(offered, qp != NULL)
			TH_LOG("RC send op %#llx: QP %p, capability %d",
			       (unsigned long long)placement[i], qp, offered);
		if (qp) {
			EXPECT_EQ(0, ibv_destroy_qp(qp));
		} else {
			EXPECT_EQ(EOPNOTSUPP, errno);
		}
		errno = 0;
		EXPECT_EQ(NULL, ext_qp(&self->p, cq, cq, IBV_QPT_UC,
				       IBV_QP_INIT_ATTR_PD |
				       IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
				       placement[i]));
		EXPECT_EQ(EOPNOTSUPP, errno);
	}

	/* UC has no reads or atomics; UD sends only. */
	errno = 0;
	EXPECT_EQ(NULL, ext_qp(&self->p, cq, cq, IBV_QPT_UC,
			       IBV_QP_INIT_ATTR_PD |
			       IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
			       IBV_QP_EX_WITH_RDMA_READ));
	EXPECT_EQ(EOPNOTSUPP, errno);
	errno = 0;
	EXPECT_EQ(NULL, ext_qp(&self->p, cq, cq, IBV_QPT_UC,
			       IBV_QP_INIT_ATTR_PD |
			       IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
			       IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD));
	EXPECT_EQ(EOPNOTSUPP, errno);
	errno = 0;
	EXPECT_EQ(NULL, ext_qp(&self->p, cq, cq, IBV_QPT_UD,
			       IBV_QP_INIT_ATTR_PD |
			       IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
			       IBV_QP_EX_WITH_RDMA_WRITE));
	EXPECT_EQ(EOPNOTSUPP, errno);

	/* No PD; attributes the device has no use for. */
	errno = 0;
	EXPECT_EQ(NULL, ext_qp(&self->p, cq, cq, IBV_QPT_RC,
			       IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
			       IBV_QP_EX_WITH_SEND));
	EXPECT_EQ(EINVAL, errno);
	/*
	 * CREATE_FLAGS only says that create_flags is valid: none is fine
	 * (rdma-core's tests/test_qp.py sets it so), any flag is refused.
	 */
	cf.send_cq = cq;
	cf.recv_cq = cq;
	cf.qp_type = IBV_QPT_RC;
	cf.cap.max_send_wr = 1;
	cf.cap.max_recv_wr = 1;
	cf.cap.max_send_sge = 1;
	cf.cap.max_recv_sge = 1;
	cf.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS;
	cf.pd = self->p.pd;
	qp = ibv_create_qp_ex(self->p.ctx, &cf);
	ASSERT_NE(NULL, qp) TH_LOG("no create flag: %s", strerror(errno));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	cf.create_flags = IBV_QP_CREATE_BLOCK_SELF_MCAST_LB;
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_qp_ex(self->p.ctx, &cf));
	EXPECT_EQ(EOPNOTSUPP, errno);

	/* What is allowed: UC writes, UD sends with an address. */
	qp = ext_qp(&self->p, cq, cq, IBV_QPT_UC,
		    IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		    IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM);
	ASSERT_NE(NULL, qp) TH_LOG("UC: %s", strerror(errno));
	ASSERT_NE(NULL, ibv_qp_to_qp_ex(qp));
	EXPECT_NE(NULL, ibv_qp_to_qp_ex(qp)->wr_rdma_write_imm);
	EXPECT_EQ(NULL, ibv_qp_to_qp_ex(qp)->wr_rdma_read);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	qp = ext_qp(&self->p, cq, cq, IBV_QPT_UD,
		    IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		    IBV_QP_EX_WITH_SEND_WITH_IMM);
	ASSERT_NE(NULL, qp) TH_LOG("UD: %s", strerror(errno));
	ASSERT_NE(NULL, ibv_qp_to_qp_ex(qp));
	EXPECT_NE(NULL, ibv_qp_to_qp_ex(qp)->wr_set_ud_addr);
	EXPECT_EQ(0, ibv_destroy_qp(qp));

	/* A QP made without send_ops_flags has no ibv_qp_ex. */
	qp = ext_qp(&self->p, cq, cq, IBV_QPT_RC, IBV_QP_INIT_ATTR_PD, 0);
	ASSERT_NE(NULL, qp);
	EXPECT_EQ(NULL, ibv_qp_to_qp_ex(qp));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

/* ---- Completions: every accessor ---------------------------------------- */

/* SEND with immediate, received: the ibv_post_send() path, extended CQs. */
TEST_F(ext, read_send_imm)
{
	struct ibv_sge sge = rc_sge(&self->buf[0], 0, 3000);
	struct xwc w;

	rc_fill(self->buf[0].mem, 3000, 1);
	rc_prepare_dst(&self->buf[1], 0, 3000, 1);
	ASSERT_EQ(0, post_recv(self, 0x100, 0, 4096));
	ASSERT_EQ(0, rc_post_imm(self->p.s[0].qp, 0x101,
				 IBV_WR_SEND_WITH_IMM, IBV_SEND_SIGNALED,
				 &sge, 1, 0, 0, IMM));
	XWAIT(self->rcq[1], &w);
	expect_recv(_metadata, self, &w, 0x100, IBV_WC_RECV, 3000, true);
	XWAIT(self->scq[0], &w);
	expect_send(_metadata, self, &w, 0x101, IBV_WC_SEND);
	RC_EXPECT_DELIVERED(&self->buf[1], 0, 3000, 1);
	expect_quiet(_metadata, self->scq[0]);
	expect_quiet(_metadata, self->rcq[1]);
}

/* RDMA WRITE with immediate; ibv_poll_cq() works on an extended CQ too. */
TEST_F(ext, read_write_imm_and_poll_cq)
{
	struct ibv_qp_ex *q = self->qpx[0];
	struct ibv_wc wc;
	struct xwc w;

	rc_fill(self->buf[0].mem, 5000, 3);
	rc_prepare_dst(&self->buf[1], 100, 5000, 3);
	ASSERT_EQ(0, post_recv(self, 0x200, 0, 0));
	ibv_wr_start(q);
	q->wr_id = 0x201;
	q->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write_imm(q, self->buf[1].mr->rkey,
			      (uintptr_t)self->buf[1].mem + 100, htobe32(IMM));
	ibv_wr_set_sge(q, self->buf[0].mr->lkey, (uintptr_t)self->buf[0].mem,
		       5000);
	ASSERT_EQ(0, ibv_wr_complete(q));

	XWAIT(self->rcq[1], &w);
	expect_recv(_metadata, self, &w, 0x200, IBV_WC_RECV_RDMA_WITH_IMM,
		    5000, true);
	rc_wait_wc(_metadata, self->p.s[0].scq, &wc);
	RC_EXPECT_WC(wc, 0x201, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	EXPECT_EQ(self->p.s[0].qp->qp_num, wc.qp_num);
	RC_EXPECT_DELIVERED(&self->buf[1], 100, 5000, 3);
}

/* RDMA READ and both atomics, posted with ibv_wr_*, read back. */
TEST_F(ext, read_rdma_read_atomics)
{
	struct ibv_qp_ex *q = self->qpx[0];
	uint64_t *remote = (uint64_t *)(self->buf[1].mem + 8192);
	uint64_t *result = (uint64_t *)(self->buf[0].mem + 8192);
	struct xwc w[3];

	rc_fill(self->buf[1].mem, 7000, 4);
	rc_prepare_dst(&self->buf[0], 10, 7000, 4);
	remote[0] = 0x1111222233334444ULL;
	remote[1] = 1000;
	result[0] = 0;
	result[1] = 0;

	ibv_wr_start(q);
	q->wr_flags = IBV_SEND_SIGNALED;
	q->wr_id = 0x301;
	ibv_wr_rdma_read(q, self->buf[1].mr->rkey,
			 (uintptr_t)self->buf[1].mem);
	ibv_wr_set_sge(q, self->buf[0].mr->lkey,
		       (uintptr_t)self->buf[0].mem + 10, 7000);
	q->wr_id = 0x302;
	ibv_wr_atomic_cmp_swp(q, self->buf[1].mr->rkey, (uintptr_t)remote,
			      0x1111222233334444ULL, 0x5555666677778888ULL);
	ibv_wr_set_sge(q, self->buf[0].mr->lkey, (uintptr_t)&result[0], 8);
	q->wr_id = 0x303;
	ibv_wr_atomic_fetch_add(q, self->buf[1].mr->rkey,
				(uintptr_t)&remote[1], 234);
	ibv_wr_set_sge(q, self->buf[0].mr->lkey, (uintptr_t)&result[1], 8);
	ASSERT_EQ(0, ibv_wr_complete(q));

	ASSERT_EQ(3, xpoll(self->scq[0], w, 3, RC_POLL_MS));
	expect_send(_metadata, self, &w[0], 0x301, IBV_WC_RDMA_READ);
	EXPECT_EQ(7000U, w[0].byte_len);
	expect_send(_metadata, self, &w[1], 0x302, IBV_WC_COMP_SWAP);
	EXPECT_EQ(8U, w[1].byte_len);
	expect_send(_metadata, self, &w[2], 0x303, IBV_WC_FETCH_ADD);
	EXPECT_EQ(8U, w[2].byte_len);
	EXPECT_LE(w[0].ts, w[1].ts);
	EXPECT_LE(w[1].ts, w[2].ts);

	RC_EXPECT_PATTERN(self->buf[0].mem + 10, 7000, 4);
	EXPECT_EQ(0x1111222233334444ULL, result[0]);
	EXPECT_EQ(0x5555666677778888ULL, remote[0]);
	EXPECT_EQ(1000ULL, result[1]);
	EXPECT_EQ(1234ULL, remote[1]);
	expect_quiet(_metadata, self->rcq[1]);
}

/* An error CQE: a write to an rkey that does not exist. */
TEST_F(ext, read_error)
{
	struct ibv_qp_ex *q = self->qpx[0];
	struct xwc w;

	rc_prepare_dst(&self->buf[1], 0, 100, 5);
	ibv_wr_start(q);
	q->wr_id = 0x401;
	q->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(q, self->buf[1].mr->rkey ^ 0x5a00,
			  (uintptr_t)self->buf[1].mem);
	ibv_wr_set_sge(q, self->buf[0].mr->lkey, (uintptr_t)self->buf[0].mem,
		       100);
	ASSERT_EQ(0, ibv_wr_complete(q));
	XWAIT(self->scq[0], &w);
	EXPECT_EQ(0x401ULL, w.wr_id);
	EXPECT_EQ((int)IBV_WC_REM_ACCESS_ERR, (int)w.status)
		TH_LOG("status %s", ibv_wc_status_str(w.status));
	EXPECT_EQ(0U, w.vendor_err);
	EXPECT_EQ(self->p.s[0].qp->qp_num, w.qp_num);
	EXPECT_NE(0ULL, w.ts);
	RC_EXPECT_UNTOUCHED(&self->buf[1], 0, 100, 5);
	EXPECT_EQ(IBV_QPS_ERR, rc_qp_state(self->p.s[0].qp));
}

/* ---- Timestamps ---------------------------------------------------------- */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * Timestamps never go back, within a CQ and between the two ends of a
 * message, and they follow the guest's clock: two completions 200 ms
 * apart are 200 ms apart on the device's clock, give or take.
 */
TEST_F(ext, timestamps)
{
	struct ibv_qp_ex *q = self->qpx[0];
	struct xwc s[16], r[16];
	uint64_t t0, t1 = 0, dev_ns, mono = 0;
	int i, round;

	ASSERT_EQ(QHCA_CQE_CLOCK_KHZ, self->dattr.hca_core_clock);
	for (round = 0; round < 2; round++) {
		for (i = 0; i < 8; i++)
			ASSERT_EQ(0, post_recv(self, 0x500 + i, i * 64, 64));
		/*
		 * The interval the two clocks measure: a stimulus, not a
		 * wait for anything.
		 */
		if (round)
			usleep(200000);
		t0 = mono_ns();
		ibv_wr_start(q);
		for (i = 0; i < 8; i++) {
			q->wr_id = 0x600 + i;
			q->wr_flags = IBV_SEND_SIGNALED;
			ibv_wr_send(q);
			ibv_wr_set_sge(q, self->buf[0].mr->lkey,
				       (uintptr_t)self->buf[0].mem, 64);
		}
		ASSERT_EQ(0, ibv_wr_complete(q));
		ASSERT_EQ(8, xpoll(self->scq[0], s + round * 8, 8,
				   RC_POLL_MS));
		ASSERT_EQ(8, xpoll(self->rcq[1], r + round * 8, 8,
				   RC_POLL_MS));
		t1 = mono_ns();
		if (!round)
			mono = t0;
	}
	mono = t1 - mono;

	for (i = 0; i < 16; i++) {
		EXPECT_NE(0ULL, s[i].ts);
		EXPECT_NE(0ULL, r[i].ts);
		/* A message is received before its send completes. */
		EXPECT_LE(r[i].ts, s[i].ts);
		if (i) {
			EXPECT_LE(s[i - 1].ts, s[i].ts);
			EXPECT_LE(r[i - 1].ts, r[i].ts);
		}
	}
	/* Ticks to ns at hca_core_clock kHz: here 1:1. */
	dev_ns = (s[8].ts - s[7].ts) * 1000000ULL /
		 self->dattr.hca_core_clock;
	EXPECT_GE(dev_ns, 150000000ULL) TH_LOG("%llu ns on the device",
					       (unsigned long long)dev_ns);
	/* Never more than the guest saw from first post to last poll. */
	EXPECT_LE(s[15].ts - s[0].ts, mono + 50000000ULL)
		TH_LOG("device %llu ns, guest %llu ns",
		       (unsigned long long)(s[15].ts - s[0].ts),
		       (unsigned long long)mono);
}

/* ---- The ibv_wr_* API ------------------------------------------------------ */

/*
 * Every data-moving RC opcode and every way to give the data, in one
 * batch: SEND from an SGE list, SEND_WITH_IMM inline from a buffer list,
 * RDMA_WRITE inline, RDMA_WRITE_WITH_IMM from SGEs.  Then the doorbell
 * count: one for the batch.
 */
TEST_F(ext, wr_every_opcode)
{
	struct ibv_qp_ex *q = self->qpx[0];
	uint8_t *src = self->buf[0].mem, *dst = self->buf[1].mem;
	uint32_t lkey = self->buf[0].mr->lkey, rkey = self->buf[1].mr->rkey;
	struct ibv_sge sges[3] = {
		{ (uintptr_t)src, 1000, lkey },
		{ (uintptr_t)src + 1000, 1, lkey },
		{ (uintptr_t)src + 1001, 2999, lkey },
	};
	struct ibv_data_buf bufs[3] = {
		{ src + 10000, 7 }, { src + 10007, 0 }, { src + 10007, 121 },
	};
	struct xwc s[4], r[3];
	long before;
	int i;

	rc_fill(src, 4000, 6);
	rc_fill(src + 10000, 128, 7);
	rc_fill(src + 20000, 100, 8);
	rc_fill(src + 30000, 9000, 9);
	rc_poison(dst, self->buf[1].size, 10);
	ASSERT_EQ(0, post_recv(self, 0x700, 0, 4000));
	ASSERT_EQ(0, post_recv(self, 0x701, 5000, 128));
	ASSERT_EQ(0, post_recv(self, 0x702, 5200, 0));

	before = doorbells();
	ASSERT_GE(before, 0);
	ibv_wr_start(q);
	q->wr_flags = IBV_SEND_SIGNALED;
	q->wr_id = 0x800;
	ibv_wr_send(q);
	ibv_wr_set_sge_list(q, 3, sges);
	q->wr_id = 0x801;
	ibv_wr_send_imm(q, htobe32(IMM));
	ibv_wr_set_inline_data_list(q, 3, bufs);
	q->wr_id = 0x802;
	ibv_wr_rdma_write(q, rkey, (uintptr_t)dst + 20000);
	ibv_wr_set_inline_data(q, src + 20000, 100);
	q->wr_id = 0x803;
	ibv_wr_rdma_write_imm(q, rkey, (uintptr_t)dst + 30000, htobe32(IMM));
	ibv_wr_set_sge_list(q, 2, (struct ibv_sge[]){
		{ (uintptr_t)src + 30000, 4500, lkey },
		{ (uintptr_t)src + 34500, 4500, lkey } });
	ASSERT_EQ(0, ibv_wr_complete(q));

	ASSERT_EQ(4, xpoll(self->scq[0], s, 4, RC_POLL_MS));
	for (i = 0; i < 4; i++)
		expect_send(_metadata, self, &s[i], 0x800 + i,
			    i < 2 ? IBV_WC_SEND : IBV_WC_RDMA_WRITE);
	ASSERT_EQ(3, xpoll(self->rcq[1], r, 3, RC_POLL_MS));
	expect_recv(_metadata, self, &r[0], 0x700, IBV_WC_RECV, 4000, false);
	expect_recv(_metadata, self, &r[1], 0x701, IBV_WC_RECV, 128, true);
	expect_recv(_metadata, self, &r[2], 0x702, IBV_WC_RECV_RDMA_WITH_IMM,
		    9000, true);
	EXPECT_EQ(before + 1, doorbells()) TH_LOG("one doorbell per batch");

	RC_EXPECT_PATTERN(dst, 4000, 6);
	RC_EXPECT_PATTERN(dst + 5000, 128, 7);
	RC_EXPECT_PATTERN(dst + 20000, 100, 8);
	RC_EXPECT_PATTERN(dst + 30000, 9000, 9);
	/* Around the messages, nothing was written. */
	for (i = 4000; i < 5000; i++)
		ASSERT_EQ((uint8_t)~rc_pattern(10, i), dst[i]);
	for (i = 5128; i < 20000; i++)
		ASSERT_EQ((uint8_t)~rc_pattern(10, i), dst[i]);
	for (i = 20100; i < 30000; i++)
		ASSERT_EQ((uint8_t)~rc_pattern(10, i), dst[i]);
	for (i = 39000; i < (int)self->buf[1].size; i++)
		ASSERT_EQ((uint8_t)~rc_pattern(10, i), dst[i]);
}

/* A long batch of unsignaled writes, the last signaled, wraps the ring. */
TEST_F(ext, wr_batches)
{
	struct ibv_qp_ex *q = self->qpx[0];
	uint8_t *src = self->buf[0].mem, *dst = self->buf[1].mem;
	struct xwc w;
	int round, i;

	rc_fill(src, 48 * 1000, 11);
	for (round = 0; round < 3; round++) {
		memset(dst, 0, 48 * 1000);
		ibv_wr_start(q);
		for (i = 0; i < 48; i++) {
			q->wr_id = round * 100 + i;
			q->wr_flags = i == 47 ? IBV_SEND_SIGNALED : 0;
			ibv_wr_rdma_write(q, self->buf[1].mr->rkey,
					  (uintptr_t)dst + i * 1000);
			if (i % 2)
				ibv_wr_set_inline_data(q, src + i * 1000, 100);
			else
				ibv_wr_set_sge(q, self->buf[0].mr->lkey,
					       (uintptr_t)src + i * 1000,
					       1000);
		}
		ASSERT_EQ(0, ibv_wr_complete(q));
		XWAIT(self->scq[0], &w);
		expect_send(_metadata, self, &w, round * 100 + 47,
			    IBV_WC_RDMA_WRITE);
		for (i = 0; i < 48; i++) {
			size_t len = i % 2 ? 100 : 1000;

			EXPECT_EQ(0, memcmp(dst + i * 1000, src + i * 1000,
					    len)) TH_LOG("WR %d", i);
		}
	}
	expect_quiet(_metadata, self->scq[0]);
}

/* ibv_wr_abort() posts nothing; the next batch reuses the slots. */
TEST_F(ext, wr_abort)
{
	struct ibv_qp_ex *q = self->qpx[0];
	struct xwc w;
	long before;
	int i;

	rc_fill(self->buf[0].mem, 1000, 12);
	rc_prepare_dst(&self->buf[1], 0, 1000, 13);
	before = doorbells();
	ibv_wr_start(q);
	for (i = 0; i < 5; i++) {
		q->wr_id = 0x900 + i;
		q->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_rdma_write(q, self->buf[1].mr->rkey,
				  (uintptr_t)self->buf[1].mem);
		ibv_wr_set_sge(q, self->buf[0].mr->lkey,
			       (uintptr_t)self->buf[0].mem, 1000);
	}
	ibv_wr_abort(q);
	expect_quiet(_metadata, self->scq[0]);
	RC_EXPECT_UNTOUCHED(&self->buf[1], 0, 1000, 13);
	EXPECT_EQ(before, doorbells());

	ibv_wr_start(q);
	q->wr_id = 0x9ff;
	q->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(q, self->buf[1].mr->rkey,
			  (uintptr_t)self->buf[1].mem);
	ibv_wr_set_sge(q, self->buf[0].mr->lkey, (uintptr_t)self->buf[0].mem,
		       1000);
	ASSERT_EQ(0, ibv_wr_complete(q));
	XWAIT(self->scq[0], &w);
	expect_send(_metadata, self, &w, 0x9ff, IBV_WC_RDMA_WRITE);
	expect_quiet(_metadata, self->scq[0]);
	RC_EXPECT_PATTERN(self->buf[1].mem, 1000, 12);
}

/*
 * A batch with one bad WR fails whole, with the errno of the first error,
 * and posts nothing; the QP goes on working.
 */
TEST_F(ext, wr_errors)
{
	struct ibv_qp_ex *q = self->qpx[0];
	uint32_t lkey = self->buf[0].mr->lkey, rkey = self->buf[1].mr->rkey;
	uint64_t src = (uintptr_t)self->buf[0].mem;
	uint64_t dst = (uintptr_t)self->buf[1].mem;
	struct ibv_sge many[64];
	struct xwc w;
	int i, bad;

	/* The provider may grant more SGEs than asked for: one more. */
	ASSERT_LT(self->p.s[0].cap.max_send_sge, 64U);
	for (i = 0; i < 64; i++)
		many[i] = rc_sge(&self->buf[0], i * 10, 10);

	for (bad = 0; bad < 6; bad++) {
		ibv_wr_start(q);
		q->wr_flags = IBV_SEND_SIGNALED;
		q->wr_id = 1;
		ibv_wr_rdma_write(q, rkey, dst);
		ibv_wr_set_sge(q, lkey, src, 8);
		q->wr_id = 2;
		switch (bad) {
		case 0:		/* inline data for a read */
			ibv_wr_rdma_read(q, rkey, dst);
			ibv_wr_set_inline_data(q, self->buf[0].mem, 8);
			break;
		case 1:		/* more inline data than the QP has room for */
			ibv_wr_send(q);
			ibv_wr_set_inline_data(q, self->buf[0].mem,
					       self->p.s[0].cap.max_inline_data
					       + 4096);
			break;
		case 2:		/* more SGEs than max_send_sge */
			ibv_wr_send(q);
			ibv_wr_set_sge_list(q,
					    self->p.s[0].cap.max_send_sge + 1,
					    many);
			break;
		case 3:		/* a send flag that does not exist */
			q->wr_flags = 1U << 30;
			ibv_wr_send(q);
			ibv_wr_set_sge(q, lkey, src, 8);
			break;
		case 4:		/* inline buffers adding up to too much */
			ibv_wr_send(q);
			ibv_wr_set_inline_data_list(q, 2, (struct ibv_data_buf[]){
				{ self->buf[0].mem, 64 },
				{ self->buf[0].mem,
				  self->p.s[0].cap.max_inline_data - 63 } });
			break;
		case 5:		/* inline data for an atomic */
			ibv_wr_atomic_fetch_add(q, rkey, dst, 1);
			ibv_wr_set_inline_data(q, self->buf[0].mem, 8);
			break;
		}
		q->wr_flags = IBV_SEND_SIGNALED;
		q->wr_id = 3;
		ibv_wr_rdma_write(q, rkey, dst);
		ibv_wr_set_sge(q, lkey, src, 8);
		EXPECT_EQ(EINVAL, ibv_wr_complete(q)) TH_LOG("case %d", bad);
		expect_quiet(_metadata, self->scq[0]);
	}

	/* Right after start there is no WR to give data to. */
	ibv_wr_start(q);
	ibv_wr_set_sge(q, lkey, src, 8);
	EXPECT_EQ(EINVAL, ibv_wr_complete(q));

	/* More WRs than the SQ holds. */
	ibv_wr_start(q);
	for (i = 0; i < (int)self->p.s[0].cap.max_send_wr + 1; i++) {
		q->wr_id = i;
		q->wr_flags = 0;
		ibv_wr_rdma_write(q, rkey, dst);
		ibv_wr_set_sge(q, lkey, src, 8);
	}
	EXPECT_EQ(ENOMEM, ibv_wr_complete(q));
	expect_quiet(_metadata, self->scq[0]);

	/* Still RTS, still working. */
	ibv_wr_start(q);
	q->wr_id = 0xa00;
	q->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(q, rkey, dst);
	ibv_wr_set_sge(q, lkey, src, 8);
	ASSERT_EQ(0, ibv_wr_complete(q));
	XWAIT(self->scq[0], &w);
	expect_send(_metadata, self, &w, 0xa00, IBV_WC_RDMA_WRITE);
	EXPECT_EQ(IBV_QPS_RTS, rc_qp_state(self->p.s[0].qp));
}

/* Before RTS a batch fails as ibv_post_send() does. */
TEST_F(ext, wr_before_rts)
{
	struct ibv_qp *qp;
	struct ibv_qp_ex *q;
	struct ibv_cq *cq = self->p.s[0].scq;

	qp = ext_qp(&self->p, cq, cq, IBV_QPT_RC,
		    IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		    IBV_QP_EX_WITH_SEND);
	ASSERT_NE(NULL, qp);
	q = ibv_qp_to_qp_ex(qp);
	ASSERT_NE(NULL, q);
	ibv_wr_start(q);
	q->wr_id = 1;
	q->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(q);
	ibv_wr_set_sge(q, self->buf[0].mr->lkey, (uintptr_t)self->buf[0].mem,
		       8);
	EXPECT_EQ(EINVAL, ibv_wr_complete(q));
	ASSERT_EQ(0, rc_to_init(qp, RC_QP_ACCESS_ALL));
	ibv_wr_start(q);
	ibv_wr_send(q);
	EXPECT_EQ(EINVAL, ibv_wr_complete(q));
	expect_quiet(_metadata, self->scq[0]);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

/* ---- UD: ibv_wr_set_ud_addr() ------------------------------------------------ */

#define QKEY		0x11111111U
#define GRH		((unsigned int)QHCA_UD_GRH_SIZE)

static int ud_to_rts(struct ibv_qp *qp, uint32_t qkey)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qkey = qkey,
	};
	int ret;

	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_QKEY);
	if (!ret) {
		attr.qp_state = IBV_QPS_RTR;
		ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE);
	}
	if (!ret) {
		attr.qp_state = IBV_QPS_RTS;
		ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN);
	}
	return ret;
}

/*
 * UD sends through ibv_wr_*: the address from ibv_wr_set_ud_addr(), with
 * and without a GRH, from an SGE and inline, read back with the extended
 * poller (src_qp, slid, sl, GRH flag).  A QPN over 24 bits fails the
 * batch.
 */
TEST(ud_wr)
{
	FIXTURE_DATA(ext) x = {}, *self = &x;
	struct ibv_ah_attr aa = { .sl = 5, .port_num = 1 };
	struct ibv_qp_ex *q;
	struct ibv_ah *ah, *ah_grh;
	uint8_t *dst;
	struct xwc w[2];
	int i;

	ext_open(_metadata, self, IBV_QPT_UD,
		 IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM);
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, ud_to_rts(self->p.s[i].qp, QKEY));
	aa.dlid = self->p.pattr.lid;
	ah = ibv_create_ah(self->p.pd, &aa);
	ASSERT_NE(NULL, ah) TH_LOG("ibv_create_ah: %s", strerror(errno));
	aa.is_global = 1;
	ASSERT_EQ(0, ibv_query_gid(self->p.ctx, 1, 0, &aa.grh.dgid));
	aa.grh.hop_limit = 1;
	ah_grh = ibv_create_ah(self->p.pd, &aa);
	ASSERT_NE(NULL, ah_grh);

	q = self->qpx[0];
	dst = self->buf[1].mem;
	rc_fill(self->buf[0].mem, 1000, 21);
	rc_fill(self->buf[0].mem + 2000, 100, 22);
	ASSERT_EQ(0, post_recv(self, 0xb00, 0, GRH + 1000));
	ASSERT_EQ(0, post_recv(self, 0xb01, 4096, GRH + 100));

	ibv_wr_start(q);
	q->wr_flags = IBV_SEND_SIGNALED;
	q->wr_id = 0xc00;
	ibv_wr_send_imm(q, htobe32(IMM));
	ibv_wr_set_ud_addr(q, ah, self->p.s[1].qp->qp_num, QKEY);
	ibv_wr_set_sge(q, self->buf[0].mr->lkey, (uintptr_t)self->buf[0].mem,
		       1000);
	q->wr_id = 0xc01;
	ibv_wr_send(q);
	ibv_wr_set_ud_addr(q, ah_grh, self->p.s[1].qp->qp_num, QKEY);
	ibv_wr_set_inline_data(q, self->buf[0].mem + 2000, 100);
	ASSERT_EQ(0, ibv_wr_complete(q));

	ASSERT_EQ(2, xpoll(self->scq[0], w, 2, RC_POLL_MS));
	XEXPECT(w[0], 0xc00, IBV_WC_SUCCESS, IBV_WC_SEND);
	XEXPECT(w[1], 0xc01, IBV_WC_SUCCESS, IBV_WC_SEND);
	ASSERT_EQ(2, xpoll(self->rcq[1], w, 2, RC_POLL_MS));
	for (i = 0; i < 2; i++) {
		XEXPECT(w[i], 0xb00 + i, IBV_WC_SUCCESS, IBV_WC_RECV);
		EXPECT_EQ(GRH + (i ? 100 : 1000), w[i].byte_len);
		EXPECT_EQ(self->p.s[1].qp->qp_num, w[i].qp_num);
		EXPECT_EQ(self->p.s[0].qp->qp_num, w[i].src_qp);
		EXPECT_EQ(self->p.pattr.lid, w[i].slid);
		EXPECT_EQ(5, w[i].sl);
		EXPECT_NE(0ULL, w[i].ts);
	}
	EXPECT_EQ((unsigned int)IBV_WC_WITH_IMM, w[0].wc_flags);
	EXPECT_EQ(IMM, w[0].imm);
	EXPECT_EQ((unsigned int)IBV_WC_GRH, w[1].wc_flags);
	EXPECT_LE(w[0].ts, w[1].ts);
	RC_EXPECT_PATTERN(dst + GRH, 1000, 21);
	RC_EXPECT_PATTERN(dst + 4096 + GRH, 100, 22);

	/* A destination QPN wider than 24 bits. */
	ibv_wr_start(q);
	q->wr_id = 0xc02;
	ibv_wr_send(q);
	ibv_wr_set_ud_addr(q, ah, 1U << 24, QKEY);
	ibv_wr_set_sge(q, self->buf[0].mr->lkey, (uintptr_t)self->buf[0].mem,
		       10);
	EXPECT_EQ(EINVAL, ibv_wr_complete(q));
	expect_quiet(_metadata, self->scq[0]);

	EXPECT_EQ(0, ibv_destroy_ah(ah));
	EXPECT_EQ(0, ibv_destroy_ah(ah_grh));
	rc_buf_free(_metadata, &self->buf[0]);
	rc_buf_free(_metadata, &self->buf[1]);
	rc_pair_close(_metadata, &self->p);
}

TEST_HARNESS_MAIN
