import BoardwalkCodec
import BoardwalkGenerator
import BoardwalkModel
import BoardwalkStoreFormat
import Foundation
import Testing

@testable import BoardwalkStore

/// The batched read of many sessions (`Snapshot.forEachSession`) against the one-session read, which walks the
/// index and seeks each event on its own.
@Suite struct SessionBatchTests {
    /// An event without `meta` (no position: stored under the no-onboarding key).
    private func unpositioned(session: Int, time: Int64) -> Event {
        Event(
            time: Timestamp(microseconds: time), session: "s\(session)", meta: nil,
            payload: .custom(actionID: "a\(session % 3)"))
    }

    /// A store of many sessions over many batches: a window of sessions in flight that slides with the batches
    /// (so sessions of one bucket are written by many batches, and buckets cut across onboardings), events in
    /// three onboardings and without a position, and late events (earlier times in later batches), which make
    /// blocks of one group overlap in time.
    private func generatedStore(_ store: Store, seed: UInt64) throws -> [(seq: UInt64, event: Event)] {
        var rng = SplitMix64(seed: seed)
        var model: [(seq: UInt64, event: Event)] = []
        let base: Int64 = 1_700_000_000_000_000
        for batch in 0..<30 {
            var events: [Event] = []
            for _ in 0..<300 {
                let session = batch * 10 + Int(rng.next() % 150)
                var time = base + Int64(batch) * 60_000_000 + Int64(rng.next() % 60_000_000)
                if rng.next() % 8 == 0 { time -= Int64(rng.next() % 7_200_000_000) }  // late, up to 2 hours
                if rng.next() % 15 == 0 {
                    events.append(unpositioned(session: session, time: time))
                } else {
                    events.append(
                        simpleEvent(
                            onboarding: Int(rng.next() % 3), screen: Int(rng.next() % 4), session: session, time: time))
                }
            }
            let result = try store.append(events)
            #expect(result.appended == events.count)
            for (i, e) in events.enumerated() { model.append((result.seqs.lowerBound + UInt64(i), e)) }
        }
        return model
    }

    /// One session's events through the one-session read: seqs and owned events.
    private func single(_ s: Snapshot, _ id: StringID, time: Range<Timestamp>? = nil) throws -> [StoredEvent] {
        var out: [StoredEvent] = []
        try s.forEachEvent(inSession: id, time: time) { view in
            out.append(try s.owned(view))
            return true
        }
        return out
    }

    /// Every session of `ids` through the batched read, in delivery order.
    private func batched(_ s: Snapshot, _ ids: [StringID], time: Range<Timestamp>? = nil, batchReferences: Int)
        throws -> [(id: StringID, events: [StoredEvent])]
    {
        var out: [(StringID, [StoredEvent])] = []
        try s.forEachSession(ids, time: time, batchReferences: batchReferences) { id, records in
            out.append((id, try records.map { try s.owned(try $0.view()) }))
            return true
        }
        return out
    }

