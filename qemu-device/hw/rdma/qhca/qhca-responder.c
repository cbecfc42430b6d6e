/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qhca RC responder: executes the requests that arrive for a QP.
 *
 * Requests are taken in PSN order.  A SEND consumes a receive WQE (or is
 * refused with an RNR NAK while there is none), RDMA WRITEs go through the
 * rkey's MR, RDMA READs and atomics are executed at once and their
 * results queued.  Answers leave in PSN order too: the READ responses and
 * atomic results in the queue first, then one coalesced ACK or NAK.  The
 * queue also remembers the last QHCA_MAX_RD_ATOMIC results, so that a
 * duplicate READ is answered again and a duplicate atomic gets its old
 * result without being executed twice.
 *
 * 1.6 adds the IBA 1.5 memory placement requests (annex A19), on RC:
 * FLUSH and ATOMIC_WRITE are executed once, as an atomic is, and queued
 * with the results: each is answered, in its turn, by an RDMA READ
 * response without data, and a duplicate gets that answer again.
 *
 * 1.8: a request whose access meets an absent page of an ODP MR is a page
 * fault (qhca_odp_fault()): it is answered with an RNR NAK and not
 * executed (the PSN does not advance, a receive WQE taken for it is kept
 * for it), and so is every request until RESUME_PAGE_FAULT.  A READ
 * response that meets one (the page went away after the READ was
 * accepted) stops the answers until the resume.
 */
#include "qemu/osdep.h"
#include "qhca.h"
#include "trace.h"

static void qhca_resp_send_aeth(QhcaState *s, QhcaQp *qp)
{
    QhcaResponder *resp = &qp->resp;
    QhcaPacket *pkt = qhca_wire_packet(s, qp, QHCA_IB_ACKNOWLEDGE,
                                       qp->dest_qpn, resp->aeth_psn);

    pkt->syndrome = resp->aeth_syndrome;
    pkt->msn = resp->msn & QHCA_MSN_MASK;
    resp->aeth_pending = false;
    qhca_wire_send(s, pkt);
}

/*
 * Acknowledge up to @psn, or NAK it.  It goes after the responses still
 * queued; an ACK replaces an earlier ACK, never a NAK.
 */
static void qhca_resp_aeth(QhcaState *s, QhcaQp *qp, uint8_t syndrome,
                           uint32_t psn)
{
    QhcaResponder *resp = &qp->resp;

    if (resp->aeth_pending &&
        (resp->aeth_syndrome & QHCA_AETH_KIND) != QHCA_AETH_ACK &&
        (syndrome & QHCA_AETH_KIND) == QHCA_AETH_ACK) {
        return;
    }
    resp->aeth_pending = true;
    resp->aeth_syndrome = syndrome;
    resp->aeth_psn = psn & QHCA_PSN_MASK;
    if (resp->res_send != resp->res_tail) {
        qhca_engine_schedule(s, qp);
    } else if (!qhca_wire_tx_blocked(s, qp)) {
        /* Else it waits with the QP, and a later ACK may replace it. */
        qhca_resp_send_aeth(s, qp);
    }
}

static void qhca_resp_ack(QhcaState *s, QhcaQp *qp, uint32_t psn)
{
    qhca_resp_aeth(s, qp, QHCA_AETH_ACK | QHCA_AETH_CREDITS_NONE, psn);
}

/*
 * A request that cannot be executed: NAK it and move to ERR, with an
 * async event if the table of the spec has one for it.
 */
static void qhca_resp_fatal(QhcaState *s, QhcaQp *qp, const QhcaPacket *pkt,
                            uint8_t code, enum qhca_event_type event,
                            const char *why)
{
    trace_qhca_err_resp(qp->qpn, pkt->psn, code, why);
    qhca_resp_aeth(s, qp, QHCA_AETH_NAK | code, pkt->psn);
    qhca_qp_error(s, qp, event);
}

static void qhca_resp_rnr(QhcaState *s, QhcaQp *qp, const QhcaPacket *pkt)
{
    trace_qhca_resp_rnr(qp->qpn, pkt->psn, qp->min_rnr_timer);
    qhca_count(s, QHCA_CNT_RNR_NAKS_SENT, 1);
    qp->resp.nak_sent = true;
    qhca_resp_aeth(s, qp, QHCA_AETH_RNR_NAK | qp->min_rnr_timer, pkt->psn);
}

/*
 * 1.8: an access of @pkt met the absent ODP page @miss says.  True if the
 * request waits (RNR NAK sent); false if it fails as an access outside
 * its MR (RESUME FAILED said so, or the QP is in error).
 */
static bool qhca_resp_odp_wait(QhcaState *s, QhcaQp *qp,
                               const QhcaPacket *pkt, const QhcaOdpMiss *miss)
{
    if (!qhca_odp_fault(s, qp, QHCA_PAGE_FAULT_RESPONDER, miss, pkt->psn,
                        pkt->psn)) {
        return false;
    }
    trace_qhca_odp_wait(qp->qpn, pkt->psn, "responder");
    qhca_resp_rnr(s, qp, pkt);
    return true;
}

/*
 * Is a receive WQE posted for @qp, or one kept that a message faulted in
 * (1.8)?  (UD and UC drop a message if not.)
 */
bool qhca_resp_rwqe_ready(QhcaState *s, QhcaQp *qp)
{
    if (qp->resp.have_rwqe) {
        return true;
    }
    if (qp->flags & QHCA_QP_F_SRQ) {
        return !qhca_srq_empty(s, qp);
    }
    return qp->rq_ci != qp->rq_pi;
}

