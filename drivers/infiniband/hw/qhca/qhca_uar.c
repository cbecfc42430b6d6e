// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The kernel's doorbell page.  Kernel consumers' QPs and CQs ring their
 * doorbells through one UAR of the driver's own.  It is allocated with the
 * first such object and freed with the last, so that a device nobody uses
 * holds no UAR (what the load tests check).
 */

#include <linux/io.h>

#include "qhca.h"

void qhca_kuar_init(struct qhca_dev *dev)
{
	mutex_init(&dev->kuar.lock);
}

/* Take a reference on the kernel UAR, allocating it if needed. */
int qhca_kuar_get(struct qhca_dev *dev)
{
	struct qhca_kuar *kuar = &dev->kuar;
	void __iomem *db;
	u32 index;
	int err;

	mutex_lock(&kuar->lock);
	if (kuar->users) {
		kuar->users++;
		mutex_unlock(&kuar->lock);
		return 0;
	}

	err = qhca_admin_alloc_uar(dev, &index);
	if (err)
		goto out_unlock;
	if (index >= dev->db_pages) {
		ibdev_err(&dev->ibdev, "device returned UAR %u of %u\n", index,
			  dev->db_pages);
		err = -EIO;
		goto err_dealloc;
	}
	/* Doorbells are posted writes to device memory: uncached. */
	db = ioremap(dev->db_bar_start + (phys_addr_t)index * QHCA_DB_PAGE_SIZE,
		     QHCA_DB_PAGE_SIZE);
	if (!db) {
		err = -ENOMEM;
		goto err_dealloc;
	}
	kuar->index = index;
	kuar->db = db;
	kuar->users = 1;
	mutex_unlock(&kuar->lock);
	return 0;

err_dealloc:
	qhca_admin_dealloc_uar(dev, index);
out_unlock:
	mutex_unlock(&kuar->lock);
	return err;
}

/* Drop a reference; the last one frees the UAR. */
void qhca_kuar_put(struct qhca_dev *dev)
{
	struct qhca_kuar *kuar = &dev->kuar;
	int err;

	mutex_lock(&kuar->lock);
	if (WARN_ON(!kuar->users) || --kuar->users)
		goto out_unlock;

	iounmap(kuar->db);
	kuar->db = NULL;
	err = qhca_admin_dealloc_uar(dev, kuar->index);
	qhca_destroyed(dev, err, "DEALLOC_UAR", kuar->index);
out_unlock:
	mutex_unlock(&kuar->lock);
}
