import BoardwalkModel

/// A type-checked expression: names resolved to fields, functions to their meaning.
indirect enum Bound: Hashable, Sendable {
    case literal(Value)
    case event(EventField)
    case session(SessionField)
    /// A column of the result table (stages after a reduction).
    case column(Int)
    /// `answer("element")`: the session's last value for the element (rule 9).
    case answer(String)
    /// `did(x)`: the session has an event whose kind or analytics name is `x`.
    case did(String)
    /// `reached(n)`: the session's furthest screen index is at least `n`.
    case reached(Int)
    /// `now()`, fixed once per run.
    case now
    /// `day(t)`, `week(t, "Europe/Berlin")`, …: the start of the unit holding the time `t` in a zone.
    case bucket(TimeUnit, Bound, BucketZone)
    /// `year(t [, zone])`: the calendar year as a number.
    case year(Bound, BucketZone)
    case compare(BinaryOperator, Bound, Bound)
    case and(Bound, Bound)
    case or(Bound, Bound)
    case not(Bound)
    case arithmetic(BinaryOperator, Bound, Bound)
    case negate(Bound)
    case member(Bound, [Bound], negated: Bool)
    /// `x is present` (`x is absent` is its `not`).
    case present(Bound)
    /// `session.completed`, `session.answer("goal")`: a property of the event's session (a session-scope bound),
    /// in `events` rows and funnel breakdowns.
    case ofSession(Bound)

    /// Whether the expression reads `dwell` (which needs each event's session around it).
    var readsDwell: Bool {
        switch self {
        case .event(.dwell): true
        case .compare(_, let a, let b), .and(let a, let b), .or(let a, let b), .arithmetic(_, let a, let b):
            a.readsDwell || b.readsDwell
        case .not(let a), .negate(let a), .bucket(_, let a, _), .year(let a, _), .present(let a): a.readsDwell
        case .member(let a, let items, _): a.readsDwell || items.contains { $0.readsDwell }
        default: false
        }
    }

    /// The bucket of a time (absent for anything else); kept out of ``evaluate(now:_:)``, whose stack frame every
    /// level of an expression pays.
    @inline(never)
    static func bucket(_ value: Value, _ unit: TimeUnit, _ zone: BucketZone) -> Value {
        guard let t = value.timestampValue else { return .null }
        return .bucket(zone.bucket(of: t, unit: unit))
    }

    /// The calendar year of a time in `zone` (absent for anything else: an answer that is not a whole date).
    @inline(never)
    static func year(_ value: Value, _ zone: BucketZone) -> Value {
        guard let t = value.timestampValue else { return .null }
        return .integer(zone.bucket(of: t, unit: .day).year)
    }

    /// `-x`: absent for anything but a number or a duration, and for the one integer whose negation overflows.
    static func negated(_ value: Value) -> Value {
        switch value {
        case .integer(let v): v == .min ? .null : .integer(-v)
        case .number(let v): .number(-v)
        case .duration(let v): .duration(-v)
        default: .null
        }
    }

    /// Evaluates the expression given how to read fields; the combinators are the language's definition,
    /// shared by every evaluator.
    func evaluate(now: Timestamp, _ leaf: (Bound) -> Value) -> Value {
        switch self {
        case .literal(let v): return v
        case .now: return .time(now)
        case .compare(let op, let a, let b):
            return .bool(Value.compare(op, a.evaluate(now: now, leaf), b.evaluate(now: now, leaf)))
        case .and(let a, let b):
            // A long `and` chain nests to the left (`(x and y) and z`): walked from its last term in a loop, its
            // length costs no stack (terms have no side effects, so the order is free).
            guard b.evaluate(now: now, leaf).isTrue else { return .bool(false) }
            var rest = a
            while case .and(let x, let y) = rest {
                guard y.evaluate(now: now, leaf).isTrue else { return .bool(false) }
                rest = x
            }
            return .bool(rest.evaluate(now: now, leaf).isTrue)
        case .or(let a, let b):
            return .bool(a.evaluate(now: now, leaf).isTrue || b.evaluate(now: now, leaf).isTrue)
        case .not(let a):
            return .bool(!a.evaluate(now: now, leaf).isTrue)
        case .arithmetic(let op, let a, let b):
            return Value.arithmetic(op, a.evaluate(now: now, leaf), b.evaluate(now: now, leaf))
        case .bucket(let unit, let a, let zone):
            return Bound.bucket(a.evaluate(now: now, leaf), unit, zone)
        case .year(let a, let zone):
            return Bound.year(a.evaluate(now: now, leaf), zone)
        case .negate(let a):
            return Bound.negated(a.evaluate(now: now, leaf))
        case .present(let a):
            return .bool(!a.evaluate(now: now, leaf).isNull)
        case .member(let a, let items, let negated):
            let v = a.evaluate(now: now, leaf)
            if v.isNull { return .bool(false) }
            let found = items.contains { Value.queryEqual(v, $0.evaluate(now: now, leaf)) }
            return .bool(found != negated)
        case .event, .session, .column, .answer, .did, .reached, .ofSession:
            return leaf(self)
        }
    }
}

