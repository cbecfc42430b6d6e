/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qhca memory regions: REG_MR/DEREG_MR, and the translation of keys and
 * addresses that every data transfer goes through.
 *
 * REG_MR copies the page list into host memory, checking each page, so
 * that the data path never reads a guest-controlled list: a transfer only
 * looks an MR up by index, compares key, PD, range and access, and turns
 * the address into guest addresses page by page.  Page lists are bounded
 * in total by the max-mr-pages property.
 */
#include "qemu/osdep.h"
#include "qhca.h"
#include "trace.h"

void qhca_mr_init(QhcaState *s)
{
    qhca_table_init(&s->mrs, "mr", 0, s->params.max_mrs);
    s->mr = g_new0(QhcaMr *, s->params.max_mrs);
    s->mr_pages = 0;
}

static void qhca_mr_free(QhcaState *s, uint32_t index)
{
    QhcaMr *mr = s->mr[index];

    s->mr_pages -= mr->fast_reg ? mr->max_pages : mr->npages;
    if (mr->odp) {
        qhca_odp_mr_free(s, mr);
    }
    s->pd_refs[mr->pdn]--;
    g_free(mr->pages);
    g_free(mr);
    s->mr[index] = NULL;
    qhca_table_free(&s->mrs, index);
}

void qhca_mr_reset(QhcaState *s)
{
    unsigned long i;

    QHCA_TABLE_FOR_EACH(&s->mrs, i) {
        qhca_mr_free(s, i);
    }
    qhca_table_reset(&s->mrs);
}

void qhca_mr_fini(QhcaState *s)
{
    qhca_mr_reset(s);
    qhca_table_fini(&s->mrs);
    g_free(s->mr);
    s->mr = NULL;
}

/*
 * Check the pages of the list: each aligned to the page size (else
 * BAD_PARAM) and in guest RAM (else BAD_ADDRESS).  Physically contiguous
 * pages are checked as one range.
 */
static uint8_t qhca_mr_check_pages(QhcaState *s, const uint64_t *pages,
                                   uint32_t npages, uint8_t shift,
                                   const char **why)
{
    uint64_t size = 1ull << shift;
    uint32_t i, run;

    for (i = 0; i < npages; i += run) {
        if (pages[i] & (size - 1)) {
            *why = "page address not aligned to the page size";
            return QHCA_AQ_BAD_PARAM;
        }
        for (run = 1; i + run < npages &&
             pages[i + run] == pages[i] + run * size; run++) {
            ;
        }
        if (!qhca_dma_in_ram(s, pages[i], run * size, true)) {
            *why = "page not in guest RAM";
            return QHCA_AQ_BAD_ADDRESS;
        }
    }
    return QHCA_AQ_SUCCESS;
}

/* Copy the page list the command points to; false: not in guest RAM. */
static bool qhca_mr_read_pbl(QhcaState *s, uint64_t pbl, bool indirect,
                             uint64_t *pages, uint32_t npages)
{
    uint32_t nleaves, i, n;
    g_autofree uint64_t *leaves = NULL;

    if (!indirect) {
        if (!qhca_dma_read(s, pbl, pages, (uint64_t)npages * 8)) {
            return false;
        }
    } else {
        nleaves = DIV_ROUND_UP(npages, QHCA_PBL_ENTRIES_PER_PAGE);
        leaves = g_new(uint64_t, nleaves);
        if (!qhca_dma_read(s, pbl, leaves, (uint64_t)nleaves * 8)) {
            return false;
        }
        for (i = 0; i < nleaves; i++) {
            n = MIN(npages - i * QHCA_PBL_ENTRIES_PER_PAGE,
                    QHCA_PBL_ENTRIES_PER_PAGE);
            if (!qhca_dma_read(s, le64_to_cpu(leaves[i]),
                               pages + i * QHCA_PBL_ENTRIES_PER_PAGE,
                               (uint64_t)n * 8)) {
                return false;
            }
        }
    }
    for (i = 0; i < npages; i++) {
        pages[i] = le64_to_cpu(pages[i]);
    }
    return true;
}

/*
 * 1.8: an ODP MR has no page list, only its range (or, implicit, none:
 * it covers the whole address space) and its page size.
 */
