/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qhca RoCEv2 frames (interface 1.5): a QhcaPacket to and from one
 * Ethernet frame.
 *
 * The format is the IBTA's RoCEv2 annex (A17) as Linux rxe puts it on the
 * wire, so that rxe, tcpdump and Wireshark take our frames and we take
 * theirs:
 *
 *   Ethernet | IPv4 (20) or IPv6 (40) | UDP (8, to port 4791) | BTH (12) |
 *   extension headers | payload | pad to 4 bytes | ICRC (4)
 *
 * IPv4 carries DF, TOS = traffic class, TTL = hop limit, identification 0
 * (allowed for a datagram that is never fragmented, RFC 6864; rxe's
 * counter is per-destination state we have no use for).  IPv6 carries the
 * traffic class and flow label.  The UDP checksum is 0: the ICRC covers
 * everything it would, and the IP header besides.
 *
 * Nothing of a received frame is trusted: qhca_roce_decode() checks every
 * length against the frame before reading, and every field the transport
 * will act on.  It refuses without counting; its caller counts.
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qhca.h"
#include "qhca-eth.h"
#include "trace.h"
#include <zlib.h>               /* crc32(), as QEMU's NIC models use it */

const char qhca_roce_bad_icrc[] = "bad ICRC";

#define ETH_TYPE_OFF            12
#define ETH_TYPE_IPV4           0x0800
#define ETH_TYPE_IPV6           0x86dd
#define ETH_TYPE_VLAN           0x8100
#define ETH_TYPE_QINQ           0x88a8

#define IP4_HLEN                20
#define IP4_VER_IHL             0x45    /* version 4, no options */
#define IP4_DF                  0x4000
#define IP4_FRAG                0x3fff  /* MF and the fragment offset */
#define IP4_FRAG_OFFSET         0x1fff
#define IP6_HLEN                40
#define IP_PROTO_UDP            17
#define UDP_HLEN                8

/* Sizes of the IBA transport headers (IBTA vol. 1, 9.2 - 9.3). */
#define BTH_LEN                 12
#define XRCETH_LEN              4
#define DETH_LEN                8
#define RETH_LEN                16
#define ATOMICETH_LEN           28
#define AETH_LEN                4
#define ATOMICACKETH_LEN        8
#define IMMDT_LEN               4
#define IETH_LEN                4
#define FETH_LEN                4
#define ICRC_LEN                4

/* BTH byte 1: solicited event, migration, pad count, transport version. */
#define BTH_SE                  0x80
#define BTH_PAD_SHIFT           4
#define BTH_PAD_MASK            0x30
#define BTH_TVER_MASK           0x0f
#define BTH_TRANSPORT_MASK      0xe0
#define BTH_OPCODE_MASK         0x1f
#define BTH_ACK_REQ             0x80000000u
/* A full (0xffff) or limited (0x7fff) member of the default partition. */
#define BTH_PKEY_LIMITED        0x7fff

#define ROCE_FLOW_LABEL_MASK    0xfffff

/* The extension headers of a packet, in the order they follow the BTH. */
enum {
    QHCA_ROCE_XRCETH        = 1 << 0,
    QHCA_ROCE_DETH          = 1 << 1,
    QHCA_ROCE_RETH          = 1 << 2,
    QHCA_ROCE_ATOMICETH     = 1 << 3,
    QHCA_ROCE_AETH          = 1 << 4,
    QHCA_ROCE_ATOMICACKETH  = 1 << 5,
    QHCA_ROCE_IMMDT         = 1 << 6,
    QHCA_ROCE_IETH          = 1 << 7,
    QHCA_ROCE_FETH          = 1 << 8,   /* 1.6: after the DETH, before RETH */
};

/*
 * Which extension headers @opcode has on @transport, or -1 if that
 * transport has no such opcode.  qhca_ib_opcode_flags[] describes the RC
 * opcodes; the others are subsets of RC with their own headers: UC has
 * only SEND and RDMA WRITE (no IETH), UD only SEND_ONLY(_IMM) after a
 * DETH, XRC all of RC with an XRCETH first on requests (IBTA vol. 1, 9.2)
 * except FLUSH and ATOMIC_WRITE (1.6), which qhca has on RC only.
 */
