import BoardwalkCodec
import BoardwalkModel
import BoardwalkStoreFormat

#if canImport(Glibc)
    import Glibc
#endif

// Reading blocks rather than events: a block's key gives its group and first time, its header the number of
// events and the time span, so a count over the blocks that lie inside a time range needs no record at all.

extension Snapshot {
    /// Checks the checksum of every block of `events` and of the event log, without decoding their events.
    ///
    /// What ``Store/backup(to:)`` runs before it copies, so that a copy is never taken silently of changed bytes.
    /// - Returns: the number of blocks checked.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` for the first block whose key or checksum is wrong
    ///   (its message says where: seq, onboarding, screen and the time of its first event).
    /// - Complexity: O(bytes of the blocks), about 0.05 ns a byte, and a cursor step per block.
    package func checkBlockChecksums() throws -> Int {
        var blocks = 0
        try withBlockCursor { c in
            var found = try c.first()
            while found {
                _ = try blockReader(try decodeBlockKey(c.key), c.value)
                blocks += 1
                found = try c.next()
            }
        }
        return blocks
    }

    /// Calls `body` for each stored block that can hold an event of a scan's range, in key order
    /// (onboarding, screen index, first time, first seq), without decoding any record.
    ///
    /// The blocks visited are those ``forEachRun(onboarding:screens:time:_:)`` would read, minus the ones
    /// whose header shows they end before the range starts: per screen (per group when `onboarding` is `nil`),
    /// a seek to the first block that can hold an event of the time range, then every block until one starts at
    /// or after its end. Blocks of one group may overlap in time (a late batch, two importers); each is handed
    /// out on its own, so a caller that counts adds their counts (nothing is merged). A block partly inside the
    /// range can be read for its events' times and seqs only (``StoredBlock/next()``).
    ///
    /// The headers of `events` come from `block_heads` (each block's bytes up to its first event, kept apart), so a
    /// count from headers reads one dense tree and no page of events; ``StoredBlock/next()`` then looks the block up
    /// in `events` by its key.
    ///
    /// What it checks: each key's size, each block's header and the header's own checksum (``EventBlockHeader``): a
    /// count taken from ``StoredBlock/count`` or its kind counts is that of an unchanged header, whatever happened to
    /// the events behind it, which are checked (the whole block's checksum) only when ``StoredBlock/next()`` reads
    /// them. A snapshot that reads around damage (``readingAroundDamage(_:)``) checks every block whole instead, and
    /// skips a damaged one as its other reads do. No record body is decoded (a block written wrong, checksums and
    /// all, is what only `Store.check()` finds).
    /// Return `false` from `body` to stop. The block is valid only inside `body`.
    /// - Parameters:
    ///   - onboarding: an onboarding id; `nil` visits the whole store, events without a position included;
    ///     ``RecordFormat/noOnboarding`` the events without a position.
    ///   - screens: screen indexes to include (ignored when `onboarding` is `nil`).
    ///   - time: the half-open time range.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` for a key or block header that does not decode,
    ///   and whatever `body` throws.
    /// - Complexity: O(log N) per group visited, plus O(header) per block visited (about 30 bytes of `block_heads`), and
    ///   O(log N) more per block whose events are read.
    package func forEachBlock(
        onboarding: StringID?, screens: ClosedRange<Int>? = nil, time: Range<Timestamp>? = nil,
        _ body: (inout StoredBlock) throws -> Bool
    ) throws {
        let range = TimeRange(time)
        if onboarding != nil, let screens, screens.upperBound < 0 || screens.lowerBound > Int(UInt16.max) { return }
        let firstScreen = onboarding == nil ? 0 : UInt16(clamping: screens?.lowerBound ?? 0)
        let lastScreen = onboarding == nil ? UInt16.max : UInt16(clamping: screens?.upperBound ?? Int(UInt16.max))
        // The folded blocks' headers come from `block_heads`, which holds nothing else, so that a count from headers
        // reads none of the events' pages; a snapshot reading around damage checks every block whole instead.
        let fromHeads = damaged == nil
        try withBlockCursor(heads: fromHeads) { c in
            func seek(_ key: EventKey) throws -> Bool { try c.seek(key) }
            var found = try seek(
                EventKey(onboarding: onboarding ?? 0, screen: firstScreen, timeBits: range.seekBits, seq: 0))
            while found {
                let key = try decodeBlockKey(c.key)
                if let onboarding, key.onboarding != onboarding || key.screen > lastScreen { return }
                if key.timeBits < range.seekBits {
                    // A group's blocks that start more than a block span before the range hold none of its events.
                    found = try seek(
                        EventKey(onboarding: key.onboarding, screen: key.screen, timeBits: range.seekBits, seq: 0))
                    continue
                }
                if range.isPastEnd(Layout.time(fromBits: key.timeBits)) {
                    // This block and the group's later ones start past the range: on to the next group.
                    let group = UInt64(key.onboarding) << 16 | UInt64(key.screen)
                    if group == 0xFFFF_FFFF_FFFF || (onboarding != nil && key.screen == lastScreen) { return }
                    let next = group + 1
                    found = try seek(
                        EventKey(
                            onboarding: UInt32(truncatingIfNeeded: next >> 16),
                            screen: UInt16(truncatingIfNeeded: next),
                            timeBits: range.seekBits, seq: 0))
                    continue
                }
                // Reading around damage, each block is checked whole, so that the count of a damaged one is left out as
                // its events are by every other read; else the header alone (a folded block's from its head).
                let isHead = fromHeads && c.currentBatch == nil
                let reader = damaged == nil ? nil : try openBlock(key, c.value)
                guard
                    let header = damaged != nil
                        ? reader?.header : isHead ? try blockHead(key, c.value) : try blockHeader(key, c.value)
                else {
                    found = try c.next()
                    continue
                }
                if header.lastTime >= range.lo {
                    var block = StoredBlock(
                        key: key, header: header, value: isHead ? nil : c.value, reader: reader, lo: range.lo,
                        hi: range.hi, snapshot: self)
                    guard try body(&block) else { return }
                }
                found = try c.next()
            }
        }
    }
}

