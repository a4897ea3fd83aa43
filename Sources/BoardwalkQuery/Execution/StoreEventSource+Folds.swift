import BoardwalkCodec
import BoardwalkModel
import BoardwalkStore

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
    ///
    /// `wholeStore` is offered a whole-store fold before its sessions are delivered: the snapshot, the fold, its slots
    /// in delivery order and what was read beside the session index; when it delivers them itself it returns true,
    /// and `body` is not called.
    func foldSessions(
        _ ranges: [ScanRange], needs: FoldNeeds, cancellation: CancellationFlag?, text: String,
        expecting: (Int) -> Void = { _ in },
        wholeStore: (Snapshot, WholeStoreScan, [Int], SessionIndexExtras?) throws -> Bool = { _, _, _, _ in false },
        _ body: (SessionSummary, [Value], Int) throws(QueryError) -> Bool
    ) throws(QueryError) {
        // Every summary is made right after its session's name is asked for: the id named last is the summary's
        // (``SessionSummary/storeID``), whichever way the sessions are read.
        var named = RecordFormat.absent
        func deliver(_ summary: SessionSummary, _ keys: [Value], _ events: Int) throws(QueryError) -> Bool {
            summary.storeID = named
            return try body(summary, keys, events)
        }
        try reading { snapshot in
            let strings = SnapshotStrings(snapshot)
            func name(_ id: StringID) throws(QueryError) -> String {
                named = id
                guard needs.name else { return "" }
                return try StoreEventSource.sessionName(snapshot, id)
            }
            func checkCancellation() throws(QueryError) {
                try cancellation?.throwIfCancelled(query: text)
            }
            var ticker = CancellationTicker(cancellation: cancellation, text: text)
            func tick() throws(QueryError) { try ticker.tick() }
            if ranges.count == 1, ranges[0].isEverything {
                // Sessions in first-seen order of the key-order scan, as scanSessions lists them.
                let stats = try? snapshot.stats()
                let expected = stats?.sessions ?? 0
                if StoreEventSource.foldsFromSessionNames(needs),
                    let named = try StoreEventSource.sessionProfiles(snapshot, sessions: expected, ticker: &ticker)
                {
                    expecting(expected)
                    try named.forEachSession(ticker: &ticker) { (id, profile) throws(QueryError) -> Bool in
                        let summary = SessionSummary(id: try name(id))
                        summary.profile = profile
                        return try deliver(summary, [], 0)
                    }
                    return
                }
                // All the scan's mutable state in one struct, mutated through one access per event (state spread
                // over captured variables cost a dynamic exclusivity check per event).
                // Reach times in rows need the onboardings' screen counts (one short read per onboarding).
                let screens =
                    needs.reachTimes ? (try snapshot.onboardings()).reduce(0) { max($0, $1.maxTotalScreens) } : 0
                let fromIndex =
                    try StoreEventSource.foldsFromSessionIndex(needs)
                    && (needs.eventFlags.isEmpty
                        || StoreEventSource.flagsAreFew(
                            snapshot, needs.eventFlags, events: stats?.events ?? 0, strings: strings))
                let scanNeeds = fromIndex ? needs.readingSessionIndex : needs
                func makeScan() -> WholeStoreScan {
                    WholeStoreScan(
                        capacity: expected, events: stats?.events ?? 0, screens: screens, needs: scanNeeds,
                        cancellation: cancellation, text: text)
                }
                var scan = makeScan()
                needs.stepTests?.limit(sessions: expected, events: stats?.events ?? 0)
                if needs.stepTests?.overBudget == true { return }  // a strict funnel of more events than the budget
                var extras: SessionIndexExtras? = nil
                if fromIndex {
                    // Sessions met in any order give a group of onboardings the spelling met first: with two ids whose
                    // names Swift compares equal, the order must be the key order's.
                    let names = needs.onboarding ? try snapshot.onboardings().compactMap(\.onboardingID) : []
                    func foldIndex(firstsOnly: Bool) throws {
                        let split = try foldSessionIndexInParallel(
                            snapshot, into: &scan, make: makeScan, events: stats?.events ?? 0, firstsOnly: firstsOnly,
                            onboardings: needs.onboarding)
                        if !split {
                            try scan.scanSessionIndex(
                                snapshot, buckets: 0..<UInt32.max, firstsOnly: firstsOnly,
                                onboardings: needs.onboarding)
                        }
                        if needs.firstValues || !needs.eventFlags.isEmpty {
                            extras = try sessionIndexExtras(
                                snapshot, scan, needs: needs, cancellation: cancellation, text: text)
                        }
                    }
                    let firstsOnly = needs.firstsOnly && Set(names).count == names.count
                    try foldIndex(firstsOnly: firstsOnly)
                    // The same for first values: two spelled apart that compare equal are read again in key order.
                    if firstsOnly, let values = extras?.firstValues, !values.spellingsAreDistinct(strings) {
                        scan = makeScan()
                        try foldIndex(firstsOnly: false)
                    }
                } else {
                    let split = try foldWholeStoreInParallel(
                        snapshot, ranges[0], into: &scan, make: makeScan, needs: needs)
                    if !split { try scan.scan(snapshot, onboarding: nil, strings: strings, needs: needs) }
                }
                // Over its budget, a custom funnel's scan stopped: the caller reads sessions as rows instead.
                if needs.stepTests?.overBudget == true { return }
                let order = scan.keyOrder()
                if try wholeStore(snapshot, scan, order, extras) { return }
                let folds = scan.folds, ids = scan.ids
                expecting(ids.count)
                var reachBuffer: [Int64] = []
                if let lean = scan.lean {
                    for i in order {
                        let summary = lean.summary(
                            slot: i, name: try name(ids[i]), strings: strings, needs: needs,
                            reachBuffer: &reachBuffer)
                        extras?.apply(slot: i, id: ids[i], to: summary, strings: strings)
                        guard try deliver(summary, [], lean.events(slot: i)) else { return }
                    }
                    return
                }
                for i in order {
                    // Read in place: a copy of the fold would retain and release each of its arrays.
                    let summary = folds.base[i].summary(
                        name: try name(ids[i]), strings: strings, needs: needs,
                        reachBuffer: &reachBuffer)
                    guard try deliver(summary, folds.base[i].funnelKeys, folds.base[i].events) else { return }
                }
                return
            }
            if try foldOnboardings(
                snapshot, ranges, strings: strings, needs: needs, cancellation: cancellation, text: text,
                name: name, tick: tick, expecting: expecting, deliver)
            {
                return
            }
            // Read in batches (each bucket of the session index walked once, blocks visited in key order).
            let listed = try StoreEventSource.sessions(snapshot, ranges)
            func fold(_ id: StringID, _ records: some Sequence<EventRecord>) throws -> Bool {
                var fold = SessionFold()
                for record in records {
                    try tick()
                    // The record's leading fields, and the whole record only for what needs it (answers), as the
                    // whole-store scan reads them.
                    try fold.add(
                        try record.fields(.all), seq: record.seq, full: { () throws in try record.view() },
                        strings: strings, needs: needs)
                }
                let summary = fold.summary(name: try name(id), strings: strings, needs: needs)
                return try deliver(summary, fold.funnelKeys, fold.events)
            }
            if try StoreEventSource.gatherSessions(snapshot, listed, checkCancellation: checkCancellation, fold) {
                return
            }
            try snapshot.forEachSession(listed.ids, batchReferences: StoreEventSource.sessionBatchReferences, fold)
        }
    }
}

