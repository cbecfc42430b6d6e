/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Two RC QPs of qhca0 connected to each other, and what the data path
 * tests share: registered buffers, data patterns, posting, and polling
 * with a deadline.
 *
 * The pair is a loopback on one device (Documentation/hw/qhca-transport.rst,
 * "Packets and the wire"): each QP's destination LID is the port's own
 * LID and its destination QP is the other QP.  Each QP has a send CQ and a
 * receive CQ of its own, so a test knows which side every completion comes
 * from.  By convention QP 0 is the requester and QP 1 the responder.
 *
 * The helpers that take _metadata fail the test with an assertion; the
 * others return a value for the test to judge.
 */
#ifndef RC_PAIR_H
#define RC_PAIR_H

#include <endian.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <qhca_hw.h>

#include "qhca_test.h"

/* A completion later than this is lost, even under TCG. */
#define RC_POLL_MS			20000
/*
 * How long a test watches for a completion that must not come, after the
 * operation that would make it.  Why that is long enough: the device does
 * an operation's work in the rounds of its engine thread, which starts as
 * soon as the doorbell wakes it and runs rounds back to back while work is
 * left, and each round delivers every packet its steps sent (to the
 * responder and its ACK back) before it lets the device lock go
 * (qhca-engine.c).  So a completion the operation makes is on the CQ after
 * a wake-up and a few rounds: microseconds (an ib_write_lat round trip
 * under TCG on 2 busy cores is 16-28 us), milliseconds on a loaded host.
 * A completion only a timer could make (RNR, retransmission) needs a
 * window longer than that timer; tests that can post a later operation on
 * the same queue and wait for its completion (a fence) do not depend on
 * this at all.
 */
#define RC_QUIET_MS			300

#define RC_ACCESS_ALL	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)
#define RC_QP_ACCESS_ALL (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
			  IBV_ACCESS_REMOTE_ATOMIC)

struct rc_opts {
	unsigned int max_send_wr;
	unsigned int max_recv_wr;
	unsigned int max_send_sge;
	unsigned int max_recv_sge;
	unsigned int max_inline_data;
	unsigned int cqe;		/* each CQ; 0: room for both queues */
	bool sq_sig_all;
	bool channel;			/* the CQs report to one channel */
	int access[2];			/* qp_access_flags of QP 0 and QP 1 */
	enum ibv_mtu path_mtu;		/* 0: the port's active MTU */
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t min_rnr_timer;
	uint8_t max_rd_atomic;		/* and max_dest_rd_atomic */
	enum ibv_qp_type qp_type;	/* 0: RC */
};

/*
 * ibv_rc_pingpong's transport timers, but the shortest RNR timer (10 us)
 * so that RNR retries cost nothing, and room for 64 WQEs in each queue.
 */
static inline void rc_default_opts(struct rc_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->max_send_wr = 64;
	o->max_recv_wr = 64;
	o->max_send_sge = 1;
	o->max_recv_sge = 1;
	o->access[0] = RC_QP_ACCESS_ALL;
	o->access[1] = RC_QP_ACCESS_ALL;
	o->timeout = 14;
	o->retry_cnt = 7;
	o->rnr_retry = 7;
	o->min_rnr_timer = 1;
	o->max_rd_atomic = 4;
}

struct rc_side {
	struct ibv_cq *scq;
	struct ibv_cq *rcq;
	struct ibv_qp *qp;
	struct ibv_qp_cap cap;		/* as the provider granted it */
};

struct rc_pair {
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *channel;
	struct ibv_device_attr dattr;
	struct ibv_port_attr pattr;
	struct qhca_objs base;
	struct rc_opts opts;
	struct rc_side s[2];
};

static inline long rc_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

/*
 * Waits up to ms for the port's hw counter name to exceed above, which a
 * test reads with qhca_hw_counter_fresh() before it starts the work: the
 * device's counters are how a test sees work reach the device that
 * completes nothing yet (a request on the wire, an RNR NAK).  Returns the
 * last value read, or -errno.
 */
