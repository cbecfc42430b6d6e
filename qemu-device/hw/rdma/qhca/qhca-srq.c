/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qhca shared receive queues (interface 1.2): CREATE/MODIFY/QUERY/
 * DESTROY_SRQ, the SRQ doorbell, and the receive WQEs QPs created with
 * QHCA_QP_F_SRQ take from it.
 *
 * Every QP on an SRQ takes its WQEs on the engine thread under the device
 * lock, so WQEs leave the ring strictly in ring order whichever QP takes
 * them.  The doorbell does not take the lock: it records the new index in
 * db_pi, and the next taker (or QUERY_SRQ) checks it against the ring and
 * applies it.  Nothing else needs waking: a QP that found the SRQ empty
 * sent an RNR NAK and its peer asks again later.
 *
 * The object knows nothing of the QPs on it beyond their number; an XRC
 * SRQ can later add its own fields (XRC domain, CQ) beside these.
 */
#include "qemu/osdep.h"
#include "qemu/bitops.h"
#include "qemu/cutils.h"
#include "qemu/host-utils.h"
#include "qhca.h"
#include "trace.h"

void qhca_srq_init(QhcaState *s)
{
    uint32_t i;

    qhca_table_init(&s->srqs, "srq", 1, s->params.max_srqs);
    s->srq = g_new0(QhcaSrq, s->srqs.size);
    for (i = 0; i < s->srqs.size; i++) {
        s->srq[i].srqn = i;
    }
}

void qhca_srq_fini(QhcaState *s)
{
    qhca_table_fini(&s->srqs);
    g_free(s->srq);
    s->srq = NULL;
}

static void qhca_srq_free(QhcaState *s, QhcaSrq *srq)
{
    s->pd_refs[srq->pdn]--;
    s->uar_refs[srq->uar]--;
    if (srq->type == QHCA_SRQT_XRC) {
        s->xrcd_refs[srq->xrcd]--;
        s->cq[srq->cqn].qp_refs--;
    }
    qatomic_set(&srq->entries, 0);
    qatomic_set(&srq->db_pi, 0);
    qhca_table_free(&s->srqs, srq->srqn);
}

/* After every QP is gone (qhca_objects_reset frees QPs first). */
void qhca_srq_reset(QhcaState *s)
{
    unsigned long i;

    QHCA_TABLE_FOR_EACH(&s->srqs, i) {
        qhca_srq_free(s, &s->srq[i]);
    }
    qhca_table_reset(&s->srqs);
}

