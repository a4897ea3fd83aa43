import BoardwalkModel
import BoardwalkStore
import Testing

@testable import BoardwalkQuery

/// Sessions gathered from onboarding scans (`StoreEventSource.gatherSessions`) against the session-index path, for
/// hand-built spanning shapes (a session in two onboardings, one with events without a position, one with only
/// such events, inferred sessions), events appended in two batches out of time order, every shape of range list
/// the planner makes, windows from one session up, and through the executor against the in-memory source.
@Suite struct GatheredSessionsTests {
    let error = Payload.error(OnboardingError(domain: "webkit", code: 1, message: "m"))

    var events: [Event] {
        var out: [Event] = []
        // Many plain sessions in three onboardings, with equal times inside sessions.
        for i in 0..<40 {
            let onb = ["onb_1", "onb_2", "onb_3"][i % 3]
            let t = Double(i * 7)
            out.append(ev(t, "p\(i)", screen: 0, onboarding: onb, started))
            out.append(ev(t, "p\(i)", screen: 1, onboarding: onb, presented))
            out.append(ev(t + 1, "p\(i)", screen: 2, onboarding: onb, presented))
            out.append(ev(t + 3, "p\(i)", screen: 1, onboarding: onb, presented))
            if i % 4 == 0 { out.append(ev(t + 5, "p\(i)", screen: 3, onboarding: onb, completedEvent)) }
        }
        // x: in onb_1 and onb_2 (several onboardings).
        out += [
            ev(2, "x", screen: 0, started), ev(3, "x", screen: 1, onboarding: "onb_2", presented),
            ev(4, "x", screen: 2, presented),
        ]
        // y: onb_1 and no position.
        out += [ev(5, "y", screen: 0, started), ev(6, "y", screen: nil, error), ev(7, "y", screen: 1, presented)]
        // z: only events without a position (explicit id).
        out += [ev(8, "z", screen: nil, error), ev(9, "z", screen: nil, error)]
        // inferred: errors without meta and session.
        out += [
            ev(10, nil, screen: nil, profile: "q", error),
            ev(11, nil, screen: 0, onboarding: "onb_3", profile: "q", presented),
        ]
        // w: onb_2, onb_3 and no position.
        out += [
            ev(12, "w", screen: 0, onboarding: "onb_2", started),
            ev(13, "w", screen: 1, onboarding: "onb_3", presented),
            ev(13, "w", screen: nil, error),
        ]
        // Arrival order not time order.
        var k = 7
        for i in out.indices { k = (k * 31 + 11) % 101; if k % 3 == 0 { out.swapAt(i, k % out.count) } }
        return out
    }

    func read(_ disk: StoreEventSource, _ ranges: [ScanRange], lean: Bool) throws -> [String] {
        var out: [String] = []
        if lean {
            try disk.scanSessionFields(ranges, cancellation: nil, text: "") {
                (session, rows) throws(QueryError) -> Bool in
                out.append(session + ":" + rows.map { "\($0.seq)@\($0.time.microseconds)" }.joined(separator: ","))
                return true
            }
        } else {
            try disk.scanSessions(ranges) { (session, rows) throws(QueryError) -> Bool in
                out.append(session + ":" + rows.map { "\($0.seq)@\($0.time.microseconds)" }.joined(separator: ","))
                return true
            }
        }
        return out
    }

    @Test func gatheredEqualsIndexed() throws {
        try withTemporaryStore { store in
            // Several batches, so blocks overlap in time.
            let all = events
            _ = try store.append(Array(all[0..<(all.count / 2)]))
            _ = try store.append(Array(all[(all.count / 2)...]))
            #expect(try store.check().isOK)
            let disk = StoreEventSource(store)
            let t0 = base + 20 * second, t1 = base + 100 * second
            let rangeLists: [[ScanRange]] = [
                [ScanRange()],
                [ScanRange(time: t0...Int64.max)],
                [ScanRange(time: Int64.min...t0)],
                [ScanRange(screens: 1...2)],
                [ScanRange(screens: 0...0, time: t0...t1)],
                [ScanRange(onboarding: "onb_1")],
                [ScanRange(onboarding: "onb_1"), ScanRange(onboarding: "onb_2")],
                [ScanRange(onboarding: "onb_1"), ScanRange(onboarding: "onb_2"), ScanRange(onboarding: "onb_3")],
                [
                    ScanRange(onboarding: "onb_1", time: Int64.min...t0),
                    ScanRange(onboarding: "onb_3", time: Int64.min...t0),
                ],
                [ScanRange(onboarding: "onb_2", screens: 1...1)],
                [ScanRange(onboarding: "nope")],
                [ScanRange(onboarding: "nope"), ScanRange(onboarding: "onb_2")],
                [ScanRange(onboarding: "onb_2"), ScanRange(onboarding: "onb_1")],
            ]
            for ranges in rangeLists {
                for lean in [false, true] {
                    let expected = try StoreEventSource.$gatherRatio.withValue(0) { try read(disk, ranges, lean: lean) }
                    for budget in [1, 2, 3, 5, 8, 13, 40, 1 << 21] {
                        let got = try StoreEventSource.$gatherRatio.withValue(.infinity) {
                            try StoreEventSource.$gatherBudget.withValue(budget) { try read(disk, ranges, lean: lean) }
                        }
                        #expect(got == expected, "\(ranges) budget \(budget) lean \(lean)")
                    }
                }
            }
            // Queries, through the executor.
            let texts = [
                #"events | where name == "screen_presented" | stats p50(dwell), count() by screen"#,
                #"events | select session, seq, dwell"#,
                #"events | where onboarding == "onb_2" | select session, seq, dwell, value"#,
                #"events | where time >= @2026-11-01T10:00:30Z | stats sum(dwell), count() by onboarding"#,
                #"sessions | where started >= @2026-11-01T10:00:05Z | select session, events, furthest_screen, exit"#,
                #"sessions | where onboarding in ["onb_1", "onb_2"] | funnel onboarding_started, screen_presented mode strict"#,
                #"sessions | where onboarding in ["onb_1", "onb_3"] and started < @2026-11-01T10:02:00Z | count by onboarding"#,
            ]
            for text in texts {
                guard let query = try? Query.parse(text) else { Issue.record("does not parse: \(text)"); continue }
                let memory = try query.run(
                    on: InMemoryEventSource(try store.read { try $0.events(since: 0) }.map(\.event)))
                let index = try StoreEventSource.$gatherRatio.withValue(0) { try query.run(on: disk) }
                #expect(index == memory, "index vs memory: \(text)")
                for budget in [1, 3, 40, 1 << 21] {
                    let gathered = try StoreEventSource.$gatherRatio.withValue(.infinity) {
                        try StoreEventSource.$gatherBudget.withValue(budget) { try query.run(on: disk) }
                    }
                    #expect(
                        gathered == index,
                        "\(text) budget \(budget)\n\(gathered.render(.table))\n\(index.render(.table))")
                }
            }
        }
    }
}
