import BoardwalkModel

/// How a query reads its source, decided from its filters before anything runs.
struct Plan: Sendable {
    enum Access: Sendable {
        /// Stream events in key ranges (`events` without `dwell`).
        case events
        /// Read whole sessions that have events in the ranges (`sessions`).
        case sessions
        /// Read whole sessions, then stream their events (`events` reading `dwell`, which needs each event's
        /// session around it).
        case sessionEvents
    }

    var access: Access
    /// Key ranges read; empty when the filters can match nothing.
    var ranges: [ScanRange]
    /// For `events` counts on a store: how block keys and headers answer them without reading records.
    var blockCounts: BlockCountPlan? = nil
    /// For other `events` queries on a store (those reading `dwell` too, which is computed from lean fields):
    /// whether every field the query reads is one the codec's `RecordFields` reads, so that records need not be
    /// decoded whole (``EventField/isLean``).
    var leanEvents = false
    /// For lean `events` counts by plain fields on a store: counted by field codes, without a row per event.
    var codedCount: CodedCountPlan? = nil
    /// The sessions named by `session == "…"` or `session in [...]` among the leading conjuncts, sorted; `nil`
    /// when none is named. A store reads them through its session index instead of scanning the ranges
    /// (``StoreEventSource/forNamedSessions(_:ranges:_:)``); the ranges still say which of their events count.
    var sessions: [String]? = nil
    /// The profiles named by `profile == "…"` or `profile in [...]` among the leading conjuncts, sorted; `nil` when
    /// none is named. A store reads the sessions whose events carry one of them through its `session_names` index
    /// (``StoreEventSource/forProfileSessions(_:ranges:_:)``), unless ``sessions`` names fewer.
    var profiles: [String]? = nil