uint8_t qhca_srq_create(QhcaState *s, const QhcaCmd *cmd,
                        const struct qhca_cmd_create_srq *p, uint32_t *srqn)
{
    uint64_t ring = le64_to_cpu(p->ring_addr);
    uint32_t pdn = le32_to_cpu(p->pdn);
    uint32_t uar = le32_to_cpu(p->uar);
    uint32_t limit = le32_to_cpu(p->limit);
    uint32_t xrcd = le32_to_cpu(p->xrcd);
    uint32_t cqn = le32_to_cpu(p->cqn);
    bool xrc = p->type == QHCA_SRQT_XRC;
    unsigned max_depth = 31 - clz32(s->params.max_srq_wr);
    QhcaSrq *srq;

    if (p->rsvd0 || p->rsvd1) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "reserved field set");
    }
    if (p->type != QHCA_SRQT_BASIC && !xrc) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "SRQ type not supported");
    }
    if (!xrc && (xrcd || cqn)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "XRC domain or CQ for a basic SRQ");
    }
    if (xrc && !qhca_table_live(&s->xrcds, xrcd)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_HANDLE,
                                "no such XRC domain");
    }
    if (xrc && !qhca_table_live(&s->cqs, cqn)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_HANDLE, "no such CQ");
    }
    if (p->depth_log2 < 1 || p->depth_log2 > max_depth) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "depth out of range");
    }
    if (p->stride_log2 < QHCA_RQ_MIN_STRIDE_LOG2 ||
        p->stride_log2 > QHCA_WQE_MAX_STRIDE_LOG2) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "stride out of range");
    }
    if (limit > (1u << p->depth_log2)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "limit larger than the ring");
    }
    if (ring % QHCA_QUEUE_ALIGN) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "ring not 64-byte aligned");
    }
    if (!qhca_table_live(&s->pds, pdn)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_HANDLE, "no such PD");
    }
    if (!qhca_table_live(&s->uars, uar)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_HANDLE, "no such UAR");
    }
    if (!qhca_dma_in_ram(s, ring, 1ull << (p->depth_log2 + p->stride_log2),
                         false)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_ADDRESS,
                                "ring not in guest RAM");
    }
    if (!qhca_table_alloc(&s->srqs, srqn)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_NO_RESOURCES, "table full");
    }

    srq = &s->srq[*srqn];
    srq->pdn = pdn;
    srq->ring = ring;
    srq->depth_log2 = p->depth_log2;
    srq->stride_log2 = p->stride_log2;
    srq->limit = limit;
    srq->type = p->type;
    srq->xrcd = xrc ? xrcd : 0;
    srq->cqn = xrc ? cqn : 0;
    if (xrc) {
        s->xrcd_refs[xrcd]++;
        s->cq[cqn].qp_refs++;
    }
    srq->pi = 0;
    srq->qp_refs = 0;
    qatomic_set(&srq->ci, 0);
    qatomic_set(&srq->state, QHCA_SRQ_STATE_READY);
    qatomic_set(&srq->db_pi, 0);
    qatomic_set(&srq->uar, uar);
    qatomic_set(&srq->entries, 1u << p->depth_log2);
    s->pd_refs[pdn]++;
    s->uar_refs[uar]++;
    trace_qhca_srq_create(*srqn, pdn, uar, ring, srq->entries,
                          1u << srq->stride_log2, limit);
    if (xrc) {
        trace_qhca_srq_create_xrc(*srqn, xrcd, cqn);
    }
    return QHCA_AQ_SUCCESS;
}

static void qhca_srq_sync(QhcaState *s, QhcaSrq *srq);

/*
 * 1.6 MAX_WR: the new ring's fields, checked before anything changes.
 * Without the mask bit they must be zero, as the reserved bytes are.
 */
static uint8_t qhca_srq_check_ring(QhcaState *s, const QhcaCmd *cmd,
                                   const struct qhca_cmd_modify_srq *p,
                                   bool resize)
{
    uint64_t ring = le64_to_cpu(p->ring_addr);
    unsigned max_depth = 31 - clz32(s->params.max_srq_wr);

    if (!buffer_is_zero(p->rsvd1, sizeof(p->rsvd1)) || p->rsvd2) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "reserved field set");
    }
    if (!resize) {
        if (ring || p->depth_log2) {
            return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                    "ring given without its mask bit");
        }
        return QHCA_AQ_SUCCESS;
    }
    if (p->depth_log2 < 1 || p->depth_log2 > max_depth) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "depth out of range");
    }
    if (ring % QHCA_QUEUE_ALIGN) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "ring not 64-byte aligned");
    }
    return QHCA_AQ_SUCCESS;
}

/*
 * Move @srq to the ring of @p, under the lock: the WQEs posted and not
 * taken go to the slots of the same free-running index there.  Nothing
 * changes unless every one of them was copied.
 */
