import BoardwalkGenerator
import BoardwalkJSON
import BoardwalkModel
import Foundation
import Testing

@testable import BoardwalkCLI

/// A generated corpus as NDJSON text, with what it holds.
struct Corpus {
    var text: String
    var events: [Event]

    /// `sessions` sessions of seed `seed`, every line in the generator's mixed shapes.
    init(sessions: Int, seed: UInt64) {
        var text = ""
        var events: [Event] = []
        for (event, _, line) in SyntheticData(sessions: sessions, seed: seed).lines() {
            text += line
            events.append(event)
        }
        self.text = text
        self.events = events
    }
}

extension Event {
    /// The event as the store gives it back, for comparison: sessions the store inferred are not the
    /// generator's to know.
    var withoutInferredSession: Event {
        var e = self
        if e.session?.hasPrefix("inferred:") == true { e.session = nil }
        return e
    }
}

/// Reads canonical NDJSON (an export) back into events.
func readNDJSON(_ text: String) throws -> [Event] {
    let reader = try EventReader()
    var out: [Event] = []
    for (i, line) in text.split(separator: "\n").enumerated() {
        out.append(try reader.read(String(line), lineNumber: i + 1, arrival: Timestamp(microseconds: 0)))
    }
    return out
}

func sortedLines(_ events: [Event]) -> [String] { events.map { CanonicalJSON.line($0) }.sorted() }

@Suite("ingest, stats, export, check, backup: end to end")
struct StoreEndToEndTests {
    let directory: URL
    init() throws { directory = try temporaryDirectory() }
    var db: String { directory.appendingPathComponent("store.db").path }

    func write(_ text: String, _ name: String) throws -> String {
        let path = directory.appendingPathComponent(name).path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func summary(_ stdout: String) -> [String: Int] {
        var out: [String: Int] = [:]
        for line in stdout.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, let n = Int(parts[1].split(separator: " ").first ?? "") { out[String(parts[0])] = n }
        }
        return out
    }

    func statsJSON() throws -> [String: Any] {
        let r = try boardwalk(["stats", "--db", db, "--format", "json"])
        #expect(r.status == 0, "\(r.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
    }

    @Test("A corpus with bad lines: counts add up, the rejects file names each bad line, export reads back")
    func ingestWithRejects() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let corpus = Corpus(sessions: 150, seed: 12)
        #expect(corpus.events.contains { $0.payload.actionID == "" })  // empty strings are part of the test
        var lines = corpus.text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        let bad = [
            "{\"type\":\"close\"}", "not json at all",
            "{\"type\":\"state_updated\",\"element_id\":\"x\",\"element_type\":\"slider\",\"value\":1,\"meta\":{\"onboarding_id\":\"o\",\"screen_cid\":\"s\",\"screen_index\":0,\"total_screens\":1}}",
            "[1,2,3]",
            "{\"type\":\"analytics\",\"name\":\"screen_presented\",\"meta\":{\"onboarding_id\":\"o\",\"screen_cid\":\"s\",\"screen_index\":\"2\",\"total_screens\":3}}",
        ]
        var badLineNumbers: [Int] = []
        for (i, b) in bad.enumerated() {
            let at = (i + 1) * lines.count / (bad.count + 1)
            lines.insert(b, at: at)
        }
        for (i, line) in lines.enumerated() where bad.contains(line) { badLineNumbers.append(i + 1) }
        let input = try write(lines.joined(separator: "\n") + "\n", "mixed.ndjson")
        let rejects = directory.appendingPathComponent("rejects.txt").path

        let r = try boardwalk(["ingest", "--db", db, "--rejects", rejects, input])
        #expect(r.status == 2, "\(r.stderr)")
        let s = summary(r.stdout)
        #expect(s["lines"] == lines.count)
        #expect(s["ingested"] == corpus.events.count)
        #expect(s["rejected"] == bad.count)
        #expect(s["ingested"]! + s["rejected"]! + s["duplicates"]! == lines.count)
        let rejectsText = try String(contentsOfFile: rejects, encoding: .utf8)
        let entries = rejectsText.split(separator: "\n").filter { !$0.hasPrefix("\t") }
        #expect(entries.count == bad.count)
        for (n, text) in zip(badLineNumbers, bad) {
            #expect(rejectsText.contains("\(input):\(n): line \(n)"))
            #expect(rejectsText.contains("\t" + text + "\n") || text.count > 1000)
        }

