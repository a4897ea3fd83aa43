/// The running state of one aggregate in one group.
enum AggregateState {
    case count(Int)
    case distinct(Set<Value>)
    /// Integers are added exactly, in 128 bits (no sum of 64-bit integers over fewer than 2^64 rows overflows
    /// it, so the result does not depend on the order of the rows); numbers and durations in `doubles`.
    case sum(integers: Int128, doubles: Double, sawDouble: Bool)
    case average(sum: Double, count: Int)
    case extreme(Value?)
    /// Exact percentiles keep every value of the group (rule 6: never sampled).
    case values([Double])
    case rate(hits: Int, rows: Int)

    init(_ function: AggregateFunction) {
        switch function {
        case .count, .countPresent: self = .count(0)
        case .countDistinct: self = .distinct([])
        case .sum: self = .sum(integers: 0, doubles: 0, sawDouble: false)
        case .avg: self = .average(sum: 0, count: 0)
        case .min, .max: self = .extreme(nil)
        case .percentile: self = .values([])
        case .rate, .ciLow, .ciHigh: self = .rate(hits: 0, rows: 0)
        }
    }

    /// Adds one row, whose argument evaluates to `value` (ignored by `count()`).
    mutating func add(_ function: AggregateFunction, _ value: Value) {
        switch (self, function) {
        case (.count(let n), .count):
            self = .count(n + 1)
        case (.count(let n), _):
            if !value.isNull { self = .count(n + 1) }
        case (.distinct(var set), _):
            guard !value.isNull else { return }
            self = .count(0)  // release the set's buffer before mutating it
            if case .set(let items) = value {
                for item in items { set.insert(.string(item)) }
            } else {
                set.insert(value)
            }
            self = .distinct(set)
        case (.sum(let i, let d, let sawDouble), _):
            if case .integer(let x) = value {
                self = .sum(integers: i + Int128(x), doubles: d, sawDouble: sawDouble)
            } else if let x = value.numeric {
                self = .sum(integers: i, doubles: d + x, sawDouble: true)
            }
        case (.average(let s, let n), _):
            if let x = value.numeric { self = .average(sum: s + x, count: n + 1) }
        case (.extreme(let current), _):
            guard !value.isNull else { return }
            guard let current else { self = .extreme(value); return }
            let replace = function == .min ? Value.sortsBefore(value, current) : Value.sortsBefore(current, value)
            if replace { self = .extreme(value) }
        case (.values(var list), _):
            guard let x = value.numeric else { return }
            self = .count(0)
            list.append(x)
            self = .values(list)
        case (.rate(let h, let n), _):
            self = .rate(hits: h + (value.isTrue ? 1 : 0), rows: n + 1)
        }
    }

    /// Merges the state of the same aggregate (`function`) over rows that came after this state's: equal values spelled apart
    /// keep this state's spelling (a distinct set keeps its members, an extreme is replaced only by a value that
    /// sorts before or after it), as one state adding both runs' rows would. Doubles of a sum are added in another
    /// order than one state adds them (``Sink/merges(_:)`` leaves them out).
    mutating func merge(_ other: AggregateState, _ function: AggregateFunction) {
        switch (self, other) {
        case (.count(let a), .count(let b)):
            self = .count(a + b)
        case (.distinct(var a), .distinct(let b)):
            self = .count(0)  // release the set's buffer before mutating it
            a.formUnion(b)
            self = .distinct(a)
        case (.sum(let i, let d, let saw), .sum(let j, let e, let sawToo)):
            self = .sum(integers: i + j, doubles: d + e, sawDouble: saw || sawToo)
        case (.average(let s, let n), .average(let t, let m)):
            self = .average(sum: s + t, count: n + m)
        case (.extreme, .extreme(let value)):
            // The later run's extreme, added as one row is: it replaces this one only when it sorts past it.
            if let value { add(function, value) }
        case (.values(var a), .values(let b)):
            self = .count(0)
            a += b
            self = .values(a)
        case (.rate(let h, let n), .rate(let g, let m)):
            self = .rate(hits: h + g, rows: n + m)
        default:
            preconditionFailure("merging states of different aggregates")
        }
    }

    /// The aggregate's value; count-like aggregates are 0 over no rows, the others absent (rule 11).
    func result(_ aggregate: BoundAggregate) -> Value {
        let isDuration = aggregate.resultType == .duration
        // A sum or an average of finite values can still overflow: absent then, like arithmetic.
        func number(_ d: Double) -> Value { (isDuration ? Value.duration(d) : .number(d)).finite }
        // A sum of integers is an integer, absent past 64 bits as `+` is; one number among them makes it a number.
        switch self {
        case .count(let n): return .integer(Int64(n))
        case .distinct(let set): return .integer(Int64(set.count))
        case .sum(let i, let d, let sawDouble):
            if isDuration || sawDouble { return number(Double(i) + d) }
            return Int64(exactly: i).map(Value.integer) ?? .null
        case .average(let s, let n): return n == 0 ? .null : number(s / Double(n))
        case .extreme(let v): return v ?? .null
        case .values(let list):
            guard case .percentile(let q) = aggregate.function else { return .null }
            return Percentile.of(list, q).map(number) ?? .null
        case .rate(let h, let n):
            switch aggregate.function {
            case .ciLow(let level), .ciHigh(let level):
                guard let interval = Statistics.wilsonInterval(successes: h, trials: n, level: level) else {
                    return .null
                }
                return .number(aggregate.function == .ciLow(level) ? interval.low : interval.high)
            default:
                return n == 0 ? .null : .number(Double(h) / Double(n))
            }
        }
    }
}

/// Group keys for a row: one combination per element of the cartesian product, where a set-valued key
/// (a multi-select answer) explodes into one key per option, and an empty set into one absent key (rule 9).
func keyCombinations(_ values: [Value]) -> [[Value]] {
    // The common case, no set among the keys: the keys themselves, without building a product.
    if !values.contains(where: { if case .set = $0 { true } else { false } }) { return [values] }
    var combinations: [[Value]] = [[]]
    for value in values {
        let options: [Value] =
            if case .set(let items) = value { items.isEmpty ? [.null] : items.map(Value.string) } else { [value] }
        if options.count == 1 {
            for i in combinations.indices { combinations[i].append(options[0]) }
        } else {
            combinations = combinations.flatMap { c in options.map { c + [$0] } }
        }
    }
    return combinations
}

/// Orders rows by the given leading key columns, ascending, absent last.
func keyOrder(_ a: [Value], _ b: [Value], columns: Int) -> Bool {
    for i in 0..<columns {
        if Value.sortsBefore(a[i], b[i]) { return true }
        if Value.sortsBefore(b[i], a[i]) { return false }
    }
    return false
}
