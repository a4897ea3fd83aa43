import BoardwalkGenerator
import BoardwalkJSON
import BoardwalkModel
import BoardwalkStore
import Testing

@testable import BoardwalkCLI

/// An RFC 4180 reader over UTF-8 bytes (not Characters: a quote followed by a combining mark is still a quote).
private func parseCSVBytes(_ bytes: [UInt8]) -> [[String]] {
    var rows: [[String]] = []
    var row: [String] = []
    var field: [UInt8] = []
    var quoted = false
    var i = 0
    func endField() { row.append(String(decoding: field, as: UTF8.self)); field = [] }
    while i < bytes.count {
        let b = bytes[i]
        i += 1
        if quoted {
            if b == UInt8(ascii: "\"") {
                if i < bytes.count, bytes[i] == UInt8(ascii: "\"") { field.append(b); i += 1 } else { quoted = false }
            } else {
                field.append(b)
            }
        } else if b == UInt8(ascii: "\"") {
            quoted = true
        } else if b == UInt8(ascii: ",") {
            endField()
        } else if b == 0x0A {
            endField()
            rows.append(row)
            row = []
        } else {
            field.append(b)
        }
    }
    return rows
}

/// The export's columns of an event, unquoted: the reference the byte-level writer is checked against.
private func expectedFields(_ stored: StoredEvent) -> [String] {
    let e = stored.event
    var name = e.kind.name, element = "", elementType = "", reply = "", value = "", label = "", answer = "",
        domain = "", code = "", message = ""
    /// A set as a query's CSV cell: distinct, sorted, JSON strings in brackets; nothing when empty.
    func set(_ items: [String]) -> String {
        items.isEmpty ? "" : "[" + Set(items).sorted().map { JSONString.quoted($0) }.joined(separator: ",") + "]"
    }
    switch e.payload {
    case .analytics(let a):
        name = a.name
        if case .screenCompleted(let el, let r) = a { element = el ?? ""; reply = r ?? "" }
    case .stateUpdated(let u):
        element = u.elementID
        elementType = u.value.elementType.rawValue
        answer = CSVExport.valueJSON(u.value)
        switch u.value {
        case .select(let c): (value, label) = (c.value, c.label)
        case .multiSelect(let cs): (value, label) = (set(cs.map(\.value)), set(cs.map(\.label)))
        case .input(.text(let t)), .input(.email(let t)): value = t
        case .input(.number(let n)):
            value = !n.isFinite ? "" : n == n.rounded() && abs(n) < 9e15 ? String(Int64(n)) : "\(n)"
        case .datePicker(let p):
            func part(_ v: Int?, _ w: Int) -> String {
                v.map { String(repeating: "0", count: max(0, w - String($0).count)) + String($0) }
                    ?? String(repeating: "?", count: w)
            }
            value = "\(part(p.year, 4))-\(part(p.month, 2))-\(part(p.day, 2))"
        }
    case .error(let err):
        domain = err.domain
        code = String(err.code)
        message = err.message
    default: break
    }
    return [
        e.time.iso8601, String(stored.seq), e.kind.name, name, e.meta?.onboardingID ?? "",
        e.meta.map { String($0.screenIndex) } ?? "", e.meta?.screenClientID ?? "",
        e.meta.map { String($0.totalScreens) } ?? "", e.session ?? "", e.profile ?? "", e.payload.actionID ?? "",
        element, elementType, reply, value, label, e.placement ?? "", e.variation ?? "", e.eventID ?? "", answer,
        domain, code, message,
    ]
}

@Suite("CSV export: quoting on UTF-8 bytes")
struct CSVExportTests {
    @Test(
        "A field is quoted when it holds a comma, a quote, CR or LF, with quotes doubled; nothing else is",
        arguments: [
            ("plain", "plain"), ("", ""), ("日本語 é", "日本語 é"), ("tab\there", "tab\there"),
            ("a,b", "\"a,b\""), ("say \"hi\"", "\"say \"\"hi\"\"\""), ("two\nlines", "\"two\nlines\""),
            ("cr\rlf", "\"cr\rlf\""), ("crlf\r\n", "\"crlf\r\n\""),
            // A combining mark after a quote or comma makes one Character with it: still quoted, quote doubled.
            ("\"\u{301}", "\"\"\"\u{301}\""), ("x,\u{301}y", "\"x,\u{301}y\""),
        ])
    func quoting(field: String, expected: String) {
        #expect(Array(CSVExport.quote(field).utf8) == Array(expected.utf8))
    }

    @Test("Rows of random events parse back, byte for byte, into the export's 23 columns")
    func rowsParseBack() {
        var events = RandomEvents(seed: 12)
        var bytes: [UInt8] = Array(CSVExport.header.utf8)
        var expected: [[String]] = [CSVExport.columns]
        for seq in 0..<2_000 {
            let stored = StoredEvent(
                seq: UInt64(seq) * 7_919 + (seq == 1 ? UInt64.max - 7_919 : 0), event: events.event())
            CSVExport.appendRow(stored, to: &bytes)
            expected.append(expectedFields(stored))
            #expect(
                CSVExport.row(stored) == String(decoding: bytes.suffix(CSVExport.row(stored).utf8.count), as: UTF8.self)
            )
        }
        let rows = parseCSVBytes(bytes)
        #expect(rows.count == expected.count)
        for (row, want) in zip(rows, expected) {
            #expect(row == want)
        }
    }

    @Test("Decimal digits without a String: zero, negatives, the extremes")
    func decimals() {
        for n in [0, 7, -7, 10, 1_000_000, Int.max, Int.min] {
            var out: [UInt8] = []
            CSVExport.appendDecimal(n, to: &out)
            #expect(String(decoding: out, as: UTF8.self) == String(n))
        }
        var out: [UInt8] = []
        CSVExport.appendDecimal(UInt64.max, to: &out)
        #expect(String(decoding: out, as: UTF8.self) == String(UInt64.max))
    }
}
