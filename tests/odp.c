// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * On-demand paging (include/qhca_hw.h, interface 1.8): MRs registered with
 * IBV_ACCESS_ON_DEMAND pin nothing; the device meets every page absent,
 * reports a page fault, and the driver maps the page and lets the QP go on
 * (a requester from where it stopped, a responder by the RNR NAK that has
 * the requester send again).  When the process unmaps or discards pages,
 * the driver takes them from the device before the kernel frees them.
 *
 * What users rely on, each checked byte for byte on loopback qhca0:
 *   caps       query_device_ex reports ODP, implicit ODP and the
 *              per-transport operations the device serves.
 *   rc.*, atomic.*
 *              SEND/RECV, RDMA WRITE, READ (1 byte to 1 MiB, across
 *              pages) and both atomics between ODP MRs over freshly
 *              mmapped memory the device has never seen: every one faults
 *              on both sides (the counters say so) and carries its bytes.
 *   ud.send    a UD SEND gathered from a fresh ODP MR.
 *   implicit   one implicit MR (the whole address space) carries traffic
 *              between separate mmaps, one across a 1 GiB line.
 *   inval.*    after MADV_DONTNEED, or munmap and a new mmap at the same
 *              address, the next transfer carries the new bytes: the
 *              device kept no old page, on either side.
 *   advise.*, advise_*
 *              ibv_advise_mr: PREFETCH and PREFETCH_WRITE with the FLUSH
 *              flag map the pages before any access (no fault after),
 *              PREFETCH_NO_FAULT maps only pages already present, and
 *              bad SGEs are refused with errno.
 *   errors     an access to a range unmapped after registration completes
 *              LOC_PROT_ERR locally and REM_ACCESS_ERR for the requester
 *              of a remote access; ODP registrations of length 0 or whose
 *              end wraps are refused.
 * Every case ends with the device holding what it held before
 * (rc_pair_close()).
 *
 * The driver's ODP counters are the port's hw counters odp_page_faults,
 * odp_faults_failed, odp_pages_mapped and odp_unmaps; the tests are alone
 * on the device, so a counter that did not move after a completion (or a
 * synchronous call) is work that did not happen.
 */
#include <stdint.h>
#include <sys/mman.h>

#include "rc_pair.h"

#define PAGE		4096UL
#define GIB		(1UL << 30)
#define ODP_ACCESS	(RC_ACCESS_ALL | IBV_ACCESS_ON_DEMAND)
#define ODP_MAX_MAPS	8
#define ODP_MAX_MRS	8
#define ODP_QKEY	0x0d90d900U

/* What each fixture holds: the pair, the mmaps and the MRs to undo. */
struct odp_ctx {
	struct rc_pair p;
	struct {
		void *mem;
		size_t len;
	} map[ODP_MAX_MAPS];
	struct ibv_mr *mr[ODP_MAX_MRS];
	struct rc_buf pinned;		/* an MR without ON_DEMAND */
};

static void odp_open(struct __test_metadata *_metadata, struct odp_ctx *c)
{
	struct rc_opts o;

	rc_default_opts(&o);
	rc_pair_open(_metadata, &c->p, &o);
	rc_pair_connect(_metadata, &c->p);
}

static void odp_close(struct __test_metadata *_metadata, struct odp_ctx *c)
{
	int i;

	for (i = 0; i < ODP_MAX_MRS; i++)
		if (c->mr[i])
			EXPECT_EQ(0, ibv_dereg_mr(c->mr[i]));
	for (i = 0; i < ODP_MAX_MAPS; i++)
		if (c->map[i].mem)
			EXPECT_EQ(0, munmap(c->map[i].mem, c->map[i].len));
	rc_buf_free(_metadata, &c->pinned);
	rc_pair_close(_metadata, &c->p);
}

/* A new mmap the test unmaps at its end: the slot and the call. */
static uint8_t *odp_map_new(struct __test_metadata *_metadata,
			    struct odp_ctx *c, size_t len, int prot, int flags)
{
	void *mem;
	int i;

	for (i = 0; i < ODP_MAX_MAPS && c->map[i].mem; i++)
		;
	ASSERT_LT(i, ODP_MAX_MAPS);
	mem = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS | flags, -1,
		   0);
	ASSERT_NE(MAP_FAILED, mem) TH_LOG("mmap(%zu): %s", len,
					  strerror(errno));
	c->map[i].mem = mem;
	c->map[i].len = len;
	return mem;
}

/* Anonymous private memory the process has not touched: no page yet. */
static uint8_t *odp_mmap(struct __test_metadata *_metadata,
			 struct odp_ctx *c, size_t len)
{
	return odp_map_new(_metadata, c, len, PROT_READ | PROT_WRITE, 0);
}

/*
 * A range the process has reserved: munmapped with the test, and with it
 * whatever odp_mmap_at() put inside.
 */
static uint8_t *odp_reserve(struct __test_metadata *_metadata,
			    struct odp_ctx *c, size_t len)
{
	return odp_map_new(_metadata, c, len, PROT_NONE, MAP_NORESERVE);
}

