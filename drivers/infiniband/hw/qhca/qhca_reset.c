// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * A reset of the PCI function while the driver is bound (the device's
 * sysfs "reset" file, or anything else that calls pci_reset_function()).
 * The reset wipes every object in the device, so the driver cannot carry
 * them across it: before the reset it unregisters the ib_device, which
 * gives every user context IBV_EVENT_DEVICE_FATAL, zaps its mappings and
 * destroys its objects while the device can still confirm that; after the
 * reset it brings the device up as a new ib_device, as probe does.  If
 * that fails the function stays bound with no device until it is unbound.
 */

#include "qhca.h"
#include "qhca_pci.h"

static void qhca_reset_prepare(struct pci_dev *pdev)
{
	struct qhca_pci *qpci = pci_get_drvdata(pdev);

	if (!qpci->dev)
		return;
	dev_info(&pdev->dev, "function reset: taking the device down\n");
	qhca_dev_down(qpci);
}

static void qhca_reset_done(struct pci_dev *pdev)
{
	struct qhca_pci *qpci = pci_get_drvdata(pdev);
	int err;

	if (qpci->dev)
		return;
	err = qhca_dev_up(pdev, qpci);
	if (err)
		dev_err(&pdev->dev, "device down after the reset: %d\n", err);
	else
		dev_info(&pdev->dev, "function reset: device up again\n");
}

const struct pci_error_handlers qhca_err_handlers = {
	.reset_prepare = qhca_reset_prepare,
	.reset_done = qhca_reset_done,
};
