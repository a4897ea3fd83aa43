import BoardwalkCodec
import BoardwalkGenerator
import BoardwalkModel
import Foundation
import Testing

@testable import BoardwalkStore

/// The writer's bounded caches of the append path (docs/storage.md, "How an append writes"): the
/// session-indexed filter of known (onboarding, session) pairs and the bucket-tail cache of the session index.
/// Shrunk to a few slots, so that sessions and buckets leave them within a small test, they must store exactly
/// what the full-size caches store.
@Suite struct PairCacheTests {
    /// Everything a reader can see of the pairs and sessions: per onboarding its sessions with first times, the
    /// spanning sessions with flags, the counters, and every session's events.
    struct Observed: Equatable {
        var sessionsByOnboarding: [String: [String]] = [:]
        var spanning: [String] = []
        var stats = ""
        var eventsBySession: [String: [UInt64]] = [:]
    }

    func observe(_ store: Store) throws -> Observed {
        try store.read { s throws in
            var out = Observed()
            let st = try s.stats()
            out.stats = "events \(st.events) sessions \(st.sessions) inferred \(st.inferredSessions)"
            for o in 0..<4 {
                out.sessionsByOnboarding["onb-\(o)"] = try s.sessions(ofOnboarding: "onb-\(o)").map {
                    "\($0.session)@\($0.firstTime.microseconds)"
                }.sorted()
            }
            out.spanning = try s.spanningSessionEntries().map {
                "\(s.string(for: $0.id)!):\($0.inSeveralOnboardings ? "o" : "")\($0.hasEventsWithoutPosition ? "u" : "")"
            }.sorted()
            for n in 0..<200 {
                let events = try s.events(inSession: "s\(n)").map(\.seq)
                if !events.isEmpty { out.eventsBySession["s\(n)"] = events }
            }
            return out
        }
    }

    /// Batches in which sessions come back after many newer ones, change onboarding, err outside any page and
    /// alternate between onboardings within a batch.
    func batches() -> [[Event]] {
        var rng = SplitMix64(seed: 44)
        var time: Int64 = 1_000_000
        var out: [[Event]] = []
        for b in 0..<12 {
            var batch: [Event] = []
            for _ in 0..<150 {
                time += Int64(1 + rng.next() % 3) * 1_000
                // Mostly recent sessions, sometimes an old one (long out of a 4-slot window).
                let newest = 20 + b * 15
                let session = rng.next() % 5 == 0 ? Int(rng.next() % UInt64(newest)) : newest - 1 - Int(rng.next() % 20)
                switch rng.next() % 40 {
                case 0:
                    batch.append(
                        Event(
                            time: Timestamp(microseconds: time), session: "s\(session)", meta: nil,
                            payload: .error(OnboardingError(domain: "d", code: 1, message: "m"))))
                case 1, 2:
                    batch.append(simpleEvent(onboarding: Int(rng.next() % 4), screen: 0, session: session, time: time))
                default:
                    // A session's own onboarding: mostly one per session.
                    batch.append(
                        simpleEvent(onboarding: session % 3, screen: Int(rng.next() % 4), session: session, time: time))
                }
            }
            out.append(batch)
        }
        return out
    }

