/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qhca NIC glue: the Ethernet port on a QEMU netdev (interface 1.5).
 *
 * STUB of the 1.5 contract: the port stays an IB port until this file
 * attaches it to a netdev.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qhca.h"
#include "qhca-eth.h"

bool qhca_net_realize(QhcaState *s, Error **errp)
{
    s->link_layer = QHCA_LINK_LAYER_IB;
    return true;
}

void qhca_net_unrealize(QhcaState *s)
{
}

void qhca_net_reset(QhcaState *s)
{
}

void qhca_net_tx(QhcaState *s, const uint8_t *frame, size_t len)
{
}

void qhca_net_rx_run(QhcaState *s)
{
}
