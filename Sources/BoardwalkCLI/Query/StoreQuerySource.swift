import Boardwalk

/// The store as a query source, for the CLI.
///
/// The query layer on this branch ships only an in-memory source, so the CLI adapts the store's scans to
/// ``EventSource`` itself: events of one onboarding through the `(onboarding, screen, time, seq)` key range,
/// sessions through the session index. Every stored event has a session (the store infers missing ones at
/// append), as the protocol requires. Events are decoded into owned values one at a time; each scan runs in
/// one read transaction, so it sees one consistent snapshot even while another process appends.
struct StoreQuerySource: EventSource {
    let store: Store

    var sessionAccess: String { "store session index" }

    /// The store's half-open time range for a query's closed range, `nil` for "all time", or an empty marker.
    private func timeRange(_ range: ScanRange) -> Range<Timestamp>?? {
        if range.time == ScanRange.allTime { return .some(nil) }
        let lo = max(range.time.lowerBound, Timestamp.range.lowerBound.microseconds)
        let hi = min(range.time.upperBound, Timestamp.range.upperBound.microseconds)
        guard lo <= hi else { return .none }
        return .some(Timestamp(microseconds: lo)..<Timestamp(microseconds: hi + 1))
    }

    func scanEvents(_ range: ScanRange, _ body: (borrowing ScannedEvent) throws(QueryError) -> Bool) throws(QueryError) {
        guard case .some(let time) = timeRange(range) else { return }
        try bridge {
            try store.read { snapshot in
                let visit: (EventView) throws -> Bool = { view in
                    let owned = try snapshot.owned(view)
                    guard range.contains(owned.event) else { return true }
                    return try body(ScannedEvent(seq: owned.seq, event: owned.event))
                }
                if let onboarding = range.onboarding {
                    try snapshot.forEachEvent(onboarding: onboarding, screens: range.screens, time: time, visit)
                } else {
                    try snapshot.forEachEvent(onboarding: nil, time: time, visit)
                }
            }
        }
    }

    func scanSessions(_ ranges: [ScanRange], _ body: (String, [ScannedEvent]) throws(QueryError) -> Bool) throws(QueryError) {
        try bridge {
            try store.read { snapshot in
                // Sessions touched by the ranges, in first-seen order, then each session's events.
                var ids: [StringID] = []
                var seen = Set<StringID>()
                for range in ranges {
                    guard case .some(let time) = timeRange(range) else { continue }
                    let visit: (EventView) throws -> Bool = { view in
                        guard let session = view.session else { return true }
                        if !seen.contains(session) {
                            guard range.contains(try snapshot.owned(view).event) else { return true }
                            seen.insert(session)
                            ids.append(session)
                        }
                        return true
                    }
                    if let onboarding = range.onboarding {
                        try snapshot.forEachEvent(onboarding: onboarding, screens: range.screens, time: time, visit)
                    } else {
                        try snapshot.forEachEvent(onboarding: nil, time: time, visit)
                    }
                }
                for id in ids {
                    var events: [ScannedEvent] = []
                    try snapshot.forEachEvent(inSession: id) { view in
                        let owned = try snapshot.owned(view)
                        events.append(ScannedEvent(seq: owned.seq, event: owned.event))
                        return true
                    }
                    guard try body(snapshot.string(for: id) ?? "", events) else { return }
                }
            }
        }
    }

    /// Runs `work`, passing query errors through and turning store errors into `.source` query errors.
    private func bridge(_ work: () throws -> Void) throws(QueryError) {
        do {
            try work()
        } catch let error as QueryError {
            throw error
        } catch {
            throw QueryError(.source, "the store could not be read: \(error)")
        }
    }
}

/// Opens the store for `query`, `repl` and `demo`.
func openStoreQuerySource(_ path: String) throws -> QuerySource {
    let store = try openStore(path, readOnly: true)
    let onboardings = try store.read { try $0.onboardings() }
    return QuerySource(
        source: StoreQuerySource(store: store),
        completionWords: onboardings.compactMap { $0.onboardingID.map { "\"\($0)\"" } },
        stats: {
            let stats = try store.read { try $0.stats() }
            return StatsCommand.statsTable(stats, fileBytes: store.usedBytes, paint: Paint(enabled: false))
        })
}
