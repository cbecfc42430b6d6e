// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * qhca event queues.  The async EQ carries port state changes, fatal
 * errors and CQ and QP errors; each completion EQ, on an MSI-X vector of
 * its own, carries the completion events of the CQs bound to it.  Every
 * event becomes an ib_core event or a CQ's completion handler call.
 */

#include <linux/bitfield.h>
#include <linux/dma-mapping.h>
#include <linux/interrupt.h>
#include <linux/log2.h>

#include "qhca.h"

#define QHCA_ASYNC_EQ_EVENTS	(BIT(QHCA_EVENT_PORT_ACTIVE) | \
				 BIT(QHCA_EVENT_PORT_DOWN) | \
				 BIT(QHCA_EVENT_DEVICE_FATAL) | \
				 BIT(QHCA_EVENT_CQ_ERROR) | \
				 BIT(QHCA_EVENT_QP_FATAL) | \
				 BIT(QHCA_EVENT_QP_REQ_ERR) | \
				 BIT(QHCA_EVENT_QP_ACCESS_ERR) | \
				 BIT(QHCA_EVENT_QP_LAST_WQE) | \
				 BIT(QHCA_EVENT_SRQ_LIMIT) | \
				 BIT(QHCA_EVENT_SRQ_ERR))
#define QHCA_COMP_EQ_EVENTS	BIT(QHCA_EVENT_COMPLETION)

/* Room for a few port events beside the per-object ones. */
#define QHCA_ASYNC_EQ_SLACK	64

static void qhca_eq_port_event(struct qhca_dev *dev, u8 type, u32 data)
{
	struct ib_event event = { .device = &dev->ibdev };

	switch (type) {
	case QHCA_EVENT_PORT_ACTIVE:
	case QHCA_EVENT_PORT_DOWN:
		if (data < 1 || data > dev->attr.num_ports) {
			dev_warn_ratelimited(&dev->pdev->dev,
					     "event %u for bad port %u\n",
					     type, data);
			return;
		}
		event.event = type == QHCA_EVENT_PORT_ACTIVE ?
			      IB_EVENT_PORT_ACTIVE : IB_EVENT_PORT_ERR;
		event.element.port_num = data;
		if (dev->eth)
			qhca_eth_port_event(dev,
					    type == QHCA_EVENT_PORT_ACTIVE);
		break;
	case QHCA_EVENT_DEVICE_FATAL:
	default:
		dev_err(&dev->pdev->dev, "device reported a fatal error\n");
		event.event = IB_EVENT_DEVICE_FATAL;
		break;
	}

	/*
	 * Before registration ib_core has no state to update: it queries the
	 * port itself while registering.
	 */
	if (smp_load_acquire(&dev->registered))
		ib_dispatch_event(&event);
}

static void qhca_eq_dispatch(struct qhca_dev *dev, u8 type, u32 data)
{
	switch (type) {
	case QHCA_EVENT_PORT_ACTIVE:
	case QHCA_EVENT_PORT_DOWN:
	case QHCA_EVENT_DEVICE_FATAL:
		qhca_eq_port_event(dev, type, data);
		break;
	case QHCA_EVENT_COMPLETION:
	case QHCA_EVENT_CQ_ERROR:
		if (dev->eth && qhca_eth_cq_event(dev, data, type))
			break;
		qhca_cq_handle_event(dev, data, type);
		break;
	case QHCA_EVENT_QP_FATAL:
	case QHCA_EVENT_QP_REQ_ERR:
	case QHCA_EVENT_QP_ACCESS_ERR:
	case QHCA_EVENT_QP_LAST_WQE:
		qhca_qp_handle_event(dev, data, type);
		break;
	case QHCA_EVENT_SRQ_LIMIT:
	case QHCA_EVENT_SRQ_ERR:
		qhca_srq_handle_event(dev, data, type);
		break;
	case QHCA_EVENT_PAGE_FAULT:
		qhca_odp_fault_event(dev, data);
		break;
	default:
		dev_warn_ratelimited(&dev->pdev->dev,
				     "unexpected event type %u\n", type);
		break;
	}
}

