import BoardwalkCodec
import BoardwalkStore

// Reading many sessions' events by scanning their onboardings' key ranges instead of the session index.
//
// A query that needs each session's events in order (`dwell`, a strict funnel, a `sessions` query whose folds
// cannot answer it) can read them through the session index, in batches (`Snapshot.forEachSession`), or, when
// the sessions hold nearly all of their onboardings' events, by scanning those onboardings' key ranges once and
// sorting the records by session: each record is read once, up to its session reference, in the order the
// blocks lie. The records are borrowed from the read transaction and gathered as they are (48 bytes each), a
// window of sessions at a time so that memory stays bounded; each window scans its onboardings again.
// Sessions whose events lie in several onboardings' ranges (the store's `spanning_sessions`) are read through
// the session index, at their place in the order. docs/query-language.md (Performance) has the measurements.

/// The sessions with an event in a query's ranges, in the order a key-order scan of the ranges first meets them
/// (a whole onboarding's in its `onboarding_sessions` order), each with the onboarding key (``RecordFormat/noOnboarding``
/// for events without a position) it was first met at.
struct ListedSessions {
    var ids: [StringID] = []
    var onboardings: [StringID] = []
}

extension StoreEventSource {
    /// How ``gatherSessions(_:_:checkCancellation:_:)`` reads, for `explain`.
    static let sessionReading =
        "gathered by scanning their onboardings' keys, a window of sessions at a time, when that "
        + "scans at most twice their events, else through the session index; sessions in spanning_sessions through the "
        + "index either way"

    /// How many scanned records a session-index read of one event is worth: sessions are gathered from scans when
    /// the windows would scan at most this many times the events expected of the sessions in scope. 0 never
    /// gathers; tests bind infinity to gather whenever the scope allows. Task-local, as ``onboardingScanRatio``.
    ///
    /// Measured by wall clock (release, dwell by screen and a strict funnel): gathering the whole
    /// 3.3 M-event store took 1.14 s against 1.34-1.48 s through the index; on the 33 M-event store 14.5 s against
    /// 14.2 s (its busiest onboarding scanned 4 times); a strict funnel of that onboarding alone (scanned 4 times for
    /// its own events) 6.1 s against 5.4 s; scopes of 13 % and 31 % of the store's events 3.3-3.5 s against
    /// 2.5-3.0 s and 6.4-7.2 s against 5.9-6.4 s. Gathering pays only when about every record scanned is wanted.
    @TaskLocal static var gatherRatio = 2.0

    /// About how many records one window of gathered sessions holds (56 bytes each with their session and
    /// position): 2²¹ records, about 120 MiB at the peak. A window scans each onboarding it has sessions of, so an
    /// onboarding with more events than this is scanned more than once (4 times for the busiest of the 33 M-event
    /// bench store, 8.3 M events). Tests bind small values to read many windows.
    @TaskLocal static var gatherBudget = 1 << 21

    /// The fewest records a window of a gathering split across threads
    /// (``scanSessionFields(_:cancellation:text:into:sharing:)``) is planned to hold: a scope of fewer than two such
    /// windows is gathered on one thread. Tests bind small values.
    @TaskLocal static var minimumWindowEvents = 1 << 16

    /// Calls `body` with each listed session and all of its events in (time, seq) order, in the order of
    /// `listed`; stops when `body` returns false.
    ///
    /// A session not in `spanning_sessions` has every event in the key range of one onboarding (or of the events
    /// without a position), the one it was listed at: its home. Like the folds of whole onboardings, this trusts
    /// `spanning_sessions`, which `check()` verifies.
    ///
    /// - Returns: false, having called nothing, when the session index is expected to be cheaper (see
    ///   ``gatherRatio``): the windows are planned first, and the records they would scan (each home once per
    ///   window that has its sessions) are weighed against the events expected of the sessions.
    /// - Parameter checkCancellation: called every 65 536 records scanned (`body` is not called for the records
    ///   of sessions out of scope or out of the window).
    /// - Complexity: O(sessions listed + spanning sessions of the store) to plan; O(events of the homes × their
    ///   windows) to scan, O(events gathered × log(events per session)) to sort; memory O(sessions) and about
    ///   ``gatherBudget`` records per window (an estimate from average session lengths, not a hard bound).
    static func gatherSessions(
        _ snapshot: Snapshot, _ listed: ListedSessions, checkCancellation: () throws -> Void,
        _ body: (StringID, UnsafeBufferPointer<EventRecord>) throws -> Bool
    ) throws -> Bool {
        guard let plan = try GatherPlan(snapshot, listed, budget: gatherBudget) else { return false }
        var buffers = GatherBuffers()
        for window in plan.windows {
            guard try plan.gather(window, snapshot, &buffers, checkCancellation: checkCancellation, body) else {
                return true
            }
        }
        return true
    }
}

