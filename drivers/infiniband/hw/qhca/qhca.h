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
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "qhca_hw.h"

#define DRV_MODULE_NAME "qhca"

/*
 * MSI-X vectors: the admin queue's completions, the async EQ, then one
 * vector per completion EQ.
 */
enum qhca_msix_vector {
	QHCA_VEC_ADMIN,
	QHCA_VEC_ASYNC_EQ,
	QHCA_VEC_COMP_BASE,
};

/* At least one completion EQ. */
#define QHCA_MIN_VECS		(QHCA_VEC_COMP_BASE + 1)

/*
 * The admin queue.  Commands are issued one at a time under @cmd_lock; the
 * completion side (@cq_head, @phase, @sq_head and the in-flight record) is
 * shared with the interrupt handler under @cq_lock.
 */
struct qhca_admin {
	struct device *dmadev;
	void __iomem *regs;

	struct mutex cmd_lock;		/* one command in flight */
	/*
	 * A command timed out: the device stopped answering and every
	 * command fails at once until the device is brought up anew.
	 */
	bool dead;
	/* Dead, and the reset that stops all its DMA completed. */
	bool quiesced;
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

/*
 * An event queue: the async EQ (port, device, CQ and QP errors) or one of
 * the completion EQs.  Both dispatch whatever type they receive.
 */
struct qhca_eq {
	struct qhca_dev *dev;
	struct qhca_eqe *ring;
	dma_addr_t dma;
	u32 depth;
	u32 eqn;
	u16 vector;			/* MSI-X vector */
	int irq;			/* Linux IRQ, 0 while not requested */
	char name[32];			/* the IRQ's name */
	spinlock_t lock;		/* consumer state below */
	u32 cons;
	u8 phase;
};

/*
 * The kernel's doorbell page, for the CQs and QPs of kernel consumers.  It
 * exists while such an object does, so an idle device holds no UAR.
 */
struct qhca_kuar {
	struct mutex lock;		/* @users and the page */
	unsigned int users;
	u32 index;
	void __iomem *db;
};

/*
 * 1.7, QHCA_DEV_CAP_DEVICE_MEMORY: the pages of BAR 4 that qhca_dm.c
 * hands out to user contexts.  @pages is 0 on a device without them.
 */
struct qhca_dm_pool {
	phys_addr_t start;		/* BAR 4's bus address */
	u32 pages;
	struct mutex lock;		/* @map and @used */
	unsigned long *map;		/* a bit per page handed out */
	u32 used;			/* pages handed out */
};

struct qhca_dev {
	struct ib_device ibdev;
	struct pci_dev *pdev;
	void __iomem *regs;
	u32 version;			/* of the interface: QHCA_VERSION_* */
	phys_addr_t db_bar_start;
	resource_size_t db_bar_len;
	u32 db_pages;

	struct qhca_admin aq;
	int admin_irq;
	struct qhca_eq eq;		/* async events */
	struct qhca_eq *ceqs;		/* completion events */
	u32 num_ceqs;
	/* Set once ib_register_device() succeeded: events may be dispatched. */
	bool registered;
	/* debugfs: qhca/<ibdev>/, with the fault injection file. */
	struct dentry *debugfs;

	struct qhca_kuar kuar;
	struct qhca_dm_pool dm;		/* device memory (1.7) */
	struct qhca_odp *odp;		/* on-demand paging (1.8), or NULL */
	/* CQs and QPs by number, for events and kernel completions. */
	struct xarray cqs;
	struct xarray qps;
	struct xarray srqs;		/* SRQs by number, for events */
	/* The low byte of the next MR's keys. */
	atomic_t mr_key;
	/* Live AHs: the device has no AH object to count them. */
	atomic_t ahs;

	/* Cached at probe; the device's attributes do not change. */
	struct qhca_device_attr attr;
	struct qhca_port_attr port;

