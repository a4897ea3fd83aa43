import BoardwalkModel

/// Runs a checked query over an ``EventSource``: streams rows through the filters into one reduction.
/// Memory grows with the number of groups (and, for funnels and percentiles, with the sessions or rows whose
/// values must be kept exactly), not with the number of events read.
struct Executor {
    let query: CheckedQuery
    let plan: Plan
    let now: Timestamp
    let cancellation: CancellationFlag?
    var statistics = RunStatistics()

    init(query: CheckedQuery, now: Timestamp, cancellation: CancellationFlag?) {
        self.query = query
        self.plan = Plan.make(query, now: now)
        self.now = now
        self.cancellation = cancellation
    }

    /// Counts rows read and checks the cancellation flag every 4096 of them.
    private struct Ticker {
        let cancellation: CancellationFlag?
        let text: String
        var sinceCheck = 0

        mutating func tick(_ n: Int = 1) throws(QueryError) {
            sinceCheck += n
            if sinceCheck >= 4096 {
                sinceCheck = 0
                if cancellation?.isCancelled == true { throw QueryError(.cancelled, "the query was cancelled", in: text) }
            }
        }
    }

    private static func passes(_ filters: [Bound], _ now: Timestamp, _ leaf: (Bound) -> Value) -> Bool {
        for filter in filters where !filter.evaluate(now: now, leaf).isTrue { return false }
        return true
    }

    mutating func run(on source: some EventSource) throws(QueryError) -> ResultTable {
        // Callers often hold `any EventSource` (the CLI does): opened here, the generic body would run
        // unspecialized, every field read a witness-table call with metadata lookups. Casting to the concrete
        // sources calls specialized copies.
        if let store = source as? StoreEventSource { return try execute(store) }
        if let memory = source as? InMemoryEventSource { return try execute(memory) }
        return try execute(source)
    }

