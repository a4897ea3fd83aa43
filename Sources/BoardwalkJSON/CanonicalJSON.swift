import BoardwalkModel

/// The canonical JSON line: the wire message with its envelope flattened into it, keys in a fixed order,
/// no nulls, the time as ISO-8601 UTC with six fractional digits. ``EventReader`` reads it back to an equal
/// ``Event``; `docs/events.md` §Canonical line specifies it.
///
/// ```
/// {"timestamp":"2026-11-01T10:00:00.123456Z","session_id":"s1","type":"analytics","name":"screen_completed",
///  "params":{"element_id":"e","reply":"r"},"meta":{"onboarding_id":"o","screen_cid":"c","screen_index":0,"total_screens":3}}
/// ```
public enum CanonicalJSON {
    /// Appends the canonical line of `event` to `out`, without a newline.
    /// - Complexity: O(size of the event); no allocation beyond growing `out` (and formatting doubles).
    public static func write(_ event: Event, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        key("timestamp", &out, first: true)
        timestamp(event.time, &out)
        if let s = event.session { key("session_id", &out); string(s, &out) }
        if let s = event.profile { key("profile_id", &out); string(s, &out) }
        if let s = event.eventID { key("event_id", &out); string(s, &out) }
        if let s = event.placement { key("placement_id", &out); string(s, &out) }
        if let s = event.variation { key("variation_id", &out); string(s, &out) }
        key("type", &out)
        string(event.kind.rawValue, &out)
        switch event.payload {
        case .analytics(let a):
            key("name", &out)
            string(a.name, &out)
            if case .screenCompleted(let element, let reply) = a, element != nil || reply != nil {
                key("params", &out)
                out.append(UInt8(ascii: "{"))
                var first = true
                if let element { key("element_id", &out, first: first); string(element, &out); first = false }
                if let reply { key("reply", &out, first: first); string(reply, &out) }
                out.append(UInt8(ascii: "}"))
            }
        case .stateUpdated(let update):
            key("element_id", &out)
            string(update.elementID, &out)
            key("element_type", &out)
            string(update.value.elementType.rawValue, &out)
            key("value", &out)
            switch update.value {
            case .select(let c): choice(c, &out)
            case .multiSelect(let list):
                out.append(UInt8(ascii: "["))
                for (i, c) in list.enumerated() {
                    if i > 0 { out.append(UInt8(ascii: ",")) }
                    choice(c, &out)
                }
                out.append(UInt8(ascii: "]"))
            case .input(let input):
                out.append(UInt8(ascii: "{"))
                key("type", &out, first: true)
                string(input.inputType.rawValue, &out)
                key("value", &out)
                switch input {
                case .text(let s), .email(let s): string(s, &out)
                case .number(let d): number(d, &out)
                }
                out.append(UInt8(ascii: "}"))
            case .datePicker(let date):
                out.append(UInt8(ascii: "{"))
                var first = true
                if let y = date.year { key("year", &out, first: first); integer(Int64(y), &out); first = false }
                if let m = date.month { key("month", &out, first: first); integer(Int64(m), &out); first = false }
                if let d = date.day { key("day", &out, first: first); integer(Int64(d), &out) }
                out.append(UInt8(ascii: "}"))
            }
        case .openPaywall(let id), .custom(let id), .close(let id):
            key("action_id", &out)
            string(id, &out)
        case .onboardingLoaded:
            break
        case .error(let e):
            key("error", &out)
            out.append(UInt8(ascii: "{"))
            key("domain", &out, first: true)
            string(e.domain, &out)
            key("code", &out)
            integer(Int64(e.code), &out)
            key("message", &out)
            string(e.message, &out)
            out.append(UInt8(ascii: "}"))
        }
        if let meta = event.meta {
            key("meta", &out)
            out.append(UInt8(ascii: "{"))
            key("onboarding_id", &out, first: true)
            string(meta.onboardingID, &out)
            key("screen_cid", &out)
            string(meta.screenClientID, &out)
            key("screen_index", &out)
            integer(Int64(meta.screenIndex), &out)
            key("total_screens", &out)
            integer(Int64(meta.totalScreens), &out)
            out.append(UInt8(ascii: "}"))
        }
        out.append(UInt8(ascii: "}"))
    }

    /// The canonical line of `event`, without a newline.
    public static func line(_ event: Event) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(event, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    // MARK: Pieces

    @inline(__always)
    static func key(_ name: StaticString, _ out: inout [UInt8], first: Bool = false) {
        if !first { out.append(UInt8(ascii: ",")) }
        out.append(UInt8(ascii: "\""))
        out.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        out.append(UInt8(ascii: "\""))
        out.append(UInt8(ascii: ":"))
    }

    static func choice(_ c: Choice, _ out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        key("id", &out, first: true)
        string(c.id, &out)
        key("value", &out)
        string(c.value, &out)
        key("label", &out)
        string(c.label, &out)
        out.append(UInt8(ascii: "}"))
    }

    static func string(_ s: String, _ out: inout [UInt8]) {
        JSONString.append(s, to: &out)
    }

    static func integer(_ v: Int64, _ out: inout [UInt8]) {
        if v < 0 { out.append(UInt8(ascii: "-")) }
        var m = v.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes of room for 20 digits
        var n = 0
        withUnsafeMutableBytes(of: &digits) { buf in
            repeat {
                buf[23 - n] = UInt8(truncatingIfNeeded: m % 10) + 0x30
                m /= 10
                n += 1
            } while m > 0
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: buf[(24 - n)...]))
        }
    }

    /// Shortest round-trip digits (Swift's `description`); non-finite values, which JSON cannot hold, as the
    /// strings `Infinity`, `-Infinity` and `NaN`, which the reader accepts for number inputs.
    static func number(_ d: Double, _ out: inout [UInt8]) {
        if d.isNaN { string("NaN", &out); return }
        if d.isInfinite { string(d < 0 ? "-Infinity" : "Infinity", &out); return }
        out.append(contentsOf: d.description.utf8)
    }

    /// `2026-11-01T10:00:00.123456Z`.
    static func timestamp(_ t: Timestamp, _ out: inout [UInt8]) {
        let micros = t.microseconds
        var days = micros / 86_400_000_000
        var rest = micros % 86_400_000_000
        if rest < 0 { rest += 86_400_000_000; days -= 1 }
        let (y, m, d) = Timestamp.civil(fromDays: days)
        let second = rest / 1_000_000
        let fraction = rest % 1_000_000
        out.append(UInt8(ascii: "\""))
        func pad(_ v: Int64, _ width: Int) {
            var div: Int64 = 1
            for _ in 1..<width { div *= 10 }
            var v = v
            if v < 0 { out.append(UInt8(ascii: "-")); v = -v }
            if v >= div * 10 { integer(v, &out); return }  // a year beyond 9999: not readable back, but not lost
            while div > 0 {
                out.append(UInt8(truncatingIfNeeded: (v / div) % 10) + 0x30)
                div /= 10
            }
        }
        pad(y, 4); out.append(UInt8(ascii: "-")); pad(m, 2); out.append(UInt8(ascii: "-")); pad(d, 2)
        out.append(UInt8(ascii: "T"))
        pad(second / 3600, 2); out.append(UInt8(ascii: ":")); pad(second / 60 % 60, 2); out.append(UInt8(ascii: ":"))
        pad(second % 60, 2); out.append(UInt8(ascii: ".")); pad(fraction, 6)
        out.append(UInt8(ascii: "Z"))
        out.append(UInt8(ascii: "\""))
    }
}
