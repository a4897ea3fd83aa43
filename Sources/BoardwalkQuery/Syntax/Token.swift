/// A lexical token of the query language, with the byte range it covers in the query text.
struct Token: Hashable, Sendable {
    enum Kind: Hashable, Sendable {
        case identifier
        case string
        case integer
        case decimal
        case duration
        case timestamp
        case pipe, comma, leftParen, rightParen, leftBracket, rightBracket
        case equal, notEqual, less, lessEqual, greater, greaterEqual
        case plus, minus, star, slash
        case end
    }

    var kind: Kind
    /// Byte offsets into the query's UTF-8 text.
    var range: Range<Int>
    /// The source text (identifiers, numbers) or the decoded value (strings).
    var text: String
    /// Decoded payloads of number, duration and timestamp tokens.
    var integer: Int64 = 0
    var decimal: Double = 0
    var microseconds: Int64 = 0

    /// How the token is named in "expected X, found Y" messages.
    var display: String {
        switch kind {
        case .identifier: "`\(text)`"
        case .string: "a string"
        case .integer: "a number"
        case .decimal: "the decimal `\(text)`"
        case .duration: "a duration"
        case .timestamp: "a timestamp"
        case .pipe: "`|`"
        case .comma: "`,`"
        case .leftParen: "`(`"
        case .rightParen: "`)`"
        case .leftBracket: "`[`"
        case .rightBracket: "`]`"
        case .equal: "`==`"
        case .notEqual: "`!=`"
        case .less: "`<`"
        case .lessEqual: "`<=`"
        case .greater: "`>`"
        case .greaterEqual: "`>=`"
        case .plus: "`+`"
        case .minus: "`-`"
        case .star: "`*`"
        case .slash: "`/`"
        case .end: "the end of the query"
        }
    }

    func isKeyword(_ word: String) -> Bool { kind == .identifier && text == word }
}
