// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * qhca queue pairs: RC, UC and UD, and on an Ethernet port the GSI QP
 * (QP1) of ib_mad, which the device runs as a UD QP.  The SQ and the RQ
 * are DMA-coherent rings that user space maps and fills itself; kernel
 * QPs are filled by qhca_wr.c.  State changes are checked here as ib_core
 * defines them and again by the device, which also moves a QP to ERR on
 * its own.
 */

#include <linux/bitfield.h>
#include <linux/log2.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/uverbs_ioctl.h>
#include <uapi/rdma/qhca-abi.h>

#include "qhca.h"

/* The device takes ib_qp_state values as they are. */
static_assert((int)QHCA_QPS_RESET == (int)IB_QPS_RESET);
static_assert((int)QHCA_QPS_ERR == (int)IB_QPS_ERR);
static_assert((int)QHCA_QPT_RC == (int)IB_QPT_RC);
static_assert((int)QHCA_QPT_UC == (int)IB_QPT_UC);
static_assert((int)QHCA_QPT_UD == (int)IB_QPT_UD);
static_assert((int)QHCA_QPT_GSI == (int)IB_QPT_GSI);

/* The ib_qp_attr_mask bits modify_qp understands. */
#define QHCA_QP_ATTR_MASK_SUPPORTED \
	(IB_QP_STATE | IB_QP_CUR_STATE | IB_QP_ACCESS_FLAGS | \
	 IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_AV | IB_QP_PATH_MTU | \
	 IB_QP_TIMEOUT | IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_RQ_PSN | \
	 IB_QP_MAX_QP_RD_ATOMIC | IB_QP_MIN_RNR_TIMER | IB_QP_SQ_PSN | \
	 IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_DEST_QPN | IB_QP_QKEY)

/* The access rights a QP grants remote requests: FLUSHes too (1.6). */
#define QHCA_QP_ACCESS_REMOTE	(QHCA_ACCESS_REMOTE_WRITE | \
				 QHCA_ACCESS_REMOTE_READ | \
				 QHCA_ACCESS_REMOTE_ATOMIC | \
				 QHCA_ACCESS_FLUSH_GLOBAL | \
				 QHCA_ACCESS_FLUSH_PERSISTENT)

/* A ring of at least 2 and at least @wr entries, within @max_wr. */
static int qhca_wq_depth_log2(u32 wr, u32 max_wr)
{
	u32 log2 = order_base_2(max(wr, 2U));

	if (!max_wr || log2 > ilog2(max_wr) || log2 > QHCA_WQ_MAX_DEPTH_LOG2)
		return -EINVAL;
	return log2;
}

/*
 * Size the SQ and the RQ for @cap, then write back what they really hold:
 * the strides leave room for more SGEs or inline data than asked for.
 */
static int qhca_qp_size(struct qhca_dev *dev, struct qhca_qp *qp,
			struct ib_qp_cap *cap, bool srq)
{
	u32 max_wr = le32_to_cpu(dev->attr.max_qp_wr);
	u32 max_sge = le32_to_cpu(dev->attr.max_sge);
	u32 max_inline = le32_to_cpu(dev->attr.max_inline_data);
	u32 sq_stride, rq_stride;
	int sq_log2, rq_log2;

	/* Receives come from the SRQ: the QP has no RQ of its own. */
	if (srq) {
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
	}
	if (cap->max_send_wr > max_wr || cap->max_recv_wr > max_wr ||
	    cap->max_send_sge > max_sge || cap->max_recv_sge > max_sge ||
	    cap->max_inline_data > max_inline)
		return -EINVAL;

	sq_log2 = qhca_wq_depth_log2(cap->max_send_wr, max_wr);
	rq_log2 = qhca_wq_depth_log2(cap->max_recv_wr, max_wr);
	if (sq_log2 < 0 || rq_log2 < 0)
		return -EINVAL;

	sq_stride = roundup_pow_of_two(sizeof(struct qhca_sq_wqe) +
				       max_t(u32, cap->max_send_sge *
					     sizeof(struct qhca_sge),
					     cap->max_inline_data));
	rq_stride = roundup_pow_of_two(sizeof(struct qhca_rq_wqe) +
				       cap->max_recv_sge *
				       sizeof(struct qhca_sge));
	if (sq_stride > BIT(QHCA_WQE_MAX_STRIDE_LOG2) ||
	    rq_stride > BIT(QHCA_WQE_MAX_STRIDE_LOG2))
		return -EINVAL;

