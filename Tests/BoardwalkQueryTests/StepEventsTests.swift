import BoardwalkCodec
import BoardwalkModel
import BoardwalkStore
import Foundation
import Testing

@testable import BoardwalkQuery

/// Funnels of custom steps read by the store's session folds (``StepEvent``: each session keeps its events that
/// match a step) give what the in-memory source gives from whole sessions: over the whole store, over whole
/// onboardings (scanned, and through the session index), and over narrower ranges, in every mode (`strict` with
/// breakers and `ignoring`), with windows and breakdowns.
@Test func storeFunnelsOfCustomStepsAgreeWithTheInMemorySource() throws {
    let now = Timestamp(microseconds: base + 3 * 86_400 * second)
    var queries = QueryGenerator(seed: 0xF0_1D)
    var ran = 0, custom = 0, nonEmpty = 0
    for dataset in 0..<16 {
        var generator = SessionGenerator(seed: 0xC0570 ^ UInt64(dataset))
        let events = generator.events()
        try withTemporaryStore { store in
            _ = try store.append(events)
            let stored = try store.read { try $0.events(since: 0) }
            let memory = InMemoryEventSource(stored.map(\.event))
            let disk = StoreEventSource(store)
            for i in 0..<30 {
                var text = queries.funnelQuery()
                // A third over whole onboardings (the scan of their key ranges), a few over a time range.
                if i % 3 == 1 {
                    text = text.replacingOccurrences(
                        of: "sessions |", with: #"sessions | where onboarding == "onb_1" |"#)
                }
                if i % 10 == 2 {
                    text = text.replacingOccurrences(
                        of: "sessions |", with: "sessions | where started >= @2026-11-01T12:00:00Z |")
                }
                let query = try Query.parse(text)
                if query.checked.hasCustomFunnel { custom += 1 }
                let b = try query.run(on: memory, options: .init(now: now))
                if !b.rows.isEmpty { nonEmpty += 1 }
                ran += 1
                for ratio in [0, Double.infinity] {
                    let a = try StoreEventSource.$onboardingScanRatio.withValue(ratio) {
                        try query.run(on: disk, options: .init(now: now))
                    }
                    if !agree(a, b) {
                        Issue.record(
                            "dataset \(dataset): \(text)\nstore:\n\(a.render(.table))\nmemory:\n\(b.render(.table))")
                        return
                    }
                }
            }
        }
    }
    #expect(ran == 480)
    #expect(custom > ran / 2, "the generator must mostly give funnels of custom steps")
    #expect(nonEmpty > ran / 2)
}

/// The plan says how a funnel of custom steps is read: folded from a scan (strict ones too, with a
/// breaker for each event they do not ignore), unless it has more steps than a fold's mask holds; and a screen funnel
/// broken down by the session's properties alone is folded too.
@Test func explainSaysWhichFunnelsAreFolded() throws {
    try withTemporaryStore { store in
        _ = try store.append([ev(0, "s1", started), ev(1, "s1", screen: 1, presented)])
        let source = StoreEventSource(store)
        let ordered = try Query.parse("sessions | funnel onboarding_started, screen_presented within 1h")
        #expect(
            ordered.explain(on: source).hasPrefix(
                "read: every event once in key order, folded into per-session summaries"))
        let any = try Query.parse(
            #"sessions | where onboarding == "onb_1" | funnel onboarding_started, screen_presented mode any"#)
        #expect(
            any.explain(on: source).hasPrefix("read: sessions of the onboardings from the onboarding_sessions index"))
        let strict = try Query.parse("sessions | funnel onboarding_started, screen_presented mode strict")
        #expect(
            strict.explain(on: source).hasPrefix(
                "read: every event once in key order, folded into per-session summaries"))
        let long = try Query.parse(
            "sessions | funnel "
                + Array(repeating: "screen_presented", count: StepEvent.maxSteps + 1).joined(separator: ", "))
        #expect(
            long.explain(on: source).contains(
                "gathered by scanning their onboardings' keys, a window of sessions at a time, when that scans at most twice their events, else through the session index"
            ))
        let (table, statistics) = try ordered.execute(on: source)
        #expect(table.column("sessions") == [.integer(1), .integer(1)])
        #expect(statistics.sessionsRead == 1)
        // A screen funnel by what the session is alone takes its values from the fold's summaries; one that also
        // reads an event field reads the sessions as rows.
        for by in [#"answer("goal")"#, "session.variation", #"session.exit, year(answer("birthday"))"#] {
            let folded = try Query.parse(#"sessions | where onboarding == "onb_1" | funnel by "# + by)
            #expect(
                folded.explain(on: source).hasPrefix("read: sessions of the onboardings from the onboarding_sessions"),
                "\(by)")
        }
        let mixed = try Query.parse(#"sessions | where onboarding == "onb_1" | funnel by answer("goal"), variation"#)
        #expect(mixed.explain(on: source).contains("a window of sessions at a time"))
    }
}

