// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * qhca memory windows (type 1 and 2B) and fast-registration MRs.
 *
 * A window is only allocated here: binding and invalidation are WQEs the
 * consumer posts (libqhca builds them), checked and run by the device.
 * A fast-registration MR owns a DMA page list that map_mr_sg fills and a
 * REG_MR WQE hands to the device, which copies it when the WQE runs.
 */

#include <linux/bitfield.h>
#include <linux/slab.h>
#include <rdma/ib_user_verbs.h>

#include "qhca.h"

static_assert(QHCA_ACCESS_MW_BIND == IB_ACCESS_MW_BIND);
static_assert(QHCA_MW_TYPE_1 == IB_MW_TYPE_1);
static_assert(QHCA_MW_TYPE_2 == IB_MW_TYPE_2);

static int qhca_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct qhca_dev *dev = to_qdev(ibmw->device);
	struct qhca_mw *mw = to_qmw(ibmw);
	u32 index;
	int err;

	/* No driver data is defined for this command in either direction. */
	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2)
		return -EINVAL;

	err = qhca_admin_alloc_mw(dev, to_qpd(ibmw->pd)->pdn, ibmw->type,
				  &index);
	if (err)
		return err;
	if (index > FIELD_MAX(QHCA_MKEY_MW_INDEX)) {
		ibdev_err(&dev->ibdev, "device returned MW index %u\n", index);
		qhca_admin_dealloc_mw(dev, index);
		return -EIO;
	}
	mw->index = index;
	/* Key byte 0: a bind gives the window its first usable key. */
	ibmw->rkey = QHCA_MKEY_MW | FIELD_PREP(QHCA_MKEY_MW_INDEX, index);
	return 0;
}

static int qhca_dealloc_mw(struct ib_mw *ibmw)
{
	struct qhca_dev *dev = to_qdev(ibmw->device);
	int err;

	err = qhca_admin_dealloc_mw(dev, to_qmw(ibmw)->index);
	/*
	 * A dead device holds no window any more; ib_core would warn about
	 * a window it cannot free while it disassociates the contexts.
	 */
	if (err && READ_ONCE(dev->aq.dead))
		return 0;
	return err;
}

static const struct ib_device_ops qhca_mw_ops = {
	.alloc_mw = qhca_alloc_mw,
	.dealloc_mw = qhca_dealloc_mw,

	INIT_RDMA_OBJ_SIZE(ib_mw, qhca_mw, ibmw),
};

static const struct ib_device_ops qhca_fast_reg_ops = {
	.alloc_mr = qhca_alloc_mr,
	.map_mr_sg = qhca_map_mr_sg,
};

/* The verbs of the optional capabilities the device has. */
void qhca_mw_set_ops(struct qhca_dev *dev)
{
	u32 caps = le32_to_cpu(dev->attr.device_cap_flags);

	if (caps & QHCA_DEV_CAP_MW)
		ib_set_device_ops(&dev->ibdev, &qhca_mw_ops);
	if (caps & QHCA_DEV_CAP_MEM_MGT_EXT)
		ib_set_device_ops(&dev->ibdev, &qhca_fast_reg_ops);
}
