/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qhca-fuzz's grammar of on-demand paging (interface 1.8; see qhca-fuzz.c
 * for the runs): REG_MR of flags ODP and ODP_IMPLICIT with their fields
 * right and wrong; ODP_MAP with good entries (pages of the scratch area)
 * and bad ones (unaligned, outside guest RAM, on a BAR, without READ,
 * reserved bits), pages beyond the MR, every npages; ODP_UNMAP of random
 * ranges; QUERY_PAGE_FAULT and RESUME_PAGE_FAULT of any QP, kind and
 * status; and a step that plays the driver's fault handler: it finds the
 * QPs with a pending fault and maps the pages and resumes (RESOLVED), or
 * gives up (FAILED), or leaves the fault alone for good.  At every resync
 * the run gets an explicit ODP MR and an implicit one, which SGEs and
 * remote addresses of the base grammar aim at now and then, so that
 * requester and responder faults happen on every transport the run has.
 *
 * On a device without QHCA_DEV_CAP_ON_DEMAND_PAGING the same steps run:
 * the flags are then unknown and the commands BAD_OPCODE.
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qhca-fuzz.h"

#define FZO_PAGE            4096ull
/* The explicit MR: FZO_PAGES pages at a process-like address. */
#define FZO_IOVA            0x7f3400000000ull
#define FZO_PAGES           64
/* Where in the implicit MR the grammar's accesses go: FZO_PAGES pages. */
#define FZO_IMP_VA          0x55aa00000000ull
/* Most pages one answer maps (a fault names at most a message's bytes). */
#define FZO_ANSWER_PAGES    16

static bool fzo_has(Fz *f)
{
    return f->caps & QHCA_DEV_CAP_ON_DEMAND_PAGING;
}

/* A page of the scratch area, which the fuzzer lets the device write. */
static uint64_t fzo_page(Fz *f)
{
    uint64_t base = ROUND_UP(f->scratch, FZO_PAGE);
    uint64_t n = (f->scratch + FZ_SCRATCH - base) / FZO_PAGE;

    return base + FZO_PAGE * fz_below(f, n);
}

/* An ODP_MAP entry: mostly a good one, else each way of being bad. */
static uint64_t fzo_entry(Fz *f)
{
    uint64_t perm = QHCA_ODP_PAGE_READ |
                    (fz_chance(f, 70) ? QHCA_ODP_PAGE_WRITE : 0);
    uint64_t a;

    if (fz_chance(f, 80)) {
        return fzo_page(f) | perm;
    }
    switch (fz_below(f, 7)) {
    case 0:
        return 0;                               /* absent */
    case 1:
        return (fzo_page(f) + 8 * (1 + fz_below(f, 511))) | perm;
    case 2:
        return fzo_page(f) | QHCA_ODP_PAGE_WRITE;           /* no READ */
    case 3:
        return fzo_page(f) | perm | (4ull << fz_below(f, 10)); /* rsvd */
    case 4:
        /* Any address the base grammar aims at, admin rings aside. */
        a = fz_addr(f, FZO_PAGE) & ~(FZO_PAGE - 1);
        return fz_hits_admin(f, a, FZO_PAGE) ? fzo_page(f) | perm : a | perm;
    case 5:
        return (RAM_END + FZO_PAGE * fz_below(f, 16)) | perm;
    default:
        return fz_interesting(f);
    }
}

/* The MR index an ODP command names: mostly one of the run's ODP MRs. */
static uint32_t fzo_index(Fz *f, bool *implicit)
{
    *implicit = false;
    if (fz_chance(f, 85) && (f->odp_key || f->odp_imp_key)) {
        if (f->odp_imp_key && (!f->odp_key || fz_chance(f, 40))) {
            *implicit = true;
            return f->odp_imp_key >> 8;
        }
        return f->odp_key >> 8;
    }
    return fz_chance(f, 50) ? fz_key(f) >> 8 : fz_interesting(f);
}

/* The first page of a command on MR @implicit's pages, mostly in range. */
static uint64_t fzo_first(Fz *f, bool implicit)
{
    uint64_t base = implicit ? FZO_IMP_VA / FZO_PAGE : 0;

    if (fz_chance(f, 85)) {
        return base + fz_below(f, FZO_PAGES);
    }
    return fz_chance(f, 50) ? base + FZO_PAGES - fz_below(f, 4) :
                              fz_interesting(f);
}

