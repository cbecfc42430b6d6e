/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qhca admin commands: validation of a submission entry and one typed
 * handler per opcode.
 *
 * What every command shares is checked here, from a table: a known
 * opcode, zero reserved fields, zero payload bytes beyond the command's
 * parameters, and a response buffer of the right size in guest RAM.  The
 * handlers then check their own fields.
 *
 * The device executes commands (qhca_exec_*) that the driver sends
 * (qhca_admin_*); struct qhca_cmd_* are their payloads in qhca_hw.h.
 */
#include "qemu/osdep.h"
#include "qemu/cutils.h"
#include "qhca.h"
#include "qhca-eth.h"
#include "trace.h"

typedef struct QhcaCmdDesc {
    const char *name;
    size_t param_size;          /* payload bytes the command reads */
    size_t resp_size;           /* 0: no response */
    size_t resp_min;            /* shortest resp_len served; 0: resp_size */
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
    /* 1.4 grew the response: a 1.3 driver's buffer gets the 1.3 part. */
    [QHCA_CMD_QUERY_STATS] = {
        "QUERY_STATS", 0, sizeof(struct qhca_stats), QHCA_STATS_SIZE_1_3
    },
    [QHCA_CMD_REG_MR] = { "REG_MR", sizeof(struct qhca_cmd_reg_mr), 0 },
    [QHCA_CMD_DEREG_MR] = { "DEREG_MR", sizeof(struct qhca_cmd_handle), 0 },
    [QHCA_CMD_REREG_MR] = { "REREG_MR", sizeof(struct qhca_cmd_rereg_mr), 0 },
    [QHCA_CMD_CREATE_CQ] = {
        "CREATE_CQ", sizeof(struct qhca_cmd_create_cq), 0
    },
    [QHCA_CMD_DESTROY_CQ] = {
        "DESTROY_CQ", sizeof(struct qhca_cmd_handle), 0
    },
    [QHCA_CMD_RESIZE_CQ] = {
        "RESIZE_CQ", sizeof(struct qhca_cmd_resize_cq), 0
    },
    [QHCA_CMD_CREATE_QP] = {
        "CREATE_QP", sizeof(struct qhca_cmd_create_qp), 0
    },
    [QHCA_CMD_MODIFY_QP] = {
        "MODIFY_QP", sizeof(struct qhca_cmd_modify_qp), 0
    },
    [QHCA_CMD_QUERY_QP] = {
        "QUERY_QP", sizeof(struct qhca_cmd_handle),
        sizeof(struct qhca_qp_attr)
    },
    [QHCA_CMD_DESTROY_QP] = {
        "DESTROY_QP", sizeof(struct qhca_cmd_handle), 0
    },
    /* 1.5 grew the response: a 1.4 driver's buffer gets the 1.4 part. */
    [QHCA_CMD_QUERY_COUNTERS] = {
        "QUERY_COUNTERS", 0, sizeof(struct qhca_counters),
        QHCA_COUNTERS_SIZE_1_4
    },
    [QHCA_CMD_CREATE_SRQ] = {
        "CREATE_SRQ", sizeof(struct qhca_cmd_create_srq), 0
    },
    [QHCA_CMD_MODIFY_SRQ] = {
        "MODIFY_SRQ", sizeof(struct qhca_cmd_modify_srq), 0
    },
    [QHCA_CMD_QUERY_SRQ] = {
        "QUERY_SRQ", sizeof(struct qhca_cmd_handle),
        sizeof(struct qhca_srq_attr)
    },
    [QHCA_CMD_DESTROY_SRQ] = {
        "DESTROY_SRQ", sizeof(struct qhca_cmd_handle), 0
    },
    [QHCA_CMD_ATTACH_MCAST] = {
        "ATTACH_MCAST", sizeof(struct qhca_cmd_mcast), 0
    },
    [QHCA_CMD_DETACH_MCAST] = {
        "DETACH_MCAST", sizeof(struct qhca_cmd_mcast), 0
    },
    [QHCA_CMD_ALLOC_MW] = {
        "ALLOC_MW", sizeof(struct qhca_cmd_alloc_mw), 0
    },
    [QHCA_CMD_DEALLOC_MW] = {
        "DEALLOC_MW", sizeof(struct qhca_cmd_handle), 0
    },
    [QHCA_CMD_ALLOC_XRCD] = { "ALLOC_XRCD", 0, 0 },
    [QHCA_CMD_DEALLOC_XRCD] = {
        "DEALLOC_XRCD", sizeof(struct qhca_cmd_handle), 0
    },
    [QHCA_CMD_INJECT_FAULT] = {
        "INJECT_FAULT", sizeof(struct qhca_cmd_inject_fault), 0
    },
    [QHCA_CMD_SET_GID] = { "SET_GID", sizeof(struct qhca_cmd_set_gid), 0 },
    [QHCA_CMD_SET_QP_AV] = {
        "SET_QP_AV", sizeof(struct qhca_cmd_set_qp_av), 0
    },
    /* 1.8: on-demand paging (qhca-odp.c) */
    [QHCA_CMD_ODP_MAP] = { "ODP_MAP", sizeof(struct qhca_cmd_odp_map), 0 },
    [QHCA_CMD_ODP_UNMAP] = {
        "ODP_UNMAP", sizeof(struct qhca_cmd_odp_unmap), 0
    },
    [QHCA_CMD_QUERY_PAGE_FAULT] = {
        "QUERY_PAGE_FAULT", sizeof(struct qhca_cmd_query_page_fault),
        sizeof(struct qhca_page_fault_info)
    },
    [QHCA_CMD_RESUME_PAGE_FAULT] = {
        "RESUME_PAGE_FAULT", sizeof(struct qhca_cmd_resume_page_fault), 0
    },
};