static int qhca_roce_headers(uint8_t transport, uint8_t opcode)
{
    uint16_t f = qhca_pkt_flags(opcode);
    int h = 0;

    if (!f) {
        return -1;
    }
    switch (transport) {
    case QHCA_IB_TRANSPORT_RC:
        break;
    case QHCA_IB_TRANSPORT_XRC:
        if (f & QHCA_PKT_PLACEMENT) {
            return -1;
        }
        if (f & QHCA_PKT_REQUEST) {
            h |= QHCA_ROCE_XRCETH;
        }
        break;
    case QHCA_IB_TRANSPORT_UC:
        if (!(f & (QHCA_PKT_SEND | QHCA_PKT_WRITE)) || (f & QHCA_PKT_IETH)) {
            return -1;
        }
        break;
    case QHCA_IB_TRANSPORT_UD:
        if (opcode != QHCA_IB_SEND_ONLY && opcode != QHCA_IB_SEND_ONLY_IMM) {
            return -1;
        }
        h |= QHCA_ROCE_DETH;
        break;
    default:
        return -1;              /* RD, CNP and the reserved ones */
    }
    if (f & QHCA_PKT_FETH) {
        h |= QHCA_ROCE_FETH;
    }
    if (f & QHCA_PKT_RETH) {
        h |= QHCA_ROCE_RETH;
    }
    if ((f & (QHCA_PKT_REQUEST | QHCA_PKT_ATOMIC)) ==
        (QHCA_PKT_REQUEST | QHCA_PKT_ATOMIC)) {
        h |= QHCA_ROCE_ATOMICETH;
    }
    if (f & QHCA_PKT_AETH) {
        h |= QHCA_ROCE_AETH;
    }
    if ((f & (QHCA_PKT_ACK | QHCA_PKT_ATOMIC)) ==
        (QHCA_PKT_ACK | QHCA_PKT_ATOMIC)) {
        h |= QHCA_ROCE_ATOMICACKETH;
    }
    if (f & QHCA_PKT_IMM) {
        h |= QHCA_ROCE_IMMDT;
    }
    if (f & QHCA_PKT_IETH) {
        h |= QHCA_ROCE_IETH;
    }
    return h;
}

/* The bytes of the headers in @h, the BTH included. */
static size_t qhca_roce_headers_len(int h)
{
    return BTH_LEN +
           (h & QHCA_ROCE_XRCETH ? XRCETH_LEN : 0) +
           (h & QHCA_ROCE_DETH ? DETH_LEN : 0) +
           (h & QHCA_ROCE_FETH ? FETH_LEN : 0) +
           (h & QHCA_ROCE_RETH ? RETH_LEN : 0) +
           (h & QHCA_ROCE_ATOMICETH ? ATOMICETH_LEN : 0) +
           (h & QHCA_ROCE_AETH ? AETH_LEN : 0) +
           (h & QHCA_ROCE_ATOMICACKETH ? ATOMICACKETH_LEN : 0) +
           (h & QHCA_ROCE_IMMDT ? IMMDT_LEN : 0) +
           (h & QHCA_ROCE_IETH ? IETH_LEN : 0);
}

/*
 * The ICRC of a packet whose IP header starts at @ip, over the @len bytes
 * from there to the end of the pad.  It is the CRC-32 of Ethernet (zlib's
 * crc32()) over a masked LRH of eight 0xff bytes, then the IP, UDP and
 * BTH headers with the fields a router or a NIC may change set to ones
 * (IPv4 TOS, TTL and checksum; IPv6 traffic class, flow label and hop
 * limit; the UDP checksum; the BTH's reserved byte before the QPN), then
 * the rest as it is (IBTA A17.4.5.1).  It goes on the wire least
 * significant byte first, as rxe's crc32_le() leaves it.
 */
