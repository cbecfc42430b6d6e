/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qhca memory windows, fast registration and invalidation (1.2).
 *
 * A window is a key into a part of an MR with its own access; the
 * responder resolves a window key to the MR and checks the window's
 * bounds, so the copy itself is the MR's.  Binding, local invalidation
 * and fast registration are send WQEs that never go on the wire: the
 * requester runs them in SQ order when their turn comes
 * (qhca_local_exec()), their fields checked when it took them
 * (qhca_swqe_read()).
 */
#include "qemu/osdep.h"
#include "qhca.h"
#include "trace.h"

void qhca_mw_init(QhcaState *s)
{
    /* One slot at least: a bitmap of no bits cannot be cleared. */
    qhca_table_init(&s->mws, "mw", 0, MAX(s->params.max_mws, 1));
    s->mw = g_new0(QhcaMw *, MAX(s->params.max_mws, 1));
}

static void qhca_mw_unbind(QhcaState *s, QhcaMw *mw)
{
    if (mw->bound && mw->has_mr) {
        s->mr[mw->mr_index]->mw_refs--;
    }
    mw->bound = false;
    mw->has_mr = false;
}

static void qhca_mw_free(QhcaState *s, uint32_t index)
{
    QhcaMw *mw = s->mw[index];

    qhca_mw_unbind(s, mw);
    s->pd_refs[mw->pdn]--;
    g_free(mw);
    s->mw[index] = NULL;
    qhca_table_free(&s->mws, index);
}

void qhca_mw_reset(QhcaState *s)
{
    unsigned long i;

    QHCA_TABLE_FOR_EACH(&s->mws, i) {
        qhca_mw_free(s, i);
    }
    qhca_table_reset(&s->mws);
}

void qhca_mw_fini(QhcaState *s)
{
    qhca_mw_reset(s);
    qhca_table_fini(&s->mws);
    g_free(s->mw);
    s->mw = NULL;
}

uint8_t qhca_mw_alloc(QhcaState *s, const QhcaCmd *cmd,
                      const struct qhca_cmd_alloc_mw *p, uint32_t *index)
{
    uint32_t pdn = le32_to_cpu(p->pdn);
    QhcaMw *mw;

    if (p->rsvd0[0] || p->rsvd0[1] || p->rsvd0[2] || p->rsvd1) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM,
                                "reserved field set");
    }
    if (p->type != QHCA_MW_TYPE_1 && p->type != QHCA_MW_TYPE_2) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_PARAM, "bad MW type");
    }
    if (!qhca_table_live(&s->pds, pdn)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_HANDLE, "no such PD");
    }
    if (!s->params.max_mws) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_NO_RESOURCES,
                                "no memory windows (max-mws=0)");
    }
    if (!qhca_table_alloc(&s->mws, index)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_NO_RESOURCES, "table full");
    }
    mw = g_new0(QhcaMw, 1);
    mw->pdn = pdn;
    mw->type = p->type;
    s->mw[*index] = mw;
    s->pd_refs[pdn]++;
    trace_qhca_mw_alloc(*index, pdn, mw->type);
    return QHCA_AQ_SUCCESS;
}

uint8_t qhca_mw_dealloc(QhcaState *s, const QhcaCmd *cmd, uint32_t index)
{
    if (!qhca_table_live(&s->mws, index)) {
        return qhca_exec_reject(s, cmd, QHCA_AQ_BAD_HANDLE, "no such MW");
    }
    trace_qhca_mw_dealloc(index);
    qhca_mw_free(s, index);
    return QHCA_AQ_SUCCESS;
}

static QhcaMw *qhca_mw_by_key(QhcaState *s, uint32_t key)
{
    uint32_t index = QHCA_FIELD_GET(QHCA_MKEY_MW_INDEX, key);

    if (!(key & QHCA_MKEY_MW) || !qhca_table_live(&s->mws, index)) {
        return NULL;
    }
    return s->mw[index];
}

/*
 * The MR behind window key @key, if the window is bound with that key,
 * of PD @pdn, covers [addr, addr + len) and allows @access.
 */
