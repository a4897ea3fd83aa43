// The report: a table per group for people, one JSON document for machines.
import Foundation

struct Report: Codable {
    var optimized: Bool
    var quick: Bool
    var machine: String
    var warmup: Int
    var runs: Int
    var results: [BenchmarkResult]
    var comparisons: [Comparison]
    var notYetMeasured: [String]
    var targets: [TargetCheck]
    /// Peak RSS of the whole benchmark process (inputs of every benchmark included), bytes.
    var peakRSS: Int?
}

/// A target of docs/performance.md checked against this run.
struct TargetCheck: Codable {
    var measure: String
    var target: String
    var measured: String
    var met: Bool?
}

func formatRate(_ perSecond: Double) -> String {
    switch perSecond {
    case 1e9...: String(format: "%.2f G", perSecond / 1e9)
    case 1e6...: String(format: "%.2f M", perSecond / 1e6)
    case 1e3...: String(format: "%.1f k", perSecond / 1e3)
    default: String(format: "%.0f", perSecond)
    }
}

func formatSeconds(_ s: Double) -> String {
    switch s {
    case 1...: String(format: "%.2f s", s)
    case 1e-3...: String(format: "%.1f ms", s * 1e3)
    default: String(format: "%.0f µs", s * 1e6)
    }
}

func formatRatio(_ r: Double) -> String {
    r >= 1 ? String(format: "%.1fx as fast (faster)", r) : String(format: "%.2fx as fast (%.1fx slower)", r, 1 / r)
}

private func pad(_ s: String, _ width: Int, right: Bool = false) -> String {
    let n = s.count
    if n >= width { return s }
    let fill = String(repeating: " ", count: width - n)
    return right ? fill + s : s + fill
}

func printTable(_ report: Report, groups: [BenchmarkGroup]) {
    if !report.optimized { print(debugBanner) }
    print("boardwalk-bench: \(report.machine)")
    print(
        "\(report.quick ? "QUICK smoke run (tiny inputs; times mean nothing)" : "full run"), "
            + "\(report.warmup) warm-up + \(report.runs) measured runs each; rates from the fastest run; "
            + "* = Boardwalk; ratios are Boardwalk's rate ÷ the peer's, same run")
    let header = [
        pad("benchmark", 44), pad("best", 9, right: true), pad("median", 9, right: true),
        pad("items/s", 10, right: true), pad("MB/s", 8, right: true), pad("allocs/item", 12, right: true),
    ].joined(separator: " ")
    for group in groups {
        let rows = report.results.filter { $0.group == group.name }
        let missing = report.notYetMeasured.filter { note in group.notYetMeasured.contains(note) }
        if rows.isEmpty && missing.isEmpty { continue }
        print("")
        print("== \(group.title)")
        print(header)
        for r in rows {
            if let error = r.error {
                print(pad(r.name, 44) + " FAILED: \(error)")
                continue
            }
            let line = [
                pad(r.name + (r.isSubject ? " *" : r.isVariant ? " (variant)" : ""), 44),
                pad(formatSeconds(r.bestSeconds), 9, right: true),
                pad(formatSeconds(r.medianSeconds), 9, right: true), pad(formatRate(r.itemsPerSecond), 10, right: true),
                pad(r.megabytesPerSecond.map { String(format: "%.1f", $0) } ?? "", 8, right: true),
                pad(String(format: "%.2f", r.allocationsPerItem), 12, right: true),
            ].joined(separator: " ")
            print(line)
            for f in r.figures { print("    " + f.name + ": " + formatFigure(f)) }
        }
        for c in report.comparisons where c.group == group.name {
            print("   \(c.subject) vs \(c.peer): \(formatRatio(c.ratio))")
        }
        for note in missing { print("   not measured: \(note)") }
    }
    if !report.targets.isEmpty {
        print("")
        print(
            "== targets (docs/performance.md)"
                + (report.quick || !report.optimized ? ": not judged in a smoke run or a debug build" : ""))
        for t in report.targets {
            let verdict = t.met.map { $0 ? "met" : "MISSED" } ?? "-"
            print(pad(verdict, 7) + pad(t.measure, 52) + pad("target " + t.target, 34) + "measured " + t.measured)
        }
    }
    if let rss = report.peakRSS { print(""); print("peak RSS of this process: \(rss / 1_048_576) MiB") }
    if !report.optimized { print(debugBanner) }
}

func formatFigure(_ f: Figure) -> String {
    if f.unit.isEmpty, f.value == f.value.rounded(), abs(f.value) < 1e15 { return String(Int(f.value)) }
    return String(format: f.value < 10 ? "%.2f" : "%.1f", f.value) + " " + f.unit
}

func printJSON(_ report: Report) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    let data = try encoder.encode(report)
    FileHandle.standardOutput.write(data)
    FileHandle.standardOutput.write(Data("\n".utf8))
}
