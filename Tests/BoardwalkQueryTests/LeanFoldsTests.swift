import BoardwalkCodec
import BoardwalkGenerator
import BoardwalkModel
import BoardwalkStore
import Testing

@testable import BoardwalkQuery

/// The fields of one event as a ``SessionFold`` reads them, for folding the same events both ways.
private struct LeanEvent: FoldFields {
    var micros: Int64
    var seq: UInt64
    var screenIndex: Int?
    var onboarding: StringID?
    var totalScreens: Int?
    var screenClientID: StringID? = nil
    var kind: EventKind = .custom
    var knownAnalyticsName: AnalyticsName? = nil

    var time: Timestamp { Timestamp(microseconds: micros) }
    var profile: StringID? { nil }
    var placement: StringID? { nil }
    var variation: StringID? { nil }
    var analyticsName: AnalyticsNameRef? { knownAnalyticsName.map { .known($0) } }
    var elementID: StringID? { nil }
}

extension ScreenClients {
    /// The pairs, as `screen << 32 | id`.
    fileprivate var pairs: [UInt64] {
        var pairs: [UInt64] = []
        forEach { pairs.append(UInt64($0) << 32 | UInt64($1)) }
        return pairs
    }
}

/// ``LeanFolds`` keeps what ``SessionFold`` keeps of each event's time, screen, onboarding, total screens, kind,
/// analytics name and outcome, in
/// a layout of its own (a screen-time chain per session in a shared pool): fold the same events, in arbitrary
/// orders, into both and compare every field a lean fold gives. The orders include screens going back (a
/// session in several onboardings, or events arriving late), equal times broken by seq, events without a
/// screen, and a pool small enough to grow many times; and screen times kept in rows, for some screens (the
/// others in chains) or all of them. In key order, an event right after one of the same session and group is folded
/// with ``LeanFolds/addFollowing(slot:time:seq:screen:totalScreens:)``, as a scan does.
@Test(arguments: [0, 5, 12])
func leanFoldsKeepWhatSessionFoldsKeep(rowScreens: Int) throws {
    var rng = SplitMix64(seed: 0x1EA7 &+ UInt64(rowScreens))
    var following = 0
    var needs = FoldNeeds()
    needs.reachTimes = true
    needs.onboarding = false
    try withTemporaryStore { store in
        try store.read { snapshot in
            let strings = SnapshotStrings(snapshot)
            for round in 0..<200 {
                let sessions = Int.random(in: 1...6, using: &rng)
                // `events: 1`: the pool starts at its minimum and grows.
                let lean = LeanFolds(
                    capacity: sessions, events: 1, reachTimes: true, outcomes: true, rowScreens: rowScreens)
                var folds = [SessionFold](repeating: SessionFold(), count: sessions)
                for _ in 0..<sessions { _ = lean.append() }
                var events: [(slot: Int, event: LeanEvent)] = []
                var seq: UInt64 = 0
                for slot in 0..<sessions {
                    for _ in 0..<Int.random(in: 0...40, using: &rng) {
                        seq += 1
                        let screen: Int? =
                            Int.random(in: 0...9, using: &rng) == 0 ? nil : Int.random(in: 0...11, using: &rng)
                        let total: Int? =
                            screen == nil || Bool.random(using: &rng) ? nil : Int.random(in: 1...14, using: &rng)
                        let kind = EventKind.allCases.randomElement(using: &rng)!
                        events.append(
                            (
                                slot,
                                LeanEvent(
                                    micros: Int64(Int.random(in: 0...30, using: &rng)) * 1_000_000, seq: seq,
                                    screenIndex: screen,
                                    onboarding: screen == nil ? nil : StringID(Int.random(in: 1...2, using: &rng)),
                                    totalScreens: total,
                                    // Mostly one client id per screen index, sometimes a second one.
                                    screenClientID: screen.map {
                                        StringID(100 + $0 + (Int.random(in: 0...7, using: &rng) == 0 ? 50 : 0))
                                    },
                                    kind: kind,
                                    knownAnalyticsName: kind == .analytics
                                        ? AnalyticsName.allCases.randomElement(using: &rng) : nil)
                            ))
                    }
                }
                // Key order within a screen (as a scan of one onboarding brings them) in half the rounds, any order
                // in the others.
                if round % 2 == 0 {
                    events.sort {
                        ($0.event.screenIndex ?? .max, $0.event.micros, $0.event.seq) < (
                            $1.event.screenIndex ?? .max, $1.event.micros, $1.event.seq
                        )
                    }
                } else {
                    events.shuffle(using: &rng)
                }
                // In key order, an event right after one of the same session in the same group (onboarding, screen)
                // takes `addFollowing`, as a scan's run folds it.
                var previous: (slot: Int, screen: Int?, onboarding: StringID?)? = nil
                for (slot, e) in events {
                    if round % 2 == 0, let p = previous, p.slot == slot, p.screen == e.screenIndex,
                        p.onboarding == e.onboarding
                    {
                        lean.addFollowing(
                            slot: slot, time: e.micros, seq: e.seq, screen: e.screenIndex, totalScreens: e.totalScreens,
                            client: e.screenClientID ?? RecordFormat.absent)
                        following += 1
                    } else {
                        try lean.add(
                            slot: slot, time: e.micros, seq: e.seq, screen: e.screenIndex, onboarding: e.onboarding,
                            totalScreens: e.totalScreens, client: e.screenClientID ?? RecordFormat.absent)
                    }
                    previous = (slot, e.screenIndex, e.onboarding)
                    lean.addOutcome(
                        slot: slot, kind: e.kind, name: e.analyticsName, at: OrderKey(time: e.micros, seq: e.seq),
                        strings: strings)
                    try folds[slot].add(
                        e, seq: e.seq,
                        full: { () throws(QueryError) -> EventView in
                            Issue.record("a lean fold never needs the full view")
                            throw QueryError(.source, "unreachable")
                        }, strings: strings, needs: needs)
                }
                var leanBuffer: [Int64] = [], foldBuffer: [Int64] = []
                for slot in 0..<sessions {
                    let a = lean.summary(
                        slot: slot, name: "s", strings: strings, needs: needs, reachBuffer: &leanBuffer)
                    let b = folds[slot].summary(name: "s", strings: strings, needs: needs, reachBuffer: &foldBuffer)
                    let context = "round \(round), session \(slot)"
                    #expect(a.started == b.started, "\(context)")
                    #expect(a.ended == b.ended, "\(context)")
                    #expect(a.eventCount == b.eventCount, "\(context)")
                    #expect(lean.events(slot: slot) == folds[slot].events, "\(context)")
                    #expect(a.furthestScreen == b.furthestScreen, "\(context)")
                    #expect(a.lastScreen == b.lastScreen, "\(context)")
                    #expect(a.totalScreens == b.totalScreens, "\(context)")
                    #expect(a.reachTimes == b.reachTimes, "\(context)")
                    // The distinct (screen, client id) pairs, each once, in whatever order each fold keeps them.
                    var expectedPairs: Set<UInt64> = []
                    for (eventSlot, e) in events where eventSlot == slot {
                        if let screen = e.screenIndex, let client = e.screenClientID {
                            expectedPairs.insert(UInt64(screen) << 32 | UInt64(client))
                        }
                    }
                    let leanPairs = a.screenClients?.pairs ?? [], foldPairs = b.screenClients?.pairs ?? []
                    #expect(Set(leanPairs) == expectedPairs && leanPairs.count == expectedPairs.count, "\(context)")
                    #expect(Set(foldPairs) == expectedPairs && foldPairs.count == expectedPairs.count, "\(context)")
                    #expect(lean.base[slot].onboarding == folds[slot].onboarding, "\(context)")
                    #expect(a.kindsSeen == b.kindsSeen && a.namesSeen == b.namesSeen, "\(context)")
                    #expect(a.outcome == b.outcome, "\(context)")
                    #expect(
                        [a.completed, a.paywall, a.closed, a.emailCollected] == [
                            b.completed, b.paywall, b.closed, b.emailCollected,
                        ],
                        "\(context)")
                }
            }
        }
    }
    #expect(following > 100, "the key-order rounds fold events with addFollowing")
}

