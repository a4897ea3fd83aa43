import BoardwalkCodec
import BoardwalkStoreFormat

/// One run of the session index: the references of one session that one value or session-log segment holds, each
/// an event's (onboarding, screen, time, seq), read with ``next()``.
///
/// A session's runs may be many (one per batch that stored its events, until the log is folded) and in any time
/// order relative to each other; within a run the references ascend in (time, seq).
@usableFromInline
package struct SessionIndexRun {
    @usableFromInline var reader: SessionBucketReader
    @usableFromInline let bucket: UInt32
    @usableFromInline let keySeq: UInt64
    /// The session whose references these are.
    package let session: StringID

    fileprivate init(reader: SessionBucketReader, bucket: UInt32, keySeq: UInt64) {
        self.reader = reader
        self.bucket = bucket
        self.keySeq = keySeq
        session = bucket << Layout.sessionBucketShift | reader.low
    }

    /// Moves to the run's next reference; `false` after its last one.
    /// - Throws: ``StoreError`` (`corrupt`) for a reference that does not decode.
    @inlinable @inline(__always)
    package mutating func next() throws -> Bool {
        do {
            return try reader.nextEntry()
        } catch {
            throw SessionIndexRun.damage(bucket: bucket, keySeq: keySeq, error)
        }
    }

    @usableFromInline
    static func damage(bucket: UInt32, keySeq: UInt64, _ error: CodecError) -> StoreError {
        undecodableBucket(bucket, keySeq: keySeq, error)
    }

    /// The current reference's onboarding id (``RecordFormat/noOnboarding`` for an event without `meta`).
    @inlinable package var onboarding: StringID { reader.onboarding }
    /// The current reference's screen index (``RecordFormat/noScreen`` for an event without `meta`).
    @inlinable package var screen: UInt16 { reader.screen }
    @inlinable package var time: Int64 { reader.time }
    @inlinable package var seq: UInt64 { reader.seq }
}

extension Snapshot {
    /// One past the session index's last bucket: every session id is a string id, below the dictionary's count.
    package var sessionBucketLimit: UInt32 { (stringCount >> Layout.sessionBucketShift) + 1 }

    /// Calls `body` with every run of the session index whose session's bucket (`session >> 6`) is in `buckets`:
    /// the `sessions` values in key order, then the session log's segments batch by batch. No event block is read:
    /// what the references say (each event of a session: onboarding, screen, time, seq) is all a run gives.
    ///
    /// Runs of one bucket's sessions come together within a value or a segment, never from both halves of a split of
    /// `buckets`: two calls over disjoint bucket ranges meet disjoint sessions.
    /// - Throws: ``StoreError`` (`corrupt`) for a value, segment or key that does not decode, and what `body` throws.
    /// - Complexity: O(log N) for the seek, then the bytes of the index's values in range (about 6 bytes a
    ///   reference), plus the session log's chunks that hold buckets of the range.
    package func forEachSessionIndexRun(
        buckets: Range<UInt32> = 0..<UInt32.max, _ body: (inout SessionIndexRun) throws -> Void
    ) throws {
        guard !buckets.isEmpty else { return }
        func walk(bucket: UInt32, keySeq: UInt64, _ bytes: UnsafeRawBufferPointer) throws {
            var reader = try sessionBucketReader(bucket: bucket, keySeq: keySeq, bytes)
            while try reader.nextRun(bucket: bucket, keySeq: keySeq) {
                var run = SessionIndexRun(reader: reader, bucket: bucket, keySeq: keySeq)
                try body(&run)
            }
        }
        func values(_ c: inout some BlockEntries) throws {
            var found = try c.seek(bucket: buckets.lowerBound)
            while found {
                guard c.key.count == Layout.sessionKeySize else {
                    throw StoreError(.corrupt, "a sessions key is \(c.key.count) bytes, not \(Layout.sessionKeySize)")
                }
                let bucket = c.key.be32(0)
                guard buckets.contains(bucket) else { break }
                try walk(bucket: bucket, keySeq: c.key.be64(4), c.value)
                found = try c.next()
            }
        }
        // Through a ``LeafWalk`` where it can read (a read transaction): a step from leaf to leaf through liblmdb's
        // cursor had the page guard look from the root again, and its leaves hold about four values each
        // (`sessions | count by day(started)` at 50 000 sessions: 119.9 M instructions through the cursor, 112.8 M).
        if var leaves = try LeafWalk(txn, dbs.sessions) {
            defer { leaves.release() }
            try values(&leaves)
        } else {
            try txn.withCursor(dbs.sessions) { c in try values(&c) }
        }
        for batch in try sessionLog().batches {
            for (i, first) in batch.buckets.enumerated() {
                // A chunk holds whole buckets, from its first one up to the next chunk's: those of the range are in
                // the chunks from the last one starting at or below its start to the last one starting inside it.
                guard first < buckets.upperBound else { break }
                if i + 1 < batch.buckets.count, batch.buckets[i + 1] <= buckets.lowerBound { continue }
                let value = try SessionLog.chunk(txn, dbs, seq: batch.firstSeq, bucket: first)
                var reader = try SessionLog.reader(value, seq: batch.firstSeq, bucket: first)
                while let entry = try SessionLog.next(&reader, seq: batch.firstSeq, bucket: first) {
                    if entry.bucket < buckets.lowerBound { continue }
                    if entry.bucket >= buckets.upperBound { break }
                    try walk(bucket: entry.bucket, keySeq: batch.firstSeq, entry.segment)
                }
            }
        }
    }
}
