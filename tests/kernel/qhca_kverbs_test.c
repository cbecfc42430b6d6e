// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * qhca_kverbs_test: the RC data path as a kernel consumer sees it.
 *
 * An ib_client that, when qhca0 shows up (at insmod, as the device is
 * already there), connects two RC QPs of qhca0 to each other and runs
 * every RC opcode through the driver's post_send/post_recv/poll_cq, with
 * the data checked byte for byte in kmalloc'd, DMA-mapped buffers, over
 * CQs of each polling context ib_core offers.  Then one RDMA WRITE with a
 * bad rkey, which must fail with REM_ACCESS_ERR and flush the rest, and
 * everything is freed again.  A UD step does the same for two UD QPs and
 * kernel address handles.  A last step, on a QP pair of its own, uses a
 * fast-registration MR as NFS/RDMA, iSER and SRP do: alloc_mr, map_mr_sg
 * of three separate pages, REG_MR, RDMA through the new rkey, LOCAL_INV,
 * a new key, SEND_WITH_INV, and the invalidated key refused.  A CQ is
 * resized (ib_resize_cq) with completions on it.
 *
 * It reports one "ok N - what" / "not ok N - what" line per step in the
 * kernel log and its verdict in /sys/module/qhca_kverbs_test/parameters/
 * result: "pass", "fail" or, if qhca0 never appeared, "not run".
 * tests/shell/kernel-consumer.sh reads both.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/version.h>
#include <linux/wait.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

#define KVT_DEVICE	"qhca0"
#define KVT_TIMEOUT_MS	10000

/*
 * One 8 KiB buffer per QP (two pages, physically contiguous): messages of
 * an odd length, the destination straddling the page boundary, and an
 * atomic target and result word at the end.
 */
#define KVT_BUF_SIZE	8192
#define KVT_LEN		3001
#define KVT_SRC		100
#define KVT_DST		3500
#define KVT_ATOM	7000
#define KVT_RES		7008
#define KVT_POISON	0xa5

/*
 * Whether the kernel is older than @major.@minor: the steps whose verbs a
 * kernel lacks report a skip there.  Spelled so, checkpatch takes it (the
 * driver's qhca_compat.h says why).
 */
#define KVT_LINUX_BEFORE(major, minor) \
	(KERNEL_VERSION(LINUX_VERSION_MAJOR, LINUX_VERSION_PATCHLEVEL, 0) < \
	 KERNEL_VERSION(major, minor, 0))

#define KVT_LOG		32	/* completions a CQ keeps until checked */
#define KVT_REQS	16	/* work requests, one ib_cqe each */

static char kvt_result[16] = "not run";
module_param_string(result, kvt_result, sizeof(kvt_result), 0444);
MODULE_PARM_DESC(result, "pass, fail, or not run (no " KVT_DEVICE ")");

struct kvt_wc {
	u32 tag;
	enum ib_wc_status status;
	enum ib_wc_opcode opcode;
	u32 byte_len;
	int wc_flags;
	__be32 imm;
	u32 qp_num;
	u32 src_qp;
	u16 slid;
	u8 sl;
};

/* A CQ and the completions its handler saw, in order. */
struct kvt_cq {
	struct ib_cq *cq;
	enum ib_poll_context poll;
	const char *name;
	spinlock_t lock;	/* log and n */
	wait_queue_head_t wait;
	unsigned int n;		/* completions logged */
	unsigned int seen;	/* completions the test has checked */
	struct kvt_wc log[KVT_LOG];
};

struct kvt_req {
	struct ib_cqe cqe;
	u32 tag;
};

struct kvt_side {
	struct ib_qp *qp;
	struct kvt_cq *scq;
	struct kvt_cq *rcq;
	u8 *buf;
	u64 dma;
	bool mapped;
	atomic_t access_err;	/* IB_EVENT_QP_ACCESS_ERR seen */
};

struct kvt {
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_mr *mr;	/* DMA MR with remote rights */
	struct kvt_cq cq[3];
	struct kvt_side s[2];
	struct kvt_req req[KVT_REQS];
	u16 lid;
	enum ib_mtu mtu;
	int num;
	bool failed;
	const char *skip;	/* why the step that returned 0 did nothing */
};

static void kvt_result_line(struct kvt *t, int err, const char *what)
{
	t->num++;
	if (err) {
		t->failed = true;
		pr_info("not ok %d - %s (%d)\n", t->num, what, err);
	} else if (t->skip) {
		pr_info("ok %d - %s # SKIP %s\n", t->num, what, t->skip);
	} else {
		pr_info("ok %d - %s\n", t->num, what);
	}
	t->skip = NULL;
}

static void kvt_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kvt_cq *kc = cq->cq_context;
	struct kvt_wc *e;
	unsigned long flags;

	spin_lock_irqsave(&kc->lock, flags);
	e = &kc->log[kc->n % KVT_LOG];
	e->tag = wc->wr_cqe ?
		 container_of(wc->wr_cqe, struct kvt_req, cqe)->tag : U32_MAX;
	e->status = wc->status;
	e->opcode = wc->opcode;
	e->byte_len = wc->byte_len;
	e->wc_flags = wc->wc_flags;
	e->imm = wc->ex.imm_data;
	e->qp_num = wc->qp ? wc->qp->qp_num : 0;
	e->src_qp = wc->src_qp;
	e->slid = wc->slid;
	e->sl = wc->sl;
	kc->n++;
	spin_unlock_irqrestore(&kc->lock, flags);
	wake_up(&kc->wait);
}

static unsigned int kvt_logged(struct kvt_cq *kc)
{
	unsigned long flags;
	unsigned int n;

	spin_lock_irqsave(&kc->lock, flags);
	n = kc->n;
	spin_unlock_irqrestore(&kc->lock, flags);
	return n;
}

/* Until @kc has logged @want completions: polled here or by ib_core. */
static int kvt_wait(struct kvt_cq *kc, unsigned int want)
{
	unsigned long end = jiffies + msecs_to_jiffies(KVT_TIMEOUT_MS);

	if (kc->poll != IB_POLL_DIRECT) {
		if (!wait_event_timeout(kc->wait, kvt_logged(kc) >= want,
					msecs_to_jiffies(KVT_TIMEOUT_MS)))
			return -ETIMEDOUT;
		return 0;
	}
	for (;;) {
		ib_process_cq_direct(kc->cq, 16);
		if (kvt_logged(kc) >= want)
			return 0;
		if (time_after(jiffies, end))
			return -ETIMEDOUT;
		usleep_range(50, 200);
	}
}

/*
 * The next completion on @kc must be @tag with @status; for a success
 * also @opcode, and @byte_len and @imm where they are not negative.
 */
static int kvt_expect(struct kvt_cq *kc, u32 tag, enum ib_wc_status status,
		      enum ib_wc_opcode opcode, s64 byte_len, s64 imm)
{
	struct kvt_wc e;
	int err;

	err = kvt_wait(kc, kc->seen + 1);
	if (err) {
		pr_err("%s CQ: no completion for tag %u\n", kc->name, tag);
		return err;
	}
	if (kvt_logged(kc) - kc->seen > KVT_LOG) {
		pr_err("%s CQ: completion log overrun\n", kc->name);
		return -EOVERFLOW;
	}
	e = kc->log[kc->seen++ % KVT_LOG];
	if (e.tag != tag || e.status != status) {
		pr_err("%s CQ: tag %u status %s, expected tag %u status %s\n",
		       kc->name, e.tag, ib_wc_status_msg(e.status), tag,
		       ib_wc_status_msg(status));
		return -EIO;
	}
	if (status != IB_WC_SUCCESS)
		return 0;
	if (e.opcode != opcode) {
		pr_err("%s CQ: tag %u opcode %d, expected %d\n", kc->name, tag,
		       e.opcode, opcode);
		return -EIO;
	}
	if (byte_len >= 0 && e.byte_len != byte_len) {
		pr_err("%s CQ: tag %u byte_len %u, expected %lld\n", kc->name,
		       tag, e.byte_len, byte_len);
		return -EIO;
	}
	if (imm >= 0 && (!(e.wc_flags & IB_WC_WITH_IMM) ||
			 be32_to_cpu(e.imm) != imm)) {
		pr_err("%s CQ: tag %u imm %#x (flags %#x), expected %#llx\n",
		       kc->name, tag, be32_to_cpu(e.imm), e.wc_flags, imm);
		return -EIO;
	}
	if (imm < 0 && (e.wc_flags & IB_WC_WITH_IMM)) {
		pr_err("%s CQ: tag %u has an immediate it should not\n",
		       kc->name, tag);
		return -EIO;
	}
	return 0;
}

