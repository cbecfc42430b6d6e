// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * What stock libibverbs sees of a qhca device with default properties:
 * identity, device and port attributes, GID and P_Key tables, and the PCI
 * function behind it.  The expected values come from the hardware spec and
 * qhca_hw.h, not from the driver, so a driver that forwards a field wrongly
 * (or in the wrong byte order) fails here.
 */
#include <endian.h>
#include <inttypes.h>

#include <qhca_hw.h>

#include "qhca_test.h"

/* Spec, QUERY_DEVICE and QUERY_PORT: fixed values of version 1.0. */
#define QHCA_SUBNET_PREFIX		0xfe80000000000000ULL
#define QHCA_PKEY_DEFAULT		0xffff
#define IB_PHYS_STATE_LINK_UP		5
#define IB_SPEED_EDR			32
#define IB_WIDTH_4X			2

FIXTURE(device)
{
	struct ibv_device **list;
	struct ibv_device *dev;
	struct ibv_context *ctx;
};

FIXTURE_SETUP(device)
{
	QHCA_ASSERT_DEVICE(self->list, self->dev);
	self->ctx = ibv_open_device(self->dev);
	ASSERT_NE(NULL, self->ctx) TH_LOG("ibv_open_device: %s",
					  strerror(errno));
}

FIXTURE_TEARDOWN(device)
{
	if (self->ctx)
		EXPECT_EQ(0, ibv_close_device(self->ctx));
	if (self->list)
		ibv_free_device_list(self->list);
}

TEST_F(device, identity)
{
	EXPECT_STREQ(QHCA_IBDEV, ibv_get_device_name(self->dev));
	EXPECT_EQ(IBV_NODE_CA, self->dev->node_type);
	EXPECT_EQ(IBV_TRANSPORT_IB, self->dev->transport_type);
	EXPECT_EQ(IBV_NODE_CA, self->ctx->device->node_type);
	/* The GUID as sysfs gives it, in network byte order like the rest. */
	EXPECT_EQ(QHCA_DEFAULT_NODE_GUID,
		  be64toh(ibv_get_device_guid(self->dev)));
}

/*
 * The version of the QEMU that runs the guest, which the device reports as
 * its firmware version: v[0..2] from the build tree the bench's binary
 * comes from (shared with the guest at $QHCA_BUILD, default
 * $QHCA_TOP/build: config-host.h has the QEMU_VERSION the device is
 * compiled with), or -1 each when there is none.
 */
static void qemu_build_version(int v[3])
{
	const char *build = getenv("QHCA_BUILD"), *top = getenv("QHCA_TOP");
	char path[512], line[256];
	FILE *f;

	v[0] = -1;
	v[1] = -1;
	v[2] = -1;
	if (build)
		snprintf(path, sizeof(path), "%s/qemu/build/config-host.h",
			 build);
	else if (top)
		snprintf(path, sizeof(path),
			 "%s/build/qemu/build/config-host.h", top);
	else
		return;
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "#define QEMU_VERSION \"%d.%d.%d\"",
			   &v[0], &v[1], &v[2]) == 3)
			break;
	fclose(f);
}

/*
 * The major and minor version of the QEMU that runs the guest, as that
 * QEMU itself says: the bench uses the q35 alias, the newest machine type,
 * which is named after the release and which SMBIOS gives as the product
 * version ("pc-q35-10.0").  -1 each when the guest cannot see it.
 */
static void qemu_machine_version(int v[2])
{
	char buf[64];

	if (qhca_read_sysfs_str("/sys/class/dmi/id/product_version", buf,
				sizeof(buf)) <= 0 ||
	    sscanf(buf, "pc-q35-%d.%d", &v[0], &v[1]) != 2) {
		v[0] = -1;
		v[1] = -1;
	}
}

