// boardwalk-bench: `swift run -c release boardwalk-bench [--quick] [--json] [--runs N] [--warmup N] [FILTER…]`
import Foundation

let usage = """
    Usage: boardwalk-bench [--quick] [--json] [--runs N] [--warmup N] [--list] [FILTER...]

    Measures Boardwalk beside its peers (Foundation, raw LMDB, SQLite) in one run.
    FILTER selects benchmarks whose name or group contains it (e.g. `json-read`, `sqlite`).
      --quick     tiny inputs, no warm-up, one run: a smoke test (CI), not a measurement
      --json      the report as JSON on stdout
      --runs N    measured runs per benchmark (default 5)
      --warmup N  warm-up runs per benchmark (default 1)
      --list      list the benchmarks and exit
    """

/// Reports a usage error the way the `boardwalk` tool does, and exits with EX_USAGE.
func usageError(_ message: String) -> Never {
    FileHandle.standardError.write(
        Data(
            """
            Error: \(message)
            Usage: boardwalk-bench [--quick] [--json] [--runs N] [--warmup N] [--list] [FILTER...]
              See 'boardwalk-bench --help' for more information.

            """.utf8))
    exit(64)
}

func parseOptions(_ arguments: [String]) -> RunOptions? {
    var options = RunOptions()
    var i = 0
    var runsGiven = false
    var warmupGiven = false
    func fail(_ message: String) -> RunOptions? { usageError(message) }
    while i < arguments.count {
        let a = arguments[i]
        switch a {
        case "-h", "--help":
            print(usage)
            exit(0)
        case "--quick": options.quick = true
        case "--json": options.json = true
        case "--list": options.list = true
        case "--runs", "--warmup":
            guard i + 1 < arguments.count, let n = Int(arguments[i + 1]), n >= (a == "--runs" ? 1 : 0) else {
                return fail("\(a) needs a number (runs ≥ 1, warm-up ≥ 0)")
            }
            if a == "--runs" { options.runs = n; runsGiven = true } else { options.warmup = n; warmupGiven = true }
            i += 1
        default:
            if a.hasPrefix("-") { return fail("unknown option '\(a)'") }
            options.filters.append(a)
        }
        i += 1
    }
    if options.quick {
        if !runsGiven { options.runs = 1 }
        if !warmupGiven { options.warmup = 0 }
    }
    return options
}

if CommandLine.arguments.count > 1, CommandLine.arguments[1] == "--child-ingest" {
    runIngestChild(Array(CommandLine.arguments.dropFirst(2)))
}
guard let options = parseOptions(Array(CommandLine.arguments.dropFirst())) else { exit(64) }
if !isOptimizedBuild { FileHandle.standardError.write(Data((debugBanner + "\n").utf8)) }

let inputs = Inputs(sizes: options.quick ? .quick : .full)
let (groups, allCases) = makeSuite(inputs)
let selected = allCases.filter { options.matches($0) }

if options.list {
    for c in allCases { print(c.name + (c.isSubject ? "  (Boardwalk)" : "")) }
    exit(0)
}
if selected.isEmpty { usageError("no benchmark matches \(options.filters.joined(separator: ", ")) (see --list)") }

var results: [BenchmarkResult] = []
for c in selected {
    if !options.json { FileHandle.standardError.write(Data("running \(c.name)…\n".utf8)) }
    results.append(measure(c, options: options))
}

let selectedGroups = Set(selected.map(\.group))
let notYetMeasured = groups.filter { selectedGroups.contains($0.name) || options.filters.isEmpty }.flatMap(
    \.notYetMeasured)
var targets = checkTargets(results)
if options.quick || !isOptimizedBuild {
    // A smoke run or a debug build measures nothing a target can be judged on.
    for i in targets.indices { targets[i].met = nil }
}
let report = Report(
    optimized: isOptimizedBuild, quick: options.quick, machine: ProcessInfoReader.machine(), warmup: options.warmup,
    runs: options.runs, results: results, comparisons: compare(results, groups: groups), notYetMeasured: notYetMeasured,
    targets: targets,
    peakRSS: ProcessInfoReader.peakRSS())
if options.json {
    try printJSON(report)
} else {
    printTable(report, groups: groups)
    print("checksum \(checksumSink)")
}
removeAllScratch()
exit(results.contains { $0.error != nil } ? 1 : 0)
