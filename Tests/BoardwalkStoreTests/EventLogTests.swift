import BoardwalkCodec
import BoardwalkGenerator
import BoardwalkModel
import Foundation
import Testing

@testable import BoardwalkStore

/// The event log: a batch's blocks go to `event_log` and are folded into `events` every few batches.
/// Where the blocks are must not change what any read returns.
@Suite struct EventLogTests {
    static let limits: [(name: String, limits: EventLogLimits)] = [
        ("every batch", EventLogLimits(batches: 0, bytes: 0)),
        ("three batches", EventLogLimits(batches: 3, bytes: 1 << 30)),
        ("16 KiB", EventLogLimits(batches: 100, bytes: 16 << 10)),
        ("standard", .standard),
        ("never", EventLogLimits(batches: .max, bytes: .max)),
    ]

    /// The batches in the event log and the entries of `events`.
    private func state(_ store: Store) throws -> (logBatches: Int, events: Int) {
        try store.env.transaction(write: false) { txn in
            (try EventLog.batches(txn, store.dbs).count, try txn.entries(store.dbs.events))
        }
    }

    /// 30 batches over three onboardings, late events, events without a position and resent events (ids), under
    /// every fold limit: scans by onboarding, screen and time, block counts, the arrival-order reads, session reads
    /// alone and batched, duplicate detection and check() all agree with a model of what was appended.
    @Test(arguments: 0..<EventLogTests.limits.count)
    func readsDoNotDependOnWhereTheBlocksAre(_ which: Int) throws {
        let (name, limits) = EventLogTests.limits[which]
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        var options = Store.Options(durability: .noSync)
        options.eventLogLimits = limits
        let store = try Store.open(at: dir, options: options)
        defer { store.close() }
        var rng = SplitMix64(seed: 91)
        var model: [(seq: UInt64, event: Event)] = []
        var batches: [[Event]] = []
        let base: Int64 = 1_700_000_000_000_000
        var folds = 0
        var previousBatches = 0
        for batch in 0..<30 {
            var events: [Event] = []
            for i in 0..<(1 + Int(rng.next() % 200)) {
                let session = batch * 5 + Int(rng.next() % 60)
                var time = base + Int64(batch) * 600_000_000 + Int64(rng.next() % 600_000_000)
                if rng.next() % 8 == 0 { time -= Int64(rng.next() % 40_000_000_000) }
                var event = simpleEvent(
                    onboarding: Int(rng.next() % 3), screen: Int(rng.next() % 4), session: session, time: time,
                    eventID: "b\(batch)-\(i)")
                if rng.next() % 25 == 0 { event.meta = nil }
                events.append(event)
            }
            batches.append(events)
            let result = try store.append(events)
            #expect(result.appended == events.count && result.duplicates == 0)
            for (i, e) in events.enumerated() { model.append((result.seqs.lowerBound + UInt64(i), e)) }
            let now = try state(store)
            #expect(
                now.logBatches <= max(limits.batches, 0) || limits.bytes < 1 << 20,
                "\(name): \(now.logBatches) batches in the log")
            if now.logBatches < previousBatches + 1 { folds += 1 }
            previousBatches = now.logBatches
            // Resent batches are duplicates, whether their events are in the log or in `events`.
            if batch % 7 == 6 {
                let again = try store.append(batches[batch - Int(rng.next() % 7)])
                #expect(again.appended == 0, "\(name): a resent batch stored \(again.appended) events")
            }
        }
        let last = try state(store)
        switch name {
        case "never": #expect(folds == 0 && last.logBatches == 30 && last.events == 0)
        case "every batch": #expect(last.logBatches == 0)
        default: #expect(folds >= 1 && last.events > 0, "\(name): \(folds) folds")
        }
        try checkReads(store, model, base: base, name)
        #expect(try store.check().isOK, "\(name)")
        // Folded by hand: the same answers from `events` alone.
        try store.foldLogs()
        #expect(try state(store).logBatches == 0)
        try checkReads(store, model, base: base, name + ", folded")
        let report = try store.check()
        #expect(report.isOK && report.eventsChecked == model.count, "\(name): \(report)")
    }

    /// Every read of events against the model.
    private func checkReads(_ store: Store, _ model: [(seq: UInt64, event: Event)], base: Int64, _ name: String) throws
    {
        try store.read { s in
            func keyOrder(_ a: (seq: UInt64, event: Event), _ b: (seq: UInt64, event: Event)) throws -> Bool {
                func key(_ e: (seq: UInt64, event: Event)) throws -> (UInt32, Int, Int64, UInt64) {
                    guard let meta = e.event.meta else { return (.max, .max, e.event.time.microseconds, e.seq) }
                    return (try s.id(of: meta.onboardingID)!, meta.screenIndex, e.event.time.microseconds, e.seq)
                }
                return try key(a) < key(b)
            }
            #expect(try s.allEvents().map(\.seq) == (try model.sorted(by: keyOrder)).map(\.seq), "\(name)")
            #expect(try s.events(since: 0).map(\.seq) == model.map(\.seq), "\(name)")
            let since = model[model.count / 2].seq
            #expect(try s.events(since: since).map(\.seq) == model.filter { $0.seq >= since }.map(\.seq), "\(name)")

            let window = Timestamp(microseconds: base + 4_000_000_000)..<Timestamp(microseconds: base + 9_000_000_000)
            for onboarding in ["onb-0", "onb-1", "onb-2"] {
                let id = try #require(try s.id(of: onboarding))
                let want = try model.filter {
                    $0.event.meta?.onboardingID == onboarding && (1...2).contains($0.event.meta!.screenIndex)
                        && window.contains($0.event.time)
                }.sorted(by: keyOrder).map(\.seq)
                #expect(
                    try s.events(onboarding: onboarding, screens: 1...2, time: window).map(\.seq) == want,
                    "\(name): \(onboarding)")
                var counted = 0
                try s.forEachBlock(onboarding: id, screens: 1...2, time: window) { block in
                    counted += try block.countInRange()
                    return true
                }
                #expect(counted == want.count, "\(name): \(onboarding) block counts")
                var runs: [UInt64] = []
                try s.forEachBlockRun(onboarding: id, screens: 1...2, time: window) { run in
                    while let record = try run.next() { runs.append(record.seq) }
                    return true
                }
                #expect(runs.sorted() == want.sorted(), "\(name): \(onboarding) block runs")
            }
            // Late arrivals: events that came from `since` on with a time before the window.
            var late: [UInt64] = []
            try s.forEachRecord(arrivedSince: since, before: window.lowerBound, onboardings: nil) { record in
                late.append(record.seq)
                return true
            }
            #expect(
                late.sorted() == model.filter { $0.seq >= since && $0.event.time < window.lowerBound }.map(\.seq),
                "\(name)")

            let bySession = Dictionary(grouping: model) { $0.event.session! }
            let sessions = bySession.keys.sorted()
            var ids: [StringID] = []
            for session in sessions {
                let want = bySession[session]!.sorted {
                    ($0.event.time.microseconds, $0.seq) < ($1.event.time.microseconds, $1.seq)
                }
                #expect(try s.events(inSession: session).map(\.seq) == want.map(\.seq), "\(name): \(session)")
                ids.append(try #require(try s.id(of: session)))
            }
            var batched: [[UInt64]] = []
            try s.forEachSession(ids, batchReferences: 300) { _, records in
                batched.append(records.map(\.seq))
                return true
            }
            #expect(batched == (try sessions.map { try s.events(inSession: $0).map(\.seq) }), "\(name)")
        }
    }

    /// The log holds the batches up to its limit; the batch that reaches it folds them all: the log is emptied, each
    /// group's runs grow its newest block in `events`, and `batches` then lists those blocks.
    @Test func theLogFillsAndIsFolded() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        var options = Store.Options(durability: .noSync)
        options.eventLogLimits = EventLogLimits(batches: 4, bytes: 1 << 30)
        let store = try Store.open(at: dir, options: options)
        defer { store.close() }
        for batch in 0..<3 {
            try store.append(
                (0..<10).map { simpleEvent(onboarding: 0, screen: $0 % 2, session: $0, time: Int64(batch * 100 + $0)) })
            let now = try state(store)
            #expect(now.logBatches == batch + 1 && now.events == 0)
            #expect(try store.read { try $0.unfoldedBatches().eventLog } == batch + 1)
        }
        // The fourth batch fills the log: all four are folded, one block per screen.
        try store.append(
            (0..<10).map { simpleEvent(onboarding: 0, screen: $0 % 2, session: $0, time: Int64(300 + $0)) })
        #expect(try state(store) == (0, 2))
        try store.append([simpleEvent(onboarding: 0, screen: 0, session: 3, time: 500)])
        #expect(try state(store) == (1, 2))
        let times = try store.read { s in try s.events(inSession: "s3").map(\.event.time.microseconds) }
        #expect(times == [3, 103, 203, 303, 500])
        let screen0 = try store.read { s in
            try s.events(onboarding: "onb-0", screens: 0...0).map(\.event.time.microseconds)
        }
        #expect(
            screen0 == [0, 2, 4, 6, 8, 100, 102, 104, 106, 108, 200, 202, 204, 206, 208, 300, 302, 304, 306, 308, 500])
        let report = try store.check()
        #expect(report.isOK && report.eventsChecked == 41, "\(report)")
    }

    /// The fold reads a group's blocks in key order, so a later batch's block can come before an earlier batch's
    /// with events at the same time: the fold still writes them in (time, seq) order (the full suite's late-batch
    /// differential found a fold that trapped on this in development).
    @Test func aFoldOrdersEqualTimesBySeqAcrossBatches() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        var options = Store.Options(durability: .noSync)
        options.eventLogLimits = EventLogLimits(batches: 2, bytes: 1 << 30)
        let store = try Store.open(at: dir, options: options)
        defer { store.close() }
        let span = Layout.blockSpan
        // Batch 1: seqs 0 and 1 twelve hours apart, so two blocks: (0) and (span). Batch 2: seqs 2 and 3 at 1 and
        // span, one block that sorts between them. Key order: (0, seq 0), (1, seq 2), (span, seq 1).
        try store.append([
            simpleEvent(onboarding: 0, screen: 0, session: 0, time: 0),
            simpleEvent(onboarding: 0, screen: 0, session: 0, time: span),
        ])
        try store.append([
            simpleEvent(onboarding: 0, screen: 0, session: 1, time: 1),
            simpleEvent(onboarding: 0, screen: 0, session: 1, time: span),
        ])
        #expect(try state(store).logBatches == 0)
        let stored = try store.read {
            try $0.events(onboarding: "onb-0").map { [$0.event.time.microseconds, Int64($0.seq)] }
        }
        #expect(stored == [[0, 0], [1, 2], [span, 1], [span, 3]])
        #expect(try store.check().isOK)
    }

    /// The fold marks blocks with a 64-bit mask of logged batches: a limit above 64 batches folds at 64 (a 65th
    /// logged batch would make every append refuse the store as `corrupt`).
    @Test func theLogNeverHoldsMoreThan64Batches() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        var options = Store.Options(durability: .noSync)
        options.eventLogLimits = EventLogLimits(batches: 100, bytes: 1 << 30)
        let store = try Store.open(at: dir, options: options)
        defer { store.close() }
        for i in 0..<130 {
            try store.append([simpleEvent(onboarding: i % 2, screen: 0, session: i, time: Int64(i))])
            #expect(try state(store).logBatches == (i + 1) % 64)
        }
        let report = try store.check()
        #expect(report.isOK && report.eventsChecked == 130, "\(report)")
    }

    /// A damaged log block is reported by check() and by the reads that meet it as `corrupt`, never a trap; the append
    /// that would fold it is refused and stores nothing; the salvage reads every other event.
    @Test(arguments: ["truncated", "garbage", "short key"])
    func aDamagedLogBlockIsReported(_ damage: String) throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        var options = Store.Options(durability: .noSync)
        options.eventLogLimits = EventLogLimits(batches: 3, bytes: 1 << 30)
        let store = try Store.open(at: dir, options: options)
        defer { store.close() }
        try store.append((0..<6).map { simpleEvent(onboarding: 0, screen: $0 % 2, session: $0, time: Int64($0)) })
        try store.append((0..<6).map { simpleEvent(onboarding: 1, screen: $0 % 2, session: $0, time: Int64(10 + $0)) })
        var lost = 0
        try store.env.transaction(write: true) { txn in
            let (key, value): ([UInt8], [UInt8]) = try txn.withCursor(store.dbs.eventLog) { c in
                let found = try c.last()
                #expect(found)
                return (Array(c.key), Array(c.value))
            }
            lost = try blockReader(
                EventKey(UnsafeRawBufferPointer(rebasing: key.withUnsafeBytes { $0 }[8...]))!,
                value.withUnsafeBytes { $0 }
            ).count
            func put(_ k: [UInt8], _ v: [UInt8]) throws {
                try k.withUnsafeBytes { kb in
                    try v.withUnsafeBytes { vb in _ = try txn.put(store.dbs.eventLog, kb, vb) }
                }
            }
            switch damage {
            case "truncated": try put(key, Array(value.dropLast()))
            case "garbage": try put(key, [0xFF, 0xFE, 0xFD, 0xFC, 0xFB])
            default:
                try key.withUnsafeBytes { _ = try txn.delete(store.dbs.eventLog, $0) }
                try put(Array(key.dropLast()), value)
            }
        }
        let report = try store.check()
        #expect(report.problems.contains { $0.hasPrefix("event_log:") }, "\(report)")
        let error = #expect(throws: StoreError.self) { try store.read { try $0.allEvents() } }
        #expect(error?.kind == .corrupt)
        let before = try store.read { try $0.stats().events }
        let refused = #expect(throws: StoreError.self) {
            try store.append([simpleEvent(onboarding: 2, screen: 0, session: 9, time: 30)])
        }
        #expect(refused?.kind == .corrupt)
        #expect(try store.read { try $0.stats().events } == before)
        var salvaged = 0, damages = 0
        try store.salvageEvents(
            { _ in
                salvaged += 1; return true
            },
            damaged: { _ in
                damages += 1; return true
            })
        // A cut last byte may leave every event readable (the block's end alone does not check: kept, reported).
        let expected = damage == "truncated" ? (12 - lost)...12 : (12 - lost)...(12 - lost)
        #expect(damages == 1 && expected.contains(salvaged), "\(salvaged) salvaged, \(damages) damages, \(lost) lost")
    }

    /// `BlockCursor` over `events` and several logged batches moves like one cursor over the union of their keys:
    /// seeks, steps both ways with changes of direction, first and last, and a focus on one batch.
    @Test func theMergedCursorMovesLikeOneCursor() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .init(durability: .noSync))
        defer { store.close() }
        var rng = SplitMix64(seed: 13)
        let logBatches: [UInt64] = [1_000, 2_000, 3_000]
        var all: [(key: EventKey, source: Int)] = []
        try store.env.transaction(write: true) { txn in
            for i in 0..<400 {
                let source = Int(rng.next() % 4)  // 0: events; 1...3: the logged batches
                let seq = source == 0 ? UInt64(i) : logBatches[source - 1] + UInt64(i)
                let key = EventKey(
                    onboarding: UInt32(rng.next() % 3), screen: UInt16(rng.next() % 3), timeBits: rng.next() % 50,
                    seq: seq)
                all.append((key, source))
                var bytes = [UInt8](repeating: 0, count: source == 0 ? Layout.eventKeySize : Layout.eventLogKeySize)
                bytes.withUnsafeMutableBytes { p in
                    if source == 0 {
                        key.write(to: p.baseAddress!)
                    } else {
                        p.baseAddress!.storeBE(logBatches[source - 1], at: 0)
                        key.write(to: p.baseAddress! + 8)
                    }
                }
                let value: [UInt8] = [UInt8(source)]
                try bytes.withUnsafeBytes { k in
                    try value.withUnsafeBytes { v in
                        _ = try txn.put(source == 0 ? store.dbs.events : store.dbs.eventLog, k, v)
                    }
                }
            }
        }
        all.sort { $0.key < $1.key }
        let keys = all.map(\.key)
        try store.env.transaction(write: false) { txn in
            try txn.withBlockCursor(store.dbs, logBatches: logBatches) { c in
                // The whole walk forward and backward.
                var forward: [EventKey] = []
                var found = try c.first()
                while found {
                    forward.append(try decodeBlockKey(c.key))
                    found = try c.next()
                }
                #expect(forward == keys)
                var backward: [EventKey] = []
                found = try c.last()
                while found {
                    backward.append(try decodeBlockKey(c.key))
                    found = try c.previous()
                }
                #expect(backward == keys.reversed())
                // Random seeks and steps, each checked against the sorted keys; values say which source answered.
                var at: Int? = nil
                for _ in 0..<2_000 {
                    switch rng.next() % 5 {
                    case 0:
                        let target = EventKey(
                            onboarding: UInt32(rng.next() % 4), screen: UInt16(rng.next() % 4),
                            timeBits: rng.next() % 55,
                            seq: rng.next() % 3_500)
                        found = try c.seek(target)
                        let i = keys.firstIndex { $0 >= target }
                        #expect(found == (i != nil))
                        at = i
                    case 1, 2:
                        guard let i = at else { continue }
                        found = try c.next()
                        at = i + 1 < keys.count ? i + 1 : nil
                        #expect(found == (at != nil))
                    default:
                        guard let i = at else { continue }
                        found = try c.previous()
                        at = i > 0 ? i - 1 : nil
                        #expect(found == (at != nil))
                    }
                    if let i = at {
                        #expect(try decodeBlockKey(c.key) == keys[i])
                        #expect(c.value.first == UInt8(all[i].source))
                    }
                }
                // Focused on the batch at 2 000, a seek sees only its keys; unfocused, the next step is the merge's again.
                let target = EventKey(onboarding: 1, screen: 0, timeBits: 0, seq: 0)
                c.focus(onSeq: 2_500)
                let own = keys.indices.filter { all[$0].source == 2 && keys[$0] >= target }
                found = try c.seek(target)
                #expect(found == !own.isEmpty)
                if let first = own.first {
                    #expect(try decodeBlockKey(c.key) == keys[first])
                    c.unfocus()
                    found = try c.next()
                    #expect(found == (first + 1 < keys.count))
                    if found { #expect(try decodeBlockKey(c.key) == keys[first + 1]) }
                }
            }
        }
    }
}
