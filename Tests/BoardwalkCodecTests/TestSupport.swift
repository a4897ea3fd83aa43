import BoardwalkCodec
import BoardwalkGenerator
import BoardwalkModel

/// Hex conversion for golden vectors.
enum Hex {
    static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef")
        var s = ""
        for b in bytes {
            s.append(digits[Int(b >> 4)])
            s.append(digits[Int(b & 15)])
        }
        return s
    }

    static func decode(_ hex: String) -> [UInt8] {
        let chars = Array(hex.utf8.filter { $0 != UInt8(ascii: " ") })
        precondition(chars.count % 2 == 0, "odd hex")
        func nibble(_ c: UInt8) -> UInt8 {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): c - 48
            case UInt8(ascii: "a")...UInt8(ascii: "f"): c - 87
            default: preconditionFailure("bad hex digit")
            }
        }
        return stride(from: 0, to: chars.count, by: 2).map { nibble(chars[$0]) << 4 | nibble(chars[$0 + 1]) }
    }
}

/// Realistic sessions: ~10 events each, ids repeated within a session (UUID session and profile ids, 50
/// onboardings, a few placements and variations), as the SDKs produce them. No event ids: the wire
/// messages carry none.
struct Sessions {
    var rng: SplitMix64
    let onboardings: [String]
    var time: Int64 = 1_793_527_200_000_000

    init(seed: UInt64) {
        rng = SplitMix64(seed: seed)
        var r = SplitMix64(seed: seed ^ 0x5555)
        onboardings = (0..<50).map { _ in Sessions.uuid(&r) }
    }

    static func uuid(_ r: inout SplitMix64) -> String {
        let hex = Array("0123456789abcdef")
        var s = ""
        for i in 0..<32 {
            if i == 8 || i == 12 || i == 16 || i == 20 { s.append("-") }
            s.append(hex[Int(r.next() & 15)])
        }
        return s
    }

    mutating func session() -> [Event] {
        let onboarding = onboardings.randomElement(using: &rng)!
        let session = Sessions.uuid(&rng)
        let profile = Sessions.uuid(&rng)
        let placement = ["main", "onboarding", "settings"].randomElement(using: &rng)!
        let variation = ["a", "b", "control", "v2"].randomElement(using: &rng)!
        let screens = ["welcome", "goal", "experience", "interests", "email", "age", "paywall_intro", "final"]
        var events: [Event] = []
        time += Int64.random(in: 1_000_000...60_000_000, using: &rng)
        func add(_ screen: Int, _ payload: Payload) {
            time += Int64.random(in: 200_000...8_000_000, using: &rng)
            events.append(
                Event(
                    time: Timestamp(microseconds: time), session: session, profile: profile, placement: placement,
                    variation: variation,
                    meta: Meta(
                        onboardingID: onboarding, screenClientID: screens[screen], screenIndex: screen,
                        totalScreens: screens.count),
                    payload: payload))
        }
        add(0, .onboardingLoaded)
        add(0, .analytics(.onboardingStarted))
        add(0, .analytics(.screenPresented))
        add(0, .analytics(.screenCompleted(elementID: "continue", reply: nil)))
        add(1, .analytics(.screenPresented))
        let goals = ["lose_weight", "build_muscle", "stay_fit", "sleep_better"]
        let goal = goals.randomElement(using: &rng)!
        add(
            1,
            .stateUpdated(
                StateUpdate(elementID: "goal", value: .select(Choice(id: goal, value: goal, label: goal.uppercased()))))
        )
        add(1, .analytics(.screenCompleted(elementID: "goal", reply: goal)))
        add(2, .analytics(.screenPresented))
        let interests = ["music", "sports", "reading", "travel", "cooking"].filter { _ in Bool.random(using: &rng) }
        add(
            3,
            .stateUpdated(
                StateUpdate(
                    elementID: "interests",
                    value: .multiSelect(interests.map { Choice(id: $0, value: $0, label: $0.uppercased()) }))))
        if Int.random(in: 0..<3, using: &rng) == 0 {
            add(
                5,
                .stateUpdated(
                    StateUpdate(elementID: "age", value: .input(.number(Double(Int.random(in: 16...70, using: &rng))))))
            )
        }
        add(7, .analytics(.screenPresented))
        add(7, Bool.random(using: &rng) ? .openPaywall(actionID: "show_paywall") : .close(actionID: "close"))
        return events
    }

