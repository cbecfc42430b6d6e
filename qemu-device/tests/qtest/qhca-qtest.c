/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qtest helpers for the qhca InfiniBand HCA model (see qhca-qtest.h).
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qobject/qdict.h"
#include "qobject/qlist.h"
#include <poll.h>
#include <sys/socket.h>
#include "qhca-qtest.h"

static void save_device(QPCIDevice *dev, int devfn, void *data)
{
    *(QPCIDevice **)data = dev;
}

uint32_t qt_rd(QhcaTest *t, uint32_t reg)
{
    return qpci_io_readl(t->dev, t->bar0, reg);
}

void qt_wr(QhcaTest *t, uint32_t reg, uint32_t val)
{
    qpci_io_writel(t->dev, t->bar0, reg, val);
}

/*
 * g_test_init(); false, with the run marked skipped, where there is no q35
 * with qhca to test: main() then returns g_test_run() at once.
 */
bool qt_init(int *argc, char ***argv)
{
    g_test_init(argc, argv, NULL);
    if (!qtest_has_machine("q35") || !qtest_has_device("qhca")) {
        g_test_skip("q35 with qhca not available");
        return false;
    }
    return true;
}

QhcaTest *qhca_start(const char *props)
{
    QhcaTest *t = g_new0(QhcaTest, 1);

    t->qts = qtest_initf("-machine q35 -nic none -vga none -device qhca%s",
                         props ? props : "");
    pc_alloc_init(&t->alloc, t->qts, ALLOC_NO_FLAGS);
    t->bus = qpci_new_pc(t->qts, &t->alloc);
    qpci_device_foreach(t->bus, QHCA_PCI_VENDOR_ID, QHCA_PCI_DEVICE_ID,
                        save_device, &t->dev);
    g_assert_nonnull(t->dev);
    qpci_device_enable(t->dev);
    t->bar0 = qpci_iomap(t->dev, QHCA_REG_BAR, NULL);
    t->bar2 = qpci_iomap(t->dev, QHCA_DB_BAR, &t->bar2_size);
    t->resp = guest_alloc(&t->alloc, 4096);
    t->wire = -1;
    return t;
}

void qhca_stop(QhcaTest *t)
{
    g_free(t->dev);
    qpci_free_pc(t->bus);
    alloc_destroy(&t->alloc);
    qtest_quit(t->qts);
    if (t->wire >= 0) {
        close(t->wire);
        g_byte_array_unref(t->wire_in);
        g_byte_array_unref(t->wire_out);
    }
    g_free(t);
}

/* The device survived whatever the test did to it. */
void qt_assert_alive(QhcaTest *t)
{
    g_assert_cmphex(qt_rd(t, QHCA_REG_VERSION), ==, QHCA_VERSION_CURRENT);
    g_assert_cmphex(qt_rd(t, QHCA_REG_MAGIC), ==, QHCA_MAGIC);
}

void qt_reset(QhcaTest *t)
{
    qt_wr(t, QHCA_REG_CTRL, QHCA_CTRL_RESET);
    g_assert_cmphex(qt_rd(t, QHCA_REG_CTRL), ==, 0);
}

/* ERROR holds the last code until a reset: check it and start afresh. */
void qt_assert_error(QhcaTest *t, uint32_t err)
{
    g_assert_cmpuint(qt_rd(t, QHCA_REG_ERROR), ==, err);
    qt_assert_alive(t);
}

void qt_write_aq_regs(QhcaTest *t, uint64_t sq, uint64_t cq, uint32_t cfg)
{
    qt_wr(t, QHCA_REG_AQ_SQ_BASE_LO, sq);
    qt_wr(t, QHCA_REG_AQ_SQ_BASE_HI, sq >> 32);
    qt_wr(t, QHCA_REG_AQ_CQ_BASE_LO, cq);
    qt_wr(t, QHCA_REG_AQ_CQ_BASE_HI, cq >> 32);
    qt_wr(t, QHCA_REG_AQ_CFG, cfg);
}

uint32_t qt_aq_cfg(unsigned depth_log2, unsigned vector)
{
    return QHCA_FIELD_PREP(QHCA_AQ_CFG_DEPTH_LOG2, depth_log2) |
           QHCA_FIELD_PREP(QHCA_AQ_CFG_MSIX_VECTOR, vector);
}

/* The admin rings zeroed, the indices at 0: as ENABLE starts them. */
void qt_aq_rewind(QhcaTest *t)
{
    qtest_memset(t->qts, t->sq, 0, t->entries * sizeof(struct qhca_aq_sqe));
    qtest_memset(t->qts, t->cq, 0, t->entries * sizeof(struct qhca_aq_cqe));
    t->sq_tail = 0;
    t->cq_head = 0;
    t->phase = 1;
}

/* Reset, then bring the admin queue up with 2^depth_log2 entries. */
void qt_enable(QhcaTest *t, unsigned depth_log2)
{
    t->entries = 1u << depth_log2;
    t->sq = guest_alloc(&t->alloc, t->entries * sizeof(struct qhca_aq_sqe));
    t->cq = guest_alloc(&t->alloc, t->entries * sizeof(struct qhca_aq_cqe));
    qt_aq_rewind(t);

    qt_reset(t);
    qt_write_aq_regs(t, t->sq, t->cq, qt_aq_cfg(depth_log2, t->vector));
    qt_wr(t, QHCA_REG_CTRL, QHCA_CTRL_ENABLE);
    g_assert_cmphex(qt_rd(t, QHCA_REG_STATUS), ==, QHCA_STATUS_READY);
    g_assert_cmphex(qt_rd(t, QHCA_REG_CTRL), ==, QHCA_CTRL_ENABLE);
    g_assert_cmpuint(qt_rd(t, QHCA_REG_ERROR), ==, QHCA_ERR_NONE);
}

/* Write an SQE at the tail without ringing the doorbell. */
uint16_t qt_queue_sqe(QhcaTest *t, struct qhca_aq_sqe *sqe)
{
    uint16_t id = ++t->next_id;

    sqe->cmd_id = cpu_to_le16(id);
    qtest_memwrite(t->qts, t->sq + t->sq_tail * sizeof(*sqe), sqe,
                   sizeof(*sqe));
    t->sq_tail = (t->sq_tail + 1) % t->entries;
    return id;
}

void qt_ring_sq(QhcaTest *t)
{
    qt_wr(t, QHCA_REG_AQ_SQ_DB, t->sq_tail);
}

bool qt_cqe_ready(QhcaTest *t)
{
    uint64_t addr = t->cq + t->cq_head * sizeof(struct qhca_aq_cqe);
    uint8_t flags = qtest_readb(t->qts,
                                addr + offsetof(struct qhca_aq_cqe, flags));

    return (flags & QHCA_CQE_FLAGS_PHASE) == t->phase;
}

/* Take the next CQE, which must arrive; the CQ doorbell is left to us. */
QhcaCompletion qt_take_cqe(QhcaTest *t)
{
    struct qhca_aq_cqe cqe;
    gint64 end = g_get_monotonic_time() + QHCA_TIMEOUT_US;
    QhcaCompletion c;

    while (!qt_cqe_ready(t)) {
        g_assert(g_get_monotonic_time() < end);
        g_usleep(100);
    }
    qtest_memread(t->qts, t->cq + t->cq_head * sizeof(cqe), &cqe,
                  sizeof(cqe));
    g_assert_cmpuint(cqe.rsvd0, ==, 0);
    g_assert_cmpuint(cqe.rsvd1, ==, 0);
    c.cmd_id = le16_to_cpu(cqe.cmd_id);
    c.status = cqe.status;
    c.result = le32_to_cpu(cqe.result);
    c.sq_head = le16_to_cpu(cqe.sq_head);

    t->cq_head = (t->cq_head + 1) % t->entries;
    if (t->cq_head == 0) {
        t->phase ^= 1;
    }
    return c;
}

/* No CQE turns up: give the device time to (wrongly) produce one. */
void qt_assert_no_cqe(QhcaTest *t)
{
    int i;

    for (i = 0; i < 20; i++) {
        g_assert(!qt_cqe_ready(t));
        g_usleep(1000);
    }
}

