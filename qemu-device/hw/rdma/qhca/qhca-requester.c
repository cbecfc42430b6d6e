/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qhca RC requester: executes the send queue.
 *
 * WQEs are taken from the SQ ring in order into a window of parsed copies
 * (qhca_swqe_read(), which checks each one completely before it is
 * started, so a retransmission never re-reads or re-checks guest memory
 * that may have changed, except inline data, which lives in the WQE's own
 * slot).  What an opcode does comes from its row of the opcode table,
 * w->info.  A started WQE owns a range of PSNs: one per packet for SEND
 * and RDMA WRITE, one per response packet for RDMA READ (whose request is
 * a single packet), one for an atomic, a FLUSH or an ATOMIC_WRITE (1.6,
 * each answered by an RDMA READ response without data, and counted
 * among the READs and atomics in flight).  The send cursor (cur, cur_pkt)
 * walks the window and emits packets; ACKs, NAKs and responses move una,
 * the oldest unacknowledged PSN; the transport timer and RNR NAKs move the
 * cursor back (go-back-N).  WQEs complete strictly in order.
 *
 * 1.5: a RAW_ETH QP's send WQE is one whole Ethernet frame, put on the
 * netdev as it is; like a UD message, it is complete once sent.
 *
 * 1.8: a local access that meets an absent page of an ODP MR (gathering
 * a packet's data, scattering a READ response or an atomic's result) is a
 * page fault (qhca_odp_fault()): the send queue stops there, the packet
 * is not sent or the response is dropped, and the transport timer does
 * not count while the QP waits.  RESUME_PAGE_FAULT goes back to una and
 * sends again from there (go-back-N, as after a sequence NAK), so a READ
 * whose response was dropped is asked for again.
 */
#include "qemu/osdep.h"
#include "qhca.h"
#include "qhca-eth.h"
#include "trace.h"

