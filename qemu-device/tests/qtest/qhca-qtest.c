/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qtest helpers for the qhca InfiniBand HCA model (see qhca-qtest.h).
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qobject/qdict.h"
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
    return t;
}

void qhca_stop(QhcaTest *t)
{
    g_free(t->dev);
    qpci_free_pc(t->bus);
    alloc_destroy(&t->alloc);
    qtest_quit(t->qts);
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

/* Reset, then bring the admin queue up with 2^depth_log2 entries. */
void qt_enable(QhcaTest *t, unsigned depth_log2)
{
    t->entries = 1u << depth_log2;
    t->sq = guest_alloc(&t->alloc, t->entries * sizeof(struct qhca_aq_sqe));
    t->cq = guest_alloc(&t->alloc, t->entries * sizeof(struct qhca_aq_cqe));
    qtest_memset(t->qts, t->sq, 0, t->entries * sizeof(struct qhca_aq_sqe));
    qtest_memset(t->qts, t->cq, 0, t->entries * sizeof(struct qhca_aq_cqe));
    t->sq_tail = 0;
    t->cq_head = 0;
    t->phase = 1;

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

/* A CQ of 2^@depth_log2 zeroed entries on @eqn, created with success. */
void qt_cq_init(QhcaTest *t, QhcaCq *cq, uint8_t depth_log2, uint32_t eqn,
                uint32_t uar)
{
    struct qhca_cmd_create_cq c = { 0 };

    cq->entries = 1u << depth_log2;
    cq->ci = 0;
    cq->ring = guest_alloc(&t->alloc, cq->entries * sizeof(struct qhca_cqe));
    cq->dbrec = guest_alloc(&t->alloc, 64);
    qtest_memset(t->qts, cq->ring, 0, cq->entries * sizeof(struct qhca_cqe));
    qtest_memset(t->qts, cq->dbrec, 0, 4);
    c.ring_addr = cpu_to_le64(cq->ring);
    c.dbrec_addr = cpu_to_le64(cq->dbrec);
    c.eqn = cpu_to_le32(eqn);
    c.uar = cpu_to_le32(uar);
    c.depth_log2 = depth_log2;
    g_assert_cmpuint(qt_cmd(t, QHCA_CMD_CREATE_CQ, &c, sizeof(c), &cq->cqn),
                     ==, QHCA_AQ_SUCCESS);
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

typedef struct QtCqPoll {
    QhcaTest *t;
    const QhcaCq *cq;
} QtCqPoll;

static bool qt_cq_poll_ready(void *opaque)
{
    QtCqPoll *p = opaque;

    return qt_cq_ready(p->t, p->cq);
}

/*
 * Take the next CQE (waiting for it if @wait) and update the doorbell
 * record; false if none came.
 */
bool qt_cq_poll(QhcaTest *t, QhcaCq *cq, struct qhca_cqe *cqe, bool wait)
{
    QtCqPoll p = { t, cq };
    uint32_t rec;

    if (!(wait ? qt_wait(qt_cq_poll_ready, &p) : qt_cq_ready(t, cq))) {
        return false;
    }
    qtest_memread(t->qts, qt_cqe_addr(cq), cqe, sizeof(*cqe));
    cq->ci++;
    rec = cpu_to_le32(cq->ci);
    qtest_memwrite(t->qts, cq->dbrec, &rec, sizeof(rec));
    return true;
}

/* The next CQE, which must come within the timeout. */
struct qhca_cqe qt_cq_take(QhcaTest *t, QhcaCq *cq)
{
    struct qhca_cqe cqe;

    g_assert(qt_cq_poll(t, cq, &cqe, true));
    return cqe;
}

/* No further CQE turns up, given some time. */
void qt_cq_assert_empty(QhcaTest *t, const QhcaCq *cq)
{
    int i;

    for (i = 0; i < 20; i++) {
        g_assert(!qt_cq_ready(t, cq));
        g_usleep(1000);
    }
}

/* The slot of index @idx in a ring of 2^@depth_log2 slots. */
uint64_t qt_slot(uint64_t ring, uint16_t idx, uint8_t depth_log2,
                 uint8_t stride_log2)
{
    return ring + ((uint64_t)(idx & ((1u << depth_log2) - 1)) <<
                   stride_log2);
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

/* Ring doorbell @reg (QHCA_DB_SQ, ...) of UAR page @uar. */
void qt_db(QhcaTest *t, uint32_t uar, uint32_t reg, uint32_t num,
           uint16_t idx)
{
    qpci_io_writel(t->dev, t->bar2, uar * QHCA_DB_PAGE_SIZE + reg,
                   num << 16 | idx);
}

uint8_t qt_modify_qp(QhcaTest *t, struct qhca_cmd_modify_qp *m)
{
    return qt_cmd(t, QHCA_CMD_MODIFY_QP, m, sizeof(*m), NULL);
}

struct qhca_qp_attr qt_query_qp(QhcaTest *t, uint32_t qpn)
{
    struct qhca_cmd_handle h = { .handle = cpu_to_le32(qpn) };
    struct qhca_qp_attr a;

    g_assert_cmpuint(qt_query(t, QHCA_CMD_QUERY_QP, &h, sizeof(h), &a,
                              sizeof(a)), ==, QHCA_AQ_SUCCESS);
    return a;
}

struct qhca_srq_attr qt_query_srq(QhcaTest *t, uint32_t srqn)
{
    struct qhca_cmd_handle h = { .handle = cpu_to_le32(srqn) };
    struct qhca_srq_attr a;

    g_assert_cmpuint(qt_query(t, QHCA_CMD_QUERY_SRQ, &h, sizeof(h), &a,
                              sizeof(a)), ==, QHCA_AQ_SUCCESS);
    return a;
}

/* RESET -> INIT -> RTR -> RTS towards @dest_qpn along @p, each a success. */
void qt_connect(QhcaTest *t, uint32_t qpn, uint32_t dest_qpn,
                const QhcaPath *p)
{
    struct qhca_cmd_modify_qp m = {
        .qpn = cpu_to_le32(qpn),
        .attr_mask = cpu_to_le32(QHCA_QP_ATTR_STATE | QHCA_QP_ATTR_ACCESS),
        .state = QHCA_QPS_INIT,
        .access = p->access,
    };

    g_assert_cmpuint(qt_modify_qp(t, &m), ==, QHCA_AQ_SUCCESS);
    m = (struct qhca_cmd_modify_qp) {
        .qpn = cpu_to_le32(qpn),
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
    };
    g_assert_cmpuint(qt_modify_qp(t, &m), ==, QHCA_AQ_SUCCESS);
    m = (struct qhca_cmd_modify_qp) {
        .qpn = cpu_to_le32(qpn),
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
    };
    g_assert_cmpuint(qt_modify_qp(t, &m), ==, QHCA_AQ_SUCCESS);
}
