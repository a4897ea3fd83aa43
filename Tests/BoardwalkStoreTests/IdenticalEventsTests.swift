import BoardwalkGenerator
import BoardwalkModel
import Testing

@testable import BoardwalkStore

/// Events without an event id: the same content (time, group and every other field) is the same event, so data sent
/// twice is stored once; `keepIdentical` keeps every one (docs/storage.md, "Duplicates").
@Suite("Events without an id are told apart by their content")
struct IdenticalEventsTests {
    /// A `state_updated` event without an id: a select answer at `time` (µs) on screen `screen`.
    static func answer(
        _ time: Int64, session: String?, screen: Int = 1, option: String = "a", profile: String? = nil
    ) -> Event {
        Event(
            time: Timestamp(microseconds: time), session: session, profile: profile,
            meta: Meta(onboardingID: "onb", screenClientID: "c\(screen)", screenIndex: screen, totalScreens: 5),
            payload: .stateUpdated(
                StateUpdate(elementID: "goal", value: .select(Choice(id: option, value: option, label: option)))))
    }

    /// Two sessions' answers, one without a session (inferred), over ten minutes of one screen and a few others.
    static var batch: [Event] {
        var events: [Event] = []
        for i in 0..<400 {
            let time = 1_000_000_000_000 + Int64(i) * 1_500_000
            events.append(answer(time, session: i % 3 == 0 ? nil : "s\(i % 2)", screen: i % 4, option: "o\(i % 7)"))
        }
        return events
    }

    @Test("The same batch sent again stores nothing: every event is a duplicate, inferred sessions included")
    func resentBatch() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir)
        let first = try store.append(Self.batch)
        #expect(first.appended == 400 && first.duplicates == 0)
        let before = try store.read { try $0.stats() }
        let again = try store.append(Self.batch)
        #expect(again.appended == 0 && again.duplicates == 400)
        let after = try store.read { try $0.stats() }
        #expect(after.events == 400 && after.inferredSessions == before.inferredSessions)
        #expect(after.duplicatesSkipped == 400)
        // Folded into `events` (not read from the event log), a third time.
        try store.foldLogs()
        #expect(try store.append(Self.batch).duplicates == 400)
        // Resent in small pieces and in reverse order, each piece in its own batch.
        for piece in Self.batch.reversed().chunked(37) { #expect(try store.append(piece).appended == 0) }
        #expect(try store.read { try $0.stats().events } == 400)
        #expect(try store.check().isOK)
    }

    @Test("The same event twice in one batch is stored once; with keepIdentical, twice")
    func identicalInOneBatch() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir)
        let e = Self.answer(5_000_000, session: "s")
        let anonymous = Self.answer(6_000_000, session: nil)
        let result = try store.append([e, e, anonymous, anonymous])
        #expect(result.appended == 2 && result.duplicates == 2)
        let kept = try store.append([e, e, anonymous], keepIdentical: true)
        #expect(kept.appended == 3 && kept.duplicates == 0)
        #expect(try store.read { try $0.stats().events } == 5)
        #expect(try store.check().isOK)
    }

    @Test("Events that differ in any field are not duplicates")
    func differentContent() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir)
        let base = Self.answer(7_000_000, session: "s")
        var variants = [
            base, Self.answer(7_000_001, session: "s"), Self.answer(7_000_000, session: "t"),
            Self.answer(7_000_000, session: "s", screen: 2), Self.answer(7_000_000, session: "s", option: "b"),
            Self.answer(7_000_000, session: "s", profile: "p"), Self.answer(7_000_000, session: nil),
        ]
        var placed = base
        placed.placement = "pl"
        variants.append(placed)
        var loaded = base
        loaded.payload = .onboardingLoaded
        variants.append(loaded)
        #expect(try store.append(variants).appended == variants.count)
        // Each again, one batch each: every one is now a duplicate of itself, and of nothing else.
        for event in variants { #expect(try store.append([event]).duplicates == 1) }
        #expect(try store.read { try $0.stats().events } == variants.count)
    }

    @Test("An event with an id is compared by its id, never by its content")
    func idsStillDecide() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir)
        var a = Self.answer(9_000_000, session: "s")
        a.eventID = "a"
        var b = a
        b.eventID = "b"
        let plain = Self.answer(9_000_000, session: "s")
        #expect(try store.append([a, b, plain]).appended == 3)
        #expect(try store.append([a, b, plain]).duplicates == 3)
    }

    @Test("keepIdentical stores a resent batch again, and ids still make duplicates")
    func keepIdenticalResend() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir)
        try store.append(Self.batch)
        var withID = Self.answer(2_000_000, session: "s")
        withID.eventID = "x"
        try store.append([withID])
        let again = try store.append(Self.batch + [withID], keepIdentical: true)
        #expect(again.appended == 400 && again.duplicates == 1)
        #expect(try store.write { try $0.append(Self.batch, keepIdentical: true) }.appended == 400)
        #expect(try store.write { try $0.append(Self.batch) }.duplicates == 400)
        #expect(try store.check().isOK)
    }

    @Test("Generated data sent twice: the second time is all duplicates, with and without event ids")
    func generatedTwice() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir)
        let events = Array(SyntheticData(sessions: 300, seed: 3).events())
        let first = try store.append(events)
        let again = try store.append(events)
        #expect(again.appended == 0)
        #expect(again.duplicates == events.count)
        #expect(first.appended + first.duplicates == events.count)
        #expect(events.contains { $0.eventID == nil })
        // What an in-memory source keeps of them is what the store kept.
        #expect(Store.withoutDuplicates(events).count == first.appended)
        #expect(Store.withoutDuplicates(events + events).count == first.appended)
    }

    @Test("withoutDuplicates keeps what append stores, with and without keepIdentical")
    func inMemoryAgrees() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir)
        var events = Self.batch + Self.batch.prefix(50)
        var withID = Self.answer(3_000_000, session: "s")
        withID.eventID = "i"
        var sameIDOtherScreen = Self.answer(3_000_000, session: "s", screen: 3)
        sameIDOtherScreen.eventID = "i"
        var emptyID = Self.answer(4_000_000, session: "")
        emptyID.eventID = ""
        events += [withID, withID, sameIDOtherScreen, emptyID, emptyID]
        let stored = try store.append(events)
        let kept = Store.withoutDuplicates(events)
        #expect(kept.count == stored.appended)
        #expect(kept.count == 400 + 3)
        #expect(Store.withoutDuplicates(events, keepIdentical: true).count == events.count - 1)
        let exported = try store.read { try $0.events(since: 0).map(\.event) }
        // The same events, inferred sessions aside.
        func comparable(_ e: Event) -> Event {
            var n = Store.normalized(e)
            if let s = n.session, Store.isInferredName(s) { n.session = nil }
            return n
        }
        func counts(_ events: [Event]) -> [Event: Int] {
            events.reduce(into: [:]) { $0[comparable($1), default: 0] += 1 }
        }
        #expect(counts(exported) == counts(kept))
    }
}

extension Array {
    fileprivate func chunked(_ size: Int) -> [[Element]] {
        stride(from: 0, to: count, by: size).map { Array(self[$0..<Swift.min(count, $0 + size)]) }
    }
}
