import BoardwalkQuery
import Foundation
import Testing

/// `export --format clickhouse` and `query --sql clickhouse`, through the built executable.
@Suite("ClickHouse: export and --sql, end to end")
struct ClickHouseCLITests {
    let directory: URL
    init() throws { directory = try temporaryDirectory() }
    var db: String { directory.appendingPathComponent("store.db").path }

    func ingest(sessions: Int) throws {
        let corpus = Corpus(sessions: sessions, seed: 1)  // a seed whose sessions include inferred ones
        let path = directory.appendingPathComponent("events.ndjson").path
        try corpus.text.write(toFile: path, atomically: true, encoding: .utf8)
        let r = try boardwalk([
            "ingest", "--db", db, "-q", "--rejects", directory.appendingPathComponent("rejects").path, path,
        ])
        #expect(r.status == 0, "\(r.stderr)")
    }

    func rows(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
    }

    @Test("Rows: one per stored event, in seq order, every session present; --since-seq gives the rest")
    func exportRows() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try ingest(sessions: 30)
        let all = try boardwalk(["export", "--db", db, "--format", "clickhouse"])
        #expect(all.status == 0, "\(all.stderr)")
        let everything = try rows(all.stdout)
        let stats = try boardwalk(["stats", "--db", db, "--format", "json"])
        let counts = try #require(try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Any])
        #expect(everything.count == counts["events"] as? Int)
        let seqs = everything.compactMap { $0["seq"] as? Int }
        #expect(seqs == seqs.sorted() && Set(seqs).count == seqs.count && seqs.count == everything.count)
        let sessions = Set(everything.compactMap { $0["session"] as? String })
        #expect(!sessions.contains(""))
        #expect(sessions.count == counts["sessions"] as? Int)
        #expect(sessions.contains { $0.hasPrefix("inferred:") })
        #expect(all.stderr == "exported \(everything.count) events; next: --since-seq \(seqs.last! + 1)\n")
        // Asking past the end exports nothing and points back at the store's next seq, not past it.
        let beyond = try boardwalk(["export", "--db", db, "--format", "clickhouse", "--since-seq", "99999999"])
        #expect(beyond.status == 0 && beyond.stdout.isEmpty)
        #expect(beyond.stderr == "exported 0 events; next: --since-seq \(seqs.last! + 1)\n")

        let middle = seqs[seqs.count / 2]
        let rest = try boardwalk(["export", "--db", db, "--format", "clickhouse", "--since-seq", String(middle)])
        #expect(rest.status == 0)
        let tail = try rows(rest.stdout)
        #expect(tail.compactMap { $0["seq"] as? Int } == Array(seqs[(seqs.count / 2)...]))
        #expect(
            rest.stdout
                == all.stdout.split(separator: "\n", omittingEmptySubsequences: false)[(seqs.count / 2)...].joined(
                    separator: "\n"))
    }

    @Test("An event outside DateTime64's years stops the export with its seq, not a silently moved time")
    func exportRefusesTimesClickHouseCannotHold() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        // 2400-01-01 and 2026-11-01 (milliseconds since the epoch): the first cannot be a DateTime64(6).
        let lines = [13_569_465_600_000, 1_793_491_200_000].map { ms in
            #"{"timestamp":\#(ms),"session_id":"s1","kind":"onboarding_loaded","meta":{"onboarding_id":"o","screen_cid":"welcome","screen_index":0,"total_screens":3}}"#
        }
        let path = directory.appendingPathComponent("old.ndjson").path
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        let ingest = try boardwalk(["ingest", "--db", db, "-q", path])
        #expect(ingest.status == 0, "\(ingest.stderr)")
        let r = try boardwalk(["export", "--db", db, "--format", "clickhouse"])
        #expect(r.status == 1)
        #expect(r.stderr.contains("event seq 0: its time 2400-01-01T00:00:00"), "\(r.stderr)")
        #expect(r.stderr.contains("outside what ClickHouse's DateTime64 holds"))
        // From the next seq on, everything fits.
        let rest = try boardwalk(["export", "--db", db, "--format", "clickhouse", "--since-seq", "1"])
        #expect(rest.status == 0, "\(rest.stderr)")
        #expect(try rows(rest.stdout).count == 1)
    }

    @Test("--schema prints the CREATE TABLE of docs/clickhouse.md")
    func schema() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let r = try boardwalk(["export", "--format", "clickhouse", "--schema"])
        #expect(r.status == 0)
        #expect(r.stdout == ClickHouseTable.createStatement())
        let doc = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/clickhouse.md")
        let text = try String(contentsOf: doc, encoding: .utf8)
        #expect(text.contains("```sql\n" + r.stdout + "```"), "docs/clickhouse.md must show the DDL the CLI prints")
        let named = try boardwalk(["export", "--format", "clickhouse", "--schema", "--table", "analytics.events"])
        #expect(named.stdout.hasPrefix("CREATE TABLE IF NOT EXISTS analytics.events\n"))
        // --output takes the statement as it takes rows (it was printed on stdout, the option ignored).
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("schema.sql")
        let written = try boardwalk(["export", "--format", "clickhouse", "--schema", "--output", file.path])
        #expect(written.status == 0 && written.stdout.isEmpty, "\(written.stderr)")
        #expect(try String(contentsOf: file, encoding: .utf8) == ClickHouseTable.createStatement())
    }

    @Test("--sql clickhouse prints SQL without opening a store; untranslatable queries fail like query errors")
    func sql() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let r = try boardwalk([
            "query", "--db", directory.appendingPathComponent("absent.db").path, "--sql", "clickhouse",
            "--table", "t", "sessions | count by exit",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == (try Query.parse("sessions | count by exit").clickHouseSQL(table: "t")) + "\n")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("absent.db").path))

        let explain = try boardwalk(["query", "--sql", "clickhouse", "events | count | explain"])
        #expect(explain.status == 1)
        #expect(explain.stdout.isEmpty)
        #expect(explain.stderr.hasPrefix("error: cannot translate to ClickHouse: `explain`"))

        let bad = try boardwalk(["query", "--sql", "clickhouse", "events | cont"])
        #expect(bad.status == 1)
        #expect(bad.stderr.hasPrefix("error: unknown stage"))
    }

    @Test(
        "Usage errors",
        arguments: [
            (
                ["query", "--sql", "postgres", "events | count"],
                "Error: option '--sql' must be one of clickhouse, got 'postgres'"
            ),
            (["query", "--sql", "clickhouse", "-"], "Error: --sql translates one query given as an argument"),
            (["query", "--table", "t", "events | count"], "Error: --table goes with --sql"),
            (
                ["query", "--sql", "clickhouse", "--format", "json", "events | count"],
                "Error: --format does not apply to --sql, which runs nothing"
            ),
            (
                ["query", "--sql", "clickhouse", "--timing", "events | count"],
                "Error: --timing does not apply to --sql, which runs nothing"
            ),
            (["export", "--schema"], "Error: --schema goes with --format clickhouse"),
            (["export", "--format", "clickhouse", "--table", "t"], "Error: --table goes with --schema"),
            (
                ["export", "--format", "clickhouse", "--schema", "--since-seq", "5"],
                "Error: --since-seq goes with rows, not with --schema"
            ),
        ])
    func usage(arguments: [String], message: String) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let r = try boardwalk(arguments + ["--db", db])
        #expect(r.status == 64)
        #expect(r.stderr.hasPrefix(message + "\n"), "\(r.stderr)")
    }
}