    /// The planner: predicates on onboarding, screen and time (conjuncts of the leading `where` stages, compared
    /// with constants) become key ranges; everything else is checked row by row.
    ///
    /// For `sessions`, `onboarding` narrows to that onboarding's keys; `started >`/`>=` and `ended <`/`<=` bound
    /// time (every event of such a session is inside the bound); `furthest_screen >=`/`>`/`==` and `reached(n)`
    /// bound screens from below, used only when the onboarding is not also narrowed (a session with events in
    /// two onboardings could otherwise be missed). `started <`/`<=` bounds time from above (the session's first
    /// event is then in the range) when neither the onboarding nor the screens are narrowed. A `sessions` range
    /// only lists the sessions to read: each is read whole. Rows read are always re-checked against the full filters.
    ///
    /// `session ==` and `session in [...]` (the event field or the session field) name the sessions to read
    /// (``sessions``), whatever the source, when each name has one spelling (``hasOneSpelling(_:)``).
    static func make(_ query: CheckedQuery, now: Timestamp) -> Plan {
        let access: Access =
            query.source == .sessions
            ? .sessions : (query.readsDwell || query.readsSessionProperties ? .sessionEvents : .events)
        var onboardings: Set<String>?
        var sessions: Set<String>?
        var profiles: Set<String>?
        var screens = (low: 0, high: Meta.maxScreenIndex)
        var sessionScreenLow: Int?
        /// The latest `started` allowed by `started <`/`<=`/`==` (a bound on the session's first event only).
        var startedHigh: Int64?
        var time = (low: Int64.min, high: Int64.max)

        var conjuncts: [Bound] = []
        func flatten(_ b: Bound) {
            if case .and(let l, let r) = b { flatten(l); flatten(r) } else { conjuncts.append(b) }
        }
        query.filters.forEach(flatten)

        func constant(_ b: Bound) -> Value? {
            guard b.isConstant else { return nil }
            return b.evaluate(now: now) { _ in .null }
        }
        func narrow(_ set: Set<String>) {
            onboardings = onboardings.map { $0.intersection(set) } ?? set
        }
        func narrow(sessions set: Set<String>) {
            // The store finds a name by its bytes, the filter compares strings as Swift does (canonical equivalence):
            // only names that no other spelling equals narrow the read; the others are checked on every row.
            guard set.allSatisfy(Plan.hasOneSpelling) else { return }
            sessions = sessions.map { $0.intersection(set) } ?? set
        }
        func narrow(profiles set: Set<String>) {
            guard set.allSatisfy(Plan.hasOneSpelling) else { return }
            profiles = profiles.map { $0.intersection(set) } ?? set
        }

        for conjunct in conjuncts {
            switch conjunct {
            case .member(let field, let items, negated: false):
                let isOnboarding = field == .event(.onboarding) || field == .session(.onboarding)
                let isProfile = field == .event(.profile) || field == .session(.profile)
                guard isOnboarding || isProfile || field == .event(.session) || field == .session(.session) else {
                    continue
                }
                var set: Set<String> = []
                var all = true
                for item in items {
                    if case .string(let s)? = constant(item) { set.insert(s) } else { all = false }
                }
                if all, isOnboarding {
                    narrow(set)
                } else if all, isProfile {
                    narrow(profiles: set)
                } else if all {
                    narrow(sessions: set)
                }
            case .reached(let n) where query.source == .sessions:
                sessionScreenLow = max(sessionScreenLow ?? 0, n)
            case .compare(let op, let a, let b):
                var (field, op, value) = (a, op, constant(b))
                if value == nil, let v = constant(a) { (field, op, value) = (b, op.flipped, v) }
                guard let value else { continue }
                switch (field, value) {
                case (.event(.onboarding), .string(let s)), (.session(.onboarding), .string(let s)):
                    if op == .equal { narrow([s]) }
                case (.event(.session), .string(let s)), (.session(.session), .string(let s)):
                    if op == .equal { narrow(sessions: [s]) }
                case (.event(.profile), .string(let s)), (.session(.profile), .string(let s)):
                    if op == .equal { narrow(profiles: [s]) }
                case (.event(.screen), _):
                    guard let v = value.numeric, op != .notEqual else { continue }
                    let (low, high) = integerBounds(op, v)
                    screens = (max(screens.low, low), min(screens.high, high))
                case (.session(.furthestScreen), _):
                    guard let v = value.numeric, op == .equal || op == .greater || op == .greaterEqual else { continue }
                    let (low, _) = integerBounds(op == .equal ? .greaterEqual : op, v)
                    sessionScreenLow = max(sessionScreenLow ?? 0, low)
                case (.event(.time), .time(let t)):
                    guard op != .notEqual else { continue }
                    let (low, high) = bounds64(op, Double(t.microseconds), exact: t.microseconds)
                    time = (max(time.low, low), min(time.high, high))
                case (.session(.started), .time(let t)) where op == .greater || op == .greaterEqual || op == .equal:
                    time.low = max(time.low, op == .greater ? t.microseconds &+ 1 : t.microseconds)
                case (.session(.ended), .time(let t)) where op == .less || op == .lessEqual || op == .equal:
                    time.high = min(time.high, op == .less ? t.microseconds &- 1 : t.microseconds)
                case (.session(.started), .time(let t)) where op == .less || op == .lessEqual || op == .equal:
                    startedHigh = min(startedHigh ?? .max, op == .less ? t.microseconds &- 1 : t.microseconds)
                default:
                    continue
                }
            default:
                continue
            }
        }
        if query.source == .sessions, let low = sessionScreenLow, onboardings == nil {
            screens.low = max(screens.low, low)
        } else if query.source == .sessions, let high = startedHigh, onboardings == nil {
            // The session's first event is in every range above (at or after each `started >=` bound, before or at
            // each `ended <=` bound): with this bound too, a scan of the whole store still meets it. Not with a
            // screen or onboarding narrowed: the event they need may come later than the first.
            time.high = min(time.high, high)
        }
        var plan = Plan(access: access, ranges: [])
        plan.sessions = sessions?.sorted()
        plan.profiles = profiles?.sorted()
        if access == .events {
            plan.blockCounts = BlockCountPlan.make(query, now: now)
            plan.leanEvents = query.readsOnly(\.isLean)
            if plan.leanEvents { plan.codedCount = CodedCountPlan.make(query, now: now) }
        } else if access == .sessionEvents {
            // Dwell is computed from the session's rows (kind, name, screen and time: lean fields).
            plan.leanEvents = query.readsOnly { $0.isLean || $0 == .dwell }
        }
        guard screens.low <= screens.high, time.low <= time.high, onboardings?.isEmpty != true,
            sessions?.isEmpty != true, profiles?.isEmpty != true
        else { return plan }
        let keys: [String?] = onboardings.map { $0.sorted().map(Optional.some) } ?? [nil]
        plan.ranges = keys.map {
            ScanRange(onboarding: $0, screens: screens.low...screens.high, time: time.low...time.high)
        }
        return plan
    }

