/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qhca completion queues: CREATE_CQ/DESTROY_CQ/RESIZE_CQ, writing CQEs,
 * arming.
 *
 * Every slot of the ring is usable.  The device counts the CQEs it wrote
 * (pi) and remembers the consumer index it last read from the consumer
 * record (ci); only when pi - ci reaches the ring size does it read the
 * record again.  If the ring is still full the CQ overruns: it is in error
 * from then on and the caller moves its QP to ERR.
 */
#include "qemu/osdep.h"
#include "qemu/cutils.h"
#include "qemu/host-utils.h"
#include "qhca.h"
#include "trace.h"

void qhca_cq_init(QhcaState *s)
{
    uint32_t i;

    qhca_table_init(&s->cqs, "cq", QHCA_FIRST_CQN, s->params.max_cqs);
    s->cq = g_new0(QhcaCq, s->cqs.size);
    for (i = 0; i < s->cqs.size; i++) {
        s->cq[i].cqn = i;
    }
}

void qhca_cq_fini(QhcaState *s)
{
    qhca_table_fini(&s->cqs);
    g_free(s->cq);
    s->cq = NULL;
}

/*
 * Forget a CQ.  Its kick stays, as the FIFO entry it stands for does (the
 * engine skips dead CQs); an arm request does not, lest it arm the next
 * CQ with this number.
 */
static void qhca_cq_clear(QhcaCq *cq)
{
    uint32_t cqn = cq->cqn;
    uint32_t kick = qatomic_read(&cq->kick);

    memset(cq, 0, sizeof(*cq));
    cq->cqn = cqn;
    qatomic_set(&cq->kick, kick);
}

void qhca_cq_reset(QhcaState *s)
{
    uint32_t i;

    for (i = 0; i < s->cqs.size; i++) {
        qhca_cq_clear(&s->cq[i]);
    }
    qhca_table_reset(&s->cqs);
}

/* Engine rounds RESIZE_CQ gives the work posted before it, at most. */
#define QHCA_RESIZE_CQ_DRAIN_ROUNDS 256

/* CREATE_CQ's and RESIZE_CQ's ring and record: depth and alignment. */
static uint8_t qhca_cq_check_ring(QhcaState *s, const QhcaCmd *cmd,
                                  uint64_t ring, uint64_t dbrec,
                                  uint8_t depth_log2)
{
    if (depth_log2 < 1 || depth_log2 > 31 ||
        (1u << depth_log2) > s->params.max_cqe) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "depth out of range");
    }
    if (ring % QHCA_QUEUE_ALIGN) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "ring not 64-byte aligned");
    }
    if (dbrec % sizeof(uint32_t)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "consumer record not 4-byte aligned");
    }
    return QHCA_AQ_SUCCESS;
}

/* The same, checked by qhca_cq_check_ring(): both in guest RAM. */
static uint8_t qhca_cq_check_ram(QhcaState *s, const QhcaCmd *cmd,
                                 uint64_t ring, uint64_t dbrec,
                                 uint8_t depth_log2)
{
    if (!qhca_dma_in_ram(s, ring, (uint64_t)sizeof(struct qhca_cqe) <<
                         depth_log2, true)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_ADDRESS,
                                "ring not in guest RAM");
    }
    if (!qhca_dma_in_ram(s, dbrec, sizeof(uint32_t), false)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_ADDRESS,
                                "consumer record not in guest RAM");
    }
    return QHCA_AQ_SUCCESS;
}

uint8_t qhca_cq_create(QhcaState *s, const QhcaCmd *cmd,
                       const struct qhca_cmd_create_cq *p, uint32_t *cqn)
{
    uint64_t ring = le64_to_cpu(p->ring_addr);
    uint64_t dbrec = le64_to_cpu(p->dbrec_addr);
    uint32_t eqn = le32_to_cpu(p->eqn);
    uint32_t uar = le32_to_cpu(p->uar);
    uint8_t status;
    QhcaCq *cq;

    if (!buffer_is_zero(p->rsvd0, sizeof(p->rsvd0)) || p->rsvd1) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "reserved field set");
    }
    status = qhca_cq_check_ring(s, cmd, ring, dbrec, p->depth_log2);
    if (status != QHCA_AQ_SUCCESS) {
        return status;
    }
    if (!qhca_table_live(&s->eqs, eqn)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_HANDLE, "no such EQ");
    }
    if (!qhca_table_live(&s->uars, uar)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_HANDLE, "no such UAR");
    }
    status = qhca_cq_check_ram(s, cmd, ring, dbrec, p->depth_log2);
    if (status != QHCA_AQ_SUCCESS) {
        return status;
    }
    if (!qhca_table_alloc(&s->cqs, cqn)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_NO_RESOURCES, "table full");
    }

    cq = &s->cq[*cqn];
    qhca_cq_clear(cq);
    cq->ring = ring;
    cq->dbrec = dbrec;
    cq->depth_log2 = p->depth_log2;
    cq->entries = 1u << p->depth_log2;
    cq->eqn = eqn;
    qatomic_set(&cq->uar, uar);
    s->uar_refs[uar]++;
    trace_qhca_cq_create(*cqn, ring, dbrec, cq->entries, eqn, uar);
    return QHCA_AQ_SUCCESS;
}

