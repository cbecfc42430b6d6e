// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * qhca address handles.  The device has no AH object: a UD send WQE
 * carries its whole address vector, so an AH is only the checked vector,
 * copied into each WQE by qhca_wr.c.  On an IB port user space builds its
 * AHs itself, without a system call, in libqhca.  On an Ethernet port
 * libqhca asks here for the destination MAC, which ib_core resolved (from
 * its neighbour table) before calling create_ah, and which the response
 * carries back, as mlx5's does.
 */

#include <linux/bitfield.h>
#include <linux/etherdevice.h>
#include <rdma/ib_addr.h>
#include <uapi/rdma/qhca-abi.h>

#include "qhca.h"

/* An IB port: LID and SL, and a GRH only between subnets. */
static int qhca_ah_ib(struct qhca_ah *ah, const struct rdma_ah_attr *attr)
{
	if (attr->type != RDMA_AH_ATTR_TYPE_IB)
		return -EINVAL;

	ah->dlid = cpu_to_le16(rdma_ah_get_dlid(attr));
	if (rdma_ah_get_ah_flags(attr) & IB_AH_GRH) {
		const struct ib_global_route *grh = rdma_ah_read_grh(attr);

		/* The port's GID table has one entry. */
		if (grh->sgid_index != 0)
			return -EINVAL;
		ah->av_flags = QHCA_AV_F_GRH;
	}
	return 0;
}

/*
 * An Ethernet port: always a GRH, whose addresses become the IP header's,
 * and the next hop's MAC; a multicast GID has a multicast MAC.
 */
static int qhca_ah_roce(struct qhca_ah *ah, const struct rdma_ah_attr *attr)
{
	int err;

	err = qhca_roce_check_grh(attr);
	if (err)
		return err;
	ah->dlid = 0;
	ah->av_flags = QHCA_AV_F_GRH;
	ether_addr_copy(ah->dmac, attr->roce.dmac);
	return 0;
}

int qhca_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		   struct ib_udata *udata)
{
	const struct rdma_ah_attr *attr = init_attr->ah_attr;
	struct qhca_dev *dev = to_qdev(ibah->device);
	struct qhca_ah *ah = to_qah(ibah);
	int err;

	/* On an IB port libqhca makes its own and never comes here. */
	if (udata && !qhca_is_eth(dev))
		return -EOPNOTSUPP;
	/* No request data is defined. */
	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	if (rdma_ah_get_port_num(attr) != 1 ||
	    rdma_ah_get_sl(attr) > QHCA_AV_SL_MAX)
		return -EINVAL;

	ah->sl = rdma_ah_get_sl(attr);
	ah->av_flags = 0;
	err = qhca_is_eth(dev) ? qhca_ah_roce(ah, attr) :
				 qhca_ah_ib(ah, attr);
	if (err)
		return err;
	if (ah->av_flags & QHCA_AV_F_GRH) {
		const struct ib_global_route *grh = rdma_ah_read_grh(attr);

		memcpy(ah->dgid, grh->dgid.raw, sizeof(ah->dgid));
		/* 20 bits: the rest is ignored (qhca_roce_check_grh()). */
		ah->flow_label = cpu_to_le32(grh->flow_label &
					     QHCA_AV_FLOW_LABEL_MAX);
		ah->hop_limit = grh->hop_limit;
		ah->traffic_class = grh->traffic_class;
		ah->sgid_index = grh->sgid_index;
	}

	if (udata) {
		struct qhca_ibv_create_ah_resp resp = {};

		ether_addr_copy(resp.dmac, ah->dmac);
		err = qhca_udata_put_resp(udata, &resp, sizeof(resp));
		if (err)
			return err;
	}
	atomic_inc(&dev->ahs);
	return 0;
}

int qhca_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	atomic_dec(&to_qdev(ibah->device)->ahs);
	return 0;
}

/*
 * Multicast: the device keeps the groups; ib_core has checked that the
 * QP is UD, the GID multicast and, on an IB port, the LID a multicast
 * LID.  On an Ethernet port a group is an IP multicast address (an IPv4
 * one mapped, as rdma_cm makes it) and there are no LIDs.
 */
static bool qhca_mcast_ok(const struct ib_qp *ibqp, union ib_gid *gid,
			  u16 lid)
{
	if (ibqp->qp_type != IB_QPT_UD)
		return false;
	if (qhca_is_eth(to_qdev(ibqp->device)))
		return rdma_is_multicast_addr((struct in6_addr *)gid->raw);
	return lid >= QHCA_MCAST_LID_MIN && lid <= QHCA_MCAST_LID_MAX &&
	       gid->raw[0] == 0xff;
}

int qhca_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	if (!qhca_mcast_ok(ibqp, gid, lid))
		return -EINVAL;
	return qhca_admin_attach_mcast(to_qdev(ibqp->device), ibqp->qp_num,
				       gid, lid);
}

int qhca_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	if (!qhca_mcast_ok(ibqp, gid, lid))
		return -EINVAL;
	return qhca_admin_detach_mcast(to_qdev(ibqp->device), ibqp->qp_num,
				       gid, lid);
}

/* The address vector of @ah into a UD send WQE. */
void qhca_ah_to_wqe(const struct qhca_ah *ah, struct qhca_sq_wqe_ud *wqe)
{
	wqe->dlid = ah->dlid;
	wqe->sl = ah->sl;
	wqe->av_flags = ah->av_flags;
	if (ah->av_flags & QHCA_AV_F_GRH) {
		memcpy(wqe->dgid, ah->dgid, sizeof(wqe->dgid));
		wqe->flow_label = ah->flow_label;
		wqe->hop_limit = ah->hop_limit;
		wqe->traffic_class = ah->traffic_class;
		wqe->sgid_index = ah->sgid_index;
	}
	/* Zero on an IB port, as the device requires there. */
	ether_addr_copy(wqe->dmac, ah->dmac);
}
