/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * qhca hardware interface, version 1.8.
 *
 * This is the one description of the device's registers, admin commands,
 * queues and entries.  The QEMU device model, the Linux driver and the
 * rdma-core provider all include this file as it is.  Documentation/hw/
 * describes the same interface in prose; the two must agree.
 *
 * Rules:
 *  - Everything the device and the driver exchange is little endian and
 *    uses the fixed-width types of <linux/types.h>, with one exception:
 *    imm_data (in struct qhca_sq_wqe, struct qhca_sq_wqe_ud and struct
 *    qhca_cqe) holds the immediate's four bytes in the order they are
 *    posted and go on the wire, which the verbs define as big endian
 *    (__be32), so that no part swaps them.
 *  - Every structure has its size asserted below its definition.
 *  - Reserved fields are written as zero; the device rejects a command whose
 *    reserved fields are not zero.
 *  - Bit fields are described by one mask per field, beside their structure.
 *    QHCA_FIELD_GET()/QHCA_FIELD_PREP() work with any of them; kernel code
 *    uses FIELD_GET()/FIELD_PREP() with the same masks.
 */
#ifndef QHCA_HW_H
#define QHCA_HW_H

#include <linux/types.h>

#ifdef __cplusplus
#define QHCA_STATIC_ASSERT static_assert
#else
#define QHCA_STATIC_ASSERT _Static_assert
#endif
#define QHCA_ASSERT_SIZE(name, size) \
	QHCA_STATIC_ASSERT(sizeof(struct name) == (size), \
			   "struct " #name " must be " #size " bytes")

/* Lowest set bit of a mask: the field's shift expressed as a multiplier. */
#define QHCA_FIELD_LSB(mask) ((mask) & (~(mask) + 1))
#define QHCA_FIELD_GET(mask, val) (((val) & (mask)) / QHCA_FIELD_LSB(mask))
#define QHCA_FIELD_PREP(mask, val) (((val) * QHCA_FIELD_LSB(mask)) & (mask))

/* ------------------------------------------------------------------ */
/* PCI identity                                                        */
/* ------------------------------------------------------------------ */

/*
 * 0x1234 is the vendor ID QEMU uses for its own experimental devices (the
 * edu device is 0x1234:0x11e8); 0x11ca is unused there.  Class 0x0207 is
 * "Network controller: InfiniBand", as real HCAs report.
 */
#define QHCA_PCI_VENDOR_ID		0x1234
#define QHCA_PCI_DEVICE_ID		0x11ca
#define QHCA_PCI_SUBSYSTEM_VENDOR_ID	0x1af4
#define QHCA_PCI_SUBSYSTEM_ID		0x1100
#define QHCA_PCI_CLASS			0x0207
#define QHCA_PCI_REVISION		0x01

/* BAR 0: registers, MSI-X table and PBA.  32-bit, non-prefetchable. */
#define QHCA_REG_BAR			0
#define QHCA_REG_BAR_SIZE		0x4000
#define QHCA_MSIX_TABLE_OFFSET		0x2000
#define QHCA_MSIX_PBA_OFFSET		0x3000
/* BAR 2: doorbell pages, one per user context.  64-bit. */
#define QHCA_DB_BAR			2
#define QHCA_DB_PAGE_SHIFT		12
#define QHCA_DB_PAGE_SIZE		(1u << QHCA_DB_PAGE_SHIFT)
/*
 * BAR 4 (1.7, with QHCA_DEV_CAP_DEVICE_MEMORY): device memory, 64-bit and
 * prefetchable, dm_size bytes (QUERY_DEVICE; a power of two, at least
 * QHCA_DM_MIN_SIZE).  The host reads and writes it as memory; the device
 * reads and writes it for MRs of REG_MR flags DM.  It is zero after a
 * reset.  The device keeps no allocations in it: the driver hands out
 * pieces of it, and a piece is what REG_MR names.
 */
#define QHCA_DM_BAR			4
#define QHCA_DM_MIN_SIZE		0x1000

/* ------------------------------------------------------------------ */
/* Registers (BAR 0).  All are 32 bits wide and accessed as 32 bits.   */
/* ------------------------------------------------------------------ */

#define QHCA_REG_VERSION		0x000	/* RO */
#define   QHCA_VERSION_MINOR		0x0000ffff
#define   QHCA_VERSION_MAJOR		0xffff0000
#define QHCA_REG_MAGIC			0x004	/* RO: QHCA_MAGIC */
#define QHCA_REG_CAPS			0x008	/* RO: QHCA_CAP_* */
#define QHCA_REG_AQ_CAPS		0x00c	/* RO */
#define   QHCA_AQ_CAPS_MAX_DEPTH_LOG2	0x0000000f
#define QHCA_REG_CTRL			0x010	/* RW */
#define   QHCA_CTRL_ENABLE		0x00000001
#define   QHCA_CTRL_RESET		0x00000002	/* self-clearing */
#define   QHCA_CTRL_RSVD		0xfffffffc
#define QHCA_REG_STATUS			0x014	/* RO */
#define   QHCA_STATUS_READY		0x00000001
#define   QHCA_STATUS_FATAL		0x00000002
#define QHCA_REG_ERROR			0x018	/* RO: last QHCA_ERR_*, 0 = none */
#define QHCA_REG_DB_PAGES		0x01c	/* RO: doorbell pages in BAR 2 */
#define QHCA_REG_AQ_SQ_BASE_LO		0x020	/* RW while not enabled */
#define QHCA_REG_AQ_SQ_BASE_HI		0x024
#define QHCA_REG_AQ_CQ_BASE_LO		0x028
#define QHCA_REG_AQ_CQ_BASE_HI		0x02c
#define QHCA_REG_AQ_CFG			0x030	/* RW while not enabled */
#define   QHCA_AQ_CFG_DEPTH_LOG2	0x0000000f
#define   QHCA_AQ_CFG_MSIX_VECTOR	0x0000ff00
#define   QHCA_AQ_CFG_RSVD		0xffff00f0
#define QHCA_REG_AQ_SQ_DB		0x034	/* WO: SQ producer index */
#define QHCA_REG_AQ_CQ_DB		0x038	/* WO: CQ consumer index */
#define QHCA_REG_EQ_DB			0x03c	/* WO: EQ consumer index */
#define   QHCA_EQ_DB_CONS_IDX		0x00ffffff
#define   QHCA_EQ_DB_EQN		0xff000000
#define QHCA_REG_MSIX_VECTORS		0x040	/* RO: MSI-X vectors */
#define QHCA_REG_END			0x044

#define QHCA_MAGIC			0x41434851	/* "QHCA" */
#define QHCA_VERSION_1_0		0x00010000
#define QHCA_VERSION_1_1		0x00010001
#define QHCA_VERSION_1_2		0x00010002
#define QHCA_VERSION_1_3		0x00010003
#define QHCA_VERSION_1_4		0x00010004
#define QHCA_VERSION_1_5		0x00010005
#define QHCA_VERSION_1_6		0x00010006
#define QHCA_VERSION_1_7		0x00010007
#define QHCA_VERSION_1_8		0x00010008
#define QHCA_VERSION_CURRENT		QHCA_VERSION_1_8

/* CAPS: no optional capabilities are defined in version 1.0. */
#define QHCA_CAP_RSVD			0xffffffff

/* The admin queue holds 2^1 .. 2^12 entries in both its SQ and CQ. */
#define QHCA_AQ_MIN_DEPTH_LOG2		1
#define QHCA_AQ_MAX_DEPTH_LOG2		12
/* Queues start on a 64-byte boundary. */
#define QHCA_QUEUE_ALIGN		64

/* Values of the ERROR register. */
enum qhca_error {
	QHCA_ERR_NONE		= 0,
	QHCA_ERR_BAD_REGISTER	= 1,	/* unknown offset or bad width */
	QHCA_ERR_RESERVED_BITS	= 2,	/* reserved register bits set */
	QHCA_ERR_AQ_CONFIG	= 3,	/* enable with a bad admin queue */
	QHCA_ERR_NOT_READY	= 4,	/* doorbell while not enabled */
	QHCA_ERR_BAD_DOORBELL	= 5,	/* index outside the ring */
	QHCA_ERR_DMA		= 6,	/* a ring access left guest RAM */
	QHCA_ERR_CONFIG_LOCKED	= 7,	/* queue config written while enabled */
};

/* ------------------------------------------------------------------ */
/* Admin queue                                                         */
/* ------------------------------------------------------------------ */

enum qhca_aq_opcode {
	QHCA_CMD_QUERY_DEVICE	= 0x01,
	QHCA_CMD_QUERY_PORT	= 0x02,
	QHCA_CMD_ALLOC_UAR	= 0x03,
	QHCA_CMD_DEALLOC_UAR	= 0x04,
	QHCA_CMD_ALLOC_PD	= 0x05,
	QHCA_CMD_DEALLOC_PD	= 0x06,
	QHCA_CMD_CREATE_EQ	= 0x07,
	QHCA_CMD_DESTROY_EQ	= 0x08,
	QHCA_CMD_QUERY_STATS	= 0x09,
	QHCA_CMD_REG_MR		= 0x0a,
	QHCA_CMD_DEREG_MR	= 0x0b,
	QHCA_CMD_CREATE_CQ	= 0x0c,
	QHCA_CMD_DESTROY_CQ	= 0x0d,
	QHCA_CMD_CREATE_QP	= 0x0e,
	QHCA_CMD_MODIFY_QP	= 0x0f,
	QHCA_CMD_QUERY_QP	= 0x10,
	QHCA_CMD_DESTROY_QP	= 0x11,
	QHCA_CMD_QUERY_COUNTERS	= 0x12,
	/* 1.2 */
	QHCA_CMD_CREATE_SRQ	= 0x13,
	QHCA_CMD_MODIFY_SRQ	= 0x14,
	QHCA_CMD_QUERY_SRQ	= 0x15,
	QHCA_CMD_DESTROY_SRQ	= 0x16,
	QHCA_CMD_ATTACH_MCAST	= 0x17,
	QHCA_CMD_DETACH_MCAST	= 0x18,
	QHCA_CMD_ALLOC_XRCD	= 0x19,
	QHCA_CMD_DEALLOC_XRCD	= 0x1a,
	/* 1.2: memory windows */
	QHCA_CMD_ALLOC_MW	= 0x1b,
	QHCA_CMD_DEALLOC_MW	= 0x1c,
	/* 1.3: fault injection, with QHCA_DEV_CAP_FAULT_INJECT */
	QHCA_CMD_INJECT_FAULT	= 0x1d,
	/* 1.5: the Ethernet port (link_layer QHCA_LINK_LAYER_ETH only) */
	QHCA_CMD_SET_GID	= 0x1e,
	QHCA_CMD_SET_QP_AV	= 0x1f,
	/* 1.6: each with its QHCA_DEV_CAP_* bit */
	QHCA_CMD_RESIZE_CQ	= 0x20,	/* QHCA_DEV_CAP_RESIZE_CQ */
	QHCA_CMD_REREG_MR	= 0x21,	/* QHCA_DEV_CAP_REREG_MR */
	/* 1.8: on-demand paging, with QHCA_DEV_CAP_ON_DEMAND_PAGING */
	QHCA_CMD_ODP_MAP		= 0x22,
	QHCA_CMD_ODP_UNMAP		= 0x23,
	QHCA_CMD_QUERY_PAGE_FAULT	= 0x24,
	QHCA_CMD_RESUME_PAGE_FAULT	= 0x25,
};

enum qhca_aq_status {
	QHCA_AQ_SUCCESS		= 0x00,
	QHCA_AQ_BAD_OPCODE	= 0x01,	/* unknown opcode */
	QHCA_AQ_BAD_PARAM	= 0x02,	/* a field out of range, reserved set */
	QHCA_AQ_BAD_ADDRESS	= 0x03,	/* a DMA address outside guest RAM */
	QHCA_AQ_NO_RESOURCES	= 0x04,	/* the object table is full */
	QHCA_AQ_BAD_HANDLE	= 0x05,	/* no such object */
	QHCA_AQ_BAD_STATE	= 0x06,	/* object busy or in the wrong state */
	QHCA_AQ_INTERNAL	= 0x07,
};

#define QHCA_AQ_PAYLOAD_SIZE	40

/*
 * Admin submission entry.  The response, when the command has one, is
 * written to resp_addr; resp_len must be at least the command's response
 * size and the device writes exactly that size.
 */
struct qhca_aq_sqe {
	__le16 opcode;
	__le16 cmd_id;		/* echoed in the completion */
	__le32 flags;		/* reserved */
	__le64 resp_addr;
	__le32 resp_len;
	__le32 rsvd;
	__u8 payload[QHCA_AQ_PAYLOAD_SIZE];
};
QHCA_ASSERT_SIZE(qhca_aq_sqe, 64);

/*
 * Admin completion entry.  The device writes the whole entry with the
 * phase bit last: 1 on its first pass over the ring, 0 on the second, ...
 */
struct qhca_aq_cqe {
	__le16 cmd_id;
	__u8 status;		/* enum qhca_aq_status */
	__u8 flags;
	__le32 result;		/* command specific: a handle */
	__le16 sq_head;		/* SQ entries consumed by the device */
	__le16 rsvd0;
	__le32 rsvd1;
};
QHCA_ASSERT_SIZE(qhca_aq_cqe, 16);
#define QHCA_CQE_FLAGS_PHASE	0x01

/* QUERY_DEVICE: no payload; response struct qhca_device_attr. */
struct qhca_device_attr {
	__le64 fw_version;
	__le64 node_guid;
	__le64 sys_image_guid;
	__le64 max_mr_size;
	__le64 page_size_cap;
	__le32 vendor_id;
	__le32 vendor_part_id;
	__le32 hw_version;
	__le32 max_qp;
	__le32 max_qp_wr;
	__le32 max_sge;
	__le32 max_sge_rd;
	__le32 max_cq;
	__le32 max_cqe;
	__le32 max_mr;
	__le32 max_pd;
	__le32 max_qp_rd_atom;
	__le32 max_qp_init_rd_atom;
	__le32 max_srq;
	__le32 max_srq_wr;
	__le32 max_srq_sge;
	__le32 max_inline_data;
	__le32 max_uar;		/* doorbell pages the driver may allocate */
	__le32 max_eq;
	__le32 max_eqe;
	__le32 max_pkeys;
	__le32 device_cap_flags;	/* QHCA_DEV_CAP_* */
	__u8 num_ports;
	__u8 atomic_cap;	/* 0 none, 1 HCA, 2 global (as ib_atomic_cap) */
	__u8 local_ca_ack_delay;
	__u8 rsvd0[5];
	__le32 hca_core_clock;	/* kHz of the CQE timestamp clock (1.2) */
	__le32 dm_size;		/* bytes of BAR 4, with DEVICE_MEMORY (1.7) */
	__le32 rsvd1[3];
	__le32 max_mw;		/* memory windows, with DEV_CAP_MW (1.2) */
};
QHCA_ASSERT_SIZE(qhca_device_attr, 160);
/* Values of QUERY_DEVICE that the interface fixes. */
#define QHCA_MAX_MR_SIZE		(1ull << 40)
/*
 * The MR page sizes REG_MR takes, 2^QHCA_MR_MIN_PAGE_SHIFT ..
 * 2^QHCA_MR_MAX_PAGE_SHIFT (4 KiB .. 1 GiB); before 1.4 the device also
 * advertised 2 GiB pages, which REG_MR refused.
 */
#define QHCA_PAGE_SIZE_CAP		0x7ffff000ull
#define QHCA_LOCAL_CA_ACK_DELAY		16
/* CQE timestamps count nanoseconds: a 1 GHz clock, in kHz. */
#define QHCA_CQE_CLOCK_KHZ		1000000u

#define QHCA_DEV_CAP_RC_RNR_NAK_GEN	0x00000001
#define QHCA_DEV_CAP_PORT_ACTIVE_EVENT	0x00000002
/* 1.2 */
#define QHCA_DEV_CAP_UD			0x00000004
#define QHCA_DEV_CAP_UC			0x00000008
#define QHCA_DEV_CAP_SRQ		0x00000010
#define QHCA_DEV_CAP_CQE_TIMESTAMP	0x00000020
#define QHCA_DEV_CAP_XRC		0x00000040
#define QHCA_DEV_CAP_MW			0x00000080	/* type 1 and 2B */
#define QHCA_DEV_CAP_MEM_MGT_EXT	0x00000100	/* fast-reg, invalidate */
/* 1.3 */
#define QHCA_DEV_CAP_FAULT_INJECT	0x00000200	/* INJECT_FAULT works */
/*
 * 1.6.  A bit is set only when the device implements the whole feature:
 * a command or opcode of a feature whose bit is clear is BAD_OPCODE
 * (commands) or LOC_QP_OP_ERR (WQEs), as an unknown one.
 */
#define QHCA_DEV_CAP_RESIZE_CQ		0x00000400	/* RESIZE_CQ */
#define QHCA_DEV_CAP_RESIZE_SRQ		0x00000800	/* MODIFY_SRQ max_wr */
#define QHCA_DEV_CAP_REREG_MR		0x00001000	/* REREG_MR */
#define QHCA_DEV_CAP_FLUSH		0x00002000	/* WR_FLUSH, FLUSH access */
#define QHCA_DEV_CAP_ATOMIC_WRITE	0x00004000	/* WR_ATOMIC_WRITE */
/* 1.7 */
#define QHCA_DEV_CAP_DEVICE_MEMORY	0x00008000	/* BAR 4, REG_MR DM */
/* 1.8 */
#define QHCA_DEV_CAP_ON_DEMAND_PAGING	0x00010000	/* REG_MR ODP, page faults */

/* QUERY_PORT: payload struct qhca_cmd_query_port; response qhca_port_attr. */
struct qhca_cmd_query_port {
	__u8 port_num;		/* 1 */
	__u8 rsvd[7];
};
QHCA_ASSERT_SIZE(qhca_cmd_query_port, 8);

enum qhca_port_state {		/* as enum ib_port_state */
	QHCA_PORT_DOWN		= 1,
	QHCA_PORT_INIT		= 2,
	QHCA_PORT_ARMED		= 3,
	QHCA_PORT_ACTIVE	= 4,
};

struct qhca_port_attr {
	__le64 port_guid;	/* also the interface ID of GID 0 */
	__le64 subnet_prefix;	/* the prefix of GID 0 */
	__le32 port_cap_flags;	/* as enum ib_port_capability_mask_bits */
	__le32 max_msg_sz;
	__le16 lid;
	__le16 sm_lid;
	__le16 pkey;		/* the one entry of the P_Key table */
	__le16 gid_tbl_len;
	__le16 pkey_tbl_len;
	__u8 state;		/* enum qhca_port_state */
	__u8 phys_state;	/* 5 = LinkUp, 3 = Disabled */
	__u8 max_mtu;		/* as enum ib_mtu: 1 = 256 .. 5 = 4096 */
	__u8 active_mtu;
	__u8 lmc;
	__u8 sm_sl;
	__u8 active_speed;	/* as enum ib_port_speed */
	__u8 active_width;	/* as enum ib_port_width */
	__u8 max_vl_num;
	__u8 link_layer;	/* 1.5: QHCA_LINK_LAYER_*; 0 before 1.5 = IB */
	__u8 mac[6];		/* 1.5, Ethernet: the port's MAC address */
	__le16 eth_mtu;		/* 1.5, Ethernet: largest frame payload */
	__le32 rsvd1[3];
};
QHCA_ASSERT_SIZE(qhca_port_attr, 64);

/*
 * 1.5: the link layer of the port, as enum rdma_link_layer.  An IB port
 * (the device without a netdev) has LIDs and loops its packets back
 * inside the device, as before 1.5.  An Ethernet port (the device property
 * netdev set) sends and receives RoCEv2 frames on that QEMU netdev and is
 * also an Ethernet NIC: see Documentation/hw/qhca-ethernet.rst.  On an
 * Ethernet port lid, sm_lid and lmc are 0, gid_tbl_len is
 * QHCA_ROCE_GID_TBL_LEN (entries written by SET_GID), pkey is 0xffff,
 * max_mtu and active_mtu are 5 (4096): the driver lowers the MTU it
 * reports to what the netdev's MTU carries, as rxe does.  eth_mtu is the
 * largest Ethernet payload (the netdev MTU, without the 14- or 18-byte
 * header) the device sends or receives: QHCA_ETH_MAX_MTU.
 */
#define QHCA_LINK_LAYER_IB		1
#define QHCA_LINK_LAYER_ETH		2
#define QHCA_ETH_MAX_MTU		9000
#define QHCA_ETH_MIN_MTU		68
#define QHCA_ETH_HLEN			14
#define QHCA_ETH_VLAN_HLEN		18
/* Largest frame, without FCS: payload, header and one VLAN tag. */
#define QHCA_ETH_FRAME_MAX		(QHCA_ETH_MAX_MTU + QHCA_ETH_VLAN_HLEN)
#define QHCA_ETH_FRAME_MIN		QHCA_ETH_HLEN
#define QHCA_ROCE_GID_TBL_LEN		16
#define QHCA_ROCE_UDP_PORT		4791	/* IANA, RoCEv2 */
/* The Q_Key of the GSI QP, QP1 (IBTA vol. 1, 13.4.6.1 / ib_mad). */
#define QHCA_GSI_QKEY			0x80010000u
#define QHCA_GSI_QPN			1
#define QHCA_DEFAULT_PKEY		0xffff

/*
 * ALLOC_UAR: no payload; result is the index of a doorbell page in BAR 2.
 * DEALLOC_UAR: payload struct qhca_cmd_handle with the index.
 * ALLOC_PD: no payload; result is the PD number.
 * DEALLOC_PD: payload struct qhca_cmd_handle with the PD number.
 * DESTROY_EQ: payload struct qhca_cmd_handle with the EQ number.
 */
struct qhca_cmd_handle {
	__le32 handle;
	__le32 rsvd;
};
QHCA_ASSERT_SIZE(qhca_cmd_handle, 8);

/* CREATE_EQ: result is the EQ number. */
struct qhca_cmd_create_eq {
	__le64 base_addr;	/* QHCA_QUEUE_ALIGN aligned */
	__u8 depth_log2;	/* QHCA_EQ_MIN_DEPTH_LOG2 .. max_eqe */
	__u8 rsvd0;
	__le16 msix_vector;
	__le32 event_mask;	/* bit n: deliver events of type n */
	__le64 rsvd1;
};
QHCA_ASSERT_SIZE(qhca_cmd_create_eq, 24);
#define QHCA_EQ_MIN_DEPTH_LOG2	1

/*
 * QUERY_STATS: response struct qhca_stats, the device's object counts.
 * 1.4 added mws, xrcds and mcast_groups after the 1.3 layout, so that a
 * leak check sees every object the device holds: the device accepts a
 * resp_len of QHCA_STATS_SIZE_1_3 or more and writes
 * min(resp_len, sizeof(struct qhca_stats)) bytes.
 */
struct qhca_stats {
	__le32 uars;
	__le32 pds;
	__le32 eqs;
	__le32 cqs;
	__le32 qps;
	__le32 mrs;
	__le32 srqs;		/* 1.2 */
	__le32 rsvd0;
	__le64 admin_cmds;	/* admin commands executed */
	__le64 admin_errors;	/* admin commands that did not succeed */
	__le64 doorbells;	/* doorbell page writes */
	__le64 guest_errors;	/* everything logged as a guest error */
	__le32 mws;		/* 1.4: memory windows */
	__le32 xrcds;		/* 1.4: XRC domains */
	__le32 mcast_groups;	/* 1.4: multicast groups with a QP attached */
	__le32 rsvd1[5];
};
QHCA_ASSERT_SIZE(qhca_stats, 96);
#define QHCA_STATS_SIZE_1_3		64

/*
 * INJECT_FAULT (1.3): payload struct qhca_cmd_inject_fault, no response,
 * result 0.  Only with QHCA_DEV_CAP_FAULT_INJECT (the device property
 * "fault-injection"); without it the command is BAD_OPCODE.  A handle that
 * names no live object is BAD_HANDLE; an unknown type, or a reserved
 * field set, is BAD_PARAM.  See Documentation/hw/qhca-faults.rst.
 */
enum qhca_fault_type {
	QHCA_FAULT_LINK_DOWN	= 1,	/* port to DOWN; the wire drops packets */
	QHCA_FAULT_LINK_UP	= 2,	/* port back to ACTIVE */
	QHCA_FAULT_QP_FATAL	= 3,	/* handle: QPN; QP to ERR, QP_FATAL */
	QHCA_FAULT_SRQ_ERR	= 4,	/* handle: SRQN; SRQ to ERR, SRQ_ERR */
	QHCA_FAULT_CQ_ERR	= 5,	/* handle: CQN; as a CQ overrun */
	QHCA_FAULT_DROP		= 6,	/* handle: drop the next n packets */
	QHCA_FAULT_AQ_HANG	= 7,	/* admin queue stops until reset */
};

struct qhca_cmd_inject_fault {
	__le16 type;		/* enum qhca_fault_type */
	__le16 rsvd0;
	__le32 handle;		/* object number or count, by type */
	__le64 rsvd1;
};
QHCA_ASSERT_SIZE(qhca_cmd_inject_fault, 16);
#define QHCA_FAULT_MAX_DROP	1000000

/*
 * SET_GID (1.5, Ethernet port): payload struct qhca_cmd_set_gid, no
 * response, result 0.  Writes entry index (< QHCA_ROCE_GID_TBL_LEN) of
 * the port's GID table: type QHCA_GID_ROCE_V2 with the GID (an IPv6
 * address, or an IPv4 one as ::ffff:a.b.c.d), or QHCA_GID_NONE to clear it
 * (gid then zero).  The driver mirrors ib_core's add_gid/del_gid.  The
 * table gives a sending QP its source IP address (sgid_index) and tells
 * which received RoCEv2 frames are the port's (destination IP in the
 * table).  An IB port answers BAD_STATE; an index out of range, an
 * unknown type, a GID that is zero, multicast or (for ROCE_V2) neither
 * IPv4-mapped nor a unicast IPv6 address is BAD_PARAM.  A reset clears
 * the table.
 */
enum qhca_gid_type {
	QHCA_GID_NONE		= 0,
	QHCA_GID_ROCE_V2	= 2,	/* RoCE v2, as IB_GID_TYPE_ROCE_UDP_ENCAP */
};

struct qhca_cmd_set_gid {
	__le16 index;
	__u8 type;		/* enum qhca_gid_type */
	__u8 rsvd0[5];
	__u8 gid[16];		/* network byte order */
	__le64 rsvd1[2];
};
QHCA_ASSERT_SIZE(qhca_cmd_set_gid, 40);

/*
 * SET_QP_AV (1.5, Ethernet port): payload struct qhca_cmd_set_qp_av, no
 * response, result 0.  The RoCEv2 address vector of connected QP qpn (RC,
 * UC, XRC INI or XRC TGT): what its requests and its responses carry in
 * their Ethernet, IP and UDP headers.  Taken in any state but ERR; the
 * driver sends it before the MODIFY_QP that moves the QP to RTR, where it
 * takes the place of dlid (QHCA_QP_ATTR_PATH still carries path_mtu; dlid
 * must be 0).  A QP without an AV that reaches RTR on an Ethernet port is
 * BAD_PARAM.  sgid_index names a ROCE_V2 entry of the GID table, dgid the
 * peer's GID of the same IP version (unicast), dmac the peer's MAC
 * (unicast, not zero).  The UDP source port is the device's:
 * rdma_get_udp_sport(flow_label, qpn, dest_qpn) of Linux, i.e. from the
 * flow label, or from the two QPNs when it is 0.  An IB port answers
 * BAD_STATE; a bad field, BAD_PARAM; an unknown QP, BAD_HANDLE.
 */
struct qhca_cmd_set_qp_av {
	__le32 qpn;
	__u8 dgid[16];		/* network byte order */
	__u8 dmac[6];
	__u8 sgid_index;
	__u8 hop_limit;		/* IPv4 TTL / IPv6 hop limit; 0 = 64 */
	__le32 flow_label;	/* 20 bits */
	__u8 traffic_class;	/* IPv4 TOS / IPv6 traffic class */
	__u8 rsvd0[3];
	__le32 rsvd1;
};
QHCA_ASSERT_SIZE(qhca_cmd_set_qp_av, 40);

/* ------------------------------------------------------------------ */
/* Event queue                                                         */
/* ------------------------------------------------------------------ */

enum qhca_event_type {
	QHCA_EVENT_PORT_ACTIVE	= 1,	/* data: port number */
	QHCA_EVENT_PORT_DOWN	= 2,	/* data: port number */
	QHCA_EVENT_COMPLETION	= 3,	/* data: CQ number */
	QHCA_EVENT_CQ_ERROR	= 4,	/* data: CQ number */
	QHCA_EVENT_QP_FATAL	= 5,	/* data: QP number */
	QHCA_EVENT_DEVICE_FATAL	= 6,
	QHCA_EVENT_QP_REQ_ERR	= 7,	/* data: QP number */
	QHCA_EVENT_QP_ACCESS_ERR = 8,	/* data: QP number */
	/* 1.2 */
	QHCA_EVENT_SRQ_LIMIT	= 9,	/* data: SRQ number */
	QHCA_EVENT_QP_LAST_WQE	= 10,	/* data: QP number */
	QHCA_EVENT_SRQ_ERR	= 11,	/* data: SRQ number */
	/* 1.8: a QP met an absent page of an ODP MR; see QUERY_PAGE_FAULT */
	QHCA_EVENT_PAGE_FAULT	= 12,	/* data: QP number */
};

/* Written with the phase bit last, with the same phase rule as the AQ CQ. */
struct qhca_eqe {
	__u8 type;		/* enum qhca_event_type */
	__u8 flags;		/* QHCA_EQE_FLAGS_PHASE */
	__le16 rsvd0;
	__le32 data;
	__le64 rsvd1;
};
QHCA_ASSERT_SIZE(qhca_eqe, 16);
#define QHCA_EQE_FLAGS_PHASE	0x01

/* ------------------------------------------------------------------ */
/* Doorbell page (BAR 2, one 4 KiB page per UAR)                       */
/* ------------------------------------------------------------------ */

/*
 * A doorbell is one 32-bit write of a queue number and a free-running
 * 16-bit index.  A write to a page that is not allocated, to an undefined
 * offset, for a queue that does not belong to the page's UAR, or with an
 * index that moves further than the ring holds, is a guest error and is
 * ignored.
 */
#define QHCA_DB_SQ		0x000	/* SQ producer index */
#define QHCA_DB_RQ		0x008	/* RQ producer index */
#define QHCA_DB_CQ_ARM		0x010	/* arm: next completion */
#define QHCA_DB_CQ_ARM_SOL	0x018	/* arm: next solicited or error */
#define QHCA_DB_SRQ		0x020	/* SRQ producer index (1.2) */
#define   QHCA_DB_QUEUE_IDX	0x0000ffff	/* producer/consumer index */
#define   QHCA_DB_QUEUE_NUM	0xffff0000	/* QP or CQ number */

/* ------------------------------------------------------------------ */
/* Data path objects: memory regions, completion queues, queue pairs   */
/* ------------------------------------------------------------------ */

/* Access flags of MRs and QPs: the values of enum ib_access_flags. */
#define QHCA_ACCESS_LOCAL_WRITE		0x01
#define QHCA_ACCESS_REMOTE_WRITE	0x02
#define QHCA_ACCESS_REMOTE_READ		0x04
#define QHCA_ACCESS_REMOTE_ATOMIC	0x08
#define QHCA_ACCESS_ALL			0x0f
/* 1.2: MRs only: memory windows may be bound to the MR. */
#define QHCA_ACCESS_MW_BIND		0x10
#define QHCA_ACCESS_MR_ALL		0x1f
/*
 * 1.6, with QHCA_DEV_CAP_FLUSH: the IBA 1.5 FLUSH targets an MR (and a QP)
 * accepts, IB_ACCESS_FLUSH_GLOBAL and IB_ACCESS_FLUSH_PERSISTENT.  They are
 * not IB's bit values: the driver translates.
 */
#define QHCA_ACCESS_FLUSH_GLOBAL	0x20
#define QHCA_ACCESS_FLUSH_PERSISTENT	0x40

/*
 * An lkey or rkey is the MR's table index shifted left by 8 with an 8-bit
 * key chosen by the driver, so that a stale key of a reused index fails.
 */
#define QHCA_MKEY_KEY			0x000000ff
#define QHCA_MKEY_INDEX			0xffffff00
/*
 * 1.2: with QHCA_DEV_CAP_MW, a key with bit 31 set names a memory window:
 * QHCA_MKEY_MW_INDEX is its index in the MW table.  MR indices stay below
 * 2^23.  A window key is only an rkey; as an lkey it fails.
 */
#define QHCA_MKEY_MW			0x80000000
#define QHCA_MKEY_MW_INDEX		0x7fffff00

/*
 * REG_MR: result is the MR's table index.  The device copies the page list
 * at registration: later changes to it have no effect.
 *   flags PHYS: no page list; addresses are guest bus addresses and must
 *     lie in guest RAM (kernel DMA MRs); iova must be 0.
 *   flags PBL_INDIRECT: pbl_addr points to a list of 4 KiB pages, each
 *     holding 512 page addresses; otherwise it points to npages addresses.
 * The MR covers [iova, iova + length); the first page holds iova rounded
 * down to the page size 2^page_shift (12 .. 30), and npages pages cover
 * the whole range.
 */
struct qhca_cmd_reg_mr {
	__le64 iova;
	__le64 length;
	__le64 pbl_addr;
	__le32 pdn;
	__le32 npages;
	__u8 access;		/* QHCA_ACCESS_* */
	__u8 key;		/* the low 8 bits of lkey and rkey */
	__u8 page_shift;
	__u8 flags;		/* QHCA_MR_F_* */
	__le32 rsvd;
};
QHCA_ASSERT_SIZE(qhca_cmd_reg_mr, 40);
#define QHCA_MR_F_PHYS			0x01
#define QHCA_MR_F_PBL_INDIRECT		0x02
/*
 * 1.2, with QHCA_DEV_CAP_MEM_MGT_EXT: a fast-registration MR.  No page
 * list (pbl_addr 0), iova and length 0; npages is the most pages a
 * REG_MR WQE may map (1 .. 2^16) and is charged to max-mr-pages.  The MR
 * starts invalid (free): its keys fail until a REG_MR WQE maps it, and a
 * LOCAL_INV or SEND_WITH_INV of its key makes it free again.
 */
#define QHCA_MR_F_FAST_REG		0x04
/*
 * 1.7, with QHCA_DEV_CAP_DEVICE_MEMORY: an MR of device memory.  pbl_addr
 * is the offset in BAR 4 of the MR's first byte (any alignment), and
 * [pbl_addr, pbl_addr + length) lies in BAR 4; the MR covers [iova, iova +
 * length) (iova 0 for the verbs' zero-based device memory MRs); npages
 * and page_shift are 0.  1.8: length may be 0 (an MR no access reaches
 * but one of length 0; pbl_addr is then at most dm_size); before 1.8 it
 * was at least 1.  Access as for any MR, but
 * not MW_BIND (BAD_PARAM): no memory window is bound to device memory.
 * REREG_MR refuses it, as it refuses PHYS.
 */
#define QHCA_MR_F_DM			0x08
/*
 * 1.8, with QHCA_DEV_CAP_ON_DEMAND_PAGING: an on-demand paging MR.  No
 * page list at registration (pbl_addr 0, npages 0): every page starts
 * absent, and ODP_MAP / ODP_UNMAP make pages present or absent later.
 * The MR covers [iova, iova + length) as any MR (length 1 ..
 * QHCA_MAX_MR_SIZE), with pages of 2^page_shift (12 .. 30) counted from
 * iova rounded down to the page size: page k holds [base + k * size,
 * base + (k + 1) * size), base = iova & ~(size - 1).
 * With ODP_IMPLICIT also set, the MR is implicit (the verbs' whole
 * address space): iova and length 0 in the command, and the MR covers
 * [0, 2^QHCA_ODP_IMPLICIT_VA_BITS).
 * Access flags as for any MR, MW_BIND included.  An access that reaches
 * an absent page (or, needing write, a page present without
 * QHCA_ODP_PAGE_WRITE) is a page fault: see QUERY_PAGE_FAULT.  Not with
 * PHYS, PBL_INDIRECT, FAST_REG or DM; REREG_MR refuses an ODP MR
 * (BAD_PARAM).  Present pages are charged to max-mr-pages while they are
 * present; ODP_MAP beyond it is NO_RESOURCES.
 */
#define QHCA_MR_F_ODP			0x10
#define QHCA_MR_F_ODP_IMPLICIT		0x20
#define QHCA_MR_F_RSVD			0xc0
#define QHCA_ODP_IMPLICIT_VA_BITS	57
#define QHCA_FAST_REG_MAX_PAGES		65536
#define QHCA_PBL_ENTRIES_PER_PAGE	512
#define QHCA_MR_MIN_PAGE_SHIFT		12
#define QHCA_MR_MAX_PAGE_SHIFT		30

/*
 * REREG_MR (1.6, QHCA_DEV_CAP_REREG_MR): MR index changes what mask
 * names, in place; its keys stay, and no result.  TRANSLATION: a new
 * iova, length and page list (npages, page_shift, pbl_addr, flags with
 * only PBL_INDIRECT), as REG_MR; PD: the new pdn; ACCESS: the new access.
 * Fields mask does not name are zero.  The new registration is checked
 * whole, as REG_MR checks one, before anything changes: any error leaves
 * the old one as it was.  Only an MR of REG_MR with a page list can be
 * re-registered (not PHYS, not FAST_REG: BAD_PARAM), and not while a
 * memory window is bound to it (BAD_STATE).  Transfers look their MR up
 * at each access, under the device lock as commands run: an access after
 * the command sees the new registration, one before it the old.
 */
struct qhca_cmd_rereg_mr {
	__le64 iova;		/* TRANSLATION */
	__le64 length;		/* TRANSLATION */
	__le64 pbl_addr;	/* TRANSLATION */
	__le32 index;		/* the MR, as REG_MR returned it */
	__le32 pdn;		/* PD */
	__le32 npages;		/* TRANSLATION */
	__u8 access;		/* ACCESS: QHCA_ACCESS_* */
	__u8 page_shift;	/* TRANSLATION */
	__u8 flags;		/* TRANSLATION: QHCA_MR_F_PBL_INDIRECT or 0 */
	__u8 mask;		/* QHCA_REREG_* */
};
QHCA_ASSERT_SIZE(qhca_cmd_rereg_mr, 40);
#define QHCA_REREG_TRANSLATION		0x01
#define QHCA_REREG_PD			0x02
#define QHCA_REREG_ACCESS		0x04
#define QHCA_REREG_RSVD			0xf8

/*
 * 1.8: ODP_MAP makes npages pages of ODP MR index present, from page
 * first_page on (pages counted as QHCA_MR_F_ODP says).  pbl_addr points to
 * npages __le64 entries (8-byte aligned, in guest RAM), read once by the
 * command.  An entry is 0 (the page becomes absent) or the guest address
 * of the page (aligned to the MR's page size, the whole page in guest
 * RAM) with QHCA_ODP_PAGE_READ and maybe QHCA_ODP_PAGE_WRITE in its low
 * bits, as ib_umem_odp keeps its DMA list.  The whole command is checked
 * before any page changes: a bad entry, a page beyond the MR or a
 * reserved bit is BAD_PARAM and nothing is mapped.  No result.
 */
struct qhca_cmd_odp_map {
	__le64 first_page;
	__le64 pbl_addr;
	__le32 index;		/* the MR, as REG_MR returned it */
	__le32 npages;		/* 1 .. QHCA_ODP_MAP_MAX_PAGES */
	__le32 rsvd[2];
};
QHCA_ASSERT_SIZE(qhca_cmd_odp_map, 32);
#define QHCA_ODP_MAP_MAX_PAGES		512
#define QHCA_ODP_PAGE_READ		0x1ull
#define QHCA_ODP_PAGE_WRITE		0x2ull
#define QHCA_ODP_PAGE_RSVD		0xffcull	/* below 4 KiB */

/*
 * 1.8: ODP_UNMAP makes pages [first_page, first_page + npages) of ODP MR
 * index absent (npages >= 1; pages beyond the MR's end are ignored, pages
 * already absent stay so).  It is the invalidation fence: when its
 * completion is written, no access of the device uses those pages any
 * more and none that used them is still going on (the engine takes the
 * device lock per packet, as commands do).  No result.
 */
struct qhca_cmd_odp_unmap {
	__le64 first_page;
	__le64 npages;
	__le32 index;		/* the MR */
	__le32 rsvd;
};
QHCA_ASSERT_SIZE(qhca_cmd_odp_unmap, 24);

/*
 * 1.8: page faults.  A QP whose access meets an absent page of an ODP MR
 * (or a page without QHCA_ODP_PAGE_WRITE for a write) records the fault and
 * posts QHCA_EVENT_PAGE_FAULT with its QP number (one event per fault,
 * delivered as the other QP events are, to the EQs whose event_mask has
 * bit 12).  A QP holds at most one requester and one responder fault:
 *   REQUESTER: a local access of a send WQE (gathering a SEND's or WRITE's
 *     data, scattering a READ response or an atomic's result).  The send
 *     queue stops at that point: nothing after it goes out (a READ
 *     response that faulted is dropped and asked for again on resume).
 *     UD and UC requesters fault the same way.
 *   RESPONDER: an incoming request's access (WRITE, READ, atomic, FLUSH,
 *     ATOMIC_WRITE data, or a SEND's receive WQE buffer).  RC and XRC
 *     answer the request with an RNR NAK (the QP's min_rnr_timer), so the
 *     requester sends it again later; UD and UC drop the message (counted
 *     in RX_DROPS).  A READ's pages are checked when it arrives; if one
 *     is unmapped after that, the READ response that meets it is the
 *     fault (psn: that response's) and the responses wait for the resume.
 * QUERY_PAGE_FAULT (payload qpn) returns struct qhca_page_fault_info for
 * both kinds; BAD_HANDLE if no such QP.  The driver maps the pages
 * (ODP_MAP) and then RESUME_PAGE_FAULT names the QP and kind:
 *   status RESOLVED: the QP goes on (a requester from where it stopped; a
 *     responder waits for the request again).  A page still absent is a
 *     new fault.
 *   status FAILED (the address is not mapped in the process): the access
 *     is retried once more as it would be after RESOLVED, and if its page
 *     is still absent it fails as an access outside the MR fails: a
 *     local access with LOC_PROT_ERR, a remote request with the NAK that
 *     completes it REM_ACCESS_ERR at the requester, a receive as a
 *     receive SGE outside its MR.
 * RESUME of a kind with no pending fault is BAD_STATE.  Modifying the QP
 * to RESET or ERR, and destroying it, drops its pending faults.  A fault
 * never resumed leaves that QP waiting; nothing else in the device waits.
 */
struct qhca_cmd_query_page_fault {
	__le32 qpn;
	__le32 rsvd;
};
QHCA_ASSERT_SIZE(qhca_cmd_query_page_fault, 8);

enum qhca_page_fault_kind {
	QHCA_PAGE_FAULT_REQUESTER	= 0,
	QHCA_PAGE_FAULT_RESPONDER	= 1,
	QHCA_PAGE_FAULT_KINDS		= 2,
};

struct qhca_page_fault {
	__le64 addr;		/* MR address (iova) of the first absent byte */
	__le32 length;		/* bytes of the access from addr, >= 1 */
	__le32 mr_index;	/* the ODP MR (behind a window's rkey too) */
	__le32 psn;		/* RESPONDER: the request's PSN */
	__u8 flags;		/* QHCA_PAGE_FAULT_F_* */
	__u8 rsvd[3];
};
QHCA_ASSERT_SIZE(qhca_page_fault, 24);
#define QHCA_PAGE_FAULT_F_PENDING	0x01	/* the other fields are valid */
#define QHCA_PAGE_FAULT_F_WRITE		0x02	/* the access writes the MR */

/* QUERY_PAGE_FAULT response: indexed by enum qhca_page_fault_kind. */
struct qhca_page_fault_info {
	struct qhca_page_fault fault[QHCA_PAGE_FAULT_KINDS];
};
QHCA_ASSERT_SIZE(qhca_page_fault_info, 48);

struct qhca_cmd_resume_page_fault {
	__le32 qpn;
	__u8 kind;		/* enum qhca_page_fault_kind */
	__u8 status;		/* QHCA_PAGE_FAULT_RESOLVED or _FAILED */
	__le16 rsvd;
};
QHCA_ASSERT_SIZE(qhca_cmd_resume_page_fault, 8);
#define QHCA_PAGE_FAULT_RESOLVED	0
#define QHCA_PAGE_FAULT_FAILED		1

/*
 * CREATE_CQ: result is the CQ number (1 .. max-cqs; 0 is never used).
 * The ring is 2^depth_log2 entries of struct qhca_cqe, contiguous in
 * guest RAM.  The consumer writes its free-running 32-bit consumer index
 * to the 4-byte record at dbrec_addr; the device reads it only when the
 * ring looks full.  Completion events go to EQ eqn.
 */
struct qhca_cmd_create_cq {
	__le64 ring_addr;	/* QHCA_QUEUE_ALIGN aligned */
	__le64 dbrec_addr;	/* 4-byte aligned */
	__le32 eqn;
	__le32 uar;		/* the UAR whose page may arm this CQ */
	__u8 depth_log2;	/* 1 .. log2(max_cqe) */
	__u8 rsvd0[7];
	__le64 rsvd1;
};
QHCA_ASSERT_SIZE(qhca_cmd_create_cq, 40);

/*
 * RESIZE_CQ (1.6, QHCA_DEV_CAP_RESIZE_CQ): CQ cqn moves to a new ring of
 * 2^depth_log2 entries and a new consumer record.  ci is the free-running
 * consumer index the consumer has reached; the CQEs from ci up to the
 * producer index are copied to the new ring at the same free-running
 * indexes, every other slot of it is written as already consumed, and
 * later CQEs go only to the new ring.  BAD_PARAM if more CQEs are
 * outstanding than the new ring holds; the CQ then works on as before.
 */
struct qhca_cmd_resize_cq {
	__le64 ring_addr;	/* QHCA_QUEUE_ALIGN aligned */
	__le64 dbrec_addr;	/* 4-byte aligned, holding ci */
	__le32 cqn;
	__le32 ci;		/* the consumer's free-running index */
	__u8 depth_log2;	/* 1 .. log2(max_cqe) */
	__u8 rsvd[7];
};
QHCA_ASSERT_SIZE(qhca_cmd_resize_cq, 32);

/* QP types. */
enum qhca_qp_type {		/* as enum ib_qp_type */
	QHCA_QPT_GSI	= 1,	/* 1.5, Ethernet port: QP1, see below */
	QHCA_QPT_RC	= 2,
	QHCA_QPT_UC	= 3,	/* 1.2 */
	QHCA_QPT_UD	= 4,	/* 1.2 */
	QHCA_QPT_XRC_INI = 9,	/* 1.2: XRC initiator, send side only */
	QHCA_QPT_RAW_ETH = 8,	/* 1.5, Ethernet port: the NIC's frames */
	QHCA_QPT_XRC_TGT = 10,	/* 1.2: XRC target, receive side only */
};

/*
 * 1.5, Ethernet port only (an IB port answers CREATE_QP with BAD_STATE):
 *
 * GSI: the port's QP1.  CREATE_QP gives it QP number 1 (NO_RESOURCES if
 * QP1 exists).  It is a UD QP in every other way (WQEs, modify rules,
 * Q_Key check, GRH slot of receives), and RoCEv2 frames to destination
 * QP 1 come to it.
 *
 * RAW_ETH: the queues of the port's Ethernet NIC, created by the driver.
 * A send WQE is QHCA_WR_SEND with SGEs (or inline data) that hold one
 * whole Ethernet frame without FCS, QHCA_ETH_FRAME_MIN ..
 * QHCA_ETH_FRAME_MAX bytes, which the device puts on the wire as it is
 * (LOC_LEN_ERR otherwise); a receive WQE takes one frame, byte_len is its
 * length (a frame larger than the WQE's buffers is dropped and counted in
 * ETH_RX_NO_BUF, and so is one that finds no receive WQE).  The QP goes
 * RESET -> INIT -> RTR -> RTS with only QHCA_QP_ATTR_STATE; frames are sent
 * in RTS and received in RTR and RTS.  The device demultiplexes each frame
 * it receives: UDP to port QHCA_ROCE_UDP_PORT and to an IP address of the
 * GID table (or a multicast group a QP joined) is RoCEv2 and goes to the
 * transport, never to a RAW_ETH QP; every other frame whose destination
 * MAC is the port's, broadcast or multicast goes to the RAW_ETH QP with
 * the lowest number in RTR or RTS, if any.  Frames from the port's own MAC
 * are dropped (a multicast backend echoes them).
 */

/* QP states: the values of enum ib_qp_state. */
enum qhca_qp_state {
	QHCA_QPS_RESET	= 0,
	QHCA_QPS_INIT	= 1,
	QHCA_QPS_RTR	= 2,
	QHCA_QPS_RTS	= 3,
	QHCA_QPS_SQD	= 4,
	QHCA_QPS_SQE	= 5,
	QHCA_QPS_ERR	= 6,
};

/*
 * CREATE_QP: result is the QP number (2 .. max-qps + 1; QP0 and QP1 are
 * the special QPs and are never handed out).  The SQ and RQ rings are
 * 2^depth entries of 2^stride bytes, contiguous in guest RAM.
 */
struct qhca_cmd_create_qp {
	__le64 sq_addr;		/* QHCA_QUEUE_ALIGN aligned */
	__le64 rq_addr;
	__le32 pdn;
	__le32 uar;		/* the UAR whose page rings this QP */
	__le16 send_cqn;
	__le16 recv_cqn;
	__u8 type;		/* enum qhca_qp_type */
	__u8 flags;		/* QHCA_QP_F_* */
	__u8 sq_depth_log2;	/* 1 .. log2(max_qp_wr) */
	__u8 sq_stride_log2;	/* 6 .. 10: 64 .. 1024-byte WQEs */
	__u8 rq_depth_log2;
	__u8 rq_stride_log2;	/* 4 .. 10 */
	__le16 srqn;		/* with QHCA_QP_F_SRQ (1.2) */
	__u8 rsvd[4];
};
QHCA_ASSERT_SIZE(qhca_cmd_create_qp, 40);
#define QHCA_QP_F_SQ_SIG_ALL		0x01
/*
 * 1.2: receives come from SRQ srqn (of the same PD); the QP has no RQ and
 * rq_addr, rq_depth_log2 and rq_stride_log2 are zero.
 */
#define QHCA_QP_F_SRQ			0x02
#define QHCA_QP_F_RSVD			0xfc
#define QHCA_SQ_MIN_STRIDE_LOG2		6
#define QHCA_RQ_MIN_STRIDE_LOG2		4
#define QHCA_WQE_MAX_STRIDE_LOG2	10

/*
 * Limits the interface fixes.  Ring indices are free-running 16-bit
 * numbers, so a work queue or SRQ holds at most 2^15 entries (max_qp_wr
 * and max_srq_wr never exceed it); a WQE has at most QHCA_MAX_SGE SGEs
 * and QHCA_MAX_INLINE bytes of inline data, both also bounded by its
 * stride; a message is at most 2^31 bytes.
 */
#define QHCA_WQ_MAX_DEPTH_LOG2		15
#define QHCA_WQ_MAX_DEPTH		(1u << QHCA_WQ_MAX_DEPTH_LOG2)
#define QHCA_MAX_SGE			16u
#define QHCA_MAX_INLINE			256u
#define QHCA_MAX_RD_ATOMIC		16	/* max_qp_rd_atom, init_rd_atom */
#define QHCA_MAX_MSG_SIZE		(1ull << 31)

/* MODIFY_QP attribute mask: which fields of qhca_cmd_modify_qp apply. */
#define QHCA_QP_ATTR_STATE		0x0001
#define QHCA_QP_ATTR_ACCESS		0x0002
#define QHCA_QP_ATTR_PATH		0x0004	/* dlid, sl, path_mtu */
#define QHCA_QP_ATTR_DEST_QPN		0x0008
#define QHCA_QP_ATTR_RQ_PSN		0x0010
#define QHCA_QP_ATTR_SQ_PSN		0x0020
#define QHCA_QP_ATTR_TIMEOUT		0x0040
#define QHCA_QP_ATTR_RETRY_CNT		0x0080
#define QHCA_QP_ATTR_RNR_RETRY		0x0100
#define QHCA_QP_ATTR_MIN_RNR_TIMER	0x0200
#define QHCA_QP_ATTR_MAX_RD_ATOMIC	0x0400
#define QHCA_QP_ATTR_MAX_DEST_RD_ATOMIC	0x0800
#define QHCA_QP_ATTR_QKEY		0x1000	/* UD (1.2) */
#define QHCA_QP_ATTR_RSVD		0xffffe000

/* Ranges of the fields of MODIFY_QP, as IBA defines them. */
#define QHCA_PSN_MASK			0x00ffffff	/* PSNs are 24 bits */
#define QHCA_QPN_MASK			0x00ffffff	/* QPNs are 24 bits */
#define QHCA_TIMEOUT_MAX		31
#define QHCA_RETRY_CNT_MAX		7
#define QHCA_RNR_RETRY_MAX		7	/* 7: retry for ever */
#define QHCA_MIN_RNR_TIMER_MAX		31
#define QHCA_SL_MAX			15

/*
 * MODIFY_QP: no result.  The device checks the transition (the table of
 * the spec) and the attributes each transition requires, as
 * ib_modify_qp_is_ok() does; a bad one is BAD_STATE or BAD_PARAM and
 * leaves the QP as it was.
 */
struct qhca_cmd_modify_qp {
	__le32 qpn;
	__le32 attr_mask;	/* QHCA_QP_ATTR_* */
	__le32 dest_qpn;
	__le32 sq_psn;		/* 24 bits */
	__le32 rq_psn;		/* 24 bits */
	__le16 dlid;
	__u8 state;		/* enum qhca_qp_state */
	__u8 access;		/* QHCA_ACCESS_REMOTE_* */
	__u8 path_mtu;		/* as enum ib_mtu: 1 (256) .. 5 (4096) */
	__u8 sl;
	__u8 timeout;		/* 4.096 us * 2^timeout; 0 = infinite */
	__u8 retry_cnt;		/* 0 .. 7 */
	__u8 rnr_retry;		/* 0 .. 7; 7 = infinite */
	__u8 min_rnr_timer;	/* IB encoding, 0 .. 31 */
	__u8 max_rd_atomic;
	__u8 max_dest_rd_atomic;
	__le32 qkey;		/* UD (1.2) */
	__le32 rsvd;
};
QHCA_ASSERT_SIZE(qhca_cmd_modify_qp, 40);

/* QUERY_QP: payload struct qhca_cmd_handle; response struct qhca_qp_attr. */
struct qhca_qp_attr {
	__le32 qpn;
	__le32 dest_qpn;
	__le32 sq_psn;		/* next PSN the requester sends */
	__le32 rq_psn;		/* next PSN the responder expects */
	__le16 dlid;
	__le16 send_cqn;
	__le16 recv_cqn;
	__le16 sq_ci;		/* SQ entries consumed, free-running */
	__le16 rq_ci;		/* RQ entries consumed, free-running */
	__u8 state;
	__u8 access;
	__u8 path_mtu;
	__u8 sl;
	__u8 timeout;
	__u8 retry_cnt;
	__u8 rnr_retry;
	__u8 min_rnr_timer;
	__u8 max_rd_atomic;
	__u8 max_dest_rd_atomic;
	__u8 type;
	__u8 flags;
	__le16 srqn;		/* 1.2 */
	__le32 qkey;		/* 1.2 */
	__le32 rsvd1[5];
};
QHCA_ASSERT_SIZE(qhca_qp_attr, 64);

/* QUERY_COUNTERS: response struct qhca_counters, free-running counts. */
enum qhca_counter {
	QHCA_CNT_SQ_WQES,		/* send WQEs executed */
	QHCA_CNT_RQ_WQES,		/* receive WQEs consumed */
	QHCA_CNT_CQES,			/* CQEs written */
	QHCA_CNT_TX_PACKETS,		/* transport packets sent */
	QHCA_CNT_RX_PACKETS,		/* transport packets received */
	QHCA_CNT_TX_BYTES,		/* payload bytes sent */
	QHCA_CNT_RX_BYTES,		/* payload bytes received */
	QHCA_CNT_RNR_NAKS_SENT,
	QHCA_CNT_RNR_NAKS_RCVD,
	QHCA_CNT_RETRIES,		/* retransmissions: timeouts, sequence NAKs */
	QHCA_CNT_ERR_LOC_LEN,
	QHCA_CNT_ERR_LOC_QP_OP,
	QHCA_CNT_ERR_LOC_PROT,
	QHCA_CNT_ERR_REM_INV_REQ,
	QHCA_CNT_ERR_REM_ACCESS,
	QHCA_CNT_ERR_REM_OP,
	QHCA_CNT_ERR_RETRY_EXC,
	QHCA_CNT_ERR_RNR_RETRY_EXC,
	QHCA_CNT_ERR_WR_FLUSH,
	QHCA_CNT_CQ_OVERRUNS,
	QHCA_CNT_DOORBELLS,
	QHCA_CNT_BAD_DOORBELLS,
	QHCA_CNT_COMPLETION_EVENTS,
	QHCA_CNT_ASYNC_EVENTS,
	/* 1.2 */
	QHCA_CNT_RX_DROPS,		/* UD/UC messages dropped silently */
	QHCA_CNT_QKEY_VIOLATIONS,	/* UD messages with a bad Q_Key */
	QHCA_CNT_SRQ_WQES,		/* SRQ receive WQEs consumed */
	/* 1.3 */
	QHCA_CNT_LINK_DOWNED,		/* port transitions out of ACTIVE */
	QHCA_CNT_WIRE_DROPS,		/* packets lost on the wire: link down or injected */
	QHCA_CNT_FAULTS_INJECTED,	/* INJECT_FAULT commands that succeeded */
	/* 1.5: the Ethernet port */
	QHCA_CNT_ETH_TX_FRAMES,		/* frames put on the netdev, all kinds */
	QHCA_CNT_ETH_RX_FRAMES,		/* frames taken from the netdev */
	QHCA_CNT_ETH_RX_NO_BUF,		/* NIC frames with no (big enough) RQ WQE */
	QHCA_CNT_ROCE_RX_DROPS,		/* RoCEv2 frames refused: see the spec */
	QHCA_CNT_ICRC_ERRORS,		/* of those, a bad ICRC */
	/* 1.8: on-demand paging */
	QHCA_CNT_ODP_PAGE_FAULTS,	/* faults recorded (events posted) */
	QHCA_CNT_ODP_FAULTS_FAILED,	/* accesses failed after RESUME FAILED */
	QHCA_CNT_ODP_PAGES_MAPPED,	/* entries ODP_MAP made present */
	QHCA_CNT_ODP_UNMAPS,		/* ODP_UNMAP commands */
	QHCA_CNT_NUM
};

/*
 * 1.5 grew the array from 32 to 64 counters: the device accepts a resp_len
 * of QHCA_COUNTERS_SIZE_1_4 or more and writes min(resp_len, 512) bytes.
 */
struct qhca_counters {
	__le64 cnt[64];		/* indexed by enum qhca_counter */
};
QHCA_ASSERT_SIZE(qhca_counters, 512);
#define QHCA_COUNTERS_SIZE_1_4		256

/* ------------------------------------------------------------------ */
/* Work queue entries                                                  */
/* ------------------------------------------------------------------ */

/* Send opcodes: the values of enum ibv_wr_opcode. */
enum qhca_wr_opcode {
	QHCA_WR_RDMA_WRITE		= 0,
	QHCA_WR_RDMA_WRITE_WITH_IMM	= 1,
	QHCA_WR_SEND			= 2,
	QHCA_WR_SEND_WITH_IMM		= 3,
	QHCA_WR_RDMA_READ		= 4,
	QHCA_WR_ATOMIC_CMP_AND_SWP	= 5,
	QHCA_WR_ATOMIC_FETCH_AND_ADD	= 6,
	/* 1.2, memory windows and fast registration */
	QHCA_WR_LOCAL_INV		= 7,	/* rkey: the key to invalidate */
	QHCA_WR_BIND_MW			= 8,	/* struct qhca_sq_wqe_bind */
	QHCA_WR_SEND_WITH_INV		= 9,	/* rkey: the remote key */
	/* 1.6, IBA 1.5 memory placement, each with its QHCA_DEV_CAP_* bit */
	QHCA_WR_FLUSH			= 14,
	QHCA_WR_ATOMIC_WRITE		= 15,
	QHCA_WR_REG_MR			= 0x20,	/* struct qhca_sq_wqe_reg_mr */
};

/*
 * Send WQE: this 64-byte header, then either num_sge struct qhca_sge or,
 * with QHCA_WQE_F_INLINE, inline_len bytes of data, within the QP's SQ
 * stride.  remote_addr/rkey serve RDMA and atomic operations; compare_add
 * and swap serve atomics (8 bytes at an 8-byte aligned remote address,
 * result written to the one 8-byte SGE).
 */
struct qhca_sq_wqe {
	__le64 wr_id;
	__u8 opcode;		/* enum qhca_wr_opcode */
	__u8 flags;		/* QHCA_WQE_F_* */
	__u8 num_sge;
	__u8 rsvd0;
	__be32 imm_data;	/* the immediate, big endian as posted */
	__le64 remote_addr;
	__le32 rkey;
	__le32 inline_len;
	__le64 compare_add;
	__le64 swap;
	__le32 xrc_srqn;	/* XRC INI QPs: the remote XRC SRQ (1.2) */
	__le32 flush_len;	/* 1.6, FLUSH of a range: its bytes */
	__u8 flush;		/* 1.6, FLUSH: QHCA_FLUSH_TYPE | _LEVEL */
	__u8 rsvd1[7];
};
QHCA_ASSERT_SIZE(qhca_sq_wqe, 64);
#define QHCA_WQE_F_SIGNALED		0x01
#define QHCA_WQE_F_SOLICITED		0x02
#define QHCA_WQE_F_FENCE		0x04
#define QHCA_WQE_F_INLINE		0x08
#define QHCA_WQE_F_RSVD			0xf0
/*
 * 1.6: the flush byte of a FLUSH WQE is the FETH's low byte (IBA 1.5,
 * annex A19): the placement type, GLOBAL and/or PERSISTENT (the values of
 * enum ib_placement_type), and the selectivity level, RANGE (remote_addr,
 * rkey and flush_len name the bytes) or MR (the whole MR of rkey).
 */
#define QHCA_FLUSH_TYPE			0x0f
#define   QHCA_FLUSH_GLOBAL		0x01
#define   QHCA_FLUSH_PERSISTENT		0x02
#define QHCA_FLUSH_LEVEL		0x30
#define   QHCA_FLUSH_RANGE		0x00
#define   QHCA_FLUSH_MR			0x10
#define QHCA_FLUSH_LEVEL_SHIFT		4
#define QHCA_FLUSH_RSVD			0xc0

/*
 * 1.2: the send WQE of a UD QP carries its address vector where an RC WQE
 * has its remote address and atomic operands.  wr_id, opcode (SEND or
 * SEND_WITH_IMM only), flags, num_sge, imm_data and inline_len are where
 * struct qhca_sq_wqe has them, and SGEs or inline data follow the header.
 * A message longer than the path MTU of the port is LOC_LEN_ERR.
 */
struct qhca_sq_wqe_ud {
	__le64 wr_id;
	__u8 opcode;		/* QHCA_WR_SEND or QHCA_WR_SEND_WITH_IMM */
	__u8 flags;		/* QHCA_WQE_F_* */
	__u8 num_sge;
	__u8 rsvd0;
	__be32 imm_data;
	__le32 dest_qpn;	/* 24 bits; 0xffffff is the multicast QPN */
	__le32 qkey;		/* bit 31 set: use the QP's own Q_Key */
	__le16 dlid;
	__u8 sl;		/* 0 .. 15 */
	__u8 av_flags;		/* QHCA_AV_F_* */
	__le32 inline_len;
	__u8 dgid[16];		/* with QHCA_AV_F_GRH, network byte order */
	__le32 flow_label;	/* 20 bits */
	__u8 hop_limit;
	__u8 traffic_class;
	__u8 sgid_index;
	__u8 rsvd1;
	__u8 dmac[6];		/* 1.5, Ethernet port: the next hop's MAC */
	__le16 rsvd2;
};
QHCA_ASSERT_SIZE(qhca_sq_wqe_ud, 64);
/*
 * 1.2: BIND_MW, RC and UC only.  Binds window mw_key's index (an MW key)
 * to [addr, addr + length) of the MR of mr_lkey with access, and gives it
 * the key mw_key from then on.  A type 1 window's PD, or a type 2 window's
 * PD and the QP's, must be the MR's; the MR must allow MW_BIND and the
 * access (remote write and atomic need local write on the MR); the range
 * lies in the MR.  length 0 makes a window no access reaches.  A type 2
 * window must be free (never bound or invalidated); a type 1 window may
 * be bound again.  A bad bind completes with MW_BIND_ERR.  Bytes 48..51
 * (rsvd1[0] of struct qhca_sq_wqe) are not part of this layout.
 */
struct qhca_sq_wqe_bind {
	__le64 wr_id;
	__u8 opcode;		/* QHCA_WR_BIND_MW */
	__u8 flags;		/* QHCA_WQE_F_* except INLINE */
	__u8 num_sge;		/* 0 */
	__u8 rsvd0;
	__le32 mw_key;		/* the window's new key */
	__le64 addr;
	__le32 mr_lkey;
	__u8 access;		/* QHCA_ACCESS_REMOTE_* */
	__u8 mw_type;		/* 1 or 2, as allocated */
	__le16 rsvd1;
	__le64 length;
	__le64 rsvd2;
	__le32 rsvd3[4];
};
QHCA_ASSERT_SIZE(qhca_sq_wqe_bind, 64);
/* mr_lkey of a zero-length bind to no MR (ibv_bind_mw with mr NULL). */
#define QHCA_BIND_NO_MR			0xffffffff

/*
 * 1.2: REG_MR (kernel fast registration).  Maps the fast-reg MR whose
 * index mr_key names, which must be free and of the QP's PD, to
 * [iova, iova + length) with npages pages of 2^page_shift bytes listed at
 * pbl_addr (read when the WQE executes), access as REG_MR's, and gives it
 * the key mr_key.  A bad one completes with LOC_PROT_ERR (key, PD or
 * state) or LOC_QP_OP_ERR (fields).  Bytes 48..51 are not used.
 */
struct qhca_sq_wqe_reg_mr {
	__le64 wr_id;
	__u8 opcode;		/* QHCA_WR_REG_MR */
	__u8 flags;
	__u8 num_sge;		/* 0 */
	__u8 rsvd0;
	__le32 mr_key;
	__le64 iova;
	__le32 npages;		/* 1 .. the MR's max pages */
	__u8 access;		/* QHCA_ACCESS_*, not MW_BIND */
	__u8 page_shift;	/* 12 .. 30 */
	__le16 rsvd1;
	__le64 length;
	__le64 pbl_addr;	/* npages __le64, 8-byte aligned */
	__le32 rsvd2[4];
};
QHCA_ASSERT_SIZE(qhca_sq_wqe_reg_mr, 64);

#define QHCA_AV_F_GRH			0x01
#define QHCA_AV_F_RSVD			0xfe
#define QHCA_UD_QPN_MASK		QHCA_QPN_MASK
/* dest_qpn of a multicast send: every QP attached to the group. */
#define QHCA_MCAST_QPN			0x00ffffff
/*
 * qkey with bit 31 set: the device sends the QP's own Q_Key instead (IBA
 * 10.2.4.1; such controlled Q_Keys are the kernel's to set on a QP).
 */
#define QHCA_UD_QKEY_USE_QP		0x80000000u
#define QHCA_AV_SL_MAX			QHCA_SL_MAX
#define QHCA_AV_FLOW_LABEL_MAX		0x000fffff	/* 20 bits */
/* The GRH the device writes at the start of every UD receive buffer. */
#define QHCA_UD_GRH_SIZE		40

/*
 * ATTACH_MCAST / DETACH_MCAST (1.2): UD QP qpn joins or leaves the
 * multicast group mgid (first byte 0xff) with multicast LID mlid.  A UD
 * send to QPN 0xffffff and DLID mlid, with a GRH whose DGID is mgid,
 * reaches every QP attached, each checking its Q_Key.  No result.
 */
struct qhca_cmd_mcast {
	__le32 qpn;
	__le16 mlid;		/* QHCA_MCAST_LID_MIN .. QHCA_MCAST_LID_MAX */
	__le16 rsvd0;
	__u8 mgid[16];		/* network byte order */
	__le64 rsvd1;
};
QHCA_ASSERT_SIZE(qhca_cmd_mcast, 32);
#define QHCA_MCAST_LID_MIN		0xc000
#define QHCA_MCAST_LID_MAX		0xfffe
#define QHCA_MAX_MCAST_GROUPS		64
#define QHCA_MAX_MCAST_QP_ATTACH	16	/* QPs per group */

struct qhca_sge {
	__le64 addr;
	__le32 length;
	__le32 lkey;
};
QHCA_ASSERT_SIZE(qhca_sge, 16);

/*
 * 1.2: ALLOC_MW: result is the MW's index (0 .. max-mws - 1); its first
 * key is the index in QHCA_MKEY_MW_INDEX with QHCA_MKEY_MW and key 0.
 * DEALLOC_MW: payload struct qhca_cmd_handle with the index; a bound
 * window is unbound.  DEREG_MR of an MR with windows bound is BAD_STATE.
 */
struct qhca_cmd_alloc_mw {
	__le32 pdn;
	__u8 type;		/* QHCA_MW_TYPE_* */
	__u8 rsvd0[3];
	__le64 rsvd1;
};
QHCA_ASSERT_SIZE(qhca_cmd_alloc_mw, 16);
#define QHCA_MW_TYPE_1			1
#define QHCA_MW_TYPE_2			2	/* type 2B: PD associated */

/* Receive WQE: this 16-byte header, then num_sge struct qhca_sge. */
struct qhca_rq_wqe {
	__le64 wr_id;
	__u8 num_sge;
	__u8 rsvd[7];
};
QHCA_ASSERT_SIZE(qhca_rq_wqe, 16);

/* ------------------------------------------------------------------ */
/* Shared receive queues (1.2)                                         */
/* ------------------------------------------------------------------ */

/*
 * CREATE_SRQ: result is the SRQ number (1 .. max_srq; 0 is never used).
 * The ring is 2^depth_log2 receive WQEs (struct qhca_rq_wqe and its SGEs)
 * of 2^stride_log2 bytes, contiguous in guest RAM.  The producer rings
 * QHCA_DB_SRQ of the UAR page uar with [31:16] the SRQ number and [15:0]
 * the free-running producer index.  QPs created with QHCA_QP_F_SRQ take
 * their receive WQEs from it in ring order.
 */
struct qhca_cmd_create_srq {
	__le64 ring_addr;	/* QHCA_QUEUE_ALIGN aligned */
	__le32 pdn;
	__le32 uar;
	__u8 depth_log2;	/* 1 .. log2(max_srq_wr) */
	__u8 stride_log2;	/* 4 .. 10 */
	__u8 type;		/* enum qhca_srq_type (1.2) */
	__u8 rsvd0;
	__le32 limit;		/* 0: not armed; else as MODIFY_SRQ */
	__le32 xrcd;		/* QHCA_SRQT_XRC: its XRC domain */
	__le32 cqn;		/* QHCA_SRQT_XRC: the CQ of its receives */
	__le64 rsvd1;
};
QHCA_ASSERT_SIZE(qhca_cmd_create_srq, 40);

/* SRQ types: the values of enum ib_srq_type. */
enum qhca_srq_type {
	QHCA_SRQT_BASIC	= 0,
	QHCA_SRQT_XRC	= 1,
};

/*
 * MODIFY_SRQ: arm the limit.  When a WQE is taken and fewer than limit
 * WQEs remain posted, the device posts one SRQ_LIMIT event and disarms
 * (limit reads 0 again).  A limit of 0 disarms; a limit larger than the
 * ring is BAD_PARAM.
 *
 * 1.6, with QHCA_DEV_CAP_RESIZE_SRQ: QHCA_SRQ_ATTR_MAX_WR moves the SRQ
 * to a new ring of 2^depth_log2 WQEs at ring_addr, of the same stride.
 * The device first applies the last doorbell, then copies each WQE
 * posted and not yet taken (free-running indexes ci .. pi - 1) from its
 * slot in the old ring to the slot of the same index in the new ring;
 * the indexes go on counting from there, and the old ring is never read
 * again.  A ring smaller than the WQEs still posted (pi - ci), smaller
 * than the armed limit (or the limit this command sets), or an SRQ in
 * ERR is BAD_PARAM (BAD_STATE for ERR); nothing changes then.  Without
 * the bit, ring_addr, depth_log2 and the reserved bytes are zero: the
 * 16 bytes of 1.2 are the same command.
 */
struct qhca_cmd_modify_srq {
	__le32 srqn;
	__le32 attr_mask;	/* QHCA_SRQ_ATTR_* */
	__le32 limit;
	__le32 rsvd;
	__le64 ring_addr;	/* 1.6, MAX_WR: QHCA_QUEUE_ALIGN aligned */
	__u8 depth_log2;	/* 1.6, MAX_WR: 1 .. log2(max_srq_wr) */
	__u8 rsvd1[7];
	__le64 rsvd2;
};
QHCA_ASSERT_SIZE(qhca_cmd_modify_srq, 40);
#define QHCA_SRQ_ATTR_LIMIT		0x0001
#define QHCA_SRQ_ATTR_MAX_WR		0x0002	/* 1.6 */
#define QHCA_SRQ_ATTR_RSVD		0xfffffffc

/* QUERY_SRQ: payload struct qhca_cmd_handle; response qhca_srq_attr. */
struct qhca_srq_attr {
	__le32 srqn;
	__le32 limit;		/* armed limit, 0 if none */
	__le32 pdn;
	__le16 pi;		/* producer index from the last doorbell */
	__le16 ci;		/* WQEs consumed, free-running */
	__u8 depth_log2;
	__u8 stride_log2;
	__u8 state;		/* QHCA_SRQ_STATE_* */
	__u8 rsvd0;
	__le32 qp_refs;		/* QPs attached */
	__le32 rsvd1[2];
};
QHCA_ASSERT_SIZE(qhca_srq_attr, 32);
#define QHCA_SRQ_STATE_READY		0
#define QHCA_SRQ_STATE_ERR		1	/* ring access failed */
/* DESTROY_SRQ: payload qhca_cmd_handle; BAD_STATE while QPs use it. */

/* ------------------------------------------------------------------ */
/* XRC (1.2, with QHCA_DEV_CAP_XRC)                                    */
/* ------------------------------------------------------------------ */

/*
 * ALLOC_XRCD: no payload; result is the XRC domain number (1 .. max).
 * DEALLOC_XRCD: payload qhca_cmd_handle; BAD_STATE while an XRC SRQ or
 * an XRC TGT QP belongs to it.
 *
 * An XRC SRQ is CREATE_SRQ with type QHCA_SRQT_XRC, an XRC domain and a
 * CQ: its receive completions go to that CQ, with srqn set and qpn the
 * XRC TGT QP that received.  A basic SRQ has xrcd and cqn zero.
 *
 * An XRC TGT QP is CREATE_QP with type QHCA_QPT_XRC_TGT, its XRC domain
 * in pdn (it has no PD), and no rings: uar, send_cqn, recv_cqn, srqn,
 * flags and every ring field zero.  Each request it receives names, in
 * its XRCETH, an XRC SRQ of that domain; SENDs take their receive WQE
 * from it and the SRQ's PD checks every memory access of the request.
 * An SRQ of another domain, or none, is NAK invalid request.
 *
 * An XRC INI QP is CREATE_QP with type QHCA_QPT_XRC_INI and an SQ only:
 * recv_cqn, srqn, QHCA_QP_F_SRQ and the RQ fields zero.  Each send WQE
 * names the remote SRQ in xrc_srqn.
 */

/* ------------------------------------------------------------------ */
/* Completion queue entries                                            */
/* ------------------------------------------------------------------ */

/*
 * Completion opcodes: the values of enum ib_wc_opcode (and of enum
 * ibv_wc_opcode, which has no REG_MR: fast registration is the kernel's).
 * 1.4 moved REG_MR from 8, which is IB_WC_FLUSH, to IB_WC_REG_MR's 10.
 */
enum qhca_wc_opcode {
	QHCA_WC_SEND			= 0,
	QHCA_WC_RDMA_WRITE		= 1,
	QHCA_WC_RDMA_READ		= 2,
	QHCA_WC_COMP_SWAP		= 3,
	QHCA_WC_FETCH_ADD		= 4,
	QHCA_WC_BIND_MW			= 5,	/* 1.2 */
	QHCA_WC_LOCAL_INV		= 6,	/* 1.2 */
	QHCA_WC_FLUSH			= 8,	/* 1.6 */
	QHCA_WC_ATOMIC_WRITE		= 9,	/* 1.6 */
	QHCA_WC_REG_MR			= 10,	/* 1.2; 8 before 1.4 */
	QHCA_WC_RECV			= 128,
	QHCA_WC_RECV_RDMA_WITH_IMM	= 129,
};

/* Completion status: the values of enum ibv_wc_status / ib_wc_status. */
enum qhca_wc_status {
	QHCA_WC_SUCCESS			= 0,
	QHCA_WC_LOC_LEN_ERR		= 1,
	QHCA_WC_LOC_QP_OP_ERR		= 2,
	QHCA_WC_LOC_PROT_ERR		= 4,
	QHCA_WC_WR_FLUSH_ERR		= 5,
	QHCA_WC_MW_BIND_ERR		= 6,	/* 1.2 */
	QHCA_WC_BAD_RESP_ERR		= 7,
	QHCA_WC_LOC_ACCESS_ERR		= 8,
	QHCA_WC_REM_INV_REQ_ERR		= 9,
	QHCA_WC_REM_ACCESS_ERR		= 10,
	QHCA_WC_REM_OP_ERR		= 11,
	QHCA_WC_RETRY_EXC_ERR		= 12,
	QHCA_WC_RNR_RETRY_EXC_ERR	= 13,
	QHCA_WC_FATAL_ERR		= 19,
	QHCA_WC_GENERAL_ERR		= 21,
};

/*
 * CQE: written whole, then the owner byte with the phase bit (same rule as
 * the admin CQ).  wqe_idx is the free-running 16-bit index, in its SQ or
 * RQ, of the WQE this completes: a completed send WQE frees its slot and
 * every earlier one.  opcode is valid in error and flush CQEs too; its
 * bit 7 tells receives from sends.  1.2 made the entry 64 bytes, for the
 * timestamp and the fields of UD receives.
 */
struct qhca_cqe {
	__le64 wr_id;
	__le32 byte_len;
	__be32 imm_data;	/* as posted, with QHCA_CQE_F_IMM */
	__le32 qpn;
	__le32 src_qp;		/* receives: the sender's QPN */
	__le16 wqe_idx;
	__le16 slid;		/* receives: the sender's LID */
	__u8 opcode;		/* enum qhca_wc_opcode */
	__u8 status;		/* enum qhca_wc_status */
	__u8 flags;		/* QHCA_CQE_F_* */
	__u8 sl;		/* UD receives: the sender's SL */
	__le64 timestamp;	/* device clock at completion, ns */
	__le16 srqn;		/* receives from an SRQ: its number */
	__le16 pkey_index;	/* UD receives */
	__u8 dlid_path_bits;	/* UD receives */
	__u8 network_hdr_type;	/* 1.5, UD/GSI receives: QHCA_NET_* */
	__u8 rsvd0[2];
	__u8 smac[6];		/* 1.5, UD/GSI receives on Ethernet */
	__u8 rsvd1[6];
	__u8 rsvd2[3];
	__u8 owner;		/* QHCA_CQE_OWNER_PHASE, written last */
};
QHCA_ASSERT_SIZE(qhca_cqe, 64);
#define QHCA_CQE_F_IMM			0x01
#define QHCA_CQE_F_SOLICITED		0x02
#define QHCA_CQE_F_GRH			0x04	/* UD receive had a GRH */
/* 1.2: a SEND_WITH_INV invalidated the key in imm_data (big endian). */
#define QHCA_CQE_F_INV			0x08
/*
 * 1.5: a UD or GSI receive on an Ethernet port always has QHCA_CQE_F_GRH;
 * the first 40 bytes of its buffer hold the IPv6 header, or 20 bytes of
 * zero then the IPv4 header, as on every RoCEv2 HCA; network_hdr_type
 * says which (enum rdma_network_type), smac is the sender's MAC.
 */
#define QHCA_NET_IB			0
#define QHCA_NET_IPV4			2
#define QHCA_NET_IPV6			3
#define QHCA_CQE_OWNER_PHASE		0x01
/*
 * 1.3: set in every CQE the device writes, so that a ring of zeroes (what
 * a process sees once its mappings are gone) never reads as a completion.
 */
#define QHCA_CQE_OWNER_WRITTEN		0x02

/* ------------------------------------------------------------------ */
/* Send opcodes: what each one is                                      */
/* ------------------------------------------------------------------ */

/*
 * What each send opcode is, in one table that the device, the driver and
 * the provider all read (rxe's rxe_wr_opcode_info[] is the model):
 *
 *  qp_types	QHCA_QPT_BIT() of every QP type that may post it; 0 for a
 *		value that is no opcode.  A WQE whose opcode its QP type may
 *		not post completes with LOC_QP_OP_ERR.  GSI (QP1, 1.5) posts
 *		what UD does.  RAW_ETH posts none of these: its send WQEs
 *		are the NIC's frames (SEND, always), never a verbs work
 *		request, and user space has no RAW_ETH QP (the driver offers
 *		no IB_QPT_RAW_PACKET, whose value this is too).
 *  flags	QHCA_WR_F_*.
 *  remote_access  the access (QHCA_ACCESS_REMOTE_*) the target's rkey
 *		must grant.
 *  wc_opcode	enum qhca_wc_opcode of its send completion.
 *  ib_family	enum qhca_ib_family: which IB packets carry it.
 *
 * Opcode values are those of enum ibv_wr_opcode and enum ib_wr_opcode.
 */
#define QHCA_QPT_BIT(type)		(1u << (type))
#define QHCA_QPTS_RC			(QHCA_QPT_BIT(QHCA_QPT_RC) | \
					 QHCA_QPT_BIT(QHCA_QPT_XRC_INI))
