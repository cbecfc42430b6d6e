// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The port's hw counters (rdma statistic, /sys/class/infiniband/.../
 * hw_counters): the device's free-running data path counters, read with
 * QUERY_COUNTERS.  The device has one port; they are all its.
 */

#include <linux/array_size.h>

#include "qhca.h"

static const struct rdma_stat_desc qhca_counter_descs[] = {
	[QHCA_CNT_SQ_WQES].name = "sq_wqes",
	[QHCA_CNT_RQ_WQES].name = "rq_wqes",
	[QHCA_CNT_CQES].name = "cqes",
	[QHCA_CNT_TX_PACKETS].name = "tx_packets",
	[QHCA_CNT_RX_PACKETS].name = "rx_packets",
	[QHCA_CNT_TX_BYTES].name = "tx_bytes",
	[QHCA_CNT_RX_BYTES].name = "rx_bytes",
	[QHCA_CNT_RNR_NAKS_SENT].name = "rnr_naks_sent",
	[QHCA_CNT_RNR_NAKS_RCVD].name = "rnr_naks_rcvd",
	[QHCA_CNT_RETRIES].name = "retries",
	[QHCA_CNT_ERR_LOC_LEN].name = "err_loc_len",
	[QHCA_CNT_ERR_LOC_QP_OP].name = "err_loc_qp_op",
	[QHCA_CNT_ERR_LOC_PROT].name = "err_loc_prot",
	[QHCA_CNT_ERR_REM_INV_REQ].name = "err_rem_inv_req",
	[QHCA_CNT_ERR_REM_ACCESS].name = "err_rem_access",
	[QHCA_CNT_ERR_REM_OP].name = "err_rem_op",
	[QHCA_CNT_ERR_RETRY_EXC].name = "err_retry_exc",
	[QHCA_CNT_ERR_RNR_RETRY_EXC].name = "err_rnr_retry_exc",
	[QHCA_CNT_ERR_WR_FLUSH].name = "err_wr_flush",
	[QHCA_CNT_CQ_OVERRUNS].name = "cq_overruns",
	[QHCA_CNT_DOORBELLS].name = "doorbells",
	[QHCA_CNT_BAD_DOORBELLS].name = "bad_doorbells",
	[QHCA_CNT_COMPLETION_EVENTS].name = "completion_events",
	[QHCA_CNT_ASYNC_EVENTS].name = "async_events",
	[QHCA_CNT_RX_DROPS].name = "rx_drops",
	[QHCA_CNT_QKEY_VIOLATIONS].name = "qkey_violations",
	[QHCA_CNT_SRQ_WQES].name = "srq_wqes",
	[QHCA_CNT_LINK_DOWNED].name = "link_downed",
	[QHCA_CNT_WIRE_DROPS].name = "wire_drops",
	[QHCA_CNT_FAULTS_INJECTED].name = "faults_injected",
	[QHCA_CNT_ETH_TX_FRAMES].name = "eth_tx_frames",
	[QHCA_CNT_ETH_RX_FRAMES].name = "eth_rx_frames",
	[QHCA_CNT_ETH_RX_NO_BUF].name = "eth_rx_no_buf",
	[QHCA_CNT_ROCE_RX_DROPS].name = "roce_rx_drops",
	[QHCA_CNT_ICRC_ERRORS].name = "icrc_errors",
	/* 1.8: on-demand paging; an older device leaves them 0. */
	[QHCA_CNT_ODP_PAGE_FAULTS].name = "odp_page_faults",
	[QHCA_CNT_ODP_FAULTS_FAILED].name = "odp_faults_failed",
	[QHCA_CNT_ODP_PAGES_MAPPED].name = "odp_pages_mapped",
	[QHCA_CNT_ODP_UNMAPS].name = "odp_unmaps",
};

static_assert(ARRAY_SIZE(qhca_counter_descs) == QHCA_CNT_NUM);
static_assert(ARRAY_SIZE(((struct qhca_counters *)0)->cnt) >= QHCA_CNT_NUM);

struct rdma_hw_stats *qhca_alloc_hw_port_stats(struct ib_device *ibdev,
					       u32 port_num)
{
	return rdma_alloc_hw_stats_struct(qhca_counter_descs, QHCA_CNT_NUM,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

int qhca_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		      u32 port_num, int index)
{
	struct qhca_counters counters;
	int err, i;

	err = qhca_admin_query_counters(to_qdev(ibdev), &counters);
	if (err)
		return err;
	for (i = 0; i < stats->num_counters && i < QHCA_CNT_NUM; i++)
		stats->value[i] = le64_to_cpu(counters.cnt[i]);
	return i;
}
