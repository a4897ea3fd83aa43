import BoardwalkCodec
import BoardwalkStore

/// Strings of one scan's snapshot by id, resolved once each: a field read on many events costs one
/// dictionary lookup, not one LMDB lookup and one `String` allocation per event.
/// Memory grows with the distinct strings the query reads.
final class SnapshotStrings {
    let snapshot: Snapshot
    /// Open addressing over a power-of-two table: id → index in `values`, with a multiplicative hash (a
    /// `Dictionary` would run SipHash on every field read).
    // Unchecked: the cache is used from one scan on one thread, and the runtime's exclusivity checks on these
    // class properties cost more than the lookup itself.
    @exclusivity(unchecked) private var keys: [UInt32]
    @exclusivity(unchecked) private var slots: [Int32]
    @exclusivity(unchecked) private var values: [String?] = []
    @exclusivity(unchecked) private var mask: Int
    private static let empty = UInt32.max

    init(_ snapshot: Snapshot) {
        self.snapshot = snapshot
        keys = [UInt32](repeating: SnapshotStrings.empty, count: 256)
        slots = [Int32](repeating: -1, count: 256)
        mask = 255
    }

    @inline(__always)
    private static func hash(_ id: UInt32, _ mask: Int) -> Int {
        Int(truncatingIfNeeded: (UInt64(id) &* 0x9E37_79B9_7F4A_7C15) >> 32) & mask
    }

    func string(_ id: StringID) -> String? {
        // The empty marker is not a valid id (ids are below the store's string count): never cached.
        if id == SnapshotStrings.empty { return snapshot.string(for: id) }
        var i = SnapshotStrings.hash(id, mask)
        while true {
            let k = keys[i]
            if k == id { return values[Int(slots[i])] }
            if k == SnapshotStrings.empty { break }
            i = (i + 1) & mask
        }
        // A miss: resolve once (an unknown id is remembered as absent too).
        let s = snapshot.string(for: id)
        keys[i] = id
        slots[i] = Int32(truncatingIfNeeded: values.count)
        values.append(s)
        if values.count * 2 > keys.count { grow() }
        return s
    }

    private func grow() {
        let oldKeys = keys, oldSlots = slots
        keys = [UInt32](repeating: SnapshotStrings.empty, count: oldKeys.count * 2)
        slots = [Int32](repeating: -1, count: oldKeys.count * 2)
        mask = keys.count - 1
        for (j, k) in oldKeys.enumerated() where k != SnapshotStrings.empty {
            var i = SnapshotStrings.hash(k, mask)
            while keys[i] != SnapshotStrings.empty { i = (i + 1) & mask }
            keys[i] = k
            slots[i] = oldSlots[j]
        }
    }
}
