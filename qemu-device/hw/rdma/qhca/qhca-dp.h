/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qhca data path objects (interface 1.1): memory regions, completion
 * queues, queue pairs, and the transport engine that runs them.
 *
 * Locking.  QhcaState.lock (the device lock) protects every object table
 * and every object's state below, the EQs, and the engine's run list and
 * wire.  Admin commands (a bottom half, under the BQL), the EQ doorbell
 * register, resets and the engine thread take it.  Whoever holds it never
 * takes the BQL: interrupts raised by the engine go through a bottom half.
 *
 * Doorbells on BAR 2 do not take the device lock.  They only read fields
 * marked "racy" (every object lives in a table that is allocated once, so
 * such a read is stale at worst), store the new index in an atomic field
 * and hand the object to the engine through a small spinlocked FIFO.  The
 * engine checks everything again, under the lock, before using it.
 */
#ifndef HW_RDMA_QHCA_DP_H
#define HW_RDMA_QHCA_DP_H

#include "qemu/queue.h"
#include "qemu/thread.h"
#include "qemu/timer.h"
#include "qhca-transport.h"

/* The largest path MTU: a packet's payload buffer. */
#define QHCA_MAX_MTU            4096

/* Handles: CQ 0 and QPs 0 and 1 are never handed out. */
#define QHCA_FIRST_CQN          1
#define QHCA_FIRST_QPN          2

/* Requester flow control: WQEs and unacknowledged packets in flight. */
#define QHCA_REQ_WINDOW         64
#define QHCA_REQ_MAX_UNACKED    256
/*
 * On an Ethernet port the peer's netdev is a host socket that loses what
 * overflows its buffer (a UDP socket's ~208 KiB is ~90 frames of a 1024
 * MTU, as the kernel counts them), and there is no congestion control:
 * rxe's cap of unacknowledged packets (RXE_MAX_UNACKED_PSNS, 128) halved,
 * so that a burst fits a socket buffer.  Measured between two TCG guests
 * on tools/vm's multicast bus, ib_write_bw 64 KiB: 128 gave 5-8 MiB/s and
 * ~300 retries a run, 64 and 32 gave 14-31 MiB/s and none.
 */
#define QHCA_ETH_MAX_UNACKED    64
#define QHCA_REQ_ACK_EVERY      64      /* AckReq at least this often */

/* Work one engine step may do for one QP before others get a turn. */
#define QHCA_STEP_PACKETS       16
#define QHCA_STEP_FLUSHES       64

typedef struct QhcaSge {
    uint64_t addr;
    uint32_t length;
    uint32_t lkey;
} QhcaSge;

typedef struct QhcaMr {
    uint64_t iova;
    uint64_t length;
    uint64_t *pages;            /* npages guest addresses; NULL if phys, dm */
    uint32_t npages;
    uint32_t pdn;
    uint8_t key;
    uint8_t access;             /* QHCA_ACCESS_* */
    uint8_t page_shift;
    bool phys;
    /* 1.2: fast registration and memory windows */
    bool fast_reg;              /* pages set by REG_MR WQEs */
    bool valid;                 /* keys resolve (always, unless fast_reg) */
    uint32_t max_pages;         /* fast_reg: what a REG_MR WQE may map */
    uint32_t mw_refs;           /* windows bound to it */
    /* 1.7: an MR of device memory, from this offset in BAR 4 */
    bool dm;
    uint64_t dm_offset;
    /*
     * 1.8: an on-demand paging MR (qhca-odp.c): its present pages, a
     * QhcaOdpPage each by page number; absent pages are not in the table.
     */
    bool odp;
    GHashTable *odp_pages;
    uint32_t index;             /* its handle, for page fault records */
} QhcaMr;

/*
 * 1.8: where an access met an absent page of an ODP MR (or, writing, a
 * page mapped read-only): what a page fault record needs.
 */
typedef struct QhcaOdpMiss {
    uint64_t addr;              /* MR address of the first absent byte */
    uint32_t length;            /* bytes of the access from there */
    uint32_t mr_index;
    uint64_t page;              /* the MR's page that holds addr */
    bool write;
} QhcaOdpMiss;

/*
 * 1.8: a QP's page fault of one kind (enum qhca_page_fault_kind).  While
 * pending, that side of the QP waits for RESUME_PAGE_FAULT.  After
 * RESUME FAILED, failed stays set until the access is tried again: if
 * the same page of the same access (tag: the WQE's SQ index for the
 * requester, the request's PSN for an RC responder, the receive WQE's
 * index for a UD or UC receive) is still absent, the access fails instead
 * of faulting again.
 */
