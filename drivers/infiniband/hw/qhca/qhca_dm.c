// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * qhca device memory (interface 1.7, QHCA_DEV_CAP_DEVICE_MEMORY): BAR 4
 * holds dm_size bytes that the host reads and writes as memory and the
 * device reads and writes for MRs of REG_MR flags DM.  The device keeps no
 * allocations in it: this file hands out pieces of it to user contexts
 * (ibv_alloc_dm), maps them into the process on the context's fd and
 * registers MRs over them (ibv_reg_dm_mr).
 *
 * A piece is always whole pages, although a DM may be of any length: a
 * process maps its pieces, and a page shared by two pieces would show one
 * process the bytes of another.  For the same reason a piece is cleared
 * before it is handed out: the BAR is zero only after a reset.
 *
 * A piece belongs to its mmap entry, not to the DM: it goes back to the
 * pool only once the DM is freed and no mapping of it is left
 * (qhca_dm_mmap_free()), so that a process still mapping a freed DM never
 * sees the next owner's bytes.  An MR keeps its DM alive: ib_core counts
 * the MRs of a DM (ib_dm.usecnt) and refuses to free it while there are.
 */

#include <linux/bitmap.h>
#include <linux/io.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <rdma/uverbs_ioctl.h>
/* The prefix of the names uverbs_named_ioctl.h gives the definitions. */
#define UVERBS_MODULE_NAME qhca_ib
#include <rdma/uverbs_named_ioctl.h>
#include <rdma/uverbs_std_types.h>
#include <uapi/rdma/qhca-abi.h>

#include "qhca.h"

struct qhca_dm {
	struct ib_dm ibdm;
	/* The piece: owned by the entry, which the mappings hold. */
	struct rdma_user_mmap_entry *mmap_entry;
	u64 bar_offset;			/* of the piece's first byte */
};

static inline struct qhca_dm *to_qdm(struct ib_dm *ibdm)
{
	return container_of(ibdm, struct qhca_dm, ibdm);
}

/**
 * qhca_dm_init - the pool of BAR 4's pages, if the device has them
 * @dev: the device, its attributes read
 * @bar_start: BAR 4's bus address; 0 if the function has no BAR 4
 * @bar_len: its length
 *
 * A device that claims device memory it does not describe consistently
 * offers none: it is not worth failing the whole device for.
 */
int qhca_dm_init(struct qhca_dev *dev, phys_addr_t bar_start,
		 resource_size_t bar_len)
{
	struct qhca_dm_pool *pool = &dev->dm;
	u32 size = le32_to_cpu(dev->attr.dm_size);

	memset(pool, 0, sizeof(*pool));
	mutex_init(&pool->lock);
	if (!(le32_to_cpu(dev->attr.device_cap_flags) &
	      QHCA_DEV_CAP_DEVICE_MEMORY))
		return 0;
	if (!bar_start || size < QHCA_DM_MIN_SIZE || size < PAGE_SIZE ||
	    !is_power_of_2(size) || size > bar_len) {
		dev_warn(&dev->pdev->dev,
			 "device memory of %u bytes in a BAR 4 of %llu: not offered\n",
			 size, (unsigned long long)bar_len);
		return 0;
	}
	pool->map = bitmap_zalloc(size >> PAGE_SHIFT, GFP_KERNEL);
	if (!pool->map)
		return -ENOMEM;
	pool->start = bar_start;
	pool->pages = size >> PAGE_SHIFT;
	return 0;
}

/* After the ib_device is gone: its contexts returned every piece. */
void qhca_dm_cleanup(struct qhca_dev *dev)
{
	struct qhca_dm_pool *pool = &dev->dm;

	if (pool->used)
		dev_warn(&dev->pdev->dev,
			 "%u pages of device memory still in use\n",
			 pool->used);
	bitmap_free(pool->map);
	pool->map = NULL;
	pool->pages = 0;
}

/* Bytes of device memory: 0 without it (ib_device_attr.max_dm_size). */
u64 qhca_dm_size(const struct qhca_dev *dev)
{
	return (u64)dev->dm.pages << PAGE_SHIFT;
}