/*
 * Take the next receive WQE of @qp, from its RQ or its SRQ.  Returns its
 * status: LOC_QP_OP_ERR if malformed (it is still taken, to be completed
 * with that status), FATAL_ERR if nothing could be taken.  1.8: one kept
 * from a message that met an absent ODP page is taken again.
 */
uint8_t qhca_resp_take_rwqe(QhcaState *s, QhcaQp *qp)
{
    QhcaResponder *resp = &qp->resp;
    uint8_t status;

    if (resp->have_rwqe) {
        resp->rcv_off = 0;
        return QHCA_WC_SUCCESS;
    }
    if (qp->flags & QHCA_QP_F_SRQ) {
        status = qhca_srq_take(s, qp, &resp->rwqe);
    } else {
        status = qhca_rq_take(s, qp, &resp->rwqe);
    }
    resp->have_rwqe = status != QHCA_WC_FATAL_ERR;
    resp->rcv_off = 0;
    return status;
}

/* Complete the receive WQE taken; false if the QP went to ERR for it. */
bool qhca_resp_complete(QhcaState *s, QhcaQp *qp, uint8_t opcode,
                        uint8_t status, uint32_t byte_len,
                        const QhcaPacket *pkt)
{
    QhcaResponder *resp = &qp->resp;
    bool imm = qhca_pkt_flags(pkt->opcode) & QHCA_PKT_IMM;
    bool inv = (qhca_pkt_flags(pkt->opcode) & QHCA_PKT_IETH) &&
               status == QHCA_WC_SUCCESS;
    struct qhca_cqe cqe = {
        .wr_id = cpu_to_le64(resp->rwqe.wr_id),
        .byte_len = cpu_to_le32(byte_len),
        .imm_data = imm ? pkt->imm : inv ? cpu_to_be32(pkt->ieth) : 0,
        .qpn = cpu_to_le32(qp->qpn),
        .src_qp = cpu_to_le32(qp->dest_qpn),
        .wqe_idx = cpu_to_le16(resp->rwqe.idx),
        .slid = cpu_to_le16(pkt->slid),
        .opcode = opcode,
        .status = status,
        .flags = (imm ? QHCA_CQE_F_IMM : 0) |
                 (inv ? QHCA_CQE_F_INV : 0) |
                 (pkt->solicited ? QHCA_CQE_F_SOLICITED : 0),
    };

    if (qp->type == QHCA_QPT_UD) {
        qhca_ud_fill_cqe(qp, pkt, &cqe);
    }
    resp->have_rwqe = false;
    if (qp->flags & QHCA_QP_F_SRQ) {
        cqe.srqn = cpu_to_le16(qp->srqn);   /* wqe_idx is the SRQ's */
    } else {
        qatomic_set(&qp->rq_ci, qp->rq_ci + 1);
    }
    if (!qhca_cq_post(s, qp->recv_cqn, &cqe)) {
        qhca_qp_error(s, qp, 0);
        return false;
    }
    return true;
}

/* A receive WQE failed: its CQE says why, the sender gets @nak. */
static void qhca_resp_recv_error(QhcaState *s, QhcaQp *qp,
                                 const QhcaPacket *pkt, uint8_t status,
                                 uint8_t nak, const char *why)
{
    if (status == QHCA_WC_FATAL_ERR && (qp->flags & QHCA_QP_F_SRQ)) {
        /* The SRQ is in error (SRQ_ERR posted): its QPs cannot receive. */
        qhca_resp_fatal(s, qp, pkt, QHCA_NAK_REM_OP, QHCA_EVENT_QP_FATAL,
                        "SRQ in error");
        return;
    }
    if (status == QHCA_WC_FATAL_ERR) {
        return;                 /* the RQ ring is gone: the device stopped */
    }
    qhca_resp_complete(s, qp, QHCA_WC_RECV, status, 0, pkt);
    qhca_resp_fatal(s, qp, pkt, nak, 0, why);
}

/*
 * Place the payload of a SEND packet, RC or UC, in the receive WQE taken
 * for its message, where the message has reached (a first packet starts
 * at 0).  SUCCESS, or the status the receive completes with and *@why;
 * 1.8: QHCA_ODP_FAULT, with *@miss, if a page of the buffer is absent
 * (the packet is not placed: the message is where it was).
 */
uint8_t qhca_resp_place_send(QhcaState *s, QhcaQp *qp, const QhcaPacket *pkt,
                             const char **why, QhcaOdpMiss *miss)
{
    QhcaResponder *resp = &qp->resp;
    uint16_t f = qhca_pkt_flags(pkt->opcode);
    bool was_in_send = resp->in_send;
    uint8_t status;

    if (f & QHCA_PKT_FIRST) {
        resp->rcv_off = 0;
        resp->in_send = !(f & QHCA_PKT_LAST);
    }
    status = qhca_sgl_copy(s, qp->pdn, resp->rwqe.sge, resp->rwqe.num_sge,
                           QHCA_ACCESS_LOCAL_WRITE, resp->rcv_off,
                           (void *)pkt->payload, pkt->paylen, true, miss);
    if (status == QHCA_ODP_FAULT) {
        resp->in_send = was_in_send;
        *why = "receive buffer page absent";
        return status;
    }
    if (status != QHCA_WC_SUCCESS) {
        *why = status == QHCA_WC_LOC_LEN_ERR ?
               "SEND longer than the receive WQE" :
               "receive SGE not covered by its lkey";
        return status;
    }
    resp->rcv_off += pkt->paylen;
    if (f & QHCA_PKT_LAST) {
        resp->in_send = false;
    }
    return QHCA_WC_SUCCESS;
}

