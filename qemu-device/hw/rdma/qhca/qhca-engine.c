/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qhca engine: the device thread that executes the data path.
 *
 * Doorbells and timers mark what happened on the object (an index in an
 * atomic field, a kick bit) and queue the object on a FIFO, once, then
 * wake the thread; a QP doorbell that finds the engine idle runs the round
 * itself instead (qhca_engine_run_here()).  The thread takes the
 * device lock, turns the FIFO into QPs on its run list, and gives each
 * runnable QP one bounded step: flush it if in ERR, else send the
 * responses it owes and the requests it has.  After each step it delivers
 * every packet on the wire, so that the wire is empty whenever the lock is
 * free and admin commands never see packets in flight.  On an Ethernet
 * port each round first takes the frames received (qhca_net_rx_run()).
 * The wire's frames to the netdev leave through qhca-net.c's queue, which
 * the main loop empties; this thread never waits for it.  A QP that finds
 * that queue full stops its step before building the packet and waits on
 * the tx_wait list, off the run list; when the main loop has drained the
 * queue enough it sets tx_room and wakes the thread, whose next round puts
 * the waiting QPs back on the run list (qhca_engine_tx_wait(), _tx_room()).
 *
 * The thread touches guest memory only through qhca-dma.c, and it never
 * takes the BQL: MSI-X messages it raises go through a bottom half.
 *
 * While the VM is stopped the thread does nothing at all: a stopped guest
 * sees no DMA, and doorbells rung meanwhile (by qtest, or a vCPU's last
 * MMIO) wait for "cont".  The device is unmigratable (qhca-pci.c,
 * qhca_vmstate), so a stop is only ever followed by a continue or an exit.
 *
 * Waking a sleeping thread costs a futex wake in the vCPU's doorbell and a
 * scheduler round trip before the thread runs.  With x-engine-spin-us set,
 * when work has been arriving in quick succession the thread first spins
 * a little (at most that long), the way an AioContext polls, and only then
 * sleeps.  It is off by default: on a host with no core to spare the spin
 * takes the CPU from the vCPUs that would ring the next doorbell, and
 * under TCG on 2 busy cores it made ib_write_lat slower, not faster.
 */
#include "qemu/osdep.h"
#include "qemu/main-loop.h"
#include "qemu/processor.h"
#include "system/runstate.h"
#include "hw/pci/msix.h"
#include "qhca.h"
#include "qhca-eth.h"
#include "trace.h"

/* Hand an object to the engine, at most once until the engine takes it. */
static void qhca_fifo_push(QhcaState *s, uint32_t entry)
{
    QhcaEngine *e = &s->engine;

    qemu_spin_lock(&e->fifo_lock);
    /* Each object is queued at most once: the FIFO cannot overflow. */
    assert(e->fifo_count < e->fifo_size);
    e->fifo[(e->fifo_head + e->fifo_count) % e->fifo_size] = entry;
    e->fifo_count++;
    qemu_spin_unlock(&e->fifo_lock);
}

void qhca_engine_wake(QhcaState *s)
{
    qemu_event_set(&s->engine.wake);
}

/* Without the device lock: from a doorbell or a timer. */
void qhca_engine_kick_qp(QhcaState *s, QhcaQp *qp, uint32_t why)
{
    if (!qatomic_fetch_or(&qp->kick, why)) {
        qhca_fifo_push(s, QHCA_FIFO_QP | qp->qpn);
    }
    qhca_engine_wake(s);
}

void qhca_engine_kick_cq(QhcaState *s, QhcaCq *cq)
{
    if (!qatomic_xchg(&cq->kick, 1)) {
        qhca_fifo_push(s, QHCA_FIFO_CQ | cq->cqn);
    }
    qhca_engine_wake(s);
}

/* Under the device lock: give @qp a step of the engine soon. */
void qhca_engine_schedule(QhcaState *s, QhcaQp *qp)
{
    if (!qp->on_run_list) {
        qp->on_run_list = true;
        QTAILQ_INSERT_TAIL(&s->engine.run, qp, run);
        qhca_engine_wake(s);
    }
}

/* Under the device lock: off the engine's lists (a step, RESET, destroy). */
void qhca_engine_unschedule(QhcaState *s, QhcaQp *qp)
{
    if (qp->on_run_list) {
        qp->on_run_list = false;
        QTAILQ_REMOVE(&s->engine.run, qp, run);
    }
    if (qp->on_tx_wait) {
        qp->on_tx_wait = false;
        QTAILQ_REMOVE(&s->engine.tx_wait, qp, tx_wait);
    }
}

