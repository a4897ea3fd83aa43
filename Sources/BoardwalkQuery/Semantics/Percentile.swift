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

    /// The `q`-quantile of unsorted values.
    /// - Complexity: O(n log n).
    static func of(_ values: [Double], _ q: Double) -> Double? { ofSorted(values.sorted(), q) }
}
