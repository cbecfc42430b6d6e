// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libqhca: polling a completion queue, without a system call.
 *
 * The device's CQE already speaks ibv_wc (qhca_cq.h): a work completion
 * is its fields in host byte order.
 */
#include <errno.h>
#include <stdint.h>

#include "qhca.h"
#include "qhca_cq.h"
#include "qhca_srq.h"
#include "qhca_verbs.h"
#include "qhca_wq.h"

static struct qhca_qp *qhca_cq_find_qp(struct qhca_cq *cq, uint32_t qpn)
{
	struct qhca_cq_link *link;

	if (cq->last_qp && cq->last_qp->ibv_qp.qp_num == qpn)
		return cq->last_qp;

	list_for_each(&cq->qps, link, entry) {
		if (link->qp->ibv_qp.qp_num == qpn) {
			cq->last_qp = link->qp;
			return link->qp;
		}
	}
	return NULL;
}

/* A receive CQE of one of the CQ's XRC SRQs: free its slot. */
static bool qhca_xrc_cqe_free(struct qhca_cq *cq, const struct qhca_cqe *cqe)
{
	uint16_t srqn = le16toh(cqe->srqn);
	struct qhca_srq *srq;

	list_for_each(&cq->xrc_srqs, srq, xrc_entry) {
		if (srq->srqn != srqn)
			continue;
		if (!qhca_srq_complete(srq, le16toh(cqe->wqe_idx)))
			verbs_debug_datapath(verbs_get_ctx(cq->ibv_cq.context),
					     "CQ %u: XRC SRQ %u WQE %u is not outstanding\n",
					     cq->cqn, srqn,
					     le16toh(cqe->wqe_idx));
		return true;
	}
	return false;
}

/*
 * Give the slots the CQE completes back to their queue: a send CQE frees
 * its WQE and every earlier (unsignaled) one, a receive CQE its own.  The
 * opcode tells the queue; flushed receives also carry a receive opcode.
 */
void qhca_cqe_free_wqes(struct qhca_cq *cq, const struct qhca_cqe *cqe)
{
	uint32_t qpn = le32toh(cqe->qpn);
	bool recv = qhca_recv_cqe(cqe);
	struct qhca_qp *qp;

	/* An XRC receive names the TGT QP, maybe another process's. */
	if (recv && cqe->srqn && qhca_xrc_cqe_free(cq, cqe))
		return;
	qp = qhca_cq_find_qp(cq, qpn);
	if (!qp || (recv ? qp->ibv_qp.recv_cq : qp->ibv_qp.send_cq) !=
		   &cq->ibv_cq) {
		verbs_debug_datapath(verbs_get_ctx(cq->ibv_cq.context),
				     "CQ %u: CQE for QP %u, which does not complete here\n",
				     cq->cqn, qpn);
		return;
	}

	/* A receive from an SRQ names the SRQ's slot, not one of the RQ. */
	if (recv && cqe->srqn) {
		if (!qp->srq || qp->srq->srqn != le16toh(cqe->srqn) ||
		    !qhca_srq_complete(qp->srq, le16toh(cqe->wqe_idx)))
			verbs_debug_datapath(verbs_get_ctx(cq->ibv_cq.context),
					     "CQ %u: QP %u SRQ %u WQE %u is not outstanding\n",
					     cq->cqn, qpn, le16toh(cqe->srqn),
					     le16toh(cqe->wqe_idx));
		return;
	}
	if (!qhca_wq_complete(recv ? &qp->rq : &qp->sq, le16toh(cqe->wqe_idx)))
		verbs_debug_datapath(verbs_get_ctx(cq->ibv_cq.context),
				     "CQ %u: QP %u %cQ WQE %u is not outstanding\n",
				     cq->cqn, qpn, recv ? 'R' : 'S',
				     le16toh(cqe->wqe_idx));
}

static void qhca_cqe_to_wc(const struct qhca_cqe *cqe, struct ibv_wc *wc)
{
	wc->wr_id = le64toh(cqe->wr_id);
	wc->status = cqe->status;
	wc->opcode = cqe->opcode;
	wc->vendor_err = 0;
	wc->byte_len = le32toh(cqe->byte_len);
	wc->qp_num = le32toh(cqe->qpn);
	wc->src_qp = le32toh(cqe->src_qp);
	wc->slid = le16toh(cqe->slid);
	/* Zero but in UD receives; the device writes them so. */
	wc->sl = cqe->sl;
	wc->pkey_index = le16toh(cqe->pkey_index);
	wc->dlid_path_bits = cqe->dlid_path_bits;
	wc->wc_flags = qhca_cqe_wc_flags(cqe);
	wc->imm_data = wc->wc_flags & IBV_WC_WITH_IMM ? cqe->imm_data : 0;
	/* SEND_WITH_INV: the rkey it invalidated, in host order. */
	if (wc->wc_flags & IBV_WC_WITH_INV)
		wc->invalidated_rkey = be32toh(cqe->imm_data);
}

/*
 * A ring that is gone (qhca_cq_peek()) fails the poll, unless CQEs came
 * before it: those are returned, and the next poll fails.
 */
int qhca_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc)
{
	struct qhca_cq *cq = to_qhca_cq(ibcq);
	const struct qhca_cqe *cqe;
	uint32_t start;
	int npolled = 0, err = 0;

	pthread_spin_lock(&cq->lock);
	start = cq->ci;
	while (npolled < ne) {
		err = qhca_cq_peek(cq, cq->ci, &cqe);
		if (err)
			break;
		if (!qhca_cq_take_discard(cq, cq->ci)) {
			qhca_cqe_to_wc(cqe, &wc[npolled++]);
			qhca_cqe_free_wqes(cq, cqe);
		}
		cq->ci++;
	}
	if (cq->ci != start)
		qhca_cq_update_ci(cq);
	pthread_spin_unlock(&cq->lock);

	if (err == EIO && !npolled) {
		verbs_debug_datapath(verbs_get_ctx(ibcq->context),
				     "CQ %u: the ring is gone\n", cq->cqn);
		return -EIO;
	}
	return npolled;
}
