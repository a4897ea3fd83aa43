import BoardwalkModel

/// A range of the store's event key `(onboarding, screen, time, seq)`.
///
/// A range with no onboarding and every screen also covers events without a position (errors that reached
/// the app outside the page); any narrower range excludes them, as a predicate on `onboarding` or `screen`
/// is false for them.
public struct ScanRange: Hashable, Sendable, CustomStringConvertible {
    /// One onboarding, or nil for all of them.
    public var onboarding: String?
    /// Screen indexes, inclusive.
    public var screens: ClosedRange<Int>
    /// Microseconds since the epoch, inclusive.
    public var time: ClosedRange<Int64>

    /// Every screen index an event can have.
    public static let allScreens = 0...Meta.maxScreenIndex
    /// Every time.
    public static let allTime = Int64.min...Int64.max

    /// A range of one onboarding (or all of them), some screens and some times; by default the whole store.
    public init(
        onboarding: String? = nil, screens: ClosedRange<Int> = ScanRange.allScreens,
        time: ClosedRange<Int64> = ScanRange.allTime
    ) {
        self.onboarding = onboarding
        self.screens = screens
        self.time = time
    }

    /// Whether the range is the whole store.
    public var isEverything: Bool { onboarding == nil && screens == ScanRange.allScreens && time == ScanRange.allTime }

    /// Whether an event's key falls in the range.
    public func contains(_ event: Event) -> Bool {
        contains(onboarding: event.meta?.onboardingID, screen: event.meta?.screenIndex, time: event.time.microseconds)
    }

    /// Whether an event with this onboarding, screen and time falls in the range (an event without a position
    /// has neither an onboarding nor a screen, and falls only in ranges that narrow neither).
    public func contains(onboarding eventOnboarding: String?, screen: Int?, time eventTime: Int64) -> Bool {
        guard time.contains(eventTime) else { return false }
        guard let eventOnboarding, let screen else { return onboarding == nil && screens == ScanRange.allScreens }
        if let onboarding, eventOnboarding != onboarding { return false }
        return screens.contains(screen)
    }

    /// `onboarding="onb_1" screen=[2, 65534] time=[2026-11-01T00:00:00.000000Z, +inf]`.
    public var description: String {
        func time(_ v: Int64, _ infinity: String) -> String {
            v == Int64.min || v == Int64.max ? infinity : Timestamp(microseconds: v).iso8601
        }
        let o = onboarding.map { "onboarding=\(quoted($0))" } ?? "onboarding=*"
        let s = screens == ScanRange.allScreens ? "screen=*" : "screen=[\(screens.lowerBound), \(screens.upperBound)]"
        let t =
            self.time == ScanRange.allTime
            ? "time=*"
            : "time=[\(time(self.time.lowerBound, "-inf")), \(time(self.time.upperBound, "+inf"))]"
        return "\(o) \(s) \(t)"
    }
}

/// Quotes a string for plans and messages, escaping `"` and `\`.
func quoted(_ s: String) -> String {
    // Spelled as the query language writes strings (`\\`, `\"`, `\n`, `\t`); other controls escaped for the terminal.
    let spelled = s.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"")
    return "\"" + escapingTerminalControls(spelled) + "\""
}

/// One event as a source delivers it: a field reader, which may borrow the storage it reads from (a store's
/// record view) and is then valid only as long as the scan that produced it.
public protocol EventRow {
    /// The store's arrival sequence number.
    var seq: UInt64 { get }
    /// When the app received the event.
    var time: Timestamp { get }
    /// The event's kind.
    var kind: EventKind { get }
    /// An analytics event's name (a known name, or an unknown one verbatim); nil for other kinds.
    var analyticsName: String? { get }
    /// The screen index; nil for an event without `meta`.
    var screenIndex: Int? { get }
    /// The value of an event field. `dwell` is absent here: it needs the event's session around it, and
    /// the executor computes it from the session's rows.
    func value(_ field: EventField) -> Value
}

extension EventRow {
    /// Whether the event is `x`, an event kind or an analytics name (`did(x)`, funnel steps, `ignoring`).
    func isEvent(_ x: String) -> Bool { kind.rawValue == x || analyticsName == x }

    /// The outcome this event gives its session (rule 8), if it is a terminal event.
    var outcome: Exit? {
        switch kind {
        case .analytics: analyticsName == AnalyticsName.onboardingCompleted.rawValue ? .completed : nil
        case .openPaywall: .paywall
        case .close: .closed
        case .error: .error
        default: nil
        }
    }
}

extension EventSource {
    /// Delivers through ``scanSessions(_:_:)`` without checking `cancellation`; the executor checks it per row.
    public func scanSessions(
        _ ranges: [ScanRange], cancellation: CancellationFlag?, text: String,
        _ body: (String, [Row]) throws(QueryError) -> Bool
    ) throws(QueryError) {
        try scanSessions(ranges, body)
    }
}

/// Where a query reads events: the store, or memory in tests.
///
/// Every event a source delivers has a session id (explicit, or inferred by rule 10 before the query sees it).
public protocol EventSource {
    /// What ``scanEvents(_:_:)`` hands out.
    associatedtype Row: EventRow

    /// Calls `body` for every event in `range`, in key order `(onboarding, screen, time, seq)`, until it
    /// returns false. The row may borrow the source's storage: it is valid only inside `body`.
    /// - Complexity: proportional to the events in the range, not to the store.
    func scanEvents(_ range: ScanRange, _ body: (Row) throws(QueryError) -> Bool) throws(QueryError)

    /// Calls `body` once for each session that has at least one event in one of `ranges`, with all of that
    /// session's events in `(time, seq)` order, until it returns false. The rows are valid only inside `body`.
    /// - Complexity: proportional to the events of the sessions read; memory to the number of sessions.
    func scanSessions(_ ranges: [ScanRange], _ body: (String, [Row]) throws(QueryError) -> Bool) throws(QueryError)

    /// ``scanSessions(_:_:)`` in a run that can be cancelled: a source that works between deliveries (the store
    /// scans records of sessions it has not delivered yet) checks `cancellation` there and throws a `.cancelled`
    /// error about `text`. The default delivers through ``scanSessions(_:_:)``; the executor checks per row.
    func scanSessions(
        _ ranges: [ScanRange], cancellation: CancellationFlag?, text: String,
        _ body: (String, [Row]) throws(QueryError) -> Bool) throws(QueryError)

    /// How the source reads sessions, for `explain` ("session index", "in memory").
    var sessionAccess: String { get }

    /// The onboarding ids that have events in the source, for ``Query/notes(on:)``; `nil` when the source cannot
    /// tell cheaply (the default).
    func onboardingNames() throws(QueryError) -> [String]?
}

extension EventSource {
    /// `nil`: a source that cannot tell its onboardings cheaply gets no onboarding notes.
    public func onboardingNames() throws(QueryError) -> [String]? { nil }
}
