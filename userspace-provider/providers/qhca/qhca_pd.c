// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libqhca: thread domains, parent domains, imported PDs.
 *
 * Neither exists in the kernel.  A parent domain is an ibv_pd with its
 * protection domain's handle, so every command that names it names that
 * PD; what it adds is the application's allocator, which libqhca calls
 * for the memory it allocates for the CQs and SRQs made on the parent
 * domain.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "qhca.h"
#include "qhca_abi.h"
#include "qhca_verbs.h"

/* The allocator gets this alignment: a cache line, the marks' unit. */
#define QHCA_PD_ALLOC_ALIGN	64

struct ibv_td *qhca_alloc_td(struct ibv_context *ibctx,
			     struct ibv_td_init_attr *attr)
{
	struct qhca_td *td;

	/* No comp_mask bits are defined. */
	if (attr->comp_mask) {
		errno = EINVAL;
		return NULL;
	}
	td = calloc(1, sizeof(*td));
	if (!td) {
		errno = ENOMEM;
		return NULL;
	}
	td->ibv_td.context = ibctx;
	atomic_init(&td->refcount, 1);
	return &td->ibv_td;
}

int qhca_dealloc_td(struct ibv_td *ibtd)
{
	struct qhca_td *td = container_of(ibtd, struct qhca_td, ibv_td);

	if (atomic_load(&td->refcount) > 1)
		return EBUSY;
	free(td);
	return 0;
}

struct ibv_pd *qhca_alloc_parent_domain(struct ibv_context *ibctx,
					struct ibv_parent_domain_init_attr *attr)
{
	struct qhca_pd *pdom, *pd;

	if (ibv_check_alloc_parent_domain(attr))
		return NULL;
	if (!check_comp_mask(attr->comp_mask,
			     IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
			     IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT) ||
	    attr->pd->context != ibctx ||
	    (attr->td && attr->td->context != ibctx)) {
		errno = EINVAL;
		return NULL;
	}
	pd = to_qhca_pd(attr->pd);
	/* A parent domain stands for a PD, never for another one. */
	if (pd->protection_domain) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS &&
	    (!attr->alloc || !attr->free)) {
		errno = EINVAL;
		return NULL;
	}

	pdom = calloc(1, sizeof(*pdom));
	if (!pdom) {
		errno = ENOMEM;
		return NULL;
	}
	ibv_initialize_parent_domain(&pdom->ibv_pd, &pd->ibv_pd);
	pdom->pdn = pd->pdn;
	pdom->protection_domain = pd;
	atomic_init(&pdom->refcount, 1);
	atomic_fetch_add(&pd->refcount, 1);
	if (attr->td) {
		pdom->td = container_of(attr->td, struct qhca_td, ibv_td);
		atomic_fetch_add(&pdom->td->refcount, 1);
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) {
		pdom->alloc = attr->alloc;
		pdom->free = attr->free;
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
		pdom->pd_context = attr->pd_context;
	return &pdom->ibv_pd;
}

/* ibv_dealloc_pd() of a parent domain: nothing in the kernel. */
int qhca_dealloc_parent_domain(struct qhca_pd *pdom)
{
	if (atomic_load(&pdom->refcount) > 1)
		return EBUSY;
	atomic_fetch_sub(&pdom->protection_domain->refcount, 1);
	if (pdom->td)
		atomic_fetch_sub(&pdom->td->refcount, 1);
	free(pdom);
	return 0;
}

/*
 * size zeroed bytes for a queue made on ibpd, from its allocator if it
 * is a parent domain with one that does not defer to libqhca
 * (IBV_ALLOCATOR_USE_DEFAULT), else from calloc(); *custom says which,
 * for qhca_pd_free().  NULL if there is no memory.
 */
void *qhca_pd_calloc(struct ibv_pd *ibpd, size_t size, uint64_t type,
		     bool *custom)
{
	struct qhca_pd *pd = ibpd ? to_qhca_pd(ibpd) : NULL;
	void *ptr;

	*custom = false;
	if (pd && pd->alloc) {
		ptr = pd->alloc(ibpd, pd->pd_context, size,
				QHCA_PD_ALLOC_ALIGN, type);
		if (ptr != IBV_ALLOCATOR_USE_DEFAULT) {
			if (!ptr)
				return NULL;
			*custom = true;
			memset(ptr, 0, size);
			return ptr;
		}
	}
	return calloc(1, size);
}

void qhca_pd_free(struct ibv_pd *ibpd, void *ptr, uint64_t type, bool custom)
{
	struct qhca_pd *pd;

	if (!custom) {
		free(ptr);
		return;
	}
	pd = to_qhca_pd(ibpd);
	pd->free(ibpd, pd->pd_context, ptr, type);
}

/*
 * A QP, CQ or SRQ made on ibpd holds a parent domain, which the kernel
 * does not know of (and whose allocator frees a CQ's or SRQ's memory when
 * it is destroyed); a plain PD is held by the kernel.
 */
void qhca_pd_get(struct ibv_pd *ibpd)
{
	if (ibpd && to_qhca_pd(ibpd)->protection_domain)
		atomic_fetch_add(&to_qhca_pd(ibpd)->refcount, 1);
}

void qhca_pd_put(struct ibv_pd *ibpd)
{
	if (ibpd && to_qhca_pd(ibpd)->protection_domain)
		atomic_fetch_sub(&to_qhca_pd(ibpd)->refcount, 1);
}

/*
 * ibv_import_pd(): a PD of the kernel context this one shares, by its
 * handle; the kernel checks the handle is a PD's and gives its number.
 */
struct ibv_pd *qhca_import_pd(struct ibv_context *ibctx, uint32_t pd_handle)
{
	DECLARE_COMMAND_BUFFER(cmdb, UVERBS_OBJECT_PD, QHCA_IB_METHOD_PD_QUERY,
			       2);
	struct qhca_pd *pd;
	int err;

	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	fill_attr_in_obj(cmdb, QHCA_IB_ATTR_QUERY_PD_HANDLE, pd_handle);
	fill_attr_out_ptr(cmdb, QHCA_IB_ATTR_QUERY_PD_RESP_PDN, &pd->pdn);
	err = execute_ioctl(ibctx, cmdb);
	if (err) {
		verbs_debug(verbs_get_ctx(ibctx), "importing PD %u: %s\n",
			    pd_handle, strerror(err));
		free(pd);
		errno = err;
		return NULL;
	}
	pd->ibv_pd.context = ibctx;
	pd->ibv_pd.handle = pd_handle;
	atomic_init(&pd->refcount, 1);
	return &pd->ibv_pd;
}

/* The kernel's PD stays, for whoever deallocates it. */
void qhca_unimport_pd(struct ibv_pd *ibpd)
{
	free(to_qhca_pd(ibpd));
}
