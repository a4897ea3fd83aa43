// Copies of bound expressions that share no box with the original, for threads that evaluate one query at once.
//
// Evaluating an expression retains and releases the boxes it walks (every case of an indirect enum is one), and
// two threads that retain one box write one cache line by turns: each worker of a split delivery evaluates a copy
// of its own. A named zone's table of clock changes and a long string stay shared: they are read, not walked.

extension Bound {
    /// The same expression, in boxes of its own.
    /// - Complexity: O(nodes).
    func ownCopy() -> Bound {
        switch self {
        case .literal(let v): .literal(v)
        case .event(let f): .event(f)
        case .session(let f): .session(f)
        case .column(let i): .column(i)
        case .answer(let element): .answer(element)
        case .did(let x): .did(x)
        case .reached(let n): .reached(n)
        case .now: .now
        case .bucket(let unit, let a, let zone): .bucket(unit, a.ownCopy(), zone)
        case .year(let a, let zone): .year(a.ownCopy(), zone)
        case .compare(let op, let a, let b): .compare(op, a.ownCopy(), b.ownCopy())
        case .and(let a, let b): .and(a.ownCopy(), b.ownCopy())
        case .or(let a, let b): .or(a.ownCopy(), b.ownCopy())
        case .not(let a): .not(a.ownCopy())
        case .arithmetic(let op, let a, let b): .arithmetic(op, a.ownCopy(), b.ownCopy())
        case .negate(let a): .negate(a.ownCopy())
        case .member(let a, let items, let negated): .member(a.ownCopy(), items.map { $0.ownCopy() }, negated: negated)
        case .present(let a): .present(a.ownCopy())
        case .ofSession(let a): .ofSession(a.ownCopy())
        }
    }
}

extension BoundColumn {
    /// The same column, its expression in boxes of its own (``Bound/ownCopy()``).
    func ownCopy() -> BoundColumn { BoundColumn(bound: bound.ownCopy(), name: name, type: type) }
}

extension CheckedQuery {
    /// The same query, its filters, listed columns and a `count`, `top`, `histogram` or `stats` reduction in arrays
    /// and boxes of their own (``Bound/ownCopy()``); a funnel or `paths` is shared.
    /// - Complexity: O(nodes of those expressions).
    func ownCopy() -> CheckedQuery {
        var copy = self
        copy.filters = filters.map { $0.ownCopy() }
        copy.rowColumns = rowColumns.map { $0.ownCopy() }
        switch reduction {
        case .count(let by): copy.reduction = .count(by: by.map { $0.ownCopy() })
        case .stats(let aggregates, let by, let censored):
            let own = aggregates.map { aggregate in
                var copy = aggregate
                copy.argument = aggregate.argument?.ownCopy()
                return copy
            }
            copy.reduction = .stats(own, by: by.map { $0.ownCopy() }, censored: censored)
        case .top(let n, let key): copy.reduction = .top(n, key.ownCopy())
        case .histogram(let value, let step): copy.reduction = .histogram(value.ownCopy(), step: step)
        case .funnel, .paths, nil: break
        }
        return copy
    }
}
