import BoardwalkCodec
import BoardwalkGenerator
import BoardwalkStoreFormat
import Testing

/// One reference of a session-bucket value: the session's low bits and where its event is.
private struct Ref: Equatable, Comparable {
    var low: UInt32
    var onboarding: UInt32
    var screen: UInt16
    var time: Int64
    var seq: UInt64

    static func < (a: Ref, b: Ref) -> Bool { (a.low, a.time, a.seq) < (b.low, b.time, b.seq) }
}

/// A value built from `segments` (each in (low, time, seq) order), the first keyed by its first seq and each
/// later one appended to the bytes before it, as the store grows a bucket's newest value.
private func build(_ segments: [[Ref]], prefixRoom: Int = 1 << 16) -> (bytes: [UInt8], keySeq: UInt64) {
    var builder = SessionBucketBuilder(prefixRoom: prefixRoom, capacity: 64)
    var bytes: [UInt8] = []
    var keySeq: UInt64 = 0
    for (i, segment) in segments.enumerated() {
        builder.reset()
        #expect(builder.isEmpty)
        for r in segment {
            builder.append(low: r.low, onboarding: r.onboarding, screen: r.screen, time: r.time, seq: r.seq)
        }
        if i == 0 { keySeq = builder.baseSeq }
        let segmentBytes = builder.byteCount
        let prefixBytes = bytes.count
        bytes = bytes.withUnsafeBytes { prefix in
            builder.withValue(keySeq: keySeq, prefix: prefix) { Array($0) }
        }
        // The prefix is kept byte for byte; the header adds at most 25 bytes to what byteCount said.
        #expect(bytes.count > prefixBytes + segmentBytes && bytes.count <= prefixBytes + segmentBytes + 25)
    }
    return (bytes, keySeq)
}

/// Reads every run and entry; `skipping` lows are passed over with `nextRun()` without reading their entries.
private func read(_ bytes: [UInt8], keySeq: UInt64, lowLimit: UInt32 = 64, skipping: Set<UInt32> = [])
    throws(CodecError) -> [Ref]
{
    var out: [Ref] = []
    var failure: CodecError? = nil
    bytes.withUnsafeBytes { raw in
        do throws(CodecError) {
            var r = try SessionBucketReader(raw, keySeq: keySeq, lowLimit: lowLimit)
            while try r.nextRun() {
                if skipping.contains(r.low) { continue }
                while try r.nextEntry() {
                    out.append(Ref(low: r.low, onboarding: r.onboarding, screen: r.screen, time: r.time, seq: r.seq))
                }
            }
        } catch {
            failure = error
        }
    }
    if let failure { throw failure }
    return out
}

/// A batch's references to `sessions` random sessions of a bucket, sorted as the store writes them.
private func randomSegment(_ rng: inout SplitMix64, firstSeq: UInt64, events: Int, time: Int64) -> [Ref] {
    var refs: [Ref] = []
    for i in 0..<events {
        let onboarding: UInt32 = rng.next() % 7 == 0 ? .max : UInt32(rng.next() % 300)
        refs.append(
            Ref(
                low: UInt32(rng.next() % 64), onboarding: onboarding,
                screen: onboarding == .max ? .max : UInt16(rng.next() % 20),
                time: time + Int64(rng.next() % 5_000_000) - (rng.next() % 9 == 0 ? 4_000_000_000 : 0),
                seq: firstSeq + UInt64(i)))
    }
    return refs.sorted()
}

@Suite struct SessionBucketTests {
    /// Segments appended to a value read back as the runs and entries they were given, in order; skipping
    /// runs by their length leaves the others intact.
    @Test(arguments: [1, 3, 40, 400])
    func roundTrip(eventsPerSegment: Int) throws {
        var rng = SplitMix64(seed: UInt64(eventsPerSegment))
        var segments: [[Ref]] = []
        var seq: UInt64 = 1_000
        for s in 0..<4 {
            segments.append(
                randomSegment(
                    &rng, firstSeq: seq, events: eventsPerSegment, time: 1_700_000_000_000_000 + Int64(s) * 60_000_000))
            seq += UInt64(eventsPerSegment) + 17
        }
        let (bytes, keySeq) = build(segments)
        let all = segments.flatMap { $0 }
        #expect(try read(bytes, keySeq: keySeq) == all)
        let skipped: Set<UInt32> = [0, 5, 17, 63]
        #expect(try read(bytes, keySeq: keySeq, skipping: skipped) == all.filter { !skipped.contains($0.low) })
    }

