// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DMA-coherent queue memory: the rings of CQs and QPs.  The device sees one
 * contiguous range; user space maps the same pages (qhca_mmap.c).
 */

#include <linux/dma-mapping.h>
#include <linux/mm.h>

#include "qhca.h"

/*
 * Allocate @size bytes, rounded up to whole pages so that a mapping never
 * exposes anything else, zeroed (a CQ's entries start with phase 0).
 */
int qhca_dma_buf_alloc(struct qhca_dev *dev, struct qhca_dma_buf *buf,
		       size_t size)
{
	size = PAGE_ALIGN(size);
	buf->va = dma_alloc_coherent(&dev->pdev->dev, size, &buf->dma,
				     GFP_KERNEL);
	if (!buf->va)
		return -ENOMEM;
	/* Page aligned, so QHCA_QUEUE_ALIGN aligned. */
	buf->size = size;
	return 0;
}

/* Only once the device no longer uses the memory. */
void qhca_dma_buf_free(struct qhca_dev *dev, struct qhca_dma_buf *buf)
{
	if (!buf->va)
		return;
	dma_free_coherent(&dev->pdev->dev, buf->size, buf->va, buf->dma);
	buf->va = NULL;
}
