import BoardwalkJSON
import BoardwalkModel

/// Turns a checked query into one ClickHouse `SELECT` over the table of ``ClickHouseTable``.
///
/// The SQL is built from common table expressions: `dw` (dwell times, rule 7), `bw_sessions` (one row per session, the
/// `sessions` fields, rules 8–9), `fe` (each session's events as a sorted array, for funnels). Every
/// per-session computation sorts by `(time, seq)` (rule 1). Internal columns are `__c0`, `__c1`, … in
/// Boardwalk's units; the last `SELECT` names them as Boardwalk does and converts durations to seconds and
/// timestamps to `DateTime64(6, 'UTC')`. `docs/clickhouse.md` lists every place where the SQL compensates for a
/// difference between ClickHouse and the semantics.
struct ClickHouseTranslator {
    let query: CheckedQuery
    let table: String

    /// A result column: its name, internal SQL name and type, and whether Boardwalk's values in it are always
    /// 64-bit integers (`Value.integer`: counts, `sum`, `min` and `max` of integers, integer keys and listed
    /// integer expressions, a funnel's step numbers and session counts), so that table stages compute arithmetic
    /// on it exactly (``ClickHouseExpressions/isInteger(_:)``). The type checker's `number` covers both integers
    /// and other numbers; only the SQL needs the difference, where integer arithmetic wraps.
    typealias Column = (name: String, sql: String, type: QueryType, integer: Bool)

    /// A translated reduction (or listing): its columns, the query producing them, and the order Boardwalk lists
    /// its rows in.
    struct Core {
        var columns: [Column]
        var select: String
        var order: [String]
    }

    var ctes: [(name: String, sql: String)] = []
    /// Columns whose values are time buckets (`day(started)`), by SQL name, with the unit and zone they are shown
    /// in: the output shows them as Boardwalk does, as wall-clock dates.
    var buckets: [String: (unit: TimeUnit, zone: BucketZone)] = [:]
    /// The result's columns as the last ``translate()`` output them, after the table stages (tests compare
    /// their `integer` flags with the values Boardwalk computes).
    private(set) var resultColumns: [Column] = []

    init(query: CheckedQuery, table: String) {
        self.query = query
        self.table = ClickHouseTable.quotedIdentifier(table)
    }

    func fail(_ message: String) -> QueryError {
        QueryError(.type, "cannot translate to ClickHouse: \(message)", in: query.ast.text)
    }

