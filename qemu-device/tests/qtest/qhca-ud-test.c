/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qtest for the UD and UC queue pairs of qhca (interface 1.2), driven
 * straight from the test as qhca-dp-test drives RC: a UD send with and
 * without a GRH checked byte for byte (GRH contents, CQE fields), the
 * Q_Key rules, the UD and UC attribute tables of MODIFY_QP, and malformed
 * UD WQEs (unknown or non-UD opcodes, reserved address vector bits, more
 * SGEs than the stride holds, a message over the MTU), which must end in
 * an error CQE and ERR, never in a crash or a hang.
 *
 * The buffers are guest memory under one PHYS MR, so that WQEs can point
 * anywhere in RAM.
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qhca-qtest.h"

#define UD_QKEY             0x11111111u
#define UD_GRH              40
#define UD_MTU              4096
#define UD_PORT_GUID        0x525400fe00000102ull   /* set by -device */

typedef struct Ud {
    QhcaTest *t;
    uint32_t uar;
    uint32_t pdn;
    QhcaEq eq;
    uint32_t lkey;              /* PHYS MR over all RAM */
    QhcaCq cq;
} Ud;

#define UD_SQ_LOG2          4
#define UD_SQ_STRIDE_LOG2   7   /* 128 bytes: 4 SGEs */
#define UD_RQ_LOG2          4
#define UD_RQ_STRIDE_LOG2   6   /* 64 bytes: 3 SGEs */

static Ud *ud_start(void)
{
    Ud *u = g_new0(Ud, 1);
    QhcaTest *t = qt_start_dp(",port-guid=0x525400fe00000102", &u->uar,
                              &u->pdn, &u->eq, 0);

    u->t = t;
    u->lkey = qt_reg_phys_mr(t, u->pdn, QHCA_ACCESS_ALL, 0x5a, 0);
    qt_cq_init(t, &u->cq, 6, u->eq.eqn, u->uar);
    return u;
}

static void ud_stop(Ud *u)
{
    qt_assert_alive(u->t);
    qhca_stop(u->t);
    g_free(u);
}

static uint8_t ud_create(Ud *u, uint8_t type, QhcaQp *qp)
{
    const QhcaQpSpec spec = {
        .type = type,
        .pdn = u->pdn,
        .uar = u->uar,
        .send_cqn = u->cq.cqn,
        .recv_cqn = u->cq.cqn,
        .sq_log2 = UD_SQ_LOG2,
        .sq_stride_log2 = UD_SQ_STRIDE_LOG2,
        .rq_log2 = UD_RQ_LOG2,
        .rq_stride_log2 = UD_RQ_STRIDE_LOG2,
    };

    return qt_qp_try_create(u->t, qp, &spec);
}

static uint8_t ud_modify(Ud *u, QhcaQp *qp, uint8_t state, uint32_t mask,
                         const struct qhca_cmd_modify_qp *attrs)
{
    return qt_qp_modify(u->t, qp, state, mask, attrs);
}

/* A UD QP in RTS with @qkey. */
static void ud_qp(Ud *u, QhcaQp *qp, uint32_t qkey)
{
    g_assert_cmpuint(ud_create(u, QHCA_QPT_UD, qp), ==, QHCA_AQ_SUCCESS);
    qt_qp_ud_rts(u->t, qp, qkey, 0);
}

static struct qhca_sge ud_sge(Ud *u, uint64_t addr, uint32_t len)
{
    return qt_sge(addr, len, u->lkey);
}

/* A UD send WQE to @dest on our own LID; the caller adjusts it. */
static struct qhca_sq_wqe_ud ud_wqe(uint64_t wr_id, const QhcaQp *dest,
                                    uint32_t qkey, uint8_t nsge)
{
    return (struct qhca_sq_wqe_ud) {
        .wr_id = cpu_to_le64(wr_id),
        .opcode = QHCA_WR_SEND,
        .flags = QHCA_WQE_F_SIGNALED,
        .num_sge = nsge,
        .dest_qpn = cpu_to_le32(dest->qpn),
        .qkey = cpu_to_le32(qkey),
        .dlid = cpu_to_le16(QT_LID),
        .sl = 5,
    };
}

