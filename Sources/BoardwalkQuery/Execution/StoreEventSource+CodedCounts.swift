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
        try reading { snapshot in
            let strings = SnapshotStrings(snapshot)
            var scan = CodedCountScan(plan: plan, now: now, strings: strings, cancellation: cancellation, text: text)
            scan.keep = keep
            for var range in ranges {
                // The time comparisons are the scan's time range (intersected with the planner's, the same).
                let low = max(range.time.lowerBound, plan.time.low), high = min(range.time.upperBound, plan.time.high)
                guard low <= high else { continue }
                range.time = low...high
                try scan.scan(snapshot, range)
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
        keys = plan.keys
        distinctFields = plan.distinct.compactMap { $0 }
        filter = CodedFilter(plan.filters, fields: plan.filterFields, now: now)
        self.strings = strings
        ticker = CancellationTicker(cancellation: cancellation, text: text)
    }

    mutating func scan(_ snapshot: Snapshot, _ range: ScanRange) throws {
        // Counts do not depend on the order of the events.
        try StoreEventSource.forEachRun(snapshot, range, unordered: true) { run in
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
}
