// The append loop's duplicate bookkeeping for one batch (docs/storage.md, "Duplicates"): which event keys the batch
// has seen, and each group's latest stored time. Both were standard-library collections (`Set<DuplicateKey>` and two
// `[UInt64: UInt64]` on the writer object): with an event id on nearly every event (the `ingest` benchmark), their
// SipHash rounds and the dynamic exclusivity checks of the writer's dictionaries cost ~900 instructions per event,
// a fifth of the append. These are open-addressing tables with a seeded multiply-fold hash, kept by the loop as
// locals and emptied per batch in O(1).

/// A 64-bit mix of two words: the high and low halves of their full 128-bit product, xored (as wyhash folds). With
/// a per-process random seed in the inputs, colliding keys cannot be chosen without knowing it.
@inline(__always)
func foldedMultiply(_ x: UInt64, _ y: UInt64) -> UInt64 {
    let p = x.multipliedFullWidth(by: y)
    return p.high ^ p.low
}

/// A 128-bit hash of `bytes`: two multiply-fold chains over its 8-byte words, each with its own half of `seed`.
/// With a seed random per process, which byte strings collide cannot be chosen from outside.
/// - Complexity: O(n) in the bytes.
func contentHash(_ bytes: UnsafeRawBufferPointer, seed: (UInt64, UInt64)) -> (UInt64, UInt64) {
    let n = bytes.count
    var a = seed.0 ^ UInt64(n)
    var b = seed.1 ^ UInt64(n) &* 0x9E37_79B9_7F4A_7C15
    var i = 0
    while i + 8 <= n {
        let w = bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)
        a = foldedMultiply(a ^ w, 0xA076_1D64_78BD_642F ^ seed.1)
        b = foldedMultiply(b ^ w, 0xE703_7ED1_A0B4_28DB ^ seed.0)
        i += 8
    }
    if i < n {
        var w: UInt64 = 0
        for k in 0..<(n - i) { w |= UInt64(bytes[i + k]) << (8 * UInt64(k)) }
        a = foldedMultiply(a ^ w, 0xA076_1D64_78BD_642F ^ seed.1)
        b = foldedMultiply(b ^ w, 0xE703_7ED1_A0B4_28DB ^ seed.0)
    }
    return (foldedMultiply(a, 0x8EBC_6AF0_9C88_C6E3), foldedMultiply(b, 0x5899_65CC_7537_4CC3))
}

/// The event keys (group, time, event id or content) seen in the running batch: a set that only grows within a batch.
///
/// Slots hold a generation number above the key's index + 1, so that emptying the set for the next batch is one
/// increment (the slot array is only zeroed when the generation wraps). Keys are compared whole: the hash only
/// decides where a key is looked for.
struct BatchKeySet {
    private var keys: [WriterState.DuplicateKey] = []
    /// Generation (high 32 bits) ‖ index + 1 into `keys` (low 32 bits); a slot of another generation is empty.
    private var slots: [UInt64] = []
    private var generation: UInt64 = 1
    private let seed: (UInt64, UInt64)

    /// An empty set; `seed` should be random per process (see ``foldedMultiply(_:_:)``). `generation` is for tests,
    /// which start near the wrap-around.
    init(seed: (UInt64, UInt64), generation: UInt32 = 1) {
        self.seed = seed
        self.generation = UInt64(Swift.max(generation, 1))
    }

    /// The number of keys.
    var count: Int { keys.count }

    @inline(__always)
    private func hash(_ k: WriterState.DuplicateKey) -> UInt64 {
        foldedMultiply(k.a ^ seed.0, k.b ^ seed.1)
            ^ foldedMultiply(k.group ^ seed.1, k.timeBits ^ 0x9E37_79B9_7F4A_7C15)
    }

    /// Empties the set, keeping its memory.
    mutating func removeAll() {
        keys.removeAll(keepingCapacity: true)
        generation &+= 1
        if generation > UInt64(UInt32.max) {
            generation = 1
            slots.withUnsafeMutableBufferPointer { s in
                for i in s.indices { s[i] = 0 }
            }
        }
    }