uint8_t qhca_cq_destroy(QhcaState *s, const QhcaCmd *cmd, uint32_t cqn)
{
    QhcaCq *cq;

    if (!qhca_table_live(&s->cqs, cqn)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_HANDLE, "no such CQ");
    }
    cq = &s->cq[cqn];
    if (cq->qp_refs) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_STATE,
                                "CQ in use by a QP");
    }
    trace_qhca_cq_destroy(cqn, cq->pi);
    s->uar_refs[cq->uar]--;
    qhca_cq_clear(cq);
    qhca_table_free(&s->cqs, cqn);
    return QHCA_AQ_SUCCESS;
}

/*
 * RESIZE_CQ (1.6): the new ring is written whole before the CQ switches to
 * it, each slot as the device would have left it had it always been the
 * ring: the outstanding CQEs (ci .. pi) at their free-running indexes with
 * the phase the new depth gives them, every other slot with WRITTEN and
 * the phase of the pass before its next index, so that it reads as
 * consumed whatever the consumer had put there.  The engine posts CQEs
 * under the device lock, as commands run, so none arrives meanwhile.
 */
static bool qhca_cq_fill_ring(QhcaState *s, QhcaCq *cq, uint64_t ring,
                              uint8_t depth_log2, uint32_t ci)
{
    uint32_t entries = 1u << depth_log2;
    uint32_t n;

    for (n = 0; n < entries; n++) {
        uint32_t idx = ci + n;
        uint64_t addr = ring + (uint64_t)(idx & (entries - 1)) *
                        sizeof(struct qhca_cqe);
        uint8_t phase = ((idx >> depth_log2) & 1) ^ 1;
        struct qhca_cqe cqe = { 0 };

        if (n < cq->pi - ci) {
            uint64_t old = cq->ring + (uint64_t)(idx & (cq->entries - 1)) *
                           sizeof(cqe);

            if (!qhca_dma_read(s, old, &cqe, sizeof(cqe))) {
                return false;
            }
            cqe.owner = QHCA_CQE_OWNER_WRITTEN;
            if (!qhca_dma_write_entry(s, addr, &cqe, sizeof(cqe),
                                      offsetof(struct qhca_cqe, owner),
                                      phase)) {
                return false;
            }
        } else {
            cqe.owner = QHCA_CQE_OWNER_WRITTEN | (phase ^ 1);
            if (!qhca_dma_write(s, addr, &cqe, sizeof(cqe))) {
                return false;
            }
        }
    }
    return true;
}

