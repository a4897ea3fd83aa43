import BoardwalkCodec
import BoardwalkModel
import BoardwalkStoreFormat

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
    let cache: SharedStringTable
    /// Strings in the dictionary when the snapshot began: every id a record holds is below this.
    package let stringCount: UInt32
    /// Why ``stringCount`` is short of the dictionary (its last chunk is damaged), if it is: a lookup that finds
    /// nothing below it throws this rather than answer that the string is not stored.
    let stringsDamage: StoreError?
    /// The session log's keys, read on the first session read of a read-only snapshot (``sessionLog()``).
    private let logCache = SessionLogCache()
    /// Where damaged event blocks are recorded and stepped over, when this snapshot reads around damage
    /// (``readingAroundDamage(_:)``); `nil`: a damaged block throws.
    var damaged: DamagedBlocks? = nil

    init(txn: Transaction, dbs: Databases, cache: SharedStringTable) throws {
        // A damaged last chunk leaves the count at its first id: `check()` reports the damage, and references
        // past that are reported as out of range instead of being resolved against bytes that do not decode.
        let count: UInt32
        var damage: StoreError? = nil
        do {
            count = try StringChunks.count(in: txn, dbs)
        } catch let error as StoreError where error.kind == .corrupt {
            count = try Self.fallbackStringCount(txn, dbs)
            damage = error
        }
        self.txn = txn
        self.dbs = dbs
        self.cache = cache
        stringCount = count
        stringsDamage = damage
    }

    /// The session log's keys (the references of the batches since the last fold): read once per read-only
    /// snapshot, when a session read first needs them, and again for every session read inside a write
    /// transaction, where a later append may have changed the log. Read lazily, so that a damaged log key fails
    /// the session reads (as `corrupt`) and nothing else.
    /// - Complexity: O(chunks in the log) the first time (a few hundred keys at most; no value is read).
    func sessionLog() throws -> SessionLog {
        if txn.isWrite { return try SessionLog(txn, dbs) }
        if let log = logCache.log { return log }
        let log = try SessionLog(txn, dbs)
        logCache.log = log
        return log
    }

    /// The first seqs of the batches in the event log (those not yet folded into `events`): read once per
    /// read-only snapshot, at its first read of events, and at every read inside a write transaction.
    /// - Complexity: O(batches in the log × log N).
    func eventLogBatches() throws -> [UInt64] {
        if txn.isWrite { return try EventLog.batches(txn, dbs) }
        if let batches = logCache.eventBatches { return batches }
        let batches = try EventLog.batches(txn, dbs)
        logCache.eventBatches = batches
        return batches
    }

    /// The id of the commit the snapshot reads (`mdb_txn_id`): two snapshots with the same id see the same data,
    /// and give one string the same ``StringID``. Scans that split their work across read transactions check it.
    package var commitID: UInt64 { txn.id }

    /// Runs `body` with a ``BlockCursor`` over `events` and the event log.
    func withBlockCursor<R>(heads: Bool = false, _ body: (inout BlockCursor) throws -> R) throws -> R {
        try txn.withBlockCursor(dbs, logBatches: try eventLogBatches(), heads: heads, body)
    }

    // MARK: Views and seeks

    @inline(__always)
    func view(_ key: EventKey, _ block: EventBlockReader) throws -> EventView {
        EventView(seq: block.seq, record: try recordView(key, block, stringLimit: stringCount))
    }

    @inline(__always)
    func seek(_ c: inout BlockCursor, _ key: EventKey) throws -> Bool {
        try c.seek(key)
    }
}