    mutating func translate() throws(QueryError) -> String {
        if query.explain {
            let range = query.ast.stages.last?.keywordRange
            throw QueryError(
                .type,
                "cannot translate to ClickHouse: `explain` shows Boardwalk's own plan (key ranges of its store); it has no SQL",
                at: range, in: query.ast.text, label: "drop `| explain`")
        }
        if query.source == .lints {
            throw QueryError(
                .type,
                "cannot translate to ClickHouse: `lints` are Boardwalk's checks of the onboardings, read from its "
                    + "store; they have no SQL",
                at: query.ast.sourceRange, in: query.ast.text, label: "run it in Boardwalk, or use `boardwalk lint`")
        }
        var core = try reduction()
        var rn = ""
        var from = "(\n\(indent(core.select))\n)"
        // Each table stage wraps the previous query; `__rn…` numbers the rows in Boardwalk's order, so `sort`
        // is stable (ties keep the previous order) and `limit` takes the first rows.
        func wrap(_ lines: String) -> String { "(\n\(indent(lines))\n)" }
        if !query.tableStages.isEmpty {
            rn = "__rn0"
            from = wrap("SELECT *, row_number() OVER (ORDER BY \(orderList(core.order))) AS \(rn)\nFROM \(from)")
            var visible = core.columns
            for (n, stage) in query.tableStages.enumerated() {
                let scope = ClickHouseExpressions.Scope.table(visible.map { ($0.sql, $0.type, $0.integer) })
                var expressions = ClickHouseExpressions(scope, text: query.ast.text)
                switch stage {
                case .where(let p):
                    let condition = expressions.truth(try expressions.translate(p))
                    from = wrap("SELECT *\nFROM \(from)\nWHERE \(condition)")
                case .sort(let keys):
                    var terms: [String] = []
                    for key in keys {
                        let c = visible[key.column]
                        terms.append(Self.sortTerm(c.sql, c.type, descending: key.descending))
                    }
                    let next = "__rn\(n + 1)"
                    from = wrap(
                        "SELECT *, row_number() OVER (ORDER BY \(terms.joined(separator: ", ")), \(rn)) AS \(next)\nFROM \(from)"
                    )
                    rn = next
                case .limit(let n):
                    from = wrap("SELECT *\nFROM \(from)\nORDER BY \(rn)\nLIMIT \(n)")
                case .select(let selected):
                    var selects: [String] = []
                    var next: [Column] = []
                    for (i, column) in selected.enumerated() {
                        let sql = "__s\(n)_\(i)"
                        selects.append("\(try expressions.translate(column.bound).sql) AS \(sql)")
                        next.append((column.name, sql, column.type, expressions.isInteger(column.bound)))
                        noteBucket(sql, column.bound, expressions.scope)
                    }
                    from = wrap("SELECT *, \(selects.joined(separator: ", "))\nFROM \(from)")
                    visible = next
                case .reduce(let reduction, _):
                    // A reduction over the rows so far; its rows are numbered in its own order for the stages after.
                    let reduced = try reduce(
                        reduction, &expressions, conditions: [], from: .table(from), prefix: "__r\(n)_")
                    let next = "__rn\(n + 1)"
                    from = wrap(
                        "SELECT *, row_number() OVER (ORDER BY \(orderList(reduced.order))) AS \(next)\nFROM \(wrap(reduced.select))"
                    )
                    rn = next
                    visible = reduced.columns
                case .versus(let versus):
                    let next = "__rn\(n + 1)"
                    (from, visible) = try self.versus(versus, from: from, rn: rn, next: next, columns: visible)
                    rn = next
                }
            }
            core.columns = visible
            // `select … as` renames: the names the checker gave the result's columns.
            if visible.count == query.outputColumns.count {
                for i in core.columns.indices { core.columns[i].name = query.outputColumns[i] }
            }
        }
        resultColumns = core.columns
        var out = ""
        let answers = core.columns.filter { $0.type == .answer }.map { JSONString.quoted($0.name) }
        if !answers.isEmpty {
            // Answers mix strings, numbers and sets; ClickHouse gets them as JSON text (see the doc).
            out += "-- answer columns (JSON text): [\(answers.joined(separator: ", "))]\n"
        }
        if !ctes.isEmpty {
            out += "WITH\n" + ctes.map { "\($0.name) AS (\n\(indent($0.sql))\n)" }.joined(separator: ",\n") + "\n"
        }
        let outputs = core.columns.map { c in
            let shown = buckets[c.sql].map { ClickHouseExpressions.bucketText($0.unit, c.sql, $0.zone) }
            return "\(shown ?? Self.output(c.sql, c.type)) AS \(Self.name(c.name))"
        }
        out += "SELECT\n    " + outputs.joined(separator: ",\n    ") + "\nFROM \(from)\n"
        out += "ORDER BY " + (rn.isEmpty ? orderList(core.order) : rn)
        return out
    }

    // MARK: Names, units, order

    /// Records that the column `sql` holds time buckets when `bound` is a bucket or a bucket column of `scope`.
    mutating func noteBucket(_ sql: String, _ bound: Bound?, _ scope: ClickHouseExpressions.Scope) {
        switch bound {
        case .bucket(let unit, _, let zone)?:
            buckets[sql] = (unit, zone)
        case .column(let i)?:
            if case .table(let columns) = scope, i < columns.count, let shown = buckets[columns[i].sql] {
                buckets[sql] = shown
            }
        default:
            break
        }
    }

    /// A result column name as a ClickHouse identifier.
    static func name(_ s: String) -> String {
        "`" + s.replacing("\\", with: "\\\\").replacing("`", with: "\\`") + "`"
    }

    /// Internal values to what Boardwalk prints: durations in seconds, timestamps as `DateTime64(6, 'UTC')`.
    static func output(_ sql: String, _ type: QueryType) -> String {
        switch type {
        case .duration: "\(sql) / 1000000"
        case .time: "fromUnixTimestamp64Micro(toInt64(\(sql)), 'UTC')"
        default: sql
        }
    }

    func orderList(_ order: [String]) -> String { order.isEmpty ? "tuple()" : order.joined(separator: ", ") }

    /// Boardwalk sorts absent values last in both directions.
    static func sortTerm(_ sql: String, _ type: QueryType, descending: Bool) -> String {
        if type == .answer {
            return "isNull(\(sql)) ASC, \(SQLAnswer.order(sql)) \(descending ? "DESC" : "ASC")"
        }
        return "\(sql) \(descending ? "DESC" : "ASC") NULLS LAST"
    }

