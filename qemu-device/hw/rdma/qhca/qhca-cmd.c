/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qhca admin commands: validation of a submission entry and one typed
 * handler per opcode.
 *
 * What every command shares is checked here, from a table: a known
 * opcode, zero reserved fields, zero payload bytes beyond the command's
 * parameters, and a response buffer of the right size in guest RAM.  The
 * handlers then check their own fields.
 */
#include "qemu/osdep.h"
#include "qemu/cutils.h"
#include "qhca.h"
#include "trace.h"

typedef struct QhcaCmdDesc {
    const char *name;
    size_t param_size;          /* payload bytes the command reads */
    size_t resp_size;           /* 0: no response */
} QhcaCmdDesc;

static const QhcaCmdDesc qhca_cmds[] = {
    [QHCA_CMD_QUERY_DEVICE] = {
        "QUERY_DEVICE", 0, sizeof(struct qhca_device_attr)
    },
    [QHCA_CMD_QUERY_PORT] = {
        "QUERY_PORT", sizeof(struct qhca_cmd_query_port),
        sizeof(struct qhca_port_attr)
    },
    [QHCA_CMD_ALLOC_UAR] = { "ALLOC_UAR", 0, 0 },
    [QHCA_CMD_DEALLOC_UAR] = {
        "DEALLOC_UAR", sizeof(struct qhca_cmd_handle), 0
    },
    [QHCA_CMD_ALLOC_PD] = { "ALLOC_PD", 0, 0 },
    [QHCA_CMD_DEALLOC_PD] = {
        "DEALLOC_PD", sizeof(struct qhca_cmd_handle), 0
    },
    [QHCA_CMD_CREATE_EQ] = {
        "CREATE_EQ", sizeof(struct qhca_cmd_create_eq), 0
    },
    [QHCA_CMD_DESTROY_EQ] = {
        "DESTROY_EQ", sizeof(struct qhca_cmd_handle), 0
    },
    [QHCA_CMD_QUERY_STATS] = {
        "QUERY_STATS", 0, sizeof(struct qhca_stats)
    },
};

typedef union QhcaCmdParams {
    struct qhca_cmd_query_port query_port;
    struct qhca_cmd_handle handle;
    struct qhca_cmd_create_eq create_eq;
    uint8_t raw[QHCA_AQ_PAYLOAD_SIZE];
} QhcaCmdParams;

typedef union QhcaCmdResp {
    struct qhca_device_attr device;
    struct qhca_port_attr port;
    struct qhca_stats stats;
} QhcaCmdResp;

/*
 * Fail a command.  Full tables and busy objects are the guest's normal
 * business; everything else is a driver bug worth a guest error report.
 */
uint8_t qhca_cmd_reject(QhcaState *s, const QhcaCmd *cmd, uint8_t status,
                        const char *why)
{
    switch (status) {
    case QHCA_AQ_NO_RESOURCES:
    case QHCA_AQ_BAD_STATE:
        trace_qhca_cmd_fail(cmd->cmd_id, cmd->name, status, why);
        break;
    default:
        qhca_guest_error(s, QHCA_ERR_NONE, cmd,
                         "command %s (id %u) status %u: %s",
                         cmd->name, cmd->cmd_id, status, why);
        break;
    }
    return status;
}

static uint8_t qhca_cmd_query_device(QhcaState *s, const QhcaCmd *cmd,
                                     struct qhca_device_attr *attr)
{
    const QhcaParams *p = &s->params;

    attr->fw_version = cpu_to_le64((uint64_t)QEMU_VERSION_MAJOR << 32 |
                                   QEMU_VERSION_MINOR << 16 |
                                   QEMU_VERSION_MICRO);
    attr->node_guid = cpu_to_le64(p->node_guid);
    attr->sys_image_guid = cpu_to_le64(p->node_guid);
    attr->max_mr_size = cpu_to_le64(1ull << 40);
    attr->page_size_cap = cpu_to_le64(0xfffff000);
    attr->vendor_id = cpu_to_le32(QHCA_PCI_VENDOR_ID);
    attr->vendor_part_id = cpu_to_le32(QHCA_PCI_DEVICE_ID);
    attr->hw_version = cpu_to_le32(QHCA_VERSION_1_0);
    attr->max_qp = cpu_to_le32(p->max_qps);
    attr->max_qp_wr = cpu_to_le32(p->max_qp_wr);
    attr->max_sge = cpu_to_le32(16);
    attr->max_sge_rd = cpu_to_le32(16);
    attr->max_cq = cpu_to_le32(p->max_cqs);
    attr->max_cqe = cpu_to_le32(p->max_cqe);
    attr->max_mr = cpu_to_le32(p->max_mrs);
    attr->max_pd = cpu_to_le32(p->max_pds);
    attr->max_qp_rd_atom = cpu_to_le32(16);
    attr->max_qp_init_rd_atom = cpu_to_le32(16);
    attr->max_inline_data = cpu_to_le32(256);
    attr->max_uar = cpu_to_le32(p->max_uars);
    attr->max_eq = cpu_to_le32(p->max_eqs);
    attr->max_eqe = cpu_to_le32(QHCA_MAX_EQE);
    attr->max_pkeys = cpu_to_le32(1);
    attr->device_cap_flags = cpu_to_le32(QHCA_DEV_CAP_RC_RNR_NAK_GEN |
                                         QHCA_DEV_CAP_PORT_ACTIVE_EVENT);
    attr->num_ports = 1;
    attr->atomic_cap = 1;
    attr->local_ca_ack_delay = 16;
    return QHCA_AQ_SUCCESS;
}

