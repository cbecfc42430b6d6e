/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qtest for fault injection in qhca (interface 1.3): INJECT_FAULT with
 * each of its seven types and every malformed payload, the fault-injection
 * and link-up properties, the wire losing packets (RC retrying or giving
 * up, UD sends completing and lost), the admin queue hanging until a
 * reset, the WRITTEN bit of CQEs, and a system reset with RC traffic in
 * flight after which the device must not touch guest memory again.
 *
 * The test plays the driver as the other qhca qtests do; all data moves
 * through one physical MR over a buffer in guest RAM.
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "hw/pci/pci_regs.h"
#include "qhca-qtest.h"

#define FT_ID               "hca0"
#define FT_PATH             "/machine/peripheral/" FT_ID
#define FT_PROPS            ",id=" FT_ID
#define FT_QKEY             0x1234u
#define FT_BUF_SIZE         0x20000
#define FT_EQ_LOG2          7
#define FT_SQ_LOG2          6
#define FT_SQ_STRIDE_LOG2   7
#define FT_RQ_LOG2          5
#define FT_RQ_STRIDE_LOG2   6
#define FT_PORT_EVENTS      ((1u << QHCA_EVENT_PORT_ACTIVE) | \
                             (1u << QHCA_EVENT_PORT_DOWN))
#define FT_EVENTS           (FT_PORT_EVENTS | \
                             (1u << QHCA_EVENT_COMPLETION) | \
                             (1u << QHCA_EVENT_CQ_ERROR) | \
                             (1u << QHCA_EVENT_QP_FATAL) | \
                             (1u << QHCA_EVENT_QP_REQ_ERR) | \
                             (1u << QHCA_EVENT_QP_ACCESS_ERR) | \
                             (1u << QHCA_EVENT_SRQ_LIMIT) | \
                             (1u << QHCA_EVENT_QP_LAST_WQE) | \
                             (1u << QHCA_EVENT_SRQ_ERR))
#define FT_RETRY_TIMEOUT    10          /* 4.2 ms */
#define FT_STEP_NS          5000000     /* more than one retry timeout */

typedef struct Ft {
    QhcaTest *t;
    uint32_t uar;
    uint32_t pdn;
    uint32_t lkey;              /* a physical MR over all of RAM */
    uint64_t buf;               /* FT_BUF_SIZE bytes of guest RAM */
    QhcaEq eq;                  /* every asynchronous event */
    GPtrArray *objs;            /* the CQs, QPs and SRQs, freed at the end */
} Ft;

/* ------------------------------------------------------------------ */
/* Events                                                              */

static void ft_eq_create(Ft *f, QhcaEq *eq, uint32_t mask)
{
    qt_eq_init(f->t, eq, FT_EQ_LOG2, 1, mask);
}

static void ft_expect_event(Ft *f, uint8_t type, uint32_t data)
{
    qt_eq_expect(f->t, &f->eq, type, data);
}

static void ft_no_event(Ft *f)
{
    qt_eq_assert_quiet(f->t, &f->eq);
}

/* ------------------------------------------------------------------ */
/* Setup                                                               */

/* The objects every test uses, on a device just enabled. */
static void ft_setup(Ft *f)
{
    QhcaTest *t = f->t;

    qt_alloc_uar_pd(t, &f->uar, &f->pdn);
    f->lkey = qt_reg_phys_mr(t, f->pdn, QHCA_ACCESS_ALL, 0x3c, 0);
    f->buf = guest_alloc(&t->alloc, FT_BUF_SIZE);
    qtest_memset(t->qts, f->buf, 0, FT_BUF_SIZE);
    ft_eq_create(f, &f->eq, FT_EVENTS);
}

/* A device enabled, with ft_setup()'s objects. */
static Ft *ft_new(const char *props)
{
    Ft *f = g_new0(Ft, 1);

    f->t = qhca_start(props);
    f->objs = g_ptr_array_new_with_free_func(g_free);
    qt_enable(f->t, 5);
    ft_setup(f);
    return f;
}

/* A device whose port is up: its EQ starts with PORT_ACTIVE. */
static Ft *ft_start(const char *props)
{
    Ft *f = ft_new(props ? props : FT_PROPS);

    ft_expect_event(f, QHCA_EVENT_PORT_ACTIVE, 1);
    return f;
}

static void ft_stop(Ft *f)
{
    qt_assert_alive(f->t);
    qhca_stop(f->t);
    g_ptr_array_free(f->objs, true);
    g_free(f);
}

/* ------------------------------------------------------------------ */
/* Commands                                                            */

static uint8_t ft_inject_raw(Ft *f, const struct qhca_cmd_inject_fault *p)
{
    return qt_cmd(f->t, QHCA_CMD_INJECT_FAULT, p, sizeof(*p), NULL);
}

static uint8_t ft_inject(Ft *f, uint16_t type, uint32_t handle)
{
    struct qhca_cmd_inject_fault p = {
        .type = cpu_to_le16(type),
        .handle = cpu_to_le32(handle),
    };

    return ft_inject_raw(f, &p);
}

static struct qhca_port_attr ft_port(Ft *f)
{
    struct qhca_cmd_query_port q = { .port_num = 1 };
    struct qhca_port_attr a;

    g_assert_cmpuint(qt_query(f->t, QHCA_CMD_QUERY_PORT, &q, sizeof(q), &a,
                              sizeof(a)), ==, QHCA_AQ_SUCCESS);
    return a;
}

static void ft_assert_port(Ft *f, bool active)
{
    struct qhca_port_attr a = ft_port(f);

    g_assert_cmpuint(a.state, ==, active ? QHCA_PORT_ACTIVE : QHCA_PORT_DOWN);
    g_assert_cmpuint(a.phys_state, ==, active ? 5 : 3);
}

/* The capabilities of a device of the current interface version. */
static uint32_t ft_device_caps(Ft *f)
{
    struct qhca_device_attr d;

    g_assert_cmpuint(qt_query(f->t, QHCA_CMD_QUERY_DEVICE, NULL, 0, &d,
                              sizeof(d)), ==, QHCA_AQ_SUCCESS);
    g_assert_cmphex(le32_to_cpu(d.hw_version), ==, QHCA_VERSION_CURRENT);
    return le32_to_cpu(d.device_cap_flags);
}

static void ft_link_prop(Ft *f, bool up)
{
    qtest_qom_set_bool(f->t->qts, FT_PATH, "link-up", up);
}

/* ------------------------------------------------------------------ */
/* Completion queues                                                   */

static QhcaCq *ft_cq(Ft *f, uint8_t depth_log2)
{
    QhcaCq *cq = qt_cq_new(f->t, depth_log2, f->eq.eqn, f->uar);

    g_ptr_array_add(f->objs, cq);
    return cq;
}

/* ft_start() with two CQs of 64 entries, for the two sides of a test. */
static Ft *ft_start_cqs(QhcaCq **cq, QhcaCq **rcq)
{
    Ft *f = ft_start(NULL);

    *cq = ft_cq(f, 6);
    *rcq = ft_cq(f, 6);
    return f;
}

/*
 * Take the next CQE; false if none came.  Every CQE of 1.3 carries the
 * WRITTEN bit, whatever its phase, and nothing else in the owner byte.
 */
static bool ft_poll(Ft *f, QhcaCq *cq, struct qhca_cqe *cqe, bool wait)
{
    uint8_t phase = ((cq->ci / cq->entries) & 1) ^ 1;

    if (!qt_cq_poll(f->t, cq, cqe, wait)) {
        return false;
    }
    g_assert_cmphex(cqe->owner, ==, QHCA_CQE_OWNER_WRITTEN | phase);
    return true;
}

static struct qhca_cqe ft_expect(Ft *f, QhcaCq *cq, QhcaQp *qp, uint8_t opcode,
                                 uint8_t status)
{
    struct qhca_cqe cqe;

    g_assert(ft_poll(f, cq, &cqe, true));
    g_assert_cmpuint(le32_to_cpu(cqe.qpn), ==, qp->qpn);
    g_assert_cmpuint(cqe.opcode, ==, opcode);
    g_assert_cmpuint(cqe.status, ==, status);
    return cqe;
}

/* ------------------------------------------------------------------ */
/* Queue pairs                                                         */

static QhcaQp *ft_qp(Ft *f, uint8_t type, QhcaCq *scq, QhcaCq *rcq,
                     QhcaSrq *srq)
{
    const QhcaQpSpec s = {
        .type = type,
        .pdn = f->pdn,
        .uar = f->uar,
        .send_cqn = scq->cqn,
        .recv_cqn = rcq->cqn,
        .sq_log2 = FT_SQ_LOG2,
        .sq_stride_log2 = FT_SQ_STRIDE_LOG2,
        .rq_log2 = FT_RQ_LOG2,
        .rq_stride_log2 = FT_RQ_STRIDE_LOG2,
        .srq = srq,
    };
    QhcaQp *qp = qt_qp_new(f->t, &s);

    g_ptr_array_add(f->objs, qp);
    return qp;
}

