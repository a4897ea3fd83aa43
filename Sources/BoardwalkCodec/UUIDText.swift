import BoardwalkModel

/// Parses a canonical UUID string (`8-4-4-4-12` hex digits, all lowercase or all uppercase letters), so an
/// event id can be stored in 16 bytes instead of a string reference.
@inlinable
func parseUUID(_ s: String) -> (hi: UInt64, lo: UInt64, upper: Bool)? {
    guard s.utf8.count == 36 else { return nil }
    if let r = s.utf8.withContiguousStorageIfAvailable({ parseUUID(UnsafeRawBufferPointer($0)) }) { return r }
    var copy = s
    return copy.withUTF8 { parseUUID(UnsafeRawBufferPointer($0)) }
}

@usableFromInline
package func parseUUID(_ b: UnsafeRawBufferPointer) -> (hi: UInt64, lo: UInt64, upper: Bool)? {
    guard b.count == 36, let p = b.baseAddress else { return nil }
    let dash = UInt8(ascii: "-")
    guard p.load(fromByteOffset: 8, as: UInt8.self) == dash, p.load(fromByteOffset: 13, as: UInt8.self) == dash,
        p.load(fromByteOffset: 18, as: UInt8.self) == dash, p.load(fromByteOffset: 23, as: UInt8.self) == dash
    else { return nil }
    // Eight digits at a time (SWAR): the byte-at-a-time loop this replaces was ~700 instructions per id,
    // a third of an encode. Groups of four digits are paired into eight.
    @inline(__always) func u32(_ o: Int) -> UInt64 {
        UInt64(UInt32(littleEndian: p.loadUnaligned(fromByteOffset: o, as: UInt32.self)))
    }
    @inline(__always) func u64(_ o: Int) -> UInt64 {
        UInt64(littleEndian: p.loadUnaligned(fromByteOffset: o, as: UInt64.self))
    }
    var lower: UInt64 = 0
    var upper: UInt64 = 0
    guard let a = hexValue8(u64(0), lower: &lower, upper: &upper),
        let b = hexValue8(u32(9) | u32(14) << 32, lower: &lower, upper: &upper),
        let c = hexValue8(u32(19) | u32(24) << 32, lower: &lower, upper: &upper),
        let d = hexValue8(u64(28), lower: &lower, upper: &upper)
    else { return nil }
    if lower != 0 && upper != 0 { return nil }
    return (a << 32 | b, c << 32 | d, upper != 0)
}

/// The value of eight ASCII hex digits loaded little-endian (the first digit in the low byte, and the most
/// significant in the result), or `nil` if any byte is not `0-9a-fA-F`. ORs the bytes that are lower- and
/// upper-case letters into `lower` and `upper`.
@inlinable @inline(__always)
func hexValue8(_ x: UInt64, lower: inout UInt64, upper: inout UInt64) -> UInt64? {
    let ones: UInt64 = 0x0101_0101_0101_0101
    let high: UInt64 = 0x8080_8080_8080_8080
    guard x & high == 0 else { return nil }
    // With every byte below 0x80, adding 0x80 - c to each byte cannot carry into the next one, and sets
    // a byte's high bit exactly when the byte is >= c.
    @inline(__always) func atLeast(_ c: UInt64) -> UInt64 { (x &+ ones &* (0x80 &- c)) & high }
    let digits = atLeast(0x30) & ~atLeast(0x3A)
    let lowers = atLeast(0x61) & ~atLeast(0x67)
    let uppers = atLeast(0x41) & ~atLeast(0x47)
    guard digits | lowers | uppers == high else { return nil }
    lower |= lowers
    upper |= uppers
    // A digit's value is its low nibble; a letter's (either case) its low nibble + 9.
    var v = (x & 0x0F0F_0F0F_0F0F_0F0F) &+ ((lowers | uppers) >> 7) &* 9
    v = v.byteSwapped  // the first digit into the top byte
    v = (v & 0x000F_000F_000F_000F) | ((v >> 4) & 0x00F0_00F0_00F0_00F0)
    v = (v & 0x0000_00FF_0000_00FF) | ((v >> 8) & 0x0000_FF00_0000_FF00)
    return (v & 0x0000_0000_0000_FFFF) | ((v >> 16) & 0x0000_0000_FFFF_0000)
}

/// Eight ASCII hex digits of `v`, most significant first, as eight bytes to store little-endian.
@inlinable @inline(__always)
func hexDigits8(_ v: UInt32, upper: Bool) -> UInt64 {
    // Spread nibble i of v into byte i.
    var x = UInt64(v)
    x = (x | x << 16) & 0x0000_FFFF_0000_FFFF
    x = (x | x << 8) & 0x00FF_00FF_00FF_00FF
    x = (x | x << 4) & 0x0F0F_0F0F_0F0F_0F0F
    // '0' + n, plus the gap to 'a' (or 'A') for n >= 10: adding 0x76 sets a byte's high bit exactly then.
    let letters = ((x &+ 0x7676_7676_7676_7676) & 0x8080_8080_8080_8080) >> 7
    let ascii = x &+ 0x3030_3030_3030_3030 &+ letters &* (upper ? 0x07 : 0x27)
    return ascii.byteSwapped  // the most significant digit into the first byte
}

/// Formats a UUID as 36 characters, lowercase or uppercase.
@usableFromInline
package func formatUUID(hi: UInt64, lo: UInt64, upper: Bool) -> String {
    String(unsafeUninitializedCapacity: 36) { out in
        let p = UnsafeMutableRawPointer(out.baseAddress!)
        let g1 = hexDigits8(UInt32(truncatingIfNeeded: hi >> 32), upper: upper)
        let g23 = hexDigits8(UInt32(truncatingIfNeeded: hi), upper: upper)
        let g45 = hexDigits8(UInt32(truncatingIfNeeded: lo >> 32), upper: upper)
        let g6 = hexDigits8(UInt32(truncatingIfNeeded: lo), upper: upper)
        let dash = UInt8(ascii: "-")
        p.storeBytes(of: g1.littleEndian, toByteOffset: 0, as: UInt64.self)
        p.storeBytes(of: dash, toByteOffset: 8, as: UInt8.self)
        p.storeBytes(of: UInt32(truncatingIfNeeded: g23).littleEndian, toByteOffset: 9, as: UInt32.self)
        p.storeBytes(of: dash, toByteOffset: 13, as: UInt8.self)
        p.storeBytes(of: UInt32(truncatingIfNeeded: g23 >> 32).littleEndian, toByteOffset: 14, as: UInt32.self)
        p.storeBytes(of: dash, toByteOffset: 18, as: UInt8.self)
        p.storeBytes(of: UInt32(truncatingIfNeeded: g45).littleEndian, toByteOffset: 19, as: UInt32.self)
        p.storeBytes(of: dash, toByteOffset: 23, as: UInt8.self)
        p.storeBytes(of: UInt32(truncatingIfNeeded: g45 >> 32).littleEndian, toByteOffset: 24, as: UInt32.self)
        p.storeBytes(of: g6.littleEndian, toByteOffset: 28, as: UInt64.self)
        return 36
    }
}

/// Whether any 4-bit group of `x` is 0xA...0xF (printed as a letter).
@inlinable @inline(__always)
package func hasHexLetter(_ x: UInt64) -> Bool {
    let ones: UInt64 = 0x1111_1111_1111_1111
    return (x >> 3) & ones & ((x >> 2) | (x >> 1)) != 0
}
