/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qhca-fuzz's grammar of fault injection (interface 1.3, see
 * Documentation/hw/qhca-faults.rst): INJECT_FAULT of every type, well
 * formed and malformed; the cable pulled and reconnected through the
 * link-up property; and the virtual clock, which the transport timers
 * that faults set off (retransmission, RNR waits) run on.
 *
 * Two behaviours the liveness check of qhca-fuzz.c must know about:
 * - a valid AQ_HANG never completes: the fuzzer sends it on its own,
 *   waits a moment, checks that STATUS did not change, drives the data
 *   path for a while, and resets (fz_resync) before any other command;
 * - the link: up while the host's cable is in (link-up, which a reset
 *   leaves as it is) and the guest has not injected LINK_DOWN; neither
 *   undoes the other.  The fuzzer tracks both, checks QUERY_PORT against
 *   them, and after a reset injects LINK_UP (and often plugs the cable
 *   back in) so that traffic flows.
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qobject/qdict.h"
#include "qhca-fuzz.h"

#define FZV_HANG_WAIT_US    50000

/*
 * Advance the virtual clock, which under qtest moves only when told: the
 * transport timers (retransmission, RNR waits) run on it.
 */
void fzv_clock(Fz *f)
{
    int64_t ns = 1ll << fz_below(f, 28);

    fz_pair(f, "clock", 63 - __builtin_clzll(ns), 0);
    qtest_clock_step(f->t->qts, ns);
}

/* A well-formed fault (never AQ_HANG: see fzv_fault()). */
uint8_t fzv_inject(Fz *f, uint16_t type, uint32_t handle)
{
    struct qhca_cmd_inject_fault c = {
        .type = cpu_to_le16(type),
        .handle = cpu_to_le32(handle),
    };
    uint8_t status;

    g_assert(type != QHCA_FAULT_AQ_HANG);
    status = qt_cmd(f->t, QHCA_CMD_INJECT_FAULT, &c, sizeof(c), NULL);
    fz_pair(f, "fault", type, status);
    if (status == QHCA_AQ_SUCCESS && type == QHCA_FAULT_LINK_DOWN) {
        f->link_injected_down = true;
    }
    return status;
}

/* ------------------------------------------------------------------ */
/* Fault injection and the link                                        */

/* Pull or reconnect the cable (the link-up property), as the host. */
void fzv_cable(Fz *f, bool up)
{
    QDict *rsp = qtest_qmp(f->t->qts, "{'execute': 'qom-set', 'arguments': "
                           "{'path': '/machine/peripheral/" FZ_QOM_ID "', "
                           "'property': 'link-up', 'value': %i}}", up);
    bool ok = rsp && !qdict_haskey(rsp, "error");

    fz_pair(f, "link-up", up, ok);
    qobject_unref(rsp);
    if (ok) {
        f->cable_pulled = !up;
    }
}

/* After fz_resync's reset: the capabilities, and the link brought up. */
void fzv_resynced(Fz *f)
{
    struct qhca_device_attr attr;

    g_assert_cmpuint(qt_query(f->t, QHCA_CMD_QUERY_DEVICE, NULL, 0, &attr,
                              sizeof(attr)), ==, QHCA_AQ_SUCCESS);
    f->caps = le32_to_cpu(attr.device_cap_flags);
    /* A pulled cable stays pulled across the reset. */
    if (f->cable_pulled && fz_chance(f, 60)) {
        fzv_cable(f, true);
    }
    if (f->caps & QHCA_DEV_CAP_FAULT_INJECT) {
        /*
         * Whether a reset forgets an injected LINK_DOWN is the device's
         * business: LINK_UP makes it known (already up: success).
         */
        struct qhca_cmd_inject_fault c = {
            .type = cpu_to_le16(QHCA_FAULT_LINK_UP),
        };

        g_assert_cmpuint(qt_cmd(f->t, QHCA_CMD_INJECT_FAULT, &c, sizeof(c),
                                NULL), ==, QHCA_AQ_SUCCESS);
        f->link_injected_down = false;
    }
    if (f->caps & QHCA_DEV_CAP_FAULT_INJECT) {
        /* Drops still pending (up to a million) would starve the run. */
        struct qhca_cmd_inject_fault c = {
            .type = cpu_to_le16(QHCA_FAULT_DROP),
        };

        g_assert_cmpuint(qt_cmd(f->t, QHCA_CMD_INJECT_FAULT, &c, sizeof(c),
                                NULL), ==, QHCA_AQ_SUCCESS);
    }
}

/* QUERY_PORT says what the model knows of the link. */
void fzv_check_link(Fz *f, const char *after)
{
    struct qhca_cmd_query_port c = { .port_num = 1 };
    struct qhca_port_attr a = { 0 };
    bool up = !f->cable_pulled && !f->link_injected_down;
    uint8_t want;

    if (up && !fz_chance(f, 10)) {
        return;
    }
    want = up ? QHCA_PORT_ACTIVE : QHCA_PORT_DOWN;
    if (qt_query(f->t, QHCA_CMD_QUERY_PORT, &c, sizeof(c), &a, sizeof(a)) !=
        QHCA_AQ_SUCCESS || a.state != want) {
        fprintf(f->report, "FINDING: QUERY_PORT state %u, expected %u, "
                "after %s (step %" PRIu64 ")\n", a.state, want, after,
                f->steps);
        exit(3);
    }
}

