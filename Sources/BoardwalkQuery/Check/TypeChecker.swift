import BoardwalkModel

/// Resolves names and checks types before anything runs, so that a query either fails here with a pointed
/// diagnostic or runs to the end.
struct TypeChecker {
    enum Scope {
        case events
        case sessions
        /// A funnel step's condition: event fields, without `dwell`.
        case step
        /// A funnel's breakdown: event fields of the chain's first step (rule 12), and the session's own fields,
        /// answers and `session.` properties.
        case funnelBy
        case table([(name: String, type: QueryType)])

        var isTable: Bool {
            if case .table = self { return true }
            return false
        }

        var isSessions: Bool {
            if case .sessions = self { return true }
            return false
        }

        var isEvents: Bool {
            if case .events = self { return true }
            return false
        }
    }

    let text: String
    /// The zone of `day(t)`, `hour(t)`, … when the call names none.
    var timeZone: BucketZone = .utc
    /// Whether the step being checked is the anchor of `paths` rather than a funnel's (for the errors' words).
    var checksAnchor = false
    /// Notes on a query that checks but probably does not say what was meant (``QueryError/Kind/note``).
    let notes = Notes()

    final class Notes {
        var items: [QueryError] = []
        /// String literals compared with `onboarding` (`==`, `!=`, `in`), for ``Query/notes(on:)`` to check against
        /// a source's onboardings.
        var onboardingLiterals: [PlacedString] = []
        /// Literals compared with an answer, for a note when the query finds nothing (``AnswerNotes``).
        var answerLiterals: [AnswerLiteral] = []
    }

    func fail(_ message: String, _ range: Range<Int>, label: String? = nil) -> QueryError {
        QueryError(.type, message, at: range, in: text, label: label)
    }

    static let eventNames: [String] = EventKind.allCases.map(\.rawValue) + AnalyticsName.allCases.map(\.rawValue)
    static let durationColumnsOfFunnels = ["median_time", "mean_time", "p90_time"]

    // MARK: Queries

    static func check(_ ast: QueryAST, timeZone: BucketZone = .utc) throws(QueryError) -> CheckedQuery {
        var checker = TypeChecker(text: ast.text)
        checker.timeZone = timeZone
        var checked = try checker.query(ast)
        checked.notes = checker.notes.items
        checked.onboardingLiterals = checker.notes.onboardingLiterals
        checked.answerLiterals = checker.notes.answerLiterals
        return checked
    }

    func query(_ ast: QueryAST) throws(QueryError) -> CheckedQuery {
        if ast.source == .lints { return try lints(ast) }
        let rowScope: Scope = ast.source == .events ? .events : .sessions
        var checked = CheckedQuery(
            ast: ast, source: ast.source, filters: [], reduction: nil, rowColumns: [],
            tableStages: [], columns: [], explain: false)
        var stages = ast.stages[...]
        if let last = stages.last, case .explain = last.kind {
            checked.explain = true
            stages = stages.dropLast()
        }
        // 1. Row filters.
        while let stage = stages.first, case .where(let expr) = stage.kind {
            checked.filters.append(try predicate(expr, rowScope, what: "`where`"))
            stages = stages.dropFirst()
        }
        // 2. The first reduction, which reads the source's rows, or listed rows.
        var columns: [(name: String, type: QueryType)] = []
        // The reduction right before the current stage, and its `by` as written, for `versus`.
        var justReduced: (by: [NamedExpr], tableStage: Int?)?
        if let stage = stages.first, let reduction = try reduction(stage, ast.source, rowScope, columns: &columns) {
            checked.reduction = reduction
            justReduced = (TypeChecker.keys(of: stage), nil)
            stages = stages.dropFirst()
        } else {
            var listed: [BoundColumn]
            // A `select` reads the source's fields, after `limit` too: it keeps every row, so `limit 5 | select
            // profile` is `select profile | limit 5`.
            let limits = stages.prefix { if case .limit = $0.kind { true } else { false } }.count
            if stages.count > limits, case .select(let items) = stages[stages.startIndex + limits].kind {
                listed = try items.map { (item) throws(QueryError) in try column(item, rowScope) }
                try distinctNames(items.map { ($0.column, $0.range) })
                stages = stages.prefix(limits) + stages.dropFirst(limits + 1)
            } else {
                listed = ast.source == .events ? TypeChecker.defaultEventColumns : TypeChecker.defaultSessionColumns
            }
            checked.rowColumns = listed
            columns = listed.map { ($0.name, $0.type) }
        }
        checked.columns = columns.map(\.name)
        try tableStages(ast, stages, &checked, columns: columns, justReduced: justReduced)
        return checked
    }

