import BoardwalkGenerator
import BoardwalkModel
import BoardwalkStore
import Foundation
import Synchronization
import Testing

@testable import BoardwalkCLI

/// The two-stage ingest (parse here, commit on the commit stage's thread) against the sequential path, on a
/// real store, and its failure paths.
@Suite("Ingest pipeline")
struct IngestPipelineTests {
    let directory: URL
    init() throws { directory = try temporaryDirectory() }

    /// A generated corpus in every shape the generator writes, with a few bad lines among the good ones.
    func corpus(events count: Int, badEvery: Int? = nil) throws -> String {
        let data = SyntheticData(sessions: count / 10 + 5, seed: 21, onboardings: 4)
        var rng = SplitMix64(seed: 5)
        let writer = EventLineWriter()
        var text = ""
        var written = 0
        for event in data.events() {
            if written == count { break }
            writer.write(event, style: .random(using: &rng), into: &text)
            written += 1
            if let badEvery, written % badEvery == 0 { text += "{\"type\": \"screen_presented\", oops}\n" }
        }
        let path = directory.appendingPathComponent("corpus-\(count).ndjson").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Ingests `path` into the store at `store` with the real store sink and JSON parser.
    @discardableResult
    func ingest(
        _ path: String, into store: String, pipelined: Bool, batch: Int, strict: Bool = false,
        stopAfterChecks: Int? = nil
    ) throws -> (summary: IngestSummary, rejects: String) {
        let opened = try Store.open(at: store)
        defer { opened.close() }
        let rejectsPath = directory.appendingPathComponent("rejects-\(UUID().uuidString).txt").path
        let ingester = Ingester(
            sink: StoreSink(store: opened), parser: try JSONLineParser(), workerParser: try JSONLineParser(),
            options: .init(strict: strict, batchSize: batch, pipelined: pipelined),
            rejects: RejectsWriter(path: rejectsPath), progress: nil)
        if let stopAfterChecks {
            var checks = 0
            ingester.shouldStop = {
                checks += 1
                return checks > stopAfterChecks
            }
        }
        defer { ingester.rejects.flush() }
        try ingester.ingest(try InputFile(path: path))
        ingester.rejects.flush()
        let rejects = (try? String(contentsOfFile: rejectsPath, encoding: .utf8)) ?? ""
        return (ingester.summary, rejects)
    }

    /// Every stored event as canonical NDJSON, in seq order, through the CLI's `export`.
    func export(_ store: String) -> String {
        let out = BufferSink(), err = BufferSink()
        let status = BoardwalkCLI.run(
            ["--db", store, "export"], Invocation(environment: [:], stdout: out, stderr: err))
        #expect(status == 0, "\(err.text)")
        return out.text
    }

    @Test(
        "The pipeline stores exactly what the sequential path stores, rejects included",
        arguments: [(batch: 1, events: 300), (batch: 7, events: 3_000), (batch: 500, events: 3_000)])
    func sameAsSequential(batch: Int, events: Int) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try corpus(events: events, badEvery: 250)
        let sequentialStore = directory.appendingPathComponent("sequential").path
        let pipelinedStore = directory.appendingPathComponent("pipelined").path
        let sequential = try ingest(path, into: sequentialStore, pipelined: false, batch: batch)
        let pipelined = try ingest(path, into: pipelinedStore, pipelined: true, batch: batch)
        #expect(sequential.summary.rejected == events / 250)
        #expect(sequential.summary.ingested + sequential.summary.duplicates == events)
        #expect(pipelined.summary == sequential.summary)
        #expect(pipelined.rejects == sequential.rejects)
        let exported = export(pipelinedStore)
        #expect(exported.split(separator: "\n").count == sequential.summary.ingested)
        #expect(exported == export(sequentialStore))
    }

