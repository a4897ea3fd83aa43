extension Parser {
    static let stageKeywords = [
        "where", "count", "stats", "top", "funnel", "paths", "histogram", "sort", "limit", "select", "versus",
        "explain",
    ]

    /// One stage after `|`.
    mutating func stage() throws(QueryError) -> Stage {
        let keyword = current
        guard keyword.kind == .identifier else { throw unexpected(expected: "a stage", after: "`|`") }
        let start = keyword.range.lowerBound
        _ = advance()
        let kind: StageKind
        switch keyword.text {
        case "where":
            kind = .where(try expression())
        case "count":
            if current.kind == .leftParen {
                // `count(*)`, `count()`: SQL's aggregate written as the stage.
                throw error(
                    "the `count` stage takes no parentheses", at: current.range,
                    label: "write `| count` (or `| count by …`); in `stats`, `count()`")
            }
            kind = .count(by: try optionalBy())
        case "stats":
            if current.isKeyword("by") {
                throw error(
                    "`stats` needs an aggregate before `by`", at: current.range,
                    label: "e.g. `stats count() by …`, or `count by …`")
            }
            var aggregates: [AggregateCall] = []
            repeat {
                aggregates.append(try aggregate())
            } while accept(.comma) != nil
            kind = .stats(aggregates, by: try optionalBy())
        case "top":
            kind = .top(try rowCount(after: "`top`"), try namedExpression())
        case "funnel":
            kind = .funnel(try funnel())
        case "paths":
            kind = .paths(try paths())
        case "histogram":
            let value = try expression()
            var step: Expr?
            if acceptKeyword("step") != nil { step = try expression() }
            kind = .histogram(value, step: step)
        case "sort":
            var keys: [SortKey] = []
            repeat {
                let expr = try expression()
                var descending = false
                if acceptKeyword("desc") != nil { descending = true } else { _ = acceptKeyword("asc") }
                keys.append(SortKey(expr: expr, descending: descending))
            } while accept(.comma) != nil
            kind = .sort(keys)
        case "limit":
            kind = .limit(try rowCount(after: "`limit`"))
        case "select":
            var columns: [NamedExpr] = []
            repeat { columns.append(try namedExpression()) } while accept(.comma) != nil
            kind = .select(columns)
        case "versus":
            guard
                [.string, .integer, .decimal, .timestamp].contains(current.kind) || current.isKeyword("true")
                    || current.isKeyword("false") || current.kind == .minus
            else {
                throw unexpected(
                    expected: "the group to compare with", after: "`versus`",
                    hint: "the key of one group, e.g. `versus \"control\"`")
            }
            kind = .versus(try expression())
        case "explain":
            kind = .explain
        default:
            let hint = Suggestions.didYouMean(keyword.text, in: Parser.stageKeywords)
            throw QueryError(
                .syntax, "unknown stage `\(keyword.text)`\(hint)", at: keyword.range, in: text,
                label: hint.isEmpty ? misplacedStageHint(keyword.text) : nil)
        }
        return Stage(kind: kind, range: start..<previous.range.upperBound, keywordRange: keyword.range)
    }

    /// Stage names of other query languages, and the Boardwalk stage that does their work.
    static let stageHabits = [
        "filter": "`where`", "order": "`sort`", "orderby": "`sort`", "group": "`count by …` or `stats … by …`",
        "groupby": "`count by …` or `stats … by …`", "summarize": "`stats … by …`", "aggregate": "`stats`",
        "head": "`limit`", "take": "`limit`", "project": "`select`", "fields": "`select`", "distinct": "`count by …`",
    ]

    /// For an unknown stage that names something else the language has (`| max(duration)`, `| exit`, `| filter …`):
    /// where that thing goes.
    func misplacedStageHint(_ word: String) -> String? {
        let sessions = tokens.first?.isKeyword("sessions") ?? false
        if word != "count", AggregateFunction.names.contains(word) {
            return "`\(word)` is an aggregate: write `| stats \(word)(…)`"
        }
        let isField = sessions ? SessionField(rawValue: word) != nil : EventField(rawValue: word) != nil
        if isField {
            return "`\(word)` is a field: e.g. `| count by \(word)`, `| top 5 \(word)` or `| select \(word)`"
        }
        if let stage = Parser.stageHabits[word.lowercased()] { return "Boardwalk writes this \(stage)" }
        return nil
    }

    /// The most rows `limit` and `top` take: more than any result holds, and far enough below `Int.max` that
    /// arithmetic on it (buffers of twice the limit) cannot overflow.
    static let maxRowCount = 1 << 60

    /// A number of rows: a whole number; one past ``maxRowCount`` (or past 64 bits, read as a decimal) means
    /// as many as there are.
    mutating func rowCount(after context: String) throws(QueryError) -> Int {
        if current.kind == .decimal,
            current.text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        {
            _ = advance()
            return Parser.maxRowCount
        }
        return Int(min(try expect(.integer, "a number of rows", after: context).integer, Int64(Parser.maxRowCount)))
    }

    /// `[by expr [as name], …]`
    mutating func optionalBy() throws(QueryError) -> [NamedExpr] {
        guard acceptKeyword("by") != nil else { return [] }
        var keys: [NamedExpr] = []
        repeat { keys.append(try namedExpression()) } while accept(.comma) != nil
        return keys
    }

    /// `expr [as name]`
    mutating func namedExpression() throws(QueryError) -> NamedExpr {
        let expr = try expression()
        var column = compactText(expr.range)
        if acceptKeyword("as") != nil {
            column = try expect(.identifier, "a column name", after: "`as`").text
        }
        return NamedExpr(expr: expr, column: column, range: expr.range.lowerBound..<previous.range.upperBound)
    }

    /// `name(args…) [as alias]`; a bare `count` is `count()`.
    mutating func aggregate() throws(QueryError) -> AggregateCall {
        let name = current
        guard name.kind == .identifier else { throw unexpected(expected: "an aggregate", after: "`stats`") }
        _ = advance()
        var arguments: [Expr] = []
        if accept(.leftParen) != nil {
            try rejectStarArgument(of: name)
            if current.kind != .rightParen {
                repeat { arguments.append(try expression()) } while accept(.comma) != nil
            }
            _ = try expect(.rightParen, "`)`", after: "the arguments")
        }
        let range = name.range.lowerBound..<previous.range.upperBound
        var column = compactText(range)
        if arguments.isEmpty, !column.hasSuffix(")") { column += "()" }
        if acceptKeyword("as") != nil {
            column = try expect(.identifier, "a column name", after: "`as`").text
        }
        return AggregateCall(
            function: name.text, functionRange: name.range, arguments: arguments, column: column,
            range: range, namedRange: range.lowerBound..<previous.range.upperBound)
    }

    /// `funnel [step, …] [within D] [mode M] [ignoring (k, …)] [by keys]`
    mutating func funnel() throws(QueryError) -> FunnelSpec {
        var spec = FunnelSpec(
            steps: [], within: nil, withinRange: nil, mode: .ordered, modeRange: nil, ignoring: [],
            ignoringRanges: [], by: [])
        let clauseWords: Set<String> = ["within", "mode", "ignoring", "by"]
        if (current.kind == .identifier && !clauseWords.contains(current.text)) || current.kind == .string {
            repeat { spec.steps.append(try funnelStep()) } while accept(.comma) != nil
        }
        // Each clause at most once: `within 30m within 1h` would otherwise keep the last one silently.
        var seen: Set<String> = []
        while true {
            if current.kind == .identifier, clauseWords.contains(current.text), !seen.insert(current.text).inserted {
                throw error(
                    "`\(current.text)` is given twice in this funnel", label: "keep one `\(current.text)` clause")
            }
            if acceptKeyword("within") != nil {
                let d = try expect(.duration, "a duration such as `30m`", after: "`within`")
                spec.within = d.microseconds
                spec.withinRange = d.range
            } else if acceptKeyword("mode") != nil {
                let m = try expect(.identifier, "`ordered`, `strict` or `any`", after: "`mode`")
                guard let mode = FunnelMode(rawValue: m.text) else {
                    let hint = Suggestions.didYouMean(m.text, in: ["ordered", "strict", "any"])
                    throw QueryError(
                        .syntax, "unknown funnel mode `\(m.text)`\(hint)", at: m.range, in: text,
                        label: "modes: ordered, strict, any")
                }
                spec.mode = mode
                spec.modeRange = m.range
            } else if acceptKeyword("ignoring") != nil {
                _ = try expect(.leftParen, "`(`", after: "`ignoring`")
                repeat {
                    let k = current
                    guard k.kind == .identifier || k.kind == .string else {
                        throw unexpected(expected: "an event kind", after: "`ignoring (`")
                    }
                    _ = advance()
                    spec.ignoring.append(k.text)
                    spec.ignoringRanges.append(k.range)
                } while accept(.comma) != nil
                _ = try expect(.rightParen, "`)`", after: "the ignored kinds")
            } else if current.isKeyword("by") {
                spec.by = try optionalBy()
            } else {
                return spec
            }
        }
    }

    /// `event [(predicate)]`, the event a kind, an analytics name, or a quoted name.
    mutating func funnelStep() throws(QueryError) -> FunnelStep {
        let name = current
        guard name.kind == .identifier || name.kind == .string else {
            throw unexpected(expected: "a funnel step", after: "`,`")
        }
        _ = advance()
        var predicate: Expr?
        if accept(.leftParen) != nil {
            predicate = try expression()
            _ = try expect(.rightParen, "`)`", after: "the step's condition")
        }
        let range = name.range.lowerBound..<previous.range.upperBound
        return FunnelStep(
            event: name.text, eventRange: name.range, predicate: predicate, text: sourceText(range),
            range: range)
    }

    /// `(after | before) (step | start | end) [depth N]`
    mutating func paths() throws(QueryError) -> PathsSpec {
        let example = "e.g. `paths before end depth 3` or `paths after screen_presented(screen == 4)`"
        let direction = current
        guard direction.isKeyword("after") || direction.isKeyword("before") else {
            throw unexpected(expected: "`after` or `before`", after: "`paths`", hint: example)
        }
        _ = advance()
        let after = direction.isKeyword("after")
        let anchorToken = current
        let anchor: PathAnchor
        let anchorRange: Range<Int>
        if anchorToken.isKeyword("start") || anchorToken.isKeyword("end") {
            // A session has nothing before its start nor after its end.
            guard anchorToken.isKeyword(after ? "start" : "end") else {
                throw error(
                    "nothing comes \(direction.text) a session's \(anchorToken.text)", at: anchorToken.range,
                    label: after
                        ? "`paths after start` or `paths before end`" : "`paths before end` or `paths after start`")
            }
            _ = advance()
            anchor = after ? .start : .end
            anchorRange = anchorToken.range
        } else {
            guard anchorToken.kind == .identifier || anchorToken.kind == .string else {
                throw unexpected(
                    expected: "an event, `start` or `end`", after: "`\(direction.text)`", hint: example)
            }
            let step = try funnelStep()
            anchor = after ? .after(step) : .before(step)
            anchorRange = step.range
        }
        var spec = PathsSpec(anchor: anchor, anchorRange: anchorRange, depth: nil, depthRange: nil)
        if acceptKeyword("depth") != nil {
            let n = try expect(.integer, "a number of steps", after: "`depth`", hint: "e.g. `depth 3`")
            spec.depth = n.integer
            spec.depthRange = n.range
        }
        return spec
    }
}
