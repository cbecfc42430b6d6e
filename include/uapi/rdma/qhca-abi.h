/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR Linux-OpenIB) */
/*
 * qhca user verbs ABI: the driver-specific data that libqhca and qhca.ko
 * exchange through uverbs udata.
 *
 * Rules, as for every uverbs ABI:
 *  - Every structure is a multiple of 8 bytes, with explicit reserved fields
 *    where padding would be; __aligned_u64 for 64-bit members.
 *  - Requests start with comp_mask.  The driver rejects unknown comp_mask
 *    bits and non-zero reserved fields with EINVAL, and accepts a request
 *    that is longer than it knows only if the excess is zero.  A shorter
 *    request (an older provider) reads as if zero-extended.
 *  - Responses start with comp_mask too.  The driver writes at most the
 *    length user space offered, so an older provider still works; a new
 *    field is added at the end and announced by a comp_mask bit.
 *  - A field is never removed or reinterpreted; the version below changes
 *    only when compatibility is broken on purpose.
 */
#ifndef QHCA_ABI_USER_H
#define QHCA_ABI_USER_H

#include <linux/types.h>
#include <rdma/ib_user_ioctl_cmds.h>

#define QHCA_UVERBS_ABI_VERSION 1

struct qhca_ibv_alloc_ucontext_req {
	__u32 comp_mask;	/* none defined */
	__u32 reserved;
};

struct qhca_ibv_alloc_ucontext_resp {
	__u32 comp_mask;	/* none defined */
	__u32 uar_index;	/* the context's doorbell page in BAR 2 */
	__aligned_u64 db_mmap_key;	/* mmap() offset of that page */
	__u32 db_page_size;
	__u32 max_inline_data;
	__u32 hw_version;	/* the device's VERSION register */
	__u32 reserved;
};

struct qhca_ibv_alloc_pd_resp {
	__u32 comp_mask;	/* none defined */
	__u32 pdn;
};

/* CREATE_CQ: the driver allocates the ring; the provider maps it. */
struct qhca_ibv_create_cq_req {
	__u32 comp_mask;	/* none defined */
	__u32 reserved;
};

struct qhca_ibv_create_cq_resp {
	__u32 comp_mask;	/* none defined */
	__u32 cqn;
	__aligned_u64 ring_mmap_key;	/* mmap() offset of ring and record */
	__u32 ring_mmap_size;	/* bytes to map at that offset */
	__u32 cqe_count;	/* ring entries, a power of two */
	__u32 dbrec_offset;	/* consumer index record in the mapping */
	__u32 cqe_size;		/* sizeof(struct qhca_cqe) */
};

/*
 * ibv_resize_cq (QHCA_DEV_CAP_RESIZE_CQ): the driver allocates a new ring
 * and consumer record, the device copies the CQEs from ci on into it
 * (RESIZE_CQ), and the provider maps it in place of the old one, whose
 * mapping it then drops.  ci is the provider's free-running consumer
 * index; it polls nothing while the call runs.
 */
struct qhca_ibv_resize_cq_req {
	__u32 comp_mask;	/* none defined */
	__u32 ci;
};

struct qhca_ibv_resize_cq_resp {
	__u32 comp_mask;	/* none defined */
	__u32 cqe_count;	/* ring entries, a power of two */
	__aligned_u64 ring_mmap_key;	/* mmap() offset of ring and record */
	__u32 ring_mmap_size;	/* bytes to map at that offset */
	__u32 dbrec_offset;	/* consumer index record in the mapping */
};

/* CREATE_QP: the driver allocates the SQ and RQ; the provider maps them. */
struct qhca_ibv_create_qp_req {
	__u32 comp_mask;	/* none defined */
	__u32 reserved;
};

struct qhca_ibv_create_qp_resp {
	__u32 comp_mask;	/* none defined */
	__u32 qpn;
	__aligned_u64 sq_mmap_key;
	__aligned_u64 rq_mmap_key;
	__u32 sq_mmap_size;
	__u32 rq_mmap_size;
	__u32 sq_depth;		/* WQEs, a power of two */
	__u32 sq_stride;	/* bytes per WQE */
	__u32 rq_depth;
	__u32 rq_stride;
	__u32 max_inline_data;
	__u32 max_send_sge;
	__u32 max_recv_sge;
	__u32 reserved;
};

/*
 * CREATE_SRQ: the driver allocates the ring of receive WQEs; the provider
 * maps it and rings QHCA_DB_SRQ of its context's doorbell page.
 */
struct qhca_ibv_create_srq_req {
	__u32 comp_mask;	/* none defined */
	__u32 reserved;
};