/* Admin command @op with @len bytes of payload, mutated if @mutate. */
static uint8_t fzo_submit(Fz *f, uint16_t op, const void *payload, size_t len,
                          bool mutate)
{
    struct qhca_aq_sqe sqe = { .opcode = cpu_to_le16(op) };
    uint8_t status;

    memcpy(sqe.payload, payload, len);
    if (mutate) {
        fz_mutate(f, sqe.payload, len);
    }
    status = qt_submit(f->t, &sqe, NULL);
    fz_pair(f, "cmd", op, status);
    return status;
}

/* ODP_MAP of @n entries from @first of MR @index, the entries given. */
static uint8_t fzo_map_cmd(Fz *f, uint32_t index, uint64_t first,
                           const uint64_t *e, uint32_t n, uint32_t npages,
                           bool mutate)
{
    uint64_t pbl = fz_chance(f, 95) ? f->scratch :
                   fz_addr(f, 8ull * n) & ~(fz_chance(f, 80) ? 7ull : 0);
    struct qhca_cmd_odp_map c = {
        .first_page = cpu_to_le64(first),
        .pbl_addr = cpu_to_le64(pbl),
        .index = cpu_to_le32(index),
        .npages = cpu_to_le32(npages),
    };
    uint32_t i;

    if (pbl == f->scratch || !fz_hits_admin(f, pbl, 8ull * n)) {
        for (i = 0; i < n; i++) {
            qtest_writeq(f->t->qts, pbl + 8 * i, cpu_to_le64(e[i]));
        }
    }
    return fzo_submit(f, QHCA_CMD_ODP_MAP, &c, sizeof(c), mutate);
}

static uint8_t fzo_unmap_cmd(Fz *f, uint32_t index, uint64_t first,
                             uint64_t npages, bool mutate)
{
    struct qhca_cmd_odp_unmap c = {
        .first_page = cpu_to_le64(first),
        .npages = cpu_to_le64(npages),
        .index = cpu_to_le32(index),
    };

    return fzo_submit(f, QHCA_CMD_ODP_UNMAP, &c, sizeof(c), mutate);
}

static uint8_t fzo_resume_cmd(Fz *f, uint32_t qpn, uint8_t kind,
                              uint8_t status)
{
    uint8_t s = qt_resume_page_fault(f->t, qpn, kind, status);

    fz_pair(f, "cmd", QHCA_CMD_RESUME_PAGE_FAULT, s);
    return s;
}

static uint8_t fzo_query_cmd(Fz *f, uint32_t qpn,
                             struct qhca_page_fault_info *info)
{
    uint8_t s = qt_query_page_fault(f->t, qpn, info);

    fz_pair(f, "cmd", QHCA_CMD_QUERY_PAGE_FAULT, s);
    return s;
}

/* REG_MR of an ODP MR, mostly well formed, one field wrong now and then. */
static void fzo_reg_cmd(Fz *f, struct qhca_cmd_reg_mr *c, bool implicit)
{
    memset(c, 0, sizeof(*c));
    c->flags = QHCA_MR_F_ODP | (implicit ? QHCA_MR_F_ODP_IMPLICIT : 0);
    if (!implicit) {
        c->iova = cpu_to_le64(FZO_IOVA);
        c->length = cpu_to_le64(FZO_PAGES * FZO_PAGE);
    }
    c->pdn = cpu_to_le32(f->h.pdn);
    c->access = QHCA_ACCESS_ALL;
    c->page_shift = 12;
    c->key = fz_below(f, 256);
    if (fz_chance(f, 70)) {
        return;
    }
    switch (fz_below(f, 8)) {
    case 0:
        c->flags |= 1u << fz_below(f, 8);       /* PHYS, DM, ... */
        break;
    case 1:
        c->pbl_addr = cpu_to_le64(f->scratch);
        break;
    case 2:
        c->npages = cpu_to_le32(fz_interesting(f));
        break;
    case 3:
        c->iova = cpu_to_le64(fz_interesting(f));
        break;
    case 4:
        c->length = cpu_to_le64(fz_interesting(f));
        break;
    case 5:
        c->page_shift = fz_below(f, 40);
        break;
    case 6:
        c->access = fz_below(f, 256);
        break;
    default:
        c->flags = fz_below(f, 256);
        break;
    }
}

