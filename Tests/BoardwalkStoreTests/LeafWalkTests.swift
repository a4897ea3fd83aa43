import BoardwalkCodec
import BoardwalkModel
import Foundation
import Testing

@testable import BoardwalkStore

/// `LeafWalk`: LMDB's branch and leaf pages read by the store itself give the entries liblmdb's cursor gives, for
/// walks and seeks, and damaged pages throw rather than trap.
@Suite struct LeafWalkTests {
    /// Enough (onboarding, screen) groups for an `events` tree of several levels: 60 onboardings × 30 screens, a
    /// block each, some of them large (overflow pages) and some small (inside their leaf).
    static func store(_ dir: String) throws -> Store {
        let store = try Store.open(at: dir)
        var events: [Event] = []
        for onboarding in 0..<60 {
            for screen in 0..<30 {
                let n = (onboarding + screen) % 7 == 0 ? 400 : 1 + (onboarding * screen) % 3
                for i in 0..<n {
                    events.append(simpleEvent(onboarding: onboarding, screen: screen, session: onboarding * 100 + i % 9,
                                              time: 1_000_000 + Int64(i) * 1_000))
                }
            }
        }
        try store.append(events)
        return store
    }

    struct Entry: Equatable {
        var key: [UInt8]
        var value: [UInt8]
    }

    static func cursorEntries(_ s: Snapshot, from start: [UInt8]) throws -> [Entry] {
        try s.txn.withCursor(s.dbs.events) { c in
            var out: [Entry] = []
            // liblmdb refuses an empty key (MDB_BAD_VALSIZE): the first entry instead.
            var found = start.isEmpty ? try c.first() : try start.withUnsafeBytes { try c.seek($0) }
            while found {
                out.append(Entry(key: Array(c.key), value: Array(c.value)))
                found = try c.next()
            }
            return out
        }
    }

    static func walkEntries(_ walk: inout LeafWalk, from start: [UInt8]) throws -> [Entry] {
        var out: [Entry] = []
        var found = try start.withUnsafeBytes { try walk.seek($0) }
        while found {
            out.append(Entry(key: Array(walk.key), value: Array(walk.value)))
            found = try walk.next()
        }
        return out
    }

    @Test func walksAndSeeksGiveTheCursorsEntries() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Self.store(dir)
        defer { store.close() }
        for _ in 0..<2 {  // the second time through windows the first read once (the map)
            try store.read { s in
                #expect(try s.txn.entries(s.dbs.events) > 500)
                var walk = try #require(try LeafWalk(s.txn, s.dbs.events))
                defer { walk.release() }
                // From the start, from keys between entries, before and after all of them, and of another length.
                let all = try Self.cursorEntries(s, from: [])
                #expect(try Self.walkEntries(&walk, from: []) == all)
                #expect(all.contains { $0.value.count > 2_000 } && all.contains { $0.value.count < 500 })
                for k in stride(from: 0, to: all.count, by: 37) {
                    var between = all[k].key
                    between[between.count - 1] &+= 1
                    for start in [all[k].key, between, Array(all[k].key.prefix(5))] {
                        #expect(try Self.walkEntries(&walk, from: start) == (try Self.cursorEntries(s, from: start)))
                    }
                }
                #expect(try Self.walkEntries(&walk, from: [0xFF, 0xFF, 0xFF, 0xFF, 0xFF]).isEmpty)
            }
        }
    }

    /// A write transaction's pages are not all in the file: no walk there.
    @Test func noWalkInAWriteTransaction() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Self.store(dir)
        defer { store.close() }
        try store.env.transaction(write: true) { txn in
            let events = try #require(try txn.open("events", create: false))
            #expect(try LeafWalk(txn, events) == nil)
        }
    }

    /// A leaf page damaged in the file (its free-space bounds, or its own page number): the walk throws `.corrupt`.
    @Test(arguments: [12, 0]) func aDamagedLeafThrows(field: Int) throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        var leaf = 0
        do {
            let store = try Self.store(dir)
            // A leaf of `events` in the middle of its keys: where a key read through the cursor lies.
            leaf = try store.read { s in
                try s.txn.withCursor(s.dbs.events) { c in
                    _ = try c.first()
                    for _ in 0..<300 { _ = try c.next() }
                    return Int((UInt(bitPattern: c.key.baseAddress) - s.txn.file.mapStart) / 4096)
                }
            }
            store.close()
        }
        let file = try #require(FileHandle(forUpdatingAtPath: dir + "/data.mdb"))
        try file.seek(toOffset: UInt64(leaf * 4096 + field))
        try file.write(contentsOf: [0xFF, 0xFF])
        try file.close()
        let store = try Store.open(at: dir)
        defer { store.close() }
        try store.read { s in
            var walk = try #require(try LeafWalk(s.txn, s.dbs.events))
            defer { walk.release() }
            #expect {
                _ = try Self.walkEntries(&walk, from: [])
            } throws: { error in
                (error as? StoreError)?.kind == .corrupt && "\(error)".contains("page \(leaf)")
            }
        }
    }
}
