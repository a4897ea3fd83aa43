import BoardwalkGenerator
import BoardwalkModel
import Testing

@testable import BoardwalkQuery
@testable import BoardwalkStore

/// `SessionFilters` checks `onboarding` against string literals directly: it must pass exactly the summaries that
/// evaluating the filters through `Bound` passes, absent onboardings and mixed conjuncts included.
@Test func sessionFiltersAgreeWithTheGeneralEvaluation() throws {
    var rng = SplitMix64(seed: 0xF117E5)
    let names = ["onb_a", "onb_b", "café", "cafe\u{301}", ""]
    let now = Timestamp(microseconds: 1_800_000_000_000_000)
    // Queries parsed and checked as users write them, so the filters have the shapes the executor receives.
    let texts = [
        #"sessions | where onboarding == "onb_a" | count"#,
        #"sessions | where "onb_b" == onboarding | count"#,
        #"sessions | where onboarding != "onb_a" | count"#,
        #"sessions | where onboarding in ["onb_a", "café"] | count"#,
        #"sessions | where onboarding not in ["onb_b", ""] | count"#,
        #"sessions | where onboarding == "café" and events > 2 | count"#,
        #"sessions | where onboarding == "onb_a" or completed | count"#,
        #"sessions | where not (onboarding == "onb_a") | count"#,
        #"sessions | where completed | where onboarding in ["onb_a"] | count"#,
    ]
    var checkedFilters = 0
    for text in texts {
        let filters = try Query.parse(text).checked.filters
        #expect(!filters.isEmpty, "\(text)")
        let fast = SessionFilters(filters, now: now)
        for _ in 0..<200 {
            let summary = SessionSummary(id: "s")
            summary.onboarding = Bool.random(using: &rng) ? nil : names.randomElement(using: &rng)!
            summary.eventCount = Int.random(in: 0...5, using: &rng)
            summary.completed = Bool.random(using: &rng)
            let general = filters.allSatisfy { $0.evaluate(now: now, { summary.leaf($0) }).isTrue }
            #expect(fast.passes(summary) == general, "\(text), onboarding \(String(describing: summary.onboarding))")
            checkedFilters += 1
        }
    }
    #expect(checkedFilters == texts.count * 200)
    // The direct forms were taken where they apply (else the test would only compare the general path with itself).
    let direct = try SessionFilters(
        Query.parse(#"sessions | where onboarding in ["a"] and onboarding != "b" | count"#).checked.filters,
        now: now)
    #expect(direct.conjuncts.allSatisfy { if case .general = $0 { false } else { true } })
}

/// A lean fold skips each session's last event and last screen unless the query reads `ended`, `duration` or
/// `last_screen` (or lists sessions): the queries that read them get them, through a store, as the in-memory
/// source gives them.
@Test func foldNeedsKeepLastsOnlyForTheQueriesThatReadThem() throws {
    let now = Timestamp(microseconds: 1_800_000_000_000_000)
    func lasts(_ text: String) throws -> Bool { FoldNeeds(try Query.parse(text).checked, now: now).lasts }
    #expect(try !lasts("sessions | funnel"))
    #expect(try !lasts(#"sessions | where onboarding == "a" | stats count(), p50(furthest_screen)"#))
    #expect(try lasts("sessions | stats p50(duration)"))
    #expect(try lasts("sessions | where ended > @2026-01-01 | count"))
    #expect(try lasts("sessions | count by last_screen"))
    #expect(try lasts("sessions | limit 3"))

    var generator = SessionGenerator(seed: 0x1A575)
    let events = generator.events() + generator.events() + generator.events()
    try withTemporaryStore { store in
        try store.append(events)
        // The events as stored (sessions the store inferred included), for the in-memory source.
        var stored: [Event] = []
        try store.read { snapshot in
            try snapshot.forEachEvent(since: 0) { view in
                stored.append(try snapshot.owned(view).event)
                return true
            }
        }
        for text in [
            "sessions | stats p50(duration), max(ended), count() by last_screen",
            "sessions | where duration > 10s | funnel", "sessions | select session, ended, last_screen | sort session",
        ] {
            let query = try Query.parse(text)
            let fromStore = try query.run(on: StoreEventSource(store), options: .init(now: now))
            let inMemory = try query.run(on: InMemoryEventSource(stored), options: .init(now: now))
            #expect(fromStore.rows == inMemory.rows, "\(text)")
            #expect(!fromStore.rows.isEmpty, "\(text)")
        }
    }
}
