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
/// a session-index read per session. In `strict` mode an event that matches no step breaks a chain unless the
/// funnel ignores it, so the fold also keeps every such event, as a breaker (mask 0), and drops only the ignored
/// ones; a step event of an ignored kind is kept with ``ignored`` set (a chain may pass over it).
struct StepEvent {
    /// The most steps a mask holds; a funnel of more steps reads sessions as rows.
    static let maxSteps = 64

    var at: OrderKey
    /// Bit `k`: the event is step `k`; 0 for a breaker of a strict funnel.
    var mask: UInt64
    /// A strict funnel's `ignoring` names the event: it never breaks a chain.
    var ignored = false
    /// The funnel's `by` columns on this event when it is a step-1 event (only a chain's step-1 event gives a
    /// breakdown its values); empty otherwise and without `by`.
    var keys: [Value]
}

/// A funnel's steps, prepared to test a stored event's fields: which steps name its kind or analytics name (read
/// without decoding the record), then the predicates of those on the full event.
///
/// A class: the fold reads it on every event, and a struct of arrays would be copied (retained and released)
/// out of ``FoldNeeds`` each time.
final class StepTests {
    let matcher: FunnelMatcher
    /// The steps each event kind is (entry `kind.code`) and each known analytics name is (entry `8 + name.code`), as
    /// bit masks: one load per event instead of a comparison per step (callgrind, a 3-step funnel of the busiest
    /// onboarding: 130 instructions per event for the comparisons).
    private let masks: UnsafeMutablePointer<UInt64>
    private static let nameMasks = 8
    /// Per step: its event, compared with the text of an event's analytics name outside the known list (an
    /// event appended through the library may spell a known name that way; `EventRow.isEvent` compares text).
    private let events: [String]
    /// Bit `k`: step `k` has a predicate.
    let predicated: UInt64
    /// Bit `k`: step `k`'s predicate reads only fields the fold has without decoding the record
    /// (``FoldFields/leanValue(_:seq:strings:)``), as `screen_presented(screen == 1)` does: tested on those.
    /// Decoding each candidate's record for it cost a strict funnel of the busiest onboarding a tenth of its
    /// instructions.
    let leanPredicated: UInt64
    /// Per step: its predicate when it compares `screen` or `total_screens` with an integer
    /// (``ScreenComparison``), tested on the fold's integers instead of through values: the funnels' commonest
    /// predicate (`screen_presented(screen == 1)`) cost a strict funnel of the busiest onboarding at 200 000 sessions
    /// about 300 M of its 3.19 G instructions through values.
    let screenTests: [ScreenComparison?]
    /// The fields ``FoldFields/leanValue(_:seq:strings:)`` reads.
    static let leanFields: Set<EventField> = [.time, .seq, .kind, .name, .onboarding, .screen, .totalScreens]
    /// A strict funnel: events that match no step are kept as breakers unless ignored.
    let strict: Bool
    /// A strict funnel's `ignoring` as codes (``FunnelMatcher/ignoredCodes``): a set lookup of the kind's and name's
    /// text cost every event of a strict funnel ignoring three names about 240 instructions.
    private let ignoredCodes: UInt64
    /// A strict funnel's `ignoring` names (event kinds or analytics names), for a name outside the known ones.
    private let ignoring: Set<String>
    /// How many step events the folds of a scan may keep before the query reads sessions as rows instead
    /// (``limit(sessions:events:)``): they keep them until the scan ends, so without a bound a step that most events
    /// match (`analytics`) would hold memory in proportion to the events of the scope.
    @exclusivity(unchecked) private(set) var budget = Int.max
    /// Step events kept so far, by every fold of the scan.
    @exclusivity(unchecked) var kept = 0

    init(_ matcher: FunnelMatcher) {
        self.matcher = matcher
        events = matcher.funnel.steps.map(\.event)
        masks = .allocate(capacity: 2 * StepTests.nameMasks)
        masks.initialize(repeating: 0, count: 2 * StepTests.nameMasks)
        for (k, event) in events.enumerated() {
            if let kind = EventKind(rawValue: event) { masks[Int(kind.code)] |= 1 << UInt64(k) }
            if let name = AnalyticsName(rawValue: event) {
                masks[StepTests.nameMasks + Int(name.code)] |= 1 << UInt64(k)
            }
        }
        var predicated: UInt64 = 0, leanPredicated: UInt64 = 0
        for (k, step) in matcher.funnel.steps.enumerated() {
            guard let predicate = step.predicate else { continue }
            predicated |= 1 << UInt64(k)
            let readsRecord = predicate.contains { leaf in
                if case .event(let field) = leaf { !StepTests.leanFields.contains(field) } else { false }
            }
            if !readsRecord { leanPredicated |= 1 << UInt64(k) }
        }
        self.predicated = predicated
        self.leanPredicated = leanPredicated
        screenTests = matcher.funnel.steps.map { step in step.predicate.flatMap(ScreenComparison.init) }
        strict = matcher.funnel.mode == .strict
        ignoring = matcher.funnel.ignoring
        ignoredCodes = matcher.ignoredCodes
    }

