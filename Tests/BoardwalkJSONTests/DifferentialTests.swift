import BoardwalkGenerator
import BoardwalkJSON
import BoardwalkModel
import Foundation
import Testing

/// A fuzzed corpus: whatever line the reader accepts, Foundation's JSONSerialization accepts too, with the same
/// values in the fields the event was read from.
@Suite struct DifferentialTests {
    /// Valid lines of every kind: canonical lines of arbitrary events and the shape table's wire lines.
    static func seeds() -> [String] {
        var events = RandomEvents(seed: 99)
        return (0..<300).map { _ in CanonicalJSON.line(events.event()) }
            + ShapeTests.cases.map(\.1).filter {
                !$0.contains("\"event\"") && !$0.contains("\"view\"") && !$0.contains("Id\"")
            }
    }

    /// Deterministic mutations: bit flips, truncations, insertions, deletions and type swaps.
    static func mutate(_ line: [UInt8], _ rng: inout SplitMix64) -> [UInt8] {
        var b = line
        guard !b.isEmpty else { return b }
        let at = Int.random(in: 0..<b.count, using: &rng)
        switch Int.random(in: 0..<6, using: &rng) {
        case 0: b[at] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &rng)
        case 1: b.removeSubrange(at...)
        case 2:
            let junk: [UInt8] = Array(#"{}[],:"\ 0-1.eE+tfn"#.utf8) + [0x00, 0x1F, 0x7F, 0xC3, 0xFF]
            b.insert(junk.randomElement(using: &rng)!, at: at)
        case 3: b.remove(at: at)
        case 4:
            // Swap a value's type: the value after a colon becomes a number, a string, null, an array or an object.
            guard let colon = b[at...].firstIndex(of: UInt8(ascii: ":")) else { break }
            var end = colon + 1
            var depth = 0
            var inString = false
            while end < b.count {
                let c = b[end]
                if inString {
                    if c == UInt8(ascii: "\\") { end += 1 } else if c == UInt8(ascii: "\"") { inString = false }
                } else if c == UInt8(ascii: "\"") {
                    inString = true
                } else if c == UInt8(ascii: "{") || c == UInt8(ascii: "[") {
                    depth += 1
                } else if c == UInt8(ascii: "}") || c == UInt8(ascii: "]") {
                    if depth == 0 { break }; depth -= 1
                } else if c == UInt8(ascii: ","), depth == 0 {
                    break
                }
                end += 1
            }
            let replacement = [
                #"1"#, #""1""#, "null", "[]", "{}", "-0.5", "true", #""""#, "1e400", "99999999999999999999",
            ]
            .randomElement(using: &rng)!
            // A backslash as the last byte steps `end` past the end.
            b.replaceSubrange((colon + 1)..<min(end, b.count), with: Array(replacement.utf8))
        default:
            // Duplicate a span (often a key/value pair).
            let len = Int.random(in: 1...min(24, b.count - at), using: &rng)
            b.insert(contentsOf: b[at..<(at + len)], at: at)
        }
        return b
    }

    @Test func acceptedLinesAgreeWithFoundation() throws {
        let reader = try EventReader()
        var rng = SplitMix64(seed: 2026)
        var accepted = 0, rejected = 0
        var failures: [String] = []
        for seed in Self.seeds() {
            for round in 0..<40 {
                var line = Array(seed.utf8)
                for _ in 0...(round % 3) { line = Self.mutate(line, &rng) }
                let result = line.withUnsafeBytes { bytes in
                    Result { () throws(JSONReadError) -> Event in try reader.read(line: bytes, arrival: arrival) }
                }
                guard case .success(let event) = result else { rejected += 1; continue }
                accepted += 1
                let text = String(decoding: line, as: UTF8.self)
                guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else {
                    failures.append("Foundation rejects a line the reader accepted: \(text)")
                    continue
                }
                let problems = Self.compare(event, object)
                if !problems.isEmpty { failures.append(problems.joined(separator: "; ") + " in " + text) }
            }
        }
        #expect(accepted > 1000, "too few mutated lines were accepted to compare: \(accepted)")
        #expect(rejected > 1000)
        #expect(failures.isEmpty, "\(failures.prefix(10).joined(separator: "\n"))")
    }

    // MARK: The reference: Foundation's values at the paths the reader reads for each kind.

    static func str(_ v: Any?) -> String?? {
        switch v {
        case nil, is NSNull: return .some(nil)
        case let s as String: return .some(s)
        default: return nil  // not a string
        }
    }

    static func same(_ a: String?, _ b: Any?) -> Bool {
        guard let s = str(b) else { return false }
        return a.map { Array($0.utf8) } == s.map { Array($0.utf8) }
    }

