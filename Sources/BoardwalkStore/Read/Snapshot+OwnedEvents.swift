import BoardwalkCodec
import BoardwalkModel

extension Snapshot {
    /// The owned events of a scan (see ``forEachEvent(onboarding:screens:time:_:)``), up to `limit`.
    /// - Complexity: as the scan, plus one allocation per event and per string of 16 bytes or more.
    /// - Throws: as the scan, and ``StoreError`` with ``StoreError/Kind/corrupt`` when a string id does not resolve.
    public func events(
        onboarding: String, screens: ClosedRange<Int>? = nil, time: Range<Timestamp>? = nil,
        limit: Int = .max
    ) throws -> [StoredEvent] {
        var out: [StoredEvent] = []
        guard limit > 0 else { return out }
        try forEachEvent(onboarding: onboarding, screens: screens, time: time) { view in
            out.append(try owned(view))
            return out.count < limit
        }
        return out
    }

    /// Every event of the store in key order, up to `limit`.
    /// - Throws: as ``events(onboarding:screens:time:limit:)``.
    public func allEvents(limit: Int = .max) throws -> [StoredEvent] {
        var out: [StoredEvent] = []
        guard limit > 0 else { return out }
        try forEachEvent(onboarding: nil) { view in
            out.append(try owned(view))
            return out.count < limit
        }
        return out
    }

    /// One session's owned events in (time, seq) order.
    /// - Throws: as ``forEachEvent(inSession:time:_:)-(String,_,_)``, and ``StoreError/Kind/corrupt`` when a string id
    ///   does not resolve.
    public func events(inSession session: String) throws -> [StoredEvent] {
        var out: [StoredEvent] = []
        try forEachEvent(inSession: session) { view in
            out.append(try owned(view))
            return true
        }
        return out
    }

    /// Owned events with `seq >= since`, in seq order, up to `limit`.
    /// - Throws: as ``forEachEvent(since:_:)``, and ``StoreError/Kind/corrupt`` when a string id does not resolve.
    public func events(since: UInt64, limit: Int = .max) throws -> [StoredEvent] {
        var out: [StoredEvent] = []
        guard limit > 0 else { return out }
        try forEachEvent(since: since) { view in
            out.append(try owned(view))
            return out.count < limit
        }
        return out
    }

    /// The owned event of a view, strings resolved through this snapshot.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` when a string id does not resolve.
    public func owned(_ view: EventView) throws -> StoredEvent {
        do {
            return StoredEvent(seq: view.seq, event: try view.record.event(strings: self))
        } catch {
            throw StoreError(
                .corrupt, "event seq \(view.seq) does not decode",
                underlying: storedRecordError(error))
        }
    }
}
