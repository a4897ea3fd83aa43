import BoardwalkModel
import Foundation
import BoardwalkStore
import Testing
@testable import BoardwalkQuery

/// Funnels of custom steps read by the store's session folds (``StepEvent``: each session keeps its events that
/// match a step) give what the in-memory source gives from whole sessions: over the whole store, over whole
/// onboardings (scanned, and through the session index), and over narrower ranges, in every mode (`strict`
/// still reads sessions as rows), with windows and breakdowns.
@Test func storeFunnelsOfCustomStepsAgreeWithTheInMemorySource() throws {
    let now = Timestamp(microseconds: base + 3 * 86_400 * second)
    var queries = QueryGenerator(seed: 0xF0_1D)
    var ran = 0, custom = 0, nonEmpty = 0
    for dataset in 0..<16 {
        var generator = SessionGenerator(seed: 0xC0570 ^ UInt64(dataset))
        let events = generator.events()
        try withTemporaryStore { store in
            _ = try store.append(events)
            let stored = try store.read { try $0.events(since: 0) }
            let memory = InMemoryEventSource(stored.map(\.event))
            let disk = StoreEventSource(store)
            for i in 0..<30 {
                var text = queries.funnelQuery()
                // A third over whole onboardings (the scan of their key ranges), a few over a time range.
                if i % 3 == 1 { text = text.replacingOccurrences(of: "sessions |", with: #"sessions | where onboarding == "onb_1" |"#) }
                if i % 10 == 2 { text = text.replacingOccurrences(of: "sessions |", with: "sessions | where started >= @2026-11-01T12:00:00Z |") }
                let query = try Query.parse(text)
                if query.checked.hasCustomFunnel { custom += 1 }
                let b = try query.run(on: memory, options: .init(now: now))
                if !b.rows.isEmpty { nonEmpty += 1 }
                ran += 1
                for ratio in [0, Double.infinity] {
                    let a = try StoreEventSource.$onboardingScanRatio.withValue(ratio) {
                        try query.run(on: disk, options: .init(now: now))
                    }
                    if !agree(a, b) {
                        Issue.record("dataset \(dataset): \(text)\nstore:\n\(a.render(.table))\nmemory:\n\(b.render(.table))")
                        return
                    }
                }
            }
        }
    }
    #expect(ran == 480)
    #expect(custom > ran / 2, "the generator must mostly give funnels of custom steps")
    #expect(nonEmpty > ran / 2)
}

/// The plan says how a funnel of custom steps is read: folded from a scan unless it is strict.
@Test func explainSaysWhichFunnelsAreFolded() throws {
    try withTemporaryStore { store in
        _ = try store.append([ev(0, "s1", started), ev(1, "s1", screen: 1, presented)])
        let source = StoreEventSource(store)
        let ordered = try Query.parse("sessions | funnel onboarding_started, screen_presented within 1h")
        #expect(ordered.explain(on: source).hasPrefix("read: every event once in key order, folded into per-session summaries"))
        let any = try Query.parse(#"sessions | where onboarding == "onb_1" | funnel onboarding_started, screen_presented mode any"#)
        #expect(any.explain(on: source).hasPrefix("read: sessions of the onboardings from the onboarding_sessions index"))
        let strict = try Query.parse("sessions | funnel onboarding_started, screen_presented mode strict")
        #expect(strict.explain(on: source).contains("through the store's session index"))
        let (table, statistics) = try ordered.execute(on: source)
        #expect(table.column("sessions") == [.integer(1), .integer(1)])
        #expect(statistics.sessionsRead == 1)
    }
}
