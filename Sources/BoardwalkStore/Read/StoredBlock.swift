import BoardwalkCodec
import BoardwalkModel
import BoardwalkStoreFormat

#if canImport(Glibc)
    import Glibc
#endif

/// One stored block as ``Snapshot/forEachBlock(onboarding:screens:time:_:)`` hands it out: its group and the
/// counts of its header, and its events' times and seqs on demand. Valid only inside the callback.
///
/// The header is read and checked on its own (its checksum, not the block's), from the block's head in `block_heads`
/// for a folded block, so a caller that uses only the header touches none of the events' bytes; the first ``next()``
/// looks the block up in `events` and checks it whole, as every read of events does.
package struct StoredBlock {
    let key: EventKey
    let header: EventBlockHeader
    /// The block's bytes (`nil` when the header came from its head: ``next()`` looks them up), and the reader over its
    /// events once opened: by ``next()``, or before for a snapshot that reads around damage (which checks every block
    /// whole and skips the damaged ones).
    let value: UnsafeRawBufferPointer?
    var reader: EventBlockReader?
    /// Where ``next()`` looks up a block whose header came from its head.
    let txn: Transaction
    let events: Database
    /// The scan's time range `lo..<hi` (`hi == nil`: no upper bound).
    let lo: Int64
    let hi: Int64?
    /// An event at or past `hi` was reached: no later event of the block is in the range.
    var pastEnd = false
    /// Strings in the dictionary when the snapshot began (for ``record`` and the names of kind counts).
    let stringLimit: StringID

    /// A block whose `header` was read on its own (from its head when `value` is `nil`), or whose `reader` was opened
    /// already (the whole block checked).
    init(
        key: EventKey, header: EventBlockHeader, value: UnsafeRawBufferPointer?, reader: EventBlockReader?, lo: Int64,
        hi: Int64?, snapshot: Snapshot
    ) {
        self.key = key
        self.header = header
        self.value = value
        self.reader = reader
        self.lo = lo
        self.hi = hi
        stringLimit = snapshot.stringCount
        txn = snapshot.txn
        events = snapshot.dbs.events
    }

    /// The interned onboarding of the block's group; `nil` for the events without a position.
    package var onboarding: StringID? { key.onboarding == RecordFormat.noOnboarding ? nil : key.onboarding }
    /// The screen index of the block's group; `nil` for the events without a position.
    package var screenIndex: Int? { key.onboarding == RecordFormat.noOnboarding ? nil : Int(key.screen) }
    /// The group as keyed: onboarding id (``RecordFormat/noOnboarding`` for no position) and screen index.
    package var keyOnboarding: StringID { key.onboarding }
    package var keyScreen: UInt16 { key.screen }
    /// Events in the block (from the header), whatever the scan's range.
    package var count: Int { header.count }
    /// The first event's time (from the key) and the last one's (from the header), in microseconds.
    package var firstTime: Int64 { Layout.time(fromBits: key.timeBits) }
    package var lastTime: Int64 { header.lastTime }

    /// Calls `body` with each kind code (`RecordFormat.kindCode(body:)`: kind and analytics name) that the block's
    /// events have, the string id of the name for an analytics name outside the known ones (code 15; else `nil`) and
    /// the number of those events, in increasing (code, name) order, from the header: all the block's events,
    /// whatever the scan's range. The counts were checked to add up to ``count`` when the block was opened.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` for a name id past the snapshot's strings, and
    ///   whatever `body` throws.
    /// - Complexity: O(entries); no event is read.
    package func forEachKindCount(_ body: (_ code: UInt8, _ name: StringID?, _ count: Int) throws -> Void) throws {
        for entry in header.kindCounts {
            try body(entry.code, try checkedName(entry.name), entry.count)
        }
    }

    /// The kind code of the event ``next()`` returned last, and the string id of an analytics name outside the known
    /// ones, read from its record's first bytes.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` for a name id past the snapshot's strings.
    package func kind() throws -> (code: UInt8, name: StringID?) {
        let kind = RecordFormat.kindCode(body: reader?.body ?? UnsafeRawBufferPointer(start: nil, count: 0))
        return (kind.code, try checkedName(kind.name))
    }

    /// The event ``next()`` returned last, borrowed from the block (valid only inside the callback); nil before the
    /// first.
    package var record: EventRecord? {
        guard let reader else { return nil }
        return EventRecord(
            seq: reader.seq, time: reader.time, onboarding: key.onboarding, screen: key.screen, body: reader.body,
            stringLimit: stringLimit)
    }

    /// `name`, nil when absent; an id past the snapshot's strings throws.
    private func checkedName(_ name: StringID) throws -> StringID? {
        try StoredBlock.checkedName(name, limit: stringLimit, key: key)
    }

    /// `name`, nil when absent; an id at or past `limit` (the snapshot's strings) throws, naming the block at `key`.
    private static func checkedName(_ name: StringID, limit: StringID, key: EventKey) throws -> StringID? {
        guard name != RecordFormat.absent else { return nil }
        guard name < limit else {
            throw StoreError(
                .corrupt, "the block at seq \(key.seq) names string \(name), past the \(limit) strings of the store")
        }
        return name
    }

    /// Whether every event of the block is inside the scan's time range (then ``count`` is the block's count in
    /// the range, and its events need not be read).
    package var isInsideRange: Bool { firstTime >= lo && (hi.map { lastTime < $0 } ?? true) }

    /// The next event of the block inside the scan's time range: its time (microseconds) and seq; `nil` after
    /// the last one. Reads the block's deltas, not the records.
    /// The first call checks the whole block (its checksum), unless the snapshot that reads around damage did.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` when the block's checksum does not match or its
    ///   events do not decode (as far as they are read: the walk stops at the first event past the range), or when
    ///   `events` holds no block under a head's key or one whose count or last time is not the head's.
    package mutating func next() throws -> (time: Int64, seq: UInt64)? {
        if reader == nil { reader = try openReader() }
        while !pastEnd, try advance(&reader!, key) {
            let time = reader!.time
            if let hi, time >= hi {
                pastEnd = true
                return nil
            }
            if time >= lo { return (time, reader!.seq) }
        }
        return nil
    }

    /// Calls `body` with the reader at each of the block's events inside the scan's time range that ``next()`` has
    /// not returned yet, in order; the block is then read to the range's end.
    ///
    /// The walk of ``next()`` without a call per event: the reader is a local for the walk, not the optional property
    /// each ``next()`` unwraps (a cut block of a time-range count spent a third of its time there).
    /// - Throws: as ``next()``, and whatever `body` throws.
    /// - Complexity: O(events of the block up to the range's end).
    @inline(__always)
    package mutating func forEachInRange(_ body: (borrowing EventBlockReader) throws -> Void) throws {
        var walk = try reader ?? openReader()
        defer { reader = walk }
        let lo = lo, hi = hi ?? .max
        while !pastEnd, try advance(&walk, key) {
            let time = walk.time
            if time >= hi {
                pastEnd = true
                return
            }
            if time >= lo { try body(walk) }
        }
    }

    /// The reader over the block's events: its bytes looked up in `events` when its header came from its head, and
    /// checked whole (checksum, count and last time against the head).
    private func openReader() throws -> EventBlockReader {
        let opened = try blockReader(key, try value ?? storedBlock())
        if value == nil, opened.count != header.count || opened.lastTime != header.lastTime {
            throw StoreError(
                .corrupt,
                "the block at seq \(key.seq) (\(StoreError.group(key.onboarding, key.screen))) holds "
                    + "\(opened.count) events up to \(opened.lastTime) µs, its block_heads entry \(header.count) up to "
                    + "\(header.lastTime) µs; `boardwalk check` lists what else is damaged")
        }
        return opened
    }

    /// The block under the key of a head, from `events`.
    private func storedBlock() throws -> UnsafeRawBufferPointer {
        guard let block = try key.withBytes({ try txn.get(events, $0) }) else {
            throw StoreError(
                .corrupt,
                "block_heads holds the head of a block at seq \(key.seq) (\(StoreError.group(key.onboarding, key.screen))) "
                    + "that events does not hold; `boardwalk check` lists what else is damaged")
        }
        return block
    }

    /// The number of the block's events inside the scan's time range: ``count`` when the block lies inside it,
    /// else its events' times are read.
    /// - Complexity: O(1) for a block inside the range, else O(events of the block up to the range's end).
    package mutating func countInRange() throws -> Int {
        if isInsideRange { return count }
        var n = 0
        try forEachInRange { _ in n += 1 }
        return n
    }

    /// Calls `body` with the kind code and unknown analytics name (as ``kind()``) of each of the block's events inside
    /// the scan's time range that ``next()`` has not returned yet, in order.
    /// - Throws: as ``next()`` and ``kind()``, and whatever `body` throws.
    /// - Complexity: O(events of the block up to the range's end); each record's first bytes read.
    package mutating func forEachKindInRange(_ body: (_ code: UInt8, _ name: StringID?) throws -> Void) throws {
        let limit = stringLimit, key = key
        try forEachInRange { event in
            let kind = RecordFormat.kindCode(body: event.body)
            try body(kind.code, try StoredBlock.checkedName(kind.name, limit: limit, key: key))
        }
    }
}
