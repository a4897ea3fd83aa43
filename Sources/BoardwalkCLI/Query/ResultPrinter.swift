import Boardwalk

/// Prints a query's result table in chunks of rows (``ResultTable/render(_:rowsPerChunk:continuing:write:)``), so
/// that a long result never sits whole in one string and Ctrl-C stops it between two chunks.
enum ResultPrinter {
    /// Rows rendered at a time: about 10-20 ms of work, so Ctrl-C is seen promptly and a chunk of a wide
    /// listing stays well under a megabyte.
    static let rowsPerChunk = 1024

    /// Writes `table` in `format` to `sink`, a chunk of rows at a time, and stops early once `cancelled`
    /// returns `true` (it is asked before every chunk).
    /// - Returns: `false` when it stopped early: what was written ends after a whole row.
    /// - Complexity: O(cells), with memory for one chunk's text.
    static func print(
        _ table: ResultTable, _ format: ResultTable.Format, to sink: any OutputSink, rowsPerChunk: Int = rowsPerChunk,
        cancelled: () -> Bool
    ) -> Bool {
        table.render(format, rowsPerChunk: rowsPerChunk, continuing: { !cancelled() }, write: { sink.write($0) })
    }
}