/* Submit one command and wait for its completion; returns the status. */
uint8_t qt_submit(QhcaTest *t, struct qhca_aq_sqe *sqe, uint32_t *result)
{
    uint16_t id = qt_queue_sqe(t, sqe);
    QhcaCompletion c;

    qt_ring_sq(t);
    c = qt_take_cqe(t);
    qt_wr(t, QHCA_REG_AQ_CQ_DB, t->cq_head);
    g_assert_cmpuint(c.cmd_id, ==, id);
    g_assert_cmpuint(c.sq_head, ==, t->sq_tail);
    if (c.status != QHCA_AQ_SUCCESS) {
        g_assert_cmpuint(c.result, ==, 0);
    }
    if (result) {
        *result = c.result;
    }
    return c.status;
}

uint8_t qt_cmd(QhcaTest *t, uint16_t opcode, const void *payload,
               size_t len, uint32_t *result)
{
    struct qhca_aq_sqe sqe = { .opcode = cpu_to_le16(opcode) };

    g_assert(len <= sizeof(sqe.payload));
    if (len) {
        memcpy(sqe.payload, payload, len);
    }
    return qt_submit(t, &sqe, result);
}

/* A command with a response into t->resp, read back into @resp. */
uint8_t qt_query(QhcaTest *t, uint16_t opcode, const void *payload,
                 size_t len, void *resp, size_t resp_len)
{
    struct qhca_aq_sqe sqe = {
        .opcode = cpu_to_le16(opcode),
        .resp_addr = cpu_to_le64(t->resp),
        .resp_len = cpu_to_le32(resp_len),
    };
    uint8_t status;

    if (len) {
        memcpy(sqe.payload, payload, len);
    }
    qtest_memset(t->qts, t->resp, 0, 4096);
    status = qt_submit(t, &sqe, NULL);
    qtest_memread(t->qts, t->resp, resp, resp_len);
    return status;
}

uint8_t qt_handle_cmd(QhcaTest *t, uint16_t opcode, uint32_t handle)
{
    struct qhca_cmd_handle h = { .handle = cpu_to_le32(handle) };

    return qt_cmd(t, opcode, &h, sizeof(h), NULL);
}

struct qhca_stats qt_stats(QhcaTest *t)
{
    struct qhca_stats st;

    g_assert_cmpuint(qt_query(t, QHCA_CMD_QUERY_STATS, NULL, 0, &st,
                           sizeof(st)), ==, QHCA_AQ_SUCCESS);
    return st;
}

void qt_assert_objects(QhcaTest *t, uint32_t uars, uint32_t pds,
                       uint32_t eqs)
{
    struct qhca_stats st = qt_stats(t);

    g_assert_cmpuint(le32_to_cpu(st.uars), ==, uars);
    g_assert_cmpuint(le32_to_cpu(st.pds), ==, pds);
    g_assert_cmpuint(le32_to_cpu(st.eqs), ==, eqs);
}

uint8_t qt_create_eq(QhcaTest *t, uint64_t base, uint8_t depth_log2,
                     uint16_t vector, uint32_t mask, uint32_t *eqn)
{
    struct qhca_cmd_create_eq c = {
        .base_addr = cpu_to_le64(base),
        .depth_log2 = depth_log2,
        .msix_vector = cpu_to_le16(vector),
        .event_mask = cpu_to_le32(mask),
    };

    return qt_cmd(t, QHCA_CMD_CREATE_EQ, &c, sizeof(c), eqn);
}

struct qhca_eqe qt_read_eqe(QhcaTest *t, uint64_t base, uint32_t slot)
{
    struct qhca_eqe e;

    qtest_memread(t->qts, base + slot * sizeof(e), &e, sizeof(e));
    return e;
}

/* A machine with a root port to hotplug qhca devices into. */
QTestState *qt_hotplug_start(void)
{
    return qtest_init("-machine q35 -nic none -vga none "
                      "-device pcie-root-port,id=rp0,chassis=1");
}

/* Realize refuses a qhca with property @name at @value: out of range. */
void qt_assert_prop_out_of_range(QTestState *qts, const char *name,
                                 int64_t value)
{
    QDict *rsp = qtest_qmp(qts, "{'execute': 'device_add', 'arguments': "
                           "{'driver': 'qhca', 'bus': 'rp0', 'id': 'bad', "
                           "%s: %" PRId64 "}}", name, value);

    g_assert(qdict_haskey(rsp, "error"));
    g_assert_nonnull(strstr(qdict_get_str(qdict_get_qdict(rsp, "error"),
                                          "desc"), "out of range"));
    qobject_unref(rsp);
}

/* ------------------------------------------------------------------ */
/* The data path                                                       */

/* Poll @ready until it holds; false if it did not within the timeout. */
bool qt_wait(bool (*ready)(void *), void *opaque)
{
    gint64 end = g_get_monotonic_time() + QHCA_TIMEOUT_US;

    while (!ready(opaque)) {
        if (g_get_monotonic_time() > end) {
            return false;
        }
        g_usleep(100);
    }
    return true;
}

void qt_alloc_uar_pd(QhcaTest *t, uint32_t *uar, uint32_t *pdn)
{
    g_assert_cmpuint(qt_cmd(t, QHCA_CMD_ALLOC_UAR, NULL, 0, uar), ==,
                     QHCA_AQ_SUCCESS);
    g_assert_cmpuint(qt_cmd(t, QHCA_CMD_ALLOC_PD, NULL, 0, pdn), ==,
                     QHCA_AQ_SUCCESS);
}

/* A physical MR over all of RAM; returns its lkey (and rkey). */
uint32_t qt_reg_phys_mr(QhcaTest *t, uint32_t pdn, uint8_t access,
                        uint8_t key, uint8_t page_shift)
{
    struct qhca_cmd_reg_mr mr = {
        .length = cpu_to_le64(RAM_END),
        .pdn = cpu_to_le32(pdn),
        .access = access,
        .key = key,
        .page_shift = page_shift,
        .flags = QHCA_MR_F_PHYS,
    };
    uint32_t index;

    g_assert_cmpuint(qt_cmd(t, QHCA_CMD_REG_MR, &mr, sizeof(mr), &index),
                     ==, QHCA_AQ_SUCCESS);
    return index << 8 | key;
}

struct qhca_counters qt_counters(QhcaTest *t)
{
    struct qhca_counters c;

    g_assert_cmpuint(qt_query(t, QHCA_CMD_QUERY_COUNTERS, NULL, 0, &c,
                              sizeof(c)), ==, QHCA_AQ_SUCCESS);
    return c;
}

uint64_t qt_counter(QhcaTest *t, enum qhca_counter i)
{
    return le64_to_cpu(qt_counters(t).cnt[i]);
}

/* An EQ of 2^@depth_log2 zeroed entries, created with success. */
void qt_eq_init(QhcaTest *t, QhcaEq *eq, uint8_t depth_log2,
                uint16_t vector, uint32_t mask)
{
    eq->entries = 1u << depth_log2;
    eq->head = 0;
    eq->ring = guest_alloc(&t->alloc, eq->entries * sizeof(struct qhca_eqe));
    qtest_memset(t->qts, eq->ring, 0, eq->entries * sizeof(struct qhca_eqe));
    g_assert_cmpuint(qt_create_eq(t, eq->ring, depth_log2, vector, mask,
                                  &eq->eqn), ==, QHCA_AQ_SUCCESS);
}

/* Does the EQE at @head carry the phase of this pass over the ring? */
bool qt_eqe_ready(QhcaTest *t, const QhcaEq *eq)
{
    uint8_t phase = ((eq->head / eq->entries) & 1) ^ 1;
    struct qhca_eqe e = qt_read_eqe(t, eq->ring, eq->head % eq->entries);

    return (e.flags & QHCA_EQE_FLAGS_PHASE) == phase;
}

typedef struct QtEqPoll {
    QhcaTest *t;
    const QhcaEq *eq;
} QtEqPoll;