/// Rows of screen times grow with the sessions (from room for 64, one at a time and then 5 000 at once) and keep
/// every session's times.
@Test func leanFoldsRowsGrowWithTheSessions() throws {
    var needs = FoldNeeds()
    needs.reachTimes = true
    try withTemporaryStore { store in
        try store.read { snapshot in
            let strings = SnapshotStrings(snapshot)
            let lean = LeanFolds(capacity: 1, events: 1, reachTimes: true, rowScreens: 3)
            var buffer: [Int64] = []
            for slot in 0..<300 {
                #expect(lean.append() == slot)
                // Screen 2 before screen 0 and 1, and a screen past the rows (in the chain).
                for (screen, second) in [(2, 5), (0, 9), (1, 7), (4, 8)] {
                    try lean.add(
                        slot: slot, time: Int64(slot * 100 + second) * 1_000_000, seq: UInt64(slot * 10 + screen),
                        screen: screen, onboarding: 1, totalScreens: 5, client: StringID(10 + screen))
                }
            }
            // Then many at once (one growth that copies the rows' first 300 entries, and populates the new ones).
            lean.append(count: 5_000)
            for slot in [300, 2_000, 5_299] {
                for (screen, second) in [(2, 5), (0, 9), (1, 7), (4, 8)] {
                    try lean.add(
                        slot: slot, time: Int64(slot * 100 + second) * 1_000_000, seq: UInt64(slot * 10 + screen),
                        screen: screen, onboarding: 1, totalScreens: 5, client: StringID(10 + screen))
                }
            }
            for slot in [0, 63, 64, 65, 127, 128, 299, 300, 2_000, 5_299] {
                let summary = lean.summary(slot: slot, name: "s", strings: strings, needs: needs, reachBuffer: &buffer)
                // Reach time i: the earliest event at a screen ≥ i.
                let t = { (second: Int) in Int64(slot * 100 + second) * 1_000_000 }
                #expect(summary.reachTimes == [t(5), t(5), t(5), t(8), t(8)], "slot \(slot)")
                // The client ids moved with the rows; screen 4's, past them, is kept apart.
                let pairs: [UInt64] = [0, 1, 2, 4].map { (screen: UInt64) in screen << 32 | (10 + screen) }
                #expect(Set(summary.screenClients?.pairs ?? []) == Set(pairs), "slot \(slot)")
            }
            // A new session with no screen times has none in the rows.
            try lean.add(slot: 301, time: 7, seq: 1, screen: nil, onboarding: nil, totalScreens: nil)
            #expect(
                lean.summary(slot: 301, name: "s", strings: strings, needs: needs, reachBuffer: &buffer).furthestScreen
                    == nil)
        }
    }
}

