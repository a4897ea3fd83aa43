import BoardwalkCodec
import BoardwalkModel
import BoardwalkStoreFormat
internal import CLMDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The salvage of a store whose LMDB pages are damaged, or whose data file liblmdb refuses (cut short): the trees of
/// `strings`, `meta`, `events` and `event_log` read from the file page by page (``DataFilePages``), never through a
/// liblmdb cursor, going on past every page that fails the page checks.
///
/// Order: the main database's tree (the named databases' roots) from the meta page; `strings` (the dictionary that
/// every event names its strings through) and the `meta` counters; then the blocks of `events` and of `event_log`
/// in key order, each block checked by its own checksum, as ``Snapshot/salvageEvents(_:damaged:)`` checks them.
///
/// A damaged branch page hides its whole subtree. So when a walk of `events` or `event_log` lost a page (or the main
/// database, or the tree's record), the leaf pages that no walk reached are read too: every node under a key of
/// the size of those databases' keys whose block passes its checksum is a block that was stored. Such pages also hold
/// older copies of blocks (LMDB writes a changed page to a new place and frees the old one, whose bytes stay until
/// the page is used again), so: a key read through the tree with its checksum intact is never taken from elsewhere;
/// of several copies of another key, the one with the most events is taken (a block only grows); and each event is
/// handed out once, by its seq, and only below the store's `next_seq` when that counter was read (so that no block
/// written after the commit read, nor one of a commit that never completed past it, adds an event). The same holds
/// for `strings`: a chunk found elsewhere fills only ids that the tree's chunks lack (strings never change).
final class PageLevelSalvage {
    private var file: DataFilePages
    /// The meta page the trees are read from; `nil` when neither is sound (then only the scan of leaf pages reads).
    private let meta: [UInt8]?
    /// The named databases' roots and depths, from the main database.
    private var trees: [String: (root: UInt64, depth: Int)] = [:]
    private var strings = SalvagedStrings()
    private var nextSeq: UInt64?
    private var storedEvents: UInt64?
    private var handedOut = SeqBits()
    /// `events` and `event_log` keys whose block was read through the tree with its checksum intact.
    private var covered: Set<[UInt8]> = []
    /// The keys of the blocks read from pages outside the trees, to count per lost page.
    private var recoveredKeys: [[UInt8]] = []
    private var recoveredEvents = 0

    /// The trees are those of a commit older than the file's latest (whose own trees cannot be read): the leaf pages
    /// they do not reach are read for what later commits wrote, with no `next_seq` to bound them and keys the trees
    /// hold taken too (a later commit grows blocks under the same key), each event still handed out once.
    private let laterCommits: Bool

    init(file: DataFilePages, meta: [UInt8]?, laterCommits: Bool = false) {
        self.file = file
        self.meta = meta
        self.laterCommits = laterCommits
    }

    /// Thrown through a walk when a callback asked to stop.
    private struct Stopped: Error {}

    /// Hands out every event that can be read and reports what cannot, as ``Store/salvageEvents(_:damaged:)``.
    func run(_ body: (StoredEvent) throws -> Bool, damaged: (SalvageDamage) throws -> Bool) throws -> SalvageSummary {
        do {
            try readTrees(body, damaged)
        } catch is Stopped {}
        return SalvageSummary(
            storedEvents: storedEvents, readFromPages: true, recoveredBlocks: recoveredKeys.count,
            recoveredEvents: recoveredEvents)
    }

    private func readTrees(_ body: (StoredEvent) throws -> Bool, _ damaged: (SalvageDamage) throws -> Bool) throws {
        readMain()
        let mainLost = file.lost.contains { $0.database == "main database" }
        // The dictionary first: every event names its strings through it.
        file.walk(Layout.strings, root: trees[Layout.strings]?.root ?? .max, depth: trees[Layout.strings]?.depth ?? 0) {
            key, _, value in
            addChunk(key, value, fromTree: true)
        }
        if mainLost || laterCommits || trees[Layout.strings] == nil
            || file.lost.contains(where: { $0.database == Layout.strings })
        {
            scanStrings()
        }
        readMeta()
        if laterCommits { nextSeq = nil }
        try walkBlocks(Layout.events, body, damaged)
        try walkBlocks(Layout.eventLog, body, damaged)
        let lostBlocks = file.lost.contains { $0.database == Layout.events || $0.database == Layout.eventLog }
        if mainLost || trees[Layout.events] == nil || lostBlocks || laterCommits { try recoverBlocks(body, damaged) }
        for page in file.lost {
            let recovered = recoveredKeys.count { key in
                key.count == (page.database == Layout.eventLog ? Layout.eventLogKeySize : Layout.eventKeySize)
                    && page.database != Layout.strings && page.contains(key)
            }
            let error = StoreError(.corrupt, describe(page))
            let extent = SalvageDamage.Extent.page(
                database: page.database, page: page.page, pastEnd: page.pastEnd,
                recoveredBlocks: page.database == Layout.events || page.database == Layout.eventLog ? recovered : 0)
            guard try damaged(SalvageDamage(extent: extent, error: error)) else { throw Stopped() }
        }
    }

