import BoardwalkModel

/// Splits query text into tokens. Works on UTF-8 bytes; ranges are byte offsets.
struct Lexer {
    let bytes: [UInt8]
    var index = 0

    init(_ text: String) { bytes = Array(text.utf8) }

    /// All tokens, ending with an `.end` token.
    ///
    /// - Throws: ``QueryError`` for an unterminated string, a bad escape, a malformed number, duration or
    ///   timestamp, or a character that starts no token.
    /// - Complexity: O(n) in the length of the text.
    static func tokenize(_ text: String) throws(QueryError) -> [Token] {
        var lexer = Lexer(text)
        var tokens: [Token] = []
        while true {
            let token = try lexer.next(text)
            tokens.append(token)
            if token.kind == .end { return tokens }
        }
    }

    private func peek(_ offset: Int = 0) -> UInt8? {
        let i = index + offset
        return i < bytes.count ? bytes[i] : nil
    }

    private static func isIdentifierStart(_ c: UInt8) -> Bool {
        (c >= 0x61 && c <= 0x7A) || (c >= 0x41 && c <= 0x5A) || c == 0x5F
    }

    private static func isIdentifierContinue(_ c: UInt8) -> Bool {
        isIdentifierStart(c) || isDigit(c)
    }

    private static func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }

    private func text(_ range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }

    private mutating func next(_ query: String) throws(QueryError) -> Token {
        // Whitespace and `#` comments to the end of the line.
        while let c = peek() {
            if c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D {
                index += 1
            } else if c == UInt8(ascii: "#") {
                while let d = peek(), d != 0x0A { index += 1 }
            } else {
                break
            }
        }
        let start = index
        guard let c = peek() else { return Token(kind: .end, range: start..<start, text: "") }
        func single(_ kind: Token.Kind, _ length: Int = 1) -> Token {
            index += length
            return Token(kind: kind, range: start..<index, text: text(start..<index))
        }
        switch c {
        case UInt8(ascii: "|"):
            if peek(1) == UInt8(ascii: "|") {
                throw QueryError(
                    .syntax, "unexpected `||`", at: start..<start + 2, in: query,
                    label: "use `or` to combine conditions; a single `|` separates stages")
            }
            return single(.pipe)
        case UInt8(ascii: ","): return single(.comma)
        case UInt8(ascii: "("): return single(.leftParen)
        case UInt8(ascii: ")"): return single(.rightParen)
        case UInt8(ascii: "["): return single(.leftBracket)
        case UInt8(ascii: "]"): return single(.rightBracket)
        case UInt8(ascii: "+"): return single(.plus)
        case UInt8(ascii: "-"): return single(.minus)
        case UInt8(ascii: "*"): return single(.star)
        case UInt8(ascii: "/"): return single(.slash)
        case UInt8(ascii: "="):
            if peek(1) == UInt8(ascii: "=") { return single(.equal, 2) }
            throw QueryError(
                .syntax, "expected `==`, found `=`", at: start..<start + 1, in: query,
                label: "use `==` to compare")
        case UInt8(ascii: "!"):
            if peek(1) == UInt8(ascii: "=") { return single(.notEqual, 2) }
            throw QueryError(
                .syntax, "unexpected character `!`", at: start..<start + 1, in: query,
                label: "use `not` to negate, `!=` to compare")
        case UInt8(ascii: "<"):
            if peek(1) == UInt8(ascii: ">") {
                // SQL's not-equal; `<` then `>` is never a query.
                throw QueryError(
                    .syntax, "unexpected `<>`", at: start..<start + 2, in: query, label: "use `!=` to compare")
            }
            return peek(1) == UInt8(ascii: "=") ? single(.lessEqual, 2) : single(.less)
        case UInt8(ascii: ">"): return peek(1) == UInt8(ascii: "=") ? single(.greaterEqual, 2) : single(.greater)
        case UInt8(ascii: "\""): return try string(query)
        case UInt8(ascii: "@"): return try timestamp(query)
        default:
            if Lexer.isDigit(c) { return try number(query) }
            if Lexer.isIdentifierStart(c) {
                while let d = peek(), Lexer.isIdentifierContinue(d) { index += 1 }
                // `session.completed`, `session.answer("goal")`: an event's session, as one name.
                if text(start..<index) == "session", peek() == UInt8(ascii: "."), let d = peek(1),
                    Lexer.isIdentifierStart(d)
                {
                    index += 1
                    while let d = peek(), Lexer.isIdentifierContinue(d) { index += 1 }
                }
                return Token(kind: .identifier, range: start..<index, text: text(start..<index))
            }
            // One whole character (a multi-byte scalar included) in the message and under the caret.
            var end = index + 1
            while end < bytes.count, bytes[end] & 0xC0 == 0x80 { end += 1 }
            if c == UInt8(ascii: "&") && peek(1) == UInt8(ascii: "&") {
                throw QueryError(
                    .syntax, "unexpected `&&`", at: start..<start + 2, in: query,
                    label: "use `and` to combine conditions")
            }
            let character = text(start..<end)
            if let scalar = character.unicodeScalars.first, let kind = Lexer.invisibleKind(scalar) {
                // Printed raw, a control character would be invisible or act on the terminal (an escape
                // sequence, a bidi override); its code point says what it is.
                throw QueryError(
                    .syntax, "unexpected character \(Lexer.codePoint(scalar))", at: start..<end, in: query,
                    label: kind)
            }
            throw QueryError(
                .syntax, "unexpected character `\(character)`", at: start..<end, in: query,
                label: hintForUnexpected(c, at: start))
        }
    }

    /// What an invisible or terminal-affecting character is, for a diagnostic that names it by code point rather
    /// than printing it; nil for a character that shows as itself.
    static func invisibleKind(_ scalar: Unicode.Scalar) -> String? {
        switch scalar.properties.generalCategory {
        case .control: return "a control character"
        case .format: return "an invisible formatting character"
        case .spaceSeparator: return "a space other than U+0020; type a plain space"
        case .lineSeparator, .paragraphSeparator: return "a line break other than U+000A"
        case .privateUse: return "a private-use character"
        case .unassigned: return "a code point with no character assigned"
        default: return nil
        }
    }

    /// `U+0000`: a scalar's code point, at least four hex digits.
    static func codePoint(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    /// A hint for a character that starts no token, when it is a habit from another language.
    private func hintForUnexpected(_ c: UInt8, at start: Int) -> String? {
        switch c {
        case UInt8(ascii: ":") where afterDateAndSpace(before: start):
            // `@2026-11-01 10:00:00`: a time of day after a space, not a `T`, stops at its first colon.
            return "a timestamp joins date and time with `T`: `@2026-11-01T10:00:00Z`"
        case UInt8(ascii: "'"):
            // `'p1'`: the string up to the closing quote on this line, shown in double quotes.
            var end = start + 1
            while end < bytes.count, bytes[end] != UInt8(ascii: "'"), bytes[end] != 0x0A { end += 1 }
            guard end < bytes.count, bytes[end] == UInt8(ascii: "'") else { return "strings are in double quotes" }
            return "strings are in double quotes: `\"\(text(start + 1..<end))\"`"
        case UInt8(ascii: "&"):
            return "use `and` to combine conditions"
        case UInt8(ascii: "."):
            // `.5`: a number needs a digit before its point.
            var end = start + 1
            while end < bytes.count, Lexer.isDigit(bytes[end]) { end += 1 }
            return end > start + 1 ? "write `0\(text(start..<end))`" : nil
        default:
            return nil
        }
    }

    /// Whether the bytes before `position` are `@YYYY-MM-DD`, a space and digits.
    private func afterDateAndSpace(before position: Int) -> Bool {
        var i = position - 1
        while i >= 0, Lexer.isDigit(bytes[i]) { i -= 1 }
        guard i < position - 1, i >= 11, bytes[i] == UInt8(ascii: " ") else { return false }
        let date = bytes[(i - 11)..<i]
        return date.first == UInt8(ascii: "@")
            && date.dropFirst().allSatisfy { Lexer.isDigit($0) || $0 == UInt8(ascii: "-") }
    }

    private mutating func string(_ query: String) throws(QueryError) -> Token {
        let start = index
        index += 1
        var value: [UInt8] = []
        while true {
            guard let c = peek() else {
                throw QueryError(
                    .syntax, "unterminated string", at: start..<index, in: query,
                    label: "this string has no closing `\"`")
            }
            if c == UInt8(ascii: "\"") { index += 1; break }
            if c == 0x0A {
                throw QueryError(
                    .syntax, "unterminated string", at: start..<index, in: query,
                    label: "strings end on the line they start")
            }
            if c == UInt8(ascii: "\\") {
                guard let e = peek(1) else { index += 1; continue }
                switch e {
                case UInt8(ascii: "\""): value.append(e)
                case UInt8(ascii: "\\"): value.append(e)
                case UInt8(ascii: "n"): value.append(0x0A)
                case UInt8(ascii: "t"): value.append(0x09)
                default:
                    throw QueryError(
                        .syntax, "unknown escape `\\\(text(index + 1..<index + 2))` in a string",
                        at: index..<index + 2, in: query, label: "known escapes: \\\" \\\\ \\n \\t")
                }
                index += 2
                continue
            }
            value.append(c)
            index += 1
        }
        return Token(kind: .string, range: start..<index, text: String(decoding: value, as: UTF8.self))
    }

    private mutating func timestamp(_ query: String) throws(QueryError) -> Token {
        let start = index
        index += 1
        while let c = peek(),
            Lexer.isIdentifierContinue(c) || c == UInt8(ascii: "-") || c == UInt8(ascii: ":")
                || c == UInt8(ascii: ".") || c == UInt8(ascii: "+")
        {
            index += 1
        }
        let body = text(start + 1..<index)
        guard let time = Timestamp(iso8601: body) else {
            throw QueryError(
                .syntax, "invalid timestamp `@\(body)`", at: start..<index, in: query,
                label: Lexer.timestampProblem(body) ?? "expected @YYYY-MM-DD or @YYYY-MM-DDTHH:MM:SSZ")
        }
        var token = Token(kind: .timestamp, range: start..<index, text: text(start..<index))
        token.microseconds = time.microseconds
        return token
    }

    /// What is wrong with a timestamp written in the right shape (`@2026-02-30`, `@2026-11-01T25:00:00Z`,
    /// `@1969-12-31`), or nil when the shape itself is wrong.
    static func timestampProblem(_ body: String) -> String? {
        let parts = body.split(whereSeparator: { $0 == "T" || $0 == "t" || $0 == " " }).map(String.init)
        let date = parts.first?.split(separator: "-", omittingEmptySubsequences: false).map { Int($0) } ?? []
        guard date.count == 3, let year = date[0], let month = date[1], let day = date[2],
            parts.first?.utf8.count == 10
        else { return nil }
        guard (1...12).contains(month) else { return "month \(month) does not exist" }
        let days = [
            31, year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31,
        ][month - 1]
        guard (1...days).contains(day) else { return "day \(day): that month has \(days) days" }
        if parts.count == 2 {
            let clock = parts[1].prefix { $0.isNumber || $0 == ":" }.split(separator: ":").map { Int($0) }
            if let hour = clock.first ?? nil, hour > 23 { return "hour \(hour) is past 23" }
            if clock.count > 1, let minute = clock[1], minute > 59 { return "minute \(minute) is past 59" }
            if clock.count > 2, let second = clock[2], second > 59 { return "second \(second) is past 59" }
        }
        if year < 1970 { return "before 1970-01-01: times are stored from the Unix epoch on" }
        return nil
    }

    /// Durations by unit, in microseconds.
    static let units: [String: Int64] = [
        "us": 1, "ms": 1_000, "s": 1_000_000, "m": 60_000_000, "h": 3_600_000_000, "d": 86_400_000_000,
        "w": 604_800_000_000,
    ]

    private mutating func number(_ query: String) throws(QueryError) -> Token {
        let start = index
        while let c = peek(), Lexer.isDigit(c) { index += 1 }
        var isDecimal = false
        if peek() == UInt8(ascii: "."), let d = peek(1), Lexer.isDigit(d) {
            isDecimal = true
            index += 1
            while let c = peek(), Lexer.isDigit(c) { index += 1 }
        }
        // Scientific notation (`1e3`, `2.5E-4`): a number, not a duration with unit `e3`.
        if let e = peek(), e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
            let sign = peek(1).map { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") } ?? false
            if let d = peek(sign ? 2 : 1), Lexer.isDigit(d) {
                isDecimal = true
                index += sign ? 2 : 1
                while let c = peek(), Lexer.isDigit(c) { index += 1 }
            }
        }
        let numberEnd = index
        let digits = text(start..<numberEnd)
        if let c = peek(), Lexer.isIdentifierStart(c) {
            while let d = peek(), Lexer.isIdentifierContinue(d) { index += 1 }
            let unit = text(numberEnd..<index)
            guard let scale = Lexer.units[unit] else {
                // `1h30m`: several units in one literal; say which single one it is.
                if let total = Lexer.compoundDuration(text(start..<index)) {
                    throw QueryError(
                        .syntax, "a duration has one unit", at: start..<index, in: query,
                        label: "write `\(Lexer.durationText(total))`")
                }
                // `5min`, `2hours`: a unit spelled out.
                let label = Lexer.unitSpellings[unit.lowercased()].map {
                    "write `\(digits)\($0)`; units: us, ms, s, m, h, d, w"
                }
                throw QueryError(
                    .syntax, "unknown duration unit `\(unit)`", at: numberEnd..<index, in: query,
                    label: label ?? "units: us, ms, s, m, h, d, w")
            }
            guard let amount = Double(digits), (amount * Double(scale)).magnitude < 9.2e18 else {
                throw QueryError(
                    .syntax, "duration `\(text(start..<index))` is too large", at: start..<index, in: query)
            }
            var token = Token(kind: .duration, range: start..<index, text: text(start..<index))
            token.microseconds = Int64((amount * Double(scale)).rounded())
            return token
        }
        // A whole number beyond 64-bit integers is read as a decimal, as `1e21` is; only a value past the largest
        // finite double (about 1.8e308) is too large.
        let integer = isDecimal ? nil : Int64(digits)
        var token = Token(kind: integer == nil ? .decimal : .integer, range: start..<index, text: digits)
        if let integer {
            token.integer = integer
            token.decimal = Double(integer)
        } else {
            guard let value = Double(digits), value.isFinite else {
                throw QueryError(
                    .syntax, "number `\(digits)` is too large", at: start..<index, in: query,
                    label: "numbers go up to about 1.8e308")
            }
            token.decimal = value
        }
        return token
    }

    /// Common spellings of duration units (`min`, `hours`), and the unit they mean.
    static let unitSpellings: [String: String] = [
        "min": "m", "mins": "m", "minute": "m", "minutes": "m", "sec": "s", "secs": "s", "second": "s", "seconds": "s",
        "hr": "h", "hrs": "h", "hour": "h", "hours": "h", "day": "d", "days": "d", "week": "w", "weeks": "w",
        "msec": "ms", "millisecond": "ms", "milliseconds": "ms", "usec": "us", "microsecond": "us",
        "microseconds": "us",
        "s": "s", "m": "m", "h": "h", "d": "d", "w": "w", "ms": "ms", "us": "us",
    ]

    /// The microseconds of a literal of several whole-number parts with known units (`1h30m`, `2m30s`), or nil.
    static func compoundDuration(_ literal: String) -> Int64? {
        var total: Int64 = 0
        var rest = Substring(literal)
        var parts = 0
        while !rest.isEmpty {
            let digits = rest.prefix { $0.isASCII && $0.isNumber }
            let unit = rest.dropFirst(digits.count).prefix { $0.isASCII && $0.isLetter }
            guard !digits.isEmpty, let amount = Int64(digits), let scale = units[String(unit)] else { return nil }
            let (product, overflow) = amount.multipliedReportingOverflow(by: scale)
            let (sum, overflow2) = total.addingReportingOverflow(product)
            guard !overflow, !overflow2 else { return nil }
            total = sum
            parts += 1
            rest = rest.dropFirst(digits.count + unit.count)
        }
        return parts > 1 ? total : nil
    }

    /// A duration in the largest unit that holds it exactly: 5 400 s is `90m`.
    static func durationText(_ microseconds: Int64) -> String {
        for unit in ["w", "d", "h", "m", "s", "ms"] where microseconds % units[unit]! == 0 {
            return "\(microseconds / units[unit]!)\(unit)"
        }
        return "\(microseconds)us"
    }
}