    /// A `lints` query: its rows are the findings, a table whose columns every stage reads as a result's.
    private func lints(_ ast: QueryAST) throws(QueryError) -> CheckedQuery {
        var checked = CheckedQuery(
            ast: ast, source: .lints, filters: [], reduction: nil, rowColumns: [], tableStages: [], columns: [],
            explain: false)
        var stages = ast.stages[...]
        if let last = stages.last, case .explain = last.kind {
            checked.explain = true
            stages = stages.dropLast()
        }
        let columns = OnboardingLint.columns
        checked.rowColumns = columns.enumerated().map {
            BoundColumn(bound: .column($0.offset), name: $0.element.name, type: $0.element.type)
        }
        checked.columns = columns.map(\.name)
        try tableStages(ast, stages, &checked, columns: columns, justReduced: nil)
        return checked
    }

    /// The stages that read the rows of a result (or a listing, or the findings of `lints`): `where`, `sort`,
    /// `limit`, `select`, `versus` and further reductions, each over the columns of the stage before it.
    private func tableStages(
        _ ast: QueryAST, _ stages: ArraySlice<Stage>, _ checked: inout CheckedQuery,
        columns: [(name: String, type: QueryType)], justReduced: (by: [NamedExpr], tableStage: Int?)?
    ) throws(QueryError) {
        var columns = columns
        var justReduced = justReduced
        // 3. Table stages, further reductions among them, each reading the columns of the stage before it.
        for index in stages.indices {
            let stage = stages[index]
            let scope = Scope.table(columns)
            // The result column an expression of `sort` names; anything else is refused, a call that names no column
            // (`answer("goal")` while listing sessions) too, rather than saying what the function would need elsewhere.
            func columnIndex(_ expr: Expr, _ what: String) throws(QueryError) -> Int {
                let notAColumn = fail(
                    "\(what) takes column names", expr.range,
                    label: "columns: \(columns.map(\.name).joined(separator: ", "))")
                if case .call = expr.kind, !columns.contains(where: { $0.name == compactText(expr.range) }) {
                    throw notAColumn
                }
                guard case .column(let index) = try expression(expr, scope).0 else { throw notAColumn }
                return index
            }
            let reduced = justReduced
            justReduced = nil
            switch stage.kind {
            case .versus(let value):
                guard let reduced else {
                    throw fail(
                        "`versus` must come right after the reduction whose groups it compares", stage.keywordRange,
                        label: "e.g. `stats rate(completed) by variation | versus \"control\"`")
                }
                // The reduction gets a column of its groups' rows when it is `stats`: its columns change.
                var reductionColumns = columns
                let v: Versus
                if let i = reduced.tableStage, case .reduce(var reduction, _) = checked.tableStages[i] {
                    v = try versus(
                        value, keyword: stage.keywordRange, after: &reduction, by: reduced.by,
                        columns: &reductionColumns)
                    checked.tableStages[i] = .reduce(reduction, columns: reductionColumns.map(\.name))
                } else if var reduction = checked.reduction {
                    v = try versus(
                        value, keyword: stage.keywordRange, after: &reduction, by: reduced.by,
                        columns: &reductionColumns)
                    checked.reduction = reduction
                    checked.columns = reductionColumns.map(\.name)
                } else {
                    fatalError("a reduction was just checked")
                }
                checked.tableStages.append(.versus(v))
                columns = Array(zip(v.columns, v.types(keyType: reductionColumns[v.key].type)))
            case .where(let expr):
                checked.tableStages.append(.where(try predicate(expr, scope, what: "`where`")))
            case .sort(let keys):
                var sorted: [(column: Int, descending: Bool)] = []
                for key in keys { sorted.append((try columnIndex(key.expr, "`sort`"), key.descending)) }
                checked.tableStages.append(.sort(sorted))
            case .limit(let n):
                checked.tableStages.append(.limit(n))
            case .select(let items):
                var selected: [BoundColumn] = []
                for item in items { selected.append(try column(item, scope)) }
                try distinctNames(items.map { ($0.column, $0.range) })
                checked.tableStages.append(.select(selected))
                columns = selected.map { ($0.name, $0.type) }
            case .explain:
                throw fail("`explain` must be the last stage", stage.keywordRange)
            case .funnel, .paths:
                let word = compact(stage.keywordRange)
                guard index > 0 else {
                    throw fail("`\(word)` reads sessions; start the query with `sessions`", stage.keywordRange)
                }
                let which = word == "funnel" ? "a funnel" : "`paths`"
                throw fail(
                    "`\(word)` reads sessions; it cannot follow `\(compact(ast.stages[index - 1].keywordRange))`",
                    stage.keywordRange, label: "\(which) comes right after the `where` stages of `sessions`")
            case .count, .stats, .top, .histogram:
                // A further reduction: its fields are the columns of the rows before it.
                var next = columns
                guard let reduction = try reduction(stage, ast.source, scope, columns: &next) else { continue }
                checked.tableStages.append(.reduce(reduction, columns: next.map(\.name)))
                columns = next
                justReduced = (TypeChecker.keys(of: stage), checked.tableStages.count - 1)
            }
        }
        checked.outputColumns = columns.map(\.name)
    }