static const char *qhca_mr_check_odp(const struct qhca_cmd_reg_mr *p)
{
    uint64_t iova = le64_to_cpu(p->iova);
    uint64_t length = le64_to_cpu(p->length);

    if (!(p->flags & QHCA_MR_F_ODP)) {
        return "ODP_IMPLICIT without ODP";
    }
    if (p->flags & ~(QHCA_MR_F_ODP | QHCA_MR_F_ODP_IMPLICIT)) {
        return "ODP MR with PHYS, PBL_INDIRECT, FAST_REG or DM";
    }
    if (p->pbl_addr || p->npages) {
        return "ODP MR with a page list";
    }
    if (p->page_shift < QHCA_MR_MIN_PAGE_SHIFT ||
        p->page_shift > QHCA_MR_MAX_PAGE_SHIFT) {
        return "page_shift out of range";
    }
    if (p->flags & QHCA_MR_F_ODP_IMPLICIT) {
        return iova || length ? "implicit ODP MR with an iova or length"
                              : NULL;
    }
    if (length == 0 || length > QHCA_MAX_MR_SIZE) {
        return "length out of range";
    }
    if (length - 1 > UINT64_MAX - iova) {
        return "iova + length wraps";
    }
    return NULL;
}

/* The checks of the command's fields that need no table or memory. */
static const char *qhca_mr_check_params(const struct qhca_cmd_reg_mr *p)
{
    uint64_t iova = le64_to_cpu(p->iova);
    uint64_t length = le64_to_cpu(p->length);
    uint64_t pgsize, first, needed;

    if (p->rsvd || (p->flags & QHCA_MR_F_RSVD)) {
        return "reserved field set";
    }
    if (p->access & ~(QHCA_ACCESS_MR_ALL | QHCA_ACCESS_FLUSH_GLOBAL |
                      QHCA_ACCESS_FLUSH_PERSISTENT)) {
        return "unknown access flags";
    }
    /* 1.6: guest RAM has no persistence domain (qhca_resp_flush()). */
    if (p->access & QHCA_ACCESS_FLUSH_PERSISTENT) {
        return "FLUSH_PERSISTENT: guest RAM is not persistent memory";
    }
    /* Remote writes and atomics change memory: it must be writable. */
    if ((p->access & (QHCA_ACCESS_REMOTE_WRITE | QHCA_ACCESS_REMOTE_ATOMIC)) &&
        !(p->access & QHCA_ACCESS_LOCAL_WRITE)) {
        return "remote write or atomic access without local write";
    }
    if (p->flags & (QHCA_MR_F_ODP | QHCA_MR_F_ODP_IMPLICIT)) {
        return qhca_mr_check_odp(p);
    }
    if (p->flags & QHCA_MR_F_FAST_REG) {
        /* Empty until a REG_MR WQE maps it: only its size is given. */
        if (p->flags != QHCA_MR_F_FAST_REG || p->iova || p->length ||
            p->pbl_addr || p->access || p->page_shift) {
            return "fast-reg MR with a mapping";
        }
        if (!p->npages ||
            le32_to_cpu(p->npages) > QHCA_FAST_REG_MAX_PAGES) {
            return "fast-reg MR npages out of range";
        }
        return NULL;
    }
    /* 1.8: a device memory MR may be empty. */
    if ((length == 0 && !(p->flags & QHCA_MR_F_DM)) ||
        length > QHCA_MAX_MR_SIZE) {
        return "length out of range";
    }

    if (p->flags & QHCA_MR_F_DM) {
        /* Where in BAR 4 is qhca_mr_check_dm()'s: it needs the device. */
        if (p->flags != QHCA_MR_F_DM) {
            return "device memory MR with another flag";
        }
        if (p->npages || p->page_shift) {
            return "device memory MR with a page list";
        }
        if (p->access & QHCA_ACCESS_MW_BIND) {
            return "device memory MR with MW_BIND access";
        }
        if (length && length - 1 > UINT64_MAX - iova) {
            return "iova + length wraps";
        }
        return NULL;
    }

    if (p->flags & QHCA_MR_F_PHYS) {
        if (p->flags & QHCA_MR_F_PBL_INDIRECT) {
            return "physical MR with a page list";
        }
        if (iova) {
            return "physical MR with an iova";
        }
        if (p->npages || p->pbl_addr) {
            return "physical MR with a page list";
        }
        if (p->page_shift && (p->page_shift < QHCA_MR_MIN_PAGE_SHIFT ||
                              p->page_shift > QHCA_MR_MAX_PAGE_SHIFT)) {
            return "page_shift out of range";
        }
        return NULL;
    }

    if (p->page_shift < QHCA_MR_MIN_PAGE_SHIFT ||
        p->page_shift > QHCA_MR_MAX_PAGE_SHIFT) {
        return "page_shift out of range";
    }
    if (length - 1 > UINT64_MAX - iova) {
        return "iova + length wraps";
    }
    pgsize = 1ull << p->page_shift;
    first = iova & ~(pgsize - 1);
    needed = ((iova + length - 1 - first) >> p->page_shift) + 1;
    if (le32_to_cpu(p->npages) != needed) {
        return "npages does not match iova and length";
    }
    return NULL;
}

