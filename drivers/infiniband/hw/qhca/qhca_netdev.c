// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * qhca Ethernet NIC (interface 1.5): the net_device of an Ethernet port.
 *
 * An Ethernet port is also a NIC on the same PCI function, as bnxt_en is
 * under bnxt_re or ice under irdma.  The device sorts what it receives:
 * RoCEv2 to one of its GIDs goes to the transport, any other frame for the
 * port's MAC, broadcast or multicast to the RAW_ETH QP with the lowest
 * number (include/qhca_hw.h).  The NIC is that QP: a send WQE carries one
 * whole frame without FCS, a receive WQE takes one.  One NAPI context
 * polls its send CQ and its receive CQ.
 *
 * Lifetime.  The net_device lives as long as the driver is bound to the
 * function (struct qhca_pci), across resets and recoveries, which bring
 * up a new qhca_dev: as bnxt_en or ice, the interface keeps its name,
 * addresses, routes and MTU, and only its queues are made anew.
 * qhca_eth_up() attaches it to a device that came up (registering it the
 * first time), with a PD and a PHYS MR of that device, whose lkey makes
 * bus addresses valid SGEs; qhca_eth_down() detaches it (carrier off, no
 * queues) and qhca_eth_remove() unregisters it.  @dev changes under RTNL
 * only.  While it is attached and up, it has its queues (the kernel UAR,
 * two CQs, the QP and its receive buffers): ndo_open creates them and
 * ndo_stop destroys them, so an interface that is down holds nothing in
 * the device and receives nothing, and an MTU change is a stop and an
 * open with buffers of the new size.
 *
 * Events.  The EQ handlers (qhca_eq.c) call qhca_eth_cq_event() for every
 * completion event and qhca_eth_port_event() for every port event, in
 * hard IRQ context, while dev->eth is set: it is cleared, and the handlers
 * waited for, before the NIC detaches from that device.
 */

#include <linux/bitfield.h>
#include <linux/dma-mapping.h>
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/log2.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/u64_stats_sync.h>
#include <net/netdev_queues.h>

#include "qhca.h"
#include "qhca_pci.h"

/*
 * WQEs in each queue; the device's limits may lower them.  More receive
 * buffers than send WQEs: a burst from the wire waits for NAPI in the RQ
 * (a frame that finds it empty is lost), a burst from the stack waits in
 * the qdisc.
 */
#define QHCA_ETH_SQ_LOG2	8
#define QHCA_ETH_RQ_LOG2	9
/* A send WQE: the header and the one SGE of a linear frame. */
#define QHCA_ETH_SQ_WQE_SIZE	(sizeof(struct qhca_sq_wqe) + \
				 sizeof(struct qhca_sge))
#define QHCA_ETH_RQ_WQE_SIZE	(sizeof(struct qhca_rq_wqe) + \
				 sizeof(struct qhca_sge))
/* Each frame takes one send WQE; wake the queue once a quarter is free. */
#define QHCA_ETH_TX_STOP	1
#define QHCA_ETH_TX_WAKE(eth)	((eth)->sq.q.depth / 4)

/* The NIC's own counts: ndo_get_stats64 and ethtool -S. */
enum qhca_eth_stat {
	QHCA_ETH_RX_PACKETS,
	QHCA_ETH_RX_BYTES,
	QHCA_ETH_RX_ERRORS,		/* error CQEs, bad lengths */
	QHCA_ETH_RX_ALLOC_FAILED,	/* receive buffers not replaced */
	QHCA_ETH_TX_PACKETS,
	QHCA_ETH_TX_BYTES,
	QHCA_ETH_TX_ERRORS,		/* error CQEs */
	QHCA_ETH_TX_DROPPED,		/* frames refused before the device */
	QHCA_ETH_TX_STOPPED,		/* the send queue filled up */
	QHCA_ETH_NUM_STATS
};

static const char * const qhca_eth_stat_names[] = {
	[QHCA_ETH_RX_PACKETS] = "rx_packets",
	[QHCA_ETH_RX_BYTES] = "rx_bytes",
	[QHCA_ETH_RX_ERRORS] = "rx_errors",
	[QHCA_ETH_RX_ALLOC_FAILED] = "rx_alloc_failed",
	[QHCA_ETH_TX_PACKETS] = "tx_packets",
	[QHCA_ETH_TX_BYTES] = "tx_bytes",
	[QHCA_ETH_TX_ERRORS] = "tx_errors",
	[QHCA_ETH_TX_DROPPED] = "tx_dropped",
	[QHCA_ETH_TX_STOPPED] = "tx_stopped",
};

static_assert(ARRAY_SIZE(qhca_eth_stat_names) == QHCA_ETH_NUM_STATS);

/*
 * Device counters that are the NIC's alone, after the NIC's own in
 * ethtool -S.  The others (frames of the port, RoCEv2 drops) are the
 * ib_device's hw counters.
 */
static const struct {
	const char *name;
	enum qhca_counter cnt;
} qhca_eth_hw_stats[] = {
	{ "hw_rx_no_buf", QHCA_CNT_ETH_RX_NO_BUF },
};

/*
 * One writer each: NAPI for the completions, the xmit path (under the
 * queue's lock) for what it refuses.  A reader adds both up.
 */
struct qhca_eth_stats {
	u64_stats_t v[QHCA_ETH_NUM_STATS];
	struct u64_stats_sync syncp;
};

struct qhca_eth_cq {
	struct qhca_dma_buf buf;	/* the ring, then the consumer record */
	struct qhca_cqe *ring;
	__le32 *dbrec;
	u32 depth;			/* entries, a power of two */
	u32 cqn;			/* 0: not created */
	u32 cons;			/* free-running consumer index */
};

/* What a posted WQE's frame is, to unmap and free it once completed. */
struct qhca_eth_slot {
	struct sk_buff *skb;
	dma_addr_t dma;
	u32 len;			/* bytes mapped */
};

/*
 * A ring as a kernel QP's (qhca_wr.c), whose lock goes unused: NAPI alone
 * retires, the xmit path (under the queue's lock) alone posts sends, and
 * the RQ is NAPI's, or the opener's before NAPI is on.
 */
struct qhca_eth_wq {
	struct qhca_wq q;
	struct qhca_eth_slot *slots;	/* one per WQE */
};

