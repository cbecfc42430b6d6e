/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * qhca: driver for the qhca emulated InfiniBand HCA.
 *
 * Shared definitions of the driver's parts: the device, its admin queue,
 * its event queue and the verbs objects.
 */
#ifndef QHCA_H
#define QHCA_H

#include <linux/completion.h>
#include <linux/io.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>

#include "qhca_hw.h"

#define DRV_MODULE_NAME "qhca"

/* MSI-X vectors: the admin queue's completions and the async EQ. */
enum qhca_msix_vector {
	QHCA_VEC_ADMIN,
	QHCA_VEC_ASYNC_EQ,
	QHCA_NUM_VECS,
};

/*
 * The admin queue.  Commands are issued one at a time under @cmd_lock; the
 * completion side (@cq_head, @phase, @sq_head and the in-flight record) is
 * shared with the interrupt handler under @cq_lock.
 */
struct qhca_admin {
	struct device *dmadev;
	void __iomem *regs;

	struct mutex cmd_lock;		/* one command in flight */
	bool dead;			/* the device failed: no more commands */
	u32 depth;			/* entries in the SQ and in the CQ */
	u32 sq_tail;
	u16 next_cmd_id;
	struct qhca_aq_sqe *sq;
	dma_addr_t sq_dma;
	void *resp;			/* response buffer, QHCA_AQ_RESP_SIZE */
	dma_addr_t resp_dma;

	spinlock_t cq_lock;		/* completion side, with the IRQ */
	struct qhca_aq_cqe *cq;
	dma_addr_t cq_dma;
	u32 cq_head;
	u32 sq_head;			/* SQ entries the device consumed */
	u8 phase;
	bool pending;			/* a command waits for @pending_id */
	u16 pending_id;
	u8 status;
	u32 result;
	struct completion done;
};

/* The asynchronous event queue: port and device events. */
struct qhca_eq {
	struct qhca_eqe *ring;
	dma_addr_t dma;
	u32 depth;
	u32 eqn;
	int irq;			/* Linux IRQ, 0 while not requested */
	spinlock_t lock;		/* consumer state below */
	u32 cons;
	u8 phase;
};

struct qhca_dev {
	struct ib_device ibdev;
	struct pci_dev *pdev;
	void __iomem *regs;
	phys_addr_t db_bar_start;
	resource_size_t db_bar_len;
	u32 db_pages;

	struct qhca_admin aq;
	int admin_irq;
	struct qhca_eq eq;
	/* Set once ib_register_device() succeeded: events may be dispatched. */
	bool registered;

	/* Cached at probe; the device's attributes do not change. */
	struct qhca_device_attr attr;
	struct qhca_port_attr port;
};

struct qhca_ucontext {
	struct ib_ucontext ibucontext;
	struct rdma_user_mmap_entry *db_entry;
};

/* The mmap entry owns the UAR: the page is freed when no mapping is left. */
struct qhca_user_mmap_entry {
	struct rdma_user_mmap_entry rdma_entry;
	phys_addr_t address;
	u32 uar_index;
};

struct qhca_pd {
	struct ib_pd ibpd;
	u32 pdn;
};

static inline struct qhca_dev *to_qdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct qhca_dev, ibdev);
}

static inline struct qhca_ucontext *to_qucontext(struct ib_ucontext *uctx)
{
	return container_of(uctx, struct qhca_ucontext, ibucontext);
}

static inline struct qhca_user_mmap_entry *
to_qmmap(struct rdma_user_mmap_entry *entry)
{
	return container_of(entry, struct qhca_user_mmap_entry, rdma_entry);
}

static inline struct qhca_pd *to_qpd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct qhca_pd, ibpd);
}

/* qhca_hw.c: registers, reset and enable. */
static inline u32 qhca_reg_read(void __iomem *regs, u32 off)
{
	return readl(regs + off);
}

static inline void qhca_reg_write(void __iomem *regs, u32 off, u32 val)
{
	writel(val, regs + off);
}

int qhca_hw_check_identity(struct qhca_dev *dev);
int qhca_hw_reset(struct qhca_dev *dev);
int qhca_hw_enable(struct qhca_dev *dev);

/* qhca_admin.c: the admin queue transport. */
int qhca_admin_init(struct qhca_admin *aq, struct device *dmadev,
		    void __iomem *regs, u32 msix_vector);
void qhca_admin_destroy(struct qhca_admin *aq);
irqreturn_t qhca_admin_irq(int irq, void *data);
int qhca_admin_exec(struct qhca_admin *aq, u16 opcode,
		    const void *payload, size_t payload_len,
		    void *resp, size_t resp_len, u32 *result);

/* qhca_cmd.c: typed admin commands. */
int qhca_cmd_query_device(struct qhca_dev *dev, struct qhca_device_attr *attr);
int qhca_cmd_query_port(struct qhca_dev *dev, u8 port_num,
			struct qhca_port_attr *attr);
int qhca_cmd_alloc_uar(struct qhca_dev *dev, u32 *uar_index);
int qhca_cmd_dealloc_uar(struct qhca_dev *dev, u32 uar_index);
int qhca_cmd_alloc_pd(struct qhca_dev *dev, u32 *pdn);
int qhca_cmd_dealloc_pd(struct qhca_dev *dev, u32 pdn);
int qhca_cmd_create_eq(struct qhca_dev *dev, dma_addr_t base, u8 depth_log2,
		       u16 msix_vector, u32 event_mask, u32 *eqn);
int qhca_cmd_destroy_eq(struct qhca_dev *dev, u32 eqn);
int qhca_cmd_query_stats(struct qhca_dev *dev, struct qhca_stats *stats);

/* qhca_eq.c: the async event queue. */
int qhca_eq_create(struct qhca_dev *dev);
void qhca_eq_stop(struct qhca_dev *dev);
void qhca_eq_free(struct qhca_dev *dev);

/* qhca_verbs.c: the ib_device. */
int qhca_ib_register(struct qhca_dev *dev);
void qhca_ib_unregister(struct qhca_dev *dev);

/* qhca_sysfs.c: the hw_objects attribute group. */
extern const struct attribute_group qhca_hw_objects_group;

#endif /* QHCA_H */
