import BoardwalkCodec
import BoardwalkModel
import BoardwalkStoreFormat

extension WriterState {
    /// The session index's references of the batch (docs/storage.md, "How an append writes"): per bucket of
    /// ``Layout/sessionBucketWidth`` consecutive session ids touched by the batch, segments listing its sessions'
    /// events of the batch (per session in (time, seq) order, a segment cut past ``Layout/sessionValueTarget``
    /// bytes), in bucket order, cut into chunks of at most ``Layout/sessionLogChunkTarget`` bytes. The chunks are
    /// appended to `session_log` under (first seq of the batch, first bucket of the chunk), unless the log would then
    /// pass its limits (``SessionLogLimits``): then the log and the batch's chunks are folded into `sessions`
    /// instead, and the log is emptied.
    /// - Complexity: one sort of the batch and O(references) to build the chunks; an append per chunk, or the fold:
    ///   O(log N) and one put per bucket the log touches, after a copy of the log.
    func writeSessionIndex(_ txn: Transaction, firstSeq: UInt64) throws {
        fillOrder { UInt64($0.session) }
        sortOrder()
        let entries = self.entries
        let order = self.order
        var builder = SessionBucketBuilder(prefixRoom: 0, capacity: 0)
        var chunks = LogChunks()
        // Locals, like the builder: as properties of the writer object each access paid a dynamic exclusivity check.
        swap(&builder, &bucketBuilder)
        swap(&chunks, &logChunks)
        defer {
            swap(&builder, &bucketBuilder)
            swap(&chunks, &logChunks)
        }
        chunks.reset()
        let shift = Layout.sessionBucketShift
        let mask = Layout.sessionBucketWidth - 1
        let target = Layout.sessionValueTarget
        var bucket: UInt32 = 0
        var open = false
        for k in order {
            let e = entries[k.i]
            let b = e.session >> shift
            if open && (b != bucket || builder.byteCount >= target) {
                builder.withValue(keySeq: firstSeq) { chunks.append(bucket: bucket, segment: $0) }
                open = false
            }
            if !open {
                bucket = b
                builder.reset()
                open = true
            }
            builder.append(
                low: e.session & mask, onboarding: e.onboarding, screen: e.screen,
                time: Layout.time(fromBits: e.timeBits), seq: e.seq)
        }
        if open { builder.withValue(keySeq: firstSeq) { chunks.append(bucket: bucket, segment: $0) } }
        chunks.finish()
        guard !chunks.isEmpty else { return }
        let log = try sessionLog(txn)
        batchLog = nil
        if log.batches.count + 1 > logLimits.batches || log.bytes + chunks.bytes.count > logLimits.bytes {
            try foldSessionLog(txn, batch: chunks, firstSeq: firstSeq)
            return
        }
        try txn.withCursor(dbs.sessionLog) { c in
            try chunks.bytes.withUnsafeBytes { all in
                for chunk in chunks.chunks {
                    scratch.storeBE(firstSeq, at: 0)
                    scratch.storeBE(chunk.firstBucket, at: 8)
                    let key = UnsafeRawBufferPointer(start: scratch, count: Layout.sessionLogKeySize)
                    guard try c.put(key, UnsafeRawBufferPointer(rebasing: all[chunk.range]), flags: PutFlags.append)
                    else {
                        throw StoreError(
                            .corrupt,
                            "session_log already holds a chunk at or past batch \(firstSeq) (at or past next_seq)")
                    }
                }
            }
        }
    }

    /// The session log's keys as the running batch sees them (loaded once per batch; dropped when the batch
    /// writes to the log).
    func sessionLog(_ txn: Transaction) throws -> SessionLog {
        if let batchLog { return batchLog }
        let log = try SessionLog(txn, dbs)
        batchLog = log
        return log
    }
}

/// A batch's session-log chunks: entries of (bucket, segment) in bucket order, cut into chunks of at most
/// ``Layout/sessionLogChunkTarget`` bytes, kept in one buffer. A chunk holds whole buckets (every entry of a bucket
/// is in one chunk, which may then pass the target), so that chunk keys (batch, first bucket) are unique and a
/// bucket is looked up in one chunk per batch.
struct LogChunks {
    struct Chunk {
        var firstBucket: UInt32
        var range: Range<Int>
    }

    private var builder = SessionLogChunkBuilder()
    private(set) var bytes: [UInt8] = []
    private(set) var chunks: [Chunk] = []

    var isEmpty: Bool { chunks.isEmpty }

    mutating func reset() {
        builder.reset()
        bytes.removeAll(keepingCapacity: true)
        chunks.removeAll(keepingCapacity: true)
    }

    /// Adds an entry, first closing the open chunk when the entry starts a bucket and would take it past the target.
    mutating func append(bucket: UInt32, segment: UnsafeRawBufferPointer) {
        if !builder.isEmpty && bucket != builder.lastBucket
            && builder.byteCount(appending: segment.count, bucket: bucket) > Layout.sessionLogChunkTarget
        {
            finish()
        }
        builder.append(bucket: bucket, segment: segment)
    }

    /// Closes the open chunk, if any.
    mutating func finish() {
        guard !builder.isEmpty else { return }
        let start = bytes.count
        bytes.append(contentsOf: builder.bytes)
        chunks.append(Chunk(firstBucket: builder.firstBucket, range: start..<bytes.count))
        builder.reset()
    }
}
