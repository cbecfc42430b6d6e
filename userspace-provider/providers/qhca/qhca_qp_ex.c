// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libqhca: extended queue pairs, ibv_create_qp_ex(), and the ibv_wr_* way
 * of posting sends.
 *
 * ibv_wr_start() takes the SQ's lock; each ibv_wr_<opcode>() starts a WQE
 * in the next free slot, with the WQE builders ibv_post_send() uses
 * (qhca_wqe.h), and the ibv_wr_set_*() calls complete it.  Nothing reaches
 * the device until ibv_wr_complete(), which rings the doorbell once for
 * the whole batch.  The first error fails the batch: ibv_wr_complete()
 * returns it and posts nothing, as does ibv_wr_abort().  A QP offers the
 * ibv_wr_<opcode>() calls of the opcodes its type may post, which the
 * opcode table of qhca_hw.h says.
 */
#include <errno.h>
#include <stdint.h>

#include "qhca.h"
#include "qhca_ah.h"
#include "qhca_verbs.h"
#include "qhca_wq.h"
#include "qhca_wqe.h"

static inline struct qhca_qp *qhca_qp_of_ex(struct ibv_qp_ex *ibqp)
{
	return to_qhca_qp(&ibqp->qp_base);
}

static void qhca_wr_fail(struct qhca_qp *qp, int err)
{
	if (!qp->wr.err)
		qp->wr.err = err;
	qp->wr.cur = NULL;
}

static void qhca_wr_start(struct ibv_qp_ex *ibqp)
{
	struct qhca_qp *qp = qhca_qp_of_ex(ibqp);
	enum ibv_qp_state state = ibqp->qp_base.state;

	pthread_spin_lock(&qp->sq.lock);
	qp->wr.start = atomic_load_explicit(&qp->sq.pi, memory_order_relaxed);
	qp->wr.pi = qp->wr.start;
	qp->wr.cur = NULL;
	qp->wr.err = 0;
	/* As for ibv_post_send(): sends before RTS are an error. */
	if (state == IBV_QPS_RESET || state == IBV_QPS_INIT ||
	    state == IBV_QPS_RTR)
		qp->wr.err = EINVAL;
}

/*
 * Take the next slot for a WQE, which the caller builds there; NULL once
 * the batch has failed.
 */
static struct qhca_sq_wqe *qhca_wr_new(struct ibv_qp_ex *ibqp)
{
	struct qhca_qp *qp = qhca_qp_of_ex(ibqp);

	if (qp->wr.err)
		return NULL;
	if (ibqp->wr_flags & ~QHCA_SEND_FLAGS) {
		qhca_wr_fail(qp, EINVAL);
		return NULL;
	}
	if (qhca_wq_full(&qp->sq, qp->wr.pi)) {
		qhca_wr_fail(qp, ENOMEM);
		return NULL;
	}

	qp->wr.cur = qhca_wq_slot(&qp->sq, qp->wr.pi++);
	return qp->wr.cur;
}

/* A WQE of an opcode of the table with the operands it carries. */
static void qhca_wr_op(struct ibv_qp_ex *ibqp, uint8_t opcode,
		       const struct qhca_wr_operands *op)
{
	struct qhca_sq_wqe *wqe = qhca_wr_new(ibqp);

	if (wqe)
		qhca_wqe_build(qhca_qp_of_ex(ibqp), wqe, ibqp->wr_id, opcode,
			       ibqp->wr_flags, op);
}

static void qhca_wr_send(struct ibv_qp_ex *ibqp)
{
	qhca_wr_op(ibqp, QHCA_WR_SEND, &(struct qhca_wr_operands){});
}

static void qhca_wr_send_imm(struct ibv_qp_ex *ibqp, __be32 imm_data)
{
	qhca_wr_op(ibqp, QHCA_WR_SEND_WITH_IMM,
		   &(struct qhca_wr_operands){ .imm_data = imm_data });
}

