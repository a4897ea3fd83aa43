/// An unchecked cursor for writing into memory whose capacity the caller has already ensured.
@usableFromInline
package struct ByteWriter {
    @usableFromInline package let base: UnsafeMutableRawPointer
    @usableFromInline package var position: Int

    @inlinable @inline(__always)
    package init(base: UnsafeMutableRawPointer, position: Int) {
        self.base = base
        self.position = position
    }

    @inlinable @inline(__always)
    package mutating func byte(_ b: UInt8) {
        base.storeBytes(of: b, toByteOffset: position, as: UInt8.self)
        position += 1
    }

    @inlinable @inline(__always)
    package mutating func fixed64(_ v: UInt64) {
        base.storeBytes(of: v.littleEndian, toByteOffset: position, as: UInt64.self)
        position += 8
    }

    @inlinable @inline(__always)
    package mutating func fixed32(_ v: UInt32) {
        base.storeBytes(of: v.littleEndian, toByteOffset: position, as: UInt32.self)
        position += 4
    }

    @inlinable @inline(__always)
    package mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            base.storeBytes(of: UInt8(truncatingIfNeeded: v) | 0x80, toByteOffset: position, as: UInt8.self)
            position += 1
            v &>>= 7
        }
        base.storeBytes(of: UInt8(truncatingIfNeeded: v), toByteOffset: position, as: UInt8.self)
        position += 1
    }

    @inlinable @inline(__always)
    package mutating func varint32(_ value: UInt32) {
        if value < 0x80 {
            base.storeBytes(of: UInt8(truncatingIfNeeded: value), toByteOffset: position, as: UInt8.self)
            position += 1
        } else {
            varint(UInt64(value))
        }
    }

    @inlinable @inline(__always)
    package mutating func signed(_ value: Int64) { varint(zigzag(value)) }

    @inlinable @inline(__always)
    package mutating func bytes(_ source: UnsafeRawBufferPointer) {
        guard let src = source.baseAddress, source.count > 0 else { return }
        (base + position).copyMemory(from: src, byteCount: source.count)
        position += source.count
    }
}
