/// Numbers for people: counts, durations, shares, sizes, with sensible units.
package enum Units {
    /// `999`, `1.2 k`, `34.5 k`, `1.2 M`, `3.0 G`: three significant digits at most above 1 000.
    package static func count(_ n: Int) -> String {
        let a = Double(n.magnitude)
        let sign = n < 0 ? "-" : ""
        if a < 1_000 { return String(n) }
        let (value, unit): (Double, String) =
            a < 1e6 ? (a / 1e3, "k") : a < 1e9 ? (a / 1e6, "M") : a < 1e12 ? (a / 1e9, "G") : (a / 1e12, "T")
        return sign + decimal(value, digits: value < 100 ? 1 : 0) + " " + unit
    }

    /// `850 µs`, `34 ms`, `1.2 s`, `2.5 min`, `3.1 h`, from microseconds.
    package static func duration(microseconds us: Int64) -> String {
        let a = Double(us.magnitude)
        let sign = us < 0 ? "-" : ""
        let text: String
        if a < 1_000 {
            text = "\(us.magnitude) µs"
        } else if a < 1e6 {
            text = decimal(a / 1e3, digits: a < 1e4 ? 1 : 0) + " ms"
        } else if a < 60e6 {
            text = decimal(a / 1e6, digits: 1) + " s"
        } else if a < 3600e6 {
            text = decimal(a / 60e6, digits: 1) + " min"
        } else if a < 86_400e6 * 2 {
            text = decimal(a / 3600e6, digits: 1) + " h"
        } else {
            text = decimal(a / 86_400e6, digits: 1) + " d"
        }
        return sign + text
    }

    /// `1 line`, `3 lines`: an exact count with its noun, plural unless the count is one (nouns that take an `s`).
    package static func counted(_ n: Int, _ noun: String) -> String { "\(n) \(noun)\(n == 1 ? "" : "s")" }

    /// `1 event`, `850 events`, `1.2 k events`: ``count(_:)`` with its noun, plural unless the count is one.
    package static func count(_ n: Int, _ noun: String) -> String { count(n) + " " + noun + (n == 1 ? "" : "s") }

    /// `12.5 %` for 0.125.
    package static func percent(_ fraction: Double) -> String {
        guard fraction.isFinite else { return "–" }
        return decimal(fraction * 100, digits: 1) + " %"
    }

    /// `512 B`, `1.2 KiB`, `34.0 MiB`, `1.1 GiB`.
    package static func bytes(_ n: Int) -> String {
        let a = Double(n)
        if a < 1024 { return "\(n) B" }
        if a < 1024 * 1024 { return decimal(a / 1024, digits: 1) + " KiB" }
        if a < 1024 * 1024 * 1024 { return decimal(a / 1024 / 1024, digits: 1) + " MiB" }
        return decimal(a / 1024 / 1024 / 1024, digits: 1) + " GiB"
    }

    /// A rate such as `1.2 M/s`.
    package static func rate(_ perSecond: Double) -> String {
        guard perSecond.isFinite, perSecond >= 0 else { return "–" }
        return count(Int(perSecond.rounded())) + "/s"
    }

    /// Fixed-point text with `digits` decimals, rounded half away from zero, without Foundation.
    package static func decimal(_ value: Double, digits: Int) -> String {
        guard value.isFinite else { return value.isNaN ? "nan" : value < 0 ? "-inf" : "inf" }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = (abs(value) * scale).rounded(.toNearestOrAwayFromZero)
        guard scaled < 9e18 else { return String(value) }
        let n = Int64(scaled)
        let whole = n / Int64(scale)
        var text = (value < 0 && n != 0 ? "-" : "") + String(whole)
        if digits > 0 {
            let fraction = String(n % Int64(scale))
            text += "." + String(repeating: "0", count: digits - fraction.count) + fraction
        }
        return text
    }
}
