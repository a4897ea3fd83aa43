import BoardwalkCodec
import BoardwalkModel
import BoardwalkStore

extension StoreEventSource {
    /// The time the ranges start at when they are for a fold from a time on: every range starts at that time and
    /// has no end nor screen bound, and either each names an onboarding or there is one, the whole store.
    static func sinceStart(_ ranges: [ScanRange]) -> Int64? {
        guard let first = ranges.first, first.time.lowerBound != Int64.min, first.time.upperBound == Int64.max,
            ranges.allSatisfy({ $0.time == first.time && $0.screens == ScanRange.allScreens }),
            ranges.count == 1 || ranges.allSatisfy({ $0.onboarding != nil })
        else { return nil }
        return first.time.lowerBound
    }

    /// Sessions of whole onboardings (ranges narrowed by onboarding only), folded from sequential scans of their
    /// key ranges instead of a session-index read per event; returns false, having done nothing, when the
    /// ranges are not of that shape or ``onboardingScanRatio`` sends them to the session index.
    ///
    /// A session's events lie outside its onboarding's keys only when the store lists it in
    /// `spanning_sessions` (events in another onboarding, or events without a position): those few, found with
    /// `Snapshot.spanningSessionEntries()`, are read through the session index, or for sessions whose only
    /// other key is "no position", folded from a scan of the no-position range when that is cheaper; every other session of
    /// the scope is folded from the scan of its onboarding's range. Exact either way. Cost: O(sessions in
    /// scope + events in scope + spanning sessions of the store, + the store's events without a position when
    /// scanned), never a pass over other onboardings.
    ///
    /// **From a time on.** Ranges that start at a time `t` and have no end (the planner's bound for `started >= t`,
    /// whose sessions have every event at or after `t`), over whole onboardings or the whole store, are folded from
    /// scans from `t` (see ``sinceStart(_:)``): of the sessions with events there, only those a `started >= t` filter
    /// can keep are folded (the first event stored for the session in the onboarding at or after `t`, and no event
    /// before `t` that came in later: `Snapshot.forEachRecord(arrivedSince:before:onboardings:_:)` finds those), and
    /// they are delivered in the order the scan first meets them, as the session-index path lists them. A session
    /// left out has an event before `t`: the filter, which is checked on every summary, would drop it anyway.
    /// Cost: O(sessions of the scope in `onboarding_sessions` + events from `t` on + the batches stored since the
    /// earliest of those events), never the events before `t`.
    func foldOnboardings(
        _ snapshot: Snapshot, _ ranges: [ScanRange], strings: SnapshotStrings, needs: FoldNeeds,
        cancellation: CancellationFlag?, text: String,
        name: (StringID) throws(QueryError) -> String, tick: () throws(QueryError) -> Void, expecting: (Int) -> Void,
        _ body: (SessionSummary, [Value], Int) throws(QueryError) -> Bool
    ) throws -> Bool {
        let since = StoreEventSource.sinceStart(ranges)
        guard !ranges.isEmpty,
            since != nil
                || ranges.allSatisfy({
                    $0.onboarding != nil && $0.screens == ScanRange.allScreens && $0.time == ScanRange.allTime
                })
        else { return false }
        let all = try snapshot.onboardings()
        var scope: [StringID] = []
        if ranges.count == 1, ranges[0].onboarding == nil {
            // The whole store from `since` on: every onboarding in key order, the events without a position last.
            scope = all.map { $0.id ?? RecordFormat.noOnboarding }.sorted()
        }
        for range in ranges where range.onboarding != nil {
            if let id = all.first(where: { $0.onboardingID == range.onboarding! })?.id, !scope.contains(id) {
                scope.append(id)
            }
        }
        let eventsInScope = all.reduce(0) { $0 + (scope.contains($1.id ?? RecordFormat.noOnboarding) ? $1.events : 0) }
        // The default ratio, 0, needs no count of the store's sessions (`stats()` reads a dozen keys).
        let ratio = StoreEventSource.onboardingScanRatio
        guard ratio == 0 ? eventsInScope > 0 : Double(try snapshot.stats().sessions) * ratio < Double(eventsInScope)
        else {
            return false
        }

        // The sessions in scope, in the order the index path delivers them (from `since` on: those whose first
        // event stored in the onboarding is not before it, delivered in the order the scan meets them).
        let lists = try scope.map { onboarding in
            try since.map {
                try snapshot.sessionIDs(ofOnboarding: onboarding, firstStoredFrom: Timestamp(microseconds: $0))
            }
                ?? snapshot.sessionIDs(ofOnboarding: onboarding)
        }
        var ids: [StringID] = []
        if lists.count == 1 {
            // One onboarding's list has each session once (its keys are onboarding ‖ session).
            ids = lists[0]
        } else {
            // A session in two onboardings of the scope is listed in both. The table sized for them all at once:
            // growing it rewrote it into fresh pages each time (a new process pays a page fault for each).
            var slots = SessionSlots(capacity: lists.reduce(0) { $0 + $1.count })
            for listed in lists {
                for session in listed where slots.slot(session).inserted { ids.append(session) }
            }
        }
        // Placed in id order: the scan's lookups then sweep the table (see `SessionSlots.init(ordered:)`).
        let table = SessionSlots(ordered: ids)
        let slotsInScope = table.count
        // Sessions with events outside their onboarding's range (or in two onboardings of the scope) are read
        // whole through the session index instead.
        // The store's whole spanning list against the scope's table: one probe each, cheaper than
        // `spanningSessions(ofOnboarding:)`'s `mdb_get` per listed session, and it covers every onboarding of
        // the scope at once. Sessions in several onboardings are read through the session index; those whose
        // only other key is "no position" are folded from the scans, the no-position range included, when
        // scanning that range (the store's events without a position) is cheaper than reading them.
        var spanning = [Bool](repeating: false, count: slotsInScope)
        var unpositioned: [Int] = []
        try snapshot.forEachSpanningSession { entry in
            guard let slot = table.existingSlot(entry.id) else { return }
            if entry.inSeveralOnboardings { spanning[slot] = true } else { unpositioned.append(slot) }
        }
        var scanUnpositioned = false
        if since != nil {
            // Read whole: the scans from `since` find their late events only in the scope's onboardings.
            for slot in unpositioned { spanning[slot] = true }
        } else if !unpositioned.isEmpty {
            let unpositionedEvents = all.first { $0.id == RecordFormat.noOnboarding }?.events ?? 0
            let perSession = Double(eventsInScope) / Double(max(slotsInScope, 1))
            // A session-index read costs about 16 times a scanned event (see `onboardingScanRatio`).
            scanUnpositioned = Double(unpositionedEvents) < 16 * perSession * Double(unpositioned.count)
            if !scanUnpositioned { for slot in unpositioned { spanning[slot] = true } }
        }
        let folds = FoldStorage(capacity: needs.lean ? 0 : slotsInScope)
        let screensInScope = all.reduce(0) {
            scope.contains($1.id ?? RecordFormat.noOnboarding) ? max($0, $1.maxTotalScreens) : $0
        }
        let lean =
            needs.lean
            ? LeanFolds(
                capacity: slotsInScope, events: eventsInScope, reachTimes: needs.reachTimes,
                outcomes: needs.leanOutcomes, lasts: needs.lasts,
                // Sessions in several onboardings are read through the index (`spanning` below), not folded here.
                oneOnboarding: true,
                rowScreens: LeanFolds.rowScreens(screens: screensInScope, sessions: slotsInScope, events: eventsInScope)
            )
            : nil
        if let lean {
            lean.append(count: slotsInScope)
            for slot in 0..<slotsInScope where spanning[slot] { lean.base[slot].excluded = true }
        } else {
            for _ in 0..<slotsInScope { _ = folds.append(SessionFold()) }
        }
        // All the scan's state in one struct, mutated through one access per event: a local function capturing
        // variables pays a dynamic exclusivity check per event.
        // From a time on, the sessions are delivered in the order one scan meets them; split, each worker keeps where
        // it met each session first instead (``FirstMet/init(splitOver:scope:)``).
        var met = since.map { _ in
            StoreEventSource.threads > 1
                ? FirstMet(splitOver: slotsInScope, scope: scope) : FirstMet(slots: slotsInScope)
        }
        var scan = ScopeScan(
            table: table, elsewhere: spanning, folds: folds, lean: lean, met: met, cancellation: cancellation,
            text: text)
        needs.stepTests?.limit(sessions: slotsInScope, events: eventsInScope)
        if needs.stepTests?.overBudget == true { return true }  // a strict funnel of more events than the budget
        let time = since.map { StoreEventSource.storeTimeRange($0...Int64.max) } ?? nil
        let split = try foldInParallel(
            snapshot, ranges, into: &scan, needs: needs, cancellation: cancellation, text: text)
        if let first = met, first.isSplit {
            if split {
                first.orderSplit()
            } else {
                // One scan in key order meets the sessions in their order itself (nothing was read yet).
                met = FirstMet(slots: slotsInScope)
                scan = ScopeScan(
                    table: table, elsewhere: spanning, folds: folds, lean: lean, met: met,
                    cancellation: cancellation, text: text)
            }
        }
        if !split {
            for onboarding in scope {
                try scan.scan(snapshot, onboarding: onboarding, time: time, strings: strings, needs: needs)
                // Over its budget, a custom funnel's scan stopped: the caller reads sessions as rows instead.
                if needs.stepTests?.overBudget == true { return true }
            }
        } else if needs.stepTests?.overBudget == true {
            return true
        }
        var late: [Bool] = []
        if let since, let met {
            // A session met from `since` on whose first stored event is at or after it may have an event before it
            // that came in later (so after the first seq the scan met it by): such a session fails `started >= since`.
            late = [Bool](repeating: false, count: slotsInScope)
            if let from = met.lateArrivalsStart(excluding: &spanning) {
                var sinceTick = 0
                try snapshot.forEachRecord(
                    arrivedSince: from, before: Timestamp(microseconds: since), onboardings: Set(scope)
                ) { record in
                    sinceTick += 1
                    if sinceTick & 4095 == 0 { try tick() }
                    if let session = try record.fields(.session).session, let slot = table.existingSlot(session) {
                        late[slot] = true
                    }
                    return true
                }
            }
        }
        if scanUnpositioned {
            // Only the scope's sessions are folded; sessions with no events in an onboarding (not in the table)
            // and sessions read through the index are skipped.
            try scan.scan(snapshot, onboarding: RecordFormat.noOnboarding, time: nil, strings: strings, needs: needs)
            if needs.stepTests?.overBudget == true { return true }
        }
        let order = met?.slots ?? Array(ids.indices)
        // The sessions read through the index, folded before any session is delivered: a custom funnel's step
        // events can pass its budget here too, and the caller then reads every session as rows, which must not
        // follow a partial delivery (it counted those sessions twice).
        var wholeFolds: [Int: SessionFold] = [:]
        for slot in order where spanning[slot] && (late.isEmpty || !late[slot]) {
            var sessionFold = SessionFold()
            try snapshot.forEachEvent(inSession: ids[slot]) { view in
                try tick()
                sessionFold.add(view, strings: strings, needs: needs)
                return true
            }
            wholeFolds[slot] = sessionFold
            if needs.stepTests?.overBudget == true { return true }
        }
        expecting(order.count)
        var reachBuffer: [Int64] = []
        for slot in order where late.isEmpty || !late[slot] {
            let id = ids[slot]
            if let sessionFold = wholeFolds[slot] {
                let summary = sessionFold.summary(name: try name(id), strings: strings, needs: needs)
                guard try body(summary, sessionFold.funnelKeys, sessionFold.events) else { return true }
            } else if let lean {
                let summary = lean.summary(
                    slot: slot, name: try name(id), strings: strings, needs: needs, reachBuffer: &reachBuffer)
                guard try body(summary, [], lean.events(slot: slot)) else { return true }
            } else {
                // Read in place: a copy of the fold would retain and release each of its arrays.
                let summary = folds.base[slot].summary(
                    name: try name(id), strings: strings, needs: needs, reachBuffer: &reachBuffer)
                guard try body(summary, folds.base[slot].funnelKeys, folds.base[slot].events) else { return true }
            }
        }
        return true
    }
}