    func indent(_ s: String) -> String {
        s.split(separator: "\n", omittingEmptySubsequences: false).map { "    " + $0 }.joined(separator: "\n")
    }

    // MARK: Row sources

    /// The event predicate of an event kind or analytics name (`did`, funnel steps, `ignoring`).
    static func isEvent(_ name: String) -> String {
        let s = ClickHouseExpressions.string(name)
        return "(kind = \(s) OR name = \(s))"
    }

    static let terminal =
        "(kind IN ('open_paywall', 'close', 'error') OR (kind = 'analytics' AND name = 'onboarding_completed'))"

    /// Dwell of every event (rule 7): from a presentation to the session's next event at another screen index
    /// or its next terminal event; censored when there is neither.
    mutating func addDwell() {
        guard !ctes.contains(where: { $0.name == "dw" }) else { return }
        ctes.append(
            (
                "dw",
                """
                SELECT
                    a[i].2 AS dw_seq,
                    arrayFirstIndex((z, k) -> k > i AND (z.5 OR ifNull(z.3 != a[i].3, false)), a, arrayEnumerate(a)) AS dw_end,
                    if(a[i].4 AND dw_end > 0, toFloat64(a[dw_end].1 - a[i].1), NULL) AS dwell,
                    a[i].4 AND dw_end = 0 AS censored
                FROM (
                    SELECT arraySort(z -> (z.1, z.2), groupArray((toUnixTimestamp64Micro(time), seq, screen,
                        kind = 'analytics' AND name = 'screen_presented' AND isNotNull(screen), \(Self.terminal)))) AS a
                    FROM \(table)
                    GROUP BY session
                )
                ARRAY JOIN arrayEnumerate(a) AS i
                """
            ))
    }

    /// One row per session with every `sessions` field, plus the answers and `did` flags the query reads.
    mutating func addSessions(answers: [String], dids: [String]) {
        var fields = [
            "session AS s_session",
            "argMin(profile, (time, seq)) AS s_profile",
            "argMin(onboarding, (time, seq)) AS s_onboarding",
            "argMin(placement, (time, seq)) AS s_placement",
            "argMin(variation, (time, seq)) AS s_variation",
            "toUnixTimestamp64Micro(min(time)) AS s_started",
            "toUnixTimestamp64Micro(max(time)) AS s_ended",
            "toFloat64(s_ended - s_started) AS s_duration",
            "count() AS s_events",
            "max(screen) AS s_furthest_screen",
            "argMax(screen, (time, seq)) AS s_last_screen",
            "max(total_screens) AS s_total_screens",
            "countIf(kind = 'analytics' AND name = 'onboarding_completed') > 0 AS s_completed",
            "countIf(kind = 'open_paywall') > 0 AS s_paywall",
            "countIf(kind = 'close') > 0 AS s_closed",
            "countIf(kind = 'analytics' AND name = 'user_email_collected') > 0 AS s_email_collected",
            "if(countIf(\(Self.terminal)) = 0, 'abandoned', argMaxIf(multiIf(kind = 'analytics', 'completed', kind = 'open_paywall', 'paywall', kind = 'close', 'closed', 'error'), (time, seq), \(Self.terminal))) AS s_exit",
        ]
        for (i, element) in answers.enumerated() {
            fields.append(
                "argMaxIf(\(SQLAnswer.columns("value", dates: true).tuple), (time, seq), kind = 'state_updated' AND element = \(ClickHouseExpressions.string(element))) AS a\(i)"
            )
        }
        for (i, event) in dids.enumerated() {
            fields.append("countIf\(Self.isEvent(event)) > 0 AS d\(i)")
        }
        ctes.append(
            ("bw_sessions", "SELECT\n    " + fields.joined(separator: ",\n    ") + "\nFROM \(table)\nGROUP BY session"))
    }

    // MARK: Reductions

    /// Where the rows of a reduction come from: the query's source (events, or the sessions subquery, with its
    /// filters) or the result of the stages before it, as a subquery.
    enum Rows {
        case source
        case table(String)
    }

