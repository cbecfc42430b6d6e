// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Typed qhca admin commands over the one admin queue transport.
 */

#include "qhca.h"

int qhca_admin_query_device(struct qhca_dev *dev,
			    struct qhca_device_attr *attr)
{
	return qhca_admin_exec(&dev->aq, QHCA_CMD_QUERY_DEVICE, NULL, 0,
			       attr, sizeof(*attr), NULL);
}

int qhca_admin_query_port(struct qhca_dev *dev, u8 port_num,
			  struct qhca_port_attr *attr)
{
	struct qhca_cmd_query_port cmd = { .port_num = port_num };

	return qhca_admin_exec(&dev->aq, QHCA_CMD_QUERY_PORT, &cmd,
			       sizeof(cmd), attr, sizeof(*attr), NULL);
}

static int qhca_admin_alloc_obj(struct qhca_dev *dev, u16 opcode, u32 *handle)
{
	return qhca_admin_exec(&dev->aq, opcode, NULL, 0, NULL, 0, handle);
}

static int qhca_admin_free_obj(struct qhca_dev *dev, u16 opcode, u32 handle)
{
	struct qhca_cmd_handle cmd = { .handle = cpu_to_le32(handle) };

	return qhca_admin_exec(&dev->aq, opcode, &cmd, sizeof(cmd), NULL, 0,
			       NULL);
}

int qhca_admin_alloc_uar(struct qhca_dev *dev, u32 *uar_index)
{
	return qhca_admin_alloc_obj(dev, QHCA_CMD_ALLOC_UAR, uar_index);
}

int qhca_admin_dealloc_uar(struct qhca_dev *dev, u32 uar_index)
{
	return qhca_admin_free_obj(dev, QHCA_CMD_DEALLOC_UAR, uar_index);
}

int qhca_admin_alloc_pd(struct qhca_dev *dev, u32 *pdn)
{
	return qhca_admin_alloc_obj(dev, QHCA_CMD_ALLOC_PD, pdn);
}

int qhca_admin_dealloc_pd(struct qhca_dev *dev, u32 pdn)
{
	return qhca_admin_free_obj(dev, QHCA_CMD_DEALLOC_PD, pdn);
}

int qhca_admin_alloc_xrcd(struct qhca_dev *dev, u32 *xrcdn)
{
	return qhca_admin_alloc_obj(dev, QHCA_CMD_ALLOC_XRCD, xrcdn);
}

int qhca_admin_dealloc_xrcd(struct qhca_dev *dev, u32 xrcdn)
{
	return qhca_admin_free_obj(dev, QHCA_CMD_DEALLOC_XRCD, xrcdn);
}

int qhca_admin_create_eq(struct qhca_dev *dev, dma_addr_t base, u8 depth_log2,
			 u16 msix_vector, u32 event_mask, u32 *eqn)
{
	struct qhca_cmd_create_eq cmd = {
		.base_addr = cpu_to_le64(base),
		.depth_log2 = depth_log2,
		.msix_vector = cpu_to_le16(msix_vector),
		.event_mask = cpu_to_le32(event_mask),
	};

	return qhca_admin_exec(&dev->aq, QHCA_CMD_CREATE_EQ, &cmd, sizeof(cmd),
			       NULL, 0, eqn);
}

int qhca_admin_destroy_eq(struct qhca_dev *dev, u32 eqn)
{
	return qhca_admin_free_obj(dev, QHCA_CMD_DESTROY_EQ, eqn);
}

int qhca_admin_query_stats(struct qhca_dev *dev, struct qhca_stats *stats)
{
	return qhca_admin_exec(&dev->aq, QHCA_CMD_QUERY_STATS, NULL, 0,
			       stats, sizeof(*stats), NULL);
}

int qhca_admin_reg_mr(struct qhca_dev *dev, const struct qhca_cmd_reg_mr *cmd,
		      u32 *index)
{
	return qhca_admin_exec(&dev->aq, QHCA_CMD_REG_MR, cmd, sizeof(*cmd),
			       NULL, 0, index);
}

int qhca_admin_dereg_mr(struct qhca_dev *dev, u32 index)
{
	return qhca_admin_free_obj(dev, QHCA_CMD_DEREG_MR, index);
}

int qhca_admin_rereg_mr(struct qhca_dev *dev,
			const struct qhca_cmd_rereg_mr *cmd)
{
	return qhca_admin_exec(&dev->aq, QHCA_CMD_REREG_MR, cmd, sizeof(*cmd),
			       NULL, 0, NULL);
}

