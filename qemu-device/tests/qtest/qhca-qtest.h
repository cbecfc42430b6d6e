/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qtest helpers for the qhca InfiniBand HCA model: the test plays the
 * driver with plain register and memory accesses.  It brings the admin
 * queue up, submits commands and polls their completions by phase bit,
 * without interrupts.  Every qhca qtest shares these: qhca-test
 * (interface 1.0) the admin queue, the others the data path too.
 */
#ifndef QHCA_QTEST_H
#define QHCA_QTEST_H

#include "libqtest.h"
#include "libqos/pci-pc.h"
#include "libqos/malloc-pc.h"
#include "hw/rdma/qhca_hw.h"

#define QHCA_TIMEOUT_US     (5 * G_USEC_PER_SEC)

/* q35 with qtest's default 128 MiB: RAM ends here, below the PCI hole. */
#define RAM_END             0x8000000ull

typedef struct QhcaTest {
    QTestState *qts;
    QGuestAllocator alloc;
    QPCIBus *bus;
    QPCIDevice *dev;
    QPCIBar bar0;
    QPCIBar bar2;
    uint64_t bar2_size;

    /* The admin queue, as the driver keeps it. */
    uint64_t sq;
    uint64_t cq;
    uint32_t entries;
    uint8_t vector;             /* MSI-X vector of admin completions */
    uint32_t sq_tail;
    uint32_t cq_head;
    uint8_t phase;
    uint16_t next_id;
    uint64_t resp;              /* a 4 KiB response buffer */
} QhcaTest;

typedef struct QhcaCompletion {
    uint16_t cmd_id;
    uint8_t status;
    uint32_t result;
    uint16_t sq_head;
} QhcaCompletion;

bool qt_init(int *argc, char ***argv);
QhcaTest *qhca_start(const char *props);
void qhca_stop(QhcaTest *t);

uint32_t qt_rd(QhcaTest *t, uint32_t reg);
void qt_wr(QhcaTest *t, uint32_t reg, uint32_t val);
void qt_assert_alive(QhcaTest *t);
void qt_reset(QhcaTest *t);
void qt_assert_error(QhcaTest *t, uint32_t err);
void qt_write_aq_regs(QhcaTest *t, uint64_t sq, uint64_t cq, uint32_t cfg);
uint32_t qt_aq_cfg(unsigned depth_log2, unsigned vector);
void qt_enable(QhcaTest *t, unsigned depth_log2);

uint16_t qt_queue_sqe(QhcaTest *t, struct qhca_aq_sqe *sqe);
void qt_ring_sq(QhcaTest *t);
bool qt_cqe_ready(QhcaTest *t);
QhcaCompletion qt_take_cqe(QhcaTest *t);
void qt_assert_no_cqe(QhcaTest *t);
uint8_t qt_submit(QhcaTest *t, struct qhca_aq_sqe *sqe, uint32_t *result);
uint8_t qt_cmd(QhcaTest *t, uint16_t opcode, const void *payload,
               size_t len, uint32_t *result);
uint8_t qt_query(QhcaTest *t, uint16_t opcode, const void *payload,
                 size_t len, void *resp, size_t resp_len);
uint8_t qt_handle_cmd(QhcaTest *t, uint16_t opcode, uint32_t handle);
struct qhca_stats qt_stats(QhcaTest *t);
void qt_assert_objects(QhcaTest *t, uint32_t uars, uint32_t pds,
                       uint32_t eqs);
uint8_t qt_create_eq(QhcaTest *t, uint64_t base, uint8_t depth_log2,
                     uint16_t vector, uint32_t mask, uint32_t *eqn);
struct qhca_eqe qt_read_eqe(QhcaTest *t, uint64_t base, uint32_t slot);

/*
 * The data path as the qtests other than qhca-test drive it: event and
 * completion queues kept as the driver keeps them, rings written slot by
 * slot, doorbells, the common commands and the RC connection sequence.
 */

/* An event queue: its ring of @entries EQEs, consumed up to @head. */
typedef struct QhcaEq {
    uint32_t eqn;
    uint64_t ring;
    uint32_t entries;
    uint32_t head;
} QhcaEq;

/* A completion queue: ring, doorbell record, consumer index. */
typedef struct QhcaCq {
    uint32_t cqn;
    uint64_t ring;
    uint64_t dbrec;
    uint32_t entries;
    uint32_t ci;
} QhcaCq;

/* What an RC (or, with @rc false, UC) QP is connected with. */
typedef struct QhcaPath {
    bool rc;                    /* set the RC-only attributes too */
    uint16_t dlid;
    uint8_t mtu;
    uint8_t access;
    uint32_t rq_psn;
    uint32_t sq_psn;
    uint8_t max_dest_rd_atomic;
    uint8_t min_rnr_timer;
    uint8_t timeout;
    uint8_t retry_cnt;
    uint8_t rnr_retry;
    uint8_t max_rd_atomic;
} QhcaPath;

QTestState *qt_hotplug_start(void);
void qt_assert_prop_out_of_range(QTestState *qts, const char *name,
                                 int64_t value);

QhcaTest *qt_start_dp(const char *props, uint32_t *uar, uint32_t *pdn,
                      QhcaEq *eq, uint32_t events);
bool qt_wait(bool (*ready)(void *), void *opaque);
void qt_alloc_uar_pd(QhcaTest *t, uint32_t *uar, uint32_t *pdn);
uint32_t qt_reg_phys_mr(QhcaTest *t, uint32_t pdn, uint8_t access,
                        uint8_t key, uint8_t page_shift);
struct qhca_counters qt_counters(QhcaTest *t);
uint64_t qt_counter(QhcaTest *t, enum qhca_counter i);

void qt_eq_init(QhcaTest *t, QhcaEq *eq, uint8_t depth_log2,
                uint16_t vector, uint32_t mask);
bool qt_eqe_ready(QhcaTest *t, const QhcaEq *eq);
bool qt_eq_next(QhcaTest *t, QhcaEq *eq, bool wait, struct qhca_eqe *e);

void qt_cq_init(QhcaTest *t, QhcaCq *cq, uint8_t depth_log2, uint32_t eqn,
                uint32_t uar);
uint64_t qt_cqe_addr(const QhcaCq *cq);
bool qt_cq_ready(QhcaTest *t, const QhcaCq *cq);
bool qt_cq_poll(QhcaTest *t, QhcaCq *cq, struct qhca_cqe *cqe, bool wait);
struct qhca_cqe qt_cq_take(QhcaTest *t, QhcaCq *cq);
void qt_cq_assert_empty(QhcaTest *t, const QhcaCq *cq);

uint64_t qt_slot(uint64_t ring, uint16_t idx, uint8_t depth_log2,
                 uint8_t stride_log2);
void qt_write_wqe(QhcaTest *t, uint64_t slot, const void *w, size_t wlen,
                  const struct qhca_sge *sge, unsigned nsge);
void qt_write_rwqe(QhcaTest *t, uint64_t slot, uint64_t wr_id,
                   const struct qhca_sge *sge, unsigned nsge);
void qt_db(QhcaTest *t, uint32_t uar, uint32_t reg, uint32_t num,
           uint16_t idx);

uint8_t qt_modify_qp(QhcaTest *t, struct qhca_cmd_modify_qp *m);
struct qhca_qp_attr qt_query_qp(QhcaTest *t, uint32_t qpn);
struct qhca_srq_attr qt_query_srq(QhcaTest *t, uint32_t srqn);
void qt_connect(QhcaTest *t, uint32_t qpn, uint32_t dest_qpn,
                const QhcaPath *p);

#endif /* QHCA_QTEST_H */
