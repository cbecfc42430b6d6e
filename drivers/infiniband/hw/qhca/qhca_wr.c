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

static void *qhca_wq_slot(struct qhca_wq *wq, u32 idx)
{
	return wq->buf.va + ((size_t)(idx & (wq->depth - 1)) << wq->stride_log2);
}

static bool qhca_wq_full(const struct qhca_wq *wq)
{
	return wq->head - wq->tail >= wq->depth;
}

/*
 * A CQE retired the WQE in slot @wqe_idx and, for the SQ, every earlier
 * one.  The distance from the oldest outstanding WQE is taken modulo the
 * ring, so it does not matter whether the device reports slots or
 * free-running indices; a CQE for nothing outstanding is ignored.
 */
void qhca_wq_retire(struct qhca_wq *wq, u16 wqe_idx)
{
	unsigned long flags;
	u32 done;

	spin_lock_irqsave(&wq->lock, flags);
	done = ((u32)wqe_idx - wq->tail) & (wq->depth - 1);
	if (done < wq->head - wq->tail)
		wq->tail += done + 1;
	spin_unlock_irqrestore(&wq->lock, flags);
}

/* The WQEs are in memory; tell the device the new producer index. */
static void qhca_ring_db(struct qhca_qp *qp, struct qhca_wq *wq, u32 off)
{
	/* The device must not see the doorbell before the WQEs. */
	wmb();
	writel(FIELD_PREP(QHCA_DB_QUEUE_NUM, qp->ibqp.qp_num) |
	       FIELD_PREP(QHCA_DB_QUEUE_IDX, (u16)wq->head), qp->db + off);
}

static int qhca_wr_opcode(enum ib_wr_opcode opcode)
{
	switch (opcode) {
	case IB_WR_RDMA_WRITE:
		return QHCA_WR_RDMA_WRITE;
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return QHCA_WR_RDMA_WRITE_WITH_IMM;
	case IB_WR_SEND:
		return QHCA_WR_SEND;
	case IB_WR_SEND_WITH_IMM:
		return QHCA_WR_SEND_WITH_IMM;
	case IB_WR_RDMA_READ:
		return QHCA_WR_RDMA_READ;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return QHCA_WR_ATOMIC_CMP_AND_SWP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return QHCA_WR_ATOMIC_FETCH_AND_ADD;
	case IB_WR_LOCAL_INV:
		return QHCA_WR_LOCAL_INV;
	case IB_WR_SEND_WITH_INV:
		return QHCA_WR_SEND_WITH_INV;
	case IB_WR_REG_MR:
		return QHCA_WR_REG_MR;
	default:
		return -EINVAL;
	}
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

static void qhca_wqe_sges(struct qhca_sge *dst, const struct ib_sge *src,
			  int num_sge)
{
	int i;

	for (i = 0; i < num_sge; i++) {
		dst[i].addr = cpu_to_le64(src[i].addr);
		dst[i].length = cpu_to_le32(src[i].length);
		dst[i].lkey = cpu_to_le32(src[i].lkey);
	}
}

/* UD: the address vector of the AH and the destination QP and Q_Key. */
static int qhca_wqe_ud_av(const struct ib_send_wr *wr,
			  struct qhca_sq_wqe *wqe)
{
	struct qhca_sq_wqe_ud *ud = (struct qhca_sq_wqe_ud *)wqe;
	const struct ib_ud_wr *uwr = ud_wr(wr);

	if (wr->opcode != IB_WR_SEND && wr->opcode != IB_WR_SEND_WITH_IMM)
		return -EINVAL;
	if (!uwr->ah || uwr->remote_qpn & ~QHCA_UD_QPN_MASK)
		return -EINVAL;
	qhca_ah_to_wqe(to_qah(uwr->ah), ud);
	ud->dest_qpn = cpu_to_le32(uwr->remote_qpn);
	/* The high bit asks the device for the QP's own Q_Key. */
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
	if (!mr->max_pages || !mr->npages || access & ~QHCA_ACCESS_ALL ||
	    wr->send_flags & IB_SEND_INLINE)
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

static int qhca_build_send_wqe(struct qhca_qp *qp, const struct ib_send_wr *wr,
			       struct qhca_sq_wqe *wqe)
{
	int opcode = qhca_wr_opcode(wr->opcode);
	int err;

	if (opcode < 0 || (wr->send_flags & ~QHCA_SEND_FLAGS) ||
	    wr->num_sge < 0)
		return -EINVAL;

	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = cpu_to_le64(wr->wr_id);
	wqe->opcode = opcode;
	if (wr->send_flags & IB_SEND_SIGNALED)
		wqe->flags |= QHCA_WQE_F_SIGNALED;
	if (wr->send_flags & IB_SEND_SOLICITED)
		wqe->flags |= QHCA_WQE_F_SOLICITED;
	if (wr->send_flags & IB_SEND_FENCE)
		wqe->flags |= QHCA_WQE_F_FENCE;

	switch (wr->opcode) {
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_SEND_WITH_IMM:
		/* The bytes as posted, in network order. */
		wqe->imm_data = wr->ex.imm_data;
		break;
	default:
		break;
	}

	switch (wr->opcode) {
	case IB_WR_REG_MR:
		return qp->ibqp.qp_type == IB_QPT_UD ? -EINVAL :
		       qhca_wqe_reg_mr(wr, wqe);
	case IB_WR_LOCAL_INV:
		if (qp->ibqp.qp_type == IB_QPT_UD ||
		    wr->send_flags & IB_SEND_INLINE)
			return -EINVAL;
		wqe->rkey = cpu_to_le32(wr->ex.invalidate_rkey);
		return 0;
	case IB_WR_SEND_WITH_INV:
		wqe->rkey = cpu_to_le32(wr->ex.invalidate_rkey);
		break;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		wqe->remote_addr = cpu_to_le64(rdma_wr(wr)->remote_addr);
		wqe->rkey = cpu_to_le32(rdma_wr(wr)->rkey);
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		wqe->remote_addr = cpu_to_le64(atomic_wr(wr)->remote_addr);
		wqe->rkey = cpu_to_le32(atomic_wr(wr)->rkey);
		wqe->compare_add = cpu_to_le64(atomic_wr(wr)->compare_add);
		wqe->swap = cpu_to_le64(atomic_wr(wr)->swap);
		break;
	default:
		break;
	}

	static_assert(sizeof(struct qhca_sq_wqe_ud) == sizeof(*wqe));
	if (qp->ibqp.qp_type == IB_QPT_UD) {
		err = qhca_wqe_ud_av(wr, wqe);
		if (err)
			return err;
	}

	if (wr->send_flags & IB_SEND_INLINE) {
		/* Only data that goes out can be inline. */
		if (wr->opcode == IB_WR_RDMA_READ ||
		    wr->opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
		    wr->opcode == IB_WR_ATOMIC_FETCH_AND_ADD)
			return -EINVAL;
		return qhca_wqe_inline(qp, wr, wqe);
	}

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
		err = qhca_build_send_wqe(qp, wr, qhca_wq_slot(wq, wq->head));
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
		wqe = qhca_wq_slot(wq, wq->head);
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
