/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Completion queue internals shared by the CQ verbs, the poller and the QP
 * verbs, which attach QPs to their CQs and clean CQEs of QPs that are
 * reset or destroyed.
 */
#ifndef QHCA_CQ_H
#define QHCA_CQ_H

#include <assert.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <util/udma_barrier.h>

#include "qhca.h"

/*
 * The CQE's opcode and status fields hold enum ibv_wc_opcode and enum
 * ibv_wc_status values, and its immediate is in the byte order it was
 * posted in: a CQE reads as a work completion without translation.
 */
#define QHCA_ASSERT_WC(name) \
	static_assert((int)IBV_WC_##name == (int)QHCA_WC_##name, \
		      "IBV_WC_" #name " is not QHCA_WC_" #name)
QHCA_ASSERT_WC(SEND);
QHCA_ASSERT_WC(RDMA_WRITE);
QHCA_ASSERT_WC(RDMA_READ);
QHCA_ASSERT_WC(COMP_SWAP);
QHCA_ASSERT_WC(FETCH_ADD);
QHCA_ASSERT_WC(BIND_MW);
QHCA_ASSERT_WC(LOCAL_INV);
QHCA_ASSERT_WC(FLUSH);
QHCA_ASSERT_WC(ATOMIC_WRITE);
QHCA_ASSERT_WC(RECV);
QHCA_ASSERT_WC(RECV_RDMA_WITH_IMM);
QHCA_ASSERT_WC(SUCCESS);
QHCA_ASSERT_WC(LOC_LEN_ERR);
QHCA_ASSERT_WC(LOC_QP_OP_ERR);
QHCA_ASSERT_WC(LOC_PROT_ERR);
QHCA_ASSERT_WC(WR_FLUSH_ERR);
QHCA_ASSERT_WC(MW_BIND_ERR);
QHCA_ASSERT_WC(BAD_RESP_ERR);
QHCA_ASSERT_WC(LOC_ACCESS_ERR);
QHCA_ASSERT_WC(REM_INV_REQ_ERR);
QHCA_ASSERT_WC(REM_ACCESS_ERR);
QHCA_ASSERT_WC(REM_OP_ERR);
QHCA_ASSERT_WC(RETRY_EXC_ERR);
QHCA_ASSERT_WC(RNR_RETRY_EXC_ERR);
QHCA_ASSERT_WC(FATAL_ERR);
QHCA_ASSERT_WC(GENERAL_ERR);
#undef QHCA_ASSERT_WC

/*
 * Whether the CQE completes a receive WQE (of the RQ or an SRQ) rather
 * than a send WQE: the receive opcodes have the bit of QHCA_WC_RECV, in
 * error and flush CQEs too.
 */
static inline bool qhca_recv_cqe(const struct qhca_cqe *cqe)
{
	return cqe->opcode & QHCA_WC_RECV;
}

/*
 * The ibv_wc_flags of a CQE.  imm_data holds the immediate or, with
 * IBV_WC_WITH_INV, the rkey a SEND_WITH_INV invalidated: never both.
 */
static inline unsigned int qhca_cqe_wc_flags(const struct qhca_cqe *cqe)
{
	unsigned int flags = 0;

	if (cqe->flags & QHCA_CQE_F_IMM)
		flags |= IBV_WC_WITH_IMM;
	else if (cqe->flags & QHCA_CQE_F_INV)
		flags |= IBV_WC_WITH_INV;
	if (cqe->flags & QHCA_CQE_F_GRH)
		flags |= IBV_WC_GRH;
	return flags;
}

static inline const struct qhca_cqe *qhca_cq_entry(struct qhca_cq *cq,
						    uint32_t idx)
{
	return &cq->ring[idx & (cq->count - 1)];
}

/*
 * The CQE at consumer index idx: 0 and *cqep once the device wrote it,
 * ENOENT while it has not, EIO if the ring is gone.  The device writes the
 * owner byte last, with phase 1 on its first pass over the ring (which
 * starts zeroed), 0 on the second, and so on; from 1.3 on with WRITTEN
 * set too.  Once the kernel took the ring away (device removed or reset)
 * it reads as zeroes: a CQE without WRITTEN in a phase-0 pass, never one
 * the device wrote.
 */
static inline int qhca_cq_peek(struct qhca_cq *cq, uint32_t idx,
			       const struct qhca_cqe **cqep)
{
	const struct qhca_cqe *cqe = qhca_cq_entry(cq, idx);
	uint8_t phase = idx & cq->count ? 0 : QHCA_CQE_OWNER_PHASE;
	uint8_t owner;

	owner = atomic_load_explicit((_Atomic(uint8_t) *)&cqe->owner,
				     memory_order_relaxed);
	if ((owner & QHCA_CQE_OWNER_PHASE) != phase)
		return ENOENT;
	if (cq->check_written && !(owner & QHCA_CQE_OWNER_WRITTEN))
		return EIO;
	/* Read the rest of the entry only after its owner byte. */
	udma_from_device_barrier();
	*cqep = cqe;
	return 0;
}

/*
 * Whether the slot of idx holds a CQE that was discarded (of a QP reset or
 * destroyed since) and forget it: the caller passes over the slot.
 */
static inline bool qhca_cq_take_discard(struct qhca_cq *cq, uint32_t idx)
{
	uint32_t slot = idx & (cq->count - 1);
	uint64_t bit = 1ULL << (slot % 64);

	if (!(cq->discard[slot / 64] & bit))
		return false;
	cq->discard[slot / 64] &= ~bit;
	return true;
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
struct qhca_cq *qhca_cq_alloc(void);
void qhca_cq_free(struct qhca_cq *cq);
struct qhca_ibv_create_cq_resp;
int qhca_cq_map(struct qhca_context *ctx, struct qhca_cq *cq,
		const struct qhca_ibv_create_cq_resp *resp);
void qhca_cq_unmap(struct qhca_cq *cq);
void qhca_cq_attach_qp(struct qhca_qp *qp);
void qhca_cq_detach_qp(struct qhca_qp *qp);
void qhca_cq_clean_qp(struct qhca_qp *qp);

#endif /* QHCA_CQ_H */
