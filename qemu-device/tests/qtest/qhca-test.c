/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qtest for the qhca InfiniBand HCA model: the register interface, the
 * admin queue and its commands, event queues, doorbell pages, and the
 * device's answer to every kind of bad input (which must be an error
 * status or ERROR code, never a crash or a hang).
 *
 * The test plays the driver with plain register and memory accesses; it
 * polls completions by their phase bit and needs no interrupts.
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "hw/pci/pci_regs.h"
#include "qhca-qtest.h"

static void test_identity(void)
{
    QhcaTest *t = qhca_start(NULL);
    uint8_t cap;

    g_assert_cmphex(qpci_config_readw(t->dev, PCI_VENDOR_ID), ==,
                    QHCA_PCI_VENDOR_ID);
    g_assert_cmphex(qpci_config_readw(t->dev, PCI_DEVICE_ID), ==,
                    QHCA_PCI_DEVICE_ID);
    g_assert_cmphex(qpci_config_readw(t->dev, PCI_SUBSYSTEM_VENDOR_ID), ==,
                    QHCA_PCI_SUBSYSTEM_VENDOR_ID);
    g_assert_cmphex(qpci_config_readw(t->dev, PCI_SUBSYSTEM_ID), ==,
                    QHCA_PCI_SUBSYSTEM_ID);
    g_assert_cmphex(qpci_config_readw(t->dev, PCI_CLASS_DEVICE), ==,
                    QHCA_PCI_CLASS);
    g_assert_cmphex(qpci_config_readb(t->dev, PCI_REVISION_ID), ==,
                    QHCA_PCI_REVISION);
    g_assert_cmphex(qpci_config_readb(t->dev, PCI_INTERRUPT_PIN), ==, 0);

    cap = qpci_find_capability(t->dev, PCI_CAP_ID_MSIX, 0);
    g_assert_cmpuint(cap, !=, 0);
    g_assert_cmphex(qpci_config_readw(t->dev, cap + PCI_MSIX_FLAGS) &
                    PCI_MSIX_FLAGS_QSIZE, ==, 8 - 1);
    g_assert_cmphex(qpci_config_readl(t->dev, cap + PCI_MSIX_TABLE), ==,
                    QHCA_MSIX_TABLE_OFFSET | QHCA_REG_BAR);
    g_assert_cmphex(qpci_config_readl(t->dev, cap + PCI_MSIX_PBA), ==,
                    QHCA_MSIX_PBA_OFFSET | QHCA_REG_BAR);
    g_assert_cmpuint(qpci_find_capability(t->dev, PCI_CAP_ID_EXP, 0), !=, 0);

    qt_assert_alive(t);
    g_assert_cmphex(qt_rd(t, QHCA_REG_CAPS), ==, 0);
    g_assert_cmphex(qt_rd(t, QHCA_REG_AQ_CAPS), ==, QHCA_AQ_MAX_DEPTH_LOG2);
    g_assert_cmphex(qt_rd(t, QHCA_REG_CTRL), ==, 0);
    g_assert_cmphex(qt_rd(t, QHCA_REG_STATUS), ==, 0);
    g_assert_cmphex(qt_rd(t, QHCA_REG_ERROR), ==, 0);
    g_assert_cmpuint(qt_rd(t, QHCA_REG_DB_PAGES), ==, 256);
    g_assert_cmpuint(qt_rd(t, QHCA_REG_MSIX_VECTORS), ==, 8);
    g_assert_cmpuint(t->bar2_size, ==, 256 * QHCA_DB_PAGE_SIZE);
    qhca_stop(t);
}

static void test_properties(void)
{
    QhcaTest *t = qhca_start(",max-uars=3,msix-vectors=4");

    g_assert_cmpuint(qt_rd(t, QHCA_REG_DB_PAGES), ==, 3);
    g_assert_cmpuint(qt_rd(t, QHCA_REG_MSIX_VECTORS), ==, 4);
    /* Three pages round up to a power-of-two BAR. */
    g_assert_cmpuint(t->bar2_size, ==, 4 * QHCA_DB_PAGE_SIZE);
    qhca_stop(t);
}

/* Realize refuses out-of-range properties (tried by hotplug, one QEMU). */
static void test_bad_properties(void)
{
    static const struct {
        const char *name;
        int64_t value;
    } bad[] = {
        { "lid", 0 }, { "lid", 0xc000 }, { "max-uars", 0 },
        { "max-uars", 4097 }, { "max-pds", 0 }, { "max-pds", 1 << 25 },
        { "max-eqs", 0 }, { "max-eqs", 257 }, { "max-qps", 0 },
        { "max-qps", 65537 }, { "max-cqs", 0 }, { "max-mrs", 0 },
        { "max-qp-wr", 0 }, { "max-cqe", 32769 }, { "max-mr-pages", 0 },
        { "max-mr-pages", 1 << 29 }, { "msix-vectors", 1 },
        { "msix-vectors", 65 },
    };
    QTestState *qts;
    QDict *rsp;
    size_t i;

    qts = qtest_init("-machine q35 -nic none -vga none "
                     "-device pcie-root-port,id=rp0,chassis=1");
    for (i = 0; i < ARRAY_SIZE(bad); i++) {
        rsp = qtest_qmp(qts, "{'execute': 'device_add', 'arguments': "
                        "{'driver': 'qhca', 'bus': 'rp0', 'id': 'bad', "
                        "%s: %" PRId64 "}}", bad[i].name, bad[i].value);
        g_assert(qdict_haskey(rsp, "error"));
        g_assert_nonnull(strstr(qdict_get_str(qdict_get_qdict(rsp, "error"),
                                              "desc"), "out of range"));
        qobject_unref(rsp);
    }
    /* The same hotplug with good values works. */
    rsp = qtest_qmp(qts, "{'execute': 'device_add', 'arguments': "
                    "{'driver': 'qhca', 'bus': 'rp0', 'id': 'good', "
                    "'lid': 49151, 'max-uars': 4096, 'msix-vectors': 64}}");
    g_assert(qdict_haskey(rsp, "return"));
    qobject_unref(rsp);
    qtest_quit(qts);
}

static void test_reset(void)
{
    QhcaTest *t = qhca_start(NULL);

    qt_write_aq_regs(t, 0x1000, 0x2000, qt_aq_cfg(3, 1));
    g_assert_cmphex(qt_rd(t, QHCA_REG_AQ_SQ_BASE_LO), ==, 0x1000);
    g_assert_cmphex(qt_rd(t, QHCA_REG_AQ_CQ_BASE_LO), ==, 0x2000);
    g_assert_cmphex(qt_rd(t, QHCA_REG_AQ_CFG), ==, qt_aq_cfg(3, 1));
    qt_rd(t, 0x100);
    g_assert_cmpuint(qt_rd(t, QHCA_REG_ERROR), ==, QHCA_ERR_BAD_REGISTER);

    qt_reset(t);
    g_assert_cmphex(qt_rd(t, QHCA_REG_AQ_SQ_BASE_LO), ==, 0);
    g_assert_cmphex(qt_rd(t, QHCA_REG_AQ_CQ_BASE_LO), ==, 0);
    g_assert_cmphex(qt_rd(t, QHCA_REG_AQ_CFG), ==, 0);
    g_assert_cmphex(qt_rd(t, QHCA_REG_STATUS), ==, 0);
    g_assert_cmphex(qt_rd(t, QHCA_REG_ERROR), ==, 0);

    /* A reset tears down objects and leaves the device disabled. */
    qt_enable(t, 2);
    g_assert_cmpuint(qt_cmd(t, QHCA_CMD_ALLOC_PD, NULL, 0, NULL), ==,
                     QHCA_AQ_SUCCESS);
    qt_assert_objects(t, 0, 1, 0);
    qt_wr(t, QHCA_REG_CTRL, QHCA_CTRL_RESET | QHCA_CTRL_ENABLE);
    g_assert_cmphex(qt_rd(t, QHCA_REG_CTRL), ==, 0);
    g_assert_cmphex(qt_rd(t, QHCA_REG_STATUS), ==, 0);
    qt_enable(t, 2);
    qt_assert_objects(t, 0, 0, 0);
    qhca_stop(t);
}

