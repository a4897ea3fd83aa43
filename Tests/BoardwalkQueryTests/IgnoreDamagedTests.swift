import BoardwalkCodec
import BoardwalkModel
import BoardwalkStoreFormat
import Testing

@testable import BoardwalkQuery
@testable import BoardwalkStore

/// A run with `ignoreDamaged` reads around damaged event blocks: it answers as the events of the other blocks
/// would, and its note says how many blocks and events it skipped and where. Without it the run stops.
@Suite struct IgnoreDamagedTests {
    /// Changes one byte in the middle of each of the `events` blocks chosen by `pick` (from all blocks, in key
    /// order), under the same key, and returns the seqs of their events.
    static func damageBlocks(_ store: Store, _ pick: ([EventKey]) -> [EventKey]) throws -> Set<UInt64> {
        var chosen: [(key: [UInt8], value: [UInt8], seqs: [UInt64])] = []
        try store.read { snapshot in
            var keys: [EventKey] = []
            try snapshot.txn.withCursor(snapshot.dbs.events) { c in
                var more = try c.first()
                while more {
                    keys.append(try #require(EventKey(c.key)))
                    more = try c.next()
                }
            }
            for key in pick(keys) {
                var keyBytes = [UInt8](repeating: 0, count: Layout.eventKeySize)
                keyBytes.withUnsafeMutableBytes { key.write(to: $0.baseAddress!) }
                let value = try #require(try keyBytes.withUnsafeBytes { try snapshot.txn.get(snapshot.dbs.events, $0) })
                var block = try blockReader(key, value)
                var seqs: [UInt64] = []
                while try advance(&block, key) { seqs.append(block.seq) }
                chosen.append((keyBytes, Array(value), seqs))
            }
        }
        try store.env.transaction(write: true) { txn in
            for var block in chosen {
                block.value[block.value.count / 2] ^= 0x10
                try block.key.withUnsafeBytes { k in
                    try block.value.withUnsafeBytes { v in _ = try txn.put(store.dbs.events, k, v) }
                }
            }
        }
        return Set(chosen.flatMap(\.seqs))
    }

    /// On generated stores with two damaged blocks, every query (fixed and generated) answers with
    /// `ignoreDamaged` as the in-memory source does over the events of the other blocks, along each of the store's
    /// read paths (onboardings scanned, sessions through the index in batches, sessions gathered from scans), and
    /// with counts split across threads.
    @Test func answersAsTheEventsOfTheOtherBlocksWould() throws {
        var queries = QueryGenerator(seed: 29)
        let fixed = [
            "events | count", "events | count by onboarding, screen",
            #"sessions | where onboarding == "onb_1" | funnel"#, "sessions | stats sum(events), max(events)",
            "events | where screen >= 1 | count by kind",
        ]
        var compared = 0
        let probe = ParallelProbe()
        for dataset in 0..<8 {
            var generator = SessionGenerator(seed: 0xDA4A6E ^ UInt64(dataset))
            let events = generator.events()
            guard events.count >= 20 else { continue }
            try withTemporaryStore { store in
                _ = try store.append(events)
                try store.foldLogs()
                let stored = try store.read { try $0.events(since: 0) }
                let lost = try Self.damageBlocks(store) { keys in
                    keys.count < 3 ? [keys[0]] : [keys[1], keys[keys.count - 2]]
                }
                #expect(!lost.isEmpty)
                let memory = InMemoryEventSource(stored.filter { !lost.contains($0.seq) }.map(\.event))
                let now = Timestamp(microseconds: base + 3 * 86_400 * second)
                let options = Query.RunOptions(now: now, ignoreDamaged: true)
                // The in-memory source numbers the events it holds from 0, so seqs are compared nowhere: queries
                // that read them are left out and listings lose their seq column. `sessions | count` is answered
                // from the store's session counter, which reads no block (a session whose every event is lost
                // still counts).
                for text in fixed + (0..<25).map({ _ in queries.query() })
                where !text.contains("seq") && !text.hasPrefix("sessions | count") {
                    let query = try Query.parse(text)
                    let expected = try query.run(on: memory, options: .init(now: now)).droppingColumn("seq")
                    // Two of the ways with counts split across threads, in parts of a few events: a damaged block
                    // that two parts cut is stepped over by both.
                    for (ratio, references, gather, threads) in [
                        (0, Snapshot.defaultSessionBatchReferences, 0, 1),
                        (Double.infinity, Snapshot.defaultSessionBatchReferences, 0, 2),
                        (Double.infinity, 7, 0, 3), (Double.infinity, 7, Double.infinity, 1),
                    ] {
                        let answer: (table: ResultTable, statistics: RunStatistics)
                        var options = options
                        options.threads = threads
                        do {
                            answer = try StoreEventSource.$onboardingScanRatio.withValue(ratio) {
                                try StoreEventSource.$sessionBatchReferences.withValue(references) {
                                    try StoreEventSource.$gatherRatio.withValue(gather) {
                                        try StoreEventSource.$gatherBudget.withValue(50) {
                                            try StoreEventSource.$minimumPartEvents.withValue(threads > 1 ? 2 : 1 << 16)
                                            {
                                                try StoreEventSource.$parallelProbe.withValue(probe) {
                                                    try query.execute(on: StoreEventSource(store), options: options)
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        } catch {
                            Issue.record("dataset \(dataset): \(text): \(error)")
                            continue
                        }
                        compared += 1
                        let table = answer.table.droppingColumn("seq")
                        #expect(
                            agree(table, expected),
                            "dataset \(dataset): \(text)\nstore:\n\(table.render(.table))\nmemory:\n\(expected.render(.table))"
                        )
                    }
                }
            }
        }
        #expect(compared > 400)
        #expect(probe.counts.scans > 5, "counts split across threads: \(probe.counts)")
    }

    /// Without the option a query stops at the damaged block, naming it; with it, the note names the blocks, the
    /// events skipped (by their headers) and where they are, and the store is marked damaged either way.
    @Test func theNoteSaysHowManyEventsWereSkippedAndWhere() throws {
        try withTemporaryStore { store in
            var events: [Event] = []
            for i in 0..<60 {
                events.append(ev(Double(i * 10), "s\(i % 6)", screen: i % 3, presented))
            }
            _ = try store.append(events)
            try store.foldLogs()
            // The blocks of screen 1 and screen 2 of onb_1 (one block each: ten minutes of events).
            let lost = try Self.damageBlocks(store) { keys in keys.filter { $0.screen >= 1 } }
            #expect(lost.count == 40)
            // A count from the blocks' headers reads no event: the headers, whose own checksums hold, give every count.
            let headers = try Query.parse("events | count by screen").run(on: StoreEventSource(store))
            #expect(
                headers.rows == [
                    [.integer(0), .integer(20)], [.integer(1), .integer(20)], [.integer(2), .integer(20)],
                ])
            // A count that reads the events stops at the damaged blocks.
            let query = try Query.parse(#"events | where session != "x" | count by screen"#)
            let stopped = #expect(throws: QueryError.self) { try query.run(on: StoreEventSource(store)) }
            #expect(stopped?.kind == .source)
            #expect(stopped?.message.contains("is damaged") == true)
            #expect(stopped?.message.contains(#"onboarding "onb_1", screen 1"#) == true)

            let (table, statistics) = try query.execute(
                on: StoreEventSource(store), options: .init(ignoreDamaged: true))
            #expect(table.rows == [[.integer(0), .integer(20)]])
            let note = try #require(statistics.notes.first { $0.message.contains("damaged block") })
            #expect(note.kind == .note)
            #expect(note.message.contains("2 damaged blocks"))
            #expect(note.message.contains("40 events skipped"))
            #expect(note.message.contains(#"onboarding "onb_1", screen 1, 2026-11-01T10:00:10.000000Z to "#))
            #expect(note.message.contains(#"onboarding "onb_1", screen 2, 2026-11-01T10:00:20.000000Z to "#))
            #expect(note.message.contains("20 events"))
            #expect(store.damageFound != nil)

            // An undamaged store's run says nothing of damage.
            try withTemporaryStore { whole in
                _ = try whole.append(events)
                let clean = try query.execute(on: StoreEventSource(whole), options: .init(ignoreDamaged: true))
                #expect(!clean.statistics.notes.contains { $0.message.contains("damaged") })
                #expect(whole.damageFound == nil)
            }
        }
    }
}

extension ResultTable {
    /// The table without the column named `name` (unchanged when it has none).
    fileprivate func droppingColumn(_ name: String) -> ResultTable {
        guard let i = columns.firstIndex(of: name) else { return self }
        var copy = self
        copy.columns.remove(at: i)
        copy.rows = rows.map { row in
            var row = row
            row.remove(at: i)
            return row
        }
        return copy
    }
}