    // MARK: The trees

    /// The named databases' records from the main database's tree.
    private func readMain() {
        guard let meta else { return }
        let (root, depth) = meta.withUnsafeBytes { m in
            (
                m.loadUnaligned(fromByteOffset: 88 + 40, as: UInt64.self),
                Int(m.loadUnaligned(fromByteOffset: 88 + 6, as: UInt16.self))
            )
        }
        var found: [String: (root: UInt64, depth: Int)] = [:]
        file.walk("main database", root: root, depth: depth) { key, flags, value in
            guard flags == LMDBPage.subData, value.count == 48 else { return }
            let pad = value.loadUnaligned(fromByteOffset: 0, as: UInt32.self)
            let recordFlags = value.loadUnaligned(fromByteOffset: 4, as: UInt16.self)
            // A record whose flags changed would have its keys read in another order: its tree is left to the scan.
            guard pad == 0, recordFlags == 0 else { return }
            found[String(decoding: key, as: UTF8.self)] = (
                value.loadUnaligned(fromByteOffset: 40, as: UInt64.self),
                Int(value.loadUnaligned(fromByteOffset: 6, as: UInt16.self))
            )
        }
        trees = found
    }

    /// `next_seq` and the event count from the `meta` tree, each when its sealed value checks.
    private func readMeta() {
        guard let tree = trees[Layout.meta] else { return }
        let db = Database(dbi: 0, name: Layout.meta, sealed: true)
        var next: UInt64? = nil
        var events: UInt64? = nil
        file.walk(Layout.meta, root: tree.root, depth: tree.depth) { key, _, stored in
            guard let value = try? SealedValue.open(stored, key: key, db), value.count == 8 else { return }
            let name = String(decoding: key, as: UTF8.self)
            if name == Layout.metaNextSeq { next = value.be64(0) }
            if name == Layout.metaEvents { events = value.be64(0) }
        }
        nextSeq = next
        storedEvents = events
    }

    /// Adds the strings of a chunk under `key` that passes its checksum and decodes whole; from elsewhere than the
    /// tree (`fromTree` false), only when it fills ids the dictionary lacks.
    private func addChunk(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, fromTree: Bool) {
        guard key.count == 4 else { return }
        let first = key.be32(0)
        guard var reader = try? StringChunkReader(value, checksumSeed: StringChunks.checksumSeed(first: first)),
            UInt64(first) + UInt64(reader.count) <= UInt64(RecordFormat.absent)
        else { return }
        var chunk: [String] = []
        // A chunk that does not decode to its end is not taken at all.
        do {
            while let entry = try reader.next() { chunk.append(entry.string) }
        } catch { return }
        if !fromTree && !strings.lacks(first, count: chunk.count) { return }
        strings.set(chunk, from: first)
    }

    /// Reads string chunks from the leaf pages no walk reached.
    private func scanStrings() {
        let buffer = ByteBuffer()
        file.scanUnreachedLeaves { _, key, offset, size in
            guard key.count == 4, size > 0, let value = buffer.read(file, offset: offset, size: size) else { return }
            addChunk(key, value, fromTree: false)
        }
    }

    /// The blocks of `events` or `event_log` through its tree.
    private func walkBlocks(
        _ database: String, _ body: (StoredEvent) throws -> Bool, _ damaged: (SalvageDamage) throws -> Bool
    ) throws {
        guard let tree = trees[database] else { return }
        let isLog = database == Layout.eventLog
        try file.walk(database, root: tree.root, depth: tree.depth) { key, _, value in
            guard let eventKey = isLog ? EventKey.logKey(key)?.key : EventKey(key) else {
                let error =
                    isLog
                    ? EventLog.badKey(key.count)
                    : StoreError(.corrupt, "an events key is \(key.count) bytes, not \(Layout.eventKeySize)")
                guard try damaged(SalvageDamage(extent: .key, error: error)) else { throw Stopped() }
                return
            }
            if (try? blockReader(eventKey, value)) != nil { covered.insert(Array(key)) }
            guard try salvageBlock(eventKey, value, recovered: false, body, damaged) else { throw Stopped() }
        }
    }

