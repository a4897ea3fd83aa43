import BoardwalkCodec
import BoardwalkModel
import BoardwalkStore

/// The state of a whole-store session fold: sessions by id, their folds in first-seen order.
///
/// **Split across threads** (``StoreEventSource/foldWholeStoreInParallel(_:_:into:make:needs:)``): each worker folds
/// parts of the store (an onboarding, or a time slice of one) into a scan of its own, which also keeps each session's
/// first position in key order among the parts it read. The workers' scans are absorbed into one
/// (``absorb(_:)``), and ``keyOrder()`` gives the sessions in the order one scan of the whole store first meets them.
struct WholeStoreScan {
    var table: SessionSlots
    /// The folds of a full fold; empty for a lean one.
    let folds: FoldStorage
    /// The folds of a lean fold (``FoldNeeds/lean``).
    let lean: LeanFolds?
    var ids: [StringID] = []
    var ticker: CancellationTicker
    /// For a split scan, by slot: the session's first event in key order among the parts read.
    private var firsts: [EventAddress] = []
    /// For a split scan, by slot: the last part the session was met in. A part is read in key order, so a session's
    /// first event in a part is the part's first of it: only that one is compared with ``firsts``.
    private var metIn: [Int32] = []
    /// The part being read (a split scan's count of parts begun); −1 for a scan that is not split.
    private var part: Int32 = -1
    /// For a fold of the session index that reads first values (``FoldNeeds/firstValues``), by slot: the address of
    /// the session's earliest event in `(time, seq)` order. Empty otherwise.
    private(set) var earliest: [EventAddress] = []
    private let keepsEarliest: Bool
    /// The sessions the scan was made for: what its per-session arrays reserve.
    private let capacity: Int

    init(capacity: Int, events: Int, screens: Int, needs: FoldNeeds, cancellation: CancellationFlag?, text: String) {
        table = SessionSlots(capacity: capacity)
        folds = FoldStorage(capacity: needs.lean ? 0 : capacity)
        lean =
            needs.lean
            ? LeanFolds(
                capacity: capacity, events: events, reachTimes: needs.reachTimes, outcomes: needs.leanOutcomes,
                lasts: needs.lasts,
                rowScreens: LeanFolds.rowScreens(screens: screens, sessions: capacity, events: events))
            : nil
        self.capacity = capacity
        ids = .reserved(capacity)
        keepsEarliest = needs.firstValues
        if keepsEarliest { earliest = .reserved(capacity) }
        ticker = CancellationTicker(cancellation: cancellation, text: text)
    }

    /// Folds the events of one onboarding (`nil`: the whole store). The loop is chosen once: a lean fold reads
    /// only up to each record's session. Records come a block at a time, so the loop over them is inlined here.
    mutating func scan(
        _ snapshot: Snapshot, onboarding: StringID?, time: Range<Timestamp>? = nil, strings: SnapshotStrings,
        needs: FoldNeeds
    ) throws {
        if let lean {
            if lean.outcomes {
                try scanLean(snapshot, onboarding: onboarding, time: time, lean, WithOutcomes.self, strings: strings)
            } else {
                try scanLean(snapshot, onboarding: onboarding, time: time, lean, WithoutOutcomes.self, strings: strings)
            }
        } else {
            try snapshot.forEachRun(onboarding: onboarding, time: time) { run in
                let group = UInt64(run.onboarding) << 16 | UInt64(run.screen)
                while let record = try run.next() {
                    let fields = try record.fields(.all)
                    guard let session = fields.session else { continue }
                    try ticker.tick()
                    // The slot first: a new session can grow the storage, which moves `folds.base`.
                    let slot = slot(session)
                    if part >= 0 { meet(slot, group: group, time: fields.timeMicroseconds, seq: record.seq) }
                    try folds.base[slot].add(
                        fields, seq: record.seq, full: { () throws in try record.view() },
                        strings: strings, needs: needs)
                }
                return needs.stepTests?.overBudget != true
            }
        }
    }

    /// Folds the events of `part`, a worker's share of a split scan.
    mutating func scan(_ snapshot: Snapshot, part: ScanPart, needs: FoldNeeds) throws {
        precondition(part.screens == nil, "a whole-store fold reads every screen of a part")
        split()
        self.part += 1
        try scan(
            snapshot, onboarding: part.onboarding, time: StoreEventSource.storeTimeRange(part.time),
            strings: SnapshotStrings(snapshot), needs: needs)
    }

