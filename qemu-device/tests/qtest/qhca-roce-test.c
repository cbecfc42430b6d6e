/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qtest for the RoCEv2 frames of qhca's Ethernet port (interface 1.5):
 * what the device puts on its netdev, read field by field by the test's
 * own parser (qt_roce_parse(), qt_icrc(): nothing of the device's code),
 * and what it makes of frames the test puts there, good and hostile.
 *
 * The test holds the other end of the port's socket netdev and plays the
 * rest of the segment: a peer at qt_peer_ip4/6 and qt_peer_mac.  Two RC
 * QPs of the device, each with that peer in its address vector, talk to
 * each other through the test, which reflects each frame (swaps the
 * addresses, reseals the ICRC): every frame of a SEND and its ACK crosses
 * the wire in both directions.  Other frames the test builds itself:
 * RC requests with immediate data, RETH, READ and atomic responses, UC
 * and XRC (XRCETH) frames, UD both ways (DETH, the GRH slot of the
 * receive buffer, the CQE's network header type and source MAC), and
 * frames whose masked fields changed on the way (the ICRC does not cover
 * them).
 *
 * A hostile frame (truncated, bad checksums or ICRC, lengths that lie,
 * unknown opcodes, TVer, pad, oversized payloads, VLAN tags, fragments,
 * QPs that do not exist, runts and giants) must be dropped and counted,
 * complete nothing and leave the port working.
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qhca-qtest.h"

#define ROCE_PSN_A          0x00fff0    /* wraps within a few packets */
#define ROCE_PSN_B          0x123456
#define ROCE_PKEY           0xffff
#define ROCE_TTL            64          /* what qt_set_qp_av() asks for */
#define ROCE_BUF_SIZE       (64 * 1024)
#define ROCE_RECV_OFF       16384       /* where B's receives land */
#define ROCE_WRITE_OFF      32768       /* the target of RDMA WRITEs */
/* Room for the largest frame any case builds: jumbo payloads. */
#define ROCE_FRAME_MAX      (QHCA_ETH_FRAME_MAX + 256)

/* IBA opcodes (transport RC: 0x00) the test builds or expects. */
#define OP_SEND_ONLY        0x04
#define OP_SEND_ONLY_IMM    0x05
#define OP_WRITE_ONLY       0x0a
#define OP_READ_REQUEST     0x0c
#define OP_READ_RESP_ONLY   0x10
#define OP_ACK              0x11
#define OP_ATOMIC_ACK       0x12
#define OP_FETCH_ADD        0x14
#define OP_FLUSH            0x1c        /* IBA 1.5 (qhca 1.6) */
#define OP_ATOMIC_WRITE     0x1d
#define OP_UC               0x20
#define OP_UD               0x60
#define OP_XRC              0xa0
#define OP_CNP              0x81
#define XRC_PEER_SRQN       0x000444    /* the target's SRQ, on the peer */

#define UD_QKEY             0x11111111u
#define UD_PEER_QPN         0x000333    /* the peer's UD QP */
#define UD_GRH              40

typedef struct Roce {
    QhcaTest *t;
    bool v6;
    uint32_t uar, pdn, lkey;
    QhcaEq eq;
    QhcaCq cq;
    QhcaQp a, b;                /* A's peer is B, B's is A, via the wire */
    uint64_t buf;
    uint8_t frame[ROCE_FRAME_MAX];
} Roce;

/*
 * The UDP source port Linux's rdma_get_udp_sport() gives the QP pair, as
 * the spec words it (Documentation/hw/qhca-ethernet.rst): the flow label,
 * or the QPNs' product folded to 20 bits, then folded to 14 over 0xC000.
 */
static uint16_t roce_sport(uint32_t lqpn, uint32_t rqpn)
{
    uint64_t v = (uint64_t)lqpn * rqpn;
    uint32_t fl;

    v ^= v >> 20;
    v ^= v >> 40;
    fl = v & 0xfffff;
    return 0xc000 | ((fl & 0x3fff) ^ (fl >> 14));
}

/* The folded one's complement sum of an IPv4 header: 0xffff if right. */
static uint16_t roce_ip4_sum(const uint8_t *ip)
{
    uint32_t sum = 0;
    unsigned i;

    for (i = 0; i < (ip[0] & 0xfu) * 4; i += 2) {
        sum += lduw_be_p(ip + i);
    }
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return sum;
}

static void roce_av(Roce *r, const QhcaQp *qp)
{
    g_assert_cmpuint(qt_set_qp_av(r->t, qp->qpn,
                                  r->v6 ? QT_GID_IP6 : QT_GID_IP4,
                                  r->v6 ? qt_peer_ip6 : qt_peer_ip4,
                                  qt_peer_mac), ==, QHCA_AQ_SUCCESS);
}

/*
 * The device on the test's wire, its GIDs set, A and B connected; NULL,
 * the test skipped, if this QEMU's qhca has no Ethernet port.  @props:
 * more device properties, as qhca_start()'s, or NULL.
 */
static Roce *roce_start_props(bool v6, const char *props)
{
    QhcaPath path = qt_rc_path;
    QhcaQpSpec spec;
    Roce *r;

    if (!qt_has_eth()) {
        g_test_skip("this QEMU's qhca has no netdev property");
        return NULL;
    }
    r = g_new0(Roce, 1);
    r->v6 = v6;
    r->t = qt_start_eth(props);
    qt_enable(r->t, 5);
    qt_alloc_uar_pd(r->t, &r->uar, &r->pdn);
    qt_eq_init(r->t, &r->eq, 6, 2, 0);
    r->lkey = qt_reg_phys_mr(r->t, r->pdn, QHCA_ACCESS_ALL, 0x5a, 0);
    qt_cq_init(r->t, &r->cq, 6, r->eq.eqn, r->uar);
    qt_eth_gids(r->t);
    r->buf = guest_alloc(&r->t->alloc, ROCE_BUF_SIZE);
    qtest_memset(r->t->qts, r->buf, 0, ROCE_BUF_SIZE);

    spec = qt_rc_spec(r->pdn, r->uar, &r->cq, &r->cq);
    g_assert_cmpuint(qt_qp_try_create(r->t, &r->a, &spec), ==,
                     QHCA_AQ_SUCCESS);
    g_assert_cmpuint(qt_qp_try_create(r->t, &r->b, &spec), ==,
                     QHCA_AQ_SUCCESS);
    roce_av(r, &r->a);
    roce_av(r, &r->b);
    path.dlid = 0;              /* Ethernet: the AV has the address */
    path.sq_psn = ROCE_PSN_A;
    path.rq_psn = ROCE_PSN_B;
    qt_connect(r->t, r->a.qpn, r->b.qpn, &path);
    path.sq_psn = ROCE_PSN_B;
    path.rq_psn = ROCE_PSN_A;
    qt_connect(r->t, r->b.qpn, r->a.qpn, &path);
    return r;
}

static Roce *roce_start(bool v6)
{
    return roce_start_props(v6, NULL);
}

static void roce_stop(Roce *r)
{
    qt_assert_alive(r->t);
    qhca_stop(r->t);
    g_free(r);
}

/* The next frame the port sends, which must come, and be RoCEv2. */
static size_t roce_expect_frame(Roce *r, QtRoce *p)
{
    ssize_t len = qt_wire_recv(r->t, r->frame, sizeof(r->frame),
                               QHCA_TIMEOUT_US);

    g_assert_cmpint(len, >, 0);
    g_assert_cmpint(len, <=, sizeof(r->frame));
    g_assert(qt_roce_parse(r->frame, len, p));
    g_assert(p->icrc_ok);
    return len;
}

/* Nothing more came out of the port. */
static void roce_assert_quiet(Roce *r)
{
    g_assert_cmpint(qt_wire_recv(r->t, r->frame, sizeof(r->frame), 0), ==,
                    -1);
}

/*
 * The Ethernet, IP, UDP and BTH fields of a frame the port sent from QP
 * @src to QP @dest, every field the spec fixes, read from the bytes.
 */
static void roce_check_headers(Roce *r, const uint8_t *f, size_t len,
                               const QtRoce *p, uint32_t src, uint32_t dest)
{
    const uint8_t *ip = f + 14, *udp, *bth = f + p->ib;
    size_t end = p->ib + p->ib_len + QT_ICRC_LEN;

    g_assert(!memcmp(f, qt_peer_mac, 6));
    g_assert(!memcmp(f + 6, qt_eth_mac, 6));
    g_assert_cmpuint(p->v6, ==, r->v6);
    if (r->v6) {
        uint32_t w = ldl_be_p(ip);

        g_assert_cmphex(lduw_be_p(f + 12), ==, 0x86dd);
        g_assert_cmpuint(w >> 28, ==, 6);
        g_assert_cmphex((w >> 20) & 0xff, ==, 0);      /* traffic class */
        g_assert_cmphex(w & 0xfffff, ==, 0);           /* flow label */
        g_assert_cmpuint(lduw_be_p(ip + 4), ==, end - 14 - 40);
        g_assert_cmpuint(ip[6], ==, 17);
        g_assert_cmpuint(ip[7], ==, ROCE_TTL);
        g_assert(!memcmp(ip + 8, qt_port_ip6, 16));
        g_assert(!memcmp(ip + 24, qt_peer_ip6, 16));
        udp = ip + 40;
    } else {
        g_assert_cmphex(lduw_be_p(f + 12), ==, 0x0800);
        g_assert_cmphex(ip[0], ==, 0x45);
        g_assert_cmphex(ip[1], ==, 0);                 /* TOS */
        g_assert_cmpuint(lduw_be_p(ip + 2), ==, end - 14);
        g_assert_cmphex(lduw_be_p(ip + 6), ==, 0x4000); /* DF, offset 0 */
        g_assert_cmpuint(ip[8], ==, ROCE_TTL);
        g_assert_cmpuint(ip[9], ==, 17);
        g_assert_cmphex(roce_ip4_sum(ip), ==, 0xffff);
        g_assert(!memcmp(ip + 12, qt_port_ip4 + 12, 4));
        g_assert(!memcmp(ip + 16, qt_peer_ip4 + 12, 4));
        udp = ip + 20;
    }
    /* The device pads nothing: the frame ends with the ICRC. */
    g_assert_cmpuint(len, ==, end);
    g_assert_cmpuint(lduw_be_p(udp), ==, roce_sport(src, dest));
    g_assert_cmpuint(lduw_be_p(udp + 2), ==, QT_ROCE_PORT);
    g_assert_cmpuint(lduw_be_p(udp + 4), ==, end - (udp - f));
    g_assert_cmphex(lduw_be_p(udp + 6), ==, 0);        /* no checksum */
    g_assert_cmpuint(bth - udp, ==, 8);
    g_assert_cmphex(bth[1] & 0x4f, ==, 0);             /* M, TVer */
    g_assert_cmphex(p->pkey, ==, ROCE_PKEY);
    g_assert_cmphex(bth[4], ==, 0);
    g_assert_cmphex(bth[8] & 0x7f, ==, 0);
    g_assert_cmphex(p->qpn, ==, dest);
}

/*
 * Send @f back to the port as the peer would receive and answer it: the
 * MACs and IP addresses swapped, the ICRC (which covers the addresses)
 * computed again.  The IPv4 checksum does not change with the order.
 */
static void roce_reflect(Roce *r, uint8_t *f, const QtRoce *p)
{
    size_t end = p->ib + p->ib_len + QT_ICRC_LEN;
    size_t off = r->v6 ? 14 + 8 : 14 + 12, n = r->v6 ? 16 : 4;
    uint8_t tmp[16];

    memcpy(f, qt_eth_mac, 6);
    memcpy(f + 6, qt_peer_mac, 6);
    memcpy(tmp, f + off, n);
    memcpy(f + off, f + off + n, n);
    memcpy(f + off + n, tmp, n);
    qt_roce_seal(f, end);
    qt_wire_send(r->t, f, end);
}

/* An ACK for @psn with @msn must come for QP @dest from QP @src. */
static void roce_expect_ack(Roce *r, uint32_t src, uint32_t dest,
                            uint32_t psn, uint32_t msn, QtRoce *p)
{
    size_t len = roce_expect_frame(r, p);
    const uint8_t *ib = r->frame + p->ib;

    roce_check_headers(r, r->frame, len, p, src, dest);
    g_assert_cmphex(p->opcode, ==, OP_ACK);
    g_assert_cmpuint(p->ib_len, ==, QT_BTH_LEN + 4);   /* BTH, AETH */
    g_assert(!p->se);
    g_assert_cmpuint(p->pad, ==, 0);
    g_assert_cmphex(p->psn, ==, psn);
    g_assert_cmphex(ib[12] & 0xe0, ==, 0);             /* an ACK */
    g_assert_cmphex(ldl_be_p(ib + 12) & 0xffffff, ==, msn);
}

static uint64_t roce_count(Roce *r, enum qhca_counter c)
{
    return qt_counter(r->t, c);
}

/*
 * The end of a case: no completion and no frame left over, @drops RoCEv2
 * frames refused in all, the device alive.
 */
static void roce_finish(Roce *r, uint64_t drops)
{
    qt_cq_assert_empty(r->t, &r->cq);
    roce_assert_quiet(r);
    g_assert_cmpuint(roce_count(r, QHCA_CNT_ROCE_RX_DROPS), ==, drops);
    roce_stop(r);
}

/*
 * A SEND from A to B over the wire: the request as the port sends it,
 * field by field; reflected, B receives it and ACKs; the ACK, read and
 * reflected, completes A's WQE.
 */
static void test_send(const void *opaque)
{
    bool v6 = (uintptr_t)opaque;
    Roce *r;
    struct qhca_sq_wqe w = {
        .wr_id = cpu_to_le64(0x10),
        .opcode = QHCA_WR_SEND,
        .flags = QHCA_WQE_F_SIGNALED | QHCA_WQE_F_SOLICITED,
        .num_sge = 1,
    };
    const uint32_t n = 701;     /* three bytes of pad */
    struct qhca_sge ss, rs;
    uint8_t data[701], got[701];
    struct qhca_cqe cqe;
    QtRoce p;
    size_t len;
    unsigned i;

    r = roce_start(v6);
    if (!r) {
        return;
    }
    ss = qt_sge(r->buf, n, r->lkey);
    rs = qt_sge(r->buf + ROCE_RECV_OFF, 4096, r->lkey);
    for (i = 0; i < n; i++) {
        data[i] = i * 13 + 7;
    }
    qtest_memwrite(r->t->qts, r->buf, data, n);
    qt_qp_post_recv(r->t, &r->b, 0x20, &rs, 1);
    qt_qp_post_send(r->t, &r->a, &w, &ss, 1);
    qt_qp_ring_sq(r->t, &r->a);

    len = roce_expect_frame(r, &p);
    roce_check_headers(r, r->frame, len, &p, r->a.qpn, r->b.qpn);
    g_assert_cmphex(p.opcode, ==, OP_SEND_ONLY);
    g_assert(p.se);
    g_assert(p.ackreq);
    g_assert_cmpuint(p.pad, ==, 3);
    g_assert_cmphex(p.psn, ==, ROCE_PSN_A);
    g_assert_cmpuint(p.ib_len, ==, QT_BTH_LEN + n + 3);
    g_assert(!memcmp(r->frame + p.ib + QT_BTH_LEN, data, n));
    for (i = 0; i < 3; i++) {
        g_assert_cmphex(r->frame[p.ib + QT_BTH_LEN + n + i], ==, 0);
    }

    roce_reflect(r, r->frame, &p);
    cqe = qt_cq_expect(r->t, &r->cq, r->b.qpn, QHCA_WC_RECV, QHCA_WC_SUCCESS);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0x20);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, n);
    g_assert(cqe.flags & QHCA_CQE_F_SOLICITED);
    qtest_memread(r->t->qts, r->buf + ROCE_RECV_OFF, got, n);
    g_assert(!memcmp(got, data, n));

    roce_expect_ack(r, r->b.qpn, r->a.qpn, ROCE_PSN_A, 1, &p);
    roce_reflect(r, r->frame, &p);
    cqe = qt_cq_expect(r->t, &r->cq, r->a.qpn, QHCA_WC_SEND, QHCA_WC_SUCCESS);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0x10);

    g_assert_cmpuint(roce_count(r, QHCA_CNT_ICRC_ERRORS), ==, 0);
    roce_finish(r, 0);
}

