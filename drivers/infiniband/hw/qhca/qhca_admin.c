// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * qhca admin queue transport.
 *
 * Commands are rare (object setup and teardown), so one is in flight at a
 * time: the caller holds cmd_lock from submission to completion.  The
 * completion normally arrives by MSI-X; the waiter also polls the CQ
 * between waits so that a lost interrupt costs latency, never a command.
 * A command that does not complete within the timeout means the device
 * stopped answering (interface 1.3, Documentation/hw/qhca-faults.rst): the
 * queue is declared dead, the device is reset so that it stops all DMA,
 * and that command and every later one fail at once with -EIO, so that
 * tearing the device down takes no further timeouts.  qhca_dev_fatal()
 * then tells the users and has the PCI function reset, which brings up a
 * new device with a new admin queue.
 */

#include <linux/bitfield.h>
#include <linux/dma-mapping.h>
#include <linux/interrupt.h>
#include <linux/jiffies.h>

#include "qhca.h"

/* 32 entries: more than enough for one command at a time. */
#define QHCA_AQ_DEPTH_LOG2	5
/* Large enough for every response of the interface (the largest is 256). */
#define QHCA_AQ_RESP_SIZE	512
#define QHCA_AQ_TIMEOUT_MS	5000
#define QHCA_AQ_POLL_MS		10

static_assert(sizeof(struct qhca_device_attr) <= QHCA_AQ_RESP_SIZE);
static_assert(sizeof(struct qhca_port_attr) <= QHCA_AQ_RESP_SIZE);
static_assert(sizeof(struct qhca_stats) <= QHCA_AQ_RESP_SIZE);
static_assert(sizeof(struct qhca_qp_attr) <= QHCA_AQ_RESP_SIZE);
static_assert(sizeof(struct qhca_counters) <= QHCA_AQ_RESP_SIZE);

static int qhca_aq_status_to_errno(u8 status)
{
	switch (status) {
	case QHCA_AQ_SUCCESS:
		return 0;
	case QHCA_AQ_BAD_OPCODE:
		return -EOPNOTSUPP;
	case QHCA_AQ_BAD_PARAM:
	case QHCA_AQ_BAD_HANDLE:
		return -EINVAL;
	case QHCA_AQ_BAD_ADDRESS:
		return -EFAULT;
	case QHCA_AQ_NO_RESOURCES:
		return -ENOMEM;
	case QHCA_AQ_BAD_STATE:
		return -EBUSY;
	case QHCA_AQ_INTERNAL:
	default:
		return -EIO;
	}
}

/* Consume every new CQE; called with cq_lock held. */
static void qhca_admin_process_cq(struct qhca_admin *aq)
{
	bool consumed = false;
	u32 n;

	/* At most one ring's worth per call, whatever the device writes. */
	for (n = 0; n < aq->depth; n++) {
		struct qhca_aq_cqe *cqe = &aq->cq[aq->cq_head];
		u16 cmd_id;

		if ((READ_ONCE(cqe->flags) & QHCA_CQE_FLAGS_PHASE) != aq->phase)
			break;
		/* Read the entry only after seeing its phase bit. */
		dma_rmb();

		cmd_id = le16_to_cpu(cqe->cmd_id);
		aq->sq_head = le16_to_cpu(cqe->sq_head) & (aq->depth - 1);
		if (aq->pending && cmd_id == aq->pending_id) {
			aq->status = cqe->status;
			aq->result = le32_to_cpu(cqe->result);
			aq->pending = false;
			complete(&aq->done);
		} else {
			dev_warn_ratelimited(aq->dmadev,
					     "dropping admin completion %#x\n",
					     cmd_id);
		}

		if (++aq->cq_head == aq->depth) {
			aq->cq_head = 0;
			aq->phase ^= QHCA_CQE_FLAGS_PHASE;
		}
		consumed = true;
	}
	/* Tell the device the slots are free: it stalls on a full CQ. */
	if (consumed)
		qhca_writel(aq->regs, QHCA_REG_AQ_CQ_DB, aq->cq_head);
}

static void qhca_admin_poll(struct qhca_admin *aq)
{
	unsigned long flags;

	spin_lock_irqsave(&aq->cq_lock, flags);
	qhca_admin_process_cq(aq);
	spin_unlock_irqrestore(&aq->cq_lock, flags);
}

