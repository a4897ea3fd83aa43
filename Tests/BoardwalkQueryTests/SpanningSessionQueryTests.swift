import BoardwalkModel
import BoardwalkStore
import Testing

@testable import BoardwalkQuery

/// One-onboarding `sessions` queries scan the onboarding's key range and read only the store's spanning
/// sessions (events under another onboarding key) through the session index: the counts must not change.
@Suite struct SpanningSessionQueryTests {
    let error = Payload.error(OnboardingError(domain: "webkit", code: 1, message: "m"))

    var events: [Event] {
        [
            // s1 starts in onb_1 and goes on in onb_2: it belongs to onb_1's query with all three events.
            ev(0, "s1", screen: 0, started),
            ev(1, "s1", screen: 1, presented),
            ev(2, "s1", screen: 2, onboarding: "onb_2", presented),
            // s2 stays in onb_1.
            ev(3, "s2", screen: 0, started),
            ev(4, "s2", screen: 1, presented),
            ev(5, "s2", screen: 3, presented),
            ev(6, "s2", screen: 3, completedEvent),
            // s3 stays in onb_2.
            ev(7, "s3", screen: 0, onboarding: "onb_2", started),
            // s4 is in onb_1 and errs outside the page (an event without a position).
            ev(8, "s4", screen: 0, started),
            ev(9, "s4", screen: nil, error),
            // s5 starts in onb_2 and ends in onb_1.
            ev(10, "s5", screen: 0, onboarding: "onb_2", started),
            ev(11, "s5", screen: 1, presented),
        ]
    }

    /// Runs `text` on the store both ways (range scan, session index) and in memory; all three must agree.
    func run(_ text: String, _ store: Store) throws -> ResultTable {
        let query = try Query.parse(text)
        let memory = try query.run(on: InMemoryEventSource(events))
        for ratio in [0, Double.infinity] {
            let disk = try StoreEventSource.$onboardingScanRatio.withValue(ratio) {
                try query.run(on: StoreEventSource(store))
            }
            #expect(
                disk == memory,
                "ratio \(ratio): \(text)\nstore:\n\(disk.render(.table))\nmemory:\n\(memory.render(.table))")
        }
        return memory
    }

    @Test func aSessionInTwoOnboardingsIsCountedWholeInAOneOnboardingQuery() throws {
        try withTemporaryStore { store in
            _ = try store.append(events)
            let spanning = try store.read { s in Set(try s.spanningSessions().map { s.string(for: $0)! }) }
            #expect(spanning == ["s1", "s4", "s5"])
            let rows = try run(
                #"sessions | where onboarding == "onb_1" | select session, events, furthest_screen | sort session"#,
                store)
            #expect(rows.column("session") == ["s1", "s2", "s4"].map { .string($0) })
            #expect(rows.column("events") == [.integer(3), .integer(4), .integer(2)])
            #expect(rows.column("furthest_screen") == [.integer(2), .integer(3), .integer(0)])
            let onb2 = try run(
                #"sessions | where onboarding == "onb_2" | select session, events | sort session"#, store)
            #expect(onb2.column("session") == ["s3", "s5"].map { .string($0) })
            #expect(onb2.column("events") == [.integer(1), .integer(2)])
            _ = try run(#"sessions | where onboarding == "onb_1" | funnel"#, store)
            _ = try run(#"sessions | where onboarding in ["onb_1", "onb_2"] | count by onboarding"#, store)
            _ = try run(
                #"sessions | where onboarding == "onb_2" | stats count(), rate(completed), p50(duration)"#, store)
        }
    }

    @Test func eventsWithoutAPositionStayInTheirSessionsOfAOneOnboardingQuery() throws {
        try withTemporaryStore { store in
            _ = try store.append(events)
            let rows = try run(
                #"sessions | where onboarding == "onb_1" and did(error) | select session, events, ended"#, store)
            #expect(rows.column("session") == [.string("s4")])
            #expect(rows.column("events") == [.integer(2)])
            // An error without meta and without a session: an inferred session with no onboarding, in no
            // onboarding's query.
            _ = try store.append([ev(20, nil, screen: nil, profile: "p", error)])
            let count = try Query.parse(#"sessions | where onboarding == "onb_1" | count"#)
            for ratio in [0, Double.infinity] {
                let table = try StoreEventSource.$onboardingScanRatio.withValue(ratio) {
                    try count.run(on: StoreEventSource(store))
                }
                #expect(table.column("count") == [.integer(3)])
            }
            #expect(try store.check().isOK)
        }
    }
}
