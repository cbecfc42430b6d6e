// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libqhca: shared receive queues.
 *
 * The driver allocates the ring and lets us map it; ibv_post_srq_recv()
 * writes WQEs into it and rings QHCA_DB_SRQ on the context's doorbell
 * page, without a system call.  The limit and the object's life go
 * through the kernel.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "qhca.h"
#include "qhca_abi.h"
#include "qhca_db.h"
#include "qhca_srq.h"
#include "qhca_verbs.h"
#include "qhca_wq.h"
#include "qhca_wqe.h"

/* As qhca_check_wq() does for an RQ: the layout must fit the mapping. */
static int qhca_check_srq_resp(struct qhca_context *ctx,
			       const struct qhca_create_srq_resp *resp)
{
	if (resp->comp_mask)
		verbs_debug(&ctx->ibv_ctx, "ignoring unknown SRQ comp_mask 0x%x\n",
			    resp->comp_mask);

	if (!resp->srqn || resp->srqn > 0xffff || !resp->depth ||
	    resp->depth & (resp->depth - 1) ||
	    resp->depth > QHCA_WQ_MAX_DEPTH ||
	    resp->stride & (resp->stride - 1) ||
	    resp->stride < 1u << QHCA_RQ_MIN_STRIDE_LOG2 ||
	    resp->stride > 1u << QHCA_WQE_MAX_STRIDE_LOG2 ||
	    (uint64_t)resp->depth * resp->stride > resp->ring_mmap_size ||
	    sizeof(struct qhca_rq_wqe) +
	    (uint64_t)resp->max_sge * sizeof(struct qhca_sge) > resp->stride) {
		verbs_err(&ctx->ibv_ctx,
			  "SRQ %u: bad layout: %u WQEs of %u bytes with %u SGEs, %u bytes mapped\n",
			  resp->srqn, resp->depth, resp->stride, resp->max_sge,
			  resp->ring_mmap_size);
		return EPROTO;
	}
	return 0;
}

/* Map the ring the kernel made and take its layout; errno value or 0. */
int qhca_srq_setup(struct qhca_context *ctx, struct qhca_srq *srq,
		   const struct qhca_create_srq_resp *resp,
		   struct ibv_srq_attr *attr)
{
	void *ring;
	int err;

	err = qhca_check_srq_resp(ctx, resp);
	if (err)
		return err;

	srq->done = qhca_pd_calloc(srq->pd, resp->depth, QHCA_RES_SRQ_DONE,
				   &srq->done_custom);
	if (!srq->done)
		return ENOMEM;
	ring = mmap(NULL, resp->ring_mmap_size, PROT_READ | PROT_WRITE,
		    MAP_SHARED, ctx->ibv_ctx.context.cmd_fd, resp->ring_mmap_key);
	if (ring == MAP_FAILED) {
		err = errno;
		verbs_err(&ctx->ibv_ctx, "mapping SRQ %u failed: %s\n",
			  resp->srqn, strerror(err));
		return err;
	}
	srq->ring = ring;
	srq->map_size = resp->ring_mmap_size;
	srq->srqn = resp->srqn;
	srq->depth = resp->depth;
	srq->stride = resp->stride;
	srq->max_sge = resp->max_sge;
	attr->max_wr = srq->depth;
	attr->max_sge = srq->max_sge;
	verbs_debug(&ctx->ibv_ctx, "SRQ %u: %u x %u bytes\n", srq->srqn,
		    srq->depth, srq->stride);
	return 0;
}

/*
 * An SRQ for ibv_create_srq() or ibv_create_srq_ex() (qhca_xrc.c) to make
 * in the kernel and set up: NULL with errno set if there is no memory.
 */
struct qhca_srq *qhca_srq_alloc(void)
{
	struct qhca_srq *srq;
	int err;

	srq = calloc(1, sizeof(*srq));
	if (!srq) {
		errno = ENOMEM;
		return NULL;
	}
	err = pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE);
	if (err) {
		free(srq);
		errno = err;
		return NULL;
	}
	return srq;
}

