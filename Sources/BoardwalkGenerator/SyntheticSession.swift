import BoardwalkModel

/// One synthetic session: one user's pass through one onboarding, and the events it produced.
package struct SyntheticSession: Hashable, Sendable {
    /// How a session ended.
    package enum Outcome: Hashable, Sendable {
        /// The user reached the `final` screen (`onboarding_completed` was sent).
        case completed
        /// The user pressed a close button on this screen.
        case closed(screenIndex: Int)
        /// The onboarding failed on this screen (`nil`: while loading, before any screen).
        case failed(screenIndex: Int?)
        /// The user left this screen without a word (app killed, backgrounded).
        case abandoned(screenIndex: Int)
    }

    /// The session's position in its corpus (0-based).
    package var index: Int
    /// The index of the onboarding in ``SyntheticData/onboardings``.
    package var onboardingIndex: Int
    /// The onboarding id.
    package var onboardingID: String
    /// The session id carried by every event, or `nil` when the source gives none.
    package var sessionID: String?
    /// The profile.
    package var profile: String
    /// The placement that showed the onboarding (every event carries it).
    package var placement: String
    /// The onboarding's variation id (every event carries it).
    package var variation: String
    /// When the session starts, in milliseconds since the epoch.
    package var startMilliseconds: Int64
    /// The session's events in the order they happened (times never decrease).
    package var events: [Event]
    /// How the session ended.
    package var outcome: Outcome
    /// The highest screen index presented.
    package var furthestScreen: Int
    /// The value of the session's first `select` answer (its final choice), if any: answers affect drop-off,
    /// so conversion by answer is not flat.
    package var firstSelectValue: String?

    static func make(index: Int, in data: SyntheticData, rng: inout SplitMix64, startMilliseconds: Int64 = 0)
        -> SyntheticSession
    {
        let onboardingIndex = rng.weighted(data.onboardings.map(\.weight))
        let onboarding = data.onboardings[onboardingIndex]
        let sessionID = rng.chance(data.sessionIDRate) ? rng.uuid() : nil
        // A new user most of the time; otherwise a returning one: the profile of a session at least 300
        // sessions earlier (about 15 minutes at the default pace, so that session has ended; one user does
        // not run two presentations at once). Drawn so that session i's profile does not depend on the
        // corpus size.
        let returning = index >= 300 && rng.chance(0.3)
        let profileNumber = returning ? Int.random(in: 0...(index - 300), using: &rng) : index
        var profiles = SplitMix64(seed: data.seed, stream: 0x9_0000_0000 &+ UInt64(profileNumber))
        var builder = Builder(
            onboarding: onboarding,
            sessionID: sessionID,
            profile: profiles.uuid(),
            eventIDRate: data.eventIDRate,
            clock: startMilliseconds)
        builder.run(rng: &rng)
        return SyntheticSession(
            index: index, onboardingIndex: onboardingIndex, onboardingID: onboarding.id, sessionID: builder.sessionID,
            profile: builder.profile, placement: onboarding.placement, variation: onboarding.variation,
            startMilliseconds: startMilliseconds, events: builder.events, outcome: builder.outcome,
            furthestScreen: builder.furthest, firstSelectValue: builder.firstSelectValue)
    }

    /// The chance that a user on screen `index` of `total` leaves before completing it: it grows with the
    /// index (from 1.5 % on the first screen to 10.5 % on the last but one), scaled by the user's motivation.
    package static func dropProbability(
        screenIndex index: Int, totalScreens total: Int,
        motivation: Double = 1
    ) -> Double {
        (0.015 + 0.09 * Double(index) / Double(max(1, total - 1))) * motivation
    }
}

/// Builds one session's events, screen by screen.
private struct Builder {
    let onboarding: SyntheticOnboarding
    let sessionID: String?
    let profile: String
    let eventIDRate: Double
    var clock: Int64
    var events: [Event] = []
    var outcome: SyntheticSession.Outcome = .completed
    var furthest = 0
    var firstSelectValue: String?
    var motivation = 1.0

    init(onboarding: SyntheticOnboarding, sessionID: String?, profile: String, eventIDRate: Double, clock: Int64) {
        self.onboarding = onboarding
        self.sessionID = sessionID
        self.profile = profile
        self.eventIDRate = eventIDRate
        self.clock = clock
    }

    var total: Int { onboarding.screens.count }

    func meta(_ index: Int) -> Meta {
        Meta(
            onboardingID: onboarding.id, screenClientID: onboarding.screens[index].clientID, screenIndex: index,
            totalScreens: total)
    }

