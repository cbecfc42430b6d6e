// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * A process killed with SIGKILL while it has work in flight: the kernel
 * tears its objects down for it (ib_uverbs' cleanup of a closed file), and
 * afterwards the device holds exactly what it held before (the hw_objects
 * counters of doorbell pages, PDs, CQs, QPs and MRs), and works.
 *
 * The child cannot use the harness' assertions; it reports "ready" or a
 * failure over a pipe and then waits for its end.
 */
#include <signal.h>
#include <sys/wait.h>

#include "rc_pair.h"

#define STREAM_LEN	(1 << 20)

enum kid_work {
	KID_IDLE,		/* objects, nothing posted */
	KID_RNR_FOREVER,	/* SENDs to a QP with no receive, rnr_retry 7 */
	KID_NO_ACK_FOREVER,	/* WRITEs to no one, timeout 0 (no timeout) */
	KID_STREAMING,		/* 1 MiB WRITEs and READs, back to back */
	KID_EVENT_WAIT,		/* blocked in ibv_get_cq_event() */
};

/* One process's objects: a loopback pair on one CQ. */
struct kid {
	struct rc_pair cfg;		/* only opts and pattr are used */
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_qp *qp[2];
	struct ibv_mr *mr;
	uint8_t *mem;
};

/* Returns 0 or a line number to report. */
static int kid_setup(struct ibv_device *dev, struct kid *k,
		     enum kid_work work)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = {
			.max_send_wr = 64,
			.max_recv_wr = 64,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
	};
	uint32_t dest;
	int i;

	rc_default_opts(&k->cfg.opts);
	if (work == KID_NO_ACK_FOREVER)
		k->cfg.opts.timeout = 0;
	k->ctx = ibv_open_device(dev);
	if (!k->ctx || ibv_query_port(k->ctx, 1, &k->cfg.pattr))
		return __LINE__;
	k->pd = ibv_alloc_pd(k->ctx);
	if (!k->pd)
		return __LINE__;
	if (work == KID_EVENT_WAIT) {
		k->ch = ibv_create_comp_channel(k->ctx);
		if (!k->ch)
			return __LINE__;
	}
	k->cq = ibv_create_cq(k->ctx, 256, NULL, k->ch, 0);
	if (!k->cq)
		return __LINE__;
	if (posix_memalign((void **)&k->mem, 4096, 2 * STREAM_LEN))
		return __LINE__;
	memset(k->mem, 0x3c, 2 * STREAM_LEN);
	k->mr = ibv_reg_mr(k->pd, k->mem, 2 * STREAM_LEN, RC_ACCESS_ALL);
	if (!k->mr)
		return __LINE__;

	init.send_cq = k->cq;
	init.recv_cq = k->cq;
	for (i = 0; i < 2; i++) {
		k->qp[i] = ibv_create_qp(k->pd, &init);
		if (!k->qp[i])
			return __LINE__;
	}
	for (i = 0; i < 2; i++) {
		dest = k->qp[!i]->qp_num;
		if (work == KID_NO_ACK_FOREVER && i == 0)
			dest = 0xfffff0;
		if (rc_to_init(k->qp[i], RC_QP_ACCESS_ALL) ||
		    rc_to_rtr(&k->cfg, k->qp[i], dest, k->cfg.pattr.lid) ||
		    rc_to_rts(&k->cfg, k->qp[i]))
			return __LINE__;
	}
	return 0;
}

static int kid_post(struct kid *k, uint64_t id, enum ibv_wr_opcode op,
		    unsigned int flags)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)k->mem,
		.length = op == IBV_WR_SEND ? 64 : STREAM_LEN,
		.lkey = k->mr->lkey,
	};

	return rc_post(k->qp[0], id, op, flags, &sge, 1,
		       (uintptr_t)k->mem + STREAM_LEN, k->mr->rkey);
}

