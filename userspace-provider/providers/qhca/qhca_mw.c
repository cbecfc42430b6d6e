// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libqhca: memory windows.
 *
 * The kernel allocates a window and hands back its first rkey; binding is
 * a BIND_MW WQE on a QP.  ibv_bind_mw() (type 1) posts that WQE here with
 * the next key, as posting IBV_WR_BIND_MW does for type 2 with the key
 * the consumer chose; the device checks the MR, range and access and
 * reports a bad bind in the completion.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "qhca.h"
#include "qhca_verbs.h"

struct ibv_mw *qhca_alloc_mw(struct ibv_pd *ibpd, enum ibv_mw_type type)
{
	struct ib_uverbs_alloc_mw_resp resp;
	struct ibv_alloc_mw cmd;
	struct ibv_mw *mw;
	int err;

	if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2) {
		errno = EINVAL;
		return NULL;
	}
	mw = calloc(1, sizeof(*mw));
	if (!mw) {
		errno = ENOMEM;
		return NULL;
	}
	err = ibv_cmd_alloc_mw(ibpd, type, mw, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (err) {
		verbs_err(verbs_get_ctx(ibpd->context),
			  "ALLOC_MW of type %d failed: %s\n", type,
			  strerror(err));
		free(mw);
		errno = err;
		return NULL;
	}
	return mw;
}

int qhca_dealloc_mw(struct ibv_mw *mw)
{
	int err;

	err = ibv_cmd_dealloc_mw(mw);
	if (err)
		return err;
	free(mw);
	return 0;
}

int qhca_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw,
		 struct ibv_mw_bind *mw_bind)
{
	struct ibv_send_wr wr = {
		.wr_id = mw_bind->wr_id,
		.opcode = IBV_WR_BIND_MW,
		.send_flags = mw_bind->send_flags,
		.bind_mw = {
			.mw = mw,
			.rkey = ibv_inc_rkey(mw->rkey),
			.bind_info = mw_bind->bind_info,
		},
	};
	struct ibv_send_wr *bad_wr;
	int err;

	/* ibv_bind_mw() checked the type and that the PDs match. */
	err = qhca_post_send(ibqp, &wr, &bad_wr);
	if (err)
		return err;
	/* The key from now on, as the consumer will pass it to its peer. */
	mw->rkey = wr.bind_mw.rkey;
	return 0;
}