/* New zero pages at [addr, addr + len), in place of what was there. */
static void odp_mmap_at(struct __test_metadata *_metadata, void *addr,
			size_t len)
{
	void *mem;

	mem = mmap(addr, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	ASSERT_EQ(addr, mem) TH_LOG("mmap(%p, %zu, MAP_FIXED): %s", addr,
				    len, strerror(errno));
}

/* Unmaps one of odp_mmap()'s mmaps whole, before the test ends. */
static void odp_munmap(struct __test_metadata *_metadata, struct odp_ctx *c,
		       void *mem)
{
	int i;

	for (i = 0; i < ODP_MAX_MAPS && c->map[i].mem != mem; i++)
		;
	ASSERT_LT(i, ODP_MAX_MAPS);
	ASSERT_EQ(0, munmap(mem, c->map[i].len));
	c->map[i].mem = NULL;
}

static struct ibv_mr *odp_reg(struct __test_metadata *_metadata,
			      struct odp_ctx *c, void *addr, size_t len,
			      int access)
{
	struct ibv_mr *mr;
	int i;

	for (i = 0; i < ODP_MAX_MRS && c->mr[i]; i++)
		;
	ASSERT_LT(i, ODP_MAX_MRS);
	mr = ibv_reg_mr(c->p.pd, addr, len, access);
	ASSERT_NE(NULL, mr) TH_LOG("ibv_reg_mr(%p, %zu, %#x): %s", addr, len,
				   access, strerror(errno));
	c->mr[i] = mr;
	return mr;
}

static void odp_dereg(struct __test_metadata *_metadata, struct odp_ctx *c,
		      struct ibv_mr *mr)
{
	int i;

	for (i = 0; i < ODP_MAX_MRS && c->mr[i] != mr; i++)
		;
	ASSERT_LT(i, ODP_MAX_MRS);
	ASSERT_EQ(0, ibv_dereg_mr(mr));
	c->mr[i] = NULL;
}

/*
 * Two fresh mmaps of size, l for QP 0's side and r for QP 1's, each with
 * an ODP MR of its own.
 */
static void odp_two(struct __test_metadata *_metadata, struct odp_ctx *c,
		    size_t size, uint8_t **l, struct ibv_mr **lmr,
		    uint8_t **r, struct ibv_mr **rmr)
{
	*l = odp_mmap(_metadata, c, size);
	*r = odp_mmap(_metadata, c, size);
	*lmr = odp_reg(_metadata, c, *l, size, ODP_ACCESS);
	*rmr = odp_reg(_metadata, c, *r, size, ODP_ACCESS);
}

/* ---- Counters -------------------------------------------------------- */

struct odp_cnt {
	long faults;		/* odp_page_faults */
	long failed;		/* odp_faults_failed */
	long mapped;		/* odp_pages_mapped */
	long unmaps;		/* odp_unmaps */
};

/* The four ODP counters, with everything before the call in them. */
static void odp_cnt_read(struct __test_metadata *_metadata,
			 struct odp_cnt *n)
{
	static const char *const names[] = { "odp_page_faults",
		"odp_faults_failed", "odp_pages_mapped", "odp_unmaps" };
	long *val[] = { &n->faults, &n->failed, &n->mapped, &n->unmaps };
	unsigned int i;

	qhca_hw_counters_expire();
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		*val[i] = qhca_hw_counter(names[i]);
		ASSERT_LE(0, *val[i]) TH_LOG("hw counter %s: %s", names[i],
					     strerror(-*val[i]));
	}
}

/* Pages of 4 KiB that [addr, addr + len) touches. */
static long odp_pages(const void *addr, size_t len)
{
	uintptr_t first = (uintptr_t)addr / PAGE;
	uintptr_t end = ((uintptr_t)addr + len + PAGE - 1) / PAGE;

	return (long)(end - first);
}

/* ---- Data ------------------------------------------------------------ */

/* Offset of the first byte of buf that is not 0, or -1. */
static long odp_nonzero(const void *buf, size_t len)
{
	const uint8_t *b = buf;
	size_t i;

	for (i = 0; i < len; i++)
		if (b[i])
			return (long)i;
	return -1;
}

/*
 * Untouched memory reads as zeros: the message must be at [off, off + len)
 * of the mmap [mem, mem + size) and every other byte still 0.
 */
#define ODP_EXPECT_DELIVERED(mem, size, off, len, seed) do {		\
	long __z;							\
									\
	__z = odp_nonzero((mem), (off));				\
	EXPECT_EQ(-1, __z) TH_LOG("byte %ld before the message was "	\
				  "written", __z);			\
	RC_EXPECT_PATTERN((mem) + (off), (len), (seed));		\
	__z = odp_nonzero((mem) + (off) + (len),			\
			  (size) - (off) - (len));			\
	EXPECT_EQ(-1, __z) TH_LOG("byte %ld after the message was "	\
				  "written", __z);			\
} while (0)

#define ODP_EXPECT_ZERO(mem, len) do {					\
	long __z = odp_nonzero((mem), (len));				\
									\
	EXPECT_EQ(-1, __z) TH_LOG("%s: byte %ld was written", #mem,	\
				  __z);					\
} while (0)

/* ---- Transfers ------------------------------------------------------- */

/*
 * One operation of len bytes from QP 0, its local side at laddr in lmr and
 * its remote side at raddr in rmr (for a SEND, a receive QP 1 posts there
 * first); waits for it and returns the send completion's status.  A SEND
 * that succeeds must also complete its receive, with len bytes.  Atomics
 * take compare_add and swap.
 */