uint8_t qhca_cq_resize(QhcaState *s, const QhcaCmd *cmd,
                       const struct qhca_cmd_resize_cq *p)
{
    uint64_t ring = le64_to_cpu(p->ring_addr);
    uint64_t dbrec = le64_to_cpu(p->dbrec_addr);
    uint32_t cqn = le32_to_cpu(p->cqn);
    uint32_t ci = le32_to_cpu(p->ci);
    uint64_t size;
    uint8_t status;
    unsigned n;
    QhcaCq *cq;

    if (!buffer_is_zero(p->rsvd, sizeof(p->rsvd))) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "reserved field set");
    }
    if (!qhca_table_live(&s->cqs, cqn)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_HANDLE, "no such CQ");
    }
    cq = &s->cq[cqn];
    status = qhca_cq_check_ring(s, cmd, ring, dbrec, p->depth_log2);
    if (status == QHCA_AQ_SUCCESS) {
        status = qhca_cq_check_ram(s, cmd, ring, dbrec, p->depth_log2);
    }
    if (status != QHCA_AQ_SUCCESS) {
        return status;
    }
    size = (uint64_t)sizeof(struct qhca_cqe) << p->depth_log2;
    /* The copy would read CQEs it had already overwritten. */
    if (ring < cq->ring + (uint64_t)cq->entries * sizeof(struct qhca_cqe) &&
        cq->ring < ring + size) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "new ring overlaps the old one");
    }
    if (cq->overrun) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_STATE, "CQ in error");
    }
    /*
     * The consumer is neither ahead of the producer nor behind what its
     * record said last: pi - ci is what is outstanding.
     */
    if (cq->pi - ci > cq->entries || (int32_t)(ci - cq->ci) < 0) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "consumer index out of range");
    }
    /*
     * Work posted before the command: let the engine take the doorbells
     * rung so far and finish what finishes at once (a loopback message and
     * its ACK), so that its completions count as outstanding below, as on
     * hardware that is faster than its driver.  Without this, a resize
     * that raced the engine thread could succeed and the CQEs still to
     * come would overrun the smaller ring (rdma-core's test_resize_cq).
     * Bounded: work waiting on a timer or a remote peer stays in flight.
     */
    for (n = 0; n < QHCA_RESIZE_CQ_DRAIN_ROUNDS; n++) {
        if (!qhca_engine_round_locked(s)) {
            break;
        }
    }
    /*
     * The CQ's state, not a malformed command: a driver cannot know how
     * many CQEs the device adds while it asks (not a guest error).
     */
    if (cq->pi - ci > (1u << p->depth_log2)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_STATE,
                                "more CQEs outstanding than the ring holds");
    }
    /* Until the last slot is written the old ring stays the CQ's. */
    if (!qhca_cq_fill_ring(s, cq, ring, p->depth_log2, ci)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_ADDRESS,
                                "ring copy left guest RAM");
    }
    trace_qhca_cq_resize(cqn, ring, dbrec, 1u << p->depth_log2, ci, cq->pi);
    cq->ring = ring;
    cq->dbrec = dbrec;
    cq->depth_log2 = p->depth_log2;
    cq->entries = 1u << p->depth_log2;
    cq->ci = ci;
    return QHCA_AQ_SUCCESS;
}

static void qhca_cq_notify(QhcaState *s, QhcaCq *cq)
{
    trace_qhca_cq_event(cq->cqn, cq->eqn);
    cq->armed = QHCA_CQ_DISARMED;
    qhca_count(s, QHCA_CNT_COMPLETION_EVENTS, 1);
    qhca_eq_event(s, cq->eqn, QHCA_EVENT_COMPLETION, cq->cqn);
}

/* Is the ring full?  Reads the consumer record only when it seems so. */
static bool qhca_cq_full(QhcaState *s, QhcaCq *cq)
{
    uint32_t ci;

    if (cq->pi - cq->ci < cq->entries) {
        return false;
    }
    if (!qhca_dma_read(s, cq->dbrec, &ci, sizeof(ci))) {
        qhca_dma_ring_failed(s, "CQ consumer record", cq->dbrec);
        return true;
    }
    ci = le32_to_cpu(ci);
    /* The consumer cannot be ahead of the producer. */
    if (cq->pi - ci > cq->entries) {
        qhca_guest_error(s, QHCA_ERR_NONE, cq_dbrec,
                         "CQ %u consumer record %u beyond producer %u",
                         cq->cqn, ci, cq->pi);
        return true;
    }
    cq->ci = ci;
    return cq->pi - cq->ci >= cq->entries;
}

static const uint8_t qhca_status_counter[] = {
    [QHCA_WC_LOC_LEN_ERR] = QHCA_CNT_ERR_LOC_LEN,
    [QHCA_WC_LOC_QP_OP_ERR] = QHCA_CNT_ERR_LOC_QP_OP,
    [QHCA_WC_LOC_PROT_ERR] = QHCA_CNT_ERR_LOC_PROT,
    [QHCA_WC_WR_FLUSH_ERR] = QHCA_CNT_ERR_WR_FLUSH,
    [QHCA_WC_REM_INV_REQ_ERR] = QHCA_CNT_ERR_REM_INV_REQ,
    [QHCA_WC_REM_ACCESS_ERR] = QHCA_CNT_ERR_REM_ACCESS,
    [QHCA_WC_REM_OP_ERR] = QHCA_CNT_ERR_REM_OP,
    [QHCA_WC_RETRY_EXC_ERR] = QHCA_CNT_ERR_RETRY_EXC,
    [QHCA_WC_RNR_RETRY_EXC_ERR] = QHCA_CNT_ERR_RNR_RETRY_EXC,
};

/*
 * Put @cq in error, as an overrun does and INJECT_FAULT CQ_ERR (1.3):
 * no CQE is written to it any more, the QP whose CQE is refused goes to
 * ERR, and every EQ that asked hears CQ_ERROR.
 */
void qhca_cq_fail(QhcaState *s, QhcaCq *cq)
{
    cq->overrun = true;
    qhca_eq_broadcast(s, QHCA_EVENT_CQ_ERROR, cq->cqn);
}

