/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qhca-fuzz's grammar of the 1.2 and 1.3 objects (see qhca-fuzz.c for
 * the runs and the base grammar): XRC domains, XRC SRQs and INI/TGT QPs
 * with xrc_srqn in their WQEs; memory windows, BIND_MW, window rkeys,
 * LOCAL_INV and SEND_WITH_INV; fast-reg MRs and REG_MR WQEs with their
 * page lists; multicast groups and UD sends to them; SRQ scenarios (QPs
 * on an SRQ with traffic, limits, RNR waits, SQD; lossy UC and RC).
 *
 * Each "build" action makes a whole working configuration (an XRC chain,
 * a window bound and used, a group with members) so that the data path
 * behind the commands runs, not only their checks; the other actions
 * then aim random WQEs at those objects.
 *
 * Fault injection, the link and the clock are in qhca-fuzz-faults.c.
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qhca-fuzz.h"

#define FZV_QKEY            0x11111111u

static const uint16_t fzv_mlids[FZ_NMCAST] = { 0xc001, 0xc002, 0xfffe };

static void fzv_mgid(unsigned g, uint8_t *mgid)
{
    memset(mgid, 0, 16);
    mgid[0] = 0xff;
    mgid[1] = 0x12;
    mgid[15] = 1 + g;
}

/* ------------------------------------------------------------------ */
/* The model                                                           */

void fzv_forget(Fz *f)
{
    memset(f->xrcd_live, 0, sizeof(f->xrcd_live));
    memset(f->mw_live, 0, sizeof(f->mw_live));
    memset(f->fr_live, 0, sizeof(f->fr_live));
    f->bind_key = 0;
}

uint32_t fzv_key(Fz *f)
{
    int m = fz_slot(f, f->mw_live, FZ_NMW, true);
    int r = fz_slot(f, f->fr_live, FZ_NFR, true);

    if (m >= 0 && (r < 0 || fz_chance(f, 50))) {
        return f->mw[m];
    }
    return r >= 0 ? f->fr[r] : f->phys_key;
}

uint32_t fzv_xrc_srqn(Fz *f)
{
    int i, start = fz_below(f, FZ_NSRQ);

    for (i = 0; i < FZ_NSRQ && fz_chance(f, 90); i++) {
        int j = (start + i) % FZ_NSRQ;

        if (f->srq_live[j] && f->srq[j].type == QHCA_SRQT_XRC) {
            return f->srq[j].srqn;
        }
    }
    return fz_srqn(f);
}

/* An admin command with @len bytes of payload, mutated if @mutate. */
static uint8_t fzv_submit(Fz *f, uint16_t op, void *payload, size_t len,
                          bool mutate, uint32_t *result)
{
    struct qhca_aq_sqe sqe = {
        .opcode = cpu_to_le16(op),
        .resp_addr = cpu_to_le64(f->t->resp),
        .resp_len = cpu_to_le32(4096),
    };
    uint32_t res = 0;
    uint8_t status;

    g_assert(op != QHCA_CMD_INJECT_FAULT);
    if (len) {
        memcpy(sqe.payload, payload, len);
    }
    if (mutate) {
        fz_mutate(f, sqe.payload, fz_chance(f, 80) && len ? len :
                  sizeof(sqe.payload));
    }
    status = qt_submit(f->t, &sqe, &res);
    fz_pair(f, "cmd", op, status);
    if (len) {
        memcpy(payload, sqe.payload, len);
    }
    if (result) {
        *result = res;
    }
    return status;
}

static uint8_t fzv_handle_cmd(Fz *f, uint16_t op, uint32_t handle)
{
    struct qhca_cmd_handle h = { .handle = cpu_to_le32(handle) };

    return fzv_submit(f, op, &h, sizeof(h), false, NULL);
}

/* A free slot of a table, making one by destroying a live object. */
static int fzv_free_qp_slot(Fz *f)
{
    int i = fz_slot(f, f->qp_live, FZ_NQP, false);

    if (i >= 0) {
        return i;
    }
    i = fz_below(f, FZ_NQP);
    if (fzv_handle_cmd(f, QHCA_CMD_DESTROY_QP, f->qp[i].qpn) !=
        QHCA_AQ_SUCCESS) {
        return -1;
    }
    f->qp_live[i] = false;
    fze_destroyed(f, f->qp[i].qpn);
    return i;
}

static int fzv_free_srq_slot(Fz *f)
{
    int i = fz_slot(f, f->srq_live, FZ_NSRQ, false);

    if (i >= 0) {
        return i;
    }
    i = fz_below(f, FZ_NSRQ);
    if (fzv_handle_cmd(f, QHCA_CMD_DESTROY_SRQ, f->srq[i].srqn) !=
        QHCA_AQ_SUCCESS) {
        return -1;
    }
    f->srq_live[i] = false;
    return i;
}

/* A live CQ (a new small one now and then, to overrun); -1 if none. */
static int fzv_cq(Fz *f)
{
    int i = fz_slot(f, f->cq_live, FZ_NCQ, true);
    int j;

    if (i >= 0 && fz_chance(f, 75)) {
        return i;
    }
    j = fz_slot(f, f->cq_live, FZ_NCQ, false);
    if (j >= 0 && hx_create_cq(&f->h, &f->cq[j], 1 + fz_below(f, 5)) ==
        QHCA_AQ_SUCCESS) {
        f->cq_live[j] = true;
        fz_pair(f, "cmd", QHCA_CMD_CREATE_CQ, QHCA_AQ_SUCCESS);
        return j;
    }
    return i;
}

static int fzv_xrcd(Fz *f)
{
    int i = fz_slot(f, f->xrcd_live, FZ_NXRCD, true);
    int j;
    uint32_t xrcd;

    if (i >= 0 && fz_chance(f, 70)) {
        return i;
    }
    j = fz_slot(f, f->xrcd_live, FZ_NXRCD, false);
    if (j >= 0 && fzv_submit(f, QHCA_CMD_ALLOC_XRCD, NULL, 0, false,
                             &xrcd) == QHCA_AQ_SUCCESS) {
        f->xrcd[j] = xrcd;
        f->xrcd_live[j] = true;
        return j;
    }
    return i;
}

/*
 * A QP of @type in a free slot: RC, UC and UD with both rings (or on SRQ
 * slot @srq), XRC INI with an SQ only, XRC TGT of domain @xrcd with none.
 * Returns the slot, -1 if the device refused.
 */
static int fzv_new_qp(Fz *f, uint8_t type, int srq, uint32_t xrcd, int cq)
{
    QhcaTest *t = f->t;
    QhcaQpSpec s = { .type = type };
    struct qhca_cmd_create_qp c;
    uint8_t sqd = 2 + fz_below(f, 4), sqs = 7 + fz_below(f, 2);
    uint8_t rqd = 2 + fz_below(f, 4), rqs = 6;
    int slot = fzv_free_qp_slot(f);
    QhcaQp qp = { 0 };
    uint32_t qpn;

    if (slot < 0 || cq < 0) {
        return -1;
    }
    if (type != QHCA_QPT_XRC_TGT) {
        s.pdn = f->h.pdn;
        s.uar = f->h.uar;
        s.send_cqn = f->cq[cq].cqn;
        s.sq_log2 = sqd;
        s.sq_stride_log2 = sqs;
        s.flags = fz_chance(f, 30) ? QHCA_QP_F_SQ_SIG_ALL : 0;
    } else {
        s.pdn = xrcd;
    }
    if (type != QHCA_QPT_XRC_TGT && type != QHCA_QPT_XRC_INI) {
        s.recv_cqn = f->cq[cq].cqn;
        if (srq >= 0) {
            s.srq = &f->srq[srq];
        } else {
            s.rq_log2 = rqd;
            s.rq_stride_log2 = rqs;
        }
    }
    c = qt_qp_prepare(t, &qp, &s);
    if (fzv_submit(f, QHCA_CMD_CREATE_QP, &c, sizeof(c), false, &qpn) !=
        QHCA_AQ_SUCCESS) {
        return -1;
    }
    qp.qpn = qpn;
    f->qp[slot] = qp;
    f->qp_live[slot] = true;
    f->qp_type[slot] = type;
    f->qp_srq[slot] = srq >= 0 && type != QHCA_QPT_XRC_TGT &&
                      type != QHCA_QPT_XRC_INI;
    return slot;
}

/* An SRQ of @type (XRC: of domain @xrcd, completing to CQ slot @cq). */
static int fzv_new_srq(Fz *f, uint8_t type, uint32_t xrcd, int cq)
{
    QhcaTest *t = f->t;
    uint8_t depth = 2 + fz_below(f, 4), stride = 5 + fz_below(f, 2);
    int slot = fzv_free_srq_slot(f);
    QhcaSrq q;
    struct qhca_cmd_create_srq c;
    uint32_t srqn;

    if (slot < 0 || (type == QHCA_SRQT_XRC && cq < 0)) {
        return -1;
    }
    c = qt_srq_prepare(t, &q, f->h.pdn, f->h.uar, depth, stride);
    q.type = c.type = type;
    c.limit = cpu_to_le32(fz_chance(f, 50) ? fz_below(f, q.entries + 1) : 0);
    if (type == QHCA_SRQT_XRC) {
        c.xrcd = cpu_to_le32(xrcd);
        c.cqn = cpu_to_le32(f->cq[cq].cqn);
    }
    if (fzv_submit(f, QHCA_CMD_CREATE_SRQ, &c, sizeof(c), false, &srqn) !=
        QHCA_AQ_SUCCESS) {
        return -1;
    }
    q.srqn = srqn;
    f->srq[slot] = q;
    f->srq_live[slot] = true;
    return slot;
}

/* Post @n receive WQEs of one good SGE on SRQ slot @s, one doorbell. */
static void fzv_srq_fill(Fz *f, int s, unsigned n)
{
    QhcaSrq *q = &f->srq[s];
    unsigned k;

    for (k = 0; k < n; k++) {
        struct qhca_rq_wqe w = {
            .wr_id = cpu_to_le64(f->steps),
            /* Now and then more SGEs than the stride holds. */
            .num_sge = fz_chance(f, 5) ? 1 + fz_below(f, 255) : 1,
        };
        struct qhca_sge sge = {
            .addr = cpu_to_le64(f->scratch + 4096 * fz_below(f, 128)),
            .length = cpu_to_le32(4096),
            .lkey = cpu_to_le32(f->phys_key),
        };
        qt_write_wqe(f->t, qt_srq_slot(q, q->pi), &w, sizeof(w), &sge, 1);
        q->pi++;
    }
    if (fz_chance(f, 8)) {
        /*
         * An index behind the one applied (QUERY_SRQ applies it): the
         * doorbell takes it, the device refuses it when it applies it.
         */
        struct qhca_cmd_handle h = { .handle = cpu_to_le32(q->srqn) };
        struct qhca_srq_attr attr;
        uint16_t idx[2] = { q->pi, q->pi - 1 - fz_below(f, 2) };
        int k2;

        for (k2 = 0; k2 < 2; k2++) {
            qt_db_write(f->t, f->h.uar, QHCA_DB_SRQ, q->srqn << 16 | idx[k2]);
            fz_pair(f, "cmd", QHCA_CMD_QUERY_SRQ,
                    qt_query(f->t, QHCA_CMD_QUERY_SRQ, &h, sizeof(h), &attr,
                             sizeof(attr)));
        }
    }
    qt_db_write(f->t, f->h.uar, QHCA_DB_SRQ, q->srqn << 16 |
          (fz_chance(f, 3) ? (uint16_t)(q->pi + q->entries + 1) : q->pi));
}

/*
 * The first PSN QP @qpn sends, which its peer expects: both sides of a
 * connection agree, close to the 24-bit wrap so that it is crossed.
 */
static uint32_t fzv_psn(uint32_t qpn)
{
    return (0xfffff0 + 3 * qpn) & 0xffffff;
}

/*
 * RESET -> INIT -> RTR -> RTS of QP slot @a towards QP number @dest, with
 * random transport timers (short: link-down runs must end); the first
 * failing status.
 */
static uint8_t fzv_connect(Fz *f, int a, uint32_t dest)
{
    QhcaQp *qp = &f->qp[a];
    uint8_t type = f->qp_type[a];
    bool ud = type == QHCA_QPT_UD, uc = type == QHCA_QPT_UC;
    uint32_t rtr = QHCA_QP_ATTR_PATH | QHCA_QP_ATTR_DEST_QPN |
                   QHCA_QP_ATTR_RQ_PSN;
    uint32_t rts = QHCA_QP_ATTR_SQ_PSN;
    struct qhca_cmd_modify_qp m[4];
    uint8_t status = QHCA_AQ_SUCCESS;
    int i;

    if (type == QHCA_QPT_RC || type == QHCA_QPT_XRC_TGT) {
        rtr |= QHCA_QP_ATTR_MAX_DEST_RD_ATOMIC | QHCA_QP_ATTR_MIN_RNR_TIMER;
    }
    if (type == QHCA_QPT_RC || type == QHCA_QPT_XRC_INI) {
        rts |= QHCA_QP_ATTR_TIMEOUT | QHCA_QP_ATTR_RETRY_CNT |
               QHCA_QP_ATTR_RNR_RETRY | QHCA_QP_ATTR_MAX_RD_ATOMIC;
    } else if (type == QHCA_QPT_XRC_TGT) {
        rts |= QHCA_QP_ATTR_TIMEOUT;
    }
    memset(m, 0, sizeof(m));
    m[0].attr_mask = cpu_to_le32(QHCA_QP_ATTR_STATE);
    m[0].state = QHCA_QPS_RESET;
    m[1].attr_mask = cpu_to_le32(QHCA_QP_ATTR_STATE |
                                 (ud ? QHCA_QP_ATTR_QKEY :
                                       QHCA_QP_ATTR_ACCESS));
    m[1].state = QHCA_QPS_INIT;
    m[1].access = uc ? QHCA_ACCESS_REMOTE_WRITE :
                  QHCA_ACCESS_REMOTE_WRITE | QHCA_ACCESS_REMOTE_READ |
                  QHCA_ACCESS_REMOTE_ATOMIC | QHCA_ACCESS_FLUSH_GLOBAL;
    m[1].qkey = cpu_to_le32(FZV_QKEY);
    m[2].attr_mask = cpu_to_le32(QHCA_QP_ATTR_STATE | (ud ? 0 : rtr));
    m[2].state = QHCA_QPS_RTR;
    m[2].dlid = cpu_to_le16(f->eth ? 0 : QT_LID);
    m[2].path_mtu = 1 + fz_below(f, 5);
    m[2].dest_qpn = cpu_to_le32(dest);
    m[2].rq_psn = cpu_to_le32(fzv_psn(dest));
    m[2].max_dest_rd_atomic = 1 + fz_below(f, 4);
    /* 1 .. 3: 0.01 .. 0.03 ms (0 would be 655 ms). */
    m[2].min_rnr_timer = 1 + fz_below(f, 3);
    m[3].attr_mask = cpu_to_le32(QHCA_QP_ATTR_STATE | rts);
    m[3].state = QHCA_QPS_RTS;
    m[3].sq_psn = cpu_to_le32(fzv_psn(qp->qpn));
    m[3].timeout = 6 + fz_below(f, 6);
    m[3].retry_cnt = fz_below(f, 8);
    m[3].rnr_retry = fz_below(f, 8);
    m[3].max_rd_atomic = 1 + fz_below(f, 4);
    for (i = 0; i < 4 && status == QHCA_AQ_SUCCESS; i++) {
        m[i].qpn = cpu_to_le32(qp->qpn);
        status = qt_cmd(f->t, QHCA_CMD_MODIFY_QP, &m[i], sizeof(m[i]), NULL);
        if (i == 0 && f->eth && !ud && status == QHCA_AQ_SUCCESS) {
            /* On Ethernet the peer's address comes first (RESET drops it). */
            status = fze_av(f, a, dest);
        }
    }
    qp->sq_pi = qp->rq_pi = 0;
    fz_pair(f, "fzv-connect", type, status);
    return status;
}

