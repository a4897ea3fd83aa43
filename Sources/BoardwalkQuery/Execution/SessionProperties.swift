import BoardwalkCodec
import BoardwalkModel

/// The properties an `events` query reads of each event's session (`session.completed`,
/// `session.answer("goal")`), for the sessions with an event in the query's ranges.
///
/// A session fold reads each such session whole, as a `sessions` query over the same ranges reads it, and keeps
/// only what the named properties need (``FoldNeeds`` of those properties alone: a lean fold for `completed`, the
/// answers only for `answer(…)`); conjuncts that read nothing but the session's properties are checked there, once
/// per session. The events are then read as an `events` query reads them (counted by field codes when its keys
/// allow), each record checked against its session by interned id. Reading every session met as rows through the
/// session index and summarizing it whole took 686 ms for
/// `events | where onboarding == "…" and name == "screen_presented" and session.completed | count by screen` on the
/// busiest of 50 onboardings at 100 000 sessions; this takes 111 ms, beside 48 ms without `session.completed`
/// (`boardwalk-bench --runs 3 query.session-property query.events-one`, release build).
final class SessionProperties {
    private let needs: FoldNeeds
    /// When every property the query reads says only whether the session has an event of a kind or name
    /// (``SessionEventFlag``): those flags, read from the blocks that hold such events instead of folding every
    /// session the ranges meet.
    private let flags: [SessionEventFlag]?
    /// By the session's interned id: the fold names no session (a session id's string is an allocation and a
    /// lookup in the store's dictionary: 45 % of the fold, `perf`, the busiest onboarding of 100 000 sessions).
    private var sessions: [StringID: SessionSummary] = [:]

    /// The properties `query` reads (filters, listed columns, keys, aggregates), at `now`.
    init(_ query: CheckedQuery, now: Timestamp) {
        var properties: [Bound] = []
        func collect(_ b: Bound?) {
            _ = b?.contains { leaf in
                if case .ofSession(let property) = leaf { properties.append(property) }
                return false
            }
        }
        query.filters.forEach(collect)
        query.rowColumns.forEach { collect($0.bound) }
        switch query.reduction {
        case .count(let by): by.forEach { collect($0.bound) }
        case .stats(let aggregates, let by, _):
            aggregates.forEach { collect($0.argument) }
            by.forEach { collect($0.bound) }
        case .top(_, let key): collect(key.bound)
        case .histogram(let value, _): collect(value.bound)
        case .funnel, .paths, nil: break
        }
        // The properties as the filters of a `sessions` query that reduces: what a fold of its sessions needs.
        let sessionsQuery = CheckedQuery(
            ast: query.ast, source: .sessions, filters: properties, reduction: .count(by: []), rowColumns: [],
            tableStages: [], columns: ["count"], explain: false)
        needs = FoldNeeds(sessionsQuery, now: now)
        // Up to 8 distinct flags: the conjuncts are checked once per combination of them.
        let flags = properties.map(SessionEventFlag.init)
        let distinct = Array(Set(flags.compactMap { $0 }))
        self.flags = properties.isEmpty || flags.contains(nil) || distinct.count > 8 ? nil : distinct
    }

    /// How an `events` query whose session properties are read apart splits its filters. On lean rows, the conjuncts
    /// on coded event fields are checked once per combination of codes (as an `events` query checks them), those on
    /// the session's properties alone once per session, in the fold, and the rest on each row that passes both.
    struct Split {
        /// Whether the events are read as lean rows (``StoreFieldsRow``).
        let lean: Bool
        /// The conjuncts that read no session property.
        let eventPart: [Bound]
        /// ``eventPart`` checked on field codes, when lean rows allow.
        let coded: CodedFilter?
        /// With ``coded``: the conjuncts that read only the session's properties, checked once per session.
        let sessionFilters: [Bound]
        /// What is left to check on each row (all the filters without ``coded``).
        let rest: [Bound]
        /// Whether anything past the fold reads a session's summary (else the fold keeps only who passes).
        let keep: Bool

