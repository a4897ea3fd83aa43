import BoardwalkModel

/// An expression translated to ClickHouse SQL.
///
/// Scalars keep Boardwalk's units inside the SQL: timestamps as `Int64` microseconds since the epoch, durations
/// as microseconds; only the final `SELECT` converts them (seconds for durations, `DateTime64` for timestamps),
/// so comparisons and arithmetic between stages stay exact. An answer (rule 9) is four expressions: its shape
/// (`''` absent, `'string'`, `'number'`, `'set'`) and one per shape, and a fifth, the instant of a whole date (a
/// date picker's string answer that names a calendar day), `NULL` for any other answer.
enum SQLValue {
    case scalar(String, QueryType)
    /// A boolean that is never `NULL` (comparisons, `and`, `or`, `not`, `in`).
    case condition(String)
    case answer(SQLAnswer)

    var type: QueryType {
        switch self {
        case .scalar(_, let t): t
        case .condition: .bool
        case .answer: .answer
        }
    }

    /// The scalar's SQL; an answer as its JSON text (`NULL` when absent).
    var sql: String {
        switch self {
        case .scalar(let s, _), .condition(let s): s
        case .answer(let a): a.jsonText
        }
    }

    /// The value as an instant in microseconds: a timestamp's, or an answer's date (`NULL` for other answers).
    var instant: String {
        if case .answer(let a) = self { a.date } else { sql }
    }

    /// SQL that is true exactly when the value is present.
    var presence: String {
        switch self {
        case .scalar(let s, _): "isNotNull(\(s))"
        case .condition: "true"
        case .answer(let a): "(\(a.kind) != '')"
        }
    }
}

/// An answer as four SQL expressions (see ``SQLValue``).
struct SQLAnswer {
    var kind: String
    var string: String
    var number: String
    var set: String
    /// Microseconds since the epoch of a whole date (Boardwalk's `Value.dateAnswer`), else `NULL`.
    var date = SQLAnswer.noDate

    static let noDate = "CAST(NULL, 'Nullable(Int64)')"

    /// The answer columns of the events table; `dates` when they may hold a date picker's answer (`value`).
    static func columns(_ prefix: String, number: Bool = true, dates: Bool = false) -> SQLAnswer {
        SQLAnswer(
            kind: "\(prefix)_kind", string: "\(prefix)_string",
            number: number ? "\(prefix)_number" : "CAST(NULL, 'Nullable(Float64)')", set: "\(prefix)_set",
            date: dates ? date(kind: "\(prefix)_kind", text: "\(prefix)_string", elementType: "element_type") : noDate)
    }

    /// From a tuple `(kind, string, number, set, date)` (``tuple``).
    static func tuple(_ t: String) -> SQLAnswer {
        SQLAnswer(kind: "\(t).1", string: "\(t).2", number: "\(t).3", set: "\(t).4", date: "\(t).5")
    }

    /// The instant, in microseconds, of the date a date picker's answer `text` names when it is whole (year 1 to
    /// 9999, month and day on the calendar, as `YYYY-MM-DD`), else `NULL`: days from the civil date as
    /// `Timestamp.days(fromCivil:)` counts them (ClickHouse's own dates stop at 1900 and 2299).
    static func date(kind: String, text: String, elementType: String) -> String {
        let y = "toInt64OrZero(substring(\(text), 1, 4))", m = "toInt64OrZero(substring(\(text), 6, 2))"
        let d = "toInt64OrZero(substring(\(text), 9, 2))"
        let leap = "((\(y) % 4 = 0 AND \(y) % 100 != 0) OR \(y) % 400 = 0)"
        let monthDays = "multiIf(\(m) = 2, if(\(leap), 29, 28), \(m) IN (4, 6, 9, 11), 30, 31)"
        let whole =
            "\(kind) = 'string' AND \(elementType) = 'date_picker' AND match(\(text), '^[0-9]{4}-[0-9]{2}-[0-9]{2}$') "
            + "AND \(y) >= 1 AND \(m) BETWEEN 1 AND 12 AND \(d) BETWEEN 1 AND \(monthDays)"
        let shifted = "(\(y) - if(\(m) <= 2, 1, 0))"
        let era = "intDiv(\(shifted), 400)", yoe = "(\(shifted) - intDiv(\(shifted), 400) * 400)"
        let doy = "(intDiv(153 * (\(m) + if(\(m) > 2, -3, 9)) + 2, 5) + \(d) - 1)"
        let doe = "(\(yoe) * 365 + intDiv(\(yoe), 4) - intDiv(\(yoe), 100) + \(doy))"
        return "if(ifNull(\(whole), false), toInt64((\(era) * 146097 + \(doe) - 719468) * 86400000000), NULL)"
    }

