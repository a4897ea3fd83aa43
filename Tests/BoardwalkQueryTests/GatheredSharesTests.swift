import BoardwalkGenerator
import BoardwalkModel
import BoardwalkStore
import Testing

@testable import BoardwalkQuery

// Sessions gathered as rows on several threads: each worker gathers a window of sessions (whole onboardings) into a
// sink of its own, and the sinks are merged in the windows' order. Every answer is one thread's, to the bit.

/// Generated `events` queries that read each event's dwell (so each session's events are gathered as rows), over
/// stores of three onboardings with spanning sessions: on 2 to 8 threads with windows of a few events, the answers
/// are one thread's exactly, and the in-memory source's.
@Test func splitGatheringsAgreeWithOneThreadAndTheInMemorySource() throws {
    let probe = ParallelProbe()
    var queries = QueryGenerator(seed: 0x6A_7E4)
    var rng = SplitMix64(seed: 0x6A_7E4)
    var ran = 0, split = 0
    let reductions = [
        "stats p50(dwell), p90(dwell), max(dwell), count() by screen", "count by screen, dwell > 30s",
        "histogram dwell step 20s", "top 3 screen", "stats count_distinct(session), min(dwell) by onboarding",
    ]
    for dataset in 0..<10 {
        let now = Timestamp(microseconds: base + 3 * 86_400 * second)
        var generator = SessionGenerator(seed: 0x6A_7E5 ^ UInt64(dataset))
        var events: [Event] = []
        while events.count < 200 { events += generator.events() }
        try withTemporaryStore { store in
            try appendInThreeBatches(events, to: store)
            let memory = InMemoryEventSource(try store.read { try $0.events(since: 0) }.map(\.event))
            let disk = StoreEventSource(store)
            for _ in 0..<20 {
                let filter = queries.chance(0.5) ? "where \(queries.eventPredicate()) | " : ""
                let text = "events | \(filter)where dwell is present or screen >= 0 | \(queries.pick(reductions))"
                let query = try Query.parse(text)
                let expected = try query.run(on: memory, options: .init(now: now))
                let serial = try StoreEventSource.$gatherRatio.withValue(.infinity) {
                    try query.run(on: disk, options: .init(now: now, threads: 1))
                }
                ran += 1
                guard agree(serial, expected) else {
                    Issue.record("dataset \(dataset): \(text)\none thread:\n\(serial.render(.table))")
                    return
                }
                let threads = Int.random(in: 2...8, using: &rng)
                let minimum = Int.random(in: 1...20, using: &rng)
                let before = probe.counts.deliveries
                let parallel = try StoreEventSource.$gatherRatio.withValue(.infinity) {
                    try StoreEventSource.$minimumWindowEvents.withValue(minimum) {
                        try StoreEventSource.$parallelProbe.withValue(probe) {
                            try query.run(on: disk, options: .init(now: now, threads: threads))
                        }
                    }
                }
                if probe.counts.deliveries > before { split += 1 }
                guard parallel == serial, parallel.render(.table) == serial.render(.table) else {
                    Issue.record(
                        """
                        dataset \(dataset), \(threads) threads, windows of \(minimum)+ events: \(text)
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
    #expect(ran == 200)
    #expect(split > 100, "many generated queries gathered their sessions split (\(split))")
    let counts = probe.counts
    #expect(counts.shares >= 2 * counts.deliveries, "each split gathering merged two windows or more")
}

/// Generated custom funnels over their step-event budget (forced to 0), whose sessions are folded from their records
/// in runs on 2 to 8 threads, gathered from their onboardings or read through the session index: every answer is one
/// thread's exactly (step times and their means in one order) and the in-memory source's.
@Test func overBudgetFunnelsFoldRunsOfSessionsOnSeveralThreadsAsOnOne() throws {
    let probe = ParallelProbe()
    var queries = QueryGenerator(seed: 0x0F_0B0)
    var rng = SplitMix64(seed: 0x0F_0B0)
    var ran = 0, split = 0
    for dataset in 0..<6 {
        let now = Timestamp(microseconds: base + 3 * 86_400 * second)
        var generator = SessionGenerator(seed: 0x0F_0B1 ^ UInt64(dataset))
        var events: [Event] = []
        while events.count < 300 { events += generator.events() }
        try withTemporaryStore { store in
            try appendInThreeBatches(events, to: store)
            let memory = InMemoryEventSource(try store.read { try $0.events(since: 0) }.map(\.event))
            let disk = StoreEventSource(store)
            var tried = 0
            while tried < 15 {
                let text = queries.funnelQuery()
                let query = try Query.parse(text)
                guard case .funnel(let funnel) = query.checked.reduction, !funnel.steps.isEmpty else { continue }
                tried += 1
                let gather = queries.chance(0.5) ? Double.infinity : 0
                func run(threads: Int, minimum: Int = 1) throws -> ResultTable {
                    try StepTests.$budgetOverride.withValue(0) {
                        try StoreEventSource.$gatherRatio.withValue(gather) {
                            try StoreEventSource.$minimumShareSessions.withValue(minimum) {
                                try StoreEventSource.$parallelProbe.withValue(probe) {
                                    try query.run(on: disk, options: .init(now: now, threads: threads))
                                }
                            }
                        }
                    }
                }
                let expected = try query.run(on: memory, options: .init(now: now))
                let serial = try run(threads: 1)
                ran += 1
                guard agree(serial, expected) else {
                    Issue.record("dataset \(dataset): \(text)\none thread:\n\(serial.render(.table))")
                    return
                }
                let threads = Int.random(in: 2...8, using: &rng)
                let before = probe.counts.deliveries
                let parallel = try run(threads: threads, minimum: Int.random(in: 1...4, using: &rng))
                if probe.counts.deliveries > before { split += 1 }
                guard parallel == serial, parallel.render(.table) == serial.render(.table) else {
                    Issue.record(
                        """
                        dataset \(dataset), \(threads) threads, gather ratio \(gather): \(text)
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
    #expect(ran == 90)
    #expect(split > 60, "most generated funnels folded their sessions split (\(split))")
    let counts = probe.counts
    #expect(counts.shares >= 2 * counts.deliveries, "each split fold merged two runs or more")
}

/// One onboarding's sessions are gathered on one thread: windows cutting its sessions would each scan the whole
/// onboarding.
@Test func oneOnboardingsSessionsAreGatheredOnOneThread() throws {
    var events: [Event] = []
    for s in 0..<400 {
        events.append(ev(Double(s) * 20, "s\(s)", started))
        events.append(ev(Double(s) * 20 + 5, "s\(s)", screen: 1, presented))
    }
    try withTemporaryStore { store in
        _ = try store.append(events)
        let probe = ParallelProbe()
        let table = try StoreEventSource.$gatherRatio.withValue(.infinity) {
            try StoreEventSource.$minimumWindowEvents.withValue(10) {
                try StoreEventSource.$parallelProbe.withValue(probe) {
                    try Query.parse("events | stats p50(dwell) by screen").run(
                        on: StoreEventSource(store), options: .init(threads: 4))
                }
            }
        }
        #expect(table.rows.count == 2)
        #expect(probe.counts.deliveries == 0)
    }
}

/// A gathering split across threads checks the query's flag as each window starts: once it is set, no worker gathers
/// another window, and every worker is joined before the query fails as cancelled.
@Test func cancelledSplitGatheringStopsEveryWorker() throws {
    var events: [Event] = []
    for s in 0..<600 {
        let onboarding = "onb_\(s % 6)"
        events.append(ev(Double(s) * 20, "s\(s)", onboarding: onboarding, started))
        events.append(ev(Double(s) * 20 + 5, "s\(s)", screen: 1, onboarding: onboarding, presented))
    }
    try withTemporaryStore { store in
        _ = try store.append(events)
        let disk = StoreEventSource(store)
        let query = try Query.parse("events | stats p50(dwell), count() by screen")
        let serial = try query.run(on: disk, options: .init(threads: 1))
        func run(_ probe: ParallelProbe, _ options: Query.RunOptions) throws -> ResultTable {
            try StoreEventSource.$gatherRatio.withValue(.infinity) {
                try StoreEventSource.$minimumWindowEvents.withValue(100) {
                    try StoreEventSource.$parallelProbe.withValue(probe) { try query.run(on: disk, options: options) }
                }
            }
        }
        let probe = ParallelProbe()
        #expect(try run(probe, .init(threads: 2)) == serial)
        #expect(probe.counts.deliveries == 1 && probe.counts.started == 2 && probe.counts.finished == 2)

        let flag = CancellationFlag()
        let cancelled = ParallelProbe { flag.cancel() }
        #expect {
            _ = try run(cancelled, .init(cancellation: flag, threads: 2))
        } throws: { error in
            (error as? QueryError)?.kind == .cancelled
        }
        let stopped = cancelled.counts
        #expect(stopped.started == 2 && stopped.finished == 2, "no worker left running: \(stopped)")
        #expect(stopped.parts == 0, "no window gathered once the flag was set: \(stopped)")
    }
}