/* Once the kernel's SRQ is gone or was never made, set up or not. */
void qhca_srq_free(struct qhca_srq *srq)
{
	if (srq->ring)
		munmap(srq->ring, srq->map_size);
	if (srq->done)
		qhca_pd_free(srq->pd, srq->done, QHCA_RES_SRQ_DONE,
			     srq->done_custom);
	qhca_pd_put(srq->pd);
	pthread_spin_destroy(&srq->lock);
	free(srq);
}

struct ibv_srq *qhca_create_srq(struct ibv_pd *ibpd,
				struct ibv_srq_init_attr *attr)
{
	struct qhca_context *ctx = to_qhca_ctx(ibpd->context);
	struct qhca_create_srq_resp resp = {};
	struct qhca_create_srq cmd = {};
	struct qhca_srq *srq;
	int err;

	srq = qhca_srq_alloc();
	if (!srq)
		return NULL;
	srq->pd = ibpd;
	qhca_pd_get(ibpd);

	err = ibv_cmd_create_srq(ibpd, &srq->ibv_srq, attr, &cmd.ibv_cmd,
				 sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (err) {
		verbs_debug(&ctx->ibv_ctx, "CREATE_SRQ failed: %s\n",
			    strerror(err));
		goto err_free;
	}

	err = qhca_srq_setup(ctx, srq, &resp, &attr->attr);
	if (err)
		goto err_destroy;
	return &srq->ibv_srq;

err_destroy:
	ibv_cmd_destroy_srq(&srq->ibv_srq);
err_free:
	qhca_srq_free(srq);
	errno = err;
	return NULL;
}

/* The ring the kernel made for a resize: as at creation, it must fit. */
static int qhca_check_resize_resp(struct qhca_context *ctx,
				  struct qhca_srq *srq, uint32_t depth,
				  const struct qhca_ibv_modify_srq_resp *resp)
{
	if (resp->comp_mask)
		verbs_debug(&ctx->ibv_ctx, "ignoring unknown SRQ comp_mask 0x%x\n",
			    resp->comp_mask);
	if (resp->depth != depth ||
	    (uint64_t)resp->depth * srq->stride > resp->ring_mmap_size) {
		verbs_err(&ctx->ibv_ctx,
			  "SRQ %u: bad resize: %u WQEs of %u bytes, %u bytes mapped, %u asked\n",
			  srq->srqn, resp->depth, srq->stride,
			  resp->ring_mmap_size, depth);
		return EPROTO;
	}
	return 0;
}

/*
 * IBV_SRQ_MAX_WR: the kernel makes a ring of the same rounding as at
 * creation and the device moves the WQEs not yet taken into it, at the
 * same free-running indexes; the lock keeps posters out meanwhile, and
 * completions, whose marks move to the new ring's slots.  A ring smaller
 * than the WQEs posted and not completed is EINVAL, before the kernel.
 */
static int qhca_srq_resize(struct qhca_srq *srq, struct ibv_srq_attr *attr,
			   int attr_mask)
{
	struct qhca_context *ctx = to_qhca_ctx(srq->ibv_srq.context);
	struct qhca_ibv_modify_srq_resp resp = {};
	struct qhca_modify_srq cmd = {};
	uint32_t depth = 2, idx;
	bool custom;
	uint8_t *done;
	void *ring;
	int err;

	if (!attr->max_wr || attr->max_wr > QHCA_WQ_MAX_DEPTH)
		return EINVAL;
	while (depth < attr->max_wr)
		depth <<= 1;
	done = qhca_pd_calloc(srq->pd, depth, QHCA_RES_SRQ_DONE, &custom);
	if (!done)
		return ENOMEM;

	cmd.resp_addr = (uintptr_t)&resp;
	cmd.resp_len = sizeof(resp);
	pthread_spin_lock(&srq->lock);
	if (srq->pi - srq->ci > depth) {
		err = EINVAL;
		goto out;
	}
	err = ibv_cmd_modify_srq(&srq->ibv_srq, attr, attr_mask, &cmd.ibv_cmd,
				 sizeof(cmd));
	if (err)
		goto out;

	/* The device reads only the new ring now: failing here loses it. */
	err = qhca_check_resize_resp(ctx, srq, depth, &resp);
	ring = err ? MAP_FAILED :
	       mmap(NULL, resp.ring_mmap_size, PROT_READ | PROT_WRITE,
		    MAP_SHARED, ctx->ibv_ctx.context.cmd_fd,
		    resp.ring_mmap_key);
	if (ring == MAP_FAILED) {
		if (!err) {
			err = errno;
			verbs_err(&ctx->ibv_ctx, "mapping SRQ %u failed: %s\n",
				  srq->srqn, strerror(err));
		}
		srq->lost = true;
		goto out;
	}
	for (idx = srq->ci; idx != srq->pi; idx++)
		done[idx & (depth - 1)] = srq->done[idx & (srq->depth - 1)];
	munmap(srq->ring, srq->map_size);
	qhca_pd_free(srq->pd, srq->done, QHCA_RES_SRQ_DONE,
		     srq->done_custom);
	srq->done = done;
	srq->done_custom = custom;
	done = NULL;
	srq->ring = ring;
	srq->map_size = resp.ring_mmap_size;
	srq->depth = depth;
	attr->max_wr = depth;
	verbs_debug(&ctx->ibv_ctx, "SRQ %u: resized to %u x %u bytes\n",
		    srq->srqn, srq->depth, srq->stride);
out:
	pthread_spin_unlock(&srq->lock);
	if (done)
		qhca_pd_free(srq->pd, done, QHCA_RES_SRQ_DONE, custom);
	return err;
}

int qhca_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		    int attr_mask)
{
	struct qhca_modify_srq cmd = {};

	if (attr_mask & IBV_SRQ_MAX_WR)
		return qhca_srq_resize(to_qhca_srq(ibsrq), attr, attr_mask);
	return ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd.ibv_cmd,
				  sizeof(cmd));
}