extension Snapshot {
    /// Calls `body` with the events of an onboarding's blocks in a time range, a block at a time in key order
    /// (screen, first time, first seq), **not merged**: where blocks of one group overlap in time (a late batch),
    /// their events come block by block, not in (time, seq) order. For folds that do not depend on the order of a
    /// group's events (each "first" and "last" kept with its (time, seq) position); anything else wants
    /// ``forEachRun(onboarding:screens:time:_:)``.
    ///
    /// The records of a run are valid only inside `body` (not until the transaction ends, as ``EventRecord`` says of
    /// other scans): a block may be read with `pread` into a buffer that the next block reuses. Which blocks are read
    /// that way: those whose 64 KiB windows of the map this process has not touched, unless the previous block of the
    /// scan lies in the same or the preceding window (neighbouring blocks, as in a compacted copy: a page fault maps
    /// them together), or the window was read once before (``MapWindows``). A block alone in its window costs one
    /// page fault through the map (about 4–5 µs here) and about 2 µs through `pread`. Blocks stored inside a leaf
    /// page (small ones) are read where that leaf was read. The `events` B-tree's own pages are read the same way
    /// (``LeafWalk``) in a read transaction whose map address is known; else through liblmdb's cursor.
    ///
    /// Return `false` from `body` to stop; events of a run it did not read are skipped.
    /// - Parameters:
    ///   - onboarding: an onboarding id, or ``RecordFormat/noOnboarding`` for the events without a position.
    ///   - screens: screen indexes to include (`nil`: all).
    ///   - time: the half-open time range to include.
    ///   - kinds: the kinds of events the caller reads: a block whose header counts none of them is stepped over
    ///     unread (``KindSelection``); `nil` reads every block.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` for a key or block that does not decode, or a block
    ///   that lies past the end of the file; ``StoreError/Kind/system`` with the `errno` of a `pread` that fails;
    ///   whatever `body` throws.
    /// - Complexity: O(log N) per screen, plus O(1) per block and per event read.
    package func forEachBlockRun(
        onboarding: StringID, screens: ClosedRange<Int>? = nil, time: Range<Timestamp>? = nil,
        wanting kinds: KindSelection? = nil, _ body: (inout EventRun) throws -> Bool
    ) throws {
        if let screens, screens.upperBound < 0 || screens.lowerBound > Int(UInt16.max) { return }
        let firstScreen = UInt16(clamping: screens?.lowerBound ?? 0)
        let lastScreen = UInt16(clamping: screens?.upperBound ?? Int(UInt16.max))
        let range = TimeRange(time)
        let hi = range.hi ?? .max, bounded = range.hi != nil, limit = stringCount
        var fetcher = BlockFetcher(file: txn.file, pageSize: txn.pageSize)
        defer { fetcher.release() }
        func scan<Entries: BlockEntries>(_ c: inout Entries, _ heads: inout HeadFollower?) throws {
            func seek(_ key: EventKey) throws -> Bool { try key.withBytes { try c.seek($0) } }
            var found = try seek(
                EventKey(onboarding: onboarding, screen: firstScreen, timeBits: range.seekBits, seq: 0))
            while found {
                let key = try decodeBlockKey(c.key)
                if key.onboarding != onboarding || key.screen > lastScreen { return }
                if key.timeBits < range.seekBits {
                    found = try seek(
                        EventKey(onboarding: onboarding, screen: key.screen, timeBits: range.seekBits, seq: 0))
                    continue
                }
                if range.isPastEnd(Layout.time(fromBits: key.timeBits)) {
                    // This block and the group's later ones start past the range: on to the next screen.
                    if key.screen >= lastScreen { return }
                    found = try seek(
                        EventKey(onboarding: onboarding, screen: key.screen + 1, timeBits: range.seekBits, seq: 0))
                    continue
                }
                // A folded block is selected from its head, none of its pages read; one of the event log (no head)
                // from its own header.
                let byHead = try kinds?.admits(key, c.key, heads: &heads, stringLimit: limit)
                if byHead == false {
                    found = try c.next()
                    continue
                }
                let bytes = try fetcher.bytes(c.value)
                guard byHead == true || kinds?.admits(key, bytes, stringLimit: limit) ?? true,
                    var reader = try openBlock(key, bytes)
                else {
                    found = try c.next()
                    continue
                }
                if reader.lastTime >= range.lo, try advance(&reader, key) {
                    var run = EventRun(
                        reader: reader, blockSeq: key.seq, onboarding: onboarding, screen: key.screen,
                        lo: range.lo, hi: hi, bounded: bounded, boundTime: .max, boundSeq: .max, stringLimit: limit)
                    guard try body(&run) else { return }
                }
                found = try c.next()
            }
        }
        // The B-tree's own pages too are read with `pread` where a fault would map nothing else (a read transaction
        // with the map's address known); else through liblmdb's cursor.
        let logBatches = try eventLogBatches()
        try withHeads(following: kinds) { heads in
            if logBatches.isEmpty, var walk = try LeafWalk(txn, dbs.events) {
                defer { walk.release() }
                try scan(&walk, &heads)
            } else {
                try txn.withBlockCursor(dbs, logBatches: logBatches) { c in try scan(&c, &heads) }
            }
        }
    }
}

extension Snapshot {
    /// Runs `body` with a ``HeadFollower`` on `block_heads` when a scan selects blocks by kind (`kinds`), unless the
    /// snapshot reads around damage (which checks every block whole); else with `nil`.
    func withHeads<R>(following kinds: KindSelection?, _ body: (inout HeadFollower?) throws -> R) throws -> R {
        guard kinds != nil, damaged == nil else {
            var none: HeadFollower? = nil
            return try body(&none)
        }
        return try txn.withCursor(dbs.blockHeads) { cursor in
            var heads: HeadFollower? = HeadFollower(cursor)
            return try body(&heads)
        }
    }
}
