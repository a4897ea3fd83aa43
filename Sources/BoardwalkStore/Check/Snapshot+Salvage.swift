import BoardwalkCodec
import BoardwalkModel
import BoardwalkStoreFormat

/// What a salvage could not read (``Store/salvageEvents(_:damaged:)``).
public struct SalvageDamage: Sendable, CustomStringConvertible {
    /// How much of the store the damage cost.
    public enum Extent: Sendable, Equatable {
        /// One event: its record, or a string it names, does not decode. The rest of its block was read.
        case event(seq: UInt64)
        /// The rest of a block, after its first `eventsRead` events (handed out, or skipped one by one as
        /// ``event(seq:)``): its header or the framing of its events does not decode, so nothing past the damage
        /// can be found.
        case block(firstSeq: UInt64, eventsRead: Int)
        /// Nothing: every event of the block was read (`eventsRead`, as many as its header says), but its end does
        /// not check (its length, last time or seq range). Its events were handed out, unverified: the damage
        /// that broke the end may have changed one of them.
        case blockEnd(firstSeq: UInt64, eventsRead: Int)
        /// A block whole: its `events` key has the wrong size, so its value cannot be placed.
        case key
        /// What one of LMDB's pages of `database` held (`page`; for a value on overflow pages, the run's first page):
        /// the page is damaged, or lies past the end of a file cut short (`pastEnd`), so what is on it, and below it
        /// for a branch page, was not read through the tree. The error names the kind of page and the keys it stood
        /// for (for `events`, the onboarding, screen and time of the first and the next block). `recoveredBlocks` of
        /// those keys were read from leaf pages the tree did not reach (``SalvageSummary/recoveredBlocks``).
        case page(database: String, page: UInt64, pastEnd: Bool, recoveredBlocks: Int)
    }

    /// How much was lost.
    public let extent: Extent
    /// Why, naming the block's key (onboarding and screen ids, first seq) or the event's seq.
    public let error: StoreError

    /// Whether events were lost: all but ``Extent/blockEnd(firstSeq:eventsRead:)``.
    public var lostEvents: Bool {
        if case .blockEnd = extent { return false }
        return true
    }

    /// What was lost, and the error that cost it.
    public var description: String {
        func events(_ n: Int) -> String { "\(n) event\(n == 1 ? "" : "s")" }
        switch extent {
        case .event: return "one event: \(error)"
        case .block(_, let read): return "the rest of a block, after its first \(events(read)): \(error)"
        case .blockEnd(_, let read): return "a block whose end does not check, its \(events(read)) kept: \(error)"
        case .key: return "a whole block, under a damaged key: \(error)"
        case .page(let database, let page, _, let recovered):
            let found = recovered > 0 ? " (\(recovered) of its blocks found on other pages)" : ""
            return "what LMDB page \(page) of \(database) held\(found): \(error)"
        }
    }
}

extension Store {
    /// Calls `body` with every stored event that can still be read, and `damaged` for every part of `events` that
    /// cannot: the salvage of a damaged store (`boardwalk export --salvage`).
    ///
    /// The other reads stop at the first damaged block or record, as a query must: its answer would be wrong. This
    /// one walks `events` block by block in key order (onboarding, screen, then the block's first time), then
    /// `event_log` (the batches not yet folded) batch by batch in the same order, and goes on past damage: a record or
    /// a string that does not decode costs its event, a block whose framing does not decode costs the rest of that
    /// block, a key of the wrong size its block. It reads neither `batches` nor the session index, so their damage
    /// costs nothing here; a string that cannot be resolved (a damaged `strings` chunk) costs the events that name it.
    ///
    /// LMDB's own pages of the databases it reads (`events`, `event_log`, `strings`, `meta`) are checked first, in the
    /// same snapshot, as ``check()`` does for all of them: liblmdb trusts them, and a cursor over a damaged page can
    /// crash the process. When they are sound the databases are read through liblmdb; when not, the snapshot's trees
    /// are read from the file page by page instead, going on past every page that fails the checks: what such a page
    /// held is reported (``SalvageDamage/Extent/page(database:page:pastEnd:recoveredBlocks:)``), and the blocks below
    /// a damaged branch page are found on the leaf pages that no walk reached (``SalvageSummary``).
    ///
    /// Events come in block order: those of `events` by onboarding and screen, and within a group block by block,
    /// which is time order except where late arrivals made blocks that overlap in time; then those of the event log
    /// (the batches since its last fold), batch by batch in the same order; then those found outside the trees. Each
    /// event comes once. Return `false` from `body` or `damaged` to stop. Runs in one read transaction, concurrently
    /// with writers.
    /// - Returns: the store's own count of its events, and whether and what the salvage read from pages.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` when the pages could not be checked, with writers
    ///   committing faster than the check reads; what `body` or `damaged` throws. Damage is reported through
    ///   `damaged`, never thrown.
    /// - Complexity: O(pages of the file) for the page check, then O(N): every block is read once; O(pages of the
    ///   file) again when pages are damaged.
    @discardableResult
    public func salvageEvents(_ body: (StoredEvent) throws -> Bool, damaged: (SalvageDamage) throws -> Bool) throws
        -> SalvageSummary
    {
        // The page check and the walk in one snapshot: the pages checked are the pages read.
        let salvaged: SalvageSummary? = try readRetryingPagesMoved { snapshot in
            let trees: Set<String> = [Layout.events, Layout.eventLog, Layout.strings, Layout.meta]
            if try !snapshot.txn.checkPages(trees: trees).isEmpty {
                return try snapshot.salvageFromPages(body, damaged: damaged)
            }
            try snapshot.salvageEvents(body, damaged: damaged)
            return SalvageSummary(storedEvents: try? snapshot.txn.getUInt64(snapshot.dbs.meta, Layout.metaEvents))
        }
        guard let salvaged else {
            throw StoreError(
                .corrupt,
                "LMDB's pages could not be checked before the salvage: another process committed "
                    + "faster than the check could read them, 100 times; try again when appends pause")
        }
        return salvaged
    }
}