QhcaMr *qhca_mw_resolve(QhcaState *s, uint32_t key, uint32_t pdn,
                        uint64_t addr, uint64_t len, uint8_t access)
{
    QhcaMw *mw = qhca_mw_by_key(s, key);

    if (!mw || !mw->has_mr || mw->key != QHCA_FIELD_GET(QHCA_MKEY_KEY, key) ||
        mw->pdn != pdn || (mw->access & access) != access) {
        return NULL;
    }
    if (addr < mw->addr || len > mw->length ||
        addr - mw->addr > mw->length - len) {
        return NULL;
    }
    return s->mr[mw->mr_index];
}

/*
 * Invalidate @key for PD @pdn: a bound type 2 window or a valid fast-reg
 * MR with that key becomes free.  False if @key names nothing that may
 * be invalidated.
 */
bool qhca_invalidate(QhcaState *s, uint32_t pdn, uint32_t key)
{
    uint8_t k = QHCA_FIELD_GET(QHCA_MKEY_KEY, key);
    uint32_t index;
    QhcaMr *mr;
    QhcaMw *mw;

    if (key & QHCA_MKEY_MW) {
        mw = qhca_mw_by_key(s, key);
        if (!mw || mw->type != QHCA_MW_TYPE_2 || !mw->bound ||
            mw->key != k || mw->pdn != pdn) {
            return false;
        }
        qhca_mw_unbind(s, mw);
        trace_qhca_invalidate(key, true);
        return true;
    }
    index = QHCA_FIELD_GET(QHCA_MKEY_INDEX, key);
    if (!qhca_table_live(&s->mrs, index)) {
        return false;
    }
    mr = s->mr[index];
    if (!mr->fast_reg || !mr->valid || mr->key != k || mr->pdn != pdn ||
        mr->mw_refs) {
        return false;
    }
    mr->valid = false;
    trace_qhca_invalidate(key, false);
    return true;
}

static uint8_t qhca_local_bind(QhcaState *s, QhcaQp *qp, QhcaSwqe *w,
                               const char **why)
{
    uint64_t addr = w->remote_addr, len = w->mem.length;
    uint32_t mr_lkey = w->mem.mr_lkey;
    uint32_t index = QHCA_FIELD_GET(QHCA_MKEY_INDEX, mr_lkey);
    uint8_t need = 0;
    QhcaMw *mw = qhca_mw_by_key(s, w->rkey);
    QhcaMr *mr = NULL;

    if (!mw || mw->type != w->mem.mw_type || mw->pdn != qp->pdn) {
        *why = "no such window of this type and PD";
        return QHCA_WC_MW_BIND_ERR;
    }
    if (mw->type == QHCA_MW_TYPE_2 && mw->bound) {
        *why = "type 2 window already bound";
        return QHCA_WC_MW_BIND_ERR;
    }
    if (mr_lkey == QHCA_BIND_NO_MR) {
        /* A window of no bytes, in no MR. */
        if (len) {
            *why = "bind to no MR with a length";
            return QHCA_WC_MW_BIND_ERR;
        }
        goto bind;
    }
    if ((mr_lkey & QHCA_MKEY_MW) || !qhca_table_live(&s->mrs, index)) {
        *why = "no such MR";
        return QHCA_WC_MW_BIND_ERR;
    }
    mr = s->mr[index];
    if (mr->key != QHCA_FIELD_GET(QHCA_MKEY_KEY, mr_lkey) ||
        mr->pdn != qp->pdn || !mr->valid) {
        *why = "MR key, PD or state";
        return QHCA_WC_MW_BIND_ERR;
    }
    if (!(mr->access & QHCA_ACCESS_MW_BIND)) {
        *why = "MR without MW_BIND access";
        return QHCA_WC_MW_BIND_ERR;
    }
    /*
     * As in IBA: the window's own access governs remote use (the MR
     * needs no remote access of its own), but a window that lets the
     * peer write needs an MR the HCA may write locally.
     */
    if (w->mem.access & (QHCA_ACCESS_REMOTE_WRITE |
                         QHCA_ACCESS_REMOTE_ATOMIC)) {
        need = QHCA_ACCESS_LOCAL_WRITE;
    }
    if ((mr->access & need) != need) {
        *why = "remote-write window on an MR without local write";
        return QHCA_WC_MW_BIND_ERR;
    }
    if (len && (addr < mr->iova || len > mr->length ||
                addr - mr->iova > mr->length - len)) {
        *why = "window outside the MR";
        return QHCA_WC_MW_BIND_ERR;
    }
bind:
    qhca_mw_unbind(s, mw);      /* a type 1 rebind replaces */
    mw->bound = true;
    mw->has_mr = mr != NULL;
    mw->key = QHCA_FIELD_GET(QHCA_MKEY_KEY, w->rkey);
    mw->access = w->mem.access;
    mw->mr_index = index;
    mw->addr = addr;
    mw->length = len;
    if (mr) {
        mr->mw_refs++;
    }
    trace_qhca_mw_bind(w->rkey, mr_lkey, addr, len, w->mem.access);
    return QHCA_WC_SUCCESS;
}

