import Testing

@testable import BoardwalkQuery

// What results print: CSV that any RFC 4180 reader reads back, and tables whose columns line up and whose
// cells cannot act on the terminal.

/// A strict RFC 4180 reader over UTF-8 bytes: fields split at `,`, records at LF (or CRLF); a quoted field ends at
/// a `"` not followed by another, and `""` inside it is one quote. A `"` inside an unquoted field, or anything
/// but a separator after a closing quote, is malformed (nil): a reader like Python's would guess instead.
private func readCSV(_ text: String) -> [[String]]? {
    let bytes = Array(text.utf8)
    let quote = UInt8(ascii: "\""), comma = UInt8(ascii: ","), lf: UInt8 = 0x0A, cr: UInt8 = 0x0D
    var records: [[String]] = []
    var record: [String] = []
    var i = 0
    while i < bytes.count {
        var field: [UInt8] = []
        if bytes[i] == quote {
            i += 1
            while true {
                guard i < bytes.count else { return nil }
                if bytes[i] == quote {
                    if i + 1 < bytes.count, bytes[i + 1] == quote {
                        field.append(quote)
                        i += 2
                        continue
                    }
                    i += 1
                    break
                }
                field.append(bytes[i])
                i += 1
            }
        } else {
            while i < bytes.count, bytes[i] != comma, bytes[i] != lf, bytes[i] != cr {
                if bytes[i] == quote { return nil }
                field.append(bytes[i])
                i += 1
            }
        }
        record.append(String(decoding: field, as: UTF8.self))
        guard i < bytes.count else { return nil }  // every record ends with a line break
        if bytes[i] == comma {
            i += 1
            continue
        }
        if bytes[i] == cr, i + 1 < bytes.count, bytes[i + 1] == lf { i += 1 }
        guard bytes[i] == lf else { return nil }
        i += 1
        records.append(record)
        record = []
    }
    return records
}

@Test func theCSVReaderIsStrict() {
    #expect(readCSV("a,b\n\"x,\"\"y\",z\n") == [["a", "b"], ["x,\"y", "z"]])
    #expect(readCSV("a\"b\n") == nil)
    #expect(readCSV("\"a\"b\n") == nil)
    #expect(readCSV("\"a\n") == nil)
}

/// A quote or comma followed by a combining mark is one `Character` that equals neither, so a check on
/// Characters would leave such a field unquoted, or its quote undoubled: every CSV reader would then split or end
/// the field there.
@Test(arguments: [
    "\"\u{301}", "a,\u{301}b", "x,\"\u{301}y", "\u{301}", ",\u{301}", "\"\u{301}\"\u{301}", "line\n\u{301}",
    "cr\r\u{301}",
    "e\u{301}", "plain", "", "👨‍👩‍👧,\"",
])
func csvFieldsWithCombiningMarksReadBack(_ field: String) throws {
    let table = ResultTable(
        columns: ["field", "n", "h\u{301}\"ead"], rows: [[.string(field), .integer(1), .set([field, "b"])]])
    let text = table.render(.csv)
    let records = try #require(readCSV(text), "malformed CSV: \(Array(text.utf8))")
    #expect(records.count == 2)
    #expect(records.first == ["field", "n", "h\u{301}\"ead"])
    #expect(records.last?.first == field)
    #expect(records.last?.dropFirst().first == "1")
    // A set's cell is its JSON array, read back whole however its items are written.
    #expect(records.last?.last == Value.set([field, "b"]).exactText)
}

@Test func aQuotedFieldsQuotesAreDoubledByteForByte() {
    let table = ResultTable(columns: ["action"], rows: [[.string("x,\"\u{301}y")], [.string("\"\u{301}")]])
    #expect(Array(table.render(.csv).utf8) == Array("action\n\"x,\"\"\u{301}y\"\n\"\"\"\u{301}\"\n".utf8))
}

/// A grapheme cluster takes the columns of its widest scalar: a family joined with U+200D is drawn as one
/// emoji, two columns, not six.
@Test func clustersCountTheirWidestScalarOnce() {
    #expect(displayWidth("👨‍👩‍👧") == 2)
    #expect(displayWidth("a👨‍👩‍👧b") == 4)
    #expect(displayWidth("e\u{301}") == 1)
    #expect(displayWidth("🇫🇷") == 2)
    #expect(displayWidth("❤️") == 2)
    #expect(displayWidth("中文") == 4)
    #expect(displayWidth("plain") == 5)
    #expect(displayWidth("") == 0)
    let table = ResultTable(
        columns: ["who", "count"], rows: [[.string("👨‍👩‍👧"), .integer(3)], [.string("Anna"), .integer(12)]])
    #expect(
        table.render(.table) == """
            who   count
            ----  -----
            👨‍👩‍👧        3
            Anna     12

            """)
}

/// U+202E (right-to-left override) printed raw makes the rest of the row read backwards; the other bidi
/// embeddings and isolates, C1 controls and line separators act on the terminal too. Escaped like the C0 controls.
@Test func bidiOverridesAndOtherControlsAreEscapedInTables() {
    let table = ResultTable(
        columns: ["value", "n"],
        rows: [
            [.string("abc\u{202E}fed"), .integer(1)],
            [.set(["\u{2066}x\u{2069}", "\u{202A}y\u{202C}"]), .integer(2)],
            [.string("c1\u{9B}31m,nel\u{85},ls\u{2028}"), .integer(3)],
            [.string("esc\u{1B}[2J\ttab\nnl"), .integer(4)],
        ])
    let text = table.render(.table)
    #expect(
        text == #"""
            value                                   n
            --------------------------------------  -
            abc\u{202e}fed                          1
            [\u{2066}x\u{2069}, \u{202a}y\u{202c}]  2
            c1\u{9b}31m,nel\u{85},ls\u{2028}        3
            esc\u{1b}[2J\ttab\nnl                   4

            """#)
    #expect(!text.unicodeScalars.contains { $0.value == 0x202E || $0.value == 0x1B || $0.value == 0x9B })
    // Column names hold query text and are escaped the same way.
    let header = ResultTable(columns: ["name==\"\u{202E}x\""], rows: []).render(.table)
    #expect(header.hasPrefix(#"name=="\u{202e}x""#))
    // CSV and JSON keep values exact: they are for programs.
    #expect(table.render(.csv).unicodeScalars.contains("\u{202E}"))
}
