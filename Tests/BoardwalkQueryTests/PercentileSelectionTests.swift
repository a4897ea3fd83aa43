import BoardwalkGenerator
import Testing

@testable import BoardwalkQuery

/// The selection path of `Percentile.of` must give exactly what sorting gives, ties and extremes included.
@Test func percentileBySelectionEqualsPercentileOfTheSortedValues() {
    var rng = SplitMix64(seed: 0x9E7C)
    let quantiles = [0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 1]
    var compared = 0
    for round in 0..<300 {
        let n = Int.random(in: 1...400, using: &rng)
        // Few distinct values in some rounds (many ties, like durations in whole seconds), many in others.
        let distinct = round % 3 == 0 ? 4 : 1_000_000
        var values = (0..<n).map { _ in Double(Int.random(in: 0..<distinct, using: &rng)) * 1.5 }
        if round % 5 == 0 { values.sort() }  // already sorted input
        if round % 7 == 0 { values.sort(by: >) }  // reversed input
        for q in quantiles {
            let expected = Percentile.ofSorted(values.sorted(), q)
            let got = Percentile.of(values, q)
            #expect(got == expected, "n \(n), q \(q)")
            compared += 1
        }
    }
    #expect(compared == 3000)
    #expect(Percentile.of([], 0.5) == nil)
}

/// The radix selection's edges: negative numbers, extremes of the double range, values that differ only in their
/// lowest bits, and many copies of one value around the rank.
@Test func percentileBySelectionAtTheEdgesOfTheKeyOrder() {
    var rng = SplitMix64(seed: 0x5E1EC7)
    let quantiles = [0, 0.3, 0.5, 0.7, 1]
    let pools: [[Double]] = [
        [
            -5e300, -1, -Double.leastNonzeroMagnitude, 0, Double.leastNonzeroMagnitude, 1, 5e300,
            .greatestFiniteMagnitude,
            -.greatestFiniteMagnitude,
        ],
        (0..<8).map { 1.0 + Double($0) * Double.ulpOfOne },  // the same but for the last bits
        [-2.5, -2.5, -2.5, 7, 7],
        [1e6, 1e6 + 1, 1e6 + 2, 3e7, 9e7],  // microseconds, as the funnel's median times are
    ]
    for pool in pools {
        for _ in 0..<40 {
            let n = Int.random(in: 32...300, using: &rng)
            let values = (0..<n).map { _ in pool[Int.random(in: 0..<pool.count, using: &rng)] }
            for q in quantiles {
                #expect(
                    Percentile.of(values, q) == Percentile.ofSorted(values.sorted(), q), "pool \(pool), n \(n), q \(q)")
            }
        }
    }
    // Every key decodes to its number.
    for x in pools.joined() { #expect(Percentile.double(fromKey: Percentile.orderedKey(x)) == x) }
}

/// Infinities, NaN and -0 keep the sorting definition (the same call on the sorted values): with an infinity, the
/// interpolation is NaN even where the fraction is 0 (an odd count's median next to +∞), which the selection path,
/// skipping the next rank for a fraction of 0, would not give.
@Test func percentileOfInfinitiesNaNAndNegativeZeroIsTheSortedDefinition() {
    var rng = SplitMix64(seed: 0x1AF)
    let pools: [[Double]] = [
        [1, 2, 3, .infinity],
        [-.infinity, 1, 2, 3],
        [-.infinity, .infinity, 5],
        [-0.0, 0.0, 1],
        [.nan, 1, 2],
    ]
    for pool in pools {
        for _ in 0..<40 {
            let n = Int.random(in: 32...101, using: &rng)
            let values = (0..<n).map { _ in pool[Int.random(in: 0..<pool.count, using: &rng)] }
            for q in [0, 0.5, 0.9, 1] {
                let got = Percentile.of(values, q), expected = Percentile.ofSorted(values.sorted(), q)
                #expect(
                    got?.bitPattern == expected?.bitPattern || (got?.isNaN == true && expected?.isNaN == true),
                    "pool \(pool), n \(n), q \(q)")
            }
        }
    }
    // The case the fallback exists for: the median of an odd count is 1, next to +∞, and 1 + 0 × (∞ − 1) is NaN.
    let edge = [Double](repeating: .infinity, count: 16) + [Double](repeating: 1, count: 17)
    #expect(Percentile.ofSorted(edge.sorted(), 0.5)?.isNaN == true)
    #expect(Percentile.of(edge, 0.5)?.isNaN == true)
}
