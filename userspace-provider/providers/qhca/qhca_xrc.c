// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libqhca: XRC domains, XRC SRQs and XRC TGT QPs.
 *
 * The kernel shares a domain between the processes that open it through
 * one file; we only keep the verbs object.  An XRC SRQ is an SRQ whose
 * receives complete to its own CQ, with the number of whichever TGT QP
 * received, maybe one of another process: the CQ keeps a list of its XRC
 * SRQs to free their slots.  A TGT QP has no rings here at all: the
 * kernel owns it, and sends reach it from INI QPs (qhca_qp.c, with the
 * remote SRQ in each send WQE, qhca_post.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "qhca.h"
#include "qhca_abi.h"
#include "qhca_srq.h"
#include "qhca_verbs.h"

struct ibv_xrcd *qhca_open_xrcd(struct ibv_context *ibctx,
				struct ibv_xrcd_init_attr *attr)
{
	struct ib_uverbs_open_xrcd_resp resp = {};
	struct ibv_open_xrcd cmd = {};
	struct verbs_xrcd *xrcd;
	int err;

	xrcd = calloc(1, sizeof(*xrcd));
	if (!xrcd) {
		errno = ENOMEM;
		return NULL;
	}
	err = ibv_cmd_open_xrcd(ibctx, xrcd, sizeof(*xrcd), attr, &cmd,
				sizeof(cmd), &resp, sizeof(resp));
	if (err) {
		free(xrcd);
		errno = err;
		return NULL;
	}
	return &xrcd->xrcd;
}

int qhca_close_xrcd(struct ibv_xrcd *ibxrcd)
{
	struct verbs_xrcd *xrcd = container_of(ibxrcd, struct verbs_xrcd, xrcd);
	int err;

	err = ibv_cmd_close_xrcd(xrcd);
	if (err)
		return err;
	free(xrcd);
	return 0;
}

#define QHCA_XRC_SRQ_MASK \
	(IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | \
	 IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ)

struct ibv_srq *qhca_create_srq_ex(struct ibv_context *ibctx,
				   struct ibv_srq_init_attr_ex *attr)
{
	struct qhca_context *ctx = to_qhca_ctx(ibctx);
	struct qhca_create_srq_resp resp = {};
	struct qhca_create_xsrq cmd = {};
	bool basic = !(attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) ||
		     attr->srq_type == IBV_SRQT_BASIC;
	struct qhca_srq *srq;
	struct qhca_cq *cq;
	int err;

	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !attr->pd) {
		errno = EINVAL;
		return NULL;
	}
	if (basic) {
		if (attr->comp_mask & ~(uint32_t)(IBV_SRQ_INIT_ATTR_TYPE |
						  IBV_SRQ_INIT_ATTR_PD)) {
			errno = EOPNOTSUPP;
			return NULL;
		}
		/* The leading fields of the _ex attributes are the plain ones. */
		return qhca_create_srq(attr->pd,
				       (struct ibv_srq_init_attr *)attr);
	}
	if (attr->srq_type != IBV_SRQT_XRC ||
	    (attr->comp_mask & ~(uint32_t)QHCA_XRC_SRQ_MASK)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if ((attr->comp_mask & QHCA_XRC_SRQ_MASK) != QHCA_XRC_SRQ_MASK ||
	    !attr->xrcd || !attr->cq) {
		errno = EINVAL;
		return NULL;
	}

	srq = qhca_srq_alloc();
	if (!srq)
		return NULL;
	srq->pd = attr->pd;
	qhca_pd_get(attr->pd);

	err = ibv_cmd_create_srq_ex(ibctx, &srq->verbs_srq, attr,
				    &cmd.ibv_cmd, sizeof(cmd), &resp.ibv_resp,
				    sizeof(resp));
	if (err) {
		verbs_debug(&ctx->ibv_ctx, "CREATE_XSRQ failed: %s\n",
			    strerror(err));
		goto err_free;
	}
	err = qhca_srq_setup(ctx, srq, &resp, &attr->attr);
	if (err)
		goto err_destroy;

	cq = to_qhca_cq(attr->cq);
	srq->xrc_cq = cq;
	pthread_spin_lock(&cq->lock);
	list_add_tail(&cq->xrc_srqs, &srq->xrc_entry);
	pthread_spin_unlock(&cq->lock);
	return &srq->ibv_srq;

err_destroy:
	ibv_cmd_destroy_srq(&srq->ibv_srq);
err_free:
	qhca_srq_free(srq);
	errno = err;
	return NULL;
}

/* The SRQ is destroyed: its CQ no longer frees slots for it. */
void qhca_xrc_srq_detach(struct qhca_srq *srq)
{
	struct qhca_cq *cq = srq->xrc_cq;

	pthread_spin_lock(&cq->lock);
	list_del(&srq->xrc_entry);
	pthread_spin_unlock(&cq->lock);
	srq->xrc_cq = NULL;
}

int qhca_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num)
{
	struct qhca_srq *srq = to_qhca_srq(ibsrq);

	if (!srq->xrc_cq)
		return EOPNOTSUPP;
	*srq_num = srq->srqn;
	return 0;
}

