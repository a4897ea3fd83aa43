import BoardwalkCodec
import BoardwalkGenerator
import BoardwalkModel
import Foundation
import Testing

@testable import BoardwalkStore

/// The store compared with a simple in-memory model: what goes in comes out, in the documented orders.
@Suite struct StoreRoundTripTests {
    /// Appends arbitrary events in batches; returns them as the store should hold them (seq → event).
    func fill(_ store: Store, seed: UInt64, count: Int, batch: Int) throws -> [UInt64: Event] {
        var random = RandomEvents(seed: seed)
        var expected: [UInt64: Event] = [:]
        var seen = Set<String>()
        var pending: [Event] = []
        func flush() throws {
            let result = try store.append(pending)
            var seq = result.seqs.lowerBound
            for e in pending {
                let e = Store.normalized(e)  // what the store keeps (semantics rule 11)
                if let id = e.eventID {
                    let key = "\(e.time.microseconds)|\(id)"
                    if seen.contains(key) { continue }
                    seen.insert(key)
                }
                expected[seq] = e
                seq += 1
            }
            #expect(seq == result.seqs.upperBound)
            pending.removeAll()
        }
        for _ in 0..<count {
            pending.append(random.event())
            if pending.count == batch { try flush() }
        }
        try flush()
        return expected
    }

    /// The stored form of an event: an inferred session is named `inferred:<seq>`.
    func same(_ stored: Event, _ original: Event) -> Bool {
        var o = original
        if o.session == nil {
            guard let s = stored.session, s.hasPrefix("inferred:") else { return false }
            o.session = s
        }
        return stored == o
    }

