/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qhca fault injection (interface 1.3): INJECT_FAULT, the host's link-up
 * property, and what the wire loses because of them.
 *
 * Every fault goes down the path the device takes when the failure is
 * real: a QP fails as on an error of its own (qhca_qp_error()), an SRQ as
 * when its ring cannot be read (qhca_srq_fail()), a CQ as on an overrun
 * (qhca_cq_fail()).  A fault only hurts the device that asked for it, and
 * each is bounded: a DROP count has a ceiling, the others are one state
 * change.  A legitimate injection is not a guest error; only a malformed
 * command is (qhca_exec_reject()).
 *
 * Locking.  INJECT_FAULT runs under the BQL and the device lock (an admin
 * command); qom-set of link-up and, on an Ethernet port, the netdev's
 * link callback (QMP set_link) under the BQL, and they take the device
 * lock to change the link, as the events they post need it.  The engine
 * thread asks the wire for every packet it sends under the device lock
 * too.  link_up and wire_drops_left are atomic all the same: the property
 * is read and, before realize, set without the lock.
 */
#include "qemu/osdep.h"
#include "qemu/lockable.h"
#include "qapi/error.h"
#include "qhca.h"
#include "trace.h"

static const char *const qhca_fault_names[] = {
    [QHCA_FAULT_LINK_DOWN] = "LINK_DOWN",
    [QHCA_FAULT_LINK_UP] = "LINK_UP",
    [QHCA_FAULT_QP_FATAL] = "QP_FATAL",
    [QHCA_FAULT_SRQ_ERR] = "SRQ_ERR",
    [QHCA_FAULT_CQ_ERR] = "CQ_ERR",
    [QHCA_FAULT_DROP] = "DROP",
    [QHCA_FAULT_AQ_HANG] = "AQ_HANG",
};

/* Who changed the link. */
typedef enum QhcaLinkBy {
    QHCA_LINK_BY_GUEST,         /* INJECT_FAULT LINK_DOWN / LINK_UP */
    QHCA_LINK_BY_HOST,          /* the link-up property */
    QHCA_LINK_BY_BACKEND,       /* the netdev's link (QMP set_link) */
} QhcaLinkBy;

/*
 * The host plugs the cable in or pulls it (the link-up property, or the
 * netdev's link on an Ethernet port), or the guest takes the link down or
 * lets it up again, under the device lock.  Each keeps its own state so
 * that none undoes another: a guest cannot plug in a cable the host
 * pulled, and set_link cannot undo link-up=off.  Only a port that goes
 * from ACTIVE to DOWN, or back, is an event: while the device is not
 * ready its port is DOWN whatever the link does, and a device enabled
 * later tells each new EQ the port state (qhca_eq_create()).
 */
static void qhca_link_set(QhcaState *s, bool up, QhcaLinkBy by)
{
    bool was_up = qhca_link_is_up(s);
    bool by_host = by != QHCA_LINK_BY_GUEST;

    switch (by) {
    case QHCA_LINK_BY_HOST:
        qatomic_set(&s->link_up, up);
        break;
    case QHCA_LINK_BY_BACKEND:
        qatomic_set(&s->backend_link_down, !up);
        break;
    default:
        qatomic_set(&s->link_down_injected, !up);
        break;
    }
    up = qhca_link_is_up(s);
    if (up == was_up) {
        trace_qhca_link_unchanged(up, by_host);
        return;
    }
    trace_qhca_link(up, by_host, qhca_is_ready(s));
    if (!qhca_is_ready(s)) {
        return;
    }
    if (up) {
        qhca_eq_broadcast(s, QHCA_EVENT_PORT_ACTIVE, QHCA_PORT_NUM);
    } else {
        qhca_count(s, QHCA_CNT_LINK_DOWNED, 1);
        qhca_eq_broadcast(s, QHCA_EVENT_PORT_DOWN, QHCA_PORT_NUM);
    }
}

/* The netdev's link changed (qhca-net.c), under the BQL. */
void qhca_fault_backend_link(QhcaState *s, bool up)
{
    QEMU_LOCK_GUARD(&s->lock);
    qhca_link_set(s, up, QHCA_LINK_BY_BACKEND);
}

/*
 * Should the wire lose the packet being sent?  While the link is down it
 * loses all of them; otherwise the next wire_drops_left ones.
 */
bool qhca_fault_wire_drop(QhcaState *s, const char **why)
{
    uint32_t left;

    if (!qhca_link_is_up(s)) {
        *why = "link down";
        return true;
    }
    left = qatomic_read(&s->wire_drops_left);
    while (left) {
        uint32_t seen = qatomic_cmpxchg(&s->wire_drops_left, left, left - 1);

        if (seen == left) {
            *why = "injected drop";
            return true;
        }
        left = seen;
    }
    return false;
}

/*
 * A device reset: the faults the guest injected go (drops still pending,
 * a link it took down); the cable stays as the host left it.  The port is
 * DOWN while the device is not ready, so no event is due.
 */
void qhca_fault_reset(QhcaState *s)
{
    qatomic_set(&s->wire_drops_left, 0);
    qatomic_set(&s->link_down_injected, false);
}

