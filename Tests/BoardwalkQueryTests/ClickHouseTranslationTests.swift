import BoardwalkModel
import Foundation
import Testing

@testable import BoardwalkQuery

/// The ClickHouse translation's shape: snapshots of whole statements, the compensations each semantics rule
/// needs, errors, and the exported rows. Whether the SQL gives Boardwalk's numbers is the differential test's
/// job (`scripts/clickhouse_diff.py`, run by CI against embedded ClickHouse).
@Suite("ClickHouse translation")
struct ClickHouseTranslationTests {
    func sql(_ text: String, table: String = ClickHouseTable.defaultName) throws -> String {
        try Query.parse(text).clickHouseSQL(table: table)
    }

    @Test("Snapshot: a filtered count by a key")
    func countSnapshot() throws {
        let expected = """
            SELECT
                __c0 AS `action`,
                __c1 AS `count`
            FROM (
                SELECT action AS __c0, count() AS __c1
                FROM boardwalk_events
                WHERE (ifNull(kind = 'close', false) AND ifNull(reply != 'no', false))
                GROUP BY __c0
            )
            ORDER BY __c0 ASC NULLS LAST
            """
        #expect(try sql(#"events | where kind == "close" and reply != "no" | count by action"#) == expected)
    }

    @Test("Snapshot: dwell statistics read the dwell expression and count censored presentations")
    func dwellSnapshot() throws {
        let expected = """
            WITH
            dw AS (
                SELECT
                    a[i].2 AS dw_seq,
                    arrayFirstIndex((z, k) -> k > i AND (z.5 OR ifNull(z.3 != a[i].3, false)), a, arrayEnumerate(a)) AS dw_end,
                    if(a[i].4 AND dw_end > 0, toFloat64(a[dw_end].1 - a[i].1), NULL) AS dwell,
                    a[i].4 AND dw_end = 0 AS censored
                FROM (
                    SELECT arraySort(z -> (z.1, z.2), groupArray((toUnixTimestamp64Micro(time), seq, screen,
                        kind = 'analytics' AND name = 'screen_presented' AND isNotNull(screen), (kind IN ('open_paywall', 'close', 'error') OR (kind = 'analytics' AND name = 'onboarding_completed'))))) AS a
                    FROM boardwalk_events
                    GROUP BY session
                )
                ARRAY JOIN arrayEnumerate(a) AS i
            )
            SELECT
                __c0 AS `screen`,
                __c1 / 1000000 AS `p50(dwell)`,
                __c2 AS `censored`
            FROM (
                SELECT screen AS __c0, quantileExactInclusiveOrNull(0.5)(toFloat64(dwell)) AS __c1, countIf(censored) AS __c2
                FROM boardwalk_events AS e INNER JOIN dw ON e.seq = dw.dw_seq
                WHERE ifNull(name = 'screen_presented', false)
                GROUP BY __c0
            )
            ORDER BY __c0 ASC NULLS LAST
            """
        #expect(try sql(#"events | where name == "screen_presented" | stats p50(dwell) by screen"#) == expected)
    }

    @Test("Snapshot: table stages number the rows so sort is stable and limit takes the first")
    func tableStagesSnapshot() throws {
        let expected = """
            SELECT
                __c0 AS `name`,
                __c1 AS `count`
            FROM (
                SELECT *
                FROM (
                    SELECT *, row_number() OVER (ORDER BY __c1 DESC NULLS LAST, __rn0) AS __rn1
                    FROM (
                        SELECT *, row_number() OVER (ORDER BY __c0 ASC NULLS LAST) AS __rn0
                        FROM (
                            SELECT name AS __c0, count() AS __c1
                            FROM boardwalk_events
                            GROUP BY __c0
                        )
                    )
                )
                ORDER BY __rn1
                LIMIT 5
            )
            ORDER BY __rn1
            """
        #expect(try sql("events | count by name | sort count desc | limit 5") == expected)
    }

