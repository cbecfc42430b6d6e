/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The verbs libqhca implements.  Those it leaves unset in its
 * verbs_context_ops fail in libibverbs with EOPNOTSUPP.
 */
#ifndef QHCA_VERBS_H
#define QHCA_VERBS_H

#include <stddef.h>
#include <stdint.h>

#include <infiniband/driver.h>

int qhca_query_device_ex(struct ibv_context *ibctx,
			 const struct ibv_query_device_ex_input *input,
			 struct ibv_device_attr_ex *attr, size_t attr_size);
int qhca_query_port(struct ibv_context *ibctx, uint8_t port,
		    struct ibv_port_attr *attr);
struct ibv_pd *qhca_alloc_pd(struct ibv_context *ibctx);
int qhca_dealloc_pd(struct ibv_pd *ibpd);

#endif /* QHCA_VERBS_H */
