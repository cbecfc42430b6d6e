// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * qhca completion queues.  The ring and the consumer record share one
 * DMA-coherent allocation; user space maps it and polls it itself, while
 * kernel CQs are polled here.  A CQ is armed through the doorbell page of
 * its UAR (the context's, or the kernel's) and signals its completion EQ.
 */

#include <linux/bitfield.h>
#include <linux/etherdevice.h>
#include <linux/log2.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/uverbs_ioctl.h>
#include <uapi/rdma/qhca-abi.h>

#include "qhca.h"

/* The device reads the whole 32-bit record only when the ring looks full. */
#define QHCA_CQ_DBREC_SIZE	sizeof(__le32)

/**
 * qhca_cqe_next - the entry the device wrote at a consumer index, if any
 * @ring: the ring of @depth entries, a power of two
 * @depth: its entries
 * @cons: the free-running consumer index
 *
 * The device writes phase 1 on its first pass over the ring, 0 on the
 * second, and so on: an entry whose phase is that of @cons's pass is new.
 * Kernel CQs and the NIC's (qhca_netdev.c) poll with it.
 */
struct qhca_cqe *qhca_cqe_next(struct qhca_cqe *ring, u32 depth, u32 cons)
{
	struct qhca_cqe *cqe = &ring[cons & (depth - 1)];

	if ((READ_ONCE(cqe->owner) & QHCA_CQE_OWNER_PHASE) != !(cons & depth))
		return NULL;
	/* Read the entry only after seeing its owner byte. */
	dma_rmb();
	return cqe;
}

static struct qhca_cqe *qhca_cq_next(struct qhca_cq *cq)
{
	return qhca_cqe_next(cq->ring, cq->depth, cq->cons);
}

/**
 * qhca_cq_consumed - the entries before @cons are read
 * @dbrec: the CQ's consumer record
 * @cons: the free-running consumer index
 *
 * The entries are read before the record lets the device write over them.
 */
void qhca_cq_consumed(__le32 *dbrec, u32 cons)
{
	dma_mb();
	WRITE_ONCE(*dbrec, cpu_to_le32(cons));
}

/**
 * qhca_cq_arm_db - ask for an event for the entry at @cons or any later
 * @db: the doorbell page of the CQ's UAR
 * @off: QHCA_DB_CQ_ARM or QHCA_DB_CQ_ARM_SOL
 * @cqn: the CQ
 * @cons: the free-running consumer index
 *
 * The device fires at once if that entry is written already.
 */
void qhca_cq_arm_db(void __iomem *db, u32 off, u32 cqn, u32 cons)
{
	writel(FIELD_PREP(QHCA_DB_QUEUE_NUM, cqn) |
	       FIELD_PREP(QHCA_DB_QUEUE_IDX, (u16)cons), db + off);
}

/**
 * qhca_cq_buf_alloc - the memory of a CQ of @depth entries
 * @dev: the device
 * @buf: filled in: the ring, then the consumer record
 * @depth: entries, a power of two
 *
 * Returns the size of the ring: the consumer record is that far in.
 */
ssize_t qhca_cq_buf_alloc(struct qhca_dev *dev, struct qhca_dma_buf *buf,
			  u32 depth)
{
	size_t ring_size = depth * sizeof(struct qhca_cqe);
	int err;

	err = qhca_dma_buf_alloc(dev, buf, ring_size + QHCA_CQ_DBREC_SIZE);
	return err ? err : ring_size;
}

/**
 * qhca_cq_hw_create - CREATE_CQ over memory from qhca_cq_buf_alloc()
 * @dev: the device
 * @buf: the CQ's memory
 * @depth: its entries
 * @eqn: the completion EQ its events go to
 * @uar: the UAR whose doorbell page arms it
 * @cqn: filled in: the CQ's number
 * @device_done: false if the CQ could not be destroyed after the device
 *	gave it a number no doorbell can carry: @buf must then stay
 *
 * Doorbells and CREATE_QP carry a CQ number in 16 bits: a larger one, or
 * 0, is the device's error and the CQ is destroyed again.
 */