/// How ``StoreEventSource/gatherSessions(_:_:checkCancellation:_:)`` reads a list of sessions: each one's home, which
/// are read through the index, and the windows of sessions, in the list's order, whose homes are scanned together.
/// Its windows are independent: each may be gathered on a thread of its own, with a snapshot of the same commit.
struct GatherPlan: Sendable {
    struct Home: Sendable {
        let onboarding: StringID
        let events: Int
        var inScope = 0
        var firstSlot = Int.max
        var lastSlot = -1
    }
    let ids: [StringID]
    /// Each listed session's position in ``ids``.
    let table: SessionSlots
    /// Whether each listed session is read through the index (in `spanning_sessions`).
    let indexed: [Bool]
    let homes: [Home]
    /// Ranges of positions in ``ids``, in order, covering them all.
    let windows: [Range<Int>]
    /// The records the windows scan, each home's events once per window that has sessions of it.
    let scanned: Int

    /// The plan for `listed` with windows of at most about `budget` records, each ended at the first home boundary
    /// after `target` records (when given: windows of a share of the scope, each home in one window unless it holds
    /// more than `budget`); nil when the session index is expected to be
    /// cheaper (``StoreEventSource/gatherRatio``), the list is empty or not distinct, or every session spans.
    /// - Complexity: O(sessions listed + spanning sessions of the store + onboardings).
    init?(_ snapshot: Snapshot, _ listed: ListedSessions, budget: Int, target: Int? = nil) throws {
        let ratio = StoreEventSource.gatherRatio
        let ids = listed.ids
        guard ratio > 0, !ids.isEmpty else { return nil }
        let n = ids.count
        var table = SessionSlots(capacity: n)
        for id in ids { _ = table.slot(id) }
        guard table.count == n else { return nil }  // not distinct: not a list this reads

        // Sessions with events in more than one onboarding's range are read through the index.
        var indexed = [Bool](repeating: false, count: n)
        try snapshot.forEachSpanningSession { entry in
            if let slot = table.existingSlot(entry.id) { indexed[slot] = true }
        }

        // The other sessions by home, with the events of each home (the store's per-onboarding counts).
        var eventsOf: [StringID: Int] = [:]
        for summary in try snapshot.onboardings() { eventsOf[summary.id ?? RecordFormat.noOnboarding] = summary.events }
        var homes: [Home] = []
        var homeIndex: [StringID: Int32] = [:]
        var homeOf = [Int32](repeating: -1, count: n)
        for slot in 0..<n where !indexed[slot] {
            let onboarding = listed.onboardings[slot]
            let h: Int32
            if let known = homeIndex[onboarding] {
                h = known
            } else {
                h = Int32(homes.count)
                homeIndex[onboarding] = h
                homes.append(Home(onboarding: onboarding, events: eventsOf[onboarding] ?? 0))
            }
            homeOf[slot] = h
            homes[Int(h)].inScope += 1
            homes[Int(h)].firstSlot = Swift.min(homes[Int(h)].firstSlot, slot)
            homes[Int(h)].lastSlot = slot
        }
        let gathered = n - indexed.count { $0 }
        guard gathered > 0 else { return nil }
        let stats = try snapshot.stats()
        let perSession = Double(stats.events) / Double(Swift.max(stats.sessions, 1))

        // The windows: sessions low..<high, about `budget` events each. A window ends before a session of another
        // home whose sessions do not fit in what is left (once it holds a quarter of the budget), so that each
        // home is scanned as few times as its size allows.
        let budget = Double(Swift.max(1, budget)), target = Double(target ?? Int.max)
        var windows: [Range<Int>] = []
        var scanned = 0
        var low = 0
        while low < n {
            var high = low + 1, events = perSession
            var lastHome = homeOf[low]
            while high < n, events + perSession <= budget {
                let home = homeOf[high]
                if home >= 0, home != lastHome {
                    if lastHome >= 0, events >= target { break }
                    if lastHome >= 0, events + Double(homes[Int(home)].inScope) * perSession > budget,
                        events >= budget / 4
                    {
                        break
                    }
                    lastHome = home
                }
                events += perSession
                high += 1
            }
            for home in homes where home.firstSlot < high && home.lastSlot >= low { scanned += home.events }
            windows.append(low..<high)
            low = high
        }
        guard Double(scanned) <= ratio * Double(gathered) * perSession else { return nil }
        (self.ids, self.table, self.indexed, self.homes, self.windows, self.scanned) =
            (ids, table, indexed, homes, windows, scanned)
    }

    /// Calls `body` with each session of `window` and its events in (time, seq) order, in the list's order; returns
    /// false when `body` did.
    /// - Parameter checkCancellation: called every 65 536 records scanned.
    /// - Complexity: O(events of the window's homes) to scan, O(events gathered × log(events per session)) to sort.
    func gather(
        _ window: Range<Int>, _ snapshot: Snapshot, _ buffers: inout GatherBuffers,
        checkCancellation: () throws -> Void,
        _ body: (StringID, UnsafeBufferPointer<EventRecord>) throws -> Bool
    ) throws -> Bool {
        try collect(window, snapshot, &buffers, checkCancellation: checkCancellation)
        var session: [EventRecord] = []
        return try deliver(window, sessions: window, buffers, scratch: &session, body)
    }