static bool qt_eq_poll_ready(void *opaque)
{
    QtEqPoll *p = opaque;

    return qt_eqe_ready(p->t, p->eq);
}

/*
 * Take the next EQE of @eq (waiting for it if @wait) and ring the EQ
 * doorbell with the new head; false, @e untouched, if none came.
 */
bool qt_eq_next(QhcaTest *t, QhcaEq *eq, bool wait, struct qhca_eqe *e)
{
    QtEqPoll p = { t, eq };

    if (!(wait ? qt_wait(qt_eq_poll_ready, &p) : qt_eqe_ready(t, eq))) {
        return false;
    }
    *e = qt_read_eqe(t, eq->ring, eq->head % eq->entries);
    eq->head++;
    qt_wr(t, QHCA_REG_EQ_DB,
          QHCA_FIELD_PREP(QHCA_EQ_DB_EQN, eq->eqn) |
          (eq->head % eq->entries));
    return true;
}

/*
 * The start of most data-path tests: a device enabled with a 32-entry
 * admin queue, a UAR, a PD and a 64-entry EQ on vector 2 for @events.
 */
QhcaTest *qt_start_dp(const char *props, uint32_t *uar, uint32_t *pdn,
                      QhcaEq *eq, uint32_t events)
{
    QhcaTest *t = qhca_start(props);

    qt_enable(t, 5);
    qt_alloc_uar_pd(t, uar, pdn);
    qt_eq_init(t, eq, 6, 2, events);
    return t;
}

/*
 * Wait until counter @i is at least @value; returns it.  The engine
 * counts under the lock it arms its timers with: once a NAK or a retry is
 * counted, the timer that follows it is armed, and the test may step the
 * clock.
 */
uint64_t qt_wait_counter(QhcaTest *t, enum qhca_counter i, uint64_t value)
{
    gint64 end = g_get_monotonic_time() + QHCA_TIMEOUT_US;
    uint64_t v;

    while ((v = qt_counter(t, i)) < value) {
        g_assert(g_get_monotonic_time() < end);
        g_usleep(1000);
    }
    return v;
}

uint64_t qt_guest_errors(QhcaTest *t)
{
    return le64_to_cpu(qt_stats(t).guest_errors);
}

/* The next EQE of @eq, which must come and be @type about @data. */
void qt_eq_expect(QhcaTest *t, QhcaEq *eq, uint8_t type, uint32_t data)
{
    struct qhca_eqe e = { 0 };

    qt_eq_next(t, eq, true, &e);
    g_assert_cmpuint(e.type, ==, type);
    g_assert_cmpuint(le32_to_cpu(e.data), ==, data);
}

/*
 * Nothing more arrives on @eq within 20 ms: the engine posts an event as
 * it handles the request that causes it, well within that.
 */
void qt_eq_assert_quiet(QhcaTest *t, const QhcaEq *eq)
{
    int i;

    for (i = 0; i < 20; i++) {
        g_assert(!qt_eqe_ready(t, eq));
        g_usleep(1000);
    }
}

/* ------------------------------------------------------------------ */
/* Completion queues                                                   */

/*
 * A CQ's zeroed ring and doorbell record and its CREATE_CQ on @eqn, not
 * yet submitted: the caller may change the command first.
 */
struct qhca_cmd_create_cq qt_cq_prepare(QhcaTest *t, QhcaCq *cq,
                                        uint8_t depth_log2, uint32_t eqn,
                                        uint32_t uar)
{
    struct qhca_cmd_create_cq c = {
        .eqn = cpu_to_le32(eqn),
        .uar = cpu_to_le32(uar),
        .depth_log2 = depth_log2,
    };

    memset(cq, 0, sizeof(*cq));
    cq->entries = 1u << depth_log2;
    cq->ring = guest_alloc(&t->alloc, cq->entries * sizeof(struct qhca_cqe));
    cq->dbrec = guest_alloc(&t->alloc, 64);
    qtest_memset(t->qts, cq->ring, 0, cq->entries * sizeof(struct qhca_cqe));
    qtest_memset(t->qts, cq->dbrec, 0, 4);
    c.ring_addr = cpu_to_le64(cq->ring);
    c.dbrec_addr = cpu_to_le64(cq->dbrec);
    return c;
}

/* A CQ of 2^@depth_log2 entries on @eqn; the status of CREATE_CQ. */
uint8_t qt_cq_create(QhcaTest *t, QhcaCq *cq, uint8_t depth_log2,
                     uint32_t eqn, uint32_t uar)
{
    struct qhca_cmd_create_cq c = qt_cq_prepare(t, cq, depth_log2, eqn, uar);

    return qt_cmd(t, QHCA_CMD_CREATE_CQ, &c, sizeof(c), &cq->cqn);
}

/* The same, created with success. */
void qt_cq_init(QhcaTest *t, QhcaCq *cq, uint8_t depth_log2, uint32_t eqn,
                uint32_t uar)
{
    g_assert_cmpuint(qt_cq_create(t, cq, depth_log2, eqn, uar), ==,
                     QHCA_AQ_SUCCESS);
}

/* The same, allocated: g_free() it. */
QhcaCq *qt_cq_new(QhcaTest *t, uint8_t depth_log2, uint32_t eqn,
                  uint32_t uar)
{
    QhcaCq *cq = g_new0(QhcaCq, 1);

    qt_cq_init(t, cq, depth_log2, eqn, uar);
    return cq;
}

uint64_t qt_cqe_addr(const QhcaCq *cq)
{
    return cq->ring + (cq->ci & (cq->entries - 1)) * sizeof(struct qhca_cqe);
}

/* Does the CQE at the consumer index carry this pass's owner phase? */
bool qt_cq_ready(QhcaTest *t, const QhcaCq *cq)
{
    uint8_t phase = ((cq->ci / cq->entries) & 1) ^ 1;
    uint8_t owner = qtest_readb(t->qts, qt_cqe_addr(cq) +
                                offsetof(struct qhca_cqe, owner));

    return (owner & QHCA_CQE_OWNER_PHASE) == phase;
}

/*
 * Take the next CQE, waiting up to @timeout_us for it (0: only look),
 * and update the doorbell record; false if none came.
 */
bool qt_cq_poll_for(QhcaTest *t, QhcaCq *cq, struct qhca_cqe *cqe,
                    int64_t timeout_us)
{
    gint64 end = g_get_monotonic_time() + timeout_us;
    uint32_t rec;

    while (!qt_cq_ready(t, cq)) {
        if (g_get_monotonic_time() >= end) {
            return false;
        }
        g_usleep(100);
    }
    qtest_memread(t->qts, qt_cqe_addr(cq), cqe, sizeof(*cqe));
    cq->ci++;
    rec = cpu_to_le32(cq->ci);
    qtest_memwrite(t->qts, cq->dbrec, &rec, sizeof(rec));
    return true;
}

/* The same, waiting for the usual timeout if @wait. */
bool qt_cq_poll(QhcaTest *t, QhcaCq *cq, struct qhca_cqe *cqe, bool wait)
{
    return qt_cq_poll_for(t, cq, cqe, wait ? QHCA_TIMEOUT_US : 0);
}

/* The next CQE, which must come within the timeout. */
struct qhca_cqe qt_cq_take(QhcaTest *t, QhcaCq *cq)
{
    struct qhca_cqe cqe;

    g_assert(qt_cq_poll(t, cq, &cqe, true));
    return cqe;
}

/* The next CQE, which must be QP @qpn's, with @opcode and @status. */
struct qhca_cqe qt_cq_expect(QhcaTest *t, QhcaCq *cq, uint32_t qpn,
                             uint8_t opcode, uint8_t status)
{
    struct qhca_cqe cqe = qt_cq_take(t, cq);

    g_assert_cmpuint(le32_to_cpu(cqe.qpn), ==, qpn);
    g_assert_cmpuint(cqe.opcode, ==, opcode);
    g_assert_cmpuint(cqe.status, ==, status);
    return cqe;
}

/*
 * No further CQE turns up within 20 ms: the engine completes a WQE as it
 * handles its doorbell, well within that.
 */