struct qhca_eth {
	struct pci_dev *pdev;
	/* The device it is attached to; NULL while it is away (RTNL). */
	struct qhca_dev *dev;
	struct net_device *ndev;
	struct napi_struct napi;
	/* Recreates the queues after an error: process context, RTNL. */
	struct work_struct reset_work;

	u32 pdn;
	u32 mr_index;
	u32 lkey;			/* of the PHYS MR: bus addresses */

	/* The queues, while the interface is up (RTNL). */
	bool queues_up;
	void __iomem *db;		/* the kernel UAR's doorbell page */
	u32 qpn;			/* 0: not created */
	struct qhca_eth_cq scq;
	struct qhca_eth_cq rcq;
	struct qhca_eth_wq sq;
	struct qhca_eth_wq rq;
	u32 rx_buf_len;			/* the MTU, an Ethernet and a VLAN header */

	struct qhca_eth_stats napi_stats;
	struct qhca_eth_stats xmit_stats;

	/*
	 * Port events against the query of the port at start: a query older
	 * than an event must not overwrite what the event said.
	 */
	spinlock_t link_lock;
	u32 link_events;
};

static struct device *qhca_eth_dmadev(struct qhca_eth *eth)
{
	return &eth->pdev->dev;
}

static void qhca_eth_stat_add(struct qhca_eth_stats *s,
			      enum qhca_eth_stat stat, u64 val)
{
	u64_stats_update_begin(&s->syncp);
	u64_stats_add(&s->v[stat], val);
	u64_stats_update_end(&s->syncp);
}

static void qhca_eth_read_stats(struct qhca_eth *eth, u64 *vals)
{
	struct qhca_eth_stats *groups[] = { &eth->napi_stats,
					    &eth->xmit_stats };
	unsigned int start;
	int g, i;

	memset(vals, 0, QHCA_ETH_NUM_STATS * sizeof(*vals));
	for (g = 0; g < ARRAY_SIZE(groups); g++) {
		u64 v[QHCA_ETH_NUM_STATS];

		do {
			start = u64_stats_fetch_begin(&groups[g]->syncp);
			for (i = 0; i < QHCA_ETH_NUM_STATS; i++)
				v[i] = u64_stats_read(&groups[g]->v[i]);
		} while (u64_stats_fetch_retry(&groups[g]->syncp, start));
		for (i = 0; i < QHCA_ETH_NUM_STATS; i++)
			vals[i] += v[i];
	}
}

/* ------------------------------------------------------------------ */
/* Rings and doorbells                                                  */
/* ------------------------------------------------------------------ */

static u32 qhca_eth_wq_free(const struct qhca_eth_wq *wq)
{
	return wq->q.depth - (READ_ONCE(wq->q.head) - READ_ONCE(wq->q.tail));
}

/* The WQEs are in memory; tell the device the new producer index. */
static void qhca_eth_ring_db(struct qhca_eth *eth, struct qhca_eth_wq *wq,
			     u32 off)
{
	qhca_wq_ring_db(&wq->q, eth->db, off, eth->qpn);
}

/* The next CQE the device wrote, or NULL. */
static struct qhca_cqe *qhca_eth_cqe_next(struct qhca_eth_cq *cq)
{
	return qhca_cqe_next(cq->ring, cq->depth, cq->cons);
}

/*
 * The entries up to @cq->cons are read: the device may write over them.
 * Before the WQEs they completed are reused, so that the device never
 * finds the ring full when it is not.
 */
static void qhca_eth_cq_consumed(struct qhca_eth_cq *cq)
{
	qhca_cq_consumed(cq->dbrec, cq->cons);
}

/* An event for the next entry from @cq->cons on (at once if written). */
static void qhca_eth_cq_arm(struct qhca_eth *eth, struct qhca_eth_cq *cq)
{
	qhca_cq_arm_db(eth->db, QHCA_DB_CQ_ARM, cq->cqn, cq->cons);
}

/*
 * An error CQE: the QP is in ERR now, or soon, so start the queues afresh.
 * Flushes too: the driver never moves the QP to ERR itself, so they mean
 * the device did, maybe with no error CQE of its own (a QP_FATAL event).
 */
static void qhca_eth_cqe_error(struct qhca_eth *eth, const char *queue,
			       const struct qhca_cqe *cqe)
{
	if (cqe->status != QHCA_WC_WR_FLUSH_ERR && net_ratelimit())
		netdev_warn(eth->ndev, "%s completion status %u\n", queue,
			    cqe->status);
	schedule_work(&eth->reset_work);
}

/* ------------------------------------------------------------------ */
/* Receive                                                              */
/* ------------------------------------------------------------------ */

/*
 * Post a buffer in every free RQ slot.  Returns the buffers the RQ holds:
 * with none, no completion would ever come to refill it.
 */
static u32 qhca_eth_rx_refill(struct qhca_eth *eth, bool in_napi)
{
	struct device *dmadev = qhca_eth_dmadev(eth);
	struct qhca_eth_wq *rq = &eth->rq;
	u32 len = eth->rx_buf_len;
	u32 posted = 0;

	while (rq->q.head - rq->q.tail < rq->q.depth) {
		struct qhca_eth_slot *slot;
		struct qhca_rq_wqe *wqe;
		struct sk_buff *skb;
		dma_addr_t dma;

		/* IP headers aligned, as the stack prefers. */
		skb = in_napi ? napi_alloc_skb(&eth->napi, len) :
			__netdev_alloc_skb_ip_align(eth->ndev, len, GFP_KERNEL);
		if (!skb)
			goto err_alloc;
		dma = dma_map_single(dmadev, skb->data, len, DMA_FROM_DEVICE);
		if (dma_mapping_error(dmadev, dma)) {
			dev_kfree_skb_any(skb);
			goto err_alloc;
		}

		slot = &rq->slots[rq->q.head & (rq->q.depth - 1)];
		slot->skb = skb;
		slot->dma = dma;
		slot->len = len;
		wqe = qhca_wq_wqe(&rq->q, rq->q.head);
		memset(wqe, 0, QHCA_ETH_RQ_WQE_SIZE);
		wqe->wr_id = cpu_to_le64(rq->q.head);
		wqe->num_sge = 1;
		qhca_wqe_sge((struct qhca_sge *)(wqe + 1), dma, len, eth->lkey);
		rq->q.head++;
		posted++;
	}
	goto out;

err_alloc:
	/* The next poll tries again; meanwhile the device drops and counts. */
	qhca_eth_stat_add(&eth->napi_stats, QHCA_ETH_RX_ALLOC_FAILED, 1);
out:
	if (posted)
		qhca_eth_ring_db(eth, rq, QHCA_DB_RQ);
	return rq->q.head - rq->q.tail;
}