    private mutating func execute<S: EventSource>(_ source: S) throws(QueryError) -> ResultTable {
        if cancellation?.isCancelled == true { throw QueryError(.cancelled, "the query was cancelled", in: query.ast.text) }
        // Closures below capture these locals, never `self`: touching `self` from a closure inside a mutating
        // method copies the whole executor per call.
        var sink = Sink(query: query, now: now)
        var ticker = Ticker(cancellation: cancellation, text: query.ast.text)
        var statistics = RunStatistics()
        let filters = query.filters
        let now = self.now
        let listing = query.reduction == nil
        let isFunnel = if case .funnel = query.reduction { true } else { false }
        let hasMatcher = query.hasCustomFunnel
        let needsSessionRows = query.needsSessionRows
        defer { self.statistics = statistics }
        func passes(_ leaf: (Bound) -> Value) -> Bool { Executor.passes(filters, now, leaf) }
        /// One session with its events as rows in `(time, seq)` order, through the filters into the reduction.
        func take<R: EventRow>(session id: String, _ scanned: [R]) throws(QueryError) {
            try ticker.tick(scanned.count)
            statistics.sessionsRead += 1
            statistics.eventsRead += scanned.count
            let summary = SessionSummary(id: id)
            for s in scanned { summary.add(s) }
            func leaf(_ b: Bound) -> Value { summary.leaf(b) }
            guard passes(leaf) else { return }
            if isFunnel {
                sink.addSession(summary, scanned)
            } else {
                sink.addRow(leaf, censored: false, order: (summary.started.microseconds, 0, id))
            }
        }
        /// Each session with events in the ranges, its events as rows in `(time, seq)` order.
        func readSessionRows() throws(QueryError) {
            try source.scanSessions(plan.ranges, cancellation: cancellation, text: query.ast.text) {
                (id, scanned) throws(QueryError) -> Bool in
                try take(session: id, scanned)
                return true
            }
        }
        if let names = plan.sessions, let store = source as? StoreEventSource {
            // Sessions named by the filters: read through the session index, not by scanning the ranges.
            try store.forNamedSessions(names, ranges: plan.ranges) { sessions throws(QueryError) in
                switch plan.access {
                case .sessions:
                    for (id, rows) in sessions { try take(session: id, rows) }
                case .sessionEvents:
                    var none: CodedFilter? = nil
                    for (_, rows) in sessions {
                        _ = try Executor.visit(session: rows, &sink, &ticker, &statistics, filters: filters, now: now, coded: &none)
                    }
                case .events:
                    // The events in the ranges, in the order a scan of the ranges would give them.
                    for row in StoreEventSource.keyOrdered(sessions.flatMap(\.rows), in: plan.ranges) {
                        _ = try Executor.visit(row, &sink, &ticker, &statistics, filters: filters, now: now, listing: listing)
                    }
                }
            }
            return applyTableStages(sink.finish())
        }
        switch plan.access {
        case .events:
            if let store = source as? StoreEventSource, StoreEventSource.readsOnlyWhatEventQueriesNeed {
                if let counts = plan.blockCounts {
                    // Counts from block headers: the filters were split by the plan and are checked there.
                    let reads = try store.countEvents(plan.ranges, counts, now: now, cancellation: cancellation,
                                                      text: query.ast.text) { (leaf, n) throws(QueryError) in
                        sink.addRow(leaf, censored: false, order: (0, 0, ""), weight: n)
                    }
                    statistics.blocksCounted += reads.counted
                    statistics.blocksRead += reads.timed
                    statistics.eventsCounted += reads.events
                    break
                }
                if plan.leanEvents, let coded = plan.codedCount {
                    // Counts by field codes: no row per event.
                    statistics.eventsRead += try store.countByCodes(plan.ranges, coded, now: now,
                                                                    cancellation: cancellation, text: query.ast.text) {
                        (leaf, n, distinct) throws(QueryError) in
                        if distinct.allSatisfy({ $0 == nil }) {
                            sink.addRow(leaf, censored: false, order: (0, 0, ""), weight: n)
                        } else {
                            sink.addGroup(leaf, rows: n, distinct: distinct)
                        }
                    }
                    break
                }
                if plan.leanEvents {
                    for range in plan.ranges {
                        try store.scanEventFields(range) { row throws(QueryError) in
                            try Executor.visit(row, &sink, &ticker, &statistics, filters: filters, now: now, listing: listing)
                        }
                    }
                    break
                }
            }
            for range in plan.ranges {
                try source.scanEvents(range) { row throws(QueryError) in
                    try Executor.visit(row, &sink, &ticker, &statistics, filters: filters, now: now, listing: listing)
                }
            }
        case .sessionEvents:
            if plan.leanEvents, let store = source as? StoreEventSource, StoreEventSource.readsOnlyWhatEventQueriesNeed {
                // Filters on coded fields alone (not `dwell`) are evaluated once per combination of their codes.
                var coded = CodedCountPlan.codedFields(of: filters).map { CodedFilter(filters, fields: $0, now: now) }
                try store.scanSessionFields(plan.ranges, cancellation: cancellation, text: query.ast.text) { (_, scanned) throws(QueryError) -> Bool in
                    try Executor.visit(session: scanned, &sink, &ticker, &statistics, filters: filters, now: now, coded: &coded)
                }
            } else {
                var none: CodedFilter? = nil
                try source.scanSessions(plan.ranges, cancellation: cancellation, text: query.ast.text) { (_, scanned) throws(QueryError) -> Bool in
                    try Executor.visit(session: scanned, &sink, &ticker, &statistics, filters: filters, now: now, coded: &none)
                }
            }
        case .sessions where query.countsEverySession && source is StoreEventSource:
            // The store counts distinct sessions as it appends (and `check()` verifies the counter).
            sink.addCount(try (source as! StoreEventSource).sessionCount())
        case .sessions where !needsSessionRows && source is StoreEventSource:
            // The store folds sessions from borrowed views (one sequential scan for the whole store), keeping the
            // events that match a custom funnel's steps; only a strict funnel needs each session's events as rows.
            let store = source as! StoreEventSource
            let needs = FoldNeeds(query, now: now)
            let sessionFilters = SessionFilters(filters, now: now)
            var expected = 0
            try store.foldSessions(plan.ranges, needs: needs, cancellation: cancellation, text: query.ast.text,
                                   expecting: { expected = $0 }) { (summary, funnelKeys, events) throws(QueryError) -> Bool in
                if expected > 0 {
                    sink.expectSessions(expected)
                    expected = 0
                }
                statistics.sessionsRead += 1
                statistics.eventsRead += events
                func leaf(_ b: Bound) -> Value { summary.leaf(b) }
                guard sessionFilters.passes(summary) else { return true }
                if hasMatcher {
                    sink.addStepEvents(summary.stepEvents)
                } else if isFunnel {
                    sink.addScreenFunnel(summary, firstScreenKeys: funnelKeys)
                } else {
                    sink.addRow(leaf, censored: false, order: (summary.started.microseconds, 0, summary.id))
                }
                return true
            }
            // A custom funnel whose steps matched more events than its folds may keep: nothing was delivered.
            if needs.stepTests?.overBudget == true { try readSessionRows() }
        case .sessions:
            try readSessionRows()
        }
        if let lengths = sink.screenFunnelLengths, lengths.lowerBound < lengths.upperBound {
            let whose = sink.screenFunnelHasBy ? "the sessions of a group of the funnel" : "the funnel's sessions"
            statistics.notes.append(QueryError(.note, "\(whose) come from onboardings of \(lengths.lowerBound) to "
                + "\(lengths.upperBound) screens: a session that completed a shorter one counts as not reaching the later "
                + "steps (rule 3); `funnel by onboarding`, or `where onboarding == \"…\"`, gives each its own"))
        }
        return applyTableStages(sink.finish())
    }