/* Nothing more may have arrived on @kc than the test has checked. */
static int kvt_expect_idle(struct kvt_cq *kc)
{
	if (kc->poll == IB_POLL_DIRECT)
		ib_process_cq_direct(kc->cq, 16);
	if (kvt_logged(kc) != kc->seen) {
		pr_err("%s CQ: %u unexpected completion(s)\n", kc->name,
		       kvt_logged(kc) - kc->seen);
		return -EIO;
	}
	return 0;
}

static void kvt_fill(u8 *p, size_t len, u8 seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (u8)(i * 7 + seed);
}

/* @s's destination: its bytes around poisoned, the message area too. */
static void kvt_poison(struct kvt *t, struct kvt_side *s)
{
	memset(s->buf + KVT_DST - 16, KVT_POISON, KVT_LEN + 32);
}

static void kvt_to_device(struct kvt *t, struct kvt_side *s)
{
	ib_dma_sync_single_for_device(t->dev, s->dma, KVT_BUF_SIZE,
				      DMA_BIDIRECTIONAL);
}

static void kvt_to_cpu(struct kvt *t, struct kvt_side *s)
{
	ib_dma_sync_single_for_cpu(t->dev, s->dma, KVT_BUF_SIZE,
				   DMA_BIDIRECTIONAL);
}

/* @dst's destination holds @src's source, and nothing was written around. */
static int kvt_check_data(struct kvt_side *src, struct kvt_side *dst)
{
	const u8 *want = src->buf + KVT_SRC, *got = dst->buf + KVT_DST;
	size_t i;

	for (i = 0; i < KVT_LEN; i++) {
		if (got[i] != want[i]) {
			pr_err("byte %zu of %u: %#04x, expected %#04x\n", i,
			       KVT_LEN, got[i], want[i]);
			return -EIO;
		}
	}
	for (i = 1; i <= 16; i++) {
		if (got[-i] != KVT_POISON || got[KVT_LEN + i - 1] != KVT_POISON) {
			pr_err("a byte next to the destination was written\n");
			return -EIO;
		}
	}
	return 0;
}

static struct ib_cqe *kvt_cqe(struct kvt *t, u32 tag)
{
	return &t->req[tag % KVT_REQS].cqe;
}

static int kvt_post_recv(struct kvt *t, struct kvt_side *s, u32 tag)
{
	struct ib_sge sge = {
		.addr = s->dma + KVT_DST,
		.length = KVT_LEN,
		.lkey = t->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe = kvt_cqe(t, tag),
		.sg_list = &sge,
		.num_sge = 1,
	};

	return ib_post_recv(s->qp, &wr, NULL);
}

/* A one-SGE send-queue WR of @s from its source (or result word). */
static void kvt_send_wr(struct kvt *t, struct kvt_side *s,
			struct ib_send_wr *wr, struct ib_sge *sge,
			enum ib_wr_opcode op, u32 tag)
{
	bool atomic = op == IB_WR_ATOMIC_CMP_AND_SWP ||
		      op == IB_WR_ATOMIC_FETCH_AND_ADD;

	sge->addr = s->dma + (atomic ? KVT_RES :
			      op == IB_WR_RDMA_READ ? KVT_DST : KVT_SRC);
	sge->length = atomic ? 8 : KVT_LEN;
	sge->lkey = t->pd->local_dma_lkey;
	memset(wr, 0, sizeof(*wr));
	wr->wr_cqe = kvt_cqe(t, tag);
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->opcode = op;
	wr->send_flags = IB_SEND_SIGNALED;
}

static int kvt_send(struct kvt *t, int from, enum ib_wr_opcode op, u32 tag,
		    u32 imm)
{
	struct kvt_side *s = &t->s[from];
	struct ib_send_wr wr;
	struct ib_sge sge;

	kvt_send_wr(t, s, &wr, &sge, op, tag);
	wr.ex.imm_data = cpu_to_be32(imm);
	return ib_post_send(s->qp, &wr, NULL);
}

static int kvt_rdma(struct kvt *t, int from, enum ib_wr_opcode op, u32 tag,
		    u32 imm, u32 rkey)
{
	struct kvt_side *s = &t->s[from], *peer = &t->s[!from];
	struct ib_rdma_wr wr;
	struct ib_sge sge;

	kvt_send_wr(t, s, &wr.wr, &sge, op, tag);
	wr.wr.ex.imm_data = cpu_to_be32(imm);
	/* READ takes the peer's source, WRITE lands on its destination. */
	wr.remote_addr = peer->dma + (op == IB_WR_RDMA_READ ? KVT_SRC : KVT_DST);
	wr.rkey = rkey;
	return ib_post_send(s->qp, &wr.wr, NULL);
}

static int kvt_atomic(struct kvt *t, int from, enum ib_wr_opcode op, u32 tag,
		      u64 compare_add, u64 swap)
{
	struct kvt_side *s = &t->s[from], *peer = &t->s[!from];
	struct ib_atomic_wr wr;
	struct ib_sge sge;

	kvt_send_wr(t, s, &wr.wr, &sge, op, tag);
	wr.remote_addr = peer->dma + KVT_ATOM;
	wr.compare_add = compare_add;
	wr.swap = swap;
	wr.rkey = t->mr->rkey;
	return ib_post_send(s->qp, &wr.wr, NULL);
}

/* ---- Set-up and tear-down ------------------------------------------ */

static void kvt_qp_event(struct ib_event *ev, void *ctx)
{
	struct kvt_side *s = ctx;

	if (ev->event == IB_EVENT_QP_ACCESS_ERR)
		atomic_inc(&s->access_err);
}

static int kvt_cq_alloc(struct kvt *t, struct kvt_cq *kc, const char *name,
			enum ib_poll_context poll)
{
	spin_lock_init(&kc->lock);
	init_waitqueue_head(&kc->wait);
	kc->name = name;
	kc->poll = poll;
	kc->cq = ib_alloc_cq(t->dev, kc, 64, 0, poll);
	if (IS_ERR(kc->cq)) {
		int err = PTR_ERR(kc->cq);

		kc->cq = NULL;
		pr_err("ib_alloc_cq(%s): %d\n", name, err);
		return err;
	}
	return 0;
}

