import BoardwalkModel
import Testing

@testable import BoardwalkJSON

/// The reader builds events property by property (``EventLayout``) to avoid a copy `Event.init` costs; the
/// result must be the very event the initializer makes, and the fast path must actually be taken.
@Suite struct EventLayoutTests {
    @Test func layoutCoversEvent() throws {
        // nil would silently fall back to the slower initializer path.
        #expect(EventLayout() != nil)
        #expect(try EventReader().layout != nil)
    }

    @Test(arguments: [false, true])
    func layoutBuildsTheSameEvent(full: Bool) throws {
        let layout = try #require(EventLayout())
        let meta =
            full
            ? Meta(
                onboardingID: "onboarding-" + String(repeating: "x", count: 30), screenClientID: "s",
                screenIndex: 3, totalScreens: 9) : nil
        let payload: Payload =
            full
            ? .stateUpdated(StateUpdate(elementID: "e", value: .multiSelect([Choice(id: "a", value: "b", label: "c")])))
            : .onboardingLoaded
        let long = String(repeating: "y", count: 40)
        let expected = Event(
            time: Timestamp(microseconds: 1_234_567), session: full ? long + "1" : nil, profile: full ? "p" : nil,
            eventID: full ? long + "2" : nil, placement: full ? "placement" : nil, variation: full ? long + "3" : nil,
            meta: meta, payload: payload)
        let out = UnsafeMutablePointer<Event>.allocate(capacity: 1)
        defer { out.deallocate() }
        layout.initialize(
            out, time: expected.time, session: expected.session, profile: expected.profile, eventID: expected.eventID,
            placement: expected.placement, variation: expected.variation, meta: expected.meta, payload: expected.payload
        )
        let built = out.move()
        #expect(built == expected)
        #expect(built.session == expected.session && built.eventID == expected.eventID && built.meta == expected.meta)
    }
}
