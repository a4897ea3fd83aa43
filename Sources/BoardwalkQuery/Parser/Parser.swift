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
            throw QueryError(
                .syntax, "the query is too long (more than \(Parser.maxTokens) tokens)", at: extra.range, in: text)
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
        QueryError(
            .syntax, message, at: range ?? (current.range.isEmpty ? caretRange : current.range), in: text, label: label)
    }

    /// Where a caret goes when the current token is the end: just after the last token.
    private var caretRange: Range<Int> {
        if current.kind == .end, position > 0 {
            let end = tokens[position - 1].range.upperBound
            return end..<end + 1
        }
        return current.range.lowerBound..<current.range.lowerBound + 1
    }

    func unexpected(expected: String, after context: String? = nil, hint: String? = nil) -> QueryError {
        let label = spacedDurationHint() ?? isNullHint() ?? hint ?? context.map { "\(expected) after \($0)" }
        return error(
            "expected \(expected), found \(current.display)", at: current.kind == .end ? caretRange : current.range,
            label: label)
    }

    /// What belongs where an expression is missing, said from the token before it (`events | where` → "a condition
    /// after `where`"), with an example of the source's own fields; nil when there is nothing to add to "expected an
    /// expression".
    func missingExpressionHint() -> String? {
        let sessions = tokens.first?.isKeyword("sessions") ?? false
        let comparisons: Set<Token.Kind> = [.equal, .notEqual, .less, .lessEqual, .greater, .greaterEqual]
        let arithmetic: Set<Token.Kind> = [.plus, .minus, .star, .slash]
        if comparisons.contains(current.kind), previous.kind == .identifier || previous.kind == .pipe {
            // `where == 2`: the comparison has lost its left side.
            let spelling = current.display.dropFirst().dropLast()
            return "a field before \(current.display), e.g. `\(sessions ? "furthest_screen" : "screen") \(spelling) 2`"
        }
        let before = previous
        let beforeThat = position >= 2 ? tokens[position - 2] : before
        switch before.kind {
        case .identifier where beforeThat.kind == .pipe:
            switch before.text {
            case "where":
                return "a condition after `where`, e.g. `where \(sessions ? "completed" : #"kind == "close""#)`"
            case "histogram":
                return "a field to bucket after `histogram`, e.g. `histogram \(sessions ? "duration" : "screen")`"
            case "sort":
                return "a field or column to sort by after `sort`, e.g. `sort \(sessions ? "started" : "time") desc`"
            case "select":
                return "a field or column after `select`, e.g. `select \(sessions ? "session, exit" : "time, name")`"
            default: return nil
            }
        case .identifier:
            switch before.text {
            case "by": return "a field to group by after `by`, e.g. `by \(sessions ? "exit" : "name")`"
            case "step": return "the bucket width after `step`, e.g. `step \(sessions ? "30s" : "1")`"
            case "and", "or", "not": return "a condition after `\(before.text)`"
            case "in": return "a list after `in`, e.g. `in [\"a\", \"b\"]`"
            default: return nil
            }
        case .integer where beforeThat.isKeyword("top"):
            return
                "the field to rank after `top \(before.text)`, e.g. `top \(before.text) \(sessions ? "exit" : "name")`"
        case .comma:
            return "another item after `,` (or no `,`)"
        case .leftParen:
            return "an expression inside `( )`"
        case let kind where comparisons.contains(kind) || arithmetic.contains(kind):
            return "a value after \(before.display)"
        default:
            return nil
        }
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
        guard current.isKeyword("is"), next.isKeyword("null") || next.isKeyword("not"), previous.kind == .identifier
        else {
            return nil
        }
        let field = previous.text
        return next.isKeyword("null")
            ? "no `is null`: `not (\(field) == \(field))` holds when `\(field)` is absent"
            : "no `is not null`: `\(field) == \(field)` holds when `\(field)` is present"
    }

    mutating func expect(_ kind: Token.Kind, _ what: String, after context: String? = nil, hint: String? = nil)
        throws(QueryError) -> Token
    {
        guard let token = accept(kind) else { throw unexpected(expected: what, after: context, hint: hint) }
        return token
    }

    /// Where the bracket a missing closing one would close was opened: "to close the `(` at column 17", or on which
    /// line of the query when that is not the line shown.
    func closing(_ open: Token) -> String {
        let here = QueryError(.syntax, "", at: current.kind == .end ? caretRange : current.range, in: text).location
        guard let there = QueryError(.syntax, "", at: open.range, in: text).location else { return "" }
        let bracket = open.display
        if let here, here.line != there.line { return "to close the \(bracket) on line \(there.line) of the query" }
        return "to close the \(bracket) at column \(there.column)"
    }

    /// The query text of a byte range as a column name (aggregates and keys): ``columnText(_:)``.
    func compactText(_ range: Range<Int>) -> String {
        let utf8 = Array(text.utf8)
        return columnText(utf8[range.clamped(to: 0..<utf8.count)])
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
                throw QueryError(
                    .syntax, "`\(sourceToken.text)` is a stage, not a source: start with `events |` or `sessions |`",
                    at: sourceToken.range, in: text, label: "a query starts with `events` or `sessions`")
            }
            if sourceToken.kind == .identifier {
                let hint = Suggestions.didYouMean(sourceToken.text, in: ["events", "sessions", "lints"])
                throw QueryError(
                    .syntax, "unknown source `\(sourceToken.text)`\(hint)", at: sourceToken.range, in: text,
                    label: "a query starts with `events` or `sessions`")
            }
            throw unexpected(
                expected: "`events` or `sessions`",
                hint: "a query starts with its source: `events | …` or `sessions | …`")
        }
        _ = advance()
        var stages: [Stage] = []
        while current.kind != .end {
            guard accept(.pipe) != nil else {
                var hint: String?
                if case .stats = stages.last?.kind, [.plus, .minus, .star, .slash].contains(current.kind) {
                    // `stats sum(events) / count()`: SQL's arithmetic on aggregates.
                    hint =
                        "aggregates are columns of their own and do not combine: `rate(p)` gives a share, `avg(f)` a mean"
                } else if case .count(by: let keys) = stages.last?.kind, keys.isEmpty, current.kind == .identifier {
                    // `count exit`: the `by` left out.
                    hint = "to count per value, write `count by \(current.text)`"
                }
                throw unexpected(
                    expected: "`|` or the end of the query", after: stages.isEmpty ? "the source" : "this stage",
                    hint: hint)
            }
            stages.append(try stage())
        }
        return QueryAST(source: source, sourceRange: sourceToken.range, stages: stages, text: text)
    }
}