void qt_cq_assert_empty(QhcaTest *t, const QhcaCq *cq)
{
    int i;

    for (i = 0; i < 20; i++) {
        g_assert(!qt_cq_ready(t, cq));
        g_usleep(1000);
    }
}

/* Arm @cq (for solicited completions only if @solicited) from @uar. */
void qt_cq_arm(QhcaTest *t, uint32_t uar, const QhcaCq *cq, bool solicited)
{
    qt_db(t, uar, solicited ? QHCA_DB_CQ_ARM_SOL : QHCA_DB_CQ_ARM, cq->cqn,
          cq->ci);
}

/* ------------------------------------------------------------------ */
/* Rings and doorbells                                                 */

/*
 * Is @opcode a send opcode with any of @flags (QHCA_WR_F_*), as the
 * opcode table of qhca_hw.h says?
 */
bool qt_wr_is(unsigned opcode, unsigned flags)
{
    const struct qhca_wr_info *info = qhca_wr_info(opcode);

    return info && (info->flags & flags);
}

/* Write a send WQE of @wlen bytes at @slot, its SGEs right after it. */
void qt_write_wqe(QhcaTest *t, uint64_t slot, const void *w, size_t wlen,
                  const struct qhca_sge *sge, unsigned nsge)
{
    qtest_memwrite(t->qts, slot, w, wlen);
    if (nsge) {
        qtest_memwrite(t->qts, slot + wlen, sge, nsge * sizeof(*sge));
    }
}

/* Write a receive WQE at @slot; no doorbell. */
void qt_write_rwqe(QhcaTest *t, uint64_t slot, uint64_t wr_id,
                   const struct qhca_sge *sge, unsigned nsge)
{
    struct qhca_rq_wqe w = {
        .wr_id = cpu_to_le64(wr_id),
        .num_sge = nsge,
    };

    qt_write_wqe(t, slot, &w, sizeof(w), sge, nsge);
}

/* Write @val to doorbell @reg of page @page, whatever they are. */
void qt_db_write(QhcaTest *t, uint32_t page, uint32_t reg, uint32_t val)
{
    qpci_io_writel(t->dev, t->bar2, (uint64_t)page * QHCA_DB_PAGE_SIZE + reg,
                   val);
}

/* Ring doorbell @reg (QHCA_DB_SQ, ...) of UAR page @uar. */
void qt_db(QhcaTest *t, uint32_t uar, uint32_t reg, uint32_t num,
           uint16_t idx)
{
    qt_db_write(t, uar, reg, num << 16 | idx);
}

struct qhca_sge qt_sge(uint64_t addr, uint32_t len, uint32_t lkey)
{
    return (struct qhca_sge) {
        .addr = cpu_to_le64(addr),
        .length = cpu_to_le32(len),
        .lkey = cpu_to_le32(lkey),
    };
}

/* ------------------------------------------------------------------ */
/* Shared receive queues                                               */

/*
 * A basic SRQ's zeroed ring and its CREATE_SRQ, not yet submitted: the
 * caller may change the command first.
 */
struct qhca_cmd_create_srq qt_srq_prepare(QhcaTest *t, QhcaSrq *srq,
                                          uint32_t pdn, uint32_t uar,
                                          uint8_t depth_log2,
                                          uint8_t stride_log2)
{
    uint64_t size = 1ull << (depth_log2 + stride_log2);
    struct qhca_cmd_create_srq c = {
        .pdn = cpu_to_le32(pdn),
        .uar = cpu_to_le32(uar),
        .depth_log2 = depth_log2,
        .stride_log2 = stride_log2,
        .type = QHCA_SRQT_BASIC,
    };

    memset(srq, 0, sizeof(*srq));
    srq->uar = uar;
    srq->entries = 1u << depth_log2;
    srq->stride = 1u << stride_log2;
    srq->ring = guest_alloc(&t->alloc, size);
    qtest_memset(t->qts, srq->ring, 0, size);
    c.ring_addr = cpu_to_le64(srq->ring);
    return c;
}

/* Submit @c for @srq; the status of CREATE_SRQ. */
uint8_t qt_srq_create_cmd(QhcaTest *t, QhcaSrq *srq,
                          const struct qhca_cmd_create_srq *c)
{
    srq->type = c->type;
    return qt_cmd(t, QHCA_CMD_CREATE_SRQ, c, sizeof(*c), &srq->srqn);
}

/* A basic SRQ, created with success; g_free() it. */
QhcaSrq *qt_srq_new(QhcaTest *t, uint32_t pdn, uint32_t uar,
                    uint8_t depth_log2, uint8_t stride_log2)
{
    QhcaSrq *srq = g_new0(QhcaSrq, 1);
    struct qhca_cmd_create_srq c = qt_srq_prepare(t, srq, pdn, uar,
                                                  depth_log2, stride_log2);

    g_assert_cmpuint(qt_srq_create_cmd(t, srq, &c), ==, QHCA_AQ_SUCCESS);
    return srq;
}

uint64_t qt_srq_slot(const QhcaSrq *srq, uint16_t idx)
{
    return srq->ring + (uint64_t)(idx & (srq->entries - 1)) * srq->stride;
}

/* Write a receive WQE at the producer index; no doorbell. */
void qt_srq_write(QhcaTest *t, QhcaSrq *srq, uint64_t wr_id,
                  const struct qhca_sge *sge, unsigned nsge)
{
    qt_write_rwqe(t, qt_srq_slot(srq, srq->pi), wr_id, sge, nsge);
    srq->pi++;
}

void qt_srq_ring(QhcaTest *t, const QhcaSrq *srq)
{
    qt_db(t, srq->uar, QHCA_DB_SRQ, srq->srqn, srq->pi);
}

/* Write a receive WQE and ring the SRQ doorbell. */
void qt_srq_post(QhcaTest *t, QhcaSrq *srq, uint64_t wr_id,
                 const struct qhca_sge *sge, unsigned nsge)
{
    qt_srq_write(t, srq, wr_id, sge, nsge);
    qt_srq_ring(t, srq);
}

struct qhca_srq_attr qt_query_srq(QhcaTest *t, uint32_t srqn)
{
    struct qhca_cmd_handle h = { .handle = cpu_to_le32(srqn) };
    struct qhca_srq_attr a;

    g_assert_cmpuint(qt_query(t, QHCA_CMD_QUERY_SRQ, &h, sizeof(h), &a,
                              sizeof(a)), ==, QHCA_AQ_SUCCESS);
    return a;
}

/* ------------------------------------------------------------------ */
/* Queue pairs                                                         */

const QhcaPath qt_rc_path = {
    .rc = true,
    .dlid = QT_LID,
    .mtu = QT_MTU_1024,
    .access = QHCA_ACCESS_REMOTE_WRITE | QHCA_ACCESS_REMOTE_READ |
              QHCA_ACCESS_REMOTE_ATOMIC,
    .max_dest_rd_atomic = 4,
    .min_rnr_timer = 1,
    .timeout = 14,
    .retry_cnt = 7,
    .rnr_retry = 7,
    .max_rd_atomic = 4,
};

/* The RC QP most tests use: 16 WQEs of 256 bytes, 16 receive WQEs of 64. */
QhcaQpSpec qt_rc_spec(uint32_t pdn, uint32_t uar, const QhcaCq *scq,
                      const QhcaCq *rcq)
{
    return (QhcaQpSpec) {
        .type = QHCA_QPT_RC,
        .pdn = pdn,
        .uar = uar,
        .send_cqn = scq->cqn,
        .recv_cqn = rcq->cqn,
        .sq_log2 = 4,
        .sq_stride_log2 = 8,
        .rq_log2 = 4,
        .rq_stride_log2 = 6,
    };
}

/* A zeroed ring of 2^@log2 entries of 2^@stride_log2 bytes, or 0: none. */
static uint64_t qt_ring(QhcaTest *t, uint8_t log2, uint8_t stride_log2,
                        uint32_t *entries, uint32_t *stride)
{
    uint64_t size = 1ull << (log2 + stride_log2);
    uint64_t ring;

    if (!stride_log2) {
        return 0;
    }
    ring = guest_alloc(&t->alloc, size);
    qtest_memset(t->qts, ring, 0, size);
    *entries = 1u << log2;
    *stride = 1u << stride_log2;
    return ring;
}

