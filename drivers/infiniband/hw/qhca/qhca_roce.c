// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * qhca on an Ethernet port (interface 1.5): the ib_device is a RoCEv2
 * device, as rxe, bnxt_re and irdma are.  ib_core keeps the GID table
 * (filled from the netdev's addresses) and resolves destination MACs; the
 * driver mirrors the table into the device with SET_GID, because the
 * device needs its own IP addresses to send and to take frames, and hands
 * it the RoCEv2 address vectors of connected QPs (SET_QP_AV) and of AHs
 * (in each UD WQE).  There are no LIDs and no SM; QP1 carries the CM.
 */

#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <linux/netdevice.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>

#include "qhca.h"

/*
 * The port as the device reports it, lowered to what the netdev carries:
 * the link is up only while the interface is up and has a carrier, and
 * the active MTU is the largest IB MTU whose RoCEv2 frames fit the
 * netdev's MTU (iboe_get_mtu(), what rdma_cm assumes too).
 */
void qhca_roce_query_port(struct qhca_dev *dev,
			  const struct qhca_port_attr *a,
			  struct ib_port_attr *props)
{
	struct net_device *ndev = ib_device_get_netdev(&dev->ibdev, 1);
	u8 phys = IB_PORT_PHYS_STATE_DISABLED;
	enum ib_mtu mtu = IB_MTU_256;

	if (ndev) {
		if (netif_running(ndev))
			phys = netif_carrier_ok(ndev) ?
			       IB_PORT_PHYS_STATE_LINK_UP :
			       IB_PORT_PHYS_STATE_POLLING;
		/* Too small for even 256 bytes: say 256, as rxe does. */
		mtu = iboe_get_mtu(READ_ONCE(ndev->mtu)) ?: IB_MTU_256;
		dev_put(ndev);
	}

	props->state = a->state;
	props->phys_state = a->phys_state;
	if (props->state == IB_PORT_ACTIVE &&
	    phys != IB_PORT_PHYS_STATE_LINK_UP) {
		props->state = IB_PORT_DOWN;
		props->phys_state = phys;
	}
	props->max_mtu = IB_MTU_4096;
	props->active_mtu = min_t(enum ib_mtu, a->active_mtu, mtu);
	props->phys_mtu = ib_mtu_enum_to_int(props->max_mtu);
	props->gid_tbl_len = QHCA_ROCE_GID_TBL_LEN;
	props->pkey_tbl_len = 1;
	/* QP1 runs the CM; there is no SM to claim anything else from. */
	props->port_cap_flags = IB_PORT_CM_SUP;
	props->max_msg_sz = le32_to_cpu(a->max_msg_sz);
	props->active_speed = a->active_speed;
	props->active_width = a->active_width;
	props->max_vl_num = a->max_vl_num;
}

void qhca_roce_port_immutable(struct ib_port_immutable *immutable)
{
	/* ib_mad makes QP1 (no QP0 on RoCE) and the CM runs on it. */
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->gid_tbl_len = QHCA_ROCE_GID_TBL_LEN;
	immutable->pkey_tbl_len = 1;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
}

/*
 * ib_core's GID table entry @attr->index was written: write the device's.
 * The device sends untagged frames only, so the address of a VLAN on
 * the netdev is refused rather than used without its tag.
 */
static int qhca_add_gid(const struct ib_gid_attr *attr, void **context)
{
	struct qhca_dev *dev = to_qdev(attr->device);
	u16 vlan_id;
	int err;

	if (attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP ||
	    attr->index >= QHCA_ROCE_GID_TBL_LEN)
		return -EINVAL;
	err = rdma_read_gid_l2_fields(attr, &vlan_id, NULL);
	if (err)
		return err;
	if (vlan_id < VLAN_N_VID) {
		ibdev_dbg(&dev->ibdev, "GID %u: VLAN %u is not supported\n",
			  attr->index, vlan_id);
		return -EOPNOTSUPP;
	}
	return qhca_admin_set_gid(dev, attr->index, QHCA_GID_ROCE_V2,
				  &attr->gid);
}

static int qhca_del_gid(const struct ib_gid_attr *attr, void **context)
{
	if (attr->index >= QHCA_ROCE_GID_TBL_LEN)
		return -EINVAL;
	return qhca_admin_set_gid(to_qdev(attr->device), attr->index,
				  QHCA_GID_NONE, NULL);
}

/*
 * What only a RoCE device has: ib_core's GID table mirrored into the
 * device, and AHs of user space (uverbs offers CREATE_AH only with
 * create_user_ah), which come for the MAC ib_core resolves.  An IB port
 * keeps its AHs in libqhca and has none of these.
 */
static const struct ib_device_ops qhca_roce_ops = {
	.add_gid = qhca_add_gid,
	.create_user_ah = qhca_create_ah,
	.del_gid = qhca_del_gid,
};

void qhca_roce_set_ops(struct qhca_dev *dev)
{
	ib_set_device_ops(&dev->ibdev, &qhca_roce_ops);
}

/*
 * What every RoCEv2 address vector needs: a GRH (its addresses are the
 * IP header's), a source GID the table can hold and a MAC ib_core
 * resolved.  The flow label is 20 bits (the UDP source port is made from
 * it); the bits above are ignored, as every driver does: UCX passes
 * ~(path factor * path index), all ones, on RoCE.
 */
int qhca_roce_check_grh(const struct rdma_ah_attr *ah)
{
	const struct ib_global_route *grh;

	if (ah->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(ah) & IB_AH_GRH) ||
	    is_zero_ether_addr(ah->roce.dmac))
		return -EINVAL;
	grh = rdma_ah_read_grh(ah);
	if (grh->sgid_index >= QHCA_ROCE_GID_TBL_LEN ||
	    (grh->sgid_attr &&
	     grh->sgid_attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP))
		return -EINVAL;
	return 0;
}

