import BoardwalkJSON
import BoardwalkModel
import Foundation
import Testing

@testable import BoardwalkCLI

/// A line longer than the parser's limit is rejected without being held in memory: its bytes are dropped as they
/// are read (a 300 MB line once grew the read buffer to 512 MB and took 800 MB), the lines around it are stored,
/// checkpoints still fingerprint exactly the bytes before them, and a file's unterminated over-long last line is
/// read again by the next run, as any rejected last line.
@Suite("Ingest: over-long lines")
struct OverLongLineTests {
    let directory: URL
    init() throws { directory = try temporaryDirectory() }

    /// ``TinyParser`` with the JSON reader's line limit (100 bytes here), worded as the JSON reader words it.
    struct LimitedParser: LineParser {
        var inner = TinyParser()
        mutating func parse(_ line: UnsafeRawBufferPointer, readableAfter: Int, lineNumber: Int, arrival: Timestamp)
            throws -> Event
        {
            if line.count > 100 {
                throw JSONReadError(
                    code: .limit, line: lineNumber, reason: "line is \(line.count) bytes long; the limit is 100")
            }
            return try inner.parse(line, readableAfter: readableAfter, lineNumber: lineNumber, arrival: arrival)
        }
    }

    func ingester(_ sink: IngestSink, pipelined: Bool, strict: Bool = false) -> Ingester {
        Ingester(
            sink: sink, parser: LimitedParser(), workerParser: pipelined ? LimitedParser() : nil,
            options: .init(strict: strict, batchSize: 4, pipelined: pipelined, readBufferBytes: 64, maxLineBytes: 100),
            rejects: RejectsWriter(path: directory.appendingPathComponent("rejects.txt").path), progress: nil)
    }

    /// `E <id> <ms>` with `padding` bytes of id.
    func line(_ id: String, padding: Int = 0) -> String { "E \(id)\(String(repeating: "x", count: padding)) 1" }

    @Test(
        "Over-long lines are rejected with their length, the others stored, the buffer bounded",
        arguments: [false, true])
    func rejectedAndBounded(pipelined: Bool) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("in.txt").path
        // Two long lines among short ones; a line just over the limit (rejected by the parser or by the skip,
        // depending on where reads end, with the same words); one at the limit (kept); and an unterminated long
        // last line.
        var lines: [String] = []
        for i in 0..<30 { lines.append(line("a\(i)")) }
        lines.append(line("long1-", padding: 20_000))
        for i in 0..<30 { lines.append(line("b\(i)")) }
        lines.append(line("long2-", padding: 5_000))
        lines.append(line("over-", padding: 100 - 9 + 5))
        lines.append(line("limit-", padding: 100 - 10))
        for i in 0..<10 { lines.append(line("c\(i)")) }
        let text = lines.joined(separator: "\n") + "\n" + line("tail-", padding: 3_000)
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        #expect(lines[62].utf8.count == 105 && lines[63].utf8.count == 100)

        let sink = CheckpointRecordingSink()
        let first = ingester(sink, pipelined: pipelined)
        try first.ingest(try InputFile(path: path))
        first.rejects.flush()
        #expect(first.summary.ingested == 71)
        #expect(first.summary.rejected == 4)
        #expect(first.summary.unfinishedLines == 1)
        #expect(first.summary.lines == lines.count + 1, "the unfinished last line is read (and rejected)")
        #expect(first.largestReadBuffer <= 256, "the read buffer grew to \(first.largestReadBuffer) bytes")
        let rejects = try String(contentsOfFile: directory.appendingPathComponent("rejects.txt").path, encoding: .utf8)
        #expect(rejects.contains("\(path):31: line 31: line is 20010 bytes long; the limit is 100\n\tE long1-xxx"))
        #expect(rejects.contains("\(path):62: line 62: line is 5010 bytes long; the limit is 100"))
        #expect(rejects.contains("\(path):63: line 63: line is 105 bytes long; the limit is 100"))
        #expect(
            rejects.contains(
                "\(path):75: line 75: line is 3009 bytes long; the limit is 100 (the file's last line, without a newline: the next run reads it again)"
            ))
        // A rejected line shows its first 1 000 bytes, then an ellipsis.
        let shown = try #require(rejects.split(separator: "\n").first { $0.hasPrefix("\tE long1-") })
        #expect(shown.utf8.count == 1 + 1_000 + "…".utf8.count)
        let ids = Set(sink.inner.events.compactMap(\.eventID))
        #expect(
            ids.contains("a0") && ids.contains("b29") && ids.contains("c9")
                && ids.contains("limit-" + String(repeating: "x", count: 90)))

        // Every checkpoint fingerprints the file's bytes before it, across the dropped lines.
        let bytes = Array(text.utf8)
        #expect(!sink.committed.isEmpty)
        #expect(sink.committed.allSatisfy { $0 == fileCheckpoint(of: bytes, endingAt: $0.offset) })
        #expect(
            sink.committed.last?.offset == text.utf8.count - 3_009,
            "the last checkpoint is before the unterminated last line")

        // The last line finished and one more line appended: the next run resumes before it and rejects it again.
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(("\n" + line("d0") + "\n").utf8))
        try handle.close()
        let second = ingester(sink, pipelined: pipelined)
        try second.ingest(try InputFile(path: path))
        #expect(second.summary.resumedLines == lines.count)
        #expect(second.summary.rejected == 1 && second.summary.unfinishedLines == 0)
        #expect(second.summary.ingested == 1)
        #expect(sink.inner.events.compactMap(\.eventID).last == "d0")
    }

    @Test("--strict stops at an over-long line")
    func strictStops() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("in.txt").path
        try ([line("a"), line("long", padding: 1_000), line("b")].joined(separator: "\n") + "\n").write(
            toFile: path, atomically: false, encoding: .utf8)
        let sink = CheckpointRecordingSink()
        let ingester = ingester(sink, pipelined: false, strict: true)
        let error = #expect(throws: Ingester.StrictStop.self) { try ingester.ingest(try InputFile(path: path)) }
        #expect(
            error.map { "\($0)".contains("line 2: line is 1008 bytes long") } == true, "\(String(describing: error))")
        #expect(!sink.inner.events.contains { $0.eventID == "b" })
    }
}
