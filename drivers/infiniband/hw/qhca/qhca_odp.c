// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * qhca on-demand paging (interface 1.8, QHCA_DEV_CAP_ON_DEMAND_PAGING).
 *
 * An ODP MR is registered without pages: every page starts absent in the
 * device.  A QP whose access meets an absent page stops and reports a
 * page fault (QHCA_EVENT_PAGE_FAULT, data its QPN); a work item asks the
 * device for the QP's faults (QUERY_PAGE_FAULT), faults the pages in with
 * ib_umem_odp, gives the device their DMA addresses (ODP_MAP) and lets the
 * QP go on (RESUME_PAGE_FAULT).  When the process unmaps or moves pages,
 * the umem's mmu interval notifier takes them from the device (ODP_UNMAP,
 * which is the device's fence) before their DMA mappings go.
 *
 * An explicit ODP MR has one umem_odp over its range; device page k is
 * umem page k (the iova and the address agree modulo the page size).  An
 * implicit ODP MR (start 0, length U64_MAX) covers the whole address
 * space: device page k is the page at address k << PAGE_SHIFT, and its
 * pages live in children of QHCA_ODP_CHILD_SIZE, each with its own
 * notifier, made on the first fault in them.
 *
 * Locking, outermost first: an implicit MR's @child_lock (one fault or
 * prefetch at a time builds or maps its children); a umem's umem_mutex
 * (ib_umem_odp's: held from mapping the pages until the device has them,
 * and by the invalidation); the device's odp->lock, held only around the
 * ODP commands and DEREG_MR of an ODP MR, so that no command names the
 * index of an MR once DEREG_MR gave it back (@dead).  A reference on the
 * MR keeps its umems while a fault or a prefetch uses them.
 *
 * Kernel consumers never ask for ODP: their MRs are DMA and FAST_REG MRs.
 */

#include <linux/bitfield.h>
#include <linux/bitmap.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <rdma/ib_umem_odp.h>

#include "qhca.h"

#if QHCA_ODP

/* The device's ODP_MAP entries are ib_umem_odp's DMA list entries. */
static_assert(QHCA_ODP_PAGE_READ == ODP_READ_ALLOWED_BIT);
static_assert(QHCA_ODP_PAGE_WRITE == ODP_WRITE_ALLOWED_BIT);

/*
 * What one fault maps at most: the device faults again for the rest, so
 * a long access does not hold the QP (and the work) on one huge mapping.
 */
#define QHCA_ODP_FAULT_MAX	SZ_4M

/*
 * What a fault maps ahead of the access the device reported, which is one
 * packet's: the pages that follow in the MR are most likely the next
 * packets' (mlx5 prefetches for RDMA faults likewise).  Without it a long
 * message takes a fault, and a train of RNR NAKs, for every page.
 */
#define QHCA_ODP_FAULT_AHEAD	SZ_256K

/*
 * An implicit MR's children: small, so that a child costs little more
 * than the pages it maps (its lists are 16 bytes a page).
 */
#define QHCA_ODP_CHILD_SHIFT	21
#define QHCA_ODP_CHILD_SIZE	BIT_ULL(QHCA_ODP_CHILD_SHIFT)

/* The access bits that are ODP's own, not the device's. */
#define QHCA_ODP_ACCESS		(IB_ACCESS_ON_DEMAND | IB_ACCESS_HUGETLB)

/* The device's ODP state (dev->odp). */
struct qhca_odp {
	struct qhca_dev *dev;
	struct xarray mrs;		/* ODP MRs by index: qhca_odp_mr */
	/*
	 * The ODP commands, @map, and every MR's @dead.  Taken in
	 * invalidations, maybe in reclaim: nothing allocates under it.
	 */
	struct mutex lock;
	struct qhca_dma_buf map;	/* ODP_MAP's entries */
	struct workqueue_struct *wq;
	struct work_struct fault_work;
	unsigned long *pending;		/* QPNs with a fault event to handle */
	u32 nbits;
	/* Faults of a QP or MR gone meanwhile, answered or dropped. */
	atomic64_t stale;
};

