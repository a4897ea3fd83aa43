import Boardwalk

/// The CSV export's columns and quoting.
///
/// The columns are the fields of an `events` query row (docs/query-language.md), named and valued as a query shows
/// them (`query --format csv 'events | select …'`), in their order, without `dwell` (a query works it out from the
/// session's next event); then what a query does not show and `ingest --format csv` needs to read the event back
/// whole: the answer as JSON and the error's fields.
enum CSVExport {
    static let columns = [
        "time", "seq", "kind", "name", "onboarding", "screen", "screen_cid", "total_screens", "session", "profile",
        "action", "element", "element_type", "reply", "value", "label", "placement", "variation", "event_id",
        "answer", "error_domain", "error_code", "error_message",
    ]
    static let header = columns.joined(separator: ",") + "\n"

    /// The event's row as text, with its line feed: what ``appendRow(_:to:)`` appends.
    static func row(_ stored: StoredEvent) -> String {
        var bytes: [UInt8] = []
        appendRow(stored, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the event's row, ending in a line feed, to `out` as UTF-8.
    ///
    /// - Complexity: O(n) in the row's bytes; no allocation beyond `out`'s growth and the few fields made as
    ///   text (the time, the answer's JSON, numbers).
    static func appendRow(_ stored: StoredEvent, to out: inout [UInt8]) {
        let e = stored.event
        func field(_ text: String) {
            out.append(UInt8(ascii: ","))
            appendField(text, to: &out)
        }
        func number(_ n: Int) {
            out.append(UInt8(ascii: ","))
            appendDecimal(n, to: &out)
        }
        func empty(_ n: Int = 1) {
            for _ in 0..<n { out.append(UInt8(ascii: ",")) }
        }
        func nonEmpty(_ s: String?) { field(s ?? "") }
        appendField(e.time.iso8601, to: &out)
        out.append(UInt8(ascii: ","))
        appendDecimal(stored.seq, to: &out)
        field(e.kind.name)
        // name: the analytics name, or the kind's for other kinds, as the query language and the ClickHouse rows have it
        if case .analytics(let a) = e.payload { field(a.name) } else { field(e.kind.name) }
        if let meta = e.meta {
            field(meta.onboardingID)
            number(meta.screenIndex)
            field(meta.screenClientID)
            number(meta.totalScreens)
        } else {
            empty(4)
        }
        field(e.session ?? "")
        field(e.profile ?? "")
        field(e.payload.actionID ?? "")
        // element, element_type, reply, value, label
        switch e.payload {
        case .analytics(.screenCompleted(let element, let reply)):
            nonEmpty(element)
            empty()
            nonEmpty(reply)
            empty(2)
        case .stateUpdated(let u):
            field(u.elementID)
            field(u.value.elementType.rawValue)
            empty()
            field(answerText(u.value))
            field(labelText(u.value))
        default:
            empty(5)
        }
        field(e.placement ?? "")
        field(e.variation ?? "")
        field(e.eventID ?? "")
        // answer, error_domain, error_code, error_message
        switch e.payload {
        case .stateUpdated(let u):
            field(valueJSON(u.value))
            empty(3)
        case .error(let err):
            empty()
            field(err.domain)
            number(err.code)
            field(err.message)
        default:
            empty(4)
        }
        out.append(0x0A)
    }

    /// The `value` field as a query's CSV shows it: a select's value, a multi-select's distinct values as a sorted
    /// JSON array (empty when none were chosen), an input's text or number, a date as `YYYY-MM-DD` with `?` for the
    /// parts not given.
    static func answerText(_ value: StateValue) -> String {
        switch value {
        case .select(let choice): return choice.value
        case .multiSelect(let choices): return setText(choices.map(\.value))
        case .input(.text(let s)), .input(.email(let s)): return s
        case .input(.number(let n)): return n.isFinite ? exactNumber(n) : ""
        case .datePicker(let parts):
            func pad(_ v: Int?, _ width: Int) -> String {
                guard let v else { return String(repeating: "?", count: width) }
                let s = String(v)
                return s.count < width ? String(repeating: "0", count: width - s.count) + s : s
            }
            return "\(pad(parts.year, 4))-\(pad(parts.month, 2))-\(pad(parts.day, 2))"
        }
    }

    /// The `label` field as a query's CSV shows it: a select's label, a multi-select's distinct labels as a sorted
    /// JSON array; empty for inputs and dates.
    static func labelText(_ value: StateValue) -> String {
        switch value {
        case .select(let choice): return choice.label
        case .multiSelect(let choices): return setText(choices.map(\.label))
        default: return ""
        }
    }

    /// A set of strings as a query's CSV shows it: distinct, sorted, a JSON array; empty for none.
    private static func setText(_ items: [String]) -> String {
        guard !items.isEmpty else { return "" }
        return "[" + Set(items).sorted().map(JSONString.quoted).joined(separator: ",") + "]"
    }

    /// A number as a query's CSV shows it: integral values without a fraction, others in the shortest form that
    /// reads back the same double.
    private static func exactNumber(_ d: Double) -> String {
        if d == d.rounded(), d.magnitude < 9.007_199_254_740_992e15 { return String(Int64(d)) }
        return "\(d)"
    }

    /// Appends `field` as a CSV field (RFC 4180): quoted when it holds a comma, a quote, CR or LF, with its
    /// quotes doubled. Looks at UTF-8 bytes, so a quote or comma followed by a combining mark (one `Character`
    /// with it) is still seen; those four bytes never occur inside a multi-byte UTF-8 sequence.
    static func appendField(_ field: String, to out: inout [UInt8]) {
        let done: Void? = field.utf8.withContiguousStorageIfAvailable { appendField(bytes: $0, to: &out) }
        if done == nil { Array(field.utf8).withUnsafeBufferPointer { appendField(bytes: $0, to: &out) } }
    }

    private static func appendField(bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        guard bytes.contains(where: { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == 0x0A || $0 == 0x0D })
        else {
            out.append(contentsOf: bytes)
            return
        }
        out.append(UInt8(ascii: "\""))
        for byte in bytes {
            if byte == UInt8(ascii: "\"") { out.append(byte) }
            out.append(byte)
        }
        out.append(UInt8(ascii: "\""))
    }

    /// `field` as a CSV field: ``appendField(_:to:)`` as text.
    static func quote(_ field: String) -> String {
        var out: [UInt8] = []
        appendField(field, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the decimal digits of `n` (with `-` when negative) without making a `String`.
    static func appendDecimal(_ n: some BinaryInteger, to out: inout [UInt8]) {
        if n < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = UInt64(n.magnitude)
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // up to 20 digits, least significant first
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            for i in stride(from: count - 1, through: 0, by: -1) { out.append(buffer[i]) }
        }
    }

    /// The answer as compact JSON text: the `answer` column, which `ingest --format csv` reads the answer back from.
    static func valueJSON(_ value: StateValue) -> String {
        func s(_ t: String) -> String { JSONString.quoted(t) }
        func choice(_ c: Choice) -> String { "{\"id\":\(s(c.id)),\"value\":\(s(c.value)),\"label\":\(s(c.label))}" }
        switch value {
        case .select(let c): return choice(c)
        case .multiSelect(let cs): return "[" + cs.map(choice).joined(separator: ",") + "]"
        case .input(.text(let t)): return "{\"type\":\"text\",\"value\":\(s(t))}"
        case .input(.email(let t)): return "{\"type\":\"email\",\"value\":\(s(t))}"
        case .input(.number(let d)): return "{\"type\":\"number\",\"value\":\(d.isFinite ? "\(d)" : "null")}"
        case .datePicker(let p):
            var parts: [String] = []
            if let d = p.day { parts.append("\"day\":\(d)") }
            if let m = p.month { parts.append("\"month\":\(m)") }
            if let y = p.year { parts.append("\"year\":\(y)") }
            return "{" + parts.joined(separator: ",") + "}"
        }
    }
}