    /// From its JSON text (a result column): `"x"` a string, `[…]` a set, anything else a number.
    static func json(_ c: String) -> SQLAnswer {
        // Arrays cannot be Nullable in ClickHouse, so the text is read through `ifNull(c, '')`.
        let t = "ifNull(\(c), '')"
        return SQLAnswer(
            kind: "multiIf(isNull(\(c)), '', startsWith(\(t), '['), 'set', startsWith(\(t), '\"'), 'string', 'number')",
            string: "if(startsWith(\(t), '\"'), JSONExtractString(\(t)), NULL)",
            number: "toFloat64OrNull(\(c))",
            set: "if(startsWith(\(t), '['), JSONExtract(\(t), 'Array(String)'), [])",
            // A result column keeps only the text: a string shaped like a whole date is read as one.
            date: date(
                kind: "if(startsWith(\(t), '\"'), 'string', '')", text: "JSONExtractString(\(t))",
                elementType: "'date_picker'"))
    }

    var tuple: String { "(\(kind), \(string), \(number), \(set), \(date))" }

    /// The whole answer as JSON text: `"pro"`, `3.5`, `["a","b"]`; `NULL` when absent.
    var jsonText: String {
        "multiIf(\(kind) = 'string', toJSONString(\(string)), \(kind) = 'number', toJSONString(\(number)), "
            + "\(kind) = 'set', toJSONString(\(set)), NULL)"
    }

    /// The values a group key takes (rule 9: a set explodes into its options; an empty set or no answer is
    /// the absent key), each as JSON text.
    var exploded: String {
        "multiIf(\(kind) = 'string', [toJSONString(\(string))], \(kind) = 'number', [toJSONString(\(number))], "
            + "\(kind) = 'set' AND notEmpty(\(set)), arrayMap(x -> toJSONString(x), \(set)), [NULL])"
    }

    /// Distinct-counting items: an answer's value, or each option of a set, as JSON text.
    var items: String {
        "multiIf(\(kind) = 'string', [toJSONString(\(string))], \(kind) = 'number', [toJSONString(\(number))], "
            + "\(kind) = 'set', arrayMap(x -> toJSONString(x), \(set)), [])"
    }

    /// A sort key reproducing Boardwalk's order of values (numbers, then strings, then sets; absent last).
    static func order(_ c: String) -> String {
        "(multiIf(isNull(\(c)), 5, startsWith(\(c), '['), 4, startsWith(\(c), '\"'), 2, 1), toFloat64OrNull(\(c)), "
            + "JSONExtractString(ifNull(\(c), '')), JSONExtract(ifNull(\(c), '[]'), 'Array(String)'))"
    }
}

/// Translates bound expressions in one scope.
struct ClickHouseExpressions {
    enum Scope {
        /// A row of the events table (`dwell` and `censored` joined in when the query reads dwell).
        case events
        /// A row of the sessions subquery: `s_<field>`, answers `a<i>`, `did` flags `d<i>`.
        case sessions
        /// Result columns, by internal name and type; `integer` when every value the column holds is a 64-bit
        /// integer in Boardwalk (``ClickHouseTranslator/Column``), so arithmetic on it is exact as on fields.
        case table([(sql: String, type: QueryType, integer: Bool)])
    }

    var scope: Scope
    /// Elements read by `answer(…)` and events read by `did(…)`, in order of first use (sessions scope).
    var answers: [String] = []
    var dids: [String] = []
    /// Whether an `events` expression read a property of the event's session (`session.completed`): the events
    /// are then joined with the sessions subquery.
    var readsSessions = false
    let text: String

