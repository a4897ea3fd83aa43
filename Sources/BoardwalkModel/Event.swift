/// One onboarding event as Boardwalk stores it: what the onboarding's web view said (``payload``),
/// where it said it (``meta``), and the record the app wrapped around it (time, session, ids).
///
/// Build one directly from what `AdaptyOnboardingControllerDelegate` hands you; no JSON is involved:
///
/// ```swift
/// let event = Event(
///     time: .now,
///     session: controller.id,
///     meta: Meta(onboardingID: meta.onboardingId, screenClientID: meta.screenClientId,
///                screenIndex: meta.screenIndex, totalScreens: meta.screensTotal),
///     payload: .analytics(.screenPresented))
/// ```
public struct Event: Hashable, Sendable {
    /// When the app received the event, in microseconds since the Unix epoch (UTC).
    public var time: Timestamp
    /// One presentation of one onboarding (the iOS controller's id, the bridge's `view.id`).
    /// `nil` when the source did not say; the store then infers sessions (see `docs/events.md`).
    public var session: String?
    /// The Adapty profile (or device) the event belongs to.
    public var profile: String?
    /// A unique id for de-duplication of retried uploads.
    public var eventID: String?
    /// The placement that showed the onboarding.
    public var placement: String?
    /// The A/B variation that was shown.
    public var variation: String?
    /// Where in the onboarding the event happened. `nil` only for ``Payload/error(_:)``, which
    /// reaches the app outside the page and may carry no position.
    public var meta: Meta?
    /// What happened.
    public var payload: Payload

    /// An event from its parts; every id is optional.
    @inlinable
    public init(
        time: Timestamp,
        session: String? = nil,
        profile: String? = nil,
        eventID: String? = nil,
        placement: String? = nil,
        variation: String? = nil,
        meta: Meta?,
        payload: Payload
    ) {
        self.time = time
        self.session = session
        self.profile = profile
        self.eventID = eventID
        self.placement = placement
        self.variation = variation
        self.meta = meta
        self.payload = payload
    }

    /// The event's kind, named as on the wire.
    @inlinable
    public var kind: EventKind { payload.kind }
}

/// The position of an event in its onboarding: the `meta` object of every wire message.
public struct Meta: Hashable, Sendable {
    /// The onboarding (a UUID in practice).
    public var onboardingID: String
    /// The screen's client id, as set in the builder (`final` marks the last screen).
    public var screenClientID: String
    /// The screen's position, 0-based. Always in `0...Meta.maxScreenIndex`.
    public var screenIndex: Int
    /// How many screens the onboarding has. Always in `0...Meta.maxScreenIndex + 1`.
    public var totalScreens: Int

    /// The largest screen index Boardwalk accepts; the store keeps screen indexes in 16 bits.
    public static let maxScreenIndex = 65_534

    /// The position of a screen in an onboarding.
    @inlinable
    public init(onboardingID: String, screenClientID: String, screenIndex: Int, totalScreens: Int) {
        self.onboardingID = onboardingID
        self.screenClientID = screenClientID
        self.screenIndex = screenIndex
        self.totalScreens = totalScreens
    }
}

/// The kinds of event, with their wire names as raw values.
public enum EventKind: String, CaseIterable, Hashable, Sendable {
    case analytics = "analytics"
    case stateUpdated = "state_updated"
    case openPaywall = "open_paywall"
    case custom = "custom"
    case close = "close"
    case onboardingLoaded = "onboarding_loaded"
    case error = "error"

    /// The kind's wire name (`"state_updated"`, …).
    @inlinable
    public var name: String { rawValue }
}

/// What an event says, one case per ``EventKind``.
public enum Payload: Hashable, Sendable {
    /// An analytics event (`onAnalyticsEvent`).
    case analytics(AnalyticsEvent)
    /// A quiz answer or input (`onStateUpdatedAction`).
    case stateUpdated(StateUpdate)
    /// A button that opens a paywall (`onPaywallAction`); the action id may be empty.
    case openPaywall(actionID: String)
    /// A custom action (`onCustomAction`).
    case custom(actionID: String)
    /// A close action (`onCloseAction`).
    case close(actionID: String)
    /// The onboarding finished loading (`didFinishLoading`).
    case onboardingLoaded
    /// The onboarding failed (`didFailWithError`).
    case error(OnboardingError)

    /// The payload's kind.
    @inlinable
    public var kind: EventKind {
        switch self {
        case .analytics: .analytics
        case .stateUpdated: .stateUpdated
        case .openPaywall: .openPaywall
        case .custom: .custom
        case .close: .close
        case .onboardingLoaded: .onboardingLoaded
        case .error: .error
        }
    }

    /// The action id of an open-paywall, custom or close action; `nil` for other kinds.
    @inlinable
    public var actionID: String? {
        switch self {
        case .openPaywall(let id), .custom(let id), .close(let id): id
        default: nil
        }
    }
}

/// An error reported by the onboarding view.
public struct OnboardingError: Hashable, Sendable {
    /// Where the error comes from: `AdaptyUIError`, `webkit`, `http`, `ssl`, `unknown`, ….
    public var domain: String
    /// The error code in its domain (4200 for `AdaptyUIError.webKit`).
    public var code: Int
    /// The underlying error's text.
    public var message: String

    /// An error from its domain, code and text.
    @inlinable
    public init(domain: String, code: Int, message: String) {
        self.domain = domain
        self.code = code
        self.message = message
    }
}