	/*
	 * 1.5, an Ethernet port (port.link_layer QHCA_LINK_LAYER_ETH): the
	 * NIC on the same function (qhca_netdev.c), its net_device bound to
	 * the ib_device with ib_device_set_netdev().  NULL on an IB port.
	 */
	struct qhca_eth *eth;
	struct net_device *netdev;
};

static inline bool qhca_is_eth(const struct qhca_dev *dev)
{
	return dev->port.link_layer == QHCA_LINK_LAYER_ETH;
}

struct qhca_ucontext {
	struct ib_ucontext ibucontext;
	struct rdma_user_mmap_entry *db_entry;
	u32 uar_index;
};

/* DMA-coherent memory the device reads or writes: rings and page lists. */
struct qhca_dma_buf {
	void *va;
	dma_addr_t dma;
	size_t size;
};

enum qhca_mmap_type {
	QHCA_MMAP_DB_PAGE,		/* a UAR's doorbell page in BAR 2 */
	QHCA_MMAP_RING,			/* a CQ, SQ or RQ ring in RAM */
	QHCA_MMAP_DM,			/* a DM's pages in BAR 4 (1.7) */
};

/*
 * An mmap entry owns what it maps: the UAR, or the ring's memory, which
 * is freed only when the last mapping is gone (qhca_mmap_free()).
 */
struct qhca_user_mmap_entry {
	struct rdma_user_mmap_entry rdma_entry;
	enum qhca_mmap_type type;
	phys_addr_t address;		/* DB_PAGE: the page in BAR 2; DM */
	u32 uar_index;			/* DB_PAGE */
	struct qhca_dma_buf buf;	/* RING */
};

struct qhca_pd {
	struct ib_pd ibpd;
	u32 pdn;
};

struct qhca_xrcd {
	struct ib_xrcd ibxrcd;
	u32 xrcdn;
};

static inline struct qhca_xrcd *to_qxrcd(struct ib_xrcd *ibxrcd)
{
	return container_of(ibxrcd, struct qhca_xrcd, ibxrcd);
}

struct qhca_mr {
	struct ib_mr ibmr;
	struct ib_umem *umem;		/* user MRs */
	int access;			/* user MRs: ib_access_flags */
	u32 index;
	/* Fast registration: the page list map_mr_sg fills (1.2). */
	struct qhca_dma_buf pl;
	u32 max_pages;
	u32 npages;
	struct qhca_odp_mr *odp;	/* ODP MRs (qhca_odp.c) */
};

struct qhca_mw {
	struct ib_mw ibmw;
	u32 index;
};

struct qhca_cq {
	struct ib_cq ibcq;
	u32 cqn;
	u32 depth;			/* entries, a power of two */
	struct qhca_eq *eq;
	/*
	 * Ring, then the consumer record, in one allocation.  A user CQ's
	 * mmap entry owns it (@buf is a copy); a kernel CQ owns it.
	 */
	struct qhca_dma_buf buf;
	struct qhca_cqe *ring;
	__le32 *dbrec;
	struct rdma_user_mmap_entry *mmap_entry;
	bool kernel;			/* a kernel consumer's CQ */
	struct mutex resize_lock;	/* one resize at a time */

	/* Kernel CQs: the consumer side. */
	void __iomem *db;		/* the kernel UAR page */
	spinlock_t lock;		/* @cons and polling */
	u32 cons;			/* free-running consumer index */
};

/* One work queue (SQ or RQ) of a QP. */
struct qhca_wq {
	struct qhca_dma_buf buf;	/* owned as qhca_cq.buf is */
	struct rdma_user_mmap_entry *mmap_entry;
	u32 depth;			/* WQEs, a power of two */
	u32 stride_log2;
	u32 max_sge;

	/* Kernel QPs: the producer side. */
	spinlock_t lock;		/* @head, @tail and the ring */
	u32 head;			/* free-running: WQEs posted */
	u32 tail;			/* free-running: WQEs completed */
};

struct qhca_qp {
	struct ib_qp ibqp;
	struct qhca_wq sq;
	struct qhca_wq rq;
	u32 max_inline;
	bool sq_sig_all;
	bool kernel;			/* a kernel consumer's QP */
	void __iomem *db;		/* kernel QPs: the kernel UAR page */

	/*
	 * What the driver last set, for query_qp and for the checks of the
	 * next modify_qp; the device moves a QP to ERR on its own.
	 */
	struct mutex state_lock;	/* modify_qp and the fields below */
	enum ib_qp_state state;
	u16 dlid;
	u8 sl;
	enum ib_mtu path_mtu;
	/*
	 * Ethernet port: the RoCEv2 address vector last given with SET_QP_AV
	 * (@av_set), which the device does not report back.
	 */
	bool av_set;
	struct qhca_cmd_set_qp_av av;
};

/*
 * A shared receive queue: a ring of receive WQEs, owned as qhca_wq.buf
 * is.  Kernel SRQs free a slot once it and every older one completed.
 */
struct qhca_srq {
	struct ib_srq ibsrq;
	u32 srqn;
	struct qhca_dma_buf buf;
	struct rdma_user_mmap_entry *mmap_entry;
	u32 depth;			/* WQEs, a power of two */
	u32 stride_log2;
	u32 max_sge;
	bool kernel;			/* a kernel consumer's SRQ */

