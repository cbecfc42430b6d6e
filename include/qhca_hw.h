/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * qhca hardware interface, version 1.0.
 *
 * This is the one description of the device's registers, admin commands,
 * queues and entries.  The QEMU device model, the Linux driver and the
 * rdma-core provider all include this file as it is.  Documentation/hw/
 * describes the same interface in prose; the two must agree.
 *
 * Rules:
 *  - Everything the device and the driver exchange is little endian and
 *    uses the fixed-width types of <linux/types.h>.
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
	__le32 rsvd1[6];
};
QHCA_ASSERT_SIZE(qhca_device_attr, 160);

#define QHCA_DEV_CAP_RC_RNR_NAK_GEN	0x00000001
#define QHCA_DEV_CAP_PORT_ACTIVE_EVENT	0x00000002

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
	__u8 rsvd0;
	__le32 rsvd1[5];
};
QHCA_ASSERT_SIZE(qhca_port_attr, 64);

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

/* QUERY_STATS: response struct qhca_stats, the device's object counts. */
struct qhca_stats {
	__le32 uars;
	__le32 pds;
	__le32 eqs;
	__le32 rsvd0;
	__le64 admin_cmds;	/* admin commands executed */
	__le64 admin_errors;	/* admin commands that did not succeed */
	__le64 doorbells;	/* doorbell page writes */
	__le64 guest_errors;	/* everything logged as a guest error */
	__le64 rsvd1[2];
};
QHCA_ASSERT_SIZE(qhca_stats, 64);

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
 * A doorbell is one 32-bit write.  Version 1.0 defines the offsets; the
 * queues they ring arrive with the data path.  A write to a page that is
 * not allocated, or to an undefined offset, is a guest error and ignored.
 */
#define QHCA_DB_SQ		0x000
#define QHCA_DB_RQ		0x008
#define QHCA_DB_CQ		0x010
#define   QHCA_DB_QUEUE_IDX	0x0000ffff	/* producer/consumer index */
#define   QHCA_DB_QUEUE_NUM	0xffff0000	/* QP or CQ number */

#endif /* QHCA_HW_H */