static void qhca_eq_process(struct qhca_eq *eq)
{
	struct qhca_dev *dev = eq->dev;
	unsigned long flags;
	bool consumed = false;
	u32 n;

	spin_lock_irqsave(&eq->lock, flags);
	for (n = 0; n < eq->depth; n++) {
		struct qhca_eqe *eqe = &eq->ring[eq->cons];

		if ((READ_ONCE(eqe->flags) & QHCA_EQE_FLAGS_PHASE) != eq->phase)
			break;
		/* Read the entry only after seeing its phase bit. */
		dma_rmb();
		qhca_eq_dispatch(dev, eqe->type, le32_to_cpu(eqe->data));

		if (++eq->cons == eq->depth) {
			eq->cons = 0;
			eq->phase ^= QHCA_EQE_FLAGS_PHASE;
		}
		consumed = true;
	}
	if (consumed)
		qhca_writel(dev->regs, QHCA_REG_EQ_DB,
			    FIELD_PREP(QHCA_EQ_DB_EQN, eq->eqn) |
			    FIELD_PREP(QHCA_EQ_DB_CONS_IDX, eq->cons));
	spin_unlock_irqrestore(&eq->lock, flags);
}

static irqreturn_t qhca_eq_irq(int irq, void *data)
{
	qhca_eq_process(data);
	return IRQ_HANDLED;
}

/* The depth for @entries events, within what the device allows. */
static u32 qhca_eq_depth_log2(struct qhca_dev *dev, u32 entries)
{
	u32 depth_log2 = order_base_2(max(entries, 2U));

	/* max_eqe bounds the depth; the spec asks for at least 2 entries. */
	while (depth_log2 > QHCA_EQ_MIN_DEPTH_LOG2 &&
	       BIT_ULL(depth_log2) > le32_to_cpu(dev->attr.max_eqe))
		depth_log2--;
	return depth_log2;
}

/*
 * Create one EQ.  On failure the ring stays allocated: the device may
 * still own it, so the caller frees it with qhca_eqs_free() after a reset.
 */
static int qhca_eq_setup(struct qhca_dev *dev, struct qhca_eq *eq,
			 u16 vector, u32 depth_log2, u32 event_mask)
{
	struct device *d = &dev->pdev->dev;
	int irq, err;

	eq->dev = dev;
	spin_lock_init(&eq->lock);
	eq->depth = BIT(depth_log2);
	eq->phase = QHCA_EQE_FLAGS_PHASE;
	eq->vector = vector;
	eq->ring = dma_alloc_coherent(d, eq->depth * sizeof(*eq->ring),
				      &eq->dma, GFP_KERNEL);
	if (!eq->ring)
		return -ENOMEM;

	err = qhca_admin_create_eq(dev, eq->dma, depth_log2, vector, event_mask,
				   &eq->eqn);
	if (err) {
		dev_err(d, "CREATE_EQ failed: %d\n", err);
		return err;
	}
	/* The EQ doorbell has 8 bits for the EQ number. */
	if (eq->eqn > FIELD_MAX(QHCA_EQ_DB_EQN)) {
		dev_err(d, "device returned EQ number %u\n", eq->eqn);
		err = -EIO;
		goto err_destroy;
	}

	/*
	 * Request the IRQ only now that the EQ number for the doorbell is
	 * known; an event already written is consumed right after.
	 */
	irq = pci_irq_vector(dev->pdev, vector);
	if (irq < 0) {
		err = irq;
		goto err_destroy;
	}
	err = request_irq(irq, qhca_eq_irq, 0, eq->name, eq);
	if (err)
		goto err_destroy;
	eq->irq = irq;
	qhca_eq_process(eq);
	return 0;

err_destroy:
	qhca_admin_destroy_eq(dev, eq->eqn);
	return err;
}

/* Stop event delivery and destroy the EQ; the ring stays until reset. */
static void qhca_eq_stop(struct qhca_dev *dev, struct qhca_eq *eq)
{
	int err;

	if (!eq->irq)
		return;
	free_irq(eq->irq, eq);
	eq->irq = 0;
	err = qhca_admin_destroy_eq(dev, eq->eqn);
	/* The ring is freed after the device's reset in any case. */
	qhca_destroyed(dev, err, "DESTROY_EQ", eq->eqn);
}

