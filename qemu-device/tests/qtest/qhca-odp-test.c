/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qtest for qhca on-demand paging (interface 1.8), written from the
 * contract in qhca_hw.h: REG_MR of flags ODP and ODP_IMPLICIT, ODP_MAP and
 * ODP_UNMAP with every malformed field and the max-mr-pages charge, page
 * faults of the requester and the responder of an RC pair on the loopback
 * wire (the PAGE_FAULT event, QUERY_PAGE_FAULT, RESUME_PAGE_FAULT RESOLVED
 * and FAILED), UNMAP as the invalidation fence, write permission, faults
 * that outlive their QP or MR, the counters, and DM MRs of length 0.  The
 * test plays the driver: it maps the pages a fault names, as ib_umem_odp
 * would, from pages of guest RAM it allocates.
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qemu/units.h"
#include "qhca-qtest.h"

#define PAGE                4096ull
#define ODP_IOVA            0x7f1200000000ull   /* a process's address */
#define ODP_PAGES           4
#define ODP_KEY             0x6d
#define ODP_ACCESS          (QHCA_ACCESS_LOCAL_WRITE | \
                             QHCA_ACCESS_REMOTE_WRITE | \
                             QHCA_ACCESS_REMOTE_READ | \
                             QHCA_ACCESS_REMOTE_ATOMIC)
#define PSN_BASE            0x100
#define FAULT_EVENTS        (1u << QHCA_EVENT_PAGE_FAULT)
/* Longer than min_rnr_timer 1 (10 us): one RNR wait of the requester. */
#define RNR_STEP_NS         1000000

typedef struct Odp {
    QhcaTest *t;
    uint32_t uar;
    uint32_t pdn;
    QhcaEq eq;
    QhcaCq *cq_a;
    QhcaCq *cq_b;
    QhcaQp *a;                  /* the requester */
    QhcaQp *b;                  /* the responder */
    uint32_t lkey;              /* a PHYS MR over RAM, every access */
    uint64_t pbl;               /* ODP_MAP's entries, 512 of them */
} Odp;

/* A device, an EQ for page faults, and two RC QPs connected to each other. */
static Odp *odp_start(const char *props)
{
    Odp *o = g_new0(Odp, 1);
    QhcaTest *t = qt_start_dp(props, &o->uar, &o->pdn, &o->eq, FAULT_EVENTS);
    QhcaQpSpec spec;

    o->t = t;
    o->cq_a = qt_cq_new(t, 6, o->eq.eqn, o->uar);
    o->cq_b = qt_cq_new(t, 6, o->eq.eqn, o->uar);
    spec = qt_rc_spec(o->pdn, o->uar, o->cq_a, o->cq_a);
    o->a = qt_qp_new(t, &spec);
    spec = qt_rc_spec(o->pdn, o->uar, o->cq_b, o->cq_b);
    o->b = qt_qp_new(t, &spec);
    qt_qp_connect(t, o->a, o->b, &qt_rc_path, PSN_BASE);
    qt_qp_connect(t, o->b, o->a, &qt_rc_path, PSN_BASE);
    o->lkey = qt_reg_phys_mr(t, o->pdn, QHCA_ACCESS_LOCAL_WRITE |
                             QHCA_ACCESS_REMOTE_WRITE |
                             QHCA_ACCESS_REMOTE_READ |
                             QHCA_ACCESS_REMOTE_ATOMIC, 0x11, 12);
    o->pbl = guest_alloc(&t->alloc, QHCA_ODP_MAP_MAX_PAGES * 8);
    return o;
}

static void odp_stop(Odp *o)
{
    qt_assert_alive(o->t);
    qhca_stop(o->t);
    g_free(o->cq_a);
    g_free(o->cq_b);
    g_free(o->a);
    g_free(o->b);
    g_free(o);
}

/* @n pages of guest RAM, page aligned, filled with @fill. */
static uint64_t odp_pages(Odp *o, unsigned n, uint8_t fill)
{
    uint64_t p = ROUND_UP(guest_alloc(&o->t->alloc, (n + 1) * PAGE), PAGE);

    qtest_memset(o->t->qts, p, fill, n * PAGE);
    return p;
}

static struct qhca_cmd_reg_mr odp_reg_cmd(Odp *o, uint64_t iova,
                                          uint64_t length, uint8_t flags)
{
    return (struct qhca_cmd_reg_mr) {
        .iova = cpu_to_le64(iova),
        .length = cpu_to_le64(length),
        .pdn = cpu_to_le32(o->pdn),
        .access = ODP_ACCESS,
        .key = ODP_KEY,
        .page_shift = 12,
        .flags = flags,
    };
}

static uint8_t odp_try_reg(Odp *o, struct qhca_cmd_reg_mr *c, uint32_t *index)
{
    return qt_cmd(o->t, QHCA_CMD_REG_MR, c, sizeof(*c), index);
}

/* An explicit ODP MR of @pages 4 KiB pages at ODP_IOVA; its index. */
static uint32_t odp_reg(Odp *o, unsigned pages)
{
    struct qhca_cmd_reg_mr c = odp_reg_cmd(o, ODP_IOVA, pages * PAGE,
                                           QHCA_MR_F_ODP);
    uint32_t index;

    g_assert_cmpuint(odp_try_reg(o, &c, &index), ==, QHCA_AQ_SUCCESS);
    return index;
}

static uint32_t odp_key(uint32_t index)
{
    return index << 8 | ODP_KEY;
}

/* ODP_MAP of the @n entries @e from @first on. */
static uint8_t odp_try_map(Odp *o, uint32_t index, uint64_t first,
                           const uint64_t *e, uint32_t n)
{
    uint32_t i;

    for (i = 0; i < n && i < QHCA_ODP_MAP_MAX_PAGES; i++) {
        qtest_writeq(o->t->qts, o->pbl + 8 * i, e[i]);
    }
    return qt_odp_map(o->t, index, first, o->pbl, n);
}

/* ODP_MAP of @n pages from guest address @addr, @perm for each. */
static void odp_map(Odp *o, uint32_t index, uint64_t first, uint64_t addr,
                    uint32_t n, uint64_t perm)
{
    g_autofree uint64_t *e = g_new(uint64_t, n);
    uint32_t i;

    for (i = 0; i < n; i++) {
        e[i] = (addr + i * PAGE) | perm;
    }
    g_assert_cmpuint(odp_try_map(o, index, first, e, n), ==,
                     QHCA_AQ_SUCCESS);
}

static uint8_t odp_unmap(Odp *o, uint32_t index, uint64_t first,
                         uint64_t n)
{
    return qt_odp_unmap(o->t, index, first, n);
}

static uint8_t odp_query(Odp *o, uint32_t qpn,
                         struct qhca_page_fault_info *info)
{
    memset(info, 0xa5, sizeof(*info));
    return qt_query_page_fault(o->t, qpn, info);
}

static uint8_t odp_resume(Odp *o, uint32_t qpn, uint8_t kind, uint8_t status)
{
    return qt_resume_page_fault(o->t, qpn, kind, status);
}

/*
 * QUERY_PAGE_FAULT says that QP @qpn has a fault of @kind pending at @addr
 * of MR @index, for at least one and at most @max_len bytes (the access
 * from @addr on), writing if @write; the other kind is not pending.
 * Returns the fault.
 */
static struct qhca_page_fault odp_check_fault(Odp *o, uint32_t qpn,
                                              uint8_t kind, uint32_t index,
                                              uint64_t addr,
                                              uint32_t max_len, bool write)
{
    struct qhca_page_fault_info info;
    struct qhca_page_fault f;

    g_assert_cmpuint(odp_query(o, qpn, &info), ==, QHCA_AQ_SUCCESS);
    f = info.fault[kind];
    g_assert_cmphex(f.flags, ==, QHCA_PAGE_FAULT_F_PENDING |
                    (write ? QHCA_PAGE_FAULT_F_WRITE : 0));
    g_assert_cmphex(le64_to_cpu(f.addr), ==, addr);
    g_assert_cmpuint(le32_to_cpu(f.length), >=, 1);
    g_assert_cmpuint(le32_to_cpu(f.length), <=, max_len);
    g_assert_cmpuint(le32_to_cpu(f.mr_index), ==, index);
    g_assert_cmphex(info.fault[kind ^ 1].flags & QHCA_PAGE_FAULT_F_PENDING,
                    ==, 0);
    return f;
}

/* The PAGE_FAULT event of QP @qpn comes, and the fault is as above. */
static struct qhca_page_fault odp_expect_fault(Odp *o, uint32_t qpn,
                                               uint8_t kind, uint32_t index,
                                               uint64_t addr,
                                               uint32_t max_len, bool write)
{
    qt_eq_expect(o->t, &o->eq, QHCA_EVENT_PAGE_FAULT, qpn);
    return odp_check_fault(o, qpn, kind, index, addr, max_len, write);
}

/* QP @qpn holds no fault of either kind. */
static void odp_assert_no_fault(Odp *o, uint32_t qpn)
{
    struct qhca_page_fault_info info;

    g_assert_cmpuint(odp_query(o, qpn, &info), ==, QHCA_AQ_SUCCESS);
    g_assert_cmphex(info.fault[QHCA_PAGE_FAULT_REQUESTER].flags &
                    QHCA_PAGE_FAULT_F_PENDING, ==, 0);
    g_assert_cmphex(info.fault[QHCA_PAGE_FAULT_RESPONDER].flags &
                    QHCA_PAGE_FAULT_F_PENDING, ==, 0);
}

static uint64_t odp_cnt(Odp *o, enum qhca_counter i)
{
    return qt_counter(o->t, i);
}

static struct qhca_sq_wqe odp_wqe(uint64_t wr_id, uint8_t opcode,
                                  uint64_t remote_addr, uint32_t rkey)
{
    return (struct qhca_sq_wqe) {
        .wr_id = cpu_to_le64(wr_id),
        .opcode = opcode,
        .flags = QHCA_WQE_F_SIGNALED,
        .num_sge = 1,
        .remote_addr = cpu_to_le64(remote_addr),
        .rkey = cpu_to_le32(rkey),
    };
}

