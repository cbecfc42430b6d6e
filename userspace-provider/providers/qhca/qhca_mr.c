// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libqhca: memory regions.
 *
 * The kernel pins the pages and hands their list to the device; the
 * provider has nothing to add, as the keys come back in the generic
 * response.
 */
#include <errno.h>
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
