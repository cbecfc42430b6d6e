// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Asynchronous events and the failures behind them, provoked through the
 * driver's fault injection file (Documentation/hw/qhca-faults.rst):
 * /sys/kernel/debug/qhca/qhca0/inject.  Each test checks what a user of
 * libibverbs sees: the event (ibv_get_async_event) with its element, the
 * port and QP state, the completions, the data, and the port's hw
 * counters.
 *
 * Fault injection is a required feature: without the file every test
 * fails, none skips.  Every fixture brings the link back up and cancels
 * pending drops before and after its test, so that a test that fails or is
 * killed cannot poison the ones after it.
 */
#include <stdarg.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "rc_pair.h"

#define DEBUGFS			"/sys/kernel/debug"
#define DEBUGFS_MAGIC		0x64626720
#define INJECT			DEBUGFS "/qhca/" QHCA_IBDEV "/inject"
#define HW_COUNTERS		QHCA_SYSFS_IBDEV "/ports/1/hw_counters/"
#define PORT_SYSFS		QHCA_SYSFS_IBDEV "/ports/1/"

/* ib_port_phys_state values (IBTA 14.2.5.6). */
#define PHYS_DISABLED		3
#define PHYS_LINK_UP		5

/*
 * How long a test watches for an event or a receive that must not come.
 * An async event goes further than a CQE (RC_QUIET_MS): the device writes
 * it to its event queue in the same engine round as its cause, then
 * raises MSI-X through a bottom half of QEMU's main loop, and the driver's
 * interrupt handler and ib_uverbs hand it on to the async file; each hop
 * is an interrupt or a wake-up, not a timer, so milliseconds under TCG on
 * a loaded host, and 1 s leaves a wide margin.
 */
#define QUIET_MS		1000

#define MSG			64
#define SEED			0xa5e7
#define FILL			0x5a	/* receive buffers before a message */

/* How many bytes from buf on still hold FILL. */
static size_t fill_run(const uint8_t *buf, size_t len)
{
	size_t i;

	for (i = 0; i < len && buf[i] == FILL; i++)
		;
	return i;
}

/* ---- The inject file ----------------------------------------------- */

static char last_line[80];

/* debugfs is where the file lives; a bare guest may not have mounted it. */
static void mount_debugfs(void)
{
	struct statfs st;

	if (statfs(DEBUGFS, &st) || st.f_type != DEBUGFS_MAGIC)
		mount("debugfs", DEBUGFS, "debugfs", 0, NULL);
}

/*
 * Writes one line (a newline is added, as echo does) to the inject file
 * with one write().  Returns 0 when the write took the whole line, the
 * errno of write() when it failed, -errno when open() failed and -EIO for
 * a short write: a caller expecting EINVAL cannot mistake a missing file
 * for a refusal.
 */
static int inject(const char *fmt, ...)
{
	ssize_t n;
	va_list ap;
	int fd, len, err;

	va_start(ap, fmt);
	len = vsnprintf(last_line, sizeof(last_line) - 1, fmt, ap);
	va_end(ap);
	if (len < 0 || len > (int)sizeof(last_line) - 2)
		return -EMSGSIZE;	/* no line of the spec is this long */
	last_line[len++] = '\n';
	last_line[len] = '\0';

	fd = open(INJECT, O_WRONLY);
	if (fd < 0)
		return -errno;
	n = write(fd, last_line, len);
	err = n < 0 ? errno : n == len ? 0 : -EIO;
	close(fd);
	last_line[len - 1] = '\0';
	return err;
}

static const char *inject_err_str(int err)
{
	static char buf[64];

	if (err < 0)
		snprintf(buf, sizeof(buf), "open()/short write: %s",
			 strerror(-err));
	else
		snprintf(buf, sizeof(buf), "write(): %s", strerror(err));
	return buf;
}

/* The line must be accepted whole. */
#define INJECT_OK(...) do {						\
	int __err = inject(__VA_ARGS__);				\
									\
	ASSERT_EQ(0, __err) TH_LOG("\"%s\" -> %s", last_line,		\
				   inject_err_str(__err));		\
} while (0)

/* The line must be refused by write() with errno err. */
#define INJECT_FAILS(err, ...) do {					\
	int __err = inject(__VA_ARGS__);				\
									\
	EXPECT_EQ((err), __err) TH_LOG("\"%s\" -> %s, expected %s",	\
				       last_line,			\
				       __err ? inject_err_str(__err) :	\
					       "accepted",		\
				       strerror(err));			\
} while (0)

/* The feature is required: no file is a failure. */
static void require_inject(struct __test_metadata *_metadata)
{
	mount_debugfs();
	ASSERT_EQ(0, access(INJECT, W_OK))
		TH_LOG("%s: %s: the driver has no fault injection", INJECT,
		       strerror(errno));
}

/* The port's state as sysfs prints it, e.g. "4: ACTIVE". */
static void port_sysfs(const char *file, char *buf, size_t size)
{
	char path[128];

	snprintf(path, sizeof(path), PORT_SYSFS "%s", file);
	if (qhca_read_sysfs_str(path, buf, size) < 0)
		snprintf(buf, size, "(no %.16s)", file);
}

/*
 * The link up, no drops pending, the port ACTIVE: where every test starts
 * and what it leaves.  Succeeds when the link already is up.
 */
static void restore_link(struct __test_metadata *_metadata)
{
	long deadline = rc_now_ms() + 5000;
	char state[32];

	INJECT_OK("drop 0");
	INJECT_OK("link_up");
	do {
		port_sysfs("state", state, sizeof(state));
		if (!strcmp(state, "4: ACTIVE"))
			return;
		usleep(10000);
	} while (rc_now_ms() < deadline);
	ASSERT_STREQ("4: ACTIVE", state);
}

/*
 * Where every test here starts: injection available, the link up with no
 * drops pending, and a pair of QPs of opts (NULL: the defaults), in RESET.
 */
static void fault_pair_open(struct __test_metadata *_metadata,
			    struct rc_pair *p, const struct rc_opts *opts)
{
	struct rc_opts def;

	require_inject(_metadata);
	restore_link(_metadata);
	if (!opts) {
		rc_default_opts(&def);
		opts = &def;
	}
	rc_pair_open(_metadata, p, opts);
}

/*
 * And where each ends: the link up again, buffers a and b (either may be
 * NULL) and the pair released, the device as the test found it.
 */
static void fault_pair_close(struct __test_metadata *_metadata,
			     struct rc_pair *p, struct rc_buf *a,
			     struct rc_buf *b)
{
	restore_link(_metadata);
	if (a)
		rc_buf_free(_metadata, a);
	if (b)
		rc_buf_free(_metadata, b);
	rc_pair_close(_metadata, p);
}

/* ---- Hardware counters --------------------------------------------- */

struct counters {
	long retries;
	long wire_drops;
	long link_downed;
	long faults_injected;
	long err_retry_exc;
};

static const char *const counter_name[] = {
	"retries", "wire_drops", "link_downed", "faults_injected",
	"err_retry_exc",
};

/* Reads the port's counters, with everything that happened before. */
static void read_counters(struct __test_metadata *_metadata,
			  struct counters *c)
{
	long *val[] = {
		&c->retries, &c->wire_drops, &c->link_downed,
		&c->faults_injected, &c->err_retry_exc,
	};
	unsigned int i;

	qhca_hw_counters_expire();
	for (i = 0; i < ARRAY_SIZE(val); i++) {
		*val[i] = qhca_hw_counter(counter_name[i]);
		ASSERT_LE(0, *val[i]) TH_LOG("%s: %s", counter_name[i],
					     strerror(-*val[i]));
	}
}

/* ---- Async events -------------------------------------------------- */

/* The next async event within ms, copied and acknowledged. */
static bool next_event(struct ibv_context *ctx, long ms,
		       struct ibv_async_event *ev)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };

	if (poll(&pfd, 1, ms) != 1 || ibv_get_async_event(ctx, ev))
		return false;
	ibv_ack_async_event(ev);
	return true;
}

/* An event we wait for: its type and element (port number or object). */
struct want {
	enum ibv_event_type type;
	const void *elem;
	int port;
	bool seen;
};

static bool is_port_event(enum ibv_event_type type)
{
	switch (type) {
	case IBV_EVENT_PORT_ERR:
	case IBV_EVENT_PORT_ACTIVE:
	case IBV_EVENT_LID_CHANGE:
	case IBV_EVENT_PKEY_CHANGE:
	case IBV_EVENT_SM_CHANGE:
	case IBV_EVENT_CLIENT_REREGISTER:
	case IBV_EVENT_GID_CHANGE:
		return true;
	default:
		return false;
	}
}

