/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * libqhca: the rdma-core provider for qhca, QEMU's emulated InfiniBand HCA.
 */
#ifndef QHCA_H
#define QHCA_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ccan/list.h>
#include <infiniband/driver.h>
#include <util/util.h>

#include "qhca_hw.h"

struct qhca_device {
	struct verbs_device ibv_dev;
};

struct qhca_context {
	struct verbs_context ibv_ctx;
	/*
	 * The context's own doorbell page (its UAR) in BAR 2, mapped
	 * write-only.  Every queue of the context rings its doorbells here,
	 * so it lives as long as the context.
	 */
	void *db_page;
	uint32_t db_page_size;
	uint32_t uar_index;
	uint32_t max_inline_data;
	uint32_t hw_version;
	/*
	 * Port 1 as the context found it: an Ethernet (RoCEv2) port makes
	 * its AHs through the kernel, which resolves the destination MAC;
	 * an IB port has them made here.  Neither changes while the device
	 * is up.
	 */
	uint8_t link_layer;		/* IBV_LINK_LAYER_* */
	int gid_tbl_len;
	/*
	 * The device's capabilities as QUERY_DEVICE gave them when the
	 * context was made (IB_UVERBS_DEVICE_*): the IBA 1.5 opcodes are
	 * offered only with theirs.
	 */
	uint64_t device_cap_flags;
};

struct qhca_pd {
	struct ibv_pd ibv_pd;
	uint32_t pdn;
	/*
	 * Parent domains (each holds one on their PD) and the QPs, CQs and
	 * SRQs made on a parent domain (each holds one on that):
	 * ibv_dealloc_pd() is EBUSY while another is held.
	 */
	_Atomic(int) refcount;
	/*
	 * A parent domain (ibv_alloc_parent_domain()): the PD it stands for,
	 * whose handle and number it carries, its thread domain, and the
	 * application's allocator for what the provider allocates for the
	 * queues made on it.  NULL protection_domain: a PD.
	 */
	struct qhca_pd *protection_domain;
	struct qhca_td *td;
	void *(*alloc)(struct ibv_pd *pd, void *pd_context, size_t size,
		       size_t alignment, uint64_t resource_type);
	void (*free)(struct ibv_pd *pd, void *pd_context, void *ptr,
		     uint64_t resource_type);
	void *pd_context;
};

/*
 * A thread domain: the application promises to use the queues made on it
 * from one thread at a time.  libqhca keeps its locks all the same (they
 * are uncontended then); the TD only has to outlive its parent domains.
 */
struct qhca_td {
	struct ibv_td ibv_td;
	_Atomic(int) refcount;
};

/*
 * The resource_type a parent domain's allocator is called with: the
 * queues' rings are the kernel's (mapped from it), so what the provider
 * allocates for a queue is the state beside its ring.
 */
enum qhca_res_type {
	QHCA_RES_CQ_DISCARD = 1,	/* a CQ's discard marks, per slot */
	QHCA_RES_SRQ_DONE = 2,		/* an SRQ's completed marks, per slot */
};

/*
 * A completion queue: a ring of struct qhca_cqe the driver allocated, and
 * beside it the record where we publish our consumer index so that the
 * device knows which slots it may write again.
 *
 * The ring is read through a read-only mapping only.  When the device goes
 * away, ib_uverbs replaces a read-only mapping by the zero page but a
 * writable one by a page shared with every other writable mapping of the
 * context, SQ rings included: CQEs read from there could be WQE bytes.
 * The record shares the ring's mmap entry, so it is written through a
 * second, writable mapping of the same entry that is never read.
 */