static void test_enable(void)
{
    QhcaTest *t = qhca_start(NULL);
    uint32_t result;

    qt_enable(t, 1);
    g_assert_cmpuint(qt_cmd(t, QHCA_CMD_ALLOC_PD, NULL, 0, &result), ==,
                     QHCA_AQ_SUCCESS);

    /* Disable keeps objects; enabling again restarts the rings at 0. */
    qt_wr(t, QHCA_REG_CTRL, 0);
    g_assert_cmphex(qt_rd(t, QHCA_REG_STATUS), ==, 0);
    qt_aq_rewind(t);
    qt_wr(t, QHCA_REG_CTRL, QHCA_CTRL_ENABLE);
    g_assert_cmphex(qt_rd(t, QHCA_REG_STATUS), ==, QHCA_STATUS_READY);
    qt_assert_objects(t, 0, 1, 0);

    /* Many passes over a two-entry ring keep the phase rule. */
    for (int i = 0; i < 9; i++) {
        qt_stats(t);
    }

    /* The largest admin queue. */
    qt_enable(t, QHCA_AQ_MAX_DEPTH_LOG2);
    qt_assert_objects(t, 0, 0, 0);
    g_assert_cmpuint(qt_rd(t, QHCA_REG_ERROR), ==, 0);
    qhca_stop(t);
}

static void test_query_device(void)
{
    QhcaTest *t = qhca_start(NULL);
    struct qhca_device_attr a;

    qt_enable(t, 2);
    g_assert_cmpuint(qt_query(t, QHCA_CMD_QUERY_DEVICE, NULL, 0, &a, sizeof(a)),
                     ==, QHCA_AQ_SUCCESS);
    g_assert_cmphex(le64_to_cpu(a.fw_version), ==,
                    (uint64_t)QEMU_VERSION_MAJOR << 32 |
                    QEMU_VERSION_MINOR << 16 | QEMU_VERSION_MICRO);
    g_assert_cmphex(le64_to_cpu(a.node_guid), ==, 0x525400fffe000100ull);
    g_assert_cmphex(le64_to_cpu(a.sys_image_guid), ==, 0x525400fffe000100ull);
    g_assert_cmphex(le64_to_cpu(a.max_mr_size), ==, 1ull << 40);
    g_assert_cmphex(le64_to_cpu(a.page_size_cap), ==, 0x7ffff000);
    g_assert_cmphex(le32_to_cpu(a.vendor_id), ==, 0x1234);
    g_assert_cmphex(le32_to_cpu(a.vendor_part_id), ==, 0x11ca);
    g_assert_cmphex(le32_to_cpu(a.hw_version), ==, QHCA_VERSION_CURRENT);
    g_assert_cmpuint(le32_to_cpu(a.max_qp), ==, 1024);
    g_assert_cmpuint(le32_to_cpu(a.max_qp_wr), ==, 4096);
    g_assert_cmpuint(le32_to_cpu(a.max_sge), ==, QHCA_MAX_SGE);
    g_assert_cmpuint(le32_to_cpu(a.max_sge_rd), ==, QHCA_MAX_SGE);
    g_assert_cmpuint(le32_to_cpu(a.max_cq), ==, 1024);
    g_assert_cmpuint(le32_to_cpu(a.max_cqe), ==, 32768);
    g_assert_cmpuint(le32_to_cpu(a.max_mr), ==, 4096);
    g_assert_cmpuint(le32_to_cpu(a.max_pd), ==, 1024);
    g_assert_cmpuint(le32_to_cpu(a.max_qp_rd_atom), ==, QHCA_MAX_RD_ATOMIC);
    g_assert_cmpuint(le32_to_cpu(a.max_qp_init_rd_atom), ==,
                     QHCA_MAX_RD_ATOMIC);
    g_assert_cmpuint(le32_to_cpu(a.max_inline_data), ==, QHCA_MAX_INLINE);
    g_assert_cmpuint(le32_to_cpu(a.max_uar), ==, 256);
    g_assert_cmpuint(le32_to_cpu(a.max_eq), ==, 16);
    g_assert_cmpuint(le32_to_cpu(a.max_eqe), ==, 32768);
    g_assert_cmpuint(le32_to_cpu(a.max_pkeys), ==, 1);
    g_assert_cmphex(le32_to_cpu(a.device_cap_flags) &
                    QHCA_DEV_CAP_PORT_ACTIVE_EVENT, !=, 0);
    g_assert_cmpuint(a.num_ports, ==, 1);
    g_assert_cmpuint(a.atomic_cap, ==, 1);
    g_assert_cmpuint(a.local_ca_ack_delay, ==, 16);
    /* 1.7: 256 KiB of device memory by default (qhca-dm-test). */
    g_assert_cmphex(le32_to_cpu(a.device_cap_flags) &
                    QHCA_DEV_CAP_DEVICE_MEMORY, !=, 0);
    g_assert_cmpuint(le32_to_cpu(a.dm_size), ==, 256 * 1024);
    /* 1.8: on-demand paging (qhca-odp-test). */
    g_assert_cmphex(le32_to_cpu(a.device_cap_flags) &
                    QHCA_DEV_CAP_ON_DEMAND_PAGING, !=, 0);
    g_assert_cmpuint(a.rsvd0[0] | a.rsvd0[4] | a.rsvd1[0] | a.rsvd1[1] |
                     a.rsvd1[2], ==, 0);
    qhca_stop(t);
}

