/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qtest helpers for the qhca InfiniBand HCA model: the test plays the
 * driver with plain register and memory accesses.  It brings the admin
 * queue up, submits commands and polls their completions by phase bit,
 * without interrupts.  Every qhca qtest and qhca-fuzz share these:
 * the admin queue, and the one layer of the data path (EQs, CQs, SRQs
 * and QPs of every type with their rings, posting, doorbells, bounded
 * waits for CQEs and events, the connection sequence), so that a test
 * says only what is particular to it.
 */
#ifndef QHCA_QTEST_H
#define QHCA_QTEST_H

#include "libqtest.h"
#include "libqos/pci-pc.h"
#include "libqos/malloc-pc.h"
#include "standard-headers/rdma/qhca_hw.h"

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

    /*
     * 1.5, qt_start_eth(): the test's end of the port's netdev (-1 when
     * the port is not on one), a stream of frames each after its length
     * (4 bytes, big endian), as QEMU's -netdev socket carries them; what
     * is received but not yet taken, and what is not yet sent.
     */
    int wire;
    GByteArray *wire_in;
    GByteArray *wire_out;
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
void qt_aq_rewind(QhcaTest *t);
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

/* A shared receive queue: its ring and producer index. */
typedef struct QhcaSrq {
    uint32_t srqn;
    uint8_t type;               /* QHCA_SRQT_* */
    uint32_t uar;               /* the UAR whose page rings it */
    uint64_t ring;
    uint32_t entries;
    uint32_t stride;            /* bytes */
    uint16_t pi;
} QhcaSrq;

/*
 * A QP as the driver keeps it: its rings and their producer indices.  A
 * ring it does not have (an RQ on an SRQ, the rings of an XRC TGT QP) is
 * 0 with 0 entries.
 */
typedef struct QhcaQp {
    uint32_t qpn;
    uint8_t type;               /* QHCA_QPT_* */
    uint32_t uar;               /* the UAR whose page rings it */
    uint64_t sq;
    uint64_t rq;
    uint32_t sq_entries;
    uint32_t rq_entries;
    uint32_t sq_stride;         /* bytes */
    uint32_t rq_stride;
    uint16_t sq_pi;
    uint16_t rq_pi;
} QhcaQp;

/*
 * What a QP is created with.  A ring whose stride_log2 is 0 is not
 * allocated (and its fields of CREATE_QP stay 0); @srq puts the QP on
 * that SRQ instead of an RQ of its own.
 */
typedef struct QhcaQpSpec {
    uint8_t type;
    uint8_t flags;              /* QHCA_QP_F_*; SRQ is set from @srq */
    uint32_t pdn;
    uint32_t uar;
    uint32_t send_cqn;
    uint32_t recv_cqn;
    uint8_t sq_log2;
    uint8_t sq_stride_log2;
    uint8_t rq_log2;
    uint8_t rq_stride_log2;
    const QhcaSrq *srq;
} QhcaQpSpec;

/* The port's LID, and enum ib_mtu's 1024: what the tests connect with. */
#define QT_LID              1
#define QT_MTU_1024         3

/*
 * An RC path on the one port with every remote access, four reads or
 * atomics in flight each way, and retries for ever; PSNs are the caller's.
 */
extern const QhcaPath qt_rc_path;

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

uint64_t qt_wait_counter(QhcaTest *t, enum qhca_counter i, uint64_t value);
uint64_t qt_guest_errors(QhcaTest *t);

void qt_eq_expect(QhcaTest *t, QhcaEq *eq, uint8_t type, uint32_t data);
void qt_eq_assert_quiet(QhcaTest *t, const QhcaEq *eq);

/* Completion queues */
struct qhca_cmd_create_cq qt_cq_prepare(QhcaTest *t, QhcaCq *cq,
                                        uint8_t depth_log2, uint32_t eqn,
                                        uint32_t uar);
uint8_t qt_cq_create(QhcaTest *t, QhcaCq *cq, uint8_t depth_log2,
                     uint32_t eqn, uint32_t uar);
