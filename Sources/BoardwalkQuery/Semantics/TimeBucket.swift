import BoardwalkModel
import Foundation

/// The calendar unit a time bucket truncates to: `hour(t)`, `day(t)`, `week(t)` (ISO 8601: Monday), `month(t)`.
package enum TimeUnit: String, CaseIterable, Hashable, Sendable {
    case hour, day, week, month

    /// Whether a bucket of this unit is shown as a date (`2026-11-01`) rather than a date and time.
    package var showsDate: Bool { self != .hour }
}

/// The zone a time bucket is computed in: UTC, a fixed offset (`+03:00`), or an IANA zone (`Europe/Berlin`)
/// whose offset changes with daylight saving time.
package struct BucketZone: Hashable, Sendable, CustomStringConvertible {
    package enum Rule: Hashable, Sendable {
        /// Seconds east of UTC, always.
        case fixed(Int)
        /// A zone of the time-zone database, through Foundation.
        case named(TimeZone)
    }

    package let rule: Rule
    /// The zone as written (`UTC`, `+03:00`, `Europe/Berlin`).
    package let description: String

    package static let utc = BucketZone(rule: .fixed(0), description: "UTC")

    package init(rule: Rule, description: String) {
        self.rule = rule
        self.description = description
    }

    /// Reads `UTC` (or `Z`, `GMT`), a fixed offset `±HH:MM`, `±HHMM` or `±HH` (at most ±18:00), or a zone name of
    /// the time-zone database. Returns `nil` for anything else.
    package init?(_ text: String) {
        switch text.uppercased() {
        case "UTC", "Z", "GMT", "ETC/UTC":
            self = .utc
            return
        default:
            break
        }
        if let seconds = BucketZone.fixedOffset(text) {
            self.init(rule: .fixed(seconds), description: text)
        } else if text.contains("/"), let zone = TimeZone(identifier: text) {
            self.init(rule: .named(zone), description: text)
        } else {
            return nil
        }
    }

    /// `±HH:MM`, `±HHMM` or `±HH` as seconds east of UTC.
    static func fixedOffset(_ text: String) -> Int? {
        let bytes = Array(text.utf8)
        guard let sign = bytes.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") else { return nil }
        let digits = bytes.dropFirst().filter { $0 != UInt8(ascii: ":") }
        let colons = bytes.count - 1 - digits.count
        guard digits.count == 2 || digits.count == 4, colons <= (digits.count == 4 ? 1 : 0),
            colons == 0 || bytes.count == 6 && bytes[3] == UInt8(ascii: ":"),
            digits.allSatisfy({ (0x30...0x39).contains($0) })
        else { return nil }
        let value = digits.map { Int($0 - 0x30) }
        let hours = value[0] * 10 + value[1]
        let minutes = digits.count == 4 ? value[2] * 10 + value[3] : 0
        guard minutes < 60, hours * 60 + minutes <= 18 * 60 else { return nil }
        let seconds = (hours * 60 + minutes) * 60
        return sign == UInt8(ascii: "-") ? -seconds : seconds
    }

    /// Seconds east of UTC at instant `t` (the whole second `t` falls in).
    package func offset(atSecond t: Int64) -> Int {
        switch rule {
        case .fixed(let seconds): seconds
        case .named(let zone): zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(t)))
        }
    }
}

