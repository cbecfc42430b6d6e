/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qhca UD and UC transports (interface 1.2).
 *
 * Both reuse the RC requester: WQEs are taken, checked and segmented the
 * same way, but nothing is acknowledged, so a WQE completes as soon as
 * its last packet is on the wire.  This file holds what differs:
 *
 *  - the checks a UD or UC send WQE gets on top of RC's (fewer opcodes;
 *    UD's address vector), and the UD headers of a packet (LRH from the
 *    address vector, DETH with Q_Key and source QP, optional GRH);
 *  - the two receivers.  Neither ever answers: what cannot be received
 *    (no receive WQE, a bad Q_Key, a PSN gap, a bad rkey) is dropped
 *    silently and counted, as a real HCA does.  Only a receive WQE that
 *    is malformed or too small completes in error, and the QP goes to ERR
 *    with it.
 */
#include "qemu/osdep.h"
#include "qhca.h"
#include "trace.h"

/* IB GRH: IP version 6, next header 0x1B (IBA vol. 1, 8.3). */
#define QHCA_GRH_IPVER          6
#define QHCA_GRH_NXTHDR         0x1b
/* Bytes after the GRH besides the payload: BTH, DETH, ICRC. */
#define QHCA_BTH_BYTES          12
#define QHCA_DETH_BYTES         8
#define QHCA_IMMDT_BYTES        4
#define QHCA_ICRC_BYTES         4
#define QHCA_FLOW_LABEL_MASK    0xfffff
#define QHCA_QKEY_USE_QP        0x80000000u