    @Test("Rule 11: absent compares false, so `not`, `!=` and `not in` are wrapped, not left to SQL's NULL logic")
    func absentValues() throws {
        let text = try sql(#"events | where not (reply == "no") and element not in ["a", "b"] | count"#)
        #expect(text.contains("NOT ifNull(reply = 'no', false)"))
        #expect(
            text.contains("(isNotNull(element) AND NOT (ifNull(element = 'a', false) OR ifNull(element = 'b', false)))")
        )
        // Division by zero is absent, not inf.
        #expect(try sql("events | stats sum(screen / 0)").contains("if(0 = 0, NULL, toFloat64(screen) / 0)"))
    }

    @Test("Rule 9: answers compare per shape, explode when grouped, and come back as JSON text")
    func answers() throws {
        let text = try sql(#"sessions | where answer("interests") == "music" | count by answer("interests")"#)
        #expect(text.hasPrefix("-- answer columns (JSON text): [\"answer(\\\"interests\\\")\"]\n"))
        // The fifth element is the instant of a whole date (rule 9), read from a date picker's text.
        #expect(
            text.contains(
                "argMaxIf((value_kind, value_string, value_number, value_set, if(ifNull(value_kind = 'string' AND "
                    + "element_type = 'date_picker' AND match(value_string, '^[0-9]{4}-[0-9]{2}-[0-9]{2}$')"))
        #expect(text.contains("(time, seq), kind = 'state_updated' AND element = 'interests') AS a0"))
        let dates = try sql(#"sessions | where answer("birthday") < @2000-01-01 | count by year(answer("birthday"))"#)
        #expect(dates.contains("ifNull((a0.5 < toInt64(946684800000000)), false)"))
        #expect(dates.contains("toYear(fromUnixTimestamp64Micro(toInt64(a0.5), 'UTC'))"))
        #expect(text.contains("(a0.1 = 'set' AND has(a0.4, 'music'))"))
        #expect(text.contains("arrayJoin(multiIf(a0.1 = 'string'"))
        #expect(text.contains("[NULL]))"))
        #expect(!(try sql("events | count by kind")).hasPrefix("--"))
    }

    @Test("Rule 6 and rule 11: exact linear percentiles, absent over no rows; count-like aggregates give 0")
    func aggregates() throws {
        let text = try sql("sessions | stats percentile(duration, 0.42), avg(events), sum(events), rate(completed)")
        #expect(text.contains("quantileExactInclusiveOrNull(0.42)(toFloat64(s_duration))"))
        #expect(text.contains("avgOrNull(toFloat64(s_events))"))
        // `events` is an integer: summed exactly, absent past 64 bits (IntegerSumTests).
        #expect(text.contains("accurateCastOrNull(ifNull(sumOrNull(toInt128(s_events)), toInt128(0)), 'Int64')"))
        #expect(text.contains("if(count() = 0, NULL, countIf(ifNull(s_completed, false)) / count())"))
        #expect(try sql("events | stats avg(value)").contains("avgIfOrNull(value_number, value_kind = 'number')"))
    }

    @Test("Funnels: the strict mode bounds each step by the next non-ignored event; any mode anchors windows")
    func funnels() throws {
        let strict = try sql("sessions | funnel open_paywall, close within 10m mode strict ignoring (state_updated)")
        #expect(strict.contains("AS nx"))
        #expect(strict.contains("a[j].1 - a[s].1 <= 600000000"))
        #expect(strict.contains("UNION ALL"))  // steps listed even with no session in scope
        let ordered = try sql("sessions | funnel open_paywall, close by variation")
        #expect(!ordered.contains("AS nx"))
        #expect(!ordered.contains("UNION ALL"))
        #expect(ordered.contains("1 AS __breakdown"))
        let any = try sql("sessions | funnel open_paywall, close within 1m mode any")
        #expect(any.contains("a[i].1 >= a[s].1 AND a[i].1 - a[s].1 <= 60000000"))
        let screens = try sql("sessions | funnel")
        #expect(screens.contains("max(ss) OVER () AS gs") && screens.contains("ARRAY JOIN range(toUInt64(gs))"))
        #expect(try sql("sessions | funnel by variation").contains("max(ss) OVER (PARTITION BY __k0) AS gs"))
    }

    @Test("Strings and names are quoted for ClickHouse")
    func quoting() throws {
        let text = try sql(#"events | where action == "it's \\ \"q\"\n" | count by name as n"#, table: "my-db.events")
        #expect(text.contains(#"'it\'s \\ "q"\n'"#))
        #expect(text.contains("FROM `my-db.events`"))
        #expect(text.contains("__c0 AS `n`"))
        #expect(
            try sql("events | count", table: "analytics.boardwalk_events").contains("FROM analytics.boardwalk_events"))
    }

    @Test("`explain` cannot be translated: a type error pointing at the stage")
    func explainIsRefused() throws {
        let query = try Query.parse("events | count | explain")
        #expect {
            _ = try query.clickHouseSQL()
        } throws: { error in
            guard let error = error as? QueryError else { return false }
            return error.kind == .type && error.message.contains("`explain`") && error.range == 17..<24
                && error.description.contains("^^^^^^^ drop `| explain`")
        }
    }