    @Test func everyEventComesBackWithItsSeq() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir)
        let expected = try fill(store, seed: 1, count: 3000, batch: 700)
        let all = try store.read { try $0.allEvents() }
        #expect(all.count == expected.count)
        for stored in all {
            guard let original = expected[stored.seq] else {
                Issue.record("unexpected seq \(stored.seq)")
                continue
            }
            #expect(same(stored.event, original), "seq \(stored.seq)")
        }
        let report = try store.check()
        #expect(report.isOK, "\(report)")
    }

    @Test func scansFollowTheKeyOrderAndFilters() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir)
        var events: [Event] = []
        // 3 onboardings × 5 screens × 40 sessions, times interleaved and sometimes equal.
        for i in 0..<2000 {
            events.append(
                simpleEvent(
                    onboarding: i % 3, screen: (i / 3) % 5, session: i % 40, time: 1_000_000 + Int64(i / 2) * 10))
        }
        try store.append(events[..<1000])
        try store.append(events[1000...])
        let model = events.enumerated().map { StoredEvent(seq: UInt64($0.offset), event: $0.element) }
        func keyOrder(_ a: StoredEvent, _ b: StoredEvent) -> Bool {
            let x = (a.event.meta!.screenIndex, a.event.time, a.seq)
            let y = (b.event.meta!.screenIndex, b.event.time, b.seq)
            return x < y
        }
        try store.read { s throws in
            let window = Timestamp(microseconds: 1_002_000)..<Timestamp(microseconds: 1_005_000)
            let got = try s.events(onboarding: "onb-1", screens: 1...3, time: window)
            let want = model.filter {
                $0.event.meta!.onboardingID == "onb-1" && (1...3).contains($0.event.meta!.screenIndex)
                    && window.contains($0.event.time)
            }.sorted(by: keyOrder)
            #expect(got == want)
            #expect(!got.isEmpty)

            let whole = try s.events(onboarding: "onb-2")
            #expect(whole == model.filter { $0.event.meta!.onboardingID == "onb-2" }.sorted(by: keyOrder))
            #expect(try s.events(onboarding: "onb-2", limit: 7) == Array(whole.prefix(7)))
            #expect(try s.events(onboarding: "nope").isEmpty)

            let session = try s.events(inSession: "s7")
            #expect(
                session
                    == model.filter { $0.event.session == "s7" }.sorted {
                        ($0.event.time, $0.seq) < ($1.event.time, $1.seq)
                    })

            #expect(try s.events(since: 1234) == Array(model[1234...]))
            #expect(try s.events(since: 0, limit: 5) == Array(model[..<5]))
            #expect(try s.events(since: 5000).isEmpty)

            let sessions = try s.sessions(ofOnboarding: "onb-0")
            #expect(
                Set(sessions.map(\.session))
                    == Set(model.filter { $0.event.meta!.onboardingID == "onb-0" }.map { $0.event.session! }))

            let stats = try s.stats()
            #expect(stats.events == 2000)
            #expect(stats.onboardings == 3)
            // Session i % 40 meets onboarding i % 3 for every pair: 120 (onboarding, session) pairs, 40 sessions.
            #expect(stats.sessions == 40)
            #expect(stats.eventsByKind[.analytics] == 2000)
            #expect(
                stats.timeRange == Timestamp(microseconds: 1_000_000)...Timestamp(microseconds: 1_000_000 + 999 * 10))
            #expect(stats.nextSeq == 2000)
            let onboardings = try s.onboardings()
            #expect(onboardings.map(\.onboardingID) == ["onb-0", "onb-1", "onb-2"])
            #expect(onboardings.map(\.events).reduce(0, +) == 2000)
            #expect(onboardings.allSatisfy { $0.maxTotalScreens == 10 })
        }
        #expect(try store.check().isOK)
    }

    /// Blocks of one group from different batches overlap in time when batches arrive out of time order,
    /// and a batch spanning more than a block's span is split: every scan must still come out in its
    /// documented order, and time ranges must find events in blocks that start before the range.
    @Test(arguments: [1, 7])
    func overlappingAndSplitBlocksScanInOrder(seed: UInt64) throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir)
        var rng = SplitMix64(seed: seed)
        // "hour" is one block span (12 hours): what matters is how times relate to the span.
        let hour = Layout.blockSpan
        var events: [Event] = []
        var model: [StoredEvent] = []
        // 12 batches with times anywhere in 5 hours (so blocks overlap across batches and split inside
        // them), some times repeated; two onboardings, three screens, some events without meta.
        for batch in 0..<12 {
            var b: [Event] = []
            for _ in 0..<150 {
                let time =
                    Int64(rng.next() % UInt64(5 * hour)) / 1000 * 1000 + (batch % 2 == 0 ? 0 : Int64(rng.next() % 3))
                var e = simpleEvent(
                    onboarding: Int(rng.next() % 2), screen: Int(rng.next() % 3), session: Int(rng.next() % 25),
                    time: time)
                if rng.next() % 20 == 0 {
                    e.meta = nil; e.payload = .error(OnboardingError(domain: "d", code: 1, message: "m"))
                }
                b.append(e)
            }
            let result = try store.append(b)
            for (i, e) in b.enumerated() {
                model.append(StoredEvent(seq: result.seqs.lowerBound + UInt64(i), event: e))
            }
            events += b
        }
        func group(_ e: Event) -> (UInt32, Int) {
            // The store orders onboardings by string id (first seen), events without meta last.
            guard let meta = e.meta else { return (.max, .max) }
            return (meta.onboardingID == events.first { $0.meta != nil }!.meta!.onboardingID ? 0 : 1, meta.screenIndex)
        }
        func keyOrder(_ a: StoredEvent, _ b: StoredEvent) -> Bool {
            let (ga, gb) = (group(a.event), group(b.event))
            if ga != gb { return ga < gb }
            return (a.event.time, a.seq) < (b.event.time, b.seq)
        }
        try store.read { s throws in
            #expect(try s.allEvents() == model.sorted(by: keyOrder))
            for onboarding in ["onb-0", "onb-1"] {
                for window in [
                    Timestamp(microseconds: hour + 17)..<Timestamp(microseconds: 3 * hour),
                    Timestamp(microseconds: 0)..<Timestamp(microseconds: 1),
                ] {
                    let got = try s.events(onboarding: onboarding, screens: 1...2, time: window)
                    let want = model.filter {
                        $0.event.meta?.onboardingID == onboarding && (1...2).contains($0.event.meta!.screenIndex)
                            && window.contains($0.event.time)
                    }.sorted(by: keyOrder)
                    #expect(got == want)
                }
            }
            let noMeta = try s.allEvents().filter { $0.event.meta == nil }
            #expect(
                noMeta
                    == model.filter { $0.event.meta == nil }.sorted {
                        ($0.event.time, $0.seq) < ($1.event.time, $1.seq)
                    })
            for session in ["s3", "s11"] {
                let want = model.filter { $0.event.session == session }.sorted {
                    ($0.event.time, $0.seq) < ($1.event.time, $1.seq)
                }
                #expect(try s.events(inSession: session) == want)
                let window = Timestamp(microseconds: 2 * hour)..<Timestamp(microseconds: 4 * hour)
                var got: [StoredEvent] = []
                try s.forEachEvent(inSession: session, time: window) {
                    got.append(try s.owned($0)); return true
                }
                #expect(got == want.filter { window.contains($0.event.time) })
            }
            #expect(try s.events(since: 777) == Array(model[777...]))
        }
        let report = try store.check()
        #expect(report.isOK, "\(report)")
        // More blocks than (group, batch) pairs (7 groups × 12 batches): batches were split at the span.
        #expect(report.blocksChecked > 7 * 12 && report.eventsChecked == 1800)
    }

    @Test func borrowedViewsCarryTheKeyFields() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir)
        try store.append([simpleEvent(onboarding: 4, screen: 3, session: 9, time: 77)])
        try store.read { s throws in
            var seen = 0
            try s.forEachEvent(onboarding: "onb-4") { view in
                seen += 1
                #expect(view.seq == 0)
                #expect(view.time == Timestamp(microseconds: 77))
                #expect(view.screenIndex == 3)
                #expect(view.kind == .analytics)
                #expect(view.onboarding.flatMap(s.string(for:)) == "onb-4")
                #expect(view.session.flatMap(s.string(for:)) == "s9")
                return true
            }
            #expect(seen == 1)
        }
    }

    @Test func duplicatesAreSkippedAndCounted() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir)
        let batch = (0..<10).map {
            simpleEvent(onboarding: 0, screen: $0, session: 1, time: Int64($0), eventID: "e\($0)")
        }
        #expect(try store.append(batch).appended == 10)
        let again = try store.append(
            batch + [simpleEvent(onboarding: 0, screen: 0, session: 1, time: 50, eventID: "new")])
        #expect(again.appended == 1)
        #expect(again.duplicates == 10)
        // The same id at another time is another event; twice in one batch is one event.
        let withinBatch = [
            simpleEvent(onboarding: 0, screen: 0, session: 1, time: 51, eventID: "e0"),
            simpleEvent(onboarding: 0, screen: 0, session: 1, time: 51, eventID: "e0"),
        ]
        let third = try store.append(withinBatch)
        #expect(third.appended == 1 && third.duplicates == 1)
        let stats = try store.read { try $0.stats() }
        #expect(stats.events == 12)
        #expect(stats.duplicatesSkipped == 11)
        #expect(try store.check().isOK)
    }

    /// A duplicate has the same event id, time, onboarding and screen as a stored event (found
    /// among the stored blocks of its group). Covers events without `meta`, UUID ids in both cases, a resend
    /// that arrives after later events, a reopened store, and two appends in one transaction.
    @Test func duplicatesAreFoundInStoredBlocks() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let uuid = "3f2504e0-4f89-11d3-9a0c-0305e82c3301"
        func noMeta(_ time: Int64, _ id: String) -> Event {
            Event(
                time: Timestamp(microseconds: time), session: "s", eventID: id, meta: nil,
                payload: .error(OnboardingError(domain: "d", code: 1, message: "m")))
        }
        do {
            let store = try Store.open(at: dir)
            let first =
                (0..<20).map {
                    simpleEvent(
                        onboarding: $0 % 3, screen: $0 % 4, session: $0, time: Int64($0) * 1_000_000, eventID: "e\($0)")
                }
                + [
                    noMeta(5, "n1"), noMeta(6, uuid),
                    simpleEvent(onboarding: 0, screen: 0, session: 1, time: 7, eventID: uuid),
                ]
            #expect(try store.append(first).appended == 23)
            // Later events, then the first batch again: every resent event is found, in blocks of any age.
            #expect(
                try store.append(
                    (20..<40).map {
                        simpleEvent(onboarding: $0 % 3, screen: $0 % 4, session: $0, time: Int64($0) * 1_000_000)
                    }
                ).appended == 20)
            let again = try store.append(first)
            #expect(again.appended == 0 && again.duplicates == 23)
            // Same id and time, but another screen, or the UUID in upper case: other events.
            let other = [
                simpleEvent(onboarding: 0, screen: 1, session: 0, time: 0, eventID: "e0"), noMeta(6, uuid.uppercased()),
            ]
            #expect(try store.append(other).appended == 2)
        }
        let store = try Store.open(at: dir)
        // After a reopen (nothing cached), and two appends in one transaction.
        let results = try store.write { w in
            [try w.append([noMeta(5, "n1"), noMeta(8, "n2")]), try w.append([noMeta(8, "n2"), noMeta(9, "n3")])]
        }
        #expect(results.map(\.duplicates) == [1, 1])
        #expect(try store.read { try $0.stats() }.events == 47)
        #expect(try store.check().isOK)
    }

    @Test func reopenKeepsEverythingAndContinuesSeqs() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        do {
            let store = try Store.open(at: dir)
            try store.append(
                (0..<100).map { simpleEvent(onboarding: 1, screen: 0, session: $0, time: Int64($0)) },
                checkpoint: Checkpoint(key: "input", value: [1, 2, 3]))
            store.close()
        }
        let store = try Store.open(at: dir)
        let result = try store.append([simpleEvent(onboarding: 2, screen: 1, session: 5, time: 1000)])
        #expect(result.seqs == 100..<101)
        try store.read { s throws in
            #expect(try s.stats().events == 101)
            #expect(try s.checkpoint("input") == [1, 2, 3])
            #expect(try s.checkpoint("other") == nil)
            // Strings interned before the reopen keep their ids: session s5 has both events.
            #expect(try s.events(inSession: "s5").count == 2)
        }
        #expect(try store.check().isOK)
    }

    @Test func statsCountSessionsOnceAndNoPositionIsNoOnboarding() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir)
        // s1 in two onboardings and with an error outside any page; s2 in one; s3 only outside.
        let outside = { (session: String, time: Int64) in
            Event(
                time: Timestamp(microseconds: time), session: session, meta: nil,
                payload: .error(OnboardingError(domain: "d", code: 1, message: "m")))
        }
        try store.append([
            simpleEvent(onboarding: 0, screen: 0, session: 1, time: 1),
            simpleEvent(onboarding: 1, screen: 0, session: 1, time: 2),
        ])
        try store.append([
            outside("s1", 3), simpleEvent(onboarding: 0, screen: 1, session: 2, time: 4), outside("s3", 5),
        ])
        try store.append([simpleEvent(onboarding: 1, screen: 2, session: 1, time: 6)])  // nothing new
        let stats = try store.read { try $0.stats() }
        #expect(stats.sessions == 3)
        #expect(stats.onboardings == 2)
        #expect(try store.check().isOK)
    }

    @Test func backupIsACompactedOpenableCopy() throws {
        let dir = temporaryDirectory()
        let copy = dir + "-backup"
        defer { removeDirectory(dir); removeDirectory(copy) }
        let store = try Store.open(at: dir)
        try store.append(
            (0..<500).map { simpleEvent(onboarding: $0 % 7, screen: $0 % 4, session: $0 % 50, time: Int64($0)) })
        try store.backup(to: copy)
        let restored = try Store.open(at: copy)
        #expect(try restored.read { try $0.allEvents() } == (try store.read { try $0.allEvents() }))
        #expect(try restored.check().isOK)
        // A second backup into the same place is refused with what is in the way, and the copy is intact.
        let error = #expect(throws: StoreError.self) { try store.backup(to: copy) }
        #expect(error?.kind == .invalidArgument)
        #expect(error.map { "\($0)".contains("already holds a store") } == true)
        #expect(try restored.check().isOK)
    }
}

