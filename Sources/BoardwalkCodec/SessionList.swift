import BoardwalkModel

// Session lists: the events of one session from one batch, as references to where each event is stored
// (onboarding, screen, time, seq), sorted by (time, seq). `docs/codec.md` ("Session lists") has the bytes:
//
//     count varint
//     count × [onboarding code varint][screen varint][time delta varint][zigzag seq delta varint]
//
// The onboarding code is 0 for "same onboarding as the event before" and id + 1 otherwise (the first
// event's is never 0). Time and seq of the first event come from outside (the store key); deltas are from
// the event before (the first event's are 0).

/// Writes one session list at a time into a reusable buffer. Copies share the buffer.
public struct SessionListBuilder {
    @usableFromInline var storage: BlockStorage
    @usableFromInline var used: Int
    /// Entries in the current list.
    @usableFromInline var _count: Int
    @inlinable public var count: Int { _count }
    /// Time and seq of the first entry (what the list's key carries).
    @usableFromInline var _firstTime: Int64
    @inlinable public var firstTime: Int64 { _firstTime }
    @usableFromInline var _firstSeq: UInt64
    @inlinable public var firstSeq: UInt64 { _firstSeq }
    @usableFromInline var lastTime: Int64
    @usableFromInline var lastSeq: UInt64
    @usableFromInline var lastOnboarding: UInt32

    @usableFromInline static var headerRoom: Int { 10 }

    /// An empty builder.
    public init(capacity: Int = 4096) {
        storage = BlockStorage(capacity: Swift.max(capacity, 256))
        used = 0
        _count = 0
        _firstTime = 0
        _firstSeq = 0
        lastTime = 0
        lastSeq = 0
        lastOnboarding = 0
    }

    /// Starts a new, empty list whose first entry will have `time` and `seq`.
    @inlinable
    public mutating func start(time: Int64, seq: UInt64) {
        used = SessionListBuilder.headerRoom
        _count = 0
        _firstTime = time
        _firstSeq = seq
        lastTime = time
        lastSeq = seq
    }

    /// Starts from an existing list, so that more entries can be appended to it (the store grows a
    /// session's newest list over several batches). The list is read and checked before anything is
    /// copied; on a throw the builder holds an empty list started at (`firstTime`, `firstSeq`).
    /// - Throws: ``CodecError`` when `bytes` is not a well-formed list.
    /// - Complexity: O(entries of the list) and one copy of its bytes.
    public mutating func resume(_ bytes: UnsafeRawBufferPointer, firstTime: Int64, firstSeq: UInt64) throws(CodecError) {
        start(time: firstTime, seq: firstSeq)
        var reader = try SessionListReader(bytes, firstTime: firstTime, firstSeq: firstSeq)
        let entriesStart = reader.reader.position
        while try reader.next() {}
        storage = storage.copying(UnsafeRawBufferPointer(rebasing: bytes[entriesStart...]), to: used)
        used += bytes.count - entriesStart
        _count = reader.count
        lastTime = reader.time
        lastSeq = reader.seq
        lastOnboarding = reader.onboarding
    }

    /// Whether an entry with `time` and `seq` may be appended now (it sorts after the last entry).
    @inlinable
    public func canAppend(time: Int64, seq: UInt64) -> Bool {
        count == 0 || time > lastTime || (time == lastTime && seq > lastSeq)
    }

    /// The bytes the list takes if ``withList(_:)`` is called now.
    @inlinable
    public var byteCount: Int { used - SessionListBuilder.headerRoom + varintSize(UInt64(count)) }

    /// Appends an entry, in strictly increasing (time, seq) order starting with the one given to
    /// ``start(time:seq:)``.
    @inlinable
    public mutating func append(onboarding: UInt32, screen: UInt16, time: Int64, seq: UInt64) {
        precondition(count == 0 ? (time == firstTime && seq == firstSeq)
                     : (time > lastTime || (time == lastTime && seq > lastSeq)), "entries out of (time, seq) order")
        if _slowPath(used + 40 > storage.capacity) { storage = storage.grown(to: used + 40) }
        var w = ByteWriter(base: storage.pointer, position: used)
        w.varint(count > 0 && onboarding == lastOnboarding ? 0 : UInt64(onboarding) + 1)
        w.varint(UInt64(screen))
        w.varint(UInt64(bitPattern: time &- lastTime))
        w.varint(zigzag(Int64(bitPattern: seq &- lastSeq)))
        used = w.position
        _count += 1
        lastTime = time
        lastSeq = seq
        lastOnboarding = onboarding
    }

