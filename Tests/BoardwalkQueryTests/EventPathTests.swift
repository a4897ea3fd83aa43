import BoardwalkModel
import BoardwalkStore
import Testing

@testable import BoardwalkQuery

// The store's cheaper `events` paths (counts from block headers, rows through `RecordFields`) against the
// in-memory source and the reference evaluator, and against the store's own full path (every record read
// through a full view), which `StoreEventSource.readsOnlyWhatEventQueriesNeed` forces.

/// Runs `query` on the store with the cheaper paths on or off.
private func runOnStore(_ query: Query, _ store: Store, fast: Bool, now: Timestamp) throws -> (
    ResultTable, RunStatistics
) {
    try StoreEventSource.$readsOnlyWhatEventQueriesNeed.withValue(fast) {
        try query.execute(on: StoreEventSource(store), options: .init(now: now))
    }
}

@Test func storeEventPathsAgreeWithTheReference() throws {
    let now = Timestamp(microseconds: base + 3 * 86_400 * second)
    var queries = QueryGenerator(seed: 0xB10C)
    var ran = 0, nonEmpty = 0
    var headerCounts = 0, blocksCounted = 0, blocksRead = 0, lean = 0, coded = 0, memo = 0, full = 0
    for dataset in 0..<16 {
        var generator = SessionGenerator(seed: 0xE7E7 ^ UInt64(dataset))
        let events = generator.events()
        try withTemporaryStore { store in
            try appendInThreeBatches(events, to: store)
            let stored = try store.read { try $0.events(since: 0) }.map(\.event)
            let memory = InMemoryEventSource(stored)
            let reference = ReferenceEvaluator(now: now)
            for _ in 0..<50 {
                let text = queries.eventPathQuery(stored)
                let query: Query
                do { query = try Query.parse(text) } catch {
                    Issue.record("generated query does not parse: \(text)\n\(error)")
                    return
                }
                let expected = try query.run(on: memory, options: .init(now: now))
                let byReference = reference.run(query.checked, stored)
                ran += 1
                if !expected.rows.isEmpty && expected.rows != [[.integer(0)]] { nonEmpty += 1 }
                guard agree(expected, byReference) else {
                    Issue.record(
                        "dataset \(dataset): \(text)\nmemory:\n\(expected.render(.table))\nreference:\n\(byReference.render(.table))"
                    )
                    return
                }
                let plan = Plan.make(query.checked, now: now)
                for fast in [true, false] {
                    let (table, statistics) = try runOnStore(query, store, fast: fast, now: now)
                    guard agree(table, expected) else {
                        Issue.record(
                            "dataset \(dataset), \(fast ? "cheaper paths" : "full records"): \(text)\nstore:\n\(table.render(.table))\nmemory:\n\(expected.render(.table))"
                        )
                        return
                    }
                    guard fast else { continue }
                    if plan.blockCounts != nil {
                        headerCounts += 1
                        // Nothing is read as a row: every event counted comes from block keys and headers.
                        #expect(statistics.eventsRead == 0, "\(text)")
                        blocksCounted += statistics.blocksCounted
                        blocksRead += statistics.blocksRead
                    } else if let codes = plan.codedCount {
                        coded += 1
                        if codes.filterFields != nil && !codes.filters.isEmpty { memo += 1 }
                    } else if plan.leanEvents {
                        lean += 1
                    } else {
                        full += 1
                    }
                }
            }
        }
    }
    #expect(ran == 800)
    #expect(nonEmpty > ran / 2)
    // Every path is exercised, and counts both from whole blocks and from blocks read for their times.
    #expect(
        headerCounts > 200 && lean > 50 && coded > 50 && memo > 20 && full > 20,
        "header counts \(headerCounts), lean rows \(lean), counts by codes \(coded) (filters by codes \(memo)), full \(full)"
    )
    #expect(blocksCounted > 100 && blocksRead > 100, "blocks counted \(blocksCounted), read \(blocksRead)")
}

/// Ten events of one group, 10 s apart from 10:00:00, in one batch: one block.
private let tenInOneBlock = (0..<10).map { ev(Double($0 * 10), "s1", presented) }

