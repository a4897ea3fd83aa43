import BoardwalkCodec
import BoardwalkGenerator
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
                    events.append(
                        simpleEvent(
                            onboarding: onboarding, screen: screen, session: onboarding * 100 + i % 9,
                            time: 1_000_000 + Int64(i) * 1_000))
                }
            }
        }
        try store.append(events)
        // Into `events`, which the walk reads (a batch's blocks go to the event log first).
        try store.foldLogs()
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

    /// A read cursor steps across leaves forward and back, and from a seek both ways: the guard's look from the root
    /// finds where each step out of a leaf lands, and every step gives the entry next to the last in key order.
    @Test func cursorStepsAcrossLeavesGiveTheEntriesInKeyOrder() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Self.store(dir)
        defer { store.close() }
        try store.read { s in
            var walk = try #require(try LeafWalk(s.txn, s.dbs.events))
            defer { walk.release() }
            let keys = try Self.walkEntries(&walk, from: []).map(\.key)
            #expect(keys.count > 500)
            try s.txn.withCursor(s.dbs.events) { c in
                var forward: [[UInt8]] = []
                var found = try c.first()
                while found {
                    forward.append(Array(c.key))
                    found = try c.next()
                }
                #expect(forward == keys)
                var backward: [[UInt8]] = []
                found = try c.last()
                while found {
                    backward.append(Array(c.key))
                    found = try c.previous()
                }
                #expect(backward == keys.reversed())
                for k in stride(from: 1, to: keys.count - 1, by: 29) {
                    #expect(try keys[k].withUnsafeBytes { try c.seek($0) })
                    #expect(try c.previous() && Array(c.key) == keys[k - 1])
                    #expect(try c.next() && Array(c.key) == keys[k])
                    #expect(try c.next() && Array(c.key) == keys[k + 1])
                }
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
        var leaf = 0, pageSize = 0
        do {
            let store = try Self.store(dir)
            // A leaf of `events` in the middle of its keys: where a key read through the cursor lies.
            leaf = try store.read { s in
                pageSize = s.txn.pageSize
                return try s.txn.withCursor(s.dbs.events) { c in
                    _ = try c.first()
                    for _ in 0..<300 { _ = try c.next() }
                    return Int((UInt(bitPattern: c.key.baseAddress) - s.txn.file.mapStart) / UInt(pageSize))
                }
            }
            store.close()
        }
        let file = try #require(FileHandle(forUpdatingAtPath: dir + "/data.mdb"))
        try file.seek(toOffset: UInt64(leaf * pageSize + field))
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

    /// Random damage to the `events` tree's branch and leaf pages in the file (one to four bytes of one page, a
    /// branch page in half of 400 rounds, each on a fresh copy of the pristine file): walks from several keys and every onboarding's
    /// block runs either complete or throw ``StoreError`` with ``StoreError/Kind/corrupt``; nothing traps (liblmdb
    /// trusts these pages, so the damage stays where only the store's own reader goes).
    @Test func randomDamageToTheTreeThrowsOrReadsNeverTraps() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        var leaves = Set<Int>(), onboardings: [StringID] = [], starts: [[UInt8]] = [[]], root = 0, pageSize = 0
        do {
            let store = try Self.store(dir)
            try store.read { s in
                pageSize = s.txn.pageSize
                let entries = try Self.cursorEntries(s, from: [])
                for k in stride(from: 0, to: entries.count, by: 97) { starts.append(entries[k].key) }
                try s.txn.withCursor(s.dbs.events) { c in
                    var found = try c.first()
                    while found {
                        leaves.insert(Int((UInt(bitPattern: c.key.baseAddress) - s.txn.file.mapStart) / UInt(pageSize)))
                        found = try c.next()
                    }
                }
                var walk = try #require(try LeafWalk(s.txn, s.dbs.events))
                root = Int(walk.root)
                walk.release()
                for o in [0, 7, 31, 59] { onboardings.append(try #require(try s.id(of: "onb-\(o)"))) }
            }
            store.close()
        }
        let path = dir + "/data.mdb"
        let pristine = try #require(FileManager.default.contents(atPath: path))
        let branches = Self.branchPages(pristine, root: root, pageSize: pageSize), leafPages = leaves.sorted()
        #expect(
            leafPages.count > 20 && !branches.isEmpty,
            "a tree of two levels or more: \(leaves.count) leaves, \(branches.count) branch pages")
        var rng = SplitMix64(seed: 0x1EAF_DA3A)
        var threw = 0
        for _ in 0..<400 {
            var damaged = pristine
            // A branch page in half the rounds (there are few), a leaf in the others.
            let from = rng.next() % 2 == 0 && !branches.isEmpty ? branches : leafPages
            let page = from[Int(rng.next() % UInt64(from.count))]
            for _ in 0...(rng.next() % 4) {
                // The header and node offsets (the first 64 bytes) half the time; anywhere in the page otherwise.
                let offset = page * pageSize + Int(rng.next() % (rng.next() % 2 == 0 ? 64 : UInt64(pageSize)))
                damaged[offset] =
                    rng.next() % 3 == 0
                    ? damaged[offset] ^ UInt8(1 << (rng.next() % 8)) : UInt8(truncatingIfNeeded: rng.next())
            }
            try damaged.write(to: URL(fileURLWithPath: path))
            let store = try Store.open(at: dir)
            defer { store.close() }
            do {
                try store.read { s in
                    var walk = try #require(try LeafWalk(s.txn, s.dbs.events))
                    defer { walk.release() }
                    for start in starts { _ = try Self.walkEntries(&walk, from: start) }
                    for onboarding in onboardings {
                        try s.forEachBlockRun(onboarding: onboarding) { run in
                            while try run.next() != nil {}
                            return true
                        }
                    }
                }
            } catch let error as StoreError {
                #expect(error.kind == .corrupt, "\(error)")
                threw += 1
            }
        }
        #expect(threw > 100, "most damage is found")
    }

    /// The branch pages of the tree whose root is `root` in `file`, found from the root down (LMDB 0.9's layout: a
    /// 16-byte header with the page's number, flags at byte 10 (1: branch), the end of the node offsets at byte 12;
    /// a branch node's child page number in its first six bytes).
    static func branchPages(_ file: Data, root: Int, pageSize: Int) -> [Int] {
        let bytes = [UInt8](file)
        func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        var branches: [Int] = [], next = [root]
        while let page = next.popLast() {
            let base = page * pageSize
            guard base + pageSize <= bytes.count, u16(base + 10) & 0x01 != 0 else { continue }  // a leaf
            branches.append(page)
            for i in 0..<((u16(base + 12) - 16) / 2) {
                let node = base + u16(base + 16 + 2 * i)
                next.append(u16(node) | u16(node + 2) << 16 | u16(node + 4) << 32)
            }
        }
        return branches.sorted()
    }
}
