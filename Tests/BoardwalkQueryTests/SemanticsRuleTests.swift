import BoardwalkModel
import Testing

@testable import BoardwalkQuery

// One test per rule of analytics-semantics.md, named after it.

@Test func rule1_equalTimestampsKeepArrivalOrder() throws {
    // Completed and paywall in the same microsecond: the one that arrived last is the exit.
    let paywallLast = [ev(0, "s", presented), ev(5, "s", completedEvent), ev(5, "s", .openPaywall(actionID: ""))]
    #expect(try run("sessions | count by exit", paywallLast).column("exit") == [.string("paywall")])
    let completedLast = [ev(0, "s", presented), ev(5, "s", .openPaywall(actionID: "")), ev(5, "s", completedEvent)]
    #expect(try run("sessions | count by exit", completedLast).column("exit") == [.string("completed")])
    // Arrival order, not array position after sorting by time: seq is the index in the input.
    #expect(
        try run("events | select seq, name", completedLast).column("name")
            == [.string("screen_presented"), .string("open_paywall"), .string("onboarding_completed")])
}

@Test func rule2_reductionsCountSessionsUnlessTheQuerySaysEvents() throws {
    let events = [ev(0, "a", presented), ev(1, "a", presented), ev(0, "b", presented)]
    #expect(try run("sessions | count", events).column("count") == [.integer(2)])
    #expect(try run("events | count", events).column("count") == [.integer(3)])
    #expect(
        try run(
            "sessions | count by profile", [ev(0, "a", profile: "p", presented), ev(0, "b", profile: "p", presented)]
        )
        .column("count") == [.integer(2)])
}

@Test func rule3_backNavigationDoesNotDoubleCountAndTheFunnelNeverRises() throws {
    // 0 → 1 → 2 → back to 1 → 2 again: reached 0, 1, 2 once each.
    let events = [
        ev(0, "s", screen: 0, presented), ev(1, "s", screen: 1, presented), ev(2, "s", screen: 2, presented),
        ev(3, "s", screen: 1, presented), ev(4, "s", screen: 2, presented),
    ]
    let table = try run("sessions | funnel", events)
    #expect(table.column("sessions") == [.integer(1), .integer(1), .integer(1), .integer(0)])
    // Steps run to total_screens − 1 (4 screens) even though nobody saw screen 3; the time is the first reach.
    #expect(table.column("step") == [.integer(0), .integer(1), .integer(2), .integer(3)])
    #expect(
        table.column("median_time") == [.duration(0), .duration(Double(second)), .duration(Double(2 * second)), .null])
}

@Test func rule3_screenClientIDIsTheOneMostOfTheStepsSessionsHaveThere() throws {
    func at(_ t: Double, _ session: String, _ screen: Int, _ client: String, variation: String = "a") -> Event {
        Event(
            time: Timestamp(microseconds: base + Int64(t * 1_000_000)), session: session, variation: variation,
            meta: Meta(onboardingID: "o", screenClientID: client, screenIndex: screen, totalScreens: 4),
            payload: presented)
    }
    // Screen 0: "welcome" in x and y, "welcome_b" in y, z and w (y has both and counts for each). Screen 1:
    // "intro" in x (twice, which counts once) and y, "intro_b" in z. Screen 2: "zeta" in y, "alpha" in z: a tie,
    // which goes to the smaller. Screen 3: w reached it by jumping from 0 to 4, with no event there, so it has no
    // client id; nor has a step no session of a group reached (variation a's screen 3).
    let events = [
        at(0, "w", 0, "welcome_b", variation: "c"), at(1, "w", 4, "done", variation: "c"),
        at(0, "x", 0, "welcome"), at(1, "x", 1, "intro"), at(2, "x", 1, "intro"),
        at(0, "y", 0, "welcome"), at(1, "y", 0, "welcome_b"), at(2, "y", 1, "intro"), at(3, "y", 2, "zeta"),
        at(0, "z", 0, "welcome_b", variation: "b"), at(1, "z", 1, "intro_b", variation: "b"),
        at(2, "z", 2, "alpha", variation: "b"),
    ]
    let expected: [Value] = [.string("welcome_b"), .string("intro"), .string("alpha"), .null, .string("done")]
    #expect(try run("sessions | funnel", events).column("screen_cid") == expected)
    // Within a group, the group's sessions alone.
    let byVariation = try run("sessions | funnel by variation", events)
    #expect(
        byVariation.column("screen_cid") == [
            .string("welcome"), .string("intro"), .string("zeta"), .null,
            .string("welcome_b"), .string("intro_b"), .string("alpha"), .null,
            .string("welcome_b"), .null, .null, .null, .string("done"),
        ])
    // The store's folds (lean and full) give the same.
    try withTemporaryStore { store in
        _ = try store.append(events)
        let options = Query.RunOptions(now: Timestamp(microseconds: base + 86_400 * second))
        // Lean folds, and full folds (a filter on the session's variation reads it).
        for text in ["sessions | funnel", "sessions | where variation != \"none\" | funnel"] {
            let table = try Query.parse(text).run(on: StoreEventSource(store), options: options)
            #expect(table.column("screen_cid") == expected, "\(text)")
        }
        let grouped = try Query.parse("sessions | funnel by variation").run(
            on: StoreEventSource(store), options: options)
        #expect(grouped.column("screen_cid") == byVariation.column("screen_cid"))
    }
}

