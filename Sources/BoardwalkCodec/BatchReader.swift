import BoardwalkModel

/// Reads a batch file from memory, block by block, verifying every block's CRC32C before decoding it.
///
/// The reader borrows `bytes` (an mmap'd file, an array's storage): it and the ``RecordView``s it returns
/// are valid only while those bytes are. Strings are decoded (UTF-8 validated) into ``strings`` as their
/// blocks arrive; records are parsed in place, and every string reference is checked against the strings
/// read so far. Errors carry the byte offset in the file.
///
/// ```swift
/// try file.withUnsafeBytes { raw in
///     var reader = try BatchReader(bytes: raw)
///     while let view = try reader.next() {
///         let event = try view.event(strings: reader.strings)
///     }
/// }
/// ```
///
/// Allocation is bounded by the input: the string table holds at most one `String` per byte of
/// strings-block payload, and every count is checked against the bytes that remain before it is used.
public struct BatchReader {
    @usableFromInline let bytes: UnsafeRawBufferPointer
    @usableFromInline var _strings: [String] = []
    @usableFromInline var _offset: Int
    @usableFromInline var _isFinished = false

    /// The string table read so far, indexed by ``StringID``.
    @inlinable public var strings: [String] { _strings }
    /// The offset of the next byte to read.
    @inlinable public var offset: Int { _offset }
    /// Whether the end block has been read and verified.
    @inlinable public var isFinished: Bool { _isFinished }
    /// Records left in the current records block.
    @usableFromInline var recordsLeft = 0
    @usableFromInline var blockStart = 0
    @usableFromInline var blockEnd = 0
    @usableFromInline var recordsRead: UInt64 = 0

    /// Starts reading `bytes`, checking the file header.
    /// - Throws: ``CodecError/Reason/badMagic``, ``CodecError/Reason/unsupportedVersion(_:)`` or
    ///   ``CodecError/Reason/reservedBits(field:value:)`` for the header's zero bytes.
    public init(bytes: UnsafeRawBufferPointer) throws(CodecError) {
        self.bytes = bytes
        let magic = BatchFormat.magic
        for i in 0..<magic.count {
            guard i < bytes.count else { throw CodecError(offset: i, reason: .truncated) }
            guard bytes[i] == magic[i] else { throw CodecError(offset: i, reason: .badMagic) }
        }
        guard bytes.count >= BatchFormat.headerSize else { throw CodecError(offset: bytes.count, reason: .truncated) }
        guard bytes[8] == BatchFormat.version else {
            throw CodecError(offset: 8, reason: .unsupportedVersion(Int(bytes[8])))
        }
        for i in 9..<12 where bytes[i] != 0 {
            throw CodecError(offset: i, reason: .reservedBits(field: "file header", value: UInt64(bytes[i])))
        }
        _offset = BatchFormat.headerSize
    }

    /// The next record as a view, or `nil` after the end block (which is verified before `nil` is returned).
    ///
    /// - Throws: ``CodecError`` with the file offset: a block's checksum mismatch, a malformed record, a
    ///   string reference not yet defined, a missing end block, bytes after it, and so on. After an error the
    ///   reader should be abandoned.
    /// - Complexity: O(record length), plus O(block length) for the checksum when a block starts.
    @inlinable @inline(__always)
    public mutating func next() throws(CodecError) -> RecordView? {
        while recordsLeft == 0 {
            if _isFinished { return nil }
            try readBlock()
        }
        let view = try RecordView(record: bytes, at: _offset, stringLimit: StringID(truncatingIfNeeded: _strings.count))
        guard view.offset + view.byteCount <= blockEnd else {
            throw CodecError(
                offset: view.offset, reason: .lengthMismatch(declared: blockEnd - view.offset, used: view.byteCount))
        }
        _offset += view.byteCount
        recordsLeft -= 1
        recordsRead += 1
        if recordsLeft == 0 && _offset != blockEnd {
            // The block's records end before its payload does.
            throw CodecError(
                offset: _offset, reason: .lengthMismatch(declared: blockEnd - blockStart, used: _offset - blockStart))
        }
        return view
    }

    /// The next event, decoded and owned, or `nil` after the end block.
    /// - Throws: as ``next()``.
    public mutating func nextEvent() throws(CodecError) -> Event? {
        guard let view = try next() else { return nil }
        return try view.event(strings: strings)
    }

