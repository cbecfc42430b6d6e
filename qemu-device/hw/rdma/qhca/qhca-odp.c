/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qhca on-demand paging (interface 1.8): the page store of ODP MRs, the
 * ODP_MAP and ODP_UNMAP commands that fill and empty it, and the page
 * faults a QP records when an access meets an absent page, which
 * QUERY_PAGE_FAULT reports and RESUME_PAGE_FAULT ends.
 *
 * An ODP MR keeps only its present pages, one QhcaOdpPage each in a hash
 * table by page number (a registration of 2^57 bytes has 2^45 pages of 4
 * KiB, and the driver maps a few at a time).  Each is charged to
 * max-mr-pages while present, which bounds the table.  Every access looks
 * its pages up again under the device lock (qhca_mr_copy()); nothing
 * keeps a page's address across a packet, so when ODP_UNMAP (also under
 * the lock) completes, no access uses the pages it took away.
 */
#include "qemu/osdep.h"
#include "qhca.h"
#include "trace.h"

typedef struct QhcaOdpPage {
    uint64_t page;              /* first: the key, for g_int64_hash() */
    uint64_t entry;             /* guest address | QHCA_ODP_PAGE_* */
} QhcaOdpPage;

/* The guest address bits of an entry (page sizes are 4 KiB or more). */
#define QHCA_ODP_PAGE_ADDR      (~0xfffull)

void qhca_odp_mr_init(QhcaMr *mr)
{
    mr->odp = true;
    mr->odp_pages = g_hash_table_new_full(g_int64_hash, g_int64_equal,
                                          g_free, NULL);
}

void qhca_odp_mr_free(QhcaState *s, QhcaMr *mr)
{
    s->mr_pages -= g_hash_table_size(mr->odp_pages);
    g_hash_table_destroy(mr->odp_pages);
    mr->odp_pages = NULL;
}

/* Where page 0 of @mr starts: its iova rounded down to the page size. */
static uint64_t qhca_odp_base(const QhcaMr *mr)
{
    return mr->iova & ~((1ull << mr->page_shift) - 1);
}

/* The pages @mr covers. */
static uint64_t qhca_odp_npages(const QhcaMr *mr)
{
    return ((mr->iova + mr->length - 1 - qhca_odp_base(mr)) >>
            mr->page_shift) + 1;
}

/* The entry of page @page of @mr; 0 if absent. */
static uint64_t qhca_odp_entry(const QhcaMr *mr, uint64_t page)
{
    QhcaOdpPage *pg = g_hash_table_lookup(mr->odp_pages, &page);

    return pg ? pg->entry : 0;
}

static bool qhca_odp_entry_allows(uint64_t entry, bool write)
{
    return (entry & QHCA_ODP_PAGE_READ) &&
           (!write || (entry & QHCA_ODP_PAGE_WRITE));
}

/*
 * Are the pages of [addr, addr + len) of @mr (which covers it) present,
 * and writable for @write?  FAULT, with *@miss filled (if not NULL), at
 * the first that is not.
 */
QhcaMrCopy qhca_odp_probe(QhcaMr *mr, uint64_t addr, uint64_t len,
                          bool write, QhcaOdpMiss *miss)
{
    uint64_t base = qhca_odp_base(mr);
    uint64_t page, last;

    if (!len) {
        return QHCA_MR_COPY_OK;
    }
    page = (addr - base) >> mr->page_shift;
    last = (addr + len - 1 - base) >> mr->page_shift;
    for (; page <= last; page++) {
        uint64_t start;

        if (qhca_odp_entry_allows(qhca_odp_entry(mr, page), write)) {
            continue;
        }
        start = MAX(addr, base + (page << mr->page_shift));
        if (miss) {
            *miss = (QhcaOdpMiss) {
                .addr = start,
                .length = addr + len - start,
                .mr_index = mr->index,
                .page = page,
                .write = write,
            };
        }
        trace_qhca_odp_miss(mr->index, start, addr + len - start, write);
        return QHCA_MR_COPY_FAULT;
    }
    return QHCA_MR_COPY_OK;
}

/* The guest address of page @page of @mr; 0 if absent. */
uint64_t qhca_odp_page_addr(const QhcaMr *mr, uint64_t page)
{
    return qhca_odp_entry(mr, page) & QHCA_ODP_PAGE_ADDR;
}

/* The ODP MR @index names, or NULL with the command rejected. */
static QhcaMr *qhca_odp_mr(QhcaState *s, const QhcaCmd *cmd, uint32_t index,
                           uint8_t *status)
{
    if (!qhca_table_live(&s->mrs, index)) {
        *status = qhca_exec_reject(s, cmd, QHCA_AQ_BAD_HANDLE, "no such MR");
        return NULL;
    }
    if (!s->mr[index]->odp) {
        *status = qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                   "not an ODP MR");
        return NULL;
    }
    return s->mr[index];
}

