import BoardwalkModel

// Which parts of each stored event an `events` query reads. The planner decides from the checked query alone;
// the executor uses the cheaper paths only on the store (`StoreEventSource`), whose blocks and records allow it.

extension EventField {
    /// The fields the codec's `RecordFields` reads from a record without decoding the rest (the lean event path):
    /// the key's time, onboarding and screen, the seq, and the record's kind, total screens, session, profile,
    /// placement, variation and first kind-specific field (analytics name, `screen_completed`'s element and
    /// reply, a state update's element and value type, an action's id). Not `screen_cid`, `event_id`, `value`,
    /// `label` (skipped or never reached by `RecordFields`) nor `dwell` (which needs the session around the event).
    var isLean: Bool {
        switch self {
        case .time, .seq, .kind, .name, .onboarding, .screen, .totalScreens, .session, .profile, .placement,
            .variation, .element, .reply, .action, .elementType:
            true
        case .screenCID, .eventID, .value, .label, .dwell, .option, .inputType, .errorDomain, .errorCode, .errorMessage:
            false
        }
    }

    /// Whether every event of one block has the same value of the field: the block's key is per (onboarding,
    /// screen) group.
    var isPerGroup: Bool { self == .onboarding || self == .screen }

    /// Whether a block gives the field without reading a record: its group, and each event's time and seq.
    var isInBlockKeys: Bool { isPerGroup || self == .time || self == .seq }

    /// Whether a block's kind counts give the field for each of their entries: `kind` and `name`.
    var isPerKind: Bool { self == .kind || self == .name }

    /// Whether events of one block with one entry of its kind counts have the same value of the field.
    var isPerKindCode: Bool { isPerGroup || isPerKind }
}

extension Bound {
    /// Whether the expression reads no field but event fields for which `allowed` holds (constants and `now()`
    /// read none), and, with `orSessions`, properties of the event's session (read apart, ``SessionProperties``).
    func readsOnly(_ allowed: (EventField) -> Bool, orSessions: Bool = false) -> Bool {
        func ok(_ b: Bound) -> Bool { b.readsOnly(allowed, orSessions: orSessions) }
        switch self {
        case .literal, .now: return true
        case .event(let field): return allowed(field)
        case .ofSession: return orSessions
        case .session, .column, .answer, .did, .reached: return false
        case .compare(_, let a, let b), .and(let a, let b), .or(let a, let b), .arithmetic(_, let a, let b):
            return ok(a) && ok(b)
        case .not(let a), .negate(let a), .bucket(_, let a, _), .year(let a, _), .present(let a): return ok(a)
        case .member(let a, let items, _): return ok(a) && items.allSatisfy(ok)
        }
    }

    /// The conjuncts of an `and` chain.
    func conjuncts(into out: inout [Bound]) {
        if case .and(let a, let b) = self {
            a.conjuncts(into: &out)
            b.conjuncts(into: &out)
        } else {
            out.append(self)
        }
    }
}

extension CheckedQuery {
    /// Whether every expression of the query (filters, listed columns, keys, aggregates) reads only event fields
    /// for which `allowed` holds.
    func readsOnly(_ allowed: (EventField) -> Bool) -> Bool { readsOnly(allowed, orSessions: false) }

    /// ``readsOnly(_:)``, but properties of the event's session (`session.completed`) are allowed too.
    func readsOnlyOrSessions(_ allowed: (EventField) -> Bool) -> Bool { readsOnly(allowed, orSessions: true) }

    private func readsOnly(_ allowed: (EventField) -> Bool, orSessions: Bool) -> Bool {
        func ok(_ b: Bound?) -> Bool { b?.readsOnly(allowed, orSessions: orSessions) ?? true }
        guard filters.allSatisfy({ ok($0) }), rowColumns.allSatisfy({ ok($0.bound) }) else { return false }
        switch reduction {
        case .count(let by): return by.allSatisfy { ok($0.bound) }
        case .stats(let aggregates, let by, _):
            return aggregates.allSatisfy { ok($0.argument) } && by.allSatisfy { ok($0.bound) }
        case .top(_, let key): return ok(key.bound)
        case .histogram(let value, _): return ok(value.bound)
        case .funnel(let f):
            return f.by.allSatisfy { ok($0.bound) } && f.steps.allSatisfy { ok($0.predicate) }
        case .paths(let p):
            switch p.anchor {
            case .after(let step), .before(let step): return ok(step.predicate)
            case .start, .end: return true
            }
        case nil: return true
        }
    }
}