@Test func rule3_eachBreakdownGroupRunsToItsOwnScreens() throws {
    // A 2-screen onboarding beside a 4-screen one: `by onboarding` gives the short one 2 steps, not 4 with a
    // drop-off of everyone at screens it does not have; without `by`, the steps are the scope's (4).
    let events = [
        ev(0, "a", screen: 0, total: 2, onboarding: "short", presented),
        ev(1, "a", screen: 1, total: 2, onboarding: "short", presented),
        ev(0, "b", screen: 0, total: 4, onboarding: "long", presented),
        ev(1, "b", screen: 3, total: 4, onboarding: "long", presented),
    ]
    let table = try run("sessions | funnel by onboarding", events)
    #expect(
        table.column("onboarding") == [
            .string("long"), .string("long"), .string("long"), .string("long"),
            .string("short"), .string("short"),
        ])
    #expect(table.column("sessions") == [.integer(1), .integer(1), .integer(1), .integer(1), .integer(1), .integer(1)])
    #expect(table.column("dropoff") == [.integer(0), .integer(0), .integer(0), .integer(0), .integer(0), .integer(0)])
    #expect(
        try run("sessions | funnel", events).column("step") == [.integer(0), .integer(1), .integer(2), .integer(3)])
}

@Test func rule4_orderedFunnelBestChainAndInclusiveWindow() throws {
    // Two candidate starts: the first A cannot finish within 60 s, the second can.
    let events = [
        ev(0, "s", .custom(actionID: "a")), ev(100, "s", .custom(actionID: "a")),
        ev(130, "s", .openPaywall(actionID: "")), ev(160, "s", .close(actionID: "")),
    ]
    let q = #"sessions | funnel custom, open_paywall, close within 60s"#
    #expect(try run(q, events).column("sessions") == [.integer(1), .integer(1), .integer(1)])
    // The window is inclusive: exactly 60 s from step 1 still counts, 60 s + 1 µs does not.
    let edge = [ev(0, "e", .custom(actionID: "")), ev(60, "e", .close(actionID: ""))]
    #expect(
        try run("sessions | funnel custom, close within 60s", edge).column("sessions") == [.integer(1), .integer(1)])
    let over = [ev(0, "o", .custom(actionID: "")), ev(60.000001, "o", .close(actionID: ""))]
    #expect(
        try run("sessions | funnel custom, close within 60s", over).column("sessions") == [.integer(1), .integer(0)])
}

@Test func rule4_strictFunnelBreaksOnOtherEventsUnlessIgnored() throws {
    let events = [ev(0, "s", .custom(actionID: "")), ev(1, "s", select("x", "y")), ev(2, "s", .close(actionID: ""))]
    #expect(
        try run("sessions | funnel custom, close mode strict", events).column("sessions") == [.integer(1), .integer(0)])
    #expect(
        try run("sessions | funnel custom, close mode strict ignoring (state_updated)", events).column("sessions")
            == [.integer(1), .integer(1)])
    #expect(try run("sessions | funnel custom, close", events).column("sessions") == [.integer(1), .integer(1)])
}

