/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qhca wire: the loopback link between the device's requesters and
 * responders.
 *
 * A packet sent is queued; the engine delivers the queue, in order, after
 * each step.  Delivery is the switch's and the receiving HCA's job: a
 * packet whose DLID is not the port's LID, or whose destination QP does
 * not exist, is dropped, and the sender finds out by its retry timer, as
 * on a real fabric.  Packets come from a free list and go back to it: the
 * queue only ever holds what one step produced, so the list stays small.
 *
 * The wire itself loses packets (1.3) while the link is down and for the
 * next packets an INJECT_FAULT DROP counts (qhca_fault_wire_drop()): the
 * sender sent them, nobody receives them, WIRE_DROPS counts them.
 */
#include "qemu/osdep.h"
#include "qhca.h"
#include "qhca-eth.h"
#include "trace.h"

#define F_REQ   QHCA_PKT_REQUEST
#define F_FIRST QHCA_PKT_FIRST
#define F_LAST  QHCA_PKT_LAST
#define F_ONLY  (QHCA_PKT_FIRST | QHCA_PKT_LAST)
#define F_SEND  QHCA_PKT_SEND
#define F_WRITE QHCA_PKT_WRITE
#define F_READ  QHCA_PKT_READ
#define F_ATOM  QHCA_PKT_ATOMIC
#define F_ACK   QHCA_PKT_ACK
#define F_RETH  QHCA_PKT_RETH
#define F_AETH  QHCA_PKT_AETH
#define F_IMM   QHCA_PKT_IMM
#define F_PAY   QHCA_PKT_PAYLOAD
#define F_IETH  QHCA_PKT_IETH

const uint16_t qhca_ib_opcode_flags[QHCA_IB_OPCODE_NUM] = {
    [QHCA_IB_SEND_FIRST] = F_REQ | F_SEND | F_FIRST | F_PAY,
    [QHCA_IB_SEND_MIDDLE] = F_REQ | F_SEND | F_PAY,
    [QHCA_IB_SEND_LAST] = F_REQ | F_SEND | F_LAST | F_PAY,
    [QHCA_IB_SEND_LAST_IMM] = F_REQ | F_SEND | F_LAST | F_IMM | F_PAY,
    [QHCA_IB_SEND_ONLY] = F_REQ | F_SEND | F_ONLY | F_PAY,
    [QHCA_IB_SEND_ONLY_IMM] = F_REQ | F_SEND | F_ONLY | F_IMM | F_PAY,
    [QHCA_IB_WRITE_FIRST] = F_REQ | F_WRITE | F_FIRST | F_RETH | F_PAY,
    [QHCA_IB_WRITE_MIDDLE] = F_REQ | F_WRITE | F_PAY,
    [QHCA_IB_WRITE_LAST] = F_REQ | F_WRITE | F_LAST | F_PAY,
    [QHCA_IB_WRITE_LAST_IMM] = F_REQ | F_WRITE | F_LAST | F_IMM | F_PAY,
    [QHCA_IB_WRITE_ONLY] = F_REQ | F_WRITE | F_ONLY | F_RETH | F_PAY,
    [QHCA_IB_WRITE_ONLY_IMM] = F_REQ | F_WRITE | F_ONLY | F_RETH | F_IMM |
                               F_PAY,
    [QHCA_IB_READ_REQUEST] = F_REQ | F_READ | F_ONLY | F_RETH,
    [QHCA_IB_READ_RESPONSE_FIRST] = F_READ | F_FIRST | F_AETH | F_PAY,
    [QHCA_IB_READ_RESPONSE_MIDDLE] = F_READ | F_PAY,
    [QHCA_IB_READ_RESPONSE_LAST] = F_READ | F_LAST | F_AETH | F_PAY,
    [QHCA_IB_READ_RESPONSE_ONLY] = F_READ | F_ONLY | F_AETH | F_PAY,
    [QHCA_IB_ACKNOWLEDGE] = F_ACK | F_AETH,
    [QHCA_IB_ATOMIC_ACKNOWLEDGE] = F_ATOM | F_ACK | F_AETH,
    [QHCA_IB_COMPARE_SWAP] = F_REQ | F_ATOM | F_ONLY,
    [QHCA_IB_FETCH_ADD] = F_REQ | F_ATOM | F_ONLY,
    [QHCA_IB_SEND_LAST_INV] = F_REQ | F_SEND | F_LAST | F_PAY | F_IETH,
    [QHCA_IB_SEND_ONLY_INV] = F_REQ | F_SEND | F_ONLY | F_PAY | F_IETH,
};

