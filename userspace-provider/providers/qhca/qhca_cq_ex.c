// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libqhca: extended completion queues, ibv_create_cq_ex().
 *
 * The ring is the one of a plain CQ, and ibv_poll_cq() works on it too.
 * The extended poller reads the CQE in place: ibv_start_poll() takes the
 * CQ's lock and the first CQE, ibv_next_poll() moves on, and the read_*
 * accessors decode the current CQE.  The consumer index reaches the device
 * only at ibv_end_poll(), so the slot being read is never rewritten under
 * us.  A ring the kernel took away (the device is gone) makes
 * ibv_start_poll() and ibv_next_poll() fail with EIO.
 */
#include <errno.h>
#include <string.h>

#include "qhca.h"
#include "qhca_abi.h"
#include "qhca_cq.h"
#include "qhca_verbs.h"

/*
 * What a CQE can tell.  Every CQE carries its timestamp (1.2), which the
 * kernel refuses if the device does not have one.  No VLANs, flow tags,
 * tag matching or wall clock.
 */
#define QHCA_CQ_EX_WC_FLAGS \
	(IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)
/* Single-threaded use needs nothing different; overruns are not ignored. */
#define QHCA_CQ_EX_FLAGS	IBV_CREATE_CQ_ATTR_SINGLE_THREADED

static inline struct qhca_cq *qhca_cq_of_ex(struct ibv_cq_ex *ibcq)
{
	return to_qhca_cq(ibv_cq_ex_to_cq(ibcq));
}

static inline const struct qhca_cqe *qhca_cur_cqe(struct ibv_cq_ex *ibcq)
{
	return qhca_cq_of_ex(ibcq)->cur_cqe;
}

/*
 * Make the CQE at the consumer index current, if the device wrote it,
 * passing over those discarded: 0, ENOENT if there is none, or EIO if the
 * ring is gone (qhca_cq_peek()).
 */
static int qhca_cq_ex_take(struct qhca_cq *cq)
{
	const struct qhca_cqe *cqe;
	int err;

	cq->cur_cqe = NULL;
	for (;;) {
		err = qhca_cq_peek(cq, cq->ci, &cqe);
		if (err)
			return err;
		if (!qhca_cq_take_discard(cq, cq->ci))
			break;
		cq->ci++;
	}
	cq->cur_cqe = cqe;
	qhca_cqe_free_wqes(cq, cqe);
	cq->verbs_cq.cq_ex.wr_id = le64toh(cqe->wr_id);
	cq->verbs_cq.cq_ex.status = cqe->status;
	return 0;
}

static int qhca_start_poll(struct ibv_cq_ex *ibcq,
			   struct ibv_poll_cq_attr *attr)
{
	struct qhca_cq *cq = qhca_cq_of_ex(ibcq);
	uint32_t start;
	int err;

	/* No poll attributes are defined. */
	if (attr->comp_mask)
		return EINVAL;

	pthread_spin_lock(&cq->lock);
	start = cq->ci;
	err = qhca_cq_ex_take(cq);
	/*
	 * Without a CQE there is no ibv_end_poll() to unlock, nor to give
	 * back the discarded slots passed over.
	 */
	if (err) {
		if (cq->ci != start)
			qhca_cq_update_ci(cq);
		pthread_spin_unlock(&cq->lock);
	}
	return err;
}

static int qhca_next_poll(struct ibv_cq_ex *ibcq)
{
	struct qhca_cq *cq = qhca_cq_of_ex(ibcq);

	if (cq->cur_cqe)
		cq->ci++;
	return qhca_cq_ex_take(cq);
}

static void qhca_end_poll(struct ibv_cq_ex *ibcq)
{
	struct qhca_cq *cq = qhca_cq_of_ex(ibcq);

	if (cq->cur_cqe) {
		cq->ci++;
		cq->cur_cqe = NULL;
	}
	qhca_cq_update_ci(cq);
	pthread_spin_unlock(&cq->lock);
}

/* The CQE's opcode and status fields hold the ibv_wc values (qhca_cq.h). */
static enum ibv_wc_opcode qhca_read_opcode(struct ibv_cq_ex *ibcq)
{
	return qhca_cur_cqe(ibcq)->opcode;
}

/* The status says it all: the device has no vendor syndromes. */
static uint32_t qhca_read_vendor_err(struct ibv_cq_ex *ibcq)
{
	return 0;
}

static uint32_t qhca_read_byte_len(struct ibv_cq_ex *ibcq)
{
	return le32toh(qhca_cur_cqe(ibcq)->byte_len);
}

/* In the byte order it was posted in, as ibv_wc has it. */
static __be32 qhca_read_imm_data(struct ibv_cq_ex *ibcq)
{
	return qhca_cur_cqe(ibcq)->imm_data;
}

static uint32_t qhca_read_qp_num(struct ibv_cq_ex *ibcq)
{
	return le32toh(qhca_cur_cqe(ibcq)->qpn);
}

static uint32_t qhca_read_src_qp(struct ibv_cq_ex *ibcq)
{
	return le32toh(qhca_cur_cqe(ibcq)->src_qp);
}

/* The invalidated rkey is read with read_imm_data (be32). */
static unsigned int qhca_read_wc_flags(struct ibv_cq_ex *ibcq)
{
	return qhca_cqe_wc_flags(qhca_cur_cqe(ibcq));
}

