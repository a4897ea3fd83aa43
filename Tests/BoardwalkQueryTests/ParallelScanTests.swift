import BoardwalkGenerator
import BoardwalkModel
import BoardwalkStore
import Dispatch
import Testing

@testable import BoardwalkQuery

// Scans split across threads (counts by event fields, session folds over whole onboardings): the same answers at
// every thread count and part size, read from transactions of one commit, and a cancelled count that returns with no
// worker left running.

/// A count by coded event fields (`count by`, `count_distinct`), often filtered, sometimes over one onboarding or a
/// time range: the queries that ``StoreEventSource/countByCodes`` answers and splits across threads.
private func countQuery(_ g: inout QueryGenerator) -> String {
    var parts = ["events"]
    for _ in 0..<g.int(0...2) { parts.append("where " + g.eventPredicate()) }
    if g.chance(0.2) { parts.append("where onboarding == \"\(g.pick(["onb_1", "onb_2", "onb_3"]))\"") }
    if g.chance(0.2) { parts.append("where screen \(g.pick([">=", "<", "=="])) \(g.int(0...3))") }
    parts.append(
        g.pick([
            "count", "count by name", "count by kind, name", "count by screen", "count by onboarding, screen",
            "count by element, value", "count by variation, kind", "stats count(), count_distinct(session) by name",
            "stats count_distinct(value) by element", "stats count_distinct(session), count_distinct(name)",
            "count by session.exit", "count by name | sort count desc | limit 2",
        ]))
    return parts.joined(separator: " | ")
}

/// Runs generated queries over generated stores written in three batches, each at one thread and then at 2 threads
/// and at a random 3 to 8 with parts of a few events: every answer must be the in-memory source's (itself checked
/// against the reference evaluator elsewhere). Returns the queries run and how many runs the store split.
private func runSplitAndSerial(
    seed: UInt64, datasets: Int, queriesPerDataset: Int, probe: ParallelProbe, _ text: (inout QueryGenerator) -> String
) throws -> (ran: Int, split: Int) {
    var queries = QueryGenerator(seed: seed)
    var rng = SplitMix64(seed: seed)
    var ran = 0, split = 0
    for dataset in 0..<datasets {
        let now = Timestamp(microseconds: base + 3 * 86_400 * second)
        var generator = SessionGenerator(seed: seed ^ UInt64(dataset))
        let events = generator.events()
        try withTemporaryStore { store in
            try appendInThreeBatches(events, to: store)
            let stored = try store.read { try $0.events(since: 0) }.map(\.event)
            let memory = InMemoryEventSource(stored)
            let disk = StoreEventSource(store)
            for _ in 0..<queriesPerDataset {
                let text = text(&queries)
                let query = try Query.parse(text)
                let expected = try query.run(on: memory, options: .init(now: now))
                let serial = try query.run(on: disk, options: .init(now: now, threads: 1))
                ran += 1
                guard agree(serial, expected) else {
                    Issue.record("dataset \(dataset): \(text)\none thread:\n\(serial.render(.table))")
                    return
                }
                for threads in [2, Int.random(in: 3...8, using: &rng)] {
                    let minimum = Int.random(in: 1...4, using: &rng)
                    let before = probe.counts.scans
                    let parallel = try StoreEventSource.$minimumPartEvents.withValue(minimum) {
                        try StoreEventSource.$parallelProbe.withValue(probe) {
                            try query.run(on: disk, options: .init(now: now, threads: threads))
                        }
                    }
                    if probe.counts.scans > before { split += 1 }
                    guard agree(parallel, expected) else {
                        Issue.record(
                            """
                            dataset \(dataset), \(threads) threads, parts of \(minimum)+ events: \(text)
                            threads:
                            \(parallel.render(.table))
                            memory:
                            \(expected.render(.table))
                            """)
                        return
                    }
                }
            }
        }
    }
    return (ran, split)
}

