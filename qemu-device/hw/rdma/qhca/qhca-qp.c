/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qhca queue pairs: CREATE_QP/QUERY_QP/DESTROY_QP, the doorbells of their
 * rings, and the error state: a QP in ERR completes every WQE it holds
 * or is given with WR_FLUSH_ERR, in order, and the transport each QP type
 * uses.  MODIFY_QP is in qhca-qp-modify.c, WQEs in qhca-wqe.c, the
 * transport in qhca-requester.c and qhca-responder.c.
 *
 * Ring indices are free-running 16-bit counters, as the doorbells carry
 * them; the slot of index i is i modulo the ring size.
 *
 * 1.5, Ethernet port: the GSI QP is QP 1 and is a UD QP in every other
 * way, so the device keeps it as one (type QHCA_QPT_UD; only QUERY_QP
 * says GSI): the transport, the MTU and multicast rules of UD apply to it
 * unchanged.  A RAW_ETH QP has rings but no transport: its send WQEs are
 * whole frames (qhca-requester.c) and its receives come from the NIC
 * (qhca-nic.c), never from the wire.
 */
#include "qemu/osdep.h"
#include "qemu/bitops.h"
#include "qemu/cutils.h"
#include "qemu/host-utils.h"
#include "qhca.h"
#include "qhca-eth.h"
#include "trace.h"

/*
 * The transport of a RAW_ETH QP: no BTH opcode has these bits (the
 * transport is the top three), so no packet from the wire matches it.
 */
#define QHCA_QP_TRANSPORT_NONE  0xff

/* The transport of a QP's packets: the top bits of their BTH opcode. */
uint8_t qhca_qp_transport(const QhcaQp *qp)
{
    switch (qp->type) {
    case QHCA_QPT_RAW_ETH:
        return QHCA_QP_TRANSPORT_NONE;
    case QHCA_QPT_UC:
        return QHCA_IB_TRANSPORT_UC;
    case QHCA_QPT_UD:
        return QHCA_IB_TRANSPORT_UD;
    case QHCA_QPT_XRC_INI:
    case QHCA_QPT_XRC_TGT:
        return QHCA_IB_TRANSPORT_XRC;
    default:
        return QHCA_IB_TRANSPORT_RC;
    }
}

static void qhca_qp_timer_cb(void *opaque)
{
    QhcaQp *qp = opaque;

    qhca_engine_kick_qp(qp->s, qp, QHCA_KICK_TIMER);
}

void qhca_qp_init(QhcaState *s)
{
    uint32_t i;

    /*
     * QP 1 is a handle of the table too, so that every user of the table
     * sees the GSI QP; qhca_qp_alloc() gives it to GSI only.
     */
    QEMU_BUILD_BUG_ON(QHCA_GSI_QPN + 1 != QHCA_FIRST_QPN);
    qhca_table_init(&s->qps, "qp", QHCA_GSI_QPN, s->params.max_qps + 1);
    s->qp = g_new0(QhcaQp, s->qps.size);
    for (i = 0; i < s->qps.size; i++) {
        s->qp[i].s = s;
        s->qp[i].qpn = i;
        timer_init_ns(&s->qp[i].timer, QEMU_CLOCK_VIRTUAL, qhca_qp_timer_cb,
                      &s->qp[i]);
    }
}

void qhca_qp_fini(QhcaState *s)
{
    uint32_t i;

    for (i = 0; i < s->qps.size; i++) {
        timer_del(&s->qp[i].timer);
        g_free(s->qp[i].req.win);
    }
    qhca_table_fini(&s->qps);
    g_free(s->qp);
    s->qp = NULL;
}

/*
 * Back to RESET: no WQE, no transport state, indices at 0.  The identity
 * of the QP (rings, CQs, PD) stays.  So does a kick the FIFO still holds,
 * but the doorbell indices it would apply go: rung before the reset (or
 * for the QP that had this number before), they must not reach this one.
 */