struct qhca_odp_mr {
	struct qhca_odp *odp;
	struct qhca_mr *mr;
	/* Explicit: the MR's umem; implicit: the root of its children. */
	struct ib_umem_odp *umem;
	u64 iova;			/* explicit: the MR's range */
	u64 length;
	bool implicit;
	/* No device MR by this index (not yet, or no more): odp->lock. */
	bool dead;
	refcount_t refs;
	struct completion free;		/* the last reference went */
	struct mutex child_lock;	/* implicit: @children */
	struct xarray children;		/* ib_umem_odp by address >> SHIFT */
};

/* The device page of address @va of @umem. */
static u64 qhca_odp_page(const struct qhca_odp_mr *omr,
			 struct ib_umem_odp *umem, u64 va)
{
	if (omr->implicit)
		return va >> umem->page_shift;
	return (va - ib_umem_start(umem)) >> umem->page_shift;
}

/* ---- invalidation ---------------------------------------------------- */

/*
 * Take [start, end) of @umem from the device: ODP_UNMAP, whose completion
 * means no access uses those pages any more.  The device may refuse only
 * once it stopped answering, and then it was reset: it uses no memory.
 */
static void qhca_odp_unmap_dev(struct qhca_odp_mr *omr,
			       struct ib_umem_odp *umem, u64 start, u64 end)
{
	struct qhca_odp *odp = omr->odp;
	u64 size = BIT_ULL(umem->page_shift);
	u64 first = qhca_odp_page(omr, umem, ALIGN_DOWN(start, size));
	u64 npages = (ALIGN(end, size) - ALIGN_DOWN(start, size)) >>
		     umem->page_shift;
	int err = 0;

	mutex_lock(&odp->lock);
	if (!omr->dead)
		err = qhca_admin_odp_unmap(odp->dev, omr->mr->index, first,
					   npages);
	mutex_unlock(&odp->lock);
	if (err && !READ_ONCE(odp->dev->aq.dead))
		ibdev_warn_ratelimited(&odp->dev->ibdev,
				       "ODP_UNMAP of MR %u failed: %d\n",
				       omr->mr->index, err);
}

/* Whether a page of [start, end) of @umem is DMA-mapped, so maybe present. */
static bool qhca_odp_mapped(struct ib_umem_odp *umem, u64 start, u64 end)
{
	u64 i = (start - ib_umem_start(umem)) >> umem->page_shift;
	u64 last = (end - 1 - ib_umem_start(umem)) >> umem->page_shift;

	for (; i <= last; i++)
		if (umem->dma_list[i])
			return true;
	return false;
}

static bool qhca_odp_invalidate(struct mmu_interval_notifier *mni,
				const struct mmu_notifier_range *range,
				unsigned long cur_seq)
{
	struct ib_umem_odp *umem = container_of(mni, struct ib_umem_odp,
						notifier);
	struct qhca_odp_mr *omr;
	u64 start, end;

	/* The device command waits: only where the caller may sleep. */
	if (!mmu_notifier_range_blockable(range))
		return false;

	mutex_lock(&umem->umem_mutex);
	mmu_interval_set_seq(mni, cur_seq);
	omr = umem->private;
	start = max_t(u64, ib_umem_start(umem), range->start);
	end = min_t(u64, ib_umem_end(umem), range->end);
	/*
	 * Only mapped pages can be present in the device; with none mapped
	 * in the range (or before the MR is known) there is nothing to
	 * fence, and no command to wait for: munmap of memory the device
	 * never saw costs nothing.
	 */
	if (start < end && umem->npages && qhca_odp_mapped(umem, start, end)) {
		if (omr)
			qhca_odp_unmap_dev(omr, umem, start, end);
		ib_umem_odp_unmap_dma_pages(umem, start, end);
	}
	mutex_unlock(&umem->umem_mutex);
	return true;
}

static const struct mmu_interval_notifier_ops qhca_odp_mn_ops = {
	.invalidate = qhca_odp_invalidate,
};

/* ---- mapping ---------------------------------------------------------- */

/*
 * Make [va, va + len) of @umem present in the device: fault the pages in
 * (or, without @fault, take those the process has), then ODP_MAP their
 * DMA addresses in chunks.  umem_mutex is held from the mapping until the
 * device has them, so an invalidation of these pages waits for that and
 * then takes them away again.
 */