    /// JSON `true`/`false` come back as NSNumbers of ObjC type `c`; `0` and `1` also cast to Bool, so test the type.
    static func number(_ v: Any?) -> NSNumber? {
        guard let n = v as? NSNumber, String(cString: n.objCType) != "c" else { return nil }
        return n
    }

    static func int(_ v: Any?) -> Int? {
        guard let n = number(v), n.doubleValue == n.doubleValue.rounded(), abs(n.doubleValue) < 9.2e18 else {
            return nil
        }
        return n.intValue
    }

    static func compare(_ e: Event, _ d: [String: Any]) -> [String] {
        var p: [String] = []
        switch d["timestamp"] ?? d["ts"] ?? d["created_at"] ?? d["received_at"] {
        case let s as String: if Timestamp(iso8601: s) != e.time { p.append("timestamp") }
        case let n as NSNumber:
            // The unit by size: 16 digits or more are microseconds, 13 or more milliseconds, else seconds.
            let v = n.doubleValue
            let perUnit: Int64 = v >= 1e15 ? 1 : v >= 1e12 ? 1000 : 1_000_000
            let micros = v == v.rounded() ? n.int64Value * perUnit : Int64((v * Double(perUnit)).rounded())
            if Timestamp(microseconds: micros) != e.time { p.append("numeric timestamp") }
        default: if e.time != arrival { p.append("time should be the arrival time") }
        }
        if !same(e.session, d["session_id"]) { p.append("session_id") }
        if !same(e.profile, d["profile_id"]) { p.append("profile_id") }
        if !same(e.eventID, d["event_id"]) { p.append("event_id") }
        if !same(e.placement, d["placement_id"]) { p.append("placement_id") }
        if !same(e.variation, d["variation_id"]) { p.append("variation_id") }
        if let m = e.meta {
            let dm = d["meta"] as? [String: Any] ?? [:]
            if !same(m.onboardingID, dm["onboarding_id"]) { p.append("meta.onboarding_id") }
            if !same(m.screenClientID, dm["screen_cid"]) { p.append("meta.screen_cid") }
            if int(dm["screen_index"]) != m.screenIndex { p.append("meta.screen_index") }
            if int(dm["total_screens"]) != m.totalScreens { p.append("meta.total_screens") }
        } else if let dm = d["meta"], !(dm is NSNull) {
            p.append("meta was dropped")
        }
        if let t = d["type"] as? String, t != e.kind.rawValue { p.append("type \(t) read as \(e.kind.rawValue)") }
        switch e.payload {
        case .analytics(let a):
            if !same(a.name, d["name"]) { p.append("name") }
            if case .screenCompleted(let el, let reply) = a {
                let params = d["params"] as? [String: Any] ?? [:]
                if !same(el, params["element_id"]) { p.append("params.element_id") }
                if !same(reply, params["reply"]) { p.append("params.reply") }
            }
        case .stateUpdated(let u):
            if !same(u.elementID, d["element_id"]) { p.append("element_id") }
            let et = d["element_type"] as? String
            if et != u.value.elementType.rawValue { p.append("element_type") }
            func choice(_ c: Choice, _ v: Any?) -> Bool {
                guard let o = v as? [String: Any] else { return false }
                return same(c.id, o["id"]) && same(c.value, o["value"]) && same(c.label, o["label"])
            }
            switch u.value {
            case .select(let c): if !choice(c, d["value"]) { p.append("select value") }
            case .multiSelect(let list):
                let arr = d["value"] as? [Any] ?? []
                if arr.count != list.count || !zip(list, arr).allSatisfy({ choice($0, $1) }) {
                    p.append("multi_select value")
                }
            case .input(let input):
                let o = d["value"] as? [String: Any] ?? [:]
                if o["type"] as? String != input.inputType.rawValue { p.append("input type") }
                switch input {
                case .text(let s), .email(let s): if !same(s, o["value"]) { p.append("input value") }
                case .number(let x):
                    if let n = number(o["value"]) {
                        if n.doubleValue != x { p.append("number \(n) read as \(x)") }
                    } else if let s = o["value"] as? String {
                        if !(Double(s) == x || (s == "NaN" && x.isNaN)) { p.append("numeric string \(s) read as \(x)") }
                    } else {
                        p.append("number value")
                    }
                }
            case .datePicker(let date):
                let o = d["value"] as? [String: Any] ?? [:]
                if int(o["year"]) != date.year || int(o["month"]) != date.month || int(o["day"]) != date.day {
                    p.append("date")
                }
            }
        case .openPaywall(let id), .custom(let id), .close(let id):
            if !same(id, d["action_id"]) { p.append("action_id") }
        case .onboardingLoaded:
            break
        case .error(let err):
            let o = d["error"] as? [String: Any] ?? [:]
            if !same(err.domain, o["domain"]) || int(o["code"]) != err.code || !same(err.message, o["message"]) {
                p.append("error")
            }
        }
        return p
    }
}
