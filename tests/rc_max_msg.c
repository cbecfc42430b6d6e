// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The largest message, 2^31 bytes (the port's max_msg_sz), and one byte
 * more.
 *
 * A guest cannot spare 2 GiB twice, so each side's 2 GiB is a window of
 * virtual memory that maps the same small memfd over and over: the MR
 * covers 2^31 bytes and 2^19 pages, which are the same 1024 pages 512
 * times.  A message written through such a window arrives 512 times over
 * in the destination's memfd, each copy at the same place, so afterwards
 * the destination memfd holds exactly the source memfd's pattern, and any
 * chunk that went missing or landed at the wrong offset shows.
 *
 * The two windows' 2^20 pages are all the page-list entries the device
 * holds by default (max-mr-pages), so nothing else may be registered
 * while they are.
 */
#define _GNU_SOURCE		/* memfd_create() */
#include <sys/mman.h>

#include "rc_pair.h"

#define MAX_MSG		QHCA_MAX_MSG_SIZE
#define CHUNK		(4UL << 20)	/* the memfd behind a window */
#define CHUNKS		(MAX_MSG / CHUNK)
#define WINDOW		MAX_MSG
#define BIG_POLL_MS	300000

/* A window of WINDOW bytes onto one memfd of CHUNK bytes. */
struct window {
	uint8_t *base;
	int fd;
	struct ibv_mr *mr;
};

static void window_map(struct __test_metadata *_metadata, struct window *w,
		       struct ibv_pd *pd)
{
	void *at;
	size_t i;

	w->fd = memfd_create("qhca-window", 0);
	ASSERT_LE(0, w->fd);
	ASSERT_EQ(0, ftruncate(w->fd, CHUNK));
	w->base = mmap(NULL, WINDOW, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ASSERT_NE(MAP_FAILED, w->base);
	for (i = 0; i < CHUNKS; i++) {
		at = mmap(w->base + i * CHUNK, CHUNK, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_FIXED, w->fd, 0);
		ASSERT_EQ((void *)(w->base + i * CHUNK), at);
	}
	w->mr = ibv_reg_mr(pd, w->base, WINDOW, RC_ACCESS_ALL);
	ASSERT_NE(NULL, w->mr) TH_LOG("ibv_reg_mr of %llu bytes: %s",
				      (unsigned long long)WINDOW,
				      strerror(errno));
}

static void window_unmap(struct __test_metadata *_metadata,
			 struct window *w)
{
	if (w->mr)
		EXPECT_EQ(0, ibv_dereg_mr(w->mr));
	if (w->base && w->base != MAP_FAILED)
		munmap(w->base, WINDOW);
	if (w->fd > 0)
		close(w->fd);
	memset(w, 0, sizeof(*w));
}

FIXTURE(big)
{
	struct rc_pair p;
	struct window src;		/* QP 0's */
	struct window dst;		/* QP 1's */
};

FIXTURE_SETUP(big)
{
	struct rc_opts opts;

	rc_default_opts(&opts);
	opts.max_send_sge = 2;
	rc_pair_open(_metadata, &self->p, &opts);
	ASSERT_EQ(MAX_MSG, self->p.pattr.max_msg_sz);
	rc_pair_connect(_metadata, &self->p);
	window_map(_metadata, &self->src, self->p.pd);
	window_map(_metadata, &self->dst, self->p.pd);
	rc_fill(self->src.base, CHUNK, 90);
	rc_poison(self->dst.base, CHUNK, 90);
}

FIXTURE_TEARDOWN(big)
{
	window_unmap(_metadata, &self->src);
	window_unmap(_metadata, &self->dst);
	rc_pair_close(_metadata, &self->p);
}

static struct ibv_sge window_sge(const struct window *w, uint64_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)w->base,
		.length = (uint32_t)len,
		.lkey = w->mr->lkey,
	};

	return sge;
}

