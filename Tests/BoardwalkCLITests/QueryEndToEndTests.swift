import BoardwalkGenerator
import BoardwalkModel
import BoardwalkQuery
import Foundation
import Testing

/// `query` and `repl` over generated sessions in memory (`--generated`), checked against the generator's
/// own counts.
@Suite("query and repl, end to end")
struct QueryEndToEndTests {
    let data = SyntheticData(sessions: 120, seed: 4)

    @Test("JSON output parses back and counts every generated event")
    func jsonCount() throws {
        let r = try boardwalk(["query", "--generated", "120", "--seed", "4", "--format", "json", "events | count"])
        #expect(r.status == 0, "\(r.stderr)")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]])
        #expect(rows.count == 1)
        #expect((rows[0]["count"] as? Int) == Array(data.events()).count)
    }

    @Test("CSV output parses back: per-kind counts equal the generator's")
    func csvByKind() throws {
        let r = try boardwalk(["query", "--generated", "120", "--seed", "4", "-f", "csv", "events | count by kind"])
        #expect(r.status == 0, "\(r.stderr)")
        var lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.removeFirst() == "kind,count")
        var got: [String: Int] = [:]
        for line in lines {
            let cells = line.split(separator: ",")
            #expect(cells.count == 2)
            got[String(cells[0])] = Int(cells[1])
        }
        var expected: [String: Int] = [:]
        for e in data.events() { expected[e.kind.name, default: 0] += 1 }
        #expect(got == expected)
    }

    @Test("A bad query exits 1 with the caret on stderr and nothing on stdout")
    func badQuery() throws {
        let r = try boardwalk(["query", "--generated", "5", "events | where screen_idx == 2"])
        #expect(r.status == 1)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.hasPrefix("error: unknown field `screen_idx`"))
        #expect(r.stderr.contains("1 | events | where screen_idx == 2\n  |                ^^^^^^^^^^"))
    }

    @Test("An onboarding id with no events gets a note on stderr; the result and the exit status are as written")
    func unknownOnboardingNote() throws {
        let r = try boardwalk([
            "query", "--generated", "20", #"sessions | where onboarding == "no-such-onboarding" | count"#,
        ])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasSuffix("    0\n"), "\(r.stdout)")
        #expect(
            r.stderr.hasPrefix("note: no events have onboarding `no-such-onboarding`\n --> query:1:32\n"), "\(r.stderr)"
        )
        #expect(
            r.stderr.contains(#"  |                                ^^^^^^^^^^^^^^^^^^^^ 6 onboardings have events"#),
            "\(r.stderr)")
        let known = try boardwalk(["query", "--generated", "20", "sessions | count by onboarding | limit 1"])
        let id = try #require(known.stdout.split(separator: "\n").dropFirst(2).first?.split(separator: " ").first)
        let clean = try boardwalk(["query", "--generated", "20", "sessions | where onboarding == \"\(id)\" | count"])
        #expect(clean.status == 0 && clean.stderr.isEmpty, "\(clean.stderr)")
        // Read from stdin, a note points at its line of the input, as an error does.
        let piped = try boardwalk(
            ["query", "--generated", "20", "-"],
            stdin: "\n# a comment\nsessions | where onboarding == \"no-such-onboarding\" | count\n")
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(piped.stderr.contains(" --> stdin:3:32\n"), "\(piped.stderr)")
        // The REPL's `.explain` prints the note too, its caret under the literal after the command's prefix.
        let explained = try boardwalk(
            ["repl", "--generated", "20"],
            stdin: ".explain sessions | where onboarding == \"no-such-onboarding\" | count\n")
        #expect(
            explained.stderr.contains("note: no events have onboarding `no-such-onboarding`\n --> stdin:1:41\n"),
            "\(explained.stderr)")
        #expect(explained.stdout.contains("range onboarding=\"no-such-onboarding\""), "\(explained.stdout)")
    }

    @Test("query - and repl through a pipe: an error in the middle, the rest still runs, exit 2")
    func pipedWithError() throws {
        let input = """
            events | count
            # a comment
            events | bogus
            .format csv
            sessions |
              where completed |
              count
            .nonsense
            events | count by kind
            """
        for arguments in [["repl"], ["query", "-"]] {
            let r = try boardwalk(arguments + ["--generated", "120", "--seed", "4"], stdin: input + "\n")
            #expect(r.status == 2)
            let completed = Array(data.sessions()).filter { $0.outcome == .completed }.count
            let events = Array(data.events()).count
            // `query -` echoes each query before its table, as `sqlite3 -echo` does; the REPL does not.
            let echo = arguments == ["repl"] ? "" : "events | count\n"
            #expect(r.stdout.hasPrefix(echo + "count\n-----\n"), "\(r.stdout)")
            #expect(r.stdout.contains(" \(events)\n"))
            #expect(r.stdout.contains("count\n\(completed)\n"))
            #expect(r.stdout.contains("kind,count\nanalytics,"))
            #expect(r.stderr.contains("error: unknown stage `bogus`"))
            // The location is the line of the input, not of the query alone.
            #expect(r.stderr.contains("--> stdin:3:10\n3 | events | bogus"), "\(r.stderr)")
            #expect(r.stderr.contains("^^^^^"))
            #expect(r.stderr.contains("Error: stdin:8: unknown command '.nonsense'"), "located like the query errors")
        }
        let ok = try boardwalk(["repl", "--generated", "3"], stdin: "events | count\n.quit\nevents | bogus\n")
        #expect(ok.status == 0)
        #expect(ok.stderr.isEmpty)
    }

    @Test("--generated and --db exclude each other")
    func generatedWithDatabase() throws {
        let r = try boardwalk(["query", "--generated", "3", "--db", "/tmp/unused-\(getpid())", "events | count"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("--db does not apply"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "/tmp/unused-\(getpid())"))
    }

    @Test("explain prints the plan as lines in a table format, as a one-column table in JSON and CSV")
    func explainAsText() throws {
        let text = try boardwalk(["query", "--generated", "20", "events | histogram dwell step 30s | explain"])
        #expect(text.status == 0)
        #expect(text.stdout.hasPrefix("read: sessions with events in the ranges"), "\(text.stdout)")
        #expect(text.stdout.hasSuffix("\nreduce: histogram of dwell, step 30s\n"), "\(text.stdout)")
        #expect(!text.stdout.contains("---"))
        let csv = try boardwalk(["query", "--generated", "20", "--format", "csv", "events | count | explain"])
        #expect(csv.stdout.hasPrefix("plan\n"), "\(csv.stdout)")
    }

    @Test("--generated takes --onboardings, as generate does; without --generated it is a usage error")
    func generatedOnboardings() throws {
        let r = try boardwalk([
            "query", "--generated", "60", "--onboardings", "2", "--format", "csv", "sessions | count by onboarding",
        ])
        #expect(r.status == 0)
        let ids = Set(SyntheticData(sessions: 60, seed: 1, onboardings: 2).onboardings.map(\.id))
        let listed = Set(
            r.stdout.split(separator: "\n").dropFirst().compactMap { $0.split(separator: ",").first.map(String.init) }
                .filter { !$0.isEmpty })
        #expect(listed == ids, "\(r.stdout)")
        let wrong = try boardwalk(["query", "--onboardings", "2", "events | count"])
        #expect(wrong.status == 64)
        #expect(wrong.stderr.contains("--onboardings goes with --generated"))
    }

    @Test("Dot-commands through a pipe")
    func dotCommands() throws {
        let r = try boardwalk(
            ["repl", "--generated", "50"],
            stdin: ".help\n.fields\n.onboardings\n.timing on\n.explain sessions | funnel\n.format xml\n")
        #expect(r.status == 2)  // .format xml failed
        #expect(r.stdout.contains(".explain QUERY"))
        #expect(r.stdout.contains("events:   time, seq, kind"))
        #expect(r.stdout.contains("onboarding"))
        #expect(r.stderr.contains("Error: stdin:6: .format takes one of table, json, csv"))
        for onboarding in SyntheticData(sessions: 50, seed: 1).onboardings.prefix(2) {
            #expect(r.stdout.contains(onboarding.id))
        }
    }
}

