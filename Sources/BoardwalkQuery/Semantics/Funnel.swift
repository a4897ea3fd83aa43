import BoardwalkCodec
import BoardwalkModel

/// How far one session got through a custom-step funnel (semantics rule 4).
struct FunnelProgress {
    /// Steps reached by the best chain, 0 when step 1 never happened.
    var level: Int
    /// Times of the chain's step events (`level` entries); in `any` mode, when steps 1…k had all happened.
    var times: [Timestamp]
    /// Position of the chain's step-1 event, for breakdowns (rule 12).
    var firstStep: Int?
}

/// Matches one funnel against sessions' events; the executor's implementation of rule 4.
///
/// It reads a session's events by position: their times, whether each matches a step, and (strict mode) whether
/// each is ignored. A session's rows give all three; a session fold gives its events that match a step with
/// their step masks (``StepEvent``), which is all the `ordered` and `any` modes look at (an event that matches no
/// step never starts, extends nor anchors a chain). `strict` needs every event.
struct FunnelMatcher {
    let funnel: BoundFunnel
    let now: Timestamp
    /// Each step's predicate, compiled once: a session's events test them at every candidate event, where the
    /// tree walk cost a strict funnel of the busiest onboarding a sixth of its instructions.
    private let predicates: [CompiledBound?]
    /// What `ignoring` names, as codes: bit `kind.code` for an event kind, bit ``nameBits`` `+ name.code` for a known
    /// analytics name (a name outside the known ones is matched by its text).
    let ignoredCodes: UInt64
    /// Where the analytics names' bits start in ``ignoredCodes`` (after the kinds').
    static let nameBits = 8

    init(funnel: BoundFunnel, now: Timestamp) {
        self.funnel = funnel
        self.now = now
        predicates = funnel.steps.map { step in step.predicate.map { CompiledBound($0, now: now) } }
        var ignoredCodes: UInt64 = 0
        for name in funnel.ignoring {
            if let kind = EventKind(rawValue: name) { ignoredCodes |= 1 << UInt64(kind.code) }
            if let known = AnalyticsName(rawValue: name) {
                ignoredCodes |= 1 << UInt64(FunnelMatcher.nameBits + Int(known.code))
            }
        }
        self.ignoredCodes = ignoredCodes
    }

    /// The values of breakdown columns `by` on `row` (rule 12: a funnel's on its chain's step-1 event, a screen
    /// funnel's on the session's first event with a screen index); session fields are absent there.
    /// The breakdown keys on `row`; a key that is a property of the session (`answer("goal")`, `session.variation`)
    /// is read from `session`.
    static func values(
        of by: [BoundColumn], on row: some EventRow, session: SessionSummary? = nil, now: Timestamp
    ) -> [Value] {
        by.map { column in
            column.bound.evaluate(now: now) { b in
                switch b {
                case .event(let f): return row.value(f)
                case .ofSession(let property): return session?.leaf(property) ?? .null
                default: return .null
                }
            }
        }
    }

    /// Whether `row` is step `k`.
    func matches(_ row: some EventRow, step k: Int) -> Bool {
        row.isEvent(funnel.steps[k].event) && satisfiesPredicate(row, step: k)
    }

    /// Whether `row`, an event of step `k`'s kind or name, satisfies the step's predicate (true without one).
    @inline(__always)
    func satisfiesPredicate(_ row: some EventRow, step k: Int) -> Bool {
        satisfiesPredicate(step: k) { leaf in
            if case .event(let f) = leaf { return row.value(f) }
            return .null
        }
    }

    /// Whether the event whose fields `leaf` reads satisfies step `k`'s predicate (true without one).
    @inline(__always)
    func satisfiesPredicate(step k: Int, _ leaf: CompiledBound.Leaf) -> Bool {
        predicates[k]?.isTrue(leaf) ?? true
    }

    /// Whether a strict funnel's `ignoring` names `row`'s kind or analytics name (``EventRow/isEvent(_:)``).
    @inline(__always)
    func ignores(_ row: some EventRow) -> Bool {
        if ignoredCodes & 1 << UInt64(row.kind.code) != 0 { return true }
        guard !funnel.ignoring.isEmpty, let name = row.analyticsName else { return false }
        return funnel.ignoring.contains(name)
    }

    /// The best chain over a session's events, in `(time, seq)` order.
    /// - Complexity: O(n · s) for n events and s step-1 candidates; the scan from a start stops at the window.
    func progress<R: EventRow>(_ events: [R]) -> FunnelProgress {
        progress(
            count: events.count, time: { events[$0].time.microseconds }, matches: { matches(events[$0], step: $1) },
            ignored: { ignores(events[$0]) })
    }