static int qhca_odp_map(struct qhca_odp_mr *omr, struct ib_umem_odp *umem,
			u64 va, u64 len, bool write, bool fault)
{
	struct qhca_odp *odp = omr->odp;
	u64 mask = ODP_READ_ALLOWED_BIT;
	__le64 *entries = odp->map.va;
	u32 i, n, chunk, done;
	u64 first, page;
	int ret, err = 0;

	if (write && !umem->umem.writable)
		return -EPERM;
	/* A writable MR takes writes without faulting again. */
	if (umem->umem.writable)
		mask |= ODP_WRITE_ALLOWED_BIT;

	ret = ib_umem_odp_map_dma_and_lock(umem, va, len, mask, fault);
	if (ret < 0)
		return ret;
	/* umem_mutex is held: the DMA list stays as it is. */
	n = ret;
	first = (ALIGN_DOWN(va, BIT_ULL(umem->page_shift)) -
		 ib_umem_start(umem)) >> umem->page_shift;
	page = qhca_odp_page(omr, umem, ib_umem_start(umem)) + first;

	mutex_lock(&odp->lock);
	for (done = 0; done < n && !err; done += chunk) {
		chunk = min_t(u32, n - done, QHCA_ODP_MAP_MAX_PAGES);
		if (omr->dead) {
			err = -ENOENT;
			break;
		}
		/* Unmapped pages (no fault asked) are 0: absent. */
		for (i = 0; i < chunk; i++)
			entries[i] = cpu_to_le64(umem->dma_list[first + done +
								i]);
		err = qhca_admin_odp_map(odp->dev, omr->mr->index, page + done,
					 odp->map.dma, chunk);
	}
	mutex_unlock(&odp->lock);
	mutex_unlock(&umem->umem_mutex);
	return err;
}

/* The child of implicit @omr that holds @va, made if @create. */
static struct ib_umem_odp *qhca_odp_child(struct qhca_odp_mr *omr, u64 va,
					  bool *created)
{
	unsigned long key = va >> QHCA_ODP_CHILD_SHIFT;
	struct ib_umem_odp *child;
	int err;

	lockdep_assert_held(&omr->child_lock);
	*created = false;
	child = xa_load(&omr->children, key);
	if (child)
		return child;
	child = ib_umem_odp_alloc_child(omr->umem,
					key << QHCA_ODP_CHILD_SHIFT,
					QHCA_ODP_CHILD_SIZE, &qhca_odp_mn_ops);
	if (IS_ERR(child))
		return child;
	mutex_lock(&child->umem_mutex);
	child->private = omr;
	mutex_unlock(&child->umem_mutex);
	err = xa_err(xa_store(&omr->children, key, child, GFP_KERNEL));
	if (err) {
		ib_umem_odp_release(child);
		return ERR_PTR(err);
	}
	*created = true;
	return child;
}

/* [va, va + len) of an implicit MR, within one child. */
static int qhca_odp_map_implicit(struct qhca_odp_mr *omr, u64 va, u64 len,
				 bool write, bool fault)
{
	struct ib_umem_odp *child;
	bool created;
	int err;

	mutex_lock(&omr->child_lock);
	child = qhca_odp_child(omr, va, &created);
	if (IS_ERR(child)) {
		err = PTR_ERR(child);
		goto out;
	}
	err = qhca_odp_map(omr, child, va, len, write, fault);
	/*
	 * A child made for nothing goes again: otherwise faults at unmapped
	 * addresses would each leave a child behind for the MR's lifetime.
	 */
	if (created && !child->npages) {
		xa_erase(&omr->children, va >> QHCA_ODP_CHILD_SHIFT);
		ib_umem_odp_release(child);
	}
out:
	mutex_unlock(&omr->child_lock);
	return err;
}

/*
 * Map [iova, iova + len) of @omr, checked against the MR: all of it, a
 * piece at a time.
 */
