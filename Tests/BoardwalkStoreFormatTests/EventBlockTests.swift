import BoardwalkCodec
import BoardwalkGenerator
import BoardwalkModel
import BoardwalkStoreFormat
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A block's events as plain values: (time, seq, body).
private struct BlockEvent: Equatable {
    var time: Int64
    var seq: UInt64
    var body: [UInt8]
}

/// The checksum of a block's name, as a store makes it from the key the block is stored under.
private func seed(_ name: [UInt8]) -> CRC32C {
    name.withUnsafeBytes { CRC32C($0) }
}

private func build(_ events: [BlockEvent], name: [UInt8] = []) -> [UInt8] {
    var builder = EventBlockBuilder(capacity: 16)
    builder.start(time: events[0].time, seq: events[0].seq)
    for e in events { e.body.withUnsafeBytes { builder.append(time: e.time, seq: e.seq, body: $0) } }
    let bytes = builder.withBlock(checksumSeed: seed(name)) { Array($0) }
    #expect(bytes.count == builder.byteCount)
    return bytes
}

/// `header` and `events` with the checksums in front that make them pass (the block's, then the header's), under an
/// empty name.
private func sealed(header: [UInt8], events: [UInt8]) -> [UInt8] {
    func le(_ crc: UInt32) -> [UInt8] { withUnsafeBytes(of: crc.littleEndian) { Array($0) } }
    let headed = le(header.withUnsafeBytes { CRC32C.checksum($0) }) + header + events
    return le(headed.withUnsafeBytes { CRC32C.checksum($0) }) + headed
}

private func read(
    _ bytes: [UInt8], firstTime: Int64, firstSeq: UInt64, name: [UInt8] = []
) throws(CodecError) -> [BlockEvent] {
    var out: [BlockEvent] = []
    var failure: CodecError? = nil
    bytes.withUnsafeBytes { raw in
        do throws(CodecError) {
            var reader = try EventBlockReader(raw, firstTime: firstTime, firstSeq: firstSeq, checksumSeed: seed(name))
            while try reader.next() {
                out.append(BlockEvent(time: reader.time, seq: reader.seq, body: Array(reader.body)))
            }
        } catch {
            failure = error
        }
    }
    if let failure { throw failure }
    return out
}

/// Events in strictly increasing (time, seq) order with seqs that go backwards when times tie or jump.
private func randomEvents(_ rng: inout SplitMix64, count: Int) -> [BlockEvent] {
    var time = Int64(bitPattern: rng.next() >> 2) - (1 << 60)
    var seqs = (0..<count).map { UInt64($0) * 3 + 1_000 }
    seqs.shuffle(using: &rng)
    var events: [BlockEvent] = []
    for i in 0..<count {
        time += Int64(rng.next() % 4 == 0 ? 0 : rng.next() % 5_000_000)
        events.append(
            BlockEvent(
                time: time, seq: seqs[i],
                body: (0..<Int(rng.next() % 40)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }))
    }
    // Ties in time must be in seq order.
    events.sort { ($0.time, $0.seq) < ($1.time, $1.seq) }
    return events
}

@Suite struct EventBlockTests {
    @Test(arguments: [1, 2, 7, 100, 3_000])
    func roundTrip(count: Int) throws {
        var rng = SplitMix64(seed: UInt64(count))
        let events = randomEvents(&rng, count: count)
        let bytes = build(events)
        #expect(try read(bytes, firstTime: events[0].time, firstSeq: events[0].seq) == events)
    }

