// NDJSON for the JSON benchmarks, written by the benchmark itself so every parser reads the same bytes:
// about 70 % web-view wire messages with a flattened envelope, 15 % the docs' camelCase shapes and 15 %
// the cross-platform bridge shapes (events.md §1–2). Kinds the docs and bridge shapes cannot express are
// written in the wire shape.
import BoardwalkGenerator
import BoardwalkModel

/// NDJSON text in one buffer, with where each line starts and ends (newline excluded).
struct JSONLines {
    var bytes: [UInt8] = []
    var lines: [Range<Int>] = []
    private var depth = 0

    init(_ events: [Event], seed: UInt64 = 42) {
        var rng = SplitMix64(seed: seed)
        bytes.reserveCapacity(events.count * 300)
        for event in events {
            let start = bytes.count
            let roll = rng.next() % 100
            if roll < 15, writeDocsShape(event) {
            } else if roll >= 85, writeBridgeShape(event) {
            } else {
                writeWireShape(event)
            }
            lines.append(start..<bytes.count)
            bytes.append(0x0A)
        }
    }

    /// The whole text, newline-terminated lines.
    var text: String { String(decoding: bytes, as: UTF8.self) }

    // MARK: Shapes

    private mutating func writeWireShape(_ e: Event) {
        open()
        envelope(e, timestampAsNumber: true)
        switch e.payload {
        case .analytics(let a):
            field("type", "analytics"); field("name", a.name)
            if case .screenCompleted(let element, let reply) = a, element != nil || reply != nil {
                key("params"); open(); optionalField("element_id", element); optionalField("reply", reply); close()
            }
        case .stateUpdated(let s):
            field("type", "state_updated"); field("element_id", s.elementID)
            field("element_type", s.value.elementType.rawValue); key("value"); value(s.value)
        case .openPaywall(let id): field("type", "open_paywall"); field("action_id", id)
        case .custom(let id): field("type", "custom"); field("action_id", id)
        case .close(let id): field("type", "close"); field("action_id", id)
        case .onboardingLoaded: field("type", "onboarding_loaded")
        case .error(let error):
            field("kind", "error"); key("error"); open()
            field("domain", error.domain); intField("code", error.code); field("message", error.message); close()
        }
        if let m = e.meta { key("meta"); meta(m, camel: false) }
        close()
    }

    private mutating func writeDocsShape(_ e: Event) -> Bool {
        guard let m = e.meta else { return false }
        switch e.payload {
        case .analytics(let a):
            open(); envelope(e, timestampAsNumber: false)
            field("name", a.name); key("meta"); meta(m, camel: true)
            if case .screenCompleted(let element, let reply) = a, element != nil || reply != nil {
                key("params"); open(); optionalField("element_id", element); optionalField("reply", reply); close()
            }
            close()
        case .stateUpdated(let s):
            open(); envelope(e, timestampAsNumber: false)
            field("elementId", s.elementID); key("meta"); meta(m, camel: true)
            let type: String
            switch s.value {
            case .select: type = "select"
            case .multiSelect: type = "multiSelect"
            case .input: type = "input"
            case .datePicker: type = "datePicker"
            }
            key("params"); open(); field("type", type); key("value"); value(s.value); close()
            close()
        case .openPaywall(let id), .custom(let id), .close(let id):
            // Without `type` these three look alike; the envelope's `kind` says which.
            open(); envelope(e, timestampAsNumber: false)
            field("kind", e.kind.rawValue); field("actionId", id); key("meta"); meta(m, camel: true)
            close()
        default:
            return false
        }
        return true
    }

    private mutating func writeBridgeShape(_ e: Event) -> Bool {
        guard let m = e.meta else { return false }
        switch e.payload {
        case .analytics(let a):
            open(); bridgeEnvelope(e); key("meta"); meta(m, camel: false)
            key("event"); open(); field("name", a.name)
            if case .screenCompleted(let element, let reply) = a { optionalField("element_id", element); optionalField("reply", reply) }
            close(); close()
        case .stateUpdated(let s):
            open(); bridgeEnvelope(e); key("meta"); meta(m, camel: false)
            key("action"); open(); field("element_id", s.elementID); field("element_type", s.value.elementType.rawValue)
            key("value"); value(s.value); close(); close()
        default:
            return false
        }
        return true
    }

