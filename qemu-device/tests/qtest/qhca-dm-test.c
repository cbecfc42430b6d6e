/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qtest for qhca device memory (interface 1.7): BAR 4 and its size
 * property, QUERY_DEVICE's dm_size and capability, REG_MR of flags DM with
 * every malformed field, and RC traffic over device memory MRs on the
 * loopback wire: what the host writes into BAR 4 a READ, a SEND and an
 * atomic find there, and what a WRITE, a receive or an atomic puts into a
 * device memory MR the host reads back from BAR 4.  A reset zeroes it.
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qemu/units.h"
#include "hw/pci/pci_regs.h"
#include "qhca-qtest.h"

#define DM_DEFAULT_SIZE     (256 * KiB)
#define DM_OFF              0x1000      /* the test MR's bytes in BAR 4 */
#define DM_LEN              0x4000
#define DM_KEY              0x5d
#define DM_ACCESS           (QHCA_ACCESS_LOCAL_WRITE | \
                             QHCA_ACCESS_REMOTE_WRITE | \
                             QHCA_ACCESS_REMOTE_READ | \
                             QHCA_ACCESS_REMOTE_ATOMIC)
#define BUF_LEN             0x4000

typedef struct Dmt {
    QhcaTest *t;
    uint32_t uar;
    uint32_t pdn;
    QhcaEq eq;
    QPCIBar bar4;
    uint64_t bar4_size;
} Dmt;

static Dmt *dmt_start(const char *props)
{
    Dmt *d = g_new0(Dmt, 1);

    d->t = qt_start_dp(props, &d->uar, &d->pdn, &d->eq, 0);
    return d;
}

static void dmt_map(Dmt *d)
{
    d->bar4 = qpci_iomap(d->t->dev, QHCA_DM_BAR, &d->bar4_size);
}

static void dmt_stop(Dmt *d)
{
    qt_assert_alive(d->t);
    qhca_stop(d->t);
    g_free(d);
}

static struct qhca_device_attr dmt_query(Dmt *d)
{
    struct qhca_device_attr a;

    g_assert_cmpuint(qt_query(d->t, QHCA_CMD_QUERY_DEVICE, NULL, 0, &a,
                              sizeof(a)), ==, QHCA_AQ_SUCCESS);
    return a;
}

/* A valid REG_MR of device memory: [DM_OFF, + DM_LEN) of BAR 4 at iova 0. */
static struct qhca_cmd_reg_mr dmt_reg(Dmt *d)
{
    return (struct qhca_cmd_reg_mr) {
        .length = cpu_to_le64(DM_LEN),
        .pbl_addr = cpu_to_le64(DM_OFF),
        .pdn = cpu_to_le32(d->pdn),
        .access = DM_ACCESS,
        .key = DM_KEY,
        .flags = QHCA_MR_F_DM,
    };
}

static uint8_t dmt_reg_cmd(Dmt *d, struct qhca_cmd_reg_mr *c, uint32_t *key)
{
    uint32_t index = 0;
    uint8_t status = qt_cmd(d->t, QHCA_CMD_REG_MR, c, sizeof(*c), &index);

    *key = index << 8 | c->key;
    return status;
}

