// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * rc_wire: the RC data checks between two guests of a segment, over the
 * wire (tests/fabric/rc_wire.sh runs it for every pair, each side serving
 * once).
 *
 *   rc_wire -d DEV -g GID_INDEX -p PORT --serve
 *   rc_wire -d DEV -g GID_INDEX -p PORT --connect HOST TEST...
 *
 * The connecting side is the requester: for each TEST it names, both sides
 * create the test's RC QPs, exchange QP numbers, PSNs, GIDs, rkeys and
 * addresses over one TCP connection (the control channel), connect the QPs
 * over the RoCE v2 GID given (-g) and run the test, the requester posting,
 * the responder checking what reached its memory and its receive queue.
 * Each side prints one TAP line per test: the requester's says whether the
 * requester's checks and the responder's (which it reads back over the
 * control channel) all passed, the responder's says its own.
 *
 * Plain libibverbs, so that it runs on any RoCE device (rxe0 too).  Only
 * the tests that use the device's fault injector (loss, loss_ack, link)
 * need qhca: qhca.ko's debugfs file and hw counters.  kill must be the
 * last test: the responder dies in it.
 *
 * Every wait is bounded: CTL_WAIT_S for a line of the control channel,
 * POLL_MS for a completion.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#define CTL_WAIT_S	60
#define POLL_MS		20000
#define MAX_QPS		64
#define KB		1024
/* The message slots of the one-QP tests: four of 64 KiB each side. */
#define NMSG		4
#define MSG_SLOT	(64 * KB)
#define POISON		0xa5

/* The sizes the opcode tests send: a byte, one packet, and > MTU ones. */
static const uint32_t sizes[NMSG] = { 1, 1024, 5000, 65536 };

/* ---- the process ---------------------------------------------------- */

static const char *dev_name;
static int gid_index = -1;
static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_device_attr dattr;
static uint64_t dcaps_ex;		/* ibv_query_device_ex()'s, or 0 */
static struct ibv_port_attr pattr;
static union ibv_gid my_gid;
static FILE *cin, *cout;
static int test_num;
static char why[512];

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

