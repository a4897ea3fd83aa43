import BoardwalkModel
import Testing

@testable import BoardwalkQuery

/// Integer arithmetic on result columns in the ClickHouse translation: `+ - *` of integers past
/// 64 bits is absent in Boardwalk (docs/query-language.md), so stages after a reduction must compute it in 128
/// bits and cast back with `accurateCastOrNull`, as they do on event and session fields; ClickHouse's own
/// `Int64`/`UInt64` arithmetic on `count()` and the like wraps. These tests pin the SQL's shape and check the
/// translator's idea of which columns hold integers against the values Boardwalk computes; whether the SQL
/// gives Boardwalk's rows is `scripts/clickhouse_diff.py`'s job.
@Suite("ClickHouse: integer result columns")
struct ClickHouseColumnIntegerTests {
    func sql(_ text: String) throws -> String {
        try Query.parse(text).clickHouseSQL()
    }

    /// The `integer` flags of the result's columns, by name.
    func integerColumns(_ text: String) throws -> [String: Bool] {
        var translator = ClickHouseTranslator(query: try Query.parse(text).checked, table: ClickHouseTable.defaultName)
        _ = try translator.translate()
        return Dictionary(uniqueKeysWithValues: translator.resultColumns.map { ($0.name, $0.integer) })
    }

    @Test("Snapshot: a count times a large literal is exact in 128 bits and absent past 64")
    func countSnapshot() throws {
        let expected = """
            SELECT
                __c0 AS `screen`,
                __c1 AS `count`
            FROM (
                SELECT *
                FROM (
                    SELECT *, row_number() OVER (ORDER BY __c0 ASC NULLS LAST) AS __rn0
                    FROM (
                        SELECT screen AS __c0, count() AS __c1
                        FROM boardwalk_events
                        GROUP BY __c0
                    )
                )
                WHERE ifNull(accurateCastOrNull((toInt128(__c1) * toInt128(4000000000000000000)), 'Int64') > 0, false)
            )
            ORDER BY __rn0
            """
        #expect(try sql("events | count by screen | where count * 4000000000000000000 > 0") == expected)
    }

    /// Queries whose table stage computes on integer columns, and the exact arithmetic each must contain.
    static let exact: [(query: String, fragment: String)] = [
        (
            "sessions | stats sum(events) as s by onboarding | where s * 3000000000000000000 > 0",
            "accurateCastOrNull((toInt128(__c1) * toInt128(3000000000000000000)), 'Int64') > 0"
        ),
        // count(x) and count_distinct, added and subtracted.
        (
            "events | stats count(reply) as r, count_distinct(session) as d | where r + d > 0",
            "accurateCastOrNull((toInt128(__c0) + toInt128(__c1)), 'Int64') > 0"
        ),
        (
            "events | stats count_distinct(session) as d | where d - 9223372036854775000 - 1000 < 0",
            "accurateCastOrNull((toInt128(accurateCastOrNull((toInt128(__c0) - toInt128(9223372036854775000)), 'Int64')) - toInt128(1000)), 'Int64') < 0"
        ),
        // min and max of an integer field, and negation of a column.
        (
            "events | stats max(seq) as m by kind | where -m * 2 < 0",
            "accurateCastOrNull((toInt128(accurateCastOrNull(-toInt128(__c1), 'Int64')) * toInt128(2)), 'Int64') < 0"
        ),
        (
            "sessions | stats min(furthest_screen) as f | where f * f > 1",
            "accurateCastOrNull((toInt128(__c0) * toInt128(__c0)), 'Int64') > 1"
        ),
        // An integer key, and the count of `top`.
        (
            "sessions | top 3 furthest_screen | where furthest_screen * count > 0",
            "accurateCastOrNull((toInt128(__c0) * toInt128(__c1)), 'Int64') > 0"
        ),
        // An integer `by` expression stays one.
        (
            "events | count by screen * 2 as s | where s + 1 > 0",
            "accurateCastOrNull((toInt128(__c0) + toInt128(1)), 'Int64') > 0"
        ),
        // The censored count beside dwell aggregates.
        (
            "events | stats p50(dwell) | where censored * 2 > 0",
            "accurateCastOrNull((toInt128(__c1) * toInt128(2)), 'Int64') > 0"
        ),
        // A funnel's step numbers and counts, renamed by `select … as` (the flag follows the column).
        (
            "sessions | funnel screen_presented, screen_completed | select step, sessions as s | where s * step > 0",
            "accurateCastOrNull((toInt128(__s0_1) * toInt128(__s0_0)), 'Int64') > 0"
        ),
        (
            "sessions | funnel | where dropoff - sessions < 0",
            "accurateCastOrNull((toInt128(dropoff) - toInt128(sessions)), 'Int64') < 0"
        ),
        // Listed rows: an integer expression, then arithmetic on its column.
        (
            "events | select seq * 1000 as big | where big + big > 0",
            "accurateCastOrNull((toInt128(__c0) + toInt128(__c0)), 'Int64') > 0"
        ),
    ]

    @Test("`+ - *` and negation of integer result columns take the 128-bit path", arguments: exact)
    func integerColumnsAreExact(_ example: (query: String, fragment: String)) throws {
        let text = try sql(example.query)
        #expect(text.contains(example.fragment), "\(example.query)\n\(text)")
    }