    init(_ scope: Scope, text: String) {
        self.scope = scope
        self.text = text
    }

    func unsupported(_ what: String) -> QueryError {
        QueryError(.type, "cannot translate to ClickHouse: \(what)", in: text)
    }

    static func string(_ s: String) -> String {
        var out = "'"
        for c in s.unicodeScalars {
            switch c {
            case "\\": out += "\\\\"
            case "'": out += "\\'"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            case "\0": out += "\\0"
            default: out.unicodeScalars.append(c)
            }
        }
        return out + "'"
    }

    /// The start of the `unit` holding the instant `micros` (microseconds) in `zone`, in microseconds: ClickHouse's
    /// calendar functions in a zone of the time-zone database; a fixed offset shifts the instant and truncates in
    /// UTC, as ClickHouse names no zone for an offset like `+05:30`.
    static func bucket(_ unit: TimeUnit, _ micros: String, _ zone: BucketZone) -> String {
        let (shift, tz): (Int, String) =
            switch zone.rule {
            case .fixed(let seconds): (seconds, "UTC")
            case .named: (0, zone.description)
            }
        let instant = shift == 0 ? "toInt64(\(micros))" : "(toInt64(\(micros)) + \(shift)000000)"
        let time = "fromUnixTimestamp64Micro(\(instant), \(string(tz)))"
        let start: String =
            switch unit {
            case .hour: "toUnixTimestamp(toStartOfHour(\(time)))"
            case .day: "toUnixTimestamp(toStartOfDay(\(time)))"
            case .week: "toUnixTimestamp(toDateTime(toMonday(\(time)), \(string(tz))))"
            case .month: "toUnixTimestamp(toDateTime(toStartOfMonth(\(time)), \(string(tz))))"
            }
        return shift == 0 ? "(toInt64(\(start)) * 1000000)" : "((toInt64(\(start)) - \(shift)) * 1000000)"
    }

    /// ``bucket(_:_:_:)`` of a date answer's instant (`NULL` when it is not a date), through `Date32`: dates reach back
    /// before 1970, where the calendar functions of `DateTime` stop. A date has no hours (the checker refuses `hour`).
    static func dateBucket(_ unit: TimeUnit, _ micros: String, _ zone: BucketZone) -> String {
        let (shift, tz): (Int, String) =
            switch zone.rule {
            case .fixed(let seconds): (seconds, "UTC")
            case .named: (0, zone.description)
            }
        let instant = shift == 0 ? "toInt64(\(micros))" : "(toInt64(\(micros)) + \(shift)000000)"
        let day = "toDate32(fromUnixTimestamp64Micro(\(instant), \(string(tz))))"
        let start =
            switch unit {
            case .week: "(\(day) - (toDayOfWeek(\(day)) - 1))"
            case .month: "(\(day) - (toDayOfMonth(\(day)) - 1))"
            case .day, .hour: day
            }
        let midnight = "toUnixTimestamp64Micro(toDateTime64(\(start), 6, \(string(tz))))"
        return "if(isNull(\(micros)), NULL, \(shift == 0 ? midnight : "(\(midnight) - \(shift)000000)"))"
    }

    /// The calendar year of the instant `micros` in `zone`, as `Int64`; `NULL` when `micros` is.
    static func year(_ micros: String, _ zone: BucketZone) -> String {
        let (shift, tz): (Int, String) =
            switch zone.rule {
            case .fixed(let seconds): (seconds, "UTC")
            case .named: (0, zone.description)
            }
        let instant = shift == 0 ? "toInt64(\(micros))" : "(toInt64(\(micros)) + \(shift)000000)"
        return "if(isNull(\(micros)), NULL, toInt64(toYear(fromUnixTimestamp64Micro(\(instant), \(string(tz))))))"
    }

