/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * qhca_compat.h: the kernel API differences between the kernels qhca.ko
 * builds for, in one place.  The driver is written against one spelling
 * (Linux 6.12's, where the others can be given it); this header gives
 * that spelling on the other kernels, keyed on the kernel's version, and
 * says what qhca does where a kernel lacks a feature.  Built and run on
 * Debian's 6.1 (bookworm), 6.12 and the newest Debian offers (7.3); the
 * version each change arrived in is upstream's.
 *
 * On 6.1 (before 6.2), the verbs have no FLUSH and no ATOMIC_WRITE: no
 * work request or completion opcode, no MR access flag, no device
 * capability bit (nor uverbs ones: ib_check_mr_access() refuses the FLUSH
 * access flags a user space MR asks for).  So qhca offers neither there:
 * query_device reports no IB_DEVICE_FLUSH_GLOBAL or IB_DEVICE_ATOMIC_WRITE
 * and an MR or QP can never carry the FLUSH access bits.  Everything else
 * the device has is offered on every kernel alike.
 */
#ifndef QHCA_COMPAT_H
#define QHCA_COMPAT_H

#include <linux/version.h>
#include <net/netdev_queues.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "qhca_hw.h"

/*
 * Whether the kernel built for is older than @major.@minor.  Spelled with
 * the version's parts: checkpatch refuses the LINUX_VERSION_CODE spelling
 * anywhere, as code merged upstream has no business asking; this header
 * is the one place out-of-tree qhca does.
 */
#define QHCA_LINUX_BEFORE(major, minor) \
	(KERNEL_VERSION(LINUX_VERSION_MAJOR, LINUX_VERSION_PATCHLEVEL, 0) < \
	 KERNEL_VERSION(major, minor, 0))

#if QHCA_LINUX_BEFORE(6, 2)
/* The access and capability flags as none: nothing asks for them. */
#define IB_ACCESS_FLUSH_GLOBAL		0
#define IB_ACCESS_FLUSH_PERSISTENT	0
#define IB_DEVICE_FLUSH_GLOBAL		0
#define IB_DEVICE_ATOMIC_WRITE		0
/*
 * The send opcodes 6.2 gave the numbers the device has: FLUSH stays
 * refused at post (qhca_wr_check()); no 6.1 consumer can name the other.
 */
#define IB_WR_FLUSH			((int)QHCA_WR_FLUSH)
#define IB_WR_ATOMIC_WRITE		((int)QHCA_WR_ATOMIC_WRITE)

/*
 * 6.1's IB_WC_REG_MR is 8, where 6.2 put IB_WC_FLUSH before moving it to
 * 10, the device's number.  No FLUSH or ATOMIC_WRITE completion reaches a
 * kernel consumer here (nothing posts them), so REG_MR is the one to map.
 */
static inline enum ib_wc_opcode qhca_wc_opcode(u8 op)
{
	return op == QHCA_WC_REG_MR ? IB_WC_REG_MR : (enum ib_wc_opcode)op;
}

/* No SRQ restrack hook (6.2): rdma res shows an SRQ without qhca's lines. */
#define QHCA_OP_FILL_RES_SRQ_ENTRY
#else
/* The device's completion opcodes are ib_wc_opcode's (interface 1.4). */
static_assert((int)QHCA_WC_REG_MR == (int)IB_WC_REG_MR);
static_assert((int)QHCA_WC_FLUSH == (int)IB_WC_FLUSH);
static_assert((int)QHCA_WC_ATOMIC_WRITE == (int)IB_WC_ATOMIC_WRITE);

static inline enum ib_wc_opcode qhca_wc_opcode(u8 op)
{
	return (enum ib_wc_opcode)op;
}

#define QHCA_OP_FILL_RES_SRQ_ENTRY \
	.fill_res_srq_entry = qhca_fill_res_srq_entry,
#endif

#if QHCA_LINUX_BEFORE(6, 3)
/* vm_flags became read-only behind helpers in 6.3. */
#define vm_flags_clear(vma, flags)	((vma)->vm_flags &= ~(flags))

/*
 * The BQL completion and the wake in one (6.3); 6.1 has the wake half.
 * Both evaluate @get_desc after the completed work is accounted.
 */
#define netif_txq_completed_wake(txq, pkts, bytes, get_desc, start_thrs) \
	({								\
		struct netdev_queue *_txq = (txq);			\
									\
		netdev_tx_completed_queue(_txq, pkts, bytes);		\
		netif_txq_maybe_wake(_txq, get_desc, start_thrs);	\
	})
#endif

#if QHCA_LINUX_BEFORE(6, 8)
/* One ETH_GSTRING_LEN slot of the strings, padded, and the next. */
static inline void ethtool_puts(u8 **data, const char *str)
{
	strscpy_pad(*data, str, ETH_GSTRING_LEN);
	*data += ETH_GSTRING_LEN;
}
#endif

#if QHCA_LINUX_BEFORE(6, 11)
/*
 * The managed single-BAR requests of 6.11.  Before it, a region of a
 * device enabled with pcim_enable_device() is released with the device.
 */
static inline void __iomem *pcim_iomap_region(struct pci_dev *pdev, int bar,
					      const char *name)
{
	int err = pcim_iomap_regions(pdev, BIT(bar), name);

	return err ? IOMEM_ERR_PTR(err) : pcim_iomap_table(pdev)[bar];
}

static inline int pcim_request_region(struct pci_dev *pdev, int bar,
				      const char *name)
{
	return pci_request_region(pdev, bar, name);
}

/*
 * create_cq took the driver's udata until 6.11; ib_uverbs passed the
 * driver_udata of the call's attribute bundle, so the bundle is its
 * container.  Kernel consumers pass NULL.
 */
static inline int qhca_create_cq_udata(struct ib_cq *ibcq,
				       const struct ib_cq_init_attr *attr,
				       struct ib_udata *udata)
{
	return qhca_create_cq(ibcq, attr, udata ?
			      container_of(udata, struct uverbs_attr_bundle,
					   driver_udata) : NULL);
}

#define QHCA_OP_CREATE_CQ	qhca_create_cq_udata
#else
#define QHCA_OP_CREATE_CQ	qhca_create_cq
#endif

#if QHCA_LINUX_BEFORE(6, 12)
/*
 * ib_core keeps the netdev of ib_device_set_netdev() but exports no
 * getter before 6.12: take the driver's own.  It is the NIC's, which
 * outlives the registered ib_device (qhca_eth_down(), qhca_eth_remove()).
 */
static inline struct net_device *
ib_device_get_netdev(struct ib_device *ibdev, u32 port)
{
	struct net_device *ndev =
		container_of(ibdev, struct qhca_dev, ibdev)->netdev;

	dev_hold(ndev);
	return ndev;
}
#endif

/*
 * reg_user_mr_dmabuf took the driver's udata until 6.12, then the call's
 * attribute bundle (its driver_udata is the same data), and from 6.17 a
 * DMA handle too, refused as for reg_user_mr.
 */
#if QHCA_LINUX_BEFORE(6, 12)
#define QHCA_OP_REG_USER_MR_DMABUF	qhca_reg_user_mr_dmabuf
#elif QHCA_LINUX_BEFORE(6, 17)
static inline struct ib_mr *
qhca_reg_user_mr_dmabuf_attrs(struct ib_pd *ibpd, u64 offset, u64 length,
			      u64 virt_addr, int fd, int access,
			      struct uverbs_attr_bundle *attrs)
{
	return qhca_reg_user_mr_dmabuf(ibpd, offset, length, virt_addr, fd,
				       access, &attrs->driver_udata);
}

#define QHCA_OP_REG_USER_MR_DMABUF	qhca_reg_user_mr_dmabuf_attrs
#else
static inline struct ib_mr *
qhca_reg_user_mr_dmabuf_dmah(struct ib_pd *ibpd, u64 offset, u64 length,
			     u64 virt_addr, int fd, int access,
			     struct ib_dmah *dmah,
			     struct uverbs_attr_bundle *attrs)
{
	if (dmah)
		return ERR_PTR(-EOPNOTSUPP);
	return qhca_reg_user_mr_dmabuf(ibpd, offset, length, virt_addr, fd,
				       access, &attrs->driver_udata);
}

#define QHCA_OP_REG_USER_MR_DMABUF	qhca_reg_user_mr_dmabuf_dmah
#endif

#if QHCA_LINUX_BEFORE(6, 17)
#define QHCA_OP_REG_USER_MR	qhca_reg_user_mr
#else
/*
 * reg_user_mr takes a DMA handle (TPH hints) from 6.17.  qhca has no
 * alloc_dmah, so user space can make none to pass: refuse one anyway.
 */
static inline struct ib_mr *
qhca_reg_user_mr_dmah(struct ib_pd *ibpd, u64 start, u64 length,
		      u64 virt_addr, int access, struct ib_dmah *dmah,
		      struct ib_udata *udata)
{
	if (dmah)
		return ERR_PTR(-EOPNOTSUPP);
	return qhca_reg_user_mr(ibpd, start, length, virt_addr, access, udata);
}

#define QHCA_OP_REG_USER_MR	qhca_reg_user_mr_dmah
#endif

/*
 * On-demand paging (interface 1.8) hands the device ib_umem_odp's DMA
 * list entries as they are (address | ODP_READ_ALLOWED_BIT |
 * ODP_WRITE_ALLOWED_BIT), as 6.1 and 6.12 keep them.  7.3's ib_umem_odp
 * keeps an hmm_dma_map instead (upstream 6.16; the releases between are
 * not built here).  There, and without CONFIG_INFINIBAND_ON_DEMAND_PAGING,
 * qhca_odp.c is compiled out: query_device claims no ODP and ib_core
 * refuses IB_ACCESS_ON_DEMAND (EOPNOTSUPP), as before 1.8.
 */
#if QHCA_LINUX_BEFORE(6, 16) && IS_ENABLED(CONFIG_INFINIBAND_ON_DEMAND_PAGING)
#define QHCA_ODP	1
#else
#define QHCA_ODP	0
#endif

/*
 * In 7.2's headers (and 7.3's), not 6.12's; the release between that
 * brought them is not checked.  User CQs are made by create_user_cq
 * (create_cq stays for kernel ones: qhca_create_cq serves both, as it
 * did), only user CQs can be resized (resize_user_cq: ib_resize_cq is
 * gone, so qhca_cq_resize_kernel() has no caller there), and a user
 * buffer is pinned by ib_umem_get_va().
 */
#if QHCA_LINUX_BEFORE(7, 2)
#define QHCA_OP_CREATE_USER_CQ
#define QHCA_OP_RESIZE_CQ \
	.resize_cq = qhca_resize_cq,
#else
static inline int qhca_resize_user_cq(struct ib_cq *ibcq, unsigned int cqe,
				      struct ib_udata *udata)
{
	/* What an int's negative cqe got before: EINVAL. */
	if (cqe > INT_MAX)
		return -EINVAL;
	return qhca_resize_cq(ibcq, cqe, udata);
}

static inline struct ib_umem *ib_umem_get(struct ib_device *device,
					  unsigned long addr, size_t size,
					  int access)
{
	return ib_umem_get_va(device, addr, size, access);
}

#define QHCA_OP_CREATE_USER_CQ \
	.create_user_cq = qhca_create_cq,
#define QHCA_OP_RESIZE_CQ \
	.resize_user_cq = qhca_resize_user_cq,
#endif

#endif /* QHCA_COMPAT_H */
