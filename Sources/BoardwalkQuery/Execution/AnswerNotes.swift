import BoardwalkModel

/// Notes for a query that found nothing because it compared an answer with a value the answers never take:
/// `answer("age") > "30"` where the ages are numbers, `answer("interests") == "yoga"` where no one chose yoga, an
/// element no one answered. Looked at only when the result is empty or all zeros, so a query that finds something
/// pays nothing; then each element compared reads its answers once (`events | where element == "…" | count by
/// value`).
enum AnswerNotes {
    /// Whether `table` found nothing: no rows, or one row of zeros and absent values (a `count` or `stats`
    /// without `by`).
    static func foundNothing(_ table: ResultTable) -> Bool {
        guard table.rows.count <= 1, let row = table.rows.first else { return true }
        return row.allSatisfy { value in
            switch value {
            case .null: true
            case .integer(let n): n == 0
            case .number(let d): d == 0
            default: false
            }
        }
    }

    /// The notes for `literals` of `text` on `source`.
    /// - Complexity: one scan of each element's state updates, at most ``maxElements`` elements.
    static func notes(
        for literals: [AnswerLiteral], in text: String, on source: some EventSource, now: Timestamp
    ) -> [QueryError] {
        var answers: [String: [Value]] = [:]
        var notes: [QueryError] = []
        for literal in literals {
            if answers[literal.element] == nil {
                guard answers.count < maxElements else { break }
                answers[literal.element] = values(of: literal.element, on: source, now: now) ?? []
            }
            if let message = message(literal, answers[literal.element]!) {
                notes.append(QueryError(.note, message, at: literal.range, in: text))
            }
        }
        return notes
    }

    /// How many elements' answers one query's notes read.
    static let maxElements = 4

    /// The distinct answers to `element` in `source` (each option of a multi-select on its own), or nil when they
    /// cannot be read.
    static func values(of element: String, on source: some EventSource, now: Timestamp) -> [Value]? {
        let quoted = "\"" + element.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"") + "\""
        guard let query = try? Query.parse("events | where element == \(quoted) | count by value"),
            let table = try? query.run(on: source, options: .init(now: now))
        else { return nil }
        return table.rows.compactMap { $0.first }.filter { !$0.isNull }
    }

    /// Why `literal` matches none of `values`, or nil when it may match.
    static func message(_ literal: AnswerLiteral, _ values: [Value]) -> String? {
        let shown = literal.literal.jsonText
        guard !values.isEmpty else {
            return "no one answered `\(literal.element)` here: the comparison with \(shown) matches nothing"
        }
        let numbers = values.filter { $0.numeric != nil }
        let strings = values.compactMap { if case .string(let s) = $0 { s } else { nil } }
        switch literal.literal {
        case .string(let s):
            if strings.isEmpty && !numbers.isEmpty {
                return
                    "the answers to `\(literal.element)` are numbers; \(shown) is a string and matches none of them: "
                    + "write it without quotes"
            }
            guard literal.op == .equal, !strings.contains(s) else { return nil }
            let known = strings.sorted()
            let listed = known.prefix(8).map { "`\($0)`" }.joined(separator: ", ") + (known.count > 8 ? ", …" : "")
            let hint = Suggestions.didYouMean(s, in: known)
            return
                "no answer to `\(literal.element)` is \(shown)\(hint)\(hint.isEmpty ? ";" : "") its answers here: \(listed)"
        case .integer, .number:
            guard numbers.isEmpty, !strings.isEmpty else { return nil }
            return "the answers to `\(literal.element)` are not numbers; \(shown) matches none of them"
        default:
            return nil
        }
    }
}