    /// The `by` keys of a reduction stage as written (none for `top` and `histogram`).
    static func keys(of stage: Stage) -> [NamedExpr] {
        switch stage.kind {
        case .count(let by), .stats(_, let by): by
        case .funnel(let spec): spec.by
        default: []
        }
    }

    /// Output column names must differ: JSON rows are objects keyed by them, and stages after a reduction find
    /// columns by name. Each name comes with the bytes that give it, or nil for a column the stage adds itself
    /// (`count`, `censored`, a funnel's `step`, …). The error points at the later of two named in the query.
    func distinctNames(_ names: [(name: String, range: Range<Int>?)]) throws(QueryError) {
        var seen: [String: Range<Int>?] = [:]
        for (name, range) in names {
            guard let earlier = seen[name] else {
                seen[name] = range
                continue
            }
            switch (earlier, range) {
            case (let a?, let b?):
                throw fail(
                    "two columns are named `\(name)`", a.lowerBound > b.lowerBound ? a : b,
                    label: "rename this one with `as`")
            case (let a?, nil), (nil, let a?):
                throw fail(
                    "two columns are named `\(name)`", a,
                    label: "the stage adds a column `\(name)` itself; rename this one with `as`")
            case (nil, nil):
                continue
            }
        }
    }

    static let defaultEventColumns: [BoundColumn] = [
        EventField.time, .seq, .session, .onboarding, .screen, .kind, .name,
        .element, .value,
    ].map { BoundColumn(bound: .event($0), name: $0.rawValue, type: $0.type) }
    static let defaultSessionColumns: [BoundColumn] = [
        SessionField.session, .onboarding, .started, .duration, .events,
        .furthestScreen, .exit,
    ].map { BoundColumn(bound: .session($0), name: $0.rawValue, type: $0.type) }

    private func column(_ item: NamedExpr, _ scope: Scope) throws(QueryError) -> BoundColumn {
        let (bound, type) = try expression(item.expr, scope)
        return BoundColumn(bound: bound, name: item.column, type: type)
    }

