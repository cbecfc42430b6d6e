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

/* The ring's depth for @max_wr WQEs, as a log2; -EINVAL if too many. */
static int qhca_srq_depth_log2(struct qhca_dev *dev, u32 max_wr)
{
	u32 dev_max = le32_to_cpu(dev->attr.max_srq_wr);
	u32 log2;

	if (!max_wr || max_wr > dev_max || !dev_max)
		return -EINVAL;
	log2 = order_base_2(max(max_wr, 2U));
	if (log2 > ilog2(dev_max) || log2 > QHCA_WQ_MAX_DEPTH_LOG2)
		return -EINVAL;
	return log2;
}

static int qhca_srq_size(struct qhca_dev *dev, struct qhca_srq *srq,
			 struct ib_srq_attr *attr)
{
	u32 max_sge = le32_to_cpu(dev->attr.max_srq_sge);
	u32 stride;
	int log2;

	if (attr->max_sge > max_sge)
		return -EINVAL;
	log2 = qhca_srq_depth_log2(dev, attr->max_wr);
	if (log2 < 0)
		return log2;
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

/*
 * A user SRQ to a new ring: its mapping is written to the provider's
 * buffer before the device moves, so that a success is never one the
 * provider cannot follow; the provider posts nothing meanwhile.
 */
static int qhca_srq_resize_user(struct qhca_dev *dev, struct qhca_srq *srq,
				struct qhca_cmd_modify_srq *cmd,
				const struct qhca_ibv_modify_srq_req *req,
				struct ib_udata *udata)
{
	struct qhca_ucontext *uctx = rdma_udata_to_drv_context(udata,
				struct qhca_ucontext, ibucontext);
	struct qhca_ibv_modify_srq_resp resp = {};
	struct rdma_user_mmap_entry *entry;
	struct qhca_dma_buf buf;
	int err;

	if (!req->resp_addr)
		return -EOPNOTSUPP;
	err = qhca_dma_buf_alloc(dev, &buf, (size_t)srq->resize_depth <<
				 srq->stride_log2);
	if (err)
		return err;
	entry = qhca_mmap_insert_ring(dev, &uctx->ibucontext, &buf);
	if (IS_ERR(entry)) {
		qhca_dma_buf_free(dev, &buf);
		return PTR_ERR(entry);
	}
	/* The entry owns the memory from now on. */
	resp.depth = srq->resize_depth;
	resp.ring_mmap_key = rdma_user_mmap_get_offset(entry);
	resp.ring_mmap_size = buf.size;
	if (copy_to_user(u64_to_user_ptr(req->resp_addr), &resp,
			 min_t(size_t, sizeof(resp), req->resp_len))) {
		qhca_mmap_remove_ring(entry, true);
		return -EFAULT;
	}

	cmd->ring_addr = cpu_to_le64(buf.dma);
	err = qhca_admin_modify_srq(dev, cmd);
	if (err) {
		/* Refused: the device never used it.  Else it may have. */
		qhca_mmap_remove_ring(entry, err != -EIO && err != -ETIMEDOUT);
		return err;
	}
	/* The old ring is the provider's until it unmaps it. */
	qhca_mmap_remove_ring(srq->mmap_entry, true);
	srq->mmap_entry = entry;
	srq->buf = buf;
	srq->depth = srq->resize_depth;
	return 0;
}

/*
 * A kernel SRQ to a new ring.  The admin command sleeps, so posters are
 * not held off: from now on they write into the new ring at the same
 * free-running indexes and ring no doorbell (see qhca_post_srq_recv());
 * the device copies the WQEs posted before.  After the command, the
 * completed slots move to the new ring's bitmap, or, if it failed, the
 * WQEs posted meanwhile go back to the old ring.  Either way the
 * doorbell then tells the device about them.
 */
static int qhca_srq_resize_kernel(struct qhca_dev *dev, struct qhca_srq *srq,
				  struct qhca_cmd_modify_srq *cmd)
{
	u32 depth = srq->resize_depth;
	u32 mask = srq->depth - 1, new_mask = depth - 1;
	struct qhca_dma_buf old;
	unsigned long *done;
	unsigned long flags;
	u32 idx;
	int err;

	done = bitmap_zalloc(depth, GFP_KERNEL);
	if (!done)
		return -ENOMEM;
	err = qhca_dma_buf_alloc(dev, &srq->resize_buf, (size_t)depth <<
				 srq->stride_log2);
	if (err) {
		bitmap_free(done);
		return err;
	}
	cmd->ring_addr = cpu_to_le64(srq->resize_buf.dma);

	spin_lock_irqsave(&srq->lock, flags);
	if (srq->head - srq->tail > depth) {
		spin_unlock_irqrestore(&srq->lock, flags);
		err = -EINVAL;
		goto out_free;
	}
	srq->resize_head = srq->head;
	srq->resizing = true;
	spin_unlock_irqrestore(&srq->lock, flags);

	err = qhca_admin_modify_srq(dev, cmd);

