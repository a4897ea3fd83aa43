import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `backup` and `export -o` stopped by real signals: they remove what they began, exit 130 or 143, and say how to go
/// on; a SIGINT inherited as ignored stays ignored.
@Suite("backup and export stopped by SIGINT and SIGTERM")
struct StopSignalsTests {
    let directory: URL
    var db: String { directory.appendingPathComponent("db").path }
    init() throws { directory = try temporaryDirectory() }

    /// A store large enough that a backup or export takes a while: 1 500 sessions, about 50 k events.
    func makeStore() throws {
        let generated = try boardwalk(["generate", "-n", "1500", "--seed", "9"])
        let r = try boardwalk(["ingest", "--db", db, "-q", "-"], stdin: generated.stdout)
        #expect(r.status == 0, "\(r.stderr)")
    }

    /// Starts `arguments` (through `sh`, with `SIGINT` ignored when `ignoringInterrupt`), waits until `started` says
    /// the work began, and sends `signal`; returns the status, stderr, and whether the signal came in time (the work
    /// still running: it was not over when it was sent).
    func stop(
        _ arguments: [String], signal: Int32, ignoringInterrupt: Bool = false, started: () -> Bool
    ) throws -> (status: Int32, stderr: String, inTime: Bool) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        let trap = ignoringInterrupt ? "trap '' INT; " : ""
        process.arguments = ["-c", trap + "exec \"$0\" \"$@\"", boardwalkExecutable.path] + arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(30)
        while !started() && process.isRunning && Date() < deadline { usleep(200) }
        // Frozen while the signal is sent: it cannot finish between the look and the signal.
        kill(process.processIdentifier, SIGSTOP)
        let inTime = process.isRunning && started()
        kill(process.processIdentifier, signal)
        kill(process.processIdentifier, SIGCONT)
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, stderr, inTime)
    }

    /// Whether the backup `r` to `destination` was done before the signal reached it (it was stopped as it
    /// exited): then it exits 0 and the backup is whole, which this checks.
    func finishedFirst(_ r: (status: Int32, stderr: String, inTime: Bool), _ destination: String) throws -> Bool {
        guard r.status == 0 else { return false }
        #expect(try boardwalk(["check", "--db", destination]).status == 0, "\(r.stderr)")
        return true
    }

    /// The files of `directory` whose names start with `prefix`.
    func files(_ prefix: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix(prefix) }
    }

    @Test("export -o stopped by SIGINT or SIGTERM removes its partial file, leaves FILE as it was, exits 130 or 143")
    func exportToFile() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try makeStore()
        let out = directory.appendingPathComponent("all.ndjson").path
        try "before\n".write(toFile: out, atomically: false, encoding: .utf8)
        for (signal, status) in [(SIGINT, Int32(130)), (SIGTERM, Int32(143))] {
            var stopped = false
            for _ in 0..<5 where !stopped {
                let r = try stop(["export", "--db", db, "-o", out, "--since-seq", "10"], signal: signal) {
                    (try? files("all.ndjson.partial-").isEmpty == false) ?? false
                }
                guard r.inTime else { continue }
                stopped = true
                #expect(r.status == status, "\(r.stderr)")
                #expect(
                    r.stderr.hasSuffix(
                        "interrupted: the partial export was removed and '\(out)' left as it was; run the same command "
                            + "(--since-seq 10) to export again\n"), "\(r.stderr)")
            }
            #expect(stopped, "the export was over before the signal, five times")
            #expect(try files("all.ndjson.partial-").isEmpty)
            #expect(try String(contentsOfFile: out, encoding: .utf8) == "before\n")
        }
    }

    @Test(
        "export to standard output stopped by SIGINT names the seq to go on from, and every event before it was written"
    )
    func exportToStandardOutput() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try makeStore()
        var checked = false
        for attempt in 0..<5 where !checked {
            // Through a shell redirection, to a file the test can watch grow.
            let out = directory.appendingPathComponent("stdout-\(attempt).ndjson").path
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "exec \"$0\" export --db \"$1\" > \"$2\"", boardwalkExecutable.path, db, out]
            let errors = Pipe()
            process.standardError = errors
            try process.run()
            let deadline = Date().addingTimeInterval(30)
            while ((try? FileManager.default.attributesOfItem(atPath: out)[.size] as? Int) ?? 0) < 100_000,
                process.isRunning, Date() < deadline
            {
                usleep(200)
            }
            kill(process.processIdentifier, SIGSTOP)
            let inTime = process.isRunning
            kill(process.processIdentifier, SIGINT)
            kill(process.processIdentifier, SIGCONT)
            let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            guard inTime else { continue }
            checked = true
            #expect(process.terminationStatus == 130, "\(stderr)")
            let next = try #require(
                stderr.firstRange(of: "export the rest with --since-seq ").map {
                    Int(stderr[$0.upperBound...].prefix { $0.isNumber })
                } ?? nil, "\(stderr)")
            #expect(
                stderr
                    == "interrupted: the events before seq \(next) were written; export the rest with --since-seq "
                    + "\(next)\n")
            // Seqs are dense from 0 in a store nothing was refused from: the events before it are `next` events.
            #expect(try readNDJSON(try String(contentsOfFile: out, encoding: .utf8)).count == next)
            let rest = try boardwalk(["export", "--db", db, "--since-seq", String(next)])
            let all = try boardwalk(["export", "--db", db])
            #expect(
                try readNDJSON(try String(contentsOfFile: out, encoding: .utf8)) + readNDJSON(rest.stdout)
                    == readNDJSON(all.stdout))
        }
        #expect(checked, "the export was over before the signal, five times")
    }

    @Test("backup stopped by SIGINT or SIGTERM removes its partial copy and the directory it made")
    func backup() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try makeStore()
        for (signal, status) in [(SIGINT, Int32(130)), (SIGTERM, Int32(143))] {
            var stopped = false
            for attempt in 0..<5 where !stopped {
                let destination = directory.appendingPathComponent("backup-\(signal)-\(attempt)").path
                let r = try stop(["backup", "--db", db, destination], signal: signal) {
                    access(destination + "/data.mdb", F_OK) == 0
                }
                guard r.inTime, try !finishedFirst(r, destination) else { continue }
                stopped = true
                #expect(r.status == status, "\(r.stderr)")
                #expect(
                    r.stderr == "interrupted: the backup to '\(destination)' was stopped and its partial copy "
                        + "removed; run the same command again to back up\n", "\(r.stderr)")
                #expect(!FileManager.default.fileExists(atPath: destination))
                // The same command again makes the backup.
                let again = try boardwalk(["backup", "--db", db, destination])
                #expect(again.status == 0, "\(again.stderr)")
                #expect(try boardwalk(["check", "--db", destination]).status == 0)
            }
            #expect(stopped, "the backup was over before the signal, five times")
        }
        // Into an empty directory that was there: the directory stays, empty.
        let existing = directory.appendingPathComponent("existing")
        try FileManager.default.createDirectory(at: existing, withIntermediateDirectories: false)
        for _ in 0..<5 {
            let r = try stop(["backup", "--db", db, existing.path], signal: SIGINT) {
                access(existing.path + "/data.mdb", F_OK) == 0
            }
            if r.inTime {
                #expect(r.status == 130)
                #expect(try FileManager.default.contentsOfDirectory(atPath: existing.path).isEmpty)
                break
            }
            try? FileManager.default.removeItem(atPath: existing.path + "/data.mdb")
        }
    }

    @Test("A SIGINT inherited as ignored stays ignored (a background job); SIGTERM still stops it")
    func ignoredInterrupt() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try makeStore()
        let events = try boardwalk(["query", "--db", db, "--format", "csv", "events | count"]).stdout
        var ignored = false
        for attempt in 0..<5 where !ignored {
            let name = "kept-\(attempt).ndjson"
            let out = directory.appendingPathComponent(name).path
            let r = try stop(["export", "--db", db, "-o", out], signal: SIGINT, ignoringInterrupt: true) {
                (try? files(name + ".partial-").isEmpty == false) ?? false
            }
            guard r.inTime else { continue }
            ignored = true
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stderr.hasPrefix("exported "), "\(r.stderr)")
            let lines = try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n").count
            #expect(events == "count\n\(lines)\n")
        }
        #expect(ignored)
        var stopped = false
        for attempt in 0..<5 where !stopped {
            let destination = directory.appendingPathComponent("b\(attempt)").path
            let t = try stop(["backup", "--db", db, destination], signal: SIGTERM, ignoringInterrupt: true) {
                access(destination + "/data.mdb", F_OK) == 0
            }
            guard t.inTime, try !finishedFirst(t, destination) else { continue }
            stopped = true
            #expect(t.status == 143, "\(t.stderr)")
            #expect(!FileManager.default.fileExists(atPath: destination))
        }
        #expect(stopped)
    }
}
