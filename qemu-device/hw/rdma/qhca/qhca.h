/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qhca: an emulated InfiniBand host channel adapter.
 *
 * Internal state shared by the files of the device model.  The interface
 * the guest sees is standard-headers/rdma/qhca_hw.h (the project's
 * include/qhca_hw.h, shared with the driver), described in prose by its
 * Documentation/hw/ (index.rst); nothing here is visible to the guest.
 */
#ifndef HW_RDMA_QHCA_H
#define HW_RDMA_QHCA_H

#include "hw/pci/pci_device.h"
#include "net/net.h"
#include "qemu/atomic.h"
#include "qemu/log.h"
#include "qom/object.h"
#include "standard-headers/rdma/qhca_hw.h"

#define TYPE_QHCA "qhca"
OBJECT_DECLARE_SIMPLE_TYPE(QhcaState, QHCA)

#include "qhca-dp.h"

/*
 * Property limits.  Each keeps a handle or index inside the field that
 * carries it (EQ_DB has 8 bits for the EQ, BAR 2 doorbells 16 bits for the
 * queue number and index) and every table a sane size.
 */
#define QHCA_MAX_UARS           4096        /* 16 MiB of doorbell BAR */
#define QHCA_MAX_PDS            (1u << 24)
#define QHCA_MAX_EQS            256
#define QHCA_MAX_QPS            65536
#define QHCA_MAX_CQS            65536
#define QHCA_MAX_MRS            (1u << 23)  /* bit 31 of a key: an MW */
#define QHCA_MAX_MWS            (1u << 23)
#define QHCA_MAX_CQE            32768
#define QHCA_MAX_SRQS           65535       /* 16-bit srqn, 0 unused */
#define QHCA_MAX_XRCDS          65535
#define QHCA_MAX_MR_PAGES       (1u << 28)  /* 2 GiB of page lists */
#define QHCA_MIN_MSIX_VECTORS   2
#define QHCA_MAX_MSIX_VECTORS   64
#define QHCA_MAX_LID            0xbfff      /* highest unicast LID */
#define QHCA_MAX_DM_SIZE        (256ull << 20)  /* BAR 4 (1.7) */

/* Fixed limits reported by QUERY_DEVICE (see the spec). */
#define QHCA_MAX_EQE            32768
#define QHCA_MAX_EQ_DEPTH_LOG2  15          /* log2(QHCA_MAX_EQE) */
#define QHCA_PORT_NUM           1

typedef struct QhcaParams {
    uint16_t lid;
    uint64_t node_guid;         /* 0: derive from the LID */
    uint64_t port_guid;         /* 0: node_guid + 1 */
    uint32_t max_pds;
    uint32_t max_uars;
    uint32_t max_eqs;
    uint32_t max_qps;
    uint32_t max_cqs;
    uint32_t max_mrs;
    uint32_t max_qp_wr;
    uint32_t max_cqe;
    uint32_t max_mr_pages;
    uint32_t msix_vectors;
    uint32_t max_srqs;
    uint32_t max_srq_wr;
    uint32_t max_xrcds;
    uint32_t max_mws;           /* 1.2; 0: no memory windows */
    uint32_t engine_spin_us;    /* longest spin before sleeping; 0: none */
    uint32_t rx_queue;          /* frames the Ethernet receive queue holds */
    bool engine_inline;         /* doorbells may run the engine in the vCPU */
    bool fault_injection;       /* 1.3: INJECT_FAULT, FAULT_INJECT cap */
    char *link_layer;           /* 1.5: "eth", "ib" or NULL (qhca-net.c) */
    uint64_t dm_size;           /* 1.7: bytes of BAR 4; 0: no device memory */
} QhcaParams;

/* A table of object handles first .. size - 1. */
typedef struct QhcaTable {
    const char *name;
    unsigned long *map;
    uint32_t first;             /* lower handles are never handed out */
    uint32_t size;
    uint32_t used;
    uint32_t first_free;        /* no free handle below this one */
} QhcaTable;

typedef struct QhcaEq {
    uint64_t base;
    uint32_t entries;           /* a power of two */
    uint32_t head;              /* consumer index, from EQ_DB */
    uint32_t tail;              /* next slot the device writes */
    uint32_t event_mask;
    uint16_t vector;
    uint8_t phase;
    uint64_t dropped;           /* events lost to a full queue */
} QhcaEq;