static uint32_t qhca_roce_icrc(const uint8_t *ip, bool v4, size_t len)
{
    static const uint8_t masked_lrh[8] = {
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff
    };
    size_t iplen = v4 ? IP4_HLEN : IP6_HLEN;
    size_t hlen = iplen + UDP_HLEN + BTH_LEN;
    uint8_t hdr[IP6_HLEN + UDP_HLEN + BTH_LEN];
    uLong crc;

    memcpy(hdr, ip, hlen);
    if (v4) {
        hdr[1] = 0xff;                  /* TOS */
        hdr[8] = 0xff;                  /* TTL */
        hdr[10] = hdr[11] = 0xff;       /* header checksum */
    } else {
        hdr[0] |= 0x0f;                 /* traffic class, high nibble */
        hdr[1] = hdr[2] = hdr[3] = 0xff; /* its low nibble, flow label */
        hdr[7] = 0xff;                  /* hop limit */
    }
    hdr[iplen + 6] = hdr[iplen + 7] = 0xff;     /* UDP checksum */
    hdr[iplen + UDP_HLEN + 4] = 0xff;           /* BTH resv8a */
    crc = crc32(0, masked_lrh, sizeof(masked_lrh));
    crc = crc32(crc, hdr, hlen);
    crc = crc32(crc, ip + hlen, len - hlen);
    return crc;
}

/*
 * 1.6: the ICRC Linux 6.12's rxe gives a FLUSH (RC, 0x1c) of @len bytes
 * from the IP header at @ip to the end: its opcode table has no payload
 * offset for FLUSH, so the "payload" it adds after the headers is the
 * BTH, FETH and RETH once more, as they are.  A FLUSH that fails the
 * IBA's ICRC is taken with this one (trace qhca_roce_rxe_flush_icrc);
 * qhca sends the IBA's, which rxe drops.
 */
static bool qhca_roce_rxe_flush_icrc(const uint8_t *ip, bool v4, size_t len,
                                     uint32_t icrc)
{
    size_t ib = (v4 ? IP4_HLEN : IP6_HLEN) + UDP_HLEN;

    if (ip[ib] != (QHCA_IB_TRANSPORT_RC | QHCA_IB_FLUSH)) {
        return false;
    }
    return crc32(qhca_roce_icrc(ip, v4, len), ip + ib, len - ib) == icrc;
}

/* The one's complement sum of the IPv4 header: 0xffff when it is good. */
static uint16_t qhca_roce_ip4_sum(const uint8_t *ip)
{
    uint32_t sum = 0;
    int i;

    for (i = 0; i < IP4_HLEN; i += 2) {
        sum += lduw_be_p(ip + i);
    }
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return sum;
}

/* The extension headers of @pkt after the BTH at @p; returns the end. */
static uint8_t *qhca_roce_put_headers(const QhcaPacket *pkt, int h,
                                      uint8_t *p)
{
    if (h & QHCA_ROCE_XRCETH) {
        stl_be_p(p, pkt->xrc_srqn & QHCA_QPN_MASK);
        p += XRCETH_LEN;
    }
    if (h & QHCA_ROCE_DETH) {
        stl_be_p(p, pkt->qkey);
        stl_be_p(p + 4, pkt->src_qpn & QHCA_QPN_MASK);
        p += DETH_LEN;
    }
    if (h & QHCA_ROCE_FETH) {
        stl_be_p(p, pkt->feth);
        p += FETH_LEN;
    }
    if (h & QHCA_ROCE_RETH) {
        stq_be_p(p, pkt->va);
        stl_be_p(p + 8, pkt->rkey);
        stl_be_p(p + 12, pkt->dma_len);
        p += RETH_LEN;
    }
    if (h & QHCA_ROCE_ATOMICETH) {
        stq_be_p(p, pkt->va);
        stl_be_p(p + 8, pkt->rkey);
        stq_be_p(p + 12, pkt->swap_add);
        stq_be_p(p + 20, pkt->compare);
        p += ATOMICETH_LEN;
    }
    if (h & QHCA_ROCE_AETH) {
        stl_be_p(p, (uint32_t)pkt->syndrome << 24 |
                    (pkt->msn & QHCA_MSN_MASK));
        p += AETH_LEN;
    }
    if (h & QHCA_ROCE_ATOMICACKETH) {
        stq_be_p(p, pkt->orig);
        p += ATOMICACKETH_LEN;
    }
    if (h & QHCA_ROCE_IMMDT) {
        memcpy(p, &pkt->imm, IMMDT_LEN);    /* the bytes as posted */
        p += IMMDT_LEN;
    }
    if (h & QHCA_ROCE_IETH) {
        stl_be_p(p, pkt->ieth);
        p += IETH_LEN;
    }
    return p;
}