    /// How a bucket of `unit` in `zone` is shown: its wall-clock date, or date and hour (`TimeBucket.description`).
    static func bucketText(_ unit: TimeUnit, _ micros: String, _ zone: BucketZone) -> String {
        let (shift, tz): (Int, String) =
            switch zone.rule {
            case .fixed(let seconds): (seconds, "UTC")
            case .named: (0, zone.description)
            }
        let instant = shift == 0 ? "toInt64(\(micros))" : "(toInt64(\(micros)) + \(shift)000000)"
        let format = unit == .hour ? "%Y-%m-%dT%H:%i" : "%F"
        return "formatDateTime(fromUnixTimestamp64Micro(\(instant), \(string(tz))), '\(format)')"
    }

    static func number(_ d: Double) -> String {
        if d == d.rounded(), d.magnitude < 9e15 { return "\(Int64(d))" }
        return "\(d)"
    }

    static func literal(_ v: Value) -> SQLValue {
        switch v {
        case .null: .scalar("NULL", .string)
        case .bool(let b): .scalar(b ? "true" : "false", .bool)
        case .integer(let i): .scalar("\(i)", .number)
        case .number(let d): .scalar("toFloat64(\(number(d)))", .number)
        case .string(let s): .scalar(string(s), .string)
        case .duration(let d): .scalar("toFloat64(\(number(d)))", .duration)
        case .time(let t): .scalar("toInt64(\(t.microseconds))", .time)
        case .bucket(let b): .scalar("toInt64(\(b.start.microseconds))", .time)
        case .set(let items):
            .answer(
                SQLAnswer(
                    kind: "'set'", string: "NULL", number: "NULL",
                    set: "[" + items.map(string).joined(separator: ", ") + "]"))
        }
    }

    /// An event field of a row of the events table.
    static func eventField(_ f: EventField) -> SQLValue {
        switch f {
        case .time: .scalar("toUnixTimestamp64Micro(time)", .time)
        case .value: .answer(.columns("value", dates: true))
        case .label: .answer(.columns("label", number: false))
        case .option: .answer(.columns("option", number: false))
        case .dwell: .scalar("dwell", .duration)
        default: .scalar(f.rawValue, f.type)
        }
    }

    mutating func translate(_ b: Bound) throws(QueryError) -> SQLValue {
        switch b {
        case .literal(let v):
            return Self.literal(v)
        case .event(let f):
            guard case .events = scope else { throw unsupported("the event field `\(f.rawValue)` here") }
            return Self.eventField(f)
        case .session(let f):
            guard case .sessions = scope else { throw unsupported("the session field `\(f.rawValue)` here") }
            return .scalar("s_" + f.rawValue, f.type)
        case .column(let i):
            guard case .table(let columns) = scope, i < columns.count else { throw unsupported("a result column here") }
            let c = columns[i]
            return c.type == .answer ? .answer(.json(c.sql)) : .scalar(c.sql, c.type)
        case .answer(let element):
            guard case .sessions = scope else { throw unsupported("`answer` outside sessions") }
            if !answers.contains(element) { answers.append(element) }
            return .answer(.tuple("a\(answers.firstIndex(of: element)!)"))
        case .did(let event):
            guard case .sessions = scope else { throw unsupported("`did` outside sessions") }
            if !dids.contains(event) { dids.append(event) }
            return .scalar("d\(dids.firstIndex(of: event)!)", .bool)
        case .reached(let n):
            guard case .sessions = scope else { throw unsupported("`reached` outside sessions") }
            return .scalar("ifNull(s_furthest_screen >= \(n), false)", .bool)
        case .now:
            return .scalar("toUnixTimestamp64Micro(now64(6))", .time)
        case .bucket(let unit, let x, let zone):
            if case .answer(let a) = try translate(x) { return .scalar(Self.dateBucket(unit, a.date, zone), .time) }
            return .scalar(Self.bucket(unit, try translate(x).sql, zone), .time)
        case .year(let x, let zone):
            return .scalar(Self.year(try translate(x).instant, zone), .number)
        case .and(let x, let y):
            return .condition("(\(truth(try translate(x))) AND \(truth(try translate(y))))")
        case .or(let x, let y):
            return .condition("(\(truth(try translate(x))) OR \(truth(try translate(y))))")
        case .not(let x):
            return .condition("NOT \(truth(try translate(x)))")
        case .present(let x):
            return .condition(try translate(x).presence)
        case .ofSession(let property):
            guard case .events = scope else { throw unsupported("a property of an event's session here") }
            readsSessions = true
            scope = .sessions
            defer { scope = .events }
            return try translate(property)
        case .negate(let x):
            let v = try translate(x)
            if isInteger(x) { return .scalar(Self.exactInteger("-toInt128(\(v.sql))"), .number) }
            return .scalar("(-\(v.sql))", v.type)
        case .compare(let op, let x, let y):
            return .condition(Self.compare(op, try translate(x), try translate(y)))
        case .member(let x, let items, let negated):
            let v = try translate(x)
            var equal: [String] = []
            for item in items { equal.append(Self.compare(.equal, v, try translate(item))) }
            let any = equal.isEmpty ? "false" : "(" + equal.joined(separator: " OR ") + ")"
            return .condition("(\(v.presence) AND \(negated ? "NOT " : "")\(any))")
        case .arithmetic(let op, let x, let y):
            let (a, b) = (try translate(x), try translate(y))
            if op != .divide, isInteger(x), isInteger(y) {
                return .scalar(Self.exactInteger("(toInt128(\(a.sql)) \(op.rawValue) toInt128(\(b.sql)))"), .number)
            }
            return try arithmetic(op, a, b)
        }
    }

