/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * libqhca: the rdma-core provider for qhca, QEMU's emulated InfiniBand HCA.
 */
#ifndef QHCA_H
#define QHCA_H

#include <stdint.h>

#include <infiniband/driver.h>
#include <util/util.h>

struct qhca_device {
	struct verbs_device ibv_dev;
};

struct qhca_context {
	struct verbs_context ibv_ctx;
	/*
	 * The context's own doorbell page (its UAR) in BAR 2, mapped
	 * write-only.  Every queue of the context rings its doorbells here,
	 * so it lives as long as the context.
	 */
	void *db_page;
	uint32_t db_page_size;
	uint32_t uar_index;
	uint32_t max_inline_data;
	uint32_t hw_version;
};

struct qhca_pd {
	struct ibv_pd ibv_pd;
	uint32_t pdn;
};

static inline struct qhca_context *to_qhca_ctx(struct ibv_context *ibctx)
{
	return container_of(ibctx, struct qhca_context, ibv_ctx.context);
}

static inline struct qhca_pd *to_qhca_pd(struct ibv_pd *ibpd)
{
	return container_of(ibpd, struct qhca_pd, ibv_pd);
}

#endif /* QHCA_H */
