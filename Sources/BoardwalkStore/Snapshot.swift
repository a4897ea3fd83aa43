import BoardwalkCodec
import BoardwalkModel

/// A consistent read-only view of the store: one LMDB read transaction.
///
/// Get one from ``Store/read(_:)``; it and every ``EventView`` it hands out are valid only inside that
/// closure. Scans call a closure per event with a borrowed view (no allocation per event: strings stay
/// ``StringID``s); the `events…` methods return owned ``StoredEvent`` values for convenience.
///
/// A snapshot is also a `StringResolver`: pass it to `RecordView.event(strings:)`.
public struct Snapshot: StringResolver {
    let txn: Transaction
    let dbs: Databases
    /// Strings in the dictionary when the snapshot began: every id a record holds is below this.
    let stringCount: UInt32

    init(txn: Transaction, dbs: Databases) throws {
        self.txn = txn
        self.dbs = dbs
        stringCount = UInt32(clamping: try txn.entries(dbs.strings))
    }

    // MARK: Strings

    /// The string with id `id`, or `nil` if there is none (or it cannot be read).
    /// - Complexity: O(log strings), one `mdb_get`, and one `String` allocation for 16 bytes or more.
    public func string(for id: StringID) -> String? {
        var be = id.bigEndian
        return withUnsafeBytes(of: &be) { k in
            guard let v = try? txn.get(dbs.strings, k) else { return nil }
            return String(decoding: v, as: UTF8.self)
        }
    }

    /// The id of `string`, or `nil` when the store has never seen it.
    /// - Complexity: O(log strings).
    public func id(of string: String) throws -> StringID? {
        try string.withUTF8Bytes { bytes -> StringID? in
            try withUnsafeTemporaryAllocation(byteCount: 512, alignment: 8) { buf -> StringID? in
                let n = Layout.stringKey(bytes, into: buf.baseAddress!)
                guard let v = try txn.get(dbs.stringIDs, UnsafeRawBufferPointer(start: buf.baseAddress!, count: n)) else {
                    return nil
                }
                guard v.count == 4 else { throw StoreError(.corrupt, "a string_ids entry is \(v.count) bytes, not 4") }
                let id = v.be32(0)
                // Long strings are keyed by prefix and hash: confirm it is this string.
                if bytes.count > Layout.maxInlineKeyString && self.string(for: id) != string { return nil }
                return id
            }
        }
    }

    // MARK: Counts

    /// Counts and ranges of the whole store.
    /// - Complexity: O(1): counters kept by every append, and `mdb_stat`.
    public func stats() throws -> StoreStats {
        var kinds: [EventKind: Int] = [:]
        for kind in EventKind.allCases { kinds[kind] = Int(try txn.getUInt64(dbs.meta, Layout.metaKind(kind)) ?? 0) }
        let minTime = try txn.getUInt64(dbs.meta, Layout.metaMinTime)
        let maxTime = try txn.getUInt64(dbs.meta, Layout.metaMaxTime)
        var range: ClosedRange<Timestamp>? = nil
        if let minTime, let maxTime {
            range = Timestamp(microseconds: Layout.time(fromBits: minTime))...Timestamp(microseconds: Layout.time(fromBits: maxTime))
        }
        var pages = 0
        for db in [dbs.meta, dbs.events, dbs.sessions, dbs.onboardingSessions, dbs.batches, dbs.eventIDs, dbs.strings,
                   dbs.stringIDs, dbs.inferred, dbs.onboardings, dbs.checkpoints] {
            pages += try txn.pages(db)
        }
        return StoreStats(
            events: Int(try txn.getUInt64(dbs.meta, Layout.metaEvents) ?? 0),
            duplicatesSkipped: Int(try txn.getUInt64(dbs.meta, Layout.metaDuplicates) ?? 0),
            sessions: try txn.entries(dbs.onboardingSessions),
            inferredSessions: Int(try txn.getUInt64(dbs.meta, Layout.metaInferredSessions) ?? 0),
            onboardings: try txn.entries(dbs.onboardings),
            strings: Int(stringCount),
            eventsByKind: kinds,
            timeRange: range,
            nextSeq: try txn.getUInt64(dbs.meta, Layout.metaNextSeq) ?? 0,
            bytes: pages * txn.pageSize)
    }