extension StoreEventSource {
    /// Folds the events of `ranges` (whole onboardings) into `scan`'s sessions on several threads, when
    /// ``threads`` allows more than one and the store's list of onboardings says they hold enough events (see
    /// ``parts(_:_:threads:minimum:)``); returns false, having read nothing, when the fold runs on one thread.
    ///
    /// Each worker folds its parts (an onboarding, or a time slice of one) into folds of its own over the same
    /// sessions, and those are merged into `scan`'s: a session's events may lie in several parts, and a fold's
    /// merge gives what folding them all in one gives (every first and last kept with its `(time, seq)` position).
    /// A fold from a time on, which delivers its sessions in the order one scan meets them, has each worker keep where
    /// it met each session first (``FirstMet/init(splitOver:scope:)``). Snapshots that do not all read one commit fold
    /// on one thread; a custom funnel's step events are kept within its budget as
    /// ``foldSplit(_:_:into:needs:make:read:absorb:)`` says.
    ///
    /// Memory: one set of folds per worker (a lean fold's 128 bytes per session, and its rows of screen times; a
    /// full fold's 256 bytes and its arrays), merged as the workers end.
    /// - Complexity: O(events of `ranges` / workers + workers × sessions) time.
    fileprivate func foldInParallel(
        _ snapshot: Snapshot, _ ranges: [ScanRange], into scan: inout ScopeScan, needs: FoldNeeds,
        cancellation: CancellationFlag?, text: String
    ) throws -> Bool {
        var seen: Set<String> = []
        let unique = ranges.filter { $0.onboarding.map { seen.insert($0).inserted } ?? true }
        let model = scan
        return try foldSplit(
            snapshot, unique, into: &scan, needs: needs,
            make: { model.partner(cancellation: cancellation, text: text) },
            read: { scan, snapshot, part, needs in
                try scan.scan(
                    snapshot, onboarding: part.onboarding, time: StoreEventSource.storeTimeRange(part.time),
                    strings: SnapshotStrings(snapshot), needs: needs)
            },
            absorb: { scan, other in try scan.merge(other) })
    }
}