TEST_F_TIMEOUT(big, rdma_write_2_gib, 600)
{
	struct rc_pair *p = &self->p;
	struct ibv_sge sge = window_sge(&self->src, MAX_MSG);
	struct ibv_wc wc;

	ASSERT_EQ(0, rc_post(p->s[0].qp, 1, IBV_WR_RDMA_WRITE,
			     IBV_SEND_SIGNALED, &sge, 1,
			     (uintptr_t)self->dst.base, self->dst.mr->rkey));
	ASSERT_EQ(1, rc_poll(p->s[0].scq, &wc, 1, BIG_POLL_MS));
	RC_EXPECT_WC(wc, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	RC_EXPECT_PATTERN(self->dst.base, CHUNK, 90);
}

TEST_F_TIMEOUT(big, send_2_gib, 600)
{
	struct rc_pair *p = &self->p;
	struct ibv_sge sge = window_sge(&self->dst, MAX_MSG);
	struct ibv_wc wc;

	ASSERT_EQ(0, rc_post_recv(p->s[1].qp, 2, &sge, 1));
	sge = window_sge(&self->src, MAX_MSG);
	ASSERT_EQ(0, rc_post(p->s[0].qp, 1, IBV_WR_SEND, IBV_SEND_SIGNALED,
			     &sge, 1, 0, 0));
	ASSERT_EQ(1, rc_poll(p->s[1].rcq, &wc, 1, BIG_POLL_MS));
	RC_EXPECT_WC(wc, 2, IBV_WC_SUCCESS, IBV_WC_RECV);
	EXPECT_EQ((uint32_t)MAX_MSG, wc.byte_len);
	ASSERT_EQ(1, rc_poll(p->s[0].scq, &wc, 1, BIG_POLL_MS));
	RC_EXPECT_WC(wc, 1, IBV_WC_SUCCESS, IBV_WC_SEND);
	RC_EXPECT_PATTERN(self->dst.base, CHUNK, 90);
}

/*
 * One byte more: the window and one byte of another MR, in two SGEs
 * because one SGE cannot say 2^31 + 1.  The requester refuses the message
 * with LOC_LEN_ERR and nothing arrives.
 */
FIXTURE(too_long)
{
	struct rc_pair p;
	struct window src;
	struct rc_buf buf;		/* the extra byte, and the receive */
};

FIXTURE_SETUP(too_long)
{
	struct rc_opts opts;

	rc_default_opts(&opts);
	opts.max_send_sge = 2;
	rc_pair_open(_metadata, &self->p, &opts);
	rc_pair_connect(_metadata, &self->p);
	window_map(_metadata, &self->src, self->p.pd);
	rc_buf_alloc(_metadata, &self->buf, self->p.pd, 8192, RC_ACCESS_ALL);
	rc_prepare_dst(&self->buf, 4096, 1024, 91);
}

FIXTURE_TEARDOWN(too_long)
{
	window_unmap(_metadata, &self->src);
	rc_buf_free(_metadata, &self->buf);
	rc_pair_close(_metadata, &self->p);
}

TEST_F_TIMEOUT(too_long, loc_len_err, 120)
{
	struct rc_pair *p = &self->p;
	struct ibv_sge sge[2], rsge = rc_sge(&self->buf, 4096, 1024);
	struct ibv_wc wc;

	sge[0] = window_sge(&self->src, MAX_MSG);
	sge[1] = rc_sge(&self->buf, 0, 1);
	ASSERT_EQ(0, rc_post_recv(p->s[1].qp, 2, &rsge, 1));
	ASSERT_EQ(0, rc_post(p->s[0].qp, 1, IBV_WR_SEND, IBV_SEND_SIGNALED,
			     sge, 2, 0, 0));
	ASSERT_EQ(1, rc_poll(p->s[0].scq, &wc, 1, BIG_POLL_MS));
	RC_EXPECT_WC(wc, 1, IBV_WC_LOC_LEN_ERR, -1);
	EXPECT_EQ(IBV_QPS_ERR, rc_qp_state(p->s[0].qp));
	EXPECT_EQ(IBV_QPS_RTS, rc_qp_state(p->s[1].qp));
	rc_expect_no_wc(_metadata, p->s[1].rcq);
	RC_EXPECT_UNTOUCHED(&self->buf, 4096, 1024, 91);
}

TEST_HARNESS_MAIN
