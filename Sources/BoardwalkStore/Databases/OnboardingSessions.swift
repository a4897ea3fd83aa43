import BoardwalkCodec
import BoardwalkStoreFormat

/// The `onboarding_sessions` database (format 6): each onboarding's sessions in chunks.
///
/// Key: onboarding id (4) ‖ the chunk's first session id (4), big-endian. Value: a session pair chunk (codec
/// ``SessionPairChunkReader``, `docs/codec.md`): sessions in increasing id order, each with the time bits of its
/// first event stored in the onboarding; the first session is the key's. The chunks of an onboarding do not
/// overlap: every session of a chunk is below the next chunk's key. The writer keeps each chunk within
/// ``Layout/sessionPairChunkTarget`` bytes; a reader finds a pair in the chunk with the largest key at or below it.
enum OnboardingSessions {
    /// The key at the cursor: (onboarding, first session).
    /// - Throws: ``StoreError/Kind/corrupt`` for a key that is not 8 bytes.
    static func key(_ c: some BlockEntries) throws -> (onboarding: UInt32, session: UInt32) {
        guard c.key.count == Layout.onboardingSessionKeySize else {
            throw StoreError(
                .corrupt, "an onboarding_sessions key is \(c.key.count) bytes, not \(Layout.onboardingSessionKeySize)")
        }
        return (c.key.be32(0), c.key.be32(4))
    }

    /// Calls `body` with each entry of the chunk at the cursor, whose key is `key`, in session order.
    /// - Throws: ``StoreError/Kind/corrupt`` when the chunk does not decode; whatever `body` throws.
    static func forEachEntry(
        _ c: some BlockEntries, key: (onboarding: UInt32, session: UInt32),
        _ body: (UInt32, UInt64) throws -> Void
    ) throws {
        var session = key.session
        do {
            var reader = try SessionPairChunkReader(c.value, firstSession: key.session)
            while let entry = try reader.next() {
                session = entry.session
                try body(entry.session, entry.time)
            }
        } catch let error as CodecError {
            throw StoreError(
                .corrupt,
                "the onboarding_sessions chunk of onboarding \(key.onboarding) at session \(key.session) "
                    + "does not decode (after session \(session))", underlying: error)
        }
    }

    /// Positions `c` at the chunk of `onboarding` that can hold `session` (the largest key at or below
    /// (onboarding, session)) and returns its key; `nil` when the onboarding has no chunk at or below it. In
    /// both cases `upper` is the first session of the onboarding's next chunk, if any: the chunk's sessions are
    /// below it.
    /// - Complexity: O(log N): one seek and a step.
    static func seekChunk(_ c: inout Cursor, onboarding: UInt32, holding session: UInt32) throws
        -> (key: (onboarding: UInt32, session: UInt32)?, upper: UInt32?)
    {
        var be = (UInt64(onboarding) << 32 | UInt64(session)).bigEndian
        var upper: UInt32? = nil
        var found = try withUnsafeBytes(of: &be) { try c.seek($0) }
        if found {
            let k = try key(c)
            if k.onboarding == onboarding && k.session == session {
                // Exactly at a chunk's key: its upper bound is the next key's session, if in the same onboarding.
                if try c.next() {
                    let next = try key(c)
                    if next.onboarding == onboarding { upper = next.session }
                }
                // Back to the chunk (a seek: `next` may have run off the end).
                _ = try withUnsafeBytes(of: &be) { try c.seek($0) }
                return (k, upper)
            }
            if k.onboarding == onboarding { upper = k.session }
            found = try c.previous()
        } else {
            found = try c.last()
        }
        guard found else { return (nil, upper) }
        let k = try key(c)
        return (k.onboarding == onboarding ? k : nil, upper)
    }

    /// Whether `onboarding` lists `session`.
    /// - Complexity: O(log N + one chunk).
    static func contains(_ txn: Transaction, _ dbs: Databases, onboarding: UInt32, session: UInt32) throws -> Bool {
        try txn.withCursor(dbs.onboardingSessions) { c in
            guard let k = try seekChunk(&c, onboarding: onboarding, holding: session).key else { return false }
            if k.session == session { return true }
            var present = false
            try forEachEntry(c, key: k) { s, _ in present = present || s == session }
            return present
        }
    }
}