/// The slots a scan meets, in the order it first meets them, and the smallest seq it met each by.
///
/// **Split** across threads, each worker's keeps instead where it met each session first, in the order one scan of the
/// scope reads (the onboarding's place in the scope, then its key: screen, time, seq), whatever parts it read and in
/// whichever order their blocks came; merged by minimum (``merge(_:)``), the positions give the order one scan first
/// meets the sessions in (``orderSplit()``).
private final class FirstMet {
    @exclusivity(unchecked) private var firstSeq: [UInt64]
    @exclusivity(unchecked) private(set) var slots: [Int] = []
    /// Split: by slot, the first position met (empty for one scan).
    @exclusivity(unchecked) private var firsts: [EventAddress] = []
    /// Split: each onboarding of the scope's place in it, and the place of the onboarding being read.
    private let places: [StringID: UInt64]
    @exclusivity(unchecked) private var place: UInt64 = 0
    let isSplit: Bool

    init(slots count: Int) {
        firstSeq = [UInt64](repeating: .max, count: count)
        places = [:]
        isSplit = false
    }

    /// A worker's, of a scan split across threads over `scope`'s onboardings.
    init(splitOver count: Int, scope: [StringID]) {
        firstSeq = [UInt64](repeating: .max, count: count)
        firsts = [EventAddress](repeating: .last, count: count)
        var places: [StringID: UInt64] = [:]
        for (place, onboarding) in scope.enumerated() where places[onboarding] == nil {
            places[onboarding] = UInt64(place)
        }
        self.places = places
        isSplit = true
    }

