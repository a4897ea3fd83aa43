import BoardwalkModel
import Foundation
import Testing

@testable import BoardwalkCLI

/// A checkpoint fingerprints the bytes whose lines its batch stored, as they were read, never the file as it is
/// when the batch commits (a file rewritten in place between the read and the commit would get a checkpoint of its
/// new bytes, and the next run would resume past lines it never stored).
@Suite("Ingest checkpoints: fingerprints of the bytes read")
struct CheckpointConsumedBytesTests {
    let directory: URL
    init() throws { directory = try temporaryDirectory() }

    /// `E <prefix><id> <id>` lines.
    func text(_ ids: ClosedRange<Int>, prefix: String) -> String { ids.map { "E \(prefix)\($0) \($0)\n" }.joined() }

    /// Parses like ``TinyParser``; at line `atLine`, another writer rewrites the file in place (same inode, same
    /// size), after the read that brought the line and before its batch commits.
    struct RewritingParser: LineParser {
        let path: String
        let replacement: String
        let atLine: Int
        var inner = TinyParser()
        mutating func parse(_ line: UnsafeRawBufferPointer, readableAfter: Int, lineNumber: Int, arrival: Timestamp)
            throws -> Event
        {
            if lineNumber == atLine {
                let handle = FileHandle(forWritingAtPath: path)!
                try handle.truncate(atOffset: 0)
                try handle.write(contentsOf: Data(replacement.utf8))
                try handle.close()
            }
            return try inner.parse(line, readableAfter: readableAfter, lineNumber: lineNumber, arrival: arrival)
        }
    }

    func ingester(_ sink: IngestSink, parser: LineParser, worker: LineParser?, options: Ingester.Options) -> Ingester {
        Ingester(
            sink: sink, parser: parser, workerParser: worker, options: options,
            rejects: RejectsWriter(path: directory.appendingPathComponent("rejects.txt").path), progress: nil)
    }

    @Test(
        "A file rewritten in place while its batch is parsed is read again from its start by the next run",
        arguments: [false, true])
    func rewrittenWhileParsed(pipelined: Bool) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("ev.txt").path
        let original = text(1...1_000, prefix: "a")
        // Same length, same first 500 lines (about 5.4 KiB: the first 4 KiB are unchanged), other ids after.
        let rewritten = text(1...500, prefix: "a") + text(501...1_000, prefix: "b")
        #expect(original.utf8.count == rewritten.utf8.count)
        try original.write(toFile: path, atomically: false, encoding: .utf8)
        let sink = MemorySink()
        // One read holds the whole file; the rewrite comes while its lines are parsed, before the batch commits.
        let rewriting = RewritingParser(path: path, replacement: rewritten, atLine: 900)
        let first = ingester(
            sink, parser: rewriting, worker: pipelined ? rewriting : nil,
            options: .init(batchSize: 5_000, pipelined: pipelined))
        try first.ingest(try InputFile(path: path))
        #expect(first.summary.ingested == 1_000, "the lines as read, before the rewrite")
        #expect(sink.events.compactMap(\.eventID).allSatisfy { $0.hasPrefix("a") })

