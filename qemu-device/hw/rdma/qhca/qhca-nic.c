/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qhca RAW_ETH QPs: the send and receive queues of the port's NIC
 * (interface 1.5).
 *
 * The driver's net_device sends and receives through RAW_ETH QPs.  A send
 * WQE is one whole frame, checked (qhca-wqe.c) and put on the netdev by
 * the requester (qhca-requester.c).  Receives are here: qhca-net.c hands
 * over every frame that is not RoCEv2 for the port, and it goes to the
 * RAW_ETH QP with the lowest number in RTR or RTS, into one receive WQE of
 * its RQ or SRQ.  A frame is never split: one that finds no WQE, or a WQE
 * too small for it, is dropped and counted (ETH_RX_NO_BUF), as a NIC out
 * of receive buffers drops; the WQE it did not fit stays for the next
 * frame.  A malformed WQE, or one whose SGEs their lkeys do not cover,
 * completes in error and the QP goes to ERR, as a UD receive does.
 */
#include "qemu/osdep.h"
#include "qemu/bitops.h"
#include "qhca.h"
#include "qhca-eth.h"
#include "trace.h"

/* The RAW_ETH QP that receives the NIC's frames, or NULL. */
static QhcaQp *qhca_nic_rx_qp(QhcaState *s)
{
    unsigned long i;

    /* In number order: the first found is the lowest. */
    QHCA_TABLE_FOR_EACH(&s->qps, i) {
        QhcaQp *qp = &s->qp[i];

        if (qp->type == QHCA_QPT_RAW_ETH &&
            (qp->state == QHCA_QPS_RTR || qp->state == QHCA_QPS_RTS)) {
            return qp;
        }
    }
    return NULL;
}

static void qhca_nic_drop(QhcaState *s, uint32_t qpn, size_t len,
                          const char *why)
{
    trace_qhca_nic_drop(qpn, len, why);
    qhca_count(s, QHCA_CNT_ETH_RX_NO_BUF, 1);
}

void qhca_nic_receive(QhcaState *s, const uint8_t *frame, size_t len)
{
    /* What the receive completion needs of a packet: a SEND, no more. */
    QhcaPacket pkt = { .opcode = QHCA_IB_SEND_ONLY };
    QhcaQp *qp = qhca_nic_rx_qp(s);
    QhcaRwqe *r;
    uint64_t room = 0;
    QhcaOdpMiss miss;
    uint8_t status;
    unsigned i;

    if (!qp) {
        qhca_nic_drop(s, 0, len, "no RAW_ETH QP receiving");
        return;
    }
    if (len < QHCA_ETH_FRAME_MIN || len > QHCA_ETH_FRAME_MAX) {
        qhca_nic_drop(s, qp->qpn, len, "frame length out of range");
        return;
    }
    r = &qp->resp.rwqe;
    if (!qp->resp.have_rwqe) {
        if (!qhca_resp_rwqe_ready(s, qp)) {
            qhca_nic_drop(s, qp->qpn, len, "no receive WQE");
            return;
        }
        status = qhca_resp_take_rwqe(s, qp);
        if (status == QHCA_WC_FATAL_ERR) {
            /* The ring is gone (the device stopped) or the SRQ failed. */
            if (qp->flags & QHCA_QP_F_SRQ) {
                qhca_qp_error(s, qp, QHCA_EVENT_QP_FATAL);
            }
            qhca_nic_drop(s, qp->qpn, len, "receive queue failed");
            return;
        }
        if (status != QHCA_WC_SUCCESS) {
            trace_qhca_nic_recv_error(qp->qpn, status, "malformed WQE");
            qhca_resp_complete(s, qp, QHCA_WC_RECV, status, 0, &pkt);
            qhca_qp_error(s, qp, 0);
            return;
        }
    }
    for (i = 0; i < r->num_sge; i++) {
        room += r->sge[i].length;
    }
    if (room < len) {
        /* Kept for the next frame, which may be smaller. */
        qhca_nic_drop(s, qp->qpn, len, "receive WQE too small");
        return;
    }
    status = qhca_sgl_copy(s, qp->pdn, r->sge, r->num_sge,
                           QHCA_ACCESS_LOCAL_WRITE, 0, (void *)frame, len,
                           true, &miss);
    if (status == QHCA_ODP_FAULT) {
        /* 1.8: as a UD receive: dropped, the receive WQE kept. */
        if (qhca_odp_fault(s, qp, QHCA_PAGE_FAULT_RESPONDER, &miss, r->idx,
                           0)) {
            qhca_nic_drop(s, qp->qpn, len, "receive buffer page absent");
            return;
        }
        status = QHCA_WC_LOC_PROT_ERR;
    }
    if (status != QHCA_WC_SUCCESS) {
        trace_qhca_nic_recv_error(qp->qpn, status,
                                  "receive SGE not covered by its lkey");
        qhca_resp_complete(s, qp, QHCA_WC_RECV, status, 0, &pkt);
        qhca_qp_error(s, qp, 0);
        return;
    }
    trace_qhca_nic_recv(qp->qpn, r->idx, len);
    qhca_resp_complete(s, qp, QHCA_WC_RECV, QHCA_WC_SUCCESS, len, &pkt);
}
