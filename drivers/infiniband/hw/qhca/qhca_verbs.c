// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * qhca verbs: device and port queries, user contexts with their doorbell
 * page, protection domains, and the ib_device registration.
 */

#include <linux/mm.h>
#include <linux/overflow.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_user_verbs.h>
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
	if (caps & QHCA_DEV_CAP_RC_RNR_NAK_GEN)
		props->device_cap_flags |= IB_DEVICE_RC_RNR_NAK_GEN;
	if (caps & QHCA_DEV_CAP_PORT_ACTIVE_EVENT)
		props->device_cap_flags |= IB_DEVICE_PORT_ACTIVE_EVENT;
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
	struct qhca_port_attr a;
	int err;

	err = qhca_cmd_query_port(to_qdev(ibdev), port_num, &a);
	if (err)
		return err;

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

/* The table has the one GID the device defines: subnet prefix + GUID. */
static int qhca_query_gid(struct ib_device *ibdev, u32 port_num, int index,
			  union ib_gid *gid)
{
	const struct qhca_port_attr *a = &to_qdev(ibdev)->port;

	if (index != 0)
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

	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_IB;
	immutable->gid_tbl_len = le16_to_cpu(a->gid_tbl_len);
	immutable->pkey_tbl_len = le16_to_cpu(a->pkey_tbl_len);
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static enum rdma_link_layer qhca_get_link_layer(struct ib_device *ibdev,
						u32 port_num)
{
	return IB_LINK_LAYER_INFINIBAND;
}

static int qhca_alloc_ucontext(struct ib_ucontext *ibuctx,
			       struct ib_udata *udata)
{
	struct qhca_ucontext *uctx = to_qucontext(ibuctx);
	struct qhca_dev *dev = to_qdev(ibuctx->device);
	struct qhca_ibv_alloc_ucontext_resp resp = {};
	struct qhca_ibv_alloc_ucontext_req req = {};
	struct qhca_user_mmap_entry *entry;
	u32 uar_index;
	int err;

	/* A newer provider may send more, but only as zeroes. */
	if (udata->inlen > sizeof(req) &&
	    !ib_is_udata_cleared(udata, sizeof(req),
				 udata->inlen - sizeof(req)))
		return -EINVAL;
	err = ib_copy_from_udata(&req, udata, min(sizeof(req), udata->inlen));
	if (err)
		return err;
	if (req.comp_mask || req.reserved)
		return -EINVAL;

	err = qhca_cmd_alloc_uar(dev, &uar_index);
	if (err)
		return err;
	if (uar_index >= dev->db_pages) {
		ibdev_err(&dev->ibdev, "device returned UAR %u of %u\n",
			  uar_index, dev->db_pages);
		err = -EIO;
		goto err_dealloc_uar;
	}

	entry = kzalloc(sizeof(*entry), GFP_KERNEL);
	if (!entry) {
		err = -ENOMEM;
		goto err_dealloc_uar;
	}
	entry->uar_index = uar_index;
	entry->address = dev->db_bar_start +
			 (phys_addr_t)uar_index * QHCA_DB_PAGE_SIZE;
	err = rdma_user_mmap_entry_insert(ibuctx, &entry->rdma_entry,
					  QHCA_DB_PAGE_SIZE);
	if (err) {
		kfree(entry);
		goto err_dealloc_uar;
	}
	/* From here on the entry owns the UAR: qhca_mmap_free() frees it. */
	uctx->db_entry = &entry->rdma_entry;