    private init(splitOver count: Int, places: [StringID: UInt64]) {
        firstSeq = [UInt64](repeating: .max, count: count)
        firsts = [EventAddress](repeating: .last, count: count)
        self.places = places
        isSplit = true
    }

    /// An empty one for another worker of the same split scan.
    func partner() -> FirstMet { FirstMet(splitOver: firstSeq.count, places: places) }

    /// Told that the events of `onboarding` come next (split: its place in the scope; the events without a position
    /// come after every onboarding).
    func enter(_ onboarding: StringID) {
        if isSplit { place = places[onboarding] ?? UInt64(places.count) }
    }

    @inline(__always)
    func meet(_ slot: Int, seq: UInt64, screen: UInt16, time: Int64) {
        if isSplit { return meetSplit(slot, seq: seq, screen: screen, time: time) }
        let first = firstSeq[slot]
        if seq < first {
            if first == .max { slots.append(slot) }
            firstSeq[slot] = seq
        }
    }

    /// Not inlined: the scans' loops stay as small as they were before scans from a time on split (inlined, it kept
    /// the record's decoding out of the lean loop: a busiest onboarding's funnel at 50 000 sessions, which never
    /// splits from a time on, took 220 M instructions instead of 188 M).
    @inline(never)
    private func meetSplit(_ slot: Int, seq: UInt64, screen: UInt16, time: Int64) {
        if seq < firstSeq[slot] { firstSeq[slot] = seq }
        let at = EventAddress(group: place << 16 | UInt64(screen), time: time, seq: seq)
        if at < firsts[slot] { firsts[slot] = at }
    }

