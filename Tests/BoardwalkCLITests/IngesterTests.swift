import BoardwalkJSON
import BoardwalkModel
import Foundation
import Testing

@testable import BoardwalkCLI

/// A store stand-in: de-duplicates by event id, keeps checkpoints, and can fail ("crash") at a given append.
// `@unchecked Sendable`: the commit stage appends on its thread, one call at a time, and the tests read the
// fields only after `ingest` returned (the stage is drained by then).
final class MemorySink: IngestSink, @unchecked Sendable {
    var events: [Event] = []
    var ids = Set<String>()
    var checkpoints: [String: [UInt8]] = [:]
    var appends = 0
    var failAtAppend: Int? = nil

    struct Crash: Error {}

    func append(_ batch: [Event], checkpoint: BatchCheckpoint?) throws -> (inserted: Int, duplicates: Int) {
        appends += 1
        if appends == failAtAppend { throw Crash() }  // nothing of this batch is kept, as in an aborted transaction
        if let checkpoint, checkpoints[checkpoint.key] != checkpoint.expected {
            throw CheckpointMoved(expected: checkpoint.expected, found: checkpoints[checkpoint.key])
        }
        var inserted = 0, duplicates = 0
        for e in batch {
            if let id = e.eventID, !ids.insert(id).inserted { duplicates += 1; continue }
            events.append(e)
            inserted += 1
        }
        if let checkpoint { checkpoints[checkpoint.key] = checkpoint.value }
        return (inserted, duplicates)
    }

    func checkpoint(for key: String) throws -> [UInt8]? { checkpoints[key] }
}

/// A ``MemorySink`` that records every checkpoint committed, in order.
final class CheckpointRecordingSink: IngestSink, @unchecked Sendable {
    let inner = MemorySink()
    var committed: [FileCheckpoint] = []
    func append(_ events: [Event], checkpoint: BatchCheckpoint?) throws -> (inserted: Int, duplicates: Int) {
        let result = try inner.append(events, checkpoint: checkpoint)
        if let value = checkpoint?.value, let cp = FileCheckpoint(value) { committed.append(cp) }
        return result
    }
    func checkpoint(for key: String) throws -> [UInt8]? { try inner.checkpoint(for: key) }
}

/// The checkpoint a batch ending at `offset` must carry, computed from the whole file's bytes.
func fileCheckpoint(of bytes: [UInt8], endingAt offset: Int) -> FileCheckpoint {
    let window = FileCheckpoint.fingerprintBytes
    let newlines = bytes[..<offset].count(where: { $0 == 0x0A })
    // A checkpoint sits after a newline, or after a last line that had none when it was read.
    let line = newlines + (offset > 0 && bytes[offset - 1] != 0x0A ? 1 : 0)
    return FileCheckpoint(
        offset: offset, line: line, fingerprint: FileCheckpoint.fingerprint(bytes[..<min(offset, window)]),
        tail: FileCheckpoint.fingerprint(bytes[max(0, offset - window)..<offset]))
}

/// Lines `E <id|-> <milliseconds>`; anything else is rejected.
struct TinyParser: LineParser {
    struct Bad: Error, CustomStringConvertible {
        var line: Int; var description: String { "line \(line): not an E line" }
    }
    mutating func parse(_ line: UnsafeRawBufferPointer, readableAfter: Int, lineNumber: Int, arrival: Timestamp) throws
        -> Event
    {
        let parts = String(decoding: line, as: UTF8.self).split(separator: " ")
        guard parts.count == 3, parts[0] == "E", let ms = Int64(parts[2]) else { throw Bad(line: lineNumber) }
        return Event(
            time: Timestamp(milliseconds: ms), eventID: parts[1] == "-" ? nil : String(parts[1]), meta: nil,
            payload: .onboardingLoaded)
    }
}

@Suite("Ingest loop")
struct IngesterTests {
    let directory: URL
    init() throws { directory = try temporaryDirectory() }