/*
 * Under the device lock: @qp stopped for a full transmit queue; it runs
 * again once the queue drains (qhca_engine_tx_room()), not before.
 */
void qhca_engine_tx_wait(QhcaState *s, QhcaQp *qp)
{
    if (!qp->on_tx_wait) {
        trace_qhca_engine_tx_wait(qp->qpn);
        qp->on_tx_wait = true;
        QTAILQ_INSERT_TAIL(&s->engine.tx_wait, qp, tx_wait);
    }
}

/* Any thread, no lock: the transmit queue has room again. */
void qhca_engine_tx_room(QhcaState *s)
{
    qatomic_set(&s->engine.tx_room, true);
    qhca_engine_wake(s);
}

/* Under the device lock: the QPs that waited for room get their turn. */
static void qhca_engine_take_tx_room(QhcaState *s)
{
    QhcaEngine *e = &s->engine;

    if (!qatomic_xchg(&e->tx_room, false)) {
        return;
    }
    while (!QTAILQ_EMPTY(&e->tx_wait)) {
        QhcaQp *qp = QTAILQ_FIRST(&e->tx_wait);

        qp->on_tx_wait = false;
        QTAILQ_REMOVE(&e->tx_wait, qp, tx_wait);
        trace_qhca_engine_tx_resume(qp->qpn);
        qhca_engine_schedule(s, qp);
    }
}

/* Arm the QP's timer to fire @ns from now for @kind (RETRY or RNR). */
void qhca_timer_arm(QhcaState *s, QhcaQp *qp, uint8_t kind, int64_t ns)
{
    qp->req.timer = kind;
    qp->req.deadline = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + ns;
    timer_mod(&qp->timer, qp->req.deadline);
}

static void qhca_engine_take_qp(QhcaState *s, uint32_t qpn)
{
    QhcaQp *qp;
    uint32_t kick;

    if (qpn >= s->qps.size) {
        return;
    }
    qp = &s->qp[qpn];
    kick = qatomic_xchg(&qp->kick, 0);
    if (!qhca_table_live(&s->qps, qpn)) {
        return;
    }
    if (kick & QHCA_KICK_SQ) {
        qhca_qp_sq_doorbell(s, qp, qatomic_read(&qp->db_sq_pi));
    }
    if (kick & QHCA_KICK_RQ) {
        qhca_qp_rq_doorbell(s, qp, qatomic_read(&qp->db_rq_pi));
    }
    if (kick & QHCA_KICK_TIMER) {
        qhca_req_timer(s, qp);
    }
}

static void qhca_engine_take_cq(QhcaState *s, uint32_t cqn)
{
    QhcaCq *cq;

    if (cqn >= s->cqs.size) {
        return;
    }
    cq = &s->cq[cqn];
    qatomic_set(&cq->kick, 0);
    qhca_cq_arm(s, cq);
}

static void qhca_engine_take_fifo(QhcaState *s)
{
    QhcaEngine *e = &s->engine;

    for (;;) {
        uint32_t entry;

        qemu_spin_lock(&e->fifo_lock);
        if (!e->fifo_count) {
            qemu_spin_unlock(&e->fifo_lock);
            return;
        }
        entry = e->fifo[e->fifo_head];
        e->fifo_head = (e->fifo_head + 1) % e->fifo_size;
        e->fifo_count--;
        qemu_spin_unlock(&e->fifo_lock);

        if (entry & QHCA_FIFO_CQ) {
            qhca_engine_take_cq(s, entry & QHCA_FIFO_NUM);
        } else {
            qhca_engine_take_qp(s, entry & QHCA_FIFO_NUM);
        }
    }
}

/*
 * Doorbells rung since the round began, taken now rather than next round:
 * above all RQ doorbells, as a SEND that finds the receive queue empty
 * while its receive WQE's doorbell waits in the FIFO would be refused
 * with an RNR NAK that the guest did nothing to deserve, and the
 * requester would sit out the RNR timer.
 */
static void qhca_engine_take_new(QhcaState *s)
{
    if (qatomic_read(&s->engine.fifo_count)) {
        qhca_engine_take_fifo(s);
    }
}

/* One step of one QP; true if it has more to do right away. */
static bool qhca_engine_step(QhcaState *s, QhcaQp *qp)
{
    bool more;

    switch (qp->state) {
    case QHCA_QPS_RESET:
        return false;
    case QHCA_QPS_ERR:
        more = qhca_qp_flush(s, qp);
        return qhca_resp_step(s, qp) || more;
    default:
        more = qhca_resp_step(s, qp);
        return qhca_req_step(s, qp) || more;
    }
}