/// Generated counts (and, a quarter of the time, any generated query) split across threads agree with one thread
/// and the in-memory source.
@Test func parallelCountsAgreeWithOneThreadAndTheInMemorySource() throws {
    let probe = ParallelProbe()
    var n = 0
    let (ran, split) = try runSplitAndSerial(seed: 0x7_4EAD, datasets: 20, queriesPerDataset: 30, probe: probe) {
        n += 1
        return n % 4 == 0 ? $0.query() : countQuery(&$0)
    }
    let counts = probe.counts
    #expect(ran == 600)
    #expect(split > 200, "many generated counts ran split across threads (\(split))")
    #expect(counts.started >= 2 * counts.scans, "each split count started two workers or more")
    #expect(counts.parts >= 3 * counts.scans, "each split count read several parts")
}

/// Generated queries over the whole store or one or two whole onboardings, whose sessions are folded from scans of
/// key ranges (`sessions` reductions, funnels, `events` with `session.` properties): split across threads, each
/// worker folds its parts into folds of its own and the folds are merged (over the whole store, the sessions are
/// delivered in the order one scan first meets them); the answers agree with one thread and the in-memory source.
@Test func parallelSessionFoldsAgreeWithOneThreadAndTheInMemorySource() throws {
    let probe = ParallelProbe()
    let (ran, split) = try runSplitAndSerial(seed: 0x5E55_F01D, datasets: 16, queriesPerDataset: 25, probe: probe) {
        g in
        let scope =
            g.chance(0.7)
            ? "where onboarding == \"\(g.pick(["onb_1", "onb_2", "onb_3"]))\""
            : "where onboarding == \"onb_1\" or onboarding == \"\(g.pick(["onb_2", "onb_3"]))\""
        var text = g.pick([g.query(), g.funnelQuery(), g.funnelQuery(), g.query()])
        if g.chance(0.3) {
            text =
                "events | where "
                + g.pick([
                    "session.completed", "session.exit == \"closed\"", "session.furthest_screen >= 1",
                    "not session.paywall", "session.variation == \"a\"",
                ]) + " | "
                + g.pick(["count by screen", "count by name, session.exit", "stats count_distinct(session)"])
        }
        // A third over the whole store; else the scope right after the source, so the planner narrows the scan to
        // the onboardings.
        if g.chance(0.33) { return text }
        let source = text.prefix { $0 != " " }
        return source + " | " + scope + text.dropFirst(source.count)
    }
    let counts = probe.counts
    #expect(ran == 400)
    #expect(split > 150, "many generated queries ran split across threads (\(split))")
    #expect(counts.folds > 100, "many of them folded sessions split (\(counts.folds))")
}

/// Counts from block headers (the plan's `blockCounts`: no record decoded) split across threads by key range: the
/// blocks a part's time cuts are read for their events' times in both parts, each counting its own, so every answer
/// is one thread's, with and without a time range, over the whole store and one onboarding.
@Test func headerCountsSplitAcrossThreadsAgreeWithOneThread() throws {
    let events = manyEvents(sessions: 400, events: 30)
    try withTemporaryStore { store in
        try appendInThreeBatches(events, to: store)
        let disk = StoreEventSource(store)
        let memory = InMemoryEventSource(try store.read { try $0.events(since: 0) }.map(\.event))
        let cut = Timestamp(microseconds: base + 4_321 * second).description
        for text in [
            "events | where kind == \"analytics\" | count by name", "events | count by onboarding, screen",
            "events | where time >= @\(cut) | count by kind, name",
            "events | where onboarding == \"onb_1\" and time < @\(cut) | stats count() by screen",
        ] {
            let query = try Query.parse(text)
            #expect(query.explain(on: disk).contains("headers"), "\(text) is counted from block headers")
            let expected = try query.run(on: memory)
            let probe = ParallelProbe()
            for threads in [1, 2, 5] {
                let table = try StoreEventSource.$minimumPartEvents.withValue(64) {
                    try StoreEventSource.$parallelProbe.withValue(probe) {
                        try query.run(on: disk, options: .init(threads: threads))
                    }
                }
                #expect(agree(table, expected), "\(text) at \(threads) threads")
            }
            #expect(probe.counts.scans == 2, "\(text): split at 2 and at 5 threads (\(probe.counts.scans) scans)")
            #expect(probe.counts.started == probe.counts.finished)
        }
    }
    // Two onboardings whose names compare equal (`K` and the Kelvin sign), the second with the more events (the larger
    // part, read first): a group keeps the spelling of key order at any number of threads.
    var spelled = manyEvents(sessions: 60, events: 30).map { event in
        var event = event
        let onboarding = event.meta?.onboardingID == "onb_2" ? "onb_K" : "onb_\u{212A}"
        event.meta?.onboardingID = onboarding
        return event
    }
    spelled.sort { $0.time < $1.time }
    try withTemporaryStore { store in
        try appendInThreeBatches(spelled, to: store)
        let disk = StoreEventSource(store)
        let query = try Query.parse("events | count by onboarding")
        let tables = try [1, 3].map { threads in
            try StoreEventSource.$minimumPartEvents.withValue(64) {
                try query.run(on: disk, options: .init(threads: threads))
            }
        }
        let spelling = { (table: ResultTable) in table.rows.map { $0.first?.stringValue.map { Array($0.utf8) } } }
        #expect(tables[0].rows.count == 1 && spelling(tables[0]) == spelling(tables[1]))
        #expect(tables[0].rows == tables[1].rows)
    }
}

