/// The result of a query: named columns and rows of values.
///
/// Rows come in a stable order: reductions sort by their group keys (absent last), funnels by group then
/// step, `top` by count descending then key, listed events by `(time, seq)` and sessions by
/// `(started, session)`, unless the query sorts them itself.
public struct ResultTable: Hashable, Sendable {
    public var columns: [String]
    public var rows: [[Value]]

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

    /// The values of one column.
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
    public init() {}
}
