import BoardwalkCodec
import BoardwalkGenerator
import BoardwalkStoreFormat
import Testing

private func build(_ strings: [String]) -> [UInt8] {
    var builder = StringChunkBuilder()
    for s in strings {
        var copy = s
        copy.withUTF8 { builder.append(UnsafeRawBufferPointer($0)) }
    }
    #expect(builder.count == strings.count)
    let bytes = builder.withValue(checksumSeed: CRC32C()) { Array($0) }
    #expect(bytes.count == builder.byteCount)
    return bytes
}

/// `payload` (a count and strings) with the checksum in front that makes it pass under an empty key.
private func sealed(_ payload: [UInt8]) -> [UInt8] {
    let crc = payload.withUnsafeBytes { CRC32C.checksum($0) }
    return withUnsafeBytes(of: crc.littleEndian) { Array($0) } + payload
}

/// The chunk `build` makes, without its checksum.
private func payload(_ strings: [String]) -> [UInt8] { Array(build(strings).dropFirst(StringChunkReader.checksumSize)) }

private func read(_ bytes: [UInt8]) throws -> [String] {
    try bytes.withUnsafeBytes { raw in
        var reader = try StringChunkReader(raw, checksumSeed: CRC32C())
        var out: [String] = []
        while let entry = try reader.next() { out.append(entry.string) }
        #expect(out.count == reader.count)
        return out
    }
}

@Suite struct StringChunkTests {
    static let lowerUUID = "0f8e2c1a-9b3d-4e5f-a6b7-c8d9e0f1a2b3"
    static let upperUUID = "0F8E2C1A-9B3D-4E5F-A6B7-C8D9E0F1A2B3"
    static let digitsUUID = "01234567-8901-2345-6789-012345678901"
    static let mixedUUID = "0f8e2c1a-9b3d-4e5f-A6B7-c8d9e0f1a2b3"

    /// Every kind of string comes back exactly: plain, empty, multi-byte, long, and UUIDs in either case, with
    /// digits only (stored as lowercase, the same string), or with mixed case (not a canonical UUID: kept as is).
    @Test func roundTrip() throws {
        let strings = [
            "", "onb_1", "été ✓ 🧭", String(repeating: "x", count: 5_000), Self.lowerUUID, Self.upperUUID,
            Self.digitsUUID, Self.mixedUUID, "0f8e2c1a-9b3d-4e5f-a6b7-c8d9e0f1a2b", "{\(Self.lowerUUID)}",
        ]
        #expect(try read(build(strings)) == strings)
        #expect(try read(build([Self.upperUUID])) == [Self.upperUUID])
    }

    /// A canonical UUID takes a header byte and 16 bytes instead of a length and 36 characters.
    @Test func uuidsAreSixteenBytes() throws {
        let one = payload([Self.lowerUUID])
        #expect(one.count == 1 + 1 + 16)
        let mixed = payload([Self.mixedUUID])
        #expect(mixed.count == 1 + 1 + 36)
        #expect(StringChunkBuilder.byteCountBound(utf8Count: 36) >= 17)
    }

    /// `matches` compares with UTF-8 bytes without building the string, for both kinds of entry.
    @Test func matchesBytes() throws {
        let strings = ["abc", Self.lowerUUID, Self.upperUUID, Self.digitsUUID]
        let bytes = build(strings)
        try bytes.withUnsafeBytes { raw in
            var reader = try StringChunkReader(raw, checksumSeed: CRC32C())
            var i = 0
            while let entry = try reader.next() {
                for (j, candidate) in (strings + [Self.mixedUUID, "abd", ""]).enumerated() {
                    var c = candidate
                    let same = c.withUTF8 { entry.matches(UnsafeRawBufferPointer($0)) }
                    #expect(same == (j == i), "entry \(i) against \(candidate)")
                }
                i += 1
            }
        }
    }

    /// A zero or oversized count, a reserved header, trailing bytes, an empty value and every proper prefix
    /// are errors.
    @Test func rejectsMalformedChunks() throws {
        let bytes = payload(["ab", Self.lowerUUID, "c"])
        #expect(throws: CodecError.self) { try read([]) }
        #expect(throws: CodecError.self) { try read(sealed([])) }
        #expect(throws: CodecError.self) { try read(sealed([0])) }
        #expect(throws: CodecError.self) { try read(sealed([200, 1])) }
        for n in 0..<bytes.count {
            #expect(throws: CodecError.self) { try read(sealed(Array(bytes[0..<n]))) }
        }
        #expect(throws: CodecError.self) { try read(sealed(bytes + [0])) }
        // The UUID's header (after the count and "ab": 1 + 1 + 2) set to a reserved odd value.
        var reserved = bytes
        #expect(reserved[4] == 1)
        reserved[4] = 5
        let error = #expect(throws: CodecError.self) { try read(sealed(reserved)) }
        #expect(error?.offset == StringChunkReader.checksumSize + 4)
    }