        let second = ingester(sink, parser: TinyParser(), worker: nil, options: .init(pipelined: false))
        try second.ingest(try InputFile(path: path))
        #expect(second.summary.resumedLines == 0, "resumed from a checkpoint of bytes no run stored")
        #expect(second.summary.restarted == [IngestSummary.Restart(input: path, line: 1_000, isBatchFile: false)])
        #expect(second.summary.ingested == 500 && second.summary.duplicates == 500)
        let missing = Set((501...1_000).map { "b\($0)" }).subtracting(sink.events.compactMap(\.eventID))
        #expect(missing.count == 0, "lines of the file as it now is were never stored")
    }

    /// Lines of several lengths (some longer than a 64-byte read buffer), blank lines, rejected lines, and a last
    /// line without a newline: every kind of straddle between reads.
    func mixedText(_ count: Int, seed: Int) -> String {
        var rng = seed
        func next() -> Int {
            rng = rng &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(truncatingIfNeeded: UInt64(bitPattern: Int64(rng)) >> 33)
        }
        var out = ""
        for i in 1...count {
            switch next() % 10 {
            case 0: out += "\n"
            case 1: out += "not an event \(i)\n"
            case 2, 3: out += "E long\(String(repeating: "x", count: 40 + next() % 200))\(i) \(i)\n"
            default: out += "E m\(seed)-\(i) \(i)\n"
            }
        }
        return out + "E last\(seed) 1"
    }

    @Test(
        "Fingerprints kept from small reads, across buffer moves and a resume, equal those of the file's bytes",
        arguments: [64, 200, 5_000])
    func fingerprintsAcrossReads(readBuffer: Int) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("mixed.txt").path
        let firstPart = mixedText(400, seed: 1)
        try firstPart.write(toFile: path, atomically: false, encoding: .utf8)
        let sink = CheckpointRecordingSink()
        let options = Ingester.Options(batchSize: 7, pipelined: false, readBufferBytes: readBuffer)
        try ingester(sink, parser: TinyParser(), worker: nil, options: options).ingest(try InputFile(path: path))
        let afterFirst = sink.committed.count
        #expect(afterFirst > 20)
        // The file grows (its unterminated last line finished first): the second run resumes at the checkpoint,
        // inside the first run's last line, with the bytes before it read once at the start.
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(("\n" + mixedText(400, seed: 2)).utf8))
        try handle.close()
        let second = ingester(sink, parser: TinyParser(), worker: TinyParser(), options: options)
        try second.ingest(try InputFile(path: path))
        #expect(second.summary.resumedLines > 0 && second.summary.restarted.isEmpty)
        #expect(sink.committed.count > afterFirst + 20)

        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let wrong = sink.committed.filter { $0 != fileCheckpoint(of: bytes, endingAt: $0.offset) }
        #expect(
            wrong.isEmpty,
            "\(wrong.count) of \(sink.committed.count) checkpoints differ, first at byte \(wrong.first?.offset ?? -1)")
        #expect(sink.committed.last?.offset == bytes.count)
        #expect(
            sink.committed.contains { $0.offset > 2 * FileCheckpoint.fingerprintBytes }, "windows away from the head")
    }

    @Test("ConsumedBytes keeps the right 4 KiB for any chunking of reads and drops", arguments: 1...6)
    func consumedBytesModel(seed: Int) {
        var rng = UInt64(seed)
        func next(_ bound: Int) -> Int {
            rng = rng &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((rng >> 33) % UInt64(bound))
        }
        let file = (0..<20_000).map { _ in UInt8(next(256)) }
        var consumed = ConsumedBytes()
        var buffer: [UInt8] = []  // the file from consumed.bufferStart on, as read
        var read = 0
        var checked = 0
        while read < file.count {
            // A read of any size up to 6 KiB; then the buffer's front is dropped, by any amount.
            let n = min(file.count - read, 1 + next(6_000))
            buffer += file[read..<(read + n)]
            read += n
            buffer.withUnsafeBytes {
                consumed.didRead(UnsafeRawBufferPointer(rebasing: $0[($0.count - n)...]), endingAt: read)
            }
            for _ in 0..<3 {
                let offset = consumed.bufferStart + next(buffer.count + 1)
                let got = buffer.withUnsafeBytes { consumed.checkpoint(offset: offset, line: 0, buffer: $0) }
                #expect(got == fileCheckpoint(of: file, endingAt: offset).with(line: 0), "offset \(offset)")
                checked += 1
            }
            let drop = next(buffer.count + 1)
            buffer.withUnsafeBytes { consumed.drop(UnsafeRawBufferPointer(rebasing: $0[..<drop])) }
            buffer.removeFirst(drop)
        }
        #expect(checked > 10)
    }

    @Test("`ingest --help` says which bytes a checkpoint checks: the first 4 KiB and the 4 KiB before it")
    func helpSaysWhatIsChecked() {
        let out = BufferSink(), err = BufferSink()
        #expect(BoardwalkCLI.run(["ingest", "--help"], Invocation(environment: [:], stdout: out, stderr: err)) == 0)
        let help = out.text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.joined(
            separator: " ")
        #expect(
            help.contains(
                "A file rewritten in place so that its first 4 KiB or the 4 KiB before its checkpoint changed is read from its start"
            ), "\(help)")
        #expect(help.contains("a change elsewhere before the checkpoint is not seen"))
        #expect(!help.contains("whose bytes before its checkpoint changed"), "the old claim: every byte before it")
    }
}

extension FileCheckpoint {
    func with(line: Int) -> FileCheckpoint {
        var copy = self
        copy.line = line
        return copy
    }
}