        let stats = try statsJSON()
        #expect(stats["events"] as? Int == corpus.events.count)
        // ingest folds the logs when its inputs are read.
        #expect(stats["event_log_batches"] as? Int == 0 && stats["session_log_batches"] as? Int == 0, "\(stats)")

        let export = try boardwalk(["export", "--db", db])
        #expect(export.status == 0)
        #expect(
            export.stderr == "exported \(corpus.events.count) events; next: --since-seq \(corpus.events.count)\n"
                || export.stderr.hasPrefix("exported \(corpus.events.count) events; next: --since-seq "))
        let exported = try readNDJSON(export.stdout).map(\.withoutInferredSession)
        #expect(sortedLines(exported) == sortedLines(corpus.events))

        let check = try boardwalk(["check", "--db", db])
        #expect(check.status == 0)
        #expect(check.stdout == "ok: \(corpus.events.count) events checked\n")
    }

    @Test("Exactly once: a re-run after a killed ingest stores every event once; a third run adds nothing")
    func exactlyOnceAfterKill() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        // Enough events, in small batches (a durable commit each), that the run is still going when a poll sees
        // its first commit: with 300 sessions the pipelined ingest could end between two polls.
        let corpus = Corpus(sessions: 1_500, seed: 31)
        let input = try write(corpus.text, "events.ndjson")
        let process = Process()
        process.executableURL = boardwalkExecutable
        process.arguments = ["ingest", "--db", db, "--batch", "10", "--quiet", input]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        var storedBeforeKill = 0
        while process.isRunning {
            if let r = try? boardwalk(["stats", "--db", db, "--format", "json"]), r.status == 0,
                let o = try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any],
                let n = o["events"] as? Int, n > 0
            {
                kill(process.processIdentifier, SIGKILL)
                storedBeforeKill = n
                break
            }
            usleep(2_000)
        }
        process.waitUntilExit()
        #expect(storedBeforeKill > 0)
        let killed = process.terminationReason == .uncaughtSignal
        let afterKill = try statsJSON()["events"] as? Int ?? -1
        if killed { #expect(afterKill < corpus.events.count, "the kill came after the end; the test proves less") }

        let second = try boardwalk(["ingest", "--db", db, input])
        #expect(second.status == 0, "\(second.stderr)")
        let s = summary(second.stdout)
        #expect(afterKill + s["ingested"]! == corpus.events.count)
        let third = try boardwalk(["ingest", "--db", db, input])
        #expect(summary(third.stdout)["ingested"] == 0)
        #expect(try statsJSON()["events"] as? Int == corpus.events.count)

        let exported = try readNDJSON(try boardwalk(["export", "--db", db]).stdout).map(\.withoutInferredSession)
        #expect(sortedLines(exported) == sortedLines(corpus.events))
        #expect(try boardwalk(["check", "--db", db]).status == 0)
    }

    @Test(
        "A file whose last line is still being written: rejected, not skipped past, then stored once (the user's pass)")
    func unfinishedLastLineIsReadAgainByTheNextRun() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let corpus = Corpus(sessions: 20, seed: 5)
        let text = corpus.text.hasSuffix("\n") ? corpus.text : corpus.text + "\n"
        // Cut inside the last line's JSON: the writer has not finished it.
        let lastLineStart = text.dropLast().lastIndex(of: "\n").map { text.index(after: $0) } ?? text.startIndex
        let cut = text.index(lastLineStart, offsetBy: 20)
        let path = try write(String(text[..<cut]), "growing.ndjson")
        let rejects = directory.appendingPathComponent("rejects.txt").path
        let first = try boardwalk(["ingest", "--db", db, "--rejects", rejects, path])
        // A line like any other: a pipe rejects it too (exit 2).
        #expect(first.status == 2, "\(first.stderr)")
        #expect(summary(first.stdout)["rejected"] == 1)
        #expect(summary(first.stdout)["ingested"] == corpus.events.count - 1)
        #expect(
            first.stdout.contains("unfinished: the last line of a file has no newline and does not parse"),
            "\(first.stdout)")
        let listed = try String(contentsOfFile: rejects, encoding: .utf8)
        #expect(listed.hasPrefix("\(path):\(corpus.events.count):"), "\(listed)")
        #expect(listed.contains("(the file's last line, without a newline: the next run reads it again)"), "\(listed)")
        let strict = try boardwalk(["ingest", "--db", db, "--strict", "--rejects", rejects, path])
        #expect(strict.status == 1)
        // The writer finishes the line and the file.
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(text[cut...].utf8))
        try handle.close()
        let second = try boardwalk(["ingest", "--db", db, path])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(summary(second.stdout)["ingested"] == 1)
        #expect(summary(second.stdout)["rejected"] == 0)
        #expect(try statsJSON()["events"] as? Int == corpus.events.count)
    }

    @Test(
        "stdin, duplicates by event id and by content, --keep-identical, --strict, CSV and batch export, incremental export, backup"
    )
    func formsAndFormats() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let corpus = Corpus(sessions: 40, seed: 8)
        let first = try boardwalk(["ingest", "--db", db, "-"], stdin: corpus.text)
        #expect(first.status == 0)
        #expect(summary(first.stdout)["ingested"] == corpus.events.count)
        // The same lines again through stdin (no checkpoint): every event is a duplicate, those with ids by their id,
        // the others by their content.
        let withIDs = corpus.events.filter { $0.eventID != nil }.count
        let again = try boardwalk(["ingest", "--db", db], stdin: corpus.text)
        #expect(summary(again.stdout)["duplicates"] == corpus.events.count)
        #expect(summary(again.stdout)["ingested"] == 0)
        // With --keep-identical, events with ids are duplicates, the others new.
        let kept = try boardwalk(["ingest", "--db", db, "--keep-identical"], stdin: corpus.text)
        #expect(summary(kept.stdout)["duplicates"] == withIDs)
        #expect(summary(kept.stdout)["ingested"] == corpus.events.count - withIDs)
        let total = corpus.events.count + corpus.events.count - withIDs

        // --strict: stops at the bad line, exit 1, and the batch with it is not committed.
        let strictInput = try write(
            corpus.text.split(separator: "\n").prefix(10).joined(separator: "\n") + "\nnope\n", "strict.ndjson")
        let strictDB = directory.appendingPathComponent("strict.db").path
        let strictRejects = directory.appendingPathComponent("strict-rejects.txt").path
        let strict = try boardwalk(["ingest", "--db", strictDB, "--strict", "--rejects", strictRejects, strictInput])
        #expect(strict.status == 1)
        // The line it stopped at is listed, as the summary says.
        #expect(
            try String(contentsOfFile: strictRejects, encoding: .utf8)
                == "\(strictInput):11: line 11, column 1: invalid JSON\n\tnope\n")
        #expect(strict.stderr.hasPrefix("Error: \(strictInput): line 11"))
        #expect(try boardwalk(["stats", "--db", strictDB, "-f", "json"]).stdout.hasPrefix("{\"events\":0,"))

        // CSV: a header and one row per event, parsed back by column.
        let csv = try boardwalk(["export", "--db", db, "--format", "csv"])
        #expect(csv.status == 0)
        let rows = parseCSV(csv.stdout)
        #expect(rows.first?.first == "time")
        #expect(rows.count == total + 1)
        let kindColumn = rows[0].firstIndex(of: "kind")!
        var kinds: [String: Int] = [:]
        for row in rows.dropFirst() { kinds[row[kindColumn], default: 0] += 1 }
        var expectedKinds: [String: Int] = [:]
        for e in corpus.events { expectedKinds[e.kind.name, default: 0] += 1 }
        for e in corpus.events where e.eventID == nil { expectedKinds[e.kind.name, default: 0] += 1 }
        #expect(kinds == expectedKinds)

        // Incremental: from the next seq printed, nothing; from seq 5, all but the first five.
        let all = try boardwalk(["export", "--db", db])
        let next = all.stderr.split(separator: " ").last.map { String($0.dropLast()) } ?? ""
        let none = try boardwalk(["export", "--db", db, "--since-seq", next])
        #expect(none.stdout.isEmpty)
        #expect(none.stderr == "exported 0 events; next: --since-seq \(next)\n")
        let tail = try boardwalk(["export", "--db", db, "--since-seq", "5"])
        #expect(tail.stdout.split(separator: "\n").count == total - 5)

        // Batch export, ingested into a fresh store, gives the same events: with --keep-identical, as the store holds
        // identical events kept with it; without, each of them once.
        let batchFile = directory.appendingPathComponent("all.bwk").path
        #expect(try boardwalk(["export", "--db", db, "--format", "batch", "--output", batchFile]).status == 0)
        let onceDB = directory.appendingPathComponent("once.db").path
        let once = try boardwalk(["ingest", "--db", onceDB, batchFile])
        #expect(summary(once.stdout)["ingested"] == corpus.events.count)
        #expect(summary(once.stdout)["duplicates"] == total - corpus.events.count)
        let copyDB = directory.appendingPathComponent("copy.db").path
        let fromBatch = try boardwalk(["ingest", "--db", copyDB, "--keep-identical", batchFile])
        #expect(fromBatch.status == 0, "\(fromBatch.stderr)")
        #expect(summary(fromBatch.stdout)["ingested"] == total)
        let copied = try readNDJSON(try boardwalk(["export", "--db", copyDB]).stdout)
        #expect(sortedLines(copied) == sortedLines(try readNDJSON(all.stdout)))
        // The same batch file through a pipe on standard input.
        let stdinDB = directory.appendingPathComponent("stdin.db").path
        let piped = Process()
        piped.executableURL = boardwalkExecutable
        piped.arguments = ["ingest", "--db", stdinDB, "--keep-identical", "-"]
        let pipe = Pipe()
        piped.standardInput = pipe
        piped.standardOutput = FileHandle.nullDevice
        try piped.run()
        pipe.fileHandleForWriting.write(try Data(contentsOf: URL(fileURLWithPath: batchFile)))
        try pipe.fileHandleForWriting.close()
        piped.waitUntilExit()
        #expect(piped.terminationStatus == 0)
        #expect(
            try boardwalk(["export", "--db", stdinDB]).stdout == (try boardwalk(["export", "--db", copyDB]).stdout))

        // Backup: a store with the same events; a second backup to the same place fails.
        let backupDir = directory.appendingPathComponent("backup").path
        let backup = try boardwalk(["backup", "--db", db, backupDir])
        #expect(backup.status == 0, "\(backup.stderr)")
        #expect(try boardwalk(["export", "--db", backupDir]).stdout == all.stdout)
        let twice = try boardwalk(["backup", "--db", db, backupDir])
        #expect(twice.status == 1)
        #expect(twice.stderr.hasPrefix("Error: backup to '\(backupDir)' failed"))
    }

    @Test("BOARDWALK_DB chooses the store; a missing store is a runtime error")
    func environment() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let corpus = Corpus(sessions: 5, seed: 2)
        let r = try boardwalk(["ingest", "-"], stdin: corpus.text, environment: ["BOARDWALK_DB": db])
        #expect(r.status == 0)
        let stats = try boardwalk(["stats", "-f", "json"], environment: ["BOARDWALK_DB": db])
        #expect(stats.stdout.hasPrefix("{\"events\":\(corpus.events.count),"))
        let missing = try boardwalk(["stats", "--db", directory.appendingPathComponent("nope").path])
        #expect(missing.status == 1)
        #expect(missing.stderr.hasPrefix("Error: no store at "))
        // A query that cannot run is reported as such before the store is looked for.
        let mistaken = try boardwalk([
            "query", "--db", directory.appendingPathComponent("nope").path, #"sessions | where duration == "x""#,
        ])
        #expect(mistaken.status == 1)
        #expect(mistaken.stderr.hasPrefix("error: cannot compare a duration with a string"), "\(mistaken.stderr)")
        let valid = try boardwalk(["query", "--db", directory.appendingPathComponent("nope").path, "sessions | count"])
        #expect(valid.stderr.hasPrefix("Error: no store at "))
        let noFile = try boardwalk(["ingest", "--db", db, directory.appendingPathComponent("absent.ndjson").path])
        #expect(noFile.status == 1)
        #expect(noFile.stderr.contains("cannot open"))
    }

    @Test(
        "A store the user may not write is still queried and checked (read without its lock file), with a note; ingest into it fails"
    )
    func storeOfAnotherUser() throws {
        defer {
            _ = chmod(directory.path, 0o755)
            _ = chmod(db, 0o755)
            try? FileManager.default.removeItem(at: directory)
        }
        let corpus = Corpus(sessions: 4, seed: 3)
        #expect(try boardwalk(["ingest", "--db", db, "-q", "-"], stdin: corpus.text).status == 0)
        for name in ["data.mdb", "lock.mdb"] { #expect(chmod(db + "/" + name, 0o444) == 0) }
        #expect(chmod(db, 0o555) == 0)
        #expect(chmod(directory.path, 0o755) == 0)
        // Root may write anything, so as root the commands run as `nobody` (through setpriv, on a copy of the
        // executable that nobody may run: the checkout can sit in a directory only root may enter).
        var command: [String] = []
        if geteuid() == 0 {
            let copy = directory.appendingPathComponent("boardwalk").path
            try FileManager.default.copyItem(atPath: boardwalkExecutable.path, toPath: copy)
            #expect(chmod(copy, 0o755) == 0)
            command = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", copy]
        }
        func asUser(_ arguments: [String]) throws -> Execution {
            guard let tool = command.first else { return try boardwalk(arguments, directory: directory) }
            return try run(tool: tool, Array(command.dropFirst()) + arguments, directory: directory)
        }
        let note = "note: '\(db)/lock.mdb' is not writable here, so the store is read without it"
        let count = try asUser(["query", "--db", db, "--format", "csv", "sessions | count"])
        #expect(count.status == 0, "\(count.stderr)")
        #expect(count.stdout == "count\n4\n")
        #expect(count.stderr.hasPrefix(note), "\(count.stderr)")
        let check = try asUser(["check", "--db", db])
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stdout.contains("ok: \(corpus.events.count) events checked"), "\(check.stdout)")
        let ingest = try asUser(["ingest", "--db", db, "-q", "-"])
        #expect(ingest.status == 1)
        #expect(
            ingest.stderr.contains("cannot open the store '\(db)'") && ingest.stderr.contains("Permission denied"),
            "\(ingest.stderr)")
        // While another process has the store open (here a REPL of its owner, started while the owner could write
        // the lock file), reading without the lock file could crash: refused, with the holder named.
        _ = chmod(db, 0o755)
        for name in ["data.mdb", "lock.mdb"] { _ = chmod(db + "/" + name, 0o644) }
        let holder = Process()
        holder.executableURL = boardwalkExecutable
        holder.arguments = ["repl", "--db", db]
        let input = Pipe()
        holder.standardInput = input
        holder.standardOutput = FileHandle.nullDevice
        holder.standardError = FileHandle.nullDevice
        try holder.run()
        // Wait (at most 60 s) until it has the store open: it then holds LMDB's shared lock on lock.mdb's first byte.
        func held() -> Bool {
            let fd = open(db + "/lock.mdb", O_RDONLY)
            guard fd >= 0 else { return false }
            defer { close(fd) }
            var lock = Glibc.flock()
            lock.l_type = Int16(F_WRLCK)
            lock.l_whence = Int16(SEEK_SET)
            lock.l_len = 1
            return fcntl(fd, F_GETLK, &lock) == 0 && lock.l_type != Int16(F_UNLCK)
        }
        for _ in 0..<3000 where !held() { usleep(20_000) }
        #expect(held(), "the REPL did not open the store")
        for name in ["data.mdb", "lock.mdb"] { _ = chmod(db + "/" + name, 0o444) }
        _ = chmod(db, 0o555)
        let refused = try asUser(["query", "--db", db, "sessions | count"])
        try input.fileHandleForWriting.close()
        holder.waitUntilExit()
        #expect(refused.status == 1, "\(refused.stderr)")
        #expect(
            refused.stderr.contains("is open in another process (pid \(holder.processIdentifier))"), "\(refused.stderr)"
        )
        // Where this user may write, no note.
        _ = chmod(db, 0o755)
        for name in ["data.mdb", "lock.mdb"] { _ = chmod(db + "/" + name, 0o666) }
        let writable = try asUser(["query", "--db", db, "sessions | count"])
        #expect(writable.status == 0 && writable.stderr.isEmpty, "\(writable.stderr)")
    }

    @Test("A rejects file that cannot be written fails before anything is ingested")
    func unwritableRejectsFile() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("bad.ndjson").path
        try "{not json\n".write(toFile: input, atomically: true, encoding: .utf8)
        let fresh = directory.appendingPathComponent("fresh.db").path
        let rejects = directory.appendingPathComponent("missing-dir/rejects.txt").path
        let r = try boardwalk(["ingest", "--db", fresh, "--rejects", rejects, input])
        #expect(r.status == 1)
        #expect(r.stderr.contains("cannot write the rejects file '\(rejects)'"), "\(r.stderr)")
        #expect(!r.stdout.contains("listed in"))
        #expect(!FileManager.default.fileExists(atPath: fresh))
        // A bad input file is not something a second run fixes: no promise that it would continue.
        let batch = directory.appendingPathComponent("bad.bwb").path
        let export = try boardwalk(["ingest", "--db", db, "-q", "-"], stdin: Corpus(sessions: 3, seed: 1).text)
        #expect(export.status == 0)
        let file = try boardwalk(["export", "--db", db, "--format", "batch", "--output", batch])
        #expect(file.status == 0)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: batch))
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: batch))
        let truncated = try boardwalk(["ingest", "--db", db, "-q", batch])
        #expect(truncated.status == 1)
        #expect(truncated.stderr.contains("what was committed before stays)"), "\(truncated.stderr)")
        #expect(!truncated.stderr.contains("run the same command again"))
    }
}

