import BoardwalkJSON
import BoardwalkModel

extension ClickHouseTranslator {
    /// Funnel breakdown keys as tuple elements of the per-event array, and how to read them at a position; then the
    /// `FROM` of the per-session arrays: the events, beside their session's row when the filters (`inScope`) or a
    /// key read the sessions subquery (`by answer("goal")`, `by session.variation`), which is added here with every
    /// answer and `did` flag `e` (the filters' translator) and the keys read.
    private mutating func funnelKeys(
        _ by: [BoundColumn], _ e: inout ClickHouseExpressions, inScope: String?
    ) throws(QueryError) -> (elements: [String], types: [QueryType], columns: [Column], from: String) {
        var elements: [String] = []
        e.scope = .events
        defer { e.scope = .sessions }
        for k in by {
            switch try e.translate(k.bound) {
            case .answer(let a): elements.append(a.exploded)
            case .scalar(let s, _), .condition(let s): elements.append(s)
            }
        }
        let columns = by.enumerated().map { i, k in (k.name, "__k\(i)", k.type, e.isInteger(k.bound)) }
        var from = table
        if inScope != nil || e.readsSessions { addSessions(answers: e.answers, dids: e.dids) }
        if e.readsSessions { from += " LEFT JOIN bw_sessions ON session = bw_sessions.s_session" }
        return (elements, by.map(\.type), columns, from + (inScope.map { "\nWHERE \($0)" } ?? ""))
    }

    /// Percentages and drop-off from each group's step counts (`pct_of_first`, `pct_of_previous`: absent when
    /// the base is 0).
    private func funnelWindow(_ keyNames: [String]) -> String {
        let partition = keyNames.isEmpty ? "" : "PARTITION BY \(keyNames.joined(separator: ", ")) "
        let window = "(\(partition)ORDER BY step ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)"
        return
            "first_value(sessions) OVER \(window) AS __first, lagInFrame(sessions, 1, sessions) OVER \(window) AS __previous"
    }