typedef struct QhcaOdpFault {
    bool pending;
    bool failed;
    QhcaOdpMiss miss;
    uint32_t tag;
    uint32_t psn;               /* responder: the request's */
} QhcaOdpFault;

/* A memory window (1.2). */
typedef struct QhcaMw {
    uint32_t pdn;
    uint8_t type;               /* QHCA_MW_TYPE_* */
    uint8_t key;
    bool bound;
    bool has_mr;                /* bound to an MR, not zero-length alone */
    uint8_t access;             /* QHCA_ACCESS_REMOTE_* */
    uint32_t mr_index;          /* bound: its MR */
    uint64_t addr;
    uint64_t length;
} QhcaMw;

/* CQ arm states; the doorbell records one of them with its index. */
enum {
    QHCA_CQ_DISARMED = 0,
    QHCA_CQ_ARMED_NEXT,
    QHCA_CQ_ARMED_SOL,
};
#define QHCA_CQ_ARM_REQ_VALID   0x80000000u
#define QHCA_CQ_ARM_REQ_SOL     0x40000000u

typedef struct QhcaCq {
    uint32_t cqn;
    uint32_t uar;               /* racy */
    uint64_t ring;
    uint64_t dbrec;
    uint32_t entries;
    uint8_t depth_log2;
    uint32_t eqn;

    uint32_t pi;                /* CQEs written, free-running; racy */
    uint32_t ci;                /* consumer index last read from dbrec */
    uint32_t sol_pi;            /* index of the newest solicited/error CQE */
    bool has_sol;
    uint8_t armed;
    bool overrun;               /* in error: no more CQEs */
    uint32_t qp_refs;

    uint32_t arm_req;           /* atomic: from DB_CQ_ARM/_SOL */
    uint32_t kick;              /* atomic: queued for the engine */
} QhcaCq;

/* A multicast group (1.2): the UD QPs attached to one MGID. */
typedef struct QhcaMcast {
    uint8_t mgid[16];
    uint16_t mlid;
    uint8_t nqps;               /* 0: the slot is free */
    uint32_t qpn[QHCA_MAX_MCAST_QP_ATTACH];
} QhcaMcast;

/* The address vector of a UD send WQE, checked. */
typedef struct QhcaAv {
    uint32_t dest_qpn;
    uint32_t qkey;              /* resolved: never the "use the QP's" form */
    uint16_t dlid;
    uint8_t sl;
    uint8_t flags;              /* QHCA_AV_F_* */
    uint8_t dgid[16];
    uint32_t flow_label;
    uint8_t hop_limit;
    uint8_t tclass;
    uint8_t sgid_index;
    uint8_t dmac[6];            /* 1.5, Ethernet port: the next hop */
} QhcaAv;

/* BIND_MW and REG_MR: what the memory operation does (qhca-mw.c). */
typedef struct QhcaMemOp {
    uint64_t length;            /* of the window or of the registration */
    uint64_t pbl_addr;          /* REG_MR: its page list */
    uint32_t mr_lkey;           /* BIND_MW: the MR, or QHCA_BIND_NO_MR */
    uint32_t npages;            /* REG_MR */
    uint8_t access;
    uint8_t mw_type;            /* BIND_MW: QHCA_MW_TYPE_* */
    uint8_t page_shift;         /* REG_MR */
} QhcaMemOp;

/*
 * A send WQE, read from the SQ ring and checked once (qhca-wqe.c); the
 * requester keeps it in its window until it completes.
 */
typedef struct QhcaSwqe {
    const struct qhca_wr_info *info;    /* its opcode's row, never NULL */
    uint64_t wr_id;
    uint64_t remote_addr;       /* BIND_MW: window start; REG_MR: iova */
    uint64_t compare_add;
    uint64_t swap;
    uint32_t imm;
    /* The remote key; INV: the key to invalidate; BIND_MW, REG_MR: new */
    uint32_t rkey;
    uint32_t length;            /* message bytes */
    uint32_t first_psn;
    uint32_t npkts;             /* PSNs the message takes */
    uint32_t resp_pkts;         /* RDMA READ response packets received */
    uint16_t idx;               /* its SQ index */
    uint8_t opcode;             /* enum qhca_wr_opcode */
    uint8_t flags;              /* QHCA_WQE_F_* */
    uint8_t num_sge;
    uint8_t status;             /* enum qhca_wc_status, once known */
    uint32_t xrc_srqn;          /* XRC INI: the remote SRQ */
    uint32_t flush_len;         /* FLUSH (1.6): bytes of the range */
    uint8_t flush;              /* FLUSH: QHCA_FLUSH_TYPE | _LEVEL */
    bool started;               /* has its PSNs */
    bool done;                  /* response in, or failed */
    QhcaAv av;                  /* UD */
    QhcaMemOp mem;              /* BIND_MW, REG_MR */
    QhcaSge sge[QHCA_MAX_SGE];
} QhcaSwqe;

