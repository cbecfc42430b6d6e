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
#include <string.h>

#include "qhca.h"
#include "qhca_ah.h"
#include "qhca_db.h"
#include "qhca_verbs.h"
#include "qhca_wq.h"
#include "qhca_wqe.h"

static int qhca_set_send_wqe(struct qhca_qp *qp, struct qhca_sq_wqe *wqe,
			     const struct ibv_send_wr *wr)
{
	struct qhca_sge *sge = qhca_wqe_sges(wqe);
	int err, i;

	if (wr->send_flags & ~QHCA_SEND_FLAGS || wr->num_sge < 0)
		return EINVAL;

	switch (wr->opcode) {
	case IBV_WR_SEND:
		qhca_wqe_init(qp, wqe, wr->wr_id, QHCA_WR_SEND,
			      wr->send_flags);
		break;
	case IBV_WR_SEND_WITH_IMM:
		qhca_wqe_init(qp, wqe, wr->wr_id, QHCA_WR_SEND_WITH_IMM,
			      wr->send_flags);
		wqe->imm_data = wr->imm_data;
		break;
	case IBV_WR_RDMA_WRITE:
		qhca_wqe_init(qp, wqe, wr->wr_id, QHCA_WR_RDMA_WRITE,
			      wr->send_flags);
		qhca_wqe_set_rdma(wqe, wr->wr.rdma.remote_addr,
				  wr->wr.rdma.rkey);
		break;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		qhca_wqe_init(qp, wqe, wr->wr_id, QHCA_WR_RDMA_WRITE_WITH_IMM,
			      wr->send_flags);
		wqe->imm_data = wr->imm_data;
		qhca_wqe_set_rdma(wqe, wr->wr.rdma.remote_addr,
				  wr->wr.rdma.rkey);
		break;
	case IBV_WR_RDMA_READ:
		qhca_wqe_init(qp, wqe, wr->wr_id, QHCA_WR_RDMA_READ,
			      wr->send_flags);
		qhca_wqe_set_rdma(wqe, wr->wr.rdma.remote_addr,
				  wr->wr.rdma.rkey);
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		qhca_wqe_init(qp, wqe, wr->wr_id, QHCA_WR_ATOMIC_CMP_AND_SWP,
			      wr->send_flags);
		qhca_wqe_set_atomic(wqe, wr->wr.atomic.remote_addr,
				    wr->wr.atomic.rkey,
				    wr->wr.atomic.compare_add,
				    wr->wr.atomic.swap);
		break;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		qhca_wqe_init(qp, wqe, wr->wr_id, QHCA_WR_ATOMIC_FETCH_AND_ADD,
			      wr->send_flags);
		qhca_wqe_set_atomic(wqe, wr->wr.atomic.remote_addr,
				    wr->wr.atomic.rkey,
				    wr->wr.atomic.compare_add, 0);
		break;
	case IBV_WR_SEND_WITH_INV:
		qhca_wqe_init(qp, wqe, wr->wr_id, QHCA_WR_SEND_WITH_INV,
			      wr->send_flags);
		wqe->rkey = htole32(wr->invalidate_rkey);
		break;
	case IBV_WR_LOCAL_INV:
		/* Nothing but the key: no data, so no SGEs. */
		if (wr->send_flags & IBV_SEND_INLINE)
			return EINVAL;
		qhca_wqe_init(qp, wqe, wr->wr_id, QHCA_WR_LOCAL_INV,
			      wr->send_flags);
		wqe->rkey = htole32(wr->invalidate_rkey);
		return 0;
	case IBV_WR_BIND_MW:
		/* Through the SQ: type 2 windows only (ibv_bind_mw: type 1). */
		if (wr->send_flags & IBV_SEND_INLINE || !wr->bind_mw.mw)
			return EINVAL;
		qhca_wqe_init(qp, wqe, wr->wr_id, QHCA_WR_BIND_MW,
			      wr->send_flags);
		qhca_wqe_set_bind(wqe, wr->bind_mw.mw, wr->bind_mw.rkey,
				  &wr->bind_mw.bind_info);
		return 0;
	default:
		return EINVAL;
	}

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
	if (wr->send_flags & IBV_SEND_INLINE && qhca_wqe_may_inline(wqe)) {
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

	if ((uint32_t)wr->num_sge > qp->sq.max_sge)
		return EINVAL;
	for (i = 0; i < wr->num_sge; i++)
		qhca_wqe_set_sge(&sge[i], wr->sg_list[i].addr,
				 wr->sg_list[i].length, wr->sg_list[i].lkey);
	wqe->num_sge = wr->num_sge;
	return 0;
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

	if (pi != start) {
		atomic_store_explicit(&sq->pi, pi, memory_order_release);
		qhca_ring_db(to_qhca_ctx(ibqp->context), QHCA_DB_SQ,
			     ibqp->qp_num, pi);
	}
	pthread_spin_unlock(&sq->lock);
	return err;
}

int qhca_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr)
{
	struct qhca_qp *qp = to_qhca_qp(ibqp);
	struct qhca_wq *rq = &qp->rq;
	struct qhca_rq_wqe *wqe;
	struct qhca_sge *sge;
	uint32_t pi, start;
	int err = 0;
	int i;

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

		wqe = qhca_wq_slot(rq, pi);
		memset(wqe, 0, sizeof(*wqe));
		wqe->wr_id = htole64(wr->wr_id);
		wqe->num_sge = wr->num_sge;
		sge = (struct qhca_sge *)(wqe + 1);
		for (i = 0; i < wr->num_sge; i++)
			qhca_wqe_set_sge(&sge[i], wr->sg_list[i].addr,
					 wr->sg_list[i].length,
					 wr->sg_list[i].lkey);
		pi++;
	}
	if (err)
		*bad_wr = wr;

	if (pi != start) {
		atomic_store_explicit(&rq->pi, pi, memory_order_release);
		qhca_ring_db(to_qhca_ctx(ibqp->context), QHCA_DB_RQ,
			     ibqp->qp_num, pi);
	}
	pthread_spin_unlock(&rq->lock);
	return err;
}