const char *const qhca_ib_opcode_names[QHCA_IB_OPCODE_NUM] = {
    [QHCA_IB_SEND_FIRST] = "SEND_FIRST",
    [QHCA_IB_SEND_MIDDLE] = "SEND_MIDDLE",
    [QHCA_IB_SEND_LAST] = "SEND_LAST",
    [QHCA_IB_SEND_LAST_IMM] = "SEND_LAST_IMM",
    [QHCA_IB_SEND_ONLY] = "SEND_ONLY",
    [QHCA_IB_SEND_ONLY_IMM] = "SEND_ONLY_IMM",
    [QHCA_IB_WRITE_FIRST] = "WRITE_FIRST",
    [QHCA_IB_WRITE_MIDDLE] = "WRITE_MIDDLE",
    [QHCA_IB_WRITE_LAST] = "WRITE_LAST",
    [QHCA_IB_WRITE_LAST_IMM] = "WRITE_LAST_IMM",
    [QHCA_IB_WRITE_ONLY] = "WRITE_ONLY",
    [QHCA_IB_WRITE_ONLY_IMM] = "WRITE_ONLY_IMM",
    [QHCA_IB_READ_REQUEST] = "READ_REQUEST",
    [QHCA_IB_READ_RESPONSE_FIRST] = "READ_RESPONSE_FIRST",
    [QHCA_IB_READ_RESPONSE_MIDDLE] = "READ_RESPONSE_MIDDLE",
    [QHCA_IB_READ_RESPONSE_LAST] = "READ_RESPONSE_LAST",
    [QHCA_IB_READ_RESPONSE_ONLY] = "READ_RESPONSE_ONLY",
    [QHCA_IB_ACKNOWLEDGE] = "ACKNOWLEDGE",
    [QHCA_IB_ATOMIC_ACKNOWLEDGE] = "ATOMIC_ACKNOWLEDGE",
    [QHCA_IB_COMPARE_SWAP] = "COMPARE_SWAP",
    [QHCA_IB_FETCH_ADD] = "FETCH_ADD",
    [QHCA_IB_SEND_LAST_INV] = "SEND_LAST_INV",
    [QHCA_IB_SEND_ONLY_INV] = "SEND_ONLY_INV",
};

void qhca_wire_init(QhcaState *s)
{
    QSIMPLEQ_INIT(&s->engine.wire);
    QSIMPLEQ_INIT(&s->engine.free_pkts);
}

void qhca_wire_fini(QhcaState *s)
{
    QhcaEngine *e = &s->engine;
    QhcaPacket *pkt;

    QSIMPLEQ_CONCAT(&e->free_pkts, &e->wire);
    while ((pkt = QSIMPLEQ_FIRST(&e->free_pkts))) {
        QSIMPLEQ_REMOVE_HEAD(&e->free_pkts, next);
        g_free(pkt);
    }
}

/*
 * The BTH opcode of a request packet, the first and/or last of its
 * message, for a WQE whose opcode table row is @info: the row's IB packet
 * family, with immediate data or an invalidate key in the last packet.
 */
uint8_t qhca_wire_req_opcode(const struct qhca_wr_info *info, bool first,
                             bool last)
{
    bool imm = info->flags & QHCA_WR_F_IMM;
    uint8_t base;

    /* Both families list FIRST, MIDDLE, LAST, LAST_IMM, ONLY, ONLY_IMM. */
    QEMU_BUILD_BUG_ON(QHCA_IB_WRITE_ONLY_IMM - QHCA_IB_WRITE_FIRST !=
                      QHCA_IB_SEND_ONLY_IMM - QHCA_IB_SEND_FIRST);
    switch (info->ib_family) {
    case QHCA_IB_FAMILY_SEND:
        if ((info->flags & QHCA_WR_F_INV) && last) {
            return first ? QHCA_IB_SEND_ONLY_INV : QHCA_IB_SEND_LAST_INV;
        }
        base = QHCA_IB_SEND_FIRST;
        break;
    case QHCA_IB_FAMILY_WRITE:
        base = QHCA_IB_WRITE_FIRST;
        break;
    case QHCA_IB_FAMILY_READ:
        return QHCA_IB_READ_REQUEST;
    case QHCA_IB_FAMILY_CMP_SWAP:
        return QHCA_IB_COMPARE_SWAP;
    case QHCA_IB_FAMILY_FETCH_ADD:
        return QHCA_IB_FETCH_ADD;
    default:
        g_assert_not_reached();     /* memory operations send nothing */
    }
    /* The SEND opcodes, less SEND_FIRST, are the offsets in both. */
    if (first && last) {
        return base + (imm ? QHCA_IB_SEND_ONLY_IMM : QHCA_IB_SEND_ONLY) -
               QHCA_IB_SEND_FIRST;
    }
    if (last) {
        return base + (imm ? QHCA_IB_SEND_LAST_IMM : QHCA_IB_SEND_LAST) -
               QHCA_IB_SEND_FIRST;
    }
    return first ? base : base + QHCA_IB_SEND_MIDDLE - QHCA_IB_SEND_FIRST;
}

/* The opcode of response packet @k of the @npkts an RDMA READ takes. */
uint8_t qhca_wire_read_resp_opcode(uint32_t k, uint32_t npkts)
{
    if (npkts == 1) {
        return QHCA_IB_READ_RESPONSE_ONLY;
    }
    if (k == 0) {
        return QHCA_IB_READ_RESPONSE_FIRST;
    }
    return k + 1 == npkts ? QHCA_IB_READ_RESPONSE_LAST
                          : QHCA_IB_READ_RESPONSE_MIDDLE;
}

