// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libqhca: device and port queries, protection domains.
 *
 * These all go through the kernel; the provider adds only what uverbs does
 * not carry in a generic form.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qhca.h"
#include "qhca_abi.h"
#include "qhca_verbs.h"
#include "qhca_wq.h"

int qhca_query_device_ex(struct ibv_context *ibctx,
			 const struct ibv_query_device_ex_input *input,
			 struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	uint64_t fw_ver;
	int err;

	err = ibv_cmd_query_device_any(ibctx, input, attr, attr_size, &resp,
				       &resp_size);
	if (err) {
		verbs_err(verbs_get_ctx(ibctx), "QUERY_DEVICE failed: %s\n",
			  strerror(err));
		return err;
	}

	/*
	 * Doorbells and CQEs carry 16-bit ring indices, which tell slots
	 * apart only in rings of at most QHCA_WQ_MAX_DEPTH entries: more
	 * would be refused when the QP is created.
	 */
	if (attr->orig_attr.max_qp_wr > QHCA_WQ_MAX_DEPTH)
		attr->orig_attr.max_qp_wr = QHCA_WQ_MAX_DEPTH;

	/*
	 * uverbs passes the firmware version as a number; the device encodes
	 * it as major << 32 | minor << 16 | micro (the QEMU version).
	 */
	fw_ver = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
		 "%u.%u.%u", (unsigned int)(fw_ver >> 32) & 0xffff,
		 (unsigned int)(fw_ver >> 16) & 0xffff,
		 (unsigned int)fw_ver & 0xffff);
	return 0;
}

int qhca_query_port(struct ibv_context *ibctx, uint8_t port,
		    struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd = {};

	return ibv_cmd_query_port(ibctx, port, attr, &cmd, sizeof(cmd));
}

struct ibv_pd *qhca_alloc_pd(struct ibv_context *ibctx)
{
	struct qhca_alloc_pd_resp resp = {};
	struct ibv_alloc_pd cmd = {};
	struct qhca_pd *pd;
	int err;

	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}

	err = ibv_cmd_alloc_pd(ibctx, &pd->ibv_pd, &cmd, sizeof(cmd),
			       &resp.ibv_resp, sizeof(resp));
	if (err) {
		verbs_err(verbs_get_ctx(ibctx), "ALLOC_PD failed: %s\n",
			  strerror(err));
		free(pd);
		errno = err;
		return NULL;
	}

	/* No response fields are announced by comp_mask yet. */
	pd->pdn = resp.pdn;
	atomic_init(&pd->refcount, 1);
	verbs_debug(verbs_get_ctx(ibctx), "PD %u\n", pd->pdn);
	return &pd->ibv_pd;
}

int qhca_dealloc_pd(struct ibv_pd *ibpd)
{
	struct qhca_pd *pd = to_qhca_pd(ibpd);
	int err;

	if (pd->protection_domain)
		return qhca_dealloc_parent_domain(pd);
	/* Its parent domains stand for it: they go first. */
	if (atomic_load(&pd->refcount) > 1)
		return EBUSY;
	err = ibv_cmd_dealloc_pd(ibpd);
	if (err) {
		verbs_err(verbs_get_ctx(ibpd->context),
			  "DEALLOC_PD %u failed: %s\n", pd->pdn, strerror(err));
		return err;
	}

	free(pd);
	return 0;
}
