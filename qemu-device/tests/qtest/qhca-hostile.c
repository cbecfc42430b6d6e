/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Helpers shared by qhca-hostile-test and qhca-fuzz (see qhca-hostile.h).
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qhca-hostile.h"

void hx_setup(Hx *h, QhcaTest *t)
{
    memset(h, 0, sizeof(*h));
    h->t = t;
    qt_enable(t, 5);
    g_assert_cmpuint(qt_cmd(t, QHCA_CMD_ALLOC_UAR, NULL, 0, &h->uar), ==,
                     QHCA_AQ_SUCCESS);
    g_assert_cmpuint(qt_cmd(t, QHCA_CMD_ALLOC_PD, NULL, 0, &h->pdn), ==,
                     QHCA_AQ_SUCCESS);
    h->eq_entries = 64;
    h->eq = guest_alloc(&t->alloc, h->eq_entries * sizeof(struct qhca_eqe));
    qtest_memset(t->qts, h->eq, 0, h->eq_entries * sizeof(struct qhca_eqe));
    g_assert_cmpuint(qt_create_eq(t, h->eq, 6, 1, HX_EVENTS, &h->eqn), ==,
                     QHCA_AQ_SUCCESS);
}

uint8_t hx_create_cq(Hx *h, HxCq *cq, uint8_t depth_log2)
{
    QhcaTest *t = h->t;
    struct qhca_cmd_create_cq c = { 0 };

    memset(cq, 0, sizeof(*cq));
    cq->entries = 1u << depth_log2;
    cq->ring = guest_alloc(&t->alloc, cq->entries * sizeof(struct qhca_cqe));
    cq->dbrec = guest_alloc(&t->alloc, 64);
    qtest_memset(t->qts, cq->ring, 0, cq->entries * sizeof(struct qhca_cqe));
    qtest_memset(t->qts, cq->dbrec, 0, 4);
    c.ring_addr = cpu_to_le64(cq->ring);
    c.dbrec_addr = cpu_to_le64(cq->dbrec);
    c.eqn = cpu_to_le32(h->eqn);
    c.uar = cpu_to_le32(h->uar);
    c.depth_log2 = depth_log2;
    return qt_cmd(t, QHCA_CMD_CREATE_CQ, &c, sizeof(c), &cq->cqn);
}

uint8_t hx_create_qp(Hx *h, HxQp *qp, const HxCq *scq, const HxCq *rcq)
{
    QhcaTest *t = h->t;
    struct qhca_cmd_create_qp c = {
        .pdn = cpu_to_le32(h->pdn),
        .uar = cpu_to_le32(h->uar),
        .send_cqn = cpu_to_le16(scq->cqn),
        .recv_cqn = cpu_to_le16(rcq->cqn),
        .type = QHCA_QPT_RC,
        .sq_depth_log2 = 4,
        .sq_stride_log2 = 8,
        .rq_depth_log2 = 4,
        .rq_stride_log2 = 6,
    };

    memset(qp, 0, sizeof(*qp));
    qp->uar = h->uar;
    qp->sq_entries = 16;
    qp->rq_entries = 16;
    qp->sq_stride = 256;
    qp->rq_stride = 64;
    qp->sq = guest_alloc(&t->alloc, 16 * 256);
    qp->rq = guest_alloc(&t->alloc, 16 * 64);
    qtest_memset(t->qts, qp->sq, 0, 16 * 256);
    qtest_memset(t->qts, qp->rq, 0, 16 * 64);
    c.sq_addr = cpu_to_le64(qp->sq);
    c.rq_addr = cpu_to_le64(qp->rq);
    return qt_cmd(t, QHCA_CMD_CREATE_QP, &c, sizeof(c), &qp->qpn);
}

uint8_t hx_connect(Hx *h, const HxQp *qp, const HxQp *dest)
{
    struct qhca_cmd_modify_qp m[3] = {
        {
            .qpn = cpu_to_le32(qp->qpn),
            .attr_mask = cpu_to_le32(QHCA_QP_ATTR_STATE |
                                     QHCA_QP_ATTR_ACCESS),
            .state = QHCA_QPS_INIT,
            .access = QHCA_ACCESS_REMOTE_WRITE | QHCA_ACCESS_REMOTE_READ |
                      QHCA_ACCESS_REMOTE_ATOMIC,
        }, {
            .qpn = cpu_to_le32(qp->qpn),
            .attr_mask = cpu_to_le32(QHCA_QP_ATTR_STATE | QHCA_QP_ATTR_PATH |
                                     QHCA_QP_ATTR_DEST_QPN |
                                     QHCA_QP_ATTR_RQ_PSN |
                                     QHCA_QP_ATTR_MAX_DEST_RD_ATOMIC |
                                     QHCA_QP_ATTR_MIN_RNR_TIMER),
            .state = QHCA_QPS_RTR,
            .dlid = cpu_to_le16(HX_LID),
            .path_mtu = HX_MTU_1024,
            .dest_qpn = cpu_to_le32(dest->qpn),
            .rq_psn = cpu_to_le32(0x100 + dest->qpn),
            .max_dest_rd_atomic = 4,
            .min_rnr_timer = 1,
        }, {
            .qpn = cpu_to_le32(qp->qpn),
            .attr_mask = cpu_to_le32(QHCA_QP_ATTR_STATE | QHCA_QP_ATTR_SQ_PSN |
                                     QHCA_QP_ATTR_TIMEOUT |
                                     QHCA_QP_ATTR_RETRY_CNT |
                                     QHCA_QP_ATTR_RNR_RETRY |
                                     QHCA_QP_ATTR_MAX_RD_ATOMIC),
            .state = QHCA_QPS_RTS,
            .sq_psn = cpu_to_le32(0x100 + qp->qpn),
            .timeout = 10,
            .retry_cnt = 1,
            .rnr_retry = 1,
            .max_rd_atomic = 4,
        },
    };
    uint8_t status = QHCA_AQ_SUCCESS;
    int i;

    for (i = 0; i < 3 && status == QHCA_AQ_SUCCESS; i++) {
        status = qt_cmd(h->t, QHCA_CMD_MODIFY_QP, &m[i], sizeof(m[i]), NULL);
    }
    return status;
}

