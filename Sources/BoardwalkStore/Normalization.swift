import BoardwalkCodec
import BoardwalkModel

extension Store {
    /// The event as the store keeps it: empty strings where the semantics mean "absent" become `nil`.
    ///
    /// Semantics rule 11 (`analytics-semantics.md`): an empty `element_id` or `reply` of
    /// `screen_completed` (Android sends `""`) is stored as absent. The same holds for the event's ids —
    /// session, profile, event id, placement and variation — because an empty id names nothing: kept,
    /// an empty session id would merge the events of every profile that sent one into one session, and
    /// an empty event id would make unrelated events duplicates of each other. An event without a
    /// session after this step gets an inferred one at append (`docs/storage.md`).
    ///
    /// ``append(_:checkpoint:keepIdentical:)`` applies exactly this function to every event, so an in-memory source
    /// that must agree with the store (a test oracle, for example) can call it too.
    /// Other fields (action ids, which may be empty by design, the onboarding and screen ids, state
    /// values) are kept as they are.
    /// - Complexity: O(1); it copies the event only when something changes.
    @inlinable
    public static func normalized(_ event: Event) -> Event {
        guard needsNormalization(event) else { return event }
        var copy = event
        normalize(&copy)
        return copy
    }

    /// Whether ``normalized(_:)`` would change `event`: a few length checks, no copy.
    @inlinable
    package static func needsNormalization(_ event: Event) -> Bool {
        if event.session?.isEmpty == true || event.profile?.isEmpty == true || event.eventID?.isEmpty == true
            || event.placement?.isEmpty == true || event.variation?.isEmpty == true
        {
            return true
        }
        if case .analytics(.screenCompleted(let element, let reply)) = event.payload {
            return element?.isEmpty == true || reply?.isEmpty == true
        }
        return false
    }

    /// Whether the optional string at `string` is absent or empty (an empty id is absent: rule 11), read in place
    /// (no retain). The append loop checks the session this way; the encoder applies rule 11 to the other fields
    /// itself (`RecordEncoder.appendBody(at:strings:eventID:emptyIsAbsent:)`).
    @inline(__always)
    static func isMissing(at string: UnsafePointer<String?>) -> Bool {
        guard string.pointee != nil else { return true }
        // A present value sits unchanged at offset 0 of the optional (`nil` is an extra inhabitant).
        return string.withMemoryRebound(to: String.self, capacity: 1) { $0.pointee.utf8.isEmpty }
    }

    /// The screen index of the event at `event` when it has `meta` and the index fits a key (`0...Meta.maxScreenIndex`).
    /// Not inlined, like the encoder's `EventShape`: inlined into the append loop, `…meta?.screenIndex` copied the
    /// whole `Meta?` (a retain and release of both its strings) to read one integer.
    @inline(never)
    static func keyScreenIndex(at event: UnsafePointer<Event>) -> Int? {
        guard let screen = event.pointee.meta?.screenIndex, screen >= 0 && screen <= Meta.maxScreenIndex else {
            return nil
        }
        return screen
    }

    /// Whether the optional string at `string` is present and an inferred session's name, read in place.
    @inline(__always)
    static func isInferredName(at string: UnsafePointer<String?>) -> Bool {
        guard string.pointee != nil else { return false }
        return string.withMemoryRebound(to: String.self, capacity: 1) { isInferredName($0.pointee) }
    }

    /// Whether `session` is a name the store gives an inferred session: `inferred:` and the digits of a seq.
    ///
    /// Such a name is the store's own, valid only in the store that gave it (another store numbers its
    /// inferred sessions from its own seqs). ``append(_:checkpoint:keepIdentical:)`` takes an event arriving with one (an
    /// export of a store, ingested into another or into the same one) as an event without a session and infers
    /// its session again (rule 10): kept, it would merge with an unrelated session of the same number (two users'
    /// sessions would become one). ``normalized(_:)`` keeps such names: it describes the events
    /// a store holds (its own inferred names included), for in-memory sources and exports.
    /// - Complexity: O(1) for any other id (its length is checked first).
    @inlinable
    public static func isInferredName(_ session: String) -> Bool {
        let utf8 = session.utf8
        // "inferred:" and 1 to 20 digits (a UInt64).
        guard (10...29).contains(utf8.count), utf8.starts(with: "inferred:".utf8) else { return false }
        return utf8.dropFirst(9).allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }

