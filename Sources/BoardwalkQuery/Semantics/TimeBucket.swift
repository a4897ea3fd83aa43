import BoardwalkModel
import Foundation

/// The calendar unit of a time bucket: `hour(t)`, `day(t)`, `week(t)` (ISO 8601: weeks start on Monday),
/// `month(t)`.
public enum TimeUnit: String, CaseIterable, Hashable, Sendable {
    case hour, day, week, month
}

/// A value of `hour(t)`, `day(t)`, `week(t)` or `month(t)`: the instant the unit began in its zone, shown as the
/// zone's wall-clock date (`2026-11-01`), or date and hour (`2026-11-01T10:00`).
///
/// It compares, sorts and computes as the instant ``start`` (`day(now()) - 7d` is a timestamp); two buckets are
/// equal when they start at the same instant and have the same unit.
public struct TimeBucket: Hashable, Sendable, CustomStringConvertible {
    /// The instant the unit began.
    public let start: Timestamp
    public let unit: TimeUnit
    /// The zone's offset from UTC at ``start``, in seconds: what ``description`` shows the start in.
    public let offset: Int

    /// A bucket of `unit` starting at `start`, shown at `offset` seconds east of UTC.
    public init(start: Timestamp, unit: TimeUnit, offset: Int) {
        self.start = start
        self.unit = unit
        self.offset = offset
    }

    public static func == (a: TimeBucket, b: TimeBucket) -> Bool { a.start == b.start && a.unit == b.unit }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(start)
        hasher.combine(unit)
    }

    /// The calendar year of the date it is shown as.
    var year: Int64 {
        let wall = start.microseconds / 1_000_000 + Int64(offset)
        return Timestamp.civil(fromDays: wall >= 0 ? wall / 86_400 : (wall - 86_399) / 86_400).year
    }

    /// `2026-11-01` for a day, week or month; `2026-11-01T10:00` for an hour (the wall-clock time in its zone).
    public var description: String {
        let wall = start.microseconds / 1_000_000 + Int64(offset)
        let days = wall >= 0 ? wall / 86_400 : (wall - 86_399) / 86_400
        let (year, month, day) = Timestamp.civil(fromDays: days)
        func pad(_ v: Int64, _ width: Int) -> String {
            let s = String(v)
            return s.count < width ? String(repeating: "0", count: width - s.count) + s : s
        }
        let date = "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
        guard unit == .hour else { return date }
        let secondOfDay = wall - days * 86_400
        return "\(date)T\(pad(secondOfDay / 3_600, 2)):\(pad(secondOfDay / 60 % 60, 2))"
    }
}

