import BoardwalkGenerator
import Foundation
import Testing

/// Queries, `stats` and `export` on stores whose LMDB branch or leaf pages are damaged, in every named database: each
/// page a liblmdb call would read is checked first, so a command stops with a message naming the database and page,
/// or answers from pages it never needed; it never ends by a signal (liblmdb asserts `IS_LEAF(mp)` or reads out of
/// bounds on such pages).
@Suite("queries on damaged LMDB pages")
struct QueriesOnDamagedPagesTests {
    let directory: URL
    init() throws { directory = try temporaryDirectory() }

    @Test("no command crashes, and one that stops names the damage")
    func damagedPages() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let db = directory.appendingPathComponent("ingested.db").path
        let corpus = Corpus(sessions: 300, seed: 43)
        #expect(try boardwalk(["ingest", "--db", db, "-q", "-"], stdin: corpus.text).status == 0)
        let pristine = try Data(contentsOf: URL(fileURLWithPath: db + "/data.mdb"))
        let map = LMDBFileMap(pristine)
        let onboarding = try #require(corpus.events.first?.meta?.onboardingID)
        let session = try #require(corpus.events.first?.session)
        let commands: [[String]] = [
            ["query", "events | count"],
            ["query", "sessions | count by onboarding"],
            ["query", "sessions | where onboarding == \"\(onboarding)\" | funnel"],
            ["query", "events | where session == \"\(session)\" | count"],
            ["stats"],
            ["export"],
        ]
        var stopped = 0
        for tree in map.trees where tree.root >= 2 {
            let leaves = map.leaves(tree)
            var cases: [(String, Int, (inout Data) -> Void)] = []
            if let leaf = leaves.first {
                cases.append(("first leaf marked a branch", leaf, { d in d[leaf * 4096 + 10] = 0x01 }))
            }
            if let leaf = leaves.dropFirst(leaves.count / 2).first {
                cases.append(("middle leaf's node past the page", leaf, { d in d[leaf * 4096 + 17] = 0xFF }))
            }
            if tree.depth > 1, let branch = map.pages(tree, level: 1).first {
                let node = LMDBFileMap.nodes(pristine, page: branch).last!
                cases.append(
                    (
                        "root's last child out of the file", branch,
                        { d in
                            d[node + 2] = 0x7F; d[node + 3] = 0x7F
                        }
                    ))
            }
            for (kind, page, damage) in cases {
                let copy = directory.appendingPathComponent("\(tree.name)-\(page)").path
                try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
                var data = pristine
                damage(&data)
                try data.write(to: URL(fileURLWithPath: copy + "/data.mdb"))
                for command in commands {
                    let run = try boardwalk([command[0], "--db", copy] + command.dropFirst())
                    let place = "\(tree.name), \(kind) (page \(page)): \(command.joined(separator: " "))"
                    #expect(run.signal == nil, "\(place) ended by signal \(run.signal ?? 0)\n\(run.stderr)")
                    if run.status != 0 {
                        stopped += 1
                        #expect(
                            run.stderr.contains("damaged") || run.stderr.contains("\(tree.name), level"),
                            "\(place): \(run.stderr)")
                    }
                }
            }
        }
        #expect(stopped > 0)
    }
}