@Test func aTimeRangeThatCutsABlockReadsOnlyItsTimes() throws {
    let now = Timestamp(microseconds: base + 86_400 * second)
    try withTemporaryStore { store in
        _ = try store.append(tenInOneBlock)
        var blocks = 0
        try store.read { snapshot in
            try snapshot.forEachBlock(onboarding: nil) { _ in
                blocks += 1; return true
            }
        }
        #expect(blocks == 1)
        let cases: [(String, Int, counted: Int, read: Int)] = [
            // Inside the range from its first event to its last: counted from the header.
            ("time >= @2026-11-01T10:00:00Z and time <= @2026-11-01T10:01:30Z", 10, 1, 0),
            ("time >= @2026-11-01", 10, 1, 0),
            // Cut at both ends, edges inclusive and exclusive.
            ("time >= @2026-11-01T10:00:30Z and time <= @2026-11-01T10:01:00Z", 4, 0, 1),
            ("time > @2026-11-01T10:00:30Z and time < @2026-11-01T10:01:00Z", 2, 0, 1),
            ("time == @2026-11-01T10:00:50Z", 1, 0, 1),
            // The block's last event is excluded by `<`: the block is read, nothing of it counts.
            ("time < @2026-11-01T10:01:30Z", 9, 0, 1),
            // Past the block's end: not even its header passes.
            ("time > @2026-11-01T10:01:30Z", 0, 0, 0),
            // Per-event conditions read every block's times, inside the range or not.
            ("time != @2026-11-01T10:00:50Z", 9, 0, 1),
            ("seq < 3", 3, 0, 1),
        ]
        for (filter, count, counted, read) in cases {
            let query = try Query.parse("events | where \(filter) | count")
            let (table, statistics) = try runOnStore(query, store, fast: true, now: now)
            #expect(table.rows == [[.integer(Int64(count))]], "\(filter)")
            #expect(
                statistics.blocksCounted == counted && statistics.blocksRead == read && statistics.eventsRead == 0,
                "\(filter): \(statistics)")
            #expect(
                try query.run(on: InMemoryEventSource(tenInOneBlock), options: .init(now: now)) == table, "\(filter)")
        }
    }
}

