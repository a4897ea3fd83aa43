import BoardwalkModel
import BoardwalkStore
import Testing

@testable import BoardwalkQuery

/// An `events` query that reads its events' session properties on the store folds the sessions its ranges meet,
/// for the named properties only, then reads the events as an `events` query does: the answers are those of the
/// in-memory source (which summarizes each session from its rows), whatever narrows the read.
@Suite struct SessionPropertiesReadApartTests {
    /// Session A completes in onb_1; B spans onb_1 and onb_2 and completes in onb_2, after the time bound; C never
    /// completes and answers `level`; D has events before and after the time bound.
    var events: [Event] {
        [
            ev(0, "A", screen: 0, started), ev(5, "A", screen: 1, presented), ev(9, "A", screen: 1, completedEvent),
            ev(1, "B", screen: 0, presented), ev(7200, "B", screen: 2, onboarding: "onb_2", completedEvent),
            ev(2, "C", screen: 0, presented), ev(3, "C", screen: 1, select("level", "pro")),
            ev(4, "D", screen: 0, presented), ev(4000, "D", screen: 2, presented),
            ev(4100, "D", screen: 3, completedEvent),
        ]
    }

    static let queries = [
        #"events | where onboarding == "onb_1" and name == "screen_presented" and session.completed | count by screen"#,
        #"events | where onboarding == "onb_1" and session.answer("level") == "pro" | count"#,
        #"events | where screen >= 1 and session.exit == "completed" | count by session, screen"#,
        // From a time on: the sessions of such events are still whole (D completed after the bound, A before it).
        #"events | where time >= @2026-11-01T10:30:00Z and session.completed | count by session"#,
        #"events | where time >= @2026-11-01T10:30:00Z and time < @2026-11-01T12:00:00Z | count by session.completed"#,
        #"events | where session.variation is absent | stats count(), count_distinct(session) by session.completed"#,
        #"events | where onboarding == "onb_2" | select session, session.furthest_screen, name"#,
        // Counts by coded fields over whole onboardings: with outcomes, with none, with answers (a full fold), over
        // two onboardings, and with a time comparison.
        #"events | where onboarding in ["onb_1", "onb_2"] and session.completed | count by name, screen"#,
        #"events | where onboarding == "onb_1" and session.variation is absent | count by kind, screen"#,
        #"events | where onboarding == "onb_1" and session.answer("level") is absent | count by session"#,
        #"events | where onboarding == "onb_1" and time < @2026-11-01T10:00:03Z and session.completed | count"#,
        #"events | where onboarding == "onb_1" and not session.completed | top 2 name"#,
    ]

    /// `text` run on a store holding `events` and on the in-memory source, and its plan on the store.
    func answers(_ text: String, on events: [Event]) throws -> (store: ResultTable, memory: ResultTable, plan: String) {
        try withTemporaryStore { store in
            _ = try store.append(events)
            let query = try Query.parse(text)
            let now = Timestamp(microseconds: base + 86_400 * second)
            return (
                try query.run(on: StoreEventSource(store), options: .init(now: now)),
                try query.run(on: InMemoryEventSource(events), options: .init(now: now)),
                query.explain(on: StoreEventSource(store))
            )
        }
    }

    @Test(arguments: queries) func theStoreGivesWhatMemoryGives(text: String) throws {
        let (store, memory, _) = try answers(text, on: events)
        #expect(store == memory)
    }

    /// Sessions for the properties that only say whether the session has an event of a kind or name: E closes and
    /// taps the paywall in onb_2 only; F sends an analytics name outside the known ones and an `onboarding_completed`
    /// without a position; G collects an email; an event without a session has no session's properties.
    var flagEvents: [Event] {
        events + [
            ev(10, "E", screen: 0, presented), ev(11, "E", screen: 1, onboarding: "onb_2", .openPaywall(actionID: "p")),
            ev(12, "E", screen: 2, onboarding: "onb_2", .close(actionID: "x")),
            ev(13, "F", screen: 0, presented), ev(14, "F", screen: 1, .analytics(.unknown(name: "navigation_failed"))),
            ev(15, "F", screen: nil, completedEvent),
            ev(16, "G", screen: 0, presented), ev(17, "G", screen: 1, .analytics(.userEmailCollected)),
            ev(18, nil, screen: 0, presented),
        ]
    }

