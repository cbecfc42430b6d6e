/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qhca doorbell pages (BAR 2): one 4 KiB page per UAR, mapped by user
 * space, so everything written here may come from an unprivileged process.
 *
 * A doorbell only records: the index goes to an atomic field of its QP or
 * CQ, which is handed to the engine (qhca-engine.c; for a QP, the engine
 * may run its round right here when it is idle).  The handler never waits
 * for the device lock (it only tries it), so a vCPU ringing a doorbell
 * never waits for the engine.  It reads the object's fields without the lock to
 * reject bad doorbells at once (ERROR = BAD_DOORBELL, as the spec wants);
 * the engine checks the index again before it uses it.
 */
#include "qemu/osdep.h"
#include "qhca.h"
#include "trace.h"

static bool qhca_db_offset_valid(uint32_t offset)
{
    switch (offset) {
    case QHCA_DB_SQ:
    case QHCA_DB_RQ:
    case QHCA_DB_CQ_ARM:
    case QHCA_DB_CQ_ARM_SOL:
    case QHCA_DB_SRQ:
        return true;
    default:
        return false;
    }
}

static void qhca_db_bad(QhcaState *s, uint64_t page, uint32_t offset,
                        uint32_t val, const char *why)
{
    qhca_count(s, QHCA_CNT_BAD_DOORBELLS, 1);
    qhca_guest_error(s, QHCA_ERR_BAD_DOORBELL, db_queue,
                     "page %" PRIu64 " offset 0x%x value 0x%x: %s",
                     page, offset, val, why);
}

/* DB_SQ, DB_RQ: a new producer index for a QP of this page's UAR. */
static void qhca_db_qp(QhcaState *s, uint64_t page, uint32_t offset,
                       uint32_t val)
{
    uint32_t qpn = QHCA_FIELD_GET(QHCA_DB_QUEUE_NUM, val);
    uint16_t idx = QHCA_FIELD_GET(QHCA_DB_QUEUE_IDX, val);
    bool sq = offset == QHCA_DB_SQ;
    uint32_t entries;
    uint16_t ci;
    QhcaQp *qp;

    if (!qhca_table_live(&s->qps, qpn)) {
        qhca_db_bad(s, page, offset, val, "no such QP");
        return;
    }
    qp = &s->qp[qpn];
    if (qatomic_read(&qp->uar) != page) {
        qhca_db_bad(s, page, offset, val, "QP of another UAR");
        return;
    }
    if (!sq && (qatomic_read(&qp->flags) & QHCA_QP_F_SRQ)) {
        qhca_db_bad(s, page, offset, val, "QP on an SRQ has no RQ");
        return;
    }
    if (qatomic_read(&qp->state) == QHCA_QPS_RESET) {
        trace_qhca_db_ignored(qpn, offset, "QP in RESET");
        return;
    }
    ci = sq ? qatomic_read(&qp->sq_comp) : qatomic_read(&qp->rq_ci);
    entries = sq ? qatomic_read(&qp->sq_entries) :
                   qatomic_read(&qp->rq_entries);
    if ((uint16_t)(idx - ci) > entries) {
        qhca_db_bad(s, page, offset, val, "index beyond the ring");
        return;
    }
    qhca_count(s, QHCA_CNT_DOORBELLS, 1);
    if (sq) {
        qatomic_set(&qp->db_sq_pi, idx);
        qhca_engine_doorbell_qp(s, qp, QHCA_KICK_SQ);
    } else {
        qatomic_set(&qp->db_rq_pi, idx);
        qhca_engine_doorbell_qp(s, qp, QHCA_KICK_RQ);
    }
}

/* DB_CQ_ARM, DB_CQ_ARM_SOL: arm a CQ of this page's UAR. */
static void qhca_db_cq(QhcaState *s, uint64_t page, uint32_t offset,
                       uint32_t val)
{
    uint32_t cqn = QHCA_FIELD_GET(QHCA_DB_QUEUE_NUM, val);
    uint16_t idx = QHCA_FIELD_GET(QHCA_DB_QUEUE_IDX, val);
    QhcaCq *cq;

    if (!qhca_table_live(&s->cqs, cqn)) {
        qhca_db_bad(s, page, offset, val, "no such CQ");
        return;
    }
    cq = &s->cq[cqn];
    if (qatomic_read(&cq->uar) != page) {
        qhca_db_bad(s, page, offset, val, "CQ of another UAR");
        return;
    }
    qhca_count(s, QHCA_CNT_DOORBELLS, 1);
    qatomic_set(&cq->arm_req, QHCA_CQ_ARM_REQ_VALID | idx |
                (offset == QHCA_DB_CQ_ARM_SOL ? QHCA_CQ_ARM_REQ_SOL : 0));
    qhca_engine_kick_cq(s, cq);
}

static uint64_t qhca_db_read(void *opaque, hwaddr addr, unsigned size)
{
    trace_qhca_db_read(addr, size);
    return 0;
}

static void qhca_db_write(void *opaque, hwaddr addr, uint64_t data,
                          unsigned size)
{
    QhcaState *s = opaque;
    uint64_t page = addr >> QHCA_DB_PAGE_SHIFT;
    uint32_t offset = addr & (QHCA_DB_PAGE_SIZE - 1);

    qatomic_inc(&s->counters.doorbells);
    trace_qhca_db_write(page, offset, size, data);

    if (!qhca_is_ready(s)) {
        qhca_guest_error(s, QHCA_ERR_NOT_READY, db_not_ready,
                         "doorbell page %" PRIu64 " offset 0x%x = 0x%" PRIx64
                         " while not ready", page, offset, data);
    } else if (page >= s->uars.size || !qhca_table_live(&s->uars, page)) {
        qhca_count(s, QHCA_CNT_BAD_DOORBELLS, 1);
        qhca_guest_error(s, QHCA_ERR_BAD_DOORBELL, db_page,
                         "page %" PRIu64 " offset 0x%x size %u: %s",
                         page, offset, size, "page not allocated");
    } else if (size != 4 || !qhca_db_offset_valid(offset)) {
        qhca_count(s, QHCA_CNT_BAD_DOORBELLS, 1);
        qhca_guest_error(s, QHCA_ERR_BAD_DOORBELL, db_page,
                         "page %" PRIu64 " offset 0x%x size %u: %s",
                         page, offset, size, "no doorbell here");
    } else if (offset == QHCA_DB_SQ || offset == QHCA_DB_RQ) {
        qhca_db_qp(s, page, offset, data);
    } else if (offset == QHCA_DB_SRQ) {
        qhca_srq_doorbell(s, page, data);
    } else {
        qhca_db_cq(s, page, offset, data);
    }
}

const MemoryRegionOps qhca_db_ops = {
    .read = qhca_db_read,
    .write = qhca_db_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 1,
        .max_access_size = 8,
        .unaligned = true,
    },
    .impl = {
        .min_access_size = 1,
        .max_access_size = 8,
        .unaligned = true,
    },
};
