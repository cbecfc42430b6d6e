/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qhca: an emulated InfiniBand host channel adapter, PCI function.
 *
 * This file is the glue to QEMU: the type, its properties, the BARs and
 * MSI-X, reset and teardown.  The device's behaviour lives in the other
 * qhca-*.c files; Documentation/hw/index.rst describes it.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/host-utils.h"
#include "qemu/main-loop.h"
#include "qemu/module.h"
#include "qemu/units.h"
#include "hw/pci/msix.h"
#include "hw/pci/pcie.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "qhca.h"
#include "qhca-eth.h"
#include "trace.h"

#define QHCA_PCIE_CAP_OFFSET    0x80

/* Default node GUID: a QEMU-style OUI (52:54:00) with the LID in it. */
#define QHCA_GUID_BASE          0x525400fffe000000ull

/* Signal an MSI-X vector; from the engine thread, via the main loop. */
void qhca_irq(QhcaState *s, unsigned vector)
{
    PCIDevice *pci_dev = PCI_DEVICE(s);

    if (vector >= s->params.msix_vectors) {
        return;
    }
    if (!bql_locked()) {
        qhca_engine_irq_later(s, vector);
        return;
    }
    if (msix_enabled(pci_dev)) {
        trace_qhca_irq(vector);
        msix_notify(pci_dev, vector);
    }
}

static bool qhca_check_range(const char *name, uint64_t val, uint64_t min,
                             uint64_t max, Error **errp)
{
    if (val < min || val > max) {
        error_setg(errp, "qhca: %s=%" PRIu64 " is out of range "
                   "%" PRIu64 "..%" PRIu64, name, val, min, max);
        return false;
    }
    return true;
}

/* dm-size (1.7): 0, or a power of two that a BAR and dm_size can hold. */
static bool qhca_check_dm_size(uint64_t size, Error **errp)
{
    if (size && (!is_power_of_2(size) || size < QHCA_DM_MIN_SIZE ||
                 size > QHCA_MAX_DM_SIZE)) {
        error_setg(errp, "qhca: dm-size=%" PRIu64 " is out of range: 0, "
                   "or a power of two %u..%llu", size, QHCA_DM_MIN_SIZE,
                   QHCA_MAX_DM_SIZE);
        return false;
    }
    return true;
}

static bool qhca_check_params(QhcaParams *p, Error **errp)
{
    return qhca_check_range("lid", p->lid, 1, QHCA_MAX_LID, errp) &&
        qhca_check_range("max-pds", p->max_pds, 1, QHCA_MAX_PDS, errp) &&
        qhca_check_range("max-uars", p->max_uars, 1, QHCA_MAX_UARS, errp) &&
        qhca_check_range("max-eqs", p->max_eqs, 1, QHCA_MAX_EQS, errp) &&
        qhca_check_range("max-qps", p->max_qps, 1, QHCA_MAX_QPS, errp) &&
        qhca_check_range("max-cqs", p->max_cqs, 1, QHCA_MAX_CQS, errp) &&
        qhca_check_range("max-mrs", p->max_mrs, 1, QHCA_MAX_MRS, errp) &&
        qhca_check_range("max-qp-wr", p->max_qp_wr, 1, QHCA_WQ_MAX_DEPTH,
                         errp) &&
        qhca_check_range("max-cqe", p->max_cqe, 1, QHCA_MAX_CQE, errp) &&
        qhca_check_range("max-mr-pages", p->max_mr_pages, 1,
                         QHCA_MAX_MR_PAGES, errp) &&
        qhca_check_range("max-srqs", p->max_srqs, 1, QHCA_MAX_SRQS, errp) &&
        qhca_check_range("max-mws", p->max_mws, 0, QHCA_MAX_MWS, errp) &&
        qhca_check_range("max-xrcds", p->max_xrcds, 1, QHCA_MAX_XRCDS,
                         errp) &&
        qhca_check_range("x-engine-spin-us", p->engine_spin_us, 0, 1000,
                         errp) &&
        qhca_check_range("x-rx-queue", p->rx_queue, 1, QHCA_NET_RX_QUEUE_MAX,
                         errp) &&
        qhca_check_range("max-srq-wr", p->max_srq_wr, 2, QHCA_WQ_MAX_DEPTH,
                         errp) &&
        qhca_check_range("msix-vectors", p->msix_vectors,
                         QHCA_MIN_MSIX_VECTORS, QHCA_MAX_MSIX_VECTORS, errp) &&
        qhca_check_dm_size(p->dm_size, errp);
}