/// Runs `texts` on a store holding `events` (both ways the store reads whole onboardings) and in memory; returns
/// the disagreements, and with `requireRows` each query that returned nothing (it would prove nothing).
func disagreements(_ events: [Event], _ texts: [String], requireRows: Bool = false) throws -> [String] {
    var out: [String] = []
    try withTemporaryStore { store in
        _ = try store.append(events)
        let memory = InMemoryEventSource(try store.read { try $0.events(since: 0) }.map(\.event))
        let disk = StoreEventSource(store)
        let now = Timestamp(microseconds: base + 86_400 * second)
        for text in texts {
            let query = try Query.parse(text)
            let b = try query.run(on: memory, options: .init(now: now))
            if requireRows, b.rows.isEmpty { out.append("\(text): no rows, the case proves nothing") }
            for ratio in [0, Double.infinity] {
                let a = try StoreEventSource.$onboardingScanRatio.withValue(ratio) {
                    try query.run(on: disk, options: .init(now: now))
                }
                if !agree(a, b) {
                    out.append("ratio \(ratio): \(text)\nstore:\n\(a.render(.table))\nmemory:\n\(b.render(.table))")
                }
            }
        }
    }
    return out
}

/// Sessions in two onboardings and with events without a position (read through the session index within a
/// scope), a step-1 event outside the queried onboarding, equal times, a zero window, breakdowns by event fields.
@Test func foldedFunnelsOfSessionsThatSpanOnboardings() throws {
    let events = [
        ev(0, "s1", screen: 0, onboarding: "onb_2", variation: "a", started),
        ev(5, "s1", screen: 1, onboarding: "onb_1", variation: "b", presented),
        ev(6, "s1", screen: nil, variation: "c", started),
        ev(7, "s1", screen: nil, variation: "d", presented),
        ev(1, "s2", screen: 0, variation: "a", presented),
        ev(1, "s2", screen: 0, variation: "b", started),
        ev(1, "s2", screen: 1, variation: "c", presented),
    ]
    let found = try disagreements(
        events,
        [
            #"sessions | where onboarding == "onb_2" | funnel onboarding_started, screen_presented by variation"#,
            #"sessions | where onboarding == "onb_1" | funnel onboarding_started, screen_presented by variation"#,
            "sessions | funnel onboarding_started, screen_presented mode any by variation",
            "sessions | funnel screen_presented, onboarding_started within 0s mode any by variation",
            "sessions | funnel onboarding_started, screen_presented within 0s by screen",
        ])
    #expect(found.isEmpty, "\(found.joined(separator: "\n"))")
}