static int odp_xfer(struct __test_metadata *_metadata, struct odp_ctx *c,
		    enum ibv_wr_opcode op, struct ibv_mr *lmr, void *laddr,
		    struct ibv_mr *rmr, void *raddr, uint32_t len,
		    uint64_t compare_add, uint64_t swap)
{
	struct ibv_sge lsge = {
		.addr = (uintptr_t)laddr, .length = len, .lkey = lmr->lkey,
	};
	struct ibv_sge rsge = {
		.addr = (uintptr_t)raddr, .length = len, .lkey = rmr->lkey,
	};
	struct rc_side *s0 = &c->p.s[0], *s1 = &c->p.s[1];
	static uint64_t id = 0x0d90000;
	struct ibv_wc wc;
	int ret;

	id++;
	switch (op) {
	case IBV_WR_SEND:
		EXPECT_EQ(0, rc_post_recv(s1->qp, id, &rsge, 1));
		ret = rc_post(s0->qp, id, op, IBV_SEND_SIGNALED, &lsge, 1, 0,
			      0);
		break;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		ret = rc_post_atomic(s0->qp, id, op, IBV_SEND_SIGNALED, &lsge,
				     (uintptr_t)raddr, rmr->rkey, compare_add,
				     swap);
		break;
	default:
		ret = rc_post(s0->qp, id, op, IBV_SEND_SIGNALED, &lsge, 1,
			      (uintptr_t)raddr, rmr->rkey);
		break;
	}
	EXPECT_EQ(0, ret) TH_LOG("ibv_post_send: %s", strerror(ret));
	if (ret)
		return -1;
	rc_wait_wc(_metadata, s0->scq, &wc);
	EXPECT_EQ(id, wc.wr_id);
	if (op == IBV_WR_SEND && wc.status == IBV_WC_SUCCESS) {
		struct ibv_wc rwc;

		rc_wait_wc(_metadata, s1->rcq, &rwc);
		RC_EXPECT_WC(rwc, id, IBV_WC_SUCCESS, IBV_WC_RECV);
		EXPECT_EQ(len, rwc.byte_len);
	}
	return wc.status;
}

/* Both QPs back to RTS after an error completion took them to ERR. */
static void odp_reconnect(struct __test_metadata *_metadata,
			  struct odp_ctx *c)
{
	struct ibv_wc wc[8];
	int i;

	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, rc_to_state(c->p.s[i].qp, IBV_QPS_RESET));
		/* RESET empties the queues; the CQs may hold flushes. */
		while (ibv_poll_cq(c->p.s[i].scq, 8, wc) > 0)
			;
		while (ibv_poll_cq(c->p.s[i].rcq, 8, wc) > 0)
			;
	}
	rc_pair_connect(_metadata, &c->p);
}

/* A transfer that must succeed. */
#define ODP_XFER_OK(c, op, lmr, laddr, rmr, raddr, len, cmp_add, swap)	\
	ASSERT_EQ(IBV_WC_SUCCESS,					\
		  odp_xfer(_metadata, (c), (op), (lmr), (laddr), (rmr),	\
			   (raddr), (len), (cmp_add), (swap)))

/* The setup and teardown of the fixtures that hold an odp_ctx c alone. */
#define ODP_FIXTURE_OPS(f)						\
FIXTURE_SETUP(f)							\
{									\
	odp_open(_metadata, &self->c);					\
}									\
FIXTURE_TEARDOWN(f)							\
{									\
	odp_close(_metadata, &self->c);					\
}

/* ---- caps ------------------------------------------------------------ */

FIXTURE(odp)
{
	struct odp_ctx c;
};

ODP_FIXTURE_OPS(odp)

#define RC_ODP_OPS	((uint32_t)(IBV_ODP_SUPPORT_SEND |		\
				    IBV_ODP_SUPPORT_RECV |		\
				    IBV_ODP_SUPPORT_WRITE |		\
				    IBV_ODP_SUPPORT_READ |		\
				    IBV_ODP_SUPPORT_ATOMIC |		\
				    IBV_ODP_SUPPORT_SRQ_RECV))

/*
 * qhca0 pages on demand: a device without the capability fails here (no
 * skip).  UD claims SEND only: a UD receive that faults drops the message
 * (the device cannot ask a UD sender again), so RECV would be untrue.
 */
TEST_F(odp, caps)
{
	struct ibv_device_attr_ex attr = {};

	ASSERT_EQ(0, ibv_query_device_ex(self->c.p.ctx, NULL, &attr));
	EXPECT_EQ((uint64_t)(IBV_ODP_SUPPORT | IBV_ODP_SUPPORT_IMPLICIT),
		  attr.odp_caps.general_caps &
		  (IBV_ODP_SUPPORT | IBV_ODP_SUPPORT_IMPLICIT));
	EXPECT_EQ(RC_ODP_OPS,
		  attr.odp_caps.per_transport_caps.rc_odp_caps & RC_ODP_OPS);
	EXPECT_EQ(RC_ODP_OPS, attr.xrc_odp_caps & RC_ODP_OPS);
	EXPECT_EQ((uint32_t)IBV_ODP_SUPPORT_SEND,
		  attr.odp_caps.per_transport_caps.ud_odp_caps &
		  (IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV));
}

/* ---- rc.*: every operation over fresh pages ---------------------------- */

FIXTURE(rc)
{
	struct odp_ctx c;
};

FIXTURE_VARIANT(rc)
{
	enum ibv_wr_opcode op;
};

FIXTURE_VARIANT_ADD(rc, send) { .op = IBV_WR_SEND };
FIXTURE_VARIANT_ADD(rc, write) { .op = IBV_WR_RDMA_WRITE };
FIXTURE_VARIANT_ADD(rc, read) { .op = IBV_WR_RDMA_READ };

ODP_FIXTURE_OPS(rc)

/*
 * Where each message goes: 1 byte, across one page line, over several
 * pages, and 1 MiB over 257 pages.
 */
static const struct {
	size_t off;
	uint32_t len;
} odp_shapes[] = {
	{ 0, 1 },
	{ PAGE - 100, 200 },
	{ 17, 3 * PAGE + 123 },
	{ 100, 1 << 20 },
};