static bool event_matches(const struct ibv_async_event *ev,
			  const struct want *w)
{
	if (ev->event_type != w->type)
		return false;
	switch (w->type) {
	case IBV_EVENT_CQ_ERR:
		return ev->element.cq == w->elem;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		return ev->element.srq == w->elem;
	default:
		if (is_port_event(w->type))
			return ev->element.port_num == w->port;
		return ev->element.qp == w->elem;
	}
}

static void log_event(struct __test_metadata *_metadata,
		      const struct ibv_async_event *ev, const char *what)
{
	if (is_port_event(ev->event_type))
		TH_LOG("%s event: %s, port %d", what,
		       ibv_event_type_str(ev->event_type),
		       ev->element.port_num);
	else
		TH_LOG("%s event: %s, element %p", what,
		       ibv_event_type_str(ev->event_type), ev->element.qp);
}

/*
 * Waits up to RC_POLL_MS for every event of w[0..n-1], in any order.
 * Another event on the way fails the test: these tests know everything
 * their context should hear.
 */
static void expect_events(struct __test_metadata *_metadata,
			  struct ibv_context *ctx, struct want *w, int n)
{
	long deadline = rc_now_ms() + RC_POLL_MS;
	struct ibv_async_event ev;
	int left = n, i;

	while (left > 0 && rc_now_ms() < deadline) {
		if (!next_event(ctx, deadline - rc_now_ms(), &ev))
			break;
		for (i = 0; i < n; i++)
			if (!w[i].seen && event_matches(&ev, &w[i]))
				break;
		if (i == n) {
			log_event(_metadata, &ev, "unexpected");
			EXPECT_STREQ("none other",
				     ibv_event_type_str(ev.event_type));
			continue;
		}
		w[i].seen = true;
		left--;
	}
	for (i = 0; i < n; i++)
		EXPECT_TRUE(w[i].seen)
			TH_LOG("no %s (%s %p / port %d) within %d ms",
			       ibv_event_type_str(w[i].type),
			       is_port_event(w[i].type) ? "port" : "element",
			       w[i].elem, w[i].port, RC_POLL_MS);
}

static void expect_event(struct __test_metadata *_metadata,
			 struct ibv_context *ctx, enum ibv_event_type type,
			 const void *elem)
{
	struct want w = { .type = type, .elem = elem, .port = 1 };

	expect_events(_metadata, ctx, &w, 1);
}

/* No event at all for QUIET_MS. */
static void expect_no_event(struct __test_metadata *_metadata,
			    struct ibv_context *ctx)
{
	struct ibv_async_event ev;

	if (next_event(ctx, QUIET_MS, &ev)) {
		log_event(_metadata, &ev, "unexpected");
		EXPECT_STREQ("no event", ibv_event_type_str(ev.event_type));
	}
}

static void expect_port(struct __test_metadata *_metadata,
			struct ibv_context *ctx, enum ibv_port_state state,
			uint8_t phys)
{
	static const char *const sysfs_state[] = {
		[IBV_PORT_DOWN] = "1: DOWN", [IBV_PORT_ACTIVE] = "4: ACTIVE",
	};
	static const char *const sysfs_phys[] = {
		[PHYS_DISABLED] = "3: Disabled", [PHYS_LINK_UP] = "5: LinkUp",
	};
	struct ibv_port_attr attr;
	char buf[32];

	memset(&attr, 0xa5, sizeof(attr));
	ASSERT_EQ(0, ibv_query_port(ctx, 1, &attr));
	EXPECT_EQ(state, attr.state) TH_LOG("port state %s",
					    ibv_port_state_str(attr.state));
	EXPECT_EQ(phys, attr.phys_state);
	port_sysfs("state", buf, sizeof(buf));
	EXPECT_STREQ(sysfs_state[state], buf);
	port_sysfs("phys_state", buf, sizeof(buf));
	EXPECT_STREQ(sysfs_phys[phys], buf);
}

static void link_down(struct __test_metadata *_metadata,
		      struct ibv_context *ctx)
{
	INJECT_OK("link_down");
	expect_event(_metadata, ctx, IBV_EVENT_PORT_ERR, NULL);
	expect_port(_metadata, ctx, IBV_PORT_DOWN, PHYS_DISABLED);
}

static void link_up(struct __test_metadata *_metadata,
		    struct ibv_context *ctx)
{
	INJECT_OK("link_up");
	expect_event(_metadata, ctx, IBV_EVENT_PORT_ACTIVE, NULL);
	expect_port(_metadata, ctx, IBV_PORT_ACTIVE, PHYS_LINK_UP);
}

/* ---- The device's CQ and SRQ numbers ------------------------------- */

/*
 * The inject file takes the device's CQ and SRQ numbers.  libibverbs has
 * no call that returns a CQ's number and ibv_get_srq_num() gives only an
 * XRC SRQ's; `rdma res show cq|srq -dd` lists them, as the driver
 * attributes cqn and srqn ("drv_cqn" and "drv_srqn" in JSON; the plain
 * "cqn" and "srqn" there are ib_core's own tracking ids).  That is what a
 * user has, so that is what the tests use.
 */

/* The number after "key": in the JSON object [obj, end), or -1. */
static long json_long(const char *obj, const char *end, const char *key)
{
	char pat[48];
	const char *at;
	size_t n;

	n = snprintf(pat, sizeof(pat), "\"%s\":", key);
	for (at = obj; at + n <= end; at++)
		if (!memcmp(at, pat, n))
			return strtol(at + n, NULL, 10);
	return -1;
}

/*
 * The value of key for the one object of kind ("cq", "srq") that this
 * process holds on qhca0 (each test runs in a process of its own) and,
 * when cqe >= 0, that has cqe entries.  Returns it, or -1 if not exactly
 * one object matches.
 */
static long res_hw_number(struct __test_metadata *_metadata,
			  const char *kind, const char *key, long cqe)
{
	char cmd[128], out[8192];
	const char *obj, *end;
	long val = -1;
	int found = 0;
	size_t len;
	FILE *f;

	snprintf(cmd, sizeof(cmd),
		 "rdma -j -dd res show %s dev " QHCA_IBDEV " pid %d 2>&1",
		 kind, getpid());
	f = popen(cmd, "r");
	if (!f)
		return -1;
	len = fread(out, 1, sizeof(out) - 1, f);
	pclose(f);
	out[len] = '\0';

	for (obj = strchr(out, '{'); obj; obj = strchr(end, '{')) {
		end = strchr(obj, '}');
		if (!end)
			break;
		if (json_long(obj, end, "pid") != getpid())
			continue;
		if (cqe >= 0 && json_long(obj, end, "cqe") != cqe)
			continue;
		val = json_long(obj, end, key);
		found++;
	}
	if (found != 1 || val <= 0) {
		TH_LOG("%s: %d objects of pid %d%s, %s %ld; it printed:\n%s",
		       cmd, found, getpid(), cqe >= 0 ? " and that size" : "",
		       key, val, out);
		return -1;
	}
	return val;
}

/* The CQ's device number; the process must hold no other CQ of its size. */
static long cq_number(struct __test_metadata *_metadata, struct ibv_cq *cq)
{
	return res_hw_number(_metadata, "cq", "drv_cqn", cq->cqe);
}

/* The SRQ's device number; the process must hold no other SRQ. */
static long srq_number(struct __test_metadata *_metadata)
{
	return res_hw_number(_metadata, "srq", "drv_srqn", -1);
}

/* ---- Link down and up ---------------------------------------------- */

FIXTURE(link)
{
	struct rc_pair p;
};

FIXTURE_SETUP(link)
{
	fault_pair_open(_metadata, &self->p, NULL);
}

FIXTURE_TEARDOWN(link)
{
	fault_pair_close(_metadata, &self->p, NULL, NULL);
}

TEST_F(link, inject_file_is_root_only)
{
	struct stat st;

	ASSERT_EQ(0, stat(INJECT, &st));
	EXPECT_TRUE(S_ISREG(st.st_mode));
	EXPECT_EQ(0U, st.st_uid);
	EXPECT_EQ(0U, st.st_mode & 0077) TH_LOG("mode %o",
						st.st_mode & 07777);
}

/*
 * link_down: PORT_ERR for port 1, the port DOWN and Disabled; link_up:
 * PORT_ACTIVE, the port ACTIVE and LinkUp again.  The transition and both
 * faults are counted.
 */
TEST_F(link, down_and_up)
{
	struct ibv_context *ctx = self->p.ctx;
	struct counters c0, c1;

	expect_port(_metadata, ctx, IBV_PORT_ACTIVE, PHYS_LINK_UP);
	read_counters(_metadata, &c0);

	link_down(_metadata, ctx);
	expect_no_event(_metadata, ctx);
	read_counters(_metadata, &c1);
	EXPECT_EQ(c0.link_downed + 1, c1.link_downed);
	EXPECT_EQ(c0.faults_injected + 1, c1.faults_injected);

	link_up(_metadata, ctx);
	expect_no_event(_metadata, ctx);
	read_counters(_metadata, &c1);
	EXPECT_EQ(c0.link_downed + 1, c1.link_downed);
	EXPECT_EQ(c0.faults_injected + 2, c1.faults_injected);
	EXPECT_EQ(c0.wire_drops, c1.wire_drops);
}

