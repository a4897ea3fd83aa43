import BoardwalkJSON
import BoardwalkModel
import Testing

/// Wire, docs, bridge and envelope shapes for every kind and value type.
@Suite struct ShapeTests {
    static let view = #""view":{"id":"v1","placement_id":"p1","variation_id":"x1"}"#
    static func ev(
        _ payload: Payload, meta: Meta? = meta, session: String? = nil, placement: String? = nil,
        variation: String? = nil, time: Timestamp = arrival
    ) -> Event {
        Event(time: time, session: session, placement: placement, variation: variation, meta: meta, payload: payload)
    }
    static func bridged(_ payload: Payload, meta: Meta? = meta) -> Event {
        ev(payload, meta: meta, session: "v1", placement: "p1", variation: "x1")
    }
    static let choiceA = Choice(id: "a", value: "va", label: "A")
    static let choiceB = Choice(id: "b", value: "vb", label: "B")
    static let a = #"{"id":"a","value":"va","label":"A"}"#
    static let b = #"{"id":"b","value":"vb","label":"B"}"#

    static let cases: [(String, String, Event)] = [
        // The web view's wire message.
        (
            "wire analytics", #"{"type":"analytics","name":"screen_presented","meta":\#(metaJSON)}"#,
            ev(.analytics(.screenPresented))
        ),
        (
            "wire screen_completed",
            #"{"type":"analytics","name":"screen_completed","params":{"element_id":"e","reply":"r"},"meta":\#(metaJSON)}"#,
            ev(.analytics(.screenCompleted(elementID: "e", reply: "r")))
        ),
        (
            "wire screen_completed keeps empty strings",
            #"{"type":"analytics","name":"screen_completed","params":{"element_id":"","reply":"null"},"meta":\#(metaJSON)}"#,
            ev(.analytics(.screenCompleted(elementID: "", reply: "null")))
        ),
        (
            "wire screen_completed nulls",
            #"{"type":"analytics","name":"screen_completed","params":{"element_id":null,"reply":null},"meta":\#(metaJSON)}"#,
            ev(.analytics(.screenCompleted(elementID: nil, reply: nil)))
        ),
        (
            "wire unknown name", #"{"type":"analytics","name":"navigation_failed","meta":\#(metaJSON)}"#,
            ev(.analytics(.unknown(name: "navigation_failed")))
        ),
        (
            "wire registration", #"{"type":"analytics","name":"registration_screen_presented","meta":\#(metaJSON)}"#,
            ev(.analytics(.registrationScreenPresented))
        ),
        (
            "wire products", #"{"type":"analytics","name":"products_screen_presented","meta":\#(metaJSON)}"#,
            ev(.analytics(.productsScreenPresented))
        ),
        (
            "wire select",
            #"{"type":"state_updated","element_id":"e","element_type":"select","value":\#(a),"meta":\#(metaJSON)}"#,
            ev(.stateUpdated(StateUpdate(elementID: "e", value: .select(choiceA))))
        ),
        (
            "wire multi_select",
            #"{"type":"state_updated","element_id":"e","element_type":"multi_select","value":[\#(a),\#(b)],"meta":\#(metaJSON)}"#,
            ev(.stateUpdated(StateUpdate(elementID: "e", value: .multiSelect([choiceA, choiceB]))))
        ),
        (
            "wire empty multi_select",
            #"{"type":"state_updated","element_id":"e","element_type":"multi_select","value":[],"meta":\#(metaJSON)}"#,
            ev(.stateUpdated(StateUpdate(elementID: "e", value: .multiSelect([]))))
        ),
        (
            "wire text",
            #"{"type":"state_updated","element_id":"e","element_type":"input","value":{"type":"text","value":"hi"},"meta":\#(metaJSON)}"#,
            ev(.stateUpdated(StateUpdate(elementID: "e", value: .input(.text("hi")))))
        ),
        (
            "wire email",
            #"{"type":"state_updated","element_id":"e","element_type":"input","value":{"type":"email","value":"a@b.c"},"meta":\#(metaJSON)}"#,
            ev(.stateUpdated(StateUpdate(elementID: "e", value: .input(.email("a@b.c")))))
        ),
        (
            "wire number 25",
            #"{"type":"state_updated","element_id":"e","element_type":"input","value":{"type":"number","value":25},"meta":\#(metaJSON)}"#,
            ev(.stateUpdated(StateUpdate(elementID: "e", value: .input(.number(25)))))
        ),
        (
            "wire number -1.5e3",
            #"{"type":"state_updated","element_id":"e","element_type":"input","value":{"type":"number","value":-1.5e3},"meta":\#(metaJSON)}"#,
            ev(.stateUpdated(StateUpdate(elementID: "e", value: .input(.number(-1500)))))
        ),
        (
            "flutter number as text",
            #"{"type":"state_updated","element_id":"e","element_type":"input","value":{"type":"number","value":"25.5"},"meta":\#(metaJSON)}"#,
            ev(.stateUpdated(StateUpdate(elementID: "e", value: .input(.number(25.5)))))
        ),
        (
            "wire date year only",
            #"{"type":"state_updated","element_id":"e","element_type":"date_picker","value":{"year":1995},"meta":\#(metaJSON)}"#,
            ev(.stateUpdated(StateUpdate(elementID: "e", value: .datePicker(DateParts(year: 1995)))))
        ),
        (
            "wire date with null",
            #"{"type":"state_updated","element_id":"e","element_type":"date_picker","value":{"day":3,"month":null,"year":2001},"meta":\#(metaJSON)}"#,
            ev(.stateUpdated(StateUpdate(elementID: "e", value: .datePicker(DateParts(year: 2001, day: 3)))))
        ),
        (
            "wire open_paywall empty id", #"{"type":"open_paywall","action_id":"","meta":\#(metaJSON)}"#,
            ev(.openPaywall(actionID: ""))
        ),
        ("wire custom", #"{"type":"custom","action_id":"login","meta":\#(metaJSON)}"#, ev(.custom(actionID: "login"))),
        ("wire close", #"{"type":"close","action_id":"x","meta":\#(metaJSON)}"#, ev(.close(actionID: "x"))),
        ("wire loaded", #"{"type":"onboarding_loaded","meta":\#(metaJSON)}"#, ev(.onboardingLoaded)),
        (
            "error with meta",
            #"{"type":"error","error":{"domain":"AdaptyUIError","code":4200,"message":"webkit"},"meta":\#(metaJSON)}"#,
            ev(.error(OnboardingError(domain: "AdaptyUIError", code: 4200, message: "webkit")))
        ),
        (
            "error without meta", #"{"type":"error","error":{"domain":"http","code":-1,"message":""}}"#,
            ev(.error(OnboardingError(domain: "http", code: -1, message: "")), meta: nil)
        ),
        (
            "error by shape", #"{"error":{"domain":"ssl","code":7,"message":"bad cert"}}"#,
            ev(.error(OnboardingError(domain: "ssl", code: 7, message: "bad cert")), meta: nil)
        ),

        // The docs' shapes, camelCase and snake_case, without "type".
        (
            "docs analytics snake",
            #"{"name":"screen_completed","meta":\#(metaJSON),"params":{"element_id":"e","reply":"r"}}"#,
            ev(.analytics(.screenCompleted(elementID: "e", reply: "r")))
        ),
        (
            "docs analytics camel meta, totalScreens",
            #"{"name":"onboarding_started","meta":{"onboardingId":"o1","screenClientId":"s1","screenIndex":1,"totalScreens":3}}"#,
            ev(.analytics(.onboardingStarted))
        ),
        (
            "docs state snake multiSelect",
            #"{"element_id":"e","meta":\#(metaJSON),"params":{"type":"multiSelect","value":[\#(b)]}}"#,
            ev(.stateUpdated(StateUpdate(elementID: "e", value: .multiSelect([choiceB]))))
        ),
        (
            "docs state datePicker",
            #"{"elementId":"e","meta":\#(metaJSON),"params":{"type":"datePicker","value":{"month":12}}}"#,
            ev(.stateUpdated(StateUpdate(elementID: "e", value: .datePicker(DateParts(month: 12)))))
        ),
        (
            "docs state input number",
            #"{"elementId":"e","meta":\#(metaJSON),"params":{"type":"input","value":{"type":"number","value":0.1}}}"#,
            ev(.stateUpdated(StateUpdate(elementID: "e", value: .input(.number(0.1)))))
        ),
        ("docs loaded", #"{"meta":\#(metaJSON)}"#, ev(.onboardingLoaded)),
        (
            "docs action with kind", #"{"kind":"open_paywall","actionId":"p","meta":\#(metaJSON)}"#,
            ev(.openPaywall(actionID: "p"))
        ),
        (
            "type and kind agree", #"{"kind":"close","type":"close","action_id":"p","meta":\#(metaJSON)}"#,
            ev(.close(actionID: "p"))
        ),

        // The cross-platform bridge.
        (
            "bridge analytics, Android empty strings",
            #"{"id":"onboarding_on_analytics_action",\#(view),"meta":\#(metaJSON),"event":{"name":"screen_completed","element_id":"","reply":"null"}}"#,
            bridged(.analytics(.screenCompleted(elementID: nil, reply: nil)))
        ),
        (
            "bridge analytics values",
            #"{"id":"onboarding_on_analytics_action",\#(view),"meta":\#(metaJSON),"event":{"name":"screen_completed","element_id":"e","reply":"r"}}"#,
            bridged(.analytics(.screenCompleted(elementID: "e", reply: "r")))
        ),
        (
            "bridge Android unknown",
            #"{"id":"onboarding_on_analytics_action",\#(view),"meta":\#(metaJSON),"event":{"name":"unknown"}}"#,
            bridged(.analytics(.unknown(name: "unknown")))
        ),
        (
            "bridge analytics without id", #"{\#(view),"meta":\#(metaJSON),"event":{"name":"onboarding_completed"}}"#,
            bridged(.analytics(.onboardingCompleted))
        ),
        (
            "bridge select",
            #"{"id":"onboarding_on_state_updated_action",\#(view),"meta":\#(metaJSON),"action":{"element_id":"e","element_type":"select","value":\#(a)}}"#,
            bridged(.stateUpdated(StateUpdate(elementID: "e", value: .select(choiceA))))
        ),
        (
            "bridge multi_select",
            #"{"id":"onboarding_on_state_updated_action",\#(view),"meta":\#(metaJSON),"action":{"element_id":"e","element_type":"multi_select","value":[\#(a)]}}"#,
            bridged(.stateUpdated(StateUpdate(elementID: "e", value: .multiSelect([choiceA]))))
        ),
        (
            "bridge input",
            #"{"id":"onboarding_on_state_updated_action",\#(view),"meta":\#(metaJSON),"action":{"element_id":"e","element_type":"input","value":{"type":"email","value":"x@y"}}}"#,
            bridged(.stateUpdated(StateUpdate(elementID: "e", value: .input(.email("x@y")))))
        ),
        (
            "bridge date",
            #"{"id":"onboarding_on_state_updated_action",\#(view),"meta":\#(metaJSON),"action":{"element_id":"e","element_type":"date_picker","value":{}}}"#,
            bridged(.stateUpdated(StateUpdate(elementID: "e", value: .datePicker(DateParts()))))
        ),
        (
            "bridge close", #"{"id":"onboarding_on_close_action",\#(view),"meta":\#(metaJSON),"action_id":"c"}"#,
            bridged(.close(actionID: "c"))
        ),
        (
            "bridge custom", #"{"id":"onboarding_on_custom_action",\#(view),"meta":\#(metaJSON),"action_id":"c"}"#,
            bridged(.custom(actionID: "c"))
        ),
        (
            "bridge paywall", #"{"id":"onboarding_on_paywall_action",\#(view),"meta":\#(metaJSON),"action_id":"c"}"#,
            bridged(.openPaywall(actionID: "c"))
        ),
        (
            "bridge loaded", #"{"id":"onboarding_did_finish_loading",\#(view),"meta":\#(metaJSON)}"#,
            bridged(.onboardingLoaded)
        ),
        (
            "bridge error",
            #"{"id":"onboarding_did_fail_with_error",\#(view),"error":{"adapty_code":4200,"message":"webkit","detail":"timeout"}}"#,
            bridged(.error(OnboardingError(domain: "AdaptyError", code: 4200, message: "webkit (timeout)")), meta: nil)
        ),

        // Envelopes.
        (
            "iso timestamp",
            #"{"timestamp":"2026-11-01T10:00:00.123456Z","type":"onboarding_loaded","meta":\#(metaJSON)}"#,
            ev(.onboardingLoaded, time: Timestamp(iso8601: "2026-11-01T10:00:00.123456Z")!)
        ),
        (
            "epoch ms ts", #"{"ts":1793527200123,"type":"onboarding_loaded","meta":\#(metaJSON)}"#,
            ev(.onboardingLoaded, time: Timestamp(milliseconds: 1_793_527_200_123))
        ),
        (
            "created_at with zone",
            #"{"created_at":"2026-11-01T12:00:00+02:00","type":"onboarding_loaded","meta":\#(metaJSON)}"#,
            ev(.onboardingLoaded, time: Timestamp(iso8601: "2026-11-01T10:00:00Z")!)
        ),
        (
            "received_at in epoch seconds",
            #"{"received_at":1793491200,"type":"onboarding_loaded","meta":\#(metaJSON)}"#,
            ev(.onboardingLoaded, time: Timestamp(microseconds: 1_793_491_200_000_000))
        ),
        (
            "null time is arrival", #"{"timestamp":null,"type":"onboarding_loaded","meta":\#(metaJSON)}"#,
            ev(.onboardingLoaded)
        ),
        (
            "all ids",
            #"{"session_id":"s","profile_id":"pr","event_id":"id1","placement_id":"pl","variation_id":"va","type":"onboarding_loaded","meta":\#(metaJSON)}"#,
            Event(
                time: arrival, session: "s", profile: "pr", eventID: "id1", placement: "pl", variation: "va",
                meta: meta, payload: .onboardingLoaded)
        ),
        (
            "camel ids",
            #"{"sessionId":"s","profileId":"pr","eventId":"id1","placementId":"pl","variationId":"va","type":"onboarding_loaded","meta":\#(metaJSON)}"#,
            Event(
                time: arrival, session: "s", profile: "pr", eventID: "id1", placement: "pl", variation: "va",
                meta: meta, payload: .onboardingLoaded)
        ),
        (
            "null ids are absent",
            #"{"session_id":null,"profile_id":null,"type":"onboarding_loaded","meta":\#(metaJSON)}"#,
            ev(.onboardingLoaded)
        ),
        (
            "view id equal to session id",
            #"{"session_id":"v1",\#(view),"type":"onboarding_loaded","meta":\#(metaJSON)}"#, bridged(.onboardingLoaded)
        ),
        (
            "wrapped wire message",
            #"{"timestamp":1793491200000,"session_id":"s","event":{"type":"close","action_id":"x","meta":\#(metaJSON)}}"#,
            ev(.close(actionID: "x"), session: "s", time: Timestamp(microseconds: 1_793_491_200_000_000))
        ),
        (
            "wrapped bridge message",
            #"{"ts":1793491200000,"event":{"id":"onboarding_on_analytics_action",\#(view),"meta":\#(metaJSON),"event":{"name":"screen_presented"}}}"#,
            bridged(.analytics(.screenPresented)).with(time: Timestamp(microseconds: 1_793_491_200_000_000))
        ),
        (
            "envelope inside the wrapped message",
            #"{"event":{"timestamp":1793491200000,"session_id":"s","type":"custom","action_id":"x","meta":\#(metaJSON)}}"#,
            ev(.custom(actionID: "x"), session: "s", time: Timestamp(microseconds: 1_793_491_200_000_000))
        ),
        (
            "unknown fields are skipped",
            #"{"type":"close","x":[1,{"y":null}],"action_id":"x","meta":{"extra":true,"onboarding_id":"o1","screen_cid":"s1","screen_index":1,"total_screens":3}}"#,
            ev(.close(actionID: "x"))
        ),
        ("escaped keys", #"{"t\u0079pe":"close","action_id":"x","meta":\#(metaJSON)}"#, ev(.close(actionID: "x"))),
        (
            "escapes in strings", #"{"type":"custom","action_id":"a\"b\\c\n\u00e9\ud83d\ude00","meta":\#(metaJSON)}"#,
            ev(.custom(actionID: "a\"b\\c\né😀"))
        ),
        ("CRLF line ending", "{\"type\":\"onboarding_loaded\",\"meta\":\(metaJSON)}\r", ev(.onboardingLoaded)),
        (
            "last screen",
            #"{"type":"onboarding_loaded","meta":{"onboarding_id":"o","screen_cid":"final","screen_index":65534,"total_screens":65535}}"#,
            ev(
                .onboardingLoaded,
                meta: Meta(onboardingID: "o", screenClientID: "final", screenIndex: 65534, totalScreens: 65535))
        ),
    ]

    @Test func everyShape() throws {
        let reader = try EventReader()
        for (name, line, expected) in Self.cases {
            let got = Result { () throws(JSONReadError) -> Event in try reader.read(line, arrival: arrival) }
            #expect(got == .success(expected), "\(name)")
        }
    }

    @Test func bomIsSkippedOnLineOne() throws {
        let reader = try EventReader()
        let line = "\u{FEFF}{\"type\":\"onboarding_loaded\",\"meta\":\(metaJSON)}"
        #expect(try reader.read(line, lineNumber: 1, arrival: arrival) == Self.ev(.onboardingLoaded))
        // A column after the BOM still counts the BOM's three bytes.
        let bad = "\u{FEFF}{\"type\":\"nope\",\"meta\":\(metaJSON)}"
        #expect(throws: JSONReadError.self) { try reader.read(bad, lineNumber: 1, arrival: arrival) }
        do { _ = try reader.read(bad, lineNumber: 1, arrival: arrival) } catch {
            #expect(error.column == 12)
        }
    }

    @Test func canonicalLineFormat() {
        let event = Event(
            time: Timestamp(iso8601: "2026-11-01T10:00:00.123456Z")!, session: "s", profile: "p", eventID: "e",
            placement: "pl", variation: "v", meta: meta,
            payload: .analytics(.screenCompleted(elementID: "el", reply: nil)))
        #expect(
            CanonicalJSON.line(event)
                == #"{"timestamp":"2026-11-01T10:00:00.123456Z","session_id":"s","profile_id":"p","event_id":"e","placement_id":"pl","variation_id":"v","type":"analytics","name":"screen_completed","params":{"element_id":"el"},"meta":{"onboarding_id":"o1","screen_cid":"s1","screen_index":1,"total_screens":3}}"#
        )
        let update = Event(
            time: Timestamp(microseconds: 0), meta: meta,
            payload: .stateUpdated(
                StateUpdate(
                    elementID: "age", value: .input(.number(25)))))
        #expect(
            CanonicalJSON.line(update)
                == #"{"timestamp":"1970-01-01T00:00:00.000000Z","type":"state_updated","element_id":"age","element_type":"input","value":{"type":"number","value":25.0},"meta":{"onboarding_id":"o1","screen_cid":"s1","screen_index":1,"total_screens":3}}"#
        )
        let error = Event(
            time: Timestamp(microseconds: 1), meta: nil,
            payload: .error(OnboardingError(domain: "d\u{1}", code: -5, message: "tab\t")))
        #expect(
            CanonicalJSON.line(error)
                == #"{"timestamp":"1970-01-01T00:00:00.000001Z","type":"error","error":{"domain":"d\u0001","code":-5,"message":"tab\t"}}"#
        )
    }

    @Test func numbersRoundTripExactly() throws {
        let reader = try EventReader()
        let values: [Double] = [
            0, -0.0, 25, -1.5, 1e300, -1e300, .leastNonzeroMagnitude, .leastNormalMagnitude, .greatestFiniteMagnitude,
            0.1, 1.0 / 3.0, 123_456_789.125, Double(Int64.max), Double.leastNonzeroMagnitude.nextUp,
            2.2250738585072014e-308,
            .infinity, -.infinity,
        ]
        for v in values {
            let event = Self.ev(.stateUpdated(StateUpdate(elementID: "n", value: .input(.number(v)))))
            let back = try reader.read(CanonicalJSON.line(event), arrival: arrival)
            guard case .stateUpdated(let u) = back.payload, case .input(.number(let d)) = u.value else {
                Issue.record("not a number input"); continue
            }
            #expect(d.bitPattern == v.bitPattern, "\(v) came back as \(d)")
        }
        let nan = Self.ev(.stateUpdated(StateUpdate(elementID: "n", value: .input(.number(.nan)))))
        guard case .stateUpdated(let u) = try reader.read(CanonicalJSON.line(nan), arrival: arrival).payload,
            case .input(.number(let d)) = u.value
        else { Issue.record("NaN"); return }
        #expect(d.isNaN)
    }
}

extension Event {
    func with(time: Timestamp) -> Event {
        var e = self
        e.time = time
        return e
    }
}