    /// Whether no other string is equal to `name` under Swift's `==` (canonical equivalence), so that looking it up
    /// by its bytes finds every string the filter matches: ASCII without `K`, `;` and `` ` ``, which U+212A
    /// (Kelvin sign), U+037E (Greek question mark) and U+1FEF (Greek varia) decompose to. Session ids (UUIDs and
    /// the like) are.
    /// - Complexity: O(bytes), over the string's contiguous bytes when it has them (a native string does).
    static func hasOneSpelling(_ name: String) -> Bool {
        func single(_ byte: UInt8) -> Bool {
            byte < 0x80 && byte != UInt8(ascii: "K") && byte != UInt8(ascii: ";") && byte != UInt8(ascii: "`")
        }
        return name.utf8.withContiguousStorageIfAvailable { $0.allSatisfy(single) } ?? name.utf8.allSatisfy(single)
    }

    /// Integer bounds `low...high` of the integers `x` with `x op v`.
    private static func integerBounds(_ op: BinaryOperator, _ v: Double) -> (Int, Int) {
        let (l, h) = bounds64(op, v, exact: nil)
        return (Int(clamping: l), Int(clamping: h))
    }

    private static func bounds64(_ op: BinaryOperator, _ v: Double, exact: Int64?) -> (Int64, Int64) {
        func floorI(_ d: Double) -> Int64 {
            exact ?? (d.magnitude < 9e18 ? Int64(d.rounded(.down)) : (d < 0 ? .min : .max))
        }
        func ceilI(_ d: Double) -> Int64 {
            exact ?? (d.magnitude < 9e18 ? Int64(d.rounded(.up)) : (d < 0 ? .min : .max))
        }
        switch op {
        case .equal: return ceilI(v) == floorI(v) ? (floorI(v), floorI(v)) : (1, 0)
        case .greaterEqual: return (ceilI(v), .max)
        case .greater: return (floorI(v) &+ 1 == .min ? .max : floorI(v) &+ 1, .max)
        case .lessEqual: return (.min, floorI(v))
        case .less: return (.min, ceilI(v) == .min ? .min : ceilI(v) &- 1)
        default: return (.min, .max)
        }
    }

    /// Whether the plan's scan may be split across threads (``StoreEventSource/threads``): a count by field codes, a
    /// session fold of the whole store or of whole onboardings (from a time on too), or the fold of the `session.`
    /// properties an `events` query reads apart.
    private func splits(_ query: CheckedQuery, source: some EventSource) -> Bool {
        guard sessions == nil, profiles == nil else { return false }
        switch access {
        case .events:
            // Counts from the blocks' headers, and counts by field codes.
            return StoreEventSource.readsOnlyWhatEventQueriesNeed
                && (blockCounts != nil || leanEvents && codedCount != nil)
        case .sessions:
            guard !query.needsSessionRows, !query.countsEverySession else { return false }
            // A listing cut by `limit` reads windows of time from the earliest event on (the `stop:` line).
            if query.listLimit != nil, ranges.count == 1, ranges[0].isEverything { return false }
            return (foldsWhole || StoreEventSource.sinceStart(ranges) != nil) && !namesFold(query, source)
        case .sessionEvents:
            // The properties' fold is split when it folds the whole store or whole onboardings; the events' count when
            // it is counted by field codes.
            return SessionProperties.readApart(query, ranges, source)
                && (foldsWhole || StoreEventSource.readsOnlyWhatEventQueriesNeed && codedCount != nil)
        }
    }

