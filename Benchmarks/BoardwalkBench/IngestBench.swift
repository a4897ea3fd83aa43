// NDJSON file → store, end to end: `boardwalk ingest` run in process (read the file in chunks, parse every line
// with the JSON reader, commit batches to a durable store on a second thread). Also the child-process mode that
// measures peak memory per input size.
import BoardwalkCLI
import BoardwalkGenerator
import BoardwalkJSON
import BoardwalkModel
import BoardwalkStore
import Foundation

/// Writes a realistic corpus of about `events` events as NDJSON (every shape, generator's styles) to `path`.
/// - Returns: the number of events and bytes written.
func writeCorpus(events count: Int, seed: UInt64, to path: String) throws -> (events: Int, bytes: Int) {
    // ~20 events per session; ask for more sessions than needed and stop at `count` events.
    let data = SyntheticData(sessions: count / 4 + 10, seed: seed, onboardings: 50)
    var rng = SplitMix64(seed: seed ^ 0x5EED)
    let writer = EventLineWriter()
    guard
        let out = FileHandle(forWritingAtPath: path)
            ?? {
                _ = FileManager.default.createFile(atPath: path, contents: nil)
                return FileHandle(forWritingAtPath: path)
            }()
    else { throw BenchError("cannot write \(path)") }
    defer { try? out.close() }
    var line = ""
    var chunk: [UInt8] = []
    chunk.reserveCapacity(1 << 21)
    var written = 0
    var bytes = 0
    for event in data.events() {
        if written == count { break }
        // One line at a time: the writer appends through String's unicode-scalar view, which copies the
        // whole target string, so the target must stay small.
        line.removeAll(keepingCapacity: true)
        writer.write(event, style: .random(using: &rng), into: &line)
        chunk.append(contentsOf: line.utf8)
        written += 1
        if chunk.count > 1 << 20 {
            bytes += chunk.count
            try out.write(contentsOf: chunk)
            chunk.removeAll(keepingCapacity: true)
        }
    }
    bytes += chunk.count
    try out.write(contentsOf: chunk)
    return (written, bytes)
}

/// What one ingest did.
struct IngestOutcome: Codable {
    var lines: Int
    var appended: Int
    var duplicates: Int
    var rejected: Int
    var seconds: Double
    /// The largest anonymous resident memory (`RssAnon`) sampled during the run (every 5 ms), bytes: the
    /// process's own memory, without the store's file pages that the kernel maps in and can drop at will.
    var peakAnonymousRSS: Int
    /// `VmHWM` at the end: peak resident memory including mapped file pages of the store.
    var peakRSS: Int
    var storeBytes: Int
}

/// Ingests the NDJSON file at `path` into a new store at `storePath`, `batch` events per transaction, by running
/// `boardwalk ingest` itself in this process.
///
/// The bench calls the command rather than a loop of its own so that it measures what users run: the same
/// store options, the same two-stage pipeline (parse on this thread, commit on the commit stage's), the same
/// checkpoints and rejects handling. Only argument parsing and the summary text are extra, a few microseconds
/// per run. The counts come back through the command's summary on (in-memory) stdout.
///
/// - Parameter sampleMemory: sample anonymous resident memory every 5 ms on a thread of its own (for the
///   memory child; the timed bench leaves it off, as sampling takes CPU from the two stages).
func ingest(file path: String, storePath: String, batch: Int, sampleMemory: Bool = false) throws -> IngestOutcome {
    let sampler = sampleMemory ? AnonymousRSSSampler() : nil
    let t0 = monotonicNanoseconds()
    let out = BufferSink(), err = BufferSink()
    let status = BoardwalkCLI.run(
        ["--db", storePath, "ingest", "--batch", String(batch), "--rejects", storePath + "-rejects.txt", path],
        Invocation(environment: [:], stdout: out, stderr: err))
    let seconds = Double(monotonicNanoseconds() - t0) / 1e9
    let peakAnonymous = sampler?.stop() ?? 0
    // 0: all ingested; 2: some lines rejected (reported through `rejected`, which callers check).
    guard status == 0 || status == 2 else { throw BenchError("boardwalk ingest exited with \(status): \(err.text)") }
    func count(_ name: String) throws -> Int {
        for line in out.text.split(separator: "\n") where line.hasPrefix(name + ": ") {
            if let n = Int(line.dropFirst(name.count + 2).prefix { $0.isNumber }) { return n }
        }
        throw BenchError("no '\(name):' in the ingest summary: \(out.text)")
    }
    var outcome = IngestOutcome(
        lines: try count("lines"), appended: try count("ingested"), duplicates: try count("duplicates"),
        rejected: try count("rejected"), seconds: seconds, peakAnonymousRSS: peakAnonymous, peakRSS: 0, storeBytes: 0)
    outcome.peakRSS = ProcessInfoReader.peakRSS() ?? 0
    outcome.storeBytes = allocatedDiskBytes(storePath)
    return outcome
}