static inline long rc_wait_hw_counter(const char *name, long above, long ms)
{
	long deadline = rc_now_ms() + ms, val;

	for (;;) {
		val = qhca_hw_counter(name);
		if (val < 0 || val > above || rc_now_ms() >= deadline)
			return val;
		usleep(10000);	/* ib_core's cache: no newer value sooner */
	}
}

/* ---- QP states ---------------------------------------------------- */

/* The QP's state as the device reports it, or -errno. */
static inline int rc_qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	int ret;

	ret = ibv_query_qp(qp, &attr, IBV_QP_STATE, &init);
	return ret ? -ret : (int)attr.qp_state;
}

static inline int rc_to_init(struct ibv_qp *qp, int access)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
		.qp_access_flags = access,
	};

	return ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

/* The attributes INIT -> RTR requires, all of them. */
static inline void rc_rtr_attr(const struct rc_pair *p, uint32_t dest_qpn,
			       uint16_t dlid, struct ibv_qp_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->qp_state = IBV_QPS_RTR;
	attr->path_mtu = p->opts.path_mtu ? p->opts.path_mtu :
					    p->pattr.active_mtu;
	attr->dest_qp_num = dest_qpn;
	attr->rq_psn = 0;
	attr->max_dest_rd_atomic = p->opts.max_rd_atomic;
	attr->min_rnr_timer = p->opts.min_rnr_timer;
	attr->ah_attr.dlid = dlid;
	attr->ah_attr.port_num = 1;
}

#define RC_RTR_MASK	(IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | \
			 IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | \
			 IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)

static inline int rc_to_rtr(const struct rc_pair *p, struct ibv_qp *qp,
			    uint32_t dest_qpn, uint16_t dlid)
{
	struct ibv_qp_attr attr;

	rc_rtr_attr(p, dest_qpn, dlid, &attr);
	return ibv_modify_qp(qp, &attr, RC_RTR_MASK);
}

/* The attributes RTR -> RTS requires, all of them. */
static inline void rc_rts_attr(const struct rc_pair *p,
			       struct ibv_qp_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->qp_state = IBV_QPS_RTS;
	attr->sq_psn = 0;
	attr->timeout = p->opts.timeout;
	attr->retry_cnt = p->opts.retry_cnt;
	attr->rnr_retry = p->opts.rnr_retry;
	attr->max_rd_atomic = p->opts.max_rd_atomic;
}

#define RC_RTS_MASK	(IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | \
			 IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | \
			 IBV_QP_MAX_QP_RD_ATOMIC)

static inline int rc_to_rts(const struct rc_pair *p, struct ibv_qp *qp)
{
	struct ibv_qp_attr attr;

	rc_rts_attr(p, &attr);
	return ibv_modify_qp(qp, &attr, RC_RTS_MASK);
}

static inline int rc_to_state(struct ibv_qp *qp, enum ibv_qp_state state)
{
	struct ibv_qp_attr attr = { .qp_state = state };

	return ibv_modify_qp(qp, &attr, IBV_QP_STATE);
}

/* QP i through INIT and RTR to RTS, aimed at QP dest_qpn on dlid. */
static inline void rc_connect_one(struct __test_metadata *_metadata,
				  struct rc_pair *p, int i, uint32_t dest_qpn,
				  uint16_t dlid)
{
	struct ibv_qp *qp = p->s[i].qp;

	ASSERT_EQ(0, rc_to_init(qp, p->opts.access[i]));
	ASSERT_EQ(0, rc_to_rtr(p, qp, dest_qpn, dlid));
	ASSERT_EQ(0, rc_to_rts(p, qp));
	ASSERT_EQ(IBV_QPS_RTS, rc_qp_state(qp));
}