    /// The fold needs of a `sessions` query that folds the whole store (``StoreEventSource/foldSessions``), nil for any
    /// other plan.
    private func wholeStoreFold(_ query: CheckedQuery, _ source: some EventSource) -> FoldNeeds? {
        guard access == .sessions, source is StoreEventSource, ranges.count == 1, ranges[0].isEverything,
            !query.needsSessionRows, !query.countsEverySession
        else { return nil }
        return FoldNeeds(query, now: Timestamp(microseconds: 0))
    }

    /// Whether a `sessions` query over the whole store folds the session index instead of the event blocks
    /// (``StoreEventSource/foldsFromSessionIndex(_:)``).
    private func indexFold(_ query: CheckedQuery, _ source: some EventSource) -> Bool {
        wholeStoreFold(query, source).map(StoreEventSource.foldsFromSessionIndex) ?? false
    }

    /// Whether a `sessions` query over the whole store reads the sessions' profiles from `session_names`
    /// (``StoreEventSource/foldsFromSessionNames(_:)``).
    private func namesFold(_ query: CheckedQuery, _ source: some EventSource) -> Bool {
        wholeStoreFold(query, source).map(StoreEventSource.foldsFromSessionNames) ?? false
    }

    /// Whether the ranges are the whole store, or whole onboardings: what a split session fold reads.
    private var foldsWhole: Bool {
        guard !ranges.isEmpty else { return false }
        return ranges.count == 1 && ranges[0].isEverything
            || ranges.allSatisfy {
                $0.onboarding != nil && $0.screens == ScanRange.allScreens && $0.time == ScanRange.allTime
            }
    }

    /// What `explain` adds to a cheaper path's reads when conjuncts of the filters read only kind codes and groups.
    private func steppingOver(_ query: CheckedQuery) -> String {
        KindCodeFilters.conjuncts(of: query.filters).isEmpty
            ? "" : "; blocks whose headers count no event that can pass the filters stepped over unread"
    }

