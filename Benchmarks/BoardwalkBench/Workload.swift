// The events every benchmark uses: onboarding sessions told as stories, many sessions in flight at once,
// arriving in time order (which is what makes the ordered key insert in the middle of the tree).
//
// This is the benchmark's own stream, not the `cli` generator: what matters here is a controlled number of
// sessions in flight. Every in-flight session starts at a random point of its life, so the stream is in a
// steady state from its first event: sessions finish and new ones begin all along.
import BoardwalkGenerator
import BoardwalkModel

/// One onboarding of the catalog: its id and its screens.
struct OnboardingPlan {
    enum Screen {
        case info
        case select(elementID: String, choices: [Choice])
        case multiSelect(elementID: String, choices: [Choice])
        case text(elementID: String)
        case email(elementID: String)
        case number(elementID: String)
        case date(elementID: String)
    }

    var id: String
    var screenIDs: [String]
    var screens: [Screen]
}

/// A deterministic stream of events from `sessionsInFlight` concurrent sessions over `onboardings`
/// onboardings.
struct SessionWorkload {
    var sessionsInFlight: Int
    var onboardings: Int = 50
    var seed: UInt64 = 0xB0A2_D3A1_4B00_0001

    /// Generates `count` events in time order.
    func events(_ count: Int) -> [Event] {
        var rng = SplitMix64(seed: seed)
        let catalog = (0..<onboardings).map { _ in Self.plan(rng: &rng) }
        let placements = ["onboarding_main", "onboarding_settings", "reactivation"]
        var live: [SessionState] = []
        live.reserveCapacity(sessionsInFlight)
        var sessionCounter = 0
        func newSession(midLife: Bool) -> SessionState {
            sessionCounter += 1
            let plan = Int(rng.next() % UInt64(catalog.count))
            var s = SessionState(
                session: Self.uuid(&rng), profile: Self.uuid(&rng),
                placement: placements[Int(rng.next() % 3)], variation: "var_\(rng.next() % 3)",
                plan: plan, script: Self.script(catalog[plan], rng: &rng))
            if midLife { s.position = Int(rng.next() % UInt64(s.script.count)) }
            return s
        }
        for _ in 0..<sessionsInFlight { live.append(newSession(midLife: true)) }

        var out: [Event] = []
        out.reserveCapacity(count)
        // Time in milliseconds as apps stamp it; about 1 in 30 events shares its millisecond with the last.
        var time = Timestamp(microseconds: 1_793_491_200_000_000)  // 2026-11-01T00:00:00Z
        while out.count < count {
            let slot = Int(rng.next() % UInt64(live.count))
            if live[slot].position >= live[slot].script.count { live[slot] = newSession(midLife: false) }
            let s = live[slot]
            let plan = catalog[s.plan]
            let step = s.script[s.position]
            live[slot].position += 1
            if rng.next() % 30 != 0 { time.microseconds += Int64(1 + rng.next() % 4) * 1000 }
            let meta: Meta? = step.screen.map {
                Meta(
                    onboardingID: plan.id, screenClientID: plan.screenIDs[$0], screenIndex: $0,
                    totalScreens: plan.screens.count)
            }
            out.append(
                Event(
                    time: time, session: s.session, profile: s.profile, placement: s.placement, variation: s.variation,
                    meta: step.payload.kind == .error ? nil : meta, payload: step.payload))
        }
        return out
    }

    private struct SessionState {
        var session: String
        var profile: String
        var placement: String
        var variation: String
        var plan: Int
        var script: [Step]
        var position = 0
    }

    private struct Step {
        var screen: Int?
        var payload: Payload
    }

