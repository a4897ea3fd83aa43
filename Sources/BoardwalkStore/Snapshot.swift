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
    let cache: StringCache
    /// Strings in the dictionary when the snapshot began: every id a record holds is below this.
    let stringCount: UInt32
    /// The session log's keys, read on the first session read of a read-only snapshot (``sessionLog()``).
    private let logCache = SessionLogCache()

    init(txn: Transaction, dbs: Databases, cache: StringCache) throws {
        // A damaged last chunk leaves the count at its first id: `check()` reports the damage, and references
        // past that are reported as out of range instead of being resolved against bytes that do not decode.
        let count: UInt32
        do {
            count = try StringChunks.count(in: txn, dbs)
        } catch let error as StoreError where error.kind == .corrupt {
            count = try Self.fallbackStringCount(txn, dbs)
        }
        self.txn = txn
        self.dbs = dbs
        self.cache = cache
        stringCount = count
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

    /// Runs `body` with a ``BlockCursor`` over `events` and the event log.
    func withBlockCursor<R>(_ body: (inout BlockCursor) throws -> R) throws -> R {
        try txn.withBlockCursor(dbs, logBatches: try eventLogBatches(), body)
    }

    // MARK: Strings

    /// The string with id `id`, or `nil` if there is none (or it cannot be read).
    /// - Complexity: O(1) from the table shared by the store's snapshots (``id(of:)``), which many lookups load;
    ///   until then (and in a write transaction) O(log strings) to find the string's chunk and a walk of at most
    ///   one chunk (``Layout/stringChunkTarget`` bytes). One `String` allocation for 16 bytes or more.
    public func string(for id: StringID) -> String? {
        guard id < stringCount else { return nil }
        if let cached = cache.string(for: id, txn: txn, dbs: dbs, limit: stringCount) { return cached }
        var result: String? = nil
        try? StringChunks.forEach(in: txn, dbs, from: id) { found, entry in
            if found == id { result = entry.string }
            return false
        }
        return result
    }

    /// The string count of a store whose last chunk cannot be read: that of the last well-formed chunk (stepping
    /// back over malformed keys), or its first id when its count does not decode, or 0. `check()` reports the damage.
    private static func fallbackStringCount(_ txn: Transaction, _ dbs: Databases) throws -> UInt32 {
        try txn.withCursor(dbs.strings) { c in
            var found = try c.last()
            while found && c.key.count != 4 { found = try c.previous() }
            guard found else { return 0 }
            let first = c.key.be32(0)
            guard let count = try? StringChunkReader(c.value).count,
                  UInt64(first) + UInt64(count) <= UInt64(RecordFormat.absent) else { return first }
            return first + UInt32(count)
        }
    }

    /// The id of `string`, or `nil` when the store had not seen it when the snapshot began.
    ///
    /// The store keeps no string → id index on disk: the first lookup in a process reads the whole
    /// `strings` database into a table shared by all snapshots of the ``Store``, and later lookups read
    /// only strings added since (ids are dense and never change, so the table never goes stale).
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` when `strings` is not dense, repeats a string, or
    ///   holds a chunk that does not decode.
    /// - Complexity: O(1) expected, after O(new strings) to bring the table up to date.
    public func id(of string: String) throws -> StringID? {
        try cache.id(of: string, txn: txn, dbs: dbs, limit: stringCount)
    }

    /// The ids of `strings` (`nil` for each the store had not seen when the snapshot began), found without loading
    /// the dictionary: from the table ``id(of:)`` loads when a lookup already did, and else in one pass over the
    /// `strings` chunks the table lacks, each entry compared with the strings not found yet, keeping none. For a few
    /// lookups in a process that has not loaded the table (a query naming one session: 69–108 ms instead of 0.75 s on
    /// a 33 M-event store with 2.05 M strings); many lookups are cheaper through ``id(of:)``.
    ///
    /// Strings are compared byte for byte, as ``id(of:)`` compares them: a canonically equivalent spelling in another
    /// Unicode form is another string here.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` when a chunk does not decode.
    /// - Complexity: O(strings the table lacks × `strings.count`) bytes compared, O(`strings.count`) memory.
    public func findIDs(of strings: [String]) throws -> [StringID?] {
        try cache.ids(of: strings, txn: txn, dbs: dbs, limit: stringCount)
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
            guard minTime <= maxTime else {
                throw StoreError(.corrupt, "meta: min_time is after max_time (the store's counters are damaged; check() says more)")
            }
            range = Timestamp(microseconds: Layout.time(fromBits: minTime))...Timestamp(microseconds: Layout.time(fromBits: maxTime))
        }
        var pages = 0
        for db in [dbs.meta, dbs.events, dbs.sessions, dbs.onboardingSessions, dbs.batches, dbs.strings,
                   dbs.inferred, dbs.onboardings, dbs.checkpoints, dbs.spanningSessions, dbs.sessionLog, dbs.eventLog] {
            pages += try txn.pages(db)
        }
        // Events without a position are summed under the no-onboarding key: not an onboarding.
        var noOnboarding = RecordFormat.noOnboarding.bigEndian
        let unpositioned = try withUnsafeBytes(of: &noOnboarding) { try txn.get(dbs.onboardings, $0) != nil }
        return StoreStats(
            events: Int(try txn.getUInt64(dbs.meta, Layout.metaEvents) ?? 0),
            duplicatesSkipped: Int(try txn.getUInt64(dbs.meta, Layout.metaDuplicates) ?? 0),
            sessions: Int(try txn.getUInt64(dbs.meta, Layout.metaSessions) ?? 0),
            inferredSessions: Int(try txn.getUInt64(dbs.meta, Layout.metaInferredSessions) ?? 0),
            onboardings: try txn.entries(dbs.onboardings) - (unpositioned ? 1 : 0),
            strings: Int(stringCount),
            eventsByKind: kinds,
            timeRange: range,
            nextSeq: try txn.getUInt64(dbs.meta, Layout.metaNextSeq) ?? 0,
            bytes: pages * txn.pageSize)
    }

    /// The batches not yet folded from each log: those whose blocks are still in the event log (reads merge them
    /// in; ``Store/foldLogs()`` folds them) and those whose session references are still in the session log.
    ///
    /// Apart from ``stats()``, which reads no page of a database: a damaged page met here fails the rest of this
    /// snapshot's reads (LMDB marks the transaction failed), so call it last, or in a snapshot of its own.
    /// - Throws: ``StoreError/Kind/corrupt`` for a log key of the wrong size; ``LMDBError`` for a damaged page.
    /// - Complexity: O(batches × log N) for the event log (a seek per batch); O(chunks) for the session log's keys.
    public func unfoldedBatches() throws -> (eventLog: Int, sessionLog: Int) {
        (try eventLogBatches().count, try sessionLog().batches.count)
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
                guard r.minTime <= r.maxTime else {
                    throw StoreError(.corrupt, "onboardings: the entry of onboarding id \(id) has its min time after its max time "
                                     + "(damaged; check() says more)")
                }
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
    /// Only the blocks that can hold matching events are read: per screen, the scan seeks to the first
    /// block that can hold an event of the time range (`MDB_SET_RANGE` on the range's start minus the
    /// widest block span) and stops at the first block that starts past its end. Blocks of one screen
    /// written by different batches may overlap in time; their events are merged.
    /// The ``EventView`` is valid only inside `body`. Return `false` from `body` to stop.
    /// - Parameters:
    ///   - onboarding: an id from ``id(of:)``; `nil` scans the whole store;
    ///     `RecordFormat.noOnboarding` selects events without `meta`.
    ///   - screens: screen indexes to include (ignored when `onboarding` is `nil`).
    ///   - time: the half-open time range to include.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` for a key, block or record that does not decode.
    /// - Complexity: O(log N) per screen visited, plus O(1) amortized per event of the blocks read
    ///   (O(k) per event while k blocks overlap in time).
    public func forEachEvent(onboarding: StringID?, screens: ClosedRange<Int>? = nil, time: Range<Timestamp>? = nil,
                             _ body: (EventView) throws -> Bool) throws {
        try forEachRecord(onboarding: onboarding, screens: screens, time: time) { record in try body(try record.view()) }
    }

    /// ``forEachEvent(onboarding:screens:time:_:)``, handing out each event undecoded: its seq, time, key
    /// fields and record body. The caller decodes what it reads, with ``EventRecord/fields()`` (the few fields
    /// a session fold needs, a fraction of the cost) or ``EventRecord/view()`` (the full, validated view).
    /// The ``EventRecord`` is valid only inside `body` (in a read transaction, until it ends: see
    /// ``EventRecord``). Return `false` from `body` to stop.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` for a key or block that does not decode, and
    ///   whatever `body` throws (records are decoded by the caller).
    /// - Complexity: as ``forEachEvent(onboarding:screens:time:_:)``, without the per-event decode.
    public func forEachRecord(onboarding: StringID?, screens: ClosedRange<Int>? = nil, time: Range<Timestamp>? = nil,
                              _ body: (EventRecord) throws -> Bool) throws {
        try forEachRun(onboarding: onboarding, screens: screens, time: time) { run in
            while let record = try run.next() {
                guard try body(record) else { return false }
            }
            return true
        }
    }

    /// ``forEachRecord(onboarding:screens:time:_:)`` a run of events at a time: `body` gets an ``EventRun``, the
    /// events of one block that come next in (time, seq) order (usually the whole block), and reads them with
    /// ``EventRun/next()``. The loop over a run's events is then the caller's own (inlined, no call per event).
    /// Return `false` from `body` to stop; events of the run it did not read before returning `true` are skipped.
    /// The run is valid only inside `body`; its records as ``EventRecord`` says.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` for a key or block that does not decode (from
    ///   ``EventRun/next()`` too), and whatever `body` throws.
    public func forEachRun(onboarding: StringID?, screens: ClosedRange<Int>? = nil, time: Range<Timestamp>? = nil,
                           _ body: (inout EventRun) throws -> Bool) throws {
        let range = TimeRange(time)
        var open: [OpenBlock] = []
        try withBlockCursor { c in
            guard let onboarding else {
                var found = try c.first()
                while found {
                    let key = try decodeBlockKey(c.key)
                    let group = UInt64(key.onboarding) << 16 | UInt64(key.screen)
                    if key.timeBits < range.seekBits {
                        found = try seek(&c, EventKey(onboarding: key.onboarding, screen: key.screen, timeBits: range.seekBits, seq: 0))
                    }
                    guard try scanGroup(&c, found: found, onboarding: key.onboarding, screen: key.screen, range, &open, body)
                    else { return }
                    if group == 0xFFFF_FFFF_FFFF { return }
                    let next = group + 1
                    found = try seek(&c, EventKey(onboarding: UInt32(truncatingIfNeeded: next >> 16),
                                                  screen: UInt16(truncatingIfNeeded: next), timeBits: 0, seq: 0))
                }
                return
            }
            if let screens, screens.upperBound < 0 || screens.lowerBound > Int(UInt16.max) { return }
            let firstScreen = UInt16(clamping: screens?.lowerBound ?? 0)
            let lastScreen = UInt16(clamping: screens?.upperBound ?? Int(UInt16.max))
            var found = try seek(&c, EventKey(onboarding: onboarding, screen: firstScreen, timeBits: range.seekBits, seq: 0))
            while found {
                let key = try decodeBlockKey(c.key)
                if key.onboarding != onboarding || key.screen > lastScreen { return }
                if key.timeBits < range.seekBits {
                    found = try seek(&c, EventKey(onboarding: onboarding, screen: key.screen, timeBits: range.seekBits, seq: 0))
                    continue
                }
                guard try scanGroup(&c, found: true, onboarding: onboarding, screen: key.screen, range, &open, body) else { return }
                if key.screen == lastScreen { return }
                found = try seek(&c, EventKey(onboarding: onboarding, screen: key.screen + 1, timeBits: range.seekBits, seq: 0))
            }
        }
    }

    /// A block being read by a merge, positioned on its current event.
    struct OpenBlock {
        var key: EventKey
        var reader: EventBlockReader
    }

    /// A scan's time range: `lo..<hi` (`hi == nil`: no upper bound) and where a scan of a group starts.
    struct TimeRange {
        var lo: Int64
        var hi: Int64?
        /// The time bits of the earliest block start that can hold an event at `lo` or later.
        var seekBits: UInt64

        init(_ time: Range<Timestamp>?) {
            lo = time?.lowerBound.microseconds ?? .min
            hi = time?.upperBound.microseconds
            seekBits = lo == .min ? 0 : Layout.timeBits(lo.minusSaturating(Layout.blockSpan - 1))
        }

        @inline(__always) func isPastEnd(_ t: Int64) -> Bool { hi.map { t >= $0 } ?? false }
    }

    /// Merges the blocks of one group from the cursor (on the group's first block that can hold events
    /// of `range`, when `found`) in (time, seq) order and calls `body` for the events in `range`.
    /// Returns `false` when `body` asked to stop. Leaves the cursor anywhere.
    private func scanGroup(_ c: inout BlockCursor, found: Bool, onboarding: UInt32, screen: UInt16, _ range: TimeRange,
                           _ open: inout [OpenBlock], _ body: (inout EventRun) throws -> Bool) throws -> Bool {
        open.removeAll(keepingCapacity: true)
        var found = found
        let hi = range.hi ?? .max, bounded = range.hi != nil, lo = range.lo, limit = stringCount
        // The next block not yet opened, if it belongs to the group and starts before the range ends.
        func pending() throws -> EventKey? {
            guard found else { return nil }
            let key = try decodeBlockKey(c.key)
            guard key.onboarding == onboarding, key.screen == screen,
                  !range.isPastEnd(Layout.time(fromBits: key.timeBits)) else { return nil }
            return key
        }
        var next = try pending()
        while true {
            var m = -1
            for i in open.indices where m < 0 || precedes(open[i].reader.time, open[i].reader.seq, open[m].reader.time, open[m].reader.seq) {
                m = i
            }
            if let key = next,
               m < 0 || precedes(Layout.time(fromBits: key.timeBits), key.seq, open[m].reader.time, open[m].reader.seq) {
                var reader = try blockReader(key, c.value)
                _ = try advance(&reader, key)
                open.append(OpenBlock(key: key, reader: reader))
                found = try c.next()
                next = try pending()
                continue
            }
            if m < 0 { return true }
            // Block m holds the earliest event; it stays the earliest until its events reach the start of the
            // next block to open or the current event of another open block. Its events up to there are read
            // from a local copy of its reader (no array access per event); usually that is the whole block.
            var boundTime = Int64.max, boundSeq = UInt64.max
            if let key = next { (boundTime, boundSeq) = (Layout.time(fromBits: key.timeBits), key.seq) }
            for i in open.indices where i != m && precedes(open[i].reader.time, open[i].reader.seq, boundTime, boundSeq) {
                (boundTime, boundSeq) = (open[i].reader.time, open[i].reader.seq)
            }
            var run = EventRun(reader: open[m].reader, blockSeq: open[m].key.seq, onboarding: onboarding, screen: screen,
                               lo: lo, hi: hi, bounded: bounded, boundTime: boundTime, boundSeq: boundSeq, stringLimit: limit)
            guard try body(&run) else { return false }
            // Skip what the body left unread, so that the reader stands on the first event after the run.
            while !run.ended { _ = try run.next() }
            // Every event not yet seen comes at or after this one.
            if run.pastEnd { return true }
            if run.blockDone {
                open.swapAt(m, open.count - 1)
                open.removeLast()
            } else {
                open[m].reader = run.reader
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

    /// Calls `body` for one session's events in (time, seq) order, through the session index: the
    /// references in the values of the session's bucket are collected and sorted, and each event is read
    /// from its block (a seek on `events`, usually landing on the block itself).
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` when a bucket value does not decode or lists
    ///   an event that `events` lacks.
    /// - Complexity: O(log N + bytes of the bucket's values) to collect, then O(log N + events of the block)
    ///   per event.
    public func forEachEvent(inSession session: StringID, time: Range<Timestamp>? = nil,
                             _ body: (EventView) throws -> Bool) throws {
        try forEachIndexedEvent(inSession: session, TimeRange(time), body)
    }

    /// The block holding event (onboarding, screen, time, seq), positioned on it; `nil` when there is none.
    ///
    /// Its block starts at or before the event and less than a block span earlier; usually it is the
    /// block right before the event's key.
    func locate(_ c: inout BlockCursor, onboarding: UInt32, screen: UInt16, time: Int64, seq: UInt64) throws
        -> (EventKey, EventBlockReader)?
    {
        // Only the event log's batch holding the seq, or `events` for a seq before the log, can hold it.
        c.focus(onSeq: seq)
        defer { c.unfocus() }
        let target = EventKey(onboarding: onboarding, screen: screen, timeBits: Layout.timeBits(time), seq: seq)
        var found = try seek(&c, target)
        let exact = try found && decodeBlockKey(c.key) == target
        if !exact {
            found = found ? try c.previous() : try c.last()
        }
        let floor = Layout.timeBits(time.minusSaturating(Layout.blockSpan - 1))
        while found {
            let key = try decodeBlockKey(c.key)
            guard key.onboarding == onboarding, key.screen == screen, key.timeBits >= floor else { return nil }
            var block = try blockReader(key, c.value)
            if block.lastTime >= time && block.minSeq <= seq && seq <= block.maxSeq {
                while try advance(&block, key) {
                    if block.seq == seq && block.time == time { return (key, block) }
                    if block.time > time { break }
                }
            }
            found = try c.previous()
        }
        return nil
    }

    /// ``forEachEvent(inSession:time:_:)`` by the session's id string.
    public func forEachEvent(inSession session: String, time: Range<Timestamp>? = nil,
                             _ body: (EventView) throws -> Bool) throws {
        guard let id = try id(of: session) else { return }
        try forEachEvent(inSession: id, time: time, body)
    }

    /// Calls `body` for every event with `seq >= since`, in seq (arrival) order: the incremental-export
    /// scan. It reads `batches` from the batch holding `since`, and for each batch the blocks it lists
    /// (`mdb_get` each), putting the batch's events in seq order in a buffer reused across batches. A
    /// block grown over several batches is listed by each of them; each batch takes only its own seqs.
    /// - Complexity: O(log N) to find the start, then O(log N + events of the block) per listed block.
    public func forEachEvent(since: UInt64, _ body: (EventView) throws -> Bool) throws {
        struct Slot {
            var key: EventKey
            var reader: EventBlockReader?
        }
        var slots: [Slot] = []
        // Bounds a damaged batch count before it sizes the buffer.
        let nextSeq = try txn.getUInt64(dbs.meta, Layout.metaNextSeq) ?? 0
        let logBatches = try eventLogBatches()
        try txn.withCursor(dbs.batches) { c in
            var found = try seekBatch(&c, holding: since)
            while found {
                guard c.key.count == Layout.batchKeySize, c.value.count >= 4 + Layout.eventKeySize,
                      (c.value.count - 4) % Layout.eventKeySize == 0, c.key.be16(8) == 0 else { throw corruptBatch(c) }
                let first = c.key.be64(0)
                let count = Int(c.value.be32(0))
                guard first <= nextSeq, UInt64(count) <= nextSeq - first else {
                    throw StoreError(.corrupt, "the batch at seq \(first) says \(count) events, past next_seq \(nextSeq)")
                }
                // The buffer grows with the seqs the blocks really hold, never with the count alone: a damaged
                // count must not size an allocation (next_seq only bounds it by the store's size).
                slots.removeAll(keepingCapacity: true)
                var filled = 0
                // Every chunk of this batch.
                repeat {
                    guard c.key.count == Layout.batchKeySize, c.value.count >= 4, (c.value.count - 4) % Layout.eventKeySize == 0,
                          Int(c.value.be32(0)) == count else { throw corruptBatch(c) }
                    var offset = 4
                    while offset < c.value.count {
                        let key = EventKey(UnsafeRawBufferPointer(rebasing: c.value[offset..<offset + Layout.eventKeySize]))!
                        offset += Layout.eventKeySize
                        guard let value = try txn.block(key, ofBatch: first, logBatches: logBatches, dbs) else {
                            throw StoreError(.corrupt, "the batches database lists the block at seq \(key.seq), which is not in "
                                         + EventLog.database(ofBatch: first, logBatches: logBatches))
                        }
                        var block = try blockReader(key, value)
                        var at = block
                        while try advance(&block, key) {
                            let i = block.seq &- first
                            // A grown block also holds events of the batches before and after this one.
                            guard block.seq >= first, i < UInt64(count) else {
                                at = block
                                continue
                            }
                            if Int(i) >= slots.count {
                                slots.append(contentsOf: repeatElement(Slot(key: EventKey(onboarding: 0, screen: 0, timeBits: 0, seq: 0), reader: nil),
                                                                       count: Int(i) + 1 - slots.count))
                            }
                            guard slots[Int(i)].reader == nil else {
                                throw StoreError(.corrupt, "the batch at seq \(first) lists seq \(block.seq) twice (in the block at seq \(key.seq))")
                            }
                            slots[Int(i)] = Slot(key: key, reader: at)
                            at = block
                            filled += 1
                        }
                    }
                    found = try c.next()
                } while found && c.key.count == Layout.batchKeySize && c.key.be64(0) == first
                guard filled == count else {
                    throw StoreError(.corrupt, "the batch at seq \(first) lists \(filled) events, not \(count)")
                }
                for i in 0..<count where first + UInt64(i) >= since {
                    // Each slot holds the reader positioned just before its event.
                    var reader = slots[i].reader!
                    _ = try advance(&reader, slots[i].key)
                    guard try body(try view(slots[i].key, reader)) else { return }
                }
            }
        }
    }

    /// Positions `c` (on `batches`) on the first chunk of the batch holding seq `since` (the last batch starting at
    /// or before it; the first batch when none does); `false` when `batches` is empty.
    func seekBatch(_ c: inout Cursor, holding since: UInt64) throws -> Bool {
        var start = [UInt8](repeating: 0, count: Layout.batchKeySize)
        start.withUnsafeMutableBytes { $0.baseAddress!.storeBE(since, at: 0) }
        var found = try start.withUnsafeBytes { try c.seek($0) }
        // The batch holding `since` starts at or before it: unless we landed exactly on it, step back to
        // the previous batch's last chunk, then to its first.
        if !found || c.key.count != Layout.batchKeySize || c.key.be64(0) != since {
            found = found ? try c.previous() : try c.last()
            if found {
                guard c.key.count == Layout.batchKeySize else { throw corruptBatch(c) }
                start.withUnsafeMutableBytes { $0.baseAddress!.storeBE(c.key.be64(0), at: 0) }
                found = try start.withUnsafeBytes { try c.seek($0) }
            } else {
                found = try c.first()
            }
        }
        return found
    }

    func corruptBatch(_ c: Cursor) -> StoreError {
        StoreError(.corrupt, "a batches entry has a \(c.key.count)-byte key and a \(c.value.count)-byte value")
    }

    /// The sessions of one onboarding, in session id order, with the time of the first event stored for each.
    /// - Complexity: O(log N + sessions of the onboarding).
    public func sessions(ofOnboarding onboarding: StringID) throws -> [SessionSummary] {
        var out: [SessionSummary] = []
        try forEachOnboardingSession(onboarding) { session, timeBits in
            out.append(SessionSummary(id: session, session: string(for: session) ?? "",
                                      firstTime: Timestamp(microseconds: Layout.time(fromBits: timeBits))))
        }
        return out
    }

    /// The sessions of `onboarding` (``RecordFormat/noOnboarding``: sessions with events without a position) whose
    /// first event stored in it is at or after `time`, in session id order. That event is one of the session's, so
    /// a session left out has an event in the onboarding before `time`; one listed may still have one, stored
    /// later (see ``forEachRecord(arrivedSince:before:onboardings:_:)``).
    /// - Complexity: O(log N + sessions of the onboarding).
    public func sessionIDs(ofOnboarding onboarding: StringID, firstStoredFrom time: Timestamp) throws -> [StringID] {
        let bits = Layout.timeBits(time.microseconds)
        var out: [StringID] = []
        try forEachOnboardingSession(onboarding) { session, timeBits in
            if timeBits >= bits { out.append(session) }
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
            throw StoreError(.corrupt, "event seq \(view.seq) does not decode",
                             underlying: storedRecordError(error))
        }
    }

    // MARK: Helpers

    @inline(__always)
    func view(_ key: EventKey, _ block: EventBlockReader) throws -> EventView {
        EventView(seq: block.seq, record: try recordView(key, block, stringLimit: stringCount))
    }

    @inline(__always)
    private func seek(_ c: inout BlockCursor, _ key: EventKey) throws -> Bool {
        try c.seek(key)
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

/// One stored event, borrowed and not yet decoded: its seq, time and key fields, and its record body.
///
/// The body borrows the store's memory map. In a read transaction (``Store/read(_:)``) LMDB reuses no page a
/// reader's snapshot holds, so a record copied out of a scan callback stays valid until that transaction ends
/// (the query layer collects many sessions' records this way before reading them); anywhere else, treat it as
/// valid only inside the callback that received it (``Snapshot/forEachRecord(onboarding:screens:time:_:)``).
///
/// Decode what you read: ``fields()`` reads the few fields a session fold needs (see `RecordFields` for what
/// it checks and skips), ``view()`` the whole record, validated.
public struct EventRecord {
    /// The event's arrival sequence number.
    public let seq: UInt64
    /// When the event happened, in microseconds since the epoch.
    public let timeMicroseconds: Int64
    /// The key's onboarding (``RecordFormat/noOnboarding`` for an event without `meta`) and screen index.
    public let keyOnboarding: StringID
    public let keyScreen: UInt16
    /// The record body (time, onboarding and screen are in the key). Borrowed from the read transaction.
    public let body: UnsafeRawBufferPointer
    /// Strings in the dictionary when the snapshot began: every id a record holds is below this.
    @usableFromInline let stringLimit: StringID

    @inlinable
    init(seq: UInt64, time: Int64, onboarding: StringID, screen: UInt16, body: UnsafeRawBufferPointer, stringLimit: StringID) {
        self.seq = seq
        timeMicroseconds = time
        keyOnboarding = onboarding
        keyScreen = screen
        self.body = body
        self.stringLimit = stringLimit
    }

    /// The fields the key carries: time, onboarding and screen index.
    @inlinable
    public var header: RecordHeader {
        RecordHeader(time: Timestamp(microseconds: timeMicroseconds), keyOnboarding: keyOnboarding, keyScreenIndex: keyScreen)
    }

    /// The fields of the record a session fold reads (up to `extent`), without decoding the rest.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` (carrying the `CodecError`) when a field it
    ///   reads is damaged. Damage in the fields it skips is not detected here (``view()`` and the store's
    ///   check find it).
    @inlinable @inline(__always)
    public func fields(_ extent: RecordFields.Extent = .all) throws -> RecordFields {
        do {
            return try RecordFields(body: body, header: header, stringLimit: stringLimit, extent: extent)
        } catch {
            throw corrupt(error)
        }
    }

    /// The whole record, decoded and validated, as a scan by ``Snapshot/forEachEvent(onboarding:screens:time:_:)`` hands it out.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` (carrying the `CodecError`) when the record does not decode.
    public func view() throws -> EventView {
        do {
            return EventView(seq: seq, record: try RecordView(body: body, header: header, stringLimit: stringLimit))
        } catch {
            throw corrupt(error)
        }
    }

    @usableFromInline
    func corrupt(_ error: CodecError) -> StoreError {
        StoreError(.corrupt, "event seq \(seq) (onboarding \(keyOnboarding), screen \(keyScreen)) does not decode",
                   underlying: storedRecordError(error))
    }
}

/// The events of one block that a scan hands out next, in (time, seq) order (``Snapshot/forEachRun(onboarding:screens:time:_:)``):
/// read them with ``next()``. Valid only inside the scan callback that received it.
public struct EventRun {
    @usableFromInline var reader: EventBlockReader
    @usableFromInline let blockSeq: UInt64
    @usableFromInline let onboarding: StringID
    @usableFromInline let screen: UInt16
    /// The scan's time range `lo..<hi` (no upper bound unless `bounded`).
    @usableFromInline let lo: Int64
    @usableFromInline let hi: Int64
    @usableFromInline let bounded: Bool
    /// The run ends before the first event at or after (boundTime, boundSeq): another block's.
    @usableFromInline let boundTime: Int64
    @usableFromInline let boundSeq: UInt64
    @usableFromInline let stringLimit: StringID
    /// Whether the reader's current event has not been handed out yet (true at the start of a run).
    @usableFromInline var pending = true
    /// The block has no events left.
    @usableFromInline var blockDone = false
    /// An event at or past the range's end was reached: the scan of the group is over.
    @usableFromInline var pastEnd = false
    /// The run is over (the next event belongs to another run, the block ended, or the range did).
    @usableFromInline var ended = false

    @usableFromInline
    init(reader: EventBlockReader, blockSeq: UInt64, onboarding: StringID, screen: UInt16, lo: Int64, hi: Int64,
         bounded: Bool, boundTime: Int64, boundSeq: UInt64, stringLimit: StringID) {
        self.reader = reader
        self.blockSeq = blockSeq
        self.onboarding = onboarding
        self.screen = screen
        self.lo = lo
        self.hi = hi
        self.bounded = bounded
        self.boundTime = boundTime
        self.boundSeq = boundSeq
        self.stringLimit = stringLimit
    }

    /// The run's next event in the scan's time range, or `nil` at the end of the run.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` when the block does not decode.
    @inlinable @inline(__always)
    public mutating func next() throws -> EventRecord? {
        while !ended {
            if !pending {
                let more: Bool
                do throws(CodecError) {
                    more = try reader.next()
                } catch {
                    throw StoreError(.corrupt, "the block at seq \(blockSeq) (onboarding \(onboarding), screen \(screen)) does not decode",
                                     underlying: error)
                }
                guard more else {
                    blockDone = true
                    ended = true
                    return nil
                }
                // The next event belongs to another run when it does not come before the bound.
                guard reader.time < boundTime || (reader.time == boundTime && reader.seq < boundSeq) else {
                    ended = true
                    return nil
                }
            }
            pending = false
            let t = reader.time
            if bounded && t >= hi {
                pastEnd = true
                ended = true
                return nil
            }
            if t >= lo {
                return EventRecord(seq: reader.seq, time: t, onboarding: onboarding, screen: screen, body: reader.body,
                                   stringLimit: stringLimit)
            }
        }
        return nil
    }
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
    /// Distinct sessions, explicit and inferred; a session with events in several onboardings (or also
    /// without a position) counts once.
    public var sessions: Int
    /// Sessions the store inferred for events that had none.
    public var inferredSessions: Int
    /// Distinct onboardings (events without `meta` are not under any).
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
