import BoardwalkModel
import Testing

@testable import BoardwalkQuery

@Test(arguments: [
    ("30s", Int64(30_000_000)), ("5m", 300_000_000), ("1h", 3_600_000_000), ("7d", 604_800_000_000),
    ("250ms", 250_000), ("1.5s", 1_500_000), ("2w", 1_209_600_000_000),
])
func durationLiterals(text: String, microseconds: Int64) throws {
    let tokens = try Lexer.tokenize(text)
    #expect(tokens.map(\.kind) == [.duration, .end])
    #expect(tokens[0].microseconds == microseconds)
}

@Test(arguments: [("1e3", 1000.0), ("2.5E-2", 0.025), ("4e+1", 40.0)])
func scientificNotationIsANumber(text: String, value: Double) throws {
    let tokens = try Lexer.tokenize(text)
    #expect(tokens.map(\.kind) == [.decimal, .end])
    #expect(tokens[0].decimal == value)
    // `1e3s` is a duration of a thousand seconds; `1ex` still has an unknown unit.
    #expect(try Lexer.tokenize("1e3s")[0].microseconds == 1_000_000_000)
    #expect(throws: QueryError.self) { try Lexer.tokenize("1ex") }
}

@Test(arguments: [
    ("@2026-11-01", "2026-11-01T00:00:00.000000Z"), ("@2026-11-01T10:00:00Z", "2026-11-01T10:00:00.000000Z"),
    ("@2026-11-01T10:00:00+02:00", "2026-11-01T08:00:00.000000Z"),
])
func timestampLiterals(text: String, iso: String) throws {
    let tokens = try Lexer.tokenize(text)
    #expect(tokens[0].kind == .timestamp)
    #expect(Timestamp(microseconds: tokens[0].microseconds).iso8601 == iso)
}

@Test func everyNodeCarriesItsByteRange() throws {
    let text = #"sessions | where answer("experience") == "pro" and did(open_paywall) | count by exit"#
    let ast = try Parser.parse(text)
    let bytes = Array(text.utf8)
    func source(_ r: Range<Int>) -> String { String(decoding: bytes[r], as: UTF8.self) }
    #expect(source(ast.sourceRange) == "sessions")
    guard case .where(let predicate) = ast.stages[0].kind, case .binary(.and, let left, let right) = predicate.kind
    else {
        Issue.record("unexpected shape"); return
    }
    #expect(source(predicate.range) == #"answer("experience") == "pro" and did(open_paywall)"#)
    #expect(source(left.range) == #"answer("experience") == "pro""#)
    #expect(source(right.range) == "did(open_paywall)")
    #expect(source(ast.stages[1].range) == "count by exit")
    #expect(source(ast.stages[1].keywordRange) == "count")
}

@Test func relativeTimesAndListsParse() throws {
    let now = Timestamp(microseconds: base + 10 * 86_400 * second)
    let events = [ev(0, "a", presented), ev(9 * 86_400, "b", presented)]
    let q = try Query.parse(
        #"events | where time >= now() - 7d and kind in ["analytics", "close"] and name not in ["x"] | count"#)
    #expect(try q.run(on: InMemoryEventSource(events), options: .init(now: now)).rows == [[.integer(1)]])
}

@Test func precedenceOfAndOverOr() throws {
    let events = [
        ev(0, "a", screen: 0, presented), ev(1, "b", screen: 1, presented), ev(2, "c", screen: 2, .close(actionID: "")),
    ]
    // `or` binds looser: screen == 0 or (screen == 2 and kind == "close").
    #expect(
        try run(#"events | where screen == 0 or screen == 2 and kind == "close" | count"#, events).rows == [
            [.integer(2)]
        ])
    #expect(try run(#"events | where not screen == 0 | count"#, events).rows == [[.integer(2)]])
}

