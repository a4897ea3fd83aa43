import BoardwalkCodec
import BoardwalkModel
import Foundation
import Testing

@testable import BoardwalkStore

/// A group's newest block grows over several batches until it fills an overflow page.
@Suite struct BlockGrowthTests {
    /// The (key, value) pairs of `events`, in key order.
    func blocks(_ store: Store) throws -> [(key: EventKey, value: [UInt8])] {
        try store.env.transaction(write: false) { txn in
            try txn.withCursor(store.dbs.events) { c in
                var out: [(EventKey, [UInt8])] = []
                var found = try c.first()
                while found {
                    out.append((try #require(EventKey(c.key)), Array(c.value)))
                    found = try c.next()
                }
                return out
            }
        }
    }

    /// 40 batches of 60 events into two groups, times increasing: each group's events end up in few blocks
    /// (grown, not one per batch), and every read path returns them in its documented order, including
    /// the since-scan from inside a grown block, a session scan, time windows, and duplicates of events
    /// that sit in the middle of a grown block.
    @Test func grownBlocksScanInOrder() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir)
        var model: [StoredEvent] = []
        var batches: [[Event]] = []
        for b in 0..<40 {
            let batch = (0..<60).map { i in
                simpleEvent(
                    onboarding: 0, screen: i % 2, session: (b * 60 + i) / 10, time: Int64(b * 60 + i) * 1_000_000,
                    eventID: "id-\(b)-\(i)")
            }
            let result = try store.append(batch)
            #expect(result.appended == 60)
            for (i, e) in batch.enumerated() {
                model.append(StoredEvent(seq: result.seqs.lowerBound + UInt64(i), event: e))
            }
            batches.append(batch)
        }
        let stored = try blocks(store)
        // Each group's events fill as few blocks as the target size allows (not one block per batch),
        // every block is under the target, and sealed blocks (all but each group's last) are nearly full.
        let target = Layout.blockTarget(pageSize: store.env.pageSize)
        let bytes = stored.reduce(0) { $0 + $1.value.count }
        #expect(
            stored.count <= 2 + bytes / (target - 100) && stored.count < 40, "\(stored.count) blocks of \(bytes) bytes")
        #expect(stored.allSatisfy { $0.value.count <= target })
        #expect(stored.count > 2, "no block was sealed, so the loop below checks nothing")
        for (i, b) in stored.enumerated() where i + 1 < stored.count && stored[i + 1].key.screen == b.key.screen {
            #expect(b.value.count > target - 100, "a sealed block of \(b.value.count) bytes")
        }
        func keyOrder(_ a: StoredEvent, _ b: StoredEvent) -> Bool {
            let (sa, sb) = (a.event.meta!.screenIndex, b.event.meta!.screenIndex)
            return sa != sb ? sa < sb : (a.event.time, a.seq) < (b.event.time, b.seq)
        }
        try store.read { s throws in
            #expect(try s.allEvents() == model.sorted(by: keyOrder))
            for since in [0, 1, 7, 1000, 2333, 2399, 2400] {
                #expect(try s.events(since: UInt64(since)) == Array(model[since...]), "since \(since)")
            }
            let window = Timestamp(microseconds: 500_000_000)..<Timestamp(microseconds: 1_300_000_001)
            #expect(
                try s.events(onboarding: "onb-0", screens: 1...1, time: window)
                    == model.filter { $0.event.meta!.screenIndex == 1 && window.contains($0.event.time) })
            for session in ["s0", "s117", "s239"] {
                #expect(try s.events(inSession: session) == model.filter { $0.event.session == session })
            }
        }
        // Resending batch 17 (its events sit inside grown blocks) stores nothing.
        let again = try store.append(batches[17])
        #expect(again.appended == 0 && again.duplicates == 60)
        let report = try store.check()
        #expect(report.isOK, "\(report)")
        #expect(report.eventsChecked == 2400)
    }

    /// An event earlier than the group's newest block's last event starts a new block rather than
    /// growing it; so does one a block span (``Layout/blockSpan``) or more after the block's first event.
    @Test func lateAndDistantEventsStartNewBlocks() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .foldingEveryBatch())
        let span = Layout.blockSpan
        try store.append([simpleEvent(onboarding: 0, screen: 0, session: 0, time: 100)])
        try store.append([simpleEvent(onboarding: 0, screen: 0, session: 0, time: 200)])  // grows
        #expect(try blocks(store).count == 1)
        try store.append([simpleEvent(onboarding: 0, screen: 0, session: 0, time: 150)])  // late: new block
        #expect(try blocks(store).count == 2)
        // A span after the newest block: new.
        try store.append([simpleEvent(onboarding: 0, screen: 0, session: 0, time: 150 + span)])
        #expect(try blocks(store).count == 3)
        let times = try store.read { try $0.allEvents().map(\.event.time.microseconds) }
        #expect(times == [100, 150, 200, 150 + span])
        // The session's bucket has one value, grown by each batch whatever its times (a late event too); a
        // session scan sorts its references into time order.
        let values = try store.env.transaction(write: false) { txn in try txn.entries(store.dbs.sessions) }
        #expect(values == 1)
        #expect(
            try store.read { try $0.events(inSession: "s0").map(\.event.time.microseconds) } == [
                100, 150, 200, 150 + span,
            ])
        #expect(try store.check().isOK)
    }

    /// Rewrites the `batches` entry of the batch starting at `first` (chunk 0) with `keys`.
    func setBatch(_ store: Store, first: UInt64, count: UInt32, keys: [EventKey]) throws {
        try store.env.transaction(write: true) { txn in
            var k = [UInt8](repeating: 0, count: Layout.batchKeySize)
            k.withUnsafeMutableBytes { $0.baseAddress!.storeBE(first, at: 0) }
            var v = [UInt8](repeating: 0, count: 4 + keys.count * Layout.eventKeySize)
            v.withUnsafeMutableBytes { p in
                p.baseAddress!.storeBE(count, at: 0)
                for (i, key) in keys.enumerated() { key.write(to: p.baseAddress! + 4 + i * Layout.eventKeySize) }
            }
            try k.withUnsafeBytes { kb in try v.withUnsafeBytes { vb in _ = try txn.put(store.dbs.batches, kb, vb) } }
        }
    }

    enum BatchDamage: String, CaseIterable, CustomStringConvertible {
        case listedTwice, notListed, blockOfAnotherBatch
        var description: String { rawValue }
    }

    /// With one block grown over three batches, check() proves that every event is claimed by exactly one
    /// batch, and the since-scan refuses what check() reports.
    @Test(arguments: BatchDamage.allCases)
    func checkFindsBatchesThatDoNotClaimEachEventOnce(_ damage: BatchDamage) throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .foldingEveryBatch())
        for b in 0..<3 {
            try store.append((0..<4).map { simpleEvent(onboarding: 0, screen: 0, session: b, time: Int64(b * 4 + $0)) })
        }
        // A second group for batch 1 to list wrongly.
        try store.append([simpleEvent(onboarding: 0, screen: 1, session: 9, time: 1_000)])
        let stored = try blocks(store)
        #expect(stored.count == 2)
        #expect(try store.check().isOK)
        let grown = stored[0].key, other = stored[1].key
        switch damage {
        case .listedTwice: try setBatch(store, first: 4, count: 4, keys: [grown, grown])
        case .notListed: try setBatch(store, first: 4, count: 4, keys: [other])
        case .blockOfAnotherBatch: try setBatch(store, first: 4, count: 4, keys: [grown, other])
        }
        let report = try store.check()
        #expect(!report.isOK)
        switch damage {
        case .listedTwice:
            #expect(report.problems.contains { $0.hasPrefix("batches: seq 4 is listed twice") }, "\(report)")
            #expect(throws: StoreError.self) { try store.read { try $0.events(since: 0) } }
        case .notListed:
            #expect(report.problems.contains { $0 == "batches: seq 5 is not listed" }, "\(report)")
            #expect(report.problems.contains { $0.contains("holds none of its events") }, "\(report)")
            #expect(throws: StoreError.self) { try store.read { try $0.events(since: 4) } }
        case .blockOfAnotherBatch:
            #expect(
                report.problems == ["batches: batch 4 lists the block at seq 12, which holds none of its events"],
                "\(report)")
        }
        // The batches that were not touched still read.
        #expect(try store.read { try $0.events(since: 8) }.map(\.seq) == [8, 9, 10, 11, 12])
    }

    /// Stores of older formats are refused with a clear error that says what set their layout apart.
    @Test(arguments: [UInt32(2), 3, 4, 5, 6, 9, 10, 11, 12])
    func refusesAnOlderStore(format: UInt32) throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        do {
            let store = try Store.open(at: dir)
            // As a store of an older format holds it: before format 12, the 4 bytes bare, without the seal format 12
            // added.
            let meta = format < 12 ? Database(dbi: store.dbs.meta.dbi, name: store.dbs.meta.name) : store.dbs.meta
            try store.env.transaction(write: true) { txn in try txn.putUInt32(meta, Layout.metaFormat, format) }
            store.close()
        }
        let error = #expect(throws: StoreError.self) { try Store.open(at: dir) }
        #expect(error?.kind == .olderFormat(found: format, supported: Layout.formatVersion))
        // The message names the commands that convert it.
        #expect(
            error.map {
                "\($0)".contains("format \(format)") && "\($0)".contains("boardwalk export --db \(dir) --format batch")
                    && "\($0)".contains("boardwalk ingest --db NEW")
            } == true)
        #expect(error.map { "\($0)".contains(Layout.formerLayout(of: format)) } == true)
    }
}
