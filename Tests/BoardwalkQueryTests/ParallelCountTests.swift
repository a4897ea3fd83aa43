import BoardwalkGenerator
import BoardwalkModel
import BoardwalkStore
import Dispatch
import Testing

@testable import BoardwalkQuery

// Counts by event fields split across threads: the same answers at every thread count and part size, read from
// transactions of one commit, and a cancelled count that returns with no worker left running.

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

/// Generated counts (and, a quarter of the time, any generated query) over generated stores written in three
/// batches: the store's answer at 2 threads and at a random 3 to 8, with parts of a few events, is the in-memory
/// source's (itself checked against the reference evaluator elsewhere) and the one-thread answer.
@Test func parallelCountsAgreeWithOneThreadAndTheInMemorySource() throws {
    var queries = QueryGenerator(seed: 0x7_4EAD)
    var rng = SplitMix64(seed: 0x7_4EAD)
    let probe = ParallelProbe()
    var ran = 0, split = 0
    for dataset in 0..<20 {
        let now = Timestamp(microseconds: base + 3 * 86_400 * second)
        var generator = SessionGenerator(seed: 0x7_4EAD ^ UInt64(dataset))
        let events = generator.events()
        try withTemporaryStore { store in
            let cuts = [0, events.count / 3, 2 * events.count / 3, events.count]
            for i in 0..<3 where cuts[i] < cuts[i + 1] { _ = try store.append(Array(events[cuts[i]..<cuts[i + 1]])) }
            let stored = try store.read { try $0.events(since: 0) }.map(\.event)
            let memory = InMemoryEventSource(stored)
            let disk = StoreEventSource(store)
            for n in 0..<30 {
                let text = n % 4 == 3 ? queries.query() : countQuery(&queries)
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
    let counts = probe.counts
    #expect(ran == 600)
    #expect(split > 200, "many generated counts ran split across threads (\(split))")
    #expect(counts.started == counts.finished, "every worker returned")
    #expect(counts.parts >= 3 * counts.scans, "each split count read several parts")
}

/// Sessions of `events` events each across two onboardings, one event a second, for the scans that need volume.
private func manyEvents(sessions: Int, events: Int) -> [Event] {
    var out: [Event] = []
    out.reserveCapacity(sessions * events)
    for s in 0..<sessions {
        let onboarding = s % 3 == 0 ? "onb_2" : "onb_1"
        for e in 0..<events {
            let payload = e == 0 ? started : (e % 2 == 0 ? presented : select("goal", "g\(e % 4)"))
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
        let query = try Query.parse("events | count by name, onboarding")
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
