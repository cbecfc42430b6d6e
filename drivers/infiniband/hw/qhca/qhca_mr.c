// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * qhca memory regions.  A user MR is pinned with ib_umem and described to
 * the device by a page list, which the device copies at registration: the
 * list is freed right after REG_MR.  A dma-buf MR is the same with the
 * pages of a dma-buf's sg table.  The DMA MR of kernel consumers has no
 * list; its addresses are bus addresses.
 */

#include <linux/bitfield.h>
#include <linux/slab.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/iter.h>

#include "qhca.h"

/* The device takes ib_access_flags values as they are. */
static_assert(QHCA_ACCESS_LOCAL_WRITE == IB_ACCESS_LOCAL_WRITE);
static_assert(QHCA_ACCESS_REMOTE_WRITE == IB_ACCESS_REMOTE_WRITE);
static_assert(QHCA_ACCESS_REMOTE_READ == IB_ACCESS_REMOTE_READ);
static_assert(QHCA_ACCESS_REMOTE_ATOMIC == IB_ACCESS_REMOTE_ATOMIC);

/* An indirect page list page: 512 addresses in 4 KiB. */
#define QHCA_PBL_PAGE_SIZE	(QHCA_PBL_ENTRIES_PER_PAGE * sizeof(__le64))
static_assert(QHCA_PBL_PAGE_SIZE == PAGE_SIZE);

/* The page list of one registration. */
struct qhca_pbl {
	struct qhca_dma_buf top;	/* what pbl_addr points to */
	struct qhca_dma_buf *leaves;	/* PBL_INDIRECT: the address pages */
	u32 num_leaves;
	u8 flags;			/* QHCA_MR_F_PBL_INDIRECT or 0 */
};

/**
 * qhca_access_to_hw - the device's access bits of checked ib_access_flags
 * @access: IB_ACCESS_* flags, every one of them known to the device
 *
 * The low five bits are the same; the FLUSH ones (1.6) are not.
 */
u8 qhca_access_to_hw(int access)
{
	u8 hw = access & QHCA_ACCESS_MR_ALL;

	if (access & IB_ACCESS_FLUSH_GLOBAL)
		hw |= QHCA_ACCESS_FLUSH_GLOBAL;
	if (access & IB_ACCESS_FLUSH_PERSISTENT)
		hw |= QHCA_ACCESS_FLUSH_PERSISTENT;
	return hw;
}

/**
 * qhca_access_from_hw - ib_access_flags of the device's access bits
 * @hw: QHCA_ACCESS_* bits
 */
int qhca_access_from_hw(u8 hw)
{
	int access = hw & QHCA_ACCESS_MR_ALL;

	if (hw & QHCA_ACCESS_FLUSH_GLOBAL)
		access |= IB_ACCESS_FLUSH_GLOBAL;
	if (hw & QHCA_ACCESS_FLUSH_PERSISTENT)
		access |= IB_ACCESS_FLUSH_PERSISTENT;
	return access;
}

int qhca_mr_check_access(struct qhca_dev *dev, int access)
{
	u32 caps = le32_to_cpu(dev->attr.device_cap_flags);
	int known = QHCA_ACCESS_ALL | IB_ACCESS_OPTIONAL;

	/* Windows may be bound to an MR only where the device has them. */
	if (caps & QHCA_DEV_CAP_MW)
		known |= IB_ACCESS_MW_BIND;
	/*
	 * FLUSHes of placement type GLOBAL may reach it; guest RAM has no
	 * persistence domain, so FLUSH_PERSISTENT is never known (the core
	 * refuses it first: no IB_DEVICE_FLUSH_PERSISTENT).
	 */
	if (caps & QHCA_DEV_CAP_FLUSH)
		known |= IB_ACCESS_FLUSH_GLOBAL;
	/* The optional flags are hints a device may ignore; qhca does. */
	if (access & ~known)
		return -EOPNOTSUPP;
	/* Remote writes and atomics change memory: it must be writable. */
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IB_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	return 0;
}

/* The page sizes both the device and the command can express. */
static unsigned long qhca_mr_pgsz_bitmap(struct qhca_dev *dev)
{
	return le64_to_cpu(dev->attr.page_size_cap) &
	       GENMASK_ULL(QHCA_MR_MAX_PAGE_SHIFT, QHCA_MR_MIN_PAGE_SHIFT);
}

static void qhca_pbl_free(struct qhca_dev *dev, struct qhca_pbl *pbl)
{
	u32 i;

	if (pbl->leaves) {
		for (i = 0; i < pbl->num_leaves; i++)
			qhca_dma_buf_free(dev, &pbl->leaves[i]);
		kfree(pbl->leaves);
	}
	qhca_dma_buf_free(dev, &pbl->top);
}