    // MARK: Pieces

    private mutating func envelope(_ e: Event, timestampAsNumber: Bool) {
        if timestampAsNumber {
            intField("timestamp", Int(e.time.microseconds / 1000))
        } else {
            // Milliseconds, as apps stamp them: the fraction of the ISO-8601 text keeps 3 digits.
            let iso = e.time.iso8601
            field("timestamp", String(iso.prefix(23)) + "Z")
        }
        optionalField("session_id", e.session)
        optionalField("profile_id", e.profile)
        optionalField("event_id", e.eventID)
        optionalField("placement_id", e.placement)
        optionalField("variation_id", e.variation)
    }

    private mutating func bridgeEnvelope(_ e: Event) {
        intField("timestamp", Int(e.time.microseconds / 1000))
        optionalField("profile_id", e.profile)
        optionalField("event_id", e.eventID)
        key("view"); open()
        optionalField("id", e.session); optionalField("placement_id", e.placement); optionalField("variation_id", e.variation)
        close()
    }

    private mutating func meta(_ m: Meta, camel: Bool) {
        open()
        field(camel ? "onboardingId" : "onboarding_id", m.onboardingID)
        field(camel ? "screenClientId" : "screen_cid", m.screenClientID)
        intField(camel ? "screenIndex" : "screen_index", m.screenIndex)
        intField(camel ? "screensTotal" : "total_screens", m.totalScreens)
        close()
    }

    private mutating func value(_ v: StateValue) {
        switch v {
        case .select(let c): choice(c)
        case .multiSelect(let cs):
            bytes.append(UInt8(ascii: "["))
            for c in cs { choice(c) }
            if bytes.last == UInt8(ascii: ",") { bytes.removeLast() }
            bytes.append(contentsOf: [UInt8(ascii: "]"), UInt8(ascii: ",")])
        case .input(let input):
            open(); field("type", input.inputType.rawValue)
            switch input {
            case .text(let s), .email(let s): field("value", s)
            case .number(let d): key("value"); bytes.append(contentsOf: Array("\(d)".utf8)); bytes.append(UInt8(ascii: ","))
            }
            close()
        case .datePicker(let d):
            open()
            if let day = d.day { intField("day", day) }
            if let month = d.month { intField("month", month) }
            if let year = d.year { intField("year", year) }
            close()
        }
    }

    private mutating func choice(_ c: Choice) {
        open(); field("id", c.id); field("value", c.value); field("label", c.label); close()
    }

    private mutating func open() {
        bytes.append(UInt8(ascii: "{"))
        depth += 1
    }

    /// Closes an object; every value is followed by a comma, which the closing brace replaces.
    private mutating func close() {
        if bytes.last == UInt8(ascii: ",") { bytes.removeLast() }
        bytes.append(UInt8(ascii: "}"))
        depth -= 1
        if depth > 0 { bytes.append(UInt8(ascii: ",")) }
    }

    private mutating func key(_ k: String) {
        string(k)
        bytes.append(UInt8(ascii: ":"))
    }

    private mutating func field(_ k: String, _ v: String) {
        key(k); string(v); bytes.append(UInt8(ascii: ","))
    }

    private mutating func optionalField(_ k: String, _ v: String?) {
        if let v { field(k, v) }
    }

    private mutating func intField(_ k: String, _ v: Int) {
        key(k); bytes.append(contentsOf: Array(String(v).utf8)); bytes.append(UInt8(ascii: ","))
    }

    private mutating func string(_ s: String) {
        bytes.append(UInt8(ascii: "\""))
        for c in s.utf8 {
            switch c {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [0x5C, 0x5C])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(c >> 4)], hex[Int(c & 15)]])
            default: bytes.append(c)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
