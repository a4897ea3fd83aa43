import BoardwalkCodec
import BoardwalkModel
import BoardwalkStoreFormat

extension Snapshot {
    /// Calls `body` for every event with `seq >= since`, in seq (arrival) order: the incremental-export
    /// scan. It reads `batches` from the batch holding `since`, and for each batch the blocks it lists
    /// (`mdb_get` each), putting the batch's events in seq order in a buffer reused across batches. A
    /// block grown over several batches is listed by each of them; each batch takes only its own seqs.
    /// - Complexity: O(log N) to find the start, then O(log N + events of the block) per listed block.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` for a damaged `batches` entry, or a listed block that
    ///   is missing or does not decode; whatever `body` throws.
    public func forEachEvent(since: UInt64, _ body: (EventView) throws -> Bool) throws {
        struct Slot {
            var key: EventKey
            var reader: EventBlockReader?
        }
        var slots: [Slot] = []
        // Bounds a damaged batch count before it sizes the buffer.
        let nextSeq = try txn.getUInt64(dbs.meta, Layout.metaNextSeq) ?? 0
        let logBatches = try eventLogBatches()
        try txn.withCursor(dbs.batches) { c in
            var found = try seekBatch(&c, holding: since)
            while found {
                guard c.key.count == Layout.batchKeySize, c.value.count >= 4 + Layout.eventKeySize,
                    (c.value.count - 4) % Layout.eventKeySize == 0, c.key.be16(8) == 0
                else { throw corruptBatch(c) }
                let first = c.key.be64(0)
                let count = Int(c.value.be32(0))
                guard first <= nextSeq, UInt64(count) <= nextSeq - first else {
                    throw StoreError(
                        .corrupt, "the batch at seq \(first) says \(count) events, past next_seq \(nextSeq)")
                }
                // The buffer grows with the seqs the blocks really hold, never with the count alone: a damaged
                // count must not size an allocation (next_seq only bounds it by the store's size).
                slots.removeAll(keepingCapacity: true)
                var filled = 0
                // Every chunk of this batch.
                repeat {
                    guard c.key.count == Layout.batchKeySize, c.value.count >= 4,
                        (c.value.count - 4) % Layout.eventKeySize == 0,
                        Int(c.value.be32(0)) == count
                    else { throw corruptBatch(c) }
                    var offset = 4
                    while offset < c.value.count {
                        let key = EventKey(
                            UnsafeRawBufferPointer(rebasing: c.value[offset..<offset + Layout.eventKeySize]))!
                        offset += Layout.eventKeySize
                        guard let value = try txn.block(key, ofBatch: first, logBatches: logBatches, dbs) else {
                            throw StoreError(
                                .corrupt,
                                "the batches database lists the block at seq \(key.seq), which is not in "
                                    + EventLog.database(ofBatch: first, logBatches: logBatches))
                        }
                        var block = try blockReader(key, value)
                        var at = block
                        while try advance(&block, key) {
                            let i = block.seq &- first
                            // A grown block also holds events of the batches before and after this one.
                            guard block.seq >= first, i < UInt64(count) else {
                                at = block
                                continue
                            }
                            if Int(i) >= slots.count {
                                slots.append(
                                    contentsOf: repeatElement(
                                        Slot(key: EventKey(onboarding: 0, screen: 0, timeBits: 0, seq: 0), reader: nil),
                                        count: Int(i) + 1 - slots.count))
                            }
                            guard slots[Int(i)].reader == nil else {
                                throw StoreError(
                                    .corrupt,
                                    "the batch at seq \(first) lists seq \(block.seq) twice (in the block at seq \(key.seq))"
                                )
                            }
                            slots[Int(i)] = Slot(key: key, reader: at)
                            at = block
                            filled += 1
                        }
                    }
                    found = try c.next()
                } while found && c.key.count == Layout.batchKeySize && c.key.be64(0) == first
                guard filled == count else {
                    throw StoreError(.corrupt, "the batch at seq \(first) lists \(filled) events, not \(count)")
                }
                for i in 0..<count where first + UInt64(i) >= since {
                    // Each slot holds the reader positioned just before its event.
                    var reader = slots[i].reader!
                    _ = try advance(&reader, slots[i].key)
                    guard try body(try view(slots[i].key, reader)) else { return }
                }
            }
        }
    }