/* Both QPs to RTS, each aimed at the other through the port's LID. */
static inline void rc_pair_connect(struct __test_metadata *_metadata,
				   struct rc_pair *p)
{
	rc_connect_one(_metadata, p, 0, p->s[1].qp->qp_num, p->pattr.lid);
	rc_connect_one(_metadata, p, 1, p->s[0].qp->qp_num, p->pattr.lid);
}

/* ---- The pair ------------------------------------------------------ */

static inline struct ibv_qp *rc_create_qp(struct rc_pair *p,
					  struct ibv_cq *scq,
					  struct ibv_cq *rcq,
					  struct ibv_qp_cap *cap)
{
	struct ibv_qp_init_attr init = {
		.send_cq = scq,
		.recv_cq = rcq,
		.qp_type = p->opts.qp_type ? p->opts.qp_type : IBV_QPT_RC,
		.sq_sig_all = p->opts.sq_sig_all,
		.cap = {
			.max_send_wr = p->opts.max_send_wr,
			.max_recv_wr = p->opts.max_recv_wr,
			.max_send_sge = p->opts.max_send_sge,
			.max_recv_sge = p->opts.max_recv_sge,
			.max_inline_data = p->opts.max_inline_data,
		},
	};
	struct ibv_qp *qp;

	qp = ibv_create_qp(p->pd, &init);
	if (qp && cap)
		*cap = init.cap;
	return qp;
}

/*
 * Opens qhca0 and creates the PD, the four CQs and the two QPs, in RESET.
 * The object counters are read first: rc_pair_close() expects them back.
 */
static inline void rc_pair_open(struct __test_metadata *_metadata,
				struct rc_pair *p, const struct rc_opts *opts)
{
	struct ibv_device *dev;
	unsigned int cqe;
	int i;

	p->opts = *opts;
	QHCA_ASSERT_DEVICE(p->list, dev);
	ASSERT_EQ(0, qhca_read_objs(&p->base))
		TH_LOG("no object counters in " QHCA_SYSFS_HW_OBJECTS);

	p->ctx = ibv_open_device(dev);
	ASSERT_NE(NULL, p->ctx) TH_LOG("ibv_open_device: %s",
				       strerror(errno));
	ASSERT_EQ(0, ibv_query_device(p->ctx, &p->dattr));
	ASSERT_EQ(0, ibv_query_port(p->ctx, 1, &p->pattr));
	p->pd = ibv_alloc_pd(p->ctx);
	ASSERT_NE(NULL, p->pd);
	if (opts->channel) {
		p->channel = ibv_create_comp_channel(p->ctx);
		ASSERT_NE(NULL, p->channel);
	}

	cqe = opts->cqe ? opts->cqe :
	      (opts->max_send_wr > opts->max_recv_wr ? opts->max_send_wr :
						       opts->max_recv_wr) + 1;
	for (i = 0; i < 2; i++) {
		p->s[i].scq = ibv_create_cq(p->ctx, cqe, &p->s[i], p->channel,
					    0);
		ASSERT_NE(NULL, p->s[i].scq) TH_LOG("ibv_create_cq(%u): %s",
						    cqe, strerror(errno));
		p->s[i].rcq = ibv_create_cq(p->ctx, cqe, &p->s[i], p->channel,
					    0);
		ASSERT_NE(NULL, p->s[i].rcq) TH_LOG("ibv_create_cq(%u): %s",
						    cqe, strerror(errno));
		p->s[i].qp = rc_create_qp(p, p->s[i].scq, p->s[i].rcq,
					  &p->s[i].cap);
		ASSERT_NE(NULL, p->s[i].qp) TH_LOG("ibv_create_qp: %s",
						   strerror(errno));
		ASSERT_EQ(IBV_QPS_RESET, rc_qp_state(p->s[i].qp));
	}
}

/*
 * Destroys whatever rc_pair_open() made and the test left, then checks
 * that the device holds exactly what it held before.  A test that
 * destroys an object itself sets its pointer to NULL.
 */