TEST_F(device, query_device)
{
	struct ibv_device_attr attr;
	unsigned int major, minor, micro;
	int build[3], machine[2];

	memset(&attr, 0xa5, sizeof(attr));
	ASSERT_EQ(0, ibv_query_device(self->ctx, &attr));

	EXPECT_EQ((uint32_t)QHCA_PCI_VENDOR_ID, attr.vendor_id);
	EXPECT_EQ((uint32_t)QHCA_PCI_DEVICE_ID, attr.vendor_part_id);
	EXPECT_EQ((uint32_t)QHCA_VERSION_CURRENT, attr.hw_ver);
	EXPECT_EQ(1, attr.phys_port_cnt);

	EXPECT_EQ(QHCA_DEFAULT_NODE_GUID, be64toh(attr.node_guid));
	EXPECT_NE(0ULL, attr.sys_image_guid);

	EXPECT_EQ(QHCA_DEFAULT_MAX_PDS, attr.max_pd);
	EXPECT_EQ(QHCA_DEFAULT_MAX_QPS, attr.max_qp);
	EXPECT_EQ(QHCA_DEFAULT_MAX_CQS, attr.max_cq);
	EXPECT_EQ(QHCA_DEFAULT_MAX_MRS, attr.max_mr);
	EXPECT_EQ(QHCA_DEFAULT_MAX_QP_WR, attr.max_qp_wr);
	EXPECT_EQ(QHCA_DEFAULT_MAX_CQE, attr.max_cqe);
	EXPECT_EQ((int)QHCA_MAX_SGE, attr.max_sge);
	EXPECT_EQ((int)QHCA_MAX_SGE, attr.max_sge_rd);
	EXPECT_EQ(QHCA_MAX_RD_ATOMIC, attr.max_qp_rd_atom);
	EXPECT_EQ(QHCA_MAX_RD_ATOMIC, attr.max_qp_init_rd_atom);
	EXPECT_EQ((uint64_t)QHCA_MAX_MR_SIZE, attr.max_mr_size);
	EXPECT_EQ((uint64_t)QHCA_PAGE_SIZE_CAP, attr.page_size_cap);
	EXPECT_EQ(IBV_ATOMIC_HCA, (int)attr.atomic_cap);
	EXPECT_EQ(1, attr.max_pkeys);
	EXPECT_EQ(QHCA_LOCAL_CA_ACK_DELAY, attr.local_ca_ack_delay);

	/*
	 * fw_version is the version of the QEMU the device runs in, major <<
	 * 32 | minor << 16 | micro: the one it was built as, and the one
	 * its machine type names.  At least one of them must be known.
	 */
	ASSERT_EQ(3, sscanf(attr.fw_ver, "%u.%u.%u", &major, &minor, &micro))
		TH_LOG("fw_ver \"%.64s\"", attr.fw_ver);
	qemu_build_version(build);
	qemu_machine_version(machine);
	ASSERT_TRUE(build[0] >= 0 || machine[0] >= 0)
		TH_LOG("fw_ver \"%.64s\": no QEMU version to compare with (%s)",
		       attr.fw_ver,
		       "no $QHCA_TOP/build/qemu/build/config-host.h, no pc-q35 machine type in /sys/class/dmi/id");
	if (build[0] >= 0) {
		EXPECT_EQ(build[0], (int)major);
		EXPECT_EQ(build[1], (int)minor);
		EXPECT_EQ(build[2], (int)micro)
			TH_LOG("fw_ver \"%.64s\", QEMU built as %d.%d.%d",
			       attr.fw_ver, build[0], build[1], build[2]);
	}
	if (machine[0] >= 0) {
		EXPECT_EQ(machine[0], (int)major);
		EXPECT_EQ(machine[1], (int)minor)
			TH_LOG("fw_ver \"%.64s\", machine pc-q35-%d.%d",
			       attr.fw_ver, machine[0], machine[1]);
	}
}

TEST_F(device, query_port)
{
	struct ibv_port_attr attr;

	memset(&attr, 0xa5, sizeof(attr));
	ASSERT_EQ(0, ibv_query_port(self->ctx, 1, &attr));

	EXPECT_EQ(IBV_PORT_ACTIVE, (int)attr.state);
	EXPECT_EQ(IB_PHYS_STATE_LINK_UP, attr.phys_state);
	EXPECT_EQ(IBV_LINK_LAYER_INFINIBAND, attr.link_layer);
	EXPECT_EQ(QHCA_DEFAULT_LID, attr.lid);
	/* No subnet manager: the SM LID is the port's own LID (property lid). */
	EXPECT_EQ(QHCA_DEFAULT_LID, attr.sm_lid);
	EXPECT_EQ(0, attr.lmc);
	EXPECT_EQ(IBV_MTU_4096, (int)attr.max_mtu);
	EXPECT_EQ(IBV_MTU_4096, (int)attr.active_mtu);
	EXPECT_EQ(1, attr.gid_tbl_len);
	EXPECT_EQ(1, attr.pkey_tbl_len);
	EXPECT_EQ((uint32_t)QHCA_MAX_MSG_SIZE, attr.max_msg_sz);
	EXPECT_EQ(IB_SPEED_EDR, attr.active_speed);
	EXPECT_EQ(IB_WIDTH_4X, attr.active_width);
	EXPECT_EQ(1, attr.max_vl_num);
	/* The port claims no subnet manager and no traps: neither exists. */
	EXPECT_EQ(0U, attr.port_cap_flags & (IBV_PORT_SM | IBV_PORT_TRAP_SUP));
}

