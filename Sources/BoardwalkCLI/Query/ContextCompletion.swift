import Boardwalk

/// What Tab offers at the cursor: the words of the query language that fit there, read from the text before the
/// word being completed (a source at the start, a stage after `|`, the source's fields and functions in an
/// expression, `session.` properties in `events`, the element ids of the store after `answer("`, the values of
/// `exit`, `kind`, `name`, `element_type`, `input_type` and `onboarding` after `==`, `!=` or `in [`).
struct ContextCompletion {
    /// Quoted onboarding ids of the source.
    var onboardings: [String] = []
    /// The element ids answers exist for, asked of the source the first time they are offered.
    var elements: () -> [String] = { [] }
    /// What else may start a line (the REPL's dot-commands).
    var lineStarts: [String] = []

    static let sources = ["events", "sessions", "lints"]
    static let stages = [
        "where", "count", "stats", "top", "funnel", "paths", "histogram", "sort", "limit", "select", "explain",
    ]
    static let reductions: Set<String> = ["count", "stats", "top", "funnel", "paths", "histogram"]
    static let functions = ["now()", "hour(", "day(", "week(", "month(", "year("]
    static let sessionFunctions = ["answer(", "did(", "reached("]
    static let keywords = ["and", "or", "not", "in", "is", "by", "as"]
    static let aggregates = [
        "count()", "count(", "count_distinct(", "sum(", "avg(", "min(", "max(", "p50(", "p90(", "p95(", "p99(",
        "percentile(", "rate(",
    ]

    /// The candidates for `word`, with the text before it on the line (`before`); `nil` where the context says
    /// nothing more than the whole vocabulary (after a reduction, where the fields are the result's columns).
    func candidates(before: String, word: String) -> [String]? {
        let (segment, earlier, line) = Self.segments(before)
        guard let segment else { return nil }  // inside a string literal
        let trimmed = segment.trimmingSpaces()
        if earlier.isEmpty && trimmed.isEmpty { return filter(Self.sources + lineStarts, word) }
        if !earlier.isEmpty && trimmed.isEmpty { return filter(Self.stages, word) }
        // Past the first reduction, fields are the result's columns, which only the checker knows.
        let stagesBefore = earlier.dropFirst().compactMap { $0.trimmingSpaces().split(separator: " ").first }
        if stagesBefore.contains(where: { Self.reductions.contains(String($0)) }) { return nil }
        let source = line.trimmingSpaces().split(separator: " ").first.map(String.init)
        guard let source, Self.sources.contains(source), !earlier.isEmpty else { return nil }
        // The findings of `lints` are a table: its columns, as after a reduction.
        if source == "lints" { return filter(OnboardingLint.columnNames + Self.keywords, word) }
        // `answer("` or `session.answer("`: the element ids, quoted and closed.
        if trimmed.hasSuffix("answer("), word.isEmpty || word.hasPrefix("\"") {
            return filter(elements().map { "\"\($0)\")" }, word)
        }
        if let field = Self.comparedField(trimmed) {
            // A value typed without its opening quote still finds the quoted value.
            return filter(values(of: field).map { "\"\($0)\"" }, word.hasPrefix("\"") ? word : "\"" + word)
        }
        if word.hasPrefix("session.") {
            let properties = SessionField.allCases.map(\.rawValue) + Self.sessionFunctions
            return filter(properties.map { "session." + $0 }, word)
        }
        let fields =
            source == "events"
            ? EventField.allCases.map(\.rawValue) + ["session."]
            : SessionField.allCases.map(\.rawValue) + Self.sessionFunctions
        let aggregates = trimmed.hasPrefix("stats") ? Self.aggregates : []
        return filter(aggregates + fields + Self.functions + Self.keywords, word)
    }

    /// The values a field is compared with, as the language spells them.
    func values(of field: String) -> [String] {
        switch field {
        case "exit", "session.exit": ["completed", "paywall", "closed", "error", "abandoned"]
        case "kind": EventKind.allCases.map(\.rawValue)
        case "name": AnalyticsName.allCases.map(\.rawValue)
        case "element_type": ElementType.allCases.map(\.rawValue)
        case "input_type": InputType.allCases.map(\.rawValue)
        case "onboarding", "session.onboarding": onboardings.map { String($0.dropFirst().dropLast()) }
        case "element": elements()
        default: []
        }
    }

    private func filter(_ words: [String], _ word: String) -> [String] {
        words.filter { $0.hasPrefix(word) }
    }

    /// The field compared in an unfinished comparison at the end of `text` (`exit == `, `kind != `,
    /// `name in ["a", `), or nil.
    static func comparedField(_ text: String) -> String? {
        var rest = Substring(text)
        // `in [` with values so far: back to the field.
        if let open = rest.lastIndex(of: "["), !rest[open...].contains("]") {
            rest = rest[..<open].trimmingSuffix(" ")
            guard rest.hasSuffix(" in") else { return nil }
            rest = rest.dropLast(3)
            if rest.hasSuffix(" not") { rest = rest.dropLast(4) }
        } else {
            rest = rest.trimmingSuffix(" ")
            guard rest.hasSuffix("==") || rest.hasSuffix("!=") else { return nil }
            rest = rest.dropLast(2)
        }
        rest = rest.trimmingSuffix(" ")
        let field = rest.reversed().prefix { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." }
        return field.isEmpty ? nil : String(field.reversed())
    }

    /// The stage being typed (after the last `|` outside a string; `nil` when the cursor is inside a string), the
    /// stages before it (the first is the source), and the whole text.
    static func segments(_ before: String) -> (current: String?, earlier: [String], line: String) {
        var parts: [String] = []
        var current = ""
        var quoted = false
        var escaped = false
        for c in before {
            if quoted {
                if escaped { escaped = false } else if c == "\\" { escaped = true } else if c == "\"" { quoted = false }
                current.append(c)
            } else if c == "\"" {
                quoted = true
                current.append(c)
            } else if c == "|" {
                parts.append(current)
                current = ""
            } else {
                current.append(c)
            }
        }
        return (quoted ? nil : current, parts, before)
    }
}

extension Substring {
    fileprivate func trimmingSuffix(_ c: Character) -> Substring {
        var s = self
        while s.last == c { s = s.dropLast() }
        return s
    }
}
