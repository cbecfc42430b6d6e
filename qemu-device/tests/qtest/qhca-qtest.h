/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qtest helpers for the qhca InfiniBand HCA model: the test plays the
 * driver with plain register and memory accesses.  It brings the admin
 * queue up, submits commands and polls their completions by phase bit,
 * without interrupts.  The qtests qhca-test (interface 1.0) and
 * qhca-dp-test (the data path) share these.
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

#endif /* QHCA_QTEST_H */
