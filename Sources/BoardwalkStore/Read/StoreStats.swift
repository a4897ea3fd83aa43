import BoardwalkCodec
import BoardwalkModel

/// Counts and ranges of a whole store (``Snapshot/stats()``).
public struct StoreStats: Hashable, Sendable {
    /// Events stored.
    public var events: Int
    /// Events skipped as duplicates, over the store's life.
    public var duplicatesSkipped: Int
    /// Distinct sessions, explicit and inferred; a session with events in several onboardings (or also
    /// without a position) counts once.
    public var sessions: Int
    /// Sessions the store inferred for events that had none.
    public var inferredSessions: Int
    /// Distinct onboardings (events without `meta` are not under any).
    public var onboardings: Int
    /// Strings in the dictionary.
    public var strings: Int
    /// Events per kind.
    public var eventsByKind: [EventKind: Int]
    /// The earliest and latest event time, `nil` when empty.
    public var timeRange: ClosedRange<Timestamp>?
    /// The seq the next stored event will get.
    public var nextSeq: UInt64
    /// Bytes in the pages of all databases (excluding free pages).
    public var bytes: Int
}

/// One onboarding's counters (``Snapshot/onboardings()``).
public struct OnboardingSummary: Hashable, Sendable {
    /// The interned id; `nil` for the group of events without `meta`.
    public var id: StringID?
    /// The onboarding id string; `nil` for the group of events without `meta`.
    public var onboardingID: String?
    /// Events stored for it.
    public var events: Int
    /// Its earliest and latest event time.
    public var timeRange: ClosedRange<Timestamp>
    /// The largest `total_screens` seen in its events.
    public var maxTotalScreens: Int
}