/*
 * The zeroed rings of a QP as @s describes it and its CREATE_QP, not yet
 * submitted: the caller may change the command first.
 */
struct qhca_cmd_create_qp qt_qp_prepare(QhcaTest *t, QhcaQp *qp,
                                        const QhcaQpSpec *s)
{
    struct qhca_cmd_create_qp c = {
        .pdn = cpu_to_le32(s->pdn),
        .uar = cpu_to_le32(s->uar),
        .send_cqn = cpu_to_le16(s->send_cqn),
        .recv_cqn = cpu_to_le16(s->recv_cqn),
        .type = s->type,
        .flags = s->flags,
        .sq_depth_log2 = s->sq_log2,
        .sq_stride_log2 = s->sq_stride_log2,
    };

    memset(qp, 0, sizeof(*qp));
    qp->type = s->type;
    qp->uar = s->uar;
    qp->sq = qt_ring(t, s->sq_log2, s->sq_stride_log2, &qp->sq_entries,
                     &qp->sq_stride);
    c.sq_addr = cpu_to_le64(qp->sq);
    if (s->srq) {
        c.flags |= QHCA_QP_F_SRQ;
        c.srqn = cpu_to_le16(s->srq->srqn);
    } else {
        qp->rq = qt_ring(t, s->rq_log2, s->rq_stride_log2, &qp->rq_entries,
                         &qp->rq_stride);
        c.rq_addr = cpu_to_le64(qp->rq);
        c.rq_depth_log2 = s->rq_log2;
        c.rq_stride_log2 = s->rq_stride_log2;
    }
    return c;
}

/* Submit @c for @qp; the status of CREATE_QP. */
uint8_t qt_qp_create_cmd(QhcaTest *t, QhcaQp *qp,
                         const struct qhca_cmd_create_qp *c)
{
    return qt_cmd(t, QHCA_CMD_CREATE_QP, c, sizeof(*c), &qp->qpn);
}

uint8_t qt_qp_try_create(QhcaTest *t, QhcaQp *qp, const QhcaQpSpec *s)
{
    struct qhca_cmd_create_qp c = qt_qp_prepare(t, qp, s);

    return qt_qp_create_cmd(t, qp, &c);
}

/* A QP as @s describes it, created with success; g_free() it. */
QhcaQp *qt_qp_new(QhcaTest *t, const QhcaQpSpec *s)
{
    QhcaQp *qp = g_new0(QhcaQp, 1);

    g_assert_cmpuint(qt_qp_try_create(t, qp, s), ==, QHCA_AQ_SUCCESS);
    return qp;
}

uint8_t qt_modify_qp(QhcaTest *t, struct qhca_cmd_modify_qp *m)
{
    return qt_cmd(t, QHCA_CMD_MODIFY_QP, m, sizeof(*m), NULL);
}

/* MODIFY_QP of @qp to @state with @mask, its attributes from @attrs. */
uint8_t qt_qp_modify(QhcaTest *t, const QhcaQp *qp, uint8_t state,
                     uint32_t mask, const struct qhca_cmd_modify_qp *attrs)
{
    struct qhca_cmd_modify_qp m = attrs ? *attrs
                                        : (struct qhca_cmd_modify_qp) { 0 };

    m.qpn = cpu_to_le32(qp->qpn);
    m.attr_mask = cpu_to_le32(QHCA_QP_ATTR_STATE | mask);
    m.state = state;
    return qt_modify_qp(t, &m);
}

struct qhca_qp_attr qt_query_qp(QhcaTest *t, uint32_t qpn)
{
    struct qhca_cmd_handle h = { .handle = cpu_to_le32(qpn) };
    struct qhca_qp_attr a;

    g_assert_cmpuint(qt_query(t, QHCA_CMD_QUERY_QP, &h, sizeof(h), &a,
                              sizeof(a)), ==, QHCA_AQ_SUCCESS);
    return a;
}

uint8_t qt_qp_state(QhcaTest *t, const QhcaQp *qp)
{
    return qt_query_qp(t, qp->qpn).state;
}

/* The engine moves QPs to ERR on its own time: wait for @state. */
void qt_qp_wait_state(QhcaTest *t, const QhcaQp *qp, uint8_t state)
{
    gint64 end = g_get_monotonic_time() + QHCA_TIMEOUT_US;

    while (qt_qp_state(t, qp) != state) {
        g_assert(g_get_monotonic_time() < end);
        g_usleep(1000);
    }
}

/*
 * RESET -> INIT -> RTR -> RTS towards @dest_qpn along @p; the status of
 * the first step that fails, or SUCCESS.
 */
uint8_t qt_try_connect(QhcaTest *t, uint32_t qpn, uint32_t dest_qpn,
                       const QhcaPath *p)
{
    struct qhca_cmd_modify_qp m[3] = {
        {
            .attr_mask = cpu_to_le32(QHCA_QP_ATTR_STATE |
                                     QHCA_QP_ATTR_ACCESS),
            .state = QHCA_QPS_INIT,
            .access = p->access,
        }, {
            .attr_mask = cpu_to_le32(QHCA_QP_ATTR_STATE | QHCA_QP_ATTR_PATH |
                                     QHCA_QP_ATTR_DEST_QPN |
                                     QHCA_QP_ATTR_RQ_PSN |
                                     (p->rc ? QHCA_QP_ATTR_MAX_DEST_RD_ATOMIC |
                                              QHCA_QP_ATTR_MIN_RNR_TIMER : 0)),
            .state = QHCA_QPS_RTR,
            .dlid = cpu_to_le16(p->dlid),
            .path_mtu = p->mtu,
            .dest_qpn = cpu_to_le32(dest_qpn),
            .rq_psn = cpu_to_le32(p->rq_psn),
            .max_dest_rd_atomic = p->max_dest_rd_atomic,
            .min_rnr_timer = p->min_rnr_timer,
        }, {
            .attr_mask = cpu_to_le32(QHCA_QP_ATTR_STATE | QHCA_QP_ATTR_SQ_PSN |
                                     (p->rc ? QHCA_QP_ATTR_TIMEOUT |
                                              QHCA_QP_ATTR_RETRY_CNT |
                                              QHCA_QP_ATTR_RNR_RETRY |
                                              QHCA_QP_ATTR_MAX_RD_ATOMIC : 0)),
            .state = QHCA_QPS_RTS,
            .sq_psn = cpu_to_le32(p->sq_psn),
            .timeout = p->timeout,
            .retry_cnt = p->retry_cnt,
            .rnr_retry = p->rnr_retry,
            .max_rd_atomic = p->max_rd_atomic,
        },
    };
    uint8_t status = QHCA_AQ_SUCCESS;
    int i;

    for (i = 0; i < 3 && status == QHCA_AQ_SUCCESS; i++) {
        m[i].qpn = cpu_to_le32(qpn);
        status = qt_modify_qp(t, &m[i]);
    }
    return status;
}

/* The same, each step a success. */
void qt_connect(QhcaTest *t, uint32_t qpn, uint32_t dest_qpn,
                const QhcaPath *p)
{
    g_assert_cmpuint(qt_try_connect(t, qpn, dest_qpn, p), ==,
                     QHCA_AQ_SUCCESS);
}

/*
 * @qp from RESET to RTS towards @dest along @p (whose PSNs are ignored):
 * each side sends from @psn_base plus its own QP number, so that both
 * sides of a connection agree.  QUERY_QP then says RTS.
 */
void qt_qp_connect(QhcaTest *t, const QhcaQp *qp, const QhcaQp *dest,
                   const QhcaPath *p, uint32_t psn_base)
{
    QhcaPath path = *p;

    path.rq_psn = psn_base + dest->qpn;
    path.sq_psn = psn_base + qp->qpn;
    qt_connect(t, qp->qpn, dest->qpn, &path);
    g_assert_cmpuint(qt_qp_state(t, qp), ==, QHCA_QPS_RTS);
}

