import BoardwalkCodec
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
                events.append(simpleEvent(onboarding: i % 2, screen: (i / 2) % 3, session: (i * 7 + batch) % 23, time: time))
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
            out.append(Seen(seq: view.seq, time: view.time.microseconds, session: view.session, total: view.record.totalScreens))
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
            for (onboarding, time) in [(nil, nil), (onb0, nil), (onb0, window), (nil, window)] as [(StringID?, Range<Timestamp>?)] {
                let want = try Self.viaEvents(s, onboarding: onboarding, time: time)
                #expect(!want.isEmpty)
                var got: [Seen] = []
                var runs = 0
                try s.forEachRun(onboarding: onboarding, time: time) { run in
                    runs += 1
                    while let record = try run.next() {
                        let fields = try record.fields(.session)
                        got.append(Seen(seq: record.seq, time: record.timeMicroseconds, session: fields.session, total: fields.totalScreens))
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
}
