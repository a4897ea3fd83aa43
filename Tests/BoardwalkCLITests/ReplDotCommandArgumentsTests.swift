import Foundation
import Testing

// The REPL's argument-less dot-commands refuse an argument (`.stats all`, `.quit now`): the line fails and the REPL
// goes on; a `#` comment after one is allowed.

@Suite("Dot-commands that take no argument refuse one")
struct ReplDotCommandArgumentsTests {
    @Test(
        "an argument is reported and the next line still runs",
        arguments: [".stats all", ".quit now", ".help me", ".fields x"])
    func refused(line: String) throws {
        let run = try boardwalk(["repl", "--generated", "10", "--format", "csv"], stdin: line + "\nsessions | count\n")
        let command = String(line.split(separator: " ")[0])
        #expect(run.status == 2)
        #expect(run.stderr == "Error: stdin:1: \(command) takes no argument\n")
        #expect(run.stdout == "count\n10\n")
    }

    @Test("a comment after one is no argument")
    func comment() throws {
        let run = try boardwalk(
            ["repl", "--generated", "10", "--format", "csv"], stdin: ".quit   # done\nsessions | count\n")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.isEmpty, "it left before the query")
    }
}