    mutating func events(_ n: Int) -> [Event] {
        var out: [Event] = []
        while out.count < n { out += session() }
        return Array(out.prefix(n))
    }
}

/// Builds batch files by hand (with correct checksums) for error tests.
enum Batch {
    static let header: [UInt8] = BatchFormat.magic + [BatchFormat.version, 0, 0, 0]

    static func block(type: UInt8, count: UInt32, payload: [UInt8]) -> [UInt8] {
        var head: [UInt8] = [type]
        head += le32(UInt32(payload.count))
        head += le32(count)
        var crc = CRC32C()
        crc.update(head)
        crc.update(payload)
        return head + le32(crc.value) + payload
    }

    static func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }

    static func end(strings: UInt8, records: UInt8) -> [UInt8] {
        block(type: 3, count: 0, payload: [strings, records])
    }
}

/// NDJSON for size comparisons: the wire shape of `docs/events.md` plus the envelope fields, as an
/// exporter would write it (the canonical writer lives in BoardwalkJSON, which this target cannot see).
enum NDJSON {
    static func line(_ e: Event) -> String {
        var fields: [String] = []
        func str(_ s: String) -> String {
            var r = "\""
            for u in s.unicodeScalars {
                switch u {
                case "\"": r += "\\\""
                case "\\": r += "\\\\"
                case "\n": r += "\\n"
                case "\t": r += "\\t"
                default:
                    if u.value < 0x20 {
                        let hex = String(u.value, radix: 16)
                        r += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                    } else {
                        r.unicodeScalars.append(u)
                    }
                }
            }
            return r + "\""
        }
        func field(_ k: String, _ v: String) { fields.append(str(k) + ":" + v) }
        func choice(_ c: Choice) -> String {
            "{\"id\":\(str(c.id)),\"value\":\(str(c.value)),\"label\":\(str(c.label))}"
        }
        field("type", str(e.kind.name))
        field("time", str(e.time.iso8601))
        if let s = e.session { field("session_id", str(s)) }
        if let s = e.profile { field("profile_id", str(s)) }
        if let s = e.eventID { field("event_id", str(s)) }
        if let s = e.placement { field("placement_id", str(s)) }
        if let s = e.variation { field("variation_id", str(s)) }
        if let m = e.meta {
            field(
                "meta",
                "{\"onboarding_id\":\(str(m.onboardingID)),\"screen_cid\":\(str(m.screenClientID)),"
                    + "\"screen_index\":\(m.screenIndex),\"total_screens\":\(m.totalScreens)}")
        }
        switch e.payload {
        case .analytics(let a):
            field("name", str(a.name))
            if case .screenCompleted(let element, let reply) = a, element != nil || reply != nil {
                var p: [String] = []
                if let element { p.append("\"element_id\":" + str(element)) }
                if let reply { p.append("\"reply\":" + str(reply)) }
                field("params", "{" + p.joined(separator: ",") + "}")
            }
        case .stateUpdated(let u):
            field("element_id", str(u.elementID))
            field("element_type", str(u.value.elementType.rawValue))
            switch u.value {
            case .select(let c): field("value", choice(c))
            case .multiSelect(let cs): field("value", "[" + cs.map(choice).joined(separator: ",") + "]")
            case .input(.text(let s)): field("value", "{\"type\":\"text\",\"value\":\(str(s))}")
            case .input(.email(let s)): field("value", "{\"type\":\"email\",\"value\":\(str(s))}")
            case .input(.number(let d)): field("value", "{\"type\":\"number\",\"value\":\(d)}")
            case .datePicker(let d):
                var p: [String] = []
                if let y = d.year { p.append("\"year\":\(y)") }
                if let m = d.month { p.append("\"month\":\(m)") }
                if let x = d.day { p.append("\"day\":\(x)") }
                field("value", "{" + p.joined(separator: ",") + "}")
            }
        case .openPaywall(let a), .custom(let a), .close(let a): field("action_id", str(a))
        case .onboardingLoaded: break
        case .error(let err):
            field("error", "{\"domain\":\(str(err.domain)),\"code\":\(err.code),\"message\":\(str(err.message))}")
        }
        return "{" + fields.joined(separator: ",") + "}\n"
    }
}