static int kvt_qp_create(struct kvt *t, struct kvt_side *s)
{
	struct ib_qp_init_attr init = {
		.event_handler = kvt_qp_event,
		.qp_context = s,
		.send_cq = s->scq->cq,
		.recv_cq = s->rcq->cq,
		.cap = {
			.max_send_wr = 8,
			.max_recv_wr = 8,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
	};
	int err;

	s->buf = kmalloc(KVT_BUF_SIZE, GFP_KERNEL);
	if (!s->buf)
		return -ENOMEM;
	s->dma = ib_dma_map_single(t->dev, s->buf, KVT_BUF_SIZE,
				   DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(t->dev, s->dma)) {
		pr_err("ib_dma_map_single failed\n");
		return -ENOMEM;
	}
	s->mapped = true;

	s->qp = ib_create_qp(t->pd, &init);
	if (IS_ERR(s->qp)) {
		err = PTR_ERR(s->qp);
		s->qp = NULL;
		pr_err("ib_create_qp: %d\n", err);
		return err;
	}
	return 0;
}

/* @s through INIT and RTR to RTS, aimed at @peer on our own port. */
static int kvt_qp_connect(struct kvt *t, struct kvt_side *s,
			  struct kvt_side *peer)
{
	struct ib_qp_attr attr = {};
	int err;

	attr.qp_state = IB_QPS_INIT;
	attr.port_num = 1;
	attr.pkey_index = 0;
	attr.qp_access_flags = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ |
			       IB_ACCESS_REMOTE_ATOMIC;
	err = ib_modify_qp(s->qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (err) {
		pr_err("modify to INIT: %d\n", err);
		return err;
	}

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTR;
	attr.path_mtu = t->mtu;
	attr.dest_qp_num = peer->qp->qp_num;
	attr.rq_psn = 0x123;
	attr.max_dest_rd_atomic = 4;
	attr.min_rnr_timer = 1;
	attr.ah_attr.type = RDMA_AH_ATTR_TYPE_IB;
	rdma_ah_set_dlid(&attr.ah_attr, t->lid);
	rdma_ah_set_port_num(&attr.ah_attr, 1);
	err = ib_modify_qp(s->qp, &attr, IB_QP_STATE | IB_QP_AV |
			   IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (err) {
		pr_err("modify to RTR: %d\n", err);
		return err;
	}

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTS;
	attr.sq_psn = 0x123;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.max_rd_atomic = 4;
	err = ib_modify_qp(s->qp, &attr, IB_QP_STATE | IB_QP_SQ_PSN |
			   IB_QP_TIMEOUT | IB_QP_RETRY_CNT | IB_QP_RNR_RETRY |
			   IB_QP_MAX_QP_RD_ATOMIC);
	if (err)
		pr_err("modify to RTS: %d\n", err);
	return err;
}

static int kvt_setup(struct kvt *t)
{
	struct ib_port_attr pattr;
	unsigned int i;
	int err;

	for (i = 0; i < KVT_REQS; i++) {
		t->req[i].tag = i;
		t->req[i].cqe.done = kvt_done;
	}

	err = ib_query_port(t->dev, 1, &pattr);
	if (err) {
		pr_err("ib_query_port: %d\n", err);
		return err;
	}
	if (pattr.state != IB_PORT_ACTIVE || !pattr.lid) {
		pr_err("port 1 not ACTIVE with a LID (state %d lid %u)\n",
		       pattr.state, pattr.lid);
		return -ENETDOWN;
	}
	t->lid = pattr.lid;
	t->mtu = pattr.active_mtu;

	t->pd = ib_alloc_pd(t->dev, 0);
	if (IS_ERR(t->pd)) {
		err = PTR_ERR(t->pd);
		t->pd = NULL;
		pr_err("ib_alloc_pd: %d\n", err);
		return err;
	}

	/*
	 * ib_get_dma_mr() is gone from the kernel API and the PD's own DMA MR
	 * (IB_PD_UNSAFE_GLOBAL_RKEY) has no atomic rights, so ask the driver
	 * for one the way ib_alloc_pd() does for the PD's internal MR.
	 */
	t->mr = t->dev->ops.get_dma_mr(t->pd, IB_ACCESS_LOCAL_WRITE |
				       IB_ACCESS_REMOTE_WRITE |
				       IB_ACCESS_REMOTE_READ |
				       IB_ACCESS_REMOTE_ATOMIC);
	if (IS_ERR(t->mr)) {
		err = PTR_ERR(t->mr);
		t->mr = NULL;
		pr_err("get_dma_mr: %d\n", err);
		return err;
	}
	t->mr->device = t->dev;
	t->mr->pd = t->pd;
	t->mr->type = IB_MR_TYPE_DMA;

	err = kvt_cq_alloc(t, &t->cq[0], "direct", IB_POLL_DIRECT);
	if (!err)
		err = kvt_cq_alloc(t, &t->cq[1], "softirq", IB_POLL_SOFTIRQ);
	if (!err)
		err = kvt_cq_alloc(t, &t->cq[2], "workqueue",
				   IB_POLL_WORKQUEUE);
	if (err)
		return err;

	/* QP 0 polls its CQ itself; QP 1 gets its completions by interrupt. */
	t->s[0].scq = &t->cq[0];
	t->s[0].rcq = &t->cq[0];
	t->s[1].scq = &t->cq[2];
	t->s[1].rcq = &t->cq[1];
	for (i = 0; i < 2; i++) {
		err = kvt_qp_create(t, &t->s[i]);
		if (err)
			return err;
	}
	for (i = 0; i < 2; i++) {
		err = kvt_qp_connect(t, &t->s[i], &t->s[!i]);
		if (err)
			return err;
	}
	return 0;
}

static void kvt_teardown(struct kvt *t)
{
	unsigned int i;

	for (i = 0; i < 2; i++) {
		struct kvt_side *s = &t->s[i];

		if (s->qp)
			ib_destroy_qp(s->qp);
		if (s->mapped)
			ib_dma_unmap_single(t->dev, s->dma, KVT_BUF_SIZE,
					    DMA_BIDIRECTIONAL);
		kfree(s->buf);
	}
	for (i = 0; i < ARRAY_SIZE(t->cq); i++)
		if (t->cq[i].cq)
			ib_free_cq(t->cq[i].cq);
	/* As ib_dealloc_pd() does with the PD's internal MR. */
	if (t->mr)
		t->dev->ops.dereg_mr(t->mr, NULL);
	if (t->pd)
		ib_dealloc_pd(t->pd);
}

/* ---- The steps ------------------------------------------------------ */

/* SEND or SEND_WITH_IMM from @from to the other QP; data and CQEs. */
static int kvt_step_send(struct kvt *t, int from, bool with_imm, u8 seed)
{
	struct kvt_side *s = &t->s[from], *peer = &t->s[!from];
	s64 imm = with_imm ? (s64)0xc0ffee00 + seed : -1;
	int err;

	kvt_fill(s->buf + KVT_SRC, KVT_LEN, seed);
	kvt_poison(t, peer);
	kvt_to_device(t, s);
	kvt_to_device(t, peer);
	err = kvt_post_recv(t, peer, 1);
	if (!err)
		err = kvt_send(t, from, with_imm ? IB_WR_SEND_WITH_IMM :
			       IB_WR_SEND, 2, imm);
	if (err)
		return err;
	err = kvt_expect(s->scq, 2, IB_WC_SUCCESS, IB_WC_SEND, -1, -1);
	if (!err)
		err = kvt_expect(peer->rcq, 1, IB_WC_SUCCESS, IB_WC_RECV,
				 KVT_LEN, imm);
	if (err)
		return err;
	kvt_to_cpu(t, peer);
	return kvt_check_data(s, peer);
}

static int kvt_step_write(struct kvt *t, bool with_imm, u8 seed)
{
	struct kvt_side *s = &t->s[0], *peer = &t->s[1];
	s64 imm = with_imm ? (s64)0x5eed0000 + seed : -1;
	int err = 0;

	kvt_fill(s->buf + KVT_SRC, KVT_LEN, seed);
	kvt_poison(t, peer);
	kvt_to_device(t, s);
	kvt_to_device(t, peer);
	/* The immediate consumes a receive; its buffer stays untouched. */
	if (with_imm)
		err = kvt_post_recv(t, peer, 3);
	if (!err)
		err = kvt_rdma(t, 0, with_imm ? IB_WR_RDMA_WRITE_WITH_IMM :
			       IB_WR_RDMA_WRITE, 4, imm, t->mr->rkey);
	if (err)
		return err;
	err = kvt_expect(s->scq, 4, IB_WC_SUCCESS, IB_WC_RDMA_WRITE, -1, -1);
	if (!err && with_imm)
		err = kvt_expect(peer->rcq, 3, IB_WC_SUCCESS,
				 IB_WC_RECV_RDMA_WITH_IMM, KVT_LEN, imm);
	if (!err)
		err = kvt_expect_idle(peer->rcq);
	if (err)
		return err;
	kvt_to_cpu(t, peer);
	return kvt_check_data(s, peer);
}

static int kvt_step_read(struct kvt *t, u8 seed)
{
	struct kvt_side *s = &t->s[0], *peer = &t->s[1];
	int err;

	kvt_fill(peer->buf + KVT_SRC, KVT_LEN, seed);
	kvt_poison(t, s);
	kvt_to_device(t, s);
	kvt_to_device(t, peer);
	err = kvt_rdma(t, 0, IB_WR_RDMA_READ, 5, 0, t->mr->rkey);
	if (!err)
		err = kvt_expect(s->scq, 5, IB_WC_SUCCESS, IB_WC_RDMA_READ, -1,
				 -1);
	if (!err)
		err = kvt_expect_idle(peer->rcq);
	if (err)
		return err;
	kvt_to_cpu(t, s);
	return kvt_check_data(peer, s);
}

static int kvt_step_atomic(struct kvt *t, enum ib_wr_opcode op, u64 before,
			   u64 compare_add, u64 swap, u64 after)
{
	struct kvt_side *s = &t->s[0], *peer = &t->s[1];
	enum ib_wc_opcode wc_op = op == IB_WR_ATOMIC_CMP_AND_SWP ?
				  IB_WC_COMP_SWAP : IB_WC_FETCH_ADD;
	u64 *word = (u64 *)(peer->buf + KVT_ATOM);
	u64 *res = (u64 *)(s->buf + KVT_RES);
	int err;

	*word = before;
	res[-1] = 0x5a5a5a5a5a5a5a5aULL;
	res[0] = 0x5a5a5a5a5a5a5a5aULL;
	res[1] = 0x5a5a5a5a5a5a5a5aULL;
	kvt_to_device(t, s);
	kvt_to_device(t, peer);
	err = kvt_atomic(t, 0, op, 6, compare_add, swap);
	if (!err)
		err = kvt_expect(s->scq, 6, IB_WC_SUCCESS, wc_op, -1, -1);
	if (err)
		return err;
	kvt_to_cpu(t, s);
	kvt_to_cpu(t, peer);
	if (res[0] != before || *word != after) {
		pr_err("atomic %d: returned %#llx (expected %#llx), target %#llx (expected %#llx)\n",
		       op, res[0], before, *word, after);
		return -EIO;
	}
	if (res[-1] != 0x5a5a5a5a5a5a5a5aULL ||
	    res[1] != 0x5a5a5a5a5a5a5a5aULL) {
		pr_err("atomic %d: wrote next to its result word\n", op);
		return -EIO;
	}
	return 0;
}

#if !KVT_LINUX_BEFORE(6, 2)
/*
 * 1.6: IB_WR_ATOMIC_WRITE, an rdma_wr() with one 8-byte SGE: the 8 bytes
 * land whole at the peer's word and nothing beside them.  IB_WR_FLUSH is
 * refused at post (no ib_send_wr field holds its placement type).
 */
static int kvt_step_atomic_write(struct kvt *t)
{
	struct kvt_side *s = &t->s[0], *peer = &t->s[1];
	u64 *word = (u64 *)(peer->buf + KVT_ATOM);
	u64 *src = (u64 *)(s->buf + KVT_RES);
	const struct ib_send_wr *bad;
	struct ib_rdma_wr wr;
	struct ib_sge sge;
	int err;

	word[-1] = 0x5a5a5a5a5a5a5a5aULL;
	word[0] = 0x5a5a5a5a5a5a5a5aULL;
	word[1] = 0x5a5a5a5a5a5a5a5aULL;
	src[0] = 0x0123456789abcdefULL;
	kvt_to_device(t, s);
	kvt_to_device(t, peer);
	kvt_send_wr(t, s, &wr.wr, &sge, IB_WR_ATOMIC_WRITE, 6);
	sge.addr = s->dma + KVT_RES;
	sge.length = 8;
	wr.remote_addr = peer->dma + KVT_ATOM;
	wr.rkey = t->mr->rkey;
	err = ib_post_send(s->qp, &wr.wr, NULL);
	if (!err)
		err = kvt_expect(s->scq, 6, IB_WC_SUCCESS, IB_WC_ATOMIC_WRITE,
				 -1, -1);
	if (err)
		return err;
	kvt_to_cpu(t, peer);
	if (word[0] != 0x0123456789abcdefULL ||
	    word[-1] != 0x5a5a5a5a5a5a5a5aULL ||
	    word[1] != 0x5a5a5a5a5a5a5a5aULL) {
		pr_err("ATOMIC_WRITE: target %#llx, beside it %#llx %#llx\n",
		       word[0], word[-1], word[1]);
		return -EIO;
	}
	wr.wr.opcode = IB_WR_FLUSH;
	err = ib_post_send(s->qp, &wr.wr, &bad);
	if (err != -EINVAL) {
		pr_err("IB_WR_FLUSH posted: %d, expected -EINVAL\n", err);
		return -EIO;
	}
	return kvt_expect_idle(s->scq);
}
#else
/* The kernel's verbs have neither opcode before 6.2: nothing to post. */
static int kvt_step_atomic_write(struct kvt *t)
{
	t->skip = "Linux before 6.2 has no IB_WR_ATOMIC_WRITE or IB_WR_FLUSH";
	return 0;
}
#endif

static int kvt_qp_state(struct ib_qp *qp)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;
	int err;

	err = ib_query_qp(qp, &attr, IB_QP_STATE, &init);
	return err ? err : attr.qp_state;
}

/* A QP of the SRQ step: on @srq, or with its own RQ when it is NULL. */
static struct ib_qp *kvt_srq_qp(struct kvt *t, struct kvt_side *s,
				struct ib_srq *srq)
{
	struct ib_qp_init_attr init = {
		.send_cq = s->scq->cq,
		.recv_cq = s->rcq->cq,
		.srq = srq,
		.cap = {
			.max_send_wr = 8,
			.max_recv_wr = srq ? 0 : 8,
			.max_send_sge = 1,
			.max_recv_sge = srq ? 0 : 1,
		},
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
	};

	return ib_create_qp(t->pd, &init);
}

#if KVT_LINUX_BEFORE(7, 2)
/*
 * @n SENDs from QP 1 to QP 0, receive tags 1 .. @n, send tags 9 ..: the
 * sends are checked, so (a receive completing before its ACK leaves) the
 * @n receive completions are then on QP 0's direct-polled CQ, unpolled.
 */
static int kvt_resize_sends(struct kvt *t, u32 n)
{
	u32 i;
	int err = 0;

	for (i = 0; i < n && !err; i++)
		err = kvt_post_recv(t, &t->s[0], 1 + i);
	for (i = 0; i < n && !err; i++)
		err = kvt_send(t, 1, IB_WR_SEND, 9 + i, 0);
	for (i = 0; i < n && !err; i++)
		err = kvt_expect(t->s[1].scq, 9 + i, IB_WC_SUCCESS, IB_WC_SEND,
				 -1, -1);
	return err;
}

static int kvt_resize_recvs(struct kvt *t, u32 n)
{
	u32 i;
	int err = 0;

	for (i = 0; i < n && !err; i++)
		err = kvt_expect(t->s[0].rcq, 1 + i, IB_WC_SUCCESS, IB_WC_RECV,
				 KVT_LEN, -1);
	return err ?: kvt_expect_idle(t->s[0].rcq);
}

/*
 * ib_resize_cq of the direct-polled CQ with completions on it: grown to
 * 255 with 6 unpolled, then with 6 unpolled refused at 3 (EINVAL, a
 * ring of 4) and shrunk to 7; every completion comes once, in order.
 */
static int kvt_step_resize_cq(struct kvt *t)
{
	struct ib_cq *cq = t->s[0].rcq->cq;
	int cqe = cq->cqe;
	int err;

	err = kvt_resize_sends(t, 6);
	if (err)
		return err;
	err = ib_resize_cq(cq, 255);
	if (err)
		return err;
	if (cq->cqe < 255) {
		pr_err("resized to %d CQEs, asked for 255\n", cq->cqe);
		return -EIO;
	}
	err = kvt_resize_recvs(t, 6) ?: kvt_resize_sends(t, 6);
	if (err)
		return err;
	err = ib_resize_cq(cq, 3);
	if (err != -EINVAL) {
		pr_err("resize below the 6 unpolled: %d, expected %d\n", err,
		       -EINVAL);
		return err ?: -EIO;
	}
	err = ib_resize_cq(cq, 7) ?: kvt_resize_recvs(t, 6);
	if (!err && (cq->cqe < 7 || cq->cqe > 15)) {
		pr_err("resized to %d CQEs, asked for 7\n", cq->cqe);
		err = -EIO;
	}
	return err ?: ib_resize_cq(cq, cqe);
}

#else
/* Only user CQs can be resized in 7.2 (no ib_resize_cq): nothing to call. */
static int kvt_step_resize_cq(struct kvt *t)
{
	t->skip = "Linux 7.2 and later have no ib_resize_cq";
	return 0;
}
#endif

/*
 * A kernel SRQ of 4 WQEs: a QP on it receives 6 SENDs from a QP of its
 * own, one posted SRQ receive each, so the ring wraps and completions must
 * free its slots.  Data checked byte for byte; a QP on an SRQ has no RQ;
 * the SRQ cannot go while the QP uses it.
 */
static int kvt_step_srq(struct kvt *t)
{
	struct ib_srq_init_attr sinit = {
		.srq_type = IB_SRQT_BASIC,
		.attr = { .max_wr = 4, .max_sge = 1 },
	};
	struct kvt_side *src = &t->s[0], *dst = &t->s[1];
	struct kvt_side a = { .scq = &t->cq[0], .rcq = &t->cq[0] };
	struct kvt_side b = { .scq = &t->cq[2], .rcq = &t->cq[1] };
	struct ib_sge sge = {
		.addr = dst->dma + KVT_DST,
		.length = KVT_LEN,
		.lkey = t->pd->local_dma_lkey,
	};
	struct ib_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 };
	struct ib_send_wr swr;
	struct ib_sge ssge;
	struct ib_srq *srq;
	int err, i;

	srq = ib_create_srq(t->pd, &sinit);
	if (IS_ERR(srq)) {
		pr_err("ib_create_srq: %ld\n", PTR_ERR(srq));
		return PTR_ERR(srq);
	}
	a.qp = kvt_srq_qp(t, &a, NULL);
	b.qp = kvt_srq_qp(t, &b, srq);
	if (IS_ERR(a.qp) || IS_ERR(b.qp)) {
		err = IS_ERR(a.qp) ? PTR_ERR(a.qp) : PTR_ERR(b.qp);
		pr_err("ib_create_qp for the SRQ step: %d\n", err);
		goto out;
	}
	err = kvt_qp_connect(t, &a, &b);
	if (!err)
		err = kvt_qp_connect(t, &b, &a);
	if (err)
		goto out;

	rwr.wr_cqe = kvt_cqe(t, 3);
	if (ib_post_recv(b.qp, &rwr, NULL) != -EINVAL) {
		pr_err("ib_post_recv on a QP on an SRQ did not fail\n");
		err = -EIO;
		goto out;
	}
	/* ib_core's own check; ib_destroy_srq() would WARN. */
	if (ib_destroy_srq_user(srq, NULL) != -EBUSY) {
		pr_err("ib_destroy_srq of an SRQ in use did not fail\n");
		err = -EIO;
		goto out;
	}

	for (i = 0; i < 6 && !err; i++) {
		kvt_fill(src->buf + KVT_SRC, KVT_LEN, 0x40 + i);
		kvt_poison(t, dst);
		kvt_to_device(t, src);
		kvt_to_device(t, dst);
		rwr.wr_cqe = kvt_cqe(t, 4 + i);
		err = ib_post_srq_recv(srq, &rwr, NULL);
		if (err) {
			pr_err("ib_post_srq_recv %d: %d\n", i, err);
			break;
		}
		kvt_send_wr(t, src, &swr, &ssge, IB_WR_SEND, 12);
		err = ib_post_send(a.qp, &swr, NULL);
		if (!err)
			err = kvt_expect(a.scq, 12, IB_WC_SUCCESS, IB_WC_SEND,
					 -1, -1);
		if (!err)
			err = kvt_expect(b.rcq, 4 + i, IB_WC_SUCCESS,
					 IB_WC_RECV, KVT_LEN, -1);
		if (!err) {
			kvt_to_cpu(t, dst);
			err = kvt_check_data(src, dst);
		}
	}
out:
	if (!IS_ERR_OR_NULL(b.qp))
		ib_destroy_qp(b.qp);
	if (!IS_ERR_OR_NULL(a.qp))
		ib_destroy_qp(a.qp);
	ib_destroy_srq(srq);
	return err;
}

#define KVT_QKEY	0x0badbeef
#define KVT_GRH		40

/* A UD QP of the UD step, in RTS with KVT_QKEY. */
static struct ib_qp *kvt_ud_qp(struct kvt *t, struct kvt_side *s)
{
	struct ib_qp_init_attr init = {
		.send_cq = s->scq->cq,
		.recv_cq = s->rcq->cq,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_UD,
	};
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT,
		.port_num = 1,
		.qkey = KVT_QKEY,
	};
	struct ib_qp *qp;
	int err;

	qp = ib_create_qp(t->pd, &init);
	if (IS_ERR(qp))
		return qp;
	err = ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_QKEY);
	attr.qp_state = IB_QPS_RTR;
	if (!err)
		err = ib_modify_qp(qp, &attr, IB_QP_STATE);
	attr.qp_state = IB_QPS_RTS;
	attr.sq_psn = 0x4242;
	if (!err)
		err = ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_SQ_PSN);
	if (err) {
		ib_destroy_qp(qp);
		return ERR_PTR(err);
	}
	return qp;
}

