/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qtest for the queue pairs of qhca's Ethernet port (interface 1.5):
 * QUERY_PORT of an Ethernet and of an IB port, SET_GID and SET_QP_AV
 * with their refusals, the GSI QP (QP 1, one per device), RTR of a
 * connected QP without its address vector, RAW_ETH QPs sending frames to
 * the wire and receiving the NIC's frames, UD and GSI sends and receives
 * as RoCEv2 (the GRH slot, network header type and source MAC of the
 * CQE), multicast groups by IP address, and what an IB port refuses
 * (GSI and RAW_ETH QPs, a UD WQE's dmac).
 *
 * The port is on a socket netdev whose other end the test holds
 * (qt_start_eth()): frames the device sends are read there, frames the
 * test sends arrive as from the segment.  Buffers are guest memory under
 * one PHYS MR.
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qhca-qtest.h"

#define ETH_GSI_QKEY        0x80010000u
#define ETH_UD_QKEY         0x11111111u
#define ETH_GRH             40
#define ETH_WAIT_US         (2 * G_USEC_PER_SEC)
/* Nothing should come: how long the test looks before believing it. */
#define ETH_QUIET_US        (200 * 1000)

typedef struct Eth {
    QhcaTest *t;
    uint32_t uar;
    uint32_t pdn;
    QhcaEq eq;
    uint32_t lkey;              /* PHYS MR over all RAM */
    QhcaCq cq;
    uint64_t buf;               /* 64 KiB of scratch */
} Eth;

static Eth *eth_start_on(QhcaTest *t)
{
    Eth *e = g_new0(Eth, 1);

    e->t = t;
    qt_enable(t, 5);
    qt_alloc_uar_pd(t, &e->uar, &e->pdn);
    qt_eq_init(t, &e->eq, 6, 2, 0);
    e->lkey = qt_reg_phys_mr(t, e->pdn, QHCA_ACCESS_ALL, 0x5a, 0);
    qt_cq_init(t, &e->cq, 6, e->eq.eqn, e->uar);
    e->buf = guest_alloc(&t->alloc, 64 * 1024);
    qtest_memset(t->qts, e->buf, 0, 64 * 1024);
    return e;
}

/* The device on the test's wire, with the port's two GIDs. */
static Eth *eth_start(void)
{
    Eth *e = eth_start_on(qt_start_eth(NULL));

    qt_eth_gids(e->t);
    return e;
}

/* The device without a netdev: an IB port. */
static Eth *eth_start_ib(void)
{
    return eth_start_on(qhca_start(NULL));
}

static void eth_stop(Eth *e)
{
    qt_assert_alive(e->t);
    qhca_stop(e->t);
    g_free(e);
}

static uint8_t eth_try_qp(Eth *e, uint8_t type, const QhcaSrq *srq,
                          QhcaQp *qp)
{
    const QhcaQpSpec spec = {
        .type = type,
        .pdn = e->pdn,
        .uar = e->uar,
        .send_cqn = e->cq.cqn,
        .recv_cqn = e->cq.cqn,
        .sq_log2 = 4,
        .sq_stride_log2 = 7,    /* 128 bytes: 4 SGEs, or 64 inline */
        .rq_log2 = 4,
        .rq_stride_log2 = 6,    /* 64 bytes: 3 SGEs */
        .srq = srq,
    };

    return qt_qp_try_create(e->t, qp, &spec);
}

static void eth_qp(Eth *e, uint8_t type, QhcaQp *qp)
{
    g_assert_cmpuint(eth_try_qp(e, type, NULL, qp), ==, QHCA_AQ_SUCCESS);
}

/* A RAW_ETH QP moves to RTS with nothing but the state. */
static void eth_raw_rts(Eth *e, const QhcaQp *qp)
{
    g_assert_cmpuint(qt_qp_modify(e->t, qp, QHCA_QPS_INIT, 0, NULL), ==,
                     QHCA_AQ_SUCCESS);
    g_assert_cmpuint(qt_qp_modify(e->t, qp, QHCA_QPS_RTR, 0, NULL), ==,
                     QHCA_AQ_SUCCESS);
    g_assert_cmpuint(qt_qp_modify(e->t, qp, QHCA_QPS_RTS, 0, NULL), ==,
                     QHCA_AQ_SUCCESS);
}

static struct qhca_sge eth_sge(Eth *e, uint64_t addr, uint32_t len)
{
    return qt_sge(addr, len, e->lkey);
}

static struct qhca_cqe eth_expect(Eth *e, const QhcaQp *qp, uint64_t wr_id,
                                  uint8_t opcode, uint8_t status)
{
    struct qhca_cqe cqe = qt_cq_expect(e->t, &e->cq, qp->qpn, opcode,
                                       status);

    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, wr_id);
    return cqe;
}

static void eth_post_send(Eth *e, QhcaQp *qp, const void *wqe,
                          const struct qhca_sge *sge, unsigned nsge)
{
    qt_qp_post_send(e->t, qp, wqe, sge, nsge);
    qt_qp_ring_sq(e->t, qp);
}

/* The next frame the device sent, or -1 if none came in time. */
static ssize_t eth_wire_recv(Eth *e, uint8_t *frame, size_t size,
                             int64_t timeout_us)
{
    return qt_wire_recv(e->t, frame, size, timeout_us);
}

static void eth_assert_wire_quiet(Eth *e)
{
    uint8_t frame[64];

    g_assert_cmpint(eth_wire_recv(e, frame, sizeof(frame), ETH_QUIET_US), ==,
                    -1);
}

/* QUERY_QP's status alone. */
static uint8_t eth_query_qp(Eth *e, uint32_t qpn)
{
    struct qhca_cmd_handle h = { .handle = cpu_to_le32(qpn) };
    struct qhca_qp_attr a;

    return qt_query(e->t, QHCA_CMD_QUERY_QP, &h, sizeof(h), &a, sizeof(a));
}

/* @n bytes that differ from their neighbours and from another @seed's. */
static void eth_pattern(uint8_t *p, size_t n, uint8_t seed)
{
    size_t i;

    for (i = 0; i < n; i++) {
        p[i] = seed + i;
    }
}

/* A frame from the test's peer to @dmac: a made-up ethertype, numbered. */
static size_t eth_frame(uint8_t *f, const uint8_t dmac[6], size_t len,
                        uint8_t seed)
{
    memcpy(f, dmac, 6);
    memcpy(f + 6, qt_peer_mac, 6);
    f[12] = 0x88;               /* 0x88b5: IEEE local experimental */
    f[13] = 0xb5;
    eth_pattern(f + 14, len - 14, seed);
    return len;
}

/* The GSI QP in RTS with the Q_Key ib_mad gives it. */
static void eth_gsi(Eth *e, QhcaQp *gsi)
{
    eth_qp(e, QHCA_QPT_GSI, gsi);
    qt_qp_ud_rts(e->t, gsi, ETH_GSI_QKEY, 0);
}

static bool eth_is_zero(const uint8_t *p, size_t n)
{
    while (n--) {
        if (*p++) {
            return false;
        }
    }
    return true;
}

/* ------------------------------------------------------------------ */

