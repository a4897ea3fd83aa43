/// A bounds-checked cursor over untrusted bytes. Every read checks the end first and throws a
/// ``CodecError`` at the current position; nothing here can read outside `base[0..<end]`.
@usableFromInline
package struct ByteReader {
    /// The start of the buffer; positions are offsets from it (so error offsets are buffer offsets).
    @usableFromInline package let base: UnsafeRawPointer
    @usableFromInline package var position: Int
    @usableFromInline package var end: Int

    @inlinable @inline(__always)
    package init(base: UnsafeRawPointer, position: Int, end: Int) {
        self.base = base
        self.position = position
        self.end = end
    }

    @inlinable @inline(__always)
    package var remaining: Int { end &- position }

    @inlinable @inline(__always)
    package func error(_ reason: CodecError.Reason, at offset: Int? = nil) -> CodecError {
        CodecError(offset: offset ?? position, reason: reason)
    }

    @inlinable @inline(__always)
    package mutating func byte() throws(CodecError) -> UInt8 {
        guard position < end else { throw error(.truncated) }
        let b = base.load(fromByteOffset: position, as: UInt8.self)
        position &+= 1
        return b
    }

    @inlinable @inline(__always)
    package mutating func fixed64() throws(CodecError) -> UInt64 {
        guard end &- position >= 8 else { throw error(.truncated) }
        let v = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: position, as: UInt64.self))
        position &+= 8
        return v
    }

    @inlinable @inline(__always)
    package mutating func fixed32() throws(CodecError) -> UInt32 {
        guard end &- position >= 4 else { throw error(.truncated) }
        let v = UInt32(littleEndian: base.loadUnaligned(fromByteOffset: position, as: UInt32.self))
        position &+= 4
        return v
    }

    @inlinable @inline(__always)
    package mutating func skip(_ n: Int) throws(CodecError) {
        guard n >= 0, end &- position >= n else { throw error(.truncated) }
        position &+= n
    }

    /// An unsigned LEB128 varint of up to 64 bits, in its shortest form.
    @inlinable @inline(__always)
    package mutating func varint() throws(CodecError) -> UInt64 {
        guard position < end else { throw error(.truncated) }
        let b0 = base.load(fromByteOffset: position, as: UInt8.self)
        if b0 < 0x80 {
            position &+= 1
            return UInt64(b0)
        }
        // Two and three bytes (seq and time deltas in a block, ids below 2 097 152) without the word
        // arithmetic below: cheaper for these lengths, the most common after one byte.
        if end &- position >= 3 {
            let b1 = base.load(fromByteOffset: position &+ 1, as: UInt8.self)
            if b1 < 0x80 {
                if b1 != 0 {
                    position &+= 2
                    return UInt64(b0 & 0x7F) | UInt64(b1) << 7
                }
            } else {
                let b2 = base.load(fromByteOffset: position &+ 2, as: UInt8.self)
                if b2 < 0x80 && b2 != 0 {
                    position &+= 3
                    return UInt64(b0 & 0x7F) | UInt64(b1 & 0x7F) << 7 | UInt64(b2) << 14
                }
            }
        } else if end &- position == 2 {
            let b1 = base.load(fromByteOffset: position &+ 1, as: UInt8.self)
            if b1 < 0x80 && b1 != 0 {
                position &+= 2
                return UInt64(b0 & 0x7F) | UInt64(b1) << 7
            }
        }
        // With 8 bytes readable, any varint of up to 8 bytes (56 bits: ids, time and seq deltas) is decoded
        // from one load, without a loop or a branch per byte.
        if end &- position >= 8 {
            let w = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: position, as: UInt64.self))
            // The high bit of each byte that ends a varint; the lowest one ends this varint.
            let stops = ~w & 0x8080_8080_8080_8080
            if stops != 0 {
                let bits = stops.trailingZeroBitCount &+ 1  // 8 × the varint's length
                // A last byte of 0 (after the first) is a longer spelling than needed: the slow path says so.
                if (w >> UInt64(bits &- 8)) & 0xFF != 0 {
                    position &+= bits >> 3
                    return compactVarint(w & (stops ^ (stops &- 1)))
                }
            }
        }
        // Passed and returned by value, so that the reader's position can stay in a register in callers.
        let (value, next) = try ByteReader.varintSlow(base, position, end)
        position = next
        return value
    }

    /// Any varint at `position`, checked byte by byte: the value and the position after it.
    @inlinable
    package static func varintSlow(_ base: UnsafeRawPointer, _ position: Int, _ end: Int) throws(CodecError)
        -> (UInt64, Int)
    {
        let start = position
        var result: UInt64 = 0
        var shift: UInt64 = 0
        var i = position
        while true {
            guard i < end else { throw CodecError(offset: i, reason: .truncated) }
            let b = base.load(fromByteOffset: i, as: UInt8.self)
            i += 1
            if shift == 63 && b > 1 { throw CodecError(offset: start, reason: .varintOverflow) }
            result |= UInt64(b & 0x7F) << shift
            if b < 0x80 {
                if b == 0 && i > start + 1 { throw CodecError(offset: start, reason: .nonCanonicalVarint) }
                return (result, i)
            }
            shift += 7
            if shift > 63 { throw CodecError(offset: start, reason: .varintOverflow) }
        }
    }

    /// A string reference: a varint below `limit` (which is at most `UInt32.max`, the reserved id).
    @inlinable @inline(__always)
    package mutating func ref(limit: UInt32) throws(CodecError) -> UInt32 {
        let start = position
        let v = try varint()
        guard v < UInt64(limit) else {
            if v > UInt64(UInt32.max) { throw error(.varintOverflow, at: start) }
            throw error(.stringReferenceOutOfRange(id: UInt32(v), count: Int(limit)), at: start)
        }
        return UInt32(truncatingIfNeeded: v)
    }

    /// ``ref(limit:)`` for a reference that usually takes three bytes (ids from 16 384 to 2 097 151: a session's in
    /// a store of tens of thousands of sessions or more): with four bytes readable, a three-byte varint in its
    /// shortest form is recognized and decoded from one 32-bit load; anything else is read by ``ref(limit:)``.
    /// Same values, positions and errors.
    @inlinable @inline(__always)
    package mutating func refLikelyThreeBytes(limit: UInt32) throws(CodecError) -> UInt32 {
        if end &- position >= 4 {
            let w = UInt32(littleEndian: base.loadUnaligned(fromByteOffset: position, as: UInt32.self))
            // Continuation bits on the first two bytes, none on the third, and a third byte that is not 0.
            if w & 0x80_8080 == 0x8080 && w & 0x7F_0000 != 0 {
                let v = w & 0x7F | (w >> 1) & 0x3F80 | (w >> 2) & 0x1F_C000
                if v < limit {
                    position &+= 3
                    return v
                }
            }
        }
        return try ref(limit: limit)
    }

    /// A zig-zag varint.
    @inlinable @inline(__always)
    package mutating func signed() throws(CodecError) -> Int64 {
        unzigzag(try varint())
    }
}

/// The value of a varint of 1...8 bytes held in the low bytes of `w` (later bytes already cleared): the seven
/// low bits of each byte, packed.
@inlinable @inline(__always)
package func compactVarint(_ w: UInt64) -> UInt64 {
    var v = w & 0x7F7F_7F7F_7F7F_7F7F
    v = (v & 0x007F_007F_007F_007F) | ((v & 0x7F00_7F00_7F00_7F00) >> 1)
    v = (v & 0x0000_3FFF_0000_3FFF) | ((v & 0x3FFF_0000_3FFF_0000) >> 2)
    return (v & 0x0000_0000_0FFF_FFFF) | ((v & 0x0FFF_FFFF_0000_0000) >> 4)
}

/// Reads a varint that a ``ByteReader`` already validated (no bounds checks: use only on checked bytes).
@inlinable @inline(__always)
package func uncheckedVarint(_ base: UnsafeRawPointer, _ position: inout Int) -> UInt64 {
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