#define QHCA_QPTS_CONNECTED		(QHCA_QPTS_RC | QHCA_QPT_BIT(QHCA_QPT_UC))
#define QHCA_QPTS_ALL_SEND		(QHCA_QPTS_CONNECTED | \
					 QHCA_QPT_BIT(QHCA_QPT_UD) | \
					 QHCA_QPT_BIT(QHCA_QPT_GSI))

#define QHCA_WR_F_LOCAL		0x0001	/* memory operation: no packet */
#define QHCA_WR_F_SEND		0x0002	/* consumes a receive WQE */
#define QHCA_WR_F_WRITE		0x0004	/* writes remote memory */
#define QHCA_WR_F_READ		0x0008	/* response data into local SGEs */
#define QHCA_WR_F_ATOMIC	0x0010	/* one 8-byte SGE gets the old value */
#define QHCA_WR_F_IMM		0x0020	/* carries imm_data */
#define QHCA_WR_F_INV		0x0040	/* rkey is a key to invalidate */
#define QHCA_WR_F_INLINE	0x0080	/* may carry inline data */
#define QHCA_WR_F_REMOTE_ADDR	0x0100	/* uses remote_addr and rkey */
/*
 * 1.6: answered by an RDMA READ response with no data (IBA 1.5 FLUSH and
 * ATOMIC_WRITE): waits for it, and counts against max_rd_atomic as a READ.
 */