    private func reduction(
        _ stage: Stage, _ source: SourceKind, _ scope: Scope,
        columns: inout [(name: String, type: QueryType)]
    ) throws(QueryError) -> Reduction? {
        switch stage.kind {
        case .count(let by):
            let keys = try by.map { (k) throws(QueryError) in try column(k, scope) }
            columns = keys.map { ($0.name, $0.type) } + [("count", .number)]
            try distinctNames(by.map { ($0.column, $0.range) } + [("count", nil)])
            return .count(by: keys)
        case .stats(let calls, let by):
            let keys = try by.map { (k) throws(QueryError) in try column(k, scope) }
            // `ci(p)` gives two aggregates, each named after the call.
            var aggregates: [BoundAggregate] = []
            var named: [(name: String, range: Range<Int>?)] = by.map { ($0.column, $0.range) }
            for call in calls {
                for a in try aggregate(call, scope) {
                    aggregates.append(a)
                    named.append((a.name, call.namedRange))
                }
            }
            let censored = aggregates.contains { $0.argument?.readsDwell ?? false }
            columns = keys.map { ($0.name, $0.type) } + aggregates.map { ($0.name, $0.resultType) }
            if censored { columns.append(("censored", .number)) }
            try distinctNames(named + (censored ? [("censored", nil)] : []))
            return .stats(aggregates, by: keys, censored: censored)
        case .top(let n, let key):
            let bound = try column(key, scope)
            columns = [(bound.name, bound.type), ("count", .number)]
            try distinctNames([(key.column, key.range), ("count", nil)])
            return .top(n, bound)
        case .histogram(let value, let step):
            let (bound, type) = try expression(value, scope)
            guard type == .number || type == .duration || type == .answer else {
                // A time becomes a duration from a fixed instant: buckets of hours or days since then.
                let label =
                    type == .time
                    ? "for buckets in time, histogram a duration: `\(compact(value.range)) - @2026-11-01 step 1h`" : nil
                throw fail(
                    "`histogram` needs a number or a duration; this is \(type.withArticle)", value.range, label: label)
            }
            var width: Double = type == .duration ? 60_000_000 : 1
            if let step {
                switch step.kind {
                case .literal(.duration(let d)) where type == .duration && d > 0: width = Double(d)
                case .literal(.integer(let n)) where type != .duration && n > 0: width = Double(n)
                // At least the smallest normal Double and finite: a subnormal step overflowed bucket numbers.
                case .literal(.decimal(let n)) where type != .duration && n >= .leastNormalMagnitude && n.isFinite:
                    width = n
                default:
                    throw fail(
                        "`step` must be a positive \(type == .duration ? "duration" : "number") literal", step.range)
                }
            }
            columns = [("bucket", type == .answer ? .number : type), ("count", .number)]
            // Censored dwell is reported beside the buckets (rule 7).
            if bound.readsDwell { columns.append(("censored", .bool)) }
            // The column is named `bucket` in results; the name here (the expression as written) is for `explain`.
            let written = String(
                decoding: text.utf8.dropFirst(value.range.lowerBound).prefix(value.range.count), as: UTF8.self)
            return .histogram(BoundColumn(bound: bound, name: columnText(written.utf8), type: type), step: width)
        case .funnel(let spec):
            guard source == .sessions else {
                throw fail("`funnel` reads sessions; start the query with `sessions`", stage.keywordRange)
            }
            let funnel = try funnel(spec)
            columns = funnel.by.map { ($0.name, $0.type) }
            if !funnel.by.isEmpty { columns.append(("breakdown_step", .number)) }
            if funnel.steps.isEmpty {
                columns += [
                    ("step", .number), ("screen_cid", .string), ("sessions", .number), ("pct_of_first", .number),
                    ("pct_of_previous", .number), ("dropoff", .number), ("median_time", .duration),
                ]
            } else {
                columns += [
                    ("step", .number), ("name", .string), ("sessions", .number), ("pct_of_first", .number),
                    ("pct_of_previous", .number), ("dropoff", .number), ("mean_time", .duration),
                    ("median_time", .duration), ("p90_time", .duration),
                ]
            }
            try distinctNames(
                spec.by.map { ($0.column, $0.range) } + columns.dropFirst(spec.by.count).map { ($0.name, nil) })
            return .funnel(funnel)
        case .paths(let spec):
            guard source == .sessions else {
                throw fail("`paths` reads sessions; start the query with `sessions`", stage.keywordRange)
            }
            columns = BoundPaths.columns
            return .paths(try paths(spec))
        default:
            return nil
        }
    }

    private func funnel(_ spec: FunnelSpec) throws(QueryError) -> BoundFunnel {
        var steps: [BoundStep] = []
        for step in spec.steps { steps.append(try self.step(step, what: "a funnel step")) }
        if steps.isEmpty {
            if let range = spec.withinRange { throw fail("`within` needs funnel steps", range) }
            if let range = spec.modeRange { throw fail("`mode` needs funnel steps", range) }
        }
        if let range = spec.ignoringRanges.first, spec.mode != .strict {
            throw fail("`ignoring` applies to `mode strict` only", range)
        }
        // As for steps, a quoted name is any analytics name, known or not (`"navigation_failed"`).
        for (name, range) in zip(spec.ignoring, spec.ignoringRanges) where !TypeChecker.eventNames.contains(name) {
            guard isQuoted(range) else {
                let hint = Suggestions.didYouMean(name, in: TypeChecker.eventNames)
                throw fail(
                    "unknown event kind `\(name)`\(hint)", range,
                    label: "an event kind or analytics name; quote other names")
            }
            noteUnknownEventName(name, at: range)
        }
        let by = try spec.by.map { (k) throws(QueryError) in try column(k, .funnelBy) }
        return BoundFunnel(steps: steps, within: spec.within, mode: spec.mode, ignoring: Set(spec.ignoring), by: by)
    }

