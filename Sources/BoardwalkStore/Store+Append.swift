import BoardwalkCodec
import BoardwalkModel

/// What one ``Store/append(_:checkpoint:)`` did.
public struct AppendResult: Hashable, Sendable {
    /// Events stored.
    public var appended: Int
    /// Events skipped because an event with the same event id and time is already stored (or came
    /// earlier in the same batch).
    public var duplicates: Int
    /// The seqs given to the stored events: consecutive, in the order of the input (empty when none).
    public var seqs: Range<UInt64>
}

/// A value the caller stores in the same transaction as a batch of events, for example how far into an
/// input file the batch reached, so that a restarted import resumes exactly where the last commit ended.
public struct Checkpoint: Hashable, Sendable {
    /// The checkpoint's name (1 to 400 UTF-8 bytes).
    public var key: String
    /// Any bytes.
    public var value: [UInt8]

    /// A checkpoint to store under `key`.
    public init(key: String, value: [UInt8]) {
        self.key = key
        self.value = value
    }
}

extension Store {
    /// Appends a batch of events in one write transaction and returns after it commits (durably, with
    /// the default ``Durability/full``).
    ///
    /// Each stored event gets the next arrival sequence number (`seq`). An event whose event id is
    /// already stored with the same time is skipped and counted in ``AppendResult/duplicates``. An event
    /// without a session gets an inferred one (`docs/storage.md`, "Sessions without ids"). When the map
    /// is full the transaction is aborted, the map grown (every transaction of the process waits) and
    /// the batch redone, so callers never see `MDB_MAP_FULL`.
    ///
    /// Batches of thousands of events amortize the commit's flushes; one event per call is correct but
    /// pays a full commit each time.
    ///
    /// - Parameters:
    ///   - events: the batch; empty is allowed (useful to store only a checkpoint).
    ///   - checkpoint: stored in the same transaction, so it is durable exactly when the batch is.
    /// - Throws: ``StoreError`` (read-only store, bad checkpoint key), ``LMDBError``, or the codec's
    ///   `EncodingError` for an event the record format cannot hold (a screen index above 65 534); on a
    ///   throw nothing of the batch is stored.
    /// - Complexity: O(n log n) for n events, plus O(log N) B-tree work per event and index entry.
    @discardableResult
    public func append(_ events: some Sequence<Event>, checkpoint: Checkpoint? = nil) throws -> AppendResult {
        if let checkpoint { try checkpoint.validate() }
        if let result = try events.withContiguousStorageIfAvailable({ batch in
            try write { w in try w.append(buffer: batch, checkpoint: checkpoint) }
        }) {
            return result
        }
        return try Array(events).withUnsafeBufferPointer { batch in
            try write { w in try w.append(buffer: batch, checkpoint: checkpoint) }
        }
    }

    /// Runs `body` in one write transaction and commits when it returns; aborts and rethrows when it throws.
    ///
    /// Use it to store several batches, or a batch and several checkpoints, atomically:
    ///
    /// ```swift
    /// try store.write { w in
    ///     try w.append(fromFileA)
    ///     try w.append(fromFileB)
    ///     try w.setCheckpoint(Checkpoint(key: "import", value: offsets))
    /// }
    /// ```
    ///
    /// `body` runs on the calling thread and cannot escape or suspend (LMDB ties a write transaction to
    /// its thread). **It may run more than once**: when the map fills up, the transaction is aborted,
    /// the map grown, and `body` called again from the start; keep side effects outside it until it
    /// returns. Appends of the process are serialized; do not call `write` or `append` from inside
    /// `read { }` or `write { }`.
    /// Wraps `mdb_txn_begin`, `mdb_txn_commit` and `mdb_txn_abort`.
    /// - Throws: whatever `body` throws; ``StoreError`` with ``StoreError/Kind/readOnly``; ``LMDBError``.
    public func write<R>(_ body: (StoreWriter) throws -> R) throws -> R {
        try withWriter { writer in
            while true {
                do {
                    let result = try env.transaction(write: true) { txn in
                        try writer.begin(txn)
                        return try body(StoreWriter(writer: writer, txn: txn))
                    }
                    writer.didCommit()
                    return result
                } catch let error as LMDBError where error == .mapFull {
                    // lmdb.h: after MDB_MAP_FULL the transaction "must be aborted"; it was, by `transaction`.
                    writer.didAbort()
                    try env.grow()
                } catch {
                    writer.didAbort()
                    throw error
                }
            }
        }
    }
}