/* Post one WQE of one SGE on A and ring. */
static void odp_post(Odp *o, const struct qhca_sq_wqe *w, uint64_t addr,
                     uint32_t len, uint32_t lkey)
{
    struct qhca_sge sge = qt_sge(addr, len, lkey);

    qt_qp_post_send(o->t, o->a, w, &sge, 1);
    qt_qp_ring_sq(o->t, o->a);
}

/* A's WQE @wr_id completes with @opcode and @status. */
static void odp_expect_a(Odp *o, uint64_t wr_id, uint8_t opcode,
                         uint8_t status)
{
    struct qhca_cqe cqe = qt_cq_expect(o->t, o->cq_a, o->a->qpn, opcode,
                                       status);

    g_assert_cmpuint(le64_to_cpu(cqe.wr_id), ==, wr_id);
}

static void odp_fill(uint8_t *p, size_t len, uint8_t seed)
{
    size_t i;

    for (i = 0; i < len; i++) {
        p[i] = seed + i * 13 + (i >> 9);
    }
}

static void odp_assert_mem(Odp *o, uint64_t addr, const uint8_t *want,
                           size_t len)
{
    g_autofree uint8_t *got = g_malloc(len);

    qtest_memread(o->t->qts, addr, got, len);
    g_assert_cmpmem(got, len, want, len);
}

/*
 * Wait until the responder's RNR NAK reached the requester, which then
 * waits for the virtual clock: the test steps it (odp_rnr_retry()) only
 * after the fault is resumed, so that the request comes again once.
 */
static void odp_rnr_wait(Odp *o, uint64_t naks)
{
    qt_wait_counter(o->t, QHCA_CNT_RNR_NAKS_RCVD, naks);
}

static void odp_rnr_retry(Odp *o)
{
    qtest_clock_step(o->t->qts, RNR_STEP_NS);
}

/*
 * The driver's answer to QP @qpn's requester fault: @n pages from guest
 * address @addr mapped at @first with @perm, then RESUME RESOLVED.
 */
static void odp_resolve(Odp *o, uint32_t qpn, uint32_t index, uint64_t first,
                        uint64_t addr, uint32_t n, uint64_t perm)
{
    odp_map(o, index, first, addr, n, perm);
    g_assert_cmpuint(odp_resume(o, qpn, QHCA_PAGE_FAULT_REQUESTER,
                                QHCA_PAGE_FAULT_RESOLVED), ==,
                     QHCA_AQ_SUCCESS);
}

/*
 * The same for B's responder fault, once the @naks-th RNR NAK reached A;
 * then A's RNR wait runs out and the request comes again.
 */
static void odp_resolve_responder(Odp *o, uint64_t naks, uint32_t index,
                                  uint64_t first, uint64_t addr, uint32_t n,
                                  uint64_t perm)
{
    odp_rnr_wait(o, naks);
    odp_map(o, index, first, addr, n, perm);
    g_assert_cmpuint(odp_resume(o, o->b->qpn, QHCA_PAGE_FAULT_RESPONDER,
                                QHCA_PAGE_FAULT_RESOLVED), ==,
                     QHCA_AQ_SUCCESS);
    odp_rnr_retry(o);
}

/* ------------------------------------------------------------------ */

/* Interface 1.8 and the capability. */
static void test_caps(void)
{
    QhcaTest *t = qhca_start(NULL);
    struct qhca_device_attr a;

    qt_enable(t, 2);
    g_assert_cmphex(qt_rd(t, QHCA_REG_VERSION), ==, QHCA_VERSION_1_8);
    g_assert_cmpuint(qt_query(t, QHCA_CMD_QUERY_DEVICE, NULL, 0, &a,
                              sizeof(a)), ==, QHCA_AQ_SUCCESS);
    g_assert_cmphex(le32_to_cpu(a.hw_version), ==, QHCA_VERSION_1_8);
    g_assert_cmphex(le32_to_cpu(a.device_cap_flags) &
                    QHCA_DEV_CAP_ON_DEMAND_PAGING, ==,
                    QHCA_DEV_CAP_ON_DEMAND_PAGING);
    qt_assert_alive(t);
    qhca_stop(t);
}

