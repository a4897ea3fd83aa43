import BoardwalkCodec
import BoardwalkModel

/// The distinct groups (onboarding ‖ screen) of a batch's references, by open addressing, with a count each.
struct GroupTable {
    var keys: [UInt64] = []
    var counts: [Int] = []
    private var slots = [Int32](repeating: -1, count: 1024)
    private var mask = 1023

    mutating func reset() {
        for g in keys { slots[slot(of: g)] = -1 }
        keys.removeAll(keepingCapacity: true)
        counts.removeAll(keepingCapacity: true)
    }

    /// The index of `key` (a new one when it is new), its count raised by one.
    @inline(__always)
    mutating func index(of key: UInt64) -> Int32 {
        var i = Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> 40) & mask
        while true {
            let s = slots[i]
            if s < 0 { break }
            if keys[Int(s)] == key {
                counts[Int(s)] += 1
                return s
            }
            i = (i + 1) & mask
        }
        let s = Int32(keys.count)
        slots[i] = s
        keys.append(key)
        counts.append(1)
        if keys.count * 2 > slots.count { grow() }
        return s
    }

    /// The slot holding `key` (which is in the table).
    private func slot(of key: UInt64) -> Int {
        var i = Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> 40) & mask
        while slots[i] < 0 || keys[Int(slots[i])] != key { i = (i + 1) & mask }
        return i
    }

    private mutating func grow() {
        slots = [Int32](repeating: -1, count: slots.count * 2)
        mask = slots.count - 1
        for (s, key) in keys.enumerated() {
            var i = Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> 40) & mask
            while slots[i] >= 0 { i = (i + 1) & mask }
            slots[i] = Int32(s)
        }
    }
}
