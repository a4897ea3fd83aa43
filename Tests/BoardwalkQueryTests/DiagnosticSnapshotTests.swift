import Testing

@testable import BoardwalkQuery

// Rendered diagnostics, verbatim. A change here is a change users see.

@Test func unknownFieldSuggestsAField() {
    #expect(
        diagnostic("events | where screen_idx == 2") == """
            error: unknown field `screen_idx`; did you mean `screen`?
             --> query:1:16
            1 | events | where screen_idx == 2
              |                ^^^^^^^^^^
            """)
}

@Test func missingFieldAfterWhere() {
    #expect(
        diagnostic(#"events | where = "x""#) == """
            error: expected `==`, found `=`
             --> query:1:16
            1 | events | where = "x"
              |                ^ use `==` to compare
            """)
    #expect(
        diagnostic("events | where") == """
            error: expected an expression, found the end of the query
             --> query:1:15
            1 | events | where
              |               ^ a condition after `where`, e.g. `where kind == "close"`
            """)
}

@Test func percentileOfAStringIsATypeError() {
    #expect(
        diagnostic("events | stats p50(kind)") == """
            error: `p50` needs a number or a duration; `kind` is a string
             --> query:1:20
            1 | events | stats p50(kind)
              |                    ^^^^
            """)
}

@Test func unknownAggregateSuggestsAnAggregate() {
    #expect(
        diagnostic("sessions | stats p5O(duration)") == """
            error: unknown aggregate `p5O`; did you mean `p50`?
             --> query:1:18
            1 | sessions | stats p5O(duration)
              |                  ^^^
            """)
}

@Test func comparingADurationWithAStringIsATypeError() {
    #expect(
        diagnostic(#"sessions | where duration == "long""#) == """
            error: cannot compare a duration with a string
             --> query:1:18
            1 | sessions | where duration == "long"
              |                  ^^^^^^^^^^^^^^^^^^ `duration` is a duration, `"long"` is a string; write a duration as `30s`, `5m`, `1h` or `7d`
            """)
}

@Test func aTimestampWrittenAsAStringGetsTheLiteralSyntax() {
    #expect(
        diagnostic(#"events | where time >= "2026-11-01""#) == """
            error: cannot compare a timestamp with a string
             --> query:1:16
            1 | events | where time >= "2026-11-01"
              |                ^^^^^^^^^^^^^^^^^^^^ `time` is a timestamp, `"2026-11-01"` is a string; write a timestamp as `@2026-11-01` or `@2026-11-01T10:00:00Z`
            """)
}

@Test func swappedLettersStillGetASuggestion() {
    #expect(
        diagnostic("events | coutn") == """
            error: unknown stage `coutn`; did you mean `count`?
             --> query:1:10
            1 | events | coutn
              |          ^^^^^
            """)
    #expect(editDistance("cuont", "count") == 1)
    #expect(editDistance("ab", "ba") == 1)
    #expect(editDistance("abc", "ca") == 3)
}

@Test func sessionFieldsInAFunnelStepSayWhyNotHow() {
    // A breakdown may be what the session is; a step's condition is about one event.
    #expect(diagnostic("sessions | funnel screen_presented, open_paywall by exit") == "no error")
    #expect(
        diagnostic(#"sessions | funnel screen_presented(exit == "closed"), open_paywall"#) == """
            error: `exit` describes the session; a funnel step's condition reads the event's fields
             --> query:1:36
            1 | sessions | funnel screen_presented(exit == "closed"), open_paywall
              |                                    ^^^^ filter sessions with a `where` before the funnel, or break the funnel down `by exit`
            """)
    #expect(
        diagnostic("sessions | funnel screen_presented(session.completed), open_paywall").hasPrefix(
            "error: `session.completed` describes the session; a funnel step's condition reads the event's fields"))
}

@Test func aDecimalRowCountIsNamedAsSuch() {
    #expect(
        diagnostic("events | limit 1.5") == """
            error: expected a number of rows, found the decimal `1.5`
             --> query:1:16
            1 | events | limit 1.5
              |                ^^^ a number of rows after `limit`
            """)
}

@Test func unknownKindValueSuggestsAKind() {
    #expect(
        diagnostic(#"events | where kind == "analytic""#) == """
            error: unknown event kind `analytic`; did you mean `analytics`?
             --> query:1:24
            1 | events | where kind == "analytic"
              |                        ^^^^^^^^^^ one of: analytics, state_updated, open_paywall, custom, close, onboarding_loaded, error
            """)
}

@Test func unknownSourceAndStage() {
    #expect(
        diagnostic("sesions | count") == """
            error: unknown source `sesions`; did you mean `sessions`?
             --> query:1:1
            1 | sesions | count
              | ^^^^^^^ a query starts with `events` or `sessions`
            """)
    #expect(
        diagnostic("explain events | count") == """
            error: `explain` is a stage, not a source: start with `events |` or `sessions |`
             --> query:1:1
            1 | explain events | count
              | ^^^^^^^ a query starts with `events` or `sessions`
            """)
    #expect(
        diagnostic("events | cout") == """
            error: unknown stage `cout`; did you mean `count`?
             --> query:1:10
            1 | events | cout
              |          ^^^^
            """)
}

@Test func fieldOfTheOtherSource() {
    #expect(
        diagnostic("events | where completed") == """
            error: `completed` is a field of `sessions`, not of events
             --> query:1:16
            1 | events | where completed
              |                ^^^^^^^^^ start the query with `sessions` to use it
            """)
}

@Test func unknownEventInDidSuggestsAnEvent() {
    #expect(
        diagnostic("sessions | where did(open_paywal)") == """
            error: unknown event `open_paywal`; did you mean `open_paywall`?
             --> query:1:22
            1 | sessions | where did(open_paywal)
              |                      ^^^^^^^^^^^ an event kind or analytics name; quote other names
            """)
}

@Test func literalErrors() {
    #expect(
        diagnostic(#"events | where name == "x"#) == """
            error: unterminated string
             --> query:1:24
            1 | events | where name == "x
              |                        ^^ this string has no closing `"`
            """)
    #expect(
        diagnostic("events | where time > @2026-13-01") == """
            error: invalid timestamp `@2026-13-01`
             --> query:1:23
            1 | events | where time > @2026-13-01
              |                       ^^^^^^^^^^^ month 13 does not exist
            """)
    // A timestamp in the right shape says what is wrong with it; one in another shape, the shapes.
    #expect(
        diagnostic("events | where time > @2026-02-29") == """
            error: invalid timestamp `@2026-02-29`
             --> query:1:23
            1 | events | where time > @2026-02-29
              |                       ^^^^^^^^^^^ day 29: that month has 28 days
            """)
    for (text, label) in [
        ("@2028-02-30", "day 30: that month has 29 days"),
        ("@1969-12-31", "before 1970-01-01: times are stored from the Unix epoch on"),
        ("@2026-11-01T24:00:00Z", "hour 24 is past 23"), ("@2026-11-01T10:60Z", "minute 60 is past 59"),
        ("@2026-11-01T10:00:60Z", "second 60 is past 59"),
        ("@2026-1-01", "expected @YYYY-MM-DD or @YYYY-MM-DDTHH:MM:SSZ"),
        ("@2026-11-01T10:00:00Q", "expected @YYYY-MM-DD or @YYYY-MM-DDTHH:MM:SSZ"),
    ] {
        #expect(diagnostic("events | where time > \(text)").hasSuffix(" \(label)"), "\(text)")
    }
    #expect(
        diagnostic("events | where time > now() - 7y") == """
            error: unknown duration unit `y`
             --> query:1:32
            1 | events | where time > now() - 7y
              |                                ^ units: us, ms, s, m, h, d, w
            """)
}

@Test func unknownColumnSuggestsAColumn() {
    #expect(
        diagnostic("events | count by name | sort cnt") == """
            error: unknown column `cnt`; did you mean `count`?
             --> query:1:31
            1 | events | count by name | sort cnt
              |                               ^^^ columns: name, count
            """)
}

@Test func stagesInTheWrongPlace() {
    #expect(
        diagnostic("events | funnel") == """
            error: `funnel` reads sessions; start the query with `sessions`
             --> query:1:10
            1 | events | funnel
              |          ^^^^^^
            """)
    #expect(
        diagnostic("sessions | count | funnel") == """
            error: `funnel` reads sessions; it cannot follow `count`
             --> query:1:20
            1 | sessions | count | funnel
              |                    ^^^^^^ a funnel comes right after the `where` stages of `sessions`
            """)
    #expect(
        diagnostic("events |") == """
            error: expected a stage, found the end of the query
             --> query:1:9
            1 | events |
              |         ^ a stage after `|`
            """)
}

@Test func aggregateInsideWhere() {
    #expect(
        diagnostic("events | where p50(screen) > 1") == """
            error: `p50` is an aggregate; use it in `stats`
             --> query:1:16
            1 | events | where p50(screen) > 1
              |                ^^^
            """)
}

@Test func columnsCountCharactersAndLinesCount() {
    // The column counts characters (é is two bytes), and the second line is reported as line 2.
    #expect(
        diagnostic("events | where name == \"é\"\n  and scren == 1") == """
            error: unknown field `scren`; did you mean `screen`?
             --> query:2:7
            2 |   and scren == 1
              |       ^^^^^
            """)
    #expect(
        diagnostic(#"events | where name == "é" and scren == 1"#) == """
            error: unknown field `scren`; did you mean `screen`?
             --> query:1:32
            1 | events | where name == "é" and scren == 1
              |                                ^^^^^
            """)
}

@Test func suggestionsAreOfTheRightKindOnly() {
    // `cout` is close to the aggregate `count`, but a field is expected: no aggregate is suggested.
    #expect(diagnostic("events | where cout > 1").hasPrefix("error: unknown field `cout`\n"))
    // `screen` is a field, not an aggregate: no field is suggested for an aggregate.
    #expect(diagnostic("events | stats screen").hasPrefix("error: unknown aggregate `screen`\n"))
}

@Test func caretsAndTablesCountWideCharactersAsTwoColumns() {
    // `中文` takes four terminal columns, not two: the caret must still land under `bogus`.
    #expect(
        diagnostic(#"events | where value == "中文" or bogus == 1"#) == """
            error: unknown field `bogus`
             --> query:1:33
            1 | events | where value == "中文" or bogus == 1
              |                                   ^^^^^
            """)
    let table = ResultTable(
        columns: ["value", "count"], rows: [[.string("李雷"), .integer(3)], [.string("Anna"), .integer(12)]])
    #expect(
        table.render(.table) == """
            value  count
            -----  -----
            李雷       3
            Anna      12

            """)
}

@Test func aFunnelClauseGivenTwiceIsAnError() {
    #expect(
        diagnostic("sessions | funnel custom, close within 30m within 1h") == """
            error: `within` is given twice in this funnel
             --> query:1:44
            1 | sessions | funnel custom, close within 30m within 1h
              |                                            ^^^^^^ keep one `within` clause
            """)
}

/// `now` without its parentheses, and a timestamp with a space for its `T`.
@Test func nowWithoutParenthesesAndATimestampWithASpace() {
    #expect(
        diagnostic("events | where time > now - 7d | count") == """
            error: unknown field `now`; did you mean `now()`?
             --> query:1:23
            1 | events | where time > now - 7d | count
              |                       ^^^
            """)
    #expect(
        diagnostic("events | where time >= @2026-11-01 10:00:00 | count") == """
            error: unexpected character `:`
             --> query:1:38
            1 | events | where time >= @2026-11-01 10:00:00 | count
              |                                      ^ a timestamp joins date and time with `T`: `@2026-11-01T10:00:00Z`
            """)
}

/// `ignoring` takes a quoted analytics name outside the known list, as a step does (from the user's pass); an
/// unquoted unknown name is still an error.
@Test func ignoringTakesAQuotedUnknownName() throws {
    _ = try Query.parse(
        #"sessions | funnel onboarding_started, "navigation_failed" mode strict ignoring ("navigation_failed")"#)
    #expect(
        diagnostic("sessions | funnel onboarding_started, screen_presented mode strict ignoring (navigation_failed)")
            == """
            error: unknown event kind `navigation_failed`
             --> query:1:78
            1 | sessions | funnel onboarding_started, screen_presented mode strict ignoring (navigation_failed)
              |                                                                              ^^^^^^^^^^^^^^^^^ an event kind or analytics name; quote other names
            """)
}

/// An event name close to a known one is a note, not an error: the query runs as written (unknown names arrive
/// verbatim), but the likely typo is pointed at. Names far from every known one, and known ones, get no note.
@Test func aNameCloseToAKnownOneGetsANote() throws {
    let query = try Query.parse(
        #"events | where name == "screen_presnted" or name in ["navigation_failed", "onboarding_complete"] | count"#)
    #expect(
        query.notes.map(\.description) == [
            """
            note: no known event is named `screen_presnted`; did you mean `screen_presented`?
             --> query:1:24
            1 | events | where name == "screen_presnted" or name in ["navigation_failed", "onboarding_complete"] | count
              |                        ^^^^^^^^^^^^^^^^^ other names are matched as written
            """,
            """
            note: no known event is named `onboarding_complete`; did you mean `onboarding_completed`?
             --> query:1:75
            1 | events | where name == "screen_presnted" or name in ["navigation_failed", "onboarding_complete"] | count
              |                                                                           ^^^^^^^^^^^^^^^^^^^^^ other names are matched as written
            """,
        ])
    #expect(query.notes.allSatisfy { $0.kind == .note })
    #expect(try query.run(on: InMemoryEventSource(story)).rows == [[.integer(0)]])
    #expect(
        try Query.parse(#"events | where name == "screen_presented" and name != "navigation_failed" | count"#).notes
            .isEmpty)
}

/// A histogram of a time says how to bucket time: as a duration from a fixed instant.
@Test func aHistogramOfATimeShowsTheDurationForm() throws {
    #expect(
        diagnostic("sessions | histogram started") == """
            error: `histogram` needs a number or a duration; this is a timestamp
             --> query:1:22
            1 | sessions | histogram started
              |                      ^^^^^^^ for buckets in time, histogram a duration: `started - @2026-11-01 step 1h`
            """)
    _ = try Query.parse("sessions | histogram started - @2026-11-01 step 1h")
}

@Test func duplicateColumnNamesAreAnError() {
    // JSON rows are objects keyed by column name: a second `exit` key hid the first.
    #expect(
        diagnostic("sessions | stats count() as exit by exit") == """
            error: two columns are named `exit`
             --> query:1:37
            1 | sessions | stats count() as exit by exit
              |                                     ^^^^ rename this one with `as`
            """)
    #expect(
        diagnostic("sessions | stats count() as a, p50(duration) as a") == """
            error: two columns are named `a`
             --> query:1:32
            1 | sessions | stats count() as a, p50(duration) as a
              |                                ^^^^^^^^^^^^^^^^^^ rename this one with `as`
            """)
    #expect(
        diagnostic("events | top 3 name as count") == """
            error: two columns are named `count`
             --> query:1:16
            1 | events | top 3 name as count
              |                ^^^^^^^^^^^^^ the stage adds a column `count` itself; rename this one with `as`
            """)
    #expect(
        diagnostic("sessions | funnel open_paywall, close by name") == """
            error: two columns are named `name`
             --> query:1:42
            1 | sessions | funnel open_paywall, close by name
              |                                          ^^^^ the stage adds a column `name` itself; rename this one with `as`
            """)
    #expect(
        diagnostic("sessions | count by exit | select exit, count as exit") == """
            error: two columns are named `exit`
             --> query:1:41
            1 | sessions | count by exit | select exit, count as exit
              |                                         ^^^^^^^^^^^^^ rename this one with `as`
            """)
    #expect(
        diagnostic("sessions | select session, session") == """
            error: two columns are named `session`
             --> query:1:28
            1 | sessions | select session, session
              |                            ^^^^^^^ rename this one with `as`
            """)
    #expect(diagnostic("sessions | stats count(), count()").hasPrefix("error: two columns are named `count()`"))
    #expect(diagnostic("events | stats avg(dwell) as censored").hasPrefix("error: two columns are named `censored`"))
}

// Habits from other tools, and places where a plain message would say the wrong thing.

@Test func aSessionFunctionInSortSaysSortTakesColumns() {
    #expect(
        diagnostic(#"sessions | sort answer("goal") | select session"#) == """
            error: `sort` takes column names
             --> query:1:17
            1 | sessions | sort answer("goal") | select session
              |                 ^^^^^^^^^^^^^^ columns: session, onboarding, started, duration, events, furthest_screen, exit
            """)
    #expect(diagnostic("sessions | count by exit | sort reached(2)").hasPrefix("error: `sort` takes column names"))
    #expect(
        diagnostic("sessions | count by exit | where did(close)") == """
            error: `did(…)` describes a session; this stage reads the result's columns
             --> query:1:34
            1 | sessions | count by exit | where did(close)
              |                                  ^^^ columns: exit, count
            """)
    #expect(
        diagnostic(#"sessions | count by exit | select answer("x")"#) == """
            error: `answer(…)` describes a session; this stage reads the result's columns
             --> query:1:35
            1 | sessions | count by exit | select answer("x")
              |                                   ^^^^^^ columns: exit, count
            """)
}

@Test func otherToolsAggregateNamesSuggestOurs() {
    #expect(
        diagnostic("sessions | stats median(duration)") == """
            error: unknown aggregate `median`; did you mean `p50`?
             --> query:1:18
            1 | sessions | stats median(duration)
              |                  ^^^^^^ `p50(…)` is the median
            """)
    #expect(
        diagnostic("sessions | stats mean(duration)").hasPrefix("error: unknown aggregate `mean`; did you mean `avg`?"))
    #expect(
        diagnostic("sessions | stats AVERAGE(duration)").hasPrefix(
            "error: unknown aggregate `AVERAGE`; did you mean `avg`?"))
    // A misspelt one too, when no aggregate's own name is close.
    #expect(
        diagnostic("sessions | stats p50(duration), medain(duration)") == """
            error: unknown aggregate `medain`; did you mean `p50`?
             --> query:1:33
            1 | sessions | stats p50(duration), medain(duration)
              |                                 ^^^^^^ `p50(…)` is the median
            """)
    #expect(
        diagnostic("sessions | stats avgg(duration)").hasPrefix("error: unknown aggregate `avgg`; did you mean `avg`?"))
}

/// A column is named by the expression's text with the spaces left out, but for one between two words.
@Test func columnNamesKeepASpaceBetweenWords() throws {
    let query = try Query.parse(
        #"sessions | stats rate(paywall  and not completed), percentile( duration , 0.5 ), count( ) by exit | sort rate(paywall and not   completed) desc"#
    )
    #expect(
        query.checked.outputColumns == [
            "exit", "rate(paywall and not completed)", "percentile(duration,0.5)", "count()",
        ])
    #expect(columnText(Array(#"answer( "a  b" ) == "x""#.utf8)) == #"answer("a  b")=="x""#)
}

@Test func aNumberMeantAsADurationGetsItsUnits() {
    #expect(
        diagnostic("sessions | where duration > 5") == """
            error: cannot compare a duration with a number
             --> query:1:18
            1 | sessions | where duration > 5
              |                  ^^^^^^^^^^^^ `duration` is a duration, `5` is a number; write a duration with its unit: `5s` or `5m`
            """)
    #expect(
        diagnostic("sessions | where duration - 2 > 1m") == """
            error: cannot apply `-` to a duration and a number
             --> query:1:18
            1 | sessions | where duration - 2 > 1m
              |                  ^^^^^^^^^^^^ write a duration with its unit: `2s` or `2m`
            """)
    #expect(
        diagnostic("sessions | where duration > 5 min | count") == """
            error: expected `|` or the end of the query, found `min`
             --> query:1:31
            1 | sessions | where duration > 5 min | count
              |                               ^^^ a duration is one word: `5m`
            """)
    #expect(
        diagnostic("sessions | funnel close, open_paywall within 30 s") == """
            error: expected a duration such as `30m`, found a number
             --> query:1:46
            1 | sessions | funnel close, open_paywall within 30 s
              |                                              ^^ a duration is one word: `30s`
            """)
    #expect(
        diagnostic("sessions | where duration > 5mins") == """
            error: unknown duration unit `mins`
             --> query:1:30
            1 | sessions | where duration > 5mins
              |                              ^^^^ write `5m`; units: us, ms, s, m, h, d, w
            """)
    #expect(
        diagnostic("sessions | where duration > 1h30m | count") == """
            error: a duration has one unit
             --> query:1:29
            1 | sessions | where duration > 1h30m | count
              |                             ^^^^^ write `90m`
            """)
    #expect(Lexer.compoundDuration("2m30s") == 150_000_000)
    #expect(Lexer.durationText(150_000_000) == "150s")
    #expect(Lexer.compoundDuration("1h") == nil)
    #expect(Lexer.compoundDuration("1h30x") == nil)
}

@Test func quotesAndOperatorsFromOtherLanguages() {
    #expect(
        diagnostic("sessions | where profile == 'p1' | count") == """
            error: unexpected character `'`
             --> query:1:29
            1 | sessions | where profile == 'p1' | count
              |                             ^ strings are in double quotes: `"p1"`
            """)
    #expect(
        diagnostic("sessions | where closed && completed | count") == """
            error: unexpected `&&`
             --> query:1:25
            1 | sessions | where closed && completed | count
              |                         ^^ use `and` to combine conditions
            """)
    #expect(
        diagnostic("sessions | where closed || completed | count") == """
            error: unexpected `||`
             --> query:1:25
            1 | sessions | where closed || completed | count
              |                         ^^ use `or` to combine conditions; a single `|` separates stages
            """)
    #expect(
        diagnostic("sessions | stats percentile(duration, .5)") == """
            error: unexpected character `.`
             --> query:1:39
            1 | sessions | stats percentile(duration, .5)
              |                                       ^ write `0.5`
            """)
    #expect(
        diagnostic("sessions | where furthest_screen in (1, 2) | count") == """
            error: a list after `in` is written in square brackets
             --> query:1:37
            1 | sessions | where furthest_screen in (1, 2) | count
              |                                     ^^^^^^ write `[1, 2]`
            """)
    #expect(
        diagnostic(#"sessions | where exit not in ("closed") | count"#).hasSuffix(#"^^^^^^^^^^ write `["closed"]`"#))
    #expect(
        diagnostic("sessions | where variation is null | count") == """
            error: write `is absent`, not `is null`
             --> query:1:28
            1 | sessions | where variation is null | count
              |                            ^^^^^^^ Boardwalk says absent for a value that is not there
            """)
    #expect(
        diagnostic("sessions | where variation is not null").hasPrefix(
            "error: write `is present`, not `is not null`"))
}

@Test func statsWithoutAnAggregateAndScreenOnSessions() {
    #expect(
        diagnostic("sessions | stats by exit") == """
            error: `stats` needs an aggregate before `by`
             --> query:1:18
            1 | sessions | stats by exit
              |                  ^^ e.g. `stats count() by …`, or `count by …`
            """)
    #expect(
        diagnostic("sessions | where screen >= 3 | count") == """
            error: `screen` is a field of `events`, not of sessions
             --> query:1:18
            1 | sessions | where screen >= 3 | count
              |                  ^^^^^^ sessions have `furthest_screen`, `last_screen` and `reached(n)`
            """)
}

@Test func aTabBeforeTheErrorKeepsTheCaretUnderIt() {
    // Tabs are shown as four spaces on both lines: the terminal's tab stops cannot move one line and not the other.
    #expect(
        diagnostic("sessions |\n\twhere bogus == 1 | count") == """
            error: unknown field `bogus`
             --> query:2:8
            2 |     where bogus == 1 | count
              |           ^^^^^
            """)
    #expect(
        diagnostic("events |\twhere\tbogus\t== 1") == """
            error: unknown field `bogus`
             --> query:1:16
            1 | events |    where    bogus    == 1
              |                      ^^^^^
            """)
}

@Test func numbersPastSixtyFourBitsAreDecimalsAsExponentsAre() throws {
    let big = try Lexer.tokenize("100000000000000000000")
    #expect(big[0].kind == .decimal)
    #expect(big[0].decimal == 1e20)
    #expect(try Lexer.tokenize("9223372036854775807")[0].integer == Int64.max)
    #expect(
        diagnostic("events | where screen < 1e400") == """
            error: number `1e400` is too large
             --> query:1:25
            1 | events | where screen < 1e400
              |                         ^^^^^ numbers go up to about 1.8e308
            """)
    #expect(
        diagnostic("events | where screen < 1\(String(repeating: "0", count: 400))").hasPrefix("error: number `1000"))
}