/* One UD SEND_WITH_IMM from @a to @b through @ah, checked whole. */
static int kvt_ud_send(struct kvt *t, struct kvt_side *a, struct kvt_side *b,
		       struct ib_ah *ah, bool grh, u8 seed, u32 tag)
{
	struct kvt_side *src = &t->s[0], *dst = &t->s[1];
	struct ib_sge rsge = {
		.addr = dst->dma + KVT_DST - KVT_GRH,
		.length = KVT_GRH + KVT_LEN,
		.lkey = t->pd->local_dma_lkey,
	};
	struct ib_recv_wr rwr = {
		.wr_cqe = kvt_cqe(t, tag),
		.sg_list = &rsge,
		.num_sge = 1,
	};
	struct ib_ud_wr uwr = {
		.ah = ah,
		.remote_qpn = b->qp->qp_num,
		.remote_qkey = KVT_QKEY,
	};
	const u8 *g = dst->buf + KVT_DST - KVT_GRH;
	struct ib_sge ssge;
	struct kvt_wc e;
	int err;

	kvt_fill(src->buf + KVT_SRC, KVT_LEN, seed);
	kvt_poison(t, dst);
	memset(dst->buf + KVT_DST - KVT_GRH, KVT_POISON, KVT_GRH);
	kvt_to_device(t, src);
	kvt_to_device(t, dst);
	err = ib_post_recv(b->qp, &rwr, NULL);
	if (err)
		return err;
	kvt_send_wr(t, src, &uwr.wr, &ssge, IB_WR_SEND_WITH_IMM, tag + 1);
	uwr.wr.ex.imm_data = cpu_to_be32(0x600d0000 | seed);
	err = ib_post_send(a->qp, &uwr.wr, NULL);
	if (!err)
		err = kvt_expect(a->scq, tag + 1, IB_WC_SUCCESS, IB_WC_SEND,
				 KVT_LEN, -1);
	if (!err)
		err = kvt_expect(b->rcq, tag, IB_WC_SUCCESS, IB_WC_RECV,
				 KVT_GRH + KVT_LEN, 0x600d0000 | seed);
	if (err)
		return err;
	e = b->rcq->log[(b->rcq->seen - 1) % KVT_LOG];
	if (e.src_qp != a->qp->qp_num || e.slid != t->lid || e.sl != 2 ||
	    !!(e.wc_flags & IB_WC_GRH) != grh) {
		pr_err("UD wc: src_qp %u slid %u sl %u flags %#x\n", e.src_qp,
		       e.slid, e.sl, e.wc_flags);
		return -EIO;
	}
	kvt_to_cpu(t, dst);
	/* The GRH covers the poison kvt_check_data() expects before it. */
	if (grh && (memcmp(dst->buf + KVT_DST, src->buf + KVT_SRC, KVT_LEN) ||
		    memchr_inv(dst->buf + KVT_DST + KVT_LEN, KVT_POISON, 16))) {
		pr_err("UD data with a GRH wrong\n");
		return -EIO;
	}
	err = grh ? 0 : kvt_check_data(src, dst);
	if (err)
		return err;
	if (grh ? g[0] >> 4 != 6 || g[6] != 0x1b || g[7] != 5 :
	    !!memchr_inv(g, KVT_POISON, KVT_GRH)) {
		pr_err("UD GRH area wrong (%*ph)\n", 8, g);
		return -EIO;
	}
	return 0;
}