static void qhca_resp_send(QhcaState *s, QhcaQp *qp, const QhcaPacket *pkt)
{
    QhcaResponder *resp = &qp->resp;
    uint16_t f = qhca_pkt_flags(pkt->opcode);
    QhcaOdpMiss miss;
    const char *why;
    uint8_t status;

    if (f & QHCA_PKT_FIRST) {
        if (!qhca_resp_rwqe_ready(s, qp)) {
            qhca_resp_rnr(s, qp, pkt);
            return;
        }
        status = qhca_resp_take_rwqe(s, qp);
        if (status != QHCA_WC_SUCCESS) {
            qhca_resp_recv_error(s, qp, pkt, status, QHCA_NAK_REM_OP,
                                 "malformed receive WQE");
            return;
        }
    }

    status = qhca_resp_place_send(s, qp, pkt, &why, &miss);
    if (status == QHCA_ODP_FAULT) {
        /* The receive WQE stays taken, for this message when it comes. */
        if (qhca_resp_odp_wait(s, qp, pkt, &miss)) {
            return;
        }
        status = QHCA_WC_LOC_PROT_ERR;
        why = "receive SGE not covered by its lkey";
    }
    if (status != QHCA_WC_SUCCESS) {
        qhca_resp_recv_error(s, qp, pkt, status,
                             status == QHCA_WC_LOC_LEN_ERR ?
                             QHCA_NAK_INV_REQ : QHCA_NAK_REM_OP, why);
        return;
    }
    resp->epsn = qhca_psn_add(resp->epsn, 1);

    if (f & QHCA_PKT_LAST) {
        /* The message is placed: now its IETH key goes (1.2). */
        if ((f & QHCA_PKT_IETH) && !qhca_invalidate(s, qp->pdn, pkt->ieth)) {
            qhca_resp_recv_error(s, qp, pkt, QHCA_WC_REM_INV_REQ_ERR,
                                 QHCA_NAK_INV_REQ,
                                 "SEND_WITH_INV of a key that cannot be "
                                 "invalidated");
            return;
        }
        resp->msn++;
        if (!qhca_resp_complete(s, qp, QHCA_WC_RECV, QHCA_WC_SUCCESS,
                                resp->rcv_off, pkt)) {
            return;
        }
    }
    if (pkt->ack_req) {
        qhca_resp_ack(s, qp, pkt->psn);
    }
}

/*
 * Place the payload of an RDMA WRITE packet, RC or UC: the first packet
 * of a message names the target (its RETH), which the QP and the rkey
 * must allow; every packet is copied through the rkey's MR, looked up
 * again each time, as DEREG_MR takes effect at once.  NULL when it is
 * placed; otherwise why not, with in *@nak what an RC responder answers
 * (UC drops the message instead).  1.8: *@nak is QHCA_ODP_FAULT, with
 * *@miss, if a page of the target is absent; the packet is not placed.
 */
const char *qhca_resp_place_write(QhcaState *s, QhcaQp *qp,
                                  const QhcaPacket *pkt, uint8_t *nak,
                                  QhcaOdpMiss *miss)
{
    QhcaResponder *resp = &qp->resp;
    uint16_t f = qhca_pkt_flags(pkt->opcode);
    QhcaMrCopy r = QHCA_MR_COPY_NOT_RAM;
    QhcaMr *mr;

    if (f & QHCA_PKT_FIRST) {
        if (pkt->dma_len > QHCA_MAX_MSG_SIZE) {
            *nak = QHCA_NAK_INV_REQ;
            return "RDMA WRITE too long";
        }
        if (!(qp->access & QHCA_ACCESS_REMOTE_WRITE) ||
            (pkt->dma_len &&
             !qhca_mr_lookup(s, pkt->rkey, qp->pdn, pkt->va, pkt->dma_len,
                             QHCA_ACCESS_REMOTE_WRITE))) {
            *nak = QHCA_NAK_REM_ACCESS;
            return "RDMA WRITE not allowed by the QP or rkey";
        }
        resp->wr_va = pkt->va;
        resp->wr_rkey = pkt->rkey;
        resp->wr_len = pkt->dma_len;
        resp->wr_off = 0;
        resp->in_write = !(f & QHCA_PKT_LAST);
    }

    if (pkt->paylen > resp->wr_len - resp->wr_off ||
        ((f & QHCA_PKT_LAST) &&
         resp->wr_off + pkt->paylen != resp->wr_len)) {
        *nak = QHCA_NAK_INV_REQ;
        return "RDMA WRITE payload does not match its length";
    }
    if (pkt->paylen) {
        uint64_t va = resp->wr_va + resp->wr_off;

        mr = qhca_mr_lookup(s, resp->wr_rkey, qp->pdn, va, pkt->paylen,
                            QHCA_ACCESS_REMOTE_WRITE);
        if (mr) {
            r = qhca_mr_copy(s, mr, va, (void *)pkt->payload, pkt->paylen,
                             true, miss);
        }
        if (r == QHCA_MR_COPY_FAULT) {
            if (f & QHCA_PKT_FIRST) {
                resp->in_write = false;     /* it starts when it comes */
            }
            *nak = QHCA_ODP_FAULT;
            return "RDMA WRITE target page absent";
        }
        if (r != QHCA_MR_COPY_OK) {
            *nak = QHCA_NAK_REM_ACCESS;
            return "RDMA WRITE target became invalid";
        }
    }
    resp->wr_off += pkt->paylen;
    if (f & QHCA_PKT_LAST) {
        resp->in_write = false;
    }
    return NULL;
}

