/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The verbs libqhca implements.  Those it leaves unset in its
 * verbs_context_ops fail in libibverbs with EOPNOTSUPP.
 */
#ifndef QHCA_VERBS_H
#define QHCA_VERBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/driver.h>

/* qhca_verbs.c */
int qhca_query_device_ex(struct ibv_context *ibctx,
			 const struct ibv_query_device_ex_input *input,
			 struct ibv_device_attr_ex *attr, size_t attr_size);
int qhca_query_port(struct ibv_context *ibctx, uint8_t port,
		    struct ibv_port_attr *attr);
struct ibv_pd *qhca_alloc_pd(struct ibv_context *ibctx);
int qhca_dealloc_pd(struct ibv_pd *ibpd);

/* qhca_pd.c */
struct ibv_td *qhca_alloc_td(struct ibv_context *ibctx,
			     struct ibv_td_init_attr *attr);
int qhca_dealloc_td(struct ibv_td *ibtd);
struct ibv_pd *qhca_alloc_parent_domain(struct ibv_context *ibctx,
					struct ibv_parent_domain_init_attr *attr);
struct qhca_pd;
int qhca_dealloc_parent_domain(struct qhca_pd *pdom);
void *qhca_pd_calloc(struct ibv_pd *ibpd, size_t size, uint64_t type,
		     bool *custom);
void qhca_pd_free(struct ibv_pd *ibpd, void *ptr, uint64_t type, bool custom);
void qhca_pd_get(struct ibv_pd *ibpd);
void qhca_pd_put(struct ibv_pd *ibpd);
struct ibv_pd *qhca_import_pd(struct ibv_context *ibctx, uint32_t pd_handle);
void qhca_unimport_pd(struct ibv_pd *ibpd);

/* qhca_mr.c */
struct ibv_mw *qhca_alloc_mw(struct ibv_pd *ibpd, enum ibv_mw_type type);
int qhca_dealloc_mw(struct ibv_mw *mw);
int qhca_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw,
		 struct ibv_mw_bind *mw_bind);
struct ibv_mr *qhca_reg_mr(struct ibv_pd *ibpd, void *addr, size_t length,
			   uint64_t hca_va, int access);
int qhca_dereg_mr(struct verbs_mr *vmr);
int qhca_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
		  void *addr, size_t length, int access);
struct ibv_mr *qhca_reg_dmabuf_mr(struct ibv_pd *ibpd, uint64_t offset,
				  size_t length, uint64_t iova, int fd,
				  int access);
int qhca_advise_mr(struct ibv_pd *ibpd, enum ibv_advise_mr_advice advice,
		   uint32_t flags, struct ibv_sge *sg_list, uint32_t num_sge);
struct ibv_mr *qhca_import_mr(struct ibv_pd *ibpd, uint32_t mr_handle);
void qhca_unimport_mr(struct ibv_mr *ibmr);

/* qhca_dm.c */
struct ibv_dm *qhca_alloc_dm(struct ibv_context *ibctx,
			     struct ibv_alloc_dm_attr *attr);
int qhca_free_dm(struct ibv_dm *ibdm);
struct ibv_mr *qhca_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *ibdm,
			      uint64_t dm_offset, size_t length,
			      unsigned int access);
struct ibv_dm *qhca_import_dm(struct ibv_context *ibctx, uint32_t dm_handle);
void qhca_unimport_dm(struct ibv_dm *ibdm);

/* qhca_cq.c */
struct ibv_cq *qhca_create_cq(struct ibv_context *ibctx, int cqe,
			      struct ibv_comp_channel *channel,
			      int comp_vector);
int qhca_destroy_cq(struct ibv_cq *ibcq);
int qhca_req_notify_cq(struct ibv_cq *ibcq, int solicited_only);
int qhca_resize_cq(struct ibv_cq *ibcq, int cqe);

/* qhca_cq_ex.c */
struct ibv_cq_ex *qhca_create_cq_ex(struct ibv_context *ibctx,
				    struct ibv_cq_init_attr_ex *attr);

/* qhca_poll.c */
int qhca_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc);

/* qhca_qp.c */
struct ibv_qp *qhca_create_qp(struct ibv_pd *ibpd,
			      struct ibv_qp_init_attr *attr);
int qhca_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		   int attr_mask);
int qhca_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		  int attr_mask, struct ibv_qp_init_attr *init_attr);
int qhca_destroy_qp(struct ibv_qp *ibqp);

/* qhca_qp_ex.c */
struct ibv_qp *qhca_create_qp_ex(struct ibv_context *ibctx,
				 struct ibv_qp_init_attr_ex *attr);

/* qhca_post.c */
int qhca_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		   struct ibv_send_wr **bad_wr);
int qhca_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr);

/* qhca_xrc.c */
struct ibv_xrcd *qhca_open_xrcd(struct ibv_context *ibctx,
				struct ibv_xrcd_init_attr *attr);
int qhca_close_xrcd(struct ibv_xrcd *ibxrcd);
struct ibv_srq *qhca_create_srq_ex(struct ibv_context *ibctx,
				   struct ibv_srq_init_attr_ex *attr);
int qhca_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num);
struct ibv_qp *qhca_create_xrc_tgt_qp(struct ibv_context *ibctx,
				      struct ibv_qp_init_attr_ex *attr);
struct ibv_qp *qhca_open_qp(struct ibv_context *ibctx,
			    struct ibv_qp_open_attr *attr);
struct qhca_srq;
void qhca_xrc_srq_detach(struct qhca_srq *srq);

/* qhca_srq.c */
struct ibv_srq *qhca_create_srq(struct ibv_pd *ibpd,
				struct ibv_srq_init_attr *attr);
int qhca_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		    int attr_mask);
int qhca_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr);
int qhca_destroy_srq(struct ibv_srq *ibsrq);
int qhca_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr);

#endif /* QHCA_VERBS_H */