static void qhca_wr_send_inv(struct ibv_qp_ex *ibqp, uint32_t invalidate_rkey)
{
	qhca_wr_op(ibqp, QHCA_WR_SEND_WITH_INV,
		   &(struct qhca_wr_operands){ .rkey = invalidate_rkey });
}

/* Memory operations carry no data: the SGE setters must not follow. */
static void qhca_wr_local_inv(struct ibv_qp_ex *ibqp, uint32_t invalidate_rkey)
{
	qhca_wr_op(ibqp, QHCA_WR_LOCAL_INV,
		   &(struct qhca_wr_operands){ .rkey = invalidate_rkey });
}

static void qhca_wr_bind_mw(struct ibv_qp_ex *ibqp, struct ibv_mw *mw,
			    uint32_t rkey,
			    const struct ibv_mw_bind_info *bind_info)
{
	struct qhca_qp *qp = qhca_qp_of_ex(ibqp);
	struct qhca_sq_wqe *wqe;

	if (!mw || !bind_info) {
		qhca_wr_fail(qp, EINVAL);
		return;
	}
	wqe = qhca_wr_new(ibqp);
	if (wqe) {
		qhca_wqe_init(qp, wqe, ibqp->wr_id, QHCA_WR_BIND_MW,
			      ibqp->wr_flags);
		qhca_wqe_set_bind(wqe, mw, rkey, bind_info);
	}
}

static void qhca_wr_rdma_write(struct ibv_qp_ex *ibqp, uint32_t rkey,
			       uint64_t remote_addr)
{
	qhca_wr_op(ibqp, QHCA_WR_RDMA_WRITE,
		   &(struct qhca_wr_operands){ .remote_addr = remote_addr,
					       .rkey = rkey });
}

static void qhca_wr_rdma_write_imm(struct ibv_qp_ex *ibqp, uint32_t rkey,
				   uint64_t remote_addr, __be32 imm_data)
{
	qhca_wr_op(ibqp, QHCA_WR_RDMA_WRITE_WITH_IMM,
		   &(struct qhca_wr_operands){ .remote_addr = remote_addr,
					       .rkey = rkey,
					       .imm_data = imm_data });
}

static void qhca_wr_rdma_read(struct ibv_qp_ex *ibqp, uint32_t rkey,
			      uint64_t remote_addr)
{
	qhca_wr_op(ibqp, QHCA_WR_RDMA_READ,
		   &(struct qhca_wr_operands){ .remote_addr = remote_addr,
					       .rkey = rkey });
}

static void qhca_wr_atomic_cmp_swp(struct ibv_qp_ex *ibqp, uint32_t rkey,
				   uint64_t remote_addr, uint64_t compare,
				   uint64_t swap)
{
	qhca_wr_op(ibqp, QHCA_WR_ATOMIC_CMP_AND_SWP,
		   &(struct qhca_wr_operands){ .remote_addr = remote_addr,
					       .rkey = rkey,
					       .compare_add = compare,
					       .swap = swap });
}

static void qhca_wr_atomic_fetch_add(struct ibv_qp_ex *ibqp, uint32_t rkey,
				     uint64_t remote_addr, uint64_t add)
{
	qhca_wr_op(ibqp, QHCA_WR_ATOMIC_FETCH_AND_ADD,
		   &(struct qhca_wr_operands){ .remote_addr = remote_addr,
					       .rkey = rkey,
					       .compare_add = add });
}

/*
 * FLUSH (1.6): the placement type and level are the FETH's, which the
 * device checks too; a range longer than the 32 bits of a RETH cannot be
 * posted.  At level MR the range means nothing: none is sent.  No data
 * follows (the device fails a FLUSH that has SGEs).
 */