static void qhca_resp_write(QhcaState *s, QhcaQp *qp, const QhcaPacket *pkt)
{
    QhcaResponder *resp = &qp->resp;
    uint16_t f = qhca_pkt_flags(pkt->opcode);
    bool imm = (f & QHCA_PKT_IMM) && (f & QHCA_PKT_LAST);
    QhcaOdpMiss miss;
    const char *why;
    uint8_t status, nak;

    /* The immediate needs a receive WQE: ask for it before anything. */
    if (imm && !qhca_resp_rwqe_ready(s, qp)) {
        qhca_resp_rnr(s, qp, pkt);
        return;
    }

    why = qhca_resp_place_write(s, qp, pkt, &nak, &miss);
    if (why && nak == QHCA_ODP_FAULT) {
        if (qhca_resp_odp_wait(s, qp, pkt, &miss)) {
            return;
        }
        nak = QHCA_NAK_REM_ACCESS;
    }
    if (why) {
        qhca_resp_fatal(s, qp, pkt, nak,
                        nak == QHCA_NAK_REM_ACCESS ? QHCA_EVENT_QP_ACCESS_ERR
                                                   : QHCA_EVENT_QP_REQ_ERR,
                        why);
        return;
    }
    resp->epsn = qhca_psn_add(resp->epsn, 1);

    if (f & QHCA_PKT_LAST) {
        resp->msn++;
        if (imm) {
            status = qhca_resp_take_rwqe(s, qp);
            if (status != QHCA_WC_SUCCESS) {
                qhca_resp_recv_error(s, qp, pkt, status, QHCA_NAK_REM_OP,
                                     "malformed receive WQE");
                return;
            }
            if (!qhca_resp_complete(s, qp, QHCA_WC_RECV_RDMA_WITH_IMM,
                                    QHCA_WC_SUCCESS, resp->wr_len, pkt)) {
                return;
            }
        }
    }
    if (pkt->ack_req) {
        qhca_resp_ack(s, qp, pkt->psn);
    }
}

/*
 * The iova where the MR of @rkey starts, for a FLUSH of the whole MR,
 * whose RETH address means nothing; 0 if @rkey names no MR (the lookup
 * that follows then fails).  A window cannot grant a FLUSH access.
 */
static uint64_t qhca_resp_mr_start(QhcaState *s, uint32_t rkey)
{
    uint32_t index = QHCA_FIELD_GET(QHCA_MKEY_INDEX, rkey);

    if ((rkey & QHCA_MKEY_MW) || !qhca_table_live(&s->mrs, index)) {
        return 0;
    }
    return s->mr[index]->iova;
}

/* Is there room for one more READ/atomic result? */
static bool qhca_resp_res_room(QhcaQp *qp)
{
    return qp->resp.res_tail - qp->resp.res_send < QHCA_MAX_RD_ATOMIC;
}

/* Queue a result; the oldest answered one is forgotten if need be. */
static QhcaRdRes *qhca_resp_new_res(QhcaQp *qp)
{
    QhcaResponder *resp = &qp->resp;

    assert(qhca_resp_res_room(qp));
    if (resp->res_tail - resp->res_head == QHCA_MAX_RD_ATOMIC) {
        resp->res_head++;
    }
    return &resp->res[resp->res_tail++ % QHCA_MAX_RD_ATOMIC];
}

/*
 * The MR through which a single-packet request (an atomic, a FLUSH, an
 * ATOMIC_WRITE) reaches [va, va + len): the QP and the rkey must both
 * grant @access, and the queue must have room for its answer.  NULL once
 * the request is NAKed, *@why (or the lack of room) saying why.
 */
static QhcaMr *qhca_resp_target(QhcaState *s, QhcaQp *qp,
                                const QhcaPacket *pkt, uint64_t va,
                                uint64_t len, uint8_t access, const char *why)
{
    QhcaMr *mr = (qp->access & access) == access ?
                 qhca_mr_lookup(s, pkt->rkey, qp->pdn, va, len, access) :
                 NULL;

    if (!mr) {
        qhca_resp_fatal(s, qp, pkt, QHCA_NAK_REM_ACCESS,
                        QHCA_EVENT_QP_ACCESS_ERR, why);
        return NULL;
    }
    if (!qhca_resp_res_room(qp)) {
        qhca_resp_fatal(s, qp, pkt, QHCA_NAK_INV_REQ, QHCA_EVENT_QP_REQ_ERR,
                        "more READs and atomics than the responder holds");
        return NULL;
    }
    return mr;
}

/*
 * @pkt, a single-packet request, is executed: queue its answer, an atomic
 * result (@atomic, the value before @orig) or an RDMA READ response with
 * no data (FLUSH and ATOMIC_WRITE, 1.6), and expect the next PSN.
 */