/// The write side of a ``Store/write(_:)`` transaction, valid only inside that closure.
public struct StoreWriter {
    let writer: WriterState
    let txn: Transaction

    /// Appends a batch in this transaction: seqs, duplicates and inferred sessions exactly as
    /// ``Store/append(_:checkpoint:)``, durable when the transaction commits.
    /// - Complexity: O(n log n) for n events, plus O(log N) B-tree work per event and index entry.
    @discardableResult
    public func append(_ events: some Sequence<Event>) throws -> AppendResult {
        if let result = try events.withContiguousStorageIfAvailable({ try append(buffer: $0, checkpoint: nil) }) {
            return result
        }
        return try Array(events).withUnsafeBufferPointer { try append(buffer: $0, checkpoint: nil) }
    }

    /// Stores `checkpoint` in this transaction, replacing the value under its key.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/invalidArgument`` for a key that is empty or longer
    ///   than 400 UTF-8 bytes.
    public func setCheckpoint(_ checkpoint: Checkpoint) throws {
        try checkpoint.validate()
        try writer.putCheckpoint(checkpoint, txn: txn)
    }

    /// A snapshot that sees this transaction's own writes, for reads in the middle of a write.
    public var snapshot: Snapshot {
        get throws { try Snapshot(txn: txn, dbs: writer.dbs) }
    }

    func append(buffer: UnsafeBufferPointer<Event>, checkpoint: Checkpoint?) throws -> AppendResult {
        let result = try writer.append(buffer, txn: txn)
        if let checkpoint { try writer.putCheckpoint(checkpoint, txn: txn) }
        return result
    }
}

extension Checkpoint {
    func validate() throws {
        let n = key.utf8.count
        guard n >= 1 && n <= Layout.maxInlineKeyString else {
            throw StoreError(.invalidArgument, "a checkpoint key must have 1 to \(Layout.maxInlineKeyString) UTF-8 bytes, not \(n)")
        }
    }
}

/// The writer's in-memory state: the string dictionary, caches, and reusable buffers.
///
/// Only used under the store's writer lock. Everything a transaction changes here is either rolled back
/// by ``didAbort()`` or confirmed by ``didCommit()``, so a redone batch sees the state as of the last commit.
final class WriterState {
    let dbs: Databases
    /// Every string of the store, ids dense in first-seen order (mirrors the `strings` database).
    private var table = StringTable()
    private var committedStrings = 0
    private var loaded = false
    /// The `next_seq` this writer last committed or read; a different value in `meta` means another
    /// process appended, and the caches are refreshed.
    private var knownNextSeq: UInt64 = 0
    private var nextSeq: UInt64 = 0

    /// Inference state per (profile, onboarding): committed, and changed in the running transaction.
    private var inferCache: [UInt64: InferState] = [:]
    private var pendingInfer: [UInt64: InferState] = [:]
    /// (onboarding, session) pairs known to be in `onboarding_sessions`.
    /// Committed pairs plus those added by the running transaction (listed in `pendingPairs`).
    private var knownPairs = Set<UInt64>()
    private var pendingPairs: [UInt64] = []

    private var txn: Transaction?
    private var encoder = RecordEncoder(capacity: 1 << 20)
    private var entries: [Entry] = []
    private var order: [SortKey] = []
    private var sortBuffer: [SortKey] = []
    private var onboardingStats: [UInt32: OnboardingAccumulator] = [:]
    private var newPairs: [(pair: UInt64, timeBits: UInt64)] = []
    private let scratch: UnsafeMutableRawPointer
    private let chunk: UnsafeMutableRawPointer

    struct InferState {
        var session: UInt32
        var lastTime: Int64
        /// The session has seen only start events so far (`onboarding_loaded`, `onboarding_started`).
        var fresh: Bool
    }

