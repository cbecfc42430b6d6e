// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * qhca verbs: device and port queries, user contexts with their doorbell
 * page, protection domains, and the ib_device registration.  The data path
 * objects have files of their own (qhca_mr.c, qhca_cq.c, qhca_qp.c).
 */

#include <linux/mm.h>
#include <linux/overflow.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/uverbs_ioctl.h>
/* The prefix of the names uverbs_named_ioctl.h gives the definitions. */
#define UVERBS_MODULE_NAME qhca_ib
#include <rdma/uverbs_named_ioctl.h>
#include <rdma/uverbs_std_types.h>
#include <uapi/rdma/qhca-abi.h>

#include "qhca.h"

/* A context maps its doorbell page alone: the two sizes must agree. */
static_assert(PAGE_SIZE == QHCA_DB_PAGE_SIZE);

/* The device's limits are u32; ib_device_attr keeps most of them in int. */
static int qhca_limit(__le32 val)
{
	return min_t(u32, le32_to_cpu(val), INT_MAX);
}

static int qhca_query_device(struct ib_device *ibdev,
			     struct ib_device_attr *props,
			     struct ib_udata *udata)
{
	const struct qhca_device_attr *a = &to_qdev(ibdev)->attr;
	u32 caps = le32_to_cpu(a->device_cap_flags);

	/* No driver data is defined for this command in either direction. */
	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;