@Test func rule4_anyModeAcceptsStepsInAnyOrderWithinTheWindow() throws {
    let events = [ev(0, "s", .close(actionID: "")), ev(10, "s", .custom(actionID: ""))]
    #expect(
        try run("sessions | funnel custom, close mode any within 10s", events).column("sessions") == [
            .integer(1), .integer(1),
        ])
    #expect(
        try run("sessions | funnel custom, close mode any within 9s", events).column("sessions") == [
            .integer(1), .integer(0),
        ])
    #expect(try run("sessions | funnel custom, close", events).column("sessions") == [.integer(1), .integer(0)])
    // Time to convert in `any` mode: from step 1 until steps 1…k have all happened (0 when step 2 came first).
    #expect(
        try run("sessions | funnel custom, close mode any", events).column("median_time") == [
            .duration(0), .duration(0),
        ])
    let inOrder = [ev(0, "s", .custom(actionID: "")), ev(10, "s", .close(actionID: ""))]
    #expect(
        try run("sessions | funnel custom, close mode any", inOrder).column("median_time")
            == [.duration(0), .duration(Double(10 * second))])
}

@Test func rule5_timeToConvertFromRawValuesNotMediansOfGroups() throws {
    // Variation a converts in 10 s and 20 s, b in 100 s: the overall median is 20 s (the median of group
    // medians would be (15 + 100) / 2).
    let events = [
        ev(0, "1", variation: "a", .custom(actionID: "")), ev(10, "1", variation: "a", .close(actionID: "")),
        ev(0, "2", variation: "a", .custom(actionID: "")), ev(20, "2", variation: "a", .close(actionID: "")),
        ev(0, "3", variation: "b", .custom(actionID: "")), ev(100, "3", variation: "b", .close(actionID: "")),
    ]
    let table = try run("sessions | funnel custom, close", events)
    #expect(table.column("median_time")?[1] == .duration(Double(20 * second)))
    #expect(table.column("mean_time")?[1] == .duration(Double(130 * second) / 3))
    #expect(table.column("p90_time")?[1] == .duration(Double(84 * second)))
}

@Test func rule6_percentilesInterpolateLinearly() throws {
    // numpy.percentile([1, 2, 3, 4], [50, 90, 25]) = [2.5, 3.7, 1.75].
    let events = (1...4).map { ev(Double($0), "s\($0)", screen: $0, total: 5, presented) }
    let table = try run("events | stats p50(screen), p90(screen), percentile(screen, 0.25)", events)
    #expect(table.rows == [[.number(2.5), .number(3.7), .number(1.75)]])
    #expect(Percentile.of([], 0.5) == nil)
    #expect(Percentile.of([7], 0.99) == 7)
}

@Test func rule7_dwellEndsAtAnotherScreenOrTheTerminalEventAndCensorsTheRest() throws {
    let events = [
        // Ends at the next event on another screen, not at a later event on the same screen.
        ev(0, "a", screen: 0, presented), ev(5, "a", screen: 0, select("e", "v")), ev(8, "a", screen: 1, presented),
        // Ends at the terminal event on the same screen.
        ev(20, "a", screen: 1, .close(actionID: "")),
        // An abandoned last screen is censored: counted beside the distribution, not as zero.
        ev(0, "b", screen: 0, presented), ev(3, "b", screen: 0, select("e", "v")),
    ]
    let table = try run(
        #"events | where name == "screen_presented" | stats count(), count(dwell), avg(dwell) by screen"#, events)
    #expect(table.render(.csv) == "screen,count(),count(dwell),avg(dwell),censored\n0,2,1,8,1\n1,1,1,12,0\n")
}

@Test func rule8_lastOutcomeWinsAndFlagsStayAvailable() throws {
    let events = [
        ev(0, "s", completedEvent), ev(1, "s", .openPaywall(actionID: "")), ev(2, "s", .close(actionID: "")),
        ev(0, "t", presented), ev(0, "u", .error(OnboardingError(domain: "webkit", code: 4200, message: ""))),
    ]
    let table = try run("sessions | select session, exit, completed, paywall, closed", events)
    #expect(
        table.rows == [
            [.string("s"), .string("closed"), .bool(true), .bool(true), .bool(true)],
            [.string("t"), .string("abandoned"), .bool(false), .bool(false), .bool(false)],
            [.string("u"), .string("error"), .bool(false), .bool(false), .bool(false)],
        ])
}