/// An analytics name outside the known list whose text is a known name (possible through `Store.append`) is
/// that step, as `EventRow.isEvent` compares text.
@Test func foldedFunnelsMatchAnUnknownNameSpelledLikeAKnownOne() throws {
    let found = try disagreements(
        [ev(0, "s1", started), ev(5, "s1", screen: 1, .analytics(.unknown(name: "screen_presented")))],
        ["sessions | funnel onboarding_started, screen_presented"])
    #expect(found.isEmpty, "\(found.joined(separator: "\n"))")
}

/// 64 steps fill a fold's step mask; 65 read sessions as rows; both agree with memory.
@Test func foldedFunnelsOfSixtyFourStepsAndMore() throws {
    let events = (0..<70).map { ev(Double($0), "s1", screen: $0 % 4, presented) }
    func funnel(_ n: Int) -> String {
        "sessions | funnel " + Array(repeating: "screen_presented", count: n).joined(separator: ", ")
    }
    #expect(!(try Query.parse(funnel(64)).checked.needsSessionRows))
    #expect(try Query.parse(funnel(65)).checked.needsSessionRows)
    let found = try disagreements(events, [funnel(64), funnel(65), funnel(64) + " mode any"])
    #expect(found.isEmpty, "\(found.joined(separator: "\n"))")
}

