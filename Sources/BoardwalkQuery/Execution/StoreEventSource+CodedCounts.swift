import BoardwalkCodec
import BoardwalkModel
import BoardwalkStore

extension StoreEventSource {
    /// Counts the events of `ranges` that pass the plan's filters and time range, grouped by the field codes of
    /// `plan.keys` (records
    /// read through `RecordFields`, as ``scanEventFields(_:filters:now:_:)`` reads them); then calls `body` once per group
    /// with its field reader (the key fields' values) and its count. Returns the number of events read.
    ///
    /// No row and no ``Value`` per event: each record's key is a few integers looked up in a ``CodeTable``,
    /// strings are resolved once per group; with ``CodedCountPlan/filterFields`` the filters are evaluated once
    /// per combination of the fields they read. Memory grows with the groups (and those combinations), and with
    /// the distinct codes of each `count_distinct` field per group.
    ///
    /// `body`'s third argument has one entry per ``CodedCountPlan/distinct``: for a `count_distinct`, the group's
    /// distinct values of its field (absent left out, rule 11), or only how many there are (``DistinctValues``); nil
    /// for `count()`. Values, not codes, are what is distinct: two codes can name one value (an unknown analytics name
    /// that spells a known one, an element id of the empty string and no element, two strings spelled apart that
    /// compare equal). A field whose codes are string ids (`session`, `profile`, `placement`, `variation`,
    /// `onboarding`) is given as a count when none of the strings its codes name has another spelling
    /// (``Plan/hasOneSpelling(_:)``; checked once per distinct code, its strings read in one pass) and no two groups'
    /// keys are equal values: its codes are then its values (a set of 50 000 session strings per screen cost 1.2 G of a
    /// `stats count_distinct(session) by screen`'s 3.2 G instructions at 50 000 sessions).
    func countByCodes(
        _ ranges: [ScanRange], _ plan: CodedCountPlan, now: Timestamp,
        cancellation: CancellationFlag?, text: String, keep: SessionPassSet? = nil,
        _ body: ((Bound) -> Value, Int, [DistinctValues?]) throws(QueryError) -> Void
    ) throws(QueryError) -> Int {
        var read = 0
        // The time comparisons are the scan's time range (intersected with the planner's, the same).
        let ranges = StoreEventSource.ranges(ranges, within: plan.time)
        let threads = StoreEventSource.threads, minimum = StoreEventSource.minimumPartEvents
        var attempts = 0
        var counted = false
        while !counted {
            attempts += 1
            try reading { snapshot in
                let strings = SnapshotStrings(snapshot)
                var scan = CodedCountScan(
                    plan: plan, now: now, strings: strings, cancellation: cancellation, text: text)
                scan.keep = keep
                if let parts = try StoreEventSource.parts(snapshot, ranges, threads: threads, minimum: minimum) {
                    let workers = min(threads, parts.count, StoreEventSource.maxWorkers)
                    // A writer that commits while the transactions open: all again, twice, then one thread.
                    counted = try withSnapshots(of: snapshot, extra: workers - 1, retry: attempts < 3) { snapshots in
                        guard snapshots.count > 1 else { return try scan.scan(snapshot, ranges) }
                        var scans = snapshots.map { snapshot in
                            var scan = CodedCountScan(
                                plan: plan, now: now, strings: SnapshotStrings(snapshot), cancellation: cancellation,
                                text: text)
                            scan.keep = keep?.ownCopy()
                            return scan
                        }
                        try StoreEventSource.runWorkers(snapshots, parts, &scans) { scan, snapshot, part in
                            try scan.scan(snapshot, part)
                        }
                        for partial in scans { scan.merge(partial) }
                    }
                    guard counted else { return }
                } else {
                    try scan.scan(snapshot, ranges)
                    counted = true
                }
                read = scan.read
                let groups = scan.groups
                let counted = try StoreEventSource.distinctCodesAreValues(snapshot, plan, groups, strings: strings)
                for (i, key) in groups.keys.enumerated() {
                    func leaf(_ b: Bound) -> Value {
                        guard case .event(let field) = b, let k = plan.keys.firstIndex(of: field) else { return .null }
                        return FieldCode.value(field, key[k], strings: strings)
                    }
                    let group = groups.values[i]
                    var sets = 0
                    let distinct: [DistinctValues?] = plan.distinct.map { field in
                        guard let field else { return nil }
                        defer { sets += 1 }
                        if counted[sets] { return .count(group.distinct[sets].count) }
                        var values = Set<Value>()
                        group.distinct[sets].forEach { code in
                            let value = FieldCode.value(field, code, strings: strings)
                            if !value.isNull { values.insert(value) }
                        }
                        return .values(values)
                    }
                    try body(leaf, group.count, distinct)
                }
            }
        }
        return read
    }
}