    mutating func emit(_ payload: Payload, screen: Int?, rng: inout SplitMix64) {
        events.append(
            Event(
                time: Timestamp(milliseconds: clock), session: sessionID, profile: profile,
                eventID: rng.chance(eventIDRate) ? rng.uuid() : nil,
                placement: onboarding.placement, variation: onboarding.variation,
                meta: screen.map(meta), payload: payload))
    }

    /// Moves the clock forward by up to `max` milliseconds; a zero step (a same-millisecond tie) is common.
    mutating func tick(_ rng: inout SplitMix64, max: Int64 = 400) {
        if rng.chance(0.25) { return }
        clock += Int64.random(in: 1...max, using: &rng)
    }

    mutating func run(rng: inout SplitMix64) {
        // 1 % of sessions never load: one error without a position, nothing else.
        if rng.chance(0.01) {
            emit(.error(Builder.errors.randomElement(using: &rng)!), screen: nil, rng: &rng)
            outcome = .failed(screenIndex: nil)
            return
        }
        emit(.onboardingLoaded, screen: 0, rng: &rng)
        tick(&rng, max: 60)
        emit(.analytics(.onboardingStarted), screen: 0, rng: &rng)
        var index = 0
        var backsLeft = 2
        var sawSecond = false
        while true {
            let screen = onboarding.screens[index]
            furthest = max(furthest, index)
            emit(.analytics(.screenPresented), screen: index, rng: &rng)
            if index == 1, !sawSecond {
                sawSecond = true
                emit(.analytics(.secondScreenPresented), screen: index, rng: &rng)
            }
            if case .emailInput = screen.role {
                emit(.analytics(.registrationScreenPresented), screen: index, rng: &rng)
            }
            if case .products = screen.role { emit(.analytics(.productsScreenPresented), screen: index, rng: &rng) }
            if case .final = screen.role {
                finish(index, rng: &rng)
                return
            }
            let dwell = Int64(Double(screen.meanDwellMilliseconds) * (0.3 + 1.4 * rng.unit()))
            let dropP = SyntheticSession.dropProbability(
                screenIndex: index, totalScreens: total, motivation: motivation)
            if rng.chance(dropP) {
                clock += dwell / 2
                leave(index, rng: &rng)
                return
            }
            clock += dwell * 3 / 5
            answer(screen, index, rng: &rng)
            clock += dwell * 2 / 5
            if rng.chance(0.01) {
                emit(.analytics(AnalyticsEvent(name: "navigation_failed")), screen: index, rng: &rng)
            }
            tick(&rng, max: 300)
            if index >= 2, backsLeft > 0, rng.chance(0.05) {
                // Back-navigation: the previous screen again, so the screen index goes down.
                backsLeft -= 1
                index -= 1
            } else {
                index += 1
            }
        }
    }