/* Write a send WQE (any layout) and its SGEs, ring the SQ. */
static uint16_t ud_post_send(Ud *u, QhcaQp *qp, const void *wqe,
                             const struct qhca_sge *sge, unsigned nsge)
{
    uint16_t idx = qt_qp_post_send(u->t, qp, wqe, sge, nsge);

    qt_qp_ring_sq(u->t, qp);
    return idx;
}

static struct qhca_cqe ud_expect(Ud *u, const QhcaQp *qp, uint64_t wr_id,
                                 uint8_t opcode, uint8_t status)
{
    struct qhca_cqe cqe = qt_cq_expect(u->t, &u->cq, qp->qpn, opcode, status);

    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, wr_id);
    return cqe;
}

/* ------------------------------------------------------------------ */

static void test_caps(void)
{
    Ud *u = ud_start();
    struct qhca_device_attr a;

    g_assert_cmpuint(qt_query(u->t, QHCA_CMD_QUERY_DEVICE, NULL, 0, &a,
                              sizeof(a)), ==, QHCA_AQ_SUCCESS);
    g_assert_cmphex(le32_to_cpu(a.device_cap_flags) &
                    (QHCA_DEV_CAP_UD | QHCA_DEV_CAP_UC), ==,
                    QHCA_DEV_CAP_UD | QHCA_DEV_CAP_UC);
    ud_stop(u);
}

