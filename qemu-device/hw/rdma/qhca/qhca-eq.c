/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qhca event queues: rings the device writes events to and the driver
 * consumes, reporting its position with the EQ_DB register.
 *
 * As on the admin CQ, one slot stays free so that the consumer index alone
 * tells a full ring from an empty one.  An event that finds its queue full
 * is dropped and counted; the device never overwrites an unread entry.
 *
 * Events come from admin commands and from the engine thread; both hold
 * the device lock, which also guards the EQ doorbell.
 */
#include "qemu/osdep.h"
#include "qemu/bitops.h"
#include "qemu/lockable.h"
#include "qhca.h"
#include "trace.h"

static void qhca_eq_post(QhcaState *s, uint32_t eqn, QhcaEq *eq,
                         enum qhca_event_type type, uint32_t data)
{
    struct qhca_eqe eqe = {
        .type = type,
        .data = cpu_to_le32(data),
    };
    uint32_t mask = eq->entries - 1;
    uint64_t addr;

    if (!(eq->event_mask & (1u << type))) {
        return;
    }
    if (((eq->tail + 1) & mask) == eq->head) {
        eq->dropped++;
        qhca_guest_error(s, QHCA_ERR_NONE, eq_full,
                         "EQ %u full, event %u dropped (%" PRIu64 " so far)",
                         eqn, type, eq->dropped);
        return;
    }

    addr = eq->base + (uint64_t)eq->tail * sizeof(eqe);
    if (!qhca_dma_write_entry(s, addr, &eqe, sizeof(eqe),
                              offsetof(struct qhca_eqe, flags), eq->phase)) {
        qhca_dma_ring_failed(s, "EQ", addr);
        return;
    }
    trace_qhca_eqe(eqn, type, data, eq->tail, eq->phase);

    eq->tail = (eq->tail + 1) & mask;
    if (eq->tail == 0) {
        eq->phase ^= 1;
    }
    qhca_irq(s, eq->vector);
}

/* An event for one EQ (a completion event for its CQ's EQ). */
void qhca_eq_event(QhcaState *s, uint32_t eqn, enum qhca_event_type type,
                   uint32_t data)
{
    if (!qhca_table_live(&s->eqs, eqn)) {
        /* The driver destroyed the EQ its CQ reports to. */
        trace_qhca_eq_no_eq(eqn, type, data);
        return;
    }
    qhca_eq_post(s, eqn, &s->eq[eqn], type, data);
}

/* An asynchronous event goes to every EQ that asked for its type. */
void qhca_eq_broadcast(QhcaState *s, enum qhca_event_type type,
                       uint32_t data)
{
    unsigned long eqn;

    trace_qhca_event(type, data);
    qhca_count(s, QHCA_CNT_ASYNC_EVENTS, 1);
    QHCA_TABLE_FOR_EACH(&s->eqs, eqn) {
        qhca_eq_post(s, eqn, &s->eq[eqn], type, data);
    }
}

uint8_t qhca_eq_create(QhcaState *s, const QhcaCmd *cmd,
                       const struct qhca_cmd_create_eq *p, uint32_t *eqn)
{
    uint64_t base = le64_to_cpu(p->base_addr);
    uint16_t vector = le16_to_cpu(p->msix_vector);
    QhcaEq *eq;

    if (p->rsvd0 || p->rsvd1) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "reserved field set");
    }
    if (p->depth_log2 < QHCA_EQ_MIN_DEPTH_LOG2 ||
        p->depth_log2 > QHCA_MAX_EQ_DEPTH_LOG2) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "depth out of range");
    }
    if (vector >= s->params.msix_vectors) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "no such MSI-X vector");
    }
    if (base % QHCA_QUEUE_ALIGN) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "base not 64-byte aligned");
    }
    if (!qhca_dma_in_ram(s, base, sizeof(struct qhca_eqe) << p->depth_log2,
                         true)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_ADDRESS,
                                "ring not in guest RAM");
    }
    if (!qhca_table_alloc(&s->eqs, eqn)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_NO_RESOURCES, "table full");
    }

    eq = &s->eq[*eqn];
    *eq = (QhcaEq) {
        .base = base,
        .entries = 1u << p->depth_log2,
        .event_mask = le32_to_cpu(p->event_mask),
        .vector = vector,
        .phase = 1,
    };
    trace_qhca_eq_create(*eqn, base, eq->entries, vector, eq->event_mask);

    /* Tell the driver the port state now, rather than make it poll. */
    if (qhca_port_active(s)) {
        qhca_eq_post(s, *eqn, eq, QHCA_EVENT_PORT_ACTIVE, QHCA_PORT_NUM);
    }
    return QHCA_AQ_SUCCESS;
}

uint8_t qhca_eq_destroy(QhcaState *s, const QhcaCmd *cmd, uint32_t eqn)
{
    if (!qhca_table_live(&s->eqs, eqn)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_HANDLE,
                                "EQ not allocated");
    }
    trace_qhca_eq_destroy(eqn, s->eq[eqn].dropped);
    qhca_table_free(&s->eqs, eqn);
    memset(&s->eq[eqn], 0, sizeof(s->eq[eqn]));
    return QHCA_AQ_SUCCESS;
}

void qhca_eq_doorbell(QhcaState *s, uint32_t val)
{
    uint32_t eqn = QHCA_FIELD_GET(QHCA_EQ_DB_EQN, val);
    uint32_t idx = QHCA_FIELD_GET(QHCA_EQ_DB_CONS_IDX, val);
    const char *why = NULL;
    QhcaEq *eq;
    uint32_t mask;

    QEMU_LOCK_GUARD(&s->lock);
    if (!qhca_table_live(&s->eqs, eqn)) {
        why = "no such EQ";
    } else {
        eq = &s->eq[eqn];
        mask = eq->entries - 1;
        if (idx >= eq->entries) {
            why = "index outside ring";
        } else if (((idx - eq->head) & mask) > ((eq->tail - eq->head) & mask)) {
            why = "consumer index beyond the producer";
        } else {
            trace_qhca_eq_doorbell(eqn, idx);
            eq->head = idx;
            return;
        }
    }
    qhca_guest_error(s, QHCA_ERR_BAD_DOORBELL, bad_doorbell,
                     "register 0x%x value 0x%x: %s", QHCA_REG_EQ_DB, val, why);
}