@Suite struct StoreOpenTests {
    @Test func refusesWhatIsNotAStore() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        try "hello".write(toFile: dir + "/notes.txt", atomically: true, encoding: .utf8)
        let error = #expect(throws: StoreError.self) { try Store.open(at: dir) }
        #expect(error?.kind == .notAStore)

        let file = dir + "/notes.txt"
        #expect(throws: StoreError.self) { try Store.open(at: file) }

        // An LMDB file that is not LMDB.
        let fake = dir + "/fake"
        try FileManager.default.createDirectory(atPath: fake, withIntermediateDirectories: false)
        try String(repeating: "x", count: 10000).write(toFile: fake + "/data.mdb", atomically: true, encoding: .utf8)
        let invalid = #expect(throws: StoreError.self) { try Store.open(at: fake) }
        #expect(invalid?.kind == .notAStore)

        let missing = #expect(throws: StoreError.self) {
            try Store.open(at: dir + "/missing", options: .init(create: false))
        }
        #expect(missing?.kind == .notAStore)
    }

    @Test func refusesANewerFormat() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        do {
            let store = try Store.open(at: dir)
            try store.env.transaction(write: true) { txn in try txn.putUInt32(store.dbs.meta, Layout.metaFormat, 99) }
            store.close()
        }
        let error = #expect(throws: StoreError.self) { try Store.open(at: dir) }
        #expect(error?.kind == .newerFormat(found: 99, supported: Layout.formatVersion))
    }

    @Test func refusesASecondOpenInOneProcess() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir)
        let error = #expect(throws: StoreError.self) { try Store.open(at: dir + "/.") }
        #expect(error?.kind == .alreadyOpen)
        store.close()
        let again = try Store.open(at: dir)
        again.close()
    }

    @Test func readOnlyStoresRefuseAppends() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        try Store.open(at: dir).close()
        let store = try Store.open(at: dir, options: .init(readOnly: true))
        let error = #expect(throws: StoreError.self) {
            try store.append([simpleEvent(onboarding: 0, screen: 0, session: 0, time: 0)])
        }
        #expect(error?.kind == .readOnly)
        #expect(try store.read { try $0.stats().events } == 0)
    }

    @Test func aFailedBatchLeavesNothingBehind() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir)
        try store.append([simpleEvent(onboarding: 0, screen: 0, session: 0, time: 0)])
        var bad = simpleEvent(onboarding: 9, screen: 0, session: 9, time: 1, eventID: "x")
        bad.meta!.screenIndex = 70_000  // beyond what the record format holds: the codec refuses it
        #expect(throws: (any Error).self) {
            try store.append([simpleEvent(onboarding: 5, screen: 1, session: 5, time: 2, eventID: "y"), bad])
        }
        try store.read { s throws in
            #expect(try s.stats().events == 1)
            #expect(try s.id(of: "onb-5") == nil)  // strings of the failed batch were rolled back too
        }
        // The writer's state was rolled back with the transaction: the next batch is consistent.
        #expect(
            try store.append([simpleEvent(onboarding: 5, screen: 1, session: 5, time: 2, eventID: "y")]).seqs == 1..<2)
        #expect(try store.check().isOK)
        store.close()
        store.close()
        let reopened = try Store.open(at: dir)
        #expect(try reopened.read { try $0.stats().events } == 2)
    }

    @Test func writeClosuresAreAtomic() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir)
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try store.write { w in
                try w.append([simpleEvent(onboarding: 1, screen: 0, session: 1, time: 0)])
                throw Stop()
            }
        }
        #expect(try store.read { try $0.stats().events } == 0)
        let seen = try store.write { w -> Int in
            let a = try w.append((0..<3).map { simpleEvent(onboarding: 1, screen: $0, session: 1, time: Int64($0)) })
            let b = try w.append((0..<2).map { simpleEvent(onboarding: 2, screen: $0, session: 2, time: Int64($0)) })
            #expect(a.seqs == 0..<3 && b.seqs == 3..<5)
            try w.setCheckpoint(Checkpoint(key: "files", value: [2]))
            return try w.snapshot.stats().events  // the transaction sees its own writes
        }
        #expect(seen == 5)
        try store.read { s throws in
            #expect(try s.stats().events == 5)
            #expect(try s.checkpoint("files") == [2])
            #expect(try s.events(since: 0).map(\.seq) == [0, 1, 2, 3, 4])
        }
        #expect(try store.check().isOK)
    }

    @Test func checkpointKeysAreValidated() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir)
        let error = #expect(throws: StoreError.self) {
            try store.append([], checkpoint: Checkpoint(key: "", value: []))
        }
        #expect(error?.kind == .invalidArgument)
        try store.append([], checkpoint: Checkpoint(key: "k", value: [9]))
        #expect(try store.read { try $0.checkpoint("k") } == [9])
    }
}