/// The point of ``LeanFold`` is its layout (see its documentation): two cache lines, what every event of a screen
/// funnel touches in the first, and the folds' storage aligned to a line, so that line is one line in memory.
@Test func leanFoldIsTwoCacheLinesWithTheHotFieldsInTheFirst() {
    #expect(MemoryLayout<LeanFold>.stride == 128)
    // Each hot field ends within the first line (an `OrderKey` at 56 would straddle it).
    let hot: [(PartialKeyPath<LeanFold>, Int)] = [
        (\.first, MemoryLayout<OrderKey>.size), (\.last, MemoryLayout<OrderKey>.size), (\.events, 8),
        (\.totalScreens, 8),
        (\.onboarding, 4), (\.furthest, 4), (\.lastScreen, 4), (\.flags, 1), (\.kindsSeen, 1), (\.namesSeen, 1),
        (\.outcome, MemoryLayout<Exit?>.size),
    ]
    for (path, size) in hot {
        let offset = MemoryLayout<LeanFold>.offset(of: path)
        #expect(offset != nil && offset! + size <= 64, "\(path) at \(String(describing: offset))")
    }
    #expect(MemoryLayout<LeanFold>.offset(of: \.firstScreenAt) == 64)
    let cold: [PartialKeyPath<LeanFold>] = [
        \.firstScreenAt, \.lastScreenAt, \.outcomeAt, \.headTime, \.headScreen,
        \.headPrevious,
    ]
    for path in cold {
        let offset = MemoryLayout<LeanFold>.offset(of: path)
        #expect(offset != nil && offset! >= 64, "\(path) at \(String(describing: offset))")
    }
    for capacity in [1, 100, 10_000] {
        let lean = LeanFolds(capacity: capacity, events: 1, reachTimes: false)
        #expect(UInt(bitPattern: lean.base) % 64 == 0, "capacity \(capacity)")
        lean.append(count: capacity + 70)  // and after growing
        #expect(UInt(bitPattern: lean.base) % 64 == 0, "capacity \(capacity), grown")
    }
    var fold = LeanFold()
    #expect(fold.ascending && !fold.excluded)
    fold.excluded = true
    fold.ascending = false
    #expect(!fold.ascending && fold.excluded)
    fold.excluded = false
    #expect(!fold.ascending && !fold.excluded)
}