    /// The query's first reduction over its source, or its listed rows.
    mutating func reduction() throws(QueryError) -> Core {
        let isEvents = query.source == .events
        var expressions = ClickHouseExpressions(isEvents ? .events : .sessions, text: query.ast.text)
        var conditions: [String] = []
        for f in query.filters { conditions.append(expressions.truth(try expressions.translate(f))) }
        switch query.reduction {
        case nil:
            var columns: [Column] = []
            var selects: [String] = []
            for (i, c) in query.rowColumns.enumerated() {
                let v = try expressions.translate(c.bound)
                selects.append("\(v.sql) AS __c\(i)")
                columns.append((c.name, "__c\(i)", c.type, expressions.isInteger(c.bound)))
                noteBucket("__c\(i)", c.bound, expressions.scope)
            }
            let source = rowsSQL(.source, expressions)
            let hidden =
                isEvents
                ? ["toUnixTimestamp64Micro(time) AS __t", "seq AS __seq"] : ["s_started AS __t", "s_session AS __seq"]
            let filters = conditions.isEmpty ? "" : "\nWHERE " + conditions.joined(separator: "\n  AND ")
            return Core(
                columns: columns,
                select: "SELECT \((selects + hidden).joined(separator: ", "))\nFROM \(source)\(filters)",
                order: ["__t", "__seq"])
        case .funnel(let f):
            // Without filters every session is in scope, and the sessions subquery need not run for them.
            let inScope =
                conditions.isEmpty
                ? nil : "session IN (SELECT s_session FROM bw_sessions WHERE \(conditions.joined(separator: " AND ")))"
            return f.steps.isEmpty
                ? try screenFunnel(f, inScope, &expressions) : try customFunnel(f, inScope, &expressions)
        case .paths(let p):
            let inScope =
                conditions.isEmpty
                ? nil : "session IN (SELECT s_session FROM bw_sessions WHERE \(conditions.joined(separator: " AND ")))"
            return try paths(p, inScope, &expressions)
        case let reduction?:
            return try reduce(reduction, &expressions, conditions: conditions, from: .source, prefix: "__c")
        }
    }

    /// The `FROM` of a reduction's rows: the events table (joined with dwell when the query reads it), the
    /// sessions subquery with the answers and `did` flags `e` read, or a previous result.
    mutating func rowsSQL(_ rows: Rows, _ e: ClickHouseExpressions) -> String {
        switch rows {
        case .table(let sql):
            return sql
        case .source where query.source == .events:
            var from = table
            if query.readsDwell {
                addDwell()
                from = "\(table) AS e INNER JOIN dw ON e.seq = dw.dw_seq"
            }
            if e.readsSessions {
                // Each event beside its session's row: `session.completed` reads `s_completed`.
                addSessions(answers: e.answers, dids: e.dids)
                from += " LEFT JOIN bw_sessions ON session = bw_sessions.s_session"
            }
            return from
        case .source:
            addSessions(answers: e.answers, dids: e.dids)
            return "bw_sessions"
        }
    }