static void qhca_resp_executed(QhcaState *s, QhcaQp *qp,
                               const QhcaPacket *pkt, bool atomic,
                               uint64_t orig)
{
    QhcaResponder *resp = &qp->resp;
    QhcaRdRes *r = qhca_resp_new_res(qp);

    *r = (QhcaRdRes) {
        .opcode = pkt->opcode,
        .atomic = atomic,
        .psn = pkt->psn,
        .npkts = 1,
        .orig = orig,
    };
    resp->epsn = qhca_psn_add(resp->epsn, 1);
    resp->msn++;
    qhca_engine_schedule(s, qp);
}

/*
 * 1.8: are the pages of [va, va + len) of @mr present (writable for
 * @write)?  If not, true once the request is answered: with an RNR NAK
 * while it waits for the page, or failed as an access outside the MR.
 */
static bool qhca_resp_odp_absent(QhcaState *s, QhcaQp *qp,
                                 const QhcaPacket *pkt, QhcaMr *mr,
                                 uint64_t va, uint64_t len, bool write)
{
    QhcaOdpMiss miss;

    if (!mr->odp ||
        qhca_odp_probe(mr, va, len, write, &miss) == QHCA_MR_COPY_OK) {
        return false;
    }
    if (!qhca_resp_odp_wait(s, qp, pkt, &miss)) {
        qhca_resp_fatal(s, qp, pkt, QHCA_NAK_REM_ACCESS,
                        QHCA_EVENT_QP_ACCESS_ERR,
                        "page still absent after RESUME FAILED");
    }
    return true;
}

static void qhca_resp_read(QhcaState *s, QhcaQp *qp, const QhcaPacket *pkt)
{
    QhcaResponder *resp = &qp->resp;
    uint32_t mtu = qhca_qp_mtu(qp);
    QhcaMr *mr = NULL;
    QhcaRdRes *r;

    if (!qp->max_dest_rd_atomic || pkt->dma_len > QHCA_MAX_MSG_SIZE) {
        qhca_resp_fatal(s, qp, pkt, QHCA_NAK_INV_REQ, QHCA_EVENT_QP_REQ_ERR,
                        "RDMA READ not allowed or too long");
        return;
    }
    if (pkt->dma_len) {
        mr = qhca_mr_lookup(s, pkt->rkey, qp->pdn, pkt->va, pkt->dma_len,
                            QHCA_ACCESS_REMOTE_READ);
    }
    if (!(qp->access & QHCA_ACCESS_REMOTE_READ) || (pkt->dma_len && !mr)) {
        qhca_resp_fatal(s, qp, pkt, QHCA_NAK_REM_ACCESS,
                        QHCA_EVENT_QP_ACCESS_ERR,
                        "RDMA READ not allowed by the QP or rkey");
        return;
    }
    if (!qhca_resp_res_room(qp)) {
        qhca_resp_fatal(s, qp, pkt, QHCA_NAK_INV_REQ, QHCA_EVENT_QP_REQ_ERR,
                        "more READs and atomics than the responder holds");
        return;
    }
    /* Accepted only with every page there; an answer meeting one gone waits. */
    if (mr && qhca_resp_odp_absent(s, qp, pkt, mr, pkt->va, pkt->dma_len,
                                   false)) {
        return;
    }
    r = qhca_resp_new_res(qp);
    *r = (QhcaRdRes) {
        .opcode = pkt->opcode,
        .psn = pkt->psn,
        .npkts = pkt->dma_len ? DIV_ROUND_UP(pkt->dma_len, mtu) : 1,
        .va = pkt->va,
        .rkey = pkt->rkey,
        .length = pkt->dma_len,
    };
    resp->epsn = qhca_psn_add(resp->epsn, r->npkts);
    resp->msn++;
    qhca_engine_schedule(s, qp);
}

static void qhca_resp_atomic(QhcaState *s, QhcaQp *qp, const QhcaPacket *pkt)
{
    uint64_t val, orig;
    QhcaMr *mr;

    if (!qp->max_dest_rd_atomic || (pkt->va & 7)) {
        qhca_resp_fatal(s, qp, pkt, QHCA_NAK_INV_REQ, QHCA_EVENT_QP_REQ_ERR,
                        "atomic not allowed or misaligned");
        return;
    }
    mr = qhca_resp_target(s, qp, pkt, pkt->va, sizeof(val),
                          QHCA_ACCESS_REMOTE_ATOMIC,
                          "atomic not allowed by the QP or rkey");
    if (!mr) {
        return;
    }

    /* 1.8: it reads and writes: both need the page, writable. */
    if (qhca_resp_odp_absent(s, qp, pkt, mr, pkt->va, sizeof(val), true)) {
        return;
    }
    /*
     * The engine is one thread under the device lock: this read-modify-
     * write is atomic with respect to every other atomic of the device.
     */
    if (qhca_mr_copy(s, mr, pkt->va, &val, sizeof(val), false, NULL) !=
        QHCA_MR_COPY_OK) {
        qhca_resp_fatal(s, qp, pkt, QHCA_NAK_REM_ACCESS,
                        QHCA_EVENT_QP_ACCESS_ERR, "atomic target not in RAM");
        return;
    }
    orig = le64_to_cpu(val);
    if (pkt->opcode == QHCA_IB_COMPARE_SWAP) {
        val = cpu_to_le64(orig == pkt->compare ? pkt->swap_add : orig);
    } else {
        val = cpu_to_le64(orig + pkt->swap_add);
    }
    if (le64_to_cpu(val) != orig &&
        qhca_mr_copy(s, mr, pkt->va, &val, sizeof(val), true, NULL) !=
        QHCA_MR_COPY_OK) {
        qhca_resp_fatal(s, qp, pkt, QHCA_NAK_REM_ACCESS,
                        QHCA_EVENT_QP_ACCESS_ERR, "atomic target not in RAM");
        return;
    }
    trace_qhca_resp_atomic(qp->qpn, pkt->psn, pkt->va, orig,
                           le64_to_cpu(val));
    qhca_resp_executed(s, qp, pkt, true, orig);
}