    /// Folds the references of the session index in `buckets` (``FoldNeeds/fromSessionIndex``): each event's
    /// onboarding, screen, time and seq, as the lean scan folds them from records, without reading an event block.
    ///
    /// The index holds a session's references together (by bucket, then by the batch that stored them), not in key
    /// order, so each session's first position in key order is kept from all of them, and ``keyOrder()`` gives the
    /// sessions in the order a scan of the blocks meets them. With `firstsOnly` (``FoldNeeds/firstsOnly``), only each
    /// run's first reference is read, and with `onboardings` its first with a screen too; the event count is then the
    /// references read, and the sessions keep the order they were met in.
    /// - Complexity: O(references in `buckets`), about 6 bytes each; with `firstsOnly`, O(runs in `buckets`).
    mutating func scanSessionIndex(
        _ snapshot: Snapshot, buckets: Range<UInt32>, firstsOnly: Bool, onboardings: Bool
    ) throws {
        guard let lean else { preconditionFailure("the session index gives only a lean fold's fields") }
        let settings = lean.settings
        if firstsOnly {
            // Each run's first reference is its earliest, and its first with a screen its earliest positioned one; the
            // rest of the run is skipped by its length.
            var references = 0
            try snapshot.forEachSessionIndexRun(buckets: buckets) { run in
                guard try run.next() else { return }
                let slot = slot(run.session)
                noteEarliest(run, slot: slot)
                repeat {
                    references &+= 1
                    let positioned = try WholeStoreScan.add(run, slot: slot, to: lean, settings)
                    if positioned || !onboardings { break }
                } while try run.next()
                if references >= 4096 {
                    try ticker.tick(references)
                    references = 0
                }
            }
            return
        }
        split()
        try snapshot.forEachSessionIndexRun(buckets: buckets) { run in
            let slot = slot(run.session)
            var first = EventAddress.last, events = 0
            while try run.next() {
                if events == 0 { noteEarliest(run, slot: slot) }
                events &+= 1
                let at = EventAddress(
                    group: UInt64(run.onboarding) << 16 | UInt64(run.screen), time: run.time, seq: run.seq)
                if at < first { first = at }
                try WholeStoreScan.add(run, slot: slot, to: lean, settings)
            }
            if first < firsts[slot] { firsts[slot] = first }
            try ticker.tick(events)
        }
    }

    /// Folds the current reference of `run` into the session at `slot`; returns whether it has a screen (an event
    /// without `meta` is referenced with no onboarding and no screen).
    @inline(__always) @discardableResult
    private static func add(
        _ run: SessionIndexRun, slot: Int, to lean: LeanFolds, _ settings: LeanFolds.Settings
    ) throws(QueryError) -> Bool {
        let positioned = run.screen != RecordFormat.noScreen
        try lean.add(
            slot: slot, time: run.time, seq: run.seq, screen: positioned ? Int(run.screen) : nil,
            onboarding: positioned ? run.onboarding : nil, totalScreens: nil, settings)
        return positioned
    }

    /// Keeps the current reference of `run`, the first of its run (its earliest), as the session's earliest event when
    /// it is earlier than the one kept (``earliest``).
    @inline(__always)
    private mutating func noteEarliest(_ run: SessionIndexRun, slot: Int) {
        guard keepsEarliest else { return }
        let kept = earliest[slot]
        if (run.time, run.seq) < (kept.time, kept.seq) {
            earliest[slot] = EventAddress(onboarding: run.onboarding, screen: run.screen, time: run.time, seq: run.seq)
        }
    }

    /// Makes this scan a worker's of a split scan, before it reads: it keeps each session's first position.
    private mutating func split() {
        guard part < 0 else { return }
        precondition(ids.isEmpty, "a scan is split before it reads")
        part = 0
        firsts = .reserved(capacity)
        metIn = .reserved(capacity)
    }

    /// The lean loop of ``scan(_:onboarding:time:strings:needs:)``, specialized for `Outcomes`.
    private mutating func scanLean<Outcomes: LeanExtent>(
        _ snapshot: Snapshot, onboarding: StringID?, time: Range<Timestamp>?, _ lean: LeanFolds,
        _: Outcomes.Type, strings: SnapshotStrings
    ) throws {
        let settings = lean.settings
        try snapshot.forEachRun(onboarding: onboarding, time: time) { run in
            // Consecutive events of a group are often the same session's (a session's events at one screen come
            // close together in time): its slot is reused without a lookup, and its later events in the run change
            // only what `LeanFolds.addFollowing` updates.
            var lastSession = RecordFormat.absent, lastSlot = 0, events = 0, lastClient = RecordFormat.absent
            let group = UInt64(run.onboarding) << 16 | UInt64(run.screen)
            while let record = try run.next() {
                let fields = try record.fields(Outcomes.extent)
                guard let session = fields.session else { continue }
                events &+= 1
                if session == lastSession {
                    lean.addFollowing(slot: lastSlot, fields, seq: record.seq, previousClient: lastClient, settings)
                } else {
                    lastSession = session
                    lastSlot = slot(session)
                    if part >= 0 { meet(lastSlot, group: group, time: fields.timeMicroseconds, seq: record.seq) }
                    try lean.add(slot: lastSlot, fields, seq: record.seq, settings)
                }
                lastClient = fields.screenClientRef
                let slot = lastSlot
                if Outcomes.outcomes {
                    lean.addOutcome(
                        slot: slot, kind: fields.kind, name: fields.analyticsName,
                        at: OrderKey(time: fields.timeMicroseconds, seq: record.seq), strings: strings)
                }
            }
            try ticker.tick(events)
            return true
        }
    }