/// Over its budget of step events a fold's scan stops and delivers nothing; the query then reads sessions as rows
/// and gives the same result.
@Test func foldedFunnelsOverTheirBudgetReadSessionsAsRows() throws {
    var generator = SessionGenerator(seed: 0xB0D6E7)
    let events = generator.events() + generator.events()
    let text = "sessions | funnel analytics, screen_presented, analytics within 1h by variation"
    try withTemporaryStore { store in
        _ = try store.append(events)
        let query = try Query.parse(text)
        let disk = StoreEventSource(store)
        let memory = InMemoryEventSource(try store.read { try $0.events(since: 0) }.map(\.event))
        let expected = try query.run(on: memory)
        #expect(!expected.rows.isEmpty)
        try StepTests.$budgetOverride.withValue(0) {
            for ratio in [0, Double.infinity] {
                try StoreEventSource.$onboardingScanRatio.withValue(ratio) {
                    #expect(agree(try query.run(on: disk), expected))
                    let scoped = try Query.parse(
                        #"sessions | where onboarding == "onb_1" | "# + text.dropFirst("sessions | ".count))
                    #expect(agree(try scoped.run(on: disk), try scoped.run(on: memory)))
                }
            }
            // The fold itself stops and delivers nothing.
            let needs = FoldNeeds(query.checked, now: Timestamp(microseconds: 0))
            var delivered = 0
            try disk.foldSessions([ScanRange()], needs: needs, cancellation: nil, text: text) { _, _, _ in
                delivered += 1
                return true
            }
            #expect(needs.stepTests?.overBudget == true)
            #expect(delivered == 0)
        }
    }
}

/// A strict funnel's `ignoring` passes over the kinds, known analytics names and other analytics names it lists, and
/// a step predicate on the fields a fold reads without decoding the record (`screen`, `name`, `total_screens`) gives
/// what it gives on the decoded event: the store's folds, scanning an onboarding or reading the session index, answer
/// as the in-memory source does, with the counts each rule gives.
@Test func strictFunnelsIgnoreKindsKnownAndOtherNamesInTheStoreAsInMemory() throws {
    let events = [
        ev(0, "a", screen: 0, presented),
        ev(1, "a", screen: 0, .analytics(.screenCompleted(elementID: nil, reply: nil))),
        ev(2, "a", screen: 0, select("goal", "x")),
        ev(3, "a", screen: 0, .analytics(.unknown(name: "navigation_failed"))),
        ev(4, "a", screen: 1, presented), ev(0, "b", screen: 0, presented), ev(1, "b", screen: 1, presented),
    ]
    let steps = "sessions | funnel screen_presented(screen == 0), screen_presented(screen == 1) mode strict ignoring "
    let expected: [(String, [Int64])] = [
        (steps + #"(screen_completed, state_updated, "navigation_failed")"#, [2, 2]),
        (steps + #"(state_updated, "navigation_failed")"#, [2, 1]),
        (steps + "(screen_completed, state_updated)", [2, 1]),
        (steps + "(analytics, state_updated)", [2, 2]),
        (steps + "(onboarding_loaded)", [2, 1]),
        (
            #"sessions | funnel analytics(name == "screen_completed"), screen_presented(screen == 1 and total_screens == 4)"#,
            [1, 1]
        ),
        ("sessions | funnel screen_presented(total_screens == 5), screen_presented", [0, 0]),
    ]
    try withTemporaryStore { store in
        _ = try store.append(events)
        let now = Timestamp(microseconds: base + 86_400 * second)
        for (text, counts) in expected {
            let query = try Query.parse(text)
            let memory = try query.run(on: InMemoryEventSource(events), options: .init(now: now))
            #expect(memory.column("sessions") == counts.map(Value.integer), "\(text)")
            for ratio in [0, Double.infinity] {
                let stored = try StoreEventSource.$onboardingScanRatio.withValue(ratio) {
                    try query.run(on: StoreEventSource(store), options: .init(now: now))
                }
                #expect(agree(stored, memory), "\(text), scan ratio \(ratio)\n\(stored.render(.table))")
            }
        }
    }
}

/// An event's screen fields, and nothing else, as a fold reads them.
private struct ScreenFields: FoldFields {
    var screenIndex: Int?
    var totalScreens: Int?

    var time: Timestamp { Timestamp(microseconds: 0) }
    var profile: StringID? { nil }
    var placement: StringID? { nil }
    var variation: StringID? { nil }
    var onboarding: StringID? { nil }
    var screenClientID: StringID? { nil }
    var kind: EventKind { .analytics }
    var knownAnalyticsName: AnalyticsName? { .screenPresented }
    var analyticsName: AnalyticsNameRef? { .known(.screenPresented) }
    var elementID: StringID? { nil }
}

/// A step predicate comparing `screen` or `total_screens` with an integer, on either side, is tested on the fold's
/// integers as `Value.compare` tests the values (false when the field is absent); any other predicate is left to the
/// compiled expression.
@Test func screenComparisonsTestTheFieldAsValuesCompare() throws {
    let ops: [BinaryOperator] = [.equal, .notEqual, .less, .lessEqual, .greater, .greaterEqual]
    for field in [EventField.screen, .totalScreens] {
        for op in ops {
            for n in [Int64(0), 1, 2] {
                for literalFirst in [false, true] {
                    let (a, b): (Bound, Bound) =
                        literalFirst ? (.literal(.integer(n)), .event(field)) : (.event(field), .literal(.integer(n)))
                    let test = try #require(ScreenComparison(.compare(op, a, b)))
                    for x in [nil, 0, 1, 2, 3] as [Int?] {
                        let fields =
                            field == .screen ? ScreenFields(screenIndex: x) : ScreenFields(totalScreens: x)
                        let value = x.map { Value.integer(Int64($0)) } ?? .null
                        let expected =
                            literalFirst
                            ? Value.compare(op, .integer(n), value) : Value.compare(op, value, .integer(n))
                        #expect(
                            test.holds(fields) == expected,
                            "\(literalFirst ? "\(n) \(op.rawValue) \(field)" : "\(field) \(op.rawValue) \(n)"), \(String(describing: x))"
                        )
                    }
                }
            }
        }
    }
    #expect(ScreenComparison(.compare(.equal, .event(.screen), .literal(.number(1.5)))) == nil)
    #expect(ScreenComparison(.compare(.equal, .event(.seq), .literal(.integer(1)))) == nil)
    let both = Bound.and(
        .compare(.greaterEqual, .event(.screen), .literal(.integer(1))),
        .compare(.less, .event(.screen), .literal(.integer(3))))
    #expect(ScreenComparison(both) == nil)
}
