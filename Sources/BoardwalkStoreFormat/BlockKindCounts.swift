import BoardwalkCodec

/// How many events of each kind, and of each analytics name, an event block holds: the summary at the end of its
/// header, which lets a count by kind or name, or a filter on them, use a block without reading its events.
///
/// Each entry is a code (``RecordFormat/kindCode(body:)``: `kind << 4 | name` for analytics, `kind << 4` for the
/// other kinds, `0xFF` for a body it cannot classify), for code 15 (an analytics name outside the known ones) the
/// name's string reference, and the number of the block's events with them. Entries are in increasing (code,
/// reference) order, every count is at least 1 and the counts add up to the block's count; the reader checks all
/// three before anything is read from the block. Iterating is allocation-free; the bytes are the block's and are
/// valid as long as they are.
@usableFromInline
package struct BlockKindCounts: Sequence {
    @usableFromInline let base: UnsafeRawPointer
    /// The offset of the first entry.
    @usableFromInline let start: Int
    /// The offset past the last entry: the iterator reads no byte from here on (a varint's word-wide read would pass
    /// the end of a block's head, which ends with the entries).
    @usableFromInline let end: Int
    /// Entries.
    @usableFromInline package let entryCount: Int

    @inlinable
    init(base: UnsafeRawPointer, start: Int, end: Int, entryCount: Int) {
        self.base = base
        self.start = start
        self.end = end
        self.entryCount = entryCount
    }

    /// The code of an analytics name outside the known ones, whose entries carry the name's reference.
    @inlinable package static var unknownNameCode: UInt8 { 0x0F }

    /// Whether `code` can appear in a summary.
    @inlinable
    package static func isValid(_ code: UInt8) -> Bool {
        if code == RecordFormat.unclassifiedKindCode { return true }
        let kind = code >> 4, name = code & 0x0F
        return kind == 0 ? (name <= 7 || name == unknownNameCode) : (kind <= 6 && name == 0)
    }

    /// Reads the entries at the reader's position and checks them against `count`, the block's event count; leaves
    /// the reader after them.
    /// - Throws: ``CodecError`` when the entries are truncated, malformed, out of order, hold a count of 0, an
    ///   unknown code or a reference of `0xFFFFFFFF`, or do not add up to `count`.
    @inlinable
    static func read(_ r: inout ByteReader, count: UInt64) throws(CodecError) -> BlockKindCounts {
        let at = r.position
        let entries = try r.varint()
        guard entries >= 1, entries <= count else {
            throw CodecError(offset: at, reason: .oversizedCount(count: entries, limit: Int(clamping: count)))
        }
        let start = r.position
        var total: UInt64 = 0
        // (code, reference) of the entry before, as one number: entries are in increasing order of it.
        var previous: Int64 = -1
        for _ in 0..<Int(entries) {
            let codeAt = r.position
            let code = try r.byte()
            var name: UInt64 = 0
            if code == unknownNameCode {
                name = try r.varint()
                guard name < UInt64(RecordFormat.absent) else {
                    throw CodecError(
                        offset: codeAt, reason: .invalidValue(field: "block kind name", value: Int64(bitPattern: name)))
                }
            }
            let order = Int64(code) << 32 | Int64(name)
            guard isValid(code), order > previous else {
                throw CodecError(offset: codeAt, reason: .invalidValue(field: "block kind code", value: Int64(code)))
            }
            previous = order
            let n = try r.varint()
            let (sum, overflow) = total.addingReportingOverflow(n)
            guard n >= 1, !overflow, sum <= count else {
                throw CodecError(
                    offset: codeAt, reason: .invalidValue(field: "block kind count", value: Int64(bitPattern: n)))
            }
            total = sum
        }
        guard total == count else {
            throw CodecError(
                offset: at, reason: .invalidValue(field: "block kind counts (sum)", value: Int64(bitPattern: total)))
        }
        return BlockKindCounts(base: r.base, start: start, end: r.position, entryCount: Int(entries))
    }

    /// One entry: a kind code, for ``unknownNameCode`` the name's reference (else `RecordFormat.absent`), and the
    /// number of events.
    @usableFromInline package typealias Entry = (code: UInt8, name: StringID, count: Int)

    @usableFromInline
    package struct Iterator: IteratorProtocol {
        @usableFromInline var reader: ByteReader
        @usableFromInline var left: Int

        @inlinable
        init(reader: ByteReader, left: Int) {
            self.reader = reader
            self.left = left
        }

        /// The next entry.
        @inlinable
        package mutating func next() -> Entry? {
            guard left > 0 else { return nil }
            left -= 1
            // Checked when the block was opened: these reads do not fail.
            guard let code = try? reader.byte() else { return nil }
            var name = RecordFormat.absent
            if code == BlockKindCounts.unknownNameCode {
                guard let ref = try? reader.varint() else { return nil }
                name = StringID(truncatingIfNeeded: ref)
            }
            guard let n = try? reader.varint() else { return nil }
            return (code, name, Int(n))
        }
    }

    @inlinable
    package func makeIterator() -> Iterator {
        Iterator(reader: ByteReader(base: base, position: start, end: end), left: entryCount)
    }

    /// The number of the block's events with `code` (of every unknown name for ``unknownNameCode``), 0 when it has
    /// none.
    /// - Complexity: O(entries).
    @inlinable
    package func count(of code: UInt8) -> Int {
        var n = 0
        for entry in self where entry.code == code { n += entry.count }
        return n
    }
}

