// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Work requests of kernel consumers: WQEs written into the SQ and RQ rings
 * and the doorbell rung through the kernel UAR, the same way libqhca does
 * it from user space.  Slots are free again once a CQE retires them.
 */

#include <linux/bitfield.h>

#include "qhca.h"

#define QHCA_SEND_FLAGS	(IB_SEND_FENCE | IB_SEND_SIGNALED | \
			 IB_SEND_SOLICITED | IB_SEND_INLINE)

/*
 * The interface's send opcodes are ib_wr_opcode's values: a work
 * request's opcode goes into the WQE and looks up qhca_wr_info() as it is.
 */
#define QHCA_SAME_WR(op) \
	static_assert((int)QHCA_WR_##op == (int)IB_WR_##op)
QHCA_SAME_WR(RDMA_WRITE);
QHCA_SAME_WR(RDMA_WRITE_WITH_IMM);
QHCA_SAME_WR(SEND);
QHCA_SAME_WR(SEND_WITH_IMM);
QHCA_SAME_WR(RDMA_READ);
QHCA_SAME_WR(ATOMIC_CMP_AND_SWP);
QHCA_SAME_WR(ATOMIC_FETCH_AND_ADD);
QHCA_SAME_WR(LOCAL_INV);
QHCA_SAME_WR(BIND_MW);
QHCA_SAME_WR(SEND_WITH_INV);
QHCA_SAME_WR(REG_MR);
QHCA_SAME_WR(FLUSH);
QHCA_SAME_WR(ATOMIC_WRITE);

/* The WQE at free-running index @idx.  Also the NIC's (qhca_netdev.c). */
void *qhca_wq_wqe(struct qhca_wq *wq, u32 idx)
{
	return wq->buf.va + ((size_t)(idx & (wq->depth - 1)) << wq->stride_log2);
}

static bool qhca_wq_full(const struct qhca_wq *wq)
{
	return wq->head - wq->tail >= wq->depth;
}

/**
 * qhca_wq_done - how many WQEs a CQE retires
 * @wq: the SQ or RQ
 * @tail: its oldest outstanding WQE, free-running
 * @wqe_idx: the WQE the CQE names
 *
 * The CQE retires that WQE and every older one.  The distance from @tail
 * is taken modulo the ring, so it does not matter whether the device
 * reports slots or free-running indices; a CQE for nothing outstanding
 * retires none (0).
 */
u32 qhca_wq_done(const struct qhca_wq *wq, u32 tail, u16 wqe_idx)
{
	u32 done = ((u32)wqe_idx - tail) & (wq->depth - 1);

	return done < READ_ONCE(wq->head) - tail ? done + 1 : 0;
}

/* A CQE retired the WQE in slot @wqe_idx and, on the SQ, every older one. */
void qhca_wq_retire(struct qhca_wq *wq, u16 wqe_idx)
{
	unsigned long flags;

	spin_lock_irqsave(&wq->lock, flags);
	wq->tail += qhca_wq_done(wq, wq->tail, wqe_idx);
	spin_unlock_irqrestore(&wq->lock, flags);
}

/**
 * qhca_wq_ring_db - the WQEs up to @wq->head are in memory: tell the device
 * @wq: the SQ or RQ
 * @db: the doorbell page of the QP's UAR
 * @off: QHCA_DB_SQ or QHCA_DB_RQ
 * @qpn: the QP
 */
void qhca_wq_ring_db(const struct qhca_wq *wq, void __iomem *db, u32 off,
		     u32 qpn)
{
	/* The device must not see the doorbell before the WQEs. */
	wmb();
	writel(FIELD_PREP(QHCA_DB_QUEUE_NUM, qpn) |
	       FIELD_PREP(QHCA_DB_QUEUE_IDX, (u16)wq->head), db + off);
}

static void qhca_ring_db(struct qhca_qp *qp, struct qhca_wq *wq, u32 off)
{
	qhca_wq_ring_db(wq, qp->db, off, qp->ibqp.qp_num);
}

/* Inline data: the SGEs' bytes, copied from kernel virtual addresses. */
static int qhca_wqe_inline(struct qhca_qp *qp, const struct ib_send_wr *wr,
			   struct qhca_sq_wqe *wqe)
{
	u8 *data = (u8 *)(wqe + 1);
	u32 len = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++) {
		const struct ib_sge *sge = &wr->sg_list[i];

		if (sge->length > qp->max_inline - len)
			return -EINVAL;
		memcpy(data + len, (void *)(uintptr_t)sge->addr, sge->length);
		len += sge->length;
	}
	wqe->inline_len = cpu_to_le32(len);
	wqe->flags |= QHCA_WQE_F_INLINE;
	return 0;
}

/* One SGE as the device reads it.  Also the NIC's (qhca_netdev.c). */
void qhca_wqe_sge(struct qhca_sge *sge, u64 addr, u32 length, u32 lkey)
{
	sge->addr = cpu_to_le64(addr);
	sge->length = cpu_to_le32(length);
	sge->lkey = cpu_to_le32(lkey);
}

