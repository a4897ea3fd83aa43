/// A bounds-checked cursor over untrusted bytes. Every read checks the end first and throws a
/// ``CodecError`` at the current position; nothing here can read outside `base[0..<end]`.
@usableFromInline
struct ByteReader {
    /// The start of the buffer; positions are offsets from it (so error offsets are buffer offsets).
    @usableFromInline let base: UnsafeRawPointer
    @usableFromInline var position: Int
    @usableFromInline var end: Int

    @inlinable @inline(__always)
    init(base: UnsafeRawPointer, position: Int, end: Int) {
        self.base = base
        self.position = position
        self.end = end
    }

    @inlinable @inline(__always)
    var remaining: Int { end - position }

    @inlinable @inline(__always)
    func error(_ reason: CodecError.Reason, at offset: Int? = nil) -> CodecError {
        CodecError(offset: offset ?? position, reason: reason)
    }

    @inlinable @inline(__always)
    mutating func byte() throws(CodecError) -> UInt8 {
        guard position < end else { throw error(.truncated) }
        let b = base.load(fromByteOffset: position, as: UInt8.self)
        position += 1
        return b
    }

    @inlinable @inline(__always)
    mutating func fixed64() throws(CodecError) -> UInt64 {
        guard end - position >= 8 else { throw error(.truncated) }
        let v = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: position, as: UInt64.self))
        position += 8
        return v
    }

    @inlinable @inline(__always)
    mutating func fixed32() throws(CodecError) -> UInt32 {
        guard end - position >= 4 else { throw error(.truncated) }
        let v = UInt32(littleEndian: base.loadUnaligned(fromByteOffset: position, as: UInt32.self))
        position += 4
        return v
    }

    @inlinable @inline(__always)
    mutating func skip(_ n: Int) throws(CodecError) {
        guard n >= 0, end - position >= n else { throw error(.truncated) }
        position += n
    }

    /// An unsigned LEB128 varint of up to 64 bits, in its shortest form.
    @inlinable @inline(__always)
    mutating func varint() throws(CodecError) -> UInt64 {
        guard position < end else { throw error(.truncated) }
        let b0 = base.load(fromByteOffset: position, as: UInt8.self)
        if b0 < 0x80 {
            position += 1
            return UInt64(b0)
        }
        // Two bytes (ids 128...16 383) are common enough to deserve their own path.
        if end - position >= 2 {
            let b1 = base.load(fromByteOffset: position + 1, as: UInt8.self)
            if b1 < 0x80 && b1 != 0 {
                position += 2
                return UInt64(b0 & 0x7F) | UInt64(b1) << 7
            }
        }
        return try varintSlow()
    }

    @inlinable
    mutating func varintSlow() throws(CodecError) -> UInt64 {
        if end - position >= 10 {
            // Enough bytes for any varint: no bounds check per byte.
            let start = position
            var result: UInt64 = 0
            var shift: UInt64 = 0
            var i = position
            while true {
                let b = base.load(fromByteOffset: i, as: UInt8.self)
                i += 1
                if shift == 63 && b > 1 { throw error(.varintOverflow, at: start) }
                result |= UInt64(b & 0x7F) << shift
                if b < 0x80 {
                    if b == 0 { throw error(.nonCanonicalVarint, at: start) }
                    position = i
                    return result
                }
                shift += 7
                if shift > 63 { throw error(.varintOverflow, at: start) }
            }
        }
        let start = position
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard position < end else { throw error(.truncated) }
            let b = base.load(fromByteOffset: position, as: UInt8.self)
            position += 1
            if shift == 63 && b > 1 { throw error(.varintOverflow, at: start) }
            result |= UInt64(b & 0x7F) << shift
            if b < 0x80 {
                if b == 0 { throw error(.nonCanonicalVarint, at: start) }
                return result
            }
            shift += 7
            if shift > 63 { throw error(.varintOverflow, at: start) }
        }
    }

    /// A string reference: a varint below `limit` (which is at most `UInt32.max`, the reserved id).
    @inlinable @inline(__always)
    mutating func ref(limit: UInt32) throws(CodecError) -> UInt32 {
        let start = position
        let v = try varint()
        guard v < UInt64(limit) else {
            if v > UInt64(UInt32.max) { throw error(.varintOverflow, at: start) }
            throw error(.stringReferenceOutOfRange(id: UInt32(v), count: Int(limit)), at: start)
        }
        return UInt32(truncatingIfNeeded: v)
    }

    /// A zig-zag varint.
    @inlinable @inline(__always)
    mutating func signed() throws(CodecError) -> Int64 {
        unzigzag(try varint())
    }
}

/// Reads a varint that a ``ByteReader`` already validated (no bounds checks: use only on checked bytes).
@inlinable @inline(__always)
func uncheckedVarint(_ base: UnsafeRawPointer, _ position: inout Int) -> UInt64 {
    var result: UInt64 = 0
    var shift: UInt64 = 0
    while true {
        let b = base.load(fromByteOffset: position, as: UInt8.self)
        position += 1
        result |= UInt64(b & 0x7F) << shift
        if b < 0x80 { return result }
        shift += 7
    }
}