typedef struct QhcaAdminQueue {
    /* The registers, as written. */
    uint64_t sq_base;
    uint64_t cq_base;
    uint32_t cfg;

    /* The rings while READY; see qhca_aq_start(). */
    uint32_t entries;
    uint16_t vector;
    uint32_t sq_head;           /* next SQE the device reads */
    uint32_t sq_tail;           /* from AQ_SQ_DB */
    uint32_t cq_head;           /* from AQ_CQ_DB */
    uint32_t cq_tail;           /* next CQE slot the device writes */
    uint8_t phase;
    bool hung;                  /* AQ_HANG: nothing runs until a reset */
    QEMUBH *bh;
} QhcaAdminQueue;

/*
 * Counters.  Doorbells (BAR 2) and the engine thread update some of them
 * without the device lock, so they are all updated atomically.
 */
/* 1.5: an entry of the Ethernet port's GID table. */
typedef struct QhcaGid {
    uint8_t type;               /* enum qhca_gid_type */
    uint8_t gid[16];
} QhcaGid;

typedef struct QhcaCounters {
    uint64_t admin_cmds;
    uint64_t admin_errors;
    uint64_t doorbells;
    uint64_t guest_errors;
    uint64_t cnt[QHCA_CNT_NUM];         /* QUERY_COUNTERS */
} QhcaCounters;

struct QhcaState {
    PCIDevice parent_obj;

    MemoryRegion bar0;          /* registers + MSI-X table and PBA */
    MemoryRegion regs;
    MemoryRegion db_bar;
    /*
     * 1.7: BAR 4, device memory (params.dm_size bytes; none if 0).  RAM:
     * the guest's CPUs access it directly, the data path through @dm
     * (qhca_mr_copy()).
     */
    MemoryRegion dm_bar;
    uint8_t *dm;

    QhcaParams params;
    QemuMutex lock;             /* the device lock, see qhca-dp.h */

    uint32_t ctrl;
    uint32_t status;
    uint32_t error;

    QhcaAdminQueue aq;
    QhcaTable uars;
    QhcaTable pds;
    QhcaTable eqs;
    QhcaEq *eq;                 /* params.max_eqs entries */

    /* Interface 1.1: the data path. */
    QhcaTable mrs;
    QhcaTable cqs;
    QhcaTable qps;
    QhcaMr **mr;                /* by MR index */
    QhcaCq *cq;                 /* by CQ number, allocated once */
    QhcaQp *qp;                 /* by QP number, allocated once */
    uint32_t *pd_refs;          /* MRs and QPs using each PD */
    uint32_t *uar_refs;         /* CQs and QPs using each UAR */
    uint64_t mr_pages;          /* page list entries all MRs hold */
    QhcaTable mws;              /* 1.2: memory windows */
    QhcaMw **mw;                /* by MW index */
    QhcaTable srqs;             /* 1.2 */
    QhcaSrq *srq;               /* by SRQ number, allocated once */
    QhcaTable xrcds;            /* 1.2: XRC domains */
    uint32_t *xrcd_refs;        /* XRC SRQs and TGT QPs in each */
    QhcaMcast mcast[QHCA_MAX_MCAST_GROUPS];     /* 1.2 */
    QhcaEngine engine;

    /*
     * 1.3 (qhca-fault.c): the cable, which only the host pulls or plugs
     * in and no device reset changes (QOM property link-up); the link the
     * guest took down (LINK_DOWN, until LINK_UP or a reset); and the
     * packets the wire still has to drop (DROP).  Atomic: QOM, the admin
     * queue and the engine change or read them; changes are made under
     * the device lock.
     */
    bool link_up;
    bool link_down_injected;
    uint32_t wire_drops_left;
    /*
     * 1.5: the netdev's link (QMP set_link) is the cable too: the link is
     * up while both the property and the backend have it up.
     */
    bool backend_link_down;

    QhcaCounters counters;

