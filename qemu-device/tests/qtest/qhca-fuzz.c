/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qhca-fuzz: a seeded random driver of the qhca device through qtest.
 *
 *   qhca-fuzz [--time SECONDS] [--seed FIRST] [--seeds N] [--steps M]
 *             [--out DIR] [--trace-events FILE] [--net ib|eth|mix]
 *
 * Environment: QHCA_FUZZ_TIME, QHCA_FUZZ_SEED, QHCA_FUZZ_SEEDS,
 * QHCA_FUZZ_STEPS and QHCA_FUZZ_NET give the same values;
 * QTEST_QEMU_BINARY the QEMU;
 * QHCA_FUZZ_KEEP set keeps the log and trace of clean runs too.
 * --verbose lists every (command, status), CQE and other outcome seen.
 *
 * Each seed is one run in a child process (its own process group) with
 * its own QEMU: M steps drawn from a small grammar of valid-looking
 * actions -- admin commands with one field mutated half of the time,
 * objects created and destroyed, send and receive WQEs with SGEs and
 * remote addresses aimed at RAM, the BARs, the rings themselves, the end
 * of RAM and past 2^64, random doorbells, random register accesses and
 * resets.  After every step the device must still answer: MAGIC reads
 * back, STATUS is READY (nothing the fuzzer does may make the device
 * FATAL: rings are checked at creation) and QUERY_DEVICE succeeds.
 *
 * A finding is a run that did not end cleanly: an assertion of the
 * admin-queue contract (a completion with the wrong id, none within 5 s),
 * the device not answering or FATAL, QEMU dying (with an ASan/UBSan
 * build: any report), or no end within the per-run deadline (a hang);
 * with the Ethernet port also frames the port has not taken 10 s after
 * they were sent (it takes every frame, if only to drop it: a receive
 * path that stalls is a hang too).
 * Its seed replays the same inputs (qhca-fuzz --seed N --seeds 1); the
 * engine thread's timing against them may differ from run to run, so
 * the log and QEMU's trace of the run are kept beside it.
 *
 * The grammar covers RC, UC and UD QPs, SRQs, MRs with page lists and
 * physical MRs, device memory (1.7: REG_MR of flags DM, SGEs and remote
 * addresses in a device memory MR, host accesses to BAR 4, runs of each
 * dm-size kind), CQ arming, the EQ, batches of admin commands that fill
 * the admin CQ, and ENABLE on configurations of the fuzzer's choice;
 * qhca-fuzz-verbs.c adds XRC, memory windows, fast registration,
 * multicast and whole working configurations with traffic through them,
 * qhca-fuzz-faults.c INJECT_FAULT, the link-up property and the virtual
 * clock, qhca-fuzz-odp.c on-demand paging (1.8: ODP MRs, ODP_MAP and
 * ODP_UNMAP, page faults answered, failed or left pending).  Half of the
 * seeds run with MSI-X enabled (vectors masked).
 *
 * With --net mix (the default) every third seed, with --net eth every
 * seed, puts the port on a socket netdev whose other end the fuzzer
 * holds (interface 1.5, when this QEMU's qhca has a netdev property):
 * qhca-fuzz-verbs.c then also plays the rest of the Ethernet segment --
 * RoCEv2 frames built from what it knows, mutated ones, storms, answers
 * to what the device sends, plain frames for the NIC, a segment that
 * stops taking frames for a while -- and SET_GID,
 * SET_QP_AV, GSI and RAW_ETH QPs.  The findings are the same.
 * A valid AQ_HANG is followed by a reset before the liveness check, and
 * the check knows what the port's state must be (qhca-fuzz-faults.c).
 *
 * Coverage is measured two ways: the distinct qhca trace events QEMU
 * emitted (out of all the device defines, with --trace-events; the ones
 * never emitted are listed), and the distinct (admin opcode, status) and
 * (CQE opcode, CQE status) pairs observed (--verbose lists them all).
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include <sys/wait.h>
#include "qhca-fuzz.h"

#define FZ_RUN_DEADLINE_S   120
/* Tries to start QEMU for one seed before that counts as a finding. */
#define FZ_START_ATTEMPTS   4
/*
 * Where a DMA target that would hit the admin rings goes instead: above
 * everything the fuzzer allocates, so that however long the transfer it
 * runs into the end of RAM, not over the rings (allocated low).
 */
#define FZ_SAFE_ADDR        (RAM_END - 4096)

/* ------------------------------------------------------------------ */
/* Random values                                                       */

uint32_t fz_below(Fz *f, uint32_t n)
{
    return n ? g_rand_int_range(f->r, 0, n) : 0;
}

bool fz_chance(Fz *f, unsigned percent)
{
    return fz_below(f, 100) < percent;
}

uint64_t fz_rand64(Fz *f)
{
    return (uint64_t)g_rand_int(f->r) << 32 | g_rand_int(f->r);
}

/* A value from the edges where checks tend to be wrong. */
uint64_t fz_interesting(Fz *f)
{
    static const uint64_t v[] = {
        0, 1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 63, 64, 127, 128, 255, 256,
        511, 512, 4095, 4096, 0x7fff, 0x8000, 0xffff, 0x10000, 0xffffff,
        0x1000000, 0x7fffffff, 0x80000000, 0xffffffff, 0x100000000ull,
        0x7fffffffffffffffull, 0x8000000000000000ull, 0xffffffffffffffffull,
        0xfffffffffffff000ull, 0xffffffffffffffc0ull,
    };

    switch (fz_below(f, 4)) {
    case 0:
        return fz_rand64(f);
    case 1:
        return fz_below(f, 1024);
    default:
        return v[fz_below(f, ARRAY_SIZE(v))];
    }
}

static bool fz_overlaps(uint64_t addr, uint64_t len, uint64_t base,
                        uint64_t size)
{
    return addr < base + size && addr + len > base && addr + len > addr;
}

static bool fz_hits_admin_cq(Fz *f, uint64_t addr, uint64_t len)
{
    return fz_overlaps(addr, len, f->t->cq,
                       f->t->entries * sizeof(struct qhca_aq_cqe));
}

/*
 * The engine writes at any time: into the admin SQ it could overwrite an
 * entry between the fuzzer's write and the device's read.  Data-path
 * targets avoid both admin rings (a response, written while its command
 * runs, may still land in the SQ).
 */
bool fz_hits_admin(Fz *f, uint64_t addr, uint64_t len)
{
    return fz_hits_admin_cq(f, addr, len) ||
           fz_overlaps(addr, len, f->t->sq,
                       f->t->entries * sizeof(struct qhca_aq_sqe));
}

/*
 * A DMA target: RAM, the device's BARs, the rings of live objects, the
 * end of RAM, past 2^64.  Never the admin CQ: the fuzzer reads its
 * completions from there and must not be confused by its own writes.
 */
uint64_t fz_addr(Fz *f, uint64_t len)
{
    QhcaTest *t = f->t;
    uint64_t a;
    uint32_t i;

    switch (fz_below(f, 14)) {
    case 0:
        a = 0;
        break;
    case 1:
        a = RAM_END - fz_below(f, 256);
        break;
    case 2:
        a = RAM_END + fz_below(f, 4096);
        break;
    case 3:
        a = t->bar0.addr + fz_below(f, QHCA_REG_BAR_SIZE);
        break;
    case 4:
        a = t->bar2.addr + fz_below(f, t->bar2_size);
        break;
    case 5:
        a = -(uint64_t)fz_below(f, 4096);
        break;
    case 6:
        a = fz_interesting(f);
        break;
    case 7:
        i = fz_below(f, FZ_NQP);
        a = f->qp_live[i] ? f->qp[i].sq + fz_below(f, 4096) : f->scratch;
        break;
    case 8:
        i = fz_below(f, FZ_NQP);
        a = f->qp_live[i] ? f->qp[i].rq + fz_below(f, 1024) : f->scratch;
        break;
    case 9:
        i = fz_below(f, FZ_NCQ);
        a = f->cq_live[i] ? f->cq[i].ring + 64 * fz_below(f, 64) :
                            f->scratch;
        break;
    case 10:
        /* 1.7: BAR 4, device memory: RAM, but not guest RAM. */
        a = f->dm_size ? f->bar4.addr + fz_below(f, f->dm_size) :
                         f->scratch;
        break;
    default:
        a = f->scratch + fz_below(f, FZ_SCRATCH - 4096);
        if (fz_chance(f, 50)) {
            a &= ~63ull;
        }
        break;
    }
    if (fz_hits_admin(f, a, len ? len : 1)) {
        a = FZ_SAFE_ADDR;
    }
    return a;
}

/* Change one field of @buf: a random width at a random offset. */
void fz_mutate(Fz *f, void *buf, size_t len)
{
    static const unsigned widths[] = { 1, 2, 4, 8 };
    uint8_t *p = buf;
    unsigned w = widths[fz_below(f, 4)];
    size_t off;
    uint64_t v;

    if (fz_chance(f, 25)) {
        off = fz_below(f, len);
        p[off] ^= 1u << fz_below(f, 8);
        return;
    }
    w = MIN(w, len);
    off = fz_below(f, len - w + 1) & ~(size_t)(w - 1);
    v = cpu_to_le64(fz_interesting(f));
    memcpy(p + off, &v, w);
}

void fz_pair(Fz *f, const char *kind, unsigned op, unsigned status)
{
    g_hash_table_add(f->pairs, g_strdup_printf("%s 0x%02x %u", kind, op,
                                               status));
}

/* ------------------------------------------------------------------ */
/* The model of what the fuzzer created                                */

static void fz_forget(Fz *f)
{
    memset(f->cq_live, 0, sizeof(f->cq_live));
    memset(f->qp_live, 0, sizeof(f->qp_live));
    memset(f->mr_live, 0, sizeof(f->mr_live));
    memset(f->uar_live, 0, sizeof(f->uar_live));
    memset(f->pd_live, 0, sizeof(f->pd_live));
    memset(f->eq_live, 0, sizeof(f->eq_live));
    memset(f->srq_live, 0, sizeof(f->srq_live));
    memset(f->qp_type, QHCA_QPT_RC, sizeof(f->qp_type));
    memset(f->qp_srq, 0, sizeof(f->qp_srq));
    f->eq_head = 0;
    fzv_forget(f);
}

/* ------------------------------------------------------------------ */
/* Device memory (1.7)                                                 */

/*
 * A REG_MR of device memory: mostly within BAR 4 (when the run has one),
 * now and then across its end, with MW_BIND or a page-list field.
 */
static void fz_dm_reg(Fz *f, struct qhca_cmd_reg_mr *p)
{
    uint64_t size = f->dm_size ? f->dm_size : 4096;
    uint64_t off = fz_chance(f, 80) ? fz_below(f, size) : fz_interesting(f);

    memset(p, 0, sizeof(*p));
    p->flags = QHCA_MR_F_DM;
    p->pbl_addr = cpu_to_le64(off);
    p->length = cpu_to_le64(fz_chance(f, 80) && off < size ?
                            1 + fz_below(f, size - off) :
                            fz_interesting(f));
    p->iova = cpu_to_le64(fz_chance(f, 70) ? 0 : fz_interesting(f));
    p->pdn = cpu_to_le32(f->h.pdn);
    p->access = fz_below(f, 32);
    if (p->access & (QHCA_ACCESS_REMOTE_WRITE | QHCA_ACCESS_REMOTE_ATOMIC)) {
        p->access |= QHCA_ACCESS_LOCAL_WRITE;
    }
    p->key = fz_below(f, 256);
    if (fz_chance(f, 10)) {
        p->npages = cpu_to_le32(1);
        p->page_shift = 12;
    }
}

/*
 * At each resync: the run's device memory MR (iova 0, every access but
 * MW_BIND) over a random piece of BAR 4.
 */
static void fz_dm_resync(Fz *f)
{
    struct qhca_cmd_reg_mr c = {
        .pdn = cpu_to_le32(f->h.pdn),
        .access = QHCA_ACCESS_ALL & ~QHCA_ACCESS_MW_BIND,
        .key = 0xd0,
        .flags = QHCA_MR_F_DM,
    };
    uint32_t index;

    f->dm_key = 0;
    if (!f->dm_size) {
        return;
    }
    f->dm_off = fz_below(f, f->dm_size / 2);
    f->dm_len = 1 + fz_below(f, f->dm_size - f->dm_off);
    c.pbl_addr = cpu_to_le64(f->dm_off);
    c.length = cpu_to_le64(f->dm_len);
    g_assert_cmpuint(qt_cmd(f->t, QHCA_CMD_REG_MR, &c, sizeof(c), &index),
                     ==, QHCA_AQ_SUCCESS);
    f->dm_key = index << 8 | c.key;
}

/* Where in the device memory MR an access of @len starts, mostly in it. */
static uint64_t fz_dm_addr(Fz *f, uint64_t len)
{
    if (fz_chance(f, 85) && len <= f->dm_len) {
        return fz_below(f, f->dm_len - len + 1);
    }
    return fz_chance(f, 50) ? f->dm_len - fz_below(f, 64) : fz_interesting(f);
}

/* The host's accesses to BAR 4: any width, any offset in it, a block. */
static void fz_dm_mmio(Fz *f)
{
    QhcaTest *t = f->t;
    uint8_t buf[256];
    uint64_t off, v = fz_interesting(f);

    if (!f->dm_size) {
        /* No BAR 4: the DM flag is unknown, whatever the fields. */
        struct qhca_cmd_reg_mr c;

        fz_dm_reg(f, &c);
        fz_pair(f, "cmd", QHCA_CMD_REG_MR,
                qt_cmd(t, QHCA_CMD_REG_MR, &c, sizeof(c), NULL));
        return;
    }
    off = fz_below(f, f->dm_size - 8);
    switch (fz_below(f, 6)) {
    case 0:
        qpci_io_writeb(t->dev, f->bar4, off, v);
        qpci_io_readb(t->dev, f->bar4, off);
        break;
    case 1:
        qpci_io_writew(t->dev, f->bar4, off & ~1ull, v);
        qpci_io_readw(t->dev, f->bar4, off & ~1ull);
        break;
    case 2:
        qpci_io_writel(t->dev, f->bar4, off & ~3ull, v);
        qpci_io_readl(t->dev, f->bar4, off & ~3ull);
        break;
    case 3:
        qpci_io_writeq(t->dev, f->bar4, off & ~7ull, v);
        qpci_io_readq(t->dev, f->bar4, off & ~7ull);
        break;
    case 4:
        off = MIN(off, f->dm_size - sizeof(buf));
        fz_mutate(f, buf, sizeof(buf));
        qpci_memwrite(t->dev, f->bar4, off, buf, sizeof(buf));
        break;
    default:
        off = MIN(off, f->dm_size - sizeof(buf));
        qpci_memread(t->dev, f->bar4, off, buf, sizeof(buf));
        break;
    }
}

/*
 * Reset and enable, with a UAR, PD, EQ, and a physical MR over the first
 * TiB of the bus: it covers the BARs and the hole, so that the DMA checks
 * (not the MR's bounds) are what refuses SGEs there.
 */
void fz_resync(Fz *f)
{
    fz_forget(f);
    hx_setup(&f->h, f->t);
    if (f->eth) {
        fze_resynced(f);
    }
    g_assert_cmpuint(hx_phys_mr(&f->h, 1ull << 40, &f->phys_key), ==,
                     QHCA_AQ_SUCCESS);
    /* Two connected QPs, so that the data path has work from the start. */
    g_assert_cmpuint(hx_create_cq(&f->h, &f->cq[0], 5), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(hx_create_cq(&f->h, &f->cq[1], 5), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(hx_create_qp(&f->h, &f->qp[0], &f->cq[0], &f->cq[0]),
                     ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(hx_create_qp(&f->h, &f->qp[1], &f->cq[1], &f->cq[1]),
                     ==, QHCA_AQ_SUCCESS);
    if (f->eth) {
        /* Each to a QP of the peer's, which the fuzzer plays. */
        g_assert_cmpuint(fze_connect_rc(f, 0, f->qp[1].qpn), ==,
                         QHCA_AQ_SUCCESS);
        g_assert_cmpuint(fze_connect_rc(f, 1, f->qp[0].qpn), ==,
                         QHCA_AQ_SUCCESS);
    } else {
        g_assert_cmpuint(hx_connect(&f->h, &f->qp[0], &f->qp[1]), ==,
                         QHCA_AQ_SUCCESS);
        g_assert_cmpuint(hx_connect(&f->h, &f->qp[1], &f->qp[0]), ==,
                         QHCA_AQ_SUCCESS);
    }
    f->cq_live[0] = f->cq_live[1] = true;
    f->qp_live[0] = f->qp_live[1] = true;
    fz_dm_resync(f);
    fzv_resynced(f);
    fzo_resynced(f);
}

int fz_slot(Fz *f, const bool *live, int n, bool want_live)
{
    int i, start = fz_below(f, n);

    for (i = 0; i < n; i++) {
        int j = (start + i) % n;

        if (live[j] == want_live) {
            return j;
        }
    }
    return -1;
}

/* A handle: mostly a live one of the model, sometimes any number. */
uint32_t fz_handle(Fz *f, const uint32_t *h, const bool *live, int n)
{
    int i = fz_slot(f, live, n, true);

    if (i < 0 || fz_chance(f, 15)) {
        return fz_interesting(f);
    }
    return h[i];
}

uint32_t fz_cqn(Fz *f)
{
    int i = fz_slot(f, f->cq_live, FZ_NCQ, true);

    return i < 0 || fz_chance(f, 10) ? fz_interesting(f) : f->cq[i].cqn;
}

uint32_t fz_qpn(Fz *f)
{
    int i = fz_slot(f, f->qp_live, FZ_NQP, true);

    return i < 0 || fz_chance(f, 10) ? fz_interesting(f) : f->qp[i].qpn;
}

uint32_t fz_srqn(Fz *f)
{
    int i = fz_slot(f, f->srq_live, FZ_NSRQ, true);

    return i < 0 || fz_chance(f, 10) ? fz_interesting(f) : f->srq[i].srqn;
}

uint32_t fz_key(Fz *f)
{
    int i = fz_slot(f, f->mr_live, FZ_NMR, true);

    if (fz_chance(f, 10)) {
        return fz_interesting(f);
    }
    if (fz_chance(f, 15)) {
        /* A window's or a fast-reg MR's key (qhca-fuzz-verbs.c). */
        return fzv_key(f);
    }
    if (f->dm_key && fz_chance(f, 8)) {
        /* 1.7: for BIND_MW, REG_MR WQEs, invalidation: all refused. */
        return f->dm_key;
    }
    return i < 0 || fz_chance(f, 50) ? f->phys_key : f->mr[i];
}

/* ------------------------------------------------------------------ */
/* Admin commands                                                      */

static void fz_cmd(Fz *f)
{
    static const uint16_t ops[] = {
        QHCA_CMD_QUERY_DEVICE, QHCA_CMD_QUERY_PORT, QHCA_CMD_ALLOC_UAR,
        QHCA_CMD_DEALLOC_UAR, QHCA_CMD_ALLOC_PD, QHCA_CMD_DEALLOC_PD,
        QHCA_CMD_CREATE_EQ, QHCA_CMD_DESTROY_EQ, QHCA_CMD_QUERY_STATS,
        QHCA_CMD_REG_MR, QHCA_CMD_DEREG_MR, QHCA_CMD_CREATE_CQ,
        QHCA_CMD_DESTROY_CQ, QHCA_CMD_CREATE_QP, QHCA_CMD_MODIFY_QP,
        QHCA_CMD_MODIFY_QP, QHCA_CMD_MODIFY_QP, QHCA_CMD_QUERY_QP,
        QHCA_CMD_DESTROY_QP, QHCA_CMD_QUERY_COUNTERS, QHCA_CMD_CREATE_SRQ,
        QHCA_CMD_MODIFY_SRQ, QHCA_CMD_QUERY_SRQ, QHCA_CMD_DESTROY_SRQ,
        QHCA_CMD_CREATE_QP, QHCA_CMD_CREATE_CQ, QHCA_CMD_REG_MR,
        QHCA_CMD_CREATE_SRQ,
    };
    QhcaTest *t = f->t;
    struct qhca_aq_sqe sqe = { 0 };
    uint16_t op = ops[fz_below(f, ARRAY_SIZE(ops))];
    bool mutated = fz_chance(f, 50);
    QhcaCq newcq = { 0 };
    QhcaQp newqp = { 0 };
    QhcaSrq newsrq = { 0 };
    uint32_t result = 0;
    uint8_t status;
    int slot = -1;

    if (fz_chance(f, 3)) {
        op = fz_chance(f, 50) ? fz_below(f, 0x20) : fz_interesting(f);
    }
    if (op == QHCA_CMD_INJECT_FAULT) {
        /*
         * Only its own grammar sends it: a mutation could make a valid
         * AQ_HANG here, which would never complete.
         */
        fzv_fault(f);
        return;
    }
    sqe.opcode = cpu_to_le16(op);
    sqe.resp_addr = cpu_to_le64(t->resp);
    sqe.resp_len = cpu_to_le32(4096);

    switch (op) {
    case QHCA_CMD_QUERY_PORT: {
        struct qhca_cmd_query_port *p = (void *)sqe.payload;

        p->port_num = 1;
        break;
    }
    case QHCA_CMD_DEALLOC_UAR:
    case QHCA_CMD_DEALLOC_PD:
    case QHCA_CMD_DESTROY_EQ:
    case QHCA_CMD_DEREG_MR:
    case QHCA_CMD_DESTROY_CQ:
    case QHCA_CMD_QUERY_QP:
    case QHCA_CMD_DESTROY_QP:
    case QHCA_CMD_QUERY_SRQ:
    case QHCA_CMD_DESTROY_SRQ: {
        struct qhca_cmd_handle *p = (void *)sqe.payload;
        uint32_t hd;

        switch (op) {
        case QHCA_CMD_QUERY_SRQ:
        case QHCA_CMD_DESTROY_SRQ:
            hd = fz_srqn(f);
            break;
        case QHCA_CMD_DEALLOC_UAR:
            hd = fz_handle(f, f->uar, f->uar_live, FZ_NH);
            break;
        case QHCA_CMD_DEALLOC_PD:
            hd = fz_handle(f, f->pd, f->pd_live, FZ_NH);
            break;
        case QHCA_CMD_DESTROY_EQ:
            hd = fz_handle(f, f->eq, f->eq_live, FZ_NH);
            break;
        case QHCA_CMD_DEREG_MR:
            hd = fz_key(f) >> 8;
            if (hd == f->phys_key >> 8 && fz_chance(f, 90)) {
                /* Rarely the MR every good SGE uses: traffic needs it. */
                hd += 1 + fz_below(f, 8);
            }
            break;
        case QHCA_CMD_DESTROY_CQ:
            hd = fz_cqn(f);
            break;
        default:
            hd = fz_qpn(f);
            break;
        }
        p->handle = cpu_to_le32(hd);
        break;
    }
    case QHCA_CMD_CREATE_EQ: {
        struct qhca_cmd_create_eq *p = (void *)sqe.payload;
        uint8_t depth = 1 + fz_below(f, 6);

        p->depth_log2 = depth;
        p->base_addr = cpu_to_le64(guest_alloc(&t->alloc, 16u << depth));
        p->msix_vector = cpu_to_le16(fz_below(f, 8));
        p->event_mask = cpu_to_le32(fz_chance(f, 50) ? 0 : HX_EVENTS);
        break;
    }
    case QHCA_CMD_REG_MR: {
        struct qhca_cmd_reg_mr *p = (void *)sqe.payload;
        uint32_t n = 1 + fz_below(f, 8), i;
        uint64_t pbl = guest_alloc(&t->alloc, 8 * n);

        for (i = 0; i < n; i++) {
            uint64_t a = cpu_to_le64(f->scratch + 4096 * fz_below(f, 255));

            qtest_memwrite(t->qts, pbl + 8 * i, &a, 8);
        }
        p->iova = cpu_to_le64(fz_rand64(f) & 0x7ffffffff000ull);
        p->length = cpu_to_le64(n * 4096ull - fz_below(f, 4096));
        p->pbl_addr = cpu_to_le64(pbl);
        p->pdn = cpu_to_le32(fz_chance(f, 80) ? f->h.pdn :
                             fz_handle(f, f->pd, f->pd_live, FZ_NH));
        p->npages = cpu_to_le32(n);
        p->access = fz_below(f, 16);
        if (p->access & (QHCA_ACCESS_REMOTE_WRITE |
                         QHCA_ACCESS_REMOTE_ATOMIC)) {
            p->access |= QHCA_ACCESS_LOCAL_WRITE;
        }
        if (fz_chance(f, 15)) {
            /* 1.6: FLUSH_GLOBAL, or FLUSH_PERSISTENT, which is refused. */
            p->access |= QHCA_ACCESS_FLUSH_GLOBAL << fz_below(f, 2);
        }
        p->key = fz_below(f, 256);
        p->page_shift = 12;
        if (fz_chance(f, 20)) {
            memset(p, 0, sizeof(*p));
            p->length = cpu_to_le64(fz_interesting(f));
            p->pdn = cpu_to_le32(f->h.pdn);
            p->access = QHCA_ACCESS_ALL;
            p->key = fz_below(f, 256);
            p->flags = QHCA_MR_F_PHYS;
        } else if (fz_chance(f, 20)) {
            fz_dm_reg(f, p);
        }
        break;
    }
    case QHCA_CMD_CREATE_CQ: {
        struct qhca_cmd_create_cq *p = (void *)sqe.payload;
        uint8_t depth = 1 + fz_below(f, 6);

        uint32_t eqn;

        slot = fz_slot(f, f->cq_live, FZ_NCQ, false);
        eqn = fz_chance(f, 80) ? f->h.eq.eqn :
              fz_handle(f, f->eq, f->eq_live, FZ_NH);
        *p = qt_cq_prepare(t, &newcq, depth, eqn, f->h.uar);
        break;
    }
    case QHCA_CMD_CREATE_QP: {
        struct qhca_cmd_create_qp *p = (void *)sqe.payload;
        uint8_t sqd = 1 + fz_below(f, 5), sqs = 6 + fz_below(f, 4);
        uint8_t rqd = 1 + fz_below(f, 5), rqs = 4 + fz_below(f, 4);
        int srq = fz_slot(f, f->srq_live, FZ_NSRQ, true);
        unsigned type = fz_below(f, 10);
        QhcaQpSpec s = {
            .type = type < 6 ? QHCA_QPT_RC : type < 8 ? QHCA_QPT_UC :
                    QHCA_QPT_UD,
            .pdn = f->h.pdn,
            .uar = f->h.uar,
            .sq_log2 = sqd,
            .sq_stride_log2 = sqs,
            .rq_log2 = rqd,
            .rq_stride_log2 = rqs,
        };

        slot = fz_slot(f, f->qp_live, FZ_NQP, false);
        s.send_cqn = fz_cqn(f);
        s.recv_cqn = fz_cqn(f);
        s.flags = fz_chance(f, 30) ? QHCA_QP_F_SQ_SIG_ALL : 0;
        *p = qt_qp_prepare(t, &newqp, &s);
        if (srq >= 0 && fz_chance(f, 30)) {
            /* Receives from an SRQ: no RQ of its own. */
            p->flags |= QHCA_QP_F_SRQ;
            p->srqn = cpu_to_le16(f->srq[srq].srqn);
            p->rq_addr = 0;
            p->rq_depth_log2 = 0;
            p->rq_stride_log2 = 0;
        }
        break;
    }
    case QHCA_CMD_MODIFY_QP: {
        struct qhca_cmd_modify_qp *p = (void *)sqe.payload;

        p->qpn = cpu_to_le32(fz_qpn(f));
        p->attr_mask = cpu_to_le32(fz_chance(f, 70) ?
                                   (QHCA_QP_ATTR_STATE | fz_below(f, 0x2000)) :
                                   (uint32_t)fz_interesting(f));
        p->state = fz_below(f, 8);
        p->dest_qpn = cpu_to_le32(fz_qpn(f));
        p->sq_psn = cpu_to_le32(fz_below(f, 1 << 24));
        p->rq_psn = cpu_to_le32(fz_below(f, 1 << 24));
        p->dlid = cpu_to_le16(fz_chance(f, 80) ? QT_LID : fz_interesting(f));
        p->access = fz_below(f, 16) & ~QHCA_ACCESS_LOCAL_WRITE;
        p->path_mtu = 1 + fz_below(f, 5);
        p->timeout = fz_below(f, 12);
        p->retry_cnt = fz_below(f, 8);
        p->rnr_retry = fz_below(f, 8);
        p->min_rnr_timer = fz_below(f, 32);
        p->max_rd_atomic = fz_below(f, 17);
        p->max_dest_rd_atomic = fz_below(f, 17);
        break;
    }
    case QHCA_CMD_CREATE_SRQ: {
        struct qhca_cmd_create_srq *p = (void *)sqe.payload;
        uint8_t depth = 1 + fz_below(f, 5), stride = 4 + fz_below(f, 4);

        slot = fz_slot(f, f->srq_live, FZ_NSRQ, false);
        *p = qt_srq_prepare(t, &newsrq, f->h.pdn, f->h.uar, depth, stride);
        p->limit = cpu_to_le32(fz_below(f, newsrq.entries + 1));
        break;
    }
    case QHCA_CMD_MODIFY_SRQ: {
        struct qhca_cmd_modify_srq *p = (void *)sqe.payload;

        p->srqn = cpu_to_le32(fz_srqn(f));
        p->attr_mask = cpu_to_le32(QHCA_SRQ_ATTR_LIMIT);
        p->limit = cpu_to_le32(fz_below(f, 40));
        break;
    }
    default:
        break;
    }

    if (mutated) {
        if (fz_chance(f, 20)) {
            /* The entry itself: flags, rsvd, resp_addr, resp_len. */
            fz_mutate(f, (uint8_t *)&sqe + 4, 20);
            if (fz_hits_admin_cq(f, le64_to_cpu(sqe.resp_addr), 4096)) {
                sqe.resp_addr = cpu_to_le64(fz_addr(f, 4096));
            }
        } else {
            fz_mutate(f, sqe.payload, sizeof(sqe.payload));
        }
    }
    if (fz_hits_admin_cq(f, le64_to_cpu(sqe.resp_addr),
                         MIN(le32_to_cpu(sqe.resp_len), 4096))) {
        sqe.resp_addr = cpu_to_le64(t->resp);
    }

    status = qt_submit(t, &sqe, &result);
    fz_pair(f, "cmd", op, status);
    if (status != QHCA_AQ_SUCCESS) {
        return;
    }

    /* Keep the model in step with what the device did. */
    switch (op) {
    case QHCA_CMD_ALLOC_UAR:
    case QHCA_CMD_ALLOC_PD:
    case QHCA_CMD_CREATE_EQ: {
        uint32_t *h = op == QHCA_CMD_ALLOC_UAR ? f->uar :
                      op == QHCA_CMD_ALLOC_PD ? f->pd : f->eq;
        bool *live = op == QHCA_CMD_ALLOC_UAR ? f->uar_live :
                     op == QHCA_CMD_ALLOC_PD ? f->pd_live : f->eq_live;
        int i = fz_slot(f, live, FZ_NH, false);

        if (i >= 0) {
            h[i] = result;
            live[i] = true;
        }
        break;
    }
    case QHCA_CMD_REG_MR: {
        int i = fz_slot(f, f->mr_live, FZ_NMR, false);
        struct qhca_cmd_reg_mr *p = (void *)sqe.payload;

        if (i >= 0) {
            f->mr[i] = result << 8 | p->key;
            f->mr_live[i] = true;
        }
        break;
    }
    case QHCA_CMD_CREATE_CQ:
        if (slot >= 0 && !mutated) {
            newcq.cqn = result;
            f->cq[slot] = newcq;
            f->cq_live[slot] = true;
        }
        break;
    case QHCA_CMD_CREATE_QP:
        if (slot >= 0 && !mutated) {
            struct qhca_cmd_create_qp *p = (void *)sqe.payload;

            newqp.qpn = result;
            f->qp[slot] = newqp;
            f->qp_live[slot] = true;
            f->qp_type[slot] = p->type;
            f->qp_srq[slot] = p->flags & QHCA_QP_F_SRQ;
        }
        break;
    case QHCA_CMD_CREATE_SRQ:
        if (slot >= 0 && !mutated) {
            newsrq.srqn = result;
            f->srq[slot] = newsrq;
            f->srq_live[slot] = true;
        }
        break;
    case QHCA_CMD_DEALLOC_UAR:
    case QHCA_CMD_DEALLOC_PD:
    case QHCA_CMD_DESTROY_EQ:
    case QHCA_CMD_DEREG_MR:
    case QHCA_CMD_DESTROY_CQ:
    case QHCA_CMD_DESTROY_SRQ:
    case QHCA_CMD_DESTROY_QP: {
        uint32_t hd = le32_to_cpu(((struct qhca_cmd_handle *)
                                   sqe.payload)->handle);
        int i;

        for (i = 0; i < FZ_NH; i++) {
            if (op == QHCA_CMD_DEALLOC_UAR && f->uar[i] == hd) {
                f->uar_live[i] = false;
            } else if (op == QHCA_CMD_DEALLOC_PD && f->pd[i] == hd) {
                f->pd_live[i] = false;
            } else if (op == QHCA_CMD_DESTROY_EQ && f->eq[i] == hd) {
                f->eq_live[i] = false;
            }
        }
        for (i = 0; i < FZ_NMR; i++) {
            if (op == QHCA_CMD_DEREG_MR && f->mr[i] >> 8 == hd) {
                f->mr_live[i] = false;
            }
        }
        for (i = 0; i < FZ_NCQ; i++) {
            if (op == QHCA_CMD_DESTROY_CQ && f->cq[i].cqn == hd) {
                f->cq_live[i] = false;
            }
        }
        for (i = 0; i < FZ_NQP; i++) {
            if (op == QHCA_CMD_DESTROY_QP && f->qp[i].qpn == hd) {
                f->qp_live[i] = false;
            }
        }
        if (op == QHCA_CMD_DESTROY_QP) {
            fze_destroyed(f, hd);
        }
        for (i = 0; i < FZ_NSRQ; i++) {
            if (op == QHCA_CMD_DESTROY_SRQ && f->srq[i].srqn == hd) {
                f->srq_live[i] = false;
            }
        }
        /* The base objects are ordinary ones to the device. */
        if (op == QHCA_CMD_DEREG_MR && hd == f->phys_key >> 8) {
            f->phys_key = 0;
        }
        break;
    }
    default:
        break;
    }
}

/*
 * Commands in two batches without consuming the first batch's
 * completions, so that the second fills the admin CQ: the device must
 * stop, and resume when the CQ doorbell frees slots.
 */
static void fz_batch(Fz *f)
{
    QhcaTest *t = f->t;
    unsigned n[2], b, i;

    n[0] = 1 + fz_below(f, t->entries - 1);
    n[1] = 1 + fz_below(f, t->entries - 1);
    for (b = 0; b < 2; b++) {
        uint16_t first = t->next_id + 1;

        for (i = 0; i < n[b]; i++) {
            struct qhca_aq_sqe sqe = {
                .opcode = cpu_to_le16(fz_chance(f, 50) ?
                                      QHCA_CMD_QUERY_STATS :
                                      QHCA_CMD_QUERY_COUNTERS),
                .resp_addr = cpu_to_le64(t->resp),
                .resp_len = cpu_to_le32(4096),
            };

            qt_queue_sqe(t, &sqe);
        }
        qt_ring_sq(t);
        if (b) {
            /* Let the device find its CQ full, then free the slots. */
            g_usleep(1000);
            qt_wr(t, QHCA_REG_AQ_CQ_DB, t->cq_head);
        }
        for (i = 0; i < n[b]; i++) {
            QhcaCompletion c = qt_take_cqe(t);

            g_assert_cmpuint(c.cmd_id, ==, (uint16_t)(first + i));
            g_assert_cmpuint(c.status, ==, QHCA_AQ_SUCCESS);
            fz_pair(f, "batch", 0, c.status);
        }
    }
    qt_wr(t, QHCA_REG_AQ_CQ_DB, t->cq_head);
}

/* Connect two live QPs (or one to itself) afresh, from RESET. */
static void fz_connect(Fz *f)
{
    int a = fz_slot(f, f->qp_live, FZ_NQP, true);
    int b = fz_slot(f, f->qp_live, FZ_NQP, true);
    struct qhca_cmd_modify_qp m = {
        .attr_mask = cpu_to_le32(QHCA_QP_ATTR_STATE),
        .state = QHCA_QPS_RESET,
    };

    if (a < 0) {
        return;
    }
    m.qpn = cpu_to_le32(f->qp[a].qpn);
    fz_pair(f, "reset-qp", 0, qt_cmd(f->t, QHCA_CMD_MODIFY_QP, &m,
                                     sizeof(m), NULL));
    /* RESET forgets the rings' indices: so does the model. */
    f->qp[a].sq_pi = f->qp[a].rq_pi = 0;
    if (f->qp_type[a] == QHCA_QPT_RC || f->qp_type[a] == QHCA_QPT_XRC_INI ||
        f->qp_type[a] == QHCA_QPT_XRC_TGT) {
        /* XRC QPs move as RC QPs (the extra attributes are optional). */
        fz_pair(f, "connect", f->qp_type[a],
                f->eth ? fze_connect_rc(f, a, f->qp[b].qpn) :
                hx_connect(&f->h, &f->qp[a], &f->qp[b]));
        return;
    }
    /* UC and UD: INIT (UD with a Q_Key), RTR (UC with a path), RTS. */
    {
        bool ud = f->qp_type[a] == QHCA_QPT_UD ||
                  f->qp_type[a] == QHCA_QPT_GSI;
        struct qhca_cmd_modify_qp s3[3] = {
            {
                .attr_mask = cpu_to_le32(QHCA_QP_ATTR_STATE |
                                         (ud ? QHCA_QP_ATTR_QKEY :
                                               QHCA_QP_ATTR_ACCESS)),
                .state = QHCA_QPS_INIT,
                .access = QHCA_ACCESS_REMOTE_WRITE,
                .qkey = cpu_to_le32(0x11111111),
            }, {
                .attr_mask = cpu_to_le32(QHCA_QP_ATTR_STATE | (ud ? 0 :
                                         QHCA_QP_ATTR_PATH |
                                         QHCA_QP_ATTR_DEST_QPN |
                                         QHCA_QP_ATTR_RQ_PSN)),
                .state = QHCA_QPS_RTR,
                .dlid = cpu_to_le16(f->eth ? 0 : QT_LID),
                .path_mtu = QT_MTU_1024,
                .dest_qpn = cpu_to_le32(f->qp[b].qpn),
            }, {
                .attr_mask = cpu_to_le32(QHCA_QP_ATTR_STATE |
                                         QHCA_QP_ATTR_SQ_PSN),
                .state = QHCA_QPS_RTS,
            },
        };
        uint8_t status = QHCA_AQ_SUCCESS;
        int i;

        if (f->eth && f->qp_type[a] == QHCA_QPT_RAW_ETH) {
            /* The NIC's queues move with their state alone. */
            for (i = 0; i < 3; i++) {
                s3[i].attr_mask = cpu_to_le32(QHCA_QP_ATTR_STATE);
            }
        } else if (f->eth && !ud) {
            status = fze_av(f, a, f->qp[b].qpn);
        }
        for (i = 0; i < 3 && status == QHCA_AQ_SUCCESS; i++) {
            s3[i].qpn = cpu_to_le32(f->qp[a].qpn);
            status = qt_cmd(f->t, QHCA_CMD_MODIFY_QP, &s3[i], sizeof(s3[i]),
                            NULL);
        }
        fz_pair(f, "connect", f->qp_type[a], status);
    }
}

/* ------------------------------------------------------------------ */
/* Work requests and doorbells                                         */

struct qhca_sge fz_sge(Fz *f)
{
    uint32_t len = fz_chance(f, 80) ? fz_below(f, 8192) : fz_interesting(f);

    if (f->dm_key && fz_chance(f, 8)) {
        /* 1.7: bytes of the device memory MR. */
        len = fz_below(f, 4096);
        return (struct qhca_sge) {
            .addr = cpu_to_le64(fz_dm_addr(f, len)),
            .length = cpu_to_le32(len),
            .lkey = cpu_to_le32(f->dm_key),
        };
    }
    if ((f->odp_key || f->odp_imp_key) && fz_chance(f, 8)) {
        /* 1.8: bytes of an ODP MR, present or not. */
        return fzo_sge(f);
    }
    if (fz_chance(f, 60)) {
        /* A good one: scratch RAM under the physical MR. */
        return (struct qhca_sge) {
            .addr = cpu_to_le64(f->scratch + fz_below(f, FZ_SCRATCH / 2)),
            .length = cpu_to_le32(fz_below(f, 4096)),
            .lkey = cpu_to_le32(f->phys_key),
        };
    }

    return (struct qhca_sge) {
        .addr = cpu_to_le64(fz_addr(f, len)),
        .length = cpu_to_le32(len),
        .lkey = cpu_to_le32(fz_key(f)),
    };
}

void fz_send(Fz *f)
{
    int i = fz_slot(f, f->qp_live, FZ_NQP, true);
    uint8_t buf[1024] = { 0 };
    struct qhca_sq_wqe *w = (void *)buf;
    struct qhca_sge *sge = (void *)(buf + sizeof(*w));
    QhcaQp *qp;
    unsigned n, j, room;
    uint64_t slot;
    uint16_t pi;
    uint64_t odp_addr;
    uint32_t odp_rkey;

    if (i < 0) {
        return;
    }
    qp = &f->qp[i];
    if (!qp->sq_entries) {
        /* An XRC TGT QP has no SQ: its doorbell is a guest error. */
        qt_db_write(f->t, fz_chance(f, 50) ? qp->uar : fz_below(f, 8),
              QHCA_DB_SQ, qp->qpn << 16 | fz_below(f, 4));
        return;
    }
    room = (qp->sq_stride - sizeof(*w)) / sizeof(*sge);
    n = fz_below(f, MIN(room, 4) + 1);
    w->wr_id = cpu_to_le64(f->steps);
    w->opcode = fz_chance(f, 95) ? fz_below(f, 7) : fz_below(f, 256);
    /* Mostly valid: a WQE in error takes its QP down with it. */
    w->flags = fz_chance(f, 90) ? QHCA_WQE_F_SIGNALED |
               (fz_below(f, 4) * QHCA_WQE_F_SOLICITED) : fz_below(f, 256);
    w->num_sge = n;
    w->imm_data = g_rand_int(f->r);
    if (f->dm_key && fz_chance(f, 10)) {
        /* 1.7: the device memory MR; 8-byte aligned for atomics. */
        w->remote_addr = cpu_to_le64(fz_dm_addr(f, 8) & ~7ull);
        w->rkey = cpu_to_le32(f->dm_key);
    } else if (fz_chance(f, 8) && fzo_remote(f, &odp_addr, &odp_rkey)) {
        /* 1.8: an ODP MR: the responder's page faults. */
        w->remote_addr = cpu_to_le64(odp_addr);
        w->rkey = cpu_to_le32(odp_rkey);
    } else if (fz_chance(f, 60)) {
        w->remote_addr = cpu_to_le64(f->scratch + FZ_SCRATCH / 2 +
                                     8 * fz_below(f, FZ_SCRATCH / 32));
        w->rkey = cpu_to_le32(f->phys_key);
    } else {
        w->remote_addr = cpu_to_le64(fz_addr(f, 8));
        w->rkey = cpu_to_le32(fz_key(f));
    }
    w->compare_add = cpu_to_le64(fz_rand64(f));
    w->swap = cpu_to_le64(fz_rand64(f));
    if (f->qp_type[i] == QHCA_QPT_XRC_INI) {
        w->xrc_srqn = cpu_to_le32(fzv_xrc_srqn(f));
    }
    for (j = 0; j < n; j++) {
        sge[j] = fz_sge(f);
    }
    if (fz_chance(f, 5)) {
        /* 1.6: FLUSH or ATOMIC_WRITE, fields mostly well formed below. */
        w->opcode = QHCA_WR_FLUSH + fz_below(f, 2);
    }
    if ((qt_wr_is(w->opcode, QHCA_WR_F_ATOMIC) ||
         w->opcode == QHCA_WR_ATOMIC_WRITE) && fz_chance(f, 70)) {
        /* Mostly well formed: one 8-byte SGE, an aligned target. */
        w->num_sge = n = 1;
        sge[0].length = cpu_to_le32(8);
        w->remote_addr = cpu_to_le64(le64_to_cpu(w->remote_addr) & ~7ull);
    }
    if (w->opcode == QHCA_WR_FLUSH) {
        /* A known type and level, no data, a range of up to a page. */
        w->flush = fz_chance(f, 85) ?
                   (1 + fz_below(f, 3)) |
                   fz_below(f, 2) << QHCA_FLUSH_LEVEL_SHIFT :
                   fz_below(f, 256);
        w->flush_len = cpu_to_le32(fz_chance(f, 85) ? fz_below(f, 4097) :
                                   (uint32_t)fz_interesting(f));
        if (fz_chance(f, 85)) {
            w->num_sge = n = 0;
        }
    }
    if (f->qp_type[i] == QHCA_QPT_UD || f->qp_type[i] == QHCA_QPT_GSI) {
        struct qhca_sq_wqe_ud *u = (void *)buf;

        /* The address vector where RC has remote address and operands. */
        u->opcode = fz_chance(f, 90) ? QHCA_WR_SEND + fz_below(f, 2) :
                    fz_below(f, 8);
        u->dest_qpn = cpu_to_le32(fz_qpn(f));
        u->qkey = cpu_to_le32(fz_chance(f, 50) ? 0x11111111 :
                              (uint32_t)fz_interesting(f));
        u->dlid = cpu_to_le16(fz_chance(f, 90) ? QT_LID : fz_interesting(f));
        u->sl = fz_below(f, 17);
        u->av_flags = fz_chance(f, 30) ? QHCA_AV_F_GRH : 0;
        u->inline_len = 0;
        memset(u->dgid, 0, sizeof(u->dgid));
        u->flow_label = cpu_to_le32(fz_below(f, 1 << 20));
        u->hop_limit = fz_below(f, 256);
        u->traffic_class = 0;
        u->sgid_index = fz_chance(f, 95) ? 0 : 1;
        u->rsvd1 = 0;
        memset(u->dmac, 0, sizeof(u->dmac));
        u->rsvd2 = 0;
        if (f->eth) {
            fze_ud_av(f, u);
        }
    }
    if (fz_chance(f, 10)) {
        w->flags |= QHCA_WQE_F_INLINE;
        w->inline_len = cpu_to_le32(fz_chance(f, 70) ?
                                    fz_below(f, qp->sq_stride) :
                                    fz_interesting(f));
    }
    if (fz_chance(f, 15)) {
        fz_mutate(f, buf, MIN(qp->sq_stride, sizeof(buf)));
    }
    /*
     * What the WQE makes the device write must miss the admin rings:
     * the local SGEs (READ and atomic results) and the remote range
     * (WRITE, on this same device), as long as the whole message.
     */
    {
        unsigned k, nsge = MIN(w->num_sge, (MIN(qp->sq_stride,
                                                sizeof(buf)) - sizeof(*w)) /
                                           sizeof(*sge));
        uint64_t total = 8;

        for (k = 0; k < nsge; k++) {
            uint64_t len = le32_to_cpu(sge[k].length);

            total += len;
            if (fz_hits_admin(f, le64_to_cpu(sge[k].addr), MAX(len, 1))) {
                sge[k].addr = cpu_to_le64(FZ_SAFE_ADDR);
            }
        }
        total = MAX(total, le32_to_cpu(w->inline_len));
        if (f->qp_type[i] != QHCA_QPT_UD && f->qp_type[i] != QHCA_QPT_GSI &&
            fz_hits_admin(f, le64_to_cpu(w->remote_addr), total)) {
            w->remote_addr = cpu_to_le64(FZ_SAFE_ADDR);
        }
    }
    slot = qt_qp_sq_slot(qp, qp->sq_pi);
    qtest_memwrite(f->t->qts, slot, buf, MIN(qp->sq_stride, sizeof(buf)));
    qp->sq_pi++;
    pi = fz_chance(f, 90) ? qp->sq_pi : fz_interesting(f);
    qt_db_write(f->t, fz_chance(f, 95) ? qp->uar : fz_below(f, 8), QHCA_DB_SQ,
          qp->qpn << 16 | pi);
}

static void fz_srq_post(Fz *f);

static void fz_recv(Fz *f)
{
    int i = fz_slot(f, f->qp_live, FZ_NQP, true);
    struct qhca_sge sge[4];
    unsigned n, j;
    QhcaQp *qp;

    if (i < 0) {
        return;
    }
    qp = &f->qp[i];
    if (f->qp_srq[i]) {
        fz_srq_post(f);
        return;
    }
    if (!qp->rq_entries) {
        /* XRC QPs have no RQ: an index other than 0 is a guest error. */
        qt_db_write(f->t, qp->uar, QHCA_DB_RQ, qp->qpn << 16 | fz_below(f, 2));
        return;
    }
    n = fz_below(f, MIN((qp->rq_stride - 16) / 16, 4) + 1);
    for (j = 0; j < n; j++) {
        sge[j] = fz_sge(f);
    }
    if (fz_chance(f, 5)) {
        /* A count the stride cannot hold, as the WQE header says. */
        struct qhca_rq_wqe h = { .num_sge = fz_interesting(f) };

        qtest_memwrite(f->t->qts, qt_qp_rq_slot(qp, qp->rq_pi), &h,
                       sizeof(h));
        qp->rq_pi++;
        qt_db_write(f->t, qp->uar, QHCA_DB_RQ, qp->qpn << 16 | qp->rq_pi);
        return;
    }
    qt_qp_post_recv(f->t, qp, f->steps, sge, n);
}

/* A receive WQE on a live SRQ, and its doorbell. */
static void fz_srq_post(Fz *f)
{
    int i = fz_slot(f, f->srq_live, FZ_NSRQ, true);
    uint8_t buf[1024] = { 0 };
    struct qhca_rq_wqe *w = (void *)buf;
    struct qhca_sge *sge = (void *)(buf + sizeof(*w));
    unsigned n, j;
    QhcaSrq *q;

    if (i < 0) {
        return;
    }
    q = &f->srq[i];
    n = fz_below(f, MIN((q->stride - 16) / 16, 4) + 1);
    w->wr_id = cpu_to_le64(f->steps);
    w->num_sge = fz_chance(f, 95) ? n : fz_interesting(f);
    for (j = 0; j < n; j++) {
        sge[j] = fz_sge(f);
    }
    qtest_memwrite(f->t->qts, qt_srq_slot(q, q->pi), buf,
                   MIN(q->stride, sizeof(buf)));
    q->pi++;
    qt_db_write(f->t, f->h.uar, QHCA_DB_SRQ, q->srqn << 16 |
          (fz_chance(f, 95) ? q->pi : (uint16_t)fz_interesting(f)));
}

static void fz_doorbell(Fz *f)
{
    static const uint32_t offs[] = {
        QHCA_DB_SQ, QHCA_DB_RQ, QHCA_DB_CQ_ARM, QHCA_DB_CQ_ARM_SOL,
        QHCA_DB_SRQ,
    };
    uint32_t page = fz_chance(f, 80) ? f->h.uar : fz_below(f, 8);
    uint32_t off = fz_chance(f, 90) ? offs[fz_below(f, ARRAY_SIZE(offs))] :
                   fz_below(f, QHCA_DB_PAGE_SIZE);
    uint32_t num = fz_chance(f, 50) ? fz_qpn(f) : fz_cqn(f);
    uint32_t val = fz_chance(f, 80) ? (num << 16 | fz_below(f, 0x10000)) :
                   (uint32_t)fz_interesting(f);

    qt_db_write(f->t, page, off, val);
    if (fz_chance(f, 10)) {
        qpci_io_readl(f->t->dev, f->t->bar2,
                      (uint64_t)page * QHCA_DB_PAGE_SIZE + (off & ~3u));
    }
}

/* Take every CQE that is there; consume the EQ. */
void fz_poll(Fz *f)
{
    QhcaTest *t = f->t;
    struct qhca_cqe cqe;
    struct qhca_eqe eqe;
    int i, n;

    for (i = 0; i < FZ_NCQ; i++) {
        /* Not every CQ every time: small ones overrun now and then. */
        if (!f->cq_live[i] || fz_chance(f, 30)) {
            continue;
        }
        for (n = 0; n < 64 && qt_cq_poll_for(f->t, &f->cq[i], &cqe, 0); n++) {
            fz_pair(f, "cqe", cqe.opcode, cqe.status);
        }
        if (fz_chance(f, 30)) {
            qt_db_write(f->t, f->h.uar, fz_chance(f, 50) ? QHCA_DB_CQ_ARM :
                  QHCA_DB_CQ_ARM_SOL, f->cq[i].cqn << 16 |
                  (f->cq[i].ci & 0xffff));
        }
    }
    for (n = 0; n < 64; n++) {
        uint8_t phase = !((f->eq_head / f->h.eq.entries) & 1);

        eqe = qt_read_eqe(t, f->h.eq.ring, f->eq_head % f->h.eq.entries);
        if ((eqe.flags & QHCA_EQE_FLAGS_PHASE) != phase) {
            break;
        }
        fz_pair(f, "eqe", eqe.type, 0);
        f->eq_head++;
    }
    qt_wr(t, QHCA_REG_EQ_DB, QHCA_FIELD_PREP(QHCA_EQ_DB_EQN, f->h.eq.eqn) |
          (f->eq_head % f->h.eq.entries));
}

/* A random BAR 0 access, or a reset; the model starts afresh. */
static void fz_register(Fz *f)
{
    static const unsigned widths[] = { 1, 2, 4, 8 };
    QhcaTest *t = f->t;
    unsigned w = widths[fz_below(f, 4)];
    uint32_t off = fz_chance(f, 70) ? fz_below(f, QHCA_REG_END + 8) :
                   fz_below(f, QHCA_REG_BAR_SIZE - 8);
    uint64_t v = fz_interesting(f);

    if (fz_chance(f, 50)) {
        off &= ~3u;
        w = 4;
    }
    if (f->msix && off + w > QHCA_MSIX_TABLE_OFFSET &&
        off < QHCA_MSIX_TABLE_OFFSET + 16 * 64) {
        /*
         * With MSI-X on, an unmasked vector would write its message
         * wherever the fuzzer pointed it, the admin rings included.
         */
        off = QHCA_REG_VERSION;
    }
    switch (w) {
    case 1:
        qpci_io_readb(t->dev, t->bar0, off);
        qpci_io_writeb(t->dev, t->bar0, off, v);
        break;
    case 2:
        qpci_io_readw(t->dev, t->bar0, off);
        qpci_io_writew(t->dev, t->bar0, off, v);
        break;
    case 4:
        qpci_io_readl(t->dev, t->bar0, off);
        qpci_io_writel(t->dev, t->bar0, off, v);
        break;
    default:
        qpci_io_readq(t->dev, t->bar0, off);
        qpci_io_writeq(t->dev, t->bar0, off, v);
        break;
    }
    fz_pair(f, "reg", off, qt_rd(t, QHCA_REG_ERROR));
    if (fz_chance(f, 30)) {
        /* Whatever state that left: a reset, disable, or nothing. */
        qt_wr(t, QHCA_REG_CTRL, fz_chance(f, 50) ? QHCA_CTRL_RESET : 0);
    }
    if (fz_chance(f, 20)) {
        /* A configuration of the guest's choice, and ENABLE on it. */
        qt_wr(t, QHCA_REG_CTRL, QHCA_CTRL_RESET);
        qt_write_aq_regs(t, fz_addr(f, 4096), fz_addr(f, 4096),
                         fz_chance(f, 50) ? qt_aq_cfg(fz_below(f, 16),
                                                      fz_below(f, 10)) :
                         (uint32_t)fz_interesting(f));
        qt_wr(t, QHCA_REG_CTRL, QHCA_CTRL_ENABLE);
        fz_pair(f, "enable", qt_rd(t, QHCA_REG_STATUS),
                qt_rd(t, QHCA_REG_ERROR));
    }
    if (fz_chance(f, 50)) {
        /* Doorbells on a device that may no longer be ready. */
        fz_doorbell(f);
        qt_wr(t, QHCA_REG_EQ_DB, g_rand_int(f->r));
        qt_wr(t, QHCA_REG_AQ_CQ_DB, fz_below(f, 64));
    }
    /* Give a disturbed admin queue time to do whatever it will. */
    g_usleep(1000);
    fz_resync(f);
}

/* The device still answers, as an enabled device must. */
static void fz_check_alive(Fz *f, const char *after)
{
    QhcaTest *t = f->t;
    struct qhca_device_attr attr;
    uint32_t status;

    if (qt_rd(t, QHCA_REG_MAGIC) != QHCA_MAGIC) {
        fprintf(f->report, "FINDING: MAGIC wrong after %s (step %" PRIu64
                ")\n", after, f->steps);
        exit(3);
    }
    status = qt_rd(t, QHCA_REG_STATUS);
    if (status != QHCA_STATUS_READY) {
        fprintf(f->report, "FINDING: STATUS 0x%x ERROR %u after %s (step %"
                PRIu64 ")\n", status, qt_rd(t, QHCA_REG_ERROR), after,
                f->steps);
        exit(3);
    }
    if (qt_query(t, QHCA_CMD_QUERY_DEVICE, NULL, 0, &attr, sizeof(attr)) !=
        QHCA_AQ_SUCCESS || le32_to_cpu(attr.vendor_id) != QHCA_PCI_VENDOR_ID) {
        fprintf(f->report, "FINDING: QUERY_DEVICE failed after %s (step %"
                PRIu64 ")\n", after, f->steps);
        exit(3);
    }
    fzv_check_link(f, after);
    if (f->eth) {
        fze_alive(f, after);
    }
}

/*
 * Which runs have the Ethernet port (1.5): none, all, or every third
 * seed (the default), when this QEMU's qhca has one at all.
 */
enum { FZ_NET_IB, FZ_NET_ETH, FZ_NET_MIX };
static int fz_net = FZ_NET_MIX;
static bool fz_eth_ok;

static bool fz_seed_eth(uint64_t seed)
{
    return fz_eth_ok && (fz_net == FZ_NET_ETH ||
                         (fz_net == FZ_NET_MIX && seed % 3 == 0));
}

/*
 * 1.7: device memory of the default size, the smallest, or none (BAR 4
 * absent, flag DM refused) by seed.
 */
static const char *fz_seed_dm_prop(uint64_t seed)
{
    static const char *const p[] = { "", ",dm-size=4K", "", ",dm-size=0" };

    return p[seed % ARRAY_SIZE(p)];
}

/* One run: @steps steps from @seed; the pairs seen go to @out. */
static void fz_run(uint32_t seed, uint64_t steps, const char *trace,
                   FILE *out)
{
    static const struct {
        const char *name;
        void (*fn)(Fz *f);
        unsigned weight;
        bool eth;               /* only in a run with the Ethernet port */
    } actions[] = {
        { "cmd", fz_cmd, 40 },
        { "connect", fz_connect, 8 },
        { "batch", fz_batch, 2 },
        { "send", fz_send, 22 },
        { "recv", fz_recv, 10 },
        { "doorbell", fz_doorbell, 8 },
        { "srq", fz_srq_post, 5 },
        { "poll", fz_poll, 10 },
        { "register", fz_register, 4 },
        { "dm-mmio", fz_dm_mmio, 4 },
        /* qhca-fuzz-verbs.c */
        { "verbs-cmd", fzv_cmd, 10 },
        { "build", fzv_build, 6 },
        { "memop", fzv_memop, 8 },
        { "fault", fzv_fault, 4 },
        { "clock", fzv_clock, 4 },
        /* qhca-fuzz-odp.c */
        { "odp", fzo_cmd, 6 },
        { "odp-answer", fzo_answer, 6 },
        { "odp-traffic", fzo_traffic, 6 },
        /* qhca-fuzz-verbs.c: the rest of the Ethernet segment */
        { "eth-frame", fze_frame, 24, true },
        { "eth-answer", fze_answer, 8, true },
        { "eth-storm", fze_storm, 2, true },
        { "eth-stall", fze_stall, 2, true },
        { "eth-cmd", fze_cmd, 6, true },
    };
    g_autofree char *props = NULL;
    unsigned total = 0, a, weight[ARRAY_SIZE(actions)];
    bool eth = fz_seed_eth(seed);
    gint64 t0;
    GHashTableIter it;
    gpointer key;
    Fz f = { 0 };

    for (a = 0; a < ARRAY_SIZE(actions); a++) {
        weight[a] = actions[a].eth && !eth ? 0 : actions[a].weight;
        total += weight[a];
    }
    /* Small tables, so that they fill up now and then. */
    props = g_strdup_printf(",id=" FZ_QOM_ID ",max-uars=8,max-pds=8,"
                            "max-cqs=12,max-qps=12,max-mrs=32,max-srqs=4,"
                            "max-eqs=6,max-xrcds=3,max-mws=6%s%s%s%s",
                            fz_seed_dm_prop(seed),
                            trace ? " -D " : "",
                            trace ? trace : "",
                            trace ? " -trace 'qhca_*'" : "");
    f.report = stderr;
    f.r = g_rand_new_with_seed(seed);
    f.pairs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    if (eth) {
        /* The port on a socket netdev: the fuzzer is the segment. */
        fze_init(&f);
        f.t = qt_start_eth(props);
    } else {
        f.t = qhca_start(props);
    }
    f.scratch = guest_alloc(&f.t->alloc, FZ_SCRATCH);
    if (!strstr(props, "dm-size=0")) {
        f.bar4 = qpci_iomap(f.t->dev, QHCA_DM_BAR, &f.dm_size);
    }
    if (fz_chance(&f, 50)) {
        /*
         * Completions and events then signal their vectors (masked, so
         * only pending bits change).  Enabling maps BAR 0 again.
         */
        qpci_msix_enable(f.t->dev);
        f.t->bar0 = f.t->dev->msix_table_bar;
        f.msix = true;
    }
    fz_resync(&f);

    for (f.steps = 0; f.steps < steps; f.steps++) {
        unsigned pick = fz_below(&f, total);

        for (a = 0; pick >= weight[a]; a++) {
            pick -= weight[a];
        }
        t0 = g_get_monotonic_time();
        actions[a].fn(&f);
        fz_check_alive(&f, actions[a].name);
        if (g_get_monotonic_time() - t0 > G_USEC_PER_SEC) {
            /* Not a finding, but where a slow run spends its time. */
            fprintf(f.report, "slow: step %" PRIu64 " (%s) took %.1f s\n",
                    f.steps, actions[a].name,
                    (g_get_monotonic_time() - t0) / 1e6);
        }
    }
    /* A last look at what the engine did, then a clean shutdown. */
    g_usleep(20000);
    fz_poll(&f);
    fz_check_alive(&f, "the end");
    qhca_stop(f.t);
    if (eth) {
        fze_fini(&f);
    }

    fprintf(out, "S %" PRIu64 "\n", f.steps);
    fprintf(out, "E %d\n", eth);
    g_hash_table_iter_init(&it, f.pairs);
    while (g_hash_table_iter_next(&it, &key, NULL)) {
        fprintf(out, "P %s\n", (char *)key);
    }
    fflush(out);
    g_hash_table_destroy(f.pairs);
    g_rand_free(f.r);
}

/* ------------------------------------------------------------------ */
/* The driver of the runs                                              */

static uint64_t fz_env(const char *name, uint64_t def)
{
    const char *v = getenv(name);

    return v && *v ? g_ascii_strtoull(v, NULL, 0) : def;
}

/* The event names of a trace-events file. */
static GHashTable *fz_read_events(const char *path)
{
    GHashTable *set = g_hash_table_new_full(g_str_hash, g_str_equal,
                                            g_free, NULL);
    g_autofree char *text = NULL;
    g_auto(GStrv) lines = NULL;
    int i;

    if (!path || !g_file_get_contents(path, &text, NULL, NULL)) {
        return set;
    }
    lines = g_strsplit(text, "\n", -1);
    for (i = 0; lines[i]; i++) {
        const char *l = lines[i];
        size_t n = strcspn(l, "(");

        if (!g_str_has_prefix(l, "qhca_") || !l[n]) {
            continue;
        }
        g_hash_table_add(set, g_strndup(l, n));
    }
    return set;
}

/*
 * Add the event names in QEMU's trace log to @seen.  Line by line: a run
 * can log tens of MB, and splitting that in one piece is quadratic under
 * ASan's string interceptors.
 */
static void fz_read_trace(const char *path, GHashTable *seen)
{
    FILE *in = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;

    if (!in) {
        return;
    }
    while (getline(&line, &cap, in) > 0) {
        char *l = line;
        char *colon = strchr(l, ':');
        char *at = strchr(l, '@');

        /* "pid@sec.usec:name args" or "name args" */
        if (colon && at && at < colon) {
            l = colon + 1;
        }
        if (!g_str_has_prefix(l, "qhca_")) {
            continue;
        }
        l[strcspn(l, "\n ")] = '\0';
        if (!g_hash_table_contains(seen, l)) {
            g_hash_table_add(seen, g_strdup(l));
        }
    }
    free(line);
    fclose(in);
}

static int fz_strcmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The hard link of QEMU, removed however the fuzzer ends. */
static char *fz_qemu_link;

static void fz_on_signal(int sig)
{
    struct sigaction dfl = { .sa_handler = SIG_DFL };

    if (fz_qemu_link) {
        unlink(fz_qemu_link);
    }
    sigaction(sig, &dfl, NULL);
    raise(sig);
}

int main(int argc, char **argv)
{
    uint64_t budget = fz_env("QHCA_FUZZ_TIME", 60);
    uint64_t first = fz_env("QHCA_FUZZ_SEED", 1);
    uint64_t nseeds = fz_env("QHCA_FUZZ_SEEDS", 0);
    uint64_t steps = fz_env("QHCA_FUZZ_STEPS", 200);
    const char *outdir = getenv("QHCA_FUZZ_OUT");
    const char *events_file = getenv("QHCA_FUZZ_TRACE_EVENTS");
    g_autoptr(GHashTable) events = NULL;
    g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash,
                                                       g_str_equal,
                                                       g_free, NULL);
    g_autoptr(GHashTable) pairs = g_hash_table_new_full(g_str_hash,
                                                        g_str_equal,
                                                        g_free, NULL);
    g_autofree char *tmpdir = NULL;
    g_autofree char *qemu_link = NULL;
    gint64 start = g_get_monotonic_time();
    uint64_t runs = 0, execs = 0, findings = 0, restarts = 0, seed;
    uint64_t eth_runs = 0;
    const char *net = getenv("QHCA_FUZZ_NET");
    uint64_t retried = UINT64_MAX;
    unsigned starts = 0;
    bool verbose = false;
    int i;

    for (i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : "0";

        if (!strcmp(argv[i], "--verbose")) {
            verbose = true;
            continue;
        }
        if (!strcmp(argv[i], "--time")) {
            budget = g_ascii_strtoull(v, NULL, 0);
        } else if (!strcmp(argv[i], "--seed")) {
            first = g_ascii_strtoull(v, NULL, 0);
        } else if (!strcmp(argv[i], "--seeds")) {
            nseeds = g_ascii_strtoull(v, NULL, 0);
        } else if (!strcmp(argv[i], "--steps")) {
            steps = g_ascii_strtoull(v, NULL, 0);
        } else if (!strcmp(argv[i], "--out")) {
            outdir = v;
        } else if (!strcmp(argv[i], "--trace-events")) {
            events_file = v;
        } else if (!strcmp(argv[i], "--net")) {
            net = v;
        } else {
            fprintf(stderr, "usage: %s [--time S] [--seed N] [--seeds N] "
                    "[--steps N] [--out DIR] [--trace-events FILE] "
                    "[--net ib|eth|mix] [--verbose]\n",
                    argv[0]);
            return 2;
        }
        i++;
    }
    if (!getenv("QTEST_QEMU_BINARY")) {
        fprintf(stderr, "qhca-fuzz: set QTEST_QEMU_BINARY\n");
        return 2;
    }
    if (net && !strcmp(net, "ib")) {
        fz_net = FZ_NET_IB;
    } else if (net && !strcmp(net, "eth")) {
        fz_net = FZ_NET_ETH;
    } else if (net && *net && strcmp(net, "mix")) {
        fprintf(stderr, "qhca-fuzz: --net ib, eth or mix\n");
        return 2;
    }
    if (!outdir) {
        tmpdir = g_dir_make_tmp("qhca-fuzz-XXXXXX", NULL);
        outdir = tmpdir;
    }
    g_mkdir_with_parents(outdir, 0755);
    /* Sanitizer reports end the run; leaks of QEMU's own are not ours. */
    g_setenv("ASAN_OPTIONS", "detect_leaks=0:abort_on_error=1", FALSE);
    g_setenv("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1", FALSE);
    events = fz_read_events(events_file);
    /*
     * Run a hard link of QEMU, beside it (it finds its data relative to
     * itself): a rebuild meanwhile replaces the file, not the link.
     */
    qemu_link = g_strdup_printf("%s.fuzz-%d", getenv("QTEST_QEMU_BINARY"),
                                (int)getpid());
    if (link(getenv("QTEST_QEMU_BINARY"), qemu_link) == 0) {
        struct sigaction sa = { .sa_handler = fz_on_signal };

        g_setenv("QTEST_QEMU_BINARY", qemu_link, TRUE);
        fz_qemu_link = qemu_link;
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGHUP, &sa, NULL);
    } else {
        g_clear_pointer(&qemu_link, g_free);
    }

    fz_eth_ok = fz_net != FZ_NET_IB && qt_has_eth();
    if (fz_net == FZ_NET_ETH && !fz_eth_ok) {
        fprintf(stderr, "qhca-fuzz: --net eth, but this qhca has no netdev "
                "property\n");
        return 2;
    }
    printf("qhca-fuzz: seeds from %" PRIu64 ", %" PRIu64 " steps each, "
           "budget %" PRIu64 " s, QEMU %s; Ethernet port: %s\n", first,
           steps, budget, getenv("QTEST_QEMU_BINARY"),
           !fz_eth_ok ? "none" : fz_net == FZ_NET_ETH ? "every run" :
           "every third seed");
    fflush(stdout);
    for (seed = first;
         (nseeds ? seed < first + nseeds :
                   g_get_monotonic_time() - start <
                   (gint64)budget * G_USEC_PER_SEC);
         seed++) {
        g_autofree char *log = g_strdup_printf("%s/seed-%" PRIu64 ".log",
                                               outdir, seed);
        g_autofree char *trace = g_strdup_printf("%s/trace-%" PRIu64 ".log",
                                                 outdir, seed);
        g_autofree char *text = NULL;
        gint64 deadline;
        int pfd[2], wstatus = 0;
        pid_t pid, done = 0;
        FILE *in;
        char line[256];
        bool ok;

        g_assert(pipe(pfd) == 0);
        fflush(stdout);
        pid = fork();
        g_assert(pid >= 0);
        if (pid == 0) {
            FILE *out = fdopen(pfd[1], "w");
            int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);

            close(pfd[0]);
            setpgid(0, 0);
            signal(SIGINT, SIG_DFL);
            signal(SIGTERM, SIG_DFL);
            signal(SIGHUP, SIG_DFL);
            dup2(fd, 2);
            dup2(fd, 1);
            fz_run(seed, steps, trace, out);
            _exit(0);
        }
        setpgid(pid, pid);
        close(pfd[1]);
        in = fdopen(pfd[0], "r");
        /* The child writes its results at the end, so read after. */
        deadline = g_get_monotonic_time() +
                   FZ_RUN_DEADLINE_S * G_USEC_PER_SEC;
        while (!done) {
            done = waitpid(pid, &wstatus, WNOHANG);
            if (!done && g_get_monotonic_time() > deadline) {
                kill(-pid, SIGKILL);
                waitpid(pid, &wstatus, 0);
                wstatus = -1;
                break;
            }
            if (!done) {
                g_usleep(20000);
            }
        }
        /* Let the run's QEMU go too, whatever became of the run. */
        kill(-pid, SIGKILL);
        while (fgets(line, sizeof(line), in)) {
            g_strchomp(line);
            if (line[0] == 'S') {
                execs += g_ascii_strtoull(line + 2, NULL, 10);
            } else if (line[0] == 'E') {
                eth_runs += line[2] == '1';
            } else if (line[0] == 'P') {
                g_hash_table_add(pairs, g_strdup(line + 2));
            }
        }
        fclose(in);
        fz_read_trace(trace, seen);
        runs++;
        if (runs % 25 == 0) {
            printf("  %" PRIu64 " runs, %" PRIu64 " steps, %" PRIu64
                   " findings, %.0f s\n", runs, execs, findings,
                   (g_get_monotonic_time() - start) / 1e6);
        }

        ok = wstatus == 0;
        if (ok && !getenv("QHCA_FUZZ_KEEP")) {
            unlink(log);
            unlink(trace);
            continue;
        }
        if (ok) {
            continue;
        }
        g_file_get_contents(log, &text, NULL, NULL);
        if (retried != seed) {
            starts = 0;
        }
        if (text && strstr(text, "qtest_connect") &&
            starts < FZ_START_ATTEMPTS) {
            /*
             * QEMU did not come up in libqtest's time (a sanitizer build
             * on a loaded host): not the device's doing, the seed has not
             * run yet.  Again, after a longer pause each time; a QEMU that
             * never starts is still a finding.
             */
            starts++;
            printf("  seed %" PRIu64 ": QEMU did not start, again in %u s\n",
                   seed, 1u << starts);
            restarts++;
            retried = seed--;
            unlink(log);
            unlink(trace);
            g_usleep((1u << starts) * G_USEC_PER_SEC);
            continue;
        }
        findings++;
        printf("FINDING seed %" PRIu64 ": %s; reproduce with --seed %"
               PRIu64 " --seeds 1 --steps %" PRIu64 "; log %s (QEMU's "
               "trace beside it)\n", seed,
               wstatus == -1 ? "no end within the deadline (hang)" :
               WIFSIGNALED(wstatus) ? "killed by a signal" :
               "exited non-zero", seed, steps, log);
        if (text) {
            /* The lines that say why. */
            g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
            int n;

            for (n = 0; lines[n]; n++) {
                if (strstr(lines[n], "FINDING") || strstr(lines[n], "ERROR") ||
                    strstr(lines[n], "runtime error") ||
                    strstr(lines[n], "Sanitizer") ||
                    strstr(lines[n], "assert")) {
                    printf("  %s\n", lines[n]);
                }
            }
        }
    }

    {
        unsigned cmd = 0, cqe = 0, other = 0;
        GHashTableIter it;
        gpointer key;

        g_hash_table_iter_init(&it, pairs);
        while (g_hash_table_iter_next(&it, &key, NULL)) {
            if (g_str_has_prefix(key, "cmd ")) {
                cmd++;
            } else if (g_str_has_prefix(key, "cqe ")) {
                cqe++;
            } else {
                other++;
            }
        }
        printf("executions: %" PRIu64 " steps in %" PRIu64 " runs (seeds %"
               PRIu64 "..%" PRIu64 ", %" PRIu64 " with the Ethernet port), "
               "%.0f s\n", execs, runs, first, seed - 1, eth_runs,
               (g_get_monotonic_time() - start) / 1e6);
        printf("coverage: %u of %u qhca trace events emitted; %u (command, "
               "status) pairs, %u (CQE opcode, status) pairs, %u other "
               "outcomes\n", g_hash_table_size(seen),
               g_hash_table_size(events), cmd, cqe, other);
        if (!g_hash_table_size(events)) {
            printf("  (--trace-events FILE gives the number defined)\n");
        } else {
            g_autoptr(GString) missed = g_string_new(NULL);

            g_hash_table_iter_init(&it, events);
            while (g_hash_table_iter_next(&it, &key, NULL)) {
                if (!g_hash_table_contains(seen, key)) {
                    g_string_append_printf(missed, " %s", (char *)key);
                }
            }
            printf("  trace events not reached:%s\n", missed->str);
        }
        if (verbose) {
            /* Every outcome seen, sorted: what the grammar reaches. */
            g_autofree gpointer *keys =
                g_hash_table_get_keys_as_array(pairs, NULL);
            guint n = g_hash_table_size(pairs), k;

            qsort(keys, n, sizeof(*keys), fz_strcmp);
            for (k = 0; k < n; k++) {
                printf("  outcome %s\n", (char *)keys[k]);
            }
        }
        printf("findings: %" PRIu64 "%s%s\n", findings,
               findings ? ", logs in " : "", findings ? outdir : "");
        if (restarts) {
            printf("  (%" PRIu64 " runs started again: QEMU did not come "
                   "up in time)\n", restarts);
        }
    }
    if (qemu_link) {
        fz_qemu_link = NULL;
        unlink(qemu_link);
    }
    if (tmpdir && !findings) {
        rmdir(tmpdir);
    }
    return findings ? 1 : 0;
}
