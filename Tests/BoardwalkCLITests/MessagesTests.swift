import BoardwalkGenerator
import BoardwalkQuery
import BoardwalkStore
import Foundation
import Testing

@testable import BoardwalkCLI

#if canImport(Glibc)
    import Glibc
#endif

/// What the tool says when things go wrong or partly right: each message names the cause and the next step.
@Suite("Messages")
struct MessagesTests {
    let directory: URL
    init() throws { directory = try temporaryDirectory() }
    var db: String { directory.appendingPathComponent("store.db").path }

    @Test(
        "--db given twice is a usage error, before or after the command",
        arguments: [
            ["--db", "a.db", "--db", "b.db", "stats"], ["--db", "a.db", "stats", "--db", "b.db"],
            ["stats", "--db", "a.db", "--db=b.db"],
        ])
    func databaseTwice(arguments: [String]) throws {
        let out = BufferSink(), err = BufferSink()
        let status = BoardwalkCLI.run(arguments, Invocation(environment: [:], stdout: out, stderr: err))
        #expect(status == ExitCode.usage)
        #expect(err.text.hasPrefix("Error: --db given twice ('a.db', then 'b.db'): give one store\n"), "\(err.text)")
        #expect(out.text.isEmpty)
    }

    @Test("A backup into a directory that does not exist says so, not an LMDB error number")
    func backupIntoMissingDirectory() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let corpus = Corpus(sessions: 3, seed: 2)
        #expect(try boardwalk(["ingest", "-q", "--db", db, "-"], stdin: corpus.text).status == 0)
        let destination = directory.appendingPathComponent("missing/deeper/copy").path
        let r = try boardwalk(["backup", "--db", db, destination])
        #expect(r.status == 1)
        #expect(
            r.stderr
                == "Error: backup to '\(destination)' failed: the directory '\(directory.appendingPathComponent("missing/deeper").path)' does not exist\n"
        )
    }

    @Test(
        "A full disk (ENOSPC, or EIO from a write) says the disk may be full, that nothing of the batch was stored, and to run again",
        arguments: [ENOSPC, EIO])
    func fullDisk(code: Int32) {
        let message = IngestCommand.failureError(StoreError(lmdbCode: code)).description
        #expect(message.contains("the disk may be full"), "\(message)")
        #expect(message.contains("nothing of the batch in progress was stored"), "\(message)")
        #expect(message.contains("once there is space, the same command continues after it"), "\(message)")
    }

    @Test("The resume line counts in words that agree with their numbers, and names batch files only for them")
    func resumeLine() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("one.ndjson").path
        try (Corpus(sessions: 1, seed: 4).text.split(separator: "\n").first! + "\n").write(
            toFile: path, atomically: true, encoding: .utf8)
        #expect(try boardwalk(["ingest", "--db", db, path]).status == 0)
        let again = try boardwalk(["ingest", "--db", db, path])
        #expect(again.status == 0)
        #expect(again.stdout.contains("\nresumed: after 1 line committed by an earlier run\n"), "\(again.stdout)")
        #expect(!again.stdout.contains("batch-file"))
    }

    @Test("The demo's rate is that of storing, not of generating and parsing too")
    func demoTiming() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let r = try boardwalk(["demo", "--db", db, "--sessions", "60"])
        #expect(r.status == 0, "\(r.stderr)")
        let line = try #require(r.stdout.split(separator: "\n").first { $0.hasPrefix("Stored ") })
        #expect(line.contains(" events in "), "\(line)")
        #expect(line.contains("after generating "), "\(line)")
        #expect(line.contains("and parsing it"), "\(line)")
    }

    /// The default rejects file is created at the first rejected line only: a clean ingest run from a directory the
    /// user cannot write works. Needs a directory the process cannot write: as root, the child drops to `nobody`.
    @Test(
        "A clean ingest from a directory the user cannot write succeeds (the default rejects file is made lazily)",
        .enabled(if: getuid() != 0 || access("/usr/bin/setpriv", X_OK) == 0))
    func cleanIngestFromReadOnlyDirectory() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let readOnly = directory.appendingPathComponent("ro")
        let writable = directory.appendingPathComponent("rw")
        try FileManager.default.createDirectory(at: readOnly, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: writable, withIntermediateDirectories: true)
        let input = writable.appendingPathComponent("in.ndjson").path
        try Corpus(sessions: 2, seed: 6).text.write(toFile: input, atomically: true, encoding: .utf8)
        chmod(directory.path, 0o755)
        chmod(readOnly.path, 0o555)
        chmod(writable.path, 0o777)
        chmod(input, 0o644)
        let store = writable.appendingPathComponent("store.db").path
        let run: Execution
        if getuid() == 0 {
            run = try command(
                "/usr/bin/setpriv",
                [
                    "--reuid=65534", "--regid=65534", "--clear-groups",
                    boardwalkExecutable.path, "ingest", "--db", store, input,
                ], in: readOnly)
        } else {
            run = try boardwalk(["ingest", "--db", store, input], directory: readOnly)
        }
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("\nrejected: 0\n"))
    }

    @Test("--timing counts in words that agree with their numbers: 1 event, 1 session")
    func timingLine() throws {
        let event = try #require(SyntheticData(sessions: 1, seed: 3).events().first { $0.session != nil })
        let out = BufferSink(), err = BufferSink()
        let console = QueryConsole(
            source: InMemoryEventSource([event]), invocation: Invocation(environment: [:], stdout: out, stderr: err))
        console.timing = true
        #expect(console.run("sessions | count"))
        #expect(err.text.hasPrefix("(1 row, "), "\(err.text)")
        #expect(err.text.hasSuffix(" 1 event and 1 session read)\n"), "\(err.text)")
    }

    /// Runs an executable (not `boardwalk` itself) with `arguments` in `directory`.
    func command(_ path: String, _ arguments: [String], in directory: URL) throws -> Execution {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.currentDirectoryURL = directory
        process.environment = ["PATH": "/usr/bin:/bin"]
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Execution(
            stdout: String(decoding: outData, as: UTF8.self), stderr: String(decoding: errData, as: UTF8.self),
            status: process.terminationStatus)
    }
}

/// Damage liblmdb reports itself says more than LMDB's own text: what the damage means and what to run.
@Suite("LMDB's damage codes say the file is damaged")
struct LMDBDamageMessageTests {
    @Test func pageNotFoundAndCorruptedNameCheck() {
        for code: Int32 in [-30797, -30796] {  // MDB_PAGE_NOTFOUND, MDB_CORRUPTED
            let error = StoreError(lmdbCode: code, context: "mdb_cursor_get(event_log)")
            #expect(error.meansDamage)
            let report = ErrorReport(error, command: nil)
            #expect(
                report.text.contains("mdb_cursor_get(event_log)") && report.text.contains("The store's file is damaged")
                    && report.text.contains("'boardwalk check'"), "\(report.text)")
        }
        // Not damage: a full map.
        let mapFull = StoreError(lmdbCode: -30792)  // MDB_MAP_FULL
        #expect(!mapFull.meansDamage)
        #expect(!ErrorReport(mapFull, command: nil).text.contains("damaged"))
    }
}
