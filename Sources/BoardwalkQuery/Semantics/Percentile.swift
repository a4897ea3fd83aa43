/// Percentiles by linear interpolation between closest ranks (semantics rule 6): numpy's default "linear",
/// Excel PERCENTILE.INC, DuckDB `quantile_cont`. Exact, never sampled.
enum Percentile {
    /// The `q`-quantile (0...1) of `values`, which must be sorted ascending; nil when empty.
    /// - Complexity: O(1).
    static func ofSorted(_ values: [Double], _ q: Double) -> Double? {
        guard !values.isEmpty else { return nil }
        let h = Double(values.count - 1) * q
        let lower = Int(h.rounded(.down))
        let upper = min(lower + 1, values.count - 1)
        let fraction = h - Double(lower)
        return values[lower] + fraction * (values[upper] - values[lower])
    }

    /// The `q`-quantile of unsorted values: the same number ``ofSorted(_:_:)`` gives on the sorted values,
    /// found by selection (the two closest ranks) instead of a full sort: a radix selection over the values' bit
    /// patterns, which has no data-dependent branch per value (a quickselect's comparisons are mispredicted about
    /// once per value visited: 6 % of a median onboarding's screen funnel in `perf`, for 16 medians of 8 500 values).
    /// - Complexity: O(n): a pass to make the keys, the selection (a pass to find the highest differing bit, then at
    ///   most eight passes of counting and keeping over a shrinking set), and a pass for the next rank.
    static func of(_ values: [Double], _ q: Double) -> Double? {
        guard !values.isEmpty else { return nil }
        // Small inputs sort as fast.
        if values.count < 32 { return ofSorted(values.sorted(), q) }
        let n = values.count
        let h = Double(n - 1) * q
        let lower = Int(h.rounded(.down))
        let fraction = h - Double(lower)
        return withUnsafeTemporaryAllocation(of: UInt64.self, capacity: n) { keys -> Double in
            // NaN has no rank and -0 equals 0, so either would make "the value at rank k" depend on the algorithm;
            // and with an infinity, the interpolation below can be NaN even where `fraction` is 0. Those keep the
            // sorting definition (found in the pass that makes the keys, without a branch per value).
            var special = false
            values.withUnsafeBufferPointer { values in
                for i in 0..<n {
                    let bits = values[i].bitPattern
                    special = special || (bits & ~(1 << 63)) >= 0x7FF0_0000_0000_0000 || bits == 1 << 63
                    keys[i] = orderedKey(values[i])
                }
            }
            if special { return ofSorted(values.sorted(), q)! }
            let key = select(keys, rank: lower)
            var next = key
            // With `fraction` 0 and finite values, the next rank does not change the result (a median of an odd count).
            if lower + 1 < n && fraction != 0 {
                // The next rank: the same value when it fills ranks past `lower`, else the smallest one above it.
                var atMost = 0
                var above = UInt64.max
                for value in values {
                    let k = orderedKey(value)
                    atMost &+= k <= key ? 1 : 0
                    above = min(above, k > key ? k : .max)
                }
                next = atMost > lower + 1 ? key : above
            }
            let low = double(fromKey: key)
            return low + fraction * (double(fromKey: next) - low)
        }
    }

    /// A key whose unsigned order is the order of the numbers (for numbers that are not NaN nor -0): the sign
    /// bit flipped for positive numbers, every bit for negative ones.
    @inline(__always)
    static func orderedKey(_ x: Double) -> UInt64 {
        let bits = x.bitPattern
        return bits & (1 << 63) == 0 ? bits | (1 << 63) : ~bits
    }

    @inline(__always)
    static func double(fromKey key: UInt64) -> Double {
        Double(bitPattern: key & (1 << 63) != 0 ? key & ~(1 << 63) : ~key)
    }

    /// The key of rank `rank` (0-based) among `keys`, which it reorders: a most-significant-digit radix selection,
    /// eight bits at a time from the highest bit where the keys differ, keeping only the keys of the digit that
    /// holds the rank.
    static func select(_ keys: UnsafeMutableBufferPointer<UInt64>, rank: Int) -> UInt64 {
        var count = keys.count
        var rank = rank
        // Bits above the highest one where two keys differ are the same in all: start below them.
        var differ: UInt64 = 0
        for i in 0..<count { differ |= keys[i] ^ keys[0] }
        if differ == 0 { return keys[0] }
        var shift = max(0, 64 - differ.leadingZeroBitCount - 8)
        return withUnsafeTemporaryAllocation(of: Int.self, capacity: 256) { counts -> UInt64 in
            while true {
                counts.initialize(repeating: 0)
                for i in 0..<count { counts[Int(truncatingIfNeeded: (keys[i] >> UInt64(shift)) & 0xFF)] += 1 }
                var digit = 0
                while rank >= counts[digit] {
                    rank -= counts[digit]
                    digit += 1
                }
                if counts[digit] != count {
                    // Keep the keys of `digit`, in place: every key is written, the position advances only for them.
                    var kept = 0
                    for i in 0..<count {
                        let k = keys[i]
                        keys[kept] = k
                        kept &+= Int(truncatingIfNeeded: (k >> UInt64(shift)) & 0xFF) == digit ? 1 : 0
                    }
                    count = kept
                }
                if count == 1 || shift == 0 { return keys[0] }  // one key left, or all the left ones are equal
                shift = max(0, shift - 8)
            }
        }
    }
}
