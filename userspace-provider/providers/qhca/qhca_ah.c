// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libqhca: address handles.  ibv_create_ah() checks the attributes against
 * what the port has (one port, its GID table) and what an address vector
 * holds (QHCA_AV_*_MAX), and prebuilds the WQE's address vector.  On an
 * IB port the kernel is never asked.  On an Ethernet (RoCEv2) port the
 * vector needs the next hop's MAC, which only the kernel can resolve (its
 * neighbour table), so the AH is made there too and the create-AH
 * response carries the MAC, as mlx5 does it.  ibv_create_ah_from_wc()
 * works through ibv_query_port() and ibv_query_gid(), which the kernel
 * answers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "qhca.h"
#include "qhca_abi.h"
#include "qhca_ah.h"

#define QHCA_AH_PORT		1

static bool qhca_ah_attr_ok(const struct qhca_context *ctx,
			    const struct ibv_ah_attr *attr)
{
	if (attr->port_num != QHCA_AH_PORT || attr->sl > QHCA_AV_SL_MAX)
		return false;
	/* RoCEv2 addresses are the GRH's: there is no LID to route by. */
	if (!attr->is_global)
		return !qhca_ctx_is_eth(ctx);
	return attr->grh.sgid_index < ctx->gid_tbl_len;
}

/* The kernel makes the AH and tells the MAC it resolved for it. */
static int qhca_create_kernel_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr,
				 struct qhca_ah *ah)
{
	struct qhca_create_ah_resp resp = {};
	int err;

	err = ibv_cmd_create_ah(pd, &ah->ibv_ah, attr, &resp.ibv_resp,
				sizeof(resp));
	if (err)
		return err;
	/* No response fields are announced by comp_mask yet. */
	memcpy(ah->av.dmac, resp.dmac, sizeof(ah->av.dmac));
	ah->kernel = true;
	return 0;
}

struct ibv_ah *qhca_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct qhca_context *ctx = to_qhca_ctx(pd->context);
	struct qhca_ah *ah;
	int err;

	if (!qhca_ah_attr_ok(ctx, attr)) {
		errno = EINVAL;
		return NULL;
	}

	ah = calloc(1, sizeof(*ah));
	if (!ah) {
		errno = ENOMEM;
		return NULL;
	}
	/* An Ethernet port has no LIDs: the WQE's stays 0. */
	if (!qhca_ctx_is_eth(ctx))
		ah->av.dlid = htole16(attr->dlid);
	ah->av.sl = attr->sl;
	if (attr->is_global) {
		ah->av.av_flags = QHCA_AV_F_GRH;
		memcpy(ah->av.dgid, attr->grh.dgid.raw, sizeof(ah->av.dgid));
		/*
		 * The flow label is 20 bits; the bits above are ignored, as
		 * every provider does.  UCX relies on it: on RoCE it passes
		 * ~(path factor * path index), all ones for path 0.
		 */
		ah->av.flow_label = htole32(attr->grh.flow_label &
					    QHCA_AV_FLOW_LABEL_MAX);
		ah->av.hop_limit = attr->grh.hop_limit;
		ah->av.traffic_class = attr->grh.traffic_class;
		ah->av.sgid_index = attr->grh.sgid_index;
	}
	if (qhca_ctx_is_eth(ctx)) {
		err = qhca_create_kernel_ah(pd, attr, ah);
		if (err) {
			verbs_debug(&ctx->ibv_ctx, "CREATE_AH failed: %s\n",
				    strerror(err));
			free(ah);
			errno = err;
			return NULL;
		}
	}
	return &ah->ibv_ah;
}

int qhca_destroy_ah(struct ibv_ah *ibah)
{
	struct qhca_ah *ah = to_qhca_ah(ibah);
	int err;

	if (ah->kernel) {
		err = ibv_cmd_destroy_ah(ibah);
		if (err)
			return err;
	}
	free(ah);
	return 0;
}

/* Multicast groups live in the device: the kernel attaches the QP. */
int qhca_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
		      uint16_t lid)
{
	return ibv_cmd_attach_mcast(qp, gid, lid);
}

int qhca_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
		      uint16_t lid)
{
	return ibv_cmd_detach_mcast(qp, gid, lid);
}
