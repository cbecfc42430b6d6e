// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The user side of the fault tests (fault_rmmod.sh, fault_kill.sh,
 * fault_gone.sh): a
 * process with RC loopback pairs on qhca0 streaming SENDs whose data it
 * checks end to end, each message carrying its pair, its sequence number
 * and a pattern derived from both.  A lost, duplicated, reordered or
 * corrupted message is a failure.
 *
 *   fault_helper check PAIRS MSGS [DEPTH]
 *                                   MSGS verified messages on each pair,
 *                                   DEPTH (16) SENDs in flight on each,
 *                                   then close everything; exit 0 if fine
 *   fault_helper stream PAIRS       stream until killed; "READY" once
 *                                   every pair delivered a message
 *   fault_helper rmmod PAIRS        stream until the device goes away:
 *                                   expect IBV_EVENT_DEVICE_FATAL, then
 *                                   destroy everything and close, each
 *                                   call succeeding; exit 0 if so.  With
 *                                   QHCA_FAULT_KEEP_GOING set, first poll
 *                                   and post on the dead context for 1 s
 *                                   ("SURVIVED")
 *   fault_helper gone PAIRS         as rmmod, with two more CQs, one polled
 *                                   with ibv_poll_cq(), one with
 *                                   ibv_start_poll(), each wrapped once
 *                                   by a loopback pair and then idle:
 *                                   once the device is gone their rings
 *                                   read as zeroes, which in this pass
 *                                   have the phase of a new CQE.  No poll
 *                                   may return a completion there ("GARBAGE"
 *                                   on stderr if one does); each must
 *                                   report the ring lost within 10 s
 *                                   ("GONE poll_cq", "GONE start_poll")
 *
 * It prints "READY" on stdout (flushed) once traffic flows, and one line
 * per failure on stderr.  Not a kselftest: the scripts drive it.
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define MSG_LEN		256
#define DEPTH_DEFAULT	16		/* WQEs in flight in each queue */
#define CQ_PAIRS	64		/* pairs sharing one CQ */
#define EVENT_WAIT_MS	120000		/* the rmmod must come by then */
#define STALL_MS	60000		/* no completion at all for this long */

struct hdr {
	uint32_t pair;
	uint32_t seq;
};

struct pair {
	struct ibv_qp *qp[2];		/* 0 sends, 1 receives */
	uint32_t tx_seq;		/* next to send */
	uint32_t rx_seq;		/* next expected */
};

struct user {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq **cq;		/* one per CQ_PAIRS pairs */
	unsigned int ncq;
	unsigned int depth;
	struct ibv_mr *mr;
	uint8_t *mem;			/* send slots, then receive slots */
	struct pair *p;
	unsigned int pairs;
	struct ibv_port_attr port;
};

static const char *prog = "fault_helper";
/* The device went away: what the rings say now means nothing. */
static bool device_gone;

#define FAIL(...) do {							\
	if (!device_gone) {						\
		fprintf(stderr, "%s: ", prog);				\
		fprintf(stderr, __VA_ARGS__);				\
		fputc('\n', stderr);					\
	}								\
} while (0)

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

static uint8_t pattern(uint32_t pair, uint32_t seq, size_t i)
{
	uint32_t x = pair * 2654435761u ^ seq * 40503u ^ (uint32_t)i * 97u;

	return (uint8_t)(x ^ x >> 11);
}

static uint8_t *slot(struct user *u, int side, unsigned int pair,
		     unsigned int s)
{
	size_t half = (size_t)u->pairs * u->depth * MSG_LEN;

	return u->mem + side * half + ((size_t)pair * u->depth + s) * MSG_LEN;
}