/*
 * The list of the @npages blocks of @pgsz that @umem covers: direct while
 * it fits one page of entries, else a list of pages of entries.
 */
static int qhca_pbl_build(struct qhca_dev *dev, struct ib_umem *umem,
			  unsigned long pgsz, u32 npages, struct qhca_pbl *pbl)
{
	struct ib_block_iter biter;
	__le64 *entries;
	u32 i = 0;
	int err;

	memset(pbl, 0, sizeof(*pbl));
	if (npages > QHCA_PBL_ENTRIES_PER_PAGE) {
		pbl->flags = QHCA_MR_F_PBL_INDIRECT;
		pbl->num_leaves = DIV_ROUND_UP(npages,
					       QHCA_PBL_ENTRIES_PER_PAGE);
		pbl->leaves = kcalloc(pbl->num_leaves, sizeof(*pbl->leaves),
				      GFP_KERNEL);
		if (!pbl->leaves)
			return -ENOMEM;
	}

	err = qhca_dma_buf_alloc(dev, &pbl->top,
				 (pbl->leaves ? pbl->num_leaves : npages) *
				 sizeof(__le64));
	if (err)
		goto err_free;
	entries = pbl->top.va;
	for (i = 0; i < pbl->num_leaves; i++) {
		err = qhca_dma_buf_alloc(dev, &pbl->leaves[i],
					 QHCA_PBL_PAGE_SIZE);
		if (err)
			goto err_free;
		entries[i] = cpu_to_le64(pbl->leaves[i].dma);
	}

	i = 0;
	rdma_umem_for_each_dma_block(umem, &biter, pgsz) {
		if (pbl->leaves)
			entries = pbl->leaves[i / QHCA_PBL_ENTRIES_PER_PAGE].va;
		entries[i % QHCA_PBL_ENTRIES_PER_PAGE] =
			cpu_to_le64(rdma_block_iter_dma_address(&biter));
		i++;
	}
	return 0;

err_free:
	qhca_pbl_free(dev, pbl);
	return err;
}

/* REG_MR with a fresh key; returns the index and the key, lkey and rkey. */
int qhca_mr_reg_cmd(struct qhca_dev *dev, struct qhca_cmd_reg_mr *cmd,
		    u32 *index, u32 *key)
{
	int err;

	/*
	 * A key byte that changes with every registration: a stale key of
	 * a reused index no longer matches.
	 */
	cmd->key = (u8)atomic_inc_return(&dev->mr_key);
	err = qhca_admin_reg_mr(dev, cmd, index);
	if (err)
		return err;
	if (*index > FIELD_MAX(QHCA_MKEY_INDEX)) {
		dev_err(&dev->pdev->dev, "device returned MR index %u\n",
			*index);
		qhca_admin_dereg_mr(dev, *index);
		return -EIO;
	}
	*key = FIELD_PREP(QHCA_MKEY_INDEX, *index) |
	       FIELD_PREP(QHCA_MKEY_KEY, cmd->key);
	return 0;
}

/* REG_MR into @mr: its index and keys. */
static int qhca_mr_register(struct qhca_dev *dev, struct qhca_mr *mr,
			    struct qhca_cmd_reg_mr *cmd)
{
	int err;

	err = qhca_mr_reg_cmd(dev, cmd, &mr->index, &mr->ibmr.lkey);
	if (!err)
		mr->ibmr.rkey = mr->ibmr.lkey;
	return err;
}

/**
 * qhca_mr_reg_phys - an MR over all of memory, by bus address
 * @dev: the device
 * @pdn: its PD
 * @access: QHCA_ACCESS_* flags
 * @index: filled in: the MR's index, for DEREG_MR
 * @key: filled in: its key, lkey and rkey alike
 *
 * iova 0: an SGE's address is the bus address itself.  The DMA MR of
 * kernel consumers, and the MR of the NIC's buffers (qhca_netdev.c).
 */
int qhca_mr_reg_phys(struct qhca_dev *dev, u32 pdn, int access, u32 *index,
		     u32 *key)
{
	struct qhca_cmd_reg_mr cmd = {};

	cmd.length = dev->attr.max_mr_size;
	cmd.pdn = cpu_to_le32(pdn);
	cmd.access = qhca_access_to_hw(access);
	cmd.page_shift = QHCA_MR_MIN_PAGE_SHIFT;
	cmd.flags = QHCA_MR_F_PHYS;
	return qhca_mr_reg_cmd(dev, &cmd, index, key);
}

