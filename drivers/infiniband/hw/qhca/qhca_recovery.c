// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Recovery from a device that stopped answering (interface 1.3,
 * Documentation/hw/qhca-faults.rst, "The driver").
 *
 * When an admin command times out the admin queue declares the device
 * dead: it resets the device at once, so that it stops all DMA, and fails
 * every command from then on with -EIO.  Here the users hear of it
 * (IB_EVENT_DEVICE_FATAL) and a work item resets the PCI function.  The
 * reset handlers (qhca_reset.c) take the dead device down, which takes no
 * timeouts now and frees all host memory since the device no longer uses
 * any, and bring up a new device with a new, live admin queue.
 *
 * Locking.  Remove and shutdown hold the device lock while they cancel the
 * work, so the work only ever trylocks it (pci_try_reset_function()) and
 * tries again later unless the driver is unbinding.  Only the first
 * timeout of a device that is up queues the work: a device being brought
 * up or taken down (probe, remove, a reset, this recovery) is disarmed, so
 * a timeout there never queues a second reset.
 */

#include <linux/device.h>
#include <linux/workqueue.h>

#include "qhca.h"
#include "qhca_pci.h"

/* How soon to try again while something else holds the device lock. */
#define QHCA_RECOVER_RETRY_MS	100

/**
 * qhca_destroyed - whether the device is done with a destroyed object
 * @dev: the device
 * @err: what the destroy command returned
 * @cmd: the command's name, for the log
 * @handle: the object's number, for the log
 *
 * The object's memory may be freed if the device confirmed the destroy,
 * or if it stopped answering and its reset completed: then it uses no
 * memory at all.  Otherwise the memory must stay, as the device may still
 * write it.
 */
bool qhca_destroyed(struct qhca_dev *dev, int err, const char *cmd,
		    u32 handle)
{
	if (!err)
		return true;
	if (READ_ONCE(dev->aq.dead)) {
		/* Every command fails now: nothing worth a warning each. */
		ibdev_dbg(&dev->ibdev, "%s %u: device dead\n", cmd, handle);
		return READ_ONCE(dev->aq.quiesced);
	}
	ibdev_warn(&dev->ibdev, "%s %u failed: %d\n", cmd, handle, err);
	return false;
}

static void qhca_recover_retry(struct qhca_pci *qpci)
{
	spin_lock(&qpci->recover_lock);
	if (!qpci->removing && !qpci->recover_armed)
		queue_delayed_work(system_unbound_wq, &qpci->recover_work,
				   msecs_to_jiffies(QHCA_RECOVER_RETRY_MS));
	spin_unlock(&qpci->recover_lock);
}

/*
 * With no reset method for the function (its sysfs reset_method emptied):
 * the device's own reset, which bringing it down and up does, clears a
 * hung admin queue too.
 */
static int qhca_recover_in_place(struct qhca_pci *qpci)
{
	struct device *d = &qpci->pdev->dev;
	int err;

	if (!device_trylock(d))
		return -EAGAIN;
	dev_info(d, "recovery: no reset method, resetting the device alone\n");
	qhca_dev_down(qpci);
	err = qhca_dev_up(qpci->pdev, qpci);
	device_unlock(d);
	return err;
}

static void qhca_recover_work(struct work_struct *work)
{
	struct qhca_pci *qpci = container_of(to_delayed_work(work),
					     struct qhca_pci, recover_work);
	struct pci_dev *pdev = qpci->pdev;
	bool done;
	int err;

	spin_lock(&qpci->recover_lock);
	/* Unbinding, or another reset brought a new device up meanwhile. */
	done = qpci->removing || qpci->recover_armed;
	spin_unlock(&qpci->recover_lock);
	if (done)
		return;

	err = pci_try_reset_function(pdev);
	if (err == -ENOTTY)
		err = qhca_recover_in_place(qpci);
	if (err == -EAGAIN) {
		qhca_recover_retry(qpci);
		return;
	}
	/* After a failed reset, reset_done() still tried to bring one up. */
	if (err)
		dev_err(&pdev->dev, "recovery failed: %d\n", err);
	else
		dev_info(&pdev->dev, "recovery: done\n");
}

/**
 * qhca_dev_fatal - the device stopped answering
 * @dev: the device, already reset and with a dead admin queue
 *
 * Reports IB_EVENT_DEVICE_FATAL to the device's users and, for a device
 * that is up, queues the reset of the function.  Process context.
 */
void qhca_dev_fatal(struct qhca_dev *dev)
{
	struct qhca_pci *qpci = pci_get_drvdata(dev->pdev);
	struct ib_event event = {
		.device = &dev->ibdev,
		.event = IB_EVENT_DEVICE_FATAL,
	};
	bool queued = false;

	/* Kernel users and, through uverbs, every user context. */
	if (smp_load_acquire(&dev->registered))
		ib_dispatch_event(&event);

	spin_lock(&qpci->recover_lock);
	if (qpci->recover_armed && !qpci->removing) {
		qpci->recover_armed = false;
		queued = queue_delayed_work(system_unbound_wq,
					    &qpci->recover_work, 0);
	}
	spin_unlock(&qpci->recover_lock);

	dev_err(&dev->pdev->dev, "device stopped answering%s\n",
		queued ? ": resetting it" : "");
}

void qhca_recovery_init(struct qhca_pci *qpci, struct pci_dev *pdev)
{
	qpci->pdev = pdev;
	spin_lock_init(&qpci->recover_lock);
	INIT_DELAYED_WORK(&qpci->recover_work, qhca_recover_work);
}

/* A device is up: its first timeout from now on resets the function. */
void qhca_recovery_arm(struct qhca_pci *qpci)
{
	spin_lock(&qpci->recover_lock);
	qpci->recover_armed = true;
	spin_unlock(&qpci->recover_lock);
}

/* The device is being taken down: whatever happens, no recovery. */
void qhca_recovery_disarm(struct qhca_pci *qpci)
{
	spin_lock(&qpci->recover_lock);
	qpci->recover_armed = false;
	spin_unlock(&qpci->recover_lock);
}

/*
 * The driver unbinds (remove, shutdown): no more recovery.  The caller
 * holds the device lock, which the work only trylocks, so waiting for a
 * running work cannot deadlock.
 */
void qhca_recovery_stop(struct qhca_pci *qpci)
{
	spin_lock(&qpci->recover_lock);
	qpci->removing = true;
	qpci->recover_armed = false;
	spin_unlock(&qpci->recover_lock);
	cancel_delayed_work_sync(&qpci->recover_work);
}
