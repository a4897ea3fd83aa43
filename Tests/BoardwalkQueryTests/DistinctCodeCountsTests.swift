import BoardwalkModel
import BoardwalkStore
import Testing

@testable import BoardwalkQuery

// `count_distinct` of a string field counted by field codes: each group's number of distinct codes is its number of
// distinct values when no string the codes name has another spelling and no two groups' keys are equal values; else
// the values are compared as strings. Either way the answer is the in-memory source's.

/// Events of sessions `s0`...`s(n-1)` over two screens, with the given profiles, variations and onboardings.
private func events(
    sessions: [String], profile: (Int) -> String = { "p\($0 % 3)" }, onboarding: (Int) -> String = { _ in "onb_1" }
) -> [Event] {
    var out: [Event] = []
    for (i, session) in sessions.enumerated() {
        out.append(
            ev(
                Double(i), session, screen: 0, onboarding: onboarding(i), profile: profile(i), variation: "v\(i % 2)",
                started))
        out.append(ev(Double(i) + 0.5, session, screen: 1, onboarding: onboarding(i), profile: profile(i), presented))
    }
    return out
}

private let queries = [
    "events | stats count_distinct(session) by screen", "events | stats count_distinct(profile), count() by name",
    "events | stats count_distinct(session), count_distinct(variation)",
    "events | where kind == \"analytics\" | stats count_distinct(session) by onboarding, screen",
]

/// Each query by field codes, on one thread and on three (in parts of a few events), agrees with memory.
private func expectAgreement(_ events: [Event], _ expected: (String, ResultTable) -> Void = { _, _ in }) throws {
    try withTemporaryStore { store in
        _ = try store.append(events)
        let disk = StoreEventSource(store)
        let memory = InMemoryEventSource(events)
        for text in queries {
            let query = try Query.parse(text)
            let want = try query.run(on: memory)
            expected(text, want)
            for threads in [1, 3] {
                let got = try StoreEventSource.$minimumPartEvents.withValue(2) {
                    try query.run(on: disk, options: .init(threads: threads))
                }
                #expect(got == want, "\(threads) threads: \(text)\n\(got.render(.table))\n\(want.render(.table))")
            }
        }
    }
}

@Test func distinctSessionsCountedByCodesAreTheDistinctValues() throws {
    try expectAgreement(events(sessions: (0..<40).map { "session-\($0)" })) { text, table in
        if text == queries[0] { #expect(table.rows.map { $0[1] } == [.integer(40), .integer(40)]) }
    }
}

/// Session ids spelled apart that compare equal (`K` and the Kelvin sign, `é` composed and decomposed) are one
/// value each: their codes are two, their count one.
@Test func distinctStringsSpelledApartAreCountedAsOneValue() throws {
    let sessions = ["K", "\u{212A}", "caf\u{E9}", "cafe\u{301}", "plain"]
    try expectAgreement(events(sessions: sessions, profile: { ["K", "\u{212A}", "x", "x", "y"][$0] })) { text, table in
        if text == queries[0] { #expect(table.rows.map { $0[1] } == [.integer(3), .integer(3)]) }
        if text == queries[2] { #expect(table.rows == [[.integer(3), .integer(2)]]) }
    }
}

/// Two onboardings spelled apart but equal as strings are one group of the result: their sessions' sets are united
/// by value, not added up as counts.
@Test func groupsWhoseKeysAreEqualValuesUniteTheirDistinctValues() throws {
    let sessions = (0..<10).map { "s\($0)" }
    try expectAgreement(
        events(
            sessions: sessions + sessions.prefix(4), onboarding: { $0 % 2 == 0 ? "onb_caf\u{E9}" : "onb_cafe\u{301}" })
    ) { text, table in
        if text == queries[3] { #expect(table.rows.count == 2, "one onboarding, two screens") }
    }
}
