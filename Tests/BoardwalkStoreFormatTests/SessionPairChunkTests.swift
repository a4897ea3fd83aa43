import BoardwalkCodec
import BoardwalkGenerator
import BoardwalkStoreFormat
import Testing

private func build(_ entries: [(session: UInt32, time: UInt64)]) -> [UInt8] {
    var builder = SessionPairChunkBuilder(capacity: 64)
    for (i, e) in entries.enumerated() {
        if i == 0 {
            builder.reset(firstSession: e.session, time: e.time)
        } else {
            let predicted = builder.byteCount(appending: e.session, time: e.time)
            builder.append(session: e.session, time: e.time)
            #expect(builder.byteCount == predicted, "entry \(i)")
        }
    }
    #expect(builder.count == entries.count)
    let bytes = builder.withValue { Array($0) }
    #expect(bytes.count == builder.byteCount)
    return bytes
}

private func read(_ bytes: [UInt8], first: UInt32) throws -> [(session: UInt32, time: UInt64)] {
    var out: [(session: UInt32, time: UInt64)] = []
    try bytes.withUnsafeBytes { raw in
        var reader = try SessionPairChunkReader(raw, firstSession: first)
        while let entry = try reader.next() { out.append(entry) }
        #expect(out.count == reader.count)
    }
    return out
}

private func same(_ a: [(session: UInt32, time: UInt64)], _ b: [(session: UInt32, time: UInt64)]) -> Bool {
    a.count == b.count && zip(a, b).allSatisfy { $0.session == $1.session && $0.time == $1.time }
}

/// `onboarding_sessions` chunks (store format 6): sessions in increasing order with their times.
@Suite struct SessionPairChunkTests {
    /// Entries come back exactly, whatever the gaps between sessions and times, including times going backwards,
    /// the extremes of both, and a single entry.
    @Test func roundTrip() throws {
        let t: UInt64 = 0x8006_2C1A_0000_0000
        let entries: [(session: UInt32, time: UInt64)] = [
            (7, t), (8, t + 1), (9, t - 5_000_000), (1_000, t + 1 << 40), (1_001, 0), (UInt32.max - 1, .max),
            (UInt32.max, 0),
        ]
        #expect(same(try read(build(entries), first: 7), entries))
        #expect(same(try read(build([(0, 0)]), first: 0), [(0, 0)]))
        #expect(same(try read(build([(UInt32.max, .max)]), first: UInt32.max), [(UInt32.max, .max)]))
    }

    /// Random chunks round-trip (seeded).
    @Test func randomChunksRoundTrip() throws {
        var rng = SplitMix64(seed: 0x5E55_1011)
        for _ in 0..<200 {
            var session = UInt32(truncatingIfNeeded: rng.next()) >> 2
            var time = rng.next()
            var entries = [(session: session, time: time)]
            for _ in 0..<Int(rng.next() % 150) {
                let step = UInt32(1 + rng.next() % (rng.next() % 2 == 0 ? 4 : 100_000))
                guard session <= UInt32.max - step else { break }
                session += step
                time = time &+ (rng.next() % 1_000_000_000) &- 300_000_000
                entries.append((session, time))
            }
            #expect(same(try read(build(entries), first: entries[0].session), entries))
        }
    }

    /// New sessions close together cost a few bytes each: a session delta and a time delta.
    @Test func entriesAreSmall() throws {
        let t: UInt64 = 0x8006_2C1A_0000_0000
        let entries = (0..<100).map { (session: UInt32(1_000 + 2 * $0), time: t + UInt64($0) * 40_000) }
        // Count (1) and the first time (8), then 99 × (1-byte session delta + 3-byte time delta).
        #expect(build(entries).count == 1 + 8 + 99 * 4)
    }

    /// A zero or oversized count, a session delta of 0 or one past 32 bits, trailing bytes, an empty value and
    /// every proper prefix are errors that say where.
    @Test func rejectsMalformedChunks() throws {
        let bytes = build([(10, 5), (11, 6), (300, 2)])
        #expect(throws: CodecError.self) { try read([], first: 10) }
        #expect(throws: CodecError.self) { try read([0] + [UInt8](repeating: 0, count: 8), first: 10) }
        #expect(throws: CodecError.self) { try read([200, 1] + [UInt8](repeating: 0, count: 8), first: 10) }
        for n in 0..<bytes.count {
            #expect(throws: CodecError.self) { try read(Array(bytes[0..<n]), first: 10) }
        }
        #expect(throws: CodecError.self) { try read(bytes + [0], first: 10) }
        // The second entry's session delta (after the count and the first time: offset 9) set to 0.
        var zero = bytes
        zero[9] = 0
        let error = #expect(throws: CodecError.self) { try read(zero, first: 10) }
        #expect(error?.offset == 9)
        // A first session so large that the deltas run past 2^32 - 1.
        #expect(throws: CodecError.self) { try read(bytes, first: UInt32.max - 5) }
    }

    /// Random and damaged bytes never trap: each either reads or throws (and both happen).
    @Test func randomBytesNeverTrap() throws {
        var rng = SplitMix64(seed: 42)
        var read = 0, refused = 0
        let valid = build([(1, 1), (2, 3), (5, 2), (70_000, 9)])
        for _ in 0..<2_000 {
            var bytes =
                rng.next() % 2 == 0
                ? valid : (0..<Int(rng.next() % 40)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            if !bytes.isEmpty {
                for _ in 0..<Int(rng.next() % 4) {
                    bytes[Int(rng.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: rng.next())
                }
            }
            do {
                _ = try SessionPairChunkTests.decode(bytes, first: UInt32(truncatingIfNeeded: rng.next()) >> 1)
                read += 1
            } catch {
                refused += 1
            }
        }
        #expect(read > 100 && refused > 100, "\(read) read, \(refused) refused")
    }

    static func decode(_ bytes: [UInt8], first: UInt32) throws -> Int {
        try bytes.withUnsafeBytes { raw in
            var reader = try SessionPairChunkReader(raw, firstSession: first)
            var n = 0
            while try reader.next() != nil { n += 1 }
            return n
        }
    }
}
