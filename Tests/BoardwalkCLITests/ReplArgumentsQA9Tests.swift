import Foundation
import Testing

// QA, session 9: the REPL's argument-less dot-commands ignored what followed them: `.stats all` printed the stats,
// `.quit now` left. Now an argument is an error (the line fails, the REPL goes on); a `#` comment is still allowed.

@Suite("QA9: dot-commands that take no argument")
struct ReplArgumentsQA9Tests {
    @Test("an argument is reported and the next line still runs", arguments: [".stats all", ".quit now", ".help me", ".fields x"])
    func refused(line: String) throws {
        let run = try boardwalk(["repl", "--generated", "10", "--format", "csv"], stdin: line + "\nsessions | count\n")
        let command = String(line.split(separator: " ")[0])
        #expect(run.status == 2)
        #expect(run.stderr == "Error: stdin:1: \(command) takes no argument\n")
        #expect(run.stdout == "count\n10\n")
    }

    @Test("a comment after one is no argument")
    func comment() throws {
        let run = try boardwalk(["repl", "--generated", "10", "--format", "csv"], stdin: ".quit   # done\nsessions | count\n")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.isEmpty, "it left before the query")
    }
}
