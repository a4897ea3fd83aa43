import BoardwalkCodec
import BoardwalkModel
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
        // Read from the log of the six batches, then from the tree once the log is folded.
        #expect(try store.read { s in try s.txn.entries(s.dbs.sessionNamesLog) } == 6)
        for folded in [false, true] {
            if folded {
                try store.foldLogs()
                #expect(try store.read { s in try s.txn.entries(s.dbs.sessionNamesLog) } == 0)
            }
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
    }

    /// More batches than the log holds: the log is folded every 16, and every entry is found in one place or the
    /// other.
    @Test func theLogIsFoldedEverySixteenBatches() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .init(durability: .noSync))
        defer { store.close() }
        let all = (0..<4).flatMap { _ in batches() }
        for (i, batch) in all.enumerated() {
            try store.append(
                batch.map {
                    var e = $0; e.eventID = "\(i)-" + ($0.eventID ?? ""); return e
                })
        }
        #expect(try store.read { s in try s.txn.entries(s.dbs.sessionNamesLog) } == all.count % 16)
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

    /// `check()` reports an entry missing, an entry its events do not explain, and a malformed one.
    @Test func checkFindsWrongEntries() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .init(durability: .noSync))
        defer { store.close() }
        try store.append(batches()[0])
        try store.foldLogs()
        #expect(try store.check().isOK)
        // The first entry removed: a session or pair of the events is no longer listed.
        let first: [UInt8] = try store.env.transaction(write: true) { txn in
            try txn.withCursor(store.dbs.sessionNames) { c in
                #expect(try c.first())
                let key = Array(c.key)
                try c.delete()
                return key
            }
        }
        var report = try store.check()
        #expect(
            report.problems.contains { $0.hasPrefix("session_names:") && $0.contains("have no entry") }, "\(report)")
        // Put back under another session: listed without reason.
        var moved = first
        moved[12] ^= 1
        try store.env.transaction(write: true) { txn in
            try moved.withUnsafeBytes { k in
                try [UInt8](repeating: 0, count: 4).withUnsafeBytes { _ = try txn.put(store.dbs.sessionNames, k, $0) }
            }
            try [UInt8](repeating: 1, count: 5).withUnsafeBytes { k in
                try [UInt8(1)].withUnsafeBytes { _ = try txn.put(store.dbs.sessionNames, k, $0) }
            }
        }
        report = try store.check()
        #expect(report.problems.contains { $0.contains("which its events do not say") }, "\(report)")
        #expect(report.problems.contains { $0.contains("a 5-byte key and a 1-byte value") }, "\(report)")
    }
}
