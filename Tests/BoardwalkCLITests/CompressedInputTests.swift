import Foundation
import Testing

/// `ingest` of gzip and zstd input, told by its magic bytes, through the real binary and the system's compressors.
@Suite("ingest: gzip and zstd input")
struct CompressedInputTests {
    let directory: URL
    var db: String { directory.appendingPathComponent("db").path }
    var rejects: String { directory.appendingPathComponent("rejects.txt").path }
    init() throws { directory = try temporaryDirectory() }

    /// `text` written to `name`, then compressed by `tool` (`gzip` or `zstd`) to `name` + its suffix.
    func compressed(_ text: String, _ name: String, tool: String) throws -> String {
        let path = directory.appendingPathComponent(name).path
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        let r = try run(tool: "/bin/\(tool)", tool == "gzip" ? ["-f", path] : ["-q", "--rm", "-f", path])
        #expect(r.status == 0, "\(r.stderr)")
        return path + (tool == "gzip" ? ".gz" : ".zst")
    }

    func count(_ db: String) throws -> String {
        try boardwalk(["query", "--db", db, "--format", "csv", "events | count"]).stdout
    }

    @Test(
        "A .gz and a .zst file, and gzip on standard input, are read as the NDJSON they hold",
        arguments: ["gzip", "zstd"])
    func compressedFiles(tool: String) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let corpus = Corpus(sessions: 60, seed: 2)
        let path = try compressed(corpus.text, "events.ndjson", tool: tool)
        let r = try boardwalk(["ingest", "--db", db, "--rejects", rejects, path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("lines: \(corpus.events.count)\ningested: \(corpus.events.count)\n"), "\(r.stdout)")
        #expect(!FileManager.default.fileExists(atPath: rejects))
        #expect(try count(db) == "count\n\(corpus.events.count)\n")
        // The same bytes through standard input: told by the magic bytes there too; all duplicates now.
        let piped = try boardwalk(
            ["ingest", "--db", db, "-"], stdinData: try Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(piped.stdout.contains("ingested: 0\nduplicates: \(corpus.events.count)\n"), "\(piped.stdout)")
        // A compressed file has no checkpoint: a second run reads it again (and stores nothing twice).
        let again = try boardwalk(["ingest", "--db", db, path])
        #expect(!again.stdout.contains("resumed"), "\(again.stdout)")
        #expect(again.stdout.contains("duplicates: \(corpus.events.count)\n"))
    }

    @Test("Two gzip members one after the other are read in turn, as gunzip reads them")
    func concatenatedMembers() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let a = Corpus(sessions: 5, seed: 1), b = Corpus(sessions: 5, seed: 2)
        var both = try Data(contentsOf: URL(fileURLWithPath: try compressed(a.text, "a.ndjson", tool: "gzip")))
        both.append(try Data(contentsOf: URL(fileURLWithPath: try compressed(b.text, "b.ndjson", tool: "gzip"))))
        let r = try boardwalk(["ingest", "--db", db, "-"], stdinData: both)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("lines: \(a.events.count + b.events.count)\n"), "\(r.stdout)")
    }

    @Test(
        "A compressed file cut short fails naming the file; what came before it is kept", arguments: ["gzip", "zstd"])
    func cutShort(tool: String) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try compressed(Corpus(sessions: 400, seed: 3).text, "events.ndjson", tool: tool)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let cut = directory.appendingPathComponent("cut").path
        try bytes.prefix(bytes.count - 100).write(to: URL(fileURLWithPath: cut))
        let r = try boardwalk(["ingest", "--db", db, "--rejects", rejects, cut])
        #expect(r.status == 1)
        let what =
            tool == "gzip" ? "gzip data ends in the middle of a stream" : "zstd data ends in the middle of a frame"
        #expect(r.stderr.hasPrefix("Error: cannot read '\(cut)': its \(what) (a file cut short?)"), "\(r.stderr)")
        // Damaged bytes in the middle: not valid data.
        var damaged = bytes
        for i in stride(from: 200, to: min(2_000, damaged.count - 200), by: 7) { damaged[i] ^= 0x5A }
        try damaged.write(to: URL(fileURLWithPath: cut))
        let bad = try boardwalk(["ingest", "--db", db, "--rejects", rejects, cut])
        #expect(bad.status == 1)
        #expect(bad.stderr.hasPrefix("Error: cannot read '\(cut)': it is not valid \(tool) data ("), "\(bad.stderr)")
    }

    @Test("A gzipped batch file on standard input is a batch file")
    func gzippedBatchFile() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let corpus = Corpus(sessions: 20, seed: 6)
        #expect(try boardwalk(["ingest", "--db", db, "-q", "-"], stdin: corpus.text).status == 0)
        let batch = directory.appendingPathComponent("all.bwk").path
        #expect(try boardwalk(["export", "--db", db, "--format", "batch", "-o", batch]).status == 0)
        let gz = try Data(contentsOf: URL(fileURLWithPath: batch)).gzipped(in: directory)
        let copy = directory.appendingPathComponent("copy.db").path
        let r = try boardwalk(["ingest", "--db", copy, "-"], stdinData: gz)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try count(copy) == (try count(db)))
    }
}

extension Data {
    /// These bytes compressed with the system's `gzip` (a file in `directory` is written and removed).
    func gzipped(in directory: URL) throws -> Data {
        let path = directory.appendingPathComponent("gzip-\(UUID().uuidString)")
        try write(to: URL(fileURLWithPath: path.path))
        defer { try? FileManager.default.removeItem(atPath: path.path + ".gz") }
        let r = try run(tool: "/bin/gzip", ["-f", path.path])
        #expect(r.status == 0, "\(r.stderr)")
        return try Data(contentsOf: URL(fileURLWithPath: path.path + ".gz"))
    }
}
