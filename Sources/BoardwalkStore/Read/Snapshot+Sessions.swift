import BoardwalkCodec
import BoardwalkModel
import BoardwalkStoreFormat

extension Snapshot {
    /// Calls `body` for one session's events in (time, seq) order, through the session index: the
    /// references in the values of the session's bucket are collected and sorted, and each event is read
    /// from its block (a seek on `events`, usually landing on the block itself).
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` when a bucket value does not decode or lists
    ///   an event that `events` lacks.
    /// - Complexity: O(log N + bytes of the bucket's values) to collect, then O(log N + events of the block)
    ///   per event.
    public func forEachEvent(
        inSession session: StringID, time: Range<Timestamp>? = nil,
        _ body: (EventView) throws -> Bool
    ) throws {
        try forEachIndexedEvent(inSession: session, TimeRange(time), body)
    }

    /// The block holding event (onboarding, screen, time, seq), positioned on it; `nil` when there is none.
    ///
    /// Its block starts at or before the event and less than a block span earlier; usually it is the
    /// block right before the event's key.
    func locate(_ c: inout BlockCursor, onboarding: UInt32, screen: UInt16, time: Int64, seq: UInt64) throws
        -> (EventKey, EventBlockReader)?
    {
        // Only the event log's batch holding the seq, or `events` for a seq before the log, can hold it.
        c.focus(onSeq: seq)
        defer { c.unfocus() }
        let target = EventKey(onboarding: onboarding, screen: screen, timeBits: Layout.timeBits(time), seq: seq)
        var found = try seek(&c, target)
        let exact = try found && decodeBlockKey(c.key) == target
        if !exact {
            found = found ? try c.previous() : try c.last()
        }
        let floor = Layout.timeBits(time.minusSaturating(Layout.blockSpan - 1))
        while found {
            let key = try decodeBlockKey(c.key)
            guard key.onboarding == onboarding, key.screen == screen, key.timeBits >= floor else { return nil }
            guard var block = try openBlock(key, c.value) else {
                found = try c.previous()
                continue
            }
            if block.lastTime >= time && block.minSeq <= seq && seq <= block.maxSeq {
                while try advance(&block, key) {
                    if block.seq == seq && block.time == time { return (key, block) }
                    if block.time > time { break }
                }
            }
            found = try c.previous()
        }
        return nil
    }

    /// ``forEachEvent(inSession:time:_:)`` by the session's id string.
    /// - Throws: as ``forEachEvent(inSession:time:_:)-(StringID,_,_)``, and ``StoreError/Kind/corrupt`` when the string
    ///   dictionary is damaged (``id(of:)``).
    public func forEachEvent(
        inSession session: String, time: Range<Timestamp>? = nil,
        _ body: (EventView) throws -> Bool
    ) throws {
        guard let id = try id(of: session) else { return }
        try forEachEvent(inSession: id, time: time, body)
    }

    /// The sessions of one onboarding, in session id order, with the time of the first event stored for each.
    /// - Complexity: O(log N + sessions of the onboarding).
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` for a damaged `onboarding_sessions` key or chunk.
    public func sessions(ofOnboarding onboarding: StringID) throws -> [SessionSummary] {
        var out: [SessionSummary] = []
        try forEachOnboardingSession(onboarding) { session, timeBits in
            out.append(
                SessionSummary(
                    id: session, session: string(for: session) ?? "",
                    firstTime: Timestamp(microseconds: Layout.time(fromBits: timeBits))))
        }
        return out
    }

    /// The sessions of `onboarding` (``RecordFormat/noOnboarding``: sessions with events without a position) whose
    /// first event stored in it is at or after `time`, in session id order. That event is one of the session's, so
    /// a session left out has an event in the onboarding before `time`; one listed may still have one, stored
    /// later (see ``forEachRecord(arrivedSince:before:onboardings:_:)``).
    /// - Complexity: O(log N + sessions of the onboarding).
    package func sessionIDs(ofOnboarding onboarding: StringID, firstStoredFrom time: Timestamp) throws -> [StringID] {
        let bits = Layout.timeBits(time.microseconds)
        var out: [StringID] = []
        try forEachOnboardingSession(onboarding) { session, timeBits in
            if timeBits >= bits { out.append(session) }
        }
        return out
    }

    /// ``sessions(ofOnboarding:)-(StringID)`` by the onboarding's id string.
    /// - Throws: as ``sessions(ofOnboarding:)-(StringID)``, and ``StoreError/Kind/corrupt`` when the string dictionary
    ///   is damaged.
    public func sessions(ofOnboarding onboarding: String) throws -> [SessionSummary] {
        guard let id = try id(of: onboarding) else { return [] }
        return try sessions(ofOnboarding: id)
    }
}