/* The RNR NAK timer field, in microseconds (IBTA vol. 1, table 45). */
static const uint32_t qhca_rnr_timer_us[32] = {
    655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
    1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720, 40960,
    61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

/*
 * A WQE that waits for a response rather than an ACK: a READ, an atomic,
 * a FLUSH or an ATOMIC_WRITE.  Each holds one of max_rd_atomic.
 */
#define QHCA_REQ_WAITS          (QHCA_WR_F_RESPONSE | QHCA_WR_F_READ_ACK)

static QhcaSwqe *qhca_req_wqe(QhcaQp *qp, uint16_t idx)
{
    return &qp->req.win[idx % qp->req.win_size];
}

static int64_t qhca_req_timeout_ns(QhcaQp *qp)
{
    return 4096ll << qp->timeout;       /* 4.096 us * 2^timeout */
}

static void qhca_req_fail(QhcaState *s, QhcaQp *qp, QhcaSwqe *w,
                          uint8_t status, const char *why)
{
    trace_qhca_err_wqe(qp->qpn, w->idx, status, why);
    if (w->started && !w->done && (w->info->flags & QHCA_REQ_WAITS)) {
        qp->req.rd_out--;
    }
    w->status = status;
    w->done = true;
}

/* Take the WQE at sq_next into the window; false if the ring failed. */
static bool qhca_req_take(QhcaState *s, QhcaQp *qp)
{
    uint16_t idx = qp->sq_next;
    QhcaSwqe *w = qhca_req_wqe(qp, idx);
    uint32_t mtu = qhca_qp_mtu(qp);
    const char *why;

    if (!qhca_swqe_read(s, qp, idx, w, &why)) {
        return false;
    }
    qp->sq_next++;
    qhca_count(s, QHCA_CNT_SQ_WQES, 1);
    if (w->status != QHCA_WC_SUCCESS) {
        qhca_req_fail(s, qp, w, w->status, why);
        return true;
    }
    if (w->info->flags & QHCA_WR_F_LOCAL) {
        w->npkts = 0;
    } else if ((w->info->flags & (QHCA_WR_F_ATOMIC | QHCA_WR_F_READ_ACK)) ||
               qp->type == QHCA_QPT_RAW_ETH) {
        w->npkts = 1;
    } else {
        w->npkts = w->length ? DIV_ROUND_UP(w->length, mtu) : 1;
    }
    return true;
}

static bool qhca_req_wqe_complete(QhcaQp *qp, QhcaSwqe *w)
{
    if (w->done) {
        return true;
    }
    if (!w->started || (w->info->flags & QHCA_REQ_WAITS)) {
        return false;
    }
    return qhca_psn_diff(qp->req.una,
                         qhca_psn_add(w->first_psn, w->npkts)) >= 0;
}

/* Complete, in order, the WQEs that are done; an error moves to ERR. */
static void qhca_req_complete(QhcaState *s, QhcaQp *qp)
{
    while (qp->sq_comp != qp->sq_next && qp->state != QHCA_QPS_ERR &&
           qp->state != QHCA_QPS_RESET && qhca_is_ready(s)) {
        QhcaSwqe *w = qhca_req_wqe(qp, qp->sq_comp);
        bool failed = w->status != QHCA_WC_SUCCESS;

        if (!qhca_req_wqe_complete(qp, w)) {
            return;
        }
        /*
         * Free the slot before the CQE says so: a guest that sees the
         * CQE may post into the slot at once, and its doorbell is checked
         * against sq_comp.
         */
        qatomic_set(&qp->sq_comp, qp->sq_comp + 1);
        /* sq_comp before the CQE: pairs with the doorbell's read of it. */
        smp_wmb();
        if (failed || (w->flags & QHCA_WQE_F_SIGNALED) ||
            (qp->flags & QHCA_QP_F_SQ_SIG_ALL)) {
            struct qhca_cqe cqe = {
                .wr_id = cpu_to_le64(w->wr_id),
                .byte_len = cpu_to_le32(failed ? 0 : w->length),
                .qpn = cpu_to_le32(qp->qpn),
                .wqe_idx = cpu_to_le16(w->idx),
                .opcode = w->info->wc_opcode,
                .status = w->status,
            };

            if (!qhca_cq_post(s, qp->send_cqn, &cqe)) {
                qhca_qp_error(s, qp, 0);
                return;
            }
        }
        if (failed) {
            qhca_qp_error(s, qp, 0);
            return;
        }
    }
}

/* The started WQE whose PSNs hold @psn, or NULL. */
static QhcaSwqe *qhca_req_find(QhcaQp *qp, uint32_t psn)
{
    uint16_t i;

    for (i = qp->sq_comp; i != qp->sq_next; i++) {
        QhcaSwqe *w = qhca_req_wqe(qp, i);

        if (!w->started) {
            break;
        }
        if (qhca_psn_diff(psn, w->first_psn) >= 0 &&
            qhca_psn_diff(psn, qhca_psn_add(w->first_psn, w->npkts)) < 0) {
            return w;
        }
    }
    return NULL;
}

/* Go back to resend from @psn. */
static void qhca_req_rewind(QhcaQp *qp, uint32_t psn)
{
    QhcaSwqe *w = qhca_req_find(qp, psn);

    if (w) {
        trace_qhca_req_rewind(qp->qpn, w->idx, psn);
        qp->req.cur = w->idx;
        qp->req.cur_pkt = qhca_psn_diff(psn, w->first_psn);
        qp->req.since_ack_req = 0;
    }
}

static bool qhca_req_outstanding(QhcaQp *qp)
{
    return qhca_psn_diff(qp->req.high_psn, qp->req.una) > 0;
}

/*
 * Every PSN before @upto is acknowledged, except that an ACK does not
 * answer a READ, an atomic, a FLUSH or an ATOMIC_WRITE: una stops at the
 * first one unanswered.
 */
static void qhca_req_acked(QhcaState *s, QhcaQp *qp, uint32_t upto)
{
    QhcaRequester *req = &qp->req;
    uint16_t i;

    for (i = qp->sq_comp; i != qp->sq_next; i++) {
        QhcaSwqe *w = qhca_req_wqe(qp, i);
        uint32_t answered;

        if (!w->started || qhca_psn_diff(w->first_psn, upto) >= 0) {
            break;
        }
        if ((w->info->flags & QHCA_REQ_WAITS) && !w->done) {
            answered = qhca_psn_add(w->first_psn, w->resp_pkts);
            if (qhca_psn_diff(upto, answered) > 0) {
                upto = answered;
            }
            break;
        }
    }
    if (qhca_psn_diff(upto, req->una) <= 0) {
        return;
    }
    req->una = upto;
    /* Progress: the retry budgets start again. */
    req->retry_left = qp->retry_cnt;
    req->rnr_left = qp->rnr_retry;
    req->timer_late = false;
    if (req->timer == QHCA_TIMER_RETRY) {
        if (qhca_req_outstanding(qp)) {
            /* Pushed back lazily: the timer re-arms when it fires. */
            req->deadline = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                            qhca_req_timeout_ns(qp);
        } else {
            req->timer = QHCA_TIMER_NONE;
        }
    }
}

/*
 * A local access of @w met an absent ODP page: true if the send queue
 * waits for RESUME_PAGE_FAULT, false if the access fails (LOC_PROT_ERR).
 */
static bool qhca_req_odp_wait(QhcaState *s, QhcaQp *qp, QhcaSwqe *w,
                              const QhcaOdpMiss *miss)
{
    if (!qhca_odp_fault(s, qp, QHCA_PAGE_FAULT_REQUESTER, miss, w->idx, 0)) {
        return false;
    }
    trace_qhca_odp_wait(qp->qpn, w->first_psn, "requester");
    return true;
}

/*
 * RESUME_PAGE_FAULT of the requester's fault: go on where the send queue
 * stopped, or, if a READ response or atomic result was dropped, send
 * again from the oldest unacknowledged PSN, which that one has not passed
 * (the PSNs after it are duplicates the responder answers again or
 * acknowledges).
 */
void qhca_req_odp_resume(QhcaState *s, QhcaQp *qp)
{
    if (qp->req.odp_rewind && qhca_req_outstanding(qp)) {
        qhca_req_rewind(qp, qp->req.una);
    }
    qp->req.odp_rewind = false;
    qhca_engine_schedule(s, qp);
}

/*
 * Bytes [off, off + len) of the message into @buf; QHCA_ODP_FAULT, with
 * *@miss, at an absent ODP page.
 */
static uint8_t qhca_req_gather(QhcaState *s, QhcaQp *qp, QhcaSwqe *w,
                               uint32_t off, uint8_t *buf, uint32_t len,
                               QhcaOdpMiss *miss)
{
    uint64_t addr;

    if (!len) {
        return QHCA_WC_SUCCESS;
    }
    if (w->flags & QHCA_WQE_F_INLINE) {
        addr = qhca_sq_slot(qp, w->idx) + sizeof(struct qhca_sq_wqe) + off;
        if (!qhca_dma_read(s, addr, buf, len)) {
            qhca_dma_ring_failed(s, "SQ", addr);
            return QHCA_WC_LOC_PROT_ERR;
        }
        return QHCA_WC_SUCCESS;
    }
    return qhca_sgl_copy(s, qp->pdn, w->sge, w->num_sge, 0, off, buf, len,
                         false, miss);
}

/*
 * RAW_ETH: gather the frame of @w (its length was checked when it was
 * taken) and put it on the netdev, which copies it.  False if the WQE
 * failed.
 */
static bool qhca_req_send_frame(QhcaState *s, QhcaQp *qp, QhcaSwqe *w)
{
    QhcaRequester *req = &qp->req;
    uint8_t frame[QHCA_ETH_FRAME_MAX];
    QhcaOdpMiss miss;
    uint8_t status;

    assert(w->length <= sizeof(frame));
    status = qhca_req_gather(s, qp, w, 0, frame, w->length, &miss);
    if (status == QHCA_ODP_FAULT) {
        if (qhca_req_odp_wait(s, qp, w, &miss)) {
            return false;
        }
        status = QHCA_WC_LOC_PROT_ERR;
    }
    if (status != QHCA_WC_SUCCESS) {
        qhca_req_fail(s, qp, w, status, "local buffer became invalid");
        req->halted = true;
        qhca_req_complete(s, qp);
        return false;
    }
    trace_qhca_req_frame(qp->qpn, w->idx, w->length);
    qhca_net_tx(s, frame, w->length);
    req->high_psn = qhca_psn_add(w->first_psn, 1);
    req->cur++;
    req->cur_pkt = 0;
    qhca_req_acked(s, qp, req->high_psn);
    qhca_req_complete(s, qp);
    return true;
}

/*
 * Unacknowledged packets a QP may have in flight.  The IB loopback port
 * loses nothing to bursts; an Ethernet peer's socket does.
 */
static int32_t qhca_req_max_unacked(QhcaState *s)
{
    return qhca_port_is_eth(s) ? QHCA_ETH_MAX_UNACKED : QHCA_REQ_MAX_UNACKED;
}

/*
 * Send the next packet of @w.  False if it cannot go now: the window of
 * unacknowledged packets or the transmit queue is full (the QP waits for
 * an ACK, or for the queue: qhca_wire_tx_blocked()), or the WQE failed.
 */
static bool qhca_req_send_packet(QhcaState *s, QhcaQp *qp, QhcaSwqe *w)
{
    QhcaRequester *req = &qp->req;
    uint32_t mtu = qhca_qp_mtu(qp);
    uint32_t k = req->cur_pkt;
    uint32_t span = 1;
    QhcaPacket *pkt;

    if (qhca_wire_tx_blocked(s, qp)) {
        return false;
    }
    if (qp->type == QHCA_QPT_RAW_ETH) {
        return qhca_req_send_frame(s, qp, w);
    }
    if (w->info->flags & QHCA_WR_F_READ) {
        /* Ask for what has not arrived yet. */
        uint64_t off = (uint64_t)w->resp_pkts * mtu;

        k = w->resp_pkts;
        span = w->npkts - k;
        pkt = qhca_wire_packet(s, qp, qhca_wire_req_opcode(w->info, true, true),
                               qp->dest_qpn, qhca_psn_add(w->first_psn, k));
        pkt->va = w->remote_addr + off;
        pkt->rkey = w->rkey;
        pkt->dma_len = w->length - MIN(off, w->length);
        pkt->ack_req = true;
        /* An XRC READ names the target's SRQ too (its XRCETH). */
        qhca_xport_fill_packet(s, qp, w, pkt);
    } else if (w->info->flags & QHCA_WR_F_ATOMIC) {
        bool cas = w->info->ib_family == QHCA_IB_FAMILY_CMP_SWAP;

        pkt = qhca_wire_packet(s, qp, qhca_wire_req_opcode(w->info, true, true),
                               qp->dest_qpn, w->first_psn);
        pkt->va = w->remote_addr;
        pkt->rkey = w->rkey;
        pkt->dma_len = sizeof(uint64_t);
        pkt->swap_add = cas ? w->swap : w->compare_add;
        pkt->compare = w->compare_add;
        pkt->ack_req = true;
        qhca_xport_fill_packet(s, qp, w, pkt);
    } else {
        uint32_t psn = qhca_psn_add(w->first_psn, k);
        uint32_t off = k * mtu;
        bool first = k == 0;
        bool last = k + 1 == w->npkts;
        QhcaOdpMiss miss;
        uint8_t status;

        if (qhca_psn_diff(psn, req->una) >= qhca_req_max_unacked(s)) {
            return false;
        }
        pkt = qhca_wire_packet(s, qp,
                               qhca_wire_req_opcode(w->info, first, last),
                               qp->dest_qpn, psn);
        pkt->paylen = MIN(mtu, w->length - off);
        status = qhca_req_gather(s, qp, w, off, pkt->payload, pkt->paylen,
                                 &miss);
        if (status == QHCA_ODP_FAULT) {
            if (qhca_req_odp_wait(s, qp, w, &miss)) {
                /* Not sent: the cursor stays on it. */
                QSIMPLEQ_INSERT_HEAD(&s->engine.free_pkts, pkt, next);
                return false;
            }
            status = QHCA_WC_LOC_PROT_ERR;
        }
        if (status != QHCA_WC_SUCCESS) {
            QSIMPLEQ_INSERT_HEAD(&s->engine.free_pkts, pkt, next);
            qhca_req_fail(s, qp, w, status, "local buffer became invalid");
            req->halted = true;
            qhca_req_complete(s, qp);
            return false;
        }
        if (first && (w->info->flags & QHCA_WR_F_REMOTE_ADDR)) {
            pkt->va = w->remote_addr;
            pkt->rkey = w->rkey;
            pkt->dma_len = w->length;
        }
        if (w->info->ib_family == QHCA_IB_FAMILY_FLUSH) {
            /* No data: the RETH names the range, the FETH what to do. */
            pkt->dma_len = w->flush_len;
            pkt->feth = w->flush;
        }
        if (last) {
            pkt->imm = w->imm;
            pkt->ieth = (w->info->flags & QHCA_WR_F_INV) ? w->rkey : 0;
            /* Only what the receiver completes can be solicited. */
            pkt->solicited = (w->flags & QHCA_WQE_F_SOLICITED) &&
                             (w->info->flags & (QHCA_WR_F_SEND |
                                                QHCA_WR_F_IMM));
        }
        /*
         * The packet that fills the window asks for its ACK, so that the
         * responder answers at once and the window moves.
         */
        pkt->ack_req = last || ++req->since_ack_req >= QHCA_REQ_ACK_EVERY ||
                       qhca_psn_diff(qhca_psn_add(psn, 1), req->una) >=
                       qhca_req_max_unacked(s);
        qhca_xport_fill_packet(s, qp, w, pkt);
    }
    if (pkt->ack_req) {
        req->since_ack_req = 0;
    }

    if (qhca_psn_diff(qhca_psn_add(pkt->psn, span), req->high_psn) > 0) {
        req->high_psn = qhca_psn_add(pkt->psn, span);
    }
    qhca_wire_send(s, pkt);

    if ((w->info->flags & QHCA_REQ_WAITS) ||
        ++req->cur_pkt == w->npkts) {
        req->cur++;
        req->cur_pkt = 0;
    }
    if (qp->type == QHCA_QPT_UC || qp->type == QHCA_QPT_UD) {
        /* UC and UD are unacknowledged: a WQE sent is complete. */
        qhca_req_acked(s, qp, req->high_psn);
        qhca_req_complete(s, qp);
        return true;
    }
    if (req->timer == QHCA_TIMER_NONE && qp->timeout) {
        req->timer_late = false;
        qhca_timer_arm(s, qp, QHCA_TIMER_RETRY, qhca_req_timeout_ns(qp));
    }
    return true;
}

/* One step of the requester: up to QHCA_STEP_PACKETS packets. */
bool qhca_req_step(QhcaState *s, QhcaQp *qp)
{
    QhcaRequester *req = &qp->req;
    unsigned budget = QHCA_STEP_PACKETS;

    if (qp->state != QHCA_QPS_RTS && qp->state != QHCA_QPS_SQD) {
        return false;
    }
    qhca_req_complete(s, qp);

    for (; budget; budget--) {
        QhcaSwqe *w;

        if (req->halted || req->timer == QHCA_TIMER_RNR ||
            qp->odp[QHCA_PAGE_FAULT_REQUESTER].pending ||
            qp->state == QHCA_QPS_ERR || !qhca_is_ready(s)) {
            return false;
        }
        if (req->cur == qp->sq_next) {
            /* SQD drains what was started and starts nothing new. */
            if (qp->state != QHCA_QPS_RTS || qp->sq_next == qp->sq_pi ||
                (uint16_t)(qp->sq_next - qp->sq_comp) >= req->win_size) {
                return false;
            }
            if (!qhca_req_take(s, qp)) {
                return false;
            }
        }
        w = qhca_req_wqe(qp, req->cur);
        if (w->done) {
            if (w->status != QHCA_WC_SUCCESS) {
                /* Nothing after a failed WQE goes out. */
                qhca_req_complete(s, qp);
                return false;
            }
            req->cur++;
            req->cur_pkt = 0;
            continue;
        }
        if (!w->started) {
            /*
             * Fetched in RTS but held back (fence, READ/atomic limit): in
             * SQD it waits for RTS like a WQE not fetched yet.
             */
            if (qp->state != QHCA_QPS_RTS) {
                trace_qhca_req_sqd_hold(qp->qpn, w->idx);
                return false;
            }
            if ((w->flags & QHCA_WQE_F_FENCE) && req->rd_out) {
                return false;
            }
            if (w->info->flags & QHCA_WR_F_LOCAL) {
                const char *why = NULL;
                uint8_t status;

                w->started = true;
                w->first_psn = req->next_psn;
                status = qhca_local_exec(s, qp, w, &why);
                trace_qhca_wqe_local(qp->qpn, w->idx, w->opcode, status);
                if (status != QHCA_WC_SUCCESS) {
                    qhca_req_fail(s, qp, w, status, why);
                } else {
                    w->done = true;
                    qhca_req_complete(s, qp);
                }
                continue;
            }
            if (w->info->flags & QHCA_REQ_WAITS) {
                if (req->rd_out >= MAX(qp->max_rd_atomic, 1)) {
                    return false;
                }
                req->rd_out++;
            }
            w->started = true;
            w->first_psn = req->next_psn;
            req->next_psn = qhca_psn_add(req->next_psn, w->npkts);
        }
        if (!qhca_req_send_packet(s, qp, w)) {
            return false;
        }
    }
    return true;
}

/* The QP's timer fired: retransmit, give up, or end an RNR wait. */
void qhca_req_timer(QhcaState *s, QhcaQp *qp)
{
    QhcaRequester *req = &qp->req;
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    QhcaSwqe *w;

    if (req->timer == QHCA_TIMER_NONE) {
        return;
    }
    if (now < req->deadline) {
        timer_mod(&qp->timer, req->deadline);
        return;
    }
    if (req->timer == QHCA_TIMER_RNR) {
        trace_qhca_req_rnr_done(qp->qpn);
        req->timer = QHCA_TIMER_NONE;
        qhca_engine_schedule(s, qp);
        return;
    }

    req->timer = QHCA_TIMER_NONE;
    if ((qp->state != QHCA_QPS_RTS && qp->state != QHCA_QPS_SQD) ||
        !qhca_req_outstanding(qp)) {
        return;
    }
    /*
     * 1.8: waiting for the driver to page in is no transport failure.
     * The resume sends again from una, which arms the timer anew.
     */
    if (qp->odp[QHCA_PAGE_FAULT_REQUESTER].pending) {
        return;
    }
    w = qhca_req_find(qp, req->una);
    if (!w) {
        return;
    }
    /*
     * Due more than a whole period ago: this QEMU did not run when the
     * timer was due (a host with no CPU to spare), and the port did not
     * listen meanwhile.  The ACK may be waiting at it: the main loop
     * reads the netdev one frame an iteration and then runs the timers
     * that expired, so the first frame of a backlog comes before this and
     * the rest after.  A real HCA's receiver never stops; this one is
     * given one more period to take what came before it calls the
     * timeout, once: the next expiry counts, late or not, so that a dead
     * peer still ends in RETRY_EXC_ERR (after at most twice the time).
     */
    if (!req->timer_late && now - req->deadline > qhca_req_timeout_ns(qp)) {
        trace_qhca_req_timer_late(qp->qpn, req->una, now - req->deadline);
        req->timer_late = true;
        qhca_timer_arm(s, qp, QHCA_TIMER_RETRY, qhca_req_timeout_ns(qp));
        return;
    }
    req->timer_late = false;
    if (!req->retry_left) {
        qhca_req_fail(s, qp, w, QHCA_WC_RETRY_EXC_ERR,
                      "transport retries exhausted");
        req->halted = true;
        qhca_req_complete(s, qp);
        return;
    }
    req->retry_left--;
    qhca_count(s, QHCA_CNT_RETRIES, 1);
    trace_qhca_req_retry(qp->qpn, req->una, req->retry_left);
    qhca_req_rewind(qp, req->una);
    qhca_timer_arm(s, qp, QHCA_TIMER_RETRY, qhca_req_timeout_ns(qp));
    qhca_engine_schedule(s, qp);
}

/*
 * 1.6: the answer to a FLUSH or an ATOMIC_WRITE, an RDMA READ response
 * with no data (IBA 1.5, as rxe sends it): the operation is done at the
 * responder, and for a FLUSH, so is every write before it.
 */
static void qhca_req_read_ack(QhcaState *s, QhcaQp *qp, QhcaSwqe *w,
                              const QhcaPacket *pkt)
{
    if (pkt->opcode != QHCA_IB_READ_RESPONSE_ONLY || pkt->paylen) {
        qhca_req_acked(s, qp, pkt->psn);
        qhca_req_fail(s, qp, w, QHCA_WC_BAD_RESP_ERR,
                      "FLUSH or ATOMIC_WRITE answered with data");
        qp->req.halted = true;
        return;
    }
    trace_qhca_req_read_ack(qp->qpn, w->idx, pkt->psn);
    w->resp_pkts = 1;
    w->done = true;
    qp->req.rd_out--;
    qhca_req_acked(s, qp, qhca_psn_add(pkt->psn, 1));
}

static void qhca_req_read_response(QhcaState *s, QhcaQp *qp,
                                   const QhcaPacket *pkt)
{
    QhcaSwqe *w = qhca_req_find(qp, pkt->psn);
    uint32_t mtu = qhca_qp_mtu(qp);
    uint32_t k, off, len;
    uint8_t expect, status;
    QhcaOdpMiss miss;

    if (w && (w->info->flags & QHCA_WR_F_READ_ACK) && !w->done) {
        qhca_req_read_ack(s, qp, w, pkt);
        return;
    }
    if (!w || !(w->info->flags & QHCA_WR_F_READ) || w->done) {
        trace_qhca_pkt_drop(qp->qpn, pkt->psn, "no READ expects it");
        return;
    }
    k = qhca_psn_diff(pkt->psn, w->first_psn);
    if (k != w->resp_pkts) {
        /* A duplicate, or one after a lost one: the timer asks again. */
        trace_qhca_pkt_drop(qp->qpn, pkt->psn, "out of order response");
        return;
    }
    expect = qhca_wire_read_resp_opcode(k, w->npkts);
    off = k * mtu;
    len = MIN(mtu, w->length - MIN(off, w->length));
    if (pkt->opcode != expect || pkt->paylen != len) {
        qhca_req_acked(s, qp, pkt->psn);
        qhca_req_fail(s, qp, w, QHCA_WC_BAD_RESP_ERR,
                      "READ response of the wrong kind or length");
        qp->req.halted = true;
        return;
    }
    status = len ? qhca_sgl_copy(s, qp->pdn, w->sge, w->num_sge,
                                 QHCA_ACCESS_LOCAL_WRITE, off,
                                 (void *)pkt->payload, len, true, &miss)
                 : QHCA_WC_SUCCESS;
    if (status == QHCA_ODP_FAULT) {
        if (qhca_req_odp_wait(s, qp, w, &miss)) {
            /* Dropped: resume asks for it again. */
            trace_qhca_pkt_drop(qp->qpn, pkt->psn, "READ response faulted");
            qp->req.odp_rewind = true;
            return;
        }
        status = QHCA_WC_LOC_PROT_ERR;
    }
    if (status != QHCA_WC_SUCCESS) {
        qhca_req_acked(s, qp, pkt->psn);
        qhca_req_fail(s, qp, w, QHCA_WC_LOC_PROT_ERR,
                      "READ destination became invalid");
        qp->req.halted = true;
        return;
    }
    w->resp_pkts++;
    if (w->resp_pkts == w->npkts) {
        w->done = true;
        qp->req.rd_out--;
    }
    qhca_req_acked(s, qp, qhca_psn_add(pkt->psn, 1));
}

static void qhca_req_atomic_ack(QhcaState *s, QhcaQp *qp,
                                const QhcaPacket *pkt)
{
    QhcaSwqe *w = qhca_req_find(qp, pkt->psn);
    uint64_t orig = cpu_to_le64(pkt->orig);
    QhcaOdpMiss miss;
    uint8_t status;

    if (!w || !(w->info->flags & QHCA_WR_F_ATOMIC) || w->done) {
        trace_qhca_pkt_drop(qp->qpn, pkt->psn, "no atomic expects it");
        return;
    }
    status = qhca_sgl_copy(s, qp->pdn, w->sge, w->num_sge,
                           QHCA_ACCESS_LOCAL_WRITE, 0, &orig, sizeof(orig),
                           true, &miss);
    if (status == QHCA_ODP_FAULT) {
        if (qhca_req_odp_wait(s, qp, w, &miss)) {
            trace_qhca_pkt_drop(qp->qpn, pkt->psn, "atomic result faulted");
            qp->req.odp_rewind = true;
            return;
        }
        status = QHCA_WC_LOC_PROT_ERR;
    }
    if (status != QHCA_WC_SUCCESS) {
        qhca_req_acked(s, qp, pkt->psn);
        qhca_req_fail(s, qp, w, QHCA_WC_LOC_PROT_ERR,
                      "atomic result buffer became invalid");
        qp->req.halted = true;
        return;
    }
    w->resp_pkts = 1;
    w->done = true;
    qp->req.rd_out--;
    qhca_req_acked(s, qp, qhca_psn_add(pkt->psn, 1));
}

static void qhca_req_nak(QhcaState *s, QhcaQp *qp, const QhcaPacket *pkt)
{
    QhcaRequester *req = &qp->req;
    uint8_t value = pkt->syndrome & QHCA_AETH_VALUE;
    QhcaSwqe *w;
    uint8_t status;

    /* A NAK acknowledges everything before the PSN it names. */
    qhca_req_acked(s, qp, pkt->psn);
    w = qhca_req_find(qp, pkt->psn);
    if (!w || w->done) {
        return;
    }

    if ((pkt->syndrome & QHCA_AETH_KIND) == QHCA_AETH_RNR_NAK) {
        qhca_count(s, QHCA_CNT_RNR_NAKS_RCVD, 1);
        if (!req->rnr_left) {
            qhca_req_fail(s, qp, w, QHCA_WC_RNR_RETRY_EXC_ERR,
                          "RNR retries exhausted");
            req->halted = true;
            return;
        }
        /* QHCA_RNR_RETRY_MAX (7) retries for ever. */
        if (qp->rnr_retry != QHCA_RNR_RETRY_MAX) {
            req->rnr_left--;
        }
        trace_qhca_req_rnr(qp->qpn, pkt->psn, value, req->rnr_left);
        qhca_req_rewind(qp, pkt->psn);
        qhca_timer_arm(s, qp, QHCA_TIMER_RNR,
                       qhca_rnr_timer_us[value] * 1000ll);
        return;
    }

    switch (value) {
    case QHCA_NAK_PSN_SEQ_ERR:
        /*
         * The responder lost a packet: go back to the PSN it names.  As
         * in IBA (and rxe) this spends the same budget as a timeout;
         * the acknowledgement above restored it if there was progress.
         */
        if (!req->retry_left) {
            qhca_req_fail(s, qp, w, QHCA_WC_RETRY_EXC_ERR,
                          "transport retries exhausted (sequence NAKs)");
            req->halted = true;
            return;
        }
        req->retry_left--;
        qhca_count(s, QHCA_CNT_RETRIES, 1);
        trace_qhca_req_seq_nak(qp->qpn, pkt->psn, req->retry_left);
        qhca_req_rewind(qp, pkt->psn);
        return;
    case QHCA_NAK_REM_ACCESS:
        status = QHCA_WC_REM_ACCESS_ERR;
        break;
    case QHCA_NAK_REM_OP:
        status = QHCA_WC_REM_OP_ERR;
        break;
    default:
        status = QHCA_WC_REM_INV_REQ_ERR;
        break;
    }
    qhca_req_fail(s, qp, w, status, "NAK from the responder");
    req->halted = true;
}

/* A response or acknowledgement for @qp's requests. */
void qhca_req_receive(QhcaState *s, QhcaQp *qp, const QhcaPacket *pkt)
{
    QhcaRequester *req = &qp->req;

    if (qp->state != QHCA_QPS_RTS && qp->state != QHCA_QPS_SQD &&
        qp->state != QHCA_QPS_SQE) {
        trace_qhca_pkt_drop(qp->qpn, pkt->psn, "requester not sending");
        return;
    }
    /* Only PSNs of requests in flight are answered. */
    if (qhca_psn_diff(pkt->psn, req->una) < 0 ||
        qhca_psn_diff(pkt->psn, req->high_psn) >= 0) {
        trace_qhca_pkt_drop(qp->qpn, pkt->psn, "stale response");
        return;
    }

    if (qhca_pkt_flags(pkt->opcode) & QHCA_PKT_READ) {
        qhca_req_read_response(s, qp, pkt);
    } else if (pkt->opcode == QHCA_IB_ATOMIC_ACKNOWLEDGE) {
        qhca_req_atomic_ack(s, qp, pkt);
    } else if ((pkt->syndrome & QHCA_AETH_KIND) == QHCA_AETH_ACK) {
        qhca_req_acked(s, qp, qhca_psn_add(pkt->psn, 1));
    } else {
        qhca_req_nak(s, qp, pkt);
    }
    qhca_req_complete(s, qp);
    qhca_engine_schedule(s, qp);
}
