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
        // Counted during the fold's scan of whole onboardings: with outcomes, with none (every field read for the
        // count), with answers (a full fold), over two onboardings, and with a time comparison the scan checks.
        #"events | where onboarding in ["onb_1", "onb_2"] and session.completed | count by name, screen"#,
        #"events | where onboarding == "onb_1" and session.variation is absent | count by kind, screen"#,
        #"events | where onboarding == "onb_1" and session.answer("level") is absent | count by session"#,
        #"events | where onboarding == "onb_1" and time < @2026-11-01T10:00:03Z and session.completed | count"#,
        #"events | where onboarding == "onb_1" and not session.completed | top 2 name"#,
    ]

    @Test(arguments: queries) func theStoreGivesWhatMemoryGives(text: String) throws {
        try withTemporaryStore { store in
            _ = try store.append(events)
            let query = try Query.parse(text)
            let now = Timestamp(microseconds: base + 86_400 * second)
            #expect(
                try query.run(on: StoreEventSource(store), options: .init(now: now))
                    == query.run(on: InMemoryEventSource(events), options: .init(now: now)))
        }
    }

    /// A count by coded fields whose ranges are whole onboardings is taken while the fold scans them: every record is
    /// handed to the count once, and the scans say they met them all.
    @Test func aCountOverWholeOnboardingsIsTakenDuringTheFoldsScan() throws {
        try withTemporaryStore { store in
            _ = try store.append(events)
            let now = Timestamp(microseconds: base + 86_400 * second)
            let query = try Query.parse(
                #"events | where onboarding in ["onb_1", "onb_2"] and session.completed | count by screen"#)
            var eventPart = query.checked
            eventPart.filters = [
                try Query.parse(#"events | where onboarding in ["onb_1", "onb_2"]"#).checked.filters[0]
            ]
            let plan = try #require(CodedCountPlan.make(eventPart, now: now))
            let source = StoreEventSource(store)
            for (ranges, complete) in [
                ([ScanRange(onboarding: "onb_1"), ScanRange(onboarding: "onb_2")], true),
                // Not whole onboardings: the fold reads sessions through the index, and the count reads apart.
                ([ScanRange(onboarding: "onb_1", screens: 1...1)], false),
            ] {
                let beside = try #require(CodedCountBesideFold(plan, now: now))
                let properties = SessionProperties(query.checked, now: now)
                try properties.fold(
                    source, ranges, sessionFilters: [], keep: false, beside: beside, now: now, cancellation: nil,
                    text: query.text)
                #expect(beside.complete == complete)
                if complete {
                    #expect(beside.read == events.count)
                    var counted = 0
                    try beside.finish(passes: { _ in true }) { _, n in counted += n }
                    #expect(counted == events.count)
                }
            }
        }
    }

    @Test func explainSaysTheSessionsAreFoldedApart() throws {
        try withTemporaryStore { store in
            _ = try store.append(events)
            let plan = try Query.parse(
                #"events | where onboarding == "onb_1" and name == "screen_presented" and session.completed | count"#
            ).explain(on: StoreEventSource(store))
            #expect(plan.contains("folded for the `session.` properties the query reads"), "\(plan)")
            // From a time on, the sessions are read whole as rows instead.
            let since = try Query.parse(#"events | where time >= @2026-11-01T10:30:00Z and session.completed | count"#)
                .explain(on: StoreEventSource(store))
            #expect(!since.contains("folded for the `session.` properties"), "\(since)")
        }
    }
}