	memset(props, 0, sizeof(*props));
	props->fw_ver = le64_to_cpu(a->fw_version);
	props->sys_image_guid = cpu_to_be64(le64_to_cpu(a->sys_image_guid));
	props->max_mr_size = le64_to_cpu(a->max_mr_size);
	props->page_size_cap = le64_to_cpu(a->page_size_cap);
	props->vendor_id = le32_to_cpu(a->vendor_id);
	props->vendor_part_id = le32_to_cpu(a->vendor_part_id);
	props->hw_ver = le32_to_cpu(a->hw_version);
	props->max_qp = qhca_limit(a->max_qp);
	props->max_qp_wr = qhca_limit(a->max_qp_wr);
	props->max_send_sge = qhca_limit(a->max_sge);
	props->max_recv_sge = qhca_limit(a->max_sge);
	props->max_sge_rd = qhca_limit(a->max_sge_rd);
	props->max_cq = qhca_limit(a->max_cq);
	props->max_cqe = qhca_limit(a->max_cqe);
	props->max_mr = qhca_limit(a->max_mr);
	props->max_pd = qhca_limit(a->max_pd);
	props->max_qp_rd_atom = qhca_limit(a->max_qp_rd_atom);
	props->max_qp_init_rd_atom = qhca_limit(a->max_qp_init_rd_atom);
	props->max_res_rd_atom = min_t(u64, (u64)props->max_qp_rd_atom *
					    props->max_qp, INT_MAX);
	props->max_srq = qhca_limit(a->max_srq);
	props->max_srq_wr = qhca_limit(a->max_srq_wr);
	props->max_srq_sge = qhca_limit(a->max_srq_sge);
	props->max_pkeys = min_t(u32, le32_to_cpu(a->max_pkeys), U16_MAX);
	props->local_ca_ack_delay = a->local_ca_ack_delay;
	props->atomic_cap = a->atomic_cap <= IB_ATOMIC_GLOB ?
			    a->atomic_cap : IB_ATOMIC_NONE;
	if (caps & QHCA_DEV_CAP_UD) {
		/*
		 * One port: an AH for any other is refused when it is made,
		 * so a UD send never leaves by a port that is not its QP's.
		 */
		props->device_cap_flags |= IB_DEVICE_UD_AV_PORT_ENFORCE;
		/* The group limits are fixed by the interface (1.2). */
		props->max_mcast_grp = QHCA_MAX_MCAST_GROUPS;
		props->max_mcast_qp_attach = QHCA_MAX_MCAST_QP_ATTACH;
		props->max_total_mcast_qp_attach = QHCA_MAX_MCAST_GROUPS *
						   QHCA_MAX_MCAST_QP_ATTACH;
	}
	if (caps & QHCA_DEV_CAP_RC_RNR_NAK_GEN)
		props->device_cap_flags |= IB_DEVICE_RC_RNR_NAK_GEN;
	if (caps & QHCA_DEV_CAP_XRC)
		props->device_cap_flags |= IB_DEVICE_XRC;
	if (caps & QHCA_DEV_CAP_RESIZE_SRQ)
		props->device_cap_flags |= IB_DEVICE_SRQ_RESIZE;
	if (caps & QHCA_DEV_CAP_PORT_ACTIVE_EVENT)
		props->device_cap_flags |= IB_DEVICE_PORT_ACTIVE_EVENT;
	/*
	 * 1.6: FLUSH of placement type GLOBAL; no MR can be persistent in
	 * guest RAM, so IB_DEVICE_FLUSH_PERSISTENT stays clear.
	 */
	if (caps & QHCA_DEV_CAP_FLUSH)
		props->device_cap_flags |= IB_DEVICE_FLUSH_GLOBAL;
	if (caps & QHCA_DEV_CAP_ATOMIC_WRITE)
		props->device_cap_flags |= IB_DEVICE_ATOMIC_WRITE;
	if (caps & QHCA_DEV_CAP_MW) {
		props->device_cap_flags |= IB_DEVICE_MEM_WINDOW |
					   IB_DEVICE_MEM_WINDOW_TYPE_2B;
		props->max_mw = qhca_limit(a->max_mw);
	}
	if (caps & QHCA_DEV_CAP_MEM_MGT_EXT) {
		props->device_cap_flags |= IB_DEVICE_MEM_MGT_EXTENSIONS;
		props->max_fast_reg_page_list_len = QHCA_FAST_REG_MAX_PAGES;
		props->max_pi_fast_reg_page_list_len = 0;
	}
	/*
	 * CQEs carry a 64-bit count of the device clock, whose rate in kHz
	 * the device reports; all 64 bits are valid.
	 */
	if (caps & QHCA_DEV_CAP_CQE_TIMESTAMP && a->hca_core_clock) {
		props->hca_core_clock = le32_to_cpu(a->hca_core_clock);
		props->timestamp_mask = U64_MAX;
	}
	props->max_dm_size = qhca_dm_size(to_qdev(ibdev));
	qhca_odp_query_device(to_qdev(ibdev), props);
	return 0;
}

static void qhca_get_dev_fw_str(struct ib_device *ibdev, char *str)
{
	u64 fw = le64_to_cpu(to_qdev(ibdev)->attr.fw_version);

	snprintf(str, IB_FW_VERSION_NAME_MAX, "%u.%u.%u", (u32)(fw >> 32),
		 (u32)(fw >> 16) & 0xffff, (u32)fw & 0xffff);
}

/* The port state changes: ask the device every time. */
static int qhca_query_port(struct ib_device *ibdev, u32 port_num,
			   struct ib_port_attr *props)
{
	struct qhca_dev *dev = to_qdev(ibdev);
	struct qhca_port_attr a;
	int err;

	err = qhca_admin_query_port(dev, port_num, &a);
	if (err)
		return err;

