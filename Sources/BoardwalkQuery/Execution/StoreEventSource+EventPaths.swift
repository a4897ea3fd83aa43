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

    /// `ranges` cut to a plan's time range (its time comparisons, microseconds, inclusive), those outside it left out:
    /// the scan's time range is then the comparisons'.
    static func ranges(_ ranges: [ScanRange], within time: (low: Int64, high: Int64)) -> [ScanRange] {
        ranges.compactMap { range -> ScanRange? in
            let low = max(range.time.lowerBound, time.low), high = min(range.time.upperBound, time.high)
            guard low <= high else { return nil }
            var range = range
            range.time = low...high
            return range
        }
    }

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
    static func forEachOnboarding(
        _ snapshot: Snapshot, _ range: ScanRange,
        _ body: (StringID?, ClosedRange<Int>?) throws -> Bool
    ) throws -> Bool {
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
    static func forEachRun(
        _ snapshot: Snapshot, _ range: ScanRange, unordered: Bool = false, wanting kinds: KindSelection? = nil,
        _ body: (inout EventRun) throws -> Bool
    ) throws -> Bool {
        let time = storeTimeRange(range.time)
        return try forEachOnboarding(snapshot, range) { onboarding, screens in
            var going = true
            func run(_ run: inout EventRun) throws -> Bool {
                going = try body(&run)
                return going
            }
            if unordered, let onboarding {
                try snapshot.forEachBlockRun(onboarding: onboarding, screens: screens, time: time, wanting: kinds, run)
            } else {
                try snapshot.forEachRun(onboarding: onboarding, screens: screens, time: time, wanting: kinds, run)
            }
            return going
        }
    }

    /// ``scanEvents(_:_:)`` for queries that read only ``EventField/isLean`` fields: each record is read through
    /// `RecordFields` (its leading fields, without decoding or validating the rest) instead of a full view.
    ///
    /// What is not read is not checked: damage in a record's skipped bytes goes unnoticed (docs/codec.md,
    /// "Reading a few fields"); a malformed field it reads is a `.source` error naming the event.
    ///
    /// `filters` (the query's leading `where` stages, checked by the caller on each row) let the scan step over the
    /// blocks whose headers count no event that can pass them (``KindCodeFilters/selection(_:now:strings:)``).
    func scanEventFields(
        _ range: ScanRange, filters: [Bound], now: Timestamp,
        _ body: (StoreFieldsRow) throws(QueryError) -> Bool
    ) throws(QueryError) {
        try reading { snapshot in
            let strings = SnapshotStrings(snapshot)
            let kinds = KindCodeFilters.selection(filters, now: now, strings: strings)
            try StoreEventSource.forEachRun(snapshot, range, wanting: kinds) { run in
                while let record = try run.next() {
                    guard try body(StoreFieldsRow(fields: try record.fields(.all), seq: record.seq, strings: strings))
                    else {
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

    /// Counts the events of `ranges` that pass `plan`'s conditions, per (onboarding, screen) group and, when the plan
    /// reads `kind` or `name`, per kind and name, from block keys and headers
    /// (``Snapshot/forEachBlock(onboarding:screens:time:_:)``); calls `body` with the field reader of each such group
    /// (`onboarding` and `screen`, absent for events without a position; `kind` and `name`) and its nonzero count.
    /// `body` may be called more than once with the same values (the caller adds the counts).
    ///
    /// No record is decoded, so nothing in a record is checked: a block counted from its header is not read at all, a
    /// block read for its times is checked as far as its deltas (as ``Snapshot/forEachBlock`` says), and each of its
    /// events' kinds is read from the record's first bytes.
    /// - Throws: `.source` errors for damage; a block whose kind counts hold an event that is no record, when the
    ///   plan reads kinds.
    /// - Complexity: O(log N) per group in the ranges plus O(kinds) per block inside the time range, plus O(events)
    ///   of the blocks the range cuts (or of every block when per-event conditions remain).
    func countEvents(
        _ ranges: [ScanRange], _ plan: BlockCountPlan, now: Timestamp, cancellation: CancellationFlag?,
        text: String, _ body: ((Bound) -> Value, Int) throws(QueryError) -> Void
    ) throws(QueryError) -> BlockReads {
        guard plan.time.low <= plan.time.high else { return BlockReads() }
        let ranges = StoreEventSource.ranges(ranges, within: plan.time)
        let threads = StoreEventSource.threads, minimum = StoreEventSource.minimumPartEvents
        var reads: BlockReads? = nil
        var attempts = 0
        while reads == nil {
            attempts += 1
            try reading { snapshot in
                func make(_ snapshot: Snapshot) -> HeaderCounts {
                    HeaderCounts(
                        plan: plan, now: now, strings: SnapshotStrings(snapshot), cancellation: cancellation, text: text
                    )
                }
                var counts = make(snapshot)
                if let parts = try StoreEventSource.parts(snapshot, ranges, threads: threads, minimum: minimum) {
                    let workers = min(threads, parts.count, StoreEventSource.maxWorkers)
                    // A writer that commits while the transactions open: all again, twice, then one thread.
                    let ran = try withSnapshots(of: snapshot, extra: workers - 1, retry: attempts < 3) { snapshots in
                        guard snapshots.count > 1 else { return try counts.count(snapshot, ranges) }
                        var each = snapshots.map(make)
                        try StoreEventSource.runWorkers(snapshots, parts, &each) { c, snapshot, part in
                            try c.count(snapshot, part)
                        }
                        counts = HeaderCounts.merged(each)
                    }
                    guard ran else { return }
                } else {
                    try counts.count(snapshot, ranges)
                }
                // The groups' values from the first snapshot's strings: the workers' snapshots are of the same commit.
                try counts.deliver(body)
                reads = counts.reads
            }
        }
        return reads ?? BlockReads()
    }
}

/// One thread's count of events from block headers (``StoreEventSource/countEvents(_:_:now:cancellation:text:_:)``):
/// per (onboarding, screen) group and kind, the events. Groups are kept as ids and codes, and made values once, when
/// delivered in key order, whatever the threads.
private struct HeaderCounts {
    let plan: BlockCountPlan
    let now: Timestamp
    let strings: SnapshotStrings
    var ticker: CancellationTicker
    var reads = StoreEventSource.BlockReads()
    /// Each group's count of one kind and name in one range or part.
    var groups: [Group] = []

    /// The events of one (onboarding, screen) group and one kind code (and unknown analytics name), as ids.
    struct Group {
        /// The group's key (onboarding id, ``RecordFormat/noOnboarding`` for the events without a position, and screen)
        /// and where the range or part it was counted in starts: its place in key order.
        var key: (onboarding: StringID, screen: UInt16, from: Int64)
        var code: UInt8
        var unknown: StringID?
        var events: Int
    }

    init(plan: BlockCountPlan, now: Timestamp, strings: SnapshotStrings, cancellation: CancellationFlag?, text: String)
    {
        self.plan = plan
        self.now = now
        self.strings = strings
        ticker = CancellationTicker(cancellation: cancellation, text: text)
    }

    /// Counts the events of `ranges`, as one thread reads them.
    mutating func count(_ snapshot: Snapshot, _ ranges: [ScanRange]) throws {
        for range in ranges {
            let time = StoreEventSource.storeTimeRange(range.time)
            _ = try StoreEventSource.forEachOnboarding(snapshot, range) { id, screens in
                try count(snapshot, onboarding: id, screens: screens, time: time, from: range.time.lowerBound)
                return true
            }
        }
    }

    /// Counts the events of `part`, a worker's share of a parallel count.
    mutating func count(_ snapshot: Snapshot, _ part: ScanPart) throws {
        try count(
            snapshot, onboarding: part.onboarding, screens: part.screens,
            time: StoreEventSource.storeTimeRange(part.time), from: part.time.lowerBound)
    }

    /// The workers' counts together.
    static func merged(_ counts: [HeaderCounts]) -> HeaderCounts {
        var merged = counts[0]
        for other in counts.dropFirst() {
            merged.reads.counted += other.reads.counted
            merged.reads.timed += other.reads.timed
            merged.reads.events += other.reads.events
            merged.groups += other.groups
        }
        return merged
    }

    /// The values of the fields a count from headers reads: its group's, and one kind's.
    struct Fields {
        var onboarding = Value.null, screen = Value.null, kind = Value.null, name = Value.null

        /// The field `b` names; absent for any other.
        func value(_ b: Bound) -> Value {
            switch b {
            case .event(.onboarding): onboarding
            case .event(.screen): screen
            case .event(.kind): kind
            case .event(.name): name
            default: .null
            }
        }

        /// Sets the group's fields from its key: absent both for the events without a position.
        mutating func setGroup(_ onboarding: StringID, _ screen: UInt16, _ strings: SnapshotStrings) {
            let positioned = onboarding != RecordFormat.noOnboarding
            self.onboarding = positioned ? strings.string(onboarding).map(Value.string) ?? .null : .null
            self.screen = positioned ? .integer(Int64(screen)) : .null
        }
    }

    /// Calls `body` with the field reader of each group (its onboarding, screen, kind and name) and its events, in key
    /// order: the first spelling of two names that compare equal, which a result keeps, is the same at any number of
    /// threads.
    func deliver(_ body: ((Bound) -> Value, Int) throws(QueryError) -> Void) throws(QueryError) {
        var fields = Fields()
        var last: (onboarding: StringID, screen: UInt16)? = nil
        func leaf(_ b: Bound) -> Value { fields.value(b) }
        // Stable: a group's kinds stay in the order they were met.
        let order = groups.indices.sorted { a, b in
            let x = groups[a].key, y = groups[b].key
            return x != y ? x < y : a < b
        }
        for group in order.map({ groups[$0] }) {
            if last == nil || last!.onboarding != group.key.onboarding || last!.screen != group.key.screen {
                last = (group.key.onboarding, group.key.screen)
                fields.setGroup(group.key.onboarding, group.key.screen, strings)
            }
            (fields.kind, fields.name) = HeaderCounts.describe(plan, group.code, group.unknown, strings)
            try body(leaf, group.events)
        }
    }

    /// The `kind` and `name` of the events of `code` and, for an unknown analytics name, `unknown`; absent both when
    /// the plan reads neither.
    static func describe(
        _ plan: BlockCountPlan, _ code: UInt8, _ unknown: StringID?, _ strings: SnapshotStrings
    ) -> (kind: Value, name: Value) {
        guard plan.readsKinds else { return (.null, .null) }
        let kind = FieldCode.code(.kind, kindCode: code).map { FieldCode.value(.kind, $0, strings: strings) } ?? .null
        if let unknown { return (kind, FieldCode.value(.name, UInt64(unknown), strings: strings)) }
        let name = FieldCode.code(.name, kindCode: code).map { FieldCode.value(.name, $0, strings: strings) } ?? .null
        return (kind, name)
    }

    /// Counts the blocks of one onboarding (nil: the whole store) in `screens` and `time`. Local state and closures
    /// over locals, written back once: closures over `self` in a mutating method would copy the state per call.
    private mutating func count(
        _ snapshot: Snapshot, onboarding id: StringID?, screens: ClosedRange<Int>?, time: Range<Timestamp>?,
        from: Int64
    ) throws {
        let plan = self.plan, now = self.now, strings = self.strings
        var reads = self.reads, groups = self.groups, ticker = self.ticker
        self.groups = []  // appended to alone, not copied
        defer {
            self.reads = reads
            self.groups = groups
            self.ticker = ticker
        }
        var group: (onboarding: StringID, screen: UInt16)? = nil
        var fields = Fields()
        var passes = false
        var tally = GroupKindTally()
        let kindFiltersReadGroups = plan.kindFilters.contains { !$0.readsOnly(\.isPerKind) }
        func leaf(_ b: Bound) -> Value { fields.value(b) }
        func passesKindFilters(_ code: UInt8, _ unknown: StringID?) -> Bool {
            (fields.kind, fields.name) = HeaderCounts.describe(plan, code, unknown, strings)
            return plan.kindFilters.allSatisfy { $0.evaluate(now: now, leaf).isTrue }
        }
        func flush() throws {
            try tally.drain { code, unknown, n throws(QueryError) in
                groups.append(
                    Group(
                        key: (group?.onboarding ?? RecordFormat.noOnboarding, group?.screen ?? 0, from), code: code,
                        unknown: unknown, events: n))
                reads.events += n
            }
        }
        try snapshot.forEachBlock(onboarding: id, screens: screens, time: time) { block in
            if group?.onboarding != block.keyOnboarding || group?.screen != block.keyScreen {
                try flush()
                group = (block.keyOnboarding, block.keyScreen)
                fields.setGroup(block.keyOnboarding, block.keyScreen, strings)
                passes = plan.groupFilters.allSatisfy { $0.evaluate(now: now, leaf).isTrue }
                if kindFiltersReadGroups { tally.forgetFilters() }
            }
            guard passes else { return true }
            try ticker.tick(block.count)
            if plan.eventFilters.isEmpty && block.isInsideRange {
                reads.counted += 1
                if plan.readsKinds {
                    try tally.addKinds(of: block, filtered: !plan.kindFilters.isEmpty, passesKindFilters)
                } else {
                    tally.add(0, nil, block.count)
                }
                return true
            }
            reads.timed += 1
            if plan.eventFilters.isEmpty {
                // Only the range cuts the block: its events' times are walked in one call, not an event at a time.
                if plan.readsKinds {
                    try tally.addKindsInRange(of: &block, filtered: !plan.kindFilters.isEmpty, passesKindFilters)
                } else {
                    // A group with no event in the range has no row.
                    let n = try block.countInRange()
                    if n > 0 { tally.add(0, nil, n) }
                }
                return true
            }
            while let event = try block.next() {
                func eventLeaf(_ b: Bound) -> Value {
                    switch b {
                    case .event(.time): .time(Timestamp(microseconds: event.time))
                    case .event(.seq): .integer(Int64(bitPattern: event.seq))
                    default: leaf(b)
                    }
                }
                guard plan.eventFilters.allSatisfy({ $0.evaluate(now: now, eventLeaf).isTrue }) else { continue }
                if plan.readsKinds {
                    let kind = try block.kind()
                    try tally.add(kind.code, kind.name, 1, filtered: !plan.kindFilters.isEmpty, passesKindFilters)
                } else {
                    tally.add(0, nil, 1)
                }
            }
            return true
        }
        try flush()
    }
}

/// One (onboarding, screen) group's event counts by kind code (every event under code 0 when a count reads no kind)
/// and by unknown analytics name, for ``StoreEventSource/countEvents(_:_:now:cancellation:text:_:)``; and whether each
/// code and name passes the kind filters, kept until ``forgetFilters()``. A struct with mutating methods, so that a
/// block costs one access to it (the counts as captured variables cost a dynamic exclusivity check each).
struct GroupKindTally {
    private var counts = [Int](repeating: 0, count: 256)
    private var counted: [UInt8] = []
    private var unknown: [(name: StringID, count: Int)] = []
    /// Per known code: 0 not yet known, 1 passes, 2 does not.
    private var codePasses = [UInt8](repeating: 0, count: 256)
    private var namePasses: [StringID: Bool] = [:]

    /// Adds `block`'s kind counts (every event of it) that pass (`filtered`) `passes`.
    /// - Throws: `.corrupt` for an event that is no record, or a name past the strings.
    mutating func addKinds(
        of block: borrowing StoredBlock, filtered: Bool, _ passes: (UInt8, StringID?) -> Bool
    ) throws {
        try block.forEachKindCount { code, name, n in try add(code, name, n, filtered: filtered, passes) }
    }

    /// Adds the kind codes of `block`'s events inside its scan's time range (read from each record's first bytes) that
    /// pass (`filtered`) `passes`.
    /// - Throws: `.corrupt` for a block that does not decode or an event that is no record, or a name past the strings.
    mutating func addKindsInRange(
        of block: inout StoredBlock, filtered: Bool, _ passes: (UInt8, StringID?) -> Bool
    ) throws {
        try block.forEachKindInRange { code, name in try add(code, name, 1, filtered: filtered, passes) }
    }

    /// Adds `n` events of `code` (and unknown analytics `name`) if they pass (`filtered`) `passes`, asked once per code
    /// and name.
    /// - Throws: `.corrupt` for the code of an event that is no record.
    mutating func add(
        _ code: UInt8, _ name: StringID?, _ n: Int, filtered: Bool, _ passes: (UInt8, StringID?) -> Bool
    ) throws {
        if code == RecordFormat.unclassifiedKindCode {
            throw StoreError(.corrupt, "a block holds an event whose record is no record of this version")
        }
        if filtered {
            if let name {
                if namePasses[name] == nil { namePasses[name] = passes(code, name) }
                guard namePasses[name]! else { return }
            } else {
                if codePasses[Int(code)] == 0 { codePasses[Int(code)] = passes(code, nil) ? 1 : 2 }
                guard codePasses[Int(code)] == 1 else { return }
            }
        }
        add(code, name, n)
    }

    /// Adds `n` events of `code` (and unknown analytics `name`), unfiltered.
    mutating func add(_ code: UInt8, _ name: StringID?, _ n: Int) {
        if let name {
            if let i = unknown.firstIndex(where: { $0.name == name }) {
                unknown[i].count += n
            } else {
                unknown.append((name, n))
            }
            return
        }
        if counts[Int(code)] == 0 { counted.append(code) }
        counts[Int(code)] += n
    }

    /// Calls `body` with each code (and unknown name) counted and its count, and empties the counts.
    mutating func drain(_ body: (UInt8, StringID?, Int) throws(QueryError) -> Void) throws(QueryError) {
        for code in counted {
            try body(code, nil, counts[Int(code)])
            counts[Int(code)] = 0
        }
        counted.removeAll(keepingCapacity: true)
        for (name, n) in unknown { try body(BlockCountPlan.unknownNameCode, name, n) }
        unknown.removeAll(keepingCapacity: true)
    }

    /// Forgets which codes and names pass the kind filters (for filters that read the group's fields too).
    mutating func forgetFilters() {
        for i in codePasses.indices { codePasses[i] = 0 }
        namePasses.removeAll(keepingCapacity: true)
    }
}
