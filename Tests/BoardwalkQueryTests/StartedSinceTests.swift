import BoardwalkModel
import BoardwalkStore
import Testing

@testable import BoardwalkQuery

/// `sessions | where started >= t` folds its sessions from scans from `t` on: sessions whose first stored event
/// is before `t` are left out from `onboarding_sessions`, and those with an event before `t` that came in later
/// (a late batch) from the batches stored since. Every answer must be the session index path's and the in-memory
/// source's.
@Suite struct StartedSinceTests {
    static let hour = 3600.0
    /// 2026-11-01T20:00:00Z: ten hours after `base`.
    static let cutoff = "@2026-11-01T20:00:00Z"
    let error = Payload.error(OnboardingError(domain: "webkit", code: 1, message: "m"))

    /// Batches in arrival order.
    var batches: [[Event]] {
        let h = StartedSinceTests.hour
        return [
            // Long before the cutoff.
            [ev(0, "old", screen: 0, started), ev(0.5 * h, "old", screen: 1, presented)],
            [
                // Started before the cutoff, goes on after it: its first stored event says so.
                ev(9.5 * h, "straddle", screen: 0, started), ev(10.5 * h, "straddle", screen: 1, presented),
                ev(11 * h, "fresh", screen: 0, started), ev(11 * h + 60, "fresh", screen: 1, presented),
                ev(11 * h + 120, "fresh", screen: 3, completedEvent),
                // First stored after the cutoff; an earlier event comes later (below).
                ev(11 * h, "late", screen: 1, presented), ev(11.2 * h, "late", screen: 2, presented),
                ev(12 * h, "late2", screen: 0, started),
                // In two onboardings, after the cutoff.
                ev(11.5 * h, "span", screen: 0, started),
                ev(11.6 * h, "span", screen: 1, onboarding: "onb_2", presented),
                // After the cutoff, with an event without a position.
                ev(11.7 * h, "nopos", screen: 0, started), ev(11.8 * h, "nopos", screen: nil, error),
                // Only events without a position.
                ev(12.5 * h, "bare", screen: nil, error),
                ev(12 * h, "other", screen: 0, onboarding: "onb_2", started),
            ],
            // Late arrivals: far before the cutoff (a block of their own, more than a block span, 12 h, before it)
            // and just before it (the blocks a scan from the cutoff opens, whose earlier events it skips).
            [ev(-3 * h, "late", screen: 0, started)],
            [ev(9.9 * h, "late2", screen: 0, presented)],
            // A late arrival of a session that started before the cutoff anyway.
            [ev(1 * h, "straddle", screen: 2, presented)],
        ]
    }

    var events: [Event] { batches.flatMap { $0 } }

    /// The query on the store by scans from the cutoff and by the session index; both must agree, and with the
    /// in-memory source when `ordered` (a listing's order is the store's).
    func check(_ text: String, _ store: Store, againstMemory: Bool = true) throws -> ResultTable {
        let query = try Query.parse(text)
        let scanned = try query.run(on: StoreEventSource(store))
        let indexed = try StoreEventSource.$onboardingScanRatio.withValue(.infinity) {
            try query.run(on: StoreEventSource(store))
        }
        #expect(scanned == indexed, "\(text)\nscans:\n\(scanned.render(.table))\nindex:\n\(indexed.render(.table))")
        if againstMemory {
            let memory = try query.run(on: InMemoryEventSource(events))
            #expect(scanned == memory, "\(text)\nscans:\n\(scanned.render(.table))\nmemory:\n\(memory.render(.table))")
        }
        return scanned
    }

    @Test func theExplainSaysTheScanStartsAtTheCutoff() throws {
        try withTemporaryStore { store in
            for batch in batches { _ = try store.append(batch) }
            let plan = try Query.parse("sessions | where started >= \(Self.cutoff) | count | explain").run(
                on: StoreEventSource(store))
            let text = plan.render(.table)
            #expect(text.contains("first event stored in the onboarding is at or after the range's start"), "\(text)")
        }
    }

