// A software prefetch for Swift, which has no prefetch intrinsic of its own. `static inline`, so that the Swift
// compiler inlines it into its callers as the one instruction it is (PREFETCHT0 on x86-64); it never faults.
#ifndef BW_PREFETCH_H
#define BW_PREFETCH_H

/// Asks the processor to bring the cache line holding `address` into all cache levels, for a read soon.
static inline void bw_prefetch(const void *address) { __builtin_prefetch(address, 0, 3); }

#endif