/// An `events` count answered from the store's block keys and headers: the query counts rows (`count`, `top`,
/// `histogram`, or `stats` of `count()` alone) grouped by values that are the same for every event of a block with
/// one kind code (expressions of `onboarding`, `screen`, `kind` and `name`), and filters only on those and on
/// `time` and `seq`.
///
/// The filters are split four ways, each exact: conjuncts that read only `onboarding` and `screen` are checked
/// once per (onboarding, screen) group; conjuncts that also read `kind` or `name` (and no `time` or `seq`) once per
/// group and kind (kind code, and name for an unknown analytics name) of the header's kind counts; `time` compared
/// with a constant (`<`, `<=`, `>`, `>=`, `==`) is a time range, so a block inside it is counted from its header and a block it cuts is read for its events' times (and each event's
/// kind code); any other conjunct (`time != …`, `seq < …`, an `or` mixing time and screen) is checked on each
/// event's time and seq, read from its block's deltas. No record is decoded (a block's kind counts name each analytics
/// name outside the known ones by its string).
struct BlockCountPlan: Sendable {
    /// Conjuncts that read only per-group fields.
    var groupFilters: [Bound]
    /// Conjuncts that read `kind` or `name`, and otherwise only per-group fields.
    var kindFilters: [Bound] = []
    /// Conjuncts checked on each event's time and seq (and its group).
    var eventFilters: [Bound]
    /// Whether the keys or the filters read `kind` or `name`: counts are then taken per kind and name.
    var readsKinds = false

    /// The kind code of an analytics name outside the known ones, which block headers count per name.
    static let unknownNameCode: UInt8 = 0x0F
    /// The time range of the simple time comparisons, microseconds, inclusive; empty when `low > high`.
    var time: (low: Int64, high: Int64)

    /// The plan for `query`, or nil when its shape does not allow one.
    static func make(_ query: CheckedQuery, now: Timestamp) -> BlockCountPlan? {
        guard query.source == .events else { return nil }
        func perGroup(_ b: Bound) -> Bool { b.readsOnly(\.isPerGroup) }
        func perKindCode(_ b: Bound) -> Bool { b.readsOnly(\.isPerKindCode) }
        let keys: [Bound]
        switch query.reduction {
        case .count(let by): keys = by.map(\.bound)
        case .top(_, let key): keys = [key.bound]
        case .histogram(let value, _): keys = [value.bound]
        case .stats(let aggregates, let by, _) where aggregates.allSatisfy(\.countsRows): keys = by.map(\.bound)
        case .stats, .funnel, .paths, nil: return nil
        }
        guard keys.allSatisfy(perKindCode) else { return nil }
        var conjuncts: [Bound] = []
        for filter in query.filters { filter.conjuncts(into: &conjuncts) }
        var plan = BlockCountPlan(groupFilters: [], eventFilters: [], time: (Int64.min, Int64.max))
        for conjunct in conjuncts {
            if perGroup(conjunct) {
                plan.groupFilters.append(conjunct)
            } else if perKindCode(conjunct) {
                plan.kindFilters.append(conjunct)
            } else if let range = timeRange(conjunct, now: now) {
                plan.time = (max(plan.time.low, range.low), min(plan.time.high, range.high))
            } else if conjunct.readsOnly(\.isInBlockKeys) {
                plan.eventFilters.append(conjunct)
            } else {
                return nil
            }
        }
        let read = keys + plan.kindFilters
        plan.readsKinds = !read.allSatisfy(perGroup)
        return plan
    }

    /// How the filters are checked, for `explain`: "1 condition once per (onboarding, screen) group; time
    /// comparisons as the time range; 1 condition on each event's time and seq".
    var filterDescription: String {
        func conditions(_ n: Int) -> String { n == 1 ? "1 condition" : "\(n) conditions" }
        var parts: [String] = []
        if !groupFilters.isEmpty {
            parts.append("\(conditions(groupFilters.count)) once per (onboarding, screen) group")
        }
        if !kindFilters.isEmpty {
            parts.append("\(conditions(kindFilters.count)) once per group and kind of the blocks' kind counts")
        }
        if time != (Int64.min, Int64.max) { parts.append("time comparisons as the time range") }
        if !eventFilters.isEmpty { parts.append("\(conditions(eventFilters.count)) on each event's time and seq") }
        return parts.joined(separator: "; ")
    }

    /// The times `t` (microseconds, inclusive, empty when `low > high`) for which `time op c` holds, when the
    /// conjunct compares `time` with a constant time by `<`, `<=`, `>`, `>=` or `==`; nil otherwise.
    static func timeRange(_ conjunct: Bound, now: Timestamp) -> (low: Int64, high: Int64)? {
        guard case .compare(var op, let a, let b) = conjunct else { return nil }
        func constantTime(_ x: Bound) -> Int64? {
            guard x.isConstant, case .time(let t) = x.evaluate(now: now, { _ in .null }) else { return nil }
            return t.microseconds
        }
        let t: Int64
        if case .event(.time) = a, let c = constantTime(b) {
            t = c
        } else if case .event(.time) = b, let c = constantTime(a) {
            t = c
            op = op.flipped
        } else {
            return nil
        }
        switch op {
        case .equal: return (t, t)
        case .less: return t == .min ? (1, 0) : (.min, t - 1)
        case .lessEqual: return (.min, t)
        case .greater: return t == .max ? (1, 0) : (t + 1, .max)
        case .greaterEqual: return (t, .max)
        default: return nil
        }
    }
}

