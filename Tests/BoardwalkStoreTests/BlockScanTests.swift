import BoardwalkCodec
import BoardwalkModel
import BoardwalkStoreFormat
import Testing

@testable import BoardwalkStore

/// `Snapshot.forEachBlock`: the blocks of a scope and time range, counted from headers or walked for their
/// times, give exactly what `forEachEvent` gives, and only blocks that can hold an event of the range are visited.
@Suite struct BlockScanTests {
    /// Thirty-six hours of events every 15 minutes in 2 onboardings × 3 screens (several blocks per group: a
    /// block spans less than ``Layout/blockSpan``, twelve hours), a late batch whose events fall between the
    /// first batch's (overlapping blocks), and errors without a position.
    static func store(_ dir: String) throws -> Store {
        let store = try Store.open(at: dir)
        let start: Int64 = 1_793_527_200_000_000, minute: Int64 = 60_000_000
        #expect(Layout.blockSpan == 12 * 60 * minute, "the fixture spans three block spans")
        var first: [Event] = [], late: [Event] = []
        for i in 0..<144 {
            first.append(
                simpleEvent(
                    onboarding: i % 2, screen: (i / 2) % 3, session: i % 7, time: start + Int64(i) * 15 * minute))
            if i % 3 == 0 {
                late.append(
                    simpleEvent(
                        onboarding: i % 2, screen: (i / 2) % 3, session: i % 5,
                        time: start + Int64(i) * 15 * minute + minute))
            }
        }
        for i in 0..<6 {
            late.append(
                Event(
                    time: Timestamp(microseconds: start + Int64(i) * 97 * minute), session: "s\(i)", meta: nil,
                    payload: .error(OnboardingError(domain: "d", code: i, message: "m"))))
        }
        try store.append(first)
        try store.append(late)
        return store
    }

    struct Group: Hashable {
        var onboarding: StringID
        var screen: UInt16
    }

    @Test(
        arguments: [
            (nil, nil), (0, 90), (30, 400), (239, 241), (700, nil), (-50, 0), (5, 5), (719, 721), (1000, 1800),
            (2000, nil),
        ] as [(Int?, Int?)])
    func blocksGiveTheEventsOfAScan(fromMinute: Int?, toMinute: Int?) throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Self.store(dir)
        defer { store.close() }
        let start: Int64 = 1_793_527_200_000_000, minute: Int64 = 60_000_000
        let time: Range<Timestamp>? = fromMinute.map {
            Timestamp(
                microseconds: start + Int64($0) * minute)..<Timestamp(
                    microseconds: start + Int64(toMinute ?? 100_000) * minute)
        }
        try store.read { s in
            let onboarding0 = try #require(try s.id(of: "onb-0"))
            let scopes: [(StringID?, ClosedRange<Int>?)] = [
                (nil, nil), (onboarding0, nil), (onboarding0, 1...2), (RecordFormat.noOnboarding, nil),
            ]
            for (onboarding, screens) in scopes {
                // What a scan gives, per group.
                var expected: [Group: [UInt64]] = [:]
                try s.forEachEvent(onboarding: onboarding, screens: screens, time: time) { view in
                    let group = Group(
                        onboarding: view.onboarding ?? RecordFormat.noOnboarding,
                        screen: UInt16(view.screenIndex ?? 0xFFFF))
                    expected[group, default: []].append(view.seq)
                    return true
                }
                // Counted from headers (or times), and walked: the same events per group.
                var counted: [Group: Int] = [:], walked: [Group: [UInt64]] = [:]
                var visited = 0, inside = 0
                try s.forEachBlock(onboarding: onboarding, screens: screens, time: time) { block in
                    visited += 1
                    if block.isInsideRange { inside += 1 }
                    // Every block visited can hold an event of the range.
                    if let time {
                        #expect(
                            block.lastTime >= time.lowerBound.microseconds
                                && block.firstTime < time.upperBound.microseconds)
                    }
                    let group = Group(onboarding: block.keyOnboarding, screen: block.keyScreen)
                    var copy = block
                    let n = try copy.countInRange()
                    if n > 0 { counted[group, default: 0] += n }
                    // The kinds of one walk, and a walk resumed after `next()`: the events `next()` has not returned.
                    var kindsCopy = block, resumed = block
                    var kinds: [UInt8] = []
                    try kindsCopy.forEachKindInRange { code, _ in kinds.append(code) }
                    if try resumed.next() != nil {
                        var rest = 0
                        try resumed.forEachInRange { _ in rest += 1 }
                        #expect(rest == n - 1)
                    }
                    var walkedKinds: [UInt8] = []
                    while let event = try block.next() {
                        walked[group, default: []].append(event.seq)
                        walkedKinds.append(try block.kind().code)
                        if let time { #expect(time.contains(Timestamp(microseconds: event.time))) }
                    }
                    #expect(kinds == walkedKinds)
                    return true
                }
                #expect(
                    counted == expected.mapValues(\.count),
                    "\(String(describing: onboarding)) \(String(describing: screens))")
                #expect(walked.mapValues { Set($0) } == expected.mapValues { Set($0) })
                if time == nil { #expect(inside == visited) }
                if onboarding == nil && time == nil {
                    #expect(visited > 6 * 3, "several blocks per group, overlapping ones included")
                }
            }
        }
    }

    @Test func stoppingEndsTheScan() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Self.store(dir)
        defer { store.close() }
        var visited = 0
        try store.read { s in
            try s.forEachBlock(onboarding: nil) { _ in
                visited += 1
                return visited < 3
            }
        }
        #expect(visited == 3)
    }
}