/* Kernel consumers' MR over all of memory, by bus address. */
struct ib_mr *qhca_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct qhca_dev *dev = to_qdev(ibpd->device);
	struct qhca_mr *mr;
	int err;

	err = qhca_mr_check_access(dev, access);
	if (err)
		return ERR_PTR(err);

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);

	err = qhca_mr_reg_phys(dev, to_qpd(ibpd)->pdn, access, &mr->index,
			       &mr->ibmr.lkey);
	if (err) {
		kfree(mr);
		return ERR_PTR(err);
	}
	mr->ibmr.rkey = mr->ibmr.lkey;
	return &mr->ibmr;
}

/*
 * The page list of the largest page size that maps iova @virt_addr and
 * @umem's pages alike: the translation fields of REG_MR or REREG_MR.
 * The pages may be user memory or a dma-buf's: only their DMA addresses
 * count.
 */
static int qhca_mr_umem_pbl(struct qhca_dev *dev, struct ib_umem *umem,
			    u64 virt_addr, struct qhca_pbl *pbl, u32 *npages,
			    u8 *page_shift)
{
	unsigned long pgsz;
	size_t n;
	int err;

	pgsz = ib_umem_find_best_pgsz(umem, qhca_mr_pgsz_bitmap(dev),
				      virt_addr);
	n = pgsz ? ib_umem_num_dma_blocks(umem, pgsz) : 0;
	if (!pgsz || n > U32_MAX)
		return -EINVAL;
	err = qhca_pbl_build(dev, umem, pgsz, n, pbl);
	if (err)
		return err;
	*npages = n;
	*page_shift = __ffs(pgsz);
	return 0;
}

/* A registration's length: one the device can take. */
static int qhca_mr_check_length(struct qhca_dev *dev, u64 length)
{
	if (!length || length > le64_to_cpu(dev->attr.max_mr_size))
		return -EINVAL;
	return 0;
}

/*
 * Pin [start, start + length) of the caller for iova @virt_addr and build
 * its page list: the umem and the translation fields of REREG_MR.
 */
static struct ib_umem *qhca_mr_pin(struct qhca_dev *dev, u64 start,
				   u64 length, u64 virt_addr, int access,
				   struct qhca_pbl *pbl, u32 *npages,
				   u8 *page_shift)
{
	struct ib_umem *umem;
	int err;

	err = qhca_mr_check_length(dev, length);
	if (err)
		return ERR_PTR(err);
	umem = ib_umem_get(&dev->ibdev, start, length, access);
	if (IS_ERR(umem))
		return umem;
	err = qhca_mr_umem_pbl(dev, umem, virt_addr, pbl, npages, page_shift);
	if (err) {
		ib_umem_release(umem);
		return ERR_PTR(err);
	}
	return umem;
}

/* What REG_MR of user space checks before it pins anything. */
int qhca_mr_check_user(struct qhca_dev *dev, u64 length, int access,
		       struct ib_udata *udata)
{
	int err;

	/* No driver data is defined for this command in either direction. */
	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	err = qhca_mr_check_access(dev, access);
	if (err)
		return err;
	return qhca_mr_check_length(dev, length);
}

/*
 * REG_MR of the pinned @umem for iova @virt_addr: a new MR, which owns
 * @umem from here (released here on error, else at dereg).
 */
static struct ib_mr *qhca_mr_reg_umem(struct ib_pd *ibpd,
				      struct ib_umem *umem, u64 virt_addr,
				      int access)
{
	struct qhca_dev *dev = to_qdev(ibpd->device);
	struct qhca_cmd_reg_mr cmd = {};
	struct qhca_pbl pbl;
	struct qhca_mr *mr;
	u8 page_shift;
	u32 npages;
	int err;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr) {
		err = -ENOMEM;
		goto err_release;
	}
	mr->access = access;
	mr->umem = umem;
	err = qhca_mr_umem_pbl(dev, umem, virt_addr, &pbl, &npages,
			       &page_shift);
	if (err)
		goto err_free;

	cmd.iova = cpu_to_le64(virt_addr);
	cmd.length = cpu_to_le64(umem->length);
	cmd.pbl_addr = cpu_to_le64(pbl.top.dma);
	cmd.pdn = cpu_to_le32(to_qpd(ibpd)->pdn);
	cmd.npages = cpu_to_le32(npages);
	cmd.access = qhca_access_to_hw(access);
	cmd.page_shift = page_shift;
	cmd.flags = pbl.flags;
	err = qhca_mr_register(dev, mr, &cmd);
	/* The device copied the list: it is not needed any more. */
	qhca_pbl_free(dev, &pbl);
	if (err)
		goto err_free;
	return &mr->ibmr;