static bool qhca_init_bars(QhcaState *s, Error **errp)
{
    PCIDevice *pci_dev = PCI_DEVICE(s);
    uint64_t db_size = pow2ceil((uint64_t)s->params.max_uars *
                                QHCA_DB_PAGE_SIZE);
    unsigned i;

    memory_region_init(&s->bar0, OBJECT(s), "qhca-bar0", QHCA_REG_BAR_SIZE);
    memory_region_init_io(&s->regs, OBJECT(s), &qhca_reg_ops, s, "qhca-regs",
                          QHCA_MSIX_TABLE_OFFSET);
    memory_region_add_subregion(&s->bar0, 0, &s->regs);
    pci_register_bar(pci_dev, QHCA_REG_BAR, PCI_BASE_ADDRESS_SPACE_MEMORY,
                     &s->bar0);

    /* MSI-X is the only interrupt: without it the device is useless. */
    if (msix_init(pci_dev, s->params.msix_vectors,
                  &s->bar0, QHCA_REG_BAR, QHCA_MSIX_TABLE_OFFSET,
                  &s->bar0, QHCA_REG_BAR, QHCA_MSIX_PBA_OFFSET,
                  0, errp) < 0) {
        return false;
    }
    for (i = 0; i < s->params.msix_vectors; i++) {
        msix_vector_use(pci_dev, i);
    }

    memory_region_init_io(&s->db_bar, OBJECT(s), &qhca_db_ops, s,
                          "qhca-doorbells", db_size);
    pci_register_bar(pci_dev, QHCA_DB_BAR,
                     PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64, &s->db_bar);
    return true;
}

/*
 * BAR 4 (1.7): device memory.  RAM, so that the guest maps it as memory
 * (prefetchable, write-combined) and QEMU's RAM migration and dirty
 * tracking cover it; the data path reaches it through s->dm.
 */
static bool qhca_init_dm(QhcaState *s, Error **errp)
{
    if (!s->params.dm_size) {
        return true;
    }
    if (!memory_region_init_ram(&s->dm_bar, OBJECT(s), "qhca-dm",
                                s->params.dm_size, errp)) {
        return false;
    }
    s->dm = memory_region_get_ram_ptr(&s->dm_bar);
    pci_register_bar(PCI_DEVICE(s), QHCA_DM_BAR,
                     PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64 |
                     PCI_BASE_ADDRESS_MEM_PREFETCH, &s->dm_bar);
    return true;
}

/* Undo qhca_init_dm(): a device plugged again registers its RAM again. */
static void qhca_fini_dm(QhcaState *s)
{
    if (s->dm) {
        vmstate_unregister_ram(&s->dm_bar, DEVICE(s));
        s->dm = NULL;
    }
}

/*
 * GUIDs the host did not set.  An IB port's come from its LID; an
 * Ethernet port's node GUID is the EUI-64 of its MAC (the interface ID of
 * its default GID), so that guests on one wire, whose MACs differ, differ.
 */
static void qhca_default_guids(QhcaState *s)
{
    QhcaParams *p = &s->params;
    const uint8_t *mac = s->conf.macaddr.a;

    if (!p->node_guid && qhca_port_is_eth(s)) {
        p->node_guid = (uint64_t)(mac[0] ^ 2) << 56 |
                       (uint64_t)mac[1] << 48 | (uint64_t)mac[2] << 40 |
                       0xfffe000000ull | (uint64_t)mac[3] << 16 |
                       (uint64_t)mac[4] << 8 | mac[5];
    }
    if (!p->node_guid) {
        p->node_guid = QHCA_GUID_BASE | (uint64_t)p->lid << 8;
    }
    if (!p->port_guid) {
        p->port_guid = p->node_guid + 1;
    }
}

