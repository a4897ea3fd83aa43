import BoardwalkModel
import BoardwalkStore
import Testing
@testable import BoardwalkQuery

/// `events | stats count() [by …]` is a count: the store answers it from block headers or by field codes, as
/// it answers `count` (QA, session 6: `stats count()` read every record, 30 times slower than `count`). The
/// answers must be the in-memory source's, and `explain` must say which path is taken.
@Suite struct StatsCountTests {
    @Test func statsOfCountAloneIsAnsweredLikeACount() throws {
        var generator = SessionGenerator(seed: 0x57A7)
        let events = generator.events()
        try withTemporaryStore { store in
            _ = try store.append(events)
            let stored = try store.read { try $0.events(since: 0) }.map(\.event)
            let cases: [(String, String)] = [
                ("events | stats count()", "block"),
                ("events | stats count() by screen", "block"),
                ("events | where time >= @2026-11-01T10:30:00Z | stats count(), count() by onboarding, screen", "block"),
                (#"events | where kind == "analytics" | stats count() by name"#, "codes"),
                ("events | stats count() by kind, name", "codes"),
                // Not a count: read row by row, as before.
                ("events | stats count(), count(session) by screen", "rows"),
            ]
            for (text, path) in cases {
                let query = try Query.parse(text)
                let disk = try query.run(on: StoreEventSource(store))
                let memory = try query.run(on: InMemoryEventSource(stored))
                #expect(disk == memory, "\(text)\nstore:\n\(disk.render(.table))\nmemory:\n\(memory.render(.table))")
                let plan = try Query.parse(text + " | explain").run(on: StoreEventSource(store)).render(.table)
                switch path {
                case "block": #expect(plan.contains("blocks' keys and headers"), "\(text)\n\(plan)")
                case "codes": #expect(plan.contains("counted by field codes"), "\(text)\n\(plan)")
                default: #expect(!plan.contains("blocks' keys and headers") && !plan.contains("counted by field codes"), "\(text)\n\(plan)")
                }
            }
        }
    }
}
