import BoardwalkModel
import Testing
@testable import BoardwalkQuery
@testable import BoardwalkStore

/// The whole-store fold sizes its per-session storage from the store's session counter; a damaged counter (here
/// far too low) must only cost reallocations, never a fold written to storage that moved (QA, session 6: a
/// segfault, or a session missing an event, when the storage grew under the write).
@Suite struct DamagedCounterTests {
    @Test func aSessionCounterBelowTheTruthStillFoldsEveryEvent() throws {
        try withTemporaryStore { store in
            // 300 sessions of two events each: the storage starts at 64 folds and grows past it three times.
            var events: [Event] = []
            for i in 0..<300 {
                events.append(ev(Double(i), "s\(i)", screen: 0, select("goal", i % 3 == 0 ? "fit" : "calm")))
                events.append(ev(Double(i) + 0.5, "s\(i)", screen: 1, presented))
            }
            _ = try store.append(events)
            try store.env.transaction(write: true) { txn in
                var one = UInt64(1).bigEndian
                _ = try Layout.metaSessions.withUTF8Bytes { k in
                    try withUnsafeBytes(of: &one) { v in try txn.put(store.dbs.meta, k, v) }
                }
            }
            #expect(try store.read { try $0.stats().sessions } == 1)
            // A full fold (answers), not a lean one.
            for text in [#"sessions | count by answer("goal")"#, "sessions | stats sum(events), min(events), max(events)"] {
                let query = try Query.parse(text)
                let disk = try query.run(on: StoreEventSource(store))
                let memory = try query.run(on: InMemoryEventSource(events))
                #expect(disk == memory, "\(text)\nstore:\n\(disk.render(.table))\nmemory:\n\(memory.render(.table))")
            }
        }
    }
}
