import BoardwalkGenerator
import BoardwalkModel
import BoardwalkStore
import Testing

@testable import BoardwalkQuery

// `sessions` reductions over the whole store that read only what the session index holds (each event's onboarding,
// screen, time and seq), each session's first profile, placement and variation (from its earliest event) and the
// flags the blocks' kind counts give fold the index instead of every event block: the same answers, in the same
// session order.

/// Whole-store `sessions` queries whose fields the session index gives: started, ended, duration, events, onboarding,
/// furthest and last screen, alone and in filters, by time buckets and in stats; with first values and flags.
private let indexQueries = [
    "sessions | count by day(started)",
    "sessions | count by hour(started), onboarding",
    "sessions | count by onboarding",
    "sessions | stats count(), avg(duration), p50(duration), max(events), min(started), max(ended) by onboarding",
    "sessions | where events > 3 | count by furthest_screen, last_screen",
    #"sessions | where onboarding != "onb_1" and duration > 20s | stats sum(events), p90(duration)"#,
    "sessions | where not reached(2) | count by onboarding",
    "sessions | histogram events step 2",
    "sessions | top 2 onboarding",
    "sessions | count by furthest_screen | where count > 1 | count",
    "sessions | stats count(), min(started), max(started) by hour(started)",
    "sessions | top 3 day(started)",
    #"sessions | count by day(started, "America/New_York")"#,
    "sessions | stats count(), rate(completed), ci(completed) by variation",
    "sessions | where paywall or closed | count by variation, onboarding",
    "sessions | stats count(), rate(email_collected), avg(duration) by variation, profile",
    #"sessions | where did("screen_completed") and not did("onboarding_started") | count by profile"#,
    #"sessions | where variation == "a" and completed | count by day(started)"#,
    "sessions | count by profile, completed | where count > 1 | count",
    "sessions | top 2 variation",
]

/// Generated stores written in three batches (their references still in the session log), then with the log folded
/// into `sessions`: the index fold at one thread and split by buckets at 2 and 3 threads agrees with the in-memory
/// source, and `explain` says the index was read.
@Test func wholeStoreFoldsFromTheSessionIndexAgreeWithTheInMemorySource() throws {
    let probe = ParallelProbe()
    for dataset in 0..<10 {
        let now = Timestamp(microseconds: base + 3 * 86_400 * second)
        var generator = SessionGenerator(seed: 0x1DE_F01D ^ UInt64(dataset))
        // Sessions of one event each with a profile and an event id of their own first: their strings spread the
        // generated sessions over a dozen buckets of the index, which a split reads in ranges.
        let events = padding(sessions: 300) + generator.events()
        try withTemporaryStore { store in
            try appendInThreeBatches(events, to: store)
            let memory = InMemoryEventSource(try store.read { try $0.events(since: 0) }.map(\.event))
            let disk = StoreEventSource(store)
            for folded in [false, true] {
                if folded { try store.foldLogs() }
                let logged = try store.read { try $0.unfoldedBatches().sessionLog }
                #expect(folded ? logged == 0 : logged > 0, "dataset \(dataset): batches in the session log")
                for text in indexQueries {
                    let query = try Query.parse(text)
                    #expect(query.explain(on: disk).contains("read: the session index once"), "\(text)")
                    let expected = try query.run(on: memory, options: .init(now: now))
                    for threads in [1, 2, 3] {
                        // The flags from their blocks whatever share of the store those hold (the blocks of these
                        // small stores mostly hold one of each kind).
                        let answer = try StoreEventSource.$minimumPartEvents.withValue(1) {
                            try StoreEventSource.$parallelProbe.withValue(probe) {
                                try StoreEventSource.$flagReadShare.withValue(.infinity) {
                                    try query.run(on: disk, options: .init(now: now, threads: threads))
                                }
                            }
                        }
                        #expect(
                            agree(answer, expected),
                            """
                            dataset \(dataset), log folded \(folded), \(threads) threads: \(text)
                            \(answer.render(.table))
                            memory:
                            \(expected.render(.table))
                            """)
                    }
                }
            }
        }
    }
    #expect(probe.counts.folds >= 10 * 2 * indexQueries.count, "the index folds ran split: \(probe.counts)")
}

/// `sessions` sessions of onboarding `onb_pad`, one event each, with a profile and an event id of their own.
private func padding(sessions: Int) -> [Event] {
    (0..<sessions).map { i in
        var event = ev(Double(i) / 10, "pad-\(i)", screen: i % 3, onboarding: "onb_pad", profile: "p-\(i)", presented)
        event.eventID = "pad-event-\(i)"
        return event
    }
}