	spin_lock_irqsave(&srq->lock, flags);
	if (!err) {
		for (idx = srq->tail; idx != srq->head; idx++)
			if (test_bit(idx & mask, srq->done))
				__set_bit(idx & new_mask, done);
		swap(srq->done, done);
		old = srq->buf;
		srq->buf = srq->resize_buf;
		srq->resize_buf = old;
		srq->depth = depth;
	} else {
		for (idx = srq->resize_head; idx != srq->head; idx++)
			memcpy(srq->buf.va + ((size_t)(idx & mask) <<
					      srq->stride_log2),
			       srq->resize_buf.va + ((size_t)(idx & new_mask) <<
						     srq->stride_log2),
			       BIT(srq->stride_log2));
	}
	srq->resizing = false;
	if (srq->head != srq->resize_head) {
		/* The device must not see the doorbell before the WQEs. */
		wmb();
		writel(FIELD_PREP(QHCA_DB_QUEUE_NUM, srq->srqn) |
		       FIELD_PREP(QHCA_DB_QUEUE_IDX, (u16)srq->head),
		       srq->db + QHCA_DB_SRQ);
	}
	spin_unlock_irqrestore(&srq->lock, flags);
	/* The old ring after a success, the new one after a refusal. */
	if (err == -EIO || err == -ETIMEDOUT) {
		/* The device may use either: keep both, as destroy does. */
		return err;
	}
out_free:
	qhca_dma_buf_free(dev, &srq->resize_buf);
	bitmap_free(done);
	return err;
}

/* IB_SRQ_MAX_WR: one resize at a time, a ring that holds what is posted. */
static int qhca_srq_resize(struct qhca_dev *dev, struct qhca_srq *srq,
			   struct ib_srq_attr *attr,
			   struct qhca_cmd_modify_srq *cmd,
			   const struct qhca_ibv_modify_srq_req *req,
			   struct ib_udata *udata)
{
	unsigned long flags;
	int log2, err;

	if (!(le32_to_cpu(dev->attr.device_cap_flags) &
	      QHCA_DEV_CAP_RESIZE_SRQ))
		return -EOPNOTSUPP;
	log2 = qhca_srq_depth_log2(dev, attr->max_wr);
	if (log2 < 0)
		return log2;

	spin_lock_irqsave(&srq->lock, flags);
	if (srq->resize_depth) {
		spin_unlock_irqrestore(&srq->lock, flags);
		return -EBUSY;
	}
	srq->resize_depth = BIT(log2);
	spin_unlock_irqrestore(&srq->lock, flags);

	cmd->attr_mask |= cpu_to_le32(QHCA_SRQ_ATTR_MAX_WR);
	cmd->depth_log2 = log2;
	if (srq->kernel)
		err = qhca_srq_resize_kernel(dev, srq, cmd);
	else
		err = qhca_srq_resize_user(dev, srq, cmd, req, udata);

	spin_lock_irqsave(&srq->lock, flags);
	srq->resize_depth = 0;
	spin_unlock_irqrestore(&srq->lock, flags);
	if (!err)
		attr->max_wr = srq->depth;
	return err;
}

int qhca_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		    enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct qhca_dev *dev = to_qdev(ibsrq->device);
	struct qhca_srq *srq = to_qsrq(ibsrq);
	struct qhca_ibv_modify_srq_req req = {};
	struct qhca_cmd_modify_srq cmd = {};
	int err;

	if (udata) {
		err = qhca_udata_get_req(udata, &req, sizeof(req));
		if (err)
			return err;
		if (req.comp_mask)
			return -EINVAL;
	}
	if (mask & ~(IB_SRQ_LIMIT | IB_SRQ_MAX_WR))
		return -EINVAL;
	if (!mask)
		return 0;

	cmd.srqn = cpu_to_le32(srq->srqn);
	if (mask & IB_SRQ_LIMIT) {
		cmd.attr_mask = cpu_to_le32(QHCA_SRQ_ATTR_LIMIT);
		cmd.limit = cpu_to_le32(attr->srq_limit);
	}
	/* The device checks the limit against the new ring and the old. */
	if (mask & IB_SRQ_MAX_WR)
		return qhca_srq_resize(dev, srq, attr, &cmd, &req, udata);
	if (attr->srq_limit > srq->depth)
		return -EINVAL;
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

/* During a resize the WQEs must fit either ring: its command may fail. */
static bool qhca_srq_full(const struct qhca_srq *srq)
{
	u32 depth = srq->depth;

	if (srq->resizing)
		depth = min(depth, srq->resize_depth);
	return srq->head - srq->tail >= depth;
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
		if (srq->resizing)
			wqe = srq->resize_buf.va +
			      ((size_t)(srq->head & (srq->resize_depth - 1)) <<
			       srq->stride_log2);
		else
			wqe = srq->buf.va +
			      ((size_t)(srq->head & (srq->depth - 1)) <<
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
	/* While resizing, the resize rings it (qhca_srq_resize_kernel()). */
	if (posted && !srq->resizing) {
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