TEST_F(device, query_port_invalid)
{
	struct ibv_port_attr attr;

	/* There is one port: 0 and 2 do not exist. */
	EXPECT_NE(0, ibv_query_port(self->ctx, 0, &attr));
	EXPECT_NE(0, ibv_query_port(self->ctx, 2, &attr));
}

TEST_F(device, gid_table)
{
	union ibv_gid gid;

	memset(&gid, 0xa5, sizeof(gid));
	ASSERT_EQ(0, ibv_query_gid(self->ctx, 1, 0, &gid));
	EXPECT_EQ(QHCA_SUBNET_PREFIX, be64toh(gid.global.subnet_prefix));
	EXPECT_EQ(QHCA_DEFAULT_PORT_GUID, be64toh(gid.global.interface_id));

	/* The table has exactly one entry. */
	EXPECT_NE(0, ibv_query_gid(self->ctx, 1, 1, &gid));
}

TEST_F(device, pkey_table)
{
	__be16 pkey = 0;

	ASSERT_EQ(0, ibv_query_pkey(self->ctx, 1, 0, &pkey));
	EXPECT_EQ(QHCA_PKEY_DEFAULT, be16toh(pkey));

	EXPECT_NE(0, ibv_query_pkey(self->ctx, 1, 1, &pkey));
}

TEST_F(device, sysfs)
{
	char buf[128], want[128];

	/* The same identity through the kernel's own attribute files. */
	ASSERT_LT(0, qhca_read_sysfs_str(QHCA_SYSFS_IBDEV "/node_guid",
					 buf, sizeof(buf)));
	snprintf(want, sizeof(want), "%04x:%04x:%04x:%04x",
		 (unsigned int)(QHCA_DEFAULT_NODE_GUID >> 48) & 0xffff,
		 (unsigned int)(QHCA_DEFAULT_NODE_GUID >> 32) & 0xffff,
		 (unsigned int)(QHCA_DEFAULT_NODE_GUID >> 16) & 0xffff,
		 (unsigned int)QHCA_DEFAULT_NODE_GUID & 0xffff);
	EXPECT_STREQ(want, buf);

	ASSERT_LT(0, qhca_read_sysfs_str(QHCA_SYSFS_IBDEV "/node_type",
					 buf, sizeof(buf)));
	EXPECT_STREQ("1: CA", buf);

	ASSERT_LT(0, qhca_read_sysfs_str(QHCA_SYSFS_IBDEV "/ports/1/state",
					 buf, sizeof(buf)));
	EXPECT_STREQ("4: ACTIVE", buf);

	ASSERT_LT(0, qhca_read_sysfs_str(QHCA_SYSFS_IBDEV "/ports/1/link_layer",
					 buf, sizeof(buf)));
	EXPECT_STREQ("InfiniBand", buf);
}

TEST_F(device, pci_function)
{
	char buf[256], want[128];
	char *slash;
	ssize_t len;

	snprintf(want, sizeof(want),
		 "pci:v%08Xd%08Xsv%08Xsd%08Xbc%02Xsc%02Xi%02X",
		 QHCA_PCI_VENDOR_ID, QHCA_PCI_DEVICE_ID,
		 QHCA_PCI_SUBSYSTEM_VENDOR_ID, QHCA_PCI_SUBSYSTEM_ID,
		 QHCA_PCI_CLASS >> 8, QHCA_PCI_CLASS & 0xff, 0);
	ASSERT_LT(0, qhca_read_sysfs_str(QHCA_SYSFS_IBDEV "/device/modalias",
					 buf, sizeof(buf)));
	EXPECT_STREQ(want, buf);

	ASSERT_LT(0, qhca_read_sysfs_str(QHCA_SYSFS_IBDEV "/device/revision",
					 buf, sizeof(buf)));
	EXPECT_EQ(QHCA_PCI_REVISION, strtol(buf, NULL, 16));

	/* And the function is bound to the qhca driver. */
	len = readlink(QHCA_SYSFS_IBDEV "/device/driver", buf, sizeof(buf) - 1);
	ASSERT_LT(0, len);
	buf[len] = '\0';
	slash = strrchr(buf, '/');
	EXPECT_STREQ("qhca", slash ? slash + 1 : buf);
}

TEST_HARNESS_MAIN