/// A bound expression with its output column name and type.
struct BoundColumn: Hashable, Sendable {
    var bound: Bound
    var name: String
    var type: QueryType
}

/// A bound aggregate of `stats`.
struct BoundAggregate: Hashable, Sendable {
    var function: AggregateFunction
    var argument: Bound?
    var name: String
    /// The type of the argument (sum/avg/min/max/percentiles keep durations as durations).
    var argumentType: QueryType?
    var resultType: QueryType

    /// Whether it is `count()`, which counts rows whatever they hold: `stats` of such aggregates alone is a
    /// count, which the store can answer from block headers or by field codes (rows added with a weight).
    var countsRows: Bool { function == .count }
}

/// A bound funnel step.
struct BoundStep: Hashable, Sendable {
    /// An event kind's or analytics event's wire name.
    var event: String
    var predicate: Bound?
    var name: String
}

struct BoundFunnel: Hashable, Sendable {
    /// Empty: the screen funnel.
    var steps: [BoundStep]
    var within: Int64?
    var mode: FunnelMode
    /// Event kinds (or analytics names) that never break a strict chain.
    var ignoring: Set<String>
    var by: [BoundColumn]
}

/// The one reduction of a query, if any.
enum Reduction: Hashable, Sendable {
    case count(by: [BoundColumn])
    case stats([BoundAggregate], by: [BoundColumn], censored: Bool)
    case top(Int, BoundColumn)
    /// Bucket width in the value's unit (microseconds for durations).
    case histogram(BoundColumn, step: Double)
    case funnel(BoundFunnel)
    /// `paths`: the sessions of each short path of events around an anchor (rule 14).
    case paths(BoundPaths)

    /// Whether rows with the same values may reach it as one row of a weight (``Sink/addRow(_:censored:order:weight:)``):
    /// `count`, `top`, `histogram`, and `stats` of `count()` alone.
    var takesWeightedRows: Bool {
        switch self {
        case .count, .top, .histogram: true
        case .stats(let aggregates, _, _): aggregates.allSatisfy(\.countsRows)
        case .funnel, .paths: false
        }
    }
}

/// Stages that work on the result table: the rows a reduction gave (or the listed rows), each reading the
/// columns of the stage before it.
enum TableStage: Hashable, Sendable {
    /// Whether the order of the rows that `stages` take in is seen by nothing: the stages up to the next reduction
    /// only filter and compute row by row, and that reduction is a `count` or a `histogram` (whose integer counts do
    /// not depend on the order they are added in). The reduction before them then need not sort its rows.
    static func orderIsUnseen(_ stages: ArraySlice<TableStage>) -> Bool {
        for stage in stages {
            switch stage {
            case .where, .select: continue
            case .reduce(.count, _), .reduce(.histogram, _): return true
            case .reduce, .sort, .limit, .versus: return false
            }
        }
        return false
    }

    case `where`(Bound)
    case sort([(column: Int, descending: Bool)])
    case limit(Int)
    /// Columns computed from the current ones (a plain column is `.column(i)`), under their names.
    case select([BoundColumn])
    /// A further reduction over the current rows (`count by profile | where count > 1 | count`); `columns` are the
    /// names of the rows it gives.
    case reduce(Reduction, columns: [String])
    /// `versus V`: the rows of the reduction before it compared with its group `V` (rule 13).
    case versus(Versus)

