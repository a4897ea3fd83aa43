import BoardwalkJSON
import BoardwalkModel
import Foundation
import Testing

/// Every JSON example of the three seed documents (extracted verbatim into Fixtures/seeds), read as one line.
@Suite struct SeedExampleTests {
    static func m(_ screen: String, _ index: Int, _ total: Int) -> Meta {
        Meta(onboardingID: "onboarding_123", screenClientID: screen, screenIndex: index, totalScreens: total)
    }

    /// Examples whose shape says their kind, by file-name suffix (docs 000 and 001 hold the same examples).
    static let shaped: [(String, Meta, Payload)] = [
        ("03-meta_only", m("welcome_screen", 0, 4), .onboardingLoaded),
        ("04-onboarding_started", m("welcome_screen", 0, 4), .analytics(.onboardingStarted)),
        ("05-screen_presented", m("interests_screen", 2, 4), .analytics(.screenPresented)),
        (
            "06-screen_completed", m("profile_screen", 1, 4),
            .analytics(.screenCompleted(elementID: "profile_form", reply: "success"))
        ),
        ("07-second_screen_presented", m("profile_screen", 1, 4), .analytics(.secondScreenPresented)),
        ("08-user_email_collected", m("profile_screen", 1, 4), .analytics(.userEmailCollected)),
        ("09-onboarding_completed", m("final_screen", 3, 4), .analytics(.onboardingCompleted)),
    ]

    static let stateExamples: [(String, Meta, StateUpdate)] = [
        (
            "002-00-state_select.json", m("preferences_screen", 1, 3),
            StateUpdate(
                elementID: "preference_selector",
                value: .select(Choice(id: "option_1", value: "premium", label: "Premium Plan")))
        ),
        (
            "002-01-state_multiSelect.json", m("interests_screen", 2, 3),
            StateUpdate(
                elementID: "interests_selector",
                value: .multiSelect([
                    Choice(id: "interest_1", value: "sports", label: "Sports"),
                    Choice(id: "interest_2", value: "music", label: "Music"),
                ]))
        ),
        (
            "002-02-state_input.json", m("profile_screen", 0, 3),
            StateUpdate(elementID: "name_input", value: .input(.text("John Doe")))
        ),
        (
            "002-03-state_datePicker.json", m("profile_screen", 0, 3),
            StateUpdate(elementID: "birthday_picker", value: .datePicker(DateParts(year: 1990, month: 6, day: 15)))
        ),
    ]

    /// The action examples: the envelope's kind is needed; `column` is where the action id's value starts.
    static let actions: [(String, EventKind, Meta, String, Int, String)] = [
        ("00-action_allowNotifications", .custom, m("profile_screen", 0, 3), "allowNotifications", 14, "actionId"),
        ("01-action_close_button", .close, m("final_screen", 3, 4), "close_button", 15, "action_id"),
        ("02-action_premium_offer_1", .openPaywall, m("pricing_screen", 2, 4), "premium_offer_1", 15, "action_id"),
    ]

    @Test(arguments: ["000", "001"])
    func shapedExamples(doc: String) throws {
        for (suffix, meta, payload) in Self.shaped {
            let line = oneLine(try fixture("seeds/\(doc)-\(suffix).json"))
            let event = try readOne(line).get()
            #expect(event == Event(time: arrival, meta: meta, payload: payload), "\(doc)-\(suffix)")
        }
    }

    @Test func stateUpdateExamples() throws {
        for (file, meta, update) in Self.stateExamples {
            let event = try readOne(oneLine(try fixture("seeds/" + file))).get()
            #expect(event == Event(time: arrival, meta: meta, payload: .stateUpdated(update)), "\(file)")
        }
    }

    @Test(arguments: ["000", "001"])
    func actionExamplesNeedAKind(doc: String) throws {
        for (suffix, _, _, _, column, key) in Self.actions {
            let line = oneLine(try fixture("seeds/\(doc)-\(suffix).json"))
            #expect(throws: JSONReadError.self) { try readOne(line).get() }
            let message = try #require(readOne(line).failure).description
            #expect(
                message
                    == "line 1, column \(column), \(key): an action without \"type\" or \"kind\": custom, close and open_paywall actions look alike, so the envelope must say \"kind\""
            )
        }
    }

    @Test(arguments: ["000", "001"])
    func actionExamplesWithAKind(doc: String) throws {
        for (suffix, kind, meta, id, _, _) in Self.actions {
            let line = oneLine(try fixture("seeds/\(doc)-\(suffix).json"))
            let payload: Payload =
                switch kind {
                case .custom: .custom(actionID: id)
                case .close: .close(actionID: id)
                default: .openPaywall(actionID: id)
                }
            let expected = Event(time: arrival, meta: meta, payload: payload)
            // Flattened envelope, then the message wrapped as "event".
            let flat = #"{"kind":"\#(kind.rawValue)","# + line.dropFirst()
            #expect(try readOne(flat).get() == expected, "\(suffix) flattened")
            let wrapped = #"{"kind":"\#(kind.rawValue)","session_id":"s9","event":"# + line + "}"
            var withSession = expected
            withSession.session = "s9"
            #expect(try readOne(wrapped).get() == withSession, "\(suffix) wrapped")
        }
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let e) = self { return e }
        return nil
    }
}