static void qhca_wqe_sges(struct qhca_sge *dst, const struct ib_sge *src,
			  int num_sge)
{
	int i;

	for (i = 0; i < num_sge; i++)
		qhca_wqe_sge(&dst[i], src[i].addr, src[i].length, src[i].lkey);
}

/*
 * UD and GSI: the address vector of the AH (with the next hop's MAC on an
 * Ethernet port) and the destination QP and Q_Key.
 */
static int qhca_wqe_ud_av(const struct ib_send_wr *wr,
			  struct qhca_sq_wqe *wqe)
{
	struct qhca_sq_wqe_ud *ud = (struct qhca_sq_wqe_ud *)wqe;
	const struct ib_ud_wr *uwr = ud_wr(wr);

	if (!uwr->ah || uwr->remote_qpn & ~QHCA_UD_QPN_MASK)
		return -EINVAL;
	qhca_ah_to_wqe(to_qah(uwr->ah), ud);
	ud->dest_qpn = cpu_to_le32(uwr->remote_qpn);
	/*
	 * The high bit asks the device for the QP's own Q_Key: the GSI Q_Key
	 * has it, and QP1's own Q_Key is that one (ib_mad sets it).
	 */
	ud->qkey = cpu_to_le32(uwr->remote_qkey);
	return 0;
}

/*
 * Fast registration: the device reads the MR's page list, as map_mr_sg
 * left it, when the WQE runs; the key is the one the consumer chose with
 * ib_update_fast_reg_key().
 */
static int qhca_wqe_reg_mr(const struct ib_send_wr *wr,
			   struct qhca_sq_wqe *wqe)
{
	struct qhca_sq_wqe_reg_mr *r = (struct qhca_sq_wqe_reg_mr *)wqe;
	const struct ib_reg_wr *rw = reg_wr(wr);
	struct qhca_mr *mr = to_qmr(rw->mr);
	int access = rw->access & ~IB_ACCESS_OPTIONAL;

	static_assert(sizeof(*r) == sizeof(*wqe));
	if (!mr->max_pages || !mr->npages || access & ~QHCA_ACCESS_ALL)
		return -EINVAL;
	r->mr_key = cpu_to_le32(rw->key);
	r->iova = cpu_to_le64(mr->ibmr.iova);
	r->length = cpu_to_le64(mr->ibmr.length);
	r->npages = cpu_to_le32(mr->npages);
	r->access = access;
	r->page_shift = ilog2(mr->ibmr.page_size);
	r->pbl_addr = cpu_to_le64(mr->pl.dma);
	return 0;
}

/*
 * Refused here, as at every post: an opcode the interface does not have,
 * BIND_MW (the kernel's verbs have no work request that describes a
 * bind), FLUSH (nor one with its placement type and level, and no kernel
 * consumer posts it; ATOMIC_WRITE is an rdma_wr() with 8 bytes of data),
 * inline data where no data goes out, and on a UD or GSI QP anything but
 * a send, which its WQE, with an address vector in place of
 * the remote address, cannot carry.  A connected QP's WQE can carry any
 * opcode: one its type may not post goes to the device, which completes
 * it with LOC_QP_OP_ERR, as it does for user space.  There is no RAW_ETH
 * QP here: the NIC's is qhca_netdev.c's own and IB_QPT_RAW_PACKET is
 * refused at create (qhca_qp_type_ok()): query_device offers no raw
 * packet capability (raw_packet_caps 0).
 */
static const struct qhca_wr_info *qhca_wr_check(const struct qhca_qp *qp,
						const struct ib_send_wr *wr)
{
	const struct qhca_wr_info *info = qhca_wr_info(wr->opcode);

	if (!info || wr->opcode == IB_WR_BIND_MW || wr->opcode == IB_WR_FLUSH ||
	    (wr->send_flags & ~QHCA_SEND_FLAGS) || wr->num_sge < 0)
		return NULL;
	if ((wr->send_flags & IB_SEND_INLINE) &&
	    !(info->flags & QHCA_WR_F_INLINE))
		return NULL;
	/* IB_QPT_GSI is QHCA_QPT_GSI (qhca_qp.c), whose row is UD's. */
	if (qhca_qp_is_ud(qp) && !qhca_wr_allowed(wr->opcode, qp->ibqp.qp_type))
		return NULL;
	return info;
}

static int qhca_build_send_wqe(struct qhca_qp *qp, const struct ib_send_wr *wr,
			       struct qhca_sq_wqe *wqe)
{
	const struct qhca_wr_info *info = qhca_wr_check(qp, wr);
	int err;

