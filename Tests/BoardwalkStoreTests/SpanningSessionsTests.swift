import BoardwalkCodec
import BoardwalkModel
import Foundation
import Testing

@testable import BoardwalkStore

/// `spanning_sessions`: sessions with events under more than one onboarding key, kept at append.
@Suite struct SpanningSessionsTests {
    /// An event without a position (an error outside any onboarding page), in `session`.
    func loose(session: Int, time: Int64) -> Event {
        Event(
            time: Timestamp(microseconds: time), session: "s\(session)", meta: nil,
            payload: .error(OnboardingError(domain: "webkit", code: 1, message: "m")))
    }

    func spanning(_ store: Store) throws -> Set<String> {
        try store.read { snapshot in Set(try snapshot.spanningSessions().map { snapshot.string(for: $0)! }) }
    }

    /// Each listed session with "o" (in several onboardings) and/or "u" (events without a position too).
    func flags(_ store: Store) throws -> [String: String] {
        try store.read { snapshot in
            var out: [String: String] = [:]
            for entry in try snapshot.spanningSessionEntries() {
                out[snapshot.string(for: entry.id)!] =
                    (entry.inSeveralOnboardings ? "o" : "") + (entry.hasEventsWithoutPosition ? "u" : "")
            }
            return out
        }
    }