void qt_cq_init(QhcaTest *t, QhcaCq *cq, uint8_t depth_log2, uint32_t eqn,
                uint32_t uar);
QhcaCq *qt_cq_new(QhcaTest *t, uint8_t depth_log2, uint32_t eqn,
                  uint32_t uar);
uint64_t qt_cqe_addr(const QhcaCq *cq);
bool qt_cq_ready(QhcaTest *t, const QhcaCq *cq);
bool qt_cq_poll_for(QhcaTest *t, QhcaCq *cq, struct qhca_cqe *cqe,
                    int64_t timeout_us);
bool qt_cq_poll(QhcaTest *t, QhcaCq *cq, struct qhca_cqe *cqe, bool wait);
struct qhca_cqe qt_cq_take(QhcaTest *t, QhcaCq *cq);
struct qhca_cqe qt_cq_expect(QhcaTest *t, QhcaCq *cq, uint32_t qpn,
                             uint8_t opcode, uint8_t status);
void qt_cq_assert_empty(QhcaTest *t, const QhcaCq *cq);
void qt_cq_arm(QhcaTest *t, uint32_t uar, const QhcaCq *cq, bool solicited);

/* Rings and doorbells */
bool qt_wr_is(unsigned opcode, unsigned flags);
void qt_write_wqe(QhcaTest *t, uint64_t slot, const void *w, size_t wlen,
                  const struct qhca_sge *sge, unsigned nsge);
void qt_write_rwqe(QhcaTest *t, uint64_t slot, uint64_t wr_id,
                   const struct qhca_sge *sge, unsigned nsge);
void qt_db_write(QhcaTest *t, uint32_t page, uint32_t reg, uint32_t val);
void qt_db(QhcaTest *t, uint32_t uar, uint32_t reg, uint32_t num,
           uint16_t idx);
struct qhca_sge qt_sge(uint64_t addr, uint32_t len, uint32_t lkey);

/* Shared receive queues */
struct qhca_cmd_create_srq qt_srq_prepare(QhcaTest *t, QhcaSrq *srq,
                                          uint32_t pdn, uint32_t uar,
                                          uint8_t depth_log2,
                                          uint8_t stride_log2);
uint8_t qt_srq_create_cmd(QhcaTest *t, QhcaSrq *srq,
                          const struct qhca_cmd_create_srq *c);
QhcaSrq *qt_srq_new(QhcaTest *t, uint32_t pdn, uint32_t uar,
                    uint8_t depth_log2, uint8_t stride_log2);
uint64_t qt_srq_slot(const QhcaSrq *srq, uint16_t idx);
void qt_srq_write(QhcaTest *t, QhcaSrq *srq, uint64_t wr_id,
                  const struct qhca_sge *sge, unsigned nsge);
void qt_srq_ring(QhcaTest *t, const QhcaSrq *srq);
void qt_srq_post(QhcaTest *t, QhcaSrq *srq, uint64_t wr_id,
                 const struct qhca_sge *sge, unsigned nsge);
struct qhca_srq_attr qt_query_srq(QhcaTest *t, uint32_t srqn);

/* Queue pairs */
QhcaQpSpec qt_rc_spec(uint32_t pdn, uint32_t uar, const QhcaCq *scq,
                      const QhcaCq *rcq);
struct qhca_cmd_create_qp qt_qp_prepare(QhcaTest *t, QhcaQp *qp,
                                        const QhcaQpSpec *s);
uint8_t qt_qp_create_cmd(QhcaTest *t, QhcaQp *qp,
                         const struct qhca_cmd_create_qp *c);
uint8_t qt_qp_try_create(QhcaTest *t, QhcaQp *qp, const QhcaQpSpec *s);
QhcaQp *qt_qp_new(QhcaTest *t, const QhcaQpSpec *s);
uint8_t qt_modify_qp(QhcaTest *t, struct qhca_cmd_modify_qp *m);
uint8_t qt_qp_modify(QhcaTest *t, const QhcaQp *qp, uint8_t state,
                     uint32_t mask, const struct qhca_cmd_modify_qp *attrs);
