import BoardwalkModel
import BoardwalkStoreFormat
import Foundation
import Testing

@testable import BoardwalkStore

/// A flipped bit in a stored block or string chunk is found by every read of it, by `check()` and (for blocks) by
/// `backup`, and marks the store so that appends refuse it until a check passes.
@Suite struct StoredChecksumTests {
    /// A closed store of 400 events over two onboardings and four screens, and the bytes of one of its blocks (that of
    /// onboarding "onb-1", screen 1) as they lie in `data.mdb`.
    static func storeAndBlock(at dir: String) throws -> [UInt8] {
        let store = try Store.open(at: dir, options: .foldingEveryBatch())
        defer { store.close() }
        try store.append(
            (0..<400).map {
                simpleEvent(
                    onboarding: $0 % 2, screen: $0 % 4, session: $0 % 37, time: 1_000_000 * Int64($0),
                    eventID: "event-\($0)")
            })
        return try store.read { snapshot in
            let onboarding = try #require(try snapshot.id(of: "onb-1"))
            var found: [UInt8]? = nil
            try snapshot.txn.withCursor(snapshot.dbs.events) { c in
                var more = try c.first()
                while more, found == nil {
                    if let key = EventKey(c.key), key.onboarding == onboarding, key.screen == 1 {
                        found = Array(c.value)
                    }
                    more = try c.next()
                }
            }
            return try #require(found)
        }
    }

    /// Flips bit `bit` of the byte `offset` bytes into every copy of `block` in the store's file (the event log's
    /// copy of a folded batch stays in a free page beside the one in `events`).
    static func flip(_ dir: String, block: [UInt8], at offset: Int, bit: Int) throws {
        let path = dir + "/data.mdb"
        var file = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        var copies = 0
        var from = 0
        while let start = firstIndex(of: block, in: file, from: from) {
            file[start + offset] ^= UInt8(1 << bit)
            copies += 1
            from = start + block.count
        }
        #expect(copies >= 1, "the block lies in the file whole")
        try Data(file).write(to: URL(fileURLWithPath: path))
    }

    static func firstIndex(of needle: [UInt8], in haystack: [UInt8], from: Int) -> Int? {
        guard needle.count <= haystack.count - from else { return nil }
        for i in from...(haystack.count - needle.count) where haystack[i] == needle[0] {
            if haystack[i..<(i + needle.count)].elementsEqual(needle) { return i }
        }
        return nil
    }

    /// Every single-bit flip in a few places of a block (its checksum, its header, an event's deltas, a record
    /// body) is reported by the query that reads the block, by `check()` and by `backup`, naming the block.
    @Test(arguments: [(0, 3), (5, 0), (12, 6), (40, 1), (-1, 7)])
    func aFlippedBitInABlockIsFoundByReadsCheckAndBackup(offset: Int, bit: Int) throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let block = try Self.storeAndBlock(at: dir)
        try Self.flip(dir, block: block, at: offset >= 0 ? offset : block.count + offset, bit: bit)

        let store = try Store.open(at: dir)
        defer { store.close() }
        // A read of the whole store meets the block and stops with where it is.
        let readError = #expect(throws: StoreError.self) {
            try store.read { snapshot in
                var n = 0
                try snapshot.forEachRun(onboarding: nil, screens: nil, time: nil) { run in
                    while try run.next() != nil { n += 1 }
                    return true
                }
                return n
            }
        }
        #expect(readError?.kind == .corrupt)
        #expect(readError?.description.contains("screen 1") == true)
        #expect(readError?.description.contains("is damaged") == true)

        // The read marked the store: appends are refused, naming check and the salvage.
        #expect(store.damageFound != nil)
        let appendError = #expect(throws: StoreError.self) {
            try store.append([simpleEvent(onboarding: 0, screen: 0, session: 1, time: 999_000_000)])
        }
        #expect(appendError?.description.contains("boardwalk check") == true)
        #expect(appendError?.description.contains("--salvage") == true)

        let report = try store.check()
        #expect(!report.isOK)
        #expect(report.problems.contains { $0.contains("is damaged") })

        let backupError = #expect(throws: StoreError.self) { try store.backup(to: dir + "-copy") }
        #expect(backupError?.description.contains("is damaged") == true)
        #expect(!FileManager.default.fileExists(atPath: dir + "-copy/data.mdb"))
    }

    /// Salvage reads around the damaged block: every event of the other blocks is saved, and the damage is reported.
    @Test func salvageSavesTheEventsOfTheOtherBlocks() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let block = try Self.storeAndBlock(at: dir)
        let eventsInBlock = try block.withUnsafeBytes { raw in
            // The header's count, after the block's checksum and the header's.
            try #require(raw.count > 8 ? Int(raw[8]) : nil)
        }
        try Self.flip(dir, block: block, at: block.count / 2, bit: 4)
        let store = try Store.open(at: dir)
        defer { store.close() }
        var saved = 0
        var damage: [SalvageDamage] = []
        try store.salvageEvents(
            { _ in
                saved += 1
                return true
            },
            damaged: { d in
                damage.append(d)
                return true
            })
        #expect(saved == 400 - eventsInBlock)
        #expect(damage.count == 1)
    }

    /// A check that passes removes the mark (damage found by a read of a store that was then replaced, say).
    @Test func aPassingCheckRemovesTheMark() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        _ = try Self.storeAndBlock(at: dir)
        let store = try Store.open(at: dir)
        defer { store.close() }
        store.markDamaged(StoreError(.corrupt, "a block that read wrong once"))
        #expect(store.damageFound == "a block that read wrong once")
        #expect(throws: StoreError.self) {
            try store.append([simpleEvent(onboarding: 0, screen: 0, session: 1, time: 999_000_000)])
        }
        #expect(try store.check().isOK)
        #expect(store.damageFound == nil)
        #expect(try store.append([simpleEvent(onboarding: 0, screen: 0, session: 1, time: 999_000_000)]).appended == 1)
    }

    /// A flipped bit in a string (a session id here) no longer reads as another string: the read that meets the
    /// chunk stops, naming it, and check() reports it.
    @Test func aFlippedBitInAStringChunkIsFound() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let chunk: [UInt8]
        do {
            let store = try Store.open(at: dir)
            defer { store.close() }
            try store.append((0..<50).map { simpleEvent(onboarding: 0, screen: 0, session: $0, time: Int64($0)) })
            chunk = try store.env.transaction(write: false) { txn in
                try txn.withCursor(store.dbs.strings) { c in
                    _ = try c.first()
                    return Array(c.value)
                }
            }
        }
        // A byte inside the last string of the chunk.
        try Self.flip(dir, block: chunk, at: chunk.count - 2, bit: 0)
        let store = try Store.open(at: dir)
        defer { store.close() }
        let error = #expect(throws: StoreError.self) { try store.read { try $0.id(of: "s1") } }
        #expect(error?.kind == .corrupt)
        #expect(error.map { "\($0)".contains("strings chunk (at id 0)") } == true, "\(String(describing: error))")
        let report = try store.check()
        #expect(!report.isOK)
        #expect(store.damageFound != nil)
    }
}
