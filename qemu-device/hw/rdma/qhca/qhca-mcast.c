/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qhca multicast groups (interface 1.2): ATTACH_MCAST/DETACH_MCAST and the
 * delivery of UD multicast packets.
 *
 * With no switch and no subnet manager behind its one port, the device
 * keeps the groups itself: a group is an MGID with its multicast LID
 * (chosen by whoever attaches, as no SA assigns one) and the UD QPs
 * attached to it.
 * A UD packet to QPN 0xffffff with a multicast DLID and a GRH is copied to
 * every QP of the group whose MGID is its DGID, the sending QP included,
 * as a switch forwards it back to a member port.  A packet for a group
 * nobody joined is dropped, as a switch does.  Destroying a QP detaches
 * it everywhere, so that its number can be handed out again safely.
 *
 * 1.5, Ethernet port: an MGID is a multicast IP address, IPv6 (ff00::/8)
 * or IPv4 (224/4, IPv4-mapped), and a packet finds its group by its
 * destination IP alone: there are no LIDs, so the mlid a QP attaches with
 * is kept but never compared.  The frames go to the Ethernet multicast
 * MAC of the address (RFC 2464 for IPv6, RFC 1112 for IPv4).
 */
#include "qemu/osdep.h"
#include "qhca.h"
#include "qhca-eth.h"
#include "trace.h"

bool qhca_mcast_gid_mac(const uint8_t gid[16], uint8_t mac[6])
{
    if (qhca_gid_is_v4(gid)) {
        if ((gid[12] & 0xf0) != 0xe0) {
            return false;
        }
        /* 01:00:5e, then the low 23 bits of the address. */
        mac[0] = 0x01;
        mac[1] = 0x00;
        mac[2] = 0x5e;
        mac[3] = gid[13] & 0x7f;
        mac[4] = gid[14];
        mac[5] = gid[15];
        return true;
    }
    if (gid[0] != 0xff) {
        return false;
    }
    /* 33:33, then the low 32 bits of the address. */
    mac[0] = 0x33;
    mac[1] = 0x33;
    memcpy(mac + 2, gid + 12, 4);
    return true;
}

static void qhca_mcast_trace(const char *what, uint32_t qpn, uint16_t mlid,
                             const uint8_t *mgid)
{
    trace_qhca_mcast(what, qpn, mlid, ldq_be_p(mgid), ldq_be_p(mgid + 8));
}

static QhcaMcast *qhca_mcast_find(QhcaState *s, const uint8_t *mgid)
{
    unsigned i;

    for (i = 0; i < QHCA_MAX_MCAST_GROUPS; i++) {
        QhcaMcast *g = &s->mcast[i];

        if (g->nqps && !memcmp(g->mgid, mgid, sizeof(g->mgid))) {
            return g;
        }
    }
    return NULL;
}

bool qhca_mcast_has_gid(QhcaState *s, const uint8_t gid[16])
{
    return qhca_mcast_find(s, gid) != NULL;
}

/* Does @g's MLID match @mlid?  Always on Ethernet, which has no LIDs. */
static bool qhca_mcast_mlid_ok(QhcaState *s, const QhcaMcast *g,
                               uint16_t mlid)
{
    return qhca_port_is_eth(s) || g->mlid == mlid;
}

static int qhca_mcast_member(const QhcaMcast *g, uint32_t qpn)
{
    unsigned i;

    for (i = 0; i < g->nqps; i++) {
        if (g->qpn[i] == qpn) {
            return i;
        }
    }
    return -1;
}

static void qhca_mcast_remove(QhcaMcast *g, unsigned i)
{
    g->qpn[i] = g->qpn[--g->nqps];
}

static uint8_t qhca_mcast_attach(QhcaState *s, const QhcaCmd *cmd,
                                 uint32_t qpn, uint16_t mlid,
                                 const uint8_t *mgid)
{
    QhcaMcast *g = qhca_mcast_find(s, mgid);
    unsigned i;

    if (g) {
        if (!qhca_mcast_mlid_ok(s, g, mlid)) {
            return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                    "group has another MLID");
        }
        if (qhca_mcast_member(g, qpn) >= 0) {
            return QHCA_AQ_SUCCESS;     /* attached already, as IB has it */
        }
        if (g->nqps == QHCA_MAX_MCAST_QP_ATTACH) {
            return qhca_exec_reject(s, cmd, QHCA_AQ_NO_RESOURCES,
                                    "group full");
        }
    } else {
        for (i = 0; i < QHCA_MAX_MCAST_GROUPS && s->mcast[i].nqps; i++) {
            /* the first free slot */
        }
        if (i == QHCA_MAX_MCAST_GROUPS) {
            return qhca_exec_reject(s, cmd, QHCA_AQ_NO_RESOURCES,
                                    "multicast group table full");
        }
        g = &s->mcast[i];
        memcpy(g->mgid, mgid, sizeof(g->mgid));
        g->mlid = mlid;
    }
    g->qpn[g->nqps++] = qpn;
    qhca_mcast_trace("attach", qpn, mlid, mgid);
    return QHCA_AQ_SUCCESS;
}

