import Foundation
import Testing

// A UTF-8 byte-order mark at the very start of standard input (`boardwalk query - < queries.txt` with the file saved
// by a Windows editor) is skipped, for `query -` and a piped `repl`; anywhere else it is reported.

@Suite("A byte-order mark at the start of piped queries is skipped")
struct QueryInputByteOrderMarkTests {
    @Test("skipped at the start of `query -` and a piped `repl`", arguments: [["query", "-"], ["repl"]])
    func skippedAtStart(command: [String]) throws {
        let run = try boardwalk(
            command + ["--generated", "20", "--format", "csv"], stdin: "\u{FEFF}sessions | count\n")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "count\n20\n")
        #expect(run.stderr.isEmpty)
    }

    @Test("still an error on a later line, where it is no file's mark")
    func reportedElsewhere() throws {
        let run = try boardwalk(
            ["query", "--generated", "20", "--format", "csv", "-"],
            stdin: "sessions | count\n\u{FEFF}sessions | count\n")
        #expect(run.status == 2)
        #expect(run.stdout == "count\n20\n")
        #expect(run.stderr.hasPrefix("error: unexpected character U+FEFF\n --> stdin:2:1\n"))
    }
}