    func write(_ lines: [String], name: String = "in.txt", trailingNewline: Bool = true) throws -> String {
        let path = directory.appendingPathComponent(name).path
        try (lines.joined(separator: "\n") + (trailingNewline ? "\n" : "")).write(
            toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func run(
        _ path: String, sink: MemorySink, strict: Bool = false, batch: Int = 3, pipelined: Bool = true,
        maxLineBytes: Int = JSONReaderLimits().maxLineBytes
    ) throws -> (IngestSummary, String) {
        let rejectsPath = directory.appendingPathComponent("rejects.txt").path
        let ingester = Ingester(
            sink: sink, parser: TinyParser(), workerParser: TinyParser(),
            options: .init(strict: strict, batchSize: batch, pipelined: pipelined, maxLineBytes: maxLineBytes),
            rejects: RejectsWriter(path: rejectsPath), progress: nil)
        defer { ingester.rejects.flush() }
        try ingester.ingest(try InputFile(path: path))
        ingester.rejects.flush()
        let rejects = (try? String(contentsOfFile: rejectsPath, encoding: .utf8)) ?? ""
        return (ingester.summary, rejects)
    }

    /// Resuming a file right after a last line that had no newline (stored as a line): the next run must not count
    /// the rest of that line as a new one (every later line number, the rejects file and the line count would be one
    /// too high).
    /// A valid last line without a newline is stored and the checkpoint put after it, before the newline the writer
    /// adds later.
    @Test func lineNumbersAfterResumingAtAParsedUnterminatedLine() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("grow.txt").path
        try "E - 1\nE - 2".write(toFile: path, atomically: false, encoding: .utf8)
        let sink = MemorySink()
        let (first, _) = try run(path, sink: sink)
        #expect(first.ingested == 2)
        // The writer finishes line 2 and writes line 3 (bad) and line 4.
        let h = FileHandle(forWritingAtPath: path)!
        h.seekToEndOfFile()
        h.write("\nbad\nE - 4\n".data(using: .utf8)!)
        h.closeFile()
        let (second, rejects) = try run(path, sink: sink)
        #expect(second.resumedLines == 2)
        #expect(second.ingested == 1)
        #expect(second.lines == 2, "lines read in the second run")
        #expect(rejects.hasPrefix("\(path):3:"), "\(rejects)")
    }

    @Test("Bad lines are rejected with their numbers; the lines around them are ingested", arguments: [true, false])
    func rejects(pipelined: Bool) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try write(["E a 1", "oops", "E b 2", "", "E c 3", "E d", "E - 4"], trailingNewline: false)
        let sink = MemorySink()
        let (summary, rejects) = try run(path, sink: sink, pipelined: pipelined)
        #expect(summary.lines == 7)
        #expect(summary.ingested == 4)
        #expect(summary.rejected == 2)
        #expect(sink.events.map(\.time.microseconds) == [1000, 2000, 3000, 4000])
        #expect(rejects == "\(path):2: line 2: not an E line\n\toops\n\(path):6: line 6: not an E line\n\tE d\n")
    }