static void qhca_pci_exit(PCIDevice *pci_dev);

static void qhca_realize(PCIDevice *pci_dev, Error **errp)
{
    QhcaState *s = QHCA(pci_dev);
    QhcaParams *p = &s->params;

    if (!qhca_check_params(p, errp)) {
        return;
    }

    if (pcie_endpoint_cap_init(pci_dev, QHCA_PCIE_CAP_OFFSET) < 0) {
        error_setg(errp, "qhca: cannot add the PCI Express capability");
        return;
    }
    pcie_cap_flr_init(pci_dev);

    if (!qhca_init_bars(s, errp)) {
        pcie_cap_exit(pci_dev);
        return;
    }
    if (!qhca_init_dm(s, errp)) {
        msix_unuse_all_vectors(pci_dev);
        msix_uninit(pci_dev, &s->bar0, &s->bar0);
        pcie_cap_exit(pci_dev);
        return;
    }

    qemu_mutex_init(&s->lock);
    qhca_objects_init(s);
    qhca_aq_init(s);
    qhca_engine_init(s);
    if (!qhca_net_realize(s, errp)) {
        /* Everything is up but the NIC, which qhca_net_unrealize() skips. */
        qhca_pci_exit(pci_dev);
        return;
    }
    qhca_default_guids(s);
    qhca_device_reset(s);
}

static void qhca_pci_exit(PCIDevice *pci_dev)
{
    QhcaState *s = QHCA(pci_dev);

    /* The engine first: it uses the objects and the NIC. */
    qhca_engine_fini(s);
    qhca_net_unrealize(s);
    qhca_aq_fini(s);
    qhca_objects_fini(s);
    qemu_mutex_destroy(&s->lock);
    msix_unuse_all_vectors(pci_dev);
    msix_uninit(pci_dev, &s->bar0, &s->bar0);
    qhca_fini_dm(s);
    pcie_cap_exit(pci_dev);
}

/* The PCIe capability advertises FLR; this is where it happens. */
static void qhca_write_config(PCIDevice *pci_dev, uint32_t addr, uint32_t val,
                              int len)
{
    pci_default_write_config(pci_dev, addr, val, len);
    pcie_cap_flr_write_config(pci_dev, addr, val, len);
}

/* System reset and function level reset both look like CTRL.RESET. */
static void qhca_reset_hold(Object *obj, ResetType type)
{
    qhca_device_reset(QHCA(obj));
}