int qhca_cq_hw_create(struct qhca_dev *dev, const struct qhca_dma_buf *buf,
		      u32 depth, u32 eqn, u32 uar, u32 *cqn, bool *device_done)
{
	size_t ring_size = depth * sizeof(struct qhca_cqe);
	struct qhca_cmd_create_cq cmd = {};
	int err;

	*device_done = true;
	cmd.ring_addr = cpu_to_le64(buf->dma);
	cmd.dbrec_addr = cpu_to_le64(buf->dma + ring_size);
	cmd.eqn = cpu_to_le32(eqn);
	cmd.uar = cpu_to_le32(uar);
	cmd.depth_log2 = ilog2(depth);
	err = qhca_admin_create_cq(dev, &cmd, cqn);
	if (err)
		return err;
	if (*cqn && *cqn <= FIELD_MAX(QHCA_DB_QUEUE_NUM))
		return 0;
	dev_err(&dev->pdev->dev, "device returned CQ number %u\n", *cqn);
	*device_done = qhca_destroyed(dev, qhca_admin_destroy_cq(dev, *cqn),
				      "DESTROY_CQ", *cqn);
	return -EIO;
}

/*
 * Give up the CQ's memory and UAR.  Without @device_done the device may
 * still write the ring, which then is never freed.
 */
static void qhca_cq_release(struct qhca_dev *dev, struct qhca_cq *cq,
			    bool device_done)
{
	if (cq->mmap_entry)
		qhca_mmap_remove_ring(cq->mmap_entry, device_done);
	else if (device_done)
		qhca_dma_buf_free(dev, &cq->buf);
	if (cq->kernel)
		qhca_kuar_put(dev);
}

static int qhca_cq_user_resp(struct qhca_dev *dev, struct qhca_cq *cq,
			     struct ib_udata *udata, size_t ring_size)
{
	struct qhca_ucontext *uctx = rdma_udata_to_drv_context(udata,
				struct qhca_ucontext, ibucontext);
	struct qhca_ibv_create_cq_resp resp = {};
	struct rdma_user_mmap_entry *entry;

	entry = qhca_mmap_insert_ring(dev, &uctx->ibucontext, &cq->buf);
	if (IS_ERR(entry))
		return PTR_ERR(entry);
	/* The entry owns the memory from now on. */
	cq->mmap_entry = entry;

	resp.cqn = cq->cqn;
	resp.ring_mmap_key = rdma_user_mmap_get_offset(entry);
	resp.ring_mmap_size = cq->buf.size;
	resp.cqe_count = cq->depth;
	resp.dbrec_offset = ring_size;
	resp.cqe_size = sizeof(struct qhca_cqe);
	return qhca_udata_put_resp(udata, &resp, sizeof(resp));
}

/*
 * The ring for @cqe entries: a power of two, within what the device
 * allows; 0 if that is too few.
 */
static u32 qhca_cq_depth(u32 cqe, u32 max_cqe)
{
	u32 depth = roundup_pow_of_two(cqe + 1);

	if (depth > max_cqe)
		depth = rounddown_pow_of_two(max_cqe);
	return depth < cqe ? 0 : depth;
}

