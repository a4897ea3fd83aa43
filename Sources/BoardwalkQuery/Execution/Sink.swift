import BoardwalkModel

/// Where rows that passed the filters go: the reduction's state.
struct Sink {
    let query: CheckedQuery
    let now: Timestamp
    /// Whether ``finish()`` orders the rows of a `count` by their keys; false when nothing after sees their order
    /// (``TableStage/orderIsUnseen(_:)``). Keys that are equal but spelled apart (`0.0` and `-0.0`, canonically
    /// equivalent strings) then reach the next reduction in the dictionary's order, which may keep another spelling.
    var ordersRows = true
    private(set) var counts: [[Value]: Int] = [:]
    /// The rows of a `count` added by ``addDistinctCount(_:weight:)``, each its key and its count: no key is another's
    /// or one of ``counts``.
    private var distinctRows: [[Value]] = []
    private var keyBuffer: [Value] = []
    /// The group of ``counts`` the last row of a `count` fell in: rows come in runs of one group (sessions of one day,
    /// one onboarding, in the order they are read), and comparing the key costs less than hashing it (callgrind, a
    /// count by day of 50 000 sessions: 29.9 M instructions in the dictionary's lookups).
    private var lastCount: Dictionary<[Value], Int>.Index?
    private var argumentBuffer: [Value] = []
    var stats: [[Value]: (states: [AggregateState], censored: Int)] = [:]
    /// Rows of a histogram of `dwell` whose dwell is censored.
    var histogramCensored = 0
    var listed: [(order: (Int64, UInt64, String), row: [Value])] = []
    /// For a listing whose first row-changing table stage is `limit N`: N. Only the first N rows in order can
    /// reach the result, so the listing keeps about that many, not every row that passes the filters.
    let listLimit: Int?
    /// With ``listLimit``, once the listing was cut to its first N rows: the last one's order. A row that does
    /// not come before it cannot be among the first N.
    private var listThreshold: (Int64, UInt64, String)?
    /// How many rows the listing keeps: at least N of ``listLimit`` once N rows passed the filters, fewer only
    /// before.
    var listedCount: Int { listed.count }
    /// Per breakdown key: the steps its sessions reach up to (rule 3, per group), per step the sessions that
    /// reached it and their times, and the screen client ids of its sessions.
    var screenFunnel: [[Value]: (steps: Int, reached: [Int], times: [[Double]], clients: ScreenClientTally)] = [:]
    /// The one group of a screen funnel without `by` (whose steps are `screenCount`), outside the dictionary: a
    /// session's steps are added without a hash and a dictionary access per step.
    var plainScreenFunnel: ScreenStepTimes?
    /// The screen client ids of the sessions of a screen funnel without `by`.
    let plainScreenClients = ScreenClientTally()
    let screenFunnelHasBy: Bool
    var screenCount = 0
    /// What a group of a screen funnel's sessions say of their onboardings: the fewest and the most screens
    /// (`total_screens`), the first session's onboarding, and whether another onboarding came too. A group of one
    /// onboarding whose sessions disagree on its length is left out of the note.
    struct LengthMix {
        var lengths: ClosedRange<Int>
        var onboarding: String?
        var several = false

        init(_ total: Int, _ onboarding: String?) {
            lengths = total...total
            self.onboarding = onboarding
        }

        mutating func add(_ total: Int, _ onboarding: String?) {
            if total < lengths.lowerBound { lengths = total...lengths.upperBound }
            if total > lengths.upperBound { lengths = lengths.lowerBound...total }
            if !several && onboarding != self.onboarding { several = true }
        }

        /// The lengths, when the group mixes onboardings of different lengths.
        var mixedLengths: ClosedRange<Int>? { several && lengths.lowerBound < lengths.upperBound ? lengths : nil }
    }
    /// ``LengthMix`` of a screen funnel without `by` (a stored value: no dictionary access per session), and per group
    /// with `by`.
    var plainLengthMix: LengthMix?
    var lengthMix: [[Value]: LengthMix] = [:]