typedef union QhcaCmdParams {
    struct qhca_cmd_query_port query_port;
    struct qhca_cmd_handle handle;
    struct qhca_cmd_create_eq create_eq;
    struct qhca_cmd_reg_mr reg_mr;
    struct qhca_cmd_rereg_mr rereg_mr;
    struct qhca_cmd_create_cq create_cq;
    struct qhca_cmd_resize_cq resize_cq;
    struct qhca_cmd_create_qp create_qp;
    struct qhca_cmd_modify_qp modify_qp;
    struct qhca_cmd_create_srq create_srq;
    struct qhca_cmd_modify_srq modify_srq;
    struct qhca_cmd_mcast mcast;
    struct qhca_cmd_alloc_mw alloc_mw;
    struct qhca_cmd_inject_fault inject_fault;
    struct qhca_cmd_set_gid set_gid;
    struct qhca_cmd_set_qp_av set_qp_av;
    struct qhca_cmd_odp_map odp_map;
    struct qhca_cmd_odp_unmap odp_unmap;
    struct qhca_cmd_query_page_fault query_page_fault;
    struct qhca_cmd_resume_page_fault resume_page_fault;
    uint8_t raw[QHCA_AQ_PAYLOAD_SIZE];
} QhcaCmdParams;

typedef union QhcaCmdResp {
    struct qhca_device_attr device;
    struct qhca_port_attr port;
    struct qhca_stats stats;
    struct qhca_qp_attr qp;
    struct qhca_counters counters;
    struct qhca_srq_attr srq;
    struct qhca_page_fault_info page_fault;
} QhcaCmdResp;

/*
 * Fail a command.  Full tables and busy objects are the guest's normal
 * business; everything else is a driver bug worth a guest error report.
 */
