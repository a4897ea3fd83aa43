import BoardwalkModel
import BoardwalkStore
import Testing

@testable import BoardwalkQuery

// Listings that keep their first rows (`limit` with no `sort` before it) read the store from its earliest events on,
// in windows of time, and stop; `profile ==` and `profile in` read the profiles' sessions through `session_names`.
// Both against the in-memory source and the reference evaluator on generated queries, over stores written in three
// batches (a group's blocks then overlap in time), checking that the new paths ran and read less than the store.

@Test func listingLimitsAndProfileReadsAgreeWithTheReference() throws {
    let now = Timestamp(microseconds: base + 3 * 86_400 * second)
    var queries = QueryGenerator(seed: 0x11_7175)
    var ran = 0, stopped = 0, stoppedEarly = 0, byProfile = 0, nonEmpty = 0
    for dataset in 0..<24 {
        var generator = SessionGenerator(seed: 0x5709 ^ UInt64(dataset))
        let events = generator.events()
        try withTemporaryStore { store in
            try appendInThreeBatches(events, to: store)
            let stored = try store.read { try $0.events(since: 0) }.map(\.event)
            let memory = InMemoryEventSource(stored)
            let reference = ReferenceEvaluator(now: now)
            let source = StoreEventSource(store)
            for _ in 0..<40 {
                let text = queries.limitQuery()
                let query = try Query.parse(text)
                let expected = try query.run(on: memory, options: .init(now: now))
                let byReference = reference.run(query.checked, stored)
                ran += 1
                if !expected.rows.isEmpty { nonEmpty += 1 }
                guard agree(expected, byReference) else {
                    Issue.record(
                        "dataset \(dataset): \(text)\nmemory:\n\(expected.render(.table))\nreference:\n\(byReference.render(.table))"
                    )
                    return
                }
                for fast in [true, false] {
                    let (table, statistics) = try StoreEventSource.$readsOnlyWhatEventQueriesNeed.withValue(fast) {
                        try query.execute(on: source, options: .init(now: now))
                    }
                    guard agree(table, expected) else {
                        Issue.record(
                            "dataset \(dataset), \(fast ? "cheaper paths" : "full records"): \(text)\nstore:\n\(table.render(.table))\nmemory:\n\(expected.render(.table))"
                        )
                        return
                    }
                    guard fast else { continue }
                    let explained = query.explain(on: source)
                    if explained.contains("\nstop: after the window of time") {
                        stopped += 1
                        if statistics.eventsRead < stored.count { stoppedEarly += 1 }
                    }
                    if explained.contains("through the store's session_names index") {
                        byProfile += text.contains("profile") ? 1 : 0
                        let plan = Plan.make(query.checked, now: now)
                        if let profiles = plan.profiles, plan.sessions == nil {
                            // Only events of sessions with one of the profiles were read.
                            let theirs = Set(stored.filter { $0.profile.map(profiles.contains) == true }.map(\.session))
                            #expect(
                                statistics.eventsRead <= stored.filter { theirs.contains($0.session) }.count, "\(text)")
                        }
                    }
                }
            }
        }
    }
    #expect(ran == 960)
    #expect(nonEmpty > 300, "most generated listings have rows")
    #expect(stopped > 300, "the listings without a named session or profile stopped early")
    #expect(stoppedEarly > 150, "and many read fewer events than the store holds")
    #expect(byProfile > 60, "profile filters read through session_names")
}

/// `events | limit N` on a store whose events span days reads about N events, not the store; `sessions | limit N`
/// reads about N sessions. The rows are the first N in (time, seq) and (started, session) order.
@Test func listingLimitsReadOnlyTheEarliestEvents() throws {
    var events: [Event] = []
    for s in 0..<400 {
        for k in 0..<10 {
            events.append(
                Event(
                    time: Timestamp(microseconds: base + Int64(s) * 10 * minute + Int64(k) * second),
                    session: "s\(s)", profile: "p\(s % 7)", eventID: "e\(s)-\(k)",
                    meta: Meta(onboardingID: "onb_\(s % 3)", screenClientID: "c\(k)", screenIndex: k, totalScreens: 10),
                    payload: .analytics(.screenPresented)))
        }
    }
    try withTemporaryStore { store in
        // Appended newest first: the earliest events are not the first stored.
        for chunk in stride(from: events.count, to: 0, by: -1000) {
            _ = try store.append(Array(events[max(0, chunk - 1000)..<chunk]))
        }
        let source = StoreEventSource(store)
        // Seqs are the store's arrival order.
        let memory = InMemoryEventSource(try store.read { try $0.events(since: 0) }.map(\.event))
        for (text, most) in [
            ("events | limit 5", 200), ("events | select seq, session | limit 1", 200),
            ("events | limit 1 | select seq, profile", 200),
            ("sessions | limit 5", 1_000), ("sessions | where events > 3 | select session, started | limit 3", 1_000),
            (#"events | where onboarding == "onb_2" and screen == 3 | limit 2"#, 200),
        ] {
            let query = try Query.parse(text)
            let (table, statistics) = try query.execute(on: source)
            #expect(table == (try query.run(on: memory)), "\(text)")
            #expect(statistics.eventsRead <= most, "\(text): read \(statistics.eventsRead) of \(events.count)")
            #expect(query.explain(on: source).contains("\nstop: after the window of time"), "\(text)")
        }
        let (profile, statistics) = try Query.parse(#"sessions | where profile == "p3" | count"#).execute(on: source)
        #expect(profile.rows == [[.integer(57)]])
        #expect(statistics.eventsRead == 570)
    }
}
