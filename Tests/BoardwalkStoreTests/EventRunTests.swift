import BoardwalkCodec
import BoardwalkGenerator
import BoardwalkModel
import Testing

@testable import BoardwalkStore

/// `Snapshot.forEachRun` and `EventRun`: the runs of a scan, read whole, give exactly the events of
/// `forEachEvent` in the same order, also when blocks of a group overlap in time and are merged.
@Suite struct EventRunTests {
    /// Three batches whose events interleave in time within each (onboarding, screen) group, so that a group's
    /// blocks overlap and the scan merges them: the first batch's blocks come in runs of several events, cut
    /// by the sparser events of the later two.
    static func store(_ dir: String) throws -> Store {
        let store = try Store.open(at: dir)
        for batch in 0..<3 {
            var events: [Event] = []
            let spacing: Int64 = batch == 0 ? 30 : 300
            for i in 0..<(batch == 0 ? 300 : 30) {
                let time = 1_000_000 + Int64(i) * spacing + Int64(batch) * 10
                events.append(
                    simpleEvent(onboarding: i % 2, screen: (i / 2) % 3, session: (i * 7 + batch) % 23, time: time))
            }
            try store.append(events)
        }
        return store
    }

    struct Seen: Equatable {
        var seq: UInt64
        var time: Int64
        var session: StringID?
        var total: Int?
    }

    static func viaEvents(_ s: Snapshot, onboarding: StringID?, time: Range<Timestamp>?) throws -> [Seen] {
        var out: [Seen] = []
        try s.forEachEvent(onboarding: onboarding, time: time) { view in
            out.append(
                Seen(
                    seq: view.seq, time: view.time.microseconds, session: view.session, total: view.record.totalScreens)
            )
            return true
        }
        return out
    }

    @Test func runsReadWholeGiveTheEventsOfTheScan() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Self.store(dir)
        try store.read { s throws in
            let onb0 = try #require(try s.id(of: "onb-0"))
            let window = Timestamp(microseconds: 1_002_000)..<Timestamp(microseconds: 1_005_000)
            for (onboarding, time) in [(nil, nil), (onb0, nil), (onb0, window), (nil, window)]
                as [(StringID?, Range<Timestamp>?)]
            {
                let want = try Self.viaEvents(s, onboarding: onboarding, time: time)
                #expect(!want.isEmpty)
                var got: [Seen] = []
                var runs = 0
                try s.forEachRun(onboarding: onboarding, time: time) { run in
                    runs += 1
                    while let record = try run.next() {
                        let fields = try record.fields(.session)
                        got.append(
                            Seen(
                                seq: record.seq, time: record.timeMicroseconds, session: fields.session,
                                total: fields.totalScreens))
                    }
                    return true
                }
                #expect(got == want, "onboarding \(onboarding as Any), time \(time as Any)")
                // Overlapping blocks: more runs than the 2 × 3 groups have blocks' worth of whole runs.
                if onboarding == nil && time == nil { #expect(runs > 3 * 6, "runs: \(runs)") }
            }
        }
    }

    @Test func unreadEventsOfARunAreSkippedAndFalseStops() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Self.store(dir)
        try store.read { s throws in
            let all = try Self.viaEvents(s, onboarding: nil, time: nil).map(\.seq)
            // Only each run's first event: a subsequence of the scan, in order.
            var firsts: [UInt64] = []
            try s.forEachRun(onboarding: nil) { run in
                if let record = try run.next() { firsts.append(record.seq) }
                return true
            }
            #expect(!firsts.isEmpty && firsts.count < all.count)
            var i = all.startIndex
            for seq in firsts {
                guard let j = all[i...].firstIndex(of: seq) else {
                    Issue.record("seq \(seq) out of order or not in the scan")
                    break
                }
                i = j + 1
            }
            // `false` stops at once.
            var calls = 0
            try s.forEachRun(onboarding: nil) { _ in
                calls += 1
                return false
            }
            #expect(calls == 1)
            // forEachRecord stops on the record that returned false.
            var seen = 0
            try s.forEachRecord(onboarding: nil) { _ in
                seen += 1
                return seen < 5
            }
            #expect(seen == 5)
        }
    }

    /// The scans' order against an independent oracle: every stored event (`events(since:)`, in seq order)
    /// sorted by its key (onboarding, screen, time, seq) and filtered by the time window. Many batches, so a
    /// group's blocks overlap in time; few distinct times, so ties are everywhere; some rounds spread times
    /// wider than a block's span; some events have no position. (Comparing `forEachRun` with `forEachEvent` alone
    /// would be circular: one is built on the other.)
    @Test func scansFollowKeyOrderAgainstASortedOracle() throws {
        var rng = SplitMix64(seed: 99)
        for round in 0..<12 {
            let dir = temporaryDirectory("oracle\(round)")
            defer { removeDirectory(dir) }
            let store = try Store.open(at: dir)
            defer { store.close() }
            for _ in 0..<Int(rng.next() % 6 + 2) {
                var batch: [Event] = []
                for _ in 0..<Int(rng.next() % 200 + 1) {
                    let t = 1_000_000 + Int64(rng.next() % 20) * (round % 3 == 0 ? 1_000_000_000 : 7)
                    var e = simpleEvent(
                        onboarding: Int(rng.next() % 3), screen: Int(rng.next() % 3), session: Int(rng.next() % 9),
                        time: t)
                    if rng.next() % 8 == 0 {
                        e.meta = nil; e.payload = .error(OnboardingError(domain: "d", code: 1, message: "m"))
                    }
                    batch.append(e)
                }
                try store.append(batch)
            }
            try store.read { s throws in
                typealias Key = (onboarding: UInt32, screen: UInt16, time: Int64, seq: UInt64)
                var keyed: [Key] = []
                for e in try s.events(since: 0) {
                    let onboarding =
                        try e.event.meta.map { try #require(try s.id(of: $0.onboardingID)) }
                        ?? RecordFormat.noOnboarding
                    keyed.append(
                        (
                            onboarding, e.event.meta.map { UInt16($0.screenIndex) } ?? RecordFormat.noScreen,
                            e.event.time.microseconds, e.seq
                        ))
                }
                keyed.sort { ($0.onboarding, $0.screen, $0.time, $0.seq) < ($1.onboarding, $1.screen, $1.time, $1.seq) }
                for (lo, hi) in [(Int64.min, Int64.max), (1_000_021, 1_000_077), (5_001_000_000, 9_001_000_000)] {
                    let range = lo == .min ? nil : Timestamp(microseconds: lo)..<Timestamp(microseconds: hi)
                    let inWindow = keyed.filter { lo == .min || ($0.time >= lo && $0.time < hi) }
                    var got: [UInt64] = []
                    try s.forEachEvent(onboarding: nil, time: range) {
                        got.append($0.seq); return true
                    }
                    #expect(got == inWindow.map(\.seq), "round \(round), window \(lo)..<\(hi)")
                    for o in 0..<3 {
                        let id = try #require(try s.id(of: "onb-\(o)"))
                        var one: [UInt64] = []
                        try s.forEachEvent(onboarding: id, time: range) {
                            one.append($0.seq); return true
                        }
                        #expect(
                            one == inWindow.filter { $0.onboarding == id }.map(\.seq), "round \(round), onboarding \(o)"
                        )
                    }
                }
            }
        }
    }
}