/*
 * 1.6: FLUSH.  The FETH says which placement (GLOBAL visibility and/or
 * PERSISTENCE) of which bytes (the RETH's range, or the rkey's whole MR);
 * the QP and the MR must grant the FLUSH access of each type asked for.
 * Every write before it was placed in guest RAM as its packets arrived,
 * in PSN order: what is left for global visibility is that the guest's
 * CPUs see those stores before the answer, a full barrier.  Guest RAM has
 * no persistence domain, so no MR grants FLUSH_PERSISTENT (REG_MR refuses
 * it, as rxe does for memory that is not pmem) and a persistent FLUSH is
 * a remote access error.
 */
static void qhca_resp_flush(QhcaState *s, QhcaQp *qp, const QhcaPacket *pkt)
{
    uint8_t type = pkt->feth & QHCA_FLUSH_TYPE;
    uint8_t level = pkt->feth & QHCA_FLUSH_LEVEL;
    uint64_t va = pkt->va, len = pkt->dma_len;
    uint8_t access = 0;
    QhcaMr *mr;

    if (qp->type != QHCA_QPT_RC || !qp->max_dest_rd_atomic ||
        (pkt->feth & ~(uint32_t)(QHCA_FLUSH_TYPE | QHCA_FLUSH_LEVEL)) ||
        !type || (type & ~(QHCA_FLUSH_GLOBAL | QHCA_FLUSH_PERSISTENT)) ||
        (level != QHCA_FLUSH_RANGE && level != QHCA_FLUSH_MR) ||
        (level == QHCA_FLUSH_RANGE && len > QHCA_MAX_MSG_SIZE)) {
        qhca_resp_fatal(s, qp, pkt, QHCA_NAK_INV_REQ, QHCA_EVENT_QP_REQ_ERR,
                        "FLUSH not allowed, or its FETH or length invalid");
        return;
    }
    if (type & QHCA_FLUSH_GLOBAL) {
        access |= QHCA_ACCESS_FLUSH_GLOBAL;
    }
    if (type & QHCA_FLUSH_PERSISTENT) {
        access |= QHCA_ACCESS_FLUSH_PERSISTENT;
    }
    if (level == QHCA_FLUSH_MR) {
        va = qhca_resp_mr_start(s, pkt->rkey);
        len = 0;
    }
    mr = qhca_resp_target(s, qp, pkt, va, len, access,
                          "FLUSH not allowed by the QP or rkey");
    if (!mr) {
        return;
    }
    /* 1.8: the range of an ODP MR must be there, as for a READ. */
    if (qhca_resp_odp_absent(s, qp, pkt, mr, va, len, false)) {
        return;
    }
    /* The placed writes before the answer, for every guest CPU. */
    smp_mb();
    trace_qhca_resp_flush(qp->qpn, pkt->psn, pkt->feth, va, len);
    qhca_resp_executed(s, qp, pkt, false, 0);
}

/*
 * 1.6: ATOMIC_WRITE: 8 bytes at an 8-byte aligned address the rkey lets
 * the QP write, written as one copy that no page boundary splits, under
 * the device lock (so no other request of the device sees half of it).
 * Misaligned, or not 8 bytes, is an invalid request, as for an atomic.
 */
static void qhca_resp_atomic_write(QhcaState *s, QhcaQp *qp,
                                   const QhcaPacket *pkt)
{
    uint64_t val;
    QhcaMr *mr;

    if (qp->type != QHCA_QPT_RC || !qp->max_dest_rd_atomic ||
        pkt->dma_len != sizeof(val) || pkt->paylen != sizeof(val) ||
        (pkt->va & 7)) {
        qhca_resp_fatal(s, qp, pkt, QHCA_NAK_INV_REQ, QHCA_EVENT_QP_REQ_ERR,
                        "ATOMIC_WRITE not allowed, not 8 bytes or misaligned");
        return;
    }
    mr = qhca_resp_target(s, qp, pkt, pkt->va, sizeof(val),
                          QHCA_ACCESS_REMOTE_WRITE,
                          "ATOMIC_WRITE not allowed by the QP or rkey");
    if (!mr) {
        return;
    }
    if (qhca_resp_odp_absent(s, qp, pkt, mr, pkt->va, sizeof(val), true)) {
        return;
    }
    memcpy(&val, pkt->payload, sizeof(val));
    if (qhca_mr_copy(s, mr, pkt->va, &val, sizeof(val), true, NULL) !=
        QHCA_MR_COPY_OK) {
        qhca_resp_fatal(s, qp, pkt, QHCA_NAK_REM_ACCESS,
                        QHCA_EVENT_QP_ACCESS_ERR,
                        "ATOMIC_WRITE target not in RAM");
        return;
    }
    trace_qhca_resp_atomic_write(qp->qpn, pkt->psn, pkt->va);
    qhca_resp_executed(s, qp, pkt, false, 0);
}

/*
 * Does queued result @r answer the duplicate @pkt?  A READ or an atomic
 * matches a result of its kind; a FLUSH or an ATOMIC_WRITE (1.6) only its
 * own, and a READ or atomic never one of theirs.
 */
