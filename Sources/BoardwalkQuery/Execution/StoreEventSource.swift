import BoardwalkCodec
import BoardwalkModel
import BoardwalkStore

/// The LMDB store as an ``EventSource``: event scans read only the key ranges of the plan; sessions are folded
/// from scans of their onboardings' keys, or read whole, gathered from such scans or through the store's
/// session index, whichever costs less.
///
/// Each scan runs in one read transaction (``Store/read(_:)``), so it sees one consistent snapshot and never
/// blocks or modifies writers. Scans hand out ``StoreEventRow``s, which read fields from the borrowed record
/// views on demand (strings resolved once per scan); no owned ``Event`` is built.
public struct StoreEventSource: EventSource, Sendable {
    public let store: Store

    /// How many events the onboardings in scope must hold per (onboarding, session) pair of the store before a
    /// `sessions` query on whole onboardings scans their key ranges rather than reading each session through the
    /// session index (see `foldOnboardings`). 0, the default, always scans: the scan reads only the scope's
    /// sessions and events plus the store's spanning sessions, about 400 instructions per event for a screen
    /// funnel (1 200-1 500 when each event was read through a full `RecordView`), against about 1 650 per event
    /// for the batched session-index read (`Snapshot.forEachSession`, session 4; about 24 000 one session at a
    /// time in store format 2), record decoding included. Tests bind infinity to force the session index path
    /// and compare. Task-local rather than a stored property: clients compiled against
    /// the struct's layout stay valid.
    @TaskLocal static var onboardingScanRatio = 0.0

    public init(_ store: Store) { self.store = store }

    public var sessionAccess: String {
        "store's session index (session, time, seq); sessions of a whole onboarding from its onboarding_sessions index"
    }

    /// Runs `body`, turning store errors into ``QueryError``s of kind `.source`.
    func reading(_ body: (Snapshot) throws -> Void) throws(QueryError) {
        do {
            try store.read(body)
        } catch let error as QueryError {
            throw error
        } catch {
            // Damage LMDB met on its own pages (QA, session 16: the raw text said nothing of what to do).
            let damage = (error as? StoreError)?.meansDamage == true
                ? "; the store's file is damaged: `boardwalk check` lists the damage, `boardwalk export --salvage` reads what is left"
                : ""
            throw QueryError(.source, "the store failed while the query ran: \(error)" + damage)
        }
    }

    /// The interned id of onboarding `name`, from the store's list of onboardings; nil when it has no events.
    ///
    /// Not `Snapshot.id(of:)`: depending on the store's version that can load every string of the store into
    /// memory on first use (measured: 42 % of a median-size onboarding's funnel at 100 k sessions), while the
    /// onboardings are a few dozen entries.
    static func onboardingID(_ snapshot: Snapshot, _ name: String) throws -> StringID? {
        try snapshot.onboardings().first { $0.onboardingID == name }?.id
    }

    /// Calls `body` for the views in `range`; returns false when `body` asked to stop.
    @discardableResult
    private static func scan(_ snapshot: Snapshot, _ range: ScanRange, _ body: (EventView) throws -> Bool) throws -> Bool {
        try forEachRun(snapshot, range) { run in
            while let record = try run.next() {
                guard try body(try record.view()) else { return false }
            }
            return true
        }
    }

    public func scanEvents(_ range: ScanRange, _ body: (StoreEventRow) throws(QueryError) -> Bool) throws(QueryError) {
        try reading { snapshot in
            let strings = StringCache(snapshot)
            try StoreEventSource.scan(snapshot, range) { view in
                try body(StoreEventRow(view: view, strings: strings))
            }
        }
    }

    /// The onboarding ids with events in the store, from its list of onboardings (one entry each).
    public func onboardingNames() throws(QueryError) -> [String]? {
        var names: [String] = []
        try reading { snapshot in names = try snapshot.onboardings().compactMap(\.onboardingID) }
        return names
    }

    /// The number of distinct sessions in the store, from the counter the writer keeps (``StoreStats/sessions``).
    /// - Complexity: O(1): a few keys of the `meta` database.
    func sessionCount() throws(QueryError) -> Int {
        var count = 0
        try reading { snapshot in count = try snapshot.stats().sessions }
        return count
    }

