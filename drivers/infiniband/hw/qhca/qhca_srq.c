// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * qhca shared receive queues.  The ring of receive WQEs is DMA-coherent
 * memory the driver allocates: user space maps it and posts itself, kernel
 * consumers post through qhca_post_srq_recv().
 *
 * The device takes WQEs in ring order, but their completions may come
 * back in any order, through any CQ of the QPs on the SRQ.  A kernel
 * SRQ therefore marks each completed slot and frees slots from the oldest
 * one on, as soon as that one is done.
 */

#include <linux/bitfield.h>
#include <linux/bitmap.h>
#include <linux/log2.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/uverbs_ioctl.h>
#include <uapi/rdma/qhca-abi.h>

#include "qhca.h"

static int qhca_srq_size(struct qhca_dev *dev, struct qhca_srq *srq,
			 struct ib_srq_attr *attr)
{
	u32 max_wr = le32_to_cpu(dev->attr.max_srq_wr);
	u32 max_sge = le32_to_cpu(dev->attr.max_srq_sge);
	u32 stride, log2;

	if (!attr->max_wr || attr->max_wr > max_wr || !max_wr ||
	    attr->max_sge > max_sge)
		return -EINVAL;
	log2 = order_base_2(max(attr->max_wr, 2U));
	if (log2 > ilog2(max_wr) || log2 > QHCA_WQ_MAX_DEPTH_LOG2)
		return -EINVAL;
	stride = roundup_pow_of_two(sizeof(struct qhca_rq_wqe) +
				    max(attr->max_sge, 1U) *
				    sizeof(struct qhca_sge));
	if (stride > BIT(QHCA_WQE_MAX_STRIDE_LOG2))
		return -EINVAL;

	srq->depth = BIT(log2);
	srq->stride_log2 = ilog2(stride);
	srq->max_sge = min_t(u32, max_sge, (stride -
			     sizeof(struct qhca_rq_wqe)) /
			     sizeof(struct qhca_sge));
	attr->max_wr = srq->depth;
	attr->max_sge = srq->max_sge;
	return 0;
}

static int qhca_srq_user_resp(struct qhca_dev *dev, struct qhca_srq *srq,
			      struct ib_udata *udata)
{
	struct qhca_ucontext *uctx = rdma_udata_to_drv_context(udata,
				struct qhca_ucontext, ibucontext);
	struct qhca_ibv_create_srq_resp resp = {};
	struct rdma_user_mmap_entry *entry;

	entry = qhca_mmap_insert_ring(dev, &uctx->ibucontext, &srq->buf);
	if (IS_ERR(entry))
		return PTR_ERR(entry);
	/* The entry owns the memory from now on. */
	srq->mmap_entry = entry;

	resp.srqn = srq->srqn;
	resp.ring_mmap_key = rdma_user_mmap_get_offset(entry);
	resp.ring_mmap_size = srq->buf.size;
	resp.depth = srq->depth;
	resp.stride = BIT(srq->stride_log2);
	resp.max_sge = srq->max_sge;
	return qhca_udata_put_resp(udata, &resp, sizeof(resp));
}

/* As qhca_cq_release(): without @device_done the memory is never freed. */
static void qhca_srq_release(struct qhca_dev *dev, struct qhca_srq *srq,
			     bool device_done)
{
	if (srq->mmap_entry) {
		qhca_mmap_remove_ring(srq->mmap_entry, device_done);
		srq->mmap_entry = NULL;
	} else if (device_done) {
		qhca_dma_buf_free(dev, &srq->buf);
	}
	bitmap_free(srq->done);
	srq->done = NULL;
	if (srq->kernel)
		qhca_kuar_put(dev);
}

int qhca_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init_attr,
		    struct ib_udata *udata)
{
	struct qhca_dev *dev = to_qdev(ibsrq->device);
	struct qhca_srq *srq = to_qsrq(ibsrq);
	struct qhca_cmd_create_srq cmd = {};
	struct qhca_ucontext *uctx;
	bool device_done = true;
	u32 srqn;
	int err;

	if (init_attr->srq_type != IB_SRQT_BASIC &&
	    init_attr->srq_type != IB_SRQT_XRC)
		return -EOPNOTSUPP;
	if (init_attr->srq_type == IB_SRQT_XRC &&
	    (!init_attr->ext.xrc.xrcd || !init_attr->ext.cq))
		return -EINVAL;
	if (udata) {
		struct qhca_ibv_create_srq_req req = {};

		err = qhca_udata_get_req(udata, &req, sizeof(req));
		if (err)
			return err;
		if (req.comp_mask || req.reserved)
			return -EINVAL;
	}
	err = qhca_srq_size(dev, srq, &init_attr->attr);
	if (err)
		return err;