/* A UD QP from RESET to RTS with @qkey and @sq_psn, each a success. */
void qt_qp_ud_rts(QhcaTest *t, const QhcaQp *qp, uint32_t qkey,
                  uint32_t sq_psn)
{
    struct qhca_cmd_modify_qp m = {
        .qkey = cpu_to_le32(qkey),
        .sq_psn = cpu_to_le32(sq_psn),
    };

    g_assert_cmpuint(qt_qp_modify(t, qp, QHCA_QPS_INIT, QHCA_QP_ATTR_QKEY,
                                  &m), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(qt_qp_modify(t, qp, QHCA_QPS_RTR, 0, NULL), ==,
                     QHCA_AQ_SUCCESS);
    g_assert_cmpuint(qt_qp_modify(t, qp, QHCA_QPS_RTS, QHCA_QP_ATTR_SQ_PSN,
                                  &m), ==, QHCA_AQ_SUCCESS);
}

uint64_t qt_qp_sq_slot(const QhcaQp *qp, uint16_t idx)
{
    return qp->sq + (uint64_t)(idx & (qp->sq_entries - 1)) * qp->sq_stride;
}

uint64_t qt_qp_rq_slot(const QhcaQp *qp, uint16_t idx)
{
    return qp->rq + (uint64_t)(idx & (qp->rq_entries - 1)) * qp->rq_stride;
}

/*
 * Write the send WQE @w (any of the 64-byte layouts: struct qhca_sq_wqe,
 * _ud, _bind, _reg_mr) and its SGEs at the producer index; returns its
 * index.  The doorbell is separate.
 */
uint16_t qt_qp_post_send(QhcaTest *t, QhcaQp *qp, const void *w,
                         const struct qhca_sge *sge, unsigned nsge)
{
    uint16_t idx = qp->sq_pi++;

    qt_write_wqe(t, qt_qp_sq_slot(qp, idx), w, sizeof(struct qhca_sq_wqe),
                 sge, nsge);
    return idx;
}

void qt_qp_ring_sq(QhcaTest *t, const QhcaQp *qp)
{
    qt_db(t, qp->uar, QHCA_DB_SQ, qp->qpn, qp->sq_pi);
}

/* Write a receive WQE at the producer index and ring the RQ doorbell. */
uint16_t qt_qp_post_recv(QhcaTest *t, QhcaQp *qp, uint64_t wr_id,
                         const struct qhca_sge *sge, unsigned nsge)
{
    uint16_t idx = qp->rq_pi++;

    qt_write_rwqe(t, qt_qp_rq_slot(qp, idx), wr_id, sge, nsge);
    qt_db(t, qp->uar, QHCA_DB_RQ, qp->qpn, qp->rq_pi);
    return idx;
}

/* ------------------------------------------------------------------ */
/* The Ethernet port (1.5)                                             */

const uint8_t qt_eth_mac[6] = { 0x52, 0x54, 0x00, 0xc0, 0xff, 0xee };
const uint8_t qt_peer_mac[6] = { 0x52, 0x54, 0x00, 0x00, 0x00, 0x02 };
const uint8_t qt_port_ip4[16] = {
    [10] = 0xff, [11] = 0xff, [12] = 10, [13] = 0, [14] = 0, [15] = 1
};
const uint8_t qt_peer_ip4[16] = {
    [10] = 0xff, [11] = 0xff, [12] = 10, [13] = 0, [14] = 0, [15] = 2
};
const uint8_t qt_port_ip6[16] = { 0xfd, 0x00, [15] = 1 };
const uint8_t qt_peer_ip6[16] = { 0xfd, 0x00, [15] = 2 };

/* A frame larger than this would make QEMU's socket backend hang up. */
#define QT_WIRE_FRAME_MAX   (64 * 1024)
/* Frames the device does not take wait here; more than this are lost. */
#define QT_WIRE_OUT_MAX     (8 * 1024 * 1024)

/*
 * Has this QEMU's qhca a netdev property, i.e. the Ethernet port?  Asked
 * once, of a machine of its own.
 */
bool qt_has_eth(void)
{
    static int has = -1;
    QTestState *qts;
    QDict *rsp;
    QList *props;
    const QListEntry *e;

    if (has >= 0) {
        return has;
    }
    has = 0;
    qts = qtest_init("-machine none");
    rsp = qtest_qmp(qts, "{'execute': 'device-list-properties', "
                    "'arguments': {'typename': 'qhca'}}");
    props = qdict_haskey(rsp, "return") ? qdict_get_qlist(rsp, "return") :
            NULL;
    for (e = props ? qlist_first(props) : NULL; e; e = qlist_next(e)) {
        QDict *d = qobject_to(QDict, qlist_entry_obj(e));

        if (d && !g_strcmp0(qdict_get_try_str(d, "name"), "netdev")) {
            has = 1;
        }
    }
    qobject_unref(rsp);
    qtest_quit(qts);
    return has;
}

/*
 * The device on a socket netdev (-netdev socket,fd=N) whose other end,
 * t->wire, the test holds, with the MAC qt_eth_mac; @props as
 * qhca_start()'s.  The test's end does not block: frames the device does
 * not take yet wait in t->wire_out (qt_wire_flush()).
 */
QhcaTest *qt_start_eth(const char *props)
{
    g_autofree char *args = NULL;
    QhcaTest *t;
    int sv[2];

    g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), ==, 0);
    args = g_strdup_printf(",netdev=qtwire,mac=" QT_ETH_MAC_STR "%s "
                           "-netdev socket,id=qtwire,fd=%d",
                           props ? props : "", sv[1]);
    t = qhca_start(args);
    /* QEMU has its copy: an end of the connection is QEMU's going. */
    close(sv[1]);
    g_assert(g_unix_set_fd_nonblocking(sv[0], true, NULL));
    t->wire = sv[0];
    t->wire_in = g_byte_array_new();
    t->wire_out = g_byte_array_new();
    return t;
}

/*
 * Put a frame on the wire, as the rest of the segment: it is queued, and
 * sent as far as the device takes it now.  Past QT_WIRE_OUT_MAX bytes
 * queued, frames are lost, as on a real segment.
 */
void qt_wire_send(QhcaTest *t, const void *frame, size_t len)
{
    uint32_t be = cpu_to_be32(len);

    g_assert_cmpint(t->wire, >=, 0);
    g_assert_cmpuint(len, <=, QT_WIRE_FRAME_MAX);
    if (t->wire_out->len + len > QT_WIRE_OUT_MAX) {
        return;
    }
    g_byte_array_append(t->wire_out, (const guint8 *)&be, sizeof(be));
    g_byte_array_append(t->wire_out, frame, len);
    qt_wire_flush(t, 0);
}

/*
 * Frames read ahead of the test: what is past this stays in the socket.
 * qt_wire_recv() takes each frame off the front of t->wire_in, which
 * moves the rest, so a device that sends as fast as the test reads (a
 * paced READ response of 128 MiB) must not grow it without bound.
 */
#define QT_WIRE_IN_MAX      (64 * 1024)

/* Move what the socket has into t->wire_in; false at its end. */
static bool qt_wire_read(QhcaTest *t)
{
    uint8_t buf[16384];
    ssize_t n;

    for (;;) {
        if (t->wire_in->len >= QT_WIRE_IN_MAX) {
            return true;
        }
        n = read(t->wire, buf, sizeof(buf));
        if (n > 0) {
            g_byte_array_append(t->wire_in, buf, n);
            continue;
        }
        return n < 0 && (errno == EAGAIN || errno == EINTR);
    }
}

/* Wait up to @timeout_us for the wire to be readable or writable. */
static void qt_wire_wait(QhcaTest *t, int64_t timeout_us)
{
    struct pollfd p = {
        .fd = t->wire,
        .events = POLLIN | (t->wire_out->len ? POLLOUT : 0),
    };

    if (timeout_us > 0) {
        poll(&p, 1, MAX(1, (int)(timeout_us / 1000)));
    }
}