/// The index fold delivers the sessions in the order a scan of the event blocks in key order first meets them (the
/// order the in-memory source and every other fold deliver), at one thread and split.
@Test func sessionIndexFoldDeliversSessionsInKeyOrder() throws {
    for dataset in 0..<8 {
        var generator = SessionGenerator(seed: 0x0D_E11E ^ UInt64(dataset))
        let events = padding(sessions: 200) + generator.events()
        try withTemporaryStore { store in
            try appendInThreeBatches(events, to: store)
            let disk = StoreEventSource(store)
            let text = "sessions | count by onboarding, furthest_screen"
            let needs = FoldNeeds(try Query.parse(text).checked, now: Timestamp(microseconds: base))
            #expect(needs.fromSessionIndex && !needs.firstsOnly)
            var fromBlocks = needs
            fromBlocks.fromSessionIndex = false
            func order(_ needs: FoldNeeds, threads: Int) throws -> [UInt32?] {
                var ids: [UInt32?] = []
                try StoreEventSource.$threads.withValue(threads) {
                    try StoreEventSource.$minimumPartEvents.withValue(1) {
                        try disk.foldSessions([ScanRange()], needs: needs, cancellation: nil, text: text) {
                            summary, _, _ in
                            ids.append(summary.storeID)
                            return true
                        }
                    }
                }
                return ids
            }
            let scanned = try order(fromBlocks, threads: 1)
            #expect(!scanned.isEmpty)
            for threads in 1...3 {
                #expect(try order(needs, threads: threads) == scanned, "dataset \(dataset), \(threads) threads")
            }
        }
    }
}

/// Only what the index, the first values and the flags give: `total_screens`, the exit, answers, funnels and `did` of a
/// kind (which an analytics event of that name also sets) read the event blocks; so does a run that reads around damaged blocks (whose events the index still lists).
@Test func foldsThatNeedRecordsReadTheEventBlocks() throws {
    let now = Timestamp(microseconds: base)
    for text in [
        "sessions | count by total_screens", "sessions | count by exit", "sessions | count by exit, variation",
        #"sessions | count by answer("level")"#, "sessions | funnel", #"sessions | where did("close") | count"#,
        "sessions | funnel by variation",
    ] {
        #expect(!FoldNeeds(try Query.parse(text).checked, now: now).fromSessionIndex, "\(text)")
    }
    let needs = FoldNeeds(try Query.parse("sessions | count by day(started)").checked, now: now)
    #expect(StoreEventSource.foldsFromSessionIndex(needs))
    StoreEventSource.$damagedBlocks.withValue(DamagedBlocks()) {
        #expect(!StoreEventSource.foldsFromSessionIndex(needs))
    }
}

/// A query that reads no session field but `started`, `onboarding`, first values and flags, and whose answer does not
/// depend on the order of the sessions, reads one or two references per index run (its earliest, and its earliest with
/// a screen); any other field, or a sum or an average, reads them all.
@Test func startsAndOnboardingsReadTheFirstReferencesOfEachRun() throws {
    let now = Timestamp(microseconds: base)
    func firstsOnly(_ text: String) throws -> Bool {
        FoldNeeds(try Query.parse(text).checked, now: now).firstsOnly
    }
    for text in [
        "sessions | count by day(started)", "sessions | stats count(), min(started), max(started)",
        "sessions | top 2 hour(started)", "sessions | where started < @2026-11-02T00:00:00Z | count by day(started)",
        "sessions | count by onboarding", "sessions | count by day(started), onboarding",
        "sessions | count by day(started), completed", "sessions | stats count(), rate(completed) by variation",
        #"sessions | where did("screen_completed") | count by placement, profile"#,
    ] {
        #expect(try firstsOnly(text), "\(text)")
    }
    for text in [
        "sessions | count by day(ended)", "sessions | where events > 1 | count by day(started)",
        "sessions | count by onboarding, furthest_screen", "sessions | stats avg(duration) by day(started)",
        "sessions | stats avg(events) by variation",
    ] {
        #expect(try !firstsOnly(text), "\(text)")
    }
}