    @Test func readerExposesTheHeader() throws {
        // A `screen_presented` without fields (tag, flags, name code 1), an `open_paywall` (tag, action ref) and
        // an empty body, which is no record.
        let events = [
            BlockEvent(time: 10, seq: 5, body: [0x20, 0, 1]), BlockEvent(time: 10, seq: 9, body: [0x22, 5]),
            BlockEvent(time: 25, seq: 2, body: []),
        ]
        let bytes = build(events)
        // The checksum; count 3, span 15, first − min = 3, max − min = 7; three kind entries (code, count); then the
        // events' deltas, lengths and bodies.
        #expect(
            bytes
                == sealed(
                    header: [3, 15, 3, 7, 3, 0x01, 1, 0x20, 1, 0xFF, 1],
                    events: [0, 0, 3, 0x20, 0, 1, 0, 8, 2, 0x22, 5, 15, 13, 0]))
        try bytes.withUnsafeBytes { raw in
            let reader = try EventBlockReader(raw, firstTime: 10, firstSeq: 5, checksumSeed: CRC32C())
            #expect(reader.count == 3 && reader.lastTime == 25 && reader.minSeq == 2 && reader.maxSeq == 9)
            #expect(reader.kindCounts.map(\.code) == [0x01, 0x20, 0xFF])
            #expect(reader.kindCounts.map(\.count) == [1, 1, 1])
            #expect(reader.kindCounts.count(of: 0x20) == 1 && reader.kindCounts.count(of: 0x02) == 0)
        }
    }

    /// Kind counts that do not describe a block are refused when it is opened, under a checksum that matches:
    /// counts that do not add up to the events, codes or names out of order, unknown codes, a count of 0, more entries
    /// than events, a name reference of `0xFFFFFFFF`.
    @Test(
        arguments: [
            [1, 0x01, 1],  // one event counted, two in the block
            [2, 0x20, 1, 0x01, 1],  // codes out of order
            [2, 0x01, 1, 0x01, 1],  // a code twice
            [1, 0x08, 2],  // analytics name code 8 does not exist
            [1, 0x11, 2],  // a state update with a name
            [1, 0x70, 2],  // kind 7 does not exist
            [2, 0x01, 0, 0x02, 2],  // a count of 0
            [0],  // no entries
            [3, 0x01, 1, 0x02, 1, 0x03, 1],  // more entries than events
            [2, 0x0F, 5, 1, 0x0F, 3, 1],  // unknown names out of order
            [1, 0x0F, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 2],  // the reference no string has
            [1, 0x0F] + [UInt8](repeating: 0xFF, count: 9) + [0x01, 2],  // a reference past 32 bits
            [1, 0x01],  // truncated
        ] as [[UInt8]])
    func malformedKindCountsAreRefused(counts: [UInt8]) throws {
        // Two events (time span 1, seqs 0 and 1) with empty bodies, after the given kind counts.
        let block = sealed(header: [2, 1, 0, 1] + counts, events: [0, 0, 0, 1, 2, 0])
        #expect(throws: CodecError.self) { try read(block, firstTime: 0, firstSeq: 0) }
        #expect(
            try read(sealed(header: [2, 1, 0, 1, 1, 0xFF, 2], events: [0, 0, 0, 1, 2, 0]), firstTime: 0, firstSeq: 0)
                .count
                == 2)
    }

    /// Every proper prefix and every single-byte change of a block fails, with an offset inside the bytes: the
    /// checksum finds every change of up to 32 bits in a row.
    @Test func damagedBlocksFailWithAnOffset() throws {
        var rng = SplitMix64(seed: 99)
        let events = randomEvents(&rng, count: 20)
        let bytes = build(events)
        for n in 0..<bytes.count {
            #expect(throws: CodecError.self, "prefix \(n)") {
                try read(Array(bytes[0..<n]), firstTime: events[0].time, firstSeq: events[0].seq)
            }
        }
        for i in bytes.indices {
            for v: UInt8 in [0x00, 0x01, 0x7F, 0x80, 0xFF] where v != bytes[i] {
                var damaged = bytes
                damaged[i] = v
                let error = #expect(throws: CodecError.self, "byte \(i) = \(v)") {
                    try read(damaged, firstTime: events[0].time, firstSeq: events[0].seq)
                }
                #expect(error.map { $0.offset >= 0 && $0.offset <= damaged.count } ?? false)
            }
        }
    }

    /// A block read under another name than the one it was written under fails its checksum, as a block whose
    /// key's onboarding or screen was changed on disk does.
    @Test func blocksReadUnderAnotherNameFailTheirChecksum() throws {
        let events = [BlockEvent(time: 100, seq: 7, body: [1]), BlockEvent(time: 200, seq: 9, body: [2])]
        let bytes = build(events, name: [0, 0, 0, 1, 0, 5])
        #expect(try read(bytes, firstTime: 100, firstSeq: 7, name: [0, 0, 0, 1, 0, 5]) == events)
        let error = #expect(throws: CodecError.self) {
            try read(bytes, firstTime: 100, firstSeq: 7, name: [0, 0, 0, 1, 0, 4])
        }
        guard case .checksumMismatch = error?.reason else {
            Issue.record("expected a checksum mismatch, got \(String(describing: error))")
            return
        }
        #expect(error?.offset == 0)
    }

    @Test func wrongKeyFieldsAreRejected() throws {
        let events = [BlockEvent(time: 100, seq: 7, body: [1]), BlockEvent(time: 200, seq: 3, body: [2])]
        let bytes = build(events)
        // A key seq that would put the block's smallest seq below zero, or a time that makes the span
        // overflow. (A key shifted consistently is not detectable here: the store's check() compares
        // the seqs with its other indexes.)
        #expect(throws: CodecError.self) { try read(bytes, firstTime: 100, firstSeq: 2) }
        #expect(throws: CodecError.self) { try read(bytes, firstTime: Int64.max - 10, firstSeq: 7) }
        #expect(throws: CodecError.self) { try read([], firstTime: 0, firstSeq: 0) }
        #expect(throws: CodecError.self) { try read(sealed(header: [], events: []), firstTime: 0, firstSeq: 0) }
        // A count the bytes cannot hold, under a checksum that matches.
        let oversized = #expect(throws: CodecError.self) {
            try read(sealed(header: [100, 0, 0, 0], events: [0, 0, 0]), firstTime: 0, firstSeq: 0)
        }
        guard case .oversizedCount = oversized?.reason else {
            Issue.record("expected an oversized count, got \(String(describing: oversized))")
            return
        }
    }
}