    /// A run of more than 127 bytes takes a two-byte length; one of fewer takes one byte. Both read back.
    @Test func longAndShortRuns() throws {
        var refs: [Ref] = []
        for i in 0..<100 {
            refs.append(Ref(low: 3, onboarding: 1, screen: 2, time: 1_000 + Int64(i) * 1_000, seq: UInt64(10 + i)))
        }
        refs.append(Ref(low: 4, onboarding: 9, screen: 0, time: 5, seq: 500))
        let (bytes, keySeq) = build([refs])
        #expect(try read(bytes, keySeq: keySeq) == refs)
        #expect(try read(bytes, keySeq: keySeq, skipping: [3]) == [refs.last!])
    }

    /// Extreme times and seqs round-trip (deltas wrap as the builder wrote them).
    @Test func extremes() throws {
        // Within a run, seqs less than 2^63 apart (as in a block); runs start from the segment's base, wrapping.
        let refs = [
            Ref(low: 0, onboarding: .max, screen: .max, time: .min, seq: 5),
            Ref(low: 0, onboarding: .max, screen: .max, time: .max, seq: 1 << 62),
            Ref(low: 63, onboarding: 0, screen: 0, time: .max, seq: .max),
        ]
        let (bytes, keySeq) = build([refs])
        #expect(try read(bytes, keySeq: keySeq) == refs)
    }

    /// Low bits at or past the limit, runs out of order, an empty value, and every proper prefix are errors.
    @Test func rejectsMalformedValues() throws {
        let refs = [
            Ref(low: 10, onboarding: 1, screen: 1, time: 50, seq: 7),
            Ref(low: 20, onboarding: 1, screen: 1, time: 40, seq: 8),
        ]
        let (bytes, keySeq) = build([refs])
        #expect(throws: CodecError.self) { try read(bytes, keySeq: keySeq, lowLimit: 20) }
        #expect(try read(bytes, keySeq: keySeq, lowLimit: 21) == refs)
        #expect(throws: CodecError.self) { try read([], keySeq: 0) }
        for n in 0..<bytes.count {
            #expect(throws: CodecError.self) { try read(Array(bytes[0..<n]), keySeq: keySeq) }
        }
        // Two segments may each have a run of the same session (a later batch's, here with an earlier time);
        // within one segment a run that repeats the previous run's low bits is an error.
        let later = Ref(low: 10, onboarding: 2, screen: 0, time: 45, seq: 9)
        let twice = build([[refs[0]], [later]])
        #expect(try read(twice.bytes, keySeq: twice.keySeq) == [refs[0], later])
        var repeated = bytes
        // Layout: header (base time 50 as a one-byte zigzag varint, seq delta 0, run count 2), then runs
        // [low][length][entries].
        let firstRun = 3
        let secondRun = firstRun + 2 + Int(bytes[firstRun + 1])
        #expect(bytes[firstRun] == 10 && bytes[secondRun] == 20)
        repeated[secondRun] = 10
        #expect(throws: CodecError.self) { try read(repeated, keySeq: keySeq) }
    }

    /// Any single damaged byte gives an error with an offset inside the value, or references that still obey
    /// the reader's rules (lows below the limit and increasing within a segment, entries strictly increasing
    /// in (time, seq) within a run).
    @Test func damageNeverTraps() throws {
        var rng = SplitMix64(seed: 99)
        let segments = [
            randomSegment(&rng, firstSeq: 50, events: 60, time: 1_700_000_000_000_000),
            randomSegment(&rng, firstSeq: 200, events: 30, time: 1_700_000_100_000_000),
        ]
        let (bytes, keySeq) = build(segments)
        for i in bytes.indices {
            for flip: UInt8 in [0x01, 0x80, 0xFF] {
                var damaged = bytes
                damaged[i] ^= flip
                do {
                    var decoded = 0
                    try damaged.withUnsafeBytes { raw in
                        var r = try SessionBucketReader(raw, keySeq: keySeq, lowLimit: 64)
                        var segment = 0, lastLow = -1
                        while try r.nextRun() {
                            if r.segments != segment { segment = r.segments; lastLow = -1 }
                            #expect(r.low < 64 && Int(r.low) > lastLow)
                            lastLow = Int(r.low)
                            var previous: (Int64, UInt64)? = nil
                            while try r.nextEntry() {
                                if let p = previous { #expect(p < (r.time, r.seq)) }
                                previous = (r.time, r.seq)
                                decoded += 1
                            }
                        }
                    }
                    #expect(decoded > 0)
                } catch let error as CodecError {
                    #expect(error.offset >= 0 && error.offset <= damaged.count)
                }
            }
        }
    }
}