/// Sessions of `events` events each across two onboardings, one event a second, for the scans that need volume.
private func manyEvents(sessions: Int, events: Int) -> [Event] {
    var out: [Event] = []
    out.reserveCapacity(sessions * events)
    for s in 0..<sessions {
        let onboarding = s % 3 == 0 ? "onb_2" : "onb_1"
        for e in 0..<events {
            let payload = e == 0 ? started : (e % 2 == 0 ? presented : select("goal", "g\((e + s) % 4)"))
            out.append(
                ev(Double(s * events + e), "s\(s)", screen: e % 5, total: 5, onboarding: onboarding, payload))
        }
    }
    return out
}

/// A count split across threads over a store of 24 000 events: the answer is one thread's, every part is read; with
/// the run's flag set as the workers start, it throws `.cancelled` after at most a check interval per worker, and
/// every worker has returned by then.
@Test func cancelledParallelCountStopsEveryWorker() throws {
    let events = manyEvents(sessions: 2_400, events: 10)
    try withTemporaryStore { store in
        _ = try store.append(events)
        let disk = StoreEventSource(store)
        let query = try Query.parse("events | count by element, onboarding")
        let serial = try query.run(on: disk, options: .init(threads: 1))
        let probe = ParallelProbe()
        let parallel = try StoreEventSource.$minimumPartEvents.withValue(1_000) {
            try StoreEventSource.$parallelProbe.withValue(probe) {
                try query.execute(on: disk, options: .init(threads: 2))
            }
        }
        #expect(agree(parallel.table, serial))
        #expect(parallel.statistics.eventsRead == events.count, "each event read once")
        let whole = probe.counts
        #expect(whole.scans == 1 && whole.parts >= 6, "split into parts: \(whole)")
        #expect(whole.started == 2 && whole.finished == 2)

        // Cancelled as the workers start (the executor checks the flag before it reads, so a flag set earlier
        // would stop the run before any worker).
        let flag = CancellationFlag()
        let cancelled = ParallelProbe { flag.cancel() }
        #expect {
            try StoreEventSource.$minimumPartEvents.withValue(1_000) {
                try StoreEventSource.$parallelProbe.withValue(cancelled) {
                    _ = try query.run(on: disk, options: .init(cancellation: flag, threads: 2))
                }
            }
        } throws: { error in
            (error as? QueryError)?.kind == .cancelled
        }
        let stopped = cancelled.counts
        #expect(stopped.scans == 1, "the cancelled count was split")
        #expect(stopped.started == 2 && stopped.finished == 2, "no worker left running: \(stopped)")
        // A worker checks the flag every 4 096 events: it can finish a part of about 4 000, not two.
        #expect(stopped.parts <= 2 && stopped.parts < whole.parts, "the workers stopped early: \(stopped)")
    }
}