    /// Whether a strict funnel ignores the event of `kind` and analytics `name` (`EventRow.isEvent`).
    @inline(__always)
    func ignores(kind: EventKind, name: AnalyticsNameRef?, strings: SnapshotStrings) -> Bool {
        if ignoring.isEmpty { return false }
        if ignoredCodes & 1 << UInt64(kind.code) != 0 { return true }
        guard kind == .analytics, let name else { return false }
        switch name {
        case .known(let known): return ignoredCodes & 1 << UInt64(FunnelMatcher.nameBits + Int(known.code)) != 0
        case .unknown(let id): return strings.string(id).map { ignoring.contains($0) } ?? false
        }
    }

    /// Starts a scan of `sessions` sessions and about `events` events: its folds may keep 8 step events per
    /// session, plus 1 M (about 40 bytes each), before the scan stops (``overBudget``). A strict funnel keeps
    /// nearly every event (breakers): when `events` already exceeds the budget, it is over budget from the start,
    /// and the caller reads sessions as rows without scanning first.
    func limit(sessions: Int, events: Int) {
        budget = StepTests.budgetOverride ?? 8 * max(sessions, 0) + 1 << 20
        kept = strict && events > budget ? budget + 1 : 0
    }

    /// The step events this scan may still keep before it is over budget.
    var remaining: Int { budget == .max ? .max : max(budget - kept, 0) }

    /// Step tests for a thread that folds parts of the same scan: the same steps, what is left of this scan's budget,
    /// none kept yet. ``absorb(_:)`` adds what the thread kept back.
    func share() -> StepTests {
        // A matcher of its own, its predicates compiled again: calling closures two threads share retains and
        // releases their contexts from both, one cache line written by turns.
        let share = StepTests(FunnelMatcher(funnel: matcher.funnel, now: matcher.now))
        share.budget = remaining
        return share
    }

    /// Adds the step events a ``share()`` kept; over budget when the share was, or when they pass the budget.
    func absorb(_ share: StepTests) {
        kept = share.overBudget ? max(kept, budget) + 1 : kept + share.kept
    }

    /// A budget for tests (0: every scan that keeps a step event stops, and the query reads sessions as rows).
    @TaskLocal static var budgetOverride: Int?

    /// Whether the folds kept more step events than ``budget``: the scan stops, and the query reads sessions
    /// as rows.
    var overBudget: Bool { kept > budget }

    deinit { masks.deallocate() }

    var count: Int { events.count }

    /// The steps whose event the event of `kind` and analytics `name` is (`EventRow.isEvent`), before their
    /// predicates.
    @inline(__always)
    func candidates(kind: EventKind, name: AnalyticsNameRef?, strings: SnapshotStrings) -> UInt64 {
        var mask = masks[Int(kind.code)]
        guard kind == .analytics, let name else { return mask }
        switch name {
        case .known(let known):
            mask |= masks[StepTests.nameMasks + Int(known.code)]
        case .unknown(let id):
            if let text = strings.string(id) {
                for k in 0..<events.count where events[k] == text { mask |= 1 << UInt64(k) }
            }
        }
        return mask
    }
}