int qhca_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd = {};

	return ibv_cmd_query_srq(ibsrq, attr, &cmd, sizeof(cmd));
}

int qhca_destroy_srq(struct ibv_srq *ibsrq)
{
	struct qhca_srq *srq = to_qhca_srq(ibsrq);
	int err;

	/* EBUSY while QPs use it: the SRQ stays as it was. */
	err = ibv_cmd_destroy_srq(ibsrq);
	if (err)
		return err;

	if (srq->xrc_cq)
		qhca_xrc_srq_detach(srq);
	qhca_srq_free(srq);
	return 0;
}

int qhca_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr)
{
	struct qhca_srq *srq = to_qhca_srq(ibsrq);
	struct qhca_rq_wqe *wqe;
	uint32_t pi, start;
	int err = 0;

	pthread_spin_lock(&srq->lock);
	start = pi = srq->pi;
	/* A resize whose new ring could not be mapped: nothing reaches it. */
	if (srq->lost)
		err = EIO;
	for (; wr && !err; wr = wr->next) {
		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > srq->max_sge) {
			err = EINVAL;
			break;
		}
		if (pi - srq->ci >= srq->depth) {
			err = ENOMEM;
			break;
		}

		wqe = (struct qhca_rq_wqe *)((uint8_t *)srq->ring +
			(size_t)(pi & (srq->depth - 1)) * srq->stride);
		qhca_rq_wqe_set(wqe, wr);
		pi++;
	}
	if (err)
		*bad_wr = wr;

	if (pi != start) {
		srq->pi = pi;
		qhca_ring_db(to_qhca_ctx(ibsrq->context), QHCA_DB_SRQ,
			     srq->srqn, pi);
	}
	pthread_spin_unlock(&srq->lock);
	return err;
}

/*
 * A CQE completed the WQE in slot wqe_idx: mark it and free the slots
 * from ci on that are done.  False if wqe_idx is not outstanding.
 */
bool qhca_srq_complete(struct qhca_srq *srq, uint16_t wqe_idx)
{
	uint32_t mask = srq->depth - 1;
	bool ok;

	pthread_spin_lock(&srq->lock);
	ok = (((uint32_t)wqe_idx - srq->ci) & mask) < srq->pi - srq->ci;
	if (ok) {
		srq->done[wqe_idx & mask] = 1;
		while (srq->ci != srq->pi && srq->done[srq->ci & mask]) {
			srq->done[srq->ci & mask] = 0;
			srq->ci++;
		}
	}
	pthread_spin_unlock(&srq->lock);
	return ok;
}
