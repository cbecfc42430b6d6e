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
                  QHCA_ACCESS_REMOTE_ATOMIC;
    m[1].qkey = cpu_to_le32(FZV_QKEY);
    m[2].attr_mask = cpu_to_le32(QHCA_QP_ATTR_STATE | (ud ? 0 : rtr));
    m[2].state = QHCA_QPS_RTR;
    m[2].dlid = cpu_to_le16(QT_LID);
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
    if (qt_wr_is(opcode, QHCA_WR_F_ATOMIC)) {
        sge.length = cpu_to_le32(8);
        sge.addr = cpu_to_le64(le64_to_cpu(sge.addr) & ~7ull);
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
        fzv_post(f, a, fz_chance(f, 70) ? QHCA_WR_RDMA_READ :
                 QHCA_WR_ATOMIC_FETCH_AND_ADD, fz_below(f, 4096),
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
             * looks full; or the CQ destroyed (refused while in use).
             */
            if (fz_chance(f, 50)) {
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
