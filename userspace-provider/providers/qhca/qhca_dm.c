// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libqhca device memory (QHCA_DEV_CAP_DEVICE_MEMORY): ibv_alloc_dm(),
 * ibv_free_dm(), ibv_reg_dm_mr() and the copies to and from a DM.
 *
 * A DM is a piece of the device's BAR 4, whole pages, that the kernel
 * hands out and that is mapped here on the context's fd, where the copies
 * read and write it.  The mapping is write-combining (qhca.ko maps it
 * so): stores may be merged and reach the device in any order until the
 * write-combining buffers are flushed, reads are uncached.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <util/mmio.h>
#include <util/udma_barrier.h>

#include "qhca.h"
#include "qhca_abi.h"
#include "qhca_verbs.h"

struct qhca_dm {
	struct verbs_dm verbs_dm;
	void *map;			/* the piece, mapped */
	size_t map_len;			/* whole pages */
	size_t length;			/* what was asked for: the bounds */
};

static struct qhca_dm *to_qhca_dm(struct ibv_dm *ibdm)
{
	return container_of(ibdm, struct qhca_dm, verbs_dm.dm);
}

/*
 * Copies move whole 32-bit words at offsets of a multiple of 4, as the
 * device memory of other verbs devices (and rdma-core's tests) expect; a
 * copy outside the DM's length is refused.
 */
#define QHCA_DM_ALIGN	4

static int qhca_dm_check(const struct qhca_dm *dm, uint64_t offset,
			 size_t length)
{
	if ((offset | length) & (QHCA_DM_ALIGN - 1) ||
	    offset > dm->length || length > dm->length - offset)
		return EINVAL;
	return 0;
}

/*
 * Plain memcpy() is right for a write-combining mapping (unlike an
 * uncached one): it takes stores of any width and alignment, and merges
 * them into bursts.  mmio_wc_start() keeps earlier MMIO writes ahead of
 * them, and mmio_flush_writes() gets them out of the write-combining
 * buffers before this returns: a work request the caller posts next,
 * whose doorbell is an uncached store, finds the data in the device.
 */
static int qhca_memcpy_to_dm(struct ibv_dm *ibdm, uint64_t dm_offset,
			     const void *host_addr, size_t length)
{
	struct qhca_dm *dm = to_qhca_dm(ibdm);
	int err;

	err = qhca_dm_check(dm, dm_offset, length);
	if (err)
		return err;
	mmio_wc_start();
	memcpy((uint8_t *)dm->map + dm_offset, host_addr, length);
	mmio_flush_writes();
	return 0;
}

/*
 * Reads of the mapping are uncached; the barrier keeps them after
 * whatever told the caller the device had written (a completion it
 * polled), as for any memory the device writes.
 */
static int qhca_memcpy_from_dm(void *host_addr, struct ibv_dm *ibdm,
			       uint64_t dm_offset, size_t length)
{
	struct qhca_dm *dm = to_qhca_dm(ibdm);
	int err;

	err = qhca_dm_check(dm, dm_offset, length);
	if (err)
		return err;
	udma_from_device_barrier();
	memcpy(host_addr, (const uint8_t *)dm->map + dm_offset, length);
	return 0;
}

struct ibv_dm *qhca_alloc_dm(struct ibv_context *ibctx,
			     struct ibv_alloc_dm_attr *attr)
{
	DECLARE_COMMAND_BUFFER(cmdb, UVERBS_OBJECT_DM, UVERBS_METHOD_DM_ALLOC,
			       2);
	uint64_t mmap_offset = 0, mmap_len = 0;
	struct qhca_dm *dm;
	int err;

	/* No comp_mask bits are defined for the attributes. */
	if (attr->comp_mask) {
		errno = EINVAL;
		return NULL;
	}
	dm = calloc(1, sizeof(*dm));
	if (!dm) {
		errno = ENOMEM;
		return NULL;
	}
	fill_attr_out_ptr(cmdb, QHCA_IB_ATTR_ALLOC_DM_RESP_MMAP_OFFSET,
			  &mmap_offset);
	fill_attr_out_ptr(cmdb, QHCA_IB_ATTR_ALLOC_DM_RESP_MMAP_LENGTH,
			  &mmap_len);
	err = ibv_cmd_alloc_dm(ibctx, attr, &dm->verbs_dm, cmdb);
	if (err)
		goto err_free;

