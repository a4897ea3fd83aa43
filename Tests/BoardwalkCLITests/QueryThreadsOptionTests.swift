import BoardwalkGenerator
import Foundation
import Testing

/// `boardwalk query --threads N` and the REPL's `.threads N`: the same answer at any count, the setting printed
/// back, and a count out of range refused (splitting itself is pinned by the query library's `ParallelScanTests`).
@Suite struct QueryThreadsOptionTests {
    @Test func threadsOptionAndDotCommandSetTheLimit() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let db = directory.appendingPathComponent("store").path
        let ingest = try boardwalk(["ingest", "--db", db, "-q", "-"], stdin: Corpus(sessions: 40, seed: 27).text)
        #expect(ingest.status == 0, "\(ingest.stderr)")

        let query = #"events | where kind == "analytics" | count by name"#
        let one = try boardwalk(["query", "--db", db, "--threads", "1", "--format", "csv", query])
        let four = try boardwalk(["query", "--db", db, "--threads", "4", "--format", "csv", query])
        let every = try boardwalk(["query", "--db", db, "--format", "csv", query])
        #expect(one.status == 0 && four.status == 0 && every.status == 0, "\(one.stderr)\(four.stderr)")
        #expect(one.stdout.hasPrefix("name,count\n") && one.stdout.split(separator: "\n").count > 2, "\(one.stdout)")
        #expect(four.stdout == one.stdout && every.stdout == one.stdout)

        let zero = try boardwalk(["query", "--db", db, "--threads", "0", query])
        #expect(zero.status == 64, "\(zero.stderr)")
        #expect(zero.stderr.contains("'--threads' must be between 1 and 256"), "\(zero.stderr)")

        let repl = try boardwalk(
            ["query", "--db", db, "--format", "csv", "-"], stdin: ".threads 3\n.threads\n.threads 0\n\(query)\n")
        #expect(repl.status == 2, "the refused .threads 0 counts as a failure: \(repl.stderr)")
        #expect(repl.stdout.contains("threads: 3\n"), "\(repl.stdout)")
        #expect(repl.stderr.contains(".threads takes a number from 1 to 256"), "\(repl.stderr)")
        #expect(repl.stdout.hasSuffix(one.stdout), "\(repl.stdout)")
    }
}
