import BoardwalkGenerator
import BoardwalkModel
import Foundation
import Testing

@testable import BoardwalkQuery

/// Time buckets agree with Foundation's calendar in every kind of zone, across clock changes.
@Suite struct TimeBucketTests {
    /// Zones with the clock changes that make buckets hard: daylight saving in both hemispheres, a half-hour
    /// offset, a half-hour daylight saving step, midnight skipped, a whole day skipped, a permanent offset change.
    static let zones = [
        "Europe/Berlin", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe", "America/Sao_Paulo",
        "Pacific/Apia", "Europe/Moscow", "America/Santiago", "Asia/Tehran",
    ]

    /// Foundation's answer: the start of the calendar unit holding `t` (ISO 8601 weeks start on Monday).
    static func reference(_ t: Timestamp, _ unit: TimeUnit, _ zone: TimeZone) -> Int64 {
        var calendar = Calendar(identifier: .iso8601)
        calendar.timeZone = zone
        let component: Calendar.Component =
            switch unit {
            case .hour: .hour
            case .day: .day
            case .week: .weekOfYear
            case .month: .month
            }
        let date = Date(timeIntervalSince1970: Double(t.microseconds) / 1e6)
        let start = calendar.dateInterval(of: component, for: date)!.start
        return Int64(start.timeIntervalSince1970.rounded()) * 1_000_000
    }

    @Test(arguments: zones, TimeUnit.allCases)
    func agreesWithFoundationAcrossClockChanges(zoneName: String, unit: TimeUnit) throws {
        let zone = try #require(BucketZone(zoneName))
        guard case .named(let foundationZone) = zone.rule else {
            Issue.record("\(zoneName) should be a named zone")
            return
        }
        // Lord Howe's clock falls back half an hour: Foundation starts the repeated half hour's hour at an instant
        // outside it; Boardwalk keeps the hour one bucket (pinned in `halfHourFallBackKeepsOneHourBucket`).
        if zoneName == "Australia/Lord_Howe" && unit == .hour { return }
        var shared = TimeBucketer(unit: unit, zone: zone)
        var rng = SplitMix64(seed: 2026)
        // Instants around every clock change of 2008–2028, and random ones, in time order (the shared bucketer's
        // cache is exercised as a scan uses it) and then shuffled.
        var instants: [Int64] = []
        var date = Date(timeIntervalSince1970: 1_199_145_600)  // 2008-01-01
        while let change = foundationZone.nextDaylightSavingTimeTransition(after: date),
            change.timeIntervalSince1970 < 1_830_297_600
        {
            let second = Int64(change.timeIntervalSince1970.rounded())
            for delta: Int64 in [-86_400, -3_601, -3_600, -1_801, -1, 0, 1, 1_799, 3_599, 3_600, 86_399] {
                instants.append((second + delta) * 1_000_000 + Int64.random(in: 0..<1_000_000, using: &rng))
            }
            date = change
        }
        for _ in 0..<2_000 {
            instants.append(Int64.random(in: 1_199_145_600_000_000..<1_830_297_600_000_000, using: &rng))
        }
        instants.sort()
        let orders = [instants, instants.shuffled(using: &rng)]
        for order in orders {
            for micros in order {
                let t = Timestamp(microseconds: micros)
                var fresh = TimeBucketer(unit: unit, zone: zone)
                let expected = Self.reference(t, unit, foundationZone)
                let alone = fresh.start(of: t).microseconds
                let cached = shared.start(of: t).microseconds
                if alone != expected || cached != expected {
                    Issue.record(
                        "\(unit) of \(t) in \(zoneName): \(alone) alone, \(cached) cached, expected \(expected)")
                    return
                }
            }
        }
    }

    @Test func repeatedHourIsTwoBucketsAndHalfHourFallBackKeepsOneHourBucket() throws {
        // Berlin, 2026-10-25: 03:00 CEST becomes 02:00 CET at 01:00Z, so 02:00-03:00 local happens twice.
        var berlin = TimeBucketer(unit: .hour, zone: try #require(BucketZone("Europe/Berlin")))
        let firstPass = try #require(Timestamp(iso8601: "2026-10-25T00:30:00Z"))
        let secondPass = try #require(Timestamp(iso8601: "2026-10-25T01:30:00Z"))
        #expect(berlin.start(of: firstPass) == Timestamp(iso8601: "2026-10-25T00:00:00Z"))
        #expect(berlin.start(of: secondPass) == Timestamp(iso8601: "2026-10-25T01:00:00Z"))
        // Lord Howe, 2008-04-06: 02:00 (+11:00) becomes 01:30 (+10:30) at 15:00Z; the hour from 01:00 local lasts
        // 90 minutes and is one bucket, starting when the clock first showed 01:00.
        var lordHowe = TimeBucketer(unit: .hour, zone: try #require(BucketZone("Australia/Lord_Howe")))
        for time in ["2008-04-05T14:10:00Z", "2008-04-05T14:50:00Z", "2008-04-05T15:10:00Z"] {
            #expect(
                lordHowe.start(of: try #require(Timestamp(iso8601: time))) == Timestamp(iso8601: "2008-04-05T14:00:00Z")
            )
        }
        #expect(
            lordHowe.start(of: try #require(Timestamp(iso8601: "2008-04-05T15:30:00Z")))
                == Timestamp(iso8601: "2008-04-05T15:30:00Z"))
    }

    @Test(arguments: [
        ("+03:00", 10_800), ("-05:30", -19_800), ("+0545", 20_700), ("-08", -28_800), ("UTC", 0), ("Z", 0),
    ])
    func readsFixedOffsets(text: String, seconds: Int) throws {
        let zone = try #require(BucketZone(text))
        #expect(zone.rule == .fixed(seconds))
    }

    @Test(arguments: ["Mars/Olympus", "+25:00", "+03:60", "3:00", "+3:00", "berlin", "", "+03:00:00"])
    func refusesWhatIsNotAZone(text: String) {
        #expect(BucketZone(text) == nil)
    }

    @Test func weeksStartOnMondayAndMonthsOnTheFirst() throws {
        let thursday = try #require(Timestamp(iso8601: "2026-11-05T15:30:00Z"))
        var week = TimeBucketer(unit: .week, zone: .utc)
        var month = TimeBucketer(unit: .month, zone: .utc)
        var hour = TimeBucketer(unit: .hour, zone: try #require(BucketZone("+05:30")))
        #expect(week.start(of: thursday) == Timestamp(iso8601: "2026-11-02T00:00:00Z"))
        #expect(month.start(of: thursday) == Timestamp(iso8601: "2026-11-01T00:00:00Z"))
        #expect(hour.start(of: thursday) == Timestamp(iso8601: "2026-11-05T15:30:00Z"))
        let before1970 = Timestamp(microseconds: -1)
        var day = TimeBucketer(unit: .day, zone: .utc)
        #expect(day.start(of: before1970) == Timestamp(microseconds: -86_400_000_000))
    }
}
