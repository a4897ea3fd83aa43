import BoardwalkModel
import BoardwalkStore

/// Events held in memory, for tests and small embedded uses.
///
/// Sequence numbers are assigned by arrival (the array's order). Sessions without ids are inferred here, at
/// construction (semantics rule 10): per (profile, onboarding), events in `(time, seq)` order, a new session
/// starts at `onboarding_started` or `onboarding_loaded` (unless the current session has seen only such start
/// events), or when the gap since the previous event of that profile and onboarding is 30 minutes or more.
/// Inferred ids read `inferred:<seq of the session's first event>`, as the store names them. Unlike the store,
/// which infers in arrival order, this source infers in time order. Events are first normalized as the store
/// keeps them (`Store.normalized`: empty ids, element ids and replies are absent, semantics rule 11).
public struct InMemoryEventSource: EventSource, Sendable {
    /// Events with their session ids filled in; the index is the sequence number.
    public let events: [Event]
    /// Per onboarding, event indexes in key order `(screen, time, seq)`.
    private let byOnboarding: [String: [Int]]
    private let onboardings: [String]
    /// Events without a position, in `(time, seq)` order.
    private let unplaced: [Int]
    /// Per session, event indexes in `(time, seq)` order.
    private let sessions: [String: [Int]]

    /// The gap that starts a new inferred session (rule 10).
    package static let inactivityGap: Int64 = 30 * 60 * 1_000_000

    /// - Complexity: O(n log n).
    public init(_ events: [Event]) {
        var events = events.map(Store.normalized)
        let byTime = events.indices.sorted { (events[$0].time, $0) < (events[$1].time, $1) }
        // Rule 10, as the store applies it: a start event opens a new session unless the current one has seen
        // only start events (so `onboarding_loaded` then `onboarding_started` stay together).
        struct Key: Hashable { var profile: String?; var onboarding: String? }
        var open: [Key: (id: String, last: Int64, fresh: Bool)] = [:]
        for i in byTime where events[i].session == nil {
            let e = events[i]
            let key = Key(profile: e.profile, onboarding: e.meta?.onboardingID)
            let starts = e.payload == .analytics(.onboardingStarted) || e.payload == .onboardingLoaded
            if let current = open[key],
                elapsed(from: current.last, to: e.time.microseconds) < Double(InMemoryEventSource.inactivityGap),
                !(starts && !current.fresh)
            {
                open[key] = (current.id, e.time.microseconds, current.fresh && starts)
            } else {
                open[key] = ("inferred:\(i)", e.time.microseconds, starts)
            }
            events[i].session = open[key]!.id
        }
        var byOnboarding: [String: [Int]] = [:]
        var unplaced: [Int] = []
        var sessions: [String: [Int]] = [:]
        for i in byTime {
            if let meta = events[i].meta {
                byOnboarding[meta.onboardingID, default: []].append(i)
            } else {
                unplaced.append(i)
            }
            sessions[events[i].session!, default: []].append(i)
        }
        for (key, list) in byOnboarding {
            // Stable: within a screen, (time, seq) order is kept.
            byOnboarding[key] = list.enumerated().sorted {
                (events[$0.element].meta!.screenIndex, $0.offset) < (events[$1.element].meta!.screenIndex, $1.offset)
            }.map(\.element)
        }
        self.events = events
        self.byOnboarding = byOnboarding
        self.onboardings = byOnboarding.keys.sorted()
        self.unplaced = unplaced
        self.sessions = sessions
    }

    /// `in-memory session index`, for `explain`.
    public var sessionAccess: String { "in-memory session index" }

    /// The onboarding ids with events here, in order.
    public func onboardingNames() throws(QueryError) -> [String]? { onboardings }

    /// A row of an in-memory scan: a pointer into the source's events, valid only inside the scan callback,
    /// so scanning copies no event.
    public struct Row: EventRow {
        let event: UnsafePointer<Event>
        /// The event's position in the source's array, its arrival order.
        public let seq: UInt64

        /// The event's time.
        public var time: Timestamp { event.pointee.time }
        /// The event's kind.
        public var kind: EventKind { event.pointee.kind }
        /// The analytics event's name; `nil` for other kinds.
        public var analyticsName: String? { if case .analytics(let a) = event.pointee.payload { a.name } else { nil } }
        /// The screen index of the event's `meta`; `nil` without one.
        public var screenIndex: Int? { event.pointee.meta?.screenIndex }
        /// The value of `field` on this event, as queries see it.
        public func value(_ field: EventField) -> Value { event.pointee.value(field, seq: seq, dwell: .none) }
    }

    /// Calls `body` for every event in `range`, by onboarding, then the events without a position.
    /// - Complexity: O(events of the onboardings in range).
    public func scanEvents(_ range: ScanRange, _ body: (Row) throws(QueryError) -> Bool) throws(QueryError) {
        var failure: QueryError?
        // A non-throwing closure: typed throws through `withUnsafeBufferPointer` crash swiftc 6.3.1.
        events.withUnsafeBufferPointer { buffer in
            let base = buffer.baseAddress!
            func visit(_ list: [Int]) -> Bool {
                for i in list where range.contains(buffer[i]) {
                    do {
                        guard try body(Row(event: base + i, seq: UInt64(i))) else { return false }
                    } catch {
                        failure = error
                        return false
                    }
                }
                return true
            }
            for key in range.onboarding.map({ [$0] }) ?? onboardings {
                guard let list = byOnboarding[key] else { continue }
                guard visit(list) else { return }
            }
            if range.onboarding == nil, range.screens == ScanRange.allScreens { _ = visit(unplaced) }
        }
        if let failure { throw failure }
    }

    /// Calls `body` with each session that has an event in `ranges`, in first-seen order, and its events in
    /// `(time, seq)` order.
    /// - Complexity: O(events in the ranges + events of those sessions).
    public func scanSessions(_ ranges: [ScanRange], _ body: (String, [Row]) throws(QueryError) -> Bool)
        throws(QueryError)
    {
        var ids: [String] = []
        var seen: Set<String> = []
        for range in ranges {
            try scanEvents(range) { (row: Row) throws(QueryError) -> Bool in
                let id = row.event.pointee.session!
                if seen.insert(id).inserted { ids.append(id) }
                return true
            }
        }
        var failure: QueryError?
        events.withUnsafeBufferPointer { buffer in
            let base = buffer.baseAddress!
            for id in ids {
                let rows = sessions[id]!.map { Row(event: base + $0, seq: UInt64($0)) }
                do throws(QueryError) {
                    guard try body(id, rows) else { return }
                } catch {
                    failure = error
                    return
                }
            }
        }
        if let failure { throw failure }
    }
}
