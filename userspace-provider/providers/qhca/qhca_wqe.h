/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Building send WQEs field by field, shared by ibv_post_send()
 * (qhca_post.c) and the ibv_wr_* API (qhca_qp_ex.c), so that both write
 * exactly the same entries.
 */
#ifndef QHCA_WQE_H
#define QHCA_WQE_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "qhca.h"
#include "qhca_hw.h"

/* The ibv_send_flags a send WQE can carry. */
#define QHCA_SEND_FLAGS \
	(IBV_SEND_FENCE | IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | \
	 IBV_SEND_INLINE)

/*
 * Start a WQE in its slot.  The slot may hold an old WQE: reserved fields
 * must read zero.  IBV_SEND_INLINE is not a WQE flag; the inline data
 * sets QHCA_WQE_F_INLINE when it is copied.
 */
static inline void qhca_wqe_init(struct qhca_qp *qp, struct qhca_sq_wqe *wqe,
				 uint64_t wr_id, uint8_t opcode,
				 unsigned int send_flags)
{
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = htole64(wr_id);
	wqe->opcode = opcode;
	if (send_flags & IBV_SEND_SIGNALED || qp->sq_sig_all)
		wqe->flags |= QHCA_WQE_F_SIGNALED;
	if (send_flags & IBV_SEND_SOLICITED)
		wqe->flags |= QHCA_WQE_F_SOLICITED;
	if (send_flags & IBV_SEND_FENCE)
		wqe->flags |= QHCA_WQE_F_FENCE;
}

static inline void qhca_wqe_set_rdma(struct qhca_sq_wqe *wqe,
				     uint64_t remote_addr, uint32_t rkey)
{
	wqe->remote_addr = htole64(remote_addr);
	wqe->rkey = htole32(rkey);
}

/* compare_add is the value to add for FETCH_AND_ADD; swap is unused there. */
static inline void qhca_wqe_set_atomic(struct qhca_sq_wqe *wqe,
				       uint64_t remote_addr, uint32_t rkey,
				       uint64_t compare_add, uint64_t swap)
{
	qhca_wqe_set_rdma(wqe, remote_addr, rkey);
	wqe->compare_add = htole64(compare_add);
	wqe->swap = htole64(swap);
}

/* Opcodes whose data may be inline: those that send local data. */
static inline bool qhca_wqe_may_inline(const struct qhca_sq_wqe *wqe)
{
	return wqe->opcode == QHCA_WR_SEND ||
	       wqe->opcode == QHCA_WR_SEND_WITH_IMM ||
	       wqe->opcode == QHCA_WR_RDMA_WRITE ||
	       wqe->opcode == QHCA_WR_RDMA_WRITE_WITH_IMM;
}

static inline void qhca_wqe_set_sge(struct qhca_sge *dst, uint64_t addr,
				    uint32_t length, uint32_t lkey)
{
	dst->addr = htole64(addr);
	dst->length = htole32(length);
	dst->lkey = htole32(lkey);
}

/*
 * The SGE array after the header.  The UD header (struct qhca_sq_wqe_ud)
 * has the same size, so this serves both.
 */
static inline struct qhca_sge *qhca_wqe_sges(struct qhca_sq_wqe *wqe)
{
	return (struct qhca_sge *)(wqe + 1);
}

/*
 * Append len bytes at addr to the WQE's inline data, which follows the
 * header where SGEs would.  EINVAL when the total would exceed the QP's
 * max_inline_data.
 */
static inline int qhca_wqe_add_inline(struct qhca_qp *qp,
				      struct qhca_sq_wqe *wqe,
				      const void *addr, size_t len)
{
	uint32_t have = le32toh(wqe->inline_len);

	if (len > qp->max_inline_data - have)
		return EINVAL;
	memcpy((uint8_t *)(wqe + 1) + have, addr, len);
	wqe->flags |= QHCA_WQE_F_INLINE;
	wqe->inline_len = htole32(have + len);
	return 0;
}

/*
 * A bind of window @mw_key (its new key) to @len bytes at @addr of @mr,
 * or, with no MR, to nothing.  The device checks the rest.
 */
static inline void qhca_wqe_set_bind(struct qhca_sq_wqe *wqe,
				     struct ibv_mw *mw, uint32_t mw_key,
				     const struct ibv_mw_bind_info *info)
{
	struct qhca_sq_wqe_bind *b = (struct qhca_sq_wqe_bind *)wqe;

	b->mw_key = htole32(mw_key);
	b->mr_lkey = htole32(info->mr ? info->mr->lkey : QHCA_BIND_NO_MR);
	b->addr = htole64(info->addr);
	b->length = htole64(info->length);
	b->access = info->mw_access_flags & (IBV_ACCESS_REMOTE_WRITE |
					     IBV_ACCESS_REMOTE_READ |
					     IBV_ACCESS_REMOTE_ATOMIC);
	b->mw_type = mw->type;
}

#endif /* QHCA_WQE_H */