	srq->kernel = !udata;
	spin_lock_init(&srq->lock);
	err = qhca_dma_buf_alloc(dev, &srq->buf,
				 (size_t)srq->depth << srq->stride_log2);
	if (err)
		return err;

	if (srq->kernel) {
		srq->done = bitmap_zalloc(srq->depth, GFP_KERNEL);
		if (!srq->done) {
			qhca_dma_buf_free(dev, &srq->buf);
			return -ENOMEM;
		}
		err = qhca_kuar_get(dev);
		if (err) {
			bitmap_free(srq->done);
			srq->done = NULL;
			qhca_dma_buf_free(dev, &srq->buf);
			return err;
		}
		srq->db = dev->kuar.db;
		cmd.uar = cpu_to_le32(dev->kuar.index);
	} else {
		uctx = rdma_udata_to_drv_context(udata, struct qhca_ucontext,
						 ibucontext);
		cmd.uar = cpu_to_le32(uctx->uar_index);
	}

	cmd.ring_addr = cpu_to_le64(srq->buf.dma);
	cmd.pdn = cpu_to_le32(to_qpd(ibsrq->pd)->pdn);
	cmd.depth_log2 = ilog2(srq->depth);
	cmd.stride_log2 = srq->stride_log2;
	/* As on mlx4 and mlx5, srq_limit means nothing here: not armed. */
	cmd.limit = 0;
	if (init_attr->srq_type == IB_SRQT_XRC) {
		/* Its receives complete to its own CQ, whichever TGT QP. */
		cmd.type = QHCA_SRQT_XRC;
		cmd.xrcd = cpu_to_le32(to_qxrcd(init_attr->ext.xrc.xrcd)->xrcdn);
		cmd.cqn = cpu_to_le32(to_qcq(init_attr->ext.cq)->cqn);
	}
	err = qhca_admin_create_srq(dev, &cmd, &srqn);
	if (err)
		goto err_release;
	if (!srqn || srqn > FIELD_MAX(QHCA_DB_QUEUE_NUM)) {
		ibdev_err(&dev->ibdev, "device returned SRQ number %u\n", srqn);
		err = -EIO;
		goto err_destroy;
	}
	srq->srqn = srqn;
	/* What ib_get_srq_num() and uverbs report to the sender's side. */
	ibsrq->ext.xrc.srq_num = srqn;

	err = xa_insert_irq(&dev->srqs, srqn, srq, GFP_KERNEL);
	if (err)
		goto err_destroy;

	if (udata) {
		err = qhca_srq_user_resp(dev, srq, udata);
		if (err)
			goto err_erase;
	}
	return 0;

err_erase:
	xa_erase_irq(&dev->srqs, srqn);
err_destroy:
	device_done = qhca_destroyed(dev, qhca_admin_destroy_srq(dev, srqn),
				     "DESTROY_SRQ", srqn);
err_release:
	qhca_srq_release(dev, srq, device_done);
	return err;
}

int qhca_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		    enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct qhca_dev *dev = to_qdev(ibsrq->device);
	struct qhca_srq *srq = to_qsrq(ibsrq);
	struct qhca_cmd_modify_srq cmd = {};

	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	/* The ring cannot be resized, as on mlx4 and mlx5. */
	if (mask & ~IB_SRQ_LIMIT)
		return -EINVAL;
	if (!(mask & IB_SRQ_LIMIT))
		return 0;
	if (attr->srq_limit > srq->depth)
		return -EINVAL;

	cmd.srqn = cpu_to_le32(srq->srqn);
	cmd.attr_mask = cpu_to_le32(QHCA_SRQ_ATTR_LIMIT);
	cmd.limit = cpu_to_le32(attr->srq_limit);
	return qhca_admin_modify_srq(dev, &cmd);
}

int qhca_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct qhca_dev *dev = to_qdev(ibsrq->device);
	struct qhca_srq *srq = to_qsrq(ibsrq);
	struct qhca_srq_attr hw;
	int err;

	err = qhca_admin_query_srq(dev, srq->srqn, &hw);
	if (err)
		return err;
	attr->max_wr = srq->depth;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = le32_to_cpu(hw.limit);
	return 0;
}

int qhca_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct qhca_dev *dev = to_qdev(ibsrq->device);
	struct qhca_srq *srq = to_qsrq(ibsrq);
	int err;

	/* Out of the table first: no event reaches the SRQ after this. */
	xa_erase_irq(&dev->srqs, srq->srqn);
	err = qhca_admin_destroy_srq(dev, srq->srqn);
	/* ib_core checked that no QP uses it and cannot keep it. */
	qhca_srq_release(dev, srq, qhca_destroyed(dev, err, "DESTROY_SRQ",
						  srq->srqn));
	return 0;
}