/*
 * One round under the lock: take the FIFO and the frames the netdev
 * brought, then give one step to each QP that was runnable when the round
 * began.  True if work is left.  Also run by qhca-net.c on the main loop
 * for a received frame, when the engine is idle.
 */
bool qhca_engine_round_locked(QhcaState *s)
{
    QhcaEngine *e = &s->engine;
    QhcaQp *last;
    bool more;

    if (!qhca_is_ready(s) || qatomic_read(&e->paused)) {
        return false;
    }
    qhca_engine_take_fifo(s);
    qhca_engine_take_tx_room(s);
    /* Ethernet: the frames received since, before the QPs' turn. */
    qhca_net_rx_run(s);
    qhca_wire_drain(s);

    last = QTAILQ_LAST(&e->run);
    while (last && qhca_is_ready(s) && !qatomic_read(&e->paused)) {
        QhcaQp *qp = QTAILQ_FIRST(&e->run);

        qhca_engine_unschedule(s, qp);
        if (qhca_engine_step(s, qp)) {
            qhca_engine_schedule(s, qp);
        }
        qhca_engine_take_new(s);
        qhca_wire_drain(s);
        if (qp == last) {
            break;
        }
    }
    more = !QTAILQ_EMPTY(&e->run);
    return more && qhca_is_ready(s) && !qatomic_read(&e->paused);
}

static bool qhca_engine_round(QhcaState *s)
{
    QEMU_LOCK_GUARD(&s->lock);
    return qhca_engine_round_locked(s);
}

/*
 * From a doorbell, on the vCPU thread that rang it (with the BQL, which
 * comes before the device lock, as for admin commands): when the engine
 * is idle, run its round right here instead of handing the doorbell to
 * the thread.  A small message then costs no thread wake-up and no wait
 * for the thread to get a host CPU, only the vCPU's own time.  The round
 * is bounded as the thread's are, and only QPs from the FIFO are in it,
 * as the run list was empty; if the engine is busy, or work is left over
 * (a long message), the thread gets it.  True if nothing is left for the
 * thread.  Only with x-engine-inline=on: on a busy 2-core host under TCG
 * it made ib_write_lat slower (typical 22-28 us against 16-24 us), as the
 * device work no longer overlaps the guest's.
 */
static bool qhca_engine_run_here(QhcaState *s)
{
    QhcaEngine *e = &s->engine;
    bool more;

    if (!s->params.engine_inline || qatomic_read(&e->paused) ||
        qemu_mutex_trylock(&s->lock)) {
        return false;
    }
    if (!QTAILQ_EMPTY(&e->run)) {
        qemu_mutex_unlock(&s->lock);
        return false;
    }
    more = qhca_engine_round_locked(s);
    qemu_mutex_unlock(&s->lock);
    return !more;
}

/* A QP doorbell: as qhca_engine_kick_qp(), possibly run here. */
void qhca_engine_doorbell_qp(QhcaState *s, QhcaQp *qp, uint32_t why)
{
    if (!qatomic_fetch_or(&qp->kick, why)) {
        qhca_fifo_push(s, QHCA_FIFO_QP | qp->qpn);
    }
    if (!qhca_engine_run_here(s)) {
        qhca_engine_wake(s);
    }
}

/*
 * A gap between doorbells up to the longest spin doubles the spin (from
 * QHCA_SPIN_MIN_NS), a longer gap halves it, down to none.
 */
#define QHCA_SPIN_MIN_NS        (2 * SCALE_US)

/* Spin up to e->spin_ns for a doorbell or timer kick; true if one came. */
static bool qhca_engine_spin(QhcaEngine *e)
{
    int64_t end;

    if (!e->spin_ns || qatomic_read(&e->paused)) {
        return false;
    }
    end = get_clock() + e->spin_ns;
    do {
        /* A hint only: the event below catches anything missed here. */
        if (qatomic_read(&e->fifo_count) || qatomic_read(&e->stop)) {
            return true;
        }
        if (qatomic_read(&e->paused)) {
            return false;
        }
        cpu_relax();
    } while (get_clock() < end);
    return false;
}

