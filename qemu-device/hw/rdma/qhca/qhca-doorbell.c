/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qhca doorbell pages (BAR 2): one 4 KiB page per UAR, mapped by user
 * space, so everything written here may come from an unprivileged process.
 *
 * Version 1.0 defines the doorbell offsets but not yet the queues behind
 * them: a well-formed doorbell on an allocated page is counted and traced,
 * anything else is also reported as a guest error.
 */
#include "qemu/osdep.h"
#include "qhca.h"
#include "trace.h"

static bool qhca_db_offset_valid(uint32_t offset)
{
    switch (offset) {
    case QHCA_DB_SQ:
    case QHCA_DB_RQ:
    case QHCA_DB_CQ:
        return true;
    default:
        return false;
    }
}

static uint64_t qhca_db_read(void *opaque, hwaddr addr, unsigned size)
{
    trace_qhca_db_read(addr, size);
    return 0;
}

static void qhca_db_write(void *opaque, hwaddr addr, uint64_t data,
                          unsigned size)
{
    QhcaState *s = opaque;
    uint64_t page = addr >> QHCA_DB_PAGE_SHIFT;
    uint32_t offset = addr & (QHCA_DB_PAGE_SIZE - 1);

    s->counters.doorbells++;
    trace_qhca_db_write(page, offset, size, data);

    if (!qhca_is_ready(s)) {
        qhca_guest_error(s, QHCA_ERR_NOT_READY, db_not_ready,
                         "doorbell page %" PRIu64 " offset 0x%x = 0x%" PRIx64
                         " while not ready", page, offset, data);
    } else if (page >= s->uars.size || !qhca_table_live(&s->uars, page)) {
        qhca_guest_error(s, QHCA_ERR_BAD_DOORBELL, db_page,
                         "page %" PRIu64 " offset 0x%x size %u: %s",
                         page, offset, size, "page not allocated");
    } else if (size != 4 || !qhca_db_offset_valid(offset)) {
        qhca_guest_error(s, QHCA_ERR_BAD_DOORBELL, db_page,
                         "page %" PRIu64 " offset 0x%x size %u: %s",
                         page, offset, size, "no doorbell here");
    }
}

const MemoryRegionOps qhca_db_ops = {
    .read = qhca_db_read,
    .write = qhca_db_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 1,
        .max_access_size = 8,
        .unaligned = true,
    },
    .impl = {
        .min_access_size = 1,
        .max_access_size = 8,
        .unaligned = true,
    },
};