static uint8_t qhca_cmd_query_port(QhcaState *s, const QhcaCmd *cmd,
                                   const struct qhca_cmd_query_port *in,
                                   struct qhca_port_attr *attr)
{
    const QhcaParams *p = &s->params;
    bool active = qhca_port_active(s);

    if (in->port_num != QHCA_PORT_NUM) {
        return qhca_cmd_reject(s, cmd, QHCA_AQ_BAD_PARAM, "no such port");
    }
    if (!buffer_is_zero(in->rsvd, sizeof(in->rsvd))) {
        return qhca_cmd_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                               "reserved field set");
    }

    attr->port_guid = cpu_to_le64(p->port_guid);
    attr->subnet_prefix = cpu_to_le64(0xfe80000000000000ull);
    /* The device is its own subnet manager: IsSM | IsTrapSupported. */
    attr->port_cap_flags = cpu_to_le32(1u << 1 | 1u << 3);
    attr->max_msg_sz = cpu_to_le32(1u << 31);
    attr->lid = cpu_to_le16(p->lid);
    attr->sm_lid = cpu_to_le16(p->lid);
    attr->pkey = cpu_to_le16(0xffff);
    attr->gid_tbl_len = cpu_to_le16(1);
    attr->pkey_tbl_len = cpu_to_le16(1);
    attr->state = active ? QHCA_PORT_ACTIVE : QHCA_PORT_DOWN;
    attr->phys_state = active ? 5 : 3;          /* LinkUp : Disabled */
    attr->max_mtu = 5;                          /* IB_MTU_4096 */
    attr->active_mtu = 5;
    attr->lmc = 0;
    attr->sm_sl = 0;
    attr->active_speed = 32;                    /* IB_SPEED_EDR */
    attr->active_width = 2;                     /* IB_WIDTH_4X */
    attr->max_vl_num = 1;
    return QHCA_AQ_SUCCESS;
}

static uint8_t qhca_cmd_alloc(QhcaState *s, const QhcaCmd *cmd,
                              QhcaTable *t, uint32_t *handle)
{
    if (!qhca_table_alloc(t, handle)) {
        return qhca_cmd_reject(s, cmd, QHCA_AQ_NO_RESOURCES, "table full");
    }
    return QHCA_AQ_SUCCESS;
}

static uint8_t qhca_cmd_dealloc(QhcaState *s, const QhcaCmd *cmd,
                                QhcaTable *t,
                                const struct qhca_cmd_handle *in)
{
    uint32_t handle = le32_to_cpu(in->handle);

    if (in->rsvd) {
        return qhca_cmd_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                               "reserved field set");
    }
    if (!qhca_table_live(t, handle)) {
        return qhca_cmd_reject(s, cmd, QHCA_AQ_BAD_HANDLE,
                               "handle not allocated");
    }
    qhca_table_free(t, handle);
    return QHCA_AQ_SUCCESS;
}

static uint8_t qhca_cmd_destroy_eq(QhcaState *s, const QhcaCmd *cmd,
                                   const struct qhca_cmd_handle *in)
{
    if (in->rsvd) {
        return qhca_cmd_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                               "reserved field set");
    }
    return qhca_eq_destroy(s, cmd, le32_to_cpu(in->handle));
}

static uint8_t qhca_cmd_query_stats(QhcaState *s, const QhcaCmd *cmd,
                                    struct qhca_stats *st)
{
    st->uars = cpu_to_le32(s->uars.used);
    st->pds = cpu_to_le32(s->pds.used);
    st->eqs = cpu_to_le32(s->eqs.used);
    st->admin_cmds = cpu_to_le64(s->counters.admin_cmds);
    st->admin_errors = cpu_to_le64(s->counters.admin_errors);
    st->doorbells = cpu_to_le64(s->counters.doorbells);
    st->guest_errors = cpu_to_le64(s->counters.guest_errors);
    return QHCA_AQ_SUCCESS;
}

