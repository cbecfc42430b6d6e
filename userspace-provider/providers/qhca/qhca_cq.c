// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libqhca: completion queues.
 *
 * The driver allocates the ring and the consumer record in one
 * DMA-coherent buffer and lets us map it; from then on polling and arming
 * need no system call.  A CQ also keeps the list of QPs completing to it,
 * so that a CQE can free the slots of the right queue and so that CQEs of
 * a QP that is reset or destroyed can be removed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "qhca.h"
#include "qhca_abi.h"
#include "qhca_cq.h"
#include "qhca_db.h"
#include "qhca_srq.h"
#include "qhca_verbs.h"

/* Check the layout the kernel reports before touching the mapping. */
static int qhca_check_cq_resp(struct qhca_context *ctx,
			      const struct qhca_ibv_create_cq_resp *resp)
{
	uint64_t ring_size = (uint64_t)resp->cqe_count * resp->cqe_size;

	if (resp->comp_mask)
		verbs_debug(&ctx->ibv_ctx, "ignoring unknown CQ comp_mask 0x%x\n",
			    resp->comp_mask);

	if (resp->cqe_size != sizeof(struct qhca_cqe) || !resp->cqe_count ||
	    resp->cqe_count & (resp->cqe_count - 1) ||
	    ring_size > resp->ring_mmap_size ||
	    resp->dbrec_offset % sizeof(__le32) ||
	    resp->dbrec_offset < ring_size ||
	    (uint64_t)resp->dbrec_offset + sizeof(__le32) >
	    resp->ring_mmap_size) {
		verbs_err(&ctx->ibv_ctx,
			  "CQ %u: bad layout: %u CQEs of %u bytes, record at %u, %u bytes mapped\n",
			  resp->cqn, resp->cqe_count, resp->cqe_size,
			  resp->dbrec_offset, resp->ring_mmap_size);
		return EPROTO;
	}
	return 0;
}

/*
 * Check the ring the kernel made for a new CQ and map it.  Shared with
 * ibv_create_cq_ex() (qhca_cq_ex.c), whose command differs only in uverbs.
 *
 * The ring is mapped read-only, so that once the device is gone it reads
 * as zeroes (qhca_cq_peek()).  The consumer record is in the same mmap
 * entry and the kernel maps an entry only whole: a second, writable
 * mapping of it carries the record and is never read.
 */
int qhca_cq_map(struct qhca_context *ctx, struct qhca_cq *cq,
		const struct qhca_ibv_create_cq_resp *resp)
{
	int fd = ctx->ibv_ctx.context.cmd_fd;
	int err;

	err = qhca_check_cq_resp(ctx, resp);
	if (err)
		return err;

	cq->discard = qhca_pd_calloc(cq->pd, (resp->cqe_count + 63) / 64 *
				     sizeof(uint64_t), QHCA_RES_CQ_DISCARD,
				     &cq->discard_custom);
	if (!cq->discard)
		return ENOMEM;

	cq->map = mmap(NULL, resp->ring_mmap_size, PROT_READ, MAP_SHARED, fd,
		       resp->ring_mmap_key);
	if (cq->map == MAP_FAILED) {
		err = errno;
		goto err_free;
	}
	cq->rec_map = mmap(NULL, resp->ring_mmap_size, PROT_WRITE, MAP_SHARED,
			   fd, resp->ring_mmap_key);
	if (cq->rec_map == MAP_FAILED) {
		err = errno;
		goto err_unmap;
	}
	cq->map_size = resp->ring_mmap_size;
	cq->ring = cq->map;
	cq->dbrec = (__le32 *)((uint8_t *)cq->rec_map + resp->dbrec_offset);
	cq->cqn = resp->cqn;
	cq->count = resp->cqe_count;
	cq->check_written = ctx->hw_version >= QHCA_VERSION_1_3;

	verbs_debug(&ctx->ibv_ctx, "CQ %u: %u CQEs\n", cq->cqn, cq->count);
	return 0;

err_unmap:
	munmap(cq->map, resp->ring_mmap_size);
err_free:
	qhca_pd_free(cq->pd, cq->discard, QHCA_RES_CQ_DISCARD,
		     cq->discard_custom);
	cq->discard = NULL;
	verbs_err(&ctx->ibv_ctx, "mapping CQ %u failed: %s\n", resp->cqn,
		  strerror(err));
	return err;
}

