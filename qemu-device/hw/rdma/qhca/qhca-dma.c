/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qhca DMA: the only way the device touches guest memory.
 *
 * Every address the device uses comes from the guest, so before any access
 * the whole range is checked to be guest RAM as the function sees it
 * (through its bus master address space, so with bus mastering off nothing
 * is reachable).  Device memory is refused: a ring placed over a BAR would
 * make the device program itself.
 */
#include "qemu/osdep.h"
#include "exec/memory.h"
#include "qemu/rcu.h"
#include "qhca.h"
#include "trace.h"

bool qhca_dma_in_ram(QhcaState *s, uint64_t addr, uint64_t len,
                     bool is_write)
{
    AddressSpace *as = pci_get_address_space(PCI_DEVICE(s));

    if (len == 0 || len - 1 > UINT64_MAX - addr) {
        return false;
    }

    RCU_READ_LOCK_GUARD();
    while (len) {
        hwaddr xlat, plen = len;
        MemoryRegion *mr;

        mr = address_space_translate(as, addr, &xlat, &plen, is_write,
                                     MEMTXATTRS_UNSPECIFIED);
        if (!memory_region_is_ram(mr) || memory_region_is_ram_device(mr) ||
            (is_write && memory_region_is_rom(mr))) {
            trace_qhca_dma_not_ram(addr, memory_region_name(mr) ?: "nothing");
            return false;
        }
        if (plen == 0 || plen > len) {
            return false;
        }
        addr += plen;
        len -= plen;
    }
    return true;
}

bool qhca_dma_read(QhcaState *s, uint64_t addr, void *buf, uint64_t len)
{
    if (!qhca_dma_in_ram(s, addr, len, false)) {
        return false;
    }
    return pci_dma_read(PCI_DEVICE(s), addr, buf, len) == MEMTX_OK;
}

bool qhca_dma_write(QhcaState *s, uint64_t addr, const void *buf,
                    uint64_t len)
{
    if (!qhca_dma_in_ram(s, addr, len, true)) {
        return false;
    }
    return pci_dma_write(PCI_DEVICE(s), addr, buf, len) == MEMTX_OK;
}

/*
 * Write a queue entry (a CQE or an EQE) so that the driver never sees the
 * new phase with old contents: the whole entry first, still carrying the
 * stale phase, then the flags byte with the new one.  pci_dma_write()
 * orders the two writes.
 */
bool qhca_dma_write_entry(QhcaState *s, uint64_t addr, void *entry,
                          size_t size, size_t flags_offset, uint8_t phase)
{
    uint8_t *flags = (uint8_t *)entry + flags_offset;
    uint8_t new_flags;

    /* One helper serves both rings because their phase bits agree. */
    QEMU_BUILD_BUG_ON(QHCA_CQE_FLAGS_PHASE != QHCA_EQE_FLAGS_PHASE);
    new_flags = *flags & ~QHCA_CQE_FLAGS_PHASE;
    if (phase) {
        new_flags |= QHCA_CQE_FLAGS_PHASE;
    }
    *flags = new_flags ^ QHCA_CQE_FLAGS_PHASE;
    if (!qhca_dma_write(s, addr, entry, size)) {
        return false;
    }
    *flags = new_flags;
    return qhca_dma_write(s, addr + flags_offset, flags, 1);
}

/* A ring that was checked at setup became unreachable: stop the device. */
void qhca_dma_ring_failed(QhcaState *s, const char *ring, uint64_t addr)
{
    qhca_guest_error(s, QHCA_ERR_DMA, dma, "%s access at 0x%" PRIx64
                     " left guest RAM", ring, addr);
    qhca_fatal(s);
}
