#ifndef BW_ALLOC_COUNTER_H
#define BW_ALLOC_COUNTER_H

#include <stdint.h>

/// Allocations (malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign, valloc) made by the
/// whole process since it started, Swift runtime and Foundation included.
uint64_t bw_alloc_count(void);

/// Bytes requested by those allocations.
uint64_t bw_alloc_bytes(void);

/// Calls to free with a non-null pointer.
uint64_t bw_free_count(void);

#endif