    /// The span of the lengths of the groups that mix onboardings of different lengths: what makes rule 3 count
    /// completions of the shorter onboardings as losses.
    var screenFunnelLengths: ClosedRange<Int>? {
        var span = plainLengthMix?.mixedLengths
        for mix in lengthMix.values {
            guard let lengths = mix.mixedLengths else { continue }
            span =
                span.map { min($0.lowerBound, lengths.lowerBound)...max($0.upperBound, lengths.upperBound) } ?? lengths
        }
        return span
    }
    var customFunnel: [[Value]: (reached: [Int], times: [[Double]])] = [:]
    /// `paths`: the sessions of each distinct path (its steps joined), and the sessions that have a path.
    var paths: [String: Int] = [:]
    var pathSessions = 0
    let matcher: FunnelMatcher?

    /// For a listing whose first row-changing table stages are `sort` then `limit N`: the sort's keys (as columns of
    /// the listed rows) and N.
    let listTop: (keys: [(column: Int, descending: Bool)], limit: Int)?
    /// With ``listTop``, once the listing was cut to N rows: the last one's sort keys and order.
    private var topThreshold: (keys: [Value], order: (Int64, UInt64, String))?

    /// Whether row `a` sorts before row `b` by `keys` as the `sort` stage orders them (absent last either way);
    /// nil when they are equal on the keys.
    static func sortsBefore(_ a: [Value], _ b: [Value], _ keys: [(column: Int, descending: Bool)]) -> Bool? {
        for key in keys {
            let x = a[key.column], y = b[key.column]
            if x.isNull != y.isNull { return y.isNull }
            if Value.sortsBefore(x, y) { return !key.descending }
            if Value.sortsBefore(y, x) { return key.descending }
        }
        return nil
    }

    /// What ``addRow(_:censored:order:weight:)`` does with a row, with the expressions it evaluates compiled once
    /// (``CompiledBound``): the reduction's keys and its aggregates' arguments, or the listing's columns.
    private enum RowShape {
        case count, top, histogram(duration: Bool, step: Double), stats([BoundAggregate]), none, listing
    }
    private let rowShape: RowShape
    /// The keys of a `count` or `stats`, the value of a `top` or `histogram`, or the columns of a listing.
    private let rowKeys: [CompiledBound]
    /// The arguments of the aggregates of a `stats` (absent for `count()`).
    private let rowArguments: [CompiledBound?]

    init(query: CheckedQuery, now: Timestamp) {
        self.query = query
        self.now = now
        func compiled(_ columns: [BoundColumn]) -> [CompiledBound] { columns.map { CompiledBound($0.bound, now: now) } }
        switch query.reduction {
        case .count(let by):
            (rowShape, rowKeys, rowArguments) = (.count, compiled(by), [])
        case .top(_, let key):
            (rowShape, rowKeys, rowArguments) = (.top, compiled([key]), [])
        case .histogram(let value, let step):
            (rowShape, rowKeys, rowArguments) = (
                .histogram(duration: value.type == .duration, step: step), compiled([value]), []
            )
        case .stats(let aggregates, let by, _):
            rowShape = .stats(aggregates)
            rowKeys = compiled(by)
            rowArguments = aggregates.map { $0.argument.map { CompiledBound($0, now: now) } }
        case .funnel, .paths:
            (rowShape, rowKeys, rowArguments) = (.none, [], [])
        case nil:
            (rowShape, rowKeys, rowArguments) = (.listing, compiled(query.rowColumns), [])
        }
        listTop = query.listTop
        if case .funnel(let f) = query.reduction, !f.steps.isEmpty {
            matcher = FunnelMatcher(funnel: f, now: now)
        } else {
            matcher = nil
        }
        screenFunnelHasBy = if case .funnel(let f) = query.reduction { !f.by.isEmpty } else { false }
        listLimit = query.listLimit
    }