/*
 * For each shape, a fresh mmap and ODP MR on each side; the side the data
 * comes from is written by the process (so its pages exist but the device
 * has none of them), the side it goes to is never touched (the fault must
 * give the device a page of its own to write, not the zero page).  Both
 * sides fault at least once, every page of both ranges is mapped, and the
 * message arrives with nothing around it written.
 */
TEST_F_TIMEOUT(rc, fresh_pages, 240)
{
	bool read = variant->op == IBV_WR_RDMA_READ;
	struct odp_cnt c0, c1;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(odp_shapes); i++) {
		size_t off = odp_shapes[i].off, len = odp_shapes[i].len;
		size_t size = (off + len + 2 * PAGE - 1) & ~(PAGE - 1);
		uint8_t *l, *r, *src, *dst;
		struct ibv_mr *lmr, *rmr;
		uint32_t seed = 100 + i;

		odp_two(_metadata, &self->c, size, &l, &lmr, &r, &rmr);
		src = read ? r : l;
		dst = read ? l : r;
		rc_fill(src + off, len, seed);

		odp_cnt_read(_metadata, &c0);
		ASSERT_EQ(IBV_WC_SUCCESS,
			  odp_xfer(_metadata, &self->c, variant->op, lmr,
				   l + off, rmr, r + off, len, 0, 0))
			TH_LOG("%u bytes at %zu", (unsigned int)len, off);
		odp_cnt_read(_metadata, &c1);

		ODP_EXPECT_DELIVERED(dst, size, off, len, seed);
		RC_EXPECT_PATTERN(src + off, len, seed);
		EXPECT_LE(c0.faults + 2, c1.faults)
			TH_LOG("%u bytes: not a fault on each side",
			       (unsigned int)len);
		EXPECT_LE(c0.mapped + 2 * odp_pages(l + off, len), c1.mapped)
			TH_LOG("%u bytes: %ld pages mapped", (unsigned int)len,
			       c1.mapped - c0.mapped);
		EXPECT_EQ(c0.failed, c1.failed);

		odp_dereg(_metadata, &self->c, lmr);
		odp_dereg(_metadata, &self->c, rmr);
		odp_munmap(_metadata, &self->c, l);
		odp_munmap(_metadata, &self->c, r);
	}
}

/* ---- atomic.*: both atomics over fresh pages -------------------------- */

FIXTURE(atomic)
{
	struct odp_ctx c;
};

FIXTURE_VARIANT(atomic)
{
	enum ibv_wr_opcode op;
};

FIXTURE_VARIANT_ADD(atomic, fetch_add) {
	.op = IBV_WR_ATOMIC_FETCH_AND_ADD
};
FIXTURE_VARIANT_ADD(atomic, cmp_swap) { .op = IBV_WR_ATOMIC_CMP_AND_SWP };

ODP_FIXTURE_OPS(atomic)

/*
 * An atomic on the last word of a page: the responder's word, written by
 * the process, and the requester's result word, never touched, both in
 * fresh ODP MRs.  FETCH_AND_ADD once; CMP_AND_SWP once that swaps and once
 * that does not.
 */
TEST_F_TIMEOUT(atomic, fresh_pages, 120)
{
	const size_t size = 3 * PAGE, off = 2 * PAGE - 8;
	const uint64_t v = 0x0123456789abcdefULL, add = 0x1111000000000001ULL;
	const uint64_t swap = 0xfedcba9876543210ULL;
	bool fadd = variant->op == IBV_WR_ATOMIC_FETCH_AND_ADD;
	struct ibv_mr *lmr, *rmr;
	struct odp_cnt c0, c1;
	uint64_t *lw, *rw;
	uint8_t *l, *r;

	odp_two(_metadata, &self->c, size, &l, &lmr, &r, &rmr);
	lw = (uint64_t *)(l + off);
	rw = (uint64_t *)(r + off);
	*rw = v;

	odp_cnt_read(_metadata, &c0);
	ODP_XFER_OK(&self->c, variant->op, lmr, lw, rmr, rw, 8, fadd ? add : v,
		    swap);
	odp_cnt_read(_metadata, &c1);
	EXPECT_EQ(v, *lw);
	EXPECT_EQ(fadd ? v + add : swap, *rw);
	EXPECT_LE(c0.faults + 2, c1.faults);
	EXPECT_LE(c0.mapped + 2, c1.mapped);
	/* Nothing but the two words. */
	*lw = 0;
	*rw = 0;
	ODP_EXPECT_ZERO(l, size);
	ODP_EXPECT_ZERO(r, size);
	if (fadd)
		return;

	/* A compare that no longer matches: the word stays. */
	*rw = swap;
	ODP_XFER_OK(&self->c, variant->op, lmr, lw, rmr, rw, 8, v, v);
	EXPECT_EQ(swap, *lw);
	EXPECT_EQ(swap, *rw);
}

/* ---- ud: a UD SEND gathered from an ODP MR ----------------------------- */

FIXTURE(ud)
{
	struct odp_ctx c;
	struct ibv_ah *ah;
};