static struct qhca_port_attr eth_port(QhcaTest *t)
{
    struct qhca_cmd_query_port q = { .port_num = 1 };
    struct qhca_port_attr p;

    g_assert_cmpuint(qt_query(t, QHCA_CMD_QUERY_PORT, &q, sizeof(q), &p,
                              sizeof(p)), ==, QHCA_AQ_SUCCESS);
    return p;
}

static void eth_assert_eth_port(const struct qhca_port_attr *p)
{
    g_assert_cmpuint(p->link_layer, ==, QHCA_LINK_LAYER_ETH);
    g_assert_cmpuint(le16_to_cpu(p->eth_mtu), ==, QHCA_ETH_MAX_MTU);
    g_assert_cmpuint(le16_to_cpu(p->gid_tbl_len), ==, QHCA_ROCE_GID_TBL_LEN);
    g_assert_cmpuint(le16_to_cpu(p->pkey_tbl_len), ==, 1);
    g_assert_cmphex(le16_to_cpu(p->pkey), ==, 0xffff);
    g_assert_cmpuint(le16_to_cpu(p->lid), ==, 0);
    g_assert_cmpuint(le16_to_cpu(p->sm_lid), ==, 0);
    g_assert_cmpuint(p->lmc, ==, 0);
    g_assert_cmpuint(p->state, ==, QHCA_PORT_ACTIVE);
    g_assert_cmpuint(p->max_mtu, ==, 5);
    g_assert_cmpuint(p->active_mtu, ==, 5);
}

static void test_query_port(void)
{
    QhcaTest *t = qt_start_eth(NULL);
    struct qhca_port_attr p;

    qt_enable(t, 2);
    p = eth_port(t);
    eth_assert_eth_port(&p);
    g_assert_cmpmem(p.mac, 6, qt_eth_mac, 6);
    qhca_stop(t);

    /* On a hub that goes nowhere, with the MAC QEMU gives it. */
    t = qhca_start(",netdev=n0 -netdev hubport,id=n0,hubid=0");
    qt_enable(t, 2);
    p = eth_port(t);
    eth_assert_eth_port(&p);
    g_assert_false(p.mac[0] & 1);
    g_assert_false(p.mac[0] == 0 && p.mac[1] == 0 && p.mac[2] == 0 &&
                   p.mac[3] == 0 && p.mac[4] == 0 && p.mac[5] == 0);
    qhca_stop(t);

    /* Without a netdev: the IB port of before 1.5, which says so. */
    t = qhca_start(NULL);
    qt_enable(t, 2);
    p = eth_port(t);
    g_assert_cmpuint(p.link_layer, ==, QHCA_LINK_LAYER_IB);
    g_assert_cmpuint(le16_to_cpu(p.lid), ==, 1);
    g_assert_cmpuint(le16_to_cpu(p.gid_tbl_len), ==, 1);
    g_assert_cmpuint(le16_to_cpu(p.eth_mtu), ==, 0);
    g_assert_true(eth_is_zero(p.mac, 6));
    qhca_stop(t);
}

