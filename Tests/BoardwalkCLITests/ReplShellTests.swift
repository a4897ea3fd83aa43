import Foundation
import Testing

/// `query -` with several queries, and the REPL's shell comforts (`.output`, `.read`, `.mode line`, `\G`, `.timer`),
/// through the real binary fed by pipes.
@Suite("query - with several queries, and the REPL's .output, .read, .mode line, \\G and .timer")
struct ReplShellTests {
    let directory: URL
    init() throws { directory = try temporaryDirectory() }

    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    @Test("query - in table format echoes each query before its result, with a blank line between results")
    func echoedTables() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let input =
            "events | count\n# a comment\nsessions |\n  count\nevents | bogus\nevents | count by kind | limit 1\n"
        let r = try boardwalk(["query", "--generated", "20", "-"], stdin: input)
        #expect(r.status == 2)
        let events = try boardwalk(["query", "--generated", "20", "events | count"]).stdout
        let sessions = try boardwalk(["query", "--generated", "20", "sessions | count"]).stdout
        let kinds = try boardwalk(["query", "--generated", "20", "events | count by kind | limit 1"]).stdout
        #expect(
            r.stdout
                == "events | count\n" + events + "\nsessions |\n  count\n" + sessions + "\nevents | bogus\n"
                + "\nevents | count by kind | limit 1\n" + kinds, "\(r.stdout)")
        #expect(r.stderr.contains("error: unknown stage `bogus`\n --> stdin:5:10"), "\(r.stderr)")
    }

    @Test("query - in JSON format prints one JSON document per query, a line each, null for a failed one")
    func jsonLines() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let r = try boardwalk(
            ["query", "--generated", "20", "--format", "json", "-"],
            stdin: "events | count by kind\nevents | bogus\nsessions | where completed | limit 0\nsessions | count\n")
        #expect(r.status == 2)
        let lines = r.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.count == 5 && lines[4].isEmpty, "\(r.stdout)")
        #expect(lines[1] == "null" && lines[2] == "[]")
        let kinds = try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [[String: Any]]
        let separate = try boardwalk(["query", "--generated", "20", "--format", "json", "events | count by kind"])
        let expected = try JSONSerialization.jsonObject(with: Data(separate.stdout.utf8)) as? [[String: Any]]
        #expect(kinds?.count == expected?.count && (kinds?.count ?? 0) > 1)
        #expect(kinds.map { $0.map { $0["kind"] as? String } } == expected.map { $0.map { $0["kind"] as? String } })
        let count = try JSONSerialization.jsonObject(with: Data(lines[3].utf8)) as? [[String: Any]]
        let sessions = try boardwalk(["query", "--generated", "20", "--format", "csv", "sessions | count"]).stdout
        #expect(count?.first?["count"] as? Int == Int(sessions.split(separator: "\n")[1]))
    }

    @Test(".output FILE sends results there until .output alone; .read FILE runs a file of queries, located by it")
    func outputAndRead() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let queries = path("queries.txt")
        try "events |\n  count\n\nevents | nope\n.format csv\n".write(
            toFile: queries, atomically: false, encoding: .utf8)
        let out = path("out.txt")
        let input = """
            .output \(out)
            sessions | count
            .read \(queries)
            events | count
            .output
            .format table
            sessions | count
            .read \(path("missing.txt"))
            .output /nonexistent-directory/x

            """
        let r = try boardwalk(["repl", "--generated", "20"], stdin: input)
        #expect(r.status == 2, "\(r.stderr)")
        let sessions = try boardwalk(["query", "--generated", "20", "sessions | count"]).stdout
        let events = try boardwalk(["query", "--generated", "20", "events | count"]).stdout
        let count = try boardwalk(["query", "--generated", "20", "--format", "csv", "events | count"]).stdout
        let written = try String(contentsOfFile: out, encoding: .utf8)
        #expect(written == sessions + events + count, "\(written)")
        #expect(r.stdout == sessions, "\(r.stdout)")
        #expect(r.stderr.contains("error: unknown stage `nope`\n --> \(queries):4:10"), "\(r.stderr)")
        #expect(
            r.stderr.contains("Error: stdin:8: cannot read '\(path("missing.txt"))': No such file or directory"),
            "\(r.stderr)")
        #expect(r.stderr.contains("Error: stdin:9: cannot write '/nonexistent-directory/x': No such file or directory"))
        // A file that reads itself is refused at the second level.
        let loop = path("loop.txt")
        try ".read \(loop)\n".write(toFile: loop, atomically: false, encoding: .utf8)
        let l = try boardwalk(["repl", "--generated", "5"], stdin: ".read \(loop)\n")
        #expect(l.stderr.contains("Error: \(loop):1: .read of '\(loop)' inside itself"), "\(l.stderr)")
    }

    @Test(".mode line and \\G print each row as lines of column = value; .mode alone says the mode; .timer is .timing")
    func verticalAndTimer() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = """
            events | select seq, kind | limit 2 \\G
            .mode
            .mode line
            .mode
            events | select seq, name | limit 1
            .mode table
            events | select seq | limit 1
            .mode wide
            .timer on
            events | count
            .timer off
            .timer

            """
        let r = try boardwalk(["repl", "--generated", "5"], stdin: input)
        #expect(r.status == 2)
        let first = try boardwalk(
            ["query", "--generated", "5", "--format", "csv", "events | select seq, kind, name | limit 2"]
        ).stdout.split(separator: "\n").dropFirst().map { $0.split(separator: ",").map(String.init) }
        let count = try boardwalk(["query", "--generated", "5", "events | count"]).stdout
        #expect(
            r.stdout
                == " seq = 0\nkind = \(first[0][1])\n\n seq = 1\nkind = \(first[1][1])\n\nmode: table\nmode: line\n"
                + " seq = 0\nname = \(first[0][2])\n\nseq\n---\n  0\n" + count + "timing: off\n", "\(r.stdout)")
        #expect(r.stderr.contains("Error: stdin:8: .mode takes one of table, line, json, csv"), "\(r.stderr)")
        #expect(r.stderr.contains("\n(1 row, ") && r.stderr.hasSuffix(" read)\n"), "\(r.stderr)")
    }
}