struct qhca_ibv_create_srq_resp {
	__u32 comp_mask;	/* none defined */
	__u32 srqn;
	__aligned_u64 ring_mmap_key;	/* mmap() offset of the ring */
	__u32 ring_mmap_size;	/* bytes to map at that offset */
	__u32 depth;		/* WQEs, a power of two */
	__u32 stride;		/* bytes per WQE */
	__u32 max_sge;
};

/*
 * MODIFY_SRQ with IBV_SRQ_MAX_WR (QHCA_DEV_CAP_RESIZE_SRQ): the driver
 * allocates the new ring, the device moves the posted WQEs into it, and
 * the provider maps it in place of the old one.  uverbs' MODIFY_SRQ has
 * no response, so the provider names a buffer for it (as rxe does):
 * resp_len bytes of struct qhca_ibv_modify_srq_resp at resp_addr, written
 * before the device resizes.  A resize without resp_addr is EOPNOTSUPP.
 * The provider must post nothing to the SRQ while the call runs.
 */
struct qhca_ibv_modify_srq_req {
	__u32 comp_mask;	/* none defined */
	__u32 resp_len;		/* bytes at resp_addr */
	__aligned_u64 resp_addr;	/* MAX_WR: the response, user memory */
};

struct qhca_ibv_modify_srq_resp {
	__u32 comp_mask;	/* none defined */
	__u32 depth;		/* WQEs of the new ring, a power of two */
	__aligned_u64 ring_mmap_key;	/* mmap() offset of the new ring */
	__u32 ring_mmap_size;	/* bytes to map at that offset */
	__u32 reserved;
};

/*
 * ibv_create_ah() on an Ethernet (RoCEv2) port: libqhca asks the kernel,
 * which resolves the destination MAC (ib_core's neighbour lookup), as
 * mlx5 does; on an IB port libqhca builds the AH without a system call.
 * The kernel keeps no AH state for it beyond the uverbs object.
 */
struct qhca_ibv_create_ah_resp {
	__u32 comp_mask;	/* none defined */
	__u8 dmac[6];		/* the next hop's MAC, for the UD WQE */
	__u8 reserved[6];
};

/*
 * ibv_alloc_dm() (QHCA_DEV_CAP_DEVICE_MEMORY): uverbs' DM_ALLOC method
 * with these driver attributes, which the driver fills.  A DM is a piece
 * of BAR 4 of whole pages; the provider maps the piece on the context's
 * fd, MMAP_LENGTH bytes (the requested length rounded up to pages) at
 * MMAP_OFFSET.  Both are mandatory: the driver refuses a DM_ALLOC without
 * them.
 */
enum qhca_ib_alloc_dm_attrs {
	QHCA_IB_ATTR_ALLOC_DM_RESP_MMAP_OFFSET = (1U << UVERBS_ID_NS_SHIFT),
	QHCA_IB_ATTR_ALLOC_DM_RESP_MMAP_LENGTH,
};

/*
 * Sharing a context (ibv_import_device() on a dup of its fd) and its
 * objects: uverbs' QUERY_CONTEXT carries the context's GET_CONTEXT
 * response again, so that the importer maps the same doorbell page; PD
 * and DM handles are looked up with the driver methods below, which an
 * importer needs to rebuild the provider's state (a PD's number, where
 * a DM is mapped: the ufile is one, so are the mmap offsets).
 */
enum qhca_ib_query_context_attrs {
	QHCA_IB_ATTR_QUERY_CONTEXT_RESP_UCTX = (1U << UVERBS_ID_NS_SHIFT),
};

enum qhca_ib_pd_methods {
	QHCA_IB_METHOD_PD_QUERY = (1U << UVERBS_ID_NS_SHIFT),
};

enum qhca_ib_query_pd_attrs {
	QHCA_IB_ATTR_QUERY_PD_HANDLE = (1U << UVERBS_ID_NS_SHIFT),
	QHCA_IB_ATTR_QUERY_PD_RESP_PDN,		/* u32 */
};

enum qhca_ib_dm_methods {
	QHCA_IB_METHOD_DM_QUERY = (1U << UVERBS_ID_NS_SHIFT),
};

/* As DM_ALLOC's: map MMAP_LENGTH bytes at MMAP_OFFSET; LENGTH as asked. */
enum qhca_ib_query_dm_attrs {
	QHCA_IB_ATTR_QUERY_DM_HANDLE = (1U << UVERBS_ID_NS_SHIFT),
	QHCA_IB_ATTR_QUERY_DM_RESP_MMAP_OFFSET,	/* u64 */
	QHCA_IB_ATTR_QUERY_DM_RESP_MMAP_LENGTH,	/* u64 */
	QHCA_IB_ATTR_QUERY_DM_RESP_LENGTH,	/* u64 */
};

#endif /* QHCA_ABI_USER_H */