static uint8_t qhca_srq_resize(QhcaState *s, const QhcaCmd *cmd,
                               QhcaSrq *srq,
                               const struct qhca_cmd_modify_srq *p)
{
    uint64_t ring = le64_to_cpu(p->ring_addr);
    uint32_t entries = 1u << p->depth_log2;
    uint32_t stride = 1u << srq->stride_log2;
    uint8_t wqe[1u << QHCA_WQE_MAX_STRIDE_LOG2];
    uint16_t idx;

    if (!qhca_dma_in_ram(s, ring, (uint64_t)entries << srq->stride_log2,
                         true)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_ADDRESS,
                                "ring not in guest RAM");
    }
    for (idx = srq->ci; idx != srq->pi; idx++) {
        uint64_t from = qhca_ring_slot(srq->ring, srq->entries,
                                       srq->stride_log2, idx);
        uint64_t to = qhca_ring_slot(ring, entries, srq->stride_log2, idx);

        if (!qhca_dma_read(s, from, wqe, stride)) {
            return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_ADDRESS,
                                    "old ring not in guest RAM");
        }
        if (!qhca_dma_write(s, to, wqe, stride)) {
            return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_ADDRESS,
                                    "new ring not in guest RAM");
        }
    }
    trace_qhca_srq_resize(srq->srqn, srq->entries, entries, ring,
                          (uint16_t)(srq->pi - srq->ci));
    srq->ring = ring;
    srq->depth_log2 = p->depth_log2;
    qatomic_set(&srq->entries, entries);
    return QHCA_AQ_SUCCESS;
}

uint8_t qhca_srq_modify(QhcaState *s, const QhcaCmd *cmd,
                        const struct qhca_cmd_modify_srq *p)
{
    uint32_t srqn = le32_to_cpu(p->srqn);
    uint32_t mask = le32_to_cpu(p->attr_mask);
    uint32_t limit = le32_to_cpu(p->limit);
    bool resize = mask & QHCA_SRQ_ATTR_MAX_WR;
    uint32_t entries;
    QhcaSrq *srq;
    uint8_t status;

    if (p->rsvd || (mask & QHCA_SRQ_ATTR_RSVD)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "reserved field set");
    }
    status = qhca_srq_check_ring(s, cmd, p, resize);
    if (status != QHCA_AQ_SUCCESS) {
        return status;
    }
    if (!qhca_table_live(&s->srqs, srqn)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_HANDLE, "no such SRQ");
    }
    srq = &s->srq[srqn];
    if (!(mask & QHCA_SRQ_ATTR_LIMIT) && limit) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "limit given without its mask bit");
    }
    entries = resize ? 1u << p->depth_log2 : srq->entries;
    if (mask & QHCA_SRQ_ATTR_LIMIT ? limit > entries : srq->limit > entries) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "limit larger than the ring");
    }
    if (resize) {
        if (srq->state == QHCA_SRQ_STATE_ERR) {
            return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_STATE,
                                    "SRQ in error");
        }
        qhca_srq_sync(s, srq);
        if ((uint16_t)(srq->pi - srq->ci) > entries) {
            return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                    "more WQEs posted than the ring holds");
        }
        status = qhca_srq_resize(s, cmd, srq, p);
        if (status != QHCA_AQ_SUCCESS) {
            return status;
        }
    }
    if (mask & QHCA_SRQ_ATTR_LIMIT) {
        srq->limit = limit;
        trace_qhca_srq_modify(srqn, limit);
    }
    return QHCA_AQ_SUCCESS;
}

/*
 * Apply the last doorbell, under the lock: at most a ring ahead of the
 * consumer and not behind the index already applied.
 */
static void qhca_srq_sync(QhcaState *s, QhcaSrq *srq)
{
    uint32_t db = qatomic_xchg(&srq->db_pi, 0);
    uint16_t pi = db & QHCA_DB_QUEUE_IDX;
    uint16_t ahead = pi - srq->ci;

    if (!(db & QHCA_SRQ_DB_VALID)) {
        return;
    }
    if (ahead > srq->entries || ahead < (uint16_t)(srq->pi - srq->ci)) {
        qhca_count(s, QHCA_CNT_BAD_DOORBELLS, 1);
        qhca_guest_error(s, QHCA_ERR_BAD_DOORBELL, bad_srq_index,
                         "SRQ %u index %u: ring has %u from %u, given %u",
                         srq->srqn, pi, srq->entries, srq->ci, srq->pi);
        return;
    }
    trace_qhca_srq_producer(srq->srqn, pi);
    srq->pi = pi;
}

uint8_t qhca_srq_query(QhcaState *s, const QhcaCmd *cmd, uint32_t srqn,
                       struct qhca_srq_attr *attr)
{
    QhcaSrq *srq;

