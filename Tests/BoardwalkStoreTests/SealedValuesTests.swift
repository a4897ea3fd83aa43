import BoardwalkModel
import Foundation
import Testing

@testable import BoardwalkStore

/// The values of `meta`, the session index and its log, `onboarding_sessions`, `spanning_sessions`, `batches`,
/// `inferred_sessions` and `onboardings` are stored sealed: one flipped bit in any of them stops the read that
/// meets it with where it is (database and key), and marks the store damaged, instead of answering from it.
@Suite struct SealedValuesTests {
    func store(_ dir: String) throws -> Store {
        let store = try Store.open(at: dir, options: .init(durability: .noSync))
        try store.append(
            (0..<200).map { i in
                simpleEvent(
                    onboarding: i % 3, screen: i % 4, session: i % 17 == 0 ? -1 : i % 40,
                    time: Int64(i) * 1_000_000, eventID: "e\(i)", profile: "p\(i % 5)")
            })
        try store.foldLogs()
        return store
    }

    /// The first entry of `db`, as stored (sealed).
    func firstStored(_ store: Store, _ db: Database) throws -> (key: [UInt8], value: [UInt8])? {
        let bare = Database(dbi: db.dbi, name: db.name)
        return try store.read { s in
            try s.txn.withCursor(bare) { c in try c.first() ? (Array(c.key), Array(c.value)) : nil }
        }
    }

    @Test(arguments: [
        Layout.meta, Layout.sessions, Layout.onboardingSessions, Layout.batches, Layout.inferred, Layout.onboardings,
    ])
    func aFlippedBitInAValueStopsTheReadThatMeetsIt(_ name: String) throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try store(dir)
        defer { store.close() }
        let db = try #require(store.read { s in try s.txn.open(name, create: false) })
        #expect(db.sealed)
        let (key, value) = try #require(try firstStored(store, db))
        // The payload as readers see it: the stored bytes less the 4-byte checksum.
        let payload: [UInt8]? = try store.read { s in
            try key.withUnsafeBytes { k in try s.txn.get(db, k).map(Array.init) }
        }
        #expect(payload == Array(value.dropFirst(4)))
        var flipped = value
        flipped[flipped.count - 1] ^= 0x04
        let bare = Database(dbi: db.dbi, name: db.name)
        try store.env.transaction(write: true) { txn in
            try key.withUnsafeBytes { k in try flipped.withUnsafeBytes { _ = try txn.put(bare, k, $0) } }
        }
        let error = #expect(throws: StoreError.self) {
            try store.read { s in try key.withUnsafeBytes { k in _ = try s.txn.get(db, k) } }
        }
        #expect(error?.kind == .corrupt)
        #expect(error.map { "\($0)".contains("`\(name)` entry under key") && "\($0)".contains("is damaged") } == true)
        #expect(store.damageFound != nil, "the read marks the store damaged")
        // A cursor meets it too, and check does not pass.
        #expect(throws: StoreError.self) { try store.read { s in try s.txn.withCursor(db) { c in _ = try c.first() } } }
        #expect((try? store.check().isOK) != true)
    }

    /// A value put through a sealed database reads back as it was put; a database with checksums of its own is not
    /// sealed again.
    @Test func valuesReadBackAsTheyWerePut() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try store(dir)
        defer { store.close() }
        #expect(!store.dbs.events.sealed && !store.dbs.strings.sealed && !store.dbs.sessionNames.sealed)
        for bytes in [[UInt8](), [1], Array(0..<255)] {
            try store.env.transaction(write: true) { txn in
                try [UInt8]("k".utf8).withUnsafeBytes { k in
                    try bytes.withUnsafeBytes { _ = try txn.put(store.dbs.checkpoints, k, $0) }
                }
            }
            let read = try store.read { s in
                try [UInt8]("k".utf8).withUnsafeBytes { try s.txn.get(s.dbs.checkpoints, $0).map(Array.init) }
            }
            #expect(read == bytes)
        }
    }
}
