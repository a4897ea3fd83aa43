/// An analytics event, one case per name the SDKs know; any other name is kept as ``unknown(name:)``.
public enum AnalyticsEvent: Hashable, Sendable {
    case onboardingStarted
    case screenPresented
    /// The user left a screen; the element that completed it and the user's reply, when the page says.
    case screenCompleted(elementID: String?, reply: String?)
    case secondScreenPresented
    /// In every SDK, though not in the docs.
    case registrationScreenPresented
    /// In every SDK, though not in the docs.
    case productsScreenPresented
    /// Carries no address: the address arrives as a `state_updated` email input.
    case userEmailCollected
    /// The user reached the screen whose id is `final`.
    case onboardingCompleted
    /// A name the SDKs do not know (seen in the wild: `navigation_failed`), kept verbatim.
    case unknown(name: String)

    /// Makes the event for a wire name; names not in ``AnalyticsName`` become ``unknown(name:)``.
    /// `elementID` and `reply` are kept for `screen_completed` only.
    @inlinable
    public init(name: String, elementID: String? = nil, reply: String? = nil) {
        switch AnalyticsName(rawValue: name) {
        case .onboardingStarted: self = .onboardingStarted
        case .screenPresented: self = .screenPresented
        case .screenCompleted: self = .screenCompleted(elementID: elementID, reply: reply)
        case .secondScreenPresented: self = .secondScreenPresented
        case .registrationScreenPresented: self = .registrationScreenPresented
        case .productsScreenPresented: self = .productsScreenPresented
        case .userEmailCollected: self = .userEmailCollected
        case .onboardingCompleted: self = .onboardingCompleted
        case nil: self = .unknown(name: name)
        }
    }

    /// The known name, or `nil` for ``unknown(name:)``.
    @inlinable
    public var knownName: AnalyticsName? {
        switch self {
        case .onboardingStarted: .onboardingStarted
        case .screenPresented: .screenPresented
        case .screenCompleted: .screenCompleted
        case .secondScreenPresented: .secondScreenPresented
        case .registrationScreenPresented: .registrationScreenPresented
        case .productsScreenPresented: .productsScreenPresented
        case .userEmailCollected: .userEmailCollected
        case .onboardingCompleted: .onboardingCompleted
        case .unknown: nil
        }
    }

    /// The wire name: `"screen_presented"`, or an unknown event's raw name.
    @inlinable
    public var name: String {
        if case .unknown(let name) = self { return name }
        return knownName!.rawValue
    }
}

/// The analytics names the SDKs know, spelled as on the wire.
public enum AnalyticsName: String, CaseIterable, Hashable, Sendable {
    case onboardingStarted = "onboarding_started"
    case screenPresented = "screen_presented"
    case screenCompleted = "screen_completed"
    case secondScreenPresented = "second_screen_presented"
    case registrationScreenPresented = "registration_screen_presented"
    case productsScreenPresented = "products_screen_presented"
    case userEmailCollected = "user_email_collected"
    case onboardingCompleted = "onboarding_completed"
}
