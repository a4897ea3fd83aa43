import BoardwalkCodec
import BoardwalkModel
import Testing

@testable import BoardwalkStore

/// `Snapshot.forEachBlockRun`: an onboarding's events a block at a time, unmerged, read through the map or with
/// `pread` (`BlockFetcher`, `MapWindows`), give exactly the events of the merged scan, on the first scan of a
/// process and on later ones.
@Suite struct BlockRunTests {
    /// 20 onboardings appended in 6 batches of a few blocks per (onboarding, screen 0) each, so that one
    /// onboarding's sealed blocks lie in a few stretches of the file, apart (overflow pages written batch by batch
    /// for all onboardings); the last batch's events fall between the first ones' (overlapping blocks of a group),
    /// and a few errors have no position.
    static func store(_ dir: String) throws -> Store {
        let store = try Store.open(at: dir)
        let start: Int64 = 1_793_527_200_000_000, second: Int64 = 1_000_000
        for batch in 0..<6 {
            var events: [Event] = []
            for onboarding in 0..<20 {
                for i in 0..<perBatch {
                    // Batch 5 goes back in time: its events interleave with batch 0's.
                    let t =
                        start + Int64(batch == 5 ? 0 : batch) * 1000 * second + Int64(i) * second
                        + (batch == 5 ? second / 2 : 0)
                    events.append(
                        simpleEvent(
                            onboarding: onboarding, screen: i % 40 == 0 ? 1 : 0,
                            session: onboarding * 1000 + (i * 7 + batch) % 37, time: t))
                }
            }
            if batch == 3 {
                for i in 0..<5 {
                    events.append(
                        Event(
                            time: Timestamp(microseconds: start + Int64(i) * 90 * second), session: "s\(i)", meta: nil,
                            payload: .error(OnboardingError(domain: "d", code: i, message: "m"))))
                }
            }
            try store.append(events)
        }
        return store
    }

    /// Events per onboarding and batch.
    static let perBatch = 600

    struct Seen: Hashable, Comparable {
        var screen: UInt16
        var time: Int64
        var seq: UInt64
        var session: StringID?

        static func < (a: Seen, b: Seen) -> Bool { (a.screen, a.time, a.seq) < (b.screen, b.time, b.seq) }
    }

    /// The merged scan's events, in its order.
    static func merged(
        _ s: Snapshot, _ onboarding: StringID, _ time: Range<Timestamp>?,
        screens: ClosedRange<Int>? = nil
    ) throws -> [Seen] {
        var out: [Seen] = []
        try s.forEachRecord(onboarding: onboarding, screens: screens, time: time) { record in
            out.append(
                Seen(
                    screen: record.keyScreen, time: record.timeMicroseconds, seq: record.seq,
                    session: try record.fields(.session).session))
            return true
        }
        return out
    }