    /// The plan as text: how the source is read and the key ranges.
    func describe(_ query: CheckedQuery, source: some EventSource) -> String {
        if query.source == .lints {
            return "read: every session once, its events checked by the onboarding lints (as `boardwalk lint` does); "
                + "one row per finding\n  range \(ScanRange()) (the whole store)"
                + (query.tableStages.isEmpty ? "" : "\nthen: \(query.tableStages.count) table stage(s)")
        }
        var lines: [String] = []
        if let names = sessions, source is StoreEventSource {
            let named = names.count == 1 ? "session `\(names[0])`" : "\(names.count) sessions"
            lines.append(
                "read: the \(named) named by the filters, through the store's session_names index (each name "
                    + "found by its hash), then each session's events, whole, through the session index"
                    + (access == .events ? "; the events in the ranges, in key order" : ""))
        } else if let names = profiles, source is StoreEventSource {
            let named = names.count == 1 ? "profile `\(names[0])`" : "\(names.count) profiles"
            lines.append(
                "read: the sessions of the \(named) named by the filters, through the store's session_names index "
                    + "(each name found by its hash), then each session's events, whole, through the session index"
                    + (access == .events ? "; the events in the ranges, in key order" : ""))
        } else {
            switch access {
            case .events
            where source is StoreEventSource && StoreEventSource.readsOnlyWhatEventQueriesNeed && blockCounts != nil:
                let kinds = blockCounts!.readsKinds
                lines.append(
                    "read: event blocks' keys and headers (onboarding, screen, first time; count, time span"
                        + (kinds ? ", kind counts" : "") + "), no record decoded"
                        + ": blocks inside the time range counted from their headers, blocks it cuts read for their "
                        + "events' times" + (kinds ? " and kinds" : ""))
            case .events
            where source is StoreEventSource && StoreEventSource.readsOnlyWhatEventQueriesNeed && leanEvents:
                lines.append(
                    "read: event keys (onboarding, screen, time, seq), each record's leading fields only (no screen_cid, "
                        + "event_id, value or label read)" + (codedCount == nil ? "" : ", counted by field codes")
                        + steppingOver(query))
            case .events: lines.append("read: event keys (onboarding, screen, time, seq)")
            case .sessions where source is StoreEventSource && query.countsEverySession:
                lines.append("read: the store's count of distinct sessions (meta), no event")
            case .sessions
            where source is StoreEventSource && ranges.count == 1 && ranges[0].isEverything
                && !query.needsSessionRows:
                let needs = wholeStoreFold(query, source)
                if needs.map(StoreEventSource.foldsFromSessionNames) == true {
                    lines.append(
                        "read: the store's session_names index (each session's id and the profiles its events carry), "
                            + "no event"
                            + (query.reduction?.takesWeightedRows == true
                                ? ", each profile's sessions reduced as one row of their number" : "")
                            + "; when it cannot tell (a session whose events carry two profiles, two profile "
                            + "ids that compare equal as strings), every event once in key order instead, on up to "
                            + "\(StoreEventSource.threads) threads")
                } else if let needs, StoreEventSource.foldsFromSessionIndex(needs), needs.firstsOnly {
                    lines.append(
                        "read: the session index once, the first reference of each run (a session's earliest event of a "
                            + "batch) and its first with a screen when the query reads the onboarding, the rest skipped "
                            + "(every reference, in key order, when two onboarding ids compare equal as strings); "
                            + Plan.sessionIndexExtras(needs))
                } else if let needs, StoreEventSource.foldsFromSessionIndex(needs) {
                    lines.append(
                        "read: the session index once (each event's onboarding, screen, time and seq, session by "
                            + "session), folded into per-session summaries in memory; " + Plan.sessionIndexExtras(needs)
                    )
                } else {
                    lines.append("read: every event once in key order, folded into per-session summaries in memory")
                }
            case .sessions where source is StoreEventSource && !query.needsSessionRows && foldsWhole:
                lines.append(
                    "read: sessions of the onboardings from the onboarding_sessions index; their events by a scan of each "
                        + "onboarding's keys, folded per session in memory (the sessions listed in spanning_sessions, with events "
                        + "in another onboarding or without a position, through the store's session index)")
            case .sessions
            where source is StoreEventSource && !query.needsSessionRows && StoreEventSource.sinceStart(ranges) != nil:
                lines.append(
                    "read: the sessions whose first event stored in the onboarding is at or after the range's start "
                        + "(onboarding_sessions); their events from that time on by a scan of the keys, folded per session in "
                        + "memory; the batches stored since the earliest event met, for events before that time that came in later "
                        + "(their sessions started before it and are dropped); sessions in spanning_sessions through the store's "
                        + "session index")
            case .sessions where source is StoreEventSource:
                lines.append("read: sessions with events in the ranges, " + StoreEventSource.sessionReading)
            case .sessions:
                lines.append("read: sessions with events in the ranges, through the \(source.sessionAccess)")
            case .sessionEvents where SessionProperties.readApart(query, ranges, source):
                lines.append(
                    (SessionProperties.readsFlags(query)
                        ? "read: the sessions with events of the kinds and names the `session.` properties ask for, "
                            + "from the blocks whose headers count such events: of the ranges' onboardings and of events "
                            + "without a position, with the sessions that span onboardings read whole through the session "
                            + "index, when that reads less than the whole store; else over the whole store"
                        : "read: sessions with events in the ranges, folded for the `session.` properties the query "
                            + "reads, " + StoreEventSource.sessionReading)
                        + "; then the events in the ranges in key order, each with its session's properties"
                        + (StoreEventSource.readsOnlyWhatEventQueriesNeed && query.readsOnlyOrSessions(\.isLean)
                            ? "; each record's leading fields only (no screen_cid, event_id, value or label read)"
                                + steppingOver(query) : "")
                )
            case .sessionEvents where source is StoreEventSource:
                lines.append(
                    "read: sessions with events in the ranges, all their events (dwell needs each event's session), "
                        + StoreEventSource.sessionReading
                        + (leanEvents && StoreEventSource.readsOnlyWhatEventQueriesNeed
                            ? "; each record's leading fields only (no screen_cid, event_id, value or label read)" : "")
                )
            case .sessionEvents:
                lines.append(
                    "read: sessions with events in the ranges, through the \(source.sessionAccess) (dwell needs each event's session)"
                )
            }
        }
        if ranges.isEmpty { lines.append("  no ranges: the filters match nothing") }
        for range in ranges { lines.append("  range \(range)\(range.isEverything ? " (the whole store)" : "")") }
        if source is StoreEventSource, splits(query, source: source) {
            let threads = StoreEventSource.threads
            let merged =
                switch access {
                case .events: "counted"
                case .sessions: "folded"
                case .sessionEvents: "folded or counted"
                }
            lines.append(
                threads == 1
                    ? "threads: 1"
                    : indexFold(query, source)
                        ? "threads: up to \(threads), each reading ranges of the session index's buckets (no session in "
                            + "two) and merging what it folded; a store of fewer than "
                            + "\(2 * StoreEventSource.minimumPartEvents) events runs on one thread"
                        : "threads: up to \(threads), each reading parts of the ranges (an onboarding, or a time slice of "
                            + "one, of \(StoreEventSource.minimumPartEvents) events or more) and merging what it "
                            + "\(merged); fewer events run on one thread")
        }
        let filterCount = query.filters.count
        let stages = "\(filterCount) `where` stage\(filterCount == 1 ? "" : "s")"
        if sessions != nil || profiles != nil, source is StoreEventSource {
            lines.append("filter: \(stages), checked on every row read")
        } else if let counts = blockCounts, source is StoreEventSource, StoreEventSource.readsOnlyWhatEventQueriesNeed,
            filterCount > 0
        {
            lines.append("filter: \(stages), \(counts.filterDescription)")
        } else if let coded = codedCount, leanEvents, source is StoreEventSource,
            StoreEventSource.readsOnlyWhatEventQueriesNeed,
            filterCount > 0
        {
            let timed = coded.time != (Int64.min, Int64.max)
            var parts: [String] = timed ? ["time comparisons as the scan's time range"] : []
            let what = timed ? "the rest" : "checked"
            if coded.filtersOnKindCodes {
                parts.append(
                    "\(timed ? "the rest checked" : "checked") on each record's kind code, once per group and code")
            } else if let fields = coded.filterFields, !coded.filters.isEmpty {
                parts.append(
                    "\(timed ? "the rest checked" : "checked") once per combination of the codes of "
                        + fields.map(\.rawValue).joined(separator: ", ") + " (at most 65 536 kept, then on every row)")
            } else if !coded.filters.isEmpty {
                parts.append("\(what == "checked" ? "checked" : "the rest checked") on every row read")
            }
            lines.append("filter: \(stages), " + parts.joined(separator: "; "))
        } else if access == .sessionEvents, leanEvents, source is StoreEventSource,
            StoreEventSource.readsOnlyWhatEventQueriesNeed,
            filterCount > 0, let fields = CodedCountPlan.codedFields(of: query.filters)
        {
            lines.append(
                "filter: \(stages), checked once per combination of the codes of "
                    + fields.map(\.rawValue).joined(separator: ", ") + " (at most 65 536 kept, then on every row)")
        } else {
            lines.append(
                "filter: \(filterCount == 0 ? "none" : "\(filterCount) `where` stage\(filterCount == 1 ? "" : "s"), checked on every row read")"
            )
        }
        let reduction: String =
            switch query.reduction {
            case .count(let by): by.isEmpty ? "count" : "count by \(by.map(\.name).joined(separator: ", "))"
            case .stats(let aggregates, let by, _):
                "stats \(aggregates.map(\.name).joined(separator: ", "))"
                    + (by.isEmpty ? "" : " by \(by.map(\.name).joined(separator: ", "))")
            case .top(let n, let key): "top \(n) \(key.name)"
            case .histogram(let value, let step):
                "histogram of \(value.name), step \(Value.tableText(value.type == .duration ? .duration(step) : .number(step)))"
            case .funnel(let f):
                f.steps.isEmpty ? "screen funnel" : "funnel of \(f.steps.count) steps, mode \(f.mode.rawValue)"
            case .paths(let p): p.description
            case nil: "list rows"
            }
        lines.append("reduce: \(reduction)")
        if let limit = query.listLimit, source is StoreEventSource, sessions == nil, profiles == nil,
            access == .events || (access == .sessions && ranges.count == 1 && ranges[0].isEverything)
        {
            lines.append(
                "stop: after the window of time in which \(limit) row\(limit == 1 ? "" : "s") passed (windows from the "
                    + "earliest event on, each twice as wide as the one before"
                    + (access == .sessions ? "; each window's new sessions read whole, in order of their start)" : ")"))
        }
        if !query.tableStages.isEmpty { lines.append("then: \(query.tableStages.count) table stage(s)") }
        return lines.joined(separator: "\n")
    }
}

