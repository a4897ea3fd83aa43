import BoardwalkJSON

extension ResultTable {
    /// Renders the table; the output is exact and stable, for scripts as much as for people.
    /// - Complexity: O(cells).
    public func render(_ format: Format) -> String {
        var out = ""
        _ = render(format, rowsPerChunk: Swift.max(rows.count, 1), continuing: { true }) { out += $0 }
        return out
    }

    /// Renders the table a chunk of rows at a time, the same text as ``render(_:)`` cut after whole rows, so that a
    /// long result never sits whole in one string and its printing can stop between two chunks.
    ///
    /// `continuing` is asked before each chunk (the table format reads the rows twice: once for the columns'
    /// widths, once for the lines, each a chunk at a time); once it returns `false`, rendering stops.
    /// - Returns: `false` when it stopped early; what `write` received ends after a whole row.
    /// - Complexity: O(cells), with memory for one chunk's text.
    package func render(_ format: Format, rowsPerChunk: Int, continuing: () -> Bool, write: (String) -> Void) -> Bool {
        let size = Swift.max(1, rowsPerChunk)
        let chunks = stride(from: 0, to: rows.count, by: size).map { $0..<Swift.min(rows.count, $0 + size) }
        switch format {
        case .table: return renderTable(chunks, continuing, write)
        case .json: return renderJSON(chunks, continuing, write)
        case .csv: return renderCSV(chunks, continuing, write)
        }
    }

    private func renderTable(_ chunks: [Range<Int>], _ continuing: () -> Bool, _ write: (String) -> Void) -> Bool {
        // Widths first, a chunk at a time (the cells' text is made again for the lines: holding every cell's text
        // would take memory with the table's size).
        // Column names hold query text (`count by name == "…"`): escaped like the cells.
        let headers = columns.map(escapingTerminalControls)
        var widths = headers.map(displayWidth)
        var numeric = [Bool](repeating: !rows.isEmpty, count: columns.count)
        for chunk in chunks {
            guard continuing() else { return false }
            for row in rows[chunk] {
                for (i, value) in row.enumerated() {
                    widths[i] = Swift.max(widths[i], displayWidth(Value.tableText(value)))
                    if value.numeric == nil && !value.isNull { numeric[i] = false }
                }
            }
        }
        func line(_ items: [String], into out: inout String) {
            var text = ""
            for (i, item) in items.enumerated() {
                if i > 0 { text += "  " }
                let pad = String(repeating: " ", count: widths[i] - displayWidth(item))
                text += numeric[i] ? pad + item : item + pad
            }
            while text.hasSuffix(" ") { text.removeLast() }
            out += text + "\n"
        }
        var head = ""
        line(headers, into: &head)
        line(widths.map { String(repeating: "-", count: $0) }, into: &head)
        write(head)
        for chunk in chunks {
            guard continuing() else { return false }
            var out = ""
            for row in rows[chunk] { line(row.map { Value.tableText($0) }, into: &out) }
            write(out)
        }
        return true
    }

    private func renderJSON(_ chunks: [Range<Int>], _ continuing: () -> Bool, _ write: (String) -> Void) -> Bool {
        if rows.isEmpty {
            write("[]\n")
            return true
        }
        write("[\n")
        for chunk in chunks {
            guard continuing() else { return false }
            var out = ""
            for r in chunk {
                out += "  {"
                for (i, value) in rows[r].enumerated() {
                    if i > 0 { out += ", " }
                    out += JSONString.quoted(columns[i]) + ": " + value.jsonText
                }
                out += r == rows.count - 1 ? "}\n" : "},\n"
            }
            write(out)
        }
        write("]\n")
        return true
    }

    private func renderCSV(_ chunks: [Range<Int>], _ continuing: () -> Bool, _ write: (String) -> Void) -> Bool {
        write(columns.map(Value.csvField).joined(separator: ",") + "\n")
        for chunk in chunks {
            guard continuing() else { return false }
            var out = ""
            for row in rows[chunk] { out += row.map { Value.csvField($0.exactText) }.joined(separator: ",") + "\n" }
            write(out)
        }
        return true
    }
}

