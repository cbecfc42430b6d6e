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
#include "qhca_db.h"
#include "qhca_verbs.h"
#include "qhca_wq.h"

#define QHCA_SEND_FLAGS \
	(IBV_SEND_FENCE | IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | \
	 IBV_SEND_INLINE)

static void qhca_set_sge(struct qhca_sge *dst, const struct ibv_sge *src)
{
	dst->addr = htole64(src->addr);
	dst->length = htole32(src->length);
	dst->lkey = htole32(src->lkey);
}

static void qhca_set_rdma(struct qhca_sq_wqe *wqe,
			  const struct ibv_send_wr *wr)
{
	wqe->remote_addr = htole64(wr->wr.rdma.remote_addr);
	wqe->rkey = htole32(wr->wr.rdma.rkey);
}

/* compare_add is the value to add for FETCH_AND_ADD. */
static void qhca_set_atomic(struct qhca_sq_wqe *wqe,
			    const struct ibv_send_wr *wr)
{
	wqe->remote_addr = htole64(wr->wr.atomic.remote_addr);
	wqe->rkey = htole32(wr->wr.atomic.rkey);
	wqe->compare_add = htole64(wr->wr.atomic.compare_add);
}

/* Copy the bytes the SGEs describe into the WQE, after its header. */
static int qhca_set_inline(struct qhca_qp *qp, struct qhca_sq_wqe *wqe,
			   const struct ibv_send_wr *wr)
{
	uint8_t *data = (uint8_t *)(wqe + 1);
	size_t len = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++) {
		const struct ibv_sge *sge = &wr->sg_list[i];

		if (sge->length > qp->max_inline_data - len)
			return EINVAL;
		memcpy(data + len, (void *)(uintptr_t)sge->addr, sge->length);
		len += sge->length;
	}

	wqe->flags |= QHCA_WQE_F_INLINE;
	wqe->inline_len = htole32(len);
	return 0;
}

static int qhca_set_send_wqe(struct qhca_qp *qp, struct qhca_sq_wqe *wqe,
			     const struct ibv_send_wr *wr)
{
	struct qhca_sge *sge = (struct qhca_sge *)(wqe + 1);
	bool may_inline = false;
	int i;

	if (wr->send_flags & ~QHCA_SEND_FLAGS || wr->num_sge < 0)
		return EINVAL;

	/* The slot may hold an old WQE: reserved fields must read zero. */
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = htole64(wr->wr_id);

	switch (wr->opcode) {
	case IBV_WR_SEND:
		wqe->opcode = QHCA_WR_SEND;
		may_inline = true;
		break;
	case IBV_WR_SEND_WITH_IMM:
		wqe->opcode = QHCA_WR_SEND_WITH_IMM;
		wqe->imm_data = wr->imm_data;
		may_inline = true;
		break;
	case IBV_WR_RDMA_WRITE:
		wqe->opcode = QHCA_WR_RDMA_WRITE;
		qhca_set_rdma(wqe, wr);
		may_inline = true;
		break;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		wqe->opcode = QHCA_WR_RDMA_WRITE_WITH_IMM;
		wqe->imm_data = wr->imm_data;
		qhca_set_rdma(wqe, wr);
		may_inline = true;
		break;
	case IBV_WR_RDMA_READ:
		wqe->opcode = QHCA_WR_RDMA_READ;
		qhca_set_rdma(wqe, wr);
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		wqe->opcode = QHCA_WR_ATOMIC_CMP_AND_SWP;
		qhca_set_atomic(wqe, wr);
		wqe->swap = htole64(wr->wr.atomic.swap);
		break;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		wqe->opcode = QHCA_WR_ATOMIC_FETCH_AND_ADD;
		qhca_set_atomic(wqe, wr);
		break;
	default:
		return EINVAL;
	}

	if (wr->send_flags & IBV_SEND_SIGNALED || qp->sq_sig_all)
		wqe->flags |= QHCA_WQE_F_SIGNALED;
	if (wr->send_flags & IBV_SEND_SOLICITED)
		wqe->flags |= QHCA_WQE_F_SOLICITED;
	if (wr->send_flags & IBV_SEND_FENCE)
		wqe->flags |= QHCA_WQE_F_FENCE;

	/* Inline applies to the data we send; reads and atomics ignore it. */
	if (wr->send_flags & IBV_SEND_INLINE && may_inline)
		return qhca_set_inline(qp, wqe, wr);

	if ((uint32_t)wr->num_sge > qp->sq.max_sge)
		return EINVAL;
	for (i = 0; i < wr->num_sge; i++)
		qhca_set_sge(&sge[i], &wr->sg_list[i]);
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
			qhca_set_sge(&sge[i], &wr->sg_list[i]);
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