/*
 * The page list of @p (an MR with one, checked by qhca_mr_check_params()),
 * copied into host memory and checked page by page, into *@pages; on
 * failure the command is rejected.
 */
static uint8_t qhca_mr_load_pages(QhcaState *s, const QhcaCmd *cmd,
                                  const struct qhca_cmd_reg_mr *p,
                                  uint64_t **pages)
{
    uint32_t npages = le32_to_cpu(p->npages);
    g_autofree uint64_t *list = g_try_new(uint64_t, npages);
    const char *why;
    uint8_t status;

    if (!list) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_NO_RESOURCES,
                                "no host memory for the page list");
    }
    if (!qhca_mr_read_pbl(s, le64_to_cpu(p->pbl_addr),
                          p->flags & QHCA_MR_F_PBL_INDIRECT, list, npages)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_ADDRESS,
                                "page list not in guest RAM");
    }
    status = qhca_mr_check_pages(s, list, npages, p->page_shift, &why);
    if (status != QHCA_AQ_SUCCESS) {
        return qhca_exec_reject(s, cmd, status, why);
    }
    *pages = g_steal_pointer(&list);
    return QHCA_AQ_SUCCESS;
}

/*
 * 1.7: the bytes of a device memory MR (its fields checked by
 * qhca_mr_check_params(), the device's memory by qhca_mr_reg()) lie in
 * BAR 4.
 */
static const char *qhca_mr_check_dm(QhcaState *s,
                                    const struct qhca_cmd_reg_mr *p)
{
    uint64_t offset = le64_to_cpu(p->pbl_addr);
    uint64_t length = le64_to_cpu(p->length);

    /* 1.8: an empty MR may sit at the very end. */
    if (offset > s->params.dm_size || length > s->params.dm_size - offset) {
        return "device memory MR beyond BAR 4";
    }
    return NULL;
}

uint8_t qhca_mr_reg(QhcaState *s, const QhcaCmd *cmd,
                    const struct qhca_cmd_reg_mr *p, uint32_t *index)
{
    uint32_t pdn = le32_to_cpu(p->pdn);
    uint32_t npages = le32_to_cpu(p->npages);
    bool phys = p->flags & QHCA_MR_F_PHYS;
    bool fast_reg = p->flags & QHCA_MR_F_FAST_REG;
    bool dm = p->flags & QHCA_MR_F_DM;
    bool odp = p->flags & QHCA_MR_F_ODP;
    g_autofree uint64_t *pages = NULL;
    const char *why;
    uint8_t status;
    QhcaMr *mr;

    /* Without the capability, the DM flag is as unknown as any other. */
    why = dm && !s->params.dm_size ? "DM flag without device memory" :
          qhca_mr_check_params(p);
    if (!why && dm) {
        why = qhca_mr_check_dm(s, p);
    }
    if (why) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM, why);
    }
    if (!qhca_table_live(&s->pds, pdn)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_HANDLE, "no such PD");
    }
    if (npages > s->params.max_mr_pages - s->mr_pages) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_NO_RESOURCES,
                                "max-mr-pages reached");
    }
    if (s->mrs.used == s->mrs.size - s->mrs.first) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_NO_RESOURCES, "table full");
    }

    if (fast_reg) {
        pages = g_try_new0(uint64_t, npages);
        if (!pages) {
            return qhca_exec_reject(s, cmd, QHCA_AQ_NO_RESOURCES,
                                    "no host memory for the page list");
        }
    } else if (!phys && !dm && !odp) {
        status = qhca_mr_load_pages(s, cmd, p, &pages);
        if (status != QHCA_AQ_SUCCESS) {
            return status;
        }
    }

    if (!qhca_table_alloc(&s->mrs, index)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_NO_RESOURCES, "table full");
    }
    mr = g_new0(QhcaMr, 1);
    mr->iova = le64_to_cpu(p->iova);
    mr->length = le64_to_cpu(p->length);
    mr->pages = g_steal_pointer(&pages);
    mr->npages = (phys || fast_reg) ? 0 : npages;
    mr->pdn = pdn;
    mr->key = p->key;
    mr->access = p->access;
    mr->page_shift = p->page_shift;
    mr->phys = phys;
    mr->fast_reg = fast_reg;
    mr->valid = !fast_reg;
    mr->max_pages = fast_reg ? npages : 0;
    mr->dm = dm;
    mr->dm_offset = dm ? le64_to_cpu(p->pbl_addr) : 0;
    mr->index = *index;
    if (p->flags & QHCA_MR_F_ODP_IMPLICIT) {
        mr->length = 1ull << QHCA_ODP_IMPLICIT_VA_BITS;
    }
    if (odp) {
        /* No page yet: each is charged when ODP_MAP makes it present. */
        qhca_odp_mr_init(mr);
    }
    s->mr[*index] = mr;
    s->mr_pages += npages;
    s->pd_refs[pdn]++;
    if (odp) {
        trace_qhca_mr_reg_odp(*index, mr->key, pdn, mr->iova, mr->length,
                              mr->page_shift, mr->access,
                              p->flags & QHCA_MR_F_ODP_IMPLICIT);
    } else if (dm) {
        trace_qhca_mr_reg_dm(*index, mr->key, pdn, mr->iova, mr->length,
                             mr->dm_offset, mr->access);
    } else {
        trace_qhca_mr_reg(*index, mr->key, pdn, mr->iova, mr->length,
                          mr->npages, mr->page_shift, mr->access, phys);
    }
    return QHCA_AQ_SUCCESS;
}