/* The frame of the receive CQE @cqe: to the stack, or dropped. */
static void qhca_eth_rx_one(struct qhca_eth *eth, const struct qhca_cqe *cqe)
{
	struct qhca_eth_stats *stats = &eth->napi_stats;
	struct qhca_eth_wq *rq = &eth->rq;
	struct qhca_eth_slot *slot;
	struct sk_buff *skb;
	u32 n, len;

	n = qhca_wq_done(&rq->q, rq->q.tail, le16_to_cpu(cqe->wqe_idx));
	if (!n || le32_to_cpu(cqe->qpn) != eth->qpn) {
		netdev_dbg(eth->ndev, "stray receive CQE: QP %u WQE %u\n",
			   le32_to_cpu(cqe->qpn), le16_to_cpu(cqe->wqe_idx));
		qhca_eth_stat_add(stats, QHCA_ETH_RX_ERRORS, 1);
		return;
	}

	/*
	 * The device takes receive WQEs in ring order: older ones it did
	 * not complete (n > 1) hold no frame.
	 */
	for (; n; n--) {
		slot = &rq->slots[rq->q.tail & (rq->q.depth - 1)];
		rq->q.tail++;
		skb = slot->skb;
		slot->skb = NULL;
		dma_unmap_single(qhca_eth_dmadev(eth), slot->dma, slot->len,
				 DMA_FROM_DEVICE);
		if (n > 1) {
			napi_consume_skb(skb, 1);
			qhca_eth_stat_add(stats, QHCA_ETH_RX_ERRORS, 1);
		}
	}

	len = le32_to_cpu(cqe->byte_len);
	if (cqe->status != QHCA_WC_SUCCESS) {
		qhca_eth_cqe_error(eth, "receive", cqe);
		goto err_drop;
	}
	/* A frame the buffer cannot hold is the device's error, not ours. */
	if (len < ETH_HLEN || len > slot->len) {
		if (net_ratelimit())
			netdev_warn(eth->ndev, "received frame of %u bytes\n",
				    len);
		goto err_drop;
	}

	skb_put(skb, len);
	skb->protocol = eth_type_trans(skb, eth->ndev);
	u64_stats_update_begin(&stats->syncp);
	u64_stats_inc(&stats->v[QHCA_ETH_RX_PACKETS]);
	u64_stats_add(&stats->v[QHCA_ETH_RX_BYTES], len);
	u64_stats_update_end(&stats->syncp);
	napi_gro_receive(&eth->napi, skb);
	return;

err_drop:
	/* A flushed buffer held no frame: the error is the one before. */
	if (cqe->status != QHCA_WC_WR_FLUSH_ERR)
		qhca_eth_stat_add(stats, QHCA_ETH_RX_ERRORS, 1);
	napi_consume_skb(skb, 1);
}

static int qhca_eth_rx_poll(struct qhca_eth *eth, int budget)
{
	struct qhca_eth_cq *cq = &eth->rcq;
	struct qhca_cqe *cqe;
	int done = 0;

	while (done < budget && (cqe = qhca_eth_cqe_next(cq))) {
		qhca_eth_rx_one(eth, cqe);
		cq->cons++;
		done++;
	}
	if (done)
		qhca_eth_cq_consumed(cq);
	return done;
}

/* ------------------------------------------------------------------ */
/* Transmit                                                             */
/* ------------------------------------------------------------------ */

/* Send completions: free the frames, and wake the queue if it stopped. */
static void qhca_eth_tx_poll(struct qhca_eth *eth, int budget)
{
	struct netdev_queue *txq = netdev_get_tx_queue(eth->ndev, 0);
	struct qhca_eth_stats *stats = &eth->napi_stats;
	struct qhca_eth_cq *cq = &eth->scq;
	struct qhca_eth_wq *sq = &eth->sq;
	u32 pkts = 0, bytes = 0, tail = sq->q.tail, seen, n;
	struct qhca_cqe *cqe;

	/* At most one ring's worth, whatever the device writes meanwhile. */
	for (seen = 0; seen < cq->depth; seen++) {
		cqe = qhca_eth_cqe_next(cq);
		if (!cqe)
			break;
		cq->cons++;
		n = qhca_wq_done(&sq->q, tail, le16_to_cpu(cqe->wqe_idx));
		if (!n || le32_to_cpu(cqe->qpn) != eth->qpn) {
			netdev_dbg(eth->ndev, "stray send CQE: QP %u WQE %u\n",
				   le32_to_cpu(cqe->qpn),
				   le16_to_cpu(cqe->wqe_idx));
			qhca_eth_stat_add(stats, QHCA_ETH_TX_ERRORS, 1);
			continue;
		}
		for (; n; n--, tail++) {
			struct qhca_eth_slot *slot;
			struct sk_buff *skb;

			slot = &sq->slots[tail & (sq->q.depth - 1)];
			skb = slot->skb;
			slot->skb = NULL;
			dma_unmap_single(qhca_eth_dmadev(eth), slot->dma,
					 slot->len, DMA_TO_DEVICE);
			pkts++;
			bytes += skb->len;
			u64_stats_update_begin(&stats->syncp);
			if (cqe->status == QHCA_WC_SUCCESS) {
				u64_stats_inc(&stats->v[QHCA_ETH_TX_PACKETS]);
				u64_stats_add(&stats->v[QHCA_ETH_TX_BYTES],
					      skb->len);
			} else if (cqe->status != QHCA_WC_WR_FLUSH_ERR) {
				u64_stats_inc(&stats->v[QHCA_ETH_TX_ERRORS]);
			}
			u64_stats_update_end(&stats->syncp);
			napi_consume_skb(skb, budget);
		}
		if (cqe->status != QHCA_WC_SUCCESS)
			qhca_eth_cqe_error(eth, "send", cqe);
	}
	if (!seen)
		return;

	qhca_eth_cq_consumed(cq);
	/* The slots are free only now that the CQ has room for them. */
	WRITE_ONCE(sq->q.tail, tail);
	netif_txq_completed_wake(txq, pkts, bytes, qhca_eth_wq_free(sq),
				 QHCA_ETH_TX_WAKE(eth));
}