    @Test func sessionsInTwoOnboardingsAreListedWhetherSeenInOneBatchOrAcrossBatches() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .init(durability: .noSync))
        defer { store.close() }
        // One batch: s1 in onb-1 and onb-2; s2 only in onb-1 (two screens); s3 only in onb-2.
        _ = try store.append([
            simpleEvent(onboarding: 1, screen: 0, session: 1, time: 1_000),
            simpleEvent(onboarding: 2, screen: 0, session: 1, time: 2_000),
            simpleEvent(onboarding: 1, screen: 0, session: 2, time: 3_000),
            simpleEvent(onboarding: 1, screen: 1, session: 2, time: 4_000),
            simpleEvent(onboarding: 2, screen: 3, session: 3, time: 5_000),
        ])
        #expect(try spanning(store) == ["s1"])
        // Later batches: s2 continues in onb-1 (still one onboarding); s3 appears in onb-1; s1 in a third.
        _ = try store.append([simpleEvent(onboarding: 1, screen: 2, session: 2, time: 6_000)])
        #expect(try spanning(store) == ["s1"])
        _ = try store.append([
            simpleEvent(onboarding: 1, screen: 2, session: 3, time: 7_000),
            simpleEvent(onboarding: 3, screen: 0, session: 1, time: 8_000),
        ])
        #expect(try flags(store) == ["s1": "o", "s3": "o"])
        try store.read { snapshot in
            let onb1 = try #require(try snapshot.id(of: "onb-1"))
            let onb2 = try #require(try snapshot.id(of: "onb-2"))
            let onb3 = try #require(try snapshot.id(of: "onb-3"))
            let names = { (ids: [StringID]) in ids.map { snapshot.string(for: $0)! } }
            #expect(names(try snapshot.spanningSessions(ofOnboarding: onb1)) == ["s1", "s3"])
            #expect(names(try snapshot.spanningSessions(ofOnboarding: onb2)) == ["s1", "s3"])
            #expect(names(try snapshot.spanningSessions(ofOnboarding: onb3)) == ["s1"])
            #expect(Set(names(try snapshot.sessionIDs(ofOnboarding: onb1))) == ["s1", "s2", "s3"])
            #expect(
                try snapshot.sessionIDs(ofOnboarding: onb1) == (try snapshot.sessions(ofOnboarding: onb1)).map(\.id))
        }
        let report = try store.check()
        #expect(report.isOK, "\(report)")
    }

    @Test func eventsWithoutAPositionMakeASessionSpanButInferredSessionsNeverDo() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .init(durability: .noSync))
        defer { store.close() }
        _ = try store.append([
            simpleEvent(onboarding: 1, screen: 0, session: 1, time: 1_000),
            simpleEvent(onboarding: 1, screen: 1, session: 2, time: 2_000),
            // Errors without meta and without a session: inferred per (profile, no onboarding).
            Event(
                time: Timestamp(microseconds: 2_500), profile: "p", meta: nil,
                payload: .error(OnboardingError(domain: "d", code: 2, message: "m"))),
            // Inferred sessions in an onboarding (no session id): one onboarding each.
            simpleEvent(onboarding: 1, screen: 0, session: -1, time: 2_600, profile: "p"),
            simpleEvent(onboarding: 2, screen: 0, session: -1, time: 2_700, profile: "p"),
        ])
        #expect(try spanning(store).isEmpty)
        // s1 errs outside the page, in a later batch; s4 starts with such an error, then enters onb-2.
        _ = try store.append([loose(session: 1, time: 3_000), loose(session: 4, time: 3_100)])
        #expect(try spanning(store) == ["s1"])
        #expect(try flags(store) == ["s1": "u"])
        _ = try store.append([simpleEvent(onboarding: 2, screen: 0, session: 4, time: 4_000)])
        #expect(try flags(store) == ["s1": "u", "s4": "u"])
        // s1 then enters a second onboarding; s5 arrives in one batch in two onboardings and without a position.
        _ = try store.append([
            simpleEvent(onboarding: 2, screen: 1, session: 1, time: 5_000),
            simpleEvent(onboarding: 1, screen: 0, session: 5, time: 5_000),
            simpleEvent(onboarding: 3, screen: 0, session: 5, time: 5_100),
            loose(session: 5, time: 5_200),
        ])
        #expect(try flags(store) == ["s1": "ou", "s4": "u", "s5": "ou"])
        // s4 errs again (a known pair) and enters a third onboarding key.
        _ = try store.append([
            loose(session: 4, time: 6_000), simpleEvent(onboarding: 3, screen: 0, session: 4, time: 6_100),
        ])
        #expect(try flags(store) == ["s1": "ou", "s4": "ou", "s5": "ou"])
        let report = try store.check()
        #expect(report.isOK, "\(report)")
    }

    @Test func theListSurvivesReopenAndLaterWritersAndIsChecked() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        do {
            let store = try Store.open(at: dir, options: .init(durability: .noSync))
            _ = try store.append([
                simpleEvent(onboarding: 1, screen: 0, session: 1, time: 1_000),
                simpleEvent(onboarding: 1, screen: 0, session: 2, time: 1_500),
            ])
            store.close()
        }
        let store = try Store.open(at: dir, options: .init(durability: .noSync))
        defer { store.close() }
        // A new writer (no pairs in memory) still sees s1's stored events.
        _ = try store.append([simpleEvent(onboarding: 2, screen: 0, session: 1, time: 2_000)])
        #expect(try spanning(store) == ["s1"])
        #expect(try store.check().isOK)
        // Wrong entries are reported: s2 has events in onb-1 only; s1 has no event without a position.
        try store.env.transaction(write: true) { txn in
            let snapshot = try Snapshot(txn: txn, dbs: store.dbs, cache: store.sharedStrings)
            for (name, flags) in [("s2", UInt8(2)), ("s1", UInt8(3))] {
                let id = try #require(try snapshot.id(of: name))
                let key = withUnsafeBytes(of: id.bigEndian) { Array($0) }
                try key.withUnsafeBytes { k in
                    try [flags].withUnsafeBytes { v in _ = try txn.put(store.dbs.spanningSessions, k, v) }
                }
            }
        }
        let report = try store.check()
        #expect(!report.isOK)
        #expect(
            report.problems.contains {
                $0.hasPrefix("spanning_sessions: session") && $0.contains("under one onboarding")
            })
        #expect(
            report.problems.contains {
                $0.hasPrefix("spanning_sessions: session") && $0.contains("has flags 3, but its events say 2")
            })
    }
}
