import BoardwalkModel

/// What a session's rows say about it, folded from its events in `(time, seq)` order. Memory is proportional
/// to the number of screens and answered elements, not to the number of events.
///
/// A class: filters, breakdowns and the funnel read it through closures, and a struct of a dozen strings and
/// collections was copied (retains and releases of every field) each time one captured it. A summary is used on one
/// thread, and no access to a field overlaps another: the runtime's exclusivity checks are left out (a delivery that
/// reuses one summary spent 12.6 M of its 185 M instructions in them, at 50 000 sessions).
final class SessionSummary {
    @exclusivity(unchecked) var id: String
    @exclusivity(unchecked) var profile: String?
    @exclusivity(unchecked) var onboarding: String?
    @exclusivity(unchecked) var placement: String?
    @exclusivity(unchecked) var variation: String?
    @exclusivity(unchecked) var started = Timestamp(microseconds: 0)
    @exclusivity(unchecked) var ended = Timestamp(microseconds: 0)
    @exclusivity(unchecked) var eventCount = 0
    @exclusivity(unchecked) var furthestScreen: Int?
    @exclusivity(unchecked) var lastScreen: Int?
    @exclusivity(unchecked) var totalScreens: Int?
    @exclusivity(unchecked) var completed = false
    @exclusivity(unchecked) var paywall = false
    @exclusivity(unchecked) var closed = false
    @exclusivity(unchecked) var emailCollected = false
    /// The last terminal event's outcome (rule 8), or nil: abandoned.
    @exclusivity(unchecked) var outcome: Exit?
    /// Last write wins (rule 9): element id → answer.
    @exclusivity(unchecked) var answers: [String: Value] = [:]
    /// Kinds seen, one bit per `EventKind` case (for `did`).
    @exclusivity(unchecked) var kindsSeen: UInt32 = 0
    /// Known analytics names seen, one bit per `AnalyticsName` case.
    @exclusivity(unchecked) var namesSeen: UInt32 = 0
    /// Other analytics names seen, verbatim (rare; kept as a list so a session costs no set).
    @exclusivity(unchecked) var otherNamesSeen: [String] = []
    /// `reachTimes[i]`: when the furthest screen index first became ≥ i (rule 3), in microseconds since the epoch
    /// (`[Int64]` rather than `[Timestamp]`: the standard library's prespecialized array type allocates without a
    /// generic metadata lookup, once per session).
    @exclusivity(unchecked) var reachTimes: [Int64] = []
    /// For a screen funnel (``FoldNeeds/reachTimes``) of a session folded from the store: where the distinct (screen
    /// index, screen client id) pairs of its events are.
    @exclusivity(unchecked) var screenClients: ScreenClients?
    /// The events that match a step of a funnel of custom steps, in `(time, seq)` order, when a session fold
    /// read them for one (``FoldNeeds/stepTests``).
    @exclusivity(unchecked) var stepEvents: [StepEvent] = []

    /// The session's interned id in the store it was folded from (`StoreEventSource.foldSessions`), else nil.
    @exclusivity(unchecked) var storeID: UInt32?

    init(id: String) { self.id = id }

    /// Makes this summary that of a new session, `id`, with nothing folded: what `SessionSummary(id:)` makes, keeping
    /// the collections' buffers. For a delivery that is done with each summary before the next: a new instance per
    /// session cost an allocation, and a release of each of its fields.
    func reset(id: String) {
        self.id = id
        // Only what is set is cleared: each write of a string releases the one it replaces.
        if profile != nil { profile = nil }
        if onboarding != nil { onboarding = nil }
        if placement != nil { placement = nil }
        if variation != nil { variation = nil }
        started = Timestamp(microseconds: 0)
        ended = Timestamp(microseconds: 0)
        eventCount = 0
        furthestScreen = nil
        lastScreen = nil
        totalScreens = nil
        completed = false
        paywall = false
        closed = false
        emailCollected = false
        outcome = nil
        if !answers.isEmpty { answers.removeAll(keepingCapacity: true) }
        kindsSeen = 0
        namesSeen = 0
        if !otherNamesSeen.isEmpty { otherNamesSeen.removeAll(keepingCapacity: true) }
        if !reachTimes.isEmpty { reachTimes = [] }
        if screenClients != nil { screenClients = nil }
        if !stepEvents.isEmpty { stepEvents.removeAll(keepingCapacity: true) }
        storeID = nil
    }

    /// Folds the next event (in `(time, seq)` order) into the summary.
    func add(_ row: some EventRow) {
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
                while reachTimes.count <= screen { reachTimes.append(time.microseconds) }
            }
        }
        let kind = row.kind
        markSeen(kind)
        switch kind {
        case .analytics:
            if let name = row.analyticsName {
                markSeen(name)
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

    /// Records that the session has an event of `kind`.
    func markSeen(_ kind: EventKind) { kindsSeen |= SessionSummary.bit(kind) }

    /// Records that the session has an analytics event named `name`.
    func markSeen(_ name: String) {
        if let known = AnalyticsName(rawValue: name) {
            namesSeen |= SessionSummary.bit(known)
        } else if !otherNamesSeen.contains(name) {
            otherNamesSeen.append(name)
        }
    }

    /// Whether the session has an event whose kind or analytics name is `x` (`did(x)`).
    func didSee(_ x: String) -> Bool {
        if let kind = EventKind(rawValue: x), kindsSeen & SessionSummary.bit(kind) != 0 { return true }
        if let known = AnalyticsName(rawValue: x) { return namesSeen & SessionSummary.bit(known) != 0 }
        return otherNamesSeen.contains(x)
    }

    /// The bit of `kind` in ``kindsSeen``.
    static func bit(_ kind: EventKind) -> UInt32 {
        switch kind {
        case .analytics: 1 << 0
        case .stateUpdated: 1 << 1
        case .openPaywall: 1 << 2
        case .custom: 1 << 3
        case .close: 1 << 4
        case .onboardingLoaded: 1 << 5
        case .error: 1 << 6
        }
    }

    /// The bit of `name` in ``namesSeen``.
    static func bit(_ name: AnalyticsName) -> UInt32 {
        switch name {
        case .onboardingStarted: 1 << 0
        case .screenPresented: 1 << 1
        case .screenCompleted: 1 << 2
        case .secondScreenPresented: 1 << 3
        case .registrationScreenPresented: 1 << 4
        case .productsScreenPresented: 1 << 5
        case .userEmailCollected: 1 << 6
        case .onboardingCompleted: 1 << 7
        }
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
        case .duration: return .duration(elapsed(from: started.microseconds, to: ended.microseconds))
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
        case .did(let x): .bool(didSee(x))
        case .reached(let n): .bool((furthestScreen ?? -1) >= n)
        default: .null
        }
    }
}

/// `end - start` in microseconds as a `Double`: exact when the difference fits an `Int64`, else computed in
/// `Double` (times the store takes outside `Timestamp.range` can overflow it).
@inline(__always)
func elapsed(from start: Int64, to end: Int64) -> Double {
    let (difference, overflow) = end.subtractingReportingOverflow(start)
    return overflow ? Double(end) - Double(start) : Double(difference)
}