    @Test("An interrupted pipelined run resumes at its last committed batch; the result equals one whole run")
    func resumeAfterInterrupt() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try corpus(events: 2_000)
        let whole = directory.appendingPathComponent("whole").path
        let resumed = directory.appendingPathComponent("resumed").path
        try ingest(path, into: whole, pipelined: false, batch: 100)
        // `shouldStop` is asked after each handed-over batch (and when a read ends): stop after a few.
        let first = try ingest(path, into: resumed, pipelined: true, batch: 100, stopAfterChecks: 5)
        #expect(first.summary.ingested + first.summary.duplicates > 0)
        #expect(first.summary.ingested + first.summary.duplicates < 2_000)
        let second = try ingest(path, into: resumed, pipelined: true, batch: 100)
        #expect(second.summary.resumedLines == first.summary.lines)
        #expect(first.summary.lines + second.summary.lines == 2_000)  // the second run reads only what follows
        #expect(export(resumed) == export(whole))
    }

    /// The first bad line follows event `badEvery`: in the first or the second half of the read (with two threads
    /// parsing it, either may have parsed the bad line).
    @Test(
        "--strict with the pipeline: earlier batches committed, nothing of the bad line's batch", arguments: [450, 700])
    func strictPipelined(badEvery: Int) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try corpus(events: 1_000, badEvery: badEvery)
        let store = directory.appendingPathComponent("strict").path
        #expect(throws: Ingester.StrictStop.self) {
            try ingest(path, into: store, pipelined: true, batch: 100, strict: true)
        }
        // What must be stored: the whole batches before the bad line's batch, no more.
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(
            separator: "\n", omittingEmptySubsequences: false)
        let prefix = directory.appendingPathComponent("prefix.ndjson").path
        try (lines[0..<(badEvery / 100 * 100)].joined(separator: "\n") + "\n").write(
            toFile: prefix, atomically: true, encoding: .utf8)
        let expected = directory.appendingPathComponent("expected").path
        try ingest(prefix, into: expected, pipelined: false, batch: 100)
        #expect(export(store) == export(expected))
    }

    @Test("A failing commit stops the parser and surfaces as the store's error and the CLI's message")
    func commitFailureStopsParser() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let lines = (1...50_000).map { "E - \($0)" }
        let path = directory.appendingPathComponent("many.txt").path
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        let sink = FailingSink(failAtAppend: 3)
        let ingester = Ingester(
            sink: sink, parser: TinyParser(), workerParser: TinyParser(),
            options: .init(batchSize: 100, pipelined: true, batchesInFlight: 2),
            rejects: RejectsWriter(path: directory.appendingPathComponent("rejects.txt").path), progress: nil)
        var caught: (any Error)? = nil
        do {
            try ingester.ingest(try InputFile(path: path))
        } catch {
            caught = error
        }
        let failure = try #require(caught as? StoreError)
        #expect(failure.kind == .invalidArgument)
        // The parser stops at its next hand-over: at most the failed batch, the ones queued behind it, and the
        // one being filled were read.
        #expect(ingester.summary.lines <= 100 * (3 + 2 + 2))
        #expect(ingester.summary.ingested == 200)
        #expect(sink.committed == 200)
        let message = IngestCommand.failureError(failure).description
        #expect(message.hasPrefix("\(failure) ("))
        #expect(message.contains("once the cause is fixed, the same command continues after it"))
    }
    /// Two ingests of one file into one store at once: the second one starts (reads the file's checkpoint) before the
    /// first commits anything, and commits after it. Events without ids must not be stored twice.
    @Test(
        "The same file ingested twice at once: the run that finds its checkpoint moved stops, nothing is stored twice",
        arguments: [true, false])
    func sameFileConcurrently(pipelined: Bool) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("ids-less.txt").path
        try ((1...1_000).map { "E - \($0)" }.joined(separator: "\n") + "\n").write(
            toFile: path, atomically: true, encoding: .utf8)
        let store = try Store.open(at: directory.appendingPathComponent("same").path)
        defer { store.close() }
        func ingester(_ sink: any IngestSink, pipelined: Bool) -> Ingester {
            Ingester(
                sink: sink, parser: TinyParser(), workerParser: TinyParser(),
                options: .init(batchSize: 100, pipelined: pipelined),
                rejects: RejectsWriter(path: directory.appendingPathComponent("rejects-\(UUID().uuidString).txt").path),
                progress: nil)
        }
        let other = ingester(StoreSink(store: store), pipelined: false)
        let late = ingester(
            InterleavedSink(inner: StoreSink(store: store)) {
                try other.ingest(try InputFile(path: path))
            }, pipelined: pipelined)
        var caught: (any Error)? = nil
        do {
            try late.ingest(try InputFile(path: path))
        } catch {
            caught = error
        }
        #expect(other.summary.ingested == 1_000)
        #expect(late.summary.ingested == 0)
        #expect(try store.read { try $0.stats() }.events == 1_000)
        let failure = try #require(caught)
        let message = IngestCommand.failureError(failure).description
        #expect(
            message.hasPrefix("another ingest of \(path) moved its checkpoint from the start of the file to line 1000"),
            "\(message)")
        #expect(message.contains("nothing of this batch was stored"), "\(message)")
    }
}

/// Runs `before` once, just ahead of the first append it passes on: another writer getting in between.
final class InterleavedSink: IngestSink, @unchecked Sendable {
    let inner: StoreSink
    private var before: (() throws -> Void)?
    init(inner: StoreSink, before: @escaping () throws -> Void) {
        self.inner = inner
        self.before = before
    }

    func append(_ batch: [Event], checkpoint: BatchCheckpoint?) throws -> (inserted: Int, duplicates: Int) {
        if let run = before {
            before = nil
            try run()
        }
        return try inner.append(batch, checkpoint: checkpoint)
    }

    func checkpoint(for key: String) throws -> [UInt8]? { try inner.checkpoint(for: key) }
}

/// Keeps nothing but counts, and fails its `failAtAppend`-th append with a store error.
final class FailingSink: IngestSink, Sendable {
    private let state = Mutex((appends: 0, committed: 0))
    let failAtAppend: Int
    init(failAtAppend: Int) { self.failAtAppend = failAtAppend }

    var committed: Int { state.withLock { $0.committed } }

    func append(_ batch: [Event], checkpoint: BatchCheckpoint?) throws -> (inserted: Int, duplicates: Int) {
        try state.withLock { s in
            s.appends += 1
            if s.appends == failAtAppend { throw StoreError(.invalidArgument, "refused by the test sink") }
            s.committed += batch.count
        }
        return (batch.count, 0)
    }

    func checkpoint(for key: String) throws -> [UInt8]? { nil }
}