extension Value {
    /// Exact text of a number: integral values without a fraction, others in the shortest form that reads back
    /// the same double.
    static func exactNumber(_ d: Double) -> String {
        if d.isNaN || d.isInfinite { return d.isNaN ? "nan" : (d > 0 ? "inf" : "-inf") }
        if d == d.rounded(), d.magnitude < 9.007_199_254_740_992e15 { return String(Int64(d)) }
        return "\(d)"
    }

    /// A number rounded to 4 decimals for people.
    static func roundedNumber(_ d: Double) -> String {
        if d.isNaN || d.isInfinite || d.magnitude >= 1e14 { return exactNumber(d) }
        let scaled = (d * 10_000).rounded()
        var negative = scaled < 0
        let units = Int64(scaled.magnitude)
        if units == 0 { negative = false }
        var text = String(units / 10_000)
        var fraction = String(units % 10_000)
        fraction = String(repeating: "0", count: 4 - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        if !fraction.isEmpty { text += "." + fraction }
        return negative ? "-" + text : text
    }

    /// Text in a table cell: absent is `-`; control characters and bidirectional overrides are escaped
    /// (``escapingTerminalControls(_:)``) so every row stays on one line and reads as written.
    static func tableText(_ v: Value) -> String {
        switch v {
        case .null: return "-"
        case .number(let d): return roundedNumber(d)
        case .duration(let d): return roundedNumber(d / 1_000_000) + "s"
        case .string(let s): return escapingTerminalControls(s)
        case .set(let items): return "[" + items.map(escapingTerminalControls).joined(separator: ", ") + "]"
        default: return v.exactText
        }
    }

    /// Exact text (CSV cells): absent is empty, durations are seconds, sets are JSON arrays.
    var exactText: String {
        switch self {
        case .null: ""
        case .bool(let b): b ? "true" : "false"
        case .integer(let i): String(i)
        case .number(let d): Value.exactNumber(d)
        case .string(let s): s
        case .duration(let d): Value.exactNumber(d / 1_000_000)
        case .time(let t): t.iso8601
        case .bucket(let b): b.description
        case .set(let items): "[" + items.map(JSONString.quoted).joined(separator: ",") + "]"
        }
    }

    /// JSON text of a cell: absent and non-finite numbers are `null`, durations are seconds.
    var jsonText: String {
        switch self {
        case .null: return "null"
        case .number(let d), .duration(let d):
            guard d.isFinite else { return "null" }
            if case .duration = self { return Value.exactNumber(d / 1_000_000) }
            return Value.exactNumber(d)
        case .string(let s): return JSONString.quoted(s)
        case .time(let t): return JSONString.quoted(t.iso8601)
        case .bucket(let b): return JSONString.quoted(b.description)
        default: return exactText
        }
    }

    /// `s` as a CSV field (RFC 4180): quoted when it holds a comma, a quote, CR or LF, with its quotes doubled.
    ///
    /// Decided on UTF-8 bytes, not `Character`s: a quote or comma followed by a combining mark (U+0301) is one
    /// `Character` that equals neither, yet a CSV reader sees the quote or comma byte. Those four bytes never occur
    /// inside a multi-byte UTF-8 sequence, so looking at bytes finds exactly the ones a reader splits on.
    /// - Complexity: O(n) in the field's UTF-8 length.
    static func csvField(_ s: String) -> String {
        let quote = UInt8(ascii: "\"")
        guard s.utf8.contains(where: { $0 == UInt8(ascii: ",") || $0 == quote || $0 == 0x0A || $0 == 0x0D }) else {
            return s
        }
        var out: [UInt8] = [quote]
        out.reserveCapacity(s.utf8.count + 8)
        for byte in s.utf8 {
            if byte == quote { out.append(quote) }
            out.append(byte)
        }
        out.append(quote)
        return String(decoding: out, as: UTF8.self)
    }
}