/* Pages handed out, hw_objects/dm_pages: 0 once everything is freed. */
u32 qhca_dm_used(struct qhca_dev *dev)
{
	u32 used;

	mutex_lock(&dev->dm.lock);
	used = dev->dm.used;
	mutex_unlock(&dev->dm.lock);
	return used;
}

/*
 * @npages pages at a multiple of @align pages; the first page's index, or
 * -ENOMEM when no such run is free.
 */
static long qhca_dm_pool_get(struct qhca_dm_pool *pool, u32 npages,
			     u32 align)
{
	unsigned long idx;

	mutex_lock(&pool->lock);
	idx = bitmap_find_next_zero_area(pool->map, pool->pages, 0, npages,
					 align - 1);
	if (idx >= pool->pages) {
		mutex_unlock(&pool->lock);
		return -ENOMEM;
	}
	bitmap_set(pool->map, idx, npages);
	pool->used += npages;
	mutex_unlock(&pool->lock);
	return idx;
}

static void qhca_dm_pool_put(struct qhca_dm_pool *pool, u32 idx, u32 npages)
{
	mutex_lock(&pool->lock);
	bitmap_clear(pool->map, idx, npages);
	pool->used -= npages;
	mutex_unlock(&pool->lock);
}

/*
 * Clear a piece before its new owner can read it.  The driver keeps no
 * mapping of BAR 4: this one lasts as long as the clearing.
 */
static int qhca_dm_clear(phys_addr_t addr, size_t len)
{
	void __iomem *p = ioremap_wc(addr, len);

	if (!p)
		return -ENOMEM;
	memset_io(p, 0, len);
	/* Out of the write-combining buffers before the owner maps it. */
	wmb();
	iounmap(p);
	return 0;
}

/* The pages of a DM's entry: back to the pool (qhca_mmap_free()). */
void qhca_dm_mmap_free(struct qhca_dev *dev,
		       struct qhca_user_mmap_entry *entry)
{
	qhca_dm_pool_put(&dev->dm,
			 (entry->address - dev->dm.start) >> PAGE_SHIFT,
			 entry->rdma_entry.npages);
}

static struct ib_dm *qhca_alloc_dm(struct ib_device *ibdev,
				   struct ib_ucontext *uctx,
				   struct ib_dm_alloc_attr *attr,
				   struct uverbs_attr_bundle *attrs)
{
	struct qhca_dev *dev = to_qdev(ibdev);
	struct qhca_dm_pool *pool = &dev->dm;
	struct qhca_user_mmap_entry *entry;
	u32 npages, align = 1;
	u64 offset, length;
	struct qhca_dm *dm;
	long idx;
	int err;

	/* A length the pool can never hold is not a shortage: EINVAL. */
	if (!attr->length || attr->length > qhca_dm_size(dev) ||
	    attr->alignment >= BITS_PER_LONG ||
	    BIT_ULL(attr->alignment) > qhca_dm_size(dev))
		return ERR_PTR(-EINVAL);
	/* The BAR is aligned to its size, so a BAR offset's alignment is. */
	if (BIT_ULL(attr->alignment) > PAGE_SIZE)
		align = BIT_ULL(attr->alignment) >> PAGE_SHIFT;
	npages = DIV_ROUND_UP(attr->length, PAGE_SIZE);

	dm = kzalloc(sizeof(*dm), GFP_KERNEL);
	entry = kzalloc(sizeof(*entry), GFP_KERNEL);
	if (!dm || !entry) {
		err = -ENOMEM;
		goto err_free;
	}
	idx = qhca_dm_pool_get(pool, npages, align);
	if (idx < 0) {
		err = idx;
		goto err_free;
	}
	dm->bar_offset = (u64)idx << PAGE_SHIFT;
	entry->type = QHCA_MMAP_DM;
	entry->address = pool->start + dm->bar_offset;
	length = (u64)npages << PAGE_SHIFT;
	err = qhca_dm_clear(entry->address, length);
	if (!err)
		err = rdma_user_mmap_entry_insert(uctx, &entry->rdma_entry,
						  length);
	if (err) {
		qhca_dm_pool_put(pool, idx, npages);
		goto err_free;
	}
	/* From here on the entry owns the pages: qhca_dm_mmap_free(). */
	dm->mmap_entry = &entry->rdma_entry;

