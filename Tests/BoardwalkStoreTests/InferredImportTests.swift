import BoardwalkModel
import Testing

@testable import BoardwalkStore

/// Inferred session names (`inferred:<seq>`) are the store's own: an event arriving with one (an export of
/// another store, ingested here) is inferred again instead of joining this store's session of that name (two users'
/// sessions would become one, and `check()` would see nothing wrong).
@Suite struct InferredImportTests {
    func event(_ t: Int64, profile: String, session: String?) -> Event {
        Event(
            time: Timestamp(microseconds: 1_793_527_200_000_000 + t * 1_000_000), session: session, profile: profile,
            meta: Meta(onboardingID: "onb", screenClientID: "c", screenIndex: 0, totalScreens: 2),
            payload: .analytics(.screenPresented))
    }

    @Test func anImportedInferredNameIsInferredAgain() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .init(durability: .noSync))
        // Bob's events have no session: the store names it inferred:0.
        try store.append([event(0, profile: "bob", session: nil), event(10, profile: "bob", session: nil)])
        let bob = try store.read { s in try s.allEvents().map(\.event.session) }
        #expect(bob == ["inferred:0", "inferred:0"])
        // Alice's events, exported from another store where her session was inferred:0 too.
        try store.append([
            event(20, profile: "alice", session: "inferred:0"), event(30, profile: "alice", session: "inferred:0"),
        ])
        let sessions = try store.read { s in try s.allEvents().map { ($0.event.profile!, $0.event.session!) } }
        let alice = Set(sessions.filter { $0.0 == "alice" }.map(\.1))
        #expect(alice.count == 1)
        #expect(!alice.contains("inferred:0"))
        #expect(try store.read { try $0.stats().sessions } == 2)
        #expect(try store.check().isOK)
    }

    @Test(arguments: [
        ("inferred:0", true), ("inferred:18446744073709551615", true), ("inferred:", false),
        ("inferred:12a", false), ("Inferred:1", false), ("inferred:184467440737095516150", false),
        ("3F2504E0-4F89-11D3-9A0C-0305E82C3301", false),
    ])
    func inferredNames(_ name: String, _ expected: Bool) {
        #expect(Store.isInferredName(name) == expected)
        // `normalized` describes stored events: a store's own inferred names stay.
        #expect(Store.normalized(event(0, profile: "p", session: name)).session == name)
    }
}