void qhca_cq_unmap(struct qhca_cq *cq)
{
	munmap(cq->rec_map, cq->map_size);
	munmap(cq->map, cq->map_size);
	qhca_pd_free(cq->pd, cq->discard, QHCA_RES_CQ_DISCARD,
		     cq->discard_custom);
}

/*
 * A CQ for ibv_create_cq() or ibv_create_cq_ex() (qhca_cq_ex.c) to make in
 * the kernel and map: NULL with errno set if there is no memory.
 */
struct qhca_cq *qhca_cq_alloc(void)
{
	struct qhca_cq *cq;
	int err;

	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		errno = ENOMEM;
		return NULL;
	}
	err = pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	if (err) {
		free(cq);
		errno = err;
		return NULL;
	}
	list_head_init(&cq->qps);
	list_head_init(&cq->xrc_srqs);
	return cq;
}

/* Once the kernel's CQ is gone or was never made, and it is unmapped. */
void qhca_cq_free(struct qhca_cq *cq)
{
	qhca_pd_put(cq->pd);
	pthread_spin_destroy(&cq->lock);
	free(cq);
}

struct ibv_cq *qhca_create_cq(struct ibv_context *ibctx, int cqe,
			      struct ibv_comp_channel *channel,
			      int comp_vector)
{
	struct qhca_context *ctx = to_qhca_ctx(ibctx);
	struct qhca_create_cq_resp resp = {};
	struct qhca_create_cq cmd = {};
	struct qhca_cq *cq;
	int err;

	cq = qhca_cq_alloc();
	if (!cq)
		return NULL;

	err = ibv_cmd_create_cq(ibctx, cqe, channel, comp_vector, &cq->ibv_cq,
				&cmd.ibv_cmd, sizeof(cmd), &resp.ibv_resp,
				sizeof(resp));
	if (err) {
		verbs_err(&ctx->ibv_ctx, "CREATE_CQ of %d CQEs failed: %s\n",
			  cqe, strerror(err));
		goto err_free;
	}

	err = qhca_cq_map(ctx, cq, &resp.drv_payload);
	if (err)
		goto err_destroy;
	return &cq->ibv_cq;

err_destroy:
	ibv_cmd_destroy_cq(&cq->ibv_cq);
err_free:
	qhca_cq_free(cq);
	errno = err;
	return NULL;
}

int qhca_destroy_cq(struct ibv_cq *ibcq)
{
	struct qhca_cq *cq = to_qhca_cq(ibcq);
	int err;

	/* The kernel refuses while a QP still completes here. */
	err = ibv_cmd_destroy_cq(ibcq);
	if (err) {
		verbs_err(verbs_get_ctx(ibcq->context),
			  "DESTROY_CQ %u failed: %s\n", cq->cqn, strerror(err));
		return err;
	}

	qhca_cq_unmap(cq);
	qhca_cq_free(cq);
	return 0;
}

/*
 * The discard marks of the CQEs from ci on, at their slots in a ring of
 * count entries: NULL without memory.  Marks exist only for CQEs not yet
 * consumed, and the device moved those to the new ring only if they fit.
 */
static uint64_t *qhca_cq_move_discard(struct qhca_cq *cq, uint32_t count,
					bool *custom)
{
	uint64_t *discard = qhca_pd_calloc(cq->pd, (count + 63) / 64 *
					   sizeof(uint64_t),
					   QHCA_RES_CQ_DISCARD, custom);
	uint32_t idx, slot;

	if (!discard)
		return NULL;
	for (idx = cq->ci; idx - cq->ci < cq->count && idx - cq->ci < count;
	     idx++) {
		slot = idx & (cq->count - 1);
		if (!(cq->discard[slot / 64] & 1ULL << (slot % 64)))
			continue;
		slot = idx & (count - 1);
		discard[slot / 64] |= 1ULL << (slot % 64);
	}
	return discard;
}

/*
 * Grow or shrink.  The lock keeps pollers (and ibv_start_poll() ..
 * ibv_end_poll()) out: the kernel has the device copy the CQEs from our
 * consumer index on into a new ring at the same indexes, then we map that
 * in place of the old one.  EINVAL from the kernel if more CQEs wait than
 * the new ring holds; the CQ is then as it was.
 */