@Suite struct SessionInferenceTests {
    let minute: Int64 = 60_000_000

    func sessions(_ events: [Event], batches: Int = 1) throws -> [String] {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        var names: [String] = []
        let per = (events.count + batches - 1) / batches
        var store = try Store.open(at: dir)
        for (i, start) in stride(from: 0, to: events.count, by: per).enumerated() {
            if i > 0 {
                // Reopen between batches: the inference state lives in the store.
                store.close()
                store = try Store.open(at: dir)
            }
            try store.append(events[start..<min(start + per, events.count)])
        }
        names = try store.read { try $0.events(since: 0).map { $0.event.session! } }
        #expect(try store.check().isOK)
        return names
    }

    @Test(arguments: [1, 3])
    func gapsAndStartsSplitSessions(batches: Int) throws {
        let e = { (t: Int64, p: Payload, profile: String?) in
            simpleEvent(onboarding: 0, screen: 0, session: -1, time: t, payload: p, profile: profile)
        }
        let events = [
            e(0, .onboardingLoaded, "p1"),
            e(1, .analytics(.onboardingStarted), "p1"),  // still fresh: same session
            e(2, .analytics(.screenPresented), "p1"),
            e(2 + 30 * minute - 1, .analytics(.screenPresented), "p1"),  // just under 30 minutes: same
            e(2 + 60 * minute - 1, .analytics(.screenPresented), "p1"),  // exactly 30 minutes later: new
            e(2 + 60 * minute, .analytics(.onboardingStarted), "p1"),  // a start after other events: new
            e(5, .analytics(.screenPresented), "p2"),  // another profile: its own
        ]
        let names = try sessions(events, batches: batches)
        #expect(names.count == 7)
        #expect(names[0] == "inferred:0")
        #expect(names[1] == names[0] && names[2] == names[0] && names[3] == names[0])
        #expect(names[4] == "inferred:4")
        #expect(names[5] == "inferred:5")
        #expect(names[6] == "inferred:6")
    }