int qhca_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   struct uverbs_attr_bundle *attrs)
{
	struct ib_udata *udata = attrs ? &attrs->driver_udata : NULL;
	struct qhca_dev *dev = to_qdev(ibcq->device);
	u32 max_cqe = le32_to_cpu(dev->attr.max_cqe);
	struct qhca_cq *cq = to_qcq(ibcq);
	struct qhca_ucontext *uctx;
	bool device_done = true;
	ssize_t ring_size;
	u32 uar;
	int err;

	/* Every CQE has its timestamp: a CQ may ask for them if they exist. */
	if (attr->flags & ~IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION ||
	    (attr->flags & IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION &&
	     !(le32_to_cpu(dev->attr.device_cap_flags) &
	       QHCA_DEV_CAP_CQE_TIMESTAMP)))
		return -EOPNOTSUPP;
	if (!attr->cqe || attr->cqe > max_cqe ||
	    attr->comp_vector >= dev->num_ceqs)
		return -EINVAL;

	if (udata) {
		struct qhca_ibv_create_cq_req req = {};

		err = qhca_udata_get_req(udata, &req, sizeof(req));
		if (err)
			return err;
		if (req.comp_mask || req.reserved)
			return -EINVAL;
	}

	cq->depth = qhca_cq_depth(attr->cqe, max_cqe);
	if (!cq->depth)
		return -EINVAL;

	spin_lock_init(&cq->lock);
	mutex_init(&cq->resize_lock);
	cq->kernel = !udata;
	cq->eq = &dev->ceqs[attr->comp_vector];
	ring_size = qhca_cq_buf_alloc(dev, &cq->buf, cq->depth);
	if (ring_size < 0)
		return ring_size;
	cq->ring = cq->buf.va;
	cq->dbrec = cq->buf.va + ring_size;

	if (cq->kernel) {
		err = qhca_kuar_get(dev);
		if (err) {
			qhca_dma_buf_free(dev, &cq->buf);
			return err;
		}
		cq->db = dev->kuar.db;
		uar = dev->kuar.index;
	} else {
		uctx = rdma_udata_to_drv_context(udata, struct qhca_ucontext,
						 ibucontext);
		uar = uctx->uar_index;
	}

	err = qhca_cq_hw_create(dev, &cq->buf, cq->depth, cq->eq->eqn, uar,
				&cq->cqn, &device_done);
	if (err)
		goto err_release;

	err = xa_insert_irq(&dev->cqs, cq->cqn, cq, GFP_KERNEL);
	if (err)
		goto err_destroy;

	if (udata) {
		err = qhca_cq_user_resp(dev, cq, udata, ring_size);
		if (err)
			goto err_erase;
	}

	/* The device holds depth entries; never report fewer than asked. */
	ibcq->cqe = max_t(u32, cq->depth - 1, attr->cqe);
	return 0;

err_erase:
	xa_erase_irq(&dev->cqs, cq->cqn);
err_destroy:
	device_done = qhca_destroyed(dev, qhca_admin_destroy_cq(dev, cq->cqn),
				     "DESTROY_CQ", cq->cqn);
err_release:
	qhca_cq_release(dev, cq, device_done);
	return err;
}

int qhca_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct qhca_dev *dev = to_qdev(ibcq->device);
	struct qhca_cq *cq = to_qcq(ibcq);
	int err;

	/*
	 * No event reaches the CQ once it is out of the table; it leaves
	 * before the device may hand its number to a new CQ.
	 */
	xa_erase_irq(&dev->cqs, cq->cqn);
	err = qhca_admin_destroy_cq(dev, cq->cqn);
	/* ib_core cannot keep a CQ it asked to destroy. */
	qhca_cq_release(dev, cq,
			qhca_destroyed(dev, err, "DESTROY_CQ", cq->cqn));
	return 0;
}

/*
 * RESIZE_CQ to @buf of @depth entries, the consumer at @ci.  False in
 * *@unused if the device may still write @buf: the command went
 * unanswered and the device was not reset since.
 */
static int qhca_cq_hw_resize(struct qhca_dev *dev, struct qhca_cq *cq,
			     struct qhca_dma_buf *buf, u32 depth, u32 ci,
			     bool *unused)
{
	size_t ring_size = depth * sizeof(struct qhca_cqe);
	struct qhca_cmd_resize_cq cmd = {};
	int err;

	/* The device reads the new record when the new ring looks full. */
	*(__le32 *)(buf->va + ring_size) = cpu_to_le32(ci);
	cmd.ring_addr = cpu_to_le64(buf->dma);
	cmd.dbrec_addr = cpu_to_le64(buf->dma + ring_size);
	cmd.cqn = cpu_to_le32(cq->cqn);
	cmd.ci = cpu_to_le32(ci);
	cmd.depth_log2 = ilog2(depth);
	err = qhca_admin_resize_cq(dev, &cmd);
	/* Every other error is the device's answer, or no command at all. */
	*unused = err != -EIO ||
		  qhca_destroyed(dev, err, "RESIZE_CQ", cq->cqn);
	return err;
}