FIXTURE_SETUP(ud)
{
	struct ibv_ah_attr aa = { .port_num = 1 };
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qkey = ODP_QKEY,
	};
	struct rc_opts o;
	int i;

	rc_default_opts(&o);
	o.qp_type = IBV_QPT_UD;
	rc_pair_open(_metadata, &self->c.p, &o);
	for (i = 0; i < 2; i++) {
		struct ibv_qp *qp = self->c.p.s[i].qp;

		attr.qp_state = IBV_QPS_INIT;
		ASSERT_EQ(0, ibv_modify_qp(qp, &attr, IBV_QP_STATE |
					   IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					   IBV_QP_QKEY));
		attr.qp_state = IBV_QPS_RTR;
		ASSERT_EQ(0, ibv_modify_qp(qp, &attr, IBV_QP_STATE));
		attr.qp_state = IBV_QPS_RTS;
		ASSERT_EQ(0, ibv_modify_qp(qp, &attr, IBV_QP_STATE |
					   IBV_QP_SQ_PSN));
	}
	aa.dlid = self->c.p.pattr.lid;
	self->ah = ibv_create_ah(self->c.p.pd, &aa);
	ASSERT_NE(NULL, self->ah) TH_LOG("ibv_create_ah: %s", strerror(errno));
}

FIXTURE_TEARDOWN(ud)
{
	if (self->ah)
		EXPECT_EQ(0, ibv_destroy_ah(self->ah));
	odp_close(_metadata, &self->c);
}

/*
 * UD claims SEND: a message gathered across a page line of a fresh ODP
 * MR faults at the requester, which waits for the page and sends it
 * whole (into a pinned receive buffer, after its GRH area).
 */
