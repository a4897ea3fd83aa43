import Foundation
import Testing

// QA, session 9: `boardwalk query - < queries.txt` with the file saved by a Windows editor (a UTF-8 byte-order mark
// first) failed its first query with `unexpected character U+FEFF`. The mark is now skipped at the very start of
// standard input, for `query -` and a piped `repl`; anywhere else it is still reported.

@Suite("QA9: a byte-order mark at the start of piped queries")
struct QueryInputBOMQA9Tests {
    @Test("skipped at the start of `query -` and a piped `repl`", arguments: [["query", "-"], ["repl"]])
    func skippedAtStart(command: [String]) throws {
        let run = try boardwalk(command + ["--generated", "20", "--format", "csv"], stdin: "\u{FEFF}sessions | count\n")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "count\n20\n")
        #expect(run.stderr.isEmpty)
    }

    @Test("still an error on a later line, where it is no file's mark")
    func reportedElsewhere() throws {
        let run = try boardwalk(["query", "--generated", "20", "--format", "csv", "-"],
                                stdin: "sessions | count\n\u{FEFF}sessions | count\n")
        #expect(run.status == 2)
        #expect(run.stdout == "count\n20\n")
        #expect(run.stderr.hasPrefix("error: unexpected character U+FEFF\n --> stdin:2:1\n"))
    }
}
