import BoardwalkCodec
import BoardwalkModel

extension Snapshot {
    /// Calls `body` with every event that arrived at or after seq `since` with a time before `before`, in
    /// `onboardings` (`nil`: under every key, events without a position included): the late arrivals of a time
    /// range that starts at `before`.
    ///
    /// A scan of the keys from `before` on sees every event at or after it; this finds the events that came in
    /// (from `since` on) with an earlier time, without a pass over the keys before `before`. It reads `batches`
    /// from the batch holding `since` (as ``forEachEvent(since:_:)`` does) and, of the blocks each batch lists,
    /// only those of `onboardings` whose first event is before `before`; a block grown over several batches is
    /// listed by each, and each batch takes only its own seqs, so every event comes once. Order: by batch, then
    /// block by block as the batch lists them (not key or seq order).
    ///
    /// The query layer folds the sessions of `started >= t` from a scan from `t`: a session whose first stored
    /// event is at or after `t` may still have an event before `t`, which must have arrived later than that first
    /// event, so it is among these.
    ///
    /// Return `false` from `body` to stop.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` for a damaged batch entry, a listed block that is
    ///   missing or does not decode.
    /// - Complexity: O(log N + the batches' chunks from `since` on, + the events of the listed blocks of
    ///   `onboardings` that start before `before`); no record is decoded (``EventRecord`` is handed out as is).
    public func forEachRecord(arrivedSince since: UInt64, before: Timestamp, onboardings: Set<StringID>?,
                              _ body: (EventRecord) throws -> Bool) throws {
        let beforeBits = Layout.timeBits(before.microseconds)
        let nextSeq = try txn.getUInt64(dbs.meta, Layout.metaNextSeq) ?? 0
        let logBatches = try eventLogBatches()
        try txn.withCursor(dbs.batches) { c in
            var found = try seekBatch(&c, holding: since)
            while found {
                guard c.key.count == Layout.batchKeySize, c.value.count >= 4, (c.value.count - 4) % Layout.eventKeySize == 0
                else { throw corruptBatch(c) }
                let first = c.key.be64(0)
                let count = UInt64(c.value.be32(0))
                guard first <= nextSeq, count <= nextSeq - first else {
                    throw StoreError(.corrupt, "the batch at seq \(first) says \(count) events, past next_seq \(nextSeq)")
                }
                var offset = 4
                while offset < c.value.count {
                    let key = EventKey(UnsafeRawBufferPointer(rebasing: c.value[offset..<offset + Layout.eventKeySize]))!
                    offset += Layout.eventKeySize
                    guard key.timeBits < beforeBits, onboardings?.contains(key.onboarding) ?? true else { continue }
                    guard let value = try txn.block(key, ofBatch: first, logBatches: logBatches, dbs) else {
                        throw StoreError(.corrupt, "the batches database lists the block at seq \(key.seq), which is not in "
                                         + EventLog.database(ofBatch: first, logBatches: logBatches))
                    }
                    var block = try blockReader(key, value)
                    while try advance(&block, key) {
                        // A grown block also holds events of other batches: each batch hands out its own.
                        guard block.seq >= first, block.seq - first < count, block.seq >= since,
                              block.time < before.microseconds else { continue }
                        let record = EventRecord(seq: block.seq, time: block.time, onboarding: key.onboarding, screen: key.screen,
                                                 body: block.body, stringLimit: stringCount)
                        guard try body(record) else { return }
                    }
                }
                found = try c.next()
            }
        }
    }
}
