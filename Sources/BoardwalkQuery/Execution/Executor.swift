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

    mutating func run(on source: some EventSource) throws(QueryError) -> ResultTable {
        // Callers often hold `any EventSource` (the CLI does): opened here, the generic body would run
        // unspecialized, every field read a witness-table call with metadata lookups. Casting to the concrete
        // sources calls specialized copies.
        if let store = source as? StoreEventSource { return try execute(store) }
        if let memory = source as? InMemoryEventSource { return try execute(memory) }
        return try execute(source)
    }

    private mutating func execute<S: EventSource>(_ source: S) throws(QueryError) -> ResultTable {
        try cancellation?.throwIfCancelled(query: query.ast.text)
        if query.source == .lints {
            let report = try OnboardingLint().run(source)
            statistics.sessionsRead = report.sessions
            statistics.eventsRead = report.events
            return try applyTableStages(report.table)
        }
        // Closures below capture these locals, never `self`: touching `self` from a closure inside a mutating
        // method copies the whole executor per call.
        var sink = Sink(query: query, now: now)
        sink.ordersRows = !TableStage.orderIsUnseen(query.tableStages[...])
        var ticker = CancellationTicker(cancellation: cancellation, text: query.ast.text)
        var statistics = RunStatistics()
        let filters = CompiledBound(all: query.filters, now: now)
        let now = self.now
        let listing = query.reduction == nil
        let isFunnel = if case .funnel = query.reduction { true } else { false }
        let isPaths = if case .paths = query.reduction { true } else { false }
        let hasMatcher = query.hasCustomFunnel
        let needsSessionRows = query.needsSessionRows
        let summarize = query.source == .events && query.readsSessionProperties
        defer { self.statistics = statistics }
        func passes(_ leaf: (Bound) -> Value) -> Bool { filters.isTrue(leaf) }
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
            } else if isPaths {
                sink.addPaths(scanned)
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
        if plan.sessions != nil || plan.profiles != nil, let store = source as? StoreEventSource {
            // Sessions named by the filters, or those of the profiles they name: read through the session index,
            // not by scanning the ranges.
            func read(_ body: ([(id: String, rows: [StoreEventRow])]) throws(QueryError) -> Void) throws(QueryError) {
                if let names = plan.sessions {
                    try store.forNamedSessions(names, ranges: plan.ranges, body)
                } else {
                    try store.forProfileSessions(plan.profiles!, ranges: plan.ranges, body)
                }
            }
            try read { sessions throws(QueryError) in
                switch plan.access {
                case .sessions:
                    for (id, rows) in sessions { try take(session: id, rows) }
                case .sessionEvents:
                    var none: CodedFilter? = nil
                    for (id, rows) in sessions {
                        _ = try Executor.visit(
                            session: rows, id: id, summarize: summarize, &sink, &ticker, &statistics,
                            filters: filters, coded: &none)
                    }
                case .events:
                    // The events in the ranges, in the order a scan of the ranges would give them.
                    for row in StoreEventSource.keyOrdered(sessions.flatMap(\.rows), in: plan.ranges) {
                        _ = try Executor.visit(
                            row, &sink, &ticker, &statistics, filters: filters, listing: listing)
                    }
                }
            }
            return try applyTableStages(sink.finish())
        }
        if let limit = query.listLimit, let store = source as? StoreEventSource {
            // A listing that keeps its first `limit` rows: read the store from its earliest events on and stop once
            // they passed (StoreEventSource+EarlyStop.swift).
            if plan.access == .events {
                if plan.leanEvents && StoreEventSource.readsOnlyWhatEventQueriesNeed {
                    try store.scanEventsEarliestFirst(
                        plan.ranges, limit: limit, filters: query.filters, now: now,
                        row: { record, strings in
                            StoreFieldsRow(fields: try record.fields(.all), seq: record.seq, strings: strings)
                        }, enough: { sink.listedCount >= limit }
                    ) { row throws(QueryError) in
                        _ = try Executor.visit(
                            row, &sink, &ticker, &statistics, filters: filters, listing: listing)
                    }
                } else {
                    try store.scanEventsEarliestFirst(
                        plan.ranges, limit: limit, filters: query.filters, now: now,
                        row: { record, strings in StoreEventRow(view: try record.view(), strings: strings) },
                        enough: { sink.listedCount >= limit }
                    ) { row throws(QueryError) in
                        _ = try Executor.visit(
                            row, &sink, &ticker, &statistics, filters: filters, listing: listing)
                    }
                }
                return try applyTableStages(sink.finish())
            }
            if plan.access == .sessions, plan.ranges.count == 1, plan.ranges[0].isEverything {
                try store.forEachSessionEarliestFirst(limit: limit, cancellation: cancellation, text: query.ast.text) {
                    (id, rows) throws(QueryError) -> Bool in
                    try take(session: id, rows)
                    return sink.listedCount < limit
                }
                return try applyTableStages(sink.finish())
            }
        }
        switch plan.access {
        case .events:
            if let store = source as? StoreEventSource, StoreEventSource.readsOnlyWhatEventQueriesNeed {
                if let counts = plan.blockCounts {
                    // Counts from block headers: the filters were split by the plan and are checked there.
                    let reads = try store.countEvents(
                        plan.ranges, counts, now: now, cancellation: cancellation,
                        text: query.ast.text
                    ) { (leaf, n) throws(QueryError) in
                        sink.addRow(leaf, censored: false, order: (0, 0, ""), weight: n)
                    }
                    statistics.blocksCounted += reads.counted
                    statistics.blocksRead += reads.timed
                    statistics.eventsCounted += reads.events
                    break
                }
                if plan.leanEvents, let coded = plan.codedCount {
                    // Counts by field codes: no row per event.
                    statistics.eventsRead += try store.countByCodes(
                        plan.ranges, coded, now: now,
                        cancellation: cancellation, text: query.ast.text
                    ) {
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
                        try store.scanEventFields(range, filters: query.filters, now: now) { row throws(QueryError) in
                            try Executor.visit(
                                row, &sink, &ticker, &statistics, filters: filters, listing: listing)
                        }
                    }
                    break
                }
            }
            for range in plan.ranges {
                try source.scanEvents(range) { row throws(QueryError) in
                    try Executor.visit(row, &sink, &ticker, &statistics, filters: filters, listing: listing)
                }
            }
        case .sessionEvents where SessionProperties.readApart(query, plan.ranges, source):
            // Properties of each event's session, without dwell: the sessions the ranges meet are folded first, for
            // the properties the query names only; then the events in the ranges are read as an `events` query reads
            // them, each looking its session up.
            let store = source as! StoreEventSource
            let properties = SessionProperties(query, now: now)
            let split = SessionProperties.Split(query, now: now)
            let (lean, rest) = (split.lean, CompiledBound(all: split.rest, now: now))
            var coded = split.coded
            try properties.fold(
                store, plan.ranges, sessionFilters: split.sessionFilters, keep: split.keep, now: now,
                cancellation: cancellation, text: query.ast.text)
            statistics.sessionsRead += properties.count
            var eventQuery = query
            eventQuery.filters = split.eventPart
            if coded != nil, split.rest.isEmpty, !query.readsSessionPropertiesBeyondFilters,
                let codedCount = CodedCountPlan.make(eventQuery, now: now)
            {
                // Keys and aggregates of coded event fields: counted by field codes, as an `events` query counts them,
                // of the records whose session passes.
                statistics.eventsRead += try store.countByCodes(
                    plan.ranges, codedCount, now: now, cancellation: cancellation, text: query.ast.text,
                    keep: properties.passing
                ) { (leaf, n, distinct) throws(QueryError) in
                    if distinct.allSatisfy({ $0 == nil }) {
                        sink.addRow(leaf, censored: false, order: (0, 0, ""), weight: n)
                    } else {
                        sink.addGroup(leaf, rows: n, distinct: distinct)
                    }
                }
                break
            }
            for range in plan.ranges {
                if lean {
                    try store.scanEventFields(range, filters: query.filters, now: now) { row throws(QueryError) in
                        if coded != nil, !coded!.passes(row) || !properties.passes(row) {
                            try ticker.tick()
                            statistics.eventsRead += 1
                            return true
                        }
                        return try Executor.visit(
                            row, properties, &sink, &ticker, &statistics, filters: rest, listing: listing)
                    }
                } else {
                    try store.scanEvents(range) { row throws(QueryError) in
                        try Executor.visit(
                            row, properties, &sink, &ticker, &statistics, filters: filters, listing: listing)
                    }
                }
            }
        case .sessionEvents:
            if plan.leanEvents, let store = source as? StoreEventSource, StoreEventSource.readsOnlyWhatEventQueriesNeed
            {
                // Filters on coded fields alone (not `dwell`) are evaluated once per combination of their codes.
                var coded = CodedCountPlan.codedFields(of: query.filters).map {
                    CodedFilter(query.filters, fields: $0, now: now)
                }
                if Sink.merges(query.reduction) {
                    // Rows of a reduction whose sinks merge: the sessions may be gathered on several threads, each
                    // window's into a sink of its own, merged in the windows' order.
                    let checked = query, ordersRows = sink.ordersRows, cancellation = self.cancellation
                    let sharing = SessionRowsSharing<RowsShare, StoreFieldsRow>(
                        make: {
                            // Its own copy of the query's expressions: the threads evaluate them at once.
                            let own = checked.ownCopy()
                            var sink = Sink(query: own, now: now)
                            sink.ordersRows = ordersRows
                            return RowsShare(
                                sink: sink, filters: CompiledBound(all: own.filters, now: now),
                                coded: CodedCountPlan.codedFields(of: own.filters).map {
                                    CodedFilter(own.filters, fields: $0, now: now)
                                },
                                ticker: CancellationTicker(cancellation: cancellation, text: own.ast.text))
                        },
                        add: { (share, id, rows) throws(QueryError) in
                            _ = try Executor.visit(
                                session: rows, id: id, summarize: false, &share.sink, &share.ticker,
                                &share.statistics, filters: share.filters, coded: &share.coded)
                        },
                        merge: { share, other in
                            share.sink.merge(other.sink)
                            share.statistics.sessionsRead += other.statistics.sessionsRead
                            share.statistics.eventsRead += other.statistics.eventsRead
                        })
                    var share = RowsShare(sink: sink, filters: filters, coded: coded, ticker: ticker)
                    try store.scanSessionFields(
                        plan.ranges, cancellation: cancellation, text: query.ast.text, into: &share, sharing: sharing)
                    sink = share.sink
                    statistics.sessionsRead += share.statistics.sessionsRead
                    statistics.eventsRead += share.statistics.eventsRead
                    break
                }
                try store.scanSessionFields(plan.ranges, cancellation: cancellation, text: query.ast.text) {
                    (id, scanned) throws(QueryError) -> Bool in
                    try Executor.visit(
                        session: scanned, id: id, summarize: false, &sink, &ticker, &statistics, filters: filters,
                        coded: &coded)
                }
            } else {
                var none: CodedFilter? = nil
                try source.scanSessions(plan.ranges, cancellation: cancellation, text: query.ast.text) {
                    (id, scanned) throws(QueryError) -> Bool in
                    try Executor.visit(
                        session: scanned, id: id, summarize: summarize, &sink, &ticker, &statistics,
                        filters: filters, coded: &none)
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
            let sessionFilters = SessionFilters(query.filters, now: now)
            if query.reduction?.takesWeightedRows == true, plan.ranges.count == 1, plan.ranges[0].isEverything,
                let groups = try store.sessionCountsByProfile(
                    needs: needs, cancellation: cancellation, text: query.ast.text)
            {
                // Only the profile is read: the sessions of one profile are one row, weighted. Grouped by the profile
                // itself, the groups are the result's (the profiles' strings are distinct, as Swift compares them).
                let byProfile =
                    if case .count(let by)? = query.reduction { by.map(\.bound) == [.session(.profile)] } else { false }
                let summary = SessionSummary(id: "")
                func leaf(_ b: Bound) -> Value { summary.leaf(b) }
                if !byProfile { sink.expectGroups(groups.count) }
                for group in groups {
                    statistics.sessionsRead += group.sessions
                    summary.profile = group.profile
                    guard sessionFilters.passes(summary) else { continue }
                    if byProfile {
                        sink.addDistinctCount(leaf, weight: group.sessions)
                    } else {
                        sink.addRow(leaf, censored: false, order: (0, 0, ""), weight: group.sessions)
                    }
                }
                break
            }
            if !hasMatcher, !isFunnel, Sink.merges(query.reduction) {
                // Rows of a reduction whose sinks merge: a whole-store fold's sessions may be summarized and added on
                // several threads, each into a sink of its own, merged in the order one thread adds them.
                let sharing = SinkShare.sharing(query, now: now, ordersRows: sink.ordersRows) { sink, summary in
                    func leaf(_ b: Bound) -> Value { summary.leaf(b) }
                    sink.addRow(leaf, censored: false, order: (summary.started.microseconds, 0, summary.id))
                }
                var share = SinkShare(sink: sink, filters: sessionFilters)
                try store.foldSessions(
                    plan.ranges, needs: needs, cancellation: cancellation, text: query.ast.text, into: &share,
                    sharing: sharing)
                share.end(into: &sink, &statistics)
                break
            }
            var expected = 0
            try store.foldSessions(
                plan.ranges, needs: needs, cancellation: cancellation, text: query.ast.text,
                expecting: { expected = $0 }
            ) { (summary, funnelKeys, events) throws(QueryError) -> Bool in
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
                    sink.addScreenFunnel(
                        summary, firstScreenKeys: needs.sessionBy.isEmpty ? funnelKeys : needs.sessionKeys(summary))
                } else {
                    sink.addRow(leaf, censored: false, order: (summary.started.microseconds, 0, summary.id))
                }
                return true
            }
            // A custom funnel whose steps matched more events than its folds may keep: nothing was delivered. Each
            // session is folded from its records instead, one at a time, on several threads when the store allows
            // it: each run of sessions into a sink of its own, merged in the runs' order.
            if needs.stepTests?.overBudget == true {
                let sharing = SinkShare.sharing(query, now: now, ordersRows: sink.ordersRows) { sink, summary in
                    sink.addStepEvents(summary.stepEvents)
                }
                var share = SinkShare(sink: sink, filters: sessionFilters)
                try store.foldSessionRows(
                    plan.ranges, needs: needs, cancellation: cancellation, text: query.ast.text, into: &share,
                    sharing: sharing)
                share.end(into: &sink, &statistics)
            }
        case .sessions:
            try readSessionRows()
        }
        if let lengths = sink.screenFunnelLengths, lengths.lowerBound < lengths.upperBound {
            let whose = sink.screenFunnelHasBy ? "the sessions of a group of the funnel" : "the funnel's sessions"
            statistics.notes.append(
                QueryError(
                    .note,
                    "\(whose) come from onboardings of \(lengths.lowerBound) to "
                        + "\(lengths.upperBound) screens: a session that completed a shorter one counts as not reaching the later "
                        + "steps (rule 3); `funnel by onboarding`, or `where onboarding == \"…\"`, gives each its own"))
        }
        return try applyTableStages(sink.finish())
    }

    /// One event row's way through the filters into the reduction, whatever the row type. A static function
    /// taking the state `inout` from a closure literal: a local function capturing the executor's variables,
    /// passed as a closure, made every access to them a dynamic exclusivity check (callgrind: +2.5 % on a
    /// full-path `top 10 value`).
    @inline(__always)
    private static func visit<R: EventRow>(
        _ row: R, _ sink: inout Sink, _ ticker: inout CancellationTicker,
        _ statistics: inout RunStatistics, filters: CompiledBound,
        listing: Bool
    ) throws(QueryError) -> Bool {
        try ticker.tick()
        statistics.eventsRead += 1
        // A local function, not a closure value: a closure stored in a `let` escapes, and would allocate a
        // context holding a copy of the row on every event.
        func leaf(_ b: Bound) -> Value {
            if case .event(let f) = b { return row.value(f) }
            return .null
        }
        if filters.isTrue(leaf) {
            var time: Int64 = 0
            if listing, case .time(let t) = row.value(.time) { time = t.microseconds }
            sink.addRow(leaf, censored: false, order: (time, row.seq, ""))
        }
        return true
    }

    /// ``visit(_:_:_:_:filters:listing:)`` for a query that reads properties of each event's session, from
    /// `properties`.
    @inline(__always)
    private static func visit<R: EventRow>(
        _ row: R, _ properties: SessionProperties, _ sink: inout Sink, _ ticker: inout CancellationTicker,
        _ statistics: inout RunStatistics, filters: CompiledBound, listing: Bool
    ) throws(QueryError) -> Bool {
        try ticker.tick()
        statistics.eventsRead += 1
        // Looked up once per row, before the filters: a lazily set variable captured by `leaf` was a heap box
        // per row.
        let summary = properties.summary(of: row)
        func leaf(_ b: Bound) -> Value {
            switch b {
            case .event(let f): return row.value(f)
            case .ofSession(let property): return summary?.leaf(property) ?? .null
            default: return .null
            }
        }
        if filters.isTrue(leaf) {
            var time: Int64 = 0
            if listing, case .time(let t) = row.value(.time) { time = t.microseconds }
            sink.addRow(leaf, censored: false, order: (time, row.seq, ""))
        }
        return true
    }

    /// A session's event rows, in (time, seq) order, through the filters into the reduction, each with its dwell
    /// (rule 7), whatever the row type (see ``visit(_:_:_:_:filters:listing:)``).
    /// With `coded` (rows are then `StoreFieldsRow`s), the filters are checked through it.
    /// With `summarize`, the session is summarized first, for the filters and keys that read its properties
    /// (`session.completed`).
    private static func visit<R: EventRow>(
        session rows: [R], id: String, summarize: Bool, _ sink: inout Sink, _ ticker: inout CancellationTicker,
        _ statistics: inout RunStatistics, filters: CompiledBound,
        coded: inout CodedFilter?
    ) throws(QueryError) -> Bool {
        try ticker.tick(rows.count)
        statistics.sessionsRead += 1
        statistics.eventsRead += rows.count
        let dwell = dwellTimes(rows)
        var summary: SessionSummary?
        if summarize {
            summary = SessionSummary(id: id)
            for row in rows { summary!.add(row) }
        }
        for (i, row) in rows.enumerated() {
            func leaf(_ b: Bound) -> Value {
                switch b {
                case .event(.dwell):
                    if case .value(let d) = dwell[i] { return .duration(Double(d)) } else { return .null }
                case .event(let f):
                    return row.value(f)
                case .ofSession(let property):
                    return summary?.leaf(property) ?? .null
                default:
                    return .null
                }
            }
            let pass =
                if coded != nil, let lean = row as? StoreFieldsRow { coded!.passes(lean) } else {
                    filters.isTrue(leaf)
                }
            if pass {
                sink.addRow(leaf, censored: dwell[i] == .censored, order: (row.time.microseconds, row.seq, ""))
            }
        }
        return true
    }

    /// The stages after the first reduction (or the listing): `where`, `sort`, `limit`, `select` and further
    /// reductions, each over the rows of the stage before it.
    private func applyTableStages(_ table: ResultTable) throws(QueryError) -> ResultTable {
        var table = table
        for (index, stage) in query.tableStages.enumerated() {
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
            case .select(let selected):
                table.columns = selected.map(\.name)
                table.rows = table.rows.map { row in
                    selected.map { column in
                        column.bound.evaluate(now: now) { b in
                            if case .column(let i) = b { return row[i] }
                            return .null
                        }
                    }
                }
            case .reduce(let reduction, let columns):
                // The rows so far are the input of a reduction like the first one: each column a field.
                let input = CheckedQuery(
                    ast: query.ast, source: query.source, filters: [], reduction: reduction, rowColumns: [],
                    tableStages: [], columns: columns, explain: false)
                var sink = Sink(query: input, now: now)
                sink.ordersRows = !TableStage.orderIsUnseen(query.tableStages[(index + 1)...])
                for (position, row) in table.rows.enumerated() {
                    sink.addRow(
                        { b in
                            if case .column(let i) = b { return row[i] }
                            return .null
                        }, censored: false, order: (0, UInt64(position), ""))
                }
                table = sink.finish()
            case .versus(let versus):
                table = try versus.apply(table, query: query.ast.text)
            }
        }
        return table
    }
}

