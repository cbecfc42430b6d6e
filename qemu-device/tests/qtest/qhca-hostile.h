/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Helpers shared by qhca-hostile-test and qhca-fuzz: a minimal data path
 * (one UAR, PD and EQ; CQs, RC QPs connected to each other on the one
 * device, a physical MR) built from raw commands whose status the caller
 * checks, so that both can also build the objects wrongly on purpose.
 * The queues themselves are qhca-qtest's.
 */
#ifndef QHCA_HOSTILE_H
#define QHCA_HOSTILE_H

#include "qhca-qtest.h"

#define HX_EVENTS           0x7fe       /* every event type 1 .. 10 */

typedef struct Hx {
    QhcaTest *t;
    uint32_t uar;
    uint32_t pdn;
    QhcaEq eq;
} Hx;

/* Enable the device (a reset first) and make the UAR, PD and EQ. */
void hx_setup(Hx *h, QhcaTest *t);

uint8_t hx_create_cq(Hx *h, QhcaCq *cq, uint8_t depth_log2);
/* An RC QP of qt_rc_spec(). */
uint8_t hx_create_qp(Hx *h, QhcaQp *qp, const QhcaCq *scq,
                     const QhcaCq *rcq);
/* RESET -> INIT -> RTR -> RTS towards @dest; the first failing status. */
uint8_t hx_connect(Hx *h, const QhcaQp *qp, const QhcaQp *dest);
/* A physical MR [0, length) with every access; *key is its lkey/rkey. */
uint8_t hx_phys_mr(Hx *h, uint64_t length, uint32_t *key);

#endif /* QHCA_HOSTILE_H */