	/* Kernel SRQs: the producer side. */
	void __iomem *db;		/* the kernel UAR page */
	spinlock_t lock;		/* @head, @tail, @done and the ring */
	u32 head;			/* free-running: WQEs posted */
	u32 tail;			/* free-running: oldest not completed */
	unsigned long *done;		/* completed slots past @tail */
	/*
	 * A resize (MODIFY_SRQ MAX_WR) to @resize_depth WQEs runs while that
	 * is not 0 (user SRQs too).  With @resizing, kernel posters write
	 * WQEs from @resize_head on into @resize_buf, without a doorbell,
	 * until the device has moved the older ones there.  Under @lock.
	 */
	u32 resize_depth;
	bool resizing;
	struct qhca_dma_buf resize_buf;
	u32 resize_head;
};

static inline struct qhca_srq *to_qsrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct qhca_srq, ibsrq);
}

static inline struct qhca_dev *to_qdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct qhca_dev, ibdev);
}

static inline struct qhca_mw *to_qmw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct qhca_mw, ibmw);
}

static inline struct qhca_mr *to_qmr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct qhca_mr, ibmr);
}

static inline struct qhca_cq *to_qcq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct qhca_cq, ibcq);
}

/*
 * An address handle: the address vector of a UD send WQE, ready to copy.
 * Only a kernel consumer's is copied; on an IB port user space builds its
 * own in libqhca, on an Ethernet port it asks here for @dmac.
 */
struct qhca_ah {
	struct ib_ah ibah;
	__le16 dlid;
	u8 sl;
	u8 av_flags;			/* QHCA_AV_F_* */
	u8 dgid[16];
	__le32 flow_label;
	u8 dmac[ETH_ALEN];		/* Ethernet port: the next hop */
	u8 hop_limit;
	u8 traffic_class;
	u8 sgid_index;
};

static inline struct qhca_ah *to_qah(struct ib_ah *ibah)
{
	return container_of(ibah, struct qhca_ah, ibah);
}

static inline struct qhca_qp *to_qqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct qhca_qp, ibqp);
}