    /// Reads block headers until a records block with records starts (or the end block is verified).
    @usableFromInline
    mutating func readBlock() throws(CodecError) {
        let start = _offset
        guard start < bytes.count else { throw CodecError(offset: start, reason: .missingEndBlock) }
        guard bytes.count - start >= BatchFormat.blockHeaderSize else {
            throw CodecError(offset: bytes.count, reason: .truncated)
        }
        let base = bytes.baseAddress!
        var r = ByteReader(base: base, position: start, end: bytes.count)
        let type = try r.byte()
        let length = Int(try r.fixed32())
        let count = Int(try r.fixed32())
        let stored = try r.fixed32()
        let payloadStart = r.position
        guard length <= r.remaining else { throw CodecError(offset: bytes.count, reason: .truncated) }
        var crc = CRC32C()
        crc.update(UnsafeRawBufferPointer(start: base + start, count: 9))
        crc.update(UnsafeRawBufferPointer(start: base + payloadStart, count: length))
        guard crc.value == stored else {
            throw CodecError(offset: start, reason: .checksumMismatch(stored: stored, computed: crc.value))
        }
        let end = payloadStart + length
        switch type {
        case BatchFormat.blockStrings:
            // Each string takes at least its one-byte length prefix.
            guard count <= length else {
                throw CodecError(offset: start + 5, reason: .oversizedCount(count: UInt64(count), limit: length))
            }
            guard _strings.count + count < Int(UInt32.max) else {
                throw CodecError(
                    offset: start + 5,
                    reason: .oversizedCount(count: UInt64(count), limit: Int(UInt32.max) - 1 - _strings.count))
            }
            r.end = end
            _strings.reserveCapacity(_strings.count + count)
            for _ in 0..<count {
                let lengthOffset = r.position
                let n = try r.varint()
                guard n <= UInt64(r.remaining) else { throw CodecError(offset: lengthOffset, reason: .truncated) }
                let utf8 = UnsafeRawBufferPointer(start: base + r.position, count: Int(n))
                guard isValidUTF8(utf8) else { throw CodecError(offset: r.position, reason: .invalidUTF8) }
                _strings.append(String(decoding: utf8, as: UTF8.self))
                r.position += Int(n)
            }
            guard r.position == end else {
                throw CodecError(
                    offset: r.position, reason: .lengthMismatch(declared: length, used: r.position - payloadStart))
            }
            _offset = end
        case BatchFormat.blockRecords:
            guard count <= length / BatchFormat.minRecordSize else {
                throw CodecError(
                    offset: start + 5,
                    reason: .oversizedCount(count: UInt64(count), limit: length / BatchFormat.minRecordSize))
            }
            guard count > 0 || length == 0 else {
                throw CodecError(offset: payloadStart, reason: .lengthMismatch(declared: length, used: 0))
            }
            _offset = payloadStart
            blockStart = payloadStart
            blockEnd = end
            recordsLeft = count
        case BatchFormat.blockEnd:
            r.end = end
            guard count == 0 else {
                throw CodecError(offset: start + 5, reason: .countMismatch(declared: UInt64(count), actual: 0))
            }
            let stringsOffset = r.position
            let totalStrings = try r.varint()
            guard totalStrings == UInt64(_strings.count) else {
                throw CodecError(
                    offset: stringsOffset,
                    reason: .countMismatch(declared: totalStrings, actual: UInt64(_strings.count)))
            }
            let recordsOffset = r.position
            let totalRecords = try r.varint()
            guard totalRecords == recordsRead else {
                throw CodecError(
                    offset: recordsOffset, reason: .countMismatch(declared: totalRecords, actual: recordsRead))
            }
            guard r.position == end else {
                throw CodecError(
                    offset: r.position, reason: .lengthMismatch(declared: length, used: r.position - payloadStart))
            }
            guard end == bytes.count else { throw CodecError(offset: end, reason: .trailingBytes) }
            _offset = end
            _isFinished = true
        default:
            throw CodecError(offset: start, reason: .unknownBlockType(type))
        }
    }

    /// Decodes a whole batch file into events.
    /// - Throws: ``CodecError`` with the file offset, as ``next()``.
    /// - Complexity: O(file size).
    public static func events(in file: [UInt8]) throws(CodecError) -> [Event] {
        // A non-throwing closure: typed throws through withUnsafeBytes crashes swiftc 6.3.1 (swift#77880).
        let result: Result<[Event], CodecError> = file.withUnsafeBytes { raw in
            do throws(CodecError) {
                var reader = try BatchReader(bytes: raw)
                var events: [Event] = []
                while let event = try reader.nextEvent() { events.append(event) }
                return .success(events)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}