static int post_send(struct user *u, unsigned int i)
{
	struct pair *p = &u->p[i];
	unsigned int s = p->tx_seq % u->depth;
	uint8_t *buf = slot(u, 0, i, s);
	struct hdr h = { .pair = i, .seq = p->tx_seq };
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf,
		.length = MSG_LEN,
		.lkey = u->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = (uint64_t)i << 32 | 1u << 31 | s,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	size_t k;

	memcpy(buf, &h, sizeof(h));
	for (k = sizeof(h); k < MSG_LEN; k++)
		buf[k] = pattern(i, p->tx_seq, k);
	p->tx_seq++;
	return ibv_post_send(p->qp[0], &wr, &bad);
}

static int post_recv(struct user *u, unsigned int i, unsigned int s)
{
	uint8_t *buf = slot(u, 1, i, s);
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf,
		.length = MSG_LEN,
		.lkey = u->mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = (uint64_t)i << 32 | s,
		.sg_list = &sge,
		.num_sge = 1,
	}, *bad;

	/* Poison: a message that never arrived cannot pass for one. */
	memset(buf, 0xa5, MSG_LEN);
	return ibv_post_recv(u->p[i].qp[1], &wr, &bad);
}

static int connect_qp(struct user *u, struct ibv_qp *qp, uint32_t dest)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = u->port.active_mtu;
	a.dest_qp_num = dest;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	a.ah_attr.dlid = u->port.lid;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;		/* a slow receiver is waited for */
	a.max_rd_atomic = 1;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			     IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

static struct ibv_context *open_qhca0(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), "qhca0"))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	return ctx;
}

static int setup(struct user *u)
{
	size_t len = 2 * (size_t)u->pairs * u->depth * MSG_LEN;
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = {
			.max_send_wr = u->depth,
			.max_recv_wr = u->depth,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
	};
	unsigned int i, s;

	u->ctx = open_qhca0();
	if (!u->ctx || ibv_query_port(u->ctx, 1, &u->port))
		return __LINE__;
	u->pd = ibv_alloc_pd(u->ctx);
	if (!u->pd)
		return __LINE__;
	u->ncq = (u->pairs + CQ_PAIRS - 1) / CQ_PAIRS;
	u->cq = calloc(u->ncq, sizeof(*u->cq));
	if (!u->cq)
		return __LINE__;
	for (i = 0; i < u->ncq; i++) {
		u->cq[i] = ibv_create_cq(u->ctx, 2 * u->depth * CQ_PAIRS, NULL,
					 NULL, 0);
		if (!u->cq[i])
			return __LINE__;
	}
	len = (len + 4095) & ~(size_t)4095;
	if (posix_memalign((void **)&u->mem, 4096, len))
		return __LINE__;
	u->mr = ibv_reg_mr(u->pd, u->mem, len, IBV_ACCESS_LOCAL_WRITE);
	if (!u->mr)
		return __LINE__;
	u->p = calloc(u->pairs, sizeof(*u->p));
	if (!u->p)
		return __LINE__;

	for (i = 0; i < u->pairs; i++) {
		init.send_cq = u->cq[i / CQ_PAIRS];
		init.recv_cq = u->cq[i / CQ_PAIRS];
		u->p[i].qp[0] = ibv_create_qp(u->pd, &init);
		u->p[i].qp[1] = ibv_create_qp(u->pd, &init);
		if (!u->p[i].qp[0] || !u->p[i].qp[1])
			return __LINE__;
		if (connect_qp(u, u->p[i].qp[0], u->p[i].qp[1]->qp_num) ||
		    connect_qp(u, u->p[i].qp[1], u->p[i].qp[0]->qp_num))
			return __LINE__;
		for (s = 0; s < u->depth; s++)
			if (post_recv(u, i, s))
				return __LINE__;
		for (s = 0; s < u->depth; s++)
			if (post_send(u, i))
				return __LINE__;
	}
	return 0;
}

