import BoardwalkCodec

/// Sessions of one onboarding, each with a time, packed into one value: what the store's `onboarding_sessions`
/// database holds (store format 6; `docs/codec.md`, "Session pair chunks").
///
/// A chunk lists sessions in increasing id order, each with the time bits the store keeps for it (the time of
/// its first event stored in the onboarding). The first session's id is not in the value: the store's key
/// carries it, so a chunk is read with ``SessionPairChunkReader/init(_:firstSession:)``. Later sessions are
/// deltas from the one before (at least 1), times are zigzag deltas from the time before.
///
/// ```swift
/// var builder = SessionPairChunkBuilder()
/// builder.reset(firstSession: 40, time: t0)
/// builder.append(session: 42, time: t1)
/// builder.withValue { value in store(key: (onboarding, 40), value) }
/// ```
///
/// The builder's buffer is a reference that copies share (as ``EventBlockBuilder``'s): keep one builder per
/// writer and reuse it with ``reset(firstSession:time:)``.
@usableFromInline
package struct SessionPairChunkBuilder {
    // Inlinable: the store appends ~100 000 entries a second through these (a call and a retain of the storage
    // per entry otherwise cost more than the encoding).
    /// Room for the count's varint in front of the entries (a count below 2^35).
    @usableFromInline static let countRoom = 5
    @usableFromInline var storage: BlockStorage
    /// Where the next entry goes (the first entry's time starts at ``countRoom``).
    @usableFromInline var end = countRoom
    @usableFromInline var _count = 0
    @usableFromInline var _firstSession: UInt32 = 0
    @usableFromInline var _lastSession: UInt32 = 0
    @usableFromInline var lastTime: UInt64 = 0

    /// Entries since the last ``reset(firstSession:time:)``; 0 before the first.
    @inlinable package var count: Int { _count }
    /// The first entry's session: the id the store's key carries.
    @inlinable package var firstSession: UInt32 { _firstSession }
    /// The last entry's session, which the next entry's delta starts from.
    @inlinable package var lastSession: UInt32 { _lastSession }

    /// A builder with room for `capacity` bytes before it grows (it keeps what it grew to across resets).
    package init(capacity: Int = 1024) {
        storage = BlockStorage(capacity: max(capacity, 64))
    }

    /// The size of the value ``withValue(_:)`` would hand out (0 before the first entry).
    @inlinable package var byteCount: Int { _count == 0 ? 0 : end - Self.countRoom + varintSize(UInt64(count)) }

    /// The size of the value after appending `session` with `time` (which must follow ``lastSession``): the
    /// entry's two deltas, and the byte the count's varint gains when it grows (at 128 entries, 16 384, …).
    @inlinable
    package func byteCount(appending session: UInt32, time: UInt64) -> Int {
        end - Self.countRoom + varintSize(UInt64(_count + 1))
            + varintSize(UInt64(session &- _lastSession)) + varintSize(zigzag(Int64(bitPattern: time &- lastTime)))
    }

    /// Starts a new chunk whose first entry is `firstSession` with `time`.
    @inlinable
    package mutating func reset(firstSession: UInt32, time: UInt64) {
        var w = ByteWriter(base: storage.pointer, position: Self.countRoom)
        w.fixed64(time)
        end = w.position
        _count = 1
        _firstSession = firstSession
        _lastSession = firstSession
        lastTime = time
    }

    /// Appends `session` with `time`.
    /// - Precondition: a chunk was started and `session` is larger than ``lastSession``.
    /// - Complexity: O(1); no allocation unless the chunk outgrows the builder's storage.
    @inlinable
    package mutating func append(session: UInt32, time: UInt64) {
        precondition(_count > 0 && session > _lastSession, "sessions of a chunk must increase")
        let needed = end + 20
        if needed > storage.capacity { storage = storage.grown(to: needed) }
        var w = ByteWriter(base: storage.pointer, position: end)
        w.varint32(session - _lastSession)
        w.signed(Int64(bitPattern: time &- lastTime))
        end = w.position
        _count += 1
        _lastSession = session
        lastTime = time
    }

    /// Calls `body` with the chunk's bytes: the count, the first entry's time, then the later entries.
    /// - Precondition: a chunk was started.
    @inlinable
    package func withValue<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        precondition(_count > 0, "an empty chunk has no value")
        let start = Self.countRoom - varintSize(UInt64(_count))
        var w = ByteWriter(base: storage.pointer, position: start)
        w.varint(UInt64(_count))
        return try body(UnsafeRawBufferPointer(start: storage.pointer + start, count: end - start))
    }
}

/// Reads a chunk of (session, time) entries from untrusted bytes, one entry at a time.
///
/// The count is checked at ``init(_:firstSession:)`` against what the bytes can hold; each ``next()`` checks
/// one entry (a session delta of at least 1 that stays within 32 bits, a time delta); after the last entry the
/// value must end exactly. Any violation throws a ``CodecError`` whose offset is from the value's start.
/// Nothing here traps.
package struct SessionPairChunkReader {
    private var reader: ByteReader
    /// Entries in the chunk.
    package let count: Int
    /// Entries read so far.
    package private(set) var index = 0
    private var session: UInt32
    private var time: UInt64

    /// Reads the count and the first entry's time of the chunk in `bytes`; `firstSession` is the first entry's
    /// session (the store's key).
    /// - Throws: ``CodecError`` for an empty or truncated value, a count of 0, or a count the bytes cannot hold
    ///   (each entry after the first takes at least two bytes).
    package init(_ bytes: UnsafeRawBufferPointer, firstSession: UInt32) throws(CodecError) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { throw CodecError(offset: 0, reason: .truncated) }
        var r = ByteReader(base: base, position: 0, end: bytes.count)
        let count = try r.varint()
        guard count >= 1 else {
            throw CodecError(offset: 0, reason: .invalidValue(field: "session chunk count", value: 0))
        }
        time = try r.fixed64()
        guard count - 1 <= UInt64(r.remaining / 2) else {
            throw CodecError(offset: 0, reason: .oversizedCount(count: count, limit: 1 + r.remaining / 2))
        }
        reader = r
        self.count = Int(count)
        session = firstSession
    }

    /// The next entry; `nil` after the last one (when the value has been checked to end there).
    package mutating func next() throws(CodecError) -> (session: UInt32, time: UInt64)? {
        guard index < count else {
            guard reader.position == reader.end else {
                throw CodecError(offset: reader.position, reason: .trailingBytes)
            }
            return nil
        }
        if index > 0 {
            let at = reader.position
            let delta = try reader.varint()
            guard delta >= 1, delta <= UInt64(UInt32.max - session) else {
                throw CodecError(
                    offset: at, reason: .invalidValue(field: "session delta", value: Int64(bitPattern: delta)))
            }
            session += UInt32(delta)
            time = time &+ UInt64(bitPattern: try reader.signed())
        }
        index += 1
        return (session, time)
    }
}