/*
 * At each resync (after QUERY_DEVICE): the run's explicit and implicit
 * ODP MRs, with every access, and a few of their pages present.
 */
void fzo_resynced(Fz *f)
{
    struct qhca_cmd_reg_mr c;
    uint32_t index;
    uint64_t e[8];
    unsigned i;

    f->odp_key = f->odp_imp_key = 0;
    if (!fzo_has(f)) {
        return;
    }
    fzo_reg_cmd(f, &c, false);
    c.access = QHCA_ACCESS_ALL;
    c.flags = QHCA_MR_F_ODP;
    c.iova = cpu_to_le64(FZO_IOVA);
    c.length = cpu_to_le64(FZO_PAGES * FZO_PAGE);
    c.pbl_addr = c.npages = 0;
    c.page_shift = 12;
    g_assert_cmpuint(qt_cmd(f->t, QHCA_CMD_REG_MR, &c, sizeof(c), &index),
                     ==, QHCA_AQ_SUCCESS);
    f->odp_key = index << 8 | c.key;
    c.flags |= QHCA_MR_F_ODP_IMPLICIT;
    c.iova = c.length = 0;
    g_assert_cmpuint(qt_cmd(f->t, QHCA_CMD_REG_MR, &c, sizeof(c), &index),
                     ==, QHCA_AQ_SUCCESS);
    f->odp_imp_key = index << 8 | c.key;
    for (i = 0; i < ARRAY_SIZE(e); i++) {
        e[i] = fzo_page(f) | QHCA_ODP_PAGE_READ | QHCA_ODP_PAGE_WRITE;
    }
    fzo_map_cmd(f, f->odp_key >> 8, fz_below(f, FZO_PAGES - 8), e, 8, 8,
                false);
}

/* An SGE in one of the run's ODP MRs (0 length: none of them). */
struct qhca_sge fzo_sge(Fz *f)
{
    bool implicit = f->odp_imp_key && (!f->odp_key || fz_chance(f, 40));
    uint32_t len = fz_chance(f, 80) ? fz_below(f, 3 * FZO_PAGE) :
                   (uint32_t)fz_interesting(f);
    uint64_t off = fz_chance(f, 90) ? fz_below(f, FZO_PAGES * FZO_PAGE) :
                   fz_interesting(f);

    if (!f->odp_key && !f->odp_imp_key) {
        return (struct qhca_sge) { 0 };
    }
    return (struct qhca_sge) {
        .addr = cpu_to_le64((implicit ? FZO_IMP_VA : FZO_IOVA) + off),
        .length = cpu_to_le32(len),
        .lkey = cpu_to_le32(implicit ? f->odp_imp_key : f->odp_key),
    };
}

/* A remote address and rkey in one of them; false if the run has none. */
bool fzo_remote(Fz *f, uint64_t *addr, uint32_t *rkey)
{
    bool implicit = f->odp_imp_key && (!f->odp_key || fz_chance(f, 40));

    if (!f->odp_key && !f->odp_imp_key) {
        return false;
    }
    /* 8-byte aligned, so that atomics are well formed. */
    *addr = (implicit ? FZO_IMP_VA : FZO_IOVA) +
            8 * fz_below(f, FZO_PAGES * FZO_PAGE / 8);
    *rkey = implicit ? f->odp_imp_key : f->odp_key;
    return true;
}

/*
 * The driver's fault handler: every live QP's pending faults, each
 * resolved (its pages mapped, then RESUME RESOLVED), failed, resumed
 * without mapping anything (a new fault follows), or left for good.
 */