	if (!info)
		return -EINVAL;

	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = cpu_to_le64(wr->wr_id);
	wqe->opcode = wr->opcode;
	if (wr->send_flags & IB_SEND_SIGNALED)
		wqe->flags |= QHCA_WQE_F_SIGNALED;
	if (wr->send_flags & IB_SEND_SOLICITED)
		wqe->flags |= QHCA_WQE_F_SOLICITED;
	if (wr->send_flags & IB_SEND_FENCE)
		wqe->flags |= QHCA_WQE_F_FENCE;

	/* The bytes as posted, in network order. */
	if (info->flags & QHCA_WR_F_IMM)
		wqe->imm_data = wr->ex.imm_data;
	if (info->flags & QHCA_WR_F_INV)
		wqe->rkey = cpu_to_le32(wr->ex.invalidate_rkey);

	if (wr->opcode == IB_WR_REG_MR)
		return qhca_wqe_reg_mr(wr, wqe);
	/* LOCAL_INV: the key is all it needs. */
	if (info->flags & QHCA_WR_F_LOCAL)
		return 0;
	if (info->flags & QHCA_WR_F_ATOMIC) {
		wqe->remote_addr = cpu_to_le64(atomic_wr(wr)->remote_addr);
		wqe->rkey = cpu_to_le32(atomic_wr(wr)->rkey);
		wqe->compare_add = cpu_to_le64(atomic_wr(wr)->compare_add);
		wqe->swap = cpu_to_le64(atomic_wr(wr)->swap);
	} else if (info->flags & QHCA_WR_F_REMOTE_ADDR) {
		wqe->remote_addr = cpu_to_le64(rdma_wr(wr)->remote_addr);
		wqe->rkey = cpu_to_le32(rdma_wr(wr)->rkey);
	}

	static_assert(sizeof(struct qhca_sq_wqe_ud) == sizeof(*wqe));
	if (qhca_qp_is_ud(qp)) {
		err = qhca_wqe_ud_av(wr, wqe);
		if (err)
			return err;
	}

	if (wr->send_flags & IB_SEND_INLINE)
		return qhca_wqe_inline(qp, wr, wqe);

	if (wr->num_sge > qp->sq.max_sge)
		return -EINVAL;
	wqe->num_sge = wr->num_sge;
	qhca_wqe_sges((struct qhca_sge *)(wqe + 1), wr->sg_list, wr->num_sge);
	return 0;
}

int qhca_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		   const struct ib_send_wr **bad_wr)
{
	struct qhca_qp *qp = to_qqp(ibqp);
	struct qhca_wq *wq = &qp->sq;
	unsigned long flags;
	u32 posted = 0;
	int err = 0;

	/*
	 * A user QP is posted to by libqhca, never through the kernel.  The
	 * device ignores doorbells in RESET: nothing may be posted then.
	 */
	if (!qp->kernel || READ_ONCE(qp->state) == IB_QPS_RESET) {
		*bad_wr = wr;
		return -EINVAL;
	}

	spin_lock_irqsave(&wq->lock, flags);
	for (; wr; wr = wr->next) {
		if (qhca_wq_full(wq)) {
			err = -ENOMEM;
			break;
		}
		err = qhca_build_send_wqe(qp, wr, qhca_wq_wqe(wq, wq->head));
		if (err)
			break;
		wq->head++;
		posted++;
	}
	if (posted)
		qhca_ring_db(qp, wq, QHCA_DB_SQ);
	spin_unlock_irqrestore(&wq->lock, flags);

	if (err)
		*bad_wr = wr;
	return err;
}

int qhca_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		   const struct ib_recv_wr **bad_wr)
{
	struct qhca_qp *qp = to_qqp(ibqp);
	struct qhca_wq *wq = &qp->rq;
	struct qhca_rq_wqe *wqe;
	unsigned long flags;
	u32 posted = 0;
	int err = 0;

	/* A QP on an SRQ has no RQ: receives go to the SRQ. */
	if (!qp->kernel || READ_ONCE(qp->state) == IB_QPS_RESET ||
	    qp->ibqp.srq) {
		*bad_wr = wr;
		return -EINVAL;
	}

	spin_lock_irqsave(&wq->lock, flags);
	for (; wr; wr = wr->next) {
		if (qhca_wq_full(wq)) {
			err = -ENOMEM;
			break;
		}
		if (wr->num_sge < 0 || wr->num_sge > qp->rq.max_sge) {
			err = -EINVAL;
			break;
		}
		wqe = qhca_wq_wqe(wq, wq->head);
		memset(wqe, 0, sizeof(*wqe));
		wqe->wr_id = cpu_to_le64(wr->wr_id);
		wqe->num_sge = wr->num_sge;
		qhca_wqe_sges((struct qhca_sge *)(wqe + 1), wr->sg_list,
			      wr->num_sge);
		wq->head++;
		posted++;
	}
	if (posted)
		qhca_ring_db(qp, wq, QHCA_DB_RQ);
	spin_unlock_irqrestore(&wq->lock, flags);

	if (err)
		*bad_wr = wr;
	return err;
}