    /// An event older than its session's last event joins that session, a start event too: a late
    /// `onboarding_loaded` (an offline device's upload) must not start a session of its own and take the later late
    /// events from the session they belong to.
    @Test(arguments: [1, 2])
    func aLateStartEventJoinsTheSessionItPrecedes(batches: Int) throws {
        let e = { (t: Int64, p: Payload) in
            simpleEvent(onboarding: 0, screen: 0, session: -1, time: t, payload: p, profile: "p1")
        }
        let events = [
            e(10, .analytics(.screenPresented)),
            e(20, .analytics(.screenCompleted(elementID: nil, reply: nil))),
            e(30, .analytics(.screenPresented)),
            // Late: before the session's last event.
            e(5, .onboardingLoaded),
            e(25, .analytics(.screenPresented)),
            // A start after the session's last event still starts a new one.
            e(40, .analytics(.onboardingStarted)),
        ]
        let names = try sessions(events, batches: batches)
        #expect(names.count == 6)
        #expect(Set(names[0...4]).count == 1, "\(names)")
        #expect(names[5] == "inferred:5", "\(names)")
    }

    /// A whole earlier session that arrives after a later one (files ingested in reverse, a device uploading
    /// yesterday's session) starts a session of its own: its start event is 30 minutes or more before the later
    /// session's last event (joining the later session would take the rest of it along).
    @Test(arguments: [1, 2])
    func aWholeLateSessionStaysItsOwn(batches: Int) throws {
        let e = { (t: Int64, p: Payload) in
            simpleEvent(onboarding: 0, screen: 0, session: -1, time: t, payload: p, profile: "p1")
        }
        let later = [
            e(120 * minute, .onboardingLoaded), e(121 * minute, .analytics(.screenPresented)),
            e(130 * minute, .analytics(.screenPresented)),
        ]
        let earlier = [
            e(0, .onboardingLoaded), e(1 * minute, .analytics(.screenPresented)),
            e(10 * minute, .analytics(.screenPresented)),
        ]
        let names = try sessions(later + earlier, batches: batches)
        #expect(Set(names[0...2]).count == 1 && Set(names[3...5]).count == 1, "\(names)")
        #expect(names[0] != names[3], "\(names)")
    }