/// A small RFC 4180 reader for the tests.
func parseCSV(_ text: String) -> [[String]] {
    var rows: [[String]] = []
    var row: [String] = []
    var field = ""
    var quoted = false
    var chars = Array(text)[...]
    while let c = chars.popFirst() {
        if quoted {
            if c == "\"" {
                if chars.first == "\"" { field.append("\""); chars.removeFirst() } else { quoted = false }
            } else {
                field.append(c)
            }
        } else if c == "\"" {
            quoted = true
        } else if c == "," {
            row.append(field); field = ""
        } else if c == "\n" {
            row.append(field); field = ""
            rows.append(row); row = []
        } else {
            field.append(c)
        }
    }
    if !field.isEmpty || !row.isEmpty { row.append(field); rows.append(row) }
    return rows
}

@Suite("query, repl and demo over a store: end to end")
struct StoreQueryEndToEndTests {
    let directory: URL
    init() throws { directory = try temporaryDirectory() }
    var db: String { directory.appendingPathComponent("store.db").path }

    @Test("Queries over the store agree with the generator and with the in-memory source")
    func queriesOverStore() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let corpus = Corpus(sessions: 120, seed: 4)
        #expect(try boardwalk(["ingest", "--db", db, "-"], stdin: corpus.text).status == 0)
        let json = try boardwalk(["query", "--db", db, "-f", "json", "events | count"])
        #expect(json.status == 0, "\(json.stderr)")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(rows.first?["count"] as? Int == corpus.events.count)
        // Queries that do not depend on session inference read the same from the store and from memory.
        for query in [
            "events | count by kind", "events | where kind == \"analytics\" | count by name",
            "events | where name == \"screen_presented\" | stats p50(dwell), p90(dwell) by screen",
            "events | where element_type == \"select\" | top 5 value",
            // Sessions: the store infers missing session ids at append, the in-memory source at load; both
            // follow rule 10, so the answers must agree.
            "sessions | count", "sessions | count by exit", "sessions | where completed | count by answer(\"goal\")",
        ] {
            let store = try boardwalk(["query", "--db", db, "-f", "csv", query])
            let memory = try boardwalk(["query", "--generated", "120", "--seed", "4", "-f", "csv", query])
            #expect(store.status == 0 && memory.status == 0, "\(store.stderr)\(memory.stderr)")
            #expect(store.stdout == memory.stdout, "\(query)")
        }
        let completed = try boardwalk(["query", "--db", db, "-f", "csv", "sessions | where completed | count"])
        let generatedCompleted = Array(SyntheticData(sessions: 120, seed: 4).sessions()).filter {
            $0.outcome == .completed
        }.count
        #expect(completed.stdout == "count\n\(generatedCompleted)\n")
    }

    @Test("The REPL over the store through a pipe: .stats, .onboardings, an error in the middle")
    func replOverStore() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let corpus = Corpus(sessions: 30, seed: 6)
        #expect(try boardwalk(["ingest", "--db", db, "-"], stdin: corpus.text).status == 0)
        let r = try boardwalk(
            ["repl", "--db", db],
            stdin: ".stats\n.onboardings\nevents | where screen_idx > 1 | count\n.format json\nevents | count\n")
        #expect(r.status == 2)
        #expect(
            r.stdout.contains("events              \(corpus.events.count)")
                || r.stdout.contains("(\(corpus.events.count))"))
        for id in Set(corpus.events.compactMap { $0.meta?.onboardingID }) { #expect(r.stdout.contains(id)) }
        #expect(r.stdout.hasSuffix("[\n  {\"count\": \(corpus.events.count)}\n]\n"))
        #expect(r.stderr.contains("error: unknown field `screen_idx`"))
    }

    @Test("demo fills an empty store and prints its answers with their queries; a second run reuses the store")
    func demo() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let r = try boardwalk(["demo", "--db", db, "--sessions", "150"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasPrefix("Generating 150 onboarding sessions"))
        let events = Array(SyntheticData(sessions: 150, seed: 1).events()).count
        #expect(
            r.stdout.contains("Stored \(events) events") || r.stdout.contains("Stored \(Units.count(events)) events"))
        for title in [
            "Sessions per onboarding", "Screen funnel of the busiest onboarding", "Completion by answer to",
            "Completion by answer against the most common", "p_value", "baseline", "Time on each screen",
            "How sessions end", "boardwalk repl --db \(db)",
        ] {
            #expect(r.stdout.contains(title))
        }
        #expect(r.stdout.contains("sessions | where onboarding == \""))
        #expect(r.stdout.contains("█"))
        // Rule 7: the time on a screen says how many presentations ended there, untimed.
        #expect(r.stdout.contains(" ended here, untimed"))
        #expect(!r.stdout.contains("\u{1B}["))  // not a terminal: no colour
        let stats = try boardwalk(["stats", "--db", db, "-f", "json"])
        #expect(stats.stdout.hasPrefix("{\"events\":\(events),"))
        let again = try boardwalk(["demo", "--db", db])
        #expect(again.status == 0)
        #expect(again.stdout.hasPrefix("The store at \(db) already holds"))
        #expect(try boardwalk(["stats", "--db", db, "-f", "json"]).stdout.hasPrefix("{\"events\":\(events),"))
    }
}

