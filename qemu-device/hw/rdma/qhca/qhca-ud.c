/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qhca UD and UC transports (interface 1.2).
 *
 * Both reuse the RC requester: WQEs are taken, checked (qhca-wqe.c, UD's
 * address vector included) and segmented the same way, but nothing is
 * acknowledged, so a WQE completes as soon as its last packet is on the
 * wire.  This file holds the datagram handling that differs:
 *
 *  - the UD headers of a packet (LRH from the address vector, DETH with
 *    Q_Key and source QP, optional GRH);
 *  - the two receivers.  Neither ever answers: what cannot be received
 *    (no receive WQE, a bad Q_Key, a PSN gap, a bad rkey) is dropped
 *    silently and counted, as a real HCA does.  Only a receive WQE that
 *    is malformed or too small completes in error, and the QP goes to ERR
 *    with it.  Placing a SEND's or an RDMA WRITE's payload is the RC
 *    responder's code (qhca_resp_place_send(), qhca_resp_place_write()).
 *
 * 1.5, Ethernet port: every UD packet is a RoCEv2 frame, so its GRH is its
 * IP header.  A send takes its source IP from the GID table (sgid_index)
 * and its destination MAC from the WQE; qhca_wire_send() adds the rest of
 * the frame.  A receive is for the port when its destination IP is in the
 * GID table; its buffer gets the IP header as the GRH slot holds it
 * (pkt->grh_slot, made by the decoder), its CQE the network header type
 * and the source MAC.  The GSI QP, QP 1, is a UD QP here (qhca-qp.c).
 */
#include "qemu/osdep.h"
#include "qhca.h"
#include "qhca-eth.h"
#include "trace.h"

/* IB GRH: IP version 6, next header 0x1B (IBA vol. 1, 8.3). */
#define QHCA_GRH_NXTHDR         0x1b
/* Bytes after the GRH besides the payload: BTH, DETH, ICRC. */
#define QHCA_BTH_BYTES          12
#define QHCA_DETH_BYTES         8
#define QHCA_IMMDT_BYTES        4
#define QHCA_ICRC_BYTES         4

/* GID 0 of the port: the link-local prefix and the port GUID. */
static void qhca_port_gid(QhcaState *s, uint8_t gid[16])
{
    stq_be_p(gid, 0xfe80000000000000ull);
    stq_be_p(gid + 8, s->params.port_guid);
}

/*
 * The RoCEv2 source of a UD packet: its GID entry and the WQE's next hop.
 * The WQE was checked against the GID table when it was taken, in the
 * same hold of the device lock as this send (a UD WQE is sent as soon as
 * it is taken), so the entry is still there; were it not, the frame would
 * go from the unspecified address rather than from a stale one.
 */
static void qhca_ud_fill_roce(QhcaState *s, const QhcaAv *av, QhcaPacket *pkt)
{
    const uint8_t *sgid = qhca_gid_get(s, av->sgid_index);

    if (sgid) {
        memcpy(pkt->sgid, sgid, sizeof(pkt->sgid));
    } else {
        memset(pkt->sgid, 0, sizeof(pkt->sgid));
    }
    memcpy(pkt->dmac, av->dmac, sizeof(pkt->dmac));
}

/* The headers a UD or UC packet has beyond RC's, from the QP and WQE. */
void qhca_xport_fill_packet(QhcaState *s, QhcaQp *qp, const QhcaSwqe *w,
                            QhcaPacket *pkt)
{
    const QhcaAv *av = &w->av;

    pkt->transport = qhca_qp_transport(qp);
    if (qp->type == QHCA_QPT_XRC_INI) {
        /* Every request packet names the target's SRQ (XRCETH). */
        pkt->xrc_srqn = w->xrc_srqn;
        return;
    }
    if (qp->type == QHCA_QPT_RC) {
        return;
    }
    pkt->ack_req = false;
    if (qp->type != QHCA_QPT_UD) {
        return;
    }
    pkt->dlid = av->dlid;
    pkt->sl = av->sl;
    pkt->dest_qpn = av->dest_qpn;
    pkt->qkey = av->qkey;
    if (av->flags & QHCA_AV_F_GRH) {
        pkt->has_grh = true;
        pkt->tclass = av->tclass;
        pkt->flow_label = av->flow_label;
        pkt->hop_limit = av->hop_limit;
        memcpy(pkt->dgid, av->dgid, sizeof(pkt->dgid));
        if (qhca_port_is_eth(s)) {
            qhca_ud_fill_roce(s, av, pkt);
        } else {
            qhca_port_gid(s, pkt->sgid);
        }
    }
}