    /// Empties a reused buffer of a few values, keeping its capacity: element by element, since
    /// `removeAll(keepingCapacity:)` goes through the generic `replaceSubrange` (callgrind: about 150 instructions a
    /// call, a tenth of a `count by day(started)` row).
    @inline(__always)
    private static func empty(_ buffer: inout [Value]) {
        while buffer.popLast() != nil {}
    }

    /// Adds a row, or `weight` rows with the same values (counts from block headers or by field codes, which
    /// reduce by `count`, `top`, `histogram`, or `stats` of `count()` alone: ``BoundAggregate/countsRows``).
    mutating func addRow(_ leaf: (Bound) -> Value, censored: Bool, order: (Int64, UInt64, String), weight: Int = 1) {
        switch rowShape {
        case .count:
            // The key is built in a reused buffer: looking up an existing group allocates nothing.
            Sink.empty(&keyBuffer)
            for key in rowKeys { keyBuffer.append(key(leaf)) }
            if !keyBuffer.contains(where: \.isSet) {
                if let last = lastCount, counts.keys[last] == keyBuffer {
                    counts.values[last] += weight
                } else if let found = counts.index(forKey: keyBuffer) {
                    counts.values[found] += weight
                    lastCount = found
                } else {
                    // May grow the table, voiding every index: the group's next row finds it by its hash.
                    counts[keyBuffer] = weight
                    lastCount = nil
                }
            } else {
                lastCount = nil
                for key in keyCombinations(keyBuffer) { counts[key, default: 0] += weight }
            }
        case .top:
            // The most frequent values: absent is not a value (rule 11), here or from an empty multi-select.
            Sink.empty(&keyBuffer)
            keyBuffer.append(rowKeys[0](leaf))
            if !keyBuffer[0].isSet {
                if !keyBuffer[0].isNull { counts[keyBuffer, default: 0] += weight }
            } else {
                for k in keyCombinations(keyBuffer) where !k[0].isNull { counts[k, default: 0] += weight }
            }
        case .histogram(let duration, let step):
            // A censored dwell has no value and no bucket: it is counted beside them (rule 7).
            if censored { histogramCensored += weight }
            guard let x = rowKeys[0](leaf).numeric, let bucket = HistogramBucket.start(of: x, step: step) else {
                return
            }
            let key: Value = duration ? .duration(bucket) : .number(bucket)
            counts[[key], default: 0] += weight
        case .stats(let aggregates):
            precondition(
                weight == 1 || aggregates.allSatisfy(\.countsRows), "a weighted row of stats other than count()")
            // Keys and arguments in reused buffers, and one hash lookup per group the row falls in: an array per
            // row and a lookup per aggregate cost a quarter of a dwell query.
            Sink.empty(&keyBuffer)
            for key in rowKeys { keyBuffer.append(key(leaf)) }
            Sink.empty(&argumentBuffer)
            for argument in rowArguments { argumentBuffer.append(argument?(leaf) ?? .null) }
            if !keyBuffer.contains(where: \.isSet) {
                addStats(keyBuffer, aggregates, censored: censored, weight: weight)
            } else {
                for key in keyCombinations(keyBuffer) { addStats(key, aggregates, censored: censored, weight: weight) }
            }
        case .none:
            break
        case .listing:
            if let threshold = listThreshold, !(order < threshold) { return }
            if listLimit == 0 || listTop?.limit == 0 { return }
            if let top = listTop {
                // `sort … | limit N`: only the first N rows in the sort's order can reach the result. Cut back to them
                // now and then, ties broken by the listing's order as the stable sort breaks them: amortized
                // O(log N) per row, memory O(N) instead of every row (`events | sort time desc | limit 3` would
                // keep 3.6 M rows, 1.46 GB). After a cut, a row whose keys do not come before the last
                // row kept is dropped before its other columns are read.
                if let last = topThreshold {
                    let keys = top.keys.map { rowKeys[$0.column](leaf) }
                    let before = Sink.sortsBefore(
                        keys, last.keys, top.keys.indices.map { ($0, top.keys[$0].descending) })
                    if !(before ?? (order < last.order)) { return }
                }
                listed.append((order, rowKeys.map { $0(leaf) }))
                if listed.count >= listingCutPoint(top.limit) {
                    listed.sort { a, b in
                        if let before = Sink.sortsBefore(a.row, b.row, top.keys) { return before }
                        return a.order < b.order
                    }
                    listed.removeLast(listed.count - top.limit)
                    if let last = listed.last { topThreshold = (top.keys.map { last.row[$0.column] }, last.order) }
                }
                return
            }
            listed.append((order, rowKeys.map { $0(leaf) }))
            // With a limit, cut back to the first `limit` rows now and then: amortized O(log limit) per row kept.
            if let limit = listLimit, listed.count >= listingCutPoint(limit) {
                listed.sort { $0.order < $1.order }
                listed.removeLast(listed.count - limit)
                listThreshold = listed.last!.order
            }
        }
    }

