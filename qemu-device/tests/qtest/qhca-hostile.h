/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Helpers shared by qhca-hostile-test and qhca-fuzz: a minimal data path
 * (one UAR, PD and EQ; CQs, RC QPs connected to each other on the one
 * device, a physical MR) built from raw commands whose status the caller
 * checks, so that both can also build the objects wrongly on purpose.
 */
#ifndef QHCA_HOSTILE_H
#define QHCA_HOSTILE_H

#include "qhca-qtest.h"

#define HX_EVENTS           0x7fe       /* every event type 1 .. 10 */
#define HX_MTU_1024         3
#define HX_LID              1

typedef struct Hx {
    QhcaTest *t;
    uint32_t uar;
    uint32_t pdn;
    uint32_t eqn;
    uint64_t eq;
    uint32_t eq_entries;
} Hx;

typedef struct HxCq {
    uint32_t cqn;
    uint64_t ring;
    uint64_t dbrec;
    uint32_t entries;
    uint32_t ci;
} HxCq;

typedef struct HxQp {
    uint32_t qpn;
    uint32_t uar;
    uint64_t sq;
    uint64_t rq;
    uint32_t sq_entries;
    uint32_t rq_entries;
    uint32_t sq_stride;
    uint32_t rq_stride;
    uint16_t sq_pi;
    uint16_t rq_pi;
} HxQp;

/* Enable the device (a reset first) and make the UAR, PD and EQ. */
void hx_setup(Hx *h, QhcaTest *t);

uint8_t hx_create_cq(Hx *h, HxCq *cq, uint8_t depth_log2);
uint8_t hx_create_qp(Hx *h, HxQp *qp, const HxCq *scq, const HxCq *rcq);
/* RESET -> INIT -> RTR -> RTS towards @dest; the first failing status. */
uint8_t hx_connect(Hx *h, const HxQp *qp, const HxQp *dest);
uint8_t hx_qp_state(Hx *h, const HxQp *qp);
/* A physical MR [0, length) with every access; *key is its lkey/rkey. */
uint8_t hx_phys_mr(Hx *h, uint64_t length, uint32_t *key);

void hx_db(Hx *h, uint32_t page, uint32_t offset, uint32_t val);
uint16_t hx_post_send(Hx *h, HxQp *qp, const struct qhca_sq_wqe *w,
                      const struct qhca_sge *sge, unsigned nsge);
void hx_ring_sq(Hx *h, HxQp *qp);
uint16_t hx_post_recv(Hx *h, HxQp *qp, uint64_t wr_id,
                      const struct qhca_sge *sge, unsigned nsge);
/* The next CQE of @cq within @timeout_us (consumed, dbrec updated). */
bool hx_poll(Hx *h, HxCq *cq, struct qhca_cqe *cqe, int64_t timeout_us);

uint64_t hx_guest_errors(QhcaTest *t);
uint64_t hx_counter(QhcaTest *t, enum qhca_counter i);

#endif /* QHCA_HOSTILE_H */
