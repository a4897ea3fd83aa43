import BoardwalkCodec
import BoardwalkModel

/// What a salvage could not read (``Snapshot/salvageEvents(_:damaged:)``).
public struct SalvageDamage: Sendable, CustomStringConvertible {
    /// How much of the store the damage cost.
    public enum Extent: Sendable, Equatable {
        /// One event: its record, or a string it names, does not decode. The rest of its block was read.
        case event(seq: UInt64)
        /// The rest of a block, after the `eventsRead` events of it that were handed out: its header or the
        /// framing of its events does not decode, so nothing past the damage can be found.
        case block(firstSeq: UInt64, eventsRead: Int)
        /// An `events` key of the wrong size: its value cannot be placed, and is skipped whole.
        case key
    }

    /// How much was skipped.
    public let extent: Extent
    /// Why, naming the block's key (onboarding and screen ids, first seq) or the event's seq.
    public let error: StoreError

    public var description: String {
        switch extent {
        case .event: return "skipped one event: \(error)"
        case .block(_, let read):
            return "skipped the rest of a block after \(read) event\(read == 1 ? "" : "s"): \(error)"
        case .key: return "skipped a block under a damaged key: \(error)"
        }
    }
}

extension Store {
    /// Calls `body` with every stored event that can still be read, and `damaged` for every part of `events` that
    /// cannot: the salvage of a damaged store (`boardwalk export --salvage`).
    ///
    /// The other reads stop at the first damaged block or record, as a query must: its answer would be wrong. This
    /// one walks `events` alone, block by block in key order (onboarding, screen, then the block's first time), and
    /// goes on past damage: a record or a string that does not decode costs its event, a block whose framing does not
    /// decode costs the rest of that block, a key of the wrong size its block. It reads neither `batches` nor the
    /// session index, so their damage costs nothing here; a string that cannot be resolved (a damaged `strings`
    /// chunk) costs the events that name it.
    ///
    /// LMDB's own pages are checked first, as ``check()`` does: liblmdb trusts them, and a cursor over a damaged
    /// page can crash the process. When they are damaged nothing is read and the call throws; what is left can then
    /// only be read with page-level tools (a backup copies the damage).
    ///
    /// Events come in block order: by onboarding and screen, and within a group block by block, which is time order
    /// except where late arrivals made blocks that overlap in time. Each event comes once. Return `false` from
    /// `body` or `damaged` to stop. Runs in one read transaction, concurrently with writers.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` when LMDB's pages are damaged, and what `body` or
    ///   `damaged` throws. Damage to Boardwalk's values is reported through `damaged`, never thrown.
    /// - Complexity: O(pages of the file) for the page check, then O(N): every block is read once.
    public func salvageEvents(_ body: (StoredEvent) throws -> Bool, damaged: (SalvageDamage) throws -> Bool) throws {
        let problems = try pageProblems()
        if !problems.isEmpty {
            throw StoreError(.corrupt, "LMDB's pages are damaged, so no cursor can walk them safely: "
                             + problems.joined(separator: "; "))
        }
        try read { snapshot in try snapshot.salvageEvents(body, damaged: damaged) }
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
                    let error = StoreError(.corrupt, "an events key is \(c.key.count) bytes, not \(Layout.eventKeySize)")
                    guard try damaged(SalvageDamage(extent: .key, error: error)) else { return }
                }
                found = try c.next()
            }
        }
    }

    /// The events of one block for ``salvageEvents(_:damaged:)``; `false` when a callback asked to stop.
    private func salvageBlock(_ key: EventKey, _ value: UnsafeRawBufferPointer, _ body: (StoredEvent) throws -> Bool,
                              _ damaged: (SalvageDamage) throws -> Bool) throws -> Bool {
        var read = 0
        var block: EventBlockReader
        do { block = try blockReader(key, value) } catch let error as StoreError {
            return try damaged(SalvageDamage(extent: .block(firstSeq: key.seq, eventsRead: 0), error: error))
        }
        while true {
            do {
                guard try advance(&block, key) else { return true }
            } catch let error as StoreError {
                return try damaged(SalvageDamage(extent: .block(firstSeq: key.seq, eventsRead: read), error: error))
            }
            let stored: StoredEvent
            do {
                stored = try owned(try view(key, block))
            } catch let error as StoreError {
                guard try damaged(SalvageDamage(extent: .event(seq: block.seq), error: error)) else { return false }
                continue
            }
            read += 1
            guard try body(stored) else { return false }
        }
    }
}
