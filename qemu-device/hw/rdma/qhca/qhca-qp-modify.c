/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qhca MODIFY_QP: the RC state machine of the data path spec, with the
 * attributes each transition requires and allows, as ib_modify_qp_is_ok()
 * has them, and what UC, UD and XRC QPs change in it.  A command that
 * fails changes nothing.
 *
 * 1.5, Ethernet port: a connected QP has no LIDs; the address vector of
 * SET_QP_AV takes the place of dlid, which must be 0, and a QP cannot
 * reach RTR without one.  A RAW_ETH QP takes no attribute but its state.
 */
#include "qemu/osdep.h"
#include "qhca.h"
#include "qhca-eth.h"
#include "trace.h"

typedef struct QhcaTransition {
    uint32_t required;
    uint32_t optional;
} QhcaTransition;

#define QHCA_QP_ATTR_RTS_OPT    (QHCA_QP_ATTR_ACCESS | \
                                 QHCA_QP_ATTR_MIN_RNR_TIMER)

/* The attributes of the move @cur -> @next, or false if there is none. */
static bool qhca_qp_transition(uint8_t cur, uint8_t next, QhcaTransition *t)
{
    *t = (QhcaTransition) { 0, 0 };

    /* Any state may go to RESET or ERR, with no attributes. */
    if (next == QHCA_QPS_RESET || next == QHCA_QPS_ERR) {
        return true;
    }
    switch (cur) {
    case QHCA_QPS_RESET:
        if (next == QHCA_QPS_INIT) {
            t->optional = QHCA_QP_ATTR_ACCESS;
            return true;
        }
        return false;
    case QHCA_QPS_INIT:
        if (next == QHCA_QPS_INIT) {
            t->optional = QHCA_QP_ATTR_ACCESS;
            return true;
        }
        if (next == QHCA_QPS_RTR) {
            t->required = QHCA_QP_ATTR_PATH | QHCA_QP_ATTR_DEST_QPN |
                          QHCA_QP_ATTR_RQ_PSN |
                          QHCA_QP_ATTR_MAX_DEST_RD_ATOMIC |
                          QHCA_QP_ATTR_MIN_RNR_TIMER;
            t->optional = QHCA_QP_ATTR_ACCESS;
            return true;
        }
        return false;
    case QHCA_QPS_RTR:
        if (next == QHCA_QPS_RTS) {
            t->required = QHCA_QP_ATTR_SQ_PSN | QHCA_QP_ATTR_TIMEOUT |
                          QHCA_QP_ATTR_RETRY_CNT | QHCA_QP_ATTR_RNR_RETRY |
                          QHCA_QP_ATTR_MAX_RD_ATOMIC;
            t->optional = QHCA_QP_ATTR_RTS_OPT;
            return true;
        }
        return false;
    case QHCA_QPS_RTS:
        if (next == QHCA_QPS_RTS) {
            t->optional = QHCA_QP_ATTR_RTS_OPT;
            return true;
        }
        return next == QHCA_QPS_SQD;
    case QHCA_QPS_SQD:
    case QHCA_QPS_SQE:
        if (next == QHCA_QPS_RTS) {
            t->optional = QHCA_QP_ATTR_RTS_OPT;
            return true;
        }
        return false;
    default:
        return false;
    }
}

/*
 * What the QP types other than RC change in that: the attributes UD and
 * UC QPs require and allow in each transition, and XRC INI and TGT QPs'
 * in theirs, as ib_modify_qp_is_ok() has them (P_Key index and port are
 * the driver's).  *@required and *@optional hold RC's on entry.
 */