static bool qhca_resp_res_matches(const QhcaRdRes *r, const QhcaPacket *pkt)
{
    uint16_t f = qhca_pkt_flags(pkt->opcode);

    if ((f | qhca_pkt_flags(r->opcode)) & QHCA_PKT_PLACEMENT) {
        return r->opcode == pkt->opcode;
    }
    return r->atomic == !!(f & QHCA_PKT_ATOMIC);
}

/*
 * A request already executed: the requester retried.  READs, atomics,
 * FLUSHes and ATOMIC_WRITEs are answered again from the queue, never
 * executed again; the rest acknowledged.
 */
static void qhca_resp_duplicate(QhcaState *s, QhcaQp *qp,
                                const QhcaPacket *pkt)
{
    QhcaResponder *resp = &qp->resp;
    uint16_t f = qhca_pkt_flags(pkt->opcode);
    uint32_t i;

    trace_qhca_resp_duplicate(qp->qpn, pkt->psn, resp->epsn);
    if (!(f & (QHCA_PKT_READ | QHCA_PKT_ATOMIC | QHCA_PKT_PLACEMENT))) {
        qhca_resp_ack(s, qp, qhca_psn_add(resp->epsn, QHCA_PSN_MASK));
        return;
    }
    for (i = resp->res_head; i != resp->res_tail; i++) {
        QhcaRdRes *r = &resp->res[i % QHCA_MAX_RD_ATOMIC];
        int32_t k = qhca_psn_diff(pkt->psn, r->psn);

        if (!qhca_resp_res_matches(r, pkt) || k < 0 || k >= r->npkts) {
            continue;
        }
        /* Answer again from here; later results follow in order. */
        r->next = k;
        resp->res_send = i;
        for (i++; i != resp->res_tail; i++) {
            resp->res[i % QHCA_MAX_RD_ATOMIC].next = 0;
        }
        qhca_engine_schedule(s, qp);
        return;
    }
    trace_qhca_pkt_drop(qp->qpn, pkt->psn, "duplicate too old to answer");
}

void qhca_resp_receive(QhcaState *s, QhcaQp *qp, const QhcaPacket *pkt)
{
    QhcaResponder *resp = &qp->resp;
    uint16_t f = qhca_pkt_flags(pkt->opcode);
    uint32_t mtu = qhca_qp_mtu(qp);
    bool in_msg = resp->in_send || resp->in_write;
    int32_t d;

    /* The responder works in RTR and every later state short of ERR. */
    if (qp->state < QHCA_QPS_RTR || qp->state > QHCA_QPS_SQE) {
        trace_qhca_pkt_drop(qp->qpn, pkt->psn, "responder not receiving");
        return;
    }
    if (pkt->paylen > mtu) {
        /* As a real link does with a packet over the path MTU. */
        trace_qhca_pkt_drop(qp->qpn, pkt->psn, "longer than the path MTU");
        return;
    }
    d = qhca_psn_diff(pkt->psn, resp->epsn);
    if (d < 0) {
        qhca_resp_duplicate(s, qp, pkt);
        return;
    }
    if (d > 0) {
        /* Something was lost: one NAK, then silence until it comes. */
        if (!resp->nak_sent) {
            resp->nak_sent = true;
            qhca_resp_aeth(s, qp, QHCA_AETH_NAK | QHCA_NAK_PSN_SEQ_ERR,
                           resp->epsn);
        }
        trace_qhca_pkt_drop(qp->qpn, pkt->psn, "out of sequence");
        return;
    }
    resp->nak_sent = false;

    /* 1.8: nothing is executed while a page fault waits for its resume. */
    if (qp->odp[QHCA_PAGE_FAULT_RESPONDER].pending) {
        trace_qhca_odp_wait(qp->qpn, pkt->psn, "responder, fault pending");
        qhca_resp_rnr(s, qp, pkt);
        return;
    }

    if (qp->type == QHCA_QPT_XRC_TGT) {
        const char *why;

        if (!qhca_xrc_resp_select(s, qp, pkt, &why)) {
            trace_qhca_err_xrc_resp(qp->qpn, pkt->psn, pkt->xrc_srqn, why);
            qhca_resp_fatal(s, qp, pkt, QHCA_NAK_INV_REQ,
                            QHCA_EVENT_QP_REQ_ERR, why);
            return;
        }
    }

    /* A message in progress continues; otherwise one starts. */
    if (in_msg ? (f & QHCA_PKT_FIRST) ||
                 !(f & (resp->in_send ? QHCA_PKT_SEND : QHCA_PKT_WRITE)) :
                 !(f & QHCA_PKT_FIRST)) {
        qhca_resp_fatal(s, qp, pkt, QHCA_NAK_INV_REQ, QHCA_EVENT_QP_REQ_ERR,
                        "opcode out of sequence");
        return;
    }
    /* All but the last packet of a message carry a full MTU. */
    if ((f & QHCA_PKT_PAYLOAD) &&
        (!(f & QHCA_PKT_LAST) ? pkt->paylen != mtu :
         !(f & QHCA_PKT_FIRST) && pkt->paylen == 0)) {
        qhca_resp_fatal(s, qp, pkt, QHCA_NAK_INV_REQ, QHCA_EVENT_QP_REQ_ERR,
                        "payload length does not fit the opcode");
        return;
    }

    if (f & QHCA_PKT_SEND) {
        qhca_resp_send(s, qp, pkt);
    } else if (f & QHCA_PKT_WRITE) {
        qhca_resp_write(s, qp, pkt);
    } else if (f & QHCA_PKT_READ) {
        qhca_resp_read(s, qp, pkt);
    } else if (f & QHCA_PKT_FETH) {
        qhca_resp_flush(s, qp, pkt);
    } else if (f & QHCA_PKT_ATOMIC_WRITE) {
        qhca_resp_atomic_write(s, qp, pkt);
    } else {
        qhca_resp_atomic(s, qp, pkt);
    }
}

