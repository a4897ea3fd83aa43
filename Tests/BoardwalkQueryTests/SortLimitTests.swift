import BoardwalkModel
import BoardwalkStore
import Testing

@testable import BoardwalkQuery

/// `sort … | limit N` on a listing keeps about N rows while reading, not every row (`events | sort time desc | limit 3`
/// would keep 3.6 M rows, 1.46 GB): the result must be exactly the stable sort's first N, ties included,
/// once the listing has been cut many times over.
@Suite struct SortLimitTests {
    @Test func sortThenLimitKeepsTheStableSortsFirstRows() throws {
        var events: [Event] = []
        for seed in 0..<400 {
            var generator = SessionGenerator(seed: 0x5017 + UInt64(seed))
            // Each generator names its sessions s0, s1, …: keep them apart, so that sessions number more than a cut.
            events += generator.events().map { e in
                var e = e
                if let id = e.session, !id.isEmpty { e.session = "\(seed)-\(id)" }
                return e
            }
        }
        #expect(events.count > 3 * 1024)
        let now = Timestamp(microseconds: base + 86_400 * second)
        // (query, the same without its limit, N): the oracle is the full listing sorted by the `sort` stage, then cut.
        let queries: [(String, String, Int)] = [
            ("events | sort time desc | limit 3", "events | sort time desc", 3),
            // Many ties on the key: the order within them is the listing's.
            ("events | sort kind | limit 40", "events | sort kind", 40),
            (
                "events | select session, name, time | sort name desc, session | limit 5",
                "events | select session, name, time | sort name desc, session", 5
            ),
            (
                "events | sort screen desc | select seq, screen | limit 7",
                "events | sort screen desc | select seq, screen", 7
            ),
            (
                "events | where kind == \"analytics\" | sort session | limit 0",
                "events | where kind == \"analytics\" | sort session", 0
            ),
            ("sessions | sort events desc, session | limit 4", "sessions | sort events desc, session", 4),
            ("sessions | sort duration | limit 2", "sessions | sort duration", 2),
        ]
        try withTemporaryStore { store in
            _ = try store.append(events)
            let stored = try store.read { try $0.events(since: 0) }.map(\.event)
            for (text, unlimited, n) in queries {
                let query = try Query.parse(text)
                #expect(query.checked.listTop?.limit == n, "\(text)")
                #expect(try Query.parse(unlimited).checked.listTop == nil)
                for source in [InMemoryEventSource(stored) as any EventSource, StoreEventSource(store)] {
                    let all = try Query.parse(unlimited).run(on: source, options: .init(now: now))
                    #expect(all.rows.count > 2 * n + 1024, "\(unlimited): too few rows to cut")
                    let expected = ResultTable(columns: all.columns, rows: Array(all.rows.prefix(n)))
                    let table = try query.run(on: source, options: .init(now: now))
                    #expect(
                        table == expected,
                        "\(text)\ngot:\n\(table.render(.table))\nexpected:\n\(expected.render(.table))")
                }
            }
        }
    }
}

extension SortLimitTests {
    /// `limit` near `Int.max` (the parser caps it at 2⁶⁰, the executor must not rely on that): the listing's cut
    /// point saturates instead of overflowing.
    @Test func cutPointSaturates() {
        #expect(listingCutPoint(3) == 1030)
        #expect(listingCutPoint(Int.max) == Int.max)
        #expect(listingCutPoint(Int.max / 2) == Int.max)
    }
}
