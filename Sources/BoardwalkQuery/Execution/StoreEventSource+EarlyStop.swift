import BoardwalkCodec
import BoardwalkModel
import BoardwalkStore

// A listing's `limit N` (with no `sort` before it) keeps the first N rows in order: events by (time, seq), sessions
// by (started, id). Rather than scan the whole store for them, these reads take the store's time in windows from
// its earliest event on, each twice as wide as the one before, and stop after the window in which N rows passed:
// every event of a later window is later than every event of an earlier one, so no later row can be among the
// first N. The windows never overlap, so a filter that passes fewer than N rows costs one pass over the store (plus
// a seek per group and window), as a scan would.

/// Consecutive windows of time from `low` to `high`, the first sized to hold about `wanted` of `items` spread evenly
/// over the span, each later one twice as wide as the one before.
struct TimeWindows {
    private var low: Int64
    private let high: Int64
    private var width: Int64
    private var done = false

    init(low: Int64, high: Int64, items: Int, wanted: Int) {
        self.low = low
        self.high = high
        let span = Double(high) - Double(low) + 1
        let share = min(1, Double(max(wanted, 1)) / Double(max(items, 1)))
        width = Int64(max(1, min(span * share, 9e18)).rounded(.up))
    }

    /// The next window, inclusive; `nil` past `high`.
    mutating func next() -> ClosedRange<Int64>? {
        guard !done, low <= high else { return nil }
        let (end, overflow) = low.addingReportingOverflow(width - 1)
        let upper = overflow ? high : min(end, high)
        defer {
            if upper == high { done = true } else { low = upper + 1 }
            width = width > Int64.max / 2 ? Int64.max : width * 2
        }
        return low...upper
    }
}

extension StoreEventSource {
    /// How many rows the first window aims at for a `limit N`: some to spare, since filters drop rows.
    static func windowTarget(_ limit: Int) -> Int {
        limit > Int.max / 8 ? Int.max / 2 : 4 * limit + 64
    }

    /// The earliest and latest event time in `ranges` and how many events the onboardings they name hold, from the
    /// counters the store keeps (`meta` for the whole store, `onboardings` for one): `nil` when none can hold one.
    static func timeExtent(_ snapshot: Snapshot, _ ranges: [ScanRange]) throws -> (
        low: Int64, high: Int64, events: Int
    )? {
        var extent: (low: Int64, high: Int64, events: Int)? = nil
        let stats = try snapshot.stats()
        let onboardings = ranges.contains { $0.onboarding != nil } ? try snapshot.onboardings() : []
        for range in ranges {
            let counted: (ClosedRange<Timestamp>, Int)?
            if let name = range.onboarding {
                counted = onboardings.first { $0.onboardingID == name }.map { ($0.timeRange, $0.events) }
            } else {
                counted = stats.timeRange.map { ($0, stats.events) }
            }
            guard let (times, events) = counted else { continue }
            let low = max(times.lowerBound.microseconds, range.time.lowerBound)
            let high = min(times.upperBound.microseconds, range.time.upperBound)
            guard low <= high else { continue }
            // Events per microsecond over the onboarding's whole span: a time range does not make them denser.
            let share =
                Double(events) * (Double(high) - Double(low) + 1)
                / (Double(times.upperBound.microseconds) - Double(times.lowerBound.microseconds) + 1)
            let n = Int(min(share.rounded(.up), 9e18))
            extent = extent.map { (min($0.low, low), max($0.high, high), $0.events + n) } ?? (low, high, n)
        }
        return extent
    }