/* An RC (or UC) QP to RTS towards @dest, with these retry settings. */
static void ft_connect(Ft *f, QhcaQp *qp, QhcaQp *dest, uint8_t timeout,
                       uint8_t retry_cnt)
{
    QhcaPath path = qt_rc_path;

    if (qp->type == QHCA_QPT_RC) {
        path.timeout = timeout;
        path.retry_cnt = retry_cnt;
    } else {
        path = (QhcaPath) {
            .dlid = QT_LID,
            .mtu = QT_MTU_1024,
            .access = QHCA_ACCESS_REMOTE_WRITE | QHCA_ACCESS_REMOTE_READ,
        };
    }
    qt_qp_connect(f->t, qp, dest, &path, 0x100);
}

/*
 * RC QPs A, completing to @acq, and B, to @bcq, connected to each other
 * with the retry timer FT_RETRY_TIMEOUT and @retry_cnt retries.
 */
static void ft_rc_pair(Ft *f, QhcaCq *acq, QhcaCq *bcq, uint8_t retry_cnt,
                       QhcaQp **a, QhcaQp **b)
{
    *a = ft_qp(f, QHCA_QPT_RC, acq, acq, NULL);
    *b = ft_qp(f, QHCA_QPT_RC, bcq, bcq, NULL);
    ft_connect(f, *a, *b, FT_RETRY_TIMEOUT, retry_cnt);
    ft_connect(f, *b, *a, FT_RETRY_TIMEOUT, retry_cnt);
}

static struct qhca_sge ft_sge(Ft *f, uint32_t off, uint32_t len)
{
    g_assert_cmpuint(off + len, <=, FT_BUF_SIZE);
    return qt_sge(f->buf + off, len, f->lkey);
}

/* Write a signaled WQE with one SGE over buf[off, off + len). */
static uint16_t ft_write_wqe(Ft *f, QhcaQp *qp, const void *w, uint32_t off,
                             uint32_t len)
{
    struct qhca_sge sge = ft_sge(f, off, len);

    return qt_qp_post_send(f->t, qp, w, &sge, 1);
}

/* SEND, or RDMA WRITE to buf[roff, ...), from buf[off, off + len). */
static uint16_t ft_post(Ft *f, QhcaQp *qp, uint64_t wr_id, uint8_t opcode,
                        uint32_t off, uint32_t len, uint32_t roff)
{
    struct qhca_sq_wqe w = {
        .wr_id = cpu_to_le64(wr_id),
        .opcode = opcode,
        .flags = QHCA_WQE_F_SIGNALED,
        .num_sge = 1,
    };

    if (qt_wr_is(opcode, QHCA_WR_F_REMOTE_ADDR)) {
        w.remote_addr = cpu_to_le64(f->buf + roff);
        w.rkey = cpu_to_le32(f->lkey);
    }
    return ft_write_wqe(f, qp, &w, off, len);
}

static uint16_t ft_post_ud(Ft *f, QhcaQp *qp, QhcaQp *dest, uint64_t wr_id,
                           uint32_t off, uint32_t len)
{
    struct qhca_sq_wqe_ud w = {
        .wr_id = cpu_to_le64(wr_id),
        .opcode = QHCA_WR_SEND,
        .flags = QHCA_WQE_F_SIGNALED,
        .num_sge = 1,
        .dest_qpn = cpu_to_le32(dest->qpn),
        .qkey = cpu_to_le32(FT_QKEY),
        .dlid = cpu_to_le16(QT_LID),
    };

    return ft_write_wqe(f, qp, &w, off, len);
}

static uint16_t ft_post_recv(Ft *f, QhcaQp *qp, uint64_t wr_id, uint32_t off,
                             uint32_t len)
{
    struct qhca_sge sge = ft_sge(f, off, len);

    return qt_qp_post_recv(f->t, qp, wr_id, &sge, 1);
}

/* Fill buf[off, off + len) with a pattern; returns it. */
static uint8_t *ft_fill(Ft *f, uint32_t off, uint32_t len, uint8_t seed)
{
    uint8_t *data = g_malloc(len);
    uint32_t i;

    for (i = 0; i < len; i++) {
        data[i] = seed + i * 13 + (i >> 7);
    }
    qtest_memwrite(f->t->qts, f->buf + off, data, len);
    return data;
}

static void ft_check(Ft *f, uint32_t off, const uint8_t *want, uint32_t len)
{
    g_autofree uint8_t *got = g_malloc(len);

    qtest_memread(f->t->qts, f->buf + off, got, len);
    g_assert(memcmp(got, want, len) == 0);
}

/* ------------------------------------------------------------------ */
/* Shared receive queues                                               */

static QhcaSrq *ft_srq(Ft *f)
{
    QhcaSrq *srq = qt_srq_new(f->t, f->pdn, f->uar, FT_RQ_LOG2,
                              FT_RQ_STRIDE_LOG2);

    g_ptr_array_add(f->objs, srq);
    return srq;
}

static void ft_post_srq(Ft *f, QhcaSrq *srq, uint64_t wr_id, uint32_t off,
                        uint32_t len)
{
    struct qhca_sge sge = ft_sge(f, off, len);

    qt_srq_post(f->t, srq, wr_id, &sge, 1);
}

/* ------------------------------------------------------------------ */
/* Tests                                                               */

/*
 * The current version (fault injection came with 1.3), the capability
 * bit, and the command counted.
 */