/* REG_MR @c is refused with BAD_PARAM, counted as a guest error. */
static void dmt_refused(Dmt *d, struct qhca_cmd_reg_mr *c)
{
    uint64_t errors = qt_guest_errors(d->t);
    uint32_t key;

    g_assert_cmpuint(dmt_reg_cmd(d, c, &key), ==, QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(qt_guest_errors(d->t), ==, errors + 1);
}

static void dmt_fill(uint8_t *p, size_t len, uint8_t seed)
{
    size_t i;

    for (i = 0; i < len; i++) {
        p[i] = seed + i * 7 + (i >> 8);
    }
}

/* ------------------------------------------------------------------ */

/* BAR 4 and the capability follow dm-size; realize refuses bad sizes. */
static void test_bar(void)
{
    static const int64_t bad[] = {
        1, QHCA_DM_MIN_SIZE / 2, QHCA_DM_MIN_SIZE + 1024, 3 * MiB,
        512 * MiB, 4 * GiB,
    };
    Dmt *d = dmt_start(NULL);
    struct qhca_device_attr a = dmt_query(d);
    QTestState *qts;
    uint32_t bar;
    unsigned i;

    g_assert_cmphex(le32_to_cpu(a.device_cap_flags) &
                    QHCA_DEV_CAP_DEVICE_MEMORY, ==,
                    QHCA_DEV_CAP_DEVICE_MEMORY);
    g_assert_cmpuint(le32_to_cpu(a.dm_size), ==, DM_DEFAULT_SIZE);
    bar = qpci_config_readl(d->t->dev, PCI_BASE_ADDRESS_0 + 4 * QHCA_DM_BAR);
    g_assert_cmphex(bar & ~PCI_BASE_ADDRESS_MEM_MASK, ==,
                    PCI_BASE_ADDRESS_SPACE_MEMORY |
                    PCI_BASE_ADDRESS_MEM_TYPE_64 |
                    PCI_BASE_ADDRESS_MEM_PREFETCH);
    dmt_map(d);
    g_assert_cmpuint(d->bar4_size, ==, DM_DEFAULT_SIZE);
    dmt_stop(d);

    d = dmt_start(",dm-size=1M");
    a = dmt_query(d);
    g_assert_cmpuint(le32_to_cpu(a.dm_size), ==, 1 * MiB);
    dmt_map(d);
    g_assert_cmpuint(d->bar4_size, ==, 1 * MiB);
    dmt_stop(d);

    /* No device memory: no BAR 4 (it reads 0, and sizes as 0). */
    d = dmt_start(",dm-size=0");
    a = dmt_query(d);
    g_assert_cmphex(le32_to_cpu(a.device_cap_flags) &
                    QHCA_DEV_CAP_DEVICE_MEMORY, ==, 0);
    g_assert_cmpuint(le32_to_cpu(a.dm_size), ==, 0);
    for (i = 0; i < 2; i++) {
        uint8_t reg = PCI_BASE_ADDRESS_0 + 4 * (QHCA_DM_BAR + i);

        qpci_config_writel(d->t->dev, reg, 0xffffffff);
        g_assert_cmphex(qpci_config_readl(d->t->dev, reg), ==, 0);
    }
    dmt_stop(d);

    qts = qt_hotplug_start();
    for (i = 0; i < ARRAY_SIZE(bad); i++) {
        qt_assert_prop_out_of_range(qts, "dm-size", bad[i]);
    }
    qtest_quit(qts);
}

/* Every malformed REG_MR of device memory: BAD_PARAM, a guest error. */
static void test_bad_reg(void)
{
    Dmt *d = dmt_start(NULL);
    struct qhca_cmd_reg_mr c;
    struct qhca_cmd_rereg_mr r = { .mask = QHCA_REREG_ACCESS };
    uint64_t pbl;
    uint32_t key;

    /* Beyond BAR 4: the start, the end, a wrapping end. */
    c = dmt_reg(d);
    c.pbl_addr = cpu_to_le64(DM_DEFAULT_SIZE);
    c.length = cpu_to_le64(1);
    dmt_refused(d, &c);
    c = dmt_reg(d);
    c.pbl_addr = cpu_to_le64(DM_DEFAULT_SIZE - 0x800);
    c.length = cpu_to_le64(0x801);
    dmt_refused(d, &c);
    c = dmt_reg(d);
    c.pbl_addr = cpu_to_le64(UINT64_MAX - 0xf);
    c.length = cpu_to_le64(0x20);
    dmt_refused(d, &c);
    c = dmt_reg(d);
    c.length = cpu_to_le64(UINT64_MAX);
    dmt_refused(d, &c);
    /* 1.8: length 0 is an MR, but not beyond BAR 4 (qhca-odp-test). */
    c = dmt_reg(d);
    c.length = 0;
    c.pbl_addr = cpu_to_le64(DM_DEFAULT_SIZE + 1);
    dmt_refused(d, &c);
    /* iova + length wraps. */
    c = dmt_reg(d);
    c.iova = cpu_to_le64(UINT64_MAX - 0xf);
    dmt_refused(d, &c);
    /* A page list. */
    c = dmt_reg(d);
    c.npages = cpu_to_le32(4);
    dmt_refused(d, &c);
    c = dmt_reg(d);
    c.page_shift = 12;
    dmt_refused(d, &c);
    /* No window is bound to device memory. */
    c = dmt_reg(d);
    c.access |= QHCA_ACCESS_MW_BIND;
    dmt_refused(d, &c);
    /* Remote write without local write, as for any MR. */
    c = dmt_reg(d);
    c.access = QHCA_ACCESS_REMOTE_WRITE;
    dmt_refused(d, &c);
    /* Another flag, known or not. */
    c = dmt_reg(d);
    c.flags |= QHCA_MR_F_PHYS;
    dmt_refused(d, &c);
    c = dmt_reg(d);
    c.flags |= QHCA_MR_F_PBL_INDIRECT;
    dmt_refused(d, &c);
    c = dmt_reg(d);
    c.flags |= QHCA_MR_F_FAST_REG;
    dmt_refused(d, &c);
    c = dmt_reg(d);
    c.flags |= 0x10;
    dmt_refused(d, &c);

    /*
     * BAR 4 is not guest RAM: a page list may not name it (only a device
     * memory MR reaches it).
     */
    dmt_map(d);
    pbl = guest_alloc(&d->t->alloc, 8);
    qtest_writeq(d->t->qts, pbl, cpu_to_le64(d->bar4.addr));
    c = (struct qhca_cmd_reg_mr) {
        .length = cpu_to_le64(4096),
        .pbl_addr = cpu_to_le64(pbl),
        .pdn = cpu_to_le32(d->pdn),
        .npages = cpu_to_le32(1),
        .access = QHCA_ACCESS_LOCAL_WRITE,
        .page_shift = 12,
    };
    g_assert_cmpuint(dmt_reg_cmd(d, &c, &key), ==, QHCA_AQ_BAD_ADDRESS);
    /* The same with a page of guest RAM is fine. */
    qtest_writeq(d->t->qts, pbl,
                 cpu_to_le64(ROUND_UP(guest_alloc(&d->t->alloc, 8192), 4096)));
    g_assert_cmpuint(dmt_reg_cmd(d, &c, &key), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(qt_handle_cmd(d->t, QHCA_CMD_DEREG_MR, key >> 8), ==,
                     QHCA_AQ_SUCCESS);

    /* The last byte of BAR 4 is fine, and so is all of it. */
    c = dmt_reg(d);
    c.pbl_addr = cpu_to_le64(DM_DEFAULT_SIZE - 1);
    c.length = cpu_to_le64(1);
    g_assert_cmpuint(dmt_reg_cmd(d, &c, &key), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(qt_handle_cmd(d->t, QHCA_CMD_DEREG_MR, key >> 8), ==,
                     QHCA_AQ_SUCCESS);
    c = dmt_reg(d);
    c.pbl_addr = 0;
    c.length = cpu_to_le64(DM_DEFAULT_SIZE);
    c.iova = cpu_to_le64(0x7f0000001234ull);
    g_assert_cmpuint(dmt_reg_cmd(d, &c, &key), ==, QHCA_AQ_SUCCESS);

    /*
     * REREG_MR refuses a device memory MR, whatever it would change: its
     * access, or its translation to a page list that would be valid.
     */
    r.index = cpu_to_le32(key >> 8);
    r.access = QHCA_ACCESS_LOCAL_WRITE;
    g_assert_cmpuint(qt_cmd(d->t, QHCA_CMD_REREG_MR, &r, sizeof(r), NULL),
                     ==, QHCA_AQ_BAD_PARAM);
    r = (struct qhca_cmd_rereg_mr) {
        .length = cpu_to_le64(4096),
        .pbl_addr = cpu_to_le64(pbl),
        .index = cpu_to_le32(key >> 8),
        .npages = cpu_to_le32(1),
        .page_shift = 12,
        .mask = QHCA_REREG_TRANSLATION,
    };
    g_assert_cmpuint(qt_cmd(d->t, QHCA_CMD_REREG_MR, &r, sizeof(r), NULL),
                     ==, QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(qt_handle_cmd(d->t, QHCA_CMD_DEREG_MR, key >> 8), ==,
                     QHCA_AQ_SUCCESS);
    g_assert_cmpuint(qt_handle_cmd(d->t, QHCA_CMD_DEREG_MR, key >> 8), ==,
                     QHCA_AQ_BAD_HANDLE);
    dmt_stop(d);

    /* Without device memory the flag is unknown, its fields valid or not. */
    d = dmt_start(",dm-size=0");
    c = dmt_reg(d);
    dmt_refused(d, &c);
    c.length = cpu_to_le64(1);
    c.pbl_addr = 0;
    dmt_refused(d, &c);
    dmt_stop(d);
}

/*
 * RC traffic between two QPs of the device with a device memory MR on
 * each side of it: READ, WRITE, SEND into a receive, and both atomics.
 */
static void test_transfer(void)
{
    Dmt *d = dmt_start(NULL);
    QhcaTest *t = d->t;
    g_autofree QhcaCq *cq = qt_cq_new(t, 6, d->eq.eqn, d->uar);
    g_autofree QhcaCq *cq_b = qt_cq_new(t, 6, d->eq.eqn, d->uar);
    QhcaQpSpec spec = qt_rc_spec(d->pdn, d->uar, cq, cq);
    QhcaQpSpec spec_b = qt_rc_spec(d->pdn, d->uar, cq_b, cq_b);
    g_autofree QhcaQp *a = qt_qp_new(t, &spec);
    g_autofree QhcaQp *b = qt_qp_new(t, &spec_b);
    uint32_t lkey = qt_reg_phys_mr(t, d->pdn, QHCA_ACCESS_LOCAL_WRITE, 0x11,
                                   12);
    uint64_t buf = guest_alloc(&t->alloc, BUF_LEN);
    g_autofree uint8_t *dm = g_malloc(DM_LEN);
    g_autofree uint8_t *data = g_malloc(BUF_LEN);
    g_autofree uint8_t *got = g_malloc(DM_LEN);
    struct qhca_cmd_reg_mr c = dmt_reg(d);
    struct qhca_sq_wqe w;
    struct qhca_sge sge;
    uint32_t dkey;
    uint64_t v;

    dmt_map(d);
    qt_qp_connect(t, a, b, &qt_rc_path, 0);
    qt_qp_connect(t, b, a, &qt_rc_path, 0);
    g_assert_cmpuint(dmt_reg_cmd(d, &c, &dkey), ==, QHCA_AQ_SUCCESS);

    /* READ of 5000 bytes (five packets) at iova 0x100 of what the host put. */
    dmt_fill(dm, DM_LEN, 3);
    qpci_memwrite(t->dev, d->bar4, DM_OFF, dm, DM_LEN);
    qtest_memset(t->qts, buf, 0xee, BUF_LEN);
    w = (struct qhca_sq_wqe) {
        .wr_id = cpu_to_le64(1),
        .opcode = QHCA_WR_RDMA_READ,
        .flags = QHCA_WQE_F_SIGNALED,
        .num_sge = 1,
        .remote_addr = cpu_to_le64(0x100),
        .rkey = cpu_to_le32(dkey),
    };
    sge = qt_sge(buf, 5000, lkey);
    qt_qp_post_send(t, a, &w, &sge, 1);
    qt_qp_ring_sq(t, a);
    qt_cq_expect(t, cq, a->qpn, QHCA_WC_RDMA_READ, QHCA_WC_SUCCESS);
    qtest_memread(t->qts, buf, got, 5000);
    g_assert_cmpmem(got, 5000, dm + 0x100, 5000);

    /* WRITE of 6000 bytes at iova 0x800: BAR 4 has them, nothing else. */
    dmt_fill(data, BUF_LEN, 77);
    qtest_memwrite(t->qts, buf, data, BUF_LEN);
    w.wr_id = cpu_to_le64(2);
    w.opcode = QHCA_WR_RDMA_WRITE;
    w.remote_addr = cpu_to_le64(0x800);
    sge = qt_sge(buf, 6000, lkey);
    qt_qp_post_send(t, a, &w, &sge, 1);
    qt_qp_ring_sq(t, a);
    qt_cq_expect(t, cq, a->qpn, QHCA_WC_RDMA_WRITE, QHCA_WC_SUCCESS);
    memcpy(dm + 0x800, data, 6000);
    qpci_memread(t->dev, d->bar4, DM_OFF, got, DM_LEN);
    g_assert_cmpmem(got, DM_LEN, dm, DM_LEN);

    /* SEND from device memory (lkey) into device memory (a receive). */
    sge = qt_sge(0x3000, 100, dkey);
    qt_qp_post_recv(t, b, 0x55, &sge, 1);
    w.wr_id = cpu_to_le64(3);
    w.opcode = QHCA_WR_SEND;
    w.remote_addr = 0;
    w.rkey = 0;
    sge = qt_sge(0x10, 100, dkey);
    qt_qp_post_send(t, a, &w, &sge, 1);
    qt_qp_ring_sq(t, a);
    qt_cq_expect(t, cq, a->qpn, QHCA_WC_SEND, QHCA_WC_SUCCESS);
    qt_cq_expect(t, cq_b, b->qpn, QHCA_WC_RECV, QHCA_WC_SUCCESS);
    memcpy(dm + 0x3000, dm + 0x10, 100);
    qpci_memread(t->dev, d->bar4, DM_OFF, got, DM_LEN);
    g_assert_cmpmem(got, DM_LEN, dm, DM_LEN);

    /* Compare and swap, then fetch and add, on a word of BAR 4. */
    v = cpu_to_le64(0x1122334455667788ull);
    qpci_memwrite(t->dev, d->bar4, DM_OFF + 0x40, &v, 8);
    w = (struct qhca_sq_wqe) {
        .wr_id = cpu_to_le64(4),
        .opcode = QHCA_WR_ATOMIC_CMP_AND_SWP,
        .flags = QHCA_WQE_F_SIGNALED,
        .num_sge = 1,
        .remote_addr = cpu_to_le64(0x40),
        .rkey = cpu_to_le32(dkey),
        .compare_add = cpu_to_le64(0x1122334455667788ull),
        .swap = cpu_to_le64(0xaaaabbbbccccddddull),
    };
    sge = qt_sge(buf, 8, lkey);
    qt_qp_post_send(t, a, &w, &sge, 1);
    qt_qp_ring_sq(t, a);
    qt_cq_expect(t, cq, a->qpn, QHCA_WC_COMP_SWAP, QHCA_WC_SUCCESS);
    g_assert_cmphex(qtest_readq(t->qts, buf), ==, 0x1122334455667788ull);
    w.wr_id = cpu_to_le64(5);
    w.opcode = QHCA_WR_ATOMIC_FETCH_AND_ADD;
    w.compare_add = cpu_to_le64(5);
    w.swap = 0;
    qt_qp_post_send(t, a, &w, &sge, 1);
    qt_qp_ring_sq(t, a);
    qt_cq_expect(t, cq, a->qpn, QHCA_WC_FETCH_ADD, QHCA_WC_SUCCESS);
    g_assert_cmphex(qtest_readq(t->qts, buf), ==, 0xaaaabbbbccccddddull);
    qpci_memread(t->dev, d->bar4, DM_OFF + 0x40, &v, 8);
    g_assert_cmphex(le64_to_cpu(v), ==, 0xaaaabbbbccccdde2ull);

    /* One byte past the MR (not past BAR 4): a remote access error. */
    w = (struct qhca_sq_wqe) {
        .wr_id = cpu_to_le64(6),
        .opcode = QHCA_WR_RDMA_READ,
        .flags = QHCA_WQE_F_SIGNALED,
        .num_sge = 1,
        .remote_addr = cpu_to_le64(DM_LEN - 8),
        .rkey = cpu_to_le32(dkey),
    };
    sge = qt_sge(buf, 9, lkey);
    qt_qp_post_send(t, a, &w, &sge, 1);
    qt_qp_ring_sq(t, a);
    qt_cq_expect(t, cq, a->qpn, QHCA_WC_RDMA_READ, QHCA_WC_REM_ACCESS_ERR);
    dmt_stop(d);
}

/* A device reset, and an FLR, leave BAR 4 zeroed. */
static void test_reset(void)
{
    Dmt *d = dmt_start(NULL);
    QhcaTest *t = d->t;
    g_autofree uint8_t *data = g_malloc(DM_DEFAULT_SIZE);
    g_autofree uint8_t *got = g_malloc(DM_DEFAULT_SIZE);
    g_autofree uint8_t *zero = g_malloc0(DM_DEFAULT_SIZE);
    uint8_t exp;

    dmt_map(d);
    dmt_fill(data, DM_DEFAULT_SIZE, 1);
    qpci_memwrite(t->dev, d->bar4, 0, data, DM_DEFAULT_SIZE);
    qpci_memread(t->dev, d->bar4, 0, got, DM_DEFAULT_SIZE);
    g_assert_cmpmem(got, DM_DEFAULT_SIZE, data, DM_DEFAULT_SIZE);
    qt_reset(t);
    qpci_memread(t->dev, d->bar4, 0, got, DM_DEFAULT_SIZE);
    g_assert_cmpmem(got, DM_DEFAULT_SIZE, zero, DM_DEFAULT_SIZE);

    qpci_memwrite(t->dev, d->bar4, 0, data, DM_DEFAULT_SIZE);
    exp = qpci_find_capability(t->dev, PCI_CAP_ID_EXP, 0);
    qpci_config_writew(t->dev, exp + PCI_EXP_DEVCTL, PCI_EXP_DEVCTL_BCR_FLR);
    /* The FLR cleared the BARs: map them again. */
    t->bar0 = qpci_iomap(t->dev, QHCA_REG_BAR, NULL);
    dmt_map(d);
    qpci_device_enable(t->dev);
    qpci_memread(t->dev, d->bar4, 0, got, DM_DEFAULT_SIZE);
    g_assert_cmpmem(got, DM_DEFAULT_SIZE, zero, DM_DEFAULT_SIZE);
    dmt_stop(d);
}

int main(int argc, char **argv)
{
    if (!qt_init(&argc, &argv)) {
        return g_test_run();
    }

    qtest_add_func("/qhca/dm/bar", test_bar);
    qtest_add_func("/qhca/dm/bad-reg", test_bad_reg);
    qtest_add_func("/qhca/dm/transfer", test_transfer);
    qtest_add_func("/qhca/dm/reset", test_reset);

    return g_test_run();
}