/*
 * A QP without rings here: a TGT QP this process created, or opened by
 * number.  Its locks are never taken, but destroy_qp tears them down as
 * for any QP.
 */
static struct qhca_qp *qhca_xrc_qp_alloc(void)
{
	struct qhca_qp *qp;

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	if (pthread_spin_init(&qp->sq.lock, PTHREAD_PROCESS_PRIVATE))
		goto err_free;
	if (pthread_spin_init(&qp->rq.lock, PTHREAD_PROCESS_PRIVATE))
		goto err_sq;
	return qp;

err_sq:
	pthread_spin_destroy(&qp->sq.lock);
err_free:
	free(qp);
	return NULL;
}

static void qhca_xrc_qp_free(struct qhca_qp *qp)
{
	pthread_spin_destroy(&qp->rq.lock);
	pthread_spin_destroy(&qp->sq.lock);
	free(qp);
}

struct ibv_qp *qhca_create_xrc_tgt_qp(struct ibv_context *ibctx,
				      struct ibv_qp_init_attr_ex *attr)
{
	struct qhca_context *ctx = to_qhca_ctx(ibctx);
	struct ib_uverbs_create_qp_resp resp = {};
	struct ibv_create_qp cmd = {};
	struct qhca_qp *qp;
	int err;

	if (attr->comp_mask != IBV_QP_INIT_ATTR_XRCD || !attr->xrcd) {
		errno = EINVAL;
		return NULL;
	}
	qp = qhca_xrc_qp_alloc();
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	err = ibv_cmd_create_qp_ex(ibctx, &qp->verbs_qp, attr, &cmd,
				   sizeof(cmd), &resp, sizeof(resp));
	if (err) {
		verbs_err(&ctx->ibv_ctx, "CREATE_QP (XRC TGT) failed: %s\n",
			  strerror(err));
		qhca_xrc_qp_free(qp);
		errno = err;
		return NULL;
	}
	memset(&attr->cap, 0, sizeof(attr->cap));
	verbs_debug(&ctx->ibv_ctx, "XRC TGT QP %u\n", qp->ibv_qp.qp_num);
	return &qp->ibv_qp;
}

/*
 * ibv_open_qp(): a handle on a TGT QP of an XRC domain we share, maybe
 * created by another process.  The kernel checks that the number is a TGT
 * QP of that domain (EINVAL otherwise) and modifies, queries and destroys
 * the handle as the QP itself would be, except that destroying a handle
 * leaves the QP to its other holders.  There is nothing of the QP to map:
 * it works without us.  Linux 6.12 delivers none of the QP's async events
 * to an opened handle (ib_uverbs_open_qp() sets no event file).
 */
struct ibv_qp *qhca_open_qp(struct ibv_context *ibctx,
			    struct ibv_qp_open_attr *attr)
{
	struct qhca_context *ctx = to_qhca_ctx(ibctx);
	struct ib_uverbs_create_qp_resp resp = {};
	struct ibv_open_qp cmd = {};
	struct qhca_qp *qp;
	int err;

	/* TGT QPs are the only ones that can be shared. */
	if (attr->comp_mask & IBV_QP_OPEN_ATTR_TYPE &&
	    attr->qp_type != IBV_QPT_XRC_RECV) {
		errno = EINVAL;
		return NULL;
	}
	qp = qhca_xrc_qp_alloc();
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	err = ibv_cmd_open_qp(ibctx, &qp->verbs_qp, sizeof(qp->verbs_qp), attr,
			      &cmd, sizeof(cmd), &resp, sizeof(resp));
	if (err) {
		verbs_debug(&ctx->ibv_ctx, "OPEN_QP %u failed: %s\n",
			    attr->qp_num, strerror(err));
		qhca_xrc_qp_free(qp);
		errno = err;
		return NULL;
	}
	verbs_debug(&ctx->ibv_ctx, "XRC TGT QP %u opened\n",
		    qp->ibv_qp.qp_num);
	return &qp->ibv_qp;
}