static int qhca_odp_map_range(struct qhca_odp_mr *omr, u64 iova, u64 len,
			      bool write, bool fault)
{
	u64 end, va;
	int err;

	if (omr->implicit) {
		if (iova >= BIT_ULL(QHCA_ODP_IMPLICIT_VA_BITS) ||
		    len > BIT_ULL(QHCA_ODP_IMPLICIT_VA_BITS) - iova)
			return -EFAULT;
		va = iova;
	} else {
		if (iova < omr->iova || iova - omr->iova >= omr->length ||
		    len > omr->length - (iova - omr->iova))
			return -EFAULT;
		va = omr->umem->umem.address + (iova - omr->iova);
	}

	while (len) {
		end = va + min_t(u64, len, QHCA_ODP_FAULT_MAX);
		if (omr->implicit) {
			end = min(end, ALIGN_DOWN(va, QHCA_ODP_CHILD_SIZE) +
				       QHCA_ODP_CHILD_SIZE);
			err = qhca_odp_map_implicit(omr, va, end - va, write,
						    fault);
		} else {
			err = qhca_odp_map(omr, omr->umem, va, end - va, write,
					   fault);
		}
		if (err)
			return err;
		len -= end - va;
		va = end;
	}
	return 0;
}

/* ---- the MR table ----------------------------------------------------- */

static struct qhca_odp_mr *qhca_odp_mr_get(struct qhca_odp *odp, u32 index)
{
	struct qhca_odp_mr *omr;

	xa_lock(&odp->mrs);
	omr = xa_load(&odp->mrs, index);
	if (omr && !refcount_inc_not_zero(&omr->refs))
		omr = NULL;
	xa_unlock(&odp->mrs);
	return omr;
}

static void qhca_odp_mr_put(struct qhca_odp_mr *omr)
{
	if (refcount_dec_and_test(&omr->refs))
		complete(&omr->free);
}

/* ---- page faults ------------------------------------------------------ */

/*
 * Best effort: map up to @len bytes of @omr from @iova, within the MR (an
 * implicit MR's: within the child that holds @iova, so no child is made
 * for it).  A page the process does not have ends it quietly: the access
 * the fault was for is mapped already, and an access there faults anew.
 */
static void qhca_odp_map_ahead(struct qhca_odp_mr *omr, u64 iova, u64 len)
{
	u64 end;

	if (omr->implicit) {
		end = ALIGN_DOWN(iova, QHCA_ODP_CHILD_SIZE) +
		      QHCA_ODP_CHILD_SIZE;
		if (iova >= BIT_ULL(QHCA_ODP_IMPLICIT_VA_BITS) ||
		    !xa_load(&omr->children, iova >> QHCA_ODP_CHILD_SHIFT))
			return;
	} else {
		if (iova < omr->iova || iova - omr->iova >= omr->length)
			return;
		end = omr->iova + omr->length;
	}
	len = min_t(u64, len, end - iova);
	qhca_odp_map_range(omr, iova, len, false, true);
}

/* Map what fault @f of the QP needs; 0 if the QP may go on. */
static int qhca_odp_resolve(struct qhca_odp *odp,
			    const struct qhca_page_fault *f)
{
	u64 len = clamp_t(u64, le32_to_cpu(f->length), 1, QHCA_ODP_FAULT_MAX);
	u64 addr = le64_to_cpu(f->addr);
	struct qhca_odp_mr *omr;
	int err;

	omr = qhca_odp_mr_get(odp, le32_to_cpu(f->mr_index));
	if (!omr) {
		atomic64_inc(&odp->stale);
		return -ENOENT;
	}
	/* What the MR has of the access: the device faults on the rest. */
	if (!omr->implicit && addr >= omr->iova &&
	    addr - omr->iova < omr->length)
		len = min(len, omr->length - (addr - omr->iova));
	err = qhca_odp_map_range(omr, addr, len,
				 f->flags & QHCA_PAGE_FAULT_F_WRITE, true);
	if (!err && len < QHCA_ODP_FAULT_AHEAD)
		qhca_odp_map_ahead(omr, addr + len, QHCA_ODP_FAULT_AHEAD - len);
	qhca_odp_mr_put(omr);
	return err;
}