/* Check a received message; 0 if it is the next one of its pair. */
static int check_recv(struct user *u, const struct ibv_wc *wc)
{
	unsigned int i = wc->wr_id >> 32, s = wc->wr_id & 0xffff;
	struct pair *p = &u->p[i];
	const uint8_t *buf = slot(u, 1, i, s);
	struct hdr h;
	size_t k;

	if (wc->byte_len != MSG_LEN) {
		FAIL("pair %u: %u bytes received, expected %u", i,
		     wc->byte_len, MSG_LEN);
		return -1;
	}
	memcpy(&h, buf, sizeof(h));
	if (h.pair != i || h.seq != p->rx_seq) {
		FAIL("pair %u: message of pair %u seq %u, expected seq %u%s",
		     i, h.pair, h.seq, p->rx_seq,
		     h.seq < p->rx_seq ? " (duplicate or reordered)" :
					 " (lost or reordered)");
		return -1;
	}
	for (k = sizeof(h); k < MSG_LEN; k++) {
		if (buf[k] != pattern(i, h.seq, k)) {
			FAIL("pair %u seq %u: byte %zu is 0x%02x, expected 0x%02x",
			     i, h.seq, k, buf[k], pattern(i, h.seq, k));
			return -1;
		}
	}
	p->rx_seq++;
	return post_recv(u, i, s);
}

/*
 * One round of completions.  Returns completions handled, or -1 on a
 * failure.  @tolerate: the device is going away, errors are expected.
 */
static int progress_cq(struct user *u, struct ibv_cq *cq, bool tolerate)
{
	struct ibv_wc wc[32];
	int n, k;

	n = ibv_poll_cq(cq, 32, wc);
	if (n < 0) {
		if (tolerate)
			return 0;
		FAIL("ibv_poll_cq: %d", n);
		return -1;
	}
	for (k = 0; k < n; k++) {
		unsigned int i = wc[k].wr_id >> 32;

		if (wc[k].status != IBV_WC_SUCCESS || i >= u->pairs) {
			if (tolerate)
				continue;
			FAIL("completion wr_id 0x%llx: %s",
			     (unsigned long long)wc[k].wr_id,
			     ibv_wc_status_str(wc[k].status));
			return -1;
		}
		if (wc[k].opcode == IBV_WC_RECV) {
			if (check_recv(u, &wc[k]))
				return -1;
		} else if (post_send(u, i) && !tolerate) {
			FAIL("pair %u: ibv_post_send failed", i);
			return -1;
		}
	}
	return n;
}

static int progress(struct user *u, bool tolerate)
{
	unsigned int c;
	int n, total = 0;

	for (c = 0; c < u->ncq; c++) {
		n = progress_cq(u, u->cq[c], tolerate);
		if (n < 0)
			return n;
		total += n;
	}
	return total;
}

static bool all_delivered(struct user *u, uint32_t msgs)
{
	unsigned int i;

	for (i = 0; i < u->pairs; i++)
		if (u->p[i].rx_seq < msgs)
			return false;
	return true;
}

/* Destroy everything, each call succeeding.  Returns 0 or a line. */
static int teardown(struct user *u)
{
	unsigned int i;
	int line = 0;

	for (i = 0; i < u->pairs; i++) {
		if (ibv_destroy_qp(u->p[i].qp[0]))
			line = __LINE__;
		if (ibv_destroy_qp(u->p[i].qp[1]))
			line = __LINE__;
	}
	if (ibv_dereg_mr(u->mr))
		line = __LINE__;
	for (i = 0; i < u->ncq; i++)
		if (ibv_destroy_cq(u->cq[i]))
			line = __LINE__;
	if (ibv_dealloc_pd(u->pd))
		line = __LINE__;
	if (ibv_close_device(u->ctx))
		line = __LINE__;
	return line;
}

