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
 *
 * On an Ethernet port (1.5) the wire is the netdev: a packet is built
 * into a RoCEv2 frame (qhca-roce.c) and handed to qhca-net.c, which
 * decodes the frames it receives back into packets for
 * qhca_wire_receive().  A frame to one of the port's own IP addresses
 * does not leave: it is decoded with the receive checks and queued here,
 * so that two QPs of one device talk as they do on an IB port, and the
 * wire is still empty whenever the device lock is free.  There are no
 * LIDs: a connected QP's packets are its peer's when their IP addresses
 * are the QP's address vector (SET_QP_AV), as rxe checks.
 */
#include "qemu/osdep.h"
#include "qemu/cutils.h"
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
#define F_FETH  QHCA_PKT_FETH
#define F_AWR   QHCA_PKT_ATOMIC_WRITE

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
    [QHCA_IB_FLUSH] = F_REQ | F_ONLY | F_FETH | F_RETH,
    [QHCA_IB_ATOMIC_WRITE] = F_REQ | F_ONLY | F_AWR | F_RETH | F_PAY,
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
    [QHCA_IB_FLUSH] = "FLUSH",
    [QHCA_IB_ATOMIC_WRITE] = "ATOMIC_WRITE",
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
    case QHCA_IB_FAMILY_FLUSH:
        return QHCA_IB_FLUSH;
    case QHCA_IB_FAMILY_ATOMIC_WRITE:
        return QHCA_IB_ATOMIC_WRITE;
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

/* A packet buffer, with room for one QHCA_MAX_MTU of payload. */
static QhcaPacket *qhca_wire_alloc(QhcaState *s)
{
    QhcaEngine *e = &s->engine;
    QhcaPacket *pkt = QSIMPLEQ_FIRST(&e->free_pkts);

    if (pkt) {
        QSIMPLEQ_REMOVE_HEAD(&e->free_pkts, next);
    } else {
        pkt = g_malloc(sizeof(*pkt) + QHCA_MAX_MTU);
    }
    return pkt;
}

static void qhca_wire_free(QhcaState *s, QhcaPacket *pkt)
{
    QSIMPLEQ_INSERT_HEAD(&s->engine.free_pkts, pkt, next);
}

/*
 * Ethernet: the addresses of a connected QP's packets, from its address
 * vector.  A source GID deleted since SET_QP_AV leaves sgid zero, and
 * qhca_wire_send_eth() loses the packet.  UD and GSI packets get theirs
 * from the WQE (qhca_xport_fill_packet()).
 */
static void qhca_wire_packet_av(QhcaState *s, QhcaQp *qp, QhcaPacket *pkt)
{
    const QhcaRoceAv *av = &qp->av;
    const uint8_t *sgid;

    if (!av->valid) {
        return;
    }
    sgid = qhca_gid_get(s, av->sgid_index);
    pkt->has_grh = true;
    if (sgid) {
        memcpy(pkt->sgid, sgid, sizeof(pkt->sgid));
    }
    memcpy(pkt->dgid, av->dgid, sizeof(pkt->dgid));
    memcpy(pkt->dmac, av->dmac, sizeof(pkt->dmac));
    pkt->tclass = av->traffic_class;
    pkt->hop_limit = av->hop_limit;
    pkt->flow_label = av->flow_label;
}

/* A fresh packet from @qp, with its LRH (or addresses) and BTH filled in. */
QhcaPacket *qhca_wire_packet(QhcaState *s, QhcaQp *qp, uint8_t opcode,
                             uint32_t dest_qpn, uint32_t psn)
{
    QhcaPacket *pkt = qhca_wire_alloc(s);

    memset(pkt, 0, sizeof(*pkt));
    pkt->slid = s->params.lid;
    pkt->dlid = qp->dlid;
    pkt->sl = qp->sl;
    if (qhca_port_is_eth(s)) {
        qhca_wire_packet_av(s, qp, pkt);
    }
    pkt->opcode = opcode;
    /* Answers go by the QP's transport too (XRC's differs from RC's). */
    pkt->transport = qhca_qp_transport(qp);
    pkt->dest_qpn = dest_qpn;
    pkt->psn = psn & QHCA_PSN_MASK;
    pkt->src_qpn = qp->qpn;
    return pkt;
}

/* A packet the wire loses: the sender finds out by its timers. */
static void qhca_wire_lose(QhcaState *s, QhcaPacket *pkt, const char *why)
{
    trace_qhca_wire_drop(pkt->src_qpn, pkt->dest_qpn, pkt->psn, why);
    qhca_count(s, QHCA_CNT_WIRE_DROPS, 1);
    qhca_wire_free(s, pkt);
}

/*
 * Ethernet: build @pkt's frame and put it on the netdev, or, for one of
 * the port's own IP addresses, take it back in as received.
 */