static netdev_tx_t qhca_eth_xmit(struct sk_buff *skb, struct net_device *ndev)
{
	struct netdev_queue *txq = netdev_get_tx_queue(ndev, 0);
	struct qhca_eth *eth = netdev_priv(ndev);
	struct device *dmadev = qhca_eth_dmadev(eth);
	struct qhca_eth_wq *sq = &eth->sq;
	struct qhca_eth_slot *slot;
	struct qhca_sq_wqe *wqe;
	dma_addr_t dma;

	/* The queue stops before it is full: this is not expected. */
	if (unlikely(!qhca_eth_wq_free(sq))) {
		netif_tx_stop_queue(txq);
		return NETDEV_TX_BUSY;
	}

	/*
	 * The device sends the bytes as they are: pad to Ethernet's minimum
	 * as a wire would want, and refuse what it would complete with
	 * LOC_LEN_ERR (a frame over the MTU and a VLAN header).  The NIC
	 * offers no SG, so the stack hands over linear frames.
	 */
	if (skb_put_padto(skb, ETH_ZLEN))
		goto out_dropped;	/* freed by skb_put_padto() */
	if (skb->len > QHCA_ETH_FRAME_MAX || skb_linearize(skb))
		goto err_free;
	dma = dma_map_single(dmadev, skb->data, skb->len, DMA_TO_DEVICE);
	if (dma_mapping_error(dmadev, dma))
		goto err_free;

	slot = &sq->slots[sq->q.head & (sq->q.depth - 1)];
	slot->skb = skb;
	slot->dma = dma;
	slot->len = skb->len;
	wqe = qhca_wq_wqe(&sq->q, sq->q.head);
	memset(wqe, 0, QHCA_ETH_SQ_WQE_SIZE);
	wqe->wr_id = cpu_to_le64(sq->q.head);
	wqe->opcode = QHCA_WR_SEND;
	wqe->flags = QHCA_WQE_F_SIGNALED;
	wqe->num_sge = 1;
	qhca_wqe_sge((struct qhca_sge *)(wqe + 1), dma, skb->len, eth->lkey);
	skb_tx_timestamp(skb);
	WRITE_ONCE(sq->q.head, sq->q.head + 1);

	if (!netif_txq_maybe_stop(txq, qhca_eth_wq_free(sq), QHCA_ETH_TX_STOP,
				  QHCA_ETH_TX_WAKE(eth)))
		qhca_eth_stat_add(&eth->xmit_stats, QHCA_ETH_TX_STOPPED, 1);
	/* With more frames coming, one doorbell for them all. */
	if (__netdev_tx_sent_queue(txq, slot->len, netdev_xmit_more()))
		qhca_eth_ring_db(eth, sq, QHCA_DB_SQ);
	return NETDEV_TX_OK;

err_free:
	dev_kfree_skb_any(skb);
out_dropped:
	qhca_eth_stat_add(&eth->xmit_stats, QHCA_ETH_TX_DROPPED, 1);
	return NETDEV_TX_OK;
}

/* ------------------------------------------------------------------ */
/* NAPI and events                                                      */
/* ------------------------------------------------------------------ */

static int qhca_eth_poll(struct napi_struct *napi, int budget)
{
	struct qhca_eth *eth = container_of(napi, struct qhca_eth, napi);
	int done;

	qhca_eth_tx_poll(eth, budget);
	/* netpoll polls with budget 0: send completions only. */
	if (!budget)
		return 0;
	done = qhca_eth_rx_poll(eth, budget);
	/* An empty RQ gets no completion: keep polling until it refills. */
	if (!qhca_eth_rx_refill(eth, true))
		return budget;
	if (done < budget && napi_complete_done(napi, done)) {
		/* Entries written since the poll fire at once. */
		qhca_eth_cq_arm(eth, &eth->scq);
		qhca_eth_cq_arm(eth, &eth->rcq);
	}
	return min(done, budget);
}

/**
 * qhca_eth_cq_event - an event of a CQ, if it is one of the NIC's
 * @dev: the device
 * @cqn: the CQ's number
 * @type: QHCA_EVENT_COMPLETION or QHCA_EVENT_CQ_ERROR
 *
 * Hard IRQ context, from the EQ handlers.  Returns true if the CQ is the
 * NIC's: then no one else hears of it.
 */
bool qhca_eth_cq_event(struct qhca_dev *dev, u32 cqn, u8 type)
{
	struct qhca_eth *eth = READ_ONCE(dev->eth);

	if (!eth || !cqn ||
	    (cqn != READ_ONCE(eth->scq.cqn) && cqn != READ_ONCE(eth->rcq.cqn)))
		return false;
	if (type == QHCA_EVENT_COMPLETION) {
		napi_schedule(&eth->napi);
	} else {
		/* Each CQ holds a completion for every WQE: never expected. */
		if (net_ratelimit())
			netdev_err(eth->ndev, "CQ %u overran\n", cqn);
		schedule_work(&eth->reset_work);
	}
	return true;
}

/* Under link_lock. */
static void qhca_eth_set_carrier(struct qhca_eth *eth, bool active)
{
	if (active)
		netif_carrier_on(eth->ndev);
	else
		netif_carrier_off(eth->ndev);
}

/**
 * qhca_eth_port_event - the port went ACTIVE or DOWN
 * @dev: the device
 * @active: the port is ACTIVE
 *
 * Hard IRQ context, from the async EQ handler: the carrier follows.
 */
void qhca_eth_port_event(struct qhca_dev *dev, bool active)
{
	struct qhca_eth *eth = READ_ONCE(dev->eth);
	unsigned long flags;

	if (!eth)
		return;
	spin_lock_irqsave(&eth->link_lock, flags);
	eth->link_events++;
	qhca_eth_set_carrier(eth, active);
	spin_unlock_irqrestore(&eth->link_lock, flags);
}

/*
 * The carrier at start: the port as the device says now (the state cached
 * at probe may be older), unless an event came in the meantime.
 */
