import BoardwalkModel

/// One onboarding of a synthetic corpus: its id, where it is shown, and its screens.
package struct SyntheticOnboarding: Hashable, Sendable {
    /// The onboarding id (a UUID, as in production).
    package var id: String
    /// A human name, for reports.
    package var name: String
    /// The placement that shows it. Onboardings sharing a placement are the variants of an A/B test.
    package var placement: String
    /// The variation id (a UUID) of this onboarding in its placement's test.
    package var variation: String
    /// The screens, in order; the last one's client id is `final`.
    package var screens: [SyntheticScreen]
    /// Relative popularity: how often sessions pick this onboarding.
    package var weight: Double
}

/// One screen of a synthetic onboarding.
package struct SyntheticScreen: Hashable, Sendable {
    /// What the screen asks or shows.
    package enum Role: Hashable, Sendable {
        /// Text and a button: no element.
        case info
        /// A single-choice question.
        case select(elementID: String, options: [Choice])
        /// A multiple-choice question (the selection may end up empty).
        case multiSelect(elementID: String, options: [Choice])
        /// A text field.
        case textInput(elementID: String)
        /// An email field: `user_email_collected` follows the answer. Also the registration screen.
        case emailInput(elementID: String)
        /// A number field (age, weight).
        case numberInput(elementID: String, range: ClosedRange<Double>, step: Double)
        /// A date picker; some users fill only some parts.
        case datePicker(elementID: String)
        /// Asks for a permission through a custom action.
        case permission(actionID: String)
        /// The products screen: a paywall button.
        case products(paywallActionID: String)
        /// The last screen (client id `final`): reaching it completes the onboarding.
        case final
    }

    /// The screen's client id.
    package var clientID: String
    /// What the screen asks or shows.
    package var role: Role
    /// Mean time a user spends on the screen, in milliseconds.
    package var meanDwellMilliseconds: Int64

    /// The element the screen's answer belongs to, if it has one.
    package var elementID: String? {
        switch role {
        case .select(let id, _), .multiSelect(let id, _), .textInput(let id), .emailInput(let id),
            .numberInput(let id, _, _), .datePicker(let id):
            id
        case .info, .permission, .products, .final: nil
        }
    }
}

extension SyntheticOnboarding {
    /// A deterministic catalog of `count` onboardings for `seed`: 5–20 screens each, every element type,
    /// two or three placements, variants sharing placements.
    static func catalog(count: Int, seed: UInt64) -> [SyntheticOnboarding] {
        var rng = SplitMix64(seed: seed, stream: 0xCA7A_106)
        let placements = ["onboarding_main", "onboarding_reactivation", "onboarding_web2app"]
        let themes: [(name: String, questions: [SyntheticScreen.Role])] = [
            (
                "Fitness",
                [
                    .select(
                        elementID: "goal",
                        options: options([
                            ("lose_weight", "Lose weight"), ("build_muscle", "Build muscle"), ("stay_fit", "Stay fit"),
                            ("flexibility", "Flexibility"),
                        ])),
                    .select(
                        elementID: "level",
                        options: options([("beginner", "Beginner"), ("amateur", "Amateur"), ("pro", "Pro")])),
                    .multiSelect(
                        elementID: "workout_types",
                        options: options([
                            ("yoga", "Yoga"), ("hiit", "HIIT"), ("running", "Running"), ("weights", "Free weights"),
                            ("swim", "Swimming"),
                        ])),
                    .numberInput(elementID: "age", range: 16...75, step: 1),
                    .numberInput(elementID: "weight_kg", range: 45...140, step: 0.5),
                    .datePicker(elementID: "birthday"),
                ]
            ),
            (
                "Language",
                [
                    .select(
                        elementID: "language",
                        options: options([("es", "Español"), ("de", "Deutsch"), ("ja", "日本語"), ("fr", "Français")])),
                    .select(
                        elementID: "daily_minutes",
                        options: options([("5", "5 min"), ("15", "15 min"), ("30", "30 min")])),
                    .multiSelect(
                        elementID: "interests",
                        options: options([
                            ("travel", "Travel"), ("work", "Work"), ("music", "Music"), ("movies", "Movies & \"TV\""),
                        ])),
                    .textInput(elementID: "name"),
                    .datePicker(elementID: "exam_date"),
                ]
            ),
            (
                "Meditation",
                [
                    .select(
                        elementID: "reason",
                        options: options([("sleep", "Sleep better"), ("stress", "Less stress"), ("focus", "Focus")])),
                    .multiSelect(
                        elementID: "feelings",
                        options: options([
                            ("anxious", "Anxious"), ("tired", "Tired"), ("calm", "Calm"), ("sad", "Грустно"),
                        ])),
                    .numberInput(elementID: "sleep_hours", range: 3...11, step: 0.5),
                    .textInput(elementID: "nickname"),
                    .datePicker(elementID: "start_date"),
                ]
            ),
        ]
        var result: [SyntheticOnboarding] = []
        for index in 0..<count {
            let theme = themes[index % themes.count]
            let total = Int.random(in: 5...20, using: &rng)
            var screens: [SyntheticScreen] = [
                SyntheticScreen(clientID: "welcome", role: .info, meanDwellMilliseconds: 4_000)
            ]
            // Middle screens: every question of the theme (so every element type appears), an email screen,
            // a permission screen, a products screen, and info screens to fill up. Shuffled, then cut.
            var middle: [SyntheticScreen.Role] = theme.questions
            middle.append(.emailInput(elementID: "email"))
            middle.append(.permission(actionID: "allowNotifications"))
            middle.append(.products(paywallActionID: rng.chance(0.2) ? "" : "premium_offer_\(index % 3 + 1)"))
            middle.shuffle(using: &rng)
            while middle.count < total - 2 { middle.append(.info) }
            middle = Array(middle.prefix(total - 2))
            var infoCount = 0
            for role in middle {
                let clientID: String
                switch role {
                case .info:
                    infoCount += 1
                    clientID = "story_\(infoCount)"
                case .permission: clientID = "permissions_screen"
                case .products: clientID = "pricing_screen"
                case .emailInput: clientID = "registration_screen"
                default: clientID = "\(role.elementIDForName ?? "q")_screen"
                }
                let dwell: Int64 =
                    switch role {
                    case .info: 3_000
                    case .textInput, .emailInput: 11_000
                    case .multiSelect: 8_000
                    case .products: 15_000
                    default: 5_000
                    }
                screens.append(
                    SyntheticScreen(
                        clientID: clientID, role: role,
                        meanDwellMilliseconds: dwell + Int64.random(in: 0...2_000, using: &rng)))
            }
            screens.append(SyntheticScreen(clientID: "final", role: .final, meanDwellMilliseconds: 2_000))
            result.append(
                SyntheticOnboarding(
                    id: rng.uuid(),
                    name: "\(theme.name) v\(index / themes.count + 1)",
                    placement: placements[index % placements.count],
                    variation: rng.uuid(),
                    screens: screens,
                    weight: 1.0 / Double(index + 1)))
        }
        return result
    }

    private static func options(_ pairs: [(String, String)]) -> [Choice] {
        pairs.enumerated().map { i, pair in Choice(id: "option_\(i + 1)", value: pair.0, label: pair.1) }
    }
}

extension SyntheticScreen.Role {
    fileprivate var elementIDForName: String? {
        SyntheticScreen(clientID: "", role: self, meanDwellMilliseconds: 0).elementID
    }
}
