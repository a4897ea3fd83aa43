import BoardwalkModel
import Testing

@testable import BoardwalkQuery

/// `versus V`: every group of a reduction by one key against the group `V`, with the difference, the lift and the
/// two-sided p-value of the pooled two-proportion z-test. Expected p-values are SciPy's (`2 * norm.sf(|z|)` of the
/// pooled statistic), which mpmath at 40 digits confirms to 1e-15.
@Suite struct VersusTests {
    /// Per variation: sessions, how many reach screen 1, complete, and open the paywall.
    static let events: [Event] = {
        var out: [Event] = []
        for (variation, n, reached, completed, paywall) in [
            ("control", 200, 150, 60, 90), ("b", 150, 120, 63, 40), ("c", 20, 15, 3, 10),
        ] {
            for i in 0..<n {
                let id = "\(variation)\(i)"
                func add(_ screen: Int, _ payload: Payload) {
                    out.append(ev(Double(out.count), id, screen: screen, variation: variation, payload))
                }
                add(0, started)
                if i < reached { add(1, presented) }
                if i < completed { add(3, completedEvent) }
                if i >= n - paywall { add(3, .openPaywall(actionID: "buy")) }
            }
        }
        return out
    }()

    static func close(_ value: Value, _ expected: Double) -> Bool {
        guard let x = value.doubleValue else { return false }
        return abs(x - expected) <= 1e-9 * max(1, abs(expected))
    }

    @Test func eachRateAgainstTheBaselineGroup() throws {
        let table = try run(
            #"sessions | stats count(), rate(completed), rate(paywall) as pw by variation | versus "control""#,
            Self.events)
        #expect(table.columns == ["variation", "metric", "n", "hits", "rate", "diff", "lift", "p_value", "note"])
        let rows = Dictionary(
            uniqueKeysWithValues: table.rows.map { ("\($0[0].stringValue ?? "")/\($0[1].stringValue ?? "")", $0) })
        let b = try #require(rows["b/rate(completed)"])
        #expect(b[2] == .integer(150) && b[3] == .integer(63))
        #expect(Self.close(b[4], 0.42) && Self.close(b[5], 0.12) && Self.close(b[6], 0.4))
        #expect(Self.close(b[7], 0.019961265070318403), "\(b)")
        #expect(b[8] == .null)
        #expect(Self.close(try #require(rows["b/pw"])[7], 0.0004434159219783188))
        #expect(Self.close(try #require(rows["c/pw"])[7], 0.6685241388865246))
        // 3 completions of 20: too few for the normal approximation, said instead of a p-value.
        let few = try #require(rows["c/rate(completed)"])
        #expect(few[7] == .null && few[8] == .string(Versus.tooFew))
        #expect(Self.close(few[5], -0.15))
        let base = try #require(rows["control/rate(completed)"])
        #expect(base[5] == .null && base[7] == .null && base[8] == .string("baseline"))
        // Groups in key order, each group's rates in the order of `stats`.
        #expect(table.rows.map { $0[0] }.count == 6)
        #expect(table.column("metric")?.prefix(2) == [.string("rate(completed)"), .string("pw")])
    }

    @Test func funnelStepsFromTheFirstAndFromThePrevious() throws {
        let table = try run(
            "sessions | funnel onboarding_started, screen_presented(screen == 1), onboarding_completed"
                + #" by variation | versus "control""#,
            Self.events)
        #expect(
            table.columns == [
                "variation", "step", "name", "metric", "n", "hits", "rate", "diff", "lift", "p_value", "note",
            ])
        func row(_ variation: String, _ step: Int, _ metric: String) throws -> [Value] {
            try #require(
                table.rows.first {
                    $0[0] == .string(variation) && $0[1] == .integer(Int64(step)) && $0[3] == .string(metric)
                })
        }
        #expect(Self.close(try row("b", 2, "from_first")[9], 0.2702893848016982))
        #expect(Self.close(try row("b", 3, "from_first")[9], 0.019961265070318403))
        let previous = try row("b", 3, "from_previous")
        #expect(previous[4] == .integer(120) && previous[5] == .integer(63))
        #expect(Self.close(previous[9], 0.04042753915987113))
        #expect(Self.close(previous[7], 0.125))
        #expect(Self.close(try row("c", 2, "from_first")[9], 1.0))
        #expect(try row("c", 3, "from_first")[10] == .string(Versus.tooFew))
        // The first step converts to itself: no row for it.
        #expect(!table.rows.contains { $0[1] == .integer(1) })
        #expect(table.rows.count == 3 * 2 * 2)
    }

    @Test func storeAndMemoryAgree() throws {
        for text in [
            #"sessions | stats rate(completed), rate(paywall) by variation | versus "b""#,
            #"sessions | funnel by variation | versus "control""#,
            "sessions | count by variation | where count > 0 | stats rate(count > 100) as big by variation"
                + #" | versus "c""#,
        ] {
            let memory = try run(text, Self.events)
            try withTemporaryStore { store in
                _ = try store.append(Self.events)
                let disk = try Query.parse(text).run(
                    on: StoreEventSource(store), options: .init(now: Timestamp(microseconds: base + 86_400 * second)))
                #expect(disk == memory, "\(text)\nstore:\n\(disk.render(.table))\nmemory:\n\(memory.render(.table))")
            }
        }
    }

    @Test func aMissingGroupNamesTheGroupsAndTheClosest() throws {
        do {
            _ = try run(#"sessions | stats rate(completed) by variation | versus "contrl""#, Self.events)
            Issue.record("no error")
        } catch let error as QueryError {
            #expect(error.kind == .type)
            #expect(error.message == "no group of `variation` is `contrl`; did you mean `control`?")
            #expect(error.location?.column == 56)
            #expect(error.label == "groups: `b`, `c`, `control`")
        }
    }

    @Test(arguments: [
        (#"sessions | stats rate(completed) | versus "a""#, 36, "has none"),
        (#"sessions | stats rate(completed) by exit, variation | versus "a""#, 43, "by 2 keys"),
        (#"sessions | count by exit | versus "a""#, 28, "compares rates"),
        (#"sessions | stats count() by exit | versus "a""#, 36, "has no `rate(…)`"),
        (#"sessions | stats rate(completed) by completed | versus "a""#, 56, "a boolean; this is a string"),
        (#"sessions | stats rate(completed) by exit | sort exit | versus "a""#, 56, "right after the reduction"),
        (#"sessions | stats rate(completed) by exit | versus exit"#, 51, "the group to compare with"),
        (#"sessions | stats rate(completed) by exit as metric | versus "a""#, 37, "two columns are named `metric`"),
        (#"sessions | versus "a""#, 12, "right after the reduction"),
    ])
    func misplacedOrMisshapenVersusIsAPositionedError(text: String, column: Int, message: String) {
        do {
            _ = try Query.parse(text)
            Issue.record("no error for \(text)")
        } catch {
            #expect(error.location?.column == column, "\(error)")
            #expect(error.description.contains(message), "\(error)")
        }
    }
}