    /// Queries whose table stage computes on numbers that are not integers in Boardwalk, and the plain
    /// arithmetic each keeps: `toInt128` would truncate them.
    static let inexact: [(query: String, fragment: String)] = [
        (
            "events | stats avg(screen) as a, p50(screen) as p, rate(screen == 1) as r | where a * 2 > 0 and p - 1 > 0 and r + 1 > 0",
            "((ifNull((__c0 * 2) > 0, false) AND ifNull((__c1 - 1) > 0, false)) AND ifNull((__c2 + 1) > 0, false))"
        ),
        // A sum of answers is a floating-point sum; so is one of a quotient.
        ("events | stats sum(value) as v, sum(screen / 2) as h | where v * 2 > h", "ifNull((__c0 * 2) > __c1, false)"),
        ("events | histogram screen step 2 | where bucket * 2 > 0", "ifNull((__c0 * 2) > 0, false)"),
        ("sessions | funnel | where pct_of_first * 2 > 0", "ifNull((pct_of_first * 2) > 0, false)"),
        ("events | count by screen / 2 as h | where h * count > 0", "ifNull((__c0 * __c1) > 0, false)"),
    ]

    @Test("Arithmetic on non-integer number columns stays floating point", arguments: inexact)
    func numberColumnsAreNotTruncated(_ example: (query: String, fragment: String)) throws {
        let text = try sql(example.query)
        #expect(text.contains(example.fragment), "\(example.query)\n\(text)")
        #expect(
            !text.contains("toInt128(__c0)") && !text.contains("toInt128(pct_of_first)"), "\(example.query)\n\(text)")
    }

    @Test("The integer flags of each reduction's columns")
    func flags() throws {
        #expect(try integerColumns("events | count by screen, kind") == ["screen": true, "kind": false, "count": true])
        #expect(
            try integerColumns(
                "events | stats count(), count(reply), count_distinct(value), sum(screen), sum(value), "
                    + "sum(dwell), min(seq), max(value), avg(screen), p50(screen), rate(screen == 1) by value")
                == [
                    "value": false, "count()": true, "count(reply)": true, "count_distinct(value)": true,
                    "sum(screen)": true,
                    "sum(value)": false, "sum(dwell)": false, "min(seq)": true, "max(value)": false,
                    "avg(screen)": false,
                    "p50(screen)": false, "rate(screen==1)": false, "censored": true,
                ])
        #expect(try integerColumns("sessions | top 2 answer(\"age\")") == ["answer(\"age\")": false, "count": true])
        #expect(try integerColumns("sessions | histogram events") == ["bucket": false, "count": true])
        #expect(
            try integerColumns("sessions | funnel by screen") == [
                "screen": true, "breakdown_step": true, "step": true, "screen_cid": false, "sessions": true,
                "pct_of_first": false,
                "pct_of_previous": false, "dropoff": true, "median_time": false,
            ])
        #expect(
            try integerColumns("events | select seq + 1 as next, seq / 2 as half, -screen as back, value")
                == ["next": true, "half": false, "back": true, "value": false])
        #expect(
            try integerColumns("sessions | stats sum(events) as s, avg(events) as a | select a, s as total")
                == ["a": false, "total": true])
    }

    /// Generated queries (every family, table stages included) run on generated sessions: a column the
    /// translator calls integer holds only integers, and a number column it does not holds none, so the SQL
    /// computes on each column as Boardwalk does.
    @Test("The flags agree with the values Boardwalk computes", arguments: [UInt64(1), 2, 3, 4])
    func flagsAgreeWithTheEngine(seed: UInt64) throws {
        var sessions = SessionGenerator(seed: seed)
        var events: [Event] = []
        while events.count < 40 { events += sessions.events() }
        var queries = QueryGenerator(seed: seed &* 0x9E37)
        var texts = (0..<150).map { i in i % 4 == 0 ? queries.funnelQuery() : queries.query() }
        texts += Self.exact.map(\.query) + Self.inexact.map(\.query)
        var integersSeen = 0
        for text in texts {
            let query = try Query.parse(text)
            var translator = ClickHouseTranslator(query: query.checked, table: ClickHouseTable.defaultName)
            _ = try translator.translate()
            let table = try run(text, events)
            let columns = translator.resultColumns
            try #require(columns.count == table.columns.count, "\(text)")
            // Over no numeric rows, a sum is the integer 0 in Boardwalk whatever its argument (and 0 in the SQL).
            var sums: Set<String> = []
            if case .stats(let aggregates, let by, _) = query.checked.reduction {
                for (j, a) in aggregates.enumerated() where a.function == .sum { sums.insert("__c\(by.count + j)") }
            }
            for (i, column) in columns.enumerated() {
                for row in table.rows {
                    switch row[i] {
                    case .integer:
                        let emptySum = row[i] == .integer(0) && sums.contains(column.sql)
                        #expect(
                            column.integer || emptySum,
                            "\(text): `\(column.name)` holds \(row[i]) but is not flagged integer")
                        integersSeen += 1
                    case .null:
                        break
                    default:
                        #expect(!column.integer, "\(text): `\(column.name)` is flagged integer but holds \(row[i])")
                    }
                }
            }
        }
        #expect(integersSeen > 100)
    }
}
