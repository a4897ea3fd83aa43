@testable import BoardwalkCodec
import Testing

/// `ByteReader.varint()` has separate paths for one, two and three bytes, a word-at-a-time path for up to eight
/// and a byte loop for the rest and for short buffers: each length, at each distance from the buffer's end, must
/// give the same answer as the byte loop.
@Suite struct VarintTests {
    /// The canonical varint bytes of `value`.
    static func encoded(_ value: UInt64) -> [UInt8] {
        var bytes: [UInt8] = []
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
        return bytes
    }

    /// Reads one varint from `bytes` followed by `padding` zero bytes: the value and the bytes it took.
    static func read(_ bytes: [UInt8], padding: Int) throws -> (UInt64, Int) {
        let buffer = bytes + [UInt8](repeating: 0, count: padding)
        return try buffer.withUnsafeBytes { raw in
            var reader = ByteReader(base: raw.baseAddress!, position: 0, end: bytes.count + padding)
            let value = try reader.varint()
            return (value, reader.position)
        }
    }

    @Test(arguments: [0, 1, 2, 7, 8])
    func everyLengthRoundTrips(padding: Int) throws {
        // The edges of each length (2^(7k) − 1 and 2^(7k)) and values in between.
        var values: [UInt64] = [0, 1, 0x7F, .max, .max - 1, UInt64(Int64.max)]
        for k in 1...9 {
            let edge = UInt64(1) << (7 * k)
            values += [edge - 1, edge, edge + 1, edge | 0x55, edge + edge / 2]
        }
        for value in values {
            let bytes = Self.encoded(value)
            let (decoded, used) = try Self.read(bytes, padding: padding)
            #expect(decoded == value, "value \(value), padding \(padding)")
            #expect(used == bytes.count, "value \(value), padding \(padding)")
        }
    }

    @Test(arguments: [0, 1, 2, 8])
    func nonCanonicalSpellingsAreRefused(padding: Int) {
        // Zero, and 1 and 0x3FFF, spelled one byte longer than needed (the last byte 0).
        for bytes: [UInt8] in [[0x80, 0x00], [0x81, 0x80, 0x00], [0xFF, 0xFF, 0x00], [0x80, 0x80, 0x80, 0x00]] {
            #expect(throws: CodecError(offset: 0, reason: .nonCanonicalVarint), "\(bytes), padding \(padding)") {
                _ = try Self.read(bytes, padding: padding)
            }
        }
    }

    @Test func truncatedAtEveryLength() {
        // A varint whose continuation bit runs into the end of the buffer.
        for count in 1...9 {
            let bytes = [UInt8](repeating: 0x81, count: count)
            #expect(throws: CodecError(offset: count, reason: .truncated), "\(count) bytes") {
                _ = try Self.read(bytes, padding: 0)
            }
        }
    }
}
