import Foundation
import Testing
@testable import BoardwalkCLI

// QA, session 9: the demo's screen charts wrote `0 welcome` above `10 story_1`, so past screen 9 the names moved a
// column right of the ones above them. Indexes are now right-aligned to the widest one shown.

@Suite("QA9: the demo's screen labels")
struct DemoChartsQA9Tests {
    @Test("an index is padded to the widest index of its chart")
    func labels() {
        #expect(Answers.screenLabel(0, "welcome", upTo: 13) == " 0 welcome")
        #expect(Answers.screenLabel(13, "final", upTo: 13) == "13 final")
        #expect(Answers.screenLabel(7, "pricing", upTo: 7) == "7 pricing")
        #expect(Answers.screenLabel(100, nil, upTo: 9) == "100 ")
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
            let nameColumns = Set(lines.map { line in
                line.firstIndex { $0.isLetter }.map { line.distance(from: line.startIndex, to: $0) } ?? -1
            })
            #expect(nameColumns.count == 1, "\(title): names start in columns \(nameColumns.sorted())\n\(lines.joined(separator: "\n"))")
        }
    }
}
