import BoardwalkModel

/// A literal as written in the query.
package enum Literal: Hashable, Sendable {
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
package enum BinaryOperator: String, Hashable, Sendable {
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
package struct Expr: Hashable, Sendable {
    package indirect enum Kind: Hashable, Sendable {
        /// A bare name: a field, or (inside `did(…)` and funnel steps) an event kind or name.
        case name(String)
        case literal(Literal)
        /// `f(args…)`; `nameRange` is the function name's bytes.
        case call(String, nameRange: Range<Int>, arguments: [Expr])
        case binary(BinaryOperator, Expr, Expr)
        case not(Expr)
        case negate(Expr)
        /// `x is present` / `x is absent`.
        case presence(Expr, present: Bool)
        /// `x in [a, b]` / `x not in [a, b]`.
        case membership(Expr, [Expr], negated: Bool)
        case list([Expr])
    }

    package var kind: Kind
    /// UTF-8 byte offsets into the query text.
    package var range: Range<Int>

    package init(_ kind: Kind, _ range: Range<Int>) {
        self.kind = kind
        self.range = range
    }
}

/// The source a query reads.
package enum SourceKind: String, Hashable, Sendable {
    case events, sessions
    /// What is wrong with the onboardings, one row per finding (``OnboardingLint``).
    case lints
}

/// An aggregate in `stats`: `p50(duration)`, `count()`, `rate(completed) as conversion`.
package struct AggregateCall: Hashable, Sendable {
    /// The aggregate's name as written (`p50`).
    package var function: String
    /// The bytes of the name.
    package var functionRange: Range<Int>
    package var arguments: [Expr]
    /// The output column name (the alias, or the call's text as written, as ``columnText(_:)`` spaces it).
    package var column: String
    /// The call's bytes, without any `as` alias.
    package var range: Range<Int>
    /// The call's bytes with its `as` alias, if any: what names the column.
    package var namedRange: Range<Int>
}

/// An expression with an optional `as` name: group keys and `select` columns.
package struct NamedExpr: Hashable, Sendable {
    package var expr: Expr
    /// The output column name: the alias, or the expression's text as ``columnText(_:)`` spaces it.
    package var column: String
    /// The bytes of the expression and its alias.
    package var range: Range<Int>
}

/// One step of a custom funnel: `screen_presented(screen == 0)`, `open_paywall`, `"navigation_failed"`.
package struct FunnelStep: Hashable, Sendable {
    /// An event kind or analytics name.
    package var event: String
    /// The bytes of the event name.
    package var eventRange: Range<Int>
    /// The condition in parentheses, on event fields.
    package var predicate: Expr?
    /// The step as written, used as its name in results.
    package var text: String
    package var range: Range<Int>
}

/// How a custom funnel chains its steps (semantics rule 4).
package enum FunnelMode: String, Hashable, Sendable {
    case ordered, strict, any
}

/// `funnel [steps] [within D] [mode M] [ignoring (kinds)] [by keys]`.
package struct FunnelSpec: Hashable, Sendable {
    /// Empty for the screen funnel.
    package var steps: [FunnelStep]
    /// The window in microseconds, inclusive.
    package var within: Int64?
    package var withinRange: Range<Int>?
    package var mode: FunnelMode
    package var modeRange: Range<Int>?
    /// Event kinds or names that never break a strict chain, and their bytes.
    package var ignoring: [String]
    package var ignoringRanges: [Range<Int>]
    /// Breakdown keys (rule 12).
    package var by: [NamedExpr]
}

/// Where the paths of `paths` are anchored in each session.
package enum PathAnchor: Hashable, Sendable {
    /// `after step`: from the session's first event matching the step on.
    case after(FunnelStep)
    /// `before step`: up to the session's first event matching the step.
    case before(FunnelStep)
    /// `after start`: from the session's first event on.
    case start
    /// `before end`: up to the session's last event.
    case end
}

/// `paths (after | before) (step | start | end) [depth N]`.
package struct PathsSpec: Hashable, Sendable {
    package var anchor: PathAnchor
    /// The bytes of the anchor (the step, `start` or `end`).
    package var anchorRange: Range<Int>
    /// The number of steps besides the anchor, as written (nil: the default).
    package var depth: Int64?
    package var depthRange: Range<Int>?
}

/// A sort key of `sort`.
package struct SortKey: Hashable, Sendable {
    /// A column of the result.
    package var expr: Expr
    /// `desc`; ascending otherwise.
    package var descending: Bool
}

/// A stage after `|`.
package enum StageKind: Hashable, Sendable {
    case `where`(Expr)
    case count(by: [NamedExpr])
    case stats([AggregateCall], by: [NamedExpr])
    case top(Int, NamedExpr)
    case funnel(FunnelSpec)
    /// `paths after|before …`: the most common short sequences of events around an anchor.
    case paths(PathsSpec)
    case histogram(Expr, step: Expr?)
    case sort([SortKey])
    case limit(Int)
    case select([NamedExpr])
    /// `versus V`: each group of the reduction before it compared with the group whose key is the literal `V`.
    case versus(Expr)
    case explain
}

/// A stage with its bytes.
package struct Stage: Hashable, Sendable {
    package var kind: StageKind
    /// The whole stage.
    package var range: Range<Int>
    /// The stage's keyword.
    package var keywordRange: Range<Int>
}

/// A parsed query: a source and its stages.
package struct QueryAST: Hashable, Sendable {
    package var source: SourceKind
    /// The bytes of the source keyword.
    package var sourceRange: Range<Int>
    package var stages: [Stage]
    /// The query text the ranges point into.
    package var text: String
}
