import BoardwalkModel
import Testing

@testable import BoardwalkQuery

/// Results agree when they have the same columns and rows; doubles may differ in the last bits because the
/// executor and the reference add in different orders.
func agree(_ a: ResultTable, _ b: ResultTable) -> Bool {
    guard a.columns == b.columns, a.rows.count == b.rows.count else { return false }
    for (x, y) in zip(a.rows, b.rows) {
        guard x.count == y.count else { return false }
        for (u, v) in zip(x, y) {
            switch (u, v) {
            case (.number(let p), .number(let q)), (.duration(let p), .duration(let q)):
                if p != q, abs(p - q) > 1e-9 * max(abs(p), abs(q), 1) { return false }
            default:
                if u != v { return false }
            }
        }
    }
    return true
}

@Test func executorAgreesWithReferenceOnGeneratedQueries() throws {
    try differential(seed: 7, datasets: 60, queriesPerDataset: 20) { $0.query() }
}

/// Funnels have the most edges (windows, modes, ties), so they get their own 1000 queries.
@Test func funnelsAgreeWithReference() throws {
    try differential(seed: 11, datasets: 50, queriesPerDataset: 20) { $0.funnelQuery() }
}

/// `paths` over generated sessions (repeats, equal times, events out of arrival order, sessions without the anchor):
/// the executor's paths are the reference's, written from rule 14 (runs of labels, the anchor's run).
@Test func pathsAgreeWithReference() throws {
    try differential(seed: 14, datasets: 40, queriesPerDataset: 20) { $0.pathsQuery() }
}

/// Time buckets over data that straddles clock changes: Berlin's (2026-10-25, 01:00Z) and New York's (2026-11-01,
/// 06:00Z), both within the two days after each dataset's start.
@Test func timeBucketsAgreeWithReferenceAcrossClockChanges() throws {
    let starts: [Int64] = [1_792_886_400_000_000, 1_793_491_200_000_000]  // 2026-10-24T00:00Z, 2026-10-31T00:00Z
    for (i, start) in starts.enumerated() {
        try differential(seed: 17 + UInt64(i), datasets: 25, queriesPerDataset: 20, start: start) {
            $0.bucketedQuery()
        }
    }
}

/// `versus` over generated data: the executor's comparison is the reference's, and a baseline that no group has is
/// an error exactly when the reference finds no such group.
@Test func versusAgreesWithReference() throws {
    let now = Timestamp(microseconds: base + 3 * 86_400 * second)
    var queries = QueryGenerator(seed: 0x7E55)
    var compared = 0
    var missing = 0
    var tested = 0
    for dataset in 0..<40 {
        var generator = SessionGenerator(seed: 0x7E55_0000 ^ UInt64(dataset) &* 0x9E37_79B9)
        let events = generator.events()
        let source = InMemoryEventSource(events)
        for _ in 0..<15 {
            let text = queries.versusQuery()
            let query = try Query.parse(text)
            let expected = ReferenceEvaluator(now: now).run(query.checked, events)
            do {
                let actual = try query.run(on: source, options: .init(now: now))
                compared += 1
                if actual.column("p_value")?.contains(where: { !$0.isNull }) == true { tested += 1 }
                #expect(
                    agree(actual, expected),
                    "\(text)\nexecutor:\n\(actual.render(.table))\nreference:\n\(expected.render(.table))")
            } catch {
                missing += 1
                #expect(error.message.hasPrefix("no group of"), "\(text): \(error)")
                #expect(expected.columns == [ReferenceEvaluator.noBaseline], "\(text): the reference has the group")
            }
        }
    }
    #expect(
        compared > 300 && missing > 0 && tested > 50,
        "compared \(compared), of which \(tested) with a p-value; missing baseline \(missing)")
}

func differential(
    seed: UInt64, datasets: Int, queriesPerDataset: Int, start: Int64 = base,
    _ next: (inout QueryGenerator) -> String
) throws {
    let now = Timestamp(microseconds: start + 3 * 86_400 * second)
    var queries = QueryGenerator(seed: seed)
    var ran = 0
    var nonEmpty = 0
    for dataset in 0..<datasets {
        var generator = SessionGenerator(seed: (seed << 32) ^ UInt64(dataset) &* 0x9E37_79B9, start: start)
        let events = generator.events()
        let source = InMemoryEventSource(events)
        let reference = ReferenceEvaluator(now: now)
        for _ in 0..<queriesPerDataset {
            let text = next(&queries)
            let query: Query
            do { query = try Query.parse(text) } catch {
                Issue.record("generated query does not parse: \(text)\n\(error)")
                continue
            }
            let actual = try query.run(on: source, options: .init(now: now))
            let expected = reference.run(query.checked, events)
            ran += 1
            if !actual.rows.isEmpty { nonEmpty += 1 }
            if !agree(actual, expected) {
                Issue.record(
                    """
                    dataset \(dataset): \(text)
                    executor:
                    \(actual.render(.table))
                    reference:
                    \(expected.render(.table))
                    """)
                return
            }
        }
    }
    #expect(ran >= datasets * queriesPerDataset * 9 / 10)
    // The generator must produce queries that find something, or agreement means little.
    #expect(nonEmpty > ran / 2)
}