enum {
    QHCA_TIMER_NONE = 0,
    QHCA_TIMER_RETRY,           /* transport timer: no ACK in time */
    QHCA_TIMER_RNR,             /* waiting out an RNR NAK */
};

typedef struct QhcaRequester {
    QhcaSwqe *win;              /* win_size entries, by SQ index */
    uint32_t win_size;
    uint16_t cur;               /* SQ index of the WQE being sent */
    uint32_t cur_pkt;           /* its next packet */
    uint32_t next_psn;          /* PSN of the next WQE to start */
    uint32_t high_psn;          /* after the highest PSN sent */
    uint32_t una;               /* oldest unacknowledged PSN */
    uint32_t since_ack_req;     /* packets sent without AckReq */
    uint32_t rd_out;            /* READs and atomics awaiting a response */
    uint8_t retry_left;
    uint8_t rnr_left;
    bool halted;                /* a WQE failed: send nothing more */
    /* 1.8: a response faulted and was dropped: resume goes back to una */
    bool odp_rewind;
    uint8_t timer;              /* QHCA_TIMER_* */
    /* The transport timer fired late once: the next expiry counts. */
    bool timer_late;
    int64_t deadline;           /* of the timer, QEMU_CLOCK_VIRTUAL ns */
} QhcaRequester;

/* A receive WQE, read once (qhca-wqe.c), that the responder is filling. */
typedef struct QhcaRwqe {
    uint64_t wr_id;
    uint16_t idx;
    uint8_t num_sge;
    QhcaSge sge[QHCA_MAX_SGE];
} QhcaRwqe;

/* An RDMA READ or atomic the responder has executed and answers. */
typedef struct QhcaRdRes {
    uint8_t opcode;             /* the request's, to match duplicates */
    bool atomic;
    uint32_t psn;
    uint32_t npkts;
    uint32_t next;              /* READ: next response packet */
    uint64_t va;
    uint32_t rkey;
    uint32_t length;
    uint64_t orig;              /* atomic: the value before */
} QhcaRdRes;

typedef struct QhcaResponder {
    uint32_t epsn;              /* next PSN expected */
    uint32_t msn;
    bool nak_sent;              /* drop out-of-sequence packets quietly */

    /* The message being received. */
    bool in_send;
    bool in_write;
    bool drop_msg;              /* UC: dropping up to the next FIRST */
    bool have_rwqe;
    QhcaRwqe rwqe;
    uint32_t rcv_off;
    uint64_t wr_va;
    uint32_t wr_rkey;
    uint32_t wr_len;
    uint32_t wr_off;

    /* Responses, in PSN order: READ/atomic results, then one AETH. */
    QhcaRdRes res[QHCA_MAX_RD_ATOMIC];
    uint32_t res_head;          /* oldest kept, for duplicates */
    uint32_t res_send;          /* first with responses left to send */
    uint32_t res_tail;
    bool aeth_pending;
    uint8_t aeth_syndrome;
    uint32_t aeth_psn;
    /*
     * 1.8: a READ response met an absent page: answers stop until
     * RESUME_PAGE_FAULT, then go on from the one that faulted.
     */
    bool odp_wait;
} QhcaResponder;

/*
 * A shared receive queue (1.2).  Its doorbell only records the index in
 * db_pi; whoever takes a WQE (the engine, under the lock) applies it
 * first, so no FIFO entry is needed: a QP waiting for receive WQEs asks
 * again after its RNR timer anyway.
 */
#define QHCA_SRQ_DB_VALID       0x80000000u

typedef struct QhcaSrq {
    uint32_t srqn;
    uint32_t uar;               /* racy */
    uint32_t pdn;
    uint64_t ring;
    uint32_t entries;           /* racy */
    uint8_t depth_log2;
    uint8_t stride_log2;
    uint8_t state;              /* QHCA_SRQ_STATE_*; racy */
    uint8_t type;               /* enum qhca_srq_type */
    uint32_t xrcd;              /* XRC: its domain */
    uint32_t cqn;               /* XRC: the CQ of its receives */
    uint32_t limit;             /* armed limit, 0 if none */
    uint16_t pi;                /* producer index, applied */
    uint16_t ci;                /* WQEs taken; racy */
    uint32_t qp_refs;
    uint32_t db_pi;             /* atomic: QHCA_SRQ_DB_VALID | index */
} QhcaSrq;

