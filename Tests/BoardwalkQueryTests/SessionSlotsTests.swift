import BoardwalkGenerator
import Testing

@testable import BoardwalkQuery

/// `SessionSlots`: every key inserted is found with its slot and no other key is, whichever way keys are placed
/// (scattered by a hash, or in the order of their values for a scope's known ids).
@Suite struct SessionSlotsTests {
    /// Looks up every id and a sample of absent ones, around and outside the ids' range.
    func expectExact(_ table: SessionSlots, _ ids: [UInt32], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(table.count == ids.count, sourceLocation: sourceLocation)
        for (slot, id) in ids.enumerated() {
            #expect(table.existingSlot(id) == slot, "id \(id)", sourceLocation: sourceLocation)
        }
        let present = Set(ids)
        let probes: [UInt32] = [0, 1, .max, .max - 1] + ids.flatMap { [$0 &- 1, $0 &+ 1, $0 &+ 1000] }
        for probe in probes where !present.contains(probe) {
            #expect(table.existingSlot(probe) == nil, "absent id \(probe)", sourceLocation: sourceLocation)
        }
    }

    @Test func spreadIdsArePlacedInOrder() {
        // A scope's sessions: every 37th id of a store's dense ids, listed out of order.
        var rng = SplitMix64(seed: 7)
        var ids = (0..<5_000).map { UInt32(100_000 + $0 * 37) }
        ids.shuffle(using: &rng)
        let table = SessionSlots(ordered: ids)
        #expect(table.placesInOrder)
        expectExact(table, ids)
    }

    @Test func crowdedIdsFallBackToHashing() {
        // Most ids packed at one end of a wide range would pile up in a few entries of an ordered table.
        let ids = (0..<3_000).map { UInt32($0) } + [UInt32.max - 1]
        let table = SessionSlots(ordered: ids)
        #expect(!table.placesInOrder)
        expectExact(table, ids)
    }

    @Test func packedIdsWithoutDisplacementFallBackToHashing() {
        // A dense block of ids whose places in the table are consecutive entries: no id is displaced, but the
        // block is one long run that every absent id landing in it would walk.
        let block = (0..<1_100).map { UInt32(1_000 + $0) }
        let spread = (1..<200).map { UInt32(1_000_000 + $0 * 9_000) }
        let ids = block + spread
        let table = SessionSlots(ordered: ids)
        #expect(!table.placesInOrder)
        expectExact(table, ids)
    }

    @Test(arguments: [[], [42], [0, UInt32.max - 1], [7, 8, 9, 10]] as [[UInt32]])
    func smallAndExtremeSets(ids: [UInt32]) {
        expectExact(SessionSlots(ordered: ids), ids)
    }

    @Test func insertedKeysSurviveGrowth() {
        var table = SessionSlots(capacity: 4)
        var rng = SplitMix64(seed: 11)
        var ids: [UInt32] = []
        var seen = Set<UInt32>()
        while ids.count < 10_000 {
            let id = UInt32(truncatingIfNeeded: rng.next())
            guard id != .max, seen.insert(id).inserted else { continue }
            let (slot, inserted) = table.slot(id)
            #expect(inserted && slot == ids.count)
            ids.append(id)
        }
        expectExact(table, ids)
        #expect(table.slot(ids[123]) == (123, false))
    }
}