	resp.uar_index = uar_index;
	resp.db_mmap_key = rdma_user_mmap_get_offset(uctx->db_entry);
	resp.db_page_size = QHCA_DB_PAGE_SIZE;
	resp.max_inline_data = le32_to_cpu(dev->attr.max_inline_data);
	resp.hw_version = le32_to_cpu(dev->attr.hw_version);
	err = ib_copy_to_udata(udata, &resp, min(sizeof(resp), udata->outlen));
	if (err) {
		rdma_user_mmap_entry_remove(uctx->db_entry);
		uctx->db_entry = NULL;
		return err;
	}
	return 0;

err_dealloc_uar:
	qhca_cmd_dealloc_uar(dev, uar_index);
	return err;
}

static void qhca_dealloc_ucontext(struct ib_ucontext *ibuctx)
{
	struct qhca_ucontext *uctx = to_qucontext(ibuctx);

	/* The UAR lives on while the page is still mapped somewhere. */
	rdma_user_mmap_entry_remove(uctx->db_entry);
}

/*
 * On device removal ib_core zaps the doorbell mappings and then destroys the
 * context as usual; there is nothing else to detach.  Providing this lets
 * the device go away while processes still hold contexts.
 */
static void qhca_disassociate_ucontext(struct ib_ucontext *ibuctx)
{
}

static int qhca_mmap(struct ib_ucontext *ibuctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rdma_entry;
	struct qhca_user_mmap_entry *entry;
	int err;

	/* A doorbell page is written, never executed. */
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;
	vm_flags_clear(vma, VM_MAYEXEC);

	/* Only a whole entry, shared: exactly the one page handed out. */
	rdma_entry = rdma_user_mmap_entry_get(ibuctx, vma);
	if (!rdma_entry)
		return -EINVAL;
	entry = to_qmmap(rdma_entry);

	/* io_remap_pfn_range() makes it VM_IO, VM_PFNMAP, VM_DONTEXPAND. */
	err = rdma_user_mmap_io(ibuctx, vma, PHYS_PFN(entry->address),
				rdma_entry->npages * PAGE_SIZE,
				pgprot_noncached(vma->vm_page_prot),
				rdma_entry);
	rdma_user_mmap_entry_put(rdma_entry);
	return err;
}

static void qhca_mmap_free(struct rdma_user_mmap_entry *rdma_entry)
{
	struct qhca_user_mmap_entry *entry = to_qmmap(rdma_entry);
	struct qhca_dev *dev = to_qdev(rdma_entry->ucontext->device);
	int err;

	err = qhca_cmd_dealloc_uar(dev, entry->uar_index);
	if (err)
		ibdev_warn(&dev->ibdev, "DEALLOC_UAR %u failed: %d\n",
			   entry->uar_index, err);
	kfree(entry);
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

	err = qhca_cmd_alloc_pd(dev, &pd->pdn);
	if (err)
		return err;

	if (udata) {
		resp.pdn = pd->pdn;
		err = ib_copy_to_udata(udata, &resp,
				       min(sizeof(resp), udata->outlen));
		if (err) {
			qhca_cmd_dealloc_pd(dev, pd->pdn);
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
	err = qhca_cmd_dealloc_pd(dev, pd->pdn);
	if (err)
		ibdev_warn(&dev->ibdev, "DEALLOC_PD %u failed: %d\n", pd->pdn,
			   err);
	return 0;
}

static const struct ib_device_ops qhca_dev_ops = {
	.owner = THIS_MODULE,
	/* No driver ID of its own: libibverbs matches the PCI ID. */
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = QHCA_UVERBS_ABI_VERSION,
	.device_group = &qhca_hw_objects_group,

	.alloc_pd = qhca_alloc_pd,
	.alloc_ucontext = qhca_alloc_ucontext,
	.dealloc_pd = qhca_dealloc_pd,
	.dealloc_ucontext = qhca_dealloc_ucontext,
	.disassociate_ucontext = qhca_disassociate_ucontext,
	.get_dev_fw_str = qhca_get_dev_fw_str,
	.get_link_layer = qhca_get_link_layer,
	.get_port_immutable = qhca_get_port_immutable,
	.mmap = qhca_mmap,
	.mmap_free = qhca_mmap_free,
	.query_device = qhca_query_device,
	.query_gid = qhca_query_gid,
	.query_pkey = qhca_query_pkey,
	.query_port = qhca_query_port,

	INIT_RDMA_OBJ_SIZE(ib_pd, qhca_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, qhca_ucontext, ibucontext),
};

int qhca_ib_register(struct qhca_dev *dev)
{
	struct ib_device *ibdev = &dev->ibdev;
	int err;

	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->node_guid = cpu_to_be64(le64_to_cpu(dev->attr.node_guid));
	ibdev->phys_port_cnt = dev->attr.num_ports;
	ibdev->num_comp_vectors = 1;
	ibdev->dev.parent = &dev->pdev->dev;
	ib_set_device_ops(ibdev, &qhca_dev_ops);

	/* The PCI device does the DMA and gives libibverbs its modalias. */
	err = ib_register_device(ibdev, "qhca%d", &dev->pdev->dev);
	if (err)
		return err;
	/* Pairs with the acquire in qhca_eq_dispatch(). */
	smp_store_release(&dev->registered, true);
	return 0;
}

void qhca_ib_unregister(struct qhca_dev *dev)
{
	/* No event may reach ib_core once it starts tearing the device down. */
	smp_store_release(&dev->registered, false);
	if (dev->eq.irq)
		synchronize_irq(dev->eq.irq);
	ib_unregister_device(&dev->ibdev);
}