/* Stream until the DEVICE_FATAL event; then close everything. */
static int rmmod_mode(struct user *u)
{
	struct pollfd pfd = { .fd = u->ctx->async_fd, .events = POLLIN };
	long deadline = now_ms() + EVENT_WAIT_MS;
	struct ibv_async_event ev;
	int line;

	for (;;) {
		if (poll(&pfd, 1, 0) > 0)
			break;
		if (now_ms() > deadline) {
			FAIL("no async event within %d ms", EVENT_WAIT_MS);
			return 1;
		}
		/*
		 * A failure counts only if the device is still there: once it
		 * is leaving, the rings read as zeros or as scratch memory.
		 */
		if (progress(u, false) < 0) {
			if (poll(&pfd, 1, 5000) > 0)
				break;
			return 1;
		}
	}
	if (ibv_get_async_event(u->ctx, &ev)) {
		FAIL("ibv_get_async_event: %s", strerror(errno));
		return 1;
	}
	ibv_ack_async_event(&ev);
	if (ev.event_type != IBV_EVENT_DEVICE_FATAL) {
		FAIL("async event %s, expected %s",
		     ibv_event_type_str(ev.event_type),
		     ibv_event_type_str(IBV_EVENT_DEVICE_FATAL));
		return 1;
	}
	printf("EVENT DEVICE_FATAL\n");
	fflush(stdout);
	device_gone = true;

	/*
	 * An application may not stop at once: polling and posting on the
	 * dead context must not crash it (the rings now map scratch pages).
	 */
	if (getenv("QHCA_FAULT_KEEP_GOING")) {
		long end = now_ms() + 1000;
		unsigned int i;

		while (now_ms() < end) {
			progress(u, true);
			for (i = 0; i < u->pairs; i++) {
				post_send(u, i);
				post_recv(u, i, 0);
			}
		}
		printf("SURVIVED\n");
		fflush(stdout);
	}

	line = teardown(u);
	if (line) {
		FAIL("teardown after the device left failed at line %d: %s",
		     line, strerror(errno));
		return 1;
	}
	printf("CLOSED\n");
	return 0;
}

/*
 * gone mode: a CQ wrapped once and then idle, with the loopback pair that
 * wrapped it.  Nothing is outstanding on it afterwards, so any completion
 * it returns is one this process never posted.
 */
#define PROBE_CQE	15		/* a ring of 16 */
#define PROBE_BATCH	4		/* messages at once: 8 CQEs */
#define GONE_WAIT_MS	10000

struct probe {
	const char *name;		/* how it is polled */
	struct ibv_cq *cq;
	struct ibv_cq_ex *cq_ex;	/* polled with ibv_start_poll() */
	struct ibv_qp *qp[2];
	uint64_t next_id;		/* never 0, which a zero CQE holds */
	unsigned int outstanding;
	bool gone;			/* the poll reported the ring lost */
	bool garbage;
};

/* Poll one completion: 1, 0 if none, -errno if the poll failed. */
static int probe_poll(struct probe *pr, struct ibv_wc *wc)
{
	struct ibv_poll_cq_attr attr = {};
	int ret;

	if (!pr->cq_ex) {
		ret = ibv_poll_cq(pr->cq, 1, wc);
		return ret < 0 ? -EIO : ret;
	}
	ret = ibv_start_poll(pr->cq_ex, &attr);
	if (ret == ENOENT)
		return 0;
	if (ret)
		return -ret;
	wc->wr_id = pr->cq_ex->wr_id;
	wc->status = pr->cq_ex->status;
	ibv_end_poll(pr->cq_ex);
	return 1;
}