	qp->sq.depth = BIT(sq_log2);
	qp->sq.stride_log2 = ilog2(sq_stride);
	qp->sq.max_sge = min_t(u32, max_sge, (sq_stride -
			       sizeof(struct qhca_sq_wqe)) /
			       sizeof(struct qhca_sge));
	qp->max_inline = min_t(u32, max_inline,
			       sq_stride - sizeof(struct qhca_sq_wqe));
	if (!srq) {
		qp->rq.depth = BIT(rq_log2);
		qp->rq.stride_log2 = ilog2(rq_stride);
		qp->rq.max_sge = min_t(u32, max_sge, (rq_stride -
				       sizeof(struct qhca_rq_wqe)) /
				       sizeof(struct qhca_sge));
	}

	cap->max_send_wr = qp->sq.depth;
	cap->max_recv_wr = qp->rq.depth;
	cap->max_send_sge = qp->sq.max_sge;
	cap->max_recv_sge = qp->rq.max_sge;
	cap->max_inline_data = qp->max_inline;
	return 0;
}

static int qhca_wq_alloc(struct qhca_dev *dev, struct qhca_wq *wq)
{
	spin_lock_init(&wq->lock);
	return qhca_dma_buf_alloc(dev, &wq->buf,
				  (size_t)wq->depth << wq->stride_log2);
}

/* As qhca_cq_release(): without @device_done the memory is never freed. */
static void qhca_wq_release(struct qhca_dev *dev, struct qhca_wq *wq,
			    bool device_done)
{
	if (wq->mmap_entry) {
		qhca_mmap_remove_ring(wq->mmap_entry, device_done);
		wq->mmap_entry = NULL;
	} else if (device_done) {
		qhca_dma_buf_free(dev, &wq->buf);
	}
}

static void qhca_qp_release(struct qhca_dev *dev, struct qhca_qp *qp,
			    bool device_done)
{
	qhca_wq_release(dev, &qp->rq, device_done);
	qhca_wq_release(dev, &qp->sq, device_done);
	if (qp->kernel)
		qhca_kuar_put(dev);
}

static int qhca_wq_mmap(struct qhca_dev *dev, struct ib_ucontext *uctx,
			struct qhca_wq *wq, u64 *key)
{
	struct rdma_user_mmap_entry *entry;

	entry = qhca_mmap_insert_ring(dev, uctx, &wq->buf);
	if (IS_ERR(entry))
		return PTR_ERR(entry);
	/* The entry owns the memory from now on. */
	wq->mmap_entry = entry;
	*key = rdma_user_mmap_get_offset(entry);
	return 0;
}

static int qhca_qp_user_resp(struct qhca_dev *dev, struct qhca_qp *qp,
			     struct ib_udata *udata)
{
	struct qhca_ucontext *uctx = rdma_udata_to_drv_context(udata,
				struct qhca_ucontext, ibucontext);
	struct qhca_ibv_create_qp_resp resp = {};
	u64 sq_key, rq_key;
	int err;

	err = qhca_wq_mmap(dev, &uctx->ibucontext, &qp->sq, &sq_key);
	if (err)
		return err;
	if (qp->rq.depth) {
		err = qhca_wq_mmap(dev, &uctx->ibucontext, &qp->rq, &rq_key);
		if (err)
			return err;
	} else {
		rq_key = 0;		/* on an SRQ: nothing to map */
	}

	resp.sq_mmap_key = sq_key;
	resp.rq_mmap_key = rq_key;

	resp.qpn = qp->ibqp.qp_num;
	resp.sq_mmap_size = qp->sq.buf.size;
	resp.rq_mmap_size = qp->rq.buf.size;
	resp.sq_depth = qp->sq.depth;
	resp.sq_stride = BIT(qp->sq.stride_log2);
	resp.rq_depth = qp->rq.depth;
	resp.rq_stride = BIT(qp->rq.stride_log2);
	resp.max_inline_data = qp->max_inline;
	resp.max_send_sge = qp->sq.max_sge;
	resp.max_recv_sge = qp->rq.max_sge;
	return qhca_udata_put_resp(udata, &resp, sizeof(resp));
}