	offset = rdma_user_mmap_get_offset(dm->mmap_entry);
	err = uverbs_copy_to(attrs, QHCA_IB_ATTR_ALLOC_DM_RESP_MMAP_OFFSET,
			     &offset, sizeof(offset));
	if (!err)
		err = uverbs_copy_to(attrs,
				     QHCA_IB_ATTR_ALLOC_DM_RESP_MMAP_LENGTH,
				     &length, sizeof(length));
	if (err) {
		rdma_user_mmap_entry_remove(dm->mmap_entry);
		kfree(dm);
		return ERR_PTR(err);
	}
	return &dm->ibdm;

err_free:
	kfree(entry);
	kfree(dm);
	return ERR_PTR(err);
}

/*
 * ib_core frees a DM only without MRs on it.  The pages return to the
 * pool once the process has unmapped them too.
 */
static int qhca_dealloc_dm(struct ib_dm *ibdm,
			   struct uverbs_attr_bundle *attrs)
{
	struct qhca_dm *dm = to_qdm(ibdm);

	rdma_user_mmap_entry_remove(dm->mmap_entry);
	kfree(dm);
	return 0;
}

/*
 * The access a DM MR may have: any MR's (qhca_mr_check_access()) less
 * MW_BIND, as REG_MR DM takes it: the device binds no window to device
 * memory.  ZERO_BASED is what every DM MR is (ib_core insists on it): the
 * MR's iova is its offset in the DM's range.  Any refusal is EINVAL.
 */
static int qhca_dm_mr_check_access(struct qhca_dev *dev, int access)
{
	if (!(access & IB_ZERO_BASED) || (access & IB_ACCESS_MW_BIND))
		return -EINVAL;
	return qhca_mr_check_access(dev, access & ~IB_ZERO_BASED) ? -EINVAL : 0;
}

static struct ib_mr *qhca_reg_dm_mr(struct ib_pd *ibpd, struct ib_dm *ibdm,
				    struct ib_dm_mr_attr *attr,
				    struct uverbs_attr_bundle *attrs)
{
	struct qhca_dev *dev = to_qdev(ibpd->device);
	struct qhca_dm *dm = to_qdm(ibdm);
	struct qhca_cmd_reg_mr cmd = {};
	struct qhca_mr *mr;
	int err;

	err = qhca_dm_mr_check_access(dev, attr->access_flags);
	if (err)
		return ERR_PTR(err);
	/* ib_core checked the range too. */
	if (attr->offset > ibdm->length ||
	    attr->length > ibdm->length - attr->offset)
		return ERR_PTR(-EINVAL);

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->access = attr->access_flags;

	/* Zero-based: iova 0 is the MR's first byte, @offset into the DM. */
	cmd.iova = 0;
	cmd.length = cpu_to_le64(attr->length);
	cmd.pbl_addr = cpu_to_le64(dm->bar_offset + attr->offset);
	cmd.pdn = cpu_to_le32(to_qpd(ibpd)->pdn);
	cmd.access = qhca_access_to_hw(attr->access_flags);
	cmd.flags = QHCA_MR_F_DM;
	/*
	 * A DM MR may be empty (mlx5's may, and rdma-core's tests register
	 * one).  A 1.8 device takes it as it is; an older one takes no MR
	 * of length 0, so there it is the DM's first byte without any
	 * access: its keys exist and reach nothing but a local read of that
	 * byte of the caller's own DM.
	 */
	if (!attr->length && dev->version < QHCA_VERSION_1_8) {
		cmd.length = cpu_to_le64(1);
		cmd.pbl_addr = cpu_to_le64(dm->bar_offset);
		cmd.access = 0;
	}
	err = qhca_mr_reg_cmd(dev, &cmd, &mr->index, &mr->ibmr.lkey);
	if (err) {
		kfree(mr);
		return ERR_PTR(err);
	}
	mr->ibmr.rkey = mr->ibmr.lkey;
	mr->ibmr.iova = 0;
	mr->ibmr.length = attr->length;
	return &mr->ibmr;
}