    if (!qhca_table_live(&s->srqs, srqn)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_HANDLE, "no such SRQ");
    }
    srq = &s->srq[srqn];
    qhca_srq_sync(s, srq);
    attr->srqn = cpu_to_le32(srqn);
    attr->limit = cpu_to_le32(srq->limit);
    attr->pdn = cpu_to_le32(srq->pdn);
    attr->pi = cpu_to_le16(srq->pi);
    attr->ci = cpu_to_le16(srq->ci);
    attr->depth_log2 = srq->depth_log2;
    attr->stride_log2 = srq->stride_log2;
    attr->state = srq->state;
    attr->qp_refs = cpu_to_le32(srq->qp_refs);
    return QHCA_AQ_SUCCESS;
}

uint8_t qhca_srq_destroy(QhcaState *s, const QhcaCmd *cmd, uint32_t srqn)
{
    if (!qhca_table_live(&s->srqs, srqn)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_HANDLE, "no such SRQ");
    }
    if (s->srq[srqn].qp_refs) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_STATE,
                                "QPs still use the SRQ");
    }
    trace_qhca_srq_destroy(srqn, s->srq[srqn].ci);
    qhca_srq_free(s, &s->srq[srqn]);
    return QHCA_AQ_SUCCESS;
}

static void qhca_srq_db_bad(QhcaState *s, uint64_t page, uint32_t val,
                            const char *why)
{
    qhca_count(s, QHCA_CNT_BAD_DOORBELLS, 1);
    qhca_guest_error(s, QHCA_ERR_BAD_DOORBELL, db_queue,
                     "page %" PRIu64 " offset 0x%x value 0x%x: %s",
                     page, QHCA_DB_SRQ, val, why);
}

/* DB_SRQ, without the device lock (see qhca-doorbell.c). */
void qhca_srq_doorbell(QhcaState *s, uint64_t page, uint32_t val)
{
    uint32_t srqn = QHCA_FIELD_GET(QHCA_DB_QUEUE_NUM, val);
    uint16_t idx = QHCA_FIELD_GET(QHCA_DB_QUEUE_IDX, val);
    QhcaSrq *srq;

    if (!qhca_table_live(&s->srqs, srqn)) {
        qhca_srq_db_bad(s, page, val, "no such SRQ");
        return;
    }
    srq = &s->srq[srqn];
    if (qatomic_read(&srq->uar) != page) {
        qhca_srq_db_bad(s, page, val, "SRQ of another UAR");
        return;
    }
    if ((uint16_t)(idx - qatomic_read(&srq->ci)) >
        qatomic_read(&srq->entries)) {
        qhca_srq_db_bad(s, page, val, "index beyond the ring");
        return;
    }
    qhca_count(s, QHCA_CNT_DOORBELLS, 1);
    trace_qhca_srq_doorbell(srqn, idx);
    qatomic_set(&srq->db_pi, QHCA_SRQ_DB_VALID | idx);
}

/*
 * The SRQ is lost, its QPs with it: each fails when it next needs a WQE
 * (qhca_srq_take()).  Its ring could not be read, or INJECT_FAULT SRQ_ERR
 * (1.3) said so; the SRQ_ERR event goes out once.
 */
void qhca_srq_fail(QhcaState *s, QhcaSrq *srq)
{
    if (srq->state != QHCA_SRQ_STATE_ERR) {
        qatomic_set(&srq->state, QHCA_SRQ_STATE_ERR);
        qhca_eq_broadcast(s, QHCA_EVENT_SRQ_ERR, srq->srqn);
    }
}

/* The ring of @srq cannot be read: a guest error, and the SRQ fails. */
static void qhca_srq_error(QhcaState *s, QhcaSrq *srq, uint64_t addr)
{
    qhca_guest_error(s, QHCA_ERR_DMA, srq_dma,
                     "SRQ %u ring access at 0x%" PRIx64 " left guest RAM",
                     srq->srqn, addr);
    qhca_srq_fail(s, srq);
}

