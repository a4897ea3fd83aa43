import Foundation
import Testing

@testable import BoardwalkCLI

// The first failed write to a command's output is said on stderr, the command stops, and it exits 1; `export` says to
// run it again with the same `--since-seq`. An export to a full disk that printed `exported N events; next: …` would
// let an incremental export go on after events it never wrote; with SIGPIPE ignored (`| head`), `generate` would go
// on generating into a closed pipe.

@Suite("Output that cannot be written fails the command")
struct OutputWriteErrorsTests {
    /// Runs `boardwalk` with its standard output on `/dev/full` (every write fails with ENOSPC).
    func runOnFullDisk(_ arguments: [String], environment: [String: String] = [:]) throws -> (
        stderr: String, status: Int32
    ) {
        let process = Process()
        process.executableURL = boardwalkExecutable
        process.arguments = arguments
        process.environment = ["PATH": "/usr/bin:/bin"].merging(environment) { $1 }
        process.standardInput = FileHandle(forReadingAtPath: "/dev/null")
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: "/dev/full"))
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (text, process.terminationStatus)
    }

    @Test("a file sink keeps the first error, calls back once, and writes nothing after it")
    func sink() throws {
        let descriptor = open("/dev/full", O_WRONLY)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        var calls: [Int32] = []
        let sink = FileSink(descriptor: descriptor, buffered: true, onFailure: { calls.append($0) })
        sink.write("some text\n")
        #expect(sink.writeError == nil, "buffered: nothing written yet")
        sink.flush()
        sink.write(String(repeating: "x", count: 100_000))
        sink.flush()
        #expect(sink.writeError == ENOSPC)
        #expect(calls == [ENOSPC])
        // A write too big for the buffer flushes it first: one failure, one call.
        var again: [Int32] = []
        let second = FileSink(descriptor: descriptor, buffered: true, onFailure: { again.append($0) })
        second.write("buffered\n")
        second.write(String(repeating: "y", count: 100_000))
        #expect(again == [ENOSPC])
        #expect(BufferSink().writeError == nil)
    }

    @Test("export to a full disk is an error, never 'exported … next'")
    func export() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let db = dir.appendingPathComponent("db").path
        let fill = try boardwalk(
            ["ingest", "--db", db, "-q", "-"], stdin: try boardwalk(["generate", "-n", "30"]).stdout)
        #expect(fill.status == 0)
        let toStdout = try runOnFullDisk(["export", "--db", db, "--since-seq", "5"])
        #expect(toStdout.status == 1)
        #expect(
            toStdout.stderr == "Error: cannot write to standard output: \(String(cString: strerror(ENOSPC)))\n"
                + "the export is incomplete: run it again with the same --since-seq 5\n")
        let toFile = try runOnFullDisk(["export", "--db", db, "--format", "csv", "-o", "/dev/full"])
        #expect(toFile.status == 1)
        #expect(
            toFile.stderr == "Error: cannot write to '/dev/full': \(String(cString: strerror(ENOSPC))); "
                + "the export is incomplete: run it again with the same --since-seq 0\n")
        // The same export to a file that can be written still works and says what it did.
        let fine = try boardwalk(["export", "--db", db, "-o", dir.appendingPathComponent("all.ndjson").path])
        #expect(fine.status == 0 && fine.stderr.hasPrefix("exported "))
    }

    @Test(
        "query, stats, generate and a piped query exit 1 when their output is lost",
        arguments: [
            ["query", "--generated", "20", "sessions | count by exit"], ["generate", "-n", "200"],
            ["query", "--generated", "20", "events"],
        ])
    func others(arguments: [String]) throws {
        let run = try runOnFullDisk(arguments)
        #expect(run.status == 1)
        #expect(run.stderr == "Error: cannot write to standard output: \(String(cString: strerror(ENOSPC)))\n")
    }

    @Test("stats of a store on a full disk")
    func stats() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let db = dir.appendingPathComponent("db").path
        #expect(try boardwalk(["ingest", "--db", db, "-q", "-"], stdin: Corpus(sessions: 1, seed: 1).text).status == 0)
        let run = try runOnFullDisk(["stats", "--db", db])
        #expect(run.status == 1)
        #expect(run.stderr.hasSuffix("Error: cannot write to standard output: \(String(cString: strerror(ENOSPC)))\n"))
    }

    @Test("a rejects file on a full disk stops the run, and the summary does not claim the lines are listed")
    func rejectsOnFullDisk() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("in.ndjson")
        try Data("not json\n{\"type\":\"nope\"}\n".utf8).write(to: input)
        let run = try boardwalk([
            "ingest", "--db", dir.appendingPathComponent("db").path, "--rejects", "/dev/full", input.path,
        ])
        #expect(run.status == 1)
        #expect(run.stdout.contains("rejected: 2 (not all listed: the rejects file could not be written)\n"))
        #expect(run.stderr.hasPrefix("Error: cannot write the rejects file '/dev/full'"))
        #expect(run.stderr.contains(String(cString: strerror(ENOSPC))))
    }
}