static void qhca_wr_flush(struct ibv_qp_ex *ibqp, uint32_t rkey,
			  uint64_t remote_addr, size_t len, uint8_t type,
			  uint8_t level)
{
	struct qhca_wr_operands op = {
		.remote_addr = remote_addr,
		.rkey = rkey,
	};

	if (!type || type & ~(IBV_FLUSH_GLOBAL | IBV_FLUSH_PERSISTENT) ||
	    (level != IBV_FLUSH_RANGE && level != IBV_FLUSH_MR) ||
	    (level == IBV_FLUSH_RANGE && len > UINT32_MAX)) {
		qhca_wr_fail(qhca_qp_of_ex(ibqp), EINVAL);
		return;
	}
	op.flush = type | level << QHCA_FLUSH_LEVEL_SHIFT;
	op.flush_len = level == IBV_FLUSH_RANGE ? len : 0;
	qhca_wr_op(ibqp, QHCA_WR_FLUSH, &op);
}

/*
 * ATOMIC_WRITE (1.6): its 8 bytes go into the WQE as inline data, which
 * the device bounds by the stride alone, and every stride has room for
 * one SGE (16 bytes) after the header: the QP's max_inline_data does not
 * matter.  A later SGE setter replaces them, as for any WQE.
 */
static void qhca_wr_atomic_write(struct ibv_qp_ex *ibqp, uint32_t rkey,
				 uint64_t remote_addr, const void *atomic_wr)
{
	struct qhca_qp *qp = qhca_qp_of_ex(ibqp);
	struct qhca_sq_wqe *wqe;

	if (!atomic_wr) {
		qhca_wr_fail(qp, EINVAL);
		return;
	}
	qhca_wr_op(ibqp, QHCA_WR_ATOMIC_WRITE,
		   &(struct qhca_wr_operands){ .remote_addr = remote_addr,
					       .rkey = rkey });
	wqe = qp->wr.cur;
	if (!wqe)
		return;
	static_assert(sizeof(struct qhca_sge) >= sizeof(uint64_t),
		      "ATOMIC_WRITE's 8 bytes do not fit where an SGE does");
	memcpy(wqe + 1, atomic_wr, sizeof(uint64_t));
	wqe->flags |= QHCA_WQE_F_INLINE;
	wqe->inline_len = htole32(sizeof(uint64_t));
}

/* The WQE the ibv_wr_set_*() call completes; NULL after an error. */
static struct qhca_sq_wqe *qhca_wr_cur(struct qhca_qp *qp)
{
	if (qp->wr.err)
		return NULL;
	/* A setter before any opcode has nothing to set. */
	if (!qp->wr.cur) {
		qhca_wr_fail(qp, EINVAL);
		return NULL;
	}
	return qp->wr.cur;
}

static void qhca_wr_set_ud_addr(struct ibv_qp_ex *ibqp, struct ibv_ah *ah,
				uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct qhca_qp *qp = qhca_qp_of_ex(ibqp);
	struct qhca_sq_wqe *wqe = qhca_wr_cur(qp);
	int err;

	if (!wqe)
		return;
	if (!ah) {
		qhca_wr_fail(qp, EINVAL);
		return;
	}
	err = qhca_wqe_set_ud((struct qhca_sq_wqe_ud *)wqe, to_qhca_ah(ah),
			      remote_qpn, remote_qkey);
	if (err)
		qhca_wr_fail(qp, err);
}

/* XRC INI: the remote XRC SRQ, which the device puts in the XRCETH. */
static void qhca_wr_set_xrc_srqn(struct ibv_qp_ex *ibqp,
				 uint32_t remote_srqn)
{
	struct qhca_sq_wqe *wqe = qhca_wr_cur(qhca_qp_of_ex(ibqp));

	if (wqe)
		wqe->xrc_srqn = htole32(remote_srqn);
}

/* Data is given once: a second setter replaces what the first set. */
static void qhca_wr_clear_data(struct qhca_sq_wqe *wqe)
{
	wqe->num_sge = 0;
	wqe->inline_len = 0;
	wqe->flags &= ~QHCA_WQE_F_INLINE;
}

