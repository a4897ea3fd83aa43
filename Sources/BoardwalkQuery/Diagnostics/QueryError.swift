/// An error in a query or in its execution, pointing into the query text where it can.
///
/// Its ``description`` renders like a compiler diagnostic:
///
/// ```
/// error: unknown field `screen_idx`; did you mean `screen`?
///  --> query:1:16
/// 1 | events | where screen_idx == 2
///   |                ^^^^^^^^^^
/// ```
public struct QueryError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, broadly.
    public enum Kind: String, Hashable, Sendable {
        /// The text is not a query (lexing and parsing).
        case syntax
        /// The query is well-formed but meaningless: unknown names, wrong types, a stage in the wrong place.
        case type
        /// Execution was cancelled through its ``CancellationFlag``.
        case cancelled
        /// The event source failed while the query ran.
        case source
        /// Not an error: a part of a query that checks but probably does not say what was meant (a name close to a
        /// known one). ``Query/notes`` holds these; the query runs.
        case note
    }

    /// What went wrong, by phase: syntax, type, source, cancelled, or a note.
    public var kind: Kind
    /// One line saying what is wrong, including any suggestion.
    public var message: String
    /// The bytes of the query the error is about (UTF-8 offsets), when there are any.
    public var range: Range<Int>?
    /// A short note printed after the caret.
    public var label: String?
    /// The query text, kept to render the source line.
    public var query: String
    /// Where the query text came from, for the `-->` line: `query` for a query given as such, `stdin` or a
    /// file name for queries read from input.
    public var sourceName = "query"
    /// The line of that input on which the query text starts (1 for a query given as such).
    public var firstLine = 1

    /// An error of `kind` about `range` of `query`; an ``EventSource`` of an embedding app throws these with kind
    /// `.source` when its storage fails.
    /// - Parameters:
    ///   - kind: what went wrong.
    ///   - message: one line saying what is wrong.
    ///   - range: the UTF-8 byte offsets of the query the error is about, if any.
    ///   - query: the query text, to render the source line.
    ///   - label: a short note printed after the caret.
    public init(
        _ kind: Kind, _ message: String, at range: Range<Int>? = nil, in query: String = "", label: String? = nil
    ) {
        self.kind = kind
        self.message = message
        self.range = range
        self.query = query
        self.label = label
    }

    /// 1-based line and column (in characters) of the start of ``range``.
    public var location: (line: Int, column: Int)? {
        guard let range else { return nil }
        let (line, lineStart, _) = lineContaining(range.lowerBound)
        let utf8 = Array(query.utf8)
        let prefix = String(decoding: utf8[lineStart..<min(range.lowerBound, utf8.count)], as: UTF8.self)
        return (line, prefix.count + 1)
    }

    private func lineContaining(_ offset: Int) -> (line: Int, start: Int, end: Int) {
        let utf8 = Array(query.utf8)
        var line = 1
        var start = 0
        var i = 0
        let target = min(offset, utf8.count)
        while i < target {
            if utf8[i] == 0x0A { line += 1; start = i + 1 }
            i += 1
        }
        var end = start
        while end < utf8.count, utf8[end] != 0x0A { end += 1 }
        return (line, start, end)
    }

    /// The widest source line a diagnostic shows whole, in terminal columns (the longest hand-written queries of the
    /// tests and docs are about 120); a longer one is cut around the caret.
    static let sourceColumns = 160
    /// How far from the left edge of a cut source line the caret starts, at most.
    static let caretLead = 60

    /// The part of a source line shown under the `-->` line, and where its caret starts and how wide it is, in
    /// terminal columns. A line of at most ``sourceColumns`` is shown whole; a longer one (a generated query of
    /// thousands of characters) is cut at whole grapheme clusters to ``sourceColumns``, with `…` where text was
    /// left out and the caret at most ``caretLead`` columns in, so the caret line stays as short.
    /// - Complexity: O(n) in the line's length.
    static func window(_ line: String, caret: Int, width: Int) -> (line: String, caret: Int, width: Int) {
        let clusters = Array(line)
        let widths = clusters.map { displayWidth(of: $0) }
        guard widths.reduce(0, +) > sourceColumns else { return (line, caret, width) }
        var start = 0, dropped = 0
        while caret - dropped > caretLead, start < clusters.count {
            dropped += widths[start]
            start += 1
        }
        var shown = start > 0 ? "…" : ""
        var used = start > 0 ? 1 : 0
        let caretShown = caret - dropped + used
        var end = start
        // One column is kept for the `…` of a line cut on the right.
        while end < clusters.count, used + widths[end] <= sourceColumns - 1 {
            used += widths[end]
            end += 1
        }
        shown += String(clusters[start..<end])
        let cutRight = end < clusters.count
        if cutRight { shown += "…" }
        // The caret covers what of its range is shown (one column past the text when it points at the line's end).
        let room = used - caretShown + (cutRight ? 0 : 1)
        return (shown, caretShown, max(1, min(width, room)))
    }

    /// The rendered diagnostic: message, location, source line and caret.
    ///
    /// What a terminal would act on rather than show (control characters, bidirectional overrides) is never
    /// printed raw: escaped in the message and label (`\u{1b}`), and drawn as a one-column picture in the source
    /// line (U+0000 as `␀`, others as `�`) so that the caret stays under its text.
    public var description: String {
        var out = (kind == .note ? "note: " : "error: ") + escapingTerminalControls(message)
        guard let range, let (lineInQuery, column) = location else { return out }
        let utf8 = Array(query.utf8)
        let (_, lineStart, lineEnd) = lineContaining(range.lowerBound)
        // A tab is shown as four spaces, in the source line and when counting the caret's columns, so the caret
        // stays under its text whatever the terminal's tab stops (the gutter shifts them anyway).
        func expandingTabs(_ bytes: ArraySlice<UInt8>) -> String {
            var shown = String.UnicodeScalarView()
            for scalar in String(decoding: bytes, as: UTF8.self).unicodeScalars {
                if scalar == "\t" {
                    shown.append(contentsOf: "    ".unicodeScalars)
                } else if actsOnTerminal(scalar) {
                    // C0 controls and DEL have pictures (U+2400–U+2421); the rest are shown as U+FFFD.
                    let picture: UInt32 =
                        scalar.value < 0x20 ? 0x2400 + scalar.value : scalar.value == 0x7F ? 0x2421 : 0xFFFD
                    shown.append(Unicode.Scalar(picture)!)
                } else {
                    shown.append(scalar)
                }
            }
            return String(shown)
        }
        let source = expandingTabs(utf8[lineStart..<lineEnd])
        let line = lineInQuery + firstLine - 1
        let gutter = String(line)
        let pad = String(repeating: " ", count: gutter.count)
        // The caret covers the range's characters on this line, at least one, in terminal columns: a wide
        // character before or inside the range takes two.
        let lower = min(range.lowerBound, lineEnd)
        let upper = min(max(range.upperBound, range.lowerBound), lineEnd)
        let (shown, before, covered) = QueryError.window(
            source, caret: displayWidth(expandingTabs(utf8[lineStart..<lower])),
            width: max(1, displayWidth(expandingTabs(utf8[lower..<upper]))))
        var carets = String(repeating: " ", count: before) + String(repeating: "^", count: covered)
        if let label { carets += " " + escapingTerminalControls(label) }
        out += "\n\(pad)--> \(sourceName):\(line):\(column)"
        out += "\n\(gutter) | \(shown)"
        out += "\n\(pad) | \(carets)"
        return out
    }
}