    /// The block runs' events, each run checked to be in (time, seq) order and inside the range.
    static func blockRuns(
        _ s: Snapshot, _ onboarding: StringID, _ time: Range<Timestamp>?,
        screens: ClosedRange<Int>? = nil
    ) throws -> (events: [Seen], runs: Int) {
        var out: [Seen] = [], runs = 0
        try s.forEachBlockRun(onboarding: onboarding, screens: screens, time: time) { run in
            runs += 1
            var previous: Seen? = nil
            while let record = try run.next() {
                let seen = Seen(
                    screen: record.keyScreen, time: record.timeMicroseconds, seq: record.seq,
                    session: try record.fields(.session).session)
                if let previous { #expect(previous < seen, "a run's events in (time, seq) order") }
                if let time { #expect(time.contains(Timestamp(microseconds: seen.time))) }
                previous = seen
                out.append(seen)
            }
            return true
        }
        return (out, runs)
    }

    @Test func blockRunsGiveTheEventsOfTheMergedScanFirstAndAgain() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Self.store(dir)
        defer { store.close() }
        let start: Int64 = 1_793_527_200_000_000, second: Int64 = 1_000_000
        let ranges: [Range<Timestamp>?] = [
            nil,
            Timestamp(microseconds: start + 50 * second)..<Timestamp(microseconds: start + 650 * second),
            Timestamp(microseconds: start + 10_000 * second)..<Timestamp(microseconds: start + 20_000 * second),
        ]
        // The first scan of an onboarding reads its scattered blocks with pread (their windows marked read once
        // when it ends); the next scan maps those windows; a third finds nothing new to do. Each gives the merged
        // scan's events.
        var states: [[MapWindows.State]] = []
        for _ in 0..<3 {
            try store.read { s in
                let windows = try #require(s.txn.file.windows)
                let id = try #require(try s.id(of: "onb-7"))
                #expect(try Self.blockRuns(s, id, nil).events.sorted() == (try Self.merged(s, id, nil)).sorted())
                states.append((0..<windows.count).map { windows.state($0) })
            }
        }
        let readOnce = states[0].indices.filter { states[0][$0] == .readOnce }
        #expect(!readOnce.isEmpty)
        #expect(readOnce.allSatisfy { states[1][$0] == .mapped })
        #expect(states[2] == states[1])
        // Every scope and range, twice (the second time partly through windows the first read once).
        for _ in 0..<2 {
            try store.read { s in
                for onboarding in [0, 7, 19] {
                    let id = try #require(try s.id(of: "onb-\(onboarding)"))
                    for time in ranges {
                        let want = try Self.merged(s, id, time)
                        let (got, runs) = try Self.blockRuns(s, id, time)
                        #expect(got.sorted() == want.sorted(), "onb-\(onboarding), \(time as Any)")
                        #expect(Set(got).count == got.count, "no event twice")
                        // Overlapping blocks of a group come in runs of their own.
                        if time == nil { #expect(want.count == 6 * Self.perBatch && runs > 2) }
                        if time == ranges[2] { #expect(got.isEmpty) }
                        // Screen ranges: each screen alone, both, past the last, and out of UInt16's range.
                        for screens in [0...0, 1...1, 0...1, 1...7, 2...9, -3 ... -1, 70_000...80_000]
                            as [ClosedRange<Int>]
                        {
                            let want = try Self.merged(s, id, time, screens: screens)
                            let got = try Self.blockRuns(s, id, time, screens: screens).events
                            #expect(
                                got.sorted() == want.sorted(), "onb-\(onboarding), \(time as Any), screens \(screens)")
                            if screens.lowerBound >= 2 { #expect(got.isEmpty) }
                        }
                    }
                }
                let none = try Self.blockRuns(s, RecordFormat.noOnboarding, nil)
                #expect(none.events.sorted() == (try Self.merged(s, RecordFormat.noOnboarding, nil)).sorted())
                #expect(none.events.count == 5)
            }
        }
    }

    @Test func falseStopsTheBlockRuns() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Self.store(dir)
        defer { store.close() }
        try store.read { s in
            let id = try #require(try s.id(of: "onb-5"))
            var runs = 0, events = 0
            try s.forEachBlockRun(onboarding: id) { run in
                runs += 1
                if try run.next() != nil { events += 1 }
                return runs < 3
            }
            #expect(runs == 3 && events == 3)
            // An onboarding without events (an id of another string) reads nothing.
            let session = try #require(try s.id(of: "s0"))
            try s.forEachBlockRun(onboarding: session) { _ in
                Issue.record("no block expected")
                return true
            }
        }
    }

    @Test func windowStatesOnlyRise() {
        let windows = MapWindows(mapSize: 40 << 16)
        #expect(windows.count == 41)
        #expect((0..<41).allSatisfy { windows.state($0) == .untouched })
        windows.raise(3, to: .readOnce)
        windows.raise(4, to: .mapped)
        windows.raise(4, to: .readOnce)  // never back down
        windows.raise(33, to: .mapped)  // the next word
        #expect(windows.state(2) == .untouched && windows.state(3) == .readOnce && windows.state(4) == .mapped)
        #expect(windows.state(5) == .untouched && windows.state(32) == .untouched && windows.state(33) == .mapped)
        windows.raise(3, to: .mapped)
        #expect(windows.state(3) == .mapped)
        // Outside the table: nothing to gain from pread there, so read through the map.
        #expect(windows.state(-1) == .mapped && windows.state(41) == .mapped && windows.state(1 << 40) == .mapped)
        windows.raise(41, to: .readOnce)
        #expect(windows.state(40) == .untouched)
    }
}