    /// The blocks of `events` and `event_log` on leaf pages that no walk reached: of each key not read through a
    /// tree, the copy with the most events, then each of its events not handed out yet.
    private func recoverBlocks(_ body: (StoredEvent) throws -> Bool, _ damaged: (SalvageDamage) throws -> Bool) throws {
        var best: [[UInt8]: (count: Int, offset: Int, size: Int)] = [:]
        let buffer = ByteBuffer()
        file.scanUnreachedLeaves { _, key, offset, size in
            guard key.count == Layout.eventKeySize || key.count == Layout.eventLogKeySize, size > 0 else { return }
            let bytes = Array(key)
            guard laterCommits || !covered.contains(bytes),
                let eventKey = key.count == Layout.eventKeySize ? EventKey(key) : EventKey.logKey(key)?.key,
                let value = buffer.read(file, offset: offset, size: size),
                let block = try? blockReader(eventKey, value)
            else { return }
            if block.count > best[bytes]?.count ?? 0 { best[bytes] = (block.count, offset, size) }
        }
        // `events` keys (22 bytes) before `event_log` keys (30), each in key order.
        let keys = best.keys.sorted { a, b in a.count != b.count ? a.count < b.count : a.lexicographicallyPrecedes(b) }
        for key in keys {
            let (_, offset, size) = best[key]!
            let eventKey = key.withUnsafeBytes { k in
                key.count == Layout.eventKeySize ? EventKey(k) : EventKey.logKey(k)?.key
            }
            guard let eventKey, let value = buffer.read(file, offset: offset, size: size) else { continue }
            let before = recoveredEvents
            guard try salvageBlock(eventKey, value, recovered: true, body, damaged) else { throw Stopped() }
            if recoveredEvents > before { recoveredKeys.append(key) }
        }
    }

    /// The events of one block, as ``Snapshot/salvageEvents(_:damaged:)`` reads them; for a block read from outside
    /// the trees (`recovered`), only the events with a seq not handed out yet and below `next_seq`. `false` when a
    /// callback asked to stop.
    private func salvageBlock(
        _ key: EventKey, _ value: UnsafeRawBufferPointer, recovered: Bool, _ body: (StoredEvent) throws -> Bool,
        _ damaged: (SalvageDamage) throws -> Bool
    ) throws -> Bool {
        try forEachSalvagedEvent(key, value, naming: naming, damaged) { block in
            let seq = block.seq
            if recovered {
                if let nextSeq, seq >= nextSeq { return true }
                guard handedOut.insert(seq) else { return true }
            } else {
                _ = handedOut.insert(seq)
            }
            let stored: StoredEvent
            do {
                let record = try recordView(key, block, stringLimit: strings.limit)
                do {
                    stored = StoredEvent(seq: seq, event: try record.event(strings: strings))
                } catch let error as CodecError {
                    throw StoreError(
                        .corrupt, "event seq \(seq) does not decode", underlying: storedRecordError(error))
                }
            } catch let error as StoreError {
                return try damaged(SalvageDamage(extent: .event(seq: seq), error: naming(error)))
            }
            if recovered { recoveredEvents += 1 }
            return try body(stored)
        }
    }

    // MARK: Words

    private func naming(_ error: StoreError) -> StoreError { error.naming { strings.string(for: $0) } }

    /// What a lost page held and why it was not read, for ``SalvageDamage``.
    /// "every block", "the blocks before B", "the blocks from A on", "the blocks from A up to (not including) B":
    /// the keys a page stood for, from its first (`lower`) to its next sibling's first (`upper`, excluded).
    private func range(_ lower: String?, _ upper: String?, _ things: String) -> String {
        switch (lower, upper) {
        case (nil, nil): "every one of the tree's \(things)"
        case (nil, let upper?): "the \(things) before \(upper)"
        case (let lower?, nil): "the \(things) from \(lower) on"
        case (let lower?, let upper?): "the \(things) from \(lower) up to (not including) \(upper)"
        }
    }