/* ------------------------------------------------------------------ */
/* Frames built by the test                                            */

/*
 * A frame from the peer (QP A's number) to QP @qpn: the BTH with
 * @opcode, @psn and AckReq, then @hlen bytes of extension headers @hdr,
 * @plen bytes of payload @pay and its pad; returns the frame's length.
 */
static size_t roce_build(Roce *r, uint8_t *f, uint8_t opcode, uint32_t qpn,
                         uint32_t psn, const void *hdr, size_t hlen,
                         const void *pay, size_t plen)
{
    static uint8_t ib[ROCE_FRAME_MAX];
    QtRoceAddr a = qt_roce_addr(r->v6);
    size_t pad = -plen & 3, n;

    g_assert_cmpuint(QT_BTH_LEN + hlen + plen + pad, <=,
                     sizeof(ib) - QT_ROCE_HDR_MAX - QT_ICRC_LEN);
    a.sport = roce_sport(r->a.qpn, qpn);
    n = qt_bth(ib, opcode, false, true, pad, qpn, psn);
    memcpy(ib + n, hdr, hlen);
    n += hlen;
    memcpy(ib + n, pay, plen);
    n += plen;
    memset(ib + n, 0, pad);
    n += pad;
    return qt_roce_frame(&a, ib, n, f);
}

/* The BTH of a frame roce_build() made, with the plain IPv4 header. */
static uint8_t *roce_bth(Roce *r, uint8_t *f)
{
    return f + 14 + (r->v6 ? 40 : 20) + 8;
}

/* Make @f's IPv4 header checksum right again after an edit. */
static void roce_ip4_csum(uint8_t *f)
{
    uint8_t *ip = f + 14;

    stw_be_p(ip + 10, 0);
    stw_be_p(ip + 10, (uint16_t)~roce_ip4_sum(ip));
}

/*
 * Frames the test builds for B as A would send them: a SEND with
 * immediate, an RDMA WRITE (RETH), an RDMA READ request and a FETCH_ADD,
 * each answered on the wire (ACK, ACK, READ response with AETH and the
 * data, ATOMIC_ACKNOWLEDGE with the original value).
 */
static void test_inject(void)
{
    Roce *r;
    struct qhca_sge rs;
    uint8_t data[256], got[256], reth[16], ib_imm[4] = { 1, 2, 3, 4 };
    uint8_t atomic[28];
    struct qhca_cqe cqe;
    QtRoce p;
    size_t len;
    unsigned i;

    r = roce_start(false);
    if (!r) {
        return;
    }
    rs = qt_sge(r->buf + ROCE_RECV_OFF, 4096, r->lkey);
    for (i = 0; i < sizeof(data); i++) {
        data[i] = i ^ 0xa5;
    }

    /* SEND_ONLY with immediate: the CQE has it as sent, then an ACK. */
    qt_qp_post_recv(r->t, &r->b, 0x30, &rs, 1);
    len = roce_build(r, r->frame, OP_SEND_ONLY_IMM, r->b.qpn, ROCE_PSN_A,
                     ib_imm, sizeof(ib_imm), data, 100);
    qt_wire_send(r->t, r->frame, len);
    cqe = qt_cq_expect(r->t, &r->cq, r->b.qpn, QHCA_WC_RECV, QHCA_WC_SUCCESS);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, 100);
    g_assert(cqe.flags & QHCA_CQE_F_IMM);
    g_assert(!memcmp(&cqe.imm_data, ib_imm, 4));
    qtest_memread(r->t->qts, r->buf + ROCE_RECV_OFF, got, 100);
    g_assert(!memcmp(got, data, 100));
    roce_expect_ack(r, r->b.qpn, r->a.qpn, ROCE_PSN_A, 1, &p);

    /* RDMA WRITE_ONLY: the RETH's address, key and length are used. */
    stq_be_p(reth, r->buf + ROCE_WRITE_OFF);
    stl_be_p(reth + 8, r->lkey);
    stl_be_p(reth + 12, sizeof(data));
    len = roce_build(r, r->frame, OP_WRITE_ONLY, r->b.qpn, ROCE_PSN_A + 1,
                     reth, sizeof(reth), data, sizeof(data));
    qt_wire_send(r->t, r->frame, len);
    roce_expect_ack(r, r->b.qpn, r->a.qpn, ROCE_PSN_A + 1, 2, &p);
    qtest_memread(r->t->qts, r->buf + ROCE_WRITE_OFF, got, sizeof(got));
    g_assert(!memcmp(got, data, sizeof(data)));

    /* RDMA READ of what was written: READ_RESPONSE_ONLY, AETH, data. */
    stl_be_p(reth + 12, 200);
    len = roce_build(r, r->frame, OP_READ_REQUEST, r->b.qpn, ROCE_PSN_A + 2,
                     reth, sizeof(reth), NULL, 0);
    qt_wire_send(r->t, r->frame, len);
    len = roce_expect_frame(r, &p);
    roce_check_headers(r, r->frame, len, &p, r->b.qpn, r->a.qpn);
    g_assert_cmphex(p.opcode, ==, OP_READ_RESP_ONLY);
    g_assert_cmphex(p.psn, ==, ROCE_PSN_A + 2);
    g_assert_cmpuint(p.pad, ==, 0);
    g_assert_cmpuint(p.ib_len, ==, QT_BTH_LEN + 4 + 200);
    g_assert_cmphex(r->frame[p.ib + 12] & 0xe0, ==, 0);
    g_assert_cmphex(ldl_be_p(r->frame + p.ib + 12) & 0xffffff, ==, 3);
    g_assert(!memcmp(r->frame + p.ib + QT_BTH_LEN + 4, data, 200));

    /*
     * FETCH_ADD (AtomicETH: address, key, add, compare) on the first 8
     * bytes written: ATOMIC_ACKNOWLEDGE with AETH and AtomicAckETH, the
     * original value big endian on the wire, little endian in memory.
     */
    stq_be_p(atomic, r->buf + ROCE_WRITE_OFF);
    stl_be_p(atomic + 8, r->lkey);
    stq_be_p(atomic + 12, 0x0102030405060708ull);
    stq_be_p(atomic + 20, 0);
    len = roce_build(r, r->frame, OP_FETCH_ADD, r->b.qpn, ROCE_PSN_A + 3,
                     atomic, sizeof(atomic), NULL, 0);
    qt_wire_send(r->t, r->frame, len);
    len = roce_expect_frame(r, &p);
    roce_check_headers(r, r->frame, len, &p, r->b.qpn, r->a.qpn);
    g_assert_cmphex(p.opcode, ==, OP_ATOMIC_ACK);
    g_assert_cmphex(p.psn, ==, ROCE_PSN_A + 3);
    g_assert_cmpuint(p.ib_len, ==, QT_BTH_LEN + 4 + 8);
    g_assert_cmphex(ldl_be_p(r->frame + p.ib + 12) & 0xffffff, ==, 4);
    g_assert_cmphex(ldq_be_p(r->frame + p.ib + 16), ==, ldq_le_p(data));
    qtest_memread(r->t->qts, r->buf + ROCE_WRITE_OFF, got, 8);
    g_assert_cmphex(ldq_le_p(got), ==,
                    ldq_le_p(data) + 0x0102030405060708ull);

    roce_finish(r, 0);
}

