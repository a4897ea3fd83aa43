import BoardwalkCodec
import BoardwalkGenerator
import BoardwalkModel
import BoardwalkStoreFormat
import Foundation
import Testing

@testable import BoardwalkStore

/// The session index: values per bucket of 64 session ids (docs/storage.md, "Session-bucket value").
@Suite struct SessionIndexTests {
    /// The (time, seq) order a session read promises, from the appended events and their seqs.
    private func expected(_ model: [(seq: UInt64, event: Event)], session: String, window: Range<Int64>? = nil)
        -> [UInt64]
    {
        model.filter { $0.event.session == session && (window?.contains($0.event.time.microseconds) ?? true) }
            .sorted { ($0.event.time.microseconds, $0.seq) < ($1.event.time.microseconds, $1.seq) }
            .map(\.seq)
    }

    /// Every `sessions` value: its bucket, key seq and size.
    private func values(_ store: Store) throws -> [(bucket: UInt32, seq: UInt64, bytes: Int)] {
        try store.env.transaction(write: false) { txn in
            try txn.withCursor(store.dbs.sessions) { c in
                var out: [(UInt32, UInt64, Int)] = []
                var found = try c.first()
                while found {
                    out.append((c.key.be32(0), c.key.be64(4), c.value.count))
                    found = try c.next()
                }
                return out
            }
        }
    }