static uint8_t qhca_local_reg_mr(QhcaState *s, QhcaQp *qp, QhcaSwqe *w,
                                 const char **why)
{
    uint32_t index = QHCA_FIELD_GET(QHCA_MKEY_INDEX, w->rkey);
    uint64_t iova = w->remote_addr, len = w->mem.length;
    uint32_t npages = w->mem.npages;
    uint64_t pgsize = 1ull << w->mem.page_shift;
    uint64_t first, needed, size;
    QhcaMr *mr;
    uint32_t i, run;

    if ((w->rkey & QHCA_MKEY_MW) || !qhca_table_live(&s->mrs, index)) {
        *why = "REG_MR of no MR";
        return QHCA_WC_LOC_PROT_ERR;
    }
    mr = s->mr[index];
    if (!mr->fast_reg || mr->valid || mr->pdn != qp->pdn) {
        *why = "REG_MR of an MR that is not a free fast-reg MR of the PD";
        return QHCA_WC_LOC_PROT_ERR;
    }
    if (npages > mr->max_pages || len - 1 > UINT64_MAX - iova) {
        *why = "REG_MR beyond the MR's pages";
        return QHCA_WC_LOC_QP_OP_ERR;
    }
    first = iova & ~(pgsize - 1);
    needed = ((iova + len - 1 - first) >> w->mem.page_shift) + 1;
    if (needed != npages) {
        *why = "REG_MR npages does not match iova and length";
        return QHCA_WC_LOC_QP_OP_ERR;
    }
    /* Into the MR's own list, which holds max_pages. */
    if (!qhca_dma_read(s, w->mem.pbl_addr, mr->pages, (uint64_t)npages * 8)) {
        *why = "REG_MR page list not in guest RAM";
        return QHCA_WC_LOC_QP_OP_ERR;
    }
    for (i = 0; i < npages; i++) {
        mr->pages[i] = le64_to_cpu(mr->pages[i]);
    }
    for (i = 0; i < npages; i += run) {
        if (mr->pages[i] & (pgsize - 1)) {
            *why = "REG_MR page not aligned";
            return QHCA_WC_LOC_QP_OP_ERR;
        }
        for (run = 1; i + run < npages &&
             mr->pages[i + run] == mr->pages[i] + run * pgsize; run++) {
            ;
        }
        size = run * pgsize;
        if (!qhca_dma_in_ram(s, mr->pages[i], size, true)) {
            *why = "REG_MR page not in guest RAM";
            return QHCA_WC_LOC_QP_OP_ERR;
        }
    }
    mr->iova = iova;
    mr->length = len;
    mr->npages = npages;
    mr->page_shift = w->mem.page_shift;
    mr->access = w->mem.access;
    mr->key = QHCA_FIELD_GET(QHCA_MKEY_KEY, w->rkey);
    mr->valid = true;
    trace_qhca_mr_fast_reg(index, mr->key, iova, len, mr->npages,
                           mr->page_shift, mr->access);
    return QHCA_WC_SUCCESS;
}

/* Run a memory operation WQE; returns its completion status. */
uint8_t qhca_local_exec(QhcaState *s, QhcaQp *qp, QhcaSwqe *w,
                        const char **why)
{
    switch (w->opcode) {
    case QHCA_WR_LOCAL_INV:
        if (!qhca_invalidate(s, qp->pdn, w->rkey)) {
            *why = "LOCAL_INV of a key that cannot be invalidated";
            return QHCA_WC_LOC_QP_OP_ERR;
        }
        return QHCA_WC_SUCCESS;
    case QHCA_WR_BIND_MW:
        return qhca_local_bind(s, qp, w, why);
    default:
        return qhca_local_reg_mr(s, qp, w, why);
    }
}
