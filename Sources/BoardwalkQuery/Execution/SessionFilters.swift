import BoardwalkModel

/// A query's filters on session summaries, with the commonest conjunct checked directly: the session's onboarding
/// against string literals (`onboarding == "…"`, `!=`, `in [ … ]`, `not in [ … ]`, literal on either side of a
/// comparison). A query about one onboarding has one, and the store hands out thousands of sessions per query;
/// through ``Bound/evaluate(now:_:)`` each check built values and compared them through the general rules
/// (callgrind: about 900 instructions per session, most of them reference counting). Any other conjunct is
/// compiled once (``CompiledBound``) and evaluated in the filters' order; every conjunct must pass.
///
/// The direct check gives what ``Value/compare(_:_:_:)`` and membership give: an absent onboarding fails every
/// one of these forms, and strings compare with `==`.
struct SessionFilters {
    enum Conjunct {
        /// `onboarding == s` (`negated`: `!=`).
        case onboardingIs(String, negated: Bool)
        /// `onboarding in [...]` (`negated`: `not in`).
        case onboardingIn([String], negated: Bool)
        case general(CompiledBound)
    }

    let conjuncts: [Conjunct]

    init(_ filters: [Bound], now: Timestamp) {
        // `a and b` passes when both pass (``Bound/evaluate(now:_:)``): its sides are conjuncts of their own.
        func flattened(_ bound: Bound) -> [Bound] {
            if case .and(let a, let b) = bound { return flattened(a) + flattened(b) }
            return [bound]
        }
        conjuncts = filters.flatMap(flattened).map { SessionFilters.conjunct($0, now: now) }
    }

    private static func conjunct(_ filter: Bound, now: Timestamp) -> Conjunct {
        switch filter {
        case .compare(let op, .session(.onboarding), .literal(.string(let s))),
            .compare(let op, .literal(.string(let s)), .session(.onboarding)):
            if op == .equal { return .onboardingIs(s, negated: false) }
            if op == .notEqual { return .onboardingIs(s, negated: true) }
        case .member(.session(.onboarding), let items, let negated):
            var strings: [String] = []
            for item in items {
                guard case .literal(.string(let s)) = item else { return .general(CompiledBound(filter, now: now)) }
                strings.append(s)
            }
            return .onboardingIn(strings, negated: negated)
        default:
            break
        }
        return .general(CompiledBound(filter, now: now))
    }

    /// Whether `summary` passes every filter.
    func passes(_ summary: SessionSummary) -> Bool {
        for conjunct in conjuncts {
            switch conjunct {
            case .onboardingIs(let s, let negated):
                guard let onboarding = summary.onboarding, (onboarding == s) != negated else { return false }
            case .onboardingIn(let strings, let negated):
                guard let onboarding = summary.onboarding, strings.contains(onboarding) != negated else { return false }
            case .general(let filter):
                guard filter.isTrue({ summary.leaf($0) }) else { return false }
            }
        }
        return true
    }
}
