import BoardwalkModel
import Testing

@testable import BoardwalkQuery

@Test func renderingIsExactAndStable() throws {
    let table = ResultTable(
        columns: ["name", "count", "rate", "p50(dwell)", "when", "set"],
        rows: [
            [
                .string("a,\"b\""), .integer(3), .number(2.0 / 3), .duration(1_500_000),
                .time(Timestamp(microseconds: base)), .set(["x", "y"]),
            ],
            [.null, .integer(12), .number(0.5), .null, .null, .null],
        ])
    #expect(
        table.render(.table) == """
            name   count    rate  p50(dwell)  when                         set
            -----  -----  ------  ----------  ---------------------------  ------
            a,"b"      3  0.6667        1.5s  2026-11-01T10:00:00.000000Z  [x, y]
            -         12     0.5           -  -                            -

            """)
    #expect(
        table.render(.json) == """
            [
              {"name": "a,\\"b\\"", "count": 3, "rate": 0.6666666666666666, "p50(dwell)": 1.5, "when": "2026-11-01T10:00:00.000000Z", "set": ["x","y"]},
              {"name": null, "count": 12, "rate": 0.5, "p50(dwell)": null, "when": null, "set": null}
            ]

            """)
    #expect(
        table.render(.csv) == #"""
            name,count,rate,p50(dwell),when,set
            "a,""b""",3,0.6666666666666666,1.5,2026-11-01T10:00:00.000000Z,"[""x"",""y""]"
            ,12,0.5,,,

            """#)
    #expect(ResultTable(columns: ["count"], rows: []).render(.json) == "[]\n")
}

@Test func funnelJSONHasStepsInOrderWithASessionsColumn() throws {
    let json = try run(#"sessions | where onboarding == "onb_1" | funnel"#, story).render(.json)
    #expect(
        json.hasPrefix(
            """
            [
              {"step": 0, "screen_cid": "s0", "sessions": 3, "pct_of_first": 100, "pct_of_previous": 100, "dropoff": 0, "median_time": 0},
              {"step": 1, "screen_cid": "s1", "sessions": 2,
            """))
}

@Test func planQuotesStringsOnOneLine() throws {
    // A newline or tab in a literal is spelled as the query language writes it, not printed raw.
    let plan = try Query.parse(#"sessions | where onboarding == "a\nb\t\"c\"" | count"#).explain(
        on: InMemoryEventSource(story))
    #expect(plan.contains(#"range onboarding="a\nb\t\"c\"" screen=*"#), "\(plan)")
    #expect(plan.split(separator: "\n").count == 4, "\(plan)")
}

@Test func histogramBucketsByStep() throws {
    // Durations 40 s, 25 s, 4 s, 0 s in 30 s buckets.
    #expect(try run("sessions | histogram duration step 30s", story).render(.csv) == "bucket,count\n0,3\n30,1\n")
    #expect(
        try run("events | histogram screen", story).column("count") == [
            .integer(12), .integer(4), .integer(2), .integer(2),
        ])
}

@Test func planReadsOnlyTheKeyRangesOfItsFilters() throws {
    let q = try Query.parse(
        #"events | where onboarding == "onb_1" and screen >= 2 and time >= @2026-11-01 | count by screen, name"#)
    let source = InMemoryEventSource(story)
    #expect(
        q.explain(on: source) == """
            read: event keys (onboarding, screen, time, seq)
              range onboarding="onb_1" screen=[2, 65534] time=[2026-11-01T00:00:00.000000Z, +inf]
            filter: 1 `where` stage, checked on every row read
            reduce: count by screen, name
            """)
    let (_, statistics) = try q.execute(on: source)
    // Four events of onb_1 are on screens 2 and 3; nothing else is read.
    #expect(statistics.eventsRead == 4)
}

@Test func aQueryForOneOnboardingNeverReadsTheOthers() throws {
    let q = try Query.parse(#"sessions | where onboarding == "onb_2" | funnel"#)
    let (table, statistics) = try q.execute(on: InMemoryEventSource(story))
    #expect(statistics.sessionsRead == 1)
    #expect(statistics.eventsRead == 1)
    #expect(table.column("sessions") == [.integer(1)])
    let explain = try Query.parse(
        #"sessions | where onboarding in ["onb_2", "onb_9"] and started >= @2026-11-01 | funnel | explain"#)
    #expect(
        try explain.run(on: InMemoryEventSource(story)).render(.csv) == #"""
            plan
            "read: sessions with events in the ranges, through the in-memory session index"
            "  range onboarding=""onb_2"" screen=* time=[2026-11-01T00:00:00.000000Z, +inf]"
            "  range onboarding=""onb_9"" screen=* time=[2026-11-01T00:00:00.000000Z, +inf]"
            "filter: 1 `where` stage, checked on every row read"
            reduce: screen funnel

            """#)
}

@Test func contradictoryFiltersReadNothing() throws {
    let (table, statistics) = try Query.parse(
        #"events | where onboarding == "onb_1" and onboarding == "onb_2" | count"#
    )
    .execute(on: InMemoryEventSource(story))
    #expect(statistics.eventsRead == 0)
    #expect(table.rows == [[.integer(0)]])
}

@Test func dwellReadsEventsThroughTheirSessions() throws {
    let q = try Query.parse(#"events | where dwell > 10s | count"#)
    #expect(q.explain(on: InMemoryEventSource(story)).hasPrefix("read: sessions with events in the ranges"))
}

@Test func cancellationStopsARun() throws {
    let flag = CancellationFlag()
    flag.cancel()
    let events = (0..<10_000).map { ev(Double($0), "s\($0 % 100)", presented) }
    #expect(throws: QueryError.self) {
        try Query.parse("events | count").run(on: InMemoryEventSource(events), options: .init(cancellation: flag))
    }
    do {
        _ = try Query.parse("sessions | count").run(on: InMemoryEventSource(events), options: .init(cancellation: flag))
        Issue.record("a cancelled run returned")
    } catch {
        #expect(error.kind == .cancelled)
    }
    flag.reset()
    #expect(
        try Query.parse("events | count").run(on: InMemoryEventSource(events), options: .init(cancellation: flag)).rows
            == [[.integer(10_000)]])
}

/// A source that cancels the flag after a number of events, as Ctrl-C in the middle of a scan would.
struct CancellingSource: EventSource {
    let inner: InMemoryEventSource
    let flag: CancellationFlag
    let after: Int
    var sessionAccess: String { inner.sessionAccess }
    func scanEvents(_ range: ScanRange, _ body: (InMemoryEventSource.Row) throws(QueryError) -> Bool) throws(QueryError)
    {
        var n = 0
        try inner.scanEvents(range) { (e: InMemoryEventSource.Row) throws(QueryError) -> Bool in
            n += 1
            if n == after { flag.cancel() }
            return try body(e)
        }
    }
    func scanSessions(_ ranges: [ScanRange], _ body: (String, [InMemoryEventSource.Row]) throws(QueryError) -> Bool)
        throws(QueryError)
    {
        try inner.scanSessions(ranges, body)
    }
}

@Test func cancellationInTheMiddleOfAScan() throws {
    let flag = CancellationFlag()
    let events = (0..<20_000).map { ev(Double($0), "s", presented) }
    let source = CancellingSource(inner: InMemoryEventSource(events), flag: flag, after: 100)
    do {
        let (_, statistics) = try Query.parse("events | count").execute(on: source, options: .init(cancellation: flag))
        Issue.record("not cancelled: read \(statistics.eventsRead)")
    } catch {
        #expect(error.kind == .cancelled)
    }
}

/// `started <` bounds the listing range from above (the session's first event is in it), only when neither the
/// onboarding nor the screens are narrowed: the event those need can come after the first one. Here `s2`'s first
/// event is an error without meta, before the bound, and its events of `onb_1` after it; `s3`'s first event is at
/// screen 0 before the bound and its screen 2 after it.
@Test func startedBeforeBoundsTheRangeOnlyWhenNothingElseNarrows() throws {
    let error = Payload.error(OnboardingError(domain: "web", code: 1, message: "m"))
    let events = [
        ev(0, "s1", started), ev(600, "s1", presented),
        ev(100, "s2", screen: nil, error), ev(4000, "s2", started), ev(4100, "s2", screen: 1, presented),
        ev(200, "s3", started), ev(5000, "s3", screen: 2, presented),
        ev(7200, "s4", started),
    ]
    let bound = "@2026-11-01T10:30:00Z"  // base + 1800 s
    let plain = try Query.parse("sessions | where started < \(bound) | explain").run(on: InMemoryEventSource(events))
    #expect(plain.render(.csv).contains("time=[-inf, 2026-11-01T10:29:59.999999Z]"))
    for (text, sessions) in [
        ("sessions | where started < \(bound) | select session", ["s1", "s2", "s3"]),
        (#"sessions | where onboarding == "onb_1" and started < \#(bound) | select session"#, ["s1", "s2", "s3"]),
        ("sessions | where reached(2) and started < \(bound) | select session", ["s3"]),
        ("sessions | where started >= @2026-11-01T10:00:50Z and started <= \(bound) | select session", ["s2", "s3"]),
    ] {
        let table = try run(text, events)
        #expect(Set(table.column("session") ?? []) == Set(sessions.map(Value.string)), "\(text)")
        try withTemporaryStore { store in
            _ = try store.append(events)
            #expect(
                try Query.parse(text).run(
                    on: StoreEventSource(store), options: .init(now: Timestamp(microseconds: base + 86_400 * second))
                )
                .column("session").map(Set.init) == Set(sessions.map(Value.string)), "\(text), store")
        }
    }
    let narrowed = try Query.parse(#"sessions | where onboarding == "onb_1" and started < \#(bound) | explain"#).run(
        on: InMemoryEventSource(events))
    #expect(narrowed.render(.csv).contains("time=*"))
}

/// A listing followed by `limit N` (after any `select`) keeps about N rows while it reads, not every row: the
/// result is the first N of the whole listing, with the cut taken several times over (thousands of rows, small
/// limits), `limit 0` included, and a `where` or `sort` before the limit leaves the listing whole.
@Test func aListingKeepsOnlyTheRowsItsLimitCanReturn() throws {
    var generator = SessionGenerator(seed: 0x117)
    var events: [Event] = []
    while events.count < 6_000 { events += generator.events() }
    let now = Timestamp(microseconds: base + 3 * 86_400 * second)
    func table(_ text: String) throws -> ResultTable {
        try Query.parse(text).run(on: InMemoryEventSource(events), options: .init(now: now))
    }
    let whole = try table("events | select seq, time, session, dwell")
    #expect(whole.rows.count == events.count)
    for n in [0, 1, 7, 500] {
        let limited = try table("events | select seq, time, session, dwell | limit \(n)")
        #expect(limited.rows == Array(whole.rows.prefix(n)), "limit \(n)")
        #expect(
            try table("events | select seq, time, session, dwell | limit \(n) | select seq, dwell").rows
                == limited.rows.map { [$0[0], $0[3]] }, "limit \(n), select after")
        let sessions = try table("sessions | select session, started | limit \(n)")
        #expect(
            sessions.rows == Array(try table("sessions | select session, started").rows.prefix(n)),
            "sessions, limit \(n)")
    }
    let sorted = try table("events | select seq, time | sort time desc | limit 3")
    #expect(
        sorted.rows
            == Array(whole.rows.map { Array($0.prefix(2)) }.sorted { Value.sortsBefore($1[1], $0[1]) }.prefix(3)))
    #expect(try Query.parse("events | select seq | limit 4 | sort seq").checked.listLimit == 4)
    #expect(try Query.parse("events | sort seq | limit 4").checked.listLimit == nil)
    #expect(try Query.parse("events | where seq > 3 | select seq | where seq > 4 | limit 4").checked.listLimit == nil)
    #expect(try Query.parse("events | count by name | limit 4").checked.listLimit == nil)
}
