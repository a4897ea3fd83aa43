import BoardwalkCodec
import BoardwalkModel
import BoardwalkStoreFormat
import Foundation
import Testing

@testable import BoardwalkStore

/// `session_names`: every session under its own id's name and under each profile its events carry, written by the
/// append in its transaction (also when batches revisit sessions, add profiles to them, or are rolled back) and
/// verified by `check()`.
@Suite struct SessionNamesTests {
    /// Sessions s0…s59 with profiles p0…p6, some sessions with two profiles, some events without a profile or a
    /// session (inferred), over several batches that come back to earlier sessions.
    func batches() -> [[Event]] {
        (0..<6).map { b in
            (0..<80).map { i -> Event in
                let session = (b * 7 + i) % 60
                let profile: String? = i % 9 == 0 ? nil : (i % 13 == 0 ? "p-extra" : "p\(session % 7)")
                var event = simpleEvent(
                    onboarding: session % 3, screen: i % 4, session: i % 17 == 0 ? -1 : session,
                    time: Int64(b * 1_000 + i) * 1_000_000, eventID: "e\(b)-\(i)", profile: profile)
                if i % 17 == 0 { event.profile = "p-inferred" }
                return event
            }
        }
    }

    /// What the events say: per profile the sessions whose events carry it.
    func expected(_ store: Store) throws -> [String: Set<String>] {
        var out: [String: Set<String>] = [:]
        for stored in try store.read({ try $0.events(since: 0) }) {
            if let profile = stored.event.profile { out[profile, default: []].insert(stored.event.session!) }
        }
        return out
    }

    func sessions(ofProfile profile: String, _ store: Store) throws -> Set<String> {
        try store.read { s in Set(try s.sessionIDs(ofProfile: profile).map { s.string(for: $0)! }) }
    }

    /// The directory's runs, oldest first.
    func runs(_ store: Store) throws -> [SessionNames.Run] {
        try store.read { s in try SessionNames.Directory.read(s.txn, s.dbs).runs }
    }

