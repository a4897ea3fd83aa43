extension Bound {
    /// Whether the expression or any part of it satisfies `test`.
    func contains(where test: (Bound) -> Bool) -> Bool {
        if test(self) { return true }
        switch self {
        case .compare(_, let a, let b), .and(let a, let b), .or(let a, let b), .arithmetic(_, let a, let b):
            return a.contains(where: test) || b.contains(where: test)
        case .not(let a), .negate(let a), .bucket(_, let a, _), .year(let a, _), .present(let a):
            return a.contains(where: test)
        case .member(let a, let items, _): return a.contains(where: test) || items.contains { $0.contains(where: test) }
        default: return false
        }
    }
}
