import BoardwalkCodec
import BoardwalkModel
import BoardwalkStoreFormat
import Testing

@testable import BoardwalkStore

/// Scans with a `KindSelection` step over the blocks whose headers count none of the kinds selected, and still give
/// every event of those kinds: merged (`forEachRun`) and a block at a time (`forEachBlockRun`), with the event log
/// folded and not.
@Suite struct KindSelectionTests {
    static let minute: Int64 = 60_000_000
    static let start: Int64 = 1_793_527_200_000_000

    /// Two onboardings of four screens; ten sessions each present every screen, the even ones complete the onboarding
    /// on screen 3, and one session of onboarding 0 sends an analytics name outside the known ones on screen 1.
    static func events() -> [Event] {
        var events: [Event] = []
        for session in 0..<10 {
            for screen in 0..<4 {
                let time = start + Int64(session * 10 + screen) * minute
                events.append(simpleEvent(onboarding: session % 2, screen: screen, session: session, time: time))
                if screen == 3 && session % 2 == 0 {
                    events.append(
                        simpleEvent(
                            onboarding: session % 2, screen: 3, session: session, time: time + 1,
                            payload: .analytics(.onboardingCompleted)))
                }
                if screen == 1 && session == 4 {
                    events.append(
                        simpleEvent(
                            onboarding: 0, screen: 1, session: session, time: time + 1,
                            payload: .analytics(.unknown(name: "custom_step"))))
                }
            }
        }
        return events
    }

    struct Seen: Hashable {
        var seq: UInt64
        var code: UInt8
        var screen: UInt16
    }

    /// Every event a scan of `onboarding` hands out with `kinds` (nil: all), with its kind code and screen.
    static func scan(_ s: Snapshot, onboarding: StringID?, blockAtATime: Bool, _ kinds: KindSelection?) throws -> [Seen]
    {
        var seen: [Seen] = []
        func take(_ run: inout EventRun) throws -> Bool {
            while let record = try run.next() {
                seen.append(
                    Seen(seq: record.seq, code: RecordFormat.kindCode(body: record.body).code, screen: run.screen))
            }
            return true
        }
        if blockAtATime, let onboarding {
            try s.forEachBlockRun(onboarding: onboarding, wanting: kinds, take)
        } else {
            try s.forEachRun(onboarding: onboarding, wanting: kinds, take)
        }
        return seen
    }

    @Test(arguments: [false, true])
    func aSelectionReadsOnlyTheBlocksThatHoldItsKinds(folded: Bool) throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir)
        defer { store.close() }
        try store.append(Self.events())
        if folded { try store.foldLogs() }
        let completed = AnalyticsName.onboardingCompleted.code
        try store.read { s in
            let custom = try #require(try s.id(of: "custom_step"))
            for onboarding in [nil, try #require(try s.id(of: "onb-0"))] {
                for blockAtATime in [false, true] where onboarding != nil || !blockAtATime {
                    let all = try Self.scan(s, onboarding: onboarding, blockAtATime: blockAtATime, nil)
                    // Completions: only screen 3's blocks are read, and every completion is among their events.
                    let completions = KindSelection { _, _, code, _ in code == completed }
                    let read = try Self.scan(s, onboarding: onboarding, blockAtATime: blockAtATime, completions)
                    #expect(Set(read.filter { $0.code == completed }) == Set(all.filter { $0.code == completed }))
                    #expect(!read.isEmpty && read.allSatisfy { $0.screen == 3 })
                    #expect(completions.skipped > 0)
                    // An unknown name, asked by its string: the one block of onboarding 0, screen 1.
                    let customs = KindSelection { _, _, code, name in
                        code == BlockKindCounts.unknownNameCode && name == custom
                    }
                    let customRead = try Self.scan(s, onboarding: onboarding, blockAtATime: blockAtATime, customs)
                    #expect(customRead.filter { $0.code == BlockKindCounts.unknownNameCode }.count == 1)
                    #expect(customRead.allSatisfy { $0.screen == 1 })
                    // The group is asked about: screen 2 alone, whatever the kind.
                    let screenTwo = KindSelection { _, screen, _, _ in screen == 2 }
                    let two = try Self.scan(s, onboarding: onboarding, blockAtATime: blockAtATime, screenTwo)
                    #expect(Set(two) == Set(all.filter { $0.screen == 2 }))
                    // Nothing selected: nothing read.
                    let none = KindSelection { _, _, _, _ in false }
                    #expect(try Self.scan(s, onboarding: onboarding, blockAtATime: blockAtATime, none).isEmpty)
                }
            }
        }
    }

    @Test func theHeadFollowerGivesEachFoldedBlocksHeaderInAnyOrder() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir)
        defer { store.close() }
        try store.append(Self.events())
        try store.foldLogs()
        try store.read { s in
            // Every block of `events`: its key's bytes and the header its own bytes give.
            var blocks: [(raw: [UInt8], key: EventKey, count: Int, lastTime: Int64)] = []
            try s.txn.withCursor(s.dbs.events) { c in
                var found = try c.first()
                while found {
                    let key = try decodeBlockKey(c.key)
                    let header = try blockHeader(key, c.value)
                    blocks.append((Array(c.key), key, header.count, header.lastTime))
                    found = try c.next()
                }
            }
            #expect(blocks.count > 4)
            for order in [Array(blocks.indices), blocks.indices.reversed(), blocks.indices.filter { $0 % 2 == 1 }] {
                try s.withHeads(following: KindSelection { _, _, _, _ in true }) { heads in
                    for i in order {
                        let header = try blocks[i].raw.withUnsafeBytes { try heads!.header(blocks[i].key, $0) }
                        #expect(header?.count == blocks[i].count && header?.lastTime == blocks[i].lastTime)
                    }
                    // A key no block has: no head.
                    var absent = blocks[0].raw
                    absent[absent.count - 1] &+= 1
                    #expect(try absent.withUnsafeBytes { try heads!.header(blocks[0].key, $0) } == nil)
                }
            }
        }
    }
}