extension StoreEventSource {
    /// Adds into `share`, through `sharing.add`, the summary of each session that has an event in `ranges` and the
    /// number of its events, each folded from its events as ``scanSessions(_:cancellation:text:_:)`` reads them (one
    /// session's records at a time), in that order: what a custom funnel whose step events passed the folds' budget
    /// reads instead of the scan's folds. Its summary carries the session's step events (``SessionSummary/stepEvents``),
    /// found from each event's kind and name codes as a scan's fold finds them, so memory holds one window of
    /// sessions' records, not the step events of the scope. Each record is read as far as the fold's fields
    /// (`RecordFields`), and decoded whole only when a step's predicate or an answer needs it; the session's name is
    /// looked up only when the query reads it (``FoldNeeds/name``).
    ///
    /// When ``threads`` allows it, the sessions are folded on several threads: each window of gathered records
    /// (``GatherPlan/collect(_:_:_:checkCancellation:)``, on this thread) is cut into runs of at least
    /// ``minimumShareSessions`` sessions, each folded by a worker (with its own snapshot of the same commit, for its
    /// strings, and step tests of its own) into a share of its own, merged into `share` in the runs' order; sessions
    /// read through the session index are cut into runs the same way, each worker reading its own. The merge being
    /// blind to the cut (``SessionSharing``), the result is the one thread's. Memory: a share per run until they are
    /// merged.
    ///
    /// Callgrind, the strict funnel of the busiest onboarding at 200 000 sessions (1.67 M events, over the budget):
    /// 7.52 G instructions with each session's rows summarized through their fields' values and the funnel matched on
    /// the rows (event names compared as text), 3.48 G folded here, of which 2.43 G fold the sessions and 0.58 G scan
    /// the onboarding: the part a second thread takes.
    /// - Complexity: as ``scanSessions(_:cancellation:text:_:)``; the folds' time divided by the workers.
    func foldSessionRows<Share>(
        _ ranges: [ScanRange], needs: FoldNeeds, cancellation: CancellationFlag?, text: String,
        into share: inout Share, sharing: SessionSharing<Share>
    ) throws(QueryError) {
        /// Folds the sessions `body` is called with into `share`, reading strings and names from `snapshot`.
        func folder(
            _ snapshot: Snapshot, _ strings: SnapshotStrings, needs: FoldNeeds, into share: UnsafeMutablePointer<Share>
        ) -> SessionRecordsBody {
            let strict = needs.stepTests?.strict == true
            var reachBuffer: [Int64] = []
            return { id, records in
                var fold = SessionFold()
                // A strict funnel keeps nearly every event: one allocation instead of the array's doublings.
                if strict { fold.stepEvents.reserveCapacity(records.count) }
                for record in records {
                    try fold.add(
                        try record.fields(.all), seq: record.seq, full: { () throws in try record.view() },
                        strings: strings, needs: needs)
                }
                let name = needs.name ? try StoreEventSource.sessionName(snapshot, id) : ""
                try sharing.add(
                    &share.pointee,
                    fold.summary(name: name, strings: strings, needs: needs, reachBuffer: &reachBuffer), records.count)
                return true
            }
        }
        try reading { snapshot in
            let listed = try StoreEventSource.sessions(snapshot, ranges)
            let threads = min(StoreEventSource.threads, StoreEventSource.maxWorkers)
            let minimum = max(1, StoreEventSource.minimumShareSessions)
            let plan = try GatherPlan(snapshot, listed, budget: StoreEventSource.gatherBudget)
            func checkCancellation() throws(QueryError) { try cancellation?.throwIfCancelled(query: text) }
            if threads > 1, listed.ids.count >= 2 * minimum {
                var split = false
                _ = try withSnapshots(of: snapshot, extra: threads - 1, retry: false) { snapshots in
                    guard snapshots.count > 1 else { return }
                    split = true
                    try foldSplit(
                        snapshot, snapshots, listed, plan, needs: needs, minimum: minimum,
                        checkCancellation: checkCancellation, folder: folder, into: &share, sharing: sharing)
                }
                if split { return }
            }
            try withUnsafeMutablePointer(to: &share) { share in
                let fold = folder(snapshot, SnapshotStrings(snapshot), needs: needs, into: share)
                if let plan {
                    var buffers = GatherBuffers()
                    for window in plan.windows {
                        _ = try plan.gather(window, snapshot, &buffers, checkCancellation: checkCancellation, fold)
                    }
                } else {
                    try snapshot.forEachSession(listed.ids, batchReferences: StoreEventSource.sessionBatchReferences) {
                        id, records in try records.withUnsafeBufferPointer { try fold(id, $0) }
                    }
                }
            }
        }
    }

