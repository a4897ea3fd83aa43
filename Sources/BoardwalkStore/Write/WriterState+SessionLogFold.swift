import BoardwalkCodec
import BoardwalkModel
import BoardwalkStoreFormat

extension WriterState {
    /// Folds the session log and the batch's chunks into `sessions`, then empties the log. The log's bytes are
    /// copied first: its pages may be this transaction's own, which LMDB may write out and free while the fold puts.
    /// Per bucket, in bucket order, its segments in batch order are appended to its newest value while they fit in
    /// ``Layout/sessionValueTarget`` bytes (and the value's key seq is at most the segment's base seq), else start a
    /// new value under (bucket, the segment's base seq); each value is put once. A newest value whose run headers do
    /// not read back (damage) is left as it is, for check() and readers to report.
    func foldSessionLog(_ txn: Transaction, batch: LogChunks, firstSeq: UInt64) throws {
        var fold = Fold()
        swap(&fold, &self.fold)
        defer { swap(&fold, &self.fold) }
        fold.reset()
        try SessionLog.forEachEntry(txn, dbs) { seq, _, bucket, segment in
            fold.add(bucket: bucket, keySeq: seq, segment)
        }
        try batch.bytes.withUnsafeBytes { all in
            for chunk in batch.chunks {
                var reader = try SessionLog.reader(
                    UnsafeRawBufferPointer(rebasing: all[chunk.range]), seq: firstSeq,
                    bucket: chunk.firstBucket)
                while let entry = try SessionLog.next(&reader, seq: firstSeq, bucket: chunk.firstBucket) {
                    fold.add(bucket: entry.bucket, keySeq: firstSeq, entry.segment)
                }
            }
        }
        // Stable: a bucket's segments stay in batch order.
        fold.scratchItems.removeAll(keepingCapacity: true)
        fold.scratchItems.append(contentsOf: fold.items)
        WriterState.radixSort(&fold.items, scratch: &fold.scratchItems) { UInt64($0.bucket) }
        let target = Layout.sessionValueTarget
        let width = Layout.sessionBucketWidth
        try txn.withCursor(dbs.sessions) { c in
            try fold.bytes.withUnsafeBytes { all in
                var value = fold.value
                defer { fold.value = value }
                var i = 0
                while i < fold.items.count {
                    let bucket = fold.items[i].bucket
                    // The bucket's newest value, grown when sound and not full.
                    var keySeq: UInt64 = 0
                    var stored = false, changed = false, have = false
                    value.removeAll(keepingCapacity: true)
                    scratch.storeBE(bucket &+ 1, at: 0)
                    scratch.storeBE(UInt64(0), at: 4)
                    if bucket < UInt32.max,
                        try c.last(below: UnsafeRawBufferPointer(start: scratch, count: Layout.sessionKeySize)),
                        c.key.count == Layout.sessionKeySize, c.key.be32(0) == bucket, c.value.count < target,
                        SessionBucketReader.runHeadersAreSound(c.value, keySeq: c.key.be64(4), lowLimit: width)
                    {
                        keySeq = c.key.be64(4)
                        value.append(contentsOf: c.value)
                        stored = true
                        have = true
                    }
                    func flush() throws {
                        guard changed else { return }
                        scratch.storeBE(bucket, at: 0)
                        scratch.storeBE(keySeq, at: 4)
                        let key = UnsafeRawBufferPointer(start: scratch, count: Layout.sessionKeySize)
                        let put = try value.withUnsafeBytes {
                            try c.put(key, $0, flags: stored ? 0 : PutFlags.noOverwrite)
                        }
                        guard put else {
                            throw StoreError(
                                .corrupt,
                                "the session bucket \(bucket) already has a value at seq \(keySeq), which the session log lists again"
                            )
                        }
                    }
                    while i < fold.items.count, fold.items[i].bucket == bucket {
                        let item = fold.items[i]
                        do {
                            try SessionBucketSegment.forEach(
                                in: UnsafeRawBufferPointer(rebasing: all[item.range]),
                                keySeq: item.keySeq, lowLimit: width
                            ) { segment in
                                if have && keySeq <= segment.baseSeq
                                    && value.count + segment.byteCount(keySeq: keySeq) <= target
                                {
                                    segment.append(keySeq: keySeq, to: &value)
                                    changed = true
                                    return
                                }
                                if have { try flush() }
                                value.removeAll(keepingCapacity: true)
                                keySeq = segment.baseSeq
                                segment.append(keySeq: keySeq, to: &value)
                                stored = false
                                changed = true
                                have = true
                            }
                        } catch let error as CodecError {
                            throw StoreError(
                                .corrupt,
                                "the session_log segment of bucket \(bucket) from batch \(item.keySeq) does not "
                                    + "decode: the session index cannot be folded (`boardwalk check` says more)",
                                underlying: error)
                        }
                        i += 1
                    }
                    if have { try flush() }
                }
            }
        }
        try txn.empty(dbs.sessionLog)
    }
}

/// The buffers of a fold of the session log: every segment to fold, copied, with its bucket and key seq.
struct Fold {
    struct Item {
        var bucket: UInt32
        var keySeq: UInt64
        var range: Range<Int>
    }

    var bytes: [UInt8] = []
    var items: [Item] = []
    var scratchItems: [Item] = []
    /// The value being built for a bucket.
    var value: [UInt8] = []

    mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
        items.removeAll(keepingCapacity: true)
    }

    mutating func add(bucket: UInt32, keySeq: UInt64, _ segment: UnsafeRawBufferPointer) {
        let start = bytes.count
        bytes.append(contentsOf: segment)
        items.append(Item(bucket: bucket, keySeq: keySeq, range: start..<bytes.count))
    }
}