/* Why entry @e of an ODP_MAP list is refused for @mr; NULL if it is not. */
static const char *qhca_odp_check_entry(QhcaState *s, const QhcaMr *mr,
                                        uint64_t e)
{
    uint64_t pgsize = 1ull << mr->page_shift;
    uint64_t gpa = e & QHCA_ODP_PAGE_ADDR;

    if (e & QHCA_ODP_PAGE_RSVD) {
        return "reserved bit set in a page entry";
    }
    if (!(e & QHCA_ODP_PAGE_READ)) {
        return "page entry without READ";
    }
    if (gpa & (pgsize - 1)) {
        return "page entry not aligned to the page size";
    }
    if (!qhca_dma_in_ram(s, gpa, pgsize, true)) {
        return "page entry not in guest RAM";
    }
    return NULL;
}

uint8_t qhca_odp_map(QhcaState *s, const QhcaCmd *cmd,
                     const struct qhca_cmd_odp_map *p)
{
    uint64_t first = le64_to_cpu(p->first_page);
    uint64_t pbl = le64_to_cpu(p->pbl_addr);
    uint32_t index = le32_to_cpu(p->index);
    uint32_t npages = le32_to_cpu(p->npages);
    uint64_t list[QHCA_ODP_MAP_MAX_PAGES];
    uint64_t total, added = 0, removed = 0, mapped = 0;
    const char *why;
    uint8_t status;
    uint32_t i;
    QhcaMr *mr;

    if (p->rsvd[0] || p->rsvd[1]) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "reserved field set");
    }
    mr = qhca_odp_mr(s, cmd, index, &status);
    if (!mr) {
        return status;
    }
    if (!npages || npages > QHCA_ODP_MAP_MAX_PAGES) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "npages out of range");
    }
    total = qhca_odp_npages(mr);
    if (first >= total || npages > total - first) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "pages beyond the MR");
    }
    if (pbl & 7) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "page list not 8-byte aligned");
    }
    /* Read once: the guest may change it while the pages are checked. */
    if (!qhca_dma_read(s, pbl, list, (uint64_t)npages * 8)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_ADDRESS,
                                "page list not in guest RAM");
    }
    for (i = 0; i < npages; i++) {
        bool present = qhca_odp_entry(mr, first + i);

        list[i] = le64_to_cpu(list[i]);
        if (!list[i]) {
            removed += present;
            continue;
        }
        why = qhca_odp_check_entry(s, mr, list[i]);
        if (why) {
            return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM, why);
        }
        added += !present;
        mapped++;
    }
    if (added > removed &&
        added - removed > s->params.max_mr_pages - s->mr_pages) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_NO_RESOURCES,
                                "max-mr-pages reached");
    }

    for (i = 0; i < npages; i++) {
        uint64_t page = first + i;
        QhcaOdpPage *pg;

        if (!list[i]) {
            g_hash_table_remove(mr->odp_pages, &page);
            continue;
        }
        pg = g_hash_table_lookup(mr->odp_pages, &page);
        if (!pg) {
            pg = g_new(QhcaOdpPage, 1);
            pg->page = page;
            g_hash_table_add(mr->odp_pages, pg);
        }
        pg->entry = list[i];
    }
    s->mr_pages = s->mr_pages + added - removed;
    qhca_count(s, QHCA_CNT_ODP_PAGES_MAPPED, mapped);
    trace_qhca_odp_map(index, first, npages, mapped, npages - mapped,
                       g_hash_table_size(mr->odp_pages));
    return QHCA_AQ_SUCCESS;
}

typedef struct QhcaOdpRange {
    uint64_t first;
    uint64_t end;
} QhcaOdpRange;

static gboolean qhca_odp_in_range(gpointer key, gpointer value,
                                  gpointer opaque)
{
    const QhcaOdpPage *pg = value;
    const QhcaOdpRange *r = opaque;

    return pg->page >= r->first && pg->page < r->end;
}

uint8_t qhca_odp_unmap(QhcaState *s, const QhcaCmd *cmd,
                       const struct qhca_cmd_odp_unmap *p)
{
    uint64_t first = le64_to_cpu(p->first_page);
    uint64_t npages = le64_to_cpu(p->npages);
    uint32_t index = le32_to_cpu(p->index);
    QhcaOdpRange r = { .first = first };
    uint64_t total, removed = 0;
    uint8_t status;
    QhcaMr *mr;

    if (p->rsvd) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "reserved field set");
    }
    mr = qhca_odp_mr(s, cmd, index, &status);
    if (!mr) {
        return status;
    }
    if (!npages) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM, "npages is 0");
    }
    total = qhca_odp_npages(mr);
    if (first < total) {
        r.end = first + MIN(npages, total - first);
        /* Walk the range or the present pages, whichever is shorter. */
        if (r.end - r.first <= g_hash_table_size(mr->odp_pages)) {
            uint64_t page;

            for (page = r.first; page < r.end; page++) {
                removed += g_hash_table_remove(mr->odp_pages, &page);
            }
        } else {
            removed = g_hash_table_foreach_remove(mr->odp_pages,
                                                  qhca_odp_in_range, &r);
        }
    }
    s->mr_pages -= removed;
    qhca_count(s, QHCA_CNT_ODP_UNMAPS, 1);
    trace_qhca_odp_unmap(index, first, npages, removed);
    return QHCA_AQ_SUCCESS;
}