/* Receives on QP slot @i: its RQ, or its SRQ. */
static void fzv_recvs(Fz *f, int i, unsigned n)
{
    QhcaQp *qp = &f->qp[i];
    unsigned k;

    for (k = 0; k < n && qp->rq_entries; k++) {
        struct qhca_sge sge = {
            .addr = cpu_to_le64(f->scratch + 4096 * fz_below(f, 128)),
            .length = cpu_to_le32(4096),
            .lkey = cpu_to_le32(f->phys_key),
        };

        if (fz_chance(f, 4)) {
            /* A header claiming more SGEs than the stride holds. */
            struct qhca_rq_wqe h = { .num_sge = 5 + fz_below(f, 250) };

            qtest_memwrite(f->t->qts, qt_qp_rq_slot(qp, qp->rq_pi), &h,
                           sizeof(h));
            qp->rq_pi++;
            qt_db_write(f->t, qp->uar, QHCA_DB_RQ, qp->qpn << 16 | qp->rq_pi);
            continue;
        }
        qt_qp_post_recv(f->t, qp, f->steps, &sge, 1);
    }
}

/*
 * A send WQE of @opcode on QP slot @i: one good SGE of @len bytes, the
 * remote side at @raddr/@rkey.  Rung at once unless @ring is false.
 */
static void fzv_post(Fz *f, int i, uint8_t opcode, uint32_t len,
                     uint64_t raddr, uint32_t rkey, uint32_t xrc_srqn,
                     bool ring)
{
    QhcaQp *qp = &f->qp[i];
    struct qhca_sq_wqe w = {
        .wr_id = cpu_to_le64(f->steps),
        .opcode = opcode,
        .flags = QHCA_WQE_F_SIGNALED,
        .num_sge = 1,
        .remote_addr = cpu_to_le64(raddr),
        .rkey = cpu_to_le32(rkey),
        .compare_add = cpu_to_le64(1),
        .xrc_srqn = cpu_to_le32(xrc_srqn),
    };
    struct qhca_sge sge = {
        .addr = cpu_to_le64(f->scratch + 8 * fz_below(f, FZ_SCRATCH / 16)),
        .length = cpu_to_le32(len),
        .lkey = cpu_to_le32(f->phys_key),
    };

    if (!qp->sq_entries) {
        return;
    }
    if (qt_wr_is(opcode, QHCA_WR_F_ATOMIC) ||
        opcode == QHCA_WR_ATOMIC_WRITE) {
        sge.length = cpu_to_le32(8);
        sge.addr = cpu_to_le64(le64_to_cpu(sge.addr) & ~7ull);
    }
    if (opcode == QHCA_WR_FLUSH) {
        /* 1.6: no data; a GLOBAL flush of the range, or of the MR. */
        w.num_sge = 0;
        w.flush = QHCA_FLUSH_GLOBAL | fz_below(f, 2) << QHCA_FLUSH_LEVEL_SHIFT;
        w.flush_len = cpu_to_le32(len);
    }
    qt_qp_post_send(f->t, qp, &w, &sge, 1);
    if (ring) {
        qt_qp_ring_sq(f->t, qp);
    }
}

/*
 * An address outside RAM (past its end, the BARs, past 2^64), for page
 * lists: a page there is refused or fails at DMA, but no fast-reg MR may
 * ever map RAM the fuzzer does not own (the admin rings).
 */
static uint64_t fzv_far_addr(Fz *f)
{
    switch (fz_below(f, 4)) {
    case 0:
        return RAM_END + 4096 * fz_below(f, 16);
    case 1:
        return f->t->bar0.addr & ~4095ull;
    case 2:
        return -4096ull * (1 + fz_below(f, 4));
    default:
        return fz_interesting(f) | RAM_END << 4;
    }
}

/* A page list of @n pages: scratch pages, now and then one elsewhere. */
static uint64_t fzv_page_list(Fz *f, uint32_t n)
{
    uint64_t pbl = guest_alloc(&f->t->alloc, 8 * n);
    uint32_t k;

    for (k = 0; k < n; k++) {
        uint64_t pa = cpu_to_le64(fz_chance(f, 97) ?
                                  f->scratch + 4096 * fz_below(f, 255) :
                                  fzv_far_addr(f) & ~4095ull);

        qtest_memwrite(f->t->qts, pbl + 8 * k, &pa, 8);
    }
    return pbl;
}

/* A remote address in the upper half of scratch, under any key there. */
static uint64_t fzv_raddr(Fz *f)
{
    return f->scratch + FZ_SCRATCH / 2 + 8 * fz_below(f, FZ_SCRATCH / 64);
}

/*
 * MODIFY_SRQ MAX_WR (1.6) of SRQ slot @s to 2 .. 64 WQEs, now and then a
 * ring outside RAM, while the engine may be taking its WQEs; the slot
 * follows a success.
 */
static void fzv_resize_srq(Fz *f, int s, bool mutate)
{
    QhcaSrq *srq = &f->srq[s];
    uint8_t depth = 1 + fz_below(f, 6);
    struct qhca_cmd_modify_srq m = {
        .srqn = cpu_to_le32(srq->srqn),
        .attr_mask = cpu_to_le32(QHCA_SRQ_ATTR_MAX_WR),
        .ring_addr = cpu_to_le64(fz_chance(f, 95) ?
                                 guest_alloc(&f->t->alloc,
                                             (uint64_t)srq->stride << depth) :
                                 fzv_far_addr(f)),
        .depth_log2 = depth,
    };

    if (fz_chance(f, 20)) {
        m.attr_mask |= cpu_to_le32(QHCA_SRQ_ATTR_LIMIT);
        m.limit = cpu_to_le32(fz_below(f, 70));
    }
    if (fzv_submit(f, QHCA_CMD_MODIFY_SRQ, &m, sizeof(m), mutate, NULL) ==
        QHCA_AQ_SUCCESS && le32_to_cpu(m.srqn) == srq->srqn &&
        (le32_to_cpu(m.attr_mask) & QHCA_SRQ_ATTR_MAX_WR)) {
        srq->ring = le64_to_cpu(m.ring_addr);
        srq->entries = 1u << m.depth_log2;
    }
}

/*
 * REREG_MR (1.6): a page-list MR of its own, re-registered with a random
 * mask (a new page list, the other PD, new access), often mutated; now
 * and then the command aims at another MR (physical, fast-reg, none).
 * The MR goes again, whatever the rereg did.
 */
static void fzv_rereg_mr(Fz *f, bool mutate)
{
    uint32_t n = 1 + fz_below(f, 4), n2 = 1 + fz_below(f, 6);
    struct qhca_cmd_reg_mr r = {
        .iova = cpu_to_le64(0x40000000ull + 512 * fz_below(f, 8)),
        .length = cpu_to_le64(4096ull * n - 4096 + 1 + fz_below(f, 3584)),
        .pbl_addr = cpu_to_le64(fzv_page_list(f, n)),
        .pdn = cpu_to_le32(f->h.pdn),
        .npages = cpu_to_le32(n),
        .access = QHCA_ACCESS_LOCAL_WRITE | QHCA_ACCESS_REMOTE_WRITE,
        .key = fz_below(f, 256),
        .page_shift = 12,
    };
    struct qhca_cmd_rereg_mr c = { .mask = 1 + fz_below(f, 7) };
    uint32_t index;

    /* The iova's offset into its page may need one page more. */
    if ((le64_to_cpu(r.iova) & 4095) + le64_to_cpu(r.length) > 4096ull * n) {
        r.length = cpu_to_le64(4096ull * n - (le64_to_cpu(r.iova) & 4095));
    }
    if (fzv_submit(f, QHCA_CMD_REG_MR, &r, sizeof(r), false, &index) !=
        QHCA_AQ_SUCCESS) {
        return;
    }
    c.index = cpu_to_le32(fz_chance(f, 85) ? index :
                          fz_chance(f, 50) ? f->phys_key >> 8 :
                          fz_interesting(f));
    if (c.mask & QHCA_REREG_TRANSLATION) {
        c.iova = cpu_to_le64(fz_interesting(f) & ~4095ull);
        c.length = cpu_to_le64(4096ull * n2);
        c.pbl_addr = cpu_to_le64(fzv_page_list(f, n2));
        c.npages = cpu_to_le32(n2);
        c.page_shift = 12;
    }
    if (c.mask & QHCA_REREG_PD) {
        c.pdn = cpu_to_le32(fz_handle(f, f->pd, f->pd_live, FZ_NH));
    }
    if (c.mask & QHCA_REREG_ACCESS) {
        c.access = fz_below(f, 0x80);
    }
    fzv_submit(f, QHCA_CMD_REREG_MR, &c, sizeof(c), mutate, NULL);
    fzv_handle_cmd(f, QHCA_CMD_DEREG_MR, index);
}

/* ------------------------------------------------------------------ */
/* Builds: whole configurations, then traffic through them             */

/* An RC QP on an SRQ, fed and sent to; limits, RNR waits, SQD, ERR. */
static void fzv_build_srq(Fz *f)
{
    int cq = fzv_cq(f);
    int s = fzv_new_srq(f, QHCA_SRQT_BASIC, 0, cq);
    int a, b;
    unsigned k, n;

    if (s < 0) {
        return;
    }
    a = fzv_new_qp(f, QHCA_QPT_RC, s, 0, cq);
    b = fzv_new_qp(f, QHCA_QPT_RC, -1, 0, fzv_cq(f));
    if (a < 0 || b < 0 || fzv_connect(f, a, f->qp[b].qpn) ||
        fzv_connect(f, b, f->qp[a].qpn)) {
        return;
    }
    n = 1 + fz_below(f, 6);
    if (fz_chance(f, 70)) {
        fzv_srq_fill(f, s, fz_below(f, 4));
    }
    if (fz_chance(f, 10)) {
        /* The QP then fails to take a WQE from an SRQ in error. */
        fzv_inject(f, QHCA_FAULT_SRQ_ERR, f->srq[s].srqn);
    }
    if (fz_chance(f, 30)) {
        struct qhca_cmd_modify_srq m = {
            .srqn = cpu_to_le32(f->srq[s].srqn),
            .attr_mask = cpu_to_le32(QHCA_SRQ_ATTR_LIMIT),
            .limit = cpu_to_le32(fz_below(f, f->srq[s].entries + 1)),
        };

        fzv_submit(f, QHCA_CMD_MODIFY_SRQ, &m, sizeof(m), fz_chance(f, 20),
                   NULL);
    }
    for (k = 0; k < n; k++) {
        /* Up to 4 KiB: many packets at a small MTU, to stop midway. */
        fzv_post(f, b, fz_chance(f, 80) ? QHCA_WR_SEND :
                 QHCA_WR_RDMA_WRITE_WITH_IMM, fz_below(f, 4097),
                 fzv_raddr(f), f->phys_key, 0, false);
    }
    qt_qp_ring_sq(f->t, &f->qp[b]);
    if (fz_chance(f, 25)) {
        /* Resized while the sends take its WQEs (1.6). */
        fzv_resize_srq(f, s, fz_chance(f, 20));
    }
    if (fz_chance(f, 30)) {
        /* The sends wait on RNR; a WQE arrives later (RNR done). */
        g_usleep(500);
        fzv_srq_fill(f, s, n);
        fzv_clock(f);
    }
    if (fz_chance(f, 20)) {
        /* SQD with work outstanding; or the SRQ QP to ERR mid-way. */
        struct qhca_cmd_modify_qp m = {
            .attr_mask = cpu_to_le32(QHCA_QP_ATTR_STATE),
            .state = fz_chance(f, 50) ? QHCA_QPS_SQD : QHCA_QPS_ERR,
        };

        m.qpn = cpu_to_le32(f->qp[m.state == QHCA_QPS_SQD ? b : a].qpn);
        fz_pair(f, "fzv-state", m.state,
                qt_cmd(f->t, QHCA_CMD_MODIFY_QP, &m, sizeof(m), NULL));
    }
    if (fz_chance(f, 20)) {
        struct qhca_cmd_handle h = { .handle = cpu_to_le32(f->srq[s].srqn) };
        struct qhca_srq_attr attr;

        fz_pair(f, "cmd", QHCA_CMD_QUERY_SRQ,
                qt_query(f->t, QHCA_CMD_QUERY_SRQ, &h, sizeof(h), &attr,
                         sizeof(attr)));
    }
}

