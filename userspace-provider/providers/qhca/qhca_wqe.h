/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Building WQEs field by field: send WQEs, shared by ibv_post_send()
 * (qhca_post.c) and the ibv_wr_* API (qhca_qp_ex.c), so that both write
 * exactly the same entries, and receive WQEs, shared by the RQ and the SRQ.
 * What a send WQE carries is its opcode's row of the table in qhca_hw.h.
 */
#ifndef QHCA_WQE_H
#define QHCA_WQE_H

#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#include "qhca.h"
#include "qhca_hw.h"

/*
 * The device's opcode values are those of the verbs, and the table in
 * qhca_hw.h is indexed by them: an ibv_wr_opcode is a QHCA_WR_* opcode,
 * its IBV_QP_EX_WITH_* bit is 1 << opcode, and an ibv_qp_type is a
 * QHCA_QPT_* type, with no translation anywhere in the provider.  (The
 * enums are of two kinds: they are compared as the numbers they are.)
 */
#define QHCA_ASSERT_WR(op) \
	static_assert((int)IBV_WR_##op == (int)QHCA_WR_##op && \
		      IBV_QP_EX_WITH_##op == 1ULL << QHCA_WR_##op, \
		      "IBV_WR_" #op " is not QHCA_WR_" #op)
QHCA_ASSERT_WR(RDMA_WRITE);
QHCA_ASSERT_WR(RDMA_WRITE_WITH_IMM);
QHCA_ASSERT_WR(SEND);
QHCA_ASSERT_WR(SEND_WITH_IMM);
QHCA_ASSERT_WR(RDMA_READ);
QHCA_ASSERT_WR(ATOMIC_CMP_AND_SWP);
QHCA_ASSERT_WR(ATOMIC_FETCH_AND_ADD);
QHCA_ASSERT_WR(LOCAL_INV);
QHCA_ASSERT_WR(BIND_MW);
QHCA_ASSERT_WR(SEND_WITH_INV);
#undef QHCA_ASSERT_WR
/* The IBA 1.5 opcodes (1.6) have their values; their bits are apart. */
static_assert((int)IBV_WR_FLUSH == (int)QHCA_WR_FLUSH &&
	      (int)IBV_WR_ATOMIC_WRITE == (int)QHCA_WR_ATOMIC_WRITE,
	      "IBV_WR_FLUSH or IBV_WR_ATOMIC_WRITE is not the device's");
static_assert((int)IBV_FLUSH_GLOBAL == QHCA_FLUSH_GLOBAL &&
	      (int)IBV_FLUSH_PERSISTENT == QHCA_FLUSH_PERSISTENT &&
	      (int)IBV_FLUSH_MR << QHCA_FLUSH_LEVEL_SHIFT == QHCA_FLUSH_MR,
	      "ibv_placement_type or ibv_selectivity_level is not the FETH's");
static_assert((int)IBV_QPT_RC == (int)QHCA_QPT_RC &&
	      (int)IBV_QPT_UC == (int)QHCA_QPT_UC &&
	      (int)IBV_QPT_UD == (int)QHCA_QPT_UD &&
	      (int)IBV_QPT_XRC_SEND == (int)QHCA_QPT_XRC_INI &&
	      (int)IBV_QPT_XRC_RECV == (int)QHCA_QPT_XRC_TGT,
	      "ibv_qp_type is not the device's QP type");

/*
 * The opcodes user space posts: those of enum ibv_wr_opcode up to
 * SEND_WITH_INV, and FLUSH and ATOMIC_WRITE where the device has them.
 * REG_MR (fast registration) is the kernel's.
 */
#define QHCA_IBV_WR_OPCODE_NUM		(IBV_WR_SEND_WITH_INV + 1)

/*
 * Whether the device executes @opcode, one of the table, for user space:
 * the IBA 1.5 ones only with their capability (qhca_context).
 */
static inline bool qhca_ibv_wr_offered(const struct qhca_context *ctx,
				       unsigned int opcode)
{
	if (opcode == IBV_WR_FLUSH)
		return ctx->device_cap_flags & IB_UVERBS_DEVICE_FLUSH_GLOBAL;
	if (opcode == IBV_WR_ATOMIC_WRITE)
		return ctx->device_cap_flags & IB_UVERBS_DEVICE_ATOMIC_WRITE;
	return opcode < QHCA_IBV_WR_OPCODE_NUM;
}

/*
 * The row of an opcode posted with ibv_post_send(), or NULL.  FLUSH has
 * no ibv_send_wr form (no field holds its placement type): only
 * ibv_wr_flush() posts it.
 */
static inline const struct qhca_wr_info *
qhca_ibv_wr_info(const struct qhca_context *ctx, unsigned int opcode)
{
	if (opcode == IBV_WR_FLUSH || !qhca_ibv_wr_offered(ctx, opcode))
		return NULL;
	return qhca_wr_info(opcode);
}

/* The IBV_QP_EX_WITH_* bit of an opcode user space may post. */
static inline uint64_t qhca_qp_ex_bit(unsigned int opcode)
{
	if (opcode == IBV_WR_FLUSH)
		return IBV_QP_EX_WITH_FLUSH;
	if (opcode == IBV_WR_ATOMIC_WRITE)
		return IBV_QP_EX_WITH_ATOMIC_WRITE;
	return 1ULL << opcode;
}

/* The ibv_send_flags a send WQE can carry. */
#define QHCA_SEND_FLAGS \
	(IBV_SEND_FENCE | IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | \
	 IBV_SEND_INLINE)

/*
 * The operands of a send work request, as ibv_post_send() and the
 * ibv_wr_<opcode>() calls give them.  Which of them the WQE carries is
 * the opcode's row of the table: QHCA_WR_F_IMM, QHCA_WR_F_INV,
 * QHCA_WR_F_REMOTE_ADDR, QHCA_WR_F_ATOMIC.
 */
struct qhca_wr_operands {
	uint64_t remote_addr;
	uint32_t rkey;			/* the remote key, or the one to invalidate */
	__be32 imm_data;
	uint64_t compare_add;		/* the value to add for FETCH_AND_ADD */
	uint64_t swap;
	uint32_t flush_len;		/* FLUSH: bytes of the range */
	uint8_t flush;			/* FLUSH: QHCA_FLUSH_TYPE | _LEVEL */
};

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

/*
 * Start the WQE of an opcode of the table (not BIND_MW, whose WQE has a
 * layout of its own: qhca_wqe_set_bind()) with the operands it carries.
 */
static inline void qhca_wqe_build(struct qhca_qp *qp, struct qhca_sq_wqe *wqe,
				  uint64_t wr_id, uint8_t opcode,
				  unsigned int send_flags,
				  const struct qhca_wr_operands *op)
{
	uint16_t flags = qhca_wr_info(opcode)->flags;

	qhca_wqe_init(qp, wqe, wr_id, opcode, send_flags);
	if (flags & QHCA_WR_F_IMM)
		wqe->imm_data = op->imm_data;
	if (flags & (QHCA_WR_F_REMOTE_ADDR | QHCA_WR_F_INV))
		wqe->rkey = htole32(op->rkey);
	if (flags & QHCA_WR_F_REMOTE_ADDR)
		wqe->remote_addr = htole64(op->remote_addr);
	if (flags & QHCA_WR_F_ATOMIC) {
		wqe->compare_add = htole64(op->compare_add);
		wqe->swap = htole64(op->swap);
	}
	if (opcode == QHCA_WR_FLUSH) {
		wqe->flush_len = htole32(op->flush_len);
		wqe->flush = op->flush;
	}
}

/* Write n SGEs, of a send or a receive WQE, in the device's byte order. */
static inline void qhca_sgl_set(struct qhca_sge *dst,
				const struct ibv_sge *src, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		dst[i].addr = htole64(src[i].addr);
		dst[i].length = htole32(src[i].length);
		dst[i].lkey = htole32(src[i].lkey);
	}
}

/*
 * The send WQE's data as SGEs, which follow the header.  The UD header
 * (struct qhca_sq_wqe_ud) has the same size, so this serves both.  EINVAL
 * for more SGEs than the QP has.
 */
static inline int qhca_wqe_set_sgl(struct qhca_qp *qp, struct qhca_sq_wqe *wqe,
				   const struct ibv_sge *sg_list,
				   size_t num_sge)
{
	if (num_sge > qp->sq.max_sge)
		return EINVAL;
	qhca_sgl_set((struct qhca_sge *)(wqe + 1), sg_list, num_sge);
	wqe->num_sge = num_sge;
	return 0;
}

/*
 * A receive WQE, of an RQ or an SRQ, whose num_sge the caller checked.
 * The slot may hold an old WQE: reserved fields must read zero.
 */
static inline void qhca_rq_wqe_set(struct qhca_rq_wqe *wqe,
				   const struct ibv_recv_wr *wr)
{
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = htole64(wr->wr_id);
	wqe->num_sge = wr->num_sge;
	qhca_sgl_set((struct qhca_sge *)(wqe + 1), wr->sg_list, wr->num_sge);
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
