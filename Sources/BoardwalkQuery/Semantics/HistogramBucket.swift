/// Histogram buckets in decimal terms: bucket *k* of a step *w* holds the values *f* with *k·w ≤ f < (k+1)·w*, with
/// *f* and *w* taken as the decimals they are written as (docs/query-language.md, `histogram`).
///
/// Binary floating point cannot hold most decimal steps: 0.3 / 0.1 is 2.9999999999999996, so `floor(f / w)` put 0.3 in
/// the bucket of 0.2 (QA, session 7). A quotient within a relative 4·10⁻¹⁵ of an integer (a few units in its last
/// place: the rounding error of the division) is that integer, which is what exact decimal arithmetic gives for values
/// written with fewer significant digits than a `Double` holds; the bucket's start is
/// then rounded to the step's decimal digits, so that bucket 3 of step 0.1 is 0.3, not 0.30000000000000004. The
/// ClickHouse translation computes the same (`ClickHouseTranslator`, histogram).
enum HistogramBucket {
    /// How close to an integer, relative to it, a quotient must be to count as that integer.
    static let tolerance = 4e-15

    /// The start of the bucket that holds `x` (finite) for the positive step `step`.
    static func start(of x: Double, step: Double) -> Double {
        let q = x / step
        let nearest = q.rounded()
        let k = abs(q - nearest) <= tolerance * max(nearest.magnitude, 1) ? nearest : q.rounded(.down)
        let digits = decimalDigits(of: step)
        guard digits > 0 else { return k * step }
        // k · step rounded to the step's digits: the Double nearest to the decimal k · w.
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let m = (step * scale).rounded()
        return (k * m).magnitude < 0x1p53 ? k * m / scale : k * step
    }

    /// The digits after the decimal point of `step` as written (its shortest decimal form), up to 15.
    static func decimalDigits(of step: Double) -> Int {
        var scale = 1.0
        for d in 0...15 {
            let m = step * scale
            if abs(m - m.rounded()) <= tolerance * max(m.magnitude, 1) { return d }
            scale *= 10
        }
        return 15
    }
}
