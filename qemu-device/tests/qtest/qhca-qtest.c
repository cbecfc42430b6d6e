/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qtest helpers for the qhca InfiniBand HCA model (see qhca-qtest.h).
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"
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
