import Testing

@testable import BoardwalkQuery

// A diagnostic's source line is cut around the caret to 160 columns, with `…` where text is left out: a generated
// query of thousands of characters on one line would otherwise print that whole line and a caret line as long
// (28 k characters for the "too long" error of a 14 k-character query).

@Suite("Diagnostics of long query lines are cut around the caret")
struct LongLineDiagnosticsTests {
    /// The source line and the caret line of a rendered diagnostic (its last two lines), gutters removed.
    private func shown(_ rendered: String) -> (source: String, carets: String) {
        let lines = rendered.split(separator: "\n", omittingEmptySubsequences: false)
        func body(_ line: Substring) -> String { String(line[line.index(line.firstIndex(of: "|")!, offsetBy: 2)...]) }
        return (body(lines[lines.count - 2]), body(lines[lines.count - 1]))
    }

    @Test("cut on both sides, the caret under its text")
    func cutOnBothSides() {
        let query =
            "sessions | where " + Array(repeating: "completed", count: 30).joined(separator: " and ")
            + " and bogus and " + Array(repeating: "completed", count: 30).joined(separator: " and ")
        let rendered = diagnostic(query)
        #expect(rendered.hasPrefix("error: unknown field `bogus`\n --> query:1:"))
        let (source, carets) = shown(rendered)
        #expect(source.hasPrefix("…") && source.hasSuffix("…"))
        #expect(displayWidth(source) == QueryError.sourceColumns)
        #expect(carets == String(repeating: " ", count: QueryError.caretLead + 1) + "^^^^^")
        #expect(source.dropFirst(QueryError.caretLead + 1).hasPrefix("bogus and completed"))
    }

    @Test("the too-long error of a 14 000-character query is two short lines")
    func tooLongQuery() {
        let query =
            "sessions | where " + Array(repeating: "completed", count: 1_200).joined(separator: " and ") + " | count"
        let rendered = diagnostic(query)
        #expect(rendered.contains("the query is too long"))
        #expect(rendered.count < 500, "\(rendered.count) characters")
        let (source, carets) = shown(rendered)
        #expect(displayWidth(source) == QueryError.sourceColumns)
        #expect(carets.hasSuffix("^^^") && carets.count == QueryError.caretLead + 1 + 3)
    }

    @Test("a caret at the end of a long line, and one near its start")
    func endsOfTheLine() {
        let words = Array(repeating: "completed", count: 30).joined(separator: " and ")
        let (endSource, endCarets) = shown(diagnostic("sessions | where " + words + " and"))
        #expect(endSource.hasPrefix("…") && endSource.hasSuffix("completed and"))
        #expect(
            endCarets.hasPrefix(String(repeating: " ", count: displayWidth(endSource)) + "^ a condition after `and`"))
        let (startSource, startCarets) = shown(diagnostic("sessions | where bogus and " + words))
        #expect(startSource.hasPrefix("sessions | where bogus and") && startSource.hasSuffix("…"))
        #expect(startCarets == String(repeating: " ", count: 17) + "^^^^^")
    }

    @Test("wide characters: the caret stays under its text", arguments: ["李雷", "👨‍👩‍👧", "e\u{301}"])
    func wideCharacters(text: String) {
        let query =
            "sessions | where " + Array(repeating: #"did("\#(text)")"#, count: 40).joined(separator: " and ")
            + " and bogus | count"
        let (source, carets) = shown(diagnostic(query))
        #expect(displayWidth(source) <= QueryError.sourceColumns)
        let column = carets.firstIndex(of: "^").map { carets.distance(from: carets.startIndex, to: $0) } ?? -1
        // The text before the caret's column, in terminal columns, ends where `bogus` starts.
        var width = 0
        var rest = Substring(source)
        while width < column, let first = rest.first {
            width += displayWidth(String(first))
            rest = rest.dropFirst()
        }
        #expect(width == column && rest.hasPrefix("bogus"), "\(source)\n\(carets)")
    }

    @Test("a line of at most 160 columns is shown whole")
    func shortLinesUnchanged() {
        let query =
            "sessions | where " + Array(repeating: "completed", count: 9).joined(separator: " and ") + " and bogus"
        #expect(displayWidth(query) <= QueryError.sourceColumns)
        #expect(shown(diagnostic(query)).source == query)
    }
}