    /// One event of the running batch, in arrival order.
    struct Entry {
        var onboarding: UInt32
        var screen: UInt16
        var session: UInt32
        var totalScreens: UInt32
        var timeBits: UInt64
        var seq: UInt64
        var body: Range<Int>
    }

    /// A sort key: the leading key field `a` and the entry's position `i`; the rest of the key, (time, seq),
    /// is read from the entry when needed.
    struct SortKey {
        var a: UInt64
        var i: Int
    }

    struct OnboardingAccumulator {
        var events: UInt64 = 0
        var minTime = Int64.max
        var maxTime = Int64.min
        var maxTotalScreens: UInt32 = 0
    }

    init(dbs: Databases) {
        self.dbs = dbs
        scratch = .allocate(byteCount: 2048, alignment: 8)
        chunk = .allocate(byteCount: Layout.batchChunk * Layout.eventKeySize, alignment: 8)
    }

    deinit {
        scratch.deallocate()
        chunk.deallocate()
    }

    // MARK: Transaction outcome

    func didCommit() {
        committedStrings = table.count
        knownNextSeq = nextSeq
        for (k, v) in pendingInfer { inferCache[k] = v }
        pendingInfer.removeAll(keepingCapacity: true)
        // Bounded memory: past a million pairs, forget them (a miss costs one NOOVERWRITE put).
        if knownPairs.count > 1 << 20 { knownPairs.removeAll() }
        pendingPairs.removeAll(keepingCapacity: true)
        txn = nil
    }

    func didAbort() {
        if table.count != committedStrings {
            table = StringTable(strings: Array(table.strings.prefix(committedStrings)))
        }
        nextSeq = knownNextSeq
        pendingInfer.removeAll(keepingCapacity: true)
        for pair in pendingPairs { knownPairs.remove(pair) }
        pendingPairs.removeAll(keepingCapacity: true)
        txn = nil
    }

    // MARK: Interning

    /// Interns through the writer's in-memory table; a new string is written to `strings` and
    /// `string_ids` in the running transaction. A struct (the table moved in for the batch) so that
    /// the encoder's calls need no dynamic exclusivity checks.
    struct Interner: StringInterner {
        var table: StringTable
        let txn: Transaction
        let dbs: Databases
        /// 512 bytes for a string key.
        let scratch: UnsafeMutableRawPointer
        /// Strings new in this batch, whose `string_ids` entries ``flush()`` writes in key order.
        var newIDs: [StringID] = []

        mutating func intern(_ string: String) throws -> StringID {
            let before = table.count
            let id = table.intern(string)
            if Int(id) == before {
                var be = id.bigEndian
                try string.withUTF8Bytes { bytes in
                    // Ids only grow, so every new id is the last key of `strings`.
                    _ = try withUnsafeBytes(of: &be) { try txn.put(dbs.strings, $0, bytes, flags: PutFlags.append) }
                }
                newIDs.append(id)
            }
            return id
        }

        /// Writes the `string_ids` entries of the batch's new strings, sorted by key: new strings are
        /// mostly UUIDs (sessions), whose entries land all over the tree; in key order, consecutive puts
        /// share the path from the root.
        mutating func flush() throws {
            guard !newIDs.isEmpty else { return }
            // Sorted by the key's first 8 bytes, as a fixed-width integer: comparing `String`s through
            // `utf8.lexicographicallyPrecedes` cost 8 % of an append with many new sessions. The order is
            // only for page locality (each put stands alone), so ties between equal prefixes may stay in
            // any order.
            var sorted = newIDs.map { id in
                PrefixedID(prefix: table.strings[Int(id)].withUTF8Bytes(Layout.keyPrefix), id: id)
            }
            sorted.sort { $0.prefix < $1.prefix }
            let strings = table.strings
            try txn.withCursor(dbs.stringIDs) { c in
                for entry in sorted {
                    let id = entry.id
                    var be = id.bigEndian
                    try strings[Int(id)].withUTF8Bytes { bytes in
                        let n = Layout.stringKey(bytes, into: scratch)
                        // A (2^-64) hash collision between two long strings keeps the first mapping;
                        // readers verify a looked-up id against `strings`.
                        _ = try withUnsafeBytes(of: &be) { idBytes in
                            try c.put(UnsafeRawBufferPointer(start: scratch, count: n), idBytes, flags: PutFlags.noOverwrite)
                        }
                    }
                }
            }
            newIDs.removeAll(keepingCapacity: true)
        }
    }

