import BoardwalkModel
import Foundation
import Testing

@testable import BoardwalkCLI

/// A checkpoint applies to a file only when the bytes it counted are still there (a file rewritten in place, same
/// inode and same first 4 KiB, must not resume from the old checkpoint, or its changed lines before that point are
/// never stored).
@Suite("Ingest checkpoints: which file they fit")
struct CheckpointFitTests {
    let directory: URL
    init() throws { directory = try temporaryDirectory() }

    func run(_ path: String, sink: MemorySink, batch: Int = 50) throws -> IngestSummary {
        let ingester = Ingester(
            sink: sink, parser: TinyParser(), workerParser: TinyParser(), options: .init(batchSize: batch),
            rejects: RejectsWriter(path: directory.appendingPathComponent("rejects.txt").path), progress: nil)
        try ingester.ingest(try InputFile(path: path))
        ingester.rejects.flush()
        return ingester.summary
    }

    /// `E <id> <ms>` lines; ids and times from `ids`.
    func text(_ ids: some Sequence<Int>, prefix: String = "a") -> String {
        ids.map { "E \(prefix)\($0) \($0)\n" }.joined()
    }

    func inode(_ path: String) throws -> UInt64 {
        try #require((try FileManager.default.attributesOfItem(atPath: path))[.systemFileNumber] as? UInt64)
    }

