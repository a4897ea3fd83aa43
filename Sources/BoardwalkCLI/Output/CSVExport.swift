import Boardwalk

/// The CSV export's columns and quoting.
enum CSVExport {
    static let columns = [
        "seq", "time", "kind", "name", "onboarding", "screen_cid", "screen", "total_screens", "session", "profile",
        "event_id", "placement", "variation", "action_id", "element_id", "element_type", "value", "reply",
        "error_domain", "error_code", "error_message",
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
        appendDecimal(stored.seq, to: &out)
        field(e.time.iso8601)
        field(e.kind.name)
        // name: the analytics name, or the kind's for other kinds, as the query language and the ClickHouse rows have it
        if case .analytics(let a) = e.payload { field(a.name) } else { field(e.kind.name) }
        if let meta = e.meta {
            field(meta.onboardingID)
            field(meta.screenClientID)
            number(meta.screenIndex)
            number(meta.totalScreens)
        } else {
            empty(4)
        }
        field(e.session ?? "")
        field(e.profile ?? "")
        field(e.eventID ?? "")
        field(e.placement ?? "")
        field(e.variation ?? "")
        field(e.payload.actionID ?? "")
        // element_id, element_type, value, reply, error_domain, error_code, error_message
        switch e.payload {
        case .analytics(.screenCompleted(let element, let reply)):
            field(element ?? "")
            empty(2)
            field(reply ?? "")
            empty(3)
        case .stateUpdated(let u):
            field(u.elementID)
            field(u.value.elementType.rawValue)
            field(valueJSON(u.value))
            empty(4)
        case .error(let err):
            empty(4)
            field(err.domain)
            out.append(UInt8(ascii: ","))
            appendDecimal(err.code, to: &out)
            field(err.message)
        default:
            empty(7)
        }
        out.append(0x0A)
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

    /// The answer as compact JSON text.
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