@Test func sortLimitSelectAndAliases() throws {
    let table = try run("events | count by name as event | sort count desc, event | limit 2 | select event", story)
    #expect(table.columns == ["event"])
    // screen_presented 8, state_updated 5, then onboarding_started 3.
    #expect(table.rows == [[.string("screen_presented")], [.string("state_updated")]])
    // Variation a: 40 s and 4 s, median 22 s; b: 25 s and 0 s, median 12.5 s.
    let stats = try run("sessions | stats p50(duration) as median by variation | sort median desc", story)
    #expect(stats.render(.csv) == "variation,median\na,22\nb,12.5\n")
    // An aggregate's column is referred to by its text.
    #expect(
        try run("sessions | stats p50(duration) by variation | sort p50(duration)", story).column("variation")
            == [.string("b"), .string("a")])
}

@Test func selectAfterAReductionRenamesWithAs() throws {
    // `as` in a `select` after the reduction names the output column (it was ignored: headers stayed exit,count).
    let renamed = try run("sessions | count by exit | select exit as e, count as n | sort n desc, e", story)
    #expect(renamed.columns == ["e", "n"])
    let plain = try run("sessions | count by exit | sort count desc, exit", story)
    #expect(renamed.rows == plain.rows)
    // The same column twice, under two names; a later select renames again.
    let twice = try run("sessions | count by exit | select count as a, count as b | select b as c, a", story)
    #expect(twice.columns == ["c", "a"])
    #expect(twice.rows == plain.rows.map { [$0[1], $0[1]] })
    // Listed rows, then a table select.
    let listed = try run("sessions | select session as s, exit as x | select x as outcome", story)
    #expect(listed.columns == ["outcome"])
    // ClickHouse names the columns the same way.
    let sql = try Query.parse("sessions | count by exit | select exit as e, count as n").clickHouseSQL(table: "t")
    #expect(sql.contains("__s0_0 AS `e`,\n    __s0_1 AS `n`"), "\(sql)")
}

@Test func rowCountsPastAnyResultMeanEveryRow() throws {
    // `limit Int64.max` trapped on an overflow in the listing's buffer bound; a count past 64 bits was a syntax error.
    let all = try run("events", story).rows.count
    for text in ["events | limit 9223372036854775807", "events | limit 100000000000000000000"] {
        #expect(try run(text, story).rows.count == all, "\(text)")
    }
    #expect(
        try run("events | top 100000000000000000000 name", story).rows.count
            == run("events | count by name", story).rows.count)
    // A whole number past 64 bits compares as the decimal it is, as `1e20` does.
    #expect(
        try run("events | where seq < 100000000000000000000 | count", story).rows == [[.integer(Int64(story.count))]])
    #expect(
        try run("events | where seq > -100000000000000000000 | count", story).rows
            == run("events | where seq > -1e20 | count", story).rows)
}

@Test func aFunnelWithoutWithinHasNoWindow() throws {
    // docs/query-language.md rule 4: without `within`, a chain may span the whole session however long.
    let year = 365 * 86_400.0
    let events = [
        ev(0, "a", presented), ev(year, "a", .openPaywall(actionID: "")), ev(2 * year, "a", .close(actionID: "")),
        ev(0, "b", presented), ev(1, "b", .close(actionID: "")),
    ]
    for mode in ["ordered", "strict", "any"] {
        let open = try run("sessions | funnel screen_presented, open_paywall, close mode \(mode)", events)
        #expect(open.column("sessions") == [.integer(2), .integer(1), .integer(1)], "\(mode)")
        let windowed = try run(
            "sessions | funnel screen_presented, open_paywall, close within 30d mode \(mode)", events)
        #expect(windowed.column("sessions") == [.integer(2), .integer(0), .integer(0)], "\(mode)")
    }
}

@Test func aListInParenthesesAfterInIsStillAList() throws {
    // `in (1, 2)` is an error with the bracketed form as the hint; `in ([…])` keeps working as it did.
    let events = [ev(0, "a", screen: 0, presented), ev(1, "b", screen: 2, presented)]
    #expect(try run("events | where screen in ([0, 1]) | count", events).rows == [[.integer(1)]])
    #expect(try run("events | where screen not in ([0, 1]) | count", events).rows == [[.integer(1)]])
}
