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
    func agreeWithFoundationAcrossClockChanges(zoneName: String, unit: TimeUnit) throws {
        let zone = try #require(BucketZone(zoneName))
        guard case .named(let changes) = zone.rule else {
            Issue.record("\(zoneName) should be a named zone")
            return
        }
        let foundationZone = changes.zone
        // Lord Howe's clock falls back half an hour: Foundation starts the repeated half hour's hour at an instant
        // outside it; Boardwalk keeps the hour one bucket (pinned in `halfHourFallBackKeepsOneHourBucket`).
        if zoneName == "Australia/Lord_Howe" && unit == .hour { return }
        var rng = SplitMix64(seed: 2026)
        // Instants around every clock change of 2008–2028, and random ones.
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
        for micros in instants {
            let t = Timestamp(microseconds: micros)
            let expected = Self.reference(t, unit, foundationZone)
            let bucket = zone.bucket(of: t, unit: unit)
            if bucket.start.microseconds != expected {
                Issue.record("\(unit) of \(t) in \(zoneName): \(bucket.start.microseconds), expected \(expected)")
                return
            }
            // The offset shown is the zone's at the bucket's start.
            let start = Date(timeIntervalSince1970: Double(bucket.start.microseconds) / 1e6)
            #expect(bucket.offset == foundationZone.secondsFromGMT(for: start))
        }
    }

    @Test func repeatedHourIsTwoBucketsAndHalfHourFallBackKeepsOneHourBucket() throws {
        // Berlin, 2026-10-25: 03:00 CEST becomes 02:00 CET at 01:00Z, so 02:00-03:00 local happens twice.
        let berlin = try #require(BucketZone("Europe/Berlin"))
        let firstPass = berlin.bucket(of: try #require(Timestamp(iso8601: "2026-10-25T00:30:00Z")), unit: .hour)
        let secondPass = berlin.bucket(of: try #require(Timestamp(iso8601: "2026-10-25T01:30:00Z")), unit: .hour)
        #expect(firstPass.start == Timestamp(iso8601: "2026-10-25T00:00:00Z"))
        #expect(secondPass.start == Timestamp(iso8601: "2026-10-25T01:00:00Z"))
        // Both show the wall-clock hour, 02:00, at their own offsets.
        #expect(firstPass.description == "2026-10-25T02:00" && firstPass.offset == 7_200)
        #expect(secondPass.description == "2026-10-25T02:00" && secondPass.offset == 3_600)
        // Lord Howe, 2008-04-06: 02:00 (+11:00) becomes 01:30 (+10:30) at 15:00Z; the hour from 01:00 local lasts
        // 90 minutes and is one bucket, starting when the clock first showed 01:00.
        let lordHowe = try #require(BucketZone("Australia/Lord_Howe"))
        for time in ["2008-04-05T14:10:00Z", "2008-04-05T14:50:00Z", "2008-04-05T15:10:00Z"] {
            let bucket = lordHowe.bucket(of: try #require(Timestamp(iso8601: time)), unit: .hour)
            #expect(bucket.start == Timestamp(iso8601: "2008-04-05T14:00:00Z"))
        }
        let next = lordHowe.bucket(of: try #require(Timestamp(iso8601: "2008-04-05T15:30:00Z")), unit: .hour)
        #expect(next.start == Timestamp(iso8601: "2008-04-05T15:30:00Z"))
    }

    @Test(arguments: [
        ("+03:00", 10_800), ("-05:30", -19_800), ("+0545", 20_700), ("-08", -28_800), ("UTC", 0), ("Z", 0),
    ])
    func readsFixedOffsets(text: String, seconds: Int) throws {
        let zone = try #require(BucketZone(text))
        guard case .fixed(let offset) = zone.rule else {
            Issue.record("\(text) should be a fixed offset")
            return
        }
        #expect(offset == seconds)
    }

    @Test(arguments: ["Mars/Olympus", "+25:00", "+03:60", "3:00", "+3:00", "berlin", "", "+03:00:00"])
    func refusesWhatIsNotAZone(text: String) {
        #expect(BucketZone(text) == nil)
    }

    @Test func weeksStartOnMondayAndMonthsOnTheFirst() throws {
        let thursday = try #require(Timestamp(iso8601: "2026-11-05T15:30:00Z"))
        let week = BucketZone.utc.bucket(of: thursday, unit: .week)
        let month = BucketZone.utc.bucket(of: thursday, unit: .month)
        let hour = try #require(BucketZone("+05:30")).bucket(of: thursday, unit: .hour)
        #expect(week.start == Timestamp(iso8601: "2026-11-02T00:00:00Z") && week.description == "2026-11-02")
        #expect(month.start == Timestamp(iso8601: "2026-11-01T00:00:00Z") && month.description == "2026-11-01")
        #expect(hour.start == Timestamp(iso8601: "2026-11-05T15:30:00Z") && hour.description == "2026-11-05T21:00")
        let before1970 = BucketZone.utc.bucket(of: Timestamp(microseconds: -1), unit: .day)
        #expect(before1970.start == Timestamp(microseconds: -86_400_000_000) && before1970.description == "1969-12-31")
    }
}
