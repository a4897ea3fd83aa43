import BoardwalkCodec

// `spanning_sessions`: the sessions whose events lie under more than one onboarding key (docs/storage.md).
//
// Nearly every session has all its events under one onboarding, so the events of a whole onboarding's sessions
// are that onboarding's key range; the exceptions (inconsistent ids across onboardings, or a session that also
// has events without a position, kept under the no-onboarding key 0xFFFF_FFFF) are listed here, kept at append.
// A reader can then answer "which sessions of onboarding X have events elsewhere" without a pass over the
// store's (onboarding, session) pairs.

/// What a `spanning_sessions` entry says about its session (the value's one byte).
public struct SpanningSession: Hashable, Sendable {
    /// The session's interned id.
    public var id: StringID
    /// The session has events in two or more onboardings.
    public var inSeveralOnboardings: Bool
    /// The session has events without a position (under the no-onboarding key) besides events in an onboarding.
    public var hasEventsWithoutPosition: Bool

    static let severalBit: UInt8 = 2
    static let unpositionedBit: UInt8 = 1

    var flags: UInt8 {
        (inSeveralOnboardings ? SpanningSession.severalBit : 0)
            | (hasEventsWithoutPosition ? SpanningSession.unpositionedBit : 0)
    }
}

extension WriterState {
    /// Records in `spanning_sessions` the sessions of `newPairs` (onboarding << 32 | session, each just inserted
    /// into `onboarding_sessions`) that now have events under more than one onboarding key.
    ///
    /// A pair new to the store means no stored event has that onboarding and session. What the session had
    /// before the batch follows from its bucket in `sessions` (any stored event at all; nothing to read for a
    /// session id new in this batch), the session's entry
    /// here (its flags) and, when it had stored events, whether its no-position pair was stored before: an
    /// unlisted session with stored events had them under exactly one key. Must run before this batch's
    /// session-index values are written.
    /// - Complexity: O(p log N) for p new pairs (about one per new session; nothing for a batch that only
    ///   continues known sessions).
    /// - Returns: how many of the sessions are new to the store (no stored event before this batch): what the
    ///   `sessions` counter adds.
    @discardableResult
    func recordSpanningSessions(_ txn: Transaction, newPairs: [UInt64]) throws -> Int {
        guard !newPairs.isEmpty else { return 0 }
        var newSessions = 0
        let noOnboarding = RecordFormat.noOnboarding
        var updates: [(session: UInt32, flags: UInt8)] = []
        // A session id interned by this batch (at or above the batch's first new string id) has no stored event, so
        // its flags follow from its new pairs alone: counted per session in an array indexed by id (ids are dense),
        // where sorting every new pair session-major cost ~55 instructions per event with 100 000 sessions in flight,
        // nearly all of them such new sessions. Only the pairs of sessions stored before the batch are sorted.
        let firstNew = UInt32(clamping: batchStartStrings)
        var older: [UInt64] = []
        var lastNew: UInt32? = nil
        for pair in newPairs {
            let session = UInt32(truncatingIfNeeded: pair)
            if session >= firstNew {
                lastNew = max(lastNew ?? session, session)
            } else {
                older.append(pair << 32 | pair >> 32)  // session-major
            }
        }
        if let lastNew {
            // Per session: real onboardings (bits 0-1, saturating at 2), a no-position pair (bit 2), seen (bit 3),
            // flags emitted (bit 4).
            var marks = [UInt8](repeating: 0, count: Int(lastNew - firstNew) + 1)
            marks.withUnsafeMutableBufferPointer { marks in
                for pair in newPairs {
                    let session = UInt32(truncatingIfNeeded: pair)
                    guard session >= firstNew else { continue }
                    let i = Int(session - firstNew)
                    var mark = marks[i]
                    if mark == 0 { newSessions += 1 }
                    if UInt32(truncatingIfNeeded: pair >> 32) == noOnboarding {
                        mark |= 4
                    } else if mark & 3 < 2 {
                        mark += 1
                    }
                    marks[i] = mark | 8
                }
                for pair in newPairs {
                    let session = UInt32(truncatingIfNeeded: pair)
                    guard session >= firstNew else { continue }
                    let i = Int(session - firstNew)
                    let mark = marks[i]
                    guard mark & 16 == 0 else { continue }
                    marks[i] = mark | 16
                    let real = mark & 3
                    let flags =
                        (real >= 2 ? SpanningSession.severalBit : 0)
                        | (mark & 4 != 0 && real >= 1 ? SpanningSession.unpositionedBit : 0)
                    if flags != 0 { updates.append((session, flags)) }
                }
            }
        }
        // Sessions stored before the batch: each session's new pairs together (a comparison sort: few pairs, in a
        // few sorted runs, one per onboarding).
        older.sort()
        var i = 0
        while i < older.count {
            let session = UInt32(truncatingIfNeeded: older[i] >> 32)
            var newReal = 0, newUnpositioned = false
            while i < older.count && UInt32(truncatingIfNeeded: older[i] >> 32) == session {
                if UInt32(truncatingIfNeeded: older[i]) == noOnboarding { newUnpositioned = true } else { newReal += 1 }
                i += 1
            }
            var be = session.bigEndian
            let stored = try hasIndexedEvents(txn, session: session)
            if !stored { newSessions += 1 }
            var before: UInt8? = nil
            var storedReal = 0, storedUnpositioned = false
            if stored {
                before = try withUnsafeBytes(of: &be) { key in
                    try txn.get(dbs.spanningSessions, key).map { $0.first ?? 0 }
                }
                if !newUnpositioned {
                    storedUnpositioned = try OnboardingSessions.contains(
                        txn, dbs, onboarding: noOnboarding, session: session)
                } else {
                    storedUnpositioned = false  // the no-position pair is new: none was stored
                }
                if let before {
                    storedReal = before & SpanningSession.severalBit != 0 ? 2 : 1
                    storedUnpositioned = storedUnpositioned || before & SpanningSession.unpositionedBit != 0
                } else {
                    storedReal = storedUnpositioned ? 0 : 1
                }
            }
            let real = storedReal + newReal
            let unpositioned = storedUnpositioned || newUnpositioned
            let flags =
                (real >= 2 ? SpanningSession.severalBit : 0)
                | (unpositioned && real >= 1 ? SpanningSession.unpositionedBit : 0)
            if flags != 0 && flags != (before ?? 0) { updates.append((session, flags)) }
        }
        // In session order, as LMDB likes its puts (there are few).
        updates.sort { $0.session < $1.session }
        for (session, flags) in updates {
            var be = session.bigEndian
            var value = flags
            try withUnsafeBytes(of: &be) { key in
                try withUnsafeBytes(of: &value) { _ = try txn.put(dbs.spanningSessions, key, $0) }
            }
        }
        return newSessions
    }
}