    /// Sessions across bucket edges, in several onboardings and without a position, with late events and
    /// overlapping blocks: the batched read hands out each session's events exactly as the one-session read
    /// does (the same events, the same (time, seq) order), sessions in list order, for batches from one
    /// reference (a session per batch) to all of them, whole and in time windows.
    @Test(arguments: [UInt64(1), 2, 3])
    func batchedReadMatchesTheOneSessionRead(seed: UInt64) throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .init(durability: .noSync))
        defer { store.close() }
        let model = try generatedStore(store, seed: seed)
        let names = Set(model.map { $0.event.session! })
        try store.read { s in
            var ids = try names.map { try #require(try s.id(of: $0)) }
            // Sessions on both sides of bucket edges, and many buckets.
            #expect(ids.contains { $0 % 64 == 63 } && ids.contains { $0 % 64 == 0 && $0 > 0 })
            #expect(Set(ids.map { $0 >> Layout.sessionBucketShift }).count >= 4)
            // Blocks of a group overlap in time (late events), and some sessions are in several onboardings and
            // have events without a position.
            var overlaps = 0
            var last: (group: UInt64, lastTime: Int64)? = nil
            try s.forEachBlock(onboarding: nil) { block in
                let group = UInt64(block.keyOnboarding) << 16 | UInt64(block.keyScreen)
                if let last, last.group == group, block.firstTime <= last.lastTime { overlaps += 1 }
                last = (group, max(block.lastTime, last?.group == group ? last!.lastTime : .min))
                return true
            }
            #expect(overlaps > 0)
            let mixed = Dictionary(grouping: model, by: { $0.event.session! }).values.filter { events in
                Set(events.map { $0.event.meta?.onboardingID ?? "" }).count >= 3
            }
            #expect(!mixed.isEmpty)

            // A shuffled order, an id listed twice, and an id that is no session (an onboarding's string).
            var rng = SplitMix64(seed: seed)
            ids.shuffle(using: &rng)
            let onboarding = try #require(try s.id(of: "onb-1"))
            ids.insert(ids[5], at: 40)
            ids.insert(onboarding, at: 17)
            let expected = try ids.map { ($0, try single(s, $0)) }
            #expect(expected.reduce(0) { $0 + $1.1.count } > model.count)
            for references in [1, 3, 50, 700, Snapshot.defaultSessionBatchReferences] {
                let got = try batched(s, ids, batchReferences: references)
                #expect(got.map(\.id) == ids, "batches of \(references) references")
                #expect(got.map(\.events) == expected.map(\.1), "batches of \(references) references")
            }
            // Time windows: only the events inside, sessions with none still handed out (with none).
            let base: Int64 = 1_700_000_000_000_000
            for window in [(base + 300_000_000)..<(base + 900_000_000), (base - 3_600_000_000)..<(base + 60_000_000)] {
                let time = Timestamp(microseconds: window.lowerBound)..<Timestamp(microseconds: window.upperBound)
                let inWindow = try ids.map { try single(s, $0, time: time) }
                #expect(inWindow.contains { $0.isEmpty } && inWindow.contains { !$0.isEmpty })
                for references in [2, 100, Snapshot.defaultSessionBatchReferences] {
                    let got = try batched(s, ids, time: time, batchReferences: references)
                    #expect(got.map(\.events) == inWindow, "window \(window), batches of \(references) references")
                    #expect(got.allSatisfy { $0.events.allSatisfy { window.contains($0.event.time.microseconds) } })
                }
            }
        }
    }

    /// The batch reads what the model says: each session's appended events in (time, seq) order.
    @Test func batchedReadMatchesTheAppendedEvents() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .init(durability: .noSync))
        defer { store.close() }
        let model = try generatedStore(store, seed: 9)
        let bySession = Dictionary(grouping: model, by: { $0.event.session! })
        try store.read { s in
            let names = bySession.keys.sorted()
            let ids = try names.map { try #require(try s.id(of: $0)) }
            var delivered = 0
            try s.forEachSession(ids, batchReferences: 64) { id, records in
                let name = names[delivered]
                #expect(s.string(for: id) == name)
                let expected = bySession[name]!.sorted {
                    ($0.event.time.microseconds, $0.seq) < ($1.event.time.microseconds, $1.seq)
                }
                #expect(records.map(\.seq) == expected.map(\.seq))
                let events = try records.map { try s.owned(try $0.view()).event }
                #expect(events == expected.map { Store.normalized($0.event) })
                delivered += 1
                return true
            }
            #expect(delivered == names.count)
            // Stopping early stops, mid-batch and at a batch's end.
            for stop in [1, 7] {
                var seen = 0
                try s.forEachSession(ids, batchReferences: 200) { _, _ in
                    seen += 1
                    return seen < stop
                }
                #expect(seen == stop)
            }
            var none = 0
            try s.forEachSession([]) { _, _ in
                none += 1
                return true
            }
            #expect(none == 0)
        }
    }

    /// One long session among many short ones, its events cut into several values of its bucket: a batch holds
    /// it whole, however small the batch's target.
    @Test func aLargeSessionInABatch() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .init(durability: .noSync))
        defer { store.close() }
        var events = (0..<1_500).map {
            simpleEvent(onboarding: $0 % 2, screen: $0 % 5, session: 3, time: Int64($0) * 1_000)
        }
        events += (0..<200).map {
            simpleEvent(onboarding: 1, screen: $0 % 3, session: 10 + $0, time: Int64($0) * 7_000)
        }
        try store.append(events)
        try store.append([simpleEvent(onboarding: 0, screen: 0, session: 3, time: 1)])
        try store.read { s in
            let ids = try (["s3"] + (10..<210).map { "s\($0)" }).map { try #require(try s.id(of: $0)) }
            let expected = try ids.map { try single(s, $0) }
            #expect(expected[0].count == 1_501)
            for references in [1, 10, 2_000] {
                #expect(try batched(s, ids, batchReferences: references).map(\.events) == expected)
            }
        }
    }

    enum Damage: String, CaseIterable, CustomStringConvertible {
        case truncatedValue, unknownSeq, truncatedBlock, damagedRecord
        var description: String { rawValue }
    }

    /// A damaged bucket value, a reference to an event that is not stored, a damaged block or a damaged record
    /// met in a batch: the read throws `StoreError` (corrupt), never traps, and hands out no session of the
    /// damaged batch; sessions of other batches still read.
    @Test(arguments: Damage.allCases)
    func damageMetInABatchIsAnError(_ damage: Damage) throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .foldingEveryBatch(.init(durability: .noSync)))
        defer { store.close() }
        // s0 and s1 share a bucket (a run each) and a block; s500.. are in later buckets and another block.
        try appendDamageFixture(store)
        let (s0, s1, others) = try store.read { s in
            (
                try #require(try s.id(of: "s0")), try #require(try s.id(of: "s1")),
                try (500..<700).map { try #require(try s.id(of: "s\($0)")) }
            )
        }
        try store.env.transaction(write: true) { txn in
            func put(_ db: Database, _ k: [UInt8], _ v: [UInt8]) throws {
                try k.withUnsafeBytes { kb in try v.withUnsafeBytes { vb in _ = try txn.put(db, kb, vb) } }
            }
            switch damage {
            case .truncatedValue, .unknownSeq:
                let (key, value): ([UInt8], [UInt8]) = try txn.withCursor(store.dbs.sessions) { c in
                    let found = try c.seekBucket(of: s0)
                    #expect(found)
                    return (Array(c.key), Array(c.value))
                }
                if damage == .truncatedValue {
                    try put(store.dbs.sessions, key, Array(value.dropLast()))
                } else {
                    // A value that decodes but lists seq 10 000, which no event has, under s1.
                    var builder = SessionBucketBuilder(prefixRoom: 0)
                    builder.append(
                        low: s1 & (Layout.sessionBucketWidth - 1), onboarding: 0, screen: 0, time: 25, seq: 10_000)
                    var k = key
                    k.withUnsafeMutableBytes { $0.baseAddress!.storeBE(UInt64(10_000), at: 4) }
                    try builder.withValue(keySeq: 10_000) { try put(store.dbs.sessions, k, Array($0)) }
                }
            case .truncatedBlock, .damagedRecord:
                // The block of onboarding 0, screen 0 (s0's and s1's events).
                let onboarding = try store.read { try #require(try $0.id(of: "onb-0")) }
                let (key, value): ([UInt8], [UInt8]) = try txn.withCursor(store.dbs.events) { c in
                    var start = [UInt8](repeating: 0, count: Layout.eventKeySize)
                    start.withUnsafeMutableBytes { $0.baseAddress!.storeBE(onboarding, at: 0) }
                    let found = try start.withUnsafeBytes { try c.seek($0) }
                    #expect(found)
                    return (Array(c.key), Array(c.value))
                }
                if damage == .truncatedBlock {
                    try put(store.dbs.events, key, Array(value.prefix(value.count / 2)))
                } else {
                    // The last byte of the last record: inside s1's record body, which no longer decodes as a
                    // whole record. Resealed, so that the block passes its checksum and the record is what fails.
                    var damaged = value
                    damaged[damaged.count - 1] = 0xFF
                    try put(
                        store.dbs.events, key,
                        resealed(damaged, key: try #require(key.withUnsafeBytes { EventKey($0) })))
                }
            }
        }
        // Sessions of later buckets (s500.. start in s0's bucket), whose events are in another block.
        let later = others.filter { $0 >> Layout.sessionBucketShift != s0 >> Layout.sessionBucketShift }
        #expect(later.count > 100)
        try store.read { s in
            for references in [1, 1 << 20] {
                var delivered: [StringID] = []
                let error = #expect(throws: StoreError.self) {
                    try s.forEachSession(later + [s0, s1], batchReferences: references) { id, records in
                        // Records are handed out undecoded: decoding is where a damaged record is found.
                        for record in records { _ = try record.view() }
                        delivered.append(id)
                        return true
                    }
                }
                #expect(error?.kind == .corrupt, "\(String(describing: error))")
                if references == 1 || damage == .damagedRecord {
                    // A session per batch (or damage found by the caller): every session before it is handed out.
                    #expect(delivered.starts(with: later), "\(delivered.count) delivered")
                } else {
                    // One batch: the damage is met before any of its sessions is handed out.
                    #expect(delivered.isEmpty, "\(delivered.count) delivered")
                }
            }
            // The one-session read agrees that one of these sessions is damaged.
            #expect(throws: StoreError.self) {
                for id in [s0, s1] { _ = try single(s, id) }
            }
            // Sessions of other buckets and blocks are unaffected.
            let counts = try batched(s, later, batchReferences: 50).map(\.events.count)
            #expect(counts == Array(repeating: 1, count: later.count))
        }
    }
}