extension SessionFold {
    /// Keeps the event at `at` if it matches a step of `tests`; `full` decodes the whole event, which only steps
    /// with a predicate and the funnel's breakdown need.
    @inline(__always)
    mutating func noteSteps<Fields: FoldFields, E: Error>(
        _ r: Fields, at: OrderKey, tests: StepTests, full: () throws(E) -> EventView,
        strings: SnapshotStrings
    ) throws(E) {
        let candidates = tests.candidates(kind: r.kind, name: r.analyticsName, strings: strings)
        let ignored = tests.strict && tests.ignores(kind: r.kind, name: r.analyticsName, strings: strings)
        guard candidates != 0 else {
            // Strict: an event of no step breaks a chain, unless ignored.
            if tests.strict && !ignored { keep(StepEvent(at: at, mask: 0, ignored: false, keys: []), tests) }
            return
        }
        let by = tests.matcher.funnel.by
        // Only a step-1 event gives a breakdown its values (rule 12): other step events need the whole event only
        // for their predicates.
        let wantsKeys = !by.isEmpty && candidates & 1 != 0
        if candidates & tests.predicated == 0, !wantsKeys {
            keep(StepEvent(at: at, mask: candidates, ignored: ignored, keys: []), tests)
            return
        }
        // Tested on the fold's fields alone. One loop over both kinds of test, with the decoded event optional,
        // cost this strict funnel ignoring SDK events 6 % more instructions (755 M -> 805 M).
        if candidates & tests.predicated & ~tests.leanPredicated == 0, !wantsKeys {
            var mask = candidates & ~tests.predicated
            for k in 0..<tests.count where candidates & tests.predicated & (1 << UInt64(k)) != 0 {
                let satisfied =
                    tests.screenTests[k]?.holds(r)
                    ?? tests.matcher.satisfiesPredicate(step: k) { leaf in
                        if case .event(let field) = leaf { return r.leanValue(field, seq: at.seq, strings: strings) }
                        return .null
                    }
                if satisfied { mask |= 1 << UInt64(k) }
            }
            if mask != 0 {
                keep(StepEvent(at: at, mask: mask, ignored: ignored, keys: []), tests)
            } else if tests.strict && !ignored {
                keep(StepEvent(at: at, mask: 0, ignored: false, keys: []), tests)
            }
            return
        }
        let event = StoreEventRow(view: try full(), strings: strings)
        var mask = candidates & ~tests.predicated
        for k in 0..<tests.count
        where candidates & tests.predicated & (1 << UInt64(k)) != 0 && tests.matcher.satisfiesPredicate(event, step: k)
        {
            mask |= 1 << UInt64(k)
        }
        guard mask != 0 else {
            if tests.strict && !ignored { keep(StepEvent(at: at, mask: 0, ignored: false, keys: []), tests) }
            return
        }
        let keys = mask & 1 != 0 ? FunnelMatcher.values(of: by, on: event, now: tests.matcher.now) : []
        keep(StepEvent(at: at, mask: mask, ignored: ignored, keys: keys), tests)
    }

    @inline(__always)
    private mutating func keep(_ event: StepEvent, _ tests: StepTests) {
        stepEvents.append(event)
        tests.kept += 1
    }
}

extension FoldFields {
    /// The value of `field` (one of ``StepTests/leanFields``) as ``StoreEventRow/value(_:)`` gives it on the same event, whose
    /// arrival number is `seq`, from the fields a fold reads without decoding the record; absent for any other field.
    func leanValue(_ field: EventField, seq: UInt64, strings: SnapshotStrings) -> Value {
        func text(_ id: StringID?) -> Value {
            guard let id, let s = strings.string(id) else { return .null }
            return .string(s)
        }
        switch field {
        case .time: return .time(time)
        case .seq: return .integer(Int64(bitPattern: seq))
        case .kind: return .string(kind.rawValue)
        case .name:
            switch analyticsName {
            case .known(let name)?: return .string(name.rawValue)
            case .unknown(let id)?: return text(id)
            case nil: return .string(kind.rawValue)
            }
        case .onboarding: return text(onboarding)
        case .screen: return screenIndex.map { .integer(Int64($0)) } ?? .null
        case .totalScreens: return totalScreens.map { .integer(Int64($0)) } ?? .null
        default: return .null
        }
    }
}

/// A step's predicate that compares a screen field of the event with an integer (`screen == 1`, `2 <= total_screens`),
/// tested on the fold's fields as ``Value/compare(_:_:_:)`` tests the same values: false when the field is absent.
struct ScreenComparison {
    private enum Field { case screen, totalScreens }
    private let field: Field
    /// The comparison with the field on the left.
    private let op: BinaryOperator
    /// Compared as numbers, as ``Value/queryEqual(_:_:)`` and ``Value/queryLess(_:_:)`` compare integers.
    private let value: Double

    /// Nil unless `predicate` is such a comparison.
    init?(_ predicate: Bound) {
        guard case .compare(let op, let a, let b) = predicate, op.isComparison else { return nil }
        func field(_ bound: Bound) -> Field? {
            switch bound {
            case .event(.screen): .screen
            case .event(.totalScreens): .totalScreens
            default: nil
            }
        }
        func integer(_ bound: Bound) -> Double? {
            if case .literal(.integer(let n)) = bound { Double(n) } else { nil }
        }
        if let f = field(a), let n = integer(b) {
            (self.field, self.op, value) = (f, op, n)
        } else if let f = field(b), let n = integer(a) {
            // `n < screen` is `screen > n`.
            (self.field, self.op, value) = (f, op.flipped, n)
        } else {
            return nil
        }
    }

    /// Whether the event whose leading fields are `r` satisfies the comparison.
    @inline(__always)
    func holds(_ r: some FoldFields) -> Bool {
        guard let x = field == .screen ? r.screenIndex : r.totalScreens else { return false }
        let v = Double(x)
        switch op {
        case .equal: return v == value
        case .notEqual: return v != value
        case .less: return v < value
        case .greater: return v > value
        case .lessEqual: return v <= value
        case .greaterEqual: return v >= value
        default: return false
        }
    }
}