/*
 * A link already down (or up) stays so: the command succeeds (and counts
 * in FAULTS_INJECTED), but there is no event and no transition.
 */
TEST_F(link, twice_gives_one_event)
{
	struct ibv_context *ctx = self->p.ctx;
	struct counters c0, c1;

	read_counters(_metadata, &c0);
	link_down(_metadata, ctx);
	INJECT_OK("link_down");
	expect_no_event(_metadata, ctx);
	expect_port(_metadata, ctx, IBV_PORT_DOWN, PHYS_DISABLED);
	read_counters(_metadata, &c1);
	EXPECT_EQ(c0.link_downed + 1, c1.link_downed);

	link_up(_metadata, ctx);
	INJECT_OK("link_up");
	expect_no_event(_metadata, ctx);
	expect_port(_metadata, ctx, IBV_PORT_ACTIVE, PHYS_LINK_UP);
	read_counters(_metadata, &c1);
	EXPECT_EQ(c0.link_downed + 1, c1.link_downed);
	/* Each of the four commands succeeded. */
	EXPECT_EQ(c0.faults_injected + 4, c1.faults_injected);
}

/* Every context of the device hears of the port, not only the first. */
TEST_F(link, every_context_hears)
{
	struct ibv_device *dev;
	struct ibv_context *other;
	struct ibv_device **list;

	QHCA_ASSERT_DEVICE(list, dev);
	other = ibv_open_device(dev);
	ASSERT_NE(NULL, other);

	INJECT_OK("link_down");
	expect_event(_metadata, self->p.ctx, IBV_EVENT_PORT_ERR, NULL);
	expect_event(_metadata, other, IBV_EVENT_PORT_ERR, NULL);
	INJECT_OK("link_up");
	expect_event(_metadata, self->p.ctx, IBV_EVENT_PORT_ACTIVE, NULL);
	expect_event(_metadata, other, IBV_EVENT_PORT_ACTIVE, NULL);

	EXPECT_EQ(0, ibv_close_device(other));
	ibv_free_device_list(list);
}

/* ---- RC while the link is down ------------------------------------- */

FIXTURE(rc_down)
{
	struct rc_pair p;
	struct rc_buf local;
	struct rc_buf remote;
};

FIXTURE_SETUP(rc_down)
{
	struct rc_opts opts;

	rc_default_opts(&opts);
	opts.timeout = 10;		/* 4 ms */
	opts.retry_cnt = 1;
	fault_pair_open(_metadata, &self->p, &opts);
	rc_pair_connect(_metadata, &self->p);
	rc_buf_alloc(_metadata, &self->local, self->p.pd, 4096,
		     RC_ACCESS_ALL);
	rc_buf_alloc(_metadata, &self->remote, self->p.pd, 4096,
		     RC_ACCESS_ALL);
}

FIXTURE_TEARDOWN(rc_down)
{
	fault_pair_close(_metadata, &self->p, &self->local, &self->remote);
}

/*
 * A connected pair moving data, checked byte for byte: an RDMA WRITE and
 * a SEND from QP 0 to QP 1.
 */
static void rc_check_traffic(struct __test_metadata *_metadata,
			     struct rc_pair *p, uint32_t seed)
{
	struct rc_buf src, dst;
	struct ibv_sge sge;
	struct ibv_wc wc;

	rc_buf_alloc(_metadata, &src, p->pd, 8192, RC_ACCESS_ALL);
	rc_buf_alloc(_metadata, &dst, p->pd, 8192, RC_ACCESS_ALL);

	rc_fill(src.mem, 3000, seed);
	rc_fill(src.mem + 4096, 1000, seed + 7);
	rc_prepare_dst(&dst, 100, 3000, seed);
	sge = rc_sge(&src, 0, 3000);
	ASSERT_EQ(0, rc_post(p->s[0].qp, 1, IBV_WR_RDMA_WRITE,
			     IBV_SEND_SIGNALED, &sge, 1,
			     (uintptr_t)dst.mem + 100, dst.mr->rkey));
	RC_WAIT_WC(p->s[0].scq, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	RC_EXPECT_DELIVERED(&dst, 100, 3000, seed);

	rc_prepare_dst(&dst, 5000, 1000, seed + 7);
	sge = rc_sge(&dst, 5000, 1000);
	ASSERT_EQ(0, rc_post_recv(p->s[1].qp, 2, &sge, 1));
	sge = rc_sge(&src, 4096, 1000);
	ASSERT_EQ(0, rc_post(p->s[0].qp, 3, IBV_WR_SEND, IBV_SEND_SIGNALED,
			     &sge, 1, 0, 0));
	RC_WAIT_WC(p->s[0].scq, 3, IBV_WC_SUCCESS, IBV_WC_SEND);
	rc_wait_wc(_metadata, p->s[1].rcq, &wc);
	RC_EXPECT_WC(wc, 2, IBV_WC_SUCCESS, IBV_WC_RECV);
	EXPECT_EQ(1000U, wc.byte_len);
	RC_EXPECT_DELIVERED(&dst, 5000, 1000, seed + 7);

	rc_buf_free(_metadata, &src);
	rc_buf_free(_metadata, &dst);
}

/*
 * The requester retries retry_cnt times into a dead wire, then completes
 * with RETRY_EXC_ERR; the QP is in ERR and every later WQE flushes.
 * Nothing reached the responder.  Once the link is up, a new pair works.
 */
TEST_F(rc_down, write_retry_exceeded)
{
	struct rc_pair *p = &self->p, q;
	struct counters c0, c1, c2;
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct rc_opts opts;

	rc_fill(self->local.mem, MSG, SEED);
	rc_prepare_dst(&self->remote, 256, MSG, SEED);
	read_counters(_metadata, &c0);
	link_down(_metadata, p->ctx);

	sge = rc_sge(&self->local, 0, MSG);
	ASSERT_EQ(0, rc_post(p->s[0].qp, 1, IBV_WR_RDMA_WRITE,
			     IBV_SEND_SIGNALED, &sge, 1,
			     (uintptr_t)self->remote.mem + 256,
			     self->remote.mr->rkey));
	ASSERT_EQ(0, rc_post(p->s[0].qp, 2, IBV_WR_RDMA_WRITE,
			     IBV_SEND_SIGNALED, &sge, 1,
			     (uintptr_t)self->remote.mem + 256,
			     self->remote.mr->rkey));
	ASSERT_EQ(0, rc_post(p->s[0].qp, 3, IBV_WR_SEND, 0, &sge, 1, 0, 0));

	rc_wait_wc(_metadata, p->s[0].scq, &wc);
	RC_EXPECT_WC(wc, 1, IBV_WC_RETRY_EXC_ERR, -1);
	EXPECT_EQ(p->s[0].qp->qp_num, wc.qp_num);
	RC_WAIT_WC(p->s[0].scq, 2, IBV_WC_WR_FLUSH_ERR, -1);
	/* Errors complete whether signaled or not. */
	RC_WAIT_WC(p->s[0].scq, 3, IBV_WC_WR_FLUSH_ERR, -1);
	EXPECT_EQ(IBV_QPS_ERR, rc_qp_state(p->s[0].qp));

	ASSERT_EQ(0, rc_post(p->s[0].qp, 4, IBV_WR_RDMA_WRITE,
			     IBV_SEND_SIGNALED, &sge, 1,
			     (uintptr_t)self->remote.mem + 256,
			     self->remote.mr->rkey));
	RC_WAIT_WC(p->s[0].scq, 4, IBV_WC_WR_FLUSH_ERR, -1);
	rc_expect_no_wc(_metadata, p->s[0].scq);

	/* Nothing crossed: the responder is untouched and still in RTS. */
	RC_EXPECT_UNTOUCHED(&self->remote, 256, MSG, SEED);
	EXPECT_EQ(IBV_QPS_RTS, rc_qp_state(p->s[1].qp));
	rc_expect_no_wc(_metadata, p->s[1].rcq);

	/*
	 * One timeout, one retry (retry_cnt 1).  WRITE 1's packet went on
	 * the wire twice and was dropped twice; the requester may have had
	 * the other two single-packet WQEs in flight as well, each sent at
	 * most as often.
	 */
	read_counters(_metadata, &c1);
	EXPECT_EQ(c0.retries + 1, c1.retries);
	EXPECT_LE(c0.wire_drops + 2, c1.wire_drops);
	EXPECT_GE(c0.wire_drops + 2 * 3, c1.wire_drops);
	EXPECT_EQ(c0.err_retry_exc + 1, c1.err_retry_exc);
	EXPECT_EQ(c0.link_downed + 1, c1.link_downed);

	link_up(_metadata, p->ctx);

	rc_default_opts(&opts);
	memset(&q, 0, sizeof(q));
	rc_pair_open(_metadata, &q, &opts);
	rc_pair_connect(_metadata, &q);
	rc_check_traffic(_metadata, &q, SEED + 100);
	rc_pair_close(_metadata, &q);

	read_counters(_metadata, &c2);
	EXPECT_EQ(c1.wire_drops, c2.wire_drops);
	EXPECT_EQ(c1.err_retry_exc, c2.err_retry_exc);
}

/* The link coming back does not revive a QP that gave up. */
TEST_F(rc_down, qp_stays_in_err_after_link_up)
{
	struct rc_pair *p = &self->p;
	struct ibv_sge sge = rc_sge(&self->local, 0, MSG);

	link_down(_metadata, p->ctx);
	ASSERT_EQ(0, rc_post(p->s[0].qp, 1, IBV_WR_RDMA_WRITE,
			     IBV_SEND_SIGNALED, &sge, 1,
			     (uintptr_t)self->remote.mem, self->remote.mr->rkey));
	RC_WAIT_WC(p->s[0].scq, 1, IBV_WC_RETRY_EXC_ERR, -1);
	link_up(_metadata, p->ctx);
	EXPECT_EQ(IBV_QPS_ERR, rc_qp_state(p->s[0].qp));
	ASSERT_EQ(0, rc_post(p->s[0].qp, 2, IBV_WR_RDMA_WRITE,
			     IBV_SEND_SIGNALED, &sge, 1,
			     (uintptr_t)self->remote.mem, self->remote.mr->rkey));
	RC_WAIT_WC(p->s[0].scq, 2, IBV_WC_WR_FLUSH_ERR, -1);
}

/* ---- UD while the link is down ------------------------------------- */

#define UD_QKEY		0x11111111U
#define UD_GRH		((unsigned int)QHCA_UD_GRH_SIZE)

FIXTURE(ud_down)
{
	struct rc_pair p;
	struct rc_buf buf[2];
	struct ibv_ah *ah;
};

static int ud_to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qkey = UD_QKEY,
	};
	int ret;

	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_QKEY);
	if (ret)
		return ret;
	ret = rc_to_state(qp, IBV_QPS_RTR);
	if (ret)
		return ret;
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 0;
	return ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