/* QP1 of an Ethernet port is a UD QP in every way but its number. */
static inline bool qhca_qp_is_ud(const struct qhca_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI;
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

/*
 * Read a request from user space by the ABI's rules: a shorter one reads
 * as if zero-extended, a longer one is accepted only if the excess is zero.
 * @req must be zeroed by the caller.
 */
static inline int qhca_udata_get_req(struct ib_udata *udata, void *req,
				     size_t len)
{
	if (udata->inlen > len &&
	    !ib_is_udata_cleared(udata, len, udata->inlen - len))
		return -EINVAL;
	return ib_copy_from_udata(req, udata, min(len, udata->inlen));
}

/* Write a response: at most what user space offered room for. */
static inline int qhca_udata_put_resp(struct ib_udata *udata,
				      void *resp, size_t len)
{
	return ib_copy_to_udata(udata, resp, min(len, udata->outlen));
}

/* qhca_hw.c: registers, reset and enable. */
static inline u32 qhca_readl(void __iomem *regs, u32 off)
{
	return readl(regs + off);
}

static inline void qhca_writel(void __iomem *regs, u32 off, u32 val)
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
int qhca_admin_query_device(struct qhca_dev *dev,
			    struct qhca_device_attr *attr);
int qhca_admin_query_port(struct qhca_dev *dev, u8 port_num,
			  struct qhca_port_attr *attr);
int qhca_admin_alloc_uar(struct qhca_dev *dev, u32 *uar_index);
int qhca_admin_dealloc_uar(struct qhca_dev *dev, u32 uar_index);
int qhca_admin_alloc_pd(struct qhca_dev *dev, u32 *pdn);
int qhca_admin_dealloc_pd(struct qhca_dev *dev, u32 pdn);
int qhca_admin_alloc_xrcd(struct qhca_dev *dev, u32 *xrcdn);
int qhca_admin_dealloc_xrcd(struct qhca_dev *dev, u32 xrcdn);
int qhca_admin_create_eq(struct qhca_dev *dev, dma_addr_t base, u8 depth_log2,
			 u16 msix_vector, u32 event_mask, u32 *eqn);
int qhca_admin_destroy_eq(struct qhca_dev *dev, u32 eqn);
int qhca_admin_query_stats(struct qhca_dev *dev, struct qhca_stats *stats);

int qhca_admin_reg_mr(struct qhca_dev *dev, const struct qhca_cmd_reg_mr *cmd,
		      u32 *index);
int qhca_admin_dereg_mr(struct qhca_dev *dev, u32 index);
int qhca_admin_rereg_mr(struct qhca_dev *dev,
			const struct qhca_cmd_rereg_mr *cmd);
int qhca_admin_create_cq(struct qhca_dev *dev,
			 const struct qhca_cmd_create_cq *cmd, u32 *cqn);
int qhca_admin_destroy_cq(struct qhca_dev *dev, u32 cqn);
int qhca_admin_resize_cq(struct qhca_dev *dev,
			 const struct qhca_cmd_resize_cq *cmd);
int qhca_admin_create_qp(struct qhca_dev *dev,
			 const struct qhca_cmd_create_qp *cmd, u32 *qpn);
int qhca_admin_modify_qp(struct qhca_dev *dev,
			 const struct qhca_cmd_modify_qp *cmd);
int qhca_admin_query_qp(struct qhca_dev *dev, u32 qpn,
			struct qhca_qp_attr *attr);
int qhca_admin_destroy_qp(struct qhca_dev *dev, u32 qpn);
int qhca_admin_query_counters(struct qhca_dev *dev,
			      struct qhca_counters *counters);
int qhca_admin_create_srq(struct qhca_dev *dev,
			  const struct qhca_cmd_create_srq *cmd, u32 *srqn);
int qhca_admin_modify_srq(struct qhca_dev *dev,
			  const struct qhca_cmd_modify_srq *cmd);
int qhca_admin_query_srq(struct qhca_dev *dev, u32 srqn,
			 struct qhca_srq_attr *attr);
int qhca_admin_destroy_srq(struct qhca_dev *dev, u32 srqn);
int qhca_admin_alloc_mw(struct qhca_dev *dev, u32 pdn, u8 type, u32 *index);
int qhca_admin_dealloc_mw(struct qhca_dev *dev, u32 index);
int qhca_admin_attach_mcast(struct qhca_dev *dev, u32 qpn,
			    const union ib_gid *mgid, u16 mlid);
int qhca_admin_detach_mcast(struct qhca_dev *dev, u32 qpn,
			    const union ib_gid *mgid, u16 mlid);
int qhca_admin_inject_fault(struct qhca_dev *dev, u16 type, u32 handle);
int qhca_admin_set_gid(struct qhca_dev *dev, u16 index, u8 type,
		       const union ib_gid *gid);
int qhca_admin_set_qp_av(struct qhca_dev *dev,
			 const struct qhca_cmd_set_qp_av *cmd);
int qhca_admin_odp_map(struct qhca_dev *dev, u32 index, u64 first_page,
		       dma_addr_t pbl, u32 npages);
int qhca_admin_odp_unmap(struct qhca_dev *dev, u32 index, u64 first_page,
			 u64 npages);
int qhca_admin_query_page_fault(struct qhca_dev *dev, u32 qpn,
				struct qhca_page_fault_info *info);
int qhca_admin_resume_page_fault(struct qhca_dev *dev, u32 qpn, u8 kind,
				 u8 status);

/* qhca_recovery.c: a device that stopped answering. */
void qhca_dev_fatal(struct qhca_dev *dev);
bool qhca_destroyed(struct qhca_dev *dev, int err, const char *cmd,
		    u32 handle);

/* qhca_eq.c: the async and the completion event queues. */
int qhca_eqs_create(struct qhca_dev *dev, u32 num_ceqs);
void qhca_eqs_sync(struct qhca_dev *dev);
void qhca_eqs_stop(struct qhca_dev *dev);
void qhca_eqs_free(struct qhca_dev *dev);

/* qhca_uar.c: the kernel's doorbell page. */
void qhca_kuar_init(struct qhca_dev *dev);
int qhca_kuar_get(struct qhca_dev *dev);
void qhca_kuar_put(struct qhca_dev *dev);

/* qhca_buf.c: DMA-coherent queue memory. */
int qhca_dma_buf_alloc(struct qhca_dev *dev, struct qhca_dma_buf *buf,
		       size_t size);
void qhca_dma_buf_free(struct qhca_dev *dev, struct qhca_dma_buf *buf);

/* qhca_mmap.c: what user space maps, the mmap and mmap_free ops. */
struct rdma_user_mmap_entry *
qhca_mmap_insert_db_page(struct qhca_dev *dev, struct ib_ucontext *uctx,
			 u32 uar_index);
struct rdma_user_mmap_entry *
qhca_mmap_insert_ring(struct qhca_dev *dev, struct ib_ucontext *uctx,
		      struct qhca_dma_buf *buf);
void qhca_mmap_remove_ring(struct rdma_user_mmap_entry *rdma_entry,
			   bool device_done);
int qhca_mmap(struct ib_ucontext *ibuctx, struct vm_area_struct *vma);
void qhca_mmap_free(struct rdma_user_mmap_entry *rdma_entry);

/* qhca_mr.c: memory regions. */
int qhca_mr_reg_phys(struct qhca_dev *dev, u32 pdn, int access, u32 *index,
		     u32 *key);
struct ib_mr *qhca_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *qhca_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 virt_addr, int access,
			       struct ib_udata *udata);
