/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * libqhca address handles.  The device has no AH object: each UD send
 * WQE carries its whole address vector.  An AH is that vector, checked
 * and prebuilt in the WQE's byte order when it is created (on an IB port
 * without a system call; on an Ethernet port the kernel resolves its
 * MAC), and copied into every WQE that uses it.
 */
#ifndef QHCA_AH_H
#define QHCA_AH_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <infiniband/driver.h>

#include "qhca_hw.h"

/* The address vector fields of struct qhca_sq_wqe_ud, ready to copy. */
struct qhca_av {
	__le16 dlid;
	uint8_t sl;
	uint8_t av_flags;		/* QHCA_AV_F_* */
	uint8_t dgid[16];
	__le32 flow_label;
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint8_t sgid_index;
	uint8_t dmac[6];		/* 1.5, Ethernet port: from the kernel */
};

struct qhca_ah {
	struct ibv_ah ibv_ah;
	struct qhca_av av;
	bool kernel;			/* made by the kernel: destroy it there */
};

static inline struct qhca_ah *to_qhca_ah(struct ibv_ah *ibah)
{
	return container_of(ibah, struct qhca_ah, ibv_ah);
}

/*
 * Write the UD part of a send WQE: every field from dest_qpn to the end of
 * the header, so that nothing an RC build of the same slot left behind
 * survives.  inline_len is not touched.  EINVAL for a QPN over 24 bits.
 * A remote_qkey with bit 31 set asks the device for the QP's own Q_Key.
 */
static inline int qhca_wqe_set_ud(struct qhca_sq_wqe_ud *wqe,
				  const struct qhca_ah *ah,
				  uint32_t remote_qpn, uint32_t remote_qkey)
{
	const struct qhca_av *av = &ah->av;

	if (remote_qpn & ~QHCA_UD_QPN_MASK)
		return EINVAL;
	wqe->dest_qpn = htole32(remote_qpn);
	wqe->qkey = htole32(remote_qkey);
	wqe->dlid = av->dlid;
	wqe->sl = av->sl;
	wqe->av_flags = av->av_flags;
	memcpy(wqe->dgid, av->dgid, sizeof(wqe->dgid));
	wqe->flow_label = av->flow_label;
	wqe->hop_limit = av->hop_limit;
	wqe->traffic_class = av->traffic_class;
	wqe->sgid_index = av->sgid_index;
	wqe->rsvd1 = 0;
	memcpy(wqe->dmac, av->dmac, sizeof(wqe->dmac));
	wqe->rsvd2 = 0;
	return 0;
}

/* qhca_ah.c */
struct ibv_ah *qhca_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr);
int qhca_destroy_ah(struct ibv_ah *ah);
int qhca_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
		      uint16_t lid);
int qhca_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
		      uint16_t lid);

#endif /* QHCA_AH_H */