/*
 * A kernel CQ.  Polling goes on in the old ring while the device copies:
 * whatever it reads there the device copied to the same index of the
 * new ring, and it writes no CQE to the old ring once switched, so the
 * poller carries on at its own index in the new ring.  The device takes
 * the index read before the command as the consumer's, which only errs
 * on the safe side (a full ring reads the new record).
 */
static int qhca_cq_resize_kernel(struct qhca_dev *dev, struct qhca_cq *cq,
				 u32 depth)
{
	struct qhca_dma_buf buf, old;
	unsigned long flags;
	ssize_t ring_size;
	bool unused;
	u32 ci;
	int err;

	ring_size = qhca_cq_buf_alloc(dev, &buf, depth);
	if (ring_size < 0)
		return ring_size;

	spin_lock_irqsave(&cq->lock, flags);
	ci = cq->cons;
	spin_unlock_irqrestore(&cq->lock, flags);

	err = qhca_cq_hw_resize(dev, cq, &buf, depth, ci, &unused);
	if (err) {
		if (unused)
			qhca_dma_buf_free(dev, &buf);
		return err;
	}

	spin_lock_irqsave(&cq->lock, flags);
	old = cq->buf;
	cq->buf = buf;
	cq->ring = buf.va;
	cq->dbrec = buf.va + ring_size;
	cq->depth = depth;
	qhca_cq_consumed(cq->dbrec, cq->cons);
	spin_unlock_irqrestore(&cq->lock, flags);
	/* The device never touches the old ring again. */
	qhca_dma_buf_free(dev, &old);
	return 0;
}

/*
 * A user CQ: the new ring gets its mmap entry before the device switches,
 * so that nothing can fail after it but telling user space.  The old
 * entry goes; its memory is freed once the provider unmapped it.
 */
static int qhca_cq_resize_user(struct qhca_dev *dev, struct qhca_cq *cq,
			       u32 depth, struct ib_udata *udata)
{
	struct qhca_ucontext *uctx = rdma_udata_to_drv_context(udata,
				struct qhca_ucontext, ibucontext);
	struct qhca_ibv_resize_cq_resp resp = {};
	struct qhca_ibv_resize_cq_req req = {};
	struct rdma_user_mmap_entry *entry;
	struct qhca_dma_buf buf;
	ssize_t ring_size;
	bool unused;
	int err;

	err = qhca_udata_get_req(udata, &req, sizeof(req));
	if (err)
		return err;
	if (req.comp_mask)
		return -EINVAL;

	ring_size = qhca_cq_buf_alloc(dev, &buf, depth);
	if (ring_size < 0)
		return ring_size;
	entry = qhca_mmap_insert_ring(dev, &uctx->ibucontext, &buf);
	if (IS_ERR(entry)) {
		qhca_dma_buf_free(dev, &buf);
		return PTR_ERR(entry);
	}

	err = qhca_cq_hw_resize(dev, cq, &buf, depth, req.ci, &unused);
	if (err) {
		qhca_mmap_remove_ring(entry, unused);
		return err;
	}

	qhca_mmap_remove_ring(cq->mmap_entry, true);
	cq->mmap_entry = entry;
	cq->buf = buf;
	cq->ring = buf.va;
	cq->dbrec = buf.va + ring_size;
	cq->depth = depth;

	resp.cqe_count = depth;
	resp.ring_mmap_key = rdma_user_mmap_get_offset(entry);
	resp.ring_mmap_size = buf.size;
	resp.dbrec_offset = ring_size;
	return qhca_udata_put_resp(udata, &resp, sizeof(resp));
}

/*
 * ib_resize_cq and ibv_resize_cq: grow or shrink.  -EINVAL if more
 * completions wait to be polled than the new ring holds; the CQ then works
 * on as before.
 */
