import BoardwalkModel

/// The unit of a time given as a number (`"timestamp": 1793491200`): seconds, milliseconds or microseconds since
/// 1970-01-01T00:00:00Z.
///
/// A reader without a unit (``EventReader/timeUnit`` `nil`, the default) tells it by the number's size. From
/// 2001-09-09T01:46:40Z to the year 9999 the three units have disjoint ranges: seconds are 10 to 12 digits
/// (1 000 000 000 up to 253 402 300 799), milliseconds 13 to 15, microseconds 16 to 18. A number outside them
/// (an earlier time, or one in a gap between the ranges) could be more than one unit and is rejected, naming the
/// way to give the unit.
public enum EpochUnit: String, Hashable, Sendable, CaseIterable {
    /// Seconds (a fraction is kept to the microsecond).
    case seconds = "s"
    /// Milliseconds (a fraction is kept to the microsecond).
    case milliseconds = "ms"
    /// Microseconds.
    case microseconds = "us"

    /// Microseconds per unit.
    @inlinable
    public var microseconds: Int64 {
        switch self {
        case .seconds: 1_000_000
        case .milliseconds: 1000
        case .microseconds: 1
        }
    }

    /// The largest number of this unit in ``Timestamp/range`` (the end of the year 9999).
    @inlinable
    public var largest: Int64 {
        switch self {
        case .seconds: 253_402_300_799
        case .milliseconds: 253_402_300_799_999
        case .microseconds: 253_402_300_799_999_999
        }
    }

    /// The smallest number of a unit told by its size: 2001-09-09T01:46:40Z, when seconds reach ten digits.
    @inlinable
    public var smallestBySize: Int64 { 1_000_000_000 * 1_000_000 / microseconds }

    /// The unit that a non-negative number of that size has, or `nil` when its size does not tell (see the type's
    /// discussion).
    @inlinable
    public static func bySize(_ n: Int64) -> EpochUnit? {
        if n >= 1_000_000_000_000_000 { return n <= EpochUnit.microseconds.largest ? .microseconds : nil }
        if n >= 1_000_000_000_000 { return n <= EpochUnit.milliseconds.largest ? .milliseconds : nil }
        if n >= 1_000_000_000 { return n <= EpochUnit.seconds.largest ? .seconds : nil }
        return nil
    }

    /// The unit's name in messages: `seconds`, `milliseconds`, `microseconds`.
    public var name: String {
        switch self {
        case .seconds: "seconds"
        case .milliseconds: "milliseconds"
        case .microseconds: "microseconds"
        }
    }
}
