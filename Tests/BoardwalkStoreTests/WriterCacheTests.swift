import BoardwalkCodec
import BoardwalkModel
import Foundation
import Testing

@testable import BoardwalkStore

/// What the writer caches between batches (each group's latest stored time, its newest block) must never
/// change what is stored.
@Suite struct WriterCacheTests {
    /// A reopened writer whose first touch of a group is an event without an id, older than the group's
    /// stored events, must not take that event's time for the group's latest: a resent event with an id
    /// would then skip the duplicate lookup and be stored twice.
    @Test func aDuplicateAfterAnOlderEventWithoutIDIsFound() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        do {
            let store = try Store.open(at: dir)
            try store.append([simpleEvent(onboarding: 0, screen: 0, session: 1, time: 1_000_000_000, eventID: "a")])
            store.close()
        }
        let store = try Store.open(at: dir)
        try store.append([simpleEvent(onboarding: 0, screen: 0, session: 1, time: 10_000_000)])
        let again = try store.append([
            simpleEvent(onboarding: 0, screen: 0, session: 1, time: 1_000_000_000, eventID: "a")
        ])
        #expect(again.duplicates == 1)
        #expect(again.appended == 0)
        #expect(try store.read { try $0.stats().events } == 2)
    }

    /// A batch the encoder refuses part-way (a screen index out of range), caught inside `write {}`, leaves
    /// no trace in session inference: the next batch infers as if the refused one had never been sent.
    @Test func aRefusedBatchDoesNotSteerInference() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir)
        func anonymous(_ time: Int64) -> Event {
            var e = simpleEvent(onboarding: 0, screen: 0, session: -1, time: time, profile: "p")
            e.session = nil
            return e
        }
        var bad = simpleEvent(onboarding: 0, screen: 0, session: 2, time: 300)
        bad.meta!.screenIndex = 70_000
        try store.write { w in
            // seq 0 would go to s1, seq 1 to an inferred session "inferred:1"; then the batch is refused.
            #expect(throws: (any Error).self) {
                try w.append([simpleEvent(onboarding: 0, screen: 0, session: 1, time: 100), anonymous(500), bad])
            }
            // Nothing of it was stored, so this event (seq 0, earlier in time) starts its own session.
            try w.append([anonymous(200)])
        }
        let stored = try store.read { try $0.allEvents() }
        #expect(stored.map(\.event.session) == ["inferred:0"])
        #expect(try store.read { try $0.stats().inferredSessions } == 1)
        #expect(try store.check().isOK)
    }

    /// Blocks grown over many batches while the map grows from 64 KiB (each growth redoes a batch whose
    /// blocks were already rewritten in the aborted transaction): everything is listed once, in seq order,
    /// and every event is found again as a duplicate.
    @Test func grownBlocksSurviveMapGrowth() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .init(durability: .noSync, initialMapSize: 1 << 16))
        var batches: [[Event]] = []
        var appended = 0
        for b in 0..<60 {
            let batch = (0..<300).map { i in
                simpleEvent(
                    onboarding: i % 3, screen: i % 5, session: (b * 300 + i) / 7, time: Int64(b * 300 + i) * 1_000_000,
                    eventID: "id-\(b)-\(i)")
            }
            appended += try store.append(batch).appended
            batches.append(batch)
        }
        #expect(appended == 18_000)
        #expect(try store.check().isOK)
        #expect(try store.read { try $0.events(since: 0).map(\.seq) } == (0..<18_000).map { UInt64($0) })
        var duplicates = 0
        for batch in batches.reversed() { duplicates += try store.append(batch).duplicates }
        #expect(duplicates == 18_000)
    }
}
