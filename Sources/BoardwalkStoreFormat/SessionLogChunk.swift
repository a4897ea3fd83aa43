import BoardwalkCodec

// Session-log chunks (store format 8): the session index's references of one batch, in bucket order, before the
// store folds them into its bucket values. `docs/codec.md` ("Session-log chunk") has the bytes:
//
//     chunk := entry+
//     entry := [bucket − previous entry's bucket: varint][segment length: varint ≥ 3][segment]
//
// The first entry's bucket is taken from the chunk's first bucket (its key), so its delta is 0. Buckets never
// decrease; a bucket with more references than one segment holds has several entries in a row (delta 0). The
// store keeps all of a bucket's entries of a batch in one chunk. A
// segment is a one-segment session-bucket value (`SessionBucketBuilder`) for the key seq of the chunk's batch.

/// Builds one session-log chunk: entries of (bucket, segment) in bucket order. Reusable: ``reset(firstBucket:)``
/// keeps the buffer.
package struct SessionLogChunkBuilder {
    package private(set) var bytes: [UInt8] = []
    /// The bucket of the chunk's first entry (the chunk's key holds it).
    package private(set) var firstBucket: UInt32 = 0
    /// The bucket of the chunk's last entry.
    package private(set) var lastBucket: UInt32 = 0

    package init() {}

    /// Whether the chunk has no entry.
    package var isEmpty: Bool { bytes.isEmpty }
    /// The chunk's size in bytes.
    package var byteCount: Int { bytes.count }

    /// Empties the chunk.
    package mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
    }

    /// The chunk's size with an entry for a segment of `segmentCount` bytes of `bucket` added.
    package func byteCount(appending segmentCount: Int, bucket: UInt32) -> Int {
        let delta = isEmpty ? 0 : UInt64(bucket &- lastBucket)
        return bytes.count + varintSize(delta) + varintSize(UInt64(segmentCount)) + segmentCount
    }

    /// Appends an entry: `segment` (a one-segment session-bucket value) of `bucket`.
    /// - Precondition: `bucket` is at least the last entry's bucket, and `segment` holds at least 3 bytes
    ///   (programmer errors: they trap).
    package mutating func append(bucket: UInt32, segment: UnsafeRawBufferPointer) {
        precondition(segment.count >= 3, "a session-log segment is at least a header")
        if isEmpty {
            firstBucket = bucket
            lastBucket = bucket
        }
        precondition(bucket >= lastBucket, "session-log entries out of bucket order")
        appendVarint(&bytes, UInt64(bucket - lastBucket))
        appendVarint(&bytes, UInt64(segment.count))
        bytes.append(contentsOf: segment)
        lastBucket = bucket
    }
}

/// Reads a session-log chunk from untrusted bytes, one entry at a time. Lengths are checked against what remains,
/// buckets against overflow and the first against the key's; the segments themselves are read with ``SessionBucketReader``. Errors carry the offset
/// from the chunk's start.
package struct SessionLogChunkReader {
    private var reader: ByteReader
    private var bucket: UInt32

    /// A reader of the chunk `bytes` stored under a key whose first bucket is `firstBucket`.
    /// - Throws: ``CodecError`` (`truncated`) when `bytes` is empty.
    package init(_ bytes: UnsafeRawBufferPointer, firstBucket: UInt32) throws(CodecError) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { throw CodecError(offset: 0, reason: .truncated) }
        reader = ByteReader(base: base, position: 0, end: bytes.count)
        bucket = firstBucket
    }

    /// The next entry's bucket and segment bytes; `nil` after the last.
    package mutating func next() throws(CodecError) -> (bucket: UInt32, segment: UnsafeRawBufferPointer)? {
        if reader.position == reader.end { return nil }
        let at = reader.position
        let delta = try reader.varint()
        // The first entry is the key's bucket.
        guard delta <= UInt64(UInt32.max - bucket), at > 0 || delta == 0 else {
            throw CodecError(
                offset: at, reason: .invalidValue(field: "session-log bucket", value: Int64(bitPattern: delta)))
        }
        let length = try reader.varint()
        guard length >= 3, length <= UInt64(reader.remaining) else {
            throw CodecError(offset: at, reason: .oversizedCount(count: length, limit: reader.remaining))
        }
        bucket += UInt32(delta)
        let segment = UnsafeRawBufferPointer(start: reader.base + reader.position, count: Int(length))
        reader.position += Int(length)
        return (bucket, segment)
    }

    /// The offset of the next entry from the chunk's start (of the end after the last).
    package var offset: Int { reader.position }
}
