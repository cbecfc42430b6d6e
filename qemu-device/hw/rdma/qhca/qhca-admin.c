/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qhca admin queue: the SQ/CQ ring pair the driver sends commands on.
 *
 * The SQ doorbell only records the producer index and schedules a bottom
 * half; commands run there, in order, out of the MMIO handler.  The bottom
 * half is guarded against re-entry from its own DMA, and it stops when the
 * CQ is full and resumes when the CQ doorbell frees a slot.
 *
 * Commands run under the device lock: the engine thread shares the
 * objects they create and destroy.
 *
 * One slot of each ring stays unused: indices are ring positions, so a
 * full ring and an empty one would otherwise look the same.
 *
 * INJECT_FAULT AQ_HANG (1.3) sets aq.hung: from that command on, the queue
 * neither runs nor completes anything, and its doorbells only record their
 * index, until a reset or ENABLE cleared: a hung queue stays hung while
 * disabled, and the next ENABLE starts it afresh (qhca_aq_start()).  Only
 * the BQL holder (MMIO, the bottom half) touches the flag.
 */
#include "qemu/osdep.h"
#include "qemu/lockable.h"
#include "qemu/main-loop.h"
#include "qhca.h"
#include "trace.h"

static inline uint32_t qhca_aq_mask(QhcaAdminQueue *aq)
{
    return aq->entries - 1;
}

static void qhca_aq_bad_doorbell(QhcaState *s, uint32_t reg, uint32_t val,
                                 const char *why)
{
    qhca_guest_error(s, QHCA_ERR_BAD_DOORBELL, bad_doorbell,
                     "register 0x%x value 0x%x: %s", reg, val, why);
}

static bool qhca_aq_post_cqe(QhcaState *s, struct qhca_aq_cqe *cqe)
{
    QhcaAdminQueue *aq = &s->aq;
    uint64_t addr = aq->cq_base + (uint64_t)aq->cq_tail * sizeof(*cqe);

    if (!qhca_dma_write_entry(s, addr, cqe, sizeof(*cqe),
                              offsetof(struct qhca_aq_cqe, flags),
                              aq->phase)) {
        qhca_dma_ring_failed(s, "admin CQ", addr);
        return false;
    }
    trace_qhca_cqe(le16_to_cpu(cqe->cmd_id), cqe->status,
                   le32_to_cpu(cqe->result), aq->cq_tail, aq->phase);

    aq->cq_tail = (aq->cq_tail + 1) & qhca_aq_mask(aq);
    if (aq->cq_tail == 0) {
        aq->phase ^= 1;
    }
    qhca_irq(s, aq->vector);
    return true;
}

static void qhca_aq_process(void *opaque)
{
    QhcaState *s = opaque;
    QhcaAdminQueue *aq = &s->aq;
    uint32_t mask = qhca_aq_mask(aq);

    QEMU_LOCK_GUARD(&s->lock);
    /* At most one pass over the ring: the SQ tail only moves by MMIO. */
    while (qhca_is_ready(s) && !aq->hung && aq->sq_head != aq->sq_tail) {
        struct qhca_aq_sqe sqe;
        struct qhca_aq_cqe cqe = { 0 };
        uint64_t addr;
        uint32_t result;
        uint8_t status;

        if (((aq->cq_tail + 1) & mask) == aq->cq_head) {
            trace_qhca_aq_cq_full(aq->cq_head, aq->cq_tail);
            return;
        }

        addr = aq->sq_base + (uint64_t)aq->sq_head * sizeof(sqe);
        if (!qhca_dma_read(s, addr, &sqe, sizeof(sqe))) {
            qhca_dma_ring_failed(s, "admin SQ", addr);
            return;
        }
        aq->sq_head = (aq->sq_head + 1) & mask;

        status = qhca_exec_command(s, &sqe, &result);
        if (!qhca_is_ready(s)) {
            /* The command hit a fatal DMA error; nothing more is written. */
            return;
        }
        if (aq->hung) {
            /* AQ_HANG: not even its own completion. */
            trace_qhca_aq_hung(le16_to_cpu(sqe.cmd_id), aq->sq_head);
            return;
        }

        cqe.cmd_id = sqe.cmd_id;
        cqe.status = status;
        cqe.result = cpu_to_le32(result);
        cqe.sq_head = cpu_to_le16(aq->sq_head);
        if (!qhca_aq_post_cqe(s, &cqe)) {
            return;
        }
    }
}

void qhca_aq_init(QhcaState *s)
{
    s->aq.bh = qemu_bh_new_guarded(qhca_aq_process, s,
                                   &DEVICE(s)->mem_reentrancy_guard);
}