TEST_F_TIMEOUT(ud, send, 120)
{
	const size_t size = 2 * PAGE, off = PAGE - 1000, len = 3000;
	const size_t grh = QHCA_UD_GRH_SIZE;
	struct ibv_sge lsge, rsge;
	struct ibv_send_wr wr = {
		.wr_id = 1,
		.sg_list = &lsge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad = NULL;
	struct odp_cnt c0, c1;
	struct ibv_mr *lmr;
	struct ibv_wc wc;
	uint8_t *l;

	rc_buf_alloc(_metadata, &self->c.pinned, self->c.p.pd, size,
		     RC_ACCESS_ALL);
	l = odp_mmap(_metadata, &self->c, size);
	lmr = odp_reg(_metadata, &self->c, l, size, ODP_ACCESS);
	rc_fill(l + off, len, 12);
	lsge = (struct ibv_sge){ .addr = (uintptr_t)(l + off), .length = len,
				 .lkey = lmr->lkey };
	rsge = rc_sge(&self->c.pinned, 0, grh + len);
	wr.wr.ud.ah = self->ah;
	wr.wr.ud.remote_qpn = self->c.p.s[1].qp->qp_num;
	wr.wr.ud.remote_qkey = ODP_QKEY;

	odp_cnt_read(_metadata, &c0);
	ASSERT_EQ(0, rc_post_recv(self->c.p.s[1].qp, 2, &rsge, 1));
	ASSERT_EQ(0, ibv_post_send(self->c.p.s[0].qp, &wr, &bad));
	RC_WAIT_WC(self->c.p.s[0].scq, 1, IBV_WC_SUCCESS, IBV_WC_SEND);
	rc_wait_wc(_metadata, self->c.p.s[1].rcq, &wc);
	RC_EXPECT_WC(wc, 2, IBV_WC_SUCCESS, IBV_WC_RECV);
	EXPECT_EQ(grh + len, wc.byte_len);
	odp_cnt_read(_metadata, &c1);
	RC_EXPECT_PATTERN(self->c.pinned.mem + grh, len, 12);
	EXPECT_LE(c0.faults + 1, c1.faults);
	EXPECT_LE(c0.mapped + 2, c1.mapped);
}

/* ---- implicit ------------------------------------------------------- */

/*
 * One implicit MR (ibv_reg_mr(pd, NULL, SIZE_MAX, ...)) is the only MR of
 * this test, lkey and rkey alike: separate mmaps far apart, one across a
 * 1 GiB line (where a driver that keeps the address space in chunks
 * changes chunk), and one where the kernel put it, carry a WRITE, a READ,
 * a SEND and an atomic, each faulting its pages in.
 */
TEST_F_TIMEOUT(odp, implicit, 120)
{
	uint8_t *resv, *base, *a, *b, *d, *e;
	struct odp_cnt c0, c1;
	struct ibv_mr *imr;
	uint64_t *w;

	resv = odp_reserve(_metadata, &self->c, 4 * GIB);
	base = (uint8_t *)(((uintptr_t)resv + GIB - 1) & ~(GIB - 1));
	a = base + GIB - 2 * PAGE;		/* 4 pages across the line */
	b = base + 2 * GIB + 5 * PAGE;		/* 3 pages */
	d = base + 3 * GIB - 3 * PAGE;		/* 4, across another */
	odp_mmap_at(_metadata, a, 4 * PAGE);
	odp_mmap_at(_metadata, b, 3 * PAGE);
	odp_mmap_at(_metadata, d, 4 * PAGE);
	e = odp_mmap(_metadata, &self->c, 3 * PAGE);

	imr = odp_reg(_metadata, &self->c, NULL, SIZE_MAX, ODP_ACCESS);
	rc_fill(a + PAGE + 10, 2 * PAGE, 1);

	odp_cnt_read(_metadata, &c0);
	/* a's bytes across the 1 GiB line to b. */
	ODP_XFER_OK(&self->c, IBV_WR_RDMA_WRITE, imr, a + PAGE + 10, imr,
		    b + 100, 2 * PAGE, 0, 0);
	ODP_EXPECT_DELIVERED(b, 3 * PAGE, 100, 2 * PAGE, 1);
	/* READ them from b into d, across its own 1 GiB line. */
	ODP_XFER_OK(&self->c, IBV_WR_RDMA_READ, imr, d + PAGE - 50, imr,
		    b + 100, 2 * PAGE, 0, 0);
	ODP_EXPECT_DELIVERED(d, 4 * PAGE, PAGE - 50, 2 * PAGE, 1);
	/* SEND them from d to e, wherever the kernel put e. */
	ODP_XFER_OK(&self->c, IBV_WR_SEND, imr, d + PAGE - 50, imr, e + 7,
		    2 * PAGE, 0, 0);
	ODP_EXPECT_DELIVERED(e, 3 * PAGE, 7, 2 * PAGE, 1);
	/* FETCH_AND_ADD on b's last word, the result in e's. */
	w = (uint64_t *)(b + 3 * PAGE - 8);
	*w = 40;
	ODP_XFER_OK(&self->c, IBV_WR_ATOMIC_FETCH_AND_ADD, imr,
		    e + 3 * PAGE - 8, imr, w, 8, 2, 0);
	EXPECT_EQ(42ULL, *w);
	EXPECT_EQ(40ULL, *(uint64_t *)(e + 3 * PAGE - 8));
	odp_cnt_read(_metadata, &c1);
	/* Every side of the first three faulted, a page of each at least. */
	EXPECT_LE(c0.faults + 6, c1.faults);
	EXPECT_LE(c0.mapped + 3 + 3 + 3 + 3, c1.mapped);
	EXPECT_EQ(c0.failed, c1.failed);
}

/* ---- inval.*: pages the process replaced ------------------------------- */

FIXTURE(inval)
{
	struct odp_ctx c;
};

FIXTURE_VARIANT(inval)
{
	bool remap;	/* munmap and mmap MAP_FIXED, else MADV_DONTNEED */
};

FIXTURE_VARIANT_ADD(inval, dontneed) { .remap = false };
FIXTURE_VARIANT_ADD(inval, remap) { .remap = true };

ODP_FIXTURE_OPS(inval)

/*
 * New zero pages at [mem, mem + len) in place of the old ones, as the
 * variant says, and the device told: odp_unmaps moved by the time the call
 * returned (the kernel's invalidation waits for the driver).
 */
static void odp_replace(struct __test_metadata *_metadata, bool remap,
			void *mem, size_t len)
{
	struct odp_cnt c0, c1;

	odp_cnt_read(_metadata, &c0);
	if (remap) {
		ASSERT_EQ(0, munmap(mem, len));
		odp_mmap_at(_metadata, mem, len);
	} else {
		ASSERT_EQ(0, madvise(mem, len, MADV_DONTNEED));
	}
	odp_cnt_read(_metadata, &c1);
	EXPECT_LT(c0.unmaps, c1.unmaps) TH_LOG("no ODP_UNMAP for %p", mem);
}

/*
 * After traffic over both MRs, each side's pages are replaced in turn: a
 * WRITE's source and destination, a READ's source and destination.  The
 * source gets new bytes each time, and every transfer after a replacement
 * carries them, into the new pages where those are the destination, with
 * nothing around them: the device kept no old page.
 */
TEST_F_TIMEOUT(inval, both_sides, 120)
{
	const size_t size = 3 * PAGE, off = PAGE - 300, len = PAGE + 600;
	static const struct {
		char replace;	/* 'l', 'r' or 0: whose pages first */
		enum ibv_wr_opcode op;
	} steps[] = {
		{ 0, IBV_WR_RDMA_WRITE },	/* both faulted in */
		{ 'l', IBV_WR_RDMA_WRITE },	/* the WRITE's source */
		{ 'r', IBV_WR_RDMA_WRITE },	/* the WRITE's destination */
		{ 'r', IBV_WR_RDMA_READ },	/* the READ's source */
		{ 'l', IBV_WR_RDMA_READ },	/* the READ's destination */
	};
	struct ibv_mr *lmr, *rmr;
	uint8_t *l, *r, *src, *dst;
	unsigned int i;

	odp_two(_metadata, &self->c, size, &l, &lmr, &r, &rmr);
	for (i = 0; i < ARRAY_SIZE(steps); i++) {
		if (steps[i].replace)
			odp_replace(_metadata, variant->remap,
				    steps[i].replace == 'l' ? l : r, size);
		src = steps[i].op == IBV_WR_RDMA_READ ? r : l;
		dst = src == l ? r : l;
		rc_fill(src + off, len, i + 1);
		ODP_XFER_OK(&self->c, steps[i].op, lmr, l + off, rmr, r + off,
			    len, 0, 0);
		ODP_EXPECT_DELIVERED(dst, size, off, len, i + 1);
	}
}

/* ---- advise_*: ibv_advise_mr ------------------------------------------ */

static int odp_advise(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
		      uint32_t flags, struct ibv_mr *mr, void *addr,
		      size_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)addr, .length = len, .lkey = mr->lkey,
	};

	return ibv_advise_mr(pd, advice, flags, &sge, 1);
}

/*
 * advise.*.sync: each advice with the FLUSH flag, which makes it
 * synchronous.  The pages are mapped when the call returns, without a
 * fault, and the WRITE that uses them after faults no more:
 *   prefetch_write  4 untouched pages, all mapped writable: the WRITE's
 *                   destination;
 *   prefetch        4 pages (3 written by the process), all mapped: the
 *                   WRITE's source;
 *   no_fault        2 pages written of 4: those 2 mapped and not the 2
 *                   untouched ones (they do not exist yet, and this advice
 *                   creates none): the WRITE's source.
 * The other side of the WRITE is a pinned MR.
 */
FIXTURE(advise)
{
	struct odp_ctx c;
};

FIXTURE_VARIANT(advise)
{
	enum ibv_advise_mr_advice advice;
	bool dst;		/* the ODP MR is the WRITE's destination */
	size_t off, len;	/* the WRITE's range in it */
	long mapped;		/* pages the advice maps, at least */
	bool exact;		/* and no more */
};