/* A domain, an XRC SRQ, a TGT QP and an INI QP, and sends through them. */
static void fzv_build_xrc(Fz *f)
{
    int x = fzv_xrcd(f), cq = fzv_cq(f), s, tgt, ini;
    unsigned k, n = 1 + fz_below(f, 4);

    if (x < 0 || cq < 0) {
        return;
    }
    s = fzv_new_srq(f, QHCA_SRQT_XRC, f->xrcd[x], cq);
    tgt = fzv_new_qp(f, QHCA_QPT_XRC_TGT, -1, f->xrcd[x], cq);
    ini = fzv_new_qp(f, QHCA_QPT_XRC_INI, -1, 0, fzv_cq(f));
    if (s < 0 || tgt < 0 || ini < 0 ||
        fzv_connect(f, tgt, f->qp[ini].qpn) ||
        fzv_connect(f, ini, f->qp[tgt].qpn)) {
        return;
    }
    fzv_srq_fill(f, s, fz_below(f, n + 2));
    for (k = 0; k < n; k++) {
        static const uint8_t ops[] = {
            QHCA_WR_SEND, QHCA_WR_SEND_WITH_IMM, QHCA_WR_RDMA_WRITE,
            QHCA_WR_RDMA_WRITE_WITH_IMM, QHCA_WR_RDMA_READ,
            QHCA_WR_ATOMIC_FETCH_AND_ADD,
        };
        /* Mostly the SRQ of the chain; sometimes any SRQ number. */
        uint32_t srqn = fz_chance(f, 80) ? f->srq[s].srqn : fzv_xrc_srqn(f);

        fzv_post(f, ini, ops[fz_below(f, ARRAY_SIZE(ops))],
                 fz_below(f, 3000), fzv_raddr(f), f->phys_key, srqn, false);
    }
    qt_qp_ring_sq(f->t, &f->qp[ini]);
    if (fz_chance(f, 15)) {
        /* The TGT QP to ERR: its receive flushes to the SRQ's CQ. */
        struct qhca_cmd_modify_qp m = {
            .qpn = cpu_to_le32(f->qp[tgt].qpn),
            .attr_mask = cpu_to_le32(QHCA_QP_ATTR_STATE),
            .state = QHCA_QPS_ERR,
        };

        g_usleep(200);
        fz_pair(f, "fzv-state", m.state,
                qt_cmd(f->t, QHCA_CMD_MODIFY_QP, &m, sizeof(m), NULL));
    }
    if (fz_chance(f, 10)) {
        struct qhca_cmd_handle h = { .handle = cpu_to_le32(f->qp[tgt].qpn) };
        struct qhca_qp_attr a;

        fz_pair(f, "cmd", QHCA_CMD_QUERY_QP,
                qt_query(f->t, QHCA_CMD_QUERY_QP, &h, sizeof(h), &a,
                         sizeof(a)));
    }
}

/* UD QPs in a multicast group, receives posted, a send to the group. */
static void fzv_build_mcast(Fz *f)
{
    unsigned g = fz_below(f, FZ_NMCAST), k, n = 1 + fz_below(f, 3);
    int cq = fzv_cq(f), qps[3], nq = 0, i;
    uint8_t buf[256] = { 0 };
    struct qhca_sq_wqe_ud *u = (void *)buf;
    struct qhca_sge *sge = (void *)(buf + sizeof(*u));

    for (k = 0; k < n; k++) {
        int q = fzv_new_qp(f, QHCA_QPT_UD, -1, 0, cq);
        struct qhca_cmd_mcast m = {
            .mlid = cpu_to_le16(fzv_mlids[g]),
        };

        if (q < 0 || fzv_connect(f, q, 0)) {
            continue;
        }
        m.qpn = cpu_to_le32(f->qp[q].qpn);
        fzv_mgid(g, m.mgid);
        if (fzv_submit(f, QHCA_CMD_ATTACH_MCAST, &m, sizeof(m),
                       fz_chance(f, 15), NULL) == QHCA_AQ_SUCCESS) {
            qps[nq++] = q;
            fzv_recvs(f, q, 1 + fz_below(f, 2));
        }
    }
    if (!nq) {
        return;
    }
    i = qps[fz_below(f, nq)];
    u->wr_id = cpu_to_le64(f->steps);
    u->opcode = fz_chance(f, 70) ? QHCA_WR_SEND : QHCA_WR_SEND_WITH_IMM;
    u->flags = QHCA_WQE_F_SIGNALED;
    u->num_sge = 1;
    u->dest_qpn = cpu_to_le32(fz_chance(f, 90) ? QHCA_UD_QPN_MASK :
                              fz_qpn(f));
    u->qkey = cpu_to_le32(fz_chance(f, 70) ? FZV_QKEY :
                          (fz_chance(f, 50) ? 0x80000000u :
                           (uint32_t)fz_interesting(f)));
    u->dlid = cpu_to_le16(fz_chance(f, 85) ? fzv_mlids[g] :
                          fzv_mlids[fz_below(f, FZ_NMCAST)]);
    u->av_flags = fz_chance(f, 90) ? QHCA_AV_F_GRH : 0;
    fzv_mgid(fz_chance(f, 85) ? g : fz_below(f, FZ_NMCAST), u->dgid);
    u->hop_limit = 64;
    sge->addr = cpu_to_le64(f->scratch + 4096 * fz_below(f, 128));
    sge->length = cpu_to_le32(fz_below(f, 2048));
    sge->lkey = cpu_to_le32(f->phys_key);
    if (fz_chance(f, 10)) {
        fz_mutate(f, buf, sizeof(*u));
    }
    qt_qp_post_send(f->t, &f->qp[i], (void *)u, sge, 1);
    qt_qp_ring_sq(f->t, &f->qp[i]);
    if (fz_chance(f, 25)) {
        /* Leave the group again (or fail to: not attached). */
        struct qhca_cmd_mcast m = { .mlid = cpu_to_le16(fzv_mlids[g]) };

        g_usleep(200);
        m.qpn = cpu_to_le32(f->qp[qps[fz_below(f, nq)]].qpn);
        fzv_mgid(g, m.mgid);
        fzv_submit(f, QHCA_CMD_DETACH_MCAST, &m, sizeof(m), false, NULL);
    }
}

/* An MR with MW_BIND, for windows to be bound to. */
static uint32_t fzv_bind_mr(Fz *f)
{
    struct qhca_cmd_reg_mr c = {
        .length = cpu_to_le64(RAM_END),
        .pdn = cpu_to_le32(f->h.pdn),
        .access = QHCA_ACCESS_MR_ALL,
        .key = 0x3c,
        .page_shift = 12,
        .flags = QHCA_MR_F_PHYS,
    };
    uint32_t index;

    if (!f->bind_key &&
        fzv_submit(f, QHCA_CMD_REG_MR, &c, sizeof(c), false, &index) ==
        QHCA_AQ_SUCCESS) {
        f->bind_key = index << 8 | c.key;
    }
    return f->bind_key;
}

/* A connected RC QP pair from the model; false if none. */
static bool fzv_rc_pair(Fz *f, int *a, int *b)
{
    int i;

    for (i = 0; i < FZ_NQP; i++) {
        int j = (f->steps + i) % FZ_NQP;

        struct qhca_cmd_handle h = { .handle = cpu_to_le32(f->qp[j].qpn) };
        struct qhca_qp_attr attr;

        if (f->qp_live[j] && f->qp_type[j] == QHCA_QPT_RC &&
            !f->qp_srq[j] &&
            qt_query(f->t, QHCA_CMD_QUERY_QP, &h, sizeof(h), &attr,
                     sizeof(attr)) == QHCA_AQ_SUCCESS &&
            attr.state == QHCA_QPS_RTS) {
            *a = j;
            break;
        }
    }
    if (i == FZ_NQP) {
        /* Make one, connected to itself. */
        *a = fzv_new_qp(f, QHCA_QPT_RC, -1, 0, fzv_cq(f));
        if (*a < 0 || fzv_connect(f, *a, f->qp[*a].qpn)) {
            return false;
        }
    }
    *b = *a;
    return true;
}

/*
 * A window (new or live), bound by a BIND_MW WQE, then used by RDMA with
 * its key; LOCAL_INV or SEND_WITH_INV of it, or of a fast-reg MR.
 */
static void fzv_build_mw(Fz *f)
{
    int a, b, w = fz_slot(f, f->mw_live, FZ_NMW, true);
    uint32_t mr = fzv_bind_mr(f);
    struct qhca_sq_wqe_bind bw = { 0 };
    uint8_t key = fz_below(f, 256);
    uint64_t addr = fzv_raddr(f) & ~4095ull;

    if (!mr || !fzv_rc_pair(f, &a, &b)) {
        return;
    }
    if (w < 0 || fz_chance(f, 40)) {
        struct qhca_cmd_alloc_mw c = {
            .pdn = cpu_to_le32(f->h.pdn),
            .type = fz_chance(f, 50) ? QHCA_MW_TYPE_1 : QHCA_MW_TYPE_2,
        };
        uint32_t index;
        int slot = fz_slot(f, f->mw_live, FZ_NMW, false);

        if (slot < 0) {
            slot = fz_below(f, FZ_NMW);
            fzv_handle_cmd(f, QHCA_CMD_DEALLOC_MW,
                           (f->mw[slot] & QHCA_MKEY_MW_INDEX) >> 8);
            f->mw_live[slot] = false;
        }
        if (fzv_submit(f, QHCA_CMD_ALLOC_MW, &c, sizeof(c), false, &index) !=
            QHCA_AQ_SUCCESS) {
            return;
        }
        w = slot;
        f->mw[w] = QHCA_MKEY_MW | index << 8;
        f->mw_type[w] = c.type;
        f->mw_live[w] = true;
    }
    bw.wr_id = cpu_to_le64(f->steps);
    bw.opcode = QHCA_WR_BIND_MW;
    bw.flags = QHCA_WQE_F_SIGNALED |
               (fz_chance(f, 20) ? QHCA_WQE_F_FENCE : 0);
    bw.mw_key = cpu_to_le32((f->mw[w] & ~QHCA_MKEY_KEY) | key);
    bw.addr = cpu_to_le64(addr);
    bw.mr_lkey = cpu_to_le32(fz_chance(f, 90) ? mr : fz_key(f));
    bw.access = QHCA_ACCESS_REMOTE_WRITE | QHCA_ACCESS_REMOTE_READ |
                (fz_chance(f, 50) ? QHCA_ACCESS_REMOTE_ATOMIC : 0);
    bw.mw_type = f->mw_type[w];
    bw.length = cpu_to_le64(fz_chance(f, 90) ? 4096 * (1 + fz_below(f, 8)) :
                            fz_interesting(f));
    if (fz_chance(f, 10)) {
        bw.mr_lkey = cpu_to_le32(QHCA_BIND_NO_MR);
        bw.length = 0;
    }
    if (fz_chance(f, 15)) {
        fz_mutate(f, &bw, sizeof(bw));
    }
    qt_qp_post_send(f->t, &f->qp[a], (void *)&bw, NULL, 0);
    /* The model follows the key whatever the bind's fate. */
    f->mw[w] = (f->mw[w] & ~QHCA_MKEY_KEY) | key;
    /* Through the window: writes, reads and atomics at its start. */
    fzv_post(f, a, fz_chance(f, 50) ? QHCA_WR_RDMA_WRITE :
             fz_chance(f, 60) ? QHCA_WR_RDMA_READ :
             QHCA_WR_ATOMIC_FETCH_AND_ADD, fz_below(f, 4096),
             addr + 8 * fz_below(f, 16), f->mw[w], 0, false);
    if (fz_chance(f, 50)) {
        /* Invalidate it (type 1: LOC_QP_OP_ERR), locally or remotely. */
        fzv_recvs(f, b, 1);
        fzv_post(f, a, fz_chance(f, 50) ? QHCA_WR_LOCAL_INV :
                 QHCA_WR_SEND_WITH_INV, fz_below(f, 64), 0,
                 fz_chance(f, 85) ? f->mw[w] : fzv_key(f), 0, false);
    }
    qt_qp_ring_sq(f->t, &f->qp[a]);
}

/* A fast-reg MR, mapped by a REG_MR WQE, used, and invalidated. */
static void fzv_build_fr(Fz *f)
{
    int a, b, r = fz_slot(f, f->fr_live, FZ_NFR, true);
    struct qhca_sq_wqe_reg_mr rw = { 0 };
    uint32_t npages;
    uint64_t pbl;
    uint8_t key = fz_below(f, 256);

    if (!fzv_rc_pair(f, &a, &b)) {
        return;
    }
    if (r < 0 || fz_chance(f, 30)) {
        struct qhca_cmd_reg_mr c = {
            .pdn = cpu_to_le32(f->h.pdn),
            .npages = cpu_to_le32(1 + fz_below(f, 16)),
            .key = fz_below(f, 256),
            .flags = QHCA_MR_F_FAST_REG,
        };
        uint32_t index;
        int slot = fz_slot(f, f->fr_live, FZ_NFR, false);

        if (slot < 0) {
            slot = fz_below(f, FZ_NFR);
            fzv_handle_cmd(f, QHCA_CMD_DEREG_MR, f->fr[slot] >> 8);
            f->fr_live[slot] = false;
        }
        if (fzv_submit(f, QHCA_CMD_REG_MR, &c, sizeof(c), fz_chance(f, 10),
                       &index) != QHCA_AQ_SUCCESS) {
            return;
        }
        r = slot;
        f->fr[r] = index << 8 | c.key;
        f->fr_pages[r] = le32_to_cpu(c.npages);
        f->fr_live[r] = true;
    }
    npages = 1 + fz_below(f, f->fr_pages[r]);
    pbl = fzv_page_list(f, npages);
    rw.wr_id = cpu_to_le64(f->steps);
    rw.opcode = QHCA_WR_REG_MR;
    rw.flags = QHCA_WQE_F_SIGNALED;
    rw.mr_key = cpu_to_le32((f->fr[r] & ~QHCA_MKEY_KEY) | key);
    rw.iova = cpu_to_le64(0x100000000ull * (1 + fz_below(f, 4)));
    rw.npages = cpu_to_le32(npages);
    rw.access = fz_below(f, 16) | QHCA_ACCESS_LOCAL_WRITE;
    rw.page_shift = 12;
    rw.length = cpu_to_le64(4096ull * npages - fz_below(f, 2) * 100);
    rw.pbl_addr = cpu_to_le64(pbl);
    if (fz_chance(f, 15)) {
        fz_mutate(f, &rw, sizeof(rw));
    }
    qt_qp_post_send(f->t, &f->qp[a], (void *)&rw, NULL, 0);
    f->fr[r] = (f->fr[r] & ~QHCA_MKEY_KEY) | key;
    fzv_post(f, a, fz_chance(f, 50) ? QHCA_WR_RDMA_WRITE : QHCA_WR_RDMA_READ,
             fz_below(f, 4096), le64_to_cpu(rw.iova) + fz_below(f, 4096),
             f->fr[r], 0, false);
    if (fz_chance(f, 60)) {
        fzv_recvs(f, b, 1);
        fzv_post(f, a, fz_chance(f, 50) ? QHCA_WR_LOCAL_INV :
                 QHCA_WR_SEND_WITH_INV, fz_below(f, 64), 0,
                 fz_chance(f, 85) ? f->fr[r] : fzv_key(f), 0, false);
    }
    qt_qp_ring_sq(f->t, &f->qp[a]);
}

