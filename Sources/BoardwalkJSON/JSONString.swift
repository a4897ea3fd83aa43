/// JSON string literals: the one escaper behind every JSON text Boardwalk writes (canonical lines, generated
/// NDJSON, query results, the CLI's reports), so they all agree on what is escaped and how.
///
/// `"` and `\` are escaped, control characters become `\n`, `\r`, `\t`, `\b`, `\f` or `\u00XX`, and everything
/// else is copied as raw UTF-8 (JSON allows it; `/` and U+007F are not escaped).
package enum JSONString {
    /// Appends `s` as a quoted JSON string to UTF-8 bytes.
    ///
    /// - Complexity: O(*n*) in the UTF-8 length of `s`; runs without escapes are copied in one piece.
    package static func append(_ s: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { bytes in
            var runStart = 0
            for i in 0..<bytes.count {
                let c = bytes[i]
                // Every byte of a multi-byte UTF-8 sequence is >= 0x80, so only ASCII needs a look.
                if c >= 0x20 && c != 0x22 && c != 0x5C { continue }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<i]))
                runStart = i + 1
                appendEscape(c, to: &out)
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
        }
        out.append(UInt8(ascii: "\""))
    }

    /// Appends `s` as a quoted JSON string to a `String`.
    package static func append(_ s: String, to out: inout String) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(s.utf8.count + 2)
        append(s, to: &bytes)
        out += String(decoding: bytes, as: UTF8.self)
    }

    /// `s` as a quoted JSON string.
    package static func quoted(_ s: String) -> String {
        var out = ""
        append(s, to: &out)
        return out
    }

    private static func appendEscape(_ c: UInt8, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\\"))
        switch c {
        case 0x22: out.append(0x22)
        case 0x5C: out.append(0x5C)
        case 0x0A: out.append(UInt8(ascii: "n"))
        case 0x0D: out.append(UInt8(ascii: "r"))
        case 0x09: out.append(UInt8(ascii: "t"))
        case 0x08: out.append(UInt8(ascii: "b"))
        case 0x0C: out.append(UInt8(ascii: "f"))
        default:
            let hex: StaticString = "0123456789abcdef"
            hex.withUTF8Buffer { digits in
                out.append(contentsOf: [UInt8(ascii: "u"), 0x30, 0x30, digits[Int(c >> 4)], digits[Int(c & 15)]])
            }
        }
    }
}