/*
 * UD through kernel address handles: LID-routed and with a GRH, the data,
 * the GRH area and src_qp/slid/sl checked; an RDMA WRITE cannot be posted.
 */
static int kvt_step_ud(struct kvt *t)
{
	struct kvt_side a = { .scq = &t->cq[0], .rcq = &t->cq[0] };
	struct kvt_side b = { .scq = &t->cq[2], .rcq = &t->cq[1] };
	struct rdma_ah_attr aa = { .type = RDMA_AH_ATTR_TYPE_IB };
	struct ib_ah *ah = NULL, *ah_grh = NULL;
	struct ib_ud_wr uwr = {};
	union ib_gid gid;
	struct ib_sge ssge;
	int err;

	a.qp = kvt_ud_qp(t, &a);
	b.qp = kvt_ud_qp(t, &b);
	if (IS_ERR(a.qp) || IS_ERR(b.qp)) {
		err = IS_ERR(a.qp) ? PTR_ERR(a.qp) : PTR_ERR(b.qp);
		pr_err("UD QPs: %d\n", err);
		goto out;
	}
	rdma_ah_set_dlid(&aa, t->lid);
	rdma_ah_set_sl(&aa, 2);
	rdma_ah_set_port_num(&aa, 1);
	ah = rdma_create_ah(t->pd, &aa, RDMA_CREATE_AH_SLEEPABLE);
	if (IS_ERR(ah)) {
		err = PTR_ERR(ah);
		pr_err("rdma_create_ah: %d\n", err);
		goto out;
	}
	err = rdma_query_gid(t->dev, 1, 0, &gid);
	if (err)
		goto out;
	rdma_ah_set_grh(&aa, &gid, 0x54321, 0, 5, 0x20);
	ah_grh = rdma_create_ah(t->pd, &aa, RDMA_CREATE_AH_SLEEPABLE);
	if (IS_ERR(ah_grh)) {
		err = PTR_ERR(ah_grh);
		pr_err("rdma_create_ah with a GRH: %d\n", err);
		goto out;
	}

	err = kvt_ud_send(t, &a, &b, ah, false, 0x21, 0);
	if (!err)
		err = kvt_ud_send(t, &a, &b, ah_grh, true, 0x22, 2);
	if (err)
		goto out;

	kvt_send_wr(t, &t->s[0], &uwr.wr, &ssge, IB_WR_RDMA_WRITE, 4);
	uwr.ah = ah;
	uwr.remote_qpn = b.qp->qp_num;
	if (ib_post_send(a.qp, &uwr.wr, NULL) != -EINVAL) {
		pr_err("an RDMA_WRITE on a UD QP was posted\n");
		err = -EIO;
	}
out:
	if (!IS_ERR_OR_NULL(ah_grh))
		rdma_destroy_ah(ah_grh, RDMA_DESTROY_AH_SLEEPABLE);
	if (!IS_ERR_OR_NULL(ah))
		rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
	if (!IS_ERR_OR_NULL(b.qp))
		ib_destroy_qp(b.qp);
	if (!IS_ERR_OR_NULL(a.qp))
		ib_destroy_qp(a.qp);
	return err;
}