int qhca_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
struct ib_mr *qhca_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				 u64 length, u64 virt_addr, int access,
				 struct ib_pd *pd, struct ib_udata *udata);
struct ib_mr *qhca_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			    u32 max_num_sg);
struct ib_mr *qhca_reg_user_mr_dmabuf(struct ib_pd *ibpd, u64 offset,
				      u64 length, u64 virt_addr, int fd,
				      int access, struct ib_udata *udata);
int qhca_mr_check_access(struct qhca_dev *dev, int access);
int qhca_mr_check_user(struct qhca_dev *dev, u64 length, int access,
		       struct ib_udata *udata);
int qhca_mr_reg_cmd(struct qhca_dev *dev, struct qhca_cmd_reg_mr *cmd,
		    u32 *index, u32 *key);
u8 qhca_access_to_hw(int access);
int qhca_access_from_hw(u8 hw);
int qhca_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		   unsigned int *sg_offset);

/* qhca_odp.c: on-demand paging (1.8). */
struct ib_mr *qhca_odp_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				   u64 iova, int access,
				   struct ib_udata *udata);
int qhca_odp_dereg_mr(struct qhca_mr *mr);
void qhca_odp_fault_event(struct qhca_dev *dev, u32 qpn);
void qhca_odp_set_ops(struct qhca_dev *dev);
void qhca_odp_query_device(struct qhca_dev *dev, struct ib_device_attr *props);
int qhca_odp_init(struct qhca_dev *dev);
void qhca_odp_stop(struct qhca_dev *dev);
void qhca_odp_free(struct qhca_dev *dev);

/* qhca_dm.c: device memory (1.7). */
int qhca_dm_init(struct qhca_dev *dev, phys_addr_t bar_start,
		 resource_size_t bar_len);
void qhca_dm_cleanup(struct qhca_dev *dev);
u64 qhca_dm_size(const struct qhca_dev *dev);
u32 qhca_dm_used(struct qhca_dev *dev);
void qhca_dm_set_ops(struct qhca_dev *dev);
/* qhca_verbs.c: QUERY_CONTEXT's and the PD's driver attributes, methods */
extern const struct uapi_definition qhca_import_defs[];
void qhca_dm_mmap_free(struct qhca_dev *dev,
		       struct qhca_user_mmap_entry *entry);

/* qhca_mw.c */
void qhca_mw_set_ops(struct qhca_dev *dev);

/* qhca_cq.c: completion queues. */
int qhca_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   struct uverbs_attr_bundle *attrs);
int qhca_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int qhca_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
int qhca_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);
int qhca_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
void qhca_cq_handle_event(struct qhca_dev *dev, u32 cqn, u8 type);
/* The ring and doorbells of kernel CQs, the NIC's too (qhca_netdev.c). */
ssize_t qhca_cq_buf_alloc(struct qhca_dev *dev, struct qhca_dma_buf *buf,
			  u32 depth);
int qhca_cq_hw_create(struct qhca_dev *dev, const struct qhca_dma_buf *buf,
		      u32 depth, u32 eqn, u32 uar, u32 *cqn, bool *device_done);
struct qhca_cqe *qhca_cqe_next(struct qhca_cqe *ring, u32 depth, u32 cons);
void qhca_cq_consumed(__le32 *dbrec, u32 cons);
void qhca_cq_arm_db(void __iomem *db, u32 off, u32 cqn, u32 cons);

/* qhca_qp.c: queue pairs. */
/* qhca_ah.c */
int qhca_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		   struct ib_udata *udata);
int qhca_destroy_ah(struct ib_ah *ibah, u32 flags);
int qhca_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int qhca_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
void qhca_ah_to_wqe(const struct qhca_ah *ah, struct qhca_sq_wqe_ud *wqe);

