/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The PCI function and the device on it.  The BARs stay mapped for as long
 * as the driver is bound; the device (its ib_device, queues and vectors)
 * can be taken down and brought up again around a reset of the function.
 */
#ifndef QHCA_PCI_H
#define QHCA_PCI_H

#include <linux/pci.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

struct qhca_dev;
struct qhca_eth;

/* The PCI driver data. */
struct qhca_pci {
	struct pci_dev *pdev;
	void __iomem *regs;
	phys_addr_t db_bar_start;
	resource_size_t db_bar_len;
	/* BAR 4, device memory (1.7): 0 if the function has none. */
	phys_addr_t dm_bar_start;
	resource_size_t dm_bar_len;
	/* NULL while the device is down (a reset, or a failed restart). */
	struct qhca_dev *dev;
	/*
	 * An Ethernet port's NIC (qhca_netdev.c): its net_device outlives
	 * the devices, so that the interface keeps its addresses.
	 */
	struct qhca_eth *eth;

	/*
	 * Recovery from a device that stopped answering: a reset of the
	 * function, from a work item since the timeout can strike anywhere.
	 */
	struct delayed_work recover_work;
	spinlock_t recover_lock;	/* the two flags below */
	/* A device is up: its first timeout queues @recover_work. */
	bool recover_armed;
	/* The driver is unbinding: no more recovery. */
	bool removing;
};

/* qhca_main.c: bring the device up on mapped BARs, or take it down. */
int qhca_dev_up(struct pci_dev *pdev, struct qhca_pci *qpci);
void qhca_dev_down(struct qhca_pci *qpci);

/* qhca_reset.c: a reset of the function (sysfs "reset", FLR). */
extern const struct pci_error_handlers qhca_err_handlers;

/* qhca_recovery.c: the reset of a device that stopped answering. */
void qhca_recovery_init(struct qhca_pci *qpci, struct pci_dev *pdev);
void qhca_recovery_arm(struct qhca_pci *qpci);
void qhca_recovery_disarm(struct qhca_pci *qpci);
void qhca_recovery_stop(struct qhca_pci *qpci);

#endif /* QHCA_PCI_H */