/// `builder.resume(bytes…)`, its error as a value (a typed-throws closure passed to `withUnsafeBytes`
/// crashes swiftc 6.3.1).
private func resume(_ builder: inout EventBlockBuilder, _ bytes: [UInt8], firstTime: Int64, firstSeq: UInt64)
    -> CodecError?
{
    var failure: CodecError? = nil
    bytes.withUnsafeBytes { raw in
        do throws(CodecError) {
            try builder.resume(raw, firstTime: firstTime, firstSeq: firstSeq, checksumSeed: CRC32C())
        } catch {
            failure = error
        }
    }
    return failure
}

/// Growing a block (what the store does with a group's newest block over several batches).
@Suite struct EventBlockGrowthTests {
    /// A block resumed after any prefix of its events and then given the rest is byte for byte the block
    /// built in one go; ``EventBlockBuilder/byteCount(appending:seq:body:)`` predicts every size.
    @Test(arguments: [1, 2, 9, 300])
    func resumedBlocksEqualBlocksBuiltInOneGo(count: Int) throws {
        var rng = SplitMix64(seed: UInt64(count) &* 31)
        let events = randomEvents(&rng, count: count)
        let whole = build(events)
        for cut in Set([1, count / 2, count].filter { $0 >= 1 }) {
            let prefix = build(Array(events[..<cut]))
            var builder = EventBlockBuilder(capacity: 16)
            #expect(resume(&builder, prefix, firstTime: events[0].time, firstSeq: events[0].seq) == nil)
            #expect(builder.count == cut && builder.byteCount == prefix.count)
            for e in events[cut...] {
                #expect(builder.canAppend(time: e.time, seq: e.seq))
                let predicted = e.body.withUnsafeBytes { builder.byteCount(appending: e.time, seq: e.seq, body: $0) }
                e.body.withUnsafeBytes { builder.append(time: e.time, seq: e.seq, body: $0) }
                #expect(builder.byteCount == predicted)
            }
            #expect(builder.withBlock(checksumSeed: CRC32C()) { Array($0) } == whole)
            // An event at or before the last one cannot be appended.
            let last = events[count - 1]
            #expect(!builder.canAppend(time: last.time, seq: last.seq))
            #expect(!builder.canAppend(time: last.time - 1, seq: last.seq + 1))
        }
        var empty = EventBlockBuilder()
        empty.start(time: events[0].time, seq: events[0].seq)
        #expect(
            events[0].body.withUnsafeBytes { empty.byteCount(appending: events[0].time, seq: events[0].seq, body: $0) }
                == build([events[0]]).count)
    }

    /// Analytics names outside the known ones are counted per name (by reference, in increasing order); a block of
    /// many such names grows the room in front of its events, and still rebuilds and resumes byte for byte.
    @Test func unknownNamesAreCountedByReference() throws {
        // `analytics` without fields, name code 15, then the name's reference: 300 names, 20 of them twice.
        let events = (0..<320).map { i in
            let ref = UInt64(i < 300 ? 1_000 + (i * 7919) % 300 : 1_000 + i - 300)
            var body: [UInt8] = [0x20, 0, 0x0F]
            var v = ref
            while v >= 0x80 {
                body.append(UInt8(v & 0x7F) | 0x80)
                v >>= 7
            }
            body.append(UInt8(v))
            return BlockEvent(time: Int64(i), seq: UInt64(i), body: body)
        }
        let bytes = build(events)
        try bytes.withUnsafeBytes { raw in
            let reader = try EventBlockReader(raw, firstTime: 0, firstSeq: 0, checksumSeed: CRC32C())
            let entries = Array(reader.kindCounts)
            #expect(entries.count == 300 && entries.allSatisfy { $0.code == 0x0F })
            #expect(entries.map(\.name) == (1_000..<1_300).map { StringID($0) })
            #expect(entries.map(\.count) == (0..<300).map { $0 < 20 ? 2 : 1 })
        }
        // An empty block predicts the size of its first event, an unknown name's entry with its reference included.
        var empty = EventBlockBuilder()
        empty.start(time: 0, seq: 0)
        let predicted = events[0].body.withUnsafeBytes { empty.byteCount(appending: 0, seq: 0, body: $0) }
        #expect(predicted == build([events[0]]).count)
        #expect(try read(bytes, firstTime: 0, firstSeq: 0) == events)
        for cut in [1, 150, 319] {
            var builder = EventBlockBuilder()
            #expect(resume(&builder, build(Array(events[0..<cut])), firstTime: 0, firstSeq: 0) == nil)
            for e in events[cut...] {
                let predicted = e.body.withUnsafeBytes { builder.byteCount(appending: e.time, seq: e.seq, body: $0) }
                e.body.withUnsafeBytes { builder.append(time: e.time, seq: e.seq, body: $0) }
                #expect(builder.byteCount == predicted)
            }
            #expect(builder.withBlock(checksumSeed: CRC32C()) { Array($0) } == bytes, "cut at \(cut)")
        }
    }

    /// A damaged block is not resumed: the error carries an offset, and the builder is left empty.
    @Test func damagedBlocksAreNotResumed() throws {
        let events = [BlockEvent(time: 10, seq: 5, body: [1]), BlockEvent(time: 12, seq: 6, body: [2, 3])]
        var bytes = build(events)
        bytes.removeLast()
        var builder = EventBlockBuilder()
        let error = resume(&builder, bytes, firstTime: 10, firstSeq: 5)
        #expect(error != nil && error!.offset <= bytes.count)
        #expect(builder.count == 0)
    }
}