/// Session folds over whole onboardings and over the whole store split across threads, on a store of 24 000 events:
/// lean folds (a screen funnel, its reach times in rows; the lasts and outcomes) and full ones (answers) each read
/// several parts on two workers, and answer as one thread does.
@Test func sessionFoldsOfWholeOnboardingsSplitAcrossThreads() throws {
    let events = manyEvents(sessions: 2_400, events: 10)
    try withTemporaryStore { store in
        _ = try store.append(events)
        let disk = StoreEventSource(store)
        for text in [
            #"sessions | where onboarding == "onb_1" | funnel"#,
            #"events | where onboarding == "onb_2" and session.furthest_screen >= 3 | count by name"#,
            #"sessions | where onboarding == "onb_2" | stats count(), p50(duration) by last_screen, exit"#,
            #"sessions | where onboarding == "onb_1" | stats count() by answer("goal")"#,
            #"sessions | funnel"#, #"sessions | stats count(), rate(completed), avg(events) by answer("goal")"#,
            #"sessions | where onboarding == "onb_1" or onboarding == "onb_2" | count by onboarding, exit"#,
            #"sessions | count by last_screen"#,
            #"sessions | where onboarding == "onb_1" | funnel onboarding_started, screen_presented(screen >= 2) by screen"#,
            #"sessions | funnel screen_presented(screen == 0), state_updated, screen_presented(screen == 4) within 5s mode any"#,
        ] {
            let query = try Query.parse(text)
            let serial = try query.run(on: disk, options: .init(threads: 1))
            let probe = ParallelProbe()
            let parallel = try StoreEventSource.$minimumPartEvents.withValue(1_000) {
                try StoreEventSource.$parallelProbe.withValue(probe) {
                    try query.run(on: disk, options: .init(threads: 2))
                }
            }
            #expect(agree(parallel, serial), "\(text)\n\(parallel.render(.table))\n\(serial.render(.table))")
            #expect(!serial.rows.isEmpty, "\(text)")
            let counts = probe.counts
            #expect(counts.folds == 1 && counts.parts >= 4 && counts.started >= 2, "\(text): split: \(counts)")
        }
    }
}

/// A whole-store fold split across threads delivers the sessions in the order one scan in key order first meets them
/// (so that even sums of doubles add up in the one-thread order): the ids at one thread and at 2 to 5, in parts of a
/// few events, over stores written in three batches (blocks of a group overlap in time), for lean and full folds.
@Test func splitWholeStoreFoldDeliversSessionsInKeyOrder() throws {
    let probe = ParallelProbe()
    for dataset in 0..<12 {
        var generator = SessionGenerator(seed: 0x0D_E11E ^ UInt64(dataset))
        let events = generator.events()
        try withTemporaryStore { store in
            try appendInThreeBatches(events, to: store)
            let disk = StoreEventSource(store)
            for text in ["sessions | count by exit", "sessions | count by variation, answer(\"experience\")"] {
                let needs = FoldNeeds(try Query.parse(text).checked, now: Timestamp(microseconds: base))
                func order(threads: Int) throws -> [UInt32?] {
                    var ids: [UInt32?] = []
                    try StoreEventSource.$threads.withValue(threads) {
                        try StoreEventSource.$minimumPartEvents.withValue(1) {
                            try StoreEventSource.$parallelProbe.withValue(probe) {
                                try disk.foldSessions([ScanRange()], needs: needs, cancellation: nil, text: text) {
                                    summary, _, _ in
                                    ids.append(summary.storeID)
                                    return true
                                }
                            }
                        }
                    }
                    return ids
                }
                let one = try order(threads: 1)
                for threads in 2...5 {
                    #expect(try order(threads: threads) == one, "dataset \(dataset), \(threads) threads: \(text)")
                }
            }
        }
    }
    #expect(probe.counts.folds > 40, "the folds ran split: \(probe.counts)")
}