    static let flagQueries = [
        #"events | where onboarding == "onb_1" and name == "screen_presented" and session.completed | count by screen"#,
        #"events | where onboarding == "onb_1" and not session.completed | count by session"#,
        #"events | where screen == 0 and (session.paywall or session.did(close)) | count by name"#,
        #"events | where onboarding == "onb_1" and session.did("navigation_failed") | count by session"#,
        #"events | where kind == "analytics" and session.email_collected == false and not session.closed | count"#,
        #"events | where onboarding == "onb_1" and session.did(analytics) and not session.did(state_updated) | count by session"#,
        #"events | where onboarding == "onb_1" and name == "screen_presented" and session.did(onboarding_completed) | count by session"#,
        #"events | where onboarding == "onb_1" and (session.paywall or session.closed) | count by session"#,
    ]

    /// These are answered from the blocks that hold the flags' events, with the answers of the in-memory source:
    /// over the whole store, and over the blocks of the ranges' onboardings and of events without a position with the
    /// sessions that span onboardings read whole (E's paywall and close are in onb_2, F's completion has no position).
    @Test(arguments: flagQueries) func sessionFlagsFromTheBlocksGiveWhatMemoryGives(text: String) throws {
        for cost in [0, 16, Double.infinity] {
            let (store, memory, plan) = try StoreEventSource.$flagScopeIndexCost.withValue(cost) {
                try answers(text, on: flagEvents)
            }
            #expect(plan.contains("from the blocks whose headers count such events"))
            #expect(store == memory, "index cost \(cost)")
            #expect(!store.rows.isEmpty)
        }
    }

    /// Over one onboarding, the flags come from its blocks, the blocks of events without a position and the sessions
    /// in several onboardings (fewer events read than every block of the store), with the same sessions in scope.
    @Test func flagsOfOneOnboardingReadItsBlocksAndTheSpanningSessions() throws {
        try withTemporaryStore { store in
            // Sessions of another onboarding that complete: every block of the store holds more completions.
            let others = (0..<50).map {
                ev(Double(40 + $0), "other-\($0)", screen: 0, onboarding: "onb_pad", completedEvent)
            }
            _ = try store.append(flagEvents + others)
            let source = StoreEventSource(store)
            let flags: [SessionEventFlag] = [.name("onboarding_completed"), .kind(.openPaywall), .kind(.close)]
            let ranges = [ScanRange(onboarding: "onb_1")]
            func read(_ cost: Double) throws -> (sets: [SessionBitmap], events: Int) {
                try StoreEventSource.$flagScopeIndexCost.withValue(cost) {
                    try source.sessions(with: flags, in: ranges, cancellation: nil, text: "")
                }
            }
            let scoped = try read(0), whole = try read(.infinity)
            #expect(scoped.events < whole.events)
            let sessions = try store.read { snapshot in
                try snapshot.sessionIDs(ofOnboarding: try #require(try snapshot.id(of: "onb_1")))
            }
            #expect(!sessions.isEmpty)
            for (i, flag) in flags.enumerated() {
                #expect(
                    sessions.filter { scoped.sets[i].contains($0) } == sessions.filter { whole.sets[i].contains($0) },
                    "\(flag)")
                #expect(sessions.contains { whole.sets[i].contains($0) }, "some session of onb_1 has \(flag)")
            }
        }
    }

    @Test func explainSaysTheSessionsAreFoldedApart() throws {
        try withTemporaryStore { store in
            _ = try store.append(events)
            let plan = try Query.parse(
                #"events | where onboarding == "onb_1" and name == "screen_presented" and session.exit == "closed" | count"#
            ).explain(on: StoreEventSource(store))
            #expect(plan.contains("folded for the `session.` properties the query reads"), "\(plan)")
            // From a time on, the sessions are read whole as rows instead.
            let since = try Query.parse(#"events | where time >= @2026-11-01T10:30:00Z and session.completed | count"#)
                .explain(on: StoreEventSource(store))
            #expect(!since.contains("folded for the `session.` properties"), "\(since)")
        }
    }
}
