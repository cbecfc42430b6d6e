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
	QHCA_OBJ_CQS,
	QHCA_OBJ_QPS,
	QHCA_OBJ_MRS,
	QHCA_OBJ_SRQS,
};

static ssize_t qhca_hw_object_show(struct device *device, char *buf,
				   enum qhca_hw_object obj)
{
	struct qhca_dev *dev =
		rdma_device_to_drv_device(device, struct qhca_dev, ibdev);
	struct qhca_stats stats;
	__le32 count;
	int err;

	err = qhca_admin_query_stats(dev, &stats);
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
		count = stats.eqs;
		break;
	case QHCA_OBJ_CQS:
		count = stats.cqs;
		break;
	case QHCA_OBJ_QPS:
		count = stats.qps;
		break;
	case QHCA_OBJ_SRQS:
		count = stats.srqs;
		break;
	case QHCA_OBJ_MRS:
	default:
		count = stats.mrs;
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

static ssize_t cqs_show(struct device *device, struct device_attribute *attr,
			char *buf)
{
	return qhca_hw_object_show(device, buf, QHCA_OBJ_CQS);
}
static DEVICE_ATTR_RO(cqs);

static ssize_t qps_show(struct device *device, struct device_attribute *attr,
			char *buf)
{
	return qhca_hw_object_show(device, buf, QHCA_OBJ_QPS);
}
static DEVICE_ATTR_RO(qps);

static ssize_t mrs_show(struct device *device, struct device_attribute *attr,
			char *buf)
{
	return qhca_hw_object_show(device, buf, QHCA_OBJ_MRS);
}
static DEVICE_ATTR_RO(mrs);

static ssize_t srqs_show(struct device *device, struct device_attribute *attr,
			 char *buf)
{
	return qhca_hw_object_show(device, buf, QHCA_OBJ_SRQS);
}
static DEVICE_ATTR_RO(srqs);

static struct attribute *qhca_hw_objects_attrs[] = {
	&dev_attr_uars.attr,
	&dev_attr_pds.attr,
	&dev_attr_eqs.attr,
	&dev_attr_cqs.attr,
	&dev_attr_qps.attr,
	&dev_attr_mrs.attr,
	&dev_attr_srqs.attr,
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
