/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Shared receive queues: the ring, and the slots that completions free.
 *
 * The device takes WQEs from the ring in order, but their completions
 * come back through the CQs of every QP on the SRQ, in any order.  A
 * completed slot is marked, and the consumer index moves over marked
 * slots from the oldest outstanding one on.
 */
#ifndef QHCA_SRQ_H
#define QHCA_SRQ_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <infiniband/driver.h>

#include "qhca.h"

struct qhca_srq {
	/* ibv_create_srq_ex() needs the verbs_srq (XRC SRQs). */
	union {
		struct ibv_srq ibv_srq;
		struct verbs_srq verbs_srq;
	};
	pthread_spinlock_t lock;	/* posters and completions */
	void *ring;
	size_t map_size;
	uint32_t srqn;
	uint32_t depth;			/* a power of two */
	uint32_t stride;		/* bytes per WQE */
	uint32_t max_sge;
	uint32_t pi;			/* free-running: WQEs posted */
	uint32_t ci;			/* free-running: oldest not completed */
	uint8_t *done;			/* per slot: completed, past ci */
	/* The PD or parent domain it was made on: done's allocator. */
	struct ibv_pd *pd;
	bool done_custom;		/* from pd's allocator */
	bool lost;			/* a resize's new ring is not mapped */
	/* XRC: the CQ its receives complete to, and its link there. */
	struct qhca_cq *xrc_cq;
	struct list_node xrc_entry;
};

static inline struct qhca_srq *to_qhca_srq(struct ibv_srq *ibsrq)
{
	return container_of(ibsrq, struct qhca_srq, ibv_srq);
}

bool qhca_srq_complete(struct qhca_srq *srq, uint16_t wqe_idx);
struct qhca_srq *qhca_srq_alloc(void);
struct qhca_create_srq_resp;
int qhca_srq_setup(struct qhca_context *ctx, struct qhca_srq *srq,
		   const struct qhca_create_srq_resp *resp,
		   struct ibv_srq_attr *attr);
void qhca_srq_free(struct qhca_srq *srq);

#endif /* QHCA_SRQ_H */
