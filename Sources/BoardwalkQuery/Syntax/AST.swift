import BoardwalkModel

/// A literal as written in the query.
public enum Literal: Hashable, Sendable {
    case string(String)
    case integer(Int64)
    case decimal(Double)
    case bool(Bool)
    /// A duration in microseconds (`30s`, `5m`, `1h`, `7d`).
    case duration(Int64)
    /// A timestamp (`@2026-11-01`, `@2026-11-01T10:00:00Z`).
    case time(Timestamp)
}

/// Binary operators, loosest first: `or`, `and`, comparisons, `+ -`, `* /`.
public enum BinaryOperator: String, Hashable, Sendable {
    case or, and
    case equal = "==", notEqual = "!=", less = "<", lessEqual = "<=", greater = ">", greaterEqual = ">="
    case add = "+", subtract = "-", multiply = "*", divide = "/"

    var isComparison: Bool {
        switch self {
        case .equal, .notEqual, .less, .lessEqual, .greater, .greaterEqual: true
        default: false
        }
    }
}

/// An expression node; every node carries the bytes of the query it was parsed from.
public struct Expr: Hashable, Sendable {
    public indirect enum Kind: Hashable, Sendable {
        /// A bare name: a field, or (inside `did(…)` and funnel steps) an event kind or name.
        case name(String)
        case literal(Literal)
        /// `f(args…)`; `nameRange` is the function name's bytes.
        case call(String, nameRange: Range<Int>, arguments: [Expr])
        case binary(BinaryOperator, Expr, Expr)
        case not(Expr)
        case negate(Expr)
        /// `x in [a, b]` / `x not in [a, b]`.
        case membership(Expr, [Expr], negated: Bool)
        case list([Expr])
    }

    public var kind: Kind
    /// UTF-8 byte offsets into the query text.
    public var range: Range<Int>

    public init(_ kind: Kind, _ range: Range<Int>) {
        self.kind = kind
        self.range = range
    }
}

/// The source a query reads.
public enum SourceKind: String, Hashable, Sendable {
    case events, sessions
}

/// An aggregate in `stats`: `p50(duration)`, `count()`, `rate(completed) as conversion`.
public struct AggregateCall: Hashable, Sendable {
    /// The aggregate's name as written (`p50`).
    public var function: String
    /// The bytes of the name.
    public var functionRange: Range<Int>
    public var arguments: [Expr]
    /// The output column name (the alias, or the call's text as written, as ``columnText(_:)`` spaces it).
    public var column: String
    /// The call's bytes, without any `as` alias.
    public var range: Range<Int>
    /// The call's bytes with its `as` alias, if any: what names the column.
    public var namedRange: Range<Int>
}

/// An expression with an optional `as` name: group keys and `select` columns.
public struct NamedExpr: Hashable, Sendable {
    public var expr: Expr
    /// The output column name: the alias, or the expression's text as ``columnText(_:)`` spaces it.
    public var column: String
    /// The bytes of the expression and its alias.
    public var range: Range<Int>
}

/// One step of a custom funnel: `screen_presented(screen == 0)`, `open_paywall`, `"navigation_failed"`.
public struct FunnelStep: Hashable, Sendable {
    /// An event kind or analytics name.
    public var event: String
    /// The bytes of the event name.
    public var eventRange: Range<Int>
    /// The condition in parentheses, on event fields.
    public var predicate: Expr?
    /// The step as written, used as its name in results.
    public var text: String
    public var range: Range<Int>
}

/// How a custom funnel chains its steps (semantics rule 4).
public enum FunnelMode: String, Hashable, Sendable {
    case ordered, strict, any
}

/// `funnel [steps] [within D] [mode M] [ignoring (kinds)] [by keys]`.
public struct FunnelSpec: Hashable, Sendable {
    /// Empty for the screen funnel.
    public var steps: [FunnelStep]
    /// The window in microseconds, inclusive.
    public var within: Int64?
    public var withinRange: Range<Int>?
    public var mode: FunnelMode
    public var modeRange: Range<Int>?
    /// Event kinds or names that never break a strict chain, and their bytes.
    public var ignoring: [String]
    public var ignoringRanges: [Range<Int>]
    /// Breakdown keys (rule 12).
    public var by: [NamedExpr]
}

/// A sort key of `sort`.
public struct SortKey: Hashable, Sendable {
    /// A column of the result.
    public var expr: Expr
    /// `desc`; ascending otherwise.
    public var descending: Bool
}

/// A stage after `|`.
public enum StageKind: Hashable, Sendable {
    case `where`(Expr)
    case count(by: [NamedExpr])
    case stats([AggregateCall], by: [NamedExpr])
    case top(Int, NamedExpr)
    case funnel(FunnelSpec)
    case histogram(Expr, step: Expr?)
    case sort([SortKey])
    case limit(Int)
    case select([NamedExpr])
    case explain
}

/// A stage with its bytes.
public struct Stage: Hashable, Sendable {
    public var kind: StageKind
    /// The whole stage.
    public var range: Range<Int>
    /// The stage's keyword.
    public var keywordRange: Range<Int>
}

/// A parsed query: a source and its stages.
public struct QueryAST: Hashable, Sendable {
    public var source: SourceKind
    /// The bytes of the source keyword.
    public var sourceRange: Range<Int>
    public var stages: [Stage]
    /// The query text the ranges point into.
    public var text: String
}
