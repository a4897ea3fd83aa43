import BoardwalkModel
import Testing

@Suite struct EventTests {
    @Test(arguments: AnalyticsName.allCases)
    func knownAnalyticsNamesRoundTrip(name: AnalyticsName) {
        let event = AnalyticsEvent(name: name.rawValue)
        #expect(event.knownName == name)
        #expect(event.name == name.rawValue)
    }

    @Test func unknownAnalyticsNameKeepsItsRawName() {
        let event = AnalyticsEvent(name: "navigation_failed")
        #expect(event == .unknown(name: "navigation_failed"))
        #expect(event.knownName == nil)
        #expect(event.name == "navigation_failed")
    }

    @Test func screenCompletedKeepsElementAndReply() {
        #expect(
            AnalyticsEvent(name: "screen_completed", elementID: "form", reply: "ok")
                == .screenCompleted(elementID: "form", reply: "ok"))
        #expect(AnalyticsEvent(name: "screen_presented", elementID: "form", reply: "ok") == .screenPresented)
    }

    @Test func kindsAreNamedAsOnTheWire() {
        #expect(
            EventKind.allCases.map(\.name) == [
                "analytics", "state_updated", "open_paywall", "custom", "close", "onboarding_loaded", "error",
            ])
        let meta = Meta(onboardingID: "onb", screenClientID: "s", screenIndex: 0, totalScreens: 3)
        let event = Event(time: Timestamp(microseconds: 1), session: "x", meta: meta, payload: .close(actionID: "c"))
        #expect(event.kind == .close)
        #expect(event.payload.actionID == "c")
        #expect(Payload.onboardingLoaded.actionID == nil)
        #expect(StateValue.multiSelect([]).elementType == .multiSelect)
        #expect(ElementType.datePicker.rawValue == "date_picker")
    }
}