/// The screen-time pool grows past its reserve (256 entries when the scan expects few events) and keeps every
/// chain: two sessions, each with 450 screens seen three times in descending order.
@Test func leanFoldsPoolGrowsAndKeepsEveryChain() throws {
    var needs = FoldNeeds()
    needs.reachTimes = true
    try withTemporaryStore { store in
        try store.read { snapshot in
            let strings = SnapshotStrings(snapshot)
            let lean = LeanFolds(capacity: 2, events: 1, reachTimes: true)
            _ = lean.append()
            _ = lean.append()
            var folds = [SessionFold(), SessionFold()]
            var seq: UInt64 = 0
            for round in 0..<3 {
                for screen in stride(from: 449, through: 0, by: -1) {
                    for slot in 0..<2 {
                        seq += 1
                        let event = LeanEvent(
                            micros: Int64(round * 1_000 + screen + slot) * 1_000_000, seq: seq,
                            screenIndex: screen, onboarding: 1, totalScreens: 450)
                        try lean.add(
                            slot: slot, time: event.micros, seq: seq, screen: screen, onboarding: 1, totalScreens: 450)
                        try folds[slot].add(
                            event, seq: seq,
                            full: { () throws(QueryError) -> EventView in
                                throw QueryError(.source, "a lean fold never needs the full view")
                            }, strings: strings, needs: needs)
                    }
                }
            }
            var a: [Int64] = [], b: [Int64] = []
            for slot in 0..<2 {
                let lean = lean.summary(slot: slot, name: "s", strings: strings, needs: needs, reachBuffer: &a)
                let full = folds[slot].summary(name: "s", strings: strings, needs: needs, reachBuffer: &b)
                #expect(lean.reachTimes.count == 450)
                #expect(lean.reachTimes == full.reachTimes)
            }
        }
    }
}

/// Queries that a lean fold with outcomes answers (``FoldNeeds/leanOutcomes``) give what the in-memory source
/// gives, whole store and whole onboardings, including a known name sent as an unknown one (through
/// `Store.append`) and `did` of a name outside the known list (which a full fold answers).
@Test func leanFoldsWithOutcomesAgreeWithTheInMemorySource() throws {
    var generator = SessionGenerator(seed: 0x0C7C0)
    var events = generator.events() + generator.events()
    events += [
        ev(0, "odd", started), ev(5, "odd", screen: 1, .analytics(.unknown(name: "onboarding_completed"))),
        ev(6, "odd", screen: 1, .analytics(.unknown(name: "navigation_failed"))),
    ]
    let queries = [
        "sessions | count by exit",
        "sessions | where completed | count",
        "sessions | stats count(), rate(completed), rate(paywall), rate(closed), rate(email_collected), p50(duration) by onboarding",
        "sessions | where did(open_paywall) and not did(onboarding_completed) | count by exit",
        "sessions | where did(screen_presented) | stats avg(events)",
        #"sessions | where did("navigation_failed") | count"#,
        #"sessions | where onboarding == "onb_1" | count by exit, completed"#,
    ]
    let now = Timestamp(microseconds: base + 86_400 * second)
    for text in queries {
        let needs = FoldNeeds(try Query.parse(text).checked, now: now)
        #expect(needs.lean == !text.contains("navigation_failed"), "\(text)")
        #expect(needs.leanOutcomes == needs.lean, "\(text)")
    }
    let found = try disagreements(events, queries, requireRows: true)
    #expect(found.isEmpty, "\(found.joined(separator: "\n"))")
    // The screen funnel stays lean without outcomes.
    let funnel = FoldNeeds(try Query.parse("sessions | funnel").checked, now: now)
    #expect(funnel.lean && !funnel.leanOutcomes)
}