/* The UD fields of a receive CQE. */
void qhca_ud_fill_cqe(QhcaQp *qp, const QhcaPacket *pkt, struct qhca_cqe *cqe)
{
    cqe->src_qp = cpu_to_le32(pkt->src_qpn);
    cqe->sl = pkt->sl;
    cqe->pkey_index = 0;        /* the P_Key table has one entry */
    cqe->dlid_path_bits = 0;    /* LMC is 0 */
    if (pkt->has_grh) {
        cqe->flags |= QHCA_CQE_F_GRH;
    }
    if (qhca_port_is_eth(qp->s)) {
        cqe->network_hdr_type = pkt->net_type;
        memcpy(cqe->smac, pkt->smac, sizeof(cqe->smac));
    }
}

static void qhca_xport_drop(QhcaState *s, QhcaQp *qp, const QhcaPacket *pkt,
                            enum qhca_counter cnt, const char *why)
{
    trace_qhca_pkt_drop(qp->qpn, pkt->psn, why);
    qhca_count(s, cnt, 1);
}

/* The receive WQE taken failed: it completes with @status, QP to ERR. */
static void qhca_xport_recv_error(QhcaState *s, QhcaQp *qp,
                                  const QhcaPacket *pkt, uint8_t status,
                                  const char *why)
{
    trace_qhca_err_resp(qp->qpn, pkt->psn, status, why);
    if (status == QHCA_WC_FATAL_ERR) {
        return;                 /* the RQ ring is gone: the device stopped */
    }
    qp->resp.in_send = false;
    qp->resp.drop_msg = false;
    qhca_resp_complete(s, qp, QHCA_WC_RECV, status, 0, pkt);
    qhca_qp_error(s, qp, 0);
}

/* The 40-byte IB GRH as the receive buffer gets it. */
static void qhca_ud_build_grh(const QhcaPacket *pkt, uint8_t grh[])
{
    bool imm = qhca_pkt_flags(pkt->opcode) & QHCA_PKT_IMM;
    uint32_t paylen = QHCA_BTH_BYTES + QHCA_DETH_BYTES +
                      (imm ? QHCA_IMMDT_BYTES : 0) +
                      ROUND_UP(pkt->paylen, 4) + QHCA_ICRC_BYTES;

    qhca_pkt_ipv6_header(pkt, grh, paylen, QHCA_GRH_NXTHDR);
}

static void qhca_ud_receive_one(QhcaState *s, QhcaQp *qp,
                                const QhcaPacket *pkt, bool mcast)
{
    QhcaRwqe *r = &qp->resp.rwqe;
    uint8_t grh[QHCA_UD_GRH_SIZE];
    uint8_t gid[16];
    uint64_t room = 0;
    QhcaOdpMiss miss;
    uint8_t status;
    unsigned i;

    QEMU_BUILD_BUG_ON(QHCA_UD_GRH_SIZE != 40);
    if (qp->state < QHCA_QPS_RTR || qp->state > QHCA_QPS_SQE) {
        qhca_xport_drop(s, qp, pkt, QHCA_CNT_RX_DROPS, "UD QP not receiving");
        return;
    }
    if (pkt->opcode != QHCA_IB_SEND_ONLY &&
        pkt->opcode != QHCA_IB_SEND_ONLY_IMM) {
        qhca_xport_drop(s, qp, pkt, QHCA_CNT_RX_DROPS, "not a UD opcode");
        return;
    }
    if (pkt->paylen > qhca_qp_mtu(qp)) {
        qhca_xport_drop(s, qp, pkt, QHCA_CNT_RX_DROPS, "longer than the MTU");
        return;
    }
    /* A multicast DGID was matched to the QP's group already. */
    if (qhca_port_is_eth(s)) {
        if (!pkt->has_grh || (!mcast && qhca_gid_find(s, pkt->dgid) < 0)) {
            qhca_xport_drop(s, qp, pkt, QHCA_CNT_RX_DROPS,
                            "destination IP is not the port's");
            return;
        }
    } else {
        qhca_port_gid(s, gid);
        if (pkt->has_grh && !mcast && memcmp(pkt->dgid, gid, sizeof(gid))) {
            qhca_xport_drop(s, qp, pkt, QHCA_CNT_RX_DROPS, "DGID is not ours");
            return;
        }
    }
    if (pkt->qkey != qp->qkey) {
        qhca_xport_drop(s, qp, pkt, QHCA_CNT_QKEY_VIOLATIONS, "Q_Key mismatch");
        return;
    }
    if (!qhca_resp_rwqe_ready(s, qp)) {
        qhca_xport_drop(s, qp, pkt, QHCA_CNT_RX_DROPS, "no receive WQE");
        return;
    }

    status = qhca_resp_take_rwqe(s, qp);
    if (status != QHCA_WC_SUCCESS) {
        qhca_xport_recv_error(s, qp, pkt, status, "malformed receive WQE");
        return;
    }
    /* Every UD receive buffer starts with room for the GRH. */
    for (i = 0; i < r->num_sge; i++) {
        room += r->sge[i].length;
    }
    if (room < QHCA_UD_GRH_SIZE + (uint64_t)pkt->paylen) {
        qhca_xport_recv_error(s, qp, pkt, QHCA_WC_LOC_LEN_ERR,
                              "UD receive buffer too small");
        return;
    }
    status = QHCA_WC_SUCCESS;
    if (pkt->has_grh) {
        if (qhca_port_is_eth(s)) {
            /* The IP header, as the decoder laid it out for the slot. */
            QEMU_BUILD_BUG_ON(sizeof(pkt->grh_slot) != sizeof(grh));
            memcpy(grh, pkt->grh_slot, sizeof(grh));
        } else {
            qhca_ud_build_grh(pkt, grh);
        }
        status = qhca_sgl_copy(s, qp->pdn, r->sge, r->num_sge,
                               QHCA_ACCESS_LOCAL_WRITE, 0, grh, sizeof(grh),
                               true, &miss);
    }
    if (status == QHCA_WC_SUCCESS && pkt->paylen) {
        status = qhca_sgl_copy(s, qp->pdn, r->sge, r->num_sge,
                               QHCA_ACCESS_LOCAL_WRITE, QHCA_UD_GRH_SIZE,
                               (void *)pkt->payload, pkt->paylen, true, &miss);
    }
    if (status == QHCA_ODP_FAULT) {
        /* 1.8: dropped; the receive WQE is kept for the next message. */
        if (qhca_odp_fault(s, qp, QHCA_PAGE_FAULT_RESPONDER, &miss, r->idx,
                           pkt->psn)) {
            qhca_xport_drop(s, qp, pkt, QHCA_CNT_RX_DROPS,
                            "receive buffer page absent");
            return;
        }
        status = QHCA_WC_LOC_PROT_ERR;
    }
    if (status != QHCA_WC_SUCCESS) {
        qhca_xport_recv_error(s, qp, pkt, status,
                              "receive SGE not covered by its lkey");
        return;
    }
    qhca_resp_complete(s, qp, QHCA_WC_RECV, QHCA_WC_SUCCESS,
                       QHCA_UD_GRH_SIZE + pkt->paylen, pkt);
}