    /// Inserts `key`; `false` when it was in the set already.
    /// - Complexity: O(1) expected.
    @inline(__always)
    mutating func insert(_ key: WriterState.DuplicateKey) -> Bool {
        if _slowPath((keys.count + 1) * 2 > slots.count) { grow() }
        let h = hash(key)
        let tag = generation << 32
        let found: Int? = slots.withUnsafeBufferPointer { s in
            keys.withUnsafeBufferPointer { k in
                let mask = s.count - 1
                var i = Int(truncatingIfNeeded: h) & mask
                while true {
                    let slot = s[i]
                    if slot & 0xFFFF_FFFF_0000_0000 != tag { return i }
                    let other = k[Int(truncatingIfNeeded: slot & 0xFFFF_FFFF) - 1]
                    if other.a == key.a && other.b == key.b && other.group == key.group
                        && other.timeBits == key.timeBits
                    {
                        return nil
                    }
                    i = (i + 1) & mask
                }
            }
        }
        guard let i = found else { return false }
        keys.append(key)
        slots.withUnsafeMutableBufferPointer { s in s[i] = tag | UInt64(keys.count) }
        return true
    }

    /// Doubles the table (at least 1 024 slots) and places this generation's keys again.
    @inline(never)
    private mutating func grow() {
        var size = Swift.max(1024, slots.count)
        while size < (keys.count + 1) * 2 { size *= 2 }
        if size == slots.count { size *= 2 }
        var fresh = [UInt64](repeating: 0, count: size)
        let tag = generation << 32
        fresh.withUnsafeMutableBufferPointer { s in
            let mask = size - 1
            for (index, key) in keys.enumerated() {
                var i = Int(truncatingIfNeeded: hash(key)) & mask
                while s[i] & 0xFFFF_FFFF_0000_0000 == tag { i = (i + 1) & mask }
                s[i] = tag | UInt64(index + 1)
            }
        }
        slots = fresh
    }
}

/// Each group's latest stored event time (bits) as the running batch has looked it up, so that the writer's
/// dictionaries (``WriterState/latestTime(of:txn:)``) are asked once per group and batch rather than once per event
/// with an id. The value of a group cannot change during the batch's loop: blocks are written after it.
struct GroupTimeMemo {
    /// Group + 1 (0 = empty slot) and its time bits, side by side.
    private var slots: [(group: UInt64, time: UInt64)] = []
    private var used = 0
    private let seed: UInt64

    init(seed: UInt64) {
        self.seed = seed
    }

    @inline(__always)
    private static func home(_ group: UInt64, seed: UInt64, mask: Int) -> Int {
        Int(truncatingIfNeeded: foldedMultiply(group ^ seed, 0x9E37_79B9_7F4A_7C15)) & mask
    }

    /// Forgets every group, keeping the memory.
    mutating func removeAll() {
        guard used != 0 else { return }
        slots.withUnsafeMutableBufferPointer { s in
            for i in s.indices { s[i] = (0, 0) }
        }
        used = 0
    }

    /// The time noted for `group`, if any.
    @inline(__always)
    func time(of group: UInt64) -> UInt64? {
        guard !slots.isEmpty else { return nil }
        let seed = self.seed
        return slots.withUnsafeBufferPointer { s in
            let mask = s.count - 1
            var i = GroupTimeMemo.home(group, seed: seed, mask: mask)
            while true {
                let slot = s[i]
                if slot.group == 0 { return nil }
                if slot.group == group &+ 1 { return slot.time }
                i = (i + 1) & mask
            }
        }
    }

    /// Notes `time` for `group`, which is not in the memo.
    mutating func note(_ group: UInt64, time: UInt64) {
        if (used + 1) * 2 > slots.count { grow() }
        let seed = self.seed
        slots.withUnsafeMutableBufferPointer { s in
            let mask = s.count - 1
            var i = GroupTimeMemo.home(group, seed: seed, mask: mask)
            while s[i].group != 0 { i = (i + 1) & mask }
            s[i] = (group &+ 1, time)
        }
        used += 1
    }

    private mutating func grow() {
        let old = slots
        let size = Swift.max(256, old.count * 2)
        let seed = self.seed
        slots = [(group: UInt64, time: UInt64)](repeating: (0, 0), count: size)
        slots.withUnsafeMutableBufferPointer { s in
            let mask = size - 1
            for slot in old where slot.group != 0 {
                var i = GroupTimeMemo.home(slot.group &- 1, seed: seed, mask: mask)
                while s[i].group != 0 { i = (i + 1) & mask }
                s[i] = slot
            }
        }
    }
}