    @Test func sessionsWithALateEarlierEventAreNotCountedAsStartedAfterTheCutoff() throws {
        try withTemporaryStore { store in
            for batch in batches { _ = try store.append(batch) }
            let rows = try check(
                "sessions | where started >= \(Self.cutoff) | select session, events | sort session", store)
            #expect(rows.column("session") == ["bare", "fresh", "nopos", "other", "span"].map { .string($0) })
            #expect(rows.column("events") == [1, 3, 2, 1, 2].map { .integer($0) })
            let one = try check(
                #"sessions | where started >= \#(Self.cutoff) and onboarding == "onb_1" | select session | sort session"#,
                store)
            #expect(one.column("session") == ["fresh", "nopos", "span"].map { .string($0) })
            _ = try check("sessions | where started > \(Self.cutoff) | count", store)
            _ = try check("sessions | where started >= \(Self.cutoff) | funnel", store)
            _ = try check(
                #"sessions | where started >= \#(Self.cutoff) and onboarding in ["onb_1", "onb_2"] | count by onboarding"#,
                store)
            _ = try check(
                "sessions | where started >= \(Self.cutoff) | stats count(), rate(completed), p50(duration) by onboarding",
                store)
            _ = try check("sessions | where started >= @2026-11-01T10:30:00Z | count", store)
            #expect(try store.check().isOK)
        }
    }

    @Test func aListingComesInTheIndexPathsOrder() throws {
        try withTemporaryStore { store in
            for batch in batches { _ = try store.append(batch) }
            // No sort: the order the sessions are delivered in.
            _ = try check(
                "sessions | where started >= \(Self.cutoff) | select session, started, furthest_screen", store,
                againstMemory: false)
            _ = try check(
                "sessions | where started >= @2026-11-01T09:00:00Z | select session, events", store,
                againstMemory: false)
        }
    }

    /// A custom funnel whose step events pass their budget while the sessions read through the index are folded
    /// is read again as rows: nothing may have been delivered before (else a session is counted twice, in a scan
    /// from a time on and in a whole onboarding's scan alike).
    @Test(arguments: [
        #"sessions | where started >= @2026-11-01T10:00:00Z and onboarding == "onb_1" | funnel screen_presented"#,
        #"sessions | where onboarding == "onb_1" | funnel screen_presented"#,
    ])
    func aFunnelOverItsBudgetCountsEachSessionOnce(_ text: String) throws {
        let events = [
            // s1: onb_1, then an error outside the page (read through the index); s3 also in onb_2.
            ev(100, "s1", screen: 0, started), ev(110, "s1", screen: 1, presented), ev(120, "s1", screen: nil, error),
            ev(100, "s2", screen: 0, started),
            ev(100, "s3", screen: 0, started), ev(110, "s3", screen: 1, onboarding: "onb_2", presented),
        ]
        try withTemporaryStore { store in
            _ = try store.append(events)
            let query = try Query.parse(text)
            let memory = try query.run(on: InMemoryEventSource(events))
            #expect(memory.column("sessions") == [.integer(2)])
            for ratio in [0, Double.infinity] {
                let disk = try StepTests.$budgetOverride.withValue(0) {
                    try StoreEventSource.$onboardingScanRatio.withValue(ratio) {
                        try query.run(on: StoreEventSource(store))
                    }
                }
                #expect(disk == memory, "ratio \(ratio): \(text)\n\(disk.render(.table))")
            }
        }
    }

    /// A session whose first event has a clock far ahead, stored before everything else, would start the pass
    /// over late arrivals at seq 0 (reading every block of the scope); the sessions met by the
    /// lowest seqs are read through the index instead. Bound to move them always, the answers stay the same.
    @Test func sessionsMetByFarLowerSeqsAreReadThroughTheIndex() throws {
        let h = StartedSinceTests.hour
        var events = [ev(40 * h, "skewed", screen: 0, started)]  // the far-future clock, stored first
        for i in 0..<150 {
            let t = Double(i) * 0.1 * h
            events += [ev(t, "s\(i)", screen: 0, started), ev(t + 60, "s\(i)", screen: 1, presented)]
        }
        try withTemporaryStore { store in
            _ = try store.append([events[0]])
            for chunk in stride(from: 1, to: events.count, by: 40) {
                _ = try store.append(Array(events[chunk..<min(chunk + 40, events.count)]))
            }
            // Late arrivals: an earlier event of a session that started after the cutoff, and of the skewed one.
            let late = [ev(9 * h, "s120", screen: 2, presented), ev(2 * h, "skewed", screen: 1, presented)]
            _ = try store.append(late)
            for text in [
                "sessions | where started >= \(Self.cutoff) | select session, events",
                "sessions | where started >= \(Self.cutoff) | funnel",
            ] {
                let query = try Query.parse(text)
                let moved = try StoreEventSource.$lateArrivalSeqsPerIndexRead.withValue(0) {
                    try query.run(on: StoreEventSource(store))
                }
                let indexed = try StoreEventSource.$onboardingScanRatio.withValue(.infinity) {
                    try query.run(on: StoreEventSource(store))
                }
                #expect(moved == indexed, "\(text)\nmoved:\n\(moved.render(.table))\nindex:\n\(indexed.render(.table))")
                #expect(try query.run(on: StoreEventSource(store)) == indexed)
            }
            let kept = try Query.parse("sessions | where started >= \(Self.cutoff) | count").run(
                on: StoreEventSource(store))
            // Sessions s100...s149 start at or after 10 h; s120 has a late event before it, and so does "skewed".
            #expect(kept.column("count") == [.integer(49)])
        }
    }

