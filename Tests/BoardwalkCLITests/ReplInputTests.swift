@testable import BoardwalkCLI
import BoardwalkGenerator
import BoardwalkQuery
import Foundation
import Testing

/// How `query -` and the piped REPL cut their input into queries: `#` comments and blank lines inside a
/// continued query.
@Suite("Piped input: comments inside continued queries")
struct ReplContinuationTests {
    static let source = InMemoryEventSource(Array(SyntheticData(sessions: 40, seed: 6).events()))

    @Test("A `#` comment is cut before looking for the trailing `|`; a `#` inside a string is text")
    func commentsAndContinuation() {
        #expect(Repl.continues("sessions | # only closed ones"))
        #expect(Repl.continues("sessions |# note"))
        #expect(!Repl.continues("sessions | count # ends here |"))
        #expect(Repl.withoutComment(##"events | where name == "#x|" # c"##) == ##"events | where name == "#x|" "##)
        #expect(Repl.withoutComment(##"events | where name == "a\"#" |"##) == ##"events | where name == "a\"#" |"##)
        #expect(Repl.continues(##"events | where name == "a\"#" |"##))
        // Blank and comment lines keep an open query open, and are skipped when nothing is open.
        #expect(Repl.keepsOpen("# only closed ones", pending: true))
        #expect(Repl.keepsOpen("   ", pending: true))
        #expect(!Repl.keepsOpen("# a comment", pending: false))
        #expect(!Repl.keepsOpen("  where closed | count", pending: true))
    }

    /// Runs `lines` through a piped REPL over the fixture; returns status, stdout and stderr.
    func piped(_ lines: [String]) -> (Int32, String, String) {
        let out = BufferSink(), err = BufferSink()
        let invocation = Invocation(environment: [:], stdout: out, stderr: err)
        let console = QueryConsole(source: ReplContinuationTests.source, invocation: invocation)
        let status = Repl(console: console, invocation: invocation, completionWords: [], stats: nil).runPiped(lines)
        return (status, out.text, err.text)
    }

    @Test("A comment after the `|`, or comment and blank lines between the lines of a query, do not end it")
    func commentsInsideAQuery() throws {
        let expected = try Query.parse("sessions | where closed | count").run(on: ReplContinuationTests.source).render(.table)
        for lines in [
            ["sessions | # only closed ones", "  where closed | count"],
            ["sessions |", "# only closed ones", "", "  where closed | count"],
            ["# a heading", "sessions |  # why", "  # more", "  where closed |", "count"],
        ] {
            let (status, out, err) = piped(lines)
            #expect(status == ExitCode.success, "\(lines): \(err)")
            #expect(out == expected, "\(lines)")
        }
    }

    @Test("An error after comment lines points at its line of the input")
    func errorLineAfterComments() {
        let (status, _, err) = piped(["sessions |", "# note", "  where bogus == 1 | count"])
        #expect(status == ExitCode.partial)
        #expect(err.contains("--> stdin:3:9\n3 |   where bogus == 1 | count"), "\(err)")
    }

    @Test("query - and repl, end to end: the QA inputs run")
    func endToEnd() throws {
        for input in ["sessions | # only closed ones\n  where closed | count\n", "sessions |\n# only closed ones\n  where closed | count\n"] {
            for command in [["query"], ["repl"]] {
                let arguments = command + ["--generated", "40", "--seed", "6", "--format", "csv"] + (command == ["query"] ? ["-"] : [])
                let r = try boardwalk(arguments, stdin: input)
                #expect(r.status == 0, "\(command) \(r.stderr)")
                #expect(r.stderr.isEmpty)
                #expect(r.stdout.hasPrefix("count\n"), "\(r.stdout)")
            }
        }
    }
}