irqreturn_t qhca_admin_irq(int irq, void *data)
{
	struct qhca_admin *aq = data;

	spin_lock(&aq->cq_lock);
	qhca_admin_process_cq(aq);
	spin_unlock(&aq->cq_lock);
	return IRQ_HANDLED;
}

/*
 * Wait for the pending command.  Returns 0 once it completed (its status is
 * in aq->status), -ETIMEDOUT after abandoning it.
 */
static int qhca_admin_wait(struct qhca_admin *aq, u16 opcode)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(QHCA_AQ_TIMEOUT_MS);
	bool pending;
	u32 status;

	for (;;) {
		qhca_admin_poll(aq);
		if (wait_for_completion_timeout(&aq->done,
						msecs_to_jiffies(QHCA_AQ_POLL_MS)))
			return 0;
		if (time_after(jiffies, deadline))
			break;
	}

	spin_lock_irq(&aq->cq_lock);
	pending = aq->pending;
	aq->pending = false;
	spin_unlock_irq(&aq->cq_lock);
	if (!pending)
		return 0;	/* completed just now */

	status = qhca_readl(aq->regs, QHCA_REG_STATUS);
	dev_err(aq->dmadev, "admin command %#x timed out (STATUS %#x ERROR %u)\n",
		opcode, status, qhca_readl(aq->regs, QHCA_REG_ERROR));
	return -ETIMEDOUT;
}

/*
 * The device stopped answering: with cmd_lock held, so that whoever sees
 * the queue dead also sees the device reset.  Until the reset completed
 * the device may still write any ring it knows, so memory it was given is
 * freed after a failed destroy only once @quiesced is set.
 */
static void qhca_admin_kill(struct qhca_admin *aq)
{
	struct qhca_dev *dev = container_of(aq, struct qhca_dev, aq);

	aq->quiesced = !qhca_hw_reset(dev);
	WRITE_ONCE(aq->dead, true);
}

/**
 * qhca_admin_exec - execute one admin command and wait for it
 * @aq: the admin queue
 * @opcode: enum qhca_aq_opcode
 * @payload: the command's parameters, or NULL
 * @payload_len: their size, at most QHCA_AQ_PAYLOAD_SIZE
 * @resp: where to copy the response, or NULL for commands without one
 * @resp_len: the command's response size
 * @result: where to store the completion's result, or NULL
 *
 * Sleeps.  Returns 0 or a negative errno: the device's status mapped as the
 * interface specification says, -EIO once the device stopped answering
 * (this command timed out, or an earlier one did), -EBUSY if the ring is
 * full.
 */
int qhca_admin_exec(struct qhca_admin *aq, u16 opcode,
		    const void *payload, size_t payload_len,
		    void *resp, size_t resp_len, u32 *result)
{
	bool timed_out = false;
	struct qhca_aq_sqe *sqe;
	u32 next, sq_head;
	u16 cmd_id;
	int err;

	if (WARN_ON(payload_len > QHCA_AQ_PAYLOAD_SIZE ||
		    resp_len > QHCA_AQ_RESP_SIZE))
		return -EINVAL;

	mutex_lock(&aq->cmd_lock);
	if (aq->dead) {
		err = -EIO;
		goto out_unlock;
	}

	next = (aq->sq_tail + 1) & (aq->depth - 1);
	spin_lock_irq(&aq->cq_lock);
	sq_head = aq->sq_head;
	spin_unlock_irq(&aq->cq_lock);
	if (next == sq_head) {
		/* Only abandoned commands fill the ring: the device is stuck. */
		dev_err_ratelimited(aq->dmadev, "admin queue full\n");
		err = -EBUSY;
		goto out_unlock;
	}

	cmd_id = aq->next_cmd_id++;
	sqe = &aq->sq[aq->sq_tail];
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = cpu_to_le16(opcode);
	sqe->cmd_id = cpu_to_le16(cmd_id);
	if (resp) {
		sqe->resp_addr = cpu_to_le64(aq->resp_dma);
		sqe->resp_len = cpu_to_le32(resp_len);
	}
	if (payload_len)
		memcpy(sqe->payload, payload, payload_len);

	reinit_completion(&aq->done);
	spin_lock_irq(&aq->cq_lock);
	aq->pending = true;
	aq->pending_id = cmd_id;
	spin_unlock_irq(&aq->cq_lock);

	/* writel() orders the SQE's memory writes before the doorbell. */
	aq->sq_tail = next;
	qhca_writel(aq->regs, QHCA_REG_AQ_SQ_DB, next);

	err = qhca_admin_wait(aq, opcode);
	if (err) {
		qhca_admin_kill(aq);
		timed_out = true;
		err = -EIO;
		goto out_unlock;
	}

	err = qhca_aq_status_to_errno(aq->status);
	if (err) {
		dev_dbg(aq->dmadev, "admin command %#x: status %u\n", opcode,
			aq->status);
		goto out_unlock;
	}
	if (resp)
		memcpy(resp, aq->resp, resp_len);
	if (result)
		*result = aq->result;

out_unlock:
	mutex_unlock(&aq->cmd_lock);
	/* Users and recovery hear of it once the queue is free again. */
	if (timed_out)
		qhca_dev_fatal(container_of(aq, struct qhca_dev, aq));
	return err;
}