/* The inverse of qhca_roce_put_headers(): the caller checked the length. */
static void qhca_roce_get_headers(QhcaPacket *pkt, int h, const uint8_t *p)
{
    if (h & QHCA_ROCE_XRCETH) {
        pkt->xrc_srqn = ldl_be_p(p) & QHCA_QPN_MASK;
        p += XRCETH_LEN;
    }
    if (h & QHCA_ROCE_DETH) {
        pkt->qkey = ldl_be_p(p);
        pkt->src_qpn = ldl_be_p(p + 4) & QHCA_QPN_MASK;
        p += DETH_LEN;
    }
    if (h & QHCA_ROCE_FETH) {
        /* Whole: the responder refuses reserved bits (qhca-responder.c). */
        pkt->feth = ldl_be_p(p);
        p += FETH_LEN;
    }
    if (h & QHCA_ROCE_RETH) {
        pkt->va = ldq_be_p(p);
        pkt->rkey = ldl_be_p(p + 8);
        pkt->dma_len = ldl_be_p(p + 12);
        p += RETH_LEN;
    }
    if (h & QHCA_ROCE_ATOMICETH) {
        pkt->va = ldq_be_p(p);
        pkt->rkey = ldl_be_p(p + 8);
        pkt->swap_add = ldq_be_p(p + 12);
        pkt->compare = ldq_be_p(p + 20);
        /* What the requester sets: an atomic acts on 8 bytes. */
        pkt->dma_len = sizeof(uint64_t);
        p += ATOMICETH_LEN;
    }
    if (h & QHCA_ROCE_AETH) {
        uint32_t aeth = ldl_be_p(p);

        pkt->syndrome = aeth >> 24;
        pkt->msn = aeth & QHCA_MSN_MASK;
        p += AETH_LEN;
    }
    if (h & QHCA_ROCE_ATOMICACKETH) {
        pkt->orig = ldq_be_p(p);
        p += ATOMICACKETH_LEN;
    }
    if (h & QHCA_ROCE_IMMDT) {
        memcpy(&pkt->imm, p, IMMDT_LEN);
        p += IMMDT_LEN;
    }
    if (h & QHCA_ROCE_IETH) {
        pkt->ieth = ldl_be_p(p);
    }
}

size_t qhca_roce_encode(const QhcaPacket *pkt, uint8_t *frame)
{
    bool v4 = pkt->net_type == QHCA_NET_IPV4;
    int h = qhca_roce_headers(pkt->transport, pkt->opcode);
    size_t iplen = v4 ? IP4_HLEN : IP6_HLEN;
    uint32_t pad = -pkt->paylen & 3;
    uint8_t *ip = frame + QHCA_ETH_HLEN;
    uint8_t *udp = ip + iplen;
    uint8_t *bth = udp + UDP_HLEN;
    uint8_t *p;
    size_t udplen;

    /*
     * The engine builds only packets their transport has; should one
     * ever not be, it gets no frame (0, which the caller counts as lost)
     * rather than stopping the device.
     */
    if (h < 0 || pkt->paylen > QHCA_MAX_MTU) {
        return 0;
    }
    udplen = UDP_HLEN + qhca_roce_headers_len(h) + pkt->paylen + pad +
             ICRC_LEN;

    memcpy(frame, pkt->dmac, 6);
    memcpy(frame + 6, pkt->smac, 6);
    stw_be_p(frame + ETH_TYPE_OFF, v4 ? ETH_TYPE_IPV4 : ETH_TYPE_IPV6);

    if (v4) {
        ip[0] = IP4_VER_IHL;
        ip[1] = pkt->tclass;
        stw_be_p(ip + 2, IP4_HLEN + udplen);
        stw_be_p(ip + 4, 0);                    /* identification */
        stw_be_p(ip + 6, IP4_DF);
        ip[8] = pkt->hop_limit;
        ip[9] = IP_PROTO_UDP;
        stw_be_p(ip + 10, 0);
        memcpy(ip + 12, pkt->sgid + 12, 4);
        memcpy(ip + 16, pkt->dgid + 12, 4);
        stw_be_p(ip + 10, (uint16_t)~qhca_roce_ip4_sum(ip));
    } else {
        qhca_pkt_ipv6_header(pkt, ip, udplen, IP_PROTO_UDP);
    }

    stw_be_p(udp, pkt->udp_sport);
    stw_be_p(udp + 2, QHCA_ROCE_UDP_PORT);
    stw_be_p(udp + 4, udplen);
    stw_be_p(udp + 6, 0);

    bth[0] = pkt->transport | pkt->opcode;
    bth[1] = (pkt->solicited ? BTH_SE : 0) | pad << BTH_PAD_SHIFT;
    stw_be_p(bth + 2, QHCA_DEFAULT_PKEY);
    stl_be_p(bth + 4, pkt->dest_qpn & QHCA_QPN_MASK);
    stl_be_p(bth + 8, (pkt->ack_req ? BTH_ACK_REQ : 0) |
                      (pkt->psn & QHCA_PSN_MASK));

    p = qhca_roce_put_headers(pkt, h, bth + BTH_LEN);
    memcpy(p, pkt->payload, pkt->paylen);
    p += pkt->paylen;
    memset(p, 0, pad);
    p += pad;
    stl_le_p(p, qhca_roce_icrc(ip, v4, p - ip));
    p += ICRC_LEN;

    trace_qhca_roce_encode(pkt->src_qpn, pkt->dest_qpn, bth[0], pkt->psn,
                           pkt->paylen, v4, p - frame);
    return p - frame;
}

