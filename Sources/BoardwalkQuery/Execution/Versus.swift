/// `versus V`: each group of a reduction by one key compared with the group whose key is `V` (semantics rule 13):
/// for every rate of `stats`, and for every funnel step's conversion from the first step and from the previous
/// one, the difference from the baseline, the relative lift and the two-sided p-value of the pooled two-proportion
/// z-test.
struct Versus: Hashable, Sendable {
    /// A rate column of `stats`.
    struct Rate: Hashable, Sendable {
        var column: Int
        var name: String
    }

    /// What is compared, and where the counts are in the reduction's rows.
    enum Measures: Hashable, Sendable {
        /// `stats`: its rate columns, each a share of the group's rows (the column `rows`).
        case rates([Rate], rows: Int)
        /// A funnel: the sessions of each step, the step's number and, for custom steps, its name.
        case funnel(step: Int, name: Int?, sessions: Int)
    }

    /// The key of the baseline group.
    var baseline: Value
    /// The bytes of the baseline's literal, for the error when no group has it.
    var baselineRange: Range<Int>
    /// The key column of the reduction's rows.
    var key: Int
    var keyName: String
    var measures: Measures

    static let tooFew = "too few for the test: under 5 successes or failures on a side"

    /// The columns of the comparison: the key, the step (and its name) for funnels, then the measure.
    var columns: [String] {
        var names = [keyName]
        if case .funnel(_, let name, _) = measures { names += name == nil ? ["step"] : ["step", "name"] }
        return names + ["metric", "n", "hits", "rate", "diff", "lift", "p_value", "note"]
    }

    func types(keyType: QueryType) -> [QueryType] {
        var types = [keyType]
        if case .funnel(_, let name, _) = measures { types += name == nil ? [.number] : [.number, .string] }
        return types + [.string, .number, .number, .number, .number, .number, .number, .string]
    }

    /// One measure of one group: `hits` of `n`, against the baseline's.
    struct Counts: Hashable {
        var hits: Int
        var n: Int
    }

    /// The comparison columns from `n` on, for `counts` against `base` (nil: the baseline has no such measure).
    static func compare(_ counts: Counts, _ base: Counts?, isBaseline: Bool) -> [Value] {
        let rate: Value = counts.n == 0 ? .null : .number(Double(counts.hits) / Double(counts.n))
        var out: [Value] = [.integer(Int64(counts.n)), .integer(Int64(counts.hits)), rate]
        if isBaseline { return out + [.null, .null, .null, .string("baseline")] }
        guard let base, base.n > 0, counts.n > 0, case .number(let r) = rate else {
            let note = base == nil ? "the baseline has no such step" : "no sessions to compare"
            return out + [.null, .null, .null, .string(note)]
        }
        let baseRate = Double(base.hits) / Double(base.n)
        out += [.number(r - baseRate), baseRate == 0 ? .null : .number((r - baseRate) / baseRate)]
        guard Statistics.hasEnoughForZTest(counts.hits, counts.n, base.hits, base.n),
            let test = Statistics.twoProportionZTest(counts.hits, counts.n, base.hits, base.n)
        else {
            return out + [.null, .string(tooFew)]
        }
        return out + [.number(test.p), .null]
    }

    /// The comparison table of the reduction's rows.
    /// - Throws: a `.type` error at the baseline's literal when no group has that key, naming those there are.
    /// - Complexity: O(rows).
    func apply(_ table: ResultTable, query: String) throws(QueryError) -> ResultTable {
        switch measures {
        case .rates(let rates, let rows):
            guard let base = table.rows.first(where: { Value.queryEqual($0[key], baseline) }) else {
                throw missingBaseline(table, query: query)
            }
            func counts(_ row: [Value], _ rate: Rate) -> Counts {
                let n = Int(row[rows].intValue ?? 0)
                // A rate is hits / n computed in binary: n · rate is within far less than ½ of hits.
                let hits = Int(((row[rate.column].doubleValue ?? 0) * Double(n)).rounded())
                return Counts(hits: hits, n: n)
            }
            var out: [[Value]] = []
            for row in table.rows {
                let isBaseline = Value.queryEqual(row[key], baseline)
                for rate in rates {
                    out.append(
                        [row[key], .string(rate.name)]
                            + Self.compare(counts(row, rate), counts(base, rate), isBaseline: isBaseline))
                }
            }
            return ResultTable(columns: columns, rows: out)
        case .funnel(let step, let name, let sessions):
            // Each group's steps, in the funnel's order.
            var groups: [(key: Value, rows: [[Value]])] = []
            for row in table.rows {
                if let last = groups.indices.last, groups[last].key == row[key] {
                    groups[last].rows.append(row)
                } else {
                    groups.append((row[key], [row]))
                }
            }
            guard let base = groups.first(where: { Value.queryEqual($0.key, baseline) }) else {
                throw missingBaseline(table, query: query)
            }
            func conversions(_ rows: [[Value]]) -> [Value: (first: Counts, previous: Counts)] {
                var out: [Value: (first: Counts, previous: Counts)] = [:]
                guard let first = rows.first else { return out }
                let start = Int(first[sessions].intValue ?? 0)
                for i in rows.indices.dropFirst() {
                    let hits = Int(rows[i][sessions].intValue ?? 0)
                    out[rows[i][step]] = (
                        Counts(hits: hits, n: start), Counts(hits: hits, n: Int(rows[i - 1][sessions].intValue ?? 0))
                    )
                }
                return out
            }
            let baseSteps = conversions(base.rows)
            var out: [[Value]] = []
            for group in groups {
                let isBaseline = Value.queryEqual(group.key, baseline)
                let steps = conversions(group.rows)
                for row in group.rows.dropFirst() {
                    guard let c = steps[row[step]] else { continue }
                    let b = baseSteps[row[step]]
                    let head = [row[key], row[step]] + (name.map { [row[$0]] } ?? [])
                    out.append(head + [.string("from_first")] + Self.compare(c.first, b?.first, isBaseline: isBaseline))
                    out.append(
                        head + [.string("from_previous")]
                            + Self.compare(c.previous, b?.previous, isBaseline: isBaseline))
                }
            }
            return ResultTable(columns: columns, rows: out)
        }
    }

    private func missingBaseline(_ table: ResultTable, query: String) -> QueryError {
        var groups: [String] = []
        for row in table.rows where !row[key].isNull {
            let text = Value.tableText(row[key])
            if groups.last != text, !groups.contains(text) { groups.append(text) }
        }
        let shown = Value.tableText(baseline)
        let hint = Suggestions.didYouMean(shown, in: groups)
        let listed = groups.prefix(20).map { "`\($0)`" }.joined(separator: ", ") + (groups.count > 20 ? ", …" : "")
        return QueryError(
            .type, "no group of `\(keyName)` is `\(shown)`\(hint)", at: baselineRange, in: query,
            label: groups.isEmpty ? "the result has no groups" : "groups: \(listed)")
    }
}