/*
 * QP1 exists on an Ethernet port only, for ib_mad: an IB port has no SM
 * and no MADs (qhca_get_port_immutable()), and neither port has a QP0.
 */
static bool qhca_qp_type_ok(struct qhca_dev *dev,
			    const struct ib_qp_init_attr *init_attr,
			    struct ib_udata *udata)
{
	switch (init_attr->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
	case IB_QPT_XRC_INI:
		return true;
	case IB_QPT_GSI:
		return qhca_is_eth(dev) && !udata && init_attr->port_num == 1;
	default:
		return false;
	}
}

static int qhca_qp_check_init_attr(struct qhca_dev *dev,
				   struct ib_qp_init_attr *init_attr,
				   struct ib_udata *udata)
{
	bool ini = init_attr->qp_type == IB_QPT_XRC_INI;

	if (!qhca_qp_type_ok(dev, init_attr, udata))
		return -EOPNOTSUPP;
	if (init_attr->create_flags || init_attr->rwq_ind_tbl)
		return -EOPNOTSUPP;
	/* An XRC INI QP sends only: no receive CQ, no SRQ. */
	if (!init_attr->send_cq || (!init_attr->recv_cq && !ini) ||
	    (ini && init_attr->srq))
		return -EINVAL;
	if (init_attr->sq_sig_type != IB_SIGNAL_ALL_WR &&
	    init_attr->sq_sig_type != IB_SIGNAL_REQ_WR)
		return -EINVAL;

	if (udata) {
		struct qhca_ibv_create_qp_req req = {};
		int err;

		err = qhca_udata_get_req(udata, &req, sizeof(req));
		if (err)
			return err;
		if (req.comp_mask || req.reserved)
			return -EINVAL;
	}
	return 0;
}

/*
 * QP1 is the GSI QP's and only its, QP0 is never handed out; doorbells
 * carry 16 bits.
 */
static bool qhca_qpn_ok(enum ib_qp_type type, u32 qpn)
{
	if (type == IB_QPT_GSI)
		return qpn == QHCA_GSI_QPN;
	return qpn > QHCA_GSI_QPN && qpn <= FIELD_MAX(QHCA_DB_QUEUE_NUM);
}

int qhca_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init_attr,
		   struct ib_udata *udata)
{
	struct qhca_dev *dev = to_qdev(ibqp->device);
	struct qhca_qp *qp = to_qqp(ibqp);
	struct qhca_cmd_create_qp cmd = {};
	struct qhca_ucontext *uctx;
	bool device_done = true;
	bool no_rq;
	u32 qpn;
	int err;

	if (init_attr->qp_type == IB_QPT_XRC_TGT)
		return qhca_create_xrc_tgt_qp(dev, qp, init_attr);
	err = qhca_qp_check_init_attr(dev, init_attr, udata);
	if (err)
		return err;
	no_rq = init_attr->srq || init_attr->qp_type == IB_QPT_XRC_INI;
	err = qhca_qp_size(dev, qp, &init_attr->cap, no_rq);
	if (err)
		return err;

	qp->kernel = !udata;
	qp->sq_sig_all = init_attr->sq_sig_type == IB_SIGNAL_ALL_WR;
	mutex_init(&qp->state_lock);
	qp->state = IB_QPS_RESET;
	qp->path_mtu = dev->port.active_mtu;

	err = qhca_wq_alloc(dev, &qp->sq);
	if (err)
		return err;
	err = no_rq ? 0 : qhca_wq_alloc(dev, &qp->rq);
	if (err) {
		qhca_dma_buf_free(dev, &qp->sq.buf);
		return err;
	}

	if (qp->kernel) {
		err = qhca_kuar_get(dev);
		if (err) {
			qhca_dma_buf_free(dev, &qp->rq.buf);
			qhca_dma_buf_free(dev, &qp->sq.buf);
			return err;
		}
		qp->db = dev->kuar.db;
		cmd.uar = cpu_to_le32(dev->kuar.index);
	} else {
		uctx = rdma_udata_to_drv_context(udata, struct qhca_ucontext,
						 ibucontext);
		cmd.uar = cpu_to_le32(uctx->uar_index);
	}

