// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * A process killed with SIGKILL while it has work in flight: the kernel
 * tears its objects down for it (ib_uverbs' cleanup of a closed file), and
 * afterwards the device holds exactly what it held before (every
 * hw_objects counter: doorbell pages, PDs, CQs, QPs, MRs and whatever else
 * the driver counts), and works.
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
	KID_EVERY_OBJECT,	/* and an SRQ, MWs, an XRCD, an AH, a group */
};

/* The multicast group KID_EVERY_OBJECT's UD QP joins. */
#define KID_MLID	0xc001
static const union ibv_gid kid_mgid = { .raw = {
	0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0,
	0, 0, 0, 0, 0, 0, 0x4b, 0x1d } };

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
	/* KID_EVERY_OBJECT only */
	struct ibv_srq *srq;
	struct ibv_mw *mw[2];		/* type 1 bound, type 2 not */
	struct ibv_xrcd *xrcd;
	struct ibv_ah *ah;
	struct ibv_qp *ud;
};

/*
 * The objects of every other type a process can hold, so that the check
 * after the kill sees each of them come back: one receive posted to an
 * SRQ, a type 1 window bound to the MR, an unbound type 2 window, an XRC
 * domain, an address handle (made by libqhca in user space today, so no
 * counter sees it unless that changes), and a UD QP attached to a
 * multicast group.
 * Returns 0 or a line number to report.
 */
static int kid_every_object(struct kid *k)
{
	struct ibv_srq_init_attr sattr = {
		.attr = { .max_wr = 16, .max_sge = 1 },
	};
	struct ibv_xrcd_init_attr xattr = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1,
		.oflags = O_CREAT,
	};
	struct ibv_qp_init_attr uinit = {
		.send_cq = k->cq,
		.recv_cq = k->cq,
		.qp_type = IBV_QPT_UD,
		.cap = {
			.max_send_wr = 4,
			.max_recv_wr = 4,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
	};
	struct ibv_qp_attr uattr = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qkey = 0x11111111,
	};
	struct ibv_ah_attr aattr = {
		.dlid = k->cfg.pattr.lid,
		.port_num = 1,
	};
	struct ibv_mw_bind bind = {
		.wr_id = 0xb1,
		.send_flags = IBV_SEND_SIGNALED,
		.bind_info = {
			.mr = k->mr,
			.addr = (uintptr_t)k->mem,
			.length = 4096,
			.mw_access_flags = IBV_ACCESS_REMOTE_READ,
		},
	};
	struct ibv_sge sge = {
		.addr = (uintptr_t)k->mem,
		.length = 64,
		.lkey = k->mr->lkey,
	};
	struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	struct ibv_wc wc;

	k->srq = ibv_create_srq(k->pd, &sattr);
	if (!k->srq || ibv_post_srq_recv(k->srq, &rwr, &bad))
		return __LINE__;
	k->mw[0] = ibv_alloc_mw(k->pd, IBV_MW_TYPE_1);
	k->mw[1] = ibv_alloc_mw(k->pd, IBV_MW_TYPE_2);
	if (!k->mw[0] || !k->mw[1] ||
	    ibv_bind_mw(k->qp[1], k->mw[0], &bind) ||
	    rc_poll(k->cq, &wc, 1, RC_POLL_MS) != 1 ||
	    wc.status != IBV_WC_SUCCESS)
		return __LINE__;
	k->xrcd = ibv_open_xrcd(k->ctx, &xattr);
	if (!k->xrcd)
		return __LINE__;
	k->ah = ibv_create_ah(k->pd, &aattr);
	if (!k->ah)
		return __LINE__;
	k->ud = ibv_create_qp(k->pd, &uinit);
	if (!k->ud ||
	    ibv_modify_qp(k->ud, &uattr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY) ||
	    ibv_attach_mcast(k->ud, &kid_mgid, KID_MLID))
		return __LINE__;
	return 0;
}

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
	k->mr = ibv_reg_mr(k->pd, k->mem, 2 * STREAM_LEN,
			   RC_ACCESS_ALL | IBV_ACCESS_MW_BIND);
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
	return work == KID_EVERY_OBJECT ? kid_every_object(k) : 0;
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
	struct qhca_objs base;
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

