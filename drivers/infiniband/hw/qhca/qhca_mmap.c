// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * What user space maps: a context's doorbell page in BAR 2, the rings of
 * its CQs and QPs in RAM, and its device memory in BAR 4 (qhca_dm.c).
 * Each mmap entry owns what it maps and frees it in qhca_mmap_free(), once
 * the object is destroyed and no mapping is left; on device removal
 * ib_core zaps the mappings first.
 */

#include <linux/mm.h>
#include <linux/slab.h>

#include "qhca.h"

struct rdma_user_mmap_entry *
qhca_mmap_insert_db_page(struct qhca_dev *dev, struct ib_ucontext *uctx,
			 u32 uar_index)
{
	struct qhca_user_mmap_entry *entry;
	int err;

	entry = kzalloc(sizeof(*entry), GFP_KERNEL);
	if (!entry)
		return ERR_PTR(-ENOMEM);
	entry->type = QHCA_MMAP_DB_PAGE;
	entry->uar_index = uar_index;
	entry->address = dev->db_bar_start +
			 (phys_addr_t)uar_index * QHCA_DB_PAGE_SIZE;
	err = rdma_user_mmap_entry_insert(uctx, &entry->rdma_entry,
					  QHCA_DB_PAGE_SIZE);
	if (err) {
		kfree(entry);
		return ERR_PTR(err);
	}
	return &entry->rdma_entry;
}

/*
 * Hand @buf to a new entry.  On success the entry owns the memory; on
 * failure the caller still does.
 */
struct rdma_user_mmap_entry *
qhca_mmap_insert_ring(struct qhca_dev *dev, struct ib_ucontext *uctx,
		      struct qhca_dma_buf *buf)
{
	struct qhca_user_mmap_entry *entry;
	int err;

	/*
	 * The mapping is a range of page frames: the buffer must be in the
	 * linear map, as dma_alloc_coherent() memory is without an IOMMU
	 * remapping it.
	 */
	if (!virt_addr_valid(buf->va) || !PAGE_ALIGNED(buf->size))
		return ERR_PTR(-EOPNOTSUPP);

	entry = kzalloc(sizeof(*entry), GFP_KERNEL);
	if (!entry)
		return ERR_PTR(-ENOMEM);
	entry->type = QHCA_MMAP_RING;
	entry->buf = *buf;
	err = rdma_user_mmap_entry_insert(uctx, &entry->rdma_entry, buf->size);
	if (err) {
		kfree(entry);
		return ERR_PTR(err);
	}
	return &entry->rdma_entry;
}

/*
 * The ring's object is destroyed.  If the device did not confirm that, it
 * may still write the memory: it is never freed then.
 */
void qhca_mmap_remove_ring(struct rdma_user_mmap_entry *rdma_entry,
			   bool device_done)
{
	if (!rdma_entry)
		return;
	if (!device_done)
		to_qmmap(rdma_entry)->buf.va = NULL;
	rdma_user_mmap_entry_remove(rdma_entry);
}

int qhca_mmap(struct ib_ucontext *ibuctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rdma_entry;
	struct qhca_user_mmap_entry *entry;
	unsigned long pfn;
	pgprot_t prot;
	int err;

	/* Doorbells and rings are data, never code. */
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;
	vm_flags_clear(vma, VM_MAYEXEC);

	/* Only a whole entry, shared: exactly the pages handed out. */
	rdma_entry = rdma_user_mmap_entry_get(ibuctx, vma);
	if (!rdma_entry)
		return -EINVAL;
	entry = to_qmmap(rdma_entry);

	switch (entry->type) {
	case QHCA_MMAP_DB_PAGE:
		pfn = PHYS_PFN(entry->address);
		prot = pgprot_noncached(vma->vm_page_prot);
		break;
	case QHCA_MMAP_RING:
		/* RAM the device reads and writes coherently: cached. */
		pfn = page_to_pfn(virt_to_page(entry->buf.va));
		prot = vma->vm_page_prot;
		break;
	case QHCA_MMAP_DM:
		/*
		 * Device memory in a prefetchable BAR, without side effects:
		 * write-combined, so that stores reach it in bursts, and
		 * reads uncached, so they see what the device wrote.  libqhca
		 * flushes the WC buffers after a copy to it.
		 */
		pfn = PHYS_PFN(entry->address);
		prot = pgprot_writecombine(vma->vm_page_prot);
		break;
	default:
		err = -EINVAL;
		goto out_put;
	}

	/*
	 * rdma_user_mmap_io() makes the mapping VM_IO | VM_PFNMAP |
	 * VM_DONTEXPAND and records it, so that ib_core can zap it when the
	 * device goes away; the mapping holds a reference on the entry.
	 */
	err = rdma_user_mmap_io(ibuctx, vma, pfn,
				rdma_entry->npages * PAGE_SIZE, prot,
				rdma_entry);
out_put:
	rdma_user_mmap_entry_put(rdma_entry);
	return err;
}

void qhca_mmap_free(struct rdma_user_mmap_entry *rdma_entry)
{
	struct qhca_user_mmap_entry *entry = to_qmmap(rdma_entry);
	struct qhca_dev *dev = to_qdev(rdma_entry->ucontext->device);
	int err;

	switch (entry->type) {
	case QHCA_MMAP_DB_PAGE:
		/* A dead device's reset took the page back already. */
		err = qhca_admin_dealloc_uar(dev, entry->uar_index);
		qhca_destroyed(dev, err, "DEALLOC_UAR", entry->uar_index);
		break;
	case QHCA_MMAP_RING:
		qhca_dma_buf_free(dev, &entry->buf);
		break;
	case QHCA_MMAP_DM:
		qhca_dm_mmap_free(dev, entry);
		break;
	}
	kfree(entry);
}
