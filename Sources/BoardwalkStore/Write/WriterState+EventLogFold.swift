import BoardwalkCodec
import BoardwalkModel

#if canImport(Glibc)
    import Glibc
#endif

extension WriterState {
    /// Whether the event log, with this batch's blocks in it, is due for a fold (``EventLogLimits``).
    func eventLogIsFull(_ txn: Transaction, batches: Int) throws -> Bool {
        // The fold marks each block with the logged batches it took events from in a 64-bit mask.
        if batches >= min(eventLogLimits.batches, 64) { return true }
        return try txn.pages(dbs.eventLog) * txn.pageSize >= eventLogLimits.bytes
    }

    /// Moves every block of the event log into `events` (docs/storage.md, "How an append writes"), a group at a time:
    /// the log's batches are read through one merged cursor in block-key order, so each group's blocks come together;
    /// their records are copied out (never decoded: body bytes behind their time and seq), put in (time, seq) order,
    /// and grow the group's newest block or start new ones
    /// (``writeBlocks(_:bodies:logBatch:batchOfEntry:)``). Then each logged batch's `batches` entries are written
    /// again to list the `events` blocks that took its events, and the log is emptied. Memory: one group's events.
    ///
    /// `batches` may be the log's oldest batches rather than all of them (``foldStep(_:batches:)``): their blocks are
    /// then deleted from the log one by one and the later batches stay in it.
    /// - Throws: ``StoreError/Kind/corrupt`` when a log block does not decode or holds a seq outside its batch (nothing
    ///   is folded: the append fails, as folding past it would lose events).
    /// - Complexity: O(n log k) for the n logged events of k batches, plus a seek per batch and per group (to its
    ///   newest block) and one put per block written.
    func foldEventLog(_ txn: Transaction, batches: [UInt64]) throws {
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
                guard try key.withUnsafeBytes({ try c.seek($0) }), c.key.count == Layout.batchKeySize,
                    c.key.be64(0) == batch,
                    c.value.count >= 4
                else {
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
            var heads: Cursor? = try txn.openCursor(dbs.blockHeads)
            defer { heads?.close() }
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
                            throw StoreError(
                                .corrupt,
                                "event_log: the block at seq \(key.seq) of the batch at seq \(batch) holds seq "
                                    + "\(block.seq), outside its batch; the store is damaged, and nothing can be appended "
                                    + "until it is repaired (`boardwalk export --salvage`)")
                        }
                        let start = bodies.count
                        bodies.append(contentsOf: block.body)
                        group.append(
                            Entry(
                                onboarding: key.onboarding, screen: key.screen, session: 0, totalScreens: 0,
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
                    try bodies.withUnsafeBytes { b in
                        try writeBlocks(&events, heads: &heads, bodies: b, logBatch: nil, batchOfEntry: batchOfEntry)
                    }
                }
                keys.append(contentsOf: blockKeys)
                masks.append(contentsOf: foldMasks)
                // The puts may have moved the pages under the log's cursors' current values: position them again.
                if let next { found = try c.seek(next) }
            }
        }
        // The folded batches' `batches` entries, written again with the `events` blocks that hold their events
        // (they are the last entries of `batches` when the whole log is folded; else later logged batches' follow).
        let whole = try EventLog.batches(txn, dbs) == batches
        try txn.withCursor(dbs.batches) { c in
            var key = [UInt8](repeating: 0, count: Layout.batchKeySize)
            key.withUnsafeMutableBytes { $0.baseAddress!.storeBE(batches[0], at: 0) }
            while try key.withUnsafeBytes({ try c.seek($0) }) {
                if !whole, c.key.count == Layout.batchKeySize, c.key.be64(0) > batches[batches.count - 1] { break }
                // Every entry from the log's first batch on is a logged batch's (a batch without events writes none).
                guard c.key.count == Layout.batchKeySize, batches.contains(c.key.be64(0)) else {
                    throw StoreError(
                        .corrupt,
                        "batches: an entry past the event log's first batch (seq \(batches[0])) "
                            + "belongs to no logged batch; the store is damaged (`boardwalk check` says more)")
                }
                try c.delete()
            }
        }
        for (index, batch) in batches.enumerated() {
            var own: [EventKey] = []
            for (i, mask) in masks.enumerated() where mask & (1 << UInt64(index)) != 0 { own.append(keys[i]) }
            try putBatchEntries(txn, firstSeq: batch, count: UInt32(counts[index]), keys: own, appending: whole)
        }
        if whole {
            try txn.empty(dbs.eventLog)
        } else {
            // The folded batches' blocks, the first keys of the log (its keys begin with their batch's seq).
            try txn.withCursor(dbs.eventLog) { c in
                while try c.first(), c.key.count >= 8, c.key.be64(0) <= batches[batches.count - 1] { try c.delete() }
            }
        }
    }

    /// How many of the log's oldest batches this fold takes: all of them, unless the process's address-space limit
    /// (`ulimit -v`, `RLIMIT_AS`) leaves less room than folding them would take. A fold copies a group's records out
    /// and LMDB keeps every page it writes in memory until the commit, so it needs about four times the log's bytes;
    /// under a tight limit a few batches are folded per append instead (the log then stays near its limit, and each
    /// append folds a few more).
    /// - Throws: ``StoreError/Kind/system`` (`ENOMEM`) when there is not room for even one batch: the append is
    ///   refused whole, before the fold writes anything, with a message that names the limit.
    func foldStep(_ txn: Transaction, batches: [UInt64]) throws -> Int {
        guard let room = addressSpaceRoom(), batches.count > 0 else { return batches.count }
        let logBytes = try txn.pages(dbs.eventLog) * txn.pageSize
        let perBatch = max(1, 4 * logBytes / batches.count)
        let step = min(batches.count, room / perBatch)
        guard step >= 1 else {
            throw StoreError.system(
                ENOMEM,
                context:
                    "folding the event log needs about \(max(1, perBatch >> 20)) MiB of address space for one batch, "
                    + "and the limit of this process (ulimit -v) leaves \(room >> 20) MiB beside what the process "
                    + "holds; raise the limit: nothing of this batch is stored, and what was stored before is intact")
        }
        return step
    }

    /// The bytes of address space left under `RLIMIT_AS`, less a margin for the rest of the process; `nil` when
    /// there is no limit (or it cannot be read).
    func addressSpaceRoom() -> Int? {
        if let override = WriterState.addressSpaceRoomOverride { return override }
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_AS.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max
        else { return nil }
        // /proc/self/statm: the process's size in pages first.
        let fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var text = [UInt8](repeating: 0, count: 128)
        let n = text.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard n > 0, let pages = Int(String(decoding: text.prefix(n).prefix { $0 != 0x20 }, as: UTF8.self)) else {
            return nil
        }
        let used = pages * Int(sysconf(Int32(_SC_PAGESIZE)))
        // Room for the rest of the batch (its session log, strings and counters): 8 MiB.
        let margin = 8 << 20
        return max(0, Int(clamping: limit.rlim_cur) - used - margin)
    }
}
