import Testing

@testable import BoardwalkCodec

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

/// `ByteReader.refLikelyThreeBytes(limit:)` reads a three-byte reference from one 32-bit load and hands everything else
/// to `ref(limit:)`: for references of every length, at every distance from the end, with limits below and above them,
/// and for longer spellings and truncations, both give the same value and position or the same error.
@Test func threeByteReferencesReadAsRefReadsThem() {
    func both(_ bytes: [UInt8], limit: UInt32) -> (Result<UInt32, CodecError>, Result<UInt32, CodecError>, Int, Int) {
        bytes.withUnsafeBytes { raw in
            var a = ByteReader(base: raw.baseAddress!, position: 0, end: bytes.count)
            var b = a
            let ra: Result<UInt32, CodecError>, rb: Result<UInt32, CodecError>
            do throws(CodecError) { ra = .success(try a.refLikelyThreeBytes(limit: limit)) } catch {
                ra = .failure(error)
            }
            do throws(CodecError) { rb = .success(try b.ref(limit: limit)) } catch { rb = .failure(error) }
            return (ra, rb, a.position, b.position)
        }
    }
    var values: [UInt64] = [
        0, 1, 0x7F, 0x80, 0x3FFF, 0x4000, 0x4001, 0x12345, 0x1F_FFFF, 0x20_0000, 0xFFFF_FFFF, 0x1_0000_0000,
    ]
    values += (0..<40).map { UInt64($0) * 52_183 + 16_384 }
    var compared = 0
    for value in values {
        let bytes = VarintTests.encoded(value)
        for padding in 0...5 {
            for limit: UInt32 in [
                0, 1, 0x4000, UInt32(truncatingIfNeeded: min(value, 0xFFFF_FFFF)),
                UInt32(truncatingIfNeeded: min(value + 1, 0xFFFF_FFFF)), .max,
            ] {
                let (a, b, pa, pb) = both(bytes + [UInt8](repeating: 0x9C, count: padding), limit: limit)
                #expect(a == b && pa == pb, "value \(value), padding \(padding), limit \(limit)")
                compared += 1
            }
        }
    }
    // Longer spellings (a last byte of 0), continuation bits into the end, and a third byte with its high bit set.
    for bytes: [UInt8] in [
        [0x80, 0x80, 0x00, 0x01], [0xFF, 0xFF, 0x00, 0x05], [0x81, 0x81], [0x81, 0x81, 0x81], [0x81, 0x81, 0x81, 0x01],
        [0x81, 0x81, 0x81, 0x81, 0x01], [0x80, 0x80, 0x80, 0x00],
    ] {
        let (a, b, pa, pb) = both(bytes, limit: .max)
        #expect(a == b && pa == pb, "\(bytes)")
        compared += 1
    }
    #expect(compared > 1_000)
}