    @Test("--strict stops at the first bad line and commits nothing of its batch", arguments: [true, false])
    func strict(pipelined: Bool) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try write(["E a 1", "E b 2", "E c 3", "E d 4", "bad", "E e 5"])
        let sink = MemorySink()
        #expect(throws: Ingester.StrictStop.self) {
            try run(path, sink: sink, strict: true, batch: 3, pipelined: pipelined)
        }
        #expect(sink.events.map(\.eventID) == ["a", "b", "c"])  // the first batch; not `d`
    }

    @Test(
        "Exactly once: a re-run after a failed batch resumes at the checkpoint, ids or not", arguments: [true, false])
    func resume(pipelined: Bool) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let lines = (1...20).map { "E \($0 % 2 == 0 ? "id\($0)" : "-") \($0)" }
        let path = try write(lines)
        let sink = MemorySink()
        sink.failAtAppend = 4  // batches of 3: lines 1-9 committed, the 4th batch fails
        #expect(throws: MemorySink.Crash.self) { try run(path, sink: sink, pipelined: pipelined) }
        #expect(sink.events.count == 9)
        sink.failAtAppend = nil
        let (summary, _) = try run(path, sink: sink, pipelined: pipelined)
        #expect(summary.resumedLines == 9)
        #expect(summary.ingested == 11)
        #expect(summary.duplicates == 0)
        #expect(sink.events.map(\.time.microseconds) == (1...20).map { Int64($0) * 1000 })
        // A third run finds everything committed.
        let (again, _) = try run(path, sink: sink, pipelined: pipelined)
        #expect(again.ingested == 0 && again.resumedLines == 20)
        #expect(sink.events.count == 20)
    }

    @Test("A changed file at the same path starts afresh; ids still de-duplicate")
    func changedFile() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try write(["E a 1", "E - 2"])
        let sink = MemorySink()
        _ = try run(path, sink: sink)
        try "E x 9\nE a 1\n".write(toFile: path, atomically: false, encoding: .utf8)
        let (summary, _) = try run(path, sink: sink)
        #expect(summary.resumedLines == 0)
        #expect(summary.ingested == 1)
        #expect(summary.duplicates == 1)
    }

    @Test("Lines longer than the read buffer and lines split across reads")
    func longLines() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let long = "E " + String(repeating: "x", count: 3 << 20) + " 7"
        var lines = (1...100_000).map { "E - \($0)" }
        lines.insert(long, at: 50_000)
        let path = try write(lines)
        let sink = MemorySink()
        // A parser whose limit is above the read buffer's 2 MiB: the buffer grows for the line.
        let (summary, rejects) = try run(path, sink: sink, batch: 10_000, maxLineBytes: 4 << 20)
        #expect(summary.rejected == 0, "\(rejects.prefix(200))")
        #expect(summary.ingested == 100_001)
        #expect(sink.events[50_000].eventID?.count == 3 << 20)
    }

    @Test("--strict lists the line it stopped at in the rejects file, as its summary says", arguments: [true, false])
    func strictListsTheLine(pipelined: Bool) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try write(["E a 1", "E b 2", "bad", "E c 3"])
        let sink = MemorySink()
        #expect(throws: Ingester.StrictStop.self) { try run(path, sink: sink, strict: true, pipelined: pipelined) }
        let rejects = try String(contentsOfFile: directory.appendingPathComponent("rejects.txt").path, encoding: .utf8)
        #expect(rejects == "\(path):3: line 3: not an E line\n\tbad\n")
    }

    @Test(
        "A file's last line without a newline is a line: rejected when it does not parse, and read again by the next run",
        arguments: [true, false])
    func unterminatedLastLine(pipelined: Bool) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try write(["E a 1", "E - 2", "E c"], trailingNewline: false)
        let sink = MemorySink()
        let (first, rejects) = try run(path, sink: sink, pipelined: pipelined)
        #expect(first.lines == 3)
        #expect(first.ingested == 2)
        #expect(first.rejected == 1)
        #expect(rejects.hasPrefix("\(path):3: line 3: not an E line"), "\(rejects)")
        #expect(rejects.hasSuffix("\n\tE c\n"), "\(rejects)")
        // With --strict it stops the run, as the same line read from a pipe would.
        let strictSink = MemorySink()
        #expect(throws: Ingester.StrictStop.self) {
            try run(path, sink: strictSink, strict: true, pipelined: pipelined)
        }
        // The checkpoint stays before it: once the writer finishes the line, the next run stores it, once.
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(" 3\nE d 4\n".utf8))
        try handle.close()
        let (second, again) = try run(path, sink: sink, pipelined: pipelined)
        #expect(second.resumedLines == 2)
        #expect(second.ingested == 2)
        #expect(second.rejected == 0, "\(again)")
        #expect(sink.events.map(\.time.microseconds) == [1000, 2000, 3000, 4000])
    }

    @Test("FileCheckpoint bytes round-trip")
    func checkpointBytes() {
        let cp = FileCheckpoint(offset: 123_456_789, line: 42, fingerprint: 0xDEAD_BEEF_0123_4567)
        #expect(FileCheckpoint(cp.bytes) == cp)
        #expect(FileCheckpoint([1, 2, 3]) == nil)
    }
}