    /// The distinct sessions with an event in `ranges`, in first-seen order, each with the onboarding key it was
    /// first seen at; memory grows with sessions (two id lists, and a bit per string id of the store to tell which
    /// were seen).
    ///
    /// A whole onboarding's sessions come from its `onboarding_sessions` entries; any other range is scanned in
    /// key order reading each record only up to its session reference (`RecordFields` extent `.session`): what
    /// that skips is decoded, and checked, when the sessions' events are read.
    private static func sessions(_ snapshot: Snapshot, _ ranges: [ScanRange]) throws -> ListedSessions {
        var listed = ListedSessions()
        var seen = SessionBitmap()
        for range in ranges {
            if let onboarding = range.onboarding, range.screens == ScanRange.allScreens, range.time == ScanRange.allTime {
                // The `onboarding_sessions` index holds exactly the (onboarding, session) pairs of the events:
                // no need to read the onboarding's events to find its sessions.
                guard let id = try onboardingID(snapshot, onboarding) else { continue }
                for session in try snapshot.sessionIDs(ofOnboarding: id) where seen.insert(session) {
                    listed.ids.append(session)
                    listed.onboardings.append(id)
                }
                continue
            }
            try forEachRun(snapshot, range) { run in
                while let record = try run.next() {
                    if let session = try record.fields(.session).session, seen.insert(session) {
                        listed.ids.append(session)
                        listed.onboardings.append(record.keyOnboarding)
                    }
                }
                return true
            }
        }
        return listed
    }

    /// Calls `body` once, inside one read transaction, with the sessions among `names` that have an event in
    /// `ranges`, each with all of its events as rows in `(time, seq)` order, in the order a key-order scan of the
    /// ranges first meets them. Each name is looked up in the store's dictionary and its events read through the
    /// session index: the cost is that of the sessions, not of the ranges (a query for one session of a 33 M-event
    /// store scanned every event before).
    ///
    /// The rows are valid only inside `body`.
    /// - Complexity: up to four names, one pass over the store's strings (`Snapshot.findIDs(of:)`); more, one load
    ///   of the dictionary and a hash look-up each; then O(log N) per bucket and per block holding the
    ///   sessions' events (`Snapshot.forEachSession`).
    func forNamedSessions(_ names: [String], ranges: [ScanRange],
                          _ body: ([(id: String, rows: [StoreEventRow])]) throws(QueryError) -> Void) throws(QueryError) {
        try reading { snapshot in
            let strings = StringCache(snapshot)
            // A few names are compared with the stored strings in place, in one pass; more load the dictionary once.
            let ids = names.count <= 4 ? try snapshot.findIDs(of: names).compactMap { $0 }
                : try names.compactMap { try snapshot.id(of: $0) }
            var found: [(id: String, rows: [StoreEventRow], first: KeyPosition)] = []
            try snapshot.forEachSession(ids) { id, records in
                let rows = try records.map { StoreEventRow(view: try $0.view(), strings: strings) }
                guard let first = rows.compactMap({ KeyPosition($0, in: ranges) }).min() else { return true }
                guard let name = snapshot.string(for: id) else {
                    throw QueryError(.source, "session id \(id) is not in the store's dictionary")
                }
                found.append((name, rows, first))
                return true
            }
            found.sort { $0.first < $1.first }
            try body(found.map { ($0.id, $0.rows) })
        }
    }

    /// The rows that fall in one of `ranges`, in the order a scan of the ranges, one after the other, hands them
    /// out: by range, then by key (onboarding id, screen, time, seq).
    static func keyOrdered(_ rows: [StoreEventRow], in ranges: [ScanRange]) -> [StoreEventRow] {
        rows.compactMap { row in KeyPosition(row, in: ranges).map { (row, $0) } }.sorted { $0.1 < $1.1 }.map(\.0)
    }

    /// Where a scan of ranges meets an event: the first range holding it, then its key.
    struct KeyPosition: Comparable {
        var range: Int
        var onboarding: StringID
        var screen: UInt16
        var time: Int64
        var seq: UInt64

