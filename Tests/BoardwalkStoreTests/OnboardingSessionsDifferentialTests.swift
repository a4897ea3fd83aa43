import BoardwalkCodec
import BoardwalkGenerator
import BoardwalkModel
import BoardwalkStoreFormat
import Foundation
import Testing

@testable import BoardwalkStore

/// `onboarding_sessions` chunks (format 6) against a simple model: per onboarding, a dictionary session → time of
/// the pair's first listing in arrival order. Random batches of raw pairs go through the writer's merge
/// (``PairChunkMerge/mergeAll(_:_:_:)``, what `writeOnboardingSessions` runs) with the extremes of both halves of
/// a pair; random event batches go through `Store.append` with a tiny map (so batches are redone after
/// `MDB_MAP_FULL`), tiny writer caches, refused batches and aborted transactions.
@Suite struct OnboardingSessionsDifferentialTests {
    typealias Chunk = (onboarding: UInt32, first: UInt32, bytes: Int, entries: [(session: UInt32, time: UInt64)])

    static func chunks(_ store: Store) throws -> [Chunk] {
        try store.env.transaction(write: false) { txn in
            try txn.withCursor(store.dbs.onboardingSessions) { c in
                var out: [Chunk] = []
                var found = try c.first()
                while found {
                    let key = try OnboardingSessions.key(c)
                    var entries: [(session: UInt32, time: UInt64)] = []
                    try OnboardingSessions.forEachEntry(c, key: key) { s, t in entries.append((s, t)) }
                    out.append((key.onboarding, key.session, c.value.count, entries))
                    found = try c.next()
                }
                return out
            }
        }
    }