    /// The slot of `session`, a new fold when it is new.
    @inline(__always)
    private mutating func slot(_ session: StringID) -> Int {
        let (slot, inserted) = table.slot(session)
        if inserted {
            if let lean { _ = lean.append() } else { _ = folds.append(SessionFold()) }
            ids.append(session)
            if keepsEarliest { earliest.append(.last) }
            if part >= 0 {
                firsts.append(.last)
                metIn.append(-1)
            }
        }
        return slot
    }

    /// Notes an event of the session at `slot` in the part being read, in key order: the part's first of the session
    /// is compared with its first so far.
    @inline(__always)
    private mutating func meet(_ slot: Int, group: UInt64, time: Int64, seq: UInt64) {
        guard metIn[slot] != part else { return }
        metIn[slot] = part
        let at = EventAddress(group: group, time: time, seq: seq)
        if at < firsts[slot] { firsts[slot] = at }
    }

    /// Folds the sessions another worker of the same split scan folded into this scan's (a session both met is
    /// merged, see ``SessionFold/merge(_:)`` and ``LeanFolds/merge(_:_:into:)``).
    /// - Complexity: O(sessions of `other`).
    mutating func absorb(_ other: WholeStoreScan) throws(QueryError) {
        // A scan that keeps no first positions (``FoldNeeds/firstsOnly``) delivers in the order it met sessions.
        let ordered = other.part >= 0
        if ordered { split() }
        for theirs in other.ids.indices {
            let mine = slot(other.ids[theirs])
            if let lean, let their = other.lean {
                try lean.merge(their, theirs, into: mine)
            } else {
                folds.base[mine].merge(other.folds.base[theirs])
            }
            if ordered, other.firsts[theirs] < firsts[mine] { firsts[mine] = other.firsts[theirs] }
            if keepsEarliest {
                let a = other.earliest[theirs], b = earliest[mine]
                if (a.time, a.seq) < (b.time, b.seq) { earliest[mine] = a }
            }
        }
    }

    /// Appends the sessions of `other`, a worker's scan of the same split that met none of this scan's sessions (a
    /// fold of the session index by ranges of buckets), after this scan's: what ``absorb(_:)`` gives for such a pair,
    /// with the lean folds copied in bulk instead of merged one by one into new ones. A full fold is absorbed.
    /// - Complexity: O(sessions of `other`): a slot each, and copies.
    mutating func append(disjoint other: WholeStoreScan) throws(QueryError) {
        guard let lean, let their = other.lean else { return try absorb(other) }
        if other.part >= 0 { split() }
        let first = ids.count
        for (i, id) in other.ids.enumerated() {
            let (slot, inserted) = table.slot(id)
            precondition(inserted && slot == first + i, "a disjoint scan holds a session this one holds")
        }
        ids.append(contentsOf: other.ids)
        try lean.append(contentsOf: their)
        if part >= 0 {
            // A worker that read no part met no session: its arrays are all empty alike.
            precondition(other.firsts.count == other.ids.count, "a split scan keeps a first position per session")
            firsts.append(contentsOf: other.firsts)
            metIn.append(contentsOf: other.metIn)
        }
        if keepsEarliest { earliest.append(contentsOf: other.earliest) }
    }

    /// The slots in the order a scan of the whole store in key order first meets their sessions: for a split scan,
    /// by each session's first position; else the slots' own order.
    /// - Complexity: O(sessions × log sessions) for a split scan.
    func keyOrder() -> [Int] {
        guard part >= 0 else { return Array(ids.indices) }
        return ids.indices.sorted { firsts[$0] < firsts[$1] }
    }
}