	cmd.sq_addr = cpu_to_le64(qp->sq.buf.dma);
	cmd.rq_addr = cpu_to_le64(qp->rq.depth ? qp->rq.buf.dma : 0);
	cmd.pdn = cpu_to_le32(to_qpd(ibqp->pd)->pdn);
	cmd.send_cqn = cpu_to_le16(to_qcq(init_attr->send_cq)->cqn);
	if (init_attr->recv_cq && init_attr->qp_type != IB_QPT_XRC_INI)
		cmd.recv_cqn = cpu_to_le16(to_qcq(init_attr->recv_cq)->cqn);
	cmd.type = init_attr->qp_type;
	cmd.flags = qp->sq_sig_all ? QHCA_QP_F_SQ_SIG_ALL : 0;
	cmd.sq_depth_log2 = ilog2(qp->sq.depth);
	cmd.sq_stride_log2 = qp->sq.stride_log2;
	if (init_attr->srq) {
		cmd.flags |= QHCA_QP_F_SRQ;
		cmd.srqn = cpu_to_le16(to_qsrq(init_attr->srq)->srqn);
	} else if (!no_rq) {
		cmd.rq_depth_log2 = ilog2(qp->rq.depth);
		cmd.rq_stride_log2 = qp->rq.stride_log2;
	}
	err = qhca_admin_create_qp(dev, &cmd, &qpn);
	if (err)
		goto err_release;
	if (!qhca_qpn_ok(init_attr->qp_type, qpn)) {
		ibdev_err(&dev->ibdev, "device returned QP number %u\n", qpn);
		err = -EIO;
		goto err_destroy;
	}
	ibqp->qp_num = qpn;

	err = xa_insert_irq(&dev->qps, qpn, qp, GFP_KERNEL);
	if (err)
		goto err_destroy;

	if (udata) {
		err = qhca_qp_user_resp(dev, qp, udata);
		if (err)
			goto err_erase;
	}
	return 0;

err_erase:
	xa_erase_irq(&dev->qps, qpn);
err_destroy:
	device_done = qhca_destroyed(dev, qhca_admin_destroy_qp(dev, qpn),
				     "DESTROY_QP", qpn);
err_release:
	qhca_qp_release(dev, qp, device_done);
	return err;
}

int qhca_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct qhca_dev *dev = to_qdev(ibqp->device);
	struct qhca_qp *qp = to_qqp(ibqp);
	int err;

	/*
	 * Out of the table first: no event or kernel completion reaches the
	 * QP after this, and the device may reuse the number right after.
	 */
	xa_erase_irq(&dev->qps, ibqp->qp_num);
	err = qhca_admin_destroy_qp(dev, ibqp->qp_num);
	/* ib_core cannot keep a QP it asked to destroy. */
	qhca_qp_release(dev, qp, qhca_destroyed(dev, err, "DESTROY_QP",
						ibqp->qp_num));
	mutex_destroy(&qp->state_lock);
	return 0;
}

/*
 * The path: the destination LID and SL of an IB address vector.  On an
 * Ethernet port there is no LID: the RoCEv2 addresses go to the device
 * apart (SET_QP_AV) and the path keeps only the SL and the MTU.
 */
static int qhca_qp_check_ah(struct qhca_dev *dev, const struct rdma_ah_attr *ah)
{
	if ((rdma_ah_get_port_num(ah) && rdma_ah_get_port_num(ah) != 1) ||
	    rdma_ah_get_sl(ah) > QHCA_SL_MAX)
		return -EINVAL;
	if (qhca_is_eth(dev))
		return qhca_roce_check_grh(ah);
	if (ah->type != RDMA_AH_ATTR_TYPE_IB || !rdma_ah_get_dlid(ah))
		return -EINVAL;
	/*
	 * A GRH is accepted and not used: the device routes by DLID within
	 * its subnet.
	 */
	return 0;
}

/* Translate the attributes of @mask; every value is range checked. */
static int qhca_qp_attr_to_cmd(struct qhca_dev *dev, struct qhca_qp *qp,
			       const struct ib_qp_attr *attr, int mask,
			       enum ib_qp_state new_state,
			       struct qhca_cmd_modify_qp *cmd)
{
	u32 hw_mask = 0;
	int err;

