/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qtest for qhca memory windows and fast registration (interface 1.2):
 * ALLOC_MW/DEALLOC_MW and fast-reg REG_MR with every malformed field, and
 * BIND_MW, REG_MR and LOCAL_INV WQEs, well formed and malformed, each on
 * a fresh QP so that the completion status of every case shows.  The
 * device must answer each with the status the spec gives and stay alive.
 * The test plays the driver, with plain memory accesses.
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qhca-qtest.h"

#define SQ_LOG2             2
#define SQ_STRIDE_LOG2      7
#define CQ_LOG2             6
#define MR_ACCESS           (QHCA_ACCESS_LOCAL_WRITE | \
                             QHCA_ACCESS_REMOTE_WRITE | \
                             QHCA_ACCESS_REMOTE_READ | QHCA_ACCESS_MW_BIND)
#define FR_PAGES            4

typedef struct Mwt {
    QhcaTest *t;
    uint32_t uar;
    uint32_t pdn;
    QhcaEq eq;
    QhcaCq cq;
    uint32_t lkey;              /* physical MR over RAM, with MW_BIND */
    uint32_t plain_lkey;        /* physical MR without MW_BIND */
    uint32_t ro_lkey;           /* MW_BIND and remote read only */
} Mwt;

static Mwt *mwt_start(const char *props)
{
    Mwt *m = g_new0(Mwt, 1);
    QhcaTest *t = qt_start_dp(props, &m->uar, &m->pdn, &m->eq, 0);

    m->t = t;
    qt_cq_init(t, &m->cq, CQ_LOG2, m->eq.eqn, m->uar);
    m->lkey = qt_reg_phys_mr(t, m->pdn, MR_ACCESS, 0x11, 12);
    m->plain_lkey = qt_reg_phys_mr(t, m->pdn, QHCA_ACCESS_LOCAL_WRITE |
                                   QHCA_ACCESS_REMOTE_WRITE, 0x22, 12);
    m->ro_lkey = qt_reg_phys_mr(t, m->pdn, QHCA_ACCESS_REMOTE_READ |
                                QHCA_ACCESS_MW_BIND, 0x33, 12);
    return m;
}

static void mwt_stop(Mwt *m)
{
    qt_assert_alive(m->t);
    qhca_stop(m->t);
    g_free(m);
}

/* An RC QP of PD @pdn on the test's CQ. */
static QhcaQpSpec mwt_spec(Mwt *m, uint32_t pdn)
{
    return (QhcaQpSpec) {
        .type = QHCA_QPT_RC,
        .pdn = pdn,
        .uar = m->uar,
        .send_cqn = m->cq.cqn,
        .recv_cqn = m->cq.cqn,
        .sq_log2 = SQ_LOG2,
        .sq_stride_log2 = SQ_STRIDE_LOG2,
        .rq_log2 = 2,
        .rq_stride_log2 = 6,
    };
}

/* An RC QP of PD @pdn in RTS, connected to itself. */
static QhcaQp *mwt_qp(Mwt *m, uint32_t pdn)
{
    const QhcaQpSpec spec = mwt_spec(m, pdn);
    static const QhcaPath path = {
        .rc = true,
        .dlid = QT_LID,
        .mtu = QT_MTU_1024,
        .min_rnr_timer = 1,
        .timeout = 14,
        .retry_cnt = 7,
        .rnr_retry = 7,
    };
    QhcaQp *qp = qt_qp_new(m->t, &spec);

    qt_qp_connect(m->t, qp, qp, &path, 0);
    return qp;
}

/*
 * Post the 64-byte @wqe, signaled, as the only WQE of a fresh QP of PD
 * @pdn and return its CQE; the QP is destroyed again.
 */
static struct qhca_cqe mwt_run_pd(Mwt *m, uint32_t pdn, const void *wqe)
{
    g_autofree QhcaQp *qp = mwt_qp(m, pdn);
    struct qhca_sq_wqe w;
    struct qhca_cqe cqe;

    memcpy(&w, wqe, sizeof(w));
    w.flags |= QHCA_WQE_F_SIGNALED;
    w.wr_id = cpu_to_le64(0x77);
    qt_qp_post_send(m->t, qp, &w, NULL, 0);
    qt_qp_ring_sq(m->t, qp);
    cqe = qt_cq_take(m->t, &m->cq);
    g_assert_cmpuint(le64_to_cpu(cqe.wr_id), ==, 0x77);
    g_assert_cmpuint(le32_to_cpu(cqe.qpn), ==, qp->qpn);
    g_assert_cmpuint(qt_handle_cmd(m->t, QHCA_CMD_DESTROY_QP, qp->qpn), ==,
                     QHCA_AQ_SUCCESS);
    qt_assert_alive(m->t);
    return cqe;
}

static void mwt_expect(Mwt *m, const void *wqe, uint8_t status,
                       uint8_t opcode)
{
    struct qhca_cqe cqe = mwt_run_pd(m, m->pdn, wqe);

    g_assert_cmpuint(cqe.status, ==, status);
    g_assert_cmpuint(cqe.opcode, ==, opcode);
}

static uint32_t mwt_alloc_mw(Mwt *m, uint32_t pdn, uint8_t type)
{
    struct qhca_cmd_alloc_mw a = { .pdn = cpu_to_le32(pdn), .type = type };
    uint32_t index;

    g_assert_cmpuint(qt_cmd(m->t, QHCA_CMD_ALLOC_MW, &a, sizeof(a), &index),
                     ==, QHCA_AQ_SUCCESS);
    return QHCA_MKEY_MW | index << 8;
}

static struct qhca_sq_wqe_bind mwt_bind(uint32_t mw_key, uint8_t type,
                                        uint32_t lkey, uint64_t addr,
                                        uint64_t len)
{
    return (struct qhca_sq_wqe_bind) {
        .opcode = QHCA_WR_BIND_MW,
        .mw_key = cpu_to_le32(mw_key),
        .addr = cpu_to_le64(addr),
        .mr_lkey = cpu_to_le32(lkey),
        .access = QHCA_ACCESS_REMOTE_WRITE,
        .mw_type = type,
        .length = cpu_to_le64(len),
    };
}

