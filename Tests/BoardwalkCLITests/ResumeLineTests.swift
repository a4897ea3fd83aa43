@testable import BoardwalkCLI
import BoardwalkModel
import Foundation
import Testing

/// Resuming a file right after a last line that had no newline (stored as a line): the next run must not count the
/// rest of that line as a new one (review, session 6: every later line number, the rejects file and the line count
/// were one too high).
@Suite("Ingest: resuming after an unterminated last line")
struct ResumeLineTests {
    let directory: URL
    init() throws { directory = try temporaryDirectory() }

    func run(_ path: String, sink: MemorySink, strict: Bool = false, batch: Int = 3) throws -> (IngestSummary, String) {
        let rejectsPath = directory.appendingPathComponent("rejects-\(UUID().uuidString).txt").path
        let ingester = Ingester(
            sink: sink, parser: TinyParser(), helperParser: TinyParser(),
            options: .init(strict: strict, batchSize: batch, pipelined: true),
            rejects: RejectsWriter(path: rejectsPath), progress: nil)
        defer { ingester.rejects.flush() }
        try ingester.ingest(try InputFile(path: path))
        ingester.rejects.flush()
        let rejects = (try? String(contentsOfFile: rejectsPath, encoding: .utf8)) ?? ""
        return (ingester.summary, rejects)
    }

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
}
