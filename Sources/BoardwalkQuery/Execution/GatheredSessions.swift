import BoardwalkCodec
import BoardwalkStore

/// Reading many sessions' events by scanning their onboardings' key ranges instead of the session index.
///
/// A query that needs each session's events in order (`dwell`, a strict funnel, a `sessions` query whose folds
/// cannot answer it) reads them through the session index, in batches (`Snapshot.forEachSession`): about
/// 1 650 instructions per event, most of them finding the event's block from a session-index reference and
/// walking to it. When the sessions in scope hold a good part of their onboardings' events, scanning those
/// onboardings' key ranges in key order and sorting the events by session is cheaper: the scan reads each
/// record once, up to its session reference, in the order the blocks lie.
///
/// The records are borrowed from the read transaction, so they are gathered as they are (48 bytes each), a
/// window of sessions at a time so that memory stays bounded: each window's onboardings are scanned again
/// (``StoreEventSource/gatherBudget``). Sessions whose events lie in several onboardings' ranges (the store's
/// `spanning_sessions`) are read through the session index, at their place in the order.
extension StoreEventSource {
    /// How ``gatherSessions(_:_:onboardings:checkCancellation:_:)`` reads, for `explain`.
    static let sessionReading = "their events gathered from a scan of their onboardings' keys and sorted by session in "
        + "memory, a window of sessions at a time, or through the store's session index (session, time, seq) when the "
        + "sessions hold less than 1/16 of those onboardings' events; sessions listed in spanning_sessions (events in "
        + "several onboardings, or without a position) through the session index either way"

    /// How many scanned events a session-index read of one event is worth: sessions are gathered from scans when
    /// their onboardings hold at most this many times the events expected of the sessions in scope. 0 never
    /// gathers; tests bind infinity to gather whenever the scope allows. Task-local, as ``onboardingScanRatio``.
    @TaskLocal static var gatherRatio = 16.0

    /// About how many records one window of gathered sessions holds (56 bytes each with their session and
    /// position): 2²¹ records, about 120 MiB at the peak. A window scans each onboarding it has sessions of, so an
    /// onboarding with more events than this is scanned more than once (4 times for the busiest of the 33 M-event
    /// bench store, 8.3 M events). Tests bind small values to read many windows.
    @TaskLocal static var gatherBudget = 1 << 21

