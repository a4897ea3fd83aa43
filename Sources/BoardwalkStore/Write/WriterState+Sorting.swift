import BoardwalkCodec
import BoardwalkModel

extension WriterState {
    /// Sets ``order`` to one sort key per entry, in entry order, with `key` as the leading field: written
    /// through a buffer sized once (appending element by element checked uniqueness and capacity each time,
    /// ~40 instructions per event and sort).
    @inline(__always)
    func fillOrder(_ key: (Entry) -> UInt64) {
        let n = entries.count
        var keys: [SortKey] = []
        swap(&keys, &order)
        keys.removeAll(keepingCapacity: true)
        keys.append(contentsOf: repeatElement(SortKey(a: 0, i: 0), count: n))
        entries.withUnsafeBufferPointer { e in
            keys.withUnsafeMutableBufferPointer { o in
                for i in 0..<n { o[i] = SortKey(a: key(e[i]), i: i) }
            }
        }
        swap(&keys, &order)
    }

    /// Sorts ``order`` into (a, time, seq) order.
    ///
    /// A stable radix sort on `a` keeps arrival order among equal `a`s, and arrival order is seq order;
    /// when times also never decrease within a group (events arriving in time order, the common case),
    /// that is already (a, time, seq) order. Otherwise a comparison sort finishes the job.
    /// Only the bytes of `a` that differ between keys get a pass (e.g. the screen index's high byte, zero
    /// in every key of the usual onboarding; in the append benchmarks this saved nothing measurable).
    /// - Complexity: O(n · bytes of `a` that vary), or O(n log n) for out-of-order times.
    func sortOrder() {
        let n = order.count
        guard n > 1 else { return }
        if sortBuffer.count != n { sortBuffer = order }
        // Work on locals: class properties would pay an exclusivity check per access.
        var source = order
        var target = sortBuffer
        order = []
        sortBuffer = []
        WriterState.radixSort(&source, scratch: &target) { $0.a }
        let entries = self.entries
        let sorted = source.withUnsafeBufferPointer { keys in
            entries.withUnsafeBufferPointer { e in
                for j in 1..<n where keys[j - 1].a == keys[j].a {
                    let x = e[keys[j - 1].i], y = e[keys[j].i]
                    // Seqs too: a fold's entries come block by block, and a block of a later batch may come before
                    // one of an earlier batch with events at the same time (a batch's entries are in seq order).
                    if x.timeBits > y.timeBits || (x.timeBits == y.timeBits && x.seq > y.seq) { return false }
                }
                return true
            }
        }
        if !sorted {
            source.sort { x, y in
                if x.a != y.a { return x.a < y.a }
                let ex = entries[x.i], ey = entries[y.i]
                if ex.timeBits != ey.timeBits { return ex.timeBits < ey.timeBits }
                return ex.seq < ey.seq
            }
        }
        order = source
        sortBuffer = target
    }

    /// Sets ``order`` to ``entries`` in (group, time, seq) order.
    func sortByGroup() {
        // The sort key is the group in as few bits as it takes: onboarding above the screen, both only as wide as
        // their largest value in the batch, and the group of events without a position (onboarding 0xFFFF_FFFF,
        // screen 0xFFFF) as the onboarding just past the largest. Order and grouping are those of (onboarding,
        // screen), but the radix sort passes over about 20 bits instead of 48 (the no-position key alone made
        // every byte of the key differ).
        var maxOnboarding: UInt32 = 0
        var maxScreen: UInt16 = 0
        for e in entries where e.onboarding != RecordFormat.noOnboarding {
            maxOnboarding = max(maxOnboarding, e.onboarding)
            maxScreen = max(maxScreen, e.screen)
        }
        let screenBits = UInt64(UInt16.bitWidth - maxScreen.leadingZeroBitCount)
        let unpositioned = (UInt64(maxOnboarding) + 1) << screenBits
        fillOrder { e in
            e.onboarding == RecordFormat.noOnboarding
                ? unpositioned : UInt64(e.onboarding) << screenBits | UInt64(e.screen)
        }
        sortOrder()
    }