extension Snapshot {
    /// Calls `body` with each session of `onboarding` in `onboarding_sessions` and the time bits of its first
    /// stored event, in session id order: what ``sessions(ofOnboarding:)-(StringID)`` and
    /// ``sessionIDs(ofOnboarding:)`` read.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` for a malformed key, a chunk that does not decode,
    ///   or chunks that overlap.
    /// - Complexity: O(log N + sessions of the onboarding).
    func forEachOnboardingSession(_ onboarding: StringID, _ body: (StringID, UInt64) throws -> Void) throws {
        var start = (UInt64(onboarding) << 32).bigEndian
        func walk(_ c: inout some BlockEntries) throws {
            var found = try withUnsafeBytes(of: &start) { try c.seek($0) }
            var previous: UInt32? = nil
            while found {
                let key = try OnboardingSessions.key(c)
                if key.onboarding != onboarding { break }
                if let previous, key.session <= previous {
                    throw StoreError(
                        .corrupt,
                        "the onboarding_sessions chunk of onboarding \(onboarding) at session \(key.session) "
                            + "overlaps the one before it (which lists session \(previous))")
                }
                try OnboardingSessions.forEachEntry(c, key: key) { session, time in
                    previous = session
                    try body(session, time)
                }
                found = try c.next()
            }
        }
        // Through a ``LeafWalk`` where it can read (a read transaction): the onboarding's leaves are scattered
        // through the file, and a `pread` of one costs about 2 µs against a page fault's 4–5 µs.
        if var leaves = try LeafWalk(txn, dbs.onboardingSessions) {
            defer { leaves.release() }
            try walk(&leaves)
        } else {
            try txn.withCursor(dbs.onboardingSessions) { c in try walk(&c) }
        }
    }
}

extension WriterState {
    /// Adds the pairs the batch's filter did not know (first seen, or forgotten by the filter) to their
    /// onboardings' chunks, each once: a pair already listed is left as it is (its time stays that of the
    /// first event stored for it), so only pairs new to the store count.
    ///
    /// Per onboarding of the batch, the pairs are merged into the chunk that can hold them, a chunk at a time:
    /// one seek, the chunk decoded, the new sessions inserted in order (nearly always appended: session ids are
    /// dense in first-seen order, so a new session is larger than every stored one), and the result written
    /// back as chunks of at most ``Layout/sessionPairChunkTarget`` bytes (filled, or cut evenly when a session was
    /// inserted between stored ones), the first under the old key and any further ones under their first sessions
    /// (which lie between the old key and the next). A full chunk that only gains sessions after its last is left
    /// untouched. One entry per pair would be a put in the middle of the tree (~1 800 instructions each with
    /// 100 000 sessions in flight, docs/storage.md, "Why it is built this way").
    /// - Returns: how many sessions are new to the store.
    /// - Complexity: O(p + c) for p pairs and c stored entries of the chunks they fall in, plus a seek per chunk.
    func writeOnboardingSessions(_ txn: Transaction, _ pairs: [(pair: UInt64, timeBits: UInt64)]) throws -> Int {
        guard !pairs.isEmpty else { return 0 }
        // Stable: of a pair listed twice (its filter slot was taken in between), the first listed, the pair's
        // first event in arrival order, comes first and is the one kept.
        let sorted = WriterState.radixSorted(pairs) { $0.pair }
        var merge = PairChunkMerge(builder: pairChunkBuilder, key: scratch)
        let inserted = try merge.mergeAll(txn, dbs, sorted)
        pairChunkBuilder = merge.builder
        // Before writeSessionIndex: `sessions` must not yet hold this batch's lists.
        return try recordSpanningSessions(txn, newPairs: inserted)
    }
}

/// The state of ``WriterState/writeOnboardingSessions(_:_:)``: one chunk's entries at a time, and the builder and
/// key bytes its puts use. A struct with methods rather than closures over local variables, which Swift boxes
/// and checks on every access (as measured for the strings' flush, docs/storage.md).
struct PairChunkMerge {
    var builder: SessionPairChunkBuilder
    /// 8 bytes for the key of a put.
    let key: UnsafeMutableRawPointer
    /// The chunk being merged into: its stored entries, then the batch's in session order.
    var entries: [(session: UInt32, time: UInt64)] = []

    init(builder: SessionPairChunkBuilder, key: UnsafeMutableRawPointer) {
        self.builder = builder
        self.key = key
    }

    /// Merges every pair of `sorted` (in pair order; of equal pairs the first is kept) into `onboarding_sessions`
    /// and returns those new to the store, in pair order: the loop of ``WriterState/writeOnboardingSessions(_:_:)``.
    mutating func mergeAll(_ txn: Transaction, _ dbs: Databases, _ sorted: [(pair: UInt64, timeBits: UInt64)]) throws
        -> [UInt64]
    {
        var inserted: [UInt64] = []
        try txn.withCursor(dbs.onboardingSessions) { c in
            var i = 0
            while i < sorted.count { try merge(&c, sorted, from: &i, inserted: &inserted) }
        }
        return inserted
    }