    mutating func screenFunnel(
        _ f: BoundFunnel, _ inScope: String?, _ e: inout ClickHouseExpressions
    ) throws(QueryError) -> Core {
        let (elements, types, keyColumns, from) = try funnelKeys(f.by, &e, inScope: inScope)
        let tuple = (["toUnixTimestamp64Micro(time)", "seq", "screen", "total_screens", "screen_cid"] + elements)
            .joined(separator: ", ")
        ctes.append(
            (
                "fe",
                """
                SELECT session, arraySort(z -> (z.1, z.2), groupArray((\(tuple)))) AS a, arrayFirstIndex(z -> isNotNull(z.3), a) AS fp
                FROM \(from)
                GROUP BY session
                """
            ))
        let keyNames = f.by.indices.map { "__k\($0)" }
        let keySelects = elements.indices.map { i in
            types[i] == .answer ? "arrayJoin(a[fp].\(6 + i)) AS __k\(i)" : "a[fp].\(6 + i) AS __k\(i)"
        }
        // Steps (rule 3): the largest total_screens (or furthest index + 1) among the sessions in scope, or with
        // `by`, among the sessions of each group. `ss` is the session's own; `gs` the group's (or the scope's).
        // `cids`: the session's distinct screen client ids at the step's screen index.
        let sessionSteps = "arrayMax(z -> if(isNull(z.3), 0, greatest(ifNull(z.4, 0), z.3 + 1)), a) AS ss"
        ctes.append(
            (
                "fk",
                """
                SELECT \((keySelects + ["a", sessionSteps]).joined(separator: ", "))
                FROM fe
                WHERE fp > 0
                """
            ))
        let partition = keyNames.isEmpty ? "" : "PARTITION BY \(keyNames.joined(separator: ", "))"
        ctes.append(
            (
                "fs",
                """
                SELECT \((keyNames + ["i AS step", "arrayFirstIndex(z -> ifNull(z.3 >= i, false), a) AS r", "if(r > 0, a[r].1 - a[1].1, NULL) AS rt", "arrayDistinct(arrayMap(z -> assumeNotNull(z.5), arrayFilter(z -> ifNull(z.3 = i, false) AND isNotNull(z.5), a))) AS cids"]).joined(separator: ", "))
                FROM (SELECT *, max(ss) OVER (\(partition)) AS gs FROM fk)
                ARRAY JOIN range(toUInt64(gs)) AS i
                """
            ))
        let groupKeys = (keyNames + ["step"]).joined(separator: ", ")
        let windowColumns = funnelWindow(keyNames)
        let inner = """
            SELECT *, \(windowColumns)
            FROM (
                SELECT \(groupKeys), countIf(r > 0) AS sessions, quantileExactInclusiveOrNull(0.5)(rt) AS median_time,
                    groupArrayArray(cids) AS __cids
                FROM fs
                GROUP BY \(groupKeys)
            )
            """
        var columns = keyColumns
        var selects = keyNames
        if !f.by.isEmpty {
            selects.append("0 AS __breakdown")
            columns.append(("breakdown_step", "__breakdown", .number, true))
        }
        // The most frequent client id, ties to the smallest (bytes).
        let clientID =
            "if(empty(__cids), NULL, arraySort(x -> (-x.2, x.1), arrayMap(c -> (c, countEqual(__cids, c)), "
            + "arrayDistinct(__cids)))[1].1) AS screen_cid"
        selects += [
            "step", clientID, "sessions", "if(__first = 0, NULL, sessions * 100 / __first) AS pct_of_first",
            "if(__previous = 0, NULL, sessions * 100 / __previous) AS pct_of_previous",
            "__previous - sessions AS dropoff", "median_time",
        ]
        columns += [
            ("step", "step", .number, true), ("screen_cid", "screen_cid", .string, false),
            ("sessions", "sessions", .number, true),
            ("pct_of_first", "pct_of_first", .number, false), ("pct_of_previous", "pct_of_previous", .number, false),
            ("dropoff", "dropoff", .number, true), ("median_time", "median_time", .duration, false),
        ]
        let sql = "SELECT \(selects.joined(separator: ", "))\nFROM (\n\(indent(inner))\n)"
        let order = zip(keyNames, f.by).map { Self.sortTerm($0, $1.type, descending: false) } + ["step ASC"]
        return Core(columns: columns, select: sql, order: order)
    }

    /// The most steps of an `ordered` and of a `strict` funnel whose SQL a stock ClickHouse runs: the step
    /// aliases below nest, ClickHouse expands them inline, and past these (checked with chdb 4.4.0, default
    /// settings) the query tree passes `max_expanded_ast_elements` (500 000), and the time to analyze it grows
    /// about 5-8 times per step even on an empty table.
    static let mostOrderedSteps = 7, mostStrictSteps = 4