void qhca_qp_clear(QhcaQp *qp)
{
    QhcaSwqe *win = qp->req.win;
    uint32_t win_size = qp->req.win_size;

    timer_del(&qp->timer);
    memset(&qp->req, 0, sizeof(qp->req));
    qp->req.win = win;
    qp->req.win_size = win_size;
    memset(&qp->resp, 0, sizeof(qp->resp));
    qhca_odp_qp_drop(qp);
    qp->sq_pi = 0;
    qp->sq_next = 0;
    qp->rq_pi = 0;
    qatomic_set(&qp->sq_comp, 0);
    qatomic_set(&qp->rq_ci, 0);
    qatomic_set(&qp->db_sq_pi, 0);
    qatomic_set(&qp->db_rq_pi, 0);
    qatomic_set(&qp->state, QHCA_QPS_RESET);
    qp->access = 0;
    qp->path_mtu = 0;
    qp->sl = 0;
    qp->dlid = 0;
    qp->dest_qpn = 0;
    qp->timeout = 0;
    qp->retry_cnt = 0;
    qp->rnr_retry = 0;
    qp->min_rnr_timer = 0;
    qp->max_rd_atomic = 0;
    qp->max_dest_rd_atomic = 0;
    qp->qkey = 0;
    qp->srq_last_wqe = false;
    memset(&qp->av, 0, sizeof(qp->av));
}

static void qhca_qp_free(QhcaState *s, QhcaQp *qp)
{
    qhca_mcast_detach_qp(s, qp->qpn);
    qhca_engine_unschedule(s, qp);
    qhca_qp_clear(qp);
    if (qp->type == QHCA_QPT_XRC_TGT) {
        /* Only its domain: pdn, srqn and recv_cqn are borrowed. */
        s->xrcd_refs[qp->xrcd]--;
    } else {
        s->pd_refs[qp->pdn]--;
        s->uar_refs[qp->uar]--;
        s->cq[qp->send_cqn].qp_refs--;
        if (qp->type != QHCA_QPT_XRC_INI) {
            s->cq[qp->recv_cqn].qp_refs--;
        }
        if (qp->flags & QHCA_QP_F_SRQ) {
            s->srq[qp->srqn].qp_refs--;
        }
    }
    g_free(qp->req.win);
    qp->req.win = NULL;
    qp->req.win_size = 0;
    qhca_table_free(&s->qps, qp->qpn);
}

void qhca_qp_reset(QhcaState *s)
{
    unsigned long i;

    QHCA_TABLE_FOR_EACH(&s->qps, i) {
        qhca_qp_free(s, &s->qp[i]);
    }
    qhca_table_reset(&s->qps);
}

static unsigned qhca_log2_floor(uint32_t v)
{
    return 31 - clz32(v);
}

/*
 * A QP number: 1 for the GSI QP, else the lowest free from
 * QHCA_FIRST_QPN on, at most max_qps of them besides QP 1.  The table
 * starts at 1 (qhca_qp_init()), so its own search is kept above it.
 */
static bool qhca_qp_alloc(QhcaState *s, bool gsi, uint32_t *qpn)
{
    QhcaTable *t = &s->qps;
    bool have_gsi = qhca_table_live(t, QHCA_GSI_QPN);

    if (gsi) {
        if (have_gsi) {
            return false;
        }
        /* QP 1 is free, so it is the lowest free handle. */
        t->first_free = QHCA_GSI_QPN;
    } else {
        if (t->used - have_gsi >= s->params.max_qps) {
            trace_qhca_table_full(t->name, t->size);
            return false;
        }
        t->first_free = MAX(t->first_free, QHCA_FIRST_QPN);
    }
    if (!qhca_table_alloc(t, qpn)) {
        return false;
    }
    assert(gsi == (*qpn == QHCA_GSI_QPN));
    return true;
}

