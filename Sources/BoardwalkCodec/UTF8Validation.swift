/// Whether `bytes` is well-formed UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF).
///
/// Eight bytes at a time while the text is ASCII, then a scalar-by-scalar check; `String(validating:)`
/// would do the same through an unspecialized generic path that is several times slower on Swift 6.3.
@usableFromInline
func isValidUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
    guard let base = bytes.baseAddress else { return true }
    let n = bytes.count
    var i = 0
    while i < n {
        while i + 8 <= n, base.loadUnaligned(fromByteOffset: i, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
            i += 8
        }
        guard i < n else { break }
        let b0 = base.load(fromByteOffset: i, as: UInt8.self)
        if b0 < 0x80 {
            i += 1
            continue
        }
        @inline(__always) func cont(_ k: Int) -> UInt8? {
            guard i + k < n else { return nil }
            let b = base.load(fromByteOffset: i + k, as: UInt8.self)
            return b & 0xC0 == 0x80 ? b : nil
        }
        switch b0 {
        case 0xC2...0xDF:
            guard cont(1) != nil else { return false }
            i += 2
        case 0xE0...0xEF:
            guard let b1 = cont(1), cont(2) != nil else { return false }
            if b0 == 0xE0 && b1 < 0xA0 { return false }  // overlong
            if b0 == 0xED && b1 >= 0xA0 { return false }  // surrogates
            i += 3
        case 0xF0...0xF4:
            guard let b1 = cont(1), cont(2) != nil, cont(3) != nil else { return false }
            if b0 == 0xF0 && b1 < 0x90 { return false }  // overlong
            if b0 == 0xF4 && b1 >= 0x90 { return false }  // above U+10FFFF
            i += 4
        default:
            return false
        }
    }
    return true
}