/*
 * REREG_MR (1.6): the registration @mr would have after @p, as the
 * REG_MR that would make it, for qhca_mr_check_params() to check whole.
 */
static struct qhca_cmd_reg_mr
qhca_mr_rereg_as_reg(const QhcaMr *mr, const struct qhca_cmd_rereg_mr *p)
{
    struct qhca_cmd_reg_mr r = {
        .iova = cpu_to_le64(mr->iova),
        .length = cpu_to_le64(mr->length),
        .pdn = cpu_to_le32(mr->pdn),
        .npages = cpu_to_le32(mr->npages),
        .access = mr->access,
        .key = mr->key,
        .page_shift = mr->page_shift,
    };

    if (p->mask & QHCA_REREG_TRANSLATION) {
        r.iova = p->iova;
        r.length = p->length;
        r.pbl_addr = p->pbl_addr;
        r.npages = p->npages;
        r.page_shift = p->page_shift;
        r.flags = p->flags;
    }
    if (p->mask & QHCA_REREG_PD) {
        r.pdn = p->pdn;
    }
    if (p->mask & QHCA_REREG_ACCESS) {
        r.access = p->access;
    }
    return r;
}

/* The fields of @p that its mask does not name must be zero. */
static const char *qhca_mr_rereg_check_mask(const struct qhca_cmd_rereg_mr *p)
{
    if (p->mask & QHCA_REREG_RSVD) {
        return "reserved mask bit set";
    }
    if (!p->mask) {
        return "nothing to change";
    }
    if (!(p->mask & QHCA_REREG_TRANSLATION) &&
        (p->iova || p->length || p->pbl_addr || p->npages ||
         p->page_shift || p->flags)) {
        return "translation given without its mask bit";
    }
    if (p->flags & ~QHCA_MR_F_PBL_INDIRECT) {
        return "flags other than PBL_INDIRECT";
    }
    if (!(p->mask & QHCA_REREG_PD) && p->pdn) {
        return "PD given without its mask bit";
    }
    if (!(p->mask & QHCA_REREG_ACCESS) && p->access) {
        return "access given without its mask bit";
    }
    return NULL;
}