/*
 * An RDMA WRITE with a bad rkey: REM_ACCESS_ERR for it, WR_FLUSH_ERR for
 * the WRs behind it and for the responder's receive, both QPs in ERR,
 * the responder's owner told with IB_EVENT_QP_ACCESS_ERR, and the target
 * untouched.
 */
static int kvt_step_bad_rkey(struct kvt *t)
{
	struct kvt_side *s = &t->s[0], *peer = &t->s[1];
	u32 bad = t->mr->rkey ^ 0x5a;
	unsigned long end;
	int err;

	kvt_fill(s->buf + KVT_SRC, KVT_LEN, 77);
	kvt_poison(t, peer);
	kvt_to_device(t, s);
	kvt_to_device(t, peer);
	err = kvt_post_recv(t, peer, 7);
	if (!err)
		err = kvt_rdma(t, 0, IB_WR_RDMA_WRITE, 8, 0, bad);
	if (!err)
		err = kvt_send(t, 0, IB_WR_SEND, 9, 0);
	if (!err)
		err = kvt_rdma(t, 0, IB_WR_RDMA_WRITE, 10, 0, t->mr->rkey);
	if (err)
		return err;

	err = kvt_expect(s->scq, 8, IB_WC_REM_ACCESS_ERR, 0, -1, -1);
	if (!err)
		err = kvt_expect(s->scq, 9, IB_WC_WR_FLUSH_ERR, 0, -1, -1);
	if (!err)
		err = kvt_expect(s->scq, 10, IB_WC_WR_FLUSH_ERR, 0, -1, -1);
	if (!err)
		err = kvt_expect(peer->rcq, 7, IB_WC_WR_FLUSH_ERR, 0, -1, -1);
	if (err)
		return err;

	/* Work posted to a QP in ERR is flushed, not executed. */
	err = kvt_post_recv(t, s, 11);
	if (!err)
		err = kvt_expect(s->rcq, 11, IB_WC_WR_FLUSH_ERR, 0, -1, -1);
	if (!err)
		err = kvt_expect_idle(s->scq);
	if (!err)
		err = kvt_expect_idle(peer->rcq);
	if (!err)
		err = kvt_expect_idle(peer->scq);
	if (err)
		return err;

	if (kvt_qp_state(s->qp) != IB_QPS_ERR ||
	    kvt_qp_state(peer->qp) != IB_QPS_ERR) {
		pr_err("QP states %d and %d, expected ERR (%d)\n",
		       kvt_qp_state(s->qp), kvt_qp_state(peer->qp), IB_QPS_ERR);
		return -EIO;
	}
	end = jiffies + msecs_to_jiffies(KVT_TIMEOUT_MS);
	while (!atomic_read(&peer->access_err) && time_before(jiffies, end))
		msleep(20);
	if (!atomic_read(&peer->access_err)) {
		pr_err("no IB_EVENT_QP_ACCESS_ERR for the responder\n");
		return -EIO;
	}
	kvt_to_cpu(t, peer);
	if (memchr_inv(peer->buf + KVT_DST - 16, KVT_POISON, KVT_LEN + 32)) {
		pr_err("the bad-rkey WRITE changed the target\n");
		return -EIO;
	}
	return 0;
}

