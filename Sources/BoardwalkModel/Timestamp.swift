/// A point in time: microseconds since the Unix epoch, UTC.
///
/// Boardwalk does its own calendar arithmetic (proleptic Gregorian, UTC only) so that the model needs no
/// Foundation; `Foundation.Date` would round microseconds through a `Double`.
public struct Timestamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Microseconds since 1970-01-01T00:00:00Z.
    public var microseconds: Int64

    /// The first and last instants Boardwalk accepts: years 1970 through 9999.
    public static let range: ClosedRange<Timestamp> =
        Timestamp(microseconds: 0)...Timestamp(microseconds: 253_402_300_799_999_999)

    /// A timestamp from epoch microseconds.
    @inlinable
    public init(microseconds: Int64) { self.microseconds = microseconds }

    /// A timestamp from epoch milliseconds (how Adapty's backend and most SDK logs stamp events).
    @inlinable
    public init(milliseconds: Int64) { self.microseconds = milliseconds &* 1000 }

    /// Whether `a` is earlier than `b`.
    @inlinable
    public static func < (a: Timestamp, b: Timestamp) -> Bool { a.microseconds < b.microseconds }

    /// ISO-8601 in UTC with microseconds: `2026-11-01T10:00:00.123456Z`.
    public var description: String { iso8601 }

    /// ISO-8601 in UTC with microseconds: `2026-11-01T10:00:00.123456Z`.
    public var iso8601: String {
        let micros = microseconds
        var days = micros / 86_400_000_000
        var rest = micros % 86_400_000_000
        if rest < 0 { rest += 86_400_000_000; days -= 1 }
        let (y, m, d) = Timestamp.civil(fromDays: days)
        let secondOfDay = rest / 1_000_000
        let fraction = rest % 1_000_000
        var out = ""
        out.reserveCapacity(27)
        func pad(_ v: Int64, _ width: Int) {
            let s = String(v)
            if s.count < width { out += String(repeating: "0", count: width - s.count) }
            out += s
        }
        pad(y, 4); out += "-"; pad(m, 2); out += "-"; pad(d, 2); out += "T"
        pad(secondOfDay / 3600, 2); out += ":"; pad(secondOfDay / 60 % 60, 2); out += ":"; pad(secondOfDay % 60, 2)
        out += "."; pad(fraction, 6); out += "Z"
        return out
    }

    /// Parses ISO-8601: `2026-11-01`, `2026-11-01T10:00:00`, with an optional fraction of up to 9 digits
    /// (kept to the microsecond, truncated), and an optional zone `Z` or `±HH:MM` / `±HHMM` / `±HH`.
    /// A space may stand for the `T`. A time without a zone is taken as UTC. Returns `nil` for anything
    /// else, for impossible dates (`2026-02-30`) and for instants outside ``range``.
    public init?(iso8601 text: some StringProtocol) {
        var text = String(text)
        guard let t = text.withUTF8({ Timestamp.parseISO8601(UnsafeRawBufferPointer($0)) }) else { return nil }
        self = t
    }

    /// Parses ISO-8601 from raw bytes; see ``init(iso8601:)``.
    package static func parseISO8601(_ bytes: UnsafeRawBufferPointer) -> Timestamp? {
        var i = 0
        let n = bytes.count
        func digits(_ count: Int) -> Int64? {
            guard i + count <= n else { return nil }
            var v: Int64 = 0
            for _ in 0..<count {
                let c = bytes[i]
                guard c >= 0x30, c <= 0x39 else { return nil }
                v = v * 10 + Int64(c - 0x30)
                i += 1
            }
            return v
        }
        func expect(_ c: UInt8) -> Bool {
            guard i < n, bytes[i] == c else { return false }
            i += 1
            return true
        }
        guard let year = digits(4), expect(0x2D), let month = digits(2), expect(0x2D), let day = digits(2) else {
            return nil
        }
        guard (1...12).contains(month), day >= 1, day <= daysInMonth(year: year, month: month) else { return nil }
        var seconds: Int64 = 0
        var micros: Int64 = 0
        if i < n, bytes[i] == UInt8(ascii: "T") || bytes[i] == UInt8(ascii: "t") || bytes[i] == 0x20 {
            i += 1
            guard let hh = digits(2), expect(0x3A), let mm = digits(2), hh < 24, mm < 60 else { return nil }
            var ss: Int64 = 0
            if expect(0x3A) {
                guard let s = digits(2), s < 60 else { return nil }  // leap seconds are not representable
                ss = s
                if i < n, bytes[i] == 0x2E || bytes[i] == 0x2C {
                    i += 1
                    var count = 0
                    var frac: Int64 = 0
                    while i < n, bytes[i] >= 0x30, bytes[i] <= 0x39 {
                        if count < 6 { frac = frac * 10 + Int64(bytes[i] - 0x30) }
                        count += 1
                        i += 1
                    }
                    guard count >= 1, count <= 9 else { return nil }
                    for _ in min(count, 6)..<6 { frac *= 10 }
                    micros = frac
                }
            }
            seconds = hh * 3600 + mm * 60 + ss
            if i < n {
                let c = bytes[i]
                if c == UInt8(ascii: "Z") || c == UInt8(ascii: "z") {
                    i += 1
                } else if c == 0x2B || c == 0x2D {
                    i += 1
                    guard let oh = digits(2), oh < 24 else { return nil }
                    var om: Int64 = 0
                    if i < n {
                        _ = expect(0x3A)
                        guard let m = digits(2), m < 60 else { return nil }
                        om = m
                    }
                    let offset = oh * 3600 + om * 60
                    seconds += c == 0x2B ? -offset : offset
                } else {
                    return nil
                }
            }
        }
        guard i == n else { return nil }
        let days = Timestamp.days(fromCivil: year, month, day)
        let t = Timestamp(microseconds: (days * 86_400 + seconds) * 1_000_000 + micros)
        return Timestamp.range.contains(t) ? t : nil
    }

    @usableFromInline
    package static func daysInMonth(year: Int64, month: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    package static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The proleptic Gregorian date of a day number (Howard Hinnant's `civil_from_days`).
    package static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (m <= 2 ? y + 1 : y, m, d)
    }
}
