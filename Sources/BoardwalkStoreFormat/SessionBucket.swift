import BoardwalkCodec
import BoardwalkModel

// Session buckets: the session index's values (store format 4). One value holds, for a bucket of consecutive
// session numbers, references to where each of their events is stored (onboarding, screen, time, seq), grouped
// per session into runs. `docs/codec.md` ("Session-bucket value") has the bytes:
//
//     value   := segment+
//     segment := [base time: zigzag varint][base seq − key seq: varint][run count: varint ≥ 1] run × count
//     run     := [session's low bits: varint][byte length of its entries: varint ≥ 4] entry+
//     entry   := [onboarding code varint][screen varint][time varint][seq varint]
//
// A run's first entry has onboarding id + 1 (never 0), and zigzag deltas of time and seq from the segment's
// base; a later entry has onboarding 0 for "same as the entry before" (else id + 1), an unsigned time delta and
// a zigzag seq delta from the entry before, in strictly increasing (time, seq) order. Runs of a segment are in
// strictly increasing order of their low bits. Since every run starts from the segment's base, a reader skips
// another session's run by its byte length without decoding it; since every segment carries its own base, a
// later batch grows a value by appending a segment to its bytes without decoding them.

/// Writes one segment of a session-bucket value at a time into a reusable buffer, and hands it out behind an
/// optional copy of an existing value (the store grows a bucket's newest value by appending a segment).
///
/// Entries are appended in (session low bits, time, seq) order; each change of low bits starts a run. The
/// segment's base time and seq are those of its first entry. Copies share the buffer.
@usableFromInline
package struct SessionBucketBuilder {
    @usableFromInline var storage: BlockStorage
    /// Where the segment's runs start: room for a prefix (an existing value) and the segment header.
    @usableFromInline let front: Int
    /// The end of the written runs.
    @usableFromInline var used: Int
    @usableFromInline var runs: Int
    @usableFromInline var baseTime: Int64 = 0
    @usableFromInline var _baseSeq: UInt64 = 0
    /// The current run: its low bits, where its length goes (two bytes reserved), whether one is open.
    @usableFromInline var runLow: UInt32 = 0
    @usableFromInline var lengthAt: Int = 0
    @usableFromInline var inRun = false
    @usableFromInline var lastTime: Int64 = 0
    @usableFromInline var lastSeq: UInt64 = 0
    @usableFromInline var lastOnboarding: UInt32 = 0
    /// The largest prefix ``withValue(keySeq:prefix:_:)`` accepts (the buffer keeps that much room in front of
    /// the segment, so that the copy and the segment end up contiguous without moving the segment).
    @usableFromInline package let prefixRoom: Int

    /// The longest segment header: base time (10), seq delta (10), run count (5).
    @usableFromInline static var headerRoom: Int { 25 }
    /// A run's entries may take at most this many bytes (its length is a varint of at most two bytes).
    @usableFromInline package static let maxRunBytes = 16_383

    /// An empty builder whose ``withValue(keySeq:prefix:_:)`` takes prefixes of up to `prefixRoom` bytes.
    package init(prefixRoom: Int = 4096, capacity: Int = 8192) {
        self.prefixRoom = prefixRoom
        front = prefixRoom + SessionBucketBuilder.headerRoom
        storage = BlockStorage(capacity: Swift.max(capacity, front + 256))
        used = front
        runs = 0
    }

    /// Whether the segment has no entry.
    @inlinable package var isEmpty: Bool { used == front }
    /// The seq of the segment's first entry (its base; the key seq of a new value).
    @inlinable package var baseSeq: UInt64 { _baseSeq }
    /// The bytes of the segment so far, without its header (at most 25 bytes more).
    @inlinable package var byteCount: Int { used - front }
    /// Bytes the current run's entries take so far (0 when no run is open).
    @inlinable package var runByteCount: Int { inRun ? used - lengthAt - 2 : 0 }

    /// Empties the segment.
    @inlinable
    package mutating func reset() {
        used = front
        runs = 0
        inRun = false
    }

    /// Appends a reference to the event (`onboarding`, `screen`, `time`, `seq`) of the session whose low bits
    /// are `low`. Within a segment, calls come in strictly increasing (`low`, `time`, `seq`) order, and a run
    /// takes at most ``maxRunBytes`` bytes (the caller ends the segment before: each entry takes at most 28).
    /// - Precondition: the order above; out-of-order calls are a programmer error and trap.
    @inlinable
    package mutating func append(low: UInt32, onboarding: UInt32, screen: UInt16, time: Int64, seq: UInt64) {
        if _slowPath(used + 64 > storage.capacity) { storage = storage.grown(to: used + 64) }
        var w = ByteWriter(base: storage.pointer, position: used)
        if !inRun || low != runLow {
            if inRun {
                precondition(low > runLow, "session bucket entries out of order")
                w.position = closeRun(at: w.position)
            }
            if runs == 0 {
                baseTime = time
                _baseSeq = seq
            }
            runs += 1
            runLow = low
            inRun = true
            w.varint32(low)
            lengthAt = w.position
            w.position += 2
            w.varint(UInt64(onboarding) + 1)
            w.varint32(UInt32(screen))
            w.varint(zigzag(time &- baseTime))
            w.varint(zigzag(Int64(bitPattern: seq &- _baseSeq)))
        } else {
            precondition(time > lastTime || (time == lastTime && seq > lastSeq), "session bucket entries out of order")
            w.varint(onboarding == lastOnboarding ? 0 : UInt64(onboarding) + 1)
            w.varint32(UInt32(screen))
            w.varint(UInt64(bitPattern: time &- lastTime))
            w.varint(zigzag(Int64(bitPattern: seq &- lastSeq)))
        }
        used = w.position
        lastTime = time
        lastSeq = seq
        lastOnboarding = onboarding
    }

    /// Writes the open run's length into its two reserved bytes (moving its entries back one byte when the
    /// length takes one) and returns the new end.
    @inlinable
    mutating func closeRun(at end: Int) -> Int {
        let length = end - lengthAt - 2
        precondition(length <= SessionBucketBuilder.maxRunBytes, "a session bucket run is too long")
        let p = storage.pointer
        if length < 0x80 {
            p.storeBytes(of: UInt8(length), toByteOffset: lengthAt, as: UInt8.self)
            (p + lengthAt + 1).copyMemory(from: p + lengthAt + 2, byteCount: length)
            inRun = false
            return end - 1
        }
        p.storeBytes(of: UInt8(truncatingIfNeeded: length) | 0x80, toByteOffset: lengthAt, as: UInt8.self)
        p.storeBytes(of: UInt8(truncatingIfNeeded: length >> 7), toByteOffset: lengthAt + 1, as: UInt8.self)
        inRun = false
        return end
    }

    /// Closes the segment and calls `body` with `prefix` (an existing value, or nothing) followed by the segment,
    /// for a value stored under a key whose seq is `keySeq` (``baseSeq`` for a new value; a grown value keeps its
    /// key, whose seq is at most the segment's base). The bytes are valid only inside `body`. The segment stays
    /// closed: append nothing more before ``reset()``.
    /// - Precondition: the segment is not empty, `keySeq <= baseSeq`, and `prefix` is at most ``prefixRoom``
    ///   bytes (programmer errors: they trap).
    /// - Complexity: O(prefix) for the copy of `prefix`.
    @inlinable
    package mutating func withValue<R>(
        keySeq: UInt64,
        prefix: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0),
        _ body: (UnsafeRawBufferPointer) throws -> R
    ) rethrows -> R {
        precondition(!isEmpty && keySeq <= _baseSeq && prefix.count <= prefixRoom, "session bucket value misused")
        if inRun { used = closeRun(at: used) }
        var header = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        let headerBytes = withUnsafeMutableBytes(of: &header) { h in
            var w = ByteWriter(base: h.baseAddress!, position: 0)
            w.varint(zigzag(baseTime))
            w.varint(_baseSeq &- keySeq)
            w.varint(UInt64(runs))
            return w.position
        }
        let start = front - headerBytes - prefix.count
        let p = storage.pointer
        withUnsafeBytes(of: &header) { h in
            (p + front - headerBytes).copyMemory(from: h.baseAddress!, byteCount: headerBytes)
        }
        if let base = prefix.baseAddress, prefix.count > 0 {
            (p + start).copyMemory(from: base, byteCount: prefix.count)
        }
        return try withExtendedLifetime(storage) {
            try body(UnsafeRawBufferPointer(start: p + start, count: used - start))
        }
    }
}