/* ---- Fast registration (1.2) ---------------------------------------- */

#define KVT_FR_PAGES	3
#define KVT_FR_OFF	(PAGE_SIZE - 1000)	/* a WRITE across a page */

struct kvt_fr {
	struct kvt_side side[2];	/* side 1 owns the MR */
	struct page *page[KVT_FR_PAGES];
	struct scatterlist sg[KVT_FR_PAGES];
	int nents;
	struct ib_mr *mr;
};

static void kvt_fr_free(struct kvt *t, struct kvt_fr *f)
{
	unsigned int i;

	for (i = 0; i < 2; i++) {
		struct kvt_side *s = &f->side[i];

		if (s->qp)
			ib_destroy_qp(s->qp);
		if (s->mapped)
			ib_dma_unmap_single(t->dev, s->dma, KVT_BUF_SIZE,
					    DMA_BIDIRECTIONAL);
		kfree(s->buf);
	}
	if (f->mr)
		ib_dereg_mr(f->mr);
	if (f->nents)
		ib_dma_unmap_sg(t->dev, f->sg, KVT_FR_PAGES, DMA_BIDIRECTIONAL);
	for (i = 0; i < KVT_FR_PAGES; i++)
		if (f->page[i])
			__free_page(f->page[i]);
	kfree(f);
}

/* Byte @off of the registered range, through the pages. */
static u8 *kvt_fr_byte(struct kvt_fr *f, size_t off)
{
	return page_address(f->page[off / PAGE_SIZE]) + off % PAGE_SIZE;
}

/* REG_MR of @f's MR, with its current key, on side 1's SQ. */
static int kvt_fr_reg(struct kvt *t, struct kvt_fr *f, u32 tag)
{
	struct ib_reg_wr wr = {
		.wr = {
			.wr_cqe = kvt_cqe(t, tag),
			.opcode = IB_WR_REG_MR,
			.send_flags = IB_SEND_SIGNALED,
		},
		.mr = f->mr,
		.key = f->mr->rkey,
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
			  IB_ACCESS_REMOTE_READ,
	};
	int n, err;

	n = ib_map_mr_sg(f->mr, f->sg, f->nents, NULL, PAGE_SIZE);
	if (n != f->nents) {
		pr_err("ib_map_mr_sg mapped %d of %d\n", n, f->nents);
		return n < 0 ? n : -EIO;
	}
	if (f->mr->length != KVT_FR_PAGES * PAGE_SIZE) {
		pr_err("fast-reg MR length %llu\n", f->mr->length);
		return -EIO;
	}
	err = ib_post_send(f->side[1].qp, &wr.wr, NULL);
	if (!err)
		err = kvt_expect(f->side[1].scq, tag, IB_WC_SUCCESS,
				 IB_WC_REG_MR, -1, -1);
	return err;
}

/* Side 0 RDMA WRITEs (or READs) KVT_LEN bytes at @off of the MR. */
static int kvt_fr_rdma(struct kvt *t, struct kvt_fr *f, enum ib_wr_opcode op,
		       u32 tag, size_t off, u32 rkey, enum ib_wc_status want)
{
	struct kvt_side *s = &f->side[0];
	struct ib_rdma_wr wr;
	struct ib_sge sge;
	int err;

	kvt_send_wr(t, s, &wr.wr, &sge, op, tag);
	wr.remote_addr = f->mr->iova + off;
	wr.rkey = rkey;
	err = ib_post_send(s->qp, &wr.wr, NULL);
	if (!err)
		err = kvt_expect(s->scq, tag, want, op == IB_WR_RDMA_READ ?
				 IB_WC_RDMA_READ : IB_WC_RDMA_WRITE, -1, -1);
	return err;
}

/* A WRITE of side 0's source at @off lands there and nowhere else. */
static int kvt_fr_write(struct kvt *t, struct kvt_fr *f, u32 tag, size_t off,
			u8 seed)
{
	struct kvt_side *s = &f->side[0];
	size_t i;
	int err;

	kvt_fill(s->buf + KVT_SRC, KVT_LEN, seed);
	kvt_to_device(t, s);
	for (i = 0; i < KVT_FR_PAGES; i++)
		memset(page_address(f->page[i]), KVT_POISON, PAGE_SIZE);
	dma_sync_sg_for_device(t->dev->dma_device, f->sg, KVT_FR_PAGES,
			       DMA_BIDIRECTIONAL);
	err = kvt_fr_rdma(t, f, IB_WR_RDMA_WRITE, tag, off, f->mr->rkey,
			  IB_WC_SUCCESS);
	if (err)
		return err;
	dma_sync_sg_for_cpu(t->dev->dma_device, f->sg, KVT_FR_PAGES,
			    DMA_BIDIRECTIONAL);
	for (i = 0; i < KVT_FR_PAGES * PAGE_SIZE; i++) {
		bool in = i >= off && i < off + KVT_LEN;
		u8 want = in ? s->buf[KVT_SRC + i - off] : KVT_POISON;

		if (*kvt_fr_byte(f, i) != want) {
			pr_err("fast-reg byte %zu: %#04x, expected %#04x\n", i,
			       *kvt_fr_byte(f, i), want);
			return -EIO;
		}
	}
	return 0;
}

/*
 * A fast-registration MR over three separately allocated pages, on a
 * QP pair of its own: REG_MR, WRITE and READ through the new rkey
 * checked byte for byte, LOCAL_INV, a new key and REG_MR again,
 * SEND_WITH_INV giving the key back, and a WRITE through the
 * invalidated key failing with REM_ACCESS_ERR.
 */