/// A share of a split gathering of sessions as rows (``SessionRowsSharing``): the rows of its sessions in a sink of
/// its own, the filters they pass through (compiled, and by field codes), its cancellation ticker, and what it read.
private struct RowsShare {
    var sink: Sink
    let filters: CompiledBound
    var coded: CodedFilter?
    var ticker: CancellationTicker
    var statistics = RunStatistics()
}

/// A share of a split session delivery (``SessionSharing``): the rows of its sessions in a sink of its own, the
/// filters they pass through, and how many sessions and events it took.
private struct SinkShare {
    var sink: Sink
    let filters: SessionFilters
    var sessions = 0
    var events = 0

    /// How the sessions of `query` go into shares of this kind, on several threads: each share's sink and filters
    /// have their own copy of the query's expressions (the threads evaluate them at once); a session that passes
    /// the filters goes into the share's sink through `add`; shares merge their sinks (``Sink/merge(_:)``) and counts.
    static func sharing(
        _ query: CheckedQuery, now: Timestamp, ordersRows: Bool, add: @escaping (inout Sink, SessionSummary) -> Void
    ) -> SessionSharing<SinkShare> {
        SessionSharing<SinkShare>(
            make: {
                let own = query.ownCopy()
                var sink = Sink(query: own, now: now)
                sink.ordersRows = ordersRows
                return SinkShare(sink: sink, filters: SessionFilters(own.filters, now: now))
            },
            add: { (share, summary, events) throws(QueryError) in
                share.sessions += 1
                share.events += events
                guard share.filters.passes(summary) else { return }
                add(&share.sink, summary)
            },
            merge: { share, other in
                share.sink.merge(other.sink)
                share.sessions += other.sessions
                share.events += other.events
            })
    }

    /// Hands the share's sink to `sink` and counts its sessions and events into `statistics`.
    consuming func end(into sink: inout Sink, _ statistics: inout RunStatistics) {
        sink = self.sink
        statistics.sessionsRead += sessions
        statistics.eventsRead += events
    }
}
