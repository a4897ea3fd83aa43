import BoardwalkCodec
import BoardwalkModel
import BoardwalkStoreFormat

// Reading the session index: `sessions` keys are (bucket, seq), bucket = session id >> 6; a value holds
// segments of runs, one run per session of the bucket and batch (docs/storage.md, "Session-bucket value").
// The references of the latest batches are in the session log instead, as segments of the same
// form (SessionLog.swift): a bucket's references are those of its values and then those of its log segments.
// Damage becomes `StoreError(.corrupt)` naming the bucket and key seq and carrying the codec's error.

/// A reference from the session index to one stored event.
struct SessionRef {
    var onboarding: UInt32
    var screen: UInt16
    var time: Int64
    var seq: UInt64
}

/// A reader over the value stored under a `sessions` key, and the key's bucket and seq.
func sessionBucketReader(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws
    -> (bucket: UInt32, keySeq: UInt64, reader: SessionBucketReader)
{
    guard key.count == Layout.sessionKeySize else {
        throw StoreError(.corrupt, "a sessions key is \(key.count) bytes, not \(Layout.sessionKeySize)")
    }
    let bucket = key.be32(0), keySeq = key.be64(4)
    return (bucket, keySeq, try sessionBucketReader(bucket: bucket, keySeq: keySeq, value))
}

/// The error for the value (or session-log segment) of `bucket` encoded against `keySeq` that does not decode.
func undecodableBucket(_ bucket: UInt32, keySeq: UInt64, _ error: CodecError) -> StoreError {
    StoreError(.corrupt, "the session bucket \(bucket) value at seq \(keySeq) does not decode", underlying: error)
}

/// A reader over a value (or session-log segment) of `bucket` encoded against `keySeq`.
func sessionBucketReader(bucket: UInt32, keySeq: UInt64, _ value: UnsafeRawBufferPointer) throws -> SessionBucketReader
{
    do {
        return try SessionBucketReader(value, keySeq: keySeq, lowLimit: Layout.sessionBucketWidth)
    } catch {
        throw undecodableBucket(bucket, keySeq: keySeq, error)
    }
}

extension SessionBucketReader {
    /// ``nextRun()`` with damage as a ``StoreError``.
    @inline(__always)
    mutating func nextRun(bucket: UInt32, keySeq: UInt64) throws -> Bool {
        do {
            return try nextRun()
        } catch {
            throw undecodableBucket(bucket, keySeq: keySeq, error)
        }
    }

    /// ``nextEntry()`` with damage as a ``StoreError``.
    @inline(__always)
    mutating func nextEntry(bucket: UInt32, keySeq: UInt64) throws -> Bool {
        do {
            return try nextEntry()
        } catch {
            throw undecodableBucket(bucket, keySeq: keySeq, error)
        }
    }
}

extension Cursor {
    /// Positions at the first value of `session`'s bucket (if any value is at or after it): `(bucket, 0)`.
    mutating func seekBucket(of session: UInt32) throws -> Bool {
        try seek(bucket: session >> Layout.sessionBucketShift)
    }
}

extension BlockEntries {
    /// Positions at the first value of `bucket` or a later one (if any): `(bucket, 0)`.
    mutating func seek(bucket: UInt32) throws -> Bool {
        // Bytes 0..<12 of two big-endian words: bucket ‖ 0 (no padding inside, unlike a (UInt32, UInt64) tuple).
        var key = ((UInt64(bucket) << 32).bigEndian, UInt64(0))
        return try withUnsafeBytes(of: &key) {
            try seek(UnsafeRawBufferPointer(rebasing: $0[0..<Layout.sessionKeySize]))
        }
    }
}

extension Transaction {
    /// Calls `body` with every reference the session index holds for `session`: value by value in `sessions`, then
    /// segment by segment in the session log `log` (within a value or segment in (time, seq) order per run; runs of
    /// later batches may hold earlier times). Returns early when `body` returns `false`.
    /// - Complexity: O(log N) for the seek, then the bytes of the bucket's values (other sessions' runs are
    ///   skipped by their length), then a look-up per batch in the log (``SessionLog/forEachSegment(of:_:_:_:)``).
    func forEachSessionRef(_ dbs: Databases, _ log: SessionLog, session: UInt32, _ body: (SessionRef) throws -> Bool)
        throws
    {
        let bucket = session >> Layout.sessionBucketShift
        let low = session & (Layout.sessionBucketWidth - 1)
        /// The references of `session` in one value or segment; `false` when `body` asked to stop.
        func read(_ keySeq: UInt64, _ bytes: UnsafeRawBufferPointer) throws -> Bool {
            var reader = try sessionBucketReader(bucket: bucket, keySeq: keySeq, bytes)
            while try reader.nextRun(bucket: bucket, keySeq: keySeq) {
                // Runs of a segment are in increasing low-bits order; a later segment starts over.
                guard reader.low == low else { continue }
                while try reader.nextEntry(bucket: bucket, keySeq: keySeq) {
                    let ref = SessionRef(
                        onboarding: reader.onboarding, screen: reader.screen, time: reader.time, seq: reader.seq)
                    guard try body(ref) else { return false }
                }
            }
            return true
        }
        let more = try withCursor(dbs.sessions) { c in
            var found = try c.seekBucket(of: session)
            while found {
                guard c.key.count == Layout.sessionKeySize else {
                    throw StoreError(.corrupt, "a sessions key is \(c.key.count) bytes, not \(Layout.sessionKeySize)")
                }
                if c.key.be32(0) != bucket { return true }
                guard try read(c.key.be64(4), c.value) else { return false }
                found = try c.next()
            }
            return true
        }
        guard more else { return }
        try log.forEachSegment(of: bucket, self, dbs) { keySeq, segment in try read(keySeq, segment) }
    }
}

extension Snapshot {
    /// The events of `session` in `range` through the session index, in (time, seq) order: the references of
    /// the session's bucket values are collected and sorted, and each event is read from its block. Many sessions
    /// are read in batches instead (`forEachSession`, SessionBatch.swift).
    /// - Complexity: O(log N + bytes of the bucket's values + r log r) for r references, then O(log N + events
    ///   of the block) per event.
    func forEachIndexedEvent(inSession session: StringID, _ range: TimeRange, _ body: (EventView) throws -> Bool) throws
    {
        var refs: [SessionRef] = []
        var sorted = true
        try txn.forEachSessionRef(dbs, try sessionLog(), session: session) { ref in
            if ref.time >= range.lo && !range.isPastEnd(ref.time) {
                if let last = refs.last, !precedes(last.time, last.seq, ref.time, ref.seq) { sorted = false }
                refs.append(ref)
            }
            return true
        }
        // Batches usually arrive in time order, so the collected references usually are too.
        if !sorted { refs.sort { precedes($0.time, $0.seq, $1.time, $1.seq) } }
        try withBlockCursor { events in
            // The block the previous reference was found in, positioned at it. References come in (time, seq)
            // order and so do a block's events, so the session's next event in the same group is often further
            // on in that block: walking on from there keeps a long session's read linear instead of walking
            // each block from its start once per event. Anything else goes through `locate`.
            var previous: (key: EventKey, block: EventBlockReader)? = nil
            for ref in refs {
                var found: (key: EventKey, block: EventBlockReader)? = nil
                if let (key, at) = previous, key.onboarding == ref.onboarding, key.screen == ref.screen,
                    at.lastTime >= ref.time, at.minSeq <= ref.seq, ref.seq <= at.maxSeq
                {
                    var block = at
                    while try advance(&block, key) {
                        if block.seq == ref.seq && block.time == ref.time { found = (key, block); break }
                        if block.time > ref.time { break }
                    }
                }
                if found == nil {
                    found = try locate(
                        &events, onboarding: ref.onboarding, screen: ref.screen, time: ref.time, seq: ref.seq)
                }
                guard let (blockKey, block) = found else {
                    // Reading around damage: an event of a damaged block stepped over is skipped.
                    if let damaged,
                        damaged.skipReference(
                            onboarding: ref.onboarding, screen: ref.screen, time: ref.time, seq: ref.seq)
                    {
                        continue
                    }
                    throw StoreError(
                        .corrupt, "the session index lists seq \(ref.seq), which is not in events or event_log")
                }
                previous = (blockKey, block)
                guard try body(try view(blockKey, block)) else { return }
            }
        }
    }
}

extension WriterState {
    /// Whether the session index holds any event of `session` (committed or written by an earlier batch of the
    /// running transaction). A session id that is new in the running batch has none before its values are written.
    /// - Complexity: O(log N + bytes of the bucket's values); nothing for a new session id.
    func hasIndexedEvents(_ txn: Transaction, session: UInt32) throws -> Bool {
        guard session < UInt32(clamping: batchStartStrings) else { return false }
        var any = false
        try txn.forEachSessionRef(dbs, try sessionLog(txn), session: session) { _ in
            any = true
            return false
        }
        return any
    }
}
