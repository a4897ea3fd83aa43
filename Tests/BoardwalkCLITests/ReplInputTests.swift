import BoardwalkGenerator
import BoardwalkQuery
import Foundation
import Testing

@testable import BoardwalkCLI

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
        let expected = try Query.parse("sessions | where closed | count").run(on: ReplContinuationTests.source).render(
            .table)
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

    @Test("query - and repl, end to end: comments inside a continued query")
    func endToEnd() throws {
        for input in [
            "sessions | # only closed ones\n  where closed | count\n",
            "sessions |\n# only closed ones\n  where closed | count\n",
        ] {
            for command in [["query"], ["repl"]] {
                let arguments =
                    command + ["--generated", "40", "--seed", "6", "--format", "csv"]
                    + (command == ["query"] ? ["-"] : [])
                let r = try boardwalk(arguments, stdin: input)
                #expect(r.status == 0, "\(command) \(r.stderr)")
                #expect(r.stderr.isEmpty)
                #expect(r.stdout.hasPrefix("count\n"), "\(r.stdout)")
            }
        }
    }
}

/// Dot-commands that report a setting or the data, rather than change anything.
@Suite("REPL dot-commands: settings and .stats")
struct ReplDotCommandTests {
    @Test(".format and .timing alone print the current setting; with an argument they set it")
    func settingsWithoutArgument() throws {
        let r = try boardwalk(
            ["repl", "--generated", "10", "--format", "csv"],
            stdin: ".format\n.timing\n.format json\n.timing on\n.format\n.timing\n")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "format: csv\ntiming: off\nformat: json\ntiming: on\n")
        #expect(r.stderr.isEmpty)
        let wrong = try boardwalk(["repl", "--generated", "10"], stdin: ".format xml\n.timing maybe\n")
        #expect(wrong.status == 2)
        #expect(
            wrong.stderr
                == "Error: stdin:1: .format takes one of table, json, csv\nError: stdin:2: .timing takes on or off\n")
    }

    @Test(".stats over generated sessions labels its figures: events, sessions, onboardings")
    func statsOfGeneratedSessions() throws {
        let data = SyntheticData(sessions: 50, seed: 2)
        let events = Array(data.events()).count
        let onboardings = Set(data.sessions().map(\.onboardingID)).count
        let r = try boardwalk(["repl", "--generated", "50", "--seed", "2"], stdin: ".stats\n")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(
            r.stdout == """
                events              \(Units.count(events))\(events >= 1000 ? " (\(events))" : "")
                sessions            50
                onboardings         \(onboardings)

                """)
    }
}