	if (qhca_is_eth(dev)) {
		qhca_roce_query_port(dev, &a, props);
		return 0;
	}
	props->subnet_prefix = le64_to_cpu(a.subnet_prefix);
	props->state = a.state;
	props->phys_state = a.phys_state;
	props->max_mtu = a.max_mtu;
	props->active_mtu = a.active_mtu;
	if (ib_mtu_enum_to_int(props->max_mtu) > 0)
		props->phys_mtu = ib_mtu_enum_to_int(props->max_mtu);
	props->gid_tbl_len = le16_to_cpu(a.gid_tbl_len);
	props->pkey_tbl_len = le16_to_cpu(a.pkey_tbl_len);
	props->port_cap_flags = le32_to_cpu(a.port_cap_flags);
	props->max_msg_sz = le32_to_cpu(a.max_msg_sz);
	props->lid = le16_to_cpu(a.lid);
	props->sm_lid = le16_to_cpu(a.sm_lid);
	props->lmc = a.lmc;
	props->sm_sl = a.sm_sl;
	props->active_speed = a.active_speed;
	props->active_width = a.active_width;
	props->max_vl_num = a.max_vl_num;
	return 0;
}

/*
 * The table has the one GID the device defines: subnet prefix + GUID.
 * An Ethernet port's table is ib_core's (add_gid), never asked for here.
 */
static int qhca_query_gid(struct ib_device *ibdev, u32 port_num, int index,
			  union ib_gid *gid)
{
	const struct qhca_port_attr *a = &to_qdev(ibdev)->port;

	if (index != 0 || qhca_is_eth(to_qdev(ibdev)))
		return -EINVAL;
	gid->global.subnet_prefix =
		cpu_to_be64(le64_to_cpu(a->subnet_prefix));
	gid->global.interface_id = cpu_to_be64(le64_to_cpu(a->port_guid));
	return 0;
}

static int qhca_query_pkey(struct ib_device *ibdev, u32 port_num, u16 index,
			   u16 *pkey)
{
	if (index != 0)
		return -EINVAL;
	*pkey = le16_to_cpu(to_qdev(ibdev)->port.pkey);
	return 0;
}

static int qhca_get_port_immutable(struct ib_device *ibdev, u32 port_num,
				   struct ib_port_immutable *immutable)
{
	const struct qhca_port_attr *a = &to_qdev(ibdev)->port;

	if (qhca_is_eth(to_qdev(ibdev))) {
		qhca_roce_port_immutable(immutable);
		return 0;
	}
	/*
	 * An InfiniBand port without management datagrams: the device has
	 * no QP0 or QP1, so ib_mad, the CM and the SA have nothing to use.
	 * Connections are set up out of band, as ibv_rc_pingpong does.
	 */
	immutable->core_cap_flags = RDMA_CORE_CAP_PROT_IB;
	immutable->gid_tbl_len = le16_to_cpu(a->gid_tbl_len);
	immutable->pkey_tbl_len = le16_to_cpu(a->pkey_tbl_len);
	/* No MADs, so no MAD size: ib_core checks the two agree. */
	immutable->max_mad_size = 0;
	return 0;
}

static enum rdma_link_layer qhca_get_link_layer(struct ib_device *ibdev,
						u32 port_num)
{
	return qhca_is_eth(to_qdev(ibdev)) ? IB_LINK_LAYER_ETHERNET :
					     IB_LINK_LAYER_INFINIBAND;
}

/* What GET_CONTEXT answers, and QUERY_CONTEXT again for an importer. */
static void qhca_ucontext_resp(struct qhca_ucontext *uctx,
			       struct qhca_ibv_alloc_ucontext_resp *resp)
{
	struct qhca_dev *dev = to_qdev(uctx->ibucontext.device);

	resp->uar_index = uctx->uar_index;
	resp->db_mmap_key = rdma_user_mmap_get_offset(uctx->db_entry);
	resp->db_page_size = QHCA_DB_PAGE_SIZE;
	resp->max_inline_data = le32_to_cpu(dev->attr.max_inline_data);
	resp->hw_version = le32_to_cpu(dev->attr.hw_version);
}

static int qhca_alloc_ucontext(struct ib_ucontext *ibuctx,
			       struct ib_udata *udata)
{
	struct qhca_ucontext *uctx = to_qucontext(ibuctx);
	struct qhca_dev *dev = to_qdev(ibuctx->device);
	struct qhca_ibv_alloc_ucontext_resp resp = {};
	struct qhca_ibv_alloc_ucontext_req req = {};
	u32 uar_index;
	int err;

