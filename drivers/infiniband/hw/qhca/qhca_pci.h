/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The PCI function and the device on it.  The BARs stay mapped for as long
 * as the driver is bound; the device (its ib_device, queues and vectors)
 * can be taken down and brought up again around a reset of the function.
 */
#ifndef QHCA_PCI_H
#define QHCA_PCI_H

#include <linux/pci.h>

struct qhca_dev;

/* The PCI driver data. */
struct qhca_pci {
	void __iomem *regs;
	phys_addr_t db_bar_start;
	resource_size_t db_bar_len;
	/* NULL while the device is down (a reset, or a failed restart). */
	struct qhca_dev *dev;
};

/* qhca_main.c: bring the device up on mapped BARs, or take it down. */
int qhca_dev_up(struct pci_dev *pdev, struct qhca_pci *qpci);
void qhca_dev_down(struct qhca_pci *qpci);

/* qhca_reset.c: a reset of the function (sysfs "reset", FLR). */
extern const struct pci_error_handlers qhca_err_handlers;

#endif /* QHCA_PCI_H */