void qhca_ud_receive(QhcaState *s, QhcaQp *qp, const QhcaPacket *pkt)
{
    qhca_ud_receive_one(s, qp, pkt, false);
}

/* A copy of a multicast packet for @qp, a member of the DGID's group. */
void qhca_ud_receive_mcast(QhcaState *s, QhcaQp *qp, const QhcaPacket *pkt)
{
    qhca_ud_receive_one(s, qp, pkt, true);
}

/*
 * UC: stop receiving the current message; everything up to the next
 * FIRST or ONLY packet is dropped.  A receive WQE already taken is kept
 * for the next message, as nothing was completed in it.
 */
static void qhca_uc_drop_msg(QhcaState *s, QhcaQp *qp, const QhcaPacket *pkt,
                             const char *why)
{
    QhcaResponder *resp = &qp->resp;

    if (!resp->drop_msg) {
        qhca_count(s, QHCA_CNT_RX_DROPS, 1);
    }
    trace_qhca_pkt_drop(qp->qpn, pkt->psn, why);
    resp->in_send = false;
    resp->in_write = false;
    resp->drop_msg = !(qhca_pkt_flags(pkt->opcode) & QHCA_PKT_LAST);
    resp->epsn = qhca_psn_add(pkt->psn, 1);
}

/*
 * UC: the receive WQE of a message, taken now unless a dropped message
 * left one.  False if there is none (@pkt's message is dropped, for
 * @none) or it was malformed (it completed in error).
 */
static bool qhca_uc_rwqe(QhcaState *s, QhcaQp *qp, const QhcaPacket *pkt,
                         const char *none)
{
    uint8_t status;

    if (qp->resp.have_rwqe) {
        return true;
    }
    if (!qhca_resp_rwqe_ready(s, qp)) {
        qhca_uc_drop_msg(s, qp, pkt, none);
        return false;
    }
    status = qhca_resp_take_rwqe(s, qp);
    if (status != QHCA_WC_SUCCESS) {
        qhca_xport_recv_error(s, qp, pkt, status, "malformed receive WQE");
        return false;
    }
    return true;
}