    mutating func addSession<R: EventRow>(_ summary: SessionSummary, _ events: [R]) {
        guard case .funnel(let funnel) = query.reduction else { return }
        func values(_ e: R) -> [Value] { FunnelMatcher.values(of: funnel.by, on: e, session: summary, now: now) }
        if let matcher {
            let progress = matcher.progress(events)
            addChain(progress, firstStepKeys: funnel.by.isEmpty ? [] : progress.firstStep.map { values(events[$0]) })
        } else {
            let first = funnel.by.isEmpty ? nil : events.firstIndex { $0.screenIndex != nil }
            addScreenFunnel(summary, firstScreenKeys: first.map { values(events[$0]) } ?? []) {
                $0.add(events: events)
            }
        }
    }

    /// Adds a session's path (rule 14) from its events in `(time, seq)` order.
    mutating func addPaths<R: EventRow>(_ events: [R]) {
        guard case .paths(let p) = query.reduction, let path = p.path(events, now: now) else { return }
        paths[path.joined(separator: BoundPaths.separator), default: 0] += 1
        pathSessions += 1
    }

    /// Adds the arguments in `argumentBuffer` to the aggregates of group `key`, mutating them in place through the
    /// dictionary's storage (a copy taken out would copy every value a percentile keeps).
    /// `weight` rows at once only for `count()` aggregates (``BoundAggregate/countsRows``).
    private mutating func addStats(_ key: [Value], _ aggregates: [BoundAggregate], censored: Bool, weight: Int = 1) {
        let index: Dictionary<[Value], (states: [AggregateState], censored: Int)>.Index
        if let found = stats.index(forKey: key) {
            index = found
        } else {
            stats[key] = (aggregates.map { AggregateState($0.function) }, 0)
            index = stats.index(forKey: key)!
        }
        if weight == 1 {
            for i in aggregates.indices { stats.values[index].states[i].add(aggregates[i].function, argumentBuffer[i]) }
        } else {
            for i in aggregates.indices {
                if case .count(let n) = stats.values[index].states[i] {
                    stats.values[index].states[i] = .count(n + weight)
                }
            }
        }
        if censored { stats.values[index].censored += weight }
    }

