import BoardwalkCodec
import BoardwalkModel
import BoardwalkStoreFormat
import Foundation
import Testing

@testable import BoardwalkStore

/// `onboarding_sessions` in chunks (format 6): each onboarding's sessions listed once, in order, with the time of
/// their first stored event, whether they arrive after every stored session (appended to the last chunk) or
/// between stored ones (inserted, the chunk split when it outgrows its size); damage is reported where it is.
@Suite struct OnboardingSessionsTests {
    /// The chunks of `onboarding_sessions` as stored: (onboarding, first session, value size, sessions).
    func chunks(_ store: Store) throws -> [(onboarding: UInt32, first: UInt32, bytes: Int, sessions: [UInt32])] {
        try store.env.transaction(write: false) { txn in
            try txn.withCursor(store.dbs.onboardingSessions) { c in
                var out: [(onboarding: UInt32, first: UInt32, bytes: Int, sessions: [UInt32])] = []
                var found = try c.first()
                while found {
                    let key = try OnboardingSessions.key(c)
                    var sessions: [UInt32] = []
                    try OnboardingSessions.forEachEntry(c, key: key) { s, _ in sessions.append(s) }
                    out.append((key.onboarding, key.session, c.value.count, sessions))
                    found = try c.next()
                }
                return out
            }
        }
    }

    /// Every chunk is within the size, starts at its key, and the chunks of an onboarding do not overlap.
    func expectWellFormed(_ chunks: [(onboarding: UInt32, first: UInt32, bytes: Int, sessions: [UInt32])]) {
        for (i, chunk) in chunks.enumerated() {
            #expect(chunk.bytes <= Layout.sessionPairChunkTarget, "chunk \(i)")
            #expect(chunk.sessions.first == chunk.first, "chunk \(i)")
            if i > 0, chunks[i - 1].onboarding == chunk.onboarding {
                #expect(chunks[i - 1].sessions.last! < chunk.first, "chunk \(i)")
            }
        }
    }

    /// Sessions by name and first time, as a reader sees them.
    func listed(_ store: Store, _ onboarding: Int) throws -> [String] {
        try store.read { s in
            try s.sessions(ofOnboarding: "onb-\(onboarding)").map { "\($0.session)@\($0.firstTime.microseconds)" }
        }
    }

