import Boardwalk

#if canImport(Glibc)
    import Glibc
#endif

/// The monotonic clock in microseconds, for durations.
func monotonicMicroseconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
}