FIXTURE_VARIANT_ADD(advise, prefetch_write) {
	.advice = IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, .dst = true,
	.off = PAGE - 10, .len = 2 * PAGE, .mapped = 4,
};
FIXTURE_VARIANT_ADD(advise, prefetch) {
	.advice = IBV_ADVISE_MR_ADVICE_PREFETCH,
	.off = 123, .len = 2 * PAGE + 5, .mapped = 4,
};
FIXTURE_VARIANT_ADD(advise, no_fault) {
	.advice = IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT,
	.off = 0, .len = 2 * PAGE, .mapped = 2, .exact = true,
};

ODP_FIXTURE_OPS(advise)

TEST_F_TIMEOUT(advise, sync, 120)
{
	const size_t size = 4 * PAGE, off = variant->off, len = variant->len;
	struct rc_buf *pin = &self->c.pinned;
	struct odp_cnt c0, c1, c2;
	struct ibv_mr *mr;
	uint8_t *m;

	rc_buf_alloc(_metadata, pin, self->c.p.pd, size, RC_ACCESS_ALL);
	m = odp_mmap(_metadata, &self->c, size);
	mr = odp_reg(_metadata, &self->c, m, size, ODP_ACCESS);
	rc_fill(variant->dst ? pin->mem : m + off, len, 5);

	odp_cnt_read(_metadata, &c0);
	ASSERT_EQ(0, odp_advise(self->c.p.pd, variant->advice,
				IBV_ADVISE_MR_FLAG_FLUSH, mr, m, size));
	odp_cnt_read(_metadata, &c1);
	if (variant->exact) {
		EXPECT_EQ(c0.mapped + variant->mapped, c1.mapped);
	} else {
		EXPECT_LE(c0.mapped + variant->mapped, c1.mapped);
	}
	EXPECT_EQ(c0.faults, c1.faults);

	if (variant->dst) {
		ODP_XFER_OK(&self->c, IBV_WR_RDMA_WRITE, pin->mr, pin->mem,
			    mr, m + off, len, 0, 0);
	} else {
		ODP_XFER_OK(&self->c, IBV_WR_RDMA_WRITE, mr, m + off, pin->mr,
			    pin->mem + off, len, 0, 0);
	}
	odp_cnt_read(_metadata, &c2);
	ODP_EXPECT_DELIVERED(variant->dst ? m : pin->mem, size, off, len, 5);
	EXPECT_EQ(c1.faults, c2.faults) TH_LOG("the prefetched pages faulted");
}

/*
 * Without the FLUSH flag the advice may still be going on when the call
 * returns: it succeeds, and a WRITE into the range carries its bytes
 * whoever mapped the pages.
 */
TEST_F_TIMEOUT(odp, advise_async, 120)
{
	const size_t size = 2 * PAGE, off = 300, len = PAGE;
	struct ibv_mr *rmr;
	uint8_t *r;

	rc_buf_alloc(_metadata, &self->c.pinned, self->c.p.pd, size,
		     RC_ACCESS_ALL);
	r = odp_mmap(_metadata, &self->c, size);
	rmr = odp_reg(_metadata, &self->c, r, size, ODP_ACCESS);
	ASSERT_EQ(0, odp_advise(self->c.p.pd,
				IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, 0, rmr, r,
				size));
	rc_fill(self->c.pinned.mem, len, 8);
	ODP_XFER_OK(&self->c, IBV_WR_RDMA_WRITE, self->c.pinned.mr,
		    self->c.pinned.mem, rmr, r + off, len, 0, 0);
	ODP_EXPECT_DELIVERED(r, size, off, len, 8);
}

/*
 * Advice the kernel or the driver refuses, with mlx5's errno values (the
 * verbs document none): no SGE or an unknown flag (EINVAL, ib_uverbs'),
 * an advice that does not exist (EOPNOTSUPP), an lkey that is no ODP MR
 * (ENOENT), another PD's MR or a PREFETCH_WRITE of a read-only MR
 * (EPERM), a range beyond the MR (EFAULT).  Nothing is mapped by any of
 * them.
 */
TEST_F_TIMEOUT(odp, advise_refused, 120)
{
	const size_t size = 2 * PAGE;
	struct ibv_pd *pd = self->c.p.pd, *pd2;
	struct ibv_mr *mr, *ro, *other;
	struct odp_cnt c0, c1;
	struct ibv_sge sge;
	uint8_t *m;

	rc_buf_alloc(_metadata, &self->c.pinned, pd, size, RC_ACCESS_ALL);
	m = odp_mmap(_metadata, &self->c, 2 * size);
	mr = odp_reg(_metadata, &self->c, m, size, ODP_ACCESS);
	ro = odp_reg(_metadata, &self->c, m + size, size,
		     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_ON_DEMAND);
	pd2 = ibv_alloc_pd(self->c.p.ctx);
	ASSERT_NE(NULL, pd2);
	other = ibv_reg_mr(pd2, m, size, ODP_ACCESS);
	ASSERT_NE(NULL, other);

	odp_cnt_read(_metadata, &c0);
	sge = (struct ibv_sge){ .addr = (uintptr_t)m, .length = PAGE,
				.lkey = mr->lkey };
	EXPECT_EQ(EINVAL, ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
					IBV_ADVISE_MR_FLAG_FLUSH, &sge, 0));
	EXPECT_EQ(EINVAL, ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
					IBV_ADVISE_MR_FLAG_FLUSH << 1, &sge,
					1));
	EXPECT_EQ(EOPNOTSUPP,
		  ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT + 1,
				IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1));
	/* Not ODP, not an MR. */
	EXPECT_EQ(ENOENT, odp_advise(pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
				     IBV_ADVISE_MR_FLAG_FLUSH,
				     self->c.pinned.mr, self->c.pinned.mem,
				     PAGE));
	sge.lkey = mr->lkey ^ 0x00ffff00;
	EXPECT_EQ(ENOENT, ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
					IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1));
	/* Another PD's MR; writing a read-only MR. */
	EXPECT_EQ(EPERM, odp_advise(pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
				    IBV_ADVISE_MR_FLAG_FLUSH, other, m,
				    PAGE));
	EXPECT_EQ(EPERM, odp_advise(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
				     IBV_ADVISE_MR_FLAG_FLUSH, ro, m + size,
				     PAGE));
	/* One byte past the MR's end, and before its start. */
	EXPECT_EQ(EFAULT, odp_advise(pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
				     IBV_ADVISE_MR_FLAG_FLUSH, mr, m + PAGE,
				     PAGE + 1));
	EXPECT_EQ(EFAULT, odp_advise(pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
				     IBV_ADVISE_MR_FLAG_FLUSH, mr, m - 1, 2));
	odp_cnt_read(_metadata, &c1);
	EXPECT_EQ(c0.mapped, c1.mapped);

	EXPECT_EQ(0, ibv_dereg_mr(other));
	EXPECT_EQ(0, ibv_dealloc_pd(pd2));
}