static void qhca_eth_link_init(struct qhca_eth *eth)
{
	struct qhca_dev *dev = eth->dev;
	struct qhca_port_attr attr;
	unsigned long flags;
	u32 events;
	u8 state;

	spin_lock_irqsave(&eth->link_lock, flags);
	events = eth->link_events;
	spin_unlock_irqrestore(&eth->link_lock, flags);

	state = qhca_admin_query_port(dev, 1, &attr) ? dev->port.state :
						      attr.state;

	spin_lock_irqsave(&eth->link_lock, flags);
	if (eth->link_events == events)
		qhca_eth_set_carrier(eth, state == QHCA_PORT_ACTIVE);
	spin_unlock_irqrestore(&eth->link_lock, flags);
}

/* ------------------------------------------------------------------ */
/* The queues                                                           */
/* ------------------------------------------------------------------ */

static int qhca_eth_cq_create(struct qhca_eth *eth, struct qhca_eth_cq *cq,
			      u32 depth_log2)
{
	struct qhca_dev *dev = eth->dev;
	bool device_done;
	ssize_t ring_size;
	u32 cqn;
	int err;

	cq->depth = BIT(depth_log2);
	cq->cons = 0;
	ring_size = qhca_cq_buf_alloc(dev, &cq->buf, cq->depth);
	if (ring_size < 0)
		return ring_size;
	cq->ring = cq->buf.va;
	cq->dbrec = cq->buf.va + ring_size;
	/* The first completion vector: the NIC has one queue pair. */
	err = qhca_cq_hw_create(dev, &cq->buf, cq->depth, dev->ceqs[0].eqn,
				dev->kuar.index, &cqn, &device_done);
	if (err) {
		if (device_done)
			qhca_dma_buf_free(dev, &cq->buf);
		return err;
	}
	WRITE_ONCE(cq->cqn, cqn);
	return 0;
}

/* The ring is freed only if the device is done with it. */
static void qhca_eth_cq_destroy(struct qhca_eth *eth, struct qhca_eth_cq *cq)
{
	struct qhca_dev *dev = eth->dev;
	u32 cqn = cq->cqn;

	if (!cqn)
		return;
	WRITE_ONCE(cq->cqn, 0);
	if (qhca_destroyed(dev, qhca_admin_destroy_cq(dev, cqn), "DESTROY_CQ",
			   cqn))
		qhca_dma_buf_free(dev, &cq->buf);
}

static int qhca_eth_wq_alloc(struct qhca_eth *eth, struct qhca_eth_wq *wq,
			     u32 depth_log2, size_t wqe_size)
{
	wq->q.depth = BIT(depth_log2);
	wq->q.stride_log2 = order_base_2(wqe_size);
	wq->q.head = 0;
	wq->q.tail = 0;
	spin_lock_init(&wq->q.lock);
	wq->slots = kcalloc(wq->q.depth, sizeof(*wq->slots), GFP_KERNEL);
	if (!wq->slots)
		return -ENOMEM;
	if (qhca_dma_buf_alloc(eth->dev, &wq->q.buf,
			       (size_t)wq->q.depth << wq->q.stride_log2)) {
		kfree(wq->slots);
		wq->slots = NULL;
		return -ENOMEM;
	}
	return 0;
}

/*
 * Unmap and free the frames still posted and the ring.  Without
 * @device_done the device may still use them: they are never freed.
 */
static void qhca_eth_wq_free_all(struct qhca_eth *eth, struct qhca_eth_wq *wq,
				 enum dma_data_direction dir, bool device_done)
{
	u32 i;

	if (!wq->slots)
		return;
	if (device_done) {
		for (i = 0; i < wq->q.depth; i++) {
			struct qhca_eth_slot *slot = &wq->slots[i];

			if (!slot->skb)
				continue;
			dma_unmap_single(qhca_eth_dmadev(eth), slot->dma,
					 slot->len, dir);
			dev_kfree_skb_any(slot->skb);
		}
		qhca_dma_buf_free(eth->dev, &wq->q.buf);
		kfree(wq->slots);
	}
	wq->slots = NULL;
}

static int qhca_eth_qp_modify(struct qhca_eth *eth, enum qhca_qp_state state)
{
	struct qhca_cmd_modify_qp cmd = {
		.qpn = cpu_to_le32(eth->qpn),
		.attr_mask = cpu_to_le32(QHCA_QP_ATTR_STATE),
		.state = state,
	};

	return qhca_admin_modify_qp(eth->dev, &cmd);
}

/* The RAW_ETH QP, moved to RTS: RESET -> INIT -> RTR -> RTS, state only. */
static int qhca_eth_qp_create(struct qhca_eth *eth)
{
	struct qhca_dev *dev = eth->dev;
	struct qhca_cmd_create_qp cmd = {};
	u32 qpn;
	int err;

	cmd.sq_addr = cpu_to_le64(eth->sq.q.buf.dma);
	cmd.rq_addr = cpu_to_le64(eth->rq.q.buf.dma);
	cmd.pdn = cpu_to_le32(eth->pdn);
	cmd.uar = cpu_to_le32(dev->kuar.index);
	cmd.send_cqn = cpu_to_le16(eth->scq.cqn);
	cmd.recv_cqn = cpu_to_le16(eth->rcq.cqn);
	cmd.type = QHCA_QPT_RAW_ETH;
	cmd.flags = QHCA_QP_F_SQ_SIG_ALL;
	cmd.sq_depth_log2 = ilog2(eth->sq.q.depth);
	cmd.sq_stride_log2 = eth->sq.q.stride_log2;
	cmd.rq_depth_log2 = ilog2(eth->rq.q.depth);
	cmd.rq_stride_log2 = eth->rq.q.stride_log2;
	err = qhca_admin_create_qp(dev, &cmd, &qpn);
	if (err)
		return err;
	eth->qpn = qpn;
	/* QP0 and QP1 are never handed out; doorbells carry 16 bits. */
	if (qpn < 2 || qpn > FIELD_MAX(QHCA_DB_QUEUE_NUM)) {
		netdev_err(eth->ndev, "device returned QP number %u\n", qpn);
		return -EIO;
	}

	err = qhca_eth_qp_modify(eth, QHCA_QPS_INIT);
	if (!err)
		err = qhca_eth_qp_modify(eth, QHCA_QPS_RTR);
	if (!err)
		err = qhca_eth_qp_modify(eth, QHCA_QPS_RTS);
	return err;
}