    /// `items` in `key` order, stably: a least-significant-digit radix sort on the bytes of the key that are not
    /// the same in every element (with ids dense from 0, usually the low three bytes of a session id and one or
    /// two of an onboarding id). For the batch's new (onboarding, session) pairs a comparison sort cost about
    /// 200 instructions per event with 100 000 sessions in flight.
    /// - Complexity: O(n · varying bytes).
    static func radixSorted<T>(_ items: [T], key: (T) -> UInt64) -> [T] {
        var source = items
        var scratch = items
        radixSort(&source, scratch: &scratch, key: key)
        return source
    }

    /// Sorts `items` by `key`, stably, as ``radixSorted(_:key:)`` does; `scratch` (as many elements, any values)
    /// is the other buffer of the passes, so that a caller keeping it saves an allocation per sort.
    ///
    /// Digits are 11 bits wide for a large input (8 for a small one, where 2 048 counters would cost more than
    /// the elements), and only the bits that differ between keys get one: a digit starts at the lowest differing
    /// bit not yet covered, so a run of bits equal in every key is skipped (with 10 000 session ids below 2^19,
    /// two passes instead of three bytes'). One pass over the input counts every digit; then one scatter pass per
    /// digit.
    /// - Complexity: O(n · digits + 2^digit bits · digits).
    static func radixSort<T>(_ items: inout [T], scratch: inout [T], key: (T) -> UInt64) {
        guard let firstItem = items.first, items.count > 1 else { return }
        precondition(scratch.count == items.count, "the scratch buffer must hold as many elements")
        let first = key(firstItem)
        var varying: UInt64 = 0
        for item in items { varying |= key(item) ^ first }
        guard varying != 0 else { return }
        let width = items.count >= 2048 ? 11 : 8
        let radix = 1 << width
        let digitMask = UInt64(radix - 1)
        // The digits' shifts: each starts at the lowest differing bit above the previous digit.
        var shifts: [UInt64] = []
        var position: UInt64 = 0
        while position < 64 {
            let above = varying >> position
            if above == 0 { break }
            position += UInt64(above.trailingZeroBitCount)
            shifts.append(position)
            position += UInt64(width)
        }
        var counts = [Int](repeating: 0, count: radix * shifts.count)
        counts.withUnsafeMutableBufferPointer { count in
            shifts.withUnsafeBufferPointer { shifts in
                items.withUnsafeBufferPointer { src in
                    if shifts.count == 2 {
                        // The usual case (group keys and session ids of a batch span about 20 bits): both digits counted
                        // without the inner loop over the digits, ~10 instructions per element and sort less.
                        let s0 = shifts[0], s1 = shifts[1]
                        for item in src {
                            let k = key(item)
                            count[Int(truncatingIfNeeded: (k &>> s0) & digitMask)] &+= 1
                            count[radix &+ Int(truncatingIfNeeded: (k &>> s1) & digitMask)] &+= 1
                        }
                    } else {
                        for item in src {
                            let k = key(item)
                            for d in 0..<shifts.count {
                                count[d &* radix &+ Int(truncatingIfNeeded: (k &>> shifts[d]) & digitMask)] &+= 1
                            }
                        }
                    }
                }
                for d in 0..<shifts.count {
                    let shift = shifts[d]
                    let base = d &* radix
                    var sum = 0
                    for b in base..<(base &+ radix) {
                        let c = count[b]
                        count[b] = sum
                        sum &+= c
                    }
                    items.withUnsafeBufferPointer { src in
                        scratch.withUnsafeMutableBufferPointer { dst in
                            for item in src {
                                let b = base &+ Int(truncatingIfNeeded: (key(item) &>> shift) & digitMask)
                                dst[count[b]] = item
                                count[b] &+= 1
                            }
                        }
                    }
                    swap(&items, &scratch)
                }
            }
        }
    }
}
