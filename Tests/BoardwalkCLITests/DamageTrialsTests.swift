import BoardwalkGenerator
import Foundation
import Testing

/// Damage as a disk brings it, on a store that the real `boardwalk` generated and ingested: random single-bit flips
/// anywhere in the file, zeroed pages, one page's bytes copied over another, damaged meta pages (each one, and
/// both) and truncations. For every trial: no command ends by a signal; a changed export never comes with a passing
/// `check`; `ingest` refuses a store that `check` rejects; `export --salvage` runs, and what it saves is counted. A
/// table of the outcomes is printed.
///
/// A few trials of each kind run by default (seconds); `BOARDWALK_DAMAGE_TRIALS=N` runs N of each (CI runs more), and
/// `BOARDWALK_DAMAGE_SEED` changes the draws.
@Suite("damage trials")
struct DamageTrialsTests {
    let directory: URL
    init() throws { directory = try temporaryDirectory() }

    enum Kind: String, CaseIterable {
        case bitFlip = "bit flip"
        case zeroedPage = "zeroed page"
        case copiedPage = "copied page"
        case meta0 = "meta page 0"
        case meta1 = "meta page 1"
        case bothMetas = "both meta pages"
        case truncation = "truncation"

        /// Trials of this kind by default.
        var defaultTrials: Int {
            switch self {
            case .bitFlip: 10
            case .zeroedPage, .copiedPage: 5
            case .meta0, .meta1, .truncation: 3
            case .bothMetas: 2
            }
        }
    }

    /// The outcomes of one kind's trials.
    struct Tally {
        var trials = 0
        /// `check`, or a read (`export`, `query`), reported damage.
        var detected = 0
        /// Commands ended by a signal.
        var crashes = 0
        /// A changed export or count with a passing check.
        var silentChanges = 0
        /// Stores check rejected whose ingest (run after check) wrote anyway.
        var writesAfterRejection = 0
        /// Stores check rejected whose ingest, run first on a fresh copy, refused before any read had marked them.
        var refusedBeforeMark = 0
        var rejectedByCheck = 0
        var salvaged = 0
        var total = 0
    }

    static let newLine = """
        {"timestamp":1793491200000,"event_id":"damage-trial","event":{"name":"onboarding_started"},\
        "meta":{"onboarding_id":"onb-trial","screen_cid":"a","screen_index":0,"total_screens":2}}

        """

    /// Applies one damage of `kind` to `data` (4 KiB pages), drawn from `rng`; returns where, for messages.
    static func damage(_ kind: Kind, _ data: inout Data, _ rng: inout SplitMix64) -> String {
        let pages = data.count / 4096
        func scramble(_ page: Int) -> String {
            // Four bytes of the meta page's fields (magic, version, databases, last page, transaction id), or all zero.
            if Bool.random(using: &rng) {
                data.replaceSubrange((page * 4096)..<((page + 1) * 4096), with: Data(count: 4096))
                return "zeroed"
            }
            var at: [Int] = []
            for _ in 0..<4 {
                let offset = page * 4096 + Int.random(in: 16..<152, using: &rng)
                data[offset] ^= UInt8.random(in: 1...255, using: &rng)
                at.append(offset)
            }
            return "bytes \(at)"
        }
        switch kind {
        case .bitFlip:
            let offset = Int.random(in: 0..<data.count, using: &rng)
            let bit = UInt8.random(in: 0..<8, using: &rng)
            data[offset] ^= 1 << bit
            return "byte \(offset) (page \(offset / 4096)), bit \(bit)"
        case .zeroedPage:
            let page = Int.random(in: 2..<pages, using: &rng)
            data.replaceSubrange((page * 4096)..<((page + 1) * 4096), with: Data(count: 4096))
            return "page \(page)"
        case .copiedPage:
            let from = Int.random(in: 2..<pages, using: &rng)
            var to = Int.random(in: 2..<pages, using: &rng)
            if to == from { to = from == 2 ? 3 : 2 }
            let bytes = data.subdata(in: (from * 4096)..<((from + 1) * 4096))
            data.replaceSubrange((to * 4096)..<((to + 1) * 4096), with: bytes)
            return "page \(from) over page \(to)"
        case .meta0: return "meta 0: " + scramble(0)
        case .meta1: return "meta 1: " + scramble(1)
        case .bothMetas: return "meta 0: " + scramble(0) + "; meta 1: " + scramble(1)
        case .truncation:
            let length = Int.random(in: (2 * 4096)..<data.count, using: &rng)
            let cut = Bool.random(using: &rng) ? length / 4096 * 4096 : length
            data = data.prefix(cut)
            return "cut to \(cut) of \(pages * 4096) bytes"
        }
    }

    @Test("no crash, no silent change, no ingest into a rejected store; the salvage runs")
    func trials() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let environment = ProcessInfo.processInfo.environment
        let perKind = environment["BOARDWALK_DAMAGE_TRIALS"].flatMap { Int($0) }
        let seed = environment["BOARDWALK_DAMAGE_SEED"].flatMap { UInt64($0) } ?? 0xDA_3A6E

        let db = directory.appendingPathComponent("store.db").path
        let generated = try boardwalk(["generate", "--sessions", "300", "--seed", "29"])
        #expect(generated.status == 0, "\(generated.stderr)")
        let ingested = try boardwalk(["ingest", "--db", db, "-q", "-"], stdin: generated.stdout)
        #expect(ingested.status == 0, "\(ingested.stderr)")
        let baseline = try boardwalk(["export", "--db", db])
        let baselineCount = try boardwalk(["query", "--db", db, "-f", "json", "sessions | count"])
        #expect(baseline.status == 0 && baselineCount.status == 0)
        let total = baseline.stdout.split(separator: "\n").count
        let pristine = try Data(contentsOf: URL(fileURLWithPath: db + "/data.mdb"))