/*
 * Write a CQE to CQ @cqn: the entry, then its owner byte.  False if the
 * CQ is gone or in error, or overran now: the CQE is lost and the caller
 * moves its QP to ERR.
 */
bool qhca_cq_post(QhcaState *s, uint32_t cqn, struct qhca_cqe *cqe)
{
    QhcaCq *cq;
    uint64_t addr;
    uint8_t phase;
    bool notable;

    if (!qhca_table_live(&s->cqs, cqn)) {
        return false;
    }
    cq = &s->cq[cqn];
    if (cq->overrun) {
        trace_qhca_cqe_dropped(cqn, le32_to_cpu(cqe->qpn), cqe->status);
        return false;
    }
    if (qhca_cq_full(s, cq)) {
        if (!qhca_is_ready(s)) {
            return false;
        }
        qhca_count(s, QHCA_CNT_CQ_OVERRUNS, 1);
        trace_qhca_err_cq_overrun(cqn, cq->pi, cq->ci);
        qhca_cq_fail(s, cq);
        return false;
    }

    addr = cq->ring + ((uint64_t)(cq->pi & (cq->entries - 1)) *
                       sizeof(*cqe));
    phase = ((cq->pi >> cq->depth_log2) & 1) ^ 1;
    /*
     * The timestamp is QEMU_CLOCK_VIRTUAL in ns (QHCA_CQE_CLOCK_KHZ), not
     * the host's clock: it is the clock the guest keeps its time by and the
     * transport timers run on, and it stands still while the VM is stopped.
     */
    cqe->timestamp = cpu_to_le64(qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL));
    /* 1.3: never all zeroes, whatever the phase. */
    cqe->owner = QHCA_CQE_OWNER_WRITTEN;
    if (!qhca_dma_write_entry(s, addr, cqe, sizeof(*cqe),
                              offsetof(struct qhca_cqe, owner), phase)) {
        qhca_dma_ring_failed(s, "CQ", addr);
        return false;
    }
    trace_qhca_cqe_write(cqn, cq->pi, le32_to_cpu(cqe->qpn),
                         le16_to_cpu(cqe->wqe_idx), cqe->opcode, cqe->status,
                         le32_to_cpu(cqe->byte_len), phase);
    qhca_count(s, QHCA_CNT_CQES, 1);
    if (cqe->status < ARRAY_SIZE(qhca_status_counter) &&
        qhca_status_counter[cqe->status]) {
        qhca_count(s, qhca_status_counter[cqe->status], 1);
    }

    notable = cqe->status != QHCA_WC_SUCCESS ||
              (cqe->flags & QHCA_CQE_F_SOLICITED);
    if (notable) {
        cq->sol_pi = cq->pi;
        cq->has_sol = true;
    }
    qatomic_set(&cq->pi, cq->pi + 1);

    if (cq->armed == QHCA_CQ_ARMED_NEXT ||
        (cq->armed == QHCA_CQ_ARMED_SOL && notable)) {
        qhca_cq_notify(s, cq);
    }
    return true;
}

/*
 * Apply the last arm doorbell: arm for the next CQE (or the next notable
 * one), or fire at once if such a CQE already stands at or after the
 * consumer index the doorbell carried.
 */
void qhca_cq_arm(QhcaState *s, QhcaCq *cq)
{
    uint32_t req = qatomic_xchg(&cq->arm_req, 0);
    bool sol = req & QHCA_CQ_ARM_REQ_SOL;
    uint16_t idx = QHCA_FIELD_GET(QHCA_DB_QUEUE_IDX, req);
    uint32_t ci;

    if (!(req & QHCA_CQ_ARM_REQ_VALID) ||
        !qhca_table_live(&s->cqs, cq->cqn)) {
        return;
    }
    /* The 32-bit consumer index the 16 bits stand for. */
    ci = cq->pi - (uint16_t)(cq->pi - idx);
    if (cq->pi - ci > cq->entries) {
        qhca_count(s, QHCA_CNT_BAD_DOORBELLS, 1);
        qhca_guest_error(s, QHCA_ERR_BAD_DOORBELL, bad_cq_arm,
                         "CQ %u arm index %u beyond producer %u",
                         cq->cqn, idx, cq->pi);
        return;
    }
    trace_qhca_cq_arm(cq->cqn, sol, idx, cq->pi);
    cq->armed = sol ? QHCA_CQ_ARMED_SOL : QHCA_CQ_ARMED_NEXT;
    if (cq->overrun) {
        return;
    }
    if (sol ? cq->has_sol && (int32_t)(cq->sol_pi - ci) >= 0 :
              cq->pi != ci) {
        qhca_cq_notify(s, cq);
    }
}