/*
 * The SET_QP_AV of a connected QP's new path.  Its peer is one station:
 * the MAC must be unicast.  The device checks the GIDs against its table.
 */
int qhca_roce_qp_av(struct qhca_qp *qp, const struct rdma_ah_attr *ah,
		    struct qhca_cmd_set_qp_av *cmd)
{
	const struct ib_global_route *grh = rdma_ah_read_grh(ah);
	int err;

	err = qhca_roce_check_grh(ah);
	if (err)
		return err;
	if (!is_unicast_ether_addr(ah->roce.dmac))
		return -EINVAL;

	memset(cmd, 0, sizeof(*cmd));
	cmd->qpn = cpu_to_le32(qp->ibqp.qp_num);
	memcpy(cmd->dgid, grh->dgid.raw, sizeof(cmd->dgid));
	ether_addr_copy(cmd->dmac, ah->roce.dmac);
	cmd->sgid_index = grh->sgid_index;
	cmd->hop_limit = grh->hop_limit;
	cmd->flow_label = cpu_to_le32(grh->flow_label &
				      QHCA_AV_FLOW_LABEL_MAX);
	cmd->traffic_class = grh->traffic_class;
	return 0;
}

/* query_qp: the address vector last set, as the type a RoCE QP has. */
void qhca_roce_qp_av_to_attr(const struct qhca_qp *qp,
			     struct rdma_ah_attr *ah)
{
	union ib_gid dgid;

	ah->type = RDMA_AH_ATTR_TYPE_ROCE;
	if (!qp->av_set)
		return;
	memcpy(dgid.raw, qp->av.dgid, sizeof(dgid.raw));
	rdma_ah_set_grh(ah, &dgid, le32_to_cpu(qp->av.flow_label),
			qp->av.sgid_index, qp->av.hop_limit,
			qp->av.traffic_class);
	ether_addr_copy(ah->roce.dmac, qp->av.dmac);
}
