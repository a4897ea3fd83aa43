import BoardwalkCodec
import BoardwalkModel
import BoardwalkStoreFormat
import Foundation
import Testing

@testable import BoardwalkStore

/// `block_heads` holds each folded block's head (its bytes up to its first event) under the block's key: reads of
/// headers alone take them from there, and `check()` holds them to the blocks.
@Suite struct BlockHeadsTests {
    /// Three onboardings' events over eight batches, each folded, so blocks are written and then grown.
    func fill(_ store: Store) throws {
        for batch in 0..<8 {
            try store.append(
                (0..<90).map { i in
                    let payload: Payload = i % 3 == 0 ? .analytics(.screenPresented) : .close(actionID: "x")
                    return simpleEvent(
                        onboarding: i % 3, screen: i % 4, session: batch * 20 + i % 20,
                        time: Int64(batch * 1_000 + i), payload: payload)
                })
        }
    }

    /// Per block key, what ``Snapshot/forEachBlock(onboarding:screens:time:_:)`` hands out: the count, the last time
    /// and the kind counts, and the seqs its events walk to.
    func headerReads(_ store: Store, aroundDamage: Bool = false) throws -> [String] {
        try store.read { snapshot in
            let s = aroundDamage ? snapshot.readingAroundDamage(DamagedBlocks()) : snapshot
            var out: [String] = []
            try s.forEachBlock(onboarding: nil) { block in
                var kinds: [String] = []
                try block.forEachKindCount { code, name, n in kinds.append("\(code)/\(String(describing: name)):\(n)") }
                var seqs: [UInt64] = []
                while let event = try block.next() { seqs.append(event.seq) }
                out.append("\(block.key.seq) \(block.count) \(block.lastTime) \(kinds) \(seqs)")
                return true
            }
            return out
        }
    }

    /// The (key, value) pairs of a database, in key order.
    func entries(_ store: Store, _ db: Database) throws -> [(key: [UInt8], value: [UInt8])] {
        try store.env.transaction(write: false) { txn in
            try txn.withCursor(db) { c in
                var out: [([UInt8], [UInt8])] = []
                var found = try c.first()
                while found {
                    out.append((Array(c.key), Array(c.value)))
                    found = try c.next()
                }
                return out
            }
        }
    }

