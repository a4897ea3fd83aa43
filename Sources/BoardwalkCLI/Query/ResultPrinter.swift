import Boardwalk

/// Prints a query's result table in chunks of rows, so that a long result never sits whole in one string and
/// Ctrl-C stops it between two chunks.
///
/// JSON and CSV chunks are the query layer's own rendering (``ResultTable/render(_:)``) of a few rows at a
/// time, stitched together; the output is byte for byte that of rendering the whole table. The table format
/// aligns every row to the widest cell of its column, so it is laid out here, in two passes over the rows
/// (widths, then lines), with the query layer's cell text (``cellText(_:)`` mirrors it; a test holds the two
/// equal).
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
        let chunks = stride(from: 0, to: table.rows.count, by: max(1, rowsPerChunk)).map {
            $0..<min(table.rows.count, $0 + max(1, rowsPerChunk))
        }
        switch format {
        case .table: return printTable(table, chunks: chunks, to: sink, cancelled: cancelled)
        case .csv:
            let header = ResultTable(columns: table.columns, rows: []).render(.csv)
            sink.write(header)
            for chunk in chunks {
                if cancelled() { return false }
                let text = ResultTable(columns: table.columns, rows: Array(table.rows[chunk])).render(.csv)
                sink.write(String(text.utf8.dropFirst(header.utf8.count))!)
            }
            return true
        case .json:
            guard !table.rows.isEmpty else {
                sink.write(table.render(.json))
                return true
            }
            sink.write("[\n")
            for (k, chunk) in chunks.enumerated() {
                if cancelled() { return false }
                // `[\n`, then `  {…},\n` per row and `  {…}\n` for the last, then `]\n`.
                let text = ResultTable(columns: table.columns, rows: Array(table.rows[chunk])).render(.json)
                var rows = String(text.utf8.dropFirst(2).dropLast(2))!
                if k < chunks.count - 1 {
                    rows = String(rows.utf8.dropLast(2))! + "},\n"
                }
                sink.write(rows)
            }
            sink.write("]\n")
            return true
        }
    }

    private static func printTable(
        _ table: ResultTable, chunks: [Range<Int>], to sink: any OutputSink, cancelled: () -> Bool
    ) -> Bool {
        let columns = table.columns.count
        var widths = table.columns.map(displayWidth)
        // A column of numbers (nulls allowed) is aligned to the right.
        var numeric = [Bool](repeating: !table.rows.isEmpty, count: columns)
        for chunk in chunks {
            if cancelled() { return false }
            for row in table.rows[chunk] {
                for i in 0..<columns {
                    widths[i] = max(widths[i], displayWidth(cellText(row[i])))
                    switch row[i] {
                    case .integer, .number, .duration, .null: break
                    default: numeric[i] = false
                    }
                }
            }
        }
        var out = ""
        func line(_ cells: [String]) {
            for (i, cell) in cells.enumerated() {
                if i > 0 { out += "  " }
                let pad = String(repeating: " ", count: widths[i] - displayWidth(cell))
                if numeric[i] {
                    out += pad
                    out += cell
                } else {
                    out += cell
                    out += pad
                }
            }
            while out.hasSuffix(" ") { out.removeLast() }
            out += "\n"
        }
        line(table.columns)
        line(widths.map { String(repeating: "-", count: $0) })
        sink.write(out)
        for chunk in chunks {
            if cancelled() { return false }
            out = ""
            for row in table.rows[chunk] { line(row.map(cellText)) }
            sink.write(out)
        }
        return true
    }

    // MARK: Cell text (as the query layer's table rendering writes it)

    /// A cell of the table format: absent is `-`, numbers rounded to 4 decimals, durations in seconds with an
    /// `s`, control characters escaped so that every row stays on one line.
    static func cellText(_ value: Value) -> String {
        switch value {
        case .null: "-"
        case .bool(let b): b ? "true" : "false"
        case .integer(let i): String(i)
        case .number(let d): rounded(d)
        case .duration(let d): rounded(d / 1_000_000) + "s"
        case .string(let s): escapingControls(s)
        case .time(let t): t.iso8601
        case .set(let items): "[" + items.map(escapingControls).joined(separator: ", ") + "]"
        }
    }

    /// Integral values without a fraction, others in the shortest form that reads back the same double.
    static func exact(_ d: Double) -> String {
        if d.isNaN || d.isInfinite { return d.isNaN ? "nan" : (d > 0 ? "inf" : "-inf") }
        if d == d.rounded(), d.magnitude < 9.007_199_254_740_992e15 { return String(Int64(d)) }
        return "\(d)"
    }

    /// Rounded to 4 decimals, trailing zeros dropped.
    static func rounded(_ d: Double) -> String {
        if d.isNaN || d.isInfinite || d.magnitude >= 1e14 { return exact(d) }
        let scaled = (d * 10_000).rounded()
        let units = Int64(scaled.magnitude)
        var text = String(units / 10_000)
        var fraction = String(units % 10_000)
        fraction = String(repeating: "0", count: 4 - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        if !fraction.isEmpty { text += "." + fraction }
        return scaled < 0 && units != 0 ? "-" + text : text
    }

    static func escapingControls(_ s: String) -> String {
        guard s.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return s }
        var out = ""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F: out += "\\u{" + String(scalar.value, radix: 16) + "}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