    /// Whether an expression's values are always 64-bit integers when present (`Value.integer`): the numeric
    /// fields, whole literals, result columns known to hold integers (counts, sums and extremes of integers,
    /// integer keys: see ``ClickHouseTranslator/Column``), and `+ - *` and negation of integers. Such arithmetic is
    /// computed in 128 bits and is absent past 64 (``exactInteger(_:)``), as Boardwalk's; ClickHouse's own
    /// `Int64`/`UInt64` arithmetic would wrap.
    func isInteger(_ b: Bound) -> Bool {
        switch b {
        case .literal(.integer): true
        case .event(let f): f.type == .number
        case .session(let f): f.type == .number
        case .column(let i):
            if case .table(let columns) = scope, i < columns.count { columns[i].integer } else { false }
        case .arithmetic(let op, let x, let y): op != .divide && isInteger(x) && isInteger(y)
        case .negate(let x): isInteger(x)
        default: false
        }
    }

    /// An `Int128` SQL expression as Boardwalk's integer: the `Int64` it equals, or `NULL` past 64 bits (an
    /// integer overflow is absent, docs/query-language.md), where ClickHouse's `Int64` arithmetic would wrap.
    static func exactInteger(_ int128: String) -> String {
        "accurateCastOrNull(\(int128), 'Int64')"
    }

    /// A condition as a non-null boolean: an absent value is false (rule 11).
    func truth(_ v: SQLValue) -> String {
        if case .condition(let s) = v { return s }
        return "ifNull(\(v.sql), false)"
    }

    private func arithmetic(_ op: BinaryOperator, _ a: SQLValue, _ b: SQLValue) throws(QueryError) -> SQLValue {
        let x = a.sql, y = b.sql
        switch (op, a.type, b.type) {
        case (.add, .time, .duration), (.add, .duration, .time):
            return .scalar("toInt64(round(toFloat64(\(x)) + toFloat64(\(y))))", .time)
        case (.subtract, .time, .duration):
            return .scalar("toInt64(round(toFloat64(\(x)) - toFloat64(\(y))))", .time)
        case (.subtract, .time, .time):
            return .scalar("(toFloat64(\(x)) - toFloat64(\(y)))", .duration)
        case (.add, .duration, .duration), (.subtract, .duration, .duration):
            return .scalar("(\(x) \(op.rawValue) \(y))", .duration)
        case (.multiply, .duration, .number), (.multiply, .number, .duration):
            return .scalar("(toFloat64(\(x)) * toFloat64(\(y)))", .duration)
        case (.divide, .duration, .number):
            return .scalar("if(\(y) = 0, NULL, toFloat64(\(x)) / \(y))", .duration)
        case (.divide, .duration, .duration):
            return .scalar("if(\(y) = 0, NULL, toFloat64(\(x)) / \(y))", .number)
        case (.divide, .number, .number):
            // Division by zero is absent, not ±inf.
            return .scalar("if(\(y) = 0, NULL, toFloat64(\(x)) / \(y))", .number)
        case (_, .number, .number):
            return .scalar("(\(x) \(op.rawValue) \(y))", .number)
        default:
            throw unsupported("`\(op.rawValue)` between \(a.type.withArticle) and \(b.type.withArticle)")
        }
    }