    /// `count`, `top`, `histogram` or `stats` over `rows` that pass `conditions`, its columns named
    /// `<prefix>0`, `<prefix>1`, … (a prefix of its own per reduction: ClickHouse resolves aliases before columns).
    mutating func reduce(
        _ reduction: Reduction, _ expressions: inout ClickHouseExpressions, conditions: [String], from rows: Rows,
        prefix: String
    ) throws(QueryError) -> Core {
        func whereClause(_ extra: [String] = []) -> String {
            let all = conditions + extra
            return all.isEmpty ? "" : "\nWHERE " + all.joined(separator: "\n  AND ")
        }
        func keys(_ by: [BoundColumn], _ e: inout ClickHouseExpressions) throws(QueryError) -> [(
            column: Column, select: String
        )] {
            var out: [(column: Column, select: String)] = []
            for (i, k) in by.enumerated() {
                let v = try e.translate(k.bound)
                let select: String = if case .answer(let a) = v { "arrayJoin(\(a.exploded))" } else { v.sql }
                out.append(((k.name, "\(prefix)\(i)", k.type, e.isInteger(k.bound)), select))
                noteBucket("\(prefix)\(i)", k.bound, e.scope)
            }
            return out
        }
        func keyOrder(_ ks: [(column: Column, select: String)]) -> [String] {
            ks.map { Self.sortTerm($0.column.sql, $0.column.type, descending: false) }
        }

        switch reduction {
        case .count(let by):
            let ks = try keys(by, &expressions)
            let source = rowsSQL(rows, expressions)
            let selects = ks.map { "\($0.select) AS \($0.column.sql)" } + ["count() AS \(prefix)\(ks.count)"]
            var sql = "SELECT \(selects.joined(separator: ", "))\nFROM \(source)\(whereClause())"
            if !ks.isEmpty { sql += "\nGROUP BY \(ks.map(\.column.sql).joined(separator: ", "))" }
            return Core(
                columns: ks.map(\.column) + [("count", "\(prefix)\(ks.count)", .number, true)],
                select: sql, order: keyOrder(ks))

        case .top(let n, let key):
            let ks = try keys([key], &expressions)
            let source = rowsSQL(rows, expressions)
            let order = ["\(prefix)1 DESC"] + keyOrder(ks)
            // Absent is not one of the most frequent values (rule 11).
            let sql =
                "SELECT \(ks[0].select) AS \(prefix)0, count() AS \(prefix)1\nFROM \(source)\(whereClause())\nGROUP BY \(prefix)0\nHAVING isNotNull(\(prefix)0)\nORDER BY \(order.joined(separator: ", "))\nLIMIT \(n)"
            return Core(
                columns: [
                    (ks[0].column.name, "\(prefix)0", ks[0].column.type, ks[0].column.integer),
                    ("count", "\(prefix)1", .number, true),
                ],
                select: sql, order: order)

        case .histogram(let value, let step):
            let v = try expressions.translate(value.bound)
            let w = ClickHouseExpressions.number(step)
            let (x, present): (String, String) =
                switch v {
                case .answer(let a): (a.number, "\(a.kind) = 'number'")
                case .scalar(let s, _), .condition(let s): ("toFloat64(\(s))", "isNotNull(\(s))")
                }
            // Decimal buckets as `HistogramBucket` computes them: a quotient this close to an integer is that
            // integer, and the start is rounded to the step's decimal digits.
            let q = "(\(x) / \(w))"
            let k = "if(abs(\(q) - round(\(q))) <= \(HistogramBucket.tolerance) * abs(\(q)), round(\(q)), floor(\(q)))"
            let digits = HistogramBucket.decimalDigits(of: step) ?? 0
            let bucket = digits == 0 ? "\(k) * \(w)" : "round(\(k) * \(w), \(digits))"
            let source = rowsSQL(rows, expressions)
            let type: QueryType = value.type == .duration ? .duration : .number
            var sql =
                "SELECT \(bucket) AS \(prefix)0, count() AS \(prefix)1\nFROM \(source)\(whereClause([present, "isFinite(\(x))"]))\nGROUP BY \(prefix)0"
            // A bucket's start is a `Double` in Boardwalk, even for integer values.
            var columns: [Column] = [("bucket", "\(prefix)0", type, false), ("count", "\(prefix)1", .number, true)]
            if value.bound.readsDwell {
                // Censored dwell is counted beside the buckets, in a last row without one (rule 7).
                sql =
                    "SELECT \(prefix)0, \(prefix)1, false AS \(prefix)2 FROM (\(sql))\nUNION ALL\n"
                    + "SELECT NULL, countIf(censored), true\nFROM \(source)\(whereClause())"
                columns.append(("censored", "\(prefix)2", .bool, false))
            }
            return Core(
                columns: columns, select: sql,
                order: ["\(prefix)2 ASC", "\(prefix)0 ASC"].filter { value.bound.readsDwell || $0 != "\(prefix)2 ASC" })

        case .stats(let aggregates, let by, let censored):
            let ks = try keys(by, &expressions)
            var selects = ks.map { "\($0.select) AS \($0.column.sql)" }
            var columns = ks.map(\.column)
            for a in aggregates {
                let name = "\(prefix)\(columns.count)"
                let argument = try a.argument.map { (b) throws(QueryError) in try expressions.translate(b) }
                selects.append("\(try aggregate(a, argument, &expressions)) AS \(name)")
                columns.append((a.name, name, a.resultType, Self.integerResult(a, expressions)))
                // The least or greatest bucket is a bucket.
                if a.function == .min || a.function == .max { noteBucket(name, a.argument, expressions.scope) }
            }
            if censored {
                let name = "\(prefix)\(columns.count)"
                selects.append("countIf(censored) AS \(name)")
                columns.append(("censored", name, .number, true))
            }
            let source = rowsSQL(rows, expressions)
            var sql = "SELECT \(selects.joined(separator: ", "))\nFROM \(source)\(whereClause())"
            if !ks.isEmpty { sql += "\nGROUP BY \(ks.map(\.column.sql).joined(separator: ", "))" }
            return Core(columns: columns, select: sql, order: keyOrder(ks))

        case .funnel, .paths:
            throw fail("a funnel or paths over the rows of a reduction")
        }
    }

