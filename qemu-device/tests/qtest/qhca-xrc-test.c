/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qtest for XRC in qhca (interface 1.2): ALLOC/DEALLOC_XRCD, XRC SRQs and
 * XRC INI and TGT QPs at CREATE_SRQ and CREATE_QP, each with every
 * malformed field, the references that keep domains and CQs alive, and
 * doorbells aimed at a TGT QP, which has no rings.  The data path of XRC
 * is tested from the guest (tests/xrc.c, ibv_xsrq_pingpong).  The test
 * plays the driver, with plain memory accesses.
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qhca-qtest.h"

#define SRQ_LOG2            3
#define SRQ_STRIDE_LOG2     5
#define SQ_LOG2             3
#define SQ_STRIDE_LOG2      6
#define CQ_LOG2             4

typedef struct Xrt {
    QhcaTest *t;
    uint32_t uar;
    uint32_t pdn;
    uint32_t cqn;
} Xrt;

static Xrt *xrt_start(const char *props)
{
    Xrt *x = g_new0(Xrt, 1);
    QhcaEq eq;
    QhcaCq cq;

    x->t = qt_start_dp(props, &x->uar, &x->pdn, &eq, 0);
    qt_cq_init(x->t, &cq, CQ_LOG2, eq.eqn, x->uar);
    x->cqn = cq.cqn;
    return x;
}

static void xrt_stop(Xrt *x)
{
    qt_assert_alive(x->t);
    qhca_stop(x->t);
    g_free(x);
}

static uint8_t xrt_alloc_xrcd(Xrt *x, uint32_t *xrcd)
{
    return qt_cmd(x->t, QHCA_CMD_ALLOC_XRCD, NULL, 0, xrcd);
}

static uint8_t xrt_dealloc_xrcd(Xrt *x, uint32_t xrcd)
{
    return qt_handle_cmd(x->t, QHCA_CMD_DEALLOC_XRCD, xrcd);
}

static struct qhca_cmd_create_srq xrt_srq_params(Xrt *x, uint32_t xrcd)
{
    QhcaSrq scratch;
    struct qhca_cmd_create_srq c = qt_srq_prepare(x->t, &scratch, x->pdn,
                                                  x->uar, SRQ_LOG2,
                                                  SRQ_STRIDE_LOG2);

    c.type = QHCA_SRQT_XRC;
    c.xrcd = cpu_to_le32(xrcd);
    c.cqn = cpu_to_le32(x->cqn);
    return c;
}

static uint8_t xrt_create_srq(Xrt *x, struct qhca_cmd_create_srq *c,
                              uint32_t *srqn)
{
    return qt_cmd(x->t, QHCA_CMD_CREATE_SRQ, c, sizeof(*c), srqn);
}

/* A TGT QP has no rings, no UAR and no CQs: only its domain. */
static struct qhca_cmd_create_qp xrt_tgt_params(Xrt *x, uint32_t xrcd)
{
    const QhcaQpSpec spec = {
        .type = QHCA_QPT_XRC_TGT,
        .pdn = xrcd,
    };
    QhcaQp scratch;

    return qt_qp_prepare(x->t, &scratch, &spec);
}

/* An INI QP has an SQ only. */
static struct qhca_cmd_create_qp xrt_ini_params(Xrt *x)
{
    const QhcaQpSpec spec = {
        .type = QHCA_QPT_XRC_INI,
        .pdn = x->pdn,
        .uar = x->uar,
        .send_cqn = x->cqn,
        .sq_log2 = SQ_LOG2,
        .sq_stride_log2 = SQ_STRIDE_LOG2,
    };
    QhcaQp scratch;

    return qt_qp_prepare(x->t, &scratch, &spec);
}

static uint8_t xrt_create_qp(Xrt *x, struct qhca_cmd_create_qp *c,
                             uint32_t *qpn)
{
    return qt_cmd(x->t, QHCA_CMD_CREATE_QP, c, sizeof(*c), qpn);
}

static void test_device_caps(void)
{
    Xrt *x = xrt_start(NULL);
    struct qhca_device_attr a;

    g_assert_cmpuint(qt_query(x->t, QHCA_CMD_QUERY_DEVICE, NULL, 0, &a,
                              sizeof(a)), ==, QHCA_AQ_SUCCESS);
    g_assert_cmphex(le32_to_cpu(a.device_cap_flags) & QHCA_DEV_CAP_XRC, ==,
                    QHCA_DEV_CAP_XRC);
    xrt_stop(x);
}

