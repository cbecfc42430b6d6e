// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libqhca: device matching and user contexts.
 *
 * A context owns one doorbell page of the device, allocated by the kernel
 * when the context is created and mapped here into the process, so that the
 * data path can ring doorbells without a system call.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "qhca.h"
#include "qhca_abi.h"
#include "qhca_ah.h"
#include "qhca_db.h"
#include "qhca_hw.h"
#include "qhca_verbs.h"

static void qhca_free_context(struct ibv_context *ibctx);

static const struct verbs_context_ops qhca_ctx_ops = {
	.advise_mr = qhca_advise_mr,
	.alloc_dm = qhca_alloc_dm,
	.alloc_mw = qhca_alloc_mw,
	.alloc_parent_domain = qhca_alloc_parent_domain,
	.alloc_pd = qhca_alloc_pd,
	.alloc_td = qhca_alloc_td,
	.bind_mw = qhca_bind_mw,
	.attach_mcast = qhca_attach_mcast,
	.create_ah = qhca_create_ah,
	.create_cq = qhca_create_cq,
	.create_cq_ex = qhca_create_cq_ex,
	.create_qp = qhca_create_qp,
	.create_qp_ex = qhca_create_qp_ex,
	.create_srq = qhca_create_srq,
	.create_srq_ex = qhca_create_srq_ex,
	.close_xrcd = qhca_close_xrcd,
	.get_srq_num = qhca_get_srq_num,
	.open_xrcd = qhca_open_xrcd,
	.dealloc_mw = qhca_dealloc_mw,
	.dealloc_pd = qhca_dealloc_pd,
	.dealloc_td = qhca_dealloc_td,
	.dereg_mr = qhca_dereg_mr,
	.destroy_ah = qhca_destroy_ah,
	.detach_mcast = qhca_detach_mcast,
	.destroy_cq = qhca_destroy_cq,
	.destroy_qp = qhca_destroy_qp,
	.destroy_srq = qhca_destroy_srq,
	.free_context = qhca_free_context,
	.free_dm = qhca_free_dm,
	.import_dm = qhca_import_dm,
	.import_mr = qhca_import_mr,
	.import_pd = qhca_import_pd,
	.modify_qp = qhca_modify_qp,
	.modify_srq = qhca_modify_srq,
	.open_qp = qhca_open_qp,
	.poll_cq = qhca_poll_cq,
	.post_recv = qhca_post_recv,
	.post_send = qhca_post_send,
	.post_srq_recv = qhca_post_srq_recv,
	.query_device_ex = qhca_query_device_ex,
	.query_port = qhca_query_port,
	.query_qp = qhca_query_qp,
	.query_srq = qhca_query_srq,
	.reg_dm_mr = qhca_reg_dm_mr,
	.reg_dmabuf_mr = qhca_reg_dmabuf_mr,
	.reg_mr = qhca_reg_mr,
	.rereg_mr = qhca_rereg_mr,
	.req_notify_cq = qhca_req_notify_cq,
	.resize_cq = qhca_resize_cq,
	.unimport_dm = qhca_unimport_dm,
	.unimport_mr = qhca_unimport_mr,
	.unimport_pd = qhca_unimport_pd,
};

/* Check what the kernel told us about the context before relying on it. */
static int qhca_check_context_resp(struct qhca_context *ctx,
				   const struct qhca_ibv_alloc_ucontext_resp *resp)
{
	/*
	 * No response fields are announced by comp_mask yet; bits we do not
	 * know belong to fields a newer driver appended, which we can ignore.
	 */
	if (resp->comp_mask)
		verbs_debug(&ctx->ibv_ctx,
			    "ignoring unknown context comp_mask 0x%x\n",
			    resp->comp_mask);

	if (resp->db_page_size != QHCA_DB_PAGE_SIZE) {
		verbs_err(&ctx->ibv_ctx,
			  "doorbell page of %u bytes, expected %u\n",
			  resp->db_page_size, QHCA_DB_PAGE_SIZE);
		return EINVAL;
	}
	return 0;
}

/*
 * The context as the kernel describes it (GET_CONTEXT's response, or
 * QUERY_CONTEXT's for an imported one): map its doorbell page and learn
 * the port and the device.  An errno value, or 0 with the ops set.
 */
static int qhca_setup_context(struct qhca_context *ctx,
			      const struct qhca_ibv_alloc_ucontext_resp *resp)
{
	struct ibv_port_attr port_attr = {};
	struct ibv_device_attr_ex dev_attr;
	int err;

	err = qhca_check_context_resp(ctx, resp);
	if (err)
		return err;

	ctx->db_page = mmap(NULL, resp->db_page_size, PROT_WRITE, MAP_SHARED,
			    ctx->ibv_ctx.context.cmd_fd, resp->db_mmap_key);
	if (ctx->db_page == MAP_FAILED) {
		err = errno;
		verbs_err(&ctx->ibv_ctx, "mapping doorbell page %u failed: %s\n",
			  resp->uar_index, strerror(err));
		return err;
	}
	ctx->db_page_size = resp->db_page_size;
	ctx->uar_index = resp->uar_index;
	ctx->max_inline_data = resp->max_inline_data;
	ctx->hw_version = resp->hw_version;

	err = qhca_query_port(&ctx->ibv_ctx.context, 1, &port_attr);
	if (err) {
		verbs_err(&ctx->ibv_ctx, "QUERY_PORT failed: %s\n",
			  strerror(err));
		goto err_unmap;
	}
	ctx->link_layer = port_attr.link_layer;
	ctx->gid_tbl_len = port_attr.gid_tbl_len;

	/* qhca_query_device_ex() says why it failed. */
	err = qhca_query_device_ex(&ctx->ibv_ctx.context, NULL, &dev_attr,
				   sizeof(dev_attr));
	if (err)
		goto err_unmap;
	ctx->device_cap_flags = dev_attr.device_cap_flags_ex;

	verbs_set_ops(&ctx->ibv_ctx, &qhca_ctx_ops);
	verbs_debug(&ctx->ibv_ctx, "context on doorbell page %u, hw 0x%08x\n",
		    ctx->uar_index, ctx->hw_version);
	return 0;

err_unmap:
	munmap(ctx->db_page, resp->db_page_size);
	return err;
}