static void qhca_odp_qp_faults(struct qhca_odp *odp, u32 qpn)
{
	struct qhca_dev *dev = odp->dev;
	struct qhca_page_fault_info info;
	const struct qhca_page_fault *f;
	u8 kind, status;
	int err;

	err = qhca_admin_query_page_fault(dev, qpn, &info);
	if (err) {
		/* BAD_HANDLE: the QP is gone, and its faults with it. */
		if (err == -EINVAL)
			atomic64_inc(&odp->stale);
		else if (!READ_ONCE(dev->aq.dead))
			ibdev_warn_ratelimited(&dev->ibdev,
					       "QUERY_PAGE_FAULT of QP %u failed: %d\n",
					       qpn, err);
		return;
	}
	for (kind = 0; kind < QHCA_PAGE_FAULT_KINDS; kind++) {
		f = &info.fault[kind];
		if (!(f->flags & QHCA_PAGE_FAULT_F_PENDING))
			continue;
		err = qhca_odp_resolve(odp, f);
		status = err ? QHCA_PAGE_FAULT_FAILED : QHCA_PAGE_FAULT_RESOLVED;
		ibdev_dbg(&dev->ibdev,
			  "QP %u fault %u: MR %u %#llx+%u%s: %d\n", qpn, kind,
			  le32_to_cpu(f->mr_index), le64_to_cpu(f->addr),
			  le32_to_cpu(f->length),
			  f->flags & QHCA_PAGE_FAULT_F_WRITE ? " write" : "",
			  err);
		err = qhca_admin_resume_page_fault(dev, qpn, kind, status);
		/* BAD_STATE, BAD_HANDLE: the QP was reset or destroyed. */
		if (err == -EBUSY || err == -EINVAL)
			atomic64_inc(&odp->stale);
		else if (err && !READ_ONCE(dev->aq.dead))
			ibdev_warn_ratelimited(&dev->ibdev,
					       "RESUME_PAGE_FAULT of QP %u failed: %d\n",
					       qpn, err);
	}
}

static void qhca_odp_fault_work(struct work_struct *work)
{
	struct qhca_odp *odp = container_of(work, struct qhca_odp,
					    fault_work);
	u32 qpn;

	for_each_set_bit(qpn, odp->pending, odp->nbits) {
		if (!test_and_clear_bit(qpn, odp->pending))
			continue;
		qhca_odp_qp_faults(odp, qpn);
		cond_resched();
	}
}

/**
 * qhca_odp_fault_event - QHCA_EVENT_PAGE_FAULT: QP @qpn has a fault
 * @dev: the device
 * @qpn: the QP
 *
 * From the EQ's interrupt handler: the work does the rest.  A QP's
 * events while its bit is set are one: the work asks for all its faults.
 */
void qhca_odp_fault_event(struct qhca_dev *dev, u32 qpn)
{
	struct qhca_odp *odp = dev->odp;

	if (!odp || qpn >= odp->nbits) {
		dev_warn_ratelimited(&dev->pdev->dev,
				     "page fault event for QP %u\n", qpn);
		return;
	}
	set_bit(qpn, odp->pending);
	queue_work(odp->wq, &odp->fault_work);
}

/* ---- verbs ------------------------------------------------------------- */

/* The ODP MR's umems go, after the device has let go of the MR. */
static void qhca_odp_mr_release(struct qhca_odp_mr *omr)
{
	struct ib_umem_odp *child;
	unsigned long key;

	if (omr->implicit) {
		xa_for_each(&omr->children, key, child)
			ib_umem_odp_release(child);
		xa_destroy(&omr->children);
	}
	ib_umem_odp_release(omr->umem);
}

/**
 * qhca_odp_reg_user_mr - reg_user_mr with IB_ACCESS_ON_DEMAND
 * @ibpd: the PD
 * @start: the range's address (0 with @length U64_MAX: implicit)
 * @length: its length
 * @iova: the MR's address of @start (0 for an implicit MR)
 * @access: IB_ACCESS_* flags
 * @udata: the command's driver data (none is defined)
 */
struct ib_mr *qhca_odp_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				   u64 iova, int access,
				   struct ib_udata *udata)
{
	struct qhca_dev *dev = to_qdev(ibpd->device);
	bool implicit = !start && length == U64_MAX;
	struct qhca_odp *odp = dev->odp;
	struct qhca_cmd_reg_mr cmd = {};
	struct ib_umem_odp *umem;
	struct qhca_odp_mr *omr;
	struct qhca_mr *mr;
	int err;