/// Sessions of onboardings of 90 screens, more than a lean fold keeps in rows: their screen times are chained, and
/// a split fold merges the chains (each screen's earliest time kept); the screen funnels agree with one thread and
/// the in-memory source, over whole onboardings and the whole store.
@Test func splitFoldsMergeChainedScreenTimes() throws {
    var out: [Event] = []
    for s in 0..<300 {
        let onboarding = s % 4 == 0 ? "onb_2" : "onb_1"
        for e in 0..<12 {
            let at = Double(s * 40 + e * 3 + (e * 7 + s) % 5)
            out.append(ev(at, "s\(s)", screen: (s * 7 + e * 9) % 90, total: 90, onboarding: onboarding, presented))
        }
    }
    try withTemporaryStore { store in
        try appendInThreeBatches(out, to: store)
        let disk = StoreEventSource(store)
        let memory = InMemoryEventSource(try store.read { try $0.events(since: 0) }.map(\.event))
        let probe = ParallelProbe()
        for text in [#"sessions | where onboarding == "onb_1" | funnel"#, "sessions | funnel"] {
            let query = try Query.parse(text)
            let expected = try query.run(on: memory)
            #expect(agree(try query.run(on: disk, options: .init(threads: 1)), expected), "\(text)")
            for threads in [2, 3] {
                let split = try StoreEventSource.$minimumPartEvents.withValue(100) {
                    try StoreEventSource.$parallelProbe.withValue(probe) {
                        try query.run(on: disk, options: .init(threads: threads))
                    }
                }
                #expect(agree(split, expected), "\(text), \(threads) threads")
            }
        }
        #expect(probe.counts.folds == 4, "\(probe.counts)")
    }
}

/// A custom funnel split across threads, under and over the budget of step events its folds may keep: the workers
/// count what they kept together, so a split fold is over budget when one scan would be (not when one worker's parts
/// hold more than a share), and over it the query reads sessions as rows instead, with the same answer.
@Test func splitCustomFunnelOverItsBudgetReadsSessionsAsRows() throws {
    let events = manyEvents(sessions: 2_400, events: 10)
    try withTemporaryStore { store in
        _ = try store.append(events)
        let disk = StoreEventSource(store)
        for text in [
            #"sessions | where onboarding == "onb_1" | funnel onboarding_started, state_updated, screen_presented"#,
            #"sessions | funnel onboarding_started, state_updated(value == "g2"), screen_presented within 1m"#,
        ] {
            let query = try Query.parse(text)
            let serial = try query.run(on: disk, options: .init(threads: 1))
            func split(budget: Int) throws -> ParallelProbe.Counts {
                let probe = ParallelProbe()
                let parallel = try StepTests.$budgetOverride.withValue(budget) {
                    try StoreEventSource.$minimumPartEvents.withValue(1_000) {
                        try StoreEventSource.$parallelProbe.withValue(probe) {
                            try query.run(on: disk, options: .init(threads: 2))
                        }
                    }
                }
                #expect(agree(parallel, serial), "\(text), budget \(budget)")
                #expect(probe.counts.folds == 1, "\(text), budget \(budget): \(probe.counts)")
                return probe.counts
            }
            let all = try split(budget: 1 << 30)
            let kept = all.stepEventsKept
            #expect(all.overBudget == 0 && kept > 1_000, "\(text): \(all)")
            // Just enough for all of them: more than either worker's half, and not over.
            #expect(try split(budget: kept).overBudget == 0, "\(text)")
            #expect(try split(budget: kept - 1).overBudget == 1, "\(text)")
            #expect(try split(budget: 0).overBudget == 1, "\(text)")
        }
    }
}