/// Truncates instants to the start of their hour, day, ISO week or month in a zone.
///
/// A bucket starts at the first instant whose wall-clock time in the zone is the start of the unit: a day at
/// local midnight (or, where a daylight-saving change skips midnight, at the change), a week at Monday's
/// midnight. An hour that a clock change repeats is two buckets, one per offset; a day is one bucket however
/// its hours were changed. The bucket is a ``Timestamp``: the instant the unit began.
///
/// - Complexity: O(1). In an IANA zone a truncation asks Foundation for the offset and the next clock change
///   (about 100 ns each); the stretch of the last bucket without a clock change is cached, so instants that
///   fall in it cost two comparisons.
package struct TimeBucketer: Sendable {
    package let unit: TimeUnit
    package let zone: BucketZone
    /// Microseconds known to lie in the bucket that starts at `cachedStart`.
    private var cached: Range<Int64> = 0..<0
    private var cachedStart: Int64 = 0

    package init(unit: TimeUnit, zone: BucketZone) {
        self.unit = unit
        self.zone = zone
    }

    /// The start of the bucket that holds `t`.
    package mutating func start(of t: Timestamp) -> Timestamp {
        let micros = t.microseconds
        if cached.contains(micros) { return Timestamp(microseconds: cachedStart) }
        let second = floorDivide(micros, 1_000_000)
        let offset = Int64(zone.offset(atSecond: second))
        let wall = truncate(wall: second + offset)
        let begin: Int64
        // From `from` on, the bucket's instants share one offset until the next clock change, so their wall-clock
        // time grows with them, and the bucket ends where it reaches the next unit's start or at the change.
        let from: Int64
        var until = advance(wall) - offset
        switch zone.rule {
        case .fixed:
            begin = wall - offset
            from = begin
        case .named:
            begin = instant(ofWall: wall, near: second, hint: Int(offset))
            let change = nextChange(after: begin)
            if change <= second {
                from = second
                until = min(until, nextChange(after: second))
            } else {
                from = begin
                until = min(until, change)
            }
        }
        cachedStart = begin * 1_000_000
        cached = from * 1_000_000..<max(until, from + 1) * 1_000_000
        return Timestamp(microseconds: cachedStart)
    }

    /// The UTC second of the first clock change after UTC second `t`, or `Int64.max` when there is none.
    private func nextChange(after t: Int64) -> Int64 {
        guard case .named(let zone) = zone.rule,
            let date = zone.nextDaylightSavingTimeTransition(after: Date(timeIntervalSince1970: Double(t)))
        else { return Int64.max }
        return Int64(date.timeIntervalSince1970.rounded(.up))
    }

    /// The wall-clock start of the unit after the one starting at wall-clock second `wall`.
    private func advance(_ wall: Int64) -> Int64 {
        switch unit {
        case .hour: return wall + 3_600
        case .day: return wall + 86_400
        case .week: return wall + 7 * 86_400
        case .month:
            let (year, month, _) = Timestamp.civil(fromDays: floorDivide(wall, 86_400))
            let (y, m) = month == 12 ? (year + 1, Int64(1)) : (year, month + 1)
            return Timestamp.days(fromCivil: y, m, 1) * 86_400
        }
    }

    /// A wall-clock second (seconds since 1970-01-01T00:00 local) truncated to the start of its unit.
    private func truncate(wall: Int64) -> Int64 {
        let day = floorDivide(wall, 86_400)
        switch unit {
        case .hour:
            return floorDivide(wall, 3_600) * 3_600
        case .day:
            return day * 86_400
        case .week:
            // 1970-01-01 was a Thursday: days since the Monday before it are (day + 3) mod 7.
            let sinceMonday = ((day + 3) % 7 + 7) % 7
            return (day - sinceMonday) * 86_400
        case .month:
            let (year, month, _) = Timestamp.civil(fromDays: day)
            return Timestamp.days(fromCivil: year, month, 1) * 86_400
        }
    }

    /// The UTC second whose wall-clock time is `wall`: for hours the latest such instant at or before `near` (a
    /// repeated hour is two buckets), for longer units the earliest; where `wall` was skipped by a clock change,
    /// the change itself (the first instant whose wall-clock time is past `wall`).
    private func instant(ofWall wall: Int64, near t: Int64, hint: Int) -> Int64 {
        var offsets = [hint]
        for _ in 0..<2 {
            let o = zone.offset(atSecond: wall - Int64(offsets[offsets.count - 1]))
            if !offsets.contains(o) { offsets.append(o) }
        }
        let matches = offsets.map { wall - Int64($0) }.filter { zone.offset(atSecond: $0) == Int(wall - $0) }
        if unit == .hour, let latest = matches.filter({ $0 <= t }).max() { return latest }
        if let earliest = matches.min() { return earliest }
        // Skipped: search the change between the instants the wall time would have under each offset.
        var low = wall - Int64(offsets.max()!) - 86_400
        var high = wall - Int64(offsets.min()!) + 86_400
        while low < high {
            let mid = low + (high - low) / 2
            if mid + Int64(zone.offset(atSecond: mid)) >= wall { high = mid } else { low = mid + 1 }
        }
        return low
    }
}

@inline(__always)
private func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
    let q = a / b
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
}
