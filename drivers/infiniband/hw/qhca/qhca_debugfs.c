// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Fault injection from the guest: /sys/kernel/debug/qhca/<ibdev>/inject,
 * root only.  Each write is one line naming one fault, which becomes one
 * INJECT_FAULT command (interface 1.3, Documentation/hw/qhca-faults.rst):
 *
 *   link_down | link_up | qp_fatal <qpn> | srq_err <srqn> | cq_err <cqn> |
 *   drop <n> | aq_hang
 *
 * The numbers are decimal: the QP numbers verbs report, the device's SRQ
 * and CQ numbers that "rdma res show cq -dd" lists as drv_cqn (and srq as
 * drv_srqn, qhca_restrack.c).  The write returns
 * its length, -EINVAL for a line it cannot parse, -EOPNOTSUPP if the
 * device lacks FAULT_INJECT, or the command's error as every other command
 * maps it (-EINVAL for BAD_HANDLE, -EBUSY for BAD_STATE, -EIO once the
 * device stopped answering, which is what aq_hang leads to).
 */

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "qhca.h"

/* "qp_fatal 4294967295\n" and then some: a longer line is no fault. */
#define QHCA_INJECT_LINE_MAX	64

struct qhca_fault_name {
	const char *name;
	u16 type;
	bool has_arg;			/* a number follows; else handle 0 */
};

static const struct qhca_fault_name qhca_fault_names[] = {
	{ "link_down",	QHCA_FAULT_LINK_DOWN,	false },
	{ "link_up",	QHCA_FAULT_LINK_UP,	false },
	{ "qp_fatal",	QHCA_FAULT_QP_FATAL,	true },
	{ "srq_err",	QHCA_FAULT_SRQ_ERR,	true },
	{ "cq_err",	QHCA_FAULT_CQ_ERR,	true },
	{ "drop",	QHCA_FAULT_DROP,	true },
	{ "aq_hang",	QHCA_FAULT_AQ_HANG,	false },
};

static struct dentry *qhca_debugfs_root;

/*
 * One line: a fault's name and, if it takes one, a decimal number,
 * separated by blanks; blanks around them and one final newline are fine.
 */
static int qhca_inject_parse(char *line, u16 *type, u32 *handle)
{
	const struct qhca_fault_name *f = NULL;
	char *name, *arg;
	size_t i;

	line = strim(line);
	name = strsep(&line, " \t");
	arg = line ? skip_spaces(line) : NULL;
	if (arg && !*arg)
		arg = NULL;

	for (i = 0; i < ARRAY_SIZE(qhca_fault_names); i++) {
		if (!strcmp(name, qhca_fault_names[i].name)) {
			f = &qhca_fault_names[i];
			break;
		}
	}
	if (!f || f->has_arg != !!arg)
		return -EINVAL;

	*type = f->type;
	*handle = 0;
	if (arg && kstrtou32(arg, 10, handle))
		return -EINVAL;
	if (f->type == QHCA_FAULT_DROP && *handle > QHCA_FAULT_MAX_DROP)
		return -EINVAL;
	return 0;
}

static ssize_t qhca_inject_write(struct file *file, const char __user *ubuf,
				 size_t count, loff_t *ppos)
{
	struct qhca_dev *dev = file->private_data;
	char line[QHCA_INJECT_LINE_MAX];
	u32 handle;
	u16 type;
	int err;

	/* Each write is a line of its own, whatever the file offset. */
	if (!count || count >= sizeof(line))
		return -EINVAL;
	if (copy_from_user(line, ubuf, count))
		return -EFAULT;
	line[count] = '\0';
	/* A NUL would hide what follows it. */
	if (strlen(line) != count)
		return -EINVAL;

	err = qhca_inject_parse(line, &type, &handle);
	if (err)
		return err;
	if (!(le32_to_cpu(dev->attr.device_cap_flags) &
	      QHCA_DEV_CAP_FAULT_INJECT))
		return -EOPNOTSUPP;

	ibdev_info(&dev->ibdev, "injecting fault %u (handle %u)\n", type,
		   handle);
	err = qhca_admin_inject_fault(dev, type, handle);
	return err ? err : count;
}

static const struct file_operations qhca_inject_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = qhca_inject_write,
	.llseek = noop_llseek,
};

/* Module init: the qhca/ directory the devices add themselves to. */
void qhca_debugfs_init(void)
{
	qhca_debugfs_root = debugfs_create_dir(DRV_MODULE_NAME, NULL);
}

void qhca_debugfs_exit(void)
{
	debugfs_remove_recursive(qhca_debugfs_root);
	qhca_debugfs_root = NULL;
}

/*
 * After ib_register_device(), which names the device.  debugfs failures
 * are not fatal: the device works without the file.
 */
void qhca_debugfs_add_dev(struct qhca_dev *dev)
{
	dev->debugfs = debugfs_create_dir(dev_name(&dev->ibdev.dev),
					  qhca_debugfs_root);
	debugfs_create_file("inject", 0200, dev->debugfs, dev,
			    &qhca_inject_fops);
}

/*
 * Before the device is unregistered.  debugfs waits for the writes under
 * way, so none uses @dev once this returns; a write stuck on a hung admin
 * queue ends with the command's timeout.
 */
void qhca_debugfs_remove_dev(struct qhca_dev *dev)
{
	debugfs_remove_recursive(dev->debugfs);
	dev->debugfs = NULL;
}