int qhca_admin_create_cq(struct qhca_dev *dev,
			 const struct qhca_cmd_create_cq *cmd, u32 *cqn)
{
	return qhca_admin_exec(&dev->aq, QHCA_CMD_CREATE_CQ, cmd, sizeof(*cmd),
			       NULL, 0, cqn);
}

int qhca_admin_destroy_cq(struct qhca_dev *dev, u32 cqn)
{
	return qhca_admin_free_obj(dev, QHCA_CMD_DESTROY_CQ, cqn);
}

int qhca_admin_resize_cq(struct qhca_dev *dev,
			 const struct qhca_cmd_resize_cq *cmd)
{
	return qhca_admin_exec(&dev->aq, QHCA_CMD_RESIZE_CQ, cmd, sizeof(*cmd),
			       NULL, 0, NULL);
}

int qhca_admin_create_qp(struct qhca_dev *dev,
			 const struct qhca_cmd_create_qp *cmd, u32 *qpn)
{
	return qhca_admin_exec(&dev->aq, QHCA_CMD_CREATE_QP, cmd, sizeof(*cmd),
			       NULL, 0, qpn);
}

int qhca_admin_modify_qp(struct qhca_dev *dev,
			 const struct qhca_cmd_modify_qp *cmd)
{
	return qhca_admin_exec(&dev->aq, QHCA_CMD_MODIFY_QP, cmd, sizeof(*cmd),
			       NULL, 0, NULL);
}

int qhca_admin_query_qp(struct qhca_dev *dev, u32 qpn,
			struct qhca_qp_attr *attr)
{
	struct qhca_cmd_handle cmd = { .handle = cpu_to_le32(qpn) };

	return qhca_admin_exec(&dev->aq, QHCA_CMD_QUERY_QP, &cmd, sizeof(cmd),
			       attr, sizeof(*attr), NULL);
}

int qhca_admin_destroy_qp(struct qhca_dev *dev, u32 qpn)
{
	return qhca_admin_free_obj(dev, QHCA_CMD_DESTROY_QP, qpn);
}

int qhca_admin_query_counters(struct qhca_dev *dev,
			      struct qhca_counters *counters)
{
	return qhca_admin_exec(&dev->aq, QHCA_CMD_QUERY_COUNTERS, NULL, 0,
			       counters, sizeof(*counters), NULL);
}

int qhca_admin_create_srq(struct qhca_dev *dev,
			  const struct qhca_cmd_create_srq *cmd, u32 *srqn)
{
	return qhca_admin_exec(&dev->aq, QHCA_CMD_CREATE_SRQ, cmd, sizeof(*cmd),
			       NULL, 0, srqn);
}

int qhca_admin_modify_srq(struct qhca_dev *dev,
			  const struct qhca_cmd_modify_srq *cmd)
{
	return qhca_admin_exec(&dev->aq, QHCA_CMD_MODIFY_SRQ, cmd, sizeof(*cmd),
			       NULL, 0, NULL);
}

int qhca_admin_query_srq(struct qhca_dev *dev, u32 srqn,
			 struct qhca_srq_attr *attr)
{
	struct qhca_cmd_handle cmd = { .handle = cpu_to_le32(srqn) };

	return qhca_admin_exec(&dev->aq, QHCA_CMD_QUERY_SRQ, &cmd, sizeof(cmd),
			       attr, sizeof(*attr), NULL);
}

int qhca_admin_destroy_srq(struct qhca_dev *dev, u32 srqn)
{
	return qhca_admin_free_obj(dev, QHCA_CMD_DESTROY_SRQ, srqn);
}

int qhca_admin_alloc_mw(struct qhca_dev *dev, u32 pdn, u8 type, u32 *index)
{
	struct qhca_cmd_alloc_mw cmd = {
		.pdn = cpu_to_le32(pdn),
		.type = type,
	};

	return qhca_admin_exec(&dev->aq, QHCA_CMD_ALLOC_MW, &cmd, sizeof(cmd),
			       NULL, 0, index);
}

int qhca_admin_dealloc_mw(struct qhca_dev *dev, u32 index)
{
	return qhca_admin_free_obj(dev, QHCA_CMD_DEALLOC_MW, index);
}