    /// Calls `body` with each of `ids` (distinct sessions, each with an event in `onboardings`' ranges, or in any
    /// onboarding's when `onboardings` is nil) and all of its events in (time, seq) order, in the order of `ids`;
    /// stops when `body` returns false.
    ///
    /// - Returns: false, having called nothing, when the session index is expected to be cheaper (see
    ///   ``gatherRatio``).
    /// - Parameter checkCancellation: called every 65 536 records scanned (`body` is not called for the records
    ///   of sessions out of scope or out of the window).
    /// - Complexity: O(events of the onboardings holding the sessions × windows) to scan, O(events gathered ×
    ///   log(events per session)) to sort; memory O(sessions + ``gatherBudget``).
    static func gatherSessions(_ snapshot: Snapshot, _ ids: [StringID], onboardings: [StringID]?,
                               checkCancellation: () throws -> Void,
                               _ body: (StringID, UnsafeBufferPointer<EventRecord>) throws -> Bool) throws -> Bool {
        let ratio = gatherRatio
        guard ratio > 0, !ids.isEmpty else { return false }
        let n = ids.count
        var table = SessionSlots(capacity: n)
        for id in ids { _ = table.slot(id) }
        guard table.count == n else { return false }  // not distinct: not a list this reads

        // Sessions with events in more than one onboarding's range are read through the index.
        var indexed = [Bool](repeating: false, count: n)
        for entry in try snapshot.spanningSessionEntries() {
            if let slot = table.existingSlot(entry.id) { indexed[slot] = true }
        }

        // Each other session's onboarding ("home"), from the onboardings' session lists.
        struct Home {
            let onboarding: StringID
            let events: Int
            let sessions: Int
            var inScope = 0
            var firstSlot = Int.max
            var lastSlot = -1
            var eventsPerSession: Double { Double(events) / Double(Swift.max(sessions, 1)) }
        }
        var homes: [Home] = []
        var homeOf = [Int32](repeating: -1, count: n)
        for summary in try snapshot.onboardings() {
            let onboarding = summary.id ?? RecordFormat.noOnboarding
            if let onboardings, !onboardings.contains(onboarding) { continue }
            let sessions = try snapshot.sessionIDs(ofOnboarding: onboarding)
            var home = Home(onboarding: onboarding, events: summary.events, sessions: sessions.count)
            for session in sessions {
                guard let slot = table.existingSlot(session), !indexed[slot], homeOf[slot] < 0 else { continue }
                homeOf[slot] = Int32(homes.count)
                home.inScope += 1
                home.firstSlot = Swift.min(home.firstSlot, slot)
                home.lastSlot = Swift.max(home.lastSlot, slot)
            }
            if home.inScope > 0 { homes.append(home) }
        }
        // A session found in no list (a store that disagrees with itself) is read through the index too.
        for slot in 0..<n where homeOf[slot] < 0 { indexed[slot] = true }

        let scanned = homes.reduce(0) { $0 + $1.events }
        let expected = homes.reduce(0.0) { $0 + Double($1.inScope) * $1.eventsPerSession }
        guard Double(scanned) <= ratio * expected else { return false }

        let averagePerSession = homes.isEmpty ? 32 : Swift.max(1, expected / Double(n - indexed.count { $0 }))
        func estimate(_ slot: Int) -> Double {
            indexed[slot] ? averagePerSession : homes[Int(homeOf[slot])].eventsPerSession
        }
        let budget = Double(Swift.max(1, gatherBudget))
        var records: [EventRecord] = []
        var slotOf: [Int32] = []  // each record's session, from the window's first
        var order: [Int32] = []
        var starts: [Int] = []
        var session: [EventRecord] = []
        var low = 0
        while low < n {
            // The window: sessions low..<high, about `budget` events. It ends before a session of another onboarding
            // whose scope does not fit in what is left, so that each onboarding is scanned as few times as its size
            // allows.
            var high = low + 1, events = estimate(low)
            var lastHome = homeOf[low]
            while high < n, events + estimate(high) <= budget {
                let home = homeOf[high]
                if home >= 0, home != lastHome {
                    if lastHome >= 0, events + Double(homes[Int(home)].inScope) * homes[Int(home)].eventsPerSession > budget,
                       events >= budget / 4 { break }
                    lastHome = home
                }
                events += estimate(high)
                high += 1
            }
            // The window's sessions alone in a small table: the scans look every record's session up in it, and a
            // table of the whole scope (16 MiB for a million sessions) would miss the cache on each.
            var window = SessionSlots(capacity: high - low)
            var windowSlots: [Int32] = []
            for slot in low..<high where !indexed[slot] {
                _ = window.slot(ids[slot])
                windowSlots.append(Int32(truncatingIfNeeded: slot - low))
            }
            records.removeAll(keepingCapacity: true)
            slotOf.removeAll(keepingCapacity: true)
            for home in homes where home.firstSlot < high && home.lastSlot >= low {
                var sinceCheck = 0
                try snapshot.forEachRun(onboarding: home.onboarding) { run in
                    while let record = try run.next() {
                        sinceCheck += 1
                        if sinceCheck == 1 << 16 { try checkCancellation(); sinceCheck = 0 }
                        guard let session = try record.fields(.session).session, let i = window.existingSlot(session) else { continue }
                        records.append(record)
                        slotOf.append(windowSlots[i])
                    }
                    return true
                }
            }
            let throughIndex = (low..<high).filter { indexed[$0] }.map { ids[$0] }
            if !throughIndex.isEmpty {
                try snapshot.forEachSession(throughIndex, batchReferences: sessionBatchReferences) { id, sessionRecords in
                    let slot = Int32(truncatingIfNeeded: table.existingSlot(id)! - low)
                    records.append(contentsOf: sessionRecords)
                    slotOf.append(contentsOf: repeatElement(slot, count: sessionRecords.count))
                    return true
                }
            }

            // Record positions grouped by session with a counting sort (stable: each session's records keep the
            // order read). Positions rather than the records themselves: 4 bytes each instead of 48.
            starts.removeAll(keepingCapacity: true)
            starts.append(contentsOf: repeatElement(0, count: high - low + 1))
            for slot in slotOf { starts[Int(slot) + 1] += 1 }
            for i in 1..<starts.count { starts[i] += starts[i - 1] }
            var next = starts
            order.removeAll(keepingCapacity: true)
            order.append(contentsOf: repeatElement(0, count: records.count))
            for (position, slot) in slotOf.enumerated() {
                order[next[Int(slot)]] = Int32(truncatingIfNeeded: position)
                next[Int(slot)] += 1
            }
            for slot in low..<high {
                session.removeAll(keepingCapacity: true)
                for position in order[starts[slot - low]..<starts[slot - low + 1]] { session.append(records[Int(position)]) }
                // A scan delivers a session's events in key order (screen, then time); the index in (time, seq).
                if !indexed[slot] { session.sort { ($0.timeMicroseconds, $0.seq) < ($1.timeMicroseconds, $1.seq) } }
                guard try session.withUnsafeBufferPointer({ try body(ids[slot], $0) }) else { return true }
            }
            low = high
        }
        return true
    }
}