    /// Every onboarding with its counters, in id order.
    /// - Complexity: O(onboardings).
    public func onboardings() throws -> [OnboardingSummary] {
        var out: [OnboardingSummary] = []
        try txn.withCursor(dbs.onboardings) { c in
            var found = try c.first()
            while found {
                guard c.key.count == 4 else { throw StoreError(.corrupt, "an onboardings key is \(c.key.count) bytes, not 4") }
                let id = c.key.be32(0)
                let r = try OnboardingSummaryRecord(c.value)
                out.append(OnboardingSummary(
                    id: id == RecordFormat.noOnboarding ? nil : id,
                    onboardingID: id == RecordFormat.noOnboarding ? nil : string(for: id),
                    events: Int(r.events),
                    timeRange: Timestamp(microseconds: r.minTime)...Timestamp(microseconds: r.maxTime),
                    maxTotalScreens: Int(r.maxTotalScreens)))
                found = try c.next()
            }
        }
        return out
    }

    /// The value stored with ``Checkpoint/key`` `key` by the last append that carried one, or `nil`.
    public func checkpoint(_ key: String) throws -> [UInt8]? {
        guard !key.isEmpty, key.utf8.count <= Layout.maxInlineKeyString else { return nil }
        return try key.withUTF8Bytes { k in try txn.get(dbs.checkpoints, k).map { Array($0) } }
    }

    // MARK: Borrowed scans

    /// Calls `body` for the events of one onboarding (or of all, when `onboarding` is `nil`), in
    /// (onboarding, screen index, time, seq) order, optionally limited to a screen range and a time range.
    ///
    /// Only matching keys are read: the scan seeks to each screen's first event in the time range and
    /// jumps to the next screen past its end (`mdb_cursor_get` with `MDB_SET_RANGE`, then `MDB_NEXT`).
    /// The ``EventView`` is valid only inside `body`. Return `false` from `body` to stop.
    /// - Parameters:
    ///   - onboarding: an id from ``id(of:)``; `nil` scans the whole store (time filtering without skips);
    ///     `RecordFormat.noOnboarding` selects events without `meta`.
    ///   - screens: screen indexes to include (ignored when `onboarding` is `nil`).
    ///   - time: the half-open time range to include.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` for a key or record that does not decode.
    /// - Complexity: O(log N) per screen visited plus O(1) amortized per event in range.
    public func forEachEvent(onboarding: StringID?, screens: ClosedRange<Int>? = nil, time: Range<Timestamp>? = nil,
                             _ body: (EventView) throws -> Bool) throws {
        let lo = time.map { Layout.timeBits($0.lowerBound.microseconds) } ?? 0
        let hi = time.map { Layout.timeBits($0.upperBound.microseconds) } ?? .max
        try txn.withCursor(dbs.events) { c in
            guard let onboarding else {
                var found = try c.first()
                while found {
                    let key = try decodeKey(c.key)
                    if key.timeBits >= lo && key.timeBits < hi {
                        guard try body(try view(key, c.value)) else { return }
                    }
                    found = try c.next()
                }
                return
            }
            let firstScreen = UInt16(clamping: screens?.lowerBound ?? 0)
            let lastScreen = UInt16(clamping: screens?.upperBound ?? Int(UInt16.max))
            if let screens, screens.upperBound < 0 { return }
            var found = try seek(&c, EventKey(onboarding: onboarding, screen: firstScreen, timeBits: lo, seq: 0))
            while found {
                let key = try decodeKey(c.key)
                if key.onboarding != onboarding || key.screen > lastScreen { return }
                if key.timeBits < lo {
                    found = try seek(&c, EventKey(onboarding: onboarding, screen: key.screen, timeBits: lo, seq: 0))
                    continue
                }
                if key.timeBits >= hi {
                    if key.screen == lastScreen { return }
                    found = try seek(&c, EventKey(onboarding: onboarding, screen: key.screen + 1, timeBits: lo, seq: 0))
                    continue
                }
                guard try body(try view(key, c.value)) else { return }
                found = try c.next()
            }
        }
    }

    /// ``forEachEvent(onboarding:screens:time:_:)`` by the onboarding's id string; no events when the
    /// store has never seen it.
    public func forEachEvent(onboarding: String, screens: ClosedRange<Int>? = nil, time: Range<Timestamp>? = nil,
                             _ body: (EventView) throws -> Bool) throws {
        guard let id = try id(of: onboarding) else { return }
        try forEachEvent(onboarding: id, screens: screens, time: time, body)
    }