/*
 * The end of making a context, new or imported: set it up from the
 * kernel's description @resp unless fetching that failed (@err), or undo
 * it.  Undoing closes cmd_fd, which the context took: for a new context
 * the kernel then frees its half-made one; an import closes the fd it
 * was given, as mlx5's does.
 */
static struct verbs_context *
qhca_finish_context(struct qhca_context *ctx, int err,
		    const struct qhca_ibv_alloc_ucontext_resp *resp)
{
	if (!err)
		err = qhca_setup_context(ctx, resp);
	if (!err)
		return &ctx->ibv_ctx;
	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
	errno = err;
	return NULL;
}

static struct verbs_context *qhca_alloc_context(struct ibv_device *ibdev,
						int cmd_fd, void *private_data)
{
	struct qhca_alloc_context_resp resp = {};
	struct qhca_alloc_context cmd = {};
	struct qhca_context *ctx;
	int err;

	/*
	 * The kernel driver registers with RDMA_DRIVER_UNKNOWN, so that is
	 * the driver ID our ioctl commands must carry.
	 */
	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, ibv_ctx,
					   RDMA_DRIVER_UNKNOWN);
	if (!ctx)
		return NULL;

	err = ibv_cmd_get_context(&ctx->ibv_ctx, &cmd.ibv_cmd, sizeof(cmd),
				  &resp.ibv_resp, sizeof(resp));
	if (err)
		verbs_err(&ctx->ibv_ctx, "GET_CONTEXT failed: %s\n",
			  strerror(err));
	return qhca_finish_context(ctx, err, &resp.drv_payload);
}

/*
 * ibv_import_device(): a second context on the kernel's context behind
 * cmd_fd (a dup of another's fd, maybe in another process), with the
 * doorbell page that context has.  Its objects are imported one by one
 * (ibv_import_pd(), ...).
 */
static struct verbs_context *qhca_import_context(struct ibv_device *ibdev,
						 int cmd_fd)
{
	DECLARE_COMMAND_BUFFER_LINK(cmdb, UVERBS_OBJECT_DEVICE,
				    UVERBS_METHOD_QUERY_CONTEXT, 1, NULL);
	struct qhca_ibv_alloc_ucontext_resp resp = {};
	struct qhca_context *ctx;
	int err;

	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, ibv_ctx,
					   RDMA_DRIVER_UNKNOWN);
	if (!ctx)
		return NULL;

	fill_attr_out_ptr(cmdb, QHCA_IB_ATTR_QUERY_CONTEXT_RESP_UCTX, &resp);
	err = ibv_cmd_query_context(&ctx->ibv_ctx.context, cmdb);
	if (err)
		verbs_err(&ctx->ibv_ctx, "QUERY_CONTEXT failed: %s\n",
			  strerror(err));
	return qhca_finish_context(ctx, err, &resp);
}

static void qhca_free_context(struct ibv_context *ibctx)
{
	struct qhca_context *ctx = to_qhca_ctx(ibctx);

	munmap(ctx->db_page, ctx->db_page_size);
	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
}

static struct verbs_device *qhca_alloc_device(struct verbs_sysfs_dev *sysfs_dev)
{
	struct qhca_device *dev;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;
	return &dev->ibv_dev;
}

static void qhca_uninit_device(struct verbs_device *vdev)
{
	free(container_of(vdev, struct qhca_device, ibv_dev));
}

/*
 * The kernel driver has no RDMA_DRIVER_ID of its own (it is not an upstream
 * driver), so the device is matched by its PCI ID alone.
 */
static const struct verbs_match_ent qhca_match_table[] = {
	VERBS_PCI_MATCH(QHCA_PCI_VENDOR_ID, QHCA_PCI_DEVICE_ID, NULL),
	{}
};

static const struct verbs_device_ops qhca_dev_ops = {
	.name = "qhca",
	.match_min_abi_version = QHCA_UVERBS_ABI_VERSION,
	.match_max_abi_version = QHCA_UVERBS_ABI_VERSION,
	.match_table = qhca_match_table,
	.alloc_device = qhca_alloc_device,
	.uninit_device = qhca_uninit_device,
	.alloc_context = qhca_alloc_context,
	.import_context = qhca_import_context,
};

PROVIDER_DRIVER(qhca, qhca_dev_ops);
