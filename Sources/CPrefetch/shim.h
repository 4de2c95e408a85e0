// Cache prefetch hints for the hash tables of OpenCoreData's core (IDTable): Swift has no
// prefetch intrinsic. A hint only: it never faults, whatever the address, and changes no value.
#ifndef OPENCOREDATA_CPREFETCH_H
#define OPENCOREDATA_CPREFETCH_H

/// Asks the processor to bring the cache line holding `address` in, for a write soon.
static inline void ocd_prefetch_for_write(const void *address) {
    __builtin_prefetch(address, 1, 3);
}

/// Asks the processor to bring the cache line holding `address` in, for a read soon.
static inline void ocd_prefetch_for_read(const void *address) {
    __builtin_prefetch(address, 0, 3);
}

#endif