    /// 3 000 sessions over 30 batches, two onboardings interleaved: many chunks, each full but the last, every
    /// session listed once with its first event's time; a store opened again (its writer's caches cold) that
    /// gets events of the same sessions lists nothing twice and counts no session again.
    @Test func newSessionsFillChunksAcrossBatches() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        var expected: [Int: [String]] = [0: [], 1: []]
        do {
            let store = try Store.open(at: dir, options: .init(durability: .noSync))
            defer { store.close() }
            for batch in 0..<30 {
                var events: [Event] = []
                for i in 0..<100 {
                    let session = batch * 100 + i
                    let time = Int64(session) * 1_000
                    events.append(simpleEvent(onboarding: session % 2, screen: 0, session: session, time: time))
                    events.append(simpleEvent(onboarding: session % 2, screen: 1, session: session, time: time + 500))
                    expected[session % 2]!.append("s\(session)@\(time)")
                }
                try store.append(events)
            }
            let stored = try chunks(store)
            expectWellFormed(stored)
            #expect(stored.count > 10, "\(stored.count) chunks")
            // Only each onboarding's last chunk may have room left.
            for (i, chunk) in stored.enumerated()
            where i + 1 < stored.count && stored[i + 1].onboarding == chunk.onboarding {
                #expect(chunk.bytes > Layout.sessionPairChunkTarget - 16, "chunk \(i): \(chunk.bytes) bytes")
            }
            #expect(stored.reduce(0) { $0 + $1.sessions.count } == 3_000)
        }
        let store = try Store.open(at: dir, options: .init(durability: .noSync))
        defer { store.close() }
        for o in 0..<2 { #expect(try listed(store, o).sorted() == expected[o]!.sorted()) }
        try store.append(
            (0..<3_000).filter { $0 % 7 == 0 }.map {
                simpleEvent(onboarding: $0 % 2, screen: 2, session: $0, time: 10_000_000 + Int64($0))
            })
        for o in 0..<2 { #expect(try listed(store, o).sorted() == expected[o]!.sorted()) }
        #expect(try store.read { try $0.stats().sessions } == 3_000)
        let report = try store.check()
        #expect(report.isOK, "\(report)")
    }

    /// Sessions that join an onboarding after newer ones did: before its first chunk, between stored sessions of
    /// a full chunk (which splits), and past its last, some twice in one batch (the first in arrival order keeps
    /// its time). Each is listed once with the right time, the chunks stay within their size and apart, the
    /// spanning sessions are right, and `check()` passes.
    @Test func sessionsJoiningBetweenStoredOnesAreInserted() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .init(durability: .noSync))
        defer { store.close() }
        // Sessions s0...s599 interned in order by onboarding 0.
        try store.append((0..<600).map { simpleEvent(onboarding: 0, screen: 0, session: $0, time: Int64($0)) })
        var expected: [String] = []
        func join(_ sessions: [Int], at time: Int64) throws {
            var events: [Event] = []
            for (i, s) in sessions.enumerated() {
                events.append(simpleEvent(onboarding: 1, screen: 0, session: s, time: time + Int64(i)))
                if !expected.contains(where: { $0.hasPrefix("s\(s)@") }) { expected.append("s\(s)@\(time + Int64(i))") }
            }
            try store.append(events)
        }
        try join(Array(stride(from: 300, to: 600, by: 2)), at: 1_000_000)  // even sessions of the upper half
        try join(Array(stride(from: 0, to: 300, by: 3)), at: 2_000_000)  // before the first chunk
        try join(Array(stride(from: 301, to: 600, by: 2)), at: 3_000_000)  // between stored ones: chunks split
        try join([5, 5, 7, 1, 599, 2], at: 4_000_000)  // repeats, known and new
        try join((600..<700).map { $0 }, at: 5_000_000)  // new sessions past the last
        #expect(try listed(store, 1).sorted() == expected.sorted())
        let stored = try chunks(store)
        expectWellFormed(stored)
        #expect(stored.filter { $0.onboarding == 0 }.flatMap(\.sessions).count == 600)
        try store.read { s in
            let sessionsOf1 = try s.sessions(ofOnboarding: "onb-1")
            #expect(sessionsOf1.map(\.id) == sessionsOf1.map(\.id).sorted())
            // Every session of onboarding 1 below s600 also has events in onboarding 0.
            let spanning = try s.spanningSessions(ofOnboarding: try #require(try s.id(of: "onb-1")))
            #expect(Set(spanning) == Set(sessionsOf1.filter { Int($0.session.dropFirst())! < 600 }.map(\.id)))
            #expect(try s.stats().sessions == 700)
        }
        let report = try store.check()
        #expect(report.isOK, "\(report)")
    }