    @Test func givenSessionsAreKept() throws {
        let names = try sessions([simpleEvent(onboarding: 0, screen: 0, session: 3, time: 0)])
        #expect(names == ["s3"])
    }
}

/// Semantics rule 11: empty strings that stand for "absent" are stored as absent.
@Suite struct EmptyStringTests {
    @Test func emptyElementIDAndReplyAreStoredAsAbsent() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir)
        try store.append([
            simpleEvent(
                onboarding: 1, screen: 0, session: 1, time: 1_000,
                payload: .analytics(.screenCompleted(elementID: "", reply: ""))),
            simpleEvent(
                onboarding: 1, screen: 1, session: 1, time: 2_000,
                payload: .analytics(.screenCompleted(elementID: "next", reply: ""))),
            simpleEvent(
                onboarding: 1, screen: 2, session: 1, time: 3_000,
                payload: .analytics(.screenCompleted(elementID: "", reply: "yes"))),
        ])
        let payloads = try store.read { try $0.events(onboarding: "onb-1").map(\.event.payload) }
        #expect(
            payloads == [
                .analytics(.screenCompleted(elementID: nil, reply: nil)),
                .analytics(.screenCompleted(elementID: "next", reply: nil)),
                .analytics(.screenCompleted(elementID: nil, reply: "yes")),
            ])
        #expect(try store.check().isOK)
    }

    @Test func emptySessionIDIsInferredPerProfile() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir)
        var a = simpleEvent(onboarding: 1, screen: 0, session: 0, time: 1_000, profile: "p-a")
        var b = simpleEvent(onboarding: 1, screen: 0, session: 0, time: 2_000, profile: "p-b")
        a.session = ""
        b.session = ""
        try store.append([a, b])
        let stored = try store.read { try $0.events(onboarding: "onb-1").map(\.event) }
        #expect(stored.count == 2)
        // Two profiles, so two inferred sessions; never one session named "".
        #expect(stored.allSatisfy { $0.session?.hasPrefix("inferred:") == true })
        #expect(Set(stored.compactMap(\.session)).count == 2)
        #expect(try store.read { try $0.id(of: "") } == nil)
        #expect(try store.read { try $0.stats().inferredSessions } == 2)
        #expect(try store.check().isOK)
    }

    @Test func emptyIDsAreAbsentAndEmptyEventIDsAreNotDuplicates() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir)
        var e = simpleEvent(onboarding: 1, screen: 0, session: 7, time: 1_000, eventID: "", profile: "")
        e.placement = ""
        e.variation = ""
        // Identical events kept apart (`keepIdentical`): an empty event id does not make them duplicates by id.
        let result = try store.append([e, e], keepIdentical: true)
        #expect(result.appended == 2)
        #expect(result.duplicates == 0)
        let stored = try store.read { try $0.events(onboarding: "onb-1").map(\.event) }
        #expect(stored.count == 2)
        for s in stored {
            #expect(s.eventID == nil && s.profile == nil && s.placement == nil && s.variation == nil)
            #expect(s.session == "s7")
        }
        // Two events of one time and screen sharing the empty id but not their content are both stored by default.
        var first = e
        first.time = Timestamp(microseconds: 5_000)
        var other = first
        other.session = "s8"
        let both = try store.append([first, other])
        #expect(both.appended == 2 && both.duplicates == 0)
        #expect(try store.check().isOK)
    }

    @Test func normalizedLeavesOtherEventsAlone() {
        let e = simpleEvent(
            onboarding: 1, screen: 0, session: 1, time: 5, eventID: "id", payload: .openPaywall(actionID: ""),
            profile: "p")
        #expect(!Store.needsNormalization(e))
        #expect(Store.normalized(e) == e)
        var f = e
        f.session = ""
        #expect(Store.needsNormalization(f))
        var g = f
        g.session = nil
        #expect(Store.normalized(f) == g)
    }
}

