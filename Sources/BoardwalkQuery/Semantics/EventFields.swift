import BoardwalkModel

/// Dwell time of one event (semantics rule 7).
enum Dwell: Hashable, Sendable {
    /// Not a `screen_presented` event, or no screen index.
    case none
    /// The session ends (without a terminal event) before the screen is left.
    case censored
    /// Microseconds from the presentation to the session's next event at another screen index or its next
    /// terminal event.
    case value(Int64)
}

extension Event {
    /// The `name` field: the analytics name, or the kind's wire name for other kinds.
    var queryName: String {
        if case .analytics(let a) = payload { return a.name }
        return kind.rawValue
    }

    /// The value of an event field. Empty `element_id` and `reply` are absent (rule 11).
    func value(_ field: EventField, seq: UInt64, dwell: Dwell) -> Value {
        func text(_ s: String?) -> Value { s.map(Value.string) ?? .null }
        func nonEmpty(_ s: String?) -> Value { (s?.isEmpty ?? true) ? .null : .string(s!) }
        switch field {
        case .time: return .time(time)
        case .seq: return .integer(Int64(bitPattern: seq))
        case .kind: return .string(kind.rawValue)
        case .name: return .string(queryName)
        case .onboarding: return text(meta?.onboardingID)
        case .screen: return meta.map { .integer(Int64($0.screenIndex)) } ?? .null
        case .screenCID: return text(meta?.screenClientID)
        case .totalScreens: return meta.map { .integer(Int64($0.totalScreens)) } ?? .null
        case .session: return text(session)
        case .profile: return text(profile)
        case .action: return text(payload.actionID)
        case .element:
            switch payload {
            case .analytics(.screenCompleted(let element, _)): return nonEmpty(element)
            case .stateUpdated(let update): return nonEmpty(update.elementID)
            default: return .null
            }
        case .elementType:
            if case .stateUpdated(let update) = payload { return .string(update.value.elementType.rawValue) }
            return .null
        case .reply:
            if case .analytics(.screenCompleted(_, let reply)) = payload { return nonEmpty(reply) }
            return .null
        case .value:
            if case .stateUpdated(let update) = payload { return Value.answer(update.value) }
            return .null
        case .label:
            if case .stateUpdated(let update) = payload { return Value.label(update.value) }
            return .null
        case .option:
            if case .stateUpdated(let update) = payload { return Value.option(update.value) }
            return .null
        case .inputType:
            if case .stateUpdated(let update) = payload, case .input(let input) = update.value {
                return .string(input.inputType.rawValue)
            }
            return .null
        case .errorDomain:
            if case .error(let error) = payload { return .string(error.domain) }
            return .null
        case .errorCode:
            if case .error(let error) = payload { return .integer(Int64(error.code)) }
            return .null
        case .errorMessage:
            if case .error(let error) = payload { return .string(error.message) }
            return .null
        case .placement: return text(placement)
        case .variation: return text(variation)
        case .eventID: return text(eventID)
        case .dwell:
            if case .value(let v) = dwell { return .duration(Double(v)) }
            return .null
        }
    }
}

/// Dwell times of a session's events, which must be in `(time, seq)` order.
///
/// One backward pass: for each position it knows the nearest following terminal event, the nearest
/// following event with a screen index, and the nearest following one whose index differs from that one's.
/// - Complexity: O(n).
func dwellTimes<R: EventRow>(_ rows: [R]) -> [Dwell] {
    var result = [Dwell](repeating: .none, count: rows.count)
    var nextTerminal: Int?
    var nextScreen: (index: Int, screen: Int)?
    var nextOtherScreen: Int?  // nearest following position whose screen differs from nextScreen's
    for i in stride(from: rows.count - 1, through: 0, by: -1) {
        let row = rows[i]
        let screen = row.screenIndex
        if let screen, row.kind == .analytics, row.analyticsName == AnalyticsName.screenPresented.rawValue {
            var end: Int?
            if let next = nextScreen { end = next.screen != screen ? next.index : nextOtherScreen }
            if let t = nextTerminal, end == nil || t < end! { end = t }
            if let end {
                result[i] = .value(rows[end].time.microseconds &- row.time.microseconds)
            } else {
                result[i] = .censored
            }
        }
        if row.outcome != nil { nextTerminal = i }
        if let screen {
            if let next = nextScreen, next.screen != screen { nextOtherScreen = next.index }
            nextScreen = (i, screen)
        }
    }
    return result
}