    /// A new string's id and the first 8 bytes of its `string_ids` key, for sorting.
    struct PrefixedID {
        var prefix: UInt64
        var id: StringID
    }

    /// Brings the caches up to date with the store: loads the dictionary on first use, and reloads what
    /// another process may have appended since this writer's last commit.
    private func refresh(_ txn: Transaction) throws {
        let storedNext = try txn.getUInt64(dbs.meta, Layout.metaNextSeq) ?? 0
        if loaded && storedNext == knownNextSeq { return }
        let have = loaded ? table.count : 0
        if !loaded { table = StringTable() }
        var bytes = UInt32(have).bigEndian
        try txn.withCursor(dbs.strings) { c in
            var found = try withUnsafeBytes(of: &bytes) { try c.seek($0) }
            var expected = UInt32(have)
            while found {
                guard c.key.count == 4, c.key.be32(0) == expected else {
                    throw StoreError(.corrupt, "the strings database is not dense at id \(expected)")
                }
                let s = String(decoding: c.value, as: UTF8.self)
                _ = table.intern(s)
                guard table.count == Int(expected) + 1 else {
                    throw StoreError(.corrupt, "string id \(expected) repeats an earlier string")
                }
                expected += 1
                found = try c.next()
            }
        }
        committedStrings = table.count
        inferCache.removeAll()
        loaded = true
        knownNextSeq = storedNext
        nextSeq = storedNext
    }

    // MARK: Append

    /// Starts a write transaction: brings the caches up to date.
    func begin(_ txn: Transaction) throws {
        self.txn = txn
        try refresh(txn)
    }

    func putCheckpoint(_ checkpoint: Checkpoint, txn: Transaction) throws {
        try checkpoint.key.withUTF8Bytes { k in
            try checkpoint.value.withUnsafeBytes { v in try txn.put(dbs.checkpoints, k, v) }
        }
    }