/*
 * Send what waits in t->wire_out, for up to @timeout_us (0: what goes
 * now); true when nothing is left.  Reads what came meanwhile, so that
 * neither side's socket buffer fills while both write.
 */
bool qt_wire_flush(QhcaTest *t, int64_t timeout_us)
{
    gint64 end = g_get_monotonic_time() + timeout_us;

    for (;;) {
        ssize_t n = t->wire_out->len ?
                    write(t->wire, t->wire_out->data, t->wire_out->len) : 0;

        if (n > 0) {
            g_byte_array_remove_range(t->wire_out, 0, n);
        }
        if (!qt_wire_read(t) || !t->wire_out->len ||
            g_get_monotonic_time() >= end) {
            return !t->wire_out->len;
        }
        if (n <= 0) {
            qt_wire_wait(t, end - g_get_monotonic_time());
        }
    }
}

/*
 * The next frame the device sent, waiting up to @timeout_us: its length
 * (of which the first @size bytes are copied to @buf), or -1 if none
 * came (or QEMU is gone).
 */
ssize_t qt_wire_recv(QhcaTest *t, void *buf, size_t size, int64_t timeout_us)
{
    gint64 end = g_get_monotonic_time() + timeout_us;

    g_assert_cmpint(t->wire, >=, 0);
    for (;;) {
        bool open;
        uint32_t len;

        qt_wire_flush(t, 0);
        open = qt_wire_read(t);
        if (t->wire_in->len >= sizeof(len)) {
            memcpy(&len, t->wire_in->data, sizeof(len));
            len = be32_to_cpu(len);
            g_assert_cmpuint(len, <=, QT_WIRE_FRAME_MAX);
            if (t->wire_in->len >= sizeof(len) + len) {
                memcpy(buf, t->wire_in->data + sizeof(len), MIN(len, size));
                g_byte_array_remove_range(t->wire_in, 0, sizeof(len) + len);
                return len;
            }
        }
        if (!open || g_get_monotonic_time() >= end) {
            return -1;
        }
        qt_wire_wait(t, end - g_get_monotonic_time());
    }
}

uint8_t qt_set_gid(QhcaTest *t, uint16_t index, uint8_t type,
                   const uint8_t gid[16])
{
    struct qhca_cmd_set_gid c = {
        .index = cpu_to_le16(index),
        .type = type,
    };

    if (gid) {
        memcpy(c.gid, gid, sizeof(c.gid));
    }
    return qt_cmd(t, QHCA_CMD_SET_GID, &c, sizeof(c), NULL);
}

