import BoardwalkModel
import BoardwalkStore
import Testing

@testable import BoardwalkQuery

/// `paths`: the parse and type errors of its clauses, and the store's paths against the in-memory source's (which
/// `DifferentialTests` checks against the reference evaluator).
@Suite struct PathsTests {
    @Test func aDepthOutsideOneToTheLimitIsAPositionedError() {
        #expect(
            diagnostic("sessions | paths before end depth 0") == """
                error: `depth` must be from 1 to 10; this is 0
                 --> query:1:35
                1 | sessions | paths before end depth 0
                  |                                   ^ the number of steps besides the anchor
                """)
        #expect(
            diagnostic("sessions | paths after screen_presented depth 11") == """
                error: `depth` must be from 1 to 10; this is 11
                 --> query:1:47
                1 | sessions | paths after screen_presented depth 11
                  |                                               ^^ each step multiplies the distinct paths
                """)
        #expect(diagnostic("sessions | paths before end depth -1").contains("expected a number of steps"))
        #expect(diagnostic("sessions | paths before end depth 2.5").contains("expected a number of steps"))
    }

    @Test func anchorsThatCannotBeAreErrorsAtTheirWords() {
        #expect(
            diagnostic("sessions | paths after end") == """
                error: nothing comes after a session's end
                 --> query:1:24
                1 | sessions | paths after end
                  |                        ^^^ `paths after start` or `paths before end`
                """)
        #expect(diagnostic("sessions | paths before start").contains("nothing comes before a session's start"))
        #expect(diagnostic("sessions | paths end").contains("expected `after` or `before`"))
        #expect(diagnostic("sessions | paths after 3").contains("expected an event, `start` or `end`"))
        #expect(diagnostic("sessions | paths after screen_presnted").contains("did you mean `screen_presented`?"))
        let caret = String(repeating: " ", count: 40) + String(repeating: "^", count: 17)
        #expect(
            diagnostic("sessions | paths after screen_presented(session.completed)")
                == [
                    "error: `session.completed` describes the session; the anchor of `paths` is one event, its condition "
                        + "reads the event's fields",
                    " --> query:1:41",
                    "1 | sessions | paths after screen_presented(session.completed)",
                    "  | \(caret) filter sessions with a `where` before `paths`",
                ].joined(separator: "\n"))
        #expect(
            diagnostic("sessions | paths after screen_presented(dwell > 1s)").contains(
                "`dwell` is not available in the anchor of `paths`"))
    }

    @Test func pathsReadSessionsAndComeFirst() {
        #expect(
            diagnostic("events | paths before end").contains("`paths` reads sessions; start the query with `sessions`"))
        #expect(
            diagnostic("sessions | count by exit | paths before end").contains(
                "`paths` reads sessions; it cannot follow `count`"))
        #expect(diagnostic("sessions | paths before end | versus \"a\"").contains("`versus` compares rates"))
    }

    @Test func theDefaultDepthIsThreeAndExplainSaysIt() throws {
        let query = try Query.parse("sessions | paths before close")
        guard case .paths(let p) = query.checked.reduction else {
            Issue.record("not a paths reduction")
            return
        }
        #expect(p.depth == BoundPaths.defaultDepth)
        #expect(query.explain(on: InMemoryEventSource([])).contains("reduce: paths before close, depth 3"))
    }

    @Test func storePathsAgreeWithTheInMemorySource() throws {
        var queries = QueryGenerator(seed: 0x9A7)
        var compared = 0
        var nonEmpty = 0
        for dataset in 0..<12 {
            var generator = SessionGenerator(seed: 0x9A70 ^ UInt64(dataset))
            let events = generator.events()
            let now = Timestamp(microseconds: base + 3 * 86_400 * second)
            try withTemporaryStore { store in
                _ = try store.append(events)
                // Compared on what the store kept: its inferred sessions and arrival seqs.
                let stored = try store.read { try $0.events(since: 0) }
                let memory = InMemoryEventSource(stored.map(\.event))
                let disk = StoreEventSource(store)
                for _ in 0..<15 {
                    let query = try Query.parse(queries.pathsQuery())
                    let expected = try query.run(on: memory, options: .init(now: now))
                    // Sessions through the index, and gathered from scans of their onboardings.
                    for gather in [0, Double.infinity] {
                        let actual = try StoreEventSource.$gatherRatio.withValue(gather) {
                            try query.run(on: disk, options: .init(now: now))
                        }
                        compared += 1
                        if !expected.rows.isEmpty { nonEmpty += 1 }
                        #expect(
                            agree(actual, expected),
                            "\(query.text)\nstore:\n\(actual.render(.table))\nmemory:\n\(expected.render(.table))")
                    }
                }
            }
        }
        #expect(compared == 360 && nonEmpty > compared / 2, "compared \(compared), \(nonEmpty) with rows")
    }
}
