import BoardwalkModel
internal import CSimdjson

extension LineView {
    /// The error for a line the C++ walker rejected.
    func parseError(bytes: UnsafeRawBufferPointer) -> JSONReadError {
        let offset = status.error_offset
        var column: Int? = offset >= 0 ? Int(offset) + 1 + shift : nil
        func make(_ code: JSONReadError.Code, _ reason: String, path: String? = nil) -> JSONReadError {
            JSONReadError(code: code, line: line, column: column, path: path, reason: reason)
        }
        // A UTF-16 or UTF-32 file reads as bytes with zeros beside every ASCII character; simdjson then names whichever
        // byte it stopped at ("a control character in a string"). Say what the file is instead.
        if let encoding = wideTextEncoding(bytes) {
            column = nil
            let family = encoding.hasPrefix("UTF-32") ? "UTF-32" : "UTF-16"
            return make(
                .syntax,
                "the line looks like \(family) (zero bytes beside each character); ingest reads UTF-8: "
                    + "convert the file first (iconv -f \(encoding) -t UTF-8)")
        }
        switch Int(status.error) {
        case Int(BW_E_NOT_OBJECT.rawValue):
            let found: String
            switch UInt8(status.root_type) {
            case tArray: found = "an array"
            case tString: found = "a string"
            case tInt: found = "a number"
            case tTrue: found = "a boolean"
            default: found = "null"
            }
            column = 1 + shift + leadingSpaces(bytes)
            // simdjson names the root's type from its first byte: `notjson` starts like null, `trash` like true.
            if found == "a boolean" || found == "null", !isLiteral(bytes) { return make(.syntax, "invalid JSON") }
            return make(.shape, "expected a JSON object, found \(found)")
        case Int(BW_E_DUPLICATE.rawValue):
            let level = Int(status.error_slot) / Int(BW_SLOTS_PER_LEVEL)
            let id = Int(status.error_slot) % Int(BW_SLOTS_PER_LEVEL)
            let keys = slotKeys[id]
            let first = keys[min(Int(slot(level, id).alias), keys.count - 1)]
            let second = keys[min(Int(status.error_alias), keys.count - 1)]
            let p = levelPrefix(level) + parentPath(id) + second
            return make(
                .duplicate, first == second ? "duplicate key" : "duplicate key (also given as \(first))", path: p)
        case Int(BW_E_CHOICE_DUPLICATE.rawValue):
            let name = ["id", "value", "label"][min(Int(status.error_alias), 2)]
            return make(.duplicate, "duplicate key \"\(name)\" in a multi-select element")
        case Int(BW_E_STRING_TOO_LONG.rawValue):
            // The walker stops at the string; a scan up to it says which key holds it (or that it is a key).
            if offset >= 0, let (path, isKey) = stringPlace(Int(offset), in: bytes) {
                return make(
                    .limit, "\(isKey ? "a key" : "a string") is longer than \(limits.maxStringBytes) bytes", path: path)
            }
            return make(.limit, "a string is longer than \(limits.maxStringBytes) bytes")
        case Int(BW_E_TOO_MANY_CHOICES.rawValue):
            return make(.limit, "more than \(limits.maxChoices) multi-select elements")
        case Int(BW_E_TRAILING.rawValue):
            return make(.syntax, "unexpected content after the object")
        case Int(BW_E_BAD_ESCAPE.rawValue):
            return make(.syntax, "a \\u escape makes a lone surrogate")
        default:
            break
        }
        // simdjson's own errors.
        let code = Int(status.simdjson_error)
        switch code {
        case 4:  // DEPTH_ERROR
            return make(.limit, "nested deeper than \(limits.maxDepth) levels")
        case 5:  // STRING_ERROR
            return make(.syntax, "invalid string: a bad escape or a lone surrogate")
        case 6: return make(.syntax, "invalid literal; expected true")
        case 7: return make(.syntax, "invalid literal; expected false")
        case 8: return make(.syntax, "invalid literal; expected null")
        case 9, 17:  // NUMBER_ERROR, NUMBER_OUT_OF_RANGE
            return make(.syntax, "invalid or out-of-range number")
        case 10:  // UTF8_ERROR
            if let at = firstInvalidUTF8(bytes) { column = at + 1 + shift }
            return make(.syntax, "invalid UTF-8")
        case 13:  // UNESCAPED_CHARS
            if let at = firstControlByte(bytes) { column = at + 1 + shift }
            return make(.syntax, "a control character in a string must be escaped")
        case 14:  // UNCLOSED_STRING
            return make(.syntax, "unclosed string")
        case 27:  // INCOMPLETE_ARRAY_OR_OBJECT
            // simdjson says the same of `{…} x` and `{…},`: a first value that closes, then more. Say which.
            if let end = endOfFirstValue(bytes), let extra = bytes[end...].firstIndex(where: { !isBlank($0) }) {
                column = extra + 1 + shift
                return make(.syntax, "unexpected content after the object")
            }
            column = bytes.count + shift
            return make(.syntax, "an object or array is not closed before the line ends")
        case 3, 16, 12:  // TAPE_ERROR, INCORRECT_TYPE, EMPTY
            return make(.syntax, "invalid JSON")
        default:
            return make(.syntax, "invalid JSON (" + String(cString: bw_simdjson_error_message(Int32(code))) + ")")
        }
    }
}

