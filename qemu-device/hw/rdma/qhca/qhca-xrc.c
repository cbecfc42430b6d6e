/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qhca XRC (interface 1.2): XRC domains, the checks of XRC QPs at
 * creation, and the choice of SRQ an XRC TGT QP makes for each request.
 *
 * A TGT QP is an RC responder whose receive queue changes with every
 * message: the XRCETH of the request names an XRC SRQ, which must be of
 * the TGT QP's domain.  Once chosen, the SRQ's number, CQ and PD stand in
 * the QP's srqn, recv_cqn and pdn, so that the RC responder and the SRQ
 * code run unchanged; nothing holds a reference through those fields (the
 * domain does: an SRQ holds its CQ, and the TGT QP its domain), so each
 * packet looks the SRQ up again.
 */
#include "qemu/osdep.h"
#include "qemu/bitops.h"
#include "qemu/cutils.h"
#include "qhca.h"
#include "trace.h"

void qhca_xrc_init(QhcaState *s)
{
    qhca_table_init(&s->xrcds, "xrcd", 1, s->params.max_xrcds);
    s->xrcd_refs = g_new0(uint32_t, s->xrcds.size);
}

void qhca_xrc_fini(QhcaState *s)
{
    qhca_table_fini(&s->xrcds);
    g_free(s->xrcd_refs);
    s->xrcd_refs = NULL;
}

/* After every SRQ and QP is gone. */
void qhca_xrc_reset(QhcaState *s)
{
    qhca_table_reset(&s->xrcds);
    memset(s->xrcd_refs, 0, sizeof(uint32_t) * s->xrcds.size);
}

/*
 * The fields CREATE_QP of an XRC QP must leave zero; NULL if it is fine
 * (or not an XRC QP).  The domain itself is checked by the caller.
 */
const char *qhca_xrc_check_qp(const struct qhca_cmd_create_qp *p)
{
    if (p->type == QHCA_QPT_XRC_INI) {
        if (p->recv_cqn || p->srqn || (p->flags & QHCA_QP_F_SRQ) ||
            p->rq_addr || p->rq_depth_log2 || p->rq_stride_log2) {
            return "XRC INI QP with a receive side";
        }
    } else if (p->type == QHCA_QPT_XRC_TGT) {
        if (p->uar || p->send_cqn || p->recv_cqn || p->flags || p->srqn ||
            p->sq_addr || p->rq_addr || p->sq_depth_log2 ||
            p->sq_stride_log2 || p->rq_depth_log2 || p->rq_stride_log2) {
            return "XRC TGT QP with rings, CQs or a UAR";
        }
    }
    return NULL;
}

/*
 * Before an XRC TGT QP executes a request: take the SRQ of its XRCETH.
 * False, with @why, if the request must be NAKed (invalid request).
 */
bool qhca_xrc_resp_select(QhcaState *s, QhcaQp *qp, const QhcaPacket *pkt,
                          const char **why)
{
    uint32_t srqn = pkt->xrc_srqn;
    bool in_msg = qp->resp.in_send || qp->resp.in_write;
    QhcaSrq *srq;

    if (!qhca_table_live(&s->srqs, srqn)) {
        *why = "XRCETH names no SRQ";
        return false;
    }
    srq = &s->srq[srqn];
    if (srq->type != QHCA_SRQT_XRC || srq->xrcd != qp->xrcd) {
        *why = "XRCETH names an SRQ of another XRC domain";
        return false;
    }
    /*
     * 1.8: a receive WQE kept from a message that met an absent ODP page
     * belongs to that message, and so to its SRQ.
     */
    if ((in_msg || qp->resp.have_rwqe) && srqn != qp->srqn) {
        *why = "XRCETH changes SRQ within a message";
        return false;
    }
    if (srqn != qp->srqn) {
        trace_qhca_xrc_select(qp->qpn, srqn, srq->cqn, srq->pdn);
    }
    qp->srqn = srqn;
    qp->recv_cqn = srq->cqn;
    qp->pdn = srq->pdn;
    return true;
}

/*
 * An XRC TGT QP in ERR: the receive it was filling is flushed to its
 * SRQ's CQ if the SRQ is still the one it came from, else dropped (the
 * SRQ and its WQEs are gone), then QP_LAST_WQE as for a QP on an SRQ.
 */
void qhca_xrc_tgt_flush(QhcaState *s, QhcaQp *qp)
{
    QhcaSrq *srq = &s->srq[qp->srqn];

    if (qp->resp.have_rwqe &&
        (!qhca_table_live(&s->srqs, qp->srqn) ||
         srq->type != QHCA_SRQT_XRC || srq->xrcd != qp->xrcd)) {
        trace_qhca_xrc_flush_lost(qp->qpn, qp->srqn);
        qp->resp.have_rwqe = false;
    }
    qp->recv_cqn = srq->cqn;
    qhca_srq_qp_flush(s, qp);
}
