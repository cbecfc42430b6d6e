/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qhca RAW_ETH QPs: the send and receive queues of the port's NIC
 * (interface 1.5).
 *
 * STUB of the 1.5 contract.
 */
#include "qemu/osdep.h"
#include "qhca.h"
#include "qhca-eth.h"

void qhca_nic_receive(QhcaState *s, const uint8_t *frame, size_t len)
{
}
