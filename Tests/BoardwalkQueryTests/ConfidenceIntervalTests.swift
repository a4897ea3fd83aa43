import BoardwalkModel
import Testing

@testable import BoardwalkQuery

/// `ci(p [, level])` in `stats`: the Wilson score interval of `rate(p)`, two columns, checked against the interval
/// computed with SciPy's `norm.ppf` and with mpmath at 50 digits (the two agree to 1e-15 on these counts).
@Suite struct ConfidenceIntervalTests {
    /// Variation `a`: 5 sessions, 3 completed; `b`: 4 sessions, 2 completed; `c`: 3 sessions, 1 completed.
    static let events: [Event] = {
        var out: [Event] = []
        for (variation, sessions, completed) in [("a", 5, 3), ("b", 4, 2), ("c", 3, 1)] {
            for i in 0..<sessions {
                let id = "\(variation)\(i)"
                out.append(ev(Double(out.count), id, variation: variation, started))
                if i < completed {
                    out.append(ev(Double(out.count), id, screen: 3, variation: variation, completedEvent))
                }
            }
        }
        return out
    }()

    static func close(_ value: Value?, _ expected: Double) -> Bool {
        guard case .number(let x)? = value else { return false }
        return abs(x - expected) <= 1e-12
    }

    @Test func wilsonIntervalOfEachGroupsRate() throws {
        let table = try run("sessions | stats count(), rate(completed), ci(completed) by variation", Self.events)
        #expect(table.columns == ["variation", "count()", "rate(completed)", "ci_low", "ci_high"])
        let expected: [(String, Double, Double)] = [
            ("a", 0.23072428127601297, 0.8823792257673521), ("b", 0.15003898915214953, 0.8499610108478505),
        ]
        for (row, (variation, low, high)) in zip(table.rows, expected) {
            #expect(row[0] == .string(variation))
            #expect(Self.close(row[3], low), "\(variation) low: \(row[3])")
            #expect(Self.close(row[4], high), "\(variation) high: \(row[4])")
        }
    }

    @Test func levelAndNameGiveTheColumnsAndTheirWidth() throws {
        let table = try run(#"sessions | where variation == "c" | stats ci(completed, 0.9) as conv"#, Self.events)
        #expect(table.columns == ["conv_low", "conv_high"])
        #expect(Self.close(table.rows.first?[0], 0.07826572633372839))
        #expect(Self.close(table.rows.first?[1], 0.746466131718776))
    }

    @Test func intervalIsClampedAndAbsentWithoutRows() throws {
        let all = try run(#"sessions | where variation == "b" | stats ci(did(onboarding_started))"#, Self.events)
        #expect(Self.close(all.rows.first?[0], 0.5101091635454027))
        #expect(all.rows.first?[1] == .number(1))
        let none = try run(#"sessions | where variation == "zz" | stats count(), ci(completed)"#, Self.events)
        #expect(none.rows == [[.integer(0), .null, .null]])
    }

    @Test func intervalContainsTheRate() throws {
        var generator = SessionGenerator(seed: 0xC1)
        let events = generator.events()
        let table = try run("sessions | stats rate(paywall), ci(paywall, 0.99) by onboarding", events)
        #expect(!table.rows.isEmpty)
        for row in table.rows {
            guard case .number(let rate) = row[1], case .number(let low) = row[2], case .number(let high) = row[3]
            else {
                Issue.record("row without an interval: \(row)")
                continue
            }
            #expect(low <= rate && rate <= high && low >= 0 && high <= 1, "\(row)")
        }
    }

    @Test(arguments: [
        ("sessions | stats ci(completed, 1.5)", 32, "between 0 and 1"),
        ("sessions | stats ci(completed, 0)", 32, "between 0 and 1"),
        ("sessions | stats ci(completed, 95)", 32, "a level is a fraction"),
        ("sessions | stats ci(completed, 1)", 32, "between 0 and 1"),
        ("sessions | stats ci(completed, duration)", 32, "between 0 and 1"),
        ("sessions | stats ci()", 18, "takes 1 or 2 arguments"),
        ("sessions | stats ci(duration)", 21, "`ci`"),
        ("sessions | stats ci(completed), ci(paywall)", 33, "two columns are named `ci_low`"),
    ])
    func badArgumentsArePositionedErrors(text: String, column: Int, message: String) throws {
        do {
            _ = try Query.parse(text)
            Issue.record("no error for \(text)")
        } catch {
            #expect(error.kind == .type, "\(error)")
            #expect(error.location?.column == column, "\(error)")
            #expect(error.description.contains(message), "\(error)")
        }
    }
}