/* REG_MR @c is BAD_PARAM, counted as a guest error. */
static void odp_reg_refused(Odp *o, struct qhca_cmd_reg_mr *c)
{
    uint64_t errors = qt_guest_errors(o->t);
    uint32_t index;

    g_assert_cmpuint(odp_try_reg(o, c, &index), ==, QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(qt_guest_errors(o->t), ==, errors + 1);
}

/* REG_MR of ODP and ODP_IMPLICIT: what it takes and what it refuses. */
static void test_reg(void)
{
    Odp *o = odp_start(NULL);
    struct qhca_cmd_reg_mr c;
    struct qhca_cmd_rereg_mr r;
    uint32_t index, implicit, mrs;

    mrs = le32_to_cpu(qt_stats(o->t).mrs);

    /* Explicit, at an unaligned iova, with every access and MW_BIND. */
    c = odp_reg_cmd(o, ODP_IOVA + 0x123, 5 * PAGE, QHCA_MR_F_ODP);
    c.access |= QHCA_ACCESS_REMOTE_ATOMIC | QHCA_ACCESS_MW_BIND;
    g_assert_cmpuint(odp_try_reg(o, &c, &index), ==, QHCA_AQ_SUCCESS);
    /* 1 GiB pages, and 2^40 bytes: nothing is charged at registration. */
    c = odp_reg_cmd(o, 0, QHCA_MAX_MR_SIZE, QHCA_MR_F_ODP);
    c.page_shift = 30;
    g_assert_cmpuint(odp_try_reg(o, &c, &implicit), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(qt_handle_cmd(o->t, QHCA_CMD_DEREG_MR, implicit), ==,
                     QHCA_AQ_SUCCESS);
    /* Implicit: iova and length 0. */
    c = odp_reg_cmd(o, 0, 0, QHCA_MR_F_ODP | QHCA_MR_F_ODP_IMPLICIT);
    g_assert_cmpuint(odp_try_reg(o, &c, &implicit), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(le32_to_cpu(qt_stats(o->t).mrs), ==, mrs + 2);

    /* Not with another kind of MR. */
    c = odp_reg_cmd(o, 0, PAGE, QHCA_MR_F_ODP | QHCA_MR_F_PHYS);
    odp_reg_refused(o, &c);
    c = odp_reg_cmd(o, ODP_IOVA, PAGE, QHCA_MR_F_ODP | QHCA_MR_F_PBL_INDIRECT);
    odp_reg_refused(o, &c);
    c = odp_reg_cmd(o, 0, 0, QHCA_MR_F_ODP | QHCA_MR_F_FAST_REG);
    c.npages = cpu_to_le32(4);
    c.access = 0;
    c.page_shift = 0;
    odp_reg_refused(o, &c);
    c = odp_reg_cmd(o, 0, PAGE, QHCA_MR_F_ODP | QHCA_MR_F_DM);
    c.page_shift = 0;
    odp_reg_refused(o, &c);
    c = odp_reg_cmd(o, 0, 0, QHCA_MR_F_ODP | QHCA_MR_F_ODP_IMPLICIT |
                    QHCA_MR_F_PHYS);
    odp_reg_refused(o, &c);
    /* No page list. */
    c = odp_reg_cmd(o, ODP_IOVA, PAGE, QHCA_MR_F_ODP);
    c.pbl_addr = cpu_to_le64(o->pbl);
    odp_reg_refused(o, &c);
    c = odp_reg_cmd(o, ODP_IOVA, PAGE, QHCA_MR_F_ODP);
    c.npages = cpu_to_le32(1);
    odp_reg_refused(o, &c);
    /* Implicit: iova and length 0, nothing else. */
    c = odp_reg_cmd(o, PAGE, 0, QHCA_MR_F_ODP | QHCA_MR_F_ODP_IMPLICIT);
    odp_reg_refused(o, &c);
    c = odp_reg_cmd(o, 0, PAGE, QHCA_MR_F_ODP | QHCA_MR_F_ODP_IMPLICIT);
    odp_reg_refused(o, &c);
    /* ODP_IMPLICIT is a kind of ODP MR, not a flag of its own. */
    c = odp_reg_cmd(o, 0, 0, QHCA_MR_F_ODP_IMPLICIT);
    odp_reg_refused(o, &c);
    /* An explicit MR's range and pages are those of any MR. */
    c = odp_reg_cmd(o, ODP_IOVA, 0, QHCA_MR_F_ODP);
    odp_reg_refused(o, &c);
    c = odp_reg_cmd(o, 0, QHCA_MAX_MR_SIZE + 1, QHCA_MR_F_ODP);
    odp_reg_refused(o, &c);
    c = odp_reg_cmd(o, UINT64_MAX - PAGE + 1, 2 * PAGE, QHCA_MR_F_ODP);
    odp_reg_refused(o, &c);
    c = odp_reg_cmd(o, ODP_IOVA, PAGE, QHCA_MR_F_ODP);
    c.page_shift = 11;
    odp_reg_refused(o, &c);
    c.page_shift = 31;
    odp_reg_refused(o, &c);
    c = odp_reg_cmd(o, ODP_IOVA, PAGE, QHCA_MR_F_ODP);
    c.access = QHCA_ACCESS_REMOTE_WRITE;
    odp_reg_refused(o, &c);
    c = odp_reg_cmd(o, ODP_IOVA, PAGE, QHCA_MR_F_ODP | 0x40);
    odp_reg_refused(o, &c);
    g_assert_cmpuint(le32_to_cpu(qt_stats(o->t).mrs), ==, mrs + 2);

    /* REREG_MR refuses an ODP MR, whatever it would change. */
    r = (struct qhca_cmd_rereg_mr) {
        .index = cpu_to_le32(index),
        .access = QHCA_ACCESS_LOCAL_WRITE,
        .mask = QHCA_REREG_ACCESS,
    };
    g_assert_cmpuint(qt_cmd(o->t, QHCA_CMD_REREG_MR, &r, sizeof(r), NULL),
                     ==, QHCA_AQ_BAD_PARAM);
    r = (struct qhca_cmd_rereg_mr) {
        .index = cpu_to_le32(implicit),
        .pdn = cpu_to_le32(o->pdn),
        .mask = QHCA_REREG_PD,
    };
    g_assert_cmpuint(qt_cmd(o->t, QHCA_CMD_REREG_MR, &r, sizeof(r), NULL),
                     ==, QHCA_AQ_BAD_PARAM);
    qtest_writeq(o->t->qts, o->pbl, odp_pages(o, 1, 0));
    r = (struct qhca_cmd_rereg_mr) {
        .iova = cpu_to_le64(ODP_IOVA),
        .length = cpu_to_le64(PAGE),
        .pbl_addr = cpu_to_le64(o->pbl),
        .index = cpu_to_le32(index),
        .npages = cpu_to_le32(1),
        .page_shift = 12,
        .mask = QHCA_REREG_TRANSLATION,
    };
    g_assert_cmpuint(qt_cmd(o->t, QHCA_CMD_REREG_MR, &r, sizeof(r), NULL),
                     ==, QHCA_AQ_BAD_PARAM);

    g_assert_cmpuint(qt_handle_cmd(o->t, QHCA_CMD_DEREG_MR, index), ==,
                     QHCA_AQ_SUCCESS);
    g_assert_cmpuint(qt_handle_cmd(o->t, QHCA_CMD_DEREG_MR, implicit), ==,
                     QHCA_AQ_SUCCESS);
    g_assert_cmpuint(qt_handle_cmd(o->t, QHCA_CMD_DEREG_MR, index), ==,
                     QHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(le32_to_cpu(qt_stats(o->t).mrs), ==, mrs);
    odp_stop(o);
}

/*
 * ODP_MAP @e (@n entries from @first) is refused with @status and maps
 * nothing: ODP_PAGES_MAPPED does not move.
 */
static void odp_map_refused(Odp *o, uint32_t index, uint64_t first,
                            const uint64_t *e, uint32_t n, uint8_t status)
{
    uint64_t mapped = odp_cnt(o, QHCA_CNT_ODP_PAGES_MAPPED);

    g_assert_cmpuint(odp_try_map(o, index, first, e, n), ==, status);
    g_assert_cmpuint(odp_cnt(o, QHCA_CNT_ODP_PAGES_MAPPED), ==, mapped);
}

/*
 * Malformed ODP_MAP and ODP_UNMAP: refused whole, nothing mapped (a SEND
 * from the first page, which every refused list held good, still faults
 * there); ODP_UNMAP of pages never mapped is fine.
 */
static void test_map_bad(void)
{
    Odp *o = odp_start(NULL);
    uint32_t index = odp_reg(o, ODP_PAGES);
    uint64_t pg = odp_pages(o, ODP_PAGES, 0x5a);
    uint64_t r = QHCA_ODP_PAGE_READ, rw = r | QHCA_ODP_PAGE_WRITE;
    g_autofree uint64_t *e = g_new0(uint64_t, QHCA_ODP_MAP_MAX_PAGES + 1);
    struct qhca_cmd_odp_map m;
    struct qhca_sq_wqe w;
    uint64_t unmaps;
    unsigned i;

    for (i = 0; i < ODP_PAGES; i++) {
        e[i] = (pg + i * PAGE) | rw;
    }

#define BAD_LAST(val) do {                                              \
        e[ODP_PAGES - 1] = (val);                                       \
        odp_map_refused(o, index, 0, e, ODP_PAGES, QHCA_AQ_BAD_PARAM);  \
        e[ODP_PAGES - 1] = (pg + (ODP_PAGES - 1) * PAGE) | rw;          \
    } while (0)
    /* The last entry bad, the three before it good. */
    BAD_LAST((pg + 0x800) | rw);                    /* unaligned */
    BAD_LAST(RAM_END | rw);                         /* beyond RAM */
    BAD_LAST((RAM_END - PAGE) | (1ull << 63) | rw); /* far beyond */
    BAD_LAST(o->t->bar0.addr | rw);                 /* not RAM: BAR 0 */
    BAD_LAST(pg | QHCA_ODP_PAGE_WRITE);             /* no READ */
    BAD_LAST(pg);                                   /* no bits at all */
    BAD_LAST(pg | rw | 0x4);                        /* reserved bits */
    BAD_LAST(pg | rw | 0x800);
#undef BAD_LAST
    /* Pages beyond the MR: all of them, or the last one. */
    odp_map_refused(o, index, ODP_PAGES, e, 1, QHCA_AQ_BAD_PARAM);
    odp_map_refused(o, index, 1, e, ODP_PAGES, QHCA_AQ_BAD_PARAM);
    odp_map_refused(o, index, UINT64_MAX, e, 2, QHCA_AQ_BAD_PARAM);
    /* npages 0 and 513. */
    odp_map_refused(o, index, 0, e, 0, QHCA_AQ_BAD_PARAM);
    odp_map_refused(o, index, 0, e, QHCA_ODP_MAP_MAX_PAGES + 1,
                    QHCA_AQ_BAD_PARAM);
    /* No such MR; an MR that is not ODP. */
    odp_map_refused(o, index + 100, 0, e, 1, QHCA_AQ_BAD_HANDLE);
    odp_map_refused(o, o->lkey >> 8, 0, e, 1, QHCA_AQ_BAD_PARAM);
    /* Reserved fields; the list unaligned or outside guest RAM. */
    m = (struct qhca_cmd_odp_map) {
        .pbl_addr = cpu_to_le64(o->pbl),
        .index = cpu_to_le32(index),
        .npages = cpu_to_le32(1),
        .rsvd = { 0, 1 },
    };
    qtest_writeq(o->t->qts, o->pbl, e[0]);
    g_assert_cmpuint(qt_cmd(o->t, QHCA_CMD_ODP_MAP, &m, sizeof(m), NULL), ==,
                     QHCA_AQ_BAD_PARAM);
    m.rsvd[1] = 0;
    m.pbl_addr = cpu_to_le64(o->pbl + 4);
    g_assert_cmpuint(qt_cmd(o->t, QHCA_CMD_ODP_MAP, &m, sizeof(m), NULL), ==,
                     QHCA_AQ_BAD_PARAM);
    m.pbl_addr = cpu_to_le64(RAM_END);
    g_assert_cmpuint(qt_cmd(o->t, QHCA_CMD_ODP_MAP, &m, sizeof(m), NULL), ==,
                     QHCA_AQ_BAD_ADDRESS);
    g_assert_cmpuint(odp_cnt(o, QHCA_CNT_ODP_PAGES_MAPPED), ==, 0);

    /* ODP_UNMAP: absent pages, and pages beyond the end, are fine. */
    unmaps = odp_cnt(o, QHCA_CNT_ODP_UNMAPS);
    g_assert_cmpuint(odp_unmap(o, index, 0, ODP_PAGES), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(odp_unmap(o, index, 2, 1000), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(odp_unmap(o, index, ODP_PAGES, 1), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(odp_unmap(o, index, UINT64_MAX, UINT64_MAX), ==,
                     QHCA_AQ_SUCCESS);
    g_assert_cmpuint(odp_cnt(o, QHCA_CNT_ODP_UNMAPS), ==, unmaps + 4);
    g_assert_cmpuint(odp_unmap(o, index, 0, 0), ==, QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(odp_unmap(o, index + 100, 0, 1), ==,
                     QHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(odp_unmap(o, o->lkey >> 8, 0, 1), ==,
                     QHCA_AQ_BAD_PARAM);

    /* Nothing was mapped: a SEND from page 0 faults at its first byte. */
    w = odp_wqe(1, QHCA_WR_SEND, 0, 0);
    odp_post(o, &w, ODP_IOVA + 0x10, 100, odp_key(index));
    odp_expect_fault(o, o->a->qpn, QHCA_PAGE_FAULT_REQUESTER, index,
                     ODP_IOVA + 0x10, 100, false);
    g_assert_cmpuint(odp_cnt(o, QHCA_CNT_ODP_PAGE_FAULTS), ==, 1);
    odp_stop(o);
}

/* Present pages are charged to max-mr-pages while they are present. */
static void test_charge(void)
{
    Odp *o = odp_start(",max-mr-pages=8");
    uint32_t index = odp_reg(o, 16);
    uint32_t other;
    uint64_t pg = odp_pages(o, 16, 0);
    uint64_t rw = QHCA_ODP_PAGE_READ | QHCA_ODP_PAGE_WRITE;
    uint64_t e[2] = { pg | rw, 0 };

    /* Registration charged nothing: eight pages can be mapped. */
    odp_map(o, index, 0, pg, 8, rw);
    g_assert_cmpuint(odp_cnt(o, QHCA_CNT_ODP_PAGES_MAPPED), ==, 8);
    g_assert_cmpuint(odp_try_map(o, index, 8, e, 1), ==,
                     QHCA_AQ_NO_RESOURCES);
    /* A present page mapped again is still one page; an absent one none. */
    odp_map(o, index, 0, pg + 4 * PAGE, 1, rw);
    e[0] = 0;
    g_assert_cmpuint(odp_try_map(o, index, 9, e, 1), ==, QHCA_AQ_SUCCESS);
    /* Four unmapped: four more fit, a fifth does not. */
    g_assert_cmpuint(odp_unmap(o, index, 4, 4), ==, QHCA_AQ_SUCCESS);
    odp_map(o, index, 12, pg + 12 * PAGE, 4, rw);
    e[0] = (pg + 8 * PAGE) | rw;
    g_assert_cmpuint(odp_try_map(o, index, 8, e, 1), ==,
                     QHCA_AQ_NO_RESOURCES);
    /* An entry of 0 makes its page absent and gives its charge back. */
    e[0] = 0;
    e[1] = (pg + 8 * PAGE) | rw;
    g_assert_cmpuint(odp_try_map(o, index, 0, e, 1), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(odp_try_map(o, index, 8, &e[1], 1), ==,
                     QHCA_AQ_SUCCESS);
    /* DEREG gives all of it back: another MR maps eight. */
    g_assert_cmpuint(qt_handle_cmd(o->t, QHCA_CMD_DEREG_MR, index), ==,
                     QHCA_AQ_SUCCESS);
    other = odp_reg(o, 16);
    odp_map(o, other, 8, pg, 8, rw);
    g_assert_cmpuint(odp_try_map(o, other, 0, e + 1, 1), ==,
                     QHCA_AQ_NO_RESOURCES);
    /* So does a reset (qt_enable() resets first). */
    qt_enable(o->t, 5);
    qt_alloc_uar_pd(o->t, &o->uar, &o->pdn);
    g_assert_cmpuint(odp_cnt(o, QHCA_CNT_ODP_PAGES_MAPPED), ==, 0);
    other = odp_reg(o, 16);
    odp_map(o, other, 0, pg, 8, rw);
    odp_stop(o);
}

/*
 * Requester: a SEND gathered from absent pages faults at the first absent
 * byte; the send queue stops there (the WQE after it waits too) until the
 * pages are mapped and the fault resumed.  A page still absent after
 * RESUME is a new fault.  Then the data arrives byte for byte.
 */
static void test_requester(void)
{
    Odp *o = odp_start(NULL);
    uint32_t index = odp_reg(o, ODP_PAGES);
    uint64_t pg = odp_pages(o, ODP_PAGES, 0);
    uint64_t rbuf = guest_alloc(&o->t->alloc, 3 * PAGE);
    uint64_t rw = QHCA_ODP_PAGE_READ | QHCA_ODP_PAGE_WRITE;
    g_autofree uint8_t *data = g_malloc(ODP_PAGES * PAGE);
    struct qhca_sge sge;
    struct qhca_sq_wqe w;
    struct qhca_cqe cqe;
    /* 5000 bytes from 0x100 of page 0: pages 0 and 1. */
    const uint32_t off = 0x100, len = 5000;

    odp_fill(data, ODP_PAGES * PAGE, 1);
    qtest_memwrite(o->t->qts, pg, data, ODP_PAGES * PAGE);
    qtest_memset(o->t->qts, rbuf, 0xee, 3 * PAGE);
    sge = qt_sge(rbuf, 2 * PAGE, o->lkey);
    qt_qp_post_recv(o->t, o->b, 0x51, &sge, 1);
    sge = qt_sge(rbuf + 2 * PAGE + 1, 10, o->lkey);
    qt_qp_post_recv(o->t, o->b, 0x52, &sge, 1);

    /* The SEND from the ODP MR, then one from the PHYS MR behind it. */
    w = odp_wqe(1, QHCA_WR_SEND, 0, 0);
    sge = qt_sge(ODP_IOVA + off, len, odp_key(index));
    qt_qp_post_send(o->t, o->a, &w, &sge, 1);
    w = odp_wqe(2, QHCA_WR_SEND, 0, 0);
    sge = qt_sge(pg, 10, o->lkey);
    qt_qp_post_send(o->t, o->a, &w, &sge, 1);
    qt_qp_ring_sq(o->t, o->a);

    odp_expect_fault(o, o->a->qpn, QHCA_PAGE_FAULT_REQUESTER, index,
                     ODP_IOVA + off, len, false);
    g_assert_cmpuint(odp_cnt(o, QHCA_CNT_ODP_PAGE_FAULTS), ==, 1);
    /* Mapping alone does not restart the QP: RESUME does. */
    odp_map(o, index, 0, pg, 1, rw);
    qt_cq_assert_empty(o->t, o->cq_a);
    odp_check_fault(o, o->a->qpn, QHCA_PAGE_FAULT_REQUESTER, index,
                    ODP_IOVA + off, len, false);
    qt_eq_assert_quiet(o->t, &o->eq);
    g_assert_cmpuint(odp_resume(o, o->a->qpn, QHCA_PAGE_FAULT_REQUESTER,
                                QHCA_PAGE_FAULT_RESOLVED), ==,
                     QHCA_AQ_SUCCESS);

    /* Page 1 is still absent: a new fault, at its first byte. */
    odp_expect_fault(o, o->a->qpn, QHCA_PAGE_FAULT_REQUESTER, index,
                     ODP_IOVA + PAGE, off + len - PAGE, false);
    g_assert_cmpuint(odp_cnt(o, QHCA_CNT_ODP_PAGE_FAULTS), ==, 2);
    odp_resolve(o, o->a->qpn, index, 1, pg + PAGE, 1, rw);

    /* In order: the ODP SEND, then the one behind it. */
    odp_expect_a(o, 1, QHCA_WC_SEND, QHCA_WC_SUCCESS);
    odp_expect_a(o, 2, QHCA_WC_SEND, QHCA_WC_SUCCESS);
    cqe = qt_cq_expect(o->t, o->cq_b, o->b->qpn, QHCA_WC_RECV,
                       QHCA_WC_SUCCESS);
    g_assert_cmpuint(le64_to_cpu(cqe.wr_id), ==, 0x51);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, len);
    odp_assert_mem(o, rbuf, data + off, len);
    cqe = qt_cq_expect(o->t, o->cq_b, o->b->qpn, QHCA_WC_RECV,
                       QHCA_WC_SUCCESS);
    g_assert_cmpuint(le64_to_cpu(cqe.wr_id), ==, 0x52);
    odp_assert_mem(o, rbuf + 2 * PAGE + 1, data, 10);
    odp_assert_no_fault(o, o->a->qpn);
    g_assert_cmpuint(odp_cnt(o, QHCA_CNT_ODP_PAGE_FAULTS), ==, 2);
    g_assert_cmpuint(odp_cnt(o, QHCA_CNT_ODP_PAGES_MAPPED), ==, 2);
    g_assert_cmpuint(odp_cnt(o, QHCA_CNT_ODP_FAULTS_FAILED), ==, 0);

    /* Present now: the same SEND again does not fault. */
    sge = qt_sge(rbuf, 2 * PAGE, o->lkey);
    qt_qp_post_recv(o->t, o->b, 0x53, &sge, 1);
    odp_post(o, &w, ODP_IOVA + off, len, odp_key(index));
    odp_expect_a(o, 2, QHCA_WC_SEND, QHCA_WC_SUCCESS);
    qt_cq_expect(o->t, o->cq_b, o->b->qpn, QHCA_WC_RECV, QHCA_WC_SUCCESS);
    g_assert_cmpuint(odp_cnt(o, QHCA_CNT_ODP_PAGE_FAULTS), ==, 2);
    odp_stop(o);
}

/*
 * Responder: an RDMA WRITE into absent pages of B's ODP MR faults (with
 * the request's PSN and WRITE) and is answered with an RNR NAK; once the
 * pages are mapped and the fault resumed, the requester's retry lands the
 * data and the WRITE completes.
 */
static void test_responder_write(void)
{
    Odp *o = odp_start(NULL);
    uint32_t index = odp_reg(o, ODP_PAGES);
    uint64_t pg = odp_pages(o, ODP_PAGES, 0);
    uint64_t src = odp_pages(o, 2, 0);
    uint64_t rw = QHCA_ODP_PAGE_READ | QHCA_ODP_PAGE_WRITE;
    g_autofree uint8_t *data = g_malloc(2 * PAGE);
    g_autofree uint8_t *zero = g_malloc0(ODP_PAGES * PAGE);
    struct qhca_page_fault f;
    struct qhca_sq_wqe w;
    const uint32_t off = 0x300, len = 3000;

    odp_fill(data, 2 * PAGE, 9);
    qtest_memwrite(o->t->qts, src, data, 2 * PAGE);
    w = odp_wqe(7, QHCA_WR_RDMA_WRITE, ODP_IOVA + PAGE + off,
                odp_key(index));
    odp_post(o, &w, src, len, o->lkey);

    f = odp_expect_fault(o, o->b->qpn, QHCA_PAGE_FAULT_RESPONDER, index,
                         ODP_IOVA + PAGE + off, len, true);
    g_assert_cmphex(le32_to_cpu(f.psn), ==, PSN_BASE + o->a->qpn);
    odp_assert_no_fault(o, o->a->qpn);
    odp_resolve_responder(o, 1, index, 1, pg + PAGE, 1, rw);
    odp_expect_a(o, 7, QHCA_WC_RDMA_WRITE, QHCA_WC_SUCCESS);
    g_assert_cmpuint(odp_cnt(o, QHCA_CNT_RNR_NAKS_SENT), ==, 1);
    odp_assert_mem(o, pg + PAGE + off, data, len);
    odp_assert_mem(o, pg, zero, PAGE + off);
    odp_assert_mem(o, pg + PAGE + off + len, zero,
                   3 * PAGE - off - len);
    odp_assert_no_fault(o, o->b->qpn);
    g_assert_cmpuint(qt_qp_state(o->t, o->b), ==, QHCA_QPS_RTS);
    g_assert_cmpuint(odp_cnt(o, QHCA_CNT_ODP_PAGE_FAULTS), ==, 1);
    g_assert_cmpuint(odp_cnt(o, QHCA_CNT_ODP_FAULTS_FAILED), ==, 0);
    odp_stop(o);
}

/*
 * Responder, receive: a SEND whose receive WQE's buffer is absent in B's
 * ODP MR faults (WRITE) and is answered with an RNR NAK, the receive WQE
 * not consumed; after map and resume the retry fills that WQE.
 */
static void test_responder_recv(void)
{
    Odp *o = odp_start(NULL);
    uint32_t index = odp_reg(o, ODP_PAGES);
    uint64_t pg = odp_pages(o, ODP_PAGES, 0);
    uint64_t src = odp_pages(o, 1, 0);
    uint64_t rw = QHCA_ODP_PAGE_READ | QHCA_ODP_PAGE_WRITE;
    g_autofree uint8_t *data = g_malloc(PAGE);
    struct qhca_page_fault f;
    struct qhca_sge sge;
    struct qhca_sq_wqe w;
    struct qhca_cqe cqe;
    const uint32_t off = 0x20, len = 3000;

    odp_fill(data, PAGE, 21);
    qtest_memwrite(o->t->qts, src, data, PAGE);
    sge = qt_sge(ODP_IOVA + 3 * PAGE + off, PAGE - off, odp_key(index));
    qt_qp_post_recv(o->t, o->b, 0x61, &sge, 1);
    w = odp_wqe(8, QHCA_WR_SEND, 0, 0);
    odp_post(o, &w, src, len, o->lkey);

    f = odp_expect_fault(o, o->b->qpn, QHCA_PAGE_FAULT_RESPONDER, index,
                         ODP_IOVA + 3 * PAGE + off, PAGE - off, true);
    g_assert_cmphex(le32_to_cpu(f.psn), ==, PSN_BASE + o->a->qpn);
    odp_resolve_responder(o, 1, index, 3, pg + 3 * PAGE, 1, rw);
    odp_expect_a(o, 8, QHCA_WC_SEND, QHCA_WC_SUCCESS);
    cqe = qt_cq_expect(o->t, o->cq_b, o->b->qpn, QHCA_WC_RECV,
                       QHCA_WC_SUCCESS);
    g_assert_cmpuint(le64_to_cpu(cqe.wr_id), ==, 0x61);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, len);
    odp_assert_mem(o, pg + 3 * PAGE + off, data, len);
    g_assert_cmpuint(odp_cnt(o, QHCA_CNT_ODP_PAGE_FAULTS), ==, 1);
    odp_stop(o);
}

/* Two UD QPs of the device, in RTS with one Q_Key. */
#define UD_QKEY             0x11111111u
#define UD_GRH              40

static QhcaQp *odp_ud_qp(Odp *o)
{
    const QhcaQpSpec spec = {
        .type = QHCA_QPT_UD,
        .pdn = o->pdn,
        .uar = o->uar,
        .send_cqn = o->cq_a->cqn,
        .recv_cqn = o->cq_b->cqn,
        .sq_log2 = 2,
        .sq_stride_log2 = 7,
        .rq_log2 = 2,
        .rq_stride_log2 = 6,
    };
    QhcaQp *qp = qt_qp_new(o->t, &spec);

    qt_qp_ud_rts(o->t, qp, UD_QKEY, 0);
    return qp;
}

static void odp_ud_send(Odp *o, QhcaQp *from, const QhcaQp *to,
                        uint64_t wr_id, uint64_t addr, uint32_t len,
                        uint32_t lkey)
{
    struct qhca_sq_wqe_ud w = {
        .wr_id = cpu_to_le64(wr_id),
        .opcode = QHCA_WR_SEND,
        .flags = QHCA_WQE_F_SIGNALED,
        .num_sge = 1,
        .dest_qpn = cpu_to_le32(to->qpn),
        .qkey = cpu_to_le32(UD_QKEY),
        .dlid = cpu_to_le16(QT_LID),
    };
    struct qhca_sge sge = qt_sge(addr, len, lkey);

    qt_write_wqe(o->t, qt_qp_sq_slot(from, from->sq_pi++), &w, sizeof(w),
                 &sge, 1);
    qt_qp_ring_sq(o->t, from);
}

/*
 * UD: a requester gathering from an absent page faults as RC's does; a
 * responder whose receive buffer is absent drops the message (RX_DROPS),
 * never to deliver it later, and keeps its receive WQE for the next one.
 */
static void test_ud(void)
{
    Odp *o = odp_start(NULL);
    g_autofree QhcaQp *u1 = odp_ud_qp(o);
    g_autofree QhcaQp *u2 = odp_ud_qp(o);
    uint32_t index = odp_reg(o, ODP_PAGES);
    uint64_t pg = odp_pages(o, ODP_PAGES, 0);
    uint64_t buf = odp_pages(o, 1, 0);
    uint64_t rw = QHCA_ODP_PAGE_READ | QHCA_ODP_PAGE_WRITE;
    g_autofree uint8_t *one = g_malloc(PAGE);
    g_autofree uint8_t *two = g_malloc(PAGE);
    struct qhca_sge sge;
    struct qhca_cqe cqe;
    uint64_t drops;

    odp_fill(one, PAGE, 1);
    odp_fill(two, PAGE, 2);

    /* Requester: the send waits for its page. */
    qtest_memwrite(o->t->qts, pg, one, PAGE);
    sge = qt_sge(buf, PAGE, o->lkey);
    qt_qp_post_recv(o->t, u2, 0x71, &sge, 1);
    odp_ud_send(o, u1, u2, 1, ODP_IOVA + 0x10, 500, odp_key(index));
    odp_expect_fault(o, u1->qpn, QHCA_PAGE_FAULT_REQUESTER, index,
                     ODP_IOVA + 0x10, 500, false);
    odp_resolve(o, u1->qpn, index, 0, pg, 1, QHCA_ODP_PAGE_READ);
    cqe = qt_cq_expect(o->t, o->cq_a, u1->qpn, QHCA_WC_SEND,
                       QHCA_WC_SUCCESS);
    g_assert_cmpuint(le64_to_cpu(cqe.wr_id), ==, 1);
    cqe = qt_cq_expect(o->t, o->cq_b, u2->qpn, QHCA_WC_RECV,
                       QHCA_WC_SUCCESS);
    g_assert_cmpuint(le64_to_cpu(cqe.wr_id), ==, 0x71);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, UD_GRH + 500);
    odp_assert_mem(o, buf + UD_GRH, one + 0x10, 500);

    /* Responder: dropped while the receive buffer is absent. */
    drops = odp_cnt(o, QHCA_CNT_RX_DROPS);
    qtest_memwrite(o->t->qts, buf, one, PAGE);
    qtest_memwrite(o->t->qts, buf + PAGE / 2, two, PAGE / 2);
    sge = qt_sge(ODP_IOVA + PAGE, PAGE, odp_key(index));
    qt_qp_post_recv(o->t, u2, 0x72, &sge, 1);
    odp_ud_send(o, u1, u2, 2, buf, 300, o->lkey);
    /* Without a GRH the receive writes from byte 40 of its buffer on. */
    odp_expect_fault(o, u2->qpn, QHCA_PAGE_FAULT_RESPONDER, index,
                     ODP_IOVA + PAGE + UD_GRH, PAGE - UD_GRH, true);
    cqe = qt_cq_expect(o->t, o->cq_a, u1->qpn, QHCA_WC_SEND,
                       QHCA_WC_SUCCESS);
    g_assert_cmpuint(le64_to_cpu(cqe.wr_id), ==, 2);
    g_assert_cmpuint(odp_cnt(o, QHCA_CNT_RX_DROPS), ==, drops + 1);
    odp_map(o, index, 1, pg + PAGE, 1, rw);
    g_assert_cmpuint(odp_resume(o, u2->qpn, QHCA_PAGE_FAULT_RESPONDER,
                                QHCA_PAGE_FAULT_RESOLVED), ==,
                     QHCA_AQ_SUCCESS);
    /* The next message takes the same receive WQE; the dropped one is gone. */
    odp_ud_send(o, u1, u2, 3, buf + PAGE / 2, 300, o->lkey);
    cqe = qt_cq_expect(o->t, o->cq_a, u1->qpn, QHCA_WC_SEND,
                       QHCA_WC_SUCCESS);
    g_assert_cmpuint(le64_to_cpu(cqe.wr_id), ==, 3);
    cqe = qt_cq_expect(o->t, o->cq_b, u2->qpn, QHCA_WC_RECV,
                       QHCA_WC_SUCCESS);
    g_assert_cmpuint(le64_to_cpu(cqe.wr_id), ==, 0x72);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, UD_GRH + 300);
    odp_assert_mem(o, pg + PAGE + UD_GRH, two, 300);
    g_assert_cmpuint(odp_cnt(o, QHCA_CNT_ODP_PAGE_FAULTS), ==, 2);
    odp_stop(o);
}

/*
 * UC: the responder has no RNR NAK either: a SEND into an absent receive
 * buffer, and a WRITE into an absent page, are dropped (RX_DROPS) while
 * the sender completes; after map and resume the next ones land, the
 * receive WQE the dropped SEND met taken by the next SEND.
 */
static void test_uc(void)
{
    Odp *o = odp_start(NULL);
    QhcaQpSpec spec = qt_rc_spec(o->pdn, o->uar, o->cq_a, o->cq_b);
    g_autofree QhcaQp *u1 = NULL, *u2 = NULL;
    QhcaPath path = qt_rc_path;
    uint32_t index = odp_reg(o, ODP_PAGES);
    uint64_t pg = odp_pages(o, ODP_PAGES, 0);
    uint64_t src = odp_pages(o, 1, 0);
    uint64_t rw = QHCA_ODP_PAGE_READ | QHCA_ODP_PAGE_WRITE;
    g_autofree uint8_t *data = g_malloc(PAGE);
    struct qhca_sge sge;
    struct qhca_sq_wqe w;
    struct qhca_cqe cqe;
    uint64_t drops = odp_cnt(o, QHCA_CNT_RX_DROPS);
    int i;

    spec.type = QHCA_QPT_UC;
    u1 = qt_qp_new(o->t, &spec);
    u2 = qt_qp_new(o->t, &spec);
    path.rc = false;
    qt_qp_connect(o->t, u1, u2, &path, PSN_BASE);
    qt_qp_connect(o->t, u2, u1, &path, PSN_BASE);
    odp_fill(data, PAGE, 61);
    qtest_memwrite(o->t->qts, src, data, PAGE);
    sge = qt_sge(ODP_IOVA + 0x100, 1000, odp_key(index));
    qt_qp_post_recv(o->t, u2, 0x91, &sge, 1);

    for (i = 0; i < 2; i++) {
        /* The SEND, then a WRITE into page 2, each dropped. */
        w = odp_wqe(1 + 2 * i, QHCA_WR_SEND, 0, 0);
        sge = qt_sge(src + 8 * i, 200, o->lkey);
        qt_qp_post_send(o->t, u1, &w, &sge, 1);
        qt_qp_ring_sq(o->t, u1);
        cqe = qt_cq_expect(o->t, o->cq_a, u1->qpn, QHCA_WC_SEND,
                           QHCA_WC_SUCCESS);
        g_assert_cmpuint(le64_to_cpu(cqe.wr_id), ==, 1 + 2 * i);
        w = odp_wqe(2 + 2 * i, QHCA_WR_RDMA_WRITE, ODP_IOVA + 2 * PAGE + 8,
                    odp_key(index));
        qt_qp_post_send(o->t, u1, &w, &sge, 1);
        qt_qp_ring_sq(o->t, u1);
        cqe = qt_cq_expect(o->t, o->cq_a, u1->qpn, QHCA_WC_RDMA_WRITE,
                           QHCA_WC_SUCCESS);
        g_assert_cmpuint(le64_to_cpu(cqe.wr_id), ==, 2 + 2 * i);
        if (i) {
            break;
        }
        odp_expect_fault(o, u2->qpn, QHCA_PAGE_FAULT_RESPONDER, index,
                         ODP_IOVA + 0x100, 1000, true);
        qt_wait_counter(o->t, QHCA_CNT_RX_DROPS, drops + 2);
        /* The WRITE met the pending fault: dropped, no second fault. */
        g_assert_cmpuint(odp_cnt(o, QHCA_CNT_ODP_PAGE_FAULTS), ==, 1);
        odp_map(o, index, 0, pg, 1, rw);
        odp_map(o, index, 2, pg + 2 * PAGE, 1, rw);
        g_assert_cmpuint(odp_resume(o, u2->qpn, QHCA_PAGE_FAULT_RESPONDER,
                                    QHCA_PAGE_FAULT_RESOLVED), ==,
                         QHCA_AQ_SUCCESS);
    }
    cqe = qt_cq_expect(o->t, o->cq_b, u2->qpn, QHCA_WC_RECV,
                       QHCA_WC_SUCCESS);
    g_assert_cmpuint(le64_to_cpu(cqe.wr_id), ==, 0x91);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, 200);
    odp_assert_mem(o, pg + 0x100, data + 8, 200);
    odp_assert_mem(o, pg + 2 * PAGE + 8, data + 8, 200);
    g_assert_cmpuint(odp_cnt(o, QHCA_CNT_RX_DROPS), ==, drops + 2);
    odp_stop(o);
}

/*
 * Requester scatter: an RDMA READ whose response lands in absent pages of
 * A's ODP MR faults (WRITE); after map and resume the data is right.  A
 * page mapped READ only is absent to a write: the same READ faults again.
 */
static void test_read_scatter(void)
{
    Odp *o = odp_start(NULL);
    uint32_t index = odp_reg(o, ODP_PAGES);
    uint64_t pg = odp_pages(o, ODP_PAGES, 0);
    uint64_t src = odp_pages(o, 2, 0);
    uint64_t r = QHCA_ODP_PAGE_READ, rw = r | QHCA_ODP_PAGE_WRITE;
    g_autofree uint8_t *data = g_malloc(2 * PAGE);
    struct qhca_sq_wqe w;
    const uint32_t off = 0x40, len = 2000;

    odp_fill(data, 2 * PAGE, 33);
    qtest_memwrite(o->t->qts, src, data, 2 * PAGE);
    w = odp_wqe(3, QHCA_WR_RDMA_READ, src, o->lkey);
    odp_post(o, &w, ODP_IOVA + 2 * PAGE + off, len, odp_key(index));
    odp_expect_fault(o, o->a->qpn, QHCA_PAGE_FAULT_REQUESTER, index,
                     ODP_IOVA + 2 * PAGE + off, len, true);

    /* Mapped for reading only: still a fault, a write one. */
    odp_resolve(o, o->a->qpn, index, 2, pg + 2 * PAGE, 1, r);
    odp_expect_fault(o, o->a->qpn, QHCA_PAGE_FAULT_REQUESTER, index,
                     ODP_IOVA + 2 * PAGE + off, len, true);
    odp_resolve(o, o->a->qpn, index, 2, pg + 2 * PAGE, 1, rw);
    odp_expect_a(o, 3, QHCA_WC_RDMA_READ, QHCA_WC_SUCCESS);
    odp_assert_mem(o, pg + 2 * PAGE + off, data, len);
    g_assert_cmpuint(odp_cnt(o, QHCA_CNT_ODP_PAGE_FAULTS), ==, 2);

    /* A page mapped READ only serves a gather: no fault. */
    odp_map(o, index, 0, pg, 1, r);
    qtest_memwrite(o->t->qts, pg, data, 64);
    w = odp_wqe(4, QHCA_WR_RDMA_WRITE, src + PAGE, o->lkey);
    odp_post(o, &w, ODP_IOVA, 64, odp_key(index));
    odp_expect_a(o, 4, QHCA_WC_RDMA_WRITE, QHCA_WC_SUCCESS);
    odp_assert_mem(o, src + PAGE, data, 64);
    g_assert_cmpuint(odp_cnt(o, QHCA_CNT_ODP_PAGE_FAULTS), ==, 2);
    odp_stop(o);
}

/*
 * Atomics: a responder fault on the target word (WRITE), and a requester
 * fault on the result's scatter, whose response is dropped and asked for
 * again on resume: the responder must answer that from what it did, not
 * add twice.
 */
static void test_atomic(void)
{
    Odp *o = odp_start(NULL);
    uint32_t index = odp_reg(o, ODP_PAGES);
    uint64_t pg = odp_pages(o, ODP_PAGES, 0);
    uint64_t word = odp_pages(o, 1, 0);
    uint64_t rw = QHCA_ODP_PAGE_READ | QHCA_ODP_PAGE_WRITE;
    struct qhca_sq_wqe w;

    /* Responder: compare and swap on a word of B's absent page 2. */
    qtest_writeq(o->t->qts, pg + 2 * PAGE + 0x18, 0x1111222233334444ull);
    w = odp_wqe(1, QHCA_WR_ATOMIC_CMP_AND_SWP, ODP_IOVA + 2 * PAGE + 0x18,
                odp_key(index));
    w.compare_add = cpu_to_le64(0x1111222233334444ull);
    w.swap = cpu_to_le64(0x5555666677778888ull);
    odp_post(o, &w, word, 8, o->lkey);
    odp_expect_fault(o, o->b->qpn, QHCA_PAGE_FAULT_RESPONDER, index,
                     ODP_IOVA + 2 * PAGE + 0x18, 8, true);
    odp_resolve_responder(o, 1, index, 2, pg + 2 * PAGE, 1, rw);
    odp_expect_a(o, 1, QHCA_WC_COMP_SWAP, QHCA_WC_SUCCESS);
    g_assert_cmphex(qtest_readq(o->t->qts, word), ==, 0x1111222233334444ull);
    g_assert_cmphex(qtest_readq(o->t->qts, pg + 2 * PAGE + 0x18), ==,
                    0x5555666677778888ull);

    /* Requester: fetch and add whose result goes to A's absent page 0. */
    qtest_writeq(o->t->qts, word, 1000);
    w = odp_wqe(2, QHCA_WR_ATOMIC_FETCH_AND_ADD, word, o->lkey);
    w.compare_add = cpu_to_le64(7);
    odp_post(o, &w, ODP_IOVA + 0x40, 8, odp_key(index));
    odp_expect_fault(o, o->a->qpn, QHCA_PAGE_FAULT_REQUESTER, index,
                     ODP_IOVA + 0x40, 8, true);
    odp_resolve(o, o->a->qpn, index, 0, pg, 1, rw);
    odp_expect_a(o, 2, QHCA_WC_FETCH_ADD, QHCA_WC_SUCCESS);
    g_assert_cmpuint(qtest_readq(o->t->qts, pg + 0x40), ==, 1000);
    g_assert_cmpuint(qtest_readq(o->t->qts, word), ==, 1007);
    g_assert_cmpuint(odp_cnt(o, QHCA_CNT_ODP_PAGE_FAULTS), ==, 2);
    odp_stop(o);
}

/*
 * A window bound to an ODP MR: a WRITE through the window's rkey faults
 * on the MR's page and the fault names the MR.  And a requester waiting
 * for a fault outlives any number of its transport timeouts.
 */
static void test_window_and_timer(void)
{
    Odp *o = odp_start(NULL);
    struct qhca_cmd_reg_mr c = odp_reg_cmd(o, ODP_IOVA, ODP_PAGES * PAGE,
                                           QHCA_MR_F_ODP);
    struct qhca_cmd_alloc_mw a = { .pdn = cpu_to_le32(o->pdn), .type = 1 };
    uint64_t pg = odp_pages(o, ODP_PAGES, 0);
    uint64_t src = odp_pages(o, 2, 0);
    uint64_t rw = QHCA_ODP_PAGE_READ | QHCA_ODP_PAGE_WRITE;
    g_autofree uint8_t *data = g_malloc(2 * PAGE);
    struct qhca_sq_wqe_bind b;
    struct qhca_sq_wqe w;
    struct qhca_sge sge;
    uint32_t index, mw;
    int i;

    c.access |= QHCA_ACCESS_MW_BIND;
    g_assert_cmpuint(odp_try_reg(o, &c, &index), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(qt_cmd(o->t, QHCA_CMD_ALLOC_MW, &a, sizeof(a), &mw),
                     ==, QHCA_AQ_SUCCESS);
    mw = (QHCA_MKEY_MW | mw << 8) + 1;
    b = (struct qhca_sq_wqe_bind) {
        .wr_id = cpu_to_le64(1),
        .opcode = QHCA_WR_BIND_MW,
        .flags = QHCA_WQE_F_SIGNALED,
        .mw_key = cpu_to_le32(mw),
        .addr = cpu_to_le64(ODP_IOVA + PAGE),
        .mr_lkey = cpu_to_le32(odp_key(index)),
        .access = QHCA_ACCESS_REMOTE_WRITE,
        .mw_type = 1,
        .length = cpu_to_le64(PAGE),
    };
    qt_qp_post_send(o->t, o->a, &b, NULL, 0);
    qt_qp_ring_sq(o->t, o->a);
    odp_expect_a(o, 1, QHCA_WC_BIND_MW, QHCA_WC_SUCCESS);
    odp_fill(data, 2 * PAGE, 41);
    qtest_memwrite(o->t->qts, src, data, 2 * PAGE);
    w = odp_wqe(2, QHCA_WR_RDMA_WRITE, ODP_IOVA + PAGE + 0x10, mw);
    odp_post(o, &w, src, 100, o->lkey);
    odp_expect_fault(o, o->b->qpn, QHCA_PAGE_FAULT_RESPONDER, index,
                     ODP_IOVA + PAGE + 0x10, 100, true);
    odp_resolve_responder(o, 1, index, 1, pg + PAGE, 1, rw);
    odp_expect_a(o, 2, QHCA_WC_RDMA_WRITE, QHCA_WC_SUCCESS);
    odp_assert_mem(o, pg + PAGE + 0x10, data, 100);

    /*
     * A SEND of 5000 bytes from page 1 (present) and page 2 (absent): its
     * first packet goes, then it waits.  Ten seconds of virtual time, 150
     * of its 67 ms timeouts with retry_cnt 7, and it still waits.
     */
    qtest_memwrite(o->t->qts, pg + PAGE, data, 2 * PAGE);
    qtest_memset(o->t->qts, src, 0, 2 * PAGE);
    sge = qt_sge(src, 2 * PAGE, o->lkey);
    qt_qp_post_recv(o->t, o->b, 0x81, &sge, 1);
    w = odp_wqe(3, QHCA_WR_SEND, 0, 0);
    odp_post(o, &w, ODP_IOVA + PAGE + 3000, 5000, odp_key(index));
    odp_expect_fault(o, o->a->qpn, QHCA_PAGE_FAULT_REQUESTER, index,
                     ODP_IOVA + 2 * PAGE, 5000 - (PAGE - 3000), false);
    for (i = 0; i < 10; i++) {
        qtest_clock_step(o->t->qts, 1000000000);
    }
    g_assert_cmpuint(qt_qp_state(o->t, o->a), ==, QHCA_QPS_RTS);
    odp_check_fault(o, o->a->qpn, QHCA_PAGE_FAULT_REQUESTER, index,
                    ODP_IOVA + 2 * PAGE, 5000 - (PAGE - 3000), false);
    g_assert_cmpuint(odp_cnt(o, QHCA_CNT_ERR_RETRY_EXC), ==, 0);
    odp_resolve(o, o->a->qpn, index, 2, pg + 2 * PAGE, 1, rw);
    odp_expect_a(o, 3, QHCA_WC_SEND, QHCA_WC_SUCCESS);
    qt_cq_expect(o->t, o->cq_b, o->b->qpn, QHCA_WC_RECV, QHCA_WC_SUCCESS);
    odp_assert_mem(o, src, data + 3000, 5000);
    odp_stop(o);
}

/*
 * RESUME FAILED: the access is tried once more and, its page still
 * absent, fails as an access outside the MR: a requester's gather with
 * LOC_PROT_ERR, a responder's WRITE with REM_ACCESS_ERR at the requester.
 */
static void test_failed(void)
{
    Odp *o = odp_start(NULL);
    uint32_t index = odp_reg(o, ODP_PAGES);
    uint64_t src = odp_pages(o, 1, 0x77);
    struct qhca_sq_wqe w;

    w = odp_wqe(5, QHCA_WR_RDMA_WRITE, src, o->lkey);
    odp_post(o, &w, ODP_IOVA + 8, 100, odp_key(index));
    odp_expect_fault(o, o->a->qpn, QHCA_PAGE_FAULT_REQUESTER, index,
                     ODP_IOVA + 8, 100, false);
    g_assert_cmpuint(odp_resume(o, o->a->qpn, QHCA_PAGE_FAULT_REQUESTER,
                                QHCA_PAGE_FAULT_FAILED), ==,
                     QHCA_AQ_SUCCESS);
    odp_expect_a(o, 5, QHCA_WC_RDMA_WRITE, QHCA_WC_LOC_PROT_ERR);
    g_assert_cmpuint(odp_cnt(o, QHCA_CNT_ODP_FAULTS_FAILED), ==, 1);
    g_assert_cmpuint(odp_cnt(o, QHCA_CNT_ERR_LOC_PROT), ==, 1);
    odp_assert_no_fault(o, o->a->qpn);
    odp_stop(o);

    /* The responder's kind. */
    o = odp_start(NULL);
    index = odp_reg(o, ODP_PAGES);
    src = odp_pages(o, 1, 0x77);
    w = odp_wqe(6, QHCA_WR_RDMA_WRITE, ODP_IOVA + 3 * PAGE, odp_key(index));
    odp_post(o, &w, src, 64, o->lkey);
    odp_expect_fault(o, o->b->qpn, QHCA_PAGE_FAULT_RESPONDER, index,
                     ODP_IOVA + 3 * PAGE, 64, true);
    odp_rnr_wait(o, 1);
    g_assert_cmpuint(odp_resume(o, o->b->qpn, QHCA_PAGE_FAULT_RESPONDER,
                                QHCA_PAGE_FAULT_FAILED), ==,
                     QHCA_AQ_SUCCESS);
    odp_rnr_retry(o);
    odp_expect_a(o, 6, QHCA_WC_RDMA_WRITE, QHCA_WC_REM_ACCESS_ERR);
    g_assert_cmpuint(odp_cnt(o, QHCA_CNT_ODP_FAULTS_FAILED), ==, 1);
    g_assert_cmpuint(odp_cnt(o, QHCA_CNT_ODP_PAGE_FAULTS), ==, 1);
    odp_stop(o);
}

/*
 * ODP_UNMAP is the fence: after it, the page it made absent faults again,
 * and once mapped to another guest page the data goes there, not to the
 * old one.
 */
static void test_invalidate(void)
{
    Odp *o = odp_start(NULL);
    uint32_t index = odp_reg(o, ODP_PAGES);
    uint64_t old = odp_pages(o, 1, 0);
    uint64_t new = odp_pages(o, 1, 0);
    uint64_t src = odp_pages(o, 1, 0);
    uint64_t rw = QHCA_ODP_PAGE_READ | QHCA_ODP_PAGE_WRITE;
    g_autofree uint8_t *one = g_malloc(PAGE);
    g_autofree uint8_t *two = g_malloc(PAGE);
    g_autofree uint8_t *zero = g_malloc0(PAGE);
    struct qhca_sq_wqe w;

    odp_fill(one, PAGE, 1);
    odp_fill(two, PAGE, 2);
    odp_map(o, index, 0, old, 1, rw);
    qtest_memwrite(o->t->qts, src, one, PAGE);
    w = odp_wqe(1, QHCA_WR_RDMA_WRITE, ODP_IOVA, odp_key(index));
    odp_post(o, &w, src, PAGE, o->lkey);
    odp_expect_a(o, 1, QHCA_WC_RDMA_WRITE, QHCA_WC_SUCCESS);
    odp_assert_mem(o, old, one, PAGE);
    g_assert_cmpuint(odp_cnt(o, QHCA_CNT_ODP_PAGE_FAULTS), ==, 0);

    g_assert_cmpuint(odp_unmap(o, index, 0, 1), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(odp_cnt(o, QHCA_CNT_ODP_UNMAPS), ==, 1);
    qtest_memwrite(o->t->qts, src, two, PAGE);
    w.wr_id = cpu_to_le64(2);
    odp_post(o, &w, src, PAGE, o->lkey);
    odp_expect_fault(o, o->b->qpn, QHCA_PAGE_FAULT_RESPONDER, index,
                     ODP_IOVA, PAGE, true);
    odp_resolve_responder(o, 1, index, 0, new, 1, rw);
    odp_expect_a(o, 2, QHCA_WC_RDMA_WRITE, QHCA_WC_SUCCESS);
    odp_assert_mem(o, new, two, PAGE);
    odp_assert_mem(o, old, one, PAGE);

    /* The same for a READ of the MR (the responder reads the page). */
    g_assert_cmpuint(odp_unmap(o, index, 0, ODP_PAGES), ==,
                     QHCA_AQ_SUCCESS);
    qtest_memwrite(o->t->qts, src, zero, PAGE);
    w = odp_wqe(3, QHCA_WR_RDMA_READ, ODP_IOVA + 0x10, odp_key(index));
    odp_post(o, &w, src, 0x100, o->lkey);
    odp_expect_fault(o, o->b->qpn, QHCA_PAGE_FAULT_RESPONDER, index,
                     ODP_IOVA + 0x10, 0x100, false);
    odp_resolve_responder(o, 2, index, 0, old, 1, QHCA_ODP_PAGE_READ);
    odp_expect_a(o, 3, QHCA_WC_RDMA_READ, QHCA_WC_SUCCESS);
    odp_assert_mem(o, src, one + 0x10, 0x100);
    g_assert_cmpuint(odp_cnt(o, QHCA_CNT_ODP_UNMAPS), ==, 2);
    g_assert_cmpuint(odp_cnt(o, QHCA_CNT_ODP_PAGE_FAULTS), ==, 2);
    g_assert_cmpuint(odp_cnt(o, QHCA_CNT_ODP_PAGES_MAPPED), ==, 3);
    odp_stop(o);
}

/* An implicit MR: addresses are the process's, pages counted from 0. */
static void test_implicit(void)
{
    Odp *o = odp_start(NULL);
    struct qhca_cmd_reg_mr c = odp_reg_cmd(o, 0, 0, QHCA_MR_F_ODP |
                                           QHCA_MR_F_ODP_IMPLICIT);
    uint64_t va = 0x1ffffffff000ull;    /* far above guest RAM */
    uint64_t pg = odp_pages(o, 1, 0);
    uint64_t dst = odp_pages(o, 1, 0);
    g_autofree uint8_t *data = g_malloc(PAGE);
    struct qhca_sq_wqe w;
    uint32_t index;

    g_assert_cmpuint(odp_try_reg(o, &c, &index), ==, QHCA_AQ_SUCCESS);
    odp_fill(data, PAGE, 5);
    qtest_memwrite(o->t->qts, pg, data, PAGE);
    w = odp_wqe(1, QHCA_WR_RDMA_WRITE, dst, o->lkey);
    odp_post(o, &w, va + 0x80, 0x200, odp_key(index));
    odp_expect_fault(o, o->a->qpn, QHCA_PAGE_FAULT_REQUESTER, index,
                     va + 0x80, 0x200, false);
    odp_resolve(o, o->a->qpn, index, va >> 12, pg, 1, QHCA_ODP_PAGE_READ);
    odp_expect_a(o, 1, QHCA_WC_RDMA_WRITE, QHCA_WC_SUCCESS);
    odp_assert_mem(o, dst, data + 0x80, 0x200);
    /* The last page of the 2^57 bytes can be mapped; the one after not. */
    odp_map(o, index, (1ull << (QHCA_ODP_IMPLICIT_VA_BITS - 12)) - 1, pg, 1,
            QHCA_ODP_PAGE_READ);
    {
        uint64_t e = pg | QHCA_ODP_PAGE_READ;

        odp_map_refused(o, index, 1ull << (QHCA_ODP_IMPLICIT_VA_BITS - 12),
                        &e, 1, QHCA_AQ_BAD_PARAM);
    }
    odp_stop(o);
}

/*
 * Commands against faults that are not there, and faults that outlive
 * what they wait for: RESUME without a fault, a QP destroyed or moved to
 * ERR with a fault pending, an MR deregistered under one, a reset.
 */
static void test_states(void)
{
    Odp *o = odp_start(NULL);
    uint32_t index = odp_reg(o, ODP_PAGES);
    uint64_t src = odp_pages(o, 1, 0);
    struct qhca_page_fault_info info;
    struct qhca_cmd_query_page_fault q = { .qpn = cpu_to_le32(o->a->qpn) };
    struct qhca_cmd_resume_page_fault r = { .qpn = cpu_to_le32(o->a->qpn) };
    struct qhca_sq_wqe w;

    odp_assert_no_fault(o, o->a->qpn);
    g_assert_cmpuint(odp_resume(o, o->a->qpn, QHCA_PAGE_FAULT_REQUESTER,
                                QHCA_PAGE_FAULT_RESOLVED), ==,
                     QHCA_AQ_BAD_STATE);
    g_assert_cmpuint(odp_resume(o, o->a->qpn, QHCA_PAGE_FAULT_RESPONDER,
                                QHCA_PAGE_FAULT_FAILED), ==,
                     QHCA_AQ_BAD_STATE);
    g_assert_cmpuint(odp_query(o, 0x3ff, &info), ==, QHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(odp_resume(o, 0x3ff, QHCA_PAGE_FAULT_REQUESTER,
                                QHCA_PAGE_FAULT_RESOLVED), ==,
                     QHCA_AQ_BAD_HANDLE);
    r.kind = QHCA_PAGE_FAULT_KINDS;
    g_assert_cmpuint(qt_cmd(o->t, QHCA_CMD_RESUME_PAGE_FAULT, &r, sizeof(r),
                            NULL), ==, QHCA_AQ_BAD_PARAM);
    r.kind = 0;
    r.status = 2;
    g_assert_cmpuint(qt_cmd(o->t, QHCA_CMD_RESUME_PAGE_FAULT, &r, sizeof(r),
                            NULL), ==, QHCA_AQ_BAD_PARAM);
    r.status = 0;
    r.rsvd = cpu_to_le16(1);
    g_assert_cmpuint(qt_cmd(o->t, QHCA_CMD_RESUME_PAGE_FAULT, &r, sizeof(r),
                            NULL), ==, QHCA_AQ_BAD_PARAM);
    q.rsvd = cpu_to_le32(1);
    g_assert_cmpuint(qt_query(o->t, QHCA_CMD_QUERY_PAGE_FAULT, &q, sizeof(q),
                              &info, sizeof(info)), ==, QHCA_AQ_BAD_PARAM);

    /* DEREG_MR under a pending fault: on RESUME the key is dead. */
    w = odp_wqe(1, QHCA_WR_RDMA_WRITE, src, o->lkey);
    odp_post(o, &w, ODP_IOVA, 16, odp_key(index));
    odp_expect_fault(o, o->a->qpn, QHCA_PAGE_FAULT_REQUESTER, index,
                     ODP_IOVA, 16, false);
    g_assert_cmpuint(qt_handle_cmd(o->t, QHCA_CMD_DEREG_MR, index), ==,
                     QHCA_AQ_SUCCESS);
    g_assert_cmpuint(odp_resume(o, o->a->qpn, QHCA_PAGE_FAULT_REQUESTER,
                                QHCA_PAGE_FAULT_RESOLVED), ==,
                     QHCA_AQ_SUCCESS);
    odp_expect_a(o, 1, QHCA_WC_RDMA_WRITE, QHCA_WC_LOC_PROT_ERR);
    odp_stop(o);

    /* ERR drops the pending fault; RESUME then has none. */
    o = odp_start(NULL);
    index = odp_reg(o, ODP_PAGES);
    src = odp_pages(o, 1, 0);
    w = odp_wqe(1, QHCA_WR_RDMA_WRITE, src, o->lkey);
    odp_post(o, &w, ODP_IOVA, 16, odp_key(index));
    odp_expect_fault(o, o->a->qpn, QHCA_PAGE_FAULT_REQUESTER, index,
                     ODP_IOVA, 16, false);
    g_assert_cmpuint(qt_qp_modify(o->t, o->a, QHCA_QPS_ERR, 0, NULL), ==,
                     QHCA_AQ_SUCCESS);
    odp_assert_no_fault(o, o->a->qpn);
    g_assert_cmpuint(odp_resume(o, o->a->qpn, QHCA_PAGE_FAULT_REQUESTER,
                                QHCA_PAGE_FAULT_RESOLVED), ==,
                     QHCA_AQ_BAD_STATE);
    odp_expect_a(o, 1, QHCA_WC_RDMA_WRITE, QHCA_WC_WR_FLUSH_ERR);
    odp_stop(o);

    /* DESTROY_QP with a responder fault pending: gone with the QP. */
    o = odp_start(NULL);
    index = odp_reg(o, ODP_PAGES);
    src = odp_pages(o, 1, 0);
    w = odp_wqe(2, QHCA_WR_RDMA_WRITE, ODP_IOVA + PAGE, odp_key(index));
    odp_post(o, &w, src, 16, o->lkey);
    odp_expect_fault(o, o->b->qpn, QHCA_PAGE_FAULT_RESPONDER, index,
                     ODP_IOVA + PAGE, 16, true);
    g_assert_cmpuint(qt_handle_cmd(o->t, QHCA_CMD_DESTROY_QP, o->b->qpn), ==,
                     QHCA_AQ_SUCCESS);
    g_assert_cmpuint(odp_query(o, o->b->qpn, &info), ==, QHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(odp_resume(o, o->b->qpn, QHCA_PAGE_FAULT_RESPONDER,
                                QHCA_PAGE_FAULT_RESOLVED), ==,
                     QHCA_AQ_BAD_HANDLE);
    /* The MR goes too, with its pages; the device stays usable. */
    odp_map(o, index, 0, src, 1, QHCA_ODP_PAGE_READ);
    g_assert_cmpuint(qt_handle_cmd(o->t, QHCA_CMD_DEREG_MR, index), ==,
                     QHCA_AQ_SUCCESS);
    odp_assert_no_fault(o, o->a->qpn);
    odp_stop(o);

    /* A reset with a fault pending and pages present. */
    o = odp_start(NULL);
    index = odp_reg(o, ODP_PAGES);
    src = odp_pages(o, 1, 0);
    odp_map(o, index, 0, src, 1, QHCA_ODP_PAGE_READ);
    w = odp_wqe(3, QHCA_WR_RDMA_WRITE, src, o->lkey);
    odp_post(o, &w, ODP_IOVA + PAGE, 16, odp_key(index));
    odp_expect_fault(o, o->a->qpn, QHCA_PAGE_FAULT_REQUESTER, index,
                     ODP_IOVA + PAGE, 16, false);
    g_assert_cmpuint(odp_cnt(o, QHCA_CNT_ODP_PAGE_FAULTS), ==, 1);
    g_assert_cmpuint(odp_cnt(o, QHCA_CNT_ODP_PAGES_MAPPED), ==, 1);
    qt_enable(o->t, 5);
    g_assert_cmpuint(odp_cnt(o, QHCA_CNT_ODP_PAGE_FAULTS), ==, 0);
    g_assert_cmpuint(odp_cnt(o, QHCA_CNT_ODP_PAGES_MAPPED), ==, 0);
    g_assert_cmpuint(le32_to_cpu(qt_stats(o->t).mrs), ==, 0);
    g_assert_cmpuint(le32_to_cpu(qt_stats(o->t).qps), ==, 0);
    odp_stop(o);
}

/* 1.8: a DM MR may have length 0, at any offset up to dm_size. */
static void test_dm_length_0(void)
{
    Odp *o = odp_start(NULL);
    struct qhca_device_attr a;
    struct qhca_cmd_reg_mr c = {
        .pdn = cpu_to_le32(o->pdn),
        .access = QHCA_ACCESS_LOCAL_WRITE,
        .key = 1,
        .flags = QHCA_MR_F_DM,
    };
    uint32_t index;
    uint64_t errors;

    g_assert_cmpuint(qt_query(o->t, QHCA_CMD_QUERY_DEVICE, NULL, 0, &a,
                              sizeof(a)), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(le32_to_cpu(a.dm_size), >, 0);
    g_assert_cmpuint(odp_try_reg(o, &c, &index), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(qt_handle_cmd(o->t, QHCA_CMD_DEREG_MR, index), ==,
                     QHCA_AQ_SUCCESS);
    c.pbl_addr = cpu_to_le64(le32_to_cpu(a.dm_size));
    g_assert_cmpuint(odp_try_reg(o, &c, &index), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(qt_handle_cmd(o->t, QHCA_CMD_DEREG_MR, index), ==,
                     QHCA_AQ_SUCCESS);
    errors = qt_guest_errors(o->t);
    c.pbl_addr = cpu_to_le64(le32_to_cpu(a.dm_size) + 1);
    g_assert_cmpuint(odp_try_reg(o, &c, &index), ==, QHCA_AQ_BAD_PARAM);
    c.pbl_addr = cpu_to_le64(UINT64_MAX);
    g_assert_cmpuint(odp_try_reg(o, &c, &index), ==, QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(qt_guest_errors(o->t), ==, errors + 2);
    odp_stop(o);
}

int main(int argc, char **argv)
{
    if (!qt_init(&argc, &argv)) {
        return g_test_run();
    }

    qtest_add_func("/qhca/odp/caps", test_caps);
    qtest_add_func("/qhca/odp/reg", test_reg);
    qtest_add_func("/qhca/odp/map-bad", test_map_bad);
    qtest_add_func("/qhca/odp/charge", test_charge);
    qtest_add_func("/qhca/odp/requester", test_requester);
    qtest_add_func("/qhca/odp/responder-write", test_responder_write);
    qtest_add_func("/qhca/odp/responder-recv", test_responder_recv);
    qtest_add_func("/qhca/odp/ud", test_ud);
    qtest_add_func("/qhca/odp/uc", test_uc);
    qtest_add_func("/qhca/odp/read-scatter", test_read_scatter);
    qtest_add_func("/qhca/odp/atomic", test_atomic);
    qtest_add_func("/qhca/odp/window-and-timer", test_window_and_timer);
    qtest_add_func("/qhca/odp/failed", test_failed);
    qtest_add_func("/qhca/odp/invalidate", test_invalidate);
    qtest_add_func("/qhca/odp/implicit", test_implicit);
    qtest_add_func("/qhca/odp/states", test_states);
    qtest_add_func("/qhca/odp/dm-length-0", test_dm_length_0);

    return g_test_run();
}