    /// ``foldSessionRows(_:needs:cancellation:text:into:sharing:)`` on `snapshots`, one worker each: the sessions of
    /// each window of `plan` (or, without a plan, the listed sessions through the index) in runs, each folded into a
    /// share of its own; the shares merged into `share` in the runs' order.
    private func foldSplit<Share>(
        _ snapshot: Snapshot, _ snapshots: [Snapshot], _ listed: ListedSessions, _ plan: GatherPlan?, needs: FoldNeeds,
        minimum: Int, checkCancellation: () throws(QueryError) -> Void,
        folder: (Snapshot, SnapshotStrings, FoldNeeds, UnsafeMutablePointer<Share>) -> SessionRecordsBody,
        into share: inout Share, sharing: SessionSharing<Share>
    ) throws {
        var workers = [FoldRowsWorker<Share>](repeating: FoldRowsWorker(), count: snapshots.count)
        /// Cuts `sessions` into runs of at least `minimum` sessions, a few per worker.
        func runs(_ sessions: Range<Int>) -> [Range<Int>] {
            let count = max(1, min(snapshots.count * StoreEventSource.partsPerWorker, sessions.count / minimum))
            let (low, n) = (sessions.lowerBound, sessions.count)
            return (0..<count).map { i in low + n * i / count..<low + n * (i + 1) / count }
        }
        /// Folds each run on the workers, through `read`, and merges the shares into `share` in the runs' order.
        func fold(
            _ runs: [Range<Int>],
            _ read: (Range<Int>, Snapshot, inout FoldRowsWorker<Share>, SessionRecordsBody) throws -> Void
        ) throws {
            try StoreEventSource.runWorkers(snapshots, Array(runs.indices), &workers) { worker, own, run in
                try checkCancellation()
                let strings = worker.strings ?? SnapshotStrings(own)
                worker.strings = strings
                // Step tests of its own: the folds count the step events they keep.
                var needs = needs
                needs.stepTests = needs.stepTests?.share()
                var part = sharing.make()
                try withUnsafeMutablePointer(to: &part) { part in
                    try read(runs[run], own, &worker, folder(own, strings, needs, part))
                }
                worker.shares.append((run, part))
            }
            for (_, part) in workers.flatMap(\.shares).sorted(by: { $0.run < $1.run }) {
                sharing.merge(&share, part)
            }
            for w in workers.indices { workers[w].shares.removeAll() }
            StoreEventSource.parallelProbe?.delivered(shares: runs.count)
        }
        guard let plan else {
            try fold(runs(listed.ids.indices)) { run, own, _, body in
                try own.forEachSession(
                    Array(listed.ids[run]), batchReferences: StoreEventSource.sessionBatchReferences
                ) { id, records in try records.withUnsafeBufferPointer { try body(id, $0) } }
            }
            return
        }
        var buffers = GatherBuffers()
        for window in plan.windows {
            try plan.collect(window, snapshot, &buffers, checkCancellation: checkCancellation)
            let gathered = buffers
            // The records are the first snapshot's, read by every worker while its transaction stays open.
            try fold(runs(window)) { run, _, worker, body in
                _ = try plan.deliver(window, sessions: run, gathered, scratch: &worker.session, body)
            }
        }
    }
}

/// What takes each session of a gathering or a session-index read: its id and its events in (time, seq) order, borrowed
/// for the call; false stops the read.
private typealias SessionRecordsBody = (StringID, UnsafeBufferPointer<EventRecord>) throws -> Bool

/// A worker of ``StoreEventSource/foldSessionRows(_:needs:cancellation:text:into:sharing:)``: its shares, each with its
/// run's number, its strings (of its own snapshot) and the records of the session it folds.
private struct FoldRowsWorker<Share> {
    var shares: [(run: Int, share: Share)] = []
    var strings: SnapshotStrings?
    var session: [EventRecord] = []
}