/*
 * A valid AQ_HANG was sent: no completion may come.  STATUS stays READY
 * (firmware that hangs does not say so) and the data path goes on; then
 * a reset (CTRL.RESET, or ENABLE cleared) before any admin command.
 */
static void fzv_hung(Fz *f)
{
    QhcaTest *t = f->t;
    gint64 end = g_get_monotonic_time() + FZV_HANG_WAIT_US;
    unsigned k;

    while (g_get_monotonic_time() < end) {
        if (qt_cqe_ready(t)) {
            QhcaCompletion c = qt_take_cqe(t);

            if (c.status == QHCA_AQ_SUCCESS) {
                fprintf(f->report, "FINDING: AQ_HANG completed (id %u) "
                        "(step %" PRIu64 ")\n", c.cmd_id, f->steps);
                exit(3);
            }
            /* Refused after all: the grammar's guess was wrong. */
            fz_pair(f, "hang-refused", 0, c.status);
            qt_wr(t, QHCA_REG_AQ_CQ_DB, t->cq_head);
            return;
        }
        g_usleep(1000);
    }
    fz_pair(f, "cmd", QHCA_CMD_INJECT_FAULT, 0x100 | QHCA_FAULT_AQ_HANG);
    if (fz_chance(f, 50)) {
        /* More commands for a queue that takes none: they stay. */
        struct qhca_aq_sqe q = {
            .opcode = cpu_to_le16(QHCA_CMD_QUERY_DEVICE),
            .resp_addr = cpu_to_le64(t->resp),
            .resp_len = cpu_to_le32(4096),
        };

        qt_queue_sqe(t, &q);
        qt_ring_sq(t);
        qt_wr(t, QHCA_REG_AQ_CQ_DB, t->cq_head);
    }
    for (k = fz_below(f, 4); k > 0; k--) {
        fz_send(f);
        fz_poll(f);
    }
    if (qt_rd(t, QHCA_REG_STATUS) != QHCA_STATUS_READY) {
        fprintf(f->report, "FINDING: STATUS 0x%x with the admin queue hung "
                "(step %" PRIu64 ")\n", qt_rd(t, QHCA_REG_STATUS), f->steps);
        exit(3);
    }
    if (fz_chance(f, 30)) {
        qt_wr(t, QHCA_REG_CTRL, 0);
    }
    fz_resync(f);
}

void fzv_fault(Fz *f)
{
    QhcaTest *t = f->t;
    struct qhca_aq_sqe sqe = {
        .opcode = cpu_to_le16(QHCA_CMD_INJECT_FAULT),
        .resp_addr = cpu_to_le64(t->resp),
    };
    struct qhca_cmd_inject_fault *p = (void *)sqe.payload;
    uint16_t type = 1 + fz_below(f, 7);
    uint32_t handle = 0;
    uint8_t status;
    bool hang;

    if (fz_chance(f, 12)) {
        fzv_cable(f, fz_chance(f, 50));
        return;
    }
    /* Hangs are costly (a reset): fewer of them than of the rest. */
    if (type == QHCA_FAULT_AQ_HANG && fz_chance(f, 50)) {
        type = QHCA_FAULT_DROP;
    }
    switch (type) {
    case QHCA_FAULT_QP_FATAL:
        handle = fz_qpn(f);
        break;
    case QHCA_FAULT_SRQ_ERR:
        handle = fz_srqn(f);
        break;
    case QHCA_FAULT_CQ_ERR:
        handle = fz_cqn(f);
        break;
    case QHCA_FAULT_DROP:
        handle = fz_chance(f, 80) ? fz_below(f, 20) :
                 fz_chance(f, 50) ? QHCA_FAULT_MAX_DROP + fz_below(f, 2) :
                 (uint32_t)fz_interesting(f);
        break;
    default:
        break;
    }
    p->type = cpu_to_le16(fz_chance(f, 5) ? fz_interesting(f) : type);
    p->handle = cpu_to_le32(handle);
    if (fz_chance(f, 15)) {
        fz_mutate(f, p, sizeof(*p));
    }
    /* Exactly what the device must take as a hang (qhca-faults.rst). */
    hang = (f->caps & QHCA_DEV_CAP_FAULT_INJECT) &&
           le16_to_cpu(p->type) == QHCA_FAULT_AQ_HANG && !p->rsvd0 &&
           !p->handle && !p->rsvd1;
    if (hang) {
        qt_queue_sqe(t, &sqe);
        qt_ring_sq(t);
        fzv_hung(f);
        return;
    }
    status = qt_submit(t, &sqe, NULL);
    fz_pair(f, "fault", le16_to_cpu(p->type) & 0xff, status);
    if (status != QHCA_AQ_SUCCESS) {
        return;
    }
    if (p->type == cpu_to_le16(QHCA_FAULT_LINK_DOWN)) {
        f->link_injected_down = true;
    } else if (p->type == cpu_to_le16(QHCA_FAULT_LINK_UP)) {
        /* The port comes up only if the host's cable is in. */
        f->link_injected_down = false;
    }
}