static const char *qhca_qp_check_params(QhcaState *s,
                                        const struct qhca_cmd_create_qp *p)
{
    unsigned max_depth = qhca_log2_floor(s->params.max_qp_wr);

    if (!buffer_is_zero(p->rsvd, sizeof(p->rsvd)) ||
        (p->flags & QHCA_QP_F_RSVD)) {
        return "reserved field set";
    }
    if (p->type != QHCA_QPT_RC && p->type != QHCA_QPT_UC &&
        p->type != QHCA_QPT_UD && p->type != QHCA_QPT_XRC_INI &&
        p->type != QHCA_QPT_XRC_TGT && p->type != QHCA_QPT_GSI &&
        p->type != QHCA_QPT_RAW_ETH) {
        return "QP type not supported";
    }
    if (p->type == QHCA_QPT_XRC_INI || p->type == QHCA_QPT_XRC_TGT) {
        const char *why = qhca_xrc_check_qp(p);

        /*
         * A TGT QP has no rings at all; an INI QP has no receive side
         * but its SQ is checked as any other (the fuzzer found an INI SQ
         * of depth 2^184 taken unchecked).
         */
        if (why || p->type == QHCA_QPT_XRC_TGT) {
            return why;
        }
    } else if (p->flags & QHCA_QP_F_SRQ) {
        /* Receives come from the SRQ: the QP has no RQ. */
        if (p->rq_addr || p->rq_depth_log2 || p->rq_stride_log2) {
            return "RQ given for a QP on an SRQ";
        }
    } else if (p->srqn) {
        return "srqn without QHCA_QP_F_SRQ";
    } else if (p->rq_stride_log2 < QHCA_RQ_MIN_STRIDE_LOG2 ||
               p->rq_stride_log2 > QHCA_WQE_MAX_STRIDE_LOG2) {
        return "stride out of range";
    }
    if (p->sq_depth_log2 < 1 || p->sq_depth_log2 > max_depth ||
        p->rq_depth_log2 > max_depth) {
        return "depth out of range";
    }
    if (p->sq_stride_log2 < QHCA_SQ_MIN_STRIDE_LOG2 ||
        p->sq_stride_log2 > QHCA_WQE_MAX_STRIDE_LOG2) {
        return "stride out of range";
    }
    if (le64_to_cpu(p->sq_addr) % QHCA_QUEUE_ALIGN ||
        le64_to_cpu(p->rq_addr) % QHCA_QUEUE_ALIGN) {
        return "ring not 64-byte aligned";
    }
    return NULL;
}

/* An XRC TGT QP: no rings, no CQ, no UAR; only its domain (in pdn). */
static uint8_t qhca_qp_create_tgt(QhcaState *s, const QhcaCmd *cmd,
                                  uint32_t xrcd, uint32_t *qpn)
{
    QhcaQp *qp;

    if (!qhca_table_live(&s->xrcds, xrcd)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_HANDLE,
                                "no such XRC domain");
    }
    if (!qhca_qp_alloc(s, false, qpn)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_NO_RESOURCES, "table full");
    }
    qp = &s->qp[*qpn];
    qhca_qp_clear(qp);
    qp->type = QHCA_QPT_XRC_TGT;
    /* Receives come from the SRQ each request names. */
    qp->flags = QHCA_QP_F_SRQ;
    qp->xrcd = xrcd;
    qp->pdn = 0;
    qp->srqn = 0;
    qp->send_cqn = 0;
    qp->recv_cqn = 0;
    qp->sq_addr = 0;
    qp->rq_addr = 0;
    qp->sq_depth_log2 = 0;
    qp->rq_depth_log2 = 0;
    qp->sq_stride_log2 = 0;
    qp->rq_stride_log2 = 0;
    qatomic_set(&qp->sq_entries, 0);
    qatomic_set(&qp->rq_entries, 0);
    /* No doorbell page matches: doorbells for it are guest errors. */
    qatomic_set(&qp->uar, UINT32_MAX);
    qp->req.win_size = 1;
    qp->req.win = g_new0(QhcaSwqe, 1);
    s->xrcd_refs[xrcd]++;
    trace_qhca_xrc_qp_create(*qpn, qp->type, xrcd);
    return QHCA_AQ_SUCCESS;
}