FIXTURE_SETUP(ud_down)
{
	struct ibv_ah_attr aa = { .port_num = 1 };
	struct rc_opts opts;
	int i;

	rc_default_opts(&opts);
	opts.qp_type = IBV_QPT_UD;
	fault_pair_open(_metadata, &self->p, &opts);
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, ud_to_rts(self->p.s[i].qp));
		rc_buf_alloc(_metadata, &self->buf[i], self->p.pd, 4096,
			     RC_ACCESS_ALL);
	}
	aa.dlid = self->p.pattr.lid;
	self->ah = ibv_create_ah(self->p.pd, &aa);
	ASSERT_NE(NULL, self->ah) TH_LOG("ibv_create_ah: %s", strerror(errno));
}

FIXTURE_TEARDOWN(ud_down)
{
	if (self->ah)
		EXPECT_EQ(0, ibv_destroy_ah(self->ah));
	fault_pair_close(_metadata, &self->p, &self->buf[0], &self->buf[1]);
}

static int ud_send(FIXTURE_DATA(ud_down) *self, uint64_t wr_id,
		   uint32_t len, uint32_t seed)
{
	struct ibv_sge sge = rc_sge(&self->buf[0], 0, len);
	struct ibv_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad = NULL;

	rc_fill(self->buf[0].mem, len, seed);
	wr.wr.ud.ah = self->ah;
	wr.wr.ud.remote_qpn = self->p.s[1].qp->qp_num;
	wr.wr.ud.remote_qkey = UD_QKEY;
	return ibv_post_send(self->p.s[0].qp, &wr, &bad);
}

/*
 * UD has no acknowledgements: the send completes successfully at the
 * sender and the datagram is lost on the wire.  The receive WQE stays
 * posted and takes the next datagram once the link is back.
 */
TEST_F(ud_down, send_is_lost)
{
	struct rc_pair *p = &self->p;
	struct counters c0, c1;
	struct ibv_sge sge;
	struct ibv_wc wc;

	memset(self->buf[1].mem, FILL, 4096);
	sge = rc_sge(&self->buf[1], 0, UD_GRH + 1024);
	ASSERT_EQ(0, rc_post_recv(p->s[1].qp, 500, &sge, 1));
	read_counters(_metadata, &c0);
	link_down(_metadata, p->ctx);

	ASSERT_EQ(0, ud_send(self, 1, 1000, SEED + 1));
	RC_WAIT_WC(p->s[0].scq, 1, IBV_WC_SUCCESS, IBV_WC_SEND);
	EXPECT_EQ(0, rc_poll(p->s[1].rcq, &wc, 1, QUIET_MS))
		TH_LOG("a datagram crossed a link that is down: %s",
		       ibv_wc_status_str(wc.status));
	read_counters(_metadata, &c1);
	EXPECT_EQ(c0.wire_drops + 1, c1.wire_drops);
	EXPECT_EQ(IBV_QPS_RTS, rc_qp_state(p->s[0].qp));

	link_up(_metadata, p->ctx);
	ASSERT_EQ(0, ud_send(self, 2, 700, SEED + 2));
	RC_WAIT_WC(p->s[0].scq, 2, IBV_WC_SUCCESS, IBV_WC_SEND);
	rc_wait_wc(_metadata, p->s[1].rcq, &wc);
	RC_EXPECT_WC(wc, 500, IBV_WC_SUCCESS, IBV_WC_RECV);
	EXPECT_EQ(UD_GRH + 700, wc.byte_len);
	EXPECT_EQ(p->s[0].qp->qp_num, wc.src_qp);
	RC_EXPECT_PATTERN(self->buf[1].mem + UD_GRH, 700, SEED + 2);
	/* Nothing of the longer lost datagram past the new one. */
	EXPECT_EQ(4096 - UD_GRH - 700,
		  fill_run(self->buf[1].mem + UD_GRH + 700,
			   4096 - UD_GRH - 700));
	rc_expect_no_wc(_metadata, p->s[1].rcq);
}

/* ---- UC while the link is down, or a packet lost ------------------- */

FIXTURE(uc_lost)
{
	struct rc_pair p;
	struct rc_buf buf[2];
};

/* UC's transitions, path MTU 256: a 1000-byte message is 4 packets. */
static int uc_connect(struct rc_pair *p, struct ibv_qp *qp, uint32_t dest)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
	};
	int ret;

	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (ret)
		return ret;
	attr.qp_state = IBV_QPS_RTR;
	attr.path_mtu = IBV_MTU_256;
	attr.dest_qp_num = dest;
	attr.ah_attr.dlid = p->pattr.lid;
	attr.ah_attr.port_num = 1;
	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_AV |
			    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			    IBV_QP_RQ_PSN);
	if (ret)
		return ret;
	attr.qp_state = IBV_QPS_RTS;
	return ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

FIXTURE_SETUP(uc_lost)
{
	struct rc_pair *p = &self->p;
	struct rc_opts opts;
	int i;

	rc_default_opts(&opts);
	opts.qp_type = IBV_QPT_UC;
	fault_pair_open(_metadata, p, &opts);
	ASSERT_EQ(0, uc_connect(p, p->s[0].qp, p->s[1].qp->qp_num));
	ASSERT_EQ(0, uc_connect(p, p->s[1].qp, p->s[0].qp->qp_num));
	for (i = 0; i < 2; i++)
		rc_buf_alloc(_metadata, &self->buf[i], p->pd, 4096,
			     RC_ACCESS_ALL);
}

FIXTURE_TEARDOWN(uc_lost)
{
	fault_pair_close(_metadata, &self->p, &self->buf[0], &self->buf[1]);
}

static int uc_send(FIXTURE_DATA(uc_lost) *self, uint64_t wr_id,
		   uint32_t len, uint32_t seed)
{
	struct ibv_sge sge = rc_sge(&self->buf[0], 0, len);

	rc_fill(self->buf[0].mem, len, seed);
	return rc_post(self->p.s[0].qp, wr_id, IBV_WR_SEND, IBV_SEND_SIGNALED,
		       &sge, 1, 0, 0);
}

/*
 * A 1000-byte SEND (4 packets) that does not arrive whole: the sender
 * completes it successfully, the receiver writes no CQE and keeps its
 * receive WQE, which the next message (3 packets, at a later PSN) fills.
 * How the message is lost is the variant's: the link down (all 4 packets
 * dropped) or drop 1 (its first packet: the receiver drops the rest,
 * counted once in RX_DROPS).
 */
FIXTURE_VARIANT(uc_lost)
{
	bool link_down;
	long wire_drops;
	long rx_drops;
};

