/// A direct-mapped cache of recently made strings, so that a repeated id (an onboarding, a session, a
/// placement, all UUID-sized and so heap-allocated as `String`s) costs a compare instead of an allocation
/// and a UTF-8 validation.
///
/// The tables are raw allocations rather than arrays: a lookup is on every string of every line, and arrays
/// cost a bounds check and (on a store) a uniqueness check each time. Copies share the tables; the owner calls
/// ``deallocate()`` once.
struct RecentStrings {
    /// One slot: a hash and its string side by side, so that a lookup touches one cache line of the table
    /// (as two tables, a lookup missed in both).
    private struct Entry {
        var hash: UInt64
        var string: String
        var padding: UInt64 = 0  // 32 bytes: two slots per cache line, none straddling one
    }

    /// 128 KiB of slots: enough for the ids of a few thousand sessions in flight (1024 slots missed about one
    /// string per line more on the benchmark's NDJSON).
    private static let size = 4096
    private let entries: UnsafeMutablePointer<Entry>

    init() {
        let raw = UnsafeMutableRawPointer.allocate(
            byteCount: RecentStrings.size * MemoryLayout<Entry>.stride, alignment: 64)
        entries = raw.initializeMemory(as: Entry.self, repeating: Entry(hash: 0, string: ""), count: RecentStrings.size)
    }

    /// Frees the tables; the cache must not be used afterwards.
    func deallocate() {
        entries.deinitialize(count: RecentStrings.size)
        UnsafeMutableRawPointer(entries).deallocate()
    }

    /// The string for `bytes` (valid UTF-8), made once and then reused while it stays in the cache.
    ///
    /// Short strings are cached too: a hit costs a hash and a compare, less than `String(decoding:)`'s validation.
    ///
    /// Not `mutating`: the tables are written through their pointers, so the cache is passed by value and
    /// building an event needs no exclusive access to the reader's stored property (which made Swift copy
    /// the finished `Event` out of the access scope).
    @inline(__always)
    func string(_ bytes: UnsafeRawBufferPointer) -> String {
        let n = bytes.count
        if n == 0 { return "" }
        let first: UInt64, last: UInt64
        if n >= 8 {
            first = bytes.loadUnaligned(as: UInt64.self)
            last = bytes.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
        } else {
            var v: UInt64 = 0
            for i in 0..<n { v |= UInt64(bytes[i]) << UInt64(8 * i) }
            first = v
            last = 0
        }
        let mid: UInt64 = n >= 16 ? bytes.loadUnaligned(fromByteOffset: n / 2 - 4, as: UInt64.self) : 0
        var h =
            (first &* 0x9E37_79B9_7F4A_7C15) ^ (last &* 0xC2B2_AE3D_27D4_EB4F) ^ (mid &* 0x1656_67B1_9E37_79F9)
            ^ UInt64(n)
        h ^= h >> 29
        h = h | 1  // 0 marks an empty entry
        let index = Int(truncatingIfNeeded: h >> 7) & (RecentStrings.size - 1)
        let entry = entries + index
        if entry.pointee.hash == h {
            let cached = entry.pointee.string
            let same = cached.utf8.withContiguousStorageIfAvailable { stored in
                stored.count == n && memcmpEqual(stored.baseAddress!, bytes.baseAddress!, n)
            }
            if same == true { return cached }
        }
        let made = String(decoding: bytes, as: UTF8.self)
        entry.pointee.hash = h
        entry.pointee.string = made
        return made
    }
}

@inline(__always)
func memcmpEqual(_ a: UnsafePointer<UInt8>, _ b: UnsafeRawPointer, _ n: Int) -> Bool {
    var i = 0
    while i + 8 <= n {
        if UnsafeRawPointer(a).loadUnaligned(fromByteOffset: i, as: UInt64.self)
            != b.loadUnaligned(fromByteOffset: i, as: UInt64.self)
        {
            return false
        }
        i += 8
    }
    while i < n {
        if a[i] != b.load(fromByteOffset: i, as: UInt8.self) { return false }
        i += 1
    }
    return true
}