uint8_t qhca_exec_reject(QhcaState *s, const QhcaCmd *cmd, uint8_t status,
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

static uint8_t qhca_exec_query_device(QhcaState *s, const QhcaCmd *cmd,
                                      struct qhca_device_attr *attr)
{
    const QhcaParams *p = &s->params;

    attr->fw_version = cpu_to_le64((uint64_t)QEMU_VERSION_MAJOR << 32 |
                                   QEMU_VERSION_MINOR << 16 |
                                   QEMU_VERSION_MICRO);
    attr->node_guid = cpu_to_le64(p->node_guid);
    attr->sys_image_guid = cpu_to_le64(p->node_guid);
    attr->max_mr_size = cpu_to_le64(QHCA_MAX_MR_SIZE);
    attr->page_size_cap = cpu_to_le64(QHCA_PAGE_SIZE_CAP);
    attr->vendor_id = cpu_to_le32(QHCA_PCI_VENDOR_ID);
    attr->vendor_part_id = cpu_to_le32(QHCA_PCI_DEVICE_ID);
    attr->hw_version = cpu_to_le32(QHCA_VERSION_CURRENT);
    attr->max_qp = cpu_to_le32(p->max_qps);
    attr->max_qp_wr = cpu_to_le32(p->max_qp_wr);
    attr->max_sge = cpu_to_le32(QHCA_MAX_SGE);
    attr->max_sge_rd = cpu_to_le32(QHCA_MAX_SGE);
    attr->max_cq = cpu_to_le32(p->max_cqs);
    attr->max_cqe = cpu_to_le32(p->max_cqe);
    attr->max_mr = cpu_to_le32(p->max_mrs);
    attr->max_pd = cpu_to_le32(p->max_pds);
    attr->max_qp_rd_atom = cpu_to_le32(QHCA_MAX_RD_ATOMIC);
    attr->max_qp_init_rd_atom = cpu_to_le32(QHCA_MAX_RD_ATOMIC);
    attr->max_inline_data = cpu_to_le32(QHCA_MAX_INLINE);
    attr->max_srq = cpu_to_le32(p->max_srqs);
    attr->max_mw = cpu_to_le32(p->max_mws);
    attr->max_srq_wr = cpu_to_le32(p->max_srq_wr);
    attr->max_srq_sge = cpu_to_le32(QHCA_MAX_SGE);
    attr->max_uar = cpu_to_le32(p->max_uars);
    attr->max_eq = cpu_to_le32(p->max_eqs);
    attr->max_eqe = cpu_to_le32(QHCA_MAX_EQE);
    attr->max_pkeys = cpu_to_le32(1);
    attr->device_cap_flags = cpu_to_le32(QHCA_DEV_CAP_RC_RNR_NAK_GEN |
                                         QHCA_DEV_CAP_PORT_ACTIVE_EVENT |
                                         QHCA_DEV_CAP_SRQ |
                                         QHCA_DEV_CAP_RESIZE_SRQ |
                                         QHCA_DEV_CAP_REREG_MR |
                                         QHCA_DEV_CAP_UD | QHCA_DEV_CAP_UC |
                                         QHCA_DEV_CAP_CQE_TIMESTAMP |
                                         QHCA_DEV_CAP_MEM_MGT_EXT |
                                         (p->max_mws ? QHCA_DEV_CAP_MW : 0) |
                                         QHCA_DEV_CAP_XRC |
                                         QHCA_DEV_CAP_FLUSH |
                                         QHCA_DEV_CAP_ATOMIC_WRITE |
                                         QHCA_DEV_CAP_RESIZE_CQ |
                                         QHCA_DEV_CAP_ON_DEMAND_PAGING |
                                         (p->fault_injection ?
                                          QHCA_DEV_CAP_FAULT_INJECT : 0) |
                                         (p->dm_size ?
                                          QHCA_DEV_CAP_DEVICE_MEMORY : 0));
    attr->dm_size = cpu_to_le32(p->dm_size);
    /* CQE timestamps count nanoseconds (qhca_cq_post()): a 1 GHz clock. */
    attr->hca_core_clock = cpu_to_le32(QHCA_CQE_CLOCK_KHZ);
    attr->num_ports = 1;
    attr->atomic_cap = 1;
    attr->local_ca_ack_delay = QHCA_LOCAL_CA_ACK_DELAY;
    return QHCA_AQ_SUCCESS;
}

static uint8_t qhca_exec_query_port(QhcaState *s, const QhcaCmd *cmd,
                                    const struct qhca_cmd_query_port *in,
                                    struct qhca_port_attr *attr)
{
    const QhcaParams *p = &s->params;
    bool active = qhca_port_active(s);

    if (in->port_num != QHCA_PORT_NUM) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM, "no such port");
    }
    if (!buffer_is_zero(in->rsvd, sizeof(in->rsvd))) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "reserved field set");
    }

    attr->port_guid = cpu_to_le64(p->port_guid);
    attr->subnet_prefix = cpu_to_le64(0xfe80000000000000ull);
    /*
     * No capability is claimed: there is no subnet manager (the SM LID
     * reported is the port's own LID, the lid property) and no traps, so
     * IsSM and IsTrapSupported stay off until they exist.
     */
    attr->port_cap_flags = cpu_to_le32(0);
    attr->max_msg_sz = cpu_to_le32(QHCA_MAX_MSG_SIZE);
    attr->pkey = cpu_to_le16(QHCA_DEFAULT_PKEY);
    attr->pkey_tbl_len = cpu_to_le16(1);
    if (qhca_port_is_eth(s)) {
        /*
         * 1.5: no LIDs on Ethernet; the GIDs are the driver's (SET_GID),
         * the MAC and the largest frame the netdev's.
         */
        attr->link_layer = QHCA_LINK_LAYER_ETH;
        attr->lid = 0;
        attr->sm_lid = 0;
        attr->gid_tbl_len = cpu_to_le16(QHCA_ROCE_GID_TBL_LEN);
        memcpy(attr->mac, s->conf.macaddr.a, sizeof(attr->mac));
        attr->eth_mtu = cpu_to_le16(QHCA_ETH_MAX_MTU);
    } else {
        attr->link_layer = QHCA_LINK_LAYER_IB;
        attr->lid = cpu_to_le16(p->lid);
        attr->sm_lid = cpu_to_le16(p->lid);
        attr->gid_tbl_len = cpu_to_le16(1);
    }
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