/*
 * The UDP header of an unfragmented (or first) IP datagram, or NULL.  A
 * VLAN-tagged frame is not one: it is the NIC's, as the spec has it, for
 * the guest's VLAN devices.
 */
static const uint8_t *qhca_roce_udp(const uint8_t *frame, size_t len,
                                    uint8_t gid[16])
{
    const uint8_t *ip = frame + QHCA_ETH_HLEN;
    size_t iplen;

    if (len < QHCA_ETH_HLEN) {
        return NULL;
    }
    switch (lduw_be_p(frame + ETH_TYPE_OFF)) {
    case ETH_TYPE_IPV4:
        if (len < QHCA_ETH_HLEN + IP4_HLEN || ip[0] >> 4 != 4 ||
            ip[9] != IP_PROTO_UDP || (lduw_be_p(ip + 6) & IP4_FRAG_OFFSET)) {
            return NULL;
        }
        /* Options are refused by the decoder, but the frame is RoCEv2. */
        iplen = (ip[0] & 0xf) * 4;
        memset(gid, 0, 10);
        gid[10] = gid[11] = 0xff;
        memcpy(gid + 12, ip + 16, 4);
        break;
    case ETH_TYPE_IPV6:
        if (len < QHCA_ETH_HLEN + IP6_HLEN || ip[0] >> 4 != 6 ||
            ip[6] != IP_PROTO_UDP) {
            return NULL;
        }
        iplen = IP6_HLEN;
        memcpy(gid, ip + 24, 16);
        break;
    default:
        return NULL;
    }
    if (iplen < IP4_HLEN || len < QHCA_ETH_HLEN + iplen + UDP_HLEN) {
        return NULL;
    }
    return ip + iplen;
}

bool qhca_roce_classify(const uint8_t *frame, size_t len, uint8_t dgid[16])
{
    uint8_t gid[16];
    const uint8_t *udp = qhca_roce_udp(frame, len, gid);

    if (!udp || lduw_be_p(udp + 2) != QHCA_ROCE_UDP_PORT) {
        return false;
    }
    memcpy(dgid, gid, 16);
    return true;
}