void fzo_answer(Fz *f)
{
    struct qhca_page_fault_info info;
    int i, k;

    for (i = 0; i < FZ_NQP; i++) {
        if (!f->qp_live[i] ||
            fzo_query_cmd(f, f->qp[i].qpn, &info) != QHCA_AQ_SUCCESS) {
            continue;
        }
        for (k = 0; k < QHCA_PAGE_FAULT_KINDS; k++) {
            const struct qhca_page_fault *pf = &info.fault[k];
            uint64_t addr = le64_to_cpu(pf->addr);
            uint64_t len = MAX(le32_to_cpu(pf->length), 1);
            uint64_t first = addr / FZO_PAGE, e[FZO_ANSWER_PAGES];
            uint64_t n = MIN((addr % FZO_PAGE + len + FZO_PAGE - 1) /
                             FZO_PAGE, FZO_ANSWER_PAGES);
            unsigned j, choice = fz_below(f, 100);

            if (!(pf->flags & QHCA_PAGE_FAULT_F_PENDING) || choice >= 85) {
                continue;               /* never answered (for now) */
            }
            if (choice < 55) {
                /* Pages are counted from iova rounded down: 4 KiB here. */
                if (le32_to_cpu(pf->mr_index) == f->odp_key >> 8) {
                    first = addr / FZO_PAGE - FZO_IOVA / FZO_PAGE;
                }
                for (j = 0; j < n; j++) {
                    e[j] = fzo_page(f) | QHCA_ODP_PAGE_READ |
                           (fz_chance(f, 90) ? QHCA_ODP_PAGE_WRITE : 0);
                }
                fzo_map_cmd(f, le32_to_cpu(pf->mr_index), first, e, n, n,
                            false);
            }
            /* 55 .. 69: resumed with nothing mapped, 70 .. 84: failed. */
            fzo_resume_cmd(f, f->qp[i].qpn, k,
                           choice < 70 ? QHCA_PAGE_FAULT_RESOLVED :
                                         QHCA_PAGE_FAULT_FAILED);
        }
    }
}

/*
 * Traffic aimed at the ODP MRs: a well-formed signaled WQE on a live RC
 * QP (the resync connects the first two to each other), whose local or
 * remote bytes, or both, are in an ODP MR, with a receive for a SEND on
 * every other live QP; most of them fault, and fzo_answer() finds them.
 */
void fzo_traffic(Fz *f)
{
    static const uint8_t ops[] = {
        QHCA_WR_SEND, QHCA_WR_RDMA_WRITE, QHCA_WR_RDMA_READ,
        QHCA_WR_ATOMIC_CMP_AND_SWP, QHCA_WR_ATOMIC_FETCH_AND_ADD,
        QHCA_WR_SEND_WITH_IMM, QHCA_WR_RDMA_WRITE_WITH_IMM,
    };
    int i = fz_slot(f, f->qp_live, FZ_NQP, true), j;
    struct qhca_sq_wqe w = {
        .wr_id = cpu_to_le64(f->steps),
        .flags = QHCA_WQE_F_SIGNALED,
        .num_sge = 1,
    };
    struct qhca_sge sge;
    uint64_t raddr;
    uint32_t rkey;
    bool local = fz_chance(f, 60);

    if (i < 0 || f->qp_type[i] != QHCA_QPT_RC || !f->qp[i].sq_entries ||
        (!f->odp_key && !f->odp_imp_key)) {
        return;
    }
    w.opcode = ops[fz_below(f, ARRAY_SIZE(ops))];
    if (!local || fz_chance(f, 30)) {
        fzo_remote(f, &raddr, &rkey);
    } else {
        raddr = f->scratch + FZ_SCRATCH / 2 + 8 * fz_below(f, FZ_SCRATCH / 32);
        rkey = f->phys_key;
    }
    w.remote_addr = cpu_to_le64(raddr);
    w.rkey = cpu_to_le32(rkey);
    if (local) {
        sge = fzo_sge(f);
        if (le32_to_cpu(sge.length) > 3 * FZO_PAGE) {
            sge.length = cpu_to_le32(fz_below(f, 3 * FZO_PAGE));
        }
    } else {
        sge = qt_sge(f->scratch + fz_below(f, FZ_SCRATCH / 2),
                     fz_below(f, 3 * FZO_PAGE), f->phys_key);
    }
    if (qt_wr_is(w.opcode, QHCA_WR_F_ATOMIC)) {
        sge.length = cpu_to_le32(8);
        sge.addr = cpu_to_le64(le64_to_cpu(sge.addr) & ~7ull);
        w.compare_add = cpu_to_le64(fz_rand64(f));
        w.swap = cpu_to_le64(fz_rand64(f));
    }
    /* A receive for it on other live RC QPs, in an ODP MR or not. */
    for (j = 0; j < FZ_NQP; j++) {
        QhcaQp *qp = &f->qp[j];
        struct qhca_sge r = fz_chance(f, 50) ? fzo_sge(f) :
                            qt_sge(f->scratch + FZ_SCRATCH / 4,
                                   3 * FZO_PAGE, f->phys_key);

        if (j != i && f->qp_live[j] && !f->qp_srq[j] && qp->rq_entries &&
            f->qp_type[j] == QHCA_QPT_RC && fz_chance(f, 50)) {
            r.length = cpu_to_le32(3 * FZO_PAGE);
            qt_qp_post_recv(f->t, qp, f->steps, &r, 1);
        }
    }
    qt_qp_post_send(f->t, &f->qp[i], &w, &sge, 1);
    qt_qp_ring_sq(f->t, &f->qp[i]);
}

