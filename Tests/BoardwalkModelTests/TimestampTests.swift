import BoardwalkModel
import Testing

@Suite struct TimestampTests {
    @Test(arguments: [
        ("1970-01-01T00:00:00.000000Z", Int64(0)),
        ("2026-11-01T10:00:00.123456Z", Int64(1_793_527_200_123_456)),
        ("2000-02-29T23:59:59.999999Z", Int64(951_868_799_999_999)),
        ("9999-12-31T23:59:59.999999Z", Int64(253_402_300_799_999_999)),
    ])
    func formatsAndParses(text: String, micros: Int64) throws {
        #expect(Timestamp(microseconds: micros).iso8601 == text)
        #expect(Timestamp(iso8601: text)?.microseconds == micros)
    }

    @Test(arguments: [
        ("2026-11-01", "2026-11-01T00:00:00.000000Z"),
        ("2026-11-01T10:00:00Z", "2026-11-01T10:00:00.000000Z"),
        ("2026-11-01 10:00", "2026-11-01T10:00:00.000000Z"),
        ("2026-11-01T10:00:00.5Z", "2026-11-01T10:00:00.500000Z"),
        ("2026-11-01T10:00:00.123456789Z", "2026-11-01T10:00:00.123456Z"),
        ("2026-11-01T12:30:00+02:30", "2026-11-01T10:00:00.000000Z"),
        ("2026-11-01T07:00:00-0300", "2026-11-01T10:00:00.000000Z"),
        ("2026-11-01T00:30:00+01", "2026-10-31T23:30:00.000000Z"),
    ])
    func acceptsIsoVariants(text: String, canonical: String) {
        #expect(Timestamp(iso8601: text)?.iso8601 == canonical)
    }

    @Test(arguments: [
        "", "2026", "2026-13-01", "2026-02-29", "2026-11-31", "2026-11-01T24:00:00Z", "2026-11-01T10:60Z",
        "2026-11-01T10:00:00.Z", "2026-11-01T10:00:00.1234567890Z", "2026-11-01T10:00:00Q",
        "1969-12-31T23:59:59Z", "2026-11-01T10:00:00Z ", "２０２６-11-01",
    ])
    func rejects(text: String) {
        #expect(Timestamp(iso8601: text) == nil)
    }

    @Test func civilRoundTripsEveryDayOfFourCenturies() {
        var expected = Timestamp.days(fromCivil: 1900, 1, 1)
        for year in Int64(1900)..<2300 {
            for month in Int64(1)...12 {
                let lengths: [Int64] = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
                let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
                let length = month == 2 && leap ? 29 : lengths[Int(month - 1)]
                for day in Int64(1)...length {
                    #expect(Timestamp.days(fromCivil: year, month, day) == expected)
                    let c = Timestamp.civil(fromDays: expected)
                    #expect(c.year == year && c.month == month && c.day == day)
                    expected += 1
                }
            }
        }
    }
}
