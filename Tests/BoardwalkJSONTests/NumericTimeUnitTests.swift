import BoardwalkJSON
import BoardwalkModel
import Testing

/// A time given as a number: its unit told by its size, or fixed by the reader's `timeUnit`.
@Suite("Numeric times: the unit by size, or as given")
struct NumericTimeUnitTests {
    static let meta = #""meta":{"onboarding_id":"o1","screen_cid":"s1","screen_index":1,"total_screens":3}"#
    static func line(_ time: String) -> String { #"{"ts":\#(time),"type":"onboarding_loaded",\#(meta)}"# }
    /// 2026-11-01T00:00:00Z.
    static let day: Int64 = 1_793_491_200

    @Test(
        "A number's size tells its unit after 2001-09-09",
        arguments: [
            ("1793491200", day * 1_000_000),
            ("1793491200123", day * 1_000_000 + 123_000),
            ("1793491200123456", day * 1_000_000 + 123_456),
            ("1793491200.25", day * 1_000_000 + 250_000),
            ("1793491200.123456", day * 1_000_000 + 123_456),
            ("1.7934912e9", day * 1_000_000),
            ("1793491200123.5", day * 1_000_000 + 123_500),
            // The first second told by size, and the last of the year 9999 in each unit.
            ("1000000000", 1_000_000_000_000_000),
            ("253402300799", 253_402_300_799_000_000),
            ("253402300799999", 253_402_300_799_999_000),
            ("253402300799999999", 253_402_300_799_999_999),
            ("1000000000000", 1_000_000_000_000_000),
            ("1000000000000000", 1_000_000_000_000_000),
        ])
    func bySize(_ text: String, _ micros: Int64) throws {
        let event = try EventReader().read(Self.line(text), arrival: Timestamp(microseconds: 1))
        #expect(event.time == Timestamp(microseconds: micros), "\(text)")
    }

    @Test(
        "A number whose size could be more than one unit is rejected, naming --time-unit",
        arguments: ["0", "500000000", "999999999", "253402300800", "999999999999", "300000000000000", "1.5"])
    func ambiguous(_ text: String) throws {
        let reader = try EventReader()
        let error = #expect(throws: JSONReadError.self) {
            try reader.read(Self.line(text), arrival: Timestamp(microseconds: 1))
        }
        #expect(error?.code == .range)
        #expect(
            error?.description
                == "line 1, column 7, ts: the epoch time \(text) could be in more than one unit: seconds, milliseconds "
                + "and microseconds are told apart by size only for times after 2001-09-09; give the unit "
                + "(--time-unit s|ms|us, EventReader.timeUnit)")
    }

    @Test("Numbers before 1970 or past 9999 in every unit say so")
    func outOfRange() throws {
        let reader = try EventReader()
        for (text, reason) in [
            ("-1", "the epoch time -1 is before 1970"),
            (
                "9000000000000000000",
                "the epoch time 9000000000000000000 is after the year 9999 in seconds, "
                    + "milliseconds and microseconds alike"
            ),
            (
                "18446744073709551615",
                "the epoch time 18446744073709551615 is after the year 9999 in seconds, "
                    + "milliseconds and microseconds alike"
            ),
        ] {
            let error = #expect(throws: JSONReadError.self) {
                try reader.read(Self.line(text), arrival: Timestamp(microseconds: 1))
            }
            #expect(error?.description == "line 1, column 7, ts: \(reason)")
        }
    }

    @Test(
        "A unit given reads every number of the years 1970 through 9999 as it",
        arguments: [
            (EpochUnit.seconds, "0", Int64(0)),
            (.seconds, "500000000", 500_000_000_000_000),
            (.seconds, "1.5", 1_500_000),
            (.seconds, "253402300799", 253_402_300_799_000_000),
            (.milliseconds, "500000000", 500_000_000_000),
            (.milliseconds, "1793491200", 1_793_491_200_000),
            (.milliseconds, "0.25", 250),
            (.microseconds, "1793491200", 1_793_491_200),
            (.microseconds, "7", 7),
        ])
    func given(_ unit: EpochUnit, _ text: String, _ micros: Int64) throws {
        let reader = try EventReader()
        reader.timeUnit = unit
        let event = try reader.read(Self.line(text), arrival: Timestamp(microseconds: 1))
        #expect(event.time == Timestamp(microseconds: micros), "\(unit) \(text)")
    }

    @Test("A unit given rejects what is outside 1970 through 9999 in it")
    func givenOutOfRange() throws {
        let reader = try EventReader()
        reader.timeUnit = .seconds
        for text in ["253402300800", "-1", "1793491200123"] {
            let error = #expect(throws: JSONReadError.self) {
                try reader.read(Self.line(text), arrival: Timestamp(microseconds: 1))
            }
            #expect(
                error?.description
                    == "line 1, column 7, ts: epoch seconds \(text) are outside the years 1970 through 9999"
            )
        }
        reader.timeUnit = .microseconds
        #expect(
            try reader.read(Self.line("1793491200123"), arrival: Timestamp(microseconds: 1)).time.microseconds
                == 1_793_491_200_123)
    }

    @Test("Each unit's largest number is the end of Timestamp.range in it")
    func largestAgreesWithTheRange() {
        for unit in EpochUnit.allCases {
            #expect(unit.largest == Timestamp.range.upperBound.microseconds / unit.microseconds)
            #expect(EpochUnit.bySize(unit.largest) == unit && EpochUnit.bySize(unit.largest + 1) == nil)
            #expect(EpochUnit.bySize(unit.smallestBySize) == unit && EpochUnit.bySize(unit.smallestBySize - 1) != unit)
        }
    }

    @Test("ISO-8601 strings are read alike whatever the unit")
    func isoUnaffected() throws {
        let reader = try EventReader()
        reader.timeUnit = .seconds
        let event = try reader.read(Self.line(#""2026-11-01T00:00:00Z""#), arrival: Timestamp(microseconds: 1))
        #expect(event.time == Timestamp(microseconds: Self.day * 1_000_000))
    }
}