static void qhca_wr_set_sge_list(struct ibv_qp_ex *ibqp, size_t num_sge,
				 const struct ibv_sge *sg_list)
{
	struct qhca_qp *qp = qhca_qp_of_ex(ibqp);
	struct qhca_sq_wqe *wqe = qhca_wr_cur(qp);

	int err;

	if (!wqe)
		return;
	qhca_wr_clear_data(wqe);
	err = qhca_wqe_set_sgl(qp, wqe, sg_list, num_sge);
	if (err)
		qhca_wr_fail(qp, err);
}

static void qhca_wr_set_sge(struct ibv_qp_ex *ibqp, uint32_t lkey,
			    uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	qhca_wr_set_sge_list(ibqp, 1, &sge);
}

static void qhca_wr_set_inline_data_list(struct ibv_qp_ex *ibqp,
					 size_t num_buf,
					 const struct ibv_data_buf *buf_list)
{
	struct qhca_qp *qp = qhca_qp_of_ex(ibqp);
	struct qhca_sq_wqe *wqe = qhca_wr_cur(qp);
	size_t i;
	int err;

	if (!wqe)
		return;
	/* Reads, atomics and memory operations send no local data. */
	if (!(qhca_wr_info(wqe->opcode)->flags & QHCA_WR_F_INLINE)) {
		qhca_wr_fail(qp, EINVAL);
		return;
	}
	qhca_wr_clear_data(wqe);
	wqe->flags |= QHCA_WQE_F_INLINE;
	for (i = 0; i < num_buf; i++) {
		err = qhca_wqe_add_inline(qp, wqe, buf_list[i].addr,
					  buf_list[i].length);
		if (err) {
			qhca_wr_fail(qp, err);
			return;
		}
	}
}

static void qhca_wr_set_inline_data(struct ibv_qp_ex *ibqp, void *addr,
				    size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	qhca_wr_set_inline_data_list(ibqp, 1, &buf);
}

static int qhca_wr_complete(struct ibv_qp_ex *ibqp)
{
	struct qhca_qp *qp = qhca_qp_of_ex(ibqp);
	int err = qp->wr.err;

	/* On error the slots are simply not published: nothing is posted. */
	if (!err)
		qhca_wq_publish(to_qhca_ctx(ibqp->qp_base.context), &qp->sq,
				QHCA_DB_SQ, ibqp->qp_base.qp_num, qp->wr.start,
				qp->wr.pi);
	qp->wr.cur = NULL;
	pthread_spin_unlock(&qp->sq.lock);
	return err;
}

static void qhca_wr_abort(struct ibv_qp_ex *ibqp)
{
	struct qhca_qp *qp = qhca_qp_of_ex(ibqp);

	qp->wr.cur = NULL;
	pthread_spin_unlock(&qp->sq.lock);
}

/*
 * What the opcode table lets the QP type post, of what the device offers
 * (qhca_wqe.h), as IBV_QP_EX_WITH_* bits.
 */
static uint64_t qhca_send_ops(const struct qhca_context *ctx,
			      enum ibv_qp_type type)
{
	uint64_t ops = 0;
	unsigned int op;

	for (op = 0; op < QHCA_WR_OPCODE_NUM; op++)
		if (qhca_ibv_wr_offered(ctx, op) && qhca_wr_allowed(op, type))
			ops |= qhca_qp_ex_bit(op);
	return ops;
}

/* Every operation the QP's type allows, whatever subset was asked for. */
static void qhca_qp_ex_set_ops(const struct qhca_context *ctx,
			       struct ibv_qp_ex *qpx, enum ibv_qp_type type)
{
	uint64_t ops = qhca_send_ops(ctx, type);