/* The child's whole life: set up, start the work, say so, keep going. */
static void __attribute__((noreturn)) kid_main(struct ibv_device *dev,
					       enum kid_work work,
					       int contexts, int fd)
{
	struct kid k[4];
	struct ibv_wc wc;
	struct ibv_cq *cq;
	void *cq_ctx;
	char ready = 'R';
	int c, i, line = 0;
	uint64_t n = 0;

	memset(k, 0, sizeof(k));
	for (c = 0; c < contexts && !line; c++) {
		line = kid_setup(dev, &k[c], work);
		for (i = 0; i < 8 && !line; i++) {
			if (work == KID_RNR_FOREVER &&
			    kid_post(&k[c], i, IBV_WR_SEND, IBV_SEND_SIGNALED))
				line = __LINE__;
			if (work == KID_NO_ACK_FOREVER &&
			    kid_post(&k[c], i, IBV_WR_RDMA_WRITE,
				     IBV_SEND_SIGNALED))
				line = __LINE__;
		}
	}
	if (!line && work == KID_EVENT_WAIT &&
	    ibv_req_notify_cq(k[0].cq, 0))
		line = __LINE__;
	/* Streaming: the first WRITE has gone through before "ready". */
	if (!line && work == KID_STREAMING &&
	    (kid_post(&k[0], n++, IBV_WR_RDMA_WRITE, IBV_SEND_SIGNALED) ||
	     rc_poll(k[0].cq, &wc, 1, RC_POLL_MS) != 1 ||
	     wc.status != IBV_WC_SUCCESS))
		line = __LINE__;

	if (line) {
		dprintf(fd, "E%d", line);
		_exit(1);
	}
	if (write(fd, &ready, 1) != 1)
		_exit(1);

	switch (work) {
	case KID_STREAMING:
		for (;;) {
			if (kid_post(&k[0], n, n % 2 ? IBV_WR_RDMA_READ :
						      IBV_WR_RDMA_WRITE,
				     IBV_SEND_SIGNALED))
				_exit(1);
			n++;
			while (!ibv_poll_cq(k[0].cq, 1, &wc))
				;
		}
	case KID_EVENT_WAIT:
		ibv_get_cq_event(k[0].ch, &cq, &cq_ctx);
		_exit(1);
	default:
		for (;;)
			pause();
	}
}

FIXTURE(kill)
{
	struct ibv_device **list;
	struct ibv_device *dev;
	struct qhca_dp_objs base;
	pid_t child;
};

FIXTURE_VARIANT(kill)
{
	enum kid_work work;
	int contexts;
};

FIXTURE_VARIANT_ADD(kill, idle_objects)
{
	.work = KID_IDLE,
	.contexts = 1,
};

FIXTURE_VARIANT_ADD(kill, rnr_retrying_forever)
{
	.work = KID_RNR_FOREVER,
	.contexts = 1,
};

FIXTURE_VARIANT_ADD(kill, waiting_for_acks_forever)
{
	.work = KID_NO_ACK_FOREVER,
	.contexts = 1,
};

FIXTURE_VARIANT_ADD(kill, streaming)
{
	.work = KID_STREAMING,
	.contexts = 1,
};

FIXTURE_VARIANT_ADD(kill, in_get_cq_event)
{
	.work = KID_EVENT_WAIT,
	.contexts = 1,
};

FIXTURE_VARIANT_ADD(kill, four_contexts_retrying)
{
	.work = KID_RNR_FOREVER,
	.contexts = 4,
};

FIXTURE_SETUP(kill)
{
	QHCA_ASSERT_DEVICE(self->list, self->dev);
	ASSERT_EQ(0, qhca_read_dp_objs(&self->base))
		TH_LOG("no data path object counters in "
		       QHCA_SYSFS_HW_OBJECTS);
}

FIXTURE_TEARDOWN(kill)
{
	if (self->child > 0) {
		kill(self->child, SIGKILL);
		waitpid(self->child, NULL, 0);
	}
	if (self->list)
		ibv_free_device_list(self->list);
}

