/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qhca RoCEv2 frames (interface 1.5).
 *
 * STUB of the 1.5 contract.
 */
#include "qemu/osdep.h"
#include "qhca.h"
#include "qhca-eth.h"

const char qhca_roce_bad_icrc[] = "bad ICRC";

size_t qhca_roce_encode(const QhcaPacket *pkt, uint8_t *frame)
{
    return 0;
}

bool qhca_roce_classify(const uint8_t *frame, size_t len, uint8_t dgid[16])
{
    return false;
}

const char *qhca_roce_decode(const uint8_t *frame, size_t len,
                             QhcaPacket *pkt)
{
    return "not implemented";
}

uint16_t qhca_roce_udp_sport(uint32_t flow_label, uint32_t lqpn,
                             uint32_t rqpn)
{
    return 0xc000;
}
