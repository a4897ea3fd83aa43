import BoardwalkCodec
import BoardwalkStore

/// Where the sessions of a fold go when several threads may take them: each thread adds a share of the sessions, a
/// run of them in the order one thread delivers them, into a `Share` of its own (`make`), and the shares are merged
/// in that order into the caller's (`merge`). The result is the one a delivery on one thread gives when `merge` is
/// blind to how the sessions were cut, and keeps the receiving share's key when two keys compare equal: a group's
/// key is then spelled as its first session had it.
///
/// The closures run on the fold's threads at once: `add` mutates only the share it is given, and none of them
/// mutates anything it captures.
struct SessionSharing<Share> {
    var make: () -> Share
    /// Adds one session's summary, with the number of events folded into it.
    var add: (inout Share, SessionSummary, Int) throws(QueryError) -> Void
    /// Merges a later share into an earlier one.
    var merge: (inout Share, consuming Share) -> Void
}

extension StoreEventSource {
    /// The fewest sessions a share of a split delivery (``foldSessions(_:needs:cancellation:text:into:sharing:)``)
    /// is cut to hold: a fold of fewer than two such shares delivers on one thread. Tests bind 1.
    @TaskLocal static var minimumShareSessions = 1 << 12

    /// ``foldSessions(_:needs:cancellation:text:expecting:_:)`` into `share`: each session goes through `sharing.add`.
    ///
    /// A fold of the whole store delivers on several threads when ``threads`` allows it, the store holds at least two
    /// shares of ``minimumShareSessions`` sessions and the fold keeps no reach times: the sessions, in the order one
    /// thread delivers them, are cut into runs; each worker summarizes a run's sessions from the fold (with its own
    /// snapshot of the same commit, for their strings) and adds them to a share of its own; the shares are merged into
    /// `share` in the runs' order. Memory: a share per run until they are merged.
    /// - Complexity: as ``foldSessions(_:needs:cancellation:text:expecting:_:)``; the delivery's time is divided by the
    ///   workers, plus the merges of the shares.
    func foldSessions<Share>(
        _ ranges: [ScanRange], needs: FoldNeeds, cancellation: CancellationFlag?, text: String,
        into share: inout Share, sharing: SessionSharing<Share>
    ) throws(QueryError) {
        try foldSessions(
            ranges, needs: needs, cancellation: cancellation, text: text,
            wholeStore: { snapshot, scan, order, extras in
                try deliverShares(
                    snapshot, scan, order, extras, needs: needs, cancellation: cancellation, text: text,
                    sharing: sharing, into: &share)
                return true
            }
        ) { (summary, _, events) throws(QueryError) -> Bool in
            try sharing.add(&share, summary, events)
            return true
        }
    }

    /// Delivers the sessions of `scan` at `order` into `share`: on several threads, each run into a share of its own
    /// merged into `share` in the runs' order, when ``threads`` allows it, the sessions fill two shares of
    /// ``minimumShareSessions`` and the fold keeps no reach times; else on this thread.
    private func deliverShares<Share>(
        _ snapshot: Snapshot, _ scan: WholeStoreScan, _ order: [Int], _ extras: SessionIndexExtras?,
        needs: FoldNeeds, cancellation: CancellationFlag?, text: String, sharing: SessionSharing<Share>,
        into share: inout Share
    ) throws {
        let ids = scan.ids, folds = scan.folds, lean = scan.lean
        /// Adds the sessions at `run` to `share`, their strings read from `strings`, through one summary (the
        /// sharing's `add` is done with each before the next).
        func deliver(_ run: ArraySlice<Int>, _ snapshot: Snapshot, _ strings: SnapshotStrings, into share: inout Share)
            throws
        {
            // Checked as each run starts, and every 4 096 sessions of it.
            try cancellation?.throwIfCancelled(query: text)
            var ticker = CancellationTicker(cancellation: cancellation, text: text)
            var reachBuffer: [Int64] = []
            let summary = SessionSummary(id: "")
            for i in run {
                try ticker.tick()
                summary.reset(id: needs.name ? try StoreEventSource.sessionName(snapshot, ids[i]) : "")
                let events: Int
                if let lean {
                    lean.summarize(slot: i, into: summary, strings: strings, needs: needs, reachBuffer: &reachBuffer)
                    extras?.apply(slot: i, id: ids[i], to: summary, strings: strings)
                    events = lean.events(slot: i)
                } else {
                    folds.base[i].summarize(into: summary, strings: strings, needs: needs, reachBuffer: &reachBuffer)
                    events = folds.base[i].events
                }
                summary.storeID = ids[i]
                try sharing.add(&share, summary, events)
            }
        }
        let threads = min(StoreEventSource.threads, StoreEventSource.maxWorkers)
        let minimum = max(1, StoreEventSource.minimumShareSessions)
        // With reach times, each summary refers into the folds, and the folds keep the strings it reads them with.
        guard threads > 1, !needs.reachTimes, order.count >= 2 * minimum else {
            return try deliver(order[...], snapshot, SnapshotStrings(snapshot), into: &share)
        }
        let count = min(threads * StoreEventSource.partsPerWorker, order.count / minimum)
        let runs = (0..<count).map { i in order.count * i / count..<order.count * (i + 1) / count }
        var split = false
        _ = try withSnapshots(of: snapshot, extra: min(threads, count) - 1, retry: false) { snapshots in
            guard snapshots.count > 1 else { return }
            split = true
            var workers = [ShareWorker<Share>](repeating: ShareWorker(), count: snapshots.count)
            try StoreEventSource.runWorkers(snapshots, Array(runs.indices), &workers) { worker, snapshot, run in
                let strings = worker.strings ?? SnapshotStrings(snapshot)
                worker.strings = strings
                var part = sharing.make()
                try deliver(order[runs[run]], snapshot, strings, into: &part)
                worker.shares.append((run, part))
            }
            for (_, part) in workers.flatMap(\.shares).sorted(by: { $0.run < $1.run }) { sharing.merge(&share, part) }
            StoreEventSource.parallelProbe?.delivered(shares: count)
        }
        if !split { try deliver(order[...], snapshot, SnapshotStrings(snapshot), into: &share) }
    }
}

/// A worker of a split delivery: its shares, each with its run's number, and its strings (of its own snapshot).
private struct ShareWorker<Share> {
    var shares: [(run: Int, share: Share)] = []
    var strings: SnapshotStrings?
}