@Suite("Generator truth against the query layer")
struct GeneratorTruthTests {
    /// Rule 10 infers sessions per (profile, onboarding). An error without a position (`meta`) has no
    /// onboarding, so in a session without an id it becomes a session of its own: the generator knows one
    /// session, the rule sees two. Everything else must match the generator exactly.
    @Test("Sessions inferred by rule 10 match the generator's sessions", arguments: [1.0, 0.85, 0.0])
    func sessionCount(sessionIDRate: Double) throws {
        let data = SyntheticData(sessions: 400, seed: 21, sessionIDRate: sessionIDRate)
        let source = InMemoryEventSource(Array(data.events()))
        let table = try Query.parse("sessions | count").run(on: source)
        var expected = 0
        for session in data.sessions() {
            guard session.sessionID == nil else { expected += 1; continue }
            let placed = session.events.contains { $0.meta != nil }
            let unplaced = session.events.contains { $0.meta == nil }
            expected += (placed ? 1 : 0) + (unplaced ? 1 : 0)
        }
        #expect(sessionIDRate > 0.5 || expected > 400)
        #expect(table.rows == [[.integer(Int64(expected))]])
        let exits = try Query.parse("sessions | where completed | count").run(on: source)
        #expect(exits.rows == [[.integer(Int64(Array(data.sessions()).filter { $0.outcome == .completed }.count))]])
    }
}