    /*
     * 1.5: the port's link layer (QHCA_LINK_LAYER_*, fixed at realize:
     * Ethernet with a netdev) and, on Ethernet, the NIC (qhca-net.c) and
     * the GID table (qhca-gid.c, under the device lock).
     */
    uint8_t link_layer;
    NICConf conf;
    NICState *nic;
    struct QhcaNet *net;        /* Ethernet: the frame queues, qhca-net.c */
    QhcaGid gid[QHCA_ROCE_GID_TBL_LEN];
};

/*
 * Report a guest error: the trace event qhca_err_<event> with the
 * arguments, the same text under -d guest_errors, the guest error counter
 * and, unless @err is QHCA_ERR_NONE, the ERROR register.  Command errors
 * pass QHCA_ERR_NONE: their status goes to the completion instead.
 */
#define qhca_guest_error(s, err, event, fmt, ...)                           \
    do {                                                                    \
        trace_qhca_err_##event(__VA_ARGS__);                                \
        qemu_log_mask(LOG_GUEST_ERROR, "qhca: %s: " fmt "\n", #event,       \
                      ## __VA_ARGS__);                                      \
        qhca_count_guest_error(s, err);                                     \
    } while (0)

static inline void qhca_count_guest_error(QhcaState *s, enum qhca_error err)
{
    qatomic_inc(&s->counters.guest_errors);
    if (err != QHCA_ERR_NONE) {
        qatomic_set(&s->error, err);
    }
}

static inline void qhca_count(QhcaState *s, enum qhca_counter c, uint64_t n)
{
    qatomic_add(&s->counters.cnt[c], n);
}

static inline bool qhca_is_ready(QhcaState *s)
{
    return (s->status & (QHCA_STATUS_READY | QHCA_STATUS_FATAL)) ==
           QHCA_STATUS_READY;
}

/* The command being executed, for the handlers' error reports. */
typedef struct QhcaCmd {
    uint16_t opcode;
    uint16_t cmd_id;
    const char *name;
} QhcaCmd;

/* qhca-pci.c */
void qhca_irq(QhcaState *s, unsigned vector);

/* qhca-regs.c */
extern const MemoryRegionOps qhca_reg_ops;
void qhca_device_reset(QhcaState *s);
void qhca_fatal(QhcaState *s);

/* qhca-doorbell.c */
extern const MemoryRegionOps qhca_db_ops;

/* qhca-dma.c */
bool qhca_dma_in_ram(QhcaState *s, uint64_t addr, uint64_t len,
                     bool is_write);
bool qhca_dma_read(QhcaState *s, uint64_t addr, void *buf, uint64_t len);
bool qhca_dma_write(QhcaState *s, uint64_t addr, const void *buf,
                    uint64_t len);
bool qhca_dma_write_entry(QhcaState *s, uint64_t addr, void *entry,
                          size_t size, size_t flags_offset, uint8_t phase);

/* A transfer between @buf and guest RAM, into RAM if @to_guest. */
static inline bool qhca_dma_copy(QhcaState *s, uint64_t addr, void *buf,
                                 uint64_t len, bool to_guest)
{
    return to_guest ? qhca_dma_write(s, addr, buf, len) :
                      qhca_dma_read(s, addr, buf, len);
}
void qhca_dma_ring_failed(QhcaState *s, const char *ring, uint64_t addr);

/* qhca-admin.c */
void qhca_aq_init(QhcaState *s);
void qhca_aq_fini(QhcaState *s);
void qhca_aq_reset(QhcaState *s);
bool qhca_aq_check_config(QhcaState *s);
void qhca_aq_start(QhcaState *s);
void qhca_aq_stop(QhcaState *s);
void qhca_aq_sq_doorbell(QhcaState *s, uint32_t val);
void qhca_aq_cq_doorbell(QhcaState *s, uint32_t val);

/* qhca-cmd.c */
uint8_t qhca_exec_command(QhcaState *s, const struct qhca_aq_sqe *sqe,
                          uint32_t *result);
uint8_t qhca_exec_reject(QhcaState *s, const QhcaCmd *cmd, uint8_t status,
                         const char *why);

/* qhca-objects.c */
void qhca_table_init(QhcaTable *t, const char *name, uint32_t first,
                     uint32_t count);
void qhca_table_fini(QhcaTable *t);
void qhca_table_reset(QhcaTable *t);
bool qhca_table_alloc(QhcaTable *t, uint32_t *handle);
bool qhca_table_live(QhcaTable *t, uint32_t handle);
void qhca_table_free(QhcaTable *t, uint32_t handle);

/* Every live handle @i of table @t, in order; @i may be freed in the body. */
#define QHCA_TABLE_FOR_EACH(t, i)                                     \
    for ((i) = find_first_bit((t)->map, (t)->size); (i) < (t)->size;   \
         (i) = find_next_bit((t)->map, (t)->size, (i) + 1))
void qhca_objects_init(QhcaState *s);
void qhca_objects_fini(QhcaState *s);
void qhca_objects_reset(QhcaState *s);

/* qhca-eq.c */
uint8_t qhca_eq_create(QhcaState *s, const QhcaCmd *cmd,
                       const struct qhca_cmd_create_eq *p, uint32_t *eqn);
uint8_t qhca_eq_destroy(QhcaState *s, const QhcaCmd *cmd, uint32_t eqn);
void qhca_eq_doorbell(QhcaState *s, uint32_t val);
void qhca_eq_event(QhcaState *s, uint32_t eqn, enum qhca_event_type type,
                   uint32_t data);
void qhca_eq_broadcast(QhcaState *s, enum qhca_event_type type,
                       uint32_t data);

/* qhca-mr.c */
void qhca_mr_init(QhcaState *s);
void qhca_mr_fini(QhcaState *s);
void qhca_mr_reset(QhcaState *s);
uint8_t qhca_mr_reg(QhcaState *s, const QhcaCmd *cmd,
                    const struct qhca_cmd_reg_mr *p, uint32_t *index);
uint8_t qhca_mr_rereg(QhcaState *s, const QhcaCmd *cmd,
                      const struct qhca_cmd_rereg_mr *p);
uint8_t qhca_mr_dereg(QhcaState *s, const QhcaCmd *cmd, uint32_t index);
QhcaMr *qhca_mr_lookup(QhcaState *s, uint32_t key, uint32_t pdn,
                       uint64_t addr, uint64_t len, uint8_t access);

/* What qhca_mr_copy() did. */
typedef enum QhcaMrCopy {
    QHCA_MR_COPY_OK,
    QHCA_MR_COPY_NOT_RAM,       /* a page left guest RAM */
    QHCA_MR_COPY_FAULT,         /* 1.8: an ODP page is absent */
} QhcaMrCopy;

QhcaMrCopy qhca_mr_copy(QhcaState *s, QhcaMr *mr, uint64_t addr, void *buf,
                        uint32_t len, bool to_mr, QhcaOdpMiss *miss);

/*
 * 1.8: not a completion status nor a NAK code, never given to the guest:
 * qhca_sgl_copy() and the responder's helpers say with it that an access
 * met an absent ODP page (the QhcaOdpMiss says where).
 */
#define QHCA_ODP_FAULT          0xff

/* qhca-odp.c (1.8) */
void qhca_odp_mr_init(QhcaMr *mr);
void qhca_odp_mr_free(QhcaState *s, QhcaMr *mr);
QhcaMrCopy qhca_odp_probe(QhcaMr *mr, uint64_t addr, uint64_t len,
                          bool write, QhcaOdpMiss *miss);
uint64_t qhca_odp_page_addr(const QhcaMr *mr, uint64_t page);
uint8_t qhca_odp_map(QhcaState *s, const QhcaCmd *cmd,
                     const struct qhca_cmd_odp_map *p);
uint8_t qhca_odp_unmap(QhcaState *s, const QhcaCmd *cmd,
                       const struct qhca_cmd_odp_unmap *p);
uint8_t qhca_odp_query(QhcaState *s, const QhcaCmd *cmd,
                       const struct qhca_cmd_query_page_fault *p,
                       struct qhca_page_fault_info *info);
uint8_t qhca_odp_resume(QhcaState *s, const QhcaCmd *cmd,
                        const struct qhca_cmd_resume_page_fault *p);
bool qhca_odp_fault(QhcaState *s, QhcaQp *qp, enum qhca_page_fault_kind kind,
                    const QhcaOdpMiss *miss, uint32_t tag, uint32_t psn);
void qhca_odp_qp_drop(QhcaQp *qp);
/* qhca-mw.c */
void qhca_mw_init(QhcaState *s);
void qhca_mw_fini(QhcaState *s);
void qhca_mw_reset(QhcaState *s);
uint8_t qhca_mw_alloc(QhcaState *s, const QhcaCmd *cmd,
                      const struct qhca_cmd_alloc_mw *p, uint32_t *index);
uint8_t qhca_mw_dealloc(QhcaState *s, const QhcaCmd *cmd, uint32_t index);
QhcaMr *qhca_mw_resolve(QhcaState *s, uint32_t key, uint32_t pdn,
                        uint64_t addr, uint64_t len, uint8_t access);
uint8_t qhca_local_exec(QhcaState *s, QhcaQp *qp, QhcaSwqe *w,
                        const char **why);
bool qhca_invalidate(QhcaState *s, uint32_t pdn, uint32_t key);

uint8_t qhca_sgl_copy(QhcaState *s, uint32_t pdn, const QhcaSge *sge,
                      unsigned num_sge, uint8_t access, uint64_t offset,
                      void *buf, uint32_t len, bool to_sgl,
                      QhcaOdpMiss *miss);

/* qhca-cq.c */
void qhca_cq_init(QhcaState *s);
void qhca_cq_fini(QhcaState *s);
void qhca_cq_reset(QhcaState *s);
uint8_t qhca_cq_create(QhcaState *s, const QhcaCmd *cmd,
                       const struct qhca_cmd_create_cq *p, uint32_t *cqn);
uint8_t qhca_cq_destroy(QhcaState *s, const QhcaCmd *cmd, uint32_t cqn);
uint8_t qhca_cq_resize(QhcaState *s, const QhcaCmd *cmd,
                       const struct qhca_cmd_resize_cq *p);
bool qhca_cq_post(QhcaState *s, uint32_t cqn, struct qhca_cqe *cqe);
void qhca_cq_arm(QhcaState *s, QhcaCq *cq);
void qhca_cq_fail(QhcaState *s, QhcaCq *cq);

/* qhca-qp.c */
void qhca_qp_init(QhcaState *s);
void qhca_qp_fini(QhcaState *s);
void qhca_qp_reset(QhcaState *s);
uint8_t qhca_qp_create(QhcaState *s, const QhcaCmd *cmd,
                       const struct qhca_cmd_create_qp *p, uint32_t *qpn);
uint8_t qhca_qp_destroy(QhcaState *s, const QhcaCmd *cmd, uint32_t qpn);
uint8_t qhca_qp_query(QhcaState *s, const QhcaCmd *cmd, uint32_t qpn,
                      struct qhca_qp_attr *attr);
void qhca_qp_clear(QhcaQp *qp);
void qhca_qp_error(QhcaState *s, QhcaQp *qp, enum qhca_event_type event);
bool qhca_qp_flush(QhcaState *s, QhcaQp *qp);
void qhca_qp_sq_doorbell(QhcaState *s, QhcaQp *qp, uint16_t pi);
void qhca_qp_rq_doorbell(QhcaState *s, QhcaQp *qp, uint16_t pi);
uint8_t qhca_qp_transport(const QhcaQp *qp);

/* qhca-srq.c */
void qhca_srq_init(QhcaState *s);
void qhca_srq_fini(QhcaState *s);
void qhca_srq_reset(QhcaState *s);
uint8_t qhca_srq_create(QhcaState *s, const QhcaCmd *cmd,
                        const struct qhca_cmd_create_srq *p, uint32_t *srqn);
uint8_t qhca_srq_modify(QhcaState *s, const QhcaCmd *cmd,
                        const struct qhca_cmd_modify_srq *p);
uint8_t qhca_srq_query(QhcaState *s, const QhcaCmd *cmd, uint32_t srqn,
                       struct qhca_srq_attr *attr);
uint8_t qhca_srq_destroy(QhcaState *s, const QhcaCmd *cmd, uint32_t srqn);
void qhca_srq_doorbell(QhcaState *s, uint64_t page, uint32_t val);
bool qhca_srq_empty(QhcaState *s, QhcaQp *qp);
uint8_t qhca_srq_take(QhcaState *s, QhcaQp *qp, QhcaRwqe *r);
void qhca_srq_qp_flush(QhcaState *s, QhcaQp *qp);
void qhca_srq_fail(QhcaState *s, QhcaSrq *srq);

/* qhca-xrc.c */
void qhca_xrc_init(QhcaState *s);
void qhca_xrc_fini(QhcaState *s);
void qhca_xrc_reset(QhcaState *s);
const char *qhca_xrc_check_qp(const struct qhca_cmd_create_qp *p);
bool qhca_xrc_resp_select(QhcaState *s, QhcaQp *qp, const QhcaPacket *pkt,
                          const char **why);
void qhca_xrc_tgt_flush(QhcaState *s, QhcaQp *qp);

/* qhca-qp-modify.c */
uint8_t qhca_qp_modify(QhcaState *s, const QhcaCmd *cmd,
                       const struct qhca_cmd_modify_qp *p);

/* qhca-wqe.c */
bool qhca_swqe_read(QhcaState *s, QhcaQp *qp, uint16_t idx, QhcaSwqe *w,
                    const char **why);
uint8_t qhca_rq_take(QhcaState *s, QhcaQp *qp, QhcaRwqe *r);
bool qhca_wqe_peek(QhcaState *s, QhcaQp *qp, bool sq, uint16_t idx,
                   uint64_t *wr_id, uint8_t *wc_opcode);

/* What qhca_rwqe_read() found in a receive slot of an RQ or an SRQ. */
typedef enum QhcaRwqeRead {
    QHCA_RWQE_OK,
    QHCA_RWQE_HEADER_UNREADABLE,    /* the slot is not in guest RAM */
    QHCA_RWQE_TOO_MANY_SGES,        /* more than the slot has room for */
    QHCA_RWQE_SGES_UNREADABLE,
} QhcaRwqeRead;

unsigned qhca_rwqe_max_sge(unsigned stride_log2);
QhcaRwqeRead qhca_rwqe_read(QhcaState *s, uint64_t slot, unsigned stride_log2,
                            QhcaRwqe *r, uint8_t *num_sge);

/*
 * The slot of free-running index @idx in a ring of @entries (a power of
 * two) slots of 2^@stride_log2 bytes.
 */
static inline uint64_t qhca_ring_slot(uint64_t ring, uint32_t entries,
                                      unsigned stride_log2, uint16_t idx)
{
    return ring + ((uint64_t)(idx & (entries - 1)) << stride_log2);
}

static inline uint64_t qhca_sq_slot(const QhcaQp *qp, uint16_t idx)
{
    return qhca_ring_slot(qp->sq_addr, qp->sq_entries, qp->sq_stride_log2,
                          idx);
}

static inline uint64_t qhca_rq_slot(const QhcaQp *qp, uint16_t idx)
{
    return qhca_ring_slot(qp->rq_addr, qp->rq_entries, qp->rq_stride_log2,
                          idx);
}

/* qhca-engine.c */
void qhca_engine_init(QhcaState *s);
void qhca_engine_fini(QhcaState *s);
void qhca_engine_reset(QhcaState *s);
void qhca_engine_wake(QhcaState *s);
bool qhca_engine_round_locked(QhcaState *s);
void qhca_engine_irq_later(QhcaState *s, unsigned vector);
void qhca_engine_kick_qp(QhcaState *s, QhcaQp *qp, uint32_t why);
void qhca_engine_doorbell_qp(QhcaState *s, QhcaQp *qp, uint32_t why);
void qhca_engine_kick_cq(QhcaState *s, QhcaCq *cq);
void qhca_engine_schedule(QhcaState *s, QhcaQp *qp);
void qhca_engine_unschedule(QhcaState *s, QhcaQp *qp);
void qhca_engine_tx_wait(QhcaState *s, QhcaQp *qp);
void qhca_engine_tx_room(QhcaState *s);
void qhca_timer_arm(QhcaState *s, QhcaQp *qp, uint8_t kind, int64_t ns);

/* qhca-wire.c */
void qhca_wire_init(QhcaState *s);
void qhca_wire_fini(QhcaState *s);
QhcaPacket *qhca_wire_packet(QhcaState *s, QhcaQp *qp, uint8_t opcode,
                             uint32_t dest_qpn, uint32_t psn);
void qhca_wire_send(QhcaState *s, QhcaPacket *pkt);
void qhca_wire_drain(QhcaState *s);
bool qhca_wire_tx_blocked(QhcaState *s, QhcaQp *qp);
uint8_t qhca_wire_req_opcode(const struct qhca_wr_info *info, bool first,
                             bool last);
uint8_t qhca_wire_read_resp_opcode(uint32_t k, uint32_t npkts);

/* qhca-fault.c */
void qhca_fault_class_init(ObjectClass *klass);
void qhca_fault_instance_init(QhcaState *s);
void qhca_fault_reset(QhcaState *s);
uint8_t qhca_fault_inject(QhcaState *s, const QhcaCmd *cmd,
                          const struct qhca_cmd_inject_fault *p);
bool qhca_fault_wire_drop(QhcaState *s, const char **why);
void qhca_fault_backend_link(QhcaState *s, bool up);

/* qhca-requester.c */
bool qhca_req_step(QhcaState *s, QhcaQp *qp);
void qhca_req_receive(QhcaState *s, QhcaQp *qp, const QhcaPacket *pkt);
void qhca_req_timer(QhcaState *s, QhcaQp *qp);
void qhca_req_odp_resume(QhcaState *s, QhcaQp *qp);

/* qhca-ud.c: UD and UC */
void qhca_xport_fill_packet(QhcaState *s, QhcaQp *qp, const QhcaSwqe *w,
                            QhcaPacket *pkt);
void qhca_ud_receive(QhcaState *s, QhcaQp *qp, const QhcaPacket *pkt);
void qhca_uc_receive(QhcaState *s, QhcaQp *qp, const QhcaPacket *pkt);
void qhca_ud_fill_cqe(QhcaQp *qp, const QhcaPacket *pkt, struct qhca_cqe *cqe);
void qhca_ud_receive_mcast(QhcaState *s, QhcaQp *qp, const QhcaPacket *pkt);

/* qhca-mcast.c */
uint8_t qhca_mcast_cmd(QhcaState *s, const QhcaCmd *cmd,
                       const struct qhca_cmd_mcast *p);
void qhca_mcast_detach_qp(QhcaState *s, uint32_t qpn);
uint32_t qhca_mcast_groups(QhcaState *s);
bool qhca_mcast_deliver(QhcaState *s, const QhcaPacket *pkt);

/* qhca-responder.c */
bool qhca_resp_step(QhcaState *s, QhcaQp *qp);
void qhca_resp_receive(QhcaState *s, QhcaQp *qp, const QhcaPacket *pkt);
bool qhca_resp_rwqe_ready(QhcaState *s, QhcaQp *qp);
uint8_t qhca_resp_take_rwqe(QhcaState *s, QhcaQp *qp);
uint8_t qhca_resp_place_send(QhcaState *s, QhcaQp *qp, const QhcaPacket *pkt,
                             const char **why, QhcaOdpMiss *miss);
const char *qhca_resp_place_write(QhcaState *s, QhcaQp *qp,
                                  const QhcaPacket *pkt, uint8_t *nak,
                                  QhcaOdpMiss *miss);
bool qhca_resp_complete(QhcaState *s, QhcaQp *qp, uint8_t opcode,
                        uint8_t status, uint32_t byte_len,
                        const QhcaPacket *pkt);

/* The port's active MTU, as QUERY_PORT reports it (enum ib_mtu). */
#define QHCA_PORT_ACTIVE_MTU    5       /* 4096 */

/*
 * Bytes of payload in a packet of the QP's path MTU; a UD QP has no path
 * and uses the port's active MTU.
 */
static inline uint32_t qhca_qp_mtu(const QhcaQp *qp)
{
    if (qp->type == QHCA_QPT_UD) {
        return 128u << QHCA_PORT_ACTIVE_MTU;
    }
    return 128u << qp->path_mtu;
}

/*
 * The link is up while the cable is in (the link-up property and, on
 * Ethernet, the netdev's link) and the guest has not taken it down.
 */
static inline bool qhca_link_is_up(QhcaState *s)
{
    return qatomic_read(&s->link_up) &&
           !qatomic_read(&s->backend_link_down) &&
           !qatomic_read(&s->link_down_injected);
}

/* The port is up while the device is ready and the link is up (1.3). */
static inline bool qhca_port_active(QhcaState *s)
{
    return qhca_is_ready(s) && qhca_link_is_up(s);
}

#endif /* HW_RDMA_QHCA_H */