    @Test("Funnels whose SQL would pass ClickHouse's query size limit are refused, with the limit in the message")
    func longFunnelsAreRefused() throws {
        func steps(_ n: Int) -> String { (0..<n).map { "screen_presented(screen == \($0))" }.joined(separator: ", ") }
        for (mode, most) in [("strict", 4), ("ordered", 7)] {
            _ = try Query.parse("sessions | funnel \(steps(most)) mode \(mode)").clickHouseSQL()
            #expect {
                _ = try Query.parse("sessions | funnel \(steps(most + 1)) mode \(mode)").clickHouseSQL()
            } throws: { error in
                let error = error as? QueryError
                let article = mode == "ordered" ? "an" : "a"
                // The caret under the funnel stage (from byte 11, after "sessions | ").
                return error?.message
                    == "cannot translate to ClickHouse: \(article) \(mode) funnel of \(most + 1) steps: its SQL "
                    + "would pass ClickHouse's query size limit (at most \(most) steps translate)"
                    && error?.range?.lowerBound == 11
                    && error?.description.contains("^^^ run this funnel in Boardwalk, or split it") == true
            }
        }
        _ = try Query.parse("sessions | funnel \(steps(12)) mode any").clickHouseSQL()
    }

    @Test("Every generated query and funnel translates")
    func generatedQueriesTranslate() throws {
        var generator = QueryGenerator(seed: 0xC1C)
        var answerColumns = 0
        for i in 0..<600 {
            let text = i % 3 == 0 ? generator.funnelQuery() : generator.query()
            let query = try Query.parse(text)
            let sql = try query.clickHouseSQL()
            #expect(sql.contains("SELECT"), "\(text)")
            if sql.hasPrefix("-- answer columns") { answerColumns += 1 }
        }
        #expect(answerColumns > 0)
    }

    // MARK: Exported rows

    static let columns = [
        "seq", "time", "kind", "name", "onboarding", "screen", "screen_cid", "total_screens", "session", "profile",
        "event_id", "placement", "variation", "action", "element", "element_type", "reply", "value_kind",
        "value_string", "value_number", "value_set", "label_kind", "label_string", "label_set", "option_kind",
        "option_string", "option_set", "input_type", "error_domain",
        "error_code", "error_message",
    ]

    func row(_ event: Event, seq: UInt64 = 7) throws -> [String: Any] {
        let line = ClickHouseTable.row(seq: seq, event: event)
        #expect(line.hasSuffix("}\n") && line.filter { $0 == "\n" }.count == 1)
        return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    @Test("The schema lists exactly the columns each row has, in order")
    func schemaMatchesRows() throws {
        let ddl = ClickHouseTable.createStatement()
        let declared = ddl.split(separator: "\n").compactMap { line -> String? in
            let parts = line.trimmingCharacters(in: .whitespaces).split(separator: " ")
            guard parts.count >= 2, Self.columns.contains(String(parts[0])) else { return nil }
            return String(parts[0])
        }
        #expect(declared == Self.columns)
        #expect(ddl.contains("ORDER BY (onboarding, screen, time, seq)"))
        let line = ClickHouseTable.row(
            seq: 1, event: Event(time: Timestamp(microseconds: 0), meta: nil, payload: .onboardingLoaded))
        let keys = line.split(separator: ",").compactMap { part -> String? in
            guard let start = part.firstIndex(of: "\""), let colon = part.range(of: "\":") else { return nil }
            return String(part[part.index(after: start)..<colon.lowerBound])
        }
        #expect(keys == Self.columns)
    }

    @Test("Rows: times in ClickHouse's input form, empty ids absent, answers split by shape")
    func rows() throws {
        let meta = Meta(onboardingID: "onb", screenClientID: "q1", screenIndex: 2, totalScreens: 5)
        let choices = [
            Choice(id: "1", value: "work", label: "Work"), Choice(id: "2", value: "art", label: "Art"),
            Choice(id: "3", value: "work", label: "Work"),
        ]
        let multi = try row(
            Event(
                time: Timestamp(microseconds: 1_793_491_200_123_456), session: "s", profile: "",
                eventID: "e", meta: meta,
                payload: .stateUpdated(StateUpdate(elementID: "interests", value: .multiSelect(choices)))))
        #expect(multi["time"] as? String == "2026-11-01 00:00:00.123456")
        #expect(multi["seq"] as? Int == 7)
        #expect(multi["profile"] is NSNull)
        #expect(multi["screen"] as? Int == 2)
        #expect(multi["value_kind"] as? String == "set")
        #expect(multi["value_set"] as? [String] == ["art", "work"])
        #expect(multi["label_set"] as? [String] == ["Art", "Work"])
        #expect(multi["value_string"] is NSNull && multi["value_number"] is NSNull)

        let number = try row(
            Event(
                time: Timestamp(microseconds: 0), session: "s", meta: meta,
                payload: .stateUpdated(StateUpdate(elementID: "age", value: .input(.number(25.5))))))
        #expect(number["value_kind"] as? String == "number" && number["value_number"] as? Double == 25.5)
        #expect(number["label_kind"] as? String == "")

        let text = try row(
            Event(
                time: Timestamp(microseconds: 0), session: "s", meta: meta,
                payload: .stateUpdated(StateUpdate(elementID: "name", value: .input(.text("a \"b\"\n\t\\"))))))
        #expect(text["value_string"] as? String == "a \"b\"\n\t\\")

        let date = try row(
            Event(
                time: Timestamp(microseconds: 0), session: "s", meta: meta,
                payload: .stateUpdated(
                    StateUpdate(elementID: "born", value: .datePicker(DateParts(year: 1995, month: 3))))))
        #expect(date["value_string"] as? String == "1995-03-??")

        let completed = try row(
            Event(
                time: Timestamp(microseconds: 0), session: "s", meta: meta,
                payload: .analytics(.screenCompleted(elementID: "", reply: ""))))
        #expect(completed["element"] is NSNull && completed["reply"] is NSNull)
        #expect(completed["name"] as? String == "screen_completed")

        let error = try row(
            Event(
                time: Timestamp(microseconds: -1), session: "inferred:3", meta: nil,
                payload: .error(OnboardingError(domain: "net", code: -9, message: "down"))))
        #expect(error["onboarding"] is NSNull && error["screen"] is NSNull)
        #expect(error["time"] as? String == "1969-12-31 23:59:59.999999")
        #expect(error["session"] as? String == "inferred:3")
        #expect(error["error_code"] as? Int == -9)

        let paywall = try row(
            Event(time: Timestamp(microseconds: 0), session: "s", meta: meta, payload: .openPaywall(actionID: "")))
        #expect(paywall["action"] as? String == "")
        #expect(paywall["name"] as? String == "open_paywall")
    }
}