struct qhca_qp_attr qt_query_qp(QhcaTest *t, uint32_t qpn);
uint8_t qt_qp_state(QhcaTest *t, const QhcaQp *qp);
void qt_qp_wait_state(QhcaTest *t, const QhcaQp *qp, uint8_t state);
uint8_t qt_try_connect(QhcaTest *t, uint32_t qpn, uint32_t dest_qpn,
                       const QhcaPath *p);
void qt_connect(QhcaTest *t, uint32_t qpn, uint32_t dest_qpn,
                const QhcaPath *p);
void qt_qp_connect(QhcaTest *t, const QhcaQp *qp, const QhcaQp *dest,
                   const QhcaPath *p, uint32_t psn_base);
void qt_qp_ud_rts(QhcaTest *t, const QhcaQp *qp, uint32_t qkey,
                  uint32_t sq_psn);
uint64_t qt_qp_sq_slot(const QhcaQp *qp, uint16_t idx);
uint64_t qt_qp_rq_slot(const QhcaQp *qp, uint16_t idx);
uint16_t qt_qp_post_send(QhcaTest *t, QhcaQp *qp, const void *w,
                         const struct qhca_sge *sge, unsigned nsge);
void qt_qp_ring_sq(QhcaTest *t, const QhcaQp *qp);
uint16_t qt_qp_post_recv(QhcaTest *t, QhcaQp *qp, uint64_t wr_id,
                         const struct qhca_sge *sge, unsigned nsge);

/*
 * 1.8: the on-demand paging commands, each returning its status: ODP_MAP
 * of the @npages entries at @pbl (the caller writes them), ODP_UNMAP,
 * QUERY_PAGE_FAULT into @info, RESUME_PAGE_FAULT.
 */
uint8_t qt_odp_map(QhcaTest *t, uint32_t index, uint64_t first,
                   uint64_t pbl, uint32_t npages);
uint8_t qt_odp_unmap(QhcaTest *t, uint32_t index, uint64_t first,
                     uint64_t npages);
uint8_t qt_query_page_fault(QhcaTest *t, uint32_t qpn,
                            struct qhca_page_fault_info *info);
uint8_t qt_resume_page_fault(QhcaTest *t, uint32_t qpn, uint8_t kind,
                             uint8_t status);

/*
 * 1.5: the Ethernet port.  qt_start_eth() puts the device on a socket
 * netdev whose other end the test holds: the rest of the segment, as
 * tests/qtest/e1000e-test.c does.  The port's MAC is qt_eth_mac; the
 * test plays a peer at qt_peer_mac with qt_peer_ip4 and qt_peer_ip6, and
 * gives the port qt_port_ip4 and qt_port_ip6 (qt_eth_gids()).
 */
#define QT_ETH_MAC_STR      "52:54:00:c0:ff:ee"
extern const uint8_t qt_eth_mac[6];
extern const uint8_t qt_peer_mac[6];
extern const uint8_t qt_port_ip4[16], qt_port_ip6[16];
extern const uint8_t qt_peer_ip4[16], qt_peer_ip6[16];
/* The GID table entries qt_eth_gids() writes: IPv4 at 0, IPv6 at 1. */
#define QT_GID_IP4          0
#define QT_GID_IP6          1

bool qt_has_eth(void);
QhcaTest *qt_start_eth(const char *props);
void qt_wire_send(QhcaTest *t, const void *frame, size_t len);
bool qt_wire_flush(QhcaTest *t, int64_t timeout_us);
ssize_t qt_wire_recv(QhcaTest *t, void *buf, size_t size, int64_t timeout_us);

uint8_t qt_set_gid(QhcaTest *t, uint16_t index, uint8_t type,
                   const uint8_t gid[16]);
void qt_eth_gids(QhcaTest *t);
uint8_t qt_set_qp_av(QhcaTest *t, uint32_t qpn, uint8_t sgid_index,
                     const uint8_t dgid[16], const uint8_t dmac[6]);

/*
 * RoCEv2 frames as the test builds and reads them (IBTA annex A17, the
 * layout Linux rxe uses): Ethernet, an optional 802.1Q tag, IPv4 (no
 * options) or IPv6, UDP to QT_ROCE_PORT, the IB transport headers and
 * payload, the ICRC.  The test computes the ICRC itself (qt_icrc()).
 */
