// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libqhca: memory regions.
 *
 * The kernel pins the pages and hands their list to the device; the
 * provider has nothing to add, as the keys come back in the generic
 * response.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "qhca.h"
#include "qhca_verbs.h"

struct ibv_mr *qhca_reg_mr(struct ibv_pd *ibpd, void *addr, size_t length,
			   uint64_t hca_va, int access)
{
	struct ib_uverbs_reg_mr_resp resp;
	struct ibv_reg_mr cmd;
	struct verbs_mr *vmr;
	int err;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr) {
		errno = ENOMEM;
		return NULL;
	}

	err = ibv_cmd_reg_mr(ibpd, addr, length, hca_va, access, vmr, &cmd,
			     sizeof(cmd), &resp, sizeof(resp));
	if (err) {
		verbs_err(verbs_get_ctx(ibpd->context),
			  "REG_MR of %zu bytes failed: %s\n", length,
			  strerror(err));
		free(vmr);
		errno = err;
		return NULL;
	}
	return &vmr->ibv_mr;
}

/*
 * ibv_reg_dmabuf_mr(): the kernel attaches the dma-buf and pins it, and
 * the device gets the pages of its sg table as those of any MR.
 */
struct ibv_mr *qhca_reg_dmabuf_mr(struct ibv_pd *ibpd, uint64_t offset,
				  size_t length, uint64_t iova, int fd,
				  int access)
{
	struct verbs_mr *vmr;
	int err;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr) {
		errno = ENOMEM;
		return NULL;
	}

	err = ibv_cmd_reg_dmabuf_mr(ibpd, offset, length, iova, fd, access,
				    vmr, NULL);
	if (err) {
		verbs_err(verbs_get_ctx(ibpd->context),
			  "REG_DMABUF_MR of %zu bytes at %#" PRIx64
			  " of fd %d failed: %s\n", length, offset, fd,
			  strerror(err));
		free(vmr);
		errno = err;
		return NULL;
	}
	return &vmr->ibv_mr;
}

/*
 * ibv_rereg_mr(): the kernel re-pins and the device changes the MR in
 * place, keys included; on any error the old registration is intact, so
 * the MR stays usable whatever libibverbs' return code says.
 */
int qhca_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
		  void *addr, size_t length, int access)
{
	struct ib_uverbs_rereg_mr_resp resp;
	struct ibv_rereg_mr cmd;
	int err;

	err = ibv_cmd_rereg_mr(vmr, flags, addr, length, (uintptr_t)addr,
			       access, pd, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (err) {
		verbs_debug(verbs_get_ctx(vmr->ibv_mr.context),
			    "REREG_MR of lkey 0x%x (flags 0x%x) failed: %s\n",
			    vmr->ibv_mr.lkey, flags, strerror(err));
		errno = err;
	}
	return err;
}

/*
 * ibv_advise_mr(): prefetch advice on ODP MRs.  The kernel checks the
 * PD, the lkeys and ranges and faults the pages in (synchronously with
 * IBV_ADVISE_MR_FLAG_FLUSH); the device learns of them as of any fault
 * the driver resolves, so there is nothing to add here.  The verb
 * returns an errno value rather than setting errno.
 */
int qhca_advise_mr(struct ibv_pd *ibpd, enum ibv_advise_mr_advice advice,
		   uint32_t flags, struct ibv_sge *sg_list, uint32_t num_sge)
{
	int err;

	err = ibv_cmd_advise_mr(ibpd, advice, flags, sg_list, num_sge);
	if (err)
		verbs_debug(verbs_get_ctx(ibpd->context),
			    "ADVISE_MR %d (flags 0x%x) of %u SGEs failed: %s\n",
			    advice, flags, num_sge, strerror(err));
	return err;
}

int qhca_dereg_mr(struct verbs_mr *vmr)
{
	int err;

	err = ibv_cmd_dereg_mr(vmr);
	if (err) {
		verbs_err(verbs_get_ctx(vmr->ibv_mr.context),
			  "DEREG_MR of lkey 0x%x failed: %s\n",
			  vmr->ibv_mr.lkey, strerror(err));
		return err;
	}
	free(vmr);
	return 0;
}

/*
 * ibv_import_mr(): an MR of the kernel context this one shares; uverbs'
 * QUERY_MR gives its keys, length and iova (its address is not known
 * here: the importer may be another process).
 */
struct ibv_mr *qhca_import_mr(struct ibv_pd *ibpd, uint32_t mr_handle)
{
	struct verbs_mr *vmr;
	int err;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr) {
		errno = ENOMEM;
		return NULL;
	}
	err = ibv_cmd_query_mr(ibpd, vmr, mr_handle);
	if (err) {
		verbs_debug(verbs_get_ctx(ibpd->context),
			    "importing MR %u: %s\n", mr_handle, strerror(err));
		free(vmr);
		errno = err;
		return NULL;
	}
	return &vmr->ibv_mr;
}

/* The kernel's MR stays, for whoever deregisters it. */
void qhca_unimport_mr(struct ibv_mr *ibmr)
{
	free(verbs_get_mr(ibmr));
}