    private func describe(_ page: DataFilePages.LostPage) -> String {
        let kind =
            switch page.kind {
            case .branch: "a branch page (and every page below it)"
            case .leaf: "a leaf page"
            case .overflow: "an overflow run (one value)"
            }
        let held: String
        switch page.database {
        case Layout.events, Layout.eventLog:
            let isLog = page.database == Layout.eventLog
            func block(_ key: [UInt8]?, _ end: String) -> String {
                guard let key,
                    let k = key.withUnsafeBytes({ isLog ? EventKey.logKey($0)?.key : EventKey($0) })
                else { return end }
                let group =
                    k.onboarding == RecordFormat.noOnboarding
                    ? "no onboarding"
                    : "onboarding "
                        + (strings.string(for: k.onboarding).map { StoreError.quoted($0) } ?? "#\(k.onboarding)")
                        + ", screen \(k.screen)"
                let batch = isLog ? "the batch at seq \(key.withUnsafeBytes { $0.be64(0) }), " : ""
                return "\(batch)the block at seq \(k.seq) (\(group), events from \(k.time))"
            }
            held =
                page.kind == .overflow
                ? "held " + block(page.lower, "a block")
                : "held " + range(page.lower.map { block($0, "") }, page.upper.map { block($0, "") }, "blocks")
        case Layout.strings:
            func id(_ key: [UInt8]?, _ end: String) -> String {
                guard let key, key.count == 4 else { return end }
                return "id \(key.withUnsafeBytes { $0.be32(0) })"
            }
            held = "held " + range(page.lower.map { id($0, "") }, page.upper.map { id($0, "") }, "strings")
        case Layout.meta:
            held = "held the store's counters"
        default:
            held = "held the named databases' records"
        }
        let state = page.pastEnd ? "is not in the file, which was cut short" : "is damaged"
        return "\(kind) of \(page.database), which \(held), \(state): \(page.reason)"
    }
}

extension DataFilePages.LostPage {
    /// Whether `key` lies among the keys the page stood for.
    func contains(_ key: [UInt8]) -> Bool {
        if kind == .overflow { return key == lower }
        if let lower, key.lexicographicallyPrecedes(lower) { return false }
        if let upper, !key.lexicographicallyPrecedes(upper) { return false }
        return true
    }
}

/// The dictionary as a salvage found it: ids without a readable chunk are `nil`.
private struct SalvagedStrings: StringResolver {
    private var table: [String?] = []

    /// Every id a record may name is below this (ids past the last chunk found do not resolve).
    var limit: StringID { StringID(table.count) }

    func string(for id: StringID) -> String? { Int(id) < table.count ? table[Int(id)] : nil }

    /// Whether any of the `count` ids from `first` is missing.
    func lacks(_ first: StringID, count: Int) -> Bool {
        (Int(first)..<(Int(first) + count)).contains { $0 >= table.count || table[$0] == nil }
    }

    /// Sets the ids from `first` that are missing to `chunk`'s strings.
    mutating func set(_ chunk: [String], from first: StringID) {
        let end = Int(first) + chunk.count
        if table.count < end { table += [String?](repeating: nil, count: end - table.count) }
        for (i, string) in chunk.enumerated() where table[Int(first) + i] == nil { table[Int(first) + i] = string }
    }
}

/// The seqs handed out, one bit each (seqs are dense from 0).
private struct SeqBits {
    private var words: [UInt64] = []

    /// Adds `seq`; `false` when it was there. Seqs past 2^40 (no store holds that many) are not kept.
    mutating func insert(_ seq: UInt64) -> Bool {
        guard seq < 1 << 40 else { return true }
        let (word, bit) = (Int(seq / 64), seq % 64)
        if word >= words.count { words += [UInt64](repeating: 0, count: max(word + 1 - words.count, words.count)) }
        if words[word] & (1 << bit) != 0 { return false }
        words[word] |= 1 << bit
        return true
    }
}

/// One reused buffer for values read from the file.
private final class ByteBuffer {
    private var bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
    deinit { bytes.deallocate() }

    /// The `size` bytes at `offset`, valid until the next read; `nil` when the file ends before them.
    func read(_ file: DataFilePages, offset: Int, size: Int) -> UnsafeRawBufferPointer? {
        if size > bytes.count {
            bytes.deallocate()
            bytes = .allocate(byteCount: size, alignment: 16)
        }
        let target = UnsafeMutableRawBufferPointer(rebasing: bytes[0..<size])
        return file.read(offset: offset, into: target) ? UnsafeRawBufferPointer(target) : nil
    }
}
