import BoardwalkCodec
import BoardwalkGenerator
import BoardwalkModel
import Foundation
import Testing

@testable import BoardwalkStore

/// The append loop's batch-local duplicate structures (BatchDuplicates.swift) against the standard library's
/// `Set` and `Dictionary`, and the store's duplicate counts on batches large enough to make them grow.
@Suite struct BatchDuplicatesTests {
    typealias Key = WriterState.DuplicateKey

    /// Keys from a small space, so that repeats are frequent; ids of both kinds.
    func randomKey(_ rng: inout SplitMix64) -> Key {
        let group = rng.next() % 7
        let time = rng.next() % 5
        let id: EventIDRef =
            rng.next() % 3 == 0
            ? .string(UInt32(truncatingIfNeeded: rng.next() % 50))
            : .uuid(high: rng.next() % 40, low: rng.next() % 2, uppercase: rng.next() % 2 == 0)
        return Key(group: group, timeBits: time, id: id)
    }

    @Test(arguments: [
        (UInt64(0), UInt64(0), UInt32(1)), (0x1234_5678_9ABC_DEF0, 0x0FED_CBA9_8765_4321, UInt32.max - 2),
    ])
    func keySetAgreesWithSet(seed0: UInt64, seed1: UInt64, generation: UInt32) {
        var rng = SplitMix64(seed: 42)
        var set = BatchKeySet(seed: (seed0, seed1), generation: generation)
        // Batches of several sizes, the generation wrapping around during them when it starts near the end.
        for size in [0, 1, 10, 3_000, 5, 20_000, 2, 700] {
            set.removeAll()
            var model = Set<Key>()
            for _ in 0..<size {
                let key = randomKey(&rng)
                let inserted = set.insert(key)
                #expect(inserted == model.insert(key).inserted)
            }
            #expect(set.count == model.count)
            // Everything inserted is found again.
            for key in model {
                let inserted = set.insert(key)
                #expect(!inserted)
            }
        }
    }

    @Test func groupMemoAgreesWithDictionary() {
        var rng = SplitMix64(seed: 7)
        var memo = GroupTimeMemo(seed: 99)
        for size in [3, 1_000, 0, 50] {
            memo.removeAll()
            var model: [UInt64: UInt64] = [:]
            for _ in 0..<size {
                // Groups as the writer forms them, the no-position group included.
                let group = rng.next() % 4 == 0 ? 0xFFFF_FFFF_FFFF : (rng.next() % 2_000) << 16 | rng.next() % 30
                #expect(memo.time(of: group) == model[group])
                if model[group] == nil {
                    let time = rng.next()
                    memo.note(group, time: time)
                    model[group] = time
                }
            }
            for (group, time) in model { #expect(memo.time(of: group) == time) }
        }
    }

    /// Thousands of events with ids in one batch, many of them repeated within the batch and against stored events
    /// (some resent earlier than the group's latest event, so that the stored blocks are read), over two batches
    /// of one transaction and separate appends: every count as a straightforward model says.
    @Test func largeBatchesCountDuplicatesExactly() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir)
        var rng = SplitMix64(seed: 3)
        func batch(_ n: Int) -> [Event] {
            (0..<n).map { _ in
                let screen = Int(rng.next() % 5), time = Int64(rng.next() % 10)
                let id =
                    rng.next() % 2 == 0
                    ? "id-\(rng.next() % 40)" : String(format: "%08x-0000-4000-8000-%012x", rng.next() % 20, 7)
                return simpleEvent(
                    onboarding: Int(rng.next() % 3), screen: screen, session: Int(rng.next() % 50), time: time,
                    eventID: id)
            }
        }
        var seen = Set<String>()
        func expected(_ events: [Event]) -> (appended: Int, duplicates: Int) {
            var appended = 0
            for e in events {
                let key = "\(e.meta!.onboardingID)|\(e.meta!.screenIndex)|\(e.time.microseconds)|\(e.eventID!)"
                if seen.insert(key).inserted { appended += 1 }
            }
            return (appended, events.count - appended)
        }
        let first = batch(6_000)
        let want1 = expected(first)
        let got1 = try store.append(first)
        #expect(got1.appended == want1.appended && got1.duplicates == want1.duplicates)
        #expect(want1.duplicates > 500)
        let (second, third) = (batch(4_000), batch(4_000))
        let want2 = expected(second), want3 = expected(third)
        let got = try store.write { w in [try w.append(second), try w.append(third)] }
        #expect(got.map(\.appended) == [want2.appended, want3.appended])
        #expect(got.map(\.duplicates) == [want2.duplicates, want3.duplicates])
        let fourth = first + batch(1_000)
        let want4 = expected(fourth)
        let got4 = try store.append(fourth)
        #expect(got4.appended == want4.appended && got4.duplicates == want4.duplicates)
        let stats = try store.read { try $0.stats() }
        #expect(stats.events == seen.count)
        #expect(try store.check().isOK)
    }
}
