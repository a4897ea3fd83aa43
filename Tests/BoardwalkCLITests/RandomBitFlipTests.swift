import BoardwalkGenerator
import Foundation
import Testing

/// One flipped bit anywhere in a store's file, as a disk brings it: whatever it hits (an event block, a string, an
/// index value, LMDB's own pages, a free page), no command crashes, a changed export never comes with a passing
/// `check`, and `ingest` refuses a store that `check` rejects. Each command runs in a child process, so a crash is
/// an exit by signal, not a failed test runner.
@Suite("Random single-bit flips in a store")
struct RandomBitFlipTests {
    let directory: URL
    init() throws { directory = try temporaryDirectory() }

    /// One `onboarding_started` line of a session the store does not hold.
    static let newLine = """
        {"timestamp":1793491200000,"event_id":"flip-test","event":{"name":"onboarding_started"},\
        "meta":{"onboarding_id":"onb-flip","screen_cid":"a","screen_index":0,"total_screens":2}}

        """

    @Test("no crash, no silent change, no ingest into a rejected store")
    func flips() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let db = directory.appendingPathComponent("store.db").path
        let ingested = try boardwalk(["ingest", "--db", db, "-q", "-"], stdin: Corpus(sessions: 200, seed: 29).text)
        #expect(ingested.status == 0, "\(ingested.stderr)")
        let baseline = try boardwalk(["export", "--db", db])
        let baselineCount = try boardwalk(["query", "--db", db, "-f", "json", "sessions | count"])
        #expect(baseline.status == 0 && baselineCount.status == 0)
        let pristine = try Data(contentsOf: URL(fileURLWithPath: db + "/data.mdb"))

        var rng = SplitMix64(seed: 0xB17F)
        var rejected = 0, unchanged = 0
        for trial in 0..<30 {
            let copy = directory.appendingPathComponent("flip\(trial).db").path
            try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
            var data = pristine
            let offset = Int.random(in: 0..<data.count, using: &rng)
            data[offset] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &rng)
            try data.write(to: URL(fileURLWithPath: copy + "/data.mdb"))
            let place = "trial \(trial), byte \(offset)"

            let check = try boardwalk(["check", "--db", copy])
            let export = try boardwalk(["export", "--db", copy])
            let count = try boardwalk(["query", "--db", copy, "-f", "json", "sessions | count"])
            for (name, run) in [("check", check), ("export", export), ("query", count)] {
                #expect(run.signal == nil, "\(place): \(name) ended by signal \(run.signal ?? 0)\n\(run.stderr)")
            }
            if check.status == 0 {
                // Check passed: what the store answers must be what it held.
                #expect(
                    export.status == 0 && export.stdout == baseline.stdout, "\(place): export changed, check passed")
                #expect(count.stdout == baselineCount.stdout, "\(place): sessions | count changed, check passed")
                if export.stdout == baseline.stdout { unchanged += 1 }
            } else {
                rejected += 1
                let more = try boardwalk(["ingest", "--db", copy, "-q", "-"], stdin: Self.newLine)
                #expect(more.signal == nil)
                #expect(more.status != 0, "\(place): ingest wrote into a store check rejects")
            }
            try? FileManager.default.removeItem(atPath: copy)
        }
        // Both outcomes occur among these flips (a flip in a free page changes nothing), so both branches ran.
        #expect(rejected > 0 && unchanged > 0, "\(rejected) rejected, \(unchanged) unchanged")
    }
}