extension CheckedQuery {
    /// Whether the reduction is a funnel of custom steps, which matches each session's events in order.
    var hasCustomFunnel: Bool { if case .funnel(let f) = reduction, !f.steps.isEmpty { true } else { false } }

    /// Whether the query is `sessions | count` and nothing else before its table stages: the number of distinct
    /// sessions, which the store keeps as a counter.
    var countsEverySession: Bool { source == .sessions && filters.isEmpty && reduction == .count(by: []) }

    /// Whether the reduction needs every event of each session as a row, in order: a funnel of more steps than a
    /// fold's step mask holds (``StepEvent/maxSteps``). Other funnels of custom steps need only their step events,
    /// which a session fold keeps (``FoldNeeds/stepTests``; in `strict` mode with a breaker for every event not
    /// ignored). `paths` reads each session's events in order too.
    var needsSessionRows: Bool {
        if case .paths = reduction { return true }
        guard case .funnel(let f) = reduction else { return false }
        // A breakdown by what the session is reads its summary beside its events, unless the breakdown reads nothing
        // else (a fold's summary gives it).
        if readsSessionProperties && !screenFunnelBySession { return true }
        return !f.steps.isEmpty && f.steps.count > StepEvent.maxSteps
    }

    /// Whether the reduction is a screen funnel broken down by what the session is alone (`by answer("goal")`, `by
    /// session.variation`): no column reads an event field, so a session fold's summary gives every value
    /// (``FoldNeeds/sessionBy``) and the sessions need not be read as rows.
    var screenFunnelBySession: Bool {
        guard case .funnel(let f) = reduction, f.steps.isEmpty, !f.by.isEmpty else { return false }
        return f.by.allSatisfy { column in
            !column.bound.contains { if case .event = $0 { true } else { false } }
        }
    }
}