/*
 * A UC or RC pair and multi-packet messages with packets lost on the
 * wire (DROP): UC receivers resynchronise, RC requesters retry.
 */
static void fzv_build_lossy(Fz *f)
{
    uint8_t type = fz_chance(f, 50) ? QHCA_QPT_UC : QHCA_QPT_RC;
    int cq = fzv_cq(f);
    int a = fzv_new_qp(f, type, -1, 0, cq);
    int b = fzv_new_qp(f, type, -1, 0, cq);
    unsigned k, n = 1 + fz_below(f, 4);

    if (a < 0 || b < 0 || fzv_connect(f, a, f->qp[b].qpn) ||
        fzv_connect(f, b, f->qp[a].qpn)) {
        return;
    }
    fzv_recvs(f, b, n);
    fzv_inject(f, QHCA_FAULT_DROP, 1 + fz_below(f, 3));
    for (k = 0; k < n; k++) {
        fzv_post(f, a, fz_chance(f, 60) ? QHCA_WR_SEND :
                 QHCA_WR_RDMA_WRITE, 600 + fz_below(f, 3500),
                 fzv_raddr(f), f->phys_key, 0, false);
    }
    qt_qp_ring_sq(f->t, &f->qp[a]);
    if (fz_chance(f, 70)) {
        g_usleep(200);
        fzv_clock(f);
    }
}

/*
 * READs and fenced WQEs beyond the QP's READ limit, then SQD: the WQEs
 * held back wait for RTS; sometimes RTS again.
 */
static void fzv_build_sqd(Fz *f)
{
    int a, b;
    unsigned k, n = 2 + fz_below(f, 6);
    struct qhca_cmd_modify_qp m = {
        .attr_mask = cpu_to_le32(QHCA_QP_ATTR_STATE),
        .state = QHCA_QPS_SQD,
    };

    if (!fzv_rc_pair(f, &a, &b)) {
        return;
    }
    for (k = 0; k < n; k++) {
        /* What holds a READ/atomic slot: 1.6's FLUSH and ATOMIC_WRITE too. */
        static const uint8_t ops[] = {
            QHCA_WR_RDMA_READ, QHCA_WR_RDMA_READ,
            QHCA_WR_ATOMIC_FETCH_AND_ADD, QHCA_WR_FLUSH,
            QHCA_WR_ATOMIC_WRITE,
        };

        fzv_post(f, a, ops[fz_below(f, ARRAY_SIZE(ops))], fz_below(f, 4096),
                 fzv_raddr(f), f->phys_key, 0, false);
    }
    qt_qp_ring_sq(f->t, &f->qp[a]);
    m.qpn = cpu_to_le32(f->qp[a].qpn);
    fz_pair(f, "fzv-state", m.state,
            qt_cmd(f->t, QHCA_CMD_MODIFY_QP, &m, sizeof(m), NULL));
    if (fz_chance(f, 60)) {
        g_usleep(200);
        m.state = QHCA_QPS_RTS;
        fz_pair(f, "fzv-state", m.state,
                qt_cmd(f->t, QHCA_CMD_MODIFY_QP, &m, sizeof(m), NULL));
    }
}

/*
 * A CQ of two entries that a self-connected QP overruns, its consumer
 * record sometimes beyond the producer (read when the CQ looks full).
 */
static void fzv_build_overrun(Fz *f)
{
    int c = fz_slot(f, f->cq_live, FZ_NCQ, false), a;
    unsigned k, n = 3 + fz_below(f, 4);

    if (c < 0 || hx_create_cq(&f->h, &f->cq[c], 1) != QHCA_AQ_SUCCESS) {
        return;
    }
    f->cq_live[c] = true;
    a = fzv_new_qp(f, QHCA_QPT_RC, -1, 0, c);
    if (a < 0 || fzv_connect(f, a, f->qp[a].qpn)) {
        return;
    }
    if (fz_chance(f, 50)) {
        uint32_t rec = cpu_to_le32(1 + fz_below(f, 8));

        qtest_memwrite(f->t->qts, f->cq[c].dbrec, &rec, sizeof(rec));
    }
    for (k = 0; k < n; k++) {
        fzv_post(f, a, QHCA_WR_RDMA_WRITE, fz_below(f, 256), fzv_raddr(f),
                 f->phys_key, 0, false);
    }
    qt_qp_ring_sq(f->t, &f->qp[a]);
}

void fzv_build(Fz *f)
{
    switch (fz_below(f, 8)) {
    case 7:
        fzv_build_overrun(f);
        break;
    case 5:
        fzv_build_lossy(f);
        break;
    case 6:
        fzv_build_sqd(f);
        break;
    case 0:
        fzv_build_srq(f);
        break;
    case 1:
        fzv_build_xrc(f);
        break;
    case 2:
        fzv_build_mcast(f);
        break;
    case 3:
        fzv_build_mw(f);
        break;
    default:
        fzv_build_fr(f);
        break;
    }
}

/* ------------------------------------------------------------------ */
/* Memory operations aimed at any live QP                              */

void fzv_memop(Fz *f)
{
    int i = fz_slot(f, f->qp_live, FZ_NQP, true);
    int w = fz_slot(f, f->mw_live, FZ_NMW, true);
    uint8_t buf[64] = { 0 };
    QhcaQp *qp;

    if (i >= 0 && f->qp_type[i] == QHCA_QPT_UD && fz_chance(f, 80)) {
        /* UD has no memory operations: seldom worth a QP. */
        i = fz_slot(f, f->qp_live, FZ_NQP, true);
    }
    if (i < 0 || !f->qp[i].sq_entries) {
        return;
    }
    qp = &f->qp[i];
    switch (fz_below(f, 4)) {
    case 0: {
        struct qhca_sq_wqe_bind *b = (void *)buf;

        b->opcode = QHCA_WR_BIND_MW;
        b->mw_key = cpu_to_le32(w >= 0 ? f->mw[w] ^ fz_below(f, 2) :
                                fzv_key(f));
        b->addr = cpu_to_le64(fz_chance(f, 70) ? fzv_raddr(f) :
                              fz_interesting(f));
        b->mr_lkey = cpu_to_le32(fz_chance(f, 60) && f->bind_key ?
                                 f->bind_key : fz_key(f));
        b->access = fz_chance(f, 80) ? 2 * fz_below(f, 8) : fz_below(f, 32);
        b->mw_type = w >= 0 && fz_chance(f, 80) ? f->mw_type[w] :
                     fz_below(f, 4);
        b->length = cpu_to_le64(fz_chance(f, 70) ? fz_below(f, 65536) :
                                fz_interesting(f));
        break;
    }
    case 1: {
        struct qhca_sq_wqe_reg_mr *r = (void *)buf;
        int k = fz_slot(f, f->fr_live, FZ_NFR, true);
        uint32_t n = 1 + fz_below(f, 4);

        r->opcode = QHCA_WR_REG_MR;
        r->mr_key = cpu_to_le32(k >= 0 && fz_chance(f, 80) ?
                                f->fr[k] + 1 : fz_key(f));
        r->iova = cpu_to_le64(fz_interesting(f) & ~4095ull);
        r->npages = cpu_to_le32(fz_chance(f, 80) ? n : fz_interesting(f));
        r->access = fz_chance(f, 80) ? fz_below(f, 16) | 1 :
                    fz_below(f, 32);
        r->page_shift = fz_chance(f, 80) ? 12 : fz_below(f, 40);
        r->length = cpu_to_le64(fz_chance(f, 70) ? 4096ull * n :
                                fz_interesting(f));
        /* Never a list the grammar did not write: see fzv_far_addr(). */
        r->pbl_addr = cpu_to_le64(fz_chance(f, 80) ? fzv_page_list(f, n) :
                                  fzv_far_addr(f));
        if (k >= 0 && le32_to_cpu(r->mr_key) == f->fr[k] + 1) {
            f->fr[k]++;
        }
        break;
    }
    default: {
        struct qhca_sq_wqe *s = (void *)buf;

        s->opcode = fz_chance(f, 50) ? QHCA_WR_LOCAL_INV :
                    QHCA_WR_SEND_WITH_INV;
        s->rkey = cpu_to_le32(fz_chance(f, 80) ? fzv_key(f) : fz_key(f));
        break;
    }
    }
    buf[9] = fz_chance(f, 80) ? QHCA_WQE_F_SIGNALED : fz_below(f, 256);
    if (fz_chance(f, 25)) {
        fz_mutate(f, buf, sizeof(buf));
    }
    memcpy(buf, &(uint64_t){ cpu_to_le64(f->steps) }, 8);
    /* A REG_MR's page list and a bind's MR are read, never written. */
    qt_qp_post_send(f->t, qp, (void *)buf, NULL, 0);
    qt_qp_ring_sq(f->t, qp);
}

/*
 * RESIZE_CQ (1.6) of live CQ slot @i to 2 .. 64 entries, mostly at the
 * consumer index the fuzzer reached; the slot follows a success.
 */
static void fzv_resize_cq(Fz *f, int i, bool mutate)
{
    QhcaCq *cq = &f->cq[i];
    uint8_t depth = 1 + fz_below(f, 6);
    uint32_t ci = cq->ci + (fz_chance(f, 80) ? 0 : fz_below(f, 5) - 2);
    struct qhca_cmd_resize_cq c = {
        .ring_addr = cpu_to_le64(guest_alloc(&f->t->alloc, 64 << depth)),
        .dbrec_addr = cpu_to_le64(guest_alloc(&f->t->alloc, 64)),
        .cqn = cpu_to_le32(cq->cqn),
        .ci = cpu_to_le32(ci),
        .depth_log2 = depth,
    };

    qtest_memwrite(f->t->qts, le64_to_cpu(c.dbrec_addr), &c.ci, 4);
    if (fzv_submit(f, QHCA_CMD_RESIZE_CQ, &c, sizeof(c), mutate, NULL) ==
        QHCA_AQ_SUCCESS && le32_to_cpu(c.cqn) == cq->cqn) {
        cq->ring = le64_to_cpu(c.ring_addr);
        cq->dbrec = le64_to_cpu(c.dbrec_addr);
        cq->entries = 1u << c.depth_log2;
        /* What the device took as consumed reads so in the new ring. */
        if ((int32_t)(le32_to_cpu(c.ci) - cq->ci) > 0) {
            cq->ci = le32_to_cpu(c.ci);
        }
    }
}

/* ------------------------------------------------------------------ */
/* Admin commands of the 1.2 objects, mutated half of the time         */