/* The attribute table of ib_modify_qp_is_ok() for UD and UC. */
static void test_attrs(void)
{
    Ud *u = ud_start();
    struct qhca_cmd_modify_qp m = {
        .qkey = cpu_to_le32(0x80000005u),   /* the device takes any */
        .sq_psn = cpu_to_le32(0x123),
        .rq_psn = cpu_to_le32(0x456),
        .dest_qpn = cpu_to_le32(9),
        .dlid = cpu_to_le16(QT_LID),
        .path_mtu = 3,
        .timeout = 14,
    };
    struct qhca_qp_attr a;
    QhcaQp qp;

    /* UD: INIT needs the Q_Key and takes nothing else. */
    g_assert_cmpuint(ud_create(u, QHCA_QPT_UD, &qp), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(ud_modify(u, &qp, QHCA_QPS_INIT, 0, &m), ==,
                     QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(ud_modify(u, &qp, QHCA_QPS_INIT,
                               QHCA_QP_ATTR_QKEY | QHCA_QP_ATTR_ACCESS, &m),
                     ==, QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(ud_modify(u, &qp, QHCA_QPS_INIT, QHCA_QP_ATTR_QKEY, &m),
                     ==, QHCA_AQ_SUCCESS);
    /* RTR: no path, destination or PSN. */
    g_assert_cmpuint(ud_modify(u, &qp, QHCA_QPS_RTR, QHCA_QP_ATTR_PATH, &m),
                     ==, QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(ud_modify(u, &qp, QHCA_QPS_RTR, QHCA_QP_ATTR_RQ_PSN,
                               &m), ==, QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(ud_modify(u, &qp, QHCA_QPS_RTR, 0, &m), ==,
                     QHCA_AQ_SUCCESS);
    /* RTS: the SQ PSN, no timers. */
    g_assert_cmpuint(ud_modify(u, &qp, QHCA_QPS_RTS, 0, &m), ==,
                     QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(ud_modify(u, &qp, QHCA_QPS_RTS, QHCA_QP_ATTR_SQ_PSN |
                               QHCA_QP_ATTR_TIMEOUT, &m), ==,
                     QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(ud_modify(u, &qp, QHCA_QPS_RTS, QHCA_QP_ATTR_SQ_PSN,
                               &m), ==, QHCA_AQ_SUCCESS);
    a = qt_query_qp(u->t, qp.qpn);
    g_assert_cmpuint(a.type, ==, QHCA_QPT_UD);
    g_assert_cmphex(le32_to_cpu(a.qkey), ==, 0x80000005u);
    g_assert_cmphex(le32_to_cpu(a.sq_psn), ==, 0x123);
    m.qkey = cpu_to_le32(7);
    g_assert_cmpuint(ud_modify(u, &qp, QHCA_QPS_RTS, QHCA_QP_ATTR_QKEY, &m),
                     ==, QHCA_AQ_SUCCESS);
    g_assert_cmphex(le32_to_cpu(qt_query_qp(u->t, qp.qpn).qkey), ==, 7);

    /* UC: no Q_Key ever; RTR needs path, destination and PSN. */
    g_assert_cmpuint(ud_create(u, QHCA_QPT_UC, &qp), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(ud_modify(u, &qp, QHCA_QPS_INIT, QHCA_QP_ATTR_QKEY, &m),
                     ==, QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(ud_modify(u, &qp, QHCA_QPS_INIT, QHCA_QP_ATTR_ACCESS,
                               &m), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(ud_modify(u, &qp, QHCA_QPS_RTR, QHCA_QP_ATTR_PATH |
                               QHCA_QP_ATTR_DEST_QPN, &m), ==,
                     QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(ud_modify(u, &qp, QHCA_QPS_RTR, QHCA_QP_ATTR_PATH |
                               QHCA_QP_ATTR_DEST_QPN | QHCA_QP_ATTR_RQ_PSN |
                               QHCA_QP_ATTR_MIN_RNR_TIMER, &m), ==,
                     QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(ud_modify(u, &qp, QHCA_QPS_RTR, QHCA_QP_ATTR_PATH |
                               QHCA_QP_ATTR_DEST_QPN | QHCA_QP_ATTR_RQ_PSN,
                               &m), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(ud_modify(u, &qp, QHCA_QPS_RTS, QHCA_QP_ATTR_SQ_PSN |
                               QHCA_QP_ATTR_RETRY_CNT, &m), ==,
                     QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(ud_modify(u, &qp, QHCA_QPS_RTS, QHCA_QP_ATTR_SQ_PSN,
                               &m), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(qt_query_qp(u->t, qp.qpn).type, ==, QHCA_QPT_UC);

    /* An unknown type is still refused. */
    g_assert_cmpuint(ud_create(u, 5, &qp), ==, QHCA_AQ_BAD_PARAM);
    ud_stop(u);
}

/* A UD send with a GRH: data after the 40 bytes, a real IB GRH before. */
static void test_send_grh(void)
{
    static const uint8_t gid[16] = {
        0xfe, 0x80, 0, 0, 0, 0, 0, 0,
        0x52, 0x54, 0x00, 0xfe, 0x00, 0x00, 0x01, 0x02,
    };
    Ud *u = ud_start();
    QhcaQp a, b;
    uint64_t src = guest_alloc(&u->t->alloc, 8192);
    uint64_t dst = guest_alloc(&u->t->alloc, 8192);
    uint8_t data[1000], got[UD_GRH + sizeof(data)];
    struct qhca_sge ss = ud_sge(u, src, sizeof(data));
    struct qhca_sge rs = ud_sge(u, dst, 2048);
    struct qhca_sq_wqe_ud w;
    struct qhca_cqe cqe;
    unsigned i;

    ud_qp(u, &a, UD_QKEY);
    ud_qp(u, &b, UD_QKEY);
    for (i = 0; i < sizeof(data); i++) {
        data[i] = i * 7 + 3;
    }
    qtest_memwrite(u->t->qts, src, data, sizeof(data));
    qtest_memset(u->t->qts, dst, 0xee, 2048);

    qt_qp_post_recv(u->t, &b, 0x200, &rs, 1);
    w = ud_wqe(0x100, &b, UD_QKEY, 1);
    w.opcode = QHCA_WR_SEND_WITH_IMM;
    w.imm_data = cpu_to_be32(0xabcdef01);
    w.av_flags = QHCA_AV_F_GRH;
    memcpy(w.dgid, gid, sizeof(gid));
    w.flow_label = cpu_to_le32(0xbcdef);
    w.hop_limit = 9;
    w.traffic_class = 0x31;
    ud_post_send(u, &a, &w, &ss, 1);

    /* The send completes when it is out; the receive follows. */
    cqe = ud_expect(u, &a, 0x100, QHCA_WC_SEND, QHCA_WC_SUCCESS);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, sizeof(data));
    cqe = ud_expect(u, &b, 0x200, QHCA_WC_RECV, QHCA_WC_SUCCESS);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, UD_GRH + sizeof(data));
    g_assert_cmpuint(le32_to_cpu(cqe.src_qp), ==, a.qpn);
    g_assert_cmpuint(le16_to_cpu(cqe.slid), ==, QT_LID);
    g_assert_cmpuint(cqe.sl, ==, 5);
    g_assert_cmphex(cqe.flags, ==, QHCA_CQE_F_GRH | QHCA_CQE_F_IMM);
    g_assert_cmphex(be32_to_cpu(cqe.imm_data), ==, 0xabcdef01);

    qtest_memread(u->t->qts, dst, got, sizeof(got));
    g_assert_cmphex(ldl_be_p(got), ==, 6u << 28 | 0x31u << 20 | 0xbcdef);
    g_assert_cmpuint(lduw_be_p(got + 4), ==, 12 + 8 + 4 + 1000 + 4);
    g_assert_cmpuint(got[6], ==, 0x1b);
    g_assert_cmpuint(got[7], ==, 9);
    g_assert(!memcmp(got + 8, gid, 16));
    g_assert(!memcmp(got + 24, gid, 16));
    g_assert(!memcmp(got + UD_GRH, data, sizeof(data)));
    g_assert_cmpuint(qtest_readb(u->t->qts, dst + UD_GRH + sizeof(data)), ==,
                     0xee);

    /* Without a GRH the area is left alone. */
    qtest_memset(u->t->qts, dst, 0xee, 2048);
    qt_qp_post_recv(u->t, &b, 0x201, &rs, 1);
    w = ud_wqe(0x101, &b, UD_QKEY, 1);
    ud_post_send(u, &a, &w, &ss, 1);
    ud_expect(u, &a, 0x101, QHCA_WC_SEND, QHCA_WC_SUCCESS);
    cqe = ud_expect(u, &b, 0x201, QHCA_WC_RECV, QHCA_WC_SUCCESS);
    g_assert_cmphex(cqe.flags, ==, 0);
    qtest_memread(u->t->qts, dst, got, sizeof(got));
    for (i = 0; i < UD_GRH; i++) {
        g_assert_cmpuint(got[i], ==, 0xee);
    }
    g_assert(!memcmp(got + UD_GRH, data, sizeof(data)));

    /* A GRH for a GID that is not the port's is not for us. */
    w = ud_wqe(0x102, &b, UD_QKEY, 1);
    w.av_flags = QHCA_AV_F_GRH;
    ud_post_send(u, &a, &w, &ss, 1);
    ud_expect(u, &a, 0x102, QHCA_WC_SEND, QHCA_WC_SUCCESS);
    qt_cq_assert_empty(u->t, &u->cq);
    ud_stop(u);
}

/*
 * Q_Keys: a mismatch is dropped and counted, the high bit of the WQE's
 * Q_Key sends the QP's own; no receive WQE drops silently.
 */
static void test_qkey(void)
{
    Ud *u = ud_start();
    QhcaQp a, b;
    uint64_t buf = guest_alloc(&u->t->alloc, 4096);
    struct qhca_sge ss = ud_sge(u, buf, 16);
    struct qhca_sge rs = ud_sge(u, buf + 2048, 1024);
    struct qhca_sq_wqe_ud w;
    uint64_t viol = qt_counter(u->t, QHCA_CNT_QKEY_VIOLATIONS);
    uint64_t drops = qt_counter(u->t, QHCA_CNT_RX_DROPS);

    ud_qp(u, &a, 0x1234);
    ud_qp(u, &b, UD_QKEY);

    /* No receive WQE: dropped. */
    w = ud_wqe(1, &b, UD_QKEY, 1);
    ud_post_send(u, &a, &w, &ss, 1);
    ud_expect(u, &a, 1, QHCA_WC_SEND, QHCA_WC_SUCCESS);
    qt_cq_assert_empty(u->t, &u->cq);
    g_assert_cmpuint(qt_counter(u->t, QHCA_CNT_RX_DROPS), ==, drops + 1);

    qt_qp_post_recv(u->t, &b, 0x20, &rs, 1);
    /* Wrong Q_Key, then the QP's own (0x1234, also wrong): dropped. */
    w = ud_wqe(2, &b, UD_QKEY + 1, 1);
    ud_post_send(u, &a, &w, &ss, 1);
    ud_expect(u, &a, 2, QHCA_WC_SEND, QHCA_WC_SUCCESS);
    w = ud_wqe(3, &b, QHCA_UD_QKEY_USE_QP | UD_QKEY, 1);
    ud_post_send(u, &a, &w, &ss, 1);
    ud_expect(u, &a, 3, QHCA_WC_SEND, QHCA_WC_SUCCESS);
    qt_cq_assert_empty(u->t, &u->cq);
    g_assert_cmpuint(qt_counter(u->t, QHCA_CNT_QKEY_VIOLATIONS), ==, viol + 2);

    /* The right one takes the receive WQE still posted. */
    w = ud_wqe(4, &b, UD_QKEY, 1);
    ud_post_send(u, &a, &w, &ss, 1);
    ud_expect(u, &a, 4, QHCA_WC_SEND, QHCA_WC_SUCCESS);
    ud_expect(u, &b, 0x20, QHCA_WC_RECV, QHCA_WC_SUCCESS);
    g_assert_cmpuint(qt_qp_state(u->t, &b), ==, QHCA_QPS_RTS);
    ud_stop(u);
}

/* Malformed UD WQEs: an error CQE, the SQ in ERR, the device alive. */
static void test_bad_wqe(void)
{
    enum {
        BAD_OPCODE, BAD_WRITE, BAD_READ, BAD_AV_FLAGS, BAD_RSVD0,
        BAD_RSVD2, BAD_QPN, BAD_SL, BAD_FLOW, BAD_SGID, BAD_NUM_SGE,
        BAD_OVER_MTU, BAD_INLINE, BAD_NUM
    };
    static const uint8_t status[BAD_NUM] = {
        [BAD_OVER_MTU] = QHCA_WC_LOC_LEN_ERR,
    };
    unsigned i;

    for (i = 0; i < BAD_NUM; i++) {
        Ud *u = ud_start();
        QhcaQp a, b;
        uint64_t buf = guest_alloc(&u->t->alloc, 3 * UD_MTU);
        struct qhca_sge sge[8];
        struct qhca_sq_wqe_ud w;
        unsigned nsge = 1;
        uint8_t want = status[i] ? status[i] : QHCA_WC_LOC_QP_OP_ERR;
        struct qhca_cqe cqe;
        unsigned k;

        ud_qp(u, &a, UD_QKEY);
        ud_qp(u, &b, UD_QKEY);
        for (k = 0; k < 8; k++) {
            sge[k] = ud_sge(u, buf, 8);
        }
        w = ud_wqe(0x40 + i, &b, UD_QKEY, 1);
        switch (i) {
        case BAD_OPCODE:
            w.opcode = 0xff;
            break;
        case BAD_WRITE:
            w.opcode = QHCA_WR_RDMA_WRITE;
            break;
        case BAD_READ:
            w.opcode = QHCA_WR_ATOMIC_CMP_AND_SWP;
            break;
        case BAD_AV_FLAGS:
            w.av_flags = 0x80;
            break;
        case BAD_RSVD0:
            w.rsvd0 = 1;
            break;
        case BAD_RSVD2:
            w.rsvd2 = cpu_to_le16(1);
            break;
        case BAD_QPN:
            w.dest_qpn = cpu_to_le32(0x1000000 | b.qpn);
            break;
        case BAD_SL:
            w.sl = 16;
            break;
        case BAD_FLOW:
            w.av_flags = QHCA_AV_F_GRH;
            w.flow_label = cpu_to_le32(0x100000);
            break;
        case BAD_SGID:
            w.av_flags = QHCA_AV_F_GRH;
            w.sgid_index = 1;
            break;
        case BAD_NUM_SGE:
            /* A 128-byte stride has room for 4 SGEs. */
            w.num_sge = 255;
            nsge = 4;
            break;
        case BAD_OVER_MTU:
            sge[0] = ud_sge(u, buf, UD_MTU);
            sge[1] = ud_sge(u, buf, 1);
            w.num_sge = 2;
            nsge = 2;
            break;
        case BAD_INLINE:
            w.flags |= QHCA_WQE_F_INLINE;
            w.num_sge = 0;
            w.inline_len = cpu_to_le32(0xffffffff);
            nsge = 0;
            break;
        }
        ud_post_send(u, &a, &w, sge, nsge);
        cqe = ud_expect(u, &a, 0x40 + i,
                        i == BAD_WRITE ? QHCA_WC_RDMA_WRITE :
                        i == BAD_READ ? QHCA_WC_COMP_SWAP : QHCA_WC_SEND,
                        want);
        g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, 0);
        g_assert_cmpuint(qt_qp_state(u->t, &a), ==, QHCA_QPS_ERR);
        g_assert_cmpuint(qt_qp_state(u->t, &b), ==, QHCA_QPS_RTS);
        qt_cq_assert_empty(u->t, &u->cq);
        ud_stop(u);
    }
}

/* UC: READ and atomics are not UC operations; SEND and WRITE work. */
static void test_uc(void)
{
    Ud *u = ud_start();
    uint64_t buf = guest_alloc(&u->t->alloc, 16384);
    struct qhca_cmd_modify_qp m = {
        .dlid = cpu_to_le16(QT_LID),
        .path_mtu = 1,          /* 256 */
        .access = QHCA_ACCESS_REMOTE_WRITE,
    };
    struct qhca_sge ss = ud_sge(u, buf, 1000);
    struct qhca_sge rs = ud_sge(u, buf + 4096, 2048);
    struct qhca_sq_wqe w = {
        .wr_id = cpu_to_le64(1),
        .opcode = QHCA_WR_SEND,
        .flags = QHCA_WQE_F_SIGNALED,
        .num_sge = 1,
    };
    uint8_t data[1000], got[1000];
    QhcaQp a, b;
    unsigned i;

    g_assert_cmpuint(ud_create(u, QHCA_QPT_UC, &a), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(ud_create(u, QHCA_QPT_UC, &b), ==, QHCA_AQ_SUCCESS);
    m.dest_qpn = cpu_to_le32(b.qpn);
    g_assert_cmpuint(ud_modify(u, &a, QHCA_QPS_INIT, QHCA_QP_ATTR_ACCESS, &m),
                     ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(ud_modify(u, &a, QHCA_QPS_RTR, QHCA_QP_ATTR_PATH |
                               QHCA_QP_ATTR_DEST_QPN | QHCA_QP_ATTR_RQ_PSN,
                               &m), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(ud_modify(u, &a, QHCA_QPS_RTS, QHCA_QP_ATTR_SQ_PSN, &m),
                     ==, QHCA_AQ_SUCCESS);
    m.dest_qpn = cpu_to_le32(a.qpn);
    m.rq_psn = cpu_to_le32(77);     /* UC takes a FIRST at any PSN */
    g_assert_cmpuint(ud_modify(u, &b, QHCA_QPS_INIT, QHCA_QP_ATTR_ACCESS, &m),
                     ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(ud_modify(u, &b, QHCA_QPS_RTR, QHCA_QP_ATTR_PATH |
                               QHCA_QP_ATTR_DEST_QPN | QHCA_QP_ATTR_RQ_PSN,
                               &m), ==, QHCA_AQ_SUCCESS);

    for (i = 0; i < sizeof(data); i++) {
        data[i] = i ^ 0x5a;
    }
    qtest_memwrite(u->t->qts, buf, data, sizeof(data));
    qt_qp_post_recv(u->t, &b, 0x30, &rs, 1);
    ud_post_send(u, &a, &w, &ss, 1);
    ud_expect(u, &a, 1, QHCA_WC_SEND, QHCA_WC_SUCCESS);
    g_assert_cmpuint(le32_to_cpu(ud_expect(u, &b, 0x30, QHCA_WC_RECV,
                                           QHCA_WC_SUCCESS).byte_len), ==,
                     sizeof(data));
    qtest_memread(u->t->qts, buf + 4096, got, sizeof(got));
    g_assert(!memcmp(got, data, sizeof(data)));

    w.wr_id = cpu_to_le64(2);
    w.opcode = QHCA_WR_RDMA_READ;
    w.remote_addr = cpu_to_le64(buf + 8192);
    w.rkey = cpu_to_le32(u->lkey);
    ud_post_send(u, &a, &w, &ss, 1);
    ud_expect(u, &a, 2, QHCA_WC_RDMA_READ, QHCA_WC_LOC_QP_OP_ERR);
    g_assert_cmpuint(qt_qp_state(u->t, &a), ==, QHCA_QPS_ERR);
    qt_cq_assert_empty(u->t, &u->cq);
    ud_stop(u);
}

static uint8_t ud_mcast(Ud *u, uint16_t op, uint32_t qpn, uint16_t mlid,
                        const uint8_t *mgid)
{
    struct qhca_cmd_mcast c = {
        .qpn = cpu_to_le32(qpn),
        .mlid = cpu_to_le16(mlid),
    };

    memcpy(c.mgid, mgid, sizeof(c.mgid));
    return qt_cmd(u->t, op, &c, sizeof(c), NULL);
}

/* ATTACH/DETACH_MCAST checks, then delivery to the members only. */
static void test_mcast(void)
{
    static const uint8_t mgid[16] = { 0xff, 0x12, 0x40, 0x1b, [15] = 7 };
    static const uint8_t ucast[16] = { 0xfe, 0x80, [15] = 7 };
    Ud *u = ud_start();
    QhcaQp a, b, rc;
    uint64_t buf = guest_alloc(&u->t->alloc, 8192);
    struct qhca_sge ss = ud_sge(u, buf, 64);
    struct qhca_sge rs = ud_sge(u, buf + 4096, 1024);
    struct qhca_cmd_mcast bad = { .mlid = cpu_to_le16(0xc001), .rsvd0 = 1 };
    struct qhca_sq_wqe_ud w;
    struct qhca_cqe cqe;
    unsigned i;

    ud_qp(u, &a, UD_QKEY);
    ud_qp(u, &b, UD_QKEY);
    g_assert_cmpuint(ud_create(u, QHCA_QPT_RC, &rc), ==, QHCA_AQ_SUCCESS);
    memcpy(bad.mgid, mgid, 16);
    bad.qpn = cpu_to_le32(a.qpn);
    g_assert_cmpuint(qt_cmd(u->t, QHCA_CMD_ATTACH_MCAST, &bad, sizeof(bad),
                            NULL), ==, QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(ud_mcast(u, QHCA_CMD_ATTACH_MCAST, a.qpn, 0xc001, ucast),
                     ==, QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(ud_mcast(u, QHCA_CMD_ATTACH_MCAST, a.qpn, 0xbfff, mgid),
                     ==, QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(ud_mcast(u, QHCA_CMD_ATTACH_MCAST, rc.qpn, 0xc001, mgid),
                     ==, QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(ud_mcast(u, QHCA_CMD_ATTACH_MCAST, 999, 0xc001, mgid),
                     ==, QHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(ud_mcast(u, QHCA_CMD_DETACH_MCAST, b.qpn, 0xc001, mgid),
                     ==, QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(ud_mcast(u, QHCA_CMD_ATTACH_MCAST, b.qpn, 0xc001, mgid),
                     ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(ud_mcast(u, QHCA_CMD_ATTACH_MCAST, b.qpn, 0xc001, mgid),
                     ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(ud_mcast(u, QHCA_CMD_ATTACH_MCAST, a.qpn, 0xc002, mgid),
                     ==, QHCA_AQ_BAD_PARAM);

    /* To the group: B (a member) receives, A (not one) does not. */
    qt_qp_post_recv(u->t, &a, 0x60, &rs, 1);
    qt_qp_post_recv(u->t, &b, 0x61, &rs, 1);
    w = ud_wqe(0x62, &b, UD_QKEY, 1);
    w.dest_qpn = cpu_to_le32(QHCA_MCAST_QPN);
    w.dlid = cpu_to_le16(0xc001);
    w.av_flags = QHCA_AV_F_GRH;
    memcpy(w.dgid, mgid, 16);
    ud_post_send(u, &a, &w, &ss, 1);
    ud_expect(u, &a, 0x62, QHCA_WC_SEND, QHCA_WC_SUCCESS);
    cqe = ud_expect(u, &b, 0x61, QHCA_WC_RECV, QHCA_WC_SUCCESS);
    g_assert_cmpuint(le32_to_cpu(cqe.src_qp), ==, a.qpn);
    g_assert_cmphex(cqe.flags, ==, QHCA_CQE_F_GRH);
    qt_cq_assert_empty(u->t, &u->cq);

    /* A destroyed member is detached: the group is empty again. */
    g_assert_cmpuint(qt_handle_cmd(u->t, QHCA_CMD_DESTROY_QP, b.qpn), ==,
                     QHCA_AQ_SUCCESS);
    w.wr_id = cpu_to_le64(0x63);
    ud_post_send(u, &a, &w, &ss, 1);
    ud_expect(u, &a, 0x63, QHCA_WC_SEND, QHCA_WC_SUCCESS);
    qt_cq_assert_empty(u->t, &u->cq);

    /* The table holds QHCA_MAX_MCAST_GROUPS groups. */
    for (i = 0; i < QHCA_MAX_MCAST_GROUPS; i++) {
        uint8_t g[16] = { 0xff, 0x12, [14] = i, [15] = 0x99 };

        g_assert_cmpuint(ud_mcast(u, QHCA_CMD_ATTACH_MCAST, a.qpn, 0xc100 + i,
                                  g), ==, QHCA_AQ_SUCCESS);
    }
    g_assert_cmpuint(ud_mcast(u, QHCA_CMD_ATTACH_MCAST, a.qpn, 0xc001, mgid),
                     ==, QHCA_AQ_NO_RESOURCES);
    ud_stop(u);
}

int main(int argc, char **argv)
{
    if (!qt_init(&argc, &argv)) {
        return g_test_run();
    }

    qtest_add_func("/qhca/ud/caps", test_caps);
    qtest_add_func("/qhca/ud/attrs", test_attrs);
    qtest_add_func("/qhca/ud/send-grh", test_send_grh);
    qtest_add_func("/qhca/ud/qkey", test_qkey);
    qtest_add_func("/qhca/ud/bad-wqe", test_bad_wqe);
    qtest_add_func("/qhca/ud/uc", test_uc);
    qtest_add_func("/qhca/ud/mcast", test_mcast);
    return g_test_run();
}