@Suite("query interrupted by a signal")
struct QueryInterruptTests {
    @Test("SIGINT while a query prints stops it with status 130, and the store is as it was")
    func interruptedListing() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let db = directory.appendingPathComponent("q.db").path
        let corpus = Corpus(sessions: 200, seed: 8)
        #expect(try boardwalk(["ingest", "--db", db, "-q", "-"], stdin: corpus.text).status == 0)
        let before = try boardwalk(["stats", "--db", db, "-f", "json"]).stdout
        let process = Process()
        process.executableURL = boardwalkExecutable
        // Thousands of rows: more than a pipe holds, so the listing waits on the unread pipe when the signal comes.
        process.arguments = ["query", "--db", db, "events | select time, seq, session, name, screen"]
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // The signal comes once the listing has begun (a few lines printed), however long a loaded machine takes.
        var printed = Data()
        while printed.filter({ $0 == UInt8(ascii: "\n") }).count < 3 {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            printed.append(chunk)
        }
        kill(process.processIdentifier, SIGINT)
        printed.append(output.fileHandleForReading.readDataToEndOfFile())
        process.waitUntilExit()
        #expect(process.terminationStatus == 130)
        #expect(String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) == "cancelled\n")
        let lines = String(decoding: printed, as: UTF8.self).split(separator: "\n")
        #expect(
            lines.count > 2 && lines.count < corpus.events.count + 2,
            "\(lines.count) lines of \(corpus.events.count) events")
        #expect(try boardwalk(["check", "--db", db]).status == 0)
        #expect(try boardwalk(["stats", "--db", db, "-f", "json"]).stdout == before)
    }
}

