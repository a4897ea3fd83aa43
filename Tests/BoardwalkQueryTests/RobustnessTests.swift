import BoardwalkGenerator
import BoardwalkModel
import Testing

@testable import BoardwalkQuery

/// Bad input never traps: mutated and random queries either parse or fail with a located error, and those
/// that parse run.
@Test func mutatedQueriesNeverTrap() throws {
    var rng = SplitMix64(seed: 99)
    var generator = QueryGenerator(seed: 5)
    let pieces = [
        "(", ")", "[", "]", "|", ",", "\"", "@", "==", "not", "and", "by", "-", "1e", "9999999999999999999999",
        "@2026-02-30", "é", "\u{0}", "\n", "funnel", "within", "mode", "percentile(", "answer(", "0.5", "7d", "#",
    ]
    let source = InMemoryEventSource(story)
    var parsed = 0
    for _ in 0..<3_000 {
        var bytes = Array(generator.query().utf8)
        for _ in 0..<Int.random(in: 1...4, using: &rng) {
            let i = Int.random(in: 0...bytes.count, using: &rng)
            switch Int.random(in: 0..<3, using: &rng) {
            case 0: bytes.insert(contentsOf: pieces.randomElement(using: &rng)!.utf8, at: i)
            case 1: if i < bytes.count { bytes.remove(at: i) }
            default: if i < bytes.count { bytes[i] = UInt8.random(in: 0...255, using: &rng) }
            }
        }
        let text = String(decoding: bytes, as: UTF8.self)
        do {
            let query = try Query.parse(text)
            parsed += 1
            _ = try query.run(on: source, options: .init(now: Timestamp(microseconds: base))).render(.json)
        } catch {
            #expect(error.range != nil || error.kind != .syntax)
            _ = error.description
        }
    }
    // Enough of the mutants parse and run for the run path to be exercised, not only the errors (about 3 %).
    #expect(parsed > 50)
}

@Test func deepNestingAndLongQueriesAreErrorsNotCrashes() {
    #expect(
        diagnostic("events | where " + String(repeating: "(", count: 100) + "screen == 1").contains("nested too deeply")
    )
    #expect(
        diagnostic("events | where " + String(repeating: "not ", count: 100) + "screen == 1").contains(
            "nested too deeply"))
    #expect(
        diagnostic("events | where " + String(repeating: "screen == 1 and ", count: 5_000) + "true").contains(
            "too long"))
    // The longest chain allowed still checks and runs.
    let chain = "events | where " + String(repeating: "screen >= 0 and ", count: 480) + "true | count"
    #expect(throws: Never.self) { _ = try run(chain, story) }
}