/* Waits up to 10 s for the counters to come back to the baseline. */
static bool back_to_base(const struct qhca_dp_objs *base,
			 struct qhca_dp_objs *now)
{
	long deadline = rc_now_ms() + 10000;

	do {
		if (qhca_read_dp_objs(now))
			return false;
		if (!memcmp(base, now, sizeof(*now)))
			return true;
		usleep(50000);
	} while (rc_now_ms() < deadline);
	return false;
}

TEST_F_TIMEOUT(kill, objects_released, 90)
{
	const long n = variant->contexts;
	struct qhca_dp_objs now;
	struct rc_opts opts;
	struct rc_pair p;
	struct rc_buf src, dst;
	struct ibv_sge sge;
	char msg[16] = "";
	int fds[2], status;
	ssize_t len;

	ASSERT_EQ(0, pipe(fds));
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (!self->child) {
		close(fds[0]);
		kid_main(self->dev, variant->work, variant->contexts, fds[1]);
	}
	close(fds[1]);
	len = read(fds[0], msg, sizeof(msg) - 1);
	close(fds[0]);
	ASSERT_EQ(1, len) TH_LOG("child failed: \"%s\" (line of rc_kill.c)",
				 len > 0 ? msg : "nothing");
	ASSERT_EQ('R', msg[0]);

	/* The child's objects are there, with its work in flight. */
	ASSERT_EQ(0, qhca_read_dp_objs(&now));
	EXPECT_EQ(self->base.uars + n, now.uars);
	EXPECT_EQ(self->base.pds + n, now.pds);
	EXPECT_EQ(self->base.cqs + n, now.cqs);
	EXPECT_EQ(self->base.qps + 2 * n, now.qps);
	EXPECT_EQ(self->base.mrs + n, now.mrs);
	usleep(100000);

	ASSERT_EQ(0, kill(self->child, SIGKILL));
	ASSERT_EQ(self->child, waitpid(self->child, &status, 0));
	self->child = 0;
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

	EXPECT_TRUE(back_to_base(&self->base, &now))
		TH_LOG("left behind: %ld uars %ld pds %ld cqs %ld qps %ld mrs",
		       now.uars - self->base.uars, now.pds - self->base.pds,
		       now.cqs - self->base.cqs, now.qps - self->base.qps,
		       now.mrs - self->base.mrs);

	/* And the device still moves data. */
	memset(&p, 0, sizeof(p));
	memset(&src, 0, sizeof(src));
	memset(&dst, 0, sizeof(dst));
	rc_default_opts(&opts);
	rc_pair_open(_metadata, &p, &opts);
	rc_pair_connect(_metadata, &p);
	rc_buf_alloc(_metadata, &src, p.pd, 4096, RC_ACCESS_ALL);
	rc_buf_alloc(_metadata, &dst, p.pd, 4096, RC_ACCESS_ALL);
	rc_fill(src.mem, 4096, 80);
	rc_prepare_dst(&dst, 0, 4096, 80);
	sge = rc_sge(&dst, 0, 4096);
	ASSERT_EQ(0, rc_post_recv(p.s[1].qp, 1, &sge, 1));
	sge = rc_sge(&src, 0, 4096);
	ASSERT_EQ(0, rc_post(p.s[0].qp, 2, IBV_WR_SEND, IBV_SEND_SIGNALED,
			     &sge, 1, 0, 0));
	RC_WAIT_WC(p.s[1].rcq, 1, IBV_WC_SUCCESS, IBV_WC_RECV);
	RC_WAIT_WC(p.s[0].scq, 2, IBV_WC_SUCCESS, IBV_WC_SEND);
	RC_EXPECT_DELIVERED(&dst, 0, 4096, 80);
	rc_buf_free(_metadata, &src);
	rc_buf_free(_metadata, &dst);
	rc_pair_close(_metadata, &p);
}

TEST_HARNESS_MAIN
