// What is measured, in which groups, on which inputs. Inputs are made lazily and cached, so a name filter
// that selects one benchmark generates only what that benchmark reads.
import BoardwalkGenerator
import BoardwalkModel

/// Input sizes for a full run and for `--quick`.
struct Sizes {
    /// Events of the JSON and codec benchmarks (the same events for Boardwalk and its peers).
    var jsonEvents: Int
    /// Passes over those events per run for Boardwalk's JSON reader and codec, which are too fast for one.
    var jsonPasses: Int
    var codecPasses: Int
    var appendEvents: Int
    /// Events of the long append (`append-<many>-long`): enough for the store to reach the steady state a long
    /// import sees with many sessions in flight, which the first `appendEvents` do not show.
    var longAppendEvents: Int
    var batch: Int
    var fewSessions: Int
    var manySessions: Int
    /// Events of the end-to-end ingest, and of the small and large inputs of the memory measurement.
    var ingestEvents: Int
    var memorySmall: Int
    var memoryLarge: Int
    /// Sessions in the store the query benchmarks read.
    var querySessions: Int

    static let full = Sizes(
        jsonEvents: 20_000, jsonPasses: 10, codecPasses: 50, appendEvents: 200_000, longAppendEvents: 1_000_000,
        batch: 10_000,
        fewSessions: 1_000, manySessions: 100_000, ingestEvents: 200_000, memorySmall: 100_000, memoryLarge: 400_000,
        querySessions: 100_000)
    static let quick = Sizes(
        jsonEvents: 2_000, jsonPasses: 1, codecPasses: 1, appendEvents: 5_000, longAppendEvents: 10_000, batch: 1_000,
        fewSessions: 100, manySessions: 1_000, ingestEvents: 5_000, memorySmall: 2_000, memoryLarge: 8_000,
        querySessions: 200)
}

/// Generated inputs, cached by what they depend on.
final class Inputs {
    let sizes: Sizes
    private var eventsBySessions: [Int: [Event]] = [:]
    private var rowsBySessions: [Int: Rows] = [:]
    private var cachedLines: JSONLines?
    private var cachedRecords: EncodedEvents?

    init(sizes: Sizes) { self.sizes = sizes }

    /// `count` events from `sessions` sessions in flight (a prefix of the same stream for smaller counts).
    func events(sessions: Int, count: Int) -> [Event] {
        if let cached = eventsBySessions[sessions], cached.count >= count { return Array(cached.prefix(count)) }
        let made = SessionWorkload(sessionsInFlight: sessions).events(count)
        eventsBySessions[sessions] = made
        return made
    }

    private var cachedJSONEvents: [Event]?

    /// The JSON and codec benchmarks' events: the generator's realistic corpus (50 onboardings, event ids
    /// on most events, some sessions without an id), in time order.
    var jsonEvents: [Event] {
        if let cachedJSONEvents { return cachedJSONEvents }
        let made = Array(
            SyntheticData(sessions: sizes.jsonEvents, seed: 7, onboardings: 50).events().prefix(sizes.jsonEvents))
        cachedJSONEvents = made
        return made
    }

    var jsonLines: JSONLines {
        if let cachedLines { return cachedLines }
        let made = JSONLines(jsonEvents)
        cachedLines = made
        return made
    }

    /// The JSON events as full codec records.
    func records() throws -> EncodedEvents {
        if let cachedRecords { return cachedRecords }
        let made = try EncodedEvents(jsonEvents)
        cachedRecords = made
        return made
    }

    /// The append benchmarks' rows: the store's keys, the codec's record body as the value; `count` events
    /// (default: the append's), the first of the same stream.
    func rows(sessions: Int, count: Int? = nil) throws -> Rows {
        let count = count ?? sizes.appendEvents
        if let cached = rowsBySessions[sessions], cached.count == count { return cached }
        let made = try Rows(codec: events(sessions: sessions, count: count))
        rowsBySessions[sessions] = made
        return made
    }
}

