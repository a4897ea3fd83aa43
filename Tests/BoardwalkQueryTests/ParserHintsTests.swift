import Testing

@testable import BoardwalkQuery

// Errors an analyst meets say what belongs at the place they point to, after the caret. Each is rendered verbatim,
// as in DiagnosticSnapshotTests.

@Suite("Parser errors say what a missing or misplaced part should be")
struct ParserHintsTests {
    @Test(
        "a missing expression says what belongs there, with the source's own fields",
        arguments: [
            ("sessions | where", "a condition after `where`, e.g. `where completed`"),
            ("events | where", #"a condition after `where`, e.g. `where kind == "close"`"#),
            ("sessions | count by", "a field to group by after `by`, e.g. `by exit`"),
            ("events | count by , name", "a field to group by after `by`, e.g. `by name`"),
            ("sessions | top 3", "the field to rank after `top 3`, e.g. `top 3 exit`"),
            ("sessions | histogram", "a field to bucket after `histogram`, e.g. `histogram duration`"),
            ("sessions | histogram duration step", "the bucket width after `step`, e.g. `step 30s`"),
            ("events | sort", "a field or column to sort by after `sort`, e.g. `sort time desc`"),
            ("events | select", "a field or column after `select`, e.g. `select time, name`"),
            ("sessions | where completed and", "a condition after `and`"),
            ("events | where screen in", #"a list after `in`, e.g. `in ["a", "b"]`"#),
            ("events | where screen == | count", "a value after `==`"),
            ("sessions | where == 2", "a field before `==`, e.g. `furthest_screen == 2`"),
            ("sessions | stats count() by exit,", "another item after `,` (or no `,`)"),
        ])
    func missingExpression(query: String, label: String) {
        let rendered = diagnostic(query)
        #expect(rendered.hasPrefix("error: expected an expression, found "), "\(rendered)")
        #expect(rendered.hasSuffix("^ " + label) || rendered.hasSuffix("^^ " + label), "\(rendered)")
    }

    @Test("the whole diagnostic of a `where` left empty")
    func emptyWhereVerbatim() {
        #expect(
            diagnostic("events | where") == """
                error: expected an expression, found the end of the query
                 --> query:1:15
                1 | events | where
                  |               ^ a condition after `where`, e.g. `where kind == "close"`
                """)
    }

    @Test("an unclosed parenthesis names the `(` it would close")
    func unclosedParenthesis() {
        #expect(
            diagnostic("sessions | where ( did(open_paywall) | count") == """
                error: expected `)`, found `|`
                 --> query:1:38
                1 | sessions | where ( did(open_paywall) | count
                  |                                      ^ to close the `(` at column 18
                """)
        #expect(
            diagnostic("sessions | where (completed\n| count").hasSuffix("^ to close the `(` on line 1 of the query"))
    }

    @Test("an aggregate, a field or another language's stage written as a stage says where it goes")
    func misplacedStages() {
        #expect(
            diagnostic("sessions | max(total_screens)") == """
                error: unknown stage `max`
                 --> query:1:12
                1 | sessions | max(total_screens)
                  |            ^^^ `max` is an aggregate: write `| stats max(…)`
                """)
        #expect(
            diagnostic("sessions | exit").hasSuffix(
                "^^^^ `exit` is a field: e.g. `| count by exit`, `| top 5 exit` or `| select exit`"))
        #expect(diagnostic(#"events | filter kind == "close""#).hasSuffix("^^^^^^ Boardwalk writes this `where`"))
        #expect(
            diagnostic("events | group by name").hasSuffix("^^^^^ Boardwalk writes this `count by …` or `stats … by …`")
        )
        // A close stage name keeps its "did you mean" and no other label.
        #expect(
            diagnostic("events | coutn").hasSuffix(
                "did you mean `count`?\n --> query:1:10\n1 | events | coutn\n  |          ^^^^^"))
        // `screen` is a field of events, not of sessions: no field hint there.
        #expect(!diagnostic("sessions | screen").contains("is a field"))
    }

    @Test("a query without its source")
    func missingSource() {
        #expect(
            diagnostic("| count") == """
                error: expected `events` or `sessions`, found `|`
                 --> query:1:1
                1 | | count
                  | ^ a query starts with its source: `events | …` or `sessions | …`
                """)
    }

    @Test("arithmetic on aggregates and a `count` without `by`")
    func statsArithmeticAndCountWithoutBy() {
        #expect(
            diagnostic("sessions | stats sum(events) / count()").hasSuffix(
                "^ aggregates are columns of their own and do not combine: `rate(p)` gives a share, `avg(f)` a mean"))
        #expect(diagnostic("sessions | count exit").hasSuffix("^^^^ to count per value, write `count by exit`"))
    }
}