static inline void rc_pair_close(struct __test_metadata *_metadata,
				 struct rc_pair *p)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (p->s[i].qp)
			EXPECT_EQ(0, ibv_destroy_qp(p->s[i].qp));
		if (p->s[i].scq)
			EXPECT_EQ(0, ibv_destroy_cq(p->s[i].scq));
		if (p->s[i].rcq)
			EXPECT_EQ(0, ibv_destroy_cq(p->s[i].rcq));
		memset(&p->s[i], 0, sizeof(p->s[i]));
	}
	if (p->channel)
		EXPECT_EQ(0, ibv_destroy_comp_channel(p->channel));
	if (p->pd)
		EXPECT_EQ(0, ibv_dealloc_pd(p->pd));
	if (p->ctx) {
		EXPECT_EQ(0, ibv_close_device(p->ctx));
		QHCA_EXPECT_OBJS_AT(p->base);
	}
	if (p->list)
		ibv_free_device_list(p->list);
	p->channel = NULL;
	p->pd = NULL;
	p->ctx = NULL;
	p->list = NULL;
}

/* ---- Buffers and patterns ------------------------------------------ */

struct rc_buf {
	uint8_t *mem;			/* page aligned */
	size_t size;
	struct ibv_mr *mr;
};

static inline void rc_buf_alloc(struct __test_metadata *_metadata,
				struct rc_buf *b, struct ibv_pd *pd,
				size_t size, int access)
{
	ASSERT_EQ(0, posix_memalign((void **)&b->mem, 4096, size));
	b->size = size;
	memset(b->mem, 0, size);
	b->mr = ibv_reg_mr(pd, b->mem, size, access);
	ASSERT_NE(NULL, b->mr) TH_LOG("ibv_reg_mr(%zu, %#x): %s", size,
				      access, strerror(errno));
}

static inline void rc_buf_free(struct __test_metadata *_metadata,
			       struct rc_buf *b)
{
	if (b->mr)
		EXPECT_EQ(0, ibv_dereg_mr(b->mr));
	free(b->mem);
	memset(b, 0, sizeof(*b));
}

/*
 * Byte i of pattern seed: a hash of both, so that a byte that lands at the
 * wrong offset, or a chunk of another message, does not match.
 */
static inline uint8_t rc_pattern(uint32_t seed, size_t i)
{
	uint32_t x = (uint32_t)i * 2654435761u ^ seed * 40503u;

	x ^= x >> 15;
	x *= 0x2c1b3c6dU;
	x ^= x >> 12;
	return (uint8_t)(x ^ (i >> 24));
}

/* Bytes start .. start + len - 1 of the pattern, e.g. one SGE's share. */
static inline void rc_fill_from(void *buf, size_t len, uint32_t seed,
				size_t start)
{
	uint8_t *b = buf;
	size_t i;

	for (i = 0; i < len; i++)
		b[i] = rc_pattern(seed, start + i);
}

static inline void rc_fill(void *buf, size_t len, uint32_t seed)
{
	rc_fill_from(buf, len, seed, 0);
}

/* Every byte different from rc_fill()'s: what a buffer holds before. */
static inline void rc_poison(void *buf, size_t len, uint32_t seed)
{
	uint8_t *b = buf;
	size_t i;

	for (i = 0; i < len; i++)
		b[i] = ~rc_pattern(seed, i);
}

/* Offset of the first byte that is not the pattern (or poison), or -1. */
static inline long rc_mismatch(const void *buf, size_t len, uint32_t seed,
			       bool poisoned)
{
	const uint8_t *b = buf;
	uint8_t x = poisoned ? 0xff : 0;
	size_t i;

	for (i = 0; i < len; i++)
		if (b[i] != (uint8_t)(rc_pattern(seed, i) ^ x))
			return (long)i;
	return -1;
}

