/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Helpers shared by qhca-hostile-test and qhca-fuzz (see qhca-hostile.h).
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qhca-hostile.h"

void hx_setup(Hx *h, QhcaTest *t)
{
    memset(h, 0, sizeof(*h));
    h->t = t;
    qt_enable(t, 5);
    qt_alloc_uar_pd(t, &h->uar, &h->pdn);
    qt_eq_init(t, &h->eq, 6, 1, HX_EVENTS);
}

uint8_t hx_create_cq(Hx *h, QhcaCq *cq, uint8_t depth_log2)
{
    return qt_cq_create(h->t, cq, depth_log2, h->eq.eqn, h->uar);
}

uint8_t hx_create_qp(Hx *h, QhcaQp *qp, const QhcaCq *scq,
                     const QhcaCq *rcq)
{
    const QhcaQpSpec s = qt_rc_spec(h->pdn, h->uar, scq, rcq);

    return qt_qp_try_create(h->t, qp, &s);
}

/* Short timers and few retries, so that a lost peer ends soon. */
uint8_t hx_connect(Hx *h, const QhcaQp *qp, const QhcaQp *dest)
{
    QhcaPath path = qt_rc_path;

    path.rq_psn = 0x100 + dest->qpn;
    path.sq_psn = 0x100 + qp->qpn;
    path.timeout = 10;
    path.retry_cnt = 1;
    path.rnr_retry = 1;
    return qt_try_connect(h->t, qp->qpn, dest->qpn, &path);
}

uint8_t hx_phys_mr(Hx *h, uint64_t length, uint32_t *key)
{
    struct qhca_cmd_reg_mr c = {
        .length = cpu_to_le64(length),
        .pdn = cpu_to_le32(h->pdn),
        .access = QHCA_ACCESS_ALL,
        .key = 0x5a,
        .flags = QHCA_MR_F_PHYS,
    };
    uint32_t index = 0;
    uint8_t status = qt_cmd(h->t, QHCA_CMD_REG_MR, &c, sizeof(c), &index);

    *key = index << 8 | c.key;
    return status;
}