    /// Adds a group of `rows` rows of a `stats` whose aggregates are `count()` (which adds `rows`) and
    /// `count_distinct` (whose entry in `distinct`, parallel to the aggregates, holds the group's distinct values, or
    /// how many when no other group has its key); `leaf` gives the group's key fields, none of which is a set.
    mutating func addGroup(_ leaf: (Bound) -> Value, rows: Int, distinct: [DistinctValues?]) {
        guard case .stats(let aggregates) = rowShape else { return }
        Sink.empty(&keyBuffer)
        for key in rowKeys { keyBuffer.append(key(leaf)) }
        precondition(
            !keyBuffer.contains(where: \.isSet) && distinct.count == aggregates.count, "not a coded stats group")
        if stats[keyBuffer] == nil { stats[keyBuffer] = (aggregates.map { AggregateState($0.function) }, 0) }
        let index = stats.index(forKey: keyBuffer)!
        for i in aggregates.indices {
            switch (stats.values[index].states[i], distinct[i]) {
            case (.count(let n), nil):
                stats.values[index].states[i] = .count(n + rows)
            case (.distinct(let set), .values(let values)?):
                stats.values[index].states[i] = .distinct(set.union(values))
            case (.distinct(let set), .count(let n)?):
                // The group's only entry (its key is no other group's): the count is the aggregate's result.
                precondition(set.isEmpty, "a counted distinct group added to values")
                stats.values[index].states[i] = .count(n)
            default:
                preconditionFailure("aggregate \(aggregates[i].name) is neither count() nor count_distinct")
            }
        }
    }

    /// Adds `weight` rows of a `count` whose key, the values of its `by` columns on `leaf`, differs from the key of
    /// every other row added: the caller grouped the rows itself by what the key is (each profile's sessions, for
    /// `count by profile`). The group becomes a result row at once, without a hash; a key with a set in it (which
    /// ``addRow(_:censored:order:weight:)`` expands into several) goes through that instead.
    mutating func addDistinctCount(_ leaf: (Bound) -> Value, weight: Int) {
        guard case .count = rowShape, !rowKeys.isEmpty else {
            return addRow(leaf, censored: false, order: (0, 0, ""), weight: weight)
        }
        var row: [Value] = []
        row.reserveCapacity(rowKeys.count + 1)
        for key in rowKeys { row.append(key(leaf)) }
        if row.contains(where: \.isSet) { return addRow(leaf, censored: false, order: (0, 0, ""), weight: weight) }
        row.append(.integer(Int64(weight)))
        distinctRows.append(row)
    }

    /// Told that about `groups` groups are coming (a source that grouped its rows itself): the groups' table is
    /// sized for them at once rather than grown as they come.
    mutating func expectGroups(_ groups: Int) {
        if case .stats = query.reduction {
            if stats.isEmpty { stats.reserveCapacity(groups) }
        } else if counts.isEmpty {
            counts.reserveCapacity(groups)
        }
    }

    /// Whether sinks of `reduction` that took apart runs of one row sequence merge (``merge(_:)``) into the sink that
    /// takes the whole sequence, whatever the cut: a `count`, `top`, `histogram`, or `stats` whose aggregates do
    /// not depend on the rows' order (not `avg` nor `sum`, whose floating-point additions do).
    static func merges(_ reduction: Reduction?) -> Bool {
        switch reduction {
        case .count, .top, .histogram: true
        case .stats(let aggregates, _, _):
            aggregates.allSatisfy { $0.function != .avg && $0.function != .sum }
        case .funnel, .paths, nil: false
        }
    }

    /// Whether sinks of `reduction` that each took a run of whole sessions, in the order one sink would take them,
    /// merge (``merge(_:)``) in the runs' order into the sink that takes them all: those of ``merges(_:)``, and a
    /// funnel of custom steps (its steps' counts add up, and its step times stay in the order the sessions came, so
    /// their mean is the one sink's to the bit).
    static func mergesSessionRuns(_ reduction: Reduction?) -> Bool {
        if case .funnel(let funnel) = reduction { return !funnel.steps.isEmpty }
        return merges(reduction)
    }