/*
 * 1.6: B lets A FLUSH its memory: B's QP allows FLUSHes, and an MR of
 * B's grants FLUSH_GLOBAL besides every other right; returns its key.
 */
static uint32_t roce_flush_target(Roce *r)
{
    struct qhca_cmd_modify_qp m = {
        .qpn = cpu_to_le32(r->b.qpn),
        .attr_mask = cpu_to_le32(QHCA_QP_ATTR_ACCESS),
        .state = QHCA_QPS_RTS,
        .access = qt_rc_path.access | QHCA_ACCESS_FLUSH_GLOBAL |
                  QHCA_ACCESS_FLUSH_PERSISTENT,
    };

    g_assert_cmpuint(qt_modify_qp(r->t, &m), ==, QHCA_AQ_SUCCESS);
    return qt_reg_phys_mr(r->t, r->pdn,
                          QHCA_ACCESS_ALL | QHCA_ACCESS_FLUSH_GLOBAL, 0x6b, 0);
}

/*
 * The answer to a FLUSH or an ATOMIC_WRITE at @psn, from B to A: an RDMA
 * READ response only, with an AETH (ACK, MSN @msn) and no payload.
 */
static void roce_expect_read_ack(Roce *r, uint32_t psn, uint32_t msn,
                                 QtRoce *p)
{
    size_t len = roce_expect_frame(r, p);

    roce_check_headers(r, r->frame, len, p, r->b.qpn, r->a.qpn);
    g_assert_cmphex(p->opcode, ==, OP_READ_RESP_ONLY);
    g_assert_cmphex(p->psn, ==, psn);
    g_assert_cmpuint(p->pad, ==, 0);
    g_assert_cmpuint(p->ib_len, ==, QT_BTH_LEN + 4);
    g_assert_cmphex(r->frame[p->ib + 12] & 0xe0, ==, 0);
    g_assert_cmphex(ldl_be_p(r->frame + p->ib + 12) & 0xffffff, ==, msn);
}

/*
 * 1.6: FLUSH and ATOMIC_WRITE from A to B, every frame read field by
 * field: FLUSH is the BTH, the FETH (placement type and level) and the
 * RETH; ATOMIC_WRITE the BTH, a RETH of 8 bytes and the 8 bytes; each is
 * answered by a READ_RESPONSE_ONLY with no payload, which completes the
 * WQE.  A duplicate of each, sent again by the peer after the target
 * changed, gets the same answer and is not executed again.
 */
static void test_placement(void)
{
    Roce *r = roce_start(false);
    const uint64_t target = ROCE_WRITE_OFF + 64;
    struct qhca_sq_wqe w = {
        .wr_id = cpu_to_le64(0x70),
        .opcode = QHCA_WR_FLUSH,
        .flags = QHCA_WQE_F_SIGNALED,
        .flush = QHCA_FLUSH_GLOBAL | QHCA_FLUSH_MR,
        .flush_len = cpu_to_le32(1234),
    };
    uint8_t val[8] = { 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88 };
    uint8_t dup[ROCE_FRAME_MAX], got[8];
    const uint8_t *ib;
    struct qhca_cqe cqe;
    uint32_t key;
    size_t dup_len;
    QtRoce p;

    if (!r) {
        return;
    }
    key = roce_flush_target(r);

    /* FLUSH of the whole MR: FETH 0x10 | 0x1, the RETH as posted. */
    w.remote_addr = cpu_to_le64(r->buf + target);
    w.rkey = cpu_to_le32(key);
    qt_qp_post_send(r->t, &r->a, &w, NULL, 0);
    qt_qp_ring_sq(r->t, &r->a);
    roce_check_headers(r, r->frame, roce_expect_frame(r, &p), &p, r->a.qpn,
                       r->b.qpn);
    ib = r->frame + p.ib;
    g_assert_cmphex(p.opcode, ==, OP_FLUSH);
    g_assert(p.ackreq);
    g_assert(!p.se);
    g_assert_cmpuint(p.pad, ==, 0);
    g_assert_cmphex(p.psn, ==, ROCE_PSN_A);
    g_assert_cmpuint(p.ib_len, ==, QT_BTH_LEN + 4 + 16);
    g_assert_cmphex(ldl_be_p(ib + 12), ==, 0x11);
    g_assert_cmphex(ldq_be_p(ib + 16), ==, r->buf + target);
    g_assert_cmphex(ldl_be_p(ib + 24), ==, key);
    g_assert_cmpuint(ldl_be_p(ib + 28), ==, 1234);
    roce_reflect(r, r->frame, &p);
    memcpy(dup, r->frame, sizeof(dup));
    dup_len = p.ib + p.ib_len + QT_ICRC_LEN;
    roce_expect_read_ack(r, ROCE_PSN_A, 1, &p);
    /* Again, as the peer retransmits it: answered again, MSN as it is. */
    qt_wire_send(r->t, dup, dup_len);
    roce_expect_read_ack(r, ROCE_PSN_A, 1, &p);
    roce_reflect(r, r->frame, &p);
    cqe = qt_cq_expect(r->t, &r->cq, r->a.qpn, QHCA_WC_FLUSH,
                       QHCA_WC_SUCCESS);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0x70);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, 0);

    /* ATOMIC_WRITE, 8 inline bytes: its payload is them, in order. */
    w = (struct qhca_sq_wqe) {
        .wr_id = cpu_to_le64(0x71),
        .opcode = QHCA_WR_ATOMIC_WRITE,
        .flags = QHCA_WQE_F_SIGNALED | QHCA_WQE_F_INLINE,
        .remote_addr = cpu_to_le64(r->buf + target),
        .rkey = cpu_to_le32(key),
        .inline_len = cpu_to_le32(8),
    };
    qtest_memwrite(r->t->qts, qt_qp_sq_slot(&r->a, 1) + sizeof(w), val, 8);
    qt_qp_post_send(r->t, &r->a, &w, NULL, 0);
    qt_qp_ring_sq(r->t, &r->a);
    roce_check_headers(r, r->frame, roce_expect_frame(r, &p), &p, r->a.qpn,
                       r->b.qpn);
    ib = r->frame + p.ib;
    g_assert_cmphex(p.opcode, ==, OP_ATOMIC_WRITE);
    g_assert(p.ackreq);
    g_assert_cmphex(p.psn, ==, ROCE_PSN_A + 1);
    g_assert_cmpuint(p.pad, ==, 0);
    g_assert_cmpuint(p.ib_len, ==, QT_BTH_LEN + 16 + 8);
    g_assert_cmphex(ldq_be_p(ib + 12), ==, r->buf + target);
    g_assert_cmphex(ldl_be_p(ib + 20), ==, key);
    g_assert_cmpuint(ldl_be_p(ib + 24), ==, 8);
    g_assert(!memcmp(ib + 28, val, 8));
    roce_reflect(r, r->frame, &p);
    memcpy(dup, r->frame, sizeof(dup));
    dup_len = p.ib + p.ib_len + QT_ICRC_LEN;
    roce_expect_read_ack(r, ROCE_PSN_A + 1, 2, &p);
    qtest_memread(r->t->qts, r->buf + target, got, 8);
    g_assert(!memcmp(got, val, 8));

    /* The duplicate is answered, and the bytes written since stay. */
    qtest_memset(r->t->qts, r->buf + target, 0xee, 8);
    qt_wire_send(r->t, dup, dup_len);
    roce_expect_read_ack(r, ROCE_PSN_A + 1, 2, &p);
    qtest_memread(r->t->qts, r->buf + target, got, 8);
    g_assert_cmphex(ldq_le_p(got), ==, 0xeeeeeeeeeeeeeeeeull);
    roce_reflect(r, r->frame, &p);
    cqe = qt_cq_expect(r->t, &r->cq, r->a.qpn, QHCA_WC_ATOMIC_WRITE,
                       QHCA_WC_SUCCESS);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0x71);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, 8);
    g_assert_cmpuint(qt_qp_state(r->t, &r->b), ==, QHCA_QPS_RTS);
    roce_finish(r, 0);
}

/*
 * 1.6: FLUSH and ATOMIC_WRITE frames from the peer that B must refuse,
 * each a NAK (invalid request or remote access, as the spec's table
 * says) and B in ERR, the target untouched; a fresh device for each
 * (qhca-dp-test checks the async events).  The frames are good RoCEv2
 * frames: nothing is dropped.
 */
