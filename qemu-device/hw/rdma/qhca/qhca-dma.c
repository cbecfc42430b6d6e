/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qhca DMA: the only way the device touches guest memory.
 *
 * Every address the device uses comes from the guest, so before any access
 * the whole range is checked to be guest RAM as the function sees it
 * (through its bus master address space, so with bus mastering off nothing
 * is reachable).  Device memory is refused: a ring placed over a BAR would
 * make the device program itself.  So is the device's own BAR 4 (1.7),
 * which is RAM to QEMU but not guest RAM: only a device memory MR reaches
 * it (qhca_mr_copy()).
 *
 * The engine thread calls these without the BQL.  An access that found
 * RAM must not turn into an MMIO access (which would take the BQL) if the
 * memory map changes in between, so RAM is reached through a
 * MemoryRegionCache: it pins the region it translated to and copies with
 * memcpy, marking written pages dirty as any DMA does.
 */
#include "qemu/osdep.h"
#include "system/dma.h"
#include "qemu/rcu.h"
#include "qhca.h"
#include "trace.h"

static bool qhca_dma_direct_ok(QhcaState *s, MemoryRegion *mr,
                               bool is_write)
{
    return memory_region_is_ram(mr) && !memory_region_is_ram_device(mr) &&
           !(is_write && memory_region_is_rom(mr)) && mr != &s->dm_bar;
}

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
        if (!qhca_dma_direct_ok(s, mr, is_write)) {
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

/*
 * Copy between @buf and guest RAM, one contiguous piece of the memory map
 * at a time.  Behind a vIOMMU the cache sees the IOMMU region, not RAM:
 * then the piece goes through the checked pci_dma_rw() instead.
 */
static bool qhca_dma_rw(QhcaState *s, uint64_t addr, void *buf, uint64_t len,
                        bool is_write)
{
    AddressSpace *as = pci_get_address_space(PCI_DEVICE(s));
    uint8_t *p = buf;

    if (len == 0 || len - 1 > UINT64_MAX - addr) {
        return false;
    }
    while (len) {
        MemoryRegionCache cache = { 0 };
        int64_t l = address_space_cache_init(&cache, as, addr, len, is_write);
        bool ok = false;

        if (l > 0 && cache.ptr &&
            qhca_dma_direct_ok(s, cache.mrs.mr, is_write)) {
            if (is_write) {
                address_space_write_cached(&cache, 0, p, l);
            } else {
                address_space_read_cached(&cache, 0, p, l);
            }
            ok = true;
        } else if (l > 0 && memory_region_is_iommu(cache.mrs.mr)) {
            l = len;
            ok = qhca_dma_in_ram(s, addr, len, is_write) &&
                 pci_dma_rw(PCI_DEVICE(s), addr, p, len,
                            is_write ? DMA_DIRECTION_FROM_DEVICE :
                                       DMA_DIRECTION_TO_DEVICE,
                            MEMTXATTRS_UNSPECIFIED) == MEMTX_OK;
        } else {
            trace_qhca_dma_not_ram(addr, l > 0 ?
                                   memory_region_name(cache.mrs.mr) :
                                   "nothing");
        }
        address_space_cache_destroy(&cache);
        if (!ok) {
            return false;
        }
        addr += l;
        p += l;
        len -= l;
    }
    return true;
}

bool qhca_dma_read(QhcaState *s, uint64_t addr, void *buf, uint64_t len)
{
    return qhca_dma_rw(s, addr, buf, len, false);
}

bool qhca_dma_write(QhcaState *s, uint64_t addr, const void *buf,
                    uint64_t len)
{
    return qhca_dma_rw(s, addr, (void *)buf, len, true);
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
