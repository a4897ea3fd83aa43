import BoardwalkCodec
import BoardwalkModel
import BoardwalkStoreFormat

/// The writer's in-memory state: the string dictionary, caches, and reusable buffers.
///
/// Only used under the store's writer lock. Everything a transaction changes here is either rolled back
/// by ``didAbort()`` or confirmed by ``didCommit()``, so a redone batch sees the state as of the last commit.
///
/// `@unchecked Sendable`: the store hands it out only inside its writer lock (``Store/withWriter(_:)``).
final class WriterState: @unchecked Sendable {
    let dbs: Databases
    /// The readers' string table, for snapshots taken inside a write transaction.
    let cache: SharedStringTable
    /// Every string of the store, ids dense in first-seen order (mirrors the `strings` database).
    var table = StringTable()
    private var committedStrings = 0
    /// Strings stored before the running batch (committed, or written by an earlier batch of the same
    /// transaction): a session id at or above it has no event in the store before this batch.
    var batchStartStrings = 0
    var loaded = false
    /// The `next_seq` this writer last committed or read; a different value in `meta` means another
    /// process appended, and the caches are refreshed.
    private var knownNextSeq: UInt64 = 0
    var nextSeq: UInt64 = 0

    /// Inference state per (profile, onboarding): committed, and changed in the running transaction.
    var inferCache: [UInt64: InferState] = [:]
    var pendingInfer: [UInt64: InferState] = [:]
    /// (onboarding, session) pairs known to be in `onboarding_sessions` (committed, or written by the running
    /// transaction): one slot per session id modulo its size, so the sessions in flight (a window of recent ids)
    /// each keep their pair. A pair it does not hold goes to `onboarding_sessions`, whose chunk says whether it is stored.
    var pairFilter = SessionPairFilter()
    /// The pairs the running transaction put in `pairFilter`, taken out again if it aborts.
    var pendingPairs: [UInt64] = []
    /// (profile, session) pairs known to be in `session_names`, as ``pairFilter`` for `onboarding_sessions`, and the
    /// pairs the running transaction put there.
    var profileFilter = SessionPairFilter()
    var pendingProfiles: [UInt64] = []

    var txn: Transaction?
    var encoder = RecordEncoder(capacity: 1 << 20)
    var entries: [Entry] = []
    var order: [SortKey] = []
    var sortBuffer: [SortKey] = []
    var onboardingStats: [UInt32: OnboardingAccumulator] = [:]
    var newPairs: [(pair: UInt64, timeBits: UInt64)] = []
    var blockBuilder = EventBlockBuilder()
    var bucketBuilder = SessionBucketBuilder(prefixRoom: 0)
    /// The running batch's session-log chunks (WriterState+SessionIndex.swift) and the buffers of a fold
    /// (WriterState+SessionLogFold.swift).
    var logChunks = LogChunks()
    var fold = Fold()
    /// The session log's keys, once the running batch needed them; `nil` again once it writes to the log.
    var batchLog: SessionLog?
    /// When the session log is folded into `sessions`.
    let logLimits: SessionLogLimits
    let eventLogLimits: EventLogLimits
    /// The `events` keys of the blocks the running batch wrote, for `batches`.
    var blockKeys: [EventKey] = []
    /// Per block a fold wrote, the logged batches (bit i: the log's i-th) whose events it took.
    var foldMasks: [UInt64] = []
    /// A fold's record bodies and, per logged event, the index of its batch in the log.
    var foldBodies: [UInt8] = []
    var foldBatchOfEntry: [UInt8] = []
    /// The first seqs of the batches in the event log, read when a batch begins (``EventLog/batches(_:_:)``).
    var logBatches: [UInt64] = []
    /// Stands in for the address space left under `RLIMIT_AS` (``addressSpaceRoom()``) in tests of the stepped fold.
    @TaskLocal static var addressSpaceRoomOverride: Int? = nil
    /// Per group (onboarding << 16 | screen): the latest event time stored (time bits), 0 when none.
    /// Committed values, and those of the running transaction. An event later than its group's latest
    /// time cannot be a duplicate, so live ingestion never reads stored blocks to look for duplicates.
    var groupMax: [UInt64: UInt64] = [:]
    var pendingGroupMax: [UInt64: UInt64] = [:]
    /// Per group: the newest block this writer wrote (its key, size and last event's seq), committed and
    /// in the running transaction. When the group's stored newest block is still that one (same key and
    /// size; another process's append makes ``refresh(_:)`` drop these), it is grown without decoding its
    /// events again to find the last seq.
    var blockTails: [UInt64: BlockTail] = [:]
    var pendingBlockTails: [UInt64: BlockTail] = [:]
    /// Duplicate detection of the running batch: keys of events seen in it, each group's latest stored time as
    /// looked up by the batch, keys of stored events loaded for comparison, and per group the time range (bits)
    /// whose stored events are loaded.
    var batchIDs: BatchKeySet
    var groupTimes: GroupTimeMemo
    var storedIDs = Set<DuplicateKey>()
    /// The seed of the content hash of events without an id (``DuplicateKey/init(group:timeBits:content:seed:)``).
    let contentSeed: (UInt64, UInt64)
    var loadedRanges: [UInt64: ClosedRange<UInt64>] = [:]
    /// Key bytes for the puts (2 KiB).
    let scratch: UnsafeMutableRawPointer
    /// The error of a batch that failed after it began writing to the databases (``append(_:txn:)``): the
    /// transaction holds part of it, so it must not commit. Cleared when a transaction begins or aborts.
    var failedPartWay: (any Error)?
    /// Whether the checks before the first write (``Store/checkPagesBeforeFirstWrite(_:_:)``) have passed.
    var pagesChecked = false
    /// What those checks noted about the meta page of the commit before the last (damaged, but never read again).
    var olderMetaDamage: String?
    /// Kept across batches: `onboarding_sessions` chunks (OnboardingSessions.swift).
    var pairChunkBuilder = SessionPairChunkBuilder()
    let chunk: UnsafeMutableRawPointer
    /// The size at which a block is sealed: two overflow pages (``Layout/blockTarget(pageSize:)``).
    let blockTarget: Int