	if (!odp)
		return ERR_PTR(-EOPNOTSUPP);
	/* The implicit MR's length is the address space's: check a page. */
	err = qhca_mr_check_user(dev, implicit ? PAGE_SIZE : length,
				 access & ~QHCA_ODP_ACCESS, udata);
	if (err)
		return ERR_PTR(err);
	if (implicit) {
		if (iova)
			return ERR_PTR(-EINVAL);
		umem = ib_umem_odp_alloc_implicit(&dev->ibdev, access);
	} else {
		umem = ib_umem_odp_get(&dev->ibdev, start, length, access,
				       &qhca_odp_mn_ops);
	}
	if (IS_ERR(umem))
		return ERR_CAST(umem);
	/*
	 * Device page k must be umem page k: the iova and the address agree
	 * within a page (hugetlb: 2 MiB), and the device takes the size.
	 */
	if ((!implicit && ((start ^ iova) & (BIT_ULL(umem->page_shift) - 1))) ||
	    umem->page_shift < QHCA_MR_MIN_PAGE_SHIFT ||
	    umem->page_shift > QHCA_MR_MAX_PAGE_SHIFT) {
		err = -EINVAL;
		goto err_release;
	}

	err = -ENOMEM;
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		goto err_release;
	omr = kzalloc(sizeof(*omr), GFP_KERNEL);
	if (!omr)
		goto err_free_mr;
	omr->odp = odp;
	omr->mr = mr;
	omr->umem = umem;
	omr->iova = iova;
	omr->length = length;
	omr->implicit = implicit;
	omr->dead = true;
	refcount_set(&omr->refs, 1);
	init_completion(&omr->free);
	mutex_init(&omr->child_lock);
	xa_init(&omr->children);
	mr->access = access;
	mr->odp = omr;
	if (!implicit) {
		/* Its notifier may run already: it finds the MR dead. */
		mutex_lock(&umem->umem_mutex);
		umem->private = omr;
		mutex_unlock(&umem->umem_mutex);
	}

	if (!implicit) {
		cmd.iova = cpu_to_le64(iova);
		cmd.length = cpu_to_le64(length);
	}
	cmd.pdn = cpu_to_le32(to_qpd(ibpd)->pdn);
	cmd.access = qhca_access_to_hw(access & ~QHCA_ODP_ACCESS);
	cmd.page_shift = umem->page_shift;
	cmd.flags = QHCA_MR_F_ODP | (implicit ? QHCA_MR_F_ODP_IMPLICIT : 0);
	err = qhca_mr_reg_cmd(dev, &cmd, &mr->index, &mr->ibmr.lkey);
	if (err)
		goto err_free_omr;
	mr->ibmr.rkey = mr->ibmr.lkey;
	mutex_lock(&odp->lock);
	omr->dead = false;
	mutex_unlock(&odp->lock);

	/*
	 * Outside odp->lock, which an invalidation in reclaim may need: an
	 * allocation under it could wait for itself.  An entry still there
	 * is a deregistered MR's, whose dereg erases only its own.
	 */
	err = xa_err(xa_store(&odp->mrs, mr->index, omr, GFP_KERNEL));
	if (err) {
		mutex_lock(&odp->lock);
		qhca_admin_dereg_mr(dev, mr->index);
		omr->dead = true;
		mutex_unlock(&odp->lock);
		goto err_free_omr;
	}
	return &mr->ibmr;

err_free_omr:
	if (!implicit) {
		mutex_lock(&umem->umem_mutex);
		umem->private = NULL;
		mutex_unlock(&umem->umem_mutex);
	}
	kfree(omr);
err_free_mr:
	kfree(mr);
err_release:
	ib_umem_odp_release(umem);
	return ERR_PTR(err);
}

/**
 * qhca_odp_dereg_mr - dereg_mr of an ODP MR
 * @mr: the MR
 *
 * DEREG_MR takes every page from the device at once.  After it no command
 * names the index (it may be another MR's soon), no fault or prefetch
 * holds the MR, and only then do the umems and their DMA mappings go.
 */
