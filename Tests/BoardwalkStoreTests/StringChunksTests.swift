import BoardwalkCodec
import BoardwalkModel
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
                try store.append(range.map { i in
                    Event(time: Timestamp(microseconds: Int64(i)), session: sessions[i], meta: nil, payload: .analytics(.onboardingStarted))
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
            try w.append([Event(time: Timestamp(microseconds: 2), session: uuid, meta: nil, payload: .analytics(.onboardingStarted))])
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
        try store.append((0..<300).map { i in
            Event(time: Timestamp(microseconds: Int64(i)), session: String(repeating: "x", count: 60) + "\(i)", meta: nil,
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
                _ = try middle.withUnsafeBytes { k in try [UInt8]([3, 200, 1]).withUnsafeBytes { try txn.put(store.dbs.strings, k, $0) } }
            case .gap:
                id = 300
                var key = UInt32(305).bigEndian
                _ = try withUnsafeBytes(of: &key) { k in try [UInt8]([1, 2, 65]).withUnsafeBytes { try txn.put(store.dbs.strings, k, $0) } }
            }
        }
        try store.read { s in
            let report = try s.check()
            let expected = damage == .garbledChunk ? "the strings chunk at id \(id) does not decode"
                                                   : "the strings database is not dense at id \(id)"
            #expect(report.problems.contains { $0.hasPrefix("strings: ") && $0.contains(expected) }, "\(report.problems)")
            let error = #expect(throws: StoreError.self) { try s.id(of: "not there") }
            #expect(error?.kind == .corrupt)
        }
    }
}