/// Reads a session-bucket value from untrusted bytes, one run at a time and one entry at a time within a run.
///
/// Every field is checked: lengths against what remains, low bits below the limit and increasing within a
/// segment, entries in strictly increasing (time, seq) order within a run and ending exactly at the run's length,
/// no overflow, screen within 16 bits. ``nextRun()`` skips what is left of the current run without reading it.
/// Errors carry the offset from the value's start.
@usableFromInline
package struct SessionBucketReader {
    @usableFromInline var reader: ByteReader
    @usableFromInline let keySeq: UInt64
    @usableFromInline let lowLimit: UInt32
    @usableFromInline var runsLeft = 0
    @usableFromInline var runEnd = 0
    @usableFromInline var baseTime: Int64 = 0
    @usableFromInline var baseSeq: UInt64 = 0
    /// The previous run's low bits in this segment, -1 at a segment's start.
    @usableFromInline var lastLow: Int64 = -1
    @usableFromInline var _index = 0
    @usableFromInline var _segments = 0
    @usableFromInline var _low: UInt32 = 0
    @usableFromInline var _onboarding: UInt32 = 0
    @usableFromInline var _screen: UInt16 = 0
    @usableFromInline var _time: Int64 = 0
    @usableFromInline var _seq: UInt64 = 0

    /// The current run's low bits (after ``nextRun()`` returned `true`).
    @inlinable package var low: UInt32 { _low }
    /// Segments started so far (the current run belongs to segment `segments - 1`).
    @inlinable package var segments: Int { _segments }
    /// Entries of the current run read so far.
    @inlinable package var index: Int { _index }
    /// The current entry (after ``nextEntry()`` returned `true`).
    @inlinable package var onboarding: UInt32 { _onboarding }
    @inlinable package var screen: UInt16 { _screen }
    @inlinable package var time: Int64 { _time }
    @inlinable package var seq: UInt64 { _seq }

    /// A reader of the value `bytes`, stored under a key whose seq is `keySeq`, whose low bits are below `lowLimit`.
    /// - Throws: ``CodecError`` (`truncated`) when `bytes` is empty.
    package init(_ bytes: UnsafeRawBufferPointer, keySeq: UInt64, lowLimit: UInt32) throws(CodecError) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { throw CodecError(offset: 0, reason: .truncated) }
        reader = ByteReader(base: base, position: 0, end: bytes.count)
        self.keySeq = keySeq
        self.lowLimit = lowLimit
    }

    /// Whether every segment and run header of `bytes` reads back (without decoding the entries): what a writer
    /// checks before it appends a segment to a stored value.
    /// - Complexity: O(runs of the value).
    package static func runHeadersAreSound(_ bytes: UnsafeRawBufferPointer, keySeq: UInt64, lowLimit: UInt32) -> Bool {
        (try? SessionBucketSegment.forEach(in: bytes, keySeq: keySeq, lowLimit: lowLimit) { _ in }) != nil
    }

    /// Moves to the next run (skipping the rest of the current one); `false` after the value's last run.
    @inlinable
    package mutating func nextRun() throws(CodecError) -> Bool {
        if runEnd > 0 { reader.position = runEnd }
        if runsLeft == 0 {
            if reader.position == reader.end { return false }
            (baseTime, baseSeq, runsLeft) = try SessionBucketReader.segmentHeader(&reader, keySeq: keySeq)
            lastLow = -1
            _segments += 1
        }
        let (low, length) = try SessionBucketReader.runHeader(&reader, lowLimit: lowLimit, after: lastLow)
        runEnd = reader.position + length
        runsLeft -= 1
        lastLow = Int64(low)
        _low = low
        _index = 0
        return true
    }

    /// Reads a segment header: base time, base seq (relative to `keySeq`) and run count, checked.
    @inlinable @inline(__always)
    static func segmentHeader(_ reader: inout ByteReader, keySeq: UInt64) throws(CodecError)
        -> (baseTime: Int64, baseSeq: UInt64, runs: Int)
    {
        let at = reader.position
        let baseTime = unzigzag(try reader.varint())
        let delta = try reader.varint()
        let (seq, overflow) = keySeq.addingReportingOverflow(delta)
        guard !overflow else {
            throw CodecError(
                offset: at, reason: .invalidValue(field: "segment base seq", value: Int64(bitPattern: delta)))
        }
        let count = try reader.varint()
        // A run takes at least 6 bytes: low bits, length, and a 4-byte entry.
        guard count >= 1, count <= UInt64(reader.remaining / 6) else {
            throw CodecError(offset: at, reason: .oversizedCount(count: count, limit: reader.remaining / 6))
        }
        return (baseTime, seq, Int(count))
    }

    /// Reads a run header: the session's low bits (below `lowLimit`, above `lastLow`) and the byte length of its
    /// entries (at least 4, within what remains), checked.
    @inlinable @inline(__always)
    static func runHeader(_ reader: inout ByteReader, lowLimit: UInt32, after lastLow: Int64) throws(CodecError)
        -> (low: UInt32, length: Int)
    {
        let at = reader.position
        let low = try reader.varint()
        guard low < UInt64(lowLimit), Int64(low) > lastLow else {
            throw CodecError(
                offset: at, reason: .invalidValue(field: "session bucket low bits", value: Int64(bitPattern: low)))
        }
        let length = try reader.varint()
        guard length >= 4, length <= UInt64(reader.remaining) else {
            throw CodecError(offset: at, reason: .oversizedCount(count: length, limit: reader.remaining))
        }
        return (UInt32(low), Int(length))
    }

    /// Moves to the current run's next entry; `false` after its last one.
    @inlinable
    package mutating func nextEntry() throws(CodecError) -> Bool {
        if reader.position == runEnd { return false }
        var r = ByteReader(base: reader.base, position: reader.position, end: runEnd)
        let at = r.position
        let code = try r.varint()
        let screen = try r.varint()
        let dt = try r.varint()
        let ds = try r.varint()
        guard code <= UInt64(UInt32.max) + 1, code != 0 || _index > 0 else {
            throw CodecError(
                offset: at, reason: .invalidValue(field: "session bucket onboarding", value: Int64(bitPattern: code)))
        }
        guard screen <= UInt64(UInt16.max) else {
            throw CodecError(
                offset: at, reason: .invalidValue(field: "session bucket screen", value: Int64(bitPattern: screen)))
        }
        if _index == 0 {
            // Wrapping, as the builder wrote them: any base and delta give a time and a seq.
            _time = baseTime &+ unzigzag(dt)
            _seq = baseSeq &+ UInt64(bitPattern: unzigzag(ds))
        } else {
            let d = unzigzag(ds)
            let newSeq = _seq &+ UInt64(bitPattern: d)
            guard dt <= UInt64(bitPattern: Int64.max &- _time), (d < 0) == (newSeq < _seq), dt > 0 || newSeq > _seq
            else {
                throw CodecError(
                    offset: at, reason: .invalidValue(field: "session bucket order", value: Int64(bitPattern: dt)))
            }
            _time &+= Int64(bitPattern: dt)
            _seq = newSeq
        }
        if code != 0 { _onboarding = UInt32(truncatingIfNeeded: code - 1) }
        _screen = UInt16(truncatingIfNeeded: screen)
        _index += 1
        reader.position = r.position
        return true
    }
}

