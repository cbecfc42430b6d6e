// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * qhca: driver for the qhca emulated InfiniBand HCA (QEMU -device qhca).
 *
 * PCI probe and remove: bring the device up (reset, admin queue, enable),
 * read its attributes, create the event queues and register the ib_device.
 */

#include <linux/dma-mapping.h>
#include <linux/interrupt.h>
#include <linux/module.h>
#include <linux/pci.h>

#include "qhca.h"
#include "qhca_pci.h"

MODULE_AUTHOR("qhca developers");
MODULE_DESCRIPTION("qhca emulated InfiniBand HCA driver");
MODULE_LICENSE("Dual BSD/GPL");

static const struct pci_device_id qhca_pci_tbl[] = {
	{ PCI_DEVICE(QHCA_PCI_VENDOR_ID, QHCA_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, qhca_pci_tbl);

/*
 * Map BAR 0 and claim BAR 2, whose pages are mapped to user space; both
 * for as long as the driver is bound, across resets.  BAR 4, device
 * memory (1.7), is claimed too where the function has it: its pages are
 * mapped to user space as well (qhca_dm.c).
 */
static int qhca_map_bars(struct pci_dev *pdev, struct qhca_pci *qpci)
{
	int err;

	if (!(pci_resource_flags(pdev, QHCA_REG_BAR) & IORESOURCE_MEM) ||
	    pci_resource_len(pdev, QHCA_REG_BAR) < QHCA_REG_END ||
	    !(pci_resource_flags(pdev, QHCA_DB_BAR) & IORESOURCE_MEM)) {
		dev_err(&pdev->dev, "unexpected BAR layout\n");
		return -ENODEV;
	}

	qpci->regs = pcim_iomap_region(pdev, QHCA_REG_BAR, DRV_MODULE_NAME);
	if (IS_ERR(qpci->regs))
		return PTR_ERR(qpci->regs);

	err = pcim_request_region(pdev, QHCA_DB_BAR, DRV_MODULE_NAME);
	if (err)
		return err;
	qpci->db_bar_start = pci_resource_start(pdev, QHCA_DB_BAR);
	qpci->db_bar_len = pci_resource_len(pdev, QHCA_DB_BAR);

	if ((pci_resource_flags(pdev, QHCA_DM_BAR) & IORESOURCE_MEM) &&
	    pci_resource_len(pdev, QHCA_DM_BAR)) {
		err = pcim_request_region(pdev, QHCA_DM_BAR, DRV_MODULE_NAME);
		if (err)
			return err;
		qpci->dm_bar_start = pci_resource_start(pdev, QHCA_DM_BAR);
		qpci->dm_bar_len = pci_resource_len(pdev, QHCA_DM_BAR);
	}
	return 0;
}

/* What this driver relies on beyond the register interface itself. */
static int qhca_check_limits(struct qhca_dev *dev)
{
	struct device *d = &dev->pdev->dev;
	u32 vectors;

	dev->db_pages = qhca_readl(dev->regs, QHCA_REG_DB_PAGES);
	if (!dev->db_pages ||
	    (u64)dev->db_pages * QHCA_DB_PAGE_SIZE > dev->db_bar_len) {
		dev_err(d, "%u doorbell pages do not fit BAR %d\n",
			dev->db_pages, QHCA_DB_BAR);
		return -ENODEV;
	}

	vectors = qhca_readl(dev->regs, QHCA_REG_MSIX_VECTORS);
	if (vectors < QHCA_MIN_VECS) {
		dev_err(d, "%u MSI-X vectors, need %d\n", vectors,
			QHCA_MIN_VECS);
		return -ENODEV;
	}
	return 0;
}

/*
 * The admin and async vectors, then one completion vector per CPU as far
 * as the device has them; the PCI core spreads those over the CPUs.
 */
static int qhca_alloc_vectors(struct qhca_dev *dev)
{
	struct irq_affinity affd = { .pre_vectors = QHCA_VEC_COMP_BASE };
	u32 max = qhca_readl(dev->regs, QHCA_REG_MSIX_VECTORS);

	max = min(max, QHCA_VEC_COMP_BASE + num_online_cpus());
	return pci_alloc_irq_vectors_affinity(dev->pdev, QHCA_MIN_VECS, max,
					      PCI_IRQ_MSIX | PCI_IRQ_AFFINITY,
					      &affd);
}

/* Completion EQs: one per completion vector, within the device's EQs. */
static u32 qhca_num_ceqs(struct qhca_dev *dev, int vectors)
{
	u32 max_eq = le32_to_cpu(dev->attr.max_eq);
	u32 n = vectors - QHCA_VEC_COMP_BASE;

	/* The async EQ takes one of max_eq. */
	return max_eq > 1 ? min(n, max_eq - 1) : 0;
}

/*
 * The attributes carry one port and one P_Key; one GID on an IB port, a
 * table that SET_GID fills on an Ethernet port (1.5).
 */
static int qhca_check_attrs(struct qhca_dev *dev)
{
	u16 gids = qhca_is_eth(dev) ? QHCA_ROCE_GID_TBL_LEN : 1;

	if (dev->attr.num_ports != 1 ||
	    le16_to_cpu(dev->port.gid_tbl_len) != gids ||
	    le16_to_cpu(dev->port.pkey_tbl_len) != 1) {
		dev_err(&dev->pdev->dev,
			"unsupported: %u ports, %u GIDs, %u P_Keys\n",
			dev->attr.num_ports, le16_to_cpu(dev->port.gid_tbl_len),
			le16_to_cpu(dev->port.pkey_tbl_len));
		return -ENODEV;
	}
	return 0;
}

static int qhca_setup_admin(struct qhca_dev *dev)
{
	struct pci_dev *pdev = dev->pdev;
	int err;

	err = qhca_admin_init(&dev->aq, &pdev->dev, dev->regs, QHCA_VEC_ADMIN);
	if (err)
		return err;

	dev->admin_irq = pci_irq_vector(pdev, QHCA_VEC_ADMIN);
	err = request_irq(dev->admin_irq, qhca_admin_irq, 0, "qhca-admin",
			  &dev->aq);
	if (err) {
		qhca_admin_destroy(&dev->aq);
		return err;
	}
	return 0;
}

/* Only after a reset: the device no longer touches the rings. */
static void qhca_teardown_admin(struct qhca_dev *dev)
{
	free_irq(dev->admin_irq, &dev->aq);
	qhca_admin_destroy(&dev->aq);
}

/*
 * Bring the device up on the mapped BARs: reset, admin queue, enable,
 * event queues and a new ib_device.  At probe, and after a reset.
 */
int qhca_dev_up(struct pci_dev *pdev, struct qhca_pci *qpci)
{
	struct qhca_dev *dev;
	int vectors, err;

	pci_set_master(pdev);
	dev = ib_alloc_device(qhca_dev, ibdev);
	if (!dev)
		return -ENOMEM;
	dev->pdev = pdev;
	dev->regs = qpci->regs;
	dev->db_bar_start = qpci->db_bar_start;
	dev->db_bar_len = qpci->db_bar_len;
	xa_init_flags(&dev->cqs, XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&dev->qps, XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&dev->srqs, XA_FLAGS_LOCK_IRQ);
	qhca_kuar_init(dev);

	err = qhca_hw_check_identity(dev);
	if (err)
		goto err_dealloc;
	err = qhca_hw_reset(dev);
	if (err)
		goto err_dealloc;
	err = qhca_check_limits(dev);
	if (err)
		goto err_dealloc;

	vectors = qhca_alloc_vectors(dev);
	if (vectors < 0) {
		err = vectors;
		goto err_dealloc;
	}

	err = qhca_setup_admin(dev);
	if (err)
		goto err_free_vectors;
	err = qhca_hw_enable(dev);
	if (err)
		goto err_reset;

	err = qhca_admin_query_device(dev, &dev->attr);
	if (err)
		goto err_reset;
	err = qhca_admin_query_port(dev, 1, &dev->port);
	if (err)
		goto err_reset;
	err = qhca_check_attrs(dev);
	if (err)
		goto err_reset;
	err = qhca_dm_init(dev, qpci->dm_bar_start, qpci->dm_bar_len);
	if (err)
		goto err_reset;

	if (!qhca_num_ceqs(dev, vectors)) {
		dev_err(&pdev->dev, "no event queue for completions\n");
		err = -ENODEV;
		goto err_reset;
	}
	err = qhca_eqs_create(dev, qhca_num_ceqs(dev, vectors));
	if (err)
		goto err_reset;
	if (qhca_is_eth(dev)) {
		err = qhca_eth_up(dev);
		if (err)
			goto err_stop_eqs;
	}
	err = qhca_ib_register(dev);
	if (err)
		goto err_eth_down;
	qpci->dev = dev;
	qhca_recovery_arm(qpci);
	return 0;

err_eth_down:
	if (qhca_is_eth(dev))
		qhca_eth_down(dev);
err_stop_eqs:
	qhca_eqs_stop(dev);
err_reset:
	qhca_hw_reset(dev);
	qhca_dm_cleanup(dev);
	qhca_eqs_free(dev);
	qhca_teardown_admin(dev);
err_free_vectors:
	pci_free_irq_vectors(pdev);
err_dealloc:
	ib_dealloc_device(&dev->ibdev);
	dev_err(&pdev->dev, "bringing the device up failed: %d\n", err);
	return err;
}

/*
 * Unregistering disassociates the user contexts (IBV_EVENT_DEVICE_FATAL,
 * mappings zapped) and destroys every object while the device still
 * answers; only then is it reset.  A device that stopped answering was
 * reset already: every command fails at once and the memory is freed.
 */
void qhca_dev_down(struct qhca_pci *qpci)
{
	struct qhca_dev *dev = qpci->dev;
	struct pci_dev *pdev;

	qhca_recovery_disarm(qpci);
	if (!dev)
		return;
	pdev = dev->pdev;
	qhca_ib_unregister(dev);
	if (qhca_is_eth(dev))
		qhca_eth_down(dev);
	qhca_eqs_stop(dev);
	qhca_hw_reset(dev);
	qhca_dm_cleanup(dev);
	qhca_eqs_free(dev);
	qhca_teardown_admin(dev);
	pci_free_irq_vectors(pdev);
	ib_dealloc_device(&dev->ibdev);
	qpci->dev = NULL;
}

static int qhca_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct qhca_pci *qpci;
	int err;

	err = pcim_enable_device(pdev);
	if (err)
		return err;
	err = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (err)
		return err;
	qpci = devm_kzalloc(&pdev->dev, sizeof(*qpci), GFP_KERNEL);
	if (!qpci)
		return -ENOMEM;
	err = qhca_map_bars(pdev, qpci);
	if (err)
		return err;
	qhca_recovery_init(qpci, pdev);
	pci_set_drvdata(pdev, qpci);
	err = qhca_dev_up(pdev, qpci);
	/* The NIC may have come up before what failed. */
	if (err)
		qhca_eth_remove(qpci);
	return err;
}

static void qhca_remove(struct pci_dev *pdev)
{
	struct qhca_pci *qpci = pci_get_drvdata(pdev);

	/* A recovery still to come would bring the device back. */
	qhca_recovery_stop(qpci);
	qhca_dev_down(qpci);
	/* The net_device outlives the devices of the function's resets. */
	qhca_eth_remove(qpci);
}

/* Stop all DMA before a kexec'd kernel reuses the memory. */
static void qhca_shutdown(struct pci_dev *pdev)
{
	struct qhca_pci *qpci = pci_get_drvdata(pdev);

	qhca_recovery_stop(qpci);
	if (qpci->dev)
		qhca_hw_reset(qpci->dev);
}

static struct pci_driver qhca_pci_driver = {
	.name = DRV_MODULE_NAME,
	.id_table = qhca_pci_tbl,
	.probe = qhca_probe,
	.remove = qhca_remove,
	.shutdown = qhca_shutdown,
	.err_handler = &qhca_err_handlers,
};

/* The debugfs directory first: each device adds itself to it. */
static int __init qhca_module_init(void)
{
	int err;

	qhca_debugfs_init();
	err = pci_register_driver(&qhca_pci_driver);
	if (err)
		qhca_debugfs_exit();
	return err;
}

static void __exit qhca_module_exit(void)
{
	pci_unregister_driver(&qhca_pci_driver);
	qhca_debugfs_exit();
}

module_init(qhca_module_init);
module_exit(qhca_module_exit);
