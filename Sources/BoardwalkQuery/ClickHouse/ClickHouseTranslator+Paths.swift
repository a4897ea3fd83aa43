extension ClickHouseTranslator {
    /// An event's step label in a path (rule 14), as ``BoundPaths/label(_:)`` writes it.
    static let pathLabel = """
        multiIf(kind = 'analytics' AND name IN ('screen_presented', 'screen_completed') AND isNotNull(screen), \
        concat(name, '#', toString(assumeNotNull(screen))), \
        kind IN ('open_paywall', 'custom', 'close') AND ifNull(action, '') != '', \
        concat(kind, ':', assumeNotNull(action)), name)
        """

    /// `paths` (rule 14) over the sessions in scope: each session's events as a sorted array of (time, seq, label,
    /// anchor match); consecutive equal labels collapsed (`pc`), and the collapsed position of the first event that
    /// matches the anchor (`pr`: the run it belongs to); the path a slice of `pc`, its steps joined.
    mutating func paths(
        _ p: BoundPaths, _ inScope: String?, _ e: inout ClickHouseExpressions
    ) throws(QueryError) -> Core {
        var match = "false"
        switch p.anchor {
        case .after(let step), .before(let step):
            var steps = ClickHouseExpressions(.events, text: query.ast.text)
            match = Self.isEvent(step.event)
            if let predicate = step.predicate {
                match = "(\(match) AND \(steps.truth(try steps.translate(predicate))))"
            }
        case .start, .end:
            break
        }
        if inScope != nil { addSessions(answers: e.answers, dids: e.dids) }
        let from = table + (inScope.map { "\nWHERE \($0)" } ?? "")
        ctes.append(
            (
                "pe",
                """
                SELECT session, arraySort(z -> (z.1, z.2), \
                groupArray((toUnixTimestamp64Micro(time), seq, \(Self.pathLabel), \(match)))) AS pa
                FROM \(from)
                GROUP BY session
                """
            ))
        let depth = p.depth
        let slice: String
        let hasAnchor: String
        switch p.anchor {
        case .start:
            (slice, hasAnchor) = ("arraySlice(pc, 1, \(depth))", "length(pc) > 0")
        case .end:
            (slice, hasAnchor) = ("arraySlice(pc, greatest(1, toInt64(length(pc)) - \(depth - 1)))", "length(pc) > 0")
        case .after:
            (slice, hasAnchor) = ("arraySlice(pc, pr, \(depth + 1))", "pr > 0")
        case .before:
            let first = "greatest(1, toInt64(pr) - \(depth))"
            (slice, hasAnchor) = ("arraySlice(pc, \(first), toInt64(pr) - \(first) + 1)", "pr > 0")
        }
        ctes.append(
            (
                "pp",
                """
                SELECT arrayStringConcat(\(slice), \(ClickHouseExpressions.string(BoundPaths.separator))) AS path
                FROM (
                    SELECT
                        arrayMap(z -> z.3, pa) AS pl,
                        arrayFilter((x, i) -> i = 1 OR x != pl[i - 1], pl, arrayEnumerate(pl)) AS pc,
                        arrayCumSum(arrayMap((x, i) -> toUInt64(i = 1 OR x != pl[i - 1]), pl, arrayEnumerate(pl)))
                            AS runs,
                        arrayFirstIndex(z -> z.4, pa) AS pi,
                        if(pi = 0, 0, runs[pi]) AS pr
                    FROM pe
                )
                WHERE \(hasAnchor)
                """
            ))
        let sql = """
            SELECT path, count() AS sessions, sessions / sum(sessions) OVER () AS share
            FROM pp
            GROUP BY path
            """
        return Core(
            columns: [
                ("path", "path", .string, false), ("sessions", "sessions", .number, true),
                ("share", "share", .number, false),
            ],
            select: sql, order: ["sessions DESC", "path ASC"])
    }
}
