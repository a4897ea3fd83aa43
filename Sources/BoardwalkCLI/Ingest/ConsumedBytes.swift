/// The bytes of a regular file that an NDJSON ingest consumed and that a checkpoint fingerprints: the file's first
/// 4 KiB, and the 4 KiB just before any offset the read buffer has reached.
///
/// A checkpoint must describe the bytes whose lines were stored, not the file as it is when the batch commits: a
/// writer that rewrites the file in place between the read and the commit would otherwise get its new bytes
/// fingerprinted, and the next run would resume past lines it never stored. So nothing here
/// re-reads the file: the first bytes are kept as they are read, and the read buffer's bytes, once dropped from
/// its front, leave their last 4 KiB behind in ``dropped``, for a checkpoint whose window starts before the buffer.
///
/// The read buffer holds the file's bytes from ``bufferStart`` contiguously (bytes of an unfinished line carried to
/// its front, then each read appended); the caller reports each read (``didRead(_:endingAt:)``) and each drop
/// from the buffer's front (``drop(_:)``).
struct ConsumedBytes {
    static let window = FileCheckpoint.fingerprintBytes

    /// The file's first bytes as consumed, up to ``window``.
    private(set) var head: [UInt8]
    /// Up to ``window`` bytes ending at ``bufferStart``: the last ones dropped from the read buffer.
    private var dropped: [UInt8]
    /// The file offset of the read buffer's first byte.
    private(set) var bufferStart: Int

    /// Reading from `offset`, where the bytes before it were consumed (or, resuming, checked against a
    /// checkpoint) as `head` (the file's first `min(offset, 4 KiB)` bytes) and `before` (up to 4 KiB ending at
    /// `offset`).
    init(offset: Int = 0, head: [UInt8] = [], before: [UInt8] = []) {
        bufferStart = offset
        self.head = Array(head.prefix(Self.window))
        dropped = Array(before.suffix(Self.window))
        self.head.reserveCapacity(Self.window)
        dropped.reserveCapacity(Self.window)
    }

    /// Records bytes just read into the buffer, the last of which is at file offset `end - 1`.
    /// - Complexity: O(1) once the first 4 KiB are kept.
    mutating func didRead(_ bytes: UnsafeRawBufferPointer, endingAt end: Int) {
        let start = end - bytes.count
        // Reads are contiguous from the start of the file or from a resumed offset whose first bytes were given to
        // init, so `head` always ends where this read starts while it is short.
        guard head.count < Self.window, start == head.count else { return }
        head.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes.prefix(Self.window - head.count)))
    }

    /// Records that the buffer's first `bytes` leave it (`bufferStart` moves past them).
    /// - Complexity: O(min(bytes.count, 4 KiB)).
    mutating func drop(_ bytes: UnsafeRawBufferPointer) {
        bufferStart += bytes.count
        if bytes.count >= Self.window {
            dropped.removeAll(keepingCapacity: true)
            dropped.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes.suffix(Self.window)))
        } else {
            let excess = dropped.count + bytes.count - Self.window
            if excess > 0 { dropped.removeFirst(excess) }
            dropped.append(contentsOf: bytes)
        }
    }

    /// The checkpoint after `line` lines ending at `offset`, fingerprinted from the consumed bytes.
    /// - Parameter buffer: the read buffer's bytes from its start up to at least `offset`.
    /// - Complexity: O(4 KiB).
    func checkpoint(offset: Int, line: Int, buffer: UnsafeRawBufferPointer) -> FileCheckpoint {
        let inBuffer = offset - bufferStart
        // Programmer error, not bad input: the caller only commits offsets it has read up to.
        precondition(
            inBuffer >= 0 && inBuffer <= buffer.count && head.count >= min(offset, Self.window)
                && bufferStart - max(0, offset - Self.window) <= dropped.count)
        let first = FileCheckpoint.fingerprint(head.prefix(min(offset, Self.window)))
        let windowStart = max(0, offset - Self.window)
        var tail = FileCheckpoint.fingerprintBasis
        if windowStart < bufferStart {
            tail = FileCheckpoint.fingerprint(dropped.suffix(bufferStart - windowStart), continuing: tail)
        }
        let fromBuffer = max(0, windowStart - bufferStart)..<inBuffer
        tail = FileCheckpoint.fingerprint(UnsafeRawBufferPointer(rebasing: buffer[fromBuffer]), continuing: tail)
        return FileCheckpoint(offset: offset, line: line, fingerprint: first, tail: tail)
    }
}