    /// Applies ``normalized(_:)`` in place.
    @inlinable
    package static func normalize(_ event: inout Event) {
        if event.session?.isEmpty == true { event.session = nil }
        if event.profile?.isEmpty == true { event.profile = nil }
        if event.eventID?.isEmpty == true { event.eventID = nil }
        if event.placement?.isEmpty == true { event.placement = nil }
        if event.variation?.isEmpty == true { event.variation = nil }
        if case .analytics(.screenCompleted(let element, let reply)) = event.payload,
            element?.isEmpty == true || reply?.isEmpty == true
        {
            event.payload = .analytics(
                .screenCompleted(
                    elementID: element?.isEmpty == true ? nil : element,
                    reply: reply?.isEmpty == true ? nil : reply))
        }
    }
}

extension Store {
    /// An interned string longer than this (UTF-8 bytes) makes the append loop check its event against the limits of
    /// an NDJSON export (``interchangeLimitError(_:)``): a line over 1 MiB needs a string over 1 MiB / 256 (at most
    /// 256 strings are interned per event besides a multi-select's, whose record is long) or a long record.
    static let longString = 4 << 10

    /// The first string field of `event` longer than ``RecordFormat/maxStringBytes``, a multi-select of more than
    /// ``RecordFormat/maxChoices`` choices, or an event whose NDJSON line could pass 1 MiB: what `append` refuses so
    /// that every stored event can be exported as NDJSON and read back (the reader's default limits). Called only
    /// for events with a long string or a long record (a few in a million), so it may copy the event's strings.
    ///
    /// The line's length is bounded from above, not rendered (the store does not link the JSON writer): each string
    /// as JSON escapes it (6 bytes for a control character without a short escape, 2 for `"`, `\` and the short
    /// escapes), plus 512 bytes for the line's keys and numbers and 64 per choice. An event within 1 MiB by less than
    /// that slack is refused too.
    static func interchangeLimitError(_ event: Event) -> EncodingError? {
        var fields: [(String, String?)] = [
            ("session", event.session), ("profile", event.profile), ("event_id", event.eventID),
            ("placement", event.placement), ("variation", event.variation),
        ]
        if let meta = event.meta { fields += [("onboarding", meta.onboardingID), ("screen_cid", meta.screenClientID)] }
        switch event.payload {
        case .analytics(.screenCompleted(let element, let reply)): fields += [("element", element), ("reply", reply)]
        case .analytics(.unknown(let name)): fields.append(("name", name))
        case .openPaywall(let action), .custom(let action), .close(let action): fields.append(("action", action))
        case .error(let error): fields += [("error domain", error.domain), ("error message", error.message)]
        case .stateUpdated(let update):
            fields.append(("element", update.elementID))
            switch update.value {
            case .select(let choice):
                fields += [("value", choice.value), ("label", choice.label), ("choice id", choice.id)]
            case .multiSelect(let choices):
                if choices.count > RecordFormat.maxChoices { return EncodingError(.tooManyChoices(choices.count)) }
                for choice in choices {
                    fields += [("value", choice.value), ("label", choice.label), ("choice id", choice.id)]
                }
            case .input(.text(let text)), .input(.email(let text)): fields.append(("value", text))
            default: break
            }
        default: break
        }
        var line = 512
        if case .stateUpdated(let update) = event.payload, case .multiSelect(let choices) = update.value {
            line += 64 * choices.count
        }
        for case let (field, value?) in fields {
            if value.utf8.count > RecordFormat.maxStringBytes {
                return EncodingError(.stringTooLong(field: field, bytes: value.utf8.count))
            }
            line += escapedLength(value)
        }
        if line > RecordFormat.maxLineBytes {
            return EncodingError(.lineTooLong(atLeast: line - 512, limit: RecordFormat.maxLineBytes))
        }
        return nil
    }

    /// The bytes of `s` inside a JSON string: control characters, `"` and `\` escaped.
    private static func escapedLength(_ s: String) -> Int {
        var n = 0
        for byte in s.utf8 {
            switch byte {
            case 0x22, 0x5C, 0x08, 0x09, 0x0A, 0x0C, 0x0D: n += 2
            case 0..<0x20: n += 6
            default: n += 1
            }
        }
        return n
    }
}
