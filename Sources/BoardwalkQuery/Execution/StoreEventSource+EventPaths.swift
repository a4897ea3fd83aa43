import BoardwalkCodec
import BoardwalkModel
import BoardwalkStore

// The store's cheaper ways to answer `events` queries (see `Plan.blockCounts` and `Plan.leanEvents`): counts
// from block headers, and rows read through the codec's `RecordFields` instead of a full `RecordView`.

extension StoreEventSource {
    /// Whether `events` queries read only what they need: counts from block headers (``Plan/blockCounts``) and
    /// records through `RecordFields` when the query reads only its fields (``Plan/leanEvents``). True by default;
    /// tests bind false to run the same queries through full record views and compare. Task-local, like
    /// `onboardingScanRatio`.
    @TaskLocal static var readsOnlyWhatEventQueriesNeed = true

    /// The store's half-open time range for a scan range's time, nil for all time.
    static func storeTimeRange(_ time: ClosedRange<Int64>) -> Range<Timestamp>? {
        guard time != ScanRange.allTime else { return nil }
        let lower = max(time.lowerBound, Timestamp.range.lowerBound.microseconds)
        let upper = min(time.upperBound, Timestamp.range.upperBound.microseconds) + 1
        guard lower < upper else { return Timestamp(microseconds: 0)..<Timestamp(microseconds: 0) }
        return Timestamp(microseconds: lower)..<Timestamp(microseconds: upper)
    }

    /// Calls `body` with each (onboarding, screens) pair that the snapshot's scans take to cover `range`: one
    /// onboarding's id (none when the store lacks it), the whole store (`nil`, events without a position
    /// included) when neither onboarding nor screens narrow it, or else every onboarding in turn with the screen
    /// range (a screen range excludes events without a position). Stops when `body` returns false; returns false
    /// then.
    static func forEachOnboarding(_ snapshot: Snapshot, _ range: ScanRange,
                                  _ body: (StringID?, ClosedRange<Int>?) throws -> Bool) throws -> Bool {
        let screens: ClosedRange<Int>? = range.screens == ScanRange.allScreens ? nil : range.screens
        if let onboarding = range.onboarding {
            guard let id = try onboardingID(snapshot, onboarding) else { return true }
            return try body(id, screens)
        }
        // The whole store, events without a position included.
        guard let screens else { return try body(nil, nil) }
        // A screen range across onboardings: seek within each one rather than scanning everything.
        for summary in try snapshot.onboardings() {
            guard let id = summary.id, id != RecordFormat.noOnboarding else { continue }
            guard try body(id, screens) else { return false }
        }
        return true
    }

    /// Calls `body` for the runs of events in `range` (``Snapshot/forEachRun(onboarding:screens:time:_:)``);
    /// returns false when `body` asked to stop.
    ///
    /// `unordered`: the caller does not depend on the order of a group's events (counts), so an onboarding's
    /// blocks are read one at a time, unmerged (``Snapshot/forEachBlockRun(onboarding:screens:time:_:)``), which
    /// reads a block alone in its part of the file with `pread` rather than a page fault. The whole store is read
    /// merged either way: its blocks fill the windows of the map, which faults then read sixteen pages at a time.
    @discardableResult
    static func forEachRun(_ snapshot: Snapshot, _ range: ScanRange, unordered: Bool = false,
                           _ body: (inout EventRun) throws -> Bool) throws -> Bool {
        let time = storeTimeRange(range.time)
        return try forEachOnboarding(snapshot, range) { onboarding, screens in
            var going = true
            func run(_ run: inout EventRun) throws -> Bool {
                going = try body(&run)
                return going
            }
            if unordered, let onboarding {
                try snapshot.forEachBlockRun(onboarding: onboarding, screens: screens, time: time, run)
            } else {
                try snapshot.forEachRun(onboarding: onboarding, screens: screens, time: time, run)
            }
            return going
        }
    }


    /// ``scanEvents(_:_:)`` for queries that read only ``EventField/isLean`` fields: each record is read through
    /// `RecordFields` (its leading fields, without decoding or validating the rest) instead of a full view.
    ///
    /// What is not read is not checked: damage in a record's skipped bytes goes unnoticed (docs/codec.md,
    /// "Reading a few fields"); a malformed field it reads is a `.source` error naming the event.
    func scanEventFields(_ range: ScanRange, _ body: (StoreFieldsRow) throws(QueryError) -> Bool) throws(QueryError) {
        try reading { snapshot in
            let strings = StringCache(snapshot)
            try StoreEventSource.forEachRun(snapshot, range) { run in
                while let record = try run.next() {
                    guard try body(StoreFieldsRow(fields: try record.fields(.all), seq: record.seq, strings: strings)) else {
                        return false
                    }
                }
                return true
            }
        }
    }

