import BoardwalkCodec
import BoardwalkModel
import Foundation
import Testing

@testable import BoardwalkStore

/// On a liblmdb whose page layout the store does not know, it reads through liblmdb's cursors only: the block
/// scans and the onboarding-session reads that walk LMDB's pages themselves fall back, the page check is skipped,
/// and every answer is the same. The switch `Store.Options.readsLMDBPages` turns the page readers off as an
/// unknown version does.
@Suite struct PageLayoutFallbackTests {
    @Test func onlyTheLayoutOfLMDB09IsRead() {
        #expect(PageLayout.isKnown(major: 0, minor: 9))
        #expect(!PageLayout.isKnown(major: 0, minor: 8))
        #expect(!PageLayout.isKnown(major: 0, minor: 10))
        #expect(!PageLayout.isKnown(major: 1, minor: 0))
        let linked = PageLayout.linkedVersion
        #expect(PageLayout.linkedIsKnown == (linked.major == 0 && linked.minor == 9), "liblmdb \(linked)")
    }

    /// What the reads that can walk pages return: every block run of every onboarding ((seq, time) per event, in
    /// order), every onboarding's sessions, and the check's report.
    struct Answers: Equatable {
        var runs: [[UInt64]]
        var sessions: [[StringID]]
        var problems: [String]
        var eventsChecked: Int
    }

    func answers(_ dir: String, readsPages: Bool, onboardings: Int) throws -> (Answers, walked: Bool) {
        var options = Store.Options()
        options.readsLMDBPages = readsPages
        let store = try Store.open(at: dir, options: options)
        defer { store.close() }
        let report = try store.check()
        return try store.read { s in
            var walk = try LeafWalk(s.txn, s.dbs.events)
            let walked = walk != nil
            walk?.release()
            var runs: [[UInt64]] = []
            var sessions: [[StringID]] = []
            for name in 0..<onboardings {
                let id = try #require(try s.id(of: "onb-\(name)"))
                var events: [UInt64] = []
                try s.forEachBlockRun(onboarding: id) { run in
                    while let record = try run.next() {
                        events.append(record.seq)
                        events.append(UInt64(bitPattern: record.timeMicroseconds))
                    }
                    return true
                }
                runs.append(events)
                sessions.append(try s.sessionIDs(ofOnboarding: id, firstStoredFrom: Timestamp(microseconds: 0)))
            }
            let answers = Answers(
                runs: runs, sessions: sessions, problems: report.problems,
                eventsChecked: report.eventsChecked)
            return (answers, walked)
        }
    }

    @Test func theCursorPathGivesTheSameAnswers() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        try LeafWalkTests.store(dir).close()
        let (pages, walked) = try answers(dir, readsPages: true, onboardings: 60)
        let (cursors, walkedWithout) = try answers(dir, readsPages: false, onboardings: 60)
        #expect(walked == PageLayout.linkedIsKnown, "the page reader runs on the layout it knows")
        #expect(!walkedWithout, "the switch turns the page reader off")
        #expect(cursors == pages)
        #expect(pages.eventsChecked > 10_000 && pages.problems.isEmpty)
        #expect(pages.runs.allSatisfy { !$0.isEmpty } && pages.sessions.allSatisfy { !$0.isEmpty })
    }
}