/// Events whose deltas take every varint length: times that tie, step by a little or jump by up to 2⁶¹ µs, seqs
/// that go up and down by up to 2⁶⁰, bodies of 0 to 200 bytes (a length of two bytes past 127).
private func variedEvents(_ rng: inout SplitMix64, count: Int) -> [BlockEvent] {
    var time = Int64(bitPattern: rng.next() >> 4) - (1 << 59)
    var used = Set<UInt64>()
    var events: [BlockEvent] = []
    for _ in 0..<count {
        let magnitude = rng.next() % 62
        let delta = rng.next() % 5 == 0 ? 0 : Int64(rng.next() & ((1 << magnitude) - 1))
        // Jumps while the times stay below 2⁶² (they must not overflow).
        if time < 1 << 61 { time += delta }
        var seq: UInt64
        repeat { seq = (1 << 61) &+ (rng.next() & ((1 << (rng.next() % 61)) - 1)) } while !used.insert(seq).inserted
        let length = rng.next() % 8 == 0 ? Int(rng.next() % 200) : Int(rng.next() % 30)
        events.append(
            BlockEvent(time: time, seq: seq, body: (0..<length).map { _ in UInt8(truncatingIfNeeded: rng.next()) }))
    }
    events.sort { ($0.time, $0.seq) < ($1.time, $1.seq) }
    return events
}

/// Steps two readers of `bytes` side by side, one with ``EventBlockReader/next()`` (its fast path for most events),
/// one with ``EventBlockReader/nextChecked()`` (every event checked step by step), and expects the same
/// answer or the same error at every step, and the same event after it. Returns the number of steps.
private func stepBothWays(_ bytes: [UInt8], firstTime: Int64, firstSeq: UInt64, _ context: String) -> Int {
    var steps = 0
    bytes.withUnsafeBytes { raw in
        guard let start = try? EventBlockReader(raw, firstTime: firstTime, firstSeq: firstSeq, checksumSeed: CRC32C())
        else { return }
        var fast = start, checked = start
        while true {
            let a: Result<Bool, CodecError>, b: Result<Bool, CodecError>
            do throws(CodecError) { a = .success(try fast.next()) } catch { a = .failure(error) }
            do throws(CodecError) { b = .success(try checked.nextChecked()) } catch { b = .failure(error) }
            steps += 1
            #expect(a == b, "\(context), step \(steps)")
            #expect(
                fast.time == checked.time && fast.seq == checked.seq && fast.index == checked.index
                    && fast.body.baseAddress == checked.body.baseAddress && fast.body.count == checked.body.count
                    && fast.reader.position == checked.reader.position, "\(context), step \(steps)")
            guard case .success(true) = a, case .success(true) = b else { return }
        }
    }
    return steps
}

