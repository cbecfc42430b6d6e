/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qtest for the shared receive queues of qhca (interface 1.2): the SRQ
 * commands with every malformed field, QPs attached to an SRQ, the SRQ
 * doorbell with bad queue numbers, pages and indices, and RC SENDs from
 * several QPs received through one SRQ in ring order, with the limit
 * event, the last-WQE event of a QP moved to ERR, and data checked byte
 * for byte.  The test plays the driver, with plain memory accesses.
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qhca-qtest.h"

#define SQ_LOG2             4
#define SQ_STRIDE_LOG2      7
#define SRQ_LOG2            3               /* 8 WQEs */
#define SRQ_STRIDE_LOG2     6               /* header + 3 SGEs */
#define BUF                 2048            /* one receive buffer */
#define EVENTS              ((1u << QHCA_EVENT_COMPLETION) | \
                             (1u << QHCA_EVENT_QP_FATAL) | \
                             (1u << QHCA_EVENT_SRQ_LIMIT) | \
                             (1u << QHCA_EVENT_QP_LAST_WQE) | \
                             (1u << QHCA_EVENT_SRQ_ERR))

typedef struct Srt {
    QhcaTest *t;
    uint32_t uar;
    uint32_t pdn;
    QhcaEq eq;
    uint32_t lkey;              /* a physical MR over all of RAM */
} Srt;

#define CQ_LOG2             6

static Srt *srt_start(const char *props)
{
    Srt *s = g_new0(Srt, 1);

    s->t = qt_start_dp(props, &s->uar, &s->pdn, &s->eq, EVENTS);
    s->lkey = qt_reg_phys_mr(s->t, s->pdn, QHCA_ACCESS_LOCAL_WRITE, 0x5a,
                             12);
    return s;
}

static void srt_stop(Srt *s)
{
    qt_assert_alive(s->t);
    qhca_stop(s->t);
    g_free(s);
}

/* The next event other than a completion event, or type 0. */
static struct qhca_eqe srt_event(Srt *s, bool wait)
{
    struct qhca_eqe e;

    for (;;) {
        if (!qt_eq_next(s->t, &s->eq, wait, &e)) {
            return (struct qhca_eqe) { 0 };
        }
        if (e.type != QHCA_EVENT_COMPLETION) {
            return e;
        }
    }
}

static void srt_expect_event(Srt *s, uint8_t type, uint32_t data)
{
    struct qhca_eqe e = srt_event(s, true);

    g_assert_cmpuint(e.type, ==, type);
    g_assert_cmpuint(le32_to_cpu(e.data), ==, data);
}

/* No event but completions within 20 ms, as qt_eq_assert_quiet(). */
static void srt_no_event(Srt *s)
{
    int i;

    for (i = 0; i < 20; i++) {
        g_assert_cmpuint(srt_event(s, false).type, ==, 0);
        g_usleep(1000);
    }
}

static QhcaCq *srt_cq(Srt *s)
{
    return qt_cq_new(s->t, CQ_LOG2, s->eq.eqn, s->uar);
}

/* A CREATE_SRQ of the test's shape, its ring allocated; not submitted. */
static struct qhca_cmd_create_srq srt_srq_params(Srt *s)
{
    QhcaSrq scratch;

    return qt_srq_prepare(s->t, &scratch, s->pdn, s->uar, SRQ_LOG2,
                          SRQ_STRIDE_LOG2);
}

static uint8_t srt_create_srq_cmd(Srt *s, struct qhca_cmd_create_srq *c,
                                  uint32_t *srqn)
{
    return qt_cmd(s->t, QHCA_CMD_CREATE_SRQ, c, sizeof(*c), srqn);
}

static QhcaSrq *srt_srq(Srt *s)
{
    return qt_srq_new(s->t, s->pdn, s->uar, SRQ_LOG2, SRQ_STRIDE_LOG2);
}

static uint8_t srt_modify_srq(Srt *s, uint32_t srqn, uint32_t mask,
                              uint32_t limit)
{
    struct qhca_cmd_modify_srq m = {
        .srqn = cpu_to_le32(srqn),
        .attr_mask = cpu_to_le32(mask),
        .limit = cpu_to_le32(limit),
    };

    return qt_cmd(s->t, QHCA_CMD_MODIFY_SRQ, &m, sizeof(m), NULL);
}

static void srt_srq_db(Srt *s, uint32_t uar, uint32_t srqn, uint16_t idx)
{
    qt_db(s->t, uar, QHCA_DB_SRQ, srqn, idx);
}

/* Write a receive WQE of one SGE at the producer index; no doorbell. */
static void srt_srq_wqe(Srt *s, QhcaSrq *srq, uint64_t wr_id, uint64_t buf,
                        uint32_t len)
{
    struct qhca_sge sge = qt_sge(buf, len, s->lkey);

    qt_srq_write(s->t, srq, wr_id, &sge, 1);
}

/* An RC QP on @cq, without an RQ: the caller adds one or an SRQ. */
static QhcaQpSpec srt_qp_spec(Srt *s, QhcaCq *cq)
{
    return (QhcaQpSpec) {
        .type = QHCA_QPT_RC,
        .pdn = s->pdn,
        .uar = s->uar,
        .send_cqn = cq->cqn,
        .recv_cqn = cq->cqn,
        .sq_log2 = SQ_LOG2,
        .sq_stride_log2 = SQ_STRIDE_LOG2,
    };
}

/* Its CREATE_QP, the SQ allocated; not submitted. */
static struct qhca_cmd_create_qp srt_qp_params(Srt *s, QhcaCq *cq)
{
    QhcaQpSpec spec = srt_qp_spec(s, cq);
    QhcaQp scratch;

    return qt_qp_prepare(s->t, &scratch, &spec);
}

/* A QP on @srq, or with an RQ of its own when @srq is NULL. */
static QhcaQp *srt_qp(Srt *s, QhcaCq *cq, QhcaSrq *srq)
{
    QhcaQpSpec spec = srt_qp_spec(s, cq);

    spec.srq = srq;
    spec.rq_log2 = 4;
    spec.rq_stride_log2 = 6;
    return qt_qp_new(s->t, &spec);
}

