import BoardwalkCodec
import BoardwalkModel
import BoardwalkStore

/// An event of a session that matches one or more steps of a funnel of custom steps, as a session fold keeps it
/// (``FoldNeeds/stepTests``): its place in `(time, seq)` order, the steps it matches, and the funnel's breakdown
/// values on it (rule 12 takes them from the chain's step-1 event).
///
/// In the `ordered` and `any` modes an event that matches no step never starts, extends nor anchors a chain, so
/// these are all a session's chain depends on (``FunnelMatcher/progress(_:)-(([StepEvent]))``): a fold keeps
/// them instead of the session's events, and the store reads a funnel by one scan of its key ranges rather than
/// a session-index read per session.
struct StepEvent {
    /// The most steps a mask holds; a funnel of more steps reads sessions as rows.
    static let maxSteps = 64

    var at: OrderKey
    /// Bit `k`: the event is step `k`.
    var mask: UInt64
    /// The funnel's `by` columns on this event; empty without `by`.
    var keys: [Value]
}

/// A funnel's steps, prepared to test a stored event's fields: which steps name its kind or analytics name (read
/// without decoding the record), then the predicates of those on the full event.
///
/// A class: the fold reads it on every event, and a struct of arrays would be copied (retained and released)
/// out of ``FoldNeeds`` each time.
final class StepTests {
    let matcher: FunnelMatcher
    /// Per step: the event kind it names, if its event is a kind's wire name.
    private let kinds: [EventKind?]
    /// Per step: the known analytics name it names, if any.
    private let names: [AnalyticsName?]
    /// Steps whose event is neither a kind nor a known analytics name: an analytics name outside the known list,
    /// compared with the text of an event's unknown name.
    private let others: [(step: Int, name: String)]
    /// Bit `k`: step `k` has a predicate, which needs the whole event.
    let predicated: UInt64

    init(_ matcher: FunnelMatcher) {
        self.matcher = matcher
        let events = matcher.funnel.steps.map(\.event)
        kinds = events.map { EventKind(rawValue: $0) }
        names = events.map { AnalyticsName(rawValue: $0) }
        var others: [(Int, String)] = []
        for (k, event) in events.enumerated() where EventKind(rawValue: event) == nil && AnalyticsName(rawValue: event) == nil {
            others.append((k, event))
        }
        self.others = others
        var predicated: UInt64 = 0
        for (k, step) in matcher.funnel.steps.enumerated() where step.predicate != nil { predicated |= 1 << UInt64(k) }
        self.predicated = predicated
    }

    var count: Int { kinds.count }

    /// The steps whose event the event of `kind` and analytics `name` is (`EventRow.isEvent`), before their
    /// predicates.
    @inline(__always)
    func candidates(kind: EventKind, name: AnalyticsNameRef?, strings: StringCache) -> UInt64 {
        var mask: UInt64 = 0
        for k in 0..<kinds.count where kinds[k] == kind { mask |= 1 << UInt64(k) }
        guard kind == .analytics, let name else { return mask }
        switch name {
        case .known(let known):
            for k in 0..<names.count where names[k] == known { mask |= 1 << UInt64(k) }
        case .unknown(let id):
            if !others.isEmpty, let text = strings.string(id) {
                for (k, event) in others where event == text { mask |= 1 << UInt64(k) }
            }
        }
        return mask
    }
}

extension SessionFold {
    /// Keeps the event at `at` if it matches a step of `tests`; `full` decodes the whole event, which only steps
    /// with a predicate and the funnel's breakdown need.
    @inline(__always)
    mutating func noteSteps<Fields: FoldFields, E: Error>(_ r: Fields, at: OrderKey, tests: StepTests, full: () throws(E) -> EventView,
                                                         strings: StringCache) throws(E) {
        let candidates = tests.candidates(kind: r.kind, name: r.analyticsName, strings: strings)
        guard candidates != 0 else { return }
        let by = tests.matcher.funnel.by
        if candidates & tests.predicated == 0, by.isEmpty {
            stepEvents.append(StepEvent(at: at, mask: candidates, keys: []))
            return
        }
        let event = StoreEventRow(view: try full(), strings: strings)
        var mask = candidates & ~tests.predicated
        for k in 0..<tests.count where candidates & tests.predicated & (1 << UInt64(k)) != 0 && tests.matcher.matches(event, step: k) {
            mask |= 1 << UInt64(k)
        }
        guard mask != 0 else { return }
        let now = tests.matcher.now
        let keys = by.map { column in
            column.bound.evaluate(now: now) { b in
                if case .event(let f) = b { return event.value(f) }
                return .null
            }
        }
        stepEvents.append(StepEvent(at: at, mask: mask, keys: keys))
    }
}