/// The step tests of a split custom funnel: each worker's tests may keep what is left of the budget, and what the
/// workers kept counts into the scan's tests, over budget when their sum passes it or one worker was.
@Test func stepTestsShareTheBudgetBetweenWorkers() throws {
    let query = try Query.parse("sessions | funnel onboarding_started, screen_presented")
    let needs = FoldNeeds(query.checked, now: Timestamp(microseconds: 0))
    let tests = try #require(needs.stepTests)
    StepTests.$budgetOverride.withValue(1_000) {
        tests.limit(sessions: 10, events: 100)
        tests.kept = 100
        #expect(tests.remaining == 900)
        let shares = (0..<3).map { _ in tests.share() }
        #expect(shares.allSatisfy { $0.budget == 900 && $0.kept == 0 })
        shares[0].kept = 600
        shares[1].kept = 200
        for share in shares { tests.absorb(share) }
        #expect(tests.kept == 900 && !tests.overBudget)
        let more = tests.share()
        #expect(more.budget == 100)
        more.kept = 100
        tests.absorb(more)
        #expect(tests.kept == 1_000 && !tests.overBudget)
        let last = tests.share()
        #expect(last.budget == 0)
        last.kept = 1
        tests.absorb(last)
        #expect(tests.overBudget, "the workers together kept more than the budget")
        let over = StepTests(tests.matcher)
        over.limit(sessions: 0, events: 0)
        let worker = over.share()
        worker.kept = worker.budget + 1
        over.absorb(worker)
        #expect(over.overBudget, "a worker over budget puts the scan over it")
    }
}

/// `explain` says when a plan's scan may run on several threads: counts by field codes and session folds of the whole
/// store or of whole onboardings, not a listing cut by `limit` nor the store's session counter.
@Test func explainSaysWhichScansSplitAcrossThreads() throws {
    try withTemporaryStore { store in
        _ = try store.append(manyEvents(sessions: 20, events: 3))
        let disk = StoreEventSource(store)
        func plan(_ text: String, threads: Int) throws -> String {
            let query = try Query.parse(text)
            return StoreEventSource.$threads.withValue(threads) { query.explain(on: disk) }
        }
        for text in [
            #"events | where kind == "analytics" | count by element"#, "sessions | funnel",
            #"sessions | where onboarding == "onb_1" | stats count() by exit"#,
            #"events | where onboarding == "onb_1" and session.completed | count by screen"#,
            #"events | where kind == "analytics" | count by name"#,
        ] {
            #expect(
                try plan(text, threads: 3).contains("\nthreads: up to 3, each reading parts of the ranges"), "\(text)")
            #expect(try plan(text, threads: 1).contains("\nthreads: 1\n"), "\(text)")
        }
        for text in [
            "sessions | limit 2", "sessions | count", #"sessions | where profile == "p" | count"#,
        ] {
            #expect(try !plan(text, threads: 3).contains("threads:"), "\(text)")
        }
    }
}

/// The snapshots of a split scan read one commit: opened with no write between them they share its id; after a
/// write by another thread, the first is older than the rest, and the scan begins again or runs on the first alone.
@Test func snapshotsOfASplitScanReadOneCommit() throws {
    try withTemporaryStore { store in
        _ = try store.append(manyEvents(sessions: 4, events: 3))
        let disk = StoreEventSource(store)
        var commits: [UInt64] = []
        try disk.reading { first in
            let ran = try disk.withSnapshots(of: first, extra: 2, retry: true) { snapshots in
                commits = snapshots.map(\.commitID)
            }
            #expect(ran)
        }
        #expect(commits.count == 3 && Set(commits).count == 1, "\(commits)")

        var retried = true
        var alone: [UInt64] = []
        try disk.reading { first in
            // Another thread commits while this one holds `first` (a small append: the map does not grow).
            let done = DispatchSemaphore(value: 0)
            let writer = DispatchQueue(label: "writer")
            nonisolated(unsafe) var appended: Result<Void, any Error> = .success(())
            writer.async {
                appended = Result { _ = try store.append(manyEvents(sessions: 1, events: 2)) }
                done.signal()
            }
            done.wait()
            #expect(throws: Never.self) { try appended.get() }
            retried = try disk.withSnapshots(of: first, extra: 2, retry: true) { _ in
                Issue.record("snapshots of two commits were handed out")
            }
            _ = try disk.withSnapshots(of: first, extra: 2, retry: false) { snapshots in
                alone = snapshots.map(\.commitID)
            }
            #expect(alone == [first.commitID], "without a retry the scan reads the first snapshot alone")
        }
        #expect(!retried, "with a retry, nothing ran")
    }
}
