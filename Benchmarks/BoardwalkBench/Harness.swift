// The harness: swift-nio's NIOPerformanceTester shape without dependencies. A benchmark is set up once,
// warmed up, then run N times; each run is timed on its own and returns a checksum the optimizer cannot
// drop. Rates come from the fastest run (noise on a shared machine only ever adds time); the median is
// reported beside it so a reader can see how noisy the run was.
import CAllocCounter
import Foundation

/// One thing to measure. `setUp` and `prepareRun`/`finishRun` are not timed; only `run` is.
protocol Benchmark: AnyObject {
    /// Builds inputs (generated events, a filled database, …). Called once, untimed.
    func setUp() throws
    /// Called before each run, untimed (for example: a fresh, empty database directory).
    func prepareRun() throws
    /// The measured work. Returns a value that depends on all of the work, so it cannot be optimized away.
    func run() throws -> UInt64
    /// Called after each run, untimed (for example: close the database and measure its size).
    func finishRun() throws
    /// Figures besides time that the benchmark wants reported (bytes on disk per event, peak RSS, …).
    func extraFigures() -> [Figure]
    /// Input bytes one run reads, for MB/s (asked after `setUp`); nil when bytes are not the point.
    var inputBytes: Int? { get }
    /// Removes what `setUp` made.
    func tearDown() throws
}

extension Benchmark {
    func setUp() throws {}
    func prepareRun() throws {}
    func finishRun() throws {}
    func extraFigures() -> [Figure] { [] }
    var inputBytes: Int? { nil }
    func tearDown() throws {}
}

/// A figure that is not a time: `bytes on disk per event = 31.2`.
struct Figure: Codable {
    var name: String
    var value: Double
    var unit: String
}

/// A registered benchmark: its place in the report and how to make it.
struct BenchmarkCase {
    /// Unique, filterable name: `json.boardwalk`, `json.foundation-jsondecoder`, …
    var name: String
    /// The group it belongs to; a group compares Boardwalk (the subject) with its peers.
    var group: String
    /// Whether this is the Boardwalk figure the peers of the group are compared with.
    var isSubject: Bool
    /// Items (events, rows) processed by one run.
    var items: Int
    /// A Boardwalk variant shown for explanation (for example without flushes), compared with nothing.
    var isVariant: Bool = false
    /// Measured runs regardless of `--runs`, with no warm-up (for a benchmark whose figures, not its time,
    /// are the point).
    var fixedRuns: Int? = nil
    var make: () throws -> any Benchmark
}

/// A group of benchmarks compared with each other, and what is still missing from it.
struct BenchmarkGroup {
    var name: String
    var title: String
    /// Peers measured in another group of the same run that this group's subjects are also compared with
    /// (the decode group reuses the JSON group's JSONDecoder figure instead of measuring it twice).
    var references: [String] = []
    /// What the subject or a peer needs before it can be measured, when it is not there yet.
    var notYetMeasured: [String] = []
}

/// The measured outcome of one benchmark.
struct BenchmarkResult: Codable {
    var name: String
    var group: String
    var isSubject: Bool
    var isVariant: Bool
    var items: Int
    var bytes: Int?
    var runs: Int
    /// Seconds of every measured run, in order.
    var seconds: [Double]
    var bestSeconds: Double
    var medianSeconds: Double
    /// Items per second in the fastest run.
    var itemsPerSecond: Double
    /// Input megabytes (10^6) per second in the fastest run.
    var megabytesPerSecond: Double?
    /// Heap allocations per item, counted over the measured runs (the whole process, every library).
    var allocationsPerItem: Double
    var figures: [Figure]
    var checksum: UInt64
    var error: String?
}

/// How to run: sizes, repetitions, output.
struct RunOptions {
    var quick = false
    var json = false
    var warmup = 1
    var runs = 5
    var filters: [String] = []
    var list = false

    func matches(_ c: BenchmarkCase) -> Bool {
        filters.isEmpty || filters.contains { c.name.contains($0) || c.group.contains($0) }
    }
}

