/// Histogram buckets in decimal terms: bucket *k* of a step *w* holds the values *f* with *k·w ≤ f < (k+1)·w*, with
/// *f* and *w* taken as the decimals they are written as (docs/query-language.md, `histogram`).
///
/// Binary floating point cannot hold most decimal steps: 0.3 / 0.1 is 2.9999999999999996, so `floor(f / w)` would put
/// 0.3 in the bucket of 0.2. A quotient within a relative 4.5·10⁻¹⁶ of an integer (about two units in its
/// last place: the rounding of the value, the step and the division) is that integer, which is what exact decimal
/// arithmetic gives for values written with fewer significant digits than a `Double` holds; a value with more
/// digits, closer to a bucket's edge than that, is not decided by this. The bucket's start is then rounded to the
/// step's decimal digits (0.3, not 0.30000000000000004) when the step has at most 15. The ClickHouse translation
/// computes the same (`ClickHouseTranslator`, histogram).
enum HistogramBucket {
    /// How close to an integer, relative to the quotient, a quotient must be to count as that integer.
    static let tolerance = 4.5e-16

    /// The start of the bucket that holds `x` for the positive step `step`; nil when `x` is not finite or the
    /// start would not be (a step so small that the bucket's number overflows).
    static func start(of x: Double, step: Double) -> Double? {
        let q = x / step
        guard q.isFinite else { return nil }
        let nearest = q.rounded()
        let k = abs(q - nearest) <= tolerance * q.magnitude ? nearest : q.rounded(.down)
        guard let digits = decimalDigits(of: step), digits > 0 else { return (k * step).finiteOrNil }
        // k · step rounded to the step's digits: the Double nearest to the decimal k · w.
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let m = (step * scale).rounded()
        return (k * m).magnitude < 0x1p53 ? k * m / scale : (k * step).finiteOrNil
    }

    /// The digits after the decimal point of `step` as written (its shortest decimal form), when at most 15; nil for
    /// a step with more (its bucket starts are then `k · step` as computed).
    static func decimalDigits(of step: Double) -> Int? {
        var scale = 1.0
        for d in 0...15 {
            let m = step * scale
            if abs(m - m.rounded()) <= tolerance * m.magnitude { return d }
            scale *= 10
        }
        return nil
    }
}

private extension Double {
    var finiteOrNil: Double? { isFinite ? self : nil }
}