void fzv_cmd(Fz *f)
{
    bool mutate = fz_chance(f, 40);
    uint32_t res;
    int i;

    switch (fz_below(f, 10)) {
    case 9:
        i = fz_slot(f, f->cq_live, FZ_NCQ, fz_chance(f, 50));
        if (i >= 0 && f->cq_live[i]) {
            /*
             * A consumer record beyond the producer, read when the CQ
             * looks full; or the CQ destroyed (refused while in use);
             * or resized.
             */
            if (fz_chance(f, 30)) {
                fzv_resize_cq(f, i, mutate);
            } else if (fz_chance(f, 50)) {
                uint32_t rec = cpu_to_le32(f->cq[i].ci +
                                           fz_below(f, 3) * f->cq[i].entries +
                                           fz_below(f, 8));

                qtest_memwrite(f->t->qts, f->cq[i].dbrec, &rec, sizeof(rec));
            } else if (fzv_handle_cmd(f, QHCA_CMD_DESTROY_CQ,
                                      f->cq[i].cqn) == QHCA_AQ_SUCCESS) {
                f->cq_live[i] = false;
            }
        } else if (i >= 0 && hx_create_cq(&f->h, &f->cq[i], 1) ==
                   QHCA_AQ_SUCCESS) {
            fzv_handle_cmd(f, QHCA_CMD_DESTROY_CQ, f->cq[i].cqn);
        }
        break;
    case 0:
        fzv_xrcd(f);
        break;
    case 1: {
        i = fz_slot(f, f->xrcd_live, FZ_NXRCD, true);
        res = i >= 0 && fz_chance(f, 85) ? f->xrcd[i] : fz_interesting(f);
        if (fzv_handle_cmd(f, QHCA_CMD_DEALLOC_XRCD, res) ==
            QHCA_AQ_SUCCESS && i >= 0 && f->xrcd[i] == res) {
            f->xrcd_live[i] = false;
        }
        break;
    }
    case 2: {
        struct qhca_cmd_alloc_mw c = {
            .pdn = cpu_to_le32(fz_chance(f, 90) ? f->h.pdn :
                               fz_handle(f, f->pd, f->pd_live, FZ_NH)),
            .type = 1 + fz_below(f, 2),
        };

        i = fz_slot(f, f->mw_live, FZ_NMW, false);
        if (fzv_submit(f, QHCA_CMD_ALLOC_MW, &c, sizeof(c), mutate, &res) ==
            QHCA_AQ_SUCCESS && i >= 0 && !mutate) {
            f->mw[i] = QHCA_MKEY_MW | res << 8;
            f->mw_type[i] = c.type;
            f->mw_live[i] = true;
        }
        break;
    }
    case 3:
        i = fz_slot(f, f->mw_live, FZ_NMW, true);
        res = i >= 0 && fz_chance(f, 85) ?
              (f->mw[i] & QHCA_MKEY_MW_INDEX) >> 8 : fz_interesting(f);
        if (fzv_handle_cmd(f, QHCA_CMD_DEALLOC_MW, res) == QHCA_AQ_SUCCESS &&
            i >= 0 && (f->mw[i] & QHCA_MKEY_MW_INDEX) >> 8 == res) {
            f->mw_live[i] = false;
        }
        break;
    case 4:
    case 5: {
        unsigned g = fz_below(f, FZ_NMCAST);
        struct qhca_cmd_mcast m = {
            .qpn = cpu_to_le32(fz_qpn(f)),
            .mlid = cpu_to_le16(fz_chance(f, 85) ? fzv_mlids[g] :
                                (uint16_t)fz_interesting(f)),
        };

        fzv_mgid(fz_chance(f, 85) ? g : fz_below(f, 64), m.mgid);
        fzv_submit(f, fz_chance(f, 60) ? QHCA_CMD_ATTACH_MCAST :
                   QHCA_CMD_DETACH_MCAST, &m, sizeof(m), mutate, NULL);
        break;
    }
    case 6: {
        /* A fast-reg MR, with every field the grammar can get wrong. */
        struct qhca_cmd_reg_mr c = {
            .pdn = cpu_to_le32(f->h.pdn),
            .npages = cpu_to_le32(fz_chance(f, 80) ? 1 + fz_below(f, 64) :
                                  (uint32_t)fz_interesting(f)),
            .key = fz_below(f, 256),
            .flags = QHCA_MR_F_FAST_REG,
        };

        /* Or a REREG_MR (1.6). */
        if (fz_chance(f, 30)) {
            fzv_rereg_mr(f, mutate);
            break;
        }
        i = fz_slot(f, f->fr_live, FZ_NFR, false);
        if (fzv_submit(f, QHCA_CMD_REG_MR, &c, sizeof(c), mutate, &res) ==
            QHCA_AQ_SUCCESS && i >= 0 && !mutate) {
            f->fr[i] = res << 8 | c.key;
            f->fr_pages[i] = le32_to_cpu(c.npages);
            f->fr_live[i] = true;
        }
        break;
    }
    case 7: {
        /* An XRC SRQ of a random domain and CQ (mutated or not). */
        struct qhca_cmd_create_srq c = {
            .ring_addr = cpu_to_le64(guest_alloc(&f->t->alloc, 1024)),
            .pdn = cpu_to_le32(f->h.pdn),
            .uar = cpu_to_le32(f->h.uar),
            .depth_log2 = 4,
            .stride_log2 = 6,
            .type = fz_chance(f, 90) ? QHCA_SRQT_XRC : fz_below(f, 4),
        };

        i = fz_slot(f, f->xrcd_live, FZ_NXRCD, true);
        c.xrcd = cpu_to_le32(i >= 0 && fz_chance(f, 85) ? f->xrcd[i] :
                             fz_interesting(f));
        c.cqn = cpu_to_le32(fz_cqn(f));
        fzv_submit(f, QHCA_CMD_CREATE_SRQ, &c, sizeof(c), mutate, NULL);
        break;
    }
    default: {
        /* An XRC QP, INI or TGT, from a valid base, mutated. */
        struct qhca_cmd_create_qp c = { 0 };
        bool tgt = fz_chance(f, 50);

        c.type = tgt ? QHCA_QPT_XRC_TGT : QHCA_QPT_XRC_INI;
        i = fz_slot(f, f->xrcd_live, FZ_NXRCD, true);
        if (tgt) {
            c.pdn = cpu_to_le32(i >= 0 ? f->xrcd[i] : fz_interesting(f));
        } else {
            c.sq_addr = cpu_to_le64(guest_alloc(&f->t->alloc, 4096));
            c.pdn = cpu_to_le32(f->h.pdn);
            c.uar = cpu_to_le32(f->h.uar);
            c.send_cqn = cpu_to_le16(fz_cqn(f));
            c.sq_depth_log2 = 4;
            c.sq_stride_log2 = 8;
        }
        fzv_submit(f, QHCA_CMD_CREATE_QP, &c, sizeof(c), true, NULL);
        break;
    }
    }
}

/* ------------------------------------------------------------------ */
/* The Ethernet port (1.5): the fuzzer is the rest of the segment      */

/*
 * A run with the Ethernet port has the device on a socket netdev whose
 * other end the fuzzer holds (qt_start_eth()).  It plays every peer the
 * device's QPs are connected to, at qt_peer_mac, 10.0.0.2 and fd00::2:
 * frames it builds from what it knows (QUERY_QP's PSNs, the physical
 * MR's key, live and destroyed QPs), the requests the device sends it
 * answered (or not) with ACKs, NAKs of every syndrome, READ responses,
 * atomic ACKs and duplicates, every one now and then mutated (bit flips,
 * truncation at each header, lying lengths, a bad ICRC, the wrong IP
 * version, IPv4 options, VLAN tags, runts, 9 KiB and more); plain
 * Ethernet frames for the NIC; SET_GID and SET_QP_AV good and bad; GSI
 * and RAW_ETH QPs.  The ICRC is the fuzzer's own (qt_icrc()).
 */

#define FZE_REQS            32      /* requests of the device to answer */
#define FZE_DEAD            8       /* destroyed QPNs to aim frames at */
/* Above 9 KiB, well below the 64 KiB QEMU's socket backend takes. */
#define FZE_FRAME_MAX       (16 * 1024)
#define FZE_IB_MAX          (FZE_FRAME_MAX - QT_ROCE_HDR_MAX - QT_ICRC_LEN)
#define FZE_SAFE_ADDR       (RAM_END - 4096)
/* QPNs whose address vector's IP version the model keeps (max-qps=12). */
#define FZE_QPNS            64

/* A request the device sent to a peer, which the fuzzer may answer. */
typedef struct FzeReq {
    uint32_t qpn;               /* the device QP that sent it (as guessed) */
    uint8_t opcode;             /* the BTH opcode byte */
    uint32_t psn;
    uint32_t len;               /* RDMA READ: the DMA length */
    QtRoceAddr back;            /* the addresses of an answer */
} FzeReq;

struct FzEth {
    uint32_t peer[FZ_NQP];      /* the peer QPN QP slot i sends to */
    /*
     * The IP version of QP n's AV, by QP number: a connected QP takes
     * frames only from its peer's address to its own.
     */
    bool v6[FZE_QPNS];
    uint32_t dead[FZE_DEAD];
    unsigned ndead;
    FzeReq req[FZE_REQS];
    unsigned nreq;              /* requests seen, free-running */
    uint32_t msn;
    /*
     * Steps left in which the fuzzer plays a segment that takes no frames
     * from the port (fze_stall()): the device's transmit side fills.
     */
    unsigned stall;
    size_t last_len;
    uint8_t last[FZE_FRAME_MAX];    /* the last good frame, to repeat */
    uint8_t frame[FZE_FRAME_MAX];
    uint8_t ib[FZE_IB_MAX];
    uint8_t rx[FZE_FRAME_MAX];
};

void fze_init(Fz *f)
{
    f->eth = g_new0(FzEth, 1);
}

void fze_fini(Fz *f)
{
    g_free(f->eth);
    f->eth = NULL;
}

/* After fz_resync's reset: the port's addresses, and a model afresh. */
void fze_resynced(Fz *f)
{
    FzEth *e = f->eth;

    memset(e->peer, 0, sizeof(e->peer));
    e->nreq = 0;
    e->last_len = 0;
    qt_eth_gids(f->t);
}

void fze_destroyed(Fz *f, uint32_t qpn)
{
    FzEth *e = f->eth;

    if (e) {
        e->dead[e->ndead++ % FZE_DEAD] = qpn;
    }
}

/* QP slot @slot's address vector: to the peer's QP @dest, v4 or v6. */
uint8_t fze_av(Fz *f, int slot, uint32_t dest)
{
    FzEth *e = f->eth;
    bool v6 = fz_chance(f, 40);
    uint8_t status;

    status = qt_set_qp_av(f->t, f->qp[slot].qpn, v6 ? QT_GID_IP6 : QT_GID_IP4,
                          v6 ? qt_peer_ip6 : qt_peer_ip4, qt_peer_mac);
    fz_pair(f, "cmd", QHCA_CMD_SET_QP_AV, status);
    if (status == QHCA_AQ_SUCCESS) {
        e->peer[slot] = dest;
        e->v6[f->qp[slot].qpn % FZE_QPNS] = v6;
    }
    return status;
}

/* The IP version of frames to QP @qpn: its AV's, as far as known. */
static bool fze_v6(Fz *f, uint32_t qpn)
{
    return qpn < FZE_QPNS ? f->eth->v6[qpn] : fz_chance(f, 30);
}

/*
 * Mostly a link that is up, for frames to pass: the guest's LINK_DOWN
 * undone, the cable put back in.
 */
static void fze_link(Fz *f)
{
    if (f->link_injected_down && fz_chance(f, 80) &&
        fzv_inject(f, QHCA_FAULT_LINK_UP, 0) == QHCA_AQ_SUCCESS) {
        f->link_injected_down = false;
    }
    if (f->cable_pulled && fz_chance(f, 80)) {
        fzv_cable(f, true);
    }
}

/* hx_connect() on Ethernet: the address vector first, and no DLID. */
uint8_t fze_connect_rc(Fz *f, int slot, uint32_t dest)
{
    QhcaQp *qp = &f->qp[slot];
    QhcaPath path = qt_rc_path;
    uint8_t status = fze_av(f, slot, dest);

    if (status != QHCA_AQ_SUCCESS) {
        return status;
    }
    path.dlid = 0;
    path.rq_psn = 0x100 + dest;
    path.sq_psn = 0x100 + qp->qpn;
    path.timeout = 10;
    path.retry_cnt = 1;
    path.rnr_retry = 1;
    return qt_try_connect(f->t, qp->qpn, dest, &path);
}

/* A UD WQE's address on Ethernet: mostly the peer's, with its MAC. */
void fze_ud_av(Fz *f, struct qhca_sq_wqe_ud *u)
{
    bool v6 = fz_chance(f, 40);

    u->av_flags = fz_chance(f, 95) ? QHCA_AV_F_GRH : 0;
    u->dlid = 0;
    memcpy(u->dgid, v6 ? qt_peer_ip6 : qt_peer_ip4, 16);
    u->sgid_index = v6 ? QT_GID_IP6 : QT_GID_IP4;
    memcpy(u->dmac, qt_peer_mac, 6);
    switch (fz_below(f, 12)) {
    case 0:
        u->sgid_index = fz_below(f, 20);
        break;
    case 1:
        memcpy(u->dgid, v6 ? qt_peer_ip4 : qt_peer_ip6, 16);
        break;
    case 2:
        u->dmac[0] = fz_chance(f, 50) ? 0x01 : 0;   /* multicast, or zero */
        if (!u->dmac[0]) {
            memset(u->dmac, 0, 6);
        }
        break;
    case 3:
        memcpy(u->dmac, qt_eth_mac, 6);    /* to itself: nobody answers */
        break;
    default:
        break;
    }
}

/* ------------------------------------------------------------------ */
/* Frames: building, mutating, sending                                 */

static size_t fze_put(uint8_t *p, uint64_t v, unsigned bytes)
{
    unsigned i;

    for (i = 0; i < bytes; i++) {
        p[i] = v >> (8 * (bytes - 1 - i));
    }
    return bytes;
}

static size_t fze_reth(Fz *f, uint8_t *p, uint64_t va, uint32_t rkey,
                       uint32_t len)
{
    fze_put(p, va, 8);
    fze_put(p + 8, rkey, 4);
    fze_put(p + 12, len, 4);
    return QT_RETH_LEN;
}

static size_t fze_aeth(uint8_t *p, uint8_t syndrome, uint32_t msn)
{
    p[0] = syndrome;
    fze_put(p + 1, msn, 3);
    return QT_AETH_LEN;
}

/* @n bytes of payload at @p, random, with the pad the BTH will claim. */
static size_t fze_payload(Fz *f, uint8_t *p, uint32_t n)
{
    uint32_t i;

    for (i = 0; i < n; i += 4) {
        uint32_t r = g_rand_int(f->r);

        memcpy(p + i, &r, MIN(4, n - i));
    }
    for (; n % 4; n++) {
        p[n] = 0;
    }
    return n;
}

/*
 * Where a remote write of @len bytes may land: scratch mostly, anywhere
 * else now and then (the BARs, past RAM, past 2^64), never the admin
 * rings the fuzzer reads its completions from.
 */
static uint64_t fze_va(Fz *f, uint32_t len, bool align8)
{
    uint64_t va = fz_chance(f, 80) ?
                  f->scratch + FZ_SCRATCH / 2 +
                  8 * fz_below(f, (FZ_SCRATCH / 2 - 65536) / 8) :
                  fz_addr(f, len);

    if (align8 && fz_chance(f, 90)) {
        va &= ~7ull;
    }
    if (fz_hits_admin(f, va, MAX(len, 1))) {
        va = FZE_SAFE_ADDR;
    }
    return va;
}

/*
 * A DMA length that lies: up to 1 MiB mostly, any 32-bit value rarely.
 * A READ of up to 2^31 bytes under the physical MR makes the responder
 * read all of RAM into ~131000 frames, most dropped at the transmit
 * queue (hostile-test eth/read-2g); under tracing that takes the run
 * tens of seconds, so it is kept rare enough not to fill every run.
 */
static uint32_t fze_big_len(Fz *f)
{
    return fz_interesting(f) & (fz_chance(f, 95) ? 0xfffff : 0xffffffff);
}

static uint32_t fze_rkey(Fz *f)
{
    return fz_chance(f, 75) ? f->phys_key : fz_key(f);
}

/*
 * Change a frame as a broken or hostile sender would: one of the ways a
 * parser goes wrong, the ICRC made right again or not.  *len may grow
 * (up to FZE_FRAME_MAX) or shrink.
 */
