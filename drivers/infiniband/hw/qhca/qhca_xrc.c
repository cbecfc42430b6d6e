// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * qhca XRC domains and XRC TGT QPs.  ib_core shares a domain between the
 * processes that open it through one file (ibv_open_xrcd): the driver
 * only allocates the device's domain.  A TGT QP has no rings, no PD and
 * no CQ: the device takes each receive from the XRC SRQ a request names.
 * ib_core creates it without udata, and the kernel owns it for as long as
 * any process holds it open.
 */

#include <linux/bitfield.h>

#include "qhca.h"

static_assert((int)QHCA_QPT_XRC_INI == (int)IB_QPT_XRC_INI);
static_assert((int)QHCA_QPT_XRC_TGT == (int)IB_QPT_XRC_TGT);
static_assert((int)QHCA_SRQT_XRC == (int)IB_SRQT_XRC);

int qhca_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	struct qhca_dev *dev = to_qdev(ibxrcd->device);
	struct qhca_xrcd *xrcd = to_qxrcd(ibxrcd);

	if (!(le32_to_cpu(dev->attr.device_cap_flags) & QHCA_DEV_CAP_XRC))
		return -EOPNOTSUPP;
	return qhca_admin_alloc_xrcd(dev, &xrcd->xrcdn);
}

int qhca_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	struct qhca_dev *dev = to_qdev(ibxrcd->device);
	struct qhca_xrcd *xrcd = to_qxrcd(ibxrcd);
	int err;

	/* As DEALLOC_PD: ib_core cannot keep what it asked to free. */
	err = qhca_admin_dealloc_xrcd(dev, xrcd->xrcdn);
	qhca_destroyed(dev, err, "DEALLOC_XRCD", xrcd->xrcdn);
	return 0;
}

/* CREATE_QP of an XRC TGT QP: its domain, nothing else. */
int qhca_create_xrc_tgt_qp(struct qhca_dev *dev, struct qhca_qp *qp,
			   struct ib_qp_init_attr *init_attr)
{
	struct qhca_cmd_create_qp cmd = {};
	u32 qpn;
	int err;

	if (!init_attr->xrcd || init_attr->create_flags ||
	    init_attr->rwq_ind_tbl)
		return -EINVAL;
	qp->kernel = false;	/* no rings, no kernel UAR to hold */
	mutex_init(&qp->state_lock);
	qp->state = IB_QPS_RESET;
	qp->path_mtu = dev->port.active_mtu;
	init_attr->cap = (struct ib_qp_cap) {};

	cmd.type = QHCA_QPT_XRC_TGT;
	cmd.pdn = cpu_to_le32(to_qxrcd(init_attr->xrcd)->xrcdn);
	err = qhca_admin_create_qp(dev, &cmd, &qpn);
	if (err)
		return err;
	if (qpn < 2 || qpn > FIELD_MAX(QHCA_DB_QUEUE_NUM)) {
		ibdev_err(&dev->ibdev, "device returned QP number %u\n", qpn);
		err = -EIO;
		goto err_destroy;
	}
	qp->ibqp.qp_num = qpn;
	err = xa_insert_irq(&dev->qps, qpn, qp, GFP_KERNEL);
	if (err)
		goto err_destroy;
	return 0;

err_destroy:
	qhca_admin_destroy_qp(dev, qpn);
	return err;
}
