import BoardwalkModel

/// What a session's rows say about it, folded from its events in `(time, seq)` order. Memory is proportional
/// to the number of screens and answered elements, not to the number of events.
struct SessionSummary {
    var id: String
    var profile: String?
    var onboarding: String?
    var placement: String?
    var variation: String?
    var started = Timestamp(microseconds: 0)
    var ended = Timestamp(microseconds: 0)
    var eventCount = 0
    var furthestScreen: Int?
    var lastScreen: Int?
    var totalScreens: Int?
    var completed = false
    var paywall = false
    var closed = false
    var emailCollected = false
    /// The last terminal event's outcome (rule 8), or nil: abandoned.
    var outcome: Exit?
    /// Last write wins (rule 9): element id → answer.
    var answers: [String: Value] = [:]
    /// Kinds and analytics names seen.
    var seen: Set<String> = []
    /// `reachTimes[i]`: when the furthest screen index first became ≥ i (rule 3).
    var reachTimes: [Timestamp] = []

    init(id: String) { self.id = id }

    /// Folds the next event (in `(time, seq)` order) into the summary.
    mutating func add(_ row: some EventRow) {
        let time = row.time
        if eventCount == 0 { started = time }
        ended = time
        eventCount += 1
        if profile == nil, case .string(let s) = row.value(.profile) { profile = s }
        if placement == nil, case .string(let s) = row.value(.placement) { placement = s }
        if variation == nil, case .string(let s) = row.value(.variation) { variation = s }
        if let screen = row.screenIndex {
            if onboarding == nil, case .string(let s) = row.value(.onboarding) { onboarding = s }
            lastScreen = screen
            if case .integer(let t) = row.value(.totalScreens) { totalScreens = max(totalScreens ?? Int(t), Int(t)) }
            if furthestScreen == nil || screen > furthestScreen! {
                furthestScreen = screen
                // Screens are at most Meta.maxScreenIndex, so this stays bounded.
                while reachTimes.count <= screen { reachTimes.append(time) }
            }
        }
        let kind = row.kind
        seen.insert(kind.rawValue)
        switch kind {
        case .analytics:
            if let name = row.analyticsName {
                seen.insert(name)
                if name == AnalyticsName.onboardingCompleted.rawValue { completed = true }
                if name == AnalyticsName.userEmailCollected.rawValue { emailCollected = true }
            }
        case .stateUpdated:
            if case .string(let element) = row.value(.element) { answers[element] = row.value(.value) }
        case .openPaywall: paywall = true
        case .close: closed = true
        default: break
        }
        if let o = row.outcome { outcome = o }
    }

    func value(_ field: SessionField) -> Value {
        func text(_ s: String?) -> Value { s.map(Value.string) ?? .null }
        func int(_ i: Int?) -> Value { i.map { .integer(Int64($0)) } ?? .null }
        switch field {
        case .session: return .string(id)
        case .profile: return text(profile)
        case .onboarding: return text(onboarding)
        case .placement: return text(placement)
        case .variation: return text(variation)
        case .started: return .time(started)
        case .ended: return .time(ended)
        case .duration: return .duration(Double(ended.microseconds - started.microseconds))
        case .events: return .integer(Int64(eventCount))
        case .furthestScreen: return int(furthestScreen)
        case .lastScreen: return int(lastScreen)
        case .totalScreens: return int(totalScreens)
        case .completed: return .bool(completed)
        case .paywall: return .bool(paywall)
        case .closed: return .bool(closed)
        case .emailCollected: return .bool(emailCollected)
        case .exit: return .string((outcome ?? .abandoned).rawValue)
        }
    }

    /// Values of session leaves: fields and the session functions.
    func leaf(_ bound: Bound) -> Value {
        switch bound {
        case .session(let f): value(f)
        case .answer(let element): answers[element] ?? .null
        case .did(let x): .bool(seen.contains(x))
        case .reached(let n): .bool((furthestScreen ?? -1) >= n)
        default: .null
        }
    }
}