/* RESET -> INIT -> RTR -> RTS towards @dest, RNR retries forever. */
static void srt_connect_one(Srt *s, QhcaQp *qp, QhcaQp *dest)
{
    static const QhcaPath path = {
        .rc = true,
        .dlid = QT_LID,
        .mtu = QT_MTU_1024,
        .min_rnr_timer = 1,
        .timeout = 14,
        .retry_cnt = 7,
        .rnr_retry = 7,
    };

    qt_qp_connect(s->t, qp, dest, &path, 0);
}

static void srt_connect(Srt *s, QhcaQp *a, QhcaQp *b)
{
    srt_connect_one(s, a, b);
    srt_connect_one(s, b, a);
}

/* A signaled SEND of @len bytes at @buf; rings the doorbell. */
static void srt_send(Srt *s, QhcaQp *qp, uint64_t wr_id, uint64_t buf,
                     uint32_t len)
{
    struct qhca_sq_wqe w = {
        .wr_id = cpu_to_le64(wr_id),
        .opcode = QHCA_WR_SEND,
        .flags = QHCA_WQE_F_SIGNALED,
        .num_sge = 1,
    };
    struct qhca_sge sge = qt_sge(buf, len, s->lkey);

    qt_qp_post_send(s->t, qp, &w, &sge, 1);
    qt_qp_ring_sq(s->t, qp);
}

/* ------------------------------------------------------------------ */

static void test_device_caps(void)
{
    Srt *s = srt_start(",max-srqs=7,max-srq-wr=512");
    struct qhca_device_attr a;

    g_assert_cmpuint(qt_query(s->t, QHCA_CMD_QUERY_DEVICE, NULL, 0, &a,
                              sizeof(a)), ==, QHCA_AQ_SUCCESS);
    g_assert_true(le32_to_cpu(a.device_cap_flags) & QHCA_DEV_CAP_SRQ);
    g_assert_true(le32_to_cpu(a.device_cap_flags) & QHCA_DEV_CAP_RESIZE_SRQ);
    g_assert_cmpuint(le32_to_cpu(a.max_srq), ==, 7);
    g_assert_cmpuint(le32_to_cpu(a.max_srq_wr), ==, 512);
    g_assert_cmpuint(le32_to_cpu(a.max_srq_sge), ==, le32_to_cpu(a.max_sge));
    srt_stop(s);
}

static void test_bad_props(void)
{
    static const struct {
        const char *name;
        int64_t value;
    } bad[] = {
        { "max-srqs", 0 }, { "max-srqs", 65536 },
        { "max-srq-wr", 1 }, { "max-srq-wr", 32769 },
    };
    QTestState *qts = qt_hotplug_start();
    size_t i;

    for (i = 0; i < ARRAY_SIZE(bad); i++) {
        qt_assert_prop_out_of_range(qts, bad[i].name, bad[i].value);
    }
    qtest_quit(qts);
}