uint8_t qhca_qp_create(QhcaState *s, const QhcaCmd *cmd,
                       const struct qhca_cmd_create_qp *p, uint32_t *qpn)
{
    uint64_t sq_addr = le64_to_cpu(p->sq_addr);
    uint64_t rq_addr = le64_to_cpu(p->rq_addr);
    uint32_t pdn = le32_to_cpu(p->pdn);
    uint32_t uar = le32_to_cpu(p->uar);
    uint32_t send_cqn = le16_to_cpu(p->send_cqn);
    uint32_t recv_cqn = le16_to_cpu(p->recv_cqn);
    uint32_t srqn = le16_to_cpu(p->srqn);
    bool on_srq = p->flags & QHCA_QP_F_SRQ;
    const char *why;
    QhcaQp *qp;

    why = qhca_qp_check_params(s, p);
    if (why) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM, why);
    }
    if ((p->type == QHCA_QPT_GSI || p->type == QHCA_QPT_RAW_ETH) &&
        !qhca_port_is_eth(s)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_STATE,
                                "GSI and RAW_ETH QPs need an Ethernet port");
    }
    if (p->type == QHCA_QPT_XRC_TGT) {
        return qhca_qp_create_tgt(s, cmd, pdn, qpn);
    }
    if (p->type == QHCA_QPT_XRC_INI) {
        /* No receive side: the send CQ stands in for the receive CQ. */
        recv_cqn = send_cqn;
    }
    if (!qhca_table_live(&s->pds, pdn)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_HANDLE, "no such PD");
    }
    if (!qhca_table_live(&s->uars, uar)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_HANDLE, "no such UAR");
    }
    if (!qhca_table_live(&s->cqs, send_cqn) ||
        !qhca_table_live(&s->cqs, recv_cqn)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_HANDLE, "no such CQ");
    }
    if (on_srq && !qhca_table_live(&s->srqs, srqn)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_HANDLE, "no such SRQ");
    }
    if (on_srq && s->srq[srqn].pdn != pdn) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "SRQ of another PD");
    }
    if (on_srq && s->srq[srqn].type != QHCA_SRQT_BASIC) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "XRC SRQ for a QP that is not XRC TGT");
    }
    if (!qhca_dma_in_ram(s, sq_addr, 1ull << (p->sq_depth_log2 +
                                              p->sq_stride_log2), false) ||
        (!on_srq && p->type != QHCA_QPT_XRC_INI &&
         !qhca_dma_in_ram(s, rq_addr, 1ull << (p->rq_depth_log2 +
                                               p->rq_stride_log2), false))) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_ADDRESS,
                                "ring not in guest RAM");
    }
    if (!qhca_qp_alloc(s, p->type == QHCA_QPT_GSI, qpn)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_NO_RESOURCES,
                                p->type == QHCA_QPT_GSI ? "QP 1 exists"
                                                        : "table full");
    }

    qp = &s->qp[*qpn];
    qhca_qp_clear(qp);
    qp->pdn = pdn;
    qp->send_cqn = send_cqn;
    qp->recv_cqn = recv_cqn;
    qp->flags = p->flags;
    qp->srqn = on_srq ? srqn : 0;
    qp->xrcd = 0;
    /* The GSI QP is a UD QP with number 1 (see the top of the file). */
    qp->type = p->type == QHCA_QPT_GSI ? QHCA_QPT_UD : p->type;
    qp->sq_addr = sq_addr;
    qp->rq_addr = rq_addr;
    qp->sq_depth_log2 = p->sq_depth_log2;
    qp->rq_depth_log2 = p->rq_depth_log2;
    qp->sq_stride_log2 = p->sq_stride_log2;
    qp->rq_stride_log2 = p->rq_stride_log2;
    qatomic_set(&qp->sq_entries, 1u << p->sq_depth_log2);
    /* An XRC INI QP has no RQ: every DB_RQ index is beyond it. */
    qatomic_set(&qp->rq_entries, p->type == QHCA_QPT_XRC_INI ? 0 :
                                 1u << p->rq_depth_log2);
    qatomic_set(&qp->uar, uar);
    qp->req.win_size = MIN(qp->sq_entries, QHCA_REQ_WINDOW);
    qp->req.win = g_new0(QhcaSwqe, qp->req.win_size);

    s->pd_refs[pdn]++;
    s->uar_refs[uar]++;
    s->cq[send_cqn].qp_refs++;
    if (p->type != QHCA_QPT_XRC_INI) {
        s->cq[recv_cqn].qp_refs++;
    }
    if (on_srq) {
        s->srq[srqn].qp_refs++;
    }
    trace_qhca_qp_create(*qpn, pdn, uar, send_cqn, recv_cqn, sq_addr,
                         rq_addr);
    trace_qhca_qp_rings(*qpn, qp->sq_entries, 1u << qp->sq_stride_log2,
                        qp->rq_entries, 1u << qp->rq_stride_log2);
    return QHCA_AQ_SUCCESS;
}

uint8_t qhca_qp_destroy(QhcaState *s, const QhcaCmd *cmd, uint32_t qpn)
{
    if (!qhca_table_live(&s->qps, qpn)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_HANDLE, "no such QP");
    }
    trace_qhca_qp_destroy(qpn);
    qhca_qp_free(s, &s->qp[qpn]);
    return QHCA_AQ_SUCCESS;
}

uint8_t qhca_qp_query(QhcaState *s, const QhcaCmd *cmd, uint32_t qpn,
                      struct qhca_qp_attr *attr)
{
    QhcaQp *qp;