/// Reads `RssAnon` every 5 ms on a thread of its own and keeps the largest value: the process's own memory at
/// its peak, whichever stage holds it.
final class AnonymousRSSSampler: @unchecked Sendable {
    // @unchecked Sendable: `peak` and `running` are touched under `lock` only.
    private let lock = NSLock()
    private var peak = 0
    private var running = true
    private let done = DispatchSemaphore(value: 0)

    init() {
        Thread.detachNewThread { [self] in
            while lock.withLock({ running }) {
                let now = ProcessInfoReader.anonymousRSS() ?? 0
                lock.withLock { peak = max(peak, now) }
                usleep(5_000)
            }
            done.signal()
        }
    }

    /// Stops sampling and returns the peak in bytes.
    func stop() -> Int {
        lock.withLock { running = false }
        done.wait()
        return lock.withLock { max(peak, ProcessInfoReader.anonymousRSS() ?? 0) }
    }
}

/// NDJSON file → durable store, end to end, into a fresh store per run.
final class IngestBench: Benchmark {
    let events: Int
    let batch: Int
    private var dir = ""
    private var corpus = ""
    private var ndjsonBytes = 0
    private var last: IngestOutcome?
    private var compactedBytes = 0
    private(set) var inputBytes: Int?

    init(events: Int, batch: Int) {
        self.events = events
        self.batch = batch
    }

    func setUp() throws {
        dir = try scratchDirectory("ingest")
        corpus = dir + "/corpus.ndjson"
        let written = try writeCorpus(events: events, seed: 11, to: corpus)
        if written.events != events { throw BenchError("the generator made \(written.events) of \(events) events") }
        ndjsonBytes = written.bytes
        inputBytes = written.bytes
    }

    func prepareRun() throws {
        removeScratch(dir + "/store")
        removeScratch(dir + "/compacted")
    }

    func finishRun() throws {
        // A compacted copy (mdb_env_copy2 with MDB_CP_COMPACT, untimed) separates the data's size from
        // the free and half-full pages that copy-on-write B-trees leave behind.
        let store = try Store.open(at: dir + "/store")
        defer { store.close() }
        try store.backup(to: dir + "/compacted")
        compactedBytes = allocatedDiskBytes(dir + "/compacted")
        // `BOARDWALK_BENCH_KEEP_STORE=<dir>` keeps a copy of the last run's store there, for `mdb_stat -a`.
        if let keep = ProcessInfo.processInfo.environment["BOARDWALK_BENCH_KEEP_STORE"] {
            try? FileManager.default.removeItem(atPath: keep)
            try FileManager.default.copyItem(atPath: dir + "/store", toPath: keep)
        }
    }

    func run() throws -> UInt64 {
        let outcome = try ingest(file: corpus, storePath: dir + "/store", batch: batch)
        if outcome.rejected > 0 { throw BenchError("the reader rejected \(outcome.rejected) generated lines") }
        last = outcome
        return UInt64(outcome.appended) &+ UInt64(outcome.lines)
    }

