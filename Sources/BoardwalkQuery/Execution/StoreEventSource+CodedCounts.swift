import BoardwalkCodec
import BoardwalkModel
import BoardwalkStore

extension StoreEventSource {
    /// Counts the events of `ranges` that pass the plan's filters and time range, grouped by the field codes of
    /// `plan.keys` (records
    /// read through `RecordFields`, as ``scanEventFields(_:_:)`` reads them); then calls `body` once per group
    /// with its field reader (the key fields' values) and its count. Returns the number of events read.
    ///
    /// No row and no ``Value`` per event: each record's key is a few integers looked up in a ``CodeTable``,
    /// strings are resolved once per group; with ``CodedCountPlan/filterFields`` the filters are evaluated once
    /// per combination of the fields they read. Memory grows with the groups (and those combinations), and with
    /// the distinct codes of each `count_distinct` field per group.
    ///
    /// `body`'s third argument has one entry per ``CodedCountPlan/distinct``: for a `count_distinct`, the group's
    /// distinct values of its field (absent left out, rule 11); nil for `count()`. Values, not codes, are what is
    /// distinct: two codes can name one value (an unknown analytics name that spells a known one, an element id of
    /// the empty string and no element).
    func countByCodes(
        _ ranges: [ScanRange], _ plan: CodedCountPlan, now: Timestamp,
        cancellation: CancellationFlag?, text: String, keep: ((RecordFields) -> Bool)? = nil,
        _ body: ((Bound) -> Value, Int, [Set<Value>?]) throws(QueryError) -> Void
    ) throws(QueryError) -> Int {
        var read = 0
        // The time comparisons are the scan's time range (intersected with the planner's, the same).
        let ranges = ranges.compactMap { range -> ScanRange? in
            let low = max(range.time.lowerBound, plan.time.low), high = min(range.time.upperBound, plan.time.high)
            guard low <= high else { return nil }
            var range = range
            range.time = low...high
            return range
        }
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
                            scan.keep = keep
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
                for (i, key) in groups.keys.enumerated() {
                    func leaf(_ b: Bound) -> Value {
                        guard case .event(let field) = b, let k = plan.keys.firstIndex(of: field) else { return .null }
                        return FieldCode.value(field, key[k], strings: strings)
                    }
                    let group = groups.values[i]
                    var sets = 0
                    let distinct: [Set<Value>?] = plan.distinct.map { field in
                        guard let field else { return nil }
                        defer { sets += 1 }
                        var values = Set<Value>()
                        group.distinct[sets].forEach { code in
                            let value = FieldCode.value(field, code, strings: strings)
                            if !value.isNull { values.insert(value) }
                        }
                        return values
                    }
                    try body(leaf, group.count, distinct)
                }
            }
        }
        return read
    }
}

/// The state of a count by field codes, mutated through one access per run of records (state in captured
/// variables would pay a dynamic exclusivity check per event).
private struct CodedCountScan {
    let keys: [EventField]
    let strings: SnapshotStrings
    var filter: CodedFilter
    /// The fields whose distinct codes each group keeps (the `count_distinct` aggregates', in order).
    let distinctFields: [EventField]
    var groups = CodeTable<CodedGroup>()
    /// A further test of each record that passes the filters (the session's properties: `SessionProperties`).
    var keep: ((RecordFields) -> Bool)?
    var read = 0
    var ticker: CancellationTicker

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
    }

    /// Counts the events of `ranges`, as one thread reads them.
    mutating func scan(_ snapshot: Snapshot, _ ranges: [ScanRange]) throws {
        // Counts do not depend on the order of the events.
        for range in ranges { try StoreEventSource.forEachRun(snapshot, range, unordered: true) { try count(&$0) } }
    }

    /// Counts the events of `part`, a worker's share of a parallel count.
    mutating func scan(_ snapshot: Snapshot, _ part: ScanPart) throws {
        let time = StoreEventSource.storeTimeRange(part.time)
        try snapshot.forEachBlockRun(onboarding: part.onboarding, screens: part.screens, time: time) {
            try count(&$0)
        }
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
        while let record = try run.next() {
            let fields = try record.fields(.all)
            read += 1
            try ticker.tick()
            if !filter.passes(StoreFieldsRow(fields: fields, seq: record.seq, strings: strings)) { continue }
            if let keep, !keep(fields) { continue }
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

/// A count by field codes taken during the scan of a session fold, for an `events` query that counts by coded
/// fields the events whose session passes a test of its properties (``SessionProperties``): the fold's scan reads
/// every event of the ranges once, and both the sessions' properties and the events' codes come from that one
/// read, instead of a fold and then a second read of the same events.
///
/// Each record that passes the plan's filters and time range is noted by its session's interned id and its group
/// (8 bytes); once the fold has decided which sessions pass, the notes of those are counted. The groups' key values
/// are named when a group is first met, while the fold's read transaction is open. Only for plans without
/// `count_distinct`, and only when the fold reads the ranges' events in scans of whole onboardings
/// (``StoreEventSource/foldOnboardings``), which sets ``complete``; otherwise the caller counts in a second read.
/// Memory: 8 bytes per event that passes the filters.
final class CodedCountBesideFold {
    private let keys: [EventField]
    private var filter: CodedFilter
    private let time: (low: Int64, high: Int64)
    private var groups = CodeTable<[Value]>()
    /// (session, group) of each record that passed the filters.
    private var noted: [(session: StringID, group: Int32)] = []
    /// The records seen.
    private(set) var read = 0
    /// Whether the fold's scans met every record of the query's ranges, so that the notes are the whole count.
    var complete = false

    /// Nil for a plan with `count_distinct` aggregates.
    init?(_ plan: CodedCountPlan, now: Timestamp) {
        guard plan.distinct.allSatisfy({ $0 == nil }) else { return nil }
        keys = plan.keys
        filter = CodedFilter(plan.filters, fields: plan.filterFields, now: now)
        time = plan.time
    }

    /// Notes a record the fold's scan read (fields read to the end of the leading ones, `RecordFields.Extent.all`).
    @inline(__always)
    func note(_ fields: RecordFields, seq: UInt64, strings: SnapshotStrings) {
        read &+= 1
        let t = fields.timeMicroseconds
        guard t >= time.low, t <= time.high, let session = fields.session,
            filter.passes(StoreFieldsRow(fields: fields, seq: seq, strings: strings))
        else { return }
        let key = CodeKey(keys, fields)
        let group = groups.entry(key) {
            keys.indices.map { FieldCode.value(keys[$0], key[$0], strings: strings) }
        }
        noted.append((session, Int32(truncatingIfNeeded: group)))
    }

    /// Calls `body` once per group with its key fields' values and the number of its noted records whose session
    /// `passes`.
    /// - Complexity: O(noted records + groups).
    func finish(
        passes: (StringID) -> Bool, _ body: ((Bound) -> Value, Int) throws(QueryError) -> Void
    ) throws(QueryError) {
        var counts = [Int](repeating: 0, count: groups.values.count)
        for entry in noted where passes(entry.session) { counts[Int(entry.group)] += 1 }
        for (group, values) in groups.values.enumerated() where counts[group] > 0 {
            func leaf(_ b: Bound) -> Value {
                guard case .event(let field) = b, let k = keys.firstIndex(of: field) else { return .null }
                return values[k]
            }
            try body(leaf, counts[group])
        }
    }
}