static int kvt_step_fast_reg(struct kvt *t)
{
	struct ib_send_wr inv = {
		.opcode = IB_WR_LOCAL_INV,
		.send_flags = IB_SEND_SIGNALED,
	};
	struct ib_send_wr sinv;
	struct ib_sge sge;
	struct kvt_fr *f;
	struct kvt_side *s, *peer;
	unsigned long end;
	struct kvt_wc e;
	unsigned int i;
	u32 key;
	int err;

	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f)
		return -ENOMEM;
	s = &f->side[0];
	peer = &f->side[1];
	s->scq = &t->cq[0];
	s->rcq = &t->cq[0];
	peer->scq = &t->cq[2];
	peer->rcq = &t->cq[1];
	err = kvt_qp_create(t, s);
	if (!err)
		err = kvt_qp_create(t, peer);
	if (!err)
		err = kvt_qp_connect(t, s, peer);
	if (!err)
		err = kvt_qp_connect(t, peer, s);
	if (err)
		goto out;

	sg_init_table(f->sg, KVT_FR_PAGES);
	for (i = 0; i < KVT_FR_PAGES; i++) {
		f->page[i] = alloc_page(GFP_KERNEL);
		if (!f->page[i]) {
			err = -ENOMEM;
			goto out;
		}
		sg_set_page(&f->sg[i], f->page[i], PAGE_SIZE, 0);
	}
	f->nents = ib_dma_map_sg(t->dev, f->sg, KVT_FR_PAGES,
				 DMA_BIDIRECTIONAL);
	if (f->nents <= 0) {
		f->nents = 0;
		err = -ENOMEM;
		goto out;
	}

	f->mr = ib_alloc_mr(t->pd, IB_MR_TYPE_MEM_REG, KVT_FR_PAGES);
	if (IS_ERR(f->mr)) {
		err = PTR_ERR(f->mr);
		f->mr = NULL;
		pr_err("ib_alloc_mr: %d\n", err);
		goto out;
	}
	ib_update_fast_reg_key(f->mr, ib_inc_rkey(f->mr->rkey));
	err = kvt_fr_reg(t, f, 12);
	if (!err)
		err = kvt_fr_write(t, f, 13, KVT_FR_OFF, 31);
	if (err)
		goto out;

	/* Back into side 0's destination. */
	kvt_poison(t, s);
	kvt_to_device(t, s);
	err = kvt_fr_rdma(t, f, IB_WR_RDMA_READ, 14, KVT_FR_OFF, f->mr->rkey,
			  IB_WC_SUCCESS);
	if (err)
		goto out;
	kvt_to_cpu(t, s);
	err = kvt_check_data(s, s);
	if (err)
		goto out;

	/* LOCAL_INV, then the same MR again under the next key. */
	inv.wr_cqe = kvt_cqe(t, 15);
	inv.ex.invalidate_rkey = f->mr->rkey;
	err = ib_post_send(peer->qp, &inv, NULL);
	if (!err)
		err = kvt_expect(peer->scq, 15, IB_WC_SUCCESS, IB_WC_LOCAL_INV,
				 -1, -1);
	if (err)
		goto out;
	key = f->mr->rkey;
	ib_update_fast_reg_key(f->mr, ib_inc_rkey(f->mr->rkey));
	if (f->mr->rkey == key || f->mr->lkey != f->mr->rkey) {
		pr_err("ib_update_fast_reg_key: keys %#x, %#x\n",
		       f->mr->lkey, f->mr->rkey);
		err = -EIO;
		goto out;
	}
	err = kvt_fr_reg(t, f, 0);
	if (!err)
		err = kvt_fr_write(t, f, 1, 2 * PAGE_SIZE + 17, 32);
	if (err)
		goto out;

	/* SEND_WITH_INV: the responder's key goes, the CQE names it. */
	err = kvt_post_recv(t, peer, 2);
	if (err)
		goto out;
	kvt_send_wr(t, s, &sinv, &sge, IB_WR_SEND_WITH_INV, 3);
	sinv.ex.invalidate_rkey = f->mr->rkey;
	err = ib_post_send(s->qp, &sinv, NULL);
	if (!err)
		err = kvt_expect(s->scq, 3, IB_WC_SUCCESS, IB_WC_SEND, -1, -1);
	if (!err)
		err = kvt_expect(peer->rcq, 2, IB_WC_SUCCESS, IB_WC_RECV,
				 KVT_LEN, -1);
	if (err)
		goto out;
	e = peer->rcq->log[(peer->rcq->seen - 1) % KVT_LOG];
	if (!(e.wc_flags & IB_WC_WITH_INVALIDATE) ||
	    (__force u32)e.imm != f->mr->rkey) {
		pr_err("SEND_WITH_INV: flags %#x rkey %#x, expected %#x\n",
		       e.wc_flags, (__force u32)e.imm, f->mr->rkey);
		err = -EIO;
		goto out;
	}

	/* The invalidated key reaches nothing now. */
	dma_sync_sg_for_device(t->dev->dma_device, f->sg, KVT_FR_PAGES,
			       DMA_BIDIRECTIONAL);
	err = kvt_fr_rdma(t, f, IB_WR_RDMA_WRITE, 4, 0, f->mr->rkey,
			  IB_WC_REM_ACCESS_ERR);
	if (err)
		goto out;
	end = jiffies + msecs_to_jiffies(KVT_TIMEOUT_MS);
	while (!atomic_read(&peer->access_err) && time_before(jiffies, end))
		msleep(20);
	if (!atomic_read(&peer->access_err)) {
		pr_err("no IB_EVENT_QP_ACCESS_ERR for the fast-reg owner\n");
		err = -EIO;
		goto out;
	}
	dma_sync_sg_for_cpu(t->dev->dma_device, f->sg, KVT_FR_PAGES,
			    DMA_BIDIRECTIONAL);
	if (memchr_inv(page_address(f->page[0]), KVT_POISON, KVT_LEN)) {
		pr_err("a WRITE through an invalidated key changed memory\n");
		err = -EIO;
	}
out:
	kvt_fr_free(t, f);
	return err;
}

static void kvt_run(struct kvt *t)
{
	int err;

	err = kvt_setup(t);
	kvt_result_line(t, err, "set-up: PD, DMA MR, 3 CQs, 2 RC QPs in RTS");
	if (err)
		goto out;

	kvt_result_line(t, kvt_step_send(t, 0, false, 1),
			"SEND, direct-polled send CQ, softirq recv CQ");
	kvt_result_line(t, kvt_step_send(t, 0, true, 2), "SEND_WITH_IMM");
	kvt_result_line(t, kvt_step_send(t, 1, false, 3),
			"SEND back, workqueue send CQ, direct recv CQ");
	kvt_result_line(t, kvt_step_send(t, 1, true, 4),
			"SEND_WITH_IMM back");
	kvt_result_line(t, kvt_step_write(t, false, 5), "RDMA_WRITE");
	kvt_result_line(t, kvt_step_write(t, true, 6),
			"RDMA_WRITE_WITH_IMM");
	kvt_result_line(t, kvt_step_read(t, 7), "RDMA_READ");
	kvt_result_line(t, kvt_step_atomic(t, IB_WR_ATOMIC_CMP_AND_SWP,
					   0x1122334455667788ULL,
					   0x1122334455667788ULL,
					   0x0123456789abcdefULL,
					   0x0123456789abcdefULL),
			"ATOMIC_CMP_AND_SWP, equal");
	kvt_result_line(t, kvt_step_atomic(t, IB_WR_ATOMIC_CMP_AND_SWP,
					   0x1122334455667788ULL,
					   0x1022334455667788ULL,
					   0x0123456789abcdefULL,
					   0x1122334455667788ULL),
			"ATOMIC_CMP_AND_SWP, not equal");
	kvt_result_line(t, kvt_step_atomic(t, IB_WR_ATOMIC_FETCH_AND_ADD,
					   0xfffffffeULL, 3, 0,
					   0x100000001ULL),
			"ATOMIC_FETCH_AND_ADD");
	kvt_result_line(t, kvt_step_atomic_write(t),
			"ATOMIC_WRITE: 8 bytes whole; IB_WR_FLUSH refused");
	kvt_result_line(t, kvt_step_resize_cq(t),
			"ib_resize_cq: grow and shrink with 6 unpolled, EINVAL below");
	kvt_result_line(t, kvt_step_srq(t),
			"SRQ: 6 SENDs through a 4-WQE kernel SRQ, EBUSY");
	kvt_result_line(t, kvt_step_ud(t),
			"UD: SEND_WITH_IMM through kernel AHs, with a GRH");
	kvt_result_line(t, kvt_step_bad_rkey(t),
			"RDMA_WRITE with a bad rkey: REM_ACCESS_ERR, flushes");
	kvt_result_line(t, kvt_step_fast_reg(t),
			"fast registration: REG_MR, RDMA, LOCAL_INV, new key, SEND_WITH_INV");
out:
	kvt_teardown(t);
}

static int kvt_add(struct ib_device *dev)
{
	struct kvt *t;

	if (strcmp(dev_name(&dev->dev), KVT_DEVICE))
		return -EOPNOTSUPP;

	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t) {
		strscpy(kvt_result, "fail", sizeof(kvt_result));
		return -ENOMEM;
	}
	t->dev = dev;
	pr_info("start on %s\n", KVT_DEVICE);
	kvt_run(t);
	pr_info("1..%d\n", t->num);
	strscpy(kvt_result, t->failed ? "fail" : "pass",
		sizeof(kvt_result));
	pr_info("result: %s\n", kvt_result);
	kfree(t);
	/* Nothing stays behind to remove. */
	return -EOPNOTSUPP;
}

static struct ib_client kvt_client = {
	.name = "qhca_kverbs_test",
	.add = kvt_add,
};

static int __init kvt_init(void)
{
	return ib_register_client(&kvt_client);
}

static void __exit kvt_exit(void)
{
	ib_unregister_client(&kvt_client);
}

module_init(kvt_init);
module_exit(kvt_exit);

MODULE_DESCRIPTION("qhca: RC data path test through the kernel verbs");
MODULE_LICENSE("Dual BSD/GPL");