/* Reasons a QP is handed to the engine (QhcaQp.kick). */
#define QHCA_KICK_SQ            0x1
#define QHCA_KICK_RQ            0x2
#define QHCA_KICK_TIMER         0x4

/* 1.5: SET_QP_AV, what a connected QP's frames carry on Ethernet. */
typedef struct QhcaRoceAv {
    bool valid;
    uint8_t sgid_index;
    uint8_t dgid[16];
    uint8_t dmac[6];
    uint8_t hop_limit;
    uint8_t traffic_class;
    uint32_t flow_label;
} QhcaRoceAv;

typedef struct QhcaQp {
    QhcaState *s;
    uint32_t qpn;
    uint32_t uar;               /* racy */
    uint32_t pdn;
    uint32_t send_cqn;
    uint32_t recv_cqn;
    uint8_t flags;              /* QHCA_QP_F_*; racy */
    uint8_t type;               /* enum qhca_qp_type */
    uint32_t srqn;              /* with QHCA_QP_F_SRQ; XRC TGT: current */
    uint32_t xrcd;              /* XRC TGT: its domain */
    bool srq_last_wqe;          /* in ERR: QP_LAST_WQE still to post */
    uint64_t sq_addr;
    uint64_t rq_addr;
    uint32_t sq_entries;        /* racy */
    uint32_t rq_entries;        /* racy */
    uint8_t sq_stride_log2;
    uint8_t rq_stride_log2;
    uint8_t sq_depth_log2;
    uint8_t rq_depth_log2;

    /* Attributes. */
    uint8_t state;              /* racy */
    uint8_t access;
    uint8_t path_mtu;
    uint8_t sl;
    uint16_t dlid;
    uint32_t dest_qpn;
    uint8_t timeout;
    uint8_t retry_cnt;
    uint8_t rnr_retry;
    uint8_t min_rnr_timer;
    uint8_t max_rd_atomic;
    uint8_t max_dest_rd_atomic;
    uint32_t qkey;              /* UD */
    QhcaRoceAv av;              /* 1.5: connected QPs on Ethernet */

    /* Rings: producer indices from doorbells, the device's own. */
    uint16_t sq_pi;
    uint16_t sq_comp;           /* oldest send WQE not completed; racy */
    uint16_t sq_next;           /* next send WQE to take */
    uint16_t rq_pi;
    uint16_t rq_ci;             /* receive WQEs consumed; racy */

    QhcaRequester req;
    QhcaResponder resp;
    QhcaOdpFault odp[QHCA_PAGE_FAULT_KINDS];   /* 1.8, qhca-odp.c */

    uint32_t db_sq_pi;          /* atomic: last DB_SQ index */
    uint32_t db_rq_pi;          /* atomic: last DB_RQ index */
    uint32_t kick;              /* atomic: QHCA_KICK_* */
    QEMUTimer timer;

    bool on_run_list;
    QTAILQ_ENTRY(QhcaQp) run;
    /* Waits for room in the Ethernet port's transmit queue. */
    bool on_tx_wait;
    QTAILQ_ENTRY(QhcaQp) tx_wait;
} QhcaQp;

typedef struct QhcaEngine {
    QemuThread thread;
    QemuEvent wake;
    bool running;
    bool stop;
    bool paused;                /* atomic: the VM is stopped */
    int64_t spin_ns;            /* engine thread only: spin before sleeping */
    VMChangeStateEntry *vmstate;

    /* Objects kicked by doorbells and timers, each queued at most once. */
    QemuSpin fifo_lock;
    uint32_t *fifo;
    uint32_t fifo_size;
    uint32_t fifo_head;
    uint32_t fifo_count;

    QTAILQ_HEAD(, QhcaQp) run;  /* QPs with work to do */
    QTAILQ_HEAD(, QhcaQp) tx_wait;      /* QPs stopped by a full tx queue */
    bool tx_room;               /* atomic: the tx queue drained since */
    QSIMPLEQ_HEAD(, QhcaPacket) wire;   /* packets in flight */
    QSIMPLEQ_HEAD(, QhcaPacket) free_pkts;

    QEMUBH *irq_bh;
    uint64_t irq_pending;       /* atomic: MSI-X vectors to signal */
} QhcaEngine;

/* FIFO entries: the object kind in the top bits, its number below. */
#define QHCA_FIFO_QP            0x00000000u
#define QHCA_FIFO_CQ            0x80000000u
#define QHCA_FIFO_NUM           0x7fffffffu

#endif /* HW_RDMA_QHCA_DP_H */