void qhca_aq_fini(QhcaState *s)
{
    qemu_bh_delete(s->aq.bh);
    s->aq.bh = NULL;
}

void qhca_aq_reset(QhcaState *s)
{
    QEMUBH *bh = s->aq.bh;

    qemu_bh_cancel(bh);
    memset(&s->aq, 0, sizeof(s->aq));
    s->aq.bh = bh;
}

/* The checks of ENABLE; a failure is recorded as AQ_CONFIG. */
bool qhca_aq_check_config(QhcaState *s)
{
    QhcaAdminQueue *aq = &s->aq;
    unsigned depth = QHCA_FIELD_GET(QHCA_AQ_CFG_DEPTH_LOG2, aq->cfg);
    unsigned vector = QHCA_FIELD_GET(QHCA_AQ_CFG_MSIX_VECTOR, aq->cfg);
    const char *why = NULL;

    if (depth < QHCA_AQ_MIN_DEPTH_LOG2 || depth > QHCA_AQ_MAX_DEPTH_LOG2) {
        why = "depth out of range";
    } else if (vector >= s->params.msix_vectors) {
        why = "no such MSI-X vector";
    } else if (aq->sq_base % QHCA_QUEUE_ALIGN ||
               aq->cq_base % QHCA_QUEUE_ALIGN) {
        why = "ring base not 64-byte aligned";
    } else if (!qhca_dma_in_ram(s, aq->sq_base,
                                sizeof(struct qhca_aq_sqe) << depth, false)) {
        why = "SQ not in guest RAM";
    } else if (!qhca_dma_in_ram(s, aq->cq_base,
                                sizeof(struct qhca_aq_cqe) << depth, true)) {
        why = "CQ not in guest RAM";
    }

    if (why) {
        qhca_guest_error(s, QHCA_ERR_AQ_CONFIG, aq_config,
                         "SQ 0x%" PRIx64 " CQ 0x%" PRIx64 " AQ_CFG 0x%x: %s",
                         aq->sq_base, aq->cq_base, aq->cfg, why);
        return false;
    }
    return true;
}

void qhca_aq_start(QhcaState *s)
{
    QhcaAdminQueue *aq = &s->aq;

    aq->entries = 1u << QHCA_FIELD_GET(QHCA_AQ_CFG_DEPTH_LOG2, aq->cfg);
    aq->vector = QHCA_FIELD_GET(QHCA_AQ_CFG_MSIX_VECTOR, aq->cfg);
    aq->sq_head = 0;
    aq->sq_tail = 0;
    aq->cq_head = 0;
    aq->cq_tail = 0;
    aq->phase = 1;
    /* ENABLE was cleared (or the device reset) since: an AQ_HANG is over. */
    aq->hung = false;
    trace_qhca_enable(aq->sq_base, aq->cq_base, aq->entries, aq->vector);
}

void qhca_aq_stop(QhcaState *s)
{
    qemu_bh_cancel(s->aq.bh);
}

void qhca_aq_sq_doorbell(QhcaState *s, uint32_t val)
{
    QhcaAdminQueue *aq = &s->aq;

    if (val >= aq->entries) {
        qhca_aq_bad_doorbell(s, QHCA_REG_AQ_SQ_DB, val, "index outside ring");
        return;
    }
    trace_qhca_aq_sq_doorbell(val);
    aq->sq_tail = val;
    if (aq->hung) {
        /* Nothing would run: do not wake the bottom half for nothing. */
        trace_qhca_aq_hung_doorbell(QHCA_REG_AQ_SQ_DB, val);
        return;
    }
    qemu_bh_schedule(aq->bh);
}

void qhca_aq_cq_doorbell(QhcaState *s, uint32_t val)
{
    QhcaAdminQueue *aq = &s->aq;
    uint32_t mask = qhca_aq_mask(aq);

    if (val >= aq->entries) {
        qhca_aq_bad_doorbell(s, QHCA_REG_AQ_CQ_DB, val, "index outside ring");
        return;
    }
    /* The driver can only consume what the device has written. */
    if (((val - aq->cq_head) & mask) > ((aq->cq_tail - aq->cq_head) & mask)) {
        qhca_aq_bad_doorbell(s, QHCA_REG_AQ_CQ_DB, val,
                             "consumer index beyond the producer");
        return;
    }
    trace_qhca_aq_cq_doorbell(val);
    aq->cq_head = val;
    if (aq->hung) {
        trace_qhca_aq_hung_doorbell(QHCA_REG_AQ_CQ_DB, val);
        return;
    }
    if (aq->sq_head != aq->sq_tail) {
        qemu_bh_schedule(aq->bh);
    }
}
