import BoardwalkModel
import Testing

@testable import BoardwalkQuery

/// `lints`: the findings of ``OnboardingLint`` as a source whose rows every table stage reads.
@Suite struct LintsSourceTests {
    /// A clean session, and one without `onboarding_started` that completes on screen 1 of 4.
    static let events: [Event] = [
        ev(0, "s1", started), ev(1, "s1", presented), ev(2, "s1", screen: 1, presented),
        ev(3, "s1", screen: 2, presented), ev(4, "s1", screen: 3, presented), ev(5, "s1", screen: 3, completedEvent),
        ev(10, "s2", presented), ev(11, "s2", screen: 1, presented), ev(12, "s2", screen: 1, completedEvent),
    ]

    @Test func eachFindingIsARowOfItsColumns() throws {
        let table = try run("lints", Self.events)
        #expect(table.columns == ["lint", "onboarding", "count", "unit", "example_session", "message", "query"])
        #expect(
            table.rows == [
                [
                    .string("completed_off_last_screen"), .string("onb_1"), .integer(1), .string("events"),
                    .string("s2"), .string("1 onboarding_completed event off the last screen"),
                    .string(
                        #"events | where onboarding == "onb_1" and name == "onboarding_completed" "#
                            + "| count by screen, total_screens"
                    ),
                ],
                [
                    .string("no_onboarding_started"), .string("onb_1"), .integer(1), .string("sessions"),
                    .string("s2"), .string("1 session without onboarding_started"),
                    .string(
                        #"sessions | where onboarding == "onb_1" and not did(onboarding_started) "#
                            + "| count by furthest_screen"
                    ),
                ],
            ])
        // Each finding's query runs and shows the problem.
        let shown = try run(try #require(table.rows[0][6].stringValue), Self.events)
        #expect(shown.rows == [[.integer(1), .integer(4), .integer(1)], [.integer(3), .integer(4), .integer(1)]])
    }

    @Test func tableStagesReadTheFindings() throws {
        let table = try run(
            #"lints | where lint == "no_onboarding_started" | select example_session, count"#, Self.events)
        #expect(table.rows == [[.string("s2"), .integer(1)]])
        #expect(try run("lints | count by unit", Self.events).rows.count == 2)
        // The clean session alone has nothing to find.
        #expect(try run("lints", Array(Self.events.prefix(6))).rows.isEmpty)
    }

    @Test func itHasNoSQLAndNoSessionStages() throws {
        let query = try Query.parse("lints | count")
        #expect(throws: QueryError.self) { try query.clickHouseSQL() }
        do {
            _ = try query.clickHouseSQL()
        } catch {
            #expect(error.message.hasPrefix("cannot translate to ClickHouse: `lints`"))
        }
        #expect(
            diagnostic("lints | paths before end").contains("`paths` reads sessions; start the query with `sessions`"))
        #expect(diagnostic("lints | funnel").contains("`funnel` reads sessions; start the query with `sessions`"))
        #expect(diagnostic("lints | where cnt > 1").contains("did you mean `count`?"))
        #expect(diagnostic("lint | count").contains("did you mean `lints`?"))
        #expect(query.explain(on: InMemoryEventSource(Self.events)).hasPrefix("read: every session once"))
    }
}