static void test_caps(void)
{
    Ft *f = ft_start(NULL);

    g_assert_cmphex(qt_rd(f->t, QHCA_REG_VERSION), ==, QHCA_VERSION_CURRENT);
    g_assert_cmphex(ft_device_caps(f) & QHCA_DEV_CAP_FAULT_INJECT, ==,
                    QHCA_DEV_CAP_FAULT_INJECT);
    g_assert_cmpuint(qt_counter(f->t, QHCA_CNT_FAULTS_INJECTED), ==, 0);
    g_assert_cmpuint(ft_inject(f, QHCA_FAULT_DROP, 0), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(qt_counter(f->t, QHCA_CNT_FAULTS_INJECTED), ==, 1);
    ft_stop(f);
}

/*
 * fault-injection=off: no capability, INJECT_FAULT is BAD_OPCODE whatever
 * it holds and does nothing; the host's link-up works all the same.
 */
static void test_property_off(void)
{
    Ft *f = ft_start(FT_PROPS ",fault-injection=off");
    uint64_t errors = le64_to_cpu(qt_stats(f->t).admin_errors);
    uint16_t type;

    g_assert_cmphex(ft_device_caps(f) & QHCA_DEV_CAP_FAULT_INJECT, ==, 0);
    for (type = 0; type <= QHCA_FAULT_AQ_HANG + 1; type++) {
        g_assert_cmpuint(ft_inject(f, type, 0), ==, QHCA_AQ_BAD_OPCODE);
    }
    g_assert_cmpuint(le64_to_cpu(qt_stats(f->t).admin_errors), ==,
                     errors + QHCA_FAULT_AQ_HANG + 2);
    /* LINK_DOWN and AQ_HANG above did nothing. */
    ft_assert_port(f, true);
    ft_no_event(f);
    g_assert_cmpuint(qt_counter(f->t, QHCA_CNT_FAULTS_INJECTED), ==, 0);

    ft_link_prop(f, false);
    ft_expect_event(f, QHCA_EVENT_PORT_DOWN, 1);
    ft_assert_port(f, false);
    ft_link_prop(f, true);
    ft_expect_event(f, QHCA_EVENT_PORT_ACTIVE, 1);
    ft_assert_port(f, true);
    ft_stop(f);
}

/*
 * LINK_DOWN and LINK_UP: port state, the LINK_DOWNED counter, and the
 * events on every EQ whose mask asks for them, once per transition.
 */
static void test_link_fault(void)
{
    Ft *f = ft_start(NULL);
    QhcaEq port_eq, other_eq;
    uint64_t guest_errors;

    ft_eq_create(f, &port_eq, FT_PORT_EVENTS);
    qt_eq_expect(f->t, &port_eq, QHCA_EVENT_PORT_ACTIVE, 1);
    ft_eq_create(f, &other_eq, 1u << QHCA_EVENT_CQ_ERROR);
    guest_errors = le64_to_cpu(qt_stats(f->t).guest_errors);
    ft_assert_port(f, true);

    g_assert_cmpuint(ft_inject(f, QHCA_FAULT_LINK_DOWN, 0), ==,
                     QHCA_AQ_SUCCESS);
    ft_assert_port(f, false);
    ft_expect_event(f, QHCA_EVENT_PORT_DOWN, 1);
    qt_eq_expect(f->t, &port_eq, QHCA_EVENT_PORT_DOWN, 1);
    g_assert_cmpuint(qt_counter(f->t, QHCA_CNT_LINK_DOWNED), ==, 1);
    g_assert_cmpuint(qt_counter(f->t, QHCA_CNT_FAULTS_INJECTED), ==, 1);

    /* Down already: success, nothing new. */
    g_assert_cmpuint(ft_inject(f, QHCA_FAULT_LINK_DOWN, 0), ==,
                     QHCA_AQ_SUCCESS);
    ft_assert_port(f, false);
    g_assert_cmpuint(qt_counter(f->t, QHCA_CNT_LINK_DOWNED), ==, 1);
    g_assert_cmpuint(qt_counter(f->t, QHCA_CNT_FAULTS_INJECTED), ==, 2);

    /* An EQ created while the port is down hears of no ACTIVE port. */
    {
        QhcaEq late;

        ft_eq_create(f, &late, FT_PORT_EVENTS);
        qt_eq_assert_quiet(f->t, &late);
        g_assert_cmpuint(ft_inject(f, QHCA_FAULT_LINK_UP, 0), ==,
                         QHCA_AQ_SUCCESS);
        qt_eq_expect(f->t, &late, QHCA_EVENT_PORT_ACTIVE, 1);
    }
    ft_assert_port(f, true);
    ft_expect_event(f, QHCA_EVENT_PORT_ACTIVE, 1);
    qt_eq_expect(f->t, &port_eq, QHCA_EVENT_PORT_ACTIVE, 1);
    g_assert_cmpuint(qt_counter(f->t, QHCA_CNT_FAULTS_INJECTED), ==, 3);

    g_assert_cmpuint(ft_inject(f, QHCA_FAULT_LINK_UP, 0), ==,
                     QHCA_AQ_SUCCESS);
    g_assert_cmpuint(qt_counter(f->t, QHCA_CNT_FAULTS_INJECTED), ==, 4);
    g_assert_cmpuint(qt_counter(f->t, QHCA_CNT_LINK_DOWNED), ==, 1);
    ft_no_event(f);
    qt_eq_assert_quiet(f->t, &port_eq);
    qt_eq_assert_quiet(f->t, &other_eq);
    /* Two port changes: two asynchronous events, however many EQs hear. */
    g_assert_cmpuint(qt_counter(f->t, QHCA_CNT_ASYNC_EVENTS), ==, 2);
    /* A legitimate injection is no guest error. */
    g_assert_cmpuint(le64_to_cpu(qt_stats(f->t).guest_errors), ==,
                     guest_errors);
    ft_stop(f);
}

/*
 * The host's cable: qom-set link-up, the same events and counters as the
 * faults but not FAULTS_INJECTED, and a device reset leaves it pulled.
 */
static void test_link_property(void)
{
    Ft *f = ft_start(NULL);
    QTestState *qts = f->t->qts;

    g_assert_true(qtest_qom_get_bool(qts, FT_PATH, "link-up"));
    ft_link_prop(f, false);
    g_assert_false(qtest_qom_get_bool(qts, FT_PATH, "link-up"));
    ft_expect_event(f, QHCA_EVENT_PORT_DOWN, 1);
    ft_assert_port(f, false);
    g_assert_cmpuint(qt_counter(f->t, QHCA_CNT_LINK_DOWNED), ==, 1);
    g_assert_cmpuint(qt_counter(f->t, QHCA_CNT_FAULTS_INJECTED), ==, 0);
    ft_link_prop(f, false);
    ft_no_event(f);
    g_assert_cmpuint(qt_counter(f->t, QHCA_CNT_LINK_DOWNED), ==, 1);

    /* CTRL.RESET: the cable stays out. */
    qt_enable(f->t, 5);
    g_assert_false(qtest_qom_get_bool(qts, FT_PATH, "link-up"));
    ft_setup(f);
    ft_assert_port(f, false);
    ft_no_event(f);                     /* no PORT_ACTIVE for the new EQ */
    g_assert_cmpuint(qt_counter(f->t, QHCA_CNT_LINK_DOWNED), ==, 0);

    ft_link_prop(f, true);
    ft_expect_event(f, QHCA_EVENT_PORT_ACTIVE, 1);
    ft_assert_port(f, true);
    g_assert_cmpuint(qt_counter(f->t, QHCA_CNT_FAULTS_INJECTED), ==, 0);

    /* While the device is disabled the port is down anyway: no event. */
    qt_wr(f->t, QHCA_REG_CTRL, 0);
    ft_link_prop(f, false);
    ft_link_prop(f, true);
    g_assert_true(qtest_qom_get_bool(qts, FT_PATH, "link-up"));
    ft_stop(f);

    /* A device may start with its cable out. */
    f = ft_new(FT_PROPS ",link-up=off");
    ft_assert_port(f, false);
    ft_no_event(f);
    ft_link_prop(f, true);
    ft_expect_event(f, QHCA_EVENT_PORT_ACTIVE, 1);
    ft_stop(f);
}

/*
 * The host's cable and the guest's LINK_DOWN are separate: the link is up
 * only with the cable in and no LINK_DOWN in force, a guest's LINK_UP
 * cannot plug in a cable the host pulled, and a device reset ends the
 * guest's LINK_DOWN but not the host's pull.
 */
static void test_link_host_and_guest(void)
{
    Ft *f = ft_start(NULL);

    ft_link_prop(f, false);
    ft_expect_event(f, QHCA_EVENT_PORT_DOWN, 1);
    g_assert_cmpuint(ft_inject(f, QHCA_FAULT_LINK_UP, 0), ==,
                     QHCA_AQ_SUCCESS);
    ft_assert_port(f, false);
    ft_no_event(f);

    g_assert_cmpuint(ft_inject(f, QHCA_FAULT_LINK_DOWN, 0), ==,
                     QHCA_AQ_SUCCESS);
    ft_link_prop(f, true);              /* the guest still holds it down */
    ft_assert_port(f, false);
    ft_no_event(f);
    g_assert_cmpuint(ft_inject(f, QHCA_FAULT_LINK_UP, 0), ==,
                     QHCA_AQ_SUCCESS);
    ft_expect_event(f, QHCA_EVENT_PORT_ACTIVE, 1);
    ft_assert_port(f, true);
    g_assert_cmpuint(qt_counter(f->t, QHCA_CNT_LINK_DOWNED), ==, 1);

    /* CTRL.RESET ends the guest's LINK_DOWN: the new EQ hears ACTIVE. */
    g_assert_cmpuint(ft_inject(f, QHCA_FAULT_LINK_DOWN, 0), ==,
                     QHCA_AQ_SUCCESS);
    ft_expect_event(f, QHCA_EVENT_PORT_DOWN, 1);
    qt_enable(f->t, 5);
    ft_setup(f);
    ft_expect_event(f, QHCA_EVENT_PORT_ACTIVE, 1);
    ft_assert_port(f, true);
    ft_stop(f);
}

/*
 * While the link is down the wire drops everything: an RC requester
 * retries on its timer and ends with RETRY_EXC_ERR; UD and UC sends
 * complete successfully and nothing arrives.
 */
static void test_link_down_traffic(void)
{
    QhcaCq *cq, *rcq;
    Ft *f = ft_start_cqs(&cq, &rcq);
    QhcaQp *a, *b, *ua, *ub, *ca, *cb;
    g_autofree uint8_t *data = ft_fill(f, 0, 1000, 1);
    uint64_t rx, drops;
    int n;

    ft_rc_pair(f, cq, rcq, 2, &a, &b);
    ua = ft_qp(f, QHCA_QPT_UD, cq, cq, NULL);
    ub = ft_qp(f, QHCA_QPT_UD, rcq, rcq, NULL);
    ca = ft_qp(f, QHCA_QPT_UC, cq, cq, NULL);
    cb = ft_qp(f, QHCA_QPT_UC, rcq, rcq, NULL);
    qt_qp_ud_rts(f->t, ua, FT_QKEY, 0x42);
    qt_qp_ud_rts(f->t, ub, FT_QKEY, 0x42);
    ft_connect(f, ca, cb, 0, 0);
    ft_connect(f, cb, ca, 0, 0);
    ft_post_recv(f, ub, 0x20, 0x10000, 2000);
    ft_post_recv(f, cb, 0x30, 0x11000, 2000);

    g_assert_cmpuint(ft_inject(f, QHCA_FAULT_LINK_DOWN, 0), ==,
                     QHCA_AQ_SUCCESS);
    ft_expect_event(f, QHCA_EVENT_PORT_DOWN, 1);
    rx = qt_counter(f->t, QHCA_CNT_RX_PACKETS);

    /* UD and UC: complete at once, lost on the wire. */
    ft_post_ud(f, ua, ub, 0x21, 0, 1000);
    qt_qp_ring_sq(f->t, ua);
    ft_expect(f, cq, ua, QHCA_WC_SEND, QHCA_WC_SUCCESS);
    ft_post(f, ca, 0x31, QHCA_WR_SEND, 0, 1000, 0);
    qt_qp_ring_sq(f->t, ca);
    ft_expect(f, cq, ca, QHCA_WC_SEND, QHCA_WC_SUCCESS);
    qt_cq_assert_empty(f->t, rcq);
    g_assert_cmpuint(qt_counter(f->t, QHCA_CNT_WIRE_DROPS), ==, 2);

    /* RC: the first try and two retries are lost; the third timeout ends. */
    ft_post(f, a, 0x11, QHCA_WR_RDMA_WRITE, 0, 1000, 0x8000);
    qt_qp_ring_sq(f->t, a);
    qt_wait_counter(f->t, QHCA_CNT_WIRE_DROPS, 3);
    for (n = 0; n < 2; n++) {
        qt_cq_assert_empty(f->t, cq);
        qtest_clock_step(f->t->qts, FT_STEP_NS);
        qt_wait_counter(f->t, QHCA_CNT_RETRIES, n + 1);
    }
    qt_cq_assert_empty(f->t, cq);
    qtest_clock_step(f->t->qts, FT_STEP_NS);
    ft_expect(f, cq, a, QHCA_WC_RDMA_WRITE, QHCA_WC_RETRY_EXC_ERR);
    qt_qp_wait_state(f->t, a, QHCA_QPS_ERR);
    drops = qt_counter(f->t, QHCA_CNT_WIRE_DROPS);
    g_assert_cmpuint(drops, ==, 5);
    g_assert_cmpuint(qt_counter(f->t, QHCA_CNT_RETRIES), ==, 2);
    g_assert_cmpuint(qt_counter(f->t, QHCA_CNT_ERR_RETRY_EXC), ==, 1);
    g_assert_cmpuint(qt_counter(f->t, QHCA_CNT_RX_PACKETS), ==, rx);
    qt_cq_assert_empty(f->t, rcq);
    g_assert_cmpuint(qtest_readb(f->t->qts, f->buf + 0x8000), ==, 0);

    /* Up again: a UD send arrives. */
    g_assert_cmpuint(ft_inject(f, QHCA_FAULT_LINK_UP, 0), ==,
                     QHCA_AQ_SUCCESS);
    ft_expect_event(f, QHCA_EVENT_PORT_ACTIVE, 1);
    ft_post_ud(f, ua, ub, 0x22, 0, 1000);
    qt_qp_ring_sq(f->t, ua);
    ft_expect(f, cq, ua, QHCA_WC_SEND, QHCA_WC_SUCCESS);
    ft_expect(f, rcq, ub, QHCA_WC_RECV, QHCA_WC_SUCCESS);
    ft_check(f, 0x10000 + 40, data, 1000);
    g_assert_cmpuint(qt_counter(f->t, QHCA_CNT_WIRE_DROPS), ==, drops);
    ft_stop(f);
}

/* Step the clock until a CQE turns up on @cq; returns the steps taken. */
static int ft_step_until_cqe(Ft *f, QhcaCq *cq, int max)
{
    int n;

    for (n = 0; n < max; n++) {
        g_usleep(2000);
        if (qt_cq_ready(f->t, cq)) {
            return n;
        }
        qtest_clock_step(f->t->qts, FT_STEP_NS);
    }
    g_assert_not_reached();
}

/*
 * DROP: the next n packets are lost whatever QP sent them; RC recovers by
 * retransmission, data intact.  A new count replaces the old, 0 cancels.
 */
static void test_drop(void)
{
    QhcaCq *cq, *rcq;
    Ft *f = ft_start_cqs(&cq, &rcq);
    QhcaQp *a, *b;
    g_autofree uint8_t *small = ft_fill(f, 0, 1000, 7);
    g_autofree uint8_t *big = ft_fill(f, 0x1000, 8192, 9);
    struct qhca_cqe cqe;

    ft_rc_pair(f, cq, rcq, 7, &a, &b);

    /* One packet lost: the SEND goes again after the timeout. */
    ft_post_recv(f, b, 0x50, 0x10000, 1000);
    g_assert_cmpuint(ft_inject(f, QHCA_FAULT_DROP, 1), ==, QHCA_AQ_SUCCESS);
    ft_post(f, a, 0x51, QHCA_WR_SEND, 0, 1000, 0);
    qt_qp_ring_sq(f->t, a);
    qt_wait_counter(f->t, QHCA_CNT_WIRE_DROPS, 1);
    qt_cq_assert_empty(f->t, cq);
    qt_cq_assert_empty(f->t, rcq);
    ft_step_until_cqe(f, cq, 10);
    ft_expect(f, cq, a, QHCA_WC_SEND, QHCA_WC_SUCCESS);
    cqe = ft_expect(f, rcq, b, QHCA_WC_RECV, QHCA_WC_SUCCESS);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, 1000);
    ft_check(f, 0x10000, small, 1000);
    g_assert_cmpuint(qt_counter(f->t, QHCA_CNT_WIRE_DROPS), ==, 1);
    g_assert_cmpuint(qt_counter(f->t, QHCA_CNT_RETRIES), >=, 1);

    /* A count replaced by a smaller one: only that many are lost. */
    g_assert_cmpuint(ft_inject(f, QHCA_FAULT_DROP, 50), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(ft_inject(f, QHCA_FAULT_DROP, 2), ==, QHCA_AQ_SUCCESS);
    ft_post(f, a, 0x52, QHCA_WR_RDMA_WRITE, 0x1000, 8192, 0x12000);
    qt_qp_ring_sq(f->t, a);
    qt_wait_counter(f->t, QHCA_CNT_WIRE_DROPS, 3);
    ft_step_until_cqe(f, cq, 20);
    ft_expect(f, cq, a, QHCA_WC_RDMA_WRITE, QHCA_WC_SUCCESS);
    ft_check(f, 0x12000, big, 8192);
    g_assert_cmpuint(qt_counter(f->t, QHCA_CNT_WIRE_DROPS), ==, 3);

    /* 0 cancels, and the largest count is accepted. */
    g_assert_cmpuint(ft_inject(f, QHCA_FAULT_DROP, QHCA_FAULT_MAX_DROP), ==,
                     QHCA_AQ_SUCCESS);
    g_assert_cmpuint(ft_inject(f, QHCA_FAULT_DROP, 0), ==, QHCA_AQ_SUCCESS);
    ft_post_recv(f, b, 0x53, 0x10000, 1000);
    qtest_memset(f->t->qts, f->buf + 0x10000, 0, 1000);
    ft_post(f, a, 0x54, QHCA_WR_SEND, 0, 1000, 0);
    qt_qp_ring_sq(f->t, a);
    ft_expect(f, cq, a, QHCA_WC_SEND, QHCA_WC_SUCCESS);
    ft_expect(f, rcq, b, QHCA_WC_RECV, QHCA_WC_SUCCESS);
    ft_check(f, 0x10000, small, 1000);
    g_assert_cmpuint(qt_counter(f->t, QHCA_CNT_WIRE_DROPS), ==, 3);
    g_assert_cmpuint(qt_counter(f->t, QHCA_CNT_FAULTS_INJECTED), ==, 5);
    g_assert_cmpuint(qt_qp_state(f->t, a), ==, QHCA_QPS_RTS);
    g_assert_cmpuint(qt_qp_state(f->t, b), ==, QHCA_QPS_RTS);
    ft_stop(f);
}

/*
 * QP_FATAL: ERR as on an error of the QP's own, its outstanding and later
 * WQEs flushed, the QP_FATAL event; a QP in RESET is BAD_STATE.
 */
static void test_qp_fatal(void)
{
    QhcaCq *scq, *rcq;
    Ft *f = ft_start_cqs(&scq, &rcq);
    QhcaQp *a = ft_qp(f, QHCA_QPT_RC, scq, rcq, NULL);
    QhcaQp *b = ft_qp(f, QHCA_QPT_RC, scq, scq, NULL);
    QhcaQp *c = ft_qp(f, QHCA_QPT_RC, scq, scq, NULL);
    uint64_t guest_errors;
    struct qhca_cqe cqe;

    ft_connect(f, a, b, 0, 7);          /* no timer: stays outstanding */
    ft_connect(f, b, a, 0, 7);
    ft_post_recv(f, a, 0x60, 0x10000, 100);
    ft_post_recv(f, a, 0x61, 0x10100, 100);

    /* A send that is on its way and unanswered: the link is down. */
    ft_link_prop(f, false);
    ft_expect_event(f, QHCA_EVENT_PORT_DOWN, 1);
    ft_post(f, a, 0x62, QHCA_WR_SEND, 0, 100, 0);
    qt_qp_ring_sq(f->t, a);
    qt_wait_counter(f->t, QHCA_CNT_WIRE_DROPS, 1);
    qt_cq_assert_empty(f->t, scq);

    guest_errors = le64_to_cpu(qt_stats(f->t).guest_errors);
    g_assert_cmpuint(ft_inject(f, QHCA_FAULT_QP_FATAL, a->qpn), ==,
                     QHCA_AQ_SUCCESS);
    ft_expect_event(f, QHCA_EVENT_QP_FATAL, a->qpn);
    g_assert_cmpuint(qt_qp_state(f->t, a), ==, QHCA_QPS_ERR);
    cqe = ft_expect(f, scq, a, QHCA_WC_SEND, QHCA_WC_WR_FLUSH_ERR);
    g_assert_cmpuint(le64_to_cpu(cqe.wr_id), ==, 0x62);
    cqe = ft_expect(f, rcq, a, QHCA_WC_RECV, QHCA_WC_WR_FLUSH_ERR);
    g_assert_cmpuint(le64_to_cpu(cqe.wr_id), ==, 0x60);
    cqe = ft_expect(f, rcq, a, QHCA_WC_RECV, QHCA_WC_WR_FLUSH_ERR);
    g_assert_cmpuint(le64_to_cpu(cqe.wr_id), ==, 0x61);

    /* Later WQEs are flushed too. */
    ft_post(f, a, 0x63, QHCA_WR_SEND, 0, 100, 0);
    qt_qp_ring_sq(f->t, a);
    cqe = ft_expect(f, scq, a, QHCA_WC_SEND, QHCA_WC_WR_FLUSH_ERR);
    g_assert_cmpuint(le64_to_cpu(cqe.wr_id), ==, 0x63);
    qt_cq_assert_empty(f->t, scq);
    g_assert_cmpuint(qt_counter(f->t, QHCA_CNT_ERR_WR_FLUSH), ==, 4);

    /* In ERR already: accepted, and said again. */
    g_assert_cmpuint(ft_inject(f, QHCA_FAULT_QP_FATAL, a->qpn), ==,
                     QHCA_AQ_SUCCESS);
    ft_expect_event(f, QHCA_EVENT_QP_FATAL, a->qpn);
    g_assert_cmpuint(qt_qp_state(f->t, a), ==, QHCA_QPS_ERR);

    /* RESET: nothing to break. */
    g_assert_cmpuint(ft_inject(f, QHCA_FAULT_QP_FATAL, c->qpn), ==,
                     QHCA_AQ_BAD_STATE);
    g_assert_cmpuint(qt_qp_state(f->t, c), ==, QHCA_QPS_RESET);
    ft_no_event(f);
    g_assert_cmpuint(qt_counter(f->t, QHCA_CNT_FAULTS_INJECTED), ==, 2);
    /* Neither a fault nor BAD_STATE is a guest error. */
    g_assert_cmpuint(le64_to_cpu(qt_stats(f->t).guest_errors), ==,
                     guest_errors);
    /* Its peer is untouched. */
    g_assert_cmpuint(qt_qp_state(f->t, b), ==, QHCA_QPS_RTS);
    ft_stop(f);
}

/*
 * SRQ_ERR: the SRQ in ERR with its event; the QP that next needs a WQE
 * from it goes to ERR with QP_FATAL and says QP_LAST_WQE.  QP_FATAL on a
 * QP on an SRQ posts QP_LAST_WQE too.
 */
static void test_srq_err(void)
{
    QhcaCq *cq, *rcq;
    Ft *f = ft_start_cqs(&cq, &rcq);
    QhcaSrq *srq = ft_srq(f);
    QhcaSrq *srq2 = ft_srq(f);
    QhcaQp *a = ft_qp(f, QHCA_QPT_RC, cq, cq, NULL);
    QhcaQp *b = ft_qp(f, QHCA_QPT_RC, rcq, rcq, srq);
    QhcaQp *c = ft_qp(f, QHCA_QPT_RC, rcq, rcq, srq2);
    QhcaQp *d = ft_qp(f, QHCA_QPT_RC, cq, cq, NULL);

    ft_connect(f, a, b, FT_RETRY_TIMEOUT, 2);
    ft_connect(f, b, a, FT_RETRY_TIMEOUT, 2);
    ft_connect(f, c, d, FT_RETRY_TIMEOUT, 2);
    ft_connect(f, d, c, FT_RETRY_TIMEOUT, 2);
    ft_post_srq(f, srq, 0x70, 0x10000, 1000);

    g_assert_cmpuint(ft_inject(f, QHCA_FAULT_SRQ_ERR, srq->srqn), ==,
                     QHCA_AQ_SUCCESS);
    ft_expect_event(f, QHCA_EVENT_SRQ_ERR, srq->srqn);
    g_assert_cmpuint(qt_query_srq(f->t, srq->srqn).state, ==,
                     QHCA_SRQ_STATE_ERR);
    g_assert_cmpuint(qt_query_srq(f->t, srq2->srqn).state, ==,
                     QHCA_SRQ_STATE_READY);
    g_assert_cmpuint(ft_inject(f, QHCA_FAULT_SRQ_ERR, srq->srqn), ==,
                     QHCA_AQ_BAD_STATE);
    ft_no_event(f);
    g_assert_cmpuint(qt_qp_state(f->t, b), ==, QHCA_QPS_RTS);

    /* A SEND to B: B needs a WQE from the broken SRQ. */
    ft_post(f, a, 0x71, QHCA_WR_SEND, 0, 100, 0);
    qt_qp_ring_sq(f->t, a);
    ft_expect_event(f, QHCA_EVENT_QP_FATAL, b->qpn);
    ft_expect_event(f, QHCA_EVENT_QP_LAST_WQE, b->qpn);
    qt_qp_wait_state(f->t, b, QHCA_QPS_ERR);
    ft_expect(f, cq, a, QHCA_WC_SEND, QHCA_WC_REM_OP_ERR);
    qt_qp_wait_state(f->t, a, QHCA_QPS_ERR);
    qt_cq_assert_empty(f->t, rcq);

    /* QP_FATAL on a QP on a healthy SRQ: QP_LAST_WQE follows. */
    g_assert_cmpuint(ft_inject(f, QHCA_FAULT_QP_FATAL, c->qpn), ==,
                     QHCA_AQ_SUCCESS);
    ft_expect_event(f, QHCA_EVENT_QP_FATAL, c->qpn);
    ft_expect_event(f, QHCA_EVENT_QP_LAST_WQE, c->qpn);
    g_assert_cmpuint(qt_qp_state(f->t, c), ==, QHCA_QPS_ERR);
    g_assert_cmpuint(qt_query_srq(f->t, srq2->srqn).state, ==,
                     QHCA_SRQ_STATE_READY);
    g_assert_cmpuint(qt_counter(f->t, QHCA_CNT_FAULTS_INJECTED), ==, 2);
    ft_stop(f);
}

/*
 * CQ_ERR: as an overrun (CQ_ERROR, no further CQE, the next QP that
 * completes to it goes to ERR) but not counted as one.
 */
static void test_cq_err(void)
{
    QhcaCq *cq, *rcq;
    Ft *f = ft_start_cqs(&cq, &rcq);
    QhcaQp *a = ft_qp(f, QHCA_QPT_RC, cq, cq, NULL);
    QhcaQp *b = ft_qp(f, QHCA_QPT_RC, cq, rcq, NULL);
    g_autofree uint8_t *data = ft_fill(f, 0, 100, 3);
    uint8_t zero[sizeof(struct qhca_cqe)] = { 0 };
    uint8_t slot[sizeof(struct qhca_cqe)];

    ft_connect(f, a, b, FT_RETRY_TIMEOUT, 2);
    ft_connect(f, b, a, FT_RETRY_TIMEOUT, 2);
    ft_post_recv(f, b, 0x80, 0x10000, 100);

    g_assert_cmpuint(ft_inject(f, QHCA_FAULT_CQ_ERR, rcq->cqn), ==,
                     QHCA_AQ_SUCCESS);
    ft_expect_event(f, QHCA_EVENT_CQ_ERROR, rcq->cqn);
    g_assert_cmpuint(ft_inject(f, QHCA_FAULT_CQ_ERR, rcq->cqn), ==,
                     QHCA_AQ_BAD_STATE);
    ft_no_event(f);

    /* B places the message, cannot complete it, and goes to ERR. */
    ft_post(f, a, 0x81, QHCA_WR_SEND, 0, 100, 0);
    qt_qp_ring_sq(f->t, a);
    qt_qp_wait_state(f->t, b, QHCA_QPS_ERR);
    ft_check(f, 0x10000, data, 100);
    qtest_memread(f->t->qts, rcq->ring, slot, sizeof(slot));
    g_assert(memcmp(slot, zero, sizeof(slot)) == 0);
    g_assert_cmpuint(qt_counter(f->t, QHCA_CNT_CQ_OVERRUNS), ==, 0);
    g_assert_cmpuint(qt_counter(f->t, QHCA_CNT_FAULTS_INJECTED), ==, 1);
    /* B had nothing else to flush; A waits for an ACK that never comes. */
    qt_cq_assert_empty(f->t, cq);
    ft_stop(f);
}

/* Every malformed INJECT_FAULT, its exact status, and no effect. */
static void test_bad_payloads(void)
{
    Ft *f = ft_start(NULL);
    QhcaCq *cq = ft_cq(f, 2);
    QhcaSrq *srq = ft_srq(f);
    struct qhca_cmd_inject_fault p;
    struct qhca_aq_sqe sqe;
    uint64_t guest_errors = le64_to_cpu(qt_stats(f->t).guest_errors);
    uint64_t rejected = 0;
    static const uint16_t bad_types[] = { 0, QHCA_FAULT_AQ_HANG + 1, 0x100,
                                          0xffff };
    static const uint16_t zero_handle[] = { QHCA_FAULT_LINK_DOWN,
                                            QHCA_FAULT_LINK_UP,
                                            QHCA_FAULT_AQ_HANG };
    static const uint32_t bad_handles[] = { 0, 1, 0x1000, 0xffff, 0x10000,
                                            0xffffffffu };
    size_t i;

    /* Reserved fields, with an otherwise harmless LINK_DOWN. */
    p = (struct qhca_cmd_inject_fault) {
        .type = cpu_to_le16(QHCA_FAULT_LINK_DOWN),
        .rsvd0 = cpu_to_le16(1),
    };
    g_assert_cmpuint(ft_inject_raw(f, &p), ==, QHCA_AQ_BAD_PARAM);
    rejected++;
    for (i = 0; i < 8; i++) {
        p = (struct qhca_cmd_inject_fault) {
            .type = cpu_to_le16(QHCA_FAULT_LINK_DOWN),
            .rsvd1 = cpu_to_le64(1ull << (i * 8 + 7)),
        };
        g_assert_cmpuint(ft_inject_raw(f, &p), ==, QHCA_AQ_BAD_PARAM);
        rejected++;
    }
    /* Payload bytes after the 16 of the command. */
    sqe = (struct qhca_aq_sqe) {
        .opcode = cpu_to_le16(QHCA_CMD_INJECT_FAULT),
    };
    p = (struct qhca_cmd_inject_fault) {
        .type = cpu_to_le16(QHCA_FAULT_LINK_DOWN),
    };
    memcpy(sqe.payload, &p, sizeof(p));
    sqe.payload[sizeof(p)] = 1;
    g_assert_cmpuint(qt_submit(f->t, &sqe, NULL), ==, QHCA_AQ_BAD_PARAM);
    rejected++;

    for (i = 0; i < ARRAY_SIZE(bad_types); i++) {
        g_assert_cmpuint(ft_inject(f, bad_types[i], 0), ==,
                         QHCA_AQ_BAD_PARAM);
        rejected++;
    }
    for (i = 0; i < ARRAY_SIZE(zero_handle); i++) {
        g_assert_cmpuint(ft_inject(f, zero_handle[i], 1), ==,
                         QHCA_AQ_BAD_PARAM);
        g_assert_cmpuint(ft_inject(f, zero_handle[i], 0x80000000u), ==,
                         QHCA_AQ_BAD_PARAM);
        rejected += 2;
    }
    g_assert_cmpuint(ft_inject(f, QHCA_FAULT_DROP, QHCA_FAULT_MAX_DROP + 1),
                     ==, QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(ft_inject(f, QHCA_FAULT_DROP, 0xffffffffu), ==,
                     QHCA_AQ_BAD_PARAM);
    rejected += 2;

    /* Handles of no live object; the live CQ and SRQ are 1. */
    for (i = 0; i < ARRAY_SIZE(bad_handles); i++) {
        uint32_t h = bad_handles[i];

        g_assert_cmpuint(ft_inject(f, QHCA_FAULT_QP_FATAL, h), ==,
                         QHCA_AQ_BAD_HANDLE);
        rejected++;
        if (h != cq->cqn) {
            g_assert_cmpuint(ft_inject(f, QHCA_FAULT_CQ_ERR, h), ==,
                             QHCA_AQ_BAD_HANDLE);
            rejected++;
        }
        if (h != srq->srqn) {
            g_assert_cmpuint(ft_inject(f, QHCA_FAULT_SRQ_ERR, h), ==,
                             QHCA_AQ_BAD_HANDLE);
            rejected++;
        }
    }
    /* A destroyed object is no longer there. */
    g_assert_cmpuint(qt_handle_cmd(f->t, QHCA_CMD_DESTROY_CQ, cq->cqn), ==,
                     QHCA_AQ_SUCCESS);
    g_assert_cmpuint(ft_inject(f, QHCA_FAULT_CQ_ERR, cq->cqn), ==,
                     QHCA_AQ_BAD_HANDLE);
    rejected++;
    /* Reserved fields come before the type and the handle. */
    p = (struct qhca_cmd_inject_fault) {
        .type = cpu_to_le16(QHCA_FAULT_QP_FATAL),
        .handle = cpu_to_le32(12345),
        .rsvd1 = cpu_to_le64(1),
    };
    g_assert_cmpuint(ft_inject_raw(f, &p), ==, QHCA_AQ_BAD_PARAM);
    rejected++;

    /* Nothing happened: port up, no event, queue alive, nothing counted. */
    ft_assert_port(f, true);
    ft_no_event(f);
    g_assert_cmpuint(qt_query_srq(f->t, srq->srqn).state, ==,
                     QHCA_SRQ_STATE_READY);
    g_assert_cmpuint(qt_counter(f->t, QHCA_CNT_FAULTS_INJECTED), ==, 0);
    g_assert_cmpuint(qt_counter(f->t, QHCA_CNT_WIRE_DROPS), ==, 0);
    g_assert_cmphex(qt_rd(f->t, QHCA_REG_STATUS), ==, QHCA_STATUS_READY);
    /* Malformed commands are guest errors, one each. */
    g_assert_cmpuint(le64_to_cpu(qt_stats(f->t).guest_errors), ==,
                     guest_errors + rejected);
    ft_stop(f);
}

/* Queue AQ_HANG and ring; no completion comes for it. */
static void ft_hang(Ft *f)
{
    struct qhca_aq_sqe sqe = {
        .opcode = cpu_to_le16(QHCA_CMD_INJECT_FAULT),
    };
    struct qhca_cmd_inject_fault p = {
        .type = cpu_to_le16(QHCA_FAULT_AQ_HANG),
    };

    memcpy(sqe.payload, &p, sizeof(p));
    qt_queue_sqe(f->t, &sqe);
    qt_ring_sq(f->t);
    qt_assert_no_cqe(f->t);
}

/* After a reset of the function: bus mastering and the BARs anew. */
static void ft_pci_reenable(QhcaTest *t)
{
    qpci_device_enable(t->dev);
    t->bar0 = qpci_iomap(t->dev, QHCA_REG_BAR, NULL);
    t->bar2 = qpci_iomap(t->dev, QHCA_DB_BAR, &t->bar2_size);
}

/*
 * AQ_HANG: no completion for it or anything after it, STATUS unchanged,
 * doorbells harmless, the data path and events alive; ENABLE cleared,
 * CTRL.RESET or a function-level reset brings the queue back.
 */
static void test_aq_hang(void)
{
    QhcaCq *cq, *rcq;
    Ft *f = ft_start_cqs(&cq, &rcq);
    QhcaTest *t = f->t;
    QhcaQp *a, *b;
    g_autofree uint8_t *data = ft_fill(f, 0, 500, 5);
    struct qhca_aq_sqe sqe = { .opcode = cpu_to_le16(QHCA_CMD_ALLOC_PD) };
    struct qhca_stats st;
    int i;

    ft_rc_pair(f, cq, rcq, 7, &a, &b);
    ft_post_recv(f, b, 0x90, 0x10000, 500);

    ft_hang(f);
    g_assert_cmphex(qt_rd(t, QHCA_REG_STATUS), ==, QHCA_STATUS_READY);
    g_assert_cmphex(qt_rd(t, QHCA_REG_ERROR), ==, QHCA_ERR_NONE);

    /* Later commands wait forever; doorbells change nothing. */
    qt_queue_sqe(t, &sqe);
    qt_ring_sq(t);
    for (i = 0; i < 1000; i++) {
        qt_ring_sq(t);
        qt_wr(t, QHCA_REG_AQ_CQ_DB, t->cq_head);
    }
    qt_assert_no_cqe(t);
    g_assert_cmphex(qt_rd(t, QHCA_REG_STATUS), ==, QHCA_STATUS_READY);
    g_assert_cmphex(qt_rd(t, QHCA_REG_ERROR), ==, QHCA_ERR_NONE);

    /* The data path and the events go on. */
    ft_post(f, a, 0x91, QHCA_WR_SEND, 0, 500, 0);
    qt_qp_ring_sq(f->t, a);
    ft_expect(f, cq, a, QHCA_WC_SEND, QHCA_WC_SUCCESS);
    ft_expect(f, rcq, b, QHCA_WC_RECV, QHCA_WC_SUCCESS);
    ft_check(f, 0x10000, data, 500);
    ft_link_prop(f, false);
    ft_expect_event(f, QHCA_EVENT_PORT_DOWN, 1);
    ft_link_prop(f, true);
    ft_expect_event(f, QHCA_EVENT_PORT_ACTIVE, 1);
    qt_assert_no_cqe(t);

    /* ENABLE cleared: the queue starts again, the objects are kept. */
    qt_wr(t, QHCA_REG_CTRL, 0);
    qt_aq_rewind(t);
    qt_wr(t, QHCA_REG_CTRL, QHCA_CTRL_ENABLE);
    g_assert_cmphex(qt_rd(t, QHCA_REG_STATUS), ==, QHCA_STATUS_READY);
    st = qt_stats(f->t);
    g_assert_cmpuint(le32_to_cpu(st.pds), ==, 1);   /* ALLOC_PD never ran */
    g_assert_cmpuint(le32_to_cpu(st.qps), ==, 2);
    g_assert_cmpuint(qt_counter(f->t, QHCA_CNT_FAULTS_INJECTED), ==, 1);
    g_assert_cmpuint(qt_cmd(t, QHCA_CMD_ALLOC_PD, NULL, 0, NULL), ==,
                     QHCA_AQ_SUCCESS);

    /* CTRL.RESET ends it too. */
    ft_hang(f);
    qt_enable(t, 5);
    st = qt_stats(f->t);
    g_assert_cmpuint(le32_to_cpu(st.pds), ==, 0);
    g_assert_cmpuint(le32_to_cpu(st.qps), ==, 0);
    g_assert_cmpuint(le64_to_cpu(st.guest_errors), ==, 0);
    ft_setup(f);
    ft_expect_event(f, QHCA_EVENT_PORT_ACTIVE, 1);

    /* And so does a function-level reset. */
    ft_hang(f);
    qpci_config_writew(t->dev, qpci_find_capability(t->dev, PCI_CAP_ID_EXP,
                                                    0) + PCI_EXP_DEVCTL,
                       PCI_EXP_DEVCTL_BCR_FLR);
    ft_pci_reenable(t);
    qt_enable(t, 5);
    g_assert_cmpuint(le32_to_cpu(qt_stats(f->t).pds), ==, 0);
    ft_setup(f);
    ft_expect_event(f, QHCA_EVENT_PORT_ACTIVE, 1);
    ft_stop(f);
}

/*
 * WRITTEN is set in every CQE, in both phases: a CQ of 4 entries goes
 * round three times; error and flush CQEs carry it too.
 */
static void test_cqe_written(void)
{
    Ft *f = ft_start(NULL);
    QhcaCq *cq = ft_cq(f, 2);
    QhcaQp *a, *b;
    struct qhca_cqe cqe;
    int i;

    ft_rc_pair(f, cq, cq, 7, &a, &b);
    for (i = 0; i < 12; i++) {
        uint64_t slot = cq->ring + (cq->ci % cq->entries) *
                        sizeof(struct qhca_cqe);
        uint8_t phase = ((cq->ci / cq->entries) & 1) ^ 1;

        ft_post(f, a, i, QHCA_WR_RDMA_WRITE, 0, 64, 0x4000);
        qt_qp_ring_sq(f->t, a);
        ft_expect(f, cq, a, QHCA_WC_RDMA_WRITE, QHCA_WC_SUCCESS);
        g_assert_cmphex(qtest_readb(f->t->qts, slot +
                                    offsetof(struct qhca_cqe, owner)), ==,
                        QHCA_CQE_OWNER_WRITTEN | phase);
    }
    /* A flush CQE: ft_expect() checks the owner byte of each. */
    ft_post_recv(f, a, 0xa0, 0x10000, 64);
    g_assert_cmpuint(ft_inject(f, QHCA_FAULT_QP_FATAL, a->qpn), ==,
                     QHCA_AQ_SUCCESS);
    cqe = ft_expect(f, cq, a, QHCA_WC_RECV, QHCA_WC_WR_FLUSH_ERR);
    g_assert_cmphex(cqe.owner & QHCA_CQE_OWNER_WRITTEN, ==,
                    QHCA_CQE_OWNER_WRITTEN);
    ft_stop(f);
}

/* Fill @len bytes at @addr with the poison byte; check it is still there. */
#define FT_POISON           0xa5

typedef struct FtRange {
    uint64_t addr;
    uint64_t len;
} FtRange;

static void ft_poison(QTestState *qts, const FtRange *r, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        qtest_memset(qts, r[i].addr, FT_POISON, r[i].len);
    }
}

static void ft_assert_poisoned(QTestState *qts, const FtRange *r, size_t n)
{
    size_t i;
    uint64_t j;

    for (i = 0; i < n; i++) {
        g_autofree uint8_t *got = g_malloc(r[i].len);

        qtest_memread(qts, r[i].addr, got, r[i].len);
        for (j = 0; j < r[i].len; j++) {
            if (got[j] != FT_POISON) {
                g_error("range %zu (0x%" PRIx64 "+0x%" PRIx64 ") written at "
                        "+0x%" PRIx64 " after the reset: 0x%02x", i,
                        r[i].addr, r[i].len, j, got[j]);
            }
        }
    }
}

/*
 * A system reset with RC traffic in flight (packets being dropped, retry
 * timers armed, WQEs queued): afterwards the device writes nothing into
 * the memory the guest had given it, however long the clock runs, and it
 * comes up clean, without the old drops pending.
 */
static void test_system_reset(void)
{
    Ft *f = ft_start(NULL);
    QhcaTest *t = f->t;
    QhcaCq *cq = ft_cq(f, 8);
    QhcaCq *rcq = ft_cq(f, 8);
    QhcaQp *a, *b, *c2, *d2;
    FtRange r[20];
    size_t n = 0;
    struct qhca_stats st;
    struct qhca_counters c;
    uint64_t aq_sq = t->sq, aq_cq = t->cq;
    uint8_t *data;
    int i;

    ft_rc_pair(f, cq, rcq, 7, &a, &b);
    ft_rc_pair(f, cq, rcq, 7, &c2, &d2);
    data = ft_fill(f, 0, 0x8000, 11);
    g_free(data);
    for (i = 0; i < 16; i++) {
        ft_post_recv(f, b, 0x100 + i, 0x10000 + i * 0x100, 0x100);
        ft_post_recv(f, d2, 0x400 + i, 0x18000 + i * 0x800, 0x800);
    }

    /*
     * A to B: sent while the cable is out, so every packet is lost and
     * the retry timers are armed; the cable goes back in before the
     * reset, so that a timer the reset forgot would deliver them.
     */
    ft_link_prop(f, false);
    for (i = 0; i < 16; i++) {
        ft_post(f, a, 0x200 + i, QHCA_WR_RDMA_WRITE, i * 0x800, 0x800,
                0x8000 + i * 0x800);
    }
    for (i = 0; i < 16; i++) {
        ft_post(f, a, 0x300 + i, QHCA_WR_SEND, i * 0x100, 0x100, 0);
    }
    qt_qp_ring_sq(f->t, a);
    qt_wait_counter(f->t, QHCA_CNT_WIRE_DROPS, 1);
    ft_link_prop(f, true);
    /* C to D: queued just before the reset, in flight when it comes. */
    for (i = 0; i < 16; i++) {
        ft_post(f, c2, 0x500 + i, QHCA_WR_SEND, i * 0x800, 0x800, 0);
    }
    qt_qp_ring_sq(f->t, c2);
    /* Drops still pending at the reset must not outlive it. */
    g_assert_cmpuint(ft_inject(f, QHCA_FAULT_DROP, QHCA_FAULT_MAX_DROP), ==,
                     QHCA_AQ_SUCCESS);

    qtest_system_reset(t->qts);

    /* Everything the device was given, poisoned; nothing may change it. */
    r[n++] = (FtRange) { aq_sq, t->entries * sizeof(struct qhca_aq_sqe) };
    r[n++] = (FtRange) { aq_cq, t->entries * sizeof(struct qhca_aq_cqe) };
    r[n++] = (FtRange) { f->eq.ring, f->eq.entries * sizeof(struct qhca_eqe) };
    r[n++] = (FtRange) { cq->ring, cq->entries * sizeof(struct qhca_cqe) };
    r[n++] = (FtRange) { rcq->ring, rcq->entries * sizeof(struct qhca_cqe) };
    r[n++] = (FtRange) { cq->dbrec, 4 };
    r[n++] = (FtRange) { rcq->dbrec, 4 };
    r[n++] = (FtRange) { a->sq, 1ull << (FT_SQ_LOG2 + FT_SQ_STRIDE_LOG2) };
    r[n++] = (FtRange) { a->rq, 1ull << (FT_RQ_LOG2 + FT_RQ_STRIDE_LOG2) };
    r[n++] = (FtRange) { b->sq, 1ull << (FT_SQ_LOG2 + FT_SQ_STRIDE_LOG2) };
    r[n++] = (FtRange) { b->rq, 1ull << (FT_RQ_LOG2 + FT_RQ_STRIDE_LOG2) };
    r[n++] = (FtRange) { c2->sq, 1ull << (FT_SQ_LOG2 + FT_SQ_STRIDE_LOG2) };
    r[n++] = (FtRange) { d2->rq, 1ull << (FT_RQ_LOG2 + FT_RQ_STRIDE_LOG2) };
    r[n++] = (FtRange) { f->buf, FT_BUF_SIZE };
    /* The response buffer last: the test's own commands use it again. */
    r[n++] = (FtRange) { t->resp, 4096 };
    ft_poison(t->qts, r, n);
    for (i = 0; i < 40; i++) {
        qtest_clock_step(t->qts, FT_STEP_NS);
        g_usleep(1000);
    }
    ft_assert_poisoned(t->qts, r, n);

    ft_pci_reenable(t);
    ft_assert_poisoned(t->qts, r, n);
    g_assert_cmphex(qt_rd(t, QHCA_REG_STATUS), ==, 0);
    g_assert_cmphex(qt_rd(t, QHCA_REG_CTRL), ==, 0);
    qt_assert_alive(t);
    qt_enable(t, 5);
    n--;
    st = qt_stats(f->t);
    g_assert_cmpuint(le32_to_cpu(st.uars), ==, 0);
    g_assert_cmpuint(le32_to_cpu(st.pds), ==, 0);
    g_assert_cmpuint(le32_to_cpu(st.eqs), ==, 0);
    g_assert_cmpuint(le32_to_cpu(st.cqs), ==, 0);
    g_assert_cmpuint(le32_to_cpu(st.qps), ==, 0);
    g_assert_cmpuint(le32_to_cpu(st.mrs), ==, 0);
    g_assert_cmpuint(le32_to_cpu(st.srqs), ==, 0);
    g_assert_cmpuint(le64_to_cpu(st.guest_errors), ==, 0);
    c = qt_counters(f->t);
    for (i = 0; i < QHCA_CNT_NUM; i++) {
        g_assert_cmpuint(le64_to_cpu(c.cnt[i]), ==, 0);
    }
    ft_assert_poisoned(t->qts, r, n);

    /* Up clean: traffic flows and no old drop is pending. */
    ft_setup(f);
    ft_expect_event(f, QHCA_EVENT_PORT_ACTIVE, 1);
    cq = ft_cq(f, 6);
    rcq = ft_cq(f, 6);
    ft_rc_pair(f, cq, rcq, 7, &a, &b);
    data = ft_fill(f, 0, 3000, 13);
    ft_post_recv(f, b, 1, 0x10000, 3000);
    ft_post(f, a, 2, QHCA_WR_SEND, 0, 3000, 0);
    qt_qp_ring_sq(f->t, a);
    ft_expect(f, cq, a, QHCA_WC_SEND, QHCA_WC_SUCCESS);
    ft_expect(f, rcq, b, QHCA_WC_RECV, QHCA_WC_SUCCESS);
    ft_check(f, 0x10000, data, 3000);
    g_free(data);
    g_assert_cmpuint(qt_counter(f->t, QHCA_CNT_WIRE_DROPS), ==, 0);
    ft_assert_poisoned(t->qts, r, n);
    ft_stop(f);
}

/*
 * Doorbells rung just before a QP or CQ goes away must not reach the
 * object that takes its number next.  The VM is stopped so that the
 * engine holds them, unread, until after the new object is set up.
 */
static void test_stale_doorbells(void)
{
    static const char *const how[] = { "destroy", "reset", "system_reset" };
    size_t i;

    for (i = 0; i < ARRAY_SIZE(how); i++) {
        Ft *f = ft_start(NULL);
        QhcaTest *t = f->t;
        QhcaCq *cq = ft_cq(f, 6);
        uint32_t qpn, cqn = cq->cqn;
        struct qhca_qp_attr attr;
        QhcaQp *a, *b;

        ft_rc_pair(f, cq, cq, 7, &a, &b);
        qpn = a->qpn;

        qtest_qmp_assert_success(t->qts, "{ 'execute': 'stop' }");
        /* Five WQEs announced (never written) and an armed CQ. */
        a->sq_pi = 5;
        qt_qp_ring_sq(f->t, a);
        qpci_io_writel(t->dev, t->bar2, f->uar * QHCA_DB_PAGE_SIZE +
                       QHCA_DB_CQ_ARM, cq->cqn << 16);
        if (!strcmp(how[i], "destroy")) {
            g_assert_cmpuint(qt_handle_cmd(t, QHCA_CMD_DESTROY_QP, qpn), ==,
                             QHCA_AQ_SUCCESS);
            g_assert_cmpuint(qt_handle_cmd(t, QHCA_CMD_DESTROY_QP, qpn + 1),
                             ==, QHCA_AQ_SUCCESS);
            g_assert_cmpuint(qt_handle_cmd(t, QHCA_CMD_DESTROY_CQ, cqn), ==,
                             QHCA_AQ_SUCCESS);
        } else {
            if (!strcmp(how[i], "reset")) {
                qt_reset(t);
            } else {
                qtest_qmp_assert_success(t->qts,
                                         "{ 'execute': 'system_reset' }");
                qtest_qmp_eventwait(t->qts, "RESET");
                ft_pci_reenable(t);
            }
            qt_enable(t, 5);
            ft_setup(f);
            ft_expect_event(f, QHCA_EVENT_PORT_ACTIVE, 1);
        }
        /* The same numbers again, ready to go. */
        cq = ft_cq(f, 6);
        ft_rc_pair(f, cq, cq, 7, &a, &b);
        g_assert_cmpuint(a->qpn, ==, qpn);
        g_assert_cmpuint(cq->cqn, ==, cqn);
        qtest_qmp_assert_success(t->qts, "{ 'execute': 'cont' }");

        /*
         * Nothing ran: no CQE in the time the engine takes to handle a
         * doorbell, no WQE taken, no event.
         */
        qt_cq_assert_empty(f->t, cq);
        attr = qt_query_qp(t, qpn);
        g_assert_cmpuint(le16_to_cpu(attr.sq_ci), ==, 0);
        g_assert_cmpuint(attr.state, ==, QHCA_QPS_RTS);
        /* A CQE of its own raises no completion event: nobody armed it. */
        ft_post(f, a, 0x77, QHCA_WR_RDMA_WRITE, 0, 8, 0x100);
        qt_qp_ring_sq(f->t, a);
        ft_expect(f, cq, a, QHCA_WC_RDMA_WRITE, QHCA_WC_SUCCESS);
        ft_no_event(f);
        ft_stop(f);
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/qhca/fault/caps", test_caps);
    qtest_add_func("/qhca/fault/property-off", test_property_off);
    qtest_add_func("/qhca/fault/link", test_link_fault);
    qtest_add_func("/qhca/fault/link-property", test_link_property);
    qtest_add_func("/qhca/fault/link-host-and-guest",
                   test_link_host_and_guest);
    qtest_add_func("/qhca/fault/link-down-traffic", test_link_down_traffic);
    qtest_add_func("/qhca/fault/drop", test_drop);
    qtest_add_func("/qhca/fault/qp-fatal", test_qp_fatal);
    qtest_add_func("/qhca/fault/srq-err", test_srq_err);
    qtest_add_func("/qhca/fault/cq-err", test_cq_err);
    qtest_add_func("/qhca/fault/bad-payloads", test_bad_payloads);
    qtest_add_func("/qhca/fault/aq-hang", test_aq_hang);
    qtest_add_func("/qhca/fault/cqe-written", test_cqe_written);
    qtest_add_func("/qhca/fault/system-reset", test_system_reset);
    qtest_add_func("/qhca/fault/stale-doorbells", test_stale_doorbells);
    return g_test_run();
}