    if (!qhca_table_live(&s->qps, qpn)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_HANDLE, "no such QP");
    }
    qp = &s->qp[qpn];
    attr->qpn = cpu_to_le32(qpn);
    attr->dest_qpn = cpu_to_le32(qp->dest_qpn);
    attr->sq_psn = cpu_to_le32(qp->req.next_psn);
    attr->rq_psn = cpu_to_le32(qp->resp.epsn);
    attr->dlid = cpu_to_le16(qp->dlid);
    attr->send_cqn = cpu_to_le16(qp->send_cqn);
    attr->recv_cqn = cpu_to_le16(qp->recv_cqn);
    attr->sq_ci = cpu_to_le16(qp->sq_comp);
    attr->rq_ci = cpu_to_le16(qp->rq_ci);
    attr->state = qp->state;
    attr->access = qp->access;
    attr->path_mtu = qp->path_mtu;
    attr->sl = qp->sl;
    attr->timeout = qp->timeout;
    attr->retry_cnt = qp->retry_cnt;
    attr->rnr_retry = qp->rnr_retry;
    attr->min_rnr_timer = qp->min_rnr_timer;
    attr->max_rd_atomic = qp->max_rd_atomic;
    attr->max_dest_rd_atomic = qp->max_dest_rd_atomic;
    attr->type = qpn == QHCA_GSI_QPN ? QHCA_QPT_GSI : qp->type;
    attr->qkey = cpu_to_le32(qp->qkey);
    attr->flags = qp->flags;
    attr->srqn = cpu_to_le16(qp->srqn);
    return QHCA_AQ_SUCCESS;
}

/*
 * Move a QP to ERR: the transport stops, and the engine flushes its WQEs.
 * Responses the responder owes its peer still go out: the peer's
 * requester then sees its completions, in order, before any NAK.
 */
void qhca_qp_error(QhcaState *s, QhcaQp *qp, enum qhca_event_type event)
{
    if (qp->state == QHCA_QPS_ERR || qp->state == QHCA_QPS_RESET) {
        return;
    }
    trace_qhca_qp_error(qp->qpn, qp->state, event);
    qatomic_set(&qp->state, QHCA_QPS_ERR);
    qp->req.halted = true;
    qp->req.timer = QHCA_TIMER_NONE;
    qp->resp.in_send = false;
    qp->resp.in_write = false;
    /* 1.8: a page fault waits no more; accesses now fail instead. */
    qhca_odp_qp_drop(qp);
    /* After its last receive completes, a QP on an SRQ says so. */
    qp->srq_last_wqe = qp->flags & QHCA_QP_F_SRQ;  /* XRC TGT too */
    if (event) {
        qhca_eq_broadcast(s, event, qp->qpn);
    }
    qhca_engine_schedule(s, qp);
}

static void qhca_qp_flush_cqe(QhcaState *s, QhcaQp *qp, uint32_t cqn,
                              uint64_t wr_id, uint16_t idx, uint8_t opcode)
{
    struct qhca_cqe cqe = {
        .wr_id = cpu_to_le64(wr_id),
        .qpn = cpu_to_le32(qp->qpn),
        .wqe_idx = cpu_to_le16(idx),
        .opcode = opcode,
        .status = QHCA_WC_WR_FLUSH_ERR,
    };

    /* A CQ in error loses it; nothing else is to be done. */
    qhca_cq_post(s, cqn, &cqe);
}

/*
 * One step of flushing a QP in ERR: up to QHCA_STEP_FLUSHES WQEs of the
 * SQ, then of the RQ, complete with WR_FLUSH_ERR.  True if more remain.
 */