    /// A funnel step or the anchor of `paths`: an event kind or analytics name (a quoted one may be any name), with
    /// a condition on event fields; `what` names it in errors.
    func step(_ step: FunnelStep, what: String) throws(QueryError) -> BoundStep {
        if step.text.hasPrefix("\"") {
            noteUnknownEventName(step.event, at: step.eventRange)
        } else if !TypeChecker.eventNames.contains(step.event) {
            let hint = Suggestions.didYouMean(step.event, in: TypeChecker.eventNames)
            throw fail(
                "unknown event `\(step.event)`\(hint)", step.eventRange,
                label:
                    "\(what == "a funnel step" ? "a step" : "it") is an event kind or analytics name; quote other names"
            )
        }
        var condition: Bound?
        if let p = step.predicate { condition = try self.predicate(p, .step, what: what) }
        return BoundStep(event: step.event, predicate: condition, name: step.text)
    }

    /// Whether the query's bytes at `range` are a string literal.
    private func isQuoted(_ range: Range<Int>) -> Bool {
        let utf8 = text.utf8
        guard range.lowerBound >= 0, range.lowerBound < utf8.count else { return false }
        return utf8[utf8.index(utf8.startIndex, offsetBy: range.lowerBound)] == UInt8(ascii: "\"")
    }

    /// The aggregates of one call of `stats`: one, but for `ci(p [, level])`, whose two ends are two columns.
    private func aggregate(_ call: AggregateCall, _ scope: Scope) throws(QueryError) -> [BoundAggregate] {
        if call.function == "ci" { return try confidenceInterval(call, scope) }
        return [try singleAggregate(call, scope)]
    }

    /// `ci(p [, level])`: the two ends of the Wilson score interval of `rate(p)` (default level 0.95), as columns
    /// `ci_low` and `ci_high`, or `<as>_low` and `<as>_high` when the call is named.
    private func confidenceInterval(_ call: AggregateCall, _ scope: Scope) throws(QueryError) -> [BoundAggregate] {
        let args = call.arguments
        guard args.count == 1 || args.count == 2 else {
            throw fail(
                "`ci` takes 1 or 2 arguments, found \(args.count)", call.range,
                label: "ci(condition) or ci(condition, 0.9)")
        }
        let bound = try predicate(args[0], scope, what: "`ci`")
        var level = 0.95
        if args.count == 2 {
            let given: Double? =
                switch args[1].kind {
                case .literal(.decimal(let d)): d
                case .literal(.integer(let i)): Double(i)
                default: nil
                }
            guard let given, given > 0, given < 1 else {
                // `ci(p, 95)`: a percentage where a fraction belongs.
                let percent = given.map { $0 > 1 && $0 < 100 } ?? false
                throw fail(
                    "the level of `ci` must be a number literal between 0 and 1 (exclusive)", args[1].range,
                    label: percent ? "a level is a fraction: e.g. 0.95 for 95 %" : "e.g. ci(completed, 0.9)")
            }
            level = given
        }
        let named = call.namedRange != call.range
        let stem = named ? call.column + "_" : "ci_"
        return [
            BoundAggregate(
                function: .ciLow(level), argument: bound, name: stem + "low", argumentType: .bool, resultType: .number),
            BoundAggregate(
                function: .ciHigh(level), argument: bound, name: stem + "high", argumentType: .bool,
                resultType: .number),
        ]
    }

