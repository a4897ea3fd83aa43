import BoardwalkModel
import BoardwalkStore
import Testing

@testable import BoardwalkQuery

/// `events | stats count() [by …]` is a count: the store answers it from block headers or by field codes, as
/// it answers `count` (reading every record is 30 times slower). The
/// answers must be the in-memory source's, and `explain` must say which path is taken.
@Suite struct StatsCountTests {
    @Test func statsOfCountAloneIsAnsweredLikeACount() throws {
        var generator = SessionGenerator(seed: 0x57A7)
        let events = generator.events()
        try withTemporaryStore { store in
            _ = try store.append(events)
            let stored = try store.read { try $0.events(since: 0) }.map(\.event)
            let cases: [(String, String)] = [
                ("events | stats count()", "block"),
                ("events | stats count() by screen", "block"),
                (
                    "events | where time >= @2026-11-01T10:30:00Z | stats count(), count() as again by onboarding, screen",
                    "block"
                ),
                (#"events | where kind == "analytics" | stats count() by name"#, "block"),
                ("events | stats count() by kind, name", "block"),
                (#"events | where kind == "analytics" | stats count() by element"#, "codes"),
                ("events | stats count() by kind, action", "codes"),
                // Not a count: read row by row, as before.
                ("events | stats count(), count(session) by screen", "rows"),
            ]
            for (text, path) in cases {
                let query = try Query.parse(text)
                let disk = try query.run(on: StoreEventSource(store))
                let memory = try query.run(on: InMemoryEventSource(stored))
                #expect(disk == memory, "\(text)\nstore:\n\(disk.render(.table))\nmemory:\n\(memory.render(.table))")
                let plan = try Query.parse(text + " | explain").run(on: StoreEventSource(store)).render(.table)
                switch path {
                case "block": #expect(plan.contains("blocks' keys and headers"), "\(text)\n\(plan)")
                case "codes": #expect(plan.contains("counted by field codes"), "\(text)\n\(plan)")
                default:
                    #expect(
                        !plan.contains("blocks' keys and headers") && !plan.contains("counted by field codes"),
                        "\(text)\n\(plan)")
                }
            }
        }
    }

    /// `count_distinct` of a field with a code keeps each group's distinct codes, and turns them into values once:
    /// what is distinct is values, so codes that name one value count once (an unknown analytics name that spells
    /// a known one, a kind's name and an unknown name of the same text, an element of the empty string and none).
    @Test func countDistinctOfCodedFieldsCountsDistinctValues() throws {
        var generator = SessionGenerator(seed: 0xD15C)
        var second = SessionGenerator(seed: 0xD15D)
        var events = generator.events() + second.events()
        let meta = Meta(onboardingID: "onb_1", screenClientID: "c", screenIndex: 1, totalScreens: 3)
        let t: Int64 = 1_793_527_200_000_000
        for (i, payload) in [
            Payload.analytics(.unknown(name: "screen_presented")), .analytics(.screenPresented),
            .analytics(.unknown(name: "custom")), .custom(actionID: "c"),
            .analytics(.screenCompleted(elementID: "", reply: "")),
            .analytics(.screenCompleted(elementID: nil, reply: nil)),
            .stateUpdated(StateUpdate(elementID: "", value: .input(.text("x")))),
        ].enumerated() {
            events.append(
                Event(
                    time: Timestamp(microseconds: t + Int64(i) * 1_000_000), session: "odd",
                    profile: i.isMultiple(of: 2) ? "p9" : nil,
                    meta: meta, payload: payload))
        }
        try withTemporaryStore { store in
            _ = try store.append(events)
            let stored = try store.read { try $0.events(since: 0) }.map(\.event)
            let cases: [(String, Bool)] = [
                ("events | stats count_distinct(profile)", true),
                ("events | stats count(), count_distinct(session), count_distinct(name) by onboarding", true),
                ("events | stats count_distinct(name), count_distinct(element), count_distinct(reply) by kind", true),
                (
                    #"events | where kind != "error" | stats count_distinct(screen), count_distinct(action) by session"#,
                    true
                ),
                (
                    "events | where time >= @2026-11-01T10:30:00Z | stats count_distinct(element_type), count() by variation",
                    true
                ),
                // Not coded: a field without a code, or another aggregate beside it.
                ("events | stats count_distinct(value)", false),
                ("events | stats count_distinct(profile), count(session)", false),
            ]
            for (text, coded) in cases {
                let query = try Query.parse(text)
                let disk = try query.run(on: StoreEventSource(store))
                let memory = try query.run(on: InMemoryEventSource(stored))
                #expect(disk == memory, "\(text)\nstore:\n\(disk.render(.table))\nmemory:\n\(memory.render(.table))")
                let rows = try StoreEventSource.$readsOnlyWhatEventQueriesNeed.withValue(false) {
                    try query.run(on: StoreEventSource(store))
                }
                #expect(disk == rows, "\(text)")
                let plan = try Query.parse(text + " | explain").run(on: StoreEventSource(store)).render(.table)
                #expect(plan.contains("counted by field codes") == coded, "\(text)\n\(plan)")
            }
            // The odd session's names: screen_presented (twice spelled), custom (a kind and a name), screen_completed.
            let names = try Query.parse(
                #"events | where session == "odd" | stats count_distinct(name), count_distinct(element)"#
            )
            .run(on: StoreEventSource(store)).render(.csv)
            #expect(names == "count_distinct(name),count_distinct(element)\n4,0\n", "\(names)")
        }
    }
}