/* No WQE for @qp to take?  An SRQ in error has one: it fails to take. */
bool qhca_srq_empty(QhcaState *s, QhcaQp *qp)
{
    QhcaSrq *srq = &s->srq[qp->srqn];

    if (srq->state == QHCA_SRQ_STATE_ERR) {
        return false;
    }
    qhca_srq_sync(s, srq);
    return srq->ci == srq->pi;
}

/*
 * Take the next WQE of @qp's SRQ into @r.  Returns SUCCESS, LOC_QP_OP_ERR
 * for a malformed WQE (taken all the same, to complete with that status)
 * or FATAL_ERR when the SRQ failed and nothing was taken.
 */
uint8_t qhca_srq_take(QhcaState *s, QhcaQp *qp, QhcaRwqe *r)
{
    QhcaSrq *srq = &s->srq[qp->srqn];
    uint16_t idx = srq->ci;
    QhcaRwqeRead rd;
    uint8_t num_sge;
    uint64_t slot;
    uint16_t left;

    if (srq->state == QHCA_SRQ_STATE_ERR || qhca_srq_empty(s, qp)) {
        trace_qhca_srq_take_fail(srq->srqn, qp->qpn, srq->state);
        return QHCA_WC_FATAL_ERR;
    }
    slot = qhca_ring_slot(srq->ring, srq->entries, srq->stride_log2, idx);
    rd = qhca_rwqe_read(s, slot, srq->stride_log2, r, &num_sge);
    if (rd == QHCA_RWQE_HEADER_UNREADABLE ||
        rd == QHCA_RWQE_SGES_UNREADABLE) {
        qhca_srq_error(s, srq, slot);
        return QHCA_WC_FATAL_ERR;
    }

    /* Taken: it belongs to @qp now, whatever it holds. */
    qatomic_set(&srq->ci, idx + 1);
    qhca_count(s, QHCA_CNT_SRQ_WQES, 1);
    trace_qhca_srq_wqe(srq->srqn, qp->qpn, idx, num_sge);
    r->idx = idx;

    left = srq->pi - srq->ci;
    if (srq->limit && left < srq->limit) {
        trace_qhca_srq_limit(srq->srqn, left, srq->limit);
        srq->limit = 0;
        qhca_eq_broadcast(s, QHCA_EVENT_SRQ_LIMIT, srq->srqn);
    }

    if (rd == QHCA_RWQE_TOO_MANY_SGES) {
        qhca_guest_error(s, QHCA_ERR_NONE, bad_srq_wqe,
                         "SRQ %u WQE %u: %u SGEs, room for %u",
                         srq->srqn, idx, num_sge,
                         qhca_rwqe_max_sge(srq->stride_log2));
        return QHCA_WC_LOC_QP_OP_ERR;
    }
    return QHCA_WC_SUCCESS;
}

/*
 * A QP on an SRQ in ERR: the receive it was filling completes flushed
 * (the WQEs still in the SRQ belong to the SRQ and stay), then the QP
 * reports that it will take no more: QP_LAST_WQE.
 */
void qhca_srq_qp_flush(QhcaState *s, QhcaQp *qp)
{
    QhcaResponder *resp = &qp->resp;

    if (resp->have_rwqe) {
        struct qhca_cqe cqe = {
            .wr_id = cpu_to_le64(resp->rwqe.wr_id),
            .qpn = cpu_to_le32(qp->qpn),
            .wqe_idx = cpu_to_le16(resp->rwqe.idx),
            .opcode = QHCA_WC_RECV,
            .status = QHCA_WC_WR_FLUSH_ERR,
            .srqn = cpu_to_le16(qp->srqn),
        };

        resp->have_rwqe = false;
        trace_qhca_srq_flush(qp->qpn, qp->srqn, resp->rwqe.idx);
        qhca_cq_post(s, qp->recv_cqn, &cqe);
    }
    if (qp->srq_last_wqe) {
        qp->srq_last_wqe = false;
        trace_qhca_srq_last_wqe(qp->qpn, qp->srqn);
        qhca_eq_broadcast(s, QHCA_EVENT_QP_LAST_WQE, qp->qpn);
    }
}