@Suite("ingest from a live pipe")
struct StreamingIngestTests {
    @Test("tail -f style: a quiet pipe has its events committed; Ctrl-C ends the run with status 130")
    func quietPipeAndInterrupt() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let db = directory.appendingPathComponent("live.db").path
        let corpus = Corpus(sessions: 3, seed: 5)
        let process = Process()
        process.executableURL = boardwalkExecutable
        process.arguments = ["ingest", "--db", db, "-"]
        let input = Pipe(), output = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        input.fileHandleForWriting.write(Data(corpus.text.utf8))  // and the pipe stays open, like tail -f
        // The events appear in the store without the pipe closing (committed after 200 ms of quiet).
        var stored = 0
        let deadline = Date().addingTimeInterval(30)
        while stored < corpus.events.count, Date() < deadline {
            usleep(50_000)
            let r = try boardwalk(["stats", "--db", db, "-f", "json"])
            if r.status == 0, let o = try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any] {
                stored = o["events"] as? Int ?? 0
            }
        }
        #expect(stored == corpus.events.count)
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
        #expect(process.terminationStatus == 130)
        let err = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(err.hasPrefix("interrupted: everything up to the last committed batch is stored"))
        let out = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(out.contains("ingested: \(corpus.events.count)\n"))
        try? input.fileHandleForWriting.close()
    }
}

extension StoreEndToEndTests {
    @Test("--strict over a file an earlier run ingested says that the lines it skipped were not checked")
    func strictAfterAResume() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = try write("{\"bad\":1}\n" + Corpus(sessions: 3, seed: 4).text, "bad.ndjson")
        let rejects = directory.appendingPathComponent("rejects.txt").path
        let first = try boardwalk(["ingest", "--db", db, "--rejects", rejects, file])
        #expect(first.status == 2, "\(first.stderr)")
        let strict = try boardwalk(["ingest", "--db", db, "--strict", "-q", "--rejects", rejects, file])
        #expect(strict.status == 0, "\(strict.stderr)")
        // Said on stderr even with --quiet, the obvious choice for a validation script.
        #expect(strict.stderr.contains("strict: only what this run read was checked"), "\(strict.stderr)")
        // The way it suggests (a scratch store) checks the whole file again, and fails on its bad line.
        let scratch = try boardwalk(["ingest", "--db", db + "-scratch", "--strict", "--rejects", rejects, file])
        #expect(scratch.status == 1 && !scratch.stderr.contains("strict: only"), "\(scratch.stderr)")
    }
}