uint8_t hx_qp_state(Hx *h, const HxQp *qp)
{
    struct qhca_cmd_handle c = { .handle = cpu_to_le32(qp->qpn) };
    struct qhca_qp_attr a;

    g_assert_cmpuint(qt_query(h->t, QHCA_CMD_QUERY_QP, &c, sizeof(c), &a,
                              sizeof(a)), ==, QHCA_AQ_SUCCESS);
    return a.state;
}

uint8_t hx_phys_mr(Hx *h, uint64_t length, uint32_t *key)
{
    struct qhca_cmd_reg_mr c = {
        .length = cpu_to_le64(length),
        .pdn = cpu_to_le32(h->pdn),
        .access = QHCA_ACCESS_ALL,
        .key = 0x5a,
        .flags = QHCA_MR_F_PHYS,
    };
    uint32_t index = 0;
    uint8_t status = qt_cmd(h->t, QHCA_CMD_REG_MR, &c, sizeof(c), &index);

    *key = index << 8 | c.key;
    return status;
}

void hx_db(Hx *h, uint32_t page, uint32_t offset, uint32_t val)
{
    qpci_io_writel(h->t->dev, h->t->bar2,
                   (uint64_t)page * QHCA_DB_PAGE_SIZE + offset, val);
}

uint16_t hx_post_send(Hx *h, HxQp *qp, const struct qhca_sq_wqe *w,
                      const struct qhca_sge *sge, unsigned nsge)
{
    uint16_t idx = qp->sq_pi++;
    uint64_t slot = qp->sq + (idx & (qp->sq_entries - 1)) * qp->sq_stride;

    qtest_memwrite(h->t->qts, slot, w, sizeof(*w));
    if (nsge) {
        qtest_memwrite(h->t->qts, slot + sizeof(*w), sge,
                       nsge * sizeof(*sge));
    }
    return idx;
}

void hx_ring_sq(Hx *h, HxQp *qp)
{
    hx_db(h, qp->uar, QHCA_DB_SQ, qp->qpn << 16 | qp->sq_pi);
}

uint16_t hx_post_recv(Hx *h, HxQp *qp, uint64_t wr_id,
                      const struct qhca_sge *sge, unsigned nsge)
{
    uint16_t idx = qp->rq_pi++;
    uint64_t slot = qp->rq + (idx & (qp->rq_entries - 1)) * qp->rq_stride;
    struct qhca_rq_wqe w = {
        .wr_id = cpu_to_le64(wr_id),
        .num_sge = nsge,
    };

    qtest_memwrite(h->t->qts, slot, &w, sizeof(w));
    if (nsge) {
        qtest_memwrite(h->t->qts, slot + sizeof(w), sge,
                       nsge * sizeof(*sge));
    }
    hx_db(h, qp->uar, QHCA_DB_RQ, qp->qpn << 16 | qp->rq_pi);
    return idx;
}

bool hx_poll(Hx *h, HxCq *cq, struct qhca_cqe *cqe, int64_t timeout_us)
{
    QhcaTest *t = h->t;
    uint8_t phase = !((cq->ci / cq->entries) & 1);
    uint64_t slot = cq->ring + (cq->ci & (cq->entries - 1)) * sizeof(*cqe);
    gint64 end = g_get_monotonic_time() + timeout_us;
    uint32_t ci;

    for (;;) {
        uint8_t owner = qtest_readb(t->qts, slot +
                                    offsetof(struct qhca_cqe, owner));

        if ((owner & QHCA_CQE_OWNER_PHASE) == phase) {
            break;
        }
        if (g_get_monotonic_time() >= end) {
            return false;
        }
        g_usleep(200);
    }
    qtest_memread(t->qts, slot, cqe, sizeof(*cqe));
    cq->ci++;
    ci = cpu_to_le32(cq->ci);
    qtest_memwrite(t->qts, cq->dbrec, &ci, sizeof(ci));
    return true;
}

uint64_t hx_guest_errors(QhcaTest *t)
{
    return le64_to_cpu(qt_stats(t).guest_errors);
}

uint64_t hx_counter(QhcaTest *t, enum qhca_counter i)
{
    struct qhca_counters c;

    g_assert_cmpuint(qt_query(t, QHCA_CMD_QUERY_COUNTERS, NULL, 0, &c,
                              sizeof(c)), ==, QHCA_AQ_SUCCESS);
    return le64_to_cpu(c.cnt[i]);
}