/* The IP header at @ip, of a frame with @avail bytes from there. */
static const char *qhca_roce_get_ip(QhcaPacket *pkt, uint16_t ethertype,
                                    const uint8_t *ip, size_t avail,
                                    size_t *iplen, size_t *udplen)
{
    uint32_t word;
    uint16_t len;

    switch (ethertype) {
    case ETH_TYPE_IPV4:
        if (avail < IP4_HLEN) {
            return "truncated IPv4 header";
        }
        if (ip[0] != IP4_VER_IHL) {
            return ip[0] >> 4 != 4 ? "IPv4 version" : "IPv4 options";
        }
        if (qhca_roce_ip4_sum(ip) != 0xffff) {
            return "IPv4 header checksum";
        }
        len = lduw_be_p(ip + 2);
        if (len > avail || len < IP4_HLEN) {
            return "IPv4 total length";
        }
        if (lduw_be_p(ip + 6) & IP4_FRAG) {
            return "IPv4 fragment";
        }
        if (ip[9] != IP_PROTO_UDP) {
            return "not UDP";
        }
        pkt->net_type = QHCA_NET_IPV4;
        pkt->tclass = ip[1];
        pkt->hop_limit = ip[8];
        pkt->flow_label = 0;
        pkt->sgid[10] = pkt->sgid[11] = 0xff;
        memcpy(pkt->sgid + 12, ip + 12, 4);
        pkt->dgid[10] = pkt->dgid[11] = 0xff;
        memcpy(pkt->dgid + 12, ip + 16, 4);
        /* As every RoCE HCA: 20 bytes of zero, then the IPv4 header. */
        memcpy(pkt->grh_slot + 20, ip, IP4_HLEN);
        *iplen = IP4_HLEN;
        *udplen = len - IP4_HLEN;
        return NULL;
    case ETH_TYPE_IPV6:
        if (avail < IP6_HLEN) {
            return "truncated IPv6 header";
        }
        word = ldl_be_p(ip);
        if (word >> 28 != 6) {
            return "IPv6 version";
        }
        if (ip[6] != IP_PROTO_UDP) {
            return "IPv6 next header not UDP";
        }
        len = lduw_be_p(ip + 4);
        if (len > avail - IP6_HLEN) {
            return "IPv6 payload length";
        }
        pkt->net_type = QHCA_NET_IPV6;
        pkt->tclass = (word >> 20) & 0xff;
        pkt->flow_label = word & ROCE_FLOW_LABEL_MASK;
        pkt->hop_limit = ip[7];
        memcpy(pkt->sgid, ip + 8, 16);
        memcpy(pkt->dgid, ip + 24, 16);
        memcpy(pkt->grh_slot, ip, IP6_HLEN);
        *iplen = IP6_HLEN;
        *udplen = len;
        return NULL;
    case ETH_TYPE_VLAN:
    case ETH_TYPE_QINQ:
        return "VLAN tag";
    default:
        return "not IP";
    }
}

/*
 * The checks of the BTH and the payload length once the frame's bytes are
 * known to be there: @rest is the UDP payload's length, BTH to ICRC.
 */
static const char *qhca_roce_check_bth(const uint8_t *bth, size_t rest,
                                       int *hdrs, uint32_t *paylen)
{
    uint8_t transport = bth[0] & BTH_TRANSPORT_MASK;
    uint8_t opcode = bth[0] & BTH_OPCODE_MASK;
    uint32_t pad = (bth[1] & BTH_PAD_MASK) >> BTH_PAD_SHIFT;
    uint16_t f = qhca_pkt_flags(opcode);
    size_t hlen, data;
    int h;

    h = qhca_roce_headers(transport, opcode);
    if (h < 0) {
        return "unknown opcode for its transport";
    }
    if ((lduw_be_p(bth + 2) & BTH_PKEY_LIMITED) != BTH_PKEY_LIMITED) {
        return "P_Key not of the default partition";
    }
    hlen = qhca_roce_headers_len(h);
    if (rest < hlen + ICRC_LEN) {
        return "truncated extension headers";
    }
    data = rest - hlen - ICRC_LEN;     /* payload and pad */
    if (pad > data) {
        return "pad longer than the payload";
    }
    if (data && !(f & QHCA_PKT_PAYLOAD)) {
        return "payload on an opcode without";
    }
    /* Only a message's last packet is short: the others carry an MTU. */
    if (!(f & QHCA_PKT_LAST) && (f & QHCA_PKT_PAYLOAD) && (pad || !data)) {
        return "first or middle packet not a whole MTU";
    }
    if (data - pad > QHCA_MAX_MTU) {
        return "payload longer than the largest MTU";
    }
    *hdrs = h;
    *paylen = data - pad;
    return NULL;
}