    /// Many sessions (several buckets, sessions at bucket edges) over many batches, with late events: each
    /// session reads back exactly its events in (time, seq) order, whole and in time windows, and the index
    /// has far fewer values than (session, batch) pairs.
    @Test(arguments: [UInt64(1), 2])
    func sessionsAcrossManyBatchesAndBuckets(seed: UInt64) throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .foldingEveryBatch(.init(durability: .noSync)))
        defer { store.close() }
        var rng = SplitMix64(seed: seed)
        var model: [(seq: UInt64, event: Event)] = []
        var pairs = Set<String>()
        let base: Int64 = 1_700_000_000_000_000
        for batch in 0..<25 {
            var events: [Event] = []
            for _ in 0..<200 {
                // A window of about 120 sessions in flight that slides with the batches.
                let session = batch * 8 + Int(rng.next() % 120)
                var time = base + Int64(batch) * 60_000_000 + Int64(rng.next() % 60_000_000)
                if rng.next() % 10 == 0 { time -= Int64(rng.next() % 7_200_000_000) }  // late, up to 2 hours
                events.append(
                    simpleEvent(
                        onboarding: Int(rng.next() % 3), screen: Int(rng.next() % 4), session: session, time: time))
                pairs.insert("\(session)/\(batch)")
            }
            let result = try store.append(events)
            #expect(result.appended == events.count)
            for (i, e) in events.enumerated() { model.append((result.seqs.lowerBound + UInt64(i), e)) }
        }
        let sessions = Set(model.map { $0.event.session! })
        let ids = try store.read { s in
            try Dictionary(uniqueKeysWithValues: sessions.map { ($0, try #require(try s.id(of: $0))) })
        }
        // Sessions on both sides of bucket edges exist and land in different buckets.
        let edges = ids.filter { $0.value % 64 == 63 || ($0.value % 64 == 0 && $0.value > 0) }
        #expect(edges.count >= 4)
        let window = (base + 300_000_000)..<(base + 900_000_000)
        try store.read { s in
            for session in sessions.sorted() {
                #expect(try s.events(inSession: session).map(\.seq) == expected(model, session: session))
                var inWindow: [UInt64] = []
                try s.forEachEvent(
                    inSession: session,
                    time: Timestamp(microseconds: window.lowerBound)..<Timestamp(microseconds: window.upperBound)
                ) {
                    inWindow.append($0.seq)
                    return true
                }
                #expect(inWindow == expected(model, session: session, window: window))
            }
        }
        let stored = try values(store)
        #expect(stored.count * 4 < pairs.count, "\(stored.count) values for \(pairs.count) (session, batch) pairs")
        #expect(stored.allSatisfy { $0.bytes <= Layout.sessionValueTarget + 64 })
        #expect(Set(stored.map(\.bucket)) == Set(ids.values.map { $0 >> Layout.sessionBucketShift }))
        let report = try store.check()
        #expect(report.isOK, "\(report)")
    }

    /// Events that arrive late (earlier times in later batches) and events of another session of the same
    /// bucket do not disturb a session's order; a time window takes exactly its events.
    @Test func lateEventsComeBackInTimeOrder() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .foldingEveryBatch(.init(durability: .noSync)))
        defer { store.close() }
        try store.append([
            simpleEvent(onboarding: 0, screen: 0, session: 0, time: 100),
            simpleEvent(onboarding: 0, screen: 1, session: 0, time: 200),
            simpleEvent(onboarding: 0, screen: 0, session: 1, time: 150),
        ])
        try store.append([
            simpleEvent(onboarding: 0, screen: 0, session: 0, time: 50),
            simpleEvent(onboarding: 0, screen: 2, session: 0, time: 300),
            simpleEvent(onboarding: 0, screen: 0, session: 1, time: 50),
        ])
        try store.append([
            simpleEvent(onboarding: 1, screen: 0, session: 0, time: 150),
            simpleEvent(onboarding: 0, screen: 0, session: 0, time: 200),
        ])
        try store.read { s in
            #expect(try s.events(inSession: "s0").map(\.event.time.microseconds) == [50, 100, 150, 200, 200, 300])
            #expect(try s.events(inSession: "s0").map(\.seq) == [3, 0, 6, 1, 7, 4])
            #expect(try s.events(inSession: "s1").map(\.seq) == [5, 2])
            var window: [UInt64] = []
            try s.forEachEvent(inSession: "s0", time: Timestamp(microseconds: 100)..<Timestamp(microseconds: 200)) {
                window.append($0.seq)
                return true
            }
            #expect(window == [0, 6])
            // Stopping early stops.
            var first: [UInt64] = []
            try s.forEachEvent(inSession: "s0") {
                first.append($0.seq)
                return false
            }
            #expect(first == [3])
        }
        // s0 and s1 share a bucket: one value, grown by the two later batches.
        #expect(try values(store).count == 1)
        #expect(try store.check().isOK)
    }

    /// A session with more events in one batch than a value holds gets several values (the run is cut), and
    /// still reads back whole and in order.
    @Test func aLargeSessionIsSplitAcrossValues() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .foldingEveryBatch(.init(durability: .noSync)))
        defer { store.close() }
        let events = (0..<2_000).map {
            simpleEvent(onboarding: $0 % 2, screen: $0 % 5, session: 7, time: Int64($0) * 1_000)
        }
        try store.append(events)
        try store.append([simpleEvent(onboarding: 0, screen: 0, session: 7, time: 1)])
        let stored = try values(store)
        #expect(stored.count >= 10)
        #expect(stored.allSatisfy { $0.bytes <= Layout.sessionValueTarget + 64 })
        let seqs = try store.read { try $0.events(inSession: "s7").map(\.seq) }
        #expect(seqs == [0, 2_000] + Array(1..<2_000))
        #expect(try store.check().isOK)
    }

    /// A session new in one batch and given another onboarding by a later batch of the same transaction is
    /// listed in `spanning_sessions`: the index written earlier in the transaction is seen.
    @Test func spanningSessionsSeeEarlierBatchesOfTheSameTransaction() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .foldingEveryBatch(.init(durability: .noSync)))
        defer { store.close() }
        try store.write { w in
            try w.append([simpleEvent(onboarding: 1, screen: 0, session: 1, time: 10)])
            try w.append([simpleEvent(onboarding: 2, screen: 0, session: 1, time: 20)])
        }
        let listed = try store.read { s in try s.spanningSessions().map { s.string(for: $0)! } }
        #expect(listed == ["s1"])
        #expect(try store.check().isOK)
    }

    enum Damage: String, CaseIterable, CustomStringConvertible {
        case truncated, lowOutOfOrder, unknownSeq, wrongSession
        var description: String { rawValue }
    }

    /// Damaged bucket values are reported by `check()`, and reading an affected session throws a
    /// `StoreError` (corrupt), never traps; sessions of other buckets still read.
    @Test(arguments: Damage.allCases)
    func damagedValuesAreReported(_ damage: Damage) throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .foldingEveryBatch(.init(durability: .noSync)))
        defer { store.close() }
        // s0 and s1 share a bucket (a run each) and a block; s500.. are in later buckets and another block.
        try appendDamageFixture(store)
        let (s0, s1) = try store.read { s in (try #require(try s.id(of: "s0")), try #require(try s.id(of: "s1"))) }
        #expect(s0 >> Layout.sessionBucketShift == s1 >> Layout.sessionBucketShift && s0 < s1)
        try store.env.transaction(write: true) { txn in
            let (key, value): ([UInt8], [UInt8]) = try txn.withCursor(store.dbs.sessions) { c in
                let found = try c.seekBucket(of: s0)
                #expect(found)
                return (Array(c.key), Array(c.value))
            }
            func put(_ k: [UInt8], _ v: [UInt8]) throws {
                try k.withUnsafeBytes { kb in
                    try v.withUnsafeBytes { vb in _ = try txn.put(store.dbs.sessions, kb, vb) }
                }
            }
            let low0 = s0 & (Layout.sessionBucketWidth - 1), low1 = s1 & (Layout.sessionBucketWidth - 1)
            var builder = SessionBucketBuilder(prefixRoom: 0)
            switch damage {
            case .truncated:
                try put(key, Array(value.dropLast()))
            case .lowOutOfOrder:
                // The first segment: header (base time 10 as a one-byte zigzag varint, seq delta 0, run count 2),
                // s0's run, then s1's, whose low bits become s0's.
                #expect(value[2] == 2 && value[3] == UInt8(low0))
                let second = 3 + 2 + Int(value[4])
                #expect(value[second] == UInt8(low1))
                var damaged = value
                damaged[second] = UInt8(low0)
                try put(key, damaged)
            case .unknownSeq:
                // A value that decodes but lists seq 10 000, which no event has.
                builder.append(low: low0, onboarding: 0, screen: 0, time: 10, seq: 10_000)
                var k = key
                k.withUnsafeMutableBytes { $0.baseAddress!.storeBE(UInt64(10_000), at: 4) }
                try builder.withValue(keySeq: 10_000) { try put(k, Array($0)) }
            case .wrongSession:
                // A segment listing s0's event (seq 0) under s1, appended to the value as a later batch would.
                var grower = SessionBucketBuilder(prefixRoom: value.count)
                grower.append(low: low1, onboarding: 0, screen: 0, time: 10, seq: 0)
                let grown = value.withUnsafeBytes { prefix in grower.withValue(keySeq: 0, prefix: prefix) { Array($0) }
                }
                try put(key, grown)
            }
        }
        let report = try store.check()
        #expect(!report.isOK)
        switch damage {
        case .truncated, .lowOutOfOrder:
            #expect(
                report.problems.contains { $0.hasPrefix("sessions:") && $0.contains("does not decode") }, "\(report)")
            let error = #expect(throws: StoreError.self) { try store.read { try $0.events(inSession: "s0") } }
            #expect(error?.kind == .corrupt)
            // The check and the read marked the store, so appends are refused. Without the mark (damage no read
            // has met), the writer does not grow the damaged value: the next batch's references go into a sound
            // value of their own, and check() still reports the old damage only.
            #expect(throws: StoreError.self) {
                try store.append([simpleEvent(onboarding: 0, screen: 0, session: 1, time: 50)])
            }
            store.clearDamageMark()
            try store.append([simpleEvent(onboarding: 0, screen: 0, session: 1, time: 50)])
            let values = try store.env.transaction(write: false) { txn in
                try txn.withCursor(store.dbs.sessions) { c in
                    var sound: [Bool] = []
                    var found = try c.seekBucket(of: s0)
                    while found, c.key.be32(0) == s0 >> Layout.sessionBucketShift {
                        sound.append(
                            SessionBucketReader.runHeadersAreSound(
                                c.value, keySeq: c.key.be64(4), lowLimit: Layout.sessionBucketWidth))
                        found = try c.next()
                    }
                    return sound
                }
            }
            #expect(values == [false, true])
            #expect(try store.check().problems == report.problems)
        case .unknownSeq:
            #expect(
                report.problems.contains { $0 == "sessions: seq 10000 (session \(s0)) is not in events" }, "\(report)")
            let error = #expect(throws: StoreError.self) { try store.read { try $0.events(inSession: "s0") } }
            #expect(error?.kind == .corrupt)
        case .wrongSession:
            #expect(
                report.problems.contains { $0.hasPrefix("sessions: seq 0 is listed under session \(s1)") }, "\(report)")
            #expect(report.problems.contains { $0 == "sessions: seq 0 is listed twice" }, "\(report)")
            // The reader trusts the index: s1 now shows s0's event too (check() is what finds it).
            #expect(try store.read { try $0.events(inSession: "s1").map(\.seq) } == [0, 1, 2])
        }
        // Sessions of other buckets are unaffected.
        #expect(try store.read { try $0.events(inSession: "s699").count } == 1)
    }
}