@Suite struct EventBlockFastPathTests {
    /// Whole blocks with deltas of every length read the same both ways, to the end.
    @Test(arguments: [1, 2, 3, 50, 2_000])
    func wholeBlocksReadTheSameBothWays(count: Int) throws {
        var rng = SplitMix64(seed: 0xFA57 &+ UInt64(count))
        let events = variedEvents(&rng, count: count)
        let bytes = build(events)
        #expect(stepBothWays(bytes, firstTime: events[0].time, firstSeq: events[0].seq, "count \(count)") == count + 1)
        #expect(try read(bytes, firstTime: events[0].time, firstSeq: events[0].seq) == events)
    }

    /// Every prefix and every single-byte change of blocks with deltas of every length gives the same events and the
    /// same error, at the same step, both ways: the fast path passes only what the checked path passes. The damaged
    /// bytes get a checksum that matches (as a writer's bug would give them), so that the readers see them.
    @Test(arguments: [7, 8, 9])
    func damagedBlocksFailTheSameBothWays(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let events = variedEvents(&rng, count: 24)
        let block = build(events)
        let (time, seq) = (events[0].time, events[0].seq)
        // The header and the events, without the checksums; each damaged copy is sealed again over the same split.
        let headerEnd = block.withUnsafeBytes { raw in
            (try? EventBlockHeader(raw, firstTime: time, firstSeq: seq, checksumSeed: CRC32C()))?.eventsStart ?? 0
        }
        let payload = Array(block.dropFirst(EventBlockReader.headerStart))
        let split = headerEnd - EventBlockReader.headerStart
        func resealed(_ bytes: [UInt8]) -> [UInt8] {
            sealed(header: Array(bytes.prefix(split)), events: Array(bytes.dropFirst(split)))
        }
        var steps = 0
        for n in 0..<payload.count {
            steps += stepBothWays(resealed(Array(payload[0..<n])), firstTime: time, firstSeq: seq, "prefix \(n)")
        }
        for i in payload.indices {
            for v: UInt8 in [0x00, 0x01, 0x02, 0x7F, 0x80, 0x81, 0xFF, payload[i] ^ 0x80] where v != payload[i] {
                var damaged = payload
                damaged[i] = v
                steps += stepBothWays(resealed(damaged), firstTime: time, firstSeq: seq, "byte \(i) = \(v)")
            }
        }
        // The readers stepped through the damaged blocks, not only past their checksums.
        #expect(steps > payload.count * 8)
    }
}

/// A block's head (its bytes up to the first event, what a store keeps apart for reads of headers alone) ends with the
/// kind counts; iterating them reads no byte past the head, even where a varint's word-wide read would: the head is
/// placed against a page that cannot be read, after a last entry of an unknown analytics name whose 4-byte reference
/// is followed by a one-byte count.
@Test func aHeadsKindCountsAreReadWithinTheHead() throws {
    let page = Int(sysconf(Int32(_SC_PAGESIZE)))
    guard let map = mmap(nil, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), map != MAP_FAILED
    else {
        Issue.record("mmap failed")
        return
    }
    defer { munmap(map, 2 * page) }
    #expect(mprotect(map + page, page, PROT_NONE) == 0)
    // One event; one kind entry: code 0x0F, the name's reference 2²¹ (4 bytes), count 1.
    let header: [UInt8] = [1, 0, 0, 0, 1, 0x0F, 0x80, 0x80, 0x80, 0x01, 1]
    let block = sealed(header: header, events: [0, 0, 0])
    let head = Array(block[..<(8 + header.count)])
    let at = map + page - head.count
    head.withUnsafeBytes { at.copyMemory(from: $0.baseAddress!, byteCount: head.count) }
    let parsed = try EventBlockHeader(
        head: UnsafeRawBufferPointer(start: at, count: head.count), firstTime: 7, firstSeq: 3, checksumSeed: CRC32C())
    #expect(parsed.count == 1 && parsed.eventsStart == head.count)
    #expect(parsed.kindCounts.map { [Int($0.code), Int($0.name), $0.count] } == [[0x0F, 1 << 21, 1]])
    // The same bytes with one past the header are not a head.
    let longer = Array(block[..<(8 + header.count + 1)])
    #expect(throws: CodecError.self) {
        try longer.withUnsafeBytes {
            _ = try EventBlockHeader(head: $0, firstTime: 7, firstSeq: 3, checksumSeed: CRC32C())
        }
    }
}