/// A builder's running counts per kind code and unknown name, and the bytes their summary will take.
@usableFromInline
struct KindTally {
    /// Counts indexed by ``slot(_:)``; the unknown names' are in ``unknownNames``.
    @usableFromInline var counts: [Int]
    /// The slots with a nonzero count, one bit each.
    @usableFromInline var present: (UInt64, UInt64)
    /// The references of the unknown analytics names counted, and their counts, in the order first met.
    @usableFromInline var unknownNames: [(name: StringID, count: Int)]
    /// The summary's encoded size: the entry count and each entry's code, reference and count.
    @usableFromInline var byteCount: Int

    @usableFromInline
    init() {
        counts = [Int](repeating: 0, count: 0x71)
        present = (0, 0)
        unknownNames = []
        byteCount = 1
    }

    /// The index of `code` in ``counts``: the code itself, or 0x70 for the unclassified code.
    @inlinable
    static func slot(_ code: UInt8) -> Int { code == RecordFormat.unclassifiedKindCode ? 0x70 : Int(code & 0x7F) }

    @inlinable
    static func code(ofSlot slot: Int) -> UInt8 { slot == 0x70 ? RecordFormat.unclassifiedKindCode : UInt8(slot) }

    /// Entries of the summary.
    @inlinable
    var entryCount: Int {
        present.0.nonzeroBitCount &+ present.1.nonzeroBitCount &+ unknownNames.count
    }

    @inlinable
    mutating func reset() {
        forEachSlot { counts[$0] = 0 }
        present = (0, 0)
        unknownNames.removeAll(keepingCapacity: true)
        byteCount = 1
    }

    /// The growth of the entry count's varint when the summary goes from `entries` to `entries + 1` entries.
    @inlinable
    static func entryCountGrowth(_ entries: Int) -> Int {
        varintSize(UInt64(entries &+ 1)) &- varintSize(UInt64(entries))
    }

    /// The size of a summary of one event of `code` (and `name`): the entry count, the code, the reference of an
    /// unknown name and the count.
    @inlinable
    static func firstEntrySize(_ code: UInt8, name: StringID) -> Int {
        code == BlockKindCounts.unknownNameCode ? 3 &+ varintSize(UInt64(name)) : 3
    }

