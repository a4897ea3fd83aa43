import BoardwalkModel
import Foundation
import Testing

@testable import BoardwalkStore

/// Salvage reads a store whose meta page is damaged from the other one: the older page's damage costs nothing, the
/// newer page's costs the last commit.
@Suite struct MetaFallbackTests {
    /// A closed store of two commits (`first` events, then `second`), and the slot of the meta page of its last one.
    static func twoCommits(at dir: String, first: Int, second: Int) throws -> Int {
        let store = try Store.open(at: dir)
        defer { store.close() }
        try store.append((0..<first).map { simpleEvent(onboarding: 0, screen: 0, session: $0, time: Int64($0)) })
        try store.append(
            (0..<second).map { simpleEvent(onboarding: 1, screen: 1, session: 1000 + $0, time: 5_000 + Int64($0)) })
        let data = try Data(contentsOf: URL(fileURLWithPath: dir + "/data.mdb"))
        func transaction(_ slot: Int) -> UInt64 {
            data.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: slot * 4096 + 144, as: UInt64.self) }
        }
        return transaction(0) > transaction(1) ? 0 : 1
    }

    /// Writes `bytes` over the meta page `slot` at byte `offset` of the page.
    static func damage(_ dir: String, slot: Int, offset: Int, bytes: [UInt8]) throws {
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: dir + "/data.mdb"))
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(slot * 4096 + offset))
        try handle.write(contentsOf: Data(bytes))
    }

    static func salvagedCount(_ dir: String) throws -> (events: Int, note: String?, older: Bool) {
        let scratch = temporaryDirectory()
        defer { removeDirectory(scratch) }
        let (store, note, older) = try Store.openForSalvage(at: dir, scratch: scratch + "/copy")
        defer { store.close() }
        var events = 0
        try store.salvageEvents(
            { _ in
                events += 1
                return true
            }, damaged: { _ in true })
        return (events, note, older)
    }

    @Test func theOlderMetaPageDamagedCostsNothing() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let newest = try Self.twoCommits(at: dir, first: 30, second: 20)
        // Four bad bytes in the older page's magic: liblmdb refuses the file.
        try Self.damage(dir, slot: 1 - newest, offset: 16, bytes: [0xDE, 0xAD, 0xBE, 0xEF])
        #expect(throws: StoreError.self) { try Store.open(at: dir) }
        let (events, note, older) = try Self.salvagedCount(dir)
        #expect(events == 50 && !older)
        #expect(note?.contains("meta page \(1 - newest)") == true && note?.contains("latest commit") == true)
    }

    @Test func theNewerMetaPageDamagedCostsTheLastCommit() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let newest = try Self.twoCommits(at: dir, first: 30, second: 20)
        try Self.damage(dir, slot: newest, offset: 16, bytes: [0xDE, 0xAD, 0xBE, 0xEF])
        let (events, note, older) = try Self.salvagedCount(dir)
        #expect(events == 30 && older)
        #expect(note?.contains("not read") == true, "\(note ?? "no note")")
    }

    @Test func bothMetaPagesDamagedIsAClearError() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        _ = try Self.twoCommits(at: dir, first: 5, second: 5)
        try Self.damage(dir, slot: 0, offset: 16, bytes: [0, 0, 0, 0])
        try Self.damage(dir, slot: 1, offset: 16, bytes: [0, 0, 0, 0])
        let scratch = temporaryDirectory()
        defer { removeDirectory(scratch) }
        let error = #expect(throws: StoreError.self) { try Store.openForSalvage(at: dir, scratch: scratch + "/copy") }
        #expect(error?.message.contains("neither meta page opens it") == true, "\(String(describing: error))")
    }

    @Test func aSoundStoreOpensItselfWithoutANote() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        _ = try Self.twoCommits(at: dir, first: 5, second: 5)
        let (events, note, older) = try Self.salvagedCount(dir)
        #expect(events == 10 && note == nil && !older)
    }
}