/// Two onboarding ids spelled apart that Swift compares equal are one group, named as the first session met in key
/// order names it: the index fold then reads every reference to deliver in that order, as the scan of the event blocks
/// does (which a run that reads around damage takes).
@Test func onboardingsSpelledApartButEqualKeepTheKeyOrdersSpelling() throws {
    let composed = "onb_\u{E9}", decomposed = "onb_e\u{301}"
    // The first event, an error outside the page, interns its session and then the composed id (as its profile); the
    // session's next event is on the decomposed onboarding, interned after. So key order meets the composed
    // onboarding's sessions first, and session id order the decomposed one's.
    let outside = Payload.error(OnboardingError(domain: "d", code: 1, message: "m"))
    var events = [
        ev(0, "s-first", screen: nil, profile: composed, outside),
        ev(0.5, "s-first", screen: 0, onboarding: decomposed, presented),
    ]
    for s in 1..<40 {
        events.append(ev(Double(s), "s\(s)", screen: 0, onboarding: s % 2 == 0 ? decomposed : composed, presented))
    }
    // Later sessions of another onboarding, whose strings make the index span buckets enough for two threads.
    events += padding(sessions: 100).map {
        var e = $0; e.time.microseconds += 100 * second; return e
    }
    try withTemporaryStore { store in
        _ = try store.append(events)
        let query = try Query.parse("sessions | count by onboarding")
        let expected = try query.run(on: StoreEventSource(store), options: .init(ignoreDamaged: true))
        for threads in [1, 2] {
            let answer = try StoreEventSource.$minimumPartEvents.withValue(1) {
                try query.run(on: StoreEventSource(store), options: .init(threads: threads))
            }
            // Compared byte for byte: `Value`'s equality, as Swift's, takes the two spellings for one.
            let spelling = answer.rows.first?.first?.stringValue.map { Array($0.utf8) }
            #expect(answer.rows.count == 2 && answer.rows == expected.rows)
            #expect(spelling == expected.rows.first?.first?.stringValue.map { Array($0.utf8) }, "\(threads) threads")
            #expect(try store.read { $0.sessionBucketLimit } > 1, "the index spans buckets a split shares out")
        }
    }
}

/// A session's first profile, placement and variation are the first values any of its events carries in `(time, seq)`
/// order, not in key order: from its earliest event when that one carries them, else from the next that does (the
/// session then read whole); a later value never replaces an earlier one, and a session whose events carry none has
/// none. A flag comes from any of the session's events, at any screen or outside the page.
@Test func firstValuesAndFlagsFromTheIndexAreTheSessionsOwn() throws {
    func at(
        _ seconds: Double, _ session: String, screen: Int?, profile: String? = nil, placement: String? = nil,
        variation: String? = nil, _ payload: Payload
    ) -> Event {
        Event(
            time: Timestamp(microseconds: base + Int64(seconds * 1_000_000)), session: session, profile: profile,
            placement: placement, variation: variation,
            meta: screen.map {
                Meta(onboardingID: "onb_1", screenClientID: "c\($0)", screenIndex: $0, totalScreens: 4)
            },
            payload: payload)
    }
    let outside = Payload.error(OnboardingError(domain: "d", code: 1, message: "m"))
    var events = [
        // Earliest event outside the page and bare; the values come later, and a second variation after them.
        at(1, "late", screen: nil, outside),
        at(2, "late", screen: 2, profile: "p-late", placement: "pl-late", variation: "v-late", presented),
        at(3, "late", screen: 0, variation: "v-other", .close(actionID: "x")),
        // The later event first, in a batch of its own (each batch's references are a run of the index), and the
        // earliest in the next batch at a screen after it: key order meets the later one first.
        at(11, "keyed", screen: 0, profile: "p-other", placement: "pl-other", variation: "v-second", completedEvent),
        at(10, "keyed", screen: 3, profile: "p-keyed", placement: "pl-keyed", variation: "v-first", presented),
        // Only the profile on the earliest event: placement and variation from the one after.
        at(20, "split", screen: 1, profile: "p-split", started),
        at(21, "split", screen: 1, placement: "pl-split", variation: "v-split", .openPaywall(actionID: "buy")),
        // No value at all.
        at(30, "bare", screen: 0, started),
        at(31, "bare", screen: nil, .analytics(AnalyticsEvent(name: "user_email_collected"))),
        at(32, "bare", screen: 1, .analytics(.unknown(name: "my_event"))),
    ]
    // More sessions, so that a split has buckets to share out.
    events += padding(sessions: 100).map {
        var e = $0
        e.time.microseconds += 100 * second
        return e
    }
    try withTemporaryStore { store in
        _ = try store.append(Array(events.prefix(4)))
        _ = try store.append(Array(events.dropFirst(4)))
        let memory = InMemoryEventSource(events)
        let disk = StoreEventSource(store)
        let query = try Query.parse(
            """
            sessions | where onboarding == "onb_1" or events > 1 \
            | stats count() by profile, placement, variation, completed, paywall, closed, email_collected, \
            did("my_event")
            """)
        let checked = query.checked
        #expect(FoldNeeds(checked, now: Timestamp(microseconds: base)).fromSessionIndex)
        let expected = try query.run(on: memory)
        #expect(
            expected.render(.csv) == """
                profile,placement,variation,completed,paywall,closed,email_collected,"did(""my_event"")",count()
                p-keyed,pl-keyed,v-first,true,false,false,false,false,1
                p-late,pl-late,v-late,false,false,true,false,false,1
                p-split,pl-split,v-split,false,true,false,false,false,1
                ,,,false,false,false,true,true,1

                """)
        for (threads, share) in [(1, 1.0), (1, .infinity), (2, .infinity)] {
            let answer = try StoreEventSource.$minimumPartEvents.withValue(1) {
                try StoreEventSource.$flagReadShare.withValue(share) {
                    try query.run(on: disk, options: .init(threads: threads))
                }
            }
            #expect(answer.rows == expected.rows, "\(threads) threads:\n\(answer.render(.table))")
        }
    }
}