    /// The best chain over a session's step events (``StepEvent``), in `(time, seq)` order: the same as
    /// ``progress(_:)-(([R]))`` over all the session's events. In `ordered` and `any` modes they are the events that
    /// match a step; in `strict` mode also every event the funnel does not ignore (a breaker, mask 0).
    func progress(_ events: [StepEvent]) -> FunnelProgress {
        progress(
            count: events.count, time: { events[$0].at.time }, matches: { events[$0].mask & (1 << UInt64($1)) != 0 },
            ignored: { events[$0].ignored })
    }

    private func progress(count: Int, time: (Int) -> Int64, matches: (Int, Int) -> Bool, ignored: (Int) -> Bool)
        -> FunnelProgress
    {
        let n = funnel.steps.count
        let window = funnel.within ?? Int64.max
        var best = FunnelProgress(level: 0, times: [], firstStep: nil)
        switch funnel.mode {
        case .ordered:
            // Greedy from each start: with the window measured from step 1 and nothing required between steps,
            // taking the earliest match of each next step is optimal, and gives the earliest chain.
            for start in 0..<count where matches(start, 0) {
                let t1 = time(start)
                var times = [Timestamp(microseconds: t1)]
                var j = start + 1
                while times.count < n, j < count {
                    let t = time(j)
                    if t &- t1 > window { break }
                    if matches(j, times.count) { times.append(Timestamp(microseconds: t)) }
                    j += 1
                }
                if times.count > best.level {
                    best = FunnelProgress(level: times.count, times: times, firstStep: start)
                    if best.level == n { break }
                }
            }
        case .strict:
            for start in 0..<count where matches(start, 0) {
                let chain =
                    [start]
                    + strictChain(
                        count, time, matches, ignored, after: start, step: 1, start: time(start),
                        window: window)
                if chain.count > best.level {
                    best = FunnelProgress(
                        level: chain.count, times: chain.map { Timestamp(microseconds: time($0)) },
                        firstStep: start)
                    if best.level == n { break }
                }
            }
        case .any:
            // Each event matching some step anchors a window [t, t + within]; the level is the longest prefix of
            // steps all matched by events inside it.
            var matched = [[Bool]]()
            matched.reserveCapacity(count)
            for e in 0..<count { matched.append((0..<n).map { matches(e, $0) }) }
            for anchor in 0..<count where matched[anchor].contains(true) {
                let t = time(anchor)
                // The first time each step happens inside the window.
                var first = [Int64?](repeating: nil, count: n)
                for j in 0..<count {
                    let d = time(j) &- t
                    if d < 0 { continue }
                    if d > window { break }
                    for k in 0..<n where matched[j][k] && first[k] == nil { first[k] = time(j) }
                }
                let level = first.firstIndex(of: nil) ?? n
                if level > best.level {
                    // Step k is done once steps 1…k have all happened: the latest of their first times.
                    var times: [Timestamp] = []
                    var done = Int64.min
                    for k in 0..<level {
                        done = max(done, first[k]!)
                        times.append(Timestamp(microseconds: done))
                    }
                    best = FunnelProgress(
                        level: level, times: times, firstStep: firstMatch(count, time, matched, anchor, window))
                    if level == n { break }
                }
            }
        }
        return best
    }

    /// The longest (then earliest) continuation of a strict chain from position `after` at step `k`: only
    /// ignored events may lie between two steps, so the candidates for the next step are the following run of
    /// ignored events and the first event that is not ignored.
    private func strictChain(
        _ count: Int, _ time: (Int) -> Int64, _ matches: (Int, Int) -> Bool, _ ignored: (Int) -> Bool,
        after: Int, step k: Int, start t1: Int64, window: Int64
    ) -> [Int] {
        let n = funnel.steps.count
        guard k < n else { return [] }
        var best: [Int] = []
        var j = after + 1
        while j < count {
            if time(j) &- t1 > window { break }
            if matches(j, k) {
                let chain =
                    [j] + strictChain(count, time, matches, ignored, after: j, step: k + 1, start: t1, window: window)
                if chain.count > best.count {
                    best = chain
                    if best.count == n - k { break }
                }
            }
            if !ignored(j) { break }
            j += 1
        }
        return best
    }

    /// In `any` mode, the breakdown value comes from the window's first event that matches step 1.
    private func firstMatch(_ count: Int, _ time: (Int) -> Int64, _ matched: [[Bool]], _ anchor: Int, _ window: Int64)
        -> Int?
    {
        let t = time(anchor)
        for j in 0..<count {
            let d = time(j) &- t
            if d >= 0, d <= window, matched[j][0] { return j }
        }
        return nil
    }
}