        /// `nil` when no range holds the row.
        init?(_ row: StoreEventRow, in ranges: [ScanRange]) {
            let view = row.view
            let onboarding = view.onboarding.flatMap { row.strings.string($0) }
            guard let range = ranges.firstIndex(where: {
                $0.contains(onboarding: onboarding, screen: view.screenIndex, time: view.time.microseconds)
            }) else { return nil }
            self.range = range
            self.onboarding = view.onboarding ?? RecordFormat.noOnboarding
            screen = view.screenIndex.map { UInt16(clamping: $0) } ?? RecordFormat.noScreen
            time = view.time.microseconds
            seq = view.seq
        }

        static func < (a: KeyPosition, b: KeyPosition) -> Bool {
            (a.range, a.onboarding, a.screen, a.time, a.seq) < (b.range, b.onboarding, b.screen, b.time, b.seq)
        }
    }

    /// How many seqs of the pass over late arrivals a session read through the index is taken to cost, when a
    /// scan from a time on moves the sessions met by the lowest seqs to the index (see `FirstMet`); tests bind 0
    /// to move them whenever they are below the others. Task-local, as ``onboardingScanRatio``.
    @TaskLocal static var lateArrivalSeqsPerIndexRead = 4096

    /// The references a batch of the session index path aims at (`Snapshot.defaultSessionBatchReferences`) when
    /// ``scanSessions(_:_:)`` reads sessions through the index; tests bind small values to read many batches.
    /// Task-local, as ``onboardingScanRatio``.
    @TaskLocal static var sessionBatchReferences = Snapshot.defaultSessionBatchReferences

    /// Calls `body` with each session that has an event in `ranges`, in first-seen order, and all of its events in
    /// (time, seq) order: gathered from scans of the sessions' onboardings when they hold enough of those
    /// onboardings' events (`gatherSessions`), else read through the session index in batches
    /// (`Snapshot.forEachSession(_:time:batchReferences:_:)`), each block holding their events walked about once
    /// per batch.
    public func scanSessions(_ ranges: [ScanRange], _ body: (String, [StoreEventRow]) throws(QueryError) -> Bool) throws(QueryError) {
        try scanSessions(ranges, cancellation: nil, text: "", body)
    }

    /// ``scanSessions(_:_:)`` that also checks `cancellation` while it scans records no session is delivered for
    /// (the executor checks it per row delivered).
    public func scanSessions(_ ranges: [ScanRange], cancellation: CancellationFlag?, text: String,
                      _ body: (String, [StoreEventRow]) throws(QueryError) -> Bool) throws(QueryError) {
        try readSessions(ranges, cancellation: cancellation, text: text,
                         row: { record, strings in StoreEventRow(view: try record.view(), strings: strings) }, body)
    }

    /// ``scanSessions(_:cancellation:text:_:)`` with each event read through `RecordFields` (its leading fields,
    /// without decoding or validating the rest), for queries that read no other field (``Plan/leanEvents``).
    func scanSessionFields(_ ranges: [ScanRange], cancellation: CancellationFlag?, text: String,
                           _ body: (String, [StoreFieldsRow]) throws(QueryError) -> Bool) throws(QueryError) {
        try readSessions(ranges, cancellation: cancellation, text: text,
                         row: { record, strings in StoreFieldsRow(fields: try record.fields(.all), seq: record.seq, strings: strings) },
                         body)
    }

    /// Each session with an event in `ranges`, in first-seen order, with all of its events as rows in (time, seq)
    /// order: gathered from scans of their onboardings (``gatherSessions(_:_:checkCancellation:_:)``)
    /// when that is cheaper, else read through the session index in batches.
    private func readSessions<Row>(_ ranges: [ScanRange], cancellation: CancellationFlag?, text: String,
                                   row: (EventRecord, StringCache) throws -> Row,
                                   _ body: (String, [Row]) throws(QueryError) -> Bool) throws(QueryError) {
        let batchReferences = StoreEventSource.sessionBatchReferences
        try reading { snapshot in
            let strings = StringCache(snapshot)
            let listed = try StoreEventSource.sessions(snapshot, ranges)
            // Reused from session to session. Records stay valid for the whole read transaction, so a session's
            // rows can be kept together.
            var rows: [Row] = []
            func deliver(_ id: StringID, _ records: some Sequence<EventRecord>) throws -> Bool {
                rows.removeAll(keepingCapacity: true)
                for record in records { rows.append(try row(record, strings)) }
                guard let name = snapshot.string(for: id) else {
                    throw QueryError(.source, "session id \(id) is not in the store's dictionary")
                }
                return try body(name, rows)
            }
            func checkCancellation() throws(QueryError) {
                if cancellation?.isCancelled == true { throw QueryError(.cancelled, "the query was cancelled", in: text) }
            }
            if try StoreEventSource.gatherSessions(snapshot, listed, checkCancellation: checkCancellation, deliver) { return }
            try snapshot.forEachSession(listed.ids, batchReferences: batchReferences, deliver)
        }
    }

}