    /// For a listing that keeps its first `limit` rows (no `sort` before the `limit`): calls `body` with every event
    /// in `ranges` from the earliest on, window by window (``TimeWindows``), in key order within a window, until
    /// `enough()` says after a window that `limit` rows passed. One read transaction. With the cheaper paths on
    /// (``readsOnlyWhatEventQueriesNeed``), the blocks whose headers count no event that can pass `filters` (checked by
    /// the caller on each row) are stepped over (``KindCodeFilters/selection(_:now:strings:)``).
    /// - Complexity: O(events up to the end of the window where `limit` rows passed), plus O(log N) per
    ///   (onboarding, screen) group and window; O(log(span / first window)) windows.
    func scanEventsEarliestFirst<Row>(
        _ ranges: [ScanRange], limit: Int, filters: [Bound], now: Timestamp,
        row: (EventRecord, SnapshotStrings) throws -> Row, enough: () -> Bool,
        _ body: (Row) throws(QueryError) -> Void
    ) throws(QueryError) {
        try reading { snapshot in
            guard let extent = try StoreEventSource.timeExtent(snapshot, ranges) else { return }
            let strings = SnapshotStrings(snapshot)
            let kinds =
                StoreEventSource.readsOnlyWhatEventQueriesNeed
                ? KindCodeFilters.selection(filters, now: now, strings: strings) : nil
            var windows = TimeWindows(
                low: extent.low, high: extent.high, items: extent.events,
                wanted: StoreEventSource.windowTarget(limit))
            while let window = windows.next() {
                for range in ranges {
                    let low = max(range.time.lowerBound, window.lowerBound)
                    let high = min(range.time.upperBound, window.upperBound)
                    guard low <= high else { continue }
                    var clipped = range
                    clipped.time = low...high
                    try StoreEventSource.forEachRun(snapshot, clipped, wanting: kinds) { run in
                        while let record = try run.next() { try body(try row(record, strings)) }
                        return true
                    }
                }
                if enough() { return }
            }
        }
    }

    /// For `sessions | … | limit N` over the whole store: calls `body` with sessions in the order of their first
    /// event (`started`, then id), each with all of its events as rows in `(time, seq)` order, until it returns
    /// false. One read transaction.
    ///
    /// The sessions that start in a window (``TimeWindows``, sized by the store's count of sessions) are those met
    /// there that no earlier window met: every event before the window was read already. Each window's events are
    /// read up to their session references only; its new sessions are then read whole through the session index,
    /// in order.
    /// - Complexity: O(events up to the end of the last window read) for the references, plus the events of the
    ///   sessions delivered and of the last window's other new sessions; memory a bit per string id.
    func forEachSessionEarliestFirst(
        limit: Int, cancellation: CancellationFlag?, text: String,
        _ body: (String, [StoreEventRow]) throws(QueryError) -> Bool
    ) throws(QueryError) {
        try reading { snapshot in
            let stats = try snapshot.stats()
            guard let times = stats.timeRange else { return }
            let strings = SnapshotStrings(snapshot)
            var windows = TimeWindows(
                low: times.lowerBound.microseconds, high: times.upperBound.microseconds, items: stats.sessions,
                wanted: StoreEventSource.windowTarget(limit))
            var met = SessionBitmap()
            var rows: [StoreEventRow] = []
            while let window = windows.next() {
                var started: [StringID: Int64] = [:]
                try StoreEventSource.forEachRun(snapshot, ScanRange(time: window)) { run in
                    while let record = try run.next() {
                        guard let session = try record.fields(.session).session, !met.contains(session) else {
                            continue
                        }
                        let time = record.timeMicroseconds
                        if let known = started[session], known <= time { continue }
                        started[session] = time
                    }
                    try cancellation?.throwIfCancelled(query: text)
                    return true
                }
                var names: [StringID: String] = [:]
                var order: [(started: Int64, name: String, id: StringID)] = []
                for (session, time) in started {
                    _ = met.insert(session)
                    let name = try StoreEventSource.sessionName(snapshot, session)
                    names[session] = name
                    order.append((time, name, session))
                }
                order.sort { ($0.started, $0.name) < ($1.started, $1.name) }
                var going = true
                try snapshot.forEachSession(order.map(\.id)) { id, records in
                    rows.removeAll(keepingCapacity: true)
                    for record in records { rows.append(StoreEventRow(view: try record.view(), strings: strings)) }
                    going = try body(names[id]!, rows)
                    return going
                }
                if !going { return }
            }
        }
    }
}
