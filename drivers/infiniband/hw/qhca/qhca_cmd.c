// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Typed qhca admin commands over the one admin queue transport.
 */

#include "qhca.h"

int qhca_cmd_query_device(struct qhca_dev *dev, struct qhca_device_attr *attr)
{
	return qhca_admin_exec(&dev->aq, QHCA_CMD_QUERY_DEVICE, NULL, 0,
			       attr, sizeof(*attr), NULL);
}

int qhca_cmd_query_port(struct qhca_dev *dev, u8 port_num,
			struct qhca_port_attr *attr)
{
	struct qhca_cmd_query_port cmd = { .port_num = port_num };

	return qhca_admin_exec(&dev->aq, QHCA_CMD_QUERY_PORT, &cmd,
			       sizeof(cmd), attr, sizeof(*attr), NULL);
}

static int qhca_cmd_alloc(struct qhca_dev *dev, u16 opcode, u32 *handle)
{
	return qhca_admin_exec(&dev->aq, opcode, NULL, 0, NULL, 0, handle);
}

static int qhca_cmd_free(struct qhca_dev *dev, u16 opcode, u32 handle)
{
	struct qhca_cmd_handle cmd = { .handle = cpu_to_le32(handle) };

	return qhca_admin_exec(&dev->aq, opcode, &cmd, sizeof(cmd), NULL, 0,
			       NULL);
}

int qhca_cmd_alloc_uar(struct qhca_dev *dev, u32 *uar_index)
{
	return qhca_cmd_alloc(dev, QHCA_CMD_ALLOC_UAR, uar_index);
}

int qhca_cmd_dealloc_uar(struct qhca_dev *dev, u32 uar_index)
{
	return qhca_cmd_free(dev, QHCA_CMD_DEALLOC_UAR, uar_index);
}

int qhca_cmd_alloc_pd(struct qhca_dev *dev, u32 *pdn)
{
	return qhca_cmd_alloc(dev, QHCA_CMD_ALLOC_PD, pdn);
}

int qhca_cmd_dealloc_pd(struct qhca_dev *dev, u32 pdn)
{
	return qhca_cmd_free(dev, QHCA_CMD_DEALLOC_PD, pdn);
}

int qhca_cmd_create_eq(struct qhca_dev *dev, dma_addr_t base, u8 depth_log2,
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

int qhca_cmd_destroy_eq(struct qhca_dev *dev, u32 eqn)
{
	return qhca_cmd_free(dev, QHCA_CMD_DESTROY_EQ, eqn);
}

int qhca_cmd_query_stats(struct qhca_dev *dev, struct qhca_stats *stats)
{
	return qhca_admin_exec(&dev->aq, QHCA_CMD_QUERY_STATS, NULL, 0,
			       stats, sizeof(*stats), NULL);
}
