/// A direct-mapped cache of recently made strings, so that a repeated id (an onboarding, a session, a
/// placement, all UUID-sized and so heap-allocated as `String`s) costs a compare instead of an allocation.
struct StringCache {
    private static let size = 1024
    private var hashes: [UInt64]
    private var strings: [String]

    init() {
        hashes = Array(repeating: 0, count: StringCache.size)
        strings = Array(repeating: "", count: StringCache.size)
    }

    /// The string for `bytes` (valid UTF-8), made once and then reused while it stays in the cache.
    @inline(__always)
    mutating func string(_ bytes: UnsafeRawBufferPointer) -> String {
        let n = bytes.count
        // Up to 15 UTF-8 bytes are stored inline in a String: nothing to save.
        if n <= 15 { return String(decoding: bytes, as: UTF8.self) }
        let first = bytes.loadUnaligned(as: UInt64.self)
        let last = bytes.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
        let mid = bytes.loadUnaligned(fromByteOffset: n / 2 - 4, as: UInt64.self)
        var h = (first &* 0x9E37_79B9_7F4A_7C15) ^ (last &* 0xC2B2_AE3D_27D4_EB4F) ^ mid ^ UInt64(n)
        h ^= h >> 29
        h = h | 1  // 0 marks an empty entry
        let index = Int(truncatingIfNeeded: h) & (StringCache.size - 1)
        if hashes[index] == h {
            let cached = strings[index]
            let same = cached.utf8.withContiguousStorageIfAvailable { stored in
                stored.count == n && memcmpEqual(stored.baseAddress!, bytes.baseAddress!, n)
            }
            if same == true { return cached }
        }
        let made = String(decoding: bytes, as: UTF8.self)
        hashes[index] = h
        strings[index] = made
        return made
    }
}

@inline(__always)
func memcmpEqual(_ a: UnsafePointer<UInt8>, _ b: UnsafeRawPointer, _ n: Int) -> Bool {
    var i = 0
    while i + 8 <= n {
        if UnsafeRawPointer(a).loadUnaligned(fromByteOffset: i, as: UInt64.self) != b.loadUnaligned(fromByteOffset: i, as: UInt64.self) {
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