int qhca_odp_dereg_mr(struct qhca_mr *mr)
{
	struct qhca_odp_mr *omr = mr->odp;
	struct qhca_odp *odp = omr->odp;
	struct qhca_dev *dev = odp->dev;
	int err;

	mutex_lock(&odp->lock);
	err = qhca_admin_dereg_mr(dev, mr->index);
	/* Windows are bound to it: it stays until they are gone. */
	if (err == -EBUSY) {
		mutex_unlock(&odp->lock);
		return err;
	}
	omr->dead = true;
	mutex_unlock(&odp->lock);
	/* Unless a new MR of the index replaced it already. */
	xa_cmpxchg(&odp->mrs, mr->index, omr, NULL, 0);
	/*
	 * ib_core cannot keep an MR it asked to free, and the notifiers must
	 * go with the module: the umems go even if a live device refused
	 * (which it never does for an index it gave; the log tells).
	 */
	qhca_destroyed(dev, err, "DEREG_MR", mr->index);

	qhca_odp_mr_put(omr);
	wait_for_completion(&omr->free);
	qhca_odp_mr_release(omr);
	kfree(omr);
	kfree(mr);
	return 0;
}

/*
 * ibv_advise_mr(): every advice is done at once, the FLUSH flag's
 * synchronous form and the asynchronous one alike, so the caller learns
 * of a failure either way.
 */
static int qhca_advise_mr(struct ib_pd *pd,
			  enum ib_uverbs_advise_mr_advice advice, u32 flags,
			  struct ib_sge *sg_list, u32 num_sge,
			  struct uverbs_attr_bundle *attrs)
{
	struct qhca_dev *dev = to_qdev(pd->device);
	bool write = false, fault = true;
	struct qhca_odp_mr *omr;
	int err = 0;
	u32 i;