        init(_ query: CheckedQuery, now: Timestamp) {
            lean = StoreEventSource.readsOnlyWhatEventQueriesNeed && query.readsOnlyOrSessions(\.isLean)
            var conjuncts: [Bound] = []
            for filter in query.filters { filter.conjuncts(into: &conjuncts) }
            let eventPart = conjuncts.filter { !$0.contains { if case .ofSession = $0 { true } else { false } } }
            let sessionPart = conjuncts.filter { $0.readsOnly({ _ in false }, orSessions: true) }
            self.eventPart = eventPart
            if lean, let fields = CodedCountPlan.codedFields(of: eventPart) {
                coded = CodedFilter(eventPart, fields: fields, now: now)
                sessionFilters = sessionPart
                rest = conjuncts.filter { c in !eventPart.contains(c) && !sessionPart.contains(c) }
            } else {
                coded = nil
                sessionFilters = []
                rest = query.filters
            }
            keep = !lean || coded == nil || !rest.isEmpty || query.readsSessionPropertiesBeyondFilters
        }
    }

    /// Whether `query`'s session properties come from the blocks that hold the events of their flags
    /// (``SessionEventFlag``) rather than from folds of the sessions: when each is a flag and only the conjuncts
    /// checked once per session read them. (Neither depends on `now`: the split of the filters does not.)
    static func readsFlags(_ query: CheckedQuery) -> Bool {
        let now = Timestamp(microseconds: 0)
        return !Split(query, now: now).keep && SessionProperties(query, now: now).flags != nil
    }

    /// Whether `query`'s session properties are read apart from its events (``SessionProperties``): on the store,
    /// without `dwell` (which needs each session's events in order anyway), and over ranges that a fold of sessions
    /// reads whole. Ranges that start at a time and have no end are folded for `started >= t` (only the sessions
    /// that start there, from there on), which is not the whole session an event from `t` on belongs to.
    static func readApart(_ query: CheckedQuery, _ ranges: [ScanRange], _ source: some EventSource) -> Bool {
        query.source == .events && query.readsSessionProperties && !query.readsDwell && source is StoreEventSource
            && StoreEventSource.sinceStart(ranges) == nil
    }

    /// Which folded sessions pass the conjuncts that read only their properties
    /// (``fold(_:_:sessionFilters:keep:now:cancellation:text:)``), one bit per interned id: checked once per session
    /// rather than on each of its events, and looked up on each event by a shift and a load, not a hash.
    private(set) var passing = SessionPassSet()

    /// The number of sessions folded; when the flags answer, the sessions with any of them.
    private(set) var count = 0

    /// Folds the sessions with an event in `ranges`, each over all its events.
    /// - Complexity: as a `sessions` query over `ranges` that reads these properties; memory, one summary per
    ///   session.
    /// `sessionFilters`, conjuncts that read nothing but the session's properties, are checked on each session here
    /// (``passes(_:)``); `keep` says whether later reads need the summaries themselves.
    func fold(
        _ store: StoreEventSource, _ ranges: [ScanRange], sessionFilters: [Bound], keep: Bool,
        now: Timestamp, cancellation: CancellationFlag?, text: String
    ) throws(QueryError) {
        if !keep, let flags {
            // The blocks that hold the flags' events are few (`onboarding_completed`: the last screens' groups):
            // the whole `session.completed` query on the busiest of 50 onboardings at 100 000 sessions took 623 M
            // instructions this way, 798 M folding every session the ranges meet.
            try readFlags(
                flags, store, ranges, sessionFilters: sessionFilters, now: now, cancellation: cancellation, text: text)
            return
        }
        try store.foldSessions(ranges, needs: needs, cancellation: cancellation, text: text) { summary, _, _ in
            guard let id = summary.storeID else { return true }
            func leaf(_ b: Bound) -> Value {
                if case .ofSession(let property) = b { return summary.leaf(property) }
                return .null
            }
            count += 1
            if sessionFilters.allSatisfy({ $0.evaluate(now: now, leaf).isTrue }) {
                passing.insert(id)
            }
            if keep { sessions[id] = summary }
            return true
        }
    }