err_free:
	kfree(mr);
err_release:
	ib_umem_release(umem);
	return ERR_PTR(err);
}

struct ib_mr *qhca_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 virt_addr, int access,
			       struct ib_udata *udata)
{
	struct qhca_dev *dev = to_qdev(ibpd->device);
	struct ib_umem *umem;
	int err;

	/* Nothing pinned: the pages come on demand (qhca_odp.c). */
	if (access & IB_ACCESS_ON_DEMAND)
		return qhca_odp_reg_user_mr(ibpd, start, length, virt_addr,
					    access, udata);
	err = qhca_mr_check_user(dev, length, access, udata);
	if (err)
		return ERR_PTR(err);
	umem = ib_umem_get(&dev->ibdev, start, length, access);
	if (IS_ERR(umem))
		return ERR_CAST(umem);
	return qhca_mr_reg_umem(ibpd, umem, virt_addr, access);
}

/*
 * ibv_rereg_mr(): REREG_MR changes the MR in place, keys included (NULL:
 * ib_core keeps this ib_mr).  A new translation is pinned first and the
 * old pages are let go only once the device has taken the new ones; any
 * error leaves the old registration as it was.  An MR a window is bound
 * to is refused by the device: -EBUSY.
 */
struct ib_mr *qhca_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				 u64 length, u64 virt_addr, int access,
				 struct ib_pd *pd, struct ib_udata *udata)
{
	struct qhca_dev *dev = to_qdev(ibmr->device);
	struct qhca_mr *mr = to_qmr(ibmr);
	struct qhca_cmd_rereg_mr cmd = {};
	struct ib_umem *umem = NULL;
	int new_access = mr->access;
	struct qhca_pbl pbl;
	u32 npages;
	u8 shift;
	int err;

	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return ERR_PTR(-EINVAL);
	if (!(le32_to_cpu(dev->attr.device_cap_flags) & QHCA_DEV_CAP_REREG_MR))
		return ERR_PTR(-EOPNOTSUPP);
	/* The device refuses REREG_MR of an ODP MR. */
	if (mr->odp)
		return ERR_PTR(-EOPNOTSUPP);
	if (flags & ~IB_MR_REREG_SUPPORTED || !mr->umem)
		return ERR_PTR(-EINVAL);
	/* A dma-buf MR's pages are the buffer's: no user range to take. */
	if ((flags & IB_MR_REREG_TRANS) && mr->umem->is_dmabuf)
		return ERR_PTR(-EOPNOTSUPP);
	/*
	 * ib_core refuses a rereg of no flags; the PD flag with the MR's
	 * own PD reaches us without it (seen on 6.12): nothing changes.
	 */
	if (!flags)
		return NULL;

	cmd.index = cpu_to_le32(mr->index);
	if (flags & IB_MR_REREG_ACCESS) {
		err = qhca_mr_check_access(dev, access);
		if (err)
			return ERR_PTR(err);
		new_access = access;
		cmd.mask |= QHCA_REREG_ACCESS;
		cmd.access = qhca_access_to_hw(access);
	}
	if (flags & IB_MR_REREG_PD) {
		cmd.mask |= QHCA_REREG_PD;
		cmd.pdn = cpu_to_le32(to_qpd(pd)->pdn);
	}
	/*
	 * Pages pinned read-only cannot take writes: pin them again.  A
	 * dma-buf is always mapped for both directions: nothing to redo.
	 */
	if (!(flags & IB_MR_REREG_TRANS) && ib_access_writable(new_access) &&
	    !mr->umem->writable && !mr->umem->is_dmabuf) {
		flags |= IB_MR_REREG_TRANS;
		start = mr->umem->address;
		length = mr->umem->length;
		virt_addr = ibmr->iova;
	}
	if (flags & IB_MR_REREG_TRANS) {
		umem = qhca_mr_pin(dev, start, length, virt_addr, new_access,
				   &pbl, &npages, &shift);
		if (IS_ERR(umem))
			return ERR_CAST(umem);
		cmd.mask |= QHCA_REREG_TRANSLATION;
		cmd.iova = cpu_to_le64(virt_addr);
		cmd.length = cpu_to_le64(length);
		cmd.pbl_addr = cpu_to_le64(pbl.top.dma);
		cmd.npages = cpu_to_le32(npages);
		cmd.page_shift = shift;
		cmd.flags = pbl.flags;
	}

	err = qhca_admin_rereg_mr(dev, &cmd);
	if (umem) {
		/* The device copied the list: it is not needed any more. */
		qhca_pbl_free(dev, &pbl);
		if (err) {
			ib_umem_release(umem);
		} else {
			ib_umem_release(mr->umem);
			mr->umem = umem;
		}
	}
	if (err)
		return ERR_PTR(err);
	mr->access = new_access;
	return NULL;
}

