import BoardwalkModel

/// A value a query computes: a field of an event or session, an aggregate, a cell of a result.
public enum Value: Hashable, Sendable {
    /// Absent (semantics rule 11: empty `element_id`/`reply`, missing fields, avg of nothing).
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    /// A duration in microseconds (fractional after interpolation).
    case duration(Double)
    case time(Timestamp)
    /// The start of an hour, day, week or month in a zone (`day(started)`): a timestamp shown as a date.
    case bucket(TimeBucket)
    /// A multi-select answer: option values, sorted and unique (rule 9).
    case set([String])

    /// Whether the value is absent.
    public var isNull: Bool { if case .null = self { true } else { false } }

    /// Whether the value is a multi-select set (which explodes into one group per option).
    var isSet: Bool { if case .set = self { true } else { false } }

    /// The numeric value of integers, numbers and durations (microseconds).
    var numeric: Double? {
        switch self {
        case .integer(let v): Double(v)
        case .number(let v): v
        case .duration(let v): v
        default: nil
        }
    }

    /// Truthiness of a predicate's result: only `true` is true (an absent value is false).
    var isTrue: Bool { if case .bool(true) = self { true } else { false } }

    // MARK: Comparison in expressions

    /// `==` in queries: absent equals nothing; a set equals a string it contains; integers and numbers compare
    /// numerically; otherwise values of different types are unequal.
    ///
    /// `SessionFilters` checks `onboarding ==`, `!=`, `in` and `not in` against string literals without building
    /// values: a change to these rules for strings or absent values must change it too (its test compares both).
    static func queryEqual(_ a: Value, _ b: Value) -> Bool {
        switch (a.instant, b.instant) {
        case (.null, _), (_, .null): return false
        case (.set(let s), .string(let x)), (.string(let x), .set(let s)): return s.contains(x)
        // A date answer equals the text of its date, as it did when it was text (`answer("birthday") == "1995-03-04"`).
        case (.time, .string(let x)): if case .bucket(let d) = a { return d.description == x } else { return false }
        case (.string(let x), .time): if case .bucket(let d) = b { return d.description == x } else { return false }
        case (.integer, .number), (.number, .integer), (.integer, .integer), (.number, .number):
            return a.numeric! == b.numeric!
        default: return a.instant == b.instant
        }
    }

    /// A bucket as the instant it starts at, which is how it compares and computes; any other value as it is.
    var instant: Value {
        if case .bucket(let b) = self { .time(b.start) } else { self }
    }

    /// `<` in queries, or nil when the two values are not ordered against each other (the comparison is false).
    static func queryLess(_ a: Value, _ b: Value) -> Bool? {
        switch (a.instant, b.instant) {
        case (.integer, .integer), (.integer, .number), (.number, .integer), (.number, .number),
            (.duration, .duration):
            return a.numeric! < b.numeric!
        case (.string(let x), .string(let y)): return x < y
        case (.time(let x), .time(let y)): return x < y
        case (.bool(let x), .bool(let y)): return !x && y
        default: return nil
        }
    }

    /// Evaluates a comparison operator.
    static func compare(_ op: BinaryOperator, _ a: Value, _ b: Value) -> Bool {
        switch op {
        case .equal: return queryEqual(a, b)
        case .notEqual: return !a.isNull && !b.isNull && !queryEqual(a, b)
        case .less: return queryLess(a, b) ?? false
        case .greater: return queryLess(b, a) ?? false
        case .lessEqual: return queryLess(a, b).map { $0 || queryEqual(a, b) } ?? false
        case .greaterEqual: return queryLess(b, a).map { $0 || queryEqual(a, b) } ?? false
        default: return false
        }
    }

    /// Evaluates `+ - * /`; absent when an operand is absent, on overflow (an infinite or NaN result included) and
    /// on division by zero.
    static func arithmetic(_ op: BinaryOperator, _ a: Value, _ b: Value) -> Value {
        exactArithmetic(op, a, b).finite
    }

    /// The value, or absent when it is a number or duration that is infinite or NaN: no such value reaches a result
    /// (they printed as `inf` in tables and CSV and `null` in JSON, and sorted and compared by IEEE rules).
    var finite: Value {
        switch self {
        case .number(let d), .duration(let d): d.isFinite ? self : .null
        default: self
        }
    }

    private static func exactArithmetic(_ op: BinaryOperator, _ a: Value, _ b: Value) -> Value {
        let a = a.instant
        let b = b.instant
        switch (op, a, b) {
        case (.add, .time(let t), .duration(let d)), (.add, .duration(let d), .time(let t)):
            return shifted(t, by: d)
        case (.subtract, .time(let t), .duration(let d)):
            return shifted(t, by: -d)
        case (.subtract, .time(let x), .time(let y)):
            return .duration(Double(x.microseconds) - Double(y.microseconds))
        case (.add, .duration(let x), .duration(let y)): return .duration(x + y)
        case (.subtract, .duration(let x), .duration(let y)): return .duration(x - y)
        case (.multiply, .duration(let d), _) where b.numeric != nil && !isDuration(b): return .duration(d * b.numeric!)
        case (.multiply, _, .duration(let d)) where a.numeric != nil && !isDuration(a): return .duration(d * a.numeric!)
        case (.divide, .duration(let d), _) where b.numeric != nil && !isDuration(b):
            return b.numeric! == 0 ? .null : .duration(d / b.numeric!)
        case (.divide, .duration(let x), .duration(let y)):
            return y == 0 ? .null : .number(x / y)
        case (_, .integer(let x), .integer(let y)):
            switch op {
            case .add: let r = x.addingReportingOverflow(y); return r.overflow ? .null : .integer(r.partialValue)
            case .subtract:
                let r = x.subtractingReportingOverflow(y); return r.overflow ? .null : .integer(r.partialValue)
            case .multiply:
                let r = x.multipliedReportingOverflow(by: y); return r.overflow ? .null : .integer(r.partialValue)
            case .divide: return y == 0 ? .null : .number(Double(x) / Double(y))
            default: return .null
            }
        default:
            guard !isDuration(a), !isDuration(b), let x = a.numeric, let y = b.numeric else { return .null }
            switch op {
            case .add: return .number(x + y)
            case .subtract: return .number(x - y)
            case .multiply: return .number(x * y)
            case .divide: return y == 0 ? .null : .number(x / y)
            default: return .null
            }
        }
    }

