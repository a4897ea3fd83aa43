import BoardwalkCodec
import BoardwalkModel

// Event blocks: many record bodies in one value, sorted by (time, seq), with small deltas instead of
// fixed-width keys. `docs/codec.md` ("Event blocks") describes the bytes.
//
// A block is
//
//     checksum: CRC-32C of the block's name (the store's key) and of everything after it   (4 bytes, LE)
//     header checksum: CRC-32C of the block's name and of the header                  (4 bytes, LE)
//     header: count ‖ time span ‖ first seq − min seq ‖ max seq − min seq        (4 varints)
//             ‖ kind counts: entries varint, then per entry a code byte, for code 0x0F the unknown name's reference
//               varint, and a count varint (BlockKindCounts)
//     count × [time delta varint][zigzag seq delta varint][body length varint][body]
//
// Time and seq of the first event come from outside (a store key carries them); each event's deltas are
// from the event before it (the first one's are 0). Events are in strictly increasing (time, seq) order,
// so time deltas are never negative; seq deltas may be (an event that arrived later with an earlier time).

/// Writes one event block at a time into a reusable buffer.
///
/// ```swift
/// var builder = EventBlockBuilder()
/// builder.start(time: first.time, seq: first.seq)
/// for e in groupEvents { builder.append(time: e.time, seq: e.seq, body: e.body) }
/// var seed = CRC32C()
/// seed.update(keyBytes)   // the block's name where it is stored, covered by its checksum
/// builder.withBlock(checksumSeed: seed) { bytes in store(key: keyBytes, value: bytes) }
/// ```
///
/// Copies share one buffer: keep one builder per writer.
@usableFromInline
package struct EventBlockBuilder {
    @usableFromInline var storage: BlockStorage
    /// Bytes of events written after the reserved header room.
    @usableFromInline var used: Int
    /// Events in the current block.
    @usableFromInline var _count: Int
    @inlinable package var count: Int { _count }
    /// Time and seq of the first event (what the block's key carries).
    @usableFromInline var _firstTime: Int64
    @inlinable package var firstTime: Int64 { _firstTime }
    @usableFromInline var _firstSeq: UInt64
    @inlinable package var firstSeq: UInt64 { _firstSeq }
    /// The largest time in the block (the last event's: events are in time order).
    @usableFromInline var _lastTime: Int64
    @inlinable package var lastTime: Int64 { _lastTime }
    @usableFromInline var lastSeq: UInt64
    @usableFromInline var minSeq: UInt64
    @usableFromInline var maxSeq: UInt64
    /// The events counted by kind code, for the header's summary.
    @usableFromInline var tally: KindTally

    /// Room kept in front of the events for the checksum and the header: four varints of at most 10 bytes and the
    /// kind counts. It starts at ``initialHeaderRoom`` (room for 26 entries of 3 bytes) and grows, moving the events,
    /// when the kind counts need more (many unknown analytics names in one block).
    @usableFromInline var headerRoom: Int

    @inlinable static var initialHeaderRoom: Int { 128 }

    /// An empty builder.
    package init(capacity: Int = 1 << 16) {
        storage = BlockStorage(capacity: Swift.max(capacity, 256))
        used = 0
        _count = 0
        _firstTime = 0
        _firstSeq = 0
        _lastTime = 0
        lastSeq = 0
        minSeq = 0
        maxSeq = 0
        tally = KindTally()
        headerRoom = EventBlockBuilder.initialHeaderRoom
    }

    /// Starts a new, empty block whose first event will have `time` and `seq`.
    @inlinable
    package mutating func start(time: Int64, seq: UInt64) {
        used = headerRoom
        _count = 0
        _firstTime = time
        _firstSeq = seq
        _lastTime = time
        lastSeq = seq
        minSeq = seq
        maxSeq = seq
        tally.reset()
    }

    /// Starts from an existing block, so that more events can be appended to it: the store grows a
    /// group's newest block over several batches instead of writing a new small block each time.
    ///
    /// The block is read (and checked, its checksum first, continuing `checksumSeed`) through ``EventBlockReader``
    /// before anything is copied, so that a damaged block is never rewritten under a fresh checksum; on a throw the
    /// builder holds an empty block started at (`firstTime`, `firstSeq`).
    /// - Throws: ``CodecError`` when `bytes` is not a well-formed block.
    /// - Complexity: O(events of the block) and one copy of its bytes.
    package mutating func resume(
        _ bytes: UnsafeRawBufferPointer, firstTime: Int64,
        firstSeq: UInt64, checksumSeed: CRC32C
    ) throws(CodecError) {
        start(time: firstTime, seq: firstSeq)
        var reader = try EventBlockReader(bytes, firstTime: firstTime, firstSeq: firstSeq, checksumSeed: checksumSeed)
        let eventsStart = reader.reader.position
        var lastSeq = firstSeq
        while try reader.next() { lastSeq = reader.seq }
        takeKindCounts(reader)
        storage = storage.copying(UnsafeRawBufferPointer(rebasing: bytes[eventsStart...]), to: used)
        used += bytes.count - eventsStart
        _count = reader.count
        _lastTime = reader.lastTime
        self.lastSeq = lastSeq
        minSeq = reader.minSeq
        maxSeq = reader.maxSeq
    }

    /// ``resume(_:firstTime:firstSeq:)`` for a block whose last event's seq the caller already knows
    /// (because it wrote the block and noted ``lastEventSeq``): only the header is read, so growing a
    /// block over many batches does not decode its events again each time.
    ///
    /// The caller vouches that `lastSeq` is the seq of the block's last event in (time, seq) order; it
    /// is only checked against the header's seq range. The checksum is checked as by the other `resume`. On a
    /// throw the builder holds an empty block started at (`firstTime`, `firstSeq`).
    /// - Throws: ``CodecError`` when the checksum does not match, the header is malformed or `lastSeq` is outside
    ///   its seq range.
    /// - Complexity: O(bytes of the block) checksummed (about 0.05 ns a byte), and one copy of them.
    package mutating func resume(
        _ bytes: UnsafeRawBufferPointer, firstTime: Int64, firstSeq: UInt64,
        lastSeq: UInt64, checksumSeed: CRC32C
    ) throws(CodecError) {
        start(time: firstTime, seq: firstSeq)
        let reader = try EventBlockReader(bytes, firstTime: firstTime, firstSeq: firstSeq, checksumSeed: checksumSeed)
        guard lastSeq >= reader.minSeq && lastSeq <= reader.maxSeq else {
            throw CodecError(
                offset: 0, reason: .invalidValue(field: "block last seq", value: Int64(bitPattern: lastSeq)))
        }
        let eventsStart = reader.reader.position
        takeKindCounts(reader)
        storage = storage.copying(UnsafeRawBufferPointer(rebasing: bytes[eventsStart...]), to: used)
        used += bytes.count - eventsStart
        _count = reader.count
        _lastTime = reader.lastTime
        self.lastSeq = lastSeq
        minSeq = reader.minSeq
        maxSeq = reader.maxSeq
    }

    /// Counts the kinds `reader`'s header counts, for an empty block about to take its events.
    mutating func takeKindCounts(_ reader: EventBlockReader) {
        for entry in reader.kindCounts { tally.add(entry.code, name: entry.name, entry.count) }
        if tally.byteCount > headerRoom &- EventBlockReader.headerStart &- 40 { growHeaderRoom() }
    }

    /// Makes the room in front of the events large enough for the kind counts, moving the events.
    @usableFromInline
    mutating func growHeaderRoom() {
        var room = headerRoom
        while tally.byteCount > room &- EventBlockReader.headerStart &- 40 { room *= 2 }
        let shift = room &- headerRoom
        if used &+ shift > storage.capacity { storage = storage.grown(to: used &+ shift) }
        if used > headerRoom {
            // Through a copy: the two ranges overlap.
            let events = [UInt8](
                UnsafeRawBufferPointer(start: storage.pointer + headerRoom, count: used &- headerRoom))
            events.withUnsafeBytes { bytes in
                if let base = bytes.baseAddress {
                    storage.pointer.advanced(by: room).copyMemory(from: base, byteCount: bytes.count)
                }
            }
        }
        used &+= shift
        headerRoom = room
    }

    /// The seq of the last event in the block so far (in (time, seq) order).
    @inlinable package var lastEventSeq: UInt64 { lastSeq }

    /// Whether an event with `time` and `seq` may be appended now: it sorts after the last event (any
    /// event may start an empty block, whose ``start(time:seq:)`` must then match it).
    @inlinable
    package func canAppend(time: Int64, seq: UInt64) -> Bool {
        count == 0 || time > lastTime || (time == lastTime && seq > lastSeq)
    }

    /// The bytes the block would take after appending one more event with `time`, `seq` and `body` (which must sort
    /// after the last event): what the store compares with its target block size before appending.
    /// - Complexity: O(1), and O(unknown analytics names in the block) for a body of one; the body's kind is read as
    ///   ``append(time:seq:body:)`` reads it.
    @inlinable
    package func byteCount(appending time: Int64, seq: UInt64, body: UnsafeRawBufferPointer) -> Int {
        let bodyCount = body.count
        let kind = RecordFormat.kindCode(body: body)
        if count == 0 {
            // Four one-byte header varints, one kind entry with a count of 1, two zero deltas.
            return EventBlockReader.headerStart + 4 + KindTally.firstEntrySize(kind.code, name: kind.name) + 2
                + varintSize(UInt64(bodyCount)) + bodyCount
        }
        let event =
            varintSize(UInt64(bitPattern: time &- lastTime)) + varintSize(zigzag(Int64(bitPattern: seq &- lastSeq)))
            + varintSize(UInt64(bodyCount)) + bodyCount
        let header =
            EventBlockReader.headerStart + varintSize(UInt64(count + 1))
            + varintSize(UInt64(bitPattern: time &- firstTime))
            + varintSize(firstSeq &- Swift.min(minSeq, seq))
            + varintSize(Swift.max(maxSeq, seq) &- Swift.min(minSeq, seq))
            + tally.byteCount(adding: kind.code, name: kind.name)
        return used - headerRoom + event + header
    }

    /// The bytes the block will take if ``withBlock(checksumSeed:_:)`` is called now.
    @inlinable
    package var byteCount: Int {
        used - headerRoom + headerSize
    }

    /// An upper bound of ``byteCount`` that costs no varint sizes: the events' bytes plus the checksum, the longest
    /// four header varints (40 bytes; they take 4 to 40) and the kind counts. A caller that only needs to know whether
    /// the block is far from a limit checks this first and computes the exact count only near the limit.
    @inlinable
    package var byteCountBound: Int {
        used &- headerRoom &+ EventBlockReader.headerStart &+ 40 &+ tally.byteCount
    }

    /// Appends an event. The first event must have the time and seq given to ``start(time:seq:)``, and
    /// every later one a larger (time, seq) than the one before.
    @inlinable
    package mutating func append(time: Int64, seq: UInt64, body: UnsafeRawBufferPointer) {
        precondition(
            count == 0
                ? (time == firstTime && seq == firstSeq)
                : (time > lastTime || (time == lastTime && seq > lastSeq)), "events out of (time, seq) order")
        if _slowPath(used + 30 + body.count > storage.capacity) { storage = storage.grown(to: used + 30 + body.count) }
        var w = ByteWriter(base: storage.pointer, position: used)
        w.varint(UInt64(bitPattern: time &- lastTime))
        w.varint(zigzag(Int64(bitPattern: seq &- lastSeq)))
        w.varint(UInt64(body.count))
        if body.count > 0 { w.bytes(body) }
        used = w.position
        let kind = RecordFormat.kindCode(body: body)
        tally.add(kind.code, name: kind.name)
        if _slowPath(tally.byteCount > headerRoom &- EventBlockReader.headerStart &- 40) { growHeaderRoom() }
        _count += 1
        _lastTime = time
        lastSeq = seq
        minSeq = Swift.min(minSeq, seq)
        maxSeq = Swift.max(maxSeq, seq)
    }

    /// The checksums and the header: the block's **head**, the bytes before its first event.
    @inlinable
    package var headerSize: Int {
        EventBlockReader.headerStart + varintSize(UInt64(count))
            + varintSize(UInt64(bitPattern: lastTime &- firstTime))
            + varintSize(firstSeq &- minSeq) + varintSize(maxSeq &- minSeq) + tally.byteCount
    }

    /// Calls `body` with the finished block (checksums, header and events); the bytes are valid only inside `body`.
    ///
    /// Both checksums continue `checksumSeed`, the checksum of the bytes that name the block where it is stored (the
    /// store's key), so that a block read under another name fails its check as a damaged one does.
    /// - Complexity: O(bytes of the block), for the checksum (about 0.05 ns a byte).
    @inlinable
    package func withBlock<R>(checksumSeed: CRC32C, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let start = headerRoom - headerSize
        let headerStart = start + EventBlockReader.headerStart
        var w = ByteWriter(base: storage.pointer, position: headerStart)
        w.varint(UInt64(count))
        w.varint(UInt64(bitPattern: lastTime &- firstTime))
        w.varint(firstSeq &- minSeq)
        w.varint(maxSeq &- minSeq)
        tally.write(&w)
        return try withExtendedLifetime(storage) {
            let block = UnsafeMutableRawBufferPointer(start: storage.pointer + start, count: used - start)
            // The header's checksum first: the block's covers it.
            StoredChecksum.seal(
                UnsafeMutableRawBufferPointer(rebasing: block[StoredChecksum.size..<(headerRoom - start)]),
                seed: checksumSeed)
            StoredChecksum.seal(block, seed: checksumSeed)
            return try body(UnsafeRawBufferPointer(block))
        }
    }
}

