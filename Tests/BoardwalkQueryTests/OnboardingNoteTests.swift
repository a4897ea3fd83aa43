import BoardwalkModel
import BoardwalkStore
import Testing

@testable import BoardwalkQuery

/// An onboarding id compared with `onboarding` that has no events in the source gets a note (``Query/notes(on:)``),
/// with the closest id that has events when one is close: a typo in an id otherwise gives an empty result, or an
/// unfiltered one with `!=`, without a word. The query still runs as written.
@Suite struct OnboardingNoteTests {
    static let events: [Event] = [
        ("onb_alpha", "s1", 0), ("onb_alpha", "s2", 1), ("onb_beta", "s3", 0),
        ("9f1c2b7e-0d4a-4a8e-9b1f-3c5d7e9a1b2c", "s4", 2),
    ].enumerated().map { i, e in
        Event(
            time: Timestamp(microseconds: 1_000_000 * Int64(i + 1)), session: e.1, eventID: nil,
            meta: Meta(onboardingID: e.0, screenClientID: "screen_\(e.2)", screenIndex: e.2, totalScreens: 3),
            payload: .analytics(.screenPresented))
    }

    @Test func aTypoInAnOnboardingIDGetsTheClosestOne() throws {
        let query = try Query.parse(#"sessions | where onboarding == "onb_alhpa" | count"#)
        #expect(query.notes.isEmpty, "the checker alone cannot tell")
        let source = InMemoryEventSource(Self.events)
        #expect(
            query.notes(on: source).map(\.description) == [
                """
                note: no events have onboarding `onb_alhpa`; did you mean `onb_alpha`?
                 --> query:1:32
                1 | sessions | where onboarding == "onb_alhpa" | count
                  |                                ^^^^^^^^^^^ 3 onboardings have events
                """
            ])
        #expect(query.notes(on: source).allSatisfy { $0.kind == .note })
        #expect(try query.run(on: source).rows == [[.integer(0)]], "the query runs as written")
    }