int qhca_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct qhca_dev *dev = to_qdev(ibcq->device);
	u32 max_cqe = le32_to_cpu(dev->attr.max_cqe);
	struct qhca_cq *cq = to_qcq(ibcq);
	u32 depth;
	int err;

	if (!(le32_to_cpu(dev->attr.device_cap_flags) &
	      QHCA_DEV_CAP_RESIZE_CQ))
		return -EOPNOTSUPP;
	if (cqe < 1 || cqe > max_cqe)
		return -EINVAL;
	depth = qhca_cq_depth(cqe, max_cqe);
	if (!depth)
		return -EINVAL;

	mutex_lock(&cq->resize_lock);
	if (cq->kernel)
		err = qhca_cq_resize_kernel(dev, cq, depth);
	else
		err = qhca_cq_resize_user(dev, cq, depth, udata);
	/*
	 * BAD_STATE: more completions wait than the new ring holds (or the
	 * CQ is in error): EINVAL, what ib_resize_cq promises for the first.
	 */
	if (err == -EBUSY)
		err = -EINVAL;
	if (!err)
		ibcq->cqe = max_t(u32, depth - 1, cqe);
	mutex_unlock(&cq->resize_lock);
	return err;
}

/* An event of the CQ numbered @cqn: its completion or its error. */
void qhca_cq_handle_event(struct qhca_dev *dev, u32 cqn, u8 type)
{
	struct ib_event event = {
		.device = &dev->ibdev,
		.event = IB_EVENT_CQ_ERR,
	};
	struct qhca_cq *cq;
	unsigned long flags;

	/* Handlers run under the lock: destroy_cq waits for them. */
	xa_lock_irqsave(&dev->cqs, flags);
	cq = xa_load(&dev->cqs, cqn);
	if (!cq) {
		/* A late event of a destroyed CQ. */
		dev_dbg_ratelimited(&dev->pdev->dev, "event %u for no CQ %u\n",
				    type, cqn);
	} else if (type == QHCA_EVENT_COMPLETION) {
		if (cq->ibcq.comp_handler)
			cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	} else {
		/* The consumer's doing, so no more than a debug message. */
		ibdev_dbg_ratelimited(&dev->ibdev, "CQ %u overran\n", cqn);
		event.element.cq = &cq->ibcq;
		if (cq->ibcq.event_handler)
			cq->ibcq.event_handler(&event, cq->ibcq.cq_context);
	}
	xa_unlock_irqrestore(&dev->cqs, flags);
}

static enum ib_wc_status qhca_wc_status(u8 status)
{
	switch (status) {
	case QHCA_WC_SUCCESS:
		return IB_WC_SUCCESS;
	case QHCA_WC_LOC_LEN_ERR:
		return IB_WC_LOC_LEN_ERR;
	case QHCA_WC_LOC_QP_OP_ERR:
		return IB_WC_LOC_QP_OP_ERR;
	case QHCA_WC_LOC_PROT_ERR:
		return IB_WC_LOC_PROT_ERR;
	case QHCA_WC_WR_FLUSH_ERR:
		return IB_WC_WR_FLUSH_ERR;
	case QHCA_WC_MW_BIND_ERR:
		return IB_WC_MW_BIND_ERR;
	case QHCA_WC_BAD_RESP_ERR:
		return IB_WC_BAD_RESP_ERR;
	case QHCA_WC_LOC_ACCESS_ERR:
		return IB_WC_LOC_ACCESS_ERR;
	case QHCA_WC_REM_INV_REQ_ERR:
		return IB_WC_REM_INV_REQ_ERR;
	case QHCA_WC_REM_ACCESS_ERR:
		return IB_WC_REM_ACCESS_ERR;
	case QHCA_WC_REM_OP_ERR:
		return IB_WC_REM_OP_ERR;
	case QHCA_WC_RETRY_EXC_ERR:
		return IB_WC_RETRY_EXC_ERR;
	case QHCA_WC_RNR_RETRY_EXC_ERR:
		return IB_WC_RNR_RETRY_EXC_ERR;
	case QHCA_WC_FATAL_ERR:
		return IB_WC_FATAL_ERR;
	case QHCA_WC_GENERAL_ERR:
	default:
		return IB_WC_GENERAL_ERR;
	}
}