    /// Reads the records of `window`'s sessions into `buffers`, grouped by session: the first half of
    /// ``gather(_:_:_:checkCancellation:_:)``, whose sessions ``deliver(_:sessions:_:scratch:_:)`` then hands out,
    /// all at once or a run at a time on several threads (the records stay valid while `snapshot`'s transaction is
    /// open, whichever thread reads them).
    /// - Complexity: O(events of the window's homes) to scan, O(events gathered) to group.
    func collect(
        _ window: Range<Int>, _ snapshot: Snapshot, _ buffers: inout GatherBuffers,
        checkCancellation: () throws -> Void
    ) throws {
        let (low, high) = (window.lowerBound, window.upperBound)
        // The window's sessions alone in a small table: the scans look every record's session up in it, and a
        // table of the whole scope (16 MiB for a million sessions) would miss the cache on each.
        var inWindow = SessionSlots(capacity: high - low)
        var windowSlots: [Int32] = []
        for slot in low..<high where !indexed[slot] {
            _ = inWindow.slot(ids[slot])
            windowSlots.append(Int32(truncatingIfNeeded: slot - low))
        }
        buffers.records.removeAll(keepingCapacity: true)
        buffers.slotOf.removeAll(keepingCapacity: true)
        for home in homes where home.firstSlot < high && home.lastSlot >= low {
            var sinceCheck = 0
            try snapshot.forEachRun(onboarding: home.onboarding) { run in
                while let record = try run.next() {
                    sinceCheck += 1
                    if sinceCheck == 1 << 16 { try checkCancellation(); sinceCheck = 0 }
                    guard let session = try record.fields(.session).session, let i = inWindow.existingSlot(session)
                    else { continue }
                    buffers.records.append(record)
                    buffers.slotOf.append(windowSlots[i])
                }
                return true
            }
        }
        let throughIndex = (low..<high).filter { indexed[$0] }.map { ids[$0] }
        if !throughIndex.isEmpty {
            try snapshot.forEachSession(throughIndex, batchReferences: StoreEventSource.sessionBatchReferences) {
                id, sessionRecords in
                let slot = Int32(truncatingIfNeeded: table.existingSlot(id)! - low)
                buffers.records.append(contentsOf: sessionRecords)
                buffers.slotOf.append(contentsOf: repeatElement(slot, count: sessionRecords.count))
                return true
            }
        }

        // Record positions grouped by session with a counting sort (stable: each session's records keep the
        // order read). Positions rather than the records themselves: 4 bytes each instead of 48.
        buffers.starts.removeAll(keepingCapacity: true)
        buffers.starts.append(contentsOf: repeatElement(0, count: high - low + 1))
        for slot in buffers.slotOf { buffers.starts[Int(slot) + 1] += 1 }
        for i in 1..<buffers.starts.count { buffers.starts[i] += buffers.starts[i - 1] }
        var next = buffers.starts
        buffers.order.removeAll(keepingCapacity: true)
        buffers.order.append(contentsOf: repeatElement(0, count: buffers.records.count))
        for (position, slot) in buffers.slotOf.enumerated() {
            buffers.order[next[Int(slot)]] = Int32(truncatingIfNeeded: position)
            next[Int(slot)] += 1
        }
    }

    /// Calls `body` with each of `sessions` (positions in the list, within `window`) and its events in (time, seq)
    /// order, from `buffers` as ``collect(_:_:_:checkCancellation:)`` left them for `window`, in the list's order;
    /// returns false when `body` did. Reads `buffers` only: runs of one window's sessions may be delivered on several
    /// threads at once, each with a `scratch` of its own.
    /// - Complexity: O(events of the sessions × log(events per session)) to sort each session's events.
    func deliver(
        _ window: Range<Int>, sessions: Range<Int>, _ buffers: borrowing GatherBuffers,
        scratch session: inout [EventRecord],
        _ body: (StringID, UnsafeBufferPointer<EventRecord>) throws -> Bool
    ) throws -> Bool {
        precondition(window.lowerBound <= sessions.lowerBound && sessions.upperBound <= window.upperBound)
        let low = window.lowerBound
        for slot in sessions {
            session.removeAll(keepingCapacity: true)
            for position in buffers.order[buffers.starts[slot - low]..<buffers.starts[slot - low + 1]] {
                session.append(buffers.records[Int(position)])
            }
            // A scan delivers a session's events in key order (screen, then time); the index in (time, seq).
            if !indexed[slot] {
                session.sort { ($0.timeMicroseconds, $0.seq) < ($1.timeMicroseconds, $1.seq) }
            }
            guard try session.withUnsafeBufferPointer({ try body(ids[slot], $0) }) else { return false }
        }
        return true
    }
}

/// The buffers ``GatherPlan/gather(_:_:_:checkCancellation:_:)`` reuses from window to window: the window's
/// records, each one's session, their order by session, and where each session's start.
struct GatherBuffers {
    var records: [EventRecord] = []
    var slotOf: [Int32] = []
    var order: [Int32] = []
    var starts: [Int] = []
}