bool qhca_qp_flush(QhcaState *s, QhcaQp *qp)
{
    QhcaRequester *req = &qp->req;
    unsigned budget = QHCA_STEP_FLUSHES;
    uint64_t wr_id;
    uint8_t opcode;

    while (qp->sq_comp != qp->sq_pi && budget) {
        uint16_t idx = qp->sq_comp;
        bool taken = qp->sq_next != idx;    /* the requester has it */

        if (taken) {
            QhcaSwqe *w = &req->win[idx % req->win_size];

            wr_id = w->wr_id;
            opcode = w->info->wc_opcode;
        } else if (!qhca_wqe_peek(s, qp, true, idx, &wr_id, &opcode)) {
            return false;
        }
        trace_qhca_qp_flush(qp->qpn, "SQ", idx);
        /* The slot is free before its CQE says so (qhca_req_complete()). */
        qatomic_set(&qp->sq_comp, idx + 1);
        if (!taken) {
            qp->sq_next = qp->sq_comp;
        }
        /* sq_comp before the CQE: pairs with the doorbell's read of it. */
        smp_wmb();
        qhca_qp_flush_cqe(s, qp, qp->send_cqn, wr_id, idx, opcode);
        budget--;
    }
    if (qp->sq_comp == qp->sq_pi) {
        qp->sq_next = qp->sq_pi;
        req->cur = qp->sq_pi;
        req->cur_pkt = 0;
        req->rd_out = 0;
    }

    if (qp->type == QHCA_QPT_XRC_TGT) {
        qhca_xrc_tgt_flush(s, qp);
    } else if (qp->flags & QHCA_QP_F_SRQ) {
        qhca_srq_qp_flush(s, qp);
    }
    while (qp->rq_ci != qp->rq_pi && budget) {
        uint16_t idx = qp->rq_ci;

        if (qp->resp.have_rwqe) {
            wr_id = qp->resp.rwqe.wr_id;
            opcode = QHCA_WC_RECV;
            qp->resp.have_rwqe = false;
        } else if (!qhca_wqe_peek(s, qp, false, idx, &wr_id, &opcode)) {
            return false;
        }
        trace_qhca_qp_flush(qp->qpn, "RQ", idx);
        qatomic_set(&qp->rq_ci, idx + 1);
        /* rq_ci before the CQE: pairs with the doorbell's read of it. */
        smp_wmb();
        qhca_qp_flush_cqe(s, qp, qp->recv_cqn, wr_id, idx, opcode);
        budget--;
    }
    return qp->sq_comp != qp->sq_pi || qp->rq_ci != qp->rq_pi;
}

/*
 * A doorbell index, checked against the ring again under the lock (the
 * doorbell handler checked it without): at most a ring ahead of the
 * consumer, and not behind the index already given.
 */
static bool qhca_qp_index_ok(uint16_t pi, uint16_t old_pi, uint16_t ci,
                             uint32_t entries)
{
    uint16_t ahead = pi - ci;

    return ahead <= entries && ahead >= (uint16_t)(old_pi - ci);
}

void qhca_qp_sq_doorbell(QhcaState *s, QhcaQp *qp, uint16_t pi)
{
    if (qp->state == QHCA_QPS_RESET || qp->type == QHCA_QPT_XRC_TGT) {
        return;
    }
    if (!qhca_qp_index_ok(pi, qp->sq_pi, qp->sq_comp, qp->sq_entries)) {
        qhca_count(s, QHCA_CNT_BAD_DOORBELLS, 1);
        qhca_guest_error(s, QHCA_ERR_BAD_DOORBELL, bad_qp_index,
                         "QP %u SQ index %u: ring has %u from %u, given %u",
                         qp->qpn, pi, qp->sq_entries, qp->sq_comp,
                         qp->sq_pi);
        return;
    }
    trace_qhca_qp_doorbell(qp->qpn, "SQ", pi);
    qp->sq_pi = pi;
    qhca_engine_schedule(s, qp);
}

void qhca_qp_rq_doorbell(QhcaState *s, QhcaQp *qp, uint16_t pi)
{
    if (qp->state == QHCA_QPS_RESET) {
        return;
    }
    if (qp->flags & QHCA_QP_F_SRQ) {
        /* The doorbell handler reported it already. */
        trace_qhca_db_ignored(qp->qpn, QHCA_DB_RQ, "QP on an SRQ");
        return;
    }
    if (!qhca_qp_index_ok(pi, qp->rq_pi, qp->rq_ci, qp->rq_entries)) {
        qhca_count(s, QHCA_CNT_BAD_DOORBELLS, 1);
        qhca_guest_error(s, QHCA_ERR_BAD_DOORBELL, bad_qp_index,
                         "QP %u RQ index %u: ring has %u from %u, given %u",
                         qp->qpn, pi, qp->rq_entries, qp->rq_ci, qp->rq_pi);
        return;
    }
    trace_qhca_qp_doorbell(qp->qpn, "RQ", pi);
    qp->rq_pi = pi;
    if (qp->state == QHCA_QPS_ERR) {
        qhca_engine_schedule(s, qp);
    }
}