/// One segment of a session-bucket value, read without decoding its entries: its base time and seq, its run count
/// and the bytes of its runs. Runs do not depend on the key the value is stored under (only the header's seq
/// does), so the store moves a segment into a value under another key by writing a new header before the same
/// run bytes (``append(keySeq:to:)``). The run bytes point into the value read.
package struct SessionBucketSegment {
    package let baseTime: Int64
    package let baseSeq: UInt64
    package let runCount: Int
    package let runs: UnsafeRawBufferPointer

    /// The segment's size in a value stored under a key whose seq is `keySeq` (at most ``baseSeq``).
    package func byteCount(keySeq: UInt64) -> Int {
        varintSize(zigzag(baseTime)) + varintSize(baseSeq &- keySeq) + varintSize(UInt64(runCount)) + runs.count
    }

    /// Appends the segment's bytes, for a value stored under a key whose seq is `keySeq`, to `out`.
    /// - Precondition: `keySeq <= baseSeq` (a programmer error: it traps).
    package func append(keySeq: UInt64, to out: inout [UInt8]) {
        precondition(keySeq <= baseSeq, "a segment's base seq is below its key's")
        appendVarint(&out, zigzag(baseTime))
        appendVarint(&out, baseSeq - keySeq)
        appendVarint(&out, UInt64(runCount))
        out.append(contentsOf: runs)
    }

    /// Calls `body` with each segment of the session-bucket value `bytes` stored under `keySeq`, checking every
    /// segment header and run header as ``SessionBucketReader`` does (not the entries).
    /// - Throws: ``CodecError`` at the first header that does not read back.
    /// - Complexity: O(runs of the value).
    package static func forEach(
        in bytes: UnsafeRawBufferPointer, keySeq: UInt64, lowLimit: UInt32,
        _ body: (SessionBucketSegment) throws -> Void
    ) throws {
        guard let base = bytes.baseAddress, bytes.count > 0 else { throw CodecError(offset: 0, reason: .truncated) }
        var r = ByteReader(base: base, position: 0, end: bytes.count)
        while r.position < r.end {
            let (baseTime, baseSeq, count) = try SessionBucketReader.segmentHeader(&r, keySeq: keySeq)
            let start = r.position
            var lastLow: Int64 = -1
            for _ in 0..<count {
                let (low, length) = try SessionBucketReader.runHeader(&r, lowLimit: lowLimit, after: lastLow)
                r.position += length
                lastLow = Int64(low)
            }
            try body(
                SessionBucketSegment(
                    baseTime: baseTime, baseSeq: baseSeq, runCount: count,
                    runs: UnsafeRawBufferPointer(start: base + start, count: r.position - start)))
        }
    }
}