extension Snapshot {
    /// The sessions with events under more than one onboarding key, in session id order.
    ///
    /// A session is listed when its events carry two or more onboarding ids, or one onboarding id and also
    /// events without a position (errors outside an onboarding's pages, stored under the no-onboarding key);
    /// the entry says which. Every other session has all its events in one onboarding's key range, so a scan
    /// of that range reads whole sessions. Inferred sessions are per (profile, onboarding) and never listed,
    /// unless a client also sends an explicit session id equal to an inferred one. Kept at append (about one
    /// seek per new (onboarding, session) pair) and verified by ``Store/check()``.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` for a malformed entry.
    /// - Complexity: O(spanning sessions); usually a small fraction of the sessions.
    public func spanningSessionEntries() throws -> [SpanningSession] {
        var out: [SpanningSession] = []
        try forEachSpanningSession { out.append($0) }
        return out
    }

    /// Calls `body` with each entry of ``spanningSessionEntries()``, in session id order, without building the list
    /// (about 18 000 entries, 220 KB of fresh memory, at a million sessions: pages a first query faults in).
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` for a malformed entry; whatever `body` throws.
    /// - Complexity: O(spanning sessions), no allocation.
    package func forEachSpanningSession(_ body: (SpanningSession) throws -> Void) throws {
        try txn.withCursor(dbs.spanningSessions) { c in
            var found = try c.first()
            while found {
                guard c.key.count == 4, c.value.count == 1, c.value[0] != 0, c.value[0] & ~3 == 0 else {
                    throw StoreError(
                        .corrupt,
                        "a spanning_sessions entry has a \(c.key.count)-byte key and a \(c.value.count)-byte value")
                }
                try body(
                    SpanningSession(
                        id: c.key.be32(0), inSeveralOnboardings: c.value[0] & SpanningSession.severalBit != 0,
                        hasEventsWithoutPosition: c.value[0] & SpanningSession.unpositionedBit != 0))
                found = try c.next()
            }
        }
    }

    /// The ids of ``spanningSessionEntries()``, in session id order.
    /// - Complexity: O(spanning sessions).
    package func spanningSessions() throws -> [StringID] {
        try spanningSessionEntries().map(\.id)
    }

    /// The sessions with events in `onboarding` that also have events under another onboarding key (another
    /// onboarding, or no position), in session id order: ``spanningSessions()`` narrowed to the onboarding.
    ///
    /// The sessions of `onboarding` not listed here have every event in the onboarding's key range.
    /// - Complexity: O(s log N) for s spanning sessions of the whole store (a seek and at most one chunk of
    ///   `onboarding_sessions` each), independent of the onboarding's size.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` for a damaged `spanning_sessions` or
    ///   `onboarding_sessions` entry.
    public func spanningSessions(ofOnboarding onboarding: StringID) throws -> [StringID] {
        var out: [StringID] = []
        for session in try spanningSessions() {
            if try OnboardingSessions.contains(txn, dbs, onboarding: onboarding, session: session) {
                out.append(session)
            }
        }
        return out
    }