    @Test func listsEverySessionByNameAndProfile() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .init(durability: .noSync))
        defer { store.close() }
        for batch in batches() { try store.append(batch) }
        let byProfile = try expected(store)
        #expect(byProfile.count == 9)
        #expect(byProfile.values.contains { $0.contains { $0.hasPrefix("inferred:") } })
        let names = Set(try store.read { try $0.events(since: 0) }.map { $0.event.session! })
        #expect(try runs(store).count > 1, "six batches leave more than one run to search")
        for (profile, sessions) in byProfile { #expect(try self.sessions(ofProfile: profile, store) == sessions) }
        #expect(try sessions(ofProfile: "nobody", store).isEmpty)
        #expect(try sessions(ofProfile: "s1", store).isEmpty, "a session's name is not a profile")
        try store.read { s throws in
            for name in names {
                let id = try s.id(of: name)
                #expect(id != nil)
                #expect(try s.sessionIDs(named: name) == id.map { [$0] })
            }
            #expect(try s.sessionIDs(named: "p1").isEmpty, "a profile is not a session's name")
            #expect(try s.sessionIDs(named: "nobody").isEmpty)
        }
        #expect(try store.check().isOK)
    }

    /// Over many batches the runs merge as a binary counter's carries: each run holds at least twice the entries of
    /// the next newer one, so there are at most log2(entries) + 1 of them, and every entry is still found.
    @Test func runsMergeSoThatEachIsTwiceTheNextNewer() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .init(durability: .noSync))
        defer { store.close() }
        // New sessions in every batch, so that every batch adds entries.
        for b in 0..<40 {
            try store.append(
                (0..<25).map { i in
                    simpleEvent(
                        onboarding: i % 3, screen: 0, session: b * 25 + i, time: Int64(b * 100 + i) * 1_000_000,
                        eventID: "e\(b)-\(i)", profile: "p\((b * 25 + i) % 70)")
                })
            let runs = try runs(store)
            for (older, newer) in zip(runs, runs.dropFirst()) {
                #expect(older.count >= 2 * newer.count, "after batch \(b): \(runs)")
                #expect(older.id < newer.id)
            }
            let entries = runs.reduce(0) { $0 + Int($1.count) }
            #expect(Double(runs.count) <= log2(Double(entries)) + 1, "after batch \(b): \(runs)")
        }
        for (profile, sessions) in try expected(store) {
            #expect(try self.sessions(ofProfile: profile, store) == sessions)
        }
        #expect(try store.check().isOK)
    }

    /// A batch rolled back (its transaction aborted) leaves nothing in the index, and the writer's memory of the
    /// pairs it wrote is forgotten: appending the same events again indexes them.
    @Test func abortedBatchesAreIndexedWhenAppendedAgain() throws {
        struct Abort: Error {}
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .init(durability: .noSync))
        defer { store.close() }
        let all = batches()
        try store.append(all[0])
        #expect(throws: Abort.self) {
            try store.write { w in
                try w.append(all[1])
                throw Abort()
            }
        }
        for batch in all.dropFirst() { try store.append(batch) }
        for (profile, sessions) in try expected(store) {
            #expect(try self.sessions(ofProfile: profile, store) == sessions)
        }
        #expect(try store.check().isOK)
    }

    /// `check()` reports a damaged chunk (and a look-up through it fails instead of missing sessions), a chunk
    /// gone, an entry its events do not explain in a run the directory does not list, and a malformed key.
    @Test func checkFindsDamagedMissingAndWrongEntries() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .init(durability: .noSync))
        defer { store.close() }
        try store.append(batches()[0])
        #expect(try store.check().isOK)
        let (key, value): ([UInt8], [UInt8]) = try store.read { s in
            try s.txn.withCursor(s.dbs.sessionNames) { c throws in
                let found = try c.last()
                #expect(found)
                return (Array(c.key), Array(c.value))
            }
        }
        #expect(key.count == SessionNames.chunkKeySize)
        func put(_ key: [UInt8], _ value: [UInt8]) throws {
            try store.env.transaction(write: true) { txn in
                try key.withUnsafeBytes { k in
                    try value.withUnsafeBytes { _ = try txn.put(store.dbs.sessionNames, k, $0) }
                }
            }
        }
        // One bit of an entry flipped.
        var flipped = value
        flipped[StoredChecksum.size + 3] ^= 0x10
        try put(key, flipped)
        var report = try store.check()
        #expect(report.problems.contains { $0.contains("is damaged") }, "\(report)")
        #expect(throws: StoreError.self) { try self.sessions(ofProfile: "p1", store) }
        // The chunk gone: its sessions and pairs have no entry, and its run's count is wrong.
        try store.env.transaction(write: true) { txn in
            _ = try key.withUnsafeBytes { try txn.delete(store.dbs.sessionNames, $0) }
        }
        report = try store.check()
        #expect(report.problems.contains { $0.contains("have no entry") }, "\(report)")
        #expect(report.problems.contains { $0.contains("the directory says") }, "\(report)")
        // A whole, sealed chunk of a run the directory does not list, naming a session under another's name.
        var entry = SessionNames.Entry(
            UnsafeRawBufferPointer(rebasing: value.withUnsafeBytes { $0 }[StoredChecksum.size...]), at: 0)
        entry.session ^= 1
        var chunk = [UInt8](repeating: 0, count: StoredChecksum.size + SessionNames.entrySize)
        var strayKey = [UInt8](repeating: 0, count: SessionNames.chunkKeySize)
        strayKey.withUnsafeMutableBytes { k in
            k.baseAddress!.storeBE(UInt64(999), at: 0)
            entry.store(k.baseAddress! + 8)
        }
        chunk.withUnsafeMutableBytes { c in
            entry.store(c.baseAddress! + StoredChecksum.size)
            StoredChecksum.seal(c, seed: strayKey.withUnsafeBytes { CRC32C($0) })
        }
        try put(strayKey, chunk)
        try put([1, 1, 1, 1, 1], [1])
        report = try store.check()
        #expect(report.problems.contains { $0.contains("which its events do not say") }, "\(report)")
        #expect(report.problems.contains { $0.contains("run 999 is not in the directory") }, "\(report)")
        #expect(report.problems.contains { $0.contains("a key is 5 bytes long") }, "\(report)")
    }
}
