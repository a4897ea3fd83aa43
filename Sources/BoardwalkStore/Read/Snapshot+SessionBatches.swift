import BoardwalkCodec
import BoardwalkModel

extension Snapshot {
    /// How many references a batch of ``forEachSession(_:time:batchReferences:_:)`` aims at by default: about
    /// 15 MiB of buffers.
    package static let defaultSessionBatchReferences = 1 << 17

    /// Calls `body` with each session of `sessions`, in that order, and the session's events in (time, seq) order,
    /// read through the session index a batch of sessions at a time: ``forEachEvent(inSession:time:_:)`` for many
    /// sessions, without a B-tree seek per event.
    ///
    /// Per batch (consecutive sessions of the list, as many as make about `batchReferences` events at the
    /// sessions' average size so far), the references of the batch's sessions are collected from the session
    /// index, each bucket's values walked once for all of the batch's sessions in it; sorted by event key
    /// (onboarding, screen, time, seq); and the blocks they point into are read in key order, each walked forward
    /// from where the previous reference was found (the next block of a group is reached by a cursor step, a
    /// seek only past a gap). Blocks of a group that overlap in time (late events) are handled: a reference not
    /// found where the key order puts it is looked up among the earlier blocks that can hold it. The records are
    /// handed out undecoded (``EventRecord``: decode with ``EventRecord/view()`` or ``EventRecord/fields(_:)``);
    /// they and the array are valid only inside `body` (the array is reused for the next session).
    ///
    /// A session listed twice gets its events twice. A session with no events (in `time`) is handed out with
    /// none. Sessions come out in list order whatever the batches: a batch is delivered after it has been read,
    /// so a damaged value or block anywhere in a batch throws before any session of that batch is handed out.
    /// Return `false` from `body` to stop.
    /// - Parameters:
    ///   - sessions: session ids (from a scan, ``sessionIDs(ofOnboarding:)`` or ``id(of:)``).
    ///   - time: only the events in this half-open range are handed out.
    ///   - batchReferences: the references a batch aims at; memory is about 120 bytes per reference of the
    ///     largest batch (a batch holds at least one session, however large).
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` when a bucket value, key or block does not decode
    ///   or the index lists an event that `events` lacks, and whatever `body` throws.
    /// - Complexity: per batch, O(log N) per bucket plus the run headers of its values, O(r log r) for its r
    ///   references, and O(log N + events walked) per block read: about one walk of each block that holds an
    ///   event of the batch, up to its last such event. Sessions that are near in the list and in time (as a scan
    ///   in key order lists them) share blocks, so a read of many sessions walks each block about once.
    package func forEachSession(
        _ sessions: [StringID], time: Range<Timestamp>? = nil,
        batchReferences: Int = Snapshot.defaultSessionBatchReferences,
        _ body: (StringID, [EventRecord]) throws -> Bool
    ) throws {
        guard !sessions.isEmpty else { return }
        let range = TimeRange(time)
        let target = max(1, batchReferences)
        let log = try sessionLog()
        var batch = SessionBatch()
        try txn.withCursor(dbs.sessions) { index in
            try withBlockCursor { events in
                var start = 0
                // The first batch guesses 32 events per session; later ones use the average seen so far.
                var size = max(1, min(sessions.count, target / 32))
                var seenSessions = 0, seenReferences = 0
                while start < sessions.count {
                    let end = min(sessions.count, start + size)
                    try batch.collect(sessions[start..<end], &index, log, txn, dbs, range)
                    try resolve(&batch, &events)
                    guard try deliver(&batch, body) else { return }
                    seenSessions += end - start
                    seenReferences += batch.count
                    let average = max(1, seenReferences / seenSessions)
                    size = max(1, min(1 << 16, target / average))
                    start = end
                }
            }
        }
    }

    /// Finds the record body of each of the batch's references: the references in event-key order, each block
    /// that holds one read once and walked forward.
    private func resolve(_ batch: inout SessionBatch, _ c: inout BlockCursor) throws {
        batch.arrangeByKey()
        batch.bodies.removeAll(keepingCapacity: true)
        batch.bodies.append(
            contentsOf: repeatElement(UnsafeRawBufferPointer(start: nil, count: 0), count: batch.ordered.count))
        var walk = BlockWalk()
        for ref in batch.keyed {
            batch.bodies[ref.position] = try walk.find(ref, &c, self)
        }
    }

    /// Hands out each session of the batch with its records; `false` when `body` asked to stop.
    private func deliver(_ batch: inout SessionBatch, _ body: (StringID, [EventRecord]) throws -> Bool) throws -> Bool {
        for slot in 0..<batch.sessions.count {
            let from = Int(batch.canonical[slot])
            batch.records.removeAll(keepingCapacity: true)
            for p in batch.starts[from]..<batch.starts[from + 1] {
                let ref = batch.ordered[p]
                // An event of a damaged block that the read stepped over (``readingAroundDamage(_:)``).
                if batch.bodies[p].baseAddress == nil { continue }
                batch.records.append(
                    EventRecord(
                        seq: ref.seq, time: ref.time, onboarding: ref.onboarding, screen: ref.screen,
                        body: batch.bodies[p], stringLimit: stringCount))
            }
            // A session whose every event lay in damaged blocks is not handed out.
            if batch.records.isEmpty && batch.starts[from] < batch.starts[from + 1] { continue }
            guard try body(batch.sessions[slot], batch.records) else { return false }
        }
        return true
    }
}