extension Snapshot {
    /// ``Store/salvageEvents(_:damaged:)`` on pages already checked.
    func salvageEvents(_ body: (StoredEvent) throws -> Bool, damaged: (SalvageDamage) throws -> Bool) throws {
        try txn.withCursor(dbs.events) { c in
            var found = try c.first()
            while found {
                if let key = EventKey(c.key) {
                    guard try salvageBlock(key, c.value, body, damaged) else { return }
                } else {
                    let error = StoreError(
                        .corrupt, "an events key is \(c.key.count) bytes, not \(Layout.eventKeySize)")
                    guard try damaged(SalvageDamage(extent: .key, error: error)) else { return }
                }
                found = try c.next()
            }
        }
        // Then the event log's blocks (the batches not yet folded into `events`), batch by batch.
        try txn.withCursor(dbs.eventLog) { c in
            var found = try c.first()
            while found {
                if let (_, key) = EventKey.logKey(c.key) {
                    guard try salvageBlock(key, c.value, body, damaged) else { return }
                } else {
                    guard try damaged(SalvageDamage(extent: .key, error: EventLog.badKey(c.key.count))) else { return }
                }
                found = try c.next()
            }
        }
    }

    /// The events of one block for ``salvageEvents(_:damaged:)``; `false` when a callback asked to stop.
    private func salvageBlock(
        _ key: EventKey, _ value: UnsafeRawBufferPointer, _ body: (StoredEvent) throws -> Bool,
        _ damaged: (SalvageDamage) throws -> Bool
    ) throws -> Bool {
        try forEachSalvagedEvent(key, value, naming: naming, damaged) { block in
            let stored: StoredEvent
            do {
                stored = try owned(try view(key, block))
            } catch let error as StoreError {
                return try damaged(SalvageDamage(extent: .event(seq: block.seq), error: naming(error)))
            }
            return try body(stored)
        }
    }
}

/// Walks the events of the block stored under `key` for a salvage, calling `event` with the reader on each; damage
/// that ends the walk (a header, a framing or a block end that does not check) goes to `damaged`, its error named by
/// `naming`, with how many events came before it. `false` when a callback asked to stop.
func forEachSalvagedEvent(
    _ key: EventKey, _ value: UnsafeRawBufferPointer, naming: (StoreError) -> StoreError,
    _ damaged: (SalvageDamage) throws -> Bool, _ event: (inout EventBlockReader) throws -> Bool
) throws -> Bool {
    var block: EventBlockReader
    do { block = try blockReader(key, value) } catch let error as StoreError {
        return try damaged(SalvageDamage(extent: .block(firstSeq: key.seq, eventsRead: 0), error: naming(error)))
    }
    while true {
        do {
            guard try advance(&block, key) else { return true }
        } catch let error as StoreError {
            // The reader checks the block's end after its last event: every event may have been read.
            let extent: SalvageDamage.Extent =
                block.index == block.count
                ? .blockEnd(firstSeq: key.seq, eventsRead: block.count)
                : .block(firstSeq: key.seq, eventsRead: block.index)
            return try damaged(SalvageDamage(extent: extent, error: naming(error)))
        }
        guard try event(&block) else { return false }
    }
}
