import BoardwalkModel
import Testing

@testable import BoardwalkQuery
@testable import BoardwalkStore

/// The whole-store fold sizes its per-session storage from the store's session counter; a damaged counter (here
/// far too low) must only cost reallocations, never a fold written to storage that moved (which would be a
/// segfault, or a session missing an event, when the storage grows under the write).
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
            for text in [
                #"sessions | count by answer("goal")"#, "sessions | stats sum(events), min(events), max(events)",
            ] {
                let query = try Query.parse(text)
                let disk = try query.run(on: StoreEventSource(store))
                let memory = try query.run(on: InMemoryEventSource(events))
                #expect(disk == memory, "\(text)\nstore:\n\(disk.render(.table))\nmemory:\n\(memory.render(.table))")
            }
        }
    }

    /// A damaged `onboardings` entry (min time after max time) is an error, not a trap building a range.
    @Test func aReversedOnboardingTimeRangeIsAnError() throws {
        try withTemporaryStore { store in
            _ = try store.append([ev(0, "s1", screen: 0, started), ev(10, "s1", screen: 1, presented)])
            let onb = try #require(try store.read { try $0.id(of: "onb_1") })
            try store.env.transaction(write: true) { txn in
                var k = [UInt8](repeating: 0, count: 4)
                k.withUnsafeMutableBytes { $0.baseAddress!.storeBE(onb, at: 0) }
                var v = [UInt8](repeating: 0, count: OnboardingSummaryRecord.size)
                v.withUnsafeMutableBytes { p in
                    p.baseAddress!.storeBE(UInt64(2), at: 0)
                    p.baseAddress!.storeBE(Layout.timeBits(base + 10_000_000), at: 8)  // min after max
                    p.baseAddress!.storeBE(Layout.timeBits(base), at: 16)
                    p.baseAddress!.storeBE(UInt32(4), at: 24)
                }
                try k.withUnsafeBytes { kb in
                    try v.withUnsafeBytes { vb in _ = try txn.put(store.dbs.onboardings, kb, vb) }
                }
            }
            #expect(throws: StoreError.self) { try store.read { try $0.onboardings() } }
            #expect {
                try Query.parse(#"sessions | where onboarding == "onb_1" | count"#).run(on: StoreEventSource(store))
            } throws: { error in
                (error as? QueryError)?.kind == .source && "\(error)".contains("min time after its max time")
            }
        }
    }

    /// A damaged `meta` time range makes `stats()` throw; a whole-store query, which only sizes its tables from
    /// the counters, still answers; neither traps.
    @Test func aReversedStoreTimeRangeIsAnError() throws {
        try withTemporaryStore { store in
            let events = [ev(0, "s1", screen: 0, started), ev(10, "s1", screen: 1, presented)]
            _ = try store.append(events)
            try store.env.transaction(write: true) { txn in
                var v = [UInt8](repeating: 0, count: 8)
                v.withUnsafeMutableBytes { $0.baseAddress!.storeBE(Layout.timeBits(base + 10_000_000_000), at: 0) }
                try Layout.metaMinTime.withUTF8Bytes { k in
                    try v.withUnsafeBytes { vb in _ = try txn.put(store.dbs.meta, k, vb) }
                }
            }
            #expect(throws: StoreError.self) { try store.read { try $0.stats() } }
            let query = try Query.parse("sessions | funnel")
            #expect(try query.run(on: StoreEventSource(store)) == query.run(on: InMemoryEventSource(events)))
        }
    }

    /// Times outside `Timestamp.range` reach an in-memory source through the Swift API (the JSON reader refuses them,
    /// and so does the store's `append`): durations and funnel times between them are computed without
    /// overflowing, where each query below could trap.
    @Test(arguments: [
        "sessions | stats avg(duration), max(duration)", "sessions | funnel",
        "sessions | funnel screen_presented, screen_presented",
    ])
    func extremeTimesDoNotOverflow(_ text: String) throws {
        func event(_ t: Int64, _ s: String, screen: Int = 0) -> Event {
            Event(
                time: Timestamp(microseconds: t), session: s, profile: nil, variation: nil,
                meta: Meta(onboardingID: "onb_1", screenClientID: "c", screenIndex: screen, totalScreens: 3),
                payload: .analytics(.screenPresented))
        }
        let events = [
            event(-9_000_000_000_000_000_000, "s"), event(9_000_000_000_000_000_000, "s", screen: 1), event(base, "t"),
        ]
        let result = try Query.parse(text).run(on: InMemoryEventSource(events))
        #expect(!result.rows.isEmpty)
        try withTemporaryStore { store in
            let error = #expect(throws: StoreError.self) { try store.append(events) }
            #expect(error?.batchIndex == 0)
        }
    }
}