@Test func rule9_answersAreLastWriteWinsAndMultiSelectExplodes() throws {
    let events = [
        ev(0, "a", select("experience", "beginner")), ev(1, "a", select("experience", "pro")),
        ev(2, "a", multi("interests", ["music", "art"])), ev(3, "a", multi("interests", ["music", "sports"])),
        ev(0, "b", multi("interests", [])),
        ev(0, "c", .stateUpdated(StateUpdate(elementID: "age", value: .input(.number(25))))),
        ev(
            0, "d",
            .stateUpdated(StateUpdate(elementID: "birthday", value: .datePicker(DateParts(year: 1995, month: 3))))),
    ]
    #expect(
        try run(#"sessions | count by answer("experience")"#, events).rows == [
            [.string("pro"), .integer(1)], [.null, .integer(3)],
        ])
    // The snapshot replaced the earlier selection (art is gone); b's empty selection is one absent key.
    #expect(
        try run(#"sessions | count by answer("interests")"#, events).rows
            == [[.string("music"), .integer(1)], [.string("sports"), .integer(1)], [.null, .integer(3)]])
    #expect(try run(#"sessions | where answer("age") > 24.5 | count"#, events).column("count") == [.integer(1)])
    #expect(
        try run(#"sessions | where answer("birthday") == "1995-03-??" | count"#, events).column("count") == [
            .integer(1)
        ])
}

@Test func rule10_sessionsWithoutIdsAreInferred() throws {
    // Same profile and onboarding: a start event begins a session (a run of start events stays in one), and so
    // does a gap of exactly 30 minutes; 29:59 does not.
    let events = [
        ev(0, nil, profile: "p", .onboardingLoaded), ev(1, nil, profile: "p", started),
        ev(60, nil, profile: "p", presented),
        ev(60 + 30 * 60, nil, profile: "p", presented),  // exactly 30 min later: new session
        ev(60 + 30 * 60 + 1799, nil, profile: "p", presented),  // 29:59 later: same session
        ev(5000, nil, profile: "p", started),  // a start event: new session
        ev(5001, nil, profile: "q", presented),  // another profile: its own session
        ev(5002, nil, profile: "q", presented),
    ]
    let table = try run("sessions | select session, events", events)
    #expect(
        table.rows == [
            [.string("inferred:0"), .integer(3)], [.string("inferred:3"), .integer(2)],
            [.string("inferred:5"), .integer(1)], [.string("inferred:6"), .integer(2)],
        ])
}

@Test func rule11_nullsAndEmptyGroups() throws {
    // Android's "" element_id and reply are absent.
    let events = [
        ev(0, "a", .analytics(.screenCompleted(elementID: "", reply: ""))),
        ev(1, "a", .analytics(.screenCompleted(elementID: "btn", reply: "yes"))),
    ]
    #expect(
        try run("events | stats count(), count(reply), count_distinct(element)", events).rows
            == [[.integer(2), .integer(1), .integer(1)]])
    // No rows and no `by`: one row, zeros for counts, absent for averages and percentiles.
    #expect(
        try run(
            #"events | where name == "nothing" | stats count(), count_distinct(session), sum(screen), avg(screen), p50(screen), rate(screen > 0)"#,
            events
        ).rows
            == [[.integer(0), .integer(0), .integer(0), .null, .null, .null]])
    #expect(try run(#"events | where name == "nothing" | count"#, events).rows == [[.integer(0)]])
    // With `by`, empty groups produce no rows.
    #expect(try run(#"events | where name == "nothing" | count by name"#, events).rows.isEmpty)
    // `top` lists values: the absent reply is not one of them, though `count by` keeps its group.
    #expect(try run("events | top 5 reply", events).rows == [[.string("yes"), .integer(1)]])
    #expect(try run("events | count by reply", events).rows.count == 2)
}

@Test func rule12_funnelBreakdownUsesTheFirstStepValue() throws {
    // The session's variation changes after step 1; the breakdown reads it at step 1 and says so.
    let events = [ev(0, "s", variation: "a", .custom(actionID: "")), ev(5, "s", variation: "b", .close(actionID: ""))]
    let table = try run("sessions | funnel custom, close by variation", events)
    #expect(table.columns.prefix(3) == ["variation", "breakdown_step", "step"])
    #expect(table.column("variation") == [.string("a"), .string("a")])
    #expect(table.column("breakdown_step") == [.integer(1), .integer(1)])
}

