// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * qhca Ethernet NIC (interface 1.5).
 *
 * STUB of the 1.5 contract.
 */

#include "qhca.h"

int qhca_eth_up(struct qhca_dev *dev)
{
	return -EOPNOTSUPP;
}

void qhca_eth_down(struct qhca_dev *dev)
{
}

void qhca_eth_port_event(struct qhca_dev *dev, bool active)
{
}

bool qhca_eth_cq_event(struct qhca_dev *dev, u32 cqn, u8 type)
{
	return false;
}
