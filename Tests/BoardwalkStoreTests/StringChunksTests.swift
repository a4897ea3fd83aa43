import BoardwalkCodec
import BoardwalkModel
import BoardwalkStoreFormat
import Foundation
import Testing

@testable import BoardwalkStore

/// `strings` in chunks (format 5): every id resolves both ways across chunks and batches, whatever the strings'
/// sizes and kinds, and damage is reported where it is.
@Suite struct StringChunksTests {
    /// Sessions with UUID ids (either case), plain ids and ids longer than a chunk, over three batches: many chunks,
    /// each id resolves to its string and back in a new `Store`, the count is right, and `check()` passes.
    @Test func idsResolveAcrossChunksAndBatches() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        var sessions: [String] = []
        for i in 0..<900 {
            switch i % 4 {
            case 0: sessions.append(UUID().uuidString)  // uppercase
            case 1: sessions.append(UUID().uuidString.lowercased())
            case 2: sessions.append("session-\(i)")
            default: sessions.append(i % 100 == 3 ? String(repeating: "long\(i)", count: 400) : "é-\(i)")
            }
        }
        do {
            let store = try Store.open(at: dir, options: .init(durability: .noSync))
            defer { store.close() }
            for batch in 0..<3 {
                let range = (batch * 300)..<(batch * 300 + 300)
                try store.append(
                    range.map { i in
                        Event(
                            time: Timestamp(microseconds: Int64(i)), session: sessions[i], meta: nil,
                            payload: .analytics(.onboardingStarted))
                    })
            }
            let (chunks, strings) = try store.env.transaction(write: false) { txn in
                (try txn.entries(store.dbs.strings), try StringChunks.count(in: txn, store.dbs))
            }
            // 900 sessions, plus nothing else interned by these events.
            #expect(strings == 900)
            #expect(chunks > 3 && chunks < 900)
        }
        let store = try Store.open(at: dir)
        defer { store.close() }
        try store.read { s in
            #expect(try s.stats().strings == 900)
            for (i, session) in sessions.enumerated() {
                let id = try #require(try s.id(of: session), "session \(i)")
                #expect(s.string(for: id) == session)
            }
            #expect(try s.id(of: "never stored") == nil)
            #expect(s.string(for: 900) == nil)
            #expect(try s.check().problems.isEmpty)
        }
    }

    /// A write transaction finds its own new strings (not yet in the readers' table) by comparing chunk entries.
    @Test func aWriteFindsItsOwnNewStrings() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .init(durability: .noSync))
        defer { store.close() }
        let uuid = UUID().uuidString
        try store.append([simpleEvent(onboarding: 0, screen: 0, session: 1, time: 1)])
        _ = try store.read { try $0.id(of: "s1") }  // loads the readers' table
        try store.write { w in
            try w.append([
                Event(
                    time: Timestamp(microseconds: 2), session: uuid, meta: nil, payload: .analytics(.onboardingStarted))
            ])
            let id = try #require(try w.snapshot.id(of: uuid))
            #expect(try w.snapshot.string(for: id) == uuid)
        }
    }

    enum Damage: CaseIterable { case garbledChunk, gap }

    /// A chunk that does not decode, or a gap in the ids (a chunk whose key skips five ids), is reported by `check()` with the id where it is, and a
    /// lookup throws `corrupt` instead of trapping or answering wrongly.
    @Test(arguments: Damage.allCases)
    func damageIsReported(_ damage: Damage) throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .init(durability: .noSync))
        defer { store.close() }
        // 300 long session ids: several chunks.
        try store.append(
            (0..<300).map { i in
                Event(
                    time: Timestamp(microseconds: Int64(i)), session: String(repeating: "x", count: 60) + "\(i)",
                    meta: nil,
                    payload: .analytics(.onboardingStarted))
            })
        let keys: [[UInt8]] = try store.env.transaction(write: false) { txn in
            try txn.withCursor(store.dbs.strings) { c in
                var keys: [[UInt8]] = []
                var found = try c.first()
                while found { keys.append(Array(c.key)); found = try c.next() }
                return keys
            }
        }
        #expect(keys.count >= 3)
        let middle = keys[keys.count / 2]
        var id = UInt32(middle[0]) << 24 | UInt32(middle[1]) << 16 | UInt32(middle[2]) << 8 | UInt32(middle[3])
        try store.env.transaction(write: true) { txn in
            switch damage {
            case .garbledChunk:
                _ = try middle.withUnsafeBytes { k in
                    try [UInt8]([3, 200, 1]).withUnsafeBytes { try txn.put(store.dbs.strings, k, $0) }
                }
            case .gap:
                id = 300
                var key = UInt32(305).bigEndian
                _ = try withUnsafeBytes(of: &key) { k in
                    try [UInt8]([1, 2, 65]).withUnsafeBytes { try txn.put(store.dbs.strings, k, $0) }
                }
            }
        }
        try store.read { s in
            let report = try s.check()
            let expected =
                damage == .garbledChunk
                ? "the strings chunk at id \(id) does not decode"
                : "the strings database is not dense at id \(id)"
            #expect(
                report.problems.contains { $0.hasPrefix("strings: ") && $0.contains(expected) }, "\(report.problems)")
            let error = #expect(throws: StoreError.self) { try s.id(of: "not there") }
            #expect(error?.kind == .corrupt)
        }
    }

    /// Puts `strings` as one chunk under `key`, as a damaged or a very large store would hold it.
    private static func putChunk(_ store: Store, key: UInt32, _ strings: [String]) throws {
        var builder = StringChunkBuilder()
        for s in strings { s.withUTF8Bytes { builder.append($0) } }
        try store.env.transaction(write: true) { txn in
            var be = key.bigEndian
            _ = try withUnsafeBytes(of: &be) { k in
                try builder.withValue(checksumSeed: StringChunks.checksumSeed(first: key)) {
                    try txn.put(store.dbs.strings, k, $0)
                }
            }
        }
    }

    /// Ids are `0..<UInt32.max` (`RecordFormat.absent` is the only reserved one), so a last chunk whose strings
    /// end at id 0xFFFF_FFFE is whole: its count is `UInt32.max` strings and its last string resolves.
    @Test func aChunkEndingAtTheLastValidId() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .init(durability: .noSync))
        defer { store.close() }
        try Self.putChunk(store, key: 0xFFFF_FFFD, ["a", "b"])
        let (count, seen) = try store.env.transaction(write: false) { txn in
            var seen: [StringID: String] = [:]
            try StringChunks.forEach(in: txn, store.dbs, from: 0xFFFF_FFFD) { id, entry in
                seen[id] = entry.string
                return true
            }
            return (try StringChunks.count(in: txn, store.dbs), seen)
        }
        #expect(count == UInt32.max)
        #expect(seen == [0xFFFF_FFFD: "a", 0xFFFF_FFFE: "b"])
        try store.read { s in
            #expect(s.string(for: 0xFFFF_FFFE) == "b")
            #expect(s.string(for: RecordFormat.absent) == nil)
        }
        // One string more would name the reserved id: that chunk is damage.
        try Self.putChunk(store, key: 0xFFFF_FFFD, ["a", "b", "c"])
        try store.env.transaction(write: false) { txn in
            let error = #expect(throws: StoreError.self) { try StringChunks.count(in: txn, store.dbs) }
            #expect(error?.kind == .corrupt)
        }
    }

    /// Every id resolves at the edges of every chunk (the first and last string of each, and one past the end).
    @Test func stringForAtEveryChunkEdge() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .init(durability: .noSync))
        defer { store.close() }
        var sessions: [String] = []
        for i in 0..<700 {
            sessions.append(
                i % 3 == 0
                    ? UUID().uuidString
                    : i % 3 == 1 ? UUID().uuidString.lowercased() : "s-\(i)-" + String(repeating: "y", count: i % 50))
        }
        for batch in 0..<2 {
            try store.append(
                (batch * 350..<batch * 350 + 350).map { i in
                    Event(
                        time: Timestamp(microseconds: Int64(i)), session: sessions[i], meta: nil,
                        payload: .analytics(.onboardingStarted))
                })
        }
        let keys: [UInt32] = try store.env.transaction(write: false) { txn in
            try txn.withCursor(store.dbs.strings) { c in
                var keys: [UInt32] = []
                var found = try c.first()
                while found { keys.append(c.key.be32(0)); found = try c.next() }
                return keys
            }
        }
        #expect(keys.count > 4)
        #expect(keys.first == 0)
        try store.read { s in
            for key in keys {
                for id in [key &- 1, key, key + 1] where id < 700 {
                    #expect(s.string(for: id) == sessions[Int(id)], "id \(id) at chunk \(key)")
                }
            }
            #expect(s.string(for: 699) == sessions[699])
            #expect(s.string(for: 700) == nil)
            let problems = try s.check().problems
            #expect(problems.isEmpty)
        }
    }

    /// One read snapshot begun before a batch and one after, both open while the readers' table loads: in
    /// either order of first lookup, the older one never sees the newer strings and both see the older ones.
    @Test(arguments: [false, true])
    func tableLoadedAcrossSnapshots(olderFirst: Bool) throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .init(durability: .noSync))
        defer { store.close() }
        let old = (0..<200).map { _ in UUID().uuidString }
        let new = (0..<200).map { i in "new-\(i)" }
        try store.append(sessionStarts(old))
        try store.env.transaction(write: false) { older in
            let s1 = try Snapshot(txn: older, dbs: store.dbs, cache: store.sharedStrings)
            // Appended from another thread while `older` stays open (this thread's read would not let it).
            let done = DispatchSemaphore(value: 0)
            let batch = sessionStarts(new, from: 200)
            nonisolated(unsafe) var failure: (any Error)? = nil
            Thread {
                do { try store.append(batch) } catch { failure = error }
                done.signal()
            }.start()
            done.wait()
            #expect(failure == nil)
            try store.env.transaction(write: false) { newer in
                let s2 = try Snapshot(txn: newer, dbs: store.dbs, cache: store.sharedStrings)
                if olderFirst { #expect(try s1.id(of: old[150]) == 150) }
                #expect(try s2.id(of: new[10]) == 210)
                #expect(try s1.id(of: new[10]) == nil)
                #expect(s1.string(for: 210) == nil)
                #expect(s2.string(for: 210) == new[10])
                #expect(try s1.id(of: old[199]) == 199)
                #expect(try s2.id(of: old[0]) == 0)
                #expect(try s2.id(of: new[199]) == 399)
            }
        }
    }

    /// Inside one write: a lookup of this transaction's own new strings finds each exactly (case and all) across
    /// several batches, a refused batch's strings included, and after the commit the stored dictionary is what
    /// the writer holds (every string resolves both ways in a new process's view, and `check()` passes).
    @Test func aWriteSeesItsOwnStringsExactly() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let lower = "0f8e2c1a-9b3d-4e5f-a6b7-c8d9e0f1a2b3"
        let digits = "01234567-8901-2345-6789-012345678901"
        let mixed = "0f8e2c1a-9b3d-4e5f-A6B7-c8d9e0f1a2b3"
        let refusedSession = "ABCDEF01-2345-6789-ABCD-EF0123456789"
        do {
            let store = try Store.open(at: dir, options: .init(durability: .noSync))
            defer { store.close() }
            try store.append([simpleEvent(onboarding: 0, screen: 0, session: 1, time: 1)])
            _ = try store.read { try $0.id(of: "s1") }  // loads the readers' table
            try store.write { w in
                try w.append(sessionStarts([lower, digits, mixed], from: 10))
                // The second event cannot be stored (its time is out of range): the batch is refused after its
                // first event's session was interned.
                #expect(throws: StoreError.self) {
                    try w.append([
                        Event(
                            time: Timestamp(microseconds: 20), session: refusedSession, meta: nil,
                            payload: .analytics(.onboardingStarted)),
                        Event(
                            time: Timestamp(microseconds: .max), session: "late", meta: nil,
                            payload: .analytics(.onboardingStarted)),
                    ])
                }
                try w.append([
                    Event(
                        time: Timestamp(microseconds: 30), session: "after", meta: nil,
                        payload: .analytics(.onboardingStarted))
                ])
                let s = try w.snapshot
                for candidate in [lower, digits, mixed, refusedSession, "after"] {
                    let id = try #require(try s.id(of: candidate), "\(candidate)")
                    #expect(s.string(for: id) == candidate)
                }
                for other in [
                    lower.uppercased(), mixed.uppercased(), refusedSession.lowercased(),
                    digits.replacingOccurrences(of: "1", with: "a"),
                ] {
                    #expect(try s.id(of: other) == nil, "\(other)")
                }
            }
        }
        let store = try Store.open(at: dir)
        defer { store.close() }
        try store.read { s in
            let count = try s.stats().strings
            var all = Set<String>()
            for id in 0..<UInt32(count) {
                let string = try #require(s.string(for: id))
                #expect(try s.id(of: string) == id)
                all.insert(string)
            }
            #expect(all.isSuperset(of: [lower, digits, mixed, refusedSession, "after"]))
            #expect(try s.check().problems.isEmpty)
        }
    }

    /// A chunk holds a canonical UUID in 17 bytes, so a batch of UUIDs is cut every 58 of them (1 024 bytes, less the
    /// checksum, the count and the 37 a string of 36 bytes may take), not every 25 (what 36-character strings would
    /// give).
    @Test func uuidsPerChunk() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .init(durability: .noSync))
        defer { store.close() }
        try store.append(
            (0..<590).map { i in
                Event(
                    time: Timestamp(microseconds: Int64(i)), session: UUID().uuidString.lowercased(), meta: nil,
                    payload: .analytics(.onboardingStarted))
            })
        let sizes: [(count: Int, bytes: Int)] = try store.env.transaction(write: false) { txn in
            try txn.withCursor(store.dbs.strings) { c in
                var out: [(Int, Int)] = []
                var found = try c.first()
                while found {
                    let seed = StringChunks.checksumSeed(first: c.key.be32(0))
                    out.append((try StringChunkReader(c.value, checksumSeed: seed).count, c.value.count))
                    found = try c.next()
                }
                return out
            }
        }
        #expect(sizes.map(\.count) == Array(repeating: 58, count: 10) + [10])
        #expect(sizes.allSatisfy { $0.bytes <= Layout.stringChunkTarget })
    }

    /// No chunk is larger than `Layout.stringChunkTarget` bytes when its count's varint grows to two bytes
    /// (128 strings) with the chunk just full: 126 strings of 7 bytes, one of 6 and one more of 7.
    @Test func aChunkNeverPassesTheTarget() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .init(durability: .noSync))
        defer { store.close() }
        var sessions = (0..<126).map { i in "s" + String(100_000 + i) }  // 7 bytes each
        sessions.append("s12345")  // 6 bytes
        sessions.append("t" + String(100_000))
        sessions.append("t" + String(100_001))
        #expect(sessions.prefix(126).allSatisfy { $0.utf8.count == 7 })
        try store.append(sessionStarts(sessions))
        let sizes: [Int] = try store.env.transaction(write: false) { txn in
            try txn.withCursor(store.dbs.strings) { c in
                var out: [Int] = []
                var found = try c.first()
                while found { out.append(c.value.count); found = try c.next() }
                return out
            }
        }
        // `Interner.flush()` cuts with `byteCount(appending:)`, which counts the count's varint growing to 2 bytes at
        // 128 strings (with `byteCount + bound` a chunk reached 1 025 bytes).
        #expect(sizes.allSatisfy { $0 <= Layout.stringChunkTarget }, "\(sizes)")
    }

    /// Another process's write that stored strings but no event (a batch refused part-way whose writer caught the
    /// error and committed, as `StoreWriter.append` allows) leaves `next_seq` as it was. This writer must still see
    /// those strings before it appends its own, or its first new string's id is taken. Simulated by putting the
    /// chunk such a write leaves (a second `Store` on the same path cannot be opened in one process).
    @Test func anotherProcessesStringsWithoutEvents() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .init(durability: .noSync))
        defer { store.close() }
        try store.append([simpleEvent(onboarding: 0, screen: 0, session: 1, time: 1)])
        // What such a write leaves, done here by this process's writer: one more string, the same next seq.
        let (strings0, next0) = try store.read { s in (try s.stats().strings, try s.stats().nextSeq) }
        try store.write { w in
            _ = try? w.append([
                Event(
                    time: Timestamp(microseconds: .max), session: "refused here", meta: nil,
                    payload: .analytics(.onboardingStarted))
            ])
        }
        let before = try store.read { s in
            #expect(try s.stats().nextSeq == next0)
            #expect(try s.stats().strings == strings0 + 1)
            return try s.stats().strings
        }
        try Self.putChunk(store, key: UInt32(before), ["refused elsewhere"])
        // `refresh(_:)` compares the stored string count with its table's as well as `meta/next_seq` (which alone
        // did not move, and this append then put its new string's chunk at a taken id and was refused as corrupt).
        try store.append([
            Event(time: Timestamp(microseconds: 2), session: "mine", meta: nil, payload: .analytics(.onboardingStarted))
        ])
        try store.read { s in
            #expect(try s.id(of: "refused elsewhere") == UInt32(before))
            #expect(try s.id(of: "mine") == UInt32(before) + 1)
            let problems = try s.check().problems
            #expect(problems.isEmpty)
        }
    }

    /// One malformed key after the last chunk (5 bytes, not 4) is damage `check()` reports; it should not also
    /// make every event unreadable: `Snapshot.init` falls back to `fallbackStringCount`, which steps back over such
    /// keys to the last well-formed chunk (a string count of 0 would put every string reference out of range).
    @Test func aMalformedLastKeyLeavesEventsReadable() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .init(durability: .noSync))
        defer { store.close() }
        try store.append(
            (0..<50).map { i in simpleEvent(onboarding: i % 3, screen: i % 4, session: i, time: Int64(i)) })
        let strings = try store.read { try $0.stats().strings }
        try store.env.transaction(write: true) { txn in
            _ = try [UInt8]([0xFF, 0xFF, 0xFF, 0xFF, 0]).withUnsafeBytes { k in
                try [UInt8]([1, 0]).withUnsafeBytes { try txn.put(store.dbs.strings, k, $0) }
            }
        }
        try store.read { s in
            let report = try s.check()
            #expect(
                report.problems.contains { $0.hasPrefix("strings: ") && $0.contains("5 bytes") }, "\(report.problems)")
            let count = try s.stats().strings
            #expect(count == strings)
            let events = try s.events(since: 0).count
            #expect(events == 50)
            #expect(report.problemCount == 1, "\(report.problems)")
        }
    }

    /// Two strings with different bytes that Swift's `==` calls equal (é precomposed and decomposed) are two
    /// strings of the dictionary: the writer's and the readers' tables hash bytes, so each gets its own id and
    /// resolves to it. `check()` must not call the second a repeat of the first (as its `Set<String>` did).
    @Test func canonicallyEquivalentStringsAreDistinct() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .init(durability: .noSync))
        defer { store.close() }
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        #expect(composed == decomposed && Array(composed.utf8) != Array(decomposed.utf8))
        try store.append(sessionStarts([composed, decomposed]))
        try store.read { s in
            #expect(try s.stats().strings == 2)
            #expect(try s.id(of: composed) == 0)
            #expect(try s.id(of: decomposed) == 1)
            #expect(s.string(for: 1).map { Array($0.utf8) } == Array(decomposed.utf8))
            let problems = try s.check().problems
            #expect(problems.isEmpty, "\(problems)")
        }
    }

    /// Byte flips in a middle and in the last chunk: `check()`, `stats()`, `string(for:)` at every id and `id(of:)`
    /// answer or throw `corrupt` (a fresh readers' table each time, so damage is seen afresh), never trap or hang.
    @Test func chunkDamageNeverTraps() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .init(durability: .noSync))
        defer { store.close() }
        let sessions = (0..<240).map { i in i % 2 == 0 ? UUID().uuidString : "s-\(i)-é" }
        try store.append(sessionStarts(sessions))
        let chunks: [(key: [UInt8], value: [UInt8])] = try store.env.transaction(write: false) { txn in
            try txn.withCursor(store.dbs.strings) { c in
                var out: [([UInt8], [UInt8])] = []
                var found = try c.first()
                while found { out.append((Array(c.key), Array(c.value))); found = try c.next() }
                return out
            }
        }
        #expect(chunks.count >= 3)
        func put(_ key: [UInt8], _ value: [UInt8]) throws {
            try store.env.transaction(write: true) { txn in
                _ = try key.withUnsafeBytes { k in try value.withUnsafeBytes { try txn.put(store.dbs.strings, k, $0) } }
            }
        }
        var damagedReads = 0
        for (key, value) in [chunks[chunks.count / 2], chunks[chunks.count - 1]] {
            for i in stride(from: 0, to: value.count, by: 9) {
                for flip: UInt8 in [0x01, 0x80, 0xFF] {
                    var damaged = value
                    damaged[i] ^= flip
                    try put(key, damaged)
                    try store.env.transaction(write: false) { txn in
                        let s = try Snapshot(txn: txn, dbs: store.dbs, cache: SharedStringTable())
                        _ = try s.check()
                        let count = try s.stats().strings
                        for id in 0..<UInt32(min(count, 300)) { _ = s.string(for: id) }
                        do {
                            _ = try s.id(of: sessions[239])
                        } catch let error as StoreError {
                            #expect(error.kind == .corrupt)
                            damagedReads += 1
                        }
                    }
                }
            }
            try put(key, value)
        }
        #expect(damagedReads > 0)
        try store.read { s in
            let problems = try s.check().problems
            #expect(problems.isEmpty)
        }
    }
    /// `string(for:)` walks chunks until walks have cost about what loading the readers' table would, then answers
    /// from the table: the same strings before and after, in a fresh `Store` (an empty table) over 300 strings.
    @Test func stringForIsTheSameFromChunksAndFromTheTable() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let sessions = (0..<300).map { i in i % 3 == 0 ? UUID().uuidString.lowercased() : "session \(i)" }
        let store = try reopenedStore(at: dir, holding: sessions)
        defer { store.close() }
        try store.read { s in
            // Three rounds over every id: the 64th lookup loads the table, so the first round is mostly walks.
            for round in 0..<3 {
                for (i, session) in sessions.enumerated() {
                    #expect(s.string(for: StringID(i)) == session, "round \(round), id \(i)")
                }
            }
            #expect(s.string(for: 300) == nil)
        }
    }

    /// Many ids at once: the strings of ascending ids in one pass, near ones read on and far ones (past the seek
    /// distance) sought, the same from the chunks and from a loaded table; an id past the strings is damage, ids out of
    /// order a caller's mistake.
    @Test func stringsForAscendingIdsAreEachIdsString() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let sessions = (0..<1_200).map { i in
            i % 4 == 0 ? UUID().uuidString : "session \(i) " + String(repeating: "z", count: i % 40)
        }
        let store = try reopenedStore(at: dir, holding: sessions)
        defer { store.close() }
        let picks: [StringID] = [0, 1, 2, 40, 41, 297, 298, 900, 1_199]
        let every = (0..<StringID(sessions.count)).map { $0 }
        for loaded in [false, true] {
            try store.read { (s: Snapshot) throws in
                if loaded { #expect(try s.id(of: sessions[7]) == 7) }
                #expect(try s.strings(for: picks) == picks.map { sessions[Int($0)] }, "table loaded: \(loaded)")
                #expect(try s.strings(for: every) == sessions, "table loaded: \(loaded)")
                #expect(try s.strings(for: []) == [])
                let past = #expect(throws: StoreError.self) { try s.strings(for: [3, 1_200]) }
                #expect(past?.kind == .corrupt)
                let unordered = #expect(throws: StoreError.self) { try s.strings(for: [5, 900, 600]) }
                #expect(unordered?.kind == .invalidArgument)
            }
        }
    }
}