static bool qhca_srq_full(const struct qhca_srq *srq)
{
	return srq->head - srq->tail >= srq->depth;
}

int qhca_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr)
{
	struct qhca_srq *srq = to_qsrq(ibsrq);
	struct qhca_rq_wqe *wqe;
	struct qhca_sge *sge;
	unsigned long flags;
	u32 posted = 0;
	int err = 0;
	int i;

	if (!srq->kernel) {
		*bad_wr = wr;
		return -EINVAL;
	}

	spin_lock_irqsave(&srq->lock, flags);
	for (; wr; wr = wr->next) {
		if (qhca_srq_full(srq)) {
			err = -ENOMEM;
			break;
		}
		if (wr->num_sge < 0 || wr->num_sge > srq->max_sge) {
			err = -EINVAL;
			break;
		}
		wqe = srq->buf.va + ((size_t)(srq->head & (srq->depth - 1)) <<
				     srq->stride_log2);
		memset(wqe, 0, sizeof(*wqe));
		wqe->wr_id = cpu_to_le64(wr->wr_id);
		wqe->num_sge = wr->num_sge;
		sge = (struct qhca_sge *)(wqe + 1);
		for (i = 0; i < wr->num_sge; i++) {
			sge[i].addr = cpu_to_le64(wr->sg_list[i].addr);
			sge[i].length = cpu_to_le32(wr->sg_list[i].length);
			sge[i].lkey = cpu_to_le32(wr->sg_list[i].lkey);
		}
		srq->head++;
		posted++;
	}
	if (posted) {
		/* The device must not see the doorbell before the WQEs. */
		wmb();
		writel(FIELD_PREP(QHCA_DB_QUEUE_NUM, srq->srqn) |
		       FIELD_PREP(QHCA_DB_QUEUE_IDX, (u16)srq->head),
		       srq->db + QHCA_DB_SRQ);
	}
	spin_unlock_irqrestore(&srq->lock, flags);

	if (err)
		*bad_wr = wr;
	return err;
}

/*
 * A CQE completed the WQE in slot @wqe_idx of a kernel SRQ: mark it, then
 * free every completed slot from the oldest outstanding one on.  A CQE
 * for nothing outstanding is ignored.
 */
void qhca_srq_retire(struct qhca_srq *srq, u16 wqe_idx)
{
	u32 mask = srq->depth - 1;
	unsigned long flags;

	spin_lock_irqsave(&srq->lock, flags);
	if ((((u32)wqe_idx - srq->tail) & mask) < srq->head - srq->tail) {
		__set_bit(wqe_idx & mask, srq->done);
		while (srq->tail != srq->head &&
		       __test_and_clear_bit(srq->tail & mask, srq->done))
			srq->tail++;
	}
	spin_unlock_irqrestore(&srq->lock, flags);
}

/*
 * A receive CQE of a QP destroyed since: its slot is free all the same,
 * or a kernel SRQ would lose it for good.
 */
void qhca_srq_retire_orphan(struct qhca_dev *dev, u16 srqn, u16 wqe_idx)
{
	struct qhca_srq *srq;
	unsigned long flags;

	xa_lock_irqsave(&dev->srqs, flags);
	srq = xa_load(&dev->srqs, srqn);
	if (srq && srq->kernel)
		qhca_srq_retire(srq, wqe_idx);
	xa_unlock_irqrestore(&dev->srqs, flags);
}

void qhca_srq_handle_event(struct qhca_dev *dev, u32 srqn, u8 type)
{
	struct ib_event event = { .device = &dev->ibdev };
	struct qhca_srq *srq;
	unsigned long flags;

	event.event = type == QHCA_EVENT_SRQ_LIMIT ?
		      IB_EVENT_SRQ_LIMIT_REACHED : IB_EVENT_SRQ_ERR;

	/* Handlers run under the lock: destroy_srq waits for them. */
	xa_lock_irqsave(&dev->srqs, flags);
	srq = xa_load(&dev->srqs, srqn);
	if (!srq) {
		dev_dbg_ratelimited(&dev->pdev->dev,
				    "event %u for no SRQ %u\n", type, srqn);
	} else if (srq->ibsrq.event_handler) {
		event.element.srq = &srq->ibsrq;
		srq->ibsrq.event_handler(&event, srq->ibsrq.srq_context);
	}
	xa_unlock_irqrestore(&dev->srqs, flags);
}