    /// Merges the groups of `other`, a sink of the same query that took the rows (or, ``mergesSessionRuns(_:)``, the
    /// sessions) after this one's: a group both have keeps this sink's key, as one sink taking both runs would.
    /// - Complexity: O(groups of `other`), plus the values of its percentiles, distinct counts and funnel step times.
    mutating func merge(_ other: consuming Sink) {
        precondition(Sink.mergesSessionRuns(query.reduction), "a sink of a reduction that does not merge")
        lastCount = nil
        for (key, theirs) in other.customFunnel {
            guard let index = customFunnel.index(forKey: key) else {
                customFunnel[key] = theirs
                continue
            }
            for k in theirs.reached.indices {
                customFunnel.values[index].reached[k] += theirs.reached[k]
                customFunnel.values[index].times[k] += theirs.times[k]
            }
        }
        histogramCensored += other.histogramCensored
        if counts.isEmpty {
            counts = other.counts
        } else {
            for (key, n) in other.counts { counts[key, default: 0] += n }
        }
        distinctRows += other.distinctRows
        if stats.isEmpty {
            stats = other.stats
            return
        }
        guard case .stats(let aggregates, _, _) = query.reduction else { return }
        for (key, theirs) in other.stats {
            guard let index = stats.index(forKey: key) else {
                stats[key] = theirs
                continue
            }
            stats.values[index].censored += theirs.censored
            for i in theirs.states.indices {
                stats.values[index].states[i].merge(theirs.states[i], aggregates[i].function)
            }
        }
    }

    /// Adds `n` to the count of a `count` without `by`.
    mutating func addCount(_ n: Int) {
        lastCount = nil
        counts[[], default: 0] += n
    }

    /// Adds a session to the funnel of custom steps from its events that match a step, in `(time, seq)` order
    /// (``StepEvent``; `ordered` and `any` modes).
    mutating func addStepEvents(_ events: [StepEvent]) {
        guard let matcher, !events.isEmpty else { return }
        let progress = matcher.progress(events)
        addChain(progress, firstStepKeys: progress.firstStep.map { events[$0].keys })
    }

    /// Counts a session's best chain (rule 4) under the breakdown values of its step-1 event (rule 12);
    /// `firstStepKeys` is nil when a breakdown has no step-1 event to read.
    private mutating func addChain(_ progress: FunnelProgress, firstStepKeys: [Value]?) {
        guard case .funnel(let funnel) = query.reduction, progress.level > 0 else { return }
        let n = funnel.steps.count
        let keys: [[Value]] = funnel.by.isEmpty ? [[]] : firstStepKeys.map { keyCombinations($0) } ?? []
        for key in keys {
            if customFunnel[key] == nil {
                customFunnel[key] = ([Int](repeating: 0, count: n), [[Double]](repeating: [], count: n))
            }
            for k in 0..<progress.level {
                customFunnel[key]!.reached[k] += 1
                customFunnel[key]!.times[k].append(
                    elapsed(from: progress.times[0].microseconds, to: progress.times[k].microseconds))
            }
        }
    }

    /// Sizes the screen funnel's buffers for `sessions` sessions (a hint: they grow past it).
    mutating func expectSessions(_ sessions: Int) {
        guard !screenFunnelHasBy, case .funnel(let funnel) = query.reduction, funnel.steps.isEmpty else { return }
        if plainScreenFunnel == nil { plainScreenFunnel = ScreenStepTimes(expectedSessions: sessions) }
    }

    /// Adds a session folded from the store to the screen funnel (rule 3); `firstScreenKeys` are the breakdown
    /// columns' values on the session's first event with a screen index (rule 12).
    mutating func addScreenFunnel(_ summary: SessionSummary, firstScreenKeys: [Value]) {
        addScreenFunnel(summary, firstScreenKeys: firstScreenKeys) { $0.add(summary.screenClients) }
    }

