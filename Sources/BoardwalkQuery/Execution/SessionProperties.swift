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
    private var passing: [UInt64] = []

    /// The number of sessions folded.
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
        try store.foldSessions(ranges, needs: needs, cancellation: cancellation, text: text) { summary, _, _ in
            guard let id = summary.storeID else { return true }
            func leaf(_ b: Bound) -> Value {
                if case .ofSession(let property) = b { return summary.leaf(property) }
                return .null
            }
            count += 1
            if sessionFilters.allSatisfy({ $0.evaluate(now: now, leaf).isTrue }) {
                let word = Int(id >> 6)
                if word >= passing.count { passing += repeatElement(0, count: word + 1 - passing.count) }
                passing[word] |= 1 << UInt64(id & 63)
            }
            if keep { sessions[id] = summary }
            return true
        }
    }

    /// Whether `row`'s session passes the conjuncts on its properties alone; false when it has none or its session
    /// was not folded (an absent property compares false).
    func passes(_ row: StoreFieldsRow) -> Bool { passes(row.fields) }

    /// ``passes(_:)`` of a record's fields.
    @inline(__always)
    func passes(_ fields: RecordFields) -> Bool {
        guard let id = fields.session else { return false }
        let word = Int(id >> 6)
        return word < passing.count && passing[word] & (1 << UInt64(id & 63)) != 0
    }

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