/*
 * An access of @qp, of @kind, met the absent page @miss says (@psn: the
 * responder's request).  True if it waits: the fault is pending, recorded
 * now (with the event) or before.
 * False if it must fail as an access outside its MR: RESUME FAILED said
 * so for that page of that access (@tag), or the QP is in error and
 * waits for nothing.
 */
bool qhca_odp_fault(QhcaState *s, QhcaQp *qp, enum qhca_page_fault_kind kind,
                    const QhcaOdpMiss *miss, uint32_t tag, uint32_t psn)
{
    QhcaOdpFault *f = &qp->odp[kind];

    if (qp->state == QHCA_QPS_ERR || qp->state == QHCA_QPS_RESET) {
        return false;
    }
    if (f->failed) {
        f->failed = false;
        if (f->tag == tag && f->miss.mr_index == miss->mr_index &&
            f->miss.page == miss->page) {
            qhca_count(s, QHCA_CNT_ODP_FAULTS_FAILED, 1);
            trace_qhca_odp_fault_failed(qp->qpn, kind, miss->mr_index,
                                        miss->addr);
            return false;
        }
    }
    if (f->pending) {
        return true;
    }
    f->pending = true;
    f->miss = *miss;
    f->tag = tag;
    f->psn = psn;
    qhca_count(s, QHCA_CNT_ODP_PAGE_FAULTS, 1);
    trace_qhca_odp_fault(qp->qpn, kind, miss->mr_index, miss->addr,
                         miss->length, miss->write, tag);
    qhca_eq_broadcast(s, QHCA_EVENT_PAGE_FAULT, qp->qpn);
    return true;
}

/* RESET, ERR, destroy: nothing waits any more. */
void qhca_odp_qp_drop(QhcaQp *qp)
{
    memset(qp->odp, 0, sizeof(qp->odp));
    qp->resp.odp_wait = false;
}

uint8_t qhca_odp_query(QhcaState *s, const QhcaCmd *cmd,
                       const struct qhca_cmd_query_page_fault *p,
                       struct qhca_page_fault_info *info)
{
    uint32_t qpn = le32_to_cpu(p->qpn);
    unsigned k;

    if (p->rsvd) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "reserved field set");
    }
    if (!qhca_table_live(&s->qps, qpn)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_HANDLE, "no such QP");
    }
    for (k = 0; k < QHCA_PAGE_FAULT_KINDS; k++) {
        const QhcaOdpFault *f = &s->qp[qpn].odp[k];
        struct qhca_page_fault *out = &info->fault[k];

        if (!f->pending) {
            continue;
        }
        out->addr = cpu_to_le64(f->miss.addr);
        out->length = cpu_to_le32(f->miss.length);
        out->mr_index = cpu_to_le32(f->miss.mr_index);
        out->psn = cpu_to_le32(f->psn);
        out->flags = QHCA_PAGE_FAULT_F_PENDING |
                     (f->miss.write ? QHCA_PAGE_FAULT_F_WRITE : 0);
    }
    return QHCA_AQ_SUCCESS;
}

uint8_t qhca_odp_resume(QhcaState *s, const QhcaCmd *cmd,
                        const struct qhca_cmd_resume_page_fault *p)
{
    uint32_t qpn = le32_to_cpu(p->qpn);
    QhcaOdpFault *f;
    QhcaQp *qp;

    if (p->rsvd) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "reserved field set");
    }
    if (p->kind >= QHCA_PAGE_FAULT_KINDS ||
        (p->status != QHCA_PAGE_FAULT_RESOLVED &&
         p->status != QHCA_PAGE_FAULT_FAILED)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "no such kind or status");
    }
    if (!qhca_table_live(&s->qps, qpn)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_HANDLE, "no such QP");
    }
    qp = &s->qp[qpn];
    f = &qp->odp[p->kind];
    if (!f->pending) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_STATE,
                                "no page fault of that kind pending");
    }
    trace_qhca_odp_resume(qpn, p->kind, p->status);
    f->pending = false;
    f->failed = p->status == QHCA_PAGE_FAULT_FAILED;
    if (p->kind == QHCA_PAGE_FAULT_REQUESTER) {
        qhca_req_odp_resume(s, qp);
    } else {
        qp->resp.odp_wait = false;
        qhca_engine_schedule(s, qp);
    }
    return QHCA_AQ_SUCCESS;
}