    /// ``addScreenFunnel(_:firstScreenKeys:)`` with the session's screen client ids added to a group's tally by
    /// `clients`.
    private mutating func addScreenFunnel(
        _ summary: SessionSummary, firstScreenKeys: [Value], clients: (ScreenClientTally) -> Void
    ) {
        let sessionSteps = max(summary.totalScreens ?? 0, (summary.furthestScreen ?? -1) + 1)
        screenCount = max(screenCount, sessionSteps)
        guard let furthest = summary.furthestScreen else { return }
        let started = summary.started.microseconds
        let reachTimes = summary.reachTimes  // one access to the class's property, not one per step
        if !screenFunnelHasBy {
            if let total = summary.totalScreens {
                if plainLengthMix == nil {
                    plainLengthMix = LengthMix(total, summary.onboarding)
                } else {
                    plainLengthMix!.add(total, summary.onboarding)
                }
            }
            let group = plainScreenFunnel ?? ScreenStepTimes()
            plainScreenFunnel = group
            group.add(started: started, reachTimes: reachTimes, furthest: furthest)
            clients(plainScreenClients)
            return
        }
        let keys = keyCombinations(firstScreenKeys)
        for key in keys {
            if let total = summary.totalScreens {
                if lengthMix[key] == nil {
                    lengthMix[key] = LengthMix(total, summary.onboarding)
                } else {
                    lengthMix[key]!.add(total, summary.onboarding)
                }
            }
            // One lookup per session, then the entry is mutated in place through its index.
            var index = screenFunnel.index(forKey: key)
            if index == nil {
                screenFunnel[key] = (0, [], [], ScreenClientTally())
                index = screenFunnel.index(forKey: key)
            }
            let entry = index!
            screenFunnel.values[entry].steps = max(screenFunnel.values[entry].steps, sessionSteps)
            clients(screenFunnel.values[entry].clients)
            while screenFunnel.values[entry].reached.count <= furthest {
                screenFunnel.values[entry].reached.append(0)
                screenFunnel.values[entry].times.append([])
            }
            for i in 0...furthest {
                screenFunnel.values[entry].reached[i] += 1
                screenFunnel.values[entry].times[i].append(elapsed(from: started, to: reachTimes[i]))
            }
        }
    }

    /// The groups of ``counts`` as rows, each its key and its count (one allocation a row: `key + [count]` made two).
    private func countRows() -> [[Value]] {
        var rows: [[Value]] = []
        rows.reserveCapacity(counts.count)
        for (key, count) in counts {
            var row = key
            row.append(.integer(Int64(count)))
            rows.append(row)
        }
        return rows
    }

