import BoardwalkModel
import BoardwalkStore
import Testing

@testable import BoardwalkQuery

/// A screen funnel's `screen_cid` (rule 3): per step, the client id the most sessions in scope carry at that screen
/// index, each session once per id, ties to the smallest; absent where no session has an event at the index.
@Suite struct ScreenFunnelClientIDTests {
    /// An event of `session` at `screen` (seconds after ``base``) whose screen carries client id `cid`.
    func at(_ t: Double, _ session: String, _ screen: Int, _ cid: String, variation: String? = nil) -> Event {
        Event(
            time: Timestamp(microseconds: base + Int64(t * 1_000_000)), session: session, variation: variation,
            meta: Meta(onboardingID: "onb_1", screenClientID: cid, screenIndex: screen, totalScreens: 4),
            payload: presented)
    }

    /// Screen 0: A, B and C carry `welcome`, D `intro` (three against one). Screen 1: A carries `goal` on three
    /// events and B `aim` on one, C `aim` too: sessions, not events, decide (`aim` 2, `goal` 1). Screen 2: A
    /// `zeta`, B `alpha` (a tie: the smaller). Screen 3: B jumped from 1 to 3 (it reaches 2 without an event there),
    /// carrying `plan` and `plan2` at once: counted once each, a tie again. No session has an event at index 3 of
    /// another id.
    var events: [Event] {
        [
            at(0, "A", 0, "welcome", variation: "x"), at(1, "A", 1, "goal"), at(2, "A", 1, "goal"),
            at(3, "A", 1, "goal"), at(4, "A", 2, "zeta"),
            at(0, "B", 0, "welcome", variation: "y"), at(1, "B", 1, "aim"), at(2, "B", 2, "alpha"),
            at(3, "B", 3, "plan2"), at(4, "B", 3, "plan"),
            at(0, "C", 0, "welcome", variation: "y"), at(1, "C", 1, "aim"),
            at(0, "D", 0, "intro", variation: "x"),
        ]
    }

    @Test func theIdOfTheMostSessionsTiesToTheSmallest() throws {
        let table = try run(#"sessions | funnel | select step, sessions, screen_cid"#, events)
        #expect(
            table.render(.csv) == """
                step,sessions,screen_cid
                0,4,welcome
                1,3,aim
                2,2,alpha
                3,1,plan

                """)
    }

    @Test func eachGroupOfABreakdownHasItsOwn() throws {
        let table = try run("sessions | funnel by session.variation", events)
        #expect(
            table.rows.map { $0[0] } == [Value](repeating: .string("x"), count: 4)
                + Array(repeating: .string("y"), count: 4))
        #expect(
            table.column("screen_cid")
                == [.string("intro"), .string("goal"), .string("zeta"), .null]
                + [.string("welcome"), .string("aim"), .string("alpha"), .string("plan")])
    }

    @Test func aBreakdownNamedScreenCidKeepsTheName() throws {
        let plain = try run("sessions | funnel by screen_cid", events)
        #expect(
            plain.columns == [
                "screen_cid", "breakdown_step", "step", "sessions", "pct_of_first",
                "pct_of_previous", "dropoff", "median_time",
            ])
        let renamed = try run("sessions | funnel by screen_cid as first_cid | where step == 1", events)
        #expect(renamed.columns.first == "first_cid" && renamed.columns.last == "screen_cid")
        // The session's first screen event names its group: `intro` (D, no event at 1) and `welcome` (A, B, C).
        #expect(renamed.column("screen_cid") == [.null, .string("aim")])
    }

    @Test func theStoreGivesWhatMemoryGives() throws {
        try withTemporaryStore { store in
            _ = try store.append(events)
            let source = StoreEventSource(store)
            for text in [
                "sessions | funnel", "sessions | funnel by session.variation", "sessions | funnel by variation",
            ] {
                let query = try Query.parse(text)
                #expect(try query.run(on: source) == query.run(on: InMemoryEventSource(events)), "\(text)")
            }
        }
    }
}
