import BoardwalkGenerator
import BoardwalkModel
import BoardwalkStore
import Testing

@testable import BoardwalkQuery

// The sessions of a whole-store fold delivered on several threads: each worker adds a run of them into a sink of its
// own, and the sinks are merged in the runs' order. Every answer is one thread's, to the bit and to the spelling.

/// Whether two tables are the same, their strings byte for byte (`==` on strings holds for canonically equivalent
/// spellings, and the merge must keep the spelling one thread keeps).
private func identical(_ a: ResultTable, _ b: ResultTable) -> Bool {
    a == b && Array(a.render(.table).utf8) == Array(b.render(.table).utf8)
}

/// Generated `sessions` queries over the whole store (reductions, buckets by day and zone, later stages): split into
/// runs of a few sessions on 2 to 8 threads, the answers are one thread's exactly, and the in-memory source's.
@Test func splitSessionDeliveriesAgreeWithOneThreadAndTheInMemorySource() throws {
    let probe = ParallelProbe()
    var queries = QueryGenerator(seed: 0x5A_4E5)
    var rng = SplitMix64(seed: 0x5A_4E5)
    var ran = 0, split = 0
    for dataset in 0..<14 {
        let now = Timestamp(microseconds: base + 3 * 86_400 * second)
        var generator = SessionGenerator(seed: 0xD1_5EA5E ^ UInt64(dataset))
        let events = generator.events()
        try withTemporaryStore { store in
            try appendInThreeBatches(events, to: store)
            let memory = InMemoryEventSource(try store.read { try $0.events(since: 0) }.map(\.event))
            let disk = StoreEventSource(store)
            for _ in 0..<25 {
                var text = queries.chance(0.7) ? queries.query() : queries.bucketedQuery()
                while !text.hasPrefix("sessions") { text = queries.query() }
                let query = try Query.parse(text)
                let expected = try query.run(on: memory, options: .init(now: now))
                let serial = try query.run(on: disk, options: .init(now: now, threads: 1))
                ran += 1
                guard agree(serial, expected) else {
                    Issue.record("dataset \(dataset): \(text)\none thread:\n\(serial.render(.table))")
                    return
                }
                let threads = Int.random(in: 2...8, using: &rng)
                let minimum = Int.random(in: 1...3, using: &rng)
                let before = probe.counts.deliveries
                let parallel = try StoreEventSource.$minimumShareSessions.withValue(minimum) {
                    try StoreEventSource.$parallelProbe.withValue(probe) {
                        try query.run(on: disk, options: .init(now: now, threads: threads))
                    }
                }
                if probe.counts.deliveries > before { split += 1 }
                guard identical(parallel, serial) else {
                    Issue.record(
                        """
                        dataset \(dataset), \(threads) threads, runs of \(minimum)+ sessions: \(text)
                        threads:
                        \(parallel.render(.table))
                        one thread:
                        \(serial.render(.table))
                        """)
                    return
                }
            }
        }
    }
    #expect(ran == 350)
    #expect(split > 100, "many generated queries delivered their sessions split (\(split))")
    let counts = probe.counts
    #expect(counts.shares >= 2 * counts.deliveries, "each split delivery merged two shares or more")
}

/// Sessions whose variations and answers are spelled apart but equal as Swift compares strings (a precomposed `é`
/// and `e` with a combining accent): a group keeps the spelling of its first session in the order one thread
/// delivers them, and `min` and `max` the first of equal values, whichever run each spelling falls in.
@Test func splitSessionDeliveriesKeepTheFirstSessionsSpelling() throws {
    let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
    var events: [Event] = []
    for s in 0..<60 {
        // The decomposed spelling first, in the first run; the composed one in every later run too.
        let variation = s % 7 == 0 ? decomposed : (s % 2 == 0 ? composed : "plain")
        events.append(ev(Double(s * 10), "s\(s)", variation: variation, started))
        events.append(ev(Double(s * 10 + 1), "s\(s)", screen: 1, variation: variation, select("drink", variation)))
    }
    try withTemporaryStore { store in
        _ = try store.append(events)
        let disk = StoreEventSource(store)
        for text in [
            "sessions | count by variation", "sessions | stats count(), min(variation), max(variation) by exit",
            "sessions | top 2 variation", "sessions | stats count_distinct(variation), rate(completed) by variation",
            "sessions | count by answer(\"drink\") | sort count desc",
        ] {
            let query = try Query.parse(text)
            let serial = try query.run(on: disk, options: .init(threads: 1))
            let probe = ParallelProbe()
            let parallel = try StoreEventSource.$minimumShareSessions.withValue(5) {
                try StoreEventSource.$parallelProbe.withValue(probe) {
                    try query.run(on: disk, options: .init(threads: 3))
                }
            }
            #expect(probe.counts.deliveries == 1, "\(text): delivered split")
            #expect(identical(parallel, serial), "\(text)\n\(parallel.render(.table))\n\(serial.render(.table))")
            #expect(serial.render(.table).contains(decomposed), "\(text): the first session's spelling")
        }
    }
}