/* buf must hold the pattern seed over len bytes. */
#define RC_EXPECT_PATTERN(buf, len, seed) do {				\
	long __at = rc_mismatch((buf), (len), (seed), false);		\
									\
	EXPECT_EQ(-1, __at) TH_LOG("%s: byte %ld of %zu differs",	\
				   #buf, __at, (size_t)(len));		\
} while (0)

/* buf must still hold the poison of seed: nothing wrote there. */
#define RC_EXPECT_POISON(buf, len, seed) do {				\
	long __at = rc_mismatch((buf), (len), (seed), true);		\
									\
	EXPECT_EQ(-1, __at) TH_LOG("%s: byte %ld of %zu was written",	\
				   #buf, __at, (size_t)(len));		\
} while (0)

/*
 * A destination buffer before a transfer of len bytes at off: the message
 * area poisoned against seed, everything around it poisoned with seeds of
 * its own, so that a byte written in the wrong place shows.
 */
static inline void rc_prepare_dst(struct rc_buf *b, size_t off, size_t len,
				  uint32_t seed)
{
	rc_poison(b->mem, off, seed + 1);
	rc_poison(b->mem + off, len, seed);
	rc_poison(b->mem + off + len, b->size - off - len, seed + 2);
}

/* The message arrived whole at off, and nothing else was written. */
#define RC_EXPECT_DELIVERED(b, off, len, seed) do {			\
	RC_EXPECT_POISON((b)->mem, (off), (seed) + 1);			\
	RC_EXPECT_PATTERN((b)->mem + (off), (len), (seed));		\
	RC_EXPECT_POISON((b)->mem + (off) + (len),			\
			 (b)->size - (off) - (len), (seed) + 2);	\
} while (0)

/* Nothing at all was written to a buffer rc_prepare_dst() prepared. */
#define RC_EXPECT_UNTOUCHED(b, off, len, seed) do {			\
	RC_EXPECT_POISON((b)->mem, (off), (seed) + 1);			\
	RC_EXPECT_POISON((b)->mem + (off), (len), (seed));		\
	RC_EXPECT_POISON((b)->mem + (off) + (len),			\
			 (b)->size - (off) - (len), (seed) + 2);	\
} while (0)

static inline struct ibv_sge rc_sge(const struct rc_buf *b, size_t off,
				    uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(b->mem + off),
		.length = len,
		.lkey = b->mr->lkey,
	};

	return sge;
}

/* ---- Posting -------------------------------------------------------- */

/* One send WR; the returned value is ibv_post_send()'s. */
static inline int rc_post(struct ibv_qp *qp, uint64_t wr_id,
			  enum ibv_wr_opcode opcode, unsigned int flags,
			  struct ibv_sge *sge, int num_sge,
			  uint64_t remote_addr, uint32_t rkey)
{
	struct ibv_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = sge,
		.num_sge = num_sge,
		.opcode = opcode,
		.send_flags = flags,
	}, *bad = NULL;

	wr.wr.rdma.remote_addr = remote_addr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(qp, &wr, &bad);
}

static inline int rc_post_imm(struct ibv_qp *qp, uint64_t wr_id,
			      enum ibv_wr_opcode opcode, unsigned int flags,
			      struct ibv_sge *sge, int num_sge,
			      uint64_t remote_addr, uint32_t rkey,
			      uint32_t imm_host)
{
	struct ibv_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = sge,
		.num_sge = num_sge,
		.opcode = opcode,
		.send_flags = flags,
		.imm_data = htobe32(imm_host),
	}, *bad = NULL;

	wr.wr.rdma.remote_addr = remote_addr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(qp, &wr, &bad);
}

static inline int rc_post_atomic(struct ibv_qp *qp, uint64_t wr_id,
				 enum ibv_wr_opcode opcode,
				 unsigned int flags, struct ibv_sge *sge,
				 uint64_t remote_addr, uint32_t rkey,
				 uint64_t compare_add, uint64_t swap)
{
	struct ibv_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = sge,
		.num_sge = 1,
		.opcode = opcode,
		.send_flags = flags,
	}, *bad = NULL;

	wr.wr.atomic.remote_addr = remote_addr;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = compare_add;
	wr.wr.atomic.swap = swap;
	return ibv_post_send(qp, &wr, &bad);
}