/// The offset just past the object or array the line starts with (after leading blanks), when its brackets
/// close before the line ends; strings (with their escapes) are skipped. `nil` when the line does not start
/// with `{` or `[`, or when they do not close.
func endOfFirstValue(_ b: UnsafeRawBufferPointer) -> Int? {
    var i = leadingSpaces(b)
    guard i < b.count, b[i] == UInt8(ascii: "{") || b[i] == UInt8(ascii: "[") else { return nil }
    var depth = 0
    while i < b.count {
        switch b[i] {
        case UInt8(ascii: "\""):
            i += 1
            while i < b.count, b[i] != UInt8(ascii: "\"") { i += b[i] == UInt8(ascii: "\\") ? 2 : 1 }
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            depth += 1
        case UInt8(ascii: "}"), UInt8(ascii: "]"):
            depth -= 1
            if depth == 0 { return i + 1 }
        default:
            break
        }
        i += 1
    }
    return nil
}

/// Where the string starting at `offset` (its opening quote) sits in the line: the path of keys to it (`meta.x`,
/// `params.items[2]`; for a key, the path of the object holding it, `nil` at the top level) and whether it is a key.
/// A forward scan of the tokens up to `offset` (strings skipped with their escapes); `nil` when no string starts
/// there. Only for an error message: the line was already rejected.
func stringPlace(_ offset: Int, in b: UnsafeRawBufferPointer) -> (path: String?, isKey: Bool)? {
    // Per open container: an object's current key (nil before its first), or an array's index.
    enum Level { case object(key: String?, expectingKey: Bool), array(index: Int) }
    var levels: [Level] = []
    func path(_ levels: ArraySlice<Level>) -> String? {
        var out = ""
        for level in levels {
            switch level {
            case .object(let key, _): if let key { out += out.isEmpty ? key : "." + key }
            case .array(let index): out += "[\(index)]"
            }
        }
        return out.isEmpty ? nil : out
    }
    var i = 0
    while i < b.count {
        switch b[i] {
        case UInt8(ascii: "\""):
            let start = i
            i += 1
            while i < b.count, b[i] != UInt8(ascii: "\"") { i += b[i] == UInt8(ascii: "\\") ? 2 : 1 }
            var isKey = false
            if case .object(_, let expectingKey)? = levels.last { isKey = expectingKey }
            if start == offset { return (isKey ? path(levels.dropLast()) : path(levels[...]), isKey) }
            if isKey, case .object? = levels.last, i <= b.count {
                let key = String(
                    decoding: UnsafeRawBufferPointer(rebasing: b[(start + 1)..<min(i, b.count)]), as: UTF8.self)
                levels[levels.count - 1] = .object(key: key, expectingKey: false)
            }
        case UInt8(ascii: "{"): levels.append(.object(key: nil, expectingKey: true))
        case UInt8(ascii: "["): levels.append(.array(index: 0))
        case UInt8(ascii: "}"), UInt8(ascii: "]"): if !levels.isEmpty { levels.removeLast() }
        case UInt8(ascii: ","):
            switch levels.last {
            case .object(let key, _)?: levels[levels.count - 1] = .object(key: key, expectingKey: true)
            case .array(let index)?: levels[levels.count - 1] = .array(index: index + 1)
            case nil: break
            }
        default: break
        }
        if i > offset { return nil }
        i += 1
    }
    return nil
}

/// A blank between JSON tokens (and the `\r` of a CRLF line end).
func isBlank(_ c: UInt8) -> Bool { c == 0x20 || c == 0x09 || c == 0x0D || c == 0x0A }

