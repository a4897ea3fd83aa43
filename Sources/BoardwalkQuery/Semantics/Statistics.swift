#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The statistics behind `ci(…)`, `versus` and the sample-ratio lint: the standard normal distribution, the
/// Wilson score interval, the pooled two-proportion z-test and the chi-square goodness-of-fit test.
///
/// Written here because no statistics library is available to a Swift package on this platform; each function is
/// checked against SciPy to 1e-12 in `StatisticsTests`.
package enum Statistics {
    /// P(Z > z) for a standard normal Z, accurate to the last few bits over the whole line (through `erfc`).
    package static func normalSurvival(_ z: Double) -> Double {
        0.5 * erfc(z / 2.0.squareRoot())
    }

    /// The z with P(Z ≤ z) = `p`, for 0 < p < 1: Acklam's rational approximation (relative error below 1.2e-9),
    /// polished by one step of Halley's method on `erfc`, which brings it to the precision of a `Double`.
    package static func normalQuantile(_ p: Double) -> Double {
        precondition(p > 0 && p < 1, "a probability strictly between 0 and 1")
        // Above the median, 1 − p is exact (Sterbenz), while Φ(x) − p near 1 would cancel: use the lower tail.
        if p > 0.5 { return -normalQuantile(1 - p) }
        let a = [
            -3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02, 1.383577518672690e+02,
            -3.066479806614716e+01, 2.506628277459239e+00,
        ]
        let b = [
            -5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02, 6.680131188771972e+01,
            -1.328068155288572e+01,
        ]
        let c = [
            -7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00, -2.549732539343734e+00,
            4.374664141464968e+00, 2.938163982698783e+00,
        ]
        let d = [7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00]
        var x: Double
        if p < 0.02425 {
            let q = (-2 * log(p)).squareRoot()
            x =
                (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5])
                / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
        } else {
            let q = p - 0.5
            let r = q * q
            x =
                (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q
                / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)
        }
        // Halley: e = Φ(x) − p, u = e·√(2π)·exp(x²/2), x ← x − u / (1 + x·u/2).
        let e = 0.5 * erfc(-x / 2.0.squareRoot()) - p
        let u = e * (2 * Double.pi).squareRoot() * exp(x * x / 2)
        x -= u / (1 + x * u / 2)
        return x
    }

    /// The Wilson score interval of a proportion: `successes` of `trials` at confidence `level` (0 < level < 1).
    /// `nil` when there are no trials.
    package static func wilsonInterval(successes: Int, trials: Int, level: Double) -> (low: Double, high: Double)? {
        guard trials > 0 else { return nil }
        let n = Double(trials)
        let p = Double(successes) / n
        let z = normalQuantile(1 - (1 - level) / 2)
        let z2 = z * z
        let center = (p + z2 / (2 * n)) / (1 + z2 / n)
        let half = z / (1 + z2 / n) * (p * (1 - p) / n + z2 / (4 * n * n)).squareRoot()
        // At 0 or all successes the end is exactly 0 or 1; computed, it can miss by a rounding and leave the rate
        // outside its own interval.
        return (successes == 0 ? 0 : max(0, center - half), successes == trials ? 1 : min(1, center + half))
    }

    /// The pooled two-proportion z-test of `x1`/`n1` against `x2`/`n2`: the statistic and its two-sided p-value
    /// (statsmodels' `proportions_ztest` with its defaults). `nil` when either side has no trials or the pooled
    /// proportion is 0 or 1 (no variance to test against).
    package static func twoProportionZTest(_ x1: Int, _ n1: Int, _ x2: Int, _ n2: Int) -> (z: Double, p: Double)? {
        guard n1 > 0, n2 > 0 else { return nil }
        let pooled = Double(x1 + x2) / Double(n1 + n2)
        let variance = pooled * (1 - pooled) * (1 / Double(n1) + 1 / Double(n2))
        guard variance > 0 else { return nil }
        let z = (Double(x1) / Double(n1) - Double(x2) / Double(n2)) / variance.squareRoot()
        return (z, 2 * normalSurvival(abs(z)))
    }

    /// Whether a two-proportion test on these counts is trustworthy: at least 5 successes and 5 failures on each
    /// side (the usual rule for the normal approximation).
    package static func hasEnoughForZTest(_ x1: Int, _ n1: Int, _ x2: Int, _ n2: Int) -> Bool {
        min(x1, n1 - x1, x2, n2 - x2) >= 5
    }

    /// Pearson's chi-square goodness-of-fit test of `observed` counts against `expected` shares (which need not
    /// sum to 1; they are normalized): the statistic and its p-value with `observed.count − 1` degrees of freedom.
    /// `nil` with fewer than two categories or no observations.
    package static func chiSquareGoodnessOfFit(observed: [Int], expectedShares: [Double]) -> (
        statistic: Double, p: Double
    )? {
        precondition(observed.count == expectedShares.count)
        let total = Double(observed.reduce(0, +))
        let shares = expectedShares.reduce(0, +)
        guard observed.count >= 2, total > 0, shares > 0 else { return nil }
        var statistic = 0.0
        for (count, share) in zip(observed, expectedShares) {
            let expected = total * share / shares
            guard expected > 0 else { return nil }
            let d = Double(count) - expected
            statistic += d * d / expected
        }
        return (statistic, chiSquareSurvival(statistic, degreesOfFreedom: observed.count - 1))
    }

    /// P(X > x) for X chi-square distributed with `k` degrees of freedom: Q(k/2, x/2).
    package static func chiSquareSurvival(_ x: Double, degreesOfFreedom k: Int) -> Double {
        guard x > 0 else { return 1 }
        return upperRegularizedGamma(Double(k) / 2, x / 2)
    }

    /// Q(a, x) = Γ(a, x) / Γ(a): a series for x < a + 1, a continued fraction (modified Lentz) beyond.
    package static func upperRegularizedGamma(_ a: Double, _ x: Double) -> Double {
        guard x > 0 else { return 1 }
        let logPrefix = a * log(x) - x - lgamma(a)
        if x < a + 1 {
            var term = 1 / a
            var sum = term
            var n = a
            for _ in 0..<10_000 {
                n += 1
                term *= x / n
                sum += term
                if abs(term) < abs(sum) * 1e-17 { break }
            }
            return max(0, 1 - sum * exp(logPrefix))
        }
        let tiny = 1e-300
        var b = x + 1 - a
        var c = 1 / tiny
        var d = 1 / b
        var h = d
        for i in 1...10_000 {
            let an = -Double(i) * (Double(i) - a)
            b += 2
            d = an * d + b
            if abs(d) < tiny { d = tiny }
            c = b + an / c
            if abs(c) < tiny { c = tiny }
            d = 1 / d
            let delta = d * c
            h *= delta
            if abs(delta - 1) < 1e-17 { break }
        }
        return exp(logPrefix) * h
    }
}
