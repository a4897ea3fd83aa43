import Testing

@testable import BoardwalkQuery

/// The statistics functions agree with SciPy 1.17 (`scipy.stats.norm`, `scipy.stats.chi2`, and the Wilson and
/// pooled z-test formulas of statsmodels evaluated with SciPy) to 1e-12, relative where the value is tiny.
@Suite struct StatisticsTests {
    static func close(_ a: Double, _ b: Double, tolerance: Double = 1e-12) -> Bool {
        abs(a - b) <= tolerance * max(1, abs(b)) || (abs(b) < 1e-3 && abs(a - b) <= tolerance * abs(b))
    }

    @Test(arguments: [
        (1e-12, -7.034483825301131), (1e-6, -4.753424308822899), (0.001, -3.090232306167813),
        (0.02425, -1.972961051311885), (0.025, -1.9599639845400545), (0.3, -0.5244005127080409), (0.5, 0.0),
        (0.8, 0.8416212335729143), (0.975, 1.959963984540054), (0.999999, 4.753424308817087),
    ])
    func normalQuantileMatchesSciPy(p: Double, expected: Double) {
        #expect(Self.close(Statistics.normalQuantile(p), expected, tolerance: 1e-13), "ppf(\(p))")
    }

    @Test(arguments: [
        (0.5, 1, 0.47950012218695337), (3.84, 1, 0.05004352124870519), (10.0, 2, 0.006737946999085468),
        (25.3, 3, 1.336357111571052e-05), (1.0, 10, 0.9998278843700441), (200.0, 3, 4.218541107192018e-43),
        (16.27, 3, 0.0009982232399054186), (7.5, 5, 0.186029833602867),
    ])
    func chiSquareSurvivalMatchesSciPy(x: Double, k: Int, expected: Double) {
        let p = Statistics.chiSquareSurvival(x, degreesOfFreedom: k)
        #expect(abs(p - expected) <= 1e-12 * expected, "chi2.sf(\(x), \(k)) = \(p)")
    }

    @Test(arguments: [
        (0, 10, 0.95, 0.0, 0.2775327998628892), (7, 10, 0.95, 0.39677814746114537, 0.8922087325936989),
        (481, 1000, 0.95, 0.4501645630755934, 0.5119808537468576), (3, 5, 0.9, 0.2724831718661927, 0.857293527980787),
        (5000, 5000, 0.99, 0.9986747792203651, 1.0), (123, 4567, 0.8, 0.024028312531894826, 0.0301764936490336),
    ])
    func wilsonIntervalMatchesStatsmodelsFormula(x: Int, n: Int, level: Double, low: Double, high: Double) throws {
        let interval = try #require(Statistics.wilsonInterval(successes: x, trials: n, level: level))
        #expect(Self.close(interval.low, low), "low of \(x)/\(n) at \(level): \(interval.low)")
        #expect(Self.close(interval.high, high), "high of \(x)/\(n) at \(level): \(interval.high)")
    }

    @Test(arguments: [
        (481, 1000, 520, 1000, -1.7441338945170028, 0.08113574499265153),
        (45, 100, 30, 100, 2.1908902300206647, 0.02845973691631055),
        (1200, 5000, 1100, 4900, 1.827037400013208, 0.06769414630653349),
        (10, 20, 10, 20, 0.0, 1.0),
        (3, 1000, 30, 1000, -4.739359053805026, 2.1439530537583744e-06),
    ])
    func pooledZTestMatchesStatsmodelsFormula(x1: Int, n1: Int, x2: Int, n2: Int, z: Double, p: Double) throws {
        let result = try #require(Statistics.twoProportionZTest(x1, n1, x2, n2))
        #expect(Self.close(result.z, z), "z of \(x1)/\(n1) vs \(x2)/\(n2): \(result.z)")
        #expect(Self.close(result.p, p), "p of \(x1)/\(n1) vs \(x2)/\(n2): \(result.p)")
    }

    @Test func degenerateInputsGiveNoAnswer() {
        #expect(Statistics.wilsonInterval(successes: 0, trials: 0, level: 0.95) == nil)
        #expect(Statistics.twoProportionZTest(0, 10, 0, 10) == nil)
        #expect(Statistics.twoProportionZTest(3, 0, 1, 10) == nil)
        #expect(Statistics.chiSquareGoodnessOfFit(observed: [10], expectedShares: [1]) == nil)
        #expect(Statistics.hasEnoughForZTest(5, 10, 5, 10))
        #expect(!Statistics.hasEnoughForZTest(4, 100, 50, 100))
        #expect(!Statistics.hasEnoughForZTest(50, 100, 96, 100))
    }

    @Test func sampleRatioMismatchIsChiSquareOnSharesOfTraffic() throws {
        // 5 050 against 4 950 of an intended 50/50 split is chance; 5 300 against 4 700 is not.
        let chance = try #require(Statistics.chiSquareGoodnessOfFit(observed: [5_050, 4_950], expectedShares: [1, 1]))
        let skewed = try #require(Statistics.chiSquareGoodnessOfFit(observed: [5_300, 4_700], expectedShares: [1, 1]))
        #expect(Self.close(chance.statistic, 1.0))
        #expect(Self.close(chance.p, 0.31731050786291415))
        #expect(Self.close(skewed.statistic, 36.0))
        #expect(skewed.p < 0.001)
    }
}