    /// Positions `c` (on `batches`) on the first chunk of the batch holding seq `since` (the last batch starting at
    /// or before it; the first batch when none does); `false` when `batches` is empty.
    func seekBatch(_ c: inout Cursor, holding since: UInt64) throws -> Bool {
        var start = [UInt8](repeating: 0, count: Layout.batchKeySize)
        start.withUnsafeMutableBytes { $0.baseAddress!.storeBE(since, at: 0) }
        var found = try start.withUnsafeBytes { try c.seek($0) }
        // The batch holding `since` starts at or before it: unless we landed exactly on it, step back to
        // the previous batch's last chunk, then to its first.
        if !found || c.key.count != Layout.batchKeySize || c.key.be64(0) != since {
            found = found ? try c.previous() : try c.last()
            if found {
                guard c.key.count == Layout.batchKeySize else { throw corruptBatch(c) }
                start.withUnsafeMutableBytes { $0.baseAddress!.storeBE(c.key.be64(0), at: 0) }
                found = try start.withUnsafeBytes { try c.seek($0) }
            } else {
                found = try c.first()
            }
        }
        return found
    }

    func corruptBatch(_ c: Cursor) -> StoreError {
        StoreError(.corrupt, "a batches entry has a \(c.key.count)-byte key and a \(c.value.count)-byte value")
    }

    /// Calls `body` with every event that arrived at or after seq `since` with a time before `before`, in
    /// `onboardings` (`nil`: under every key, events without a position included): the late arrivals of a time
    /// range that starts at `before`.
    ///
    /// A scan of the keys from `before` on sees every event at or after it; this finds the events that came in
    /// (from `since` on) with an earlier time, without a pass over the keys before `before`. It reads `batches`
    /// from the batch holding `since` (as ``forEachEvent(since:_:)`` does) and, of the blocks each batch lists,
    /// only those of `onboardings` whose first event is before `before` and whose header's seq range reaches `since`,
    /// each up to its first event at or after `before`; a block grown over several batches is listed by each, and each
    /// batch takes only its own seqs, so every event comes once. Order: by batch, then
    /// block by block as the batch lists them (not key or seq order).
    ///
    /// The query layer folds the sessions of `started >= t` from a scan from `t`: a session whose first stored
    /// event is at or after `t` may still have an event before `t`, which must have arrived later than that first
    /// event, so it is among these.
    ///
    /// Return `false` from `body` to stop.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` for a damaged batch entry, a listed block that is
    ///   missing or does not decode.
    /// - Complexity: O(log N + the batches' chunks from `since` on, + the events before `before` of the listed blocks
    ///   of `onboardings` that start before it); no record is decoded (``EventRecord`` is handed out as is).
    package func forEachRecord(
        arrivedSince since: UInt64, before: Timestamp, onboardings: Set<StringID>?,
        _ body: (EventRecord) throws -> Bool
    ) throws {
        let beforeBits = Layout.timeBits(before.microseconds)
        let nextSeq = try txn.getUInt64(dbs.meta, Layout.metaNextSeq) ?? 0
        let logBatches = try eventLogBatches()
        try txn.withCursor(dbs.batches) { c in
            var found = try seekBatch(&c, holding: since)
            while found {
                guard c.key.count == Layout.batchKeySize, c.value.count >= 4,
                    (c.value.count - 4) % Layout.eventKeySize == 0
                else { throw corruptBatch(c) }
                let first = c.key.be64(0)
                let count = UInt64(c.value.be32(0))
                guard first <= nextSeq, count <= nextSeq - first else {
                    throw StoreError(
                        .corrupt, "the batch at seq \(first) says \(count) events, past next_seq \(nextSeq)")
                }
                var offset = 4
                while offset < c.value.count {
                    let key = EventKey(
                        UnsafeRawBufferPointer(rebasing: c.value[offset..<offset + Layout.eventKeySize]))!
                    offset += Layout.eventKeySize
                    guard key.timeBits < beforeBits, onboardings?.contains(key.onboarding) ?? true else { continue }
                    guard let value = try txn.block(key, ofBatch: first, logBatches: logBatches, dbs) else {
                        throw StoreError(
                            .corrupt,
                            "the batches database lists the block at seq \(key.seq), which is not in "
                                + EventLog.database(ofBatch: first, logBatches: logBatches))
                    }
                    // A block none of whose events arrived from `since` on (its header's seq range) has none to hand
                    // out.
                    guard var block = try openBlock(key, value), block.maxSeq >= since else { continue }
                    while try advance(&block, key) {
                        // The events are in (time, seq) order: once one is at `before` or later, so are the rest.
                        if block.time >= before.microseconds { break }
                        // A grown block also holds events of other batches: each batch hands out its own.
                        guard block.seq >= first, block.seq - first < count, block.seq >= since else { continue }
                        let record = EventRecord(
                            seq: block.seq, time: block.time, onboarding: key.onboarding, screen: key.screen,
                            body: block.body, stringLimit: stringCount)
                        guard try body(record) else { return }
                    }
                }
                found = try c.next()
            }
        }
    }
}