FIXTURE_VARIANT_ADD(uc_lost, link_down)
{
	.link_down = true,
	.wire_drops = 4,
	.rx_drops = 0,
};

FIXTURE_VARIANT_ADD(uc_lost, first_packet_dropped)
{
	.link_down = false,
	.wire_drops = 1,
	.rx_drops = 1,
};

TEST_F(uc_lost, send_completes_and_is_lost)
{
	struct rc_pair *p = &self->p;
	struct counters c0, c1;
	long rx0, rx1;
	struct ibv_sge sge;
	struct ibv_wc wc;

	memset(self->buf[1].mem, FILL, 4096);
	sge = rc_sge(&self->buf[1], 0, 1024);
	ASSERT_EQ(0, rc_post_recv(p->s[1].qp, 500, &sge, 1));
	read_counters(_metadata, &c0);
	rx0 = qhca_read_sysfs_long(HW_COUNTERS "rx_drops");
	if (variant->link_down)
		link_down(_metadata, p->ctx);
	else
		INJECT_OK("drop 1");

	ASSERT_EQ(0, uc_send(self, 1, 1000, SEED + 1));
	RC_WAIT_WC(p->s[0].scq, 1, IBV_WC_SUCCESS, IBV_WC_SEND);
	/*
	 * The fence comes below: the next message lands in this same
	 * receive, so this one never did.
	 */
	EXPECT_EQ(0, rc_poll(p->s[1].rcq, &wc, 1, QUIET_MS))
		TH_LOG("a message arrived though lost: wr_id %#llx status %s",
		       (unsigned long long)wc.wr_id,
		       ibv_wc_status_str(wc.status));
	read_counters(_metadata, &c1);
	rx1 = qhca_read_sysfs_long(HW_COUNTERS "rx_drops");
	EXPECT_EQ(c0.wire_drops + variant->wire_drops, c1.wire_drops);
	EXPECT_EQ(rx0 + variant->rx_drops, rx1);
	EXPECT_EQ(IBV_QPS_RTS, rc_qp_state(p->s[0].qp));
	EXPECT_EQ(IBV_QPS_RTS, rc_qp_state(p->s[1].qp));

	if (variant->link_down)
		link_up(_metadata, p->ctx);
	ASSERT_EQ(0, uc_send(self, 2, 700, SEED + 2));
	RC_WAIT_WC(p->s[0].scq, 2, IBV_WC_SUCCESS, IBV_WC_SEND);
	rc_wait_wc(_metadata, p->s[1].rcq, &wc);
	RC_EXPECT_WC(wc, 500, IBV_WC_SUCCESS, IBV_WC_RECV);
	EXPECT_EQ(700U, wc.byte_len);
	RC_EXPECT_PATTERN(self->buf[1].mem, 700, SEED + 2);
	EXPECT_EQ(4096U - 700, fill_run(self->buf[1].mem + 700, 4096 - 700));
	rc_expect_no_wc(_metadata, p->s[1].rcq);
}

/* ---- Packets dropped during an RC stream --------------------------- */

#define STREAM_MSGS	32
#define STREAM_SLOT	4096

struct stream {
	struct rc_pair p;
	struct rc_buf src;
	struct rc_buf dst;
};

static void stream_setup(struct __test_metadata *_metadata,
			 struct stream *st)
{
	struct rc_opts opts;

	rc_default_opts(&opts);
	/*
	 * Messages of 15 or 16 packets: a retransmission resends a whole
	 * message, so that 50 drops cost a few retries, well within
	 * retry_cnt, wherever they fall.
	 */
	opts.path_mtu = IBV_MTU_256;
	/*
	 * 67 ms: long enough that a host busy elsewhere does not stall the
	 * engine into a retry of its own, which drop_count would count.
	 */
	opts.timeout = 14;
	opts.retry_cnt = 7;
	fault_pair_open(_metadata, &st->p, &opts);
	rc_pair_connect(_metadata, &st->p);
	rc_buf_alloc(_metadata, &st->src, st->p.pd,
		     STREAM_MSGS * STREAM_SLOT, RC_ACCESS_ALL);
	rc_buf_alloc(_metadata, &st->dst, st->p.pd,
		     STREAM_MSGS * STREAM_SLOT, RC_ACCESS_ALL);
}

static void stream_teardown(struct __test_metadata *_metadata,
			    struct stream *st)
{
	fault_pair_close(_metadata, &st->p, &st->src, &st->dst);
}

static uint32_t stream_len(int i)
{
	return STREAM_SLOT - 13 * i;
}

/*
 * STREAM_MSGS SENDs posted at once: every one must complete successfully
 * in order at both ends and land whole in its receive buffer, nothing
 * written past it.
 */
static void rc_stream(struct __test_metadata *_metadata, struct stream *st,
		      uint32_t seed)
{
	struct rc_pair *p = &st->p;
	struct ibv_wc wc[STREAM_MSGS];
	struct ibv_sge sge;
	int i, got, n;

	memset(st->dst.mem, FILL, st->dst.size);
	for (i = 0; i < STREAM_MSGS; i++) {
		sge = rc_sge(&st->dst, i * STREAM_SLOT, STREAM_SLOT);
		ASSERT_EQ(0, rc_post_recv(p->s[1].qp, 1000 + i, &sge, 1));
		rc_fill(st->src.mem + i * STREAM_SLOT, stream_len(i),
			seed + i);
	}
	for (i = 0; i < STREAM_MSGS; i++) {
		sge = rc_sge(&st->src, i * STREAM_SLOT, stream_len(i));
		ASSERT_EQ(0, rc_post(p->s[0].qp, i, IBV_WR_SEND,
				     IBV_SEND_SIGNALED, &sge, 1, 0, 0));
	}

	for (got = 0; got < STREAM_MSGS; got += n) {
		n = rc_poll(p->s[0].scq, wc + got, STREAM_MSGS - got,
			    RC_POLL_MS);
		ASSERT_LT(0, n) TH_LOG("%d of %d sends completed", got,
				       STREAM_MSGS);
	}
	for (i = 0; i < STREAM_MSGS; i++)
		RC_EXPECT_WC(wc[i], i, IBV_WC_SUCCESS, IBV_WC_SEND);

	for (got = 0; got < STREAM_MSGS; got += n) {
		n = rc_poll(p->s[1].rcq, wc + got, STREAM_MSGS - got,
			    RC_POLL_MS);
		ASSERT_LT(0, n) TH_LOG("%d of %d receives completed", got,
				       STREAM_MSGS);
	}
	for (i = 0; i < STREAM_MSGS; i++) {
		uint8_t *slot = st->dst.mem + i * STREAM_SLOT;
		uint32_t len = stream_len(i);
		long at;

		RC_EXPECT_WC(wc[i], 1000 + i, IBV_WC_SUCCESS, IBV_WC_RECV);
		EXPECT_EQ(len, wc[i].byte_len) TH_LOG("message %d", i);
		at = rc_mismatch(slot, len, seed + i, false);
		EXPECT_EQ(-1, at) TH_LOG("message %d: byte %ld of %u differs",
					 i, at, len);
		EXPECT_EQ(STREAM_SLOT - len, fill_run(slot + len,
						      STREAM_SLOT - len))
			TH_LOG("message %d: written past its end", i);
	}
	rc_expect_no_wc(_metadata, p->s[1].rcq);
	EXPECT_EQ(IBV_QPS_RTS, rc_qp_state(p->s[0].qp));
	EXPECT_EQ(IBV_QPS_RTS, rc_qp_state(p->s[1].qp));
}

FIXTURE(drop)
{
	struct stream st;
};

FIXTURE_VARIANT(drop)
{
	unsigned int drops;
};

FIXTURE_VARIANT_ADD(drop, none)
{
	.drops = 0,
};

FIXTURE_VARIANT_ADD(drop, five)
{
	.drops = 5,
};

FIXTURE_VARIANT_ADD(drop, fifty)
{
	.drops = 50,
};

FIXTURE_SETUP(drop)
{
	stream_setup(_metadata, &self->st);
}

FIXTURE_TEARDOWN(drop)
{
	stream_teardown(_metadata, &self->st);
}

/*
 * drop N while a stream is on the wire: RC retransmits, every message
 * arrives whole and in order, the wire dropped exactly N packets and no
 * WQE ran out of retries.  (Counter RETRIES counts timeouts only; drops
 * that a later packet reveals are retransmitted on the responder's PSN
 * sequence NAK, without a timeout: drop_count checks RETRIES exactly.)
 */