/// A set of string ids as one bit each, grown to the largest id inserted (ids are dense from 0).
private struct SessionBitmap {
    var words: [UInt64] = []

    /// Adds `id`; `false` when it was there already.
    @inline(__always)
    mutating func insert(_ id: StringID) -> Bool {
        let w = Int(id >> 6)
        if w >= words.count { words.append(contentsOf: repeatElement(0, count: max(w + 1 - words.count, words.count))) }
        let bit = UInt64(1) << UInt64(id & 63)
        if words[w] & bit != 0 { return false }
        words[w] |= bit
        return true
    }
}

extension StoreEventSource {
    /// Calls `body` with the summary of each session that has an event in `ranges`, in the order
    /// ``scanSessions(_:_:)`` would deliver them, with the breakdown values of a screen funnel (see
    /// ``FoldNeeds/funnelBy``) and the number of events folded; stops when `body` returns false.
    ///
    /// When the ranges are the whole store, one sequential scan in key order folds every event into its
    /// session's ``SessionFold`` (no session index read); memory grows with sessions, not events, except for
    /// the step events a custom funnel's folds keep, which are bounded (``StepTests/limit(sessions:events:)``): over
    /// that bound the scan stops and nothing is delivered, and the caller reads sessions as rows instead
    /// (``StepTests/overBudget``). Otherwise each session's events are folded through the session index, as
    /// ``scanSessions(_:_:)`` reads them.
    ///
    /// `expecting` is told, before the first delivery when it is known, how many sessions at most will be delivered
    /// (a hint: buffers sized to it grow no more, and copying a growing buffer touches fresh pages, each a page fault
    /// in a new process).
    func foldSessions(_ ranges: [ScanRange], needs: FoldNeeds, cancellation: CancellationFlag?, text: String,
                      expecting: (Int) -> Void = { _ in },
                      _ body: (SessionSummary, [Value], Int) throws(QueryError) -> Bool) throws(QueryError) {
        try reading { snapshot in
            let strings = StringCache(snapshot)
            func name(_ id: StringID) throws(QueryError) -> String {
                guard needs.name else { return "" }
                guard let name = snapshot.string(for: id) else {
                    throw QueryError(.source, "session id \(id) is not in the store's dictionary")
                }
                return name
            }
            func checkCancellation() throws(QueryError) {
                if cancellation?.isCancelled == true { throw QueryError(.cancelled, "the query was cancelled", in: text) }
            }
            var sinceCheck = 0
            func tick() throws(QueryError) {
                sinceCheck += 1
                if sinceCheck >= 4096 {
                    sinceCheck = 0
                    try checkCancellation()
                }
            }
            if ranges.count == 1, ranges[0].isEverything {
                // Sessions in first-seen order of the key-order scan, as scanSessions lists them.
                let stats = try? snapshot.stats()
                let expected = stats?.sessions ?? 0
                // All the scan's mutable state in one struct, mutated through one access per event (state spread
                // over captured variables cost a dynamic exclusivity check per event).
                // Reach times in rows need the onboardings' screen counts (one short read per onboarding).
                let screens = needs.reachTimes ? (try snapshot.onboardings()).reduce(0) { max($0, $1.maxTotalScreens) } : 0
                var scan = WholeStoreScan(capacity: expected, events: stats?.events ?? 0, screens: screens, needs: needs,
                                          cancellation: cancellation, text: text)
                needs.stepTests?.limit(sessions: expected, events: stats?.events ?? 0)
                if needs.stepTests?.overBudget == true { return }  // a strict funnel of more events than the budget
                try scan.scan(snapshot, onboarding: nil, strings: strings, needs: needs)
                // Over its budget, a custom funnel's scan stopped: the caller reads sessions as rows instead.
                if needs.stepTests?.overBudget == true { return }
                let folds = scan.folds, ids = scan.ids
                expecting(ids.count)
                var reachBuffer: [Int64] = []
                if let lean = scan.lean {
                    for i in 0..<lean.count {
                        let summary = lean.summary(slot: i, name: try name(ids[i]), strings: strings, needs: needs,
                                                   reachBuffer: &reachBuffer)
                        guard try body(summary, [], lean.events(slot: i)) else { return }
                    }
                    return
                }
                for i in 0..<folds.count {
                    // Read in place: a copy of the fold would retain and release each of its arrays.
                    let summary = folds.base[i].summary(name: try name(ids[i]), strings: strings, needs: needs,
                                                        reachBuffer: &reachBuffer)
                    guard try body(summary, folds.base[i].funnelKeys, folds.base[i].events) else { return }
                }
                return
            }
            if try foldOnboardings(snapshot, ranges, strings: strings, needs: needs, cancellation: cancellation, text: text,
                                   name: name, tick: tick, expecting: expecting, body) { return }
            // Read in batches (each bucket of the session index walked once, blocks visited in key order).
            let listed = try StoreEventSource.sessions(snapshot, ranges)
            func fold(_ id: StringID, _ records: some Sequence<EventRecord>) throws -> Bool {
                var fold = SessionFold()
                for record in records {
                    try tick()
                    // The record's leading fields, and the whole record only for what needs it (answers), as the
                    // whole-store scan reads them.
                    try fold.add(try record.fields(.all), seq: record.seq, full: { () throws in try record.view() },
                                 strings: strings, needs: needs)
                }
                let summary = fold.summary(name: try name(id), strings: strings, needs: needs)
                return try body(summary, fold.funnelKeys, fold.events)
            }
            if try StoreEventSource.gatherSessions(snapshot, listed, checkCancellation: checkCancellation, fold) { return }
            try snapshot.forEachSession(listed.ids, batchReferences: StoreEventSource.sessionBatchReferences, fold)
        }
    }
}

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
    fileprivate func foldOnboardings(
        _ snapshot: Snapshot, _ ranges: [ScanRange], strings: StringCache, needs: FoldNeeds,
        cancellation: CancellationFlag?, text: String,
        name: (StringID) throws(QueryError) -> String, tick: () throws(QueryError) -> Void, expecting: (Int) -> Void,
        _ body: (SessionSummary, [Value], Int) throws(QueryError) -> Bool
    ) throws -> Bool {
        let since = StoreEventSource.sinceStart(ranges)
        guard !ranges.isEmpty, since != nil
                || ranges.allSatisfy({ $0.onboarding != nil && $0.screens == ScanRange.allScreens && $0.time == ScanRange.allTime })
        else { return false }
        let all = try snapshot.onboardings()
        var scope: [StringID] = []
        if ranges.count == 1, ranges[0].onboarding == nil {
            // The whole store from `since` on: every onboarding in key order, the events without a position last.
            scope = all.map { $0.id ?? RecordFormat.noOnboarding }.sorted()
        }
        for range in ranges where range.onboarding != nil {
            if let id = all.first(where: { $0.onboardingID == range.onboarding! })?.id, !scope.contains(id) { scope.append(id) }
        }
        let eventsInScope = all.reduce(0) { $0 + (scope.contains($1.id ?? RecordFormat.noOnboarding) ? $1.events : 0) }
        // The default ratio, 0, needs no count of the store's sessions (`stats()` reads a dozen keys).
        let ratio = StoreEventSource.onboardingScanRatio
        guard ratio == 0 ? eventsInScope > 0 : Double(try snapshot.stats().sessions) * ratio < Double(eventsInScope) else {
            return false
        }

        // The sessions in scope, in the order the index path delivers them (from `since` on: those whose first
        // event stored in the onboarding is not before it, delivered in the order the scan meets them).
        let lists = try scope.map { onboarding in
            try since.map { try snapshot.sessionIDs(ofOnboarding: onboarding, firstStoredFrom: Timestamp(microseconds: $0)) }
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
        let screensInScope = all.reduce(0) { scope.contains($1.id ?? RecordFormat.noOnboarding) ? max($0, $1.maxTotalScreens) : $0 }
        let lean = needs.lean
            ? LeanFolds(capacity: slotsInScope, events: eventsInScope, reachTimes: needs.reachTimes, outcomes: needs.leanOutcomes, lasts: needs.lasts,
                        // Sessions in several onboardings are read through the index (`spanning` below), not folded here.
                        oneOnboarding: true,
                        rowScreens: LeanFolds.rowScreens(screens: screensInScope, sessions: slotsInScope, events: eventsInScope))
            : nil
        if let lean {
            lean.append(count: slotsInScope)
            for slot in 0..<slotsInScope where spanning[slot] { lean.base[slot].excluded = true }
        } else {
            for _ in 0..<slotsInScope { _ = folds.append(SessionFold()) }
        }
        // All the scan's state in one struct, mutated through one access per event: a local function capturing
        // variables pays a dynamic exclusivity check per event.
        let met = since.map { _ in FirstMet(slots: slotsInScope) }
        var scan = ScopeScan(table: table, elsewhere: spanning, folds: folds, lean: lean, met: met, cancellation: cancellation,
                             text: text)
        needs.stepTests?.limit(sessions: slotsInScope, events: eventsInScope)
        if needs.stepTests?.overBudget == true { return true }  // a strict funnel of more events than the budget
        let time = since.map { StoreEventSource.storeTimeRange($0...Int64.max) } ?? nil
        for onboarding in scope {
            try scan.scan(snapshot, onboarding: onboarding, time: time, strings: strings, needs: needs)
            // Over its budget, a custom funnel's scan stopped: the caller reads sessions as rows instead.
            if needs.stepTests?.overBudget == true { return true }
        }
        var late: [Bool] = []
        if let since, let met {
            // A session met from `since` on whose first stored event is at or after it may have an event before it
            // that came in later (so after the first seq the scan met it by): such a session fails `started >= since`.
            late = [Bool](repeating: false, count: slotsInScope)
            if let from = met.lateArrivalsStart(excluding: &spanning) {
                var sinceTick = 0
                try snapshot.forEachRecord(arrivedSince: from, before: Timestamp(microseconds: since), onboardings: Set(scope)) { record in
                    sinceTick += 1
                    if sinceTick & 4095 == 0 { try tick() }
                    if let session = try record.fields(.session).session, let slot = table.existingSlot(session) { late[slot] = true }
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
                let summary = lean.summary(slot: slot, name: try name(id), strings: strings, needs: needs, reachBuffer: &reachBuffer)
                guard try body(summary, [], lean.events(slot: slot)) else { return true }
            } else {
                // Read in place: a copy of the fold would retain and release each of its arrays.
                let summary = folds.base[slot].summary(name: try name(id), strings: strings, needs: needs, reachBuffer: &reachBuffer)
                guard try body(summary, folds.base[slot].funnelKeys, folds.base[slot].events) else { return true }
            }
        }
        return true
    }
}

/// The slots a scan meets, in the order it first meets them, and the smallest seq it met each by.
private final class FirstMet {
    @exclusivity(unchecked) private var firstSeq: [UInt64]
    @exclusivity(unchecked) private(set) var slots: [Int] = []

    init(slots count: Int) {
        firstSeq = [UInt64](repeating: .max, count: count)
    }

    @inline(__always)
    func meet(_ slot: Int, seq: UInt64) {
        let first = firstSeq[slot]
        if seq < first {
            if first == .max { slots.append(slot) }
            firstSeq[slot] = seq
        }
    }

    /// Where the pass over late arrivals starts: the smallest first seq of the sessions met that are not read
    /// through the index (`elsewhere`); `nil` when there are none. A few sessions met by seqs far below the others
    /// (an event with a clock far ahead, stored long before the rest: the reviewer's 2030 event made the pass read
    /// every block of the scope) are moved to the index instead, when that shortens the pass by more than about
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

/// Checks the cancellation flag every 4096 events.
private struct CancellationTicker {
    let cancellation: CancellationFlag?
    let text: String
    var sinceCheck = 0

    @inline(__always)
    mutating func tick() throws(QueryError) {
        try tick(1)
    }

    /// Counts `events` at once: a lean scan counts a run's events in a register and ticks once per run (a
    /// block's events at most), instead of updating the count in memory for each.
    @inline(__always)
    mutating func tick(_ events: Int) throws(QueryError) {
        sinceCheck &+= events
        if sinceCheck >= 4096 {
            sinceCheck = 0
            if cancellation?.isCancelled == true { throw QueryError(.cancelled, "the query was cancelled", in: text) }
        }
    }
}

/// Whether a lean scan folds outcomes (``FoldNeeds/leanOutcomes``), as a type: a scan loop generic over it is
/// specialized for each, with the record's extent a constant. One loop with the extent a variable stored the fields
/// of both extents to memory for every event: callgrind, a screen funnel, 9 % more instructions on one onboarding
/// and 10 % on the whole store.
private protocol LeanExtent {
    static var outcomes: Bool { get }
}

extension LeanExtent {
    static var extent: RecordFields.Extent { outcomes ? .all : .session }
}

private enum WithOutcomes: LeanExtent {
    static var outcomes: Bool { true }
}

private enum WithoutOutcomes: LeanExtent {
    static var outcomes: Bool { false }
}

/// The state of a whole-store session fold: sessions by id, their folds in first-seen order.
private struct WholeStoreScan {
    var table: SessionSlots
    /// The folds of a full fold; empty for a lean one.
    let folds: FoldStorage
    /// The folds of a lean fold (``FoldNeeds/lean``).
    let lean: LeanFolds?
    var ids: [StringID] = []
    var ticker: CancellationTicker

    init(capacity: Int, events: Int, screens: Int, needs: FoldNeeds, cancellation: CancellationFlag?, text: String) {
        table = SessionSlots(capacity: capacity)
        folds = FoldStorage(capacity: needs.lean ? 0 : capacity)
        lean = needs.lean
            ? LeanFolds(capacity: capacity, events: events, reachTimes: needs.reachTimes, outcomes: needs.leanOutcomes, lasts: needs.lasts,
                        rowScreens: LeanFolds.rowScreens(screens: screens, sessions: capacity, events: events))
            : nil
        ids.reserveCapacity(capacity)
        ticker = CancellationTicker(cancellation: cancellation, text: text)
    }

    /// Folds the events of one onboarding (`nil`: the whole store). The loop is chosen once: a lean fold reads
    /// only up to each record's session. Records come a block at a time, so the loop over them is inlined here.
    mutating func scan(_ snapshot: Snapshot, onboarding: StringID?, strings: StringCache, needs: FoldNeeds) throws {
        if let lean {
            if lean.outcomes {
                try scanLean(snapshot, onboarding: onboarding, lean, WithOutcomes.self, strings: strings)
            } else {
                try scanLean(snapshot, onboarding: onboarding, lean, WithoutOutcomes.self, strings: strings)
            }
        } else {
            try snapshot.forEachRun(onboarding: onboarding) { run in
                while let record = try run.next() {
                    let fields = try record.fields(.all)
                    guard let session = fields.session else { continue }
                    try ticker.tick()
                    // The slot first: a new session can grow the storage, which moves `folds.base`.
                    let slot = slot(session)
                    try folds.base[slot].add(fields, seq: record.seq, full: { () throws in try record.view() },
                                             strings: strings, needs: needs)
                }
                return needs.stepTests?.overBudget != true
            }
        }
    }

    /// The lean loop of ``scan(_:onboarding:strings:needs:)``, specialized for `Outcomes`.
    private mutating func scanLean<Outcomes: LeanExtent>(_ snapshot: Snapshot, onboarding: StringID?, _ lean: LeanFolds,
                                                         _: Outcomes.Type, strings: StringCache) throws {
        let settings = lean.settings
        try snapshot.forEachRun(onboarding: onboarding) { run in
            // Consecutive events of a group are often the same session's (a session's events at one screen come
            // close together in time): its slot is reused without a lookup, and its later events in the run change
            // only what `LeanFolds.addFollowing` updates.
            var lastSession = RecordFormat.absent, lastSlot = 0, events = 0
            while let record = try run.next() {
                let fields = try record.fields(Outcomes.extent)
                guard let session = fields.session else { continue }
                events &+= 1
                if session == lastSession {
                    lean.addFollowing(slot: lastSlot, fields, seq: record.seq, settings)
                } else {
                    lastSession = session
                    lastSlot = slot(session)
                    try lean.add(slot: lastSlot, fields, seq: record.seq, settings)
                }
                let slot = lastSlot
                if Outcomes.outcomes {
                    lean.addOutcome(slot: slot, kind: fields.kind, name: fields.analyticsName,
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
        }
        return slot
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

    init(table: SessionSlots, elsewhere: [Bool], folds: FoldStorage, lean: LeanFolds?, met: FirstMet?,
         cancellation: CancellationFlag?, text: String) {
        self.table = table
        self.elsewhere = elsewhere
        self.folds = folds
        self.lean = lean
        self.met = met
        ticker = CancellationTicker(cancellation: cancellation, text: text)
    }

    /// The lean loop of ``scan(_:onboarding:time:strings:needs:)``, specialized for `Outcomes`.
    private mutating func scanLean<Outcomes: LeanExtent>(_ snapshot: Snapshot, onboarding: StringID, time: Range<Timestamp>?,
                                                         _ lean: LeanFolds, _: Outcomes.Type, strings: StringCache) throws {
        let settings = lean.settings
        // A lean fold does not depend on the order of a group's events (each first and last is kept with its
        // (time, seq) position; a run's events, one block's, are in that order): without `met`, which records the
        // order sessions are first met in, the blocks are read one at a time, unmerged, which lets the store read a
        // block that sits alone in its part of the file with `pread` instead of a page fault
        // (`Snapshot.forEachBlockRun`: the first query of a process on an onboarding of a store as ingested).
        func fold(_ run: inout EventRun) throws -> Bool {
            // Consecutive events of a group are often the same session's (a session's events at one screen come
            // close together in time; 62 % of a median onboarding's events at 1 M sessions): its slot is reused
            // without a lookup (-1: not in the scope), and once one of its events in the run is folded, the later
            // ones change only what `LeanFolds.addFollowing` updates.
            var lastSession = RecordFormat.absent, lastSlot = -1, lastFolded = false, events = 0
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
                met?.meet(slot, seq: seq)
                if lastFolded {
                    lean.addFollowing(slot: slot, fields, seq: seq, settings)
                } else {
                    guard !lean.base[slot].excluded else { continue }
                    try lean.add(slot: slot, fields, seq: seq, settings)
                    lastFolded = true
                }
                events &+= 1
                if Outcomes.outcomes {
                    lean.addOutcome(slot: slot, kind: fields.kind, name: fields.analyticsName,
                                    at: OrderKey(time: fields.timeMicroseconds, seq: seq), strings: strings)
                }
            }
            try ticker.tick(events)
            return true
        }
        if met == nil {
            try snapshot.forEachBlockRun(onboarding: onboarding, time: time, fold)
        } else {
            try snapshot.forEachRun(onboarding: onboarding, time: time, fold)
        }
    }

    /// Folds the events of one onboarding (``RecordFormat/noOnboarding``: the events without a position) into
    /// the scope's sessions. The loop is chosen once: a lean fold reads only up to each record's session.
    /// Records come a block at a time, so the loop over them is inlined here.
    mutating func scan(_ snapshot: Snapshot, onboarding: StringID, time: Range<Timestamp>?, strings: StringCache,
                       needs: FoldNeeds) throws {
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
                    met?.meet(slot, seq: record.seq)
                    guard !elsewhere[slot] else { continue }
                    try ticker.tick()
                    try folds.base[slot].add(fields, seq: record.seq, full: { () throws in try record.view() },
                                             strings: strings, needs: needs)
                }
                return needs.stepTests?.overBudget != true
            }
        }
    }
}

