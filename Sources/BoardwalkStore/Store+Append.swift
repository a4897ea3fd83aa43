import BoardwalkCodec
import BoardwalkModel

/// What one ``Store/append(_:checkpoint:)`` did.
public struct AppendResult: Hashable, Sendable {
    /// Events stored.
    public var appended: Int
    /// Events skipped because an event with the same event id, time, onboarding and screen is already
    /// stored (or came earlier in the same batch).
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
    /// Folds the logs of the batches appended since the last fold into the ordered databases now, in one durable
    /// write transaction: the event log's blocks into `events` (growing each group's newest block) and the session
    /// log into `sessions` (docs/storage.md, "Format 8: the session log" and "Format 9: the event log").
    ///
    /// Appends fold the logs by themselves every few batches (``EventLogLimits``, ``SessionLogLimits``); until then
    /// reads merge them in, which costs a seek per logged batch (at most 16) where a read of `events` costs one.
    /// Call it at the end of an import that will be queried a lot; nothing changes in what reads return.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` when a log entry does not decode (nothing is
    ///   folded), ``StoreError/Kind/readOnly``, ``StoreError/Kind/closed``, ``LMDBError``.
    /// - Complexity: O(n) for the n logged events and references, plus O(log N) per group and bucket they touch.
    public func foldLogs() throws {
        try write { w in try w.foldLogs() }
    }

    /// Appends a batch of events in one write transaction and returns after it commits (durably, with
    /// the default ``Durability/full``).
    ///
    /// Each stored event gets the next arrival sequence number (`seq`). An event whose event id is
    /// already stored with the same time, onboarding and screen (or came earlier in the batch) is
    /// skipped and counted in ``AppendResult/duplicates``. An event
    /// without a session gets an inferred one (`docs/storage.md`, "Sessions without ids"). When the map
    /// is full the transaction is aborted, the map grown (every transaction of the process waits) and
    /// the batch redone, so callers never see `MDB_MAP_FULL`.
    ///
    /// Batches of thousands of events amortize the commit's flushes; one event per call is correct but
    /// pays a full commit each time.
    ///
    /// Inside `read { }` or `write { }` of this store on the same thread, `append` throws
    /// ``StoreError/Kind/insideTransaction`` at once (it would wait for that transaction): append with the
    /// ``StoreWriter`` of `write { }`, or after `read { }` returns.
    ///
    /// - Parameters:
    ///   - events: the batch; empty is allowed (useful to store only a checkpoint).
    ///   - checkpoint: stored in the same transaction, so it is durable exactly when the batch is.
    /// - Throws: only ``StoreError`` or ``LMDBError`` (the disk); on a throw nothing of the batch is stored.
    ///   ``StoreError/Kind/invalidArgument`` for a bad checkpoint key, or for an event the record format
    ///   cannot hold (a screen index outside `0...Meta.maxScreenIndex`, a record over the format's length
    ///   limit): its message names the event's index in the batch, event id and session, ``StoreError/batchIndex``
    ///   is that index and ``StoreError/underlying`` the codec's `EncodingError`; ``StoreError/Kind/readOnly``,
    ///   ``StoreError/Kind/closed``, ``StoreError/Kind/insideTransaction``.
    /// - Complexity: O(n log n) for n events, plus an append per block (to the event log: about one per group of
    ///   the batch) and per session-log chunk (about 4 KiB of session-index references each); the batch that takes
    ///   the session log past its limits (every 17th with 10 000 events per batch) folds it instead, with O(log N)
    ///   work per bucket of 64 session ids the log touches, and the batch that fills the event log (every 16th)
    ///   folds it into `events`, with a cursor seek to each touched group's newest block and O(log N) work per block
    ///   grown or written. Duplicate detection reads stored blocks only for events not later
    ///   than their group's latest stored event.
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
    /// returns. Appends of the process are serialized (another thread's `write` waits for this one).
    ///
    /// `write` and ``append(_:checkpoint:)`` of this store inside `body`, or inside a `read { }` of it, on the same
    /// thread throw ``StoreError/Kind/insideTransaction`` at once (they would wait for the transaction they are
    /// called from): use `body`'s ``StoreWriter``. ``read(_:)`` inside `body` is allowed (a snapshot of the last
    /// commit; ``StoreWriter/snapshot`` sees this transaction's writes); ``close()`` inside it takes effect after
    /// the commit.
    /// Wraps `mdb_txn_begin`, `mdb_txn_commit` and `mdb_txn_abort`.
    /// - Throws: whatever `body` throws; ``StoreError`` with ``StoreError/Kind/readOnly``,
    ///   ``StoreError/Kind/closed`` or ``StoreError/Kind/insideTransaction``; ``LMDBError``.
    public func write<R>(_ body: (StoreWriter) throws -> R) throws -> R {
        try checkOpen()
        try checkNotInsideTransaction("store.write or store.append")
        return try inFrame(write: true) { try writeInFrame(body) }
    }