const char *qhca_roce_decode(const uint8_t *frame, size_t len,
                             QhcaPacket *pkt)
{
    size_t hdr_start = offsetof(QhcaPacket, next) + sizeof(pkt->next);
    const uint8_t *ip = frame + QHCA_ETH_HLEN;
    const uint8_t *udp, *bth;
    size_t iplen, udplen, rest;
    uint32_t paylen, icrc;
    const char *why;
    int h;

    if (len < QHCA_ETH_HLEN) {
        return "runt";
    }
    /* Everything but the caller's list link; the payload is copied. */
    memset((uint8_t *)pkt + hdr_start, 0,
           offsetof(QhcaPacket, payload) - hdr_start);
    why = qhca_roce_get_ip(pkt, lduw_be_p(frame + ETH_TYPE_OFF), ip,
                           len - QHCA_ETH_HLEN, &iplen, &udplen);
    if (why) {
        return why;
    }
    udp = ip + iplen;
    if (udplen < UDP_HLEN) {
        return "truncated UDP header";
    }
    if (lduw_be_p(udp + 2) != QHCA_ROCE_UDP_PORT) {
        return "not to the RoCEv2 port";
    }
    /* The UDP checksum is not checked: the ICRC covers more. */
    if (lduw_be_p(udp + 4) != udplen) {
        return "UDP length not the IP payload's";
    }
    rest = udplen - UDP_HLEN;
    if (rest < BTH_LEN + ICRC_LEN) {
        return "truncated BTH";
    }
    bth = udp + UDP_HLEN;
    /* Another version could have another ICRC: look at nothing else. */
    if (bth[1] & BTH_TVER_MASK) {
        return "BTH transport version not 0";
    }
    icrc = ldl_le_p(bth + rest - ICRC_LEN);
    if (icrc != qhca_roce_icrc(ip, pkt->net_type == QHCA_NET_IPV4,
                               iplen + UDP_HLEN + rest - ICRC_LEN)) {
        if (!qhca_roce_rxe_flush_icrc(ip, pkt->net_type == QHCA_NET_IPV4,
                                      iplen + UDP_HLEN + rest - ICRC_LEN,
                                      icrc)) {
            return qhca_roce_bad_icrc;
        }
        trace_qhca_roce_rxe_flush_icrc(ldl_be_p(bth + 4) & QHCA_QPN_MASK,
                                       ldl_be_p(bth + 8) & QHCA_PSN_MASK);
    }
    why = qhca_roce_check_bth(bth, rest, &h, &paylen);
    if (why) {
        return why;
    }

    memcpy(pkt->smac, frame + 6, 6);
    memcpy(pkt->dmac, frame, 6);
    pkt->udp_sport = lduw_be_p(udp);
    pkt->has_grh = true;
    pkt->transport = bth[0] & BTH_TRANSPORT_MASK;
    pkt->opcode = bth[0] & BTH_OPCODE_MASK;
    pkt->solicited = bth[1] & BTH_SE;
    pkt->dest_qpn = ldl_be_p(bth + 4) & QHCA_QPN_MASK;
    pkt->ack_req = ldl_be_p(bth + 8) & BTH_ACK_REQ;
    pkt->psn = ldl_be_p(bth + 8) & QHCA_PSN_MASK;
    qhca_roce_get_headers(pkt, h, bth + BTH_LEN);
    pkt->paylen = paylen;
    memcpy(pkt->payload, bth + qhca_roce_headers_len(h), paylen);
    trace_qhca_roce_decode(pkt->src_qpn, pkt->dest_qpn, bth[0], pkt->psn,
                           paylen, pkt->net_type == QHCA_NET_IPV4);
    return NULL;
}

/*
 * The UDP source port of a QP's frames, as Linux's rdma_get_udp_sport()
 * chooses it, so that a peer computing it for the same QP pair agrees:
 * the 20-bit flow label, or when that is 0 one made symmetric from the two
 * QPNs (their product folded to 20 bits), folded again to 14 bits in the
 * dynamic range 0xc000 and up (IB_ROCE_UDP_ENCAP_VALID_PORT_MIN).
 */
uint16_t qhca_roce_udp_sport(uint32_t flow_label, uint32_t lqpn,
                             uint32_t rqpn)
{
    uint32_t fl = flow_label & ROCE_FLOW_LABEL_MASK;

    if (!fl) {
        uint64_t v = (uint64_t)lqpn * rqpn;

        v ^= v >> 20;
        v ^= v >> 40;
        fl = v & ROCE_FLOW_LABEL_MASK;
    }
    return 0xc000 | ((fl & 0x3fff) ^ (fl >> 14));
}
