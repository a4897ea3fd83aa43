import BoardwalkCodec
import BoardwalkGenerator
import BoardwalkModel
import Testing

@testable import BoardwalkStore

/// The append path's building blocks that its speed work changed (docs/storage.md, "How an append writes"):
/// the writer's radix sort (digit widths, skipped bits) and the codec's string table as the writer uses it
/// (hash bits in the slots, the identity cache without a retain for the table's own strings).
@Suite struct AppendInternalsTests {
    struct Item: Equatable {
        var key: UInt64
        var arrival: Int
    }

    /// Keys drawn from `make`, sorted by the radix sort and by the standard library's stable sort of (key, arrival).
    func checkSort(count: Int, seed: UInt64, _ make: (inout SplitMix64) -> UInt64) {
        var rng = SplitMix64(seed: seed)
        let items = (0..<count).map { Item(key: make(&rng), arrival: $0) }
        var sorted = items
        var scratch = items
        WriterState.radixSort(&sorted, scratch: &scratch) { $0.key }
        let expected = items.sorted { ($0.key, $0.arrival) < ($1.key, $1.arrival) }
        #expect(sorted == expected, "count \(count), seed \(seed)")
        #expect(WriterState.radixSorted(items) { $0.key } == expected)
    }

    @Test(arguments: [0, 1, 2, 7, 100, 2047, 2048, 5000, 20_000])
    func radixSortIsAStableSort(count: Int) {
        // Dense session ids (a window of 2^19), the group keys of the writer (onboarding above a few screen bits,
        // one outlier far above), pairs (onboarding << 32 | session), full 64-bit keys, and few distinct keys.
        checkSort(count: count, seed: 1) { 300_000 + $0.next() % (1 << 19) }
        checkSort(count: count, seed: 2) { rng in
            rng.next() % 50 == 0 ? 0xFFFF_FFFF_FFFF : (rng.next() % 20_000) << 5 | rng.next() % 20
        }
        checkSort(count: count, seed: 3) { ($0.next() % 3_000) << 32 | (400_000 + $0.next() % 100_000) }
        checkSort(count: count, seed: 4) { $0.next() }
        checkSort(count: count, seed: 5) { $0.next() % 3 << 40 }
        checkSort(count: count, seed: 6) { _ in 42 }
    }

    @Test func stringTableKeepsIdsDenseAndFindsEveryString() {
        var table = StringTable()
        var strings: [String] = []
        // Enough to grow the slots several times; UUID-like, short (inline) and non-ASCII strings.
        var rng = SplitMix64(seed: 9)
        for i in 0..<40_000 {
            let s: String
            switch i % 4 {
            case 0: s = "session-\(rng.next())-\(rng.next())"
            case 1: s = "s\(i)"
            case 2: s = "é\(i)ü"
            default: s = String(repeating: "x", count: i % 70) + "\(i)"
            }
            strings.append(s)
            #expect(table.intern(s) == StringID(i))
        }
        #expect(table.count == strings.count)
        for (i, s) in strings.enumerated() {
            // A fresh instance of the same text (never the table's own), and the table's own.
            let copy = String(decoding: Array(s.utf8), as: UTF8.self)
            #expect(table.intern(copy) == StringID(i))
            #expect(table.id(of: copy) == StringID(i))
            #expect(table.intern(s) == StringID(i))
            let byPointer = withUnsafePointer(to: copy) { table.intern(at: $0) }
            #expect(byPointer == StringID(i))
        }
        #expect(table.count == strings.count)
        #expect(table.id(of: "not in the table") == nil)
        #expect(table.strings == strings)
    }

    /// The identity cache answers a `String` value it saw from its 16 bytes. A value that is not the table's own
    /// instance must be kept alive by the cache: once the caller's copy is gone, its storage may be reused by
    /// another string, which must not be taken for the first.
    @Test func identityCacheSurvivesFreedInstances() {
        var table = StringTable()
        let original = String(repeating: "a", count: 40)
        #expect(table.intern(original) == 0)
        for round in 0..<2_000 {
            // Fresh heap strings, each dropped right after its intern: without the cache's reference, the next one
            // could get the same address and bits.
            let text =
                round % 2 == 0 ? String(repeating: "a", count: 40) : String(repeating: "b", count: 40) + "\(round)"
            let fresh = String(decoding: Array(text.utf8), as: UTF8.self)
            let id = table.intern(fresh)
            #expect(table.strings[Int(id)] == text)
        }
    }

    @Test func tableFromStringsKeepsDuplicatePositions() {
        var table = StringTable(strings: ["a", "b", "a", "c", "b"])
        #expect(table.count == 5)
        #expect(table.id(of: "a") == 0)
        #expect(table.id(of: "b") == 1)
        #expect(table.id(of: "c") == 3)
        #expect(table.intern("a") == 0)
        #expect(table.intern("d") == 5)
        #expect(table.strings == ["a", "b", "a", "c", "b", "d"])
    }

    /// The writer's group sort key packs onboarding above the screen bits and puts events without a position
    /// last: a batch mixing many onboardings, screens up to 300 (two bytes) and events without meta is stored
    /// and read back in key order, and check() passes.
    @Test func groupKeyPackingKeepsKeyOrder() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir)
        var rng = SplitMix64(seed: 11)
        var events: [Event] = []
        for i in 0..<3_000 {
            let time = Timestamp(microseconds: 1_800_000_000_000_000 + Int64(i) * 1000)
            if rng.next() % 20 == 0 {
                events.append(
                    Event(
                        time: time, session: "s\(rng.next() % 300)", meta: nil,
                        payload: .error(OnboardingError(domain: "d", code: 1, message: "m"))))
            } else {
                let screen = Int(rng.next() % 8 == 0 ? 256 + rng.next() % 45 : rng.next() % 12)
                events.append(
                    simpleEvent(
                        onboarding: Int(rng.next() % 37), screen: screen, session: Int(rng.next() % 300),
                        time: time.microseconds))
            }
        }
        _ = try store.append(events)
        #expect(try store.check().isOK)
        // Key order: by onboarding id, then screen; events without a position (keyed 0xFFFF_FFFF, 0xFFFF) last.
        let ids: [(UInt32, UInt16)] = try store.read { s in
            var out: [(UInt32, UInt16)] = []
            try s.forEachEvent(onboarding: nil as StringID?) { view in
                out.append(
                    (
                        view.onboarding ?? RecordFormat.noOnboarding,
                        view.screenIndex.map { UInt16($0) } ?? RecordFormat.noScreen
                    ))
                return true
            }
            return out
        }
        #expect(ids.count == events.count)
        #expect(ids.filter { $0.0 == RecordFormat.noOnboarding }.count == events.filter { $0.meta == nil }.count)
        #expect(Set(ids.filter { $0.0 != RecordFormat.noOnboarding }.map(\.1)).count > 40)
        for j in 1..<ids.count {
            #expect(ids[j - 1].0 < ids[j].0 || (ids[j - 1].0 == ids[j].0 && ids[j - 1].1 <= ids[j].1))
        }
    }
}
