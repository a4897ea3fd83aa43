#if canImport(Glibc)
import Glibc
#endif
import BoardwalkCodec
import BoardwalkModel

// Reading blocks rather than events: a block's key gives its group and first time, its header the number of
// events and the time span, so a count over the blocks that lie inside a time range needs no record at all.

extension Snapshot {
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
    /// What it checks: each key's size and each block's header (``EventBlockReader``'s checks). Nothing else:
    /// a count taken from ``StoredBlock/count`` trusts the header, and no record body is read, so damage inside
    /// a block's events goes unnoticed unless ``StoredBlock/next()`` walks them (`Store.check()` finds it).
    /// Return `false` from `body` to stop. The block is valid only inside `body`.
    /// - Parameters:
    ///   - onboarding: an onboarding id; `nil` visits the whole store, events without a position included;
    ///     ``RecordFormat/noOnboarding`` the events without a position.
    ///   - screens: screen indexes to include (ignored when `onboarding` is `nil`).
    ///   - time: the half-open time range.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` for a key or block header that does not decode,
    ///   and whatever `body` throws.
    /// - Complexity: O(log N) per group visited, plus O(1) per block visited (one page touched for its header).
    public func forEachBlock(onboarding: StringID?, screens: ClosedRange<Int>? = nil, time: Range<Timestamp>? = nil,
                             _ body: (inout StoredBlock) throws -> Bool) throws {
        let range = TimeRange(time)
        if onboarding != nil, let screens, screens.upperBound < 0 || screens.lowerBound > Int(UInt16.max) { return }
        let firstScreen = onboarding == nil ? 0 : UInt16(clamping: screens?.lowerBound ?? 0)
        let lastScreen = onboarding == nil ? UInt16.max : UInt16(clamping: screens?.upperBound ?? Int(UInt16.max))
        try withBlockCursor { c in
            func seek(_ key: EventKey) throws -> Bool { try c.seek(key) }
            var found = try seek(EventKey(onboarding: onboarding ?? 0, screen: firstScreen, timeBits: range.seekBits, seq: 0))
            while found {
                let key = try decodeBlockKey(c.key)
                if let onboarding, key.onboarding != onboarding || key.screen > lastScreen { return }
                if key.timeBits < range.seekBits {
                    // A group's blocks that start more than a block span before the range hold none of its events.
                    found = try seek(EventKey(onboarding: key.onboarding, screen: key.screen, timeBits: range.seekBits, seq: 0))
                    continue
                }
                if range.isPastEnd(Layout.time(fromBits: key.timeBits)) {
                    // This block and the group's later ones start past the range: on to the next group.
                    let group = UInt64(key.onboarding) << 16 | UInt64(key.screen)
                    if group == 0xFFFF_FFFF_FFFF || (onboarding != nil && key.screen == lastScreen) { return }
                    let next = group + 1
                    found = try seek(EventKey(onboarding: UInt32(truncatingIfNeeded: next >> 16), screen: UInt16(truncatingIfNeeded: next),
                                              timeBits: range.seekBits, seq: 0))
                    continue
                }
                let reader = try blockReader(key, c.value)
                if reader.lastTime >= range.lo {
                    var block = StoredBlock(key: key, reader: reader, lo: range.lo, hi: range.hi)
                    guard try body(&block) else { return }
                }
                found = try c.next()
            }
        }
    }
}

/// One stored block as ``Snapshot/forEachBlock(onboarding:screens:time:_:)`` hands it out: its group and the
/// counts of its header, and its events' times and seqs on demand. Valid only inside the callback.
public struct StoredBlock {
    let key: EventKey
    var reader: EventBlockReader
    /// The scan's time range `lo..<hi` (`hi == nil`: no upper bound).
    let lo: Int64
    let hi: Int64?
    /// An event at or past `hi` was reached: no later event of the block is in the range.
    var pastEnd = false

    init(key: EventKey, reader: EventBlockReader, lo: Int64, hi: Int64?) {
        self.key = key
        self.reader = reader
        self.lo = lo
        self.hi = hi
    }