/* Sleep until woken; adapt the spin to how long the sleep was. */
static void qhca_engine_sleep(QhcaState *s)
{
    QhcaEngine *e = &s->engine;
    int64_t max = (int64_t)s->params.engine_spin_us * SCALE_US;
    int64_t slept = get_clock();

    qemu_event_wait(&e->wake);
    if (max < QHCA_SPIN_MIN_NS) {
        return;
    }
    slept = get_clock() - slept;
    if (qatomic_read(&e->paused) || slept > max) {
        e->spin_ns /= 2;
        if (e->spin_ns < QHCA_SPIN_MIN_NS) {
            e->spin_ns = 0;
        }
    } else if (slept > e->spin_ns) {
        e->spin_ns = MIN(max, MAX(e->spin_ns * 2, QHCA_SPIN_MIN_NS));
    }
}

static void *qhca_engine_thread(void *opaque)
{
    QhcaState *s = opaque;
    QhcaEngine *e = &s->engine;

    rcu_register_thread();
    while (!qatomic_read(&e->stop)) {
        qemu_event_reset(&e->wake);
        if (qhca_engine_round(s) || qatomic_read(&e->stop) ||
            qhca_engine_spin(e)) {
            continue;
        }
        qhca_engine_sleep(s);
    }
    rcu_unregister_thread();
    return NULL;
}

/*
 * With the BQL.  On a stop, wait out a round in progress by taking the
 * device lock once: after that no round runs until the VM runs again.
 */
static void qhca_engine_vm_state(void *opaque, bool running, RunState state)
{
    QhcaState *s = opaque;
    QhcaEngine *e = &s->engine;

    trace_qhca_engine_vm_state(running, state);
    qatomic_set(&e->paused, !running);
    if (running) {
        qhca_engine_wake(s);
        return;
    }
    qemu_mutex_lock(&s->lock);
    qemu_mutex_unlock(&s->lock);
}

/* MSI-X needs the BQL: the engine leaves its vectors to the main loop. */
static void qhca_engine_irq_bh(void *opaque)
{
    QhcaState *s = opaque;
    uint64_t pending = qatomic_xchg(&s->engine.irq_pending, 0);

    while (pending) {
        unsigned vector = ctz64(pending);

        pending &= pending - 1;
        qhca_irq(s, vector);
    }
}

void qhca_engine_irq_later(QhcaState *s, unsigned vector)
{
    qatomic_or(&s->engine.irq_pending, 1ull << vector);
    qemu_bh_schedule(s->engine.irq_bh);
}

void qhca_engine_init(QhcaState *s)
{
    QhcaEngine *e = &s->engine;

    e->fifo_size = s->qps.size + s->cqs.size;
    e->fifo = g_new(uint32_t, e->fifo_size);
    e->fifo_head = 0;
    e->fifo_count = 0;
    qemu_spin_init(&e->fifo_lock);
    QTAILQ_INIT(&e->run);
    QTAILQ_INIT(&e->tx_wait);
    e->tx_room = false;
    qhca_wire_init(s);
    e->irq_bh = qemu_bh_new_guarded(qhca_engine_irq_bh, s,
                                    &DEVICE(s)->mem_reentrancy_guard);
    qemu_event_init(&e->wake, false);
    e->stop = false;
    e->spin_ns = 0;
    /* Realized before the VM first runs (or hot-plugged into a running one). */
    e->paused = !runstate_is_running();
    e->vmstate = qemu_add_vm_change_state_handler(qhca_engine_vm_state, s);
    qemu_thread_create(&e->thread, "qhca-engine", qhca_engine_thread, s,
                       QEMU_THREAD_JOINABLE);
    e->running = true;
}

void qhca_engine_fini(QhcaState *s)
{
    QhcaEngine *e = &s->engine;

    if (e->vmstate) {
        qemu_del_vm_change_state_handler(e->vmstate);
        e->vmstate = NULL;
    }
    if (e->running) {
        qatomic_set(&e->stop, true);
        qhca_engine_wake(s);
        qemu_thread_join(&e->thread);
        e->running = false;
    }
    qemu_event_destroy(&e->wake);
    qemu_bh_delete(e->irq_bh);
    e->irq_bh = NULL;
    qhca_wire_fini(s);
    g_free(e->fifo);
    e->fifo = NULL;
}

/*
 * Under the device lock, with the objects being destroyed.  The FIFO
 * stays: its entries still own their objects' kick bits, and the engine
 * skips objects that are gone.
 */
void qhca_engine_reset(QhcaState *s)
{
    QhcaEngine *e = &s->engine;

    while (!QTAILQ_EMPTY(&e->run)) {
        qhca_engine_unschedule(s, QTAILQ_FIRST(&e->run));
    }
    while (!QTAILQ_EMPTY(&e->tx_wait)) {
        qhca_engine_unschedule(s, QTAILQ_FIRST(&e->tx_wait));
    }
    qatomic_set(&e->irq_pending, 0);
}
