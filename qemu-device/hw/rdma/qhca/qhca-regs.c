/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qhca register file (BAR 0 below the MSI-X table): identity, the
 * reset/enable handshake, the admin queue configuration and the doorbell
 * registers.
 *
 * Registers are 32 bits wide and only 32-bit aligned accesses reach them;
 * the memory API hands us every other width too, so that it can be
 * reported instead of being split or merged silently.
 */
#include "qemu/osdep.h"
#include "qemu/bitops.h"
#include "qemu/lockable.h"
#include "qhca.h"
#include "qhca-eth.h"
#include "trace.h"

static void qhca_bad_register(QhcaState *s, hwaddr addr, unsigned size,
                              const char *why)
{
    qhca_guest_error(s, QHCA_ERR_BAD_REGISTER, bad_register,
                     "%u-byte access at 0x%" PRIx64 ": %s",
                     size, (uint64_t)addr, why);
}

void qhca_device_reset(QhcaState *s)
{
    trace_qhca_reset();
    qhca_aq_reset(s);
    /* The engine may be in the middle of a round: wait for it. */
    QEMU_LOCK_GUARD(&s->lock);
    s->status = 0;
    qhca_engine_reset(s);
    qhca_objects_reset(s);
    qhca_fault_reset(s);
    qhca_gid_reset(s);
    qhca_net_reset(s);
    s->ctrl = 0;
    s->error = QHCA_ERR_NONE;
    memset(&s->counters, 0, sizeof(s->counters));
    /* 1.7: the next driver must not see what the last one left in BAR 4. */
    if (s->dm) {
        memset(s->dm, 0, s->params.dm_size);
        memory_region_set_dirty(&s->dm_bar, 0, s->params.dm_size);
    }
}

/* Stop taking work until a reset; the caller has recorded why. */
void qhca_fatal(QhcaState *s)
{
    s->status = (s->status & ~QHCA_STATUS_READY) | QHCA_STATUS_FATAL;
    qhca_aq_stop(s);
    trace_qhca_fatal(s->error);
}

static void qhca_enable(QhcaState *s)
{
    if (s->ctrl & QHCA_CTRL_ENABLE) {
        return;
    }
    s->ctrl |= QHCA_CTRL_ENABLE;
    if (s->status & QHCA_STATUS_FATAL) {
        /* Only a reset clears FATAL. */
        return;
    }
    if (!qhca_aq_check_config(s)) {
        qhca_fatal(s);
        return;
    }
    qhca_aq_start(s);
    s->status |= QHCA_STATUS_READY;
    /* Work that waited while the device was disabled. */
    qhca_engine_wake(s);
}

static void qhca_disable(QhcaState *s)
{
    if (!(s->ctrl & QHCA_CTRL_ENABLE)) {
        return;
    }
    trace_qhca_disable();
    s->ctrl &= ~QHCA_CTRL_ENABLE;
    s->status &= ~QHCA_STATUS_READY;
    qhca_aq_stop(s);
}

static void qhca_ctrl_write(QhcaState *s, uint32_t val)
{
    if (val & QHCA_CTRL_RSVD) {
        qhca_guest_error(s, QHCA_ERR_RESERVED_BITS, reserved_bits,
                         "register 0x%x value 0x%x", QHCA_REG_CTRL, val);
        return;
    }
    if (val & QHCA_CTRL_RESET) {
        /* A reset leaves the device disabled, whatever ENABLE said. */
        qhca_device_reset(s);
        return;
    }
    /* STATUS is also the engine's (qhca_fatal()). */
    QEMU_LOCK_GUARD(&s->lock);
    if (val & QHCA_CTRL_ENABLE) {
        qhca_enable(s);
    } else {
        qhca_disable(s);
    }
}

/* The admin queue registers: writable only while the device is disabled. */
static void qhca_aq_reg_write(QhcaState *s, hwaddr addr, uint32_t val)
{
    QhcaAdminQueue *aq = &s->aq;

    if (s->ctrl & QHCA_CTRL_ENABLE) {
        qhca_guest_error(s, QHCA_ERR_CONFIG_LOCKED, config_locked,
                         "register 0x%x written while enabled",
                         (uint32_t)addr);
        return;
    }

    switch (addr) {
    case QHCA_REG_AQ_SQ_BASE_LO:
        aq->sq_base = deposit64(aq->sq_base, 0, 32, val);
        break;
    case QHCA_REG_AQ_SQ_BASE_HI:
        aq->sq_base = deposit64(aq->sq_base, 32, 32, val);
        break;
    case QHCA_REG_AQ_CQ_BASE_LO:
        aq->cq_base = deposit64(aq->cq_base, 0, 32, val);
        break;
    case QHCA_REG_AQ_CQ_BASE_HI:
        aq->cq_base = deposit64(aq->cq_base, 32, 32, val);
        break;
    case QHCA_REG_AQ_CFG:
        if (val & QHCA_AQ_CFG_RSVD) {
            qhca_guest_error(s, QHCA_ERR_RESERVED_BITS, reserved_bits,
                             "register 0x%x value 0x%x",
                             QHCA_REG_AQ_CFG, val);
            return;
        }
        aq->cfg = val;
        break;
    default:
        g_assert_not_reached();
    }
}