    /// The same batches into a store with the default caches and into one whose caches hold one, four and
    /// sixteen slots: the same pairs, first times, spanning sessions, counters and session reads, and check()
    /// passes on all.
    @Test(arguments: [0, 2, 4])
    func tinyCachesStoreWhatFullOnesStore(bits: Int) throws {
        let full = temporaryDirectory(), tiny = temporaryDirectory()
        defer {
            removeDirectory(full)
            removeDirectory(tiny)
        }
        let a = try Store.open(at: full, options: .init(durability: .noSync))
        let b = try Store.open(at: tiny, options: .init(durability: .noSync))
        defer {
            a.close()
            b.close()
        }
        try b.withWriter { $0.useCaches(pairBits: bits) }
        for batch in batches() {
            let ra = try a.append(batch), rb = try b.append(batch)
            #expect(ra == rb)
        }
        let expected = try observe(a)
        #expect(try observe(b) == expected)
        #expect(
            expected.spanning.contains { $0.hasSuffix(":o") || $0.hasSuffix(":ou") },
            "the batches make sessions span onboardings")
        #expect(expected.spanning.contains { $0.hasSuffix("u") }, "and have events without a position")
        for store in [a, b] {
            let report = try store.check()
            #expect(report.isOK, "\(report)")
        }
    }

    /// A session that left the window (its slot taken by newer sessions) and comes back in its onboarding gets no
    /// second entry and is not counted again; back in another onboarding, it is listed as spanning.
    @Test func aSessionBackAfterLeavingTheWindowIsKnownByTheStore() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .init(durability: .noSync))
        defer { store.close() }
        try store.withWriter { $0.useCaches(pairBits: 1) }
        try store.append([simpleEvent(onboarding: 1, screen: 0, session: 0, time: 1_000)])
        try store.append((1..<10).map { simpleEvent(onboarding: 1, screen: 0, session: $0, time: 2_000 + Int64($0)) })
        try store.append([simpleEvent(onboarding: 1, screen: 1, session: 0, time: 3_000)])
        try store.read { s throws in
            #expect(try s.stats().sessions == 10)
            #expect(
                try s.sessions(ofOnboarding: "onb-1").filter { $0.session == "s0" }.map(\.firstTime.microseconds) == [
                    1_000
                ])
            #expect(try s.spanningSessions().isEmpty)
        }
        try store.append([simpleEvent(onboarding: 2, screen: 0, session: 0, time: 4_000)])
        try store.read { s throws in
            #expect(try s.stats().sessions == 10)
            #expect(try s.spanningSessions().map { s.string(for: $0)! } == ["s0"])
        }
        #expect(try store.check().isOK)
    }

    /// A session alternating between two onboardings within one batch (each event takes the other pair's slot)
    /// and again in the next batch: one entry per onboarding, with the time of the pair's first event in arrival
    /// order, one session, listed as spanning.
    @Test func aSessionAlternatingBetweenOnboardingsInABatch() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .init(durability: .noSync))
        defer { store.close() }
        // Arrival order is not time order here: the pair's first event in arrival order is at 5 000.
        try store.append(
            [5_000, 1_000, 7_000, 2_000, 9_000, 3_000].enumerated().map { i, t in
                simpleEvent(onboarding: 1 + i % 2, screen: 0, session: 1, time: Int64(t))
            })
        try store.append(
            [10_000, 11_000, 12_000].enumerated().map { i, t in
                simpleEvent(onboarding: 1 + i % 2, screen: 1, session: 1, time: Int64(t))
            })
        try store.read { s throws in
            #expect(try s.stats().sessions == 1)
            #expect(try s.sessions(ofOnboarding: "onb-1").map(\.firstTime.microseconds) == [5_000])
            #expect(try s.sessions(ofOnboarding: "onb-2").map(\.firstTime.microseconds) == [1_000])
            #expect(try s.spanningSessionEntries().map(\.inSeveralOnboardings) == [true])
            #expect(try s.events(inSession: "s1").count == 9)
        }
        #expect(try store.check().isOK)
    }

    /// A batch refused part-way inside `write {}` (an event the encoder cannot hold) leaves no pair in the filter:
    /// the pair of its first event is not stored, so a later batch of the same transaction must store it. The
    /// refused batch's new strings are stored all the same and the dictionary stays dense (a reopened writer
    /// reloads it and appends after it).
    @Test func aRefusedBatchLeavesNoPairBehind() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        do {
            let store = try Store.open(at: dir, options: .init(durability: .noSync))
            var bad = simpleEvent(onboarding: 0, screen: 0, session: 9, time: 300)
            bad.meta!.screenIndex = 70_000
            try store.write { w in
                #expect(throws: (any Error).self) {
                    try w.append([simpleEvent(onboarding: 1, screen: 0, session: 1, time: 100), bad])
                }
                try w.append([simpleEvent(onboarding: 1, screen: 0, session: 1, time: 200)])
            }
            try store.read { s throws in
                #expect(try s.stats().sessions == 1)
                #expect(try s.sessions(ofOnboarding: "onb-1").map(\.firstTime.microseconds) == [200])
            }
            let report = try store.check()
            #expect(report.isOK, "\(report)")
            // An aborted transaction takes its pairs back too.
            struct Stop: Error {}
            #expect(throws: Stop.self) {
                try store.write { w in
                    try w.append([simpleEvent(onboarding: 2, screen: 0, session: 1, time: 400)])
                    throw Stop()
                }
            }
            try store.append([simpleEvent(onboarding: 2, screen: 0, session: 1, time: 500)])
            try store.read { s throws in
                #expect(try s.sessions(ofOnboarding: "onb-2").map(\.firstTime.microseconds) == [500])
                #expect(try s.spanningSessions().count == 1)
            }
            #expect(try store.check().isOK)
            store.close()
        }
        let store = try Store.open(at: dir, options: .init(durability: .noSync))
        defer { store.close() }
        try store.append([simpleEvent(onboarding: 3, screen: 0, session: 2, time: 600)])
        try store.read { s throws in
            #expect(try s.events(inSession: "s2").count == 1)
            #expect(try s.id(of: "onb-3") != nil)
        }
        #expect(try store.check().isOK)
    }

    /// The filter alone: a slot per session id's low bits; a pair is known only while its slot holds it.
    @Test func theFilterKnowsAPairOnlyWhileItsSlotHoldsIt() {
        var f = SessionPairFilter(bits: 2)
        let a = UInt64(7) << 32 | 5, b = UInt64(8) << 32 | 5, c = UInt64(7) << 32 | 9  // 5 and 9 share slot 1
        #expect(!f.contains(a))
        f.note(a)
        #expect(f.contains(a) && !f.contains(b) && !f.contains(c))
        f.note(c)
        #expect(!f.contains(a) && f.contains(c))
        f.forget(a)  // not there: nothing changes
        #expect(f.contains(c))
        f.forget(c)
        #expect(!f.contains(c))
        // An empty slot matches no pair of its own, including onboarding 0.
        for session in 0..<8 { #expect(!f.contains(UInt64(session))) }
        var one = SessionPairFilter(bits: 0)
        one.note(3)
        #expect(one.contains(3) && !one.contains(0) && !one.contains(.max >> 32))
    }
}