static void test_placement_naks(void)
{
    static const struct {
        const char *what;
        uint8_t opcode;
        uint32_t feth;
        uint64_t off;           /* from the target */
        uint32_t len;           /* RETH DMA length */
        uint32_t paylen;
        bool flush_mr;          /* the MR grants FLUSH_GLOBAL */
        uint8_t nak;
    } bad[] = {
        { "FETH reserved bit", OP_FLUSH, 0x41, 0, 8, 0, true, 1 },
        { "FETH reserved high bit", OP_FLUSH, 0x80000001u, 0, 8, 0, true, 1 },
        { "FETH no placement type", OP_FLUSH, 0x10, 0, 8, 0, true, 1 },
        { "FETH unknown type", OP_FLUSH, 0x04, 0, 8, 0, true, 1 },
        { "FETH unknown level", OP_FLUSH, 0x21, 0, 8, 0, true, 1 },
        { "FLUSH range over 2^31", OP_FLUSH, 0x01, 0, 0x80000001u, 0, true,
          1 },
        { "FLUSH, MR without the access", OP_FLUSH, 0x01, 0, 8, 0, false,
          2 },
        { "FLUSH persistent", OP_FLUSH, 0x12, 0, 0, 0, true, 2 },
        { "ATOMIC_WRITE misaligned", OP_ATOMIC_WRITE, 0, 4, 8, 8, true, 1 },
        { "ATOMIC_WRITE of 4 bytes", OP_ATOMIC_WRITE, 0, 0, 4, 4, true, 1 },
        { "ATOMIC_WRITE, RETH 16, 8 bytes", OP_ATOMIC_WRITE, 0, 0, 16, 8,
          true, 1 },
        { "ATOMIC_WRITE past the MR's key", OP_ATOMIC_WRITE, 0, 0, 8, 8,
          false, 2 },
    };
    size_t i;

    for (i = 0; i < ARRAY_SIZE(bad); i++) {
        Roce *r = roce_start(false);
        uint8_t hdr[20], pay[8] = { 9, 9, 9, 9, 9, 9, 9, 9 }, got[8];
        uint64_t va;
        uint32_t key;
        size_t n = 0, len;
        QtRoce p;

        if (!r) {
            return;
        }
        g_test_message("%s", bad[i].what);
        key = roce_flush_target(r);
        if (!bad[i].flush_mr) {
            key = bad[i].opcode == OP_FLUSH ? r->lkey : key + 1;
        }
        va = r->buf + ROCE_WRITE_OFF + bad[i].off;
        qtest_memset(r->t->qts, r->buf + ROCE_WRITE_OFF, 0x5a, 16);
        if (bad[i].opcode == OP_FLUSH) {
            stl_be_p(hdr, bad[i].feth);
            n = 4;
        }
        stq_be_p(hdr + n, va);
        stl_be_p(hdr + n + 8, key);
        stl_be_p(hdr + n + 12, bad[i].len);
        len = roce_build(r, r->frame, bad[i].opcode, r->b.qpn, ROCE_PSN_A,
                         hdr, n + 16, pay, bad[i].paylen);
        qt_wire_send(r->t, r->frame, len);
        len = roce_expect_frame(r, &p);
        roce_check_headers(r, r->frame, len, &p, r->b.qpn, r->a.qpn);
        g_assert_cmphex(p.opcode, ==, OP_ACK);
        g_assert_cmphex(p.psn, ==, ROCE_PSN_A);
        g_assert_cmphex(r->frame[p.ib + 12], ==, 0x60 | bad[i].nak);
        qt_qp_wait_state(r->t, &r->b, QHCA_QPS_ERR);
        qtest_memread(r->t->qts, r->buf + ROCE_WRITE_OFF, got, 8);
        g_assert_cmphex(ldq_le_p(got), ==, 0x5a5a5a5a5a5a5a5aull);
        roce_finish(r, 0);
    }
}

/*
 * The ICRC Linux 6.12's rxe gives a frame of @len bytes: the IBA's over
 * everything, then the CRC-32 goes on over the BTH and what follows up to
 * the ICRC once more, as rxe does for a FLUSH (its opcode table gives
 * FLUSH no payload offset).
 */
static uint32_t roce_rxe_icrc(const uint8_t *f, size_t len, size_t ib)
{
    uint32_t crc = ~qt_icrc(f, len);
    size_t i;
    int k;

    for (i = ib; i < len - QT_ICRC_LEN; i++) {
        crc ^= f[i];
        for (k = 0; k < 8; k++) {
            crc = (crc >> 1) ^ (0xedb88320u & -(crc & 1));
        }
    }
    return ~crc;
}

/*
 * 1.6: rxe's FLUSH frames carry that ICRC: B takes one (and answers it),
 * while a FLUSH with neither ICRC, and an ATOMIC_WRITE with rxe's kind,
 * are dropped as bad ICRCs.
 */
static void test_placement_rxe_icrc(void)
{
    Roce *r = roce_start(false);
    uint8_t hdr[20], pay[8] = { 0 };
    uint32_t key;
    size_t len, ib;
    QtRoce p;

    if (!r) {
        return;
    }
    key = roce_flush_target(r);
    stl_be_p(hdr, 0x01);
    stq_be_p(hdr + 4, r->buf + ROCE_WRITE_OFF);
    stl_be_p(hdr + 12, key);
    stl_be_p(hdr + 16, 64);
    len = roce_build(r, r->frame, OP_FLUSH, r->b.qpn, ROCE_PSN_A, hdr, 20,
                     NULL, 0);
    ib = roce_bth(r, r->frame) - r->frame;
    stl_le_p(r->frame + len - QT_ICRC_LEN, ~qt_icrc(r->frame, len));
    qt_wire_send(r->t, r->frame, len);
    g_assert(qt_wire_flush(r->t, QHCA_TIMEOUT_US));
    stl_le_p(r->frame + len - QT_ICRC_LEN,
             roce_rxe_icrc(r->frame, len, ib));
    qt_wire_send(r->t, r->frame, len);
    roce_expect_read_ack(r, ROCE_PSN_A, 1, &p);
    g_assert_cmpuint(roce_count(r, QHCA_CNT_ICRC_ERRORS), ==, 1);

    len = roce_build(r, r->frame, OP_ATOMIC_WRITE, r->b.qpn,
                     ROCE_PSN_A + 1, hdr + 4, 16, pay, 8);
    stl_le_p(r->frame + len - QT_ICRC_LEN,
             roce_rxe_icrc(r->frame, len, ib));
    qt_wire_send(r->t, r->frame, len);
    g_assert(qt_wire_flush(r->t, QHCA_TIMEOUT_US));
    qt_wait_counter(r->t, QHCA_CNT_ICRC_ERRORS, 2);
    g_assert_cmpuint(qt_qp_state(r->t, &r->b), ==, QHCA_QPS_RTS);
    roce_finish(r, 2);
}

/*
 * UD both ways: a frame with DETH and ImmDt lands in the receive buffer
 * after its GRH slot, which holds the IP header as it came (IPv4: 20 zero
 * bytes first), and the CQE tells the header type and the sender's MAC;
 * a UD send WQE leaves as a frame with the WQE's addresses and a DETH.
 */
static void test_ud(const void *opaque)
{
    bool v6 = (uintptr_t)opaque;
    Roce *r = roce_start(v6);
    QhcaQpSpec spec;
    struct qhca_sq_wqe_ud w = {
        .wr_id = cpu_to_le64(0x51),
        .opcode = QHCA_WR_SEND,
        .flags = QHCA_WQE_F_SIGNALED,
        .num_sge = 1,
        .dest_qpn = cpu_to_le32(UD_PEER_QPN),
        .qkey = cpu_to_le32(UD_QKEY),
        .av_flags = QHCA_AV_F_GRH,
        .hop_limit = ROCE_TTL,
        .sgid_index = v6 ? QT_GID_IP6 : QT_GID_IP4,
    };
    uint8_t hdr[12], got[UD_GRH + 64], slot[UD_GRH] = { 0 }, data[64];
    size_t iplen = v6 ? 40 : 20, len;
    struct qhca_sge rs, ss;
    struct qhca_cqe cqe;
    const uint8_t *ib;
    QtRoce p;
    QhcaQp u;
    unsigned i;

    if (!r) {
        return;
    }
    spec = qt_rc_spec(r->pdn, r->uar, &r->cq, &r->cq);
    spec.type = QHCA_QPT_UD;
    spec.sq_stride_log2 = 7;
    g_assert_cmpuint(qt_qp_try_create(r->t, &u, &spec), ==, QHCA_AQ_SUCCESS);
    qt_qp_ud_rts(r->t, &u, UD_QKEY, 0x42);
    for (i = 0; i < sizeof(data); i++) {
        data[i] = 0xc0 + i;
    }

    rs = qt_sge(r->buf + ROCE_RECV_OFF, UD_GRH + 4096, r->lkey);
    qt_qp_post_recv(r->t, &u, 0x50, &rs, 1);
    stl_be_p(hdr, UD_QKEY);
    stl_be_p(hdr + 4, UD_PEER_QPN);
    memcpy(hdr + 8, "imm!", 4);
    len = roce_build(r, r->frame, OP_UD | OP_SEND_ONLY_IMM, u.qpn, 0x777,
                     hdr, sizeof(hdr), data, 50);
    memcpy(slot + UD_GRH - iplen, r->frame + 14, iplen);
    qt_wire_send(r->t, r->frame, len);
    cqe = qt_cq_expect(r->t, &r->cq, u.qpn, QHCA_WC_RECV, QHCA_WC_SUCCESS);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, UD_GRH + 50);
    g_assert_cmphex(cqe.flags & (QHCA_CQE_F_GRH | QHCA_CQE_F_IMM), ==,
                    QHCA_CQE_F_GRH | QHCA_CQE_F_IMM);
    g_assert(!memcmp(&cqe.imm_data, "imm!", 4));
    g_assert_cmphex(le32_to_cpu(cqe.src_qp), ==, UD_PEER_QPN);
    g_assert_cmpuint(cqe.network_hdr_type, ==,
                     v6 ? QHCA_NET_IPV6 : QHCA_NET_IPV4);
    g_assert(!memcmp(cqe.smac, qt_peer_mac, 6));
    qtest_memread(r->t->qts, r->buf + ROCE_RECV_OFF, got, UD_GRH + 50);
    g_assert(!memcmp(got, slot, UD_GRH));
    g_assert(!memcmp(got + UD_GRH, data, 50));

    memcpy(w.dgid, v6 ? qt_peer_ip6 : qt_peer_ip4, 16);
    memcpy(w.dmac, qt_peer_mac, 6);
    qtest_memwrite(r->t->qts, r->buf, data, 33);
    ss = qt_sge(r->buf, 33, r->lkey);
    qt_qp_post_send(r->t, &u, &w, &ss, 1);
    qt_qp_ring_sq(r->t, &u);
    len = roce_expect_frame(r, &p);
    roce_check_headers(r, r->frame, len, &p, u.qpn, UD_PEER_QPN);
    ib = r->frame + p.ib;
    g_assert_cmphex(p.opcode, ==, OP_UD | OP_SEND_ONLY);
    g_assert(!p.ackreq);
    g_assert_cmphex(p.psn, ==, 0x42);
    g_assert_cmpuint(p.pad, ==, 3);
    g_assert_cmpuint(p.ib_len, ==, QT_BTH_LEN + 8 + 33 + 3);
    g_assert_cmphex(ldl_be_p(ib + 12), ==, UD_QKEY);
    g_assert_cmphex(ldl_be_p(ib + 16), ==, u.qpn);
    g_assert(!memcmp(ib + 20, data, 33));
    qt_cq_expect(r->t, &r->cq, u.qpn, QHCA_WC_SEND, QHCA_WC_SUCCESS);

    roce_finish(r, 0);
}

/*
 * The fields routers and NICs may change on the way are outside the
 * ICRC: a frame whose IPv4 TOS, TTL (checksum made right) or IPv6
 * traffic class, flow label and hop limit, UDP checksum and BTH reserved
 * byte differ from what was sealed is still taken.  The IPv4
 * identification is inside: changing it is a bad ICRC.
 */