        var rng = SplitMix64(seed: seed)
        var tallies: [Kind: Tally] = [:]
        for kind in Kind.allCases {
            var tally = Tally()
            for trial in 0..<(perKind ?? kind.defaultTrials) {
                var data = pristine
                let place = "\(kind.rawValue), trial \(trial), " + Self.damage(kind, &data, &rng)
                func store(_ name: String) throws -> String {
                    let copy = directory.appendingPathComponent(name).path
                    try? FileManager.default.removeItem(atPath: copy)
                    try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
                    try data.write(to: URL(fileURLWithPath: copy + "/data.mdb"))
                    return copy
                }
                // First an ingest into a fresh copy, before any read could mark it: the writer's own checks.
                let fresh = try store("fresh")
                let firstIngest = try boardwalk(["ingest", "--db", fresh, "-q", "-"], stdin: Self.newLine)
                // Then the reads, check, the salvage, and an ingest after them.
                let copy = try store("copy")
                let export = try boardwalk(["export", "--db", copy])
                let count = try boardwalk(["query", "--db", copy, "-f", "json", "sessions | count"])
                let check = try boardwalk(["check", "--db", copy])
                // The salvage before the ingest, so that it is measured against the events the store held.
                let salvageFile = directory.appendingPathComponent("salvage.ndjson").path
                let salvage = try boardwalk(["export", "--db", copy, "--salvage", "-o", salvageFile])
                let ingest = try boardwalk(["ingest", "--db", copy, "-q", "-"], stdin: Self.newLine)
                let runs = [
                    ("ingest first", firstIngest), ("export", export), ("query", count), ("check", check),
                    ("ingest", ingest), ("export --salvage", salvage),
                ]
                tally.trials += 1
                for (name, run) in runs where run.signal != nil {
                    tally.crashes += 1
                    Issue.record("\(place): \(name) ended by signal \(run.signal!)\n\(run.stderr)")
                }
                if check.status != 0 || export.status != 0 || count.status != 0 { tally.detected += 1 }
                if check.status == 0 && ingest.status != 0 {
                    Issue.record("\(place): ingest failed on a store check passes\n\(ingest.stderr)")
                }
                if check.status == 0 {
                    let changed = export.status == 0 && export.stdout != baseline.stdout
                    let countChanged = count.status == 0 && count.stdout != baselineCount.stdout
                    if changed || countChanged {
                        tally.silentChanges += 1
                        Issue.record("\(place): the export or count changed, and check passed")
                    }
                } else {
                    tally.rejectedByCheck += 1
                    if ingest.status == 0 {
                        tally.writesAfterRejection += 1
                        Issue.record("\(place): ingest wrote into a store check rejects\n\(check.stdout)")
                    }
                    if firstIngest.status != 0 { tally.refusedBeforeMark += 1 }
                }
                let saved = (try? String(contentsOfFile: salvageFile, encoding: .utf8))?.split(separator: "\n").count
                tally.salvaged += salvage.signal == nil && salvage.status != 1 ? saved ?? 0 : 0
                tally.total += total
                try? FileManager.default.removeItem(atPath: salvageFile)
            }
            tallies[kind] = tally
        }
        print("damage trials, seed \(seed):\n" + Self.table(tallies))
        // Every kind ran, and damage was found (a flip in a free page changes nothing, so not every trial).
        #expect(tallies.values.reduce(0) { $0 + $1.detected } > 0)
    }

    /// The outcomes as a table, one row per kind and a total.
    static func table(_ tallies: [Kind: Tally]) -> String {
        let header = [
            "damage", "trials", "detected", "crashes", "silent changes", "check rejected",
            "ingest refused before any read", "ingest after rejection wrote", "salvaged events / total",
        ]
        var rows: [[String]] = []
        var sum = Tally()
        for kind in Kind.allCases {
            guard let t = tallies[kind] else { continue }
            rows.append(row(kind.rawValue, t))
            sum.trials += t.trials
            sum.detected += t.detected
            sum.crashes += t.crashes
            sum.silentChanges += t.silentChanges
            sum.rejectedByCheck += t.rejectedByCheck
            sum.refusedBeforeMark += t.refusedBeforeMark
            sum.writesAfterRejection += t.writesAfterRejection
            sum.salvaged += t.salvaged
            sum.total += t.total
        }
        rows.append(row("all", sum))
        let widths = header.indices.map { i in max(header[i].count, rows.map { $0[i].count }.max() ?? 0) }
        func line(_ cells: [String]) -> String {
            "| "
                + cells.enumerated().map { $1.padding(toLength: widths[$0], withPad: " ", startingAt: 0) }
                .joined(separator: " | ") + " |"
        }
        return ([line(header), line(widths.map { String(repeating: "-", count: $0) })] + rows.map(line))
            .joined(separator: "\n")
    }

    private static func row(_ name: String, _ t: Tally) -> [String] {
        let percent = t.total == 0 ? 0 : Double(t.salvaged) / Double(t.total) * 100
        return [
            name, "\(t.trials)", "\(t.detected)", "\(t.crashes)", "\(t.silentChanges)", "\(t.rejectedByCheck)",
            "\(t.refusedBeforeMark)", "\(t.writesAfterRejection)",
            "\(t.salvaged) / \(t.total) (\(String(format: "%.1f", percent)) %)",
        ]
    }
}