/// Reads an event block from untrusted bytes, one event at a time, without copying.
///
/// The checksum and the header are checked at ``init(_:firstTime:firstSeq:checksumSeed:)``; each ``next()`` checks
/// one event: its
/// lengths against the bytes, its order after the previous event, its time and seq against the header.
/// After the last event the block must end exactly, and the header's time span and seq range must be
/// the ones the events have. Any violation throws a ``CodecError`` whose offset is from the block's start.
@usableFromInline
package struct EventBlockReader {
    @usableFromInline package var reader: ByteReader
    /// Events in the block (from the header).
    package let count: Int
    /// The first event's time and seq (from the key), and the last event's time (from the header).
    @usableFromInline package let firstTime: Int64
    package let firstSeq: UInt64
    package let lastTime: Int64
    /// The smallest and largest seq in the block (from the header).
    package let minSeq: UInt64
    package let maxSeq: UInt64
    /// The block's header, as read.
    package let header: EventBlockHeader
    /// How many of the block's events have each kind (and analytics name), from the header.
    package var kindCounts: BlockKindCounts { header.kindCounts }
    /// Events read so far.
    @usableFromInline var _index: Int = 0
    @inlinable package var index: Int { _index }
    /// The current event (after ``next()`` returned `true`): its time, seq and record body.
    @usableFromInline var _time: Int64
    @inlinable package var time: Int64 { _time }
    @usableFromInline var _seq: UInt64
    @inlinable package var seq: UInt64 { _seq }
    @usableFromInline var _body: UnsafeRawBufferPointer
    @inlinable package var body: UnsafeRawBufferPointer { _body }
    @usableFromInline var seenMinSeq: UInt64
    @usableFromInline var seenMaxSeq: UInt64

    /// Bytes of the block's checksum, in front of the header's checksum.
    @inlinable package static var checksumSize: Int { StoredChecksum.size }
    /// Where the header starts: after the block's checksum and the header's.
    @inlinable package static var headerStart: Int { 2 * StoredChecksum.size }

    /// Checks the checksums of the block in `bytes`, whose first event has time `firstTime` and seq `firstSeq`, and
    /// reads its header.
    ///
    /// `checksumSeed` is the checksum of the bytes that name the block (the store's key), which the block's own
    /// checksum continues: a flipped bit anywhere in the block, or a block read under another key, fails here.
    /// - Throws: ``CodecError`` with ``CodecError/Reason/checksumMismatch(stored:computed:)`` at offset 0 when the
    ///   block's checksum does not match, at offset 4 when the header's does not; for a truncated or malformed
    ///   header, a count the bytes cannot hold, or ranges that overflow.
    /// - Complexity: O(`bytes.count`) for the checksum (about 0.05 ns a byte), O(1) for the header.
    package init(
        _ bytes: UnsafeRawBufferPointer, firstTime: Int64, firstSeq: UInt64, checksumSeed: CRC32C
    ) throws(CodecError) {
        try StoredChecksum.verify(bytes, seed: checksumSeed)
        let header = try EventBlockHeader(bytes, firstTime: firstTime, firstSeq: firstSeq, checksumSeed: checksumSeed)
        // `verify` threw for an empty value: there is a base address.
        let base = bytes.baseAddress!
        reader = ByteReader(base: base, position: header.eventsStart, end: bytes.count)
        count = header.count
        self.firstTime = firstTime
        self.firstSeq = firstSeq
        lastTime = header.lastTime
        minSeq = header.minSeq
        maxSeq = header.maxSeq
        self.header = header
        _time = firstTime
        _seq = firstSeq
        _body = UnsafeRawBufferPointer(start: base, count: 0)
        seenMinSeq = firstSeq
        seenMaxSeq = firstSeq
    }

    /// Moves to the next event; `false` after the last one (when the block has been checked to end there).
    ///
    /// An event after the first, with time and seq deltas of up to 8 bytes, a body length of one byte and 17 bytes
    /// left in the block (almost every event), is read here; any other event, and any event that fails a check,
    /// goes to ``nextChecked()``, which reads it again from the same state and says what is wrong. Both check the
    /// same things.
    ///
    /// Not inlinable, on purpose: inlined into a store scan's loop, it made the loop too large for the compiler to inline
    /// `EventRecord.fields` there as well (an always-inline function over 64 blocks is inlined only into a caller
    /// under 64), and a median onboarding's funnel took 10 % and 27 % more instructions in two versions (callgrind).
    @usableFromInline
    package mutating func next() throws(CodecError) -> Bool {
        let i = _index, p = reader.position
        // Two 8-byte loads (at most 16 bytes of deltas) and the length byte after them stay inside the block.
        guard _fastPath(i > 0 && i < count && reader.end &- p >= 17) else { return try nextChecked() }
        let base = reader.base
        guard let (dt, afterTime) = EventBlockReader.shortVarint(base, p),
            let (zs, afterSeq) = EventBlockReader.shortVarint(base, afterTime, twoBytes: true)
        else { return try nextChecked() }
        let length = base.load(fromByteOffset: afterSeq, as: UInt8.self)
        let bodyStart = afterSeq &+ 1
        let ds = unzigzag(zs)
        let time = _time, seq = _seq
        let newSeq = seq &+ UInt64(bitPattern: ds)
        guard
            _fastPath(
                length < 0x80 && Int(length) <= reader.end &- bodyStart
                    && dt <= UInt64(bitPattern: lastTime &- time)
                    && newSeq >= minSeq && newSeq <= maxSeq && (ds < 0) == (newSeq < seq)
                    && (dt > 0 || newSeq > seq))
        else { return try nextChecked() }
        _time = time &+ Int64(bitPattern: dt)
        _seq = newSeq
        seenMinSeq = Swift.min(seenMinSeq, newSeq)
        seenMaxSeq = Swift.max(seenMaxSeq, newSeq)
        _body = UnsafeRawBufferPointer(start: base + bodyStart, count: Int(length))
        reader.position = bodyStart &+ Int(length)
        _index = i &+ 1
        return true
    }

    /// A varint of 1 to 8 bytes at `p` (8 bytes readable there) in its shortest form, and the position after it;
    /// `nil` for anything else (longer, or a longer spelling than needed), which ``nextChecked()`` then reads.
    @inline(__always)
    static func shortVarint(_ base: UnsafeRawPointer, _ p: Int, twoBytes: Bool = false) -> (UInt64, Int)? {
        let b0 = base.load(fromByteOffset: p, as: UInt8.self)
        if b0 < 0x80 { return (UInt64(b0), p &+ 1) }
        if twoBytes {
            // Seq deltas: most that take more than a byte take two.
            let b1 = base.load(fromByteOffset: p &+ 1, as: UInt8.self)
            if b1 < 0x80 {
                guard b1 != 0 else { return nil }
                return (UInt64(b0 & 0x7F) | UInt64(b1) << 7, p &+ 2)
            }
        }
        let w = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: p, as: UInt64.self))
        // The high bit of each byte that ends a varint; the lowest one ends this varint.
        let stops = ~w & 0x8080_8080_8080_8080
        guard stops != 0 else { return nil }
        let bits = stops.trailingZeroBitCount &+ 1  // 8 × the varint's length, at least 16 here
        // A last byte of 0 (after the first) is a longer spelling than needed.
        guard (w >> UInt64(bits &- 8)) & 0xFF != 0 else { return nil }
        let bytes = w & (stops ^ (stops &- 1))
        if bits <= 32 {
            // Up to four bytes (time deltas below 4.5 minutes, the usual ones): the low 28 bits packed directly.
            let v = bytes & 0x7F7F_7F7F
            return (v & 0x7F | (v >> 1) & 0x3F80 | (v >> 2) & 0x1F_C000 | (v >> 3) & 0xFE0_0000, p &+ bits >> 3)
        }
        return (compactVarint(bytes), p &+ bits >> 3)
    }

    /// ``next()`` for any event, each check with its own error.
    @inline(never)
    package mutating func nextChecked() throws(CodecError) -> Bool {
        if index == count {
            guard reader.position == reader.end else {
                throw CodecError(
                    offset: reader.position, reason: .lengthMismatch(declared: reader.position, used: reader.end))
            }
            guard time == lastTime else {
                throw CodecError(
                    offset: 0, reason: .invalidValue(field: "block time span (last event)", value: time &- firstTime))
            }
            guard seenMinSeq == minSeq, seenMaxSeq == maxSeq else {
                throw CodecError(
                    offset: 0,
                    reason: .invalidValue(
                        field: "block seq range (events)", value: Int64(bitPattern: seenMaxSeq &- seenMinSeq)))
            }
            return false
        }
        let at = reader.position
        let dt = try reader.varint()
        let ds = unzigzag(try reader.varint())
        let length = try reader.varint()
        guard dt <= UInt64(bitPattern: lastTime &- time) else {
            throw CodecError(offset: at, reason: .invalidValue(field: "event time delta", value: Int64(bitPattern: dt)))
        }
        let newSeq = seq &+ UInt64(bitPattern: ds)
        if index == 0 {
            guard dt == 0, ds == 0 else {
                throw CodecError(offset: at, reason: .invalidValue(field: "first event delta", value: ds))
            }
        } else {
            guard newSeq >= minSeq, newSeq <= maxSeq, (ds < 0) == (newSeq < seq) else {
                throw CodecError(
                    offset: at, reason: .invalidValue(field: "event seq", value: Int64(bitPattern: newSeq)))
            }
            guard dt > 0 || newSeq > seq else {
                throw CodecError(
                    offset: at, reason: .invalidValue(field: "event order (same time, seq not increasing)", value: ds))
            }
        }
        guard length <= UInt64(reader.remaining) else { throw CodecError(offset: reader.position, reason: .truncated) }
        _time &+= Int64(bitPattern: dt)
        _seq = newSeq
        seenMinSeq = Swift.min(seenMinSeq, seq)
        seenMaxSeq = Swift.max(seenMaxSeq, seq)
        _body = UnsafeRawBufferPointer(start: reader.base + reader.position, count: Int(length))
        reader.position += Int(length)
        _index += 1
        return true
    }
}