static void test_icrc_mask(const void *opaque)
{
    bool v6 = (uintptr_t)opaque;
    Roce *r = roce_start(v6);
    uint8_t data[40] = { 0x77 };
    struct qhca_sge rs;
    uint8_t *ip, *bth;
    size_t len;
    QtRoce p;

    if (!r) {
        return;
    }
    rs = qt_sge(r->buf + ROCE_RECV_OFF, 4096, r->lkey);
    qt_qp_post_recv(r->t, &r->b, 0x60, &rs, 1);
    len = roce_build(r, r->frame, OP_SEND_ONLY, r->b.qpn, ROCE_PSN_A, NULL, 0,
                     data, sizeof(data));
    ip = r->frame + 14;
    bth = roce_bth(r, r->frame);
    if (v6) {
        stl_be_p(ip, 6u << 28 | 0xb8u << 20 | 0xabcde);
        ip[7] = 3;
    } else {
        ip[1] = 0xb8;
        ip[8] = 3;
        roce_ip4_csum(r->frame);
    }
    stw_be_p(bth - 2, 0x1234);          /* UDP checksum */
    bth[4] = 0xaa;                      /* BTH reserved byte */
    qt_wire_send(r->t, r->frame, len);
    qt_cq_expect(r->t, &r->cq, r->b.qpn, QHCA_WC_RECV, QHCA_WC_SUCCESS);
    roce_expect_ack(r, r->b.qpn, r->a.qpn, ROCE_PSN_A, 1, &p);

    if (!v6) {
        len = roce_build(r, r->frame, OP_SEND_ONLY, r->b.qpn, ROCE_PSN_A + 1,
                         NULL, 0, data, sizeof(data));
        stw_be_p(r->frame + 14 + 4, 0x4242);
        roce_ip4_csum(r->frame);
        qt_wire_send(r->t, r->frame, len);
        qt_wait_counter(r->t, QHCA_CNT_ICRC_ERRORS, 1);
    }
    roce_finish(r, !v6);
}

/*
 * UC: a SEND between two UC QPs through the wire has the UC opcode and
 * asks for no ACK; reflected, it completes a receive, and nothing
 * answers it.
 */