    /// The chunks hold exactly `model`, each within the size, starting at its key, apart from the next.
    static func expectMatches(_ store: Store, _ model: [UInt32: [UInt32: UInt64]], _ context: String) throws {
        let stored = try chunks(store)
        var listed: [UInt32: [UInt32: UInt64]] = [:]
        var repeats = 0
        for (i, chunk) in stored.enumerated() {
            #expect(chunk.bytes <= Layout.sessionPairChunkTarget, "\(context): chunk \(i) has \(chunk.bytes) bytes")
            #expect(chunk.entries.first?.session == chunk.first, "\(context): chunk \(i)")
            if i > 0, stored[i - 1].onboarding == chunk.onboarding {
                #expect(
                    stored[i - 1].entries.last!.session < chunk.first, "\(context): chunk \(i) overlaps the one before")
            }
            for e in chunk.entries {
                if listed[chunk.onboarding, default: [:]].updateValue(e.time, forKey: e.session) != nil { repeats += 1 }
            }
        }
        #expect(repeats == 0, "\(context): \(repeats) pairs listed twice")
        #expect(listed == model, "\(context): the chunks differ from the model")
    }

    /// One batch of pairs through the production merge, in one write transaction; the pairs new to the store.
    static func merge(
        _ store: Store, _ pairs: [(pair: UInt64, timeBits: UInt64)], builder: inout SessionPairChunkBuilder
    ) throws
        -> [UInt64]
    {
        let key = UnsafeMutableRawPointer.allocate(byteCount: 8, alignment: 8)
        defer { key.deallocate() }
        var merge = PairChunkMerge(builder: builder, key: key)
        defer { builder = merge.builder }
        return try store.env.transaction(write: true) { txn in
            try merge.mergeAll(txn, store.dbs, WriterState.radixSorted(pairs) { $0.pair })
        }
    }

    /// Random batches of raw pairs: onboardings 0, 1, 0xFFFF_FFFE and the no-onboarding key 0xFFFF_FFFF; sessions
    /// new past the last, old ones between stored ones or before the first chunk, chunk keys themselves, sessions
    /// 0 and up to 0xFFFF_FFFE, repeats within a batch; times close together or anywhere in 64 bits (ten-byte
    /// deltas, so chunks of a few entries split). After every batch the chunks hold exactly the model, the pairs
    /// reported new are exactly those the model did not have, and `contains` and the snapshot's walk agree.
    @Test(arguments: [UInt64(1), 2, 3])
    func randomBatchesMatchTheModel(seed: UInt64) throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .init(durability: .noSync))
        defer { store.close() }
        var rng = SplitMix64(seed: seed)
        let onboardings: [UInt32] = [0, 1, 0xFFFF_FFFE, 0xFFFF_FFFF]
        var model: [UInt32: [UInt32: UInt64]] = [:]
        var newest: [UInt32: UInt32] = [:]
        var builder = SessionPairChunkBuilder(capacity: 64)
        var clock: UInt64 = 0x8000_0000_0000_0000 | 1_700_000_000_000_000
        var inserts = 0, appends = 0
        for batch in 0..<40 {
            var pairs: [(pair: UInt64, timeBits: UInt64)] = []
            let wild = rng.next() % 4 == 0
            for _ in 0..<Int(1 + rng.next() % 300) {
                let onboarding = onboardings[Int(rng.next() % UInt64(onboardings.count))]
                let top = newest[onboarding] ?? 0
                let session: UInt32
                switch rng.next() % 10 {
                case 0, 1, 2, 3:  // new, past the newest
                    session = top &+ UInt32(1 + rng.next() % 3)
                    newest[onboarding] = max(top, session)
                case 4, 5:  // anywhere below the newest
                    session = UInt32(truncatingIfNeeded: rng.next() % (UInt64(top) + 1))
                case 6:  // a stored chunk's key, or a listed session
                    session = model[onboarding]?.keys.randomElement(using: &rng) ?? 0
                case 7:
                    session = UInt32.max - 1 - UInt32(rng.next() % 40)
                case 8:
                    session = UInt32(rng.next() % 5)
                default:  // a session far past the newest, in the middle of the range
                    session = UInt32(truncatingIfNeeded: rng.next() % (1 << 31)) | (1 << 30)
                }
                clock &+= 1 + rng.next() % 60_000_000
                let time =
                    wild && rng.next() % 2 == 0
                    ? rng.next() : clock &- (rng.next() % 3 == 0 ? rng.next() % 100_000_000 : 0)
                pairs.append((UInt64(onboarding) << 32 | UInt64(session), time))
                // Now and then the same pair again later in the batch (its filter slot taken in between).
                if rng.next() % 8 == 0 { pairs.append((pairs.last!.pair, rng.next())) }
            }
            var expectedNew = Set<UInt64>()
            for p in pairs {
                let onboarding = UInt32(truncatingIfNeeded: p.pair >> 32), session = UInt32(truncatingIfNeeded: p.pair)
                if model[onboarding, default: [:]][session] == nil {
                    model[onboarding, default: [:]][session] = p.timeBits
                    expectedNew.insert(p.pair)
                    if let last = newest[onboarding], session < last { inserts += 1 } else { appends += 1 }
                }
            }
            let inserted = try Self.merge(store, pairs, builder: &builder)
            #expect(inserted == inserted.sorted(), "batch \(batch): new pairs out of order")
            #expect(inserted.count == expectedNew.count && Set(inserted) == expectedNew, "batch \(batch): new pairs")
            try Self.expectMatches(store, model, "seed \(seed) batch \(batch)")
            // contains and the snapshot's walk, for listed pairs and their neighbours.
            try store.env.transaction(write: false) { txn in
                let snapshot = try Snapshot(txn: txn, dbs: store.dbs, cache: store.sharedStrings)
                for onboarding in onboardings {
                    var walked: [(UInt32, UInt64)] = []
                    try snapshot.forEachOnboardingSession(onboarding) { walked.append(($0, $1)) }
                    let sessions = (model[onboarding] ?? [:]).sorted { $0.key < $1.key }
                    #expect(walked.map(\.0) == sessions.map(\.key), "batch \(batch) onboarding \(onboarding)")
                    #expect(walked.map(\.1) == sessions.map(\.value), "batch \(batch) onboarding \(onboarding)")
                    for (s, _) in sessions.shuffled(using: &rng).prefix(20) {
                        #expect(try OnboardingSessions.contains(txn, store.dbs, onboarding: onboarding, session: s))
                        for probe in [s &- 1, s &+ 1] where probe != UInt32.max {
                            let listed = model[onboarding]?[probe] != nil
                            #expect(
                                try OnboardingSessions.contains(txn, store.dbs, onboarding: onboarding, session: probe)
                                    == listed,
                                "batch \(batch) onboarding \(onboarding) session \(probe)")
                        }
                    }
                }
            }
        }
        #expect(inserts > 500 && appends > 500, "\(inserts) inserted between stored sessions, \(appends) appended")
        #expect(try Self.chunks(store).count > 40)
    }

    /// What a reader should see, kept from the events by arrival: per onboarding name ("" for no position) each
    /// session's first time, and the sessions.
    struct EventModel {
        var pairs: [String: [String: Int64]] = [:]
        var sessions = Set<String>()

        mutating func add(_ batch: [Event]) {
            for e in batch {
                let onboarding = e.meta?.onboardingID ?? ""
                if pairs[onboarding, default: [:]][e.session!] == nil {
                    pairs[onboarding, default: [:]][e.session!] = e.time.microseconds
                }
                sessions.insert(e.session!)
            }
        }

        /// "session:flags" of the sessions under two or more onboarding keys, sorted.
        var spanning: [String] {
            var keys: [String: (real: Int, unpositioned: Bool)] = [:]
            for (onboarding, sessions) in pairs {
                for session in sessions.keys {
                    if onboarding.isEmpty {
                        keys[session, default: (0, false)].unpositioned = true
                    } else {
                        keys[session, default: (0, false)].real += 1
                    }
                }
            }
            return keys.compactMap { s, k in
                let several = k.real >= 2, unpositioned = k.unpositioned && k.real >= 1
                return several || unpositioned ? "\(s):\(several ? "o" : "")\(unpositioned ? "u" : "")" : nil
            }.sorted()
        }
    }

    static func expectStore(_ store: Store, matches model: EventModel, _ context: String) throws {
        try store.read { s throws in
            #expect(try s.stats().sessions == UInt64(model.sessions.count), "\(context): sessions counter")
            let spanning = try s.spanningSessionEntries().map {
                "\(s.string(for: $0.id)!):\($0.inSeveralOnboardings ? "o" : "")\($0.hasEventsWithoutPosition ? "u" : "")"
            }.sorted()
            #expect(spanning == model.spanning, "\(context): spanning sessions")
            let spanningNames = Set(model.spanning.map { String($0.prefix { $0 != ":" }) })
            for (onboarding, sessions) in model.pairs {
                let id = onboarding.isEmpty ? RecordFormat.noOnboarding : try #require(try s.id(of: onboarding))
                let listed = try s.sessions(ofOnboarding: id)
                #expect(listed.map(\.id) == listed.map(\.id).sorted(), "\(context): \(onboarding) out of order")
                let got = Dictionary(
                    listed.map { ($0.session, $0.firstTime.microseconds) }, uniquingKeysWith: { a, _ in a })
                #expect(listed.count == got.count && got == sessions, "\(context): sessions of '\(onboarding)'")
                let spanningHere = try s.spanningSessions(ofOnboarding: id).map { s.string(for: $0)! }
                #expect(
                    Set(spanningHere) == Set(sessions.keys).intersection(spanningNames),
                    "\(context): spanning sessions of '\(onboarding)'")
            }
        }
    }

    /// Random event batches through `Store.append`: sessions interned in a scrambled order first (so that they join
    /// onboardings out of id order, between stored sessions and before an onboarding's first chunk), then new ones;
    /// events without a position; first events not in time order; batches refused part-way inside `write {}` and
    /// transactions aborted (neither leaves anything); a map of 64 KiB (batches redone after `MDB_MAP_FULL`); the
    /// store reopened (a cold writer); and, for one argument, writer caches of two slots. After every batch the
    /// store's sessions per onboarding, first times, counter and spanning sessions are the model's; `check()` passes.
    @Test(arguments: [(UInt64(7), false), (8, true)])
    func randomEventBatchesMatchTheModel(seed: UInt64, tinyCaches: Bool) throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let options = Store.Options(durability: .noSync, initialMapSize: 1 << 16)
        var store = try Store.open(at: dir, options: options)
        defer { store.close() }
        if tinyCaches { try store.withWriter { $0.useCaches(pairBits: 1) } }
        var rng = SplitMix64(seed: seed)
        var model = EventModel()
        // Sessions s0..<s400 interned in a scrambled order, in an onboarding of their own.
        let warm = (0..<400).shuffled(using: &rng).enumerated().map { i, s in
            simpleEvent(onboarding: 9, screen: 0, session: s, time: Int64(i))
        }
        try store.append(warm)
        model.add(warm)
        let startMap = store.mapSize
        var fresh = 400
        for batch in 0..<30 {
            var events: [Event] = []
            for _ in 0..<Int(1 + rng.next() % 400) {
                let session: Int
                switch rng.next() % 4 {
                case 0:
                    session = fresh
                    fresh += 1
                case 1: session = max(0, fresh - 1 - Int(rng.next() % 30))
                default: session = Int(rng.next() % UInt64(fresh))
                }
                let time = 1_000_000 + Int64(batch) * 1_000_000 + Int64(rng.next() % 2_000_000)
                if rng.next() % 10 == 0 {
                    events.append(
                        Event(
                            time: Timestamp(microseconds: time), session: "s\(session)", meta: nil,
                            payload: .error(OnboardingError(domain: "d", code: 1, message: "m"))))
                } else {
                    events.append(
                        simpleEvent(
                            onboarding: Int(rng.next() % 4), screen: Int(rng.next() % 3), session: session, time: time))
                }
            }
            if batch == 15 {
                // A cold writer: its caches empty, the chunks as stored.
                store.close()
                store = try Store.open(at: dir, options: options)
                if tinyCaches { try store.withWriter { $0.useCaches(pairBits: 1) } }
            }
            switch rng.next() % 6 {
            case 0:
                // Refused part-way, the refusal caught inside the transaction, then the batch again.
                var bad = simpleEvent(onboarding: 0, screen: 0, session: fresh + 1_000, time: 5)
                bad.meta!.screenIndex = 70_000
                let cut = Int(rng.next() % UInt64(events.count))
                try store.write { w in
                    // Only the refusal is caught: MDB_MAP_FULL must reach `write`, which grows the map and runs this again.
                    do {
                        try w.append(Array(events[..<cut]) + [bad] + Array(events[cut...]))
                        Issue.record("the batch with an unstorable event was stored")
                    } catch let error as StoreError where error.batchIndex != nil {
                        #expect(error.kind == .invalidArgument)
                    }
                    try w.append(events)
                }
            case 1:
                struct Stop: Error {}
                #expect(throws: Stop.self) {
                    try store.write { w in
                        try w.append(events)
                        throw Stop()
                    }
                }
                try store.append(events)
            default:
                try store.append(events)
            }
            model.add(events)
            try Self.expectStore(store, matches: model, "seed \(seed) batch \(batch)")
        }
        #expect(store.mapSize > startMap, "the map never grew, so no batch was redone")
        let report = try store.check()
        #expect(report.isOK, "\(report)")
        let chunks = try Self.chunks(store)
        #expect(chunks.allSatisfy { $0.bytes <= Layout.sessionPairChunkTarget })
        #expect(chunks.count > model.pairs.count, "\(chunks.count) chunks for \(model.pairs.count) onboardings")
    }

    /// Pairs arriving at random among the sessions in flight (as the no-position pairs of errors, or second
    /// onboardings, do: in no id order) are inserted between stored ones; chunks that overflow are cut evenly, so
    /// that the next insertions find room. Cut full instead, each insertion into a full chunk split off its last
    /// entry or two into a chunk of its own: 20 000 draws among the 20 000 newest ids (14 757 pairs) left 523
    /// chunks of 150 bytes on average (measured); cut evenly, 217 chunks of 357 bytes.
    @Test func insertionsAmongSessionsInFlightKeepChunksFilled() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .init(durability: .noSync))
        defer { store.close() }
        var rng = SplitMix64(seed: 5)
        var builder = SessionPairChunkBuilder()
        var model: [UInt32: [UInt32: UInt64]] = [:]
        var next: UInt32 = 100_000
        var time: UInt64 = 1 << 63
        for _ in 0..<20 {
            var pairs: [(pair: UInt64, timeBits: UInt64)] = []
            for _ in 0..<1_000 {
                time += 20_000
                let session = next - UInt32(rng.next() % 20_000)
                next += 1
                if model[0xFFFF_FFFF, default: [:]][session] == nil {
                    model[0xFFFF_FFFF, default: [:]][session] = time
                    pairs.append((UInt64(0xFFFF_FFFF) << 32 | UInt64(session), time))
                }
            }
            _ = try Self.merge(store, pairs, builder: &builder)
        }
        try Self.expectMatches(store, model, "insertions in flight")
        let chunks = try Self.chunks(store)
        let bytes = chunks.reduce(0) { $0 + $1.bytes }
        #expect(bytes / chunks.count >= 250, "\(chunks.count) chunks of \(bytes / chunks.count) bytes on average")
    }
}