static uint8_t qhca_cmd_dispatch(QhcaState *s, const QhcaCmd *cmd,
                                 const QhcaCmdParams *in, QhcaCmdResp *out,
                                 uint32_t *result)
{
    switch (cmd->opcode) {
    case QHCA_CMD_QUERY_DEVICE:
        return qhca_cmd_query_device(s, cmd, &out->device);
    case QHCA_CMD_QUERY_PORT:
        return qhca_cmd_query_port(s, cmd, &in->query_port, &out->port);
    case QHCA_CMD_ALLOC_UAR:
        return qhca_cmd_alloc(s, cmd, &s->uars, result);
    case QHCA_CMD_DEALLOC_UAR:
        return qhca_cmd_dealloc(s, cmd, &s->uars, &in->handle);
    case QHCA_CMD_ALLOC_PD:
        return qhca_cmd_alloc(s, cmd, &s->pds, result);
    case QHCA_CMD_DEALLOC_PD:
        return qhca_cmd_dealloc(s, cmd, &s->pds, &in->handle);
    case QHCA_CMD_CREATE_EQ:
        return qhca_eq_create(s, cmd, &in->create_eq, result);
    case QHCA_CMD_DESTROY_EQ:
        return qhca_cmd_destroy_eq(s, cmd, &in->handle);
    case QHCA_CMD_QUERY_STATS:
        return qhca_cmd_query_stats(s, cmd, &out->stats);
    default:
        g_assert_not_reached();
    }
}

/* Run one command; returns its status and sets *result (0 on failure). */
uint8_t qhca_cmd_execute(QhcaState *s, const struct qhca_aq_sqe *sqe,
                         uint32_t *result)
{
    QhcaCmd cmd = {
        .opcode = le16_to_cpu(sqe->opcode),
        .cmd_id = le16_to_cpu(sqe->cmd_id),
        .name = "unknown",
    };
    const QhcaCmdDesc *desc = NULL;
    QhcaCmdParams in;
    QhcaCmdResp out = { 0 };
    uint64_t resp_addr = le64_to_cpu(sqe->resp_addr);
    uint8_t status;

    *result = 0;
    s->counters.admin_cmds++;

    if (cmd.opcode < ARRAY_SIZE(qhca_cmds) && qhca_cmds[cmd.opcode].name) {
        desc = &qhca_cmds[cmd.opcode];
        cmd.name = desc->name;
    }
    trace_qhca_cmd(cmd.cmd_id, cmd.opcode, cmd.name);

    if (!desc) {
        status = qhca_cmd_reject(s, &cmd, QHCA_AQ_BAD_OPCODE,
                                 "unknown opcode");
    } else if (sqe->flags || sqe->rsvd) {
        status = qhca_cmd_reject(s, &cmd, QHCA_AQ_BAD_PARAM,
                                 "reserved SQE field set");
    } else if (!buffer_is_zero(sqe->payload + desc->param_size,
                               QHCA_AQ_PAYLOAD_SIZE - desc->param_size)) {
        status = qhca_cmd_reject(s, &cmd, QHCA_AQ_BAD_PARAM,
                                 "reserved payload bytes set");
    } else if (desc->resp_size &&
               le32_to_cpu(sqe->resp_len) < desc->resp_size) {
        status = qhca_cmd_reject(s, &cmd, QHCA_AQ_BAD_PARAM,
                                 "response buffer too short");
    } else if (desc->resp_size &&
               !qhca_dma_in_ram(s, resp_addr, desc->resp_size, true)) {
        status = qhca_cmd_reject(s, &cmd, QHCA_AQ_BAD_ADDRESS,
                                 "response buffer not in guest RAM");
    } else {
        QEMU_BUILD_BUG_ON(sizeof(in) != sizeof(sqe->payload));
        memcpy(&in, sqe->payload, sizeof(in));
        status = qhca_cmd_dispatch(s, &cmd, &in, &out, result);
        if (status == QHCA_AQ_SUCCESS && desc->resp_size &&
            !qhca_dma_write(s, resp_addr, &out, desc->resp_size)) {
            status = qhca_cmd_reject(s, &cmd, QHCA_AQ_BAD_ADDRESS,
                                     "response write failed");
        }
    }

    if (status != QHCA_AQ_SUCCESS) {
        s->counters.admin_errors++;
        *result = 0;
    }
    return status;
}