/// A lean `events` count grouped by plain fields that have a ``FieldCode`` (`count by name`, `top 5 element`):
/// each record passing the filters adds one to its key of field codes in a ``CodeTable``; the codes become
/// values once per group at the end. `time` compared with a constant is the scan's time range, not a condition
/// per record; when the other conditions read only coded fields, their result is kept per combination of those
/// fields' codes and each record costs a lookup, not an evaluation.
///
/// `stats` qualifies when each aggregate is `count()` or `count_distinct` of a field with a code: each group then
/// keeps the distinct codes of those fields, and each distinct code becomes a value once at the end.
struct CodedCountPlan: Sendable {
    /// The fields of the group key, in the order of the `by` columns (`top`: its one key).
    var keys: [EventField]
    /// Per aggregate of a `stats`, the field of a `count_distinct`; nil for `count()` (empty for other stages).
    var distinct: [EventField?] = []
    /// The conjuncts of the filters checked per record: all but the time comparisons.
    var filters: [Bound]
    /// The time range of the time comparisons, microseconds, inclusive; empty when `low > high`.
    var time: (low: Int64, high: Int64)
    /// The fields `filters` read, when they all have codes (at most four); nil: filters evaluated per record.
    var filterFields: [EventField]?

    /// Whether the filters read only `kind`, `name`, `onboarding` and `screen`, which a record's kind code and its
    /// block's group give: a record is then tested on its first bytes (``KindCodeFilters``).
    var filtersOnKindCodes: Bool {
        !filters.isEmpty && filterFields.map { $0.allSatisfy(KindCodeFilters.reads) } ?? false
    }

    /// The plan for `query`, or nil when its shape does not allow one (`Plan.leanEvents` is checked apart).
    static func make(_ query: CheckedQuery, now: Timestamp) -> CodedCountPlan? {
        let columns: [BoundColumn]
        var distinct: [EventField?] = []
        switch query.reduction {
        case .count(let by): columns = by
        case .stats(let aggregates, let by, _):
            for aggregate in aggregates {
                if aggregate.countsRows {
                    distinct.append(nil)
                } else if aggregate.function == .countDistinct, case .event(let field)? = aggregate.argument,
                    FieldCode.has(field)
                {
                    distinct.append(field)
                } else {
                    return nil
                }
            }
            columns = by
        case .top(_, let key): columns = [key]
        default: return nil
        }
        var keys: [EventField] = []
        for column in columns {
            guard case .event(let field) = column.bound, FieldCode.has(field) else { return nil }
            keys.append(field)
        }
        guard keys.count <= CodeKey.width else { return nil }
        var conjuncts: [Bound] = []
        for filter in query.filters { filter.conjuncts(into: &conjuncts) }
        var plan = CodedCountPlan(
            keys: keys, distinct: distinct, filters: [], time: (Int64.min, Int64.max), filterFields: nil)
        for conjunct in conjuncts {
            if let range = BlockCountPlan.timeRange(conjunct, now: now) {
                plan.time = (max(plan.time.low, range.low), min(plan.time.high, range.high))
            } else {
                plan.filters.append(conjunct)
            }
        }
        plan.filterFields = codedFields(of: plan.filters)
        return plan
    }

    /// The fields `filters` read, when every one has a code and there are at most ``CodeKey/width`` of them; else
    /// nil (the filters are then evaluated on each record).
    static func codedFields(of filters: [Bound]) -> [EventField]? {
        var read: [EventField] = []
        var coded = true
        func collect(_ b: Bound) {
            switch b {
            case .event(let field):
                if !FieldCode.has(field) { coded = false } else if !read.contains(field) { read.append(field) }
            case .compare(_, let x, let y), .and(let x, let y), .or(let x, let y), .arithmetic(_, let x, let y):
                collect(x)
                collect(y)
            case .not(let x), .negate(let x), .bucket(_, let x, _), .year(let x, _), .present(let x): collect(x)
            case .member(let x, let items, _):
                collect(x)
                items.forEach(collect)
            case .literal, .now: break
            case .session, .column, .answer, .did, .reached, .ofSession: coded = false
            }
        }
        filters.forEach(collect)
        return coded && read.count <= CodeKey.width ? read : nil
    }
}
