import BoardwalkModel
import BoardwalkStore
import Foundation
import Testing

@testable import BoardwalkQuery

/// A new, empty temporary directory of its own (`mkdtemp`), for one test's store.
func temporaryStoreDirectory() throws -> String {
    let base = FileManager.default.temporaryDirectory.appendingPathComponent("boardwalk-query-tests")
    try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
    var template = Array(base.appendingPathComponent("t-XXXXXX").path.utf8CString)
    return String(cString: template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }!)
}

/// A fresh store in its own temporary directory (tests run in parallel; LMDB forbids opening one env twice).
func withTemporaryStore<R>(_ body: (Store) throws -> R) throws -> R {
    let directory = try temporaryStoreDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let store = try Store.open(at: directory, options: .init(durability: .noSync))
    defer { store.close() }
    return try body(store)
}

/// The store's paths against the in-memory source (itself checked against `ReferenceEvaluator`) on 1 040 generated
/// queries over 26 generated stores, each query run four ways on the store (onboardings scanned; sessions through
/// the index in batches of the default size and of a few events; sessions gathered from scans), two of them with
/// scans split across threads in parts of a few events.
@Test func storeSourceAgreesWithTheInMemorySource() throws {
    var queries = QueryGenerator(seed: 21)
    var ran = 0
    // A third of the datasets straddle Berlin's clock change and a third New York's, for the time buckets.
    let starts: [Int64] = [base, 1_792_886_400_000_000, 1_793_491_200_000_000]
    for dataset in 0..<26 {
        let start = starts[dataset % starts.count]
        let now = Timestamp(microseconds: start + 3 * 86_400 * second)
        var generator = SessionGenerator(seed: 0x5707E ^ UInt64(dataset), start: start)
        // Events without ids would be inferred in arrival order by the store and in time order in memory; both
        // sources are compared on what the store kept (sessions assigned, arrival seqs).
        let events = generator.events()
        try withTemporaryStore { store in
            _ = try store.append(events)
            let stored = try store.read { try $0.events(since: 0) }
            #expect(stored.map(\.seq) == Array(0..<UInt64(stored.count)), "store seqs are 0-based arrival numbers")
            let memory = InMemoryEventSource(stored.map(\.event))
            // Whole onboardings are read both ways the store source can: scanned, and through the session index.
            let disk = StoreEventSource(store)
            for n in 0..<40 {
                let text = n % 4 == 3 ? queries.bucketedQuery() : queries.query()
                let query = try Query.parse(text)
                let b = try query.run(on: memory, options: .init(now: now))
                ran += 1
                // Sessions read through the index in batches of the default size, and in batches of a few events.
                // And sessions' events gathered from onboarding scans, in windows of about 50 events.
                // Each way on one thread, and on 2 to 5 threads with counts split into parts of an event or more.
                for (ratio, references, gather, threads) in [
                    (0, Snapshot.defaultSessionBatchReferences, 0, 1),
                    (Double.infinity, Snapshot.defaultSessionBatchReferences, 0, 2),
                    (Double.infinity, 7, 0, 2 + n % 4), (Double.infinity, 7, Double.infinity, 1),
                ] {
                    let a = try StoreEventSource.$onboardingScanRatio.withValue(ratio) {
                        try StoreEventSource.$sessionBatchReferences.withValue(references) {
                            try StoreEventSource.$gatherRatio.withValue(gather) {
                                try StoreEventSource.$gatherBudget.withValue(50) {
                                    try StoreEventSource.$minimumPartEvents.withValue(threads > 1 ? 1 + n % 3 : 1 << 16)
                                    {
                                        try query.run(on: disk, options: .init(now: now, threads: threads))
                                    }
                                }
                            }
                        }
                    }
                    if !agree(a, b) {
                        Issue.record(
                            "dataset \(dataset), \(threads) threads: \(text)\nstore:\n\(a.render(.table))\nmemory:\n\(b.render(.table))"
                        )
                        return
                    }
                }
            }
        }
    }
    #expect(ran == 1_040, "the store path sees at least the 1 000 generated queries the reference sees")
}

