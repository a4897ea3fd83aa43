// Counts every heap allocation of the process by defining the malloc family in the executable, which
// the dynamic linker then prefers to glibc's for every library (Swift runtime, Foundation, SQLite, LMDB).
// Each function forwards to glibc's own implementation through its __libc_* alias, so memory stays
// glibc's (malloc_usable_size and friends keep working) and no dlsym bootstrap problem arises.
//
// This target is linked only into the benchmark executable. The counters are relaxed atomics: a few
// nanoseconds per allocation, the same for every peer, and correct if a library allocates on a thread.
#include "CAllocCounter.h"

#include <errno.h>
#include <stddef.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void *__libc_valloc(size_t size);
extern void *__libc_pvalloc(size_t size);
extern void __libc_free(void *pointer);

static uint64_t allocations;
static uint64_t allocatedBytes;
static uint64_t frees;

static inline void note(size_t size) {
    __atomic_fetch_add(&allocations, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&allocatedBytes, (uint64_t)size, __ATOMIC_RELAXED);
}

uint64_t bw_alloc_count(void) { return __atomic_load_n(&allocations, __ATOMIC_RELAXED); }
uint64_t bw_alloc_bytes(void) { return __atomic_load_n(&allocatedBytes, __ATOMIC_RELAXED); }
uint64_t bw_free_count(void) { return __atomic_load_n(&frees, __ATOMIC_RELAXED); }

void *malloc(size_t size) {
    note(size);
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    note(count * size);
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    // realloc(NULL, n) is an allocation; growing an existing block is counted too, since it may move.
    note(size);
    return __libc_realloc(pointer, size);
}

void free(void *pointer) {
    if (pointer != NULL) __atomic_fetch_add(&frees, 1, __ATOMIC_RELAXED);
    __libc_free(pointer);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    // > POSIX: alignment must be a power of two multiple of sizeof(void *); on error *result is unchanged.
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) return EINVAL;
    note(size);
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL && size != 0) return ENOMEM;
    *result = pointer;
    return 0;
}

void *aligned_alloc(size_t alignment, size_t size) {
    note(size);
    return __libc_memalign(alignment, size);
}

void *memalign(size_t alignment, size_t size) {
    note(size);
    return __libc_memalign(alignment, size);
}

void *valloc(size_t size) {
    note(size);
    return __libc_valloc(size);
}

void *pvalloc(size_t size) {
    note(size);
    return __libc_pvalloc(size);
}
