extension TypeChecker {
    /// The column a `stats` followed by `versus` adds for each group's number of rows, the trials of its rates.
    /// No query can name it (`as` takes identifiers, and no aggregate is called `rows`), and `versus` replaces the
    /// table it is in.
    static let versusRowsColumn = "rows()"

    /// `versus V` after `reduction` (the stage right before it, of which `by` are the keys as written), whose output
    /// columns are `columns`: which columns hold the group key, the rates to compare and their trials. A `stats`
    /// reduction gets a count of its groups' rows added (``versusRowsColumn``), so `reduction` and `columns` change.
    func versus(
        _ value: Expr, keyword: Range<Int>, after reduction: inout Reduction, by: [NamedExpr],
        columns: inout [(name: String, type: QueryType)]
    ) throws(QueryError) -> Versus {
        let keys: [BoundColumn]
        switch reduction {
        case .stats(_, let k, _): keys = k
        case .funnel(let f): keys = f.by
        case .count, .top, .histogram, .paths:
            throw fail(
                "`versus` compares rates; it follows `stats … by k` with a `rate(…)`, or `funnel … by k`",
                keyword)
        }
        guard keys.count == 1 else {
            if keys.isEmpty {
                throw fail(
                    "`versus` compares the groups of a `by`; this reduction has none", keyword,
                    label: "e.g. `stats rate(completed) by variation | versus \"control\"`")
            }
            throw fail(
                "`versus` compares the groups of one key; this reduction is by \(keys.count) keys",
                by.count > 1 ? by[1].range : keyword, label: "group by one key (or `where` the others first)")
        }
        let key = keys[0]
        let baseline = try versusBaseline(value, key: key)
        let measures: Versus.Measures
        switch reduction {
        case .stats(var aggregates, let k, let censored):
            let rates = aggregates.enumerated().filter { $0.element.function == .rate }
            guard !rates.isEmpty else {
                throw fail(
                    "`versus` compares rates; this `stats` has no `rate(…)`", keyword,
                    label: "e.g. `stats rate(completed) by \(key.name) | versus …`")
            }
            // The rows column goes after the aggregates, before any `censored`.
            let rowsIndex = 1 + aggregates.count
            aggregates.append(
                BoundAggregate(function: .count, argument: nil, name: Self.versusRowsColumn, resultType: .number))
            columns.insert((Self.versusRowsColumn, .number), at: rowsIndex)
            reduction = .stats(aggregates, by: k, censored: censored)
            measures = .rates(rates.map { Versus.Rate(column: 1 + $0.offset, name: $0.element.name) }, rows: rowsIndex)
        case .funnel(let f):
            let names = columns.map(\.name)
            measures = .funnel(
                step: names.firstIndex(of: "step")!, name: f.steps.isEmpty ? nil : names.firstIndex(of: "name"),
                sessions: names.firstIndex(of: "sessions")!)
        default:
            fatalError("checked above")
        }
        let versus = Versus(
            baseline: baseline, baselineRange: value.range, key: 0, keyName: key.name, measures: measures)
        try distinctNames([(key.name, by.first?.range)] + versus.columns.dropFirst().map { ($0, nil) })
        return versus
    }

    /// The literal naming the baseline group, of a type the key's values can have.
    private func versusBaseline(_ value: Expr, key: BoundColumn) throws(QueryError) -> Value {
        let literal: Value
        let type: QueryType
        switch value.kind {
        case .literal:
            guard case (.literal(let v), let t) = try expression(value, .events) else { fatalError("a literal") }
            (literal, type) = (v, t)
        case .negate(let inner):
            guard case .literal(let l) = inner.kind, case (.literal, let t) = try expression(inner, .events)
            else {
                throw fail("`versus` takes the key of one group, a literal", value.range)
            }
            switch l {
            case .integer(let i): (literal, type) = (.integer(-i), t)
            case .decimal(let d): (literal, type) = (.number(-d), t)
            default: throw fail("`versus` takes the key of one group, a literal", value.range)
            }
        default:
            throw fail(
                "`versus` takes the key of one group, a literal", value.range, label: "e.g. `versus \"control\"`")
        }
        let fits =
            switch key.type {
            case .answer: type == .string || type == .number || type == .bool
            default: type == key.type
            }
        guard fits else {
            throw fail(
                "`versus` names a group of `\(key.name)`, which is \(key.type.withArticle); "
                    + "this is \(type.withArticle)",
                value.range)
        }
        return literal
    }
}
