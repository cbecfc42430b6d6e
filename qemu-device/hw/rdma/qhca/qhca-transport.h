/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qhca transport packets: the device's internal form of InfiniBand RC
 * transport packets.
 *
 * The requester and the responder talk only through these: each packet
 * has the fields of the LRH and BTH that its transport needs and the
 * extended headers its opcode calls for (RETH, AETH, ImmDt, AtomicETH,
 * AtomicAckETH, DETH, XRCETH, IETH, FETH), with at most one path MTU of
 * payload, kept decoded in host order.  Today they only loop back inside
 * the device (qhca-wire.c); nothing serialises them.
 */
#ifndef HW_RDMA_QHCA_TRANSPORT_H
#define HW_RDMA_QHCA_TRANSPORT_H

#include "qemu/bswap.h"
#include "qemu/queue.h"

/* BTH opcodes of the RC transport (IBTA vol. 1, table 38). */
enum qhca_ib_opcode {
    QHCA_IB_SEND_FIRST              = 0x00,
    QHCA_IB_SEND_MIDDLE             = 0x01,
    QHCA_IB_SEND_LAST               = 0x02,
    QHCA_IB_SEND_LAST_IMM           = 0x03,
    QHCA_IB_SEND_ONLY               = 0x04,
    QHCA_IB_SEND_ONLY_IMM           = 0x05,
    QHCA_IB_WRITE_FIRST             = 0x06,
    QHCA_IB_WRITE_MIDDLE            = 0x07,
    QHCA_IB_WRITE_LAST              = 0x08,
    QHCA_IB_WRITE_LAST_IMM          = 0x09,
    QHCA_IB_WRITE_ONLY              = 0x0a,
    QHCA_IB_WRITE_ONLY_IMM          = 0x0b,
    QHCA_IB_READ_REQUEST            = 0x0c,
    QHCA_IB_READ_RESPONSE_FIRST     = 0x0d,
    QHCA_IB_READ_RESPONSE_MIDDLE    = 0x0e,
    QHCA_IB_READ_RESPONSE_LAST      = 0x0f,
    QHCA_IB_READ_RESPONSE_ONLY      = 0x10,
    QHCA_IB_ACKNOWLEDGE             = 0x11,
    QHCA_IB_ATOMIC_ACKNOWLEDGE      = 0x12,
    QHCA_IB_COMPARE_SWAP            = 0x13,
    QHCA_IB_FETCH_ADD               = 0x14,
    QHCA_IB_SEND_LAST_INV           = 0x16,
    QHCA_IB_SEND_ONLY_INV           = 0x17,
    /* IBA 1.5, annex A19 (1.6): FETH then RETH; RETH and 8 bytes */
    QHCA_IB_FLUSH                   = 0x1c,
    QHCA_IB_ATOMIC_WRITE            = 0x1d,
    QHCA_IB_OPCODE_NUM
};

/* What an opcode is and which headers it carries. */
#define QHCA_PKT_REQUEST        0x0001  /* requester to responder */
#define QHCA_PKT_FIRST          0x0002  /* first packet of a message */
#define QHCA_PKT_LAST           0x0004  /* last packet of a message */
#define QHCA_PKT_SEND           0x0008
#define QHCA_PKT_WRITE          0x0010
#define QHCA_PKT_READ           0x0020  /* request or response */
#define QHCA_PKT_ATOMIC         0x0040  /* request or acknowledge */
#define QHCA_PKT_ACK            0x0080
#define QHCA_PKT_RETH           0x0100
#define QHCA_PKT_AETH           0x0200
#define QHCA_PKT_IMM            0x0400
#define QHCA_PKT_PAYLOAD        0x0800
#define QHCA_PKT_IETH           0x1000  /* the key to invalidate */
#define QHCA_PKT_FETH           0x2000  /* FLUSH: placement type, level */
#define QHCA_PKT_ATOMIC_WRITE   0x4000
/* Executed once, answered by a READ response without data (1.6). */
#define QHCA_PKT_PLACEMENT      (QHCA_PKT_FETH | QHCA_PKT_ATOMIC_WRITE)

/*
 * The transport of a packet: the top three bits of the BTH opcode byte
 * (IBTA vol. 1, 9.2.1); the low five bits are enum qhca_ib_opcode.  UC
 * uses the SEND and RDMA WRITE opcodes, UD only SEND_ONLY(_IMM).
 */
#define QHCA_IB_TRANSPORT_RC    0x00
#define QHCA_IB_TRANSPORT_UC    0x20
#define QHCA_IB_TRANSPORT_UD    0x60
#define QHCA_IB_TRANSPORT_XRC   0xa0

extern const uint16_t qhca_ib_opcode_flags[QHCA_IB_OPCODE_NUM];
extern const char *const qhca_ib_opcode_names[QHCA_IB_OPCODE_NUM];