    /// The interned onboarding of the block's group; `nil` for the events without a position.
    public var onboarding: StringID? { key.onboarding == RecordFormat.noOnboarding ? nil : key.onboarding }
    /// The screen index of the block's group; `nil` for the events without a position.
    public var screenIndex: Int? { key.onboarding == RecordFormat.noOnboarding ? nil : Int(key.screen) }
    /// The group as keyed: onboarding id (``RecordFormat/noOnboarding`` for no position) and screen index.
    public var keyOnboarding: StringID { key.onboarding }
    public var keyScreen: UInt16 { key.screen }
    /// Events in the block (from the header), whatever the scan's range.
    public var count: Int { reader.count }
    /// The first event's time (from the key) and the last one's (from the header), in microseconds.
    public var firstTime: Int64 { reader.firstTime }
    public var lastTime: Int64 { reader.lastTime }

    /// Whether every event of the block is inside the scan's time range (then ``count`` is the block's count in
    /// the range, and its events need not be read).
    public var isInsideRange: Bool { firstTime >= lo && (hi.map { lastTime < $0 } ?? true) }

    /// The next event of the block inside the scan's time range: its time (microseconds) and seq; `nil` after
    /// the last one. Reads the block's deltas, not the records.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` when the block's events do not decode (as far
    ///   as they are read: the walk stops at the first event past the range).
    public mutating func next() throws -> (time: Int64, seq: UInt64)? {
        while !pastEnd, try advance(&reader, key) {
            if let hi, reader.time >= hi {
                pastEnd = true
                return nil
            }
            if reader.time >= lo { return (reader.time, reader.seq) }
        }
        return nil
    }