    mutating func customFunnel(
        _ f: BoundFunnel, _ inScope: String?, _ outer: inout ClickHouseExpressions
    ) throws(QueryError) -> Core {
        let n = f.steps.count
        let most = f.mode == .strict ? Self.mostStrictSteps : Self.mostOrderedSteps
        if f.mode != .any, n > most {
            let stage = query.ast.stages.first { if case .funnel = $0.kind { true } else { false } }
            throw QueryError(
                .type,
                "cannot translate to ClickHouse: \(f.mode == .ordered ? "an" : "a") \(f.mode.rawValue) funnel of "
                    + "\(n) steps: its SQL would pass ClickHouse's query size limit (at most \(most) steps translate)",
                at: stage?.range, in: query.ast.text, label: "run this funnel in Boardwalk, or split it")
        }
        var e = ClickHouseExpressions(.events, text: query.ast.text)
        var matches: [String] = []
        for step in f.steps {
            var m = Self.isEvent(step.event)
            if let p = step.predicate { m = "(\(m) AND \(e.truth(try e.translate(p))))" }
            matches.append(m)
        }
        let ignored =
            f.ignoring.isEmpty ? "false" : "(" + f.ignoring.sorted().map(Self.isEvent).joined(separator: " OR ") + ")"
        let (elements, types, keyColumns, from) = try funnelKeys(f.by, &outer, inScope: inScope)
        // Tuple: 1 time, 2 seq, 3…n+2 step matches, n+3 ignored, then the breakdown keys.
        let tuple = (["toUnixTimestamp64Micro(time)", "seq"] + matches + [ignored] + elements).joined(
            separator: ",\n        ")
        ctes.append(
            (
                "fe",
                """
                SELECT session, arraySort(z -> (z.1, z.2), groupArray((
                        \(tuple)))) AS a
                FROM \(from)
                GROUP BY session
                """
            ))
        func m(_ k: Int, _ i: String) -> String { "a[\(i)].\(k + 2)" }  // step k (1-based) matches at i
        let within: (String, String) -> String = { j, s in f.within.map { " AND a[\(j)].1 - a[\(s)].1 <= \($0)" } ?? ""
        }
        var selects: [String] = ["session", "a", "s", "arrayEnumerate(a) AS idx"]
        let keyAt: (String) -> [String] = { p in elements.indices.map { "a[\(p)].\(n + 4 + $0)" } }
        let best: String
        switch f.mode {
        case .ordered, .strict:
            // Every step-1 event is a start; per start, the positions each step can be reached at (r_k), then
            // back from the deepest level the positions that still lead there (b_k), and the lexicographically
            // first chain through them. The longest chain wins, ties to the earliest start (rule 4).
            let strict = f.mode == .strict
            if strict {
                // nx[i]: the first event after i that is not ignored; a strict chain's next step is at most there.
                selects.append("arrayMap(i -> arrayFirstIndex((z, k) -> k > i AND NOT z.\(n + 3), a, idx), idx) AS nx")
            }
            let follows: (String, String) -> String = { i, j in
                strict ? "\(i) < \(j) AND (nx[\(i)] = 0 OR \(j) <= nx[\(i)])" : "\(i) < \(j)"
            }
            selects.append("[s] AS r1")
            for k in stride(from: 2, through: n, by: 1) {
                selects.append(
                    "arrayFilter(j -> \(m(k, "j"))\(within("j", "s")) AND arrayExists(i -> \(follows("i", "j")), r\(k - 1)), idx) AS r\(k)"
                )
            }
            selects.append("(" + (1...n).map { "notEmpty(r\($0))" }.joined(separator: " + ") + ") AS lv")
            selects.append("r\(n) AS b\(n)")
            for k in stride(from: n - 1, through: 1, by: -1) {
                selects.append(
                    "if(lv = \(k), r\(k), arrayFilter(i -> arrayExists(j -> \(follows("i", "j")), b\(k + 1)), r\(k))) AS b\(k)"
                )
            }
            selects.append("s AS p1")
            for k in stride(from: 2, through: n, by: 1) {
                selects.append("if(lv >= \(k), arrayFirst(j -> \(follows("p\(k - 1)", "j")), b\(k)), 0) AS p\(k)")
            }
            let times = (1...n).map { k in k == 1 ? "toInt64(0)" : "if(p\(k) > 0, a[p\(k)].1 - a[s].1, toInt64(0))" }
            selects.append("[\(times.joined(separator: ", "))] AS times")
            ctes.append(
                (
                    "fc",
                    """
                    SELECT
                        \(selects.joined(separator: ",\n    "))
                    FROM fe
                    ARRAY JOIN arrayFilter(i -> \(m(1, "i")), arrayEnumerate(a)) AS s
                    """
                ))
            best = "argMin((lv, times, (\((keyAt("s") + ["0"]).joined(separator: ", ")))), (-lv, s))"
        case .any:
            // Every event matching any step anchors a window [t, t + D]; level k when steps 1…k each match in it.
            // Step k is done at the latest of steps 1…k's first times in the window, measured from step 1's.
            let inside = "a[i].1 >= a[s].1" + (f.within.map { " AND a[i].1 - a[s].1 <= \($0)" } ?? "")
            selects.append("arrayFilter(i -> \(inside), idx) AS w")
            for k in 1...n {
                selects.append("arrayFilter(i -> \(m(k, "i")), w) AS w\(k)")
                selects.append("if(notEmpty(w\(k)), a[w\(k)[1]].1, toInt64(0)) AS f\(k)")
            }
            selects.append(
                "("
                    + (1...n).map { k in "(" + (1...k).map { "notEmpty(w\($0))" }.joined(separator: " AND ") + ")" }
                    .joined(separator: " + ") + ") AS lv")
            selects.append("if(notEmpty(w1), w1[1], 0) AS fp")
            let times = (1...n).map { k in
                k == 1 ? "toInt64(0)" : "greatest(\((1...k).map { "f\($0)" }.joined(separator: ", "))) - f1"
            }
            selects.append("[\(times.joined(separator: ", "))] AS times")
            let anyStep = (1...n).map { m($0, "i") }.joined(separator: " OR ")
            ctes.append(
                (
                    "fc",
                    """
                    SELECT
                        \(selects.joined(separator: ",\n    "))
                    FROM fe
                    ARRAY JOIN arrayFilter(i -> \(anyStep), arrayEnumerate(a)) AS s
                    """
                ))
            best = "argMin((lv, times, (\((keyAt("if(fp > 0, fp, 1)") + ["0"]).joined(separator: ", ")))), (-lv, s))"
        }
        let keyNames = f.by.indices.map { "__k\($0)" }
        let keySelects = elements.indices.map { i in
            types[i] == .answer ? "arrayJoin(b.3.\(i + 1)) AS __k\(i)" : "b.3.\(i + 1) AS __k\(i)"
        }
        // Without `by`, the steps are listed even when no session is in scope (rule 11): one empty row keeps
        // every step's group alive without counting.
        let phantom =
            f.by.isEmpty ? "\n    UNION ALL\n    SELECT toUInt32(0) AS lv, CAST([], 'Array(Int64)') AS times" : ""
        ctes.append(
            (
                "fb",
                """
                SELECT \((keySelects + ["toUInt32(b.1) AS lv", "b.2 AS times"]).joined(separator: ", "))
                FROM (SELECT \(best) AS b FROM fc GROUP BY session)
                WHERE b.1 > 0\(phantom)
                """
            ))
        let names = "[" + f.steps.map { ClickHouseExpressions.string($0.name) }.joined(separator: ", ") + "]"
        let groupKeys = (keyNames + ["step"]).joined(separator: ", ")
        let windowColumns = funnelWindow(keyNames)
        let inner = """
            SELECT *, \(windowColumns)
            FROM (
                SELECT \(groupKeys), countIf(lv >= step) AS sessions,
                    avgOrNull(tk) AS mean_time,
                    quantileExactInclusiveOrNull(0.5)(tk) AS median_time,
                    quantileExactInclusiveOrNull(0.9)(tk) AS p90_time
                FROM (
                    SELECT *, k + 1 AS step, if(lv > k, times[k + 1], NULL) AS tk
                    FROM fb
                    ARRAY JOIN range(\(n)) AS k
                )
                GROUP BY \(groupKeys)
            )
            """
        var columns = keyColumns
        var outSelects = keyNames
        if !f.by.isEmpty {
            outSelects.append("1 AS __breakdown")
            columns.append(("breakdown_step", "__breakdown", .number, true))
        }
        outSelects += [
            "step", "\(names)[step] AS __name", "sessions",
            "if(__first = 0, NULL, sessions * 100 / __first) AS pct_of_first",
            "if(__previous = 0, NULL, sessions * 100 / __previous) AS pct_of_previous",
            "__previous - sessions AS dropoff", "mean_time", "median_time", "p90_time",
        ]
        columns += [
            ("step", "step", .number, true), ("name", "__name", .string, false),
            ("sessions", "sessions", .number, true),
            ("pct_of_first", "pct_of_first", .number, false), ("pct_of_previous", "pct_of_previous", .number, false),
            ("dropoff", "dropoff", .number, true), ("mean_time", "mean_time", .duration, false),
            ("median_time", "median_time", .duration, false), ("p90_time", "p90_time", .duration, false),
        ]
        let sql = "SELECT \(outSelects.joined(separator: ", "))\nFROM (\n\(indent(inner))\n)"
        let order = zip(keyNames, f.by).map { Self.sortTerm($0, $1.type, descending: false) } + ["step ASC"]
        return Core(columns: columns, select: sql, order: order)
    }
}
