import Foundation
import Testing

@testable import BoardwalkCLI

// The demo's screen charts right-align indexes to the widest one shown, so `0 welcome` above `10 story_1` keeps the
// names in one column past screen 9.

@Suite("The demo's screen labels line up")
struct DemoScreenLabelsTests {
    @Test("an index is padded to the widest index of its chart")
    func labels() {
        #expect(DemoAnswers.screenLabel(0, "welcome", upTo: 13) == " 0 welcome")
        #expect(DemoAnswers.screenLabel(13, "final", upTo: 13) == "13 final")
        #expect(DemoAnswers.screenLabel(7, "pricing", upTo: 7) == "7 pricing")
        #expect(DemoAnswers.screenLabel(100, nil, upTo: 9) == "100 ")
    }

    @Test("in the demo's funnel and dwell charts, the screen names start in one column")
    func demoColumns() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let run = try boardwalk(["demo", "--db", dir.appendingPathComponent("db").path, "--sessions", "150"])
        #expect(run.status == 0, "\(run.stderr)")
        for title in ["Screen funnel of the busiest onboarding", "Time on each screen"] {
            // The chart's lines: after the title, its query and a blank line, up to the next blank line.
            let after = try #require(run.stdout.components(separatedBy: title + "\n").last)
            let lines = after.components(separatedBy: "\n\n")[1].split(separator: "\n")
            #expect(lines.count > 10, "the busiest onboarding of seed 1 has more than 10 screens")
            let nameColumns = Set(
                lines.map { line in
                    line.firstIndex { $0.isLetter }.map { line.distance(from: line.startIndex, to: $0) } ?? -1
                })
            #expect(
                nameColumns.count == 1,
                "\(title): names start in columns \(nameColumns.sorted())\n\(lines.joined(separator: "\n"))")
        }
    }
}

// The demo draws the sessions without an onboarding and those of an onboarding whose id is the empty string as two
// bars, as `count by onboarding` and `stats` keep them apart; it draws sessions of which none has an onboarding
// rather than calling them "(no sessions)"; and its dwell chart says so when no time was measured.
@Suite("The demo's onboardings chart")
struct DemoOnboardingsTests {
    /// `boardwalk demo` over a store ingested from `lines` (NDJSON).
    static func demo(of lines: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("in.ndjson")
        try (lines.joined(separator: "\n") + "\n").write(to: input, atomically: true, encoding: .utf8)
        let db = dir.appendingPathComponent("db").path
        let ingest = try boardwalk(["ingest", "--db", db, input.path])
        #expect(ingest.status == 0, "\(ingest.stderr)")
        let run = try boardwalk(["demo", "--db", db])
        return (run.status, run.stdout, run.stderr)
    }

    static let meta = #""meta":{"onboarding_id":"ONB","screen_cid":"welcome","screen_index":0,"total_screens":3}"#
    static let errorWithoutMeta =
        #"{"timestamp":1793491202000,"session_id":"s3","kind":"error","error":{"domain":"net","code":1,"message":"x"}}"#

    @Test("an empty onboarding id is its own bar, apart from the sessions without an onboarding")
    func emptyAndAbsent() throws {
        let run = try Self.demo(of: [
            #"{"timestamp":1793491200000,"session_id":"s1","kind":"onboarding_loaded","#
                + Self.meta.replacingOccurrences(of: "ONB", with: "") + "}",
            #"{"timestamp":1793491201000,"session_id":"s2","kind":"onboarding_loaded","#
                + Self.meta.replacingOccurrences(of: "ONB", with: "onb-a") + "}",
            Self.errorWithoutMeta,
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let chart = try #require(
            run.stdout.components(separatedBy: "Sessions per onboarding\n").last?
                .components(separatedBy: "\n\n")[1].split(separator: "\n").map {
                    $0.trimmingCharacters(in: .whitespaces)
                })
        #expect(chart.count == 3, "\(chart)")
        #expect(
            chart.contains { $0.hasPrefix("\"\" ") } && chart.contains { $0.hasPrefix("onb-a ") }
                && chart.contains { $0.hasPrefix("(no onboarding) ") }, "\(chart)")
        // The busiest (of equals, the first by id: "") presented no screen: said, not an empty chart.
        #expect(
            run.stdout.contains("stats p50(dwell), p90(dwell) by screen\n\n  (no screen presented)\n"), "\(run.stdout)")
    }

    @Test("a dwell chart whose every presentation ended its session says so")
    func allCensored() throws {
        let run = try Self.demo(of: [
            #"{"timestamp":1793491200000,"session_id":"s1","kind":"analytics","event":{"name":"screen_presented"},"#
                + Self.meta.replacingOccurrences(of: "ONB", with: "onb-a") + "}"
        ])
        #expect(
            run.stdout.contains("  (no time measured: the one screen presentation ended its session)\n"),
            "\(run.stdout)")
    }

    @Test("sessions of which none has an onboarding are drawn and said so, not called no sessions")
    func onlyAbsent() throws {
        let run = try Self.demo(of: [Self.errorWithoutMeta])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.stdout.contains("(no onboarding) ") && run.stdout.contains("  (no session has an onboarding)\n")
                && !run.stdout.contains("(no sessions)"), "\(run.stdout)")
    }
}