    /// The number of the block's events inside the scan's time range: ``count`` when the block lies inside it,
    /// else its events' times are read.
    /// - Complexity: O(1) for a block inside the range, else O(events of the block up to the range's end).
    public mutating func countInRange() throws -> Int {
        if isInsideRange { return count }
        var n = 0
        while try next() != nil { n += 1 }
        return n
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
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` for a key or block that does not decode, or a block
    ///   that lies past the end of the file; ``LMDBError`` with the `errno` of a `pread` that fails; whatever `body` throws.
    /// - Complexity: O(log N) per screen, plus O(1) per block and per event read.
    public func forEachBlockRun(onboarding: StringID, screens: ClosedRange<Int>? = nil, time: Range<Timestamp>? = nil,
                                _ body: (inout EventRun) throws -> Bool) throws {
        if let screens, screens.upperBound < 0 || screens.lowerBound > Int(UInt16.max) { return }
        let firstScreen = UInt16(clamping: screens?.lowerBound ?? 0)
        let lastScreen = UInt16(clamping: screens?.upperBound ?? Int(UInt16.max))
        let range = TimeRange(time)
        let hi = range.hi ?? .max, bounded = range.hi != nil, limit = stringCount
        var fetcher = BlockFetcher(file: txn.file, pageSize: txn.pageSize)
        defer { fetcher.release() }
        func scan<Entries: BlockEntries>(_ c: inout Entries) throws {
            func seek(_ key: EventKey) throws -> Bool { try key.withBytes { try c.seek($0) } }
            var found = try seek(EventKey(onboarding: onboarding, screen: firstScreen, timeBits: range.seekBits, seq: 0))
            while found {
                let key = try decodeBlockKey(c.key)
                if key.onboarding != onboarding || key.screen > lastScreen { return }
                if key.timeBits < range.seekBits {
                    found = try seek(EventKey(onboarding: onboarding, screen: key.screen, timeBits: range.seekBits, seq: 0))
                    continue
                }
                if range.isPastEnd(Layout.time(fromBits: key.timeBits)) {
                    // This block and the group's later ones start past the range: on to the next screen.
                    if key.screen >= lastScreen { return }
                    found = try seek(EventKey(onboarding: onboarding, screen: key.screen + 1, timeBits: range.seekBits, seq: 0))
                    continue
                }
                var reader = try blockReader(key, try fetcher.bytes(c.value))
                if reader.lastTime >= range.lo, try advance(&reader, key) {
                    var run = EventRun(reader: reader, blockSeq: key.seq, onboarding: onboarding, screen: key.screen,
                                       lo: range.lo, hi: hi, bounded: bounded, boundTime: .max, boundSeq: .max, stringLimit: limit)
                    guard try body(&run) else { return }
                }
                found = try c.next()
            }
        }
        // The B-tree's own pages too are read with `pread` where a fault would map nothing else (a read transaction
        // with the map's address known); else through liblmdb's cursor.
        let logBatches = try eventLogBatches()
        if logBatches.isEmpty, var walk = try LeafWalk(txn, dbs.events) {
            defer { walk.release() }
            try scan(&walk)
        } else {
            try txn.withBlockCursor(dbs, logBatches: logBatches) { c in try scan(&c) }
        }
    }
}

/// What ``Snapshot/forEachBlockRun(onboarding:screens:time:_:)`` (and `onboarding_sessions` readers) read entries with: liblmdb's cursor
/// or a ``LeafWalk``.
protocol BlockEntries {
    var key: UnsafeRawBufferPointer { get }
    var value: UnsafeRawBufferPointer { get }
    mutating func seek(_ key: UnsafeRawBufferPointer) throws -> Bool
    mutating func next() throws -> Bool
}

extension Cursor: BlockEntries {}
extension LeafWalk: BlockEntries {}

/// Hands out a block's bytes, from the map or read with `pread` into a buffer reused for the next block
/// (``Snapshot/forEachBlockRun(onboarding:screens:time:_:)`` says which).
struct BlockFetcher {
    let file: MappedFile
    let pageSize: Int
    private var buffer: UnsafeMutableRawPointer? = nil
    private var capacity = 0
    /// The last window of the previous block read, `-2` before the first.
    private var previousWindow = -2
    /// The windows of the blocks read with `pread` so far.
    private var readWindows: [Int] = []

    init(file: MappedFile, pageSize: Int) {
        self.file = file
        self.pageSize = pageSize
    }

    /// Frees the buffer and marks the windows read with `pread` as read once (a later scan reads them through
    /// the map).
    mutating func release() {
        buffer?.deallocate()
        buffer = nil
        if let windows = file.windows {
            for w in readWindows { windows.raise(w, to: .readOnce) }
        }
        readWindows = []
    }

    /// The bytes of `value` (a value LMDB handed out, already checked to lie within the file), valid until the next
    /// call.
    @inline(__always)
    mutating func bytes(_ value: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer {
        guard let windows = file.windows, let start = value.baseAddress, value.count > 0 else { return value }
        let address = UInt(bitPattern: start)
        guard address >= file.mapStart, address < file.mapEnd else { return value }
        let offset = Int(address - file.mapStart)
        // An overflow value's data starts right after its first page's 16-byte header; any other value sits in the
        // leaf page just read (by the walk or by liblmdb).
        guard offset % pageSize == 16 else { return value }
        let first = offset >> MapWindows.shift, last = (offset + value.count - 1) >> MapWindows.shift
        let previous = previousWindow
        previousWindow = last
        var untouched = true, mapped = true
        for w in first...last {
            let state = windows.state(w)
            if state != .mapped { mapped = false }
            if state != .untouched { untouched = false }
        }
        if mapped { return value }
        if !untouched || previous == first || previous == first - 1 {
            for w in first...last { windows.raise(w, to: .mapped) }
            return value
        }
        // Marked as read once when the scan ends: a window holding two blocks of this scan is read twice with
        // `pread` rather than once each way (measured: reading every block of a scattered scan with `pread` beat
        // mapping the windows that hold two or three of its blocks).
        readWindows.append(first)
        if last != first { readWindows.append(last) }
        return try read(offset: offset, count: value.count)
    }

    private mutating func read(offset: Int, count: Int) throws -> UnsafeRawBufferPointer {
        if count > capacity {
            buffer?.deallocate()
            capacity = max(count, 64 << 10)
            buffer = .allocate(byteCount: capacity, alignment: 16)
        }
        var done = 0
        while done < count {
            let n = pread(file.descriptor, buffer! + done, count - done, off_t(offset + done))
            if n > 0 {
                done += n
            } else if n == 0 {
                throw StoreError(.corrupt, "a block (\(count) bytes at offset \(offset)) lies past the end of data.mdb: "
                                 + "the store is damaged")
            } else if errno != EINTR {
                throw LMDBError.system(errno, context: "pread(data.mdb, \(count) bytes at offset \(offset))")
            }
        }
        return UnsafeRawBufferPointer(start: buffer, count: count)
    }
}
