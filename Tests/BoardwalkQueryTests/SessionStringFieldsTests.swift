import BoardwalkModel
import BoardwalkStore
import Testing

@testable import BoardwalkQuery

// A session's profile, placement and variation are those of its first event, in (time, seq) order, that carries one
// (rule 12): whatever the order the events were stored in, read over the whole store, one onboarding or split across
// threads, and whether the index of profiles or the events give them.

/// Three sessions whose first event carries no strings and whose later events disagree: `a`'s earliest profile
/// arrives in the last batch; `b`'s placement and variation change; `c` never names a placement.
private let sessions: [Event] = {
    func at(_ t: Double, _ s: String, profile: String?, placement: String?, variation: String?) -> Event {
        var e = ev(t, s, screen: Int(t) % 3, profile: profile, variation: variation, presented)
        e.placement = placement
        return e
    }
    return [
        at(0, "a", profile: nil, placement: nil, variation: nil),
        at(5, "a", profile: "p-late", placement: "main", variation: "v1"),
        at(1, "b", profile: "p-b", placement: "onb_web", variation: "v2"),
        at(9, "b", profile: "p-other", placement: "main", variation: "v1"),
        at(2, "c", profile: "p-c", placement: nil, variation: "v2"),
        at(3, "a", profile: "p-a", placement: "paid", variation: "v2"),  // earlier than `a`'s first named ones
    ]
}()

@Test func foldsKeepEachSessionsFirstProfilePlacementAndVariation() throws {
    let text = "sessions | count by session, profile, placement, variation"
    let expected = [
        ["a", "p-a", "paid", "v2"], ["b", "p-b", "onb_web", "v2"], ["c", "p-c", "-", "v2"],
    ]
    try withTemporaryStore { store in
        try appendInThreeBatches(sessions, to: store)
        let disk = StoreEventSource(store)
        for scope in ["", #"where onboarding == "onb_1" | "#] {
            let query = try Query.parse("sessions | " + scope + text.dropFirst("sessions | ".count))
            #expect(agree(try query.run(on: disk), try query.run(on: InMemoryEventSource(sessions))), "\(scope)")
            for threads in [1, 2, 3] {
                let table = try StoreEventSource.$minimumPartEvents.withValue(1) {
                    try query.run(on: disk, options: .init(threads: threads))
                }
                let rows = table.rows.map { row in row.dropLast().map { Value.tableText($0) } }
                #expect(rows == expected, "\(scope)\(threads) threads")
            }
        }
    }
}

/// Over the whole store, a query that reads no session field but `profile` (and whose answer does not depend on the
/// order of the sessions) takes every session's profile from `session_names`, with no event read; a session whose
/// events carry two profiles makes it fold the events instead, since only they tell which came first.
@Test func profilesComeFromTheNameIndexUnlessASessionCarriesTwo() throws {
    let text = "sessions | count by profile"
    let needs = FoldNeeds(try Query.parse(text).checked, now: Timestamp(microseconds: base))
    #expect(needs.profilesOnly)
    #expect(
        !FoldNeeds(try Query.parse("sessions | count by profile, day(started)").checked, now: .init(microseconds: 0))
            .profilesOnly)
    let oneEach: [Event] = [
        ev(0, "a", profile: "p-1", presented), ev(1, "a", profile: "p-1", presented),
        ev(2, "b", profile: "p-2", presented),
        ev(3, "c", profile: nil, presented), ev(4, "d", profile: "p-1", presented),
        ev(5, nil, screen: nil, profile: "p-3", presented),
    ]
    for (events, fromNames) in [(oneEach, true), (sessions, false)] {
        try withTemporaryStore { store in
            try appendInThreeBatches(events, to: store)
            let disk = StoreEventSource(store)
            let named = try store.read { snapshot in
                var ticker = CancellationTicker(cancellation: nil, text: text)
                return try StoreEventSource.sessionProfiles(
                    snapshot, sessions: try snapshot.stats().sessions, ticker: &ticker)
            }
            #expect((named != nil) == fromNames)
            let grouped = try disk.sessionCountsByProfile(needs: needs, cancellation: nil, text: text)
            #expect((grouped != nil) == fromNames)
            #expect(try Query.parse(text).explain(on: disk).contains("each profile's sessions reduced as one row"))
            #expect(
                try !Query.parse("sessions | stats count(), count_distinct(profile)").explain(on: disk)
                    .contains("each profile's sessions reduced as one row"))
            if let grouped {
                // One group per profile, as the events count them.
                let counted = try Query.parse(text).run(on: InMemoryEventSource(events)).rows.map { row in
                    "\(row[0].stringValue ?? "-")=\(row[1].intValue ?? -1)"
                }
                #expect(grouped.map { "\($0.profile ?? "-")=\($0.sessions)" }.sorted() == counted.sorted())
            }
            for query in [
                text, "sessions | stats count(), count_distinct(profile)", "sessions | top 1 profile",
                #"sessions | where profile != "p-2" | stats count() by profile"#,
                "sessions | count by profile | where count > 1 | count",
                #"sessions | count by profile == "p-1", profile"#,
            ] {
                let parsed = try Query.parse(query)
                let (answer, statistics) = try parsed.execute(on: disk)
                #expect(agree(answer, try parsed.run(on: InMemoryEventSource(events))), "\(query)")
                #expect((statistics.eventsRead == 0) == fromNames, "\(query): \(statistics.eventsRead) events read")
            }
        }
    }
}

/// Two profile ids spelled apart that Swift compares equal would make one group whose spelling depends on the order of
/// the sessions: the name index then declines, and the query folds the events in key order, as a block scan does.
/// ASCII has such spellings too: `K` is the Kelvin sign's decomposition.
@Test(arguments: [("p-\u{E9}", "p-e\u{301}"), ("K", "\u{212A}")])
func profilesSpelledApartButEqualAreFoldedFromTheEvents(spellings: (String, String)) throws {
    let events = [
        ev(0, "a", profile: spellings.0, presented), ev(1, "b", profile: spellings.1, presented),
        ev(2, "c", profile: spellings.0, presented),
    ]
    try withTemporaryStore { store in
        _ = try store.append(events)
        let named = try store.read { snapshot in
            var ticker = CancellationTicker(cancellation: nil, text: "")
            return try StoreEventSource.sessionProfiles(
                snapshot, sessions: try snapshot.stats().sessions, ticker: &ticker)
        }
        #expect(named == nil)
        let needs = FoldNeeds(try Query.parse("sessions | count by profile").checked, now: .init(microseconds: 0))
        #expect(try StoreEventSource(store).sessionCountsByProfile(needs: needs, cancellation: nil, text: "") == nil)
        let query = try Query.parse("sessions | count by profile")
        let (answer, statistics) = try query.execute(on: StoreEventSource(store))
        let scanned = try query.run(on: StoreEventSource(store), options: .init(ignoreDamaged: true))
        #expect(statistics.eventsRead == 3 && answer.rows == scanned.rows && answer.rows.count == 1)
        let spelling = { (table: ResultTable) in table.rows.first?.first?.stringValue.map { Array($0.utf8) } }
        #expect(spelling(answer) == spelling(scanned))
    }
}