    /// Takes another worker's positions in: the earlier of each.
    /// - Complexity: O(slots).
    func merge(_ other: FirstMet) {
        for slot in firsts.indices {
            if other.firsts[slot] < firsts[slot] { firsts[slot] = other.firsts[slot] }
            if other.firstSeq[slot] < firstSeq[slot] { firstSeq[slot] = other.firstSeq[slot] }
        }
    }

    /// Orders the slots met by the workers' merged positions: the order one scan first meets them.
    /// - Complexity: O(slots × log slots).
    func orderSplit() {
        slots = firsts.indices.filter { firsts[$0] != .last }.sorted { firsts[$0] < firsts[$1] }
    }

    /// Where the pass over late arrivals starts: the smallest first seq of the sessions met that are not read
    /// through the index (`elsewhere`); `nil` when there are none. A few sessions met by seqs far below the others
    /// (an event with a clock far ahead, stored long before the rest, would make the pass read every block of the
    /// scope) are moved to the index instead, when that shortens the pass by more than about
    /// 4 096 seqs per session moved (a session read through the index costs about what the pass spends on that
    /// many seqs of batch listings).
    func lateArrivalsStart(excluding elsewhere: inout [Bool]) -> UInt64? {
        let read = elsewhere
        let seqs = slots.filter { !read[$0] }.map { firstSeq[$0] }.sorted()
        guard let lowest = seqs.first else { return nil }
        let k = min(seqs.count - 1, max(64, seqs.count / 64))
        let cut = seqs[k]
        guard cut - lowest > UInt64(k) * UInt64(StoreEventSource.lateArrivalSeqsPerIndexRead) else { return lowest }
        for slot in slots where !read[slot] && firstSeq[slot] < cut { elsewhere[slot] = true }
        return cut
    }
}

/// The state of the scans of whole onboardings: the scope's sessions by id, which of them are read through the
/// session index instead (`elsewhere`), and their folds by slot.
private struct ScopeScan {
    let table: SessionSlots
    let elsewhere: [Bool]
    /// The folds of a full fold; empty for a lean one.
    let folds: FoldStorage
    /// The folds of a lean fold (``FoldNeeds/lean``), with the sessions read elsewhere marked `excluded`.
    let lean: LeanFolds?
    /// For a scan from a time on: the slots in the order the scan meets them.
    let met: FirstMet?
    var ticker: CancellationTicker

    init(
        table: SessionSlots, elsewhere: [Bool], folds: FoldStorage, lean: LeanFolds?, met: FirstMet?,
        cancellation: CancellationFlag?, text: String
    ) {
        self.table = table
        self.elsewhere = elsewhere
        self.folds = folds
        self.lean = lean
        self.met = met
        ticker = CancellationTicker(cancellation: cancellation, text: text)
    }

    /// A scan of the same sessions into empty folds of its own (a worker's share of a scan split by key range, merged
    /// back with ``merge(_:)``), with its own copies of the session table and of `elsewhere`: read by every event,
    /// storage shared with the other workers would share its reference count's cache line too.
    func partner(cancellation: CancellationFlag?, text: String) -> ScopeScan {
        let theirs = FoldStorage(capacity: lean == nil ? folds.count : 0)
        if lean == nil { theirs.append(SessionFold(), count: folds.count) }
        return ScopeScan(
            table: table.unshared(), elsewhere: elsewhere.map { $0 }, folds: theirs,
            lean: lean.map { LeanFolds(sameSessionsAs: $0) }, met: met?.partner(), cancellation: cancellation,
            text: text)
    }

    /// Folds what a ``partner(cancellation:text:)`` folded into this scan's sessions.
    /// - Complexity: O(sessions).
    func merge(_ other: ScopeScan) throws(QueryError) {
        if let met, let theirs = other.met { met.merge(theirs) }
        if let lean, let theirs = other.lean {
            try lean.merge(theirs)
        } else {
            for slot in 0..<min(folds.count, other.folds.count) { folds.base[slot].merge(other.folds.base[slot]) }
        }
    }