int qhca_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct qhca_cq *cq = to_qhca_cq(ibcq);
	struct qhca_context *ctx = to_qhca_ctx(ibcq->context);
	int fd = ctx->ibv_ctx.context.cmd_fd;
	struct qhca_ibv_resize_cq_resp *r;
	struct qhca_resize_cq_resp resp = {};
	struct qhca_resize_cq cmd = {};
	void *map, *rec_map;
	uint64_t *discard;
	uint64_t ring_size;
	bool custom;
	int err;

	pthread_spin_lock(&cq->lock);
	cmd.drv_payload.ci = cq->ci;
	err = ibv_cmd_resize_cq(ibcq, cqe, &cmd.ibv_cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp));
	if (err)
		goto out;

	/*
	 * The device writes only the new ring now: a failure from here on
	 * leaves the CQ with no completions to show.
	 */
	r = &resp.drv_payload;
	ring_size = (uint64_t)r->cqe_count * sizeof(struct qhca_cqe);
	if (!r->cqe_count || r->cqe_count & (r->cqe_count - 1) ||
	    ring_size > r->ring_mmap_size || r->dbrec_offset % sizeof(__le32) ||
	    r->dbrec_offset < ring_size ||
	    (uint64_t)r->dbrec_offset + sizeof(__le32) > r->ring_mmap_size) {
		verbs_err(&ctx->ibv_ctx,
			  "CQ %u: bad layout after resize: %u CQEs, record at %u, %u bytes mapped\n",
			  cq->cqn, r->cqe_count, r->dbrec_offset,
			  r->ring_mmap_size);
		err = EPROTO;
		goto out;
	}
	discard = qhca_cq_move_discard(cq, r->cqe_count, &custom);
	if (!discard) {
		err = ENOMEM;
		goto out;
	}
	map = mmap(NULL, r->ring_mmap_size, PROT_READ, MAP_SHARED, fd,
		   r->ring_mmap_key);
	if (map == MAP_FAILED) {
		err = errno;
		goto err_free;
	}
	rec_map = mmap(NULL, r->ring_mmap_size, PROT_WRITE, MAP_SHARED, fd,
		       r->ring_mmap_key);
	if (rec_map == MAP_FAILED) {
		err = errno;
		munmap(map, r->ring_mmap_size);
		goto err_free;
	}

	qhca_cq_unmap(cq);
	cq->map = map;
	cq->rec_map = rec_map;
	cq->map_size = r->ring_mmap_size;
	cq->ring = map;
	cq->dbrec = (__le32 *)((uint8_t *)rec_map + r->dbrec_offset);
	cq->count = r->cqe_count;
	cq->discard = discard;
	cq->discard_custom = custom;
	cq->cur_cqe = NULL;
	verbs_debug(&ctx->ibv_ctx, "CQ %u: resized to %u CQEs\n", cq->cqn,
		    cq->count);
	goto out;

err_free:
	qhca_pd_free(cq->pd, discard, QHCA_RES_CQ_DISCARD, custom);
out:
	pthread_spin_unlock(&cq->lock);
	if (err)
		verbs_err(&ctx->ibv_ctx, "RESIZE_CQ %u to %d CQEs failed: %s\n",
			  cq->cqn, cqe, strerror(err));
	return err;
}

/*
 * Arm for one event.  The doorbell carries our consumer index: the device
 * fires at once if a matching CQE already stands at or after it, so a CQE
 * that arrived since the last poll is not missed.  There is no arm sequence
 * number to keep, hence no cq_event verb.
 */
int qhca_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct qhca_cq *cq = to_qhca_cq(ibcq);
	uint32_t ci;

	pthread_spin_lock(&cq->lock);
	ci = cq->ci;
	pthread_spin_unlock(&cq->lock);

	qhca_ring_db(to_qhca_ctx(ibcq->context),
		     solicited_only ? QHCA_DB_CQ_ARM_SOL : QHCA_DB_CQ_ARM,
		     cq->cqn, ci);
	return 0;
}

/*
 * The two CQs of a QP, locked in CQ number order so that two threads
 * working on QPs that share them the other way round cannot deadlock.
 */
static void qhca_lock_cqs(struct qhca_cq *scq, struct qhca_cq *rcq)
{
	if (scq == rcq) {
		pthread_spin_lock(&scq->lock);
	} else if (scq->cqn < rcq->cqn) {
		pthread_spin_lock(&scq->lock);
		pthread_spin_lock(&rcq->lock);
	} else {
		pthread_spin_lock(&rcq->lock);
		pthread_spin_lock(&scq->lock);
	}
}