/// `avg` and `sum` add doubles, whose sum depends on the order they are added in: their sessions are delivered on one
/// thread, so the answer is the same at any number of threads. A `count` of the same store splits.
@Test func sessionDeliveriesOfAveragesAndSumsStayOnOneThread() throws {
    var events: [Event] = []
    for s in 0..<40 {
        events.append(ev(Double(s) * 0.1, "s\(s)", variation: s % 2 == 0 ? "a" : "b", started))
        events.append(ev(Double(s) * 0.1 + 0.3 + Double(s % 5) * 0.7, "s\(s)", screen: 1, presented))
    }
    try withTemporaryStore { store in
        _ = try store.append(events)
        let disk = StoreEventSource(store)
        func deliveries(_ text: String) throws -> Int {
            let probe = ParallelProbe()
            let query = try Query.parse(text)
            let serial = try query.run(on: disk, options: .init(threads: 1))
            let parallel = try StoreEventSource.$minimumShareSessions.withValue(1) {
                try StoreEventSource.$parallelProbe.withValue(probe) {
                    try query.run(on: disk, options: .init(threads: 4))
                }
            }
            #expect(identical(parallel, serial), "\(text)")
            return probe.counts.deliveries
        }
        let split = try [
            "sessions | stats avg(duration) by variation", "sessions | stats sum(duration), count() by variation",
            "sessions | stats count(), p50(duration), max(duration) by variation", "sessions | histogram duration",
        ].map(deliveries)
        #expect(split == [0, 0, 1, 1])
    }
}

/// A summary made anew for each session by `reset(id:)` is the one `SessionSummary(id:)` makes: every stored
/// property is back to its initial value (a property added later without a reset fails here).
@Test func resetSummaryIsANewSessionsSummary() throws {
    let used = SessionSummary(id: "old")
    try withTemporaryStore { store in
        try store.read { snapshot in
            used.screenClients = .fold(screens: [(0, 1, 2)], others: [], names: SnapshotStrings(snapshot))
        }
    }
    used.profile = "p"
    used.onboarding = "o"
    used.placement = "pl"
    used.variation = "v"
    used.started = Timestamp(microseconds: 5)
    used.ended = Timestamp(microseconds: 9)
    used.eventCount = 3
    used.furthestScreen = 2
    used.lastScreen = 1
    used.totalScreens = 4
    used.completed = true
    used.paywall = true
    used.closed = true
    used.emailCollected = true
    used.outcome = .closed
    used.answers = ["goal": .string("fit")]
    used.kindsSeen = 3
    used.namesSeen = 5
    used.otherNamesSeen = ["custom"]
    used.reachTimes = [1, 2]
    used.stepEvents = [StepEvent(at: OrderKey(time: 1, seq: 1), mask: 1, keys: [])]
    used.storeID = 7
    used.reset(id: "new")
    let fresh = SessionSummary(id: "new")
    let properties = Array(zip(Mirror(reflecting: used).children, Mirror(reflecting: fresh).children))
    #expect(properties.count == Mirror(reflecting: fresh).children.count)
    for (a, b) in properties {
        #expect(a.label == b.label)
        #expect(String(describing: a.value) == String(describing: b.value), "\(a.label ?? "?") after reset")
    }
}

/// A split delivery cancelled as its workers start throws `.cancelled`, and every worker has returned by then; not
/// cancelled, it answers as one thread does.
@Test func cancelledSplitDeliveryStopsEveryWorker() throws {
    var events: [Event] = []
    for s in 0..<9_000 {
        events.append(ev(Double(s) * 20, "s\(s)", variation: "v\(s % 7)", started))
        events.append(ev(Double(s) * 20 + 5, "s\(s)", screen: 1, presented))
    }
    try withTemporaryStore { store in
        _ = try store.append(events)
        let disk = StoreEventSource(store)
        let query = try Query.parse("sessions | count by day(started)")
        let serial = try query.run(on: disk, options: .init(threads: 1))
        let probe = ParallelProbe()
        let split = try StoreEventSource.$minimumShareSessions.withValue(1_000) {
            try StoreEventSource.$parallelProbe.withValue(probe) {
                try query.run(on: disk, options: .init(threads: 2))
            }
        }
        #expect(split == serial)
        #expect(probe.counts.deliveries == 1 && probe.counts.started == 2 && probe.counts.finished == 2)

        let flag = CancellationFlag()
        let cancelled = ParallelProbe { flag.cancel() }
        #expect {
            try StoreEventSource.$minimumShareSessions.withValue(1_000) {
                try StoreEventSource.$parallelProbe.withValue(cancelled) {
                    _ = try query.run(on: disk, options: .init(cancellation: flag, threads: 2))
                }
            }
        } throws: { error in
            (error as? QueryError)?.kind == .cancelled
        }
        let stopped = cancelled.counts
        #expect(stopped.started == 2 && stopped.finished == 2, "no worker left running: \(stopped)")
        #expect(stopped.parts == 0, "no run delivered once the flag was set: \(stopped)")
    }
}