/// Folds of disjoint sessions appended one after another (``LeanFolds/append(contentsOf:)``) keep what each folded:
/// the same summaries as one fold of every session, with screen times in chains (their pool entries moved) and in
/// rows, second client ids at a screen, and pools that grow.
@Test(arguments: [0, 5])
func appendedLeanFoldsOfDisjointSessionsKeepEachSessionsFold(rowScreens: Int) throws {
    var rng = SplitMix64(seed: 0xA99E_4D &+ UInt64(rowScreens))
    var needs = FoldNeeds()
    needs.reachTimes = true
    needs.onboarding = false
    try withTemporaryStore { store in
        try store.read { snapshot in
            let strings = SnapshotStrings(snapshot)
            var chained = 0
            for round in 0..<100 {
                let sessions = Int.random(in: 1...9, using: &rng), partCount = Int.random(in: 1...3, using: &rng)
                func make() -> LeanFolds {
                    LeanFolds(capacity: 1, events: 1, reachTimes: true, outcomes: true, rowScreens: rowScreens)
                }
                let whole = make(), parts = (0..<partCount).map { _ in make() }
                // Session `s` is in part `s % partCount`, at the slot after that part's earlier sessions.
                for s in 0..<sessions {
                    _ = whole.append()
                    _ = parts[s % partCount].append()
                }
                var seq: UInt64 = 0
                for _ in 0..<(sessions * 12) {
                    let s = Int.random(in: 0..<sessions, using: &rng)
                    seq += 1
                    let screen: Int? =
                        Int.random(in: 0...9, using: &rng) == 0 ? nil : Int.random(in: 0...11, using: &rng)
                    let client = screen.map { StringID(100 + $0 + (Int.random(in: 0...5, using: &rng) == 0 ? 50 : 0)) }
                    let time = Int64(Int.random(in: 0...30, using: &rng)) * 1_000_000
                    let kind = EventKind.allCases.randomElement(using: &rng)!
                    let name = kind == .analytics ? AnalyticsName.allCases.randomElement(using: &rng) : nil
                    for (folds, slot) in [(whole, s), (parts[s % partCount], s / partCount)] {
                        try folds.add(
                            slot: slot, time: time, seq: seq, screen: screen, onboarding: screen == nil ? nil : 1,
                            totalScreens: nil, client: client ?? RecordFormat.absent)
                        folds.addOutcome(
                            slot: slot, kind: kind, name: name.map { .known($0) }, at: OrderKey(time: time, seq: seq),
                            strings: strings)
                    }
                }
                for part in parts.dropFirst() { try parts[0].append(contentsOf: part) }
                let combined = parts[0]
                #expect(combined.count == sessions)
                var buffer: [Int64] = [], wholeBuffer: [Int64] = []
                var slot = 0
                for p in 0..<partCount {
                    for s in stride(from: p, to: sessions, by: partCount) {
                        let a = combined.summary(
                            slot: slot, name: "s", strings: strings, needs: needs, reachBuffer: &buffer)
                        let b = whole.summary(
                            slot: s, name: "s", strings: strings, needs: needs, reachBuffer: &wholeBuffer)
                        let context = "round \(round), session \(s) at slot \(slot)"
                        #expect(a.started == b.started && a.ended == b.ended, "\(context)")
                        #expect(a.eventCount == b.eventCount && a.furthestScreen == b.furthestScreen, "\(context)")
                        #expect(a.lastScreen == b.lastScreen && a.reachTimes == b.reachTimes, "\(context)")
                        #expect(Set(a.screenClients?.pairs ?? []) == Set(b.screenClients?.pairs ?? []), "\(context)")
                        #expect(a.outcome == b.outcome && a.kindsSeen == b.kindsSeen, "\(context)")
                        if combined.base[slot].headPrevious >= 0 { chained += 1 }
                        slot += 1
                    }
                }
            }
            #expect(chained > 100, "sessions whose screen times chain through the pool were appended")
        }
    }
}
