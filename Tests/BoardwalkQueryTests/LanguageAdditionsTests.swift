import BoardwalkModel
import Testing

@testable import BoardwalkQuery

/// `is absent` / `is present`, time buckets, computed columns and reductions over a result, on the hand-made
/// story of `ReferenceExampleTests` (sessions A, B, C of onb_1 and D of onb_2), whose answers are known.
@Suite struct LanguageAdditionsTests {
    @Test func isAbsentAndIsPresentTestWhetherAValueIsThere() throws {
        // A and B answered "experience"; C and D did not.
        let absent = try run("sessions | where answer(\"experience\") is absent | count", story)
        let present = try run("sessions | where answer(\"experience\") is present | count", story)
        let all = try run("sessions | count", story)
        #expect(absent.rows[0][0].intValue! + present.rows[0][0].intValue! == all.rows[0][0].intValue!)
        #expect(present.rows == [[.integer(2)]])
        // Absent is the complement of present for every row, also where a comparison would be false both ways.
        let replies = try run("events | where reply is present | count", story).rows[0][0].intValue!
        let noReplies = try run("events | where reply is absent | count", story).rows[0][0].intValue!
        #expect(replies + noReplies == story.count)
        #expect(try run("events | where not (reply is present) | count", story).rows[0][0].intValue! == noReplies)
    }

    @Test func sqlNullSpellingsGetTheWordToUse() {
        #expect(
            diagnostic("events | where reply is null | count") == """
                error: write `is absent`, not `is null`
                 --> query:1:22
                1 | events | where reply is null | count
                  |                      ^^^^^^^ Boardwalk says absent for a value that is not there
                """)
        #expect(
            diagnostic("events | where reply is not null | count") == """
                error: write `is present`, not `is not null`
                 --> query:1:22
                1 | events | where reply is not null | count
                  |                      ^^^^^^^^^^^ Boardwalk says absent for a value that is not there
                """)
        #expect(
            diagnostic("events | where reply is blue").hasPrefix("error: expected `absent` or `present` after `is`"))
    }

    @Test func bucketsShowDatesAndComputeAsInstants() throws {
        let byDay = try run("sessions | count by day(started)", story)
        #expect(byDay.columns == ["day(started)", "count"])
        #expect(byDay.rows.map { $0[0].displayText } == ["2026-11-01"])
        let json = byDay.render(.json)
        #expect(json.contains(#""day(started)": "2026-11-01""#), "\(json)")
        // A day bucket minus a duration is a timestamp: the start of the day, a week before.
        let since = try run("sessions | stats min(day(started)) as d | select d - 7d as week_before", story)
        #expect(since.rows[0][0] == .time(Timestamp(iso8601: "2026-10-25T00:00:00Z")!))
        // In Berlin (UTC+1 in November) the story's sessions, which start at 10:00Z, fall on the same date.
        let berlin = try run("sessions | count by hour(started, \"Europe/Berlin\")", story)
        #expect(berlin.rows.first?[0].displayText == "2026-11-01T11:00")
        #expect(diagnostic("sessions | count by day(duration)").hasPrefix("error: `day` needs a timestamp"))
        #expect(
            diagnostic("sessions | count by day(started, \"Europe/Berln\")").hasPrefix(
                "error: unknown time zone `Europe/Berln`; did you mean `Europe/Berlin`?"))
        #expect(throws: QueryError.self) { try Query.parse("sessions | count", timeZone: "Mars/Olympus") }
    }

    @Test func computedColumnsAndSecondReductionsReadTheResult() throws {
        let pct = try run(
            "sessions | stats count() as n, rate(completed) as cr by variation | select variation, n, cr * 100 as pct",
            story)
        #expect(pct.columns == ["variation", "n", "pct"])
        let plain = try run("sessions | stats count() as n, rate(completed) as cr by variation", story)
        for (a, b) in zip(pct.rows, plain.rows) {
            #expect(a[1] == b[1])
            if let cr = b[2].doubleValue { #expect(a[2].doubleValue == cr * 100) } else { #expect(a[2] == .null) }
        }
        // Sessions per onboarding, then the onboardings with more than one.
        let groups = try run("sessions | count by onboarding | where count > 1 | count", story)
        #expect(groups.rows == [[.integer(1)]])  // onb_1 has three sessions, onb_2 one
        let spread = try run("sessions | count by onboarding | stats max(count), min(count)", story)
        #expect(spread.rows == [[.integer(3), .integer(1)]])
    }

    /// A reduction whose rows only a later `count` or `histogram` reads, through row-by-row stages, leaves them
    /// unsorted; anything that sees their order (`sort`, `limit`, `stats`, the result itself) gets them sorted.
    @Test func rowsOnlyACountReadsAreNotSorted() throws {
        func unseen(_ text: String) throws -> Bool {
            TableStage.orderIsUnseen(try Query.parse(text).checked.tableStages[...])
        }
        #expect(try unseen("sessions | count by profile | where count > 1 | count"))
        #expect(try unseen("sessions | count by profile | select count * 2 as twice | histogram twice step 2"))
        #expect(try !unseen("sessions | count by profile"))
        #expect(try !unseen("sessions | count by profile | where count > 1"))
        #expect(try !unseen("sessions | count by profile | limit 3 | count"))
        #expect(try !unseen("sessions | count by profile | sort count | count"))
        #expect(try !unseen("sessions | count by profile | stats sum(count)"))
        // The answers are those of the sorted rows.
        let sorted = try run(
            "sessions | count by onboarding | sort onboarding | select count as n | count by n", story)
        #expect(try run("sessions | count by onboarding | select count as n | count by n", story) == sorted)
    }
}