	cmd->qpn = cpu_to_le32(qp->ibqp.qp_num);
	if (mask & IB_QP_STATE) {
		cmd->state = new_state;
		hw_mask |= QHCA_QP_ATTR_STATE;
	}
	if (mask & IB_QP_ACCESS_FLAGS) {
		int known = QHCA_ACCESS_ALL;

		/* Both types: a QP may allow what no MR grants here. */
		if (le32_to_cpu(dev->attr.device_cap_flags) & QHCA_DEV_CAP_FLUSH)
			known |= IB_ACCESS_FLUSH_GLOBAL |
				 IB_ACCESS_FLUSH_PERSISTENT;
		/*
		 * ON_DEMAND is an MR's, which users give their QPs too
		 * (rdma-core's test_odp does): as mlx5, it changes nothing.
		 */
		if (dev->odp)
			known |= IB_ACCESS_ON_DEMAND;
		if (attr->qp_access_flags & ~known)
			return -EOPNOTSUPP;
		/* Local write is a property of MRs, not of the QP. */
		cmd->access = qhca_access_to_hw(attr->qp_access_flags) &
			      QHCA_QP_ACCESS_REMOTE;
		hw_mask |= QHCA_QP_ATTR_ACCESS;
	}
	/* One port, one P_Key: nothing to tell the device. */
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index)
		return -EINVAL;
	if ((mask & IB_QP_PORT) && attr->port_num != 1)
		return -EINVAL;
	/* The device takes the path whole: complete it from the last one. */
	if (mask & (IB_QP_AV | IB_QP_PATH_MTU)) {
		u16 dlid = qp->dlid;
		u8 sl = qp->sl;
		enum ib_mtu mtu = qp->path_mtu;

		if (mask & IB_QP_AV) {
			err = qhca_qp_check_ah(dev, &attr->ah_attr);
			if (err)
				return err;
			dlid = rdma_ah_get_dlid(&attr->ah_attr);
			sl = rdma_ah_get_sl(&attr->ah_attr);
		}
		if (mask & IB_QP_PATH_MTU) {
			if (attr->path_mtu < IB_MTU_256 ||
			    attr->path_mtu > IB_MTU_4096)
				return -EINVAL;
			mtu = attr->path_mtu;
		}
		cmd->dlid = cpu_to_le16(dlid);
		cmd->sl = sl;
		cmd->path_mtu = mtu;
		hw_mask |= QHCA_QP_ATTR_PATH;
	}
	if (mask & IB_QP_QKEY) {
		/*
		 * Q_Keys with the high bit set are the privileged ones of the
		 * IBA (vol. 1, 10.2.4): only the kernel may give one to a QP.
		 * In a send WR the same bit means "the QP's own Q_Key".
		 */
		if (!qp->kernel && (attr->qkey & QHCA_UD_QKEY_USE_QP))
			return -EINVAL;
		cmd->qkey = cpu_to_le32(attr->qkey);
		hw_mask |= QHCA_QP_ATTR_QKEY;
	}
	if (mask & IB_QP_DEST_QPN) {
		if (attr->dest_qp_num & ~QHCA_QPN_MASK)
			return -EINVAL;
		cmd->dest_qpn = cpu_to_le32(attr->dest_qp_num);
		hw_mask |= QHCA_QP_ATTR_DEST_QPN;
	}
	if (mask & IB_QP_RQ_PSN) {
		if (attr->rq_psn & ~QHCA_PSN_MASK)
			return -EINVAL;
		cmd->rq_psn = cpu_to_le32(attr->rq_psn);
		hw_mask |= QHCA_QP_ATTR_RQ_PSN;
	}
	if (mask & IB_QP_SQ_PSN) {
		if (attr->sq_psn & ~QHCA_PSN_MASK)
			return -EINVAL;
		cmd->sq_psn = cpu_to_le32(attr->sq_psn);
		hw_mask |= QHCA_QP_ATTR_SQ_PSN;
	}
	if (mask & IB_QP_TIMEOUT) {
		if (attr->timeout > QHCA_TIMEOUT_MAX)
			return -EINVAL;
		cmd->timeout = attr->timeout;
		hw_mask |= QHCA_QP_ATTR_TIMEOUT;
	}
	if (mask & IB_QP_RETRY_CNT) {
		if (attr->retry_cnt > QHCA_RETRY_CNT_MAX)
			return -EINVAL;
		cmd->retry_cnt = attr->retry_cnt;
		hw_mask |= QHCA_QP_ATTR_RETRY_CNT;
	}
	if (mask & IB_QP_RNR_RETRY) {
		if (attr->rnr_retry > QHCA_RNR_RETRY_MAX)
			return -EINVAL;
		cmd->rnr_retry = attr->rnr_retry;
		hw_mask |= QHCA_QP_ATTR_RNR_RETRY;
	}
	if (mask & IB_QP_MIN_RNR_TIMER) {
		if (attr->min_rnr_timer > QHCA_MIN_RNR_TIMER_MAX)
			return -EINVAL;
		cmd->min_rnr_timer = attr->min_rnr_timer;
		hw_mask |= QHCA_QP_ATTR_MIN_RNR_TIMER;
	}
	if (mask & IB_QP_MAX_QP_RD_ATOMIC) {
		if (attr->max_rd_atomic >
		    le32_to_cpu(dev->attr.max_qp_init_rd_atom))
			return -EINVAL;
		cmd->max_rd_atomic = attr->max_rd_atomic;
		hw_mask |= QHCA_QP_ATTR_MAX_RD_ATOMIC;
	}
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC) {
		if (attr->max_dest_rd_atomic >
		    le32_to_cpu(dev->attr.max_qp_rd_atom))
			return -EINVAL;
		cmd->max_dest_rd_atomic = attr->max_dest_rd_atomic;
		hw_mask |= QHCA_QP_ATTR_MAX_DEST_RD_ATOMIC;
	}
	cmd->attr_mask = cpu_to_le32(hw_mask);
	return 0;
}