static inline uint16_t qhca_pkt_flags(uint8_t opcode)
{
    return opcode < QHCA_IB_OPCODE_NUM ? qhca_ib_opcode_flags[opcode] : 0;
}

/* AETH syndrome: [7:5] kind, [4:0] credits, RNR timer or NAK code. */
#define QHCA_AETH_KIND          0xe0
#define QHCA_AETH_VALUE         0x1f
#define QHCA_AETH_ACK           0x00
#define QHCA_AETH_RNR_NAK       0x20
#define QHCA_AETH_NAK           0x60
#define QHCA_AETH_CREDITS_NONE  0x1f    /* no end-to-end flow control */

enum qhca_nak_code {
    QHCA_NAK_PSN_SEQ_ERR    = 0,
    QHCA_NAK_INV_REQ        = 1,
    QHCA_NAK_REM_ACCESS     = 2,
    QHCA_NAK_REM_OP         = 3,
    QHCA_NAK_INV_RD_REQ     = 4,
};

#define QHCA_MSN_MASK           0xffffff

/* PSNs are 24-bit and wrap: compare them by signed distance. */
static inline uint32_t qhca_psn_add(uint32_t psn, uint32_t n)
{
    return (psn + n) & QHCA_PSN_MASK;
}

static inline int32_t qhca_psn_diff(uint32_t a, uint32_t b)
{
    return (int32_t)((a - b) << 8) >> 8;
}

typedef struct QhcaPacket {
    QSIMPLEQ_ENTRY(QhcaPacket) next;

    /* LRH */
    uint16_t slid;
    uint16_t dlid;
    uint8_t sl;

    /* GRH, when the sender used one (UD); the GIDs in network order */
    bool has_grh;
    uint8_t tclass;
    uint32_t flow_label;
    uint8_t hop_limit;
    uint8_t sgid[16];
    uint8_t dgid[16];

    /*
     * 1.5, Ethernet port: the frame's MACs, its IP version (QHCA_NET_IPV4
     * or _IPV6; the addresses are sgid/dgid, IPv4-mapped for IPv4) and UDP
     * source port.  has_grh is set for every RoCEv2 packet.  A received
     * UD packet keeps its IP header as the GRH slot of the receive buffer
     * wants it (IPv4: 20 zero bytes, then the header).
     */
    uint8_t smac[6];
    uint8_t dmac[6];
    uint8_t net_type;
    uint16_t udp_sport;
    uint8_t grh_slot[40];

    /* BTH */
    uint8_t transport;          /* QHCA_IB_TRANSPORT_* */
    uint8_t opcode;             /* enum qhca_ib_opcode */
    bool solicited;             /* SE */
    bool ack_req;               /* A */
    uint32_t dest_qpn;
    uint32_t psn;

    /* RETH, and the address part of the AtomicETH */
    uint64_t va;
    uint32_t rkey;
    uint32_t dma_len;

    /* AETH */
    uint8_t syndrome;
    uint32_t msn;

    /* ImmDt: the bytes as posted */
    uint32_t imm;

    /* IETH: the rkey the responder invalidates */
    uint32_t ieth;

    /* FETH (FLUSH, 1.6): the whole word, reserved bits included */
    uint32_t feth;

    /* AtomicETH */
    uint64_t swap_add;
    uint64_t compare;

    /* AtomicAckETH */
    uint64_t orig;

    /* DETH (UD): the Q_Key and, in src_qpn, the source QP */
    uint32_t qkey;

    /* XRCETH (XRC): the XRC SRQ of the target */
    uint32_t xrc_srqn;

    /* The sending QP: on the wire in the DETH, otherwise for traces. */
    uint32_t src_qpn;

    uint32_t paylen;
    uint8_t payload[];
} QhcaPacket;

/*
 * The 40-byte IPv6 header of @pkt, with @paylen bytes after it and next
 * header @next_hdr: the IB GRH has the same layout (next header 0x1b, the
 * BTH), and RoCEv2 over IPv6 uses it as it is (17, UDP).
 */
static inline void qhca_pkt_ipv6_header(const QhcaPacket *pkt, uint8_t *h,
                                        uint16_t paylen, uint8_t next_hdr)
{
    stl_be_p(h, 6u << 28 | (uint32_t)pkt->tclass << 20 |
                (pkt->flow_label & QHCA_AV_FLOW_LABEL_MAX));
    stw_be_p(h + 4, paylen);
    h[6] = next_hdr;
    h[7] = pkt->hop_limit;
    memcpy(h + 8, pkt->sgid, 16);
    memcpy(h + 24, pkt->dgid, 16);
}

#endif /* HW_RDMA_QHCA_TRANSPORT_H */