uint8_t qhca_mr_rereg(QhcaState *s, const QhcaCmd *cmd,
                      const struct qhca_cmd_rereg_mr *p)
{
    uint32_t index = le32_to_cpu(p->index);
    bool translation = p->mask & QHCA_REREG_TRANSLATION;
    g_autofree uint64_t *pages = NULL;
    struct qhca_cmd_reg_mr r;
    uint32_t npages, pdn;
    const char *why;
    uint8_t status;
    QhcaMr *mr;

    why = qhca_mr_rereg_check_mask(p);
    if (why) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM, why);
    }
    if (!qhca_table_live(&s->mrs, index)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_HANDLE, "no such MR");
    }
    mr = s->mr[index];
    if (mr->phys || mr->fast_reg || mr->dm || mr->odp) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "not an MR with a page list");
    }
    r = qhca_mr_rereg_as_reg(mr, p);
    why = qhca_mr_check_params(&r);
    if (why) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM, why);
    }
    pdn = le32_to_cpu(r.pdn);
    npages = le32_to_cpu(r.npages);
    if (!qhca_table_live(&s->pds, pdn)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_HANDLE, "no such PD");
    }
    if (mr->mw_refs) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_STATE,
                                "memory windows bound to the MR");
    }
    if (translation) {
        /* The old pages are given back only if this succeeds. */
        if (npages > mr->npages &&
            npages - mr->npages > s->params.max_mr_pages - s->mr_pages) {
            return qhca_exec_reject(s, cmd, QHCA_AQ_NO_RESOURCES,
                                    "max-mr-pages reached");
        }
        status = qhca_mr_load_pages(s, cmd, &r, &pages);
        if (status != QHCA_AQ_SUCCESS) {
            return status;
        }
        s->mr_pages = s->mr_pages - mr->npages + npages;
        g_free(mr->pages);
        mr->pages = g_steal_pointer(&pages);
        mr->npages = npages;
        mr->iova = le64_to_cpu(r.iova);
        mr->length = le64_to_cpu(r.length);
        mr->page_shift = r.page_shift;
    }
    s->pd_refs[mr->pdn]--;
    s->pd_refs[pdn]++;
    mr->pdn = pdn;
    mr->access = r.access;
    trace_qhca_mr_rereg(index, p->mask, pdn, mr->iova, mr->length,
                        mr->npages, mr->page_shift, mr->access);
    return QHCA_AQ_SUCCESS;
}

uint8_t qhca_mr_dereg(QhcaState *s, const QhcaCmd *cmd, uint32_t index)
{
    if (!qhca_table_live(&s->mrs, index)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_HANDLE, "no such MR");
    }
    if (s->mr[index]->mw_refs) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_STATE,
                                "memory windows bound to the MR");
    }
    trace_qhca_mr_dereg(index);
    qhca_mr_free(s, index);
    return QHCA_AQ_SUCCESS;
}

/*
 * The MR of lkey/rkey @key, if it is live, has that key, belongs to PD
 * @pdn, covers [addr, addr + len) and allows @access; else NULL.
 */
QhcaMr *qhca_mr_lookup(QhcaState *s, uint32_t key, uint32_t pdn,
                       uint64_t addr, uint64_t len, uint8_t access)
{
    uint32_t index = QHCA_FIELD_GET(QHCA_MKEY_INDEX, key);
    QhcaMr *mr;

    if (key & QHCA_MKEY_MW) {
        /* A window key is an rkey: it serves remote access only. */
        if (!(access & (QHCA_ACCESS_REMOTE_WRITE | QHCA_ACCESS_REMOTE_READ |
                        QHCA_ACCESS_REMOTE_ATOMIC))) {
            return NULL;
        }
        return qhca_mw_resolve(s, key, pdn, addr, len, access);
    }
    if (!qhca_table_live(&s->mrs, index)) {
        return NULL;
    }
    mr = s->mr[index];
    if (!mr->valid || mr->key != QHCA_FIELD_GET(QHCA_MKEY_KEY, key) ||
        mr->pdn != pdn || (mr->access & access) != access) {
        return NULL;
    }
    if (addr < mr->iova || len > mr->length ||
        addr - mr->iova > mr->length - len) {
        return NULL;
    }
    return mr;
}

/*
 * The guest address of page @page of @mr, an MR with pages (1.8: an ODP
 * MR's, 0 if absent), of a page inside the MR.
 */
static uint64_t qhca_mr_page_addr(const QhcaMr *mr, uint64_t page)
{
    return mr->odp ? qhca_odp_page_addr(mr, page) : mr->pages[page];
}

/*
 * Copy between @buf and [addr, addr + len) of @mr, which covers it.  Each
 * piece within one page is one DMA; NOT_RAM if a page left guest RAM.  A
 * device memory MR (1.7) is copied to or from BAR 4 instead; an ODP MR
 * (1.8) through its present pages, or FAULT (nothing copied, *@miss says
 * where) if one is absent.
 */