    /// A chunk whose bytes are damaged, and a chunk put inside another's range, are reported by `check()` and
    /// by reads of the onboarding's sessions as `corrupt`, naming the onboarding_sessions chunk.
    @Test(arguments: ["bytes", "overlap"])
    func damageIsReported(damage: String) throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .init(durability: .noSync))
        defer { store.close() }
        try store.append((0..<300).map { simpleEvent(onboarding: 0, screen: 0, session: $0, time: Int64($0)) })
        let stored = try chunks(store)
        #expect(stored.count >= 2)
        try store.env.transaction(write: true) { txn in
            var key = [UInt8](repeating: 0, count: 8)
            key.withUnsafeMutableBytes {
                $0.baseAddress!.storeBE(stored[0].onboarding, at: 0)
                $0.baseAddress!.storeBE(damage == "bytes" ? stored[0].first : stored[0].first + 1, at: 4)
            }
            // A count of 3 with one entry's worth of bytes, or a sound chunk of two sessions inside the first one.
            var builder = SessionPairChunkBuilder()
            builder.reset(firstSession: stored[0].first + 1, time: 5)
            builder.append(session: stored[0].first + 2, time: 6)
            let value = damage == "bytes" ? [3] + [UInt8](repeating: 0, count: 8) : builder.withValue { Array($0) }
            _ = try key.withUnsafeBytes { k in
                try value.withUnsafeBytes { try txn.put(store.dbs.onboardingSessions, k, $0) }
            }
        }
        let report = try store.check()
        #expect(report.problems.contains { $0.hasPrefix("onboarding_sessions:") }, "\(report)")
        let error = #expect(throws: StoreError.self) { try store.read { try $0.sessions(ofOnboarding: "onb-0") } }
        #expect(error?.kind == .corrupt)
        #expect(
            error.map { "\($0)".contains("onboarding_sessions chunk of onboarding") } == true,
            "\(String(describing: error))")
    }

    /// The raw value stored under (onboarding, first), if any.
    func value(_ store: Store, onboarding: UInt32, first: UInt32) throws -> [UInt8]? {
        var key = (UInt64(onboarding) << 32 | UInt64(first)).bigEndian
        return try store.env.transaction(write: false) { txn in
            try withUnsafeBytes(of: &key) { try txn.get(store.dbs.onboardingSessions, $0).map { Array($0) } }
        }
    }

    /// The writer never merges into a damaged chunk: a new pair that falls in a chunk that does not decode (the
    /// first chunk, where it would be inserted, or the last, where it would be appended), or in a chunk that lists
    /// a session of the next chunk, refuses the batch as `corrupt` naming the chunk, and nothing of the batch is
    /// stored: the chunk keeps its bytes, the counters theirs.
    @Test(arguments: ["first", "last", "pastNext"])
    func theWriterNeverMergesIntoADamagedChunk(damage: String) throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .init(durability: .noSync))
        defer { store.close() }
        // s0...s599 interned by onboarding 1; onboarding 0 gets the even ones, so the odd ones fall inside its chunks.
        try store.append((0..<600).map { simpleEvent(onboarding: 1, screen: 0, session: $0, time: Int64($0)) })
        try store.append(
            stride(from: 0, to: 600, by: 2).map {
                simpleEvent(onboarding: 0, screen: 0, session: $0, time: 1_000 + Int64($0))
            })
        let onboarding = try #require(try store.read { try $0.id(of: "onb-0") })
        let own = try chunks(store).filter { $0.onboarding == onboarding }
        #expect(own.count >= 2, "\(own.count) chunks")
        let target = damage == "last" ? own[own.count - 1] : own[0]
        var damaged = try #require(try value(store, onboarding: onboarding, first: target.first))
        if damage == "pastNext" {
            // Sound bytes, but the chunk also lists the next chunk's first session.
            var builder = SessionPairChunkBuilder()
            for (i, s) in (target.sessions + [own[1].first]).enumerated() {
                if i == 0 { builder.reset(firstSession: s, time: 7) } else { builder.append(session: s, time: 7) }
            }
            damaged = builder.withValue { Array($0) }
        } else {
            damaged.removeLast()  // the last entry's time delta cut short
        }
        var key = (UInt64(onboarding) << 32 | UInt64(target.first)).bigEndian
        try store.env.transaction(write: true) { txn in
            _ = try withUnsafeBytes(of: &key) { k in
                try damaged.withUnsafeBytes { try txn.put(store.dbs.onboardingSessions, k, $0) }
            }
        }
        let before = try store.read { try $0.stats() }
        // A session between the damaged chunk's stored ones, or new past every stored one for the last chunk.
        let session = damage == "last" ? 600 : 1
        let error = #expect(throws: StoreError.self) {
            try store.append([simpleEvent(onboarding: 0, screen: 1, session: session, time: 5_000)])
        }
        #expect(error?.kind == .corrupt)
        #expect(
            error.map {
                "\($0)".contains("onboarding_sessions chunk of onboarding \(onboarding) at session \(target.first)")
            } == true,
            "\(String(describing: error))")
        #expect(try value(store, onboarding: onboarding, first: target.first) == damaged)
        let after = try store.read { try $0.stats() }
        #expect(after.events == before.events && after.sessions == before.sessions && after.nextSeq == before.nextSeq)
        // The refusal marked the store: every append is refused now, naming check and the salvage.
        #expect(store.damageFound != nil)
        let marked = #expect(throws: StoreError.self) {
            try store.append([simpleEvent(onboarding: 2, screen: 0, session: 3, time: 6_000)])
        }
        #expect(marked.map { "\($0)".contains("boardwalk check") } == true, "\(String(describing: marked))")
        // Without the mark (damage no read has met), a batch that adds nothing to the damaged chunk's onboarding is
        // stored as usual.
        store.clearDamageMark()
        try store.append([simpleEvent(onboarding: 2, screen: 0, session: 3, time: 6_000)])
        #expect(try store.read { try $0.stats().events } == before.events + 1)
    }

    /// A batch refused as `corrupt` by `onboarding_sessions` inside `write {}` (a damaged chunk of one of its
    /// onboardings) is refused after its loop, once its seqs are taken and its other onboardings' chunks written:
    /// the transaction holds part of it. So nothing more goes into that transaction (a later append throws) and it is
    /// aborted whether or not the closure catches the error: nothing of it is stored (else the refused batch's pair of
    /// another onboarding stays listed without events, and the next batch's seqs skip its own).
    @Test func aBatchRefusedByADamagedChunkInsideWriteLeavesNothing() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .init(durability: .noSync))
        defer { store.close() }
        // "onb-0" interned first, so that onboarding 0's pairs sort before onboarding 1's.
        try store.append(
            [simpleEvent(onboarding: 0, screen: 0, session: 99, time: 0)]
                + (0..<10).map { simpleEvent(onboarding: 1, screen: 0, session: $0, time: Int64($0)) })
        let onboarding1 = try #require(try store.read { try $0.id(of: "onb-1") })
        let first = try #require(try chunks(store).first { $0.onboarding == onboarding1 })
        var damaged = try #require(try value(store, onboarding: onboarding1, first: first.first))
        damaged.removeLast()
        var key = (UInt64(onboarding1) << 32 | UInt64(first.first)).bigEndian
        try store.env.transaction(write: true) { txn in
            _ = try withUnsafeBytes(of: &key) { k in
                try damaged.withUnsafeBytes { try txn.put(store.dbs.onboardingSessions, k, $0) }
            }
        }
        let before = try store.read { try $0.stats() }
        let batch = [
            simpleEvent(onboarding: 0, screen: 0, session: 20, time: 100),
            simpleEvent(onboarding: 1, screen: 0, session: 21, time: 101),
        ]
        // Caught, then another append: refused too, and the transaction ends with an error.
        var refused: StoreError? = nil
        let aborted = #expect(throws: StoreError.self) {
            try store.write { w in
                // Onboarding 0 sorts before 1: its new pair is written before the damaged chunk refuses the batch.
                do { try w.append(batch) } catch { refused = error as? StoreError }
                try w.append([simpleEvent(onboarding: 2, screen: 0, session: 22, time: 102)])
            }
        }
        #expect(refused?.kind == .corrupt)
        #expect(aborted?.kind == .corrupt)
        #expect(aborted.map { "\($0)".contains("being aborted") } == true, "\(String(describing: aborted))")
        // Caught and the closure returns: the first error ends the transaction.
        let returned = #expect(throws: StoreError.self) {
            try store.write { w in _ = try? w.append(batch) }
        }
        #expect(
            returned.map { "\($0)".contains("onboarding_sessions chunk") } == true, "\(String(describing: returned))")
        let (after, listed0, seqs) = try store.read { s in
            (try s.stats(), try s.sessions(ofOnboarding: "onb-0").map(\.session), try s.events(since: 0).map(\.seq))
        }
        #expect(listed0 == ["s99"], "the refused batch's pair of onboarding 0 is listed: \(listed0)")
        #expect(
            after.nextSeq == before.nextSeq && after.events == before.events && seqs == Array(0..<after.nextSeq),
            "seqs \(seqs), next_seq \(before.nextSeq) → \(after.nextSeq)")
        // The refusal marked the store; without the mark, an append that does not touch the damaged chunk is stored.
        #expect(store.damageFound != nil)
        store.clearDamageMark()
        try store.append([simpleEvent(onboarding: 2, screen: 0, session: 22, time: 102)])
        #expect(try store.read { try $0.stats().events } == before.events + 1)
    }
}