/* A kernel QP back in RESET starts its rings from index 0, as the device. */
static void qhca_qp_reset_wqs(struct qhca_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->sq.lock, flags);
	qp->sq.head = 0;
	qp->sq.tail = 0;
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	spin_lock_irqsave(&qp->rq.lock, flags);
	qp->rq.head = 0;
	qp->rq.tail = 0;
	spin_unlock_irqrestore(&qp->rq.lock, flags);
}

int qhca_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_udata *udata)
{
	struct qhca_dev *dev = to_qdev(ibqp->device);
	struct qhca_qp *qp = to_qqp(ibqp);
	struct qhca_cmd_modify_qp cmd = {};
	struct qhca_cmd_set_qp_av av;
	enum ib_qp_state cur, new;
	int err;

	/* No driver data is defined for this command in either direction. */
	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	if (mask & ~QHCA_QP_ATTR_MASK_SUPPORTED)
		return -EOPNOTSUPP;

	mutex_lock(&qp->state_lock);
	cur = (mask & IB_QP_CUR_STATE) ? attr->cur_qp_state : qp->state;
	new = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	if (!ib_modify_qp_is_ok(cur, new, ibqp->qp_type, mask)) {
		err = -EINVAL;
		goto out_unlock;
	}

	err = qhca_qp_attr_to_cmd(dev, qp, attr, mask, new, &cmd);
	if (err)
		goto out_unlock;
	/* The device takes a RoCEv2 path's addresses before its state. */
	if ((mask & IB_QP_AV) && qhca_is_eth(dev)) {
		err = qhca_roce_qp_av(qp, &attr->ah_attr, &av);
		if (!err)
			err = qhca_admin_set_qp_av(dev, &av);
		if (err)
			goto out_unlock;
		qp->av = av;
		qp->av_set = true;
	}
	err = qhca_admin_modify_qp(dev, &cmd);
	if (err)
		goto out_unlock;

	if (mask & IB_QP_STATE) {
		/* Posting reads it without the lock. */
		WRITE_ONCE(qp->state, new);
		if (new == IB_QPS_RESET && qp->kernel)
			qhca_qp_reset_wqs(qp);
	}
	if (cmd.attr_mask & cpu_to_le32(QHCA_QP_ATTR_PATH)) {
		qp->dlid = le16_to_cpu(cmd.dlid);
		qp->sl = cmd.sl;
		qp->path_mtu = cmd.path_mtu;
	}
out_unlock:
	mutex_unlock(&qp->state_lock);
	return err;
}