extension StoreEventSource {
    /// Folds every event of the store into `scan`'s sessions on several threads, when ``threads`` allows more than
    /// one and the store's list of onboardings says it holds enough events (see ``parts(_:_:threads:minimum:)``);
    /// returns false, having read nothing, when the fold runs on one thread. `make` makes an empty scan for each
    /// further worker. Snapshots that do not all read one commit fold on one thread.
    ///
    /// Memory: one scan per worker, each with a fold for every session it met (a session whose events lie in
    /// several workers' parts has a fold in each until they are absorbed).
    /// - Complexity: O(events / workers + workers × sessions + sessions × log sessions) time.
    func foldWholeStoreInParallel(
        _ snapshot: Snapshot, _ everything: ScanRange, into scan: inout WholeStoreScan, make: () -> WholeStoreScan,
        needs: FoldNeeds
    ) throws -> Bool {
        precondition(everything.isEverything)
        return try foldSplit(
            snapshot, [everything], into: &scan, needs: needs,
            make: make,
            read: { scan, snapshot, part, needs in try scan.scan(snapshot, part: part, needs: needs) },
            absorb: { scan, other in try scan.absorb(other) })
    }

    /// Whether a fold of the whole store with `needs` reads the session index instead of the event blocks
    /// (``FoldNeeds/fromSessionIndex``): not when the run reads around damaged blocks, whose events the index still
    /// lists.
    static func foldsFromSessionIndex(_ needs: FoldNeeds) -> Bool {
        needs.fromSessionIndex && damagedBlocks == nil
    }

    /// Folds the whole session index into `scan`'s sessions on several threads, each worker taking ranges of buckets
    /// (a session's references all lie in its bucket, so no two workers meet one session), when ``threads`` allows
    /// more than one and the store holds at least twice ``minimumPartEvents`` events; returns false, having read
    /// nothing, when the fold runs on one thread. Snapshots that do not all read one commit fold on one thread.
    /// - Complexity: O(references / workers + sessions × log sessions) time.
    func foldSessionIndexInParallel(
        _ snapshot: Snapshot, into scan: inout WholeStoreScan, make: () -> WholeStoreScan, events: Int,
        firstsOnly: Bool, onboardings: Bool
    ) throws -> Bool {
        let threads = StoreEventSource.threads
        guard threads > 1, events >= 2 * StoreEventSource.minimumPartEvents else { return false }
        let limit = snapshot.sessionBucketLimit
        let count = Int(min(UInt32(min(threads, StoreEventSource.maxWorkers) * StoreEventSource.partsPerWorker), limit))
        guard count > 1 else { return false }
        // Equal ranges of buckets: session ids are spread over the dictionary with the strings interned between them.
        var parts: [Range<UInt32>] = []
        for i in 0..<count {
            let lo = UInt32(UInt64(limit) * UInt64(i) / UInt64(count))
            let hi = i == count - 1 ? UInt32.max : UInt32(UInt64(limit) * UInt64(i + 1) / UInt64(count))
            parts.append(lo..<hi)
        }
        let workers = min(threads, count, StoreEventSource.maxWorkers)
        var split = false
        _ = try withSnapshots(of: snapshot, extra: workers - 1, retry: false) { snapshots in
            guard snapshots.count > 1 else { return }
            split = true
            var states = snapshots.indices.map { $0 == 0 ? StoreEventSource.take(&scan, make) : make() }
            try StoreEventSource.runWorkers(snapshots, parts, &states) { state, snapshot, buckets in
                try state.scanSessionIndex(
                    snapshot, buckets: buckets, firstsOnly: firstsOnly, onboardings: onboardings)
            }
            swap(&scan, &states[0])
            for state in states.dropFirst() { try scan.append(disjoint: state) }
            StoreEventSource.parallelProbe?.folded(stepEventsKept: nil, overBudget: false)
        }
        return split
    }
}

extension StoreEventSource {
    /// `scan`'s value, moved out, with a fresh one made by `make` left in its place: a worker that starts from the
    /// caller's scan holds the only reference to its arrays, so its first append does not copy them (a copy shared with
    /// the caller would copy each, and its session table, at the first new session).
    static func take<Scan>(_ scan: inout Scan, _ make: () -> Scan) -> Scan {
        var taken = make()
        swap(&taken, &scan)
        return taken
    }
}

extension Array {
    /// An empty array with room for `capacity` elements, backed by huge pages when that room is large
    /// (``adviseHugePages(_:byteCount:)``): a scan appends an element per session it meets, and at 1 M sessions each
    /// such array is several MiB of first writes.
    static func reserved(_ capacity: Int) -> [Element] {
        [Element](unsafeUninitializedCapacity: capacity) { buffer, count in
            if let base = buffer.baseAddress {
                adviseHugePages(UnsafeMutableRawPointer(base), byteCount: buffer.count * MemoryLayout<Element>.stride)
            }
            count = 0
        }
    }
}
