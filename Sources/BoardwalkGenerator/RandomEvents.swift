import BoardwalkModel

/// Arbitrary events of every kind and value type, for round-trip and differential tests.
///
/// Unlike the realistic session generator, these events do not tell a story: every field is drawn on its
/// own, every optional is sometimes absent, and strings include the awkward cases (empty, non-ASCII,
/// quotes, backslashes, control characters, astral-plane scalars, 15/16-byte boundaries).
package struct RandomEvents: Sequence, IteratorProtocol, Sendable {
    private var rng: SplitMix64

    package init(seed: UInt64) { rng = SplitMix64(seed: seed) }

    package mutating func next() -> Event? { event() }

    /// One arbitrary event.
    package mutating func event() -> Event {
        let kind = EventKind.allCases.randomElement(using: &rng)!
        let payload: Payload
        switch kind {
        case .analytics:
            let names = AnalyticsName.allCases.map(\.rawValue) + ["navigation_failed", "unknown", "x"]
            let name = names.randomElement(using: &rng)!
            payload = .analytics(AnalyticsEvent(name: name, elementID: optionalString(), reply: optionalString()))
        case .stateUpdated:
            payload = .stateUpdated(StateUpdate(elementID: string(), value: stateValue()))
        case .openPaywall: payload = .openPaywall(actionID: string())
        case .custom: payload = .custom(actionID: string())
        case .close: payload = .close(actionID: string())
        case .onboardingLoaded: payload = .onboardingLoaded
        case .error:
            payload = .error(
                OnboardingError(
                    domain: string(), code: Int(Int32.random(in: -100_000...100_000, using: &rng)), message: string()))
        }
        let hasMeta = kind != .error || Bool.random(using: &rng)
        let total = Int.random(in: 0...40, using: &rng)
        let meta =
            hasMeta
            ? Meta(
                onboardingID: string(), screenClientID: string(),
                screenIndex: Int.random(in: 0...Swift.max(0, total), using: &rng) % (Meta.maxScreenIndex + 1),
                totalScreens: Bool.random(using: &rng)
                    ? total : Int.random(in: 0...Meta.maxScreenIndex + 1, using: &rng))
            : nil
        let time = Timestamp(
            microseconds: Int64.random(
                in: Timestamp.range.lowerBound.microseconds...Timestamp.range.upperBound.microseconds, using: &rng))
        return Event(
            time: Bool.random(using: &rng)
                ? time : Timestamp(microseconds: 1_793_527_200_000_000 + Int64.random(in: 0...1 << 36, using: &rng)),
            session: optionalString(), profile: optionalString(), eventID: optionalString(),
            placement: optionalString(), variation: optionalString(), meta: meta, payload: payload)
    }

    private mutating func stateValue() -> StateValue {
        switch Int.random(in: 0..<4, using: &rng) {
        case 0: return .select(choice())
        case 1: return .multiSelect((0..<Int.random(in: 0...4, using: &rng)).map { _ in choice() })
        case 2:
            switch Int.random(in: 0..<3, using: &rng) {
            case 0: return .input(.text(string()))
            case 1: return .input(.email(string()))
            default:
                let numbers: [Double] = [
                    0, -0.0, 25, -1.5, 1e300, .leastNonzeroMagnitude, 0.1, 123_456_789.125, Double(Int64.max),
                ]
                return .input(
                    .number(
                        Bool.random(using: &rng)
                            ? numbers.randomElement(using: &rng)! : Double.random(in: -1e9...1e9, using: &rng)))
            }
        default:
            return .datePicker(
                DateParts(
                    year: Bool.random(using: &rng) ? Int.random(in: 1900...2100, using: &rng) : nil,
                    month: Bool.random(using: &rng) ? Int.random(in: 1...12, using: &rng) : nil,
                    day: Bool.random(using: &rng) ? Int.random(in: 1...31, using: &rng) : nil))
        }
    }

    private mutating func choice() -> Choice { Choice(id: string(), value: string(), label: string()) }

    private mutating func optionalString() -> String? { Int.random(in: 0..<4, using: &rng) == 0 ? nil : string() }

    /// Strings biased towards the cases codecs get wrong.
    package mutating func string() -> String {
        switch Int.random(in: 0..<10, using: &rng) {
        case 0: return ""
        case 1:
            return [
                "onb_1", "welcome", "final", "é", "日本語", "a\"b\\c", "tab\tnew\nline", "\u{1F600}x", "\u{0}\u{1F}",
                "\u{7F}\u{FEFF}",
            ].randomElement(using: &rng)!
        case 2:
            // 15, 16 and 36 bytes: the small-string boundary and a UUID.
            let length = [15, 16, 36].randomElement(using: &rng)!
            return String((0..<length).map { _ in "0123456789abcdef-".randomElement(using: &rng)! })
        case 3:
            let scalars = (0..<Int.random(in: 1...12, using: &rng)).map { _ -> Character in
                let ranges: [ClosedRange<UInt32>] = [
                    0x20...0x7E, 0xA0...0x2FF, 0x400...0x4FF, 0x3040...0x30FF, 0x1F300...0x1F64F,
                ]
                let range = ranges.randomElement(using: &rng)!
                return Character(Unicode.Scalar(UInt32.random(in: range, using: &rng))!)
            }
            return String(scalars)
        default:
            let words = [
                "screen", "onboarding", "pro", "beginner", "amateur", "interest", "music", "sports", "email", "name",
                "id",
            ]
            return words.randomElement(using: &rng)! + "_" + String(Int.random(in: 0..<1000, using: &rng))
        }
    }
}