@Test func eventsWithoutAPositionAreCountedUnderAbsentKeys() throws {
    let error = Payload.error(OnboardingError(domain: "webkit", code: 1, message: "m"))
    let events = [
        ev(0, "s1", screen: 0, started), ev(1, "s1", screen: 1, presented), ev(2, "s1", screen: 1, presented),
        // Errors outside the page: keyed under onboarding 0xFFFF_FFFF and screen 0xFFFF, after every onboarding.
        ev(3, "s1", screen: nil, error), ev(4, "s2", screen: nil, error),
        ev(5, "s3", screen: 2, onboarding: "onb_2", presented),
    ]
    let now = Timestamp(microseconds: base + 86_400 * second)
    let cases: [(String, [[Value]])] = [
        ("count", [[.integer(6)]]),
        (
            "count by onboarding, screen",
            [
                [.string("onb_1"), .integer(0), .integer(1)], [.string("onb_1"), .integer(1), .integer(2)],
                [.string("onb_2"), .integer(2), .integer(1)], [.null, .null, .integer(2)],
            ]
        ),
        (
            "count by onboarding",
            [[.string("onb_1"), .integer(3)], [.string("onb_2"), .integer(1)], [.null, .integer(2)]]
        ),
        // A condition on the screen or the onboarding is false for them (rule 11: comparisons with absent).
        ("where screen >= 0 | count", [[.integer(4)]]),
        (#"where onboarding != "onb_1" | count"#, [[.integer(1)]]),
        (
            "where time >= @2026-11-01T10:00:03Z | count by screen",
            [[.integer(2), .integer(1)], [.null, .integer(2)]]
        ),
        // `top` leaves absent out.
        ("top 5 onboarding", [[.string("onb_1"), .integer(3)], [.string("onb_2"), .integer(1)]]),
    ]
    try withTemporaryStore { store in
        _ = try store.append(events)
        for (stages, rows) in cases {
            let query = try Query.parse("events | " + stages)
            #expect(Plan.make(query.checked, now: now).blockCounts != nil, "\(stages)")
            let (table, statistics) = try runOnStore(query, store, fast: true, now: now)
            #expect(table.rows == rows, "\(stages):\n\(table.render(.table))")
            #expect(statistics.eventsRead == 0)
            #expect(try runOnStore(query, store, fast: false, now: now).0 == table, "\(stages)")
            #expect(try query.run(on: InMemoryEventSource(events), options: .init(now: now)) == table, "\(stages)")
        }
    }
}

@Test func lateEventsAndDuplicatesInOverlappingBlocksAreCountedOnce() throws {
    func at(_ seconds: Double, _ id: String) -> Event {
        var event = ev(seconds, "s1", presented)
        event.eventID = id
        return event
    }
    let first = [at(0, "e0"), at(60, "e1"), at(120, "e2"), at(180, "e3")]
    // Arrives later with earlier times: the group's block cannot grow (its last event is at 180 s), so a second
    // block starts at 30 s, overlapping the first.
    let late = [at(30, "l0"), at(90, "l1"), at(150, "l2")]
    let now = Timestamp(microseconds: base + 86_400 * second)
    try withTemporaryStore { store in
        _ = try store.append(first)
        _ = try store.append(late)
        // A retried upload: the same ids, times and group are duplicates, skipped by the store.
        #expect(try store.append(first + late).duplicates == 7)
        var spans: [ClosedRange<Int64>] = []
        try store.read { snapshot in
            try snapshot.forEachBlock(onboarding: nil) { block in
                spans.append(block.firstTime...block.lastTime)
                return true
            }
        }
        #expect(spans.count == 2)
        #expect(spans.count == 2 && spans[0].overlaps(spans[1]))
        let cases: [(String, Int, counted: Int, read: Int)] = [
            ("", 7, 2, 0),
            // 60, 90, 120, 150 s: both blocks are cut.
            ("where time >= @2026-11-01T10:00:45Z and time < @2026-11-01T10:02:45Z | ", 4, 0, 2),
            // The late block (30-150 s) lies inside, the first one (0-180 s) is cut: 3 + 60, 120, 180 s.
            ("where time >= @2026-11-01T10:00:30Z | ", 6, 1, 1),
        ]
        for (filter, count, counted, read) in cases {
            let query = try Query.parse("events | \(filter)count")
            let (table, statistics) = try runOnStore(query, store, fast: true, now: now)
            #expect(table.rows == [[.integer(Int64(count))]], "\(filter)")
            #expect(statistics.blocksCounted == counted && statistics.blocksRead == read, "\(filter): \(statistics)")
            #expect(try runOnStore(query, store, fast: false, now: now).0 == table, "\(filter)")
        }
    }
}

/// Counts by kind and name come from the blocks' kind counts, which name each analytics name outside the known ones:
/// no record is read, and a block the time range cuts is read for its events' times and kinds only.
@Test func countsByKindAndNameComeFromTheBlocksKindCounts() throws {
    let close = Payload.close(actionID: "x")
    let events = [
        ev(0, "s1", screen: 0, started), ev(1, "s1", screen: 0, presented), ev(2, "s1", screen: 0, close),
        ev(3, "s1", screen: 1, presented), ev(4, "s1", screen: 1, .analytics(.unknown(name: "close"))),
        ev(5, "s1", screen: 1, .analytics(.unknown(name: "navigation_failed"))), ev(6, "s1", screen: 1, completedEvent),
        ev(7, "s2", screen: 1, .analytics(.unknown(name: "navigation_failed"))),
        // An error outside the page: no onboarding, no screen.
        ev(8, "s2", screen: nil, .error(OnboardingError(domain: "webkit", code: 1, message: "m"))),
    ]
    let now = Timestamp(microseconds: base + 86_400 * second)
    // Each query, its rows and the blocks read for their events (the others are counted from their headers).
    let cases: [(String, [[Value]], blocksRead: Int)] = [
        (
            "count by kind",
            [[.string("analytics"), .integer(7)], [.string("close"), .integer(1)], [.string("error"), .integer(1)]], 0
        ),
        (
            #"where kind == "analytics" and screen == 1 | count by name"#,
            [
                [.string("close"), .integer(1)], [.string("navigation_failed"), .integer(2)],
                [.string("onboarding_completed"), .integer(1)], [.string("screen_presented"), .integer(1)],
            ], 0
        ),
        (
            #"where name == "screen_presented" | count by screen"#,
            [[.integer(0), .integer(1)], [.integer(1), .integer(1)]], 0
        ),
        (#"where name in ["onboarding_started", "onboarding_completed"] | count"#, [[.integer(2)]], 0),
        // A kind's name may also be an unknown analytics name's.
        (
            #"where name == "close" | count by kind"#,
            [[.string("analytics"), .integer(1)], [.string("close"), .integer(1)]], 0
        ),
        (#"where kind != "analytics" or screen == 0 | count"#, [[.integer(4)]], 0),
        (
            #"where not (kind == "analytics") | count by kind"#,
            [[.string("close"), .integer(1)], [.string("error"), .integer(1)]], 0
        ),
        (#"where kind == "error" | count by onboarding, screen"#, [[.null, .null, .integer(1)]], 0),
        // The range cuts the second screen's block: its events' kinds are read from their records' first bytes.
        (
            #"where time >= @2026-11-01T10:00:05Z and kind == "analytics" | count by name"#,
            [[.string("navigation_failed"), .integer(2)], [.string("onboarding_completed"), .integer(1)]], 1
        ),
    ]
    try withTemporaryStore { store in
        _ = try store.append(events)
        for (stages, rows, read) in cases {
            let query = try Query.parse("events | " + stages)
            #expect(Plan.make(query.checked, now: now).blockCounts != nil, "\(stages)")
            let (table, statistics) = try runOnStore(query, store, fast: true, now: now)
            #expect(table.rows == rows, "\(stages):\n\(table.render(.table))")
            #expect(statistics.eventsRead == 0 && statistics.blocksRead == read, "\(stages): \(statistics)")
            #expect(try runOnStore(query, store, fast: false, now: now).0 == table, "\(stages)")
            #expect(try query.run(on: InMemoryEventSource(events), options: .init(now: now)) == table, "\(stages)")
        }
    }
}

@Test func aScanFilteredOnKindsReadsOnlyTheBlocksWhoseHeadersCountThem() throws {
    let close = Payload.close(actionID: "x")
    // Three screens of two onboardings; completions on screen 2 only, a close on screen 1 of one session.
    var events: [Event] = []
    for session in 0..<6 {
        let id = "s\(session)", onboarding = "onb_\(session % 2 + 1)"
        for screen in 0..<3 {
            let t = Double(session * 10 + screen)
            events.append(ev(t, id, screen: screen, onboarding: onboarding, presented))
            if screen == 1 && session == 3 { events.append(ev(t + 0.5, id, screen: 1, onboarding: onboarding, close)) }
        }
        events.append(ev(Double(session * 10 + 3), id, screen: 2, onboarding: onboarding, completedEvent))
    }
    let now = Timestamp(microseconds: base + 86_400 * second)
    // Each query and the events it reads: those of the blocks whose headers count an event that passes its filters.
    let cases: [(String, read: Int)] = [
        (#"where name == "onboarding_completed" | count by session"#, 12),
        (#"where onboarding == "onb_1" and name == "onboarding_completed" | count by session"#, 6),
        (#"where kind == "close" | count by screen, session"#, 4),
        (#"where kind == "close" and screen == 2 | count by session"#, 0),
        (#"where name == "screen_presented" or kind == "close" | count by screen, session"#, 25),
        // A conjunct on other fields leaves the one on kinds to step over blocks.
        (#"where name == "onboarding_completed" and session != "s1" | count by session"#, 12),
        // Rows read through their leading fields (no count by codes): the same blocks.
        (#"where name == "onboarding_completed" | stats max(time) by session"#, 12),
        (#"where kind == "close" | stats min(time)"#, 4),
    ]
    try withTemporaryStore { store in
        _ = try store.append(events)
        for (stages, read) in cases {
            let query = try Query.parse("events | " + stages)
            #expect(Plan.make(query.checked, now: now).leanEvents, "\(stages)")
            let (table, statistics) = try runOnStore(query, store, fast: true, now: now)
            #expect(statistics.eventsRead == read, "\(stages): \(statistics)")
            #expect(try runOnStore(query, store, fast: false, now: now).0 == table, "\(stages)")
            #expect(try query.run(on: InMemoryEventSource(events), options: .init(now: now)) == table, "\(stages)")
        }
        // A listing that stops early reads the earliest events of the blocks that can hold its rows, and no other.
        for stages in [#"where name == "onboarding_completed" | limit 4"#, #"where kind == "close" | limit 1"#] {
            let query = try Query.parse("events | " + stages)
            let (table, statistics) = try runOnStore(query, store, fast: true, now: now)
            let (full, fullStatistics) = try runOnStore(query, store, fast: false, now: now)
            #expect(table == full && !table.rows.isEmpty, "\(stages)")
            #expect(statistics.eventsRead <= 12 && fullStatistics.eventsRead > 12, "\(stages): \(statistics)")
        }
    }
}

@Test func storeExplainSaysWhatEventQueriesRead() throws {
    try withTemporaryStore { store in
        _ = try store.append(story)
        let source = StoreEventSource(store)
        let counts = try Query.parse(
            #"events | where onboarding == "onb_1" and screen != 1 and time >= @2026-11-01 | where seq < 40 | count by screen"#
        )
        // At one thread (the `threads:` line says how many a count from headers splits across).
        func explain(_ query: Query) -> String { StoreEventSource.$threads.withValue(1) { query.explain(on: source) } }
        #expect(
            explain(counts) == """
                read: event blocks' keys and headers (onboarding, screen, first time; count, time span), no record decoded: \
                blocks inside the time range counted from their headers, blocks it cuts read for their events' times
                  range onboarding="onb_1" screen=* time=[2026-11-01T00:00:00.000000Z, +inf]
                threads: 1
                filter: 2 `where` stages, 2 conditions once per (onboarding, screen) group; time comparisons as the time range; \
                1 condition on each event's time and seq
                reduce: count by screen
                """)
        let names = try Query.parse(#"events | where kind == "analytics" | count by name"#)
        #expect(
            explain(names) == """
                read: event blocks' keys and headers (onboarding, screen, first time; count, time span, kind counts), no record \
                decoded: blocks inside the time range counted from their headers, blocks it cuts read for their events' times \
                and kinds
                  range onboarding=* screen=* time=* (the whole store)
                threads: 1
                filter: 1 `where` stage, 1 condition once per group and kind of the blocks' kind counts
                reduce: count by name
                """)
        let lean = try Query.parse(#"events | where kind == "analytics" | count by element"#)
        #expect(
            StoreEventSource.$threads.withValue(2) { lean.explain(on: source) } == """
                read: event keys (onboarding, screen, time, seq), each record's leading fields only (no screen_cid, event_id, \
                value or label read), counted by field codes; blocks whose headers count no event that can pass the filters \
                stepped over unread
                  range onboarding=* screen=* time=* (the whole store)
                threads: up to 2, each reading parts of the ranges (an onboarding, or a time slice of one, of 65536 events or \
                more) and merging what it counted; fewer events run on one thread
                filter: 1 `where` stage, checked on each record's kind code, once per group and code
                reduce: count by element
                """)
        // Dwell reads whole sessions (gathered or through the index), lean fields, filters on codes memoized.
        let dwell = try Query.parse(#"events | where name == "screen_presented" | stats p50(dwell) by screen"#)
        let dwellPlan = dwell.explain(on: source).split(separator: "\n")
        #expect(dwellPlan.first?.hasPrefix("read: sessions with events in the ranges, all their events") == true)
        #expect(
            dwellPlan.first?.hasSuffix(
                "; each record's leading fields only (no screen_cid, event_id, value or label read)") == true)
        #expect(dwellPlan.last == "reduce: stats p50(dwell) by screen")
        #expect(
            dwellPlan.contains(
                "filter: 1 `where` stage, checked once per combination of the codes of name (at most 65 536 kept, then on every row)"
            ))
        let dwellOnValues = try Query.parse(#"events | where dwell > 10s | stats p50(dwell) by value"#).explain(
            on: source)
        #expect(
            !dwellOnValues.contains("leading fields only")
                && dwellOnValues.contains("filter: 1 `where` stage, checked on every row read"))
        let full = try Query.parse(#"events | where element == "interests" | top 10 value"#)
        #expect(
            full.explain(on: source) == """
                read: event keys (onboarding, screen, time, seq)
                  range onboarding=* screen=* time=* (the whole store)
                filter: 1 `where` stage, checked on every row read
                reduce: top 10 value
                """)
        // With the cheaper paths off (as tests force), the count reads every record.
        let off = StoreEventSource.$readsOnlyWhatEventQueriesNeed.withValue(false) { counts.explain(on: source) }
        #expect(off.hasPrefix("read: event keys (onboarding, screen, time, seq)\n"))
        // The in-memory source has no blocks: its plan text is unchanged.
        #expect(
            counts.explain(on: InMemoryEventSource(story)).hasPrefix(
                "read: event keys (onboarding, screen, time, seq)\n"))
    }
}

@Test func theLeanPathIsTakenOnlyForFieldsRecordFieldsReads() throws {
    let now = Timestamp(microseconds: base)
    func plan(_ text: String) throws -> Plan { Plan.make(try Query.parse(text).checked, now: now) }
    for text in [
        #"events | where kind == "analytics" | count by element"#, "events | select seq, session, element, reply",
        #"events | where action == "p" | stats count_distinct(profile) by variation, placement"#,
        "events | top 3 element_type", "events | stats max(total_screens), min(time)",
        // Dwell is computed from each session's rows, from lean fields.
        #"events | where name == "screen_presented" | stats p50(dwell) by screen"#,
    ] {
        #expect(try plan(text).leanEvents, "\(text)")
        #expect(try plan(text).blockCounts == nil, "\(text)")
    }
    #expect(try plan(#"events | where name == "screen_presented" | stats p50(dwell) by screen"#).codedCount == nil)
    for text in [
        "events | top 3 value", "events | count by label", "events | select screen_cid",
        "events | stats count_distinct(event_id)",
        #"events | where value == "pro" | stats p50(dwell) by screen"#, "events | select dwell, label",
    ] {
        #expect(try !plan(text).leanEvents, "\(text)")
    }
    // Counts by coded fields: time comparisons become the time range, the rest is kept per combination of codes.
    let coded = try #require(
        try plan(#"events | where time >= @2026-11-01 and kind == "analytics" and @2026-11-02 > time | count by name"#)
            .codedCount)
    #expect(coded.filters.count == 1 && coded.filterFields == [.kind] && coded.keys == [.name])
    #expect(
        coded.time == (
            Timestamp(iso8601: "2026-11-01")!.microseconds, Timestamp(iso8601: "2026-11-02")!.microseconds - 1
        ))
    #expect(try plan(#"events | where total_screens > 3 | top 2 element"#).codedCount?.filterFields == nil)
    #expect(try plan("events | count by name, time").codedCount == nil)
    // Counts by per-group keys, kinds and names with conditions on those, time and seq only: from block headers.
    for text in [
        "events | count", "events | count by onboarding, screen", "events | where time > now() - 1d | top 2 screen",
        "events | where screen + 1 > 2 or seq < 5 | histogram screen", "events | stats count() by screen",
        "events | count by name", #"events | where kind == "analytics" | count"#,
        #"events | where kind == "close" or screen > 2 | top 3 name"#,
    ] {
        #expect(try plan(text).blockCounts != nil, "\(text)")
    }
    for text in [
        "events | stats count(session) by screen", #"events | where name == "x" or seq < 5 | count"#,
        "events | count by time", "sessions | count",
    ] {
        #expect(try plan(text).blockCounts == nil, "\(text)")
    }
}
