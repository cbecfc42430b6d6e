// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * qhca asynchronous event queue: port state changes and fatal errors,
 * turned into ib_core events.
 */

#include <linux/bitfield.h>
#include <linux/dma-mapping.h>
#include <linux/interrupt.h>

#include "qhca.h"

/* Port events are rare: 64 entries leave plenty of slack. */
#define QHCA_ASYNC_EQ_DEPTH_LOG2	6
#define QHCA_ASYNC_EQ_EVENTS		(BIT(QHCA_EVENT_PORT_ACTIVE) | \
					 BIT(QHCA_EVENT_PORT_DOWN) | \
					 BIT(QHCA_EVENT_DEVICE_FATAL))

static void qhca_eq_dispatch(struct qhca_dev *dev, u8 type, u32 data)
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
		break;
	case QHCA_EVENT_DEVICE_FATAL:
		dev_err(&dev->pdev->dev, "device reported a fatal error\n");
		event.event = IB_EVENT_DEVICE_FATAL;
		break;
	default:
		dev_warn_ratelimited(&dev->pdev->dev,
				     "unexpected event type %u\n", type);
		return;
	}

	/*
	 * Before registration ib_core has no state to update: it queries the
	 * port itself while registering.
	 */
	if (smp_load_acquire(&dev->registered))
		ib_dispatch_event(&event);
}

static void qhca_eq_process(struct qhca_dev *dev)
{
	struct qhca_eq *eq = &dev->eq;
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
		qhca_reg_write(dev->regs, QHCA_REG_EQ_DB,
			       FIELD_PREP(QHCA_EQ_DB_EQN, eq->eqn) |
			       FIELD_PREP(QHCA_EQ_DB_CONS_IDX, eq->cons));
	spin_unlock_irqrestore(&eq->lock, flags);
}

static irqreturn_t qhca_eq_irq(int irq, void *data)
{
	qhca_eq_process(data);
	return IRQ_HANDLED;
}

/*
 * Create the async EQ.  On failure the ring stays allocated: the device may
 * still own it, so the caller frees it with qhca_eq_free() after a reset.
 */
int qhca_eq_create(struct qhca_dev *dev)
{
	struct qhca_eq *eq = &dev->eq;
	struct device *d = &dev->pdev->dev;
	u32 depth_log2 = QHCA_ASYNC_EQ_DEPTH_LOG2;
	int irq, err;

	/* max_eqe bounds the depth; the spec asks for at least 2 entries. */
	while (depth_log2 > QHCA_EQ_MIN_DEPTH_LOG2 &&
	       BIT(depth_log2) > le32_to_cpu(dev->attr.max_eqe))
		depth_log2--;

	memset(eq, 0, sizeof(*eq));
	spin_lock_init(&eq->lock);
	eq->depth = BIT(depth_log2);
	eq->phase = QHCA_EQE_FLAGS_PHASE;
	eq->ring = dma_alloc_coherent(d, eq->depth * sizeof(*eq->ring),
				      &eq->dma, GFP_KERNEL);
	if (!eq->ring)
		return -ENOMEM;

	err = qhca_cmd_create_eq(dev, eq->dma, depth_log2, QHCA_VEC_ASYNC_EQ,
				 QHCA_ASYNC_EQ_EVENTS, &eq->eqn);
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
	irq = pci_irq_vector(dev->pdev, QHCA_VEC_ASYNC_EQ);
	err = request_irq(irq, qhca_eq_irq, 0, "qhca-async", dev);
	if (err)
		goto err_destroy;
	eq->irq = irq;
	qhca_eq_process(dev);
	return 0;

err_destroy:
	qhca_cmd_destroy_eq(dev, eq->eqn);
	return err;
}

/* Stop event delivery and destroy the EQ; the ring stays until reset. */
void qhca_eq_stop(struct qhca_dev *dev)
{
	struct qhca_eq *eq = &dev->eq;
	int err;

	if (!eq->irq)
		return;
	free_irq(eq->irq, dev);
	eq->irq = 0;
	err = qhca_cmd_destroy_eq(dev, eq->eqn);
	if (err)
		dev_warn(&dev->pdev->dev, "DESTROY_EQ failed: %d\n", err);
}

/* Free the ring: after DESTROY_EQ or a device reset. */
void qhca_eq_free(struct qhca_dev *dev)
{
	struct qhca_eq *eq = &dev->eq;

	if (!eq->ring)
		return;
	dma_free_coherent(&dev->pdev->dev, eq->depth * sizeof(*eq->ring),
			  eq->ring, eq->dma);
	eq->ring = NULL;
}
