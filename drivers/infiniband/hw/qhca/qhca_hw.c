// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * qhca register level: identity check, reset and the enable handshake.
 */

#include <linux/bitfield.h>
#include <linux/iopoll.h>

#include "qhca.h"

/* The model completes both at once; real hardware would take longer. */
#define QHCA_RESET_TIMEOUT_US	(1 * USEC_PER_SEC)
#define QHCA_ENABLE_TIMEOUT_US	(5 * USEC_PER_SEC)
#define QHCA_POLL_US		100

int qhca_hw_check_identity(struct qhca_dev *dev)
{
	struct device *d = &dev->pdev->dev;
	u32 magic, version;

	magic = qhca_readl(dev->regs, QHCA_REG_MAGIC);
	if (magic != QHCA_MAGIC) {
		dev_err(d, "bad magic %#x\n", magic);
		return -ENODEV;
	}

	/* Minor versions only add; a new major version is another device. */
	version = qhca_readl(dev->regs, QHCA_REG_VERSION);
	if (FIELD_GET(QHCA_VERSION_MAJOR, version) !=
	    FIELD_GET(QHCA_VERSION_MAJOR, QHCA_VERSION_1_0)) {
		dev_err(d, "unsupported interface version %#x\n", version);
		return -ENODEV;
	}
	dev->version = version;
	return 0;
}

int qhca_hw_reset(struct qhca_dev *dev)
{
	u32 ctrl;
	int err;

	qhca_writel(dev->regs, QHCA_REG_CTRL, QHCA_CTRL_RESET);
	err = readl_poll_timeout(dev->regs + QHCA_REG_CTRL, ctrl,
				 !(ctrl & QHCA_CTRL_RESET), QHCA_POLL_US,
				 QHCA_RESET_TIMEOUT_US);
	if (err)
		dev_err(&dev->pdev->dev, "reset timed out (CTRL %#x)\n", ctrl);
	return err;
}

/* The admin queue registers must be programmed before this. */
int qhca_hw_enable(struct qhca_dev *dev)
{
	struct device *d = &dev->pdev->dev;
	u32 status;
	int err;

	qhca_writel(dev->regs, QHCA_REG_CTRL, QHCA_CTRL_ENABLE);
	err = readl_poll_timeout(dev->regs + QHCA_REG_STATUS, status,
				 status & (QHCA_STATUS_READY | QHCA_STATUS_FATAL),
				 QHCA_POLL_US, QHCA_ENABLE_TIMEOUT_US);
	if (err) {
		dev_err(d, "enable timed out (STATUS %#x)\n", status);
		return err;
	}
	if (status & QHCA_STATUS_FATAL) {
		dev_err(d, "enable failed: STATUS %#x ERROR %u\n", status,
			qhca_readl(dev->regs, QHCA_REG_ERROR));
		return -EIO;
	}
	return 0;
}