uint8_t qhca_qp_transport(const QhcaQp *qp)
{
    switch (qp->type) {
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

/* GID 0 of the port: the link-local prefix and the port GUID. */
static void qhca_port_gid(QhcaState *s, uint8_t gid[16])
{
    stq_be_p(gid, 0xfe80000000000000ull);
    stq_be_p(gid + 8, s->params.port_guid);
}

static uint8_t qhca_ud_check_av(QhcaState *s, QhcaQp *qp, QhcaSwqe *w,
                                const struct qhca_sq_wqe_ud *u,
                                const char **why)
{
    QhcaAv *av = &w->av;
    uint32_t qkey = le32_to_cpu(u->qkey);

    if (u->opcode != QHCA_WR_SEND && u->opcode != QHCA_WR_SEND_WITH_IMM) {
        *why = "UD allows only SEND and SEND_WITH_IMM";
        return QHCA_WC_LOC_QP_OP_ERR;
    }
    if (u->rsvd0 || u->rsvd1 || u->rsvd2[0] || u->rsvd2[1] ||
        (u->av_flags & QHCA_AV_F_RSVD)) {
        *why = "UD WQE with reserved fields set";
        return QHCA_WC_LOC_QP_OP_ERR;
    }
    if (le32_to_cpu(u->dest_qpn) & ~QHCA_UD_QPN_MASK || u->sl > 15) {
        *why = "UD destination QPN or SL out of range";
        return QHCA_WC_LOC_QP_OP_ERR;
    }
    if ((u->av_flags & QHCA_AV_F_GRH) &&
        (le32_to_cpu(u->flow_label) & ~QHCA_FLOW_LABEL_MASK ||
         u->sgid_index != 0)) {
        /* The port has one GID. */
        *why = "UD GRH with a bad flow label or SGID index";
        return QHCA_WC_LOC_QP_OP_ERR;
    }
    av->dest_qpn = le32_to_cpu(u->dest_qpn);
    /* The high bit asks for the QP's own Q_Key (IBA vol. 1, 10.2.4). */
    av->qkey = (qkey & QHCA_QKEY_USE_QP) ? qp->qkey : qkey;
    av->dlid = le16_to_cpu(u->dlid);
    av->sl = u->sl;
    av->flags = u->av_flags;
    memcpy(av->dgid, u->dgid, sizeof(av->dgid));
    av->flow_label = le32_to_cpu(u->flow_label);
    av->hop_limit = u->hop_limit;
    av->tclass = u->traffic_class;
    av->sgid_index = u->sgid_index;
    trace_qhca_ud_wqe(qp->qpn, w->idx, av->dest_qpn, av->qkey, av->dlid,
                      av->sl, av->flags);
    return QHCA_WC_SUCCESS;
}

/*
 * The checks of a send WQE that depend on the QP type, before the RC
 * checks of its SGEs.  Returns its status.
 */
uint8_t qhca_xport_check_wqe(QhcaState *s, QhcaQp *qp, QhcaSwqe *w,
                             const struct qhca_sq_wqe *h, const char **why)
{
    struct qhca_sq_wqe_ud u;

    switch (qp->type) {
    case QHCA_QPT_UC:
        if (h->opcode > QHCA_WR_SEND_WITH_IMM) {
            *why = "UC has no RDMA READ or atomics";
            return QHCA_WC_LOC_QP_OP_ERR;
        }
        return QHCA_WC_SUCCESS;
    case QHCA_QPT_UD:
        QEMU_BUILD_BUG_ON(sizeof(u) != sizeof(*h));
        memcpy(&u, h, sizeof(u));
        return qhca_ud_check_av(s, qp, w, &u, why);
    default:
        return QHCA_WC_SUCCESS;
    }
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
        qhca_port_gid(s, pkt->sgid);
        memcpy(pkt->dgid, av->dgid, sizeof(pkt->dgid));
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

    stl_be_p(grh, QHCA_GRH_IPVER << 28 | (uint32_t)pkt->tclass << 20 |
             (pkt->flow_label & QHCA_FLOW_LABEL_MASK));
    stw_be_p(grh + 4, paylen);
    grh[6] = QHCA_GRH_NXTHDR;
    grh[7] = pkt->hop_limit;
    memcpy(grh + 8, pkt->sgid, 16);
    memcpy(grh + 24, pkt->dgid, 16);
}

static void qhca_ud_receive_one(QhcaState *s, QhcaQp *qp,
                                const QhcaPacket *pkt, bool mcast)
{
    QhcaRwqe *r = &qp->resp.rwqe;
    uint8_t grh[QHCA_UD_GRH_SIZE];
    uint8_t gid[16];
    uint64_t room = 0;
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
    qhca_port_gid(s, gid);
    /* A multicast DGID was matched to the QP's group already. */
    if (pkt->has_grh && !mcast && memcmp(pkt->dgid, gid, sizeof(gid))) {
        qhca_xport_drop(s, qp, pkt, QHCA_CNT_RX_DROPS, "DGID is not ours");
        return;
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
        qhca_ud_build_grh(pkt, grh);
        status = qhca_sgl_copy(s, qp->pdn, r->sge, r->num_sge,
                               QHCA_ACCESS_LOCAL_WRITE, 0, grh, sizeof(grh),
                               true);
    }
    if (status == QHCA_WC_SUCCESS && pkt->paylen) {
        status = qhca_sgl_copy(s, qp->pdn, r->sge, r->num_sge,
                               QHCA_ACCESS_LOCAL_WRITE, QHCA_UD_GRH_SIZE,
                               (void *)pkt->payload, pkt->paylen, true);
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

static void qhca_uc_send(QhcaState *s, QhcaQp *qp, const QhcaPacket *pkt)
{
    QhcaResponder *resp = &qp->resp;
    uint16_t f = qhca_pkt_flags(pkt->opcode);
    uint8_t status;

    if (f & QHCA_PKT_FIRST) {
        if (!resp->have_rwqe) {
            if (!qhca_resp_rwqe_ready(s, qp)) {
                qhca_uc_drop_msg(s, qp, pkt, "no receive WQE");
                return;
            }
            status = qhca_resp_take_rwqe(s, qp);
            if (status != QHCA_WC_SUCCESS) {
                qhca_xport_recv_error(s, qp, pkt, status,
                                      "malformed receive WQE");
                return;
            }
        }
        resp->rcv_off = 0;
        resp->in_send = !(f & QHCA_PKT_LAST);
    }
    status = qhca_sgl_copy(s, qp->pdn, resp->rwqe.sge, resp->rwqe.num_sge,
                           QHCA_ACCESS_LOCAL_WRITE, resp->rcv_off,
                           (void *)pkt->payload, pkt->paylen, true);
    if (status != QHCA_WC_SUCCESS) {
        qhca_xport_recv_error(s, qp, pkt, status,
                              status == QHCA_WC_LOC_LEN_ERR ?
                              "SEND longer than the receive WQE" :
                              "receive SGE not covered by its lkey");
        return;
    }
    resp->rcv_off += pkt->paylen;
    resp->epsn = qhca_psn_add(pkt->psn, 1);
    if (f & QHCA_PKT_LAST) {
        resp->in_send = false;
        qhca_resp_complete(s, qp, QHCA_WC_RECV, QHCA_WC_SUCCESS,
                           resp->rcv_off, pkt);
    }
}

static void qhca_uc_write(QhcaState *s, QhcaQp *qp, const QhcaPacket *pkt)
{
    QhcaResponder *resp = &qp->resp;
    uint16_t f = qhca_pkt_flags(pkt->opcode);
    uint8_t status;
    QhcaMr *mr;

    if (f & QHCA_PKT_FIRST) {
        if (pkt->dma_len > QHCA_MAX_MSG_SIZE ||
            !(qp->access & QHCA_ACCESS_REMOTE_WRITE) ||
            (pkt->dma_len &&
             !qhca_mr_lookup(s, pkt->rkey, qp->pdn, pkt->va, pkt->dma_len,
                             QHCA_ACCESS_REMOTE_WRITE))) {
            qhca_uc_drop_msg(s, qp, pkt,
                             "RDMA WRITE not allowed by the QP or rkey");
            return;
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
        qhca_uc_drop_msg(s, qp, pkt,
                         "RDMA WRITE payload does not match its length");
        return;
    }
    if (pkt->paylen) {
        uint64_t va = resp->wr_va + resp->wr_off;

        mr = qhca_mr_lookup(s, resp->wr_rkey, qp->pdn, va, pkt->paylen,
                            QHCA_ACCESS_REMOTE_WRITE);
        if (!mr || !qhca_mr_copy(s, mr, va, (void *)pkt->payload,
                                 pkt->paylen, true)) {
            qhca_uc_drop_msg(s, qp, pkt, "RDMA WRITE target became invalid");
            return;
        }
    }
    resp->wr_off += pkt->paylen;
    resp->epsn = qhca_psn_add(pkt->psn, 1);
    if (!(f & QHCA_PKT_LAST)) {
        return;
    }
    resp->in_write = false;
    if (!(f & QHCA_PKT_IMM)) {
        return;
    }
    /* The data is in place; only the immediate needs a receive WQE. */
    if (!resp->have_rwqe) {
        if (!qhca_resp_rwqe_ready(s, qp)) {
            qhca_uc_drop_msg(s, qp, pkt, "no receive WQE for the immediate");
            return;
        }
        status = qhca_resp_take_rwqe(s, qp);
        if (status != QHCA_WC_SUCCESS) {
            qhca_xport_recv_error(s, qp, pkt, status, "malformed receive WQE");
            return;
        }
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

/*
 * MODIFY_QP: the attributes UD and UC QPs require and allow in each
 * transition, as ib_modify_qp_is_ok() has them (P_Key index and port are
 * the driver's).  @t holds RC's on entry.
 */
void qhca_xport_transition(uint8_t type, uint8_t cur, uint8_t next,
                           uint32_t *required, uint32_t *optional)
{
    uint32_t opt = type == QHCA_QPT_UD ? QHCA_QP_ATTR_QKEY
                                       : QHCA_QP_ATTR_ACCESS;

    if (type == QHCA_QPT_XRC_INI && cur == QHCA_QPS_INIT &&
        next == QHCA_QPS_RTR) {
        /* No responder: its limits are optional (ib_modify_qp_is_ok). */
        *required &= ~(QHCA_QP_ATTR_MAX_DEST_RD_ATOMIC |
                       QHCA_QP_ATTR_MIN_RNR_TIMER);
        *optional |= QHCA_QP_ATTR_MAX_DEST_RD_ATOMIC |
                     QHCA_QP_ATTR_MIN_RNR_TIMER;
        return;
    }
    if (type == QHCA_QPT_XRC_TGT && cur == QHCA_QPS_RTR &&
        next == QHCA_QPS_RTS) {
        /* No requester: only sq_psn and timeout are required. */
        *optional |= *required & ~(QHCA_QP_ATTR_SQ_PSN |
                                   QHCA_QP_ATTR_TIMEOUT);
        *required &= QHCA_QP_ATTR_SQ_PSN | QHCA_QP_ATTR_TIMEOUT;
        return;
    }
    if (type == QHCA_QPT_RC || type == QHCA_QPT_XRC_INI ||
        type == QHCA_QPT_XRC_TGT || next == QHCA_QPS_RESET ||
        next == QHCA_QPS_ERR || next == QHCA_QPS_SQD) {
        return;
    }
    *required = 0;
    *optional = opt;
    if (cur == QHCA_QPS_RESET && type == QHCA_QPT_UD) {
        *required = QHCA_QP_ATTR_QKEY;
        *optional = 0;
    } else if (cur == QHCA_QPS_INIT && next == QHCA_QPS_RTR &&
               type == QHCA_QPT_UC) {
        *required = QHCA_QP_ATTR_PATH | QHCA_QP_ATTR_DEST_QPN |
                    QHCA_QP_ATTR_RQ_PSN;
    } else if (cur == QHCA_QPS_RTR && next == QHCA_QPS_RTS) {
        *required = QHCA_QP_ATTR_SQ_PSN;
    }
}