static void qhca_eq_free(struct qhca_dev *dev, struct qhca_eq *eq)
{
	if (!eq->ring)
		return;
	dma_free_coherent(&dev->pdev->dev, eq->depth * sizeof(*eq->ring),
			  eq->ring, eq->dma);
	eq->ring = NULL;
}

/**
 * qhca_eqs_create - create the async EQ and @num_ceqs completion EQs
 * @dev: the device
 * @num_ceqs: completion EQs, one per MSI-X vector from QHCA_VEC_COMP_BASE
 *
 * On failure the EQs that were created are stopped again; the caller
 * resets the device and frees the rings with qhca_eqs_free().
 */
int qhca_eqs_create(struct qhca_dev *dev, u32 num_ceqs)
{
	u32 max_cq = le32_to_cpu(dev->attr.max_cq);
	u32 max_qp = le32_to_cpu(dev->attr.max_qp);
	u32 max_srq = le32_to_cpu(dev->attr.max_srq);
	u32 async_mask = QHCA_ASYNC_EQ_EVENTS;
	u32 async_log2, comp_log2, i;
	u64 faults = 0;
	int err;

	/* On-demand paging (1.8): page faults come by the async EQ. */
	err = qhca_odp_init(dev);
	if (err)
		return err;
	if (dev->odp) {
		async_mask |= BIT(QHCA_EVENT_PAGE_FAULT);
		faults = 2ULL * max_qp;
	}

	dev->ceqs = kcalloc(num_ceqs, sizeof(*dev->ceqs), GFP_KERNEL);
	if (!dev->ceqs)
		return -ENOMEM;
	dev->num_ceqs = num_ceqs;

	/*
	 * Each CQ and each QP reports at most one error before it is reset,
	 * a QP on an SRQ also its last WQE, an SRQ one limit and one error;
	 * an armed CQ has at most one completion event in flight, and one
	 * more once re-armed before the EQ doorbell moved.  A QP has at most
	 * one requester and one responder page fault pending, each with its
	 * event.  Sized for that, the device never has to drop an event.
	 */
	async_log2 = qhca_eq_depth_log2(dev, min_t(u64, (u64)max_cq +
						   2ULL * max_qp +
						   2ULL * max_srq + faults +
						   QHCA_ASYNC_EQ_SLACK, U32_MAX));
	comp_log2 = qhca_eq_depth_log2(dev, min_t(u64, 2ULL * max_cq, U32_MAX));

	strscpy(dev->eq.name, "qhca-async", sizeof(dev->eq.name));
	err = qhca_eq_setup(dev, &dev->eq, QHCA_VEC_ASYNC_EQ, async_log2,
			    async_mask);
	if (err)
		return err;

	for (i = 0; i < num_ceqs; i++) {
		struct qhca_eq *eq = &dev->ceqs[i];

		snprintf(eq->name, sizeof(eq->name), "qhca-comp%u", i);
		err = qhca_eq_setup(dev, eq, QHCA_VEC_COMP_BASE + i, comp_log2,
				    QHCA_COMP_EQ_EVENTS);
		if (err) {
			qhca_eqs_stop(dev);
			return err;
		}
	}
	return 0;
}

/* Wait for the event handlers that are running. */
void qhca_eqs_sync(struct qhca_dev *dev)
{
	u32 i;

	if (dev->eq.irq)
		synchronize_irq(dev->eq.irq);
	for (i = 0; i < dev->num_ceqs; i++)
		if (dev->ceqs[i].irq)
			synchronize_irq(dev->ceqs[i].irq);
}

void qhca_eqs_stop(struct qhca_dev *dev)
{
	u32 i;

	for (i = 0; i < dev->num_ceqs; i++)
		qhca_eq_stop(dev, &dev->ceqs[i]);
	qhca_eq_stop(dev, &dev->eq);
	/* No page fault event comes any more. */
	qhca_odp_stop(dev);
}

/* Free the rings: after DESTROY_EQ or a device reset. */
void qhca_eqs_free(struct qhca_dev *dev)
{
	u32 i;

	for (i = 0; i < dev->num_ceqs; i++)
		qhca_eq_free(dev, &dev->ceqs[i]);
	qhca_eq_free(dev, &dev->eq);
	kfree(dev->ceqs);
	dev->ceqs = NULL;
	dev->num_ceqs = 0;
	qhca_odp_free(dev);
}