TEST_F_TIMEOUT(drop, rc_stream_recovers, 240)
{
	struct counters c0, c1;

	read_counters(_metadata, &c0);
	if (variant->drops)
		INJECT_OK("drop %u", variant->drops);
	rc_stream(_metadata, &self->st, SEED);
	read_counters(_metadata, &c1);
	EXPECT_EQ(c0.wire_drops + variant->drops, c1.wire_drops);
	EXPECT_EQ(c0.err_retry_exc, c1.err_retry_exc);
	EXPECT_EQ(c0.faults_injected + (variant->drops ? 1 : 0),
		  c1.faults_injected);
	EXPECT_EQ(c0.link_downed, c1.link_downed);

	/* And the pair goes on with no drops left. */
	read_counters(_metadata, &c0);
	rc_stream(_metadata, &self->st, SEED + 1000);
	read_counters(_metadata, &c1);
	EXPECT_EQ(c0.wire_drops, c1.wire_drops);
}

FIXTURE(drop_count)
{
	struct stream st;
};

FIXTURE_SETUP(drop_count)
{
	stream_setup(_metadata, &self->st);
}

FIXTURE_TEARDOWN(drop_count)
{
	stream_teardown(_metadata, &self->st);
}

/* drop 0 cancels drops still pending; the largest count is accepted. */
TEST_F(drop_count, zero_cancels)
{
	struct counters c0, c1;

	read_counters(_metadata, &c0);
	INJECT_OK("drop %d", QHCA_FAULT_MAX_DROP);
	INJECT_OK("drop 0");
	rc_stream(_metadata, &self->st, SEED + 2000);
	read_counters(_metadata, &c1);
	EXPECT_EQ(c0.wire_drops, c1.wire_drops);
	EXPECT_EQ(c0.faults_injected + 2, c1.faults_injected);
}

/*
 * One single-packet RDMA WRITE after drop n: nothing follows it to reveal
 * the loss, so each drop costs a timeout and a retry.  With retry_cnt 7,
 * 7 drops are survived (retries + 7) and 8 are one too many
 * (RETRY_EXC_ERR after 7 retries).
 */
static void drop_write(struct __test_metadata *_metadata, struct stream *st,
		       unsigned int drops, enum ibv_wc_status status)
{
	struct rc_pair *p = &st->p;
	struct ibv_sge sge = rc_sge(&st->src, 0, MSG);
	struct counters c0, c1;

	rc_fill(st->src.mem, MSG, SEED + drops);
	rc_prepare_dst(&st->dst, 512, MSG, SEED + drops);
	read_counters(_metadata, &c0);
	INJECT_OK("drop %u", drops);
	ASSERT_EQ(0, rc_post(p->s[0].qp, drops, IBV_WR_RDMA_WRITE,
			     IBV_SEND_SIGNALED, &sge, 1,
			     (uintptr_t)st->dst.mem + 512, st->dst.mr->rkey));
	RC_WAIT_WC(p->s[0].scq, drops, status, IBV_WC_RDMA_WRITE);
	read_counters(_metadata, &c1);
	EXPECT_EQ(c0.wire_drops + drops, c1.wire_drops);
	EXPECT_EQ(c0.retries + 7, c1.retries);
	if (status == IBV_WC_SUCCESS) {
		RC_EXPECT_DELIVERED(&st->dst, 512, MSG, SEED + drops);
		EXPECT_EQ(c0.err_retry_exc, c1.err_retry_exc);
	} else {
		RC_EXPECT_UNTOUCHED(&st->dst, 512, MSG, SEED + drops);
		EXPECT_EQ(c0.err_retry_exc + 1, c1.err_retry_exc);
		EXPECT_EQ(IBV_QPS_ERR, rc_qp_state(p->s[0].qp));
	}
}

TEST_F(drop_count, retry_cnt_survived)
{
	drop_write(_metadata, &self->st, 7, IBV_WC_SUCCESS);
}

TEST_F(drop_count, retry_cnt_exceeded)
{
	drop_write(_metadata, &self->st, 8, IBV_WC_RETRY_EXC_ERR);
}

/* A new count replaces the one pending. */
TEST_F(drop_count, new_count_replaces)
{
	struct counters c0, c1;

	read_counters(_metadata, &c0);
	INJECT_OK("drop %d", QHCA_FAULT_MAX_DROP);
	INJECT_OK("drop 3");
	rc_stream(_metadata, &self->st, SEED + 3000);
	read_counters(_metadata, &c1);
	EXPECT_EQ(c0.wire_drops + 3, c1.wire_drops);
}

/* ---- QP_FATAL ------------------------------------------------------ */

FIXTURE(qp_fatal)
{
	struct rc_pair p;
	struct rc_buf buf;
};

FIXTURE_SETUP(qp_fatal)
{
	fault_pair_open(_metadata, &self->p, NULL);
	rc_pair_connect(_metadata, &self->p);
	rc_buf_alloc(_metadata, &self->buf, self->p.pd, 4096, RC_ACCESS_ALL);
}

FIXTURE_TEARDOWN(qp_fatal)
{
	fault_pair_close(_metadata, &self->p, &self->buf, NULL);
}

/*
 * qp_fatal <qpn>: IBV_EVENT_QP_FATAL for that QP, its receives flush in
 * order, it reports ERR, later WQEs flush too, and its peer is untouched.
 */
TEST_F(qp_fatal, flushes_receives)
{
	struct rc_pair *p = &self->p;
	struct ibv_qp *qp = p->s[1].qp;
	struct counters c0, c1;
	struct ibv_sge sge;
	struct ibv_wc wc;
	int i;

	for (i = 0; i < 4; i++) {
		sge = rc_sge(&self->buf, i * 256, 256);
		ASSERT_EQ(0, rc_post_recv(qp, 100 + i, &sge, 1));
	}
	read_counters(_metadata, &c0);
	INJECT_OK("qp_fatal %u", qp->qp_num);
	expect_event(_metadata, p->ctx, IBV_EVENT_QP_FATAL, qp);

	for (i = 0; i < 4; i++) {
		rc_wait_wc(_metadata, p->s[1].rcq, &wc);
		RC_EXPECT_WC(wc, 100 + i, IBV_WC_WR_FLUSH_ERR, -1);
		EXPECT_EQ(qp->qp_num, wc.qp_num);
	}
	rc_expect_no_wc(_metadata, p->s[1].rcq);
	EXPECT_EQ(IBV_QPS_ERR, rc_qp_state(qp));

	/* Later WQEs, send and receive, flush as well. */
	sge = rc_sge(&self->buf, 0, MSG);
	ASSERT_EQ(0, rc_post(qp, 7, IBV_WR_SEND, IBV_SEND_SIGNALED, &sge, 1,
			     0, 0));
	RC_WAIT_WC(p->s[1].scq, 7, IBV_WC_WR_FLUSH_ERR, -1);
	ASSERT_EQ(0, rc_post_recv(qp, 8, &sge, 1));
	RC_WAIT_WC(p->s[1].rcq, 8, IBV_WC_WR_FLUSH_ERR, -1);

	/* The peer heard nothing and is still in RTS. */
	EXPECT_EQ(IBV_QPS_RTS, rc_qp_state(p->s[0].qp));
	rc_expect_no_wc(_metadata, p->s[0].scq);
	rc_expect_no_wc(_metadata, p->s[0].rcq);
	expect_no_event(_metadata, p->ctx);

	read_counters(_metadata, &c1);
	EXPECT_EQ(c0.faults_injected + 1, c1.faults_injected);
}

/* A send in flight when its QP is declared broken completes, flushed. */
TEST_F(qp_fatal, requester)
{
	struct rc_pair *p = &self->p;
	struct ibv_qp *qp = p->s[0].qp;
	struct ibv_sge sge = rc_sge(&self->buf, 0, MSG);
	long rnr;

	/*
	 * No receive at the responder: the SEND waits on RNR NAKs, and is in
	 * flight once the requester has had one.
	 */
	rnr = qhca_hw_counter_fresh("rnr_naks_rcvd");
	ASSERT_LE(0, rnr);
	ASSERT_EQ(0, rc_post(qp, 1, IBV_WR_SEND, IBV_SEND_SIGNALED, &sge, 1,
			     0, 0));
	ASSERT_EQ(0, rc_post(qp, 2, IBV_WR_SEND, IBV_SEND_SIGNALED, &sge, 1,
			     0, 0));
	ASSERT_LT(rnr, rc_wait_hw_counter("rnr_naks_rcvd", rnr, RC_POLL_MS))
		TH_LOG("no RNR NAK within %d ms", RC_POLL_MS);
	INJECT_OK("qp_fatal %u", qp->qp_num);
	expect_event(_metadata, p->ctx, IBV_EVENT_QP_FATAL, qp);
	RC_WAIT_WC(p->s[0].scq, 1, IBV_WC_WR_FLUSH_ERR, -1);
	RC_WAIT_WC(p->s[0].scq, 2, IBV_WC_WR_FLUSH_ERR, -1);
	EXPECT_EQ(IBV_QPS_ERR, rc_qp_state(qp));
}

/* ---- QPs on an SRQ: QP_FATAL, LAST_WQE and SRQ_ERR ----------------- */