	/* A newer provider may send more, but only as zeroes. */
	err = qhca_udata_get_req(udata, &req, sizeof(req));
	if (err)
		return err;
	if (req.comp_mask || req.reserved)
		return -EINVAL;

	err = qhca_admin_alloc_uar(dev, &uar_index);
	if (err)
		return err;
	if (uar_index >= dev->db_pages) {
		ibdev_err(&dev->ibdev, "device returned UAR %u of %u\n",
			  uar_index, dev->db_pages);
		err = -EIO;
		goto err_dealloc_uar;
	}

	uctx->db_entry = qhca_mmap_insert_db_page(dev, ibuctx, uar_index);
	if (IS_ERR(uctx->db_entry)) {
		err = PTR_ERR(uctx->db_entry);
		uctx->db_entry = NULL;
		goto err_dealloc_uar;
	}
	/* From here on the entry owns the UAR: qhca_mmap_free() frees it. */
	uctx->uar_index = uar_index;

	qhca_ucontext_resp(uctx, &resp);
	err = qhca_udata_put_resp(udata, &resp, sizeof(resp));
	if (err) {
		rdma_user_mmap_entry_remove(uctx->db_entry);
		uctx->db_entry = NULL;
		return err;
	}
	return 0;

err_dealloc_uar:
	qhca_admin_dealloc_uar(dev, uar_index);
	return err;
}

static void qhca_dealloc_ucontext(struct ib_ucontext *ibuctx)
{
	struct qhca_ucontext *uctx = to_qucontext(ibuctx);

	/* The UAR lives on while the page is still mapped somewhere. */
	rdma_user_mmap_entry_remove(uctx->db_entry);
}

/*
 * ibv_import_device(): another ibv_context on the same ufile (a dup of its
 * fd) rebuilds libqhca's context from this, and maps the same doorbell
 * page through the same mmap entry.
 */
static int qhca_query_ucontext(struct ib_ucontext *ibuctx,
			       struct uverbs_attr_bundle *attrs)
{
	struct qhca_ibv_alloc_ucontext_resp resp = {};

	qhca_ucontext_resp(to_qucontext(ibuctx), &resp);
	return uverbs_copy_to_struct_or_zero(attrs,
					     QHCA_IB_ATTR_QUERY_CONTEXT_RESP_UCTX,
					     &resp, sizeof(resp));
}

/*
 * On device removal ib_core zaps the doorbell and ring mappings and then
 * destroys the context's objects and the context as usual; there is nothing
 * else to detach.  Providing this lets the device go away while processes
 * still hold contexts.
 */
static void qhca_disassociate_ucontext(struct ib_ucontext *ibuctx)
{
}

/* Kernel consumers (udata == NULL) get PDs the same way. */
static int qhca_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct qhca_dev *dev = to_qdev(ibpd->device);
	struct qhca_ibv_alloc_pd_resp resp = {};
	struct qhca_pd *pd = to_qpd(ibpd);
	int err;

	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;

	err = qhca_admin_alloc_pd(dev, &pd->pdn);
	if (err)
		return err;

	if (udata) {
		resp.pdn = pd->pdn;
		err = qhca_udata_put_resp(udata, &resp, sizeof(resp));
		if (err) {
			qhca_admin_dealloc_pd(dev, pd->pdn);
			return err;
		}
	}
	return 0;
}

static int qhca_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct qhca_dev *dev = to_qdev(ibpd->device);
	struct qhca_pd *pd = to_qpd(ibpd);
	int err;

	/*
	 * ib_core cannot keep a PD it asked to free; a device that refuses
	 * keeps the number, which QUERY_STATS shows.
	 */
	err = qhca_admin_dealloc_pd(dev, pd->pdn);
	qhca_destroyed(dev, err, "DEALLOC_PD", pd->pdn);
	return 0;
}

