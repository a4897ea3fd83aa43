import BoardwalkModel
import BoardwalkStore
import Testing

@testable import BoardwalkQuery

/// A date picker's whole answer is a date (rule 9): it compares with timestamps, buckets, and `year` reads it; a
/// partial one stays the text of its parts.
@Suite struct DateAnswerTests {
    /// A session that answered `birthday` with `parts`.
    func answered(_ session: String, _ parts: DateParts) -> [Event] {
        [
            ev(0, session, presented),
            ev(1, session, .stateUpdated(StateUpdate(elementID: "birthday", value: .datePicker(parts)))),
        ]
    }

    /// A: 1995-03-04; B: 2001-12-31; C: 2000-01-01; D: 1995 only; E: February 30 (off the calendar); F: none.
    var events: [Event] {
        answered("A", DateParts(year: 1995, month: 3, day: 4))
            + answered("B", DateParts(year: 2001, month: 12, day: 31))
            + answered("C", DateParts(year: 2000, month: 1, day: 1)) + answered("D", DateParts(year: 1995))
            + answered("E", DateParts(year: 1999, month: 2, day: 30)) + [ev(0, "F", presented)]
    }

    func sessions(_ query: String) throws -> [Value] {
        try run(query + " | select session", events).column("session") ?? []
    }

    @Test func aWholeDateComparesWithTimestamps() throws {
        #expect(try sessions(#"sessions | where answer("birthday") < @2000-01-01"#) == [.string("A")])
        #expect(try sessions(#"sessions | where answer("birthday") >= @2000-01-01"#) == [.string("B"), .string("C")])
        #expect(
            try sessions(#"sessions | where answer("birthday") == @2000-01-01T00:00:00Z"#) == [.string("C")])
        // Partial dates and days off the calendar are text: no timestamp is equal to them, and `!=` holds.
        #expect(
            try sessions(#"sessions | where answer("birthday") != @2000-01-01"#)
                == [.string("A"), .string("B"), .string("D"), .string("E")])
    }

    @Test func itStillEqualsTheTextOfItsDate() throws {
        #expect(try sessions(#"sessions | where answer("birthday") == "1995-03-04""#) == [.string("A")])
        #expect(try sessions(#"sessions | where answer("birthday") == "1995-??-??""#) == [.string("D")])
        #expect(try sessions(#"sessions | where answer("birthday") == "1999-02-30""#) == [.string("E")])
    }

    @Test func itIsShownAsItsDateAndGroupsByIt() throws {
        let table = try run(#"sessions | count by answer("birthday")"#, events)
        #expect(
            table.render(.csv) == """
                "answer(""birthday"")",count
                1995-03-04,1
                1995-??-??,1
                1999-02-30,1
                2000-01-01,1
                2001-12-31,1
                ,1

                """)
        #expect(table.rows[0][0] == Value.dateAnswer(DateParts(year: 1995, month: 3, day: 4)))
        #expect(table.rows[1][0] == .string("1995-??-??"))
    }

    @Test func yearAndBucketsReadIt() throws {
        #expect(
            try run(#"sessions | count by year(answer("birthday"))"#, events).render(.csv) == """
                "year(answer(""birthday""))",count
                1995,1
                2000,1
                2001,1
                ,3

                """)
        #expect(
            try run(#"sessions | where answer("birthday") is present | count by month(answer("birthday"))"#, events)
                .render(.csv) == """
                    "month(answer(""birthday""))",count
                    1995-03-01,1
                    2000-01-01,1
                    2001-12-01,1
                    ,2

                    """)
        // The date is its day from UTC midnight: in a zone west of UTC, the first of January is still the old year.
        #expect(
            try run(#"sessions | where session == "C" | select year(answer("birthday"), "-05:00") as y"#, events)
                .column("y") == [.integer(1999)])
        #expect(
            try run(#"sessions | where session == "C" | select year(started) as y"#, events).column("y") == [
                .integer(2026)
            ])
    }

    @Test func onEventsThroughTheSession() throws {
        let table = try run(
            #"events | where session.answer("birthday") < @2000-01-01 and name == "screen_presented" | count"#, events)
        #expect(table.rows == [[.integer(1)]])
    }

    @Test func theStoreGivesWhatMemoryGives() throws {
        try withTemporaryStore { store in
            _ = try store.append(events)
            for text in [
                #"sessions | count by answer("birthday")"#,
                #"sessions | where answer("birthday") < @2000-01-01 | count"#,
                #"sessions | count by year(answer("birthday"))"#, #"events | count by value"#,
                #"events | where value >= @2000-01-01 | count"#,
            ] {
                let query = try Query.parse(text)
                #expect(
                    try query.run(on: StoreEventSource(store)) == query.run(on: InMemoryEventSource(events)), "\(text)")
            }
        }
    }

    @Test func misuseIsAPositionedError() throws {
        #expect(
            try diagnostic(#"sessions | count by year(profile)"#) == """
                error: `year` needs a timestamp or a date answer; `profile` is a string
                 --> query:1:26
                1 | sessions | count by year(profile)
                  |                          ^^^^^^^ the year of a time, e.g. year(started) or year(answer("birthday"))
                """)
        #expect(
            try diagnostic(#"sessions | where year("1995") > 1990 | count"#) == """
                error: `year` needs a timestamp or a date answer; `"1995"` is a string
                 --> query:1:23
                1 | sessions | where year("1995") > 1990 | count
                  |                       ^^^^^^ the year of a time, e.g. year(started) or year(answer("birthday"))
                """)
        #expect(
            try diagnostic(#"sessions | count by year(started, "Europe/Berln")"#).hasPrefix(
                "error: unknown time zone `Europe/Berln`; did you mean `Europe/Berlin`?"))
        #expect(
            try diagnostic(#"sessions | count by hour(answer("birthday"))"#).hasPrefix(
                "error: `hour` needs a timestamp; `answer(\"birthday\")` is an answer, and a date answer has no hours"))
        #expect(
            try diagnostic(#"sessions | where answer("birthday") < @2000-01-01 + 1"#).hasPrefix(
                "error: cannot apply `+` to a timestamp and a number"))
    }

    /// The rendered error of a query that must not parse.
    func diagnostic(_ text: String) throws -> String {
        do {
            _ = try Query.parse(text)
        } catch {
            return error.description
        }
        Issue.record("`\(text)` parsed")
        return ""
    }
}