static void test_srq_commands(void)
{
    Srt *s = srt_start(",max-srqs=2,max-srq-wr=256");
    QhcaTest *t = s->t;
    struct qhca_cmd_handle nothing = { .handle = cpu_to_le32(0xffff) };
    struct qhca_cmd_create_srq c;
    struct qhca_srq_attr a;
    uint32_t srqn, srqn2, n;
    struct qhca_stats st;

    c = srt_srq_params(s);
    g_assert_cmpuint(srt_create_srq_cmd(s, &c, &srqn), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(srqn, >=, 1);
    a = qt_query_srq(s->t, srqn);
    g_assert_cmpuint(le32_to_cpu(a.srqn), ==, srqn);
    g_assert_cmpuint(le32_to_cpu(a.pdn), ==, s->pdn);
    g_assert_cmpuint(a.depth_log2, ==, SRQ_LOG2);
    g_assert_cmpuint(a.stride_log2, ==, SRQ_STRIDE_LOG2);
    g_assert_cmpuint(a.state, ==, QHCA_SRQ_STATE_READY);
    g_assert_cmpuint(le32_to_cpu(a.limit), ==, 0);
    g_assert_cmpuint(le16_to_cpu(a.pi), ==, 0);
    g_assert_cmpuint(le16_to_cpu(a.ci), ==, 0);
    g_assert_cmpuint(le32_to_cpu(a.qp_refs), ==, 0);

    /* Every malformed field of CREATE_SRQ. */
    c = srt_srq_params(s);
    c.rsvd0 = cpu_to_le16(1);
    g_assert_cmpuint(srt_create_srq_cmd(s, &c, &n), ==, QHCA_AQ_BAD_PARAM);
    c = srt_srq_params(s);
    c.rsvd1 = cpu_to_le64(1);
    g_assert_cmpuint(srt_create_srq_cmd(s, &c, &n), ==, QHCA_AQ_BAD_PARAM);
    c = srt_srq_params(s);
    c.depth_log2 = 0;
    g_assert_cmpuint(srt_create_srq_cmd(s, &c, &n), ==, QHCA_AQ_BAD_PARAM);
    c.depth_log2 = 9;                   /* max-srq-wr is 256 */
    g_assert_cmpuint(srt_create_srq_cmd(s, &c, &n), ==, QHCA_AQ_BAD_PARAM);
    c = srt_srq_params(s);
    c.stride_log2 = QHCA_RQ_MIN_STRIDE_LOG2 - 1;
    g_assert_cmpuint(srt_create_srq_cmd(s, &c, &n), ==, QHCA_AQ_BAD_PARAM);
    c.stride_log2 = QHCA_WQE_MAX_STRIDE_LOG2 + 1;
    g_assert_cmpuint(srt_create_srq_cmd(s, &c, &n), ==, QHCA_AQ_BAD_PARAM);
    c = srt_srq_params(s);
    c.limit = cpu_to_le32((1u << SRQ_LOG2) + 1);
    g_assert_cmpuint(srt_create_srq_cmd(s, &c, &n), ==, QHCA_AQ_BAD_PARAM);
    c = srt_srq_params(s);
    c.ring_addr = cpu_to_le64(le64_to_cpu(c.ring_addr) + 8);
    g_assert_cmpuint(srt_create_srq_cmd(s, &c, &n), ==, QHCA_AQ_BAD_PARAM);
    c = srt_srq_params(s);
    c.pdn = cpu_to_le32(s->pdn + 1);
    g_assert_cmpuint(srt_create_srq_cmd(s, &c, &n), ==, QHCA_AQ_BAD_HANDLE);
    c = srt_srq_params(s);
    c.uar = cpu_to_le32(s->uar + 1);
    g_assert_cmpuint(srt_create_srq_cmd(s, &c, &n), ==, QHCA_AQ_BAD_HANDLE);
    c = srt_srq_params(s);
    c.ring_addr = cpu_to_le64(RAM_END - 64);
    g_assert_cmpuint(srt_create_srq_cmd(s, &c, &n), ==,
                     QHCA_AQ_BAD_ADDRESS);
    c.ring_addr = cpu_to_le64(0xfffffffffffff000ull);
    g_assert_cmpuint(srt_create_srq_cmd(s, &c, &n), ==,
                     QHCA_AQ_BAD_ADDRESS);

    /* The table holds max-srqs. */
    c = srt_srq_params(s);
    c.limit = cpu_to_le32(1u << SRQ_LOG2);
    g_assert_cmpuint(srt_create_srq_cmd(s, &c, &srqn2), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(le32_to_cpu(qt_query_srq(s->t, srqn2).limit), ==,
                     1u << SRQ_LOG2);
    g_assert_cmpuint(srt_create_srq_cmd(s, &c, &n), ==,
                     QHCA_AQ_NO_RESOURCES);
    st = qt_stats(t);
    g_assert_cmpuint(le32_to_cpu(st.srqs), ==, 2);

    /* MODIFY_SRQ. */
    g_assert_cmpuint(srt_modify_srq(s, srqn, QHCA_SRQ_ATTR_LIMIT, 3), ==,
                     QHCA_AQ_SUCCESS);
    g_assert_cmpuint(le32_to_cpu(qt_query_srq(s->t, srqn).limit), ==, 3);
    g_assert_cmpuint(srt_modify_srq(s, srqn, QHCA_SRQ_ATTR_LIMIT,
                                    (1u << SRQ_LOG2) + 1), ==,
                     QHCA_AQ_BAD_PARAM);
    /* MAX_WR (1.6) without its ring; a bit no version defines. */
    g_assert_cmpuint(srt_modify_srq(s, srqn, 0x2, 0), ==, QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(srt_modify_srq(s, srqn, 0x4, 0), ==, QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(srt_modify_srq(s, srqn, 0, 5), ==, QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(srt_modify_srq(s, srqn, 0, 0), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(srt_modify_srq(s, 0, QHCA_SRQ_ATTR_LIMIT, 1), ==,
                     QHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(srt_modify_srq(s, 3, QHCA_SRQ_ATTR_LIMIT, 1), ==,
                     QHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(le32_to_cpu(qt_query_srq(s->t, srqn).limit), ==, 3);
    g_assert_cmpuint(srt_modify_srq(s, srqn, QHCA_SRQ_ATTR_LIMIT, 0), ==,
                     QHCA_AQ_SUCCESS);
    g_assert_cmpuint(le32_to_cpu(qt_query_srq(s->t, srqn).limit), ==, 0);

    /* QUERY_SRQ/DESTROY_SRQ of nothing; the PD is busy while it lives. */
    g_assert_cmpuint(qt_query(t, QHCA_CMD_QUERY_SRQ, &nothing,
                              sizeof(nothing), &a, sizeof(a)), ==,
                     QHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(qt_handle_cmd(t, QHCA_CMD_DESTROY_SRQ, 0), ==,
                     QHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(qt_handle_cmd(t, QHCA_CMD_DEALLOC_PD, s->pdn), ==,
                     QHCA_AQ_BAD_STATE);
    g_assert_cmpuint(qt_handle_cmd(t, QHCA_CMD_DESTROY_SRQ, srqn), ==,
                     QHCA_AQ_SUCCESS);
    g_assert_cmpuint(qt_handle_cmd(t, QHCA_CMD_DESTROY_SRQ, srqn), ==,
                     QHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(qt_handle_cmd(t, QHCA_CMD_DESTROY_SRQ, srqn2), ==,
                     QHCA_AQ_SUCCESS);
    st = qt_stats(t);
    g_assert_cmpuint(le32_to_cpu(st.srqs), ==, 0);
    srt_stop(s);
}

static void test_srq_qp(void)
{
    Srt *s = srt_start("");
    QhcaTest *t = s->t;
    QhcaCq *cq = srt_cq(s);
    QhcaSrq *srq = srt_srq(s);
    struct qhca_cmd_create_qp c;
    struct qhca_cmd_create_srq sc;
    struct qhca_qp_attr qa;
    uint32_t qpn, pd2, srqn2;
    QhcaQp *qp;

    /* No such SRQ; RQ fields with an SRQ; srqn without the flag. */
    c = srt_qp_params(s, cq);
    c.flags = QHCA_QP_F_SRQ;
    c.srqn = cpu_to_le16(srq->srqn + 1);
    g_assert_cmpuint(qt_cmd(t, QHCA_CMD_CREATE_QP, &c, sizeof(c), &qpn), ==,
                     QHCA_AQ_BAD_HANDLE);
    c.srqn = cpu_to_le16(srq->srqn);
    c.rq_depth_log2 = 2;
    g_assert_cmpuint(qt_cmd(t, QHCA_CMD_CREATE_QP, &c, sizeof(c), &qpn), ==,
                     QHCA_AQ_BAD_PARAM);
    c.rq_depth_log2 = 0;
    c.rq_stride_log2 = 6;
    g_assert_cmpuint(qt_cmd(t, QHCA_CMD_CREATE_QP, &c, sizeof(c), &qpn), ==,
                     QHCA_AQ_BAD_PARAM);
    c.rq_stride_log2 = 0;
    c.rq_addr = cpu_to_le64(srq->ring);
    g_assert_cmpuint(qt_cmd(t, QHCA_CMD_CREATE_QP, &c, sizeof(c), &qpn), ==,
                     QHCA_AQ_BAD_PARAM);
    c = srt_qp_params(s, cq);
    c.srqn = cpu_to_le16(srq->srqn);
    c.rq_depth_log2 = 2;
    c.rq_stride_log2 = 6;
    c.rq_addr = cpu_to_le64(srq->ring);
    g_assert_cmpuint(qt_cmd(t, QHCA_CMD_CREATE_QP, &c, sizeof(c), &qpn), ==,
                     QHCA_AQ_BAD_PARAM);

    /* An SRQ of another PD. */
    g_assert_cmpuint(qt_cmd(t, QHCA_CMD_ALLOC_PD, NULL, 0, &pd2), ==,
                     QHCA_AQ_SUCCESS);
    sc = srt_srq_params(s);
    sc.pdn = cpu_to_le32(pd2);
    g_assert_cmpuint(srt_create_srq_cmd(s, &sc, &srqn2), ==,
                     QHCA_AQ_SUCCESS);
    c = srt_qp_params(s, cq);
    c.flags = QHCA_QP_F_SRQ;
    c.srqn = cpu_to_le16(srqn2);
    g_assert_cmpuint(qt_cmd(t, QHCA_CMD_CREATE_QP, &c, sizeof(c), &qpn), ==,
                     QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(qt_handle_cmd(t, QHCA_CMD_DESTROY_SRQ, srqn2), ==,
                     QHCA_AQ_SUCCESS);
    g_assert_cmpuint(qt_handle_cmd(t, QHCA_CMD_DEALLOC_PD, pd2), ==,
                     QHCA_AQ_SUCCESS);

    /* Attached: counted, busy, reported by QUERY_QP. */
    qp = srt_qp(s, cq, srq);
    qa = qt_query_qp(s->t, qp->qpn);
    g_assert_cmpuint(qa.flags & QHCA_QP_F_SRQ, ==, QHCA_QP_F_SRQ);
    g_assert_cmpuint(le16_to_cpu(qa.srqn), ==, srq->srqn);
    g_assert_cmpuint(le32_to_cpu(qt_query_srq(s->t, srq->srqn).qp_refs), ==,
                     1);
    g_assert_cmpuint(qt_handle_cmd(t, QHCA_CMD_DESTROY_SRQ, srq->srqn), ==,
                     QHCA_AQ_BAD_STATE);

    /* A QP on an SRQ has no RQ doorbell. */
    srt_connect_one(s, qp, qp);
    qt_db(t, s->uar, QHCA_DB_RQ, qp->qpn, 1);
    qt_assert_error(t, QHCA_ERR_BAD_DOORBELL);
    g_assert_cmpuint(le16_to_cpu(qt_query_qp(s->t, qp->qpn).rq_ci), ==, 0);

    g_assert_cmpuint(qt_handle_cmd(t, QHCA_CMD_DESTROY_QP, qp->qpn), ==,
                     QHCA_AQ_SUCCESS);
    g_assert_cmpuint(le32_to_cpu(qt_query_srq(s->t, srq->srqn).qp_refs), ==,
                     0);
    g_assert_cmpuint(qt_handle_cmd(t, QHCA_CMD_DESTROY_SRQ, srq->srqn), ==,
                     QHCA_AQ_SUCCESS);
    g_free(qp);
    g_free(srq);
    g_free(cq);
    srt_stop(s);
}

static void test_srq_doorbell(void)
{
    Srt *s = srt_start(",max-uars=4");
    QhcaTest *t = s->t;
    QhcaSrq *srq = srt_srq(s);
    uint32_t uar2;
    struct qhca_srq_attr a;
    uint64_t bad;

    g_assert_cmpuint(qt_cmd(t, QHCA_CMD_ALLOC_UAR, NULL, 0, &uar2), ==,
                     QHCA_AQ_SUCCESS);

    /* No such SRQ, another UAR's page, further than the ring holds. */
    srt_srq_db(s, s->uar, srq->srqn + 1, 1);
    qt_assert_error(t, QHCA_ERR_BAD_DOORBELL);
    srt_srq_db(s, s->uar, 0, 1);
    srt_srq_db(s, uar2, srq->srqn, 1);
    srt_srq_db(s, s->uar, srq->srqn, (1u << SRQ_LOG2) + 1);
    srt_srq_db(s, s->uar, srq->srqn, 0xffff);
    /* Not 32 bits wide. */
    qpci_io_writew(t->dev, t->bar2, s->uar * QHCA_DB_PAGE_SIZE + QHCA_DB_SRQ,
                   1);
    bad = qt_counter(s->t, QHCA_CNT_BAD_DOORBELLS);
    g_assert_cmpuint(bad, ==, 6);
    a = qt_query_srq(s->t, srq->srqn);
    g_assert_cmpuint(le16_to_cpu(a.pi), ==, 0);

    /* A good one, the whole ring. */
    srt_srq_db(s, s->uar, srq->srqn, 1u << SRQ_LOG2);
    a = qt_query_srq(s->t, srq->srqn);
    g_assert_cmpuint(le16_to_cpu(a.pi), ==, 1u << SRQ_LOG2);

    /* Going back is caught when the device applies it. */
    srt_srq_db(s, s->uar, srq->srqn, 3);
    a = qt_query_srq(s->t, srq->srqn);
    g_assert_cmpuint(le16_to_cpu(a.pi), ==, 1u << SRQ_LOG2);
    g_assert_cmpuint(qt_counter(s->t, QHCA_CNT_BAD_DOORBELLS), ==, bad + 1);
    qt_assert_error(t, QHCA_ERR_BAD_DOORBELL);
    g_assert_cmpuint(a.state, ==, QHCA_SRQ_STATE_READY);

    g_assert_cmpuint(qt_handle_cmd(t, QHCA_CMD_DESTROY_SRQ, srq->srqn), ==,
                     QHCA_AQ_SUCCESS);
    /* A destroyed SRQ takes no doorbell. */
    srt_srq_db(s, s->uar, srq->srqn, 1);
    g_assert_cmpuint(qt_counter(s->t, QHCA_CNT_BAD_DOORBELLS), ==, bad + 2);
    g_free(srq);
    srt_stop(s);
}

/*
 * Two senders, two receivers on one SRQ: each SEND takes the next WQE in
 * ring order, whichever QP receives it; CQEs carry srqn and the SRQ
 * index; the limit fires once; a receiver moved to ERR posts QP_LAST_WQE
 * and flushes no SRQ WQE.
 */
static void test_srq_traffic(void)
{
    Srt *s = srt_start("");
    QhcaTest *t = s->t;
    QhcaCq *cq = srt_cq(s);
    QhcaCq *rcq = srt_cq(s);
    QhcaSrq *srq = srt_srq(s);
    QhcaQp *snd[2], *rcv[2];
    uint64_t src = guest_alloc(&t->alloc, 8 * BUF);
    uint64_t dst = guest_alloc(&t->alloc, 8 * BUF);
    uint8_t want[BUF], got[BUF];
    struct qhca_cqe cqe;
    uint32_t len;
    int i, k;

    for (i = 0; i < 2; i++) {
        QhcaQpSpec spec = srt_qp_spec(s, cq);

        snd[i] = srt_qp(s, cq, NULL);
        spec.recv_cqn = rcq->cqn;
        spec.srq = srq;
        rcv[i] = qt_qp_new(t, &spec);
        srt_connect(s, snd[i], rcv[i]);
    }
    qtest_memset(t->qts, dst, 0xee, 8 * BUF);
    for (i = 0; i < 6; i++) {
        srt_srq_wqe(s, srq, 100 + i, dst + i * BUF, BUF);
    }
    qt_srq_ring(t, srq);
    g_assert_cmpuint(srt_modify_srq(s, srq->srqn, QHCA_SRQ_ATTR_LIMIT, 3),
                     ==, QHCA_AQ_SUCCESS);

    /* Alternate the senders: WQEs are still taken in ring order. */
    for (i = 0; i < 4; i++) {
        len = 100 + i * 600;            /* up to two 1 KiB packets */
        for (k = 0; k < len; k++) {
            want[k] = i * 31 + k * 7;
        }
        qtest_memwrite(t->qts, src + i * BUF, want, len);
        srt_send(s, snd[i & 1], i, src + i * BUF, len);

        cqe = qt_cq_take(s->t, rcq);
        g_assert_cmpuint(cqe.status, ==, QHCA_WC_SUCCESS);
        g_assert_cmpuint(cqe.opcode, ==, QHCA_WC_RECV);
        g_assert_cmpuint(le32_to_cpu(cqe.qpn), ==, rcv[i & 1]->qpn);
        g_assert_cmpuint(le64_to_cpu(cqe.wr_id), ==, 100 + i);
        g_assert_cmpuint(le16_to_cpu(cqe.wqe_idx), ==, i);
        g_assert_cmpuint(le16_to_cpu(cqe.srqn), ==, srq->srqn);
        g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, len);
        qtest_memread(t->qts, dst + i * BUF, got, BUF);
        g_assert_cmpmem(got, len, want, len);
        for (k = len; k < BUF; k++) {
            g_assert_cmpuint(got[k], ==, 0xee);
        }
        cqe = qt_cq_take(s->t, cq);
        g_assert_cmpuint(cqe.status, ==, QHCA_WC_SUCCESS);
        g_assert_cmpuint(le64_to_cpu(cqe.wr_id), ==, i);

        /* 6 posted: after the 4th take 2 remain, fewer than 3. */
        if (i == 3) {
            srt_expect_event(s, QHCA_EVENT_SRQ_LIMIT, srq->srqn);
            g_assert_cmpuint(le32_to_cpu(qt_query_srq(s->t, srq->srqn).limit),
                             ==, 0);
        } else {
            srt_no_event(s);
        }
    }
    g_assert_cmpuint(le16_to_cpu(qt_query_srq(s->t, srq->srqn).ci), ==, 4);
    g_assert_cmpuint(qt_counter(s->t, QHCA_CNT_SRQ_WQES), ==, 4);

    /* rcv[0] to ERR: its last WQE, no SRQ WQE flushed. */
    {
        struct qhca_cmd_modify_qp m = {
            .qpn = cpu_to_le32(rcv[0]->qpn),
            .attr_mask = cpu_to_le32(QHCA_QP_ATTR_STATE),
            .state = QHCA_QPS_ERR,
        };

        g_assert_cmpuint(qt_modify_qp(s->t, &m), ==, QHCA_AQ_SUCCESS);
    }
    srt_expect_event(s, QHCA_EVENT_QP_LAST_WQE, rcv[0]->qpn);
    qt_cq_assert_empty(s->t, rcq);
    g_assert_cmpuint(le16_to_cpu(qt_query_srq(s->t, srq->srqn).ci), ==, 4);

    /* The other receiver still gets the next WQE. */
    srt_send(s, snd[1], 9, src, 10);
    cqe = qt_cq_take(s->t, rcq);
    g_assert_cmpuint(cqe.status, ==, QHCA_WC_SUCCESS);
    g_assert_cmpuint(le32_to_cpu(cqe.qpn), ==, rcv[1]->qpn);
    g_assert_cmpuint(le16_to_cpu(cqe.wqe_idx), ==, 4);
    g_assert_cmpuint(le64_to_cpu(cqe.wr_id), ==, 104);
    cqe = qt_cq_take(s->t, cq);
    g_assert_cmpuint(cqe.status, ==, QHCA_WC_SUCCESS);

    /* A malformed SRQ WQE: taken, completed with LOC_QP_OP_ERR. */
    {
        uint64_t slot = qt_srq_slot(srq, srq->pi);
        struct qhca_rq_wqe w = { .wr_id = cpu_to_le64(200), .num_sge = 4 };

        srt_srq_wqe(s, srq, 0, 0, 0);
        qtest_memwrite(t->qts, slot, &w, sizeof(w));
    }
    /* WQE 5 is taken first, then the malformed one. */
    qt_srq_ring(t, srq);
    srt_send(s, snd[1], 10, src, 10);
    cqe = qt_cq_take(s->t, rcq);
    g_assert_cmpuint(le64_to_cpu(cqe.wr_id), ==, 105);
    g_assert_cmpuint(cqe.status, ==, QHCA_WC_SUCCESS);
    qt_cq_take(s->t, cq);
    srt_send(s, snd[1], 11, src, 10);
    cqe = qt_cq_take(s->t, rcq);
    g_assert_cmpuint(le64_to_cpu(cqe.wr_id), ==, 200);
    g_assert_cmpuint(cqe.status, ==, QHCA_WC_LOC_QP_OP_ERR);
    g_assert_cmpuint(le16_to_cpu(cqe.srqn), ==, srq->srqn);
    srt_expect_event(s, QHCA_EVENT_QP_LAST_WQE, rcv[1]->qpn);
    g_assert_cmpuint(qt_handle_cmd(t, QHCA_CMD_DESTROY_SRQ, srq->srqn), ==,
                     QHCA_AQ_BAD_STATE);
    for (i = 0; i < 2; i++) {
        g_assert_cmpuint(qt_handle_cmd(t, QHCA_CMD_DESTROY_QP, rcv[i]->qpn),
                         ==, QHCA_AQ_SUCCESS);
        g_free(rcv[i]);
        g_free(snd[i]);
    }
    g_assert_cmpuint(qt_handle_cmd(t, QHCA_CMD_DESTROY_SRQ, srq->srqn), ==,
                     QHCA_AQ_SUCCESS);
    g_free(srq);
    g_free(cq);
    g_free(rcq);
    srt_stop(s);
}

/* MODIFY_SRQ with MAX_WR (1.6): a new ring of 2^@depth_log2 at @ring. */
static uint8_t srt_resize(Srt *s, uint32_t srqn, uint32_t mask,
                          uint32_t limit, uint64_t ring, uint8_t depth_log2)
{
    struct qhca_cmd_modify_srq m = {
        .srqn = cpu_to_le32(srqn),
        .attr_mask = cpu_to_le32(mask),
        .limit = cpu_to_le32(limit),
        .ring_addr = cpu_to_le64(ring),
        .depth_log2 = depth_log2,
    };

    return qt_cmd(s->t, QHCA_CMD_MODIFY_SRQ, &m, sizeof(m), NULL);
}

/* A zeroed ring of 2^@depth_log2 WQEs of the test's stride. */
static uint64_t srt_ring(Srt *s, uint8_t depth_log2)
{
    uint64_t size = 1ull << (depth_log2 + SRQ_STRIDE_LOG2);
    uint64_t ring = guest_alloc(&s->t->alloc, size);

    g_assert_cmpuint(ring % QHCA_QUEUE_ALIGN, ==, 0);
    qtest_memset(s->t->qts, ring, 0, size);
    return ring;
}

/* The SRQ moved to @ring: the old one is garbage from now on. */
static void srt_moved(Srt *s, QhcaSrq *srq, uint64_t ring, uint8_t depth_log2)
{
    qtest_memset(s->t->qts, srq->ring, 0xff,
                 (uint64_t)srq->entries * srq->stride);
    srq->ring = ring;
    srq->entries = 1u << depth_log2;
}

/*
 * SEND @n messages of distinct bytes to @rcv's SRQ: each takes the WQE
 * with wr_id @first_wr_id + i, in order, and its buffer holds the bytes.
 */
static void srt_receive_n(Srt *s, QhcaQp *snd, QhcaQp *rcv, QhcaCq *cq,
                          QhcaCq *rcq, uint64_t src, uint64_t dst,
                          uint64_t first_wr_id, int n)
{
    uint8_t want[64], got[64];
    struct qhca_cqe cqe;
    int i, k;

    for (i = 0; i < n; i++) {
        uint64_t wr_id = first_wr_id + i;

        for (k = 0; k < sizeof(want); k++) {
            want[k] = wr_id * 13 + k;
        }
        qtest_memwrite(s->t->qts, src, want, sizeof(want));
        srt_send(s, snd, wr_id, src, sizeof(want));
        cqe = qt_cq_take(s->t, rcq);
        g_assert_cmpuint(cqe.status, ==, QHCA_WC_SUCCESS);
        g_assert_cmpuint(le64_to_cpu(cqe.wr_id), ==, wr_id);
        g_assert_cmpuint(le32_to_cpu(cqe.qpn), ==, rcv->qpn);
        g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, sizeof(want));
        qtest_memread(s->t->qts, dst + (wr_id % 64) * 64, got, sizeof(got));
        g_assert_cmpmem(got, sizeof(got), want, sizeof(want));
        cqe = qt_cq_take(s->t, cq);
        g_assert_cmpuint(cqe.status, ==, QHCA_WC_SUCCESS);
    }
}

/* Post @n WQEs from @first_wr_id, each to its own 64 bytes of @dst. */
static void srt_post_n(Srt *s, QhcaSrq *srq, uint64_t dst,
                       uint64_t first_wr_id, int n)
{
    int i;

    for (i = 0; i < n; i++) {
        uint64_t wr_id = first_wr_id + i;

        srt_srq_wqe(s, srq, wr_id, dst + (wr_id % 64) * 64, 64);
    }
    qt_srq_ring(s->t, srq);
}

/*
 * 1.6 MAX_WR: WQEs posted before a resize, wrapped around the old ring,
 * are taken from the new one in order, none lost or taken twice; the
 * SRQ then holds what the new ring holds; shrinking below what is posted
 * or below the armed limit changes nothing; every malformed field.
 */
static void test_srq_resize(void)
{
    Srt *s = srt_start(",max-srq-wr=256");
    QhcaTest *t = s->t;
    QhcaCq *cq = srt_cq(s);
    QhcaCq *rcq = srt_cq(s);
    QhcaSrq *srq = srt_srq(s);
    QhcaQpSpec spec = srt_qp_spec(s, cq);
    QhcaQp *snd = srt_qp(s, cq, NULL), *rcv;
    uint64_t src = guest_alloc(&t->alloc, 64);
    uint64_t dst = guest_alloc(&t->alloc, 64 * 64);
    uint64_t big = srt_ring(s, 5), small = srt_ring(s, 2);
    uint64_t tiny = srt_ring(s, 1);
    struct qhca_cmd_modify_srq m16 = {
        .attr_mask = cpu_to_le32(QHCA_SRQ_ATTR_LIMIT),
        .limit = cpu_to_le32(2),
    };
    struct qhca_srq_attr a;
    uint64_t errors;

    spec.recv_cqn = rcq->cqn;
    spec.srq = srq;
    rcv = qt_qp_new(t, &spec);
    srt_connect(s, snd, rcv);

    /* Six taken, five posted over the end of the 8-WQE ring: 6 .. 10. */
    srt_post_n(s, srq, dst, 100, 6);
    srt_receive_n(s, snd, rcv, cq, rcq, src, dst, 100, 6);
    srt_post_n(s, srq, dst, 106, 5);

    /* Every malformed field; nothing changes. */
    errors = le64_to_cpu(qt_stats(t).admin_errors);
    g_assert_cmpuint(srt_resize(s, srq->srqn, QHCA_SRQ_ATTR_MAX_WR, 0, big,
                                0), ==, QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(srt_resize(s, srq->srqn, QHCA_SRQ_ATTR_MAX_WR, 0, big,
                                9), ==, QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(srt_resize(s, srq->srqn, QHCA_SRQ_ATTR_MAX_WR, 0,
                                big + 8, 5), ==, QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(srt_resize(s, srq->srqn, QHCA_SRQ_ATTR_MAX_WR, 0,
                                RAM_END - 64, 5), ==, QHCA_AQ_BAD_ADDRESS);
    g_assert_cmpuint(srt_resize(s, srq->srqn, QHCA_SRQ_ATTR_MAX_WR, 0,
                                0xfffffffffffff000ull, 5), ==,
                     QHCA_AQ_BAD_ADDRESS);
    g_assert_cmpuint(srt_resize(s, srq->srqn, 0, 0, big, 0), ==,
                     QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(srt_resize(s, srq->srqn, 0, 0, 0, 5), ==,
                     QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(srt_resize(s, srq->srqn + 1, QHCA_SRQ_ATTR_MAX_WR, 0,
                                big, 5), ==, QHCA_AQ_BAD_HANDLE);
    {
        struct qhca_cmd_modify_srq m = {
            .srqn = cpu_to_le32(srq->srqn),
            .attr_mask = cpu_to_le32(QHCA_SRQ_ATTR_MAX_WR),
            .ring_addr = cpu_to_le64(big),
            .depth_log2 = 5,
        };

        m.rsvd1[6] = 1;
        g_assert_cmpuint(qt_cmd(t, QHCA_CMD_MODIFY_SRQ, &m, sizeof(m), NULL),
                         ==, QHCA_AQ_BAD_PARAM);
        m.rsvd1[6] = 0;
        m.rsvd2 = cpu_to_le64(1ull << 63);
        g_assert_cmpuint(qt_cmd(t, QHCA_CMD_MODIFY_SRQ, &m, sizeof(m), NULL),
                         ==, QHCA_AQ_BAD_PARAM);
    }
    /* Five posted: a ring of 4 cannot hold them. */
    g_assert_cmpuint(srt_resize(s, srq->srqn, QHCA_SRQ_ATTR_MAX_WR, 0, small,
                                2), ==, QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(le64_to_cpu(qt_stats(t).admin_errors), ==, errors + 11);
    a = qt_query_srq(t, srq->srqn);
    g_assert_cmpuint(a.depth_log2, ==, SRQ_LOG2);
    g_assert_cmpuint(le16_to_cpu(a.ci), ==, 6);
    g_assert_cmpuint(le16_to_cpu(a.pi), ==, 11);
    g_assert_cmpuint(a.state, ==, QHCA_SRQ_STATE_READY);

    /* The 1.2 command, 16 bytes, is the same command. */
    m16.srqn = cpu_to_le32(srq->srqn);
    g_assert_cmpuint(qt_cmd(t, QHCA_CMD_MODIFY_SRQ, &m16, 16, NULL), ==,
                     QHCA_AQ_SUCCESS);
    g_assert_cmpuint(le32_to_cpu(qt_query_srq(t, srq->srqn).limit), ==, 2);

    /* Grow to 32, the old ring poisoned: 5 + 20 WQEs, in order. */
    g_assert_cmpuint(srt_resize(s, srq->srqn, QHCA_SRQ_ATTR_MAX_WR, 0, big,
                                5), ==, QHCA_AQ_SUCCESS);
    srt_moved(s, srq, big, 5);
    a = qt_query_srq(t, srq->srqn);
    g_assert_cmpuint(a.depth_log2, ==, 5);
    g_assert_cmpuint(le16_to_cpu(a.ci), ==, 6);
    g_assert_cmpuint(le16_to_cpu(a.pi), ==, 11);
    g_assert_cmpuint(le32_to_cpu(a.limit), ==, 2);
    srt_post_n(s, srq, dst, 111, 20);
    g_assert_cmpuint(le16_to_cpu(qt_query_srq(t, srq->srqn).pi), ==, 31);
    srt_receive_n(s, snd, rcv, cq, rcq, src, dst, 106, 25);
    srt_expect_event(s, QHCA_EVENT_SRQ_LIMIT, srq->srqn);

    /*
     * Shrink: four posted (31 .. 34), an armed limit of 3.  A ring of 2 is
     * smaller than both; 4 holds them, and WQEs go on in order.
     */
    srt_post_n(s, srq, dst, 131, 4);
    g_assert_cmpuint(srt_modify_srq(s, srq->srqn, QHCA_SRQ_ATTR_LIMIT, 3),
                     ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(srt_resize(s, srq->srqn, QHCA_SRQ_ATTR_MAX_WR, 0, tiny,
                                1), ==, QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(srt_resize(s, srq->srqn,
                                QHCA_SRQ_ATTR_MAX_WR | QHCA_SRQ_ATTR_LIMIT,
                                0, tiny, 1), ==, QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(srt_resize(s, srq->srqn,
                                QHCA_SRQ_ATTR_MAX_WR | QHCA_SRQ_ATTR_LIMIT,
                                5, small, 2), ==, QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(qt_query_srq(t, srq->srqn).depth_log2, ==, 5);
    g_assert_cmpuint(srt_resize(s, srq->srqn,
                                QHCA_SRQ_ATTR_MAX_WR | QHCA_SRQ_ATTR_LIMIT,
                                4, small, 2), ==, QHCA_AQ_SUCCESS);
    srt_moved(s, srq, small, 2);
    a = qt_query_srq(t, srq->srqn);
    g_assert_cmpuint(a.depth_log2, ==, 2);
    g_assert_cmpuint(le32_to_cpu(a.limit), ==, 4);
    /* A full small ring takes no further doorbell. */
    srt_srq_db(s, s->uar, srq->srqn, 36);
    qt_assert_error(t, QHCA_ERR_BAD_DOORBELL);
    srt_receive_n(s, snd, rcv, cq, rcq, src, dst, 131, 4);
    srt_expect_event(s, QHCA_EVENT_SRQ_LIMIT, srq->srqn);
    qt_cq_assert_empty(t, rcq);
    g_assert_cmpuint(qt_counter(t, QHCA_CNT_SRQ_WQES), ==, 35);

    /* An SRQ in ERR is not resized. */
    {
        struct qhca_cmd_inject_fault f = {
            .type = cpu_to_le16(QHCA_FAULT_SRQ_ERR),
            .handle = cpu_to_le32(srq->srqn),
        };

        g_assert_cmpuint(qt_cmd(t, QHCA_CMD_INJECT_FAULT, &f, sizeof(f),
                                NULL), ==, QHCA_AQ_SUCCESS);
        srt_expect_event(s, QHCA_EVENT_SRQ_ERR, srq->srqn);
        g_assert_cmpuint(srt_resize(s, srq->srqn, QHCA_SRQ_ATTR_MAX_WR, 0,
                                    big, 5), ==, QHCA_AQ_BAD_STATE);
        g_assert_cmpuint(qt_query_srq(t, srq->srqn).depth_log2, ==, 2);
    }

    g_assert_cmpuint(qt_handle_cmd(t, QHCA_CMD_DESTROY_QP, rcv->qpn), ==,
                     QHCA_AQ_SUCCESS);
    g_assert_cmpuint(qt_handle_cmd(t, QHCA_CMD_DESTROY_SRQ, srq->srqn), ==,
                     QHCA_AQ_SUCCESS);
    g_free(rcv);
    g_free(snd);
    g_free(srq);
    g_free(cq);
    g_free(rcq);
    srt_stop(s);
}

/*
 * An XRC SRQ resizes the same way: its posted WQEs, wrapped round the
 * old ring, sit at the same free-running indexes of the new one, byte
 * for byte, and it keeps its domain and CQ references.
 */
static void test_srq_resize_xrc(void)
{
    Srt *s = srt_start("");
    QhcaTest *t = s->t;
    QhcaCq *cq = srt_cq(s);
    QhcaSrq srq;
    struct qhca_cmd_create_srq c = qt_srq_prepare(t, &srq, s->pdn, s->uar,
                                                  SRQ_LOG2, SRQ_STRIDE_LOG2);
    uint64_t ring = srt_ring(s, 4);
    uint8_t want[1u << SRQ_STRIDE_LOG2], got[1u << SRQ_STRIDE_LOG2];
    uint32_t xrcd;
    uint16_t idx;
    int i;

    g_assert_cmpuint(qt_cmd(t, QHCA_CMD_ALLOC_XRCD, NULL, 0, &xrcd), ==,
                     QHCA_AQ_SUCCESS);
    c.type = QHCA_SRQT_XRC;
    c.xrcd = cpu_to_le32(xrcd);
    c.cqn = cpu_to_le32(cq->cqn);
    g_assert_cmpuint(qt_srq_create_cmd(t, &srq, &c), ==, QHCA_AQ_SUCCESS);

    /* Six posted, none taken: 4 cannot hold them, 16 can. */
    srt_post_n(s, &srq, guest_alloc(&t->alloc, 64 * 64), 600, 6);
    g_assert_cmpuint(srt_resize(s, srq.srqn, QHCA_SRQ_ATTR_MAX_WR, 0, ring,
                                2), ==, QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(srt_resize(s, srq.srqn, QHCA_SRQ_ATTR_MAX_WR, 0, ring,
                                4), ==, QHCA_AQ_SUCCESS);
    for (idx = 0; idx < 6; idx++) {
        qtest_memread(t->qts, qt_srq_slot(&srq, idx), want, sizeof(want));
        qtest_memread(t->qts, ring + idx * sizeof(got), got, sizeof(got));
        g_assert_cmpmem(got, sizeof(got), want, sizeof(want));
        g_assert_cmpuint(ldq_le_p(got), ==, 600 + idx);
    }
    g_assert_cmpuint(le16_to_cpu(qt_query_srq(t, srq.srqn).pi), ==, 6);
    srt_moved(s, &srq, ring, 4);
    g_assert_cmpuint(qt_query_srq(t, srq.srqn).depth_log2, ==, 4);
    g_assert_cmpuint(qt_handle_cmd(t, QHCA_CMD_DEALLOC_XRCD, xrcd), ==,
                     QHCA_AQ_BAD_STATE);
    g_assert_cmpuint(qt_handle_cmd(t, QHCA_CMD_DESTROY_CQ, cq->cqn), ==,
                     QHCA_AQ_BAD_STATE);
    for (i = 0; i < 2; i++) {
        g_assert_cmpuint(qt_handle_cmd(t, QHCA_CMD_DESTROY_SRQ, srq.srqn), ==,
                         i ? QHCA_AQ_BAD_HANDLE : QHCA_AQ_SUCCESS);
    }
    g_assert_cmpuint(qt_handle_cmd(t, QHCA_CMD_DEALLOC_XRCD, xrcd), ==,
                     QHCA_AQ_SUCCESS);
    g_free(cq);
    srt_stop(s);
}

int main(int argc, char **argv)
{
    if (!qt_init(&argc, &argv)) {
        return g_test_run();
    }

    qtest_add_func("/qhca/srq/device-caps", test_device_caps);
    qtest_add_func("/qhca/srq/bad-props", test_bad_props);
    qtest_add_func("/qhca/srq/commands", test_srq_commands);
    qtest_add_func("/qhca/srq/qp", test_srq_qp);
    qtest_add_func("/qhca/srq/doorbell", test_srq_doorbell);
    qtest_add_func("/qhca/srq/traffic", test_srq_traffic);
    qtest_add_func("/qhca/srq/resize", test_srq_resize);
    qtest_add_func("/qhca/srq/resize-xrc", test_srq_resize_xrc);

    return g_test_run();
}