int qhca_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init_attr,
		   struct ib_udata *udata);
int qhca_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_udata *udata);
int qhca_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_qp_init_attr *init_attr);
int qhca_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
void qhca_qp_handle_event(struct qhca_dev *dev, u32 qpn, u8 type);

/* qhca_xrc.c: XRC domains and TGT QPs. */
int qhca_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata);
int qhca_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata);
int qhca_create_xrc_tgt_qp(struct qhca_dev *dev, struct qhca_qp *qp,
			   struct ib_qp_init_attr *init_attr);

/* qhca_srq.c: shared receive queues. */
int qhca_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init_attr,
		    struct ib_udata *udata);
int qhca_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		    enum ib_srq_attr_mask mask, struct ib_udata *udata);
int qhca_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int qhca_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int qhca_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr);
void qhca_srq_retire(struct qhca_srq *srq, u16 wqe_idx);
void qhca_srq_retire_orphan(struct qhca_dev *dev, u16 srqn, u16 wqe_idx);
void qhca_srq_handle_event(struct qhca_dev *dev, u32 srqn, u8 type);

/* qhca_wr.c: kernel consumers' work requests. */
int qhca_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		   const struct ib_send_wr **bad_wr);
int qhca_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		   const struct ib_recv_wr **bad_wr);
void qhca_wq_retire(struct qhca_wq *wq, u16 wqe_idx);
/* The rings and doorbells of kernel QPs, the NIC's too (qhca_netdev.c). */
void *qhca_wq_wqe(struct qhca_wq *wq, u32 idx);
u32 qhca_wq_done(const struct qhca_wq *wq, u32 tail, u16 wqe_idx);
void qhca_wq_ring_db(const struct qhca_wq *wq, void __iomem *db, u32 off,
		     u32 qpn);
void qhca_wqe_sge(struct qhca_sge *sge, u64 addr, u32 length, u32 lkey);

/* qhca_stats.c: the port's hw counters. */
struct rdma_hw_stats *qhca_alloc_hw_port_stats(struct ib_device *ibdev,
					       u32 port_num);
int qhca_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		      u32 port_num, int index);

/*
 * qhca_netdev.c (1.5): the Ethernet NIC of an Ethernet port.  Its
 * net_device is the function's, across resets (struct qhca_pci): up on a
 * device after the event queues and before the ib_device is registered;
 * down after it is unregistered; removed when the driver unbinds.  The
 * EQ handlers give it the port's link events and the completion events of
 * its own CQs (true: the CQ was the NIC's).
 */
struct qhca_pci;
int qhca_eth_up(struct qhca_dev *dev);
void qhca_eth_down(struct qhca_dev *dev);
void qhca_eth_remove(struct qhca_pci *qpci);
void qhca_eth_port_event(struct qhca_dev *dev, bool active);
bool qhca_eth_cq_event(struct qhca_dev *dev, u32 cqn, u8 type);

/* qhca_roce.c: the ib_device of an Ethernet port, a RoCEv2 device. */
void qhca_roce_query_port(struct qhca_dev *dev,
			  const struct qhca_port_attr *a,
			  struct ib_port_attr *props);
void qhca_roce_port_immutable(struct ib_port_immutable *immutable);
void qhca_roce_set_ops(struct qhca_dev *dev);
int qhca_roce_check_grh(const struct rdma_ah_attr *ah);
int qhca_roce_qp_av(struct qhca_qp *qp, const struct rdma_ah_attr *ah,
		    struct qhca_cmd_set_qp_av *cmd);
void qhca_roce_qp_av_to_attr(const struct qhca_qp *qp,
			     struct rdma_ah_attr *ah);

/* qhca_verbs.c: the ib_device. */
int qhca_ib_register(struct qhca_dev *dev);
void qhca_ib_unregister(struct qhca_dev *dev);

/* qhca_sysfs.c: the hw_objects attribute group. */
extern const struct attribute_group qhca_hw_objects_group;

/* qhca_restrack.c: the device's numbers in rdma res. */
int qhca_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq);
int qhca_fill_res_srq_entry(struct sk_buff *msg, struct ib_srq *ibsrq);

/* qhca_debugfs.c: the fault injection file. */
void qhca_debugfs_init(void);
void qhca_debugfs_exit(void);
void qhca_debugfs_add_dev(struct qhca_dev *dev);
void qhca_debugfs_remove_dev(struct qhca_dev *dev);

#include "qhca_compat.h"

#endif /* QHCA_H */