    /// Calls `body` for one session's events in (time, seq) order, through the session index (a cursor
    /// on `sessions`, then `mdb_get` on `events` per entry).
    /// - Complexity: O(log N) per event (one index entry and one `events` lookup each).
    public func forEachEvent(inSession session: StringID, time: Range<Timestamp>? = nil,
                             _ body: (EventView) throws -> Bool) throws {
        let lo = time.map { Layout.timeBits($0.lowerBound.microseconds) } ?? 0
        let hi = time.map { Layout.timeBits($0.upperBound.microseconds) } ?? .max
        try withUnsafeTemporaryAllocation(byteCount: 32, alignment: 8) { buf in
            let key = buf.baseAddress!
            key.storeBE(session, at: 0)
            key.storeBE(lo, at: 4)
            key.storeBE(UInt64(0), at: 12)
            try txn.withCursor(dbs.sessions) { c in
                var found = try c.seek(UnsafeRawBufferPointer(start: key, count: Layout.sessionKeySize))
                while found {
                    guard c.key.count == Layout.sessionKeySize, c.value.count == Layout.sessionValueSize else {
                        throw StoreError(.corrupt, "a sessions entry has a \(c.key.count)-byte key and a \(c.value.count)-byte value")
                    }
                    if c.key.be32(0) != session { return }
                    let timeBits = c.key.be64(4)
                    if timeBits >= hi { return }
                    let eventKey = EventKey(onboarding: c.value.be32(0), screen: c.value.be16(4), timeBits: timeBits,
                                            seq: c.key.be64(12))
                    guard let value = try eventKey.withBytes({ try txn.get(dbs.events, $0) }) else {
                        throw StoreError(.corrupt, "the session index lists seq \(eventKey.seq), which is not in events")
                    }
                    guard try body(try view(eventKey, value)) else { return }
                    found = try c.next()
                }
            }
        }
    }

    /// ``forEachEvent(inSession:time:_:)`` by the session's id string.
    public func forEachEvent(inSession session: String, time: Range<Timestamp>? = nil,
                             _ body: (EventView) throws -> Bool) throws {
        guard let id = try id(of: session) else { return }
        try forEachEvent(inSession: id, time: time, body)
    }

    /// Calls `body` for every event with `seq >= since`, in seq (arrival) order: the incremental-export
    /// scan (a cursor on `batches`, then `mdb_get` on `events` per event).
    /// - Complexity: O(log N) to find the start, then O(log N) per event (an `events` lookup each).
    public func forEachEvent(since: UInt64, _ body: (EventView) throws -> Bool) throws {
        try txn.withCursor(dbs.batches) { c in
            var start = since.bigEndian
            var found = try withUnsafeBytes(of: &start) { try c.seek($0) }
            // The chunk holding `since` starts at or before it: step back unless we landed exactly on it.
            if !found || c.key.count != 8 || c.key.be64(0) > since {
                found = found ? try c.previous() : try c.last()
                if !found { found = try c.first() }
            }
            while found {
                guard c.key.count == 8, c.value.count % Layout.eventKeySize == 0 else {
                    throw StoreError(.corrupt, "a batches entry has a \(c.key.count)-byte key and a \(c.value.count)-byte value")
                }
                var offset = 0
                while offset < c.value.count {
                    let key = EventKey(UnsafeRawBufferPointer(rebasing: c.value[offset..<offset + Layout.eventKeySize]))!
                    offset += Layout.eventKeySize
                    if key.seq < since { continue }
                    guard let value = try key.withBytes({ try txn.get(dbs.events, $0) }) else {
                        throw StoreError(.corrupt, "the batches database lists seq \(key.seq), which is not in events")
                    }
                    guard try body(try view(key, value)) else { return }
                }
                found = try c.next()
            }
        }
    }

    /// The sessions of one onboarding, in session id order, with the time of the first event stored for each.
    /// - Complexity: O(log N + sessions of the onboarding).
    public func sessions(ofOnboarding onboarding: StringID) throws -> [SessionSummary] {
        var out: [SessionSummary] = []
        var start = (UInt64(onboarding) << 32).bigEndian
        try txn.withCursor(dbs.onboardingSessions) { c in
            var found = try withUnsafeBytes(of: &start) { try c.seek($0) }
            while found {
                guard c.key.count == 8, c.value.count == 8 else {
                    throw StoreError(.corrupt, "an onboarding_sessions entry has a \(c.key.count)-byte key")
                }
                if c.key.be32(0) != onboarding { break }
                let session = c.key.be32(4)
                out.append(SessionSummary(id: session, session: string(for: session) ?? "",
                                          firstTime: Timestamp(microseconds: Layout.time(fromBits: c.value.be64(0)))))
                found = try c.next()
            }
        }
        return out
    }