int qhca_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct qhca_dev *dev = to_qdev(ibmr->device);
	struct qhca_mr *mr = to_qmr(ibmr);
	int err;

	if (mr->odp)
		return qhca_odp_dereg_mr(mr);
	err = qhca_admin_dereg_mr(dev, mr->index);
	/* Windows are bound to it: it stays until they are gone. */
	if (err == -EBUSY)
		return err;
	/*
	 * ib_core cannot keep an MR it asked to free.  If the device may
	 * still access the pages, they stay pinned for good.
	 */
	if (qhca_destroyed(dev, err, "DEREG_MR", mr->index)) {
		ib_umem_release(mr->umem);
		qhca_dma_buf_free(dev, &mr->pl);
	}
	kfree(mr);
	return 0;
}

/*
 * A fast-registration MR for kernel consumers: the device holds room for
 * max_num_sg pages and the MR is invalid until a REG_MR WQE maps it.
 */
struct ib_mr *qhca_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			    u32 max_num_sg)
{
	struct qhca_dev *dev = to_qdev(ibpd->device);
	struct qhca_cmd_reg_mr cmd = {};
	struct qhca_mr *mr;
	int err;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > QHCA_FAST_REG_MAX_PAGES)
		return ERR_PTR(-EINVAL);

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	err = qhca_dma_buf_alloc(dev, &mr->pl, max_num_sg * sizeof(__le64));
	if (err)
		goto err_free;
	mr->max_pages = max_num_sg;

	cmd.pdn = cpu_to_le32(to_qpd(ibpd)->pdn);
	cmd.npages = cpu_to_le32(max_num_sg);
	cmd.flags = QHCA_MR_F_FAST_REG;
	err = qhca_mr_register(dev, mr, &cmd);
	if (err)
		goto err_buf;
	return &mr->ibmr;

err_buf:
	qhca_dma_buf_free(dev, &mr->pl);
err_free:
	kfree(mr);
	return ERR_PTR(err);
}

static int qhca_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct qhca_mr *mr = to_qmr(ibmr);
	__le64 *pages = mr->pl.va;

	if (mr->npages == mr->max_pages)
		return -ENOMEM;
	pages[mr->npages++] = cpu_to_le64(addr);
	return 0;
}

int qhca_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		   unsigned int *sg_offset)
{
	struct qhca_mr *mr = to_qmr(ibmr);

	/* The device takes page sizes of 2^12 .. 2^30 only. */
	if (ibmr->page_size < BIT(QHCA_MR_MIN_PAGE_SHIFT) ||
	    ibmr->page_size > BIT(QHCA_MR_MAX_PAGE_SHIFT))
		return -EINVAL;
	mr->npages = 0;
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, qhca_set_page);
}

/* ---- dma-buf memory regions ---------------------------------------- */

/**
 * qhca_reg_user_mr_dmabuf - ibv_reg_dmabuf_mr(): an MR over a dma-buf
 * @ibpd: its PD
 * @offset: where in the dma-buf the MR starts
 * @length: its length
 * @virt_addr: the iova of its first byte
 * @fd: the dma-buf
 * @access: IB_ACCESS_* flags
 * @udata: the driver data of the command (none is defined)
 *
 * The dma-buf is attached, pinned and mapped for good (until dereg):
 * the device keeps the page list REG_MR gave it and has no way to take
 * faults, so qhca cannot follow an exporter that moves the buffer
 * (move_notify, as ODP-style drivers do).  The umem holds a reference
 * to the dma-buf: closing its fd leaves the MR valid.
 */
struct ib_mr *qhca_reg_user_mr_dmabuf(struct ib_pd *ibpd, u64 offset,
				      u64 length, u64 virt_addr, int fd,
				      int access, struct ib_udata *udata)
{
	struct qhca_dev *dev = to_qdev(ibpd->device);
	struct ib_umem_dmabuf *umem_dmabuf;
	int err;

	err = qhca_mr_check_user(dev, length, access, udata);
	if (err)
		return ERR_PTR(err);
	/* A bad fd, a range past the buffer's end: ib_core's errno. */
	umem_dmabuf = ib_umem_dmabuf_get_pinned(&dev->ibdev, offset, length,
						fd, access);
	if (IS_ERR(umem_dmabuf))
		return ERR_CAST(umem_dmabuf);
	return qhca_mr_reg_umem(ibpd, &umem_dmabuf->umem, virt_addr, access);
}
