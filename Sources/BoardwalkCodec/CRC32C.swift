/// CRC-32C (Castagnoli), the checksum of batch-file blocks.
///
/// Table-driven "slicing-by-8": eight 256-entry tables let the loop fold eight input bytes per step. On
/// x86 the SSE4.2 `crc32` instruction is several times faster, but Swift cannot reach it without a C
/// target, and this module depends on the model alone; a system library (zlib-ng, libcrc32c) would be the
/// better choice in a package that may link one. See `docs/codec.md`.
///
/// ```swift
/// var crc = CRC32C()
/// crc.update(header)
/// crc.update(payload)
/// let checksum = crc.value
/// ```
@usableFromInline
package struct CRC32C: Hashable, Sendable {
    @usableFromInline var state: UInt32 = 0xFFFF_FFFF

    /// A checksum of no bytes.
    @inlinable
    package init() {}

    /// The checksum of the bytes given so far.
    @inlinable
    package var value: UInt32 { ~state }

    /// The checksum of `bytes`.
    @inlinable
    package static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var crc = CRC32C()
        crc.update(bytes)
        return crc.value
    }

    /// Feeds `bytes` into the checksum.
    /// - Complexity: O(`bytes.count`), about 1 ns per byte.
    @usableFromInline
    package mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress else { return }
        let n = bytes.count
        var crc = state
        var i = 0
        CRC32C.tables.withUnsafeBufferPointer { t in
            while i + 8 <= n {
                let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                let lo = UInt32(truncatingIfNeeded: word) ^ crc
                let hi = UInt32(truncatingIfNeeded: word >> 32)
                crc =
                    t[7 * 256 + Int(lo & 0xFF)] ^ t[6 * 256 + Int((lo >> 8) & 0xFF)]
                    ^ t[5 * 256 + Int((lo >> 16) & 0xFF)] ^ t[4 * 256 + Int(lo >> 24)]
                    ^ t[3 * 256 + Int(hi & 0xFF)] ^ t[2 * 256 + Int((hi >> 8) & 0xFF)]
                    ^ t[1 * 256 + Int((hi >> 16) & 0xFF)] ^ t[Int(hi >> 24)]
                i += 8
            }
            while i < n {
                crc = t[Int((crc ^ UInt32(base.load(fromByteOffset: i, as: UInt8.self))) & 0xFF)] ^ (crc >> 8)
                i += 1
            }
        }
        state = crc
    }

    /// Feeds the bytes of `array` into the checksum.
    package mutating func update(_ array: [UInt8]) {
        array.withUnsafeBytes { update($0) }
    }

    /// Table k maps a byte to its CRC contribution k bytes further on (reflected polynomial 0x82F63B78).
    static let tables: [UInt32] = {
        var t = [UInt32](repeating: 0, count: 8 * 256)
        for b in 0..<256 {
            var c = UInt32(b)
            for _ in 0..<8 { c = c & 1 != 0 ? (c >> 1) ^ 0x82F6_3B78 : c >> 1 }
            t[b] = c
        }
        for b in 0..<256 {
            var c = t[b]
            for k in 1..<8 {
                c = t[Int(c & 0xFF)] ^ (c >> 8)
                t[k * 256 + b] = c
            }
        }
        return t
    }()
}
