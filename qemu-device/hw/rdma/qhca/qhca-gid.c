/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qhca GID table and address vectors of the Ethernet port (1.5).
 *
 * The driver mirrors ib_core's GID table into the device with SET_GID, as
 * add_gid/del_gid of a RoCE driver do: the device needs it to know its own
 * IP addresses, both to send (a QP's sgid_index is its source IP) and to
 * receive (a RoCEv2 frame is the port's when its destination IP is in the
 * table).  SET_QP_AV gives a connected QP the addresses its frames carry.
 * Both run under the device lock, as every command does, so the engine
 * never sees a half-written entry.
 */
#include "qemu/osdep.h"
#include "qemu/cutils.h"
#include "qhca.h"
#include "qhca-eth.h"
#include "trace.h"

static const uint8_t qhca_v4_prefix[12] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff
};

bool qhca_gid_is_v4(const uint8_t gid[16])
{
    return !memcmp(gid, qhca_v4_prefix, sizeof(qhca_v4_prefix));
}

/* Could @gid be a unicast address of a RoCEv2 port? */
static bool qhca_gid_unicast(const uint8_t gid[16])
{
    if (qhca_gid_is_v4(gid)) {
        /* 0.0.0.0, 224/4 multicast and 255.255.255.255 are not. */
        return (gid[12] || gid[13] || gid[14] || gid[15]) &&
               (gid[12] & 0xf0) != 0xe0 &&
               !(gid[12] == 0xff && gid[13] == 0xff && gid[14] == 0xff &&
                 gid[15] == 0xff);
    }
    return gid[0] != 0xff && !buffer_is_zero(gid, 16);
}

void qhca_gid_reset(QhcaState *s)
{
    memset(s->gid, 0, sizeof(s->gid));
}

int qhca_gid_find(QhcaState *s, const uint8_t gid[16])
{
    int i;

    for (i = 0; i < QHCA_ROCE_GID_TBL_LEN; i++) {
        if (s->gid[i].type == QHCA_GID_ROCE_V2 &&
            !memcmp(s->gid[i].gid, gid, 16)) {
            return i;
        }
    }
    return -1;
}

const uint8_t *qhca_gid_get(QhcaState *s, uint32_t index)
{
    if (index >= QHCA_ROCE_GID_TBL_LEN ||
        s->gid[index].type != QHCA_GID_ROCE_V2) {
        return NULL;
    }
    return s->gid[index].gid;
}

uint8_t qhca_exec_set_gid(QhcaState *s, const QhcaCmd *cmd,
                          const struct qhca_cmd_set_gid *p)
{
    uint16_t index = le16_to_cpu(p->index);

    if (!qhca_port_is_eth(s)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_STATE,
                                "the port is not Ethernet");
    }
    if (!buffer_is_zero(p->rsvd0, sizeof(p->rsvd0)) || p->rsvd1[0] ||
        p->rsvd1[1]) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "reserved field set");
    }
    if (index >= QHCA_ROCE_GID_TBL_LEN) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "GID index out of range");
    }
    switch (p->type) {
    case QHCA_GID_NONE:
        if (!buffer_is_zero(p->gid, sizeof(p->gid))) {
            return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                    "a cleared entry has a GID");
        }
        break;
    case QHCA_GID_ROCE_V2:
        if (!qhca_gid_unicast(p->gid)) {
            return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                    "not a unicast IP address");
        }
        break;
    default:
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "unknown GID type");
    }
    s->gid[index].type = p->type;
    memcpy(s->gid[index].gid, p->gid, sizeof(p->gid));
    trace_qhca_gid_set(index, p->type, qhca_gid_is_v4(p->gid));
    return QHCA_AQ_SUCCESS;
}

uint8_t qhca_exec_set_qp_av(QhcaState *s, const QhcaCmd *cmd,
                            const struct qhca_cmd_set_qp_av *p)
{
    uint32_t qpn = le32_to_cpu(p->qpn);
    uint32_t flow_label = le32_to_cpu(p->flow_label);
    const uint8_t *sgid;
    QhcaQp *qp;

    if (!qhca_port_is_eth(s)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_STATE,
                                "the port is not Ethernet");
    }
    if (p->rsvd0[0] || p->rsvd0[1] || p->rsvd0[2] || p->rsvd1) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "reserved field set");
    }
    if (!qhca_table_live(&s->qps, qpn)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_HANDLE, "no such QP");
    }
    qp = &s->qp[qpn];
    /* XRC TGT QPs send responses: they have an address too. */
    if (!(QHCA_QPT_BIT(qp->type) &
          (QHCA_QPTS_CONNECTED | QHCA_QPT_BIT(QHCA_QPT_XRC_TGT)))) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "not a connected QP");
    }
    if (qp->state == QHCA_QPS_ERR) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_STATE, "QP in ERR");
    }
    sgid = qhca_gid_get(s, p->sgid_index);
    if (!sgid) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "no such source GID");
    }
    if (!qhca_gid_unicast(p->dgid) ||
        qhca_gid_is_v4(p->dgid) != qhca_gid_is_v4(sgid)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "destination GID not unicast of the "
                                "source's IP version");
    }
    if ((p->dmac[0] & 1) || buffer_is_zero(p->dmac, sizeof(p->dmac))) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "destination MAC not unicast");
    }
    if (flow_label > QHCA_AV_FLOW_LABEL_MAX) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "flow label out of range");
    }
    qp->av.valid = true;
    qp->av.sgid_index = p->sgid_index;
    memcpy(qp->av.dgid, p->dgid, sizeof(qp->av.dgid));
    memcpy(qp->av.dmac, p->dmac, sizeof(qp->av.dmac));
    qp->av.hop_limit = p->hop_limit ?: 64;
    qp->av.traffic_class = p->traffic_class;
    qp->av.flow_label = flow_label;
    trace_qhca_qp_set_av(qpn, p->sgid_index, qhca_gid_is_v4(p->dgid));
    return QHCA_AQ_SUCCESS;
}
