import BoardwalkCodec

// The event log (docs/storage.md, "How an append writes"): each batch's blocks are appended to
// `event_log` under (first seq of the batch ‖ the block's `events` key), and folded into `events` every few
// batches. Readers see `events` and the log as one ordered set of blocks through a `BlockCursor`.

/// When the writer folds the event log into `events`: once the log holds this many batches, or this many bytes
/// of pages. Until then a group's newest block in `events` is not rewritten by each batch.
struct EventLogLimits: Sendable {
    /// The most batches the log holds: a read of `events` seeks once per batch in the log.
    var batches: Int
    /// The most bytes of pages the log holds: the fold copies its records into memory.
    var bytes: Int

    static let standard = EventLogLimits(batches: 16, bytes: 8 << 20)
}

enum EventLog {
    /// The first seq of each batch in the log, in increasing order: one seek per batch (no value is read).
    /// - Throws: ``StoreError/Kind/corrupt`` for a key of the wrong size.
    /// - Complexity: O(batches × log N).
    static func batches(_ txn: Transaction, _ dbs: Databases) throws -> [UInt64] {
        var out: [UInt64] = []
        try txn.withCursor(dbs.eventLog) { c in
            var found = try c.first()
            while found {
                guard c.key.count == Layout.eventLogKeySize else { throw badKey(c.key.count) }
                let batch = c.key.be64(0)
                out.append(batch)
                if batch == .max { break }
                found = try withUnsafeBytes(of: (batch + 1).bigEndian) { try c.seek($0) }
            }
        }
        return out
    }

    /// The name of the database that holds the blocks of the batch starting at seq `batch`, for messages.
    static func database(ofBatch batch: UInt64, logBatches: [UInt64]) -> String {
        batch >= (logBatches.first ?? .max) ? Layout.eventLog : Layout.events
    }

    static func badKey(_ count: Int) -> StoreError {
        StoreError(.corrupt, "an event_log key is \(count) bytes, not \(Layout.eventLogKeySize)")
    }
}

extension Transaction {
    /// The block stored under `key` by the batch starting at seq `batch`: in the event log when the batch is
    /// there (`batches` from ``EventLog/batches(_:_:)``), else in `events`.
    func block(_ key: EventKey, ofBatch batch: UInt64, logBatches: [UInt64], _ dbs: Databases) throws
        -> UnsafeRawBufferPointer?
    {
        guard let first = logBatches.first, batch >= first else { return try key.withBytes { try get(dbs.events, $0) } }
        return try key.withLogBytes(batch: batch) { try get(dbs.eventLog, $0) }
    }

    /// Runs `body` with a ``BlockCursor`` over `events` and the batches of the event log; with `heads`, over
    /// `block_heads` instead of `events` (the values from it are the blocks' heads, ``BlockCursor/currentBatch`` `nil`).
    func withBlockCursor<R>(
        _ dbs: Databases, logBatches: [UInt64], heads: Bool = false, _ body: (inout BlockCursor) throws -> R
    ) throws -> R {
        try withCursor(heads ? dbs.blockHeads : dbs.events) { main in
            var c = BlockCursor(main: main)
            defer { c.closeLogCursors() }
            for batch in logBatches { try c.addLog(try openCursor(dbs.eventLog), batch: batch) }
            return try body(&c)
        }
    }
}

/// `events` and the event log's batches read as one set of blocks in `events` key order (onboarding, screen,
/// first time, first seq): a merge of one cursor on `events` and one per logged batch (each within the keys of
/// its batch, with the batch prefix taken off). Keys are unique across them (a block's key holds its first
/// event's seq). With the log empty every move is one move of the `events` cursor.
///
/// Moves as liblmdb's cursor: ``seek(_:)`` to the first key at or after one, ``first()``, ``last()``, ``next()``,
/// ``previous()``; ``key`` (22 bytes) and ``value`` are valid until the next move. One difference: after a move
/// that found nothing, ``next()`` and ``previous()`` find nothing either until a seek, `first()` or `last()`
/// (liblmdb would step back from its end); no caller steps on from there. ``focus(onSeq:)`` restricts
/// the moves to the one source that can hold a seq's event (a block holds events of one batch while in the log).
/// - Complexity: a seek costs one seek per source (1 + batches in the log); a step costs one step and a
///   comparison per source.
struct BlockCursor: BlockEntries {
    private var sources: [Source]
    private var current = -1
    /// The direction of the last move: the sources other than `current` are positioned past the current key
    /// in it (`nil`: not positioned, after a focused move).
    private var forward: Bool? = true
    private var focused: Int? = nil
    private(set) var key = UnsafeRawBufferPointer(start: nil, count: 0)
    private(set) var value = UnsafeRawBufferPointer(start: nil, count: 0)

    struct Source {
        var cursor: Cursor
        /// The batch's first seq, for a log source; `nil` for `events`.
        let batch: UInt64?
        var valid = false
        var key = EventKey(onboarding: 0, screen: 0, timeBits: 0, seq: 0)
    }

    init(main: Cursor) { sources = [Source(cursor: main, batch: nil)] }

    /// A cursor over the given logged batches alone (the fold reads the log so); the caller closes the cursors.
    init(logs: [(Cursor, UInt64)]) { sources = logs.map { Source(cursor: $0.0, batch: $0.1) } }

    /// The first seq of the logged batch the current block is in; `nil` for a block of `events` or no position.
    var currentBatch: UInt64? { current >= 0 ? sources[current].batch : nil }