    /// Merges `sorted[i...]`'s pairs that fall in one chunk (those of `sorted[i]`'s onboarding below the next
    /// chunk's key) into it and writes it back; advances `i` past them and appends the pairs new to the store
    /// to `inserted`.
    mutating func merge(
        _ c: inout Cursor, _ sorted: [(pair: UInt64, timeBits: UInt64)], from i: inout Int,
        inserted: inout [UInt64]
    ) throws {
        let onboarding = UInt32(truncatingIfNeeded: sorted[i].pair >> 32)
        let (chunkKey, upper) = try OnboardingSessions.seekChunk(
            &c, onboarding: onboarding,
            holding: UInt32(truncatingIfNeeded: sorted[i].pair))
        entries.removeAll(keepingCapacity: true)
        if let chunkKey { try load(c, chunkKey, upper: upper) }
        let stored = entries.count
        var appendedOnly = true
        while i < sorted.count, UInt32(truncatingIfNeeded: sorted[i].pair >> 32) == onboarding {
            let s = UInt32(truncatingIfNeeded: sorted[i].pair)
            if let upper, s >= upper { break }
            if let last = entries.last?.session, s <= last {
                // Not past the chunk's last session: stored already (or a repeat), or one to insert.
                if s < last, let at = insertionIndex(of: s) {
                    entries.insert((s, sorted[i].timeBits), at: at)
                    inserted.append(sorted[i].pair)
                    appendedOnly = false
                }
            } else {
                entries.append((s, sorted[i].timeBits))
                inserted.append(sorted[i].pair)
            }
            i += 1
        }
        if entries.count > stored {
            try write(&c, onboarding: onboarding, unchanged: appendedOnly ? stored : 0, balanced: !appendedOnly)
        }
    }

    /// Decodes the chunk at the cursor into ``entries``, checking that its sessions stay below `upper` (the reader
    /// checks that they increase).
    private mutating func load(_ c: Cursor, _ chunkKey: (onboarding: UInt32, session: UInt32), upper: UInt32?) throws {
        try OnboardingSessions.forEachEntry(c, key: chunkKey) { session, time in
            if let upper, session >= upper {
                throw StoreError(
                    .corrupt,
                    "the onboarding_sessions chunk of onboarding \(chunkKey.onboarding) at session \(chunkKey.session) "
                        + "lists session \(session), which belongs to the next chunk (at \(upper))")
            }
            entries.append((session, time))
        }
    }

    /// Where `session` goes in ``entries`` (sorted), or `nil` when it is there already.
    private func insertionIndex(of session: UInt32) -> Int? {
        var lo = 0, hi = entries.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if entries[mid].session < session { lo = mid + 1 } else { hi = mid }
        }
        return lo < entries.count && entries[lo].session == session ? nil : lo
    }

    /// Writes ``entries`` as chunks of at most ``Layout/sessionPairChunkTarget`` bytes, each under its first
    /// session. A chunk that is exactly the first `unchanged` entries (the stored chunk they came from, which
    /// packs the same) is not written again.
    ///
    /// Chunks are filled to the size, as suits sessions appended past the last (no later session goes into a
    /// full chunk), unless `balanced`: then entries that outgrow one chunk are cut into chunks of about equal
    /// size. A chunk that overflows because a session was inserted between its stored ones is in a range where
    /// more may come (the no-position pairs and second onboardings of the sessions in flight, in no id order):
    /// filled to the size, each such insertion split off the chunk's last entry or two into a chunk of its own:
    /// 200 000 pairs of sessions drawn at random among the 100 000 newest ids left 12 entries per chunk on average
    /// (86 % of the chunks under 128 bytes), and 61 when cut evenly (a smaller case is a test:
    /// `insertionsAmongSessionsInFlightKeepChunksFilled`).
    private mutating func write(_ c: inout Cursor, onboarding: UInt32, unchanged: Int, balanced: Bool) throws {
        key.storeBE(onboarding, at: 0)
        var limit = Layout.sessionPairChunkTarget
        if balanced {
            // The size of one chunk holding them all (a builder's pass; the pieces each add a few bytes, their first
            // time in 8 bytes instead of a delta).
            builder.reset(firstSession: entries[0].session, time: entries[0].time)
            for entry in entries.dropFirst() { builder.append(session: entry.session, time: entry.time) }
            let total = builder.byteCount
            if total <= limit {
                try put(&c)
                return
            }
            let pieces = (total + limit - 1) / limit
            limit = min(limit, total / pieces + 16)
        }
        var start = 0
        for index in entries.indices {
            let entry = entries[index]
            if index == start {
                builder.reset(firstSession: entry.session, time: entry.time)
            } else if builder.byteCount(appending: entry.session, time: entry.time) > limit {
                if !(start == 0 && index == unchanged) { try put(&c) }
                start = index
                builder.reset(firstSession: entry.session, time: entry.time)
            } else {
                builder.append(session: entry.session, time: entry.time)
            }
        }
        if !(start == 0 && entries.count == unchanged) { try put(&c) }
    }

    /// Puts the builder's chunk under (onboarding, its first session): over the stored chunk of that key, or as
    /// a new key between it and the next chunk.
    private func put(_ c: inout Cursor) throws {
        key.storeBE(builder.firstSession, at: 4)
        try builder.withValue { value in
            _ = try c.put(UnsafeRawBufferPointer(start: key, count: Layout.onboardingSessionKeySize), value)
        }
    }
}