/// A refused batch whose new strings fill the map: the caller catches the encoder's error and
/// goes on in the same transaction, as documented; the flush of the refused batch's strings hits `MDB_MAP_FULL`,
/// which must reach `Store.write` so that it grows the map and runs the body again, instead of leaving a
/// transaction that refuses every later call.
@Test func aRefusedBatchThatFillsTheMapGrowsIt() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let store = try Store.open(at: dir, options: .init(durability: .noSync, initialMapSize: 1 << 16))
    defer { store.close() }
    var bad = simpleEvent(onboarding: 0, screen: 0, session: 9, time: 300)
    bad.meta!.screenIndex = 70_000  // beyond Meta.maxScreenIndex: the encoder refuses it
    let many = (0..<20_000).map {
        simpleEvent(
            onboarding: 1, screen: 0, session: 1_000 + $0, time: 100 + Int64($0),
            profile: "profile-\($0)-xxxxxxxxxxxxxxxxxxxxxxxx")
    }
    var runs = 0
    var refused = 0
    try store.write { w in
        runs += 1
        do {
            try w.append(many + [bad])
        } catch let error as StoreError where error.underlying is EncodingError {
            refused += 1
        }
        try w.append([simpleEvent(onboarding: 1, screen: 0, session: 1, time: 200)])
    }
    #expect(runs > 1, "the map never grew: the body ran once")
    #expect(refused >= 1, "the encoder never refused the bad event")
    try store.read { s throws in
        #expect(try s.stats().events == 1)
        // The refused batch's strings were stored (ids stay dense and the dictionary matches).
        #expect(try s.check().isOK)
    }
}
