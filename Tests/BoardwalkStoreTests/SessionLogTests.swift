import BoardwalkCodec
import BoardwalkGenerator
import BoardwalkModel
import Foundation
import Testing

@testable import BoardwalkStore

/// The session log (format 8): a batch's session-index references go to `session_log` and are folded into
/// `sessions` every few batches. Where the references are must not change what any read returns.
@Suite struct SessionLogTests {
    /// Fold limits from "every batch" to "never": the log alone, the bucket values alone, and folds that take several
    /// batches at once, by count and by bytes.
    static let limits: [(name: String, limits: SessionLogLimits)] = [
        ("every batch", SessionLogLimits(batches: 0, bytes: 0)),
        ("three batches", SessionLogLimits(batches: 3, bytes: 1 << 20)),
        ("2 KiB", SessionLogLimits(batches: 100, bytes: 2_048)),
        ("standard", .standard),
        ("never", SessionLogLimits(batches: .max, bytes: .max)),
    ]

    /// The batches of the log and its bytes, and the number of `sessions` values.
    private func state(_ store: Store) throws -> (logBatches: Int, logBytes: Int, values: Int) {
        try store.env.transaction(write: false) { txn in
            let log = try SessionLog(txn, store.dbs)
            return (log.batches.count, log.bytes, try txn.entries(store.dbs.sessions))
        }
    }

    /// Sessions in a sliding window across bucket edges, several onboardings, late events and events without a
    /// position, appended in 30 batches: every session reads back exactly its events in (time, seq) order, alone,
    /// in a time window and through the batched read, sessions spanning onboardings are listed, and check() passes,
    /// whatever the fold limits; the log never holds more batches than its limit.
    @Test(arguments: 0..<SessionLogTests.limits.count)
    func readsDoNotDependOnWhereTheReferencesAre(_ which: Int) throws {
        let (name, limits) = SessionLogTests.limits[which]
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        var options = Store.Options(durability: .noSync)
        options.sessionLogLimits = limits
        let store = try Store.open(at: dir, options: options)
        defer { store.close() }
        var rng = SplitMix64(seed: 77)
        var model: [(seq: UInt64, event: Event)] = []
        let base: Int64 = 1_700_000_000_000_000
        var folds = 0
        var previousBatches = 0
        for batch in 0..<30 {
            var events: [Event] = []
            for _ in 0..<(1 + Int(rng.next() % 150)) {
                let session = batch * 6 + Int(rng.next() % 140)
                var time = base + Int64(batch) * 60_000_000 + Int64(rng.next() % 60_000_000)
                if rng.next() % 10 == 0 { time -= Int64(rng.next() % 7_200_000_000) }
                var event = simpleEvent(
                    onboarding: Int(rng.next() % 3), screen: Int(rng.next() % 4), session: session, time: time)
                if rng.next() % 25 == 0 { event.meta = nil }
                events.append(event)
            }
            let result = try store.append(events)
            #expect(result.appended == events.count)
            for (i, e) in events.enumerated() { model.append((result.seqs.lowerBound + UInt64(i), e)) }
            let now = try state(store)
            #expect(now.logBatches <= limits.batches, "\(name): \(now.logBatches) batches in the log")
            #expect(now.logBytes <= max(limits.bytes, 0) || now.logBatches == 0, "\(name)")
            // A fold empties the log: it then holds fewer batches than before plus this one.
            if now.logBatches < previousBatches + 1 { folds += 1 }
            previousBatches = now.logBatches
        }
        let last = try state(store)
        switch name {
        case "never": #expect(folds == 0 && last.logBatches == 30)
        case "every batch": #expect(folds == 30 && last.logBatches == 0)
        case "standard": #expect(folds == 1, "one fold at the 17th batch: \(folds)")
        default: #expect(folds >= 3, "\(name): \(folds) folds")
        }
        let sessions = Set(model.map { $0.event.session! }).sorted()
        let window = (base + 300_000_000)..<(base + 900_000_000)
        try store.read { s in
            var ids: [StringID] = []
            for session in sessions {
                let want = model.filter { $0.event.session == session }
                    .sorted { ($0.event.time.microseconds, $0.seq) < ($1.event.time.microseconds, $1.seq) }
                #expect(try s.events(inSession: session).map(\.seq) == want.map(\.seq), "\(name): \(session)")
                var inWindow: [UInt64] = []
                try s.forEachEvent(
                    inSession: session,
                    time: Timestamp(microseconds: window.lowerBound)..<Timestamp(microseconds: window.upperBound)
                ) {
                    inWindow.append($0.seq)
                    return true
                }
                #expect(
                    inWindow == want.filter { window.contains($0.event.time.microseconds) }.map(\.seq),
                    "\(name): \(session)")
                ids.append(try #require(try s.id(of: session)))
            }
            var batched: [[UInt64]] = []
            try s.forEachSession(ids, batchReferences: 500) { _, records in
                batched.append(records.map(\.seq))
                return true
            }
            let alone = try sessions.map { try s.events(inSession: $0).map(\.seq) }
            #expect(batched == alone, "\(name)")
            // Spanning: sessions with events in two or more onboardings, or without a position besides one.
            var places: [String: Set<String>] = [:]
            for (_, e) in model { places[e.session!, default: []].insert(e.meta?.onboardingID ?? "-") }
            let spanning = Set(places.filter { $0.value.count > 1 }.keys)
            #expect(Set(try s.spanningSessions().map { s.string(for: $0) ?? "?" }) == spanning, "\(name)")
        }
        let report = try store.check()
        #expect(report.isOK, "\(name): \(report)")
    }

