import BoardwalkCodec
import BoardwalkModel
import BoardwalkStore

extension StoreEventSource {
    /// The distinct sessions with an event in `ranges`, in first-seen order, each with the onboarding key it was
    /// first seen at; memory grows with sessions (two id lists, and a bit per string id of the store to tell which
    /// were seen).
    ///
    /// A whole onboarding's sessions come from its `onboarding_sessions` entries; any other range is scanned in
    /// key order reading each record only up to its session reference (`RecordFields` extent `.session`): what
    /// that skips is decoded, and checked, when the sessions' events are read.
    static func sessions(_ snapshot: Snapshot, _ ranges: [ScanRange]) throws -> ListedSessions {
        var listed = ListedSessions()
        var seen = SessionBitmap()
        for range in ranges {
            if let onboarding = range.onboarding, range.screens == ScanRange.allScreens, range.time == ScanRange.allTime
            {
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
    /// ranges first meets them. Each name is found through the store's `session_names` index (by its hash, with
    /// no pass over the dictionary) and its events read through the session index: the cost is that of the
    /// sessions, not of the ranges or the store.
    ///
    /// The rows are valid only inside `body`.
    /// - Complexity: O(log N) per name, then O(log N) per bucket and per block holding the sessions' events
    ///   (`Snapshot.forEachSession`).
    func forNamedSessions(
        _ names: [String], ranges: [ScanRange],
        _ body: ([(id: String, rows: [StoreEventRow])]) throws(QueryError) -> Void
    ) throws(QueryError) {
        try forSessions(ranges: ranges, { snapshot in try names.flatMap { try snapshot.sessionIDs(named: $0) } }, body)
    }

    /// ``forNamedSessions(_:ranges:_:)`` for the sessions with an event whose profile is one of `profiles`, found
    /// through the store's `session_names` index: the cost is that of the profiles' sessions.
    /// - Complexity: O(log N + sessions) per profile, then as ``forNamedSessions(_:ranges:_:)``.
    func forProfileSessions(
        _ profiles: [String], ranges: [ScanRange],
        _ body: ([(id: String, rows: [StoreEventRow])]) throws(QueryError) -> Void
    ) throws(QueryError) {
        try forSessions(
            ranges: ranges,
            { snapshot in Array(Set(try profiles.flatMap { try snapshot.sessionIDs(ofProfile: $0) })).sorted() },
            body)
    }

    private func forSessions(
        ranges: [ScanRange], _ ids: (Snapshot) throws -> [StringID],
        _ body: ([(id: String, rows: [StoreEventRow])]) throws(QueryError) -> Void
    ) throws(QueryError) {
        try reading { snapshot in
            let strings = SnapshotStrings(snapshot)
            var found: [(id: String, rows: [StoreEventRow], first: KeyPosition)] = []
            try snapshot.forEachSession(try ids(snapshot)) { id, records in
                let rows = try records.map { StoreEventRow(view: try $0.view(), strings: strings) }
                guard let first = rows.compactMap({ KeyPosition($0, in: ranges) }).min() else { return true }
                found.append((try StoreEventSource.sessionName(snapshot, id), rows, first))
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
            guard
                let range = ranges.firstIndex(where: {
                    $0.contains(onboarding: onboarding, screen: view.screenIndex, time: view.time.microseconds)
                })
            else { return nil }
            self.range = range
            // The store key's own fields, as the record's header gives them.
            let header = view.record.header
            self.onboarding = header.keyOnboarding
            screen = header.keyScreenIndex
            time = view.time.microseconds
            seq = view.seq
        }

        static func < (a: KeyPosition, b: KeyPosition) -> Bool {
            (a.range, a.onboarding, a.screen, a.time, a.seq) < (b.range, b.onboarding, b.screen, b.time, b.seq)
        }
    }

    /// Calls `body` with each session that has an event in `ranges`, in first-seen order, and all of its events in
    /// (time, seq) order: gathered from scans of the sessions' onboardings when they hold enough of those
    /// onboardings' events (`gatherSessions`), else read through the session index in batches
    /// (`Snapshot.forEachSession(_:time:batchReferences:_:)`), each block holding their events walked about once
    /// per batch.
    public func scanSessions(_ ranges: [ScanRange], _ body: (String, [StoreEventRow]) throws(QueryError) -> Bool)
        throws(QueryError)
    {
        try scanSessions(ranges, cancellation: nil, text: "", body)
    }

    /// ``scanSessions(_:_:)`` that also checks `cancellation` while it scans records no session is delivered for
    /// (the executor checks it per row delivered).
    public func scanSessions(
        _ ranges: [ScanRange], cancellation: CancellationFlag?, text: String,
        _ body: (String, [StoreEventRow]) throws(QueryError) -> Bool
    ) throws(QueryError) {
        try readSessions(
            ranges, cancellation: cancellation, text: text,
            row: { record, strings in StoreEventRow(view: try record.view(), strings: strings) }, body)
    }

    /// ``scanSessions(_:cancellation:text:_:)`` with each event read through `RecordFields` (its leading fields,
    /// without decoding or validating the rest), for queries that read no other field (``Plan/leanEvents``).
    func scanSessionFields(
        _ ranges: [ScanRange], cancellation: CancellationFlag?, text: String,
        _ body: (String, [StoreFieldsRow]) throws(QueryError) -> Bool
    ) throws(QueryError) {
        try readSessions(
            ranges, cancellation: cancellation, text: text,
            row: { record, strings in StoreFieldsRow(fields: try record.fields(.all), seq: record.seq, strings: strings)
            },
            body)
    }

    /// Each session with an event in `ranges`, in first-seen order, with all of its events as rows in (time, seq)
    /// order: gathered from scans of their onboardings (``gatherSessions(_:_:checkCancellation:_:)``)
    /// when that is cheaper, else read through the session index in batches.
    private func readSessions<Row>(
        _ ranges: [ScanRange], cancellation: CancellationFlag?, text: String,
        row: (EventRecord, SnapshotStrings) throws -> Row,
        _ body: (String, [Row]) throws(QueryError) -> Bool
    ) throws(QueryError) {
        try reading { snapshot in
            try StoreEventSource.readSessions(
                snapshot, try StoreEventSource.sessions(snapshot, ranges), cancellation: cancellation, text: text,
                row: row, body)
        }
    }

    /// ``readSessions(_:cancellation:text:row:_:)`` of the sessions `listed` in `snapshot`.
    private static func readSessions<Row>(
        _ snapshot: Snapshot, _ listed: ListedSessions, cancellation: CancellationFlag?, text: String,
        row: (EventRecord, SnapshotStrings) throws -> Row,
        _ body: (String, [Row]) throws(QueryError) -> Bool
    ) throws {
        let strings = SnapshotStrings(snapshot)
        // Reused from session to session. Records stay valid for the whole read transaction, so a session's
        // rows can be kept together.
        var rows: [Row] = []
        func deliver(_ id: StringID, _ records: some Sequence<EventRecord>) throws -> Bool {
            rows.removeAll(keepingCapacity: true)
            for record in records { rows.append(try row(record, strings)) }
            return try body(try StoreEventSource.sessionName(snapshot, id), rows)
        }
        func checkCancellation() throws(QueryError) {
            try cancellation?.throwIfCancelled(query: text)
        }
        if try StoreEventSource.gatherSessions(snapshot, listed, checkCancellation: checkCancellation, deliver) {
            return
        }
        try snapshot.forEachSession(listed.ids, batchReferences: sessionBatchReferences, deliver)
    }

    /// ``scanSessionFields(_:cancellation:text:_:)`` into `share`: each session's rows go through `sharing.add`.
    ///
    /// The sessions are gathered on several threads when ``threads`` allows it and windows of a share of the scope's
    /// events each scan no more records than one window would (their homes are onboardings of their own: the sessions
    /// of one onboarding are next to each other in the list): each worker gathers a window with its own snapshot of
    /// the same commit into a share of its own, and the shares are merged into `share` in the windows' order, so a
    /// merge blind to how the sessions were cut gives what one thread gives. Memory: a share per window until they are
    /// merged, and a window's records per worker.
    /// - Complexity: as ``scanSessionFields(_:cancellation:text:_:)``; the time divided by the workers, plus the
    ///   merges of the shares.
    func scanSessionFields<Share>(
        _ ranges: [ScanRange], cancellation: CancellationFlag?, text: String, into share: inout Share,
        sharing: SessionRowsSharing<Share, StoreFieldsRow>
    ) throws(QueryError) {
        func fields(_ record: EventRecord, _ strings: SnapshotStrings) throws -> StoreFieldsRow {
            StoreFieldsRow(fields: try record.fields(.all), seq: record.seq, strings: strings)
        }
        try reading { snapshot in
            let listed = try StoreEventSource.sessions(snapshot, ranges)
            let threads = min(StoreEventSource.threads, StoreEventSource.maxWorkers)
            if threads > 1, listed.ids.count >= 2 {
                let stats = try snapshot.stats()
                let expected = stats.events / max(stats.sessions, 1) * listed.ids.count
                let target = max(
                    StoreEventSource.minimumWindowEvents, expected / (threads * StoreEventSource.partsPerWorker))
                if let plan = try GatherPlan(snapshot, listed, budget: StoreEventSource.gatherBudget, target: target),
                    plan.windows.count >= 2, plan.scanned <= plan.homes.reduce(0, { $0 + $1.events })
                {
                    if try gatherShares(
                        snapshot, plan, threads: threads, cancellation: cancellation, text: text,
                        row: fields, sharing: sharing, into: &share)
                    {
                        return
                    }
                }
            }
            try StoreEventSource.readSessions(snapshot, listed, cancellation: cancellation, text: text, row: fields) {
                (id, rows) throws(QueryError) -> Bool in
                try sharing.add(&share, id, rows)
                return true
            }
        }
    }

    /// Gathers the windows of `plan` on up to `threads` workers, each into a share of its own, merged into `share` in
    /// the windows' order; false, having read nothing, when no second read transaction could be opened.
    private func gatherShares<Row, Share>(
        _ snapshot: Snapshot, _ plan: GatherPlan, threads: Int, cancellation: CancellationFlag?, text: String,
        row: (EventRecord, SnapshotStrings) throws -> Row, sharing: SessionRowsSharing<Share, Row>,
        into share: inout Share
    ) throws -> Bool {
        var split = false
        _ = try withSnapshots(of: snapshot, extra: min(threads, plan.windows.count) - 1, retry: false) { snapshots in
            guard snapshots.count > 1 else { return }
            split = true
            var workers = [GatherWorker<Share, Row>](repeating: GatherWorker(), count: snapshots.count)
            try StoreEventSource.runWorkers(snapshots, Array(plan.windows.indices), &workers) {
                worker, snapshot, window in
                // Checked as each window starts, and every 65 536 records it scans.
                try cancellation?.throwIfCancelled(query: text)
                let strings = worker.strings ?? SnapshotStrings(snapshot)
                worker.strings = strings
                var part = sharing.make()
                _ = try plan.gather(
                    plan.windows[window], snapshot, &worker.buffers,
                    checkCancellation: { () throws(QueryError) in try cancellation?.throwIfCancelled(query: text) }
                ) { id, records in
                    worker.rows.removeAll(keepingCapacity: true)
                    for record in records { worker.rows.append(try row(record, strings)) }
                    try sharing.add(&part, try StoreEventSource.sessionName(snapshot, id), worker.rows)
                    return true
                }
                worker.shares.append((window, part))
            }
            for (_, part) in workers.flatMap(\.shares).sorted(by: { $0.window < $1.window }) {
                sharing.merge(&share, part)
            }
            StoreEventSource.parallelProbe?.delivered(shares: plan.windows.count)
        }
        return split
    }

}

/// A set of string ids as one bit each, grown to the largest id inserted (ids are dense from 0).
struct SessionBitmap {
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

    /// Whether `id` was inserted.
    @inline(__always)
    func contains(_ id: StringID) -> Bool {
        let w = Int(id >> 6)
        return w < words.count && words[w] & UInt64(1) << UInt64(id & 63) != 0
    }
}

/// Where the sessions of a scan of sessions as rows go when several threads may take them (as ``SessionSharing`` for
/// folds): each thread adds the sessions of a window into a `Share` of its own (`make`), and the shares are merged in
/// the windows' order into the caller's (`merge`).
///
/// The closures run on the scan's threads at once: `add` mutates only the share it is given, and none of them
/// mutates anything it captures.
struct SessionRowsSharing<Share, Row> {
    var make: () -> Share
    /// Adds one session: its name and its events as rows in (time, seq) order.
    var add: (inout Share, String, [Row]) throws(QueryError) -> Void
    /// Merges a later share into an earlier one.
    var merge: (inout Share, consuming Share) -> Void
}

/// A worker of a split gathering: its shares, each with its window's number, its strings (of its own snapshot) and
/// the buffers it reuses from window to window.
private struct GatherWorker<Share, Row> {
    var shares: [(window: Int, share: Share)] = []
    var strings: SnapshotStrings?
    var buffers = GatherBuffers()
    var rows: [Row] = []
}