/* One ODP command of any kind, mostly about the run's own objects. */
void fzo_cmd(Fz *f)
{
    bool mutate = fz_chance(f, 25), implicit;
    uint64_t e[QHCA_ODP_MAP_MAX_PAGES];
    struct qhca_page_fault_info info;
    struct qhca_cmd_reg_mr c;
    uint32_t index, n, i;
    uint8_t s;

    switch (fz_below(f, 10)) {
    case 0:
        /* REG_MR, then most of the time DEREG_MR again. */
        fzo_reg_cmd(f, &c, fz_chance(f, 40));
        s = qt_cmd(f->t, QHCA_CMD_REG_MR, &c, sizeof(c), &index);
        fz_pair(f, "cmd", QHCA_CMD_REG_MR, s);
        if (s == QHCA_AQ_SUCCESS && fz_chance(f, 90)) {
            qt_handle_cmd(f->t, QHCA_CMD_DEREG_MR, index);
        }
        break;
    case 1:
    case 2:
    case 3:
        index = fzo_index(f, &implicit);
        n = fz_chance(f, 85) ? 1 + fz_below(f, 16) :
            fz_chance(f, 50) ? QHCA_ODP_MAP_MAX_PAGES + fz_below(f, 2) :
                               (uint32_t)fz_interesting(f);
        for (i = 0; i < MIN(n, QHCA_ODP_MAP_MAX_PAGES); i++) {
            e[i] = fz_chance(f, 90) ? fzo_page(f) | QHCA_ODP_PAGE_READ |
                   QHCA_ODP_PAGE_WRITE : fzo_entry(f);
        }
        fzo_map_cmd(f, index, fzo_first(f, implicit), e,
                    MIN(n, QHCA_ODP_MAP_MAX_PAGES), n, mutate);
        break;
    case 4:
        /* One bad entry among good ones. */
        index = fzo_index(f, &implicit);
        n = 1 + fz_below(f, 8);
        for (i = 0; i < n; i++) {
            e[i] = fzo_page(f) | QHCA_ODP_PAGE_READ;
        }
        e[fz_below(f, n)] = fzo_entry(f);
        fzo_map_cmd(f, index, fzo_first(f, implicit), e, n, n, mutate);
        break;
    case 5:
    case 6:
        index = fzo_index(f, &implicit);
        fzo_unmap_cmd(f, index, fzo_first(f, implicit),
                      fz_chance(f, 80) ? 1 + fz_below(f, FZO_PAGES) :
                                         fz_interesting(f), mutate);
        break;
    case 7:
        fzo_query_cmd(f, fz_chance(f, 80) ? fz_qpn(f) :
                      (uint32_t)fz_interesting(f), &info);
        break;
    case 8:
        fzo_resume_cmd(f, fz_qpn(f), fz_chance(f, 90) ? fz_below(f, 2) :
                       fz_below(f, 256), fz_chance(f, 90) ? fz_below(f, 2) :
                       fz_below(f, 256));
        break;
    default:
        /* The MR a fault may be waiting on goes away, or gets a window. */
        if (f->odp_key && fz_chance(f, 30)) {
            qt_handle_cmd(f->t, QHCA_CMD_DEREG_MR, f->odp_key >> 8);
            f->odp_key = 0;
        } else {
            fzo_answer(f);
        }
        break;
    }
}