#define QHCA_WR_F_READ_ACK	0x0200
/* Waits for a response rather than an ACK; SGEs need local write. */
#define QHCA_WR_F_RESPONSE	(QHCA_WR_F_READ | QHCA_WR_F_ATOMIC)

enum qhca_ib_family {
	QHCA_IB_FAMILY_NONE	= 0,	/* local: nothing on the wire */
	QHCA_IB_FAMILY_SEND	= 1,	/* SEND_FIRST .. SEND_ONLY_INV */
	QHCA_IB_FAMILY_WRITE	= 2,	/* RDMA_WRITE_FIRST .. ONLY_IMM */
	QHCA_IB_FAMILY_READ	= 3,	/* RDMA_READ_REQUEST, responses */
	QHCA_IB_FAMILY_CMP_SWAP	= 4,	/* COMPARE_SWAP, ATOMIC_ACK */
	QHCA_IB_FAMILY_FETCH_ADD = 5,	/* FETCH_ADD, ATOMIC_ACK */
	QHCA_IB_FAMILY_FLUSH	= 6,	/* 1.6: FLUSH, READ_RESPONSE_ONLY */
	QHCA_IB_FAMILY_ATOMIC_WRITE = 7, /* 1.6: ATOMIC_WRITE, likewise */
};

struct qhca_wr_info {
	__u16 qp_types;
	__u16 flags;
	__u8 remote_access;
	__u8 wc_opcode;
	__u8 ib_family;
	__u8 rsvd;
};
QHCA_ASSERT_SIZE(qhca_wr_info, 8);