/// An `errno` from a system call the store makes itself (`opendir`, `pread`, `fstat`) is described as a system
/// error, not as an LMDB one; an errno LMDB returns keeps LMDB's label; both are `.system` errors with the errno.
@Test func systemCallErrorsAreNotLabelledLMDB() {
    let system = StoreError.system(EACCES, context: "opendir(/x)")
    #expect(system.description == "opendir(/x): system error \(EACCES): Permission denied")
    let lmdb = StoreError(lmdbCode: EACCES, context: "mdb_env_open(/x)")
    #expect(lmdb.description == "mdb_env_open(/x): LMDB error \(EACCES): Permission denied")
    #expect(system.kind == .system && lmdb.kind == .system)
    #expect(system.errno == .permissionDenied && lmdb.errno == .permissionDenied)
    let mapFull = StoreError(lmdbCode: -30792)  // MDB_MAP_FULL: LMDB's own code, no errno
    #expect(mapFull.description.hasPrefix("LMDB error -30792"))
    #expect(mapFull.kind == .lmdb && mapFull.errno == nil && !mapFull.meansDamage)
    #expect(StoreError(lmdbCode: -30796).meansDamage)  // MDB_CORRUPTED
    // `catch StoreError.Errno.noSpace` matches a StoreError with that number, and nothing else.
    #expect(StoreError.Errno.noSpace ~= StoreError(lmdbCode: ENOSPC))
    #expect(!(StoreError.Errno.noSpace ~= lmdb))
}
