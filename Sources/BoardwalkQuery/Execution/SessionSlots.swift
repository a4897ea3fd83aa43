/// Session id → slot, open addressing over a power-of-two table: the whole-store fold looks one up per event,
/// where a `Dictionary` would hash with SipHash. Each entry packs the key (high 32 bits) and its slot (low 32
/// bits) in one word, so a lookup costs one memory access: the table is read at random, once per event, and
/// is larger than the first-level cache for a scope of thousands of sessions. `UInt64.max` marks an empty
/// entry (a slot never has its top bit set), so every 32-bit id is a valid key.
///
/// A key's probe starts at `((key − base) × multiplier) >> 32`, masked to the table: with base 0 and a
/// Fibonacci multiplier, a hash that scatters keys; for a table of known ids (``init(ordered:)``), base and
/// multiplier that spread the ids' range over the table in order.
struct SessionSlots {
    private var entries: [UInt64]
    private var mask: Int
    private(set) var count = 0
    private let base: UInt32
    private let multiplier: UInt64
    private static let empty = UInt64.max
    private static let fibonacci: UInt64 = 0x9E37_79B9_7F4A_7C15

    init(capacity: Int) {
        self.init(size: SessionSlots.size(for: capacity), base: 0, multiplier: SessionSlots.fibonacci)
    }

    private init(size: Int, base: UInt32, multiplier: UInt64) {
        entries = SessionSlots.emptyEntries(size)
        mask = size - 1
        self.base = base
        self.multiplier = multiplier
    }

    /// `size` empty entries, their pages mapped in one call rather than a fault each (``prefault(_:byteCount:)``).
    private static func emptyEntries(_ size: Int) -> [UInt64] {
        [UInt64](unsafeUninitializedCapacity: size) { buffer, count in
            prefault(UnsafeMutableRawPointer(buffer.baseAddress!), byteCount: size * MemoryLayout<UInt64>.stride)
            buffer.initialize(repeating: SessionSlots.empty)
            count = size
        }
    }

    private static func size(for capacity: Int) -> Int {
        var size = 1024
        while size < capacity * 2 { size <<= 1 }
        return size
    }

    /// A table of `ids` (distinct), each with its index in `ids` as its slot, placed in the order of the ids:
    /// keys near each other in value sit near each other in the table.
    ///
    /// A scope's session ids are dense in first-seen order and its scan meets the sessions of a screen in time
    /// order, so its lookups sweep the table instead of landing at random: the hardware's prefetcher keeps
    /// the table in cache while the scan's blocks stream past it (the scattered table's probe was a sixth of the
    /// scan loop's time in `perf`, a median onboarding at 1 M sessions). Ids crowded into a part of their range
    /// make long runs of occupied entries, which every lookup of an absent id landing in one walks to its end
    /// (a scope scan looks up sessions outside the scope too: 600 k ids packed at one end of their range measured
    /// 190 000 probes per miss). So the table is built with the scattering hash instead when the
    /// ids are displaced by more than two entries on average from where their value puts them, or when any run of
    /// occupied entries is longer than ``longestOrderedRun``.
    /// - Complexity: O(ids + table size).
    init(ordered ids: [UInt32]) {
        let size = SessionSlots.size(for: ids.count)
        guard let low = ids.min(), let high = ids.max() else {
            self.init(capacity: 0)
            return
        }
        // Spread the range [low, high] over the table: (id − low) × multiplier < size × 2³² (so the multiplier is
        // below 2⁶³, never the Fibonacci one).
        let span = UInt64(high - low) + 1
        self.init(size: size, base: low, multiplier: max((UInt64(size) << 32) / span, 1))
        var displacement = 0
        for (slot, id) in ids.enumerated() {
            displacement += insert(id, slot: slot)
            if displacement > 2 * ids.count + 64 { break }
        }
        if displacement > 2 * ids.count + 64 || longestRun > SessionSlots.longestOrderedRun {
            self = SessionSlots(capacity: ids.count)
            for (slot, id) in ids.enumerated() { _ = insert(id, slot: slot) }
        }
    }

    /// The longest run of occupied entries an ordered table may have (a scattering hash at half load has runs
    /// of a few entries; an absent key's lookup walks at most one run).
    static let longestOrderedRun = 32

    /// The longest run of consecutive occupied entries, the table taken as a ring.
    private var longestRun: Int {
        // Once around from an empty entry, so that a run through the end continues at the start (a table full of
        // keys has one run).
        guard let start = entries.firstIndex(of: SessionSlots.empty) else { return entries.count }
        var longest = 0, run = 0
        for k in 1...entries.count {
            if entries[(start + k) & mask] == SessionSlots.empty {
                run = 0
            } else {
                run += 1
                longest = max(longest, run)
            }
        }
        return longest
    }

    /// Places `key` with `slot` (a key not in the table; no growth): the number of entries it was moved past.
    private mutating func insert(_ key: UInt32, slot: Int) -> Int {
        var i = start(key)
        var moved = 0
        while entries[i] != SessionSlots.empty {
            i = (i + 1) & mask
            moved += 1
        }
        entries[i] = UInt64(key) << 32 | UInt64(UInt32(truncatingIfNeeded: slot) & 0x7FFF_FFFF)
        count += 1
        return moved
    }

    /// Whether keys are placed in the order of their values (``init(ordered:)`` kept its placement).
    var placesInOrder: Bool { multiplier != SessionSlots.fibonacci }

    @inline(__always)
    private func start(_ key: UInt32) -> Int {
        Int(truncatingIfNeeded: (UInt64(key &- base) &* multiplier) >> 32) & mask
    }

    /// The slot of `key`, inserting it with slot `count` (the next one) when new.
    @inline(__always)
    mutating func slot(_ key: UInt32) -> (slot: Int, inserted: Bool) {
        var i = start(key)
        while true {
            let e = entries[i]
            if e == SessionSlots.empty { break }
            if UInt32(truncatingIfNeeded: e >> 32) == key { return (Int(UInt32(truncatingIfNeeded: e)), false) }
            i = (i + 1) & mask
        }
        // 31 bits of slot: 2³¹ sessions would take hundreds of GiB of folds before they got here.
        entries[i] = UInt64(key) << 32 | UInt64(UInt32(truncatingIfNeeded: count) & 0x7FFF_FFFF)
        count += 1
        if count * 2 > entries.count { grow() }
        return (count - 1, true)
    }

    /// The slot of `key`, or nil when it was never inserted.
    @inline(__always)
    func existingSlot(_ key: UInt32) -> Int? {
        var i = start(key)
        while true {
            let e = entries[i]
            if e == SessionSlots.empty { return nil }
            if UInt32(truncatingIfNeeded: e >> 32) == key { return Int(UInt32(truncatingIfNeeded: e)) }
            i = (i + 1) & mask
        }
    }

    /// The same table in storage of its own: a worker of a parallel scan looks up every event, and a buffer shared
    /// with the other workers would share its reference count's cache line too.
    /// - Complexity: O(table size).
    func unshared() -> SessionSlots {
        var copy = self
        copy.entries = entries.map { $0 }
        return copy
    }

    private mutating func grow() {
        let old = entries
        entries = SessionSlots.emptyEntries(old.count * 2)
        mask = entries.count - 1
        for e in old where e != SessionSlots.empty {
            var i = start(UInt32(truncatingIfNeeded: e >> 32))
            while entries[i] != SessionSlots.empty { i = (i + 1) & mask }
            entries[i] = e
        }
    }
}