static void qhca_wire_send_eth(QhcaState *s, QhcaPacket *pkt)
{
    uint8_t frame[QHCA_ROCE_FRAME_MAX];
    QhcaPacket *in;
    bool v4 = qhca_gid_is_v4(pkt->sgid);
    bool local, group;
    size_t len;

    if (!pkt->has_grh || buffer_is_zero(pkt->sgid, sizeof(pkt->sgid))) {
        qhca_wire_lose(s, pkt, "no source GID");
        return;
    }
    if (v4 != qhca_gid_is_v4(pkt->dgid)) {
        qhca_wire_lose(s, pkt, "source and destination IP versions differ");
        return;
    }
    local = qhca_gid_find(s, pkt->dgid) >= 0;
    /*
     * A group our own QPs joined gets it too, as on the IB port, where the
     * switch forwards it back: our own frame never comes back (qhca-net.c
     * drops the echoes of a multicast backend).
     */
    group = !local && qhca_mcast_has_gid(s, pkt->dgid);
    /* A responder answering a flood builds frames faster than they go. */
    if (!local && !group && qhca_net_tx_full(s)) {
        qhca_wire_lose(s, pkt, "transmit queue full");
        return;
    }
    memcpy(pkt->smac, s->conf.macaddr.a, sizeof(pkt->smac));
    pkt->net_type = v4 ? QHCA_NET_IPV4 : QHCA_NET_IPV6;
    pkt->udp_sport = qhca_roce_udp_sport(pkt->flow_label, pkt->src_qpn,
                                         pkt->dest_qpn);
    len = qhca_roce_encode(pkt, frame);
    if (!len) {
        qhca_wire_lose(s, pkt, "no frame for it");
        return;
    }
    assert(len <= sizeof(frame));
    qhca_wire_free(s, pkt);
    if (!local) {
        qhca_net_tx(s, frame, len);
        if (!group) {
            return;
        }
    }
    /* To ourselves: through the receive checks, onto the queue. */
    in = qhca_wire_alloc(s);
    if (qhca_net_roce_take(s, frame, len, in) != QHCA_NET_ROCE_OURS) {
        qhca_wire_free(s, in);
        return;
    }
    QSIMPLEQ_INSERT_TAIL(&s->engine.wire, in, next);
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
        qhca_wire_lose(s, pkt, why);
        return;
    }
    if (qhca_port_is_eth(s)) {
        qhca_wire_send_eth(s, pkt);
        return;
    }
    QSIMPLEQ_INSERT_TAIL(&s->engine.wire, pkt, next);
}

/*
 * Ethernet: would @qp's next packet find the transmit queue full?  If so
 * the QP waits for it to drain (qhca_engine_tx_wait()) and its step stops
 * before building the packet, as an HCA stops its send engine rather than
 * drop its own frames.  Asked for every packet: each one is queued as it
 * is built, so the answer is exact.  A QP whose peer is this port's own
 * GID waits too, only while another QP fills the queue.
 */
bool qhca_wire_tx_blocked(QhcaState *s, QhcaQp *qp)
{
    if (!qhca_port_is_eth(s) || !qhca_net_tx_full(s)) {
        return false;
    }
    qhca_engine_tx_wait(s, qp);
    return true;
}

/*
 * A received packet no QP takes.  On Ethernet it came in a frame, which
 * ROCE_RX_DROPS counts; the IB loopback port only traces it, as before.
 */
static void qhca_wire_refuse(QhcaState *s, const QhcaPacket *pkt,
                             const char *why)
{
    trace_qhca_pkt_drop(pkt->dest_qpn, pkt->psn, why);
    if (qhca_port_is_eth(s)) {
        qhca_count(s, QHCA_CNT_ROCE_RX_DROPS, 1);
    }
}

/*
 * Ethernet: a connected QP takes packets only from its peer's IP address
 * to its own, those of its address vector (rxe's check_addr()).
 */
static const char *qhca_wire_check_addr(QhcaState *s, QhcaQp *qp,
                                        const QhcaPacket *pkt)
{
    const uint8_t *sgid;

    if (!(QHCA_QPT_BIT(qp->type) &
          (QHCA_QPTS_CONNECTED | QHCA_QPT_BIT(QHCA_QPT_XRC_TGT)))) {
        return NULL;
    }
    if (!qp->av.valid) {
        return "QP has no address vector";
    }
    sgid = qhca_gid_get(s, qp->av.sgid_index);
    if (!sgid || memcmp(pkt->dgid, sgid, sizeof(pkt->dgid))) {
        return "destination IP is not the QP's";
    }
    if (memcmp(pkt->sgid, qp->av.dgid, sizeof(pkt->sgid))) {
        return "source IP is not the QP's peer";
    }
    return NULL;
}

void qhca_wire_receive(QhcaState *s, const QhcaPacket *pkt)
{
    const char *why;
    QhcaQp *qp;

    if (qhca_mcast_deliver(s, pkt)) {
        return;
    }
    if (!qhca_port_is_eth(s) && pkt->dlid != s->params.lid) {
        trace_qhca_pkt_drop(pkt->dest_qpn, pkt->psn, "DLID is not ours");
        return;
    }
    if (!qhca_table_live(&s->qps, pkt->dest_qpn)) {
        qhca_wire_refuse(s, pkt, "no such QP");
        return;
    }
    qp = &s->qp[pkt->dest_qpn];
    if (pkt->transport != qhca_qp_transport(qp)) {
        /* As an HCA does with a packet for a QP of another type. */
        qhca_wire_refuse(s, pkt, "wrong transport");
        return;
    }
    if (qhca_port_is_eth(s)) {
        why = qhca_wire_check_addr(s, qp, pkt);
        if (why) {
            qhca_wire_refuse(s, pkt, why);
            return;
        }
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
            qhca_wire_refuse(s, pkt, "request for XRC INI");
            return;
        }
        qhca_resp_receive(s, qp, pkt);
    } else {
        if (qp->type == QHCA_QPT_XRC_TGT) {
            qhca_wire_refuse(s, pkt, "response for XRC TGT");
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
        qhca_wire_free(s, pkt);
    }
}