/* ------------------------------------------------------------------ */

static void test_caps(void)
{
    Mwt *m = mwt_start(",max-mws=3");
    struct qhca_device_attr a;

    g_assert_cmpuint(qt_query(m->t, QHCA_CMD_QUERY_DEVICE, NULL, 0, &a,
                              sizeof(a)), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(le32_to_cpu(a.device_cap_flags) &
                     (QHCA_DEV_CAP_MW | QHCA_DEV_CAP_MEM_MGT_EXT), ==,
                     QHCA_DEV_CAP_MW | QHCA_DEV_CAP_MEM_MGT_EXT);
    g_assert_cmpuint(le32_to_cpu(a.max_mw), ==, 3);
    mwt_stop(m);

    m = mwt_start(",max-mws=0");
    g_assert_cmpuint(qt_query(m->t, QHCA_CMD_QUERY_DEVICE, NULL, 0, &a,
                              sizeof(a)), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(le32_to_cpu(a.device_cap_flags) & QHCA_DEV_CAP_MW, ==,
                     0);
    g_assert_cmpuint(le32_to_cpu(a.max_mw), ==, 0);
    {
        struct qhca_cmd_alloc_mw c = { .pdn = cpu_to_le32(m->pdn), .type = 1 };
        uint32_t index;

        g_assert_cmpuint(qt_cmd(m->t, QHCA_CMD_ALLOC_MW, &c, sizeof(c),
                                &index), ==, QHCA_AQ_NO_RESOURCES);
    }
    mwt_stop(m);
}

static void test_mw_commands(void)
{
    Mwt *m = mwt_start(",max-mws=2");
    struct qhca_cmd_alloc_mw a = { .pdn = cpu_to_le32(m->pdn), .type = 1 };
    uint32_t k1, k2, index;

    a.type = 0;
    g_assert_cmpuint(qt_cmd(m->t, QHCA_CMD_ALLOC_MW, &a, sizeof(a), &index),
                     ==, QHCA_AQ_BAD_PARAM);
    a.type = 3;
    g_assert_cmpuint(qt_cmd(m->t, QHCA_CMD_ALLOC_MW, &a, sizeof(a), &index),
                     ==, QHCA_AQ_BAD_PARAM);
    a.type = 1;
    a.rsvd0[1] = 1;
    g_assert_cmpuint(qt_cmd(m->t, QHCA_CMD_ALLOC_MW, &a, sizeof(a), &index),
                     ==, QHCA_AQ_BAD_PARAM);
    a.rsvd0[1] = 0;
    a.rsvd1 = cpu_to_le64(1);
    g_assert_cmpuint(qt_cmd(m->t, QHCA_CMD_ALLOC_MW, &a, sizeof(a), &index),
                     ==, QHCA_AQ_BAD_PARAM);
    a.rsvd1 = 0;
    a.pdn = cpu_to_le32(m->pdn + 100);
    g_assert_cmpuint(qt_cmd(m->t, QHCA_CMD_ALLOC_MW, &a, sizeof(a), &index),
                     ==, QHCA_AQ_BAD_HANDLE);

    k1 = mwt_alloc_mw(m, m->pdn, 1);
    k2 = mwt_alloc_mw(m, m->pdn, 2);
    g_assert_cmpuint(k1, !=, k2);
    a.pdn = cpu_to_le32(m->pdn);
    g_assert_cmpuint(qt_cmd(m->t, QHCA_CMD_ALLOC_MW, &a, sizeof(a), &index),
                     ==, QHCA_AQ_NO_RESOURCES);
    /* The windows hold their PD. */
    g_assert_cmpuint(qt_handle_cmd(m->t, QHCA_CMD_DEALLOC_PD, m->pdn), ==,
                     QHCA_AQ_BAD_STATE);
    g_assert_cmpuint(qt_handle_cmd(m->t, QHCA_CMD_DEALLOC_MW, 2), ==,
                     QHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(qt_handle_cmd(m->t, QHCA_CMD_DEALLOC_MW,
                                   (k1 & QHCA_MKEY_MW_INDEX) >> 8), ==,
                     QHCA_AQ_SUCCESS);
    g_assert_cmpuint(qt_handle_cmd(m->t, QHCA_CMD_DEALLOC_MW,
                                   (k1 & QHCA_MKEY_MW_INDEX) >> 8), ==,
                     QHCA_AQ_BAD_HANDLE);
    mwt_stop(m);
}

static void test_fast_reg_commands(void)
{
    Mwt *m = mwt_start("");
    struct qhca_cmd_reg_mr good = {
        .pdn = cpu_to_le32(m->pdn),
        .npages = cpu_to_le32(FR_PAGES),
        .flags = QHCA_MR_F_FAST_REG,
    };
    struct qhca_cmd_reg_mr c;
    uint32_t index;

    c = good;
    c.iova = cpu_to_le64(4096);
    g_assert_cmpuint(qt_cmd(m->t, QHCA_CMD_REG_MR, &c, sizeof(c), &index),
                     ==, QHCA_AQ_BAD_PARAM);
    c = good;
    c.length = cpu_to_le64(4096);
    g_assert_cmpuint(qt_cmd(m->t, QHCA_CMD_REG_MR, &c, sizeof(c), &index),
                     ==, QHCA_AQ_BAD_PARAM);
    c = good;
    c.access = QHCA_ACCESS_LOCAL_WRITE;
    g_assert_cmpuint(qt_cmd(m->t, QHCA_CMD_REG_MR, &c, sizeof(c), &index),
                     ==, QHCA_AQ_BAD_PARAM);
    c = good;
    c.flags |= QHCA_MR_F_PHYS;
    g_assert_cmpuint(qt_cmd(m->t, QHCA_CMD_REG_MR, &c, sizeof(c), &index),
                     ==, QHCA_AQ_BAD_PARAM);
    c = good;
    c.npages = 0;
    g_assert_cmpuint(qt_cmd(m->t, QHCA_CMD_REG_MR, &c, sizeof(c), &index),
                     ==, QHCA_AQ_BAD_PARAM);
    c = good;
    c.npages = cpu_to_le32(QHCA_FAST_REG_MAX_PAGES + 1);
    g_assert_cmpuint(qt_cmd(m->t, QHCA_CMD_REG_MR, &c, sizeof(c), &index),
                     ==, QHCA_AQ_BAD_PARAM);
    c = good;
    c.flags = 0x80;
    g_assert_cmpuint(qt_cmd(m->t, QHCA_CMD_REG_MR, &c, sizeof(c), &index),
                     ==, QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(qt_cmd(m->t, QHCA_CMD_REG_MR, &good, sizeof(good),
                            &index), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(qt_handle_cmd(m->t, QHCA_CMD_DEREG_MR, index), ==,
                     QHCA_AQ_SUCCESS);
    mwt_stop(m);
}

static void test_bind_wqes(void)
{
    Mwt *m = mwt_start("");
    uint32_t k1 = mwt_alloc_mw(m, m->pdn, 1);
    uint32_t k2 = mwt_alloc_mw(m, m->pdn, 2);
    uint32_t pd2, k_other;
    struct qhca_sq_wqe_bind b;

    /* Malformed: LOC_QP_OP_ERR. */
    b = mwt_bind(k1 + 1, 1, m->lkey, 0x1000, 0x1000);
    b.rsvd2 = cpu_to_le64(1);
    mwt_expect(m, &b, QHCA_WC_LOC_QP_OP_ERR, QHCA_WC_BIND_MW);
    b = mwt_bind(k1 + 1, 1, m->lkey, 0x1000, 0x1000);
    b.num_sge = 1;
    mwt_expect(m, &b, QHCA_WC_LOC_QP_OP_ERR, QHCA_WC_BIND_MW);
    b = mwt_bind(k1 + 1, 1, m->lkey, 0x1000, 0x1000);
    b.flags = QHCA_WQE_F_INLINE;
    mwt_expect(m, &b, QHCA_WC_LOC_QP_OP_ERR, QHCA_WC_BIND_MW);
    b = mwt_bind(k1 + 1, 1, m->lkey, 0x1000, 0x1000);
    b.access |= QHCA_ACCESS_LOCAL_WRITE;
    mwt_expect(m, &b, QHCA_WC_LOC_QP_OP_ERR, QHCA_WC_BIND_MW);
    b = mwt_bind(k1 + 1, 3, m->lkey, 0x1000, 0x1000);
    mwt_expect(m, &b, QHCA_WC_LOC_QP_OP_ERR, QHCA_WC_BIND_MW);
    b = mwt_bind(k1 + 1, 1, m->lkey, 0x1000, 0x1000);
    b.rsvd3[3] = cpu_to_le32(1);
    mwt_expect(m, &b, QHCA_WC_LOC_QP_OP_ERR, QHCA_WC_BIND_MW);

    /* Well formed, but not allowed: MW_BIND_ERR. */
    b = mwt_bind(QHCA_MKEY_MW | 0x7fff00, 1, m->lkey, 0x1000, 0x1000);
    mwt_expect(m, &b, QHCA_WC_MW_BIND_ERR, QHCA_WC_BIND_MW);
    b = mwt_bind(k1 + 1, 2, m->lkey, 0x1000, 0x1000);     /* wrong type */
    mwt_expect(m, &b, QHCA_WC_MW_BIND_ERR, QHCA_WC_BIND_MW);
    b = mwt_bind(k1 + 1, 1, k2, 0x1000, 0x1000);          /* MW as MR */
    mwt_expect(m, &b, QHCA_WC_MW_BIND_ERR, QHCA_WC_BIND_MW);
    b = mwt_bind(k1 + 1, 1, m->lkey ^ 0x80, 0x1000, 0x1000);
    mwt_expect(m, &b, QHCA_WC_MW_BIND_ERR, QHCA_WC_BIND_MW);
    b = mwt_bind(k1 + 1, 1, m->plain_lkey, 0x1000, 0x1000);
    mwt_expect(m, &b, QHCA_WC_MW_BIND_ERR, QHCA_WC_BIND_MW);
    b = mwt_bind(k1 + 1, 1, m->lkey, UINT64_MAX - 10, 100);
    mwt_expect(m, &b, QHCA_WC_MW_BIND_ERR, QHCA_WC_BIND_MW);
    b = mwt_bind(k1 + 1, 1, m->lkey, RAM_END - 0x800, 0x1000);
    mwt_expect(m, &b, QHCA_WC_MW_BIND_ERR, QHCA_WC_BIND_MW);
    b = mwt_bind(k1 + 1, 1, QHCA_BIND_NO_MR, 0, 1);
    mwt_expect(m, &b, QHCA_WC_MW_BIND_ERR, QHCA_WC_BIND_MW);
    b = mwt_bind(k1 + 1, 1, m->ro_lkey, 0x1000, 0x1000);
    b.access = QHCA_ACCESS_REMOTE_ATOMIC;   /* the MR has no local write */
    mwt_expect(m, &b, QHCA_WC_MW_BIND_ERR, QHCA_WC_BIND_MW);
    b = mwt_bind(k1 + 1, 1, m->ro_lkey, 0x1000, 0x1000);
    b.access = QHCA_ACCESS_REMOTE_WRITE;
    mwt_expect(m, &b, QHCA_WC_MW_BIND_ERR, QHCA_WC_BIND_MW);

    /* A type 2 window of another PD, through a QP of this one. */
    g_assert_cmpuint(qt_cmd(m->t, QHCA_CMD_ALLOC_PD, NULL, 0, &pd2), ==,
                     QHCA_AQ_SUCCESS);
    k_other = mwt_alloc_mw(m, pd2, 2);
    b = mwt_bind(k_other + 1, 2, m->lkey, 0x1000, 0x1000);
    mwt_expect(m, &b, QHCA_WC_MW_BIND_ERR, QHCA_WC_BIND_MW);

    /* Good binds; a type 2 window takes one, then needs invalidating. */
    b = mwt_bind(k1 + 1, 1, m->lkey, 0x1000, 0x1000);
    mwt_expect(m, &b, QHCA_WC_SUCCESS, QHCA_WC_BIND_MW);
    b = mwt_bind(k1 + 2, 1, QHCA_BIND_NO_MR, 0, 0);
    mwt_expect(m, &b, QHCA_WC_SUCCESS, QHCA_WC_BIND_MW);
    b = mwt_bind(k2 + 1, 2, m->lkey, 0x1000, 0x1000);
    mwt_expect(m, &b, QHCA_WC_SUCCESS, QHCA_WC_BIND_MW);
    /* The MR is held: DEREG_MR waits for the window to go. */
    g_assert_cmpuint(qt_handle_cmd(m->t, QHCA_CMD_DEREG_MR, m->lkey >> 8),
                     ==, QHCA_AQ_BAD_STATE);
    b = mwt_bind(k2 + 2, 2, m->lkey, 0x1000, 0x1000);
    mwt_expect(m, &b, QHCA_WC_MW_BIND_ERR, QHCA_WC_BIND_MW);
    /* A stale key does not invalidate; the current one does. */
    {
        struct qhca_sq_wqe inv = {
            .opcode = QHCA_WR_LOCAL_INV,
            .rkey = cpu_to_le32(k2 + 2),
        };

        mwt_expect(m, &inv, QHCA_WC_LOC_QP_OP_ERR, QHCA_WC_LOCAL_INV);
        inv.rkey = cpu_to_le32(k1 + 2);       /* type 1 */
        mwt_expect(m, &inv, QHCA_WC_LOC_QP_OP_ERR, QHCA_WC_LOCAL_INV);
        inv.rkey = cpu_to_le32(k2 + 1);
        inv.compare_add = cpu_to_le64(1);     /* reserved here */
        mwt_expect(m, &inv, QHCA_WC_LOC_QP_OP_ERR, QHCA_WC_LOCAL_INV);
        inv.compare_add = 0;
        mwt_expect(m, &inv, QHCA_WC_SUCCESS, QHCA_WC_LOCAL_INV);
    }
    g_assert_cmpuint(qt_handle_cmd(m->t, QHCA_CMD_DEREG_MR, m->lkey >> 8),
                     ==, QHCA_AQ_SUCCESS);
    mwt_stop(m);
}

static void test_fast_reg_wqes(void)
{
    Mwt *m = mwt_start("");
    struct qhca_cmd_reg_mr c = {
        .pdn = cpu_to_le32(m->pdn),
        .npages = cpu_to_le32(FR_PAGES),
        .flags = QHCA_MR_F_FAST_REG,
    };
    uint64_t pages[FR_PAGES], pbl, buf;
    struct qhca_sq_wqe_reg_mr good, r;
    struct qhca_sq_wqe inv = { .opcode = QHCA_WR_LOCAL_INV };
    uint32_t index, key;
    int i;

    g_assert_cmpuint(qt_cmd(m->t, QHCA_CMD_REG_MR, &c, sizeof(c), &index),
                     ==, QHCA_AQ_SUCCESS);
    key = index << 8 | 0x33;
    buf = guest_alloc(&m->t->alloc, (FR_PAGES + 1) * 4096);
    buf = (buf + 4095) & ~4095ull;
    for (i = 0; i < FR_PAGES; i++) {
        pages[i] = cpu_to_le64(buf + (FR_PAGES - 1 - i) * 4096);
    }
    pbl = guest_alloc(&m->t->alloc, sizeof(pages));
    qtest_memwrite(m->t->qts, pbl, pages, sizeof(pages));
    good = (struct qhca_sq_wqe_reg_mr) {
        .opcode = QHCA_WR_REG_MR,
        .mr_key = cpu_to_le32(key),
        .iova = cpu_to_le64(0x10000100),
        .npages = cpu_to_le32(FR_PAGES),
        .access = QHCA_ACCESS_LOCAL_WRITE | QHCA_ACCESS_REMOTE_WRITE,
        .page_shift = 12,
        .length = cpu_to_le64(FR_PAGES * 4096 - 0x100),
        .pbl_addr = cpu_to_le64(pbl),
    };

    r = good;
    r.page_shift = 11;
    mwt_expect(m, &r, QHCA_WC_LOC_QP_OP_ERR, QHCA_WC_REG_MR);
    r = good;
    r.page_shift = 31;
    mwt_expect(m, &r, QHCA_WC_LOC_QP_OP_ERR, QHCA_WC_REG_MR);
    r = good;
    r.access = QHCA_ACCESS_REMOTE_WRITE;            /* no local write */
    mwt_expect(m, &r, QHCA_WC_LOC_QP_OP_ERR, QHCA_WC_REG_MR);
    r = good;
    r.access |= QHCA_ACCESS_MW_BIND;
    mwt_expect(m, &r, QHCA_WC_LOC_QP_OP_ERR, QHCA_WC_REG_MR);
    r = good;
    r.rsvd1 = cpu_to_le16(1);
    mwt_expect(m, &r, QHCA_WC_LOC_QP_OP_ERR, QHCA_WC_REG_MR);
    r = good;
    r.pbl_addr = cpu_to_le64(pbl + 4);              /* not 8-byte aligned */
    mwt_expect(m, &r, QHCA_WC_LOC_QP_OP_ERR, QHCA_WC_REG_MR);
    r = good;
    r.pbl_addr = cpu_to_le64(RAM_END - 8);          /* list leaves RAM */
    mwt_expect(m, &r, QHCA_WC_LOC_QP_OP_ERR, QHCA_WC_REG_MR);
    r = good;
    r.npages = cpu_to_le32(FR_PAGES + 1);           /* beyond the MR */
    r.length = cpu_to_le64((FR_PAGES + 1) * 4096 - 0x100);
    mwt_expect(m, &r, QHCA_WC_LOC_QP_OP_ERR, QHCA_WC_REG_MR);
    r = good;
    r.length = cpu_to_le64(4096);                   /* npages mismatch */
    mwt_expect(m, &r, QHCA_WC_LOC_QP_OP_ERR, QHCA_WC_REG_MR);
    r = good;
    r.length = 0;
    mwt_expect(m, &r, QHCA_WC_LOC_QP_OP_ERR, QHCA_WC_REG_MR);
    r = good;
    r.iova = cpu_to_le64(UINT64_MAX - 0xff);        /* wraps */
    mwt_expect(m, &r, QHCA_WC_LOC_QP_OP_ERR, QHCA_WC_REG_MR);
    r = good;
    r.mr_key = cpu_to_le32(m->lkey);                /* not fast-reg */
    mwt_expect(m, &r, QHCA_WC_LOC_PROT_ERR, QHCA_WC_REG_MR);
    r = good;
    r.mr_key = cpu_to_le32(QHCA_MKEY_MW | key);
    mwt_expect(m, &r, QHCA_WC_LOC_PROT_ERR, QHCA_WC_REG_MR);

    /* Bad pages: unaligned, then outside RAM. */
    pages[1] = cpu_to_le64(buf + 8);
    qtest_memwrite(m->t->qts, pbl, pages, sizeof(pages));
    mwt_expect(m, &good, QHCA_WC_LOC_QP_OP_ERR, QHCA_WC_REG_MR);
    pages[1] = cpu_to_le64(RAM_END);
    qtest_memwrite(m->t->qts, pbl, pages, sizeof(pages));
    mwt_expect(m, &good, QHCA_WC_LOC_QP_OP_ERR, QHCA_WC_REG_MR);
    pages[1] = cpu_to_le64(buf + (FR_PAGES - 2) * 4096);
    qtest_memwrite(m->t->qts, pbl, pages, sizeof(pages));

    /* Of another PD: its QP may not map it. */
    {
        uint32_t pd2;
        struct qhca_cqe cqe;

        g_assert_cmpuint(qt_cmd(m->t, QHCA_CMD_ALLOC_PD, NULL, 0, &pd2), ==,
                         QHCA_AQ_SUCCESS);
        cqe = mwt_run_pd(m, pd2, &good);
        g_assert_cmpuint(cqe.status, ==, QHCA_WC_LOC_PROT_ERR);
    }

    /* Good: then it is valid and a second REG_MR is refused. */
    mwt_expect(m, &good, QHCA_WC_SUCCESS, QHCA_WC_REG_MR);
    mwt_expect(m, &good, QHCA_WC_LOC_PROT_ERR, QHCA_WC_REG_MR);
    inv.rkey = cpu_to_le32(key ^ 1);                /* wrong key byte */
    mwt_expect(m, &inv, QHCA_WC_LOC_QP_OP_ERR, QHCA_WC_LOCAL_INV);
    inv.rkey = cpu_to_le32(key);
    mwt_expect(m, &inv, QHCA_WC_SUCCESS, QHCA_WC_LOCAL_INV);
    mwt_expect(m, &inv, QHCA_WC_LOC_QP_OP_ERR, QHCA_WC_LOCAL_INV);
    /* Free again: a new key maps it. */
    good.mr_key = cpu_to_le32(index << 8 | 0x34);
    mwt_expect(m, &good, QHCA_WC_SUCCESS, QHCA_WC_REG_MR);
    g_assert_cmpuint(qt_handle_cmd(m->t, QHCA_CMD_DEREG_MR, index), ==,
                     QHCA_AQ_SUCCESS);
    mwt_stop(m);
}

/* ------------------------------------------------------------------ */
/* REREG_MR (1.6)                                                      */

#define RR_ACCESS           (MR_ACCESS | QHCA_ACCESS_REMOTE_READ)
#define RR_KEY              0x44
#define RR_IOVA             0x10000000ull
#define RR_PAGE             4096

/* A page list of @n pages in guest RAM; its address. */
static uint64_t rr_pbl(Mwt *m, const uint64_t *pages, uint32_t n)
{
    uint64_t pbl = guest_alloc(&m->t->alloc, n * 8);
    uint32_t i;

    for (i = 0; i < n; i++) {
        qtest_writeq(m->t->qts, pbl + i * 8, pages[i]);
    }
    return pbl;
}

/* An MR of PD @pdn over @n 4 KiB @pages at RR_IOVA; its key. */
static uint32_t rr_reg(Mwt *m, uint32_t pdn, const uint64_t *pages,
                       uint32_t n)
{
    struct qhca_cmd_reg_mr r = {
        .iova = cpu_to_le64(RR_IOVA),
        .length = cpu_to_le64((uint64_t)n * RR_PAGE),
        .pbl_addr = cpu_to_le64(rr_pbl(m, pages, n)),
        .pdn = cpu_to_le32(pdn),
        .npages = cpu_to_le32(n),
        .access = RR_ACCESS,
        .key = RR_KEY,
        .page_shift = 12,
    };
    uint32_t index;

    g_assert_cmpuint(qt_cmd(m->t, QHCA_CMD_REG_MR, &r, sizeof(r), &index),
                     ==, QHCA_AQ_SUCCESS);
    return index << 8 | RR_KEY;
}

/* REREG_MR of @key with TRANSLATION to @n pages at @iova. */
static struct qhca_cmd_rereg_mr rr_translation(Mwt *m, uint32_t key,
                                               uint64_t iova,
                                               const uint64_t *pages,
                                               uint32_t n)
{
    return (struct qhca_cmd_rereg_mr) {
        .index = cpu_to_le32(key >> 8),
        .mask = QHCA_REREG_TRANSLATION,
        .iova = cpu_to_le64(iova),
        .length = cpu_to_le64((uint64_t)n * RR_PAGE),
        .pbl_addr = cpu_to_le64(rr_pbl(m, pages, n)),
        .npages = cpu_to_le32(n),
        .page_shift = 12,
    };
}

static uint8_t rr_cmd(Mwt *m, const struct qhca_cmd_rereg_mr *p)
{
    return qt_cmd(m->t, QHCA_CMD_REREG_MR, p, sizeof(*p), NULL);
}

/*
 * An RDMA WRITE of @len bytes of pattern @seed, from a fresh QP whose
 * source MR is @lkey (of the test's PD) to a fresh QP of PD @pdn, at
 * @raddr with @rkey: its status.  Two QPs, so that a responder's error
 * comes back as the NAK's status, not as a flush of its own SQ.
 */
static uint8_t rr_write(Mwt *m, uint32_t pdn, uint32_t rkey, uint64_t raddr,
                        uint32_t len, uint8_t seed)
{
    QhcaQpSpec spec = mwt_spec(m, m->pdn);
    g_autofree QhcaQp *req = qt_qp_new(m->t, &spec);
    g_autofree QhcaQp *resp = NULL;
    g_autofree uint8_t *buf = g_malloc(len);
    uint64_t src = guest_alloc(&m->t->alloc, len);
    struct qhca_sq_wqe w = {
        .wr_id = cpu_to_le64(0x55),
        .opcode = QHCA_WR_RDMA_WRITE,
        .flags = QHCA_WQE_F_SIGNALED,
        .num_sge = 1,
        .remote_addr = cpu_to_le64(raddr),
        .rkey = cpu_to_le32(rkey),
    };
    struct qhca_sge sge = qt_sge(src, len, m->lkey);
    struct qhca_cqe cqe;
    uint32_t i;

    spec.pdn = pdn;
    resp = qt_qp_new(m->t, &spec);
    for (i = 0; i < len; i++) {
        buf[i] = seed + i * 3;
    }
    qtest_memwrite(m->t->qts, src, buf, len);
    qt_qp_connect(m->t, req, resp, &qt_rc_path, 0);
    qt_qp_connect(m->t, resp, req, &qt_rc_path, 0);
    qt_qp_post_send(m->t, req, &w, &sge, 1);
    qt_qp_ring_sq(m->t, req);
    cqe = qt_cq_take(m->t, &m->cq);
    g_assert_cmpuint(le64_to_cpu(cqe.wr_id), ==, 0x55);
    g_assert_cmpuint(le32_to_cpu(cqe.qpn), ==, req->qpn);
    g_assert_cmpuint(qt_handle_cmd(m->t, QHCA_CMD_DESTROY_QP, req->qpn), ==,
                     QHCA_AQ_SUCCESS);
    g_assert_cmpuint(qt_handle_cmd(m->t, QHCA_CMD_DESTROY_QP, resp->qpn), ==,
                     QHCA_AQ_SUCCESS);
    return cqe.status;
}

/* @len bytes at guest address @gpa hold pattern @seed, or are @fill. */
static void rr_expect(Mwt *m, uint64_t gpa, uint32_t len, int seed,
                      uint8_t fill)
{
    g_autofree uint8_t *got = g_malloc(len);
    uint32_t i;

    qtest_memread(m->t->qts, gpa, got, len);
    for (i = 0; i < len; i++) {
        g_assert_cmpuint(got[i], ==,
                         seed < 0 ? fill : (uint8_t)(seed + i * 3));
    }
}

/*
 * REREG_MR: translation, PD and access, each alone and together, seen by
 * RDMA WRITEs that land where the new registration says; every malformed
 * field refused with the old registration still working; BAD_STATE while
 * a window is bound; max-mr-pages counts the new list, not both.
 */
static void test_rereg(void)
{
    Mwt *m = mwt_start(",max-mr-pages=8");
    QhcaTest *t = m->t;
    uint64_t a = guest_alloc(&t->alloc, 2 * RR_PAGE);
    uint64_t b = guest_alloc(&t->alloc, 4 * RR_PAGE);
    /* Two pages of a, then three of b out of order. */
    uint64_t pa[2] = { a, a + RR_PAGE };
    uint64_t pb[3] = { b + 2 * RR_PAGE, b, b + 3 * RR_PAGE };
    uint32_t key, pd2, index;
    struct qhca_cmd_rereg_mr p;
    uint32_t k1 = mwt_alloc_mw(m, m->pdn, 1);
    struct qhca_sq_wqe_bind bind;

    g_assert_cmpuint(a % RR_PAGE, ==, 0);
    g_assert_cmpuint(b % RR_PAGE, ==, 0);
    qtest_memset(t->qts, a, 0, 2 * RR_PAGE);
    qtest_memset(t->qts, b, 0, 4 * RR_PAGE);
    key = rr_reg(m, m->pdn, pa, 2);
    index = key >> 8;
    g_assert_cmpuint(rr_write(m, m->pdn, key, RR_IOVA + 4000, 200,
                              1), ==, QHCA_WC_SUCCESS);
    rr_expect(m, a + 4000, 200, 1, 0);

    /* Every malformed field: BAD_PARAM, and nothing changes. */
    p = (struct qhca_cmd_rereg_mr) { .index = cpu_to_le32(index) };
    g_assert_cmpuint(rr_cmd(m, &p), ==, QHCA_AQ_BAD_PARAM);
    p.mask = 0x08;
    g_assert_cmpuint(rr_cmd(m, &p), ==, QHCA_AQ_BAD_PARAM);
    p.mask = QHCA_REREG_ACCESS;
    p.access = RR_ACCESS;
    p.iova = cpu_to_le64(RR_IOVA);
    g_assert_cmpuint(rr_cmd(m, &p), ==, QHCA_AQ_BAD_PARAM);
    p.iova = 0;
    p.npages = cpu_to_le32(2);
    g_assert_cmpuint(rr_cmd(m, &p), ==, QHCA_AQ_BAD_PARAM);
    p.npages = 0;
    p.page_shift = 12;
    g_assert_cmpuint(rr_cmd(m, &p), ==, QHCA_AQ_BAD_PARAM);
    p.page_shift = 0;
    p.pdn = cpu_to_le32(m->pdn + 1);
    g_assert_cmpuint(rr_cmd(m, &p), ==, QHCA_AQ_BAD_PARAM);
    p.pdn = 0;
    p.mask = QHCA_REREG_PD;
    p.pdn = cpu_to_le32(m->pdn);
    g_assert_cmpuint(rr_cmd(m, &p), ==, QHCA_AQ_BAD_PARAM);   /* access */
    p.access = 0;
    p.pdn = cpu_to_le32(m->pdn + 100);
    g_assert_cmpuint(rr_cmd(m, &p), ==, QHCA_AQ_BAD_HANDLE);
    p = (struct qhca_cmd_rereg_mr) {
        .index = cpu_to_le32(index),
        .mask = QHCA_REREG_ACCESS,
        .access = QHCA_ACCESS_REMOTE_WRITE,     /* without local write */
    };
    g_assert_cmpuint(rr_cmd(m, &p), ==, QHCA_AQ_BAD_PARAM);
    p.access = 0x80;
    g_assert_cmpuint(rr_cmd(m, &p), ==, QHCA_AQ_BAD_PARAM);
    p.access = RR_ACCESS;
    p.index = cpu_to_le32(index + 1);
    g_assert_cmpuint(rr_cmd(m, &p), ==, QHCA_AQ_BAD_HANDLE);
    p.index = cpu_to_le32(m->lkey >> 8);                   /* physical */
    g_assert_cmpuint(rr_cmd(m, &p), ==, QHCA_AQ_BAD_PARAM);
    {
        struct qhca_cmd_reg_mr fr = {
            .pdn = cpu_to_le32(m->pdn),
            .npages = cpu_to_le32(FR_PAGES),
            .flags = QHCA_MR_F_FAST_REG,
        };
        uint32_t fr_index;

        g_assert_cmpuint(qt_cmd(t, QHCA_CMD_REG_MR, &fr, sizeof(fr),
                                &fr_index), ==, QHCA_AQ_SUCCESS);
        p.index = cpu_to_le32(fr_index);
        g_assert_cmpuint(rr_cmd(m, &p), ==, QHCA_AQ_BAD_PARAM);
        g_assert_cmpuint(qt_handle_cmd(t, QHCA_CMD_DEREG_MR, fr_index), ==,
                         QHCA_AQ_SUCCESS);
    }
    p = rr_translation(m, key, RR_IOVA, pb, 3);
    p.npages = cpu_to_le32(2);
    g_assert_cmpuint(rr_cmd(m, &p), ==, QHCA_AQ_BAD_PARAM);
    p = rr_translation(m, key, RR_IOVA, pb, 3);
    p.length = 0;
    g_assert_cmpuint(rr_cmd(m, &p), ==, QHCA_AQ_BAD_PARAM);
    p = rr_translation(m, key, RR_IOVA, pb, 3);
    p.page_shift = 31;
    g_assert_cmpuint(rr_cmd(m, &p), ==, QHCA_AQ_BAD_PARAM);
    p = rr_translation(m, key, RR_IOVA, pb, 3);
    p.flags = QHCA_MR_F_PHYS;
    g_assert_cmpuint(rr_cmd(m, &p), ==, QHCA_AQ_BAD_PARAM);
    p = rr_translation(m, key, RR_IOVA, pb, 3);
    p.pbl_addr = cpu_to_le64(RAM_END - 8);
    g_assert_cmpuint(rr_cmd(m, &p), ==, QHCA_AQ_BAD_ADDRESS);
    {
        uint64_t bad[3] = { b + 8, b, b };              /* misaligned */
        uint64_t out[3] = { b, RAM_END, b };            /* not in RAM */

        p = rr_translation(m, key, RR_IOVA, bad, 3);
        g_assert_cmpuint(rr_cmd(m, &p), ==, QHCA_AQ_BAD_PARAM);
        p = rr_translation(m, key, RR_IOVA, out, 3);
        g_assert_cmpuint(rr_cmd(m, &p), ==, QHCA_AQ_BAD_ADDRESS);
    }
    g_assert_cmpuint(rr_write(m, m->pdn, key, RR_IOVA + 100, 300,
                              2), ==, QHCA_WC_SUCCESS);
    rr_expect(m, a + 100, 300, 2, 0);

    /* A bound window holds the MR: BAD_STATE, and it still works. */
    bind = mwt_bind(k1 + 1, 1, key, RR_IOVA, RR_PAGE);
    mwt_expect(m, &bind, QHCA_WC_SUCCESS, QHCA_WC_BIND_MW);
    p = rr_translation(m, key, RR_IOVA, pb, 3);
    g_assert_cmpuint(rr_cmd(m, &p), ==, QHCA_AQ_BAD_STATE);
    p = (struct qhca_cmd_rereg_mr) {
        .index = cpu_to_le32(index),
        .mask = QHCA_REREG_PD,
        .pdn = cpu_to_le32(m->pdn),
    };
    g_assert_cmpuint(rr_cmd(m, &p), ==, QHCA_AQ_BAD_STATE);
    p.mask = QHCA_REREG_ACCESS;
    p.pdn = 0;
    p.access = RR_ACCESS;
    g_assert_cmpuint(rr_cmd(m, &p), ==, QHCA_AQ_BAD_STATE);
    g_assert_cmpuint(rr_write(m, m->pdn, k1 + 1, RR_IOVA + 8, 16,
                              3), ==, QHCA_WC_SUCCESS);
    rr_expect(m, a + 8, 16, 3, 0);
    g_assert_cmpuint(qt_handle_cmd(t, QHCA_CMD_DEALLOC_MW,
                                   (k1 & QHCA_MKEY_MW_INDEX) >> 8), ==,
                     QHCA_AQ_SUCCESS);

    /* TRANSLATION alone: 3 pages of b at a new iova; a is left alone. */
    qtest_memset(t->qts, a, 0, 2 * RR_PAGE);
    p = rr_translation(m, key, RR_IOVA + 0x100000 + 512, pb, 3);
    p.length = cpu_to_le64(3 * RR_PAGE - 512);
    g_assert_cmpuint(rr_cmd(m, &p), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(rr_write(m, m->pdn, key,
                              RR_IOVA + 0x100000 + 4000, 600, 4), ==,
                     QHCA_WC_SUCCESS);
    /* iova page 0 is b + 2 pages, page 1 is b: 4000 .. 4599 spans both. */
    rr_expect(m, b + 2 * RR_PAGE + 4000, 96, 4, 0);
    rr_expect(m, b, 504, 4 + 96 * 3, 0);
    rr_expect(m, a, 2 * RR_PAGE, -1, 0);
    /* The old range is gone; the new one ends where its length says. */
    g_assert_cmpuint(rr_write(m, m->pdn, key, RR_IOVA, 8, 5), ==,
                     QHCA_WC_REM_ACCESS_ERR);
    g_assert_cmpuint(rr_write(m, m->pdn, key,
                              RR_IOVA + 0x100000 + 3 * RR_PAGE - 4, 8, 5),
                     ==, QHCA_WC_REM_ACCESS_ERR);

    /* PD alone: a QP of the old PD is refused, one of the new served. */
    g_assert_cmpuint(qt_cmd(t, QHCA_CMD_ALLOC_PD, NULL, 0, &pd2), ==,
                     QHCA_AQ_SUCCESS);
    p = (struct qhca_cmd_rereg_mr) {
        .index = cpu_to_le32(index),
        .mask = QHCA_REREG_PD,
        .pdn = cpu_to_le32(pd2),
    };
    g_assert_cmpuint(rr_cmd(m, &p), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(qt_handle_cmd(t, QHCA_CMD_DEALLOC_PD, pd2), ==,
                     QHCA_AQ_BAD_STATE);
    g_assert_cmpuint(rr_write(m, m->pdn, key,
                              RR_IOVA + 0x100000 + 512, 8, 6), ==,
                     QHCA_WC_REM_ACCESS_ERR);
    g_assert_cmpuint(rr_write(m, pd2, key, RR_IOVA + 0x100000 + 512,
                              8, 7), ==, QHCA_WC_SUCCESS);
    rr_expect(m, b + 2 * RR_PAGE + 512, 8, 7, 0);

    /* ACCESS alone: no remote write now. */
    p = (struct qhca_cmd_rereg_mr) {
        .index = cpu_to_le32(index),
        .mask = QHCA_REREG_ACCESS,
        .access = QHCA_ACCESS_LOCAL_WRITE | QHCA_ACCESS_REMOTE_READ,
    };
    g_assert_cmpuint(rr_cmd(m, &p), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(rr_write(m, pd2, key, RR_IOVA + 0x100000 + 512,
                              8, 8), ==, QHCA_WC_REM_ACCESS_ERR);
    rr_expect(m, b + 2 * RR_PAGE + 512, 8, 7, 0);

    /* All three back: a, the first PD, remote write; b untouched. */
    qtest_memset(t->qts, b, 0, 4 * RR_PAGE);
    p = rr_translation(m, key, RR_IOVA, pa, 2);
    p.mask |= QHCA_REREG_PD | QHCA_REREG_ACCESS;
    p.pdn = cpu_to_le32(m->pdn);
    p.access = RR_ACCESS;
    g_assert_cmpuint(rr_cmd(m, &p), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(qt_handle_cmd(t, QHCA_CMD_DEALLOC_PD, pd2), ==,
                     QHCA_AQ_SUCCESS);
    g_assert_cmpuint(rr_write(m, m->pdn, key, RR_IOVA + 4090, 20,
                              9), ==, QHCA_WC_SUCCESS);
    rr_expect(m, a + 4090, 20, 9, 0);
    rr_expect(m, b, 4 * RR_PAGE, -1, 0);

    /* max-mr-pages 8: 2 charged, so 8 fit (the old 2 go back), 9 not. */
    {
        uint64_t eight[9] = { b, b, b, b, b, b, b, b, b };

        p = rr_translation(m, key, RR_IOVA, eight, 9);
        g_assert_cmpuint(rr_cmd(m, &p), ==, QHCA_AQ_NO_RESOURCES);
        p = rr_translation(m, key, RR_IOVA, eight, 8);
        g_assert_cmpuint(rr_cmd(m, &p), ==, QHCA_AQ_SUCCESS);
    }
    g_assert_cmpuint(qt_handle_cmd(t, QHCA_CMD_DEREG_MR, index), ==,
                     QHCA_AQ_SUCCESS);
    p = rr_translation(m, key, RR_IOVA, pa, 2);
    g_assert_cmpuint(rr_cmd(m, &p), ==, QHCA_AQ_BAD_HANDLE);
    mwt_stop(m);
}

int main(int argc, char **argv)
{
    if (!qt_init(&argc, &argv)) {
        return g_test_run();
    }

    qtest_add_func("/qhca/mw/caps", test_caps);
    qtest_add_func("/qhca/mw/commands", test_mw_commands);
    qtest_add_func("/qhca/mw/fast-reg-commands", test_fast_reg_commands);
    qtest_add_func("/qhca/mw/bind-wqes", test_bind_wqes);
    qtest_add_func("/qhca/mw/fast-reg-wqes", test_fast_reg_wqes);
    qtest_add_func("/qhca/mw/rereg", test_rereg);

    return g_test_run();
}