static int qhca_admin_mcast(struct qhca_dev *dev, u16 opcode, u32 qpn,
			    const union ib_gid *mgid, u16 mlid)
{
	struct qhca_cmd_mcast cmd = {
		.qpn = cpu_to_le32(qpn),
		.mlid = cpu_to_le16(mlid),
	};

	memcpy(cmd.mgid, mgid->raw, sizeof(cmd.mgid));
	return qhca_admin_exec(&dev->aq, opcode, &cmd, sizeof(cmd), NULL, 0,
			       NULL);
}

int qhca_admin_attach_mcast(struct qhca_dev *dev, u32 qpn,
			    const union ib_gid *mgid, u16 mlid)
{
	return qhca_admin_mcast(dev, QHCA_CMD_ATTACH_MCAST, qpn, mgid, mlid);
}

int qhca_admin_detach_mcast(struct qhca_dev *dev, u32 qpn,
			    const union ib_gid *mgid, u16 mlid)
{
	return qhca_admin_mcast(dev, QHCA_CMD_DETACH_MCAST, qpn, mgid, mlid);
}

int qhca_admin_inject_fault(struct qhca_dev *dev, u16 type, u32 handle)
{
	struct qhca_cmd_inject_fault cmd = {
		.type = cpu_to_le16(type),
		.handle = cpu_to_le32(handle),
	};

	return qhca_admin_exec(&dev->aq, QHCA_CMD_INJECT_FAULT, &cmd,
			       sizeof(cmd), NULL, 0, NULL);
}

/* 1.5, Ethernet port: entry @index of the GID table, or clear it. */
int qhca_admin_set_gid(struct qhca_dev *dev, u16 index, u8 type,
		       const union ib_gid *gid)
{
	struct qhca_cmd_set_gid cmd = {
		.index = cpu_to_le16(index),
		.type = type,
	};

	if (gid)
		memcpy(cmd.gid, gid->raw, sizeof(cmd.gid));
	return qhca_admin_exec(&dev->aq, QHCA_CMD_SET_GID, &cmd, sizeof(cmd),
			       NULL, 0, NULL);
}

int qhca_admin_set_qp_av(struct qhca_dev *dev,
			 const struct qhca_cmd_set_qp_av *cmd)
{
	return qhca_admin_exec(&dev->aq, QHCA_CMD_SET_QP_AV, cmd, sizeof(*cmd),
			       NULL, 0, NULL);
}

/* 1.8: @npages entries at @pbl make pages of ODP MR @index present. */
int qhca_admin_odp_map(struct qhca_dev *dev, u32 index, u64 first_page,
		       dma_addr_t pbl, u32 npages)
{
	struct qhca_cmd_odp_map cmd = {
		.first_page = cpu_to_le64(first_page),
		.pbl_addr = cpu_to_le64(pbl),
		.index = cpu_to_le32(index),
		.npages = cpu_to_le32(npages),
	};

	return qhca_admin_exec(&dev->aq, QHCA_CMD_ODP_MAP, &cmd, sizeof(cmd),
			       NULL, 0, NULL);
}

int qhca_admin_odp_unmap(struct qhca_dev *dev, u32 index, u64 first_page,
			 u64 npages)
{
	struct qhca_cmd_odp_unmap cmd = {
		.first_page = cpu_to_le64(first_page),
		.npages = cpu_to_le64(npages),
		.index = cpu_to_le32(index),
	};

	return qhca_admin_exec(&dev->aq, QHCA_CMD_ODP_UNMAP, &cmd, sizeof(cmd),
			       NULL, 0, NULL);
}

int qhca_admin_query_page_fault(struct qhca_dev *dev, u32 qpn,
				struct qhca_page_fault_info *info)
{
	struct qhca_cmd_query_page_fault cmd = { .qpn = cpu_to_le32(qpn) };

	return qhca_admin_exec(&dev->aq, QHCA_CMD_QUERY_PAGE_FAULT, &cmd,
			       sizeof(cmd), info, sizeof(*info), NULL);
}

int qhca_admin_resume_page_fault(struct qhca_dev *dev, u32 qpn, u8 kind,
				 u8 status)
{
	struct qhca_cmd_resume_page_fault cmd = {
		.qpn = cpu_to_le32(qpn),
		.kind = kind,
		.status = status,
	};

	return qhca_admin_exec(&dev->aq, QHCA_CMD_RESUME_PAGE_FAULT, &cmd,
			       sizeof(cmd), NULL, 0, NULL);
}