/// A group's `count_distinct` of one field, from a count by field codes (``StoreEventSource/countByCodes``).
enum DistinctValues {
    /// The group's distinct values.
    case values(Set<Value>)
    /// How many distinct values the group has: its codes name distinct values, and no other group has its key.
    case count(Int)
}

extension StoreEventSource {
    /// Per set of `count_distinct` codes of `plan` (its non-nil ``CodedCountPlan/distinct`` fields, in order),
    /// whether each group's distinct codes are its distinct values and the groups' keys distinct values: the field's
    /// codes are string ids (`session`, `profile`, `placement`, `variation`, `onboarding`), every string they name is
    /// read (none missing) and has one spelling, and no two groups' key values are equal.
    /// - Complexity: O(codes of every group) bit tests, the strings of the distinct codes read in one pass over their
    ///   chunks, and O(groups) key hashes.
    fileprivate static func distinctCodesAreValues(
        _ snapshot: Snapshot, _ plan: CodedCountPlan, _ groups: CodeTable<CodedCountScan.CodedGroup>,
        strings: SnapshotStrings
    ) throws -> [Bool] {
        let fields = plan.distinct.compactMap { $0 }
        func namesStrings(_ field: EventField) -> Bool {
            field == .session || field == .profile || field == .placement || field == .variation
                || field == .onboarding
        }
        var counted = fields.map(namesStrings)
        guard counted.contains(true) else { return counted }
        // Groups keyed apart but equal as values (onboardings spelled apart) are one group of the result: their sets
        // are united by value.
        var keys = Set<[Value]>()
        for key in groups.keys {
            var values: [Value] = []
            for (k, field) in plan.keys.enumerated() { values.append(FieldCode.value(field, key[k], strings: strings)) }
            guard keys.insert(values).inserted else { return fields.map { _ in false } }
        }
        for (k, _) in fields.enumerated() where counted[k] {
            var seen = SessionBitmap()
            var ids: [StringID] = []
            for group in groups.values {
                group.distinct[k].forEach { code in
                    let id = StringID(truncatingIfNeeded: code)
                    if code <= UInt64(StringID.max), seen.insert(id) { ids.append(id) }
                }
            }
            ids.sort()
            guard ids.last.map({ $0 < snapshot.stringCount }) ?? true else {
                counted[k] = false
                continue
            }
            counted[k] = try snapshot.strings(for: ids).allSatisfy(Plan.hasOneSpelling)
        }
        return counted
    }
}