#define QT_ROCE_PORT        4791
#define QT_BTH_LEN          12
#define QT_ICRC_LEN         4
/* Ethernet + IPv6 + UDP: the most qt_roce_frame() puts before the BTH. */
#define QT_ROCE_HDR_MAX     (14 + 4 + 40 + 8)

/*
 * The IB transport as RoCEv2 carries it (IBTA vol. 1, 9.2 - 9.3): BTH
 * opcodes are the transport in [7:5] and the operation in [4:0]; the
 * extension headers' sizes; the AETH syndrome's kinds.
 */
#define QT_IB_RC            0x00
#define QT_IB_UC            0x20
#define QT_IB_UD            0x60
#define QT_IB_XRC           0xa0
enum qt_ib_op {
    QT_IB_SEND_FIRST, QT_IB_SEND_MIDDLE, QT_IB_SEND_LAST,
    QT_IB_SEND_LAST_IMM, QT_IB_SEND_ONLY, QT_IB_SEND_ONLY_IMM,
    QT_IB_WRITE_FIRST, QT_IB_WRITE_MIDDLE, QT_IB_WRITE_LAST,
    QT_IB_WRITE_LAST_IMM, QT_IB_WRITE_ONLY, QT_IB_WRITE_ONLY_IMM,
    QT_IB_READ_REQUEST, QT_IB_READ_RESP_FIRST, QT_IB_READ_RESP_MIDDLE,
    QT_IB_READ_RESP_LAST, QT_IB_READ_RESP_ONLY, QT_IB_ACK,
    QT_IB_ATOMIC_ACK, QT_IB_CMP_SWAP, QT_IB_FETCH_ADD,
    QT_IB_SEND_LAST_INV = 0x16, QT_IB_SEND_ONLY_INV = 0x17,
};
#define QT_XRCETH_LEN       4
#define QT_DETH_LEN         8
#define QT_RETH_LEN         16
#define QT_ATOMICETH_LEN    28
#define QT_AETH_LEN         4
#define QT_ATOMICACK_LEN    8
#define QT_IMM_LEN          4
#define QT_AETH_ACK         0x00
#define QT_AETH_RNR_NAK     0x20
#define QT_AETH_NAK         0x60

typedef struct QtRoceAddr {
    uint8_t smac[6];
    uint8_t dmac[6];
    uint8_t sgid[16];           /* IPv4-mapped (::ffff:a.b.c.d): IPv4 */
    uint8_t dgid[16];
    uint16_t sport;             /* UDP source port */
    uint16_t vlan;              /* 0: untagged; else the TCI */
    uint8_t tclass;
    uint8_t hop_limit;
    uint32_t flow_label;
} QtRoceAddr;

/* What qt_roce_parse() found in a frame: offsets into it, and fields. */
typedef struct QtRoce {
    bool v6;
    const uint8_t *smac, *dmac;
    uint8_t sgid[16], dgid[16];
    uint16_t sport, dport;
    size_t ib;                  /* offset of the BTH */
    size_t ib_len;              /* BTH .. payload and pad, without ICRC */
    bool icrc_ok;
    uint8_t opcode;
    bool se, ackreq;
    uint8_t pad;
    uint16_t pkey;
    uint32_t qpn, psn;
} QtRoce;

QtRoceAddr qt_roce_addr(bool v6);
size_t qt_bth(uint8_t *p, uint8_t opcode, bool se, bool ackreq, uint8_t pad,
              uint32_t qpn, uint32_t psn);
size_t qt_roce_frame(const QtRoceAddr *a, const void *ib, size_t ib_len,
                     uint8_t *frame);
uint32_t qt_icrc(const uint8_t *frame, size_t len);
void qt_roce_seal(uint8_t *frame, size_t len);
bool qt_ip4_csum(uint8_t *frame, size_t len);
bool qt_roce_parse(const uint8_t *frame, size_t len, QtRoce *r);

#endif /* QHCA_QTEST_H */