    /// Appends one batch inside the running transaction (after ``begin(_:)``).
    func append(_ events: UnsafeBufferPointer<Event>, txn: Transaction) throws -> AppendResult {
        // The table moves into the interner for the batch (leaving an empty one here, so that it stays
        // uniquely referenced and grows in place) and comes back however the batch ends.
        var interner = Interner(table: table, txn: txn, dbs: dbs, scratch: scratch + 1024)
        table = StringTable()
        defer { table = interner.table }
        let firstSeq = nextSeq
        // The hot loop works on locals: class properties would pay a dynamic exclusivity check per access.
        var encoder = RecordEncoder(capacity: 0)
        var entries: [Entry] = []
        var newPairs: [(pair: UInt64, timeBits: UInt64)] = []
        var knownPairs = Set<UInt64>()
        var pendingPairs: [UInt64] = []
        swap(&encoder, &self.encoder)
        swap(&entries, &self.entries)
        swap(&newPairs, &self.newPairs)
        swap(&knownPairs, &self.knownPairs)
        swap(&pendingPairs, &self.pendingPairs)
        var next = nextSeq
        let pendingAtStart = pendingPairs.count
        var loopFinished = false
        defer {
            if !loopFinished {
                // An event the encoder refused (the caller may catch that and go on in the same
                // transaction): the pairs of this batch were not written, so they are not known.
                for pair in pendingPairs[pendingAtStart...] { knownPairs.remove(pair) }
                pendingPairs.removeSubrange(pendingAtStart...)
            }
            swap(&encoder, &self.encoder)
            swap(&entries, &self.entries)
            swap(&newPairs, &self.newPairs)
            swap(&knownPairs, &self.knownPairs)
            swap(&pendingPairs, &self.pendingPairs)
        }
        entries.removeAll(keepingCapacity: true)
        encoder.removeAll()
        newPairs.removeAll(keepingCapacity: true)
        var kindCounts = [UInt64](repeating: 0, count: EventKind.allCases.count)
        var duplicates = 0
        var inferredSessions: UInt64 = 0
        var minTime = Int64.max
        var maxTime = Int64.min
        let eventKey = scratch + 512
        let base = events.baseAddress
        for index in 0..<events.count {
            // Fields are read through the pointer so that the event is not copied (a copy retains every string).
            let original = base! + index
            let time = original.pointee.time.microseconds
            let timeBits = Layout.timeBits(time)
            // Semantics rule 11: empty ids and replies are absent (`Store.normalized`). Rare, so only such
            // events are copied and fixed; an empty event id is simply not looked up.
            let needsNormalization = Store.needsNormalization(at: original)
            var idKeySize = 0
            if let id = original.pointee.eventID, !id.isEmpty {
                idKeySize = id.withUTF8Bytes { Layout.eventIDKey(timeBits: timeBits, id: $0, into: scratch) }
                if try txn.get(dbs.eventIDs, UnsafeRawBufferPointer(start: scratch, count: idKeySize)) != nil {
                    duplicates += 1
                    continue
                }
            }
            let seq = next
            let record: EncodedRecord
            if needsNormalization || original.pointee.session == nil {
                var event = original.pointee
                Store.normalize(&event)
                if event.session == nil {
                    let (name, isNew) = try inferSession(for: event, seq: seq, interner: &interner)
                    event.session = name
                    if isNew { inferredSessions += 1 }
                }
                record = try encoder.appendBody(event, strings: &interner)
            } else {
                record = try encoder.appendBody(original.pointee, strings: &interner)
            }
            let onboarding = record.header.keyOnboarding
            let screen = record.header.keyScreenIndex
            let session = record.session!
            let totalScreens = UInt32(clamping: original.pointee.meta?.totalScreens ?? 0)
            entries.append(Entry(onboarding: onboarding, screen: screen, session: session, totalScreens: totalScreens,
                                 timeBits: timeBits, seq: seq, body: record.range))
            next += 1

            if idKeySize > 0 {
                EventKey(onboarding: onboarding, screen: screen, timeBits: timeBits, seq: seq).write(to: eventKey)
                try txn.put(dbs.eventIDs, UnsafeRawBufferPointer(start: scratch, count: idKeySize),
                            UnsafeRawBufferPointer(start: eventKey, count: Layout.eventKeySize))
            }
            let pair = UInt64(onboarding) << 32 | UInt64(session)
            if knownPairs.insert(pair).inserted {
                newPairs.append((pair, timeBits))
                pendingPairs.append(pair)
            }
            kindCounts[kindIndex(original.pointee.payload.kind)] += 1
            minTime = min(minTime, time)
            maxTime = max(maxTime, time)
        }
        loopFinished = true
        nextSeq = next
        try interner.flush()
        try writeOnboardingSessions(txn, newPairs)
        // Hand the buffers back for the writers below (the deferred swap then restores them unchanged).
        swap(&encoder, &self.encoder)
        swap(&entries, &self.entries)
        defer {
            swap(&encoder, &self.encoder)
            swap(&entries, &self.entries)
        }

        try writeEvents(txn)
        try writeSessionIndex(txn)
        try writeBatches(txn)
        try writeInference(txn)
        try writeOnboardingStats(txn)
        try writeCounters(txn, kindCounts: kindCounts, duplicates: UInt64(duplicates), inferred: inferredSessions,
                          minTime: minTime, maxTime: maxTime)
        return AppendResult(appended: self.entries.count, duplicates: duplicates, seqs: firstSeq..<nextSeq)
    }

    @inline(__always)
    private func kindIndex(_ kind: EventKind) -> Int {
        switch kind {
        case .analytics: 0
        case .stateUpdated: 1
        case .openPaywall: 2
        case .custom: 3
        case .close: 4
        case .onboardingLoaded: 5
        case .error: 6
        }
    }