	qpx->wr_start = qhca_wr_start;
	qpx->wr_complete = qhca_wr_complete;
	qpx->wr_abort = qhca_wr_abort;
	if (ops & IBV_QP_EX_WITH_SEND)
		qpx->wr_send = qhca_wr_send;
	if (ops & IBV_QP_EX_WITH_SEND_WITH_IMM)
		qpx->wr_send_imm = qhca_wr_send_imm;
	if (ops & IBV_QP_EX_WITH_SEND_WITH_INV)
		qpx->wr_send_inv = qhca_wr_send_inv;
	if (ops & IBV_QP_EX_WITH_RDMA_WRITE)
		qpx->wr_rdma_write = qhca_wr_rdma_write;
	if (ops & IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)
		qpx->wr_rdma_write_imm = qhca_wr_rdma_write_imm;
	if (ops & IBV_QP_EX_WITH_RDMA_READ)
		qpx->wr_rdma_read = qhca_wr_rdma_read;
	if (ops & IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP)
		qpx->wr_atomic_cmp_swp = qhca_wr_atomic_cmp_swp;
	if (ops & IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)
		qpx->wr_atomic_fetch_add = qhca_wr_atomic_fetch_add;
	if (ops & IBV_QP_EX_WITH_LOCAL_INV)
		qpx->wr_local_inv = qhca_wr_local_inv;
	if (ops & IBV_QP_EX_WITH_BIND_MW)
		qpx->wr_bind_mw = qhca_wr_bind_mw;
	if (ops & IBV_QP_EX_WITH_FLUSH)
		qpx->wr_flush = qhca_wr_flush;
	if (ops & IBV_QP_EX_WITH_ATOMIC_WRITE)
		qpx->wr_atomic_write = qhca_wr_atomic_write;
	if (type == IBV_QPT_UD)
		qpx->wr_set_ud_addr = qhca_wr_set_ud_addr;
	if (type == IBV_QPT_XRC_SEND)
		qpx->wr_set_xrc_srqn = qhca_wr_set_xrc_srqn;
	qpx->wr_set_sge = qhca_wr_set_sge;
	qpx->wr_set_sge_list = qhca_wr_set_sge_list;
	qpx->wr_set_inline_data = qhca_wr_set_inline_data;
	qpx->wr_set_inline_data_list = qhca_wr_set_inline_data_list;
}

struct ibv_qp *qhca_create_qp_ex(struct ibv_context *ibctx,
				 struct ibv_qp_init_attr_ex *attr)
{
	struct qhca_context *ctx = to_qhca_ctx(ibctx);
	bool send_ops = attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	struct ibv_qp *ibqp;
	struct qhca_qp *qp;

	if (attr->qp_type == IBV_QPT_XRC_RECV)
		return qhca_create_xrc_tgt_qp(ibctx, attr);
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd ||
	    attr->pd->context != ibctx) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->comp_mask &
	    ~(uint32_t)(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS |
			IBV_QP_INIT_ATTR_CREATE_FLAGS)) {
		verbs_debug(&ctx->ibv_ctx, "QP comp_mask 0x%x not supported\n",
			    attr->comp_mask);
		errno = EOPNOTSUPP;
		return NULL;
	}
	/*
	 * The mask bit only says that create_flags is valid: no flag asks
	 * for nothing (rdma-core's tests set the bit with no flag), while
	 * every flag is one the device does not have.
	 */
	if (attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS &&
	    attr->create_flags) {
		verbs_debug(&ctx->ibv_ctx, "QP create_flags 0x%x not supported\n",
			    attr->create_flags);
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (send_ops &&
	    attr->send_ops_flags & ~qhca_send_ops(ctx, attr->qp_type)) {
		verbs_debug(&ctx->ibv_ctx,
			    "send_ops_flags 0x%llx not supported on QP type %d\n",
			    (unsigned long long)attr->send_ops_flags,
			    attr->qp_type);
		errno = EOPNOTSUPP;
		return NULL;
	}

	/* The leading fields of the _ex attributes are the plain ones. */
	ibqp = qhca_create_qp(attr->pd, (struct ibv_qp_init_attr *)attr);
	if (!ibqp)
		return NULL;

	if (send_ops) {
		qp = to_qhca_qp(ibqp);
		qhca_qp_ex_set_ops(ctx, &qp->verbs_qp.qp_ex, ibqp->qp_type);
		qp->verbs_qp.comp_mask |= VERBS_QP_EX;
	}
	return ibqp;
}