    /// ``fold(_:_:sessionFilters:keep:now:cancellation:text:)`` when the properties are ``flags``: the sessions with
    /// each flag's events (``StoreEventSource/sessions(with:in:cancellation:text:)``: the blocks of the ranges'
    /// onboardings and the sessions that span onboardings, or the whole store, as a session's events may lie outside
    /// the ranges), and the conjuncts checked once per combination of flags.
    /// - Complexity: O(blocks) headers plus the events of the blocks that hold the flags' events, and O(sessions / 64)
    ///   words per combination of flags that passes; memory, a bit per interned id per flag.
    private func readFlags(
        _ flags: [SessionEventFlag], _ store: StoreEventSource, _ ranges: [ScanRange], sessionFilters: [Bound],
        now: Timestamp,
        cancellation: CancellationFlag?, text: String
    ) throws(QueryError) {
        let sets = try store.sessions(with: flags, in: ranges, cancellation: cancellation, text: text).sets.map(\.words)
        for w in 0..<(sets.map(\.count).max() ?? 0) {
            count += sets.reduce(0 as UInt64) { $0 | (w < $1.count ? $1[w] : 0) }.nonzeroBitCount
        }
        /// Whether a session whose flags are the bits of `combination` passes.
        func passes(_ combination: Int) -> Bool {
            sessionFilters.allSatisfy { filter in
                filter.evaluate(now: now) { leaf in
                    guard case .ofSession(let property) = leaf, let flag = SessionEventFlag(property),
                        let i = flags.firstIndex(of: flag)
                    else { return .null }
                    return .bool(combination & (1 << i) != 0)
                }.isTrue
            }
        }
        let wordCount = sets.map(\.count).max() ?? 0
        var words = [UInt64](repeating: 0, count: wordCount)
        for combination in 0..<(1 << flags.count) where passes(combination) {
            for w in 0..<wordCount {
                var bits = UInt64.max
                for (i, set) in sets.enumerated() {
                    let word = w < set.count ? set[w] : 0
                    bits &= combination & (1 << i) != 0 ? word : ~word
                }
                words[w] |= bits
            }
        }
        passing = SessionPassSet(words: words, pastEnd: passes(0))
    }

    /// Whether `row`'s session passes the conjuncts on its properties alone; false when it has none or its session
    /// was not folded (an absent property compares false).
    func passes(_ row: StoreFieldsRow) -> Bool { passes(row.fields) }

    /// ``passes(_:)`` of a record's fields.
    @inline(__always)
    func passes(_ fields: RecordFields) -> Bool { passing.contains(fields) }

    /// The summary of `row`'s session (a row of the store), by its interned id; nil when the event has none or
    /// its session was not folded.
    func summary(of row: some EventRow) -> SessionSummary? {
        let id: StringID? =
            if let lean = row as? StoreFieldsRow { lean.fields.session } else {
                (row as? StoreEventRow)?.view.record.session
            }
        return id.flatMap { sessions[$0] }
    }
}

/// The sessions whose properties pass a query's conjuncts on them (``SessionProperties/passing``), one bit per interned
/// id. A value: a scan keeps its own copy, and a worker of a parallel count reads its own buffer (a buffer read
/// through a shared class was retained on every record, each retain a contended cache line between the cores).
struct SessionPassSet: Sendable {
    private(set) var words: [UInt64] = []
    /// Whether a session past the end of ``words`` passes (a session with no flag set, when the flags answer).
    private(set) var pastEnd = false

    init() {}

    init(words: [UInt64], pastEnd: Bool) {
        self.words = words
        self.pastEnd = pastEnd
    }

    mutating func insert(_ id: StringID) {
        let word = Int(id >> 6)
        if word >= words.count { words += repeatElement(0, count: word + 1 - words.count) }
        words[word] |= 1 << UInt64(id & 63)
    }

    /// Whether the session of a record with `fields` passes; false for a record without a session.
    @inline(__always)
    func contains(_ fields: RecordFields) -> Bool {
        guard let id = fields.session else { return false }
        let word = Int(id >> 6)
        guard word < words.count else { return pastEnd }
        return words[word] & (1 << UInt64(id & 63)) != 0
    }

    /// A copy in a buffer of its own, for one worker.
    func ownCopy() -> SessionPassSet { SessionPassSet(words: words.map { $0 }, pastEnd: pastEnd) }
}