static void fze_mutate(Fz *f, uint8_t *fr, size_t *len)
{
    uint16_t type = *len >= 14 ? fr[12] << 8 | fr[13] : 0;
    size_t ip = 14, iplen = type == 0x86dd ? 40 : 20, n = *len;
    size_t cuts[] = {
        0, 1 + fz_below(f, 13), 14, ip + 1 + fz_below(f, iplen - 1),
        ip + iplen, ip + iplen + 4, ip + iplen + 8, ip + iplen + 8 + 6,
        ip + iplen + 8 + 12, ip + iplen + 8 + 12 + fz_below(f, 28),
        n - 4, n - 1 - fz_below(f, 3),
    };
    bool reseal = fz_chance(f, 60);
    unsigned k = fz_below(f, 16);

    fz_pair(f, "eth-mutate", k, reseal);
    switch (k) {
    case 0:     /* bit flips */
    case 1: {
        unsigned m = 1 + fz_below(f, 4);

        while (m-- && n) {
            fr[fz_below(f, n)] ^= 1u << fz_below(f, 8);
        }
        break;
    }
    case 2:     /* truncated at (or in) a header */
        n = MIN(n, cuts[fz_below(f, ARRAY_SIZE(cuts))]);
        reseal = false;
        break;
    case 3:     /* the IP length lies */
        if (n >= ip + iplen) {
            uint16_t v = fz_chance(f, 50) ? fz_interesting(f) :
                         (uint16_t)(lduw_be_p(fr + ip + (iplen == 40 ? 4 : 2)) +
                                    (int)fz_below(f, 17) - 8);

            stw_be_p(fr + ip + (iplen == 40 ? 4 : 2), v);
        }
        break;
    case 4:     /* the UDP length lies */
        if (n >= ip + iplen + 8) {
            stw_be_p(fr + ip + iplen + 4, fz_chance(f, 50) ?
                     (uint16_t)fz_interesting(f) :
                     (uint16_t)(lduw_be_p(fr + ip + iplen + 4) +
                                (int)fz_below(f, 17) - 8));
        }
        break;
    case 5:     /* a bad ICRC */
        if (n) {
            fr[n - 1 - fz_below(f, MIN(n, 4))] ^= 1 + fz_below(f, 255);
        }
        reseal = false;
        break;
    case 6:     /* the wrong IP version for the ethertype */
        if (n > ip) {
            uint8_t v = fz_chance(f, 70) ? (type == 0x86dd ? 4 : 6) :
                        fz_below(f, 16);

            fr[ip] = (fr[ip] & 0x0f) | v << 4;
        }
        break;
    case 7:     /* IPv4 options: the header grows, what follows moves */
        if (type == 0x0800 && n + 40 <= FZE_FRAME_MAX && n >= ip + 20) {
            unsigned words = 1 + fz_below(f, 10);

            memmove(fr + ip + 20 + 4 * words, fr + ip + 20, n - ip - 20);
            memset(fr + ip + 20, 1, 4 * words);     /* NOPs */
            fr[ip] = 0x40 | (5 + words);
            stw_be_p(fr + ip + 2, lduw_be_p(fr + ip + 2) + 4 * words);
            n += 4 * words;
        }
        break;
    case 8:     /* a VLAN tag (or two) */
        if (n + 8 <= FZE_FRAME_MAX && n >= 12) {
            unsigned tags = fz_chance(f, 80) ? 1 : 2, i;

            memmove(fr + 12 + 4 * tags, fr + 12, n - 12);
            for (i = 0; i < tags; i++) {
                stw_be_p(fr + 12 + 4 * i, i ? 0x8100 :
                         fz_chance(f, 80) ? 0x8100 : 0x88a8);
                stw_be_p(fr + 14 + 4 * i, fz_below(f, 0x10000));
            }
            n += 4 * tags;
        }
        break;
    case 9:     /* a runt */
        n = MIN(n, fz_below(f, 60));
        break;
    case 10:    /* a fragment, TTL 0, a bad checksum, an extension */
        if (type == 0x0800 && n >= ip + 20) {
            switch (fz_below(f, 3)) {
            case 0:
                stw_be_p(fr + ip + 6, fz_chance(f, 50) ? 0x2000 :
                         fz_below(f, 0x2000));
                break;
            case 1:
                fr[ip + 8] = 0;
                break;
            default:
                fr[ip + 10] ^= 0xff;
                break;
            }
        } else if (n >= ip + 8) {
            /* IPv6: hop limit 0, or a Hop-by-Hop header before UDP. */
            fr[ip + (fz_chance(f, 50) ? 7 : 6)] = 0;
        }
        break;
    case 11:    /* the MACs: from itself, to everyone, to someone else */
        if (n >= 12) {
            switch (fz_below(f, 4)) {
            case 0:
                memcpy(fr + 6, qt_eth_mac, 6);
                break;
            case 1:
                memset(fr, 0xff, 6);
                break;
            case 2:
                fr[0] = 0x33;
                fr[1] = 0x33;
                break;
            default:
                fr[5] ^= 0x40;
                break;
            }
        }
        break;
    case 12:    /* the BTH: TVer, P_Key, pad count, reserved bits */
        if (n >= ip + iplen + 8 + 12) {
            uint8_t *b = fr + ip + iplen + 8;

            switch (fz_below(f, 4)) {
            case 0:
                b[1] |= 1 + fz_below(f, 15);
                break;
            case 1:
                stw_be_p(b + 2, fz_chance(f, 50) ? 0x7fff :
                         fz_below(f, 0x10000));
                break;
            case 2:
                b[1] ^= 0x30;
                break;
            default:
                b[4] = 1 + fz_below(f, 255);
                break;
            }
        }
        break;
    case 13:    /* the addresses: an IP not the port's, or the port's own */
        if (n >= ip + iplen) {
            size_t d = ip + (iplen == 40 ? 24 : 16);
            size_t s = ip + (iplen == 40 ? 8 : 12);

            if (fz_chance(f, 50)) {
                fr[d + (iplen == 40 ? 15 : 3)] ^= 1 + fz_below(f, 255);
            } else {
                memcpy(fr + s, fr + d, iplen == 40 ? 16 : 4);
            }
        }
        break;
    case 14:    /* 9 KiB and more: the frame grows, its lengths with it */
        if (n >= ip + iplen + 8 + 12 + 4) {
            size_t grow = MIN((size_t)(8000 + fz_below(f, 8000)),
                              FZE_FRAME_MAX - n) & ~3ul;

            memset(fr + n, 0xa5, grow);
            n += grow;
            stw_be_p(fr + ip + (iplen == 40 ? 4 : 2),
                     n - ip - (iplen == 40 ? 40 : 0));
            stw_be_p(fr + ip + iplen + 4, n - ip - iplen);
        }
        break;
    default:    /* the UDP port: RoCEv2's neighbours */
        if (n >= ip + iplen + 4) {
            stw_be_p(fr + ip + iplen + 2, QT_ROCE_PORT - 1 +
                     2 * fz_below(f, 2));
        }
        break;
    }
    if (type == 0x0800 && (fr[ip] & 0xf0) == 0x40 && k != 10 &&
        fz_chance(f, 90)) {
        /* The header checksum right again, so that the rest is reached. */
        qt_ip4_csum(fr, n);
    }
    if (reseal && n >= 4) {
        qt_roce_seal(fr, n);
    }
    *len = n;
}

/* Put @len bytes of frame on the wire; a good one is kept to repeat. */
static void fze_wire(Fz *f, uint8_t *fr, size_t len, bool mutate)
{
    FzEth *e = f->eth;

    if (mutate) {
        fze_mutate(f, fr, &len);
    } else if (fr != e->last) {
        memcpy(e->last, fr, len);
        e->last_len = len;
    }
    qt_wire_send(f->t, fr, len);
}

/* The RoCEv2 frame of the @n IB bytes in e->ib, mutated now and then. */
static void fze_send_ib(Fz *f, const QtRoceAddr *a, size_t n)
{
    FzEth *e = f->eth;
    size_t len = qt_roce_frame(a, e->ib, n, e->frame);

    fze_wire(f, e->frame, len, fz_chance(f, 25));
}

/* ------------------------------------------------------------------ */
/* What the device sends                                               */

static bool fze_is_request(uint8_t opcode)
{
    uint8_t op = opcode & 0x1f;

    return (opcode & 0xe0) != QT_IB_UD && (opcode & 0xe0) != QT_IB_UC &&
           (op <= QT_IB_READ_REQUEST || op == QT_IB_CMP_SWAP ||
            op == QT_IB_FETCH_ADD || op == QT_IB_SEND_LAST_INV ||
            op == QT_IB_SEND_ONLY_INV);
}

/* Which device QP talks to peer QP @peer: one whose AV says so, or any. */
static uint32_t fze_sender(Fz *f, uint32_t peer)
{
    int i;

    for (i = 0; i < FZ_NQP; i++) {
        if (f->qp_live[i] && f->eth->peer[i] == peer) {
            return f->qp[i].qpn;
        }
    }
    return fz_qpn(f);
}

/*
 * Read every frame the device sent: RoCEv2 requests are kept for
 * fze_answer(); each kind of frame, and whether its ICRC was right, is
 * an outcome.  Nothing while the segment stalls.
 */
void fze_drain(Fz *f)
{
    FzEth *e = f->eth;
    ssize_t n;
    int k;

    if (e->stall) {
        return;
    }
    for (k = 0; k < 512; k++) {
        QtRoce r;

        n = qt_wire_recv(f->t, e->rx, sizeof(e->rx), 0);
        if (n < 0) {
            return;
        }
        if (!qt_roce_parse(e->rx, MIN((size_t)n, sizeof(e->rx)), &r)) {
            fz_pair(f, "tx-eth", n >= 14 ? e->rx[12] << 8 | e->rx[13] : 0,
                    n >= 14 && !memcmp(e->rx + 6, qt_eth_mac, 6));
            continue;
        }
        fz_pair(f, "tx-roce", r.opcode, r.icrc_ok);
        if (!r.icrc_ok) {
            /* Not a finding (no harm to the host), but rxe would drop it. */
            fprintf(f->report, "note: the device sent opcode 0x%02x PSN "
                    "0x%06x with a bad ICRC (step %" PRIu64 ")\n", r.opcode,
                    r.psn, f->steps);
        }
        if (fze_is_request(r.opcode)) {
            FzeReq *q = &e->req[e->nreq++ % FZE_REQS];
            const uint8_t *b = e->rx + r.ib;
            size_t reth = QT_BTH_LEN +
                          ((r.opcode & 0xe0) == QT_IB_XRC ? QT_XRCETH_LEN : 0);

            q->qpn = fze_sender(f, r.qpn);
            q->opcode = r.opcode;
            q->psn = r.psn;
            q->len = (r.opcode & 0x1f) == QT_IB_READ_REQUEST &&
                     r.ib_len >= reth + QT_RETH_LEN ?
                     ldl_be_p(b + reth + 12) : 0;
            memset(&q->back, 0, sizeof(q->back));
            memcpy(q->back.smac, qt_peer_mac, 6);
            memcpy(q->back.dmac, r.smac, 6);
            memcpy(q->back.sgid, r.dgid, 16);
            memcpy(q->back.dgid, r.sgid, 16);
            q->back.sport = r.sport;
            q->back.hop_limit = 64;
        }
    }
}

/*
 * After each step: every frame sent is taken within 10 s (a port that
 * is not ready, or whose link is down, takes frames to drop them; a full
 * receive queue only delays them), and what the device sent is read, so
 * that its socket never fills -- except while the segment stalls, when
 * nothing is read nor checked.  Reading and sending alternate: a device
 * whose transmit queue is full may take received frames only once it can
 * answer them, which is the backpressure a real port has, not a hang.
 */
void fze_alive(Fz *f, const char *after)
{
    gint64 end = g_get_monotonic_time() + 10 * G_USEC_PER_SEC;

    if (f->eth->stall) {
        f->eth->stall--;
        return;
    }
    for (;;) {
        bool sent = qt_wire_flush(f->t, 100 * 1000);

        fze_drain(f);
        if (sent) {
            return;
        }
        if (g_get_monotonic_time() >= end) {
            break;
        }
    }
    fprintf(f->report, "FINDING: %u bytes of frames not taken by the "
            "port in 10 s, after %s (step %" PRIu64 ")\n",
            f->t->wire_out->len, after, f->steps);
    exit(3);
}

/* The path MTU in bytes of device QP @qpn, and its QUERY_QP in @a. */
static uint32_t fze_query(Fz *f, uint32_t qpn, struct qhca_qp_attr *a)
{
    struct qhca_cmd_handle h = { .handle = cpu_to_le32(qpn) };

    memset(a, 0, sizeof(*a));
    if (qt_query(f->t, QHCA_CMD_QUERY_QP, &h, sizeof(h), a, sizeof(*a)) !=
        QHCA_AQ_SUCCESS) {
        memset(a, 0, sizeof(*a));
        a->state = 0xff;
        return 1024;
    }
    return 128u << MIN(MAX(a->path_mtu, 1), 5);
}

/*
 * Answer a request the device sent: ACK, NAK with any syndrome, RNR NAK,
 * its READ response or atomic ACK, a PSN it never sent, a duplicate, or
 * nothing at all (its retransmission timer then runs on the clock).
 */
