import BoardwalkModel
import Testing

@testable import BoardwalkQuery

/// A compiled expression gives the value the expression's tree gives (``Bound/evaluate(now:_:)``), for generated
/// filters and for keys and arguments of every operator, on generated events with and without a dwell.
@Test func compiledExpressionsGiveTheTreesValues() throws {
    let now = Timestamp(microseconds: 1_762_100_000_000_000)
    var queries = QueryGenerator(seed: 0xC0_3B11ED)
    var sessions = SessionGenerator(seed: 0xC0_3B11EE)
    var events: [Event] = []
    while events.count < 150 { events += sessions.events() }
    var texts: [String] = (0..<150).map { _ in "events | where \(queries.eventPredicate()) | count" }
    texts += [
        "events | count by day(time), hour(time, \"Europe/Berlin\"), week(time, \"+05:30\"), year(time)",
        "events | count by screen + 1, screen * 2 - total_screens, -screen, -dwell, screen / 0",
        "events | count by screen in [1, 2], kind not in [\"analytics\"], value is present, not (screen > 1)",
        "events | stats sum(screen - 1), max(time - 1h), min(dwell + 1s), count() by kind == \"analytics\" or screen < 2",
        "events | where time > now() - 3d and (screen >= 1 or name == \"screen_presented\") | count",
        "events | where true and screen >= 0 and seq >= 0 and kind != \"close\" | count",
    ]
    var compared = 0
    for text in texts {
        let checked = try Query.parse(text).checked
        var expressions = checked.filters
        switch checked.reduction {
        case .count(let by): expressions += by.map(\.bound)
        case .stats(let aggregates, let by, _): expressions += by.map(\.bound) + aggregates.compactMap(\.argument)
        default: break
        }
        let all = CompiledBound(all: checked.filters, now: now)
        let compiled = expressions.map { CompiledBound($0, now: now) }
        for (seq, event) in events.enumerated() {
            for dwell in [Dwell.none, .value(90_000_000)] {
                func leaf(_ b: Bound) -> Value {
                    if case .event(let f) = b { return event.value(f, seq: UInt64(seq), dwell: dwell) }
                    return .null
                }
                for (bound, fast) in zip(expressions, compiled) {
                    let tree = bound.evaluate(now: now, leaf), quick = fast(leaf)
                    #expect(String(describing: tree) == String(describing: quick), "\(text): \(bound)")
                    compared += 1
                }
                let every = checked.filters.allSatisfy { $0.evaluate(now: now, leaf).isTrue }
                #expect(all.isTrue(leaf) == every, "\(text)")
            }
        }
    }
    #expect(compared > 50_000)
}