static uint8_t qhca_exec_alloc(QhcaState *s, const QhcaCmd *cmd,
                               QhcaTable *t, uint32_t *handle)
{
    if (!qhca_table_alloc(t, handle)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_NO_RESOURCES, "table full");
    }
    return QHCA_AQ_SUCCESS;
}

/* UARs and PDs: @refs counts the objects using each, NULL if none can. */
static uint8_t qhca_exec_dealloc(QhcaState *s, const QhcaCmd *cmd,
                                 QhcaTable *t, const uint32_t *refs,
                                 const struct qhca_cmd_handle *in)
{
    uint32_t handle = le32_to_cpu(in->handle);

    if (in->rsvd) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "reserved field set");
    }
    if (!qhca_table_live(t, handle)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_HANDLE,
                                "handle not allocated");
    }
    if (refs && refs[handle]) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_STATE,
                                "still in use");
    }
    qhca_table_free(t, handle);
    return QHCA_AQ_SUCCESS;
}

/* The commands whose payload is one handle. */
static uint8_t qhca_exec_on_handle(QhcaState *s, const QhcaCmd *cmd,
                                   const struct qhca_cmd_handle *in,
                                   QhcaCmdResp *out)
{
    uint32_t handle = le32_to_cpu(in->handle);

    if (in->rsvd) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "reserved field set");
    }
    switch (cmd->opcode) {
    case QHCA_CMD_DESTROY_EQ:
        return qhca_eq_destroy(s, cmd, handle);
    case QHCA_CMD_DEREG_MR:
        return qhca_mr_dereg(s, cmd, handle);
    case QHCA_CMD_DESTROY_CQ:
        return qhca_cq_destroy(s, cmd, handle);
    case QHCA_CMD_QUERY_QP:
        return qhca_qp_query(s, cmd, handle, &out->qp);
    case QHCA_CMD_DESTROY_QP:
        return qhca_qp_destroy(s, cmd, handle);
    case QHCA_CMD_QUERY_SRQ:
        return qhca_srq_query(s, cmd, handle, &out->srq);
    case QHCA_CMD_DESTROY_SRQ:
        return qhca_srq_destroy(s, cmd, handle);
    case QHCA_CMD_DEALLOC_MW:
        return qhca_mw_dealloc(s, cmd, handle);
    default:
        g_assert_not_reached();
    }
}

