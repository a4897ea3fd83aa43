// The Foundation peer's types: Codable structs mirroring the wire, docs and bridge shapes the way an app
// developer would write them with JSONDecoder (one struct, every spelling an optional property), and a
// custom `init(from:)` only where a field changes type (`value`, `timestamp`).
import BoardwalkModel
import Foundation

struct FoundationLine: Codable {
    var timestamp: TimestampMirror?
    var ts: TimestampMirror?
    var created_at: TimestampMirror?
    var received_at: TimestampMirror?
    var session_id: String?
    var profile_id: String?
    var event_id: String?
    var placement_id: String?
    var variation_id: String?
    var kind: String?
    var type: String?
    var name: String?
    var action_id: String?
    var actionId: String?
    var element_id: String?
    var elementId: String?
    var element_type: String?
    var reply: String?
    var value: ValueMirror?
    var params: ParamsMirror?
    var meta: MetaMirror?
    var view: ViewMirror?
    /// The bridge's `event {name, element_id?, reply?}`, or a whole message wrapped by the envelope.
    var event: Wrapped?
    var action: BridgeActionMirror?
    var error: ErrorMirror?

    /// A number folded from the decoded fields, so the decode cannot be skipped and peers can be compared.
    var checksum: UInt64 {
        let meta = self.meta ?? event?.line.meta
        var sum = UInt64(truncatingIfNeeded: meta?.screen_index ?? meta?.screenIndex ?? 0)
        sum &+= UInt64((type ?? kind ?? name ?? event?.line.type ?? event?.line.name ?? "").utf8.count)
        sum &+= UInt64((session_id ?? view?.id ?? "").utf8.count)
        return sum
    }

    /// The wire shape of an event, as the JSONEncoder peer writes it.
    init(wire e: Event) {
        timestamp = .milliseconds(Double(e.time.microseconds / 1000))
        session_id = e.session
        profile_id = e.profile
        event_id = e.eventID
        placement_id = e.placement
        variation_id = e.variation
        if let m = e.meta {
            meta = MetaMirror(
                onboarding_id: m.onboardingID, screen_cid: m.screenClientID, screen_index: m.screenIndex,
                total_screens: m.totalScreens)
        }
        switch e.payload {
        case .analytics(let a):
            type = "analytics"
            name = a.name
            if case .screenCompleted(let element, let reply) = a {
                params = ParamsMirror(element_id: element, reply: reply)
            }
        case .stateUpdated(let s):
            type = "state_updated"
            element_id = s.elementID
            element_type = s.value.elementType.rawValue
            value = ValueMirror(s.value)
        case .openPaywall(let id): type = "open_paywall"; action_id = id
        case .custom(let id): type = "custom"; action_id = id
        case .close(let id): type = "close"; action_id = id
        case .onboardingLoaded: type = "onboarding_loaded"
        case .error(let error):
            kind = "error"
            self.error = ErrorMirror(domain: error.domain, code: error.code, message: error.message)
        }
    }
}

enum TimestampMirror: Codable {
    case milliseconds(Double)
    case iso8601(String)

    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if let n = try? c.decode(Double.self) {
            self = .milliseconds(n)
        } else {
            self = .iso8601(try c.decode(String.self))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .milliseconds(let n): try c.encode(n)
        case .iso8601(let s): try c.encode(s)
        }
    }
}

struct MetaMirror: Codable {
    var onboarding_id: String?
    var screen_cid: String?
    var screen_index: Int?
    var total_screens: Int?
    var onboardingId: String?
    var screenClientId: String?
    var screenIndex: Int?
    var screensTotal: Int?
    var totalScreens: Int?
}

struct ParamsMirror: Codable {
    var element_id: String?
    var reply: String?
    var type: String?
    var value: ValueMirror?
}

struct ViewMirror: Codable {
    var id: String?
    var placement_id: String?
    var variation_id: String?
}

/// A line nested in a line: a class, so the struct can contain itself.
final class Wrapped: Codable {
    let line: FoundationLine
    init(from decoder: any Decoder) throws { line = try FoundationLine(from: decoder) }
    func encode(to encoder: any Encoder) throws { try line.encode(to: encoder) }
}

struct BridgeActionMirror: Codable {
    var element_id: String?
    var element_type: String?
    var action_id: String?
    var value: ValueMirror?
}

struct ErrorMirror: Codable {
    var domain: String
    var code: Int
    var message: String
}

struct ChoiceMirror: Codable {
    var id: String
    var value: String
    var label: String
}

/// A state update's value: a choice, a list of choices, an input, or date parts.
enum ValueMirror: Codable {
    case choice(ChoiceMirror)
    case choices([ChoiceMirror])
    case text(type: String, value: String)
    case number(Double)
    case date(day: Int?, month: Int?, year: Int?)

    private enum Keys: String, CodingKey { case id, value, label, type, day, month, year }

    init(_ v: StateValue) {
        switch v {
        case .select(let c): self = .choice(ChoiceMirror(id: c.id, value: c.value, label: c.label))
        case .multiSelect(let cs): self = .choices(cs.map { ChoiceMirror(id: $0.id, value: $0.value, label: $0.label) })
        case .input(.text(let s)): self = .text(type: "text", value: s)
        case .input(.email(let s)): self = .text(type: "email", value: s)
        case .input(.number(let d)): self = .number(d)
        case .datePicker(let d): self = .date(day: d.day, month: d.month, year: d.year)
        }
    }

    init(from decoder: any Decoder) throws {
        if var list = try? decoder.unkeyedContainer() {
            var choices: [ChoiceMirror] = []
            while !list.isAtEnd { choices.append(try list.decode(ChoiceMirror.self)) }
            self = .choices(choices)
            return
        }
        let c = try decoder.container(keyedBy: Keys.self)
        if let type = try c.decodeIfPresent(String.self, forKey: .type) {
            if type == "number" {
                self = .number(try c.decode(Double.self, forKey: .value))
            } else {
                self = .text(type: type, value: try c.decode(String.self, forKey: .value))
            }
        } else if c.contains(.id) {
            self = .choice(
                ChoiceMirror(
                    id: try c.decode(String.self, forKey: .id), value: try c.decode(String.self, forKey: .value),
                    label: try c.decode(String.self, forKey: .label)))
        } else {
            self = .date(
                day: try c.decodeIfPresent(Int.self, forKey: .day),
                month: try c.decodeIfPresent(Int.self, forKey: .month),
                year: try c.decodeIfPresent(Int.self, forKey: .year))
        }
    }

    func encode(to encoder: any Encoder) throws {
        switch self {
        case .choices(let cs):
            var list = encoder.unkeyedContainer()
            for choice in cs { try list.encode(choice) }
        case .choice(let choice):
            try choice.encode(to: encoder)
        case .text(let type, let value):
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(type, forKey: .type)
            try c.encode(value, forKey: .value)
        case .number(let value):
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode("number", forKey: .type)
            try c.encode(value, forKey: .value)
        case .date(let day, let month, let year):
            var c = encoder.container(keyedBy: Keys.self)
            try c.encodeIfPresent(day, forKey: .day)
            try c.encodeIfPresent(month, forKey: .month)
            try c.encodeIfPresent(year, forKey: .year)
        }
    }
}