static const Property qhca_props[] = {
    DEFINE_PROP_UINT16("lid", QhcaState, params.lid, 1),
    DEFINE_PROP_UINT64("node-guid", QhcaState, params.node_guid, 0),
    DEFINE_PROP_UINT64("port-guid", QhcaState, params.port_guid, 0),
    DEFINE_PROP_UINT32("max-pds", QhcaState, params.max_pds, 1024),
    DEFINE_PROP_UINT32("max-uars", QhcaState, params.max_uars, 256),
    DEFINE_PROP_UINT32("max-eqs", QhcaState, params.max_eqs, 16),
    DEFINE_PROP_UINT32("max-qps", QhcaState, params.max_qps, 1024),
    DEFINE_PROP_UINT32("max-cqs", QhcaState, params.max_cqs, 1024),
    DEFINE_PROP_UINT32("max-mrs", QhcaState, params.max_mrs, 4096),
    DEFINE_PROP_UINT32("max-qp-wr", QhcaState, params.max_qp_wr, 4096),
    DEFINE_PROP_UINT32("max-cqe", QhcaState, params.max_cqe, 32768),
    DEFINE_PROP_UINT32("max-mr-pages", QhcaState, params.max_mr_pages,
                       1048576),
    DEFINE_PROP_UINT32("msix-vectors", QhcaState, params.msix_vectors, 8),
    DEFINE_PROP_UINT32("max-srqs", QhcaState, params.max_srqs, 1024),
    DEFINE_PROP_UINT32("max-mws", QhcaState, params.max_mws, 1024),
    DEFINE_PROP_UINT32("max-srq-wr", QhcaState, params.max_srq_wr, 4096),
    DEFINE_PROP_UINT32("max-xrcds", QhcaState, params.max_xrcds, 64),
    /*
     * Tuning, not interface (qhca-engine.c): the engine thread's spin, and
     * doorbells running the engine on the vCPU.  Both off by default: on
     * a busy 2-core host under TCG neither made anything faster.
     */
    DEFINE_PROP_UINT32("x-engine-spin-us", QhcaState, params.engine_spin_us,
                       0),
    DEFINE_PROP_BOOL("x-engine-inline", QhcaState, params.engine_inline,
                     false),
    /* For tests (qhca-net.c): frames the port's receive queue holds. */
    DEFINE_PROP_UINT32("x-rx-queue", QhcaState, params.rx_queue,
                       QHCA_NET_RX_QUEUE_MAX),
    /* 1.3: INJECT_FAULT (qhca-fault.c); link-up is a QOM property there. */
    DEFINE_PROP_BOOL("fault-injection", QhcaState, params.fault_injection,
                     true),
    /*
     * 1.5 (qhca-net.c): with netdev the port is Ethernet, RoCEv2 on that
     * netdev; link-layer (eth, ib) only confirms it.
     */
    DEFINE_NIC_PROPERTIES(QhcaState, conf),
    DEFINE_PROP_STRING("link-layer", QhcaState, params.link_layer),
    /* 1.7: bytes of device memory in BAR 4; 0: none, no BAR 4. */
    DEFINE_PROP_SIZE("dm-size", QhcaState, params.dm_size, 256 * KiB),
};

/* Guest rings and objects live in guest memory and host tables alike. */
static const VMStateDescription qhca_vmstate = {
    .name = TYPE_QHCA,
    .unmigratable = 1,
};

/*
 * QEMU 10.1 made class_init's data pointer const.  The series is written
 * against 10.0, the release we build, and must also build on the newest
 * release Debian offers (tools/series/qemu check).
 */
#if QEMU_VERSION_MAJOR > 10 || \
    (QEMU_VERSION_MAJOR == 10 && QEMU_VERSION_MINOR >= 1)
typedef const void QhcaClassData;
#else
typedef void QhcaClassData;
#endif

static void qhca_class_init(ObjectClass *klass, QhcaClassData *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);
    ResettableClass *rc = RESETTABLE_CLASS(klass);

    k->realize = qhca_realize;
    k->exit = qhca_pci_exit;
    k->config_write = qhca_write_config;
    k->vendor_id = QHCA_PCI_VENDOR_ID;
    k->device_id = QHCA_PCI_DEVICE_ID;
    k->subsystem_vendor_id = QHCA_PCI_SUBSYSTEM_VENDOR_ID;
    k->subsystem_id = QHCA_PCI_SUBSYSTEM_ID;
    k->class_id = QHCA_PCI_CLASS;
    k->revision = QHCA_PCI_REVISION;

    dc->desc = "qhca emulated InfiniBand HCA";
    set_bit(DEVICE_CATEGORY_NETWORK, dc->categories);
    device_class_set_props(dc, qhca_props);
    dc->vmsd = &qhca_vmstate;
    rc->phases.hold = qhca_reset_hold;
    qhca_fault_class_init(klass);
}

static void qhca_instance_init(Object *obj)
{
    qhca_fault_instance_init(QHCA(obj));
}

static const TypeInfo qhca_info = {
    .name = TYPE_QHCA,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(QhcaState),
    .instance_init = qhca_instance_init,
    .class_init = qhca_class_init,
    .interfaces = (InterfaceInfo[]) {
        { INTERFACE_PCIE_DEVICE },
        { }
    },
};

static void qhca_register_types(void)
{
    type_register_static(&qhca_info);
}

type_init(qhca_register_types)