    /// Sorts ``order`` into (a, time, seq) order.
    ///
    /// A stable radix sort on `a` keeps arrival order among equal `a`s, and arrival order is seq order;
    /// when times also never decrease within a group (events arriving in time order, the common case),
    /// that is already (a, time, seq) order. Otherwise a comparison sort finishes the job.
    /// - Complexity: O(n · bytes of the largest `a`), or O(n log n) for out-of-order times.
    private func sortOrder() {
        let n = order.count
        guard n > 1 else { return }
        var maxA: UInt64 = 0
        for k in order { maxA |= k.a }
        let passes = (64 - maxA.leadingZeroBitCount + 7) / 8
        if sortBuffer.count != n { sortBuffer = order }
        // Work on locals through raw buffers: class properties would pay an exclusivity check per access.
        var source = order
        var target = sortBuffer
        order = []
        sortBuffer = []
        var counts = [Int](repeating: 0, count: 256)
        counts.withUnsafeMutableBufferPointer { count in
            for pass in 0..<passes {
                let shift = UInt64(pass * 8)
                source.withUnsafeBufferPointer { src in
                    target.withUnsafeMutableBufferPointer { dst in
                        for b in 0..<256 { count[b] = 0 }
                        for k in src { count[Int(truncatingIfNeeded: (k.a >> shift) & 0xFF)] += 1 }
                        var sum = 0
                        for b in 0..<256 {
                            let c = count[b]
                            count[b] = sum
                            sum += c
                        }
                        for k in src {
                            let b = Int(truncatingIfNeeded: (k.a >> shift) & 0xFF)
                            dst[count[b]] = k
                            count[b] += 1
                        }
                    }
                }
                swap(&source, &target)
            }
        }
        let entries = self.entries
        let sorted = source.withUnsafeBufferPointer { keys in
            entries.withUnsafeBufferPointer { e in
                for j in 1..<n where keys[j - 1].a == keys[j].a {
                    if e[keys[j - 1].i].timeBits > e[keys[j].i].timeBits { return false }
                }
                return true
            }
        }
        if !sorted {
            source.sort { x, y in
                if x.a != y.a { return x.a < y.a }
                let ex = entries[x.i], ey = entries[y.i]
                if ex.timeBits != ey.timeBits { return ex.timeBits < ey.timeBits }
                return ex.seq < ey.seq
            }
        }
        order = source
        sortBuffer = target
    }

    /// `events`: bodies under (onboarding, screen, time, seq), inserted in key order. Sorting the batch
    /// first makes consecutive puts land on the same leaf pages (see the measurements in docs/storage.md).
    private func writeEvents(_ txn: Transaction) throws {
        order.removeAll(keepingCapacity: true)
        for (i, e) in entries.enumerated() {
            order.append(SortKey(a: UInt64(e.onboarding) << 16 | UInt64(e.screen), i: i))
        }
        sortOrder()
        let key = scratch
        let entries = self.entries
        let order = self.order
        // Per-onboarding counters come for free in key order: one accumulator per run of an onboarding.
        onboardingStats.removeAll(keepingCapacity: true)
        var current = OnboardingAccumulator()
        var currentOnboarding: UInt32? = nil
        defer { if let currentOnboarding { onboardingStats[currentOnboarding] = current } }
        try encoder.withUnsafeBytes { bodies in
            try txn.withCursor(dbs.events) { c in
                for k in order {
                    let e = entries[k.i]
                    if e.onboarding != currentOnboarding {
                        if let currentOnboarding { onboardingStats[currentOnboarding] = current }
                        current = OnboardingAccumulator()
                        currentOnboarding = e.onboarding
                    }
                    let time = Layout.time(fromBits: e.timeBits)
                    current.events += 1
                    current.minTime = min(current.minTime, time)
                    current.maxTime = max(current.maxTime, time)
                    current.maxTotalScreens = max(current.maxTotalScreens, e.totalScreens)
                    EventKey(onboarding: e.onboarding, screen: e.screen, timeBits: e.timeBits, seq: e.seq).write(to: key)
                    try c.put(UnsafeRawBufferPointer(start: key, count: Layout.eventKeySize),
                              UnsafeRawBufferPointer(rebasing: bodies[e.body]))
                }
            }
        }
    }