/// The in-memory source's and the store's result of `text` over `events`, which must agree.
private func bothSources(_ text: String, _ events: [Event]) throws -> ResultTable {
    let memory = try run(text, events)
    try withTemporaryStore { store in
        _ = try store.append(events)
        let disk = try Query.parse(text).run(
            on: StoreEventSource(store), options: .init(now: Timestamp(microseconds: base + 86_400 * second)))
        #expect(disk == memory, "\(text)\nstore:\n\(disk.render(.table))\nmemory:\n\(memory.render(.table))")
    }
    return memory
}

@Test func rule7_histogramOfDwellCountsCensoredBesideTheBuckets() throws {
    // Three presentations: 7 s (to the next screen), 1 s (to the close), and one censored (its session ends on it).
    // The censored one is counted beside the buckets, not left out without a word.
    let events = [
        ev(0, "a", screen: 0, presented), ev(7, "a", screen: 1, presented), ev(8, "a", screen: 1, .close(actionID: "")),
        ev(0, "b", screen: 0, presented),
    ]
    let table = try bothSources(#"events | where name == "screen_presented" | histogram dwell step 5s"#, events)
    #expect(table.render(.csv) == "bucket,count,censored\n0,1,false\n5,1,false\n,1,true\n")
    // Not dwell: no such column.
    #expect(try bothSources("sessions | histogram duration step 5s", events).columns == ["bucket", "count"])
}

@Test func histogramBucketsAreDecimal() throws {
    // floor(0.3 / 0.1) is 2 in binary floating point; in the decimals the values and the step are written as, 3.
    let events = ["0.3", "0.6", "0.7", "2.3", "-0.3"].enumerated().map { i, n in
        ev(Double(i), "s\(i)", .stateUpdated(StateUpdate(elementID: "n", value: .input(.number(Double(n)!)))))
    }
    let table = try bothSources(#"sessions | histogram answer("n") step 0.1"#, events)
    #expect(table.column("bucket") == [-0.3, 0.3, 0.6, 0.7, 2.3].map { Value.number($0) })
    #expect(HistogramBucket.start(of: 0.29999999999, step: 0.1) == 0.2)
    #expect(HistogramBucket.start(of: 7.999999, step: 2) == 6)
    // Near a bucket's edge by less than the tolerance only when the value has more digits than a Double holds
    // (a tolerance of a relative 4·10⁻¹⁵ would put these in the bucket above).
    #expect(HistogramBucket.start(of: 300_000_000_000_000.7, step: 1) == 300_000_000_000_000)
    #expect(HistogramBucket.start(of: 0.999999999999997, step: 0.1) == 0.9)
    // A step of more than 15 decimals: the start is k · step, at or below the value.
    let fine = try #require(HistogramBucket.start(of: 0.3, step: 0.0000000000000044))
    #expect(fine <= 0.3 && fine > 0.3 - 0.0000000000000044 * 2)
    // No bucket for what is not finite, nor for a quotient that overflows.
    #expect(HistogramBucket.start(of: .infinity, step: 1) == nil)
    #expect(HistogramBucket.start(of: 1e308, step: 1e-300) == nil)
}

@Test func rule11_nothingChosenAndNumbersThatAreNotFiniteAreAbsent() throws {
    // A multi-select answered last with nothing chosen: absent everywhere, as in `count by` (neither counted by
    // `count(answer)` nor matched by `!=`).
    let empty = [ev(0, "s", multi("interests", ["a"])), ev(1, "s", multi("interests", []))]
    let counts = try bothSources(
        #"sessions | stats count(answer("interests")), count_distinct(answer("interests"))"#, empty)
    #expect(counts.rows == [[.integer(0), .integer(0)]])
    #expect(
        try bothSources(#"sessions | where answer("interests") != "a" | count"#, empty).column("count") == [.integer(0)]
    )
    #expect(
        try bothSources(#"events | where element == "interests" | select value"#, empty).column("value") == [
            .set(["a"]), .null,
        ])
    // NaN and infinity typed into a number input, and arithmetic that overflows, are absent: min, max and
    // percentiles see only the finite answers.
    let numbers = [Double.nan, .infinity, 3, 1].enumerated().map { i, n in
        ev(Double(i), "n\(i)", .stateUpdated(StateUpdate(elementID: "n", value: .input(.number(n)))))
    }
    let stats = try bothSources(
        #"sessions | stats count(answer("n")), min(answer("n")), max(answer("n")), p50(answer("n"))"#, numbers)
    #expect(stats.rows == [[.integer(2), .number(1), .number(3), .number(2)]])
    let overflow = try bothSources("sessions | select 1e300 * 1e300 as big, 1 / 0 as zero | limit 1", numbers)
    #expect(overflow.render(.csv) == "big,zero\n,\n")
}

@Test func rule13_confidenceIntervalIsWilsonsAndHoldsTheRate() throws {
    // 0 and 4 of 4: the textbook interval would be [0, 0] and [1, 1]; Wilson's is wide, with the exact end kept.
    var events: [Event] = []
    for i in 0..<8 {
        events.append(ev(Double(i), "s\(i)", variation: i < 4 ? "a" : "b", started))
        if i >= 4 { events.append(ev(Double(i), "s\(i)", screen: 3, variation: "b", completedEvent)) }
    }
    let table = try run("sessions | stats rate(completed), ci(completed) by variation", events)
    // SciPy: z = norm.ppf(0.975); centre ± half of Wilson's formula at x = 0 and x = 4 of n = 4.
    #expect(table.rows[0][2] == .number(0))
    #expect(abs((table.rows[0][3].doubleValue ?? 0) - 0.4898908364545973) < 1e-12)
    #expect(abs((table.rows[1][2].doubleValue ?? 0) - 0.5101091635454027) < 1e-12)
    #expect(table.rows[1][3] == .number(1))
}

@Test func rule13_versusIsThePooledZTestAndSaysWhenCountsAreTooFew() throws {
    // 45 of 100 against a baseline's 30 of 100: z = 2.19, p = 0.0285 (SciPy); 4 of 100 has too few successes.
    var events: [Event] = []
    for (variation, completed) in [("base", 30), ("up", 45), ("rare", 4)] {
        for i in 0..<100 {
            events.append(ev(Double(events.count), "\(variation)\(i)", variation: variation, started))
            if i < completed {
                events.append(
                    ev(Double(events.count), "\(variation)\(i)", screen: 3, variation: variation, completedEvent))
            }
        }
    }
    let table = try run(#"sessions | stats rate(completed) by variation | versus "base""#, events)
    let byGroup = Dictionary(uniqueKeysWithValues: table.rows.map { ($0[0].stringValue ?? "", $0) })
    #expect(abs((byGroup["up"]?[7].doubleValue ?? 0) - 0.02845973691631055) < 1e-12)
    #expect(abs((byGroup["up"]?[6].doubleValue ?? 0) - 0.5) < 1e-12)
    #expect(byGroup["rare"]?[7] == .null && byGroup["rare"]?[8] == .string(Versus.tooFew))
    #expect(byGroup["base"]?[8] == .string("baseline"))
}

@Test func rule14_pathsCollapseRepeatsAndStartAtTheAnchorsFirstEvent() throws {
    // s1 answers twice on screen 0 (one step), reaches screen 1 twice; s2 never reaches screen 1; s3 closes at once.
    let events = [
        ev(0, "s1", started), ev(1, "s1", presented), ev(2, "s1", select("goal", "a")),
        ev(3, "s1", select("goal", "b")), ev(4, "s1", screen: 1, presented), ev(5, "s1", screen: 1, presented),
        ev(6, "s1", screen: 1, .close(actionID: "close_button")),
        ev(0, "s2", started), ev(1, "s2", presented), ev(2, "s2", .openPaywall(actionID: "")),
        ev(0, "s3", started), ev(1, "s3", screen: 1, presented), ev(2, "s3", screen: 1, .close(actionID: "x")),
    ]
    let after = try run("sessions | paths after screen_presented(screen == 1) depth 2", events)
    #expect(after.columns == ["path", "sessions", "share"])
    // The anchor's run, then at most 2 more; s2 has no anchor and no row, so shares are of 2 sessions.
    #expect(
        after.rows == [
            [.string("screen_presented#1 > close:close_button"), .integer(1), .number(0.5)],
            [.string("screen_presented#1 > close:x"), .integer(1), .number(0.5)],
        ])
    let end = try run("sessions | paths before end depth 3", events)
    #expect(
        end.rows.map { $0[0] } == [
            .string("onboarding_started > screen_presented#0 > open_paywall"),
            .string("onboarding_started > screen_presented#1 > close:x"),
            .string("state_updated > screen_presented#1 > close:close_button"),
        ])
    let before = try run("sessions | paths before state_updated depth 5", events)
    #expect(
        before.rows == [[.string("onboarding_started > screen_presented#0 > state_updated"), .integer(1), .number(1)]])
}
