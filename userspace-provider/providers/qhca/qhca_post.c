// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libqhca: posting work requests, without a system call.
 *
 * Each call writes its WQEs into the mapped ring at the producer index and
 * then rings the QP's doorbell once with the new index.  The device reads
 * a WQE only after the doorbell that covers it, so WQEs need no valid bit,
 * and the lock keeps both the slots and the doorbells of one queue in
 * order.
 */
#include <errno.h>
#include <stdint.h>

#include "qhca.h"
#include "qhca_ah.h"
#include "qhca_verbs.h"
#include "qhca_wq.h"
#include "qhca_wqe.h"

/*
 * The operands of wr that its opcode's row says the WQE carries: the
 * ibv_send_wr keeps them in a union (wr.rdma or wr.atomic, imm_data or
 * invalidate_rkey), so only those may be read.
 */
static void qhca_wr_operands_of(const struct ibv_send_wr *wr, uint16_t flags,
				struct qhca_wr_operands *op)
{
	if (flags & QHCA_WR_F_ATOMIC) {
		op->remote_addr = wr->wr.atomic.remote_addr;
		op->rkey = wr->wr.atomic.rkey;
		op->compare_add = wr->wr.atomic.compare_add;
		op->swap = wr->wr.atomic.swap;
	} else if (flags & QHCA_WR_F_REMOTE_ADDR) {
		op->remote_addr = wr->wr.rdma.remote_addr;
		op->rkey = wr->wr.rdma.rkey;
	}
	if (flags & QHCA_WR_F_INV)
		op->rkey = wr->invalidate_rkey;
	if (flags & QHCA_WR_F_IMM)
		op->imm_data = wr->imm_data;
}

/*
 * A memory operation: nothing but its key or its bind, no data, so no
 * SGEs and nothing inline.
 */
static int qhca_set_local_wqe(struct qhca_qp *qp, struct qhca_sq_wqe *wqe,
			      const struct ibv_send_wr *wr, uint16_t flags)
{
	struct qhca_wr_operands op = {};

	if (wr->send_flags & IBV_SEND_INLINE)
		return EINVAL;
	/* Through the SQ: type 2 windows only (ibv_bind_mw: type 1). */
	if (wr->opcode == IBV_WR_BIND_MW) {
		if (!wr->bind_mw.mw)
			return EINVAL;
		qhca_wqe_init(qp, wqe, wr->wr_id, wr->opcode, wr->send_flags);
		qhca_wqe_set_bind(wqe, wr->bind_mw.mw, wr->bind_mw.rkey,
				  &wr->bind_mw.bind_info);
		return 0;
	}
	qhca_wr_operands_of(wr, flags, &op);
	qhca_wqe_build(qp, wqe, wr->wr_id, wr->opcode, wr->send_flags, &op);
	return 0;
}

/*
 * Whether the QP's type may post the opcode is the device's to say: it
 * completes a WQE it may not with LOC_QP_OP_ERR, as the verbs want, so
 * that ibv_post_send() fails only for what no QP could post.
 */