#define QHCA_WR_OPCODE_NUM		(QHCA_WR_REG_MR + 1)

/* The row of @opcode, or NULL if it is no opcode. */
static inline const struct qhca_wr_info *qhca_wr_info(unsigned int opcode)
{
	static const struct qhca_wr_info table[QHCA_WR_OPCODE_NUM] = {
		[QHCA_WR_RDMA_WRITE] = {
			QHCA_QPTS_CONNECTED,
			QHCA_WR_F_WRITE | QHCA_WR_F_INLINE |
			QHCA_WR_F_REMOTE_ADDR,
			QHCA_ACCESS_REMOTE_WRITE, QHCA_WC_RDMA_WRITE,
			QHCA_IB_FAMILY_WRITE, 0 },
		[QHCA_WR_RDMA_WRITE_WITH_IMM] = {
			QHCA_QPTS_CONNECTED,
			QHCA_WR_F_WRITE | QHCA_WR_F_IMM | QHCA_WR_F_INLINE |
			QHCA_WR_F_REMOTE_ADDR,
			QHCA_ACCESS_REMOTE_WRITE, QHCA_WC_RDMA_WRITE,
			QHCA_IB_FAMILY_WRITE, 0 },
		[QHCA_WR_SEND] = {
			QHCA_QPTS_ALL_SEND,
			QHCA_WR_F_SEND | QHCA_WR_F_INLINE,
			0, QHCA_WC_SEND, QHCA_IB_FAMILY_SEND, 0 },
		[QHCA_WR_SEND_WITH_IMM] = {
			QHCA_QPTS_ALL_SEND,
			QHCA_WR_F_SEND | QHCA_WR_F_IMM | QHCA_WR_F_INLINE,
			0, QHCA_WC_SEND, QHCA_IB_FAMILY_SEND, 0 },
		[QHCA_WR_RDMA_READ] = {
			QHCA_QPTS_RC,
			QHCA_WR_F_READ | QHCA_WR_F_REMOTE_ADDR,
			QHCA_ACCESS_REMOTE_READ, QHCA_WC_RDMA_READ,
			QHCA_IB_FAMILY_READ, 0 },
		[QHCA_WR_ATOMIC_CMP_AND_SWP] = {
			QHCA_QPTS_RC,
			QHCA_WR_F_ATOMIC | QHCA_WR_F_REMOTE_ADDR,
			QHCA_ACCESS_REMOTE_ATOMIC, QHCA_WC_COMP_SWAP,
			QHCA_IB_FAMILY_CMP_SWAP, 0 },
		[QHCA_WR_ATOMIC_FETCH_AND_ADD] = {
			QHCA_QPTS_RC,
			QHCA_WR_F_ATOMIC | QHCA_WR_F_REMOTE_ADDR,
			QHCA_ACCESS_REMOTE_ATOMIC, QHCA_WC_FETCH_ADD,
			QHCA_IB_FAMILY_FETCH_ADD, 0 },
		[QHCA_WR_LOCAL_INV] = {
			QHCA_QPTS_CONNECTED,
			QHCA_WR_F_LOCAL | QHCA_WR_F_INV,
			0, QHCA_WC_LOCAL_INV, QHCA_IB_FAMILY_NONE, 0 },
		[QHCA_WR_BIND_MW] = {
			QHCA_QPTS_CONNECTED,
			QHCA_WR_F_LOCAL,
			0, QHCA_WC_BIND_MW, QHCA_IB_FAMILY_NONE, 0 },
		[QHCA_WR_SEND_WITH_INV] = {
			QHCA_QPT_BIT(QHCA_QPT_RC),
			QHCA_WR_F_SEND | QHCA_WR_F_INV | QHCA_WR_F_INLINE,
			0, QHCA_WC_SEND, QHCA_IB_FAMILY_SEND, 0 },
		/*
		 * FLUSH needs the FLUSH_* access of its placement type, not
		 * a fixed one.  ATOMIC_WRITE's 8 bytes are its data (SGEs or
		 * inline), as an RDMA WRITE's.
		 */
		[QHCA_WR_FLUSH] = {
			QHCA_QPT_BIT(QHCA_QPT_RC),
			QHCA_WR_F_READ_ACK | QHCA_WR_F_REMOTE_ADDR,
			0, QHCA_WC_FLUSH, QHCA_IB_FAMILY_FLUSH, 0 },
		[QHCA_WR_ATOMIC_WRITE] = {
			QHCA_QPT_BIT(QHCA_QPT_RC),
			QHCA_WR_F_WRITE | QHCA_WR_F_READ_ACK | QHCA_WR_F_INLINE |
			QHCA_WR_F_REMOTE_ADDR,
			QHCA_ACCESS_REMOTE_WRITE, QHCA_WC_ATOMIC_WRITE,
			QHCA_IB_FAMILY_ATOMIC_WRITE, 0 },
		[QHCA_WR_REG_MR] = {
			QHCA_QPTS_CONNECTED,
			QHCA_WR_F_LOCAL,
			0, QHCA_WC_REG_MR, QHCA_IB_FAMILY_NONE, 0 },
	};

	if (opcode >= QHCA_WR_OPCODE_NUM || !table[opcode].qp_types)
		return (const struct qhca_wr_info *)0;
	return &table[opcode];
}

/* Whether a QP of @qp_type may post @opcode. */
static inline int qhca_wr_allowed(unsigned int opcode, unsigned int qp_type)
{
	const struct qhca_wr_info *info = qhca_wr_info(opcode);

	return info && qp_type < 16 && (info->qp_types & QHCA_QPT_BIT(qp_type));
}

#endif /* QHCA_HW_H */