#define SRQ_WR		16

FIXTURE(srq)
{
	struct rc_pair p;		/* s[i].qp sends to rcv[i] */
	struct ibv_srq *srq;
	long srqn;
	struct ibv_cq *rcq;		/* the receivers' receives */
	struct ibv_cq *scq;		/* the receivers' sends */
	struct ibv_qp *rcv[2];
	struct rc_buf src;
	struct rc_buf dst;		/* SRQ_WR slots of 1024 bytes */
};

FIXTURE_SETUP(srq)
{
	struct ibv_srq_init_attr sinit = {
		.attr = { .max_wr = SRQ_WR, .max_sge = 1 },
	};
	struct rc_pair *p = &self->p;
	int i;

	fault_pair_open(_metadata, p, NULL);

	self->srq = ibv_create_srq(p->pd, &sinit);
	ASSERT_NE(NULL, self->srq) TH_LOG("ibv_create_srq: %s",
					  strerror(errno));
	self->srqn = srq_number(_metadata);
	ASSERT_LT(0, self->srqn);
	self->rcq = ibv_create_cq(p->ctx, 2 * SRQ_WR, NULL, NULL, 0);
	ASSERT_NE(NULL, self->rcq);
	self->scq = ibv_create_cq(p->ctx, 16, NULL, NULL, 0);
	ASSERT_NE(NULL, self->scq);
	for (i = 0; i < 2; i++) {
		struct ibv_qp_init_attr init = {
			.send_cq = self->scq,
			.recv_cq = self->rcq,
			.srq = self->srq,
			.qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 4, .max_send_sge = 1 },
		};

		self->rcv[i] = ibv_create_qp(p->pd, &init);
		ASSERT_NE(NULL, self->rcv[i]) TH_LOG("QP on the SRQ: %s",
						     strerror(errno));
	}
	for (i = 0; i < 2; i++) {
		rc_connect_one(_metadata, p, i, self->rcv[i]->qp_num,
			       p->pattr.lid);
		ASSERT_EQ(0, rc_to_init(self->rcv[i], RC_QP_ACCESS_ALL));
		ASSERT_EQ(0, rc_to_rtr(p, self->rcv[i], p->s[i].qp->qp_num,
				       p->pattr.lid));
		ASSERT_EQ(0, rc_to_rts(p, self->rcv[i]));
	}
	rc_buf_alloc(_metadata, &self->src, p->pd, 4096, RC_ACCESS_ALL);
	rc_buf_alloc(_metadata, &self->dst, p->pd, SRQ_WR * 1024,
		     RC_ACCESS_ALL);
}

FIXTURE_TEARDOWN(srq)
{
	int i;

	for (i = 0; i < 2; i++)
		if (self->rcv[i])
			EXPECT_EQ(0, ibv_destroy_qp(self->rcv[i]));
	if (self->srq)
		EXPECT_EQ(0, ibv_destroy_srq(self->srq));
	if (self->rcq)
		EXPECT_EQ(0, ibv_destroy_cq(self->rcq));
	if (self->scq)
		EXPECT_EQ(0, ibv_destroy_cq(self->scq));
	fault_pair_close(_metadata, &self->p, &self->src, &self->dst);
}

/* Posts receive slots first .. first + n - 1 (1024 bytes each). */
static void srq_fill(struct __test_metadata *_metadata,
		     FIXTURE_DATA(srq) *self, int first, int n)
{
	struct ibv_recv_wr wr, *bad;
	struct ibv_sge sge;
	int i;

	for (i = first; i < first + n; i++) {
		sge = rc_sge(&self->dst, i * 1024, 1024);
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = i;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		memset(self->dst.mem + i * 1024, FILL, 1024);
		ASSERT_EQ(0, ibv_post_srq_recv(self->srq, &wr, &bad));
	}
}

/* A SEND of len bytes from sender i, pattern seed. */
static int srq_send(FIXTURE_DATA(srq) *self, int i, uint64_t wr_id,
		    uint32_t len, uint32_t seed)
{
	struct ibv_sge sge = rc_sge(&self->src, 0, len);

	rc_fill(self->src.mem, len, seed);
	return rc_post(self->p.s[i].qp, wr_id, IBV_WR_SEND, IBV_SEND_SIGNALED,
		       &sge, 1, 0, 0);
}

/*
 * A QP on an SRQ declared broken: QP_FATAL and QP_LAST_WQE_REACHED for
 * it.  The SRQ's WQEs are not its to flush: the other QP on the SRQ goes
 * on taking them.
 */
TEST_F(srq, qp_fatal_last_wqe)
{
	struct rc_pair *p = &self->p;
	struct want w[] = {
		{ .type = IBV_EVENT_QP_FATAL, .elem = self->rcv[0] },
		{ .type = IBV_EVENT_QP_LAST_WQE_REACHED, .elem = self->rcv[0] },
	};
	struct ibv_wc wc;

	srq_fill(_metadata, self, 0, 4);
	INJECT_OK("qp_fatal %u", self->rcv[0]->qp_num);
	expect_events(_metadata, p->ctx, w, 2);
	EXPECT_EQ(IBV_QPS_ERR, rc_qp_state(self->rcv[0]));
	EXPECT_EQ(0, rc_poll(self->rcq, &wc, 1, RC_QUIET_MS))
		TH_LOG("SRQ WQE %llu completed with %s",
		       (unsigned long long)wc.wr_id,
		       ibv_wc_status_str(wc.status));

	ASSERT_EQ(0, srq_send(self, 1, 1, 777, SEED + 3));
	RC_WAIT_WC(p->s[1].scq, 1, IBV_WC_SUCCESS, IBV_WC_SEND);
	rc_wait_wc(_metadata, self->rcq, &wc);
	RC_EXPECT_WC(wc, 0, IBV_WC_SUCCESS, IBV_WC_RECV);
	EXPECT_EQ(self->rcv[1]->qp_num, wc.qp_num);
	EXPECT_EQ(777U, wc.byte_len);
	RC_EXPECT_PATTERN(self->dst.mem, 777, SEED + 3);
	EXPECT_EQ(1024U - 777, fill_run(self->dst.mem + 777, 1024 - 777));
	expect_no_event(_metadata, p->ctx);
}

/*
 * srq_err <srqn>: IBV_EVENT_SRQ_ERR for the SRQ.  A QP that then needs a
 * WQE from it answers with a remote operational error NAK and goes to ERR
 * (QP_FATAL, and QP_LAST_WQE as any QP on an SRQ entering ERR); the
 * sender completes with IBV_WC_REM_OP_ERR.  A second srq_err is refused.
 */
TEST_F(srq, srq_err)
{
	struct rc_pair *p = &self->p;
	struct want w[] = {
		{ .type = IBV_EVENT_QP_FATAL, .elem = self->rcv[0] },
		{ .type = IBV_EVENT_QP_LAST_WQE_REACHED, .elem = self->rcv[0] },
	};
	struct counters c0, c1;

	srq_fill(_metadata, self, 0, 4);
	read_counters(_metadata, &c0);
	INJECT_OK("srq_err %ld", self->srqn);
	expect_event(_metadata, p->ctx, IBV_EVENT_SRQ_ERR, self->srq);
	expect_no_event(_metadata, p->ctx);

	ASSERT_EQ(0, srq_send(self, 0, 1, 100, SEED + 4));
	RC_WAIT_WC(p->s[0].scq, 1, IBV_WC_REM_OP_ERR, -1);
	expect_events(_metadata, p->ctx, w, 2);
	EXPECT_EQ(IBV_QPS_ERR, rc_qp_state(self->rcv[0]));
	EXPECT_EQ(IBV_QPS_ERR, rc_qp_state(p->s[0].qp));
	/* The NAK came before any byte landed. */
	EXPECT_EQ(4U * 1024, fill_run(self->dst.mem, 4 * 1024));

	INJECT_FAILS(EBUSY, "srq_err %ld", self->srqn);
	read_counters(_metadata, &c1);
	EXPECT_EQ(c0.faults_injected + 1, c1.faults_injected);
}

/*
 * An XRC SRQ's number is also what ibv_get_srq_num() returns: rdma res
 * must agree with it, and srq_err takes it.
 */