/*
 * Build the response packet for the next answer in the queue.  NOT_RAM
 * if its source is no longer readable; 1.8: FAULT, with *@miss, if a page
 * of it is absent.
 */
static QhcaMrCopy qhca_resp_answer(QhcaState *s, QhcaQp *qp, QhcaRdRes *r,
                                   QhcaOdpMiss *miss)
{
    QhcaResponder *resp = &qp->resp;
    uint32_t mtu = qhca_qp_mtu(qp);
    uint32_t k = r->next;
    uint32_t off = k * mtu;
    uint32_t len = MIN(mtu, r->length - MIN(off, r->length));
    QhcaMrCopy copied = QHCA_MR_COPY_NOT_RAM;
    uint8_t opcode;
    QhcaPacket *pkt;
    QhcaMr *mr;

    if (r->atomic) {
        pkt = qhca_wire_packet(s, qp, QHCA_IB_ATOMIC_ACKNOWLEDGE,
                               qp->dest_qpn, r->psn);
        pkt->syndrome = QHCA_AETH_ACK | QHCA_AETH_CREDITS_NONE;
        pkt->msn = resp->msn & QHCA_MSN_MASK;
        pkt->orig = r->orig;
        qhca_wire_send(s, pkt);
        r->next = 1;
        return QHCA_MR_COPY_OK;
    }

    opcode = qhca_wire_read_resp_opcode(k, r->npkts);
    pkt = qhca_wire_packet(s, qp, opcode, qp->dest_qpn,
                           qhca_psn_add(r->psn, k));
    if (qhca_pkt_flags(opcode) & QHCA_PKT_AETH) {
        pkt->syndrome = QHCA_AETH_ACK | QHCA_AETH_CREDITS_NONE;
        pkt->msn = resp->msn & QHCA_MSN_MASK;
    }
    pkt->paylen = len;
    if (len) {
        /* Looked up again: DEREG_MR takes effect at once. */
        mr = qhca_mr_lookup(s, r->rkey, qp->pdn, r->va + off, len,
                            QHCA_ACCESS_REMOTE_READ);
        if (mr) {
            copied = qhca_mr_copy(s, mr, r->va + off, pkt->payload, len,
                                  false, miss);
        }
        if (copied != QHCA_MR_COPY_OK) {
            QSIMPLEQ_INSERT_HEAD(&s->engine.free_pkts, pkt, next);
            return copied;
        }
    }
    qhca_wire_send(s, pkt);
    r->next++;
    return QHCA_MR_COPY_OK;
}

/*
 * One step of the responder's answers: READ responses and atomic results
 * in order, then the pending ACK or NAK.  True if answers are left.  On a
 * full transmit queue it stops before building the next one and the QP
 * waits for room (false): a READ of 2 GiB is sent as fast as the netdev
 * takes it, and nothing of it is dropped here.  The ACKs and NAKs wait
 * the same way (in aeth_pending, where a newer ACK replaces an older).
 */
bool qhca_resp_step(QhcaState *s, QhcaQp *qp)
{
    QhcaResponder *resp = &qp->resp;
    unsigned budget = QHCA_STEP_PACKETS;

    while (resp->res_send != resp->res_tail && budget--) {
        QhcaRdRes *r = &resp->res[resp->res_send % QHCA_MAX_RD_ATOMIC];
        uint32_t psn = qhca_psn_add(r->psn, r->next);
        QhcaOdpMiss miss;
        QhcaMrCopy copied;

        if (resp->odp_wait || qhca_wire_tx_blocked(s, qp)) {
            return false;
        }
        copied = qhca_resp_answer(s, qp, r, &miss);
        if (copied == QHCA_MR_COPY_FAULT &&
            qhca_odp_fault(s, qp, QHCA_PAGE_FAULT_RESPONDER, &miss, psn,
                           psn)) {
            /* RESUME_PAGE_FAULT goes on from this response. */
            trace_qhca_odp_wait(qp->qpn, psn, "READ response");
            resp->odp_wait = true;
            return false;
        }
        if (copied != QHCA_MR_COPY_OK) {
            trace_qhca_err_resp(qp->qpn, psn, QHCA_NAK_REM_ACCESS,
                                "RDMA READ source became invalid");
            resp->res_send = resp->res_tail;
            resp->aeth_pending = false;
            qhca_resp_aeth(s, qp, QHCA_AETH_NAK | QHCA_NAK_REM_ACCESS, psn);
            qhca_qp_error(s, qp, QHCA_EVENT_QP_ACCESS_ERR);
            return false;
        }
        if (r->next == r->npkts) {
            resp->res_send++;
        }
    }
    if (resp->res_send == resp->res_tail && resp->aeth_pending &&
        !qhca_wire_tx_blocked(s, qp)) {
        qhca_resp_send_aeth(s, qp);
    }
    return resp->res_send != resp->res_tail;
}