/// Every benchmark and group, in report order.
func makeSuite(_ inputs: Inputs) -> (groups: [BenchmarkGroup], cases: [BenchmarkCase]) {
    let s = inputs.sizes
    var groups: [BenchmarkGroup] = []
    var cases: [BenchmarkCase] = []

    // MARK: JSON line → event
    groups.append(
        BenchmarkGroup(
            name: "json-read",
            title:
                "JSON line → event: \(s.jsonEvents) NDJSON lines from the generator, mixed kinds, every shape and envelope",
        ))
    cases.append(
        BenchmarkCase(
            name: "json-read.boardwalk", group: "json-read", isSubject: true, items: s.jsonEvents * s.jsonPasses,
            make: { JSONReaderBench(passes: s.jsonPasses, input: { inputs.jsonLines }) }))
    cases.append(
        BenchmarkCase(
            name: "json-read.foundation-jsondecoder", group: "json-read", isSubject: false, items: s.jsonEvents,
            make: { FoundationJSONDecoderBench(input: { inputs.jsonLines }) }))
    cases.append(
        BenchmarkCase(
            name: "json-read.foundation-jsonserialization", group: "json-read", isSubject: false, items: s.jsonEvents,
            make: { FoundationJSONSerializationBench(input: { inputs.jsonLines }) }))

    // MARK: Binary record → event
    groups.append(
        BenchmarkGroup(
            name: "decode",
            title: "record → event: the same \(s.jsonEvents) events as codec records, \(s.codecPasses) passes per run",
            references: [
                "json-read.boardwalk", "json-read.foundation-jsondecoder", "json-read.foundation-jsonserialization",
            ]))
    cases.append(
        BenchmarkCase(
            name: "decode.boardwalk-owned", group: "decode", isSubject: true, items: s.jsonEvents * s.codecPasses,
            make: { CodecDecodeOwnedBench(passes: s.codecPasses, input: { try inputs.records() }) }))
    cases.append(
        BenchmarkCase(
            name: "decode.boardwalk-borrowed", group: "decode", isSubject: true, items: s.jsonEvents * s.codecPasses,
            make: { CodecDecodeBorrowedBench(passes: s.codecPasses, input: { try inputs.records() }) }))

    // MARK: Event → binary record
    groups.append(
        BenchmarkGroup(
            name: "encode", title: "event → record: the same \(s.jsonEvents) events (the peer writes JSON)"))
    cases.append(
        BenchmarkCase(
            name: "encode.boardwalk", group: "encode", isSubject: true, items: s.jsonEvents * s.codecPasses,
            make: { CodecEncodeBench(passes: s.codecPasses, input: { inputs.jsonEvents }) }))
    cases.append(
        BenchmarkCase(
            name: "encode.foundation-jsonencoder", group: "encode", isSubject: false, items: s.jsonEvents,
            make: { FoundationJSONEncoderBench(input: { inputs.jsonEvents }) }))

    // MARK: Append to the store
    for sessions in [s.fewSessions, s.manySessions] {
        let group = "append-\(sessions)"
        groups.append(
            BenchmarkGroup(
                name: group,
                title: "append, both indexes, durable commit per \(s.batch) events: \(s.appendEvents) events, "
                    + "\(sessions) sessions in flight"))
        let events = { inputs.events(sessions: sessions, count: s.appendEvents) }
        cases.append(
            BenchmarkCase(
                name: "\(group).boardwalk", group: group, isSubject: true, items: s.appendEvents,
                make: { StoreAppendBench(label: "\(sessions)", batch: s.batch, input: events) }))
        // How much of the append is flushing: the same append without fsync at commit (for both loads: at 100 k
        // sessions in flight, the flushes write every group's newest block and grown bucket values again).
        cases.append(
            BenchmarkCase(
                name: "\(group).boardwalk-nosync", group: group, isSubject: false, items: s.appendEvents,
                isVariant: true,
                make: {
                    StoreAppendBench(label: "\(sessions)-nosync", batch: s.batch, durability: .noSync, input: events)
                }))
        cases.append(
            BenchmarkCase(
                name: "\(group).raw-lmdb", group: group, isSubject: false, items: s.appendEvents,
                make: {
                    RawLMDBAppendBench(
                        label: "\(sessions)", batch: s.batch, sorted: false,
                        rows: { try inputs.rows(sessions: sessions) })
                }))
        cases.append(
            BenchmarkCase(
                name: "\(group).raw-lmdb-sorted", group: group, isSubject: false, items: s.appendEvents,
                make: {
                    RawLMDBAppendBench(
                        label: "\(sessions)-sorted", batch: s.batch, sorted: true,
                        rows: { try inputs.rows(sessions: sessions) })
                }))
        // The store's own block layout put by a raw loop: what the store's Swift code adds over LMDB.
        cases.append(
            BenchmarkCase(
                name: "\(group).raw-lmdb-blocks", group: group, isSubject: false, items: s.appendEvents,
                make: {
                    RawBlocksAppendBench(
                        label: "\(sessions)-blocks", batch: s.batch, rows: { try inputs.rows(sessions: sessions) })
                }))
        cases.append(
            BenchmarkCase(
                name: "\(group).sqlite", group: group, isSubject: false, items: s.appendEvents,
                make: {
                    SQLiteAppendBench(
                        label: "\(sessions)", batch: s.batch, rows: { try inputs.rows(sessions: sessions) })
                }))
    }

    // The same append as `append-<many>` over five times the events: with many sessions in flight the store's first
    // 200 000 events are not its steady state (a layout that rewrote the session index in every commit fell from
    // 757 k/s there to 325-372 k/s over 1 M events).
    do {
        let sessions = s.manySessions, count = s.longAppendEvents
        let group = "append-\(sessions)-long"
        groups.append(
            BenchmarkGroup(
                name: group,
                title:
                    "append, both indexes, durable commit per \(s.batch) events: \(count) events, \(sessions) sessions in flight "
                    + "(a long import's steady state)"))
        let events = { inputs.events(sessions: sessions, count: count) }
        cases.append(
            BenchmarkCase(
                name: "\(group).boardwalk", group: group, isSubject: true, items: count,
                make: { StoreAppendBench(label: "\(sessions)-long", batch: s.batch, input: events) }))
        cases.append(
            BenchmarkCase(
                name: "\(group).boardwalk-nosync", group: group, isSubject: false, items: count, isVariant: true,
                make: {
                    StoreAppendBench(
                        label: "\(sessions)-long-nosync", batch: s.batch, durability: .noSync, input: events)
                }))
        cases.append(
            BenchmarkCase(
                name: "\(group).raw-lmdb", group: group, isSubject: false, items: count,
                make: {
                    RawLMDBAppendBench(
                        label: "\(sessions)-long", batch: s.batch, sorted: false,
                        rows: { try inputs.rows(sessions: sessions, count: count) })
                }))
        cases.append(
            BenchmarkCase(
                name: "\(group).sqlite", group: group, isSubject: false, items: count,
                make: {
                    SQLiteAppendBench(
                        label: "\(sessions)-long", batch: s.batch,
                        rows: { try inputs.rows(sessions: sessions, count: count) })
                }))
    }

    // MARK: Full scan
    groups.append(
        BenchmarkGroup(
            name: "scan",
            title: "full scan in key order: \(s.appendEvents) events (\(s.fewSessions) sessions in flight when written)"
        ))
    cases.append(
        BenchmarkCase(
            name: "scan.boardwalk", group: "scan", isSubject: true, items: s.appendEvents,
            make: { StoreScanBench(input: { inputs.events(sessions: s.fewSessions, count: s.appendEvents) }) }))
    cases.append(
        BenchmarkCase(
            name: "scan.raw-lmdb", group: "scan", isSubject: false, items: s.appendEvents,
            make: { RawLMDBScanBench(rows: { try inputs.rows(sessions: s.fewSessions) }) }))
    cases.append(
        BenchmarkCase(
            name: "scan.sqlite", group: "scan", isSubject: false, items: s.appendEvents,
            make: { SQLiteScanBench(rows: { try inputs.rows(sessions: s.fewSessions) }) }))

    // MARK: End to end
    groups.append(
        BenchmarkGroup(
            name: "ingest",
            title: "NDJSON file → store, end to end (read, parse, append, durable commit per \(s.batch)): "
                + "\(s.ingestEvents) generated events"))
    cases.append(
        BenchmarkCase(
            name: "ingest.boardwalk", group: "ingest", isSubject: true, items: s.ingestEvents,
            make: { IngestBench(events: s.ingestEvents, batch: s.batch) }))
    groups.append(
        BenchmarkGroup(
            name: "rss",
            title: "peak memory while ingesting \(s.memorySmall) and \(s.memoryLarge) events, one child process each"))
    cases.append(
        BenchmarkCase(
            name: "rss.boardwalk-ingest", group: "rss", isSubject: true, items: s.memorySmall + s.memoryLarge,
            fixedRuns: 1,
            make: { IngestMemoryBench(small: s.memorySmall, large: s.memoryLarge, batch: s.batch) }))

    // MARK: Queries
    let queryStore = QueryStore(sessions: s.querySessions)
    groups.append(
        BenchmarkGroup(
            name: "query",
            title:
                "boardwalk query, in process (open, plan, read, render JSON): \(s.querySessions) generated sessions, "
                + "50 onboardings; items = sessions in the store",
            notYetMeasured: [
                "query.duckdb: DuckDB on the same events is scripts/duckdb_compare.py's job, not this executable's"
            ]))
    cases.append(
        BenchmarkCase(
            name: "query.funnel-whole-store", group: "query", isSubject: true, items: s.querySessions,
            make: { QueryBench(store: queryStore, query: { _ in "sessions | funnel" }) }))
    cases.append(
        BenchmarkCase(
            name: "query.funnel-one-onboarding", group: "query", isSubject: true, items: s.querySessions,
            make: {
                QueryBench(
                    store: queryStore, query: { "sessions | where onboarding == \"\($0.busiestOnboarding)\" | funnel" })
            }))
    cases.append(
        BenchmarkCase(
            name: "query.funnel-median-onboarding", group: "query", isSubject: true, items: s.querySessions,
            make: {
                QueryBench(
                    store: queryStore, query: { "sessions | where onboarding == \"\($0.medianOnboarding)\" | funnel" })
            }))
    // Queries that need each session's events in order: dwell (rule 7) and a strict funnel.
    cases.append(
        BenchmarkCase(
            name: "query.dwell-by-screen", group: "query", isSubject: true, items: s.querySessions,
            make: {
                QueryBench(
                    store: queryStore,
                    query: { _ in #"events | where name == "screen_presented" | stats p50(dwell), p90(dwell) by screen"#
                    })
            }))
    cases.append(
        BenchmarkCase(
            name: "query.strict-funnel-one-onboarding", group: "query", isSubject: true, items: s.querySessions,
            make: {
                QueryBench(
                    store: queryStore,
                    query: {
                        "sessions | where onboarding == \"\($0.busiestOnboarding)\" | funnel screen_presented(screen == 0), "
                            + "screen_completed(screen == 2), open_paywall within 30m mode strict"
                    })
            }))
    // The event's session (`session.`) and funnels broken down by it, beside the same questions without it: a
    // `session.` property on one onboarding should stay within 2x of the query without it.
    cases.append(
        BenchmarkCase(
            name: "query.events-one-onboarding", group: "query", isSubject: true, items: s.querySessions,
            make: {
                QueryBench(
                    store: queryStore,
                    query: {
                        "events | where onboarding == \"\($0.busiestOnboarding)\" and name == \"screen_presented\" "
                            + "| count by screen"
                    })
            }))
    cases.append(
        BenchmarkCase(
            name: "query.session-property-one-onboarding", group: "query", isSubject: true, items: s.querySessions,
            make: {
                QueryBench(
                    store: queryStore,
                    query: {
                        "events | where onboarding == \"\($0.busiestOnboarding)\" and name == \"screen_presented\" "
                            + "and session.completed | count by screen"
                    })
            }))
    cases.append(
        BenchmarkCase(
            name: "query.funnel-by-session-one-onboarding", group: "query", isSubject: true, items: s.querySessions,
            make: {
                QueryBench(
                    store: queryStore,
                    query: {
                        "sessions | where onboarding == \"\($0.busiestOnboarding)\" | funnel by session.variation"
                    })
            }))
    // A count by an event field over every event, on one thread and on every core: answered from the blocks' kind
    // counts, which read no record and do not split across threads, so both rows measure the same reads.
    let countByName = #"events | where kind == "analytics" | count by name"#
    cases.append(
        BenchmarkCase(
            name: "query.count-by-name-one-thread", group: "query", isSubject: true, items: s.querySessions,
            make: { QueryBench(store: queryStore, threads: 1, query: { _ in countByName }) }))
    cases.append(
        BenchmarkCase(
            name: "query.count-by-name-all-threads", group: "query", isSubject: true, items: s.querySessions,
            make: { QueryBench(store: queryStore, query: { _ in countByName }) }))
    cases.append(
        BenchmarkCase(
            name: "query.count-by-day", group: "query", isSubject: true, items: s.querySessions,
            make: {
                QueryBench(store: queryStore, query: { _ in #"sessions | count by day(started, "Europe/Berlin")"# })
            }))
    // Counts and rates by a session field over every session: from the session index's first references (the
    // onboarding), from every record with its kind and string fields (the variation and the completion), and from
    // session_names (the profile).
    let bySessionField = [
        ("query.count-by-onboarding", "sessions | count by onboarding"),
        ("query.rate-by-variation", "sessions | stats count(), rate(completed) by variation"),
        ("query.returning-profiles", "sessions | count by profile | where count > 1 | count"),
    ]
    for (name, text) in bySessionField {
        cases.append(
            BenchmarkCase(
                name: name, group: "query", isSubject: true, items: s.querySessions,
                make: { QueryBench(store: queryStore, query: { _ in text }) }))
    }

    // MARK: Peeks and lookups
    let lookupTable = LookupTable(store: queryStore)
    let lookups: [(group: String, title: String, query: (QueryStore) -> String, peer: SQLiteLookupBench.Question)] = [
        (
            "events-limit", "`events | limit 5`: the 5 earliest events", { _ in "events | limit 5" },
            .firstEvents
        ),
        (
            "sessions-limit", "`sessions | limit 5`: the 5 sessions that start first, each read whole",
            { _ in "sessions | limit 5" }, .firstSessions
        ),
        (
            "profile-sessions", "`sessions | where profile == \"…\"`: one profile's sessions, each read whole",
            { "sessions | where profile == \"\($0.sampleProfile)\"" }, .profileSessions
        ),
        (
            "session-events", "`events | where session == \"…\"`: one session's events",
            { "events | where session == \"\($0.sampleSession)\"" }, .sessionEvents
        ),
    ]
    for lookup in lookups {
        groups.append(
            BenchmarkGroup(
                name: lookup.group,
                title: lookup.title
                    + " (boardwalk query in process, \(s.querySessions) generated sessions; SQLite with "
                    + "the index the question needs, its ids looked up before timing)"))
        cases.append(
            BenchmarkCase(
                name: "\(lookup.group).boardwalk", group: lookup.group, isSubject: true, items: 1,
                make: { QueryBench(store: queryStore, query: lookup.query) }))
        cases.append(
            BenchmarkCase(
                name: "\(lookup.group).sqlite", group: lookup.group, isSubject: false, items: 1,
                make: { SQLiteLookupBench(table: lookupTable, question: lookup.peer) }))
    }

    return (groups, cases)
}