/*
 * Destroy what qhca_eth_queues_create() made, in reverse: the QP first,
 * after which the device no longer touches the rings or the buffers.  A
 * device that stopped answering and was reset touches nothing either
 * (qhca_destroyed()); one that failed a destroy keeps the memory for good.
 */
static void qhca_eth_queues_destroy(struct qhca_eth *eth)
{
	struct qhca_dev *dev = eth->dev;
	bool done = true;

	if (eth->qpn) {
		done = qhca_destroyed(dev, qhca_admin_destroy_qp(dev, eth->qpn),
				      "DESTROY_QP", eth->qpn);
		eth->qpn = 0;
	}
	qhca_eth_wq_free_all(eth, &eth->rq, DMA_FROM_DEVICE, done);
	qhca_eth_wq_free_all(eth, &eth->sq, DMA_TO_DEVICE, done);
	qhca_eth_cq_destroy(eth, &eth->rcq);
	qhca_eth_cq_destroy(eth, &eth->scq);
	if (eth->db) {
		eth->db = NULL;
		qhca_kuar_put(dev);
	}
	eth->queues_up = false;
}

/* Every queue holds a CQE for each of its WQEs: a CQ can never overrun. */
static int qhca_eth_queues_create(struct qhca_eth *eth)
{
	struct qhca_dev *dev = eth->dev;
	u32 max_wr = le32_to_cpu(dev->attr.max_qp_wr);
	u32 max_cqe = le32_to_cpu(dev->attr.max_cqe);
	u32 sq_log2, rq_log2;
	int err;

	if (max_wr < 2 || max_cqe < 2 || !le32_to_cpu(dev->attr.max_sge))
		return -EINVAL;
	sq_log2 = min3(QHCA_ETH_SQ_LOG2, ilog2(max_wr), ilog2(max_cqe));
	rq_log2 = min3(QHCA_ETH_RQ_LOG2, ilog2(max_wr), ilog2(max_cqe));
	eth->rx_buf_len = eth->ndev->mtu + QHCA_ETH_VLAN_HLEN;

	err = qhca_kuar_get(dev);
	if (err)
		return err;
	eth->db = dev->kuar.db;
	err = qhca_eth_cq_create(eth, &eth->scq, sq_log2);
	if (err)
		goto err_destroy;
	err = qhca_eth_cq_create(eth, &eth->rcq, rq_log2);
	if (err)
		goto err_destroy;
	err = qhca_eth_wq_alloc(eth, &eth->sq, sq_log2, QHCA_ETH_SQ_WQE_SIZE);
	if (err)
		goto err_destroy;
	err = qhca_eth_wq_alloc(eth, &eth->rq, rq_log2, QHCA_ETH_RQ_WQE_SIZE);
	if (err)
		goto err_destroy;
	err = qhca_eth_qp_create(eth);
	if (err)
		goto err_destroy;
	/* Frames arriving before this are dropped, and counted, by the device. */
	if (!qhca_eth_rx_refill(eth, false)) {
		err = -ENOMEM;
		goto err_destroy;
	}
	eth->queues_up = true;
	return 0;

err_destroy:
	netdev_err(eth->ndev, "creating the queues failed: %d\n", err);
	qhca_eth_queues_destroy(eth);
	return err;
}

/* ------------------------------------------------------------------ */
/* net_device and ethtool operations                                    */
/* ------------------------------------------------------------------ */

static int qhca_eth_start(struct qhca_eth *eth)
{
	int err;

	err = qhca_eth_queues_create(eth);
	if (err)
		return err;
	netdev_reset_queue(eth->ndev);
	napi_enable(&eth->napi);
	qhca_eth_cq_arm(eth, &eth->scq);
	qhca_eth_cq_arm(eth, &eth->rcq);
	return 0;
}

static void qhca_eth_stop(struct qhca_eth *eth)
{
	if (!eth->queues_up)
		return;
	netif_tx_disable(eth->ndev);
	napi_disable(&eth->napi);
	qhca_eth_queues_destroy(eth);
	netdev_reset_queue(eth->ndev);
}

static int qhca_eth_open(struct net_device *ndev)
{
	struct qhca_eth *eth = netdev_priv(ndev);
	int err;

	/* The device is away (a reset): its queues come with it. */
	if (!eth->dev) {
		netif_tx_stop_all_queues(ndev);
		return 0;
	}
	err = qhca_eth_start(eth);
	if (err)
		return err;
	netif_tx_start_all_queues(ndev);
	return 0;
}

static int qhca_eth_close(struct net_device *ndev)
{
	qhca_eth_stop(netdev_priv(ndev));
	return 0;
}

/* Stop and start again, for new buffers or after an error.  RTNL held. */
static int qhca_eth_restart(struct qhca_eth *eth)
{
	int err;

	qhca_eth_stop(eth);
	err = qhca_eth_start(eth);
	if (!err)
		netif_tx_wake_all_queues(eth->ndev);
	return err;
}

static void qhca_eth_reset_work(struct work_struct *work)
{
	struct qhca_eth *eth = container_of(work, struct qhca_eth,
					    reset_work);

	rtnl_lock();
	/* Not while the device is away: qhca_eth_attach() makes the queues. */
	if (netif_running(eth->ndev) && eth->dev) {
		netdev_info(eth->ndev, "restarting the queues\n");
		if (qhca_eth_restart(eth))
			dev_close(eth->ndev);
	}
	rtnl_unlock();
}

/* The receive buffers follow the MTU: new queues with new buffers. */
static int qhca_eth_change_mtu(struct net_device *ndev, int new_mtu)
{
	struct qhca_eth *eth = netdev_priv(ndev);
	unsigned int old_mtu = ndev->mtu;
	int err;

	WRITE_ONCE(ndev->mtu, new_mtu);
	if (!netif_running(ndev) || !eth->dev)
		return 0;
	err = qhca_eth_restart(eth);
	if (!err)
		return 0;
	/* Back to the old buffers; failing that, the reset work closes. */
	WRITE_ONCE(ndev->mtu, old_mtu);
	if (qhca_eth_restart(eth))
		schedule_work(&eth->reset_work);
	return err;
}

