import BoardwalkModel
import BoardwalkStore
import Testing

@testable import BoardwalkQuery

/// The store folds sessions from its key order (whole store) or its session index (narrowed ranges) without
/// building rows; these sessions are the cases where key order and `(time, seq)` order disagree most: one
/// session in two onboardings, events without a position, back-navigation, equal timestamps, answers rewritten,
/// several outcomes, an analytics name outside the known list.
@Test func storeSessionFoldsAgreeWithTheInMemorySourceOnAwkwardSessions() throws {
    let lost = Payload.analytics(.unknown(name: "navigation_failed"))
    let error = Payload.error(OnboardingError(domain: "webkit", code: 1, message: "m"))
    let events = [
        // s1 starts in onb_2, continues in onb_1, goes back a screen, and errs outside the page.
        ev(0, "s1", screen: 0, onboarding: "onb_2", profile: "p9", started),
        ev(5, "s1", screen: 2, total: 5, onboarding: "onb_2", presented),
        ev(10, "s1", screen: 1, profile: "p1", variation: "b", presented),
        ev(10, "s1", screen: 3, variation: "a", select("experience", "pro")),
        ev(12, "s1", screen: 3, select("experience", "beginner")),
        ev(20, "s1", screen: nil, error),
        ev(30, "s1", screen: 3, .openPaywall(actionID: "p")),
        ev(30, "s1", screen: 2, completedEvent),
        // s2: a screen event only after an event without position, equal timestamps, an unknown name.
        ev(3, "s2", screen: nil, profile: "p2", lost),
        ev(3, "s2", screen: 1, onboarding: "onb_3", multi("interests", ["art", "music"])),
        ev(3, "s2", screen: 0, onboarding: "onb_3", presented),
        ev(50, "s2", screen: 2, onboarding: "onb_3", .close(actionID: "x")),
        // s3: no screen at all.
        ev(7, "s3", screen: nil, error),
    ]
    let queries = [
        "sessions | select session, profile, onboarding, variation, started, ended, duration, events, furthest_screen, last_screen, total_screens, completed, paywall, closed, exit",
        #"sessions | select session, answer("experience"), answer("interests"), did("navigation_failed"), did(error), did(screen_presented), reached(2)"#,
        "sessions | funnel",
        "sessions | funnel by onboarding",
        "sessions | funnel by variation",
        #"sessions | where onboarding == "onb_2" | funnel"#,
        #"sessions | where onboarding == "onb_1" | count"#,
        #"sessions | where onboarding == "onb_2" | select session, onboarding, events, exit"#,
        #"sessions | where onboarding in ["onb_1", "onb_3"] | count by exit"#,
        #"sessions | count by answer("interests")"#,
        "sessions | stats count(), p50(duration), avg(events) by exit",
        "sessions | where started >= @2026-11-01T10:00:04Z | select session, events",
        "sessions | where furthest_screen >= 2 | select session, furthest_screen",
    ]
    try withTemporaryStore { store in
        _ = try store.append(events)
        let stored = try store.read { try $0.events(since: 0) }
        let memory = InMemoryEventSource(stored.map(\.event))
        // Whole onboardings both ways: scanned with their events without a position, and through the index.
        let disk = StoreEventSource(store)
        for text in queries {
            let query = try Query.parse(text)
            let b = try query.run(on: memory, options: .init(now: Timestamp(microseconds: base + 86_400 * second)))
            #expect(!b.rows.isEmpty, "\(text) returned nothing: the case proves nothing")
            for ratio in [0, Double.infinity] {
                let a = try StoreEventSource.$onboardingScanRatio.withValue(ratio) {
                    try query.run(on: disk, options: .init(now: Timestamp(microseconds: base + 86_400 * second)))
                }
                #expect(a == b, "\(text)\nstore:\n\(a.render(.table))\nmemory:\n\(b.render(.table))")
            }
        }
    }
}

@Test func storeExplainSaysHowSessionsAreRead() throws {
    try withTemporaryStore { store in
        _ = try store.append([ev(0, "s1", started), ev(1, "s1", screen: 1, presented)])
        let source = StoreEventSource(store)
        let whole = try Query.parse("sessions | funnel")
        #expect(
            whole.explain(on: source).hasPrefix(
                "read: every event once in key order, folded into per-session summaries"))
        let (_, statistics) = try whole.execute(on: source)
        #expect(statistics.sessionsRead == 1)
        #expect(statistics.eventsRead == 2)
        // More custom steps than a fold's step mask holds: those still read whole sessions (gathered or through the index).
        let steps = try Query.parse(
            "sessions | funnel "
                + Array(repeating: "screen_presented", count: StepEvent.maxSteps + 1).joined(separator: ", "))
        #expect(
            steps.explain(on: source).contains(
                "gathered by scanning their onboardings' keys, a window of sessions at a time, when that scans at most twice their events, else through the session index"
            ))
        let one = try Query.parse(#"sessions | where onboarding == "onb_1" | funnel"#)
        #expect(one.explain(on: source).contains("through the store's session index"))
    }
}

/// `sessions | count` reads the store's session counter: the same number as counting the sessions folded from
/// every event (forced here by a filter that keeps every session), with explicit, inferred and spanning sessions.
@Test func sessionCountComesFromTheStoresCounter() throws {
    var generator = SessionGenerator(seed: 0xC0_0174)
    var events = generator.events() + generator.events()
    // A session in two onboardings and one with an event without a position: each is one session.
    events += [
        ev(0, "span", screen: 0, onboarding: "onb_1", started),
        ev(5, "span", screen: 1, onboarding: "onb_2", presented),
        ev(7, "lost", screen: nil, .error(OnboardingError(domain: "webkit", code: 1, message: "m"))),
        ev(8, "lost", screen: 0, onboarding: "onb_1", presented),
    ]
    try withTemporaryStore { store in
        _ = try store.append(events)
        let source = StoreEventSource(store)
        let count = try Query.parse("sessions | count")
        #expect(count.explain(on: source).hasPrefix("read: the store's count of distinct sessions (meta), no event"))
        let (table, statistics) = try count.execute(on: source)
        #expect(statistics.eventsRead == 0)
        guard case .integer(let n)? = table.rows.first?.first else { Issue.record("no count: \(table.rows)"); return }
        #expect(n >= 2)
        let folded = try Query.parse("sessions | where events >= 1 | count").run(on: source)
        #expect(folded.column("count") == table.column("count"))
        #expect(
            try Query.parse("sessions | count").run(
                on: InMemoryEventSource(try store.read { try $0.events(since: 0) }.map(\.event))
            )
            .column("count") == table.column("count"))
        // Table stages still apply.
        #expect(try Query.parse("sessions | count | where count > 1000000").run(on: source).rows.isEmpty)
    }
}