uint8_t qhca_mcast_cmd(QhcaState *s, const QhcaCmd *cmd,
                       const struct qhca_cmd_mcast *p)
{
    uint32_t qpn = le32_to_cpu(p->qpn);
    uint16_t mlid = le16_to_cpu(p->mlid);
    uint8_t mac[6];
    QhcaMcast *g;
    int i;

    if (p->rsvd0 || p->rsvd1) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "reserved field set");
    }
    if (qhca_port_is_eth(s) ? !qhca_mcast_gid_mac(p->mgid, mac) :
        p->mgid[0] != 0xff || mlid < QHCA_MCAST_LID_MIN ||
        mlid > QHCA_MCAST_LID_MAX) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "not a multicast GID and LID");
    }
    if (!qhca_table_live(&s->qps, qpn)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_HANDLE, "no such QP");
    }
    /* The GSI QP is kept as a UD QP (qhca-qp.c) but joins no group. */
    if (s->qp[qpn].type != QHCA_QPT_UD || qpn == QHCA_GSI_QPN) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "only UD QPs join multicast groups");
    }
    if (cmd->opcode == QHCA_CMD_ATTACH_MCAST) {
        return qhca_mcast_attach(s, cmd, qpn, mlid, p->mgid);
    }

    g = qhca_mcast_find(s, p->mgid);
    i = g && qhca_mcast_mlid_ok(s, g, mlid) ? qhca_mcast_member(g, qpn) : -1;
    if (i < 0) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "QP not attached to the group");
    }
    qhca_mcast_remove(g, i);
    qhca_mcast_trace("detach", qpn, mlid, p->mgid);
    return QHCA_AQ_SUCCESS;
}

void qhca_mcast_detach_qp(QhcaState *s, uint32_t qpn)
{
    unsigned i;
    int k;

    for (i = 0; i < QHCA_MAX_MCAST_GROUPS; i++) {
        QhcaMcast *g = &s->mcast[i];

        k = g->nqps ? qhca_mcast_member(g, qpn) : -1;
        if (k >= 0) {
            qhca_mcast_trace("detach (QP destroyed)", qpn, g->mlid, g->mgid);
            qhca_mcast_remove(g, k);
        }
    }
}

/* Groups with a QP attached (QUERY_STATS): an empty group is a free slot. */
uint32_t qhca_mcast_groups(QhcaState *s)
{
    uint32_t n = 0;
    unsigned i;

    for (i = 0; i < QHCA_MAX_MCAST_GROUPS; i++) {
        n += s->mcast[i].nqps != 0;
    }
    return n;
}

/* True if @pkt was a multicast packet: delivered or dropped here. */
bool qhca_mcast_deliver(QhcaState *s, const QhcaPacket *pkt)
{
    uint32_t qpns[QHCA_MAX_MCAST_QP_ATTACH];
    const QhcaMcast *g;
    unsigned i, n;

    if (pkt->transport != QHCA_IB_TRANSPORT_UD ||
        pkt->dest_qpn != QHCA_MCAST_QPN) {
        return false;
    }
    g = pkt->has_grh ? qhca_mcast_find(s, pkt->dgid) : NULL;
    if (!g || !qhca_mcast_mlid_ok(s, g, pkt->dlid)) {
        trace_qhca_pkt_drop(pkt->dest_qpn, pkt->psn,
                            "multicast without a group");
        return true;
    }
    /* A copy of the list: a receive error may not change the group. */
    n = g->nqps;
    memcpy(qpns, g->qpn, n * sizeof(qpns[0]));
    trace_qhca_mcast_deliver(pkt->src_qpn, pkt->dlid, n);
    for (i = 0; i < n; i++) {
        if (!qhca_table_live(&s->qps, qpns[i])) {
            continue;
        }
        qhca_count(s, QHCA_CNT_RX_PACKETS, 1);
        qhca_count(s, QHCA_CNT_RX_BYTES, pkt->paylen);
        qhca_ud_receive_mcast(s, &s->qp[qpns[i]], pkt);
    }
    return true;
}
