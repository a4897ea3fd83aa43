import BoardwalkJSON
extension ResultTable {
    /// Renders the table; the output is exact and stable, for scripts as much as for people.
    /// - Complexity: O(cells).
    public func render(_ format: Format) -> String {
        switch format {
        case .table: renderTable()
        case .json: renderJSON()
        case .csv: renderCSV()
        }
    }

    private func renderTable() -> String {
        let cells = rows.map { $0.map { Value.tableText($0) } }
        var widths = columns.map(displayWidth)
        for row in cells {
            for (i, cell) in row.enumerated() { widths[i] = max(widths[i], displayWidth(cell)) }
        }
        let numeric = columns.indices.map { i in
            !rows.isEmpty && rows.allSatisfy { $0[i].numeric != nil || $0[i].isNull }
        }
        func line(_ items: [String]) -> String {
            var parts: [String] = []
            for (i, item) in items.enumerated() {
                let pad = String(repeating: " ", count: widths[i] - displayWidth(item))
                parts.append(numeric[i] ? pad + item : item + pad)
            }
            var text = parts.joined(separator: "  ")
            while text.hasSuffix(" ") { text.removeLast() }
            return text
        }
        var out = line(columns) + "\n"
        out += line(widths.map { String(repeating: "-", count: $0) }) + "\n"
        for row in cells { out += line(row) + "\n" }
        return out
    }

    private func renderJSON() -> String {
        if rows.isEmpty { return "[]\n" }
        var out = "[\n"
        for (r, row) in rows.enumerated() {
            out += "  {"
            for (i, value) in row.enumerated() {
                if i > 0 { out += ", " }
                out += JSONString.quoted(columns[i]) + ": " + value.jsonText
            }
            out += r == rows.count - 1 ? "}\n" : "},\n"
        }
        return out + "]\n"
    }

    private func renderCSV() -> String {
        var out = columns.map(Value.csvField).joined(separator: ",") + "\n"
        for row in rows {
            out += row.map { Value.csvField($0.exactText) }.joined(separator: ",") + "\n"
        }
        return out
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

    /// Text in a table cell: absent is `-`, control characters are escaped so every row stays on one line.
    static func tableText(_ v: Value) -> String {
        switch v {
        case .null: return "-"
        case .number(let d): return roundedNumber(d)
        case .duration(let d): return roundedNumber(d / 1_000_000) + "s"
        case .string(let s): return escapedControls(s)
        case .set(let items): return "[" + items.map(escapedControls).joined(separator: ", ") + "]"
        default: return v.exactText
        }
    }

    private static func escapedControls(_ s: String) -> String {
        guard s.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return s }
        var out = ""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u{" + hex + "}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
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
        default: return exactText
        }
    }

    static func csvField(_ s: String) -> String {
        guard s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" }) else { return s }
        return "\"" + s.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\""
    }
}