    private static func isDuration(_ v: Value) -> Bool { if case .duration = v { true } else { false } }

    private static func shifted(_ t: Timestamp, by micros: Double) -> Value {
        let r = Double(t.microseconds) + micros
        guard r.magnitude < 9.2e18 else { return .null }
        return .time(Timestamp(microseconds: Int64(r.rounded())))
    }

    // MARK: Sorting results

    /// A total order for sorting result rows: absent values last; booleans, then numbers (integers, numbers and
    /// durations together), strings, times, sets.
    static func sortsBefore(_ a: Value, _ b: Value) -> Bool {
        // A date answer among text answers of the same element (a partial date) sorts by its text, as it did as
        // text; no other column mixes times and strings.
        switch (a, b) {
        case (.bucket(let x), .string(let y)): return x.description < y
        case (.string(let x), .bucket(let y)): return x < y.description
        default: break
        }
        let ra = a.sortRank, rb = b.sortRank
        if ra != rb { return ra < rb }
        switch (a, b) {
        case (.bool(let x), .bool(let y)): return !x && y
        case (.string(let x), .string(let y)): return x < y
        case (.time(let x), .time(let y)): return x < y
        case (.bucket(let x), .bucket(let y)): return x.start < y.start
        case (.time(let x), .bucket(let y)): return x < y.start
        case (.bucket(let x), .time(let y)): return x.start < y
        case (.set(let x), .set(let y)): return x.lexicographicallyPrecedes(y)
        default:
            if let x = a.numeric, let y = b.numeric { return x < y }
            return false
        }
    }

    private var sortRank: Int {
        switch self {
        case .bool: 0
        case .integer, .number, .duration: 1
        case .string: 2
        case .time, .bucket: 3
        case .set: 4
        case .null: 5
        }
    }

    // MARK: From the model

    /// A state update's value as an answer (rule 9): a select's option value, a multi-select's set of option
    /// values, an input's text or number, a date as `YYYY-MM-DD` with `????`/`??` for missing parts. Absent for a
    /// multi-select with nothing chosen (rule 11: a value that is not there) and for a number that is not finite
    /// (`NaN` or `Infinity` typed into an input).
    static func answer(_ value: StateValue) -> Value {
        switch value {
        case .select(let choice): return .string(choice.value)
        case .multiSelect(let choices): return choices.isEmpty ? .null : .set(Array(Set(choices.map(\.value))).sorted())
        case .input(.text(let s)), .input(.email(let s)): return .string(s)
        case .input(.number(let n)): return n.isFinite ? .number(n) : .null
        case .datePicker(let parts): return dateAnswer(parts)
        }
    }

    /// A date picker's answer (rule 9): a whole date (year 1 to 9999, month and day present and on the calendar) is
    /// the day it names, the instant it begins in UTC, shown as `YYYY-MM-DD`; any other the text of its parts
    /// (`"1995-??-??"`).
    static func dateAnswer(_ parts: DateParts) -> Value {
        guard let year = parts.year, let month = parts.month, let day = parts.day, (1...9999).contains(year),
            (1...12).contains(month), day >= 1,
            Int64(day) <= Timestamp.daysInMonth(year: Int64(year), month: Int64(month))
        else { return .string(dateText(parts)) }
        let days = Timestamp.days(fromCivil: Int64(year), Int64(month), Int64(day))
        return .bucket(TimeBucket(start: Timestamp(microseconds: days * 86_400_000_000), unit: .day, offset: 0))
    }

    /// The label(s) the user saw: a select's label or a multi-select's set of labels; absent for inputs and dates.
    static func label(_ value: StateValue) -> Value {
        switch value {
        case .select(let choice): return .string(choice.label)
        case .multiSelect(let choices): return choices.isEmpty ? .null : .set(Array(Set(choices.map(\.label))).sorted())
        default: return .null
        }
    }

    /// The option id(s) chosen: a select's id or a multi-select's set of ids; absent for inputs and dates.
    static func option(_ value: StateValue) -> Value {
        switch value {
        case .select(let choice): return .string(choice.id)
        case .multiSelect(let choices): return choices.isEmpty ? .null : .set(Array(Set(choices.map(\.id))).sorted())
        default: return .null
        }
    }

    static func dateText(_ parts: DateParts) -> String {
        func pad(_ v: Int?, _ width: Int) -> String {
            guard let v else { return String(repeating: "?", count: width) }
            let s = String(v)
            return s.count < width ? String(repeating: "0", count: width - s.count) + s : s
        }
        return "\(pad(parts.year, 4))-\(pad(parts.month, 2))-\(pad(parts.day, 2))"
    }
}