/// The zone a time bucket is computed in: UTC, a fixed offset (`+03:00`), or a zone of the time-zone database
/// (`Europe/Berlin`), whose offset changes with daylight saving time.
package struct BucketZone: Hashable, Sendable, CustomStringConvertible {
    package enum Rule: Sendable {
        /// Seconds east of UTC, always.
        case fixed(Int)
        /// A zone of the time-zone database, with its clock changes read once.
        case named(ZoneChanges)
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
    /// the time-zone database (`Europe/Berlin`). Returns `nil` for anything else.
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
            self.init(rule: .named(ZoneChanges(zone)), description: text)
        } else {
            return nil
        }
    }

    /// The zone names of the time-zone database, for suggestions.
    package static var knownNames: [String] { TimeZone.knownTimeZoneIdentifiers }

    package static func == (a: BucketZone, b: BucketZone) -> Bool { a.description == b.description }
    package func hash(into hasher: inout Hasher) { hasher.combine(description) }

    /// Whether the zone's offset never changes.
    package var isFixed: Bool { if case .fixed = rule { true } else { false } }

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

    /// Seconds east of UTC at UTC second `t`.
    /// - Complexity: O(1) for a fixed offset; O(log c) for the c clock changes of a named zone from 1970 to 2100,
    ///   through Foundation outside those years.
    package func offset(atSecond t: Int64) -> Int {
        switch rule {
        case .fixed(let seconds): seconds
        case .named(let changes): changes.offset(atSecond: t)
        }
    }

    /// The start of the hour, day, ISO week or month that holds `t` in this zone.
    ///
    /// A bucket starts at the first instant whose wall-clock time in the zone is the start of the unit: a day at
    /// local midnight (or, where a clock change skips midnight, at the change), a week at Monday's midnight. An
    /// hour that a clock change repeats is two buckets, one per offset; a day is one bucket however its hours
    /// were changed.
    /// - Complexity: O(1) for a fixed offset; a few offset look-ups in a named zone.
    package func bucket(of t: Timestamp, unit: TimeUnit) -> TimeBucket {
        let second = floorDivide(t.microseconds, 1_000_000)
        let offset = self.offset(atSecond: second)
        let wall = Self.truncate(wall: second + Int64(offset), to: unit)
        let start: Int64
        switch rule {
        case .fixed: start = wall - Int64(offset)
        case .named: start = instant(ofWall: wall, near: second, hint: offset, unit: unit)
        }
        return TimeBucket(
            start: Timestamp(microseconds: start * 1_000_000), unit: unit,
            offset: start == second ? offset : self.offset(atSecond: start))
    }

    /// A wall-clock second (seconds since 1970-01-01T00:00 local) truncated to the start of its unit.
    private static func truncate(wall: Int64, to unit: TimeUnit) -> Int64 {
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
    /// repeated hour is two buckets), for longer units the earliest; where a clock change skipped `wall`, the
    /// change itself (the first instant whose wall-clock time is past `wall`).
    private func instant(ofWall wall: Int64, near t: Int64, hint: Int, unit: TimeUnit) -> Int64 {
        // The offsets that may hold at the instant (the hint, and those found from it: at most three), and the
        // instants they give whose own offset agrees. Kept in tuples: this runs once per bucketed instant, and arrays
        // cost three allocations each time.
        var offsets = (hint, hint, hint)
        var count = 1
        for _ in 0..<2 {
            let last = count == 1 ? offsets.0 : offsets.1
            let o = offset(atSecond: wall - Int64(last))
            if o != offsets.0 && (count < 2 || o != offsets.1) {
                if count == 1 { offsets.1 = o } else { offsets.2 = o }
                count += 1
            }
        }
        var latest: Int64? = nil, earliest: Int64? = nil
        var lowest = Int.max, highest = Int.min
        for i in 0..<count {
            let o = i == 0 ? offsets.0 : i == 1 ? offsets.1 : offsets.2
            lowest = min(lowest, o)
            highest = max(highest, o)
            let candidate = wall - Int64(o)
            guard offset(atSecond: candidate) == Int(wall - candidate) else { continue }
            earliest = min(earliest ?? candidate, candidate)
            if candidate <= t { latest = max(latest ?? candidate, candidate) }
        }
        if unit == .hour, let latest { return latest }
        if let earliest { return earliest }
        // Skipped: search the change between the instants the wall time would have under each offset.
        var low = wall - Int64(highest) - 86_400
        var high = wall - Int64(lowest) + 86_400
        while low < high {
            let mid = low + (high - low) / 2
            if mid + Int64(offset(atSecond: mid)) >= wall { high = mid } else { low = mid + 1 }
        }
        return low
    }
}

/// A named zone's offsets from 1970 to 2100, read from Foundation once: a query that buckets millions of
/// instants looks each offset up in this table instead of asking Foundation (about 100 ns a call).
package final class ZoneChanges: Sendable {
    let zone: TimeZone
    /// UTC seconds at which the offset changes, in order.
    let changes: [Int64]
    /// `offsets[i]` holds before `changes[i]` (and `offsets[changes.count]` after the last change).
    let offsets: [Int]
    /// The table covers UTC seconds in `covered`; outside it Foundation answers.
    let covered: Range<Int64>

    init(_ zone: TimeZone) {
        let first: Int64 = 0
        let last: Int64 = 4_102_444_800  // 2100-01-01
        var changes: [Int64] = []
        var offsets = [zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(first)))]
        var date = Date(timeIntervalSince1970: Double(first))
        while let change = zone.nextDaylightSavingTimeTransition(after: date),
            change.timeIntervalSince1970 < Double(last)
        {
            let second = Int64(change.timeIntervalSince1970.rounded(.up))
            let after = zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(second)))
            if after != offsets[offsets.count - 1] {
                changes.append(second)
                offsets.append(after)
            }
            date = change
        }
        self.zone = zone
        self.changes = changes
        self.offsets = offsets
        self.covered = first..<last
    }

    func offset(atSecond t: Int64) -> Int {
        guard covered.contains(t) else { return zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(t))) }
        // The number of changes at or before t.
        var low = 0
        var high = changes.count
        while low < high {
            let mid = (low + high) / 2
            if changes[mid] <= t { low = mid + 1 } else { high = mid }
        }
        return offsets[low]
    }
}

@inline(__always)
private func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
    let q = a / b
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
}