static void qhca_doorbell_write(QhcaState *s, hwaddr addr, uint32_t val)
{
    if (!qhca_is_ready(s)) {
        qhca_guest_error(s, QHCA_ERR_NOT_READY, not_ready,
                         "doorbell 0x%x = 0x%x while not ready",
                         (uint32_t)addr, val);
        return;
    }

    switch (addr) {
    case QHCA_REG_AQ_SQ_DB:
        qhca_aq_sq_doorbell(s, val);
        break;
    case QHCA_REG_AQ_CQ_DB:
        qhca_aq_cq_doorbell(s, val);
        break;
    case QHCA_REG_EQ_DB:
        qhca_eq_doorbell(s, val);
        break;
    default:
        g_assert_not_reached();
    }
}

static uint64_t qhca_mmio_read(void *opaque, hwaddr addr, unsigned size)
{
    QhcaState *s = opaque;
    uint32_t val;

    if (size != 4 || (addr & 3)) {
        qhca_bad_register(s, addr, size, "not a 32-bit register access");
        return 0;
    }

    switch (addr) {
    case QHCA_REG_VERSION:
        val = QHCA_VERSION_CURRENT;
        break;
    case QHCA_REG_MAGIC:
        val = QHCA_MAGIC;
        break;
    case QHCA_REG_CAPS:
        val = 0;
        break;
    case QHCA_REG_AQ_CAPS:
        val = QHCA_FIELD_PREP(QHCA_AQ_CAPS_MAX_DEPTH_LOG2,
                              QHCA_AQ_MAX_DEPTH_LOG2);
        break;
    case QHCA_REG_CTRL:
        val = s->ctrl;
        break;
    case QHCA_REG_STATUS:
        val = s->status;
        break;
    case QHCA_REG_ERROR:
        val = s->error;
        break;
    case QHCA_REG_DB_PAGES:
        val = s->params.max_uars;
        break;
    case QHCA_REG_AQ_SQ_BASE_LO:
        val = extract64(s->aq.sq_base, 0, 32);
        break;
    case QHCA_REG_AQ_SQ_BASE_HI:
        val = extract64(s->aq.sq_base, 32, 32);
        break;
    case QHCA_REG_AQ_CQ_BASE_LO:
        val = extract64(s->aq.cq_base, 0, 32);
        break;
    case QHCA_REG_AQ_CQ_BASE_HI:
        val = extract64(s->aq.cq_base, 32, 32);
        break;
    case QHCA_REG_AQ_CFG:
        val = s->aq.cfg;
        break;
    case QHCA_REG_MSIX_VECTORS:
        val = s->params.msix_vectors;
        break;
    case QHCA_REG_AQ_SQ_DB:
    case QHCA_REG_AQ_CQ_DB:
    case QHCA_REG_EQ_DB:
        qhca_bad_register(s, addr, size, "read of a write-only register");
        return 0;
    default:
        qhca_bad_register(s, addr, size, "no register at this offset");
        return 0;
    }

    trace_qhca_reg_read((uint32_t)addr, val);
    return val;
}

static void qhca_mmio_write(void *opaque, hwaddr addr, uint64_t data,
                            unsigned size)
{
    QhcaState *s = opaque;
    uint32_t val = data;

    if (size != 4 || (addr & 3)) {
        qhca_bad_register(s, addr, size, "not a 32-bit register access");
        return;
    }

    trace_qhca_reg_write((uint32_t)addr, val);

    switch (addr) {
    case QHCA_REG_CTRL:
        qhca_ctrl_write(s, val);
        break;
    case QHCA_REG_AQ_SQ_BASE_LO:
    case QHCA_REG_AQ_SQ_BASE_HI:
    case QHCA_REG_AQ_CQ_BASE_LO:
    case QHCA_REG_AQ_CQ_BASE_HI:
    case QHCA_REG_AQ_CFG:
        qhca_aq_reg_write(s, addr, val);
        break;
    case QHCA_REG_AQ_SQ_DB:
    case QHCA_REG_AQ_CQ_DB:
    case QHCA_REG_EQ_DB:
        qhca_doorbell_write(s, addr, val);
        break;
    case QHCA_REG_VERSION:
    case QHCA_REG_MAGIC:
    case QHCA_REG_CAPS:
    case QHCA_REG_AQ_CAPS:
    case QHCA_REG_STATUS:
    case QHCA_REG_ERROR:
    case QHCA_REG_DB_PAGES:
    case QHCA_REG_MSIX_VECTORS:
        qhca_bad_register(s, addr, size, "write to a read-only register");
        break;
    default:
        qhca_bad_register(s, addr, size, "no register at this offset");
        break;
    }
}

const MemoryRegionOps qhca_reg_ops = {
    .read = qhca_mmio_read,
    .write = qhca_mmio_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    /* Accept every access so that a bad one is reported, not dropped. */
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