/// A comparison with an answer that can never hold says so when the query finds nothing, as a misspelled onboarding
/// id does; a query that finds something gets no note and reads nothing more.
@Suite struct AnswerNotesTests {
    func notes(_ text: String) throws -> [String] {
        try Query.parse(text).execute(on: InMemoryEventSource(story)).statistics.notes.map(\.message)
    }

    @Test func aStringComparedWithNumericAnswersIsNamed() throws {
        let events =
            story + [
                Event(
                    time: Timestamp(microseconds: base), session: "A", eventID: nil,
                    meta: Meta(onboardingID: "onb_1", screenClientID: "c0", screenIndex: 0, totalScreens: 4),
                    payload: .stateUpdated(StateUpdate(elementID: "age", value: .input(.number(31)))))
            ]
        let result = try Query.parse(#"sessions | where answer("age") > "30" | count"#).execute(
            on: InMemoryEventSource(events))
        #expect(result.table.rows == [[.integer(0)]])
        #expect(
            result.statistics.notes.map(\.message) == [
                #"the answers to `age` are numbers; "30" is a string and matches none of them: write it without quotes"#
            ])
    }

    @Test func anOptionNoOneChoseIsNamedWithTheOnesChosen() throws {
        #expect(
            try notes(#"sessions | where answer("interests") == "yoga" | count"#) == [
                #"no answer to `interests` is "yoga"; its answers here: `music`, `sports`"#
            ])
        #expect(
            try notes(#"sessions | where answer("experience") == "prro" | count"#).first?.contains(
                "did you mean `pro`?") == true)
        #expect(
            try notes(#"sessions | where answer("goal") == "x" | count"#).first?.hasPrefix("no one answered `goal`")
                == true)
        // Found something, or a comparison that may hold: no note.
        #expect(try notes(#"sessions | where answer("interests") == "music" | count"#).isEmpty)
        #expect(try notes(#"sessions | where answer("interests") != "yoga" | count"#).isEmpty)
    }
}

/// A duration divided by a duration is a number (minutes as `duration / 1m`); divided by 60 it stays a duration,
/// with a note that says so.
@Test func aDurationOverADurationIsANumber() throws {
    let minutes = try run("sessions | select duration / 1m as mins | limit 1", story)
    let seconds = try run("sessions | select duration | limit 1", story)
    guard case .duration(let micros) = seconds.rows[0][0] else {
        Issue.record("duration is \(seconds.rows[0][0])")
        return
    }
    #expect(minutes.rows[0][0] == .number(micros / 60_000_000))
    let sixtieth = try Query.parse("sessions | select duration / 60 as mins")
    #expect(
        sixtieth.notes.map(\.message) == [
            "a duration divided by a number is a duration, shown in seconds; for a number of minutes, divide by a "
                + "duration: `duration / 1m`"
        ])
    #expect(try Query.parse("sessions | select duration / 2 as half").notes.isEmpty)
}