    /// Whether Boardwalk's result of an aggregate is always a 64-bit integer (or absent): counts; `sum` of
    /// integers (absent past 64 bits, never a `Double`); `min` and `max` of integers, which are values of their
    /// argument. Averages, percentiles and rates are numbers even when whole.
    static func integerResult(_ a: BoundAggregate, _ e: ClickHouseExpressions) -> Bool {
        switch a.function {
        case .count, .countPresent, .countDistinct: true
        case .sum, .min, .max: a.argument.map(e.isInteger) ?? false
        case .avg, .percentile, .rate, .ciLow, .ciHigh: false
        }
    }

    /// One aggregate over the group's rows, with Boardwalk's results on no rows (rule 11: 0 for count-like
    /// aggregates, absent for the others) and its percentile (rule 6: `quantileExactInclusive`, which is the
    /// same linear interpolation between closest ranks).
    func aggregate(_ a: BoundAggregate, _ argument: SQLValue?, _ e: inout ClickHouseExpressions) throws(QueryError)
        -> String
    {
        // Numbers of an answer: only numeric answers count (non-numeric ones are skipped).
        func numeric(_ v: SQLValue) -> (value: String, condition: String?) {
            switch v {
            case .answer(let x): (x.number, "\(x.kind) = 'number'")
            case .scalar(let s, _), .condition(let s): ("toFloat64(\(s))", nil)
            }
        }
        func call(_ function: String, _ v: SQLValue, _ parameters: String = "") -> String {
            let (value, condition) = numeric(v)
            if let condition { return "\(function)IfOrNull\(parameters)(\(value), \(condition))" }
            return "\(function)OrNull\(parameters)(\(value))"
        }
        switch a.function {
        case .count:
            return "count()"
        case .countPresent:
            return "countIf(\(argument!.presence))"
        case .countDistinct:
            if case .answer(let x) = argument! { return "uniqExactArray(\(x.items))" }
            return "uniqExact(\(argument!.sql))"
        case .sum:
            if let bound = a.argument, e.isInteger(bound) {
                // Exact, as Boardwalk adds integers: in 128 bits, then absent past 64 (0 over no rows).
                return ClickHouseExpressions.exactInteger("ifNull(sumOrNull(toInt128(\(argument!.sql))), toInt128(0))")
            }
            return "ifNull(\(call("sum", argument!)), 0)"
        case .avg:
            return call("avg", argument!)
        case .percentile(let q):
            return call("quantileExactInclusive", argument!, "(\(ClickHouseExpressions.number(q)))")
        case .min, .max:
            let function = a.function == .min ? "min" : "max"
            guard case .answer(let x) = argument! else { return "\(function)OrNull(\(argument!.sql))" }
            // Boardwalk orders values numbers < strings < sets: min takes the first shape present, max the last.
            let shapes = [("number", x.number), ("string", x.string), ("set", x.set)]
            let ordered = a.function == .min ? shapes : shapes.reversed()
            let branches = ordered.map { shape, value in
                "countIf(\(x.kind) = '\(shape)') > 0, toJSONString(\(function)If(\(value), \(x.kind) = '\(shape)'))"
            }
            return "multiIf(\(branches.joined(separator: ", ")), NULL)"
        case .rate:
            return "if(count() = 0, NULL, countIf(\(e.truth(argument!))) / count())"
        case .ciLow(let level), .ciHigh(let level):
            return Self.wilson(successes: "countIf(\(e.truth(argument!)))", low: a.function == .ciLow(level), level)
        }
    }

    /// One end of the Wilson score interval of `successes` of the group's rows, as Boardwalk computes it
    /// (``Statistics/wilsonInterval(successes:trials:level:)``); the normal quantile is a constant of the query.
    static func wilson(successes: String, low: Bool, _ level: Double) -> String {
        let z = ClickHouseExpressions.number(Statistics.normalQuantile(1 - (1 - level) / 2))
        let p = "(\(successes) / count())"
        let n = "count()"
        let center = "(\(p) + \(z) * \(z) / (2 * \(n))) / (1 + \(z) * \(z) / \(n))"
        let half =
            "\(z) / (1 + \(z) * \(z) / \(n)) * sqrt(\(p) * (1 - \(p)) / \(n) + \(z) * \(z) / (4 * \(n) * \(n)))"
        // Exactly 0 at no successes and 1 at all, as Boardwalk gives them (computed, they can miss by a rounding).
        let end =
            low
            ? "if(\(successes) = 0, 0, greatest(0, \(center) - \(half)))"
            : "if(\(successes) = count(), 1, least(1, \(center) + \(half)))"
        return "if(count() = 0, NULL, \(end))"
    }
}