    /// A comparison with Boardwalk's rules: absent compares false (so `!=` and `not in` are false on absent
    /// values, unlike SQL's three-valued logic, which would make `not (a == b)` drop rows); an answer equals a
    /// string it holds or a set containing it; ordering only between values of one type.
    static func compare(_ op: BinaryOperator, _ a: SQLValue, _ b: SQLValue) -> String {
        switch (a, b) {
        case (.scalar(let x, _), .scalar(let y, _)), (.condition(let x), .scalar(let y, _)),
            (.scalar(let x, _), .condition(let y)), (.condition(let x), .condition(let y)):
            let sqlOp = op == .equal ? "=" : op.rawValue
            return "ifNull(\(x) \(sqlOp) \(y), false)"
        case (.answer(let x), .scalar), (.answer(let x), .condition):
            return answerCompare(op, x, b)
        case (.scalar, .answer(let y)), (.condition, .answer(let y)):
            return answerCompare(op.flipped, y, a)
        case (.answer(let x), .answer(let y)):
            let eq =
                "((\(x.kind) = 'string' AND \(y.kind) = 'string' AND \(x.string) = \(y.string))"
                + " OR (\(x.kind) = 'number' AND \(y.kind) = 'number' AND \(x.number) = \(y.number))"
                + " OR (\(x.kind) = 'set' AND \(y.kind) = 'set' AND \(x.set) = \(y.set))"
                + " OR (\(x.kind) = 'set' AND \(y.kind) = 'string' AND has(\(x.set), \(y.string)))"
                + " OR (\(x.kind) = 'string' AND \(y.kind) = 'set' AND has(\(y.set), \(x.string))))"
            switch op {
            case .equal: return "ifNull(\(eq), false)"
            case .notEqual: return "ifNull(\(x.kind) != '' AND \(y.kind) != '' AND NOT \(eq), false)"
            default:
                let o = op.rawValue
                return
                    "ifNull((\(x.kind) = 'string' AND \(y.kind) = 'string' AND isNull(\(x.date)) = isNull(\(y.date)) "
                    + "AND \(x.string) \(o) \(y.string))"
                    + " OR (\(x.kind) = 'number' AND \(y.kind) = 'number' AND \(x.number) \(o) \(y.number)), false)"
            }
        }
    }

    private static func answerCompare(_ op: BinaryOperator, _ a: SQLAnswer, _ b: SQLValue) -> String {
        let y = b.sql
        let eq: String
        var ordered: String?
        switch b.type {
        case .string:
            eq = "((\(a.kind) = 'string' AND \(a.string) = \(y)) OR (\(a.kind) = 'set' AND has(\(a.set), \(y))))"
            // A date orders against timestamps, not against text.
            ordered =
                op.isComparison && op != .equal && op != .notEqual
                ? "(\(a.kind) = 'string' AND isNull(\(a.date)) AND \(a.string) \(op.rawValue) \(y))" : nil
        case .number:
            eq = "(\(a.kind) = 'number' AND \(a.number) = \(y))"
            ordered =
                op.isComparison && op != .equal && op != .notEqual
                ? "(\(a.kind) = 'number' AND \(a.number) \(op.rawValue) \(y))" : nil
        case .time:
            eq = "ifNull(\(a.date) = \(y), false)"
            ordered =
                op.isComparison && op != .equal && op != .notEqual ? "(\(a.date) \(op.rawValue) \(y))" : nil
        default:
            // Answers are never booleans: `==` is false, `!=` true when both are present.
            eq = "false"
        }
        switch op {
        case .equal: return "ifNull(\(eq), false)"
        case .notEqual: return "ifNull(\(a.kind) != '' AND isNotNull(\(y)) AND NOT \(eq), false)"
        default: return "ifNull(\(ordered ?? "false"), false)"
        }
    }
}
