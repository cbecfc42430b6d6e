// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libqhca: reliable-connected queue pairs.
 *
 * The driver allocates the SQ and the RQ rings and lets us map them; the
 * provider then posts into them and rings the context's doorbell page
 * directly (qhca_post.c).  State changes go through the kernel.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "qhca.h"
#include "qhca_abi.h"
#include "qhca_cq.h"
#include "qhca_srq.h"
#include "qhca_verbs.h"
#include "qhca_wq.h"

/*
 * Check one ring's layout as the kernel reports it: a whole number of
 * power-of-two WQEs within the mapping, each with room for its header and
 * max_sge SGEs.  An RQ may be absent (depth 0, nothing to map).
 */
static int qhca_check_wq(struct qhca_context *ctx, uint32_t qpn, char name,
			 uint32_t depth, uint32_t stride, uint32_t min_stride,
			 size_t hdr_size, uint32_t max_sge, uint32_t map_size)
{
	if (name == 'R' && !depth && !max_sge)
		return 0;

	if (!depth || depth & (depth - 1) || depth > QHCA_WQ_MAX_DEPTH ||
	    stride & (stride - 1) || stride < min_stride ||
	    stride > 1u << QHCA_WQE_MAX_STRIDE_LOG2 ||
	    (uint64_t)depth * stride > map_size ||
	    hdr_size + (uint64_t)max_sge * sizeof(struct qhca_sge) > stride) {
		verbs_err(&ctx->ibv_ctx,
			  "QP %u: bad %cQ layout: %u WQEs of %u bytes with %u SGEs, %u bytes mapped\n",
			  qpn, name, depth, stride, max_sge, map_size);
		return EPROTO;
	}
	return 0;
}

static int qhca_check_qp_resp(struct qhca_context *ctx,
			      const struct qhca_create_qp_resp *resp)
{
	int err;

	if (resp->comp_mask)
		verbs_debug(&ctx->ibv_ctx, "ignoring unknown QP comp_mask 0x%x\n",
			    resp->comp_mask);

	err = qhca_check_wq(ctx, resp->qpn, 'S', resp->sq_depth,
			    resp->sq_stride, 1u << QHCA_SQ_MIN_STRIDE_LOG2,
			    sizeof(struct qhca_sq_wqe), resp->max_send_sge,
			    resp->sq_mmap_size);
	if (err)
		return err;
	err = qhca_check_wq(ctx, resp->qpn, 'R', resp->rq_depth,
			    resp->rq_stride, 1u << QHCA_RQ_MIN_STRIDE_LOG2,
			    sizeof(struct qhca_rq_wqe), resp->max_recv_sge,
			    resp->rq_mmap_size);
	if (err)
		return err;

	if (sizeof(struct qhca_sq_wqe) + (uint64_t)resp->max_inline_data >
	    resp->sq_stride) {
		verbs_err(&ctx->ibv_ctx,
			  "QP %u: %u inline bytes do not fit a %u-byte WQE\n",
			  resp->qpn, resp->max_inline_data, resp->sq_stride);
		return EPROTO;
	}
	return 0;
}

static int qhca_map_wq(struct qhca_context *ctx, struct qhca_wq *wq,
		       uint64_t key, uint32_t size)
{
	if (!size)
		return 0;

	wq->ring = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
			ctx->ibv_ctx.context.cmd_fd, key);
	if (wq->ring == MAP_FAILED) {
		wq->ring = NULL;
		return errno;
	}
	wq->map_size = size;
	return 0;
}

static void qhca_unmap_wq(struct qhca_wq *wq)
{
	if (wq->ring)
		munmap(wq->ring, wq->map_size);
}

static int qhca_init_wq(struct qhca_wq *wq)
{
	atomic_init(&wq->pi, 0);
	atomic_init(&wq->ci, 0);
	return pthread_spin_init(&wq->lock, PTHREAD_PROCESS_PRIVATE);
}

/* What the rings hold, as the application may use it. */
static void qhca_qp_caps(struct qhca_qp *qp, struct ibv_qp_cap *cap)
{
	cap->max_send_wr = qp->sq.depth;
	cap->max_recv_wr = qp->rq.depth;
	cap->max_send_sge = qp->sq.max_sge;
	cap->max_recv_sge = qp->rq.max_sge;
	cap->max_inline_data = qp->max_inline_data;
}

struct ibv_qp *qhca_create_qp(struct ibv_pd *ibpd,
			      struct ibv_qp_init_attr *attr)
{
	struct qhca_context *ctx = to_qhca_ctx(ibpd->context);
	struct qhca_create_qp_resp resp = {};
	struct qhca_create_qp cmd = {};
	struct qhca_qp *qp;
	int err;

	/* The device has RC, UC, UD and XRC QPs (XRC TGT: qhca_xrc.c). */
	if (attr->qp_type != IBV_QPT_RC && attr->qp_type != IBV_QPT_UC &&
	    attr->qp_type != IBV_QPT_UD && attr->qp_type != IBV_QPT_XRC_SEND) {
		errno = EOPNOTSUPP;
		return NULL;
	}

	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	err = qhca_init_wq(&qp->sq);
	if (err)
		goto err_free;
	err = qhca_init_wq(&qp->rq);
	if (err)
		goto err_sq_lock;