    @Test func everyFoldedBlockHasItsHeadAndHeaderReadsAgreeWithTheBlocks() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .foldingEveryBatch(.init(durability: .noSync)))
        defer { store.close() }
        try fill(store)
        let blocks = try entries(store, store.dbs.events), heads = try entries(store, store.dbs.blockHeads)
        #expect(blocks.count > 8)
        #expect(heads.map(\.key) == blocks.map(\.key))
        for (block, head) in zip(blocks, heads) {
            let key = try #require(block.key.withUnsafeBytes { EventKey($0) })
            let header = try block.value.withUnsafeBytes { try blockHeader(key, $0) }
            #expect(head.value == Array(block.value[..<header.eventsStart]))
            #expect(head.value.count < block.value.count)
        }
        #expect(try store.check().problems.isEmpty)
        // Read around damage, the headers come from the blocks themselves: the same answers.
        let fromHeads = try headerReads(store)
        let fromBlocks = try headerReads(store, aroundDamage: true)
        #expect(fromHeads == fromBlocks)
        #expect(fromHeads.count == blocks.count)
    }

    enum HeadDamage: CaseIterable {
        case flippedBit, missing, misplaced, orphaned, stale
    }

    @Test(arguments: HeadDamage.allCases)
    func checkFindsHeadsThatDifferFromTheBlocksAndReadsStopAtThem(_ damage: HeadDamage) throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .foldingEveryBatch(.init(durability: .noSync)))
        defer { store.close() }
        try fill(store)
        let heads = try entries(store, store.dbs.blockHeads)
        let target = heads[heads.count / 2]
        try store.env.transaction(write: true) { txn in
            switch damage {
            case .flippedBit:
                var value = target.value
                value[value.count - 1] ^= 0x04
                try target.key.withUnsafeBytes { k in
                    try value.withUnsafeBytes { _ = try txn.put(store.dbs.blockHeads, k, $0) }
                }
            case .missing:
                _ = try target.key.withUnsafeBytes { try txn.delete(store.dbs.blockHeads, $0) }
            case .misplaced:
                // A head under a key events does not hold: one seq past the target's.
                var key = target.key
                key[key.count - 1] &+= 1
                try key.withUnsafeBytes { k in
                    try target.value.withUnsafeBytes { _ = try txn.put(store.dbs.blockHeads, k, $0) }
                }
            case .orphaned:
                // The block gone from events, its head left.
                _ = try target.key.withUnsafeBytes { try txn.delete(store.dbs.events, $0) }
            case .stale:
                // The head of another block of the store, under this block's key.
                let other = heads[heads.count / 2 + 1].value
                try target.key.withUnsafeBytes { k in
                    try other.withUnsafeBytes { _ = try txn.put(store.dbs.blockHeads, k, $0) }
                }
            }
        }
        let report = try store.check()
        let seq = try #require(target.key.withUnsafeBytes { EventKey($0) }).seq
        switch damage {
        case .flippedBit, .stale:
            #expect(report.problems.contains { $0.hasPrefix("block_heads: the head under seq \(seq) ") }, "\(report)")
            // A header read of the damaged head stops with an error that names it.
            let error = #expect(throws: StoreError.self) { try headerReads(store) }
            #expect(error?.kind == .corrupt)
            #expect(
                error.map { "\($0)".contains("block_heads entry of the block at seq \(seq)") } == true,
                "\(String(describing: error))")
        case .missing:
            #expect(
                report.problems.contains {
                    $0.hasPrefix("block_heads: no head for the block of events under seq \(seq) ")
                }, "\(report)")
        case .misplaced:
            #expect(report.problems.contains { $0.hasPrefix("block_heads: a head under seq \(seq + 1) ") }, "\(report)")
            // The checksum of a head covers its key: read under another one, it is damage.
            let error = #expect(throws: StoreError.self) { try headerReads(store) }
            #expect(
                error.map { "\($0)".contains("block_heads entry of the block at seq \(seq + 1)") } == true,
                "\(String(describing: error))")
        case .orphaned:
            #expect(report.problems.contains { $0.hasPrefix("block_heads: a head under seq \(seq) ") }, "\(report)")
            // Its events are looked up in `events`, which has no such block.
            let error = #expect(throws: StoreError.self) { try headerReads(store) }
            #expect(error.map { "\($0)".contains("that events does not hold") } == true, "\(String(describing: error))")
        }
    }

    @Test func aStoreOfTheFormatBeforeIsConvertedWhenOpenedForWritingAndRefusedReadOnly() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let expected: [String]
        do {
            let store = try Store.open(at: dir, options: .foldingEveryBatch(.init(durability: .noSync)))
            try fill(store)
            expected = try headerReads(store)
            // As the format before holds it: no heads, and its number.
            try store.env.transaction(write: true) { txn in
                try txn.empty(store.dbs.blockHeads)
                try txn.putUInt32(store.dbs.meta, Layout.metaFormat, Layout.formatVersion - 1)
            }
            store.close()
        }
        let refused = #expect(throws: StoreError.self) { try Store.open(at: dir, options: .init(readOnly: true)) }
        #expect(refused?.kind == .olderFormat(found: Layout.formatVersion - 1, supported: Layout.formatVersion))
        #expect(refused.map { "\($0)".contains("boardwalk ingest --db \(dir) /dev/null") } == true)

        let store = try Store.open(at: dir)
        defer { store.close() }
        #expect(
            try store.env.transaction(write: false) { try $0.getUInt32(store.dbs.meta, Layout.metaFormat) }
                == Layout.formatVersion)
        #expect(try entries(store, store.dbs.blockHeads).count == entries(store, store.dbs.events).count)
        #expect(try store.check().problems.isEmpty)
        #expect(try headerReads(store) == expected)
    }
}