/* A fresh packet from @qp, with its LRH and BTH filled in. */
QhcaPacket *qhca_wire_packet(QhcaState *s, QhcaQp *qp, uint8_t opcode,
                             uint32_t dest_qpn, uint32_t psn)
{
    QhcaEngine *e = &s->engine;
    QhcaPacket *pkt = QSIMPLEQ_FIRST(&e->free_pkts);

    if (pkt) {
        QSIMPLEQ_REMOVE_HEAD(&e->free_pkts, next);
    } else {
        pkt = g_malloc(sizeof(*pkt) + QHCA_MAX_MTU);
    }
    memset(pkt, 0, sizeof(*pkt));
    pkt->slid = s->params.lid;
    pkt->dlid = qp->dlid;
    pkt->sl = qp->sl;
    pkt->opcode = opcode;
    /* Answers go by the QP's transport too (XRC's differs from RC's). */
    pkt->transport = qhca_qp_transport(qp);
    pkt->dest_qpn = dest_qpn;
    pkt->psn = psn & QHCA_PSN_MASK;
    pkt->src_qpn = qp->qpn;
    return pkt;
}

void qhca_wire_send(QhcaState *s, QhcaPacket *pkt)
{
    const char *why;

    assert(pkt->paylen <= QHCA_MAX_MTU);
    trace_qhca_pkt_send(pkt->src_qpn, pkt->dest_qpn,
                        qhca_ib_opcode_names[pkt->opcode], pkt->psn,
                        pkt->paylen, pkt->ack_req, pkt->syndrome);
    qhca_count(s, QHCA_CNT_TX_PACKETS, 1);
    qhca_count(s, QHCA_CNT_TX_BYTES, pkt->paylen);
    if (qhca_fault_wire_drop(s, &why)) {
        trace_qhca_wire_drop(pkt->src_qpn, pkt->dest_qpn, pkt->psn, why);
        qhca_count(s, QHCA_CNT_WIRE_DROPS, 1);
        QSIMPLEQ_INSERT_HEAD(&s->engine.free_pkts, pkt, next);
        return;
    }
    QSIMPLEQ_INSERT_TAIL(&s->engine.wire, pkt, next);
}

void qhca_wire_receive(QhcaState *s, const QhcaPacket *pkt)
{
    QhcaQp *qp;

    if (qhca_mcast_deliver(s, pkt)) {
        return;
    }
    if (pkt->dlid != s->params.lid) {
        trace_qhca_pkt_drop(pkt->dest_qpn, pkt->psn, "DLID is not ours");
        return;
    }
    if (!qhca_table_live(&s->qps, pkt->dest_qpn)) {
        trace_qhca_pkt_drop(pkt->dest_qpn, pkt->psn, "no such QP");
        return;
    }
    qp = &s->qp[pkt->dest_qpn];
    if (pkt->transport != qhca_qp_transport(qp)) {
        /* As an HCA does with a packet for a QP of another type. */
        trace_qhca_pkt_drop(pkt->dest_qpn, pkt->psn, "wrong transport");
        return;
    }
    trace_qhca_pkt_recv(pkt->dest_qpn, qhca_ib_opcode_names[pkt->opcode],
                        pkt->psn, pkt->paylen);
    qhca_count(s, QHCA_CNT_RX_PACKETS, 1);
    qhca_count(s, QHCA_CNT_RX_BYTES, pkt->paylen);
    if (pkt->transport == QHCA_IB_TRANSPORT_UD) {
        qhca_ud_receive(s, qp, pkt);
    } else if (pkt->transport == QHCA_IB_TRANSPORT_UC) {
        qhca_uc_receive(s, qp, pkt);
    } else if (qhca_pkt_flags(pkt->opcode) & QHCA_PKT_REQUEST) {
        if (qp->type == QHCA_QPT_XRC_INI) {
            trace_qhca_pkt_drop(qp->qpn, pkt->psn, "request for XRC INI");
            return;
        }
        qhca_resp_receive(s, qp, pkt);
    } else {
        if (qp->type == QHCA_QPT_XRC_TGT) {
            trace_qhca_pkt_drop(qp->qpn, pkt->psn, "response for XRC TGT");
            return;
        }
        qhca_req_receive(s, qp, pkt);
    }
}

/* Deliver every packet in flight, including those delivery sends. */
void qhca_wire_drain(QhcaState *s)
{
    QhcaEngine *e = &s->engine;
    QhcaPacket *pkt;

    while ((pkt = QSIMPLEQ_FIRST(&e->wire))) {
        QSIMPLEQ_REMOVE_HEAD(&e->wire, next);
        if (qhca_is_ready(s)) {
            qhca_wire_receive(s, pkt);
        }
        QSIMPLEQ_INSERT_HEAD(&e->free_pkts, pkt, next);
    }
}
