/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The uverbs commands that carry qhca driver data, built from the kernel's
 * <rdma/qhca-abi.h> so that the two layouts cannot drift apart.
 */
#ifndef QHCA_ABI_H
#define QHCA_ABI_H

#include <infiniband/kern-abi.h>
#include <kernel-abi/qhca-abi.h>
#include <rdma/qhca-abi.h>

DECLARE_DRV_CMD(qhca_alloc_context, IB_USER_VERBS_CMD_GET_CONTEXT,
		qhca_ibv_alloc_ucontext_req, qhca_ibv_alloc_ucontext_resp);
DECLARE_DRV_CMD(qhca_alloc_pd, IB_USER_VERBS_CMD_ALLOC_PD, empty,
		qhca_ibv_alloc_pd_resp);
DECLARE_DRV_CMD(qhca_create_cq, IB_USER_VERBS_CMD_CREATE_CQ,
		qhca_ibv_create_cq_req, qhca_ibv_create_cq_resp);
DECLARE_DRV_CMD(qhca_create_cq_ex, IB_USER_VERBS_EX_CMD_CREATE_CQ,
		qhca_ibv_create_cq_req, qhca_ibv_create_cq_resp);
DECLARE_DRV_CMD(qhca_resize_cq, IB_USER_VERBS_CMD_RESIZE_CQ,
		qhca_ibv_resize_cq_req, qhca_ibv_resize_cq_resp);
DECLARE_DRV_CMD(qhca_create_qp, IB_USER_VERBS_CMD_CREATE_QP,
		qhca_ibv_create_qp_req, qhca_ibv_create_qp_resp);
DECLARE_DRV_CMD(qhca_create_srq, IB_USER_VERBS_CMD_CREATE_SRQ,
		qhca_ibv_create_srq_req, qhca_ibv_create_srq_resp);
DECLARE_DRV_CMD(qhca_create_ah, IB_USER_VERBS_CMD_CREATE_AH, empty,
		qhca_ibv_create_ah_resp);
DECLARE_DRV_CMD(qhca_create_xsrq, IB_USER_VERBS_CMD_CREATE_XSRQ,
		qhca_ibv_create_srq_req, qhca_ibv_create_srq_resp);
DECLARE_DRV_CMD(qhca_modify_srq, IB_USER_VERBS_CMD_MODIFY_SRQ,
		qhca_ibv_modify_srq_req, empty);

#endif /* QHCA_ABI_H */