void fze_answer(Fz *f)
{
    FzEth *e = f->eth;
    struct qhca_qp_attr a;
    FzeReq *q;
    uint8_t tr, op;
    uint32_t mtu, psn;
    size_t n;

    fze_drain(f);
    if (!e->nreq) {
        return;
    }
    q = &e->req[(e->nreq - 1 - fz_below(f, MIN(e->nreq, FZE_REQS))) %
                FZE_REQS];
    tr = q->opcode & 0xe0;
    op = q->opcode & 0x1f;
    psn = q->psn;
    mtu = fze_query(f, q->qpn, &a);
    switch (fz_below(f, 10)) {
    case 0:
    case 1:
    case 2:
        if (op == QT_IB_READ_REQUEST) {
            /* The READ response, packet by packet, lengths as asked. */
            uint32_t left = MIN(q->len, 8 * mtu), k = 0;

            do {
                uint32_t chunk = MIN(left, mtu);
                uint8_t rop = left <= mtu ? (k ? QT_IB_READ_RESP_LAST :
                                                 QT_IB_READ_RESP_ONLY) :
                              k ? QT_IB_READ_RESP_MIDDLE :
                                  QT_IB_READ_RESP_FIRST;

                if (fz_chance(f, 5)) {
                    chunk = fz_below(f, 2 * mtu);   /* a lying size */
                }
                n = qt_bth(e->ib, tr | rop, false, false, (4 - chunk % 4) % 4,
                           q->qpn, (psn + k) & 0xffffff);
                if (rop != QT_IB_READ_RESP_MIDDLE) {
                    n += fze_aeth(e->ib + n, QT_AETH_ACK | 0x1f, ++e->msn);
                }
                n += fze_payload(f, e->ib + n, MIN(chunk, FZE_IB_MAX - n - 8));
                fze_send_ib(f, &q->back, n);
                left -= MIN(left, mtu);
                k++;
            } while (left && k < 64);
            fz_pair(f, "eth-answer", op, k);
            return;
        }
        if (op == QT_IB_CMP_SWAP || op == QT_IB_FETCH_ADD) {
            n = qt_bth(e->ib, tr | QT_IB_ATOMIC_ACK, false, false, 0, q->qpn,
                       psn);
            n += fze_aeth(e->ib + n, QT_AETH_ACK | 0x1f, ++e->msn);
            n += fze_put(e->ib + n, fz_rand64(f), 8);
            fze_send_ib(f, &q->back, n);
            fz_pair(f, "eth-answer", op, 0);
            return;
        }
        /* fall through: a plain ACK */
    case 3:
    case 4:
        n = qt_bth(e->ib, tr | QT_IB_ACK, false, false, 0, q->qpn, psn);
        n += fze_aeth(e->ib + n, QT_AETH_ACK | (fz_chance(f, 80) ? 0x1f :
                                                fz_below(f, 32)), ++e->msn);
        break;
    case 5: {
        /* NAK: every code, the reserved ones too. */
        uint8_t code = fz_chance(f, 80) ? fz_below(f, 5) : fz_below(f, 32);

        n = qt_bth(e->ib, tr | QT_IB_ACK, false, false, 0, q->qpn, psn);
        n += fze_aeth(e->ib + n, QT_AETH_NAK | code, e->msn);
        break;
    }
    case 6:
        n = qt_bth(e->ib, tr | QT_IB_ACK, false, false, 0, q->qpn, psn);
        n += fze_aeth(e->ib + n, QT_AETH_RNR_NAK | fz_below(f, 32), e->msn);
        break;
    case 7:
        /* A syndrome of the reserved kind, or a PSN never sent. */
        n = qt_bth(e->ib, tr | (fz_chance(f, 50) ? QT_IB_ACK :
                                QT_IB_ATOMIC_ACK), false, false, 0, q->qpn,
                   fz_chance(f, 50) ? (psn + 1 + fz_below(f, 1 << 23)) &
                                      0xffffff : psn);
        n += fze_aeth(e->ib + n, fz_chance(f, 50) ? 0x40 | fz_below(f, 32) :
                      fz_below(f, 256), e->msn + fz_below(f, 3));
        n += fze_put(e->ib + n, fz_rand64(f), 8);
        break;
    case 8:
        /* The last frame again: a duplicate on a lossy wire. */
        if (e->last_len) {
            fze_wire(f, e->last, e->last_len, false);
        }
        fz_pair(f, "eth-answer", 0x100, 0);
        return;
    default:
        fz_pair(f, "eth-answer", 0x101, 0);
        return;
    }
    fze_send_ib(f, &q->back, n);
    fz_pair(f, "eth-answer", op, 0x200 | e->ib[QT_BTH_LEN]);
}

/* ------------------------------------------------------------------ */
/* Frames of the fuzzer's making                                       */

/* A QP to aim a frame at: live, destroyed, QP1, QP0, multicast, any. */
static uint32_t fze_target(Fz *f)
{
    FzEth *e = f->eth;
    unsigned k = fz_below(f, 20);
    int slot = fz_slot(f, f->qp_live, FZ_NQP, true);

    if (k < 15 && slot >= 0) {
        return f->qp[slot].qpn;
    }
    switch (k) {
    case 15:
    case 16:
        return e->ndead ? e->dead[fz_below(f, MIN(e->ndead, FZE_DEAD))] : 2;
    case 17:
        return QHCA_GSI_QPN;
    case 18:
        return fz_chance(f, 50) ? 0 : QHCA_MCAST_QPN;
    default:
        return fz_interesting(f) & 0xffffff;
    }
}

/* A PSN near what the responder expects: mostly it, else a duplicate, ... */
static uint32_t fze_psn(Fz *f, uint32_t expected)
{
    switch (fz_below(f, 10)) {
    case 0:
        return (expected - 1 - fz_below(f, 8)) & 0xffffff;
    case 1:
        return (expected + 1 + fz_below(f, 100)) & 0xffffff;
    case 2:
        return fz_below(f, 1 << 24);
    default:
        return expected;
    }
}

/*
 * A request to a device QP as its peer would send it: of the QP's
 * transport, at the PSN it expects (mostly), with good keys and
 * addresses (mostly); a message of several packets now and then.
 */
static void fze_request(Fz *f)
{
    FzEth *e = f->eth;
    struct qhca_qp_attr a;
    uint32_t qpn = fze_target(f);
    uint32_t mtu = fze_query(f, qpn, &a);
    uint32_t psn = le32_to_cpu(a.rq_psn), pkts = 1, k;
    uint8_t tr;
    QtRoceAddr ad = qt_roce_addr(fze_v6(f, qpn));
    unsigned kind = fz_below(f, 9);
    uint64_t va;
    uint32_t total, rkey = fze_rkey(f);

    ad.sport = 0xc000 | fz_below(f, 0x4000);
    switch (a.type) {
    case QHCA_QPT_UC:
        tr = QT_IB_UC;
        break;
    case QHCA_QPT_UD:
    case QHCA_QPT_GSI:
        tr = QT_IB_UD;
        break;
    case QHCA_QPT_XRC_TGT:
        tr = QT_IB_XRC;
        break;
    default:
        tr = a.state == 0xff ? 0x20 * fz_below(f, 8) : QT_IB_RC;
        break;
    }
    if (fz_chance(f, 3)) {
        tr = 0x20 * fz_below(f, 8);
    }
    if (tr == QT_IB_UD) {
        /* SEND_ONLY with a DETH: the QP's Q_Key (mostly), any source. */
        uint32_t len = fz_chance(f, 90) ? fz_below(f, mtu + 1) :
                       fz_below(f, 2 * mtu);
        uint32_t qkey = qpn == QHCA_GSI_QPN && fz_chance(f, 70) ?
                        QHCA_GSI_QKEY : le32_to_cpu(a.qkey);
        bool imm = fz_chance(f, 30);
        size_t n = qt_bth(e->ib, tr | (fz_chance(f, 95) ?
                          (imm ? QT_IB_SEND_ONLY_IMM : QT_IB_SEND_ONLY) :
                          fz_below(f, 32)), fz_chance(f, 20), false,
                          (4 - len % 4) % 4, qpn, fz_below(f, 1 << 24));

        if (fz_chance(f, 20)) {
            /* To a multicast group the grammar's QPs join (ATTACH_MCAST). */
            fzv_mgid(fz_below(f, FZ_NMCAST), ad.dgid);
            memcpy(ad.sgid, qt_peer_ip6, 16);
            memcpy(ad.dmac, (const uint8_t[]){ 0x33, 0x33 }, 2);
            memcpy(ad.dmac + 2, ad.dgid + 12, 4);
            stl_be_p(e->ib + 4, QHCA_MCAST_QPN);
            qkey = FZV_QKEY;
        }
        n += fze_put(e->ib + n, fz_chance(f, 85) ? qkey :
                     (uint32_t)fz_interesting(f), 4);
        n += fze_put(e->ib + n, fz_below(f, 1 << 24), 4);
        if (imm) {
            n += fze_put(e->ib + n, g_rand_int(f->r), 4);
        }
        n += fze_payload(f, e->ib + n, len);
        fze_send_ib(f, &ad, n);
        fz_pair(f, "eth-req", tr | 4, qpn == QHCA_GSI_QPN);
        return;
    }
    if (a.state == 0xff) {
        psn = fz_below(f, 1 << 24);
    }
    psn = fze_psn(f, psn);
    if (kind == 1 || kind == 3) {
        pkts = 2 + fz_below(f, 4);
    }
    total = kind == 4 ? (fz_chance(f, 80) ? 1 + fz_below(f, 4 * mtu) :
                         fze_big_len(f)) :
            kind == 1 || kind == 3 ? (pkts - 1) * mtu + 1 +
                                     fz_below(f, mtu) :
            fz_below(f, mtu + 1);
    va = fze_va(f, MIN(total, 1u << 20), kind == 5);
    for (k = 0; k < pkts; k++) {
        bool first = k == 0, last = k == pkts - 1;
        uint32_t len = last ? total - k * mtu : mtu;
        uint8_t op;
        size_t n;

        switch (kind) {
        case 0:
        case 1:
        case 6:
            op = pkts == 1 ? QT_IB_SEND_ONLY : first ? QT_IB_SEND_FIRST :
                 last ? QT_IB_SEND_LAST : QT_IB_SEND_MIDDLE;
            if (last && fz_chance(f, 30)) {
                op += fz_chance(f, 50) ? 1 :
                      (pkts == 1 ? QT_IB_SEND_ONLY_INV : QT_IB_SEND_LAST_INV) -
                      op;
            }
            break;
        case 2:
        case 3:
            op = pkts == 1 ? QT_IB_WRITE_ONLY : first ? QT_IB_WRITE_FIRST :
                 last ? QT_IB_WRITE_LAST : QT_IB_WRITE_MIDDLE;
            if (last && fz_chance(f, 30)) {
                op++;
            }
            break;
        case 4:
            op = QT_IB_READ_REQUEST;
            break;
        case 5:
            op = fz_chance(f, 50) ? QT_IB_CMP_SWAP : QT_IB_FETCH_ADD;
            break;
        case 7:
            /* A responder's packet at the requester: unasked for. */
            op = QT_IB_READ_RESP_FIRST + fz_below(f, 6);
            break;
        default:
            op = fz_below(f, 32);
            break;
        }
        if (fz_chance(f, 3)) {
            len = fz_below(f, 2 * mtu);     /* a packet of the wrong size */
        }
        n = qt_bth(e->ib, tr | op, fz_chance(f, 20),
                   last ? fz_chance(f, 70) : fz_chance(f, 10),
                   fz_chance(f, 95) ? (4 - len % 4) % 4 : fz_below(f, 4), qpn,
                   (psn + k) & 0xffffff);
        if (tr == QT_IB_XRC) {
            n += fze_put(e->ib + n, fzv_xrc_srqn(f), 4);
        }
        switch (op) {
        case QT_IB_WRITE_FIRST:
        case QT_IB_WRITE_ONLY:
        case QT_IB_WRITE_ONLY_IMM:
        case QT_IB_READ_REQUEST:
            n += fze_reth(f, e->ib + n, va, rkey,
                          fz_chance(f, 90) ? total : fze_big_len(f));
            len = op == QT_IB_READ_REQUEST ? 0 : len;
            break;
        case QT_IB_CMP_SWAP:
        case QT_IB_FETCH_ADD:
            n += fze_put(e->ib + n, va, 8);
            n += fze_put(e->ib + n, rkey, 4);
            n += fze_put(e->ib + n, fz_rand64(f), 8);
            n += fze_put(e->ib + n, fz_chance(f, 50) ? 0 : fz_rand64(f), 8);
            len = 0;
            break;
        case QT_IB_READ_RESP_FIRST:
        case QT_IB_READ_RESP_LAST:
        case QT_IB_READ_RESP_ONLY:
        case QT_IB_ACK:
        case QT_IB_ATOMIC_ACK:
            n += fze_aeth(e->ib + n, fz_below(f, 256), fz_below(f, 1 << 24));
            if (op == QT_IB_ATOMIC_ACK) {
                n += fze_put(e->ib + n, fz_rand64(f), 8);
                len = 0;
            }
            break;
        default:
            break;
        }
        if (op == QT_IB_SEND_LAST_IMM || op == QT_IB_SEND_ONLY_IMM ||
            op == QT_IB_WRITE_LAST_IMM || op == QT_IB_WRITE_ONLY_IMM) {
            n += fze_put(e->ib + n, g_rand_int(f->r), 4);
        } else if (op == QT_IB_SEND_LAST_INV || op == QT_IB_SEND_ONLY_INV) {
            n += fze_put(e->ib + n, fz_chance(f, 70) ? fzv_key(f) :
                         fz_key(f), 4);
        }
        n += fze_payload(f, e->ib + n, MIN(len, FZE_IB_MAX - n - 4));
        fze_send_ib(f, &ad, n);
        if (fz_chance(f, 5)) {
            /* A packet of the message lost on the way. */
            k++;
        }
    }
    fz_pair(f, "eth-req", tr | kind, pkts);
}

/* A frame for the NIC: ARP, IP that is not RoCEv2, anything else. */
static void fze_nic(Fz *f)
{
    FzEth *e = f->eth;
    static const uint16_t types[] = {
        0x0806, 0x0800, 0x86dd, 0x88cc, 0x8100, 0x8035, 0x0842, 0x88f7,
    };
    size_t len = fz_chance(f, 85) ? 42 + fz_below(f, 1500) :
                 fz_chance(f, 50) ? fz_below(f, 60) :
                 9000 + fz_below(f, FZE_FRAME_MAX - 9000);
    uint8_t *fr = e->frame;
    uint16_t type = fz_chance(f, 85) ? types[fz_below(f, ARRAY_SIZE(types))] :
                    fz_below(f, 0x10000);

    fze_payload(f, fr, len);
    switch (fz_below(f, 5)) {
    case 0:
        memset(fr, 0xff, 6);
        break;
    case 1:
        memcpy(fr, (const uint8_t[]){ 0x33, 0x33, 0, 0, 0, 1 }, 6);
        break;
    case 2:
        fr[0] |= 1;
        break;
    default:
        memcpy(fr, qt_eth_mac, 6);
        break;
    }
    memcpy(fr + 6, fz_chance(f, 95) ? qt_peer_mac : qt_eth_mac, 6);
    if (len >= 14) {
        stw_be_p(fr + 12, type);
    }
    if (len >= 42 && type == 0x0806) {
        /* Who has 10.0.0.1?  The guest's ARP, if a RAW_ETH QP listens. */
        static const uint8_t arp[8] = { 0, 1, 8, 0, 6, 4, 0, 1 };

        memcpy(fr + 14, arp, 8);
        memcpy(fr + 22, qt_peer_mac, 6);
        memcpy(fr + 28, qt_peer_ip4 + 12, 4);
        memset(fr + 32, 0, 6);
        memcpy(fr + 38, qt_port_ip4 + 12, 4);
    } else if (len >= 34 && type == 0x0800 && fz_chance(f, 70)) {
        /* UDP to 4791 of an address not the port's: the NIC's, not RoCE. */
        fr[14] = 0x45;
        stw_be_p(fr + 16, len - 14);
        fr[23] = 17;
        memcpy(fr + 26, qt_peer_ip4 + 12, 4);
        memcpy(fr + 30, qt_peer_ip4 + 12, 4);
        if (len >= 42) {
            stw_be_p(fr + 36, QT_ROCE_PORT);
        }
    }
    fz_pair(f, "eth-nic", type == 0x0806 || type == 0x0800 ||
            type == 0x86dd ? type : 0, len < 60 ? 0 : len <= 1514 ? 1 : 2);
    fze_wire(f, fr, len, false);
}

