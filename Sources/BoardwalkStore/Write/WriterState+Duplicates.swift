import BoardwalkCodec
import BoardwalkModel
import BoardwalkStoreFormat

extension WriterState {
    /// What makes two events duplicates: group, time and event id, or for an event without an id, group, time and
    /// the hash of its record body (see docs/storage.md, "Duplicates").
    struct DuplicateKey: Hashable {
        /// onboarding << 16 | screen, with the id's kind in the top bits (1 string, 2 UUID, 3 uppercase UUID; 0 for
        /// the content of an event without an id).
        var group: UInt64
        var timeBits: UInt64
        var a: UInt64
        var b: UInt64

        /// The key of an event without an event id: `body` is its record body as it would be stored, with its
        /// session only when that was given (``RecordFormat/bodyWithoutSession(_:into:)``). The 128-bit hash is
        /// seeded per process (``WriterState/contentSeed``): which bodies collide cannot be known from outside.
        init(group: UInt64, timeBits: UInt64, content body: UnsafeRawBufferPointer, seed: (UInt64, UInt64)) {
            self.group = group
            self.timeBits = timeBits
            (a, b) = contentHash(body, seed: seed)
        }

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

    /// Whether a stored event has `key`'s group, time and event id (or content).
    ///
    /// Reads nothing when the event is later than every stored event of its group (live ingestion).
    /// Otherwise it loads, once per batch and group, the keys of the stored events in a time window
    /// starting at the event's time, from the blocks that can hold them: ids, and with `contents` the content keys
    /// of those without an id, for which `isInferred` tells which session ids the store inferred.
    func isStoredDuplicate(
        _ key: DuplicateKey, group: UInt64, txn: Transaction, contents: Bool, isInferred: (StringID) -> Bool
    ) throws -> Bool {
        guard key.timeBits <= (try latestTime(of: group, txn: txn)) else { return false }
        if let range = loadedRanges[group], range.contains(key.timeBits) { return storedIDs.contains(key) }
        // A window of a minute past the event: a resent batch covers seconds to minutes.
        let lo = key.timeBits
        let hi = lo > UInt64.max - 60_000_000 ? UInt64.max : lo + 60_000_000
        try loadStoredIDs(group: group, from: lo, through: hi, txn: txn, contents: contents, isInferred: isInferred)
        loadedRanges[group] = lo...hi
        return storedIDs.contains(key)
    }

    /// Adds to `storedIDs` the keys of the stored events of `group` with time bits in `lo...hi` (with `contents`,
    /// also those of the events without an id).
    private func loadStoredIDs(
        group: UInt64, from lo: UInt64, through hi: UInt64, txn: Transaction, contents: Bool,
        isInferred: (StringID) -> Bool
    ) throws {
        var stripped: [UInt8] = []
        let onboarding = UInt32(truncatingIfNeeded: group >> 16)
        let screen = UInt16(truncatingIfNeeded: group)
        let start = lo > UInt64(Layout.blockSpan - 1) ? lo - UInt64(Layout.blockSpan - 1) : 0
        try txn.withBlockCursor(dbs, logBatches: logBatches) { c in
            var found = try EventKey(onboarding: onboarding, screen: screen, timeBits: start, seq: 0).withBytes {
                try c.seek($0)
            }
            while found {
                let key = try decodeBlockKey(c.key)
                guard key.onboarding == onboarding, key.screen == screen, key.timeBits <= hi else { return }
                var block = try blockReader(key, c.value)
                if Layout.timeBits(block.lastTime) >= lo {
                    while try block.next() {
                        let bits = Layout.timeBits(block.time)
                        guard bits >= lo && bits <= hi else { continue }
                        let record = try recordView(key, block)
                        if let id = record.eventID {
                            storedIDs.insert(DuplicateKey(group: group, timeBits: bits, id: id))
                        } else if contents {
                            // The session the store inferred is compared as absent: the event arriving again has none.
                            let inferred = record.session.map(isInferred) ?? false
                            if inferred, try bodyWithoutSession(key, block, into: &stripped) {
                                let content = stripped.withUnsafeBytes {
                                    DuplicateKey(group: group, timeBits: bits, content: $0, seed: contentSeed)
                                }
                                storedIDs.insert(content)
                            } else {
                                storedIDs.insert(
                                    DuplicateKey(group: group, timeBits: bits, content: block.body, seed: contentSeed))
                            }
                        }
                    }
                }
                found = try c.next()
            }
        }
    }

    /// ``RecordFormat/bodyWithoutSession(_:into:)`` of `block`'s current event, its error as the store's.
    private func bodyWithoutSession(_ key: EventKey, _ block: EventBlockReader, into out: inout [UInt8]) throws -> Bool
    {
        do {
            return try RecordFormat.bodyWithoutSession(block.body, into: &out)
        } catch {
            throw undecodableRecord(seq: block.seq, onboarding: key.onboarding, screen: key.screen, error)
        }
    }

    /// Positions `c` (on `events`) at the newest block of `group` (onboarding ‖ screen) or, when the group
    /// has none, at the block before it; the caller checks the key. `false` when nothing is that early.
    func lastBlock<C: BlockSeeking>(_ c: inout C, of group: UInt64) throws -> Bool {
        // The group of events without meta sorts last of all: its newest block is the last entry.
        if group == 0xFFFF_FFFF_FFFF { return try c.last() }
        let after = group + 1
        return try EventKey(
            onboarding: UInt32(truncatingIfNeeded: after >> 16), screen: UInt16(truncatingIfNeeded: after),
            timeBits: 0, seq: 0
        ).withBytes { try c.last(below: $0) }
    }

    /// The latest stored event time (bits) of `group`, 0 when it has none: from this writer's cache, or
    /// found by reading the blocks of the group's last block span.
    func latestTime(of group: UInt64, txn: Transaction) throws -> UInt64 {
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
                if floor == nil {
                    floor = key.timeBits > UInt64(Layout.blockSpan) ? key.timeBits - UInt64(Layout.blockSpan) : 0
                }
                if key.timeBits < floor! { break }
                let block = try blockReader(key, c.value)
                latest = max(latest, Layout.timeBits(block.lastTime))
                found = try c.previous()
            }
        }
        groupMax[group] = latest
        return latest
    }
}