    /// What an event count from block headers read.
    struct BlockReads {
        /// Blocks counted from their headers alone.
        var counted = 0
        /// Blocks that a time range cuts or that per-event conditions need, read for their events' times and seqs.
        var timed = 0
        /// Events counted.
        var events = 0
    }

    /// Counts the events of `ranges` that pass `plan`'s conditions, per (onboarding, screen) group, from block
    /// keys and headers (``Snapshot/forEachBlock(onboarding:screens:time:_:)``); calls `body` once per group
    /// with a nonzero count, with the group's field reader (`onboarding` and `screen`; absent for events without
    /// a position) and the count.
    ///
    /// No record is decoded, so nothing in a record is checked: a block counted from its header is not read at
    /// all, a block read for its times is checked as far as its deltas (as ``Snapshot/forEachBlock`` says).
    /// - Complexity: O(log N) per group in the ranges plus O(1) per block inside the time range, plus O(events)
    ///   of the blocks the range cuts (or of every block when per-event conditions remain).
    func countEvents(_ ranges: [ScanRange], _ plan: BlockCountPlan, now: Timestamp, cancellation: CancellationFlag?,
                     text: String, _ body: ((Bound) -> Value, Int) throws(QueryError) -> Void) throws(QueryError) -> BlockReads {
        var reads = BlockReads()
        guard plan.time.low <= plan.time.high else { return reads }
        try reading { snapshot in
            let strings = StringCache(snapshot)
            var group: (onboarding: StringID, screen: UInt16)? = nil
            var onboarding = Value.null, screen = Value.null
            var passes = false
            var count = 0
            var sinceCheck = 0
            func groupLeaf(_ b: Bound) -> Value {
                switch b {
                case .event(.onboarding): onboarding
                case .event(.screen): screen
                default: .null
                }
            }
            func flush() throws(QueryError) {
                if count > 0 { try body(groupLeaf, count) }
                reads.events += count
                count = 0
            }
            for range in ranges {
                let lo = max(range.time.lowerBound, plan.time.low), hi = min(range.time.upperBound, plan.time.high)
                guard lo <= hi else { continue }
                let time = StoreEventSource.storeTimeRange(lo...hi)
                _ = try StoreEventSource.forEachOnboarding(snapshot, range) { id, screens in
                    try snapshot.forEachBlock(onboarding: id, screens: screens, time: time) { block in
                        if group?.onboarding != block.keyOnboarding || group?.screen != block.keyScreen {
                            try flush()
                            group = (block.keyOnboarding, block.keyScreen)
                            onboarding = block.onboarding.flatMap { strings.string($0) }.map(Value.string) ?? .null
                            screen = block.screenIndex.map { .integer(Int64($0)) } ?? .null
                            passes = plan.groupFilters.allSatisfy { $0.evaluate(now: now, groupLeaf).isTrue }
                        }
                        guard passes else { return true }
                        sinceCheck += block.count
                        if sinceCheck >= 4096 {
                            sinceCheck = 0
                            if cancellation?.isCancelled == true { throw QueryError(.cancelled, "the query was cancelled", in: text) }
                        }
                        if plan.eventFilters.isEmpty && block.isInsideRange {
                            reads.counted += 1
                            count += block.count
                            return true
                        }
                        reads.timed += 1
                        while let event = try block.next() {
                            func eventLeaf(_ b: Bound) -> Value {
                                switch b {
                                case .event(.time): .time(Timestamp(microseconds: event.time))
                                case .event(.seq): .integer(Int64(bitPattern: event.seq))
                                default: groupLeaf(b)
                                }
                            }
                            if plan.eventFilters.allSatisfy({ $0.evaluate(now: now, eventLeaf).isTrue }) { count += 1 }
                        }
                        return true
                    }
                    return true
                }
            }
            try flush()
        }
        return reads
    }
}

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
    func countByCodes(_ ranges: [ScanRange], _ plan: CodedCountPlan, now: Timestamp,
                      cancellation: CancellationFlag?, text: String,
                      _ body: ((Bound) -> Value, Int, [Set<Value>?]) throws(QueryError) -> Void) throws(QueryError) -> Int {
        var read = 0
        try reading { snapshot in
            let strings = StringCache(snapshot)
            var scan = CodedCountScan(plan: plan, now: now, strings: strings, cancellation: cancellation, text: text)
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
    let strings: StringCache
    let cancellation: CancellationFlag?
    let text: String
    var filter: CodedFilter
    /// The fields whose distinct codes each group keeps (the `count_distinct` aggregates', in order).
    let distinctFields: [EventField]
    var groups = CodeTable<CodedGroup>()
    var read = 0
    var sinceCheck = 0

    /// One group's rows and the distinct codes of each of `distinctFields`.
    struct CodedGroup {
        var count = 0
        var distinct: [CodeSet]
    }

    init(plan: CodedCountPlan, now: Timestamp, strings: StringCache, cancellation: CancellationFlag?, text: String) {
        keys = plan.keys
        distinctFields = plan.distinct.compactMap { $0 }
        filter = CodedFilter(plan.filters, fields: plan.filterFields, now: now)
        self.strings = strings
        self.cancellation = cancellation
        self.text = text
    }

    mutating func scan(_ snapshot: Snapshot, _ range: ScanRange) throws {
        // Counts do not depend on the order of the events.
        try StoreEventSource.forEachRun(snapshot, range, unordered: true) { run in
            while let record = try run.next() {
                let fields = try record.fields(.all)
                read += 1
                sinceCheck += 1
                if sinceCheck >= 4096 {
                    sinceCheck = 0
                    if cancellation?.isCancelled == true { throw QueryError(.cancelled, "the query was cancelled", in: text) }
                }
                if !filter.passes(StoreFieldsRow(fields: fields, seq: record.seq, strings: strings)) { continue }
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

/// Filters on lean records: with `fields` (``CodedCountPlan/codedFields(of:)``, every field the filters read has a
/// code), the result is kept per combination of those fields' codes, so that each record costs a lookup, not an
/// evaluation through `Value`s.
struct CodedFilter {
    let filters: [Bound]
    let fields: [EventField]?
    let now: Timestamp
    /// Whether the filters pass, per combination of the codes of the fields they read.
    var memo = CodeTable<Bool>()
    /// The most combinations of filter codes the memo keeps (about 42 bytes each).
    static let memoLimit = 1 << 16

    init(_ filters: [Bound], fields: [EventField]?, now: Timestamp) {
        self.filters = filters
        self.fields = fields
        self.now = now
    }

    @inline(__always)
    mutating func passes(_ row: StoreFieldsRow) -> Bool {
        if filters.isEmpty { return true }
        guard let fields else { return evaluate(row) }
        let key = CodeKey(fields, row.fields)
        if let e = memo.find(key) { return memo.values[e] }
        let result = evaluate(row)
        // Bounded: filters on fields of many values (`session`, `profile`) would otherwise keep an entry per
        // distinct value; past the bound the filters are evaluated per record, as without a memo.
        if memo.keys.count < Self.memoLimit { memo.insert(key, result) }
        return result
    }

    /// The filters on one record.
    private func evaluate(_ row: StoreFieldsRow) -> Bool {
        func leaf(_ b: Bound) -> Value {
            if case .event(let field) = b { return row.value(field) }
            return .null
        }
        for filter in filters where !filter.evaluate(now: now, leaf).isTrue { return false }
        return true
    }
}

/// A stored event as an ``EventRow`` read through the codec's `RecordFields`: the fields of
/// ``EventField/isLean`` only, strings through the scan's ``StringCache``. Valid only inside the scan callback
/// that received it. The executor hands it only to queries that read no other field (``Plan/leanEvents``).
struct StoreFieldsRow: EventRow {
    let fields: RecordFields
    public let seq: UInt64
    // Not retained: a row lives inside the scan that owns the cache (its maker keeps the cache alive: the scans
    // here, `readSessions`, `CodedCountScan`) and is never stored past it; a session's rows are copied
    // several times each (into the session's array, by the dwell computation, by the executor): a retain and a
    // release per copy were a tenth of a dwell query (perf, session 5).
    unowned(unsafe) let strings: StringCache

    init(fields: RecordFields, seq: UInt64, strings: StringCache) {
        self.fields = fields
        self.seq = seq
        self.strings = strings
    }

    public var time: Timestamp { fields.time }
    public var kind: EventKind { fields.kind }
    public var screenIndex: Int? { fields.screenIndex }
    public var analyticsName: String? {
        switch fields.analyticsName {
        case .known(let name)?: name.rawValue
        case .unknown(let id)?: strings.string(id)
        case nil: nil
        }
    }

    /// The value of a lean field, as ``StoreEventRow/value(_:)`` gives it; absent for the fields `RecordFields`
    /// does not read (a query reading them never gets this row).
    public func value(_ field: EventField) -> Value {
        // One mapping from record to value for this row and for counts by field codes.
        if FieldCode.has(field) { return FieldCode.value(field, FieldCode.code(field, fields), strings: strings) }
        switch field {
        case .time: return .time(fields.time)
        case .seq: return .integer(Int64(bitPattern: seq))
        case .totalScreens: return fields.totalScreens.map { .integer(Int64($0)) } ?? .null
        default:
            assertionFailure("\(field.rawValue) is not read by RecordFields: the plan must not take the lean path")
            return .null
        }
    }
}