static void test_set_gid(void)
{
    static const uint8_t v6_mcast[16] = { 0xff, 0x02, [15] = 1 };
    static const uint8_t v4_mcast[16] = {
        [10] = 0xff, [11] = 0xff, [12] = 224, [15] = 1
    };
    static const uint8_t zero[16];
    Eth *e = eth_start();
    struct qhca_cmd_set_gid c = { .index = cpu_to_le16(2) };

    /* Written, rewritten, cleared, written again. */
    g_assert_cmpuint(qt_set_gid(e->t, 2, QHCA_GID_ROCE_V2, qt_peer_ip6), ==,
                     QHCA_AQ_SUCCESS);
    g_assert_cmpuint(qt_set_gid(e->t, 2, QHCA_GID_ROCE_V2, qt_peer_ip4), ==,
                     QHCA_AQ_SUCCESS);
    g_assert_cmpuint(qt_set_gid(e->t, 2, QHCA_GID_NONE, NULL), ==,
                     QHCA_AQ_SUCCESS);
    g_assert_cmpuint(qt_set_gid(e->t, QHCA_ROCE_GID_TBL_LEN - 1,
                                QHCA_GID_ROCE_V2, qt_peer_ip6), ==,
                     QHCA_AQ_SUCCESS);

    g_assert_cmpuint(qt_set_gid(e->t, QHCA_ROCE_GID_TBL_LEN,
                                QHCA_GID_ROCE_V2, qt_peer_ip6), ==,
                     QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(qt_set_gid(e->t, 0xffff, QHCA_GID_ROCE_V2, qt_peer_ip6),
                     ==, QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(qt_set_gid(e->t, 2, QHCA_GID_ROCE_V2, v6_mcast), ==,
                     QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(qt_set_gid(e->t, 2, QHCA_GID_ROCE_V2, v4_mcast), ==,
                     QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(qt_set_gid(e->t, 2, QHCA_GID_ROCE_V2, zero), ==,
                     QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(qt_set_gid(e->t, 2, QHCA_GID_NONE, qt_peer_ip6), ==,
                     QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(qt_set_gid(e->t, 2, 1, qt_peer_ip6), ==,
                     QHCA_AQ_BAD_PARAM);
    c.type = QHCA_GID_ROCE_V2;
    memcpy(c.gid, qt_peer_ip6, 16);
    c.rsvd0[4] = 1;
    g_assert_cmpuint(qt_cmd(e->t, QHCA_CMD_SET_GID, &c, sizeof(c), NULL), ==,
                     QHCA_AQ_BAD_PARAM);
    eth_stop(e);

    e = eth_start_ib();
    g_assert_cmpuint(qt_set_gid(e->t, 0, QHCA_GID_ROCE_V2, qt_port_ip6), ==,
                     QHCA_AQ_BAD_STATE);
    eth_stop(e);
}

static void test_set_qp_av(void)
{
    static const uint8_t mcast_mac[6] = { 0x01, 0x00, 0x5e, 0, 0, 1 };
    static const uint8_t zero_mac[6];
    static const uint8_t v6_mcast[16] = { 0xff, 0x02, [15] = 1 };
    Eth *e = eth_start();
    QhcaQp rc, ud;

    eth_qp(e, QHCA_QPT_RC, &rc);
    eth_qp(e, QHCA_QPT_UD, &ud);
    g_assert_cmpuint(qt_set_qp_av(e->t, rc.qpn, QT_GID_IP4, qt_peer_ip4,
                                  qt_peer_mac), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(qt_set_qp_av(e->t, rc.qpn, QT_GID_IP6, qt_peer_ip6,
                                  qt_peer_mac), ==, QHCA_AQ_SUCCESS);

    g_assert_cmpuint(qt_set_qp_av(e->t, 999, QT_GID_IP6, qt_peer_ip6,
                                  qt_peer_mac), ==, QHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(qt_set_qp_av(e->t, ud.qpn, QT_GID_IP6, qt_peer_ip6,
                                  qt_peer_mac), ==, QHCA_AQ_BAD_PARAM);
    /* An entry never written, one out of the table. */
    g_assert_cmpuint(qt_set_qp_av(e->t, rc.qpn, 5, qt_peer_ip6,
                                  qt_peer_mac), ==, QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(qt_set_qp_av(e->t, rc.qpn, QHCA_ROCE_GID_TBL_LEN,
                                  qt_peer_ip6, qt_peer_mac), ==,
                     QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(qt_set_qp_av(e->t, rc.qpn, QT_GID_IP4, qt_peer_ip6,
                                  qt_peer_mac), ==, QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(qt_set_qp_av(e->t, rc.qpn, QT_GID_IP6, v6_mcast,
                                  qt_peer_mac), ==, QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(qt_set_qp_av(e->t, rc.qpn, QT_GID_IP6, qt_peer_ip6,
                                  mcast_mac), ==, QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(qt_set_qp_av(e->t, rc.qpn, QT_GID_IP6, qt_peer_ip6,
                                  zero_mac), ==, QHCA_AQ_BAD_PARAM);
    eth_stop(e);

    e = eth_start_ib();
    eth_qp(e, QHCA_QPT_RC, &rc);
    g_assert_cmpuint(qt_set_qp_av(e->t, rc.qpn, 0, qt_peer_ip6, qt_peer_mac),
                     ==, QHCA_AQ_BAD_STATE);
    eth_stop(e);
}

/* A connected QP reaches RTR on Ethernet only with its AV, and dlid 0. */
static void test_rtr_av(void)
{
    Eth *e = eth_start();
    QhcaPath path = qt_rc_path;
    QhcaQp a, b;

    eth_qp(e, QHCA_QPT_RC, &a);
    eth_qp(e, QHCA_QPT_UC, &b);

    /* No AV: RTR is refused, RC and UC alike, and INIT stays. */
    path.dlid = 0;
    g_assert_cmpuint(qt_try_connect(e->t, a.qpn, b.qpn, &path), ==,
                     QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(qt_qp_state(e->t, &a), ==, QHCA_QPS_INIT);
    path.rc = false;
    g_assert_cmpuint(qt_try_connect(e->t, b.qpn, a.qpn, &path), ==,
                     QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(qt_qp_state(e->t, &b), ==, QHCA_QPS_INIT);

    /* A reset takes the AV with it. */
    path = qt_rc_path;
    path.dlid = 0;
    g_assert_cmpuint(qt_set_qp_av(e->t, a.qpn, QT_GID_IP4, qt_peer_ip4,
                                  qt_peer_mac), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(qt_qp_modify(e->t, &a, QHCA_QPS_RESET, 0, NULL), ==,
                     QHCA_AQ_SUCCESS);
    g_assert_cmpuint(qt_try_connect(e->t, a.qpn, b.qpn, &path), ==,
                     QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(qt_qp_state(e->t, &a), ==, QHCA_QPS_INIT);

    /* With the AV (given in INIT, as the driver does) but a DLID. */
    g_assert_cmpuint(qt_set_qp_av(e->t, a.qpn, QT_GID_IP4, qt_peer_ip4,
                                  qt_peer_mac), ==, QHCA_AQ_SUCCESS);
    path.dlid = QT_LID;
    g_assert_cmpuint(qt_try_connect(e->t, a.qpn, b.qpn, &path), ==,
                     QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(qt_qp_state(e->t, &a), ==, QHCA_QPS_INIT);

    /* With the AV and no DLID: RTS. */
    path.dlid = 0;
    qt_connect(e->t, a.qpn, b.qpn, &path);
    g_assert_cmpuint(qt_qp_state(e->t, &a), ==, QHCA_QPS_RTS);
    eth_stop(e);
}

/*
 * Two RC QPs of the port connected through its own IPv6 address: the
 * AV of SET_QP_AV is their path, a SEND and an RDMA WRITE go through the
 * receive checks and complete, nothing leaves.
 */
static void test_rc_local(void)
{
    Eth *e = eth_start();
    QhcaPath path = qt_rc_path;
    uint8_t data[3000], got[3000];
    uint64_t src = e->buf, dst = e->buf + 0x4000, win = e->buf + 0x8000;
    struct qhca_sge ss = eth_sge(e, src, sizeof(data));
    struct qhca_sge rs = eth_sge(e, dst, sizeof(data));
    struct qhca_sq_wqe w = {
        .wr_id = cpu_to_le64(0xb0),
        .opcode = QHCA_WR_SEND,
        .flags = QHCA_WQE_F_SIGNALED,
        .num_sge = 1,
    };
    struct qhca_cqe cqe;
    QhcaQp a, b;

    eth_pattern(data, sizeof(data), 0x11);
    qtest_memwrite(e->t->qts, src, data, sizeof(data));
    eth_qp(e, QHCA_QPT_RC, &a);
    eth_qp(e, QHCA_QPT_RC, &b);
    g_assert_cmpuint(qt_set_qp_av(e->t, a.qpn, QT_GID_IP6, qt_port_ip6,
                                  qt_eth_mac), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(qt_set_qp_av(e->t, b.qpn, QT_GID_IP6, qt_port_ip6,
                                  qt_eth_mac), ==, QHCA_AQ_SUCCESS);
    path.dlid = 0;
    qt_qp_connect(e->t, &a, &b, &path, 100);
    qt_qp_connect(e->t, &b, &a, &path, 100);

    /* Three packets of the 1024-byte path MTU. */
    qt_qp_post_recv(e->t, &b, 0xb1, &rs, 1);
    eth_post_send(e, &a, &w, &ss, 1);
    /* The receive completes before the ACK that completes the send. */
    cqe = eth_expect(e, &b, 0xb1, QHCA_WC_RECV, QHCA_WC_SUCCESS);
    eth_expect(e, &a, 0xb0, QHCA_WC_SEND, QHCA_WC_SUCCESS);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, sizeof(data));
    g_assert_cmpuint(le32_to_cpu(cqe.src_qp), ==, a.qpn);
    qtest_memread(e->t->qts, dst, got, sizeof(got));
    g_assert_cmpmem(got, sizeof(got), data, sizeof(data));

    w.wr_id = cpu_to_le64(0xb2);
    w.opcode = QHCA_WR_RDMA_WRITE;
    w.remote_addr = cpu_to_le64(win);
    w.rkey = cpu_to_le32(e->lkey);
    eth_post_send(e, &a, &w, &ss, 1);
    eth_expect(e, &a, 0xb2, QHCA_WC_RDMA_WRITE, QHCA_WC_SUCCESS);
    qtest_memread(e->t->qts, win, got, sizeof(got));
    g_assert_cmpmem(got, sizeof(got), data, sizeof(data));
    qt_cq_assert_empty(e->t, &e->cq);
    eth_assert_wire_quiet(e);
    eth_stop(e);
}

static void test_gsi(void)
{
    Eth *e = eth_start();
    QhcaQp gsi, again, ud, raw;
    struct qhca_qp_attr a;

    eth_qp(e, QHCA_QPT_UD, &ud);
    g_assert_cmpuint(ud.qpn, ==, 2);
    eth_qp(e, QHCA_QPT_GSI, &gsi);
    g_assert_cmpuint(gsi.qpn, ==, QHCA_GSI_QPN);
    a = qt_query_qp(e->t, gsi.qpn);
    g_assert_cmpuint(a.type, ==, QHCA_QPT_GSI);
    g_assert_cmpuint(eth_try_qp(e, QHCA_QPT_GSI, NULL, &again), ==,
                     QHCA_AQ_NO_RESOURCES);
    /* Other QPs never get number 1. */
    eth_qp(e, QHCA_QPT_RAW_ETH, &raw);
    g_assert_cmpuint(raw.qpn, ==, 3);
    g_assert_cmpuint(qt_query_qp(e->t, raw.qpn).type, ==, QHCA_QPT_RAW_ETH);

    /* UD's modify rules: the Q_Key, as ib_mad sets it. */
    qt_qp_ud_rts(e->t, &gsi, ETH_GSI_QKEY, 0);
    g_assert_cmphex(le32_to_cpu(qt_query_qp(e->t, gsi.qpn).qkey), ==,
                    ETH_GSI_QKEY);

    g_assert_cmpuint(qt_handle_cmd(e->t, QHCA_CMD_DESTROY_QP, gsi.qpn), ==,
                     QHCA_AQ_SUCCESS);
    g_assert_cmpuint(eth_query_qp(e, gsi.qpn), ==, QHCA_AQ_BAD_HANDLE);
    eth_qp(e, QHCA_QPT_UD, &again);
    g_assert_cmpuint(again.qpn, ==, 4);
    eth_qp(e, QHCA_QPT_GSI, &gsi);
    g_assert_cmpuint(gsi.qpn, ==, QHCA_GSI_QPN);
    eth_stop(e);

    /* An IB port has neither. */
    e = eth_start_ib();
    g_assert_cmpuint(eth_try_qp(e, QHCA_QPT_GSI, NULL, &gsi), ==,
                     QHCA_AQ_BAD_STATE);
    g_assert_cmpuint(eth_try_qp(e, QHCA_QPT_RAW_ETH, NULL, &raw), ==,
                     QHCA_AQ_BAD_STATE);
    g_assert_cmpuint(eth_query_qp(e, QHCA_GSI_QPN), ==, QHCA_AQ_BAD_HANDLE);
    eth_qp(e, QHCA_QPT_UD, &ud);
    g_assert_cmpuint(ud.qpn, ==, 2);
    eth_stop(e);
}

/* A RAW_ETH send WQE with one SGE. */
static struct qhca_sq_wqe eth_raw_wqe(uint64_t wr_id, uint8_t opcode)
{
    return (struct qhca_sq_wqe) {
        .wr_id = cpu_to_le64(wr_id),
        .opcode = opcode,
        .flags = QHCA_WQE_F_SIGNALED,
        .num_sge = 1,
    };
}

/*
 * @raw from RESET to RTS, then a WQE of @opcode with one SGE of @len
 * bytes that must complete with @status, the QP in ERR, nothing sent.
 */
static void eth_raw_refused(Eth *e, QhcaQp *raw, uint64_t wr_id,
                            uint8_t opcode, uint32_t len, uint8_t wc_opcode,
                            uint8_t status)
{
    struct qhca_sq_wqe w = eth_raw_wqe(wr_id, opcode);
    struct qhca_sge sge = eth_sge(e, e->buf, len);

    g_assert_cmpuint(qt_qp_modify(e->t, raw, QHCA_QPS_RESET, 0, NULL), ==,
                     QHCA_AQ_SUCCESS);
    raw->sq_pi = raw->rq_pi = 0;
    eth_raw_rts(e, raw);
    eth_post_send(e, raw, &w, &sge, 1);
    eth_expect(e, raw, wr_id, wc_opcode, status);
    qt_qp_wait_state(e->t, raw, QHCA_QPS_ERR);
    eth_assert_wire_quiet(e);
}

static void test_raw_send(void)
{
    Eth *e = eth_start();
    uint8_t frame[QHCA_ETH_FRAME_MAX + 64], got[QHCA_ETH_FRAME_MAX + 64];
    struct qhca_cmd_modify_qp m = { .access = QHCA_ACCESS_REMOTE_WRITE };
    struct qhca_sq_wqe w;
    struct qhca_sge sge;
    struct qhca_cqe cqe;
    QhcaQp raw;
    size_t len;
    ssize_t n;

    eth_qp(e, QHCA_QPT_RAW_ETH, &raw);
    /* Nothing but the state. */
    g_assert_cmpuint(qt_qp_modify(e->t, &raw, QHCA_QPS_INIT,
                                  QHCA_QP_ATTR_ACCESS, &m), ==,
                     QHCA_AQ_BAD_PARAM);
    eth_raw_rts(e, &raw);

    /* A frame to the peer, and the largest one, go out as they are. */
    len = eth_frame(frame, qt_peer_mac, 60, 1);
    qtest_memwrite(e->t->qts, e->buf, frame, len);
    w = eth_raw_wqe(0x10, QHCA_WR_SEND);
    sge = eth_sge(e, e->buf, len);
    eth_post_send(e, &raw, &w, &sge, 1);
    cqe = eth_expect(e, &raw, 0x10, QHCA_WC_SEND, QHCA_WC_SUCCESS);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, len);
    n = eth_wire_recv(e, got, sizeof(got), ETH_WAIT_US);
    g_assert_cmpint(n, ==, len);
    g_assert_cmpmem(got, len, frame, len);

    len = eth_frame(frame, qt_peer_mac, QHCA_ETH_FRAME_MAX, 2);
    qtest_memwrite(e->t->qts, e->buf, frame, len);
    w = eth_raw_wqe(0x11, QHCA_WR_SEND);
    sge = eth_sge(e, e->buf, len);
    eth_post_send(e, &raw, &w, &sge, 1);
    eth_expect(e, &raw, 0x11, QHCA_WC_SEND, QHCA_WC_SUCCESS);
    n = eth_wire_recv(e, got, sizeof(got), ETH_WAIT_US);
    g_assert_cmpint(n, ==, len);
    g_assert_cmpmem(got, len, frame, len);

    /* Inline: the frame is in the WQE. */
    len = eth_frame(frame, qt_peer_mac, 60, 3);
    w = eth_raw_wqe(0x12, QHCA_WR_SEND);
    w.flags |= QHCA_WQE_F_INLINE;
    w.num_sge = 0;
    w.inline_len = cpu_to_le32(len);
    qtest_memwrite(e->t->qts, qt_qp_sq_slot(&raw, raw.sq_pi) + sizeof(w),
                   frame, len);
    eth_post_send(e, &raw, &w, NULL, 0);
    eth_expect(e, &raw, 0x12, QHCA_WC_SEND, QHCA_WC_SUCCESS);
    n = eth_wire_recv(e, got, sizeof(got), ETH_WAIT_US);
    g_assert_cmpint(n, ==, len);
    g_assert_cmpmem(got, len, frame, len);

    /*
     * Refused, each from RESET again: a frame shorter than a header or
     * longer than the largest, any other opcode.
     */
    eth_raw_refused(e, &raw, 0x13, QHCA_WR_SEND, QHCA_ETH_FRAME_MIN - 1,
                    QHCA_WC_SEND, QHCA_WC_LOC_LEN_ERR);
    eth_raw_refused(e, &raw, 0x14, QHCA_WR_SEND, QHCA_ETH_FRAME_MAX + 1,
                    QHCA_WC_SEND, QHCA_WC_LOC_LEN_ERR);
    eth_raw_refused(e, &raw, 0x15, QHCA_WR_SEND_WITH_IMM, 60, QHCA_WC_SEND,
                    QHCA_WC_LOC_QP_OP_ERR);
    eth_raw_refused(e, &raw, 0x16, QHCA_WR_RDMA_WRITE, 60,
                    QHCA_WC_RDMA_WRITE, QHCA_WC_LOC_QP_OP_ERR);
    eth_stop(e);
}

static void test_raw_recv(void)
{
    Eth *e = eth_start();
    static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
    uint8_t frame[256], got[256];
    uint64_t rx = e->buf + 0x1000;
    struct qhca_sge sge[2];
    struct qhca_cqe cqe;
    uint64_t nobuf;
    QhcaQp low, high;
    size_t len;

    eth_qp(e, QHCA_QPT_RAW_ETH, &low);
    eth_qp(e, QHCA_QPT_RAW_ETH, &high);
    g_assert_cmpuint(low.qpn, <, high.qpn);
    eth_raw_rts(e, &high);

    /* No receive WQE: dropped and counted. */
    nobuf = qt_counter(e->t, QHCA_CNT_ETH_RX_NO_BUF);
    len = eth_frame(frame, qt_eth_mac, 60, 4);
    qt_wire_send(e->t, frame, len);
    qt_wait_counter(e->t, QHCA_CNT_ETH_RX_NO_BUF, nobuf + 1);
    qt_cq_assert_empty(e->t, &e->cq);

    /* To the port's MAC, then broadcast: scattered over two SGEs. */
    sge[0] = eth_sge(e, rx, 20);
    sge[1] = eth_sge(e, rx + 0x100, 100);
    qt_qp_post_recv(e->t, &high, 0x20, sge, 2);
    qt_wire_send(e->t, frame, len);
    cqe = eth_expect(e, &high, 0x20, QHCA_WC_RECV, QHCA_WC_SUCCESS);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, len);
    qtest_memread(e->t->qts, rx, got, 20);
    qtest_memread(e->t->qts, rx + 0x100, got + 20, len - 20);
    g_assert_cmpmem(got, len, frame, len);

    len = eth_frame(frame, bcast, 42, 5);
    qt_qp_post_recv(e->t, &high, 0x21, sge, 2);
    qt_wire_send(e->t, frame, len);
    cqe = eth_expect(e, &high, 0x21, QHCA_WC_RECV, QHCA_WC_SUCCESS);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, len);

    /*
     * The lowest-numbered RAW_ETH QP in RTR or RTS receives; a WQE too
     * small drops the frame (counted) and stays for the next one.
     */
    eth_raw_rts(e, &low);
    qt_qp_post_recv(e->t, &high, 0x22, sge, 2);
    sge[0] = eth_sge(e, rx, 64);
    qt_qp_post_recv(e->t, &low, 0x23, sge, 1);
    nobuf = qt_counter(e->t, QHCA_CNT_ETH_RX_NO_BUF);
    len = eth_frame(frame, qt_eth_mac, 100, 6);
    qt_wire_send(e->t, frame, len);
    qt_wait_counter(e->t, QHCA_CNT_ETH_RX_NO_BUF, nobuf + 1);
    qt_cq_assert_empty(e->t, &e->cq);
    len = eth_frame(frame, qt_eth_mac, 64, 7);
    qt_wire_send(e->t, frame, len);
    cqe = eth_expect(e, &low, 0x23, QHCA_WC_RECV, QHCA_WC_SUCCESS);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, len);
    qtest_memread(e->t->qts, rx, got, len);
    g_assert_cmpmem(got, len, frame, len);
    qt_cq_assert_empty(e->t, &e->cq);
    eth_stop(e);
}

static void test_raw_recv_srq(void)
{
    Eth *e = eth_start();
    QhcaSrq *srq = qt_srq_new(e->t, e->pdn, e->uar, 4, 6);
    uint8_t frame[128], got[128];
    struct qhca_sge sge;
    struct qhca_cqe cqe;
    QhcaQp raw;
    size_t len;

    g_assert_cmpuint(eth_try_qp(e, QHCA_QPT_RAW_ETH, srq, &raw), ==,
                     QHCA_AQ_SUCCESS);
    eth_raw_rts(e, &raw);
    sge = eth_sge(e, e->buf, 128);
    qt_srq_post(e->t, srq, 0x30, &sge, 1);
    len = eth_frame(frame, qt_eth_mac, 90, 8);
    qt_wire_send(e->t, frame, len);
    cqe = eth_expect(e, &raw, 0x30, QHCA_WC_RECV, QHCA_WC_SUCCESS);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, len);
    g_assert_cmpuint(le16_to_cpu(cqe.srqn), ==, srq->srqn);
    qtest_memread(e->t->qts, e->buf, got, len);
    g_assert_cmpmem(got, len, frame, len);
    g_free(srq);
    eth_stop(e);
}

/* A UD WQE from GID @sgid_index to @dgid at @dmac, QP @dest_qpn. */
static struct qhca_sq_wqe_ud eth_ud_wqe(uint64_t wr_id, uint32_t dest_qpn,
                                        uint8_t sgid_index,
                                        const uint8_t dgid[16],
                                        const uint8_t dmac[6])
{
    struct qhca_sq_wqe_ud w = {
        .wr_id = cpu_to_le64(wr_id),
        .opcode = QHCA_WR_SEND,
        .flags = QHCA_WQE_F_SIGNALED,
        .num_sge = 1,
        .dest_qpn = cpu_to_le32(dest_qpn),
        .qkey = cpu_to_le32(ETH_GSI_QKEY),
        .av_flags = QHCA_AV_F_GRH,
        .hop_limit = 64,
        .sgid_index = sgid_index,
    };

    memcpy(w.dgid, dgid, 16);
    memcpy(w.dmac, dmac, 6);
    return w;
}

/* A UD send that must fail its checks: LOC_QP_OP_ERR, nothing sent. */
static void eth_ud_refused(Eth *e, QhcaQp *qp,
                           const struct qhca_sq_wqe_ud *w)
{
    struct qhca_sge sge = eth_sge(e, e->buf, 16);

    g_assert_cmpuint(qt_qp_modify(e->t, qp, QHCA_QPS_RESET, 0, NULL), ==,
                     QHCA_AQ_SUCCESS);
    qp->sq_pi = qp->rq_pi = 0;
    qt_qp_ud_rts(e->t, qp, ETH_UD_QKEY, 0);
    eth_post_send(e, qp, w, &sge, 1);
    eth_expect(e, qp, le64_to_cpu(w->wr_id), QHCA_WC_SEND,
               QHCA_WC_LOC_QP_OP_ERR);
    qt_qp_wait_state(e->t, qp, QHCA_QPS_ERR);
}

static void test_ud_send(void)
{
    static const uint8_t mgid4[16] = {
        [10] = 0xff, [11] = 0xff, [12] = 239, [13] = 0x81, [14] = 2, [15] = 3
    };
    static const uint8_t mmac4[6] = { 0x01, 0x00, 0x5e, 0x01, 2, 3 };
    static const uint8_t mgid6[16] = { 0xff, 0x0e, [12] = 1, 2, 3, 4 };
    static const uint8_t mmac6[6] = { 0x33, 0x33, 1, 2, 3, 4 };
    static const uint8_t zero_mac[6];
    Eth *e = eth_start();
    uint8_t frame[512], payload[48];
    struct qhca_sq_wqe_ud w;
    struct qhca_sge sge;
    QhcaQp gsi, ud;
    QtRoce r;
    ssize_t n;
    int v6;

    eth_pattern(payload, sizeof(payload), 0xa0);
    qtest_memwrite(e->t->qts, e->buf, payload, sizeof(payload));
    sge = eth_sge(e, e->buf, sizeof(payload));
    eth_gsi(e, &gsi);

    /* IPv4 and IPv6 from QP 1 to the peer's QP 1, as the CM sends. */
    for (v6 = 0; v6 < 2; v6++) {
        w = eth_ud_wqe(0x40 + v6, QHCA_GSI_QPN, v6 ? QT_GID_IP6 : QT_GID_IP4,
                       v6 ? qt_peer_ip6 : qt_peer_ip4, qt_peer_mac);
        eth_post_send(e, &gsi, &w, &sge, 1);
        eth_expect(e, &gsi, 0x40 + v6, QHCA_WC_SEND, QHCA_WC_SUCCESS);
        n = eth_wire_recv(e, frame, sizeof(frame), ETH_WAIT_US);
        g_assert_cmpint(n, >, 0);
        g_assert_true(qt_roce_parse(frame, n, &r));
        g_assert_true(r.icrc_ok);
        g_assert_cmpint(r.v6, ==, v6);
        g_assert_cmpmem(r.dmac, 6, qt_peer_mac, 6);
        g_assert_cmpmem(r.smac, 6, qt_eth_mac, 6);
        g_assert_cmpmem(r.sgid, 16, v6 ? qt_port_ip6 : qt_port_ip4, 16);
        g_assert_cmpmem(r.dgid, 16, v6 ? qt_peer_ip6 : qt_peer_ip4, 16);
        g_assert_cmphex(r.opcode, ==, QT_IB_UD | QT_IB_SEND_ONLY);
        g_assert_cmpuint(r.qpn, ==, QHCA_GSI_QPN);
        /* DETH: the Q_Key and QP 1; then the payload. */
        g_assert_cmphex((uint32_t)ldl_be_p(frame + r.ib + QT_BTH_LEN), ==,
                        ETH_GSI_QKEY);
        g_assert_cmphex(ldl_be_p(frame + r.ib + QT_BTH_LEN + 4) & 0xffffff,
                        ==, QHCA_GSI_QPN);
        g_assert_cmpmem(frame + r.ib + QT_BTH_LEN + QT_DETH_LEN,
                        sizeof(payload), payload, sizeof(payload));
    }

    /* To a multicast group: the group's MAC. */
    eth_qp(e, QHCA_QPT_UD, &ud);
    qt_qp_ud_rts(e->t, &ud, ETH_UD_QKEY, 0);
    w = eth_ud_wqe(0x42, QHCA_MCAST_QPN, QT_GID_IP4, mgid4, mmac4);
    eth_post_send(e, &ud, &w, &sge, 1);
    eth_expect(e, &ud, 0x42, QHCA_WC_SEND, QHCA_WC_SUCCESS);
    n = eth_wire_recv(e, frame, sizeof(frame), ETH_WAIT_US);
    g_assert_true(n > 0 && qt_roce_parse(frame, n, &r));
    g_assert_cmpmem(r.dmac, 6, mmac4, 6);
    w = eth_ud_wqe(0x43, QHCA_MCAST_QPN, QT_GID_IP6, mgid6, mmac6);
    eth_post_send(e, &ud, &w, &sge, 1);
    eth_expect(e, &ud, 0x43, QHCA_WC_SEND, QHCA_WC_SUCCESS);
    n = eth_wire_recv(e, frame, sizeof(frame), ETH_WAIT_US);
    g_assert_true(n > 0 && qt_roce_parse(frame, n, &r));
    g_assert_cmpmem(r.dmac, 6, mmac6, 6);

    /* What an Ethernet port refuses in a UD WQE. */
    w = eth_ud_wqe(0x50, 2, QT_GID_IP4, qt_peer_ip4, qt_peer_mac);
    w.av_flags = 0;
    eth_ud_refused(e, &ud, &w);
    w = eth_ud_wqe(0x51, 2, 7, qt_peer_ip4, qt_peer_mac);
    eth_ud_refused(e, &ud, &w);
    w = eth_ud_wqe(0x52, 2, QT_GID_IP4, qt_peer_ip6, qt_peer_mac);
    eth_ud_refused(e, &ud, &w);
    w = eth_ud_wqe(0x53, 2, QT_GID_IP4, qt_peer_ip4, zero_mac);
    eth_ud_refused(e, &ud, &w);
    w = eth_ud_wqe(0x54, 2, QT_GID_IP4, qt_peer_ip4, mmac4);
    eth_ud_refused(e, &ud, &w);
    w = eth_ud_wqe(0x55, QHCA_MCAST_QPN, QT_GID_IP4, mgid4, qt_peer_mac);
    eth_ud_refused(e, &ud, &w);
    w = eth_ud_wqe(0x56, QHCA_MCAST_QPN, QT_GID_IP6, mgid6, mmac4);
    eth_ud_refused(e, &ud, &w);
    eth_assert_wire_quiet(e);
    eth_stop(e);
}

/* The IB port keeps dmac reserved. */
static void test_ud_dmac_ib(void)
{
    Eth *e = eth_start_ib();
    struct qhca_sq_wqe_ud w = {
        .wr_id = cpu_to_le64(0x60),
        .opcode = QHCA_WR_SEND,
        .flags = QHCA_WQE_F_SIGNALED,
        .num_sge = 1,
        .qkey = cpu_to_le32(ETH_UD_QKEY),
        .dlid = cpu_to_le16(QT_LID),
        .dmac = { 0x52, 0x54, 0, 0, 0, 2 },
    };
    QhcaQp ud;

    eth_qp(e, QHCA_QPT_UD, &ud);
    w.dest_qpn = cpu_to_le32(ud.qpn);
    eth_ud_refused(e, &ud, &w);

    /* The same WQE without the dmac is sent. */
    w.wr_id = cpu_to_le64(0x61);
    memset(w.dmac, 0, 6);
    g_assert_cmpuint(qt_qp_modify(e->t, &ud, QHCA_QPS_RESET, 0, NULL), ==,
                     QHCA_AQ_SUCCESS);
    ud.sq_pi = ud.rq_pi = 0;
    qt_qp_ud_rts(e->t, &ud, ETH_UD_QKEY, 0);
    {
        struct qhca_sge sge = eth_sge(e, e->buf, 16);

        eth_post_send(e, &ud, &w, &sge, 1);
    }
    eth_expect(e, &ud, 0x61, QHCA_WC_SEND, QHCA_WC_SUCCESS);
    eth_stop(e);
}

/* A UD SEND_ONLY frame from the peer's QP @src to QP @dest. */
static size_t eth_ud_frame(const QtRoceAddr *a, uint32_t src, uint32_t dest,
                           uint32_t qkey, const void *payload, size_t plen,
                           uint8_t *frame)
{
    uint8_t ib[QT_BTH_LEN + QT_DETH_LEN + 256];
    uint8_t pad = -plen & 3;
    size_t n;

    g_assert_cmpuint(plen + pad, <=, 256);
    n = qt_bth(ib, QT_IB_UD | QT_IB_SEND_ONLY, false, false, pad, dest, 0);
    stl_be_p(ib + n, qkey);
    stl_be_p(ib + n + 4, src);
    n += QT_DETH_LEN;
    memcpy(ib + n, payload, plen);
    memset(ib + n + plen, 0, pad);
    return qt_roce_frame(a, ib, n + plen + pad, frame);
}

static void test_ud_recv(void)
{
    Eth *e = eth_start();
    uint8_t frame[512], payload[64], got[ETH_GRH + 64];
    uint64_t rx = e->buf + 0x2000;
    struct qhca_sge sge = eth_sge(e, rx, ETH_GRH + sizeof(payload));
    struct qhca_cqe cqe;
    uint64_t qkv;
    QtRoceAddr a4 = qt_roce_addr(false);
    QhcaQp gsi;
    size_t len;
    int v6;

    eth_pattern(payload, sizeof(payload), 0x30);
    eth_gsi(e, &gsi);

    for (v6 = 0; v6 < 2; v6++) {
        qt_qp_post_recv(e->t, &gsi, 0x70 + v6, &sge, 1);
        QtRoceAddr a = qt_roce_addr(v6);

        len = eth_ud_frame(&a, QHCA_GSI_QPN, QHCA_GSI_QPN, ETH_GSI_QKEY,
                           payload, sizeof(payload), frame);
        qt_wire_send(e->t, frame, len);
        cqe = eth_expect(e, &gsi, 0x70 + v6, QHCA_WC_RECV, QHCA_WC_SUCCESS);
        g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==,
                         ETH_GRH + sizeof(payload));
        g_assert_cmpuint(le32_to_cpu(cqe.src_qp), ==, QHCA_GSI_QPN);
        g_assert_true(cqe.flags & QHCA_CQE_F_GRH);
        g_assert_cmpuint(cqe.network_hdr_type, ==,
                         v6 ? QHCA_NET_IPV6 : QHCA_NET_IPV4);
        g_assert_cmpmem(cqe.smac, 6, qt_peer_mac, 6);
        qtest_memread(e->t->qts, rx, got, sizeof(got));
        /* The GRH slot: the IPv6 header, or 20 zeroes and the IPv4 one. */
        if (v6) {
            g_assert_cmphex(got[0] >> 4, ==, 6);
            g_assert_cmpmem(got + 8, 16, qt_peer_ip6, 16);
            g_assert_cmpmem(got + 24, 16, qt_port_ip6, 16);
        } else {
            g_assert_true(eth_is_zero(got, 20));
            g_assert_cmphex(got[20], ==, 0x45);
            g_assert_cmpmem(got + 32, 4, qt_peer_ip4 + 12, 4);
            g_assert_cmpmem(got + 36, 4, qt_port_ip4 + 12, 4);
        }
        g_assert_cmpmem(got + ETH_GRH, sizeof(payload), payload,
                        sizeof(payload));
    }

    /* Another Q_Key: dropped and counted; the WQE stays for the next. */
    qkv = qt_counter(e->t, QHCA_CNT_QKEY_VIOLATIONS);
    qt_qp_post_recv(e->t, &gsi, 0x72, &sge, 1);
    len = eth_ud_frame(&a4, QHCA_GSI_QPN, QHCA_GSI_QPN, ETH_UD_QKEY,
                       payload, sizeof(payload), frame);
    qt_wire_send(e->t, frame, len);
    qt_wait_counter(e->t, QHCA_CNT_QKEY_VIOLATIONS, qkv + 1);
    qt_cq_assert_empty(e->t, &e->cq);
    len = eth_ud_frame(&a4, 9, QHCA_GSI_QPN, ETH_GSI_QKEY, payload, 8,
                       frame);
    qt_wire_send(e->t, frame, len);
    cqe = eth_expect(e, &gsi, 0x72, QHCA_WC_RECV, QHCA_WC_SUCCESS);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, ETH_GRH + 8);
    g_assert_cmpuint(le32_to_cpu(cqe.src_qp), ==, 9);
    eth_stop(e);
}

/*
 * A UD send to one of the port's own IP addresses comes back in through
 * the receive checks, as from the wire, and never leaves.
 */
static void test_ud_local(void)
{
    Eth *e = eth_start();
    uint8_t payload[32], got[ETH_GRH + 32];
    uint64_t rx = e->buf + 0x2000;
    struct qhca_sge ss = eth_sge(e, e->buf, sizeof(payload));
    struct qhca_sge rs = eth_sge(e, rx, sizeof(got));
    struct qhca_sq_wqe_ud w;
    struct qhca_cqe cqe;
    QhcaQp gsi, ud;
    int v6;

    eth_pattern(payload, sizeof(payload), 0x50);
    qtest_memwrite(e->t->qts, e->buf, payload, sizeof(payload));
    eth_gsi(e, &gsi);
    /* A kernel UD QP (a CM's): the GSI Q_Key is its own. */
    eth_qp(e, QHCA_QPT_UD, &ud);
    qt_qp_ud_rts(e->t, &ud, ETH_GSI_QKEY, 0);

    for (v6 = 0; v6 < 2; v6++) {
        qt_qp_post_recv(e->t, &gsi, 0x80 + v6, &rs, 1);
        w = eth_ud_wqe(0x90 + v6, QHCA_GSI_QPN, v6 ? QT_GID_IP6 : QT_GID_IP4,
                       v6 ? qt_port_ip6 : qt_port_ip4, qt_eth_mac);
        eth_post_send(e, &ud, &w, &ss, 1);
        eth_expect(e, &ud, 0x90 + v6, QHCA_WC_SEND, QHCA_WC_SUCCESS);
        cqe = eth_expect(e, &gsi, 0x80 + v6, QHCA_WC_RECV, QHCA_WC_SUCCESS);
        g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==,
                         ETH_GRH + sizeof(payload));
        g_assert_cmpuint(le32_to_cpu(cqe.src_qp), ==, ud.qpn);
        g_assert_true(cqe.flags & QHCA_CQE_F_GRH);
        g_assert_cmpuint(cqe.network_hdr_type, ==,
                         v6 ? QHCA_NET_IPV6 : QHCA_NET_IPV4);
        g_assert_cmpmem(cqe.smac, 6, qt_eth_mac, 6);
        qtest_memread(e->t->qts, rx, got, sizeof(got));
        if (v6) {
            g_assert_cmphex(got[0] >> 4, ==, 6);
            g_assert_cmpmem(got + 8, 16, qt_port_ip6, 16);
            g_assert_cmpmem(got + 24, 16, qt_port_ip6, 16);
        } else {
            g_assert_true(eth_is_zero(got, 20));
            g_assert_cmphex(got[20], ==, 0x45);
            g_assert_cmpmem(got + 32, 4, qt_port_ip4 + 12, 4);
            g_assert_cmpmem(got + 36, 4, qt_port_ip4 + 12, 4);
        }
        g_assert_cmpmem(got + ETH_GRH, sizeof(payload), payload,
                        sizeof(payload));
    }
    eth_assert_wire_quiet(e);
    eth_stop(e);
}

static uint8_t eth_mcast(Eth *e, uint16_t op, uint32_t qpn, uint16_t mlid,
                         const uint8_t mgid[16])
{
    struct qhca_cmd_mcast c = {
        .qpn = cpu_to_le32(qpn),
        .mlid = cpu_to_le16(mlid),
    };

    memcpy(c.mgid, mgid, 16);
    return qt_cmd(e->t, op, &c, sizeof(c), NULL);
}

static void test_mcast(void)
{
    static const uint8_t mgid4[16] = {
        [10] = 0xff, [11] = 0xff, [12] = 224, [13] = 1, [14] = 2, [15] = 3
    };
    static const uint8_t mmac4[6] = { 0x01, 0x00, 0x5e, 1, 2, 3 };
    static const uint8_t mgid6[16] = { 0xff, 0x0e, [15] = 7 };
    Eth *e = eth_start();
    uint8_t frame[512], payload[16];
    struct qhca_sge ss = eth_sge(e, e->buf, sizeof(payload));
    struct qhca_sge rs = eth_sge(e, e->buf + 0x1000, ETH_GRH + 64);
    QtRoceAddr a = qt_roce_addr(false);
    struct qhca_sq_wqe_ud w;
    struct qhca_cqe cqe;
    QhcaQp gsi, ud, tx;
    QtRoce r;
    ssize_t n;
    size_t len;

    eth_qp(e, QHCA_QPT_GSI, &gsi);
    eth_qp(e, QHCA_QPT_UD, &ud);
    /* Any MLID: Ethernet has none, the group is its address. */
    g_assert_cmpuint(eth_mcast(e, QHCA_CMD_ATTACH_MCAST, ud.qpn, 0, mgid4),
                     ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(eth_mcast(e, QHCA_CMD_ATTACH_MCAST, ud.qpn, 0xffff,
                               mgid6), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(le32_to_cpu(qt_stats(e->t).mcast_groups), ==, 2);
    g_assert_cmpuint(eth_mcast(e, QHCA_CMD_DETACH_MCAST, ud.qpn, 0xc001,
                               mgid6), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(le32_to_cpu(qt_stats(e->t).mcast_groups), ==, 1);

    /* Not a multicast IP address; the GSI QP joins nothing. */
    g_assert_cmpuint(eth_mcast(e, QHCA_CMD_ATTACH_MCAST, ud.qpn, 0,
                               qt_peer_ip6), ==, QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(eth_mcast(e, QHCA_CMD_ATTACH_MCAST, ud.qpn, 0,
                               qt_peer_ip4), ==, QHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(eth_mcast(e, QHCA_CMD_ATTACH_MCAST, gsi.qpn, 0, mgid4),
                     ==, QHCA_AQ_BAD_PARAM);

    /*
     * A send to the group leaves on the wire and reaches the member on
     * this port too (as a switch forwards it back on IB).
     */
    eth_pattern(payload, sizeof(payload), 0x70);
    qtest_memwrite(e->t->qts, e->buf, payload, sizeof(payload));
    qt_qp_ud_rts(e->t, &ud, ETH_UD_QKEY, 0);
    eth_qp(e, QHCA_QPT_UD, &tx);
    qt_qp_ud_rts(e->t, &tx, ETH_UD_QKEY, 0);
    qt_qp_post_recv(e->t, &ud, 0xa0, &rs, 1);
    w = eth_ud_wqe(0xa1, QHCA_MCAST_QPN, QT_GID_IP4, mgid4, mmac4);
    eth_post_send(e, &tx, &w, &ss, 1);
    eth_expect(e, &tx, 0xa1, QHCA_WC_SEND, QHCA_WC_SUCCESS);
    cqe = eth_expect(e, &ud, 0xa0, QHCA_WC_RECV, QHCA_WC_SUCCESS);
    g_assert_cmpuint(le32_to_cpu(cqe.src_qp), ==, tx.qpn);
    g_assert_cmpuint(cqe.network_hdr_type, ==, QHCA_NET_IPV4);
    n = eth_wire_recv(e, frame, sizeof(frame), ETH_WAIT_US);
    g_assert_true(n > 0 && qt_roce_parse(frame, n, &r));
    g_assert_cmpmem(r.dmac, 6, mmac4, 6);
    g_assert_cmpmem(r.dgid, 16, mgid4, 16);
    g_assert_cmpuint(r.qpn, ==, QHCA_MCAST_QPN);

    /* From the segment to the group: the member receives it. */
    qt_qp_post_recv(e->t, &ud, 0xa2, &rs, 1);
    memcpy(a.dmac, mmac4, 6);
    memcpy(a.dgid, mgid4, 16);
    len = eth_ud_frame(&a, 0x77, QHCA_MCAST_QPN, ETH_UD_QKEY, payload,
                       sizeof(payload), frame);
    qt_wire_send(e->t, frame, len);
    cqe = eth_expect(e, &ud, 0xa2, QHCA_WC_RECV, QHCA_WC_SUCCESS);
    g_assert_cmpuint(le32_to_cpu(cqe.src_qp), ==, 0x77);
    g_assert_cmpmem(cqe.smac, 6, qt_peer_mac, 6);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, ETH_GRH + sizeof(payload));
    qt_cq_assert_empty(e->t, &e->cq);
    eth_stop(e);
}

int main(int argc, char **argv)
{
    if (!qt_init(&argc, &argv)) {
        return g_test_run();
    }
    if (!qt_has_eth()) {
        g_test_skip("qhca has no netdev property");
        return g_test_run();
    }

    qtest_add_func("/qhca/eth/query-port", test_query_port);
    qtest_add_func("/qhca/eth/set-gid", test_set_gid);
    qtest_add_func("/qhca/eth/set-qp-av", test_set_qp_av);
    qtest_add_func("/qhca/eth/rtr-av", test_rtr_av);
    qtest_add_func("/qhca/eth/rc-local", test_rc_local);
    qtest_add_func("/qhca/eth/gsi", test_gsi);
    qtest_add_func("/qhca/eth/raw-send", test_raw_send);
    qtest_add_func("/qhca/eth/raw-recv", test_raw_recv);
    qtest_add_func("/qhca/eth/raw-recv-srq", test_raw_recv_srq);
    qtest_add_func("/qhca/eth/ud-send", test_ud_send);
    qtest_add_func("/qhca/eth/ud-dmac-ib", test_ud_dmac_ib);
    qtest_add_func("/qhca/eth/ud-recv", test_ud_recv);
    qtest_add_func("/qhca/eth/ud-local", test_ud_local);
    qtest_add_func("/qhca/eth/mcast", test_mcast);
    return g_test_run();
}