    static func == (a: TableStage, b: TableStage) -> Bool {
        switch (a, b) {
        case (.where(let x), .where(let y)): x == y
        case (.sort(let x), .sort(let y)):
            x.map(\.column) == y.map(\.column) && x.map(\.descending) == y.map(\.descending)
        case (.limit(let x), .limit(let y)): x == y
        case (.select(let x), .select(let y)): x == y
        case (.reduce(let x, let a), .reduce(let y, let b)): x == y && a == b
        case (.versus(let x), .versus(let y)): x == y
        default: false
        }
    }

    func hash(into hasher: inout Hasher) {
        switch self {
        case .where(let b): hasher.combine(0); hasher.combine(b)
        case .sort(let keys):
            hasher.combine(1); for k in keys { hasher.combine(k.column); hasher.combine(k.descending) }
        case .limit(let n): hasher.combine(2); hasher.combine(n)
        case .select(let c): hasher.combine(3); hasher.combine(c)
        case .reduce(let r, let c): hasher.combine(4); hasher.combine(r); hasher.combine(c)
        case .versus(let v): hasher.combine(5); hasher.combine(v)
        }
    }
}

/// A type-checked query, ready to plan and run.
struct CheckedQuery: Hashable, Sendable {
    var ast: QueryAST
    var source: SourceKind
    /// Row filters (the leading `where` stages), all of which must hold.
    var filters: [Bound]
    var reduction: Reduction?
    /// Without a reduction: the columns each row is listed with.
    var rowColumns: [BoundColumn]
    var tableStages: [TableStage]
    /// Column names after the reduction (or of listed rows), before table stages.
    var columns: [String]
    /// The result's column names after the table stages: those a `select` kept, under its `as` names.
    var outputColumns: [String] = []
    var explain: Bool
    /// What the checker noticed that is not an error (``QueryError/Kind/note``).
    var notes: [QueryError] = []
    /// String literals compared with `onboarding`, with their places (``Query/notes(on:)``).
    var onboardingLiterals: [PlacedString] = []
    /// Literals compared with answers, with their places (``AnswerNotes``).
    var answerLiterals: [AnswerLiteral] = []

    /// Whether an `events` query reads a property of each event's session (`session.completed`), so events must
    /// be read with their sessions and each session summarized; a funnel's `by` reads the session's own values.
    var readsSessionProperties: Bool {
        func reads(_ b: Bound?) -> Bool { b?.contains { if case .ofSession = $0 { true } else { false } } ?? false }
        if filters.contains(where: reads) || rowColumns.contains(where: { reads($0.bound) }) { return true }
        switch reduction {
        case .count(let by): return by.contains { reads($0.bound) }
        case .stats(let aggregates, let by, _):
            return aggregates.contains { reads($0.argument) } || by.contains { reads($0.bound) }
        case .top(_, let key): return reads(key.bound)
        case .histogram(let value, _): return reads(value.bound)
        case .funnel(let f): return f.by.contains { reads($0.bound) }
        case .paths, nil: return false
        }
    }

    /// Whether the listed columns or the reduction (not the filters) read a property of the event's session.
    var readsSessionPropertiesBeyondFilters: Bool {
        var withoutFilters = self
        withoutFilters.filters = []
        return withoutFilters.readsSessionProperties
    }

    /// Whether any part reads `dwell`, so events must be read with their sessions.
    var readsDwell: Bool {
        if filters.contains(where: \.readsDwell) || rowColumns.contains(where: { $0.bound.readsDwell }) { return true }
        switch reduction {
        case .count(let by): return by.contains { $0.bound.readsDwell }
        case .stats(let aggregates, let by, _):
            return aggregates.contains { $0.argument?.readsDwell ?? false } || by.contains { $0.bound.readsDwell }
        case .top(_, let key): return key.bound.readsDwell
        case .histogram(let value, _): return value.bound.readsDwell
        case .funnel, .paths, nil: return false
        }
    }
}

/// A literal compared with an answer (`answer("age") > "30"`, `answer("interests") == "yoga"`).
struct AnswerLiteral: Hashable, Sendable {
    var element: String
    var op: BinaryOperator
    var literal: Value
    var range: Range<Int>
}

/// A string literal of the query and its bytes in the text.
struct PlacedString: Hashable, Sendable {
    var value: String
    var range: Range<Int>
}