QhcaMrCopy qhca_mr_copy(QhcaState *s, QhcaMr *mr, uint64_t addr, void *buf,
                        uint32_t len, bool to_mr, QhcaOdpMiss *miss)
{
    uint8_t *p = buf;
    uint64_t pgsize, off, gpa, n;

    if (len == 0) {
        return QHCA_MR_COPY_OK;
    }
    if (mr->odp && qhca_odp_probe(mr, addr, len, to_mr, miss) !=
                   QHCA_MR_COPY_OK) {
        return QHCA_MR_COPY_FAULT;      /* every page checked first */
    }
    if (mr->dm) {
        /* qhca_mr_check_dm() put the MR in BAR 4, lookup the range in it. */
        off = mr->dm_offset + (addr - mr->iova);
        assert(off < s->params.dm_size && len <= s->params.dm_size - off);
        if (to_mr) {
            memcpy(s->dm + off, p, len);
            memory_region_set_dirty(&s->dm_bar, off, len);
        } else {
            memcpy(p, s->dm + off, len);
        }
        return QHCA_MR_COPY_OK;
    }
    if (mr->phys) {
        return qhca_dma_copy(s, addr, p, len, to_mr) ? QHCA_MR_COPY_OK
                                                     : QHCA_MR_COPY_NOT_RAM;
    }

    pgsize = 1ull << mr->page_shift;
    off = addr - (mr->iova & ~(pgsize - 1));
    while (len) {
        uint64_t page = off >> mr->page_shift;

        /*
         * Covered by the range check, and npages matched the range; an
         * ODP MR's pages were all found present just above.
         */
        assert(mr->odp || page < mr->npages);
        gpa = qhca_mr_page_addr(mr, page) + (off & (pgsize - 1));
        n = MIN(len, pgsize - (off & (pgsize - 1)));
        /* Merge physically contiguous pages into one transfer. */
        while (n < len && (mr->odp || page + 1 < mr->npages) &&
               qhca_mr_page_addr(mr, page + 1) ==
               qhca_mr_page_addr(mr, page) + pgsize) {
            page++;
            n = MIN(len, n + pgsize);
        }
        if (!qhca_dma_copy(s, gpa, p, n, to_mr)) {
            return QHCA_MR_COPY_NOT_RAM;
        }
        p += n;
        off += n;
        len -= n;
    }
    return QHCA_MR_COPY_OK;
}

/*
 * Copy between @buf and the bytes [offset, offset + len) of the message a
 * scatter/gather list describes.  Every piece is checked against its MR
 * with @access.  Returns QHCA_WC_SUCCESS, QHCA_WC_LOC_LEN_ERR when the
 * list is too short, or QHCA_WC_LOC_PROT_ERR; 1.8: QHCA_ODP_FAULT, with
 * *@miss filled, when a piece meets an absent ODP page (the pieces before
 * it are copied).  Without @miss such a piece is LOC_PROT_ERR.
 */
uint8_t qhca_sgl_copy(QhcaState *s, uint32_t pdn, const QhcaSge *sge,
                      unsigned num_sge, uint8_t access, uint64_t offset,
                      void *buf, uint32_t len, bool to_sgl,
                      QhcaOdpMiss *miss)
{
    QhcaOdpMiss ignored;
    uint8_t *p = buf;
    unsigned i;

    for (i = 0; i < num_sge && len; i++) {
        QhcaMrCopy r = QHCA_MR_COPY_NOT_RAM;
        uint32_t n;
        QhcaMr *mr;

        if (offset >= sge[i].length) {
            offset -= sge[i].length;
            continue;
        }
        n = MIN(len, sge[i].length - offset);
        mr = qhca_mr_lookup(s, sge[i].lkey, pdn, sge[i].addr + offset, n,
                            access);
        if (mr) {
            r = qhca_mr_copy(s, mr, sge[i].addr + offset, p, n, to_sgl,
                             miss ?: &ignored);
        }
        if (r == QHCA_MR_COPY_FAULT && miss) {
            return QHCA_ODP_FAULT;
        }
        if (r != QHCA_MR_COPY_OK) {
            trace_qhca_err_lkey(sge[i].lkey, sge[i].addr + offset, n, access);
            return QHCA_WC_LOC_PROT_ERR;
        }
        p += n;
        len -= n;
        offset = 0;
    }
    return len ? QHCA_WC_LOC_LEN_ERR : QHCA_WC_SUCCESS;
}