/*
 * Allocate the rings and program the admin queue registers; the device must
 * be in reset.  The caller enables the device afterwards.
 */
int qhca_admin_init(struct qhca_admin *aq, struct device *dmadev,
		    void __iomem *regs, u32 msix_vector)
{
	u32 max_log2, depth_log2;

	max_log2 = FIELD_GET(QHCA_AQ_CAPS_MAX_DEPTH_LOG2,
			     qhca_readl(regs, QHCA_REG_AQ_CAPS));
	if (max_log2 < QHCA_AQ_MIN_DEPTH_LOG2) {
		dev_err(dmadev, "admin queue depth 2^%u unsupported\n",
			max_log2);
		return -ENODEV;
	}
	depth_log2 = min(max_log2, QHCA_AQ_DEPTH_LOG2);

	memset(aq, 0, sizeof(*aq));
	aq->dmadev = dmadev;
	aq->regs = regs;
	aq->depth = 1U << depth_log2;
	aq->phase = QHCA_CQE_FLAGS_PHASE;
	mutex_init(&aq->cmd_lock);
	spin_lock_init(&aq->cq_lock);
	init_completion(&aq->done);

	/* dma_alloc_coherent() memory is page aligned: QHCA_QUEUE_ALIGN. */
	aq->sq = dma_alloc_coherent(dmadev, aq->depth * sizeof(*aq->sq),
				    &aq->sq_dma, GFP_KERNEL);
	if (!aq->sq)
		goto err;
	aq->cq = dma_alloc_coherent(dmadev, aq->depth * sizeof(*aq->cq),
				    &aq->cq_dma, GFP_KERNEL);
	if (!aq->cq)
		goto err;
	aq->resp = dma_alloc_coherent(dmadev, QHCA_AQ_RESP_SIZE,
				      &aq->resp_dma, GFP_KERNEL);
	if (!aq->resp)
		goto err;

	qhca_writel(regs, QHCA_REG_AQ_SQ_BASE_LO, lower_32_bits(aq->sq_dma));
	qhca_writel(regs, QHCA_REG_AQ_SQ_BASE_HI, upper_32_bits(aq->sq_dma));
	qhca_writel(regs, QHCA_REG_AQ_CQ_BASE_LO, lower_32_bits(aq->cq_dma));
	qhca_writel(regs, QHCA_REG_AQ_CQ_BASE_HI, upper_32_bits(aq->cq_dma));
	qhca_writel(regs, QHCA_REG_AQ_CFG,
		    FIELD_PREP(QHCA_AQ_CFG_DEPTH_LOG2, depth_log2) |
		    FIELD_PREP(QHCA_AQ_CFG_MSIX_VECTOR, msix_vector));
	return 0;

err:
	qhca_admin_destroy(aq);
	return -ENOMEM;
}

/* Free the rings; the device must be in reset so it no longer uses them. */
void qhca_admin_destroy(struct qhca_admin *aq)
{
	if (aq->resp)
		dma_free_coherent(aq->dmadev, QHCA_AQ_RESP_SIZE, aq->resp,
				  aq->resp_dma);
	if (aq->cq)
		dma_free_coherent(aq->dmadev, aq->depth * sizeof(*aq->cq),
				  aq->cq, aq->cq_dma);
	if (aq->sq)
		dma_free_coherent(aq->dmadev, aq->depth * sizeof(*aq->sq),
				  aq->sq, aq->sq_dma);
	aq->resp = NULL;
	aq->cq = NULL;
	aq->sq = NULL;
	mutex_destroy(&aq->cmd_lock);
}