static void test_query_props(void)
{
    QhcaTest *t = qhca_start(",lid=7,max-pds=5,max-uars=6,max-eqs=3,"
                             "max-qps=100,max-cqs=200,max-mrs=300,"
                             "max-qp-wr=400,max-cqe=500");
    struct qhca_device_attr a;
    struct qhca_port_attr p;
    struct qhca_cmd_query_port qp = { .port_num = 1 };

    qt_enable(t, 2);
    g_assert_cmpuint(qt_query(t, QHCA_CMD_QUERY_DEVICE, NULL, 0, &a, sizeof(a)),
                     ==, QHCA_AQ_SUCCESS);
    g_assert_cmphex(le64_to_cpu(a.node_guid), ==, 0x525400fffe000700ull);
    g_assert_cmpuint(le32_to_cpu(a.max_pd), ==, 5);
    g_assert_cmpuint(le32_to_cpu(a.max_uar), ==, 6);
    g_assert_cmpuint(le32_to_cpu(a.max_eq), ==, 3);
    g_assert_cmpuint(le32_to_cpu(a.max_qp), ==, 100);
    g_assert_cmpuint(le32_to_cpu(a.max_cq), ==, 200);
    g_assert_cmpuint(le32_to_cpu(a.max_mr), ==, 300);
    g_assert_cmpuint(le32_to_cpu(a.max_qp_wr), ==, 400);
    g_assert_cmpuint(le32_to_cpu(a.max_cqe), ==, 500);

    g_assert_cmpuint(qt_query(t, QHCA_CMD_QUERY_PORT, &qp, sizeof(qp), &p,
                              sizeof(p)), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(le16_to_cpu(p.lid), ==, 7);
    g_assert_cmpuint(le16_to_cpu(p.sm_lid), ==, 7);
    g_assert_cmphex(le64_to_cpu(p.port_guid), ==, 0x525400fffe000701ull);
    qhca_stop(t);

    t = qhca_start(",node-guid=0x0002c90300001234"
                   ",port-guid=0x0002c90300005678");
    qt_enable(t, 2);
    g_assert_cmpuint(qt_query(t, QHCA_CMD_QUERY_DEVICE, NULL, 0, &a, sizeof(a)),
                     ==, QHCA_AQ_SUCCESS);
    g_assert_cmphex(le64_to_cpu(a.node_guid), ==, 0x0002c90300001234ull);
    g_assert_cmpuint(qt_query(t, QHCA_CMD_QUERY_PORT, &qp, sizeof(qp), &p,
                              sizeof(p)), ==, QHCA_AQ_SUCCESS);
    g_assert_cmphex(le64_to_cpu(p.port_guid), ==, 0x0002c90300005678ull);
    qhca_stop(t);
}

/* enum ib_port_capability_mask_bits */
#define PORT_CAP_SM         (1u << 1)
#define PORT_CAP_TRAP_SUP   (1u << 3)

static void test_query_port(void)
{
    QhcaTest *t = qhca_start(NULL);
    struct qhca_cmd_query_port qp = { .port_num = 1 };
    struct qhca_port_attr p;

    qt_enable(t, 2);
    g_assert_cmpuint(qt_query(t, QHCA_CMD_QUERY_PORT, &qp, sizeof(qp), &p,
                              sizeof(p)), ==, QHCA_AQ_SUCCESS);
    g_assert_cmphex(le64_to_cpu(p.port_guid), ==, 0x525400fffe000101ull);
    g_assert_cmphex(le64_to_cpu(p.subnet_prefix), ==, 0xfe80000000000000ull);
    /*
     * 1.4: no capability is claimed.  In particular neither IsSM nor
     * IsTrapSupported (IB_PORT_SM, IB_PORT_TRAP_SUP of <rdma/ib_mad.h>):
     * there is no subnet manager and no trap.
     */
    g_assert_cmphex(le32_to_cpu(p.port_cap_flags), ==, 0);
    g_assert_cmphex(le32_to_cpu(p.port_cap_flags) & PORT_CAP_SM, ==, 0);
    g_assert_cmphex(le32_to_cpu(p.port_cap_flags) & PORT_CAP_TRAP_SUP, ==, 0);
    g_assert_cmphex(le32_to_cpu(p.max_msg_sz), ==, QHCA_MAX_MSG_SIZE);
    g_assert_cmpuint(le16_to_cpu(p.lid), ==, 1);
    g_assert_cmpuint(le16_to_cpu(p.sm_lid), ==, 1);
    g_assert_cmphex(le16_to_cpu(p.pkey), ==, 0xffff);
    g_assert_cmpuint(le16_to_cpu(p.gid_tbl_len), ==, 1);
    g_assert_cmpuint(le16_to_cpu(p.pkey_tbl_len), ==, 1);
    g_assert_cmpuint(p.state, ==, QHCA_PORT_ACTIVE);
    g_assert_cmpuint(p.phys_state, ==, 5);
    g_assert_cmpuint(p.max_mtu, ==, 5);
    g_assert_cmpuint(p.active_mtu, ==, 5);
    g_assert_cmpuint(p.lmc, ==, 0);
    g_assert_cmpuint(p.active_speed, ==, 32);
    g_assert_cmpuint(p.active_width, ==, 2);
    g_assert_cmpuint(p.max_vl_num, ==, 1);

    qp.port_num = 0;
    g_assert_cmpuint(qt_query(t, QHCA_CMD_QUERY_PORT, &qp, sizeof(qp), &p,
                              sizeof(p)), ==, QHCA_AQ_BAD_PARAM);
    qp.port_num = 2;
    g_assert_cmpuint(qt_query(t, QHCA_CMD_QUERY_PORT, &qp, sizeof(qp), &p,
                              sizeof(p)), ==, QHCA_AQ_BAD_PARAM);
    qp.port_num = 1;
    qp.rsvd[6] = 1;
    g_assert_cmpuint(qt_query(t, QHCA_CMD_QUERY_PORT, &qp, sizeof(qp), &p,
                              sizeof(p)), ==, QHCA_AQ_BAD_PARAM);
    qt_assert_alive(t);
    qhca_stop(t);
}

/* The 1.4 object counts of QUERY_STATS. */
static void assert_counts(QhcaTest *t, uint32_t mws, uint32_t xrcds,
                          uint32_t mcast_groups)
{
    struct qhca_stats st = qt_stats(t);

    g_assert_cmpuint(le32_to_cpu(st.mws), ==, mws);
    g_assert_cmpuint(le32_to_cpu(st.xrcds), ==, xrcds);
    g_assert_cmpuint(le32_to_cpu(st.mcast_groups), ==, mcast_groups);
}

static uint8_t mcast_cmd(QhcaTest *t, uint16_t op, const QhcaQp *qp,
                         uint16_t mlid, uint8_t group)
{
    struct qhca_cmd_mcast c = {
        .qpn = cpu_to_le32(qp->qpn),
        .mlid = cpu_to_le16(mlid),
        .mgid = { 0xff, 0x12, [15] = group },
    };

    return qt_cmd(t, op, &c, sizeof(c), NULL);
}

/*
 * QUERY_STATS (1.4) counts memory windows, XRC domains and the multicast
 * groups with a QP attached, as they come and go.
 */
static void test_query_stats_counts(void)
{
    QhcaEq eq;
    uint32_t uar, pdn, mw, xrcd;
    QhcaTest *t = qt_start_dp(NULL, &uar, &pdn, &eq, 0);
    struct qhca_cmd_alloc_mw a = {
        .pdn = cpu_to_le32(pdn),
        .type = QHCA_MW_TYPE_1,
    };
    QhcaCq cq;
    QhcaQpSpec spec;
    QhcaQp *qa, *qb;

    qt_cq_init(t, &cq, 4, eq.eqn, uar);
    spec = qt_rc_spec(pdn, uar, &cq, &cq);
    spec.type = QHCA_QPT_UD;
    spec.sq_stride_log2 = 7;
    qa = qt_qp_new(t, &spec);
    qb = qt_qp_new(t, &spec);
    assert_counts(t, 0, 0, 0);

    g_assert_cmpuint(qt_cmd(t, QHCA_CMD_ALLOC_MW, &a, sizeof(a), &mw), ==,
                     QHCA_AQ_SUCCESS);
    assert_counts(t, 1, 0, 0);
    g_assert_cmpuint(qt_cmd(t, QHCA_CMD_ALLOC_XRCD, NULL, 0, &xrcd), ==,
                     QHCA_AQ_SUCCESS);
    assert_counts(t, 1, 1, 0);

    /* A group counts once, however many QPs it has. */
    g_assert_cmpuint(mcast_cmd(t, QHCA_CMD_ATTACH_MCAST, qa, 0xc001, 1), ==,
                     QHCA_AQ_SUCCESS);
    assert_counts(t, 1, 1, 1);
    g_assert_cmpuint(mcast_cmd(t, QHCA_CMD_ATTACH_MCAST, qb, 0xc001, 1), ==,
                     QHCA_AQ_SUCCESS);
    assert_counts(t, 1, 1, 1);
    g_assert_cmpuint(mcast_cmd(t, QHCA_CMD_ATTACH_MCAST, qa, 0xc002, 2), ==,
                     QHCA_AQ_SUCCESS);
    assert_counts(t, 1, 1, 2);
    /* A group without QPs is gone: by DETACH, or by its last QP's end. */
    g_assert_cmpuint(mcast_cmd(t, QHCA_CMD_DETACH_MCAST, qa, 0xc001, 1), ==,
                     QHCA_AQ_SUCCESS);
    assert_counts(t, 1, 1, 2);
    g_assert_cmpuint(qt_handle_cmd(t, QHCA_CMD_DESTROY_QP, qb->qpn), ==,
                     QHCA_AQ_SUCCESS);
    assert_counts(t, 1, 1, 1);
    g_assert_cmpuint(mcast_cmd(t, QHCA_CMD_DETACH_MCAST, qa, 0xc002, 2), ==,
                     QHCA_AQ_SUCCESS);
    assert_counts(t, 1, 1, 0);

    g_assert_cmpuint(qt_handle_cmd(t, QHCA_CMD_DEALLOC_MW, mw), ==,
                     QHCA_AQ_SUCCESS);
    assert_counts(t, 0, 1, 0);
    g_assert_cmpuint(qt_handle_cmd(t, QHCA_CMD_DEALLOC_XRCD, xrcd), ==,
                     QHCA_AQ_SUCCESS);
    assert_counts(t, 0, 0, 0);
    g_free(qa);
    g_free(qb);
    qt_assert_alive(t);
    qhca_stop(t);
}

/* QUERY_STATS with @resp_len into a response buffer of 0xaa bytes. */
static uint8_t stats_len(QhcaTest *t, uint32_t resp_len, uint8_t *buf,
                         size_t len)
{
    struct qhca_aq_sqe sqe = {
        .opcode = cpu_to_le16(QHCA_CMD_QUERY_STATS),
        .resp_addr = cpu_to_le64(t->resp),
        .resp_len = cpu_to_le32(resp_len),
    };
    uint8_t status;

    qtest_memset(t->qts, t->resp, 0xaa, len);
    status = qt_submit(t, &sqe, NULL);
    qtest_memread(t->qts, t->resp, buf, len);
    return status;
}

/*
 * A driver of 1.3 asks for the 64 bytes it knows: it gets those, and not
 * a byte more; 63 is too short.  A larger buffer gets the 96 of 1.4.
 */
static void test_query_stats_len(void)
{
    QhcaTest *t = qhca_start(NULL);
    uint8_t buf[256];
    struct qhca_stats st;
    size_t i;

    qt_enable(t, 2);
    g_assert_cmpuint(qt_cmd(t, QHCA_CMD_ALLOC_PD, NULL, 0, NULL), ==,
                     QHCA_AQ_SUCCESS);

    g_assert_cmpuint(stats_len(t, QHCA_STATS_SIZE_1_3, buf, sizeof(buf)),
                     ==, QHCA_AQ_SUCCESS);
    memcpy(&st, buf, sizeof(st));
    g_assert_cmpuint(le32_to_cpu(st.pds), ==, 1);
    g_assert_cmpuint(le64_to_cpu(st.admin_cmds), ==, 2);
    for (i = QHCA_STATS_SIZE_1_3; i < sizeof(buf); i++) {
        g_assert_cmphex(buf[i], ==, 0xaa);
    }

    g_assert_cmpuint(stats_len(t, QHCA_STATS_SIZE_1_3 - 1, buf, sizeof(buf)),
                     ==, QHCA_AQ_BAD_PARAM);
    for (i = 0; i < sizeof(buf); i++) {
        g_assert_cmphex(buf[i], ==, 0xaa);
    }

    g_assert_cmpuint(stats_len(t, sizeof(buf), buf, sizeof(buf)), ==,
                     QHCA_AQ_SUCCESS);
    memcpy(&st, buf, sizeof(st));
    g_assert_cmpuint(le32_to_cpu(st.pds), ==, 1);
    g_assert_cmpuint(le32_to_cpu(st.mws), ==, 0);
    g_assert_cmpuint(st.rsvd1[0] | st.rsvd1[1] | st.rsvd1[2] | st.rsvd1[3] |
                     st.rsvd1[4], ==, 0);
    for (i = sizeof(struct qhca_stats); i < sizeof(buf); i++) {
        g_assert_cmphex(buf[i], ==, 0xaa);
    }
    qt_assert_alive(t);
    qhca_stop(t);
}

/* Allocate a table to exhaustion, free, reuse, and reject bad handles. */
static void exercise_table(QhcaTest *t, uint16_t alloc_op, uint16_t free_op,
                           uint32_t size)
{
    struct qhca_cmd_handle h = { .handle = 0, .rsvd = cpu_to_le32(1) };
    uint32_t result, i;

    for (i = 0; i < size; i++) {
        g_assert_cmpuint(qt_cmd(t, alloc_op, NULL, 0, &result), ==,
                         QHCA_AQ_SUCCESS);
        g_assert_cmpuint(result, ==, i);
    }
    g_assert_cmpuint(qt_cmd(t, alloc_op, NULL, 0, &result), ==,
                     QHCA_AQ_NO_RESOURCES);

    g_assert_cmpuint(qt_handle_cmd(t, free_op, 1), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(qt_handle_cmd(t, free_op, 1), ==, QHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(qt_handle_cmd(t, free_op, size), ==, QHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(qt_handle_cmd(t, free_op, UINT32_MAX), ==,
                     QHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(qt_cmd(t, free_op, &h, sizeof(h), NULL), ==,
                     QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(qt_cmd(t, alloc_op, NULL, 0, &result), ==,
                     QHCA_AQ_SUCCESS);
    g_assert_cmpuint(result, ==, 1);

    for (i = 0; i < size; i++) {
        g_assert_cmpuint(qt_handle_cmd(t, free_op, i), ==, QHCA_AQ_SUCCESS);
    }
}

static void test_uar_pd(void)
{
    QhcaTest *t = qhca_start(",max-uars=4,max-pds=5");
    struct qhca_stats st;

    qt_enable(t, 3);
    exercise_table(t, QHCA_CMD_ALLOC_UAR, QHCA_CMD_DEALLOC_UAR, 4);
    qt_assert_objects(t, 0, 0, 0);
    exercise_table(t, QHCA_CMD_ALLOC_PD, QHCA_CMD_DEALLOC_PD, 5);
    qt_assert_objects(t, 0, 0, 0);

    /*
     * Counters: each table took 2 * size + 7 commands, 5 of them failed;
     * two QUERY_STATS above and this one, which counts itself.
     */
    st = qt_stats(t);
    g_assert_cmpuint(le64_to_cpu(st.admin_cmds), ==,
                     (2 * 4 + 7) + (2 * 5 + 7) + 3);
    g_assert_cmpuint(le64_to_cpu(st.admin_errors), ==, 10);
    g_assert_cmpuint(le64_to_cpu(st.doorbells), ==, 0);
    /* Bad handles and reserved fields are guest errors, a full table not. */
    g_assert_cmpuint(le64_to_cpu(st.guest_errors), ==, 8);
    qt_assert_alive(t);
    qhca_stop(t);
}

static void test_eq(void)
{
    QhcaTest *t = qhca_start(",max-eqs=2");
    uint64_t eq0 = guest_alloc(&t->alloc, 4096);
    uint64_t eq1 = guest_alloc(&t->alloc, 4096);
    uint32_t mask = 1u << QHCA_EVENT_PORT_ACTIVE;
    struct qhca_cmd_create_eq c = { .depth_log2 = 2 };
    struct qhca_eqe e;
    uint32_t eqn, eqn1, result;

    qt_enable(t, 3);
    qtest_memset(t->qts, eq0, 0, 4096);
    qtest_memset(t->qts, eq1, 0, 4096);

    /* An EQ that asks for PORT_ACTIVE hears it at once. */
    g_assert_cmpuint(qt_create_eq(t, eq0, 2, 1, mask, &eqn), ==,
                     QHCA_AQ_SUCCESS);
    g_assert_cmpuint(eqn, ==, 0);
    e = qt_read_eqe(t, eq0, 0);
    g_assert_cmpuint(e.type, ==, QHCA_EVENT_PORT_ACTIVE);
    g_assert_cmpuint(e.flags, ==, QHCA_EQE_FLAGS_PHASE);
    g_assert_cmpuint(le32_to_cpu(e.data), ==, 1);
    g_assert_cmpuint(e.rsvd0 | e.rsvd1, ==, 0);
    e = qt_read_eqe(t, eq0, 1);
    g_assert_cmpuint(e.flags, ==, 0);
    qt_wr(t, QHCA_REG_EQ_DB, QHCA_FIELD_PREP(QHCA_EQ_DB_EQN, eqn) | 1);
    g_assert_cmpuint(qt_rd(t, QHCA_REG_ERROR), ==, 0);

    /* One that does not, does not. */
    g_assert_cmpuint(qt_create_eq(t, eq1, 1, 0, 0, &eqn1), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(eqn1, ==, 1);
    g_assert_cmpuint(qt_read_eqe(t, eq1, 0).flags, ==, 0);
    qt_assert_objects(t, 0, 0, 2);
    g_assert_cmpuint(qt_create_eq(t, eq1, 1, 0, 0, &result), ==,
                     QHCA_AQ_NO_RESOURCES);

    /* EQ doorbells: unknown EQ, index outside the ring, past producer. */
    qt_wr(t, QHCA_REG_EQ_DB, QHCA_FIELD_PREP(QHCA_EQ_DB_EQN, 5));
    qt_assert_error(t, QHCA_ERR_BAD_DOORBELL);
    qt_enable(t, 3);
    g_assert_cmpuint(qt_create_eq(t, eq0, 2, 1, mask, &eqn), ==,
                     QHCA_AQ_SUCCESS);
    qt_wr(t, QHCA_REG_EQ_DB, QHCA_FIELD_PREP(QHCA_EQ_DB_EQN, eqn) | 4);
    qt_assert_error(t, QHCA_ERR_BAD_DOORBELL);
    qt_enable(t, 3);
    g_assert_cmpuint(qt_create_eq(t, eq0, 2, 1, mask, &eqn), ==,
                     QHCA_AQ_SUCCESS);
    qt_wr(t, QHCA_REG_EQ_DB, QHCA_FIELD_PREP(QHCA_EQ_DB_EQN, eqn) | 2);
    qt_assert_error(t, QHCA_ERR_BAD_DOORBELL);

    /* Bad parameters. */
    qt_enable(t, 3);
    g_assert_cmpuint(qt_create_eq(t, eq0, 0, 0, mask, &result), ==,
                     QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(qt_create_eq(t, eq0, 16, 0, mask, &result), ==,
                     QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(qt_create_eq(t, eq0 + 32, 2, 0, mask, &result), ==,
                     QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(qt_create_eq(t, eq0, 2, 8, mask, &result), ==,
                     QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(qt_create_eq(t, RAM_END - 64, 3, 0, mask, &result), ==,
                     QHCA_AQ_BAD_ADDRESS);
    g_assert_cmpuint(qt_create_eq(t, t->bar0.addr, 2, 0, mask, &result), ==,
                     QHCA_AQ_BAD_ADDRESS);
    g_assert_cmpuint(qt_create_eq(t, 0xffffffffffffffc0ull, 2, 0, mask,
                                  &result), ==, QHCA_AQ_BAD_ADDRESS);
    c.base_addr = cpu_to_le64(eq0);
    c.rsvd0 = 1;
    g_assert_cmpuint(qt_cmd(t, QHCA_CMD_CREATE_EQ, &c, sizeof(c), NULL), ==,
                     QHCA_AQ_BAD_PARAM);
    c.rsvd0 = 0;
    c.rsvd1 = cpu_to_le64(1);
    g_assert_cmpuint(qt_cmd(t, QHCA_CMD_CREATE_EQ, &c, sizeof(c), NULL), ==,
                     QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(qt_handle_cmd(t, QHCA_CMD_DESTROY_EQ, 0), ==,
                     QHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(qt_handle_cmd(t, QHCA_CMD_DESTROY_EQ, 300), ==,
                     QHCA_AQ_BAD_HANDLE);
    qt_assert_objects(t, 0, 0, 0);

    /* The largest EQ, then back to nothing. */
    g_assert_cmpuint(qt_create_eq(t, guest_alloc(&t->alloc, 16 << 15), 15, 7,
                                  mask, &eqn), ==, QHCA_AQ_SUCCESS);
    qt_assert_objects(t, 0, 0, 1);
    g_assert_cmpuint(qt_handle_cmd(t, QHCA_CMD_DESTROY_EQ, eqn), ==,
                     QHCA_AQ_SUCCESS);
    qt_assert_objects(t, 0, 0, 0);
    g_assert_cmpuint(qt_rd(t, QHCA_REG_ERROR), ==, 0);
    qt_assert_alive(t);
    qhca_stop(t);
}

static void test_bad_registers(void)
{
    QhcaTest *t = qhca_start(NULL);
    static const uint32_t holes[] = { QHCA_REG_END, 0x100, 0x1ffc };
    static const uint32_t ro[] = {
        QHCA_REG_VERSION, QHCA_REG_MAGIC, QHCA_REG_CAPS, QHCA_REG_AQ_CAPS,
        QHCA_REG_STATUS, QHCA_REG_ERROR, QHCA_REG_DB_PAGES,
        QHCA_REG_MSIX_VECTORS,
    };
    static const uint32_t wo[] = {
        QHCA_REG_AQ_SQ_DB, QHCA_REG_AQ_CQ_DB, QHCA_REG_EQ_DB,
    };
    size_t i;

    for (i = 0; i < ARRAY_SIZE(holes); i++) {
        g_assert_cmphex(qt_rd(t, holes[i]), ==, 0);
        qt_assert_error(t, QHCA_ERR_BAD_REGISTER);
        qt_reset(t);
        qt_wr(t, holes[i], 0xffffffff);
        qt_assert_error(t, QHCA_ERR_BAD_REGISTER);
        qt_reset(t);
    }
    for (i = 0; i < ARRAY_SIZE(ro); i++) {
        uint32_t before = qt_rd(t, ro[i]);

        qt_wr(t, ro[i], ~before);
        g_assert_cmpuint(qt_rd(t, QHCA_REG_ERROR), ==, QHCA_ERR_BAD_REGISTER);
        qt_reset(t);
        if (ro[i] != QHCA_REG_ERROR) {
            g_assert_cmphex(qt_rd(t, ro[i]), ==, before);
        }
    }
    for (i = 0; i < ARRAY_SIZE(wo); i++) {
        g_assert_cmphex(qt_rd(t, wo[i]), ==, 0);
        qt_assert_error(t, QHCA_ERR_BAD_REGISTER);
        qt_reset(t);
    }

    /* Widths other than 32 bits, and unaligned 32-bit accesses. */
    g_assert_cmphex(qpci_io_readb(t->dev, t->bar0, QHCA_REG_MAGIC), ==, 0);
    qt_assert_error(t, QHCA_ERR_BAD_REGISTER);
    qt_reset(t);
    g_assert_cmphex(qpci_io_readw(t->dev, t->bar0, QHCA_REG_MAGIC), ==, 0);
    qt_assert_error(t, QHCA_ERR_BAD_REGISTER);
    qt_reset(t);
    g_assert_cmphex(qpci_io_readq(t->dev, t->bar0, QHCA_REG_VERSION), ==, 0);
    qt_assert_error(t, QHCA_ERR_BAD_REGISTER);
    qt_reset(t);
    g_assert_cmphex(qpci_io_readl(t->dev, t->bar0, QHCA_REG_MAGIC + 2), ==, 0);
    qt_assert_error(t, QHCA_ERR_BAD_REGISTER);
    qt_reset(t);
    qpci_io_writeb(t->dev, t->bar0, QHCA_REG_AQ_CFG, 1);
    qt_assert_error(t, QHCA_ERR_BAD_REGISTER);
    g_assert_cmphex(qt_rd(t, QHCA_REG_AQ_CFG), ==, 0);
    qt_reset(t);
    qpci_io_writew(t->dev, t->bar0, QHCA_REG_CTRL, QHCA_CTRL_ENABLE);
    qt_assert_error(t, QHCA_ERR_BAD_REGISTER);
    g_assert_cmphex(qt_rd(t, QHCA_REG_CTRL), ==, 0);
    qt_reset(t);
    qpci_io_writeq(t->dev, t->bar0, QHCA_REG_AQ_SQ_BASE_LO, 0x1000);
    qt_assert_error(t, QHCA_ERR_BAD_REGISTER);
    g_assert_cmphex(qt_rd(t, QHCA_REG_AQ_SQ_BASE_LO), ==, 0);
    qt_reset(t);
    qpci_io_writel(t->dev, t->bar0, QHCA_REG_AQ_CFG + 1, 0x1);
    qt_assert_error(t, QHCA_ERR_BAD_REGISTER);
    qhca_stop(t);
}

static void test_reserved_bits(void)
{
    QhcaTest *t = qhca_start(NULL);

    qt_wr(t, QHCA_REG_CTRL, QHCA_CTRL_ENABLE | 0x4);
    qt_assert_error(t, QHCA_ERR_RESERVED_BITS);
    g_assert_cmphex(qt_rd(t, QHCA_REG_CTRL), ==, 0);
    g_assert_cmphex(qt_rd(t, QHCA_REG_STATUS), ==, 0);
    qt_reset(t);
    qt_wr(t, QHCA_REG_CTRL, 0x80000000);
    qt_assert_error(t, QHCA_ERR_RESERVED_BITS);
    qt_reset(t);
    qt_wr(t, QHCA_REG_AQ_CFG, qt_aq_cfg(2, 0) | 0x10);
    qt_assert_error(t, QHCA_ERR_RESERVED_BITS);
    g_assert_cmphex(qt_rd(t, QHCA_REG_AQ_CFG), ==, 0);
    qt_reset(t);
    qt_wr(t, QHCA_REG_AQ_CFG, qt_aq_cfg(2, 0) | 0x10000);
    qt_assert_error(t, QHCA_ERR_RESERVED_BITS);
    qt_reset(t);
    qhca_stop(t);
}

/* Enable with the given admin queue; it must fail with AQ_CONFIG. */
static void assert_enable_fails(QhcaTest *t, uint64_t sq, uint64_t cq,
                                uint32_t cfg)
{
    qt_reset(t);
    qt_write_aq_regs(t, sq, cq, cfg);
    qt_wr(t, QHCA_REG_CTRL, QHCA_CTRL_ENABLE);
    g_assert_cmphex(qt_rd(t, QHCA_REG_STATUS), ==, QHCA_STATUS_FATAL);
    qt_assert_error(t, QHCA_ERR_AQ_CONFIG);

    /* Only a reset clears FATAL; doorbells meanwhile are refused. */
    qt_wr(t, QHCA_REG_CTRL, 0);
    qt_wr(t, QHCA_REG_CTRL, QHCA_CTRL_ENABLE);
    g_assert_cmphex(qt_rd(t, QHCA_REG_STATUS), ==, QHCA_STATUS_FATAL);
    qt_wr(t, QHCA_REG_AQ_SQ_DB, 1);
    qt_assert_error(t, QHCA_ERR_NOT_READY);
    qt_reset(t);
    g_assert_cmphex(qt_rd(t, QHCA_REG_STATUS), ==, 0);
}

static void test_bad_aq_config(void)
{
    QhcaTest *t = qhca_start(NULL);
    uint64_t sq = guest_alloc(&t->alloc, 64 << 2);
    uint64_t cq = guest_alloc(&t->alloc, 16 << 2);

    /* Depth. */
    assert_enable_fails(t, sq, cq, qt_aq_cfg(0, 0));
    assert_enable_fails(t, sq, cq, qt_aq_cfg(13, 0));
    assert_enable_fails(t, sq, cq, qt_aq_cfg(15, 0));
    /* MSI-X vector. */
    assert_enable_fails(t, sq, cq, qt_aq_cfg(2, 8));
    assert_enable_fails(t, sq, cq, qt_aq_cfg(2, 255));
    /* Alignment. */
    assert_enable_fails(t, sq + 32, cq, qt_aq_cfg(2, 0));
    assert_enable_fails(t, sq, cq + 16, qt_aq_cfg(2, 0));
    /* Outside RAM: above it, straddling its end, in the hole above 4 GiB. */
    assert_enable_fails(t, 0x10000000, cq, qt_aq_cfg(2, 0));
    assert_enable_fails(t, sq, RAM_END - 64, qt_aq_cfg(3, 0));
    assert_enable_fails(t, 0x4000000000ull, cq, qt_aq_cfg(2, 0));
    /* A ring big enough to run past the end of RAM. */
    assert_enable_fails(t, sq, RAM_END - 4096, qt_aq_cfg(12, 0));
    /* In the device's own BARs. */
    assert_enable_fails(t, t->bar0.addr, cq, qt_aq_cfg(2, 0));
    assert_enable_fails(t, sq, t->bar0.addr + QHCA_MSIX_TABLE_OFFSET,
                        qt_aq_cfg(2, 0));
    assert_enable_fails(t, sq, t->bar2.addr, qt_aq_cfg(2, 0));
    /* Wrapping past 2^64. */
    assert_enable_fails(t, 0xffffffffffffffc0ull, cq, qt_aq_cfg(2, 0));
    assert_enable_fails(t, sq, 0xfffffffffffffff0ull & ~63ull, qt_aq_cfg(2, 0));

    /* Without bus mastering the device reaches no memory at all. */
    qt_reset(t);
    qpci_config_writew(t->dev, PCI_COMMAND, PCI_COMMAND_MEMORY);
    qt_write_aq_regs(t, sq, cq, qt_aq_cfg(2, 0));
    qt_wr(t, QHCA_REG_CTRL, QHCA_CTRL_ENABLE);
    g_assert_cmphex(qt_rd(t, QHCA_REG_STATUS), ==, QHCA_STATUS_FATAL);
    qt_assert_error(t, QHCA_ERR_AQ_CONFIG);
    qpci_device_enable(t->dev);

    /* And a good configuration still works afterwards. */
    qt_enable(t, 2);
    qt_assert_objects(t, 0, 0, 0);
    qhca_stop(t);
}

static void test_config_locked(void)
{
    QhcaTest *t = qhca_start(NULL);
    uint64_t sq;

    qt_enable(t, 2);
    sq = t->sq;
    qt_wr(t, QHCA_REG_AQ_SQ_BASE_LO, 0x1000);
    g_assert_cmpuint(qt_rd(t, QHCA_REG_ERROR), ==, QHCA_ERR_CONFIG_LOCKED);
    g_assert_cmphex(qt_rd(t, QHCA_REG_AQ_SQ_BASE_LO), ==, (uint32_t)sq);
    qt_wr(t, QHCA_REG_AQ_CQ_BASE_HI, 1);
    qt_wr(t, QHCA_REG_AQ_CFG, qt_aq_cfg(5, 0));
    g_assert_cmpuint(qt_rd(t, QHCA_REG_ERROR), ==, QHCA_ERR_CONFIG_LOCKED);
    g_assert_cmphex(qt_rd(t, QHCA_REG_AQ_CFG), ==, qt_aq_cfg(2, 0));
    /* The queue carries on regardless. */
    qt_assert_objects(t, 0, 0, 0);
    g_assert_cmphex(qt_rd(t, QHCA_REG_STATUS), ==, QHCA_STATUS_READY);
    qhca_stop(t);
}

static void test_doorbell_not_ready(void)
{
    QhcaTest *t = qhca_start(NULL);

    qt_wr(t, QHCA_REG_AQ_SQ_DB, 1);
    qt_assert_error(t, QHCA_ERR_NOT_READY);
    qt_reset(t);
    qt_wr(t, QHCA_REG_AQ_CQ_DB, 0);
    qt_assert_error(t, QHCA_ERR_NOT_READY);
    qt_reset(t);
    qt_wr(t, QHCA_REG_EQ_DB, 0);
    qt_assert_error(t, QHCA_ERR_NOT_READY);
    qt_reset(t);
    qpci_io_writel(t->dev, t->bar2, QHCA_DB_SQ, 1);
    qt_assert_error(t, QHCA_ERR_NOT_READY);

    /* After a disable, too. */
    qt_enable(t, 1);
    qt_wr(t, QHCA_REG_CTRL, 0);
    qt_wr(t, QHCA_REG_AQ_SQ_DB, 1);
    qt_assert_error(t, QHCA_ERR_NOT_READY);
    qhca_stop(t);
}

static void test_aq_doorbells(void)
{
    QhcaTest *t = qhca_start(NULL);

    qt_enable(t, 2);
    qt_wr(t, QHCA_REG_AQ_SQ_DB, 4);
    qt_assert_error(t, QHCA_ERR_BAD_DOORBELL);
    qt_assert_no_cqe(t);

    qt_enable(t, 2);
    qt_wr(t, QHCA_REG_AQ_SQ_DB, 0xffffffff);
    qt_assert_error(t, QHCA_ERR_BAD_DOORBELL);

    qt_enable(t, 2);
    qt_wr(t, QHCA_REG_AQ_CQ_DB, 4);
    qt_assert_error(t, QHCA_ERR_BAD_DOORBELL);

    /* The driver cannot consume completions that were never written. */
    qt_enable(t, 2);
    qt_wr(t, QHCA_REG_AQ_CQ_DB, 1);
    qt_assert_error(t, QHCA_ERR_BAD_DOORBELL);
    qt_enable(t, 2);
    qt_stats(t);
    qt_wr(t, QHCA_REG_AQ_CQ_DB, 1);
    g_assert_cmpuint(qt_rd(t, QHCA_REG_ERROR), ==, 0);
    qt_wr(t, QHCA_REG_AQ_CQ_DB, 2);
    qt_assert_error(t, QHCA_ERR_BAD_DOORBELL);

    /* Still usable. */
    qt_assert_objects(t, 0, 0, 0);
    qhca_stop(t);
}

static void test_bad_commands(void)
{
    QhcaTest *t = qhca_start(NULL);
    /* 0x26: the first opcode after 1.8's (RESUME_PAGE_FAULT 0x25). */
    static const uint16_t bad_ops[] = { 0, QHCA_CMD_RESUME_PAGE_FAULT + 1,
                                        0x100, 0xffff };
    struct qhca_aq_sqe sqe;
    struct qhca_stats st;
    size_t i;

    qt_enable(t, 3);
    for (i = 0; i < ARRAY_SIZE(bad_ops); i++) {
        g_assert_cmpuint(qt_cmd(t, bad_ops[i], NULL, 0, NULL), ==,
                         QHCA_AQ_BAD_OPCODE);
    }

    /* Reserved SQE fields. */
    sqe = (struct qhca_aq_sqe) {
        .opcode = cpu_to_le16(QHCA_CMD_ALLOC_PD),
        .flags = cpu_to_le32(1),
    };
    g_assert_cmpuint(qt_submit(t, &sqe, NULL), ==, QHCA_AQ_BAD_PARAM);
    sqe = (struct qhca_aq_sqe) {
        .opcode = cpu_to_le16(QHCA_CMD_ALLOC_PD),
        .rsvd = cpu_to_le32(0x80000000),
    };
    g_assert_cmpuint(qt_submit(t, &sqe, NULL), ==, QHCA_AQ_BAD_PARAM);
    /* Payload bytes beyond the command's parameters. */
    sqe = (struct qhca_aq_sqe) { .opcode = cpu_to_le16(QHCA_CMD_ALLOC_PD) };
    sqe.payload[0] = 1;
    g_assert_cmpuint(qt_submit(t, &sqe, NULL), ==, QHCA_AQ_BAD_PARAM);
    sqe = (struct qhca_aq_sqe) { .opcode = cpu_to_le16(QHCA_CMD_DEALLOC_PD) };
    sqe.payload[QHCA_AQ_PAYLOAD_SIZE - 1] = 1;
    g_assert_cmpuint(qt_submit(t, &sqe, NULL), ==, QHCA_AQ_BAD_PARAM);
    sqe = (struct qhca_aq_sqe) {
        .opcode = cpu_to_le16(QHCA_CMD_CREATE_EQ),
        .resp_addr = cpu_to_le64(t->resp),
    };
    sqe.payload[sizeof(struct qhca_cmd_create_eq)] = 1;
    g_assert_cmpuint(qt_submit(t, &sqe, NULL), ==, QHCA_AQ_BAD_PARAM);

    /* A failed command changes nothing. */
    st = qt_stats(t);
    g_assert_cmpuint(le32_to_cpu(st.pds), ==, 0);
    g_assert_cmpuint(le64_to_cpu(st.admin_errors), ==, ARRAY_SIZE(bad_ops) + 5);
    g_assert_cmpuint(le64_to_cpu(st.guest_errors), ==, ARRAY_SIZE(bad_ops) + 5);
    g_assert_cmpuint(qt_rd(t, QHCA_REG_ERROR), ==, 0);
    qt_assert_alive(t);
    qhca_stop(t);
}

static uint8_t query_device_at(QhcaTest *t, uint64_t addr, uint32_t len)
{
    struct qhca_aq_sqe sqe = {
        .opcode = cpu_to_le16(QHCA_CMD_QUERY_DEVICE),
        .resp_addr = cpu_to_le64(addr),
        .resp_len = cpu_to_le32(len),
    };

    return qt_submit(t, &sqe, NULL);
}

static void test_response_buffer(void)
{
    QhcaTest *t = qhca_start(NULL);
    const uint32_t size = sizeof(struct qhca_device_attr);
    uint8_t buf[sizeof(struct qhca_device_attr) + 8];

    qt_enable(t, 2);
    g_assert_cmpuint(query_device_at(t, t->resp, size - 1), ==,
                     QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(query_device_at(t, t->resp, 0), ==, QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(query_device_at(t, 0x10000000, size), ==,
                     QHCA_AQ_BAD_ADDRESS);
    g_assert_cmpuint(query_device_at(t, RAM_END - 64, size), ==,
                     QHCA_AQ_BAD_ADDRESS);
    g_assert_cmpuint(query_device_at(t, t->bar0.addr, size), ==,
                     QHCA_AQ_BAD_ADDRESS);
    g_assert_cmpuint(query_device_at(t, t->bar2.addr, size), ==,
                     QHCA_AQ_BAD_ADDRESS);
    g_assert_cmpuint(query_device_at(t, 0xffffffffffffff80ull, size), ==,
                     QHCA_AQ_BAD_ADDRESS);
    /* The device writes exactly the response, however large the buffer. */
    qtest_memset(t->qts, t->resp, 0xa5, sizeof(buf));
    g_assert_cmpuint(query_device_at(t, t->resp, 4096), ==, QHCA_AQ_SUCCESS);
    qtest_memread(t->qts, t->resp, buf, sizeof(buf));
    g_assert_cmphex(buf[size - 1], ==, 0);
    g_assert_cmphex(buf[size], ==, 0xa5);
    g_assert_cmphex(buf[size + 7], ==, 0xa5);
    /* A command without a response ignores the fields. */
    g_assert_cmpuint(qt_cmd(t, QHCA_CMD_ALLOC_PD, NULL, 0, NULL), ==,
                     QHCA_AQ_SUCCESS);
    g_assert_cmpuint(qt_rd(t, QHCA_REG_ERROR), ==, 0);
    qt_assert_alive(t);
    qhca_stop(t);
}

static void test_doorbell_pages(void)
{
    QhcaTest *t = qhca_start(",max-uars=3");
    struct qhca_cmd_create_cq create_cq;
    uint32_t uar, eqn, cqn;
    struct qhca_stats st;
    uint64_t eq, cq;
    QhcaTest *u;

    qt_enable(t, 2);
    /* Nothing allocated yet. */
    qpci_io_writel(t->dev, t->bar2, QHCA_DB_SQ, 1);
    qt_assert_error(t, QHCA_ERR_BAD_DOORBELL);
    qt_enable(t, 2);
    g_assert_cmpuint(qt_cmd(t, QHCA_CMD_ALLOC_UAR, NULL, 0, &uar), ==,
                     QHCA_AQ_SUCCESS);
    g_assert_cmpuint(uar, ==, 0);

    /* Doorbells for queues that do not exist: counted, refused. */
    qpci_io_writel(t->dev, t->bar2, QHCA_DB_SQ, 0x00050001);
    qpci_io_writel(t->dev, t->bar2, QHCA_DB_RQ, 0x00050002);
    qpci_io_writel(t->dev, t->bar2, QHCA_DB_CQ_ARM, 0x00060003);
    qpci_io_writel(t->dev, t->bar2, QHCA_DB_CQ_ARM_SOL, 0x00060003);
    g_assert_cmpuint(qt_rd(t, QHCA_REG_ERROR), ==, QHCA_ERR_BAD_DOORBELL);
    st = qt_stats(t);
    g_assert_cmpuint(le64_to_cpu(st.doorbells), ==, 4);
    g_assert_cmpuint(le64_to_cpu(st.guest_errors), ==, 4);
    /* Reads return 0 and are no error. */
    g_assert_cmphex(qpci_io_readl(t->dev, t->bar2, QHCA_DB_SQ), ==, 0);
    g_assert_cmphex(qpci_io_readq(t->dev, t->bar2, 0xff8), ==, 0);

    /* Undefined offsets and widths. */
    qpci_io_writel(t->dev, t->bar2, 0x004, 1);
    qt_assert_error(t, QHCA_ERR_BAD_DOORBELL);
    g_assert_cmpuint(le64_to_cpu(qt_stats(t).doorbells), ==, 5);
    qpci_io_writel(t->dev, t->bar2, 0xffc, 1);
    qpci_io_writeq(t->dev, t->bar2, QHCA_DB_SQ, 1);
    qpci_io_writew(t->dev, t->bar2, QHCA_DB_CQ_ARM, 1);
    qpci_io_writeb(t->dev, t->bar2, QHCA_DB_RQ, 1);
    qpci_io_writel(t->dev, t->bar2, QHCA_DB_SQ + 2, 1);
    /* Pages not allocated: one in range, one past DB_PAGES in the BAR. */
    qpci_io_writel(t->dev, t->bar2, QHCA_DB_PAGE_SIZE + QHCA_DB_SQ, 1);
    qpci_io_writel(t->dev, t->bar2, 3 * QHCA_DB_PAGE_SIZE + QHCA_DB_SQ, 1);
    qt_assert_error(t, QHCA_ERR_BAD_DOORBELL);
    st = qt_stats(t);
    g_assert_cmpuint(le64_to_cpu(st.doorbells), ==, 12);
    g_assert_cmpuint(le64_to_cpu(st.guest_errors), ==, 12);

    /* A freed page is not a doorbell page any more. */
    g_assert_cmpuint(qt_handle_cmd(t, QHCA_CMD_DEALLOC_UAR, uar), ==,
                     QHCA_AQ_SUCCESS);
    qt_enable(t, 2);
    qpci_io_writel(t->dev, t->bar2, QHCA_DB_SQ, 1);
    qt_assert_error(t, QHCA_ERR_BAD_DOORBELL);
    qhca_stop(t);

    /* The default BAR has one page per UAR, and the last one works. */
    u = qhca_start(NULL);
    qt_enable(u, 2);
    for (int i = 0; i < 256; i++) {
        g_assert_cmpuint(qt_cmd(u, QHCA_CMD_ALLOC_UAR, NULL, 0, &uar), ==,
                         QHCA_AQ_SUCCESS);
    }
    g_assert_cmpuint(uar, ==, 255);
    eq = guest_alloc(&u->alloc, 4096);
    g_assert_cmpuint(qt_create_eq(u, eq, 2, 0, 0, &eqn), ==, QHCA_AQ_SUCCESS);
    cq = guest_alloc(&u->alloc, 4096);
    create_cq = (struct qhca_cmd_create_cq) {
        .ring_addr = cpu_to_le64(cq),
        .dbrec_addr = cpu_to_le64(cq + 2048),
        .eqn = cpu_to_le32(eqn),
        .uar = cpu_to_le32(uar),
        .depth_log2 = 2,
    };
    g_assert_cmpuint(qt_cmd(u, QHCA_CMD_CREATE_CQ, &create_cq,
                            sizeof(create_cq), &cqn), ==, QHCA_AQ_SUCCESS);
    qpci_io_writel(u->dev, u->bar2, 255 * QHCA_DB_PAGE_SIZE + QHCA_DB_CQ_ARM,
                   cqn << 16);
    g_assert_cmpuint(qt_rd(u, QHCA_REG_ERROR), ==, 0);
    /* The page of another UAR may not ring it. */
    qpci_io_writel(u->dev, u->bar2, 254 * QHCA_DB_PAGE_SIZE + QHCA_DB_CQ_ARM,
                   cqn << 16);
    g_assert_cmpuint(qt_rd(u, QHCA_REG_ERROR), ==, QHCA_ERR_BAD_DOORBELL);
    qhca_stop(u);
}

static void test_cq_full(void)
{
    QhcaTest *t = qhca_start(NULL);
    struct qhca_aq_sqe sqe = { .opcode = cpu_to_le16(QHCA_CMD_ALLOC_PD) };
    uint16_t ids[6];
    QhcaCompletion c;
    int i;

    /* Four entries: three commands fill the CQ (one slot stays free). */
    qt_enable(t, 2);
    for (i = 0; i < 3; i++) {
        ids[i] = qt_queue_sqe(t, &sqe);
    }
    qt_ring_sq(t);
    for (i = 0; i < 3; i++) {
        c = qt_take_cqe(t);
        g_assert_cmpuint(c.cmd_id, ==, ids[i]);
        g_assert_cmpuint(c.status, ==, QHCA_AQ_SUCCESS);
        g_assert_cmpuint(c.result, ==, i);
        g_assert_cmpuint(c.sq_head, ==, i + 1);
    }

    /* Three more while the driver has consumed nothing: they wait. */
    for (i = 3; i < 6; i++) {
        ids[i] = qt_queue_sqe(t, &sqe);
    }
    qt_ring_sq(t);
    qt_assert_no_cqe(t);
    g_assert_cmpuint(qt_rd(t, QHCA_REG_ERROR), ==, 0);

    /* Free one slot: exactly one more command completes. */
    qt_wr(t, QHCA_REG_AQ_CQ_DB, 1);
    c = qt_take_cqe(t);
    g_assert_cmpuint(c.cmd_id, ==, ids[3]);
    g_assert_cmpuint(c.result, ==, 3);
    g_assert_cmpuint(c.sq_head, ==, 0);
    qt_assert_no_cqe(t);

    /* Consume everything: the rest follow, in order. */
    qt_wr(t, QHCA_REG_AQ_CQ_DB, t->cq_head);
    for (i = 4; i < 6; i++) {
        c = qt_take_cqe(t);
        g_assert_cmpuint(c.cmd_id, ==, ids[i]);
        g_assert_cmpuint(c.result, ==, i);
        g_assert_cmpuint(c.sq_head, ==, (i + 1) % 4);
    }
    qt_wr(t, QHCA_REG_AQ_CQ_DB, t->cq_head);
    qt_assert_objects(t, 0, 6, 0);
    g_assert_cmpuint(qt_rd(t, QHCA_REG_ERROR), ==, 0);
    qt_assert_alive(t);
    qhca_stop(t);
}

/* System reset and function level reset both return the device to zero. */
static void test_resets(void)
{
    QhcaTest *t = qhca_start(NULL);
    uint8_t exp = qpci_find_capability(t->dev, PCI_CAP_ID_EXP, 0);

    g_assert_cmpuint(exp, !=, 0);
    g_assert(qpci_config_readl(t->dev, exp + PCI_EXP_DEVCAP) &
             PCI_EXP_DEVCAP_FLR);

    qt_enable(t, 2);
    g_assert_cmpuint(qt_cmd(t, QHCA_CMD_ALLOC_UAR, NULL, 0, NULL), ==,
                     QHCA_AQ_SUCCESS);
    qtest_system_reset(t->qts);
    /* The reset also cleared the BAR and the command register. */
    qpci_config_writel(t->dev, PCI_BASE_ADDRESS_0, t->bar0.addr);
    qpci_device_enable(t->dev);
    g_assert_cmphex(qt_rd(t, QHCA_REG_STATUS), ==, 0);
    g_assert_cmphex(qt_rd(t, QHCA_REG_CTRL), ==, 0);
    g_assert_cmphex(qt_rd(t, QHCA_REG_AQ_CFG), ==, 0);
    qt_enable(t, 2);
    qt_assert_objects(t, 0, 0, 0);

    g_assert_cmpuint(qt_cmd(t, QHCA_CMD_ALLOC_PD, NULL, 0, NULL), ==,
                     QHCA_AQ_SUCCESS);
    qpci_config_writew(t->dev, exp + PCI_EXP_DEVCTL, PCI_EXP_DEVCTL_BCR_FLR);
    qpci_config_writel(t->dev, PCI_BASE_ADDRESS_0, t->bar0.addr);
    qpci_device_enable(t->dev);
    g_assert_cmphex(qt_rd(t, QHCA_REG_STATUS), ==, 0);
    g_assert_cmphex(qt_rd(t, QHCA_REG_AQ_CFG), ==, 0);
    qt_enable(t, 2);
    qt_assert_objects(t, 0, 0, 0);
    qhca_stop(t);
}

/* Completions and events signal their vectors (seen pending, as masked). */
static void test_msix(void)
{
    QhcaTest *t = qhca_start(NULL);
    uint64_t eq = guest_alloc(&t->alloc, 4096);
    uint32_t eqn;

    qpci_msix_enable(t->dev);
    /* Setting MSI-X up mapped BAR 0 again, elsewhere. */
    t->bar0 = t->dev->msix_table_bar;
    g_assert(qpci_msix_masked(t->dev, 1));

    t->vector = 1;
    qt_enable(t, 2);
    g_assert(!qpci_msix_pending(t->dev, 1));
    qt_assert_objects(t, 0, 0, 0);
    g_assert(qpci_msix_pending(t->dev, 1));
    g_assert(!qpci_msix_pending(t->dev, 0));

    qtest_memset(t->qts, eq, 0, 4096);
    g_assert(!qpci_msix_pending(t->dev, 5));
    g_assert_cmpuint(qt_create_eq(t, eq, 2, 5, 1u << QHCA_EVENT_PORT_ACTIVE,
                                  &eqn), ==, QHCA_AQ_SUCCESS);
    g_assert(qpci_msix_pending(t->dev, 5));
    g_assert(!qpci_msix_pending(t->dev, 4));
    g_assert(!qpci_msix_pending(t->dev, 7));
    qpci_msix_disable(t->dev);
    qhca_stop(t);
}

int main(int argc, char **argv)
{
    if (!qt_init(&argc, &argv)) {
        return g_test_run();
    }

    qtest_add_func("/qhca/identity", test_identity);
    qtest_add_func("/qhca/properties", test_properties);
    qtest_add_func("/qhca/bad-properties", test_bad_properties);
    qtest_add_func("/qhca/reset", test_reset);
    qtest_add_func("/qhca/enable", test_enable);
    qtest_add_func("/qhca/query-device", test_query_device);
    qtest_add_func("/qhca/query-device-props", test_query_props);
    qtest_add_func("/qhca/query-port", test_query_port);
    qtest_add_func("/qhca/query-stats/counts", test_query_stats_counts);
    qtest_add_func("/qhca/query-stats/len", test_query_stats_len);
    qtest_add_func("/qhca/uar-pd", test_uar_pd);
    qtest_add_func("/qhca/eq", test_eq);
    qtest_add_func("/qhca/bad/registers", test_bad_registers);
    qtest_add_func("/qhca/bad/reserved-bits", test_reserved_bits);
    qtest_add_func("/qhca/bad/aq-config", test_bad_aq_config);
    qtest_add_func("/qhca/bad/config-locked", test_config_locked);
    qtest_add_func("/qhca/bad/doorbell-not-ready", test_doorbell_not_ready);
    qtest_add_func("/qhca/bad/aq-doorbells", test_aq_doorbells);
    qtest_add_func("/qhca/bad/commands", test_bad_commands);
    qtest_add_func("/qhca/bad/response-buffer", test_response_buffer);
    qtest_add_func("/qhca/doorbell-pages", test_doorbell_pages);
    qtest_add_func("/qhca/cq-full", test_cq_full);
    qtest_add_func("/qhca/resets", test_resets);
    qtest_add_func("/qhca/msix", test_msix);

    return g_test_run();
}