@Test func storeInfersSessionsLikeTheInMemorySourceForEventsInTimeOrder() throws {
    let events = [
        ev(0, nil, profile: "p", .onboardingLoaded), ev(1, nil, profile: "p", started),
        ev(60, nil, profile: "p", presented), ev(60 + 30 * 60, nil, profile: "p", presented),
        ev(5000, nil, profile: "p", started), ev(5001, nil, profile: "q", presented),
    ]
    let q = try Query.parse("sessions | select session, events")
    let expected = try q.run(on: InMemoryEventSource(events))
    #expect(expected.column("events") == [.integer(3), .integer(1), .integer(1), .integer(1)])
    try withTemporaryStore { store in
        _ = try store.append(events)
        #expect(try q.run(on: StoreEventSource(store)) == expected)
    }
}

@Test func storePlanReadsOnlyItsKeyRanges() throws {
    try withTemporaryStore { store in
        _ = try store.append(story)
        let source = StoreEventSource(store)
        let q = try Query.parse(
            #"events | where onboarding == "onb_1" and screen >= 2 and time >= @2026-11-01 | count by screen, element"#)
        #expect(
            q.explain(on: source).contains(
                #"range onboarding="onb_1" screen=[2, 65534] time=[2026-11-01T00:00:00.000000Z, +inf]"#))
        let (table, statistics) = try q.execute(on: source)
        #expect(statistics.eventsRead == 4)
        #expect(table == (try q.run(on: InMemoryEventSource(story))))
        let funnel = try Query.parse(#"sessions | where onboarding == "onb_2" | funnel"#)
        let (_, funnelStatistics) = try funnel.execute(on: source)
        #expect(funnelStatistics.sessionsRead == 1)
        #expect(funnelStatistics.eventsRead == 1)
        let completedInOnb1 = try Query.parse(#"sessions | where onboarding == "onb_1" and completed | count"#)
        #expect(try completedInOnb1.run(on: source).rows == [[.integer(1)]])
        #expect(funnel.explain(on: source).contains("through the store's session index"))
    }
}

/// `session ==` and `session in [...]` read the named sessions through the session index: the events read are
/// theirs, not the ranges', and the results are the in-memory source's, listings in the same order.
@Test func namedSessionsAreReadThroughTheSessionIndex() throws {
    var generator = SessionGenerator(seed: 0x5E55)
    var events: [Event] = []
    while Set(events.compactMap(\.session)).count < 8 { events = generator.events() }
    try withTemporaryStore { store in
        _ = try store.append(events)
        let stored = try store.read { try $0.events(since: 0) }.map(\.event)
        let memory = InMemoryEventSource(stored)
        let source = StoreEventSource(store)
        let names = Array(Set(stored.compactMap(\.session))).sorted()
        let (a, b) = (names[1], names[4])
        let ofA = stored.filter { $0.session == a }.count, ofB = stored.filter { $0.session == b }.count
        let queries: [(text: String, eventsRead: Int)] = [
            (#"events | where session == "\#(a)" | count by name"#, ofA),
            (
                #"events | where session in ["\#(b)", "\#(a)", "nobody"] | select time, seq, session, screen, name"#,
                ofA + ofB
            ),
            (
                #"events | where session == "\#(a)" and screen >= 1 | count"#,
                stored.filter { $0.session == a && ($0.meta?.screenIndex ?? 0) >= 1 }.count
            ),
            (#"events | where session == "\#(a)" and session == "\#(b)" | count"#, 0),
            (#"events | where session == "nobody" | count"#, 0),
            (#"sessions | where session in ["\#(a)", "\#(b)"] | select session, events, duration, exit"#, ofA + ofB),
            (#"sessions | where session == "\#(b)" | funnel"#, ofB),
            (#"sessions | where session == "\#(a)" and onboarding == "onb_9" | count"#, 0),
            (#"events | where session == "\#(b)" | stats p50(dwell), count() by screen"#, ofB),
        ]
        for (text, eventsRead) in queries {
            let query = try Query.parse(text)
            let (table, statistics) = try query.execute(on: source)
            #expect(agree(table, try query.run(on: memory)), "\(text)\nstore:\n\(table.render(.table))")
            #expect(statistics.eventsRead == eventsRead, "\(text)")
            #expect(
                query.explain(on: source).contains("named by the filters, through the store's session_names index"),
                "\(text)"
            )
        }
        // Listed events come out in the store's key order, as a scan gives them.
        let listing = try Query.parse(#"events | where session in ["\#(a)", "\#(b)"] | select seq"#)
        let scanned = try Query.parse(#"events | where session in ["\#(a)", "\#(b)"] or seq < 0 | select seq"#)
        #expect(try listing.run(on: source) == (try scanned.run(on: source)))
        #expect(!scanned.explain(on: source).contains("named by the filters"))
    }
}

@Test func emptyIdsAreAbsentInBothSources() throws {
    // Rule 11: Android's "" session, element id and reply mean absent. Two profiles sending "" as their
    // session are two inferred sessions, not one, and an empty element id is no element.
    let completedEmpty = Payload.analytics(.screenCompleted(elementID: "", reply: ""))
    let events = [
        ev(0, "", profile: "p", started), ev(1, "", profile: "p", completedEmpty),
        ev(2, "", profile: "q", started), ev(3, "", profile: "q", completedEmpty),
    ]
    let sessions = try Query.parse("sessions | count")
    let elements = try Query.parse("events | where name == \"screen_completed\" | count by element")
    let memorySessions = try sessions.run(on: InMemoryEventSource(events))
    let memoryElements = try elements.run(on: InMemoryEventSource(events))
    #expect(memorySessions.column("count") == [.integer(2)])
    #expect(memoryElements.column("element") == [.null])
    try withTemporaryStore { store in
        _ = try store.append(events)
        #expect(try sessions.run(on: StoreEventSource(store)) == memorySessions)
        #expect(try elements.run(on: StoreEventSource(store)) == memoryElements)
    }
}

/// `scanSessions` over the store (sessions read through the session index in batches) hands out the same
/// sessions as the in-memory source, each with the same events in (time, seq) order, for ranges narrowed by time
/// or screen, several ranges at once, and whole onboardings; and in the store's order: first seen by the store's
/// own scan of the ranges in key order (the two sources order onboardings differently: by interned id, by
/// string), or, for whole onboardings, as `onboarding_sessions` lists them. Batches from one event to the default.
@Test func storeScanSessionsAgreesWithTheInMemorySource() throws {
    func read<S: EventSource>(_ source: S, _ ranges: [ScanRange]) throws -> [(session: String, seqs: [UInt64])] {
        var out: [(String, [UInt64])] = []
        try source.scanSessions(ranges) { (session, rows) throws(QueryError) -> Bool in
            out.append((session, rows.map(\.seq)))
            return true
        }
        return out
    }
    var compared = 0, sessions = 0
    for dataset in 0..<4 {
        var generator = SessionGenerator(seed: 0x5E55 ^ UInt64(dataset))
        let events = generator.events()
        try withTemporaryStore { store in
            _ = try store.append(events)
            let stored = try store.read { try $0.events(since: 0) }
            #expect(stored.map(\.seq) == Array(0..<UInt64(stored.count)))
            let memory = InMemoryEventSource(stored.map(\.event))
            let disk = StoreEventSource(store)
            let onboardings = Set(stored.compactMap { $0.event.meta?.onboardingID }).sorted()
            let times = stored.map { $0.event.time.microseconds }.sorted()
            let (early, mid) = (times[times.count / 4], times[times.count / 2])
            let scanned: [[ScanRange]] = [
                [ScanRange()],
                [ScanRange(time: mid...Int64.max)],
                [ScanRange(screens: 1...2)],
                [ScanRange(onboarding: onboardings[0], time: early...mid)],
                [
                    ScanRange(onboarding: onboardings[0], screens: 2...3), ScanRange(time: early...mid),
                    ScanRange(screens: 0...0),
                ],
            ]
            let wholeOnboardings: [[ScanRange]] = [
                [ScanRange(onboarding: onboardings[0])],
                [ScanRange(onboarding: onboardings.last!), ScanRange(onboarding: onboardings[0])],
            ]
            for ranges in scanned + wholeOnboardings {
                // The store's order.
                var order: [String] = []
                if wholeOnboardings.contains(ranges) {
                    try store.read { s in
                        for range in ranges {
                            for session in try s.sessions(ofOnboarding: range.onboarding!)
                            where !order.contains(session.session) {
                                order.append(session.session)
                            }
                        }
                    }
                } else {
                    for range in ranges {
                        try disk.scanEvents(range) { (row: StoreEventRow) throws(QueryError) -> Bool in
                            if case .string(let session) = row.value(.session), !order.contains(session) {
                                order.append(session)
                            }
                            return true
                        }
                    }
                }
                let expected = try read(memory, ranges).sorted { $0.session < $1.session }
                #expect(expected.map(\.session) == order.sorted())
                sessions += expected.count
                // Through the session index in batches, and gathered from onboarding scans in windows (with the
                // spanning sessions through the index) from one session's events to the default.
                let ways =
                    [1, 5, 64, Snapshot.defaultSessionBatchReferences].map { (0.0, $0, 1) }
                    + [1, 7, 200, StoreEventSource.gatherBudget].map { (Double.infinity, 5, $0) }
                for (ratio, references, budget) in ways {
                    let got = try StoreEventSource.$gatherRatio.withValue(ratio) {
                        try StoreEventSource.$gatherBudget.withValue(budget) {
                            try StoreEventSource.$sessionBatchReferences.withValue(references) {
                                try read(disk, ranges)
                            }
                        }
                    }
                    let way = ratio == 0 ? "batches of \(references)" : "gathered in windows of \(budget)"
                    #expect(got.map(\.session) == order, "\(ranges), \(way)")
                    #expect(got.sorted { $0.session < $1.session }.elementsEqual(expected, by: ==), "\(ranges), \(way)")
                    compared += 1
                }
            }
        }
    }
    #expect(compared == 4 * 7 * 8)
    #expect(sessions > 100)
}

/// Filters compare strings as Swift does (canonical equivalence: `"caf\u{E9}" == "cafe\u{301}"`), the store finds a
/// name by its bytes: a name with another spelling (non-ASCII, or `K`, `;`, `` ` ``, each equal to a non-ASCII
/// character) is checked on every row instead of naming the sessions to read, and the answers stay the scan's
/// (the index path, by bytes, would find none of them).
@Test func namedSessionsWithAnotherSpellingAreScannedLikeAnyFilter() throws {
    let cases = [("caf\u{E9}", "cafe\u{301}"), ("\u{212A}ey", "Key"), ("a\u{37E}b", "a;b"), ("x\u{1FEF}", "x`")]
    for (stored, typed) in cases { #expect(stored == typed) }
    var events: [Event] = []
    for (i, (stored, _)) in cases.enumerated() {
        events += [
            ev(Double(i) * 10, stored, screen: 0, started), ev(Double(i) * 10 + 5, stored, screen: 1, presented),
        ]
    }
    events.append(ev(90, "other", screen: 0, started))
    try withTemporaryStore { store in
        _ = try store.append(events)
        let source = StoreEventSource(store), memory = InMemoryEventSource(events)
        for (_, typed) in cases {
            for text in [
                #"events | where session == "\#(typed)" | count"#, #"sessions | where session == "\#(typed)" | count"#,
                #"events | where session in ["\#(typed)", "other"] | count by session"#,
            ] {
                let query = try Query.parse(text)
                #expect(!query.explain(on: source).contains("named by the filters"), "\(text)")
                let answer = try query.run(on: source)
                #expect(answer == (try query.run(on: memory)), "\(text)")
                #expect(answer.rows.first?.last != .integer(0), "\(text) found nothing")
            }
        }
        // A plain ASCII name narrows.
        #expect(
            try Query.parse(#"events | where session == "other" | count"#).explain(on: source).contains(
                "named by the filters"))
        #expect(Plan.hasOneSpelling("3f2b9c1e-7d4a-4e5b-9c6d-0a1b2c3d4e5f") && !Plan.hasOneSpelling("Kate"))
    }
}