/* One frame (or one message) onto the wire, then what came back. */
void fze_frame(Fz *f)
{
    unsigned k = fz_below(f, 10);

    fze_link(f);
    if (k < 6) {
        fze_request(f);
    } else if (k < 8) {
        fze_answer(f);
    } else if (k < 9) {
        fze_nic(f);
    } else if (f->eth->last_len) {
        /* The last good frame again, as it was or broken differently. */
        FzEth *e = f->eth;

        memcpy(e->frame, e->last, e->last_len);
        fze_wire(f, e->frame, e->last_len, fz_chance(f, 70));
    }
    qt_wire_flush(f->t, 1000);
    fze_drain(f);
}

/*
 * A storm: many frames at once to one QP (up to three times what the
 * port's receive queue holds), of one kind -- its expected
 * PSNs in a row (more than it has receive WQEs or read credits for),
 * one PSN over and over, PSNs at random, ACKs and NAKs at random -- then
 * the device given a moment, the clock a step.
 */
void fze_storm(Fz *f)
{
    FzEth *e = f->eth;
    struct qhca_qp_attr a;
    uint32_t qpn = fze_target(f), psn;
    unsigned kind = fz_below(f, 5), k;
    /* Now and then more than the port's receive queue holds (512). */
    unsigned count = fz_chance(f, 85) ? 16 + fz_below(f, 240) :
                     512 + fz_below(f, 1024);
    QtRoceAddr ad = qt_roce_addr(fze_v6(f, qpn));
    uint8_t tr;

    fze_link(f);
    fze_query(f, qpn, &a);
    psn = le32_to_cpu(a.rq_psn);
    tr = a.type == QHCA_QPT_UC ? QT_IB_UC : QT_IB_RC;
    for (k = 0; k < count; k++) {
        uint32_t p = kind == 0 ? psn + k : kind == 1 ? psn :
                     fz_below(f, 1 << 24);
        size_t n;

        switch (kind) {
        case 0:
        case 1:
        case 2:
            if (fz_chance(f, 50) && tr == QT_IB_RC) {
                n = qt_bth(e->ib, tr | QT_IB_READ_REQUEST, false, true, 0,
                           qpn, p & 0xffffff);
                n += fze_reth(f, e->ib + n, fze_va(f, 4096, false),
                              f->phys_key, 1 + fz_below(f, 4096));
            } else {
                n = qt_bth(e->ib, tr | (fz_chance(f, 50) ? QT_IB_SEND_ONLY :
                                        QT_IB_WRITE_ONLY), false,
                           fz_chance(f, 30), 0, qpn, p & 0xffffff);
                if ((e->ib[0] & 0x1f) == QT_IB_WRITE_ONLY) {
                    n += fze_reth(f, e->ib + n, fze_va(f, 64, false),
                                  f->phys_key, 64);
                }
                n += fze_payload(f, e->ib + n, 64);
            }
            break;
        default:
            n = qt_bth(e->ib, tr | QT_IB_ACK, false, false, 0, qpn,
                       p & 0xffffff);
            n += fze_aeth(e->ib + n, kind == 3 ? 0x1f : fz_below(f, 256),
                          fz_below(f, 1 << 24));
            break;
        }
        qt_wire_send(f->t, e->frame, qt_roce_frame(&ad, e->ib, n, e->frame));
        if (k % 32 == 31) {
            fze_drain(f);
        }
    }
    fz_pair(f, "eth-storm", kind, count >= 512 ? 2 : count >= 128);
    qt_wire_flush(f->t, 20000);
    g_usleep(2000);
    fze_drain(f);
    qtest_clock_step(f->t->qts, 1ll << fz_below(f, 24));
}

/*
 * The rest of the segment stops taking frames for a few steps (a
 * congested link, a peer that does not read): the socket to QEMU fills,
 * the netdev queues, and the port's transmit queue and the transport's
 * wait for room (qhca-net.c) are what the next steps run against.
 */
void fze_stall(Fz *f)
{
    FzEth *e = f->eth;
    struct qhca_qp_attr a;
    uint32_t qpn = f->qp[0].qpn, psn;
    unsigned k, count = 64 + fz_below(f, 1536);
    QtRoceAddr ad = qt_roce_addr(fze_v6(f, qpn));

    e->stall = 4 + fz_below(f, 40);
    if (!f->qp_live[0]) {
        return;
    }
    /*
     * In order READs of 4 KiB to QP 0 (connected to the peer the fuzzer
     * plays since the last reset, if nothing has moved it since): each
     * is answered with one frame or more, which the device paces by its
     * transmit queue (512 frames) once the socket to QEMU is full.
     */
    fze_query(f, qpn, &a);
    psn = le32_to_cpu(a.rq_psn);
    for (k = 0; k < count; k++) {
        size_t n = qt_bth(e->ib, QT_IB_RC | QT_IB_READ_REQUEST, false, true,
                          0, qpn, (psn + k) & 0xffffff);

        n += fze_reth(f, e->ib + n, f->scratch, f->phys_key, 4096);
        qt_wire_send(f->t, e->frame, qt_roce_frame(&ad, e->ib, n, e->frame));
    }
}

/* ------------------------------------------------------------------ */
/* Commands of the Ethernet port                                       */

/* SET_GID: the port's own entries, others, and bad ones. */
static void fze_set_gid(Fz *f)
{
    struct qhca_cmd_set_gid c = {
        .index = cpu_to_le16(fz_chance(f, 85) ? fz_below(f, 16) :
                             (uint16_t)fz_interesting(f)),
        .type = fz_chance(f, 85) ? QHCA_GID_ROCE_V2 * fz_below(f, 2) :
                fz_below(f, 256),
    };
    uint8_t status;

    switch (fz_below(f, 6)) {
    case 0:
        memcpy(c.gid, qt_port_ip4, 16);
        c.gid[15] = 3 + fz_below(f, 8);
        break;
    case 1:
        memcpy(c.gid, qt_port_ip6, 16);
        c.gid[15] = 3 + fz_below(f, 8);
        break;
    case 2:     /* multicast, v4 and v6 */
        memcpy(c.gid, fz_chance(f, 50) ? qt_port_ip4 : qt_port_ip6, 16);
        c.gid[fz_chance(f, 50) ? 0 : 12] = fz_chance(f, 50) ? 0xff : 0xe0;
        break;
    case 3:     /* 0.0.0.0, 255.255.255.255 */
        memcpy(c.gid, qt_port_ip4, 12);
        memset(c.gid + 12, fz_chance(f, 50) ? 0 : 0xff, 4);
        break;
    case 4:
        break;
    default:
        fz_mutate(f, c.gid, sizeof(c.gid));
        break;
    }
    if (c.type == QHCA_GID_NONE && fz_chance(f, 80)) {
        memset(c.gid, 0, sizeof(c.gid));
    }
    if (fz_chance(f, 15)) {
        fz_mutate(f, &c, sizeof(c));
    }
    status = qt_cmd(f->t, QHCA_CMD_SET_GID, &c, sizeof(c), NULL);
    fz_pair(f, "cmd", QHCA_CMD_SET_GID, status);
    if (status == QHCA_AQ_SUCCESS && le16_to_cpu(c.index) <= QT_GID_IP6 &&
        fz_chance(f, 80)) {
        /* The port's own addresses back, so that the frames reach it. */
        qt_eth_gids(f->t);
    }
}

/* SET_QP_AV of any QP, its fields good or not. */
static void fze_set_av(Fz *f)
{
    bool v6 = fz_chance(f, 40);
    struct qhca_cmd_set_qp_av c = {
        .qpn = cpu_to_le32(fz_qpn(f)),
        .sgid_index = fz_chance(f, 85) ? (v6 ? QT_GID_IP6 : QT_GID_IP4) :
                      fz_below(f, 256),
        .hop_limit = fz_below(f, 256),
        .flow_label = cpu_to_le32(fz_chance(f, 85) ? fz_below(f, 1 << 20) :
                                  (uint32_t)fz_interesting(f)),
        .traffic_class = fz_below(f, 256),
    };
    uint8_t status;

    memcpy(c.dgid, fz_chance(f, 85) ? (v6 ? qt_peer_ip6 : qt_peer_ip4) :
           (v6 ? qt_peer_ip4 : qt_port_ip6), 16);
    memcpy(c.dmac, qt_peer_mac, 6);
    switch (fz_below(f, 8)) {
    case 0:
        c.dmac[0] |= 1;
        break;
    case 1:
        memset(c.dmac, 0, 6);
        break;
    case 2:
        c.dgid[0] = 0xff;
        break;
    case 3:
        fz_mutate(f, &c, sizeof(c));
        break;
    default:
        break;
    }
    status = qt_cmd(f->t, QHCA_CMD_SET_QP_AV, &c, sizeof(c), NULL);
    fz_pair(f, "cmd", QHCA_CMD_SET_QP_AV, status);
    if (status == QHCA_AQ_SUCCESS) {
        f->eth->v6[le32_to_cpu(c.qpn) % FZE_QPNS] =
            memcmp(c.dgid, qt_peer_ip4, 12) != 0;
    }
}

/*
 * A GSI QP (QP1) or a RAW_ETH QP, brought to RTS as the kernel does
 * (GSI: a UD QP with Q_Key 0x80010000; RAW_ETH: the state alone), with
 * receives posted and a send: a UD datagram to the peer's QP1, or a
 * whole frame from RAM.
 */
static void fze_special_qp(Fz *f)
{
    bool gsi = fz_chance(f, 50);
    uint8_t type = gsi ? QHCA_QPT_GSI : QHCA_QPT_RAW_ETH;
    int cq = fzv_cq(f), slot = fzv_new_qp(f, type, -1, 0, cq);
    struct qhca_cmd_modify_qp m = {
        .attr_mask = cpu_to_le32(QHCA_QP_ATTR_STATE),
        .qkey = cpu_to_le32(QHCA_GSI_QKEY),
    };
    uint8_t status = QHCA_AQ_SUCCESS, st;
    QhcaQp *qp;

    fz_pair(f, "eth-special", type, slot >= 0);
    if (slot < 0) {
        return;
    }
    qp = &f->qp[slot];
    for (st = QHCA_QPS_INIT; st <= QHCA_QPS_RTS && !status; st++) {
        m.qpn = cpu_to_le32(qp->qpn);
        m.state = st;
        m.attr_mask = cpu_to_le32(QHCA_QP_ATTR_STATE |
                                  (gsi && st == QHCA_QPS_INIT ?
                                   QHCA_QP_ATTR_QKEY : 0) |
                                  (gsi && st == QHCA_QPS_RTS ?
                                   QHCA_QP_ATTR_SQ_PSN : 0));
        status = qt_cmd(f->t, QHCA_CMD_MODIFY_QP, &m, sizeof(m), NULL);
    }
    fz_pair(f, "eth-special-rts", type, status);
    fzv_recvs(f, slot, 1 + fz_below(f, 4));
    if (gsi) {
        struct qhca_sq_wqe_ud u = {
            .wr_id = cpu_to_le64(f->steps),
            .opcode = QHCA_WR_SEND,
            .flags = QHCA_WQE_F_SIGNALED,
            .num_sge = 1,
            .dest_qpn = cpu_to_le32(QHCA_GSI_QPN),
            .qkey = cpu_to_le32(QHCA_GSI_QKEY),
        };
        struct qhca_sge sge = {
            .addr = cpu_to_le64(f->scratch + 4096 * fz_below(f, 128)),
            .length = cpu_to_le32(256),
            .lkey = cpu_to_le32(f->phys_key),
        };

        fze_ud_av(f, &u);
        qt_qp_post_send(f->t, qp, &u, &sge, 1);
    } else {
        /* A frame to the peer, whole, from scratch RAM (or any length). */
        uint64_t at = f->scratch + 4096 * fz_below(f, 128);
        uint32_t len = fz_chance(f, 80) ? 60 + fz_below(f, 1454) :
                       fz_chance(f, 50) ? fz_below(f, 14) :
                       QHCA_ETH_FRAME_MAX + fz_below(f, 3) - 1;
        struct qhca_sq_wqe w = {
            .wr_id = cpu_to_le64(f->steps),
            .opcode = QHCA_WR_SEND,
            .flags = QHCA_WQE_F_SIGNALED,
            .num_sge = 1,
        };
        struct qhca_sge sge = {
            .addr = cpu_to_le64(at),
            .length = cpu_to_le32(len),
            .lkey = cpu_to_le32(f->phys_key),
        };
        uint8_t hdr[14];

        memcpy(hdr, qt_peer_mac, 6);
        memcpy(hdr + 6, qt_eth_mac, 6);
        stw_be_p(hdr + 12, 0x88b5);     /* IEEE local experimental */
        qtest_memwrite(f->t->qts, at, hdr, sizeof(hdr));
        qt_qp_post_send(f->t, qp, &w, &sge, 1);
    }
    qt_qp_ring_sq(f->t, qp);
}

/* A connected QP of the model connected afresh to a peer QP. */
static void fze_reconnect(Fz *f)
{
    int i = fz_slot(f, f->qp_live, FZ_NQP, true);
    uint32_t dest = 2 + fz_below(f, 64);

    if (i < 0 || f->qp_type[i] != QHCA_QPT_RC) {
        return;
    }
    qt_qp_modify(f->t, &f->qp[i], QHCA_QPS_RESET, 0, NULL);
    f->qp[i].sq_pi = f->qp[i].rq_pi = 0;
    fz_pair(f, "eth-connect", 0, fze_connect_rc(f, i, dest));
    fzv_recvs(f, i, 1 + fz_below(f, 4));
}

void fze_cmd(Fz *f)
{
    switch (fz_below(f, 8)) {
    case 0:
    case 1:
        fze_set_gid(f);
        break;
    case 2:
    case 3:
        fze_set_av(f);
        break;
    case 4:
    case 5:
        fze_special_qp(f);
        break;
    default:
        fze_reconnect(f);
        break;
    }
}