static void test_bad_props(void)
{
    static const int64_t bad[] = { 0, 65536 };
    QTestState *qts = qt_hotplug_start();
    size_t i;

    for (i = 0; i < ARRAY_SIZE(bad); i++) {
        qt_assert_prop_out_of_range(qts, "max-xrcds", bad[i]);
    }
    qtest_quit(qts);
}

/* ALLOC_XRCD and DEALLOC_XRCD, to a full table and back. */
static void test_xrcd_commands(void)
{
    Xrt *x = xrt_start(",max-xrcds=2");
    struct qhca_cmd_handle h = { .handle = cpu_to_le32(1),
                                 .rsvd = cpu_to_le32(1) };
    uint8_t junk[8] = { 1 };
    uint32_t a, b, c;

    g_assert_cmpuint(xrt_alloc_xrcd(x, &a), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(xrt_alloc_xrcd(x, &b), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(a, >=, 1);
    g_assert_cmpuint(b, >=, 1);
    g_assert_cmpuint(a, <=, 2);
    g_assert_cmpuint(b, <=, 2);
    g_assert_cmpuint(a, !=, b);
    g_assert_cmpuint(xrt_alloc_xrcd(x, &c), ==, QHCA_AQ_NO_RESOURCES);
    /* ALLOC_XRCD takes no payload. */
    g_assert_cmpuint(qt_cmd(x->t, QHCA_CMD_ALLOC_XRCD, junk, sizeof(junk),
                            &c), ==, QHCA_AQ_BAD_PARAM);

    g_assert_cmpuint(xrt_dealloc_xrcd(x, 0), ==, QHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(xrt_dealloc_xrcd(x, 3), ==, QHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(xrt_dealloc_xrcd(x, 0xffffffff), ==,
                     QHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(qt_cmd(x->t, QHCA_CMD_DEALLOC_XRCD, &h, sizeof(h),
                            NULL), ==, QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(xrt_dealloc_xrcd(x, a), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(xrt_dealloc_xrcd(x, a), ==, QHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(xrt_alloc_xrcd(x, &c), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(c, ==, a);
    g_assert_cmpuint(xrt_dealloc_xrcd(x, b), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(xrt_dealloc_xrcd(x, c), ==, QHCA_AQ_SUCCESS);
    xrt_stop(x);
}

/* CREATE_SRQ of an XRC SRQ: every malformed field, then the references. */
static void test_xrc_srq(void)
{
    Xrt *x = xrt_start(NULL);
    struct qhca_cmd_create_srq c;
    struct qhca_cmd_create_qp q;
    uint32_t xrcd, srqn, n;

    g_assert_cmpuint(xrt_alloc_xrcd(x, &xrcd), ==, QHCA_AQ_SUCCESS);

    c = xrt_srq_params(x, xrcd);
    c.type = 2;                         /* tag matching: not supported */
    g_assert_cmpuint(xrt_create_srq(x, &c, &n), ==, QHCA_AQ_BAD_PARAM);
    c.type = 0xff;
    g_assert_cmpuint(xrt_create_srq(x, &c, &n), ==, QHCA_AQ_BAD_PARAM);
    c = xrt_srq_params(x, xrcd);
    c.rsvd0 = 1;
    g_assert_cmpuint(xrt_create_srq(x, &c, &n), ==, QHCA_AQ_BAD_PARAM);
    c = xrt_srq_params(x, xrcd);
    c.rsvd1 = cpu_to_le64(1ull << 63);
    g_assert_cmpuint(xrt_create_srq(x, &c, &n), ==, QHCA_AQ_BAD_PARAM);
    /* A basic SRQ has no domain and no CQ. */
    c = xrt_srq_params(x, xrcd);
    c.type = QHCA_SRQT_BASIC;
    g_assert_cmpuint(xrt_create_srq(x, &c, &n), ==, QHCA_AQ_BAD_PARAM);
    c.xrcd = 0;
    g_assert_cmpuint(xrt_create_srq(x, &c, &n), ==, QHCA_AQ_BAD_PARAM);
    /* Domains and CQs that do not exist. */
    c = xrt_srq_params(x, xrcd);
    c.xrcd = 0;
    g_assert_cmpuint(xrt_create_srq(x, &c, &n), ==, QHCA_AQ_BAD_HANDLE);
    c.xrcd = cpu_to_le32(xrcd + 1);
    g_assert_cmpuint(xrt_create_srq(x, &c, &n), ==, QHCA_AQ_BAD_HANDLE);
    c.xrcd = cpu_to_le32(0xffffffff);
    g_assert_cmpuint(xrt_create_srq(x, &c, &n), ==, QHCA_AQ_BAD_HANDLE);
    c = xrt_srq_params(x, xrcd);
    c.cqn = 0;
    g_assert_cmpuint(xrt_create_srq(x, &c, &n), ==, QHCA_AQ_BAD_HANDLE);
    c.cqn = cpu_to_le32(0xffffffff);
    g_assert_cmpuint(xrt_create_srq(x, &c, &n), ==, QHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(le32_to_cpu(qt_stats(x->t).srqs), ==, 0);

    c = xrt_srq_params(x, xrcd);
    g_assert_cmpuint(xrt_create_srq(x, &c, &srqn), ==, QHCA_AQ_SUCCESS);
    /* It holds its domain and its CQ. */
    g_assert_cmpuint(xrt_dealloc_xrcd(x, xrcd), ==, QHCA_AQ_BAD_STATE);
    g_assert_cmpuint(qt_handle_cmd(x->t, QHCA_CMD_DESTROY_CQ, x->cqn), ==,
                     QHCA_AQ_BAD_STATE);
    /* An RC QP cannot take its receives from an XRC SRQ. */
    q = xrt_ini_params(x);
    q.type = QHCA_QPT_RC;
    q.recv_cqn = cpu_to_le16(x->cqn);
    q.flags = QHCA_QP_F_SRQ;
    q.srqn = cpu_to_le16(srqn);
    g_assert_cmpuint(xrt_create_qp(x, &q, &n), ==, QHCA_AQ_BAD_PARAM);

    g_assert_cmpuint(qt_handle_cmd(x->t, QHCA_CMD_DESTROY_SRQ, srqn), ==,
                     QHCA_AQ_SUCCESS);
    g_assert_cmpuint(xrt_dealloc_xrcd(x, xrcd), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(qt_handle_cmd(x->t, QHCA_CMD_DESTROY_CQ, x->cqn), ==,
                     QHCA_AQ_SUCCESS);
    xrt_stop(x);
}

/* CREATE_QP of XRC TGT and INI QPs: every field that must be zero. */
static void test_xrc_qps(void)
{
    Xrt *x = xrt_start(NULL);
    struct qhca_cmd_create_qp c;
    struct qhca_qp_attr a;
    uint32_t xrcd, tgt, ini, n;

    g_assert_cmpuint(xrt_alloc_xrcd(x, &xrcd), ==, QHCA_AQ_SUCCESS);

    /* TGT: no rings, no CQs, no UAR, no flags. */
    c = xrt_tgt_params(x, xrcd);
    c.uar = cpu_to_le32(x->uar + 1);
    g_assert_cmpuint(xrt_create_qp(x, &c, &n), ==, QHCA_AQ_BAD_PARAM);
    c = xrt_tgt_params(x, xrcd);
    c.send_cqn = cpu_to_le16(x->cqn);
    g_assert_cmpuint(xrt_create_qp(x, &c, &n), ==, QHCA_AQ_BAD_PARAM);
    c = xrt_tgt_params(x, xrcd);
    c.recv_cqn = cpu_to_le16(x->cqn);
    g_assert_cmpuint(xrt_create_qp(x, &c, &n), ==, QHCA_AQ_BAD_PARAM);
    c = xrt_tgt_params(x, xrcd);
    c.flags = QHCA_QP_F_SRQ;
    g_assert_cmpuint(xrt_create_qp(x, &c, &n), ==, QHCA_AQ_BAD_PARAM);
    c = xrt_tgt_params(x, xrcd);
    c.sq_addr = cpu_to_le64(0x100000);
    g_assert_cmpuint(xrt_create_qp(x, &c, &n), ==, QHCA_AQ_BAD_PARAM);
    c = xrt_tgt_params(x, xrcd);
    c.sq_depth_log2 = 1;
    g_assert_cmpuint(xrt_create_qp(x, &c, &n), ==, QHCA_AQ_BAD_PARAM);
    c = xrt_tgt_params(x, xrcd);
    c.rq_stride_log2 = 4;
    g_assert_cmpuint(xrt_create_qp(x, &c, &n), ==, QHCA_AQ_BAD_PARAM);
    c = xrt_tgt_params(x, xrcd);
    c.srqn = cpu_to_le16(1);
    g_assert_cmpuint(xrt_create_qp(x, &c, &n), ==, QHCA_AQ_BAD_PARAM);
    c = xrt_tgt_params(x, xrcd);
    c.rsvd[3] = 1;
    g_assert_cmpuint(xrt_create_qp(x, &c, &n), ==, QHCA_AQ_BAD_PARAM);
    c = xrt_tgt_params(x, 0);
    g_assert_cmpuint(xrt_create_qp(x, &c, &n), ==, QHCA_AQ_BAD_HANDLE);
    c = xrt_tgt_params(x, xrcd + 1);
    g_assert_cmpuint(xrt_create_qp(x, &c, &n), ==, QHCA_AQ_BAD_HANDLE);

    /* INI: a send side only. */
    c = xrt_ini_params(x);
    c.recv_cqn = cpu_to_le16(x->cqn);
    g_assert_cmpuint(xrt_create_qp(x, &c, &n), ==, QHCA_AQ_BAD_PARAM);
    c = xrt_ini_params(x);
    c.rq_depth_log2 = 1;
    c.rq_stride_log2 = 4;
    g_assert_cmpuint(xrt_create_qp(x, &c, &n), ==, QHCA_AQ_BAD_PARAM);
    c = xrt_ini_params(x);
    c.rq_addr = cpu_to_le64(0x100000);
    g_assert_cmpuint(xrt_create_qp(x, &c, &n), ==, QHCA_AQ_BAD_PARAM);
    c = xrt_ini_params(x);
    c.flags = QHCA_QP_F_SRQ;
    g_assert_cmpuint(xrt_create_qp(x, &c, &n), ==, QHCA_AQ_BAD_PARAM);
    c = xrt_ini_params(x);
    c.sq_addr = cpu_to_le64(RAM_END);
    g_assert_cmpuint(xrt_create_qp(x, &c, &n), ==, QHCA_AQ_BAD_ADDRESS);
    g_assert_cmpuint(le32_to_cpu(qt_stats(x->t).qps), ==, 0);

    c = xrt_tgt_params(x, xrcd);
    g_assert_cmpuint(xrt_create_qp(x, &c, &tgt), ==, QHCA_AQ_SUCCESS);
    c = xrt_ini_params(x);
    g_assert_cmpuint(xrt_create_qp(x, &c, &ini), ==, QHCA_AQ_SUCCESS);
    a = qt_query_qp(x->t, tgt);
    g_assert_cmpuint(a.type, ==, QHCA_QPT_XRC_TGT);
    g_assert_cmpuint(a.state, ==, QHCA_QPS_RESET);
    a = qt_query_qp(x->t, ini);
    g_assert_cmpuint(a.type, ==, QHCA_QPT_XRC_INI);
    g_assert_cmpuint(le16_to_cpu(a.send_cqn), ==, x->cqn);

    /* The TGT QP holds its domain; the INI QP holds nothing of it. */
    g_assert_cmpuint(xrt_dealloc_xrcd(x, xrcd), ==, QHCA_AQ_BAD_STATE);

    /*
     * Doorbells: a TGT QP has no ring on any page; an INI QP no RQ.
     * Each is a guest error and changes nothing.
     */
    qt_db(x->t, x->uar, QHCA_DB_SQ, tgt, 1);
    qt_assert_error(x->t, QHCA_ERR_BAD_DOORBELL);
    qt_db(x->t, x->uar, QHCA_DB_RQ, ini, 1);
    qt_assert_error(x->t, QHCA_ERR_BAD_DOORBELL);
    a = qt_query_qp(x->t, tgt);
    g_assert_cmpuint(le16_to_cpu(a.sq_ci), ==, 0);
    a = qt_query_qp(x->t, ini);
    g_assert_cmpuint(le16_to_cpu(a.rq_ci), ==, 0);

    g_assert_cmpuint(qt_handle_cmd(x->t, QHCA_CMD_DESTROY_QP, tgt), ==,
                     QHCA_AQ_SUCCESS);
    g_assert_cmpuint(qt_handle_cmd(x->t, QHCA_CMD_DESTROY_QP, ini), ==,
                     QHCA_AQ_SUCCESS);
    g_assert_cmpuint(xrt_dealloc_xrcd(x, xrcd), ==, QHCA_AQ_SUCCESS);
    /* The INI QP gave its CQ back. */
    g_assert_cmpuint(qt_handle_cmd(x->t, QHCA_CMD_DESTROY_CQ, x->cqn), ==,
                     QHCA_AQ_SUCCESS);
    xrt_stop(x);
}

int main(int argc, char **argv)
{
    if (!qt_init(&argc, &argv)) {
        return g_test_run();
    }

    qtest_add_func("/qhca/xrc/device-caps", test_device_caps);
    qtest_add_func("/qhca/xrc/bad-props", test_bad_props);
    qtest_add_func("/qhca/xrc/xrcd", test_xrcd_commands);
    qtest_add_func("/qhca/xrc/srq", test_xrc_srq);
    qtest_add_func("/qhca/xrc/qps", test_xrc_qps);

    return g_test_run();
}