static uint32_t qhca_read_slid(struct ibv_cq_ex *ibcq)
{
	return le16toh(qhca_cur_cqe(ibcq)->slid);
}

/* SL and path bits are zero but in UD receives; the device writes them so. */
static uint8_t qhca_read_sl(struct ibv_cq_ex *ibcq)
{
	return qhca_cur_cqe(ibcq)->sl;
}

static uint8_t qhca_read_dlid_path_bits(struct ibv_cq_ex *ibcq)
{
	return qhca_cur_cqe(ibcq)->dlid_path_bits;
}

/* Device clock ticks (ns, hca_core_clock kHz) when the CQE was written. */
static uint64_t qhca_read_completion_ts(struct ibv_cq_ex *ibcq)
{
	return le64toh(qhca_cur_cqe(ibcq)->timestamp);
}

/*
 * As the real providers do, only the accessors of the wc_flags asked for
 * are there: calling another one is the application's bug.
 */
static void qhca_cq_ex_set_ops(struct ibv_cq_ex *ibcq, uint64_t wc_flags)
{
	ibcq->start_poll = qhca_start_poll;
	ibcq->next_poll = qhca_next_poll;
	ibcq->end_poll = qhca_end_poll;
	ibcq->read_opcode = qhca_read_opcode;
	ibcq->read_vendor_err = qhca_read_vendor_err;
	ibcq->read_wc_flags = qhca_read_wc_flags;
	if (wc_flags & IBV_WC_EX_WITH_BYTE_LEN)
		ibcq->read_byte_len = qhca_read_byte_len;
	if (wc_flags & IBV_WC_EX_WITH_IMM)
		ibcq->read_imm_data = qhca_read_imm_data;
	if (wc_flags & IBV_WC_EX_WITH_QP_NUM)
		ibcq->read_qp_num = qhca_read_qp_num;
	if (wc_flags & IBV_WC_EX_WITH_SRC_QP)
		ibcq->read_src_qp = qhca_read_src_qp;
	if (wc_flags & IBV_WC_EX_WITH_SLID)
		ibcq->read_slid = qhca_read_slid;
	if (wc_flags & IBV_WC_EX_WITH_SL)
		ibcq->read_sl = qhca_read_sl;
	if (wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
		ibcq->read_dlid_path_bits = qhca_read_dlid_path_bits;
	if (wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)
		ibcq->read_completion_ts = qhca_read_completion_ts;
}

static int qhca_check_cq_ex_attr(struct qhca_context *ctx,
				 const struct ibv_cq_init_attr_ex *attr)
{
	if (attr->comp_mask & ~(uint32_t)(IBV_CQ_INIT_ATTR_MASK_FLAGS |
					  IBV_CQ_INIT_ATTR_MASK_PD)) {
		verbs_debug(&ctx->ibv_ctx, "CQ comp_mask 0x%x not supported\n",
			    attr->comp_mask);
		return EOPNOTSUPP;
	}
	if (attr->wc_flags & ~(uint64_t)QHCA_CQ_EX_WC_FLAGS) {
		verbs_debug(&ctx->ibv_ctx, "CQ wc_flags 0x%llx not supported\n",
			    (unsigned long long)attr->wc_flags);
		return EOPNOTSUPP;
	}
	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS &&
	    attr->flags & ~(uint32_t)QHCA_CQ_EX_FLAGS) {
		verbs_debug(&ctx->ibv_ctx, "CQ flags 0x%x not supported\n",
			    attr->flags);
		return EOPNOTSUPP;
	}
	/* A CQ takes a parent domain (for its allocator), never a PD. */
	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD &&
	    (!attr->parent_domain ||
	     attr->parent_domain->context != &ctx->ibv_ctx.context ||
	     !to_qhca_pd(attr->parent_domain)->protection_domain))
		return EINVAL;
	return 0;
}

struct ibv_cq_ex *qhca_create_cq_ex(struct ibv_context *ibctx,
				    struct ibv_cq_init_attr_ex *attr)
{
	struct qhca_context *ctx = to_qhca_ctx(ibctx);
	struct qhca_create_cq_ex_resp resp = {};
	struct qhca_create_cq_ex cmd = {};
	struct qhca_cq *cq;
	int err;

	err = qhca_check_cq_ex_attr(ctx, attr);
	if (err) {
		errno = err;
		return NULL;
	}

	cq = qhca_cq_alloc();
	if (!cq)
		return NULL;
	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) {
		cq->pd = attr->parent_domain;
		qhca_pd_get(cq->pd);
	}

	err = ibv_cmd_create_cq_ex(ibctx, attr, &cq->verbs_cq, &cmd.ibv_cmd,
				   sizeof(cmd), &resp.ibv_resp, sizeof(resp), 0);
	if (err) {
		verbs_err(&ctx->ibv_ctx,
			  "CREATE_CQ of %u CQEs (wc_flags 0x%llx) failed: %s\n",
			  attr->cqe, (unsigned long long)attr->wc_flags,
			  strerror(err));
		goto err_free;
	}

	err = qhca_cq_map(ctx, cq, &resp.drv_payload);
	if (err)
		goto err_destroy;

	qhca_cq_ex_set_ops(&cq->verbs_cq.cq_ex, attr->wc_flags);
	return &cq->verbs_cq.cq_ex;

err_destroy:
	ibv_cmd_destroy_cq(&cq->ibv_cq);
err_free:
	qhca_cq_free(cq);
	errno = err;
	return NULL;
}