static void qhca_qp_type_transition(uint8_t type, uint8_t cur, uint8_t next,
                                    uint32_t *required, uint32_t *optional)
{
    uint32_t opt = type == QHCA_QPT_UD ? QHCA_QP_ATTR_QKEY
                                       : QHCA_QP_ATTR_ACCESS;

    if (type == QHCA_QPT_RAW_ETH) {
        /* The NIC's queues: no transport, nothing to set but the state. */
        *required = 0;
        *optional = 0;
        return;
    }
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

/* The values of the attributes in @mask; NULL if all are in range. */
static const char *qhca_qp_check_values(const struct qhca_cmd_modify_qp *p,
                                        uint32_t mask)
{
    /* 1.6: a QP may allow FLUSHes of both placement types. */
    if ((mask & QHCA_QP_ATTR_ACCESS) &&
        (p->access & ~(QHCA_ACCESS_ALL | QHCA_ACCESS_FLUSH_GLOBAL |
                       QHCA_ACCESS_FLUSH_PERSISTENT))) {
        return "unknown access flags";
    }
    if ((mask & QHCA_QP_ATTR_PATH) &&
        (p->path_mtu < 1 || p->path_mtu > 5 || p->sl > QHCA_SL_MAX)) {
        return "path MTU or SL out of range";
    }
    if ((mask & QHCA_QP_ATTR_DEST_QPN) &&
        le32_to_cpu(p->dest_qpn) > QHCA_QPN_MASK) {
        return "destination QPN out of range";
    }
    if (((mask & QHCA_QP_ATTR_RQ_PSN) &&
         le32_to_cpu(p->rq_psn) > QHCA_PSN_MASK) ||
        ((mask & QHCA_QP_ATTR_SQ_PSN) &&
         le32_to_cpu(p->sq_psn) > QHCA_PSN_MASK)) {
        return "PSN out of range";
    }
    if ((mask & QHCA_QP_ATTR_TIMEOUT) && p->timeout > QHCA_TIMEOUT_MAX) {
        return "timeout out of range";
    }
    if (((mask & QHCA_QP_ATTR_RETRY_CNT) &&
         p->retry_cnt > QHCA_RETRY_CNT_MAX) ||
        ((mask & QHCA_QP_ATTR_RNR_RETRY) &&
         p->rnr_retry > QHCA_RNR_RETRY_MAX)) {
        return "retry count out of range";
    }
    if ((mask & QHCA_QP_ATTR_MIN_RNR_TIMER) &&
        p->min_rnr_timer > QHCA_MIN_RNR_TIMER_MAX) {
        return "RNR timer out of range";
    }
    if (((mask & QHCA_QP_ATTR_MAX_RD_ATOMIC) &&
         p->max_rd_atomic > QHCA_MAX_RD_ATOMIC) ||
        ((mask & QHCA_QP_ATTR_MAX_DEST_RD_ATOMIC) &&
         p->max_dest_rd_atomic > QHCA_MAX_RD_ATOMIC)) {
        return "RDMA read/atomic depth out of range";
    }
    return NULL;
}

/*
 * What an Ethernet port adds: a connected QP's path is its address
 * vector, given by SET_QP_AV before RTR, not a LID.  UD and RAW_ETH QPs
 * have no path.  NULL if all is well.
 */
static const char *qhca_qp_check_eth(QhcaState *s, const QhcaQp *qp,
                                     const struct qhca_cmd_modify_qp *p,
                                     uint32_t mask, uint8_t next)
{
    if (!qhca_port_is_eth(s) || qp->type == QHCA_QPT_UD ||
        qp->type == QHCA_QPT_RAW_ETH) {
        return NULL;
    }
    if ((mask & QHCA_QP_ATTR_PATH) && p->dlid) {
        return "a DLID on an Ethernet port";
    }
    if (next == QHCA_QPS_RTR && !qp->av.valid) {
        return "RTR without an address vector (SET_QP_AV)";
    }
    return NULL;
}

static void qhca_qp_apply(QhcaQp *qp, const struct qhca_cmd_modify_qp *p,
                          uint32_t mask)
{
    if (mask & QHCA_QP_ATTR_ACCESS) {
        qp->access = p->access;
    }
    if (mask & QHCA_QP_ATTR_PATH) {
        qp->dlid = le16_to_cpu(p->dlid);
        qp->sl = p->sl;
        qp->path_mtu = p->path_mtu;
    }
    if (mask & QHCA_QP_ATTR_DEST_QPN) {
        qp->dest_qpn = le32_to_cpu(p->dest_qpn);
    }
    if (mask & QHCA_QP_ATTR_RQ_PSN) {
        qp->resp.epsn = le32_to_cpu(p->rq_psn);
    }
    if (mask & QHCA_QP_ATTR_SQ_PSN) {
        qp->req.next_psn = le32_to_cpu(p->sq_psn);
        qp->req.high_psn = qp->req.next_psn;
        qp->req.una = qp->req.next_psn;
    }
    if (mask & QHCA_QP_ATTR_TIMEOUT) {
        qp->timeout = p->timeout;
    }
    if (mask & QHCA_QP_ATTR_RETRY_CNT) {
        qp->retry_cnt = p->retry_cnt;
        qp->req.retry_left = p->retry_cnt;
    }
    if (mask & QHCA_QP_ATTR_RNR_RETRY) {
        qp->rnr_retry = p->rnr_retry;
        qp->req.rnr_left = p->rnr_retry;
    }
    if (mask & QHCA_QP_ATTR_MIN_RNR_TIMER) {
        qp->min_rnr_timer = p->min_rnr_timer;
    }
    if (mask & QHCA_QP_ATTR_MAX_RD_ATOMIC) {
        qp->max_rd_atomic = p->max_rd_atomic;
    }
    if (mask & QHCA_QP_ATTR_MAX_DEST_RD_ATOMIC) {
        qp->max_dest_rd_atomic = p->max_dest_rd_atomic;
    }
    if (mask & QHCA_QP_ATTR_QKEY) {
        qp->qkey = le32_to_cpu(p->qkey);
    }
}

uint8_t qhca_qp_modify(QhcaState *s, const QhcaCmd *cmd,
                       const struct qhca_cmd_modify_qp *p)
{
    uint32_t qpn = le32_to_cpu(p->qpn);
    uint32_t mask = le32_to_cpu(p->attr_mask);
    uint32_t attrs = mask & ~QHCA_QP_ATTR_STATE;
    QhcaTransition t;
    const char *why;
    uint8_t cur, next;
    QhcaQp *qp;

    if (p->rsvd || (mask & QHCA_QP_ATTR_RSVD)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "reserved field set");
    }
    if (!qhca_table_live(&s->qps, qpn)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_HANDLE, "no such QP");
    }
    qp = &s->qp[qpn];
    cur = qp->state;
    next = (mask & QHCA_QP_ATTR_STATE) ? p->state : cur;
    if (next > QHCA_QPS_ERR) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM, "no such state");
    }
    if (!qhca_qp_transition(cur, next, &t)) {
        trace_qhca_qp_modify_bad(qpn, cur, next, mask);
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_STATE,
                                "transition not allowed");
    }
    qhca_qp_type_transition(qp->type, cur, next, &t.required, &t.optional);
    if ((attrs & t.required) != t.required) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "required attribute missing");
    }
    if (attrs & ~(t.required | t.optional)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "attribute not allowed in this transition");
    }
    why = qhca_qp_check_values(p, attrs);
    if (why) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM, why);
    }
    why = qhca_qp_check_eth(s, qp, p, attrs, next);
    if (why) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM, why);
    }

    trace_qhca_qp_modify(qpn, cur, next, mask);
    switch (next) {
    case QHCA_QPS_RESET:
        qhca_engine_unschedule(s, qp);
        qhca_qp_clear(qp);
        return QHCA_AQ_SUCCESS;
    case QHCA_QPS_ERR:
        /* Asked for: nothing more goes to the peer either. */
        qp->resp.res_send = qp->resp.res_tail;
        qp->resp.aeth_pending = false;
        qhca_qp_error(s, qp, 0);
        return QHCA_AQ_SUCCESS;
    default:
        break;
    }

    qhca_qp_apply(qp, p, attrs);
    qatomic_set(&qp->state, next);
    if (next == QHCA_QPS_RTS) {
        qhca_engine_schedule(s, qp);
    }
    return QHCA_AQ_SUCCESS;
}