/* ibv_import_pd(): the PD's number, and whether the handle is a PD. */
static int UVERBS_HANDLER(QHCA_IB_METHOD_PD_QUERY)(struct uverbs_attr_bundle *attrs)
{
	struct ib_pd *ibpd = uverbs_attr_get_obj(attrs,
						 QHCA_IB_ATTR_QUERY_PD_HANDLE);

	return uverbs_copy_to(attrs, QHCA_IB_ATTR_QUERY_PD_RESP_PDN,
			      &to_qpd(ibpd)->pdn, sizeof(to_qpd(ibpd)->pdn));
}

DECLARE_UVERBS_NAMED_METHOD(QHCA_IB_METHOD_PD_QUERY,
			    UVERBS_ATTR_IDR(QHCA_IB_ATTR_QUERY_PD_HANDLE,
					    UVERBS_OBJECT_PD,
					    UVERBS_ACCESS_READ, UA_MANDATORY),
			    UVERBS_ATTR_PTR_OUT(QHCA_IB_ATTR_QUERY_PD_RESP_PDN,
						UVERBS_ATTR_TYPE(u32),
						UA_MANDATORY));

ADD_UVERBS_METHODS(qhca_ib_pd, UVERBS_OBJECT_PD,
		   &UVERBS_METHOD(QHCA_IB_METHOD_PD_QUERY));

/* The whole GET_CONTEXT response: a provider that knows less gets EINVAL. */
#define QHCA_UCTX_RESP_ATTR \
	UVERBS_ATTR_STRUCT(struct qhca_ibv_alloc_ucontext_resp, reserved)

ADD_UVERBS_ATTRIBUTES_SIMPLE(qhca_ib_query_context, UVERBS_OBJECT_DEVICE,
			     UVERBS_METHOD_QUERY_CONTEXT,
			     UVERBS_ATTR_PTR_OUT(QHCA_IB_ATTR_QUERY_CONTEXT_RESP_UCTX,
						 QHCA_UCTX_RESP_ATTR,
						 UA_MANDATORY));

/* Every device's; qhca_dm_defs chains these in when it has device memory. */
const struct uapi_definition qhca_import_defs[] = {
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_DEVICE, &qhca_ib_query_context),
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_PD, &qhca_ib_pd),
	{},
};