    /// The screen's answer (state updates), its side actions, and `screen_completed`.
    mutating func answer(_ screen: SyntheticScreen, _ index: Int, rng: inout SplitMix64) {
        var elementID: String? = nil
        var reply: String? = nil
        switch screen.role {
        case .info, .final:
            if rng.chance(0.7) { elementID = "continue_button" }
        case .select(let id, let options):
            if rng.chance(0.15) {
                // Changed their mind: last write wins.
                emit(
                    .stateUpdated(StateUpdate(elementID: id, value: .select(options.randomElement(using: &rng)!))),
                    screen: index, rng: &rng)
                tick(&rng)
            }
            // Skewed towards the first options.
            let pick = options[min(options.count - 1, Int(Double(options.count) * rng.unit() * rng.unit() * 1.6))]
            emit(.stateUpdated(StateUpdate(elementID: id, value: .select(pick))), screen: index, rng: &rng)
            if firstSelectValue == nil {
                firstSelectValue = pick.value
                let position = options.firstIndex(of: pick) ?? 0
                motivation = 0.6 + 0.35 * Double(position)
            }
            elementID = id
            reply = pick.value
        case .multiSelect(let id, let options):
            var chosen: [Choice] = []
            let toggles = Int.random(in: 1...4, using: &rng)
            for _ in 0..<toggles {
                let option = options.randomElement(using: &rng)!
                if let at = chosen.firstIndex(of: option) { chosen.remove(at: at) } else { chosen.append(option) }
                emit(.stateUpdated(StateUpdate(elementID: id, value: .multiSelect(chosen))), screen: index, rng: &rng)
                tick(&rng)
            }
            if rng.chance(0.08), !chosen.isEmpty {
                // Cleared the selection: the snapshot is empty.
                chosen = []
                emit(.stateUpdated(StateUpdate(elementID: id, value: .multiSelect(chosen))), screen: index, rng: &rng)
            }
            elementID = id
        case .textInput(let id):
            let names = [
                "John Doe", "José", "Anna \"Ann\" Lee", "李雷", "O'Brien", "Zoë", "Back\\slash", "Мария", "A",
                "tab\there",
            ]
            emit(
                .stateUpdated(StateUpdate(elementID: id, value: .input(.text(names.randomElement(using: &rng)!)))),
                screen: index, rng: &rng)
            elementID = id
            reply = "success"
        case .emailInput(let id):
            if rng.chance(0.12) {
                elementID = "skip_button"
            } else {
                let domains = ["example.com", "mail.test", "posteo.example"]
                let address = "user\(Int.random(in: 1...99_999, using: &rng))@\(domains.randomElement(using: &rng)!)"
                emit(
                    .stateUpdated(StateUpdate(elementID: id, value: .input(.email(address)))), screen: index, rng: &rng)
                tick(&rng, max: 20)
                emit(.analytics(.userEmailCollected), screen: index, rng: &rng)
                elementID = id
                reply = "success"
            }
        case .numberInput(let id, let range, let step):
            let steps = Int((range.upperBound - range.lowerBound) / step)
            let value = range.lowerBound + Double(Int.random(in: 0...steps, using: &rng)) * step
            emit(.stateUpdated(StateUpdate(elementID: id, value: .input(.number(value)))), screen: index, rng: &rng)
            elementID = id
        case .datePicker(let id):
            let year = Int.random(in: 1950...2010, using: &rng)
            let month = Int.random(in: 1...12, using: &rng)
            let day = Int.random(in: 1...28, using: &rng)
            let parts: DateParts =
                switch rng.weighted([0.6, 0.15, 0.15, 0.1]) {
                case 0: DateParts(year: year, month: month, day: day)
                case 1: DateParts(year: year)
                case 2: DateParts(year: year, month: month)
                default: DateParts(month: month, day: day)
                }
            emit(.stateUpdated(StateUpdate(elementID: id, value: .datePicker(parts))), screen: index, rng: &rng)
            elementID = id
        case .permission(let actionID):
            if rng.chance(0.7) {
                emit(.custom(actionID: actionID), screen: index, rng: &rng)
                tick(&rng)
            }
            elementID = "continue_button"
        case .products(let paywallActionID):
            if rng.chance(0.35) {
                emit(.openPaywall(actionID: paywallActionID), screen: index, rng: &rng)
                // Half the time the screen completes in the same millisecond as the tap.
                if rng.chance(0.5) { tick(&rng) }
                elementID = "paywall_button"
            } else {
                elementID = "continue_button"
            }
        }
        emit(.analytics(.screenCompleted(elementID: elementID, reply: reply)), screen: index, rng: &rng)
    }

    /// The final screen: completion, and sometimes a paywall tap in the same millisecond, then a close.
    mutating func finish(_ index: Int, rng: inout SplitMix64) {
        tick(&rng, max: 30)
        emit(.analytics(.onboardingCompleted), screen: index, rng: &rng)
        if rng.chance(0.3) {
            emit(.openPaywall(actionID: "premium_offer_final"), screen: index, rng: &rng)
        }
        if rng.chance(0.6) {
            clock += Int64.random(in: 500...3_000, using: &rng)
            emit(.close(actionID: "close_button"), screen: index, rng: &rng)
        }
        outcome = .completed
    }

    /// Leaving before completing screen `index`: silently, by a close button, or by an error.
    mutating func leave(_ index: Int, rng: inout SplitMix64) {
        switch rng.weighted([0.6, 0.3, 0.1]) {
        case 0:
            outcome = .abandoned(screenIndex: index)
        case 1:
            emit(.close(actionID: rng.chance(0.9) ? "close_button" : ""), screen: index, rng: &rng)
            outcome = .closed(screenIndex: index)
        default:
            emit(.error(Builder.errors.randomElement(using: &rng)!), screen: rng.chance(0.5) ? index : nil, rng: &rng)
            outcome = .failed(screenIndex: index)
        }
    }

    static let errors: [OnboardingError] = [
        OnboardingError(domain: "AdaptyUIError", code: 4200, message: "WebKit: The network connection was lost."),
        OnboardingError(
            domain: "AdaptyUIError", code: 4200,
            message: "WebKit: A server with the specified hostname could not be found."),
        OnboardingError(domain: "http", code: 503, message: "Service Unavailable"),
        OnboardingError(domain: "ssl", code: -1202, message: "The certificate for this server is invalid."),
        OnboardingError(domain: "unknown", code: 0, message: "Unknown message: {\"type\":\"bogus\"}"),
    ]
}
