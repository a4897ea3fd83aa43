import Boardwalk

/// A result as rows of lines, one `column = value` each, with the names right-aligned and a blank line after each row:
/// the REPL's `.mode line` and a query ended with `\G`, for results too wide for a terminal. Values are shown as in
/// a table (``Value/displayText``).
enum VerticalRows {
    /// Rows written at a time (Ctrl-C is looked at between them).
    static let rowsPerChunk = 256

    /// Writes `table` to `sink`, a chunk of rows at a time, stopping early once `cancelled` returns `true`.
    /// - Returns: `false` when it stopped early: what was written ends after a whole row.
    /// - Complexity: O(cells).
    static func print(_ table: ResultTable, to sink: any OutputSink, cancelled: () -> Bool) -> Bool {
        let names = table.columns.map(escapingTerminalControls)
        let width = names.map(displayWidth).max() ?? 0
        let labels = names.map { String(repeating: " ", count: width - displayWidth($0)) + $0 + " = " }
        var start = 0
        while start < table.rows.count {
            guard !cancelled() else { return false }
            var out = ""
            for r in start..<min(table.rows.count, start + rowsPerChunk) {
                for (label, value) in zip(labels, table.rows[r]) { out += label + value.displayText + "\n" }
                out += "\n"
            }
            sink.write(out)
            start += rowsPerChunk
        }
        return true
    }
}