static const struct ib_device_ops qhca_dev_ops = {
	.owner = THIS_MODULE,
	/* No driver ID of its own: libibverbs matches the PCI ID. */
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = QHCA_UVERBS_ABI_VERSION,
	.device_group = &qhca_hw_objects_group,

	.alloc_hw_port_stats = qhca_alloc_hw_port_stats,
	.alloc_pd = qhca_alloc_pd,
	.alloc_xrcd = qhca_alloc_xrcd,
	.alloc_ucontext = qhca_alloc_ucontext,
	.attach_mcast = qhca_attach_mcast,
	.create_ah = qhca_create_ah,
	.create_cq = QHCA_OP_CREATE_CQ,
	QHCA_OP_CREATE_USER_CQ
	.create_qp = qhca_create_qp,
	.create_srq = qhca_create_srq,
	.dealloc_pd = qhca_dealloc_pd,
	.dealloc_xrcd = qhca_dealloc_xrcd,
	.dealloc_ucontext = qhca_dealloc_ucontext,
	.dereg_mr = qhca_dereg_mr,
	.destroy_ah = qhca_destroy_ah,
	.detach_mcast = qhca_detach_mcast,
	.destroy_cq = qhca_destroy_cq,
	.destroy_qp = qhca_destroy_qp,
	.destroy_srq = qhca_destroy_srq,
	.disassociate_ucontext = qhca_disassociate_ucontext,
	.fill_res_cq_entry = qhca_fill_res_cq_entry,
	QHCA_OP_FILL_RES_SRQ_ENTRY
	.get_dev_fw_str = qhca_get_dev_fw_str,
	.get_dma_mr = qhca_get_dma_mr,
	.get_hw_stats = qhca_get_hw_stats,
	.get_link_layer = qhca_get_link_layer,
	.get_port_immutable = qhca_get_port_immutable,
	.mmap = qhca_mmap,
	.mmap_free = qhca_mmap_free,
	.modify_qp = qhca_modify_qp,
	.modify_srq = qhca_modify_srq,
	.poll_cq = qhca_poll_cq,
	.post_recv = qhca_post_recv,
	.post_send = qhca_post_send,
	.post_srq_recv = qhca_post_srq_recv,
	.query_device = qhca_query_device,
	.query_gid = qhca_query_gid,
	.query_pkey = qhca_query_pkey,
	.query_port = qhca_query_port,
	.query_qp = qhca_query_qp,
	.query_srq = qhca_query_srq,
	.query_ucontext = qhca_query_ucontext,
	.reg_user_mr = QHCA_OP_REG_USER_MR,
	.reg_user_mr_dmabuf = QHCA_OP_REG_USER_MR_DMABUF,
	.rereg_user_mr = qhca_rereg_user_mr,
	.req_notify_cq = qhca_req_notify_cq,
	QHCA_OP_RESIZE_CQ

	INIT_RDMA_OBJ_SIZE(ib_ah, qhca_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, qhca_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_pd, qhca_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, qhca_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, qhca_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, qhca_ucontext, ibucontext),
	INIT_RDMA_OBJ_SIZE(ib_xrcd, qhca_xrcd, ibxrcd),
};

int qhca_ib_register(struct qhca_dev *dev)
{
	struct ib_device *ibdev = &dev->ibdev;
	int err;

	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->node_guid = cpu_to_be64(le64_to_cpu(dev->attr.node_guid));
	ibdev->phys_port_cnt = dev->attr.num_ports;
	ibdev->num_comp_vectors = dev->num_ceqs;
	ibdev->dev.parent = &dev->pdev->dev;
	ib_set_device_ops(ibdev, &qhca_dev_ops);
	ibdev->driver_def = qhca_import_defs;
	qhca_mw_set_ops(dev);
	qhca_dm_set_ops(dev);
	qhca_odp_set_ops(dev);

	/*
	 * An Ethernet port is a RoCE device only with its netdev: ib_core
	 * takes the GIDs from its addresses and the MACs from its
	 * neighbours.  Without it there would be a device no GID could be
	 * added to.
	 */
	if (qhca_is_eth(dev)) {
		qhca_roce_set_ops(dev);
		if (!dev->netdev) {
			dev_err(&dev->pdev->dev,
				"Ethernet port without its net_device: not registering\n");
			return -ENODEV;
		}
		err = ib_device_set_netdev(ibdev, dev->netdev, 1);
		if (err)
			return err;
	}

	/* The PCI device does the DMA and gives libibverbs its modalias. */
	err = ib_register_device(ibdev, "qhca%d", &dev->pdev->dev);
	if (err) {
		/* Our netdev goes next: it must not wait for this reference. */
		if (qhca_is_eth(dev))
			ib_device_set_netdev(ibdev, NULL, 1);
		return err;
	}
	/* Pairs with the acquire in qhca_eq_dispatch(). */
	smp_store_release(&dev->registered, true);
	/* Named as the registered device is. */
	qhca_debugfs_add_dev(dev);
	return 0;
}

void qhca_ib_unregister(struct qhca_dev *dev)
{
	/* Waits for a write to the inject file that is under way. */
	qhca_debugfs_remove_dev(dev);
	/* No event may reach ib_core once it starts tearing the device down. */
	smp_store_release(&dev->registered, false);
	qhca_eqs_sync(dev);
	ib_unregister_device(&dev->ibdev);
}
