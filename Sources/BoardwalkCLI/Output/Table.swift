import BoardwalkQuery

/// ANSI styling that is a no-op when colour is off.
package struct Paint: Sendable {
    /// Whether escapes are written at all (see ``Invocation/colour(for:)``).
    package var enabled: Bool
    package init(enabled: Bool) { self.enabled = enabled }

    package func bold(_ s: String) -> String { wrap(s, "1") }
    package func dim(_ s: String) -> String { wrap(s, "2") }
    package func red(_ s: String) -> String { wrap(s, "31") }
    package func green(_ s: String) -> String { wrap(s, "32") }
    package func yellow(_ s: String) -> String { wrap(s, "33") }
    package func cyan(_ s: String) -> String { wrap(s, "36") }

    private func wrap(_ s: String, _ code: String) -> String { enabled ? "\u{1B}[\(code)m\(s)\u{1B}[0m" : s }
}

/// A table for a terminal: a header, rows, columns aligned (numbers to the right).
package struct TextTable: Sendable {
    /// Where a column's cells sit: text to the left, numbers to the right.
    package enum Alignment: Sendable { case left, right }

    /// Column titles (their count is the column count).
    package var headers: [String]
    /// One alignment per column.
    package var alignments: [Alignment]
    /// Rows of cells; missing cells are blank, extra cells are ignored.
    package var rows: [[String]] = []

    /// - Parameter alignments: one per column; defaults to left for all.
    package init(headers: [String], alignments: [Alignment]? = nil) {
        self.headers = headers
        self.alignments = alignments ?? Array(repeating: .left, count: headers.count)
    }

    /// Adds a row. Cells are shown as written: what a terminal would act on (control and bidirectional
    /// characters, from stored data) is escaped.
    package mutating func append(_ row: [String]) { rows.append(row.map(escapingTerminalControls)) }

    /// The table as lines: header, a rule of `-` (as the query language's tables draw it), rows; two spaces between
    /// columns; no trailing spaces.
    package func render(paint: Paint = Paint(enabled: false)) -> String {
        let columns = headers.count
        var widths = headers.map(displayWidth)
        for row in rows {
            for (i, cell) in row.prefix(columns).enumerated() { widths[i] = max(widths[i], displayWidth(cell)) }
        }
        func line(_ cells: [String]) -> String {
            var parts: [String] = []
            for i in 0..<columns {
                let cell = i < cells.count ? cells[i] : ""
                let pad = String(repeating: " ", count: widths[i] - displayWidth(cell))
                parts.append(alignments[i] == .right ? pad + cell : (i == columns - 1 ? cell : cell + pad))
            }
            var s = parts.joined(separator: "  ")
            while s.hasSuffix(" ") { s.removeLast() }
            return s
        }
        var out = paint.bold(line(headers)) + "\n"
        out += paint.dim(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")) + "\n"
        for row in rows { out += line(row) + "\n" }
        return out
    }
}

/// Horizontal bars for funnels and histograms.
package enum Bars {
    private static let eighths = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"]

    /// A bar `fraction` (clamped to 0…1) of `width` columns long, in eighths of a column.
    package static func bar(_ fraction: Double, width: Int) -> String {
        let f = fraction.isFinite ? min(1, max(0, fraction)) : 0
        let total = Int((f * Double(width * 8)).rounded())
        return String(repeating: "█", count: total / 8) + eighths[total % 8]
    }

    /// One labelled bar per item, scaled to the largest value: `label  ████▍  1.2 k  (34.0 %)`.
    /// - Parameters:
    ///   - items: labels and values.
    ///   - share: the denominator for the percentage column (`nil`: no percentage).
    ///   - columns: the terminal width the chart should fit.
    package static func chart(
        _ items: [(label: String, value: Double, text: String)], share: Double?, columns: Int,
        paint: Paint
    ) -> String {
        guard let maxValue = items.map(\.value).max(), maxValue > 0 else { return "" }
        // 36 columns fit a UUID (onboarding ids are UUIDs in practice); longer labels end in an ellipsis.
        let labelWidth = min(36, items.map { displayWidth(escapingTerminalControls($0.label)) }.max() ?? 0)
        let textWidth = items.map { displayWidth($0.text) }.max() ?? 0
        let percentWidth = share == nil ? 0 : 10
        let barWidth = max(10, min(50, columns - labelWidth - textWidth - percentWidth - 6))
        var out = ""
        for item in items {
            var label = escapingTerminalControls(item.label)
            if displayWidth(label) > labelWidth {
                while displayWidth(label) > labelWidth - 1 { label.removeLast() }
                label += "…"
            }
            let pad = String(repeating: " ", count: labelWidth - displayWidth(label))
            let b = bar(item.value / maxValue, width: barWidth)
            let barPad = String(repeating: " ", count: barWidth - b.count)
            var line = "  " + label + pad + "  " + paint.cyan(b) + barPad + "  " + item.text.leftPadding(to: textWidth)
            if let share, share > 0 {
                line += "  " + ("(" + Units.percent(item.value / share) + ")").leftPadding(to: 9)
            }
            while line.hasSuffix(" ") { line.removeLast() }
            out += line + "\n"
        }
        return out
    }
}
