import Foundation
import Testing

// An empty option value (`--db ''`, or `--db "$DIR"` with DIR unset) is a usage error, as is `backup ''`: taken as a
// path, `stats` would say "no store at ''", and `ingest --rejects ''` would fail at the first bad line, after storing
// what came before it, instead of before the run as docs/cli.md promises for a named rejects file.

@Suite("Empty option values and arguments are usage errors")
struct EmptyArgumentsTests {
    @Test(
        "commands exit 64 with the usage, before touching anything",
        arguments: [
            (["--db", "", "stats"], "option '--db' needs a value (DIR), got an empty string"),
            (["stats", "--db="], "option '--db' needs a value (DIR), got an empty string"),
            (["export", "-o", ""], "option '--output' needs a value (FILE), got an empty string"),
            (
                ["query", "--sql", "clickhouse", "--table", "", "sessions | count"],
                "option '--table' needs a value (NAME), got an empty string"
            ),
            (["ingest", "--rejects", "", "in.ndjson"], "option '--rejects' needs a value (FILE), got an empty string"),
            (
                ["query", "--format", "", "sessions | count"],
                "option '--format' needs a value (FORMAT), got an empty string"
            ),
            (["backup", ""], "DEST is an empty string: name the directory to back up into"),
        ])
    func commands(arguments: [String], message: String) throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data("{\"type\":\"nope\"}\n".utf8).write(to: dir.appendingPathComponent("in.ndjson"))
        _ = try boardwalk(
            ["ingest", "--db", dir.appendingPathComponent("db").path, "-q", "-"],
            stdin: Corpus(sessions: 1, seed: 1).text)
        let run = try boardwalk(
            arguments, environment: ["BOARDWALK_DB": dir.appendingPathComponent("db").path], directory: dir)
        #expect(run.status == 64)
        #expect(run.stderr.hasPrefix("Error: \(message)\nUsage: boardwalk "), "\(run.stderr)")
        #expect(run.stdout.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("boardwalk-rejects.txt").path))
    }
}