	/* The kernel rounds up to pages: never less than asked for. */
	if (mmap_len < attr->length) {
		verbs_err(verbs_get_ctx(ibctx),
			  "DM of %zu bytes mapped in %llu\n", attr->length,
			  (unsigned long long)mmap_len);
		err = EIO;
		goto err_cmd;
	}
	dm->map = mmap(NULL, mmap_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       ibctx->cmd_fd, mmap_offset);
	if (dm->map == MAP_FAILED) {
		err = errno;
		verbs_err(verbs_get_ctx(ibctx), "mapping a DM failed: %s\n",
			  strerror(err));
		goto err_cmd;
	}
	dm->map_len = mmap_len;
	dm->length = attr->length;
	dm->verbs_dm.dm.memcpy_to_dm = qhca_memcpy_to_dm;
	dm->verbs_dm.dm.memcpy_from_dm = qhca_memcpy_from_dm;
	return &dm->verbs_dm.dm;

err_cmd:
	ibv_cmd_free_dm(&dm->verbs_dm);
err_free:
	free(dm);
	errno = err;
	return NULL;
}

/* The kernel takes the pages back once they are unmapped too. */
int qhca_free_dm(struct ibv_dm *ibdm)
{
	struct qhca_dm *dm = to_qhca_dm(ibdm);
	int err;

	err = ibv_cmd_free_dm(&dm->verbs_dm);
	if (err)
		return err;
	munmap(dm->map, dm->map_len);
	free(dm);
	return 0;
}

/*
 * ibv_import_dm(): a DM of the kernel context this one shares.  The
 * kernel says where it maps (the fd's mmap offsets are the context's, so
 * the exporter's offset reaches the same pages here) and the length it
 * was allocated with, which bounds the copies as it does the exporter's.
 */
struct ibv_dm *qhca_import_dm(struct ibv_context *ibctx, uint32_t dm_handle)
{
	DECLARE_COMMAND_BUFFER(cmdb, UVERBS_OBJECT_DM, QHCA_IB_METHOD_DM_QUERY,
			       4);
	uint64_t mmap_offset = 0, mmap_len = 0, length = 0;
	struct qhca_dm *dm;
	int err;

	dm = calloc(1, sizeof(*dm));
	if (!dm) {
		errno = ENOMEM;
		return NULL;
	}
	fill_attr_in_obj(cmdb, QHCA_IB_ATTR_QUERY_DM_HANDLE, dm_handle);
	fill_attr_out_ptr(cmdb, QHCA_IB_ATTR_QUERY_DM_RESP_MMAP_OFFSET,
			  &mmap_offset);
	fill_attr_out_ptr(cmdb, QHCA_IB_ATTR_QUERY_DM_RESP_MMAP_LENGTH,
			  &mmap_len);
	fill_attr_out_ptr(cmdb, QHCA_IB_ATTR_QUERY_DM_RESP_LENGTH, &length);
	err = execute_ioctl(ibctx, cmdb);
	if (err) {
		verbs_debug(verbs_get_ctx(ibctx), "importing DM %u: %s\n",
			    dm_handle, strerror(err));
		goto err_free;
	}
	if (mmap_len < length || mmap_len > SIZE_MAX) {
		verbs_err(verbs_get_ctx(ibctx),
			  "DM %u of %llu bytes mapped in %llu\n", dm_handle,
			  (unsigned long long)length,
			  (unsigned long long)mmap_len);
		err = EIO;
		goto err_free;
	}
	dm->map = mmap(NULL, mmap_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       ibctx->cmd_fd, mmap_offset);
	if (dm->map == MAP_FAILED) {
		err = errno;
		verbs_err(verbs_get_ctx(ibctx), "mapping DM %u failed: %s\n",
			  dm_handle, strerror(err));
		goto err_free;
	}
	dm->map_len = mmap_len;
	dm->length = length;
	dm->verbs_dm.handle = dm_handle;
	dm->verbs_dm.dm.handle = dm_handle;
	dm->verbs_dm.dm.context = ibctx;
	dm->verbs_dm.dm.memcpy_to_dm = qhca_memcpy_to_dm;
	dm->verbs_dm.dm.memcpy_from_dm = qhca_memcpy_from_dm;
	return &dm->verbs_dm.dm;

err_free:
	free(dm);
	errno = err;
	return NULL;
}

/* The kernel's DM stays, for whoever frees it; this mapping goes. */
void qhca_unimport_dm(struct ibv_dm *ibdm)
{
	struct qhca_dm *dm = to_qhca_dm(ibdm);

	munmap(dm->map, dm->map_len);
	free(dm);
}

/* Zero-based, as every DM MR: ibv_cmd_reg_dm_mr() insists. */
struct ibv_mr *qhca_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *ibdm,
			      uint64_t dm_offset, size_t length,
			      unsigned int access)
{
	struct qhca_dm *dm = to_qhca_dm(ibdm);
	struct verbs_mr *vmr;
	int err;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr) {
		errno = ENOMEM;
		return NULL;
	}
	err = ibv_cmd_reg_dm_mr(pd, &dm->verbs_dm, dm_offset, length, access,
				vmr, NULL);
	if (err) {
		free(vmr);
		errno = err;
		return NULL;
	}
	/* qhca_dereg_mr() frees it as any other MR. */
	return &vmr->ibv_mr;
}
