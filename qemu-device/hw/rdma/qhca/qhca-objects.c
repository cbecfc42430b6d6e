/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qhca object tables: the handles of every object type.
 *
 * Each table is a bitmap sized by a device property.  A handle is an index
 * into it; tables whose low handles are reserved (CQ 0, QPs 0 and 1) start
 * at their first usable handle.  The object types of the data path keep
 * their state in qhca-mr.c, qhca-cq.c and qhca-qp.c.
 */
#include "qemu/osdep.h"
#include "qemu/bitmap.h"
#include "qhca.h"
#include "trace.h"

void qhca_table_init(QhcaTable *t, const char *name, uint32_t first,
                     uint32_t count)
{
    t->name = name;
    t->first = first;
    t->size = first + count;
    t->used = 0;
    t->first_free = first;
    t->map = bitmap_new(t->size);
}

void qhca_table_fini(QhcaTable *t)
{
    g_free(t->map);
    t->map = NULL;
    t->size = 0;
    t->used = 0;
}

void qhca_table_reset(QhcaTable *t)
{
    bitmap_zero(t->map, t->size);
    t->used = 0;
    t->first_free = t->first;
}

/*
 * Take the lowest free handle, so handles stay small and reusable.  The
 * search starts at first_free: a guest that keeps a large table nearly
 * full must not make every allocation scan it from the start.
 */
bool qhca_table_alloc(QhcaTable *t, uint32_t *handle)
{
    unsigned long i;

    if (t->used == t->size - t->first) {
        trace_qhca_table_full(t->name, t->size);
        return false;
    }
    i = find_next_zero_bit(t->map, t->size, t->first_free);
    assert(i < t->size);
    set_bit(i, t->map);
    t->used++;
    t->first_free = i + 1;
    *handle = i;
    trace_qhca_table_alloc(t->name, *handle);
    return true;
}

bool qhca_table_live(QhcaTable *t, uint32_t handle)
{
    return handle >= t->first && handle < t->size && test_bit(handle, t->map);
}

void qhca_table_free(QhcaTable *t, uint32_t handle)
{
    assert(qhca_table_live(t, handle));
    clear_bit(handle, t->map);
    t->used--;
    t->first_free = MIN(t->first_free, handle);
    trace_qhca_table_free(t->name, handle);
}

/*
 * Everything below runs under the device lock (or before the engine
 * exists, or after it stopped).
 */

void qhca_objects_init(QhcaState *s)
{
    qhca_table_init(&s->uars, "uar", 0, s->params.max_uars);
    qhca_table_init(&s->pds, "pd", 0, s->params.max_pds);
    qhca_table_init(&s->eqs, "eq", 0, s->params.max_eqs);
    s->eq = g_new0(QhcaEq, s->params.max_eqs);
    /* Large but untouched until used: calloc maps them lazily. */
    s->pd_refs = g_new0(uint32_t, s->params.max_pds);
    s->uar_refs = g_new0(uint32_t, s->params.max_uars);
    qhca_mr_init(s);
    qhca_mw_init(s);
    qhca_cq_init(s);
    qhca_qp_init(s);
    qhca_srq_init(s);
    qhca_xrc_init(s);
}

void qhca_objects_fini(QhcaState *s)
{
    qhca_xrc_fini(s);
    qhca_srq_fini(s);
    qhca_qp_fini(s);
    qhca_cq_fini(s);
    qhca_mw_fini(s);    /* before the MRs the windows hold */
    qhca_mr_fini(s);
    qhca_table_fini(&s->uars);
    qhca_table_fini(&s->pds);
    qhca_table_fini(&s->eqs);
    g_free(s->eq);
    s->eq = NULL;
    g_free(s->pd_refs);
    s->pd_refs = NULL;
    g_free(s->uar_refs);
    s->uar_refs = NULL;
}

void qhca_objects_reset(QhcaState *s)
{
    qhca_qp_reset(s);
    qhca_srq_reset(s);   /* after the QPs that hold it */
    qhca_xrc_reset(s);   /* after the SRQs and QPs in them */
    qhca_cq_reset(s);
    qhca_mw_reset(s);
    qhca_mr_reset(s);
    qhca_table_reset(&s->uars);
    qhca_table_reset(&s->pds);
    qhca_table_reset(&s->eqs);
    memset(s->eq, 0, sizeof(*s->eq) * s->params.max_eqs);
    /* A fresh calloc rather than a memset that would touch every page. */
    g_free(s->pd_refs);
    s->pd_refs = g_new0(uint32_t, s->params.max_pds);
    g_free(s->uar_refs);
    s->uar_refs = g_new0(uint32_t, s->params.max_uars);
}