    /// Replaces the file's bytes, keeping its inode (as the shell's `>` does).
    func rewrite(_ path: String, _ text: String) throws {
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: Data(text.utf8))
        try handle.close()
    }

    @Test(
        "A file rewritten in place with the same first 4 KiB but other lines before the checkpoint starts from its beginning"
    )
    func rewrittenInPlace() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("ev.txt").path
        // 1 000 lines of about 11 bytes: the checkpoint ends far past the first 4 KiB.
        try text(1...1_000).write(toFile: path, atomically: false, encoding: .utf8)
        let before = try inode(path)
        let sink = MemorySink()
        #expect(try run(path, sink: sink).ingested == 1_000)
        // Rewritten: the first 600 lines (about 6.5 KiB) as they were, then other lines, and more of them.
        try rewrite(path, text(1...600) + text(601...1_500, prefix: "b"))
        #expect(try inode(path) == before, "the test needs the same inode")
        let second = try run(path, sink: sink)
        #expect(second.resumedLines == 0, "resumed from a checkpoint of other bytes")
        #expect(second.restarted == [IngestSummary.Restart(input: path, line: 1_000, isBatchFile: false)])
        #expect(second.ingested == 900)
        #expect(second.duplicates == 600)
        let missing = Set((601...1_500).map { "b\($0)" }).subtracting(sink.events.compactMap(\.eventID))
        #expect(missing.isEmpty, "\(missing.count) lines of the new file never stored")
        // The checkpoint written by the second run fits the file: a third run resumes at its end.
        let third = try run(path, sink: sink)
        #expect(third.resumedLines == 1_500 && third.ingested == 0 && third.restarted.isEmpty)
    }

    @Test("A growing log keeps its checkpoint: the bytes before it do not change")
    func growingLog() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("log.txt").path
        try text(1...1_000).write(toFile: path, atomically: false, encoding: .utf8)
        let sink = MemorySink()
        _ = try run(path, sink: sink)
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(text(1_001...1_200).utf8))
        try handle.close()
        let second = try run(path, sink: sink)
        #expect(second.resumedLines == 1_000)
        #expect(second.ingested == 200 && second.duplicates == 0 && second.restarted.isEmpty)
    }

    @Test(
        "A checkpoint written before the tail fingerprint (24 bytes) is trusted on its first fingerprint, then replaced"
    )
    func oldCheckpoint() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("old.txt").path
        try text(1...1_000).write(toFile: path, atomically: false, encoding: .utf8)
        let sink = MemorySink()
        _ = try run(path, sink: sink)
        let key = try #require(sink.checkpoints.keys.first)
        let stored = try #require(sink.checkpoints[key])
        let current = try #require(FileCheckpoint(stored))
        #expect(current.tail != nil)
        // What an earlier version stored: offset, line and the first bytes' fingerprint.
        let old = FileCheckpoint(offset: current.offset, line: current.line, fingerprint: current.fingerprint)
        #expect(old.bytes.count == 24)
        sink.checkpoints[key] = old.bytes
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(text(1_001...1_010).utf8))
        try handle.close()
        let second = try run(path, sink: sink)
        #expect(second.resumedLines == 1_000 && second.ingested == 10)
        #expect(sink.checkpoints[key].flatMap(FileCheckpoint.init)?.tail != nil, "replaced by a 32-byte checkpoint")
    }

    @Test("A file shorter than its checkpoint, or another file at the inode, starts afresh and says so")
    func shorterFile() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("short.txt").path
        try text(1...100).write(toFile: path, atomically: false, encoding: .utf8)
        let sink = MemorySink()
        _ = try run(path, sink: sink)
        try rewrite(path, text(1...10))
        let second = try run(path, sink: sink)
        #expect(second.resumedLines == 0 && second.duplicates == 10)
        #expect(second.restarted.map(\.line) == [100])
    }

    @Test("A batch file's checkpoint fits the same bytes: its first and last 4 KiB and its size")
    func batchFileFit() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("b.bwk").path
        let bytes = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let checkpoint = FileCheckpoint(
            offset: bytes.count, line: 5, fingerprint: FileCheckpoint.fingerprint(bytes.prefix(4096)),
            tail: FileCheckpoint.fingerprint(bytes.suffix(4096)))
        #expect(checkpoint.fits(try InputFile(path: path), batchFile: true))
        // Written before the tail fingerprint: offset 0, the first bytes only.
        let old = FileCheckpoint(offset: 0, line: 5, fingerprint: checkpoint.fingerprint)
        #expect(old.fits(try InputFile(path: path), batchFile: true))
        var changed = bytes
        changed[9_000] ^= 1
        try Data(changed).write(to: URL(fileURLWithPath: path))
        #expect(!checkpoint.fits(try InputFile(path: path), batchFile: true), "the last 4 KiB changed")
        #expect(old.fits(try InputFile(path: path), batchFile: true), "an old checkpoint sees the first bytes only")
        try Data(bytes + [0]).write(to: URL(fileURLWithPath: path))
        #expect(!checkpoint.fits(try InputFile(path: path), batchFile: true), "another size")
    }

    @Test("The progress line counts bytes across inputs, as it counts events, against the inputs' total")
    func progressAcrossInputs() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = directory.appendingPathComponent("1.txt").path,
            second = directory.appendingPathComponent("2.txt").path
        try text(1...3_000).write(toFile: first, atomically: false, encoding: .utf8)
        try text(3_001...6_000).write(toFile: second, atomically: false, encoding: .utf8)
        let sizes = try [first, second].map { try #require(try InputFile(path: $0).size) }
        let screen = BufferSink()
        let progress = Progress(sink: screen, paint: Paint(enabled: false))
        progress.minimumInterval = 0
        let ingester = Ingester(
            sink: MemorySink(), parser: TinyParser(), options: .init(batchSize: 1_000, pipelined: false),
            rejects: RejectsWriter(path: directory.appendingPathComponent("rejects.txt").path), progress: progress)
        ingester.totalBytes = sizes.reduce(0, +)
        for path in [first, second] { try ingester.ingest(try InputFile(path: path)) }
        // The last line drawn: all events, all bytes, 100 % of both files.
        let last = try #require(screen.text.components(separatedBy: "\r\u{1B}[2K").last)
        #expect(last.hasPrefix("  6.0 k events"), "\(last)")
        #expect(last.contains(Units.bytes(sizes[0] + sizes[1])), "\(last)")
        #expect(last.contains("100.0 %"), "\(last)")
    }

    @Test("Checkpoint bytes: 32 with the tail fingerprint, 24 without; other lengths are not checkpoints")
    func bytes() {
        let new = FileCheckpoint(
            offset: 123_456_789, line: 42, fingerprint: 0xDEAD_BEEF_0123_4567, tail: 0x0102_0304_0506_0708)
        #expect(new.bytes.count == 32)
        #expect(FileCheckpoint(new.bytes) == new)
        let old = FileCheckpoint(offset: 7, line: 1, fingerprint: 9)
        #expect(old.bytes.count == 24)
        #expect(FileCheckpoint(old.bytes) == old)
        #expect(FileCheckpoint(Array(new.bytes.prefix(28))) == nil)
    }
}
