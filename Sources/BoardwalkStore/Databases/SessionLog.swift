import BoardwalkCodec
import BoardwalkStoreFormat

// The session log (docs/storage.md, "How an append writes"). A batch's session-index references go
// to `session_log` as one run of chunks appended at the end of the database, instead of into the newest value of
// every bucket the batch touches. Every few batches the writer folds the log into `sessions` (each touched bucket's
// value written once for all of those batches) and empties it. Readers look in both.
//
// Why: a put dirties a whole leaf page. With 100 000 sessions in flight a batch of 10 000 events touches about
// 2 000 buckets, each in a leaf of its own once the store holds a few hundred thousand events, so every batch
// rewrote about 2 000 pages (8 MB) of the session index to add 120 KB of references; the rate fell from 757 k/s
// over the benchmark's first 200 000 events to 325 k/s over 1 M. Appended as a log, a batch writes its 120 KB;
// the fold pays the leaf pages once per fold instead of once per batch.

/// When the writer folds the session log into `sessions`: before a batch would take the log past either limit.
struct SessionLogLimits: Sendable {
    /// The most batches the log holds: a reader looks up a bucket once per batch in the log.
    var batches: Int
    /// The most bytes of chunks the log holds: the fold copies them into memory.
    var bytes: Int

    static let standard = SessionLogLimits(batches: 16, bytes: 2 << 20)
}

/// Where a read-only ``Snapshot`` keeps the session log's keys once read (its transaction never changes).
final class SessionLogCache {
    var log: SessionLog?
    /// The event log's batches (``EventLog/batches(_:_:)``).
    var eventBatches: [UInt64]?
}

/// The keys of the session log as one transaction sees them: the batches in the log, each with the first bucket of
/// each of its chunks. Values are read when a bucket is looked up (by key, so nothing here points into the map and a
/// writer may keep it while it puts).
struct SessionLog {
    struct Batch {
        /// The seq of the batch's first event: the key seq its segments are encoded against.
        var firstSeq: UInt64
        /// The first bucket of each chunk, increasing (a chunk holds whole buckets).
        var buckets: [UInt32]
    }

    private(set) var batches: [Batch] = []
    /// Bytes of all chunks.
    private(set) var bytes = 0

    /// An empty log.
    init() {}

    /// The log's keys in `txn`.
    /// - Throws: ``StoreError`` (`corrupt`) for a key of the wrong size.
    /// - Complexity: O(chunks); no value is read.
    init(_ txn: Transaction, _ dbs: Databases) throws {
        try SessionLog.forEachChunk(txn, dbs) { seq, bucket, value in
            if let last = batches.last, last.firstSeq == seq {
                batches[batches.count - 1].buckets.append(bucket)
            } else {
                batches.append(Batch(firstSeq: seq, buckets: [bucket]))
            }
            bytes += value.count
        }
    }

    var isEmpty: Bool { batches.isEmpty }

    /// Calls `body` with each segment the log holds for `bucket`, batch by batch (in seq order), with the key seq it is
    /// encoded against; stops when `body` returns `false` (and returns `false` then).
    /// - Throws: ``StoreError`` (`corrupt`) when a chunk that may hold the bucket does not decode or is missing.
    /// - Complexity: per batch, O(log chunks) to find the chunk, one B-tree look-up and a walk of the chunk's entry
    ///   headers up to the bucket (at most ``Layout/sessionLogChunkTarget`` bytes, or one bucket's entries).
    @discardableResult
    func forEachSegment(
        of bucket: UInt32, _ txn: Transaction, _ dbs: Databases,
        _ body: (UInt64, UnsafeRawBufferPointer) throws -> Bool
    ) throws -> Bool {
        for batch in batches {
            // The one chunk that can hold the bucket: the last one starting at or below it.
            var lo = 0, hi = batch.buckets.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if batch.buckets[mid] <= bucket { lo = mid + 1 } else { hi = mid }
            }
            guard lo > 0 else { continue }
            let first = batch.buckets[lo - 1]
            let value = try SessionLog.chunk(txn, dbs, seq: batch.firstSeq, bucket: first)
            var reader = try SessionLog.reader(value, seq: batch.firstSeq, bucket: first)
            while let entry = try SessionLog.next(&reader, seq: batch.firstSeq, bucket: first) {
                if entry.bucket < bucket { continue }
                if entry.bucket > bucket { break }
                guard try body(batch.firstSeq, entry.segment) else { return false }
            }
        }
        return true
    }

    /// The chunk under (seq, bucket).
    static func chunk(_ txn: Transaction, _ dbs: Databases, seq: UInt64, bucket: UInt32) throws
        -> UnsafeRawBufferPointer
    {
        var key = (seq.bigEndian, bucket.bigEndian)
        let value = try withUnsafeBytes(of: &key) { k in
            try txn.get(dbs.sessionLog, UnsafeRawBufferPointer(rebasing: k[0..<Layout.sessionLogKeySize]))
        }
        guard let value else {
            throw StoreError(.corrupt, "the session_log chunk of batch \(seq) at bucket \(bucket) is missing")
        }
        return value
    }

    /// The error for the chunk of batch `seq` at `bucket` that does not decode.
    static func undecodableChunk(seq: UInt64, bucket: UInt32, _ error: CodecError) -> StoreError {
        StoreError(
            .corrupt, "the session_log chunk of batch \(seq) at bucket \(bucket) does not decode",
            underlying: error)
    }

    /// A reader of a chunk, damage as a ``StoreError``.
    static func reader(_ value: UnsafeRawBufferPointer, seq: UInt64, bucket: UInt32) throws -> SessionLogChunkReader {
        do {
            return try SessionLogChunkReader(value, firstBucket: bucket)
        } catch {
            throw undecodableChunk(seq: seq, bucket: bucket, error)
        }
    }

    /// The chunk's next entry, damage as a ``StoreError``.
    static func next(_ reader: inout SessionLogChunkReader, seq: UInt64, bucket: UInt32) throws
        -> (bucket: UInt32, segment: UnsafeRawBufferPointer)?
    {
        do {
            return try reader.next()
        } catch {
            throw undecodableChunk(seq: seq, bucket: bucket, error)
        }
    }

    /// Calls `body` with every entry of the log in key order: the batch's first seq, the chunk's first bucket, the
    /// entry's bucket and segment. For `check()` and the fold.
    static func forEachEntry(
        _ txn: Transaction, _ dbs: Databases,
        _ body: (UInt64, UInt32, UInt32, UnsafeRawBufferPointer) throws -> Void
    ) throws {
        try forEachChunk(txn, dbs) { seq, first, value in
            var reader = try reader(value, seq: seq, bucket: first)
            while let entry = try next(&reader, seq: seq, bucket: first) {
                try body(seq, first, entry.bucket, entry.segment)
            }
        }
    }

    /// Calls `body` with every chunk of the log in key order: its batch's first seq, its first bucket and its bytes.
    /// - Throws: ``StoreError`` (`corrupt`) for a key of the wrong size.
    private static func forEachChunk(
        _ txn: Transaction, _ dbs: Databases,
        _ body: (UInt64, UInt32, UnsafeRawBufferPointer) throws -> Void
    ) throws {
        try txn.withCursor(dbs.sessionLog) { c in
            var found = try c.first()
            while found {
                guard c.key.count == Layout.sessionLogKeySize else {
                    throw StoreError(
                        .corrupt, "a session_log key is \(c.key.count) bytes, not \(Layout.sessionLogKeySize)")
                }
                try body(c.key.be64(0), c.key.be32(8), c.value)
                found = try c.next()
            }
        }
    }
}
