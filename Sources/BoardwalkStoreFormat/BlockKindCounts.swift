import BoardwalkCodec

/// How many events of each kind, and of each analytics name, an event block holds: the summary at the end of its
/// header, which lets a count by kind or name, or a filter on them, use a block without reading its events.
///
/// Each entry is a code (``RecordFormat/kindCode(body:)``: `kind << 4 | name` for analytics, `kind << 4` for the
/// other kinds, `0xFF` for a body it cannot classify) and the number of the block's events with it. Entries are in
/// increasing code order, every count is at least 1 and the counts add up to the block's count; the reader checks
/// all three before anything is read from the block. Iterating is allocation-free; the bytes are the block's and
/// are valid as long as they are.
@usableFromInline
package struct BlockKindCounts: Sequence {
    @usableFromInline let base: UnsafeRawPointer
    /// The offset of the first entry.
    @usableFromInline let start: Int
    /// Entries.
    package let entryCount: Int

    @inlinable
    init(base: UnsafeRawPointer, start: Int, entryCount: Int) {
        self.base = base
        self.start = start
        self.entryCount = entryCount
    }

    /// The largest number of entries: 16 analytics codes, 6 other kinds and the unclassified code.
    @inlinable package static var maxEntries: Int { 23 }

    /// Whether `code` can appear in a summary.
    @inlinable
    package static func isValid(_ code: UInt8) -> Bool {
        if code == RecordFormat.unclassifiedKindCode { return true }
        let kind = code >> 4, name = code & 0x0F
        return kind == 0 ? (name <= 7 || name == 15) : (kind <= 6 && name == 0)
    }

    /// Reads the entries at the reader's position and checks them against `count`, the block's event count; leaves
    /// the reader after them.
    /// - Throws: ``CodecError`` when the entries are truncated, malformed, out of order, hold a count of 0 or an
    ///   unknown code, or do not add up to `count`.
    @inlinable
    static func read(_ r: inout ByteReader, count: UInt64) throws(CodecError) -> BlockKindCounts {
        let at = r.position
        let entries = try r.varint()
        guard entries >= 1, entries <= UInt64(maxEntries) else {
            throw CodecError(offset: at, reason: .oversizedCount(count: entries, limit: maxEntries))
        }
        let start = r.position
        var total: UInt64 = 0
        var previous = -1
        for _ in 0..<Int(entries) {
            let codeAt = r.position
            let code = try r.byte()
            guard isValid(code), Int(code) > previous else {
                throw CodecError(offset: codeAt, reason: .invalidValue(field: "block kind code", value: Int64(code)))
            }
            previous = Int(code)
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
        return BlockKindCounts(base: r.base, start: start, entryCount: Int(entries))
    }

    @usableFromInline
    package struct Iterator: IteratorProtocol {
        @usableFromInline var reader: ByteReader
        @usableFromInline var left: Int

        /// The next (code, count) entry.
        @inlinable
        package mutating func next() -> (code: UInt8, count: Int)? {
            guard left > 0 else { return nil }
            left -= 1
            // Checked when the block was opened: these reads do not fail.
            guard let code = try? reader.byte(), let n = try? reader.varint() else { return nil }
            return (code, Int(n))
        }
    }

    @inlinable
    package func makeIterator() -> Iterator {
        Iterator(reader: ByteReader(base: base, position: start, end: Int.max), left: entryCount)
    }

    /// The number of the block's events with `code` (0 when it has none).
    /// - Complexity: O(entries), at most 23.
    @inlinable
    package func count(of code: UInt8) -> Int {
        for entry in self where entry.code >= code { return entry.code == code ? entry.count : 0 }
        return 0
    }
}

/// A builder's running counts per code, and the bytes their summary will take.
@usableFromInline
struct KindTally {
    /// Counts indexed by ``slot(_:)``.
    @usableFromInline var counts: [Int]
    /// The slots with a nonzero count, one bit each.
    @usableFromInline var present: (UInt64, UInt64)
    /// The summary's encoded size: the entry count and each entry's code and count.
    @usableFromInline var byteCount: Int

    @usableFromInline
    init() {
        counts = [Int](repeating: 0, count: 0x71)
        present = (0, 0)
        byteCount = 1
    }

    /// The index of `code` in ``counts``: the code itself, or 0x70 for the unclassified code.
    @inlinable
    static func slot(_ code: UInt8) -> Int { code == RecordFormat.unclassifiedKindCode ? 0x70 : Int(code & 0x7F) }

    @inlinable
    static func code(ofSlot slot: Int) -> UInt8 { slot == 0x70 ? RecordFormat.unclassifiedKindCode : UInt8(slot) }

    @inlinable
    mutating func reset() {
        forEachSlot { counts[$0] = 0 }
        present = (0, 0)
        byteCount = 1
    }

    /// The summary's size after counting one more event of `code`.
    @inlinable
    func byteCount(adding code: UInt8) -> Int {
        let old = counts[KindTally.slot(code)]
        return old == 0 ? byteCount &+ 2 : byteCount &+ varintSize(UInt64(old &+ 1)) &- varintSize(UInt64(old))
    }

    /// Counts `n` more events of `code`.
    @inlinable
    mutating func add(_ code: UInt8, _ n: Int = 1) {
        let slot = KindTally.slot(code)
        let old = counts[slot]
        let new = old &+ n
        counts[slot] = new
        if old == 0 {
            byteCount &+= 1 &+ varintSize(UInt64(new))
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

    /// Entries of the summary.
    @inlinable
    var entryCount: Int { present.0.nonzeroBitCount &+ present.1.nonzeroBitCount }

    /// Writes the summary: the entry count, then each code and its count.
    @inlinable
    func write(_ w: inout ByteWriter) {
        w.varint(UInt64(entryCount))
        forEachSlot { slot in
            w.byte(KindTally.code(ofSlot: slot))
            w.varint(UInt64(counts[slot]))
        }
    }
}
