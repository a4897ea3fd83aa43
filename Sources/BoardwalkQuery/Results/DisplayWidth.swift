// Terminal width of text, shared by the query's tables and diagnostics and the command line's own tables.

/// How many terminal columns `s` takes: East Asian wide characters count two, combining marks none.
public func displayWidth(_ s: String) -> Int {
    var width = 0
    for scalar in s.unicodeScalars {
        let v = scalar.value
        switch v {
        case 0x0300...0x036F, 0x200B...0x200F, 0xFE00...0xFE0F: continue
        case 0x1100...0x115F, 0x2E80...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60,
            0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x3FFFD:
            width += 2
        default: width += 1
        }
    }
    return width
}