    /// ``sessions(ofOnboarding:)-(StringID)`` by the onboarding's id string.
    public func sessions(ofOnboarding onboarding: String) throws -> [SessionSummary] {
        guard let id = try id(of: onboarding) else { return [] }
        return try sessions(ofOnboarding: id)
    }

    // MARK: Owned values

    /// The owned events of a scan (see ``forEachEvent(onboarding:screens:time:_:)``), up to `limit`.
    /// - Complexity: as the scan, plus one allocation per event and per string of 16 bytes or more.
    public func events(onboarding: String, screens: ClosedRange<Int>? = nil, time: Range<Timestamp>? = nil,
                       limit: Int = .max) throws -> [StoredEvent] {
        var out: [StoredEvent] = []
        guard limit > 0 else { return out }
        try forEachEvent(onboarding: onboarding, screens: screens, time: time) { view in
            out.append(try owned(view))
            return out.count < limit
        }
        return out
    }

    /// Every event of the store in key order, up to `limit`.
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
    public func events(inSession session: String) throws -> [StoredEvent] {
        var out: [StoredEvent] = []
        try forEachEvent(inSession: session) { view in
            out.append(try owned(view))
            return true
        }
        return out
    }

    /// Owned events with `seq >= since`, in seq order, up to `limit`.
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
            throw StoreError(.corrupt, "event seq \(view.seq) does not decode", underlying: error)
        }
    }

    // MARK: Helpers

    @inline(__always)
    func decodeKey(_ bytes: UnsafeRawBufferPointer) throws -> EventKey {
        guard let key = EventKey(bytes) else {
            throw StoreError(.corrupt, "an events key is \(bytes.count) bytes, not \(Layout.eventKeySize)")
        }
        return key
    }

    @inline(__always)
    func view(_ key: EventKey, _ body: UnsafeRawBufferPointer) throws -> EventView {
        do {
            let record = try RecordView(body: body, header: key.header, stringLimit: stringCount)
            return EventView(seq: key.seq, record: record)
        } catch {
            throw StoreError(.corrupt, "event seq \(key.seq) (onboarding \(key.onboarding), screen \(key.screen)) does not decode",
                             underlying: error)
        }
    }

    @inline(__always)
    private func seek(_ c: inout Cursor, _ key: EventKey) throws -> Bool {
        try key.withBytes { try c.seek($0) }
    }
}

/// One stored event, borrowed: its seq and the codec's ``RecordView`` of its record, whose strings are
/// ``StringID``s. Valid only inside the scan callback that received it.
public struct EventView {
    /// The event's arrival sequence number.
    public let seq: UInt64
    /// The decoded record (time, onboarding and screen come from the store key).
    public let record: RecordView

    /// When the event happened.
    @inlinable public var time: Timestamp { record.time }
    /// The event's kind.
    @inlinable public var kind: EventKind { record.kind }
    /// The interned onboarding id, `nil` for an event without `meta`.
    @inlinable public var onboarding: StringID? { record.onboarding }
    /// The screen index, `nil` for an event without `meta`.
    @inlinable public var screenIndex: Int? { record.screenIndex }
    /// The interned session id (given, or inferred at append).
    @inlinable public var session: StringID? { record.session }
}

/// An owned stored event: its arrival sequence number and the event.
public struct StoredEvent: Hashable, Sendable {
    /// The event's arrival sequence number.
    public var seq: UInt64
    /// The event as stored (an inferred session appears as `inferred:<seq>`).
    public var event: Event

    /// A stored event from its parts.
    public init(seq: UInt64, event: Event) {
        self.seq = seq
        self.event = event
    }
}

/// Counts and ranges of a whole store (``Snapshot/stats()``).
public struct StoreStats: Hashable, Sendable {
    /// Events stored.
    public var events: Int
    /// Events skipped as duplicates, over the store's life.
    public var duplicatesSkipped: Int
    /// Distinct (onboarding, session) pairs: sessions, since a session belongs to one onboarding.
    public var sessions: Int
    /// Sessions the store inferred for events that had none.
    public var inferredSessions: Int
    /// Distinct onboardings (events without `meta` count as one more).
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

/// A session of an onboarding (``Snapshot/sessions(ofOnboarding:)-(StringID)``).
public struct SessionSummary: Hashable, Sendable {
    /// The interned session id.
    public var id: StringID
    /// The session id string (an inferred session's is `inferred:<seq of its first event>`).
    public var session: String
    /// The time of the first event stored for it (in arrival order).
    public var firstTime: Timestamp
}