static void qhca_uc_send(QhcaState *s, QhcaQp *qp, const QhcaPacket *pkt)
{
    QhcaResponder *resp = &qp->resp;
    uint16_t f = qhca_pkt_flags(pkt->opcode);
    QhcaOdpMiss miss;
    const char *why;
    uint8_t status;

    if ((f & QHCA_PKT_FIRST) && !qhca_uc_rwqe(s, qp, pkt, "no receive WQE")) {
        return;
    }
    status = qhca_resp_place_send(s, qp, pkt, &why, &miss);
    if (status == QHCA_ODP_FAULT) {
        /* 1.8: the message is dropped, its receive WQE kept. */
        if (qhca_odp_fault(s, qp, QHCA_PAGE_FAULT_RESPONDER, &miss,
                           resp->rwqe.idx, pkt->psn)) {
            qhca_uc_drop_msg(s, qp, pkt, why);
            return;
        }
        status = QHCA_WC_LOC_PROT_ERR;
        why = "receive SGE not covered by its lkey";
    }
    if (status != QHCA_WC_SUCCESS) {
        qhca_xport_recv_error(s, qp, pkt, status, why);
        return;
    }
    resp->epsn = qhca_psn_add(pkt->psn, 1);
    if (f & QHCA_PKT_LAST) {
        qhca_resp_complete(s, qp, QHCA_WC_RECV, QHCA_WC_SUCCESS,
                           resp->rcv_off, pkt);
    }
}

static void qhca_uc_write(QhcaState *s, QhcaQp *qp, const QhcaPacket *pkt)
{
    QhcaResponder *resp = &qp->resp;
    uint16_t f = qhca_pkt_flags(pkt->opcode);
    QhcaOdpMiss miss;
    const char *why;
    uint8_t nak;

    why = qhca_resp_place_write(s, qp, pkt, &nak, &miss);
    if (why && nak == QHCA_ODP_FAULT) {
        /*
         * 1.8: recorded, and dropped as any message UC cannot place,
         * after RESUME FAILED too (tag 0: the next message is the retry).
         */
        qhca_odp_fault(s, qp, QHCA_PAGE_FAULT_RESPONDER, &miss, 0, pkt->psn);
    }
    if (why) {
        qhca_uc_drop_msg(s, qp, pkt, why);
        return;
    }
    resp->epsn = qhca_psn_add(pkt->psn, 1);
    if (!(f & QHCA_PKT_LAST) || !(f & QHCA_PKT_IMM)) {
        return;
    }
    /* The data is in place; only the immediate needs a receive WQE. */
    if (!qhca_uc_rwqe(s, qp, pkt, "no receive WQE for the immediate")) {
        return;
    }
    qhca_resp_complete(s, qp, QHCA_WC_RECV_RDMA_WITH_IMM, QHCA_WC_SUCCESS,
                       resp->wr_len, pkt);
}

void qhca_uc_receive(QhcaState *s, QhcaQp *qp, const QhcaPacket *pkt)
{
    QhcaResponder *resp = &qp->resp;
    uint16_t f = qhca_pkt_flags(pkt->opcode);
    uint32_t mtu = qhca_qp_mtu(qp);
    bool in_msg = resp->in_send || resp->in_write;

    if (qp->state < QHCA_QPS_RTR || qp->state > QHCA_QPS_SQE) {
        qhca_xport_drop(s, qp, pkt, QHCA_CNT_RX_DROPS, "UC QP not receiving");
        return;
    }
    if (!(f & QHCA_PKT_REQUEST) || !(f & (QHCA_PKT_SEND | QHCA_PKT_WRITE)) ||
        pkt->paylen > mtu) {
        qhca_uc_drop_msg(s, qp, pkt, "not a UC packet, or over the MTU");
        return;
    }

    /*
     * A FIRST or ONLY packet always starts a message, at any PSN: what
     * was being received is lost.  Anything else must be the next PSN of
     * the message in progress (IBA vol. 1, 9.7.5.1.1).
     */
    if (f & QHCA_PKT_FIRST) {
        if (in_msg || qhca_psn_diff(pkt->psn, resp->epsn)) {
            qhca_count(s, QHCA_CNT_RX_DROPS, in_msg);
            trace_qhca_uc_resync(qp->qpn, pkt->psn, resp->epsn, in_msg);
        }
        resp->in_send = false;
        resp->in_write = false;
        resp->drop_msg = false;
    } else if (resp->drop_msg) {
        trace_qhca_pkt_drop(qp->qpn, pkt->psn, "rest of a dropped message");
        return;
    } else if (!in_msg || qhca_psn_diff(pkt->psn, resp->epsn) ||
               !(f & (resp->in_send ? QHCA_PKT_SEND : QHCA_PKT_WRITE))) {
        qhca_uc_drop_msg(s, qp, pkt, "PSN gap or opcode out of sequence");
        return;
    }
    /* All but the last packet of a message carry a full MTU. */
    if (!(f & QHCA_PKT_LAST) ? pkt->paylen != mtu :
        !(f & QHCA_PKT_FIRST) && pkt->paylen == 0) {
        qhca_uc_drop_msg(s, qp, pkt, "payload length does not fit the opcode");
        return;
    }

    if (f & QHCA_PKT_SEND) {
        qhca_uc_send(s, qp, pkt);
    } else {
        qhca_uc_write(s, qp, pkt);
    }
}