    /// Calls `body` with the finished list; the bytes are valid only inside `body`.
    @inlinable
    public func withList<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let start = SessionListBuilder.headerRoom - varintSize(UInt64(count))
        var w = ByteWriter(base: storage.pointer, position: start)
        w.varint(UInt64(count))
        return try withExtendedLifetime(storage) {
            try body(UnsafeRawBufferPointer(start: storage.pointer + start, count: used - start))
        }
    }
}

/// Reads a session list from untrusted bytes, one entry at a time. Every entry is checked (lengths,
/// strictly increasing (time, seq), no overflow, screen within 16 bits); the list must end exactly after
/// its last entry. Errors carry the offset from the list's start.
public struct SessionListReader {
    @usableFromInline var reader: ByteReader
    /// Entries in the list.
    public let count: Int
    /// Entries read so far.
    @usableFromInline var _index: Int = 0
    @inlinable public var index: Int { _index }
    /// The current entry (after ``next()`` returned `true`).
    @usableFromInline var _onboarding: UInt32 = 0
    @inlinable public var onboarding: UInt32 { _onboarding }
    @usableFromInline var _screen: UInt16 = 0
    @inlinable public var screen: UInt16 { _screen }
    @usableFromInline var _time: Int64
    @inlinable public var time: Int64 { _time }
    @usableFromInline var _seq: UInt64
    @inlinable public var seq: UInt64 { _seq }

    /// Reads the header of the list in `bytes`, whose first entry has time `firstTime` and seq `firstSeq`.
    public init(_ bytes: UnsafeRawBufferPointer, firstTime: Int64, firstSeq: UInt64) throws(CodecError) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { throw CodecError(offset: 0, reason: .truncated) }
        var r = ByteReader(base: base, position: 0, end: bytes.count)
        let count = try r.varint()
        guard count >= 1, count <= UInt64(bytes.count / 4) else {
            throw CodecError(offset: 0, reason: .oversizedCount(count: count, limit: bytes.count / 4))
        }
        reader = r
        self.count = Int(count)
        _time = firstTime
        _seq = firstSeq
    }

    /// Moves to the next entry; `false` after the last one.
    @inlinable
    public mutating func next() throws(CodecError) -> Bool {
        if index == count {
            guard reader.position == reader.end else {
                throw CodecError(offset: reader.position, reason: .lengthMismatch(declared: reader.position, used: reader.end))
            }
            return false
        }
        let at = reader.position
        let code = try reader.varint()
        let screen = try reader.varint()
        let dt = try reader.varint()
        let ds = unzigzag(try reader.varint())
        guard code <= UInt64(UInt32.max) + 1, code != 0 || index > 0 else {
            throw CodecError(offset: at, reason: .invalidValue(field: "session list onboarding", value: Int64(bitPattern: code)))
        }
        guard screen <= UInt64(UInt16.max) else {
            throw CodecError(offset: at, reason: .invalidValue(field: "session list screen", value: Int64(bitPattern: screen)))
        }
        let newSeq = seq &+ UInt64(bitPattern: ds)
        if index == 0 {
            guard dt == 0, ds == 0 else { throw CodecError(offset: at, reason: .invalidValue(field: "first entry delta", value: ds)) }
        } else {
            guard dt <= UInt64(bitPattern: Int64.max &- time), (ds < 0) == (newSeq < seq), dt > 0 || newSeq > seq else {
                throw CodecError(offset: at, reason: .invalidValue(field: "session list order", value: Int64(bitPattern: dt)))
            }
        }
        if code != 0 { _onboarding = UInt32(truncatingIfNeeded: code - 1) }
        self._screen = UInt16(truncatingIfNeeded: screen)
        _time &+= Int64(bitPattern: dt)
        _seq = newSeq
        _index += 1
        return true
    }
}