/// The header of an event block, read and checked without the events: its own checksum (the second four bytes,
/// covering the block's name and the header) is checked, not the block's, so a reader that needs only the counts,
/// the time span and the kind counts touches the header's bytes alone. The events behind it are not checked: read
/// them through ``EventBlockReader``, which checks the whole block.
@usableFromInline
package struct EventBlockHeader {
    /// Events in the block.
    package let count: Int
    /// The last event's time (the first one's is the key's).
    package let lastTime: Int64
    /// The smallest and largest seq in the block.
    package let minSeq: UInt64
    package let maxSeq: UInt64
    /// How many of the block's events have each kind (and analytics name).
    package let kindCounts: BlockKindCounts
    /// The offset of the first event.
    package let eventsStart: Int

    /// Reads the header of the block in `bytes` (whose first event has time `firstTime` and seq `firstSeq`) and checks
    /// the header's checksum, which continues `checksumSeed` (the checksum of the block's name).
    /// - Throws: ``CodecError`` with ``CodecError/Reason/checksumMismatch(stored:computed:)`` at offset 4 when the
    ///   header's checksum does not match; for a truncated or malformed header, a count the bytes cannot hold, or
    ///   ranges that overflow.
    /// - Complexity: O(bytes of the header).
    package init(
        _ bytes: UnsafeRawBufferPointer, firstTime: Int64, firstSeq: UInt64, checksumSeed: CRC32C
    ) throws(CodecError) {
        try self.init(bytes, firstTime: firstTime, firstSeq: firstSeq, checksumSeed: checksumSeed, headOnly: false)
    }

    /// Reads the header from a block's **head**: its bytes up to its first event (``eventsStart``), as the store keeps
    /// them apart from the block so that a read of headers alone touches none of the events' pages. The header's
    /// checksum is checked as for a whole block; the block's own checksum (the head's first four bytes) is not.
    /// - Throws: ``CodecError`` as ``init(_:firstTime:firstSeq:checksumSeed:)``, and
    ///   ``CodecError/Reason/trailingBytes`` when bytes follow the header.
    /// - Complexity: O(bytes of the head).
    package init(head bytes: UnsafeRawBufferPointer, firstTime: Int64, firstSeq: UInt64, checksumSeed: CRC32C)
        throws(CodecError)
    {
        try self.init(bytes, firstTime: firstTime, firstSeq: firstSeq, checksumSeed: checksumSeed, headOnly: true)
        guard eventsStart == bytes.count else {
            throw CodecError(offset: eventsStart, reason: .trailingBytes)
        }
    }

    private init(
        _ bytes: UnsafeRawBufferPointer, firstTime: Int64, firstSeq: UInt64, checksumSeed: CRC32C, headOnly: Bool
    ) throws(CodecError) {
        let headerStart = EventBlockReader.headerStart
        guard let base = bytes.baseAddress, bytes.count > headerStart else {
            throw CodecError(offset: 0, reason: .truncated)
        }
        var r = ByteReader(base: base, position: headerStart, end: bytes.count)
        let count = try r.varint()
        // Each event takes at least three bytes (three one-byte varints and an empty body); a head holds no event to
        // bound the count by, and its checksum vouches for it.
        let limit = headOnly ? Int(UInt32.max) : (bytes.count - headerStart) / 3
        guard count >= 1, count <= UInt64(limit) else {
            throw CodecError(offset: headerStart, reason: .oversizedCount(count: count, limit: limit))
        }
        var at = r.position
        let span = try r.varint()
        guard span <= UInt64(Int64.max), firstTime <= Int64.max - Int64(span) else {
            throw CodecError(
                offset: at, reason: .invalidValue(field: "block time span", value: Int64(bitPattern: span)))
        }
        at = r.position
        let below = try r.varint()
        guard below <= firstSeq else {
            throw CodecError(offset: at, reason: .invalidValue(field: "block min seq", value: Int64(bitPattern: below)))
        }
        let minSeq = firstSeq - below
        at = r.position
        let seqSpan = try r.varint()
        let (maxSeq, o2) = minSeq.addingReportingOverflow(seqSpan)
        guard !o2, maxSeq >= firstSeq else {
            throw CodecError(
                offset: at, reason: .invalidValue(field: "block seq span", value: Int64(bitPattern: seqSpan)))
        }
        kindCounts = try BlockKindCounts.read(&r, count: count)
        do {
            let checksumSize = StoredChecksum.size
            try StoredChecksum.verify(
                UnsafeRawBufferPointer(rebasing: bytes[checksumSize..<r.position]), seed: checksumSeed)
        } catch {
            throw CodecError(offset: StoredChecksum.size, reason: error.reason)
        }
        self.count = Int(count)
        lastTime = firstTime + Int64(span)
        self.minSeq = minSeq
        self.maxSeq = maxSeq
        eventsStart = r.position
    }
}
