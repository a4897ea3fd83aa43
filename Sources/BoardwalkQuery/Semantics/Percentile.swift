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
    /// found by selection (the two closest ranks) instead of a full sort.
    /// - Complexity: O(n) expected.
    static func of(_ values: [Double], _ q: Double) -> Double? {
        guard !values.isEmpty else { return nil }
        // Small inputs sort as fast; NaN has no rank and -0 equals 0, so either would make "the value at
        // rank k" depend on the algorithm: those keep the sorting definition.
        if values.count < 32 || values.contains(where: { $0.isNaN || ($0 == 0 && $0.sign == .minus) }) {
            return ofSorted(values.sorted(), q)
        }
        var copy = values
        let n = copy.count
        let h = Double(n - 1) * q
        let lower = Int(h.rounded(.down))
        let fraction = h - Double(lower)
        return copy.withUnsafeMutableBufferPointer { b -> Double in
            select(b, lower)
            // After selection every element right of `lower` is >= it: the next rank is their minimum.
            var next = b[lower]
            if lower + 1 < n {
                next = b[lower + 1]
                for i in (lower + 2)..<n where b[i] < next { next = b[i] }
            }
            return b[lower] + fraction * (next - b[lower])
        }
    }

    /// Reorders `a` so that `a[k]` is the element of rank `k`, everything before it `<=` and after it `>=`
    /// (Hoare partitioning around a median of three; duplicates split evenly).
    static func select(_ a: UnsafeMutableBufferPointer<Double>, _ k: Int) {
        var lo = 0, hi = a.count - 1
        while hi > lo {
            let mid = lo + (hi - lo) / 2
            if a[mid] < a[lo] { a.swapAt(mid, lo) }
            if a[hi] < a[lo] { a.swapAt(hi, lo) }
            if a[hi] < a[mid] { a.swapAt(hi, mid) }
            let pivot = a[mid]
            var i = lo, j = hi
            while i <= j {
                while a[i] < pivot { i += 1 }
                while pivot < a[j] { j -= 1 }
                if i <= j {
                    a.swapAt(i, j)
                    i += 1
                    j -= 1
                }
            }
            // [lo, j] <= pivot, [i, hi] >= pivot, and everything between equals the pivot.
            if k <= j { hi = j } else if k >= i { lo = i } else { return }
        }
    }
}