/*
 * The interface's completion opcodes are ib_wc_opcode's values (1.4);
 * REG_MR, FLUSH and ATOMIC_WRITE since 6.2 (qhca_compat.h).
 */
#define QHCA_SAME_WC(op) \
	static_assert((int)QHCA_WC_##op == (int)IB_WC_##op)
QHCA_SAME_WC(SEND);
QHCA_SAME_WC(RDMA_WRITE);
QHCA_SAME_WC(RDMA_READ);
QHCA_SAME_WC(COMP_SWAP);
QHCA_SAME_WC(FETCH_ADD);
QHCA_SAME_WC(BIND_MW);
QHCA_SAME_WC(LOCAL_INV);
QHCA_SAME_WC(RECV);
QHCA_SAME_WC(RECV_RDMA_WITH_IMM);

/*
 * Whether @cqe completes a receive.  A CQ that serves only one of the
 * QP's queues says it; a shared one has the opcode tell (the receive
 * opcodes have bit 7 set).
 */
static bool qhca_cqe_is_recv(const struct qhca_cq *cq,
			     const struct qhca_qp *qp, const struct qhca_cqe *cqe)
{
	if (qp->ibqp.send_cq != qp->ibqp.recv_cq)
		return qp->ibqp.recv_cq == &cq->ibcq;
	return cqe->opcode & QHCA_WC_RECV;
}

/* The CQE's network types are rdma_network_type's values (1.5). */
static_assert(QHCA_NET_IB == RDMA_NETWORK_IB);
static_assert(QHCA_NET_IPV4 == RDMA_NETWORK_IPV4);
static_assert(QHCA_NET_IPV6 == RDMA_NETWORK_IPV6);

/*
 * A UD or GSI receive on an Ethernet port: what ib_init_ah_attr_from_wc()
 * needs to answer it (the CM does), the header that the GRH slot holds and
 * the sender's MAC.  A network type the device should not write is left
 * out: ib_core then reads the type from the header itself.
 */
static void qhca_cqe_roce_wc(const struct qhca_cqe *cqe, struct ib_wc *wc)
{
	if (cqe->network_hdr_type == QHCA_NET_IPV4 ||
	    cqe->network_hdr_type == QHCA_NET_IPV6) {
		wc->network_hdr_type = cqe->network_hdr_type;
		wc->wc_flags |= IB_WC_WITH_NETWORK_HDR_TYPE;
	}
	ether_addr_copy(wc->smac, cqe->smac);
	wc->wc_flags |= IB_WC_WITH_SMAC;
}

/*
 * Translate one CQE and retire its WQEs.  Returns false for an entry of a
 * QP that no longer exists (or never used this CQ), which is dropped.
 */
static bool qhca_cqe_to_wc(struct qhca_dev *dev, struct qhca_cq *cq,
			   const struct qhca_cqe *cqe, struct ib_wc *wc)
{
	u32 qpn = le32_to_cpu(cqe->qpn);
	struct qhca_qp *qp;
	bool recv;

	/* Under the lock: the QP cannot go away while its WQs are updated. */
	xa_lock(&dev->qps);
	qp = xa_load(&dev->qps, qpn);
	if (!qp || !qp->kernel || (qp->ibqp.send_cq != &cq->ibcq &&
				   qp->ibqp.recv_cq != &cq->ibcq)) {
		xa_unlock(&dev->qps);
		/* The slot of a gone QP's receive still belongs to its SRQ. */
		if (!qp && cqe->srqn && (cqe->opcode & QHCA_WC_RECV))
			qhca_srq_retire_orphan(dev, le16_to_cpu(cqe->srqn),
					       le16_to_cpu(cqe->wqe_idx));
		dev_dbg_ratelimited(&dev->pdev->dev,
				    "CQ %u: dropping a CQE of QP %u\n",
				    cq->cqn, qpn);
		return false;
	}
	recv = qhca_cqe_is_recv(cq, qp, cqe);
	/* A receive of a QP on an SRQ names the SRQ's slot. */
	if (recv && qp->ibqp.srq)
		qhca_srq_retire(to_qsrq(qp->ibqp.srq),
				le16_to_cpu(cqe->wqe_idx));
	else
		qhca_wq_retire(recv ? &qp->rq : &qp->sq,
			       le16_to_cpu(cqe->wqe_idx));
	xa_unlock(&dev->qps);

	memset(wc, 0, sizeof(*wc));
	wc->wr_id = le64_to_cpu(cqe->wr_id);
	wc->status = qhca_wc_status(cqe->status);
	if (wc->status == IB_WC_GENERAL_ERR)
		wc->vendor_err = cqe->status;
	wc->opcode = qhca_wc_opcode(cqe->opcode);
	wc->byte_len = le32_to_cpu(cqe->byte_len);
	wc->qp = &qp->ibqp;
	if (cqe->flags & QHCA_CQE_F_IMM) {
		/* The bytes as posted: already in network order. */
		wc->ex.imm_data = cqe->imm_data;
		wc->wc_flags |= IB_WC_WITH_IMM;
	} else if (cqe->flags & QHCA_CQE_F_INV) {
		/* SEND_WITH_INV: the key it invalidated (1.2). */
		wc->ex.invalidate_rkey = be32_to_cpu(cqe->imm_data);
		wc->wc_flags |= IB_WC_WITH_INVALIDATE;
	}
	if (recv) {
		wc->src_qp = le32_to_cpu(cqe->src_qp);
		wc->slid = le16_to_cpu(cqe->slid);
	}
	if (recv && qhca_qp_is_ud(qp)) {
		wc->sl = cqe->sl;
		wc->pkey_index = le16_to_cpu(cqe->pkey_index);
		wc->dlid_path_bits = cqe->dlid_path_bits;
		if (cqe->flags & QHCA_CQE_F_GRH)
			wc->wc_flags |= IB_WC_GRH;
		if (qhca_is_eth(dev))
			qhca_cqe_roce_wc(cqe, wc);
	}
	wc->port_num = 1;
	return true;
}

int qhca_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct qhca_dev *dev = to_qdev(ibcq->device);
	struct qhca_cq *cq = to_qcq(ibcq);
	struct qhca_cqe *cqe;
	unsigned long flags;
	int polled = 0;
	u32 seen;

	/* A user CQ is polled by libqhca, never through the kernel. */
	if (!cq->kernel)
		return -EOPNOTSUPP;

	spin_lock_irqsave(&cq->lock, flags);
	/* At most one ring's worth, whatever the device writes meanwhile. */
	for (seen = 0; polled < num_entries && seen < cq->depth; seen++) {
		cqe = qhca_cq_next(cq);
		if (!cqe)
			break;
		if (qhca_cqe_to_wc(dev, cq, cqe, &wc[polled]))
			polled++;
		cq->cons++;
	}
	if (seen)
		qhca_cq_consumed(cq->dbrec, cq->cons);
	spin_unlock_irqrestore(&cq->lock, flags);
	return polled;
}

int qhca_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct qhca_cq *cq = to_qcq(ibcq);
	unsigned long irqflags;
	u32 off;
	int ret = 0;

	/* A user CQ is armed from its context's doorbell page. */
	if (!cq->kernel)
		return -EOPNOTSUPP;

	off = (flags & IB_CQ_SOLICITED_MASK) == IB_CQ_SOLICITED ?
	      QHCA_DB_CQ_ARM_SOL : QHCA_DB_CQ_ARM;

	spin_lock_irqsave(&cq->lock, irqflags);
	qhca_cq_arm_db(cq->db, off, cq->cqn, cq->cons);
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && qhca_cq_next(cq))
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}
