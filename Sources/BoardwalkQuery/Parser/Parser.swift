/// A recursive-descent parser over the lexer's tokens. Split by grammar category:
/// this file holds the driver and the pipeline, `Parser+Stages.swift` the stages,
/// `Parser+Expressions.swift` the expressions and `Parser+Literals.swift` the literals.
struct Parser {
    let text: String
    let tokens: [Token]
    var position = 0
    /// Current nesting of parentheses, brackets, `not` and unary `-`.
    var depth = 0

    /// Limits that keep the recursive parser, checker and evaluator far from the end of a thread's stack.
    static let maxTokens = 2_000
    static let maxDepth = 64

    init(_ text: String) throws(QueryError) {
        self.text = text
        self.tokens = try Lexer.tokenize(text)
        if tokens.count > Parser.maxTokens {
            let extra = tokens[Parser.maxTokens]
            throw QueryError(.syntax, "the query is too long (more than \(Parser.maxTokens) tokens)", at: extra.range, in: text)
        }
    }

    /// Enters one level of nesting.
    mutating func nest() throws(QueryError) {
        depth += 1
        if depth > Parser.maxDepth {
            throw error("expressions are nested too deeply (more than \(Parser.maxDepth) levels)", at: current.range)
        }
    }

    /// Parses a whole query.
    /// - Complexity: O(n) in the number of tokens.
    static func parse(_ text: String) throws(QueryError) -> QueryAST {
        var parser = try Parser(text)
        return try parser.query()
    }

    var current: Token { tokens[position] }
    var previous: Token { tokens[max(0, position - 1)] }

    func peek(_ offset: Int = 1) -> Token { tokens[min(position + offset, tokens.count - 1)] }

    mutating func advance() -> Token {
        let token = tokens[position]
        if position < tokens.count - 1 { position += 1 }
        return token
    }

    mutating func accept(_ kind: Token.Kind) -> Token? {
        current.kind == kind ? advance() : nil
    }

    mutating func acceptKeyword(_ word: String) -> Token? {
        current.isKeyword(word) ? advance() : nil
    }

    func error(_ message: String, at range: Range<Int>? = nil, label: String? = nil) -> QueryError {
        QueryError(.syntax, message, at: range ?? (current.range.isEmpty ? caretRange : current.range), in: text, label: label)
    }

    /// Where a caret goes when the current token is the end: just after the last token.
    private var caretRange: Range<Int> {
        if current.kind == .end, position > 0 {
            let end = tokens[position - 1].range.upperBound
            return end..<end + 1
        }
        return current.range.lowerBound..<current.range.lowerBound + 1
    }

    func unexpected(expected: String, after context: String? = nil) -> QueryError {
        let label = spacedDurationHint() ?? isNullHint() ?? context.map { "\(expected) after \($0)" }
        return error("expected \(expected), found \(current.display)", at: current.kind == .end ? caretRange : current.range,
                     label: label)
    }

    /// `5 min`, `30 s`: a number and a unit written apart, where the parser stops at either of them.
    func spacedDurationHint() -> String? {
        func isNumber(_ t: Token) -> Bool { t.kind == .integer || t.kind == .decimal }
        func unit(_ t: Token) -> String? { t.kind == .identifier ? Lexer.unitSpellings[t.text.lowercased()] : nil }
        let (number, word): (Token, Token)
        if isNumber(previous), position > 0, unit(current) != nil {
            (number, word) = (previous, current)
        } else if isNumber(current), unit(peek()) != nil {
            (number, word) = (current, peek())
        } else {
            return nil
        }
        guard let u = unit(word), number.range.upperBound < word.range.lowerBound else { return nil }
        return "a duration is one word: `\(number.text)\(u)`"
    }

    /// `f is null` / `f is not null`, as SQL writes it: absent values compare false (rule 11), so `f == f` holds
    /// exactly when `f` is present.
    func isNullHint() -> String? {
        let next = peek()
        guard current.isKeyword("is"), next.isKeyword("null") || next.isKeyword("not"), previous.kind == .identifier else {
            return nil
        }
        let field = previous.text
        return next.isKeyword("null") ? "no `is null`: `not (\(field) == \(field))` holds when `\(field)` is absent"
            : "no `is not null`: `\(field) == \(field)` holds when `\(field)` is present"
    }

    mutating func expect(_ kind: Token.Kind, _ what: String, after context: String? = nil) throws(QueryError) -> Token {
        guard let token = accept(kind) else { throw unexpected(expected: what, after: context) }
        return token
    }

    /// The query text of a byte range, whitespace removed (column names of aggregates and keys).
    func compactText(_ range: Range<Int>) -> String {
        let utf8 = Array(text.utf8)
        let slice = utf8[range.clamped(to: 0..<utf8.count)]
        var out: [UInt8] = []
        var inString = false
        for c in slice {
            if c == UInt8(ascii: "\"") { inString.toggle() }
            if !inString, c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D { continue }
            out.append(c)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The query text of a byte range, as written.
    func sourceText(_ range: Range<Int>) -> String {
        let utf8 = Array(text.utf8)
        return String(decoding: utf8[range.clamped(to: 0..<utf8.count)], as: UTF8.self)
    }

    // MARK: Pipeline

    /// `query := source ("|" stage)*`
    mutating func query() throws(QueryError) -> QueryAST {
        let sourceToken = current
        guard sourceToken.kind == .identifier, let source = SourceKind(rawValue: sourceToken.text) else {
            if sourceToken.kind == .identifier, Parser.stageKeywords.contains(sourceToken.text) {
                // `explain sessions | …` or `count events`: a stage written first.
                throw QueryError(.syntax, "`\(sourceToken.text)` is a stage, not a source: start with `events |` or `sessions |`",
                                 at: sourceToken.range, in: text, label: "a query starts with `events` or `sessions`")
            }
            if sourceToken.kind == .identifier {
                let hint = Suggestions.didYouMean(sourceToken.text, in: ["events", "sessions"])
                throw QueryError(.syntax, "unknown source `\(sourceToken.text)`\(hint)", at: sourceToken.range, in: text,
                                 label: "a query starts with `events` or `sessions`")
            }
            throw unexpected(expected: "`events` or `sessions`")
        }
        _ = advance()
        var stages: [Stage] = []
        while current.kind != .end {
            guard accept(.pipe) != nil else {
                throw unexpected(expected: "`|` or the end of the query", after: stages.isEmpty ? "the source" : "this stage")
            }
            stages.append(try stage())
        }
        return QueryAST(source: source, sourceRange: sourceToken.range, stages: stages, text: text)
    }
}