FIXTURE_VARIANT_ADD(kill, holding_every_object)
{
	.work = KID_EVERY_OBJECT,
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
	ASSERT_EQ(0, qhca_read_objs(&self->base))
		TH_LOG("no object counters in " QHCA_SYSFS_HW_OBJECTS);
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

/*
 * Waits up to 10 s for every counter to come back to the baseline (the
 * kernel tears a killed process's objects down after waitpid() may
 * return); why says what is still different.
 */
static bool back_to_base(const struct qhca_objs *base, char *why,
			 size_t size)
{
	long deadline = rc_now_ms() + 10000;
	struct qhca_objs now;

	do {
		if (qhca_read_objs(&now)) {
			snprintf(why, size, "cannot read " QHCA_SYSFS_HW_OBJECTS);
			return false;
		}
		if (qhca_objs_match(base, &now, "", why, size))
			return true;
		usleep(10000);
	} while (rc_now_ms() < deadline);
	return false;
}

/*
 * Appends " name+n" to delta when the driver counts objects of that type
 * (older drivers have fewer hw_objects files).
 */
static void delta_add(char *delta, size_t size, const struct qhca_objs *base,
		      const char *name, long n)
{
	size_t len = strlen(delta);

	if (qhca_objs_get(base, name) >= 0)
		snprintf(delta + len, size - len, " %s+%ld", name, n);
}

/* The child's state letter in /proc/PID/stat, or 0. */
static char proc_state(pid_t pid)
{
	char path[32], buf[256], *paren;
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return 0;
	buf[len] = '\0';
	paren = strrchr(buf, ')');
	return paren && paren[1] == ' ' ? paren[2] : 0;
}

/*
 * Waits (bounded) until the child's work is under way in the device, so
 * the kill lands on work in flight: the device has answered with an RNR
 * NAK, sent the unanswered WRITEs' packets, completed more of the stream,
 * or the child sleeps in ibv_get_cq_event().  start holds the counters
 * read, fresh, before the child was made.
 */
static bool work_in_flight(enum kid_work work, pid_t child,
			   const long start[3])
{
	long deadline = rc_now_ms() + RC_POLL_MS;

	switch (work) {
	case KID_RNR_FOREVER:
		return rc_wait_hw_counter("rnr_naks_rcvd", start[0],
					  RC_POLL_MS) > start[0];
	case KID_NO_ACK_FOREVER:
		return rc_wait_hw_counter("tx_packets", start[1],
					  RC_POLL_MS) > start[1];
	case KID_STREAMING:
		/* The first WRITE's CQE came before "ready". */
		return rc_wait_hw_counter("cqes", start[2] + 1,
					  RC_POLL_MS) > start[2] + 1;
	case KID_EVENT_WAIT:
		while (proc_state(child) != 'S' && rc_now_ms() < deadline)
			usleep(10000);
		return proc_state(child) == 'S';
	default:
		return true;
	}
}

TEST_F_TIMEOUT(kill, objects_released, 90)
{
	const long n = variant->contexts;
	char delta[256], why[512];
	struct rc_opts opts;
	struct rc_pair p;
	struct rc_buf src, dst;
	struct ibv_sge sge;
	char msg[16] = "";
	int fds[2], status;
	long start[3];
	ssize_t len;

	qhca_hw_counters_expire();
	start[0] = qhca_hw_counter("rnr_naks_rcvd");
	start[1] = qhca_hw_counter("tx_packets");
	start[2] = qhca_hw_counter("cqes");
	ASSERT_LE(0, start[0]);
	ASSERT_LE(0, start[1]);
	ASSERT_LE(0, start[2]);
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
	snprintf(delta, sizeof(delta),
		 "uars+%ld pds+%ld cqs+%ld mrs+%ld qps+%ld", n, n, n, n,
		 variant->work == KID_EVERY_OBJECT ? 3 : 2 * n);
	if (variant->work == KID_EVERY_OBJECT) {
		/* The AH is libqhca's alone: no kernel or device count. */
		delta_add(delta, sizeof(delta), &self->base, "srqs", 1);
		delta_add(delta, sizeof(delta), &self->base, "mws", 2);
		delta_add(delta, sizeof(delta), &self->base, "xrcds", 1);
		delta_add(delta, sizeof(delta), &self->base, "mcast_groups",
			  1);
	}
	QHCA_EXPECT_OBJS(self->base, "%s", delta);
	EXPECT_TRUE(work_in_flight(variant->work, self->child, start))
		TH_LOG("the child's work did not start within %d ms",
		       RC_POLL_MS);

	ASSERT_EQ(0, kill(self->child, SIGKILL));
	ASSERT_EQ(self->child, waitpid(self->child, &status, 0));
	self->child = 0;
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

	EXPECT_TRUE(back_to_base(&self->base, why, sizeof(why)))
		TH_LOG("left behind: %s", why);

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