struct qhca_cq {
	/* ibv_create_cq_ex() hands out the ibv_cq_ex of the verbs_cq. */
	union {
		struct ibv_cq ibv_cq;
		struct verbs_cq verbs_cq;
	};
	pthread_spinlock_t lock;	/* pollers; everything below */
	void *map;			/* ring and record, read-only */
	void *rec_map;			/* the same, written for the record */
	size_t map_size;
	const struct qhca_cqe *ring;
	__le32 *dbrec;			/* in rec_map */
	uint32_t cqn;
	uint32_t count;			/* entries, a power of two */
	uint32_t ci;			/* free-running consumer index */
	/*
	 * 1.3 devices set QHCA_CQE_OWNER_WRITTEN in every CQE: a CQE in the
	 * right phase without it is a ring the kernel took away.
	 */
	bool check_written;
	/*
	 * One bit per slot: the CQE there belongs to a QP reset or destroyed
	 * since, and the poller passes over it.  The ring being read-only,
	 * this is how such CQEs are removed.
	 */
	uint64_t *discard;
	/* The parent domain that allocated discard, or NULL: calloc(). */
	struct ibv_pd *pd;
	bool discard_custom;		/* from pd's allocator */
	/*
	 * The QPs that complete here, to find the queue a CQE frees slots
	 * of: looked up under the lock, so destroying a QP cannot race
	 * with a poller using it.
	 */
	struct list_head qps;
	struct qhca_qp *last_qp;	/* the one the last CQE was for */
	/* XRC SRQs completing here: their CQEs name a QP of any process. */
	struct list_head xrc_srqs;
	/* ibv_start_poll() .. ibv_end_poll(): the CQE being read, or NULL. */
	const struct qhca_cqe *cur_cqe;
};

/*
 * A send or receive queue: a ring of depth WQEs of stride bytes the driver
 * allocated, mapped here.  Posters write WQEs at the producer index under
 * the lock; pollers advance the consumer index as CQEs free slots.
 */
struct qhca_wq {
	pthread_spinlock_t lock;	/* posters; pi */
	void *ring;
	size_t map_size;
	uint32_t depth;			/* a power of two */
	uint32_t stride;		/* bytes per WQE */
	uint32_t max_sge;
	/*
	 * Free-running.  pi is written under the lock and read by pollers
	 * to bound a completion; ci is written by the poller of the
	 * queue's CQ (under that CQ's lock) and read by posters.
	 */
	_Atomic(uint32_t) pi;
	_Atomic(uint32_t) ci;
};

/* A QP's link in the list of QPs of one of its CQs. */
struct qhca_cq_link {
	struct list_node entry;
	struct qhca_qp *qp;
};

struct qhca_srq;

/*
 * ibv_wr_start() .. ibv_wr_complete(): the WQEs built so far, from the
 * producer index at the start to pi, and the first error, which fails the
 * whole batch.
 */
struct qhca_wr_batch {
	uint32_t start;
	uint32_t pi;
	void *cur;			/* the WQE the ibv_wr_set_* calls fill */
	int err;
};

struct qhca_qp {
	/* ibv_create_qp_ex() hands out the ibv_qp_ex of the verbs_qp. */
	union {
		struct ibv_qp ibv_qp;
		struct verbs_qp verbs_qp;
	};
	struct qhca_wq sq;
	struct qhca_wq rq;		/* empty on an SRQ */
	struct qhca_srq *srq;		/* receives come from it, or NULL */
	uint32_t max_inline_data;
	bool sq_sig_all;
	struct qhca_cq_link send_link;
	struct qhca_cq_link recv_link;	/* unused when both CQs are one */
	struct qhca_wr_batch wr;	/* ibv_wr_*: under sq.lock */
};

static inline struct qhca_context *to_qhca_ctx(struct ibv_context *ibctx)
{
	return container_of(ibctx, struct qhca_context, ibv_ctx.context);
}

static inline bool qhca_ctx_is_eth(const struct qhca_context *ctx)
{
	return ctx->link_layer == IBV_LINK_LAYER_ETHERNET;
}

static inline struct qhca_pd *to_qhca_pd(struct ibv_pd *ibpd)
{
	return container_of(ibpd, struct qhca_pd, ibv_pd);
}

static inline struct qhca_cq *to_qhca_cq(struct ibv_cq *ibcq)
{
	return container_of(ibcq, struct qhca_cq, ibv_cq);
}

static inline struct qhca_qp *to_qhca_qp(struct ibv_qp *ibqp)
{
	return container_of(ibqp, struct qhca_qp, ibv_qp);
}

#endif /* QHCA_H */