    private func singleAggregate(_ call: AggregateCall, _ scope: Scope) throws(QueryError) -> BoundAggregate {
        let name = call.function
        let args = call.arguments
        func arity(_ n: Int) throws(QueryError) {
            guard args.count == n else {
                throw fail("`\(name)` takes \(n) argument\(n == 1 ? "" : "s"), found \(args.count)", call.range)
            }
        }
        func numericArgument() throws(QueryError) -> (Bound, QueryType) {
            let (bound, type) = try expression(args[0], scope)
            guard type == .number || type == .duration || type == .answer else {
                throw fail(
                    "`\(name)` needs a number or a duration; `\(compact(args[0].range))` is \(type.withArticle)",
                    args[0].range)
            }
            return (bound, type)
        }
        func numericResult(_ type: QueryType) -> QueryType { type == .duration ? .duration : .number }
        switch name {
        case "count":
            if args.isEmpty {
                return BoundAggregate(function: .count, argument: nil, name: call.column, resultType: .number)
            }
            try arity(1)
            let (bound, type) = try expression(args[0], scope)
            return BoundAggregate(
                function: .countPresent, argument: bound, name: call.column, argumentType: type,
                resultType: .number)
        case "count_distinct":
            try arity(1)
            let (bound, type) = try expression(args[0], scope)
            return BoundAggregate(
                function: .countDistinct, argument: bound, name: call.column, argumentType: type,
                resultType: .number)
        case "sum", "avg", "p50", "p90", "p95", "p99":
            try arity(1)
            let (bound, type) = try numericArgument()
            let function: AggregateFunction =
                switch name {
                case "sum": .sum
                case "avg": .avg
                case "p50": .percentile(0.5)
                case "p90": .percentile(0.9)
                case "p95": .percentile(0.95)
                default: .percentile(0.99)
                }
            return BoundAggregate(
                function: function, argument: bound, name: call.column, argumentType: type,
                resultType: numericResult(type))
        case "percentile":
            try arity(2)
            let (bound, type) = try numericArgument()
            let q: Double? =
                switch args[1].kind {
                case .literal(.decimal(let d)): d
                case .literal(.integer(let i)): Double(i)
                default: nil
                }
            guard let q, q >= 0, q <= 1 else {
                throw fail(
                    "the quantile of `percentile` must be a number literal from 0 to 1", args[1].range,
                    label: "e.g. percentile(duration, 0.75)")
            }
            return BoundAggregate(
                function: .percentile(q), argument: bound, name: call.column, argumentType: type,
                resultType: numericResult(type))
        case "min", "max":
            try arity(1)
            let (bound, type) = try expression(args[0], scope)
            guard type != .bool else {
                throw fail(
                    "`\(name)` needs a number, duration, timestamp or string; `\(compact(args[0].range))` is a boolean",
                    args[0].range)
            }
            return BoundAggregate(
                function: name == "min" ? .min : .max, argument: bound, name: call.column,
                argumentType: type, resultType: type)
        case "rate":
            try arity(1)
            let bound = try predicate(args[0], scope, what: "`rate`")
            return BoundAggregate(
                function: .rate, argument: bound, name: call.column, argumentType: .bool,
                resultType: .number)
        default:
            // Names other tools use for aggregates Boardwalk has under another name.
            let synonyms = [
                "median": ("p50", "the median"), "mean": ("avg", "the mean"), "average": ("avg", "the mean"),
            ]
            let hint = Suggestions.didYouMean(name, in: AggregateFunction.names)
            // Such a name, or one close to it when no aggregate's name is (`medain` → `p50`).
            let synonym =
                synonyms[name.lowercased()] != nil
                ? name.lowercased()
                : hint.isEmpty ? Suggestions.closest(to: name, in: synonyms.keys.sorted()) : nil
            if let synonym, let (known, meaning) = synonyms[synonym] {
                throw fail(
                    "unknown aggregate `\(name)`; did you mean `\(known)`?", call.functionRange,
                    label: "`\(known)(…)` is \(meaning)")
            }
            throw fail("unknown aggregate `\(name)`\(hint)", call.functionRange)
        }
    }

    /// The query text of a byte range as a column name: ``columnText(_:)``.
    func compactText(_ range: Range<Int>) -> String {
        columnText(Array(text.utf8)[range.clamped(to: 0..<text.utf8.count)])
    }

    func compact(_ range: Range<Int>) -> String {
        let utf8 = Array(text.utf8)
        return String(decoding: utf8[range.clamped(to: 0..<utf8.count)], as: UTF8.self)
    }
}