TEST(xrc_srq_err)
{
	struct ibv_srq_init_attr_ex attr = {
		.attr = { .max_wr = 4, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC,
	};
	struct ibv_xrcd_init_attr xattr = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1,
		.oflags = O_CREAT,
	};
	struct rc_pair p;
	struct ibv_xrcd *xrcd;
	struct ibv_srq *srq;
	uint32_t srqn = 0;

	memset(&p, 0, sizeof(p));
	fault_pair_open(_metadata, &p, NULL);
	xrcd = ibv_open_xrcd(p.ctx, &xattr);
	ASSERT_NE(NULL, xrcd) TH_LOG("ibv_open_xrcd: %s", strerror(errno));
	attr.pd = p.pd;
	attr.xrcd = xrcd;
	attr.cq = p.s[1].rcq;
	srq = ibv_create_srq_ex(p.ctx, &attr);
	ASSERT_NE(NULL, srq) TH_LOG("ibv_create_srq_ex: %s", strerror(errno));
	ASSERT_EQ(0, ibv_get_srq_num(srq, &srqn));
	EXPECT_EQ((long)srqn, srq_number(_metadata));

	INJECT_OK("srq_err %u", srqn);
	expect_event(_metadata, p.ctx, IBV_EVENT_SRQ_ERR, srq);
	INJECT_FAILS(EBUSY, "srq_err %u", srqn);
	expect_no_event(_metadata, p.ctx);

	EXPECT_EQ(0, ibv_destroy_srq(srq));
	EXPECT_EQ(0, ibv_close_xrcd(xrcd));
	rc_pair_close(_metadata, &p);
	/* Gone: the number names nothing now. */
	INJECT_FAILS(EINVAL, "srq_err %u", srqn);
}

/* ---- CQ_ERR -------------------------------------------------------- */

FIXTURE(cq_err)
{
	struct rc_pair p;
	struct rc_buf buf;
};

#define CQ_ERR_CQE	1000

FIXTURE_SETUP(cq_err)
{
	struct rc_pair *p = &self->p;

	fault_pair_open(_metadata, p, NULL);
	/*
	 * QP 1 receives into a CQ of a size no other CQ of the process has,
	 * so that rdma res tells which number is its.
	 */
	ASSERT_EQ(0, ibv_destroy_qp(p->s[1].qp));
	p->s[1].qp = NULL;
	ASSERT_EQ(0, ibv_destroy_cq(p->s[1].rcq));
	p->s[1].rcq = ibv_create_cq(p->ctx, CQ_ERR_CQE, NULL, NULL, 0);
	ASSERT_NE(NULL, p->s[1].rcq);
	ASSERT_LT(p->s[0].scq->cqe, p->s[1].rcq->cqe);
	p->s[1].qp = rc_create_qp(p, p->s[1].scq, p->s[1].rcq, &p->s[1].cap);
	ASSERT_NE(NULL, p->s[1].qp);
	rc_pair_connect(_metadata, p);
	rc_buf_alloc(_metadata, &self->buf, p->pd, 4096, RC_ACCESS_ALL);
}

FIXTURE_TEARDOWN(cq_err)
{
	fault_pair_close(_metadata, &self->p, &self->buf, NULL);
}

/*
 * cq_err <cqn>: IBV_EVENT_CQ_ERR for the CQ, which takes no further CQE;
 * the QP that next completes to it goes to ERR.  A second cq_err is
 * refused.
 */
TEST_F(cq_err, receiver_goes_to_err)
{
	struct rc_pair *p = &self->p;
	struct ibv_cq *cq = p->s[1].rcq;
	long cqn = cq_number(_metadata, cq), deadline;
	struct counters c0, c1;
	struct ibv_sge sge;
	struct ibv_wc wc;

	ASSERT_LT(0, cqn);
	read_counters(_metadata, &c0);
	INJECT_OK("cq_err %ld", cqn);
	expect_event(_metadata, p->ctx, IBV_EVENT_CQ_ERR, cq);
	/* Nothing else is hurt yet. */
	EXPECT_EQ(IBV_QPS_RTS, rc_qp_state(p->s[1].qp));
	EXPECT_EQ(IBV_QPS_RTS, rc_qp_state(p->s[0].qp));

	sge = rc_sge(&self->buf, 1024, MSG);
	ASSERT_EQ(0, rc_post_recv(p->s[1].qp, 9, &sge, 1));
	rc_fill(self->buf.mem, MSG, SEED + 5);
	sge = rc_sge(&self->buf, 0, MSG);
	ASSERT_EQ(0, rc_post(p->s[0].qp, 1, IBV_WR_SEND, IBV_SEND_SIGNALED,
			     &sge, 1, 0, 0));

	deadline = rc_now_ms() + RC_POLL_MS;
	while (rc_qp_state(p->s[1].qp) != IBV_QPS_ERR &&
	       rc_now_ms() < deadline)
		usleep(10000);
	EXPECT_EQ(IBV_QPS_ERR, rc_qp_state(p->s[1].qp));
	/*
	 * The QP went to ERR where it would have written the CQE, so a CQE
	 * that were written would be there already: the wait is margin.
	 */
	EXPECT_EQ(0, rc_poll(cq, &wc, 1, RC_QUIET_MS))
		TH_LOG("a CQE on a CQ in error: wr_id %llu status %s",
		       (unsigned long long)wc.wr_id,
		       ibv_wc_status_str(wc.status));
	/* Whatever the sender saw, its CQ still works: drain it. */
	rc_poll(p->s[0].scq, &wc, 1, RC_POLL_MS);

	INJECT_FAILS(EBUSY, "cq_err %ld", cqn);
	read_counters(_metadata, &c1);
	EXPECT_EQ(c0.faults_injected + 1, c1.faults_injected);
}

/* ---- What the inject file refuses --------------------------------- */

FIXTURE(bad)
{
	struct rc_pair p;
};

FIXTURE_SETUP(bad)
{
	fault_pair_open(_metadata, &self->p, NULL);
}

FIXTURE_TEARDOWN(bad)
{
	fault_pair_close(_metadata, &self->p, NULL, NULL);
}

/* Lines that do not parse: EINVAL, nothing injected, nothing heard. */
TEST_F(bad, unparsable_lines)
{
	static const char *const lines[] = {
		"", "bogus", "link", "link_dow", "link_downn", "aq",
		"qp_fatal", "srq_err", "cq_err", "drop",
		"qp_fatal x", "srq_err -", "cq_err 1x", "drop five",
		"drop -1", "drop 1000001", "drop 4294967296",
		"qp_fatal 99999999999",
	};
	struct counters c0, c1;
	unsigned int i;

	read_counters(_metadata, &c0);
	for (i = 0; i < ARRAY_SIZE(lines); i++)
		INJECT_FAILS(EINVAL, "%s", lines[i]);
	read_counters(_metadata, &c1);
	EXPECT_EQ(c0.faults_injected, c1.faults_injected);
	expect_port(_metadata, self->p.ctx, IBV_PORT_ACTIVE, PHYS_LINK_UP);
	expect_no_event(_metadata, self->p.ctx);
}

/* Handles that name nothing: EINVAL (BAD_HANDLE). */
TEST_F(bad, dead_handles)
{
	struct rc_pair *p = &self->p;
	struct ibv_qp_init_attr init = {
		.send_cq = p->s[0].scq,
		.recv_cq = p->s[0].rcq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct counters c0, c1;
	struct ibv_qp *qp;
	uint32_t dead;

	qp = ibv_create_qp(p->pd, &init);
	ASSERT_NE(NULL, qp);
	dead = qp->qp_num;
	ASSERT_EQ(0, ibv_destroy_qp(qp));

	read_counters(_metadata, &c0);
	INJECT_FAILS(EINVAL, "qp_fatal %u", dead);
	INJECT_FAILS(EINVAL, "qp_fatal %u", 0xffffffu);
	INJECT_FAILS(EINVAL, "srq_err 0");
	INJECT_FAILS(EINVAL, "srq_err %u", 0xffffu);
	INJECT_FAILS(EINVAL, "cq_err 0");
	INJECT_FAILS(EINVAL, "cq_err %u", 0xffffu);
	read_counters(_metadata, &c1);
	EXPECT_EQ(c0.faults_injected, c1.faults_injected);
	expect_no_event(_metadata, p->ctx);
}

/* A QP in RESET cannot be declared broken: EBUSY (BAD_STATE). */
TEST_F(bad, qp_in_reset)
{
	struct rc_pair *p = &self->p;

	ASSERT_EQ(IBV_QPS_RESET, rc_qp_state(p->s[0].qp));
	INJECT_FAILS(EBUSY, "qp_fatal %u", p->s[0].qp->qp_num);
	EXPECT_EQ(IBV_QPS_RESET, rc_qp_state(p->s[0].qp));
	expect_no_event(_metadata, p->ctx);

	/* The refusal changed nothing: the QP still connects and works. */
	rc_pair_connect(_metadata, p);
	rc_check_traffic(_metadata, p, SEED + 6);
}

/* The whole line in one write: the length is returned. */
TEST_F(bad, write_returns_length)
{
	static const char line[] = "drop 0\n";
	int fd;

	fd = open(INJECT, O_WRONLY);
	ASSERT_LE(0, fd) TH_LOG("%s: %s", INJECT, strerror(errno));
	EXPECT_EQ((ssize_t)strlen(line), write(fd, line, strlen(line)));
	close(fd);
}

TEST_HARNESS_MAIN