	err = ibv_cmd_create_qp(ibpd, &qp->ibv_qp, attr, &cmd.ibv_cmd,
				sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (err) {
		verbs_err(&ctx->ibv_ctx, "CREATE_QP failed: %s\n",
			  strerror(err));
		goto err_rq_lock;
	}

	err = qhca_check_qp_resp(ctx, &resp);
	if (err)
		goto err_destroy;

	err = qhca_map_wq(ctx, &qp->sq, resp.sq_mmap_key, resp.sq_mmap_size);
	if (!err)
		err = qhca_map_wq(ctx, &qp->rq, resp.rq_mmap_key,
				  resp.rq_mmap_size);
	if (err) {
		verbs_err(&ctx->ibv_ctx, "mapping QP %u failed: %s\n",
			  resp.qpn, strerror(err));
		goto err_unmap;
	}

	qp->sq.depth = resp.sq_depth;
	qp->sq.stride = resp.sq_stride;
	qp->sq.max_sge = resp.max_send_sge;
	qp->rq.depth = resp.rq_depth;
	qp->rq.stride = resp.rq_stride;
	qp->rq.max_sge = resp.max_recv_sge;
	qp->max_inline_data = resp.max_inline_data;
	qp->sq_sig_all = attr->sq_sig_all;
	qp->srq = attr->srq ? to_qhca_srq(attr->srq) : NULL;
	qhca_qp_caps(qp, &attr->cap);
	/* qhca_destroy_qp() puts it, through ibv_qp.pd. */
	qhca_pd_get(ibpd);

	qhca_cq_attach_qp(qp);
	verbs_debug(&ctx->ibv_ctx, "QP %u: SQ %u x %u bytes, RQ %u x %u bytes\n",
		    qp->ibv_qp.qp_num, qp->sq.depth, qp->sq.stride,
		    qp->rq.depth, qp->rq.stride);
	return &qp->ibv_qp;

err_unmap:
	qhca_unmap_wq(&qp->rq);
	qhca_unmap_wq(&qp->sq);
err_destroy:
	ibv_cmd_destroy_qp(&qp->ibv_qp);
err_rq_lock:
	pthread_spin_destroy(&qp->rq.lock);
err_sq_lock:
	pthread_spin_destroy(&qp->sq.lock);
err_free:
	free(qp);
	errno = err;
	return NULL;
}

int qhca_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		   int attr_mask)
{
	struct qhca_qp *qp = to_qhca_qp(ibqp);
	struct ibv_modify_qp cmd = {};
	int err;

	err = ibv_cmd_modify_qp(ibqp, attr, attr_mask, &cmd, sizeof(cmd));
	if (err) {
		verbs_debug(verbs_get_ctx(ibqp->context),
			    "MODIFY_QP %u (mask 0x%x) failed: %s\n",
			    ibqp->qp_num, attr_mask, strerror(err));
		return err;
	}

	/*
	 * In RESET the device forgot the QP's WQEs and starts its rings
	 * over at index 0: do the same, and drop the CQEs still waiting
	 * for WQEs that are gone.
	 */
	if (attr_mask & IBV_QP_STATE && attr->qp_state == IBV_QPS_RESET &&
	    ibqp->qp_type != IBV_QPT_XRC_RECV) {
		qhca_cq_clean_qp(qp);
		qhca_wq_reset(&qp->sq);
		qhca_wq_reset(&qp->rq);
	}
	return 0;
}

int qhca_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		  int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct qhca_qp *qp = to_qhca_qp(ibqp);
	struct ibv_query_qp cmd = {};
	int err;

	err = ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr, &cmd,
			       sizeof(cmd));
	if (err)
		return err;

	qhca_qp_caps(qp, &attr->cap);
	init_attr->cap = attr->cap;
	return 0;
}

int qhca_destroy_qp(struct ibv_qp *ibqp)
{
	struct qhca_qp *qp = to_qhca_qp(ibqp);
	int err;

	err = ibv_cmd_destroy_qp(ibqp);
	if (err) {
		verbs_err(verbs_get_ctx(ibqp->context),
			  "DESTROY_QP %u failed: %s\n", ibqp->qp_num,
			  strerror(err));
		return err;
	}

	/* The device completes nothing more for it: its CQEs can go. */
	if (ibqp->qp_type != IBV_QPT_XRC_RECV) {
		qhca_cq_detach_qp(qp);
		/* An XRC TGT QP has no PD (its pd is the caller's junk). */
		qhca_pd_put(ibqp->pd);
	}
	qhca_unmap_wq(&qp->rq);
	qhca_unmap_wq(&qp->sq);
	pthread_spin_destroy(&qp->rq.lock);
	pthread_spin_destroy(&qp->sq.lock);
	free(qp);
	return 0;
}