    /// Split across threads in parts of a few events, scans from a time on give one thread's answers (late arrivals,
    /// spanning sessions, listings, funnels) and the in-memory source's, and the probe says they split.
    @Test func scansFromATimeOnSplitAcrossThreadsAgreeWithOneThread() throws {
        try withTemporaryStore { store in
            for batch in batches { _ = try store.append(batch) }
            let probe = ParallelProbe()
            for text in [
                "sessions | where started >= \(Self.cutoff) | select session, started, furthest_screen",
                "sessions | where started >= \(Self.cutoff) | count by onboarding, exit",
                "sessions | where started >= \(Self.cutoff) | funnel",
                "sessions | where started >= @2026-11-01T09:00:00Z | stats avg(duration), count() by completed",
                "sessions | where started >= @2026-11-01T10:30:00Z and onboarding == \"onb_1\" | funnel by exit",
            ] {
                let query = try Query.parse(text)
                let serial = try query.run(on: StoreEventSource(store), options: .init(threads: 1))
                let memory = try query.run(on: InMemoryEventSource(events))
                #expect(agree(serial, memory), "\(text)\n\(serial.render(.table))\n\(memory.render(.table))")
                for threads in [2, 3, 5] {
                    let split = try StoreEventSource.$minimumPartEvents.withValue(1) {
                        try StoreEventSource.$parallelProbe.withValue(probe) {
                            try query.run(on: StoreEventSource(store), options: .init(threads: threads))
                        }
                    }
                    #expect(split == serial, "\(threads) threads: \(text)\n\(split.render(.table))")
                }
            }
            #expect(probe.counts.folds >= 15, "every run split: \(probe.counts)")
        }
    }

    /// Split, a scan from a time on delivers its sessions in the order one scan meets them: the scope's onboardings
    /// by id, then each one's keys, not their times. Two onboardings and two variations spelled apart but equal as
    /// strings each keep the spelling of the session met first, although the other spelling's session starts earlier.
    @Test func splitScansFromATimeOnDeliverInOneScansOrder() throws {
        let h = StartedSinceTests.hour
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        var events: [Event] = []
        // The composed onboarding is interned first (a lower id): its sessions come first in one scan's order, though
        // they start later than the decomposed onboarding's.
        for i in 0..<30 {
            let at = 11 * h + Double(i) * 60
            events.append(
                ev(at + 3600, "a\(i)", screen: 0, onboarding: "onb_" + composed, variation: composed, started))
            events.append(ev(at + 3660, "a\(i)", screen: 1, onboarding: "onb_" + composed, presented))
        }
        for i in 0..<30 {
            let at = 11 * h + Double(i) * 60
            events.append(ev(at, "b\(i)", screen: 0, onboarding: "onb_" + decomposed, variation: decomposed, started))
            events.append(ev(at + 60, "b\(i)", screen: 1, onboarding: "onb_" + decomposed, presented))
        }
        try withTemporaryStore { store in
            _ = try store.append(events)
            for text in [
                "sessions | where started >= \(Self.cutoff) | count by onboarding",
                "sessions | where started >= \(Self.cutoff) | count by variation",
                "sessions | where started >= \(Self.cutoff) | funnel by onboarding",
            ] {
                let query = try Query.parse(text)
                let serial = try query.run(on: StoreEventSource(store), options: .init(threads: 1))
                #expect(serial.render(.table).contains(composed), "\(text): the first scanned session's spelling")
                let probe = ParallelProbe()
                let split = try StoreEventSource.$minimumPartEvents.withValue(1) {
                    try StoreEventSource.$parallelProbe.withValue(probe) {
                        try query.run(on: StoreEventSource(store), options: .init(threads: 3))
                    }
                }
                #expect(probe.counts.folds == 1, "\(text): split")
                #expect(
                    Array(split.render(.table).utf8) == Array(serial.render(.table).utf8),
                    "\(text)\n\(split.render(.table))\n\(serial.render(.table))")
            }
        }
    }
}