    /// A session's whole story, decided up front: how far the user gets, what they answer, how it ends.
    private static func script(_ plan: OnboardingPlan, rng: inout SplitMix64) -> [Step] {
        var steps: [Step] = [Step(screen: 0, payload: .onboardingLoaded)]
        if rng.next() % 200 == 0 {
            steps.append(
                Step(
                    screen: nil,
                    payload: .error(
                        OnboardingError(
                            domain: "AdaptyUIError", code: 4200, message: "The network connection was lost."))))
            return steps
        }
        steps.append(Step(screen: 0, payload: .analytics(.onboardingStarted)))
        let count = plan.screens.count
        for index in 0..<count {
            steps.append(Step(screen: index, payload: .analytics(.screenPresented)))
            if index == 1 { steps.append(Step(screen: index, payload: .analytics(.secondScreenPresented))) }
            // Drop-off grows with the screen index.
            if rng.next() % 100 < UInt64(2 + index) {
                if rng.next() % 2 == 0 { steps.append(Step(screen: index, payload: .close(actionID: "close"))) }
                return steps
            }
            var reply: String?
            switch plan.screens[index] {
            case .info: break
            case .select(let element, let choices):
                let c = choices[Int(rng.next() % UInt64(choices.count))]
                steps.append(
                    Step(screen: index, payload: .stateUpdated(StateUpdate(elementID: element, value: .select(c)))))
                reply = c.value
            case .multiSelect(let element, let choices):
                var picked: [Choice] = []
                for c in choices where rng.next() % 3 == 0 {
                    picked.append(c)
                    steps.append(
                        Step(
                            screen: index,
                            payload: .stateUpdated(StateUpdate(elementID: element, value: .multiSelect(picked)))))
                }
            case .text(let element):
                steps.append(
                    Step(
                        screen: index,
                        payload: .stateUpdated(
                            StateUpdate(
                                elementID: element,
                                value: .input(.text(["Alex", "Sam", "Maria", "Jo"][Int(rng.next() % 4)]))))))
            case .email(let element):
                steps.append(
                    Step(
                        screen: index,
                        payload: .stateUpdated(
                            StateUpdate(
                                elementID: element, value: .input(.email("user\(rng.next() % 100_000)@example.com"))))))
                steps.append(Step(screen: index, payload: .analytics(.userEmailCollected)))
            case .number(let element):
                steps.append(
                    Step(
                        screen: index,
                        payload: .stateUpdated(
                            StateUpdate(
                                elementID: element, value: .input(.number(Double(18 + rng.next() % 60)))))))
            case .date(let element):
                steps.append(
                    Step(
                        screen: index,
                        payload: .stateUpdated(
                            StateUpdate(
                                elementID: element,
                                value: .datePicker(
                                    DateParts(
                                        year: 1950 + Int(rng.next() % 60), month: 1 + Int(rng.next() % 12),
                                        day: rng.next() % 4 == 0 ? nil : 1 + Int(rng.next() % 28)))))))
            }
            if index == count - 2 { steps.append(Step(screen: index, payload: .analytics(.productsScreenPresented))) }
            steps.append(
                Step(screen: index, payload: .analytics(.screenCompleted(elementID: "next_button", reply: reply))))
            if rng.next() % 50 == 0 { steps.append(Step(screen: index, payload: .custom(actionID: "contact_support"))) }
        }
        steps.append(Step(screen: count - 1, payload: .analytics(.onboardingCompleted)))
        if rng.next() % 3 != 0 {
            steps.append(Step(screen: count - 1, payload: .openPaywall(actionID: "paywall_main")))
        }
        steps.append(Step(screen: count - 1, payload: .close(actionID: "")))
        return steps
    }

    private static func plan(rng: inout SplitMix64) -> OnboardingPlan {
        let count = 5 + Int(rng.next() % 16)
        var ids: [String] = []
        var screens: [OnboardingPlan.Screen] = []
        let answers = ["beginner", "amateur", "pro", "music", "sports", "travel", "reading", "cooking"]
        for i in 0..<count {
            let element = "q\(i)_answer"
            let choices = (0..<(2 + Int(rng.next() % 5))).map { j in
                Choice(
                    id: "opt_\(j)", value: answers[(j + i) % answers.count],
                    label: answers[(j + i) % answers.count].capitalized)
            }
            let screen: OnboardingPlan.Screen
            switch i == 0 || i == count - 1 ? 0 : rng.next() % 8 {
            case 0, 1: screen = .info
            case 2, 3: screen = .select(elementID: element, choices: choices)
            case 4: screen = .multiSelect(elementID: element, choices: choices)
            case 5: screen = i % 2 == 0 ? .email(elementID: "email") : .text(elementID: "name")
            case 6: screen = .number(elementID: "age")
            default: screen = .date(elementID: "birthday")
            }
            ids.append(i == count - 1 ? "final" : i == 0 ? "welcome" : "screen_\(i)")
            screens.append(screen)
        }
        return OnboardingPlan(id: uuid(&rng), screenIDs: ids, screens: screens)
    }

    static func uuid(_ rng: inout SplitMix64) -> String {
        let hex = Array("0123456789abcdef".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(36)
        var a = rng.next()
        var b = rng.next()
        for i in 0..<32 {
            if i == 8 || i == 12 || i == 16 || i == 20 { bytes.append(UInt8(ascii: "-")) }
            let nibble: UInt64
            if i < 16 { nibble = a & 15; a >>= 4 } else { nibble = b & 15; b >>= 4 }
            bytes.append(hex[Int(nibble)])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension String {
    fileprivate var capitalized: String { prefix(1).uppercased() + dropFirst() }
}