/// The sink every checksum goes through; `@inline(never)` and a global so the optimizer must assume the
/// value is used.
nonisolated(unsafe) var checksumSink: UInt64 = 0

@inline(never)
func blackHole(_ value: UInt64) {
    checksumSink &+= value
}

/// Monotonic nanoseconds.
@inline(__always)
func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
}

/// Runs one registered benchmark and measures it.
func measure(_ c: BenchmarkCase, options: RunOptions) -> BenchmarkResult {
    var result = BenchmarkResult(
        name: c.name, group: c.group, isSubject: c.isSubject, isVariant: c.isVariant, items: c.items, bytes: nil,
        runs: 0,
        seconds: [], bestSeconds: 0, medianSeconds: 0, itemsPerSecond: 0, megabytesPerSecond: nil,
        allocationsPerItem: 0, figures: [], checksum: 0, error: nil)
    do {
        let bench = try c.make()
        try bench.setUp()
        result.bytes = bench.inputBytes
        defer { try? bench.tearDown() }
        var allocations: UInt64 = 0
        let warmup = c.fixedRuns == nil ? options.warmup : 0
        let runs = c.fixedRuns ?? options.runs
        for iteration in 0..<(warmup + runs) {
            try bench.prepareRun()
            let a0 = bw_alloc_count()
            let t0 = monotonicNanoseconds()
            let sum: UInt64
            do {
                sum = try bench.run()
            } catch {
                try? bench.finishRun()
                throw error
            }
            let t1 = monotonicNanoseconds()
            let a1 = bw_alloc_count()
            try bench.finishRun()
            blackHole(sum)
            result.checksum = sum
            if iteration >= warmup {
                result.seconds.append(Double(t1 - t0) / 1e9)
                allocations += a1 - a0
            }
        }
        result.figures = bench.extraFigures()
        result.runs = result.seconds.count
        let sorted = result.seconds.sorted()
        result.bestSeconds = sorted.first ?? 0
        result.medianSeconds = sorted.isEmpty ? 0 : sorted[sorted.count / 2]
        if result.bestSeconds > 0 {
            result.itemsPerSecond = Double(c.items) / result.bestSeconds
            if let bytes = result.bytes { result.megabytesPerSecond = Double(bytes) / result.bestSeconds / 1e6 }
        }
        if c.items > 0 && result.runs > 0 {
            result.allocationsPerItem = Double(allocations) / Double(result.runs) / Double(c.items)
        }
    } catch {
        result.error = "\(error)"
    }
    return result
}

/// Boardwalk's rate against a peer's, both from this run.
struct Comparison: Codable {
    var group: String
    var subject: String
    var peer: String
    /// Subject rate ÷ peer rate: above 1, Boardwalk is faster.
    var ratio: Double
}

/// Compares every measured subject of each group with every measured peer of the group and its references.
func compare(_ results: [BenchmarkResult], groups: [BenchmarkGroup]) -> [Comparison] {
    let ok = results.filter { $0.error == nil && $0.itemsPerSecond > 0 }
    var out: [Comparison] = []
    for group in groups {
        let members = ok.filter { $0.group == group.name }
        let peers = members.filter { !$0.isSubject && !$0.isVariant } + ok.filter { group.references.contains($0.name) }
        for subject in members where subject.isSubject {
            for peer in peers {
                out.append(
                    Comparison(
                        group: group.name, subject: subject.name, peer: peer.name,
                        ratio: subject.itemsPerSecond / peer.itemsPerSecond))
            }
        }
    }
    return out
}

/// Whether the optimizer ran: a debug build measures nothing worth reporting.
var isOptimizedBuild: Bool {
    #if DEBUG
        return false
    #else
        return !_isDebugAssertConfiguration()
    #endif
}

let debugBanner = """
    ################################################################################
    #  WARNING: boardwalk-bench was built WITHOUT optimization (debug build).       #
    #  These numbers mean nothing. Run: swift run -c release boardwalk-bench       #
    ################################################################################
    """
