// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * qhca address handles of kernel consumers.  The device has no AH object:
 * a UD send WQE carries its whole address vector, so an AH is only the
 * checked vector, copied into each WQE by qhca_wr.c.  User space builds
 * its AHs itself, without a system call, in libqhca.
 */

#include <linux/bitfield.h>

#include "qhca.h"

int qhca_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		   struct ib_udata *udata)
{
	const struct rdma_ah_attr *attr = init_attr->ah_attr;
	struct qhca_ah *ah = to_qah(ibah);

	/* Only kernel AHs come here; libqhca makes its own. */
	if (udata)
		return -EOPNOTSUPP;
	if (attr->type != RDMA_AH_ATTR_TYPE_IB ||
	    rdma_ah_get_port_num(attr) != 1 ||
	    rdma_ah_get_sl(attr) > QHCA_AV_SL_MAX)
		return -EINVAL;

	ah->dlid = cpu_to_le16(rdma_ah_get_dlid(attr));
	ah->sl = rdma_ah_get_sl(attr);
	ah->av_flags = 0;
	if (rdma_ah_get_ah_flags(attr) & IB_AH_GRH) {
		const struct ib_global_route *grh = rdma_ah_read_grh(attr);

		/* The port's GID table has one entry. */
		if (grh->sgid_index != 0 ||
		    grh->flow_label > QHCA_AV_FLOW_LABEL_MAX)
			return -EINVAL;
		ah->av_flags = QHCA_AV_F_GRH;
		memcpy(ah->dgid, grh->dgid.raw, sizeof(ah->dgid));
		ah->flow_label = cpu_to_le32(grh->flow_label);
		ah->hop_limit = grh->hop_limit;
		ah->traffic_class = grh->traffic_class;
		ah->sgid_index = grh->sgid_index;
	}
	atomic_inc(&to_qdev(ibah->device)->ahs);
	return 0;
}

int qhca_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	atomic_dec(&to_qdev(ibah->device)->ahs);
	return 0;
}

/*
 * Multicast: the device keeps the groups; ib_core has checked that the
 * QP is UD, the GID multicast and the LID a multicast LID.
 */
static bool qhca_mcast_ok(const struct ib_qp *ibqp, const union ib_gid *gid,
			  u16 lid)
{
	return ibqp->qp_type == IB_QPT_UD && lid >= QHCA_MCAST_LID_MIN &&
	       lid <= QHCA_MCAST_LID_MAX && gid->raw[0] == 0xff;
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
}
