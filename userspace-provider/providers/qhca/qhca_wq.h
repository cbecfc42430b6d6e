/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Send and receive queue rings: slots, free space and completions.
 *
 * Both indices run free over 32 bits; the doorbell and the CQE carry their
 * low 16 bits, which identify a slot as long as a ring holds at most 2^15
 * entries (QHCA_WQ_MAX_DEPTH).
 */
#ifndef QHCA_WQ_H
#define QHCA_WQ_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "qhca.h"
#include "qhca_db.h"

static inline void *qhca_wq_slot(struct qhca_wq *wq, uint32_t idx)
{
	return (uint8_t *)wq->ring + (size_t)(idx & (wq->depth - 1)) * wq->stride;
}

/* Called with wq->lock held, so pi is ours; ci only ever grows. */
static inline bool qhca_wq_full(struct qhca_wq *wq, uint32_t pi)
{
	return pi - atomic_load_explicit(&wq->ci, memory_order_acquire) >=
	       wq->depth;
}

/*
 * A CQE for the WQE at wqe_idx frees its slot and every earlier one.  A
 * wqe_idx outside the outstanding WQEs would free slots the device never
 * consumed: ignore it rather than let a later post overwrite live WQEs.
 */
static inline bool qhca_wq_complete(struct qhca_wq *wq, uint16_t wqe_idx)
{
	uint32_t ci = atomic_load_explicit(&wq->ci, memory_order_relaxed);
	uint32_t pi = atomic_load_explicit(&wq->pi, memory_order_acquire);
	uint32_t done = ((uint32_t)wqe_idx - ci) & (wq->depth - 1);

	if (done >= pi - ci)
		return false;
	atomic_store_explicit(&wq->ci, ci + done + 1, memory_order_release);
	return true;
}

/*
 * Hand the WQEs from start to pi to the device, if any: the index is
 * published for the pollers, then the doorbell at db rings for queue qn.
 * Called with wq->lock held.
 */
static inline void qhca_wq_publish(struct qhca_context *ctx,
				   struct qhca_wq *wq, uint32_t db,
				   uint32_t qn, uint32_t start, uint32_t pi)
{
	if (pi == start)
		return;
	atomic_store_explicit(&wq->pi, pi, memory_order_release);
	qhca_ring_db(ctx, db, qn, pi);
}

/* After the QP went to RESET the device starts both rings over at 0. */
static inline void qhca_wq_reset(struct qhca_wq *wq)
{
	pthread_spin_lock(&wq->lock);
	atomic_store_explicit(&wq->pi, 0, memory_order_relaxed);
	atomic_store_explicit(&wq->ci, 0, memory_order_relaxed);
	pthread_spin_unlock(&wq->lock);
}

#endif /* QHCA_WQ_H */