static void qhca_eth_tx_timeout(struct net_device *ndev, unsigned int txqueue)
{
	struct qhca_eth *eth = netdev_priv(ndev);

	netdev_err(ndev, "send queue stuck: %u WQEs outstanding\n",
		   READ_ONCE(eth->sq.q.head) - READ_ONCE(eth->sq.q.tail));
	schedule_work(&eth->reset_work);
}

static void qhca_eth_get_stats64(struct net_device *ndev,
				 struct rtnl_link_stats64 *s)
{
	u64 v[QHCA_ETH_NUM_STATS];

	qhca_eth_read_stats(netdev_priv(ndev), v);
	s->rx_packets = v[QHCA_ETH_RX_PACKETS];
	s->rx_bytes = v[QHCA_ETH_RX_BYTES];
	s->rx_errors = v[QHCA_ETH_RX_ERRORS];
	s->tx_packets = v[QHCA_ETH_TX_PACKETS];
	s->tx_bytes = v[QHCA_ETH_TX_BYTES];
	s->tx_errors = v[QHCA_ETH_TX_ERRORS];
	s->tx_dropped = v[QHCA_ETH_TX_DROPPED];
}

static const struct net_device_ops qhca_eth_netdev_ops = {
	.ndo_open = qhca_eth_open,
	.ndo_stop = qhca_eth_close,
	.ndo_start_xmit = qhca_eth_xmit,
	.ndo_change_mtu = qhca_eth_change_mtu,
	.ndo_tx_timeout = qhca_eth_tx_timeout,
	.ndo_get_stats64 = qhca_eth_get_stats64,
	.ndo_validate_addr = eth_validate_addr,
};

static void qhca_eth_get_drvinfo(struct net_device *ndev,
				 struct ethtool_drvinfo *info)
{
	struct qhca_eth *eth = netdev_priv(ndev);

	strscpy(info->driver, DRV_MODULE_NAME, sizeof(info->driver));
	strscpy(info->bus_info, pci_name(eth->pdev),
		sizeof(info->bus_info));
}

static int qhca_eth_get_sset_count(struct net_device *ndev, int sset)
{
	if (sset != ETH_SS_STATS)
		return -EOPNOTSUPP;
	return QHCA_ETH_NUM_STATS + ARRAY_SIZE(qhca_eth_hw_stats);
}

static void qhca_eth_get_strings(struct net_device *ndev, u32 sset, u8 *data)
{
	int i;

	if (sset != ETH_SS_STATS)
		return;
	for (i = 0; i < QHCA_ETH_NUM_STATS; i++)
		ethtool_puts(&data, qhca_eth_stat_names[i]);
	for (i = 0; i < ARRAY_SIZE(qhca_eth_hw_stats); i++)
		ethtool_puts(&data, qhca_eth_hw_stats[i].name);
}

/* The device's counters are read by an admin command: 0 if that fails. */
static void qhca_eth_get_ethtool_stats(struct net_device *ndev,
				       struct ethtool_stats *stats, u64 *data)
{
	struct qhca_eth *eth = netdev_priv(ndev);
	struct qhca_counters *counters;
	int i;

	qhca_eth_read_stats(eth, data);
	data += QHCA_ETH_NUM_STATS;

	/* RTNL: the device stays while it is read, or is away (0). */
	ASSERT_RTNL();
	counters = kzalloc(sizeof(*counters), GFP_KERNEL);
	if (counters &&
	    (!eth->dev || qhca_admin_query_counters(eth->dev, counters)))
		memset(counters, 0, sizeof(*counters));
	for (i = 0; i < ARRAY_SIZE(qhca_eth_hw_stats); i++)
		data[i] = counters ?
			  le64_to_cpu(counters->cnt[qhca_eth_hw_stats[i].cnt]) :
			  0;
	kfree(counters);
}

static const struct ethtool_ops qhca_eth_ethtool_ops = {
	.get_drvinfo = qhca_eth_get_drvinfo,
	.get_link = ethtool_op_get_link,
	.get_sset_count = qhca_eth_get_sset_count,
	.get_strings = qhca_eth_get_strings,
	.get_ethtool_stats = qhca_eth_get_ethtool_stats,
};

/* ------------------------------------------------------------------ */
/* Up and down                                                          */
/* ------------------------------------------------------------------ */

/* A PD and a PHYS MR over all of memory: SGEs carry bus addresses. */
static int qhca_eth_pd_mr_alloc(struct qhca_eth *eth, struct qhca_dev *dev)
{
	int err;

	err = qhca_admin_alloc_pd(dev, &eth->pdn);
	if (err)
		return err;
	err = qhca_mr_reg_phys(dev, eth->pdn, QHCA_ACCESS_LOCAL_WRITE,
			       &eth->mr_index, &eth->lkey);
	if (err)
		qhca_admin_dealloc_pd(dev, eth->pdn);
	return err;
}

static void qhca_eth_pd_mr_free(struct qhca_eth *eth, struct qhca_dev *dev)
{
	qhca_destroyed(dev, qhca_admin_dereg_mr(dev, eth->mr_index),
		       "DEREG_MR", eth->mr_index);
	qhca_destroyed(dev, qhca_admin_dealloc_pd(dev, eth->pdn),
		       "DEALLOC_PD", eth->pdn);
}

/* What the NIC needs of the port: a unicast MAC, an MTU IP can use. */
static int qhca_eth_check_port(struct qhca_dev *dev)
{
	if (!is_valid_ether_addr(dev->port.mac)) {
		dev_err(&dev->pdev->dev, "port MAC %pM is not a unicast one\n",
			dev->port.mac);
		return -EINVAL;
	}
	if (le16_to_cpu(dev->port.eth_mtu) < QHCA_ETH_MIN_MTU) {
		dev_err(&dev->pdev->dev, "port MTU %u\n",
			le16_to_cpu(dev->port.eth_mtu));
		return -EINVAL;
	}
	return 0;
}

/* The device says what it carries; the interface fixes the most. */
static unsigned int qhca_eth_max_mtu(struct qhca_dev *dev)
{
	return min_t(u16, le16_to_cpu(dev->port.eth_mtu), QHCA_ETH_MAX_MTU);
}

/*
 * A registered net_device with no device behind it yet: its MAC and MTU
 * are the port's.  Its name is the kernel's choice.
 */
