// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * qhca hw_objects: the live object counts of the device, read through
 * QUERY_STATS, and of the address handles, which only the driver knows
 * of, so tests can check that nothing is left behind.
 */

#include <linux/sysfs.h>

#include "qhca.h"

/* A __le32 count of struct qhca_stats, and the interface version with it. */
struct qhca_hw_object_attr {
	struct device_attribute attr;
	size_t offset;
	u32 version;
};

static ssize_t qhca_hw_object_show(struct device *device,
				   struct device_attribute *attr, char *buf)
{
	const struct qhca_hw_object_attr *obj =
		container_of(attr, struct qhca_hw_object_attr, attr);
	struct qhca_dev *dev =
		rdma_device_to_drv_device(device, struct qhca_dev, ibdev);
	struct qhca_stats stats;
	__le32 count;
	int err;

	err = qhca_admin_query_stats(dev, &stats);
	if (err)
		return err;
	memcpy(&count, (u8 *)&stats + obj->offset, sizeof(count));
	return sysfs_emit(buf, "%u\n", le32_to_cpu(count));
}

#define QHCA_HW_OBJECT(_name, _version)					\
	static struct qhca_hw_object_attr qhca_hw_object_##_name = {	\
		.attr.attr = { .name = __stringify(_name), .mode = 0444 }, \
		.attr.show = qhca_hw_object_show,			\
		.offset = offsetof(struct qhca_stats, _name),		\
		.version = _version,					\
	}

QHCA_HW_OBJECT(uars, QHCA_VERSION_1_0);
QHCA_HW_OBJECT(pds, QHCA_VERSION_1_0);
QHCA_HW_OBJECT(eqs, QHCA_VERSION_1_0);
QHCA_HW_OBJECT(cqs, QHCA_VERSION_1_0);
QHCA_HW_OBJECT(qps, QHCA_VERSION_1_0);
QHCA_HW_OBJECT(mrs, QHCA_VERSION_1_0);
QHCA_HW_OBJECT(srqs, QHCA_VERSION_1_0);
QHCA_HW_OBJECT(mws, QHCA_VERSION_1_4);
QHCA_HW_OBJECT(xrcds, QHCA_VERSION_1_4);
QHCA_HW_OBJECT(mcast_groups, QHCA_VERSION_1_4);

/*
 * The device has no AH object: the driver counts the AHs that reach it,
 * kernel consumers' and, on an Ethernet port, user space's too (libqhca
 * asks the kernel for their MAC).  On an IB port libqhca's AHs never do.
 */
static ssize_t ahs_show(struct device *device, struct device_attribute *attr,
			char *buf)
{
	struct qhca_dev *dev =
		rdma_device_to_drv_device(device, struct qhca_dev, ibdev);

	return sysfs_emit(buf, "%d\n", atomic_read(&dev->ahs));
}
static DEVICE_ATTR_RO(ahs);

/*
 * Nor does it count device memory: the driver hands out BAR 4's pages
 * (qhca_dm.c).  The pages of a freed DM still mapped by a process count
 * until it unmaps them.
 */
static ssize_t dm_pages_show(struct device *device,
			     struct device_attribute *attr, char *buf)
{
	struct qhca_dev *dev =
		rdma_device_to_drv_device(device, struct qhca_dev, ibdev);

	return sysfs_emit(buf, "%u\n", qhca_dm_used(dev));
}
static DEVICE_ATTR_RO(dm_pages);

static struct attribute *qhca_hw_objects_attrs[] = {
	&qhca_hw_object_uars.attr.attr,
	&qhca_hw_object_pds.attr.attr,
	&qhca_hw_object_eqs.attr.attr,
	&qhca_hw_object_cqs.attr.attr,
	&qhca_hw_object_qps.attr.attr,
	&qhca_hw_object_mrs.attr.attr,
	&qhca_hw_object_srqs.attr.attr,
	&qhca_hw_object_mws.attr.attr,
	&qhca_hw_object_xrcds.attr.attr,
	&qhca_hw_object_mcast_groups.attr.attr,
	&dev_attr_ahs.attr,
	&dev_attr_dm_pages.attr,
	NULL,
};

/*
 * A count the device's interface version does not have is not shown:
 * an older device writes only the part of struct qhca_stats it knows.
 */
static umode_t qhca_hw_objects_visible(struct kobject *kobj,
				       struct attribute *attr, int n)
{
	struct qhca_dev *dev = rdma_device_to_drv_device(kobj_to_dev(kobj),
							 struct qhca_dev,
							 ibdev);
	const struct qhca_hw_object_attr *obj;

	if (attr == &dev_attr_ahs.attr || attr == &dev_attr_dm_pages.attr)
		return attr->mode;
	obj = container_of(attr, struct qhca_hw_object_attr, attr.attr);
	return dev->version >= obj->version ? attr->mode : 0;
}

/*
 * ib_core recommends netlink for new device parameters; these counters
 * are a test aid, and a file per count is what shell tests read best.
 */
const struct attribute_group qhca_hw_objects_group = {
	.name = "hw_objects",
	.attrs = qhca_hw_objects_attrs,
	.is_visible = qhca_hw_objects_visible,
};
