import BoardwalkCodec

// `spanning_sessions`: the sessions whose events lie under more than one onboarding key (docs/storage.md).
//
// Nearly every session has all its events under one onboarding, so the events of a whole onboarding's sessions
// are that onboarding's key range; the exceptions (inconsistent ids across onboardings, or a session that also
// has events without a position, kept under the no-onboarding key 0xFFFF_FFFF) are listed here, kept at append.
// A reader can then answer "which sessions of onboarding X have events elsewhere" without a pass over the
// store's (onboarding, session) pairs.

extension WriterState {
    /// Adds to `spanning_sessions` the sessions of `newPairs` (onboarding << 32 | session, each just inserted
    /// into `onboarding_sessions`) that now have events under more than one onboarding key.
    ///
    /// A pair new to the store means no stored event has that onboarding and session, so the session spans
    /// onboardings exactly when it has another new pair in this batch or any stored event at all: one seek in
    /// `sessions` per session with a new pair. Must run before this batch's session lists are written.
    /// - Complexity: O(p log N) for p new pairs (about one per new session; nothing for a batch that only
    ///   continues known sessions).
    func recordSpanningSessions(_ txn: Transaction, newPairs: [UInt64]) throws {
        guard !newPairs.isEmpty else { return }
        var sessions = newPairs.map { UInt32(truncatingIfNeeded: $0) }
        sessions.sort()
        var spanning: [UInt32] = []
        try txn.withCursor(dbs.sessions) { c in
            var i = 0
            while i < sessions.count {
                let session = sessions[i]
                var j = i + 1
                while j < sessions.count && sessions[j] == session { j += 1 }
                var isSpanning = j - i > 1
                if !isSpanning {
                    var be = session.bigEndian
                    let found = try withUnsafeBytes(of: &be) { try c.seek($0) }
                    isSpanning = found && c.key.count >= 4 && c.key.be32(0) == session
                }
                if isSpanning { spanning.append(session) }
                i = j
            }
        }
        var empty: UInt8 = 0
        for session in spanning {
            var be = session.bigEndian
            try withUnsafeBytes(of: &be) { key in
                try withUnsafeBytes(of: &empty) { value in
                    // NOOVERWRITE: a session already listed (a third onboarding) stays as it is.
                    _ = try txn.put(dbs.spanningSessions, key, UnsafeRawBufferPointer(rebasing: value[0..<0]),
                                    flags: PutFlags.noOverwrite)
                }
            }
        }
    }
}

extension Snapshot {
    /// The sessions with events under more than one onboarding key, in session id order.
    ///
    /// A session is listed when its events carry two or more onboarding ids, or one onboarding id and also
    /// events without a position (errors outside an onboarding's pages, stored under the no-onboarding key).
    /// Every other session has all its events in one onboarding's key range, so a scan of that range reads
    /// whole sessions. Inferred sessions are per (profile, onboarding) and never listed, unless a client
    /// also sends an explicit session id equal to an inferred one. Kept at append (one seek per new
    /// (onboarding, session) pair) and verified by ``Store/check()``.
    /// - Complexity: O(spanning sessions); usually a small fraction of the sessions.
    public func spanningSessions() throws -> [StringID] {
        var out: [StringID] = []
        try txn.withCursor(dbs.spanningSessions) { c in
            var found = try c.first()
            while found {
                guard c.key.count == 4 else {
                    throw StoreError(.corrupt, "a spanning_sessions entry has a \(c.key.count)-byte key")
                }
                out.append(c.key.be32(0))
                found = try c.next()
            }
        }
        return out
    }

    /// The sessions with events in `onboarding` that also have events under another onboarding key (another
    /// onboarding, or no position), in session id order: ``spanningSessions()`` narrowed to the onboarding.
    ///
    /// The sessions of `onboarding` not listed here have every event in the onboarding's key range.
    /// - Complexity: O(s log N) for s spanning sessions of the whole store (one `mdb_get` each), independent
    ///   of the onboarding's size.
    public func spanningSessions(ofOnboarding onboarding: StringID) throws -> [StringID] {
        var out: [StringID] = []
        for session in try spanningSessions() {
            var key = (UInt64(onboarding) << 32 | UInt64(session)).bigEndian
            let present = try withUnsafeBytes(of: &key) { try txn.get(dbs.onboardingSessions, $0) != nil }
            if present { out.append(session) }
        }
        return out
    }

    /// The ids of the sessions with events in `onboarding`, in session id order: the ids of
    /// ``sessions(ofOnboarding:)-(StringID)`` without resolving their strings or first times.
    /// - Complexity: O(log N + sessions of the onboarding), no allocation per session beyond the array.
    public func sessionIDs(ofOnboarding onboarding: StringID) throws -> [StringID] {
        var out: [StringID] = []
        var start = (UInt64(onboarding) << 32).bigEndian
        try txn.withCursor(dbs.onboardingSessions) { c in
            var found = try withUnsafeBytes(of: &start) { try c.seek($0) }
            while found {
                guard c.key.count == 8 else {
                    throw StoreError(.corrupt, "an onboarding_sessions entry has a \(c.key.count)-byte key")
                }
                if c.key.be32(0) != onboarding { break }
                out.append(c.key.be32(4))
                found = try c.next()
            }
        }
        return out
    }

    /// `check()`: `spanning_sessions` lists exactly the sessions whose events (`pairs`: onboarding << 32 |
    /// session, from the events themselves) have two or more onboarding keys.
    func checkSpanningSessions(_ report: inout CheckReport, pairs: Set<UInt64>) throws {
        var firstOnboarding: [UInt32: UInt32] = [:]
        var expected = Set<UInt32>()
        for pair in pairs {
            let session = UInt32(truncatingIfNeeded: pair), onboarding = UInt32(truncatingIfNeeded: pair >> 32)
            if let first = firstOnboarding[session] {
                if first != onboarding { expected.insert(session) }
            } else {
                firstOnboarding[session] = onboarding
            }
        }
        var listed = 0
        try txn.withCursor(dbs.spanningSessions) { c in
            var found = try c.first()
            while found {
                if c.key.count != 4 {
                    report.add("spanning_sessions: an entry has a \(c.key.count)-byte key")
                } else {
                    listed += 1
                    let session = c.key.be32(0)
                    if !expected.contains(session) {
                        report.add("spanning_sessions: session \(session) is listed but its events are under one onboarding")
                    }
                }
                found = try c.next()
            }
        }
        if listed != expected.count {
            report.add("spanning_sessions: \(listed) sessions listed, but \(expected.count) have events under more than one onboarding")
        }
    }
}