    func finish() -> ResultTable {
        let columns = query.columns
        switch query.reduction {
        case .count(let by):
            if by.isEmpty { return ResultTable(columns: columns, rows: [[.integer(Int64(counts[[]] ?? 0))]]) }
            let rows = distinctRows.isEmpty ? countRows() : countRows() + distinctRows
            guard ordersRows else { return ResultTable(columns: columns, rows: rows) }
            return ResultTable(columns: columns, rows: rows.sorted { keyOrder($0, $1, columns: by.count) })
        case .top(let n, _):
            let rows = countRows().sorted { a, b in
                if a[1] != b[1] { return Value.sortsBefore(b[1], a[1]) }
                return keyOrder(a, b, columns: 1)
            }
            return ResultTable(columns: columns, rows: Array(rows.prefix(n)))
        case .histogram(let value, _):
            var rows = countRows().sorted { keyOrder($0, $1, columns: 1) }
            if value.bound.readsDwell {
                // Dwell (rule 7): a `censored` column, false on the buckets, and one row of the censored
                // presentations, which have no bucket.
                rows = rows.map { $0 + [.bool(false)] } + [[.null, .integer(Int64(histogramCensored)), .bool(true)]]
            }
            return ResultTable(columns: columns, rows: rows)
        case .stats(let aggregates, let by, let censored):
            func row(_ key: [Value], _ entry: (states: [AggregateState], censored: Int)) -> [Value] {
                var row = key
                for (i, aggregate) in aggregates.enumerated() { row.append(entry.states[i].result(aggregate)) }
                if censored { row.append(.integer(Int64(entry.censored))) }
                return row
            }
            if by.isEmpty {
                let entry = stats[[]] ?? (aggregates.map { AggregateState($0.function) }, 0)
                return ResultTable(columns: columns, rows: [row([], entry)])
            }
            let rows = stats.map { row($0.key, $0.value) }.sorted { keyOrder($0, $1, columns: by.count) }
            return ResultTable(columns: columns, rows: rows)
        case .funnel(let funnel):
            var rows: [[Value]] = []
            let byCount = funnel.by.count
            if funnel.steps.isEmpty {
                // Without `by`, the one group is kept outside the dictionary (none when no session was added).
                typealias Group = (steps: Int, reached: [Int], times: [[Double]], clients: ScreenClientTally)
                let groups: [(key: [Value], entry: Group)] =
                    if byCount == 0 {
                        plainScreenFunnel.map { group in
                            let reached = group.reached
                            return [([], (screenCount, reached, group.takeTimes(), plainScreenClients))]
                        }
                            ?? (screenCount > 0 ? [([], (screenCount, [], [], plainScreenClients))] : [])
                    } else {
                        screenFunnel.keys.sorted(by: { keyOrder($0, $1, columns: byCount) }).map {
                            ($0, screenFunnel[$0]!)
                        }
                    }
                for (key, entry) in groups {
                    // Without `by`, the steps of every session in scope; with it, each group's own (rule 3: up to
                    // the screens of its onboarding), so a group is not shown dropping off at screens it lacks.
                    let steps = byCount == 0 ? screenCount : entry.steps
                    let reached = (0..<steps).map { $0 < entry.reached.count ? entry.reached[$0] : 0 }
                    for i in 0..<steps {
                        let times = i < entry.times.count ? entry.times[i] : []
                        var row = key
                        if byCount > 0 { row.append(.integer(0)) }
                        row.append(.integer(Int64(i)))
                        row.append(entry.clients.mostFrequent(step: i))
                        row += funnelCounts(reached, i)
                        row.append(Percentile.of(times, 0.5).map(Value.duration) ?? .null)
                        rows.append(row)
                    }
                }
            } else {
                let n = funnel.steps.count
                var groups = customFunnel
                if byCount == 0, groups.isEmpty {
                    groups[[]] = ([Int](repeating: 0, count: n), [[Double]](repeating: [], count: n))
                }
                for key in groups.keys.sorted(by: { keyOrder($0, $1, columns: byCount) }) {
                    let entry = groups[key]!
                    for k in 0..<n {
                        var row = key
                        if byCount > 0 { row.append(.integer(1)) }
                        row.append(.integer(Int64(k + 1)))
                        row.append(.string(funnel.steps[k].name))
                        row += funnelCounts(entry.reached, k)
                        let times = entry.times[k]
                        row.append(times.isEmpty ? .null : .duration(times.reduce(0, +) / Double(times.count)))
                        row.append(Percentile.of(times, 0.5).map(Value.duration) ?? .null)
                        row.append(Percentile.of(times, 0.9).map(Value.duration) ?? .null)
                        rows.append(row)
                    }
                }
            }
            return ResultTable(columns: columns, rows: rows)
        case .paths:
            // The most common paths first; ties by path.
            let rows = paths.sorted { a, b in a.value != b.value ? a.value > b.value : a.key < b.key }.map {
                [Value.string($0.key), .integer(Int64($0.value)), .number(Double($0.value) / Double(pathSessions))]
            }
            return ResultTable(columns: columns, rows: rows)
        case nil:
            let rows = listed.sorted { $0.order < $1.order }.map(\.row)
            return ResultTable(columns: columns, rows: rows)
        }
    }
}

/// `sessions, pct_of_first, pct_of_previous, dropoff` of step `i` (rule 3): percentages are absent when
/// their base is 0; the first step's drop-off is 0.
func funnelCounts(_ reached: [Int], _ i: Int) -> [Value] {
    let s = reached[i]
    let first = reached[0]
    let previous = i == 0 ? first : reached[i - 1]
    return [
        .integer(Int64(s)),
        first == 0 ? .null : .number(Double(s) * 100 / Double(first)),
        previous == 0 ? .null : .number(Double(s) * 100 / Double(previous)),
        .integer(Int64(previous - s)),
    ]
}
