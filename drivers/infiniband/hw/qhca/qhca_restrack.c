// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The device's own numbers in rdma res: ib_core lists CQs and SRQs by ids
 * of its own, while fault injection (qhca_debugfs.c) and the device's log
 * name them by the device's numbers, which "rdma res show cq -dd" (and
 * srq) lists as drv_cqn (drv_srqn).  QPs need nothing: their id is qp_num.
 */

#include <rdma/ib_verbs.h>
#include <rdma/rdma_netlink.h>

#include "qhca.h"

static int qhca_fill_res_u32(struct sk_buff *msg, const char *name, u32 val)
{
	struct nlattr *table;

	table = nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	if (rdma_nl_put_driver_u32(msg, name, val)) {
		nla_nest_cancel(msg, table);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, table);
	return 0;
}

int qhca_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq)
{
	return qhca_fill_res_u32(msg, "cqn", to_qcq(ibcq)->cqn);
}

int qhca_fill_res_srq_entry(struct sk_buff *msg, struct ib_srq *ibsrq)
{
	return qhca_fill_res_u32(msg, "srqn", to_qsrq(ibsrq)->srqn);
}
