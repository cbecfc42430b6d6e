// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libqhca: address handles, made in user space as real providers make
 * them.  ibv_create_ah() checks the attributes against what the port has
 * (one port, one GID) and what an address vector holds (QHCA_AV_*_MAX),
 * and prebuilds the WQE's address vector; the kernel is never asked.
 * ibv_create_ah_from_wc() works through ibv_query_port() and
 * ibv_query_gid(), which the kernel answers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "qhca.h"
#include "qhca_ah.h"

#define QHCA_AH_PORT		1
#define QHCA_AH_GID_TBL_LEN	1

struct ibv_ah *qhca_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct qhca_ah *ah;

	if (attr->port_num != QHCA_AH_PORT || attr->sl > QHCA_AV_SL_MAX ||
	    (attr->is_global &&
	     (attr->grh.sgid_index >= QHCA_AH_GID_TBL_LEN ||
	      attr->grh.flow_label > QHCA_AV_FLOW_LABEL_MAX))) {
		errno = EINVAL;
		return NULL;
	}

	ah = calloc(1, sizeof(*ah));
	if (!ah) {
		errno = ENOMEM;
		return NULL;
	}
	ah->av.dlid = htole16(attr->dlid);
	ah->av.sl = attr->sl;
	if (attr->is_global) {
		ah->av.av_flags = QHCA_AV_F_GRH;
		memcpy(ah->av.dgid, attr->grh.dgid.raw, sizeof(ah->av.dgid));
		ah->av.flow_label = htole32(attr->grh.flow_label);
		ah->av.hop_limit = attr->grh.hop_limit;
		ah->av.traffic_class = attr->grh.traffic_class;
		ah->av.sgid_index = attr->grh.sgid_index;
	}
	return &ah->ibv_ah;
}

int qhca_destroy_ah(struct ibv_ah *ibah)
{
	free(to_qhca_ah(ibah));
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