/* libqhca learns where to map a DM from these (rdma/qhca-abi.h). */
ADD_UVERBS_ATTRIBUTES_SIMPLE(qhca_ib_dm_alloc, UVERBS_OBJECT_DM,
			     UVERBS_METHOD_DM_ALLOC,
			     UVERBS_ATTR_PTR_OUT(QHCA_IB_ATTR_ALLOC_DM_RESP_MMAP_OFFSET,
						 UVERBS_ATTR_TYPE(u64),
						 UA_MANDATORY),
			     UVERBS_ATTR_PTR_OUT(QHCA_IB_ATTR_ALLOC_DM_RESP_MMAP_LENGTH,
						 UVERBS_ATTR_TYPE(u64),
						 UA_MANDATORY));

/*
 * ibv_import_dm(): where another context on the same ufile maps the DM
 * (the same mmap entry), and the length it was allocated with.
 */
static int UVERBS_HANDLER(QHCA_IB_METHOD_DM_QUERY)(struct uverbs_attr_bundle *attrs)
{
	struct ib_dm *ibdm = uverbs_attr_get_obj(attrs,
						 QHCA_IB_ATTR_QUERY_DM_HANDLE);
	struct qhca_dm *dm = to_qdm(ibdm);
	u64 offset = rdma_user_mmap_get_offset(dm->mmap_entry);
	u64 map_len = (u64)dm->mmap_entry->npages << PAGE_SHIFT;
	u64 length = ibdm->length;
	int err;

	err = uverbs_copy_to(attrs, QHCA_IB_ATTR_QUERY_DM_RESP_MMAP_OFFSET,
			     &offset, sizeof(offset));
	if (!err)
		err = uverbs_copy_to(attrs,
				     QHCA_IB_ATTR_QUERY_DM_RESP_MMAP_LENGTH,
				     &map_len, sizeof(map_len));
	if (!err)
		err = uverbs_copy_to(attrs, QHCA_IB_ATTR_QUERY_DM_RESP_LENGTH,
				     &length, sizeof(length));
	return err;
}

DECLARE_UVERBS_NAMED_METHOD(QHCA_IB_METHOD_DM_QUERY,
			    UVERBS_ATTR_IDR(QHCA_IB_ATTR_QUERY_DM_HANDLE,
					    UVERBS_OBJECT_DM,
					    UVERBS_ACCESS_READ, UA_MANDATORY),
			    UVERBS_ATTR_PTR_OUT(QHCA_IB_ATTR_QUERY_DM_RESP_MMAP_OFFSET,
						UVERBS_ATTR_TYPE(u64),
						UA_MANDATORY),
			    UVERBS_ATTR_PTR_OUT(QHCA_IB_ATTR_QUERY_DM_RESP_MMAP_LENGTH,
						UVERBS_ATTR_TYPE(u64),
						UA_MANDATORY),
			    UVERBS_ATTR_PTR_OUT(QHCA_IB_ATTR_QUERY_DM_RESP_LENGTH,
						UVERBS_ATTR_TYPE(u64),
						UA_MANDATORY));

ADD_UVERBS_METHODS(qhca_ib_dm, UVERBS_OBJECT_DM,
		   &UVERBS_METHOD(QHCA_IB_METHOD_DM_QUERY));

static const struct uapi_definition qhca_dm_defs[] = {
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_DM, &qhca_ib_dm_alloc),
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_DM, &qhca_ib_dm),
	/* driver_def is one list: the device's (qhca_verbs.c) go on it. */
	UAPI_DEF_CHAIN(qhca_import_defs),
	{},
};

static const struct ib_device_ops qhca_dm_ops = {
	.alloc_dm = qhca_alloc_dm,
	.dealloc_dm = qhca_dealloc_dm,
	.reg_dm_mr = qhca_reg_dm_mr,
};

/* Only a device with device memory has the verbs. */
void qhca_dm_set_ops(struct qhca_dev *dev)
{
	if (!dev->dm.pages)
		return;
	ib_set_device_ops(&dev->ibdev, &qhca_dm_ops);
	dev->ibdev.driver_def = qhca_dm_defs;
}