/* Every completion must be one of those outstanding, and successful. */
static int probe_wrap(struct user *u, struct probe *pr)
{
	uint32_t count = pr->cq->cqe + 1, target, done = 0;
	struct ibv_sge sge = {
		.addr = (uintptr_t)u->mem,
		.length = 64,
		.lkey = u->mr->lkey,
	};
	long deadline = now_ms() + STALL_MS;
	struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 }, *rbad;
	struct ibv_send_wr swr = {
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *sbad;
	struct ibv_wc wc;
	unsigned int k;
	int n;

	/* The slot after a pass and a half expects phase 0. */
	if (count & (count - 1))
		return __LINE__;
	target = count + count / 2;
	while (done < target) {
		for (k = 0; k < PROBE_BATCH; k++) {
			rwr.wr_id = pr->next_id++;
			swr.wr_id = pr->next_id++;
			if (ibv_post_recv(pr->qp[1], &rwr, &rbad) ||
			    ibv_post_send(pr->qp[0], &swr, &sbad))
				return __LINE__;
			pr->outstanding += 2;
		}
		while (pr->outstanding) {
			n = probe_poll(pr, &wc);
			if (n < 0 || now_ms() > deadline)
				return __LINE__;
			if (!n)
				continue;
			if (wc.status != IBV_WC_SUCCESS || !wc.wr_id ||
			    wc.wr_id >= pr->next_id)
				return __LINE__;
			pr->outstanding--;
			done++;
		}
	}
	return 0;
}

static int probe_setup(struct user *u, struct probe *pr, bool ex)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = {
			.max_send_wr = PROBE_BATCH,
			.max_recv_wr = PROBE_BATCH,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
	};
	struct ibv_cq_init_attr_ex attr = {
		.cqe = PROBE_CQE,
		.wc_flags = IBV_WC_STANDARD_FLAGS,
	};

	pr->next_id = 1;
	if (ex) {
		pr->name = "start_poll";
		pr->cq_ex = ibv_create_cq_ex(u->ctx, &attr);
		pr->cq = pr->cq_ex ? ibv_cq_ex_to_cq(pr->cq_ex) : NULL;
	} else {
		pr->name = "poll_cq";
		pr->cq = ibv_create_cq(u->ctx, PROBE_CQE, NULL, NULL, 0);
	}
	if (!pr->cq)
		return __LINE__;
	init.send_cq = pr->cq;
	init.recv_cq = pr->cq;
	pr->qp[0] = ibv_create_qp(u->pd, &init);
	pr->qp[1] = ibv_create_qp(u->pd, &init);
	if (!pr->qp[0] || !pr->qp[1] ||
	    connect_qp(u, pr->qp[0], pr->qp[1]->qp_num) ||
	    connect_qp(u, pr->qp[1], pr->qp[0]->qp_num))
		return __LINE__;
	return probe_wrap(u, pr);
}

/* One poll of an idle probe: a completion is garbage, an error the end. */
static void probe_check(struct probe *pr)
{
	struct ibv_wc wc;
	int n;

	n = probe_poll(pr, &wc);
	if (n > 0) {
		if (!pr->garbage)
			fprintf(stderr, "%s: GARBAGE %s: wr_id 0x%llx status %d on an idle CQ\n",
				prog, pr->name, (unsigned long long)wc.wr_id,
				wc.status);
		pr->garbage = true;
	} else if (n < 0 && !pr->gone) {
		printf("GONE %s (%s)\n", pr->name, strerror(-n));
		fflush(stdout);
		pr->gone = true;
	}
}

static int probe_teardown(struct probe *pr)
{
	int line = 0;

	if (ibv_destroy_qp(pr->qp[0]) || ibv_destroy_qp(pr->qp[1]))
		line = __LINE__;
	if (ibv_destroy_cq(pr->cq))
		line = __LINE__;
	return line;
}

/*
 * Stream until DEVICE_FATAL, polling the probes all along; then keep
 * polling them, and posting, until both reported the ring lost or
 * GONE_WAIT_MS passed; close everything.
 */