/* The port's addresses: qt_port_ip4 at QT_GID_IP4, qt_port_ip6 at _IP6. */
void qt_eth_gids(QhcaTest *t)
{
    g_assert_cmpuint(qt_set_gid(t, QT_GID_IP4, QHCA_GID_ROCE_V2,
                                qt_port_ip4), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(qt_set_gid(t, QT_GID_IP6, QHCA_GID_ROCE_V2,
                                qt_port_ip6), ==, QHCA_AQ_SUCCESS);
}

/* QP @qpn's peer: @dgid at @dmac, from GID @sgid_index; hop limit 64. */
uint8_t qt_set_qp_av(QhcaTest *t, uint32_t qpn, uint8_t sgid_index,
                     const uint8_t dgid[16], const uint8_t dmac[6])
{
    struct qhca_cmd_set_qp_av c = {
        .qpn = cpu_to_le32(qpn),
        .sgid_index = sgid_index,
        .hop_limit = 64,
    };

    memcpy(c.dgid, dgid, sizeof(c.dgid));
    memcpy(c.dmac, dmac, sizeof(c.dmac));
    return qt_cmd(t, QHCA_CMD_SET_QP_AV, &c, sizeof(c), NULL);
}

/* The addresses of a frame from the test's peer to the port. */
QtRoceAddr qt_roce_addr(bool v6)
{
    QtRoceAddr a = { .sport = 0xc000, .hop_limit = 64 };

    memcpy(a.smac, qt_peer_mac, 6);
    memcpy(a.dmac, qt_eth_mac, 6);
    memcpy(a.sgid, v6 ? qt_peer_ip6 : qt_peer_ip4, 16);
    memcpy(a.dgid, v6 ? qt_port_ip6 : qt_port_ip4, 16);
    return a;
}

/* A BTH at @p (P_Key 0xffff, TVer 0); returns its length. */
size_t qt_bth(uint8_t *p, uint8_t opcode, bool se, bool ackreq, uint8_t pad,
              uint32_t qpn, uint32_t psn)
{
    p[0] = opcode;
    p[1] = (se ? 0x80 : 0) | (pad & 3) << 4;
    p[2] = p[3] = 0xff;
    p[4] = 0;
    p[5] = qpn >> 16;
    p[6] = qpn >> 8;
    p[7] = qpn;
    p[8] = ackreq ? 0x80 : 0;
    p[9] = psn >> 16;
    p[10] = psn >> 8;
    p[11] = psn;
    return QT_BTH_LEN;
}

/* CRC-32 (IEEE 802.3, reflected) of @p continuing from @crc, unfinished. */
static uint32_t qt_crc32(uint32_t crc, const uint8_t *p, size_t n)
{
    static uint32_t table[256];
    size_t i;

    if (!table[1]) {
        for (i = 0; i < 256; i++) {
            uint32_t c = i;
            int k;

            for (k = 0; k < 8; k++) {
                c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
            }
            table[i] = c;
        }
    }
    for (i = 0; i < n; i++) {
        crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    }
    return crc;
}

/* The offset of the IP header, and its ethertype; 0 if too short. */
static size_t qt_eth_ip(const uint8_t *frame, size_t len, uint16_t *type)
{
    size_t off = 12;

    if (len < 14) {
        return 0;
    }
    *type = frame[off] << 8 | frame[off + 1];
    if (*type == 0x8100) {
        off += 4;
        if (len < off + 2) {
            return 0;
        }
        *type = frame[off] << 8 | frame[off + 1];
    }
    return off + 2;
}

/*
 * The ICRC of the RoCEv2 frame @frame, whose last QT_ICRC_LEN of @len
 * bytes are the ICRC's place: CRC-32 over the IP header (with IPv4 TOS,
 * TTL and checksum, or IPv6 traffic class, flow label and hop limit, all
 * ones), the UDP header (checksum all ones), the BTH (its reserved byte
 * before the QPN all ones) and everything after it; it starts from the
 * CRC of the eight bytes of ones that stand for the LRH of IB, and is
 * inverted.  IPv4 options, if any, count as part of the IP header.
 */
uint32_t qt_icrc(const uint8_t *frame, size_t len)
{
    static const uint8_t lrh[8] = {
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff
    };
    uint8_t hdr[60 + 8 + QT_BTH_LEN];
    uint16_t type = 0;
    size_t ip = qt_eth_ip(frame, len, &type), iplen, n;
    uint32_t crc;

    if (!ip || len < ip + 1) {
        return 0;
    }
    iplen = type == 0x86dd ? 40 : (frame[ip] & 0xf) * 4;
    n = iplen + 8 + QT_BTH_LEN;
    if (iplen < 20 || len < ip + n + QT_ICRC_LEN) {
        return 0;
    }
    memcpy(hdr, frame + ip, n);
    if (type == 0x86dd) {
        hdr[0] |= 0x0f;
        hdr[1] = hdr[2] = hdr[3] = 0xff;
        hdr[7] = 0xff;
    } else {
        hdr[1] = 0xff;
        hdr[8] = 0xff;
        hdr[10] = hdr[11] = 0xff;
    }
    hdr[iplen + 6] = hdr[iplen + 7] = 0xff;
    hdr[iplen + 8 + 4] = 0xff;
    crc = qt_crc32(0xffffffffu, lrh, sizeof(lrh));
    crc = qt_crc32(crc, hdr, n);
    crc = qt_crc32(crc, frame + ip + n, len - ip - n - QT_ICRC_LEN);
    return ~crc;
}

/* Write @frame's ICRC into its last four bytes, least significant first. */
void qt_roce_seal(uint8_t *frame, size_t len)
{
    uint32_t icrc = cpu_to_le32(qt_icrc(frame, len));

    memcpy(frame + len - QT_ICRC_LEN, &icrc, QT_ICRC_LEN);
}

/*
 * Set the header checksum of @frame's IPv4 header (after a VLAN tag, if
 * any; IHL as the header says), for a test that changed the header on
 * purpose and wants the rest of it checked.  False if @len does not hold
 * the header.
 */
bool qt_ip4_csum(uint8_t *frame, size_t len)
{
    uint16_t type = 0;
    size_t ip = qt_eth_ip(frame, len, &type), ihl, i;
    uint32_t sum = 0;

    if (!ip || len < ip + 20) {
        return false;
    }
    ihl = (frame[ip] & 0xf) * 4;
    if (ihl < 20 || len < ip + ihl) {
        return false;
    }
    stw_be_p(frame + ip + 10, 0);
    for (i = 0; i < ihl; i += 2) {
        sum += lduw_be_p(frame + ip + i);
    }
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    stw_be_p(frame + ip + 10, ~sum);
    return true;
}

/*
 * The RoCEv2 frame of the IB transport bytes @ib (BTH, extension
 * headers, payload and pad: @ib_len bytes) from and to @a, with its
 * ICRC, into @frame (room for QT_ROCE_HDR_MAX + @ib_len + QT_ICRC_LEN);
 * returns its length.  IPv4 has DF set and the UDP checksum is 0, as
 * rxe sends them.
 */
size_t qt_roce_frame(const QtRoceAddr *a, const void *ib, size_t ib_len,
                     uint8_t *frame)
{
    bool v6 = memcmp(a->sgid, qt_port_ip4, 12) != 0;
    size_t off = 12, ip, udp, total;
    uint16_t ulen = 8 + ib_len + QT_ICRC_LEN;

    memcpy(frame, a->dmac, 6);
    memcpy(frame + 6, a->smac, 6);
    if (a->vlan) {
        stw_be_p(frame + off, 0x8100);
        stw_be_p(frame + off + 2, a->vlan);
        off += 4;
    }
    stw_be_p(frame + off, v6 ? 0x86dd : 0x0800);
    ip = off + 2;
    if (v6) {
        stl_be_p(frame + ip, 6u << 28 | (uint32_t)a->tclass << 20 |
                 (a->flow_label & 0xfffff));
        stw_be_p(frame + ip + 4, ulen);
        frame[ip + 6] = 17;
        frame[ip + 7] = a->hop_limit;
        memcpy(frame + ip + 8, a->sgid, 16);
        memcpy(frame + ip + 24, a->dgid, 16);
        udp = ip + 40;
    } else {
        memset(frame + ip, 0, 20);
        frame[ip] = 0x45;
        frame[ip + 1] = a->tclass;
        stw_be_p(frame + ip + 2, 20 + ulen);
        stw_be_p(frame + ip + 6, 0x4000);
        frame[ip + 8] = a->hop_limit;
        frame[ip + 9] = 17;
        memcpy(frame + ip + 12, a->sgid + 12, 4);
        memcpy(frame + ip + 16, a->dgid + 12, 4);
        udp = ip + 20;
    }
    stw_be_p(frame + udp, a->sport);
    stw_be_p(frame + udp + 2, QT_ROCE_PORT);
    stw_be_p(frame + udp + 4, ulen);
    stw_be_p(frame + udp + 6, 0);
    memcpy(frame + udp + 8, ib, ib_len);
    total = udp + ulen;
    if (!v6) {
        qt_ip4_csum(frame, total);
    }
    qt_roce_seal(frame, total);
    return total;
}

/*
 * Is @frame a RoCEv2 frame (IPv4 without options or IPv6, UDP to
 * QT_ROCE_PORT, lengths that fit, a whole BTH)?  If so, its fields in @r,
 * with whether its ICRC is right.  Lengths come from the UDP header:
 * frames may be padded.
 */
bool qt_roce_parse(const uint8_t *frame, size_t len, QtRoce *r)
{
    uint16_t type = 0, ulen;
    size_t ip = qt_eth_ip(frame, len, &type), udp;
    const uint8_t *b;
    uint32_t icrc;

    memset(r, 0, sizeof(*r));
    if (!ip) {
        return false;
    }
    r->dmac = frame;
    r->smac = frame + 6;
    if (type == 0x86dd) {
        if (len < ip + 48 || frame[ip] >> 4 != 6 || frame[ip + 6] != 17) {
            return false;
        }
        r->v6 = true;
        memcpy(r->sgid, frame + ip + 8, 16);
        memcpy(r->dgid, frame + ip + 24, 16);
        udp = ip + 40;
    } else if (type == 0x0800) {
        if (len < ip + 28 || frame[ip] != 0x45 || frame[ip + 9] != 17) {
            return false;
        }
        memcpy(r->sgid, qt_port_ip4, 12);
        memcpy(r->sgid + 12, frame + ip + 12, 4);
        memcpy(r->dgid, qt_port_ip4, 12);
        memcpy(r->dgid + 12, frame + ip + 16, 4);
        udp = ip + 20;
    } else {
        return false;
    }
    r->sport = lduw_be_p(frame + udp);
    r->dport = lduw_be_p(frame + udp + 2);
    ulen = lduw_be_p(frame + udp + 4);
    if (r->dport != QT_ROCE_PORT ||
        ulen < 8 + QT_BTH_LEN + QT_ICRC_LEN || udp + ulen > len) {
        return false;
    }
    r->ib = udp + 8;
    r->ib_len = ulen - 8 - QT_ICRC_LEN;
    memcpy(&icrc, frame + r->ib + r->ib_len, sizeof(icrc));
    r->icrc_ok = le32_to_cpu(icrc) == qt_icrc(frame, udp + ulen);
    b = frame + r->ib;
    r->opcode = b[0];
    r->se = b[1] & 0x80;
    r->pad = (b[1] >> 4) & 3;
    r->pkey = b[2] << 8 | b[3];
    r->qpn = ldl_be_p(b + 4) & 0xffffff;
    r->ackreq = b[8] & 0x80;
    r->psn = ldl_be_p(b + 8) & 0xffffff;
    return true;
}

/* ------------------------------------------------------------------ */
/* On-demand paging (1.8)                                              */

uint8_t qt_odp_map(QhcaTest *t, uint32_t index, uint64_t first,
                   uint64_t pbl, uint32_t npages)
{
    struct qhca_cmd_odp_map c = {
        .first_page = cpu_to_le64(first),
        .pbl_addr = cpu_to_le64(pbl),
        .index = cpu_to_le32(index),
        .npages = cpu_to_le32(npages),
    };

    return qt_cmd(t, QHCA_CMD_ODP_MAP, &c, sizeof(c), NULL);
}

uint8_t qt_odp_unmap(QhcaTest *t, uint32_t index, uint64_t first,
                     uint64_t npages)
{
    struct qhca_cmd_odp_unmap c = {
        .first_page = cpu_to_le64(first),
        .npages = cpu_to_le64(npages),
        .index = cpu_to_le32(index),
    };

    return qt_cmd(t, QHCA_CMD_ODP_UNMAP, &c, sizeof(c), NULL);
}

uint8_t qt_query_page_fault(QhcaTest *t, uint32_t qpn,
                            struct qhca_page_fault_info *info)
{
    struct qhca_cmd_query_page_fault c = { .qpn = cpu_to_le32(qpn) };

    return qt_query(t, QHCA_CMD_QUERY_PAGE_FAULT, &c, sizeof(c), info,
                    sizeof(*info));
}

uint8_t qt_resume_page_fault(QhcaTest *t, uint32_t qpn, uint8_t kind,
                             uint8_t status)
{
    struct qhca_cmd_resume_page_fault c = {
        .qpn = cpu_to_le32(qpn),
        .kind = kind,
        .status = status,
    };

    return qt_cmd(t, QHCA_CMD_RESUME_PAGE_FAULT, &c, sizeof(c), NULL);
}