int qhca_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_qp_init_attr *init_attr)
{
	struct qhca_dev *dev = to_qdev(ibqp->device);
	struct qhca_qp *qp = to_qqp(ibqp);
	struct qhca_qp_attr a;
	int err;

	/* The device knows the state and the PSNs; ask it every time. */
	err = qhca_admin_query_qp(dev, ibqp->qp_num, &a);
	if (err)
		return err;
	if (a.state > IB_QPS_ERR) {
		ibdev_err(&dev->ibdev, "QP %u in unknown state %u\n",
			  ibqp->qp_num, a.state);
		return -EIO;
	}

	memset(attr, 0, sizeof(*attr));
	attr->qp_state = a.state;
	attr->cur_qp_state = a.state;
	attr->path_mtu = a.path_mtu;
	attr->path_mig_state = IB_MIG_MIGRATED;
	attr->rq_psn = le32_to_cpu(a.rq_psn);
	attr->sq_psn = le32_to_cpu(a.sq_psn);
	attr->dest_qp_num = le32_to_cpu(a.dest_qpn);
	attr->qp_access_flags = qhca_access_from_hw(a.access &
						    QHCA_QP_ACCESS_REMOTE);
	attr->cap.max_send_wr = qp->sq.depth;
	attr->cap.max_recv_wr = qp->rq.depth;
	attr->cap.max_send_sge = qp->sq.max_sge;
	attr->cap.max_recv_sge = qp->rq.max_sge;
	attr->cap.max_inline_data = qp->max_inline;
	if (qhca_is_eth(dev)) {
		mutex_lock(&qp->state_lock);
		qhca_roce_qp_av_to_attr(qp, &attr->ah_attr);
		mutex_unlock(&qp->state_lock);
	} else {
		attr->ah_attr.type = RDMA_AH_ATTR_TYPE_IB;
		rdma_ah_set_dlid(&attr->ah_attr, le16_to_cpu(a.dlid));
	}
	rdma_ah_set_sl(&attr->ah_attr, a.sl);
	rdma_ah_set_port_num(&attr->ah_attr, 1);
	attr->port_num = 1;
	attr->timeout = a.timeout;
	attr->retry_cnt = a.retry_cnt;
	attr->rnr_retry = a.rnr_retry;
	attr->min_rnr_timer = a.min_rnr_timer;
	attr->max_rd_atomic = a.max_rd_atomic;
	attr->max_dest_rd_atomic = a.max_dest_rd_atomic;
	attr->qkey = le32_to_cpu(a.qkey);

	memset(init_attr, 0, sizeof(*init_attr));
	init_attr->qp_type = ibqp->qp_type;
	init_attr->send_cq = ibqp->send_cq;
	init_attr->recv_cq = ibqp->recv_cq;
	init_attr->cap = attr->cap;
	init_attr->sq_sig_type = qp->sq_sig_all ? IB_SIGNAL_ALL_WR :
						  IB_SIGNAL_REQ_WR;

	/* What the device did on its own, such as moving to ERR. */
	mutex_lock(&qp->state_lock);
	WRITE_ONCE(qp->state, a.state);
	mutex_unlock(&qp->state_lock);
	return 0;
}

/* An async event of the QP numbered @qpn. */
void qhca_qp_handle_event(struct qhca_dev *dev, u32 qpn, u8 type)
{
	struct ib_event event = { .device = &dev->ibdev };
	struct qhca_qp *qp;
	unsigned long flags;

	switch (type) {
	case QHCA_EVENT_QP_REQ_ERR:
		event.event = IB_EVENT_QP_REQ_ERR;
		break;
	case QHCA_EVENT_QP_ACCESS_ERR:
		event.event = IB_EVENT_QP_ACCESS_ERR;
		break;
	case QHCA_EVENT_QP_LAST_WQE:
		event.event = IB_EVENT_QP_LAST_WQE_REACHED;
		break;
	case QHCA_EVENT_QP_FATAL:
	default:
		event.event = IB_EVENT_QP_FATAL;
		break;
	}

	/* Handlers run under the lock: destroy_qp waits for them. */
	xa_lock_irqsave(&dev->qps, flags);
	qp = xa_load(&dev->qps, qpn);
	if (!qp) {
		dev_dbg_ratelimited(&dev->pdev->dev, "event %u for no QP %u\n",
				    type, qpn);
	} else if (qp->ibqp.event_handler) {
		event.element.qp = &qp->ibqp;
		qp->ibqp.event_handler(&event, qp->ibqp.qp_context);
	}
	xa_unlock_irqrestore(&dev->qps, flags);
}