/// The flags come from the blocks that hold their events only when those blocks are few: `onboarding_completed` lies in
/// the last screens' blocks, `screen_presented` in every block and a third of the events, which a fold of every event
/// reads for less.
@Test func flagsAreReadFromTheirBlocksOnlyWhenTheBlocksAreFew() throws {
    try withTemporaryStore { store in
        _ = try store.append(Array(SyntheticData(sessions: 400, seed: 7, onboardings: 3).events()))
        try store.read { snapshot in
            let events = try snapshot.stats().events
            let strings = SnapshotStrings(snapshot)
            func few(_ flag: SessionEventFlag) throws -> Bool {
                try StoreEventSource.flagsAreFew(snapshot, [flag], events: events, strings: strings)
            }
            #expect(try few(.name(AnalyticsName.onboardingCompleted.rawValue)))
            #expect(try few(.name(AnalyticsName.userEmailCollected.rawValue)))
            #expect(try !few(.name(AnalyticsName.screenPresented.rawValue)))
            #expect(try !few(.kind(.stateUpdated)))
        }
    }
}

/// Two first values spelled apart that Swift compares equal are one group, named as the session met first in key order
/// names it: the fold of each run's first references, which meets sessions in another order, reads the index again in
/// key order, as the scan of the event blocks gives it.
@Test func firstValuesSpelledApartButEqualKeepTheKeyOrdersSpelling() throws {
    let decomposed = "Cafe\u{301}", composed = "Caf\u{E9}"
    func at(_ seconds: Double, _ session: String, _ variation: String) -> Event {
        Event(
            time: Timestamp(microseconds: base + Int64(seconds * 1_000_000)), session: session, variation: variation,
            meta: Meta(onboardingID: "onb_1", screenClientID: "c0", screenIndex: 0, totalScreens: 2),
            payload: presented)
    }
    try withTemporaryStore { store in
        // Key order (time within the one group) meets s2 first; the index meets s1 first (its id is interned first,
        // and its batch is stored first).
        _ = try store.append([at(20, "s1", decomposed)])
        _ = try store.append([at(10, "s2", composed)])
        for text in ["sessions | count by variation", "sessions | top 1 variation"] {
            let query = try Query.parse(text)
            let checked = query.checked
            #expect(FoldNeeds(checked, now: Timestamp(microseconds: base)).firstsOnly)
            let expected = try query.run(on: StoreEventSource(store), options: .init(ignoreDamaged: true))
            let answer = try query.run(on: StoreEventSource(store))
            let spelling = answer.rows.first?.first?.stringValue.map { Array($0.utf8) }
            // Compared byte for byte: `Value`'s equality, as Swift's, takes the two spellings for one.
            #expect(answer.rows.count == 1 && answer.rows == expected.rows)
            #expect(spelling == Array(composed.utf8), "\(text)")
            #expect(expected.rows.first?.first?.stringValue.map { Array($0.utf8) } == Array(composed.utf8))
        }
    }
}