    private func writeInFrame<R>(_ body: (StoreWriter) throws -> R) throws -> R {
        try withWriter { writer in
            while true {
                do {
                    let result = try env.transaction(write: true) { txn in
                        try writer.begin(txn)
                        let result = try body(StoreWriter(writer: writer, txn: txn))
                        // A batch that failed part-way, its error caught in `body`: abort with that error (a full
                        // map included, which grows the map and runs `body` again).
                        if let error = writer.failedPartWay { throw error }
                        return result
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
    ///
    /// An event the record format cannot hold refuses the batch with ``StoreError`` (kind
    /// ``StoreError/Kind/invalidArgument``, ``StoreError/batchIndex`` its index, `underlying` the codec's
    /// `EncodingError`); nothing of the batch is stored and the transaction stays usable. Any other error (a
    /// damaged value the batch must grow, an LMDB error) may come after the batch began writing: the transaction
    /// is then unusable, later calls in it throw, and ``Store/write(_:)`` aborts it with that error even when
    /// the closure catches it.
    /// - Complexity: O(n log n) for n events, plus an append per block (to the event log: about one per group of
    ///   the batch) and per session-log chunk (about 4 KiB of session-index references each); the batch that takes
    ///   the session log past its limits (every 17th with 10 000 events per batch) folds it instead, with O(log N)
    ///   work per bucket of 64 session ids the log touches, and the batch that fills the event log (every 16th)
    ///   folds it into `events`, with a cursor seek to each touched group's newest block and O(log N) work per block
    ///   grown or written. Duplicate detection reads stored blocks only for events not later
    ///   than their group's latest stored event.
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

    /// Folds the event log and the session log into `events` and `sessions` in this transaction, as
    /// ``Store/foldLogs()`` does.
    public func foldLogs() throws {
        try writer.foldLogs(txn)
    }

    /// A snapshot that sees this transaction's own writes, for reads in the middle of a write.
    public var snapshot: Snapshot {
        get throws { try Snapshot(txn: txn, dbs: writer.dbs, cache: writer.cache) }
    }

    func append(buffer: UnsafeBufferPointer<Event>, checkpoint: Checkpoint?) throws -> AppendResult {
        let result = try writer.append(buffer, txn: txn)
        if let checkpoint { try writer.putCheckpoint(checkpoint, txn: txn) }
        return result
    }
}

extension Store {
    /// The error for an event of a batch that the record format cannot hold: which one, and why.
    static func refusal(of event: Event, at index: Int, _ error: EncodingError) -> StoreError {
        func quoted(_ s: String?) -> String {
            guard let s else { return "none" }
            return "\"" + (s.count > 80 ? s.prefix(80) + "…" : s) + "\""
        }
        return StoreError(.invalidArgument, "event \(index) of the batch (event id \(quoted(event.eventID)), session "
                          + "\(quoted(event.session))) cannot be stored, so nothing of the batch was",
                          underlying: error, batchIndex: index)
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
    /// The readers' string table, for snapshots taken inside a write transaction.
    let cache: StringCache
    /// Every string of the store, ids dense in first-seen order (mirrors the `strings` database).
    private var table = StringTable()
    private var committedStrings = 0
    /// Strings stored before the running batch (committed, or written by an earlier batch of the same
    /// transaction): a session id at or above it has no event in the store before this batch.
    private(set) var batchStartStrings = 0
    private var loaded = false
    /// The `next_seq` this writer last committed or read; a different value in `meta` means another
    /// process appended, and the caches are refreshed.
    private var knownNextSeq: UInt64 = 0
    private var nextSeq: UInt64 = 0

    /// Inference state per (profile, onboarding): committed, and changed in the running transaction.
    private var inferCache: [UInt64: InferState] = [:]
    private var pendingInfer: [UInt64: InferState] = [:]
    /// (onboarding, session) pairs known to be in `onboarding_sessions` (committed, or written by the running
    /// transaction): one slot per session id modulo its size, so the sessions in flight (a window of recent ids)
    /// each keep their pair. A pair it does not hold goes to `onboarding_sessions`, whose chunk says whether it is stored.
    private var pairFilter = SessionPairFilter()
    /// The pairs the running transaction put in `pairFilter`, taken out again if it aborts.
    private var pendingPairs: [UInt64] = []

    private var txn: Transaction?
    private var encoder = RecordEncoder(capacity: 1 << 20)
    private var entries: [Entry] = []
    private var order: [SortKey] = []
    private var sortBuffer: [SortKey] = []
    private var onboardingStats: [UInt32: OnboardingAccumulator] = [:]
    private var newPairs: [(pair: UInt64, timeBits: UInt64)] = []
    private var blockBuilder = EventBlockBuilder()
    private var bucketBuilder = SessionBucketBuilder(prefixRoom: 0)
    /// The running batch's session-log chunks, and the buffers of a fold (SessionLog.swift).
    private var logChunks = LogChunks()
    private var fold = Fold()
    /// The session log's keys, once the running batch needed them; `nil` again once it writes to the log.
    private var batchLog: SessionLog?
    /// When the session log is folded into `sessions`.
    private let logLimits: SessionLogLimits
    private let eventLogLimits: EventLogLimits
    /// The `events` keys of the blocks the running batch wrote, for `batches`.
    private var blockKeys: [EventKey] = []
    /// Per block a fold wrote, the logged batches (bit i: the log's i-th) whose events it took.
    private var foldMasks: [UInt64] = []
    /// A fold's record bodies and, per logged event, the index of its batch in the log.
    private var foldBodies: [UInt8] = []
    private var foldBatchOfEntry: [UInt8] = []
    /// The first seqs of the batches in the event log, read when a batch begins (``EventLog/batches(_:_:)``).
    private var logBatches: [UInt64] = []
    /// Per group (onboarding << 16 | screen): the latest event time stored (time bits), 0 when none.
    /// Committed values, and those of the running transaction. An event later than its group's latest
    /// time cannot be a duplicate, so live ingestion never reads stored blocks to look for duplicates.
    private var groupMax: [UInt64: UInt64] = [:]
    private var pendingGroupMax: [UInt64: UInt64] = [:]
    /// Per group: the newest block this writer wrote (its key, size and last event's seq), committed and
    /// in the running transaction. When the group's stored newest block is still that one (same key and
    /// size; another process's append makes ``refresh(_:)`` drop these), it is grown without decoding its
    /// events again to find the last seq.
    private var blockTails: [UInt64: BlockTail] = [:]
    private var pendingBlockTails: [UInt64: BlockTail] = [:]
    /// Duplicate detection of the running batch: keys of events seen in it, each group's latest stored time as
    /// looked up by the batch, keys of stored events loaded for comparison, and per group the time range (bits)
    /// whose stored events are loaded.
    private var batchIDs: BatchKeySet
    private var groupTimes: GroupTimeMemo
    private var storedIDs = Set<DuplicateKey>()
    private var loadedRanges: [UInt64: ClosedRange<UInt64>] = [:]
    /// Key bytes for the puts (2 KiB).
    let scratch: UnsafeMutableRawPointer
    /// The error of a batch that failed after it began writing to the databases (``append(_:txn:)``): the
    /// transaction holds part of it, so it must not commit. Cleared when a transaction begins or aborts.
    private(set) var failedPartWay: (any Error)?
    /// Kept across batches: `onboarding_sessions` chunks (OnboardingSessions.swift).
    var pairChunkBuilder = SessionPairChunkBuilder()
    private let chunk: UnsafeMutableRawPointer
    /// The size at which a block is sealed: two overflow pages (``Layout/blockTarget(pageSize:)``).
    private let blockTarget: Int

    struct BlockTail {
        var key: EventKey
        var bytes: Int
        var lastSeq: UInt64
    }

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

    /// What makes two events duplicates: group, time and event id (see docs/storage.md).
    struct DuplicateKey: Hashable {
        /// onboarding << 16 | screen, with the id's kind in the top bits (1 string, 2 UUID, 3 uppercase UUID).
        var group: UInt64
        var timeBits: UInt64
        var a: UInt64
        var b: UInt64

        init(group: UInt64, timeBits: UInt64, id: EventIDRef) {
            self.timeBits = timeBits
            switch id {
            case .string(let s):
                self.group = group | 1 << 62
                a = UInt64(s)
                b = 0
            case .uuid(let hi, let lo, let upper):
                self.group = group | (upper ? 3 : 2) << 62
                a = hi
                b = lo
            }
        }
    }

    struct OnboardingAccumulator {
        var events: UInt64 = 0
        var minTime = Int64.max
        var maxTime = Int64.min
        var maxTotalScreens: UInt32 = 0
    }

    init(dbs: Databases, cache: StringCache, pageSize: Int, logLimits: SessionLogLimits = .standard,
         eventLogLimits: EventLogLimits = .standard) {
        self.eventLogLimits = eventLogLimits
        self.dbs = dbs
        self.logLimits = logLimits
        self.cache = cache
        blockTarget = Layout.blockTarget(pageSize: pageSize)
        scratch = .allocate(byteCount: 2048, alignment: 8)
        chunk = .allocate(byteCount: 4 + Layout.batchChunk * Layout.eventKeySize, alignment: 8)
        // Random per process: event ids come from outside, and a known hash would let them be chosen to collide.
        batchIDs = BatchKeySet(seed: (UInt64.random(in: .min ... .max), UInt64.random(in: .min ... .max)))
        groupTimes = GroupTimeMemo(seed: UInt64.random(in: .min ... .max))
    }

    deinit {
        scratch.deallocate()
        chunk.deallocate()
    }

    /// Replaces the pair filter with an empty one of 2^`pairBits` slots: for tests, which need sessions to leave a
    /// small window without a million strings.
    func useCaches(pairBits: Int) {
        pairFilter = SessionPairFilter(bits: pairBits)
    }

    // MARK: Transaction outcome

    func didCommit() {
        committedStrings = table.count
        knownNextSeq = nextSeq
        for (k, v) in pendingInfer { inferCache[k] = v }
        pendingInfer.removeAll(keepingCapacity: true)
        for (k, v) in pendingGroupMax { groupMax[k] = v }
        pendingGroupMax.removeAll(keepingCapacity: true)
        for (k, v) in pendingBlockTails { blockTails[k] = v }
        pendingBlockTails.removeAll(keepingCapacity: true)
        pendingPairs.removeAll(keepingCapacity: true)
        txn = nil
    }

    func didAbort() {
        failedPartWay = nil
        if table.count != committedStrings {
            table = StringTable(strings: Array(table.strings.prefix(committedStrings)))
        }
        nextSeq = knownNextSeq
        pendingInfer.removeAll(keepingCapacity: true)
        pendingGroupMax.removeAll(keepingCapacity: true)
        pendingBlockTails.removeAll(keepingCapacity: true)
        batchLog = nil
        for pair in pendingPairs { pairFilter.forget(pair) }
        pendingPairs.removeAll(keepingCapacity: true)
        txn = nil
    }

    // MARK: Interning

    /// Interns through the writer's in-memory table; new strings are appended to `strings` in the running
    /// transaction by ``flush()``, which the batch calls when its loop ends (however it ends). There is no
    /// reverse index on disk: readers build one in memory (see ``StringCache``). A struct (the table moved
    /// in for the batch) so that the encoder's calls need no dynamic exclusivity checks.
    ///
    /// Why one flush rather than a put per new string: `mdb_put` with `MDB_APPEND` opens a cursor and walks
    /// from the root to the last leaf for every string (about 1 360 instructions per new string with
    /// 100 000 sessions in flight, two new UUID strings per new session); one cursor kept at the end of
    /// the tree appends each string to the last leaf directly.
    struct Interner: StringInterner {
        var table: StringTable
        let txn: Transaction
        let dbs: Databases
        /// Strings of the table that are in `strings` (in this transaction): ids below it.
        var stored: Int
        /// A string interned for the event being encoded was longer than ``Store/longString`` (the append loop then
        /// checks the event against the limits of an NDJSON export: see `Store.interchangeLimitError`). Every call
        /// looks, not only those that add a string: a long string can already be in the table (a refused event's
        /// strings are kept, and stores written before session 8 took any).
        var sawLongString = false

        mutating func intern(_ string: String) throws -> StringID {
            if string.utf8.count > Store.longString { sawLongString = true }
            return table.intern(string)
        }

        /// A string the table's identity cache knows is answered in place (no retain, nothing to persist);
        /// anything else goes through ``intern(_:)``.
        mutating func intern(at string: UnsafePointer<String>) throws -> StringID {
            if string.pointee.utf8.count > Store.longString { sawLongString = true }
            return table.intern(at: string)
        }

        /// Appends the strings interned since the last flush to `strings`, in id order, as chunks of about
        /// ``Layout/stringChunkTarget`` bytes through one cursor (``StringChunks``).
        /// On a throw the table is cut back to what is stored, so that it never names an id `strings` lacks.
        mutating func flush() throws {
            guard stored < table.count else { return }
            let strings = table.strings
            var done = stored
            do {
                try txn.withCursor(dbs.strings) { c in
                    // No nested function: one that captured these locals would box them, and every access to a
                    // boxed variable pays a dynamic exclusivity check (~120 instructions per string, measured).
                    var chunk = StringChunkBuilder()
                    var next = done
                    while next < strings.count {
                        chunk.reset()
                        let first = next
                        repeat {
                            // The strings are the batch's new ones, out of cache by now: each read waited for memory.
                            if next + 4 < strings.count {
                                strings.withUnsafeBufferPointer { IDPrefetcher.prefetchBytes(at: $0.baseAddress! + next + 4) }
                            }
                            if chunk.count > 0 && chunk.byteCount(appending: strings[next].utf8.count) > Layout.stringChunkTarget {
                                break
                            }
                            strings[next].withUTF8Bytes { chunk.append($0) }
                            next += 1
                        } while next < strings.count
                        var be = UInt32(first).bigEndian
                        // Ids only grow, so every chunk's first id is above the last key of `strings`; a refused
                        // append means the stored dictionary is ahead of this writer's, and the id would name
                        // another string.
                        let appended = try withUnsafeBytes(of: &be) { key in
                            try chunk.withValue { value in try c.put(key, value, flags: PutFlags.append) }
                        }
                        guard appended else {
                            throw StoreError(.corrupt, "the strings database already holds id \(first) or a later one; the dictionary in memory is behind it")
                        }
                        done = next
                    }
                }
            } catch {
                table = StringTable(strings: Array(strings.prefix(done)))
                stored = done
                throw error
            }
            stored = done
        }
    }

    /// Brings the caches up to date with the store: loads the dictionary on first use, and reloads what
    /// another process may have appended since this writer's last commit.
    private func refresh(_ txn: Transaction) throws {
        let storedNext = try txn.getUInt64(dbs.meta, Layout.metaNextSeq) ?? 0
        // next_seq alone misses another process's batch that was refused, caught and committed: its strings are
        // stored without an event.
        do {
            if loaded && storedNext == knownNextSeq, try StringChunks.count(in: txn, dbs) == UInt32(table.count) { return }
            let have = loaded ? table.count : 0
            if !loaded { table = StringTable() }
            try StringChunks.forEach(in: txn, dbs, from: UInt32(have)) { id, entry in
                _ = table.intern(entry.string)
                guard table.count == Int(id) + 1 else {
                    throw StoreError(.corrupt, "string id \(id) repeats an earlier string")
                }
                return true
            }
        } catch let error as StoreError where error.kind == .corrupt {
            // New strings would get ids that may be taken: nothing is written (reads still work).
            throw StoreError(.corrupt, "cannot write: the store's string dictionary is damaged (\(error.description)); "
                             + "`boardwalk check` says where; restore the store from a backup, or export and re-import it")
        }
        committedStrings = table.count
        inferCache.removeAll()
        groupMax.removeAll()
        blockTails.removeAll()
        loaded = true
        knownNextSeq = storedNext
        nextSeq = storedNext
    }

    // MARK: Append

    /// Starts a write transaction: brings the caches up to date.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` when the string dictionary cannot be read: a write
    ///   would give new strings ids that may be taken, so nothing is written (reads still work).
    func begin(_ txn: Transaction) throws {
        failedPartWay = nil
        self.txn = txn
        try refresh(txn)
    }

    /// Throws when an earlier batch of this transaction failed part-way (``failedPartWay``): nothing more goes
    /// into a transaction that will be aborted.
    func checkUsable() throws {
        guard let failedPartWay else { return }
        let kind = (failedPartWay as? StoreError)?.kind ?? .corrupt
        throw StoreError(kind, "this write transaction is being aborted: an earlier append in it failed after it began "
                         + "writing, so nothing of the transaction will be stored", underlying: failedPartWay)
    }

    func putCheckpoint(_ checkpoint: Checkpoint, txn: Transaction) throws {
        try checkUsable()
        try checkpoint.key.withUTF8Bytes { k in
            try checkpoint.value.withUnsafeBytes { v in try txn.put(dbs.checkpoints, k, v) }
        }
    }

    /// Appends one batch inside the running transaction (after ``begin(_:)``).
    func append(_ events: UnsafeBufferPointer<Event>, txn: Transaction) throws -> AppendResult {
        try checkUsable()
        // The table moves into the interner for the batch (leaving an empty one here, so that it stays
        // uniquely referenced and grows in place) and comes back however the batch ends.
        batchStartStrings = table.count
        batchLog = nil
        logBatches = try EventLog.batches(txn, dbs)
        var interner = Interner(table: table, txn: txn, dbs: dbs, stored: table.count)
        table = StringTable()
        defer { table = interner.table }
        let firstSeq = nextSeq
        // The hot loop works on locals: class properties would pay a dynamic exclusivity check per access.
        var encoder = RecordEncoder(capacity: 0)
        var entries: [Entry] = []
        var newPairs: [(pair: UInt64, timeBits: UInt64)] = []
        var pendingPairs: [UInt64] = []
        var batchIDs = BatchKeySet(seed: (0, 0))
        var groupTimes = GroupTimeMemo(seed: 0)
        var pairFilter = SessionPairFilter()
        swap(&encoder, &self.encoder)
        swap(&entries, &self.entries)
        swap(&newPairs, &self.newPairs)
        swap(&pendingPairs, &self.pendingPairs)
        swap(&batchIDs, &self.batchIDs)
        swap(&groupTimes, &self.groupTimes)
        swap(&pairFilter, &self.pairFilter)
        var next = nextSeq
        let pendingAtStart = pendingPairs.count
        // Inference state as it was before the batch (copy-on-write: copied only if an event of the batch
        // changes it), put back if the batch is refused part-way.
        let inferAtStart = pendingInfer
        var loopFinished = false
        defer {
            if !loopFinished {
                // The refused batch's strings were flushed where its error was caught (a failed flush cuts the
                // table back, so the table matches `strings` either way).
                pendingInfer = inferAtStart
                // An event the encoder refused (the caller may catch that and go on in the same
                // transaction): the pairs of this batch were not written, so they are not known.
                for pair in pendingPairs[pendingAtStart...] { pairFilter.forget(pair) }
                pendingPairs.removeSubrange(pendingAtStart...)
            }
            swap(&encoder, &self.encoder)
            swap(&entries, &self.entries)
            swap(&newPairs, &self.newPairs)
            swap(&pendingPairs, &self.pendingPairs)
            swap(&batchIDs, &self.batchIDs)
            swap(&groupTimes, &self.groupTimes)
            swap(&pairFilter, &self.pairFilter)
        }
        entries.removeAll(keepingCapacity: true)
        encoder.removeAll()
        newPairs.removeAll(keepingCapacity: true)
        batchIDs.removeAll()
        groupTimes.removeAll()
        storedIDs.removeAll(keepingCapacity: true)
        loadedRanges.removeAll(keepingCapacity: true)
        var kindCounts = [UInt64](repeating: 0, count: EventKind.allCases.count)
        var duplicates = 0
        var inferredSessions: UInt64 = 0
        var minTime = Int64.max
        var maxTime = Int64.min
        let base = events.baseAddress
        var ahead = IDPrefetcher()
        do {
            for index in 0..<events.count {
                ahead.advance(events, at: index, interner.table)
                // Fields are read through the pointer so that the event is not copied (a copy retains every string).
                let original = base! + index
                let time = original.pointee.time.microseconds
                let timeBits = Layout.timeBits(time)
                // Semantics rule 11: empty ids and replies are absent (`Store.normalized`). The encoder writes them
                // as absent (`emptyIsAbsent`), and an empty event id is simply not looked up; only an event without a
                // session (absent or empty) is copied, normalized and given an inferred one. Checking every event
                // for empty strings first and copying the few that had some cost ~90 instructions per event, most of
                // it a copy of each `screen_completed` payload to look at its strings.
                // A session named as another store's inferred session is inferred again here (`isInferredName`).
                let reinfer = Store.isInferredName(at: original.pointer(to: \.session)!)
                let noSession = reinfer || Store.isMissing(at: original.pointer(to: \.session)!)
                // Made once, for the duplicate check and the encoder (which would otherwise parse it again).
                var idRef: EventIDRef? = nil
                if !Store.isMissing(at: original.pointer(to: \.eventID)!) {
                    // A duplicate has the same group, time and event id as a stored event or an earlier one
                    // of this batch (docs/storage.md, "Duplicates"). Id and meta are read in place: loading them
                    // (`if let id = …eventID`, `…meta?.screenIndex`) retained and released their strings.
                    var group = UInt64(RecordFormat.noOnboarding) << 16 | UInt64(RecordFormat.noScreen)
                    if let screen = Store.keyScreenIndex(at: original) {
                        let onboarding = try original.pointer(to: \.meta)!.withMemoryRebound(to: Meta.self, capacity: 1) {
                            try interner.intern(at: $0.pointer(to: \.onboardingID)!)
                        }
                        group = UInt64(onboarding) << 16 | UInt64(screen)
                    }
                    let ref = try original.pointer(to: \.eventID)!.withMemoryRebound(to: String.self, capacity: 1) {
                        try EventIDRef(interningAt: $0, strings: &interner)
                    }
                    idRef = ref
                    let key = DuplicateKey(group: group, timeBits: timeBits, id: ref)
                    if !batchIDs.insert(key) {
                        duplicates += 1
                        continue
                    }
                    // An event later than every stored event of its group is no duplicate of one (live ingestion).
                    let latest: UInt64
                    if let known = groupTimes.time(of: group) {
                        latest = known
                    } else {
                        latest = try latestTime(of: group, txn: txn)
                        groupTimes.note(group, time: latest)
                    }
                    if timeBits <= latest, try isStoredDuplicate(key, group: group, txn: txn) {
                        duplicates += 1
                        continue
                    }
                }
                let seq = next
                let record: EncodedRecord
                if noSession {
                    var event = original.pointee
                    Store.normalize(&event)
                    if reinfer { event.session = nil }
                    let (name, isNew) = try inferSession(for: event, seq: seq, interner: &interner)
                    event.session = name
                    if isNew { inferredSessions += 1 }
                    record = try withUnsafePointer(to: &event) {
                        try encoder.appendBody(at: $0, strings: &interner, eventID: idRef, emptyIsAbsent: true)
                    }
                } else {
                    record = try encoder.appendBody(at: original, strings: &interner, eventID: idRef, emptyIsAbsent: true)
                }
                // What NDJSON cannot carry back in (an export must read back): times outside `Timestamp.range`, total
                // screens outside the model's range, strings, multi-selects or a whole line past the reader's limits.
                // Those are looked for only when an interned string was over 4 KiB or the record is over 1 000 bytes
                // (a text is written in it; a multi-select takes at least a byte per choice), a few events in a
                // million: a line over 1 MiB needs one or the other.
                if time < Timestamp.range.lowerBound.microseconds || time > Timestamp.range.upperBound.microseconds {
                    throw EncodingError(.timeOutOfRange(time))
                }
                let total = original.pointee.meta?.totalScreens ?? 0
                if total < 0 || total > Meta.maxScreenIndex + 1 { throw EncodingError(.totalScreensOutOfRange(total)) }
                if interner.sawLongString || record.range.count > RecordFormat.maxChoices {
                    if let error = Store.interchangeLimitError(original.pointee) { throw error }
                    interner.sawLongString = false
                }
                let onboarding = record.header.keyOnboarding
                let screen = record.header.keyScreenIndex
                let session = record.session!
                let totalScreens = UInt32(clamping: total)
                entries.append(Entry(onboarding: onboarding, screen: screen, session: session, totalScreens: totalScreens,
                                     timeBits: timeBits, seq: seq, body: record.range))
                next += 1

                let pair = UInt64(onboarding) << 32 | UInt64(session)
                // Most events belong to a pair an earlier event made known: the filter answers those.
                if !pairFilter.contains(pair) {
                    // New to the store, or only forgotten (a session in two onboardings, or one whose slot a later
                    // session took); writeOnboardingSessions drops repeats and pairs already stored.
                    newPairs.append((pair, timeBits))
                    pendingPairs.append(pair)
                    pairFilter.note(pair)
                }
                kindCounts[Int(original.pointee.payload.kind.code)] += 1  // codes are in `allCases` order
                minTime = min(minTime, time)
                maxTime = max(maxTime, time)
            }
        } catch {
            // Refused part-way (the caller may catch an encoder's error and go on in this transaction): the
            // strings the batch interned are stored all the same, so that the table matches `strings`. A failure
            // to store them (the map full) is the error to report: `Store.write` grows the map on it and runs
            // the body again, while the transaction it leaves behind would refuse every later call.
            do {
                try interner.flush()
            } catch let flushError {
                // A store error in the loop has poisoned the transaction for the flush too: report the first.
                throw error is LMDBError || error is StoreError ? error : flushError
            }
            if let encoding = error as? EncodingError {
                // Every event before the refused one was either given a seq or counted as a duplicate.
                let index = Int(next - firstSeq) + duplicates
                throw Store.refusal(of: events[index], at: index, encoding)
            }
            throw error
        }
        try interner.flush()
        loopFinished = true
        nextSeq = next
        // Hand the buffers back for the writers below (the deferred swap then restores them unchanged).
        swap(&encoder, &self.encoder)
        swap(&entries, &self.entries)
        defer {
            swap(&encoder, &self.encoder)
            swap(&entries, &self.entries)
        }
        // From here on the batch is half written if a step throws: the transaction must not commit.
        do {
            return try writeBatch(txn, newPairs: newPairs, firstSeq: firstSeq, kindCounts: kindCounts, duplicates: duplicates,
                                  inferred: inferredSessions, minTime: minTime, maxTime: maxTime)
        } catch {
            failedPartWay = error
            throw error
        }
    }

    /// The databases' part of ``append(_:txn:)`` once every event is encoded: all or nothing only with the
    /// transaction, so an error here marks it failed (``failedPartWay``).
    private func writeBatch(_ txn: Transaction, newPairs: [(pair: UInt64, timeBits: UInt64)], firstSeq: UInt64, kindCounts: [UInt64],
                            duplicates: Int, inferred inferredSessions: UInt64, minTime: Int64, maxTime: Int64) throws -> AppendResult {
        let newSessions = try writeOnboardingSessions(txn, newPairs)
        try writeEvents(txn, firstSeq: firstSeq)
        try writeSessionIndex(txn, firstSeq: firstSeq)
        try writeBatches(txn, firstSeq: firstSeq)
        try writeInference(txn)
        try writeOnboardingStats(txn)
        try writeCounters(txn, kindCounts: kindCounts, duplicates: UInt64(duplicates), sessions: UInt64(newSessions), inferred: inferredSessions,
                          minTime: minTime, maxTime: maxTime)
        let result = AppendResult(appended: self.entries.count, duplicates: duplicates, seqs: firstSeq..<nextSeq)
        if !self.entries.isEmpty {
            logBatches.append(firstSeq)
            if try eventLogIsFull(txn, batches: logBatches.count) {
                try foldEventLog(txn, batches: logBatches)
                logBatches.removeAll()
            }
        }
        return result
    }

    /// ``StoreWriter/foldLogs()``: both logs folded, whatever their size.
    func foldLogs(_ txn: Transaction) throws {
        try checkUsable()
        do {
            if try !sessionLog(txn).isEmpty {
                try foldSessionLog(txn, batch: LogChunks(), firstSeq: nextSeq)
                batchLog = nil
            }
            try foldEventLog(txn, batches: try EventLog.batches(txn, dbs))
        } catch {
            failedPartWay = error
            throw error
        }
    }

    // MARK: Duplicates

    /// Whether a stored event has `key`'s group, time and event id.
    ///
    /// Reads nothing when the event is later than every stored event of its group (live ingestion).
    /// Otherwise it loads, once per batch and group, the ids of the stored events in a time window
    /// starting at the event's time, from the blocks that can hold them.
    private func isStoredDuplicate(_ key: DuplicateKey, group: UInt64, txn: Transaction) throws -> Bool {
        guard key.timeBits <= (try latestTime(of: group, txn: txn)) else { return false }
        if let range = loadedRanges[group], range.contains(key.timeBits) { return storedIDs.contains(key) }
        // A window of a minute past the event: a resent batch covers seconds to minutes.
        let lo = key.timeBits
        let hi = lo > UInt64.max - 60_000_000 ? UInt64.max : lo + 60_000_000
        try loadStoredIDs(group: group, from: lo, through: hi, txn: txn)
        loadedRanges[group] = lo...hi
        return storedIDs.contains(key)
    }

    /// Adds to `storedIDs` the keys of the stored events of `group` with time bits in `lo...hi`.
    private func loadStoredIDs(group: UInt64, from lo: UInt64, through hi: UInt64, txn: Transaction) throws {
        let onboarding = UInt32(truncatingIfNeeded: group >> 16)
        let screen = UInt16(truncatingIfNeeded: group)
        let start = lo > UInt64(Layout.blockSpan - 1) ? lo - UInt64(Layout.blockSpan - 1) : 0
        try txn.withBlockCursor(dbs, logBatches: logBatches) { c in
            var found = try EventKey(onboarding: onboarding, screen: screen, timeBits: start, seq: 0).withBytes { try c.seek($0) }
            while found {
                let key = try decodeBlockKey(c.key)
                guard key.onboarding == onboarding, key.screen == screen, key.timeBits <= hi else { return }
                var block = try blockReader(key, c.value)
                if Layout.timeBits(block.lastTime) >= lo {
                    while try block.next() {
                        let bits = Layout.timeBits(block.time)
                        guard bits >= lo && bits <= hi else { continue }
                        let record = try recordView(key, block)
                        if let id = record.eventID { storedIDs.insert(DuplicateKey(group: group, timeBits: bits, id: id)) }
                    }
                }
                found = try c.next()
            }
        }
    }

    /// Positions `c` (on `events`) at the newest block of `group` (onboarding ‖ screen) or, when the group
    /// has none, at the block before it; the caller checks the key. `false` when nothing is that early.
    private func lastBlock<C: BlockSeeking>(_ c: inout C, of group: UInt64) throws -> Bool {
        // The group of events without meta sorts last of all: its newest block is the last entry.
        if group == 0xFFFF_FFFF_FFFF { return try c.last() }
        let after = group + 1
        return try EventKey(onboarding: UInt32(truncatingIfNeeded: after >> 16), screen: UInt16(truncatingIfNeeded: after),
                            timeBits: 0, seq: 0).withBytes { try c.last(below: $0) }
    }

    /// The latest stored event time (bits) of `group`, 0 when it has none: from this writer's cache, or
    /// found by reading the blocks of the group's last block span.
    private func latestTime(of group: UInt64, txn: Transaction) throws -> UInt64 {
        if let t = pendingGroupMax[group] ?? groupMax[group] { return t }
        let onboarding = UInt32(truncatingIfNeeded: group >> 16)
        let screen = UInt16(truncatingIfNeeded: group)
        var latest: UInt64 = 0
        try txn.withBlockCursor(dbs, logBatches: logBatches) { c in
            // The group's last block starts latest; only blocks that start less than a block span before
            // it can end later.
            var found = try lastBlock(&c, of: group)
            var floor: UInt64? = nil
            while found {
                let key = try decodeBlockKey(c.key)
                guard key.onboarding == onboarding, key.screen == screen else { break }
                if floor == nil { floor = key.timeBits > UInt64(Layout.blockSpan) ? key.timeBits - UInt64(Layout.blockSpan) : 0 }
                if key.timeBits < floor! { break }
                let block = try blockReader(key, c.value)
                latest = max(latest, Layout.timeBits(block.lastTime))
                found = try c.previous()
            }
        }
        groupMax[group] = latest
        return latest
    }

    /// Sets ``order`` to one sort key per entry, in entry order, with `key` as the leading field: written
    /// through a buffer sized once (appending element by element checked uniqueness and capacity each time,
    /// ~40 instructions per event and sort).
    @inline(__always)
    private func fillOrder(_ key: (Entry) -> UInt64) {
        let n = entries.count
        var keys: [SortKey] = []
        swap(&keys, &order)
        keys.removeAll(keepingCapacity: true)
        keys.append(contentsOf: repeatElement(SortKey(a: 0, i: 0), count: n))
        entries.withUnsafeBufferPointer { e in
            keys.withUnsafeMutableBufferPointer { o in
                for i in 0..<n { o[i] = SortKey(a: key(e[i]), i: i) }
            }
        }
        swap(&keys, &order)
    }

    /// Sorts ``order`` into (a, time, seq) order.
    ///
    /// A stable radix sort on `a` keeps arrival order among equal `a`s, and arrival order is seq order;
    /// when times also never decrease within a group (events arriving in time order, the common case),
    /// that is already (a, time, seq) order. Otherwise a comparison sort finishes the job.
    /// Only the bytes of `a` that differ between keys get a pass (e.g. the screen index's high byte, zero
    /// in every key of the usual onboarding; in the append benchmarks this saved nothing measurable).
    /// - Complexity: O(n · bytes of `a` that vary), or O(n log n) for out-of-order times.
    private func sortOrder() {
        let n = order.count
        guard n > 1 else { return }
        if sortBuffer.count != n { sortBuffer = order }
        // Work on locals: class properties would pay an exclusivity check per access.
        var source = order
        var target = sortBuffer
        order = []
        sortBuffer = []
        WriterState.radixSort(&source, scratch: &target) { $0.a }
        let entries = self.entries
        let sorted = source.withUnsafeBufferPointer { keys in
            entries.withUnsafeBufferPointer { e in
                for j in 1..<n where keys[j - 1].a == keys[j].a {
                    let x = e[keys[j - 1].i], y = e[keys[j].i]
                    // Seqs too: a fold's entries come block by block, and a block of a later batch may come before
                    // one of an earlier batch with events at the same time (a batch's entries are in seq order).
                    if x.timeBits > y.timeBits || (x.timeBits == y.timeBits && x.seq > y.seq) { return false }
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

    /// Sets ``order`` to ``entries`` in (group, time, seq) order.
    private func sortByGroup() {
        // The sort key is the group in as few bits as it takes: onboarding above the screen, both only as wide as
        // their largest value in the batch, and the group of events without a position (onboarding 0xFFFF_FFFF,
        // screen 0xFFFF) as the onboarding just past the largest. Order and grouping are those of (onboarding,
        // screen), but the radix sort passes over about 20 bits instead of 48 (the no-position key alone made
        // every byte of the key differ).
        var maxOnboarding: UInt32 = 0
        var maxScreen: UInt16 = 0
        for e in entries where e.onboarding != RecordFormat.noOnboarding {
            maxOnboarding = max(maxOnboarding, e.onboarding)
            maxScreen = max(maxScreen, e.screen)
        }
        let screenBits = UInt64(UInt16.bitWidth - maxScreen.leadingZeroBitCount)
        let unpositioned = (UInt64(maxOnboarding) + 1) << screenBits
        fillOrder { e in
            e.onboarding == RecordFormat.noOnboarding ? unpositioned : UInt64(e.onboarding) << screenBits | UInt64(e.screen)
        }
        sortOrder()
    }

    /// `event_log`: the batch's events in blocks, in (group, time, seq) order, appended under (first seq of the
    /// batch ‖ block key) (docs/storage.md, "Format 9: the event log"). Blocks are cut where a group's run spans
    /// ``Layout/blockSpan`` or would pass the target size; nothing stored is read or rewritten. Every block written
    /// is listed for `batches`. The fold (``foldEventLog(_:batches:)``) later moves them into `events`.
    private func writeEvents(_ txn: Transaction, firstSeq: UInt64) throws {
        sortByGroup()
        // Per-onboarding counters come for free in key order: one accumulator per run of an onboarding.
        onboardingStats.removeAll(keepingCapacity: true)
        var current = OnboardingAccumulator()
        var currentOnboarding: UInt32? = nil
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
        }
        if let currentOnboarding { onboardingStats[currentOnboarding] = current }
        try encoder.withUnsafeBytes { bodies in
            try txn.withCursor(dbs.eventLog) { c in
                try writeBlocks(&c, bodies: bodies, logBatch: firstSeq, batchOfEntry: nil)
            }
        }
    }

    /// Writes ``entries`` in ``order`` as blocks: to the event log under `logBatch` (new blocks only, appended),
    /// or, for a fold (`logBatch == nil`), to `events`, where a group's run first grows the group's newest stored
    /// block (its last key) when the run's first event sorts after that block's last event, less than
    /// ``Layout/blockSpan`` after its first, and fits under the target size; the block is rewritten under the same
    /// key. Otherwise, and past that block, new blocks start, split where a run spans ``Layout/blockSpan`` or would
    /// pass the target size (two overflow pages, so that a sealed block fills its pages). Every block written is
    /// listed in ``blockKeys``, and for a fold with the logged batches (`batchOfEntry`: per entry, the index of
    /// its batch in the log) whose events it took in ``foldMasks``; blocks of a group are written in key order, so
    /// consecutive puts land on the same pages.
    private func writeBlocks(_ c: inout Cursor, bodies: UnsafeRawBufferPointer, logBatch: UInt64?, batchOfEntry: [UInt8]?) throws {
        let entries = self.entries
        let order = self.order
        var builder = EventBlockBuilder(capacity: 0)
        var blockKeys: [EventKey] = []
        var masks: [UInt64] = []
        // The per-group caches as locals too: as properties of the writer object each access paid a dynamic
        // exclusivity check (~80 instructions), five per block written.
        var tails = GroupCaches()
        swap(&builder, &blockBuilder)
        swap(&blockKeys, &self.blockKeys)
        swap(&masks, &foldMasks)
        swapGroupCaches(&tails)
        defer {
            swap(&builder, &blockBuilder)
            swap(&blockKeys, &self.blockKeys)
            swap(&masks, &foldMasks)
            swapGroupCaches(&tails)
        }
        blockKeys.removeAll(keepingCapacity: true)
        masks.removeAll(keepingCapacity: true)
        let grow = logBatch == nil
        // No nested function captures the loop's variables: captured, they would be boxed and pay a
        // dynamic exclusivity check per access.
        var blockKey = EventKey(onboarding: 0, screen: 0, timeBits: 0, seq: 0)
        var open = false
        var mask: UInt64 = 0
        for k in order {
            let e = entries[k.i]
            let time = Layout.time(fromBits: e.timeBits)
            let newGroup = !open || e.onboarding != blockKey.onboarding || e.screen != blockKey.screen
            if open && (newGroup || time &- builder.firstTime >= Layout.blockSpan
                        || WriterState.exceeds(builder, time: time, seq: e.seq, bodyCount: e.body.count, target: blockTarget)) {
                try putBlock(&c, blockKey, builder, logBatch: logBatch, &blockKeys, &tails)
                if grow { masks.append(mask) }
                open = false
            }
            if grow, newGroup, let tail = try groupTail(&c, onboarding: e.onboarding, screen: e.screen),
               time >= tail.lastTime, time &- Layout.time(fromBits: tail.key.timeBits) < Layout.blockSpan,
               tail.bytes + e.body.count + 24 <= blockTarget
            {
                // Grow the group's newest block (see the doc comment); a block that does not decode
                // is left as it is, for check() and readers to report.
                do {
                    let firstTime = Layout.time(fromBits: tail.key.timeBits)
                    let group = UInt64(e.onboarding) << 16 | UInt64(e.screen)
                    if let known = tails.pendingBlockTails[group] ?? tails.blockTails[group], known.key == tail.key,
                       known.bytes == tail.bytes {
                        try builder.resume(tail.value, firstTime: firstTime, firstSeq: tail.key.seq, lastSeq: known.lastSeq)
                    } else {
                        try builder.resume(tail.value, firstTime: firstTime, firstSeq: tail.key.seq)
                    }
                    if builder.canAppend(time: time, seq: e.seq),
                       builder.byteCount(appending: time, seq: e.seq, bodyCount: e.body.count) <= blockTarget {
                        blockKey = tail.key
                        open = true
                        mask = 0
                    }
                } catch {}
            }
            if !open {
                blockKey = EventKey(onboarding: e.onboarding, screen: e.screen, timeBits: e.timeBits, seq: e.seq)
                builder.start(time: time, seq: e.seq)
                open = true
                mask = 0
            }
            if let batchOfEntry { mask |= 1 << UInt64(batchOfEntry[k.i]) }
            builder.append(time: time, seq: e.seq, body: UnsafeRawBufferPointer(rebasing: bodies[e.body]))
        }
        if open {
            try putBlock(&c, blockKey, builder, logBatch: logBatch, &blockKeys, &tails)
            if grow { masks.append(mask) }
        }
    }

    /// Whether the event log, with this batch's blocks in it, is due for a fold (``EventLogLimits``).
    private func eventLogIsFull(_ txn: Transaction, batches: Int) throws -> Bool {
        // The fold marks each block with the logged batches it took events from in a 64-bit mask.
        if batches >= min(eventLogLimits.batches, 64) { return true }
        return try txn.pages(dbs.eventLog) * txn.pageSize >= eventLogLimits.bytes
    }

    /// Moves every block of the event log into `events` (docs/storage.md, "Format 9: the event log"), a group at a time:
    /// the log's batches are read through one merged cursor in block-key order, so each group's blocks come together;
    /// their records are copied out (never decoded: body bytes behind their time and seq), put in (time, seq) order,
    /// and grow the group's newest block or start new ones as a batch did before format 9
    /// (``writeBlocks(_:bodies:logBatch:batchOfEntry:)``). Then each logged batch's `batches` entries are written
    /// again to list the `events` blocks that took its events, and the log is emptied. Memory: one group's events.
    /// - Throws: ``StoreError/Kind/corrupt`` when a log block does not decode or holds a seq outside its batch (nothing
    ///   is folded: the append fails, as folding past it would lose events).
    /// - Complexity: O(n log k) for the n logged events of k batches, plus a seek per batch and per group (to its
    ///   newest block) and one put per block written.
    private func foldEventLog(_ txn: Transaction, batches: [UInt64]) throws {
        guard !batches.isEmpty else { return }
        guard batches.count <= 64 else {
            throw StoreError(.corrupt, "event_log holds \(batches.count) batches, more than a writer leaves there")
        }
        // The batches' event counts, from their `batches` entries.
        var counts: [UInt64] = []
        try txn.withCursor(dbs.batches) { c in
            for batch in batches {
                var key = [UInt8](repeating: 0, count: Layout.batchKeySize)
                key.withUnsafeMutableBytes { $0.baseAddress!.storeBE(batch, at: 0) }
                guard try key.withUnsafeBytes({ try c.seek($0) }), c.key.count == Layout.batchKeySize, c.key.be64(0) == batch,
                      c.value.count >= 4 else {
                    throw StoreError(.corrupt, "the batch at seq \(batch) is in event_log but has no batches entry")
                }
                counts.append(UInt64(c.value.be32(0)))
            }
        }
        var bodies: [UInt8] = []
        var batchOfEntry: [UInt8] = []
        var group: [Entry] = []
        swap(&bodies, &foldBodies)
        swap(&batchOfEntry, &foldBatchOfEntry)
        defer {
            swap(&bodies, &foldBodies)
            swap(&batchOfEntry, &foldBatchOfEntry)
        }
        var keys: [EventKey] = []
        var masks: [UInt64] = []
        var logs: [(Cursor, UInt64)] = []
        defer { for (cursor, _) in logs { cursor.close() } }
        for batch in batches { logs.append((try txn.openCursor(dbs.eventLog), batch)) }
        var c = BlockCursor(logs: logs)
        try txn.withCursor(dbs.events) { events in
            var found = try c.first()
            while found {
                let first = try decodeBlockKey(c.key)
                // The group's blocks, from every logged batch: copied out before anything is put (a put may make
                // LMDB write out and free the log's dirty pages, which the values point into).
                group.removeAll(keepingCapacity: true)
                bodies.removeAll(keepingCapacity: true)
                batchOfEntry.removeAll(keepingCapacity: true)
                var next: EventKey? = nil
                while found {
                    let key = try decodeBlockKey(c.key)
                    guard key.onboarding == first.onboarding, key.screen == first.screen else {
                        next = key
                        break
                    }
                    let batch = c.currentBatch!
                    let index = batches.firstIndex(of: batch)!
                    var block = try blockReader(key, c.value)
                    while try advance(&block, key) {
                        guard block.seq >= batch, block.seq - batch < counts[index] else {
                            throw StoreError(.corrupt, "event_log: the block at seq \(key.seq) of the batch at seq \(batch) holds seq "
                                             + "\(block.seq), outside its batch; the store is damaged, and nothing can be appended "
                                             + "until it is repaired (`boardwalk export --salvage`)")
                        }
                        let start = bodies.count
                        bodies.append(contentsOf: block.body)
                        group.append(Entry(onboarding: key.onboarding, screen: key.screen, session: 0, totalScreens: 0,
                                           timeBits: Layout.timeBits(block.time), seq: block.seq, body: start..<bodies.count))
                        batchOfEntry.append(UInt8(index))
                    }
                    found = try c.next()
                }
                // Blocks come by first time: usually the events are in (time, seq) order already (sortOrder checks).
                do {
                    // writeBlocks reads the writer's `entries` and `order`: the batch's entries are not needed any more.
                    swap(&group, &entries)
                    defer { swap(&group, &entries) }
                    fillOrder { _ in 0 }
                    sortOrder()
                    try bodies.withUnsafeBytes { b in try writeBlocks(&events, bodies: b, logBatch: nil, batchOfEntry: batchOfEntry) }
                }
                keys.append(contentsOf: blockKeys)
                masks.append(contentsOf: foldMasks)
                // The puts may have moved the pages under the log's cursors' current values: position them again.
                if let next { found = try c.seek(next) }
            }
        }
        // The logged batches' `batches` entries, written again with the `events` blocks that hold their events
        // (they are the last entries of `batches`).
        try txn.withCursor(dbs.batches) { c in
            var key = [UInt8](repeating: 0, count: Layout.batchKeySize)
            key.withUnsafeMutableBytes { $0.baseAddress!.storeBE(batches[0], at: 0) }
            while try key.withUnsafeBytes({ try c.seek($0) }) {
                // Every entry from the log's first batch on is a logged batch's (a batch without events writes none).
                guard c.key.count == Layout.batchKeySize, batches.contains(c.key.be64(0)) else {
                    throw StoreError(.corrupt, "batches: an entry past the event log's first batch (seq \(batches[0])) "
                                     + "belongs to no logged batch; the store is damaged (`boardwalk check` says more)")
                }
                try c.delete()
            }
        }
        for (index, batch) in batches.enumerated() {
            var own: [EventKey] = []
            for (i, mask) in masks.enumerated() where mask & (1 << UInt64(index)) != 0 { own.append(keys[i]) }
            try putBatchEntries(txn, firstSeq: batch, count: UInt32(counts[index]), keys: own)
        }
        try txn.empty(dbs.eventLog)
    }

    /// ``groupMax``, ``pendingGroupMax``, ``blockTails`` and ``pendingBlockTails``, moved out of the writer while
    /// ``writeBlocks(_:bodies:logBatch:batchOfEntry:)`` runs.
    struct GroupCaches {
        var groupMax: [UInt64: UInt64] = [:]
        var pendingGroupMax: [UInt64: UInt64] = [:]
        var blockTails: [UInt64: BlockTail] = [:]
        var pendingBlockTails: [UInt64: BlockTail] = [:]
    }

    /// Exchanges the writer's per-group caches with `caches` (twice: out and back).
    private func swapGroupCaches(_ caches: inout GroupCaches) {
        swap(&caches.groupMax, &groupMax)
        swap(&caches.pendingGroupMax, &pendingGroupMax)
        swap(&caches.blockTails, &blockTails)
        swap(&caches.pendingBlockTails, &pendingBlockTails)
    }

    /// Whether appending an event (time, seq, a body of `bodyCount` bytes) would take `builder`'s block past
    /// `target` bytes. An event adds at most 25 bytes besides its body (three varints), and
    /// ``EventBlockBuilder/byteCountBound`` counts the longest header, so a block that far below the target needs
    /// no exact count: the exact one (about 100 instructions) runs only for the last few events of a block. The
    /// bound reads one field; the exact `byteCount` it replaced here summed four varint sizes, ~47 instructions
    /// per event with 100 000 sessions in flight.
    @inline(__always)
    static func exceeds(_ builder: EventBlockBuilder, time: Int64, seq: UInt64, bodyCount: Int, target: Int) -> Bool {
        if builder.byteCountBound &+ bodyCount &+ 25 <= target { return false }
        return builder.byteCount(appending: time, seq: seq, bodyCount: bodyCount) > target
    }

    /// The newest block of a group (the last key of its range), if it has one: its key, value and last
    /// event's time. The value points into the map and is valid until the next write.
    private func groupTail(_ c: inout Cursor, onboarding: UInt32, screen: UInt16) throws
        -> (key: EventKey, value: UnsafeRawBufferPointer, bytes: Int, lastTime: Int64)?
    {
        let found = try lastBlock(&c, of: UInt64(onboarding) << 16 | UInt64(screen))
        guard found, let key = EventKey(c.key), key.onboarding == onboarding, key.screen == screen else { return nil }
        // The header alone gives the last time; a damaged header means no growing.
        guard let header = try? EventBlockReader(c.value, firstTime: Layout.time(fromBits: key.timeBits), firstSeq: key.seq) else {
            return nil
        }
        return (key, c.value, c.value.count, header.lastTime)
    }

    /// Puts a finished block under `key` (in the event log under `logBatch`, appended, when it is set) and notes
    /// its key and its group's latest time.
    private func putBlock(_ c: inout Cursor, _ key: EventKey, _ builder: EventBlockBuilder, logBatch: UInt64?,
                          _ blockKeys: inout [EventKey], _ tails: inout GroupCaches) throws {
        let group = UInt64(key.onboarding) << 16 | UInt64(key.screen)
        if let logBatch {
            key.write(to: scratch, batch: logBatch)
            let appended = try builder.withBlock { block in
                try c.put(UnsafeRawBufferPointer(start: scratch, count: Layout.eventLogKeySize), block, flags: PutFlags.append)
            }
            guard appended else {
                throw StoreError(.corrupt, "event_log already has entries past the batch at seq \(logBatch)")
            }
        } else {
            key.write(to: scratch)
            _ = try builder.withBlock { block in
                try c.put(UnsafeRawBufferPointer(start: scratch, count: Layout.eventKeySize), block)
            }
            // Blocks of a group are put in key order, so the last one put is the group's newest.
            tails.pendingBlockTails[group] = BlockTail(key: key, bytes: builder.byteCount, lastSeq: builder.lastEventSeq)
        }
        blockKeys.append(key)
        let last = Layout.timeBits(builder.lastTime)
        // Only a known latest time is raised. An unknown one stays unknown (`latestTime(of:)` reads the store
        // when a duplicate check needs it): taken as 0 here, a block of old events would become the group's
        // "latest", and newer resent events would skip the lookup and be stored twice.
        if let known = tails.pendingGroupMax[group] ?? tails.groupMax[group], last > known { tails.pendingGroupMax[group] = last }
    }

    /// The session index's references of the batch (docs/storage.md, "Format 8: the session log"): per bucket of
    /// ``Layout/sessionBucketWidth`` consecutive session ids touched by the batch, segments listing its sessions'
    /// events of the batch (per session in (time, seq) order, a segment cut past ``Layout/sessionValueTarget``
    /// bytes), in bucket order, cut into chunks of at most ``Layout/sessionLogChunkTarget`` bytes. The chunks are
    /// appended to `session_log` under (first seq of the batch, first bucket of the chunk), unless the log would then
    /// pass its limits (``SessionLogLimits``): then the log and the batch's chunks are folded into `sessions`
    /// instead, and the log is emptied.
    /// - Complexity: one sort of the batch and O(references) to build the chunks; an append per chunk, or the fold:
    ///   O(log N) and one put per bucket the log touches, after a copy of the log.
    private func writeSessionIndex(_ txn: Transaction, firstSeq: UInt64) throws {
        fillOrder { UInt64($0.session) }
        sortOrder()
        let entries = self.entries
        let order = self.order
        var builder = SessionBucketBuilder(prefixRoom: 0, capacity: 0)
        var chunks = LogChunks()
        // Locals, like the builder: as properties of the writer object each access paid a dynamic exclusivity check.
        swap(&builder, &bucketBuilder)
        swap(&chunks, &logChunks)
        defer {
            swap(&builder, &bucketBuilder)
            swap(&chunks, &logChunks)
        }
        chunks.reset()
        let shift = Layout.sessionBucketShift
        let mask = Layout.sessionBucketWidth - 1
        let target = Layout.sessionValueTarget
        var bucket: UInt32 = 0
        var open = false
        for k in order {
            let e = entries[k.i]
            let b = e.session >> shift
            if open && (b != bucket || builder.byteCount >= target) {
                builder.withValue(keySeq: firstSeq) { chunks.append(bucket: bucket, segment: $0) }
                open = false
            }
            if !open {
                bucket = b
                builder.reset()
                open = true
            }
            builder.append(low: e.session & mask, onboarding: e.onboarding, screen: e.screen,
                           time: Layout.time(fromBits: e.timeBits), seq: e.seq)
        }
        if open { builder.withValue(keySeq: firstSeq) { chunks.append(bucket: bucket, segment: $0) } }
        chunks.finish()
        guard !chunks.isEmpty else { return }
        let log = try sessionLog(txn)
        batchLog = nil
        if log.batches.count + 1 > logLimits.batches || log.bytes + chunks.bytes.count > logLimits.bytes {
            try foldSessionLog(txn, batch: chunks, firstSeq: firstSeq)
            return
        }
        try txn.withCursor(dbs.sessionLog) { c in
            try chunks.bytes.withUnsafeBytes { all in
                for chunk in chunks.chunks {
                    scratch.storeBE(firstSeq, at: 0)
                    scratch.storeBE(chunk.firstBucket, at: 8)
                    let key = UnsafeRawBufferPointer(start: scratch, count: Layout.sessionLogKeySize)
                    guard try c.put(key, UnsafeRawBufferPointer(rebasing: all[chunk.range]), flags: PutFlags.append) else {
                        throw StoreError(.corrupt, "session_log already holds a chunk at or past batch \(firstSeq) (at or past next_seq)")
                    }
                }
            }
        }
    }

    /// The session log's keys as the running batch sees them (loaded once per batch; dropped when the batch
    /// writes to the log).
    func sessionLog(_ txn: Transaction) throws -> SessionLog {
        if let batchLog { return batchLog }
        let log = try SessionLog(txn, dbs)
        batchLog = log
        return log
    }

    /// Folds the session log and the batch's chunks into `sessions`, then empties the log. The log's bytes are
    /// copied first: its pages may be this transaction's own, which LMDB may write out and free while the fold puts.
    /// Per bucket, in bucket order, its segments in batch order are appended to its newest value while they fit in
    /// ``Layout/sessionValueTarget`` bytes (and the value's key seq is at most the segment's base seq), else start a
    /// new value under (bucket, the segment's base seq); each value is put once. A newest value whose run headers do
    /// not read back (damage) is left as it is, for check() and readers to report.
    private func foldSessionLog(_ txn: Transaction, batch: LogChunks, firstSeq: UInt64) throws {
        var fold = Fold()
        swap(&fold, &self.fold)
        defer { swap(&fold, &self.fold) }
        fold.reset()
        try SessionLog.forEachEntry(txn, dbs) { seq, _, bucket, segment in fold.add(bucket: bucket, keySeq: seq, segment) }
        try batch.bytes.withUnsafeBytes { all in
            for chunk in batch.chunks {
                var reader = try SessionLog.reader(UnsafeRawBufferPointer(rebasing: all[chunk.range]), seq: firstSeq,
                                                   bucket: chunk.firstBucket)
                while let entry = try SessionLog.next(&reader, seq: firstSeq, bucket: chunk.firstBucket) {
                    fold.add(bucket: entry.bucket, keySeq: firstSeq, entry.segment)
                }
            }
        }
        // Stable: a bucket's segments stay in batch order.
        fold.scratchItems.removeAll(keepingCapacity: true)
        fold.scratchItems.append(contentsOf: fold.items)
        WriterState.radixSort(&fold.items, scratch: &fold.scratchItems) { UInt64($0.bucket) }
        let target = Layout.sessionValueTarget
        let width = Layout.sessionBucketWidth
        try txn.withCursor(dbs.sessions) { c in
            try fold.bytes.withUnsafeBytes { all in
                var value = fold.value
                defer { fold.value = value }
                var i = 0
                while i < fold.items.count {
                    let bucket = fold.items[i].bucket
                    // The bucket's newest value, grown when sound and not full.
                    var keySeq: UInt64 = 0
                    var stored = false, changed = false, have = false
                    value.removeAll(keepingCapacity: true)
                    scratch.storeBE(bucket &+ 1, at: 0)
                    scratch.storeBE(UInt64(0), at: 4)
                    if bucket < UInt32.max,
                       try c.last(below: UnsafeRawBufferPointer(start: scratch, count: Layout.sessionKeySize)),
                       c.key.count == Layout.sessionKeySize, c.key.be32(0) == bucket, c.value.count < target,
                       SessionBucketReader.runHeadersAreSound(c.value, keySeq: c.key.be64(4), lowLimit: width) {
                        keySeq = c.key.be64(4)
                        value.append(contentsOf: c.value)
                        stored = true
                        have = true
                    }
                    func flush() throws {
                        guard changed else { return }
                        scratch.storeBE(bucket, at: 0)
                        scratch.storeBE(keySeq, at: 4)
                        let key = UnsafeRawBufferPointer(start: scratch, count: Layout.sessionKeySize)
                        let put = try value.withUnsafeBytes { try c.put(key, $0, flags: stored ? 0 : PutFlags.noOverwrite) }
                        guard put else {
                            throw StoreError(.corrupt, "the session bucket \(bucket) already has a value at seq \(keySeq), which the session log lists again")
                        }
                    }
                    while i < fold.items.count, fold.items[i].bucket == bucket {
                        let item = fold.items[i]
                        do {
                            try SessionBucketSegment.forEach(in: UnsafeRawBufferPointer(rebasing: all[item.range]),
                                                             keySeq: item.keySeq, lowLimit: width) { segment in
                                if have && keySeq <= segment.baseSeq && value.count + segment.byteCount(keySeq: keySeq) <= target {
                                    segment.append(keySeq: keySeq, to: &value)
                                    changed = true
                                    return
                                }
                                if have { try flush() }
                                value.removeAll(keepingCapacity: true)
                                keySeq = segment.baseSeq
                                segment.append(keySeq: keySeq, to: &value)
                                stored = false
                                changed = true
                                have = true
                            }
                        } catch let error as CodecError {
                            throw StoreError(.corrupt, "the session_log segment of bucket \(bucket) from batch \(item.keySeq) does not "
                                             + "decode: the session index cannot be folded (`boardwalk check` says more)", underlying: error)
                        }
                        i += 1
                    }
                    if have { try flush() }
                }
            }
        }
        try txn.empty(dbs.sessionLog)
    }

    /// `items` in `key` order, stably: a least-significant-digit radix sort on the bytes of the key that are not
    /// the same in every element (with ids dense from 0, usually the low three bytes of a session id and one or
    /// two of an onboarding id). For the batch's new (onboarding, session) pairs a comparison sort cost about
    /// 200 instructions per event with 100 000 sessions in flight.
    /// - Complexity: O(n · varying bytes).
    static func radixSorted<T>(_ items: [T], key: (T) -> UInt64) -> [T] {
        var source = items
        var scratch = items
        radixSort(&source, scratch: &scratch, key: key)
        return source
    }

    /// Sorts `items` by `key`, stably, as ``radixSorted(_:key:)`` does; `scratch` (as many elements, any values)
    /// is the other buffer of the passes, so that a caller keeping it saves an allocation per sort.
    ///
    /// Digits are 11 bits wide for a large input (8 for a small one, where 2 048 counters would cost more than
    /// the elements), and only the bits that differ between keys get one: a digit starts at the lowest differing
    /// bit not yet covered, so a run of bits equal in every key is skipped (with 10 000 session ids below 2^19,
    /// two passes instead of three bytes'). One pass over the input counts every digit; then one scatter pass per
    /// digit.
    /// - Complexity: O(n · digits + 2^digit bits · digits).
    static func radixSort<T>(_ items: inout [T], scratch: inout [T], key: (T) -> UInt64) {
        guard let firstItem = items.first, items.count > 1 else { return }
        precondition(scratch.count == items.count, "the scratch buffer must hold as many elements")
        let first = key(firstItem)
        var varying: UInt64 = 0
        for item in items { varying |= key(item) ^ first }
        guard varying != 0 else { return }
        let width = items.count >= 2048 ? 11 : 8
        let radix = 1 << width
        let digitMask = UInt64(radix - 1)
        // The digits' shifts: each starts at the lowest differing bit above the previous digit.
        var shifts: [UInt64] = []
        var position: UInt64 = 0
        while position < 64 {
            let above = varying >> position
            if above == 0 { break }
            position += UInt64(above.trailingZeroBitCount)
            shifts.append(position)
            position += UInt64(width)
        }
        var counts = [Int](repeating: 0, count: radix * shifts.count)
        counts.withUnsafeMutableBufferPointer { count in
            shifts.withUnsafeBufferPointer { shifts in
                items.withUnsafeBufferPointer { src in
                    if shifts.count == 2 {
                        // The usual case (group keys and session ids of a batch span about 20 bits): both digits counted
                        // without the inner loop over the digits, ~10 instructions per element and sort less.
                        let s0 = shifts[0], s1 = shifts[1]
                        for item in src {
                            let k = key(item)
                            count[Int(truncatingIfNeeded: (k &>> s0) & digitMask)] &+= 1
                            count[radix &+ Int(truncatingIfNeeded: (k &>> s1) & digitMask)] &+= 1
                        }
                    } else {
                        for item in src {
                            let k = key(item)
                            for d in 0..<shifts.count {
                                count[d &* radix &+ Int(truncatingIfNeeded: (k &>> shifts[d]) & digitMask)] &+= 1
                            }
                        }
                    }
                }
                for d in 0..<shifts.count {
                    let shift = shifts[d]
                    let base = d &* radix
                    var sum = 0
                    for b in base..<(base &+ radix) {
                        let c = count[b]
                        count[b] = sum
                        sum &+= c
                    }
                    items.withUnsafeBufferPointer { src in
                        scratch.withUnsafeMutableBufferPointer { dst in
                            for item in src {
                                let b = base &+ Int(truncatingIfNeeded: (key(item) &>> shift) & digitMask)
                                dst[count[b]] = item
                                count[b] &+= 1
                            }
                        }
                    }
                    swap(&items, &scratch)
                }
            }
        }
    }

    /// `batches`: the keys of the batch's blocks, ``Layout/batchChunk`` per entry, appended under
    /// (first seq of the batch, chunk number), each entry with the batch's event count.
    private func writeBatches(_ txn: Transaction, firstSeq: UInt64) throws {
        guard !entries.isEmpty else { return }
        try putBatchEntries(txn, firstSeq: firstSeq, count: UInt32(entries.count), keys: blockKeys)
    }

    private func putBatchEntries(_ txn: Transaction, firstSeq: UInt64, count: UInt32, keys blockKeys: [EventKey]) throws {
        let key = scratch
        var start = 0
        var chunkNumber: UInt16 = 0
        while start < blockKeys.count {
            let end = min(start + Layout.batchChunk, blockKeys.count)
            chunk.storeBE(count, at: 0)
            for i in start..<end {
                blockKeys[i].write(to: chunk + 4 + (i - start) * Layout.eventKeySize)
            }
            key.storeBE(firstSeq, at: 0)
            key.storeBE(chunkNumber, at: 8)
            guard try txn.put(dbs.batches, UnsafeRawBufferPointer(start: key, count: Layout.batchKeySize),
                              UnsafeRawBufferPointer(start: chunk, count: 4 + (end - start) * Layout.eventKeySize),
                              flags: PutFlags.append)
            else {
                throw StoreError(.corrupt, "the batches database already has entries past seq \(firstSeq)")
            }
            chunkNumber &+= 1
            start = end
        }
    }

    // MARK: Session inference

    /// The session of an event that has none (semantics rule 10): per (profile, onboarding), a new one
    /// starts at the first event, after 30 minutes without events, or at a start event
    /// (`onboarding_loaded`, `onboarding_started`) once the session has seen other events, unless the start event
    /// is less than 30 minutes before the session's last event. Events are taken in arrival order; any other event
    /// older than the session's last event joins it.
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
            let k = scratch + 1536
            k.storeBE(key, at: 0)
            if let v = try txn.get(dbs.inferred, UnsafeRawBufferPointer(start: k, count: 8)) {
                guard v.count == 13 else { throw StoreError(.corrupt, "an inferred-session entry is \(v.count) bytes, not 13") }
                state = InferState(session: v.be32(0), lastTime: Layout.time(fromBits: v.be64(4)), fresh: v[12] != 0)
            }
        }
        // A start event begins a new session once the current one has seen other events, when it is at or after
        // the session's last event, or 30 minutes or more before it (a whole earlier session arriving late, review
        // session 8); a late start event within 30 minutes before the last event belongs to the session it precedes
        // and joins it (QA session 8: it began a session of its own and took later late events from theirs).
        let startsAnother = isStart && state.map { !$0.fresh && (time >= $0.lastTime || $0.lastTime &- time >= Layout.sessionGap) } ?? true
        if var current = state, time &- current.lastTime < Layout.sessionGap, !startsAnother,
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

    private func writeCounters(_ txn: Transaction, kindCounts: [UInt64], duplicates: UInt64, sessions: UInt64, inferred: UInt64,
                               minTime: Int64, maxTime: Int64) throws {
        func add(_ key: String, _ n: UInt64) throws {
            if n == 0 { return }
            try txn.putUInt64(dbs.meta, key, (try txn.getUInt64(dbs.meta, key) ?? 0) &+ n)
        }
        try txn.putUInt64(dbs.meta, Layout.metaNextSeq, nextSeq)
        try add(Layout.metaEvents, UInt64(entries.count))
        try add(Layout.metaDuplicates, duplicates)
        try add(Layout.metaSessions, sessions)
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

/// The writer's memory of which (onboarding, session) pairs are in `onboarding_sessions`: a fixed array of
/// 2^19 pairs (4 MiB) indexed by the session id's low bits. A hit (the slot holds exactly the pair) means the
/// pair is stored, answered with one load; a miss only means "not known here".
///
/// Session ids are dense in first-seen order, so the sessions in flight are a window of recent ids: with
/// fewer than 2^19 ids between the oldest session in flight and the newest string, each session has a slot
/// of its own, and a session's events after its first find its pair there. (The `Set` of every pair it
/// replaces cost a SipHash insert per event with 100 000 sessions in flight, and grew to a million pairs.)
/// A session whose slot a later id took, or a session in a second onboarding (one pair per slot), misses:
/// its pair goes to `onboarding_sessions` again, which finds it (a seek and one chunk decoded).
///
/// Invariant: a slot only holds a pair that is stored (committed, or written by the running transaction);
/// the writer forgets the pairs of a refused batch or an aborted transaction.
struct SessionPairFilter {
    static let defaultBits = 19
    /// Each slot holds the complement of its pair, so that an all-zero array is empty: `~0` would be the pair
    /// (0xFFFF_FFFF, 0xFFFF_FFFF), and session id 0xFFFF_FFFF is the codec's "absent", never a session.
    private var slots: [UInt64]
    /// Slots - 1 (a power of two less one; the slot of a pair is its session id's low bits).
    private let mask: Int

    /// An empty filter of 2^`bits` slots, allocated on the first ``note(_:)``.
    init(bits: Int = SessionPairFilter.defaultBits) {
        slots = []
        mask = 1 << bits - 1
    }

    @inline(__always)
    private func slot(_ pair: UInt64) -> Int {
        Int(truncatingIfNeeded: pair) & mask
    }

    /// Whether `pair` is known to be stored.
    @inline(__always)
    func contains(_ pair: UInt64) -> Bool {
        slots.withUnsafeBufferPointer { s in s.count != 0 && s[slot(pair)] == ~pair }
    }

    /// Remembers `pair`, which is stored or is being written by the running batch (it replaces its slot's pair).
    @inline(__always)
    mutating func note(_ pair: UInt64) {
        if slots.isEmpty { allocate() }
        let i = slot(pair)
        slots.withUnsafeMutableBufferPointer { s in s[i] = ~pair }
    }

    /// Out of line: kept out of the append loop, where a larger body made the optimizer stop specializing the
    /// encoder's call (about 115 more instructions per event, measured).
    @inline(never)
    private mutating func allocate() {
        slots = [UInt64](repeating: 0, count: mask + 1)
    }

    /// Forgets `pair` if its slot holds it.
    mutating func forget(_ pair: UInt64) {
        let i = slot(pair)
        if !slots.isEmpty && slots[i] == ~pair { slots[i] = 0 }
    }
}

/// A batch's session-log chunks: entries of (bucket, segment) in bucket order, cut into chunks of at most
/// ``Layout/sessionLogChunkTarget`` bytes, kept in one buffer. A chunk holds whole buckets (every entry of a bucket
/// is in one chunk, which may then pass the target), so that chunk keys (batch, first bucket) are unique and a
/// bucket is looked up in one chunk per batch.
struct LogChunks {
    struct Chunk {
        var firstBucket: UInt32
        var range: Range<Int>
    }

    private var builder = SessionLogChunkBuilder()
    private(set) var bytes: [UInt8] = []
    private(set) var chunks: [Chunk] = []

    var isEmpty: Bool { chunks.isEmpty }

    mutating func reset() {
        builder.reset()
        bytes.removeAll(keepingCapacity: true)
        chunks.removeAll(keepingCapacity: true)
    }

    /// Adds an entry, first closing the open chunk when the entry starts a bucket and would take it past the target.
    mutating func append(bucket: UInt32, segment: UnsafeRawBufferPointer) {
        if !builder.isEmpty && bucket != builder.lastBucket
            && builder.byteCount(appending: segment.count, bucket: bucket) > Layout.sessionLogChunkTarget {
            finish()
        }
        builder.append(bucket: bucket, segment: segment)
    }

    /// Closes the open chunk, if any.
    mutating func finish() {
        guard !builder.isEmpty else { return }
        let start = bytes.count
        bytes.append(contentsOf: builder.bytes)
        chunks.append(Chunk(firstBucket: builder.firstBucket, range: start..<bytes.count))
        builder.reset()
    }
}

/// The buffers of a fold of the session log: every segment to fold, copied, with its bucket and key seq.
struct Fold {
    struct Item {
        var bucket: UInt32
        var keySeq: UInt64
        var range: Range<Int>
    }

    var bytes: [UInt8] = []
    var items: [Item] = []
    var scratchItems: [Item] = []
    /// The value being built for a bucket.
    var value: [UInt8] = []

    mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
        items.removeAll(keepingCapacity: true)
    }

    mutating func add(bucket: UInt32, keySeq: UInt64, _ segment: UnsafeRawBufferPointer) {
        let start = bytes.count
        bytes.append(contentsOf: segment)
        items.append(Item(bucket: bucket, keySeq: keySeq, range: start..<bytes.count))
    }
}