static uint8_t qhca_exec_query_stats(QhcaState *s, const QhcaCmd *cmd,
                                     struct qhca_stats *st)
{
    st->uars = cpu_to_le32(s->uars.used);
    st->pds = cpu_to_le32(s->pds.used);
    st->eqs = cpu_to_le32(s->eqs.used);
    st->cqs = cpu_to_le32(s->cqs.used);
    st->qps = cpu_to_le32(s->qps.used);
    st->mrs = cpu_to_le32(s->mrs.used);
    st->srqs = cpu_to_le32(s->srqs.used);
    st->admin_cmds = cpu_to_le64(s->counters.admin_cmds);
    st->admin_errors = cpu_to_le64(s->counters.admin_errors);
    st->doorbells = cpu_to_le64(qatomic_read(&s->counters.doorbells));
    st->guest_errors = cpu_to_le64(qatomic_read(&s->counters.guest_errors));
    st->mws = cpu_to_le32(s->mws.used);
    st->xrcds = cpu_to_le32(s->xrcds.used);
    st->mcast_groups = cpu_to_le32(qhca_mcast_groups(s));
    return QHCA_AQ_SUCCESS;
}

static uint8_t qhca_exec_query_counters(QhcaState *s, const QhcaCmd *cmd,
                                        struct qhca_counters *c)
{
    unsigned i;

    QEMU_BUILD_BUG_ON(QHCA_CNT_NUM > ARRAY_SIZE(c->cnt));
    for (i = 0; i < QHCA_CNT_NUM; i++) {
        c->cnt[i] = cpu_to_le64(qatomic_read(&s->counters.cnt[i]));
    }
    return QHCA_AQ_SUCCESS;
}

static uint8_t qhca_exec_dispatch(QhcaState *s, const QhcaCmd *cmd,
                                  const QhcaCmdParams *in, QhcaCmdResp *out,
                                  uint32_t *result)
{
    switch (cmd->opcode) {
    case QHCA_CMD_QUERY_DEVICE:
        return qhca_exec_query_device(s, cmd, &out->device);
    case QHCA_CMD_QUERY_PORT:
        return qhca_exec_query_port(s, cmd, &in->query_port, &out->port);
    case QHCA_CMD_ALLOC_UAR:
        return qhca_exec_alloc(s, cmd, &s->uars, result);
    case QHCA_CMD_DEALLOC_UAR:
        return qhca_exec_dealloc(s, cmd, &s->uars, s->uar_refs, &in->handle);
    case QHCA_CMD_ALLOC_PD:
        return qhca_exec_alloc(s, cmd, &s->pds, result);
    case QHCA_CMD_DEALLOC_PD:
        return qhca_exec_dealloc(s, cmd, &s->pds, s->pd_refs, &in->handle);
    case QHCA_CMD_ALLOC_XRCD:
        return qhca_exec_alloc(s, cmd, &s->xrcds, result);
    case QHCA_CMD_DEALLOC_XRCD:
        return qhca_exec_dealloc(s, cmd, &s->xrcds, s->xrcd_refs,
                                 &in->handle);
    case QHCA_CMD_CREATE_EQ:
        return qhca_eq_create(s, cmd, &in->create_eq, result);
    case QHCA_CMD_DESTROY_EQ:
    case QHCA_CMD_DEREG_MR:
    case QHCA_CMD_DESTROY_CQ:
    case QHCA_CMD_QUERY_QP:
    case QHCA_CMD_DESTROY_QP:
    case QHCA_CMD_QUERY_SRQ:
    case QHCA_CMD_DESTROY_SRQ:
    case QHCA_CMD_DEALLOC_MW:
        return qhca_exec_on_handle(s, cmd, &in->handle, out);
    case QHCA_CMD_ALLOC_MW:
        return qhca_mw_alloc(s, cmd, &in->alloc_mw, result);
    case QHCA_CMD_CREATE_SRQ:
        return qhca_srq_create(s, cmd, &in->create_srq, result);
    case QHCA_CMD_MODIFY_SRQ:
        return qhca_srq_modify(s, cmd, &in->modify_srq);
    case QHCA_CMD_ATTACH_MCAST:
    case QHCA_CMD_DETACH_MCAST:
        return qhca_mcast_cmd(s, cmd, &in->mcast);
    case QHCA_CMD_QUERY_STATS:
        return qhca_exec_query_stats(s, cmd, &out->stats);
    case QHCA_CMD_REG_MR:
        return qhca_mr_reg(s, cmd, &in->reg_mr, result);
    case QHCA_CMD_REREG_MR:
        return qhca_mr_rereg(s, cmd, &in->rereg_mr);
    case QHCA_CMD_CREATE_CQ:
        return qhca_cq_create(s, cmd, &in->create_cq, result);
    case QHCA_CMD_RESIZE_CQ:
        return qhca_cq_resize(s, cmd, &in->resize_cq);
    case QHCA_CMD_CREATE_QP:
        return qhca_qp_create(s, cmd, &in->create_qp, result);
    case QHCA_CMD_MODIFY_QP:
        return qhca_qp_modify(s, cmd, &in->modify_qp);
    case QHCA_CMD_QUERY_COUNTERS:
        return qhca_exec_query_counters(s, cmd, &out->counters);
    case QHCA_CMD_INJECT_FAULT:
        return qhca_fault_inject(s, cmd, &in->inject_fault);
    case QHCA_CMD_SET_GID:
        return qhca_exec_set_gid(s, cmd, &in->set_gid);
    case QHCA_CMD_SET_QP_AV:
        return qhca_exec_set_qp_av(s, cmd, &in->set_qp_av);
    case QHCA_CMD_ODP_MAP:
        return qhca_odp_map(s, cmd, &in->odp_map);
    case QHCA_CMD_ODP_UNMAP:
        return qhca_odp_unmap(s, cmd, &in->odp_unmap);
    case QHCA_CMD_QUERY_PAGE_FAULT:
        return qhca_odp_query(s, cmd, &in->query_page_fault,
                              &out->page_fault);
    case QHCA_CMD_RESUME_PAGE_FAULT:
        return qhca_odp_resume(s, cmd, &in->resume_page_fault);
    default:
        g_assert_not_reached();
    }
}