static int gone_mode(struct user *u, struct probe *pr)
{
	struct pollfd pfd = { .fd = u->ctx->async_fd, .events = POLLIN };
	long deadline = now_ms() + EVENT_WAIT_MS, end;
	struct ibv_async_event ev;
	bool event = false;
	unsigned int i;
	int line, k;

	while (!event) {
		if (poll(&pfd, 1, 0) > 0 && !ibv_get_async_event(u->ctx, &ev)) {
			ibv_ack_async_event(&ev);
			if (ev.event_type != IBV_EVENT_DEVICE_FATAL) {
				FAIL("async event %s, expected %s",
				     ibv_event_type_str(ev.event_type),
				     ibv_event_type_str(IBV_EVENT_DEVICE_FATAL));
				return 1;
			}
			event = true;
		}
		if (now_ms() > deadline) {
			FAIL("no async event within %d ms", EVENT_WAIT_MS);
			return 1;
		}
		for (k = 0; k < 2; k++)
			probe_check(&pr[k]);
		/* The device may be leaving: traffic errors do not count. */
		progress(u, true);
	}
	printf("EVENT DEVICE_FATAL\n");
	fflush(stdout);
	device_gone = true;

	/* The SQs keep being written: on a writable ring, that shows. */
	end = now_ms() + GONE_WAIT_MS;
	while (now_ms() < end && !(pr[0].gone && pr[1].gone)) {
		for (k = 0; k < 2; k++)
			probe_check(&pr[k]);
		progress(u, true);
		for (i = 0; i < u->pairs; i++) {
			post_send(u, i);
			post_recv(u, i, 0);
		}
	}

	line = probe_teardown(&pr[0]) ?: probe_teardown(&pr[1]) ?:
	       teardown(u);
	if (line) {
		device_gone = false;
		FAIL("teardown after the device left failed at line %d: %s",
		     line, strerror(errno));
		return 1;
	}
	printf("CLOSED\n");
	return pr[0].garbage || pr[1].garbage;
}

int main(int argc, char **argv)
{
	struct probe probes[2] = { 0 };
	struct user u = { 0 };
	const char *mode;
	long last = now_ms();
	uint32_t msgs = 0;
	bool ready = false;
	int line, n;

	if (argc < 3) {
		fprintf(stderr, "usage: %s check|stream|rmmod|gone PAIRS [MSGS [DEPTH]]\n",
			argv[0]);
		return 2;
	}
	mode = argv[1];
	u.pairs = strtoul(argv[2], NULL, 0);
	if (argc > 3)
		msgs = strtoul(argv[3], NULL, 0);
	u.depth = argc > 4 ? strtoul(argv[4], NULL, 0) : DEPTH_DEFAULT;
	if (!u.pairs || u.pairs > 4096 || !u.depth || u.depth > 1024)
		return 2;

	line = setup(&u);
	if (line) {
		FAIL("setup failed at line %d: %s", line, strerror(errno));
		return 1;
	}

	/* Ready once every pair delivered its first message. */
	while (!ready) {
		n = progress(&u, false);
		if (n < 0)
			return 1;
		if (n)
			last = now_ms();
		else if (now_ms() - last > STALL_MS) {
			FAIL("no completion for %d ms", STALL_MS);
			return 1;
		}
		ready = all_delivered(&u, 1);
	}
	if (!strcmp(mode, "gone")) {
		line = probe_setup(&u, &probes[0], false) ?:
		       probe_setup(&u, &probes[1], true);
		if (line) {
			FAIL("wrapping the probe CQs failed at line %d: %s",
			     line, strerror(errno));
			return 1;
		}
	}
	printf("READY\n");
	fflush(stdout);

	if (!strcmp(mode, "rmmod"))
		return rmmod_mode(&u);
	if (!strcmp(mode, "gone"))
		return gone_mode(&u, probes);

	while (strcmp(mode, "check") || !all_delivered(&u, msgs)) {
		n = progress(&u, false);
		if (n < 0)
			return 1;
		if (n)
			last = now_ms();
		else if (now_ms() - last > STALL_MS) {
			FAIL("no completion for %d ms", STALL_MS);
			return 1;
		}
	}

	/* Let the sends in flight finish, then close. */
	line = teardown(&u);
	if (line) {
		FAIL("teardown failed at line %d: %s", line, strerror(errno));
		return 1;
	}
	printf("DONE %u pairs x %u messages verified\n", u.pairs, msgs);
	return 0;
}