/// A block's kind counts are covered by its checksum; kind counts that a writer got wrong, sealed and all, are
/// what `check()` finds by reading every event's kind.
@Test func checkReportsKindCountsThatDisagreeWithTheEvents() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let store = try Store.open(at: dir, options: .init(durability: .noSync))
    defer { store.close() }
    do {
        let close = Event(
            time: Timestamp(microseconds: 1_793_527_200_000_000), session: "s",
            meta: Meta(onboardingID: "o", screenClientID: "c", screenIndex: 0, totalScreens: 2),
            payload: .close(actionID: "x"))
        var presented = close
        presented.time = Timestamp(microseconds: close.time.microseconds + 1)
        presented.payload = .analytics(.screenPresented)
        try store.append([close, presented])
        try store.foldLogs()
        #expect(try store.check().problems.isEmpty)
        var key: [UInt8] = [], value: [UInt8] = []
        try store.read { snapshot in
            try snapshot.txn.withCursor(snapshot.dbs.events) { c in
                guard try c.first() else { return }
                key = Array(c.key)
                value = Array(c.value)
            }
        }
        try #require(!key.isEmpty, "the fold wrote the block to `events`")
        // After the two checksums, the header: count 2, time span 1, seq below 0, seq span 1; kind counts: 2
        // entries, 0x01 × 1 and 0x40 × 1.
        let counts = 2 * StoredChecksum.size + 4
        #expect(Array(value[counts..<counts + 5]) == [2, 0x01, 1, 0x40, 1])
        value[counts + 3] = 0x20  // the close counted as an open_paywall
        let seed = try key.withUnsafeBytes { try #require(EventKey($0)) }.checksumSeed
        value.withUnsafeMutableBytes {
            StoredChecksum.seal(
                UnsafeMutableRawBufferPointer(rebasing: $0[StoredChecksum.size..<counts + 5]), seed: seed)
            StoredChecksum.seal($0, seed: seed)
        }
        try store.env.transaction(write: true) { txn in
            try key.withUnsafeBytes { k in try value.withUnsafeBytes { v in _ = try txn.put(store.dbs.events, k, v) } }
        }
        let report = try store.check()
        #expect(
            report.problems.contains {
                $0.contains("counts its events by kind as 0x1: 1, 0x20: 1, but its events are 0x1: 1, 0x40: 1")
            }, "\(report)")
    }
}
