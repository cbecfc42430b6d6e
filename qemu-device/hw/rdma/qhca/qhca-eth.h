/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qhca Ethernet port (interface 1.5): how the files of the device model
 * that put the port on a QEMU netdev talk to each other.
 *
 *  qhca-net.c   the NIC glue: the netdev, its link, the queues of frames
 *               between the engine thread and the main loop, receive
 *               demultiplexing (RoCEv2 -> transport, the rest -> NIC).
 *  qhca-roce.c  RoCEv2 frames: QhcaPacket <-> Ethernet/IP/UDP/BTH/.../ICRC,
 *               every received field checked.
 *  qhca-gid.c   the port's GID table (SET_GID) and QP address vectors
 *               (SET_QP_AV).
 *  qhca-nic.c   RAW_ETH QPs: the NIC's send and receive queues.
 *
 * See Documentation/hw/qhca-ethernet.rst for what the guest sees.
 */
#ifndef HW_RDMA_QHCA_ETH_H
#define HW_RDMA_QHCA_ETH_H

#include "qhca-transport.h"

/*
 * The largest RoCEv2 frame the device builds: Ethernet, IPv6, UDP, BTH,
 * the largest extension headers (RETH + ImmDt, or DETH + ImmDt, XRCETH +
 * RETH + ...), one 4096-byte MTU of payload, pad and ICRC.
 */
#define QHCA_ROCE_FRAME_MAX     (QHCA_ETH_HLEN + 40 + 8 + 12 + 48 + \
                                 QHCA_MAX_MTU + 3 + 4)

static inline bool qhca_port_is_eth(const QhcaState *s)
{
    return s->link_layer == QHCA_LINK_LAYER_ETH;
}

/* qhca-net.c */
/* Frames the receive queue holds at most, and by default (x-rx-queue). */
#define QHCA_NET_RX_QUEUE_MAX   512
bool qhca_net_realize(QhcaState *s, Error **errp);
void qhca_net_unrealize(QhcaState *s);
void qhca_net_reset(QhcaState *s);
/* Put a frame on the netdev; from any thread, the frame is copied. */
void qhca_net_tx(QhcaState *s, const uint8_t *frame, size_t len);
/* Would qhca_net_tx() drop a frame now, its queue being full? */
bool qhca_net_tx_full(QhcaState *s);
/* Engine thread, device lock held: handle the frames received so far. */
void qhca_net_rx_run(QhcaState *s);
typedef enum QhcaNetRoce {
    QHCA_NET_ROCE_NOT,          /* not RoCEv2 for one of the port's GIDs */
    QHCA_NET_ROCE_DROPPED,      /* it was, but failed a check: counted */
    QHCA_NET_ROCE_OURS,         /* it was, decoded into the packet */
} QhcaNetRoce;
/*
 * Device lock held: the receive checks of a frame, from the netdev or
 * sent to one of the port's own GIDs; @pkt has room for QHCA_MAX_MTU.
 */
QhcaNetRoce qhca_net_roce_take(QhcaState *s, const uint8_t *frame,
                               size_t len, QhcaPacket *pkt);

/* qhca-wire.c: a decoded packet for this port's transport. */
void qhca_wire_receive(QhcaState *s, const QhcaPacket *pkt);

/* qhca-roce.c */
extern const char qhca_roce_bad_icrc[];
/*
 * Build the frame of @pkt (its smac, dmac, net_type, sgid, dgid, tclass,
 * hop_limit, flow_label, udp_sport and transport fields) into @frame, of
 * at least QHCA_ROCE_FRAME_MAX bytes; returns its length.
 */
size_t qhca_roce_encode(const QhcaPacket *pkt, uint8_t *frame);
/*
 * Is @frame IPv4 or IPv6 UDP to QHCA_ROCE_UDP_PORT?  If so, its
 * destination IP as a GID (IPv4-mapped for IPv4) in @dgid.  Checks only
 * what it reads; qhca_roce_decode() checks the rest.
 */
bool qhca_roce_classify(const uint8_t *frame, size_t len, uint8_t dgid[16]);
/*
 * Parse and check a RoCEv2 frame into @pkt; NULL if it is good, else why
 * not (qhca_roce_bad_icrc for a bad ICRC).  Nothing of @frame is trusted.
 */
const char *qhca_roce_decode(const uint8_t *frame, size_t len,
                             QhcaPacket *pkt);
/* rdma_get_udp_sport() of Linux: from the flow label, else the QPNs. */
uint16_t qhca_roce_udp_sport(uint32_t flow_label, uint32_t lqpn,
                             uint32_t rqpn);

/* qhca-gid.c */
void qhca_gid_reset(QhcaState *s);
uint8_t qhca_exec_set_gid(QhcaState *s, const QhcaCmd *cmd,
                          const struct qhca_cmd_set_gid *p);
uint8_t qhca_exec_set_qp_av(QhcaState *s, const QhcaCmd *cmd,
                            const struct qhca_cmd_set_qp_av *p);
/* The index of the ROCE_V2 entry holding @gid, or -1. */
int qhca_gid_find(QhcaState *s, const uint8_t gid[16]);
/* Entry @index if it is a ROCE_V2 entry, else NULL. */
const uint8_t *qhca_gid_get(QhcaState *s, uint32_t index);
/* An IPv4-mapped GID (::ffff:a.b.c.d)? */
bool qhca_gid_is_v4(const uint8_t gid[16]);

/* qhca-nic.c: a frame for the NIC (RAW_ETH QP receive). */
void qhca_nic_receive(QhcaState *s, const uint8_t *frame, size_t len);

/* qhca-mcast.c */
/*
 * Is @gid a multicast IP address (IPv6 ff00::/8, or IPv4-mapped 224/4)?
 * If so, its Ethernet multicast MAC in @mac.
 */
bool qhca_mcast_gid_mac(const uint8_t gid[16], uint8_t mac[6]);
/* Has a QP of the port joined the group of multicast GID @gid? */
bool qhca_mcast_has_gid(QhcaState *s, const uint8_t gid[16]);

#endif /* HW_RDMA_QHCA_ETH_H */