/* ---- errors ----------------------------------------------------------- */

/*
 * A transfer whose fault cannot be resolved: it completes with status,
 * and odp_faults_failed moved; then both QPs are connected again.
 */
#define ODP_XFER_FAILS(status, op, lmr, laddr, rmr, raddr, len) do {	\
	struct odp_cnt __c0, __c1;					\
									\
	odp_cnt_read(_metadata, &__c0);					\
	EXPECT_EQ((status), odp_xfer(_metadata, &self->c, (op), (lmr),	\
				     (laddr), (rmr), (raddr), (len),	\
				     0, 0));				\
	odp_cnt_read(_metadata, &__c1);					\
	EXPECT_LT(__c0.failed, __c1.failed);				\
	odp_reconnect(_metadata, &self->c);				\
} while (0)

/*
 * A local access to a page of an ODP MR that the process munmapped after
 * registering it cannot be resolved: the WQE completes LOC_PROT_ERR, for
 * a WRITE's gather as for a READ's scatter, and nothing reaches the
 * remote memory.
 */
TEST_F_TIMEOUT(odp, local_unmapped, 120)
{
	const size_t size = 3 * PAGE;
	struct ibv_mr *lmr, *rmr;
	uint8_t *l, *r;

	odp_two(_metadata, &self->c, size, &l, &lmr, &r, &rmr);
	rc_fill(l, size, 9);
	ASSERT_EQ(0, munmap(l + PAGE, PAGE));

	ODP_XFER_FAILS(IBV_WC_LOC_PROT_ERR, IBV_WR_RDMA_WRITE, lmr,
		       l + PAGE - 100, rmr, r, 300);
	ODP_EXPECT_ZERO(r, size);
	rc_fill(r, size, 10);
	ODP_XFER_FAILS(IBV_WC_LOC_PROT_ERR, IBV_WR_RDMA_READ, lmr,
		       l + PAGE + 8, rmr, r, 100);
	/* The pages around the hole hold what the process wrote. */
	RC_EXPECT_PATTERN(l, PAGE, 9);
	RC_EXPECT_PATTERN(r, size, 10);
}

/*
 * A WRITE or READ whose remote range the responder's process munmapped
 * after registering it: the responder's fault cannot be resolved, and the
 * requester's WQE completes REM_ACCESS_ERR; nothing is written on either
 * side.
 */
TEST_F_TIMEOUT(odp, remote_unmapped, 120)
{
	const size_t size = 3 * PAGE;
	struct ibv_mr *lmr, *rmr;
	uint8_t *l, *r;

	odp_two(_metadata, &self->c, size, &l, &lmr, &r, &rmr);
	ASSERT_EQ(0, munmap(r + PAGE, PAGE));
	rc_fill(l, size, 11);

	ODP_XFER_FAILS(IBV_WC_REM_ACCESS_ERR, IBV_WR_RDMA_WRITE, lmr, l, rmr,
		       r + PAGE + 8, 100);
	ODP_EXPECT_ZERO(r, PAGE);
	ODP_EXPECT_ZERO(r + 2 * PAGE, PAGE);
	memset(l, 0, size);
	ODP_XFER_FAILS(IBV_WC_REM_ACCESS_ERR, IBV_WR_RDMA_READ, lmr, l, rmr,
		       r + PAGE - 8, 100);
	ODP_EXPECT_ZERO(l, size);
}

/*
 * ODP registrations that cannot be: length 0 (EINVAL, as for any MR), and
 * a range whose end wraps around the address space (EOVERFLOW, as
 * ib_umem_odp_get() answers it for mlx5 too).
 */
TEST_F(odp, reg_refused)
{
	struct ibv_pd *pd = self->c.p.pd;
	uint8_t *m;

	m = odp_mmap(_metadata, &self->c, PAGE);
	errno = 0;
	EXPECT_EQ(NULL, ibv_reg_mr(pd, m, 0, ODP_ACCESS));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibv_reg_mr(pd, m + 100, 0, ODP_ACCESS));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibv_reg_mr(pd, (void *)(UINTPTR_MAX & ~(PAGE - 1)),
				   2 * PAGE, ODP_ACCESS));
	EXPECT_EQ(EOVERFLOW, errno);
}

TEST_HARNESS_MAIN