/// The state of a count by field codes, mutated through one access per run of records (state in captured
/// variables would pay a dynamic exclusivity check per event).
fileprivate struct CodedCountScan {
    let keys: [EventField]
    let strings: SnapshotStrings
    var filter: CodedFilter
    /// The fields whose distinct codes each group keeps (the `count_distinct` aggregates', in order).
    let distinctFields: [EventField]
    var groups = CodeTable<CodedGroup>()
    /// A further test of each record that passes the filters: whether its session's properties pass
    /// (``SessionProperties``).
    var keep: SessionPassSet?
    var read = 0
    var ticker: CancellationTicker
    /// Whether the filters read only `kind`, `name`, `onboarding` and `screen`, which a record's kind code
    /// (`RecordFormat.kindCode(body:)`) and its run's group give: a record is then tested before its fields are
    /// decoded, and one that fails costs the few bytes the kind code reads.
    let filtersOnKindCodes: Bool
    /// With ``filtersOnKindCodes``, whether the keys, the distinct counts and the session test read only fields up to
    /// a record's session reference (`onboarding`, `screen`, `session`, `kind`): a record that passed on its kind code
    /// is then decoded that far (``RecordFields/Extent/session``), not whole (callgrind, the screens of the busiest
    /// onboarding's completed sessions at 50 000 sessions: about 345 instructions a record whole).
    let keysBeforeSession: Bool
    /// With ``filtersOnKindCodes``, per kind code of the group ``codesGroup``: whether its events pass (0: not yet
    /// known, 1: no, 2: yes); and per analytics name outside the known ones.
    private var passesByCode = [UInt8](repeating: 0, count: 256)
    private var passesByName: [StringID: Bool] = [:]
    /// The group (onboarding << 16 | screen) whose kind codes ``passesByCode`` holds; a run of another group resets it.
    private var codesGroup = UInt64.max

    /// One group's rows and the distinct codes of each of `distinctFields`.
    struct CodedGroup {
        var count = 0
        var distinct: [CodeSet]
    }

    init(
        plan: CodedCountPlan, now: Timestamp, strings: SnapshotStrings, cancellation: CancellationFlag?,
        text: String
    ) {
        // Arrays of the scan's own (`map` copies): the loop retains them per event, and a buffer shared by the
        // workers of a parallel count made each retain a contended cache line (3.5x the one-thread CPU time).
        keys = plan.keys.map { $0 }
        distinctFields = plan.distinct.compactMap { $0 }
        filter = CodedFilter(plan.filters.map { $0 }, fields: plan.filterFields?.map { $0 }, now: now)
        self.strings = strings
        ticker = CancellationTicker(cancellation: cancellation, text: text)
        filtersOnKindCodes = plan.filtersOnKindCodes
        func beforeSession(_ field: EventField) -> Bool {
            field == .kind || field == .onboarding || field == .screen || field == .session
        }
        keysBeforeSession =
            filtersOnKindCodes && plan.keys.allSatisfy(beforeSession) && distinctFields.allSatisfy(beforeSession)
    }

    /// Counts the events of `ranges`, as one thread reads them.
    mutating func scan(_ snapshot: Snapshot, _ ranges: [ScanRange]) throws {
        // Counts do not depend on the order of the events.
        let kinds = kindSelection()
        for range in ranges {
            try StoreEventSource.forEachRun(snapshot, range, unordered: true, wanting: kinds) { try count(&$0) }
        }
    }

    /// Counts the events of `part`, a worker's share of a parallel count.
    mutating func scan(_ snapshot: Snapshot, _ part: ScanPart) throws {
        let time = StoreEventSource.storeTimeRange(part.time)
        let kinds = kindSelection()
        try snapshot.forEachBlockRun(onboarding: part.onboarding, screens: part.screens, time: time, wanting: kinds) {
            try count(&$0)
        }
    }

    /// The blocks that can hold an event passing the filters, by their headers' kind counts (``KindCodeFilters``). One
    /// of its own per call: a selection keeps answers and is not shared between threads.
    private func kindSelection() -> KindSelection? {
        KindCodeFilters.selection(filter.filters, now: filter.now, strings: strings)
    }

    /// Adds the groups another worker counted (same plan, a snapshot of the same commit: the same codes).
    /// - Complexity: O(groups of `other`, and their distinct codes).
    mutating func merge(_ other: CodedCountScan) {
        read += other.read
        for (i, key) in other.groups.keys.enumerated() {
            let theirs = other.groups.values[i]
            let e = groups.entry(key) {
                CodedGroup(distinct: [CodeSet](repeating: CodeSet(), count: distinctFields.count))
            }
            groups.values[e].count += theirs.count
            for k in theirs.distinct.indices { theirs.distinct[k].forEach { groups.values[e].distinct[k].insert($0) } }
        }
    }

    @inline(__always)
    private mutating func count(_ run: inout EventRun) throws -> Bool {
        let onKindCodes = filtersOnKindCodes
        if onKindCodes, UInt64(run.onboarding) << 16 | UInt64(run.screen) != codesGroup {
            codesGroup = UInt64(run.onboarding) << 16 | UInt64(run.screen)
            passesByCode.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
            passesByName.removeAll(keepingCapacity: true)
        }
        let filters = filter.filters, now = filter.now, strings = strings
        while let record = try run.next() {
            // Whether the record's kind code already passed every filter (``filtersOnKindCodes``): its decoded fields
            // then need no second test.
            var passedOnCodes = false
            if onKindCodes {
                let kind = RecordFormat.kindCode(body: record.body)
                let passing: Bool
                if kind.code == RecordFormat.unclassifiedKindCode {
                    passing = true  // bytes that are no record: decoded below, which reports them
                } else if kind.name != RecordFormat.absent {
                    // A name outside the known ones (rare).
                    if let known = passesByName[kind.name] {
                        passing = known
                    } else {
                        passing = KindCodeFilters.passes(
                            filters, now: now, strings: strings, code: kind.code, name: kind.name,
                            onboarding: run.onboarding, screen: run.screen)
                        passesByName[kind.name] = passing
                    }
                } else if passesByCode[Int(kind.code)] != 0 {
                    passing = passesByCode[Int(kind.code)] == 2
                } else {
                    passing = KindCodeFilters.passes(
                        filters, now: now, strings: strings, code: kind.code, name: kind.name,
                        onboarding: run.onboarding, screen: run.screen)
                    passesByCode[Int(kind.code)] = passing ? 2 : 1
                }
                if !passing {
                    read += 1
                    try ticker.tick()
                    continue
                }
                passedOnCodes = kind.code != RecordFormat.unclassifiedKindCode
            }
            let fields = try record.fields(passedOnCodes && keysBeforeSession ? .session : .all)
            read += 1
            try ticker.tick()
            if !passedOnCodes, !filter.passes(StoreFieldsRow(fields: fields, seq: record.seq, strings: strings)) {
                continue
            }
            if let keep, !keep.contains(fields) { continue }
            let e = groups.entry(CodeKey(keys, fields)) {
                CodedGroup(distinct: [CodeSet](repeating: CodeSet(), count: distinctFields.count))
            }
            groups.values[e].count += 1
            for (k, field) in distinctFields.enumerated() {
                let code = FieldCode.code(field, fields)
                if code != FieldCode.absent { groups.values[e].distinct[k].insert(code) }
            }
        }
        return true
    }
}