static void qhca_unlock_cqs(struct qhca_cq *scq, struct qhca_cq *rcq)
{
	if (scq != rcq)
		pthread_spin_unlock(&rcq->lock);
	pthread_spin_unlock(&scq->lock);
}

/* The receive CQ; an XRC INI QP has none, its send CQ stands in. */
static struct qhca_cq *qhca_qp_rcq(struct qhca_qp *qp)
{
	if (!qp->ibv_qp.recv_cq)
		return to_qhca_cq(qp->ibv_qp.send_cq);
	return to_qhca_cq(qp->ibv_qp.recv_cq);
}

void qhca_cq_attach_qp(struct qhca_qp *qp)
{
	struct qhca_cq *scq = to_qhca_cq(qp->ibv_qp.send_cq);
	struct qhca_cq *rcq = qhca_qp_rcq(qp);

	qp->send_link.qp = qp;
	qp->recv_link.qp = qp;
	qhca_lock_cqs(scq, rcq);
	list_add_tail(&scq->qps, &qp->send_link.entry);
	if (rcq != scq)
		list_add_tail(&rcq->qps, &qp->recv_link.entry);
	qhca_unlock_cqs(scq, rcq);
}

/*
 * Remove the CQEs of QP qpn that wait in the CQ: the QP was reset or
 * destroyed, so its queues start over or are gone, and those CQEs would
 * free slots that are no longer theirs.  The device writes no more of
 * them, and only into slots at or after the first one not yet valid.  The
 * ring is read-only to us: each such CQE is marked for the poller to pass
 * over.  Called with cq->lock held.
 */
static void qhca_cq_clean_locked(struct qhca_cq *cq, uint32_t qpn,
				 struct qhca_srq *srq)
{
	const struct qhca_cqe *cqe;
	uint32_t idx, slot;
	uint64_t bit;

	for (idx = cq->ci; idx - cq->ci < cq->count; idx++) {
		if (qhca_cq_peek(cq, idx, &cqe))
			break;
		slot = idx & (cq->count - 1);
		bit = 1ULL << (slot % 64);
		if (cq->discard[slot / 64] & bit || le32toh(cqe->qpn) != qpn)
			continue;
		/* Its SRQ slot is free again: the SRQ outlives it. */
		if (srq && cqe->srqn && qhca_recv_cqe(cqe))
			qhca_srq_complete(srq, le16toh(cqe->wqe_idx));
		cq->discard[slot / 64] |= bit;
	}

	/* Those at the head can go at once: the device may reuse them. */
	for (idx = cq->ci; idx - cq->ci < cq->count; idx++)
		if (!qhca_cq_take_discard(cq, idx))
			break;
	if (idx != cq->ci) {
		cq->ci = idx;
		qhca_cq_update_ci(cq);
	}
}

void qhca_cq_clean_qp(struct qhca_qp *qp)
{
	struct qhca_cq *scq = to_qhca_cq(qp->ibv_qp.send_cq);
	struct qhca_cq *rcq = qhca_qp_rcq(qp);

	qhca_lock_cqs(scq, rcq);
	qhca_cq_clean_locked(scq, qp->ibv_qp.qp_num, qp->srq);
	if (rcq != scq)
		qhca_cq_clean_locked(rcq, qp->ibv_qp.qp_num, qp->srq);
	qhca_unlock_cqs(scq, rcq);
}

/* The QP is destroyed: drop its CQEs and forget it. */
void qhca_cq_detach_qp(struct qhca_qp *qp)
{
	struct qhca_cq *scq = to_qhca_cq(qp->ibv_qp.send_cq);
	struct qhca_cq *rcq = qhca_qp_rcq(qp);

	qhca_lock_cqs(scq, rcq);
	qhca_cq_clean_locked(scq, qp->ibv_qp.qp_num, qp->srq);
	list_del(&qp->send_link.entry);
	if (scq->last_qp == qp)
		scq->last_qp = NULL;
	if (rcq != scq) {
		qhca_cq_clean_locked(rcq, qp->ibv_qp.qp_num, qp->srq);
		list_del(&qp->recv_link.entry);
		if (rcq->last_qp == qp)
			rcq->last_qp = NULL;
	}
	qhca_unlock_cqs(scq, rcq);
}
