/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Completion queue internals shared by the CQ verbs, the poller and the QP
 * verbs, which attach QPs to their CQs and clean CQEs of QPs that are
 * reset or destroyed.
 */
#ifndef QHCA_CQ_H
#define QHCA_CQ_H

#include <stdatomic.h>
#include <stdint.h>

#include <util/udma_barrier.h>

#include "qhca.h"

static inline struct qhca_cqe *qhca_cq_entry(struct qhca_cq *cq, uint32_t idx)
{
	return &cq->ring[idx & (cq->count - 1)];
}

/*
 * The CQE at consumer index idx, or NULL while the device has not written
 * it.  The device writes the owner byte last, with phase 1 on its first
 * pass over the ring (which starts zeroed), 0 on the second, and so on.
 */
static inline struct qhca_cqe *qhca_cq_ready(struct qhca_cq *cq, uint32_t idx)
{
	struct qhca_cqe *cqe = qhca_cq_entry(cq, idx);
	uint8_t phase = idx & cq->count ? 0 : QHCA_CQE_OWNER_PHASE;
	uint8_t owner;

	owner = atomic_load_explicit((_Atomic(uint8_t) *)&cqe->owner,
				     memory_order_relaxed);
	if ((owner & QHCA_CQE_OWNER_PHASE) != phase)
		return NULL;
	/* Read the rest of the entry only after its owner byte. */
	udma_from_device_barrier();
	return cqe;
}

/*
 * Publish the consumer index: the slots before it are free for the device
 * to write again, so our reads of them must be complete first.
 */
static inline void qhca_cq_update_ci(struct qhca_cq *cq)
{
	udma_from_device_barrier();
	atomic_store_explicit((_Atomic(uint32_t) *)cq->dbrec,
			      (__force uint32_t)htole32(cq->ci),
			      memory_order_relaxed);
}

/* qhca_poll.c: give the WQE slots a CQE completes back to their queue. */
void qhca_cqe_free_wqes(struct qhca_cq *cq, const struct qhca_cqe *cqe);

/* qhca_cq.c */
struct qhca_ibv_create_cq_resp;
int qhca_cq_map(struct qhca_context *ctx, struct qhca_cq *cq,
		const struct qhca_ibv_create_cq_resp *resp);
void qhca_cq_attach_qp(struct qhca_qp *qp);
void qhca_cq_detach_qp(struct qhca_qp *qp);
void qhca_cq_clean_qp(struct qhca_qp *qp);

#endif /* QHCA_CQ_H */