    /// The log holds the batches up to its limit and is emptied by the fold that the next batch triggers; the fold
    /// puts each touched bucket's value once, grown while it fits.
    @Test func theLogFillsAndIsFolded() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        var options = Store.Options(durability: .noSync)
        options.sessionLogLimits = SessionLogLimits(batches: 4, bytes: 1 << 20)
        let store = try Store.open(at: dir, options: options)
        defer { store.close() }
        for batch in 0..<4 {
            try store.append(
                (0..<10).map { simpleEvent(onboarding: 0, screen: batch, session: $0, time: Int64(batch * 100 + $0)) })
            let now = try state(store)
            #expect(now.logBatches == batch + 1 && now.values == 0)
        }
        // The fifth batch would make five: the four and it are folded. Sessions 0..<10 are one bucket: one value.
        try store.append((0..<10).map { simpleEvent(onboarding: 0, screen: 4, session: $0, time: Int64(400 + $0)) })
        var now = try state(store)
        #expect(now.logBatches == 0 && now.logBytes == 0 && now.values == 1)
        try store.append([simpleEvent(onboarding: 0, screen: 5, session: 3, time: 500)])
        now = try state(store)
        #expect(now.logBatches == 1 && now.values == 1)
        let times = try store.read { s in try s.events(inSession: "s3").map(\.event.time.microseconds) }
        #expect(times == [3, 103, 203, 303, 403, 500])
        #expect(try store.check().isOK)
    }

    /// A damaged log chunk is reported by check() and by the reads that meet it as `corrupt`, never a trap; the
    /// append that would fold it is refused as `corrupt` and stores nothing, and what was stored still reads.
    @Test(arguments: ["truncated", "bucket past the key's", "segment garbage"])
    func aDamagedChunkIsReported(_ damage: String) throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        var options = Store.Options(durability: .noSync)
        options.sessionLogLimits = SessionLogLimits(batches: 2, bytes: 1 << 20)
        let store = try Store.open(at: dir, options: options)
        defer { store.close() }
        try store.append((0..<5).map { simpleEvent(onboarding: 0, screen: 0, session: $0, time: Int64($0)) })
        try store.append((0..<5).map { simpleEvent(onboarding: 0, screen: 1, session: $0, time: Int64(10 + $0)) })
        try store.env.transaction(write: true) { txn in
            let (key, value): ([UInt8], [UInt8]) = try txn.withCursor(store.dbs.sessionLog) { c in
                let found = try c.last()
                #expect(found)
                return (Array(c.key), Array(c.value))
            }
            var damaged = value
            switch damage {
            case "truncated": damaged.removeLast()
            case "bucket past the key's": damaged[0] = 0x7F  // the first entry's delta must be 0 from the key's bucket
            default: for i in 2..<damaged.count { damaged[i] = 0xFF }
            }
            try key.withUnsafeBytes { k in
                try damaged.withUnsafeBytes { v in _ = try txn.put(store.dbs.sessionLog, k, v) }
            }
        }
        let report = try store.check()
        #expect(report.problems.contains { $0.hasPrefix("session_log:") }, "\(report)")
        let error = #expect(throws: StoreError.self) { try store.read { try $0.events(inSession: "s2") } }
        #expect(error?.kind == .corrupt)
        // The third batch folds: refused, nothing stored.
        let before = try store.read { try $0.stats().events }
        let refused = #expect(throws: StoreError.self) {
            try store.append([simpleEvent(onboarding: 0, screen: 2, session: 9, time: 30)])
        }
        #expect(refused?.kind == .corrupt)
        #expect(try store.read { try $0.stats().events } == before)
        // Events still read by onboarding.
        #expect(try store.read { try $0.allEvents().count } == 10)
    }

    /// Batches large enough to cut into several chunks, with sessions of many events in one batch (several segments
    /// of a bucket), two appends per write transaction and a fold every three batches (so a fold meets chunks its
    /// own transaction wrote): every session reads back exactly its events, and a snapshot taken inside a write sees
    /// the appends made after it was taken.
    @Test func manyChunksAndSeveralAppendsPerWrite() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        var options = Store.Options(durability: .noSync)
        options.sessionLogLimits = SessionLogLimits(batches: 3, bytes: 1 << 20)
        let store = try Store.open(at: dir, options: options)
        defer { store.close() }
        var rng = SplitMix64(seed: 5)
        var model: [(seq: UInt64, event: Event)] = []
        var mostChunks = 0
        for write in 0..<6 {
            try store.write { w in
                for half in 0..<2 {
                    var events: [Event] = []
                    for i in 0..<2_500 {
                        // Sessions 0..<40 get dozens of events per batch; the rest spread over 5 000 ids.
                        let session = i % 5 == 0 ? Int(rng.next() % 40) : 40 + Int(rng.next() % 5_000)
                        let time = Int64(write * 2 + half) * 1_000_000 + Int64(rng.next() % 1_000_000)
                        events.append(
                            simpleEvent(
                                onboarding: Int(rng.next() % 2), screen: Int(rng.next() % 3), session: session,
                                time: time))
                    }
                    let result = try w.append(events)
                    for (i, e) in events.enumerated() { model.append((result.seqs.lowerBound + UInt64(i), e)) }
                    let log = try SessionLog(w.txn, store.dbs)
                    mostChunks = max(mostChunks, log.batches.map(\.buckets.count).max() ?? 0)
                }
                // A snapshot of this transaction, then one more append: the snapshot's session reads see it.
                let snapshot = try w.snapshot
                let before = try snapshot.events(inSession: "s7").count
                let late = simpleEvent(
                    onboarding: 0, screen: 0, session: 7, time: Int64(write * 2 + 1) * 1_000_000 + 999_999)
                model.append((try w.append([late]).seqs.lowerBound, late))
                #expect(try snapshot.events(inSession: "s7").count == before + 1)
            }
        }
        #expect(mostChunks >= 3, "batches of \(mostChunks) chunks")
        let bySession = Dictionary(grouping: model) { $0.event.session! }
        let sessions = bySession.keys.sorted()
        try store.read { s in
            var ids: [StringID] = []
            for session in sessions {
                let want = bySession[session]!
                    .sorted { ($0.event.time.microseconds, $0.seq) < ($1.event.time.microseconds, $1.seq) }.map(\.seq)
                #expect(try s.events(inSession: session).map(\.seq) == want, "\(session)")
                ids.append(try #require(try s.id(of: session)))
            }
            var batched: [[UInt64]] = []
            try s.forEachSession(ids, batchReferences: 3_000) { _, records in
                batched.append(records.map(\.seq))
                return true
            }
            #expect(batched == (try sessions.map { try s.events(inSession: $0).map(\.seq) }))
        }
        let report = try store.check()
        #expect(report.isOK, "\(report)")
    }

    /// A `session_log` key of the wrong size fails the session reads as `corrupt` and nothing else: events still
    /// read by onboarding, stats work, and check() reports the key instead of throwing.
    @Test func aDamagedLogKeyFailsOnlyTheSessionReads() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .init(durability: .noSync))
        defer { store.close() }
        try store.append((0..<5).map { simpleEvent(onboarding: 0, screen: 0, session: $0, time: Int64($0)) })
        try store.env.transaction(write: true) { txn in
            _ = try [UInt8](repeating: 1, count: 3).withUnsafeBytes { k in
                try [UInt8](repeating: 0, count: 4).withUnsafeBytes { v in try txn.put(store.dbs.sessionLog, k, v) }
            }
        }
        #expect(try store.read { try $0.allEvents().count } == 5)
        #expect(try store.read { try $0.stats().events } == 5)
        let error = #expect(throws: StoreError.self) { try store.read { try $0.events(inSession: "s2") } }
        #expect(error?.kind == .corrupt)
        let report = try store.check()
        #expect(report.problems.contains { $0.hasPrefix("session_log: a key is 3 bytes") }, "\(report)")
    }
}