extension BinaryOperator {
    /// The operator with its operands swapped: `a < b` is `b > a`.
    var flipped: BinaryOperator {
        switch self {
        case .less: .greater
        case .lessEqual: .greaterEqual
        case .greater: .less
        case .greaterEqual: .lessEqual
        default: self
        }
    }
}

extension Bound {
    /// Whether the expression depends on no row: literals, `now()`, and arithmetic on them.
    var isConstant: Bool {
        switch self {
        case .literal, .now: true
        case .arithmetic(_, let a, let b): a.isConstant && b.isConstant
        case .negate(let a), .bucket(_, let a, _), .year(let a, _), .present(let a): a.isConstant
        default: false
        }
    }
}

extension Plan {
    /// What a fold of the session index reads beside the index (``FoldNeeds/firstValues``, ``FoldNeeds/eventFlags``),
    /// for `explain`.
    static func sessionIndexExtras(_ needs: FoldNeeds) -> String {
        var reads: [String] = []
        if needs.firstValues {
            let fields = [("profile", needs.profile), ("placement", needs.placement), ("variation", needs.variation)]
            reads.append(
                "each session's earliest event for its first "
                    + fields.filter(\.1).map(\.0).joined(separator: ", ")
                    + " (the blocks that hold them walked once in key order; a session whose earliest event lacks one, "
                    + "its events in time order)")
        }
        if !needs.eventFlags.isEmpty {
            let flags = needs.eventFlags.map { flag in
                switch flag {
                case .kind(let kind): kind.rawValue
                case .name(let name): name
                }
            }
            reads.append(
                "the events of the blocks whose kind counts hold " + flags.joined(separator: ", ")
                    + ", for the sessions that have one (when the blocks' headers say those blocks hold fewer events than "
                    + "a fold of every event reads; else every event once in key order instead)")
        }
        guard !reads.isEmpty else { return "no event block" }
        return "beside it, " + reads.joined(separator: "; ")
            + (reads.count > 1 ? " (the two on two threads when allowed)" : "")
    }
}