static struct qhca_eth *qhca_eth_create(struct qhca_dev *dev)
{
	struct net_device *ndev;
	struct qhca_eth *eth;
	int err;

	ndev = alloc_etherdev(sizeof(*eth));
	if (!ndev)
		return ERR_PTR(-ENOMEM);
	SET_NETDEV_DEV(ndev, &dev->pdev->dev);
	eth = netdev_priv(ndev);
	eth->pdev = dev->pdev;
	eth->ndev = ndev;
	INIT_WORK(&eth->reset_work, qhca_eth_reset_work);
	spin_lock_init(&eth->link_lock);
	u64_stats_init(&eth->napi_stats.syncp);
	u64_stats_init(&eth->xmit_stats.syncp);

	eth_hw_addr_set(ndev, dev->port.mac);
	ndev->netdev_ops = &qhca_eth_netdev_ops;
	ndev->ethtool_ops = &qhca_eth_ethtool_ops;
	ndev->watchdog_timeo = 5 * HZ;
	ndev->min_mtu = QHCA_ETH_MIN_MTU;
	ndev->max_mtu = qhca_eth_max_mtu(dev);
	ndev->mtu = min_t(unsigned int, ndev->max_mtu, ETH_DATA_LEN);
	netif_napi_add(ndev, &eth->napi, qhca_eth_poll);
	netif_carrier_off(ndev);

	err = register_netdev(ndev);
	if (err) {
		free_netdev(ndev);
		return ERR_PTR(err);
	}
	return eth;
}

/*
 * The NIC on a device that came up: a PD and MR of its own, the port's
 * MAC and MTU limit, and the queues if the interface is up.  The carrier
 * goes on only after the net_device is registered, so that the change
 * reaches linkwatch and the operational state becomes UP rather than
 * staying UNKNOWN.
 */
static int qhca_eth_attach(struct qhca_eth *eth, struct qhca_dev *dev)
{
	struct net_device *ndev = eth->ndev;
	unsigned int max_mtu = qhca_eth_max_mtu(dev);
	int err;

	err = qhca_eth_pd_mr_alloc(eth, dev);
	if (err)
		return err;
	/* Events reach the NIC from now on: its CQs' once it has queues. */
	WRITE_ONCE(dev->eth, eth);

	rtnl_lock();
	/*
	 * Still detached, so no queues follow: a device with a lower limit
	 * than the last lowers the MTU (and tells the stack).
	 */
	WRITE_ONCE(ndev->max_mtu, max_mtu);
	if (ndev->mtu > max_mtu)
		dev_set_mtu(ndev, max_mtu);
	if (!ether_addr_equal(ndev->dev_addr, dev->port.mac)) {
		netdev_info(ndev, "port MAC now %pM\n", dev->port.mac);
		eth_hw_addr_set(ndev, dev->port.mac);
		call_netdevice_notifiers(NETDEV_CHANGEADDR, ndev);
	}
	WRITE_ONCE(eth->dev, dev);
	/* Up all along, or opened while the device was away. */
	if (netif_running(ndev)) {
		if (qhca_eth_start(eth))
			dev_close(ndev);
		else
			netif_tx_wake_all_queues(ndev);
	}
	rtnl_unlock();

	qhca_eth_link_init(eth);
	dev->netdev = ndev;
	return 0;
}

/**
 * qhca_eth_up - the NIC of an Ethernet port, on a device that came up
 * @dev: the device, with its EQs, before the ib_device is registered
 *
 * At probe the net_device is registered; after a reset or a recovery the
 * same one takes the new device, as bnxt_en or ice keep theirs: its name,
 * addresses, routes and MTU stay, and the queues are made anew if it is
 * up.  Sets dev->eth and dev->netdev.  On failure the net_device stays,
 * detached, until qhca_eth_remove().
 */
int qhca_eth_up(struct qhca_dev *dev)
{
	struct qhca_pci *qpci = pci_get_drvdata(dev->pdev);
	struct qhca_eth *eth = qpci->eth;
	int err;

	err = qhca_eth_check_port(dev);
	if (err)
		return err;
	if (!eth) {
		eth = qhca_eth_create(dev);
		if (IS_ERR(eth)) {
			err = PTR_ERR(eth);
			goto err;
		}
		qpci->eth = eth;
	}
	err = qhca_eth_attach(eth, dev);
	if (err)
		goto err;
	netdev_info(eth->ndev, "qhca port %pM, MTU %u (up to %u)\n",
		    eth->ndev->dev_addr, eth->ndev->mtu, eth->ndev->max_mtu);
	return 0;

err:
	dev_err(&dev->pdev->dev, "the Ethernet NIC failed: %d\n", err);
	return err;
}

/**
 * qhca_eth_down - detach the NIC from a device going down
 * @dev: the device, after its ib_device was unregistered
 *
 * The carrier goes off and the queues go; the net_device stays for the
 * next device (qhca_eth_up()).  Also when the device stopped answering:
 * the destroys then fail at once and the memory is freed if the device
 * was reset (qhca_destroyed()).
 */
void qhca_eth_down(struct qhca_dev *dev)
{
	struct qhca_eth *eth = dev->eth;
	struct net_device *ndev;

	if (!eth)
		return;
	ndev = eth->ndev;
	/* No event handler sees the NIC any more. */
	WRITE_ONCE(dev->eth, NULL);
	qhca_eqs_sync(dev);

	rtnl_lock();
	netif_carrier_off(ndev);
	qhca_eth_stop(eth);
	/* The reset work and the ops see it under RTNL: they leave it be. */
	WRITE_ONCE(eth->dev, NULL);
	rtnl_unlock();
	dev->netdev = NULL;
	qhca_eth_pd_mr_free(eth, dev);
}

/**
 * qhca_eth_remove - unregister the NIC
 * @qpci: the function, unbinding, its device down (qhca_eth_down())
 */
void qhca_eth_remove(struct qhca_pci *qpci)
{
	struct qhca_eth *eth = qpci->eth;

	if (!eth)
		return;
	qpci->eth = NULL;
	/* Detached: ndo_stop has no queues to destroy. */
	unregister_netdev(eth->ndev);
	cancel_work_sync(&eth->reset_work);
	free_netdev(eth->ndev);
}
