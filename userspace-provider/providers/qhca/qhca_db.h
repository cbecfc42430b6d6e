/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Doorbells: one 32-bit write of queue number and index to the context's
 * doorbell page, at QHCA_DB_SQ, QHCA_DB_RQ, QHCA_DB_CQ_ARM or
 * QHCA_DB_CQ_ARM_SOL.
 */
#ifndef QHCA_DB_H
#define QHCA_DB_H

#include <stdint.h>

#include <util/mmio.h>
#include <util/udma_barrier.h>

#include "qhca.h"
#include "qhca_hw.h"

static inline void qhca_ring_db(struct qhca_context *ctx, uint32_t offset,
				uint32_t queue_num, uint32_t idx)
{
	/*
	 * The device may read the queue entries as soon as it sees the
	 * doorbell: they must be in memory before the write reaches it.
	 */
	udma_to_device_barrier();
	mmio_write32_le((uint8_t *)ctx->db_page + offset,
			htole32(QHCA_FIELD_PREP(QHCA_DB_QUEUE_NUM, queue_num) |
				QHCA_FIELD_PREP(QHCA_DB_QUEUE_IDX, idx)));
}

#endif /* QHCA_DB_H */
