// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * qhca hw_objects: the live object counts of the device, read through
 * QUERY_STATS, so tests can check that nothing is left behind.
 */

#include <linux/sysfs.h>

#include "qhca.h"

enum qhca_hw_object {
	QHCA_OBJ_UARS,
	QHCA_OBJ_PDS,
	QHCA_OBJ_EQS,
};

static ssize_t qhca_hw_object_show(struct device *device, char *buf,
				   enum qhca_hw_object obj)
{
	struct qhca_dev *dev =
		rdma_device_to_drv_device(device, struct qhca_dev, ibdev);
	struct qhca_stats stats;
	__le32 count;
	int err;

	err = qhca_cmd_query_stats(dev, &stats);
	if (err)
		return err;

	switch (obj) {
	case QHCA_OBJ_UARS:
		count = stats.uars;
		break;
	case QHCA_OBJ_PDS:
		count = stats.pds;
		break;
	case QHCA_OBJ_EQS:
	default:
		count = stats.eqs;
		break;
	}
	return sysfs_emit(buf, "%u\n", le32_to_cpu(count));
}

static ssize_t uars_show(struct device *device, struct device_attribute *attr,
			 char *buf)
{
	return qhca_hw_object_show(device, buf, QHCA_OBJ_UARS);
}
static DEVICE_ATTR_RO(uars);

static ssize_t pds_show(struct device *device, struct device_attribute *attr,
			char *buf)
{
	return qhca_hw_object_show(device, buf, QHCA_OBJ_PDS);
}
static DEVICE_ATTR_RO(pds);

static ssize_t eqs_show(struct device *device, struct device_attribute *attr,
			char *buf)
{
	return qhca_hw_object_show(device, buf, QHCA_OBJ_EQS);
}
static DEVICE_ATTR_RO(eqs);

static struct attribute *qhca_hw_objects_attrs[] = {
	&dev_attr_uars.attr,
	&dev_attr_pds.attr,
	&dev_attr_eqs.attr,
	NULL,
};

/*
 * ib_core recommends netlink for new device parameters; these counters
 * are a test aid, and a file per count is what shell tests read best.
 */
const struct attribute_group qhca_hw_objects_group = {
	.name = "hw_objects",
	.attrs = qhca_hw_objects_attrs,
};