    /// One event row's way through the filters into the reduction, whatever the row type. A static function
    /// taking the state `inout` from a closure literal: a local function capturing the executor's variables,
    /// passed as a closure, made every access to them a dynamic exclusivity check (callgrind: +2.5 % on a
    /// full-path `top 10 value`).
    @inline(__always)
    private static func visit<R: EventRow>(_ row: R, _ sink: inout Sink, _ ticker: inout Ticker, _ statistics: inout RunStatistics,
                                           filters: [Bound], now: Timestamp, listing: Bool) throws(QueryError) -> Bool {
        try ticker.tick()
        statistics.eventsRead += 1
        // A local function, not a closure value: a closure stored in a `let` escapes, and would allocate a
        // context holding a copy of the row on every event.
        func leaf(_ b: Bound) -> Value {
            if case .event(let f) = b { return row.value(f) }
            return .null
        }
        if passes(filters, now, leaf) {
            var time: Int64 = 0
            if listing, case .time(let t) = row.value(.time) { time = t.microseconds }
            sink.addRow(leaf, censored: false, order: (time, row.seq, ""))
        }
        return true
    }

    /// A session's event rows, in (time, seq) order, through the filters into the reduction, each with its dwell
    /// (rule 7), whatever the row type (see ``visit(_:_:_:_:filters:now:listing:)``).
    /// With `coded` (rows are then `StoreFieldsRow`s), the filters are checked through it.
    private static func visit<R: EventRow>(session rows: [R], _ sink: inout Sink, _ ticker: inout Ticker,
                                           _ statistics: inout RunStatistics, filters: [Bound], now: Timestamp,
                                           coded: inout CodedFilter?) throws(QueryError) -> Bool {
        try ticker.tick(rows.count)
        statistics.sessionsRead += 1
        statistics.eventsRead += rows.count
        let dwell = dwellTimes(rows)
        for (i, row) in rows.enumerated() {
            func leaf(_ b: Bound) -> Value {
                guard case .event(let f) = b else { return .null }
                if f == .dwell { if case .value(let d) = dwell[i] { return .duration(Double(d)) } else { return .null } }
                return row.value(f)
            }
            let pass = if coded != nil, let lean = row as? StoreFieldsRow { coded!.passes(lean) } else { passes(filters, now, leaf) }
            if pass {
                sink.addRow(leaf, censored: dwell[i] == .censored, order: (row.time.microseconds, row.seq, ""))
            }
        }
        return true
    }

    /// `where`, `sort`, `limit` and `select` after the reduction.
    private func applyTableStages(_ table: ResultTable) -> ResultTable {
        var table = table
        for stage in query.tableStages {
            switch stage {
            case .where(let predicate):
                table.rows = table.rows.filter { row in
                    predicate.evaluate(now: now) { b in
                        if case .column(let i) = b { return row[i] }
                        return .null
                    }.isTrue
                }
            case .sort(let keys):
                // A stable sort: rows equal on the keys keep their order. Absent values sort last either way.
                table.rows = table.rows.enumerated().sorted { a, b in
                    Sink.sortsBefore(a.element, b.element, keys) ?? (a.offset < b.offset)
                }.map(\.element)
            case .limit(let n):
                if table.rows.count > n { table.rows.removeLast(table.rows.count - n) }
            case .select(let indexes):
                table.columns = indexes.map { table.columns[$0] }
                table.rows = table.rows.map { row in indexes.map { row[$0] } }
            }
        }
        return table
    }
}