static int qhca_set_send_wqe(struct qhca_qp *qp, struct qhca_sq_wqe *wqe,
			     const struct ibv_send_wr *wr)
{
	const struct qhca_wr_info *info =
		qhca_ibv_wr_info(to_qhca_ctx(qp->ibv_qp.context), wr->opcode);
	struct qhca_wr_operands op = {};
	int err, i;

	if (!info || wr->send_flags & ~QHCA_SEND_FLAGS || wr->num_sge < 0)
		return EINVAL;
	if (info->flags & QHCA_WR_F_LOCAL)
		return qhca_set_local_wqe(qp, wqe, wr, info->flags);

	qhca_wr_operands_of(wr, info->flags, &op);
	qhca_wqe_build(qp, wqe, wr->wr_id, wr->opcode, wr->send_flags, &op);

	/*
	 * UD: the address vector takes the place of the remote address and
	 * atomic operands.  An opcode other than SEND(_WITH_IMM) still goes
	 * to the device, which completes it with LOC_QP_OP_ERR.
	 */
	if (qp->ibv_qp.qp_type == IBV_QPT_UD) {
		if (!wr->wr.ud.ah)
			return EINVAL;
		err = qhca_wqe_set_ud((struct qhca_sq_wqe_ud *)wqe,
				      to_qhca_ah(wr->wr.ud.ah),
				      wr->wr.ud.remote_qpn,
				      wr->wr.ud.remote_qkey);
		if (err)
			return err;
	}
	/* XRC: the target's SRQ, which the device puts in the XRCETH. */
	if (qp->ibv_qp.qp_type == IBV_QPT_XRC_SEND)
		wqe->xrc_srqn = htole32(wr->qp_type.xrc.remote_srqn);

	/*
	 * Inline applies to the data we send; reads and atomics ignore it.
	 * The bytes the SGEs describe are copied into the WQE.
	 */
	if (wr->send_flags & IBV_SEND_INLINE &&
	    info->flags & QHCA_WR_F_INLINE) {
		wqe->flags |= QHCA_WQE_F_INLINE;
		for (i = 0; i < wr->num_sge; i++) {
			err = qhca_wqe_add_inline(qp, wqe,
						  (void *)(uintptr_t)wr->sg_list[i].addr,
						  wr->sg_list[i].length);
			if (err)
				return err;
		}
		return 0;
	}
	return qhca_wqe_set_sgl(qp, wqe, wr->sg_list, wr->num_sge);
}

int qhca_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		   struct ibv_send_wr **bad_wr)
{
	struct qhca_qp *qp = to_qhca_qp(ibqp);
	struct qhca_wq *sq = &qp->sq;
	uint32_t pi, start;
	int err = 0;

	pthread_spin_lock(&sq->lock);
	pi = atomic_load_explicit(&sq->pi, memory_order_relaxed);
	start = pi;

	/*
	 * Sends are an immediate error before RTS; in ERR the device
	 * flushes them, as it should.
	 */
	if (ibqp->state == IBV_QPS_RESET || ibqp->state == IBV_QPS_INIT ||
	    ibqp->state == IBV_QPS_RTR)
		err = EINVAL;

	for (; wr && !err; wr = wr->next) {
		if (qhca_wq_full(sq, pi)) {
			err = ENOMEM;
			break;
		}
		err = qhca_set_send_wqe(qp, qhca_wq_slot(sq, pi), wr);
		if (err)
			break;
		pi++;
	}
	if (err)
		*bad_wr = wr;

	qhca_wq_publish(to_qhca_ctx(ibqp->context), sq, QHCA_DB_SQ,
			ibqp->qp_num, start, pi);
	pthread_spin_unlock(&sq->lock);
	return err;
}

int qhca_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr)
{
	struct qhca_qp *qp = to_qhca_qp(ibqp);
	struct qhca_wq *rq = &qp->rq;
	uint32_t pi, start;
	int err = 0;

	pthread_spin_lock(&rq->lock);
	pi = atomic_load_explicit(&rq->pi, memory_order_relaxed);
	start = pi;

	/* The device ignores the doorbells of a QP in RESET. */
	if (ibqp->state == IBV_QPS_RESET)
		err = EINVAL;
	/* A QP on an SRQ has no RQ: receives are posted to the SRQ. */
	if (qp->srq)
		err = EINVAL;

	for (; wr && !err; wr = wr->next) {
		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > rq->max_sge) {
			err = EINVAL;
			break;
		}
		if (qhca_wq_full(rq, pi)) {
			err = ENOMEM;
			break;
		}

		qhca_rq_wqe_set(qhca_wq_slot(rq, pi), wr);
		pi++;
	}
	if (err)
		*bad_wr = wr;

	qhca_wq_publish(to_qhca_ctx(ibqp->context), rq, QHCA_DB_RQ,
			ibqp->qp_num, start, pi);
	pthread_spin_unlock(&rq->lock);
	return err;
}