    /// The summary's size after counting one more event of `code` (and `name`, for an unknown name).
    @inlinable
    func byteCount(adding code: UInt8, name: StringID) -> Int {
        if code == BlockKindCounts.unknownNameCode {
            guard let i = unknownNames.firstIndex(where: { $0.name == name }) else {
                return byteCount &+ 2 &+ varintSize(UInt64(name)) &+ KindTally.entryCountGrowth(entryCount)
            }
            let old = unknownNames[i].count
            return byteCount &+ varintSize(UInt64(old &+ 1)) &- varintSize(UInt64(old))
        }
        let old = counts[KindTally.slot(code)]
        if old == 0 { return byteCount &+ 2 &+ KindTally.entryCountGrowth(entryCount) }
        return byteCount &+ varintSize(UInt64(old &+ 1)) &- varintSize(UInt64(old))
    }

    /// Counts one more event of `code` (and `name`, for an unknown name): what a builder does per event. A count that
    /// stays as long (not a power of 128) costs an increment.
    @inlinable @inline(__always)
    mutating func add(_ code: UInt8, name: StringID) {
        if code != BlockKindCounts.unknownNameCode {
            let slot = KindTally.slot(code)
            let new = counts[slot] &+ 1
            if _fastPath(new & 0x7F != 0 && new != 1) {
                counts[slot] = new
                return
            }
        }
        add(code, name: name, 1)
    }

    /// Counts `n` more events of `code` (and `name`, for an unknown name).
    @usableFromInline
    mutating func add(_ code: UInt8, name: StringID, _ n: Int) {
        if code == BlockKindCounts.unknownNameCode {
            if let i = unknownNames.firstIndex(where: { $0.name == name }) {
                let old = unknownNames[i].count
                unknownNames[i].count = old &+ n
                byteCount &+= varintSize(UInt64(old &+ n)) &- varintSize(UInt64(old))
            } else {
                byteCount &+= 1 &+ varintSize(UInt64(name)) &+ varintSize(UInt64(n))
                byteCount &+= KindTally.entryCountGrowth(entryCount)
                unknownNames.append((name, n))
            }
            return
        }
        let slot = KindTally.slot(code)
        let old = counts[slot]
        let new = old &+ n
        counts[slot] = new
        if old == 0 {
            byteCount &+= 1 &+ varintSize(UInt64(new)) &+ KindTally.entryCountGrowth(entryCount)
            if slot < 64 { present.0 |= 1 << UInt64(slot) } else { present.1 |= 1 << UInt64(slot &- 64) }
        } else {
            byteCount &+= varintSize(UInt64(new)) &- varintSize(UInt64(old))
        }
    }

    /// The slots with a nonzero count, in increasing code order (the unclassified code's slot is the last).
    @inlinable
    func forEachSlot(_ body: (Int) -> Void) {
        var low = present.0, high = present.1
        while low != 0 {
            body(low.trailingZeroBitCount)
            low &= low &- 1
        }
        while high != 0 {
            body(64 &+ high.trailingZeroBitCount)
            high &= high &- 1
        }
    }

    /// Writes the summary: the entry count, then each code (with its reference for an unknown name) and its count.
    @inlinable
    func write(_ w: inout ByteWriter) {
        w.varint(UInt64(entryCount))
        let unknownSlot = Int(BlockKindCounts.unknownNameCode)
        var wroteUnknown = false
        func writeUnknown(_ w: inout ByteWriter) {
            for entry in unknownNames.sorted(by: { $0.name < $1.name }) {
                w.byte(BlockKindCounts.unknownNameCode)
                w.varint(UInt64(entry.name))
                w.varint(UInt64(entry.count))
            }
            wroteUnknown = true
        }
        forEachSlot { slot in
            if !wroteUnknown, slot > unknownSlot { writeUnknown(&w) }
            w.byte(KindTally.code(ofSlot: slot))
            w.varint(UInt64(counts[slot]))
        }
        if !wroteUnknown { writeUnknown(&w) }
    }
}