	switch (advice) {
	case IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH:
		break;
	case IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE:
		write = true;
		break;
	case IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT:
		fault = false;
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (flags & ~IB_UVERBS_ADVISE_MR_FLAG_FLUSH)
		return -EOPNOTSUPP;

	for (i = 0; i < num_sge && !err; i++) {
		omr = qhca_odp_mr_get(dev->odp,
				      FIELD_GET(QHCA_MKEY_INDEX,
						sg_list[i].lkey));
		if (!omr)
			return -ENOENT;
		/*
		 * An ODP MR by its current key (else ENOENT), the caller's
		 * own and writable for PREFETCH_WRITE (else EPERM), as mlx5.
		 */
		if (omr->mr->ibmr.lkey != sg_list[i].lkey)
			err = -ENOENT;
		else if (omr->mr->ibmr.pd != pd ||
			 (write && !omr->umem->umem.writable))
			err = -EPERM;
		else
			err = qhca_odp_map_range(omr, sg_list[i].addr,
						 sg_list[i].length, write,
						 fault);
		qhca_odp_mr_put(omr);
	}
	return err;
}

static const struct ib_device_ops qhca_odp_ops = {
	.advise_mr = qhca_advise_mr,
};

/* Only a device with ODP has the verb. */
void qhca_odp_set_ops(struct qhca_dev *dev)
{
	if (dev->odp)
		ib_set_device_ops(&dev->ibdev, &qhca_odp_ops);
}

/**
 * qhca_odp_query_device - the ODP capabilities
 * @dev: the device
 * @props: query_device's answer
 *
 * A fault is taken wherever the device accesses an ODP MR, but a UD
 * receive that faults drops its message (the contract): UD claims SEND
 * only.  UC is not claimed at all (a UC message that faults at the
 * responder is lost as well).
 */
void qhca_odp_query_device(struct qhca_dev *dev, struct ib_device_attr *props)
{
	const struct qhca_device_attr *a = &dev->attr;
	u32 caps = le32_to_cpu(a->device_cap_flags);
	u32 rc;

	if (!dev->odp)
		return;
	props->kernel_cap_flags |= IBK_ON_DEMAND_PAGING;
	props->odp_caps.general_caps = IB_ODP_SUPPORT | IB_ODP_SUPPORT_IMPLICIT;
	rc = IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV | IB_ODP_SUPPORT_WRITE |
	     IB_ODP_SUPPORT_READ;
	if (a->atomic_cap != IB_ATOMIC_NONE)
		rc |= IB_ODP_SUPPORT_ATOMIC;
	if (caps & QHCA_DEV_CAP_SRQ)
		rc |= IB_ODP_SUPPORT_SRQ_RECV;
	props->odp_caps.per_transport_caps.rc_odp_caps = rc;
	if (caps & QHCA_DEV_CAP_XRC)
		props->odp_caps.per_transport_caps.xrc_odp_caps = rc;
	if (caps & QHCA_DEV_CAP_UD)
		props->odp_caps.per_transport_caps.ud_odp_caps =
			IB_ODP_SUPPORT_SEND;
}

/* ---- the device -------------------------------------------------------- */

/**
 * qhca_odp_init - the ODP state of a device that has it
 * @dev: the device, its attributes known
 *
 * Before the event queues, whose async EQ then takes page faults too.
 */
int qhca_odp_init(struct qhca_dev *dev)
{
	u32 caps = le32_to_cpu(dev->attr.device_cap_flags);
	struct qhca_odp *odp;
	int err = -ENOMEM;

	if (!(caps & QHCA_DEV_CAP_ON_DEMAND_PAGING))
		return 0;
	odp = kzalloc(sizeof(*odp), GFP_KERNEL);
	if (!odp)
		return -ENOMEM;
	odp->dev = dev;
	xa_init(&odp->mrs);
	mutex_init(&odp->lock);
	INIT_WORK(&odp->fault_work, qhca_odp_fault_work);
	/* QPNs are 1 .. max_qp + 1 (QP1 too), and 24 bits. */
	odp->nbits = min_t(u64, (u64)le32_to_cpu(dev->attr.max_qp) + 2,
			   QHCA_QPN_MASK + 1ULL);
	odp->pending = bitmap_zalloc(odp->nbits, GFP_KERNEL);
	if (!odp->pending)
		goto err_free;
	err = qhca_dma_buf_alloc(dev, &odp->map,
				 QHCA_ODP_MAP_MAX_PAGES * sizeof(__le64));
	if (err)
		goto err_bitmap;
	/* Faults may be what frees memory: the work must always run. */
	odp->wq = alloc_workqueue("qhca_odp", WQ_UNBOUND | WQ_MEM_RECLAIM, 1);
	if (!odp->wq) {
		err = -ENOMEM;
		goto err_map;
	}
	dev->odp = odp;
	return 0;

err_map:
	qhca_dma_buf_free(dev, &odp->map);
err_bitmap:
	bitmap_free(odp->pending);
err_free:
	kfree(odp);
	return err;
}

/* No event comes any more: wait for the work that runs. */
void qhca_odp_stop(struct qhca_dev *dev)
{
	if (dev->odp)
		cancel_work_sync(&dev->odp->fault_work);
}

/* After the device's reset; every ODP MR was deregistered. */
void qhca_odp_free(struct qhca_dev *dev)
{
	struct qhca_odp *odp = dev->odp;

	if (!odp)
		return;
	cancel_work_sync(&odp->fault_work);
	destroy_workqueue(odp->wq);
	WARN_ON(!xa_empty(&odp->mrs));
	xa_destroy(&odp->mrs);
	qhca_dma_buf_free(dev, &odp->map);
	bitmap_free(odp->pending);
	if (atomic64_read(&odp->stale))
		ibdev_dbg(&dev->ibdev, "%lld faults of QPs or MRs gone\n",
			  (s64)atomic64_read(&odp->stale));
	kfree(odp);
	dev->odp = NULL;
}

#else /* !QHCA_ODP: see qhca_compat.h */

struct ib_mr *qhca_odp_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				   u64 iova, int access,
				   struct ib_udata *udata)
{
	return ERR_PTR(-EOPNOTSUPP);
}

int qhca_odp_dereg_mr(struct qhca_mr *mr)
{
	return -EINVAL;
}

void qhca_odp_fault_event(struct qhca_dev *dev, u32 qpn)
{
	dev_warn_ratelimited(&dev->pdev->dev,
			     "page fault event for QP %u without ODP\n", qpn);
}

void qhca_odp_set_ops(struct qhca_dev *dev)
{
}

void qhca_odp_query_device(struct qhca_dev *dev, struct ib_device_attr *props)
{
}

int qhca_odp_init(struct qhca_dev *dev)
{
	return 0;
}

void qhca_odp_stop(struct qhca_dev *dev)
{
}

void qhca_odp_free(struct qhca_dev *dev)
{
}

#endif /* QHCA_ODP */