    /// The lean loop of ``scan(_:onboarding:time:strings:needs:)``, specialized for `Outcomes`.
    private mutating func scanLean<Outcomes: LeanExtent>(
        _ snapshot: Snapshot, onboarding: StringID, time: Range<Timestamp>?, _ lean: LeanFolds, _: Outcomes.Type,
        strings: SnapshotStrings
    ) throws {
        let settings = lean.settings
        // A lean fold does not depend on the order of a group's events (each first and last is kept with its
        // (time, seq) position; a run's events, one block's, are in that order): without `met` recording the order
        // sessions are first met in (a split one keeps minima), the blocks are read one at a time, unmerged, which lets the store read a
        // block that sits alone in its part of the file with `pread` instead of a page fault
        // (`Snapshot.forEachBlockRun`: the first query of a process on an onboarding of a store as ingested).
        func fold(_ run: inout EventRun) throws -> Bool {
            // Consecutive events of a group are often the same session's (a session's events at one screen come
            // close together in time; 62 % of a median onboarding's events at 1 M sessions): its slot is reused
            // without a lookup (-1: not in the scope), and once one of its events in the run is folded, the later
            // ones change only what `LeanFolds.addFollowing` updates.
            var lastSession = RecordFormat.absent, lastSlot = -1, lastFolded = false, events = 0
            var lastClient = RecordFormat.absent
            while let record = try run.next() {
                let seq = record.seq
                let fields = try record.fields(Outcomes.extent)
                guard let session = fields.session else { continue }
                if session != lastSession {
                    lastSession = session
                    lastSlot = table.existingSlot(session) ?? -1
                    lastFolded = false
                }
                let slot = lastSlot
                guard slot >= 0 else { continue }
                met?.meet(slot, seq: seq, screen: run.screen, time: fields.timeMicroseconds)
                if lastFolded {
                    lean.addFollowing(slot: slot, fields, seq: seq, previousClient: lastClient, settings)
                } else {
                    guard !lean.base[slot].excluded else { continue }
                    try lean.add(slot: slot, fields, seq: seq, settings)
                    lastFolded = true
                }
                lastClient = fields.screenClientRef
                events &+= 1
                if Outcomes.outcomes {
                    lean.addOutcome(
                        slot: slot, kind: fields.kind, name: fields.analyticsName,
                        at: OrderKey(time: fields.timeMicroseconds, seq: seq), strings: strings)
                }
            }
            try ticker.tick(events)
            return true
        }
        // A split scan's positions are minima, whatever order its blocks come in.
        if met?.isSplit ?? true {
            try snapshot.forEachBlockRun(onboarding: onboarding, time: time, fold)
        } else {
            try snapshot.forEachRun(onboarding: onboarding, time: time, fold)
        }
    }

    /// Folds the events of one onboarding (``RecordFormat/noOnboarding``: the events without a position) into
    /// the scope's sessions. The loop is chosen once: a lean fold reads only up to each record's session.
    /// Records come a block at a time, so the loop over them is inlined here.
    mutating func scan(
        _ snapshot: Snapshot, onboarding: StringID, time: Range<Timestamp>?, strings: SnapshotStrings,
        needs: FoldNeeds
    ) throws {
        met?.enter(onboarding)
        if let lean {
            if lean.outcomes {
                try scanLean(snapshot, onboarding: onboarding, time: time, lean, WithOutcomes.self, strings: strings)
            } else {
                try scanLean(snapshot, onboarding: onboarding, time: time, lean, WithoutOutcomes.self, strings: strings)
            }
        } else {
            try snapshot.forEachRun(onboarding: onboarding, time: time) { run in
                while let record = try run.next() {
                    let fields = try record.fields(.all)
                    guard let session = fields.session, let slot = table.existingSlot(session) else { continue }
                    met?.meet(slot, seq: record.seq, screen: run.screen, time: fields.timeMicroseconds)
                    guard !elsewhere[slot] else { continue }
                    try ticker.tick()
                    try folds.base[slot].add(
                        fields, seq: record.seq, full: { () throws in try record.view() },
                        strings: strings, needs: needs)
                }
                return needs.stepTests?.overBudget != true
            }
        }
    }
}