    struct BlockTail {
        var key: EventKey
        var bytes: Int
        var lastSeq: UInt64
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

    init(
        dbs: Databases, cache: SharedStringTable, pageSize: Int, logLimits: SessionLogLimits = .standard,
        eventLogLimits: EventLogLimits = .standard
    ) {
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
        contentSeed = (UInt64.random(in: .min ... .max), UInt64.random(in: .min ... .max))
    }

    deinit {
        scratch.deallocate()
        chunk.deallocate()
    }

    /// Replaces the pair filter with an empty one of 2^`pairBits` slots: for tests, which need sessions to leave a
    /// small window without a million strings.
    func useCaches(pairBits: Int) {
        pairFilter = SessionPairFilter(bits: pairBits)
        profileFilter = SessionPairFilter(bits: pairBits)
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
        pendingProfiles.removeAll(keepingCapacity: true)
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
        for pair in pendingProfiles { profileFilter.forget(pair) }
        pendingProfiles.removeAll(keepingCapacity: true)
        txn = nil
    }

    /// Brings the caches up to date with the store: loads the dictionary on first use, and reloads what
    /// another process may have appended since this writer's last commit.
    private func refresh(_ txn: Transaction) throws {
        let storedNext = try txn.getUInt64(dbs.meta, Layout.metaNextSeq) ?? 0
        // next_seq alone misses another process's batch that was refused, caught and committed: its strings are
        // stored without an event.
        do {
            if loaded && storedNext == knownNextSeq, try StringChunks.count(in: txn, dbs) == UInt32(table.count) {
                return
            }
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
            throw StoreError(
                .corrupt,
                "cannot write: the store's string dictionary is damaged (\(error.description)); "
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
        throw StoreError(
            kind,
            "this write transaction is being aborted: an earlier append in it failed after it began "
                + "writing, so nothing of the transaction will be stored", underlying: failedPartWay)
    }

    func putCheckpoint(_ checkpoint: Checkpoint, txn: Transaction) throws {
        try checkUsable()
        do {
            try checkpoint.key.withUTF8Bytes { k in
                try checkpoint.value.withUnsafeBytes { v in try txn.put(dbs.checkpoints, k, v) }
            }
        } catch {
            failedPartWay = error
            throw error
        }
    }
}