/* Run one command; returns its status and sets *result (0 on failure). */
uint8_t qhca_exec_command(QhcaState *s, const struct qhca_aq_sqe *sqe,
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
    uint32_t resp_len = le32_to_cpu(sqe->resp_len);
    uint8_t status;

    *result = 0;
    s->counters.admin_cmds++;

    /* Without fault-injection, INJECT_FAULT is an opcode like any unknown. */
    if (cmd.opcode < ARRAY_SIZE(qhca_cmds) && qhca_cmds[cmd.opcode].name &&
        (cmd.opcode != QHCA_CMD_INJECT_FAULT || s->params.fault_injection)) {
        desc = &qhca_cmds[cmd.opcode];
        cmd.name = desc->name;
    }
    trace_qhca_cmd(cmd.cmd_id, cmd.opcode, cmd.name);
    if (desc) {
        /* A response grown by a later version fills what the buffer holds. */
        resp_len = MIN(resp_len, desc->resp_size);
    }

    if (!desc) {
        status = qhca_exec_reject(s, &cmd, QHCA_AQ_BAD_OPCODE,
                                  "unknown opcode");
    } else if (sqe->flags || sqe->rsvd) {
        status = qhca_exec_reject(s, &cmd, QHCA_AQ_BAD_PARAM,
                                  "reserved SQE field set");
    } else if (!buffer_is_zero(sqe->payload + desc->param_size,
                               QHCA_AQ_PAYLOAD_SIZE - desc->param_size)) {
        status = qhca_exec_reject(s, &cmd, QHCA_AQ_BAD_PARAM,
                                  "reserved payload bytes set");
    } else if (resp_len < (desc->resp_min ?: desc->resp_size)) {
        status = qhca_exec_reject(s, &cmd, QHCA_AQ_BAD_PARAM,
                                  "response buffer too short");
    } else if (resp_len && !qhca_dma_in_ram(s, resp_addr, resp_len, true)) {
        status = qhca_exec_reject(s, &cmd, QHCA_AQ_BAD_ADDRESS,
                                  "response buffer not in guest RAM");
    } else {
        QEMU_BUILD_BUG_ON(sizeof(in) != sizeof(sqe->payload));
        memcpy(&in, sqe->payload, sizeof(in));
        status = qhca_exec_dispatch(s, &cmd, &in, &out, result);
        if (status == QHCA_AQ_SUCCESS && resp_len &&
            !qhca_dma_write(s, resp_addr, &out, resp_len)) {
            status = qhca_exec_reject(s, &cmd, QHCA_AQ_BAD_ADDRESS,
                                      "response write failed");
        }
    }

    if (status != QHCA_AQ_SUCCESS) {
        s->counters.admin_errors++;
        *result = 0;
    }
    return status;
}