    /// The ids of the sessions with events in `onboarding`, in session id order: the ids of
    /// ``sessions(ofOnboarding:)-(StringID)`` without resolving their strings or first times.
    /// - Complexity: O(log N + sessions of the onboarding), no allocation per session beyond the array.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` for a damaged `onboarding_sessions` key or chunk.
    public func sessionIDs(ofOnboarding onboarding: StringID) throws -> [StringID] {
        var out: [StringID] = []
        try forEachOnboardingSession(onboarding) { session, _ in out.append(session) }
        return out
    }

    /// `check()`: `spanning_sessions` lists exactly the sessions whose events (`pairs`: onboarding << 32 |
    /// session, from the events themselves) have two or more onboarding keys.
    func checkSpanningSessions(_ report: inout CheckReport, pairs: Set<UInt64>) throws {
        var real: [UInt32: Int] = [:]
        var unpositioned = Set<UInt32>()
        for pair in pairs {
            let session = UInt32(truncatingIfNeeded: pair), onboarding = UInt32(truncatingIfNeeded: pair >> 32)
            if onboarding == RecordFormat.noOnboarding {
                unpositioned.insert(session)
            } else {
                real[session, default: 0] += 1
            }
        }
        var expected: [UInt32: UInt8] = [:]
        for (session, n) in real {
            let flags =
                (n >= 2 ? SpanningSession.severalBit : 0)
                | (unpositioned.contains(session) ? SpanningSession.unpositionedBit : 0)
            if flags != 0 { expected[session] = flags }
        }
        var listed = 0
        try txn.withCursor(dbs.spanningSessions) { c in
            var found = try c.first()
            while found {
                if c.key.count != 4 || c.value.count != 1 {
                    report.add(
                        "spanning_sessions: an entry has a \(c.key.count)-byte key and a \(c.value.count)-byte value")
                } else {
                    listed += 1
                    let session = c.key.be32(0)
                    if let flags = expected[session] {
                        if flags != c.value[0] {
                            report.add(
                                "spanning_sessions: session \(session) has flags \(c.value[0]), but its events say \(flags)"
                            )
                        }
                    } else {
                        report.add(
                            "spanning_sessions: session \(session) is listed but its events are under one onboarding")
                    }
                }
                found = try c.next()
            }
        }
        if listed != expected.count {
            report.add(
                "spanning_sessions: \(listed) sessions listed, but \(expected.count) have events under more than one onboarding"
            )
        }
    }
}
