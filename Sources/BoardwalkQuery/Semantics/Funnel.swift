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
struct FunnelMatcher {
    let funnel: BoundFunnel
    let now: Timestamp

    /// Whether `row` is step `k`.
    func matches(_ row: some EventRow, step k: Int) -> Bool {
        let step = funnel.steps[k]
        guard row.isEvent(step.event) else { return false }
        guard let predicate = step.predicate else { return true }
        return predicate.evaluate(now: now) { leaf in
            if case .event(let f) = leaf { return row.value(f) }
            return .null
        }.isTrue
    }

    /// The best chain over a session's events, in `(time, seq)` order.
    /// - Complexity: O(n · s) for n events and s step-1 candidates; the scan from a start stops at the window.
    func progress<R: EventRow>(_ events: [R]) -> FunnelProgress {
        let n = funnel.steps.count
        let window = funnel.within ?? Int64.max
        var best = FunnelProgress(level: 0, times: [], firstStep: nil)
        switch funnel.mode {
        case .ordered:
            // Greedy from each start: with the window measured from step 1 and nothing required between steps,
            // taking the earliest match of each next step is optimal, and gives the earliest chain.
            for start in events.indices where matches(events[start], step: 0) {
                let t1 = events[start].time.microseconds
                var times = [events[start].time]
                var j = start + 1
                while times.count < n, j < events.count {
                    let e = events[j]
                    if e.time.microseconds &- t1 > window { break }
                    if matches(e, step: times.count) { times.append(e.time) }
                    j += 1
                }
                if times.count > best.level {
                    best = FunnelProgress(level: times.count, times: times, firstStep: start)
                    if best.level == n { break }
                }
            }
        case .strict:
            for start in events.indices where matches(events[start], step: 0) {
                let chain = [start] + strictChain(events, after: start, step: 1, start: events[start].time.microseconds,
                                                  window: window)
                if chain.count > best.level {
                    best = FunnelProgress(level: chain.count, times: chain.map { events[$0].time }, firstStep: start)
                    if best.level == n { break }
                }
            }
        case .any:
            // Each event matching some step anchors a window [t, t + within]; the level is the longest prefix of
            // steps all matched by events inside it.
            var matched = [[Bool]]()
            matched.reserveCapacity(events.count)
            for e in events { matched.append((0..<n).map { matches(e, step: $0) }) }
            for anchor in events.indices where matched[anchor].contains(true) {
                let t = events[anchor].time.microseconds
                // The first time each step happens inside the window.
                var first = [Int64?](repeating: nil, count: n)
                for j in events.indices {
                    let d = events[j].time.microseconds &- t
                    if d < 0 { continue }
                    if d > window { break }
                    for k in 0..<n where matched[j][k] && first[k] == nil { first[k] = events[j].time.microseconds }
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
                    best = FunnelProgress(level: level, times: times, firstStep: firstMatch(events, matched, anchor, window))
                    if level == n { break }
                }
            }
        }
        return best
    }

    /// The longest (then earliest) continuation of a strict chain from position `after` at step `k`: only
    /// ignored events may lie between two steps, so the candidates for the next step are the following run of
    /// ignored events and the first event that is not ignored.
    private func strictChain<R: EventRow>(_ events: [R], after: Int, step k: Int, start t1: Int64, window: Int64) -> [Int] {
        let n = funnel.steps.count
        guard k < n else { return [] }
        var best: [Int] = []
        var j = after + 1
        while j < events.count {
            let e = events[j]
            if e.time.microseconds &- t1 > window { break }
            if matches(e, step: k) {
                let chain = [j] + strictChain(events, after: j, step: k + 1, start: t1, window: window)
                if chain.count > best.count {
                    best = chain
                    if best.count == n - k { break }
                }
            }
            if !funnel.ignoring.contains(where: { e.isEvent($0) }) { break }
            j += 1
        }
        return best
    }

    /// In `any` mode, the breakdown value comes from the window's first event that matches step 1.
    private func firstMatch<R: EventRow>(_ events: [R], _ matched: [[Bool]], _ anchor: Int, _ window: Int64) -> Int? {
        let t = events[anchor].time.microseconds
        for j in events.indices {
            let d = events[j].time.microseconds &- t
            if d >= 0, d <= window, matched[j][0] { return j }
        }
        return nil
    }
}