    /// `sessions`: (session, time, seq) → (onboarding, screen), in key order.
    private func writeSessionIndex(_ txn: Transaction) throws {
        order.removeAll(keepingCapacity: true)
        for (i, e) in entries.enumerated() {
            order.append(SortKey(a: UInt64(e.session), i: i))
        }
        sortOrder()
        let key = scratch
        let value = scratch + 64
        let entries = self.entries
        let order = self.order
        try txn.withCursor(dbs.sessions) { c in
            for k in order {
                let e = entries[k.i]
                key.storeBE(e.session, at: 0)
                key.storeBE(e.timeBits, at: 4)
                key.storeBE(e.seq, at: 12)
                value.storeBE(e.onboarding, at: 0)
                value.storeBE(e.screen, at: 4)
                try c.put(UnsafeRawBufferPointer(start: key, count: Layout.sessionKeySize),
                          UnsafeRawBufferPointer(start: value, count: Layout.sessionValueSize))
            }
        }
    }

    /// `onboarding_sessions`: the pairs first seen in this batch, in key order.
    private func writeOnboardingSessions(_ txn: Transaction, _ pairs: [(pair: UInt64, timeBits: UInt64)]) throws {
        guard !pairs.isEmpty else { return }
        let key = scratch
        try txn.withCursor(dbs.onboardingSessions) { c in
            for p in pairs.sorted(by: { $0.pair < $1.pair }) {
                key.storeBE(p.pair, at: 0)
                key.storeBE(p.timeBits, at: 8)
                // NOOVERWRITE: an earlier process may have stored the pair (this cache only knows its own).
                try c.put(UnsafeRawBufferPointer(start: key, count: 8), UnsafeRawBufferPointer(start: key + 8, count: 8),
                          flags: PutFlags.noOverwrite)
            }
        }
    }

    /// `batches`: the batch's event keys in seq order, ``Layout/batchChunk`` per entry, appended.
    private func writeBatches(_ txn: Transaction) throws {
        var start = 0
        let key = scratch
        while start < entries.count {
            let end = min(start + Layout.batchChunk, entries.count)
            for i in start..<end {
                let e = entries[i]
                EventKey(onboarding: e.onboarding, screen: e.screen, timeBits: e.timeBits, seq: e.seq)
                    .write(to: chunk + (i - start) * Layout.eventKeySize)
            }
            key.storeBE(entries[start].seq, at: 0)
            guard try txn.put(dbs.batches, UnsafeRawBufferPointer(start: key, count: 8),
                              UnsafeRawBufferPointer(start: chunk, count: (end - start) * Layout.eventKeySize),
                              flags: PutFlags.append)
            else {
                throw StoreError(.corrupt, "the batches database already has entries past seq \(entries[start].seq)")
            }
            start = end
        }
    }

    // MARK: Session inference

    /// The session of an event that has none (semantics rule 10): per (profile, onboarding), a new one
    /// starts at the first event, after 30 minutes without events, or at a start event
    /// (`onboarding_loaded`, `onboarding_started`) once the current session has seen other events.
    /// Events are taken in arrival order; one older than the session's last event joins it.
    private func inferSession(for event: Event, seq: UInt64, interner: inout Interner) throws -> (String, Bool) {
        var profile = RecordFormat.absent
        if let p = event.profile { profile = try interner.intern(p) }
        var onboarding = RecordFormat.noOnboarding
        if let meta = event.meta { onboarding = try interner.intern(meta.onboardingID) }
        let key = UInt64(profile) << 32 | UInt64(onboarding)
        let time = event.time.microseconds
        let isStart: Bool
        switch event.payload {
        case .onboardingLoaded, .analytics(.onboardingStarted): isStart = true
        default: isStart = false
        }
        var state = pendingInfer[key] ?? inferCache[key]
        if state == nil, let txn {
            // Past the event-id key (0..<512), the event key (512..<534) and the interner's (1024..<1536).
            let k = scratch + 1536
            k.storeBE(key, at: 0)
            if let v = try txn.get(dbs.inferred, UnsafeRawBufferPointer(start: k, count: 8)) {
                guard v.count == 13 else { throw StoreError(.corrupt, "an inferred-session entry is \(v.count) bytes, not 13") }
                state = InferState(session: v.be32(0), lastTime: Layout.time(fromBits: v.be64(4)), fresh: v[12] != 0)
            }
        }
        if var current = state, time &- current.lastTime < Layout.sessionGap, !(isStart && !current.fresh),
           let name = interner.table.string(for: current.session)
        {
            current.lastTime = max(current.lastTime, time)
            current.fresh = current.fresh && isStart
            pendingInfer[key] = current
            return (name, false)
        }
        let name = "inferred:\(seq)"
        let id = try interner.intern(name)
        pendingInfer[key] = InferState(session: id, lastTime: time, fresh: isStart)
        return (name, true)
    }