    mutating func addLog(_ cursor: Cursor, batch: UInt64) throws {
        sources.append(Source(cursor: cursor, batch: batch))
    }

    mutating func closeLogCursors() {
        for i in sources.indices.dropFirst() { sources[i].cursor.close() }
        sources.removeSubrange(1...)
    }

    /// Whether any batch is in the log (else this is a plain cursor on `events`).
    var hasLog: Bool { sources.count > 1 }

    // MARK: One source

    /// Loads `valid` and `key` of source `i` after a move that returned `found`.
    @inline(__always)
    private mutating func settle(_ i: Int, _ found: Bool) throws {
        guard found else { sources[i].valid = false; return }
        let raw = sources[i].cursor.key
        guard let batch = sources[i].batch else {
            sources[i].valid = true
            sources[i].key = try decodeBlockKey(raw)
            return
        }
        guard let (keyBatch, key) = EventKey.logKey(raw) else { throw EventLog.badKey(raw.count) }
        sources[i].valid = keyBatch == batch
        sources[i].key = key
    }

    private mutating func seek(_ i: Int, _ target: EventKey) throws {
        guard let batch = sources[i].batch else {
            try settle(i, try target.withBytes { try sources[i].cursor.seek($0) })
            return
        }
        try settle(i, try target.withLogBytes(batch: batch) { try sources[i].cursor.seek($0) })
    }

    private mutating func first(_ i: Int) throws {
        guard sources[i].batch != nil else { return try settle(i, try sources[i].cursor.first()) }
        try seek(i, EventKey(onboarding: 0, screen: 0, timeBits: 0, seq: 0))
    }

    private mutating func last(_ i: Int) throws {
        guard let batch = sources[i].batch else { return try settle(i, try sources[i].cursor.last()) }
        let found: Bool
        if batch == .max {
            found = try sources[i].cursor.last()
        } else {
            found = try withUnsafeBytes(of: (batch + 1).bigEndian) { try sources[i].cursor.last(below: $0) }
        }
        try settle(i, found)
    }

    /// Positions source `i` on its first key after `k` (forward) or its last key before `k`.
    private mutating func position(_ i: Int, around k: EventKey, forward: Bool) throws {
        try seek(i, k)
        if forward {
            if sources[i].valid && sources[i].key == k { try settle(i, try sources[i].cursor.next()) }
        } else if sources[i].valid {
            try settle(i, try sources[i].cursor.previous())
        } else {
            try last(i)
        }
    }

    // MARK: The merge

    private var active: Range<Int> {
        if let focused { return focused..<focused + 1 }
        return 0..<sources.count
    }

    /// Makes the least (forward) or greatest valid source current; `false` when none is valid.
    private mutating func pick(forward: Bool) -> Bool {
        var best = -1
        for i in active where sources[i].valid {
            if best < 0 || (forward ? sources[i].key < sources[best].key : sources[i].key > sources[best].key) {
                best = i
            }
        }
        current = best
        guard best >= 0 else {
            key = UnsafeRawBufferPointer(start: nil, count: 0)
            value = key
            return false
        }
        let raw = sources[best].cursor.key
        key = sources[best].batch == nil ? raw : UnsafeRawBufferPointer(rebasing: raw[8...])
        value = sources[best].cursor.value
        return true
    }

    /// Positions at the first block key `>= target`.
    mutating func seek(_ target: EventKey) throws -> Bool {
        for i in active { try seek(i, target) }
        forward = focused == nil ? true : nil
        return pick(forward: true)
    }

    mutating func seek(_ target: UnsafeRawBufferPointer) throws -> Bool {
        try seek(try decodeBlockKey(target))
    }

    mutating func first() throws -> Bool {
        for i in active { try first(i) }
        forward = focused == nil ? true : nil
        return pick(forward: true)
    }

    mutating func last() throws -> Bool {
        for i in active { try last(i) }
        forward = focused == nil ? false : nil
        return pick(forward: false)
    }

    /// Positions at the last key `< bound`.
    mutating func last(below bound: UnsafeRawBufferPointer) throws -> Bool {
        try seek(bound) ? try previous() : try last()
    }

    mutating func next() throws -> Bool { try step(forward: true) }
    mutating func previous() throws -> Bool { try step(forward: false) }

    private mutating func step(forward: Bool) throws -> Bool {
        guard current >= 0 else { return false }
        let at = current, k = sources[at].key
        if self.forward != forward {
            for i in active where i != at { try position(i, around: k, forward: forward) }
            self.forward = focused == nil ? forward : nil
        }
        try settle(at, forward ? try sources[at].cursor.next() : try sources[at].cursor.previous())
        return pick(forward: forward)
    }

    /// Restricts the moves to the source that can hold the event with `seq`: `events` for a seq before the log,
    /// else the batch holding it. ``unfocus()`` lifts it; the position is kept.
    mutating func focus(onSeq seq: UInt64) {
        guard hasLog else { return }
        var best = 0
        for i in sources.indices.dropFirst() where sources[i].batch! <= seq { best = i }
        focused = best
        forward = nil
    }

    mutating func unfocus() {
        guard focused != nil else { return }
        focused = nil
        forward = nil
    }
}

/// The moves ``WriterState`` needs to find a group's newest block, on `events` alone or with the log.
protocol BlockSeeking {
    mutating func last() throws -> Bool
    mutating func last(below bound: UnsafeRawBufferPointer) throws -> Bool
}

extension Cursor: BlockSeeking {}
extension BlockCursor: BlockSeeking {}
