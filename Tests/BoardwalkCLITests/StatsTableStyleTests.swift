import Foundation
import Testing

/// `stats` draws its table as the query language's tables are drawn.
@Suite("stats: one table style with queries")
struct StatsTableStyleTests {
    @Test("The per-kind table of stats has a rule of '-' under its header, as query tables do, and no '─'")
    func rules() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let db = directory.appendingPathComponent("db").path
        #expect(try boardwalk(["ingest", "--db", db, "-q", "-"], stdin: Corpus(sessions: 5, seed: 3).text).status == 0)
        let stats = try boardwalk(["stats", "--db", db])
        #expect(stats.status == 0)
        #expect(!stats.stdout.contains("─"), "\(stats.stdout)")
        let lines = stats.stdout.split(separator: "\n").map(String.init)
        let header = try #require(lines.firstIndex { $0.hasPrefix("kind") })
        #expect(lines[header].split(separator: " ") == ["kind", "events", "share"])
        #expect(lines[header + 1] == "-----------------  ------  ------", "\(stats.stdout)")
        // A query's table draws the same rule.
        let query = try boardwalk(["query", "--db", db, "events | count by kind"])
        #expect(query.stdout.split(separator: "\n")[1].allSatisfy { $0 == "-" || $0 == " " })
    }
}
