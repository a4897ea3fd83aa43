import BoardwalkCodec
import BoardwalkModel
import BoardwalkStoreFormat

extension WriterState {
    /// `event_log`: the batch's events in blocks, in (group, time, seq) order, appended under (first seq of the
    /// batch ‖ block key) (docs/storage.md, "How an append writes"). Blocks are cut where a group's run spans
    /// ``Layout/blockSpan`` or would pass the target size; nothing stored is read or rewritten. Every block written
    /// is listed for `batches`. The fold (``foldEventLog(_:batches:)``) later moves them into `events`.
    func writeEvents(_ txn: Transaction, firstSeq: UInt64) throws {
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
                var noHeads: Cursor? = nil
                try writeBlocks(&c, heads: &noHeads, bodies: bodies, logBatch: firstSeq, batchOfEntry: nil)
            }
        }
    }

    /// Writes ``entries`` in ``order`` as blocks: to the event log under `logBatch` (new blocks only, appended),
    /// or, for a fold (`logBatch == nil`), to `events`, where a group's run first grows the group's newest stored
    /// block (its last key) when the run's first event sorts after that block's last event, less than
    /// ``Layout/blockSpan`` after its first, and fits under the target size; the block is rewritten under the same
    /// key. Otherwise, and past that block, new blocks start, split where a run spans ``Layout/blockSpan`` or would
    /// pass the target size (two overflow pages, so that a sealed block fills its pages). A block put in `events` has its
    /// head put under the same key through `heads` (`block_heads`). Every block written is
    /// listed in ``blockKeys``, and for a fold with the logged batches (`batchOfEntry`: per entry, the index of
    /// its batch in the log) whose events it took in ``foldMasks``; blocks of a group are written in key order, so
    /// consecutive puts land on the same pages.
    func writeBlocks(
        _ c: inout Cursor, heads: inout Cursor?, bodies: UnsafeRawBufferPointer, logBatch: UInt64?,
        batchOfEntry: [UInt8]?
    ) throws {
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
            if open
                && (newGroup || time &- builder.firstTime >= Layout.blockSpan
                    || WriterState.exceeds(
                        builder, time: time, seq: e.seq, body: UnsafeRawBufferPointer(rebasing: bodies[e.body]),
                        target: blockTarget))
            {
                try putBlock(&c, &heads, blockKey, builder, logBatch: logBatch, &blockKeys, &tails)
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
                        known.bytes == tail.bytes
                    {
                        try builder.resume(
                            tail.value, firstTime: firstTime, firstSeq: tail.key.seq, lastSeq: known.lastSeq,
                            checksumSeed: tail.key.checksumSeed)
                    } else {
                        try builder.resume(
                            tail.value, firstTime: firstTime, firstSeq: tail.key.seq,
                            checksumSeed: tail.key.checksumSeed)
                    }
                    if builder.canAppend(time: time, seq: e.seq),
                        builder.byteCount(
                            appending: time, seq: e.seq, body: UnsafeRawBufferPointer(rebasing: bodies[e.body]))
                            <= blockTarget
                    {
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
            try putBlock(&c, &heads, blockKey, builder, logBatch: logBatch, &blockKeys, &tails)
            if grow { masks.append(mask) }
        }
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

    /// Whether appending an event (time, seq, `body`) would take `builder`'s block past `target` bytes. An event adds
    /// at most 25 bytes besides its body (three varints) and to the header's kind counts 2 (up to 8 for an unknown
    /// analytics name new to the block, within the 40 bytes the bound allows the header's varints), and
    /// ``EventBlockBuilder/byteCountBound`` counts the longest header, so a block that far below the target needs
    /// no exact count: the exact one (about 100 instructions) runs only for the last few events of a block. The
    /// bound reads two fields; the exact `byteCount` it replaced here summed four varint sizes, ~47 instructions
    /// per event with 100 000 sessions in flight.
    @inline(__always)
    static func exceeds(
        _ builder: EventBlockBuilder, time: Int64, seq: UInt64, body: UnsafeRawBufferPointer, target: Int
    ) -> Bool {
        if builder.byteCountBound &+ body.count &+ 27 <= target { return false }
        return builder.byteCount(appending: time, seq: seq, body: body) > target
    }

    /// The newest block of a group (the last key of its range), if it has one: its key, value and last
    /// event's time. The value points into the map and is valid until the next write.
    private func groupTail(_ c: inout Cursor, onboarding: UInt32, screen: UInt16) throws
        -> (key: EventKey, value: UnsafeRawBufferPointer, bytes: Int, lastTime: Int64)?
    {
        let found = try lastBlock(&c, of: UInt64(onboarding) << 16 | UInt64(screen))
        guard found, let key = EventKey(c.key), key.onboarding == onboarding, key.screen == screen else { return nil }
        // The header alone gives the last time; a damaged header means no growing.
        guard
            let header = try? EventBlockReader(
                c.value, firstTime: Layout.time(fromBits: key.timeBits), firstSeq: key.seq,
                checksumSeed: key.checksumSeed)
        else {
            return nil
        }
        return (key, c.value, c.value.count, header.lastTime)
    }

    /// Puts a finished block under `key` (in the event log under `logBatch`, appended, when it is set; else in
    /// `events`, and its head in `block_heads` through `heads`) and notes its key and its group's latest time.
    private func putBlock(
        _ c: inout Cursor, _ heads: inout Cursor?, _ key: EventKey, _ builder: EventBlockBuilder, logBatch: UInt64?,
        _ blockKeys: inout [EventKey], _ tails: inout GroupCaches
    ) throws {
        let group = UInt64(key.onboarding) << 16 | UInt64(key.screen)
        if let logBatch {
            key.write(to: scratch, batch: logBatch)
            let appended = try builder.withBlock(checksumSeed: key.checksumSeed) { block in
                try c.put(
                    UnsafeRawBufferPointer(start: scratch, count: Layout.eventLogKeySize), block, flags: PutFlags.append
                )
            }
            guard appended else {
                throw StoreError(.corrupt, "event_log already has entries past the batch at seq \(logBatch)")
            }
        } else {
            key.write(to: scratch)
            let head = builder.headerSize
            try builder.withBlock(checksumSeed: key.checksumSeed) { block in
                let key = UnsafeRawBufferPointer(start: scratch, count: Layout.eventKeySize)
                _ = try c.put(key, block)
                // The block's head beside it, for reads of headers alone (docs/storage.md, "Block head").
                _ = try heads?.put(key, UnsafeRawBufferPointer(rebasing: block[..<head]))
            }
            // Blocks of a group are put in key order, so the last one put is the group's newest.
            tails.pendingBlockTails[group] = BlockTail(
                key: key, bytes: builder.byteCount, lastSeq: builder.lastEventSeq)
        }
        blockKeys.append(key)
        let last = Layout.timeBits(builder.lastTime)
        // Only a known latest time is raised. An unknown one stays unknown (`latestTime(of:)` reads the store
        // when a duplicate check needs it): taken as 0 here, a block of old events would become the group's
        // "latest", and newer resent events would skip the lookup and be stored twice.
        if let known = tails.pendingGroupMax[group] ?? tails.groupMax[group], last > known {
            tails.pendingGroupMax[group] = last
        }
    }
}