static void test_uc(void)
{
    Roce *r = roce_start(false);
    struct qhca_sq_wqe w = {
        .wr_id = cpu_to_le64(0x80),
        .opcode = QHCA_WR_SEND,
        .flags = QHCA_WQE_F_SIGNALED,
        .num_sge = 1,
    };
    QhcaPath path = qt_rc_path;
    uint8_t data[100];
    struct qhca_sge ss, rs;
    QhcaQpSpec spec;
    QhcaQp a, b;
    QtRoce p;
    size_t len;

    if (!r) {
        return;
    }
    spec = qt_rc_spec(r->pdn, r->uar, &r->cq, &r->cq);
    spec.type = QHCA_QPT_UC;
    g_assert_cmpuint(qt_qp_try_create(r->t, &a, &spec), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(qt_qp_try_create(r->t, &b, &spec), ==, QHCA_AQ_SUCCESS);
    roce_av(r, &a);
    roce_av(r, &b);
    path.rc = false;
    path.dlid = 0;
    path.access = QHCA_ACCESS_REMOTE_WRITE;
    path.sq_psn = path.rq_psn = 0x500;
    qt_connect(r->t, a.qpn, b.qpn, &path);
    qt_connect(r->t, b.qpn, a.qpn, &path);

    memset(data, 0x3c, sizeof(data));
    qtest_memwrite(r->t->qts, r->buf, data, sizeof(data));
    ss = qt_sge(r->buf, sizeof(data), r->lkey);
    rs = qt_sge(r->buf + ROCE_RECV_OFF, 4096, r->lkey);
    qt_qp_post_recv(r->t, &b, 0x81, &rs, 1);
    qt_qp_post_send(r->t, &a, &w, &ss, 1);
    qt_qp_ring_sq(r->t, &a);
    len = roce_expect_frame(r, &p);
    roce_check_headers(r, r->frame, len, &p, a.qpn, b.qpn);
    g_assert_cmphex(p.opcode, ==, OP_UC | OP_SEND_ONLY);
    g_assert(!p.ackreq);
    g_assert_cmphex(p.psn, ==, 0x500);
    g_assert_cmpuint(p.ib_len, ==, QT_BTH_LEN + sizeof(data));
    g_assert(!memcmp(r->frame + p.ib + QT_BTH_LEN, data, sizeof(data)));
    qt_cq_expect(r->t, &r->cq, a.qpn, QHCA_WC_SEND, QHCA_WC_SUCCESS);
    roce_reflect(r, r->frame, &p);
    qt_cq_expect(r->t, &r->cq, b.qpn, QHCA_WC_RECV, QHCA_WC_SUCCESS);

    roce_finish(r, 0);
}

/*
 * XRC: an XRC INI QP's SEND leaves with the XRC opcode and the XRCETH
 * (the target's SRQ, from the WQE) before the payload; the XRC ACK the
 * test answers with, which has no XRCETH, completes it.
 */
static void test_xrc(void)
{
    Roce *r = roce_start(false);
    struct qhca_sq_wqe w = {
        .wr_id = cpu_to_le64(0x90),
        .opcode = QHCA_WR_SEND,
        .flags = QHCA_WQE_F_SIGNALED,
        .num_sge = 1,
        .xrc_srqn = cpu_to_le32(XRC_PEER_SRQN),
    };
    QhcaPath path = qt_rc_path;
    uint8_t data[48], aeth[4];
    struct qhca_sge ss;
    QhcaQpSpec spec;
    QhcaQp ini;
    QtRoce p;
    size_t len;

    if (!r) {
        return;
    }
    spec = qt_rc_spec(r->pdn, r->uar, &r->cq, &r->cq);
    spec.type = QHCA_QPT_XRC_INI;
    spec.rq_log2 = spec.rq_stride_log2 = 0;
    spec.recv_cqn = 0;
    g_assert_cmpuint(qt_qp_try_create(r->t, &ini, &spec), ==,
                     QHCA_AQ_SUCCESS);
    roce_av(r, &ini);
    path.dlid = 0;
    path.sq_psn = 0x600;
    qt_connect(r->t, ini.qpn, r->b.qpn, &path);

    memset(data, 0xd7, sizeof(data));
    qtest_memwrite(r->t->qts, r->buf, data, sizeof(data));
    ss = qt_sge(r->buf, sizeof(data), r->lkey);
    qt_qp_post_send(r->t, &ini, &w, &ss, 1);
    qt_qp_ring_sq(r->t, &ini);
    len = roce_expect_frame(r, &p);
    roce_check_headers(r, r->frame, len, &p, ini.qpn, r->b.qpn);
    g_assert_cmphex(p.opcode, ==, OP_XRC | OP_SEND_ONLY);
    g_assert(p.ackreq);
    g_assert_cmphex(p.psn, ==, 0x600);
    g_assert_cmpuint(p.ib_len, ==, QT_BTH_LEN + 4 + sizeof(data));
    g_assert_cmphex(ldl_be_p(r->frame + p.ib + QT_BTH_LEN), ==,
                    XRC_PEER_SRQN);
    g_assert(!memcmp(r->frame + p.ib + QT_BTH_LEN + 4, data, sizeof(data)));

    stl_be_p(aeth, 0x1f000001);         /* ACK, no credits, MSN 1 */
    len = roce_build(r, r->frame, OP_XRC | OP_ACK, ini.qpn, 0x600, aeth,
                     sizeof(aeth), NULL, 0);
    qt_wire_send(r->t, r->frame, len);
    qt_cq_expect(r->t, &r->cq, ini.qpn, QHCA_WC_SEND, QHCA_WC_SUCCESS);

    roce_finish(r, 0);
}

/* ------------------------------------------------------------------ */
/* Hostile frames                                                      */

typedef enum RoceFate {
    FATE_ROCE_DROP,             /* RoCEv2 for the port, refused */
    FATE_ICRC,                  /* refused for its ICRC */
    FATE_NIC,                   /* not RoCEv2: the NIC, which has no QP */
    FATE_RUNT,                  /* not even an Ethernet header */
    FATE_GIANT,                 /* beyond the port's largest frame */
} RoceFate;

/*
 * Put @f on the wire and wait until the port has dealt with it as @fate
 * says, then check that every counter moved as it should and no other.
 */
static void roce_hostile(Roce *r, const char *what, const uint8_t *f,
                         size_t len, RoceFate fate)
{
    struct qhca_counters c0 = qt_counters(r->t), c1;
    uint64_t drops = le64_to_cpu(c0.cnt[QHCA_CNT_ROCE_RX_DROPS]);
    uint64_t icrc = le64_to_cpu(c0.cnt[QHCA_CNT_ICRC_ERRORS]);
    uint64_t rx = le64_to_cpu(c0.cnt[QHCA_CNT_ETH_RX_FRAMES]);
    uint64_t nobuf = le64_to_cpu(c0.cnt[QHCA_CNT_ETH_RX_NO_BUF]);

    g_test_message("hostile frame: %s (%zu bytes)", what, len);
    qt_wire_send(r->t, f, len);
    switch (fate) {
    case FATE_ROCE_DROP:
    case FATE_ICRC:
        qt_wait_counter(r->t, QHCA_CNT_ROCE_RX_DROPS, drops + 1);
        drops++;
        icrc += fate == FATE_ICRC;
        break;
    case FATE_NIC:
    case FATE_GIANT:
        qt_wait_counter(r->t, QHCA_CNT_ETH_RX_NO_BUF, nobuf + 1);
        nobuf++;
        break;
    case FATE_RUNT:
        qt_wait_counter(r->t, QHCA_CNT_ETH_RX_FRAMES, rx + 1);
        break;
    }
    c1 = qt_counters(r->t);
    g_assert_cmpuint(le64_to_cpu(c1.cnt[QHCA_CNT_ROCE_RX_DROPS]), ==, drops);
    g_assert_cmpuint(le64_to_cpu(c1.cnt[QHCA_CNT_ICRC_ERRORS]), ==, icrc);
    g_assert_cmpuint(le64_to_cpu(c1.cnt[QHCA_CNT_ETH_RX_FRAMES]), ==, rx + 1);
    g_assert_cmpuint(le64_to_cpu(c1.cnt[QHCA_CNT_ETH_RX_NO_BUF]), ==, nobuf);
    g_assert_cmpuint(le64_to_cpu(c1.cnt[QHCA_CNT_RX_PACKETS]), ==,
                     le64_to_cpu(c0.cnt[QHCA_CNT_RX_PACKETS]));
}

/*
 * Length @ulen for the UDP header of @f and the IP header before it
 * (whose checksum is made right), as a sender that means it would.
 */
static void roce_set_lengths(Roce *r, uint8_t *f, size_t ulen)
{
    uint8_t *udp = roce_bth(r, f) - 8;

    stw_be_p(udp + 4, ulen);
    if (r->v6) {
        stw_be_p(f + 14 + 4, ulen);
    } else {
        stw_be_p(f + 14 + 2, 20 + ulen);
        roce_ip4_csum(f);
    }
}

static void test_hostile(void)
{
    static uint8_t f[ROCE_FRAME_MAX], big[ROCE_FRAME_MAX];
    static uint8_t junk[QHCA_ETH_MAX_MTU];
    static const size_t cuts[] = {
        1, 6, 12, 13,                   /* in the Ethernet header */
        14, 20, 33, 34, 41,             /* IP, UDP before its port */
        42, 46, 50, 54, 58, 60, 90, 117 /* UDP, BTH, payload, ICRC */
    };
    Roce *r;
    uint8_t data[64] = { 0x11 }, hdr[32] = { 0 };
    struct qhca_sge rs;
    size_t len, glen, i;
    QtRoceAddr a;
    uint8_t ib[64];
    QtRoce p;

    r = roce_start(false);
    if (!r) {
        return;
    }
    rs = qt_sge(r->buf + ROCE_RECV_OFF, 4096, r->lkey);
    qt_qp_post_recv(r->t, &r->b, 0x40, &rs, 1);
    /* The good frame the others are made from: 14 + 20 + 8 + 12 + 64 + 4. */
    glen = roce_build(r, f, OP_SEND_ONLY, r->b.qpn, ROCE_PSN_A, NULL, 0,
                      data, sizeof(data));
    g_assert_cmpuint(glen, ==, 122);

    /* Cut at and around every header boundary. */
    for (i = 0; i < ARRAY_SIZE(cuts); i++) {
        g_autofree char *what = g_strdup_printf("cut to %zu", cuts[i]);

        roce_hostile(r, what, f, cuts[i],
                     cuts[i] < 14 ? FATE_RUNT :
                     cuts[i] < 42 ? FATE_NIC : FATE_ROCE_DROP);
    }

    /* Lengths that say the packet ends early, ICRC made right. */
    memcpy(big, f, glen);
    roce_set_lengths(r, big, 8 + 6);
    qt_roce_seal(big, glen);
    roce_hostile(r, "half a BTH", big, glen, FATE_ROCE_DROP);
    memcpy(big, f, glen);
    roce_set_lengths(r, big, 8 + QT_BTH_LEN);
    roce_hostile(r, "BTH without ICRC", big, glen, FATE_ROCE_DROP);
    len = roce_build(r, big, OP_WRITE_ONLY, r->b.qpn, ROCE_PSN_A, hdr, 8,
                     NULL, 0);
    roce_hostile(r, "half a RETH", big, len, FATE_ROCE_DROP);
    len = roce_build(r, big, OP_ACK, r->b.qpn, ROCE_PSN_A, NULL, 0, NULL, 0);
    roce_hostile(r, "ACK without AETH", big, len, FATE_ROCE_DROP);

    /* Checksums and lengths that lie. */
    memcpy(big, f, glen);
    big[14 + 10] ^= 0x40;
    roce_hostile(r, "bad IPv4 header checksum", big, glen, FATE_ROCE_DROP);
    memcpy(big, f, glen);
    big[glen - 1] ^= 0x01;
    roce_hostile(r, "bad ICRC", big, glen, FATE_ICRC);
    memcpy(big, f, glen);
    big[glen - 30] ^= 0x80;
    roce_hostile(r, "payload changed under the ICRC", big, glen, FATE_ICRC);
    memcpy(big, f, glen);
    stw_be_p(roce_bth(r, big) - 4, glen - 14 - 20 - 4);
    qt_roce_seal(big, glen);
    roce_hostile(r, "UDP length short of the IP's", big, glen,
                 FATE_ROCE_DROP);
    memcpy(big, f, glen);
    stw_be_p(roce_bth(r, big) - 4, glen - 14 - 20 + 4);
    roce_hostile(r, "UDP length past the IP's", big, glen, FATE_ROCE_DROP);
    memcpy(big, f, glen);
    stw_be_p(big + 14 + 2, 2000);
    roce_ip4_csum(big);
    roce_hostile(r, "IPv4 length past the frame", big, glen, FATE_ROCE_DROP);
    memcpy(big, f, glen);
    stw_be_p(big + 14 + 6, 0x2000);
    roce_ip4_csum(big);
    roce_hostile(r, "IPv4 fragment (MF)", big, glen, FATE_ROCE_DROP);
    /* IPv4 options: four NOPs, everything after them moved. */
    memcpy(big, f, 34);
    memset(big + 34, 1, 4);
    memcpy(big + 38, f + 34, glen - 34);
    big[14] = 0x46;
    stw_be_p(big + 14 + 2, glen - 14 + 4);
    roce_ip4_csum(big);
    roce_hostile(r, "IPv4 options", big, glen + 4, FATE_ROCE_DROP);

    /* BTH fields a sender may not use, each with a good ICRC. */
    memcpy(big, f, glen);
    roce_bth(r, big)[0] = 0x18;
    qt_roce_seal(big, glen);
    roce_hostile(r, "unknown RC opcode 0x18", big, glen, FATE_ROCE_DROP);
    memcpy(big, f, glen);
    roce_bth(r, big)[0] = OP_UD | 0x00;
    qt_roce_seal(big, glen);
    roce_hostile(r, "UD SEND_FIRST", big, glen, FATE_ROCE_DROP);
    memcpy(big, f, glen);
    roce_bth(r, big)[0] = OP_UC | OP_READ_REQUEST;
    qt_roce_seal(big, glen);
    roce_hostile(r, "UC READ request", big, glen, FATE_ROCE_DROP);
    memcpy(big, f, glen);
    roce_bth(r, big)[0] = OP_CNP;
    qt_roce_seal(big, glen);
    roce_hostile(r, "CNP", big, glen, FATE_ROCE_DROP);
    memcpy(big, f, glen);
    roce_bth(r, big)[1] |= 0x01;
    qt_roce_seal(big, glen);
    roce_hostile(r, "BTH TVer 1", big, glen, FATE_ROCE_DROP);
    memcpy(big, f, glen);
    stw_be_p(roce_bth(r, big) + 2, 0x8001);
    qt_roce_seal(big, glen);
    roce_hostile(r, "P_Key of another partition", big, glen, FATE_ROCE_DROP);
    len = roce_build(r, big, OP_SEND_ONLY, r->b.qpn, ROCE_PSN_A, NULL, 0,
                     NULL, 0);
    roce_bth(r, big)[1] |= 3 << 4;
    qt_roce_seal(big, len);
    roce_hostile(r, "pad longer than the payload", big, len, FATE_ROCE_DROP);
    len = roce_build(r, big, OP_ACK, r->b.qpn, ROCE_PSN_A, hdr, 4, data, 8);
    roce_hostile(r, "ACK with a payload", big, len, FATE_ROCE_DROP);
    len = roce_build(r, big, OP_READ_REQUEST, r->b.qpn, ROCE_PSN_A, hdr, 16,
                     data, 4);
    roce_hostile(r, "READ request with a payload", big, len, FATE_ROCE_DROP);
    len = roce_build(r, big, OP_SEND_ONLY, r->b.qpn, ROCE_PSN_A, NULL, 0,
                     junk, 4100);
    roce_hostile(r, "payload over 4096 bytes", big, len, FATE_ROCE_DROP);
    len = roce_build(r, big, OP_SEND_ONLY, r->b.qpn, ROCE_PSN_A, NULL, 0,
                     junk, QHCA_ETH_MAX_MTU - 20 - 8 - 12 - 4);
    g_assert_cmpuint(len, ==, 14 + QHCA_ETH_MAX_MTU);
    roce_hostile(r, "jumbo frame, payload over 4096 bytes", big, len,
                 FATE_ROCE_DROP);

    /* Good frames the transport cannot use. */
    len = roce_build(r, big, OP_SEND_ONLY, 0x777, ROCE_PSN_A, NULL, 0,
                     data, sizeof(data));
    roce_hostile(r, "a QP that does not exist", big, len, FATE_ROCE_DROP);

    /*
     * A VLAN tag: not the port's RoCEv2 (it has no VLANs), so the NIC's,
     * for a VLAN device of the guest; it has no RAW_ETH QP here.
     */
    a = qt_roce_addr(false);
    a.vlan = 5;
    len = qt_bth(ib, OP_SEND_ONLY, false, true, 0, r->b.qpn, ROCE_PSN_A);
    memcpy(ib + len, data, 16);
    len = qt_roce_frame(&a, ib, len + 16, big);
    roce_hostile(r, "802.1Q tag", big, len, FATE_NIC);

    /* Giants and runts, whatever they hold. */
    memset(big, 0, sizeof(big));
    memcpy(big, f, glen);
    roce_hostile(r, "9 KiB frame", big, 9 * 1024, FATE_GIANT);
    roce_hostile(r, "runt", f, 10, FATE_RUNT);

    g_assert_cmpuint(roce_count(r, QHCA_CNT_ICRC_ERRORS), ==, 2);
    qt_cq_assert_empty(r->t, &r->cq);
    roce_assert_quiet(r);

    /* Still at work: the good frame is received and acknowledged. */
    qt_wire_send(r->t, f, glen);
    qt_cq_expect(r->t, &r->cq, r->b.qpn, QHCA_WC_RECV, QHCA_WC_SUCCESS);
    roce_expect_ack(r, r->b.qpn, r->a.qpn, ROCE_PSN_A, 1, &p);
    qt_cq_assert_empty(r->t, &r->cq);
    roce_stop(r);
}

/* The IPv6 header's own ways to be wrong, and cuts through it. */
static void test_hostile_ipv6(void)
{
    static const size_t cuts[] = { 14, 20, 53, 61, 62, 66, 74, 75, 120 };
    static uint8_t f[ROCE_FRAME_MAX], big[ROCE_FRAME_MAX];
    Roce *r = roce_start(true);
    uint8_t data[64] = { 0x66 };
    struct qhca_sge rs;
    size_t glen, i;
    QtRoce p;

    if (!r) {
        return;
    }
    rs = qt_sge(r->buf + ROCE_RECV_OFF, 4096, r->lkey);
    qt_qp_post_recv(r->t, &r->b, 0x70, &rs, 1);
    glen = roce_build(r, f, OP_SEND_ONLY, r->b.qpn, ROCE_PSN_A, NULL, 0,
                      data, sizeof(data));
    g_assert_cmpuint(glen, ==, 14 + 40 + 8 + 12 + 64 + 4);

    for (i = 0; i < ARRAY_SIZE(cuts); i++) {
        g_autofree char *what = g_strdup_printf("IPv6 cut to %zu", cuts[i]);

        /* Before the UDP port is whole it is not RoCEv2: the NIC's. */
        roce_hostile(r, what, f, cuts[i],
                     cuts[i] < 14 + 40 + 8 ? FATE_NIC : FATE_ROCE_DROP);
    }
    memcpy(big, f, glen);
    stw_be_p(big + 14 + 4, glen - 14 - 40 + 4);
    roce_hostile(r, "IPv6 payload length past the frame", big, glen,
                 FATE_ROCE_DROP);
    memcpy(big, f, glen);
    stw_be_p(big + 14 + 4, glen - 14 - 40 - 4);
    roce_hostile(r, "IPv6 payload length short of the UDP's", big, glen,
                 FATE_ROCE_DROP);
    memcpy(big, f, glen);
    big[14 + 6] = 0;                    /* a hop-by-hop options header */
    roce_hostile(r, "IPv6 extension header", big, glen, FATE_NIC);
    memcpy(big, f, glen);
    big[14] = 0x45;
    roce_hostile(r, "IPv4 header under the IPv6 EtherType", big, glen,
                 FATE_NIC);
    memcpy(big, f, glen);
    big[14 + 20] ^= 0x01;               /* the source address */
    roce_hostile(r, "IPv6 source changed under the ICRC", big, glen,
                 FATE_ICRC);

    qt_cq_assert_empty(r->t, &r->cq);
    roce_assert_quiet(r);
    qt_wire_send(r->t, f, glen);
    qt_cq_expect(r->t, &r->cq, r->b.qpn, QHCA_WC_RECV, QHCA_WC_SUCCESS);
    roce_expect_ack(r, r->b.qpn, r->a.qpn, ROCE_PSN_A, 1, &p);
    roce_stop(r);
}

/* ------------------------------------------------------------------ */
/* Pacing on the wire                                                   */

/*
 * The unacknowledged packets an RC requester of an Ethernet port has in
 * flight: the device's QHCA_ETH_MAX_UNACKED (qhca-dp.h), which this test
 * pins.
 */
#define ROCE_WINDOW         64
/* How long a port that has stopped must stay quiet to count as stopped. */
#define ROCE_QUIET_US       (500 * 1000)

#define OP_WRITE_FIRST      0x06
#define OP_WRITE_MIDDLE     0x07
#define OP_WRITE_LAST       0x08
#define OP_READ_RESP_FIRST  0x0d
#define OP_READ_RESP_MIDDLE 0x0e
#define OP_READ_RESP_LAST   0x0f

/* The peer acknowledges QP @qpn's packets up to @psn, @msn messages done. */
static void roce_ack(Roce *r, uint32_t qpn, uint32_t psn, uint32_t msn)
{
    uint8_t aeth[4];
    size_t len;

    stl_be_p(aeth, 0x1f000000 | msn);   /* ACK, no credits */
    len = roce_build(r, r->frame, OP_ACK, qpn, psn & 0xffffff, aeth,
                     sizeof(aeth), NULL, 0);
    qt_wire_send(r->t, r->frame, len);
}

static void roce_ack_a(Roce *r, uint32_t psn, uint32_t msn)
{
    roce_ack(r, r->a.qpn, psn, msn);
}

/*
 * Packets @first..@first + @n - 1 of A's WRITE of @npkts packets come out,
 * in order, the last of them with AckReq, and then nothing until an ACK.
 */
static void roce_expect_burst(Roce *r, uint32_t first, uint32_t n,
                              uint32_t npkts)
{
    uint32_t i;
    QtRoce p;

    for (i = first; i < first + n; i++) {
        size_t len = roce_expect_frame(r, &p);

        roce_check_headers(r, r->frame, len, &p, r->a.qpn, r->b.qpn);
        g_assert_cmphex(p.psn, ==, (ROCE_PSN_A + i) & 0xffffff);
        g_assert_cmphex(p.opcode, ==, i == 0 ? OP_WRITE_FIRST :
                        i + 1 == npkts ? OP_WRITE_LAST : OP_WRITE_MIDDLE);
    }
    g_assert(p.ackreq);
    g_assert_cmpint(qt_wire_recv(r->t, r->frame, sizeof(r->frame),
                                 ROCE_QUIET_US), ==, -1);
}

/*
 * The requester's window: an RDMA WRITE of two windows and one packet,
 * the peer holding its ACKs back.  Exactly a window of packets comes out,
 * the one that fills it asking for an ACK, then nothing; an ACK of the
 * window lets exactly the next window out, and so on; the last ACK
 * completes the WRITE.  Nothing is dropped at the transmit queue.
 */
static void test_window(void)
{
    const uint32_t npkts = 2 * ROCE_WINDOW + 1;
    const uint32_t n = (npkts - 1) * 1024 + 100;    /* MTU 1024 */
    struct qhca_sq_wqe w = {
        .wr_id = cpu_to_le64(0x61),
        .opcode = QHCA_WR_RDMA_WRITE,
        .flags = QHCA_WQE_F_SIGNALED,
        .num_sge = 1,
    };
    struct qhca_sge ss;
    uint64_t src;
    Roce *r;

    r = roce_start(false);
    if (!r) {
        return;
    }
    src = guest_alloc(&r->t->alloc, n);
    ss = qt_sge(src, n, r->lkey);
    w.remote_addr = cpu_to_le64(r->buf + ROCE_WRITE_OFF);
    w.rkey = cpu_to_le32(r->lkey);
    qt_qp_post_send(r->t, &r->a, &w, &ss, 1);
    qt_qp_ring_sq(r->t, &r->a);

    roce_expect_burst(r, 0, ROCE_WINDOW, npkts);
    roce_ack_a(r, ROCE_PSN_A + ROCE_WINDOW - 1, 0);
    roce_expect_burst(r, ROCE_WINDOW, ROCE_WINDOW, npkts);
    /* Half a window acknowledged: half a window more. */
    roce_ack_a(r, ROCE_PSN_A + ROCE_WINDOW + ROCE_WINDOW / 2 - 1, 0);
    roce_expect_burst(r, 2 * ROCE_WINDOW, 1, npkts);
    roce_ack_a(r, ROCE_PSN_A + npkts - 1, 1);
    qt_cq_expect(r->t, &r->cq, r->a.qpn, QHCA_WC_RDMA_WRITE,
                 QHCA_WC_SUCCESS);
    g_assert_cmpuint(roce_count(r, QHCA_CNT_WIRE_DROPS), ==, 0);
    roce_finish(r, 0);
}

/*
 * The READ responder on a slow wire: a READ of 4 MiB (4096 responses,
 * eight times the port's transmit queue), read by the peer slowly.  The
 * responder stops at the full queue and goes on as it drains: every
 * response comes, in order, and none is dropped (WIRE_DROPS stays 0).
 */
#define ROCE_BIG_READ       (4 * 1024 * 1024)

/*
 * The peer asks B, at PSN ROCE_PSN_A, for a READ of ROCE_BIG_READ bytes
 * of guest memory allocated for it; 4096 responses at MTU 1024.
 */
static void roce_big_read(Roce *r)
{
    uint64_t src = guest_alloc(&r->t->alloc, ROCE_BIG_READ);
    uint8_t reth[16];
    size_t len;

    stq_be_p(reth, src);
    stl_be_p(reth + 8, r->lkey);
    stl_be_p(reth + 12, ROCE_BIG_READ);
    len = roce_build(r, r->frame, OP_READ_REQUEST, r->b.qpn, ROCE_PSN_A,
                     reth, sizeof(reth), NULL, 0);
    qt_wire_send(r->t, r->frame, len);
}

static void test_read_paced(void)
{
    const uint32_t npkts = ROCE_BIG_READ / 1024;
    uint64_t sent;
    QtRoce p;
    size_t len;
    uint32_t i;
    Roce *r;

    r = roce_start(false);
    if (!r) {
        return;
    }
    roce_big_read(r);

    /* The peer reads nothing for a while: the device must stop. */
    g_usleep(ROCE_QUIET_US);
    sent = roce_count(r, QHCA_CNT_ETH_TX_FRAMES);
    g_test_message("%" PRIu64 " of %u responses sent while the peer slept",
                   sent, npkts);
    g_assert_cmpuint(sent, <, npkts);
    g_assert_cmpuint(roce_count(r, QHCA_CNT_WIRE_DROPS), ==, 0);

    for (i = 0; i < npkts; i++) {
        if (i % 512 == 511) {
            g_usleep(ROCE_QUIET_US / 10);
        }
        len = roce_expect_frame(r, &p);
        g_assert_cmphex(p.psn, ==, (ROCE_PSN_A + i) & 0xffffff);
        g_assert_cmphex(p.opcode, ==, i == 0 ? OP_READ_RESP_FIRST :
                        i + 1 == npkts ? OP_READ_RESP_LAST :
                        OP_READ_RESP_MIDDLE);
        g_assert_cmpuint(len, >, 1024);
    }
    g_assert_cmpuint(roce_count(r, QHCA_CNT_WIRE_DROPS), ==, 0);
    g_assert_cmpuint(roce_count(r, QHCA_CNT_ETH_TX_FRAMES), ==, npkts);
    roce_finish(r, 0);
}

/*
 * Frames come in in the order they were sent, however the device's receive
 * queue fills and drains.  A READ of 4 MiB to B keeps the engine thread
 * busy answering while a burst of 4096 one-packet RDMA WRITEs to B comes,
 * into a receive queue of one frame (x-rx-queue): the netdev reads many
 * frames at a time, the queue is full whenever the engine thread holds
 * the device, and a frame the device said yes to after room was made used
 * to overtake the frames QEMU held for the full queue: B dropped it, out
 * of sequence, and NAKed (7 of 14 runs of this case before the fix).  B
 * must take every WRITE in order: the READ's responses, then only ACKs,
 * the last for the last PSN, never a NAK.
 */
#define ROCE_ORDER_WRITES   4096
static void test_rx_order(void)
{
    const uint32_t nread = ROCE_BIG_READ / 1024;
    const uint32_t first = (ROCE_PSN_A + nread) & 0xffffff;
    const uint32_t last = (first + ROCE_ORDER_WRITES - 1) & 0xffffff;
    uint8_t reth[16], pay[1024];
    uint32_t i, acks = 0, responses = 0;
    QtRoce p;
    Roce *r;

    r = roce_start_props(false, ",x-rx-queue=1");
    if (!r) {
        return;
    }
    /* The engine thread busy answering a READ of 4 MiB meanwhile. */
    roce_big_read(r);
    stq_be_p(reth, r->buf + ROCE_WRITE_OFF);
    stl_be_p(reth + 8, r->lkey);
    stl_be_p(reth + 12, sizeof(pay));
    for (i = 0; i < ROCE_ORDER_WRITES; i++) {
        size_t len;

        memset(pay, i, sizeof(pay));
        len = roce_build(r, r->frame, OP_WRITE_ONLY, r->b.qpn,
                         (first + i) & 0xffffff, reth, sizeof(reth),
                         pay, sizeof(pay));
        qt_wire_send(r->t, r->frame, len);
    }
    for (;;) {
        roce_expect_frame(r, &p);
        g_assert_cmphex(p.qpn, ==, r->a.qpn);
        if (p.opcode != OP_ACK) {
            /* The READ's responses, all before the WRITEs' ACKs. */
            g_assert_cmpuint(acks, ==, 0);
            g_assert_cmphex(p.psn, ==, (ROCE_PSN_A + responses) & 0xffffff);
            responses++;
            continue;
        }
        /* AETH syndrome: an ACK (0b000xxxxx), never a NAK. */
        g_assert_cmphex(r->frame[p.ib + QT_BTH_LEN] & 0xe0, ==, 0);
        acks++;
        if (p.psn == last) {
            break;
        }
    }
    g_test_message("%u READ responses, %u ACKs for %u WRITEs", responses,
                   acks, ROCE_ORDER_WRITES);
    g_assert_cmpuint(responses, ==, nread);
    /* The last WRITE's data is the last in place. */
    g_assert_cmphex(qtest_readb(r->t->qts, r->buf + ROCE_WRITE_OFF), ==,
                    (ROCE_ORDER_WRITES - 1) & 0xff);
    roce_finish(r, 0);
}

/* The next frame is a one-packet RDMA WRITE to QP @dest with PSN @psn. */
static void roce_expect_write(Roce *r, uint32_t dest, uint32_t psn)
{
    QtRoce p;

    roce_expect_frame(r, &p);
    g_assert_cmphex(p.opcode, ==, OP_WRITE_ONLY);
    g_assert_cmphex(p.qpn, ==, dest);
    g_assert_cmphex(p.psn, ==, psn & 0xffffff);
}

/*
 * Post a one-packet RDMA WRITE on @qp, to its peer's MR, and read its
 * frame (PSN @psn, to QP @dest) off the wire.
 */
static void roce_write_one(Roce *r, QhcaQp *qp, uint64_t wr_id, uint32_t dest,
                           uint32_t psn)
{
    struct qhca_sq_wqe w = {
        .wr_id = cpu_to_le64(wr_id),
        .opcode = QHCA_WR_RDMA_WRITE,
        .flags = QHCA_WQE_F_SIGNALED,
        .num_sge = 1,
        .remote_addr = cpu_to_le64(r->buf + ROCE_WRITE_OFF),
        .rkey = cpu_to_le32(r->lkey),
    };
    struct qhca_sge ss = qt_sge(r->buf, 100, r->lkey);

    qt_qp_post_send(r->t, qp, &w, &ss, 1);
    qt_qp_ring_sq(r->t, qp);
    roce_expect_write(r, dest, psn);
}

/* 4.096 us << 14: the transport timeout of roce_start()'s QPs. */
#define ROCE_TIMEOUT_NS     (4096ll << 14)

/*
 * Three transport periods pass while the device does not run, as on a
 * host that leaves QEMU waiting: the VM stopped, the clock moved, the VM
 * running again.  The timers that came due meanwhile run after "cont",
 * late, and before any command the test sends after it.
 */
static void roce_absent(Roce *r)
{
    qtest_qmp_assert_success(r->t->qts, "{ 'execute': 'stop' }");
    qtest_clock_step(r->t->qts, 3 * ROCE_TIMEOUT_NS);
    qtest_qmp_assert_success(r->t->qts, "{ 'execute': 'cont' }");
}

/*
 * The transport timer of a device that did not run when it was due,
 * with the peer's ACK perhaps already queued at the port: A neither
 * resends nor spends a retry then; it listens one more period, and an
 * ACK in it completes the WRITE with no retry at all.  Only once per
 * timeout: if the next expiry is late too it counts, and A resends, so
 * that a silent peer still ends in RETRY_EXC_ERR.  B's WRITE, rung after
 * A's timer ran, is the barrier: the engine takes A's timer before B's
 * doorbell, and B's frame leaves after any retransmission of A's.
 */
static void test_timer_late(void)
{
    Roce *r;

    r = roce_start(false);
    if (!r) {
        return;
    }
    roce_write_one(r, &r->a, 0x71, r->b.qpn, ROCE_PSN_A);
    roce_absent(r);
    roce_write_one(r, &r->b, 0x72, r->a.qpn, ROCE_PSN_B);
    roce_ack_a(r, ROCE_PSN_A, 1);
    qt_cq_expect(r->t, &r->cq, r->a.qpn, QHCA_WC_RDMA_WRITE, QHCA_WC_SUCCESS);
    roce_ack(r, r->b.qpn, ROCE_PSN_B, 1);
    qt_cq_expect(r->t, &r->cq, r->b.qpn, QHCA_WC_RDMA_WRITE, QHCA_WC_SUCCESS);
    g_assert_cmpuint(roce_count(r, QHCA_CNT_RETRIES), ==, 0);

    /* Late twice: the second expiry is a timeout. */
    roce_write_one(r, &r->a, 0x73, r->b.qpn, ROCE_PSN_A + 1);
    roce_absent(r);
    roce_write_one(r, &r->b, 0x74, r->a.qpn, ROCE_PSN_B + 1);
    roce_absent(r);
    /* A resends; B, late for the first time, listens on. */
    roce_expect_write(r, r->b.qpn, ROCE_PSN_A + 1);
    qt_wait_counter(r->t, QHCA_CNT_RETRIES, 1);
    roce_ack_a(r, ROCE_PSN_A + 1, 2);
    qt_cq_expect(r->t, &r->cq, r->a.qpn, QHCA_WC_RDMA_WRITE, QHCA_WC_SUCCESS);
    roce_ack(r, r->b.qpn, ROCE_PSN_B + 1, 2);
    qt_cq_expect(r->t, &r->cq, r->b.qpn, QHCA_WC_RDMA_WRITE, QHCA_WC_SUCCESS);
    g_assert_cmpuint(roce_count(r, QHCA_CNT_RETRIES), ==, 1);
    roce_finish(r, 0);
}

/*
 * On-demand paging (1.8) as the peer sees it: an RDMA WRITE into an
 * absent page of B's ODP MR is answered with an RNR NAK (B's
 * min_rnr_timer, the request's PSN), and so is the same WRITE sent again
 * while the fault waits, without a second fault; once the page is mapped
 * and the fault resumed, the WRITE sent a third time is ACKed and lands.
 * This is what an rxe requester meets, and retries on its RNR timer.
 */
static void test_odp_rnr(void)
{
    struct qhca_cmd_reg_mr c;
    struct qhca_page_fault_info info;
    uint8_t reth[16], data[64];
    const uint64_t iova = 0x7f5500000000ull;
    uint64_t page, e;
    uint32_t index, key;
    size_t len;
    QtRoce p;
    Roce *r;
    int i;

    r = roce_start(false);
    if (!r) {
        return;
    }
    c = (struct qhca_cmd_reg_mr) {
        .iova = cpu_to_le64(iova),
        .length = cpu_to_le64(4 * 4096),
        .pdn = cpu_to_le32(r->pdn),
        .access = QHCA_ACCESS_LOCAL_WRITE | QHCA_ACCESS_REMOTE_WRITE,
        .key = 0x0d,
        .page_shift = 12,
        .flags = QHCA_MR_F_ODP,
    };
    g_assert_cmpuint(qt_cmd(r->t, QHCA_CMD_REG_MR, &c, sizeof(c), &index),
                     ==, QHCA_AQ_SUCCESS);
    key = index << 8 | c.key;
    for (i = 0; i < sizeof(data); i++) {
        data[i] = 0x80 + i;
    }
    stq_be_p(reth, iova + 4096 + 0x20);
    stl_be_p(reth + 8, key);
    stl_be_p(reth + 12, sizeof(data));

    for (i = 0; i < 2; i++) {
        uint8_t *ib;

        len = roce_build(r, r->frame, OP_WRITE_ONLY, r->b.qpn, ROCE_PSN_A,
                         reth, sizeof(reth), data, sizeof(data));
        qt_wire_send(r->t, r->frame, len);
        len = roce_expect_frame(r, &p);
        ib = r->frame + p.ib;
        roce_check_headers(r, r->frame, len, &p, r->b.qpn, r->a.qpn);
        g_assert_cmphex(p.opcode, ==, OP_ACK);
        g_assert_cmphex(p.psn, ==, ROCE_PSN_A);
        g_assert_cmphex(ib[12], ==, QT_AETH_RNR_NAK | qt_rc_path.min_rnr_timer);
        g_assert_cmpuint(qt_query_page_fault(r->t, r->b.qpn, &info), ==,
                         QHCA_AQ_SUCCESS);
        g_assert_cmphex(info.fault[QHCA_PAGE_FAULT_RESPONDER].flags, ==,
                        QHCA_PAGE_FAULT_F_PENDING | QHCA_PAGE_FAULT_F_WRITE);
        g_assert_cmphex(le32_to_cpu(info.fault[QHCA_PAGE_FAULT_RESPONDER].psn),
                        ==, ROCE_PSN_A);
        g_assert_cmphex(le64_to_cpu(info.fault[QHCA_PAGE_FAULT_RESPONDER].addr),
                        ==, iova + 4096 + 0x20);
    }
    g_assert_cmpuint(roce_count(r, QHCA_CNT_ODP_PAGE_FAULTS), ==, 1);
    g_assert_cmpuint(roce_count(r, QHCA_CNT_RNR_NAKS_SENT), ==, 2);

    page = ROUND_UP(r->buf, 4096);
    e = cpu_to_le64(page | QHCA_ODP_PAGE_READ | QHCA_ODP_PAGE_WRITE);
    qtest_memwrite(r->t->qts, r->buf + ROCE_BUF_SIZE - 8, &e, 8);
    g_assert_cmpuint(qt_odp_map(r->t, index, 1, r->buf + ROCE_BUF_SIZE - 8,
                                1), ==, QHCA_AQ_SUCCESS);
    g_assert_cmpuint(qt_resume_page_fault(r->t, r->b.qpn,
                                          QHCA_PAGE_FAULT_RESPONDER,
                                          QHCA_PAGE_FAULT_RESOLVED), ==,
                     QHCA_AQ_SUCCESS);
    len = roce_build(r, r->frame, OP_WRITE_ONLY, r->b.qpn, ROCE_PSN_A,
                     reth, sizeof(reth), data, sizeof(data));
    qt_wire_send(r->t, r->frame, len);
    roce_expect_ack(r, r->b.qpn, r->a.qpn, ROCE_PSN_A, 1, &p);
    {
        uint8_t got[sizeof(data)];

        qtest_memread(r->t->qts, page + 0x20, got, sizeof(got));
        g_assert(!memcmp(got, data, sizeof(data)));
    }
    roce_finish(r, 0);
}

int main(int argc, char **argv)
{
    if (!qt_init(&argc, &argv)) {
        return g_test_run();
    }

    qtest_add_data_func("/qhca/roce/send-ipv4", (void *)(uintptr_t)false,
                        test_send);
    qtest_add_data_func("/qhca/roce/send-ipv6", (void *)(uintptr_t)true,
                        test_send);
    qtest_add_func("/qhca/roce/inject", test_inject);
    qtest_add_func("/qhca/roce/placement", test_placement);
    qtest_add_func("/qhca/roce/placement-naks", test_placement_naks);
    qtest_add_func("/qhca/roce/placement-rxe-icrc", test_placement_rxe_icrc);
    qtest_add_data_func("/qhca/roce/ud-ipv4", (void *)(uintptr_t)false,
                        test_ud);
    qtest_add_data_func("/qhca/roce/ud-ipv6", (void *)(uintptr_t)true,
                        test_ud);
    qtest_add_func("/qhca/roce/uc", test_uc);
    qtest_add_func("/qhca/roce/xrc", test_xrc);
    qtest_add_data_func("/qhca/roce/icrc-mask-ipv4", (void *)(uintptr_t)false,
                        test_icrc_mask);
    qtest_add_data_func("/qhca/roce/icrc-mask-ipv6", (void *)(uintptr_t)true,
                        test_icrc_mask);
    qtest_add_func("/qhca/roce/hostile", test_hostile);
    qtest_add_func("/qhca/roce/hostile-ipv6", test_hostile_ipv6);
    qtest_add_func("/qhca/roce/window", test_window);
    qtest_add_func("/qhca/roce/read-paced", test_read_paced);
    qtest_add_func("/qhca/roce/rx-order", test_rx_order);
    qtest_add_func("/qhca/roce/timer-late", test_timer_late);
    qtest_add_func("/qhca/roce/odp-rnr", test_odp_rnr);
    return g_test_run();
}