/* QP_FATAL: as on an error of the QP's own. */
static uint8_t qhca_fault_qp(QhcaState *s, const QhcaCmd *cmd, uint32_t qpn)
{
    QhcaQp *qp;

    if (!qhca_table_live(&s->qps, qpn)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_HANDLE, "no such QP");
    }
    qp = &s->qp[qpn];
    if (qp->state == QHCA_QPS_RESET) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_STATE, "QP in RESET");
    }
    if (qp->state == QHCA_QPS_ERR) {
        /* In ERR already: the event is all that is left to say. */
        qhca_eq_broadcast(s, QHCA_EVENT_QP_FATAL, qpn);
    } else {
        qhca_qp_error(s, qp, QHCA_EVENT_QP_FATAL);
    }
    return QHCA_AQ_SUCCESS;
}

static uint8_t qhca_fault_srq(QhcaState *s, const QhcaCmd *cmd,
                              uint32_t srqn)
{
    QhcaSrq *srq;

    if (!qhca_table_live(&s->srqs, srqn)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_HANDLE, "no such SRQ");
    }
    srq = &s->srq[srqn];
    if (srq->state == QHCA_SRQ_STATE_ERR) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_STATE,
                                "SRQ in error already");
    }
    qhca_srq_fail(s, srq);
    return QHCA_AQ_SUCCESS;
}

static uint8_t qhca_fault_cq(QhcaState *s, const QhcaCmd *cmd, uint32_t cqn)
{
    QhcaCq *cq;

    if (!qhca_table_live(&s->cqs, cqn)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_HANDLE, "no such CQ");
    }
    cq = &s->cq[cqn];
    if (cq->overrun) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_STATE,
                                "CQ in error already");
    }
    qhca_cq_fail(s, cq);
    return QHCA_AQ_SUCCESS;
}

/* INJECT_FAULT, under the device lock. */
uint8_t qhca_fault_inject(QhcaState *s, const QhcaCmd *cmd,
                          const struct qhca_cmd_inject_fault *p)
{
    uint16_t type = le16_to_cpu(p->type);
    uint32_t handle = le32_to_cpu(p->handle);
    uint8_t status = QHCA_AQ_SUCCESS;

    if (p->rsvd0 || p->rsvd1) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "reserved field set");
    }
    if (type >= ARRAY_SIZE(qhca_fault_names) || !qhca_fault_names[type]) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "unknown fault type");
    }
    trace_qhca_fault(qhca_fault_names[type], handle);

    switch (type) {
    case QHCA_FAULT_LINK_DOWN:
    case QHCA_FAULT_LINK_UP:
    case QHCA_FAULT_AQ_HANG:
        if (handle) {
            return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                    "handle must be 0");
        }
        if (type == QHCA_FAULT_AQ_HANG) {
            /* qhca_aq_process() stops after this very command. */
            trace_qhca_fault_aq_hang(cmd->cmd_id);
            s->aq.hung = true;
        } else {
            qhca_link_set(s, type == QHCA_FAULT_LINK_UP,
                          QHCA_LINK_BY_GUEST);
        }
        break;
    case QHCA_FAULT_DROP:
        if (handle > QHCA_FAULT_MAX_DROP) {
            return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                    "drop count above QHCA_FAULT_MAX_DROP");
        }
        /* A new count replaces what is left of the old one. */
        trace_qhca_fault_drop(handle,
                              qatomic_xchg(&s->wire_drops_left, handle));
        break;
    case QHCA_FAULT_QP_FATAL:
        status = qhca_fault_qp(s, cmd, handle);
        break;
    case QHCA_FAULT_SRQ_ERR:
        status = qhca_fault_srq(s, cmd, handle);
        break;
    case QHCA_FAULT_CQ_ERR:
        status = qhca_fault_cq(s, cmd, handle);
        break;
    default:
        g_assert_not_reached();
    }
    if (status == QHCA_AQ_SUCCESS) {
        qhca_count(s, QHCA_CNT_FAULTS_INJECTED, 1);
    }
    return status;
}

/* The QOM property link-up: the host pulls the cable or plugs it in. */
static bool qhca_link_up_get(Object *obj, Error **errp)
{
    return qatomic_read(&QHCA(obj)->link_up);
}

static void qhca_link_up_set(Object *obj, bool value, Error **errp)
{
    QhcaState *s = QHCA(obj);

    if (!DEVICE(obj)->realized) {
        /* No lock, no EQ yet: the device starts with the cable so. */
        qatomic_set(&s->link_up, value);
        return;
    }
    QEMU_LOCK_GUARD(&s->lock);
    qhca_link_set(s, value, QHCA_LINK_BY_HOST);
}

void qhca_fault_class_init(ObjectClass *klass)
{
    object_class_property_add_bool(klass, "link-up", qhca_link_up_get,
                                   qhca_link_up_set);
    object_class_property_set_description(klass, "link-up",
        "the cable: false pulls it (port DOWN), true plugs it back in");
}

void qhca_fault_instance_init(QhcaState *s)
{
    s->link_up = true;
}