/* Records the first reason of a failure; returns -1. */
static int __attribute__((format(printf, 1, 2))) fail(const char *fmt, ...)
{
	va_list ap;

	if (!why[0]) {
		va_start(ap, fmt);
		vsnprintf(why, sizeof(why), fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* ---- data patterns ---------------------------------------------------- */

/* Byte off of message seed: differs between seeds and along a message. */
static uint8_t pat(uint32_t seed, size_t off)
{
	uint32_t h = (uint32_t)off * 0x9e3779b1u + seed * 0x85ebca77u;

	h ^= h >> 15;
	h *= 0x2c1b3c6du;
	return (uint8_t)(h >> 24);
}

static void fill(uint8_t *b, size_t len, uint32_t seed)
{
	for (size_t i = 0; i < len; i++)
		b[i] = pat(seed, i);
}

/* What a destination holds before: every byte unlike fill()'s. */
static void poison(uint8_t *b, size_t len, uint32_t seed)
{
	for (size_t i = 0; i < len; i++)
		b[i] = (uint8_t)~pat(seed, i);
}

/*
 * The first byte of b[from..to) that is not seed's pattern (or its poison)
 * at that offset, or -1.
 */
static long mismatch_in(const uint8_t *b, size_t from, size_t to,
			uint32_t seed, bool poisoned)
{
	uint8_t x = poisoned ? 0xff : 0;

	for (size_t i = from; i < to; i++)
		if (b[i] != (uint8_t)(pat(seed, i) ^ x))
			return (long)i;
	return -1;
}

static long mismatch(const uint8_t *b, size_t len, uint32_t seed, bool poisoned)
{
	return mismatch_in(b, 0, len, seed, poisoned);
}

static long not_byte(const uint8_t *b, size_t len, uint8_t v)
{
	for (size_t i = 0; i < len; i++)
		if (b[i] != v)
			return (long)i;
	return -1;
}

/*
 * A message of seed arrived whole at b, and the rest of its area of room
 * bytes still holds the poison of seed + POISON_SEED (nothing wrote past
 * the message).
 */
#define POISON_SEED	0x100000

static int check_msg(const char *what, const uint8_t *b, size_t len,
		     size_t room, uint32_t seed)
{
	long at = mismatch(b, len, seed, false);

	if (at >= 0)
		return fail("%s: byte %ld of %zu differs", what, at, len);
	at = mismatch_in(b, len, room, seed + POISON_SEED, true);
	if (at >= 0)
		return fail("%s: byte %ld, after the %zu bytes, was written",
			    what, at, len);
	return 0;
}

/* ---- the control channel ------------------------------------------- */

static int __attribute__((format(printf, 1, 2))) ctl_put(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(cout, fmt, ap);
	va_end(ap);
	fputc('\n', cout);
	return fflush(cout) ? fail("control channel: %s", strerror(errno)) : 0;
}

/* The next line (no newline) within CTL_WAIT_S; -1 at EOF or timeout. */
static int ctl_get(char *buf, size_t n)
{
	size_t l;

	if (!fgets(buf, (int)n, cin)) {
		buf[0] = 0;
		return fail("control channel: %s", feof(cin) ? "closed by the peer" :
			    "no line within " "the wait");
	}
	l = strlen(buf);
	if (l && buf[l - 1] == '\n')
		buf[l - 1] = 0;
	return 0;
}

/* ---- the test's resources ----------------------------------------- */

struct peer {
	uint32_t qpn, psn, rkey, mtu;
	uint64_t addr, len;
	union ibv_gid gid;
};

struct test;

struct wire {
	const struct test *t;
	bool requester;
	int nqp;
	size_t slot, size;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp[MAX_QPS];
	uint32_t psn[MAX_QPS];
	uint8_t *lbuf, *tbuf;		/* local data; the target peers reach */
	struct ibv_mr *lmr, *tmr;
	struct ibv_mw *mw;
	struct peer rem[MAX_QPS];
	uint32_t extra;			/* READY's value (send_inv: the rkey) */
	bool done_seen;
	long counter0, counter1;	/* the injector tests' baselines */
};

struct test {
	const char *name;
	int nqp;
	size_t slot;
	uint8_t timeout, retry_cnt, rnr_retry, min_rnr_timer;
	bool mw;
	int (*prep)(struct wire *w);	/* responder, before READY */
	int (*req)(struct wire *w);
	int (*resp)(struct wire *w);	/* responder, after READY */
};

/*
 * The IBA 1.5 memory placement tests (below): extended QPs that may post
 * FLUSH and ATOMIC_WRITE, the QPs and the target allowing FLUSH_GLOBAL.
 */
static bool placement_test(const struct test *t)
{
	return !strncmp(t->name, "atomic_write", 12) ||
	       !strcmp(t->name, "flush");
}

static uint32_t seed_of(int q, int i)
{
	return (uint32_t)(test_num << 16 | q << 8 | i) * 2654435761u;
}

/* The NMSG messages of the opcode tests (QP 0's), one an area of base. */
static int check_all(const char *kind, const uint8_t *base)
{
	char what[64];

	for (int i = 0; i < NMSG; i++) {
		snprintf(what, sizeof(what), "%s %d", kind, i);
		if (check_msg(what, base + i * MSG_SLOT, sizes[i], MSG_SLOT,
			      seed_of(0, i)))
			return -1;
	}
	return 0;
}

static uint8_t *lslot(struct wire *w, int q) { return w->lbuf + q * w->slot; }
static uint8_t *tslot(struct wire *w, int q) { return w->tbuf + q * w->slot; }
static uint64_t rslot(struct wire *w, int q)
{
	return w->rem[q].addr + (uint64_t)q * w->slot;
}

static void teardown(struct wire *w)
{
	for (int q = 0; q < w->nqp; q++)
		if (w->qp[q])
			ibv_destroy_qp(w->qp[q]);
	if (w->mw)
		ibv_dealloc_mw(w->mw);
	if (w->scq)
		ibv_destroy_cq(w->scq);
	if (w->rcq)
		ibv_destroy_cq(w->rcq);
	if (w->lmr)
		ibv_dereg_mr(w->lmr);
	if (w->tmr)
		ibv_dereg_mr(w->tmr);
	free(w->lbuf);
	free(w->tbuf);
	memset(w, 0, sizeof(*w));
}

static void gid_hex(const union ibv_gid *g, char *s)
{
	for (int i = 0; i < 16; i++)
		sprintf(s + 2 * i, "%02x", g->raw[i]);
}

static int hex_gid(const char *s, union ibv_gid *g)
{
	unsigned int v;

	if (strlen(s) != 32)
		return -1;
	for (int i = 0; i < 16; i++) {
		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return -1;
		g->raw[i] = (uint8_t)v;
	}
	return 0;
}

static int connect_qp(struct wire *w, int q)
{
	const struct test *t = w->t;
	struct ibv_qp_attr a;
	int rd = dattr.max_qp_rd_atom < 4 ? dattr.max_qp_rd_atom : 4;
	int drd = dattr.max_qp_init_rd_atom < 4 ? dattr.max_qp_init_rd_atom : 4;
	enum ibv_mtu mtu = pattr.active_mtu;

	if (w->rem[q].mtu < (uint32_t)mtu)
		mtu = (enum ibv_mtu)w->rem[q].mtu;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = mtu;
	a.dest_qp_num = w->rem[q].qpn;
	a.rq_psn = w->rem[q].psn;
	a.max_dest_rd_atomic = rd;
	a.min_rnr_timer = t->min_rnr_timer;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = w->rem[q].gid;
	a.ah_attr.grh.sgid_index = gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(w->qp[q], &a, IBV_QP_STATE | IBV_QP_AV |
			  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return fail("QP %d to RTR: %s", q, strerror(errno));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = w->psn[q];
	a.timeout = t->timeout;
	a.retry_cnt = t->retry_cnt;
	a.rnr_retry = t->rnr_retry;
	a.max_rd_atomic = drd;
	if (ibv_modify_qp(w->qp[q], &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			  IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
		return fail("QP %d to RTS: %s", q, strerror(errno));
	return 0;
}

/*
 * Both sides: the test's CQs, QPs and buffers, the exchange over the
 * control channel, and the QPs connected.  The PSNs start just below the
 * 24-bit wrap on the requester's side, so the longer messages cross it.
 */
static int setup(struct wire *w, const struct test *t, bool requester)
{
	char line[256], gs[40];
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	int qp_access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			IBV_ACCESS_REMOTE_ATOMIC;

	w->t = t;
	w->requester = requester;
	w->nqp = t->nqp;
	w->slot = t->slot;
	w->size = (size_t)t->nqp * t->slot;
	w->lbuf = aligned_alloc(4096, w->size);
	w->tbuf = aligned_alloc(4096, w->size);
	if (!w->lbuf || !w->tbuf)
		return fail("no memory for %zu bytes", w->size);
	memset(w->lbuf, POISON, w->size);
	memset(w->tbuf, POISON, w->size);
	w->lmr = ibv_reg_mr(pd, w->lbuf, w->size, IBV_ACCESS_LOCAL_WRITE);
	if (t->mw)
		access |= IBV_ACCESS_MW_BIND;
	if (placement_test(t)) {
		access |= IBV_ACCESS_FLUSH_GLOBAL;
		qp_access |= IBV_ACCESS_FLUSH_GLOBAL;
	}
	w->tmr = ibv_reg_mr(pd, w->tbuf, w->size, access);
	if (!w->lmr || !w->tmr)
		return fail("ibv_reg_mr: %s", strerror(errno));
	w->scq = ibv_create_cq(ctx, t->nqp * 16, NULL, NULL, 0);
	w->rcq = ibv_create_cq(ctx, t->nqp * 8, NULL, NULL, 0);
	if (!w->scq || !w->rcq)
		return fail("ibv_create_cq: %s", strerror(errno));
	for (int q = 0; q < t->nqp; q++) {
		struct ibv_qp_init_attr ia = {
			.send_cq = w->scq, .recv_cq = w->rcq,
			.cap = { .max_send_wr = 16, .max_recv_wr = 8,
				 .max_send_sge = 1, .max_recv_sge = 1 },
			.qp_type = IBV_QPT_RC,
		};
		struct ibv_qp_attr a = {
			.qp_state = IBV_QPS_INIT, .port_num = 1,
			.qp_access_flags = qp_access,
		};

		if (placement_test(t)) {
			struct ibv_qp_init_attr_ex iax = {
				.send_cq = ia.send_cq, .recv_cq = ia.recv_cq,
				.cap = ia.cap, .qp_type = IBV_QPT_RC,
				.comp_mask = IBV_QP_INIT_ATTR_PD |
					     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
				.pd = pd,
				.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE |
						  IBV_QP_EX_WITH_FLUSH |
						  IBV_QP_EX_WITH_ATOMIC_WRITE,
			};

			iax.cap.max_inline_data = 64;

			w->qp[q] = ibv_create_qp_ex(ctx, &iax);
		} else {
			w->qp[q] = ibv_create_qp(pd, &ia);
		}
		if (!w->qp[q])
			return fail("ibv_create_qp %d: %s", q, strerror(errno));
		if (ibv_modify_qp(w->qp[q], &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
			return fail("QP %d to INIT: %s", q, strerror(errno));
		w->psn[q] = ((requester ? 0xfffff0u : 0x7ffff0u) + q) & 0xffffff;
	}
	gid_hex(&my_gid, gs);
	for (int q = 0; q < t->nqp; q++)
		if (ctl_put("QP %u %u %u %d %" PRIu64 " %zu %s", w->qp[q]->qp_num,
			    w->psn[q], w->tmr->rkey, pattr.active_mtu,
			    (uint64_t)(uintptr_t)w->tbuf, w->size, gs))
			return -1;
	for (int q = 0; q < t->nqp; q++) {
		struct peer *r = &w->rem[q];

		if (ctl_get(line, sizeof(line)))
			return -1;
		if (sscanf(line, "QP %u %u %u %u %" SCNu64 " %" SCNu64 " %39s",
			   &r->qpn, &r->psn, &r->rkey, &r->mtu, &r->addr,
			   &r->len, gs) != 7 || hex_gid(gs, &r->gid))
			return fail("control channel: not a QP line: '%s'", line);
	}
	for (int q = 0; q < t->nqp; q++)
		if (connect_qp(w, q))
			return -1;
	return 0;
}

/* ---- posting and polling ------------------------------------------ */

/*
 * One signaled WR of len bytes at buf (a local or a target buffer), to
 * raddr/rkey for the RDMA opcodes; imm is the immediate of the _WITH_IMM
 * opcodes and the key SEND_WITH_INV invalidates.
 */
static int post_imm(struct wire *w, int q, uint64_t id, enum ibv_wr_opcode op,
		    uint8_t *buf, uint32_t len, uint64_t raddr, uint32_t rkey,
		    uint32_t imm)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf, .length = len, .lkey = w->lmr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	int ret;

	if (buf >= w->tbuf && buf < w->tbuf + w->size)
		sge.lkey = w->tmr->lkey;
	if (op == IBV_WR_SEND_WITH_INV)
		wr.invalidate_rkey = imm;
	else
		wr.imm_data = htobe32(imm);
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	ret = ibv_post_send(w->qp[q], &wr, &bad);
	return ret ? fail("ibv_post_send QP %d opcode %d: %s", q, op,
			  strerror(ret)) : 0;
}

static int post(struct wire *w, int q, uint64_t id, enum ibv_wr_opcode op,
		uint8_t *buf, uint32_t len, uint64_t raddr, uint32_t rkey)
{
	return post_imm(w, q, id, op, buf, len, raddr, rkey, 0);
}

static int post_atomic(struct wire *w, uint64_t id, enum ibv_wr_opcode op,
		       uint8_t *res, uint64_t raddr, uint64_t cmp_add,
		       uint64_t swap)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)res, .length = 8, .lkey = w->lmr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	int ret;

	wr.wr.atomic.remote_addr = raddr;
	wr.wr.atomic.rkey = w->rem[0].rkey;
	wr.wr.atomic.compare_add = cmp_add;
	wr.wr.atomic.swap = swap;
	ret = ibv_post_send(w->qp[0], &wr, &bad);
	return ret ? fail("ibv_post_send atomic: %s", strerror(ret)) : 0;
}

/* A receive of len bytes at buf (a target buffer; NULL: no SGE). */
static int post_recv(struct wire *w, int q, uint64_t id, uint8_t *buf,
		     uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf, .length = len, .lkey = w->tmr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = id, .sg_list = &sge, .num_sge = buf ? 1 : 0,
	}, *bad;
	int ret = ibv_post_recv(w->qp[q], &wr, &bad);

	return ret ? fail("ibv_post_recv QP %d: %s", q, strerror(ret)) : 0;
}

/* One completion within ms: 1, 0 when none came, -1 on an error. */
static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc, long ms)
{
	long end = now_ms() + ms;
	unsigned int spins = 0;
	int n;

	for (;;) {
		memset(wc, 0, sizeof(*wc));
		n = ibv_poll_cq(cq, 1, wc);
		if (n < 0)
			return fail("ibv_poll_cq: %d", n);
		if (n)
			return 1;
		if (now_ms() >= end)
			return 0;
		/* Leave the vCPU to the peer's kernel work (rxe) now and then. */
		if (++spins % 64 == 0)
			usleep(100);
		else
			sched_yield();
	}
}

/* The next completion on cq must be id with status st (and opcode op). */
static int expect_wc(struct ibv_cq *cq, uint64_t id, enum ibv_wc_status st,
		     int op, struct ibv_wc *out)
{
	struct ibv_wc wc;

	if (poll_one(cq, &wc, POLL_MS) != 1)
		return fail("no completion of wr_id %#llx (%s expected) within %d ms",
			    (unsigned long long)id, ibv_wc_status_str(st),
			    POLL_MS);
	if (out)
		*out = wc;
	if (wc.wr_id != id || wc.status != st)
		return fail("wr_id %#llx: %s (vendor error %#x), expected wr_id %#llx: %s",
			    (unsigned long long)wc.wr_id,
			    ibv_wc_status_str(wc.status), wc.vendor_err,
			    (unsigned long long)id, ibv_wc_status_str(st));
	if (op >= 0 && st == IBV_WC_SUCCESS && (int)wc.opcode != op)
		return fail("wr_id %#llx: opcode %d, expected %d",
			    (unsigned long long)id, wc.opcode, op);
	return 0;
}

static int qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	return ibv_query_qp(qp, &attr, IBV_QP_STATE, &init) ? -1 :
	       (int)attr.qp_state;
}

static int expect_qp_err(struct wire *w, int q)
{
	int s = qp_state(w->qp[q]);

	return s == IBV_QPS_ERR ? 0 :
	       fail("QP %d is in state %d after the error, not ERR", q, s);
}

/* The responder: the requester's DONE (it has seen its completions). */
static int wait_done(struct wire *w)
{
	char line[256];

	if (w->done_seen)
		return 0;
	if (ctl_get(line, sizeof(line)))
		return -1;
	if (strcmp(line, "DONE"))
		return fail("control channel: '%s', expected DONE", line);
	w->done_seen = true;
	return 0;
}

/* The responder: line word from the requester (DONE instead: it failed). */
static int wait_word(struct wire *w, const char *word)
{
	char line[256];

	if (ctl_get(line, sizeof(line)))
		return -1;
	if (!strcmp(line, "DONE"))
		w->done_seen = true;
	if (strcmp(line, word))
		return fail("control channel: '%s', expected %s", line, word);
	return 0;
}

/* ---- the device's counters and injector (qhca) --------------------- */

static long counter(const char *name)
{
	char path[256];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/1/hw_counters/%s", dev_name,
		 name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/*
 * ib_core keeps the hw counters it read for "lifespan" ms: waiting that
 * long (a wait for time, not for an event) makes the next read see
 * everything before this call.
 */
static long counter_fresh(const char *name)
{
	long life = counter("lifespan");

	usleep(((life > 0 ? life : 10) + 10) * 1000);
	return counter(name);
}

/* Waits up to ms for counter name to exceed above; its last value. */
static long counter_above(const char *name, long above, long ms)
{
	long end = now_ms() + ms, v;

	for (;;) {
		v = counter(name);
		if (v < 0 || v > above || now_ms() >= end)
			return v;
		usleep(10000);	/* ib_core's cache: no newer value sooner */
	}
}

static int inject(const char *fault)
{
	char path[256];
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), "/sys/kernel/debug/qhca/%s/inject",
		 dev_name);
	f = fopen(path, "w");
	if (!f)
		return fail("%s: %s", path, strerror(errno));
	ret = fprintf(f, "%s\n", fault) < 0;
	ret |= fclose(f) != 0;
	return ret ? fail("%s: '%s': %s", path, fault, strerror(errno)) : 0;
}

/* ---- the opcode tests ------------------------------------------------- */

static bool imm_test(const struct wire *w)
{
	return !strcmp(w->t->name, "send_imm") ||
	       !strcmp(w->t->name, "write_imm");
}

static uint32_t imm_of(int i) { return 0x5eed0000u + (uint32_t)i * 0x1111u; }

/* send, send_imm: a receive for each message, its area poisoned. */
static int send_prep(struct wire *w)
{
	for (int i = 0; i < NMSG; i++) {
		poison(tslot(w, 0) + i * MSG_SLOT, MSG_SLOT,
		       seed_of(0, i) + POISON_SEED);
		if (post_recv(w, 0, i, tslot(w, 0) + i * MSG_SLOT, MSG_SLOT))
			return -1;
	}
	return 0;
}

static int send_req(struct wire *w)
{
	bool imm = imm_test(w);

	for (int i = 0; i < NMSG; i++) {
		uint8_t *b = lslot(w, 0) + i * MSG_SLOT;

		fill(b, sizes[i], seed_of(0, i));
		if (imm ? post_imm(w, 0, i, IBV_WR_SEND_WITH_IMM, b, sizes[i],
				   0, 0, imm_of(i)) :
			  post(w, 0, i, IBV_WR_SEND, b, sizes[i], 0, 0))
			return -1;
	}
	for (int i = 0; i < NMSG; i++)
		if (expect_wc(w->scq, i, IBV_WC_SUCCESS, IBV_WC_SEND, NULL))
			return -1;
	return 0;
}

/* The receive completion of message i: opcode, length, immediate. */
static int check_recv_wc(const struct ibv_wc *wc, int i, int op,
			 uint32_t len, bool imm)
{
	unsigned int flags = wc->wc_flags & (IBV_WC_WITH_IMM | IBV_WC_WITH_INV);

	if ((int)wc->opcode != op)
		return fail("receive %d: opcode %d, expected %d", i, wc->opcode,
			    op);
	if (wc->byte_len != len)
		return fail("receive %d: byte_len %u, expected %u", i,
			    wc->byte_len, len);
	if (flags != (imm ? IBV_WC_WITH_IMM : 0u))
		return fail("receive %d: wc_flags %#x, expected %#x", i,
			    wc->wc_flags, imm ? IBV_WC_WITH_IMM : 0);
	if (imm && be32toh(wc->imm_data) != imm_of(i))
		return fail("receive %d: immediate %#x, expected %#x", i,
			    be32toh(wc->imm_data), imm_of(i));
	return 0;
}

static int send_resp(struct wire *w)
{
	bool imm = imm_test(w);
	struct ibv_wc wc;

	for (int i = 0; i < NMSG; i++)
		if (expect_wc(w->rcq, i, IBV_WC_SUCCESS, -1, &wc) ||
		    check_recv_wc(&wc, i, IBV_WC_RECV, sizes[i], imm))
			return -1;
	if (check_all("message", tslot(w, 0)))
		return -1;
	return wait_done(w);
}

/* write, write_imm: the areas poisoned (and receives for the immediates). */
static int write_prep(struct wire *w)
{
	for (int i = 0; i < NMSG; i++) {
		poison(tslot(w, 0) + i * MSG_SLOT, MSG_SLOT,
		       seed_of(0, i) + POISON_SEED);
		if (imm_test(w) && post_recv(w, 0, i, NULL, 0))
			return -1;
	}
	return 0;
}

static int write_req(struct wire *w)
{
	bool imm = imm_test(w);

	for (int i = 0; i < NMSG; i++) {
		uint8_t *b = lslot(w, 0) + i * MSG_SLOT;
		uint64_t ra = rslot(w, 0) + i * MSG_SLOT;

		fill(b, sizes[i], seed_of(0, i));
		if (imm ? post_imm(w, 0, i, IBV_WR_RDMA_WRITE_WITH_IMM, b,
				   sizes[i], ra, w->rem[0].rkey, imm_of(i)) :
			  post(w, 0, i, IBV_WR_RDMA_WRITE, b, sizes[i], ra,
			       w->rem[0].rkey))
			return -1;
	}
	for (int i = 0; i < NMSG; i++)
		if (expect_wc(w->scq, i, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE,
			      NULL))
			return -1;
	return 0;
}

static int write_resp(struct wire *w)
{
	struct ibv_wc wc;

	if (imm_test(w))
		for (int i = 0; i < NMSG; i++)
			if (expect_wc(w->rcq, i, IBV_WC_SUCCESS, -1, &wc) ||
			    check_recv_wc(&wc, i, IBV_WC_RECV_RDMA_WITH_IMM,
					  sizes[i], true))
				return -1;
	if (wait_done(w))
		return -1;
	return check_all("write", tslot(w, 0));
}

/* read: the responder's areas hold the data, the requester's poison. */
static int read_prep(struct wire *w)
{
	for (int i = 0; i < NMSG; i++)
		fill(tslot(w, 0) + i * MSG_SLOT, MSG_SLOT, seed_of(0, i));
	return 0;
}

static int read_req(struct wire *w)
{
	for (int i = 0; i < NMSG; i++) {
		uint8_t *b = lslot(w, 0) + i * MSG_SLOT;

		poison(b, MSG_SLOT, seed_of(0, i) + POISON_SEED);
		if (post(w, 0, i, IBV_WR_RDMA_READ, b, sizes[i],
			 rslot(w, 0) + i * MSG_SLOT, w->rem[0].rkey))
			return -1;
	}
	for (int i = 0; i < NMSG; i++)
		if (expect_wc(w->scq, i, IBV_WC_SUCCESS, IBV_WC_RDMA_READ,
			      NULL))
			return -1;
	return check_all("read", lslot(w, 0));
}

static int read_resp(struct wire *w)
{
	if (wait_done(w))
		return -1;
	for (int i = 0; i < NMSG; i++)
		if (mismatch(tslot(w, 0) + i * MSG_SLOT, MSG_SLOT,
			     seed_of(0, i), false) >= 0)
			return fail("a READ changed the responder's area %d", i);
	return 0;
}

/* atomic: two compare-and-swaps (one matching, one not), two fetch-adds. */
#define CAS_OLD		0x0123456789abcdefull
#define CAS_NEW		0xfedcba9876543210ull
#define FAA_OLD		1000ull
#define FAA_ADD1	5ull
#define FAA_ADD2	(1ull << 40)

static int atomic_prep(struct wire *w)
{
	uint64_t *t = (uint64_t *)tslot(w, 0);

	t[0] = CAS_OLD;
	t[1] = FAA_OLD;
	return 0;
}

static int atomic_req(struct wire *w)
{
	uint64_t *res = (uint64_t *)lslot(w, 0), ra = rslot(w, 0);
	static const int ops[] = { IBV_WC_COMP_SWAP, IBV_WC_COMP_SWAP,
				   IBV_WC_FETCH_ADD, IBV_WC_FETCH_ADD };
	static const uint64_t want[] = { CAS_OLD, CAS_NEW, FAA_OLD,
					 FAA_OLD + FAA_ADD1 };

	if (post_atomic(w, 0, IBV_WR_ATOMIC_CMP_AND_SWP, (uint8_t *)&res[0],
			ra, CAS_OLD, CAS_NEW) ||
	    post_atomic(w, 1, IBV_WR_ATOMIC_CMP_AND_SWP, (uint8_t *)&res[1],
			ra, CAS_OLD, 0x1111) ||
	    post_atomic(w, 2, IBV_WR_ATOMIC_FETCH_AND_ADD, (uint8_t *)&res[2],
			ra + 8, FAA_ADD1, 0) ||
	    post_atomic(w, 3, IBV_WR_ATOMIC_FETCH_AND_ADD, (uint8_t *)&res[3],
			ra + 8, FAA_ADD2, 0))
		return -1;
	for (int i = 0; i < 4; i++)
		if (expect_wc(w->scq, i, IBV_WC_SUCCESS, ops[i], NULL))
			return -1;
	for (int i = 0; i < 4; i++)
		if (res[i] != want[i])
			return fail("atomic %d returned %#llx, expected %#llx",
				    i, (unsigned long long)res[i],
				    (unsigned long long)want[i]);
	if (not_byte(lslot(w, 0) + 32, MSG_SLOT - 32, POISON) >= 0)
		return fail("an atomic wrote past its 8-byte result");
	return 0;
}

static int atomic_resp(struct wire *w)
{
	uint64_t *t = (uint64_t *)tslot(w, 0);

	if (wait_done(w))
		return -1;
	if (t[0] != CAS_NEW)
		return fail("compare-and-swap left %#llx, expected %#llx",
			    (unsigned long long)t[0], CAS_NEW);
	if (t[1] != FAA_OLD + FAA_ADD1 + FAA_ADD2)
		return fail("fetch-and-add left %#llx, expected %#llx",
			    (unsigned long long)t[1],
			    FAA_OLD + FAA_ADD1 + FAA_ADD2);
	if (not_byte(tslot(w, 0) + 16, MSG_SLOT - 16, POISON) >= 0)
		return fail("an atomic wrote past its 8 bytes");
	return 0;
}

/*
 * The IBA 1.5 memory placement tests, with ibv_wr_*() (rdma-core 56.1's rxe
 * provider copies no remote address or rkey into the work request of an
 * ibv_post_send() IBV_WR_ATOMIC_WRITE: rxe sends rkey 0; qhca's own
 * ibv_post_send() form is tests/flush_atomic_write.c's).
 *
 *   atomic_write      two ATOMIC_WRITEs of 8 bytes land whole, and
 *                     nothing beside them
 *   atomic_write_bad  one at an address not 8-byte aligned is an invalid
 *                     request, the target untouched
 *   flush             an RDMA WRITE of 5000 bytes, a FLUSH of its range
 *                     and one of the whole MR complete in order, and the
 *                     WRITE is in place
 */
#define AW_1		0x1122334455667788ull
#define AW_2		0x99aabbccddeeff00ull
#define FL_OFF		64

/* One signaled ATOMIC_WRITE of v to raddr, posted alone. */
static int wr_atomic_write(struct wire *w, uint64_t id, uint64_t raddr,
			   uint64_t v)
{
	struct ibv_qp_ex *q = ibv_qp_to_qp_ex(w->qp[0]);
	int ret;

	ibv_wr_start(q);
	q->wr_id = id;
	q->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(q, w->rem[0].rkey, raddr, &v);
	ret = ibv_wr_complete(q);
	return ret ? fail("ibv_wr_complete: %s", strerror(ret)) : 0;
}

static int atomic_write_req(struct wire *w)
{
	if (wr_atomic_write(w, 0, rslot(w, 0), AW_1) ||
	    wr_atomic_write(w, 1, rslot(w, 0) + 8, AW_2))
		return -1;
	for (int i = 0; i < 2; i++)
		if (expect_wc(w->scq, i, IBV_WC_SUCCESS, IBV_WC_ATOMIC_WRITE,
			      NULL))
			return -1;
	return 0;
}

static int atomic_write_resp(struct wire *w)
{
	uint64_t v[2];
	long at;

	if (wait_done(w))
		return -1;
	memcpy(v, tslot(w, 0), sizeof(v));
	if (v[0] != AW_1 || v[1] != AW_2)
		return fail("ATOMIC_WRITE left %#llx and %#llx",
			    (unsigned long long)v[0], (unsigned long long)v[1]);
	at = not_byte(tslot(w, 0) + 16, w->size - 16, POISON);
	return at >= 0 ? fail("byte %ld after the ATOMIC_WRITEs was written",
			      16 + at) : 0;
}

static int atomic_write_bad_req(struct wire *w)
{
	if (wr_atomic_write(w, 0, rslot(w, 0) + 4, AW_1) ||
	    expect_wc(w->scq, 0, IBV_WC_REM_INV_REQ_ERR, -1, NULL))
		return -1;
	return expect_qp_err(w, 0);
}

static int flush_req(struct wire *w)
{
	struct ibv_qp_ex *q = ibv_qp_to_qp_ex(w->qp[0]);
	static const int ops[] = { IBV_WC_RDMA_WRITE, IBV_WC_FLUSH,
				   IBV_WC_FLUSH };
	uint64_t ra = rslot(w, 0);
	int ret;

	fill(lslot(w, 0), 5000, seed_of(0, 0));
	ibv_wr_start(q);
	q->wr_flags = IBV_SEND_SIGNALED;
	q->wr_id = 0;
	ibv_wr_rdma_write(q, w->rem[0].rkey, ra + FL_OFF);
	ibv_wr_set_sge(q, w->lmr->lkey, (uintptr_t)lslot(w, 0), 5000);
	q->wr_id = 1;
	ibv_wr_flush(q, w->rem[0].rkey, ra + FL_OFF, 5000, IBV_FLUSH_GLOBAL,
		     IBV_FLUSH_RANGE);
	q->wr_id = 2;
	ibv_wr_flush(q, w->rem[0].rkey, ra, 0, IBV_FLUSH_GLOBAL,
		     IBV_FLUSH_MR);
	ret = ibv_wr_complete(q);
	if (ret)
		return fail("ibv_wr_complete: %s", strerror(ret));
	for (int i = 0; i < 3; i++)
		if (expect_wc(w->scq, i, IBV_WC_SUCCESS, ops[i], NULL))
			return -1;
	return 0;
}

static int flush_resp(struct wire *w)
{
	uint8_t *t = tslot(w, 0);
	long at;

	if (wait_done(w))
		return -1;
	at = mismatch(t + FL_OFF, 5000, seed_of(0, 0), false);
	if (at >= 0)
		return fail("the WRITE before the FLUSH: byte %ld differs", at);
	at = not_byte(t, FL_OFF, POISON);
	if (at < 0)
		at = not_byte(t + FL_OFF + 5000, w->size - FL_OFF - 5000,
			      POISON);
	return at >= 0 ? fail("a byte beside the WRITE was written") : 0;
}

/*
 * send_inv: the responder binds a type 2 window over its first area and
 * gives its rkey; a WRITE through it lands, a SEND_WITH_INV invalidates
 * it (the receive says so), and a WRITE through it then is refused.
 */
static int inv_prep(struct wire *w)
{
	struct ibv_send_wr wr = {
		.wr_id = 0xb1, .opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	uint32_t rkey;

	poison(tslot(w, 0), MSG_SLOT, seed_of(0, 0) + POISON_SEED);
	poison(tslot(w, 0) + MSG_SLOT, MSG_SLOT, seed_of(0, 1) + POISON_SEED);
	w->mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	if (!w->mw)
		return fail("ibv_alloc_mw type 2: %s", strerror(errno));
	rkey = ibv_inc_rkey(w->mw->rkey);
	wr.bind_mw.mw = w->mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info.mr = w->tmr;
	wr.bind_mw.bind_info.addr = (uintptr_t)tslot(w, 0);
	wr.bind_mw.bind_info.length = MSG_SLOT;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	if (ibv_post_send(w->qp[0], &wr, &bad))
		return fail("BIND_MW: %s", strerror(errno));
	if (expect_wc(w->scq, 0xb1, IBV_WC_SUCCESS, IBV_WC_BIND_MW, NULL))
		return -1;
	w->extra = rkey;
	return post_recv(w, 0, 1, tslot(w, 0) + MSG_SLOT, MSG_SLOT);
}

static int inv_req(struct wire *w)
{
	uint8_t *b0 = lslot(w, 0), *b1 = lslot(w, 0) + MSG_SLOT;
	uint8_t *b2 = lslot(w, 0) + 2 * MSG_SLOT;

	if (!w->extra)
		return fail("the responder gave no window");
	fill(b0, 5000, seed_of(0, 0));
	fill(b1, 1024, seed_of(0, 1));
	fill(b2, 5000, seed_of(0, 2));
	if (post(w, 0, 0, IBV_WR_RDMA_WRITE, b0, 5000, rslot(w, 0), w->extra) ||
	    expect_wc(w->scq, 0, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, NULL))
		return -1;
	if (post_imm(w, 0, 1, IBV_WR_SEND_WITH_INV, b1, 1024, 0, 0, w->extra) ||
	    expect_wc(w->scq, 1, IBV_WC_SUCCESS, IBV_WC_SEND, NULL))
		return -1;
	if (post(w, 0, 2, IBV_WR_RDMA_WRITE, b2, 5000, rslot(w, 0), w->extra) ||
	    expect_wc(w->scq, 2, IBV_WC_REM_ACCESS_ERR, -1, NULL))
		return -1;
	return expect_qp_err(w, 0);
}

static int inv_resp(struct wire *w)
{
	struct ibv_wc wc;

	if (expect_wc(w->rcq, 1, IBV_WC_SUCCESS, IBV_WC_RECV, &wc))
		return -1;
	if (!(wc.wc_flags & IBV_WC_WITH_INV) || wc.invalidated_rkey != w->extra)
		return fail("the receive has wc_flags %#x invalidated_rkey %#x, expected WITH_INV of %#x",
			    wc.wc_flags, wc.invalidated_rkey, w->extra);
	if (wc.byte_len != 1024)
		return fail("the receive has byte_len %u, expected 1024",
			    wc.byte_len);
	if (check_msg("the SEND_WITH_INV", tslot(w, 0) + MSG_SLOT, 1024,
		      MSG_SLOT, seed_of(0, 1)) || wait_done(w))
		return -1;
	/* The first WRITE landed; the one after the invalidation did not. */
	return check_msg("the WRITE through the window", tslot(w, 0), 5000,
			 MSG_SLOT, seed_of(0, 0));
}

/* ---- the error statuses ----------------------------------------------- */

static int untouched_resp(struct wire *w)
{
	long at;

	if (wait_done(w))
		return -1;
	at = not_byte(w->tbuf, w->size, POISON);
	return at >= 0 ? fail("byte %ld of the target was written", at) : 0;
}

/* bad_rkey: a WRITE with a wrong key for the right MR. */
static int bad_rkey_req(struct wire *w)
{
	fill(lslot(w, 0), 1024, seed_of(0, 0));
	if (post(w, 0, 0, IBV_WR_RDMA_WRITE, lslot(w, 0), 1024, rslot(w, 0),
		 w->rem[0].rkey ^ 0xff) ||
	    expect_wc(w->scq, 0, IBV_WC_REM_ACCESS_ERR, -1, NULL))
		return -1;
	return expect_qp_err(w, 0);
}

/* oob: a WRITE across the MR's end, a READ from before its start. */
static int oob_req(struct wire *w)
{
	uint64_t end = w->rem[0].addr + w->rem[0].len;
	struct ibv_wc wc;
	bool seen[2] = { false, false };

	fill(lslot(w, 0), 64, seed_of(0, 0));
	if (post(w, 0, 0, IBV_WR_RDMA_WRITE, lslot(w, 0), 64, end - 32,
		 w->rem[0].rkey) ||
	    post(w, 1, 1, IBV_WR_RDMA_READ, lslot(w, 1), 128,
		 w->rem[1].addr - 64, w->rem[1].rkey))
		return -1;
	for (int i = 0; i < 2; i++) {
		if (poll_one(w->scq, &wc, POLL_MS) != 1)
			return fail("%d of 2 completions within %d ms", i,
				    POLL_MS);
		if (wc.wr_id > 1 || seen[wc.wr_id])
			return fail("completion of wr_id %#llx",
				    (unsigned long long)wc.wr_id);
		seen[wc.wr_id] = true;
		if (wc.status != IBV_WC_REM_ACCESS_ERR)
			return fail("the out-of-bounds %s: %s, expected %s",
				    wc.wr_id ? "READ" : "WRITE",
				    ibv_wc_status_str(wc.status),
				    ibv_wc_status_str(IBV_WC_REM_ACCESS_ERR));
	}
	if (not_byte(lslot(w, 1), w->slot, POISON) >= 0)
		return fail("the refused READ wrote its local buffer");
	return expect_qp_err(w, 0) || expect_qp_err(w, 1) ? -1 : 0;
}

/* rnr0: a SEND with no receive posted and rnr_retry 0. */
static int rnr0_req(struct wire *w)
{
	fill(lslot(w, 0), 64, seed_of(0, 0));
	if (post(w, 0, 0, IBV_WR_SEND, lslot(w, 0), 64, 0, 0) ||
	    expect_wc(w->scq, 0, IBV_WC_RNR_RETRY_EXC_ERR, -1, NULL))
		return -1;
	return expect_qp_err(w, 0);
}

/*
 * rnr_late: rnr_retry 7 (for ever); the responder posts its receive only
 * once its device has sent an RNR NAK (its hw counter says so), and the
 * SEND then completes.  The counter is the device's own: qhca's
 * rnr_naks_sent, rxe's send_rnr_err.
 */
static const char *rnr_counter(void)
{
	static const char *const names[] = { "rnr_naks_sent", "send_rnr_err" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (counter(names[i]) >= 0)
			return names[i];
	return NULL;
}

static int rnr_late_prep(struct wire *w)
{
	const char *c = rnr_counter();

	if (!c)
		return fail("%s has no hw counter of the RNR NAKs it sends",
			    dev_name);
	w->counter0 = counter_fresh(c);
	poison(tslot(w, 0), MSG_SLOT, seed_of(0, 0) + POISON_SEED);
	return 0;
}

static int rnr_late_req(struct wire *w)
{
	fill(lslot(w, 0), 5000, seed_of(0, 0));
	if (post(w, 0, 0, IBV_WR_SEND, lslot(w, 0), 5000, 0, 0) ||
	    ctl_put("POSTED"))
		return -1;
	return expect_wc(w->scq, 0, IBV_WC_SUCCESS, IBV_WC_SEND, NULL);
}

static int rnr_late_resp(struct wire *w)
{
	const char *c = rnr_counter();
	struct ibv_wc wc;
	long v;

	if (wait_word(w, "POSTED"))
		return -1;
	v = counter_above(c, w->counter0, POLL_MS);
	if (v <= w->counter0)
		return fail("%s stayed %ld for %d ms after the SEND was posted",
			    c, v, POLL_MS);
	if (post_recv(w, 0, 0, tslot(w, 0), MSG_SLOT) ||
	    expect_wc(w->rcq, 0, IBV_WC_SUCCESS, -1, &wc) ||
	    check_recv_wc(&wc, 0, IBV_WC_RECV, 5000, false) ||
	    check_msg("the SEND", tslot(w, 0), 5000, MSG_SLOT,
		      seed_of(0, 0)))
		return -1;
	return wait_done(w);
}

/* ---- 64 QPs at once -------------------------------------------------- */

/*
 * Each QP's 16 KiB slot: four WRITEs of 2 KiB (0-8K), four SENDs of 1 KiB
 * into receives at 8K-12K, one READ of the 4 KiB at 12K-16K, all posted on
 * every QP before any completion is polled.
 */
#define QP64_ROUNDS	4

static int qp64_prep(struct wire *w)
{
	for (int q = 0; q < w->nqp; q++) {
		uint8_t *t = tslot(w, q);

		poison(t, 8 * KB, seed_of(q, 0) + POISON_SEED);
		for (int r = 0; r < QP64_ROUNDS; r++)
			if (post_recv(w, q, (uint64_t)q << 8 | r,
				      t + 8 * KB + r * KB, KB))
				return -1;
		fill(t + 12 * KB, 4 * KB, seed_of(q, 9));
	}
	return 0;
}

static int qp64_req(struct wire *w)
{
	int next[MAX_QPS] = { 0 }, total = w->nqp * (2 * QP64_ROUNDS + 1);
	struct ibv_wc wc;

	for (int q = 0; q < w->nqp; q++) {
		uint8_t *l = lslot(w, q);
		uint64_t ra = rslot(w, q);
		uint32_t rk = w->rem[q].rkey;

		for (int r = 0; r < QP64_ROUNDS; r++) {
			fill(l + r * 2 * KB, 2 * KB, seed_of(q, r));
			fill(l + 8 * KB + r * KB, KB, seed_of(q, 4 + r));
			if (post(w, q, (uint64_t)q << 8 | 2 * r,
				 IBV_WR_RDMA_WRITE, l + r * 2 * KB, 2 * KB,
				 ra + r * 2 * KB, rk) ||
			    post(w, q, (uint64_t)q << 8 | (2 * r + 1),
				 IBV_WR_SEND, l + 8 * KB + r * KB, KB, 0, 0))
				return -1;
		}
		if (post(w, q, (uint64_t)q << 8 | 2 * QP64_ROUNDS,
			 IBV_WR_RDMA_READ, l + 12 * KB, 4 * KB, ra + 12 * KB,
			 rk))
			return -1;
	}
	/* Every QP's completions come in its own order. */
	for (int n = 0; n < total; n++) {
		int q, k;

		if (poll_one(w->scq, &wc, POLL_MS) != 1)
			return fail("%d of %d completions within %d ms", n,
				    total, POLL_MS);
		q = (int)(wc.wr_id >> 8);
		k = (int)(wc.wr_id & 0xff);
		if (wc.status != IBV_WC_SUCCESS)
			return fail("QP %d wr %d: %s (vendor error %#x)", q, k,
				    ibv_wc_status_str(wc.status),
				    wc.vendor_err);
		if (q >= w->nqp || wc.qp_num != w->qp[q]->qp_num ||
		    k != next[q])
			return fail("completion wr_id %#llx on QP %#x out of order",
				    (unsigned long long)wc.wr_id, wc.qp_num);
		next[q]++;
	}
	for (int q = 0; q < w->nqp; q++)
		if (mismatch(lslot(w, q) + 12 * KB, 4 * KB, seed_of(q, 9),
			     false) >= 0)
			return fail("QP %d: the READ's data differs", q);
	return 0;
}

static int qp64_resp(struct wire *w)
{
	int next[MAX_QPS] = { 0 }, total = w->nqp * QP64_ROUNDS;
	struct ibv_wc wc;
	char what[64];

	for (int n = 0; n < total; n++) {
		int q, r;

		if (poll_one(w->rcq, &wc, POLL_MS) != 1)
			return fail("%d of %d receives within %d ms", n,
				    total, POLL_MS);
		q = (int)(wc.wr_id >> 8);
		r = (int)(wc.wr_id & 0xff);
		if (wc.status != IBV_WC_SUCCESS)
			return fail("QP %d receive %d: %s", q, r,
				    ibv_wc_status_str(wc.status));
		if (q >= w->nqp || wc.qp_num != w->qp[q]->qp_num ||
		    r != next[q])
			return fail("receive wr_id %#llx on QP %#x out of order",
				    (unsigned long long)wc.wr_id, wc.qp_num);
		if (check_recv_wc(&wc, r, IBV_WC_RECV, KB, false))
			return -1;
		snprintf(what, sizeof(what), "QP %d SEND %d", q, r);
		if (check_msg(what, tslot(w, q) + 8 * KB + r * KB, KB, KB,
			      seed_of(q, 4 + r)))
			return -1;
		next[q]++;
	}
	if (wait_done(w))
		return -1;
	for (int q = 0; q < w->nqp; q++)
		for (int r = 0; r < QP64_ROUNDS; r++) {
			snprintf(what, sizeof(what), "QP %d WRITE %d", q, r);
			if (check_msg(what, tslot(w, q) + r * 2 * KB, 2 * KB,
				      2 * KB, seed_of(q, r)))
				return -1;
		}
	return 0;
}

/* ---- loss on the wire (qhca's injector) ------------------------------ */

/*
 * The lossy tests' steps, each one operation waited for: 0 a WRITE of
 * wlen bytes into area 0, 1 a fetch-and-add of the word at area 2, 2 a
 * READ of 5000 bytes from area 3, 3 a SEND of 5000 bytes into a receive
 * at area 1.  Each must complete with its data intact.
 */
static int lossy_prep(struct wire *w)
{
	poison(tslot(w, 0), MSG_SLOT, seed_of(0, 0) + POISON_SEED);
	poison(tslot(w, 0) + MSG_SLOT, MSG_SLOT, seed_of(0, 3) + POISON_SEED);
	*(uint64_t *)(tslot(w, 0) + 2 * MSG_SLOT) = FAA_OLD;
	fill(tslot(w, 0) + 3 * MSG_SLOT, 5000, seed_of(0, 2));
	return post_recv(w, 0, 3, tslot(w, 0) + MSG_SLOT, MSG_SLOT);
}

static int lossy_step(struct wire *w, int i, uint32_t wlen)
{
	uint8_t *l = lslot(w, 0);
	uint64_t ra = rslot(w, 0), *res = (uint64_t *)(l + 2 * MSG_SLOT);

	switch (i) {
	case 0:
		fill(l, wlen, seed_of(0, 0));
		return post(w, 0, 0, IBV_WR_RDMA_WRITE, l, wlen, ra,
			    w->rem[0].rkey) ||
		       expect_wc(w->scq, 0, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE,
				 NULL) ? -1 : 0;
	case 1:
		if (post_atomic(w, 1, IBV_WR_ATOMIC_FETCH_AND_ADD,
				(uint8_t *)res, ra + 2 * MSG_SLOT, FAA_ADD1, 0) ||
		    expect_wc(w->scq, 1, IBV_WC_SUCCESS, IBV_WC_FETCH_ADD, NULL))
			return -1;
		if (*res != FAA_OLD)
			return fail("the fetch-and-add returned %#llx, expected %#llx",
				    (unsigned long long)*res, FAA_OLD);
		return 0;
	case 2:
		poison(l + 3 * MSG_SLOT, MSG_SLOT, seed_of(0, 2) + POISON_SEED);
		return post(w, 0, 2, IBV_WR_RDMA_READ, l + 3 * MSG_SLOT, 5000,
			    ra + 3 * MSG_SLOT, w->rem[0].rkey) ||
		       expect_wc(w->scq, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_READ,
				 NULL) ||
		       check_msg("the READ", l + 3 * MSG_SLOT, 5000, MSG_SLOT,
				 seed_of(0, 2)) ? -1 : 0;
	default:
		fill(l + MSG_SLOT, 5000, seed_of(0, 3));
		return post(w, 0, 3, IBV_WR_SEND, l + MSG_SLOT, 5000, 0, 0) ||
		       expect_wc(w->scq, 3, IBV_WC_SUCCESS, IBV_WC_SEND,
				 NULL) ? -1 : 0;
	}
}

/* The responder, after DONE: the WRITE landed, the add executed once. */
static int lossy_check(struct wire *w, uint32_t wlen)
{
	uint64_t v = *(uint64_t *)(tslot(w, 0) + 2 * MSG_SLOT);

	if (check_msg("the WRITE", tslot(w, 0), wlen, MSG_SLOT,
		      seed_of(0, 0)))
		return -1;
	if (v != FAA_OLD + FAA_ADD1)
		return fail("the fetch-and-add left %#llx, expected %#llx (executed once)",
			    (unsigned long long)v, FAA_OLD + FAA_ADD1);
	return 0;
}

/*
 * loss: the requester's device drops its next requests (drop N) before
 * each step: the first 3 packets of a 64 KiB WRITE, the fetch-and-add,
 * the READ request, the first 2 packets of the SEND.  Each completes by
 * retransmission, and the device's wire_drops and retries counters show
 * it.
 */
static const int loss_drops[] = { 3, 1, 1, 2 };

static int loss_req(struct wire *w)
{
	long drops0, retries0, drops1, retries1;
	int want = 0;
	char fault[32];

	drops0 = counter_fresh("wire_drops");
	retries0 = counter("retries");
	if (drops0 < 0 || retries0 < 0)
		return fail("%s has no wire_drops or retries counter", dev_name);
	for (int i = 0; i < 4; i++) {
		snprintf(fault, sizeof(fault), "drop %d", loss_drops[i]);
		want += loss_drops[i];
		if (inject(fault) || lossy_step(w, i, MSG_SLOT))
			return -1;
	}
	drops1 = counter_fresh("wire_drops");
	retries1 = counter("retries");
	printf("# loss: wire_drops %ld -> %ld, retries %ld -> %ld\n", drops0,
	       drops1, retries0, retries1);
	if (drops1 - drops0 != want)
		return fail("wire_drops rose by %ld, expected %d",
			    drops1 - drops0, want);
	if (retries1 < retries0 + 4)
		return fail("retries rose by %ld, expected at least 4 (one a drop)",
			    retries1 - retries0);
	return 0;
}

static int loss_resp(struct wire *w)
{
	struct ibv_wc wc;

	if (expect_wc(w->rcq, 3, IBV_WC_SUCCESS, -1, &wc) ||
	    check_recv_wc(&wc, 3, IBV_WC_RECV, 5000, false) ||
	    check_msg("the SEND", tslot(w, 0) + MSG_SLOT, 5000, MSG_SLOT,
		      seed_of(0, 3)) || wait_done(w))
		return -1;
	return lossy_check(w, MSG_SLOT);
}

/*
 * loss_ack: the responder's device drops its own answers: the ACK of a
 * 1 KiB WRITE, the response of the fetch-and-add, the first two packets
 * of the READ response.  The requester retransmits; the responder answers
 * the duplicates from its state, executing the fetch-and-add once.
 */
static const char *const ack_steps[] = { "drop 1", "drop 1", "drop 2" };

static int loss_ack_prep(struct wire *w)
{
	w->counter0 = counter_fresh("wire_drops");
	if (w->counter0 < 0)
		return fail("%s has no wire_drops counter", dev_name);
	return lossy_prep(w);
}

static int loss_ack_req(struct wire *w)
{
	char line[64];

	for (int i = 0; i < 3; i++) {
		if (ctl_put("ARM") || ctl_get(line, sizeof(line)))
			return -1;
		if (strcmp(line, "ARMED"))
			return fail("control channel: '%s', expected ARMED",
				    line);
		if (lossy_step(w, i, KB))
			return -1;
	}
	return 0;
}

static int loss_ack_resp(struct wire *w)
{
	long drops;

	for (int i = 0; i < 3; i++)
		if (wait_word(w, "ARM") || inject(ack_steps[i]) ||
		    ctl_put("ARMED"))
			return -1;
	if (wait_done(w))
		return -1;
	drops = counter_fresh("wire_drops");
	printf("# loss_ack: wire_drops %ld -> %ld\n", w->counter0, drops);
	if (drops - w->counter0 != 4)
		return fail("wire_drops rose by %ld, expected 4",
			    drops - w->counter0);
	return lossy_check(w, KB);
}

/*
 * link: the requester's port goes down (the injector's link_down: the
 * device's wire drops everything) with a WRITE in flight; once the device
 * has dropped a packet of it the link comes back (link_up) and the WRITE
 * completes by retransmission, within its retry budget (timeout 17:
 * 0.54 s, 7 retries).
 */
static int link_req(struct wire *w)
{
	long drops0, downed0, v;
	int ret;

	drops0 = counter_fresh("wire_drops");
	downed0 = counter("link_downed");
	if (drops0 < 0 || downed0 < 0)
		return fail("%s has no wire_drops or link_downed counter",
			    dev_name);
	fill(lslot(w, 0), 5000, seed_of(0, 0));
	if (inject("link_down"))
		return -1;
	if (post(w, 0, 0, IBV_WR_RDMA_WRITE, lslot(w, 0), 5000, rslot(w, 0),
		 w->rem[0].rkey)) {
		inject("link_up");
		return -1;
	}
	v = counter_above("wire_drops", drops0, POLL_MS);
	ret = inject("link_up");
	if (v <= drops0)
		return fail("wire_drops stayed %ld with the link down", v);
	if (ret || expect_wc(w->scq, 0, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, NULL))
		return -1;
	v = counter_fresh("link_downed");
	if (v != downed0 + 1)
		return fail("link_downed went %ld -> %ld, expected one more",
			    downed0, v);
	return 0;
}

static int link_resp(struct wire *w)
{
	return wait_done(w) || check_msg("the WRITE", tslot(w, 0), 5000,
					 MSG_SLOT, seed_of(0, 0));
}

static int link_prep(struct wire *w)
{
	poison(tslot(w, 0), MSG_SLOT, seed_of(0, 0) + POISON_SEED);
	return 0;
}

/* ---- a killed peer ------------------------------------------------------ */

/*
 * kill: the requester streams WRITEs (8 in flight); after 16 have
 * completed it tells the responder, which dies by SIGKILL: its QP goes
 * with it and nothing answers any more.  The requester's next WRITE ends
 * in RETRY_EXC_ERR within KILL_BOUND_MS (timeout 12: 16.8 ms, 3 retries),
 * the rest are flushed, its QP is in ERR, and the control channel closes.
 */
#define KILL_INFLIGHT	8
#define KILL_BEFORE	16
#define KILL_BOUND_MS	15000

static int kill_req(struct wire *w)
{
	uint64_t posted = 0, done = 0;
	long killed_at = 0, end = now_ms() + 2 * POLL_MS;
	struct ibv_wc wc;
	char line[64];
	enum ibv_wc_status first = IBV_WC_SUCCESS;

	fill(lslot(w, 0), 16 * KB, seed_of(0, 0));
	for (;;) {
		while (first == IBV_WC_SUCCESS &&
		       posted - done < KILL_INFLIGHT) {
			if (post(w, 0, posted, IBV_WR_RDMA_WRITE, lslot(w, 0),
				 16 * KB, rslot(w, 0) + (posted % 8) * 16 * KB,
				 w->rem[0].rkey))
				return -1;
			posted++;
		}
		if (done == posted)
			break;
		if (poll_one(w->scq, &wc, killed_at ? KILL_BOUND_MS : POLL_MS) != 1)
			return fail("WRITE %llu of %llu: no completion within %d ms",
				    (unsigned long long)done,
				    (unsigned long long)posted,
				    killed_at ? KILL_BOUND_MS : POLL_MS);
		if (wc.wr_id != done)
			return fail("completion of WRITE %llu, expected %llu",
				    (unsigned long long)wc.wr_id,
				    (unsigned long long)done);
		done++;
		if (first == IBV_WC_SUCCESS && wc.status != IBV_WC_SUCCESS) {
			first = wc.status;
			if (!killed_at)
				return fail("WRITE %llu: %s before the peer was killed",
					    (unsigned long long)wc.wr_id,
					    ibv_wc_status_str(wc.status));
			printf("# kill: WRITE %llu ended in %s %ld ms after the kill was asked\n",
			       (unsigned long long)wc.wr_id,
			       ibv_wc_status_str(wc.status),
			       now_ms() - killed_at);
			if (wc.status != IBV_WC_RETRY_EXC_ERR)
				return fail("the first failed WRITE: %s, expected %s",
					    ibv_wc_status_str(wc.status),
					    ibv_wc_status_str(IBV_WC_RETRY_EXC_ERR));
		} else if (first != IBV_WC_SUCCESS &&
			   wc.status != IBV_WC_WR_FLUSH_ERR) {
			return fail("WRITE %llu after the error: %s, expected %s",
				    (unsigned long long)wc.wr_id,
				    ibv_wc_status_str(wc.status),
				    ibv_wc_status_str(IBV_WC_WR_FLUSH_ERR));
		}
		if (done == KILL_BEFORE && !killed_at) {
			if (ctl_put("KILL"))
				return -1;
			killed_at = now_ms();
		}
		if (now_ms() > end)
			return fail("no error within %d ms", 2 * POLL_MS);
	}
	if (killed_at && now_ms() - killed_at > KILL_BOUND_MS)
		return fail("the error came %ld ms after the kill, more than %d",
			    now_ms() - killed_at, KILL_BOUND_MS);
	if (expect_qp_err(w, 0))
		return -1;
	/* The peer is gone: its end of the control channel closed. */
	if (fgets(line, sizeof(line), cin))
		return fail("the killed peer still talks: '%s'", line);
	return 0;
}

static int kill_resp(struct wire *w)
{
	if (wait_word(w, "KILL"))
		return -1;
	printf("# kill: dying by SIGKILL with WRITEs in flight\n");
	fflush(stdout);
	raise(SIGKILL);
	return fail("still alive after SIGKILL");
}

/* ---- the tests, the requester and the responder ------------------------ */

#define ONE		1, 4 * MSG_SLOT
#define RC_TIMERS	14, 7, 7, 1
/*
 * 64 QPs at once: timeout 18 (1.07 s), not 14 (67 ms).  An rxe peer under
 * TCG answered the last of 832 requests 0.86 s after they were sent, later
 * than timeout 14's whole retry budget (8 x 67 ms): every timeout resent the
 * whole window of every QP and deepened its backlog (the capture of the
 * failing run: each request was answered, each too late).
 */
#define QP64_TIMERS	18, 7, 7, 1

static const struct test tests[] = {
	{ "send", ONE, RC_TIMERS, false, send_prep, send_req, send_resp },
	{ "send_imm", ONE, RC_TIMERS, false, send_prep, send_req, send_resp },
	{ "write", ONE, RC_TIMERS, false, write_prep, write_req, write_resp },
	{ "write_imm", ONE, RC_TIMERS, false, write_prep, write_req,
	  write_resp },
	{ "read", ONE, RC_TIMERS, false, read_prep, read_req, read_resp },
	{ "atomic", ONE, RC_TIMERS, false, atomic_prep, atomic_req,
	  atomic_resp },
	{ "send_inv", ONE, RC_TIMERS, true, inv_prep, inv_req, inv_resp },
	{ "bad_rkey", ONE, RC_TIMERS, false, NULL, bad_rkey_req,
	  untouched_resp },
	{ "oob", 2, 4 * MSG_SLOT, RC_TIMERS, false, NULL, oob_req,
	  untouched_resp },
	{ "rnr0", ONE, 14, 7, 0, 1, false, NULL, rnr0_req, untouched_resp },
	/* 5.12 ms between the RNR retries: a few NAKs, not a storm. */
	{ "rnr_late", ONE, 14, 7, 7, 18, false, rnr_late_prep, rnr_late_req,
	  rnr_late_resp },
	{ "qp64", MAX_QPS, 16 * KB, QP64_TIMERS, false, qp64_prep, qp64_req,
	  qp64_resp },
	{ "loss", ONE, RC_TIMERS, false, lossy_prep, loss_req, loss_resp },
	{ "loss_ack", ONE, RC_TIMERS, false, loss_ack_prep, loss_ack_req,
	  loss_ack_resp },
	{ "link", ONE, 17, 7, 7, 1, false, link_prep, link_req, link_resp },
	{ "atomic_write", ONE, RC_TIMERS, false, NULL, atomic_write_req,
	  atomic_write_resp },
	{ "atomic_write_bad", ONE, RC_TIMERS, false, NULL,
	  atomic_write_bad_req, untouched_resp },
	{ "flush", ONE, RC_TIMERS, false, NULL, flush_req, flush_resp },
	{ "kill", ONE, 12, 3, 7, 1, false, NULL, kill_req, kill_resp },
};

static const struct test *find_test(const char *name)
{
	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
		if (!strcmp(tests[i].name, name))
			return &tests[i];
	return NULL;
}

/* Why this device cannot take part in t, or NULL. */
static const char *unsupported(const struct test *t)
{
	if (t->mw && !(dattr.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B))
		return "no type 2 memory windows";
	if (!strcmp(t->name, "atomic") && dattr.atomic_cap == IBV_ATOMIC_NONE)
		return "no atomics";
	if (t->nqp > 1 && dattr.max_qp < t->nqp)
		return "too few QPs";
	if (placement_test(t) &&
	    (!(dcaps_ex & IB_UVERBS_DEVICE_FLUSH_GLOBAL) ||
	     !(dcaps_ex & IB_UVERBS_DEVICE_ATOMIC_WRITE)))
		return "no FLUSH or no ATOMIC_WRITE";
	return NULL;
}

static long test_start;

static void tap(bool ok, const char *name, const char *role)
{
	printf("# %s: %ld ms\n", name, now_ms() - test_start);
	if (!ok)
		printf("# %s: %s\n", name, why);
	printf("%s %d %s: %s\n", ok ? "ok" : "not ok", test_num, name, role);
	fflush(stdout);
}

static int run_requester(char **names, int n)
{
	char line[600];
	int failed = 0;

	for (int i = 0; i < n; i++) {
		const struct test *t = find_test(names[i]);
		struct wire w = { 0 };
		const char *no;
		int ret;

		test_num = i + 1;
		test_start = now_ms();
		why[0] = 0;
		if (!t) {
			fail("no such test");
			tap(false, names[i], "requester");
			failed = 1;
			continue;
		}
		no = unsupported(t);
		if (no) {
			printf("ok %d %s: requester # SKIP %s has %s\n",
			       test_num, t->name, dev_name, no);
			continue;
		}
		if (ctl_put("TEST %s", t->name) || ctl_get(line, sizeof(line)))
			goto lost;
		if (!strncmp(line, "NO ", 3)) {
			printf("ok %d %s: requester # SKIP the responder %s\n",
			       test_num, t->name, line + 3);
			continue;
		}
		if (strcmp(line, "GO")) {
			fail("control channel: '%s', expected GO", line);
			goto lost;
		}
		ret = setup(&w, t, true);
		if (!ret) {
			if (ctl_get(line, sizeof(line)))
				goto lost;
			if (sscanf(line, "READY %u", &w.extra) != 1)
				ret = fail("the responder did not get ready: '%s'",
					   line);
		}
		if (!ret)
			ret = t->req(&w);
		if (t->resp == kill_resp) {
			tap(!ret, t->name, "requester");
			failed |= ret != 0;
			teardown(&w);
			return failed;
		}
		if (ctl_put("DONE") || ctl_get(line, sizeof(line))) {
			tap(false, t->name, "requester");
			return 1;
		}
		if (!ret && strcmp(line, "RESULT ok"))
			ret = fail("the responder: %s",
				   strncmp(line, "RESULT ", 7) ? line : line + 7);
		tap(!ret, t->name, "requester");
		failed |= ret != 0;
		teardown(&w);
	}
	ctl_put("END");
	return failed;
lost:
	tap(false, names[test_num - 1], "requester");
	return 1;
}

static int run_responder(void)
{
	char line[256];
	int failed = 0;

	for (test_num = 1;; test_num++) {
		const struct test *t;
		struct wire w = { 0 };
		const char *no;
		int ret;

		why[0] = 0;
		if (ctl_get(line, sizeof(line))) {
			printf("# %s\n", why);
			return 1;
		}
		if (!strcmp(line, "END"))
			return failed;
		test_start = now_ms();
		if (strncmp(line, "TEST ", 5) || !(t = find_test(line + 5))) {
			ctl_put("NO does not know '%s'", line);
			printf("not ok %d %s: responder\n", test_num, line);
			failed = 1;
			continue;
		}
		no = unsupported(t);
		if (no) {
			ctl_put("NO %s has %s", dev_name, no);
			printf("ok %d %s: responder # SKIP %s has %s\n",
			       test_num, t->name, dev_name, no);
			continue;
		}
		if (ctl_put("GO"))
			return 1;
		ret = setup(&w, t, false);
		if (!ret && t->prep)
			ret = t->prep(&w);
		if (ret) {
			/* The requester still waits for READY. */
			ctl_put("NOT READY %s", why);
		} else {
			if (ctl_put("READY %u", w.extra))
				return 1;
			ret = t->resp(&w);
		}
		if (!w.done_seen) {
			char keep[sizeof(why)];

			memcpy(keep, why, sizeof(keep));
			if (wait_done(&w) && !ret)
				ret = -1;
			else
				memcpy(why, keep, sizeof(keep));
		}
		if (ret)
			ctl_put("RESULT %s", why);
		else
			ctl_put("RESULT ok");
		tap(!ret, t->name, "responder");
		failed |= ret != 0;
		teardown(&w);
	}
}

/* ---- the control connection ------------------------------------------ */

static int serve(const char *port)
{
	struct addrinfo hints = { .ai_family = AF_INET,
				  .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE }, *ai;
	struct timeval tv = { .tv_sec = CTL_WAIT_S };
	int one = 1, s, c;

	if (getaddrinfo(NULL, port, &hints, &ai))
		return -1;
	s = socket(ai->ai_family, ai->ai_socktype, 0);
	if (s < 0 || setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(s, ai->ai_addr, ai->ai_addrlen) || listen(s, 1)) {
		perror("rc_wire: listen");
		return -1;
	}
	freeaddrinfo(ai);
	/* The requester comes within the wait, or the run is over. */
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	c = accept(s, NULL, NULL);
	close(s);
	if (c < 0) {
		perror("rc_wire: accept");
		return -1;
	}
	return c;
}

static int connect_to(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_family = AF_INET,
				  .ai_socktype = SOCK_STREAM }, *ai;
	long end = now_ms() + CTL_WAIT_S * 1000L;
	int s;

	if (getaddrinfo(host, port, &hints, &ai)) {
		fprintf(stderr, "rc_wire: cannot resolve %s\n", host);
		return -1;
	}
	/* The responder may not listen yet: try again until the wait ends. */
	for (;;) {
		s = socket(ai->ai_family, ai->ai_socktype, 0);
		if (s < 0)
			break;
		if (!connect(s, ai->ai_addr, ai->ai_addrlen))
			break;
		close(s);
		s = -1;
		if (now_ms() >= end) {
			perror("rc_wire: connect");
			break;
		}
		usleep(200000);
	}
	freeaddrinfo(ai);
	return s;
}

static int open_device(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_device *d = NULL;

	for (int i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), dev_name))
			d = list[i];
	if (!d) {
		fprintf(stderr, "rc_wire: no device %s\n", dev_name);
		return -1;
	}
	ctx = ibv_open_device(d);
	ibv_free_device_list(list);
	if (!ctx || ibv_query_device(ctx, &dattr) ||
	    ibv_query_port(ctx, 1, &pattr) ||
	    ibv_query_gid(ctx, 1, gid_index, &my_gid)) {
		fprintf(stderr, "rc_wire: %s: cannot open or query it\n",
			dev_name);
		return -1;
	}
	{
		struct ibv_device_attr_ex ax;

		if (!ibv_query_device_ex(ctx, NULL, &ax))
			dcaps_ex = ax.device_cap_flags_ex;
	}
	pd = ibv_alloc_pd(ctx);
	return pd ? 0 : -1;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: rc_wire -d DEV -g GID_INDEX -p PORT --serve\n"
		"       rc_wire -d DEV -g GID_INDEX -p PORT --connect HOST TEST...\n"
		"tests:");
	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
		fprintf(stderr, " %s", tests[i].name);
	fprintf(stderr, "\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "serve", no_argument, NULL, 's' },
		{ "connect", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	const char *port = NULL, *host = NULL;
	bool server = false;
	struct timeval tv = { .tv_sec = CTL_WAIT_S };
	int c, fd, ret;

	while ((c = getopt_long(argc, argv, "d:g:p:", opts, NULL)) != -1) {
		switch (c) {
		case 'd': dev_name = optarg; break;
		case 'g': gid_index = atoi(optarg); break;
		case 'p': port = optarg; break;
		case 's': server = true; break;
		case 'c': host = optarg; break;
		default: usage();
		}
	}
	if (!dev_name || gid_index < 0 || !port || server == !!host ||
	    (host && optind >= argc) || (server && optind != argc))
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (open_device())
		return 1;
	fd = server ? serve(port) : connect_to(host, port);
	if (fd < 0)
		return 1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	cin = fdopen(fd, "r");
	cout = fdopen(dup(fd), "w");
	if (!cin || !cout)
		return 1;
	ret = server ? run_responder() : run_requester(argv + optind,
						       argc - optind);
	fclose(cout);
	fclose(cin);
	return ret ? 1 : 0;
}