static inline int rc_post_recv(struct ibv_qp *qp, uint64_t wr_id,
			       struct ibv_sge *sge, int num_sge)
{
	struct ibv_recv_wr wr = {
		.wr_id = wr_id,
		.sg_list = sge,
		.num_sge = num_sge,
	}, *bad = NULL;

	return ibv_post_recv(qp, &wr, &bad);
}

/* ---- Completions ---------------------------------------------------- */

/*
 * Polls until n completions are in wc or ms milliseconds have passed;
 * returns how many there are, or ibv_poll_cq()'s negative error.
 */
static inline int rc_poll(struct ibv_cq *cq, struct ibv_wc *wc, int n,
			  long ms)
{
	long deadline = rc_now_ms() + ms;
	int got = 0, ret;

	while (got < n) {
		ret = ibv_poll_cq(cq, n - got, wc + got);
		if (ret < 0)
			return ret;
		got += ret;
		if (!ret && rc_now_ms() > deadline)
			break;
	}
	return got;
}

/* Exactly one completion, within RC_POLL_MS. */
static inline void rc_wait_wc(struct __test_metadata *_metadata,
			      struct ibv_cq *cq, struct ibv_wc *wc)
{
	memset(wc, 0xa5, sizeof(*wc));
	ASSERT_EQ(1, rc_poll(cq, wc, 1, RC_POLL_MS))
		TH_LOG("no completion within %d ms", RC_POLL_MS);
}

/* Nothing more on cq for RC_QUIET_MS. */
static inline void rc_expect_no_wc(struct __test_metadata *_metadata,
				   struct ibv_cq *cq)
{
	struct ibv_wc wc;
	int n;

	n = rc_poll(cq, &wc, 1, RC_QUIET_MS);
	EXPECT_EQ(0, n)
		TH_LOG("unexpected completion: wr_id %#llx status %s opcode %d",
		       (unsigned long long)wc.wr_id,
		       ibv_wc_status_str(wc.status), wc.opcode);
}

/* A completion with the given wr_id and status (and opcode if >= 0). */
#define RC_EXPECT_WC(wc, id, st, op) do {				\
	EXPECT_EQ((uint64_t)(id), (wc).wr_id);				\
	EXPECT_EQ((int)(st), (int)(wc).status)				\
		TH_LOG("status %s, expected %s",			\
		       ibv_wc_status_str((wc).status),			\
		       ibv_wc_status_str(st));				\
	if ((int)(op) >= 0 && (wc).status == IBV_WC_SUCCESS)		\
		EXPECT_EQ((int)(op), (int)(wc).opcode);			\
} while (0)

/* Waits for one completion and checks it as RC_EXPECT_WC() does. */
#define RC_WAIT_WC(cq, id, st, op) do {					\
	struct ibv_wc __wc;						\
									\
	rc_wait_wc(_metadata, (cq), &__wc);				\
	RC_EXPECT_WC(__wc, id, st, op);					\
} while (0)

/*
 * Waits up to ms for an asynchronous event of type on qp (or any object
 * when qp is NULL), acknowledging every event it reads.  Returns whether
 * it came.
 */
static inline bool rc_wait_async(struct ibv_context *ctx,
				 enum ibv_event_type type, struct ibv_qp *qp,
				 long ms)
{
	long deadline = rc_now_ms() + ms;
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	bool found = false;
	long left;

	while (!found && (left = deadline - rc_now_ms()) > 0) {
		if (poll(&pfd, 1, left) != 1)
			break;
		if (ibv_get_async_event(ctx, &ev))
			break;
		if (ev.event_type == type && (!qp || ev.element.qp == qp))
			found = true;
		ibv_ack_async_event(&ev);
	}
	return found;
}

#endif /* RC_PAIR_H */