/// Whether the line is `true`, `false` or `null` between blanks.
func isLiteral(_ b: UnsafeRawBufferPointer) -> Bool {
    var lo = 0, hi = b.count
    while lo < hi, b[lo] == 0x20 || b[lo] == 0x09 { lo += 1 }
    while hi > lo, b[hi - 1] == 0x20 || b[hi - 1] == 0x09 || b[hi - 1] == 0x0D { hi -= 1 }
    let text = Array(UnsafeRawBufferPointer(rebasing: b[lo..<hi]))
    return text == Array("true".utf8) || text == Array("false".utf8) || text == Array("null".utf8)
}

func leadingSpaces(_ b: UnsafeRawBufferPointer) -> Int {
    var i = 0
    while i < b.count, b[i] == 0x20 || b[i] == 0x09 { i += 1 }
    return i
}

/// The offset of the first byte that starts an invalid UTF-8 sequence.
func firstInvalidUTF8(_ b: UnsafeRawBufferPointer) -> Int? {
    var i = 0
    let n = b.count
    while i < n {
        let c = b[i]
        if c < 0x80 { i += 1; continue }
        var need = 0
        var min: UInt32 = 0
        var v: UInt32
        if c & 0xE0 == 0xC0 {
            need = 1; v = UInt32(c & 0x1F); min = 0x80
        } else if c & 0xF0 == 0xE0 {
            need = 2; v = UInt32(c & 0x0F); min = 0x800
        } else if c & 0xF8 == 0xF0 {
            need = 3; v = UInt32(c & 0x07); min = 0x10000
        } else {
            return i
        }
        for k in 1...need {
            guard i + k < n, b[i + k] & 0xC0 == 0x80 else { return i }
            v = v << 6 | UInt32(b[i + k] & 0x3F)
        }
        if v < min || v > 0x10FFFF || (0xD800...0xDFFF).contains(v) { return i }
        i += need + 1
    }
    return nil
}

/// The encoding a line (or a file's first bytes) shows when it is UTF-16 or UTF-32 text rather than UTF-8, as iconv
/// names it: `UTF-32` or `UTF-16` with a byte-order mark (`00 00 FE FF`, `FF FE 00 00`; `FE FF`, `FF FE`), else by
/// where the zero bytes beside ASCII characters fall in the first 16 bytes (`UTF-32LE`: three of every four, after
/// the character; `UTF-16BE`: one of every two, before it; …). UTF-8 JSON never holds a zero byte, and a run of zeros
/// (a preallocated file) is taken for neither.
/// - Complexity: O(1): at most 16 bytes are looked at.
package func wideTextEncoding(_ b: UnsafeRawBufferPointer) -> String? {
    if b.count >= 4,
        (b[0] == 0xFF && b[1] == 0xFE && b[2] == 0 && b[3] == 0)
            || (b[0] == 0 && b[1] == 0 && b[2] == 0xFE && b[3] == 0xFF)
    {
        return "UTF-32"
    }
    if b.count >= 2, (b[0] == 0xFF && b[1] == 0xFE) || (b[0] == 0xFE && b[1] == 0xFF) { return "UTF-16" }
    // Zero bytes by position modulo 4, over whole 4-byte units.
    let n4 = min(b.count, 16) & ~3
    if n4 >= 4 {
        var zeros = [0, 0, 0, 0]
        for i in 0..<n4 where b[i] == 0 { zeros[i & 3] += 1 }
        let units = n4 / 4
        if zeros[1] == units && zeros[2] == units && zeros[3] == units && zeros[0] == 0 { return "UTF-32LE" }
        if zeros[0] == units && zeros[1] == units && zeros[2] == units && zeros[3] == 0 { return "UTF-32BE" }
    }
    let n = min(b.count, 16) & ~1
    guard n >= 4 else { return nil }
    var zerosEven = 0, zerosOdd = 0
    for i in 0..<n where b[i] == 0 {
        if i & 1 == 0 { zerosEven += 1 } else { zerosOdd += 1 }
    }
    guard max(zerosEven, zerosOdd) * 3 >= n / 2 * 2 && min(zerosEven, zerosOdd) == 0 else { return nil }
    return zerosOdd > 0 ? "UTF-16LE" : "UTF-16BE"
}

func firstControlByte(_ b: UnsafeRawBufferPointer) -> Int? {
    for i in 0..<b.count where b[i] < 0x20 && b[i] != 0x09 { return i }
    return b.firstIndex(of: 0x09)
}
