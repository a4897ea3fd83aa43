import BoardwalkModel
import Testing

@testable import BoardwalkQuery

// docs/query-language.md: integers stay exact; `+ - *` of integers past 64 bits is absent, and so is a `sum` of
// integers whose total is (not 5.03e21 while `+` of the same integers is absent).

/// Screens 1, 2 and 3, one event each, in one session.
private let threeScreens = [
    ev(0, "a", screen: 1, presented), ev(1, "a", screen: 2, presented), ev(2, "a", screen: 3, presented),
]
private let big = "3000000000000000000"  // 3e18: three times it is past 2^63 − 1 (about 9.22e18)

/// The executor on the in-memory source and on a store, and the reference evaluator, must all give `expected`.
private func everywhere(_ text: String, _ events: [Event]) throws -> ResultTable {
    let query = try Query.parse(text)
    let now = Timestamp(microseconds: base + 86_400 * second)
    let memory = try query.run(on: InMemoryEventSource(events), options: .init(now: now))
    try withTemporaryStore { store in
        _ = try store.append(events)
        let disk = try query.run(on: StoreEventSource(store), options: .init(now: now))
        #expect(disk == memory, "\(text)\nstore:\n\(disk.render(.table))\nmemory:\n\(memory.render(.table))")
    }
    let reference = ReferenceEvaluator(now: now).run(query.checked, events)
    #expect(
        reference == memory, "\(text)\nreference:\n\(reference.render(.table))\nexecutor:\n\(memory.render(.table))")
    return memory
}

@Test func anIntegerSumPast64BitsIsAbsentLikePlus() throws {
    // Each product fits (3e18, 6e18, 9e18); their total, 1.8e19, does not.
    let sum = try everywhere("events | stats sum(screen * \(big)), count()", threeScreens)
    #expect(sum.rows == [[.null, .integer(3)]])
    // `+` of two of them: absent too, the same rule.
    let plus = try everywhere(
        "events | where screen == 3 | select screen * \(big) + screen * \(big) as twice", threeScreens)
    #expect(plus.rows == [[.null]])
    // A total that fits is exact, past 2^53 where a double would round it: 1e18+1 + 2e18+2 + 3e18+3.
    let exact = try everywhere("events | stats sum(screen * 1000000000000000001)", threeScreens)
    #expect(exact.rows == [[.integer(6_000_000_000_000_000_006)]])
    #expect(exact.render(.csv) == "sum(screen*1000000000000000001)\n6000000000000000006\n")
    // Negative totals past −2^63 likewise.
    #expect(try everywhere("events | stats sum(-screen * \(big))", threeScreens).rows == [[.null]])
}

@Test func theIntegerSumDoesNotDependOnTheOrderOfRows() throws {
    // Screen 3 gives 9e18, screen 2 gives −9e18: the total is 0, though a running 64-bit total overflows after the
    // first two rows of the first order (and of none of the others). The sum is exact: 0 in every order.
    let text = "events | stats sum((screen - 2) * 9000000000000000000 - (3 - screen) * 9000000000000000000)"
    for screens in [[3, 3, 2, 2], [2, 2, 3, 3], [3, 2, 3, 2]] {
        let events = screens.enumerated().map { ev(Double($0.offset), "a", screen: $0.element, presented) }
        #expect(try everywhere(text, events).rows == [[.integer(0)]])
    }
}

@Test func sumsOfNumbersAndDurationsStayDoubles() throws {
    #expect(
        try everywhere("events | stats sum(screen / 2), sum(screen * 1.5)", threeScreens).rows
            == [[.number(3), .number(9)]])
    // No rows: an integer sum is 0, as `count` is (rule 11).
    #expect(
        try everywhere(#"events | where name == "nothing" | stats sum(screen)"#, threeScreens).rows == [[.integer(0)]])
    // A double sum past the largest finite double is absent (each term, 5e307 to 1.5e308, is finite).
    #expect(try everywhere("events | stats sum(screen * 5e307)", threeScreens).rows == [[.null]])
}

@Test func theClickHouseTranslationAddsIntegersExactly() throws {
    let sum = try Query.parse("sessions | stats sum(events), sum(duration), avg(events)").clickHouseSQL()
    #expect(sum.contains("accurateCastOrNull(ifNull(sumOrNull(toInt128(s_events)), toInt128(0)), 'Int64')"))
    #expect(sum.contains("ifNull(sumOrNull(toFloat64(s_duration)), 0)"))
    let plus = try Query.parse("events | select screen * 3 + seq as x, -screen as y, screen / 2 as z").clickHouseSQL()
    #expect(
        plus.contains(
            "accurateCastOrNull((toInt128(accurateCastOrNull((toInt128(screen) * toInt128(3)), 'Int64')) + toInt128(seq)), 'Int64')"
        ))
    #expect(plus.contains("accurateCastOrNull(-toInt128(screen), 'Int64')"))
    #expect(plus.contains("if(2 = 0, NULL, toFloat64(screen) / 2)"))
}