    /// Any single damaged byte fails the checksum (at offset 0); damage under a checksum that matches gives an error
    /// with an offset inside the value, or strings (never a trap).
    @Test func damageNeverTraps() throws {
        var rng = SplitMix64(seed: 7)
        var strings: [String] = []
        for i in 0..<40 {
            switch rng.next() % 3 {
            case 0: strings.append("s\(i)-\(rng.next() % 1000)")
            case 1: strings.append(Self.lowerUUID)
            default: strings.append(String(repeating: "é", count: Int(rng.next() % 20)))
            }
        }
        let bytes = build(strings)
        let inner = payload(strings)
        for i in bytes.indices {
            for flip: UInt8 in [0x01, 0x80, 0xFF] {
                var damaged = bytes
                damaged[i] ^= flip
                let error = #expect(throws: CodecError.self) { try read(damaged) }
                #expect(error?.offset == 0)
            }
        }
        for i in inner.indices {
            for flip: UInt8 in [0x01, 0x80, 0xFF] {
                var damaged = inner
                damaged[i] ^= flip
                do {
                    _ = try read(sealed(damaged))
                } catch let error as CodecError {
                    #expect(error.offset >= 0 && error.offset <= damaged.count + StringChunkReader.checksumSize)
                }
            }
        }
    }

    /// `matches` agrees with `string` for UUID entries of every kind: lowercase, uppercase, digits only, and a chunk
    /// (not written by the builder) that flags a digits-only UUID as uppercase; candidates in the other case, in
    /// mixed case, one nibble off, or not UUIDs at all.
    @Test func matchesAgreesWithString() throws {
        var rng = SplitMix64(seed: 11)
        var entries: [[UInt8]] = []
        func uuidEntry(_ hi: UInt64, _ lo: UInt64, upper: Bool) -> [UInt8] {
            [upper ? 3 : 1] + withUnsafeBytes(of: hi.bigEndian, Array.init)
                + withUnsafeBytes(of: lo.bigEndian, Array.init)
        }
        for _ in 0..<200 {
            let hi = rng.next(), lo = rng.next()
            entries.append(uuidEntry(hi, lo, upper: false))
            entries.append(uuidEntry(hi, lo, upper: true))
            // Only digits: every nibble below 10.
            let dhi = hi & 0x7777_7777_7777_7777, dlo = lo & 0x3333_3333_3333_3333
            entries.append(uuidEntry(dhi, dlo, upper: false))
            entries.append(uuidEntry(dhi, dlo, upper: true))
            // One letter, the rest digits, in each position of `hi`.
            let shift = UInt64(rng.next() % 16) * 4
            entries.append(uuidEntry(dhi | 0xA << shift, dlo, upper: rng.next() % 2 == 0))
        }
        for entry in entries {
            let chunk = sealed([1] + entry)
            try chunk.withUnsafeBytes { raw in
                var reader = try StringChunkReader(raw, checksumSeed: CRC32C())
                let e = try #require(try reader.next())
                let text = e.string
                var candidates = [
                    text, text.lowercased(), text.uppercased(), String(text.dropLast()) + "0",
                    String(text.dropLast()) + "a",
                    String(text.dropLast()) + "A", "{" + text.dropFirst(), text + " ",
                ]
                if let i = text.firstIndex(where: \.isLetter) {
                    var mixed = text
                    let c = mixed[i]
                    mixed.replaceSubrange(i...i, with: c.isUppercase ? c.lowercased() : c.uppercased())
                    candidates.append(mixed)
                }
                for candidate in candidates {
                    var c = candidate
                    let matched = c.withUTF8 { e.matches(UnsafeRawBufferPointer($0)) }
                    #expect(matched == (candidate == text), "\(text) against \(candidate)")
                }
                #expect(try reader.next() == nil)
            }
        }
    }

    /// A count of 128 strings or more takes two bytes: the value and `byteCount` say so, and it reads back.
    @Test(arguments: [127, 128, 129, 16_384])
    func countVarintGrows(count: Int) throws {
        let strings = (0..<count).map { "\($0)" }
        let bytes = build(strings)
        let count0 = bytes[StringChunkReader.checksumSize]
        #expect(count < 128 ? count0 < 0x80 : count0 >= 0x80)
        #expect(try read(bytes) == strings)
    }

    /// `byteCount(appending:)` bounds the size after an append, also when the count's varint grows a byte (127 to
    /// 128 strings, 16 383 to 16 384), which `byteCount + byteCountBound` alone misses.
    @Test func byteCountAppendingIsABound() throws {
        var builder = StringChunkBuilder()
        var missedByStaticBound = 0
        for i in 0..<16_400 {
            var s = i % 7 == 0 ? "0f8e2c1a-9b3d-4e5f-a6b7-\(String(100_000_000_000 + i))" : "s\(i)"
            let n = s.utf8.count
            let bound = builder.byteCount(appending: n)
            let staticBound = builder.byteCount + StringChunkBuilder.byteCountBound(utf8Count: n)
            s.withUTF8 { builder.append(UnsafeRawBufferPointer($0)) }
            #expect(builder.byteCount <= bound, "string \(i)")
            if builder.byteCount > staticBound { missedByStaticBound += 1 }
        }
        #expect(missedByStaticBound == 2)  // at 128 and at 16 384 strings
        #expect(builder.withValue(checksumSeed: CRC32C()) { $0.count } == builder.byteCount)
    }

    /// A count of 0 is reported as an invalid count, not as a count over a limit.
    @Test func zeroCountIsInvalid() throws {
        let error = #expect(throws: CodecError.self) { try read(sealed([0, 2, 65])) }
        #expect(error?.offset == StringChunkReader.checksumSize)
        #expect(error.map { "\($0)".contains("string chunk count") } == true, "\(String(describing: error))")
    }
}