    /// In a list, with `!=`, and a UUID one character off; known ids and far ones get no suggestion, each unknown
    /// id one note, and the notes come in the order of the query with the checker's.
    @Test func listsInequalitiesAndOrderWithTheCheckersNotes() throws {
        let source = InMemoryEventSource(Self.events)
        let query = try Query.parse(
            #"""
            events | where name == "screen_presnted" and onboarding in ["onb_beta", "9f1c2b7e-0d4a-4a8e-9b1f-3c5d7e9a1b2d", "zzz"] and onboarding != "zzz" | count
            """#)
        let messages = query.notes(on: source).map(\.message)
        #expect(
            messages == [
                "no known event is named `screen_presnted`; did you mean `screen_presented`?",
                "no events have onboarding `9f1c2b7e-0d4a-4a8e-9b1f-3c5d7e9a1b2d`; did you mean `9f1c2b7e-0d4a-4a8e-9b1f-3c5d7e9a1b2c`?",
                "no events have onboarding `zzz`",
            ])
        #expect(
            try Query.parse(#"sessions | where onboarding in ["onb_alpha", "onb_beta"] | count"#).notes(on: source)
                .isEmpty)
        #expect(try Query.parse("sessions | count by onboarding").notes(on: source).isEmpty)
        // `not in`, and a funnel step's condition, are tests for equality too.
        #expect(
            try Query.parse(#"sessions | where onboarding not in ["onb_betta"] | count"#).notes(on: source).map(
                \.message)
                == ["no events have onboarding `onb_betta`; did you mean `onb_beta`?"])
        #expect(
            try Query.parse(#"sessions | funnel screen_presented(onboarding == "onb_alpah"), close"#).notes(on: source)
                .map(\.message) == ["no events have onboarding `onb_alpah`; did you mean `onb_alpha`?"])
        // An empty id gets no suggestion even where a short id is one edit away.
        let short = InMemoryEventSource([
            Event(
                time: Timestamp(microseconds: 1), session: "s", eventID: nil,
                meta: Meta(onboardingID: "a", screenClientID: "c", screenIndex: 0, totalScreens: 1),
                payload: .analytics(.screenPresented))
        ])
        #expect(
            try Query.parse(#"sessions | where onboarding == "" | count"#).notes(on: short).map(\.message)
                == ["no events have onboarding ``"])
        // After a reduction, a column named `onboarding` may hold anything.
        #expect(
            try Query.parse(#"events | select session as onboarding | where onboarding == "s1""#).notes(on: source)
                .isEmpty)
        // A bound of a range need not be a value that exists: no note, for ids or for event names.
        #expect(
            try Query.parse(#"sessions | where onboarding >= "onb_a" and onboarding < "onb_c" | count"#).notes(
                on: source
            ).isEmpty)
        #expect(try Query.parse(#"events | where name > "screen_presnted" | count"#).notes(on: source).isEmpty)
    }

    /// Five ids are noted one by one, then one note counts the rest (a generated list of thousands of ids would
    /// otherwise print a diagnostic each); a source with no onboarding says so; an empty id gets no suggestion.
    @Test func manyIdsAreCountedAndAnEmptySourceSaysSo() throws {
        let ids = (1...8).map { "\"onb_x\($0)\"" }.joined(separator: ", ")
        let query = try Query.parse("sessions | where onboarding in [\(ids), \"onb_alpha\"] | count")
        let notes = query.notes(on: InMemoryEventSource(Self.events))
        #expect(
            notes.map(\.message) == (1...5).map { "no events have onboarding `onb_x\($0)`" }
                + ["and 3 more onboarding ids of the query with no events"])
        #expect(notes.last?.description == "note: and 3 more onboarding ids of the query with no events")
        let empty = try Query.parse(#"sessions | where onboarding == "onb_alpha" or onboarding == "" | count"#)
            .notes(on: InMemoryEventSource([]))
        #expect(empty.map(\.message) == ["no events have onboarding `onb_alpha`", "no events have onboarding ``"])
        #expect(empty.allSatisfy { $0.label == "no events here have an onboarding" })
    }

    /// The store lists its onboardings; a source that cannot (the protocol's default) adds nothing.
    @Test func theStoreListsItsOnboardingsAndOtherSourcesAddNothing() throws {
        let query = try Query.parse(#"sessions | where onboarding == "onb_bta" | funnel"#)
        try withTemporaryStore { store in
            try store.append(Self.events)
            let notes = query.notes(on: StoreEventSource(store))
            #expect(notes.map(\.message) == ["no events have onboarding `onb_bta`; did you mean `onb_beta`?"])
        }
        #expect(query.notes(on: Unlisted(inner: InMemoryEventSource(Self.events))).isEmpty)
    }

    /// A source without ``EventSource/onboardingNames()`` of its own.
    struct Unlisted: EventSource {
        let inner: InMemoryEventSource
        func scanEvents(_ range: ScanRange, _ body: (InMemoryEventSource.Row) throws(QueryError) -> Bool)
            throws(QueryError)
        {
            try inner.scanEvents(range, body)
        }
        func scanSessions(_ ranges: [ScanRange], _ body: (String, [InMemoryEventSource.Row]) throws(QueryError) -> Bool)
            throws(QueryError)
        {
            try inner.scanSessions(ranges, body)
        }
        func scanSessions(
            _ ranges: [ScanRange], cancellation: CancellationFlag?, text: String,
            _ body: (String, [InMemoryEventSource.Row]) throws(QueryError) -> Bool
        ) throws(QueryError) {
            try inner.scanSessions(ranges, cancellation: cancellation, text: text, body)
        }
        var sessionAccess: String { inner.sessionAccess }
    }
}

/// A screen funnel over sessions of onboardings of different lengths says so beside its result (``RunStatistics/notes``):
/// rule 3 counts a session that completed the shorter onboarding as not reaching the longer one's later steps, which
/// reads as drop-off.
@Suite struct MixedLengthFunnelNoteTests {
    /// A session that presents every screen of an onboarding of `screens` screens.
    static func session(_ id: String, onboarding: String, screens: Int, start: Int64) -> [Event] {
        (0..<screens).map { i in
            Event(
                time: Timestamp(microseconds: start + Int64(i) * 1_000_000), session: id, eventID: nil,
                meta: Meta(onboardingID: onboarding, screenClientID: "s\(i)", screenIndex: i, totalScreens: screens),
                payload: .analytics(.screenPresented))
        }
    }

    @Test func mixedLengthsGetANoteAndOneOnboardingDoesNot() throws {
        let source = InMemoryEventSource(
            Self.session("a", onboarding: "short", screens: 3, start: 0)
                + Self.session("b", onboarding: "long", screens: 5, start: 100_000_000))
        let (table, statistics) = try Query.parse("sessions | funnel").execute(on: source)
        #expect(table.rows.count == 5)
        #expect(
            statistics.notes.map(\.message) == [
                "the funnel's sessions come from onboardings of 3 to 5 screens: a session that completed a shorter one counts "
                    + "as not reaching the later steps (rule 3); `funnel by onboarding`, or `where onboarding == \"…\"`, gives each its own"
            ])
        #expect(statistics.notes.allSatisfy { $0.kind == .note })
        for text in [
            #"sessions | where onboarding == "long" | funnel"#, "sessions | funnel by onboarding",
            "sessions | funnel screen_presented(screen == 0), screen_presented(screen == 4)",
        ] {
            #expect(try Query.parse(text).execute(on: source).statistics.notes.isEmpty, "\(text)")
        }
        // A breakdown other than the onboarding can mix them in a group too.
        #expect(
            try Query.parse("sessions | funnel by placement").execute(on: source).statistics.notes.map(\.message).first?
                .hasPrefix("the sessions of a group of the funnel come from onboardings of 3 to 5 screens") == true)
    }

    /// The store's folds read the same: over the whole store (its lean fold), over a time range, broken down.
    @Test func theStoreNotesMixedLengthsOverTheWholeStoreAndTimeRanges() throws {
        try withTemporaryStore { store in
            _ = try store.append(
                Self.session("a", onboarding: "short", screens: 3, start: 0)
                    + Self.session("b", onboarding: "long", screens: 5, start: 100_000_000))
            let source = StoreEventSource(store)
            for text in [
                "sessions | funnel", "sessions | where started >= @1970-01-01 | funnel",
                "sessions | funnel by placement",
            ] {
                let notes = try Query.parse(text).execute(on: source).statistics.notes.map(\.message)
                #expect(notes.first?.contains("onboardings of 3 to 5 screens") == true, "\(text): \(notes)")
            }
            let one = #"sessions | where onboarding == "long" | funnel"#
            #expect(try Query.parse(one).execute(on: source).statistics.notes.isEmpty)
        }
    }

    /// One onboarding whose sessions disagree on its length is no mix of onboardings: no note, and none that
    /// suggests the filter the query already has.
    @Test func oneOnboardingOfTwoLengthsGetsNoNote() throws {
        let source = InMemoryEventSource(
            Self.session("a", onboarding: "x", screens: 3, start: 0)
                + Self.session("b", onboarding: "x", screens: 5, start: 100_000_000))
        for text in ["sessions | funnel", #"sessions | where onboarding == "x" | funnel"#] {
            #expect(try Query.parse(text).execute(on: source).statistics.notes.isEmpty, "\(text)")
        }
    }
}
