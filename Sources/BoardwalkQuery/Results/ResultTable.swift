/// The result of a query: named columns and rows of values.
///
/// Rows come in a stable order: reductions sort by their group keys (absent last), funnels by group then
/// step, `top` by count descending then key, listed events by `(time, seq)` and sessions by
/// `(started, session)`, unless the query sorts them itself.
///
/// Read a cell by row and column name with ``subscript(_:_:)`` and a typed accessor of ``Value``
/// (``Value/intValue``, ``Value/doubleValue``, ``Value/durationSeconds``, ``Value/stringValue``, …), or print the
/// whole table with ``render(_:)``.
public struct ResultTable: Hashable, Sendable {
    /// The column names, in order: group keys first (as written in the query, or their `as` alias), then the
    /// aggregates (`count`, `count()`, `p50(dwell)`, … or their aliases); a funnel's `step`, `sessions`, ….
    public var columns: [String]
    /// The rows, each with one value per column, in the order of ``columns``.
    public var rows: [[Value]]

    /// A table of `rows`, each with as many values as `columns` has names.
    public init(columns: [String], rows: [[Value]]) {
        self.columns = columns
        self.rows = rows
    }

    /// Output formats.
    public enum Format: String, Hashable, Sendable, CaseIterable {
        /// Aligned columns for people; numbers to 4 decimals, durations in seconds with `s`.
        case table
        /// An array of objects keyed by column name; exact numbers, durations in seconds.
        case json
        /// A header line, then one line per row (RFC 4180 quoting); exact numbers, durations in seconds.
        case csv
    }

    /// The values of the column named `name`, one per row; `nil` when the table has no such column.
    public func column(_ name: String) -> [Value]? {
        columns.firstIndex(of: name).map { i in rows.map { $0[i] } }
    }
}

/// Counters of what a run read, for tests and `explain`.
public struct RunStatistics: Hashable, Sendable {
    /// Events delivered by the source (through event scans and session reads).
    public var eventsRead = 0
    /// Sessions delivered by session reads.
    public var sessionsRead = 0
    /// Events counted from the store's block headers and keys without being read as rows (`events` counts).
    public var eventsCounted = 0
    /// Blocks whose events were counted from their header alone.
    public var blocksCounted = 0
    /// Blocks read for their events' times and seqs only (cut by the time range, or needed by a condition on
    /// each event's time or seq).
    public var blocksRead = 0
    /// What the run found worth saying beside its result, each a ``QueryError`` of kind ``QueryError/Kind/note``
    /// without a place: a screen funnel over sessions of onboardings of different lengths (rule 3 then counts a
    /// session that completed a shorter one as not reaching the later steps).
    public var notes: [QueryError] = []
    /// Nothing read yet.
    public init() {}
}