    private func writeInference(_ txn: Transaction) throws {
        let key = scratch
        let value = scratch + 16
        for (k, state) in pendingInfer {
            key.storeBE(k, at: 0)
            value.storeBE(state.session, at: 0)
            value.storeBE(Layout.timeBits(state.lastTime), at: 4)
            value.storeBytes(of: state.fresh ? 1 : 0, toByteOffset: 12, as: UInt8.self)
            try txn.put(dbs.inferred, UnsafeRawBufferPointer(start: key, count: 8), UnsafeRawBufferPointer(start: value, count: 13))
        }
    }

    // MARK: Counters

    /// `onboardings`: onboarding → events (8) ‖ min time (8) ‖ max time (8) ‖ max total screens (4).
    private func writeOnboardingStats(_ txn: Transaction) throws {
        let key = scratch
        let value = scratch + 16
        for (onboarding, add) in onboardingStats {
            key.storeBE(onboarding, at: 0)
            let k = UnsafeRawBufferPointer(start: key, count: 4)
            var total = add
            if let v = try txn.get(dbs.onboardings, k) {
                let old = try OnboardingSummaryRecord(v)
                total.events += old.events
                total.minTime = min(total.minTime, old.minTime)
                total.maxTime = max(total.maxTime, old.maxTime)
                total.maxTotalScreens = max(total.maxTotalScreens, old.maxTotalScreens)
            }
            value.storeBE(total.events, at: 0)
            value.storeBE(Layout.timeBits(total.minTime), at: 8)
            value.storeBE(Layout.timeBits(total.maxTime), at: 16)
            value.storeBE(total.maxTotalScreens, at: 24)
            try txn.put(dbs.onboardings, k, UnsafeRawBufferPointer(start: value, count: OnboardingSummaryRecord.size))
        }
    }

    private func writeCounters(_ txn: Transaction, kindCounts: [UInt64], duplicates: UInt64, inferred: UInt64,
                               minTime: Int64, maxTime: Int64) throws {
        func add(_ key: String, _ n: UInt64) throws {
            if n == 0 { return }
            try txn.putUInt64(dbs.meta, key, (try txn.getUInt64(dbs.meta, key) ?? 0) &+ n)
        }
        try txn.putUInt64(dbs.meta, Layout.metaNextSeq, nextSeq)
        try add(Layout.metaEvents, UInt64(entries.count))
        try add(Layout.metaDuplicates, duplicates)
        try add(Layout.metaInferredSessions, inferred)
        for (i, kind) in EventKind.allCases.enumerated() { try add(Layout.metaKind(kind), kindCounts[i]) }
        if !entries.isEmpty {
            let oldMin = try txn.getUInt64(dbs.meta, Layout.metaMinTime).map { Layout.time(fromBits: $0) } ?? .max
            let oldMax = try txn.getUInt64(dbs.meta, Layout.metaMaxTime).map { Layout.time(fromBits: $0) } ?? .min
            try txn.putUInt64(dbs.meta, Layout.metaMinTime, Layout.timeBits(min(oldMin, minTime)))
            try txn.putUInt64(dbs.meta, Layout.metaMaxTime, Layout.timeBits(max(oldMax, maxTime)))
        }
    }
}

/// The decoded value of an `onboardings` entry.
struct OnboardingSummaryRecord {
    static let size = 28
    var events: UInt64
    var minTime: Int64
    var maxTime: Int64
    var maxTotalScreens: UInt32

    init(_ v: UnsafeRawBufferPointer) throws {
        guard v.count == OnboardingSummaryRecord.size else {
            throw StoreError(.corrupt, "an onboardings entry is \(v.count) bytes, not \(OnboardingSummaryRecord.size)")
        }
        events = v.be64(0)
        minTime = Layout.time(fromBits: v.be64(8))
        maxTime = Layout.time(fromBits: v.be64(16))
        maxTotalScreens = v.be32(24)
    }
}