    func extraFigures() -> [Figure] {
        guard let last else { return [] }
        let n = Double(max(1, last.appended))
        return [
            Figure(name: "bytes on disk per event", value: Double(last.storeBytes) / n, unit: "B"),
            Figure(name: "NDJSON input bytes per event", value: Double(ndjsonBytes) / Double(events), unit: "B"),
            Figure(
                name: "NDJSON bytes ÷ bytes on disk", value: Double(ndjsonBytes) / Double(max(1, last.storeBytes)),
                unit: "x"),
            Figure(name: "bytes on disk per event, compacted copy", value: Double(compactedBytes) / n, unit: "B"),
            Figure(name: "events stored (duplicates skipped)", value: Double(last.appended), unit: ""),
            Figure(name: "duplicates skipped", value: Double(last.duplicates), unit: ""),
        ]
    }

    func tearDown() throws { removeScratch(dir) }
}

/// Peak memory while ingesting a small and a large input, each in its own child process, so each peak is
/// that input's alone. Timing here is of the children as a whole and is not a rate worth reading.
final class IngestMemoryBench: Benchmark {
    let small: Int
    let large: Int
    let batch: Int
    private var dir = ""
    private var outcomes: [IngestOutcome] = []

    init(small: Int, large: Int, batch: Int) {
        self.small = small
        self.large = large
        self.batch = batch
    }

    func setUp() throws {
        dir = try scratchDirectory("ingest-rss")
        for (name, count) in [("small", small), ("large", large)] {
            let written = try writeCorpus(events: count, seed: 13, to: "\(dir)/\(name).ndjson")
            if written.events != count { throw BenchError("the generator made \(written.events) of \(count) events") }
        }
    }

    func prepareRun() throws {
        removeScratch(dir + "/small-store")
        removeScratch(dir + "/large-store")
    }

    func run() throws -> UInt64 {
        outcomes = []
        for name in ["small", "large"] {
            outcomes.append(try runChild(file: "\(dir)/\(name).ndjson", store: "\(dir)/\(name)-store"))
        }
        return outcomes.reduce(0) { $0 &+ UInt64($1.appended) }
    }

    private func runChild(file: String, store: String) throws -> IngestOutcome {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = ["--child-ingest", file, store, String(batch)]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchError("the ingest child exited with status \(process.terminationStatus)")
        }
        let outcome = try JSONDecoder().decode(IngestOutcome.self, from: data)
        if outcome.rejected > 0 { throw BenchError("the reader rejected \(outcome.rejected) generated lines") }
        return outcome
    }

    func extraFigures() -> [Figure] {
        guard outcomes.count == 2 else { return [] }
        let (s, l) = (outcomes[0], outcomes[1])
        let mib = 1_048_576.0
        return [
            Figure(name: "small input: events", value: Double(s.appended), unit: ""),
            Figure(
                name: "small input: peak RSS (VmHWM, store pages included)", value: Double(s.peakRSS) / mib, unit: "MiB"
            ),
            Figure(name: "small input: peak anonymous RSS", value: Double(s.peakAnonymousRSS) / mib, unit: "MiB"),
            Figure(name: "large input: events", value: Double(l.appended), unit: ""),
            Figure(
                name: "large input: peak RSS (VmHWM, store pages included)", value: Double(l.peakRSS) / mib, unit: "MiB"
            ),
            Figure(name: "large input: peak anonymous RSS", value: Double(l.peakAnonymousRSS) / mib, unit: "MiB"),
            Figure(
                name: "peak RSS growth, large ÷ small input", value: Double(l.peakRSS) / Double(max(1, s.peakRSS)),
                unit: "x"),
            Figure(
                name: "peak anonymous RSS growth, large ÷ small input",
                value: Double(l.peakAnonymousRSS) / Double(max(1, s.peakAnonymousRSS)), unit: "x"),
        ]
    }

    func tearDown() throws { removeScratch(dir) }
}

/// The child side of ``IngestMemoryBench``: `--child-ingest FILE STORE BATCH`, prints an ``IngestOutcome``.
func runIngestChild(_ arguments: [String]) -> Never {
    guard arguments.count == 3, let batch = Int(arguments[2]) else {
        FileHandle.standardError.write(Data("Error: --child-ingest FILE STORE BATCH\n".utf8))
        exit(64)
    }
    do {
        let outcome = try ingest(file: arguments[0], storePath: arguments[1], batch: batch, sampleMemory: true)
        FileHandle.standardOutput.write(try JSONEncoder().encode(outcome))
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("Error: \(error)\n".utf8))
        exit(1)
    }
}