/// Where rows that passed the filters go: the reduction's state.
private struct Sink {
    let query: CheckedQuery
    let now: Timestamp
    var counts: [[Value]: Int] = [:]
    private var keyBuffer: [Value] = []
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
    /// Per breakdown key: the steps its sessions reach up to (rule 3, per group), and per step the sessions
    /// that reached it and their times.
    var screenFunnel: [[Value]: (steps: Int, reached: [Int], times: [[Double]])] = [:]
    /// The one group of a screen funnel without `by` (whose steps are `screenCount`), outside the dictionary: a
    /// session's steps are added without a hash and a dictionary access per step.
    var plainScreenFunnel: ScreenStepTimes?
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
            span = span.map { min($0.lowerBound, lengths.lowerBound)...max($0.upperBound, lengths.upperBound) } ?? lengths
        }
        return span
    }
    var customFunnel: [[Value]: (reached: [Int], times: [[Double]])] = [:]
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

    init(query: CheckedQuery, now: Timestamp) {
        self.query = query
        self.now = now
        listTop = query.listTop
        if case .funnel(let f) = query.reduction, !f.steps.isEmpty { matcher = FunnelMatcher(funnel: f, now: now) } else { matcher = nil }
        screenFunnelHasBy = if case .funnel(let f) = query.reduction { !f.by.isEmpty } else { false }
        listLimit = query.listLimit
    }

    /// Adds a row, or `weight` rows with the same values (counts from block headers or by field codes, which
    /// reduce by `count`, `top`, `histogram`, or `stats` of `count()` alone: ``BoundAggregate/countsRows``).
    mutating func addRow(_ leaf: (Bound) -> Value, censored: Bool, order: (Int64, UInt64, String), weight: Int = 1) {
        switch query.reduction {
        case .count(let by):
            // The key is built in a reused buffer: looking up an existing group allocates nothing.
            keyBuffer.removeAll(keepingCapacity: true)
            for column in by { keyBuffer.append(column.bound.evaluate(now: now, leaf)) }
            if !keyBuffer.contains(where: \.isSet) {
                counts[keyBuffer, default: 0] += weight
            } else {
                for key in keyCombinations(keyBuffer) { counts[key, default: 0] += weight }
            }
        case .top(_, let key):
            // The most frequent values: absent is not a value (rule 11), here or from an empty multi-select.
            keyBuffer.removeAll(keepingCapacity: true)
            keyBuffer.append(key.bound.evaluate(now: now, leaf))
            if !keyBuffer[0].isSet {
                if !keyBuffer[0].isNull { counts[keyBuffer, default: 0] += weight }
            } else {
                for k in keyCombinations(keyBuffer) where !k[0].isNull { counts[k, default: 0] += weight }
            }
        case .histogram(let value, let step):
            // A censored dwell has no value and no bucket: it is counted beside them (rule 7).
            if censored { histogramCensored += weight }
            guard let x = value.bound.evaluate(now: now, leaf).numeric, let bucket = HistogramBucket.start(of: x, step: step)
            else { return }
            let key: Value = value.type == .duration ? .duration(bucket) : .number(bucket)
            counts[[key], default: 0] += weight
        case .stats(let aggregates, let by, _):
            precondition(weight == 1 || aggregates.allSatisfy(\.countsRows), "a weighted row of stats other than count()")
            // Keys and arguments in reused buffers, and one hash lookup per group the row falls in: an array per
            // row and a lookup per aggregate cost a quarter of a dwell query (perf, session 5).
            keyBuffer.removeAll(keepingCapacity: true)
            for column in by { keyBuffer.append(column.bound.evaluate(now: now, leaf)) }
            argumentBuffer.removeAll(keepingCapacity: true)
            for aggregate in aggregates { argumentBuffer.append(aggregate.argument?.evaluate(now: now, leaf) ?? .null) }
            if !keyBuffer.contains(where: \.isSet) {
                addStats(keyBuffer, aggregates, censored: censored, weight: weight)
            } else {
                for key in keyCombinations(keyBuffer) { addStats(key, aggregates, censored: censored, weight: weight) }
            }
        case .funnel:
            break
        case nil:
            if let threshold = listThreshold, !(order < threshold) { return }
            if listLimit == 0 || listTop?.limit == 0 { return }
            if let top = listTop {
                // `sort … | limit N`: only the first N rows in the sort's order can reach the result. Cut back to them
                // now and then, ties broken by the listing's order as the stable sort breaks them: amortized
                // O(log N) per row, memory O(N) instead of every row (QA, session 7: `events | sort time desc |
                // limit 3` kept 3.6 M rows, 1.46 GB). After a cut, a row whose keys do not come before the last
                // row kept is dropped before its other columns are read.
                if let last = topThreshold {
                    let keys = top.keys.map { query.rowColumns[$0.column].bound.evaluate(now: now, leaf) }
                    let before = Sink.sortsBefore(keys, last.keys, top.keys.indices.map { ($0, top.keys[$0].descending) })
                    if !(before ?? (order < last.order)) { return }
                }
                listed.append((order, query.rowColumns.map { $0.bound.evaluate(now: now, leaf) }))
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
            listed.append((order, query.rowColumns.map { $0.bound.evaluate(now: now, leaf) }))
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
        func values(_ e: R) -> [Value] { FunnelMatcher.values(of: funnel.by, on: e, now: now) }
        if let matcher {
            let progress = matcher.progress(events)
            addChain(progress, firstStepKeys: funnel.by.isEmpty ? [] : progress.firstStep.map { values(events[$0]) })
        } else {
            let first = funnel.by.isEmpty ? nil : events.firstIndex { $0.screenIndex != nil }
            addScreenFunnel(summary, firstScreenKeys: first.map { values(events[$0]) } ?? [])
        }
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
                if case .count(let n) = stats.values[index].states[i] { stats.values[index].states[i] = .count(n + weight) }
            }
        }
        if censored { stats.values[index].censored += weight }
    }

    /// Adds a group of `rows` rows of a `stats` whose aggregates are `count()` (which adds `rows`) and
    /// `count_distinct` (whose entry in `distinct`, parallel to the aggregates, holds the group's distinct values);
    /// `leaf` gives the group's key fields, none of which is a set.
    mutating func addGroup(_ leaf: (Bound) -> Value, rows: Int, distinct: [Set<Value>?]) {
        guard case .stats(let aggregates, let by, _) = query.reduction else { return }
        keyBuffer.removeAll(keepingCapacity: true)
        for column in by { keyBuffer.append(column.bound.evaluate(now: now, leaf)) }
        precondition(!keyBuffer.contains(where: \.isSet) && distinct.count == aggregates.count, "not a coded stats group")
        if stats[keyBuffer] == nil { stats[keyBuffer] = (aggregates.map { AggregateState($0.function) }, 0) }
        let index = stats.index(forKey: keyBuffer)!
        for i in aggregates.indices {
            switch (stats.values[index].states[i], distinct[i]) {
            case (.count(let n), nil):
                stats.values[index].states[i] = .count(n + rows)
            case (.distinct(let set), let values?):
                stats.values[index].states[i] = .distinct(set.union(values))
            default:
                preconditionFailure("aggregate \(aggregates[i].name) is neither count() nor count_distinct")
            }
        }
    }

    /// Adds `n` to the count of a `count` without `by`.
    mutating func addCount(_ n: Int) { counts[[], default: 0] += n }

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
            if customFunnel[key] == nil { customFunnel[key] = ([Int](repeating: 0, count: n), [[Double]](repeating: [], count: n)) }
            for k in 0..<progress.level {
                customFunnel[key]!.reached[k] += 1
                customFunnel[key]!.times[k].append(elapsed(from: progress.times[0].microseconds, to: progress.times[k].microseconds))
            }
        }
    }

    /// Sizes the screen funnel's buffers for `sessions` sessions (a hint: they grow past it).
    mutating func expectSessions(_ sessions: Int) {
        guard !screenFunnelHasBy, case .funnel(let funnel) = query.reduction, funnel.steps.isEmpty else { return }
        if plainScreenFunnel == nil { plainScreenFunnel = ScreenStepTimes(expectedSessions: sessions) }
    }

    /// Adds a session to the screen funnel (rule 3); `firstScreenKeys` are the breakdown columns' values on the
    /// session's first event with a screen index (rule 12).
    mutating func addScreenFunnel(_ summary: SessionSummary, firstScreenKeys: [Value]) {
        let sessionSteps = max(summary.totalScreens ?? 0, (summary.furthestScreen ?? -1) + 1)
        screenCount = max(screenCount, sessionSteps)
        guard let furthest = summary.furthestScreen else { return }
        let started = summary.started.microseconds
        let reachTimes = summary.reachTimes  // one access to the class's property, not one per step
        if !screenFunnelHasBy {
            if let total = summary.totalScreens {
                if plainLengthMix == nil { plainLengthMix = LengthMix(total, summary.onboarding) } else { plainLengthMix!.add(total, summary.onboarding) }
            }
            let group = plainScreenFunnel ?? ScreenStepTimes()
            plainScreenFunnel = group
            group.add(started: started, reachTimes: reachTimes, furthest: furthest)
            return
        }
        let keys = keyCombinations(firstScreenKeys)
        for key in keys {
            if let total = summary.totalScreens {
                if lengthMix[key] == nil { lengthMix[key] = LengthMix(total, summary.onboarding) } else { lengthMix[key]!.add(total, summary.onboarding) }
            }
            // One lookup per session, then the entry is mutated in place through its index.
            var index = screenFunnel.index(forKey: key)
            if index == nil {
                screenFunnel[key] = (0, [], [])
                index = screenFunnel.index(forKey: key)
            }
            let entry = index!
            screenFunnel.values[entry].steps = max(screenFunnel.values[entry].steps, sessionSteps)
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

    func finish() -> ResultTable {
        let columns = query.columns
        switch query.reduction {
        case .count(let by):
            if by.isEmpty { return ResultTable(columns: columns, rows: [[.integer(Int64(counts[[]] ?? 0))]]) }
            let rows = counts.map { $0.key + [.integer(Int64($0.value))] }.sorted { keyOrder($0, $1, columns: by.count) }
            return ResultTable(columns: columns, rows: rows)
        case .top(let n, _):
            let rows = counts.map { $0.key + [.integer(Int64($0.value))] }.sorted { a, b in
                if a[1] != b[1] { return Value.sortsBefore(b[1], a[1]) }
                return keyOrder(a, b, columns: 1)
            }
            return ResultTable(columns: columns, rows: Array(rows.prefix(n)))
        case .histogram(let value, _):
            var rows = counts.map { $0.key + [.integer(Int64($0.value))] }.sorted { keyOrder($0, $1, columns: 1) }
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
                let groups: [(key: [Value], entry: (steps: Int, reached: [Int], times: [[Double]]))] = if byCount == 0 {
                    plainScreenFunnel.map { group in
                        let reached = group.reached
                        return [([], (screenCount, reached, group.takeTimes()))]
                    }
                        ?? (screenCount > 0 ? [([], (screenCount, [], []))] : [])
                } else {
                    screenFunnel.keys.sorted(by: { keyOrder($0, $1, columns: byCount) }).map { ($0, screenFunnel[$0]!) }
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
                        row += funnelCounts(reached, i)
                        row.append(Percentile.of(times, 0.5).map(Value.duration) ?? .null)
                        rows.append(row)
                    }
                }
            } else {
                let n = funnel.steps.count
                var groups = customFunnel
                if byCount == 0, groups.isEmpty { groups[[]] = ([Int](repeating: 0, count: n), [[Double]](repeating: [], count: n)) }
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

/// The sessions of a screen funnel without `by` that reached each step, and their times there, appended in place: a
/// growable buffer per step, without the capacity and uniqueness checks of an array nested in an array (an
/// `isUniquelyReferenced` call per session and step: callgrind, a fifth of a median onboarding's funnel after the scan).
///
/// A reference type: the sink holds the one instance and appends to it through the reference.
final class ScreenStepTimes {
    private struct Step {
        var times: UnsafeMutablePointer<Double>
        var count: Int
        var capacity: Int
    }

    @exclusivity(unchecked) private var steps: [Step] = []
    /// Each step's first buffer holds this many times: the sessions expected, so that a buffer does not grow (each
    /// growth copied it into fresh memory: a page fault per 4 KiB in a new process).
    private let initialCapacity: Int

    /// - Parameter expectedSessions: the sessions expected (0: unknown); buffers grow past it.
    init(expectedSessions: Int = 0) {
        // Memory is only touched as it fills: a large reservation costs address space, not pages.
        initialCapacity = min(max(expectedSessions, 64), 1 << 24)
    }

    deinit {
        for step in steps { step.times.deallocate() }
    }

    /// Adds a session that started at `started` (µs) and reached steps `0...furthest` at `reachTimes` (µs).
    func add(started: Int64, reachTimes: [Int64], furthest: Int) {
        while steps.count <= furthest {
            steps.append(Step(times: .allocate(capacity: initialCapacity), count: 0, capacity: initialCapacity))
        }
        steps.withUnsafeMutableBufferPointer { steps in
            reachTimes.withUnsafeBufferPointer { reach in
                for i in 0...furthest {
                    if steps[i].count == steps[i].capacity {
                        let bigger = UnsafeMutablePointer<Double>.allocate(capacity: steps[i].capacity * 2)
                        bigger.moveInitialize(from: steps[i].times, count: steps[i].count)
                        steps[i].times.deallocate()
                        steps[i].times = bigger
                        steps[i].capacity *= 2
                    }
                    (steps[i].times + steps[i].count).initialize(to: elapsed(from: started, to: reach[i]))
                    steps[i].count += 1
                }
            }
        }
    }

    /// Per step (up to the furthest one any session reached): the sessions that reached it.
    var reached: [Int] { steps.map(\.count) }

    /// Per step: the times the sessions reached it, in the order they were added; the buffers are freed, and the
    /// instance holds no step afterwards.
    ///
    /// Each step's buffer is freed as soon as it is copied, so the allocator can hand its memory to the next step's
    /// copy (the steps' counts never grow from one step to the next): a copy of every buffer into fresh memory was a
    /// page fault per 4 KiB in a new process (a median onboarding's funnel: 266 of them).
    func takeTimes() -> [[Double]] {
        var times: [[Double]] = []
        times.reserveCapacity(steps.count)
        for step in steps {
            times.append(Array(UnsafeBufferPointer(start: step.times, count: step.count)))
            step.times.deallocate()
        }
        steps = []
        return times
    }
}

/// How many rows a listing keeps for a `limit N` before cutting back to N: 2N + 1024, saturating (a limit near
/// `Int.max` overflowed it, QA session 7).
func listingCutPoint(_ limit: Int) -> Int {
    let (doubled, o1) = limit.multipliedReportingOverflow(by: 2)
    let (sum, o2) = doubled.addingReportingOverflow(1024)
    return o1 || o2 ? Int.max : sum
}

extension CheckedQuery {
    /// For a listing (no reduction) whose table stages start with `sort` and then `limit N`, after any `select`s:
    /// the sort's keys as columns of the listed rows (``rowColumns``) and N.
    var listTop: (keys: [(column: Int, descending: Bool)], limit: Int)? {
        guard reduction == nil else { return nil }
        var columns = Array(rowColumns.indices)  // the listed column behind each current column
        var sortKeys: [(column: Int, descending: Bool)]? = nil
        for stage in tableStages {
            switch stage {
            case .select(let indexes): columns = indexes.map { columns[$0] }
            case .sort(let keys) where sortKeys == nil: sortKeys = keys.map { (columns[$0.column], $0.descending) }
            case .limit(let n): return sortKeys.map { ($0, n) }
            case .where, .sort: return nil
            }
        }
        return nil
    }

    /// For a listing (no reduction) whose table stages start with `limit N`, after any `select` (which changes
    /// columns, not rows): N, the most rows the result can have of those the listing reads.
    var listLimit: Int? {
        guard reduction == nil else { return nil }
        for stage in tableStages {
            switch stage {
            case .select: continue
            case .limit(let n): return n
            case .where, .sort: return nil
            }
        }
        return nil
    }
}
