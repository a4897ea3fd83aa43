extension ClickHouseTranslator {
    /// `versus V` over the rows `from` (whose columns are `columns`, numbered in Boardwalk's order by `rn`): each
    /// group compared with the group `V` (rule 13), numbered `next` in Boardwalk's order. Rates, differences, lifts
    /// and the pooled z-test's p-value come from the same counts as in Boardwalk, and a row with under 5 successes or
    /// failures on a side gets the note instead of a p-value.
    mutating func versus(_ v: Versus, from: String, rn: String, next: String, columns: [Column]) throws(QueryError)
        -> (from: String, columns: [Column])
    {
        func wrap(_ lines: String) -> String { "(\n\(indent(lines))\n)" }
        let scope = ClickHouseExpressions.Scope.table(columns.map { ($0.sql, $0.type, $0.integer) })
        var expressions = ClickHouseExpressions(scope, text: query.ast.text)
        // The baseline test as `where` would write it.
        let isBaseline = expressions.truth(
            try expressions.translate(.compare(.equal, .column(v.key), .literal(v.baseline))))
        let key = columns[v.key]
        var head: [Column] = [(v.keyName, key.sql, key.type, key.integer)]
        // One row per (row, measure), with `__vi` (the measure's index), `__vm` (its name), `__vh` and `__vn`
        // (hits and trials), `__vbh` and `__vbn` (the baseline's, NULL when it lacks the measure), `__vbase`.
        let measured: String
        switch v.measures {
        case .rates(let rates, let rows):
            let n = columns[rows].sql
            func hits(_ rate: Versus.Rate) -> String {
                // A rate is hits / n in binary: n · rate is within far less than ½ of hits.
                "toInt64(round(ifNull(\(columns[rate.column].sql), 0) * \(n)))"
            }
            let base =
                rates.indices.map { "\(hits(rates[$0])) AS __vb\($0)" } + ["toInt64(\(n)) AS __vbn0"]
            let baseRow = wrap("SELECT \(base.joined(separator: ", "))\nFROM \(from)\nWHERE \(isBaseline)\nLIMIT 1")
            let joined = wrap(
                """
                SELECT t.*, b.*, \(isBaseline) AS __vbase
                FROM \(from) AS t
                CROSS JOIN \(baseRow) AS b
                """)
            let names = rates.map { ClickHouseExpressions.literal(.string($0.name)).sql }
            measured = wrap(
                """
                SELECT *, toInt64(\(n)) AS __vn, __vbn0 AS __vbn, __ai AS __vi, __am AS __vm, __ah AS __vh,
                    __abh AS __vbh
                FROM \(joined)
                ARRAY JOIN [\(rates.indices.map(String.init).joined(separator: ", "))] AS __ai,
                    [\(names.joined(separator: ", "))] AS __am,
                    [\(rates.map(hits).joined(separator: ", "))] AS __ah,
                    [\(rates.indices.map { "__vb\($0)" }.joined(separator: ", "))] AS __abh
                """)
        case .funnel(let step, let name, let sessions):
            let s = columns[sessions].sql
            let stepSQL = columns[step].sql
            head.append((columns[step].name, stepSQL, .number, true))
            if let name { head.append((columns[name].name, columns[name].sql, .string, false)) }
            // Each row with its group's first and previous step's sessions, and its place in the group.
            let group = "PARTITION BY \(key.sql) ORDER BY \(rn)"
            let windowed = wrap(
                """
                SELECT *,
                    toInt64(first_value(\(s)) OVER (\(group) ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)) AS __vf,
                    toInt64(lagInFrame(\(s)) OVER (\(group) ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)) AS __vp,
                    row_number() OVER (PARTITION BY \(key.sql) ORDER BY \(rn)) AS __vr,
                    \(isBaseline) AS __vbase
                FROM \(from)
                """)
            let base = wrap(
                """
                SELECT \(stepSQL) AS __vbs, toInt64(\(s)) AS __vbs_h, __vf AS __vbs_f, __vp AS __vbs_p, 1 AS __vbs_has
                FROM \(windowed)
                WHERE __vbase AND __vr > 1
                """)
            let joined = wrap(
                """
                SELECT t.*, b.*
                FROM \(windowed) AS t
                LEFT JOIN \(base) AS b ON t.\(stepSQL) = b.__vbs
                WHERE t.__vr > 1
                """)
            measured = wrap(
                """
                SELECT *, toInt64(\(s)) AS __vh, if(__vbs_has = 1, __vbs_h, NULL) AS __vbh, __ai AS __vi,
                    __am AS __vm, __an AS __vn, __abn AS __vbn
                FROM \(joined)
                ARRAY JOIN [0, 1] AS __ai, ['from_first', 'from_previous'] AS __am, [__vf, __vp] AS __an,
                    [if(__vbs_has = 1, __vbs_f, NULL), if(__vbs_has = 1, __vbs_p, NULL)] AS __abn
                """)
        }
        // No group has the baseline's key: an error, as in Boardwalk (the message's start is Boardwalk's).
        let missing = ClickHouseExpressions.literal(.string("no group of `\(v.keyName)` is the baseline")).sql
        // One row whatever the input (an aggregate without `GROUP BY`), on the right of the join so that it is read
        // even when there is nothing to compare.
        let check = wrap("SELECT throwIf(count() = 0, \(missing)) AS __vmissing\nFROM \(from)\nWHERE \(isBaseline)")
        let none = "__vbh IS NULL OR __vbn = 0 OR __vn = 0"
        let tooFew = ClickHouseExpressions.literal(.string(Versus.tooFew)).sql
        let few = "least(__vh, __vn - __vh, __vbh, __vbn - __vbh) < 5"
        let rate = "if(__vn = 0, NULL, __vh / __vn)"
        let baseRate = "(__vbh / __vbn)"
        // 2·P(Z > |z|) through `erfc`, as Boardwalk computes it: `proportionsZTest(…, 'pooled')` gives the same
        // test, but its p-value was 2.3e-9 off (relative) at p = 1.8e-8, past the differential test's 1e-9.
        let pooled = "((__vh + __vbh) / (__vn + __vbn))"
        let z = "(__vh / __vn - \(baseRate)) / sqrt(\(pooled) * (1 - \(pooled)) * (1 / __vn + 1 / __vbn))"
        let pValue = "erfc(abs(\(z)) / sqrt(2))"
        let compared = wrap(
            """
            SELECT *,
                \(rate) AS __vrate,
                if(__vbase OR \(none), NULL, __vh / __vn - \(baseRate)) AS __vdiff,
                if(__vbase OR \(none) OR __vbh = 0, NULL, (__vh / __vn - \(baseRate)) / \(baseRate)) AS __vlift,
                if(__vbase OR \(none) OR \(few), NULL, \(pValue)) AS __vpv,
                multiIf(__vbase, 'baseline', __vbh IS NULL, 'the baseline has no such step', __vbn = 0 OR __vn = 0,
                    'no sessions to compare', \(few), \(tooFew), NULL) AS __vnote,
                row_number() OVER (ORDER BY \(rn), __vi) AS \(next)
            FROM \(measured) AS __vrows
            CROSS JOIN \(check) AS __vcheck
            """)
        let tail: [Column] = [
            ("metric", "__vm", .string, false), ("n", "__vn", .number, true), ("hits", "__vh", .number, true),
            ("rate", "__vrate", .number, false), ("diff", "__vdiff", .number, false),
            ("lift", "__vlift", .number, false), ("p_value", "__vpv", .number, false),
            ("note", "__vnote", .string, false),
        ]
        return (compared, head + tail)
    }
}
